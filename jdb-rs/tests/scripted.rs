//! Scripted use (`-c`, `--script`, `--json`) and bad input: one clear line per mistake, never a
//! panic or a hang, and exit statuses 0 (fine), 1 (a command failed), 2 (usage).

mod common;

use common::{Driver, fixtures, jdb_rs, line_of, run_jdb_rs, sources};
use serde_json::Value;

fn demo(commands: &str, extra: &[&str]) -> (i32, String, String) {
    let cp = fixtures();
    let src = sources();
    let mut args: Vec<&str> = vec!["-classpath", &cp, "-sourcepath", &src];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["-c", commands, "Demo"]);
    run_jdb_rs(&args)
}

fn no_panic(out: &str, err: &str) {
    assert!(!out.contains("panicked") && !err.contains("panicked"), "stdout:\n{out}\nstderr:\n{err}");
}

#[test]
fn a_good_script_exits_0_and_stops_where_asked() {
    let tick = line_of("Demo.java", "@tick-first");
    let (code, out, err) =
        demo(&format!("stop at Demo:{tick}; run; print n; next; print doubled; step up; where; cont; cont"), &[]);
    no_panic(&out, &err);
    assert_eq!(code, 0, "stdout:\n{out}\nstderr:\n{err}");
    assert!(out.contains(&format!("Breakpoint hit: \"thread=main\", Demo.tick(), line={tick} bci=0")), "{out}");
    assert!(out.contains(" n = 0"), "{out}");
    assert!(out.contains(" doubled = 0"), "{out}");
    assert!(out.contains("  [1] Demo.main (Demo.java:"), "{out}");
    assert!(out.contains(" n = 0") && out.matches("Breakpoint hit:").count() == 3, "{out}");
}

#[test]
fn mistakes_get_one_line_each_and_exit_status_1() {
    let cases: &[(&str, &str)] = &[
        ("frobnicate", "Unrecognized command: 'frobnicate'.  Try help..."),
        ("where", "Command 'where' is not valid until the VM is started with the 'run' command"),
        ("stop at Demo:abc", "Invalid line number specified"),
        ("stop in 1Bad.x", "\"1Bad\" is not a valid class name."),
        ("stop in Demo", "Invalid <class>.<method_name> specification"),
        ("catch", "No exceptions caught."),
    ];
    for (cmd, expected) in cases {
        let (code, out, err) = demo(cmd, &[]);
        no_panic(&out, &err);
        let lines: Vec<&str> = out.lines().filter(|l| !l.starts_with("Initializing")).collect();
        assert_eq!(lines, [*expected], "{cmd}: stdout:\n{out}\nstderr:\n{err}");
        let want = if *cmd == "catch" { 0 } else { 1 };
        assert_eq!(code, want, "{cmd}: exit status; stdout:\n{out}");
    }
}

#[test]
fn mistakes_while_stopped_and_while_running() {
    let tick = line_of("Demo.java", "@tick-first");
    let script = format!(
        "stop at Demo:{tick}; run; print nosuch; print 1 +; print n.x; print ints[7]; stop at Demo:9999; \
         stop in Demo.nosuch; stop in Demo.tick(String); thread 999; up 99; clear Demo:1; class NoSuch; \
         locals"
    );
    let (code, out, err) = demo(&script, &[]);
    no_panic(&out, &err);
    assert_eq!(code, 1, "stdout:\n{out}");
    for expected in [
        "Name unknown: nosuch",
        "Unexpected end of expression",
        "Cannot access x of a primitive value",
        "Name unknown: ints",
        "Unable to set breakpoint Demo:9999 : No code at line 9,999 in Demo",
        "Unable to set breakpoint Demo.nosuch : No method nosuch in Demo",
        "Unable to set breakpoint Demo.tick(String) : No method tick in Demo",
        "\"999\" is not a valid thread id.",
        "End of stack.",
        "Not found: breakpoint Demo:1",
        "\"NoSuch\" is not a valid id or class name.",
        "Method arguments:",
    ] {
        assert!(out.lines().any(|l| l == expected), "missing {expected:?} in:\n{out}");
    }
}

#[test]
fn commands_needing_a_stopped_thread_while_the_vm_runs() {
    // Deadlock never stops by itself: `run` gives up after --timeout and the VM keeps running.
    let cp = fixtures();
    let (code, out, err) = run_jdb_rs(&[
        "-classpath",
        &cp,
        "--timeout",
        "3",
        "-c",
        "run; where; locals; up; print 1 + 1; suspend; threads; resume; cont",
        "Deadlock",
    ]);
    no_panic(&out, &err);
    assert_eq!(code, 1, "stdout:\n{out}");
    for expected in [
        "Timed out waiting for the VM to stop; it is still running.",
        "No thread specified.",
        "No default thread specified: use the \"thread\" command first.",
        "Current thread not set.",
        " 1 + 1 = 2",
        "All threads suspended.",
        "All threads resumed.",
        "Nothing suspended.",
    ] {
        assert!(out.lines().any(|l| l == expected), "missing {expected:?} in:\n{out}");
    }
    assert!(out.contains("deadlock-A") && out.contains("waiting in a monitor"), "{out}");
}

#[test]
fn the_end_of_the_vm_ends_the_session() {
    // After the program exits, the remaining commands cannot run: the session says so and ends.
    let (code, out, err) = demo("run; where; cont", &[]);
    no_panic(&out, &err);
    assert!(out.contains("The application exited"), "{out}");
    assert!(out.contains("Demo done"), "{out}");
    assert_eq!(code, 0, "{out}");
}

#[test]
fn json_gives_one_object_per_command_and_event() {
    let tick = line_of("Demo.java", "@tick-first");
    let (code, out, err) =
        demo(&format!("stop at Demo:{tick}; run; where; locals; print nosuch; clear Demo:{tick}; cont"), &["--json"]);
    no_panic(&out, &err);
    assert_eq!(code, 1, "{out}");
    let records: Vec<Value> =
        out.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}"))).collect();
    let commands: Vec<&Value> = records.iter().filter(|r| r["type"] == "command").collect();
    assert_eq!(
        commands.iter().map(|c| c["command"].as_str().unwrap()).collect::<Vec<_>>(),
        ["stop", "run", "where", "locals", "print", "clear", "cont"]
    );
    let bp = records.iter().find(|r| r["event"] == "breakpoint").expect("a breakpoint event");
    assert_eq!(bp["thread"], "main");
    assert_eq!(bp["location"]["method"], "tick");
    assert_eq!(bp["location"]["line"], tick);
    assert_eq!(commands[2]["frames"][0]["method"], "tick");
    assert_eq!(commands[3]["arguments"]["n"], "0");
    assert_eq!(commands[4]["ok"], false);
    assert_eq!(commands[4]["error"], "Name unknown: nosuch");
    assert!(records.iter().any(|r| r["type"] == "output" && r["text"].as_str().unwrap_or("").contains("Demo total=")));
    assert!(records.iter().any(|r| r["event"] == "breakpoint") && records.iter().any(|r| r["event"] == "vm_death"));
}

#[test]
fn usage_errors_exit_2() {
    for args in
        [&["-bogus"][..], &["-attach"], &["-attach", "1", "-listen", "2"], &["-attach", "5", "Demo"], &["deadlocks"]]
    {
        let (code, out, err) = run_jdb_rs(args);
        assert_eq!(code, 2, "{args:?}: {out}{err}");
        no_panic(&out, &err);
        assert!(err.contains("Usage: jdb-rs"), "{args:?}: {err}");
    }
    let (code, out, _) = run_jdb_rs(&["-help"]);
    assert_eq!(code, 0);
    assert!(out.contains("Usage: jdb-rs"));
}

#[test]
fn script_files_and_piped_input() {
    let dir = std::env::temp_dir().join(format!("jdb-rs-script-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let script = dir.join("cmds.jdb");
    let square = line_of("Demo.java", "@square-first");
    std::fs::write(&script, "# a comment\nstop in Demo.square\nrun\nprint x\n2 cont\nprint x\n").unwrap();
    let cp = fixtures();
    let (code, out, err) = run_jdb_rs(&["-classpath", &cp, "--script", script.to_str().unwrap(), "Demo"]);
    no_panic(&out, &err);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains(&format!("Demo.square(), line={square} bci=0")), "{out}");
    // square(t) for t = 0, 2, 6: the third stop has x = 6.
    assert!(out.lines().any(|l| l == " x = 6"), "{out}");
    let _ = std::fs::remove_dir_all(&dir);

    // Piped standard input: jdb's prompts, and `Input stream closed.` at the end.
    let mut d = Driver::spawn(&jdb_rs(), &["-classpath".into(), cp, "Demo".into()]);
    assert!(d.ready().ends_with("> "));
    let out = d.command("stop in Demo.square");
    assert!(out.contains("Deferring breakpoint Demo.square."), "{out}");
    let out = d.command("run");
    assert!(out.contains("Breakpoint hit:") && out.ends_with("main[1] "), "{out}");
    let out = d.command("!!");
    assert!(out.starts_with("run\n"), "!! repeats the last line: {out}");
    let (status, all, _) = d.wait();
    assert!(all.contains("Input stream closed."), "{all}");
    assert_eq!(status.code(), Some(1), "the repeated `run` failed: {all}");
}
