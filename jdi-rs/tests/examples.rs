//! The deadlock finder (the library function the `deadlocks` example uses) against real
//! deadlocks and their absence, and the example programs themselves, run as a user would.
//!
//! The example binaries are run when cargo has built them, which `cargo test -p jdi-rs` (and
//! `cargo test --workspace`) does before running tests; `cargo test --test examples` alone does
//! not build examples, and then those checks are skipped with a note. Building them from here
//! (a nested cargo) would cost far more than it checks.

mod common;

use std::path::PathBuf;
use std::process::Output;

use jdi::deadlock::find_deadlocks;
use jdi::{ThreadStatus, ValueMirror};
use test_rig::Agent;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn finds_the_three_thread_monitor_cycle() {
    let mut s = common::start("Deadlock", &[]).await;
    // main reaches this line only once all three threads are blocked on their second monitor.
    let (_, main) = s.run_to_marker("Deadlock", "@deadlocked").await;
    let deadlocks = find_deadlocks(&s.vm).await.unwrap();
    assert_eq!(deadlocks.len(), 1, "{deadlocks:#?}");
    let cycle = &deadlocks[0].threads;
    let names: Vec<&str> = cycle.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["deadlock-A", "deadlock-B", "deadlock-C"]);

    let enter_second = test_rig::fixture_line("Deadlock.java", "@enter-second").unwrap() as i32;
    for (i, t) in cycle.iter().enumerate() {
        let next = &cycle[(i + 1) % cycle.len()];
        assert_eq!(t.waiting_for.type_name, "Deadlock$Monitor");
        assert_eq!(t.holds.len(), 1, "{:?}", t.holds);
        let held = &t.holds[0];
        assert_eq!(held.lock.type_name, "Deadlock$Monitor");
        // Each waits for what the next one holds, and holds what the previous one waits for.
        assert_eq!(t.waiting_for.object, next.holds[0].lock.object);
        assert_eq!(held.frame, Some(0), "the lambda's frame locked it");
        let top = &t.stack[0];
        assert_eq!((top.class_name.as_str(), top.method.as_str()), ("Deadlock", "lambda$main$0"), "{top}");
        // javac puts the monitorenter on the line of the `synchronized` or of the block's body.
        assert!([enter_second, enter_second + 1].contains(&top.line), "{top}");
        assert_eq!(t.thread.status().await.unwrap().0, ThreadStatus::Monitor);
    }
    // The monitors are A, B, C: thread deadlock-X holds X and waits for the next letter.
    for (t, (holds, wants)) in cycle.iter().zip([("A", "B"), ("B", "C"), ("C", "A")]) {
        assert_eq!(monitor_name(&t.holds[0].lock.object).await, holds);
        assert_eq!(monitor_name(&t.waiting_for.object).await, wants);
    }
    let report = deadlocks[0].to_string();
    assert!(report.contains("\"deadlock-A\":\n\tat Deadlock.lambda$main$0(Deadlock.java:"), "{report}");
    assert!(report.contains("(a Deadlock$Monitor) held by \"deadlock-B\""), "{report}");

    // Suspension is as it was: only the breakpoint's.
    assert_eq!(main.suspend_count().await.unwrap(), 1);
    // The program never ends; dropping the session kills it.
}

async fn monitor_name(monitor: &jdi::ObjectReference) -> String {
    let ty = monitor.reference_type().await.unwrap();
    let field = ty.field_by_name("name").await.unwrap().expect("Monitor.name");
    let value = monitor.get_values(&[field]).await.unwrap()[0];
    match monitor.vm().value_mirror(value) {
        ValueMirror::String(s) => s.value().await.unwrap(),
        other => panic!("{other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_deadlock_in_a_program_without_one() {
    let mut s = common::start("Demo", &[]).await;
    s.run_to_marker("Demo", "@loop-tick").await;
    assert!(find_deadlocks(&s.vm).await.unwrap().is_empty());
    s.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lock_deadlocks_are_not_monitor_deadlocks() {
    // ReentrantLock owners park: JDWP sees no monitor, so there is no monitor cycle to report.
    let mut s = common::start("LockDeadlock", &[]).await;
    s.run_to_marker("LockDeadlock", "@deadlocked").await;
    assert!(find_deadlocks(&s.vm).await.unwrap().is_empty());
}

/// An example binary next to this test's profile directory, if cargo built it.
fn example(name: &str) -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    // target/<profile>/deps/<test> → target/<profile>/examples/<name>
    let path = exe.parent()?.parent()?.join("examples").join(name);
    if path.is_file() {
        Some(path)
    } else {
        eprintln!("skipping: {} is not built (run `cargo test -p jdi-rs` or `cargo build --examples`)", path.display());
        None
    }
}

/// Runs an example with a timeout (it is killed if it hangs).
async fn run(example: &PathBuf, args: &[&str]) -> Output {
    let child = tokio::process::Command::new(example).args(args).kill_on_drop(true).output();
    tokio::time::timeout(common::TIMEOUT, child).await.expect("the example finished in time").unwrap()
}

/// `--launch MAIN --classpath FIXTURES [--agentpath LIB]` for the agent under test.
fn launch_args(main: &str) -> Vec<String> {
    let mut args = vec!["--launch".into(), main.into(), "--classpath".into()];
    args.push(test_rig::fixtures().unwrap().display().to_string());
    if let Agent::Path(lib, _) = common::agent() {
        args.extend(["--agentpath".into(), lib.display().to_string()]);
    }
    args
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deadlocks_example_exit_codes() {
    let Some(bin) = example("deadlocks") else { return };
    let deadlocked = test_rig::fixture_line("Deadlock.java", "@deadlocked").unwrap();
    let mut args = launch_args("Deadlock");
    args.extend(["--break".into(), format!("Deadlock:{deadlocked}")]);
    let out = run(&bin, &args.iter().map(String::as_str).collect::<Vec<_>>()).await;
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "{stdout}{}", text(&out.stderr));
    for needle in ["\"deadlock-A\":", "\"deadlock-B\":", "\"deadlock-C\":", "(a Deadlock$Monitor)", "Found 1 deadlock"]
    {
        assert!(stdout.contains(needle), "{needle} missing from:\n{stdout}");
    }

    // Demo runs to its end without a deadlock.
    let args = launch_args("Demo");
    let out = run(&bin, &args.iter().map(String::as_str).collect::<Vec<_>>()).await;
    assert_eq!(out.status.code(), Some(0), "{}{}", text(&out.stdout), text(&out.stderr));
    assert!(text(&out.stdout).contains("No deadlock found."));

    // Bad input: one line on stderr, exit 2; nothing to attach to: one line, exit 1.
    for (args, code) in [(&["--frobnicate"][..], 2), (&["--launch"][..], 2), (&["--attach", "127.0.0.1:1"][..], 1)] {
        let out = run(&bin, args).await;
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.starts_with("deadlocks: "), "{stderr}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn threads_example_lists_groups_and_stacks() {
    let Some(bin) = example("threads") else { return };
    // (Its doc comment names the marker too.)
    let started = test_rig::fixture_line("Threads.java", "// @all-started").unwrap();
    let mut args = launch_args("Threads");
    args.extend(["--break".into(), format!("Threads:{started}")]);
    let out = run(&bin, &args.iter().map(String::as_str).collect::<Vec<_>>()).await;
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    let workers = stdout.find("Thread group \"workers\":").expect(&stdout);
    for n in 1..=3 {
        // (A worker may not have parked yet: its status varies, its place does not.)
        let at = stdout.find(&format!("      \"worker-{n}\" ")).expect(&stdout);
        assert!(at > workers, "worker-{n} is listed under its group:\n{stdout}");
        let first_line = &stdout[at..stdout[at..].find('\n').map_or(stdout.len(), |e| at + e)];
        assert!(first_line.ends_with(", suspended"), "{first_line}");
    }
    assert_eq!(stdout.matches("at Threads.lambda$main$0(Threads.java:").count(), 3, "{stdout}");
    assert!(
        stdout.contains(&format!("    \"main\" RUNNING, suspended\n        at Threads.main(Threads.java:{started})"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trace_example_prints_the_call_tree() {
    let Some(bin) = example("trace") else { return };
    let args = launch_args("Demo");
    let out = run(&bin, &args.iter().map(String::as_str).collect::<Vec<_>>()).await;
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    let lines: Vec<&str> = stdout.lines().filter(|l| l.starts_with("[main]")).collect();
    // tick(i) returns 0, 2, 6, 12, 20; square(t) returns t*t; fail throws; all inside main.
    let expected = [
        "[main]   -> Demo.tick(n=0)",
        "[main]   <- Demo.tick = 0",
        "[main]   -> Demo.square(x=0)",
        "[main]   <- Demo.square = 0",
        "[main]   -> Demo.tick(n=1)",
        "[main]   <- Demo.tick = 2",
        "[main]   -> Demo.square(x=2)",
        "[main]   <- Demo.square = 4",
    ];
    let first_tick = lines.iter().position(|l| l.contains("Demo.tick")).expect(&stdout);
    assert_eq!(&lines[first_tick..first_tick + expected.len()], expected, "{stdout}");
    assert!(lines.contains(&"[main]   <- Demo.tick = 20"), "{stdout}");
    assert!(lines.contains(&"[main]   -> Demo.fail(why=\"expected\")"), "{stdout}");
    assert!(lines.contains(&"[main]   <- Demo.fail threw"), "{stdout}");
    assert_eq!(lines.last(), Some(&"[main] <- Demo.main"), "{stdout}");
    // The program's own output is passed through.
    assert!(stdout.contains("Demo total=584"), "{stdout}");
}
