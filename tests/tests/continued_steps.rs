//! Step requests without a count, which report step after step, each starting where the last one
//! ended, against the JDK's agent and ours, on the `ContinuedSteps` fixture. (jdi-rs always adds
//! a count of 1 to a step, as JDI debuggers step, so these speak raw JDWP.)
//!
//! The JDK's agent starts such a step again where it completed and leaves single-stepping on: a
//! step out then ends at the next bytecode (min) or line (line) of its new frame, as a step over
//! would, or, once it went into a call, only in a caller. nsk/jdi's crstepreq009 checks the min
//! case, in a frame that later throws too.

use std::time::Duration;

use jdwp_protocol::commands::event::Event;
use jdwp_protocol::commands::event_request::{self as er, Modifier};
use jdwp_protocol::commands::{method, reference_type as rt, virtual_machine as vm};
use jdwp_protocol::{
    EventKind, Location, MethodId, ReferenceTypeId, StepDepth, StepSize, SuspendPolicy, ThreadId, TypeTag,
};
use test_rig::wire::RawSession;
use test_rig::{Agent, Debuggee};

const TIMEOUT: Duration = Duration::from_secs(60);
const CLASS: &str = "ContinuedSteps";

fn line(marker: &str) -> i32 {
    test_rig::fixture_line("ContinuedSteps.java", marker).unwrap() as i32
}

/// The debuggee, stopped where `ContinuedSteps` is prepared.
struct Run {
    jvm: Debuggee,
    s: RawSession,
    class: ReferenceTypeId,
    methods: Vec<(String, MethodId)>,
}

impl Run {
    fn start(agent: Agent) -> Run {
        let (jvm, mut s, class, _) = test_rig::wire::run_to_class_prepare(agent, CLASS, TIMEOUT);
        let methods = s
            .send(&rt::Methods { ref_type: class })
            .unwrap()
            .declared
            .into_iter()
            .map(|m| (m.name, m.method_id))
            .collect();
        Run { jvm, s, class, methods }
    }

    fn method(&self, name: &str) -> MethodId {
        self.methods.iter().find(|(n, _)| n == name).unwrap_or_else(|| panic!("no method {name}")).1
    }

    fn lines(&mut self, method_id: MethodId) -> Vec<(i64, i32)> {
        let table = self.s.send(&method::LineTable { ref_type: self.class, method_id }).unwrap();
        let mut lines: Vec<(i64, i32)> = table.lines.iter().map(|l| (l.line_code_index, l.line_number)).collect();
        lines.sort();
        lines
    }

    /// Resumes until a breakpoint at the first location of the marked line of `method` is hit
    /// (every thread suspended there); clears it and returns the thread.
    fn run_to(&mut self, method_name: &str, marker: &str) -> ThreadId {
        let method_id = self.method(method_name);
        let want = line(marker);
        let index = self.lines(method_id).iter().find(|l| l.1 == want).unwrap_or_else(|| panic!("{marker}")).0;
        let loc = Location { type_tag: TypeTag::Class, class_id: self.class.into(), method_id, index: index as u64 };
        let req = self
            .s
            .send(&er::Set {
                event_kind: EventKind::Breakpoint,
                suspend_policy: SuspendPolicy::All,
                modifiers: vec![Modifier::LocationOnly { loc }],
            })
            .unwrap();
        self.s.send(&vm::Resume {}).unwrap();
        let set = self.s.next_composite();
        let Some(&Event::Breakpoint { request_id, thread, .. }) = set.events.first() else {
            panic!("expected the breakpoint at {marker}, got {set:?}")
        };
        assert_eq!(request_id, req.request_id);
        self.s.send(&er::Clear { event_kind: EventKind::Breakpoint, request_id }).unwrap();
        thread
    }

    /// Method name and line of a location of the fixture's class.
    fn place(&mut self, at: &Location) -> (String, i32) {
        let name = self.methods.iter().find(|(_, id)| *id == at.method_id).expect("a fixture method").0.clone();
        let line = self.lines(at.method_id).iter().rev().find(|l| l.0 <= at.index as i64).expect("a line").1;
        (name, line)
    }

    /// Steps out from `thread` with a request without a count: the places of its first two
    /// events, each waited for after resuming the VM.
    fn two_steps_out(&mut self, thread: ThreadId, size: StepSize) -> Vec<(String, i32)> {
        let req = self
            .s
            .send(&er::Set {
                event_kind: EventKind::SingleStep,
                suspend_policy: SuspendPolicy::All,
                modifiers: vec![Modifier::Step { thread, size, depth: StepDepth::Out }],
            })
            .unwrap();
        let mut places = Vec::new();
        for _ in 0..2 {
            self.s.send(&vm::Resume {}).unwrap();
            let set = self.s.next_composite();
            let Some(Event::SingleStep { request_id, location, .. }) = set.events.first() else {
                panic!("expected a step event, got {set:?} after {places:?}")
            };
            assert_eq!(*request_id, req.request_id);
            let location = *location;
            places.push(self.place(&location));
        }
        self.s.send(&er::Clear { event_kind: EventKind::SingleStep, request_id: req.request_id }).unwrap();
        places
    }

    fn finish(mut self, name: &str) {
        self.s.send(&vm::Resume {}).unwrap();
        self.s.send(&vm::Dispose {}).unwrap();
        self.s.close();
        let status = self.jvm.wait_for_exit(TIMEOUT).expect("the debuggee exits");
        assert!(status.success(), "{name}: {status:?}\n{}", self.jvm.output_text());
    }
}

/// Stops in `leaf` called from the marked line of `caller`, steps out twice with one request of
/// `size`, and checks where, with each agent.
fn check(caller: &str, marker: &str, size: StepSize, expected: [(&str, &str); 2]) {
    let expected: Vec<(String, i32)> = expected.iter().map(|&(m, marker)| (m.to_string(), line(marker))).collect();
    for (name, agent) in test_rig::wire::both_agents() {
        let mut run = Run::start(agent);
        run.run_to(caller, marker);
        let thread = run.run_to("leaf", "@leaf-body");
        let places = run.two_steps_out(thread, size);
        assert_eq!(places, expected, "{name}");
        run.finish(name);
    }
}

#[test]
fn a_continued_min_step_out_stops_at_the_next_bytecode_of_its_new_frame() {
    // Back in twoCalls after the first call of leaf, then one bytecode on, before the second call
    // (not out of twoCalls, as a fresh step out would go).
    check("twoCalls", "@two-calls", StepSize::Min, [("twoCalls", "@two-calls"), ("twoCalls", "@two-calls")]);
}

#[test]
fn a_continued_min_step_out_of_a_frame_that_throws_later_stays_in_it() {
    // mayThrow throws only after these two: the second stop is not throwing's handler.
    check("mayThrow", "@may-throw", StepSize::Min, [("mayThrow", "@may-throw"), ("mayThrow", "@may-throw")]);
}

#[test]
fn a_continued_line_step_out_that_goes_into_a_call_ends_in_a_caller() {
    // The second call of leaf is waited out until twoCalls itself returns: main, mid-line, not
    // twoCalls' next line.
    check("twoCalls", "@two-calls", StepSize::Line, [("twoCalls", "@two-calls"), ("main", "@main-two-calls")]);
}
