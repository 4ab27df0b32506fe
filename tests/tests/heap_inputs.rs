//! The heap commands (`VirtualMachine.InstanceCounts`, `ReferenceType.Instances`,
//! `ObjectReference.ReferringObjects`) given bad or extreme input by a debugger: IDs that name
//! nothing, null, an object that is no class, negative and huge limits, a long list of types. Each
//! answer is an error reply or a bounded answer, never a crash, and the program then runs to its
//! end. Each case runs against the JDK's agent and ours, and the answers must agree, except where
//! ours does better (a type asked for twice).

use std::time::Duration;

use jdwp_protocol::commands::{object_reference as or, reference_type as rt, virtual_machine as vm};
use jdwp_protocol::{ErrorCode, ObjectId, ReferenceTypeId, ThreadId};
use test_rig::wire::{RawSession, WireError};
use test_rig::{Agent, Debuggee};

const TIMEOUT: Duration = Duration::from_secs(60);

/// Starts Demo suspended and runs it until `Demo` is prepared (the VM suspended there): the
/// session, Demo's ID and the thread that prepared it.
fn demo_prepared(agent: Agent) -> (Debuggee, RawSession, ReferenceTypeId, ThreadId) {
    test_rig::wire::run_to_class_prepare(agent, "Demo", TIMEOUT)
}

fn error<T: std::fmt::Debug>(r: Result<T, WireError>) -> ErrorCode {
    match r {
        Err(WireError::Jdwp { code, .. }) => code,
        other => panic!("expected an error reply, got {other:?}"),
    }
}

#[test]
fn heap_commands_answer_bad_and_extreme_input_and_the_vm_goes_on() {
    // An ID no agent handed out (ours count up from 1; the JDK's too).
    let unknown = 0x7fff_0000_dead_beef_u64;
    for (name, agent) in test_rig::wire::both_agents() {
        let (jvm, mut s, demo, thread) = demo_prepared(agent);
        let not_a_class = ReferenceTypeId(thread.0);
        let instances = |ref_type, max_instances| rt::Instances { ref_type, max_instances };

        // Instances.
        assert_eq!(error(s.send(&instances(ReferenceTypeId(unknown), 0))), ErrorCode::INVALID_OBJECT, "{name}");
        assert_eq!(error(s.send(&instances(not_a_class, 0))), ErrorCode::INVALID_CLASS, "{name}");
        // Null: the JDK's agent answers INVALID_OBJECT here, ours INVALID_CLASS (the ID lookup
        // shared by every command taking a class, as the JDK's agent answers elsewhere).
        let null = error(s.send(&instances(ReferenceTypeId(0), 0)));
        assert!([ErrorCode::INVALID_OBJECT, ErrorCode::INVALID_CLASS].contains(&null), "{name}: {null:?}");
        assert_eq!(error(s.send(&instances(demo, -1))), ErrorCode::ILLEGAL_ARGUMENT, "{name}");
        assert_eq!(error(s.send(&instances(demo, i32::MIN))), ErrorCode::ILLEGAL_ARGUMENT, "{name}");
        // No Demo object exists: the program runs static methods only.
        assert!(s.send(&instances(demo, i32::MAX)).unwrap().instances.is_empty(), "{name}");
        // The thread's class has the thread among its instances, however large the limit.
        let thread_class = s.send(&or::ReferenceType { object: ObjectId(thread.0) }).unwrap().type_id;
        let threads = s.send(&instances(thread_class, i32::MAX)).unwrap().instances;
        assert!(threads.iter().any(|t| t.id.0 == thread.0), "{name}: {threads:?}");
        assert_eq!(s.send(&instances(thread_class, 1)).unwrap().instances.len(), 1, "{name}");

        // ReferringObjects.
        let referrers = |object, max_referrers| or::ReferringObjects { object, max_referrers };
        assert_eq!(error(s.send(&referrers(ObjectId(unknown), 0))), ErrorCode::INVALID_OBJECT, "{name}");
        assert_eq!(error(s.send(&referrers(ObjectId(0), 0))), ErrorCode::INVALID_OBJECT, "{name}");
        assert_eq!(error(s.send(&referrers(ObjectId(thread.0), -1))), ErrorCode::ILLEGAL_ARGUMENT, "{name}");
        // Demo's class object is referred to (by its loader's list of classes, at least), however
        // large the limit. (Not the thread: from JDK 19 on its group no longer refers to it.)
        let class_object = ObjectId(demo.0);
        assert!(!s.send(&referrers(class_object, i32::MAX)).unwrap().referring_objects.is_empty(), "{name}");
        assert_eq!(s.send(&referrers(class_object, 1)).unwrap().referring_objects.len(), 1, "{name}");

        // InstanceCounts: what is no class now has no instances, as in the JDK's agent.
        let counts = s
            .send(&vm::InstanceCounts {
                ref_types: vec![ReferenceTypeId(unknown), not_a_class, ReferenceTypeId(0), demo, thread_class],
            })
            .unwrap()
            .counts;
        assert_eq!(counts[..4], [0, 0, 0, 0], "{name}");
        assert!(counts[4] >= 1, "{name}: {counts:?}");
        assert!(s.send(&vm::InstanceCounts { ref_types: vec![] }).unwrap().counts.is_empty(), "{name}");
        // A long list: 100,000 types, all bad but one, looked up one at a time.
        let mut many = vec![not_a_class; 99_999];
        many.push(thread_class);
        let counts = s.send(&vm::InstanceCounts { ref_types: many }).unwrap().counts;
        assert_eq!(counts.len(), 100_000, "{name}");
        assert!(counts[..99_999].iter().all(|&c| c == 0) && counts[99_999] >= 1, "{name}");

        s.send(&vm::Resume {}).unwrap();
        s.send(&vm::Dispose {}).unwrap();
        s.close();
        let status = jvm.wait_for_exit(TIMEOUT).expect("Demo exits");
        assert!(status.success(), "{name}: {status:?}\n{}", jvm.output_text());
    }
}
