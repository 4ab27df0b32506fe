//! The JDWP additions of JDK 19 (`ThreadReference.IsVirtual`, the `PlatformThreadsOnly` modifier)
//! on the wire, against the JDK's agent and ours. On a JDK 19+ test JDK (`JDBG_TEST_JDK`) both
//! agents must answer alike; on JDK 17 the JDK's agent does not know them, and ours answers them
//! anyway (debuggers only send them when `Version` says 19 or more).

use std::time::Duration;

use jdwp_protocol::commands::event_request::{self as er, Modifier};
use jdwp_protocol::commands::{thread_reference as tr, virtual_machine as vm};
use jdwp_protocol::{ErrorCode, EventKind, SuspendPolicy, ThreadId};
use test_rig::wire::{RawSession, WireError, both_agents, run_to_class_prepare};

const TIMEOUT: Duration = Duration::from_secs(60);

fn code<T>(r: Result<T, WireError>) -> Result<T, ErrorCode> {
    r.map_err(|e| match e {
        WireError::Jdwp { code, .. } => code,
        other => panic!("{other}"),
    })
}

fn set(s: &mut RawSession, kind: EventKind) -> Result<i32, ErrorCode> {
    let set = er::Set {
        event_kind: kind,
        suspend_policy: SuspendPolicy::None,
        modifiers: vec![Modifier::PlatformThreadsOnly {}],
    };
    code(s.send(&set)).map(|r| r.request_id)
}

/// What one agent answers: IsVirtual of the main thread, of null, of a class object; the modifier
/// on a thread start, a thread end and a class prepare request.
#[derive(Debug, PartialEq)]
struct Answers {
    main_is_virtual: Result<bool, ErrorCode>,
    null_is_virtual: Result<bool, ErrorCode>,
    non_thread_is_virtual: Result<bool, ErrorCode>,
    on_thread_start: Result<(), ErrorCode>,
    on_thread_end: Result<(), ErrorCode>,
    on_class_prepare: Result<(), ErrorCode>,
}

fn answers(agent: test_rig::Agent) -> (i32, Answers) {
    let (jvm, mut s, class, main) = run_to_class_prepare(agent, "Hello", TIMEOUT);
    let major = s.send(&vm::Version {}).unwrap().jdwp_major;
    let is_virtual = |s: &mut RawSession, thread| code(s.send(&tr::IsVirtual { thread })).map(|r| r.is_virtual);
    let answers = Answers {
        main_is_virtual: is_virtual(&mut s, main),
        null_is_virtual: is_virtual(&mut s, ThreadId(0)),
        non_thread_is_virtual: is_virtual(&mut s, ThreadId(class.0)),
        on_thread_start: set(&mut s, EventKind::ThreadStart).map(drop),
        on_thread_end: set(&mut s, EventKind::ThreadDeath).map(drop),
        on_class_prepare: set(&mut s, EventKind::ClassPrepare).map(drop),
    };
    s.send(&vm::Dispose {}).unwrap();
    s.close();
    assert!(jvm.wait_for_exit(TIMEOUT).is_some_and(|st| st.success()), "{}", jvm.output_text());
    (major, answers)
}

#[test]
fn is_virtual_and_platform_threads_only_answer_like_the_jdk_agent() {
    let mut results = Vec::new();
    for (name, agent) in both_agents() {
        let (major, a) = answers(agent);
        eprintln!("{name} (JDWP {major}): {a:?}");
        results.push((name, major, a));
    }
    let (_, jdk_major, jdk) = &results[0];
    let (_, our_major, ours) = &results[1];
    assert_eq!(jdk_major, our_major, "both report the running VM's version");
    // Ours, on any JDK.
    assert_eq!(ours.main_is_virtual, Ok(false));
    assert_eq!(ours.on_thread_start, Ok(()));
    assert_eq!(ours.on_thread_end, Ok(()));
    assert_eq!(ours.on_class_prepare, Err(ErrorCode::ILLEGAL_ARGUMENT));
    if *jdk_major >= 19 {
        assert_eq!(ours, jdk);
    } else {
        assert_eq!(jdk.main_is_virtual, Err(ErrorCode::NOT_IMPLEMENTED), "JDK 17's agent has no IsVirtual");
        assert_eq!(ours.null_is_virtual, Ok(false), "as JDK 25's agent answers");
        assert_eq!(ours.non_thread_is_virtual, Err(ErrorCode::INVALID_THREAD));
    }
}
