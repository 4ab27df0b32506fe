//! jdi-rs against an agent that predates JDWP 1.5 (no generic-signature commands, no
//! `CapabilitiesNew`): a scripted fake VM on a real socket answers `NOT_IMPLEMENTED` to the newer
//! forms, and the client falls back to the older ones.

use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use jdwp_protocol::commands::{method as mc, reference_type as rt, virtual_machine as vm};
use jdwp_protocol::{Command, ErrorCode, FieldId, IdSizes, MethodId, ObjectId, ReferenceTypeId, TypeTag, codec};
use jdwp_transports::{Packet, PacketKind};

fn reply<C: Command>(body: &C::Reply) -> Result<Vec<u8>, ErrorCode> {
    Ok(codec::encode_body(body, IdSizes::default()))
}

/// Answers like an old VM with one class `Old { static int count; void run(int x) }`.
fn answer(set: u8, cmd: u8, body: &[u8], disposed: &Mutex<Vec<vm::DisposeRequest>>) -> Result<Vec<u8>, ErrorCode> {
    let new_forms = [(1, 20), (1, 17), (2, 14), (2, 15), (6, 5)];
    if new_forms.contains(&(set, cmd)) {
        return Err(ErrorCode::NOT_IMPLEMENTED);
    }
    match (set, cmd) {
        (1, 7) => reply::<vm::IdSizesCmd>(&vm::IdSizesReply {
            field_id_size: 8,
            method_id_size: 8,
            object_id_size: 8,
            reference_type_id_size: 8,
            frame_id_size: 8,
        }),
        (1, 3) => reply::<vm::AllClasses>(&vm::AllClassesReply {
            classes: vec![vm::ClassInfo {
                ref_type_tag: TypeTag::Class,
                type_id: ReferenceTypeId(5),
                signature: "LOld;".into(),
                status: 7,
            }],
        }),
        (1, 12) => reply::<vm::Capabilities>(&vm::CapabilitiesReply {
            can_watch_field_modification: true,
            can_watch_field_access: false,
            can_get_bytecodes: true,
            can_get_synthetic_attribute: false,
            can_get_owned_monitor_info: false,
            can_get_current_contended_monitor: false,
            can_get_monitor_info: true,
        }),
        (1, 14) => {
            let cmd: vm::DisposeObjects =
                codec::decode_body(body, IdSizes::default()).map_err(|_| ErrorCode::ILLEGAL_ARGUMENT)?;
            disposed.lock().unwrap().extend(cmd.requests);
            reply::<vm::DisposeObjects>(&vm::DisposeObjectsReply {})
        }
        (1, 6) => reply::<vm::Dispose>(&vm::DisposeReply {}),
        (2, 4) => reply::<rt::Fields>(&rt::FieldsReply {
            declared: vec![rt::FieldInfo {
                field_id: FieldId(3),
                name: "count".into(),
                signature: "I".into(),
                mod_bits: 0x8,
            }],
        }),
        (2, 5) => reply::<rt::Methods>(&rt::MethodsReply {
            declared: vec![rt::MethodInfo {
                method_id: MethodId(9),
                name: "run".into(),
                signature: "(I)V".into(),
                mod_bits: 0x1,
            }],
        }),
        (6, 2) => reply::<mc::VariableTable>(&mc::VariableTableReply {
            arg_cnt: 2,
            slots: vec![
                mc::VariableSlot { code_index: 0, name: "this".into(), signature: "LOld;".into(), length: 10, slot: 0 },
                mc::VariableSlot { code_index: 0, name: "x".into(), signature: "I".into(), length: 10, slot: 1 },
            ],
        }),
        _ => Err(ErrorCode::NOT_IMPLEMENTED),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_client_falls_back_to_the_pre_1_5_commands() {
    let listener = jdwp_transports::listen("127.0.0.1:0").unwrap();
    let port = listener.local_addr().port();
    let disposed = Arc::new(Mutex::new(Vec::new()));
    let fake_vm = {
        let disposed = disposed.clone();
        thread::spawn(move || {
            let conn = listener.accept_with_timeout(Some(Duration::from_secs(60))).unwrap();
            let (mut reader, writer) = conn.into_split().unwrap();
            while let Ok(Some(packet)) = reader.read_packet() {
                let PacketKind::Command { set, cmd } = packet.kind else { continue };
                let (error, body) = match answer(set, cmd, &packet.body, &disposed) {
                    Ok(body) => (ErrorCode::NONE, body),
                    Err(code) => (code, Vec::new()),
                };
                writer.write_packet(&Packet::reply(packet.id, error, body)).unwrap();
                if (set, cmd) == (1, 6) {
                    break;
                }
            }
        })
    };

    let vm = jdi::attach(&format!("127.0.0.1:{port}"), Some(Duration::from_secs(60))).await.unwrap();
    let classes = vm.all_classes().await.unwrap();
    assert_eq!(classes.iter().map(|c| c.name()).collect::<Vec<_>>(), ["Old"]);
    let old = &classes[0];

    let fields = old.fields().await.unwrap();
    assert_eq!((fields[0].name.as_str(), fields[0].signature.as_str()), ("count", "I"));
    assert!(fields[0].is_static());

    let methods = old.methods().await.unwrap();
    assert_eq!((methods[0].name(), methods[0].signature()), ("run", "(I)V"));
    let vars = methods[0].variables().await.unwrap();
    assert_eq!(vars.iter().map(|v| v.name.as_str()).collect::<Vec<_>>(), ["x"], "`this` is not a variable");
    assert!(vars[0].is_argument);

    let caps = vm.capabilities().await.unwrap();
    assert!(caps.can_get_bytecodes && caps.can_watch_field_modification && caps.can_get_monitor_info);
    assert!(!caps.can_watch_field_access && !caps.can_redefine_classes, "the newer flags are all off");

    vm.dispose_objects(&[(ObjectId(77), 2)]).await.unwrap();
    let got = disposed.lock().unwrap().clone();
    assert_eq!(got.iter().map(|r| (r.object, r.ref_cnt)).collect::<Vec<_>>(), [(ObjectId(77), 2)]);

    vm.dispose().await.unwrap();
    fake_vm.join().unwrap();
}
