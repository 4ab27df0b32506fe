//! Which objects the first IDs go to: the JDK's agent numbers objects as they first reach the
//! debugger, so after the VM start event (the main thread) the IDs go to what the debugger asks
//! for first. jdb's users see these numbers: a thread's ID in `threads`, `thread <id>`,
//! `trace methods <id>`.
//!
//! OpenJDK's JdbMethodExitTest relies on it by accident: it passes the main thread's Java thread
//! ID (`Thread.getId()`) as jdb's thread ID. On JDK 17 both are 1. On JDK 25 the Java ID is 3,
//! which through the JDK's agent names a class (jdb asked for every class first), so jdb says
//! `"3" is not a valid thread id.` and the earlier, unfiltered `trace` stays on. Through ours ID 3
//! named the Finalizer thread: every suspend-all (the VM start event's included) gave an ID to
//! every live thread, to count its suspensions, so the first IDs after main went to the threads
//! alive at startup, and jdb traced the Finalizer's method exits instead. Now a suspension gives
//! a thread the debugger has not heard of an internal ID only (see `Agent::live_thread_ids`).
//!
//! The check runs with each agent on the test JDK: attach to a VM suspended at startup, ask for
//! every loaded class, then for every thread; every thread but main must have an ID above every
//! class's, and each must be counted as suspended once (resumed alone, then suspended again).

use std::time::Duration;

use jdwp_protocol::ThreadId;
use jdwp_protocol::commands::event::Event;
use jdwp_protocol::commands::{thread_reference as tr, virtual_machine as vm};
use test_rig::wire::RawSession;
use test_rig::{Agent, Debuggee};

const TIMEOUT: Duration = Duration::from_secs(60);

fn threads_numbered_after_the_classes_asked_for_first(agent: Agent) {
    let jvm = Debuggee::builder("Hello").agent(agent.clone()).spawn().expect("the debuggee starts");
    let mut s = RawSession::attach(&jvm.address().to_string(), TIMEOUT).expect("attach");
    let start = s.next_composite();
    let [Event::VmStart { thread: main, .. }] = start.events.as_slice() else {
        panic!("{agent:?}: expected the VM start event, got {start:?}")
    };
    let main = *main;
    let classes = s.send(&vm::AllClasses {}).unwrap().classes;
    assert!(classes.len() > 100, "{agent:?}: {} classes", classes.len());
    let highest_class = classes.iter().map(|c| c.type_id.0).max().unwrap();
    let threads = s.send(&vm::AllThreads {}).unwrap().threads;
    let others: Vec<u64> = threads.iter().filter(|&&t| t != main).map(|t| t.0).collect();
    assert!(!others.is_empty(), "{agent:?}: main is the only thread");
    assert!(
        others.iter().all(|&t| t > highest_class),
        "{agent:?}: thread IDs {others:?} (main {}), the classes' up to {highest_class}",
        main.0
    );
    // The threads the VM start event suspended before the debugger heard of them are counted
    // under their IDs all the same: one suspension each, and the VM's resume takes it off.
    let counts = |s: &mut RawSession| -> Vec<i32> {
        threads.iter().map(|&thread| s.send(&tr::SuspendCount { thread }).unwrap().suspend_count).collect()
    };
    assert_eq!(counts(&mut s), vec![1; threads.len()], "{agent:?}: suspend counts of {threads:?}");
    // Resumed alone, and suspended again: the count follows (the VM stays suspended meanwhile,
    // so nothing ends under the test's feet).
    let other = ThreadId(others[0]);
    s.send(&tr::Resume { thread: other }).unwrap();
    assert_eq!(s.send(&tr::SuspendCount { thread: other }).unwrap().suspend_count, 0, "{agent:?}");
    s.send(&tr::Suspend { thread: other }).unwrap();
    assert_eq!(counts(&mut s), vec![1; threads.len()], "{agent:?}: suspend counts of {threads:?}");
    s.send(&vm::Dispose {}).unwrap();
    s.close();
    jvm.wait_for_exit(TIMEOUT).expect("Hello ends once the debugger leaves");
}

#[test]
fn jdk_agent_numbers_threads_after_the_classes_asked_for_first() {
    threads_numbered_after_the_classes_asked_for_first(Agent::jdk_default());
}

#[test]
fn our_agent_numbers_threads_after_the_classes_asked_for_first() {
    let ours = test_rig::our_agent_library().expect("our agent");
    threads_numbered_after_the_classes_asked_for_first(Agent::path(ours, test_rig::DEFAULT_JDK_AGENT_OPTIONS));
}
