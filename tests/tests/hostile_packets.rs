//! Packets that killed the JVM through our agent (issue 22), as regression tests against live JVMs.
//!
//! A structure-aware fuzzer sent them; each one names a live object of the wrong kind where the
//! spec types a parameter (a `String` or a `Thread` as a thread group, the array type `[I` as the
//! declaring type of another class's field). Here the exact packets go out again, header and all,
//! with their IDs replaced by live IDs of the same wrong kinds obtained in the session. Each must
//! get the spec's error code, and the JVM must live on: later commands answer and the program ends
//! normally when the debugger lets it.
//!
//! Each case runs under our agent and, where it survives them, the JDK's (`FieldOnly` on an array
//! type crashes the JDK's agent too, JDK 17: `InstanceKlass::find_local_field_from_offset`).
//!
//! Our agent is `target/<profile>/libjdwp_agent.so`: build it first with `cargo build -p jdwp-agent`.

use std::time::Duration;

use jdwp_protocol::commands::event::{Composite, Event};
use jdwp_protocol::commands::event_request as er;
use jdwp_protocol::commands::{
    object_reference as or, reference_type as rt, thread_group_reference as tg, thread_reference as tr,
    virtual_machine as vm,
};
use jdwp_protocol::{ErrorCode, EventKind, FieldId, ObjectId, ReferenceTypeId, ThreadId, codec};
use jdwp_transports::{Packet, PacketKind};
use test_rig::wire::{RawSession, WireError};
use test_rig::{Agent, DEFAULT_JDK_AGENT_OPTIONS, Debuggee};

const TIMEOUT: Duration = Duration::from_secs(60);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Which {
    Ours,
    Jdk,
}

/// `HostileTarget` under one agent, suspended at its start, with one raw debugger session.
struct Target {
    which: Which,
    debuggee: Debuggee,
    s: RawSession,
    /// The main thread (the VM start event's).
    main: ThreadId,
}

impl Target {
    fn start(which: Which) -> Target {
        let agent = match which {
            Which::Ours => Agent::path(
                test_rig::our_agent_library().expect("build our agent first: cargo build -p jdwp-agent"),
                DEFAULT_JDK_AGENT_OPTIONS,
            ),
            Which::Jdk => Agent::jdk_default(),
        };
        let crash_dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("hostile-packets");
        std::fs::create_dir_all(&crash_dir).unwrap();
        let debuggee = Debuggee::builder("HostileTarget")
            .jvm_option(format!("-XX:ErrorFile={}/hs_err_%p.log", crash_dir.display()))
            .jvm_option("-XX:-CreateCoredumpOnCrash")
            .agent(agent)
            .spawn()
            .unwrap_or_else(|e| panic!("HostileTarget does not start under the {which:?} agent: {e}"));
        let mut s = RawSession::attach(&debuggee.address().to_string(), TIMEOUT)
            .unwrap_or_else(|e| panic!("{which:?} agent: cannot attach: {e}"));
        let start = s.next_event().expect("the VM start event");
        let composite: Composite = codec::decode_body(&start.body, s.id_sizes()).expect("a well-formed event");
        let Some(&Event::VmStart { thread: main, .. }) = composite.events.first() else {
            panic!("{which:?} agent: expected the VM start event, got {composite:?}")
        };
        Target { which, debuggee, s, main }
    }

    /// Sends a packet given in hex (header included, as the fuzzer logged it) with the 8-byte IDs
    /// at these body offsets replaced; returns the reply's error code.
    fn send_hex(&mut self, hex: &str, ids: &[(usize, u64)]) -> ErrorCode {
        let reply = self.send_hex_reply(hex, ids);
        match reply.kind {
            PacketKind::Reply { error } => error,
            PacketKind::Command { .. } => unreachable!("send_raw returns replies"),
        }
    }

    fn send_hex_reply(&mut self, hex: &str, ids: &[(usize, u64)]) -> Packet {
        let packet = packet_from_hex(hex, ids);
        let what = format!("{hex} with {ids:x?}");
        let reply = self.s.send_raw(packet).unwrap_or_else(|e| self.died(&what, e));
        self.assert_alive(&what);
        reply
    }

    fn must<C: jdwp_protocol::Command>(&mut self, command: &C) -> C::Reply {
        let which = self.which;
        self.s.send(command).unwrap_or_else(|e| panic!("{which:?} agent: {}: {e}", C::QUALIFIED_NAME))
    }

    fn code<C: jdwp_protocol::Command>(&mut self, command: &C) -> ErrorCode {
        match self.s.send(command) {
            Ok(_) => ErrorCode::NONE,
            Err(WireError::Jdwp { code, .. }) => code,
            Err(e) => self.died(C::QUALIFIED_NAME, e),
        }
    }

    fn died(&self, what: &str, e: WireError) -> ! {
        let status = self.debuggee.wait_for_exit(Duration::from_secs(10));
        panic!("{:?} agent: no reply to {what}: {e}; the JVM: {status:?}\n{}", self.which, self.debuggee.output_text())
    }

    fn assert_alive(&self, after: &str) {
        if let Some(status) = self.debuggee.wait_for_exit(Duration::ZERO) {
            panic!("{:?} agent: the JVM died ({status}) after {after}\n{}", self.which, self.debuggee.output_text());
        }
    }

    /// The VM still works: commands answer, and the program runs to its normal end once the main
    /// thread is interrupted and the VM resumed. Returns the VM's output.
    fn finish(mut self) -> String {
        let which = self.which;
        let main = self.main;
        assert_eq!(self.must(&tr::Name { thread: main }).thread_name, "main", "{which:?} agent");
        let group = self.must(&tr::ThreadGroup { thread: main }).group;
        assert_eq!(self.must(&tg::Name { group }).group_name, "main", "{which:?} agent");
        self.must(&tr::Interrupt { thread: main });
        self.must(&vm::Resume {});
        self.must(&vm::Dispose {});
        self.s.close();
        let status = self.debuggee.wait_for_exit(TIMEOUT).unwrap_or_else(|| {
            panic!("{which:?} agent: HostileTarget still runs after the session\n{}", self.debuggee.output_text())
        });
        assert!(status.success(), "{which:?} agent: exit status {status}\n{}", self.debuggee.output_text());
        assert!(self.debuggee.stdout_text().contains("HostileTarget interrupted"), "{which:?} agent");
        self.debuggee.output_text()
    }

    fn class(&mut self, signature: &str) -> ReferenceTypeId {
        let found = self.must(&vm::ClassesBySignature { signature: signature.into() }).classes;
        found.first().unwrap_or_else(|| panic!("{signature} is not loaded")).type_id
    }

    /// A `String` the debugger made, kept from collection.
    fn string(&mut self) -> ObjectId {
        let string: ObjectId = self.must(&vm::CreateString { utf: "not a thread group".into() }).string_object.into();
        self.must(&or::DisableCollection { object: string });
        string
    }

    fn field(&mut self, class: ReferenceTypeId, name: &str) -> FieldId {
        let fields = self.must(&rt::Fields { ref_type: class }).declared;
        fields.iter().find(|f| f.name == name).unwrap_or_else(|| panic!("no field {name}")).field_id
    }
}

/// A command packet from its hex dump (header included), the 8-byte big-endian values at these
/// body offsets replaced.
fn packet_from_hex(hex: &str, ids: &[(usize, u64)]) -> Packet {
    let bytes: Vec<u8> = (0..hex.len()).step_by(2).map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap()).collect();
    assert_eq!(u32::from_be_bytes(bytes[0..4].try_into().unwrap()) as usize, bytes.len(), "{hex}: its length");
    assert_eq!(bytes[8], 0, "{hex}: a command");
    let mut body = bytes[11..].to_vec();
    for &(at, id) in ids {
        body[at..at + 8].copy_from_slice(&id.to_be_bytes());
    }
    Packet::command(u32::from_be_bytes(bytes[4..8].try_into().unwrap()), bytes[9], bytes[10], body)
}

/// `ThreadGroupReference.Name`, `Parent` and `Children` as the fuzzer sent them (group ID in the
/// body at offset 0).
const GROUP_NAME: &str = "00000013000000d0000c010000000000000275";
const GROUP_PARENT: &str = "00000013000001ab000c020000000000000290";
const GROUP_CHILDREN: &str = "000000130000015f000c03000000000000004d";
/// `EventRequest.Set`: field modification, suspend the event thread, one modifier: `FieldOnly`
/// with the declaring type at body offset 7 and the field ID at 15.
const FIELD_ONLY: &str = "00000022000000b1000f01150100000001090000000000000089000000000000005f";

fn thread_groups_must_be_thread_groups(which: Which) {
    let mut t = Target::start(which);
    let string = t.string().0;
    let thread = t.main.0;
    for (name, hex) in [("Name", GROUP_NAME), ("Parent", GROUP_PARENT), ("Children", GROUP_CHILDREN)] {
        for (what, id) in [("a String", string), ("a Thread", thread)] {
            let got = t.send_hex(hex, &[(0, id)]);
            assert_eq!(got, ErrorCode::INVALID_THREAD_GROUP, "{which:?} agent: ThreadGroupReference.{name} of {what}");
        }
    }
    // The real thing still works, and what `Parent` answers is a thread group (or null).
    let group = t.must(&tr::ThreadGroup { thread: t.main }).group;
    let parent = t.must(&tg::Parent { group }).parent_group;
    assert!(!parent.is_null(), "{which:?} agent: main's group has a parent");
    assert_eq!(t.must(&tg::Name { group: parent }).group_name, "system", "{which:?} agent");
    let children = t.must(&tg::Children { group: parent });
    assert!(children.child_groups.contains(&group), "{which:?} agent: {children:?}");
    t.finish();
}

#[test]
fn thread_group_commands_on_other_objects_answer_invalid_thread_group_under_our_agent() {
    thread_groups_must_be_thread_groups(Which::Ours);
}

#[test]
fn thread_group_commands_on_other_objects_answer_invalid_thread_group_under_the_jdks_agent() {
    thread_groups_must_be_thread_groups(Which::Jdk);
}

/// The fuzzer's `FieldOnly` packet with `[I` and a field of another class; then other mismatches,
/// and a well-formed request to show the check refuses only what it must. Not for the JDK's agent,
/// which crashes on the first (JDK 17: SIGSEGV in `InstanceKlass::find_local_field_from_offset`).
#[test]
fn field_only_modifiers_must_name_a_field_of_their_type_under_our_agent() {
    let mut t = Target::start(Which::Ours);
    let int_array = t.class("[I");
    let string_class = t.class("Ljava/lang/String;");
    let thread_class = t.class("Ljava/lang/Thread;");
    let string_field = t.field(string_class, "value");
    let got = t.send_hex(FIELD_ONLY, &[(7, int_array.0), (15, string_field.0)]);
    assert_eq!(got, ErrorCode::INVALID_FIELDID, "FieldOnly: [I with String.value");
    let got = t.send_hex(FIELD_ONLY, &[(7, thread_class.0), (15, string_field.0)]);
    assert_eq!(got, ErrorCode::INVALID_FIELDID, "FieldOnly: Thread with String.value");
    let string = t.string();
    let got = t.send_hex(FIELD_ONLY, &[(7, string.0), (15, string_field.0)]);
    assert_eq!(got, ErrorCode::INVALID_CLASS, "FieldOnly: a String as the declaring type");

    let reply = t.send_hex_reply(FIELD_ONLY, &[(7, string_class.0), (15, string_field.0)]);
    assert_eq!(reply.kind, PacketKind::Reply { error: ErrorCode::NONE }, "FieldOnly: String with String.value");
    let set: er::SetReply = codec::decode_body(&reply.body, t.s.id_sizes()).expect("a request ID");
    t.must(&er::Clear { event_kind: EventKind::FieldModification, request_id: set.request_id });
    t.finish();
}

fn small_ones(which: Which) -> String {
    let mut t = Target::start(which);
    let got = t.code(&or::IsCollected { object: ObjectId::NULL });
    assert_eq!(got, ErrorCode::INVALID_OBJECT, "{which:?} agent: IsCollected(null)");
    let version = t.must(&vm::Version {});
    let description_tail = version.description.lines().skip(1).collect::<Vec<_>>().join("\n");
    t.finish();
    format!("{}\n{description_tail}", version.vm_version)
}

/// `IsCollected` of null is no object at all; `vmVersion` is `java.version` (`17.0.15`, not the
/// build string) and the description's JVM lines are the JDK's agent's.
#[test]
fn is_collected_of_null_and_the_version_reply_are_the_jdks_agents() {
    let jdk = small_ones(Which::Jdk);
    let ours = small_ones(Which::Ours);
    assert_eq!(ours, jdk, "vmVersion and the description's JVM lines");
    assert!(!ours.lines().next().unwrap().contains('+'), "vmVersion is java.version, not the build: {ours}");
}

// ---------------------------------------------------------------------------------------------
// Every kind of ID where every other kind is wanted
// ---------------------------------------------------------------------------------------------

/// The live samples: one ID of each kind the spec distinguishes, and null.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sample {
    Null,
    String,
    Thread,
    ThreadGroup,
    /// An `int[5]`.
    Array,
    Module,
    /// `java.lang.Object`.
    Class,
    /// `java.lang.Runnable`.
    Interface,
    /// `[I`.
    ArrayType,
}

const SAMPLES: [Sample; 9] = [
    Sample::Null,
    Sample::String,
    Sample::Thread,
    Sample::ThreadGroup,
    Sample::Array,
    Sample::Module,
    Sample::Class,
    Sample::Interface,
    Sample::ArrayType,
];

/// What a parameter wants, as the spec types it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Wants {
    Thread,
    ThreadGroup,
    String,
    Array,
    ClassLoader,
    ClassObject,
    Module,
    ReferenceType,
    InterfaceType,
    ArrayType,
}

/// The spec's answer for `sample` where `wants` is wanted (`NONE`: the sample is of that kind).
fn spec_answer(wants: Wants, sample: Sample) -> ErrorCode {
    use ErrorCode as E;
    let is_type = matches!(sample, Sample::Class | Sample::Interface | Sample::ArrayType);
    match wants {
        Wants::Thread if sample == Sample::Thread => E::NONE,
        Wants::Thread => E::INVALID_THREAD,
        Wants::ThreadGroup if sample == Sample::ThreadGroup => E::NONE,
        Wants::ThreadGroup => E::INVALID_THREAD_GROUP,
        Wants::String if sample == Sample::String => E::NONE,
        Wants::String => E::INVALID_STRING,
        Wants::Array if sample == Sample::Array => E::NONE,
        Wants::Array => E::INVALID_ARRAY,
        // Null is the bootstrap loader.
        Wants::ClassLoader if sample == Sample::Null => E::NONE,
        Wants::ClassLoader => E::INVALID_CLASS_LOADER,
        Wants::Module if sample == Sample::Module => E::NONE,
        Wants::Module => E::INVALID_MODULE,
        Wants::ClassObject | Wants::ReferenceType if is_type => E::NONE,
        Wants::InterfaceType if sample == Sample::Interface => E::NONE,
        Wants::ArrayType if sample == Sample::ArrayType => E::NONE,
        // A type of the wrong sort where an array type is wanted: the array type is what is wrong.
        Wants::ArrayType if is_type => E::INVALID_ARRAY,
        Wants::ClassObject | Wants::ReferenceType | Wants::InterfaceType | Wants::ArrayType => E::INVALID_CLASS,
    }
}

/// A command's set, command and body.
type RawCommand = (u8, u8, Vec<u8>);
/// A command with a given ID in the parameter under test.
type MakePacket = Box<dyn Fn(&Target, u64) -> RawCommand>;

/// One typed parameter of one command: the command with `id` in that parameter.
struct Row {
    label: &'static str,
    wants: Wants,
    /// The command's packet for an ID (set, command, body).
    packet: MakePacket,
    /// What the JDK's agent does differently, for which samples, and why.
    jdk: fn(Sample) -> Option<Jdk>,
}

/// Where the JDK's agent parts from the spec's answer.
#[derive(Clone, Copy, Debug)]
enum Jdk {
    Answers(ErrorCode, &'static str),
    /// Not sent to it: it crashes or hangs, as the reason says.
    Skip(&'static str),
}

fn body<C: jdwp_protocol::Command>(t: &Target, command: &C) -> RawCommand {
    (C::SET, C::CMD, codec::encode_body(command, t.s.id_sizes()))
}

fn rows(invoke: (jdwp_protocol::MethodId, ThreadId)) -> Vec<Row> {
    use jdwp_protocol::commands::{
        array_reference as ar, array_type as at, class_loader_reference as clr, class_object_reference as cor,
        class_type as ct, interface_type as it, module_reference as mr, string_reference as sr,
    };
    use jdwp_protocol::{ArrayId, ArrayTypeId, ClassId, ClassLoaderId, ClassObjectId, InterfaceId, ModuleId};
    fn same(_: Sample) -> Option<Jdk> {
        None
    }
    /// The JDK's agent passes null on to JVMTI or JNI where it does not check the kind of null.
    fn null_crashes(s: Sample) -> Option<Jdk> {
        (s == Sample::Null).then_some(Jdk::Skip("it hands null on to JVMTI or JNI unchecked"))
    }
    let (method_id, main) = invoke;
    vec![
        Row {
            label: "ThreadReference.Name",
            wants: Wants::Thread,
            packet: Box::new(|t, id| body(t, &tr::Name { thread: ThreadId(id) })),
            jdk: |s| {
                (s == Sample::Null)
                    .then_some(Jdk::Answers(ErrorCode::NONE, "takes null for the current thread (its own)"))
            },
        },
        Row {
            label: "ThreadGroupReference.Name",
            wants: Wants::ThreadGroup,
            packet: Box::new(|t, id| body(t, &tg::Name { group: jdwp_protocol::ThreadGroupId(id) })),
            jdk: null_crashes,
        },
        Row {
            label: "ThreadGroupReference.Children",
            wants: Wants::ThreadGroup,
            packet: Box::new(|t, id| body(t, &tg::Children { group: jdwp_protocol::ThreadGroupId(id) })),
            jdk: null_crashes,
        },
        Row {
            label: "StringReference.Value",
            wants: Wants::String,
            packet: Box::new(|t, id| body(t, &sr::ValueCmd { string_object: ObjectId(id) })),
            jdk: null_crashes,
        },
        Row {
            label: "ArrayReference.Length",
            wants: Wants::Array,
            packet: Box::new(|t, id| body(t, &ar::Length { array_object: ArrayId(id) })),
            jdk: null_crashes,
        },
        Row {
            label: "ClassLoaderReference.VisibleClasses",
            wants: Wants::ClassLoader,
            packet: Box::new(|t, id| body(t, &clr::VisibleClasses { class_loader_object: ClassLoaderId(id) })),
            jdk: same,
        },
        Row {
            label: "ClassObjectReference.ReflectedType",
            wants: Wants::ClassObject,
            packet: Box::new(|t, id| body(t, &cor::ReflectedType { class_object: ClassObjectId(id) })),
            jdk: |_| Some(Jdk::Skip("it does not check: the VM exits (status 1) on a String")),
        },
        Row {
            label: "ModuleReference.Name",
            wants: Wants::Module,
            packet: Box::new(|t, id| body(t, &mr::Name { module: ModuleId(id) })),
            jdk: |s| {
                (s != Sample::Module)
                    .then_some(Jdk::Skip("it does not check modules: JNI calls Module.getName on anything"))
            },
        },
        Row {
            label: "ReferenceType.Signature",
            wants: Wants::ReferenceType,
            packet: Box::new(|t, id| body(t, &rt::Signature { ref_type: ReferenceTypeId(id) })),
            jdk: same,
        },
        Row {
            label: "ClassType.Superclass",
            // Any reference type, as with the JDK's agent: JDI asks it of primitive types' classes.
            wants: Wants::ReferenceType,
            packet: Box::new(|t, id| body(t, &ct::Superclass { clazz: ClassId(id) })),
            jdk: null_crashes,
        },
        Row {
            label: "ArrayType.NewInstance",
            wants: Wants::ArrayType,
            packet: Box::new(|t, id| body(t, &at::NewInstance { arr_type: ArrayTypeId(id), length: 1 })),
            jdk: |s| match s {
                Sample::Class | Sample::Interface => Some(Jdk::Answers(
                    ErrorCode::TYPE_MISMATCH,
                    "answers a type that is no array type with TYPE_MISMATCH, which the spec does not list here",
                )),
                _ => null_crashes(s),
            },
        },
        Row {
            label: "InterfaceType.InvokeMethod",
            wants: Wants::InterfaceType,
            packet: Box::new(move |t, id| {
                let cmd =
                    it::InvokeMethod { clazz: InterfaceId(id), thread: main, method_id, arguments: vec![], options: 0 };
                body(t, &cmd)
            }),
            jdk: |s| match s {
                Sample::Class | Sample::ArrayType => {
                    Some(Jdk::Skip("it takes a class for an interface and calls the interface's method on it"))
                }
                _ => null_crashes(s),
            },
        },
        Row {
            label: "EventRequest.Set ThreadOnly",
            wants: Wants::Thread,
            packet: Box::new(|t, id| {
                let set = er::Set {
                    event_kind: EventKind::ClassPrepare,
                    suspend_policy: jdwp_protocol::SuspendPolicy::None,
                    modifiers: vec![er::Modifier::ThreadOnly { thread: ThreadId(id) }],
                };
                body(t, &set)
            }),
            jdk: |s| (s == Sample::Null).then_some(Jdk::Skip("the VM exits (status 1) on a null thread filter")),
        },
        Row {
            label: "EventRequest.Set ClassOnly",
            wants: Wants::ReferenceType,
            packet: Box::new(|t, id| {
                let set = er::Set {
                    event_kind: EventKind::ClassPrepare,
                    suspend_policy: jdwp_protocol::SuspendPolicy::None,
                    modifiers: vec![er::Modifier::ClassOnly { clazz: ReferenceTypeId(id) }],
                };
                body(t, &set)
            }),
            jdk: |s| (s == Sample::Null).then_some(Jdk::Skip("as with a null thread filter, the VM exits, we expect")),
        },
    ]
}

fn wrong_kinds_everywhere(which: Which) {
    let mut t = Target::start(which);
    let string = t.string().0;
    let thread = t.main.0;
    let group = t.must(&tr::ThreadGroup { thread: t.main }).group.0;
    let int_array = t.class("[I");
    let array = t.must(&jdwp_protocol::commands::array_type::NewInstance { arr_type: int_array.into(), length: 5 });
    t.must(&or::DisableCollection { object: array.new_array.id });
    let module = t.must(&vm::AllModules {}).modules[0].0;
    let object_class = t.class("Ljava/lang/Object;");
    let runnable = t.class("Ljava/lang/Runnable;");
    let run = t.must(&rt::Methods { ref_type: runnable }).declared;
    let run = run.iter().find(|m| m.name == "run").expect("Runnable.run").method_id;
    let id = |s: Sample| match s {
        Sample::Null => 0,
        Sample::String => string,
        Sample::Thread => thread,
        Sample::ThreadGroup => group,
        Sample::Array => array.new_array.id.0,
        Sample::Module => module,
        Sample::Class => object_class.0,
        Sample::Interface => runnable.0,
        Sample::ArrayType => int_array.0,
    };
    let mut failures = Vec::new();
    let mut requests = Vec::new();
    for row in rows((run, t.main)) {
        for sample in SAMPLES {
            let spec = spec_answer(row.wants, sample);
            let (want, why) = match (which, (row.jdk)(sample)) {
                (Which::Jdk, Some(Jdk::Skip(why))) => {
                    eprintln!("{which:?}: {}: {sample:?}: not sent: {why}", row.label);
                    continue;
                }
                (Which::Jdk, Some(Jdk::Answers(code, why))) => (code, why),
                _ => (spec, "the spec's answer"),
            };
            // Only the kind checks are under test: a right kind would go on to do things.
            if spec == ErrorCode::NONE {
                continue;
            }
            let (set, cmd, b) = (row.packet)(&t, id(sample));
            let reply = t.send_packet(set, cmd, b);
            let got = error_of(&reply);
            if got == ErrorCode::NONE && row.label.starts_with("EventRequest") {
                let r: er::SetReply = codec::decode_body(&reply.body, t.s.id_sizes()).unwrap();
                requests.push(r.request_id);
            }
            eprintln!("{which:?}: {}: {sample:?}: {got:?} (want {want:?}: {why})", row.label);
            if got != want {
                failures.push(format!("{}: {sample:?}: {got:?}, want {want:?} ({why})", row.label));
            }
        }
    }
    for request_id in requests {
        t.must(&er::Clear { event_kind: EventKind::ClassPrepare, request_id });
    }
    assert!(failures.is_empty(), "{which:?} agent:\n{}", failures.join("\n"));
    t.finish();
}

fn error_of(reply: &Packet) -> ErrorCode {
    match reply.kind {
        PacketKind::Reply { error } => error,
        PacketKind::Command { .. } => unreachable!("send_raw returns replies"),
    }
}

impl Target {
    fn send_packet(&mut self, set: u8, cmd: u8, body: Vec<u8>) -> Packet {
        let what = format!("command {set}/{cmd}");
        let reply = self.s.send_raw(Packet::command(0, set, cmd, body)).unwrap_or_else(|e| self.died(&what, e));
        self.assert_alive(&what);
        reply
    }
}

#[test]
fn every_typed_parameter_refuses_ids_of_other_kinds_under_our_agent() {
    wrong_kinds_everywhere(Which::Ours);
}

#[test]
fn every_typed_parameter_refuses_ids_of_other_kinds_under_the_jdks_agent() {
    wrong_kinds_everywhere(Which::Jdk);
}
