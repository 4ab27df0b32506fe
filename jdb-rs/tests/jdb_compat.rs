//! A scripted session on Demo, run through real `jdb` and through jdb-rs (both fed the same
//! commands on standard input, one at a time), whose outputs must match wherever jdb-rs keeps
//! jdb's format: event lines, source lines, `where`, `locals`, `print`, `dump`, the prompts.
//! Object ids and identity hash codes differ between runs and are normalized.

mod common;

use common::{Driver, fixtures, jdb_rs, line_of, sources};

/// Replaces what differs between two runs of the same program: object ids and hash codes.
fn normalize(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines() {
        let mut l = line.to_string();
        // Prompts that precede asynchronous output ("> " before an event) are dropped.
        while let Some(rest) = l.strip_prefix("> ") {
            l = rest.to_string();
        }
        let l = replace_after(&l, "id=", |c| c.is_ascii_digit(), "N");
        let l = replace_after(&l, "Demo@", |c| c.is_ascii_hexdigit(), "HASH");
        let l = replace_after(&l, ")", |c| c.is_ascii_digit(), "N");
        if l.trim().is_empty() || l == ">" {
            continue;
        }
        out.push(l);
    }
    out
}

/// Replaces each run of `keep` characters right after `marker` by `with`.
fn replace_after(s: &str, marker: &str, keep: impl Fn(char) -> bool, with: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find(marker) {
        out.push_str(&rest[..i + marker.len()]);
        rest = &rest[i + marker.len()..];
        let n = rest.find(|c: char| !keep(c)).unwrap_or(rest.len());
        if n > 0 {
            out.push_str(with);
        }
        rest = &rest[n..];
    }
    out.push_str(rest);
    out
}

fn jdb() -> Option<std::path::PathBuf> {
    test_rig::java_tool("jdb").ok()
}

/// Runs the script; returns each command's output.
fn session(program: &std::path::Path, script: &[String]) -> (Vec<String>, String) {
    let args = vec!["-classpath".to_string(), fixtures(), "-sourcepath".to_string(), sources(), "Demo".to_string()];
    let mut d = Driver::spawn(program, &args);
    d.ready();
    let mut outputs = Vec::new();
    for cmd in script {
        outputs.push(d.command(cmd));
    }
    let (_, all, _) = d.wait();
    (outputs, all)
}

#[test]
fn scripted_demo_session_matches_jdb() {
    let Some(jdb) = jdb() else {
        eprintln!("skipping: no jdb in this JDK");
        return;
    };
    let tick = line_of("Demo.java", "@tick-first");
    let square = line_of("Demo.java", "@square-first");
    let script: Vec<String> = [
        format!("stop at Demo:{tick}"),
        "run".into(),
        "where".into(),
        "locals".into(),
        "print n * 2 + 1".into(),
        "print this.counter".into(),
        "print name".into(),
        "print this".into(),
        "dump this".into(),
        "next".into(),
        "locals".into(),
        "step".into(),
        "print counter + doubled".into(),
        "step up".into(),
        "where".into(),
        "up".into(),
        "down".into(),
        "stop in Demo.square".to_string(),
        "cont".into(),
        "print x".into(),
        "wherei".into(),
        "list".into(),
        format!("clear Demo:{tick}"),
        "clear Demo.square".into(),
        "stop".into(),
        format!("stop at Demo:{square}"),
        "cont".into(),
        format!("clear Demo:{square}"),
        "cont".into(),
    ]
    .into_iter()
    .collect();
    let (theirs, their_all) = session(&jdb, &script);
    let (ours, our_all) = session(&jdb_rs(), &script);
    assert!(our_all.contains("The application exited"), "jdb-rs did not run to the end:\n{our_all}");
    assert!(our_all.contains("Demo total=584"), "the program's output is shown:\n{our_all}");
    assert!(!our_all.contains("panicked"), "{our_all}");
    for (i, cmd) in script.iter().enumerate() {
        let (t, o) = (normalize(&theirs[i]), normalize(&ours[i]));
        match cmd.as_str() {
            // jdb prints its startup lines ("Set uncaught java.lang.Throwable"...) around `run`;
            // compare from the stop on.
            "run" => {
                let from =
                    |v: &Vec<String>| v.iter().position(|l| l.starts_with("Breakpoint hit:")).map(|p| v[p..].to_vec());
                assert_eq!(from(&o), from(&t), "`run` differs\n--- jdb:\n{}\n--- jdb-rs:\n{}", theirs[i], ours[i]);
            }
            // The end: the program's output interleaves differently; both report the exit.
            _ if i == script.len() - 1 => {
                assert!(ours[i].contains("The application exited"), "{}", ours[i]);
                assert!(theirs[i].contains("The application exited"), "{}", theirs[i]);
            }
            _ => assert_eq!(o, t, "`{cmd}` differs\n--- jdb:\n{}\n--- jdb-rs:\n{}", theirs[i], ours[i]),
        }
    }
    assert!(their_all.contains("The application exited"));
}

#[test]
fn normalization_hides_only_ids_and_hashes() {
    assert_eq!(
        normalize(
            "> \n demo = instance of Demo(id=421)\n this = \"Demo@1b2c3d\"\n  (java.lang.Thread)1 main\nmain[1] "
        ),
        vec![" demo = instance of Demo(id=N)", " this = \"Demo@HASH\"", "  (java.lang.Thread)N main", "main[1] "]
    );
}
