//! Reattach: debuggers come and go while the debuggee works, and leave it as they found it.
//!
//! The issue: "100 attach/detach cycles with breakpoints set and threads suspended at disconnect:
//! the debuggee finishes its work and exits normally". `ReattachLoop` calls `step(i)` every
//! millisecond until a stop file appears. One JVM (`server=y`: the agent keeps its listening port
//! and accepts the next debugger after each one leaves) sees [`CYCLES`] debuggers, each of which
//! attaches, sets a breakpoint in `step` (plus, by turns, a class-prepare request that never fires,
//! an exception request that suspends nothing, and a single step), waits for the breakpoint with
//! all threads suspended,
//! suspends the stopped thread once more (and by turns the whole VM), and leaves: every other
//! debugger with `VirtualMachine.Dispose`, the others by dropping the connection. Each debugger
//! also checks that nothing of its predecessors survived: no event for a request it did not make,
//! and `step`'s argument strictly greater than what the previous one saw (the program moved on).
//! After the last cycle the test creates the stop file and the program must exit 0 with a sum
//! that proves every step ran exactly once.
//!
//! Runs against our agent (`target/<profile>/libjdwp_agent.so`, built with
//! `cargo build -p jdwp-agent`); the same cycles against the JDK's agent are a reference run,
//! `#[ignore]`d to keep CI time down (`cargo test -p jdwp-test-rig --test agent_reattach --
//! --ignored`).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use jdwp_protocol::commands::event::{Composite, Event};
use jdwp_protocol::commands::event_request::{self as er, Modifier};
use jdwp_protocol::commands::stack_frame as sf;
use jdwp_protocol::commands::{method, reference_type as rt, thread_reference as tr, virtual_machine as vm};
use jdwp_protocol::{
    EventKind, Location, ReferenceTypeId, StepDepth, StepSize, SuspendPolicy, Tag, ThreadId, TypeTag, Value, codec,
    suspend_status,
};
use test_rig::wire::RawSession;
use test_rig::{Agent, DEFAULT_JDK_AGENT_OPTIONS, Debuggee, FREE_PORT, fixture_line};

/// Debuggers that come and go.
const CYCLES: usize = 100;

/// Generous: the tests must pass on a loaded 2-core machine. Every wait is on an event or a reply.
const TIMEOUT: Duration = Duration::from_secs(60);

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

/// What one debugger needs to know about the program; looked up afresh in every session, since IDs
/// need not survive a detach.
struct Target {
    class: ReferenceTypeId,
    breakpoint: Location,
    /// Frame slot of `step`'s argument `i`.
    slot_i: i32,
}

fn decode_event(s: &RawSession, packet: &jdwp_transports::Packet) -> Composite {
    codec::decode_body(&packet.body, s.id_sizes()).unwrap_or_else(|e| panic!("undecodable event {packet:?}: {e}"))
}

/// Waits for an event of ours that `pick` accepts; fails on an event for a request this debugger did
/// not make (a request of an earlier debugger that survived its detach) and on VM death.
fn wait_for<T>(s: &mut RawSession, ours: &[i32], what: &str, mut pick: impl FnMut(&Event) -> Option<T>) -> T {
    loop {
        let packet = s.next_event().unwrap_or_else(|e| panic!("waiting for {what}: {e}"));
        let composite = decode_event(s, &packet);
        for event in &composite.events {
            if let Some(found) = pick(event) {
                return found;
            }
            match event {
                Event::VmDeath { .. } => panic!("the VM died while waiting for {what}"),
                Event::VmStart { .. } => {}
                other => {
                    let request = event_request_id(other);
                    assert!(
                        ours.contains(&request),
                        "event for request {request}, which this debugger did not make (requests {ours:?}): {other:?}"
                    );
                }
            }
        }
    }
}

fn event_request_id(event: &Event) -> i32 {
    match *event {
        Event::VmStart { request_id, .. }
        | Event::SingleStep { request_id, .. }
        | Event::Breakpoint { request_id, .. }
        | Event::MethodEntry { request_id, .. }
        | Event::MethodExit { request_id, .. }
        | Event::MethodExitWithReturnValue { request_id, .. }
        | Event::MonitorContendedEnter { request_id, .. }
        | Event::MonitorContendedEntered { request_id, .. }
        | Event::MonitorWait { request_id, .. }
        | Event::MonitorWaited { request_id, .. }
        | Event::Exception { request_id, .. }
        | Event::ThreadStart { request_id, .. }
        | Event::ThreadDeath { request_id, .. }
        | Event::ClassPrepare { request_id, .. }
        | Event::ClassUnload { request_id, .. }
        | Event::FieldAccess { request_id, .. }
        | Event::FieldModification { request_id, .. }
        | Event::VmDeath { request_id } => request_id,
    }
}

/// Finds `ReattachLoop` (waiting for it to be prepared in the first session) and where to stop.
/// Returns with every thread suspended once more than when called: by a `ClassPrepare` event in
/// the first session (the VM starts suspended, and that suspension is resumed here), by
/// `VirtualMachine.Suspend` otherwise.
fn find_target(s: &mut RawSession, first: bool) -> Target {
    let sig = "LReattachLoop;";
    if !first {
        s.send(&vm::Suspend {}).unwrap();
    }
    let loaded = s.send(&vm::ClassesBySignature { signature: sig.into() }).unwrap().classes;
    let class = match loaded.first() {
        Some(c) if !first => c.type_id,
        _ => {
            assert!(first, "ReattachLoop not loaded after the first session");
            let set = er::Set {
                event_kind: EventKind::ClassPrepare,
                suspend_policy: SuspendPolicy::All,
                modifiers: vec![Modifier::ClassMatch { class_pattern: "ReattachLoop".into() }],
            };
            let request = s.send(&set).unwrap().request_id;
            s.send(&vm::Resume {}).unwrap();
            let class = wait_for(s, &[request], "ReattachLoop's class prepare", |e| match e {
                Event::ClassPrepare { request_id, type_id, .. } if *request_id == request => Some(*type_id),
                _ => None,
            });
            s.send(&er::Clear { event_kind: EventKind::ClassPrepare, request_id: request }).unwrap();
            class
        }
    };
    let methods = s.send(&rt::Methods { ref_type: class }).unwrap().declared;
    let step = methods.iter().find(|m| m.name == "step").expect("ReattachLoop.step").method_id;
    let line = fixture_line("ReattachLoop.java", "@step-add").unwrap() as i32;
    let table = s.send(&method::LineTable { ref_type: class, method_id: step }).unwrap();
    let index = table.lines.iter().find(|l| l.line_number == line).expect("a line table entry for @step-add");
    let vars = s.send(&method::VariableTable { ref_type: class, method_id: step }).unwrap();
    let slot_i = vars.slots.iter().find(|v| v.name == "i").expect("step's argument i").slot;
    let breakpoint = Location {
        type_tag: TypeTag::Class,
        class_id: class.into(),
        method_id: step,
        index: index.line_code_index as u64,
    };
    Target { class, breakpoint, slot_i }
}

fn main_thread(s: &mut RawSession) -> ThreadId {
    let threads = s.send(&vm::AllThreads {}).unwrap().threads;
    threads
        .into_iter()
        .find(|&thread| s.send(&tr::Name { thread }).is_ok_and(|r| r.thread_name == "main"))
        .expect("a thread named main")
}

fn set_request(s: &mut RawSession, kind: EventKind, policy: SuspendPolicy, modifiers: Vec<Modifier>) -> i32 {
    s.send(&er::Set { event_kind: kind, suspend_policy: policy, modifiers }).unwrap().request_id
}

/// Attaches to the debuggee. Our agent keeps listening between sessions, so a connection waits in
/// the backlog until the agent is done with the previous debugger. The JDK's agent closes its
/// listening socket during a session and opens it again afterwards (`relisten`): a connection
/// refused in between is retried until the deadline (only the JDK reference run needs this).
fn attach(jvm: &Debuggee, relisten: bool) -> Result<RawSession, test_rig::wire::WireError> {
    let deadline = Instant::now() + TIMEOUT;
    loop {
        match RawSession::attach(&jvm.address().to_string(), TIMEOUT) {
            Err(test_rig::wire::WireError::Transport(e))
                if relisten && Instant::now() < deadline && e.to_string().contains("refused") =>
            {
                std::thread::yield_now();
            }
            result => return result,
        }
    }
}

/// What one cycle saw.
struct Seen {
    /// `step`'s argument at the breakpoint.
    i: i32,
}

/// One debugger: attach, stop in `step` with everything suspended, pile on suspensions and pending
/// requests, leave (with Dispose on even cycles, by dropping the connection on odd ones).
fn cycle(jvm: &Debuggee, n: usize, relisten: bool) -> Seen {
    let mut s =
        attach(jvm, relisten).unwrap_or_else(|e| panic!("cycle {n}: attaching failed: {e}\n{}", jvm.output_text()));
    let first = n == 0;
    if first {
        // suspend=y: the VM announces its start with everything suspended.
        wait_for(&mut s, &[], "VM start", |e| matches!(e, Event::VmStart { .. }).then_some(()));
    }
    if !first {
        // The previous debugger's suspensions must all be gone, whichever way it left.
        let main = main_thread(&mut s);
        let count = s.send(&tr::SuspendCount { thread: main }).unwrap().suspend_count;
        let status = s.send(&tr::Status { thread: main }).unwrap();
        assert_eq!(count, 0, "cycle {n}: main is still suspended at attach ({status:?})");
        assert_eq!(status.suspend_status & suspend_status::SUSPENDED, 0, "cycle {n}: main at attach: {status:?}");
    }
    let target = find_target(&mut s, first);
    let mut ours = Vec::new();
    let bp = set_request(
        &mut s,
        EventKind::Breakpoint,
        SuspendPolicy::All,
        vec![Modifier::LocationOnly { loc: target.breakpoint }],
    );
    ours.push(bp);
    if n % 3 == 1 {
        // Pending at disconnect; never fires (no such class).
        let r = set_request(
            &mut s,
            EventKind::ClassPrepare,
            SuspendPolicy::All,
            vec![Modifier::ClassMatch { class_pattern: "no.such.Class*".into() }],
        );
        ours.push(r);
    }
    if n % 3 == 2 {
        // Exceptions inside the loop are possible (JDK internals), so this one suspends nothing.
        let r = set_request(
            &mut s,
            EventKind::Exception,
            SuspendPolicy::None,
            vec![Modifier::ExceptionOnly { exception_or_null: ReferenceTypeId(0), caught: true, uncaught: true }],
        );
        ours.push(r);
    }
    s.send(&vm::Resume {}).unwrap();
    let thread: ThreadId = wait_for(&mut s, &ours, "the breakpoint", |e| match e {
        Event::Breakpoint { request_id, thread, location } if *request_id == bp => {
            assert_eq!(*location, target.breakpoint, "cycle {n}");
            Some(*thread)
        }
        _ => None,
    });

    // All threads are suspended by the event; read the argument of the stopped call.
    let frames = s.send(&tr::Frames { thread, start_frame: 0, length: 1 }).unwrap().frames;
    assert_eq!(frames[0].location.method_id, target.breakpoint.method_id, "cycle {n}: top frame is step");
    let values = s
        .send(&sf::GetValues {
            thread,
            frame: frames[0].frame_id,
            slots: vec![sf::SlotRequest { slot: target.slot_i, sig_byte: Tag::Int }],
        })
        .unwrap()
        .values;
    let Some(&Value::Int(i)) = values.first() else { panic!("cycle {n}: step's argument: {values:?}") };

    // Leave more behind: the thread suspended once more (and every fifth time the whole VM), and
    // every fourth time a pending single step on it.
    s.send(&tr::Suspend { thread }).unwrap();
    let mut expected_count = 2;
    if n.is_multiple_of(5) {
        s.send(&vm::Suspend {}).unwrap();
        expected_count += 1;
    }
    let count = s.send(&tr::SuspendCount { thread }).unwrap().suspend_count;
    assert_eq!(count, expected_count, "cycle {n}: suspend count of the stopped thread");
    if n.is_multiple_of(4) {
        let step = Modifier::Step { thread, size: StepSize::Line, depth: StepDepth::Over };
        ours.push(set_request(&mut s, EventKind::SingleStep, SuspendPolicy::All, vec![step]));
    }
    assert_eq!(s.send(&rt::Signature { ref_type: target.class }).unwrap().signature, "LReattachLoop;");

    if n.is_multiple_of(2) {
        s.send(&vm::Dispose {}).unwrap();
        s.close();
    } else {
        drop(s); // no goodbye: the agent sees the connection end
    }
    Seen { i }
}

fn run_cycles(agent: Agent, relisten: bool) {
    let stop = Path::new(env!("CARGO_TARGET_TMPDIR")).join("agent-reattach").join(format!(
        "stop-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    std::fs::create_dir_all(stop.parent().unwrap()).unwrap();
    let _ = std::fs::remove_file(&stop);
    let jvm = Debuggee::builder("ReattachLoop").arg(&stop).agent(agent).spawn().expect("ReattachLoop starts");

    let started = Instant::now();
    let mut last_i = -1;
    let mut slowest = Duration::ZERO;
    for n in 0..CYCLES {
        let t = Instant::now();
        let seen = cycle(&jvm, n, relisten);
        slowest = slowest.max(t.elapsed());
        assert!(seen.i > last_i, "cycle {n}: step({}) after step({last_i}): the program did not move on", seen.i);
        last_i = seen.i;
        assert!(jvm.wait_for_exit(Duration::ZERO).is_none(), "cycle {n}: the JVM exited\n{}", jvm.output_text());
    }
    let cycles_took = started.elapsed();

    std::fs::write(&stop, b"stop").unwrap();
    let status = jvm.wait_for_exit(TIMEOUT).unwrap_or_else(|| {
        panic!("ReattachLoop still running {TIMEOUT:?} after the stop file appeared\n{}", jvm.output_text())
    });
    let _ = std::fs::remove_file(&stop);
    assert!(status.success(), "exit status {status}\n{}", jvm.output_text());
    let line = jvm.wait_for_line("ReattachLoop done", Duration::ZERO).expect("the done line");
    let (steps, sum) = parse_done(&line);
    let expected: i64 = (0..steps).map(|i| i * i).sum();
    assert_eq!(sum, expected, "every step ran exactly once: {line}");
    assert!(steps > i64::from(last_i), "{line}, last breakpoint at step({last_i})");
    eprintln!(
        "{CYCLES} cycles in {cycles_took:?} ({:?} per cycle, slowest {slowest:?}); {steps} steps in all",
        cycles_took / CYCLES as u32
    );
}

/// Parses "ReattachLoop done steps=N sum=S".
fn parse_done(line: &str) -> (i64, i64) {
    let field = |name: &str| -> i64 {
        let start = line.find(name).unwrap_or_else(|| panic!("no {name} in {line:?}")) + name.len();
        line[start..].split_whitespace().next().and_then(|v| v.parse().ok()).unwrap_or_else(|| panic!("{line:?}"))
    };
    (field("steps="), field("sum="))
}

#[test]
fn a_hundred_debuggers_come_and_go_and_the_program_finishes_normally() {
    run_cycles(Agent::path(our_agent(), DEFAULT_JDK_AGENT_OPTIONS), false);
}

#[test]
#[ignore = "reference run against the JDK's agent (validates the test itself); run with --ignored"]
fn the_same_cycles_against_the_jdk_agent() {
    // The JDK's agent listens anew after each session, on a new port when given port 0: give it a
    // fixed one.
    run_cycles(Agent::jdk(format!("transport=dt_socket,server=y,suspend=y,address=127.0.0.1:{FREE_PORT}")), true);
}
