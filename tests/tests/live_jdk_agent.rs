//! The first live conversation: the protocol crate and the socket transport, talking to the JDK's
//! own agent in a real JVM (`server=y,suspend=y`), packet by packet.

use std::time::Duration;

use jdwp_protocol::commands::event::{Composite, Event};
use jdwp_protocol::commands::event_request::{self as er, Modifier};
use jdwp_protocol::commands::{method, reference_type as rt, thread_reference as tr, virtual_machine as vm};
use jdwp_protocol::{EventKind, SuspendPolicy, TypeTag, codec};
use test_rig::Debuggee;
use test_rig::wire::RawSession;

const TIMEOUT: Duration = Duration::from_secs(60);

fn next_composite(session: &mut RawSession) -> Composite {
    let packet = session.next_event().expect("an event from the VM");
    codec::decode_body(&packet.body, session.id_sizes()).expect("a well-formed composite event")
}

#[test]
fn first_live_conversation_with_the_jdk_agent() {
    let jvm = Debuggee::builder("Demo").spawn().expect("Demo starts under the JDK agent");
    let mut s = RawSession::attach(&jvm.address().to_string(), TIMEOUT).expect("attach");

    // suspend=y: the agent announces VM start before anything runs.
    let start = next_composite(&mut s);
    assert!(matches!(start.events.as_slice(), [Event::VmStart { .. }]), "{start:?}");

    let version = s.send(&vm::Version {}).unwrap();
    assert_eq!(version.jdwp_major, test_rig::jdk_feature_version().unwrap() as i32, "{version:?}");
    assert!(version.vm_name.contains("HotSpot") || version.vm_name.contains("OpenJDK"), "{version:?}");

    let sizes = s.id_sizes();
    assert_eq!(sizes.object_id, 8, "HotSpot on x86_64 uses 8-byte object IDs: {sizes:?}");
    assert!(sizes.validate().is_ok());

    let classes = s.send(&vm::AllClassesWithGeneric {}).unwrap().classes;
    assert!(classes.iter().any(|c| c.signature == "Ljava/lang/Object;" && c.ref_type_tag == TypeTag::Class));
    assert!(classes.iter().any(|c| c.signature == "Ljava/lang/Runnable;" && c.ref_type_tag == TypeTag::Interface));

    let threads = s.send(&vm::AllThreads {}).unwrap().threads;
    let names: Vec<String> = threads.iter().map(|&thread| s.send(&tr::Name { thread }).unwrap().thread_name).collect();
    assert!(names.iter().any(|n| n == "main"), "{names:?}");

    // Demo is not loaded yet: ask to hear when it is prepared, then let the VM run up to that.
    let set = er::Set {
        event_kind: EventKind::ClassPrepare,
        suspend_policy: SuspendPolicy::All,
        modifiers: vec![Modifier::ClassMatch { class_pattern: "Demo".into() }],
    };
    let request_id = s.send(&set).unwrap().request_id;
    s.send(&vm::Resume {}).unwrap();
    let prepared = next_composite(&mut s);
    assert_eq!(prepared.suspend_policy, SuspendPolicy::All);
    let Some(Event::ClassPrepare { request_id: got, signature, ref_type_tag, type_id: prepared_id, .. }) =
        prepared.events.first().cloned()
    else {
        panic!("expected a class prepare event, got {prepared:?}")
    };
    assert_eq!((got, signature.as_str(), ref_type_tag), (request_id, "LDemo;", TypeTag::Class));

    let found = s.send(&vm::ClassesBySignature { signature: "LDemo;".into() }).unwrap().classes;
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].type_id, prepared_id);
    let demo = found[0].type_id;

    let methods = s.send(&rt::Methods { ref_type: demo }).unwrap().declared;
    let tick = methods.iter().find(|m| m.name == "tick").expect("Demo.tick");
    assert_eq!(tick.signature, "(I)I");
    assert!(methods.iter().any(|m| m.name == "<init>"));

    let table = s.send(&method::LineTable { ref_type: demo, method_id: tick.method_id }).unwrap();
    let lines: Vec<i32> = table.lines.iter().map(|l| l.line_number).collect();
    let first = test_rig::fixture_line("Demo.java", "@tick-first").unwrap() as i32;
    let ret = test_rig::fixture_line("Demo.java", "@tick-return").unwrap() as i32;
    assert!(lines.contains(&first) && lines.contains(&ret), "line table {lines:?} lacks {first} or {ret}");
    assert!(table.start >= 0 && table.end > table.start, "{table:?}");

    s.send(&er::Clear { event_kind: EventKind::ClassPrepare, request_id }).unwrap();
    s.send(&vm::Resume {}).unwrap();
    s.send(&vm::Dispose {}).unwrap();
    s.close();

    let status = jvm.wait_for_exit(TIMEOUT).expect("Demo exits after the debugger leaves");
    assert!(status.success(), "exit status {status:?}\n{}", jvm.output_text());
    assert!(jvm.stdout_text().contains("Demo done"), "{}", jvm.output_text());
}

#[test]
fn an_unknown_command_gets_an_error_reply_not_a_hang() {
    let jvm = Debuggee::builder("Hello").spawn().unwrap();
    let mut s = RawSession::attach(&jvm.address().to_string(), TIMEOUT).unwrap();
    let reply = s.send_raw(jdwp_transports::Packet::command(0, 1, 99, vec![])).unwrap();
    assert_eq!(reply.kind, jdwp_transports::PacketKind::Reply { error: jdwp_protocol::ErrorCode::NOT_IMPLEMENTED });
    s.send(&vm::Dispose {}).unwrap();
}
