//! An ended thread is not kept alive by the agent. A thread that stopped at a suspending event
//! used to stay in our agent's invoke registry under a strong global reference until the next
//! `InvokeMethod`; on JDK 19+ an ended `Thread` still references its `Runnable`, so the debugger
//! found the Runnable and everything it held among `ReferenceType.Instances` (OpenJDK's nsk/jdi
//! stress/serial monitorEvents001/002 failed so on JDK 25, and passed with JDK 25's agent).
//!
//! EndedThreads runs a Job holding a Payload in a platform thread (and, on JDK 21+, a virtual
//! thread) that stops at a suspend-all breakpoint and ends; main collects garbage and stops in
//! done(). No Payload may be left then, with either agent; the JDK's is the reference.

use std::time::Duration;

use jdwp_protocol::SuspendPolicy;
use jdwp_protocol::commands::event::Event;
use jdwp_protocol::commands::{reference_type as rt, thread_reference as tr, virtual_machine as vm};
use test_rig::wire::{both_agents, breakpoint_at_marker, run_to_class_prepare};

const TIMEOUT: Duration = Duration::from_secs(60);
const CLASS: &str = "EndedThreads";
const FILE: &str = "EndedThreads.java";

/// The names of the threads that stopped in work(), and the Payloads alive in done().
fn payloads_left(name: &str, agent: test_rig::Agent) -> (Vec<String>, usize) {
    let (jvm, mut s, class, _) = run_to_class_prepare(agent, CLASS, TIMEOUT);
    let work = breakpoint_at_marker(&mut s, class, "work", FILE, "@ended-work", SuspendPolicy::All);
    let done = breakpoint_at_marker(&mut s, class, "done", FILE, "@ended-done", SuspendPolicy::All);
    s.send(&vm::Resume {}).unwrap();
    let mut workers = Vec::new();
    loop {
        let set = s.next_composite();
        match set.events.as_slice() {
            [Event::Breakpoint { request_id, thread, .. }] if *request_id == work => {
                workers.push(s.send(&tr::Name { thread: *thread }).unwrap().thread_name);
                s.send(&vm::Resume {}).unwrap();
            }
            [Event::Breakpoint { request_id, .. }] if *request_id == done => break,
            other => panic!("{name}: unexpected {other:?}"),
        }
    }
    let payload = s.send(&vm::ClassesBySignature { signature: "LEndedThreads$Payload;".into() }).unwrap().classes;
    assert_eq!(payload.len(), 1, "{name}: {payload:?}");
    let instances = s.send(&rt::Instances { ref_type: payload[0].type_id, max_instances: 0 }).unwrap().instances;
    s.send(&vm::Dispose {}).unwrap();
    s.close();
    jvm.wait_for_exit(TIMEOUT).expect("EndedThreads ends once the debugger leaves");
    (workers, instances.len())
}

#[test]
fn a_thread_that_stopped_at_an_event_and_ended_is_not_kept_alive() {
    let feature = test_rig::jdk_feature_version().expect("the test JDK's version");
    let expected_workers: &[&str] =
        if feature >= 21 { &["ended-platform", "ended-virtual"] } else { &["ended-platform"] };
    for (name, agent) in both_agents() {
        let (workers, left) = payloads_left(name, agent);
        assert_eq!(workers, expected_workers, "{name}");
        assert_eq!(left, 0, "{name}: Payloads alive after their threads ended and the program collected garbage");
    }
}
