//! Event back-pressure: a debugger that is slow, stuck or holding events costs the program time,
//! never its memory (issue 22, part 2; spec-notes/event-queue.md).
//!
//! `Flood` calls `t0` .. `t7` in turn, [`CALLS`] calls in all, and the debugger asks for every
//! method entry (no filter, suspend policy none). Each test then lets the agent's queue fill up:
//!
//! 1. the debugger stops reading: the socket fills, the event helper blocks on it, the queue
//!    reaches its bound and the program waits;
//! 2. the debugger holds events (`HoldEvents`) and goes on sending commands, which are answered;
//! 3. the debugger vanishes while the queue is full: the program runs on and exits normally, and
//!    a new debugger can attach and finds nothing of the old session.
//!
//! The signal that the bound was reached is deterministic: our agent's debug log (to stderr here)
//! says so when a thread starts to wait. Until then the program must not finish (it would have,
//! with an unbounded queue) and its RSS must stay under the baseline plus [`RSS_MARGIN_KB`]; the
//! same holds for the peak (`VmHWM`) once the bound is reached. In 1 and 2 the debugger then reads
//! everything: every one of the [`CALLS`] entries arrives, in the program's order (`t0`, `t1`, ...,
//! `t7`, `t0`, ...), none lost, none twice.
//!
//! Our agent is `target/<profile>/libjdwp_agent.so`: build it first with `cargo build -p
//! jdwp-agent`.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use jdwp_protocol::commands::event::{Composite, Event};
use jdwp_protocol::commands::event_request::{self as er, Modifier};
use jdwp_protocol::commands::{reference_type as rt, virtual_machine as vm};
use jdwp_protocol::{EventKind, MethodId, SuspendPolicy, ThreadId, codec};
use test_rig::wire::RawSession;
use test_rig::{Agent, DEFAULT_JDK_AGENT_OPTIONS, Debuggee};

/// Calls the program makes: far more entries than the socket's buffers and the agent's bound hold
/// (each entry is about 55 bytes on the wire, and a loopback socket buffers a few MB), so that
/// with no bound the program would run to its end while the debugger reads nothing.
const CALLS: u64 = 300_000;

/// Generous: the tests must pass on a loaded 2-core machine.
const TIMEOUT: Duration = Duration::from_secs(180);

/// How much the debuggee's RSS may grow over its baseline (taken once the program's class is
/// prepared). An unbounded queue grows by hundreds of bytes per event.
const RSS_MARGIN_KB: u64 = 100 * 1024;

/// What our agent logs when the bound is reached and an application thread waits.
const AT_BOUND: &str = "event backlog at its bound";

fn our_agent() -> PathBuf {
    test_rig::our_agent_library()
        .unwrap_or_else(|e| panic!("{e}: build it first with `cargo build -p jdwp-agent` (same profile as the tests)"))
}

/// A field of `/proc/<pid>/status`, in kB.
fn status_kb(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("the debuggee's /proc status");
    let line = status.lines().find(|l| l.starts_with(field)).unwrap_or_else(|| panic!("no {field} in {status}"));
    line.split_whitespace().nth(1).and_then(|v| v.parse().ok()).unwrap_or_else(|| panic!("bad line {line:?}"))
}

/// The flooding program under our agent, with the debugger's method entry request set.
struct Flood {
    jvm: Debuggee,
    s: RawSession,
    main: ThreadId,
    /// `t0` .. `t7`.
    methods: [MethodId; 8],
    /// VmRSS once `Flood` is prepared, before any method entry event.
    baseline_kb: u64,
}

impl Flood {
    /// Starts `Flood` (with a stop file: it waits for it after its calls), stops it at its class
    /// prepare, and asks for every method entry, suspending nothing. The VM is left suspended.
    fn start(stop: Option<&Path>) -> Flood {
        let options = format!("{DEFAULT_JDK_AGENT_OPTIONS},loglevel=debug");
        let mut builder = Debuggee::builder("Flood")
            .agent(Agent::path(our_agent(), options))
            .jvm_option("-Xmx64m")
            .arg(CALLS.to_string());
        if let Some(stop) = stop {
            builder = builder.arg(stop.as_os_str());
        }
        let jvm = builder.spawn().expect("Flood starts under our agent");
        let mut s = RawSession::attach(&jvm.address().to_string(), TIMEOUT).expect("attach");
        // suspend=y: the VM announces its start with everything suspended; a resume sent before
        // that would come before the suspension it is meant to undo.
        loop {
            let packet = s.next_event().expect("the VM start event");
            let composite: Composite = codec::decode_body(&packet.body, s.id_sizes()).unwrap();
            if composite.events.iter().any(|e| matches!(e, Event::VmStart { .. })) {
                break;
            }
        }
        let prepare = er::Set {
            event_kind: EventKind::ClassPrepare,
            suspend_policy: SuspendPolicy::All,
            modifiers: vec![Modifier::ClassMatch { class_pattern: "Flood".into() }],
        };
        let prepare = s.send(&prepare).unwrap().request_id;
        s.send(&vm::Resume {}).unwrap();
        let (class, main) = loop {
            let packet = s.next_event().expect("Flood's class prepare");
            let composite: Composite = codec::decode_body(&packet.body, s.id_sizes()).unwrap();
            let found = composite.events.iter().find_map(|e| match e {
                Event::ClassPrepare { request_id, type_id, thread, .. } if *request_id == prepare => {
                    Some((*type_id, *thread))
                }
                _ => None,
            });
            if let Some(found) = found {
                break found;
            }
        };
        s.send(&er::Clear { event_kind: EventKind::ClassPrepare, request_id: prepare }).unwrap();
        let declared = s.send(&rt::Methods { ref_type: class }).unwrap().declared;
        let methods = std::array::from_fn(|k| {
            declared.iter().find(|m| m.name == format!("t{k}")).unwrap_or_else(|| panic!("Flood.t{k}")).method_id
        });
        let baseline_kb = status_kb(jvm.pid(), "VmRSS:");
        let entry =
            er::Set { event_kind: EventKind::MethodEntry, suspend_policy: SuspendPolicy::None, modifiers: vec![] };
        s.send(&entry).unwrap();
        Flood { jvm, s, main, methods, baseline_kb }
    }

    fn limit_kb(&self) -> u64 {
        self.baseline_kb + RSS_MARGIN_KB
    }

    /// Fails if the debuggee's memory is past the limit (`field`: VmRSS or VmHWM).
    fn assert_memory(&self, field: &str, when: &str) {
        let kb = status_kb(self.jvm.pid(), field);
        assert!(
            kb <= self.limit_kb(),
            "{when}: {field} {kb} kB, over the baseline {} kB + {RSS_MARGIN_KB} kB",
            self.baseline_kb
        );
    }

    /// Waits until our agent says the bound is reached (and a program thread waits), checking
    /// meanwhile that the program has not run to its end and its memory stays within the limit.
    fn wait_for_the_bound(&self) {
        let deadline = Instant::now() + TIMEOUT;
        loop {
            if self.jvm.stderr_text().contains(AT_BOUND) {
                break;
            }
            assert!(
                !self.jvm.stdout_text().contains("Flood done"),
                "the program made all its calls while its events could not go out: the queue has no bound\n{}",
                self.jvm.output_text()
            );
            self.assert_memory("VmRSS:", "before the bound was reached");
            assert!(Instant::now() < deadline, "the agent never reached its bound\n{}", self.jvm.output_text());
            // Wakes up when the JVM prints something; the loop looks at its memory meanwhile.
            let _ = self.jvm.wait_for_line(AT_BOUND, Duration::from_millis(200));
        }
        eprintln!(
            "at the bound: VmRSS {} kB, VmHWM {} kB, baseline {} kB",
            status_kb(self.jvm.pid(), "VmRSS:"),
            status_kb(self.jvm.pid(), "VmHWM:"),
            self.baseline_kb
        );
        self.assert_memory("VmRSS:", "at the bound");
        self.assert_memory("VmHWM:", "at the bound (peak)");
    }

    /// Reads every event up to the VM's death; checks that the program's entries of `t0` .. `t7`
    /// come in its order, all of them, and that the program made them all.
    fn read_to_the_end(mut self) {
        let mut next = 0usize;
        let mut seen = 0u64;
        let mut next_check = 50_000;
        loop {
            let packet = self
                .s
                .next_event()
                .unwrap_or_else(|e| panic!("reading events ({seen} entries so far): {e}\n{}", self.jvm.output_text()));
            let composite: Composite = codec::decode_body(&packet.body, self.s.id_sizes()).unwrap();
            let mut died = false;
            for event in &composite.events {
                match event {
                    Event::MethodEntry { thread, location, .. }
                        if *thread == self.main && self.methods.contains(&location.method_id) =>
                    {
                        let k = self.methods.iter().position(|m| *m == location.method_id).unwrap();
                        assert_eq!(k, next, "entry {seen}: t{k} where t{next} comes next (an event lost or reordered)");
                        next = (next + 1) % 8;
                        seen += 1;
                    }
                    Event::VmDeath { .. } => died = true,
                    _ => {}
                }
            }
            if seen >= next_check && !died {
                next_check += 50_000;
                // Reading again must not make the program's memory grow either.
                if self.jvm.exit_status().is_none() {
                    self.assert_memory("VmHWM:", "while the debugger reads again");
                }
            }
            if died {
                break;
            }
        }
        assert_eq!(seen, CALLS, "every method entry arrives once the debugger reads again");
        let status = self.jvm.wait_for_exit(TIMEOUT).expect("the program exits");
        assert!(status.success(), "the program exits normally: {status}\n{}", self.jvm.output_text());
        let done = self.jvm.wait_for_line("Flood done", TIMEOUT).unwrap();
        assert_eq!(done, format!("Flood done calls={CALLS} count={CALLS}"));
    }
}

#[test]
fn a_debugger_that_stops_reading_makes_the_program_wait_and_then_gets_every_event() {
    let mut flood = Flood::start(None);
    // From here the debugger reads nothing until the agent is at its bound.
    flood.s.send(&vm::Resume {}).unwrap();
    flood.wait_for_the_bound();
    flood.read_to_the_end();
}

#[test]
fn held_events_make_the_program_wait_and_all_come_after_the_release() {
    let mut flood = Flood::start(None);
    flood.s.send(&vm::HoldEvents {}).unwrap();
    flood.s.send(&vm::Resume {}).unwrap();
    flood.wait_for_the_bound();
    // The debugger is still served while the program waits: the bound never blocks the agent's
    // command loop.
    let version = flood.s.send(&vm::Version {}).unwrap();
    assert!(!version.vm_version.is_empty());
    flood.assert_memory("VmHWM:", "while events are held (peak)");
    assert!(flood.s.events.is_empty(), "an event went out while events were held: {:?}", flood.s.events.first());
    flood.s.send(&vm::ReleaseEvents {}).unwrap();
    flood.read_to_the_end();
}

#[test]
fn a_debugger_that_vanishes_with_the_queue_full_leaves_the_program_running_and_its_memory_small() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("event-backpressure");
    std::fs::create_dir_all(&dir).unwrap();
    let stop = dir.join(format!("stop-{}", std::process::id()));
    let _ = std::fs::remove_file(&stop);
    let mut flood = Flood::start(Some(&stop));
    flood.s.send(&vm::Resume {}).unwrap();
    flood.wait_for_the_bound();
    let Flood { jvm, s, baseline_kb, .. } = flood;
    s.close();
    // The program runs on: what was queued for the debugger that left is dropped.
    let done = jvm.wait_for_line("Flood done", TIMEOUT).unwrap_or_else(|e| panic!("the program is stuck: {e}"));
    assert_eq!(done, format!("Flood done calls={CALLS} count={CALLS}"));
    let rss = status_kb(jvm.pid(), "VmRSS:");
    let peak = status_kb(jvm.pid(), "VmHWM:");
    assert!(rss <= baseline_kb + RSS_MARGIN_KB, "after the debugger left: VmRSS {rss} kB, baseline {baseline_kb} kB");
    assert!(peak <= baseline_kb + RSS_MARGIN_KB, "peak VmHWM {peak} kB, baseline {baseline_kb} kB");
    // A new debugger attaches and hears nothing of the old session.
    let mut next = RawSession::attach(&jvm.address().to_string(), TIMEOUT).expect("a new debugger attaches");
    next.send(&vm::Version {}).unwrap();
    next.send(&vm::AllThreads {}).unwrap();
    assert!(next.events.is_empty(), "the new debugger got an event it did not ask for: {:?}", next.events.first());
    std::fs::write(&stop, b"").unwrap();
    next.send(&vm::Dispose {}).unwrap();
    let status = jvm.wait_for_exit(TIMEOUT).expect("the program exits");
    assert!(status.success(), "the program exits normally: {status}\n{}", jvm.output_text());
    let _ = std::fs::remove_file(&stop);
}
