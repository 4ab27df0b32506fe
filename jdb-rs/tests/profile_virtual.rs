//! Allocation profiles of a virtual thread (`jdb-rs profile --alloc`): JVMTI's `SampledObjectAlloc`
//! runs on the allocating thread, which is the virtual thread while one is mounted, so the sampled
//! stack is the virtual thread's own, down to its continuation's entry, with none of the carrier's
//! `ForkJoinPool` frames. VirtualBurn allocates in a virtual and a platform thread. On JDK 17
//! (no virtual threads) both are platform threads, and only their stacks are checked. Our agent
//! only: the JDK's agent has no profiler.

mod common;

use std::time::Duration;

use common::run_jdb_rs;
use serde_json::Value;
use test_rig::{Agent, Debuggee};

/// Starts fixture `class` under our agent (its main a platform thread, with `jvm_options`) and
/// waits for its `ready` line.
fn started_under_ours(class: &str, ready: &str, jvm_options: &[&str]) -> Debuggee {
    let options = format!("transport=dt_socket,server=y,suspend=n,address=127.0.0.1:{}", test_rig::FREE_PORT);
    let mut debuggee =
        Debuggee::builder(class).agent(Agent::path(common::our_agent_path(), options)).virtual_main(false);
    for &option in jvm_options {
        debuggee = debuggee.jvm_option(option);
    }
    let jvm = debuggee.spawn().unwrap_or_else(|e| panic!("{class} starts: {e}"));
    jvm.wait_for_line(ready, Duration::from_secs(120)).expect("the threads start");
    jvm
}

/// `jdb-rs profile --attach <jvm> --json` with `args`: the report, once the command succeeded.
fn profile_json(jvm: &Debuggee, args: &[&str]) -> Value {
    let address = jvm.address().to_string();
    let mut all = vec!["profile", "--attach", &address, "--json"];
    all.extend_from_slice(args);
    let (code, out, err) = run_jdb_rs(&all);
    assert_eq!(code, 0, "stdout:\n{out}\nstderr:\n{err}");
    serde_json::from_str(out.trim().lines().last().unwrap_or_default())
        .unwrap_or_else(|e| panic!("not JSON ({e}):\n{out}"))
}

#[test]
fn allocation_samples_in_a_virtual_thread_show_its_own_stack() {
    let feature = test_rig::jdk_feature_version().expect("the test JDK's version");
    let jvm = started_under_ours("VirtualBurn", "burning", &[]);
    let report = profile_json(&jvm, &["--alloc", "--alloc-interval", "4096", "--duration", "2s"]);
    let line = test_rig::fixture_line("VirtualBurn.java", "vt-burn").unwrap();
    let top = format!("VirtualBurn.burn(VirtualBurn.java:{line})");
    let stacks: Vec<Vec<&str>> = report["sites"]["sites"]
        .as_array()
        .expect("sites")
        .iter()
        .filter(|s| s["class"] == "long[]")
        .map(|s| s["stack"].as_array().unwrap().iter().map(|f| f.as_str().unwrap()).collect::<Vec<&str>>())
        .filter(|s| s.first() == Some(&top.as_str()))
        .collect();
    // The platform thread's: down to Thread.run.
    assert!(stacks.iter().any(|s| s.last().is_some_and(|f| f.starts_with("java.lang.Thread.run("))), "{report:#}");
    if feature < 21 {
        eprintln!("NOTE: the test JDK is {feature}, without virtual threads: only platform-thread stacks checked");
        assert!(stacks.iter().all(|s| !s.iter().any(|f| f.contains("VirtualThread"))), "{report:#}");
        return;
    }
    // The virtual thread's: its own frames, down to the continuation's entry, no carrier frames.
    let virtual_stack = stacks
        .iter()
        .find(|s| s.iter().any(|f| f.starts_with("java.lang.VirtualThread.run(")))
        .unwrap_or_else(|| panic!("no sample in the virtual thread:\n{report:#}"));
    assert!(virtual_stack.last().unwrap().starts_with("jdk.internal.vm.Continuation.enter("), "{virtual_stack:?}");
    assert!(!virtual_stack.iter().any(|f| f.contains("ForkJoin")), "{virtual_stack:?}");
    assert!(jvm.exit_status().is_none(), "the debuggee must keep running");
}

/// A CPU profile of VirtualBurn in one mode: each burning thread's samples, by name, and their
/// stacks. On JDK 21+ the virtual thread's samples are its own (named "vt-burner", frames down to
/// its continuation's entry), not its carrier's (a `ForkJoinPool` worker).
fn cpu_profile_names_the_virtual_thread(mode: &[&str]) {
    let feature = test_rig::jdk_feature_version().expect("the test JDK's version");
    let jvm = started_under_ours("VirtualBurn", "burning", &[]);
    let mut args = vec!["--cpu", "--duration", "2s"];
    args.extend_from_slice(mode);
    let report = profile_json(&jvm, &args);
    let names: Vec<&str> =
        report["threads"].as_array().expect("threads").iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert!(names.contains(&"pt-burner") && names.contains(&"vt-burner"), "{names:?}\n{report:#}");
    for trace in report["traces"].as_array().expect("traces") {
        let frames: Vec<&str> =
            trace["frames"].as_array().unwrap().iter().map(|f| f["text"].as_str().unwrap()).collect();
        let last = frames.last().copied().unwrap_or_default();
        for t in trace["threads"].as_array().unwrap() {
            match t["name"].as_str().unwrap() {
                "vt-burner" if feature >= 21 => {
                    assert!(frames[0].starts_with("VirtualBurn.burn("), "{frames:?}");
                    assert!(last.starts_with("jdk.internal.vm.Continuation.enter("), "{frames:?}");
                    assert!(!frames.iter().any(|f| f.contains("ForkJoin")), "{frames:?}");
                }
                "vt-burner" | "pt-burner" => {
                    assert!(frames[0].starts_with("VirtualBurn.burn("), "{frames:?}");
                    assert!(last.starts_with("java.lang.Thread.run("), "{frames:?}");
                }
                // Other threads (a carrier running the scheduler, the GC's reference handler)
                // may use CPU too, but never in the virtual thread's code.
                other => assert!(!frames.iter().any(|f| f.starts_with("VirtualBurn.burn(")), "{other}: {frames:?}"),
            }
        }
    }
    if feature < 21 {
        eprintln!("NOTE: the test JDK is {feature}, without virtual threads: both burners are platform threads");
    }
    assert!(jvm.exit_status().is_none(), "the debuggee must keep running");
}

#[test]
fn cpu_samples_in_a_virtual_thread_are_its_own_with_signals() {
    cpu_profile_names_the_virtual_thread(&[]);
}

#[test]
fn cpu_samples_in_a_virtual_thread_are_its_own_with_jvmti_stacks() {
    cpu_profile_names_the_virtual_thread(&["--jvmti-stacks"]);
}

/// A monitor profile of two virtual threads contending for one monitor (VirtualContend; on JDK
/// 24+ a virtual thread blocks on a monitor without pinning its carrier): the record of the
/// contention in grab(), and the test JDK's feature version. On JDK 17 both threads are platform
/// threads of the same names.
fn virtual_contention_in_grab() -> (Value, u32) {
    let feature = test_rig::jdk_feature_version().expect("the test JDK's version");
    // Before JDK 24 each of the two virtual threads pins a carrier while it spins or blocks.
    let grab =
        contention_site("VirtualContend", "grab", "vt-grab", "2s", &["-Djdk.virtualThreadScheduler.parallelism=2"]);
    (grab, feature)
}

/// Runs fixture `class` (its main in a platform thread, with `jvm_options`) under our agent until
/// it prints "contending", records its monitors with `jdb-rs profile --monitors` for `duration`,
/// and returns the record of the contention on its `Lock` in `method`, whose `synchronized` line
/// is marked `marker`; the debuggee must still run.
fn contention_site(class: &str, method: &str, marker: &str, duration: &str, jvm_options: &[&str]) -> Value {
    let jvm = started_under_ours(class, "contending", jvm_options);
    let report = profile_json(&jvm, &["--monitors", "--duration", duration]);
    // The blocked frame is at the `synchronized` line while the method runs compiled, and at the
    // next line while it is interpreted: HotSpot's interpreter moves the frame's bytecode index
    // past `monitorenter` before it locks (seen under load on JDK 17, and always with -Xint).
    let line = test_rig::fixture_line(&format!("{class}.java"), marker).unwrap();
    let tops = [line, line + 1].map(|l| format!("{class}.{method}({class}.java:{l})"));
    let lock = format!("{class}$Lock");
    let site = report["monitors"]["monitors"]
        .as_array()
        .expect("monitors")
        .iter()
        .find(|m| m["class"] == lock.as_str() && tops.iter().any(|top| m["stack"][0] == top.as_str()))
        .unwrap_or_else(|| panic!("no contention in {method}(): {report:#}"))
        .clone();
    assert!(site["contended_count"].as_i64().unwrap() > 0, "{site:#}");
    assert!(jvm.exit_status().is_none(), "the debuggee must keep running");
    site
}

/// The contending stack is the virtual thread's own: its frames down to its continuation's
/// entry, none of the carrier's.
#[test]
fn monitor_contention_in_a_virtual_thread_has_its_own_stack() {
    let (grab, feature) = virtual_contention_in_grab();
    let stack: Vec<&str> = grab["stack"].as_array().unwrap().iter().map(|f| f.as_str().unwrap()).collect();
    if feature >= 21 {
        assert!(stack.last().unwrap().starts_with("jdk.internal.vm.Continuation.enter("), "{stack:?}");
        assert!(!stack.iter().any(|f| f.contains("ForkJoin")), "{stack:?}");
    } else {
        eprintln!("NOTE: the test JDK is {feature}, without virtual threads: both are platform threads");
        assert!(stack.last().unwrap().starts_with("java.lang.Thread.run("), "{stack:?}");
    }
}

/// The contended monitor's owner is named: the virtual thread holding it (mounted, busy in
/// `hold()`). JDK 23+ JVMTI names only platform owners in `GetObjectMonitorUsage`; the agent then
/// looks among the mounted virtual threads (spec-notes/profiler.md).
#[test]
fn monitor_contention_between_virtual_threads_names_the_owner() {
    let (grab, _) = virtual_contention_in_grab();
    assert!(grab["owners"].as_array().unwrap().iter().any(|o| o["name"] == "vt-holder"), "{grab:#}");
}

/// The owner of a contended monitor is named even while it holds the monitor unmounted
/// (VirtualUnmountedOwner: virtual "vu-owner" sleeps inside `synchronized`, which on JDK 24+
/// unmounts it, while platform "pt-contender" blocks on the monitor). Neither
/// `GetObjectMonitorUsage` (JDK 23+ names platform owners only) nor the look among mounted
/// virtual threads finds it; the profiler thread's look at every alive virtual thread does, and
/// the owner's stack is the one it had at that look: asleep in hold(), down to its continuation's
/// entry. On JDK 17 the owner is a platform thread, named by `GetObjectMonitorUsage` at the
/// contention, its stack down to `Thread.run`.
#[test]
fn monitor_contention_names_an_owner_that_holds_it_unmounted() {
    let feature = test_rig::jdk_feature_version().expect("the test JDK's version");
    let site = &contention_site("VirtualUnmountedOwner", "contend", "vu-contend", "3s", &[]);
    let stack = |o: &Value| -> Vec<String> {
        o["stack"].as_array().unwrap().iter().map(|f| f.as_str().unwrap().to_owned()).collect()
    };
    // The contender is a platform thread.
    assert!(stack(site).last().unwrap().starts_with("java.lang.Thread.run("), "{site:#}");
    // Owners named while asleep in hold(), holding the lock.
    let asleep: Vec<Vec<String>> = site["owners"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["name"] == "vu-owner")
        .map(stack)
        .filter(|s| s.iter().any(|f| f.starts_with("VirtualUnmountedOwner.hold(")))
        .filter(|s| s.iter().any(|f| f.starts_with("java.lang.Thread.sleep(")))
        .collect();
    let named: Vec<(&str, i64)> = site["owners"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| (o["name"].as_str().unwrap(), o["times"].as_i64().unwrap()))
        .collect();
    eprintln!("{} contentions in contend(), owners (name, times): {named:?}", site["contended_count"]);
    assert!(!asleep.is_empty(), "no owner named asleep in hold(): {site:#}");
    if feature >= 21 {
        // A virtual thread's stack: down to its continuation's entry, no carrier frames.
        for s in &asleep {
            assert!(s.last().unwrap().starts_with("jdk.internal.vm.Continuation.enter("), "{s:?}");
            assert!(!s.iter().any(|f| f.contains("ForkJoin")), "{s:?}");
        }
    } else {
        eprintln!("NOTE: the test JDK is {feature}, without virtual threads: the owner is a platform thread");
        for s in &asleep {
            assert!(s.last().unwrap().starts_with("java.lang.Thread.run("), "{s:?}");
        }
    }
}
