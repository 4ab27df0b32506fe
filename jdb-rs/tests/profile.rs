//! jdb-rs's profiling commands against fixtures with known answers, under our agent
//! (`target/<profile>/libjdwp_agent.so`: build it first with `cargo build -p jdwp-agent`): the
//! one-shot `profile` (HPROF-like text and JSON), `deadlocks` in one round trip (both cycles of
//! BothDeadlocks), and `heap histo` / `gc` in a session; the JDK's agent gets a one-line error.

mod common;

use std::time::Duration;

use common::run_jdb_rs;
use serde_json::Value;
use test_rig::{Agent, Debuggee};

const STARTUP: Duration = Duration::from_secs(120);

/// Our agent, running the program at once (the debugger attaches later).
fn our_agent() -> Agent {
    let lib = test_rig::our_agent_library().expect("build the agent first: cargo build -p jdwp-agent");
    Agent::path(lib, "transport=dt_socket,server=y,suspend=n,address=127.0.0.1:0")
}

fn started(main: &str, agent: Agent, line: &str) -> Debuggee {
    let virtual_main =
        if matches!(agent, Agent::Jdk(_)) { test_rig::virtual_main_requested() } else { common::ours_virtual_main() };
    let jvm = Debuggee::builder(main).agent(agent).virtual_main(virtual_main).spawn().expect("debuggee starts");
    jvm.wait_for_line(line, STARTUP).unwrap_or_else(|e| panic!("{main}: no {line:?}: {e}\n{}", jvm.output_text()));
    jvm
}

/// The one-shot profile's JSON report of Profiled, checked to have samples and `Profiled.hot` on
/// the "hot" thread as its top trace.
fn hot_method_report(out: &str) -> Value {
    let report: Value = serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("not JSON ({e}):\n{out}"));
    assert!(report["samples"].as_i64().unwrap() > 0, "{report:#}");
    let top = &report["traces"][0];
    assert_eq!(top["frames"][0]["class"], "Profiled", "{report:#}");
    assert_eq!(top["frames"][0]["method"], "hot", "{report:#}");
    assert_eq!(top["threads"][0]["name"], "hot", "{report:#}");
    report
}

#[test]
fn one_shot_cpu_profile_names_the_hot_method() {
    let jvm = started("Profiled", our_agent(), "ready");
    let address = jvm.address().to_string();

    let (code, out, err) =
        run_jdb_rs(&["profile", "--attach", &address, "--cpu", "--duration", "1s", "--interval", "1ms", "--json"]);
    assert_eq!(code, 0, "stdout:\n{out}\nstderr:\n{err}");
    let report = hot_method_report(&out);
    assert_eq!(report["type"], "profile");
    assert_eq!(report["running"], false);
    // The default mechanism is signals, which visit no idle thread.
    assert_eq!(report["idle_skipped"], 0, "{report:#}");

    // The text form is HPROF's: traces, then the ranked table.
    let (code, out, err) = run_jdb_rs(&["profile", "--attach", &address, "--cpu", "--duration", "1s", "--top", "5"]);
    assert_eq!(code, 0, "stdout:\n{out}\nstderr:\n{err}");
    assert!(out.starts_with("TRACE 1:\n\tProfiled.hot(Profiled.java:"), "{out}");
    assert!(out.contains("CPU SAMPLES BEGIN (total = "), "{out}");
    assert!(out.contains("rank   self  accum   count trace method\n   1 "), "{out}");
    let rank1 = out.lines().find(|l| l.starts_with("   1 ")).unwrap();
    assert!(rank1.ends_with(" 1 Profiled.hot"), "{rank1}");
    assert!(out.contains("CPU SAMPLES END\n"), "{out}");
    // The VM runs on after both sessions.
    assert!(jvm.exit_status().is_none());
}

/// `--jvmti-stacks` picks the agent's other sampling mechanism; the hot method is found the same.
#[test]
fn one_shot_cpu_profile_with_jvmti_stacks_names_the_hot_method() {
    let jvm = started("Profiled", our_agent(), "ready");
    let address = jvm.address().to_string();
    let (code, out, err) = run_jdb_rs(&[
        "profile",
        "--attach",
        &address,
        "--cpu",
        "--jvmti-stacks",
        "--duration",
        "1s",
        "--interval",
        "1ms",
        "--json",
    ]);
    assert_eq!(code, 0, "stdout:\n{out}\nstderr:\n{err}");
    let report = hot_method_report(&out);
    // Only the JVMTI mechanism visits threads that did not run (signals never see them).
    assert!(report["idle_skipped"].as_i64().unwrap() > 0, "{report:#}");
    assert!(jvm.exit_status().is_none());
}

#[test]
fn deadlocks_one_shot_reports_monitor_and_lock_cycles() {
    let jvm = started("BothDeadlocks", our_agent(), "deadlocked");
    let address = jvm.address().to_string();
    let (code, out, err) = run_jdb_rs(&["deadlocks", "--attach", &address, "--json"]);
    assert_eq!(code, 3, "stdout:\n{out}\nstderr:\n{err}");
    let report: Value = serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("not JSON ({e}):\n{out}"));
    assert_eq!(report["count"], 2, "{report:#}");
    let kinds: Vec<(&str, usize)> = report["deadlocks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["threads"][0]["kind"].as_str().unwrap(), d["threads"].as_array().unwrap().len()))
        .collect();
    assert!(kinds.contains(&("monitor", 3)) && kinds.contains(&("ownable synchronizer", 2)), "{report:#}");

    let (code, out, _) = run_jdb_rs(&["deadlocks", "--attach", &address]);
    assert_eq!(code, 3, "{out}");
    assert!(out.contains("Found a Java-level deadlock of 3 threads:"), "{out}");
    assert!(out.contains("Found a Java-level deadlock of 2 threads:"), "{out}");
    assert!(out.contains("(a BothDeadlocks$Monitor) held by \"mon-B\""), "{out}");
    assert!(out.contains("- parking to wait for <"), "{out}");
    assert!(out.contains("(a java.util.concurrent.locks.ReentrantLock$NonfairSync) held by \"juc-2\""), "{out}");
    assert!(out.contains("at BothDeadlocks.lockSecond(BothDeadlocks.java:"), "{out}");
    assert!(out.contains("Found 2 deadlock(s)."), "{out}");
}

#[test]
fn heap_histo_and_gc_in_a_session() {
    let jvm = started("Profiled", our_agent(), "ready");
    let (code, out, err) =
        run_jdb_rs(&["-attach", &jvm.address().to_string(), "--json", "-c", "gc; heap histo live; gc"]);
    assert_eq!(code, 0, "stdout:\n{out}\nstderr:\n{err}");
    let records: Vec<Value> = out.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    let histo = records.iter().find(|r| r.get("histogram").is_some()).unwrap_or_else(|| panic!("{out}"));
    let marker = histo["histogram"]["classes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["class"] == "Profiled$Marker")
        .unwrap_or_else(|| panic!("{histo:#}"));
    assert_eq!(marker["instances"], 1234);
    // The first `gc` starts the watch; `heap histo live` collects once, which the second sees.
    let gcs: Vec<&Value> = records.iter().filter_map(|r| r.get("gc")).collect();
    assert_eq!(gcs.len(), 2, "{out}");
    let (first, second) = (gcs[0]["collections"].as_i64().unwrap(), gcs[1]["collections"].as_i64().unwrap());
    assert!(second > first, "{out}");
    assert!(gcs[1]["max_pause_nanos"].as_i64().unwrap() > 0, "{out}");
}

#[test]
fn the_jdk_agent_gets_a_one_line_error() {
    let agent = Agent::jdk(format!("transport=dt_socket,server=y,suspend=n,address=127.0.0.1:{}", test_rig::FREE_PORT));
    let jvm = started("Profiled", agent, "ready");
    let (code, out, err) =
        run_jdb_rs(&["profile", "--attach", &jvm.address().to_string(), "--cpu", "--duration", "1s"]);
    assert_eq!(code, 1, "stdout:\n{out}\nstderr:\n{err}");
    assert!(out.is_empty(), "{out}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("no Profiler command set"), "{err}");
    // Nothing crashed the target (a vendor command would have: see jdi-rs's profiler module).
    assert!(jvm.exit_status().is_none(), "{}", jvm.output_text());
}
