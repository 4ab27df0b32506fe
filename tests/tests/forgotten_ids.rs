//! An agent frees what it held for objects that are gone. Every ID the debugger got holds a JNI
//! weak reference in the agent, and each garbage collection goes over every such reference; our
//! agent kept them for the life of the VM, so a program whose debugger had seen a million short
//! threads start (a `ThreadStart` request) kept a million of them. The JDK's agent is the
//! reference.
//!
//! ForgottenIds starts and joins 5,000 platform threads under a `ThreadStart` request (each start
//! reported, so each thread gets an ID), collects garbage and stops at a suspend-all breakpoint,
//! then collects garbage again; that collection's log line counts the JNI weak references alive.
//! The IDs of the ended threads must then answer as collected objects do. Other threads may start
//! meanwhile (the JDK starts `Common-Cleaner` when something first needs it), so the test asks
//! every reported ID and tells the fixture's threads by their names.
//!
//! The same with virtual threads (JDK 21+), whose IDs our agent keeps by `tid` rather than by
//! JVMTI tag: their entries must go too.

use std::path::Path;
use std::time::Duration;

use jdwp_protocol::commands::event::Event;
use jdwp_protocol::commands::event_request as er;
use jdwp_protocol::commands::{object_reference as or, thread_reference as tr, virtual_machine as vm};
use jdwp_protocol::{ErrorCode, EventKind, SuspendPolicy, ThreadId};
use test_rig::wire::{WireError, both_agents, breakpoint_at_marker, run_to_class_prepare_of};

const TIMEOUT: Duration = Duration::from_secs(120);
const CLASS: &str = "ForgottenIds";
const THREADS: usize = 5000;

/// The JNI weak references alive at the last collection the GC log shows.
fn jni_weak_total(log: &Path) -> usize {
    let text = std::fs::read_to_string(log).expect("the GC log");
    let lines: Vec<&str> = text.lines().collect();
    let at = lines.iter().rposition(|l| l.contains(" JNI Weak ")).expect("a JNI Weak line in the GC log");
    let total = lines[at + 1..].iter().find(|l| l.contains(" Total ")).expect("its Total line");
    total.split("Sum:").nth(1).and_then(|r| r.split(',').next()).and_then(|n| n.trim().parse().ok()).expect(total)
}

/// What the reported thread IDs answer at the end.
#[derive(Debug, Default)]
struct Answers {
    /// IDs whose `Name` is `INVALID_OBJECT`.
    gone: usize,
    /// Of those, the ones `IsCollected` calls collected.
    collected: usize,
    /// Names still answered for threads of the fixture (`forgotten-<i>`), all ended.
    ended_but_named: Vec<String>,
    /// Other answers: an error other than `INVALID_OBJECT`.
    other_errors: Vec<ErrorCode>,
}

/// Runs ForgottenIds under `agent`: the JNI weak references alive at the end, and what every
/// reported thread's ID answers to `Name` and `IsCollected` at the end.
fn run(name: &str, agent: test_rig::Agent, virtual_threads: bool) -> (usize, Answers) {
    let log =
        std::env::temp_dir().join(format!("forgotten-ids-{}-{name}-{virtual_threads}.gc.log", std::process::id()));
    let mut debuggee = test_rig::Debuggee::builder(CLASS).agent(agent).arg(THREADS.to_string());
    if virtual_threads {
        debuggee = debuggee.arg("virtual");
    }
    let debuggee =
        debuggee.jvm_option("-XX:+UseG1GC").jvm_option(format!("-Xlog:gc+phases=debug:file={}", log.display()));
    let (jvm, mut s, class, _) = run_to_class_prepare_of(debuggee, CLASS, TIMEOUT);
    let starts = s
        .send(&er::Set { event_kind: EventKind::ThreadStart, suspend_policy: SuspendPolicy::None, modifiers: vec![] })
        .unwrap()
        .request_id;
    let pause =
        breakpoint_at_marker(&mut s, class, "pause", "ForgottenIds.java", "@forgotten-pause", SuspendPolicy::All);
    s.send(&vm::Resume {}).unwrap();
    let mut started: Vec<ThreadId> = Vec::new();
    let mut pauses = 0;
    while pauses < 2 {
        let mut stopped = false;
        for event in s.next_composite().events {
            match event {
                Event::ThreadStart { request_id, thread } if request_id == starts => started.push(thread),
                Event::Breakpoint { request_id, .. } if request_id == pause => stopped = true,
                other => panic!("{name}: unexpected {other:?}"),
            }
        }
        // Only the suspend-all breakpoint stopped anything: the thread starts suspend nothing.
        if stopped {
            pauses += 1;
            if pauses < 2 {
                s.send(&vm::Resume {}).unwrap();
            }
        }
    }
    assert!(started.len() >= THREADS, "{name}: {} thread starts reported", started.len());
    let mut answers = Answers::default();
    for &thread in &started {
        match s.send(&tr::Name { thread }) {
            Ok(reply) if reply.thread_name.starts_with("forgotten-") => answers.ended_but_named.push(reply.thread_name),
            Ok(_) => {}
            Err(WireError::Jdwp { code: ErrorCode::INVALID_OBJECT, .. }) => {
                answers.gone += 1;
                answers.collected +=
                    usize::from(s.send(&or::IsCollected { object: thread.into() }).unwrap().is_collected);
            }
            Err(WireError::Jdwp { code, .. }) => answers.other_errors.push(code),
            Err(other) => panic!("{name}: Name: {other}"),
        }
    }
    let weak = jni_weak_total(&log);
    let _ = std::fs::remove_file(&log);
    s.send(&vm::Dispose {}).unwrap();
    s.close();
    jvm.wait_for_exit(TIMEOUT).expect("ForgottenIds ends once the debugger leaves");
    (weak, answers)
}

#[test]
fn references_of_objects_that_are_gone_are_freed() {
    check(false);
}

#[test]
fn references_of_virtual_threads_that_are_gone_are_freed() {
    if !test_rig::test_jdk_has_virtual_threads() {
        return;
    }
    check(true);
}

fn check(virtual_threads: bool) {
    for (name, agent) in both_agents() {
        let (weak, answers) = run(name, agent, virtual_threads);
        eprintln!(
            "{name} (virtual threads: {virtual_threads}): {weak} JNI weak references alive after {THREADS} threads came and went; {answers:?}"
        );
        assert!(weak < THREADS / 5, "{name}: {weak} JNI weak references alive after {THREADS} threads came and went");
        assert_eq!(answers.ended_but_named, Vec::<String>::new(), "{name}: Name of ended, collected threads");
        assert_eq!(answers.other_errors, Vec::new(), "{name}: Name of reported threads");
        assert!(answers.gone >= THREADS, "{name}: {} of the {THREADS} ended threads answer as collected", answers.gone);
        assert_eq!(answers.collected, answers.gone, "{name}: IsCollected of ended, collected threads");
    }
}
