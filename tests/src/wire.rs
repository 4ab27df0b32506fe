//! A raw, blocking JDWP session for tests that talk to an agent packet by packet: the protocol
//! crate's types over the socket transport, with nothing of jdi-rs in between. Used by the first
//! live conversation and by tests that send malformed packets on purpose. What any synchronous
//! debugger connection needs besides its transport ([`decode_reply`], [`id_sizes`]) is here too, for
//! the fuzzer's connection, which writes its own frames.

use std::time::Duration;

use jdwp_protocol::commands::virtual_machine as vm;
use jdwp_protocol::{Command, DecodeError, ErrorCode, IdSizes, codec};
use jdwp_transports::{Packet, PacketKind, SocketConnection, SocketReader, SocketWriter, TransportError};

/// Why a raw command failed.
#[derive(Debug, thiserror::Error)]
pub enum WireError {
    #[error(transparent)]
    Transport(#[from] TransportError),
    #[error("{command} answered {code:?}")]
    Jdwp { command: &'static str, code: ErrorCode },
    #[error("{command}: reply does not decode: {source}")]
    Decode { command: &'static str, source: jdwp_protocol::DecodeError },
    #[error("the VM closed the connection")]
    Closed,
}

/// Why the reply to a typed command is not its answer.
#[derive(Debug, thiserror::Error)]
pub enum ReplyError {
    #[error("{command} answered {code:?}")]
    Jdwp { command: &'static str, code: ErrorCode },
    #[error("{command}: reply does not decode: {source}")]
    Decode { command: &'static str, source: DecodeError },
    #[error("a command came where its reply was expected")]
    NotAReply,
}

impl From<ReplyError> for WireError {
    fn from(e: ReplyError) -> WireError {
        match e {
            ReplyError::Jdwp { command, code } => WireError::Jdwp { command, code },
            ReplyError::Decode { command, source } => WireError::Decode { command, source },
            ReplyError::NotAReply => WireError::Closed,
        }
    }
}

/// The reply packet of command `C`, decoded with the connection's ID sizes.
pub fn decode_reply<C: Command>(reply: &Packet, sizes: IdSizes) -> Result<C::Reply, ReplyError> {
    match reply.kind {
        PacketKind::Reply { error } if error == ErrorCode::NONE => codec::decode_body(&reply.body, sizes)
            .map_err(|source| ReplyError::Decode { command: C::QUALIFIED_NAME, source }),
        PacketKind::Reply { error } => Err(ReplyError::Jdwp { command: C::QUALIFIED_NAME, code: error }),
        PacketKind::Command { .. } => Err(ReplyError::NotAReply),
    }
}

/// The ID sizes a `VirtualMachine.IDSizes` reply gives, checked (what a connection asks first).
pub fn id_sizes(r: &vm::IdSizesReply) -> Result<IdSizes, ReplyError> {
    let size = |v: i32| u8::try_from(v).unwrap_or(0);
    IdSizes {
        field_id: size(r.field_id_size),
        method_id: size(r.method_id_size),
        object_id: size(r.object_id_size),
        reference_type_id: size(r.reference_type_id_size),
        frame_id: size(r.frame_id_size),
    }
    .validate()
    .map_err(|source| ReplyError::Decode { command: "VirtualMachine.IDSizes", source })
}

/// One debugger connection driven synchronously: send a command, read until its reply.
pub struct RawSession {
    reader: SocketReader,
    writer: SocketWriter,
    next_id: u32,
    sizes: IdSizes,
    /// Commands the VM sent (events) while we waited for replies, in arrival order.
    pub events: Vec<Packet>,
}

impl RawSession {
    /// Attaches to `address` and reads the ID sizes.
    pub fn attach(address: &str, timeout: Duration) -> Result<RawSession, WireError> {
        let conn: SocketConnection = jdwp_transports::attach(address, Some(timeout))?;
        let (reader, writer) = conn.into_split()?;
        // A test must fail, not hang, when the VM stops answering.
        reader.get_ref().set_read_timeout(Some(timeout.max(Duration::from_secs(1)))).map_err(|e| {
            WireError::Transport(TransportError::Io { operation: "setting a read timeout".into(), source: e })
        })?;
        let mut session = RawSession { reader, writer, next_id: 1, sizes: IdSizes::default(), events: Vec::new() };
        session.sizes = id_sizes(&session.send(&vm::IdSizesCmd {})?)?;
        Ok(session)
    }

    pub fn id_sizes(&self) -> IdSizes {
        self.sizes
    }

    /// Sends a typed command and decodes its reply.
    pub fn send<C: Command>(&mut self, command: &C) -> Result<C::Reply, WireError> {
        let body = codec::encode_body(command, self.sizes);
        let reply = self.send_raw(Packet::command(0, C::SET, C::CMD, body))?;
        Ok(decode_reply::<C>(&reply, self.sizes)?)
    }

    /// Sends any packet (its id is replaced by the next one) and returns the reply with that id.
    pub fn send_raw(&mut self, mut packet: Packet) -> Result<Packet, WireError> {
        packet.id = self.next_id;
        self.next_id += 1;
        self.writer.write_packet(&packet)?;
        loop {
            let Some(p) = self.reader.read_packet()? else { return Err(WireError::Closed) };
            if p.is_reply() && p.id == packet.id {
                return Ok(p);
            }
            if !p.is_reply() {
                self.events.push(p);
            }
        }
    }

    /// Reads the next packet the VM sends by itself (an event), first from those already queued.
    pub fn next_event(&mut self) -> Result<Packet, WireError> {
        if !self.events.is_empty() {
            return Ok(self.events.remove(0));
        }
        loop {
            let Some(p) = self.reader.read_packet()? else { return Err(WireError::Closed) };
            if !p.is_reply() {
                return Ok(p);
            }
        }
    }

    /// Closes the connection.
    pub fn close(self) {
        let _ = self.writer.shutdown();
    }
}

impl RawSession {
    /// The next event composite, decoded (panics, as a test would, if none comes or it does not
    /// decode).
    pub fn next_composite(&mut self) -> jdwp_protocol::commands::event::Composite {
        let packet = self.next_event().expect("an event");
        codec::decode_body(&packet.body, self.id_sizes()).expect("a composite")
    }
}

/// The JDK's agent and ours, each with the JDK's default options, for tests run against both.
pub fn both_agents() -> Vec<(&'static str, crate::Agent)> {
    let ours = crate::our_agent_library().expect("our agent");
    vec![("jdk", crate::Agent::jdk_default()), ("ours", crate::Agent::path(ours, crate::DEFAULT_JDK_AGENT_OPTIONS))]
}

/// Starts `main_class` suspended under `agent` and runs it until that class is prepared (the VM
/// suspended there, the class prepare request cleared): the debuggee, the session, the class's ID
/// and the thread that prepared it.
pub fn run_to_class_prepare(
    agent: crate::Agent,
    main_class: &str,
    timeout: Duration,
) -> (crate::Debuggee, RawSession, jdwp_protocol::ReferenceTypeId, jdwp_protocol::ThreadId) {
    run_to_class_prepare_of(crate::Debuggee::builder(main_class).agent(agent), main_class, timeout)
}

/// [`run_to_class_prepare`] of a debuggee the caller has set up (JVM options, arguments).
pub fn run_to_class_prepare_of(
    debuggee: crate::DebuggeeBuilder,
    main_class: &str,
    timeout: Duration,
) -> (crate::Debuggee, RawSession, jdwp_protocol::ReferenceTypeId, jdwp_protocol::ThreadId) {
    use jdwp_protocol::commands::event::Event;
    use jdwp_protocol::commands::event_request::{self as er, Modifier};
    use jdwp_protocol::{EventKind, SuspendPolicy};
    let jvm = debuggee.spawn().expect("the debuggee starts");
    let mut s = RawSession::attach(&jvm.address().to_string(), timeout).expect("attach");
    assert!(matches!(s.next_composite().events.as_slice(), [Event::VmStart { .. }]));
    let req = s
        .send(&er::Set {
            event_kind: EventKind::ClassPrepare,
            suspend_policy: SuspendPolicy::All,
            modifiers: vec![Modifier::ClassMatch { class_pattern: main_class.into() }],
        })
        .unwrap();
    s.send(&vm::Resume {}).unwrap();
    let prepared = s.next_composite();
    let Some(&Event::ClassPrepare { type_id, thread, .. }) = prepared.events.first() else {
        panic!("expected {main_class}'s class prepare, got {prepared:?}")
    };
    s.send(&er::Clear { event_kind: EventKind::ClassPrepare, request_id: req.request_id }).unwrap();
    (jvm, s, type_id, thread)
}

/// Sets a breakpoint with `policy` at the line of `method_name` (of `class`) that the fixture
/// `file` marks with `marker` (see [`crate::fixture_line`]); returns its request ID.
pub fn breakpoint_at_marker(
    s: &mut RawSession,
    class: jdwp_protocol::ReferenceTypeId,
    method_name: &str,
    file: &str,
    marker: &str,
    policy: jdwp_protocol::SuspendPolicy,
) -> i32 {
    use jdwp_protocol::commands::event_request::{self as er, Modifier};
    use jdwp_protocol::commands::{method, reference_type as rt};
    use jdwp_protocol::{EventKind, Location, TypeTag};
    let want = crate::fixture_line(file, marker).unwrap_or_else(|e| panic!("{file} {marker}: {e}")) as i32;
    let methods = s.send(&rt::Methods { ref_type: class }).unwrap().declared;
    let method_id = methods.iter().find(|m| m.name == method_name).expect("the method").method_id;
    let table = s.send(&method::LineTable { ref_type: class, method_id }).unwrap();
    let index = table.lines.iter().find(|l| l.line_number == want).expect("the line").line_code_index;
    let loc = Location { type_tag: TypeTag::Class, class_id: class.into(), method_id, index: index as u64 };
    s.send(&er::Set {
        event_kind: EventKind::Breakpoint,
        suspend_policy: policy,
        modifiers: vec![Modifier::LocationOnly { loc }],
    })
    .unwrap()
    .request_id
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_decode_or_say_why_not() {
        let sizes = IdSizes::default();
        let ok = Packet::reply(
            1,
            ErrorCode::NONE,
            codec::encode_body(
                &vm::IdSizesReply {
                    field_id_size: 8,
                    method_id_size: 8,
                    object_id_size: 8,
                    reference_type_id_size: 8,
                    frame_id_size: 8,
                },
                sizes,
            ),
        );
        let r = decode_reply::<vm::IdSizesCmd>(&ok, sizes).unwrap();
        assert_eq!(id_sizes(&r).unwrap().object_id, 8);
        let refused = Packet::reply(2, ErrorCode::VM_DEAD, Vec::new());
        assert!(matches!(
            decode_reply::<vm::IdSizesCmd>(&refused, sizes),
            Err(ReplyError::Jdwp { command: vm::IdSizesCmd::QUALIFIED_NAME, code: ErrorCode::VM_DEAD })
        ));
        let short = Packet::reply(3, ErrorCode::NONE, vec![0, 0]);
        assert!(matches!(decode_reply::<vm::IdSizesCmd>(&short, sizes), Err(ReplyError::Decode { .. })));
        let event = Packet::command(4, 64, 100, Vec::new());
        assert!(matches!(decode_reply::<vm::IdSizesCmd>(&event, sizes), Err(ReplyError::NotAReply)));
        let zero = vm::IdSizesReply { field_id_size: 0, ..r };
        assert!(matches!(id_sizes(&zero), Err(ReplyError::Decode { command: "VirtualMachine.IDSizes", .. })));
    }
}
