//! Thread starts and ends of virtual threads on the wire (issue #18), against JDK 25's agent (the
//! reference) and ours: `ThreadStart`/`ThreadDeath` requests with and without
//! `PlatformThreadsOnly`, for three virtual threads and one platform thread. Our agent enables
//! JVMTI's `VirtualThreadStart`/`End` only while such a request could match a virtual thread
//! (unit-tested in `jdwp-agent/src/virtual_threads.rs`); here the events are checked to be the
//! JDK's. Each thread keeps one ID however the debugger meets it: its start, its end, and as an
//! element of the program's array of threads (an object value, which our agent looks up by the
//! thread's `tid`, not by a JVMTI tag). Needs a JDK 21+ test JDK (`JDBG_TEST_JDK`, e.g. Temurin 25); on an older one it says so
//! loudly and skips.

use std::time::Duration;

use jdwp_protocol::commands::event::Event;
use jdwp_protocol::commands::event_request::{self as er, Modifier};
use jdwp_protocol::commands::stack_frame as sf;
use jdwp_protocol::commands::{array_reference as ar, method, thread_reference as tr, virtual_machine as vm};
use jdwp_protocol::{ArrayId, ArrayRegion, EventKind, SuspendPolicy, Tag, ThreadId, Value};
use test_rig::Agent;
use test_rig::wire::{RawSession, both_agents, breakpoint_at_marker, run_to_class_prepare};

const TIMEOUT: Duration = Duration::from_secs(60);
const CLASS: &str = "VirtualStarts";

/// Every thread start and end the agent reports between the `ready` and `done` breakpoints, as
/// sorted lines "<request> <kind> <thread name> virtual=<bool>" (threads run concurrently, so
/// their order is not the program's), for the fixture's threads; other threads (carriers, the
/// JDK's own) are counted by whether they are virtual.
fn observe(agent: Agent) -> Vec<String> {
    let (_jvm, mut s, class, _) = run_to_class_prepare(agent, CLASS, TIMEOUT);
    let ready = breakpoint_at_marker(&mut s, class, "main", "VirtualStarts.java", "@ready", SuspendPolicy::All);
    s.send(&vm::Resume {}).unwrap();
    let set = s.next_composite();
    assert!(matches!(set.events.as_slice(), [Event::Breakpoint { request_id, .. }] if *request_id == ready), "{set:?}");

    let mut names = std::collections::HashMap::new();
    let mut label = |s: &mut RawSession, kind: EventKind, platform_only: bool, name: &str| {
        let modifiers = if platform_only { vec![Modifier::PlatformThreadsOnly {}] } else { vec![] };
        let id =
            s.send(&er::Set { event_kind: kind, suspend_policy: SuspendPolicy::None, modifiers }).unwrap().request_id;
        names.insert(id, name.to_string());
    };
    label(&mut s, EventKind::ThreadStart, false, "starts");
    label(&mut s, EventKind::ThreadStart, true, "platform-starts");
    label(&mut s, EventKind::ThreadDeath, false, "deaths");
    label(&mut s, EventKind::ThreadDeath, true, "platform-deaths");
    let done = breakpoint_at_marker(&mut s, class, "main", "VirtualStarts.java", "@done", SuspendPolicy::All);
    s.send(&vm::Resume {}).unwrap();

    let mut seen = Vec::new();
    let mut others_virtual = 0;
    let mut ids: std::collections::BTreeMap<String, std::collections::BTreeSet<ThreadId>> = Default::default();
    let (main, location) = 'events: loop {
        let set = s.next_composite();
        for event in &set.events {
            let (request_id, thread, kind) = match *event {
                Event::ThreadStart { request_id, thread } => (request_id, thread, "start"),
                Event::ThreadDeath { request_id, thread } => (request_id, thread, "death"),
                Event::Breakpoint { request_id, thread, location } if request_id == done => {
                    break 'events (thread, location);
                }
                ref other => panic!("unexpected {other:?}"),
            };
            let name = s.send(&tr::Name { thread }).unwrap().thread_name;
            let is_virtual = s.send(&tr::IsVirtual { thread }).unwrap().is_virtual;
            if name.starts_with("vs-") || name.starts_with("ps-") {
                ids.entry(name.clone()).or_default().insert(thread);
                seen.push(format!("{} {kind} {name} virtual={is_virtual}", names[&request_id]));
            } else if is_virtual {
                others_virtual += 1;
            }
        }
    };
    seen.sort();
    seen.push(format!("other virtual threads: {others_virtual}"));

    // The same threads as values: main's local `threads`, each element's ID against the IDs its
    // start and end came with (all one, per thread).
    let vars = s.send(&method::VariableTable { ref_type: class, method_id: location.method_id }).unwrap().slots;
    let slot = vars.iter().find(|v| v.name == "threads").expect("main's local threads").slot;
    let frame = s.send(&tr::Frames { thread: main, start_frame: 0, length: 1 }).unwrap().frames[0].frame_id;
    let values = s
        .send(&sf::GetValues { thread: main, frame, slots: vec![sf::SlotRequest { slot, sig_byte: Tag::Array }] })
        .unwrap()
        .values;
    let [Value::Object(_, array)] = values[..] else { panic!("threads: {values:?}") };
    let region = s.send(&ar::GetValues { array_object: ArrayId(array.0), first_index: 0, length: 4 }).unwrap().values;
    let ArrayRegion::Objects { values: elements, .. } = region else { panic!("threads' elements: {region:?}") };
    for element in elements {
        let Value::Object(_, id) = element else { panic!("an element: {element:?}") };
        let thread = ThreadId(id.0);
        let name = s.send(&tr::Name { thread }).unwrap().thread_name;
        let events = ids.get(&name).cloned().unwrap_or_default();
        let same = events.len() == 1 && events.contains(&thread);
        seen.push(format!("{name}: one ID for its start, its end and its value: {same}"));
    }
    s.send(&vm::Resume {}).unwrap();
    seen
}

#[test]
fn thread_starts_and_ends_of_virtual_threads_are_reported_like_the_jdk_agent_does() {
    if !test_rig::test_jdk_has_virtual_threads() {
        return;
    }
    let mut results = Vec::new();
    for (name, agent) in both_agents() {
        let seen = observe(agent);
        for line in &seen {
            eprintln!("{name}: {line}");
        }
        results.push(seen);
    }
    let (jdk, ours) = (&results[0], &results[1]);
    // The reference's own answers: every virtual thread's start and end reported to the
    // unfiltered requests only, the platform thread's to both.
    let mut expected = Vec::new();
    for kind in ["start", "death"] {
        let (all, platform) =
            if kind == "start" { ("starts", "platform-starts") } else { ("deaths", "platform-deaths") };
        for i in 0..3 {
            expected.push(format!("{all} {kind} vs-{i} virtual=true"));
        }
        expected.push(format!("{all} {kind} ps-0 virtual=false"));
        expected.push(format!("{platform} {kind} ps-0 virtual=false"));
    }
    expected.sort();
    expected.push("other virtual threads: 0".into());
    for name in ["vs-0", "vs-1", "vs-2", "ps-0"] {
        expected.push(format!("{name}: one ID for its start, its end and its value: true"));
    }
    assert_eq!(jdk, &expected, "JDK's agent");
    assert_eq!(ours, jdk, "ours against JDK's agent");
}
