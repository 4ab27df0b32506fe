//! Events of every kind in a virtual thread on the wire (issue #18), against JDK 25's agent (the
//! reference) and ours, with the same observations: breakpoints, steps of every size and depth
//! (over calls that park the thread, so that it unmounts and may come back on another carrier),
//! method entry and exit with its return value, field access and modification watchpoints, caught
//! and uncaught exceptions, contended monitor enter/entered, monitor wait/waited, and a class
//! prepare the virtual thread triggers. While it steps, another virtual thread runs the same code
//! (through the places a step waits at), unfiltered by anything but the step's thread. For each event: the event thread is the virtual thread
//! (`IsVirtual` true), frame 0's location (method, line, code index), `this` and the int locals
//! visible there, the suspend counts under policies event-thread and all, and that resuming works
//! (the next event comes). Needs a JDK 21+ test JDK (`JDBG_TEST_JDK`, e.g. Temurin 25); on an
//! older one it says so loudly and skips.

use std::time::Duration;

use jdwp_protocol::commands::event::{Composite, Event};
use jdwp_protocol::commands::event_request::{self as er, Modifier};
use jdwp_protocol::commands::stack_frame::{self as sf, SlotRequest};
use jdwp_protocol::commands::{
    method, object_reference as or, reference_type as rt, thread_reference as tr, virtual_machine as vm,
};
use jdwp_protocol::{
    EventKind, Location, ObjectId, ReferenceTypeId, StepDepth, StepSize, SuspendPolicy, Tag, TaggedObjectId, ThreadId,
    TypeTag, Value,
};
use test_rig::wire::{RawSession, both_agents};
use test_rig::{Agent, Debuggee};

const TIMEOUT: Duration = Duration::from_secs(60);
const CLASS: &str = "VirtualEvents";
const FILE: &str = "VirtualEvents.java";

/// One agent's session with the fixture, and what it has seen so far.
struct Run {
    s: RawSession,
    class: ReferenceTypeId,
    main: ThreadId,
    vt: ThreadId,
    out: Vec<(String, String)>,
    /// The carrier the virtual thread was on at each step's end (shown, not compared: which
    /// carrier runs it after a park is up to the scheduler).
    carriers: Vec<String>,
}

impl Run {
    fn note(&mut self, what: impl Into<String>, answer: String) {
        self.out.push((what.into(), answer));
    }

    /// The location of the first code of a marked line of the fixture.
    fn marker(&mut self, marker: &str) -> Location {
        let want = test_rig::fixture_line(FILE, marker).unwrap() as i32;
        let class = self.class;
        for m in self.s.send(&rt::Methods { ref_type: class }).unwrap().declared {
            let Ok(table) = self.s.send(&method::LineTable { ref_type: class, method_id: m.method_id }) else {
                continue;
            };
            if let Some(l) = table.lines.iter().filter(|l| l.line_number == want).min_by_key(|l| l.line_code_index) {
                return Location {
                    type_tag: TypeTag::Class,
                    class_id: class.into(),
                    method_id: m.method_id,
                    index: l.line_code_index as u64,
                };
            }
        }
        panic!("no code at {marker}")
    }

    fn set(&mut self, kind: EventKind, policy: SuspendPolicy, modifiers: Vec<Modifier>) -> i32 {
        self.s.send(&er::Set { event_kind: kind, suspend_policy: policy, modifiers }).unwrap().request_id
    }

    fn clear(&mut self, kind: EventKind, request_id: i32) {
        self.s.send(&er::Clear { event_kind: kind, request_id }).unwrap();
    }

    /// Resumes what the last event suspended.
    fn resume(&mut self, policy: SuspendPolicy) {
        match policy {
            SuspendPolicy::All => drop(self.s.send(&vm::Resume {}).unwrap()),
            SuspendPolicy::EventThread => drop(self.s.send(&tr::Resume { thread: self.vt }).unwrap()),
            SuspendPolicy::None => {}
        }
    }

    /// The next composite: its policy and its only event.
    fn next(&mut self, what: &str) -> (SuspendPolicy, Event) {
        let Composite { suspend_policy, mut events } = self.s.next_composite();
        assert_eq!(events.len(), 1, "{what}: one event expected, got {events:?}");
        (suspend_policy, events.remove(0))
    }

    /// "Class.method:line@index" of a location.
    fn place(&mut self, loc: &Location) -> String {
        if loc.class_id.0 == 0 {
            return "null".into();
        }
        let ref_type = ReferenceTypeId(loc.class_id.0);
        let sig = self.s.send(&rt::Signature { ref_type }).unwrap().signature;
        let name = self
            .s
            .send(&rt::Methods { ref_type })
            .unwrap()
            .declared
            .into_iter()
            .find(|m| m.method_id == loc.method_id)
            .map_or("?".into(), |m| m.name);
        let line = self
            .s
            .send(&method::LineTable { ref_type, method_id: loc.method_id })
            .ok()
            .and_then(|t| {
                t.lines.iter().filter(|l| l.line_code_index as u64 <= loc.index).max_by_key(|l| l.line_code_index).map(
                    |l| {
                        let line = l.line_number as u32;
                        // The fixture's markers name its lines, so that the observations read.
                        fixture_marker_of(line).unwrap_or_else(|| line.to_string())
                    },
                )
            })
            .unwrap_or_else(|| "?".into());
        format!("{sig}.{name}:{line}@{}", loc.index)
    }

    fn class_of(&mut self, object: ObjectId) -> String {
        if object.0 == 0 {
            return "null".into();
        }
        let ty = self.s.send(&or::ReferenceType { object }).unwrap().type_id;
        self.s.send(&rt::Signature { ref_type: ty }).unwrap().signature
    }

    /// Everything an event's thread shows: the thread, frame 0 (against the event's location),
    /// `this`, the int locals there, and the suspend counts of it and of main.
    fn describe(&mut self, what: &str, policy: SuspendPolicy, thread: ThreadId, loc: Option<&Location>) {
        let virt = self.s.send(&tr::IsVirtual { thread }).unwrap().is_virtual;
        self.note(
            format!("{what}: thread"),
            format!("policy {policy:?}, the virtual thread: {}, is virtual: {virt}", thread == self.vt),
        );
        let frames = self.s.send(&tr::Frames { thread, start_frame: 0, length: 1 }).unwrap().frames;
        let top = &frames[0];
        let place = self.place(&top.location);
        let same = loc.map(|l| *l == top.location);
        self.note(format!("{what}: frame 0"), format!("{place} (the event's location: {same:?})"));
        let this = self.s.send(&sf::ThisObject { thread, frame: top.frame_id }).unwrap().object_this;
        let this = self.class_of(this.id);
        self.note(format!("{what}: this"), this);
        let ref_type = ReferenceTypeId(top.location.class_id.0);
        let vars = self.s.send(&method::VariableTable { ref_type, method_id: top.location.method_id });
        let mut ints = Vec::new();
        if let Ok(vars) = vars {
            let at = top.location.index as i64;
            for v in vars.slots {
                if v.signature == "I" && v.code_index <= at && at < v.code_index + i64::from(v.length) {
                    let got = self
                        .s
                        .send(&sf::GetValues {
                            thread,
                            frame: top.frame_id,
                            slots: vec![SlotRequest { slot: v.slot, sig_byte: Tag::Int }],
                        })
                        .unwrap()
                        .values;
                    ints.push(format!("{}={:?}", v.name, got[0]));
                }
            }
        }
        self.note(format!("{what}: int locals"), ints.join(" "));
        let vt = self.s.send(&tr::SuspendCount { thread: self.vt }).unwrap().suspend_count;
        let status = self.s.send(&tr::Status { thread: self.vt }).unwrap();
        let main = self.s.send(&tr::SuspendCount { thread: self.main }).unwrap().suspend_count;
        self.note(
            format!("{what}: suspended"),
            format!("virtual {vt} (status {:?}/{}), main {main}", status.thread_status, status.suspend_status),
        );
    }

    /// Takes one step in the virtual thread from where the last event (of policy `last`) left it,
    /// and describes where it ends.
    fn step(
        &mut self,
        what: &str,
        size: StepSize,
        depth: StepDepth,
        policy: SuspendPolicy,
        last: SuspendPolicy,
    ) -> (SuspendPolicy, Location) {
        self.step_with(what, size, depth, policy, last, Vec::new())
    }

    /// [`Run::step`] with more modifiers after the step's own.
    fn step_with(
        &mut self,
        what: &str,
        size: StepSize,
        depth: StepDepth,
        policy: SuspendPolicy,
        last: SuspendPolicy,
        more: Vec<Modifier>,
    ) -> (SuspendPolicy, Location) {
        let vt = self.vt;
        let mut modifiers = vec![Modifier::Step { thread: vt, size, depth }];
        modifiers.extend(more);
        let req = self.set(EventKind::SingleStep, policy, modifiers);
        self.resume(last);
        let (got, event) = self.next(what);
        let Event::SingleStep { request_id, thread, location } = event else { panic!("{what}: {event:?}") };
        assert_eq!(request_id, req);
        self.clear(EventKind::SingleStep, req);
        self.describe(what, got, thread, Some(&location));
        let carrier = self.carrier();
        self.carriers.push(carrier);
        (got, location)
    }

    /// The name of the platform thread the (suspended) virtual thread is mounted on, if any: its
    /// `VirtualThread.carrierThread` field.
    fn carrier(&mut self) -> String {
        let object = ObjectId(self.vt.0);
        let ty = self.s.send(&or::ReferenceType { object }).unwrap().type_id;
        let Some(field) =
            self.s.send(&rt::Fields { ref_type: ty }).unwrap().declared.into_iter().find(|f| f.name == "carrierThread")
        else {
            return "?".into();
        };
        match self.s.send(&or::GetValues { object, fields: vec![field.field_id] }).unwrap().values[0] {
            Value::Object(_, id) if id.0 != 0 => self.s.send(&tr::Name { thread: ThreadId(id.0) }).unwrap().thread_name,
            _ => "none".into(),
        }
    }

    /// Sets a one-shot breakpoint at `marker`, resumes what `resume` says, and describes the hit.
    fn break_at(&mut self, marker: &str, policy: SuspendPolicy, resume: SuspendPolicy) -> SuspendPolicy {
        let loc = self.marker(marker);
        let vt = self.vt;
        let only = vec![Modifier::ThreadOnly { thread: vt }, Modifier::LocationOnly { loc }];
        let req = self.set(EventKind::Breakpoint, policy, only);
        self.resume(resume);
        let (got, event) = self.next(marker);
        let Event::Breakpoint { request_id, thread, location } = event else { panic!("{marker}: {event:?}") };
        assert_eq!(request_id, req);
        self.clear(EventKind::Breakpoint, req);
        self.describe(&format!("breakpoint {marker}"), got, thread, Some(&location));
        got
    }
}

/// The marker on a line of the fixture, if it has one.
fn fixture_marker_of(line: u32) -> Option<String> {
    let text = std::fs::read_to_string(test_rig::fixture_source_dir().join(FILE)).ok()?;
    let l = text.lines().nth(line as usize - 1)?;
    l.split("// @").nth(1).map(|m| format!("@{}", m.trim()))
}

fn tagged(o: &TaggedObjectId) -> ObjectId {
    o.id
}

/// Everything one agent shows, in order, as (what, answer) lines.
fn observe(agent: Agent) -> Vec<(String, String)> {
    use SuspendPolicy::{All, EventThread};
    let jvm = Debuggee::builder(CLASS).virtual_main(false).agent(agent).spawn().expect("the debuggee starts");
    let mut s = RawSession::attach(&jvm.address().to_string(), TIMEOUT).expect("attach");
    assert!(matches!(s.next_composite().events.as_slice(), [Event::VmStart { .. }]));
    let prep = s
        .send(&er::Set {
            event_kind: EventKind::ClassPrepare,
            suspend_policy: All,
            modifiers: vec![Modifier::ClassMatch { class_pattern: CLASS.into() }],
        })
        .unwrap();
    s.send(&vm::Resume {}).unwrap();
    let prepared = s.next_composite();
    let Some(&Event::ClassPrepare { type_id: class, thread: main, .. }) = prepared.events.first() else {
        panic!("{prepared:?}")
    };
    s.send(&er::Clear { event_kind: EventKind::ClassPrepare, request_id: prep.request_id }).unwrap();
    let mut r = Run { s, class, main, vt: ThreadId(0), out: Vec::new(), carriers: Vec::new() };

    // 1. Breakpoints, each policy: the first tells which thread is the virtual one.
    let loc = r.marker("@square");
    let req = r.set(EventKind::Breakpoint, EventThread, vec![Modifier::LocationOnly { loc }]);
    r.resume(All);
    let (policy, event) = r.next("@square");
    let Event::Breakpoint { request_id, thread, location } = event else { panic!("{event:?}") };
    assert_eq!(request_id, req);
    r.vt = thread;
    r.clear(EventKind::Breakpoint, req);
    let name = r.s.send(&tr::Name { thread }).unwrap().thread_name;
    r.note("event thread name", name);
    r.describe("breakpoint @square", policy, thread, Some(&location));
    let mut last = r.break_at("@steps", All, policy);

    // 2. Steps of every size and depth, over and out of calls that park the thread.
    let steps: &[(StepSize, StepDepth, SuspendPolicy)] = &[
        (StepSize::Line, StepDepth::Over, EventThread), // to @steps-call
        (StepSize::Line, StepDepth::Into, All),         // into square, @square
        (StepSize::Line, StepDepth::Over, EventThread), // @square-return
        (StepSize::Line, StepDepth::Out, EventThread),  // back in steps, @steps-call after the call
        (StepSize::Line, StepDepth::Over, All),         // @steps-after
        (StepSize::Min, StepDepth::Over, EventThread),  // the next code of @steps-after
        (StepSize::Min, StepDepth::Into, All),          // and the next
        (StepSize::Line, StepDepth::Over, EventThread), // @steps-park
        (StepSize::Line, StepDepth::Into, EventThread), // into nap, @nap
        // (Then into Thread.sleep and over its lines, parking, back to nap's @nap-again, and a
        // step into with the JDK's classes excluded, as IDEs step, over parkNanos: below.)
        (StepSize::Line, StepDepth::Over, All), // over parkNanos (parks): @nap-end
        (StepSize::Line, StepDepth::Out, EventThread), // out over parkNanos (parks): steps, @steps-parked
        (StepSize::Line, StepDepth::Over, EventThread), // the return
        (StepSize::Min, StepDepth::Out, All),   // back in body
    ];
    for (i, &(size, depth, policy)) in steps.iter().enumerate() {
        if i == 4 {
            // A step that ends where a breakpoint is: both in one composite.
            let loc = r.marker("@steps-after");
            let vt = r.vt;
            let modifiers = vec![Modifier::ThreadOnly { thread: vt }, Modifier::LocationOnly { loc }];
            let bp = r.set(EventKind::Breakpoint, EventThread, modifiers);
            let modifiers = vec![Modifier::Step { thread: vt, size, depth }];
            let req = r.set(EventKind::SingleStep, policy, modifiers);
            r.resume(last);
            let set = r.s.next_composite();
            let kinds: Vec<String> = set
                .events
                .iter()
                .map(|e| match *e {
                    Event::SingleStep { request_id, thread, .. } => {
                        format!("step {} {}", request_id == req, thread == vt)
                    }
                    Event::Breakpoint { request_id, thread, .. } => format!("bp {} {}", request_id == bp, thread == vt),
                    ref other => format!("{other:?}"),
                })
                .collect();
            r.note("step onto a breakpoint: events", format!("policy {:?}: {kinds:?}", set.suspend_policy));
            let Some(Event::SingleStep { location, .. }) = set.events.first().cloned() else { panic!("{set:?}") };
            r.clear(EventKind::SingleStep, req);
            r.clear(EventKind::Breakpoint, bp);
            r.describe("step onto a breakpoint", set.suspend_policy, vt, Some(&location));
            last = set.suspend_policy;
            continue;
        }
        (last, _) = r.step(&format!("step {i} {size:?} {depth:?}"), size, depth, policy, last);
        if i == 8 {
            // At @nap: into Thread.sleep, and line by line over the JDK's code that parks the
            // thread, until back in nap (the scheduler's code is never a place a step stops at).
            let (size, depth) = (StepSize::Line, StepDepth::Into);
            let mut at;
            (last, at) = r.step("into Thread.sleep", size, depth, EventThread, last);
            for k in 0.. {
                assert!(k < 60, "still not back in nap after {k} steps: {}", r.place(&at));
                if at.class_id.0 == r.class.0 {
                    break;
                }
                let policy = if k % 2 == 0 { All } else { EventThread };
                (last, at) =
                    r.step(&format!("in Thread.sleep, step {k}"), StepSize::Line, StepDepth::Over, policy, last);
            }
            let excluded =
                ["java.*", "jdk.*", "sun.*"].map(|p| Modifier::ClassExclude { class_pattern: p.into() }).to_vec();
            (last, _) = r.step_with("into, JDK excluded", StepSize::Line, StepDepth::Into, All, last, excluded);
        }
    }

    // 3. Method entry and exit with the value returned.
    last = r.break_at("@entry-exit", EventThread, last);
    let vt = r.vt;
    let only = |extra: Modifier| vec![Modifier::ThreadOnly { thread: vt }, extra, Modifier::Count { count: 1 }];
    let entry = r.set(EventKind::MethodEntry, All, only(Modifier::ClassMatch { class_pattern: CLASS.into() }));
    let exit = r.set(
        EventKind::MethodExitWithReturnValue,
        EventThread,
        only(Modifier::ClassMatch { class_pattern: CLASS.into() }),
    );
    r.resume(last);
    let (got, event) = r.next("method entry");
    let Event::MethodEntry { request_id, thread, location } = event else { panic!("{event:?}") };
    assert_eq!(request_id, entry);
    r.describe("method entry", got, thread, Some(&location));
    r.resume(got);
    let (got, event) = r.next("method exit");
    let Event::MethodExitWithReturnValue { request_id, thread, location, value } = event else { panic!("{event:?}") };
    assert_eq!(request_id, exit);
    r.note("method exit: value", format!("{value:?}"));
    r.describe("method exit", got, thread, Some(&location));
    r.clear(EventKind::MethodEntry, entry);
    r.clear(EventKind::MethodExitWithReturnValue, exit);
    last = got;

    // 4. Watchpoints on an instance field.
    last = r.break_at("@watch", All, last);
    let field = r.s.send(&rt::Fields { ref_type: class }).unwrap().declared.into_iter().find(|f| f.name == "counter");
    let field_id = field.unwrap().field_id;
    let on_field = || vec![Modifier::ThreadOnly { thread: vt }, Modifier::FieldOnly { declaring: class, field_id }];
    let access = r.set(EventKind::FieldAccess, EventThread, on_field());
    let modify = r.set(EventKind::FieldModification, All, on_field());
    r.resume(last);
    let (got, event) = r.next("field access");
    let Event::FieldAccess { request_id, thread, location, object, .. } = event else { panic!("{event:?}") };
    assert_eq!(request_id, access);
    let of = r.class_of(tagged(&object));
    r.note("field access: object", of);
    r.describe("field access", got, thread, Some(&location));
    r.resume(got);
    let (got, event) = r.next("field modification");
    let Event::FieldModification { request_id, thread, location, object, value_to_be, .. } = event else {
        panic!("{event:?}")
    };
    assert_eq!(request_id, modify);
    let of = r.class_of(tagged(&object));
    r.note("field modification: object, value", format!("{of} {value_to_be:?}"));
    r.describe("field modification", got, thread, Some(&location));
    r.clear(EventKind::FieldAccess, access);
    r.clear(EventKind::FieldModification, modify);
    last = got;

    // 5. A caught exception.
    last = r.break_at("@caught", EventThread, last);
    let any = || {
        vec![
            Modifier::ThreadOnly { thread: vt },
            Modifier::ExceptionOnly { exception_or_null: ReferenceTypeId(0), caught: true, uncaught: true },
        ]
    };
    let thrown = r.set(EventKind::Exception, EventThread, any());
    r.resume(last);
    let (got, event) = r.next("caught exception");
    let Event::Exception { request_id, thread, location, exception, catch_location } = event else {
        panic!("{event:?}")
    };
    assert_eq!(request_id, thrown);
    let (of, catch) = (r.class_of(exception.id), r.place(&catch_location));
    r.note("caught exception: exception, catch", format!("{of} {catch}"));
    r.describe("caught exception", got, thread, Some(&location));
    r.clear(EventKind::Exception, thrown);
    // A step over the throw: it ends in the handler, a frame up.
    (last, _) = r.step("step over the throw", StepSize::Line, StepDepth::Over, All, got);

    // 6. A contended monitor: main holds it until the virtual thread blocks.
    last = r.break_at("@contend", All, last);
    // First, main stops (suspend all) once the virtual thread is parked on the latch before the
    // monitor, unmounted; a step over begins there, in the JDK's parking code, and ends once the
    // thread runs again, in it.
    let loc = r.marker("@main-vt-parked");
    let main = r.main;
    let bp =
        r.set(EventKind::Breakpoint, All, vec![Modifier::ThreadOnly { thread: main }, Modifier::LocationOnly { loc }]);
    r.resume(last);
    let (got, event) = r.next("@main-vt-parked");
    let Event::Breakpoint { request_id, .. } = event else { panic!("{event:?}") };
    assert_eq!(request_id, bp);
    r.clear(EventKind::Breakpoint, bp);
    let status = r.s.send(&tr::Status { thread: vt }).unwrap();
    let count = r.s.send(&tr::SuspendCount { thread: vt }).unwrap().suspend_count;
    let frames = r.s.send(&tr::Frames { thread: vt, start_frame: 0, length: 1 }).unwrap().frames;
    let top = r.place(&frames[0].location);
    let carrier = r.carrier();
    r.note(
        "parked",
        format!("{:?}/{} count {count}, frame 0 {top}, carrier {carrier}", status.thread_status, status.suspend_status),
    );
    (last, _) = r.step("step over from the park", StepSize::Line, StepDepth::Over, EventThread, got);
    let enter = r.set(EventKind::MonitorContendedEnter, EventThread, vec![Modifier::ThreadOnly { thread: vt }]);
    let entered = r.set(EventKind::MonitorContendedEntered, All, vec![Modifier::ThreadOnly { thread: vt }]);
    r.resume(last);
    let (got, event) = r.next("contended enter");
    let Event::MonitorContendedEnter { request_id, thread, object, location } = event else { panic!("{event:?}") };
    assert_eq!(request_id, enter);
    let of = r.class_of(object.id);
    r.note("contended enter: monitor", of);
    r.describe("contended enter", got, thread, Some(&location));
    r.resume(got);
    let (got, event) = r.next("contended entered");
    let Event::MonitorContendedEntered { request_id, thread, object, location } = event else { panic!("{event:?}") };
    assert_eq!(request_id, entered);
    let of = r.class_of(object.id);
    r.note("contended entered: monitor", of);
    r.describe("contended entered", got, thread, Some(&location));
    r.clear(EventKind::MonitorContendedEnter, enter);
    r.clear(EventKind::MonitorContendedEntered, entered);
    last = got;

    // 7. Object.wait with a timeout nobody cuts short.
    last = r.break_at("@wait", EventThread, last);
    let wait = r.set(EventKind::MonitorWait, All, vec![Modifier::ThreadOnly { thread: vt }]);
    let waited = r.set(EventKind::MonitorWaited, EventThread, vec![Modifier::ThreadOnly { thread: vt }]);
    r.resume(last);
    let (got, event) = r.next("monitor wait");
    let Event::MonitorWait { request_id, thread, object, location, timeout } = event else { panic!("{event:?}") };
    assert_eq!(request_id, wait);
    let of = r.class_of(object.id);
    r.note("monitor wait: monitor, timeout", format!("{of} {timeout}"));
    r.describe("monitor wait", got, thread, Some(&location));
    r.resume(got);
    let (got, event) = r.next("monitor waited");
    let Event::MonitorWaited { request_id, thread, object, location, timed_out } = event else { panic!("{event:?}") };
    assert_eq!(request_id, waited);
    let of = r.class_of(object.id);
    r.note("monitor waited: monitor, timed out", format!("{of} {timed_out}"));
    r.describe("monitor waited", got, thread, Some(&location));
    r.clear(EventKind::MonitorWait, wait);
    r.clear(EventKind::MonitorWaited, waited);
    last = got;

    // 8. A class the virtual thread prepares.
    last = r.break_at("@prepare", All, last);
    let lazy = format!("{CLASS}$Lazy");
    let prep = r.set(EventKind::ClassPrepare, EventThread, vec![Modifier::ClassMatch { class_pattern: lazy }]);
    r.resume(last);
    let (got, event) = r.next("class prepare");
    let Event::ClassPrepare { request_id, thread, signature, .. } = event else { panic!("{event:?}") };
    assert_eq!(request_id, prep);
    r.note("class prepare: type", signature);
    r.describe("class prepare", got, thread, None);
    r.clear(EventKind::ClassPrepare, prep);

    // 9. A method entry with policy none (Lazy's constructor), then the breakpoint after it.
    let lazy = format!("{CLASS}$Lazy");
    let entry = r.set(EventKind::MethodEntry, SuspendPolicy::None, only(Modifier::ClassMatch { class_pattern: lazy }));
    let loc = r.marker("@uncaught");
    let bp = r.set(
        EventKind::Breakpoint,
        EventThread,
        vec![Modifier::ThreadOnly { thread: vt }, Modifier::LocationOnly { loc }],
    );
    r.resume(got);
    let (got, event) = r.next("method entry, policy none");
    let Event::MethodEntry { request_id, thread, location } = event else { panic!("{event:?}") };
    assert_eq!(request_id, entry);
    let virt = r.s.send(&tr::IsVirtual { thread }).unwrap().is_virtual;
    let place = r.place(&location);
    r.note("method entry, policy none", format!("{got:?} {} {virt} {place}", thread == vt));
    let (got, event) = r.next("@uncaught");
    let Event::Breakpoint { request_id, thread, location } = event else { panic!("{event:?}") };
    assert_eq!(request_id, bp);
    r.clear(EventKind::MethodEntry, entry);
    r.clear(EventKind::Breakpoint, bp);
    r.describe("breakpoint @uncaught", got, thread, Some(&location));

    // 10. The exception nothing in the program catches, for a request of any exception and one of
    // uncaught ones only.
    let thrown = r.set(EventKind::Exception, All, any());
    let uncaught = vec![
        Modifier::ThreadOnly { thread: vt },
        Modifier::ExceptionOnly { exception_or_null: ReferenceTypeId(0), caught: false, uncaught: true },
    ];
    let uncaught = r.set(EventKind::Exception, EventThread, uncaught);
    r.resume(got);
    let set = r.s.next_composite();
    let requests: Vec<String> = set
        .events
        .iter()
        .map(|e| match *e {
            Event::Exception { request_id, .. } if request_id == thrown => "any".to_string(),
            Event::Exception { request_id, .. } if request_id == uncaught => "uncaught only".to_string(),
            ref other => format!("{other:?}"),
        })
        .collect();
    r.note("uncaught exception: requests", format!("{requests:?}"));
    let Some(Event::Exception { thread, location, exception, catch_location, .. }) = set.events.first().cloned() else {
        panic!("{set:?}")
    };
    let got = set.suspend_policy;
    let (of, catch) = (r.class_of(exception.id), r.place(&catch_location));
    r.note("uncaught exception: exception, catch", format!("{of} {catch}"));
    r.describe("uncaught exception", got, thread, Some(&location));
    r.clear(EventKind::Exception, thrown);
    r.clear(EventKind::Exception, uncaught);

    // 11. Let it all run to the end.
    r.resume(got);
    let done = jvm.wait_for_line("VirtualEvents done", TIMEOUT);
    r.note("program", format!("{:?}", done.map(|l| l.trim().to_string())));
    let _ = r.s.send(&vm::Dispose {});
    let Run { s, out, carriers, .. } = r;
    let changes = carriers.windows(2).filter(|w| w[0] != w[1]).count();
    eprintln!("carriers at the steps' ends ({changes} changes): {carriers:?}");
    s.close();
    assert!(jvm.wait_for_exit(TIMEOUT).is_some_and(|st| st.success()), "{}", jvm.output_text());
    out
}

#[test]
fn events_of_every_kind_in_a_virtual_thread_are_reported_like_the_jdk_agent_does() {
    if !test_rig::test_jdk_has_virtual_threads() {
        return;
    }
    let mut results = Vec::new();
    for (name, agent) in both_agents() {
        let seen = observe(agent);
        for (what, answer) in &seen {
            eprintln!("{name}: {what}: {answer}");
        }
        results.push(seen);
    }
    let (jdk, ours) = (&results[0], &results[1]);
    // The reference's own answers, which the test relies on.
    let at = |what: &str| jdk.iter().find(|(w, _)| w == what).map(|(_, a)| a.as_str()).unwrap();
    assert_eq!(at("event thread name"), "vt-events");
    assert_eq!(at("breakpoint @square: int locals"), "n=Int(3)");
    assert_eq!(at("method exit: value"), "Int(25)");
    assert!(at("program").starts_with("Ok(\"VirtualEvents done"), "{}", at("program"));
    assert!(at("program").contains("other rounds>0=true"), "{}", at("program"));
    for (what, answer) in jdk {
        if what.ends_with(": thread") {
            assert!(answer.ends_with("the virtual thread: true, is virtual: true"), "{what}: {answer}");
        }
    }
    for (j, o) in jdk.iter().zip(ours) {
        assert_eq!(o, j, "ours against JDK's agent");
    }
    assert_eq!(jdk.len(), ours.len());
}
