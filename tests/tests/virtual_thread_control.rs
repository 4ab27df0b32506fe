//! Thread control of a virtual thread on the wire (issue #18), against JDK 25's agent (the
//! reference) and ours, with the same observations: a breakpoint in a virtual thread with
//! suspend policy event-thread, then the virtual thread parked (unmounted) under a suspend-all
//! breakpoint of `main`, suspended and resumed alone and VM-wide. Needs a JDK 21+ test JDK
//! (`JDBG_TEST_JDK`, e.g. Temurin 25); on an older one it says so loudly and skips.

use std::time::Duration;

use jdwp_protocol::commands::event::Event;
use jdwp_protocol::commands::event_request::{self as er, Modifier};
use jdwp_protocol::commands::stack_frame::{self as sf, SlotRequest};
use jdwp_protocol::commands::{
    reference_type as rt, thread_group_reference as tg, thread_reference as tr, virtual_machine as vm,
};
use jdwp_protocol::{ErrorCode, EventKind, SuspendPolicy, Tag, ThreadId, Value};
use test_rig::wire::{RawSession, WireError, both_agents, breakpoint_at_marker};
use test_rig::{Agent, Debuggee};

const TIMEOUT: Duration = Duration::from_secs(60);
const CLASS: &str = "VirtualControl";

fn code<T>(r: Result<T, WireError>) -> Result<T, ErrorCode> {
    r.map_err(|e| match e {
        WireError::Jdwp { code, .. } => code,
        other => panic!("{other}"),
    })
}

/// What a debugger sees of a thread: (suspend count, suspend status, thread status), or the error.
fn seen(s: &mut RawSession, thread: ThreadId) -> Result<(i32, i32, i32), ErrorCode> {
    let count = code(s.send(&tr::SuspendCount { thread }))?.suspend_count;
    let status = code(s.send(&tr::Status { thread }))?;
    Ok((count, status.suspend_status, status.thread_status as i32))
}

/// The names of a thread's frames' methods (or the error).
fn frame_methods(s: &mut RawSession, thread: ThreadId) -> Result<Vec<String>, ErrorCode> {
    let frames = code(s.send(&tr::Frames { thread, start_frame: 0, length: -1 }))?.frames;
    let mut names = Vec::new();
    for f in frames {
        let class = f.location.class_id;
        let methods = code(s.send(&rt::Methods { ref_type: class.into() }))?.declared;
        names.push(methods.into_iter().find(|m| m.method_id == f.location.method_id).map_or("?".into(), |m| m.name));
    }
    Ok(names)
}

/// Sets a breakpoint at the marked line of `method_name`, resumes the VM and returns the event's
/// thread and request.
fn run_to(
    s: &mut RawSession,
    class: jdwp_protocol::ReferenceTypeId,
    method_name: &str,
    marker: &str,
    policy: SuspendPolicy,
) -> (ThreadId, i32) {
    let req = breakpoint_at_marker(s, class, method_name, "VirtualControl.java", marker, policy);
    s.send(&vm::Resume {}).unwrap();
    let set = s.next_composite();
    let Some(&Event::Breakpoint { request_id, thread, .. }) = set.events.first() else {
        panic!("expected the breakpoint at {marker}, got {set:?}")
    };
    assert_eq!(request_id, req);
    s.send(&er::Clear { event_kind: EventKind::Breakpoint, request_id }).unwrap();
    (thread, req)
}

/// Everything one agent shows, in order, as (what, answer) lines.
fn observe(agent: Agent) -> Vec<(String, String)> {
    let jvm = Debuggee::builder(CLASS).virtual_main(false).agent(agent).spawn().expect("the debuggee starts");
    let mut s = RawSession::attach(&jvm.address().to_string(), TIMEOUT).expect("attach");
    assert!(matches!(s.next_composite().events.as_slice(), [Event::VmStart { .. }]));
    let prep = s
        .send(&er::Set {
            event_kind: EventKind::ClassPrepare,
            suspend_policy: SuspendPolicy::All,
            modifiers: vec![Modifier::ClassMatch { class_pattern: CLASS.into() }],
        })
        .unwrap();
    s.send(&vm::Resume {}).unwrap();
    let prepared = s.next_composite();
    let Some(&Event::ClassPrepare { type_id: class, .. }) = prepared.events.first() else { panic!("{prepared:?}") };
    s.send(&er::Clear { event_kind: EventKind::ClassPrepare, request_id: prep.request_id }).unwrap();

    let mut out: Vec<(String, String)> = Vec::new();
    let mut note = |what: &str, answer: String| out.push((what.to_string(), answer));

    // 1. A breakpoint in the virtual thread, suspending only it.
    let (vt, _) = run_to(&mut s, class, "work", "@vt-work", SuspendPolicy::EventThread);
    note("is virtual", format!("{:?}", code(s.send(&tr::IsVirtual { thread: vt })).map(|r| r.is_virtual)));
    note("name", format!("{:?}", code(s.send(&tr::Name { thread: vt })).map(|r| r.thread_name)));
    let group = s.send(&tr::ThreadGroup { thread: vt }).unwrap().group;
    note("group", format!("{:?}", code(s.send(&tg::Name { group })).map(|r| r.group_name)));
    note("at breakpoint: seen", format!("{:?}", seen(&mut s, vt)));
    let methods = frame_methods(&mut s, vt);
    note(
        "at breakpoint: top frames",
        format!("{:?}", methods.as_ref().map(|m| m.iter().take(2).cloned().collect::<Vec<_>>())),
    );
    let top = s.send(&tr::Frames { thread: vt, start_frame: 0, length: 1 }).unwrap().frames[0].frame_id;
    let n = code(s.send(&sf::GetValues {
        thread: vt,
        frame: top,
        slots: vec![SlotRequest { slot: 0, sig_byte: Tag::Int }],
    }));
    note("at breakpoint: n", format!("{:?}", n.map(|r| r.values)));
    note(
        "at breakpoint: owned monitors",
        format!("{:?}", code(s.send(&tr::OwnedMonitors { thread: vt })).map(|r| r.owned.len())),
    );
    note(
        "at breakpoint: contended monitor",
        format!("{:?}", code(s.send(&tr::CurrentContendedMonitor { thread: vt })).map(|r| r.monitor.id.0 == 0)),
    );

    let set = code(s.send(&sf::SetValues {
        thread: vt,
        frame: top,
        slot_values: vec![sf::SlotValue { slot: 0, slot_value: Value::Int(5) }],
    }));
    note("at breakpoint: set n", format!("{:?}", set.map(drop)));
    let n = code(s.send(&sf::GetValues {
        thread: vt,
        frame: top,
        slots: vec![SlotRequest { slot: 0, sig_byte: Tag::Int }],
    }));
    note("at breakpoint: n after set", format!("{:?}", n.map(|r| r.values)));
    let work =
        s.send(&rt::Methods { ref_type: class }).unwrap().declared.into_iter().find(|m| m.name == "work").unwrap();
    let invoked = code(s.send(&jdwp_protocol::commands::class_type::InvokeMethod {
        clazz: class.into(),
        thread: vt,
        method_id: work.method_id,
        arguments: vec![Value::Int(0)],
        options: 0,
    }));
    note("at breakpoint: invoke work(0)", format!("{:?}", invoked.map(|r| (r.return_value, r.exception.id.0 == 0))));
    note("after invoke: seen", format!("{:?}", seen(&mut s, vt)));
    let invoked = code(s.send(&jdwp_protocol::commands::class_type::InvokeMethod {
        clazz: class.into(),
        thread: vt,
        method_id: work.method_id,
        arguments: vec![Value::Int(0)],
        options: 1, // INVOKE_SINGLE_THREADED
    }));
    note("single-threaded invoke work(0)", format!("{:?}", invoked.map(|r| (r.return_value, r.exception.id.0 == 0))));
    note("after single-threaded invoke: seen", format!("{:?}", seen(&mut s, vt)));
    note(
        "at breakpoint: monitors with depths",
        format!("{:?}", code(s.send(&tr::OwnedMonitorsStackDepthInfo { thread: vt })).map(|r| r.owned.len())),
    );
    // The spec lets a VM support this for a virtual thread only at an event: JDK 25's does.
    note(
        "at breakpoint: force early return",
        format!("{:?}", code(s.send(&tr::ForceEarlyReturn { thread: vt, value: Value::Void })).map(drop)),
    );

    // 2. main stops with suspend-all while the virtual thread is parked (unmounted).
    let (main, _) = run_to(&mut s, class, "main", "@main-parked", SuspendPolicy::All);
    note("main: is virtual", format!("{:?}", code(s.send(&tr::IsVirtual { thread: main })).map(|r| r.is_virtual)));
    // (The VM resume before it ran vt to its park.)
    note("parked, after suspend-all: seen", format!("{:?}", seen(&mut s, vt)));
    let methods = frame_methods(&mut s, vt);
    note(
        "parked: frames include the lambda",
        format!("{:?}", methods.map(|m| m.iter().any(|n| n.starts_with("lambda$main")))),
    );
    note(
        "parked: owned monitors",
        format!("{:?}", code(s.send(&tr::OwnedMonitors { thread: vt })).map(|r| r.owned.len())),
    );
    let top = s.send(&tr::Frames { thread: vt, start_frame: 0, length: 1 }).unwrap().frames[0].frame_id;
    note(
        "parked: force early return",
        format!("{:?}", code(s.send(&tr::ForceEarlyReturn { thread: vt, value: Value::Void })).map(drop)),
    );
    note("parked: pop frames", format!("{:?}", code(s.send(&sf::PopFrames { thread: vt, frame: top })).map(drop)));
    let field = s.send(&rt::Fields { ref_type: class }).unwrap().declared.into_iter().find(|f| f.name == "stopper");
    let stopper =
        match s.send(&rt::GetValues { ref_type: class, fields: vec![field.unwrap().field_id] }).unwrap().values[0] {
            Value::Object(_, id) => jdwp_protocol::ObjectId(id.0),
            ref other => panic!("{other:?}"),
        };
    note("parked: stop", format!("{:?}", code(s.send(&tr::Stop { thread: vt, throwable: stopper })).map(drop)));
    note(
        "parked: contended monitor",
        format!("{:?}", code(s.send(&tr::CurrentContendedMonitor { thread: vt })).map(|r| r.monitor.id.0 == 0)),
    );
    s.send(&tr::Resume { thread: vt }).unwrap();
    note("parked, resumed alone: seen", format!("{:?}", seen(&mut s, vt)));
    note("parked, resumed alone: frames", format!("{:?}", code(s.send(&tr::FrameCount { thread: vt })).map(|_| ())));
    note(
        "not suspended: force early return",
        format!("{:?}", code(s.send(&tr::ForceEarlyReturn { thread: vt, value: Value::Void })).map(drop)),
    );
    note("not suspended: stop", format!("{:?}", code(s.send(&tr::Stop { thread: vt, throwable: stopper })).map(drop)));
    note("not suspended: owned monitors", format!("{:?}", code(s.send(&tr::OwnedMonitors { thread: vt })).map(drop)));
    note(
        "not suspended: contended monitor",
        format!("{:?}", code(s.send(&tr::CurrentContendedMonitor { thread: vt })).map(drop)),
    );
    s.send(&tr::Suspend { thread: vt }).unwrap();
    note("parked, suspended alone: seen", format!("{:?}", seen(&mut s, vt)));
    let methods = frame_methods(&mut s, vt);
    note(
        "suspended alone: frames include the lambda",
        format!("{:?}", methods.map(|m| m.iter().any(|n| n.starts_with("lambda$main")))),
    );
    s.send(&vm::Suspend {}).unwrap();
    note("and VM suspended: seen", format!("{:?}", seen(&mut s, vt)));
    note("and VM suspended: main", format!("{:?}", seen(&mut s, main)));
    s.send(&vm::Resume {}).unwrap();
    note("VM resumed once: seen", format!("{:?}", seen(&mut s, vt)));
    s.send(&tr::Resume { thread: vt }).unwrap();
    note("resumed alone again: seen", format!("{:?}", seen(&mut s, vt)));
    note("main still: seen", format!("{:?}", seen(&mut s, main)));

    note("not suspended: interrupt", format!("{:?}", code(s.send(&tr::Interrupt { thread: vt })).map(drop)));

    // 3. Let it all run to the end.
    s.send(&vm::Resume {}).unwrap();
    let done = jvm.wait_for_line("VirtualControl done", TIMEOUT);
    note("program", format!("{:?}", done.map(|l| l.trim().to_string())));
    let _ = s.send(&vm::Dispose {});
    s.close();
    assert!(jvm.wait_for_exit(TIMEOUT).is_some_and(|st| st.success()), "{}", jvm.output_text());
    out
}

#[test]
fn a_virtual_thread_is_suspended_resumed_and_counted_like_the_jdk_agent_does() {
    if !test_rig::test_jdk_has_virtual_threads() {
        return;
    }
    let mut results = Vec::new();
    for (name, agent) in both_agents() {
        let seen = observe(agent);
        for (what, answer) in &seen {
            eprintln!("{name}: {what}: {answer}");
        }
        results.push(seen);
    }
    let (jdk, ours) = (&results[0], &results[1]);
    // The reference's own answers, which the test relies on.
    let at = |what: &str| jdk.iter().find(|(w, _)| w == what).map(|(_, a)| a.as_str()).unwrap();
    assert_eq!(at("is virtual"), "Ok(true)");
    assert_eq!(at("at breakpoint: n"), "Ok([Int(1)])");
    assert!(at("program").starts_with("Ok(\"VirtualControl done"), "{}", at("program"));
    for (j, o) in jdk.iter().zip(ours) {
        assert_eq!(o, j, "ours against JDK's agent");
    }
    assert_eq!(jdk.len(), ours.len());
}
