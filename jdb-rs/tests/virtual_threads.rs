//! Virtual threads in jdb-rs, compared with the JDK's own jdb: the same script, on the same
//! program (VirtualWork: a named virtual thread that stops then parks, an unnamed one that
//! computes), each debugger attached to its own run of it under the agent under test
//! (`JDI_TEST_AGENT`), on the test JDK (`JDBG_TEST_JDK`). Compared line for line wherever the
//! output is deterministic: event lines, `where`, `locals`, steps, prompts, the fixture's
//! threads in `threads` and `where all`, `version`'s VM lines.
//!
//! On JDK 21+ the two threads are virtual (JDK 25's jdb lists them under `Group VirtualThreads:`
//! after the platform threads, an unnamed one as `"thread="` and a `[1] ` prompt). On JDK 17
//! the fixture runs the same work in platform threads: the test says so and checks that jdb-rs
//! still matches jdb there (no `VirtualThreads` group at all).

mod common;

use std::collections::HashMap;

use common::{Driver, jdb_rs, line_of, sources};
use test_rig::{Agent, DEFAULT_JDK_AGENT_OPTIONS, Debuggee};

fn agent() -> Agent {
    agent_with("")
}

/// The agent under test, with `extra` agent options (`,includevirtualthreads=y`).
fn agent_with(extra: &str) -> Agent {
    let options = format!("{DEFAULT_JDK_AGENT_OPTIONS}{extra}");
    if common::testing_our_agent() { Agent::path(common::our_agent_path(), options) } else { Agent::jdk(options) }
}

fn jdk_feature() -> u32 {
    test_rig::jdk_feature_version().expect("the test JDK's version")
}

fn has_virtual_threads(test: &str) -> bool {
    let feature = jdk_feature();
    if feature < 21 {
        eprintln!(
            "NOTE {test}: the test JDK is {feature}, without virtual threads (set JDBG_TEST_JDK to a JDK 21+): \
             the fixture's threads are platform threads, and only that is checked"
        );
    }
    feature >= 21
}

/// Runs `script` in `debugger` attached to a new run of VirtualWork under `agent`, its `main` in
/// a platform thread. In a command, `{worker}` is replaced by the ID of the thread listed
/// `(at breakpoint)` in the last `threads` output. Returns each command's output.
fn session(debugger: &std::path::Path, agent: Agent, extra_args: &[&str], script: &[&str]) -> Vec<String> {
    let jvm = Debuggee::builder("VirtualWork").agent(agent).virtual_main(false).spawn().expect("VirtualWork starts");
    let mut args: Vec<String> = extra_args.iter().map(|a| a.to_string()).collect();
    args.extend(["-sourcepath".into(), sources(), "-attach".into(), jvm.address().to_string()]);
    let mut d = Driver::spawn(debugger, &args);
    d.ready_at_vm_start();
    let mut outputs: Vec<String> = Vec::new();
    let mut worker = String::new();
    for cmd in script {
        let cmd = cmd.replace("{worker}", &worker);
        let out = d.command(&cmd);
        if cmd == "threads" {
            worker = out
                .lines()
                .find(|l| l.ends_with("(at breakpoint)"))
                .and_then(|l| l.split(')').nth(1))
                .and_then(|rest| rest.split_whitespace().next())
                .unwrap_or_default()
                .to_string();
        }
        outputs.push(out);
    }
    let (_, all, _) = d.wait();
    assert!(!all.contains("panicked"), "{all}");
    outputs
}

/// What differs between two runs: object IDs, the address in a hidden class's name, and the
/// width of `threads`' columns (which follows the IDs); prompts that precede asynchronous output.
fn normalize(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines() {
        let mut l = line.to_string();
        while let Some(rest) = l.strip_prefix("> ") {
            l = rest.to_string();
        }
        let l = replace_after(&l, ")", |c| c.is_ascii_digit(), "N");
        let l = replace_after(&l, "/0x", |c| c.is_ascii_hexdigit(), "N");
        if l.trim().is_empty() || l == ">" {
            continue;
        }
        let l =
            if l.starts_with("  (") { format!("  {}", l.split_whitespace().collect::<Vec<_>>().join(" ")) } else { l };
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

/// From the first event line on (jdb prints the deferred breakpoints' lines around it in its own
/// order).
fn from_event(text: &str) -> Vec<String> {
    let lines = normalize(text);
    let at = lines.iter().position(|l| l.starts_with("Breakpoint hit:") || l.starts_with("Step completed:"));
    at.map(|p| lines[p..].to_vec()).unwrap_or(lines)
}

/// `threads`' rows of the fixture's threads ("vt-parked" and the one at the breakpoint), each
/// with its group: the other threads' states (main's, the carriers') depend on timing.
fn fixture_rows(text: &str) -> Vec<String> {
    let mut group = String::new();
    let mut rows = Vec::new();
    for l in normalize(text) {
        if let Some(g) = l.strip_prefix("Group ") {
            group = g.to_string();
        } else if l.contains(" vt-parked ") || l.ends_with("(at breakpoint)") {
            rows.push(format!("{group} {}", l.trim()));
        }
    }
    rows
}

/// `where all` split into each thread's frames.
fn stacks(text: &str) -> HashMap<String, Vec<String>> {
    let mut out: HashMap<String, Vec<String>> = HashMap::new();
    let mut current = None;
    for l in normalize(text) {
        if l.starts_with("  [") {
            if let Some(name) = &current {
                out.entry(String::clone(name)).or_default().push(l);
            }
        } else if let Some(name) = l.strip_suffix(':') {
            current = Some(name.to_string());
            out.entry(name.to_string()).or_default();
        } else {
            current = None;
        }
    }
    out
}

/// In jdb's layout, the statuses of `threads` start in one column, virtual threads' rows (some
/// with an empty name) included.
fn statuses_aligned(text: &str) -> bool {
    let statuses = ["running", "cond. waiting", "sleeping", "waiting in a monitor", "zombie", "unknown"];
    let columns: Vec<Option<usize>> = text
        .lines()
        .filter(|l| l.starts_with("  ("))
        .map(|l| {
            let l = l.strip_suffix(" (at breakpoint)").unwrap_or(l);
            statuses.iter().find(|s| l.ends_with(&format!(" {s}"))).map(|s| l.len() - s.len())
        })
        .collect();
    !columns.is_empty() && columns.iter().all(|c| c.is_some() && *c == columns[0])
}

#[test]
fn virtual_threads_session_matches_jdb() {
    let Ok(jdb) = test_rig::java_tool("jdb") else {
        eprintln!("SKIPPED virtual_threads_session_matches_jdb: the test JDK has no jdb");
        return;
    };
    let virtual_threads = has_virtual_threads("virtual_threads_session_matches_jdb");
    let parked = format!("stop at VirtualWork:{}", line_of("VirtualWork.java", "@vt-parked"));
    let work = format!("stop at VirtualWork:{}", line_of("VirtualWork.java", "@vt-work"));
    let script = [
        parked.as_str(),
        work.as_str(),
        "cont",            // 2: vt-parked stops
        "threads",         // 3
        "where",           // 4
        "cont",            // 5: the worker stops in work()
        "threads",         // 6
        "where",           // 7
        "locals",          // 8
        "next",            // 9
        "locals",          // 10
        "step",            // 11
        "where",           // 12
        "up",              // 13
        "locals",          // 14
        "down",            // 15
        "step up",         // 16
        "thread 1",        // 17
        "thread {worker}", // 18
        "where",           // 19
        "where all",       // 20
        "version",         // 21
        "cont",            // 22: to the end
    ];
    let theirs = session(&jdb, agent(), &[], &script);
    let ours = session(&jdb_rs(), agent(), &[], &script);
    let show = |i: usize| format!("`{}` differs\n--- jdb:\n{}\n--- jdb-rs:\n{}", script[i], theirs[i], ours[i]);

    for i in [2, 5, 9, 11, 16] {
        assert_eq!(from_event(&ours[i]), from_event(&theirs[i]), "{}", show(i));
    }
    for i in [4, 7, 8, 10, 12, 13, 14, 15, 17, 18, 19] {
        assert_eq!(normalize(&ours[i]), normalize(&theirs[i]), "{}", show(i));
    }
    for i in [3, 6] {
        assert_eq!(fixture_rows(&ours[i]), fixture_rows(&theirs[i]), "{}", show(i));
        assert!(statuses_aligned(&ours[i]), "{}", ours[i]);
    }
    // Where the fixture's threads are, and how an unnamed virtual thread is shown.
    let first = normalize(&ours[2]);
    assert!(first.iter().any(|l| l.starts_with("Breakpoint hit: \"thread=vt-parked\", VirtualWork.parked(),")));
    assert!(first.last().is_some_and(|p| p == "vt-parked[1] "), "{first:?}");
    let rows = fixture_rows(&ours[6]);
    if virtual_threads {
        assert_eq!(
            rows,
            [
                "VirtualThreads: (java.lang.VirtualThread)N vt-parked cond. waiting",
                "VirtualThreads: (java.lang.VirtualThread)N running (at breakpoint)"
            ],
            "{}",
            ours[6]
        );
        assert!(normalize(&ours[5]).iter().any(|l| l.starts_with("Breakpoint hit: \"thread=\", VirtualWork.work(),")));
        assert!(normalize(&ours[5]).last().is_some_and(|p| p == "[1] "), "{}", ours[5]);
        assert_eq!(normalize(&ours[6]).iter().filter(|l| l.starts_with("Group VirtualThreads:")).count(), 1);
    } else {
        assert_eq!(rows.len(), 2, "{}", ours[6]);
        assert!(rows.iter().all(|r| r.starts_with("main: ")), "{rows:?}");
        assert!(!ours[6].contains("VirtualThreads"), "{}", ours[6]);
    }

    // `where all`: the fixture's two threads, with the same frames (the others' depend on timing).
    let (our_stacks, their_stacks) = (stacks(&ours[20]), stacks(&theirs[20]));
    let worker_name = if virtual_threads { "" } else { "pool-1-thread-1" };
    for name in ["vt-parked", worker_name] {
        assert!(
            their_stacks.get(name).is_some_and(|s| !s.is_empty()),
            "jdb's `where all` has {name:?}: {}",
            theirs[20]
        );
        assert_eq!(our_stacks.get(name), their_stacks.get(name), "{name:?}: {}", show(20));
    }

    // `version`: the lines the VM's agent describes.
    let vm_lines = |t: &str| -> Vec<String> {
        normalize(t)
            .into_iter()
            .filter(|l| l.starts_with("Java Debug Wire Protocol") || l.starts_with("JVM "))
            .collect()
    };
    assert_eq!(vm_lines(&ours[21]).len(), 3, "{}", ours[21]);
    assert_eq!(vm_lines(&ours[21]), vm_lines(&theirs[21]), "{}", show(21));
    assert!(ours[22].contains("The application exited"), "{}", ours[22]);
}

/// `threads` and `where all` with the agent's `includevirtualthreads=y` and with jdb's
/// `-trackallthreads`, on the first stop: with `-trackallthreads` the debugger learns of
/// "vt-parked" from its thread start; the agent option alone lists only the virtual threads
/// the agent has met.
#[test]
fn virtual_thread_listing_options_match_jdb() {
    let Ok(jdb) = test_rig::java_tool("jdb") else {
        eprintln!("SKIPPED virtual_thread_listing_options_match_jdb: the test JDK has no jdb");
        return;
    };
    if !has_virtual_threads("virtual_thread_listing_options_match_jdb") {
        eprintln!(
            "SKIPPED virtual_thread_listing_options_match_jdb: the options change nothing without virtual threads"
        );
        return;
    }
    let work = format!("stop at VirtualWork:{}", line_of("VirtualWork.java", "@vt-work"));
    let script = [work.as_str(), "cont", "threads", "cont"];
    for (extra_agent, extra_args) in [(",includevirtualthreads=y", &[][..]), ("", &["-trackallthreads"][..])] {
        let theirs = session(&jdb, agent_with(extra_agent), extra_args, &script);
        let ours = session(&jdb_rs(), agent_with(extra_agent), extra_args, &script);
        let what = format!("agent options {extra_agent:?}, debugger options {extra_args:?}");
        assert_eq!(
            from_event(&ours[1]),
            from_event(&theirs[1]),
            "{what}\n--- jdb:\n{}\n--- jdb-rs:\n{}",
            theirs[1],
            ours[1]
        );
        assert_eq!(
            fixture_rows(&ours[2]),
            fixture_rows(&theirs[2]),
            "{what}\n--- jdb:\n{}\n--- jdb-rs:\n{}",
            theirs[2],
            ours[2]
        );
        assert!(statuses_aligned(&ours[2]), "{}", ours[2]);
        assert!(ours[3].contains("The application exited"), "{}", ours[3]);
    }
}
