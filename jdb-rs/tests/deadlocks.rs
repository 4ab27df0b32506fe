//! `jdb-rs deadlocks --attach ... [--json]`: the 3-thread monitor cycle of Deadlock.java is
//! found (exit 3) with each thread's lock and stack; Demo has none (exit 0).

mod common;

use std::time::Duration;

use common::run_jdb_rs;
use serde_json::Value;
use test_rig::{Agent, Debuggee};

/// A fixed port: after a debugger detaches, the agent listens again on the same address, and an
/// ephemeral one would be a new port. `JDI_TEST_AGENT=ours` runs the same tests against ours.
fn running_agent() -> Agent {
    let options = format!("transport=dt_socket,server=y,suspend=n,address=127.0.0.1:{}", test_rig::FREE_PORT);
    if common::testing_our_agent() { Agent::path(common::our_agent_path(), options) } else { Agent::jdk(options) }
}

#[test]
fn finds_the_three_thread_cycle_with_stacks() {
    let jvm = Debuggee::builder("Deadlock").agent(running_agent()).spawn().expect("Deadlock starts");
    // The fixture prints this once all three threads are blocked.
    jvm.wait_for_line("deadlocked", Duration::from_secs(120)).expect("the deadlock forms");
    let address = jvm.address().to_string();

    let (code, out, err) = run_jdb_rs(&["deadlocks", "--attach", &address, "--json"]);
    assert_eq!(code, 3, "exit status\nstdout:\n{out}\nstderr:\n{err}");
    let report: Value = serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("not JSON ({e}):\n{out}"));
    assert_eq!(report["type"], "deadlocks");
    assert_eq!(report["count"], 1, "{report:#}");
    let threads = report["deadlocks"][0]["threads"].as_array().expect("threads");
    let names: Vec<&str> = threads.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["deadlock-A", "deadlock-B", "deadlock-C"], "{report:#}");
    let enter_second = test_rig::fixture_line("Deadlock.java", "@enter-second").unwrap() as i64;
    for (i, t) in threads.iter().enumerate() {
        // Each waits for a monitor the next one holds.
        let next = &threads[(i + 1) % 3];
        assert_eq!(t["held_by"], next["name"]);
        assert_eq!(t["waiting_for"]["type"], "Deadlock$Monitor");
        let held: Vec<&Value> = next["holds"].as_array().unwrap().iter().map(|h| &h["lock"]["id"]).collect();
        assert!(held.contains(&&t["waiting_for"]["id"]), "{report:#}");
        let stack = t["stack"].as_array().expect("stack");
        assert_eq!(stack[0]["class"], "Deadlock", "{report:#}");
        // HotSpot places the blocked monitorenter on the synchronized line or the next one.
        let line = stack[0]["line"].as_i64().unwrap();
        assert!(line == enter_second || line == enter_second + 1, "{report:#}");
        assert!(stack.iter().any(|f| f["class"] == "java.lang.Thread" && f["method"] == "run"), "{report:#}");
    }

    // The text report says the same, jstack-like.
    let (code, out, _) = run_jdb_rs(&["deadlocks", "--attach", &address]);
    assert_eq!(code, 3, "{out}");
    assert!(out.contains("Found a Java-level deadlock of 3 threads:"), "{out}");
    assert!(out.contains("at Deadlock.lambda$main$0(Deadlock.java:"), "{out}");
    assert!(out.contains("- waiting to lock <"), "{out}");
    assert!(out.contains("held by \"deadlock-B\""), "{out}");

    // Its reader gone (`| head -1` that already exited): the same exit code, no panic.
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    let done = std::process::Command::new(common::jdb_rs())
        .args(["deadlocks", "--attach", &address])
        .stdout(writer)
        .stderr(std::process::Stdio::piped())
        .output()
        .expect("jdb-rs runs");
    let err = String::from_utf8_lossy(&done.stderr);
    assert_eq!(done.status.code(), Some(3), "stderr:\n{err}");
    assert!(!err.contains("panicked"), "{err}");

    // The VM was left running: the threads are still deadlocked, nothing else changed.
    assert!(jvm.exit_status().is_none(), "the debuggee must keep running");
}

#[test]
fn finds_none_in_demo() {
    // Suspended at its start: certainly no deadlock; detaching lets it run to its end.
    let jvm = Debuggee::builder("Demo").spawn().expect("Demo starts");
    let (code, out, err) = run_jdb_rs(&["deadlocks", "--attach", &jvm.address().to_string(), "--json"]);
    assert_eq!(code, 0, "stdout:\n{out}\nstderr:\n{err}");
    let report: Value = serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("not JSON ({e}):\n{out}"));
    assert_eq!(report["count"], 0);
    assert_eq!(report["deadlocks"], serde_json::json!([]));
    jvm.wait_for_line("Demo done", Duration::from_secs(120)).expect("Demo runs on after jdb-rs detaches");
}

#[test]
fn deadlocks_command_in_a_session_sets_exit_status_3() {
    let jvm = Debuggee::builder("Deadlock").agent(running_agent()).spawn().expect("Deadlock starts");
    jvm.wait_for_line("deadlocked", Duration::from_secs(120)).expect("the deadlock forms");
    let (code, out, err) = run_jdb_rs(&["-attach", &jvm.address().to_string(), "-c", "deadlocks"]);
    assert_eq!(code, 3, "stdout:\n{out}\nstderr:\n{err}");
    assert!(out.contains("Found 1 deadlock(s)."), "{out}");
}

#[test]
fn attach_failure_is_one_line_and_status_1() {
    // A port bound but not listening (held, so that no one else can listen on it meanwhile).
    let held = tokio::net::TcpSocket::new_v4().unwrap();
    held.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let port = held.local_addr().unwrap().port();
    let (code, out, err) = run_jdb_rs(&["deadlocks", "--attach", &format!("127.0.0.1:{port}")]);
    assert_eq!(code, 1, "{out}{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("Unable to attach"), "{err}");
}
