//! Hostile input against our agent in a live JVM, then a normal debugger session.
//!
//! The issue: "a frame with a lying length, an unknown command set or command, a bad or stale ID, a
//! truncated body, a slow or silent peer during the handshake: an error reply (or a closed
//! connection for a broken frame) and a log line, never a crash or a hang of the JVM. A test sends
//! such packets to a live JVM and then checks that a normal debugger session still works."
//!
//! Every test here starts `HostileTarget` under our agent (`server=y,suspend=y`, debug logging to a
//! file), lets one or more peers misbehave, checks each answer (an exact error code, or the
//! connection closed for broken framing), and then attaches a well-behaved debugger that runs a
//! short session to the end (see [`normal_session`]): the VM must still work and the program must
//! exit 0. The agent's log must mention the trouble.
//!
//! Where it is meaningful and safe, the same input goes to the JDK's agent (`-agentlib:jdwp`) and its
//! answers are checked too, so each case documents where the two agents agree and where (and why)
//! they differ. Inputs the JDK's agent cannot survive (it trusts method and field IDs, and it makes
//! the VM exit on some huge counts) are not sent to it; each such skip says why.
//!
//! Our agent is `target/<profile>/libjdwp_agent.so`, next to the test binary's profile directory:
//! build it first with `cargo build -p jdwp-agent`.

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use jdwp_protocol::commands::event::{Composite, Event};
use jdwp_protocol::commands::event_request::{self as er, Modifier};
use jdwp_protocol::commands::{
    array_reference as ar, class_type as ct, method, object_reference as or, reference_type as rt, stack_frame as sf,
    string_reference as sr, thread_reference as tr, virtual_machine as vm,
};
use jdwp_protocol::{
    ArrayId, ClassId, Command, ErrorCode, EventKind, FieldId, IdSizes, Location, MethodId, ObjectId, ReferenceTypeId,
    SuspendPolicy, Tag, ThreadId, TypeTag, Value, codec,
};
use jdwp_transports::{Packet, PacketKind, PacketReader, TransportError, handshake_as_debugger};
use test_rig::wire::{RawSession, WireError};
use test_rig::{Agent, DEFAULT_JDK_AGENT_OPTIONS, Debuggee, FREE_PORT, fixture_line};

/// Generous: the tests must pass on a loaded 2-core machine. Every wait is on a reply, an event, an
/// end of stream or an exit, bounded by this.
const TIMEOUT: Duration = Duration::from_secs(60);

/// How long the next debugger may take to get through after a peer that connected and then said
/// nothing (or stopped in the middle of the handshake) is left hanging, holding its connection open.
/// The agent must time such a peer out on its own; this bounds how long that may take.
const AFTER_SILENT_PEER: Duration = Duration::from_secs(30);

// ---------------------------------------------------------------------------------------------
// The agents under test
// ---------------------------------------------------------------------------------------------

/// Which agent a run uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Which {
    Ours,
    Jdk,
}

/// Our agent: `target/<profile>/libjdwp_agent.so`, next to the test binary's profile directory.
fn our_agent() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    // target/<profile>/deps/<test binary> → target/<profile>/libjdwp_agent.so
    let lib = exe.parent().and_then(Path::parent).expect("target profile dir").join("libjdwp_agent.so");
    assert!(
        lib.is_file(),
        "our agent is missing at {}: build it first with `cargo build -p jdwp-agent` (same profile as the tests)",
        lib.display()
    );
    lib
}

/// A `HostileTarget` JVM under one agent, and (ours) the file its log goes to.
struct Jvm {
    which: Which,
    debuggee: Debuggee,
    log: Option<PathBuf>,
}

impl Jvm {
    fn start(which: Which, case: &str) -> Jvm {
        let (agent, log) = match which {
            Which::Ours => {
                let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("agent-robustness");
                std::fs::create_dir_all(&dir).unwrap();
                let log = dir.join(format!("{case}-{}.log", std::process::id()));
                let _ = std::fs::remove_file(&log);
                let options = format!("{DEFAULT_JDK_AGENT_OPTIONS},logfile={},loglevel=debug", log.display());
                (Agent::path(our_agent(), options), Some(log))
            }
            // The JDK's agent closes its listening socket while a debugger is attached and opens it
            // again afterwards, on a new port when given port 0: give it a fixed one.
            Which::Jdk => {
                (Agent::jdk(format!("transport=dt_socket,server=y,suspend=y,address=127.0.0.1:{FREE_PORT}")), None)
            }
        };
        // Where the JVM writes its crash report, if it crashes: not the working directory.
        let crash_dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("agent-robustness");
        std::fs::create_dir_all(&crash_dir).unwrap();
        let debuggee = Debuggee::builder("HostileTarget")
            .jvm_option(format!("-XX:ErrorFile={}/hs_err_{case}_%p.log", crash_dir.display()))
            .jvm_option("-XX:-CreateCoredumpOnCrash")
            .agent(agent)
            .spawn()
            .unwrap_or_else(|e| panic!("{case}: HostileTarget does not start under the {which:?} agent: {e}"));
        Jvm { which, debuggee, log }
    }

    fn log_text(&self) -> String {
        self.log.as_ref().map(|p| std::fs::read_to_string(p).unwrap_or_default()).unwrap_or_default()
    }

    /// Fails unless the VM is still running (the hostile input must not have killed it).
    fn assert_alive(&self, after: &str) {
        if let Some(status) = self.debuggee.wait_for_exit(Duration::ZERO) {
            panic!("{:?} agent: the JVM died ({status}) after {after}\n{}", self.which, self.debuggee.output_text());
        }
    }
}

// ---------------------------------------------------------------------------------------------
// A raw connection: bytes, packets, replies and the end of the stream
// ---------------------------------------------------------------------------------------------

/// What the agent did with a command: a reply with this error code (`NONE` for success), or it
/// closed the connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    Reply(ErrorCode),
    Closed,
    /// The connection closed after the agent sent this many bytes (during a failed handshake).
    ClosedAfter(usize),
}

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Outcome::Reply(code) => write!(f, "{}", code_name(*code)),
            Outcome::Closed => f.write_str("connection closed"),
            Outcome::ClosedAfter(n) => write!(f, "connection closed after {n} bytes from the agent"),
        }
    }
}

fn code_name(code: ErrorCode) -> String {
    let names = [
        (ErrorCode::NONE, "NONE"),
        (ErrorCode::INVALID_THREAD, "INVALID_THREAD"),
        (ErrorCode::THREAD_NOT_SUSPENDED, "THREAD_NOT_SUSPENDED"),
        (ErrorCode::INVALID_OBJECT, "INVALID_OBJECT"),
        (ErrorCode::INVALID_CLASS, "INVALID_CLASS"),
        (ErrorCode::INVALID_METHODID, "INVALID_METHODID"),
        (ErrorCode::INVALID_LOCATION, "INVALID_LOCATION"),
        (ErrorCode::INVALID_FIELDID, "INVALID_FIELDID"),
        (ErrorCode::INVALID_FRAMEID, "INVALID_FRAMEID"),
        (ErrorCode::OPAQUE_FRAME, "OPAQUE_FRAME"),
        (ErrorCode::INVALID_SLOT, "INVALID_SLOT"),
        (ErrorCode::NOT_IMPLEMENTED, "NOT_IMPLEMENTED"),
        (ErrorCode::ILLEGAL_ARGUMENT, "ILLEGAL_ARGUMENT"),
        (ErrorCode::OUT_OF_MEMORY, "OUT_OF_MEMORY"),
        (ErrorCode::INTERNAL, "INTERNAL"),
        (ErrorCode::INVALID_TAG, "INVALID_TAG"),
        (ErrorCode::INVALID_ARRAY, "INVALID_ARRAY"),
        (ErrorCode::INVALID_INDEX, "INVALID_INDEX"),
        (ErrorCode::INVALID_COUNT, "INVALID_COUNT"),
        (ErrorCode::INVALID_LENGTH, "INVALID_LENGTH"),
        (ErrorCode::INVALID_EVENT_TYPE, "INVALID_EVENT_TYPE"),
        (ErrorCode::VM_DEAD, "VM_DEAD"),
    ];
    names.iter().find(|(c, _)| *c == code).map_or_else(|| format!("error {}", code.0), |(_, n)| (*n).to_owned())
}

/// One debugger connection driven byte by byte when needed.
struct Conn {
    stream: TcpStream,
    reader: PacketReader<TcpStream>,
    sizes: IdSizes,
    next_id: u32,
    /// Commands (events) the VM sent while we waited for replies.
    events: VecDeque<Packet>,
}

/// A TCP connection to the agent, nothing sent yet.
///
/// Our agent keeps listening between sessions: a connection waits in the backlog until the agent
/// is done with the previous debugger. The JDK's agent stops listening during a session and starts
/// again after it; a connection it refuses in between is retried until the deadline (only the JDK
/// comparison runs need this).
fn connect_tcp(jvm: &Jvm) -> TcpStream {
    let deadline = Instant::now() + TIMEOUT;
    let stream = loop {
        match TcpStream::connect_timeout(&jvm.debuggee.address(), TIMEOUT) {
            Ok(stream) => break stream,
            Err(e)
                if e.kind() == ErrorKind::ConnectionRefused && jvm.which == Which::Jdk && Instant::now() < deadline =>
            {
                jvm.assert_alive("its listening socket went away");
                std::thread::yield_now();
            }
            Err(e) => panic!("{:?} agent: cannot connect: {e}", jvm.which),
        }
    };
    stream.set_read_timeout(Some(TIMEOUT)).unwrap();
    stream.set_write_timeout(Some(TIMEOUT)).unwrap();
    stream.set_nodelay(true).unwrap();
    stream
}

impl Conn {
    /// Connects, shakes hands, and reads the ID sizes.
    fn open(jvm: &Jvm) -> Conn {
        let stream = connect_tcp(jvm);
        handshake_as_debugger(&stream, Some(TIMEOUT))
            .unwrap_or_else(|e| panic!("{:?} agent: handshake failed: {e}", jvm.which));
        let reader = PacketReader::new(stream.try_clone().unwrap());
        let mut conn = Conn { stream, reader, sizes: IdSizes::default(), next_id: 1, events: VecDeque::new() };
        let r = conn.send(&vm::IdSizesCmd {}).expect("IDSizes");
        let size = |v: i32| u8::try_from(v).unwrap();
        conn.sizes = IdSizes {
            field_id: size(r.field_id_size),
            method_id: size(r.method_id_size),
            object_id: size(r.object_id_size),
            reference_type_id: size(r.reference_type_id_size),
            frame_id: size(r.frame_id_size),
        };
        assert_eq!(conn.sizes, IdSizes::default(), "these tests build raw bodies with 8-byte IDs");
        conn
    }

    fn write_bytes(&mut self, bytes: &[u8]) {
        if let Err(e) = self.stream.write_all(bytes) {
            // The agent may hang up before it has read everything: that is its right.
            assert!(is_closed(e.kind()), "writing to the agent: {e}");
        }
    }

    /// Sends a command packet with this body and returns its reply; `None` if the connection ends
    /// first.
    fn exchange(&mut self, set: u8, cmd: u8, body: Vec<u8>) -> Option<Packet> {
        let id = self.next_id;
        self.next_id += 1;
        let bytes = Packet::command(id, set, cmd, body).encode().unwrap();
        if let Err(e) = self.stream.write_all(&bytes) {
            assert!(is_closed(e.kind()), "writing a command: {e}");
            return None;
        }
        loop {
            let p = self.read()?;
            match p.kind {
                PacketKind::Reply { .. } if p.id == id => return Some(p),
                PacketKind::Reply { .. } => panic!("a reply to a command never sent: {p:?}"),
                PacketKind::Command { .. } => self.events.push_back(p),
            }
        }
    }

    /// Sends a command packet with this body; what the agent did with it.
    fn request(&mut self, set: u8, cmd: u8, body: Vec<u8>) -> Outcome {
        self.exchange(set, cmd, body).map_or(Outcome::Closed, |p| Outcome::Reply(reply_code(&p)))
    }

    /// Sends a typed command; its decoded reply, or what happened instead.
    fn send<C: Command>(&mut self, command: &C) -> Result<C::Reply, Outcome> {
        let body = codec::encode_body(command, self.sizes);
        let reply = self.exchange(C::SET, C::CMD, body).ok_or(Outcome::Closed)?;
        match reply_code(&reply) {
            ErrorCode::NONE => Ok(codec::decode_body(&reply.body, self.sizes)
                .unwrap_or_else(|e| panic!("{}: reply does not decode: {e}", C::QUALIFIED_NAME))),
            code => Err(Outcome::Reply(code)),
        }
    }

    /// Like [`Conn::send`], for commands that must succeed.
    fn must<C: Command>(&mut self, command: &C) -> C::Reply {
        self.send(command).unwrap_or_else(|o| panic!("{}: {o}", C::QUALIFIED_NAME))
    }

    /// The next packet, `None` at the end of the stream (or a reset). Fails on a read timeout: the
    /// agent neither answered nor closed, which is a hang.
    fn read(&mut self) -> Option<Packet> {
        match self.reader.read_packet() {
            Ok(p) => p,
            Err(TransportError::Io { source, .. }) if is_closed(source.kind()) => None,
            Err(TransportError::Io { source, .. }) if is_timeout(source.kind()) => {
                panic!("no answer and no close within {TIMEOUT:?}: the agent hangs")
            }
            Err(TransportError::TruncatedPacket { buffered }) => {
                panic!("the agent closed the connection in the middle of a packet ({buffered} bytes)")
            }
            Err(e) => panic!("reading from the agent: {e}"),
        }
    }

    /// Reads until the agent closes the connection; a reply meanwhile is returned instead.
    fn expect_closed(&mut self) -> Outcome {
        loop {
            match self.read() {
                Some(p) if p.is_reply() => return Outcome::Reply(reply_code(&p)),
                Some(p) => self.events.push_back(p),
                None => return Outcome::Closed,
            }
        }
    }

    /// The next event composite.
    fn next_event(&mut self) -> Composite {
        let packet = match self.events.pop_front() {
            Some(p) => p,
            None => match self.read() {
                Some(p) if !p.is_reply() => p,
                Some(p) => panic!("unexpected reply {p:?}"),
                None => panic!("the connection closed while waiting for an event"),
            },
        };
        codec::decode_body(&packet.body, self.sizes).unwrap_or_else(|e| panic!("undecodable event {packet:?}: {e}"))
    }

    /// Whether the VM start event is among the events received so far.
    fn saw_vm_start(&self) -> bool {
        self.events.iter().any(|p| {
            codec::decode_body::<Composite>(&p.body, self.sizes)
                .is_ok_and(|c| c.events.iter().any(|e| matches!(e, Event::VmStart { .. })))
        })
    }

    /// Waits for an event that `pick` accepts, skipping others (such as the VM start).
    fn wait_event<T>(&mut self, what: &str, mut pick: impl FnMut(&Event) -> Option<T>) -> T {
        let mut skipped = Vec::new();
        loop {
            let composite = self.next_event();
            if let Some(found) = composite.events.iter().find_map(&mut pick) {
                return found;
            }
            assert!(skipped.len() < 100, "no {what} among {skipped:?}");
            skipped.push(composite);
        }
    }

    fn body<C: Command>(&self, command: &C) -> Vec<u8> {
        codec::encode_body(command, self.sizes)
    }
}

fn reply_code(p: &Packet) -> ErrorCode {
    match p.kind {
        PacketKind::Reply { error } => error,
        PacketKind::Command { .. } => unreachable!(),
    }
}

fn is_closed(kind: ErrorKind) -> bool {
    matches!(kind, ErrorKind::ConnectionReset | ErrorKind::ConnectionAborted | ErrorKind::BrokenPipe)
}

fn is_timeout(kind: ErrorKind) -> bool {
    matches!(kind, ErrorKind::WouldBlock | ErrorKind::TimedOut)
}

// ---------------------------------------------------------------------------------------------
// Context: real IDs to combine with bad ones
// ---------------------------------------------------------------------------------------------

/// Real IDs from the first session, taken while the VM is suspended at its start.
struct Ctx {
    /// The main thread, suspended by the VM start event.
    main: ThreadId,
    object_class: ClassId,
    thread_class: ClassId,
    /// A `String` made with `VirtualMachine.CreateString`: an object that is neither a thread nor a
    /// class.
    string: ObjectId,
    /// An `int[5]`.
    array: ArrayId,
    /// A static field of `Thread`.
    thread_static_field: FieldId,
    /// An instance field of `Thread`.
    thread_instance_field: FieldId,
}

/// Reads the VM start event (the first connection to a `suspend=y` VM gets it) and looks up the
/// IDs the probes combine with bad ones.
fn context(c: &mut Conn) -> Ctx {
    let start = c.next_event();
    let Some(Event::VmStart { thread: main, .. }) = start.events.first().cloned() else {
        panic!("expected the VM start event first, got {start:?}")
    };
    let mut class = |sig: &str| {
        let found = c.must(&vm::ClassesBySignature { signature: sig.into() }).classes;
        found.first().unwrap_or_else(|| panic!("{sig} is not loaded")).type_id
    };
    let object_class = ClassId(class("Ljava/lang/Object;").0);
    let thread_class = ClassId(class("Ljava/lang/Thread;").0);
    let int_array = class("[I");
    let string = c.must(&vm::CreateString { utf: "hostile".into() }).string_object.into();
    c.must(&or::DisableCollection { object: string });
    let array = c.must(&jdwp_protocol::commands::array_type::NewInstance { arr_type: int_array.into(), length: 5 });
    let array = ArrayId(array.new_array.id.0);
    c.must(&or::DisableCollection { object: array.into() });
    let fields = c.must(&rt::Fields { ref_type: thread_class.into() }).declared;
    const STATIC: i32 = 0x0008;
    let thread_static_field = fields.iter().find(|f| f.mod_bits & STATIC != 0).expect("a static field").field_id;
    let thread_instance_field =
        fields.iter().find(|f| f.mod_bits & STATIC == 0 && f.signature == "I").expect("an int field").field_id;
    Ctx { main, object_class, thread_class, string, array, thread_static_field, thread_instance_field }
}

/// Deterministic "random" 64-bit values (SplitMix64), so a failure names the exact bytes sent.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

/// IDs that name nothing: the extremes, random values, and random values shaped like the
/// addresses of native data (what a `jmethodID` or a static `jfieldID` is in HotSpot), which an
/// agent that trusts them would dereference.
fn bad_ids(seed: u64) -> Vec<u64> {
    let mut rng = Rng(seed);
    let mut ids = vec![u64::MAX, 1 << 63, 0x7fff_ffff_ffff_ffff];
    ids.extend((0..3).map(|_| rng.next() | 1 << 40));
    ids.extend((0..3).map(|_| 0x0000_7f00_0000_0000 | (rng.next() & 0x00ff_ffff_fff8)));
    ids
}

// ---------------------------------------------------------------------------------------------
// Probes: one command each, with what our agent must answer and what the JDK's agent answers
// ---------------------------------------------------------------------------------------------

/// What the JDK's agent does with a probe.
#[derive(Clone, Copy, Debug)]
enum Jdk {
    /// Answers as ours must.
    Same,
    /// Answers differently; why that is fine (or why ours is better).
    Differs(Outcome, &'static str),
    /// Not sent to the JDK's agent: it does not survive it (or hangs), as the reason says.
    Skip(&'static str),
}

struct Probe {
    label: String,
    set: u8,
    cmd: u8,
    body: Vec<u8>,
    ours: Want,
    jdk: Jdk,
}

impl Probe {
    fn want(&self, which: Which) -> Option<Want> {
        match (which, self.jdk) {
            (Which::Ours, _) | (Which::Jdk, Jdk::Same) => Some(self.ours),
            (Which::Jdk, Jdk::Differs(outcome, _)) => Some(Want::Exactly(outcome)),
            (Which::Jdk, Jdk::Skip(_)) => None,
        }
    }
}

/// What a code, or a set of codes, means as a [`Want`].
trait Wanted {
    fn wanted(self) -> Want;
}

impl Wanted for ErrorCode {
    fn wanted(self) -> Want {
        Want::Exactly(Outcome::Reply(self))
    }
}

impl Wanted for &'static [ErrorCode] {
    fn wanted(self) -> Want {
        Want::OneOf(self)
    }
}

fn probe<C: Command>(c: &Conn, label: impl Into<String>, command: &C, ours: impl Wanted, jdk: Jdk) -> Probe {
    let label = format!("{} {}", C::QUALIFIED_NAME, label.into());
    Probe { label, set: C::SET, cmd: C::CMD, body: c.body(command), ours: ours.wanted(), jdk }
}

fn raw(label: impl Into<String>, set: u8, cmd: u8, body: Vec<u8>, ours: ErrorCode, jdk: Jdk) -> Probe {
    Probe { label: label.into(), set, cmd, body, ours: ours.wanted(), jdk }
}

// ---------------------------------------------------------------------------------------------
// Running a case
// ---------------------------------------------------------------------------------------------

/// One observation: what a hostile input got, and what it should have got.
struct Obs {
    label: String,
    got: Outcome,
    want: Want,
    /// Why the JDK's agent is expected to answer differently.
    note: Option<&'static str>,
}

impl Obs {
    fn new(label: impl Into<String>, got: Outcome, want: Want) -> Obs {
        Obs { label: label.into(), got, want, note: None }
    }
}

/// What an observation should be.
#[derive(Clone, Copy, Debug)]
enum Want {
    Exactly(Outcome),
    /// A reply with one of these codes (where the spec allows either).
    OneOf(&'static [ErrorCode]),
    /// Any reply, whatever its error code (random input).
    AnyReply,
}

impl Want {
    fn accepts(self, got: Outcome) -> bool {
        match (self, got) {
            (Want::Exactly(want), got) => got == want,
            (Want::OneOf(codes), Outcome::Reply(code)) => codes.contains(&code),
            (Want::AnyReply, Outcome::Reply(_)) => true,
            _ => false,
        }
    }
}

impl std::fmt::Display for Want {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Want::Exactly(o) => o.fmt(f),
            Want::OneOf(codes) => f.write_str(&codes.iter().map(|&c| code_name(c)).collect::<Vec<_>>().join(" or ")),
            Want::AnyReply => f.write_str("any reply"),
        }
    }
}

/// What a hostile part did.
#[derive(Default)]
struct Hostile {
    obs: Vec<Obs>,
    /// Whether one of the hostile connections received the VM start event: then the VM must have
    /// been resumed when it left.
    saw_vm_start: bool,
    /// Connections held open (silent peers) until the normal session is over.
    hold: Vec<TcpStream>,
    /// Inputs not sent, and why.
    skipped: Vec<String>,
}

/// Whether a case also runs against the JDK's agent.
#[derive(Clone, Copy)]
enum JdkRun {
    Yes,
    No(&'static str),
}

/// Runs `hostile` against our agent (and the JDK's), then a normal session; checks every answer,
/// that the VM survived and exits normally, and that our agent logged something containing one
/// of `log_needles`. Prints the table of answers.
fn run_case(case: &str, jdk: JdkRun, log_needles: &[&str], hostile: impl Fn(&Jvm) -> Hostile) {
    let mut report = String::new();
    let mut failures = Vec::new();
    let mut logs = Vec::new();
    let whiches: &[Which] = match jdk {
        JdkRun::Yes => &[Which::Ours, Which::Jdk],
        JdkRun::No(why) => {
            let _ = writeln!(report, "JDK's agent: not run ({why})");
            &[Which::Ours]
        }
    };
    for &which in whiches {
        let started = Instant::now();
        let jvm = Jvm::start(which, case);
        let h = hostile(&jvm);
        jvm.assert_alive(&format!("case {case}"));
        for o in &h.obs {
            let ok = o.want.accepts(o.got);
            let mut line =
                format!("{} {which:?}: {}: {} (want {})", if ok { "ok " } else { "BAD" }, o.label, o.got, o.want);
            if let Some(note) = o.note {
                let _ = write!(line, " [{note}]");
            }
            eprintln!("{case}: {line}");
            let _ = writeln!(report, "{line}");
            if !ok {
                failures.push(format!("{which:?} agent: {}: got {}, want {}", o.label, o.got, o.want));
            }
        }
        for skipped in &h.skipped {
            let line = format!("--  {which:?}: not sent: {skipped}");
            eprintln!("{case}: {line}");
            let _ = writeln!(report, "{line}");
        }
        let attach_timeout = if h.hold.is_empty() { TIMEOUT } else { AFTER_SILENT_PEER };
        normal_session(&jvm, h.saw_vm_start, attach_timeout);
        drop(h.hold);
        if which == Which::Ours {
            let log = jvm.log_text();
            if !log_needles.iter().any(|n| log.contains(n)) {
                failures.push(format!("our agent logged nothing with any of {log_needles:?}; its log:\n{log}"));
            }
            logs.extend(jvm.log.clone());
        }
        let _ = writeln!(report, "{which:?} agent: case and normal session in {:?}", started.elapsed());
    }
    assert!(failures.is_empty(), "{case}:\n{}\n\nall answers:\n{report}", failures.join("\n"));
    for log in logs {
        let _ = std::fs::remove_file(log);
    }
}

/// A case whose hostile input is a list of commands sent on the first connection, with the VM
/// suspended at its start; the connection is then dropped without `Dispose`.
fn probe_case(case: &str, jdk: JdkRun, probes: impl Fn(&Conn, &Ctx) -> Vec<Probe>) {
    run_case(case, jdk, &["command failed", "malformed command body"], |jvm| {
        let mut c = Conn::open(jvm);
        let ctx = context(&mut c);
        let mut obs = Vec::new();
        let mut skipped = Vec::new();
        for p in probes(&c, &ctx) {
            let Some(want) = p.want(jvm.which) else {
                if let Jdk::Skip(why) = p.jdk {
                    skipped.push(format!("{}: {why}", p.label));
                }
                continue;
            };
            let got = c.request(p.set, p.cmd, p.body.clone());
            if got == Outcome::Closed && !want.accepts(Outcome::Closed) {
                // Hung up instead of answering: say so if the VM went down with the connection.
                if let Some(status) = jvm.debuggee.wait_for_exit(Duration::from_secs(5)) {
                    panic!(
                        "{:?} agent: the JVM died ({status}) on {}\n{}",
                        jvm.which,
                        p.label,
                        jvm.debuggee.output_text()
                    );
                }
            }
            jvm.assert_alive(&p.label);
            let note = match p.jdk {
                Jdk::Differs(_, why) if jvm.which == Which::Jdk => Some(why),
                _ => None,
            };
            obs.push(Obs { label: p.label, got, want, note });
            if got == Outcome::Closed {
                break;
            }
        }
        Hostile { obs, saw_vm_start: true, skipped, ..Hostile::default() }
    });
}

// ---------------------------------------------------------------------------------------------
// The normal session that must work after every hostile input
// ---------------------------------------------------------------------------------------------

/// Attaches a well-behaved debugger and runs a short session to the end: Version, AllThreads, a
/// breakpoint in `HostileTarget.poll`, a local read there, then `main` is interrupted (which ends
/// the program's loop), the VM resumed and the debugger disposed. The program must exit 0.
///
/// The VM may still be held at its start: when no earlier peer completed the handshake, or when
/// those that did left before the VM got to report its start (the event then goes to the next
/// debugger, maybe this one; see [`next_composite`]). `saw_vm_start`: an earlier peer did receive
/// the event, so the VM must have been resumed when it left.
fn normal_session(jvm: &Jvm, saw_vm_start: bool, attach_timeout: Duration) {
    let who = format!("{:?} agent", jvm.which);
    let deadline = Instant::now() + attach_timeout;
    let mut s = loop {
        match RawSession::attach(&jvm.debuggee.address().to_string(), attach_timeout) {
            // See `connect_tcp`: the JDK's agent may not be listening again yet.
            Err(WireError::Transport(TransportError::Io { source, .. }))
                if source.kind() == ErrorKind::ConnectionRefused
                    && jvm.which == Which::Jdk
                    && Instant::now() < deadline =>
            {
                jvm.assert_alive("its listening socket went away");
                std::thread::yield_now();
            }
            Ok(s) => break s,
            Err(e) => panic!(
                "{who}: a normal debugger cannot attach after the hostile one: {e}\n{}",
                jvm.debuggee.output_text()
            ),
        }
    };
    let mut ours = Vec::new();
    let version = s.send(&vm::Version {}).unwrap();
    assert!(version.jdwp_major >= 1 && !version.vm_name.is_empty(), "{who}: {version:?}");
    let threads = s.send(&vm::AllThreads {}).unwrap().threads;
    let main = threads
        .iter()
        .copied()
        .find(|&thread| s.send(&tr::Name { thread }).unwrap().thread_name == "main")
        .unwrap_or_else(|| panic!("{who}: no thread named main"));
    let suspended = s.send(&tr::SuspendCount { thread: main }).unwrap().suspend_count;
    // Shown if the session fails.
    eprintln!("{who}: normal session: main's suspend count at attach {suspended}");
    if saw_vm_start {
        assert_eq!(suspended, 0, "{who}: main is still suspended after the debugger that got the VM start left");
    }
    // Everything stops while we look; the VM start event, if it comes to us, suspends everything
    // once more, and `next_composite` resumes that at once.
    s.send(&vm::Suspend {}).unwrap();

    // HostileTarget, loaded or not yet: every thread ends up suspended once either way.
    let class = match s.send(&vm::ClassesBySignature { signature: "LHostileTarget;".into() }).unwrap().classes.first() {
        Some(c) => c.type_id,
        None => {
            let set = er::Set {
                event_kind: EventKind::ClassPrepare,
                suspend_policy: SuspendPolicy::All,
                modifiers: vec![Modifier::ClassMatch { class_pattern: "HostileTarget".into() }],
            };
            let request = s.send(&set).unwrap().request_id;
            ours.push(request);
            s.send(&vm::Resume {}).unwrap();
            let prepared = next_composite(&mut s, &ours, "HostileTarget's class prepare");
            let Some(Event::ClassPrepare { type_id, .. }) = prepared.events.first().cloned() else {
                panic!("{who}: expected HostileTarget's class prepare, got {prepared:?}")
            };
            s.send(&er::Clear { event_kind: EventKind::ClassPrepare, request_id: request }).unwrap();
            type_id
        }
    };
    let methods = s.send(&rt::Methods { ref_type: class }).unwrap().declared;
    let poll = methods.iter().find(|m| m.name == "poll").expect("HostileTarget.poll").method_id;
    let line = fixture_line("HostileTarget.java", "@poll-use").unwrap() as i32;
    let table = s.send(&method::LineTable { ref_type: class, method_id: poll }).unwrap();
    let index = table.lines.iter().find(|l| l.line_number == line).expect("@poll-use in the line table");
    let vars = s.send(&method::VariableTable { ref_type: class, method_id: poll }).unwrap().slots;
    let slot = |name: &str| vars.iter().find(|v| v.name == name).unwrap_or_else(|| panic!("local {name}")).slot;
    let loc = Location {
        type_tag: TypeTag::Class,
        class_id: ClassId(class.0),
        method_id: poll,
        index: index.line_code_index as u64,
    };
    let bp = s
        .send(&er::Set {
            event_kind: EventKind::Breakpoint,
            suspend_policy: SuspendPolicy::All,
            modifiers: vec![Modifier::LocationOnly { loc }],
        })
        .unwrap()
        .request_id;
    ours.push(bp);
    s.send(&vm::Resume {}).unwrap();
    let hit = next_composite(&mut s, &ours, "the breakpoint in poll");
    let Some(&Event::Breakpoint { request_id, thread, location }) = hit.events.first() else {
        panic!("{who}: expected the breakpoint, got {hit:?}")
    };
    assert_eq!((request_id, thread, location), (bp, main, loc), "{who}");
    let frame = s.send(&tr::Frames { thread, start_frame: 0, length: 1 }).unwrap().frames[0].frame_id;
    let slots = vec![
        sf::SlotRequest { slot: slot("round"), sig_byte: Tag::Int },
        sf::SlotRequest { slot: slot("local"), sig_byte: Tag::Int },
    ];
    let values = s.send(&sf::GetValues { thread, frame, slots }).unwrap().values;
    let [Value::Int(round), Value::Int(local)] = values[..] else { panic!("{who}: locals {values:?}") };
    assert_eq!(local, round * 7, "{who}: poll's locals");

    s.send(&er::Clear { event_kind: EventKind::Breakpoint, request_id: bp }).unwrap();
    s.send(&tr::Interrupt { thread: main }).unwrap();
    s.send(&vm::Resume {}).unwrap();
    s.send(&vm::Dispose {}).unwrap();
    s.close();

    let status = jvm.debuggee.wait_for_exit(TIMEOUT).unwrap_or_else(|| {
        panic!("{who}: HostileTarget still runs {TIMEOUT:?} after the session\n{}", jvm.debuggee.output_text())
    });
    assert!(status.success(), "{who}: exit status {status}\n{}", jvm.debuggee.output_text());
    assert!(
        jvm.debuggee.stdout_text().contains("HostileTarget interrupted"),
        "{who}: the loop did not end by the interrupt\n{}",
        jvm.debuggee.output_text()
    );
}

/// The next event composite other than the VM start; fails on an event for a request this
/// debugger did not make.
///
/// The VM start event goes to the first debugger that is still there when the VM gets to report
/// it, which may be this one even though earlier peers completed the handshake: it is taken here,
/// wherever it comes in the stream, and the suspension it brought is undone at once.
fn next_composite(s: &mut RawSession, ours: &[i32], what: &str) -> Composite {
    loop {
        let packet = s.next_event().unwrap_or_else(|e| panic!("waiting for {what}: {e}"));
        let composite: Composite = codec::decode_body(&packet.body, s.id_sizes()).expect("a well-formed event");
        if let [Event::VmStart { thread, .. }] = composite.events.as_slice() {
            match composite.suspend_policy {
                SuspendPolicy::All => s.send(&vm::Resume {}).map(drop),
                SuspendPolicy::EventThread => s.send(&tr::Resume { thread: *thread }).map(drop),
                SuspendPolicy::None => Ok(()),
            }
            .unwrap_or_else(|e| panic!("resuming after the VM start: {e}"));
            continue;
        }
        for event in &composite.events {
            let request = match *event {
                Event::Breakpoint { request_id, .. } | Event::ClassPrepare { request_id, .. } => request_id,
                ref other => panic!("an event this debugger did not ask for: {other:?}"),
            };
            assert!(ours.contains(&request), "an event for request {request}, not one of ours ({ours:?}): {event:?}");
        }
        return composite;
    }
}

// ---------------------------------------------------------------------------------------------
// Broken framing: the connection closes, and the next debugger works
// ---------------------------------------------------------------------------------------------

/// An 11-byte header claiming `length`, for command set 1, command 1 (Version).
fn header(length: u32, id: u32) -> Vec<u8> {
    let mut h = length.to_be_bytes().to_vec();
    h.extend_from_slice(&id.to_be_bytes());
    h.extend_from_slice(&[0, 1, 1]);
    h
}

/// Each frame on a fresh connection (the first gets the VM start event); the agent must close it
/// without a reply.
fn framing_case(case: &str, jdk: JdkRun, frames: &[(&str, Vec<u8>)], finish_write: bool) {
    run_case(case, jdk, &["debugger connection failed", "JDWP packet"], |jvm| {
        let mut obs = Vec::new();
        let mut saw_vm_start = false;
        for (label, bytes) in frames {
            let mut c = Conn::open(jvm);
            c.write_bytes(bytes);
            if finish_write {
                let _ = c.stream.shutdown(Shutdown::Write);
            }
            let got = c.expect_closed();
            jvm.assert_alive(label);
            obs.push(Obs::new(*label, got, Want::Exactly(Outcome::Closed)));
            saw_vm_start |= c.saw_vm_start();
        }
        Hostile { obs, saw_vm_start, ..Hostile::default() }
    });
}

#[test]
fn a_length_below_the_header_size_closes_the_connection() {
    let frames: Vec<(&str, Vec<u8>)> = vec![
        ("length 0", header(0, 1)),
        ("length 3", header(3, 1)),
        ("length 10, then 20 more bytes", [header(10, 1), vec![0; 20]].concat()),
    ];
    framing_case("length_below_header", JdkRun::Yes, &frames, false);
}

#[test]
fn a_lying_length_over_64_mib_closes_the_connection_at_once() {
    let frames: Vec<(&str, Vec<u8>)> = vec![
        ("length 64 MiB + 1, 32 body bytes", [header(64 * 1024 * 1024 + 1, 1), vec![7; 32]].concat()),
        ("length 2^31 - 1, 32 body bytes", [header(0x7fff_ffff, 1), vec![7; 32]].concat()),
        ("length 0xffffffff, 32 body bytes", [header(0xffff_ffff, 1), vec![7; 32]].concat()),
    ];
    framing_case(
        "lying_length",
        JdkRun::No(
            "its transport accepts any length up to 2^31 - 1 and waits for that many bytes (a silent hang of the \
             session until the debugger leaves)",
        ),
        &frames,
        false,
    );
}

#[test]
fn a_frame_cut_short_by_the_peer_ends_the_session() {
    let frames: Vec<(&str, Vec<u8>)> = vec![
        ("length 1000, 40 bytes, then end of stream", [header(1000, 1), vec![0; 29]].concat()),
        ("5 bytes of a header, then end of stream", vec![0, 0, 0, 11, 0]),
    ];
    framing_case("cut_short", JdkRun::Yes, &frames, true);
}

// ---------------------------------------------------------------------------------------------
// Unknown commands, truncated and over-long bodies, huge counts
// ---------------------------------------------------------------------------------------------

/// What the JDK's agent does with a command number it does not know. JDK 17 reads the command set
/// and command as signed bytes and indexes its dispatch tables with them unchecked: a set of 128 or
/// more, command 0 or a command of 128 or more crashes the VM (SIGSEGV in `debugDispatch_getHandler`
/// or `debugLoop_run`); other unknown numbers answer `NOT_IMPLEMENTED`.
fn jdk_on_unknown(set: u8, cmd: u8) -> Jdk {
    if set >= 128 || cmd == 0 || cmd >= 128 {
        Jdk::Skip("the JDK's agent indexes its dispatch table with the signed number unchecked: the VM crashes")
    } else {
        Jdk::Same
    }
}

#[test]
fn unknown_command_sets_answer_not_implemented() {
    probe_case("unknown_command_set", JdkRun::Yes, |_, _| {
        // Set 128 is our vendor set (Profiler, see spec-notes/profiler.md): only its unused numbers.
        [(0, 1), (19, 1), (63, 1), (64, 100), (127, 1), (128, 99), (129, 1), (200, 1), (255, 255)]
            .into_iter()
            .map(|(set, cmd)| {
                raw(
                    format!("command {set}/{cmd}"),
                    set,
                    cmd,
                    vec![],
                    ErrorCode::NOT_IMPLEMENTED,
                    jdk_on_unknown(set, cmd),
                )
            })
            .collect()
    });
}

#[test]
fn unknown_commands_in_known_sets_answer_not_implemented() {
    probe_case("unknown_command", JdkRun::Yes, |_, _| {
        [(1, 0), (1, 99), (1, 255), (2, 0), (2, 99), (8, 1), (11, 99), (15, 4), (16, 0), (16, 99), (64, 1)]
            .into_iter()
            .map(|(set, cmd)| {
                raw(
                    format!("command {set}/{cmd}"),
                    set,
                    cmd,
                    vec![],
                    ErrorCode::NOT_IMPLEMENTED,
                    jdk_on_unknown(set, cmd),
                )
            })
            .collect()
    });
}

#[test]
fn truncated_bodies_answer_an_error() {
    probe_case("truncated_body", JdkRun::Yes, |c, ctx| {
        let cut = |mut body: Vec<u8>, keep: usize| {
            body.truncate(keep);
            body
        };
        let name = c.body(&tr::Name { thread: ctx.main });
        let set = c.body(&er::Set {
            event_kind: EventKind::ClassPrepare,
            suspend_policy: SuspendPolicy::All,
            modifiers: vec![Modifier::ClassMatch { class_pattern: "X".into() }],
        });
        let string = c.body(&vm::ClassesBySignature { signature: "Ljava/lang/Object;".into() });
        let values =
            c.body(&rt::GetValues { ref_type: ctx.thread_class.into(), fields: vec![ctx.thread_static_field] });
        let e = ErrorCode::ILLEGAL_ARGUMENT;
        let internal = Jdk::Differs(
            Outcome::Reply(ErrorCode::INTERNAL),
            "the JDK's agent reports reading past the end of a body as an internal error",
        );
        let field = Jdk::Differs(
            Outcome::Reply(ErrorCode::INVALID_FIELDID),
            "the JDK's agent looks up the partial field ID it read",
        );
        vec![
            raw("ThreadReference.Name, 3 of 8 ID bytes", 11, 1, cut(name.clone(), 3), e, internal),
            raw("ThreadReference.Name, empty body", 11, 1, vec![], e, internal),
            raw("VirtualMachine.ClassesBySignature, string cut in half", 1, 2, cut(string.clone(), 10), e, internal),
            raw("VirtualMachine.ClassesBySignature, 2 bytes of the length", 1, 2, cut(string, 2), e, internal),
            raw("EventRequest.Set, modifier missing", 15, 1, cut(set.clone(), 6), e, internal),
            raw("EventRequest.Set, pattern cut", 15, 1, cut(set.clone(), set.len() - 1), e, internal),
            raw("ReferenceType.GetValues, field ID cut", 2, 6, cut(values.clone(), values.len() - 3), e, field),
        ]
    });
}

#[test]
fn trailing_garbage_answers_an_error() {
    probe_case("trailing_garbage", JdkRun::Yes, |c, ctx| {
        let longer = |mut body: Vec<u8>, extra: &[u8]| {
            body.extend_from_slice(extra);
            body
        };
        let lenient = Jdk::Differs(
            Outcome::Reply(ErrorCode::NONE),
            "the JDK's agent reads what it needs and ignores the rest of the body",
        );
        let e = ErrorCode::ILLEGAL_ARGUMENT;
        vec![
            raw("VirtualMachine.Version + 4 bytes", 1, 1, vec![1, 2, 3, 4], e, lenient),
            raw("VirtualMachine.AllThreads + 1 byte", 1, 4, vec![0], e, lenient),
            raw(
                "ThreadReference.Name + 3 bytes",
                11,
                1,
                longer(c.body(&tr::Name { thread: ctx.main }), &[9; 3]),
                e,
                lenient,
            ),
            raw(
                "ReferenceType.Signature + 8 bytes",
                2,
                1,
                longer(c.body(&rt::Signature { ref_type: ctx.object_class.into() }), &[0xff; 8]),
                e,
                lenient,
            ),
        ]
    });
}

#[test]
fn huge_counts_in_bodies_answer_an_error() {
    probe_case("huge_count", JdkRun::Yes, |c, ctx| {
        let id = |v: u64| v.to_be_bytes().to_vec();
        let int = |v: i32| v.to_be_bytes().to_vec();
        let e = ErrorCode::ILLEGAL_ARGUMENT;
        let exits = Jdk::Skip("the JDK's agent reserves JNI local references for the count and makes the VM exit");
        let thread_class = id(ctx.thread_class.0);
        vec![
            raw(
                "ReferenceType.GetValues claiming 2^31-1 fields, none sent",
                2,
                6,
                [thread_class.clone(), int(i32::MAX)].concat(),
                e,
                exits,
            ),
            raw(
                "ReferenceType.GetValues claiming 2^31-1 fields, one sent",
                2,
                6,
                [thread_class.clone(), int(i32::MAX), id(ctx.thread_static_field.0)].concat(),
                e,
                exits,
            ),
            raw(
                "ReferenceType.GetValues claiming -1 fields",
                2,
                6,
                [thread_class.clone(), int(-1)].concat(),
                e,
                Jdk::Differs(Outcome::Reply(ErrorCode::NONE), "the JDK's agent takes a negative count for 0"),
            ),
            raw(
                "ObjectReference.GetValues claiming 2^31-1 fields",
                9,
                2,
                [id(ctx.main.0), int(i32::MAX)].concat(),
                e,
                exits,
            ),
            raw(
                "VirtualMachine.InstanceCounts claiming 2^31-1 types",
                1,
                21,
                int(i32::MAX),
                e,
                Jdk::Skip("the JDK's agent asks JVMTI for memory for the count and aborts the VM when refused"),
            ),
            raw(
                "VirtualMachine.ClassesBySignature, string of 2^31-1 bytes",
                1,
                2,
                int(i32::MAX),
                e,
                Jdk::Skip("the JDK's agent asks JVMTI for memory for the string and aborts the VM when refused"),
            ),
            raw(
                "VirtualMachine.CreateString, string of -1 bytes",
                1,
                11,
                int(-1),
                e,
                Jdk::Differs(Outcome::Reply(ErrorCode::OUT_OF_MEMORY), "the JDK's agent fails to allocate the string"),
            ),
            raw(
                "VirtualMachine.DisposeObjects claiming 2^31-1 requests",
                1,
                14,
                int(i32::MAX),
                e,
                Jdk::Differs(
                    Outcome::Reply(ErrorCode::INTERNAL),
                    "the JDK's agent reads requests until the body runs out (disposing of any it finds)",
                ),
            ),
            raw(
                "EventRequest.Set claiming 2^31-1 modifiers",
                15,
                1,
                [vec![8, 2], int(i32::MAX)].concat(),
                e,
                Jdk::Skip("the JDK's agent asks JVMTI for memory for the modifiers and aborts the VM when refused"),
            ),
            raw(
                "StackFrame.GetValues claiming 2^31-1 slots",
                16,
                1,
                [id(ctx.main.0), id(1), int(i32::MAX)].concat(),
                e,
                Jdk::Differs(
                    Outcome::Reply(ErrorCode::INTERNAL),
                    "the JDK's agent reads slots until the body runs out",
                ),
            ),
            raw(
                "ArrayReference.SetValues claiming 2^31-1 values",
                13,
                3,
                [id(ctx.array.0), int(0), int(i32::MAX)].concat(),
                e,
                Jdk::Differs(
                    Outcome::Reply(ErrorCode::INVALID_LENGTH),
                    "the JDK's agent checks the count against the array before reading the values",
                ),
            ),
            probe(
                c,
                "on an int[5], 2^31-1 elements from 0",
                &ar::GetValues { array_object: ctx.array, first_index: 0, length: i32::MAX },
                ErrorCode::INVALID_LENGTH,
                Jdk::Same,
            ),
            probe(
                c,
                "on an int[5], 1 element from 2^31-1",
                &ar::GetValues { array_object: ctx.array, first_index: i32::MAX, length: 1 },
                ErrorCode::INVALID_INDEX,
                Jdk::Same,
            ),
            probe(
                c,
                "on an int[5], -1 elements from 1 (-1 means: to the end)",
                &ar::GetValues { array_object: ctx.array, first_index: 1, length: -1 },
                ErrorCode::NONE,
                Jdk::Same,
            ),
            probe(
                c,
                "on an int[5], -2 elements from 0",
                &ar::GetValues { array_object: ctx.array, first_index: 0, length: -2 },
                ErrorCode::INVALID_LENGTH,
                Jdk::Same,
            ),
            probe(
                c,
                "on an int[5], 2^31-1 elements from 1 (the end overflows an int)",
                &ar::GetValues { array_object: ctx.array, first_index: 1, length: i32::MAX },
                ErrorCode::INVALID_LENGTH,
                Jdk::Skip(
                    "index + length overflows in the JDK's agent, which then asks JVMTI for 2 GiB and aborts the VM",
                ),
            ),
        ]
    });
}

// ---------------------------------------------------------------------------------------------
// Bad and stale IDs
// ---------------------------------------------------------------------------------------------

/// An ID that names nothing, where a thread was wanted: the spec lists both codes for these
/// commands (the JDK's agent fails at its object table lookup, so it answers `INVALID_OBJECT`).
const UNKNOWN_THREAD: &[ErrorCode] = &[ErrorCode::INVALID_OBJECT, ErrorCode::INVALID_THREAD];
/// The same where a class was wanted.
const UNKNOWN_CLASS: &[ErrorCode] = &[ErrorCode::INVALID_OBJECT, ErrorCode::INVALID_CLASS];

#[test]
fn random_object_ids_answer_invalid_object() {
    probe_case("bad_object_id", JdkRun::Yes, |c, _| {
        let mut probes = Vec::new();
        for r in bad_ids(1) {
            let o = ObjectId(r);
            let l = format!("{r:#018x}");
            let e = ErrorCode::INVALID_OBJECT;
            probes.push(probe(c, &l, &or::ReferenceType { object: o }, e, Jdk::Same));
            probes.push(probe(c, &l, &or::MonitorInfo { object: o }, e, Jdk::Same));
            probes.push(probe(c, &l, &or::DisableCollection { object: o }, e, Jdk::Same));
            probes.push(probe(c, &l, &sr::ValueCmd { string_object: o }, e, Jdk::Same));
            probes.push(probe(c, &l, &ar::Length { array_object: ArrayId(r) }, e, Jdk::Same));
        }
        probes
    });
}

#[test]
fn random_thread_ids_answer_invalid_object_or_thread() {
    probe_case("bad_thread_id", JdkRun::Yes, |c, ctx| {
        let mut probes = Vec::new();
        for r in bad_ids(2) {
            let t = ThreadId(r);
            let l = format!("{r:#018x}");
            let e = UNKNOWN_THREAD;
            let j = Jdk::Same;
            probes.push(probe(c, &l, &tr::Name { thread: t }, e, j));
            probes.push(probe(c, &l, &tr::Status { thread: t }, e, j));
            probes.push(probe(c, &l, &tr::Frames { thread: t, start_frame: 0, length: -1 }, e, j));
            probes.push(probe(c, &l, &tr::Suspend { thread: t }, e, j));
            probes.push(probe(c, &l, &tr::Resume { thread: t }, e, j));
            probes.push(probe(c, &l, &tr::SuspendCount { thread: t }, e, j));
        }
        let not_a_thread = ThreadId(ctx.string.0);
        let e = ErrorCode::INVALID_THREAD;
        probes.push(probe(c, "a String's ID", &tr::Name { thread: not_a_thread }, e, Jdk::Same));
        probes.push(probe(c, "a String's ID", &tr::Suspend { thread: not_a_thread }, e, Jdk::Same));
        probes
    });
}

#[test]
fn random_class_ids_answer_invalid_object_or_class() {
    probe_case("bad_class_id", JdkRun::Yes, |c, ctx| {
        let mut probes = Vec::new();
        for r in bad_ids(3) {
            let t = ReferenceTypeId(r);
            let l = format!("{r:#018x}");
            let e = UNKNOWN_CLASS;
            let j = Jdk::Same;
            probes.push(probe(c, &l, &rt::Signature { ref_type: t }, e, j));
            probes.push(probe(c, &l, &rt::Methods { ref_type: t }, e, j));
            probes.push(probe(c, &l, &rt::Fields { ref_type: t }, e, j));
            probes.push(probe(c, &l, &rt::GetValues { ref_type: t, fields: vec![] }, e, j));
            probes.push(probe(c, &l, &ct::Superclass { clazz: ClassId(r) }, e, j));
        }
        let not_a_class = ReferenceTypeId(ctx.string.0);
        let e = ErrorCode::INVALID_CLASS;
        probes.push(probe(c, "a String's ID", &rt::Signature { ref_type: not_a_class }, e, Jdk::Same));
        probes.push(probe(c, "a String's ID", &rt::Methods { ref_type: not_a_class }, e, Jdk::Same));
        probes
    });
}

#[test]
fn random_method_ids_answer_invalid_methodid() {
    let trusts = Jdk::Skip("the JDK's agent hands method IDs to JVMTI unchecked: the VM crashes");
    let crashes = "it hands method IDs to JVMTI unchecked: the first probe crashes the VM (JDK 17: SIGSEGV in \
                   Method::checked_resolve_jmethod_id)";
    probe_case("bad_method_id", JdkRun::No(crashes), |c, ctx| {
        let mut probes = Vec::new();
        let class = ReferenceTypeId(ctx.object_class.0);
        let mut ids = bad_ids(4);
        ids.push(0);
        for r in ids {
            let m = MethodId(r);
            let l = format!("{r:#018x}");
            let e = ErrorCode::INVALID_METHODID;
            probes.push(probe(c, &l, &method::LineTable { ref_type: class, method_id: m }, e, trusts));
            probes.push(probe(c, &l, &method::VariableTable { ref_type: class, method_id: m }, e, trusts));
            probes.push(probe(c, &l, &method::VariableTableWithGeneric { ref_type: class, method_id: m }, e, trusts));
            probes.push(probe(c, &l, &method::Bytecodes { ref_type: class, method_id: m }, e, trusts));
            // Method ID 0 is how obsolete methods appear in locations (as in the JDK's agent):
            // IsObsolete answers true for it rather than an error.
            let obsolete_e = if r == 0 { ErrorCode::NONE } else { e };
            probes.push(probe(c, &l, &method::IsObsolete { ref_type: class, method_id: m }, obsolete_e, trusts));
            let loc = Location { type_tag: TypeTag::Class, class_id: ctx.object_class, method_id: m, index: 0 };
            let bp = er::Set {
                event_kind: EventKind::Breakpoint,
                suspend_policy: SuspendPolicy::All,
                modifiers: vec![Modifier::LocationOnly { loc }],
            };
            probes.push(probe(c, format!("breakpoint at {l}"), &bp, e, trusts));
            let invoke = ct::InvokeMethod {
                clazz: ctx.object_class,
                thread: ctx.main,
                method_id: m,
                arguments: vec![],
                options: 0,
            };
            probes.push(probe(c, &l, &invoke, e, trusts));
            let new = ct::NewInstance {
                clazz: ctx.object_class,
                thread: ctx.main,
                method_id: m,
                arguments: vec![],
                options: 0,
            };
            probes.push(probe(c, &l, &new, e, trusts));
            let invoke = or::InvokeMethod {
                object: ctx.string,
                thread: ctx.main,
                clazz: ctx.object_class,
                method_id: m,
                arguments: vec![],
                options: 0,
            };
            probes.push(probe(c, &l, &invoke, e, trusts));
        }
        probes
    });
}

#[test]
fn random_field_ids_answer_invalid_fieldid() {
    let trusts = Jdk::Skip("the JDK's agent hands field IDs to JNI/JVMTI unchecked: the VM crashes or reads garbage");
    let crashes = "it hands field IDs to JNI and JVMTI unchecked: the VM crashes (JDK 17: SIGSEGV in \
                   JvmtiEnvBase::get_field_descriptor), and ClassType.SetValues even answers NONE for some";
    probe_case("bad_field_id", JdkRun::No(crashes), |c, ctx| {
        let mut probes = Vec::new();
        let thread_class = ReferenceTypeId(ctx.thread_class.0);
        let mut ids = bad_ids(5);
        ids.push(0);
        let e = ErrorCode::INVALID_FIELDID;
        for r in ids {
            let f = FieldId(r);
            let l = format!("{r:#018x}");
            probes.push(probe(c, &l, &rt::GetValues { ref_type: thread_class, fields: vec![f] }, e, trusts));
            probes.push(probe(c, &l, &or::GetValues { object: ctx.main.into(), fields: vec![f] }, e, trusts));
            let value = or::FieldValue { field_id: f, value: Value::Int(1) };
            probes.push(probe(c, &l, &ct::SetValues { clazz: ctx.thread_class, values: vec![value] }, e, trusts));
            probes.push(probe(c, &l, &or::SetValues { object: ctx.main.into(), values: vec![value] }, e, trusts));
            for kind in [EventKind::FieldAccess, EventKind::FieldModification] {
                let watch = er::Set {
                    event_kind: kind,
                    suspend_policy: SuspendPolicy::All,
                    modifiers: vec![Modifier::FieldOnly { declaring: thread_class, field_id: f }],
                };
                probes.push(probe(c, format!("{kind:?} watch on {l}"), &watch, e, trusts));
            }
        }
        probes
    });
}

#[test]
fn real_field_ids_where_they_do_not_belong_answer_invalid_fieldid() {
    let garbage = Jdk::Skip("the JDK's agent hands the field ID to JNI unchecked: it reads garbage or crashes");
    probe_case("misplaced_field_id", JdkRun::Yes, |c, ctx| {
        let thread_class = ReferenceTypeId(ctx.thread_class.0);
        let object_class = ReferenceTypeId(ctx.object_class.0);
        let instance = ctx.thread_instance_field;
        let stat = ctx.thread_static_field;
        let e = ErrorCode::INVALID_FIELDID;
        vec![
            // Controls: the right places work.
            probe(
                c,
                "a Thread static field of Thread",
                &rt::GetValues { ref_type: thread_class, fields: vec![stat] },
                ErrorCode::NONE,
                Jdk::Same,
            ),
            probe(
                c,
                "a Thread instance field of a thread",
                &or::GetValues { object: ctx.main.into(), fields: vec![instance] },
                ErrorCode::NONE,
                Jdk::Same,
            ),
            probe(
                c,
                "a Thread instance field of a String",
                &or::GetValues { object: ctx.string, fields: vec![instance] },
                e,
                garbage,
            ),
            probe(
                c,
                "a Thread static field through Object",
                &rt::GetValues { ref_type: object_class, fields: vec![stat] },
                e,
                Jdk::Differs(Outcome::Reply(ErrorCode::NONE), "JNI ignores the class a static field is read through"),
            ),
            probe(
                c,
                "a Thread instance field as a static one",
                &rt::GetValues { ref_type: thread_class, fields: vec![instance] },
                e,
                garbage,
            ),
            probe(
                c,
                "a Thread static field as an instance one",
                &or::GetValues { object: ctx.main.into(), fields: vec![stat] },
                e,
                garbage,
            ),
        ]
    });
}

#[test]
fn random_frame_ids_answer_invalid_frameid() {
    probe_case("bad_frame_id", JdkRun::Yes, |c, ctx| {
        let mut probes = Vec::new();
        let e = ErrorCode::INVALID_FRAMEID;
        for r in bad_ids(6) {
            let f = jdwp_protocol::FrameId(r);
            let l = format!("{r:#018x}");
            let slot = sf::SlotRequest { slot: 0, sig_byte: Tag::Int };
            probes.push(probe(c, &l, &sf::GetValues { thread: ctx.main, frame: f, slots: vec![slot] }, e, Jdk::Same));
            probes.push(probe(c, &l, &sf::ThisObject { thread: ctx.main, frame: f }, e, Jdk::Same));
            let set = sf::SlotValue { slot: 0, slot_value: Value::Int(1) };
            probes.push(probe(
                c,
                &l,
                &sf::SetValues { thread: ctx.main, frame: f, slot_values: vec![set] },
                e,
                Jdk::Same,
            ));
        }
        probes
    });
}

/// Sends a command and records its answer.
fn observe<C: Command>(c: &mut Conn, obs: &mut Vec<Obs>, label: &str, command: &C, want: ErrorCode) {
    let body = c.body(command);
    let got = c.request(C::SET, C::CMD, body);
    obs.push(Obs::new(format!("{} {label}", C::QUALIFIED_NAME), got, Want::Exactly(Outcome::Reply(want))));
}

/// Where `HostileTarget.poll` stops, found over a raw connection.
struct PollSite {
    loc: Location,
    slot_local: i32,
}

/// Runs the VM (suspended at its start) until `HostileTarget` is prepared, and finds `poll`'s
/// @poll-use line and its local `local`. Returns with every thread suspended by the event.
fn find_poll(c: &mut Conn) -> PollSite {
    let prepare = c
        .must(&er::Set {
            event_kind: EventKind::ClassPrepare,
            suspend_policy: SuspendPolicy::All,
            modifiers: vec![Modifier::ClassMatch { class_pattern: "HostileTarget".into() }],
        })
        .request_id;
    c.must(&vm::Resume {});
    let class = c.wait_event("HostileTarget's class prepare", |e| match *e {
        Event::ClassPrepare { request_id, type_id, .. } if request_id == prepare => Some(type_id),
        _ => None,
    });
    c.must(&er::Clear { event_kind: EventKind::ClassPrepare, request_id: prepare });
    let methods = c.must(&rt::Methods { ref_type: class }).declared;
    let poll = methods.iter().find(|m| m.name == "poll").expect("HostileTarget.poll").method_id;
    let line = fixture_line("HostileTarget.java", "@poll-use").unwrap() as i32;
    let table = c.must(&method::LineTable { ref_type: class, method_id: poll });
    let index = table.lines.iter().find(|l| l.line_number == line).expect("@poll-use in the line table");
    let vars = c.must(&method::VariableTable { ref_type: class, method_id: poll }).slots;
    let slot_local = vars.iter().find(|v| v.name == "local").expect("local `local`").slot;
    let loc = Location {
        type_tag: TypeTag::Class,
        class_id: ClassId(class.0),
        method_id: poll,
        index: index.line_code_index as u64,
    };
    PollSite { loc, slot_local }
}

#[test]
fn a_stale_frame_id_after_resume_answers_invalid_frameid() {
    run_case("stale_frame", JdkRun::Yes, &["command failed"], |jvm| {
        let mut c = Conn::open(jvm);
        let ctx = context(&mut c);
        let site = find_poll(&mut c);
        let bp = c
            .must(&er::Set {
                event_kind: EventKind::Breakpoint,
                suspend_policy: SuspendPolicy::All,
                modifiers: vec![Modifier::LocationOnly { loc: site.loc }],
            })
            .request_id;
        // Resumes, waits for the breakpoint, and returns the top frame there.
        let stop = |c: &mut Conn| {
            c.must(&vm::Resume {});
            let thread = c.wait_event("the breakpoint", |e| match *e {
                Event::Breakpoint { request_id, thread, .. } if request_id == bp => Some(thread),
                _ => None,
            });
            assert_eq!(thread, ctx.main);
            c.must(&tr::Frames { thread, start_frame: 0, length: 1 }).frames[0].frame_id
        };
        let thread = ctx.main;
        let slot = site.slot_local;
        let get = |frame| sf::GetValues { thread, frame, slots: vec![sf::SlotRequest { slot, sig_byte: Tag::Int }] };
        let set = |frame| sf::SetValues {
            thread,
            frame,
            slot_values: vec![sf::SlotValue { slot, slot_value: Value::Int(1) }],
        };
        let mut obs = Vec::new();
        let old = stop(&mut c);
        observe(&mut c, &mut obs, "the current frame (control)", &get(old), ErrorCode::NONE);
        let fresh = stop(&mut c);
        let stale = ErrorCode::INVALID_FRAMEID;
        observe(&mut c, &mut obs, "a frame of the previous stop", &get(old), stale);
        observe(&mut c, &mut obs, "a frame of the previous stop", &sf::ThisObject { thread, frame: old }, stale);
        observe(&mut c, &mut obs, "a frame of the previous stop", &set(old), stale);
        observe(&mut c, &mut obs, "the current frame (control)", &get(fresh), ErrorCode::NONE);
        // Leave without Dispose, with the breakpoint set and every thread suspended at it.
        Hostile { obs, saw_vm_start: true, ..Hostile::default() }
    });
}

// ---------------------------------------------------------------------------------------------
// The handshake: silent, slow, wrong
// ---------------------------------------------------------------------------------------------

/// The agent must not let a peer that never completes the handshake keep the next debugger out.
/// (The JDK's agent lets the next debugger in about 2 s after a silent peer connected, at once after
/// a partial handshake.)
fn silent_peer_case(case: &str, sent: &'static [u8]) {
    run_case(case, JdkRun::Yes, &["failed to attach"], |jvm| {
        let mut peer = connect_tcp(jvm);
        peer.write_all(sent).unwrap();
        // The agent now waits for the rest of this peer's handshake, which never comes; the
        // connection stays open until the normal session is over.
        Hostile { hold: vec![peer], ..Hostile::default() }
    });
}

#[test]
fn a_silent_peer_does_not_keep_the_next_debugger_out() {
    silent_peer_case("silent_peer", b"");
}

#[test]
fn a_peer_stalling_in_the_handshake_does_not_keep_the_next_debugger_out() {
    silent_peer_case("stalled_handshake", b"JDWP-Hand");
}

#[test]
fn a_wrong_handshake_is_refused_and_the_next_debugger_gets_in() {
    run_case("wrong_handshake", JdkRun::Yes, &["failed to attach"], |jvm| {
        let mut obs = Vec::new();
        let attempts: [(&str, &[u8]); 5] = [
            ("JDWP-Handshakx", b"JDWP-Handshakx"),
            ("jdwp-handshake", b"jdwp-handshake"),
            ("14 zero bytes", &[0; 14]),
            ("an HTTP request", b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n"),
            ("a JDWP packet instead of the handshake", &[0, 0, 0, 11, 0, 0, 0, 1, 0, 1, 1, 0, 0, 0]),
        ];
        for (label, bytes) in attempts {
            let mut peer = connect_tcp(jvm);
            peer.write_all(bytes).unwrap();
            let mut echoed = Vec::new();
            let got = match peer.read_to_end(&mut echoed) {
                Ok(_) => echoed.len(),
                Err(e) if is_closed(e.kind()) => echoed.len(),
                Err(e) if is_timeout(e.kind()) => panic!("{label}: the agent neither answered nor closed: {e}"),
                Err(e) => panic!("{label}: {e}"),
            };
            let got = if got == 0 { Outcome::Closed } else { Outcome::ClosedAfter(got) };
            jvm.assert_alive(label);
            obs.push(Obs::new(format!("handshake {label}"), got, Want::Exactly(Outcome::Closed)));
        }
        Hostile { obs, ..Hostile::default() }
    });
}

// ---------------------------------------------------------------------------------------------
// Random packets and random bytes after a valid handshake
// ---------------------------------------------------------------------------------------------

#[test]
fn random_packets_and_random_bytes_after_the_handshake() {
    run_case(
        "random_input",
        JdkRun::No("random IDs land in method and field ID positions, which crash the JDK's agent"),
        &["command failed", "malformed command body"],
        |jvm| {
            let mut obs = Vec::new();
            let mut rng = Rng(0x5eed);
            // Well-framed packets: random command numbers (mostly in the defined sets), random
            // bodies of 0 to 48 bytes. Never VirtualMachine.Exit or Dispose, which would end what we
            // test (with a random 4-byte body, Exit would even succeed).
            let mut c = Conn::open(jvm);
            let mut bytes = Vec::new();
            let mut sent = Vec::new();
            for i in 0..300u32 {
                let set = match rng.below(4) {
                    0 => rng.next() as u8,
                    _ => [1, 2, 3, 4, 5, 6, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 64][rng.below(17) as usize],
                };
                let cmd = match rng.below(4) {
                    0 => rng.next() as u8,
                    _ => 1 + rng.below(22) as u8,
                };
                let (set, cmd) = if set == 1 && (cmd == 6 || cmd == 10) { (1, 99) } else { (set, cmd) };
                let len = rng.below(49) as usize;
                let body = rng.bytes(len);
                let id = 0x1000 + i;
                bytes.extend(Packet::command(id, set, cmd, body.clone()).encode().unwrap());
                sent.push((id, set, cmd, body));
            }
            c.write_bytes(&bytes);
            let mut replies = std::collections::HashMap::new();
            while replies.len() < sent.len() {
                match c.read() {
                    Some(p) if p.is_reply() => {
                        replies.insert(p.id, reply_code(&p));
                    }
                    Some(_) => {} // events: a random request may have been accepted
                    None => break,
                }
            }
            jvm.assert_alive("300 random packets");
            for (id, set, cmd, body) in sent {
                let got = replies.get(&id).map_or(Outcome::Closed, |&code| Outcome::Reply(code));
                let label = format!("packet {id:#x}: command {set}/{cmd}, body {body:02x?}");
                obs.push(Obs::new(label, got, Want::AnyReply));
            }
            // Then bytes that are no packet at all.
            for (n, len) in [(1, 64), (2, 1000), (3, 70_000)] {
                let mut junk = Rng(0xbad_0000 + n).bytes(len);
                // A length field of 11 to 64 MiB announces a packet that never comes whole: the
                // end of our stream must then end the session too.
                junk[0] &= 0x03;
                c.write_bytes(&junk);
                let _ = c.stream.shutdown(Shutdown::Write);
                let mut replied = 0;
                let got = loop {
                    match c.read() {
                        Some(p) if p.is_reply() => replied += 1,
                        Some(_) => {}
                        None => break Outcome::Closed,
                    }
                };
                jvm.assert_alive("random bytes");
                let label = format!("{len} random bytes (seed {n}), {replied} replies");
                obs.push(Obs::new(label, got, Want::Exactly(Outcome::Closed)));
                if n < 3 {
                    c = Conn::open(jvm);
                }
            }
            Hostile { obs, ..Hostile::default() }
        },
    );
}
