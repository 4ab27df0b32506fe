//! `jdb-rs deadlocks` with virtual threads (JDK 24+, where a virtual thread blocked on a monitor
//! unmounts, so JVMTI's thread list does not have it): VirtualDeadlock's two cycles, two virtual
//! threads on two monitors and a virtual and a platform thread on two `ReentrantLock`s, are found
//! by our agent's one-trip command. The JDK's agent has no such command: the reference is the
//! JDK's own thread dump (`jcmd <pid> Thread.dump_to_file -format=json`) of the same JVM, whose
//! threads, lock classes and waits-for relation the report must match. Skipped (with a note) on a
//! test JDK older than 24. Runs our agent, whatever `JDI_TEST_AGENT` says, but for the last test:
//! the standard search through the JDK's agent.

mod common;

use std::collections::HashMap;
use std::time::Duration;

use common::run_jdb_rs;
use serde_json::Value;
use test_rig::{Agent, Debuggee};

fn monitors_unmount(test: &str) -> bool {
    let feature = test_rig::jdk_feature_version().expect("the test JDK's version");
    if feature < 24 {
        eprintln!(
            "NOTE {test}: the test JDK is {feature}; a virtual thread blocked on a monitor unmounts \
             from JDK 24 on (set JDBG_TEST_JDK to a JDK 24+): nothing checked"
        );
    }
    feature >= 24
}

/// One thread of the JDK's JSON thread dump.
struct Dumped {
    is_virtual: bool,
    state: String,
    /// `Class@hash` of the monitor it blocks on, or of its park blocker.
    waits_for: Option<String>,
    owns: Vec<String>,
    /// The fixture's frames, `Class.method(File.java:line)`.
    fixture_frames: Vec<String>,
}

fn thread_dump(pid: u32) -> HashMap<String, Dumped> {
    let file = std::env::temp_dir().join(format!("vtdeadlock-{pid}-{}.json", std::process::id()));
    let _ = std::fs::remove_file(&file);
    let jcmd = test_rig::java_tool("jcmd").expect("jcmd");
    let out = std::process::Command::new(jcmd)
        .args([pid.to_string(), "Thread.dump_to_file".into(), "-format=json".into(), file.display().to_string()])
        .output()
        .expect("jcmd runs");
    assert!(out.status.success(), "jcmd: {}", String::from_utf8_lossy(&out.stderr));
    let dump: Value = serde_json::from_str(&std::fs::read_to_string(&file).expect("the dump")).expect("JSON");
    let _ = std::fs::remove_file(&file);
    let mut threads = HashMap::new();
    for container in dump["threadDump"]["threadContainers"].as_array().expect("containers") {
        for t in container["threads"].as_array().expect("threads") {
            let text = |v: &Value| v.as_str().map(str::to_string);
            let waits_for = text(&t["blockedOn"]).or_else(|| text(&t["parkBlocker"]["object"]));
            let owns = t["monitorsOwned"]
                .as_array()
                .into_iter()
                .flatten()
                .flat_map(|m| m["locks"].as_array().cloned().unwrap_or_default())
                .filter_map(|l| text(&l))
                .collect();
            let fixture_frames = t["stack"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(&text)
                .filter(|f| f.starts_with("VirtualDeadlock."))
                .collect();
            threads.insert(
                t["name"].as_str().unwrap_or_default().to_string(),
                Dumped {
                    is_virtual: t["virtual"] == true,
                    state: text(&t["state"]).unwrap_or_default(),
                    waits_for,
                    owns,
                    fixture_frames,
                },
            );
        }
    }
    threads
}

/// `Class@hash` → `Class`.
fn class_of(object: &str) -> &str {
    object.split('@').next().unwrap_or_default()
}

#[test]
fn finds_the_virtual_thread_cycles_the_jdk_dump_shows() {
    if !monitors_unmount("finds_the_virtual_thread_cycles_the_jdk_dump_shows") {
        return;
    }
    let options = format!("transport=dt_socket,server=y,suspend=n,address=127.0.0.1:{}", test_rig::FREE_PORT);
    let jvm = Debuggee::builder("VirtualDeadlock")
        .agent(Agent::path(common::our_agent_path(), options))
        .virtual_main(false)
        .spawn()
        .expect("VirtualDeadlock starts");
    jvm.wait_for_line("deadlocked", Duration::from_secs(120)).expect("the deadlocks form");
    let address = jvm.address().to_string();

    let (code, out, err) = run_jdb_rs(&["deadlocks", "--attach", &address, "--json"]);
    assert_eq!(code, 3, "exit status\nstdout:\n{out}\nstderr:\n{err}");
    let report: Value = serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("not JSON ({e}):\n{out}"));
    assert_eq!(report["count"], 2, "{report:#}");
    let dump = thread_dump(jvm.pid());

    let mut cycles: Vec<Vec<String>> = Vec::new();
    for cycle in report["deadlocks"].as_array().unwrap() {
        let threads = cycle["threads"].as_array().unwrap();
        let mut names: Vec<String> = threads.iter().map(|t| t["name"].as_str().unwrap().to_string()).collect();
        for (i, t) in threads.iter().enumerate() {
            let name = t["name"].as_str().unwrap();
            let next = &threads[(i + 1) % threads.len()];
            let d = dump.get(name).unwrap_or_else(|| panic!("{name} is not in the JDK's dump"));
            let d_next = &dump[next["name"].as_str().unwrap()];
            // The JDK's dump: it waits for a lock of the reported class, which the next one
            // owns (monitors: listed as owned; ReentrantLocks: the next one waits too, on its own
            // lock, which the report says this thread holds).
            assert_eq!(t["held_by"], next["name"], "{report:#}");
            let waits_for = d.waits_for.as_deref().unwrap_or_else(|| panic!("{name} waits for nothing in the dump"));
            assert_eq!(class_of(waits_for), t["waiting_for"]["type"].as_str().unwrap(), "{name}");
            match t["waiting_for"]["type"].as_str().unwrap() {
                "VirtualDeadlock$Monitor" => {
                    assert_eq!(d.state, "BLOCKED", "{name}");
                    assert!(d_next.owns.iter().any(|o| o == waits_for), "{name} waits for {waits_for}");
                }
                "java.util.concurrent.locks.ReentrantLock$NonfairSync" => assert_eq!(d.state, "WAITING", "{name}"),
                other => panic!("unexpected lock class {other}"),
            }
            // Its own stack, down to the fixture frames the JDK shows, which the report has too,
            // in order (the JDK's dump leaves out some JDK frames, never the fixture's).
            let stack = t["stack"].as_array().expect("stack");
            let ours: Vec<String> = stack
                .iter()
                .filter(|f| f["class"] == "VirtualDeadlock")
                .map(|f| {
                    format!("VirtualDeadlock.{}(VirtualDeadlock.java:{})", f["method"].as_str().unwrap(), f["line"])
                })
                .collect();
            assert_eq!(ours, d.fixture_frames, "{name}\n{report:#}");
            if d.is_virtual {
                // Down to its continuation's entry, with no carrier frames.
                let last = stack.last().unwrap();
                assert_eq!(last["class"], "jdk.internal.vm.Continuation", "{report:#}");
                assert!(!stack.iter().any(|f| f["class"] == "java.util.concurrent.ForkJoinPool"), "{report:#}");
            }
        }
        names.sort();
        cycles.push(names);
    }
    cycles.sort();
    assert_eq!(cycles, [vec!["pt-lock-P", "vt-lock-V"], vec!["vt-monitor-A", "vt-monitor-B"]], "{report:#}");
    assert!(dump["vt-monitor-A"].is_virtual && dump["vt-monitor-B"].is_virtual && dump["vt-lock-V"].is_virtual);
    assert!(!dump["pt-lock-P"].is_virtual);

    // A second search (which suspends the same virtual threads again) finds the same, and the
    // threads still wait as before.
    let (code, out, _) = run_jdb_rs(&["deadlocks", "--attach", &address]);
    assert_eq!(code, 3, "{out}");
    assert!(out.contains("\"vt-monitor-A\":"), "{out}");
    assert!(out.contains("- waiting to lock <"), "{out}");
    assert!(out.contains("held by \"vt-lock-V\""), "{out}");
    let after = thread_dump(jvm.pid());
    for name in ["vt-monitor-A", "vt-monitor-B", "vt-lock-V", "pt-lock-P"] {
        assert_eq!(after[name].state, dump[name].state, "{name} after the searches");
    }
    assert!(jvm.exit_status().is_none(), "the debuggee must keep running");
}

/// In a program without virtual threads, the searches for them (`deadlocks`, CPU profiles in
/// both modes) leave `java.lang.VirtualThread` uninitialized: they must not start the virtual
/// thread scheduler of a program that has none. Checked in the JVM's own class-initialization log.
#[test]
fn searching_for_virtual_threads_initializes_nothing() {
    let feature = test_rig::jdk_feature_version().expect("the test JDK's version");
    if feature < 21 {
        eprintln!("NOTE: the test JDK is {feature}, without virtual threads: nothing is looked for, nothing checked");
        return;
    }
    let log = std::env::temp_dir().join(format!("vtinit-{}.log", std::process::id()));
    let _ = std::fs::remove_file(&log);
    let options = format!("transport=dt_socket,server=y,suspend=n,address=127.0.0.1:{}", test_rig::FREE_PORT);
    let jvm = Debuggee::builder("Deadlock")
        .agent(Agent::path(common::our_agent_path(), options))
        .virtual_main(false)
        .jvm_option(format!("-Xlog:class+init=info:file={}", log.display()))
        .spawn()
        .expect("Deadlock starts");
    jvm.wait_for_line("deadlocked", Duration::from_secs(120)).expect("the deadlock forms");
    let address = jvm.address().to_string();
    let (code, out, _) = run_jdb_rs(&["deadlocks", "--attach", &address]);
    assert_eq!(code, 3, "{out}");
    for mode in [&[][..], &["--jvmti-stacks"][..]] {
        let mut args = vec!["profile", "--attach", &address, "--cpu", "--duration", "200ms"];
        args.extend_from_slice(mode);
        let (code, out, err) = run_jdb_rs(&args);
        assert_eq!(code, 0, "{out}{err}");
    }
    let text = std::fs::read_to_string(&log).expect("the class-initialization log");
    let _ = std::fs::remove_file(&log);
    // The log works: the program's own class was initialized.
    assert!(text.contains("Initializing 'Deadlock'"), "{text}");
    assert!(!text.contains("Initializing 'java/lang/VirtualThread'"), "{text}");
}

/// The standard search (the JDK's agent has no one-trip command) finds the cycle of two virtual
/// threads on monitors too: they are in no thread list, so it takes them from the heap
/// (`Instances` of `java.lang.VirtualThread`). The `ReentrantLock` cycle is not a monitor one,
/// which standard JDWP cannot see. Checked against the JDK's own thread dump of the same JVM.
#[test]
fn the_standard_search_finds_virtual_threads_through_the_jdks_agent() {
    if !monitors_unmount("the_standard_search_finds_virtual_threads_through_the_jdks_agent") {
        return;
    }
    let options = format!("transport=dt_socket,server=y,suspend=n,address=127.0.0.1:{}", test_rig::FREE_PORT);
    let jvm = Debuggee::builder("VirtualDeadlock")
        .agent(Agent::jdk(options))
        .virtual_main(false)
        .spawn()
        .expect("VirtualDeadlock starts");
    jvm.wait_for_line("deadlocked", Duration::from_secs(120)).expect("the deadlocks form");
    let address = jvm.address().to_string();

    let (code, out, err) = run_jdb_rs(&["deadlocks", "--attach", &address, "--json"]);
    assert_eq!(code, 3, "exit status\nstdout:\n{out}\nstderr:\n{err}");
    let report: Value = serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("not JSON ({e}):\n{out}"));
    assert_eq!(report["count"], 1, "{report:#}");
    let threads = report["deadlocks"][0]["threads"].as_array().expect("threads");
    let names: Vec<&str> = threads.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["vt-monitor-A", "vt-monitor-B"], "{report:#}");
    let dump = thread_dump(jvm.pid());
    for (i, t) in threads.iter().enumerate() {
        let name = names[i];
        let next = names[(i + 1) % 2];
        let d = &dump[name];
        assert!(d.is_virtual, "{name}");
        assert_eq!(d.state, "BLOCKED", "{name}");
        assert_eq!(t["held_by"], next, "{report:#}");
        let waits_for = d.waits_for.as_deref().unwrap_or_else(|| panic!("{name} waits for nothing in the dump"));
        assert_eq!(class_of(waits_for), t["waiting_for"]["type"].as_str().unwrap(), "{name}");
        assert!(dump[next].owns.iter().any(|o| o == waits_for), "{name} waits for {waits_for}");
        let fixture: Vec<String> = t["stack"]
            .as_array()
            .expect("stack")
            .iter()
            .filter(|f| f["class"] == "VirtualDeadlock")
            .map(|f| format!("VirtualDeadlock.{}(VirtualDeadlock.java:{})", f["method"].as_str().unwrap(), f["line"]))
            .collect();
        assert_eq!(fixture, d.fixture_frames, "{name}\n{report:#}");
    }
    assert!(jvm.exit_status().is_none(), "the debuggee must keep running");
}
