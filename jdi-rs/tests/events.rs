//! Event requests and the event stream, against the agent under test (the JDK's unless
//! `JDI_TEST_AGENT` says otherwise), on the `Events` fixture: one test per event kind and filter.
//!
//! Each test runs one scenario of the fixture and, where it must show that something did *not*
//! happen, collects events up to a sentinel breakpoint at the scenario's `-done` line.

mod common;

use common::{Session, TIMEOUT};
use jdi::protocol::TypeTag;
use jdi::protocol::class_status;
use jdi::{
    Event, EventExt, EventKind, EventRequest, EventSet, JdiError, Location, ObjectReference, RequestHandle,
    RequestState, StepDepth, StepSize, StringReference, SuspendPolicy, ThreadReference, Value, VirtualMachine,
};

const FILE: &str = "Events.java";

fn line(marker: &str) -> i32 {
    test_rig::fixture_line(FILE, marker).unwrap_or_else(|e| panic!("{e}")) as i32
}

/// The first location of the marked line, in `class` (which must be loaded).
async fn location(vm: &VirtualMachine, class: &str, marker: &str) -> Location {
    let ty =
        vm.classes_by_name(class).await.unwrap().into_iter().next().unwrap_or_else(|| panic!("{class} not loaded"));
    let locations = ty.locations_of_line(line(marker)).await.unwrap();
    *locations.first().unwrap_or_else(|| panic!("no code at {marker}"))
}

/// Method name and line of a location.
async fn place(vm: &VirtualMachine, location: Location) -> (String, i32) {
    let at = vm.resolve_location(location).await.unwrap();
    (at.method.name().to_string(), at.line_number().await.unwrap())
}

/// Runs to the marked line of `Events` (all threads suspended) and removes that breakpoint.
async fn run_to(s: &mut Session, marker: &str) -> ThreadReference {
    let (set, thread) = s.run_to_marker("Events", marker).await;
    set.request_of(&set.events[0]).expect("the breakpoint's request").delete().await.unwrap();
    thread
}

/// An enabled request.
async fn enable(vm: &VirtualMachine, request: EventRequest) -> RequestHandle {
    let handle = vm.create_event_request(request);
    handle.enable().await.unwrap();
    handle
}

/// A breakpoint at the marked line of `Events` that suspends everything: collecting stops there.
async fn sentinel(vm: &VirtualMachine, marker: &str) -> RequestHandle {
    enable(vm, EventRequest::breakpoint(location(vm, "Events", marker).await)).await
}

/// Resumes the VM, then every set, until a set has an event of `until`; returns the sets before
/// (already resumed) and that one (still suspended).
async fn collect_until(s: &mut Session, until: &RequestHandle) -> (Vec<EventSet>, EventSet) {
    s.vm.resume().await.unwrap();
    let mut before = Vec::new();
    loop {
        let set = s.events.next_within(TIMEOUT).await.unwrap();
        if set.events.iter().any(|e| until.matches(e)) {
            return (before, set);
        }
        set.resume().await.unwrap();
        before.push(set);
    }
}

/// The events of `handle` among `sets`.
fn events_of<'a>(sets: &'a [EventSet], handle: &RequestHandle) -> Vec<&'a Event> {
    sets.iter().flat_map(|s| &s.events).filter(|e| handle.matches(e)).collect()
}

/// Enables `request` (a step), resumes the VM and returns the request and the set of its event.
async fn step_with(s: &mut Session, request: EventRequest) -> (RequestHandle, EventSet) {
    let handle = enable(&s.vm, request).await;
    s.vm.resume().await.unwrap();
    let set = next_of(s, &handle).await;
    (handle, set)
}

/// Resumes until the next set with an event of `handle`.
async fn next_of(s: &mut Session, handle: &RequestHandle) -> EventSet {
    s.events.wait_for(TIMEOUT, |e| handle.matches(e)).await.unwrap()
}

async fn string_value(vm: &VirtualMachine, value: &Value) -> String {
    let Value::Object(_, id) = value else { panic!("not an object: {value:?}") };
    StringReference::new(vm.clone(), *id).value().await.unwrap()
}

async fn object_field_string(object: &ObjectReference, field: &str) -> String {
    let value = object.get_value_by_name(field).await.unwrap().expect("the field exists");
    string_value(object.vm(), &value).await
}

// ---- breakpoints and the request lifecycle ----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn breakpoint_stops_at_its_line_with_the_event_thread_suspended() {
    let mut s = common::start("Events", &["steps"]).await;
    run_to(&mut s, "@step-start").await;
    let bp = enable(
        &s.vm,
        EventRequest::breakpoint(location(&s.vm, "Events", "@inner-first").await).suspend(SuspendPolicy::EventThread),
    )
    .await;
    s.vm.resume().await.unwrap();
    let set = next_of(&mut s, &bp).await;
    assert_eq!(set.suspend_policy, SuspendPolicy::EventThread);
    let [event @ Event::Breakpoint { location, .. }] = set.events.as_slice() else { panic!("{set:?}") };
    assert_eq!(set.request_of(event), Some(bp.clone()));
    assert_eq!(place(&s.vm, *location).await, ("inner".into(), line("@inner-first")));
    let thread = set.thread().unwrap();
    assert_eq!(thread.name().await.unwrap(), "main");
    assert_eq!(thread.suspend_count().await.unwrap(), 1, "only the event thread, once");
    let frame = thread.frame(0).await.unwrap();
    assert_eq!(frame.location(), *location);
    assert_eq!(frame.get_value_by_name("x").await.unwrap(), Some(Value::Int(1)));
    assert_eq!(s.vm.event_request_manager().requests(), vec![(bp.id().unwrap(), bp.request().clone())]);
    s.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_enable_disable_delete_and_list() {
    let mut s = common::start("Events", &["loop"]).await;
    let thread = run_to(&mut s, "@loop-body").await;
    // The loop body has just been reached once (i = 0); a new breakpoint there sees i = 1 next.
    let body = location(&s.vm, "Events", "@loop-body").await;
    let bp = s.vm.create_event_request(EventRequest::breakpoint(body));
    let done = sentinel(&s.vm, "@loop-done").await;
    assert_eq!(bp.state(), RequestState::Disabled);
    assert_eq!(s.vm.event_requests(), vec![bp.clone(), done.clone()]);
    assert_eq!(s.vm.event_request_manager().requests().len(), 1, "only the sentinel is enabled");

    let i = async |thread: &ThreadReference| thread.frame(0).await.unwrap().get_value_by_name("i").await.unwrap();
    let first = bp.enable().await.unwrap();
    assert_eq!(bp.enable().await.unwrap(), first, "enabling twice is a no-op");
    s.vm.resume().await.unwrap();
    next_of(&mut s, &bp).await;
    assert_eq!(i(&thread).await, Some(Value::Int(1)));

    bp.disable().await.unwrap();
    assert_eq!(bp.state(), RequestState::Disabled);
    assert!(s.vm.event_request(first).is_none(), "a disabled request has no VM ID");
    let second = bp.enable().await.unwrap();
    assert_ne!(second, first, "each enable is a new VM request");
    assert_eq!(s.vm.event_request(second), Some(bp.clone()));
    s.vm.resume().await.unwrap();
    next_of(&mut s, &bp).await;
    assert_eq!(i(&thread).await, Some(Value::Int(2)));

    bp.delete().await.unwrap();
    bp.delete().await.unwrap();
    assert_eq!(bp.state(), RequestState::Deleted);
    assert!(bp.enable().await.is_err(), "a deleted request cannot come back");
    assert_eq!(s.vm.event_requests_of(EventKind::Breakpoint), vec![done.clone()]);
    // Nothing more from the loop: the next stop is the sentinel.
    let (before, _) = collect_until(&mut s, &done).await;
    assert!(before.is_empty(), "{before:?}");
    s.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_requests_are_refused_before_sending() {
    let s = common::start("Events", &["loop"]).await;
    for bad in [
        EventRequest::new(EventKind::Breakpoint),
        EventRequest::thread_start().class_match("Events"),
        EventRequest::method_entry().class_match("Ev*nts"),
        EventRequest::new(EventKind::FramePop),
    ] {
        let err = s.vm.enable_request(&bad).await.expect_err("refused");
        assert!(matches!(err, JdiError::InvalidArgument(_)), "{err}");
    }
    assert!(s.vm.event_requests().is_empty(), "refused requests are not kept");
    s.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_of_a_withdrawn_request_are_dropped() {
    let mut s = common::start("Events", &["loop"]).await;
    run_to(&mut s, "@loop-body").await;
    // Not suspending: the whole loop reports at once, and most of it is still queued...
    let body = location(&s.vm, "Events", "@loop-body").await;
    let bp = enable(&s.vm, EventRequest::breakpoint(body).suspend(SuspendPolicy::None)).await;
    let done = sentinel(&s.vm, "@loop-done").await;
    s.vm.resume().await.unwrap();
    next_of(&mut s, &bp).await;
    // ...when the request goes: none of it is delivered after that.
    bp.disable().await.unwrap();
    let set = s.events.next_within(TIMEOUT).await.unwrap();
    assert!(set.events.iter().all(|e| done.matches(e)), "{set:?}");
    s.finish().await;
}

// ---- filters: count, thread, instance, class patterns, location ----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn count_filter_reports_the_nth_hit_only_and_expires() {
    let mut s = common::start("Events", &["loop"]).await;
    let ty = s.run_to_class_prepare("Events").await;
    let body = ty.locations_of_line(line("@loop-body")).await.unwrap()[0];
    let bp = enable(&s.vm, EventRequest::breakpoint(body).count(3)).await;
    let done = sentinel(&s.vm, "@loop-done").await;
    let (before, _) = collect_until(&mut s, &done).await;
    let [set] = before.as_slice() else { panic!("one breakpoint set before the sentinel: {before:?}") };
    assert!(bp.matches(&set.events[0]));
    assert_eq!(bp.state(), RequestState::Expired(bp.id().unwrap()), "the VM dropped it after its event");
    assert!(!bp.is_enabled());
    s.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn count_filter_event_sees_the_third_iteration() {
    let mut s = common::start("Events", &["loop"]).await;
    let ty = s.run_to_class_prepare("Events").await;
    let body = ty.locations_of_line(line("@loop-body")).await.unwrap()[0];
    let bp = enable(&s.vm, EventRequest::breakpoint(body).count(3)).await;
    s.vm.resume().await.unwrap();
    let set = next_of(&mut s, &bp).await;
    let frame = set.thread().unwrap().frame(0).await.unwrap();
    assert_eq!(frame.get_value_by_name("i").await.unwrap(), Some(Value::Int(2)));
    // Re-enabling an expired request re-arms it, counting from now.
    bp.enable().await.unwrap();
    s.vm.resume().await.unwrap();
    let set = next_of(&mut s, &bp).await;
    let frame = set.thread().unwrap().frame(0).await.unwrap();
    assert_eq!(frame.get_value_by_name("i").await.unwrap(), Some(Value::Int(5)));
    s.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thread_start_and_death_name_the_thread() {
    let mut s = common::start("Events", &["threads"]).await;
    s.run_to_class_prepare("Events").await;
    let start = enable(&s.vm, EventRequest::thread_start()).await;
    let death = enable(&s.vm, EventRequest::thread_death().suspend(SuspendPolicy::EventThread)).await;
    let done = sentinel(&s.vm, "@threads-done").await;
    s.vm.resume().await.unwrap();
    let mut seen = Vec::new();
    loop {
        let set = s.events.next_within(TIMEOUT).await.unwrap();
        if set.events.iter().any(|e| done.matches(e)) {
            break;
        }
        for e in &set.events {
            let name = s.vm.thread(e.thread().unwrap()).name().await.unwrap();
            if name == "events-worker" {
                assert!(start.matches(e) || death.matches(e), "{e:?}");
                seen.push((e.kind(), e.thread().unwrap()));
            }
        }
        set.resume().await.unwrap();
    }
    let [(EventKind::ThreadStart, started), (EventKind::ThreadDeath, died)] = seen.as_slice() else {
        panic!("start then death of events-worker: {seen:?}")
    };
    assert_eq!(started, died);
    s.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thread_filter_keeps_to_its_thread() {
    let mut s = common::start("Events", &["threads"]).await;
    s.run_to_class_prepare("Events").await;
    // A platform main is listed by AllThreads; a virtual main is not (the agents list virtual
    // threads only with includevirtualthreads=y), and the platform thread named "main" is then
    // the wrapper's, which prepared Events: the virtual main is the "main" whose start comes next.
    let mut main_thread = None;
    if !common::virtual_main() {
        for t in s.vm.all_threads().await.unwrap() {
            if t.name().await.unwrap() == "main" {
                main_thread = Some(t);
            }
        }
    }
    let start = enable(&s.vm, EventRequest::thread_start()).await;
    s.vm.resume().await.unwrap();
    // A JDK thread started just before (Common-Cleaner, when the class loader first needs it) may
    // report its start first on a loaded machine: a new thread reports it once it runs.
    let worker = loop {
        let set = next_of(&mut s, &start).await;
        let thread = set.thread().unwrap();
        let name = thread.name().await.unwrap();
        if name == "events-worker" {
            break thread;
        }
        if common::virtual_main() && name == "main" {
            assert!(thread.is_virtual().await.unwrap(), "the virtual main's start");
            main_thread = Some(thread);
        }
        set.resume().await.unwrap();
    };
    let main = main_thread.expect("the main thread");
    start.delete().await.unwrap();

    let work = location(&s.vm, "Events", "@work").await;
    let on_main = enable(&s.vm, EventRequest::breakpoint(work).thread(main.id())).await;
    let on_worker = enable(&s.vm, EventRequest::breakpoint(work).thread(worker.id())).await;
    let done = sentinel(&s.vm, "@threads-done").await;
    let mut hits = Vec::new();
    s.vm.resume().await.unwrap();
    loop {
        let set = s.events.next_within(TIMEOUT).await.unwrap();
        if set.events.iter().any(|e| done.matches(e)) {
            break;
        }
        // The other thread's start, if it came second, was matched before the request went.
        if set.events.iter().all(|e| start.matches(e)) {
            set.resume().await.unwrap();
            continue;
        }
        let [e] = set.events.as_slice() else { panic!("one breakpoint per set: {set:?}") };
        let thread = set.thread().unwrap();
        let n = thread.frame(0).await.unwrap().get_value_by_name("n").await.unwrap();
        hits.push((on_main.matches(e), on_worker.matches(e), thread.name().await.unwrap(), n));
        set.resume().await.unwrap();
    }
    assert_eq!(
        hits,
        [
            (false, true, "events-worker".to_string(), Some(Value::Int(1))),
            (true, false, "main".to_string(), Some(Value::Int(2)))
        ]
    );
    s.finish().await;
}

// ---- steps ----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn step_over_lands_on_the_next_line_and_expires() {
    let mut s = common::start("Events", &["steps"]).await;
    let thread = run_to(&mut s, "@step-start").await;
    let step = s.vm.create_event_request(EventRequest::step(thread.id(), StepSize::Line, StepDepth::Over));
    step.enable().await.unwrap();
    let other = s.vm.create_event_request(EventRequest::step(thread.id(), StepSize::Min, StepDepth::Into));
    assert!(other.enable().await.is_err(), "one step per thread");
    s.vm.resume().await.unwrap();
    let set = next_of(&mut s, &step).await;
    assert_eq!(place(&s.vm, set.location().unwrap()).await, ("stepTarget".into(), line("@step-call")));
    assert!(matches!(step.state(), RequestState::Expired(_)), "{:?}", step.state());
    // Over the call to inner(): straight to the next line of stepTarget.
    step.enable().await.unwrap();
    s.vm.resume().await.unwrap();
    let set = next_of(&mut s, &step).await;
    assert_eq!(place(&s.vm, set.location().unwrap()).await, ("stepTarget".into(), line("@step-after")));
    assert_eq!(thread.frame(0).await.unwrap().get_value_by_name("b").await.unwrap(), Some(Value::Int(11)));
    // Expired, the other step of the thread may go now.
    other.enable().await.unwrap();
    other.delete().await.unwrap();
    s.finish().await;
}

/// HotSpot switches single-stepping on and off for the whole VM (a `ChangeSingleStep` safepoint,
/// logged as "changing single step to 'on'" or "'off'" under `-Xlog:interpreter+safepoint=debug`)
/// when the first thread starts or the last one stops single-stepping. The JDK's agent has it
/// switched for every one-shot step; ours keeps it on between steps that follow each other
/// (`step_switch`), and switches it off once the program runs with no step left.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_shot_steps_in_a_row_switch_single_stepping_on_once() {
    let mut s = common::start_with("Events", &["loop"], &["-Xlog:interpreter+safepoint=debug"]).await;
    let thread = run_to(&mut s, "@loop-body").await;
    let (body, done) = (line("@loop-body"), line("@loop-done"));
    let mut steps = 0;
    loop {
        let request = EventRequest::step(thread.id(), StepSize::Line, StepDepth::Over);
        let (step, set) = step_with(&mut s, request).await;
        step.delete().await.unwrap();
        steps += 1;
        let (method, at) = place(&s.vm, set.location().unwrap()).await;
        assert_eq!(method, "loop");
        if at == done {
            break;
        }
        assert!((body - 1..=body).contains(&at), "step {steps} left the loop at line {at}");
    }
    // From the first round's body: the loop's test and the body nine more times, the last test,
    // then out.
    assert_eq!(steps, 20);
    s.vm.resume().await.unwrap();
    let output = s.exits_normally().await;
    let switched =
        |to: &str| output.lines().filter(|l| l.ends_with(&format!("changing single step to '{to}'"))).count();
    let (on, off) = (switched("on"), switched("off"));
    assert_eq!(on, off, "single-stepping left on when the program ended\n{output}");
    if common::agent_is_ours() {
        // Once, unless the machine stalled between steps for longer than the agent keeps the
        // switch on (50 ms): not after every step.
        assert!(on >= 1 && on < steps / 2, "switched on {on} times for {steps} steps\n{output}");
    } else {
        assert!(on >= steps, "the JDK's agent switched on {on} times for {steps} steps\n{output}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn step_into_enters_the_callee_and_step_out_returns() {
    let mut s = common::start("Events", &["steps"]).await;
    let thread = run_to(&mut s, "@step-call").await;
    let depth = thread.frame_count().await.unwrap();
    let (into, set) = step_with(&mut s, EventRequest::step(thread.id(), StepSize::Line, StepDepth::Into)).await;
    assert_eq!(place(&s.vm, set.location().unwrap()).await, ("inner".into(), line("@inner-first")));
    assert_eq!(thread.frame_count().await.unwrap(), depth + 1);
    into.delete().await.unwrap();

    let (_out, set) = step_with(&mut s, EventRequest::step(thread.id(), StepSize::Line, StepDepth::Out)).await;
    // Back in the caller, in the middle of the line that made the call.
    assert_eq!(place(&s.vm, set.location().unwrap()).await, ("stepTarget".into(), line("@step-call")));
    assert_eq!(thread.frame_count().await.unwrap(), depth);
    s.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn step_out_of_recursion_returns_one_level() {
    let mut s = common::start("Events", &["steps"]).await;
    let thread = run_to(&mut s, "@depth-base").await;
    let depth = thread.frame_count().await.unwrap();
    let (_out, set) = step_with(&mut s, EventRequest::step(thread.id(), StepSize::Line, StepDepth::Out)).await;
    assert_eq!(place(&s.vm, set.location().unwrap()).await, ("depth".into(), line("@depth-recurse")));
    assert_eq!(thread.frame_count().await.unwrap(), depth - 1);
    assert_eq!(thread.frame(0).await.unwrap().get_value_by_name("n").await.unwrap(), Some(Value::Int(1)));
    s.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn step_over_a_recursive_call_stays_in_its_own_frame() {
    let mut s = common::start("Events", &["steps"]).await;
    // depth(3) at its recursive call: the calls it makes return to the same place of the same
    // method three times over, in deeper frames, before this frame's call returns.
    let thread = run_to(&mut s, "@depth-recurse").await;
    let depth = thread.frame_count().await.unwrap();
    let (_step, set) = step_with(&mut s, EventRequest::step(thread.id(), StepSize::Line, StepDepth::Over)).await;
    assert_eq!(place(&s.vm, set.location().unwrap()).await, ("depth".into(), line("@depth-return")));
    assert_eq!(thread.frame_count().await.unwrap(), depth);
    let frame = thread.frame(0).await.unwrap();
    assert_eq!(frame.get_value_by_name("n").await.unwrap(), Some(Value::Int(3)));
    assert_eq!(frame.get_value_by_name("below").await.unwrap(), Some(Value::Int(2)));
    s.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn step_over_a_call_that_throws_stops_in_the_handler() {
    let mut s = common::start("Events", &["exceptions"]).await;
    let thread = run_to(&mut s, "@call-plain").await;
    let depth = thread.frame_count().await.unwrap();
    let (_step, set) = step_with(&mut s, EventRequest::step(thread.id(), StepSize::Line, StepDepth::Over)).await;
    // In the handler, past its first instruction (which stores the exception, on the catch line),
    // as with the JDK's agent: single-stepping resumes where the exception is caught.
    assert_eq!(place(&s.vm, set.location().unwrap()).await, ("exceptions".into(), line("@caught-plain")));
    assert_eq!(thread.frame_count().await.unwrap(), depth);
    s.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_step_over_and_a_breakpoint_where_it_lands_come_in_one_set() {
    let mut s = common::start("Events", &["exceptions"]).await;
    let thread = run_to(&mut s, "@start-thrower").await;
    // Thread.start() returns straight to the first instruction of the next line.
    let bp = enable(&s.vm, EventRequest::breakpoint(location(&s.vm, "Events", "@join-thrower").await)).await;
    let (step, set) = step_with(&mut s, EventRequest::step(thread.id(), StepSize::Line, StepDepth::Over)).await;
    assert_eq!(place(&s.vm, set.location().unwrap()).await, ("exceptions".into(), line("@join-thrower")));
    let kinds: Vec<bool> = set.events.iter().map(|e| step.matches(e)).collect();
    assert_eq!(kinds, [true, false], "the step first, then the breakpoint: {:?}", set.events);
    assert!(bp.matches(&set.events[1]), "{:?}", set.events);
    s.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn step_min_moves_one_bytecode() {
    let mut s = common::start("Events", &["steps"]).await;
    let thread = run_to(&mut s, "@step-start").await;
    let start = thread.frame(0).await.unwrap().location();
    let (_step, set) = step_with(&mut s, EventRequest::step(thread.id(), StepSize::Min, StepDepth::Over)).await;
    let at = set.location().unwrap();
    // `int a = 1` is iconst_1, istore_0: one byte each.
    assert_eq!((at.class_id, at.method_id, at.index), (start.class_id, start.method_id, start.index + 1));
    assert_eq!(place(&s.vm, at).await.1, line("@step-start"), "still on the same line");
    s.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn step_into_with_class_exclude_skips_the_jdk() {
    let mut s = common::start("Events", &["steps"]).await;
    let thread = run_to(&mut s, "@via-jdk").await;
    // Plain step into: String.valueOf comes first.
    let (into, set) = step_with(&mut s, EventRequest::step(thread.id(), StepSize::Line, StepDepth::Into)).await;
    let stop = set.location().unwrap();
    let at = s.vm.resolve_location(stop).await.unwrap();
    assert_eq!((at.declaring_type.name().as_str(), at.method.name()), ("java.lang.String", "valueOf"));
    into.delete().await.unwrap();
    let (out, _) = step_with(&mut s, EventRequest::step(thread.id(), StepSize::Line, StepDepth::Out)).await;
    out.delete().await.unwrap();
    // Excluding java.*: the next stop is identity(), past the JDK code.
    let request = EventRequest::step(thread.id(), StepSize::Line, StepDepth::Into).class_exclude("java.*");
    let (_into, set) = step_with(&mut s, request).await;
    assert_eq!(place(&s.vm, set.location().unwrap()).await, ("identity".into(), line("@identity")));
    s.finish().await;
}

// ---- fields ----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn modification_watchpoint_sees_old_and_new_values() {
    let mut s = common::start("Events", &["fields"]).await;
    let thread = run_to(&mut s, "@fields-start").await;
    let frame = thread.frame(0).await.unwrap();
    let Some(Value::Object(_, a)) = frame.get_value_by_name("a").await.unwrap() else { panic!("local a") };
    let counter = s.vm.classes_by_name("Events$Counter").await.unwrap().remove(0);
    let value = counter.field_by_name("value").await.unwrap().unwrap();
    let watch = enable(&s.vm, EventRequest::field_modification(value.declaring_type, value.id)).await;
    s.vm.resume().await.unwrap();
    let set = next_of(&mut s, &watch).await;
    let [Event::FieldModification { object, value_to_be, location, type_id, field_id, .. }] = set.events.as_slice()
    else {
        panic!("{set:?}")
    };
    assert_eq!((object.id, *type_id, *field_id), (a, counter.id(), value.id));
    assert_eq!(place(&s.vm, *location).await, ("bump".into(), line("@bump")));
    let a = ObjectReference::new(s.vm.clone(), a);
    assert_eq!(a.get_value(&value).await.unwrap(), Value::Int(0), "the old value is still in place");
    assert_eq!(*value_to_be, Value::Int(1));
    s.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn static_field_watchpoint_has_no_object() {
    let mut s = common::start("Events", &["fields"]).await;
    let counter = s.run_to_class_prepare("Events$Counter").await;
    let created = counter.field_by_name("created").await.unwrap().unwrap();
    let watch = enable(&s.vm, EventRequest::field_modification(created.declaring_type, created.id)).await;
    let done = sentinel(&s.vm, "@fields-done").await;
    let (before, _) = collect_until(&mut s, &done).await;
    let writes: Vec<_> = events_of(&before, &watch)
        .into_iter()
        .map(|e| match e {
            Event::FieldModification { value_to_be, .. } => (e.object(), *value_to_be),
            _ => panic!("{e:?}"),
        })
        .collect();
    assert_eq!(writes, [(None, Value::Int(1)), (None, Value::Int(2))]);
    s.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn access_watchpoint_with_instance_filter_sees_one_object() {
    let mut s = common::start("Events", &["fields"]).await;
    let thread = run_to(&mut s, "@fields-start").await;
    let Some(Value::Object(_, b)) = thread.frame(0).await.unwrap().get_value_by_name("b").await.unwrap() else {
        panic!("local b")
    };
    let counter = s.vm.classes_by_name("Events$Counter").await.unwrap().remove(0);
    let value = counter.field_by_name("value").await.unwrap().unwrap();
    let watch = enable(
        &s.vm,
        EventRequest::field_access(value.declaring_type, value.id).instance(b).suspend(SuspendPolicy::None),
    )
    .await;
    let done = sentinel(&s.vm, "@fields-done").await;
    let (before, _) = collect_until(&mut s, &done).await;
    let reads = events_of(&before, &watch);
    // Two reads in each of b's two bump() calls, then main's read of b.value: for watchpoints
    // HotSpot matches the instance filter against the field's object, not the reader's `this`
    // (main is static), and an agent under test must do the same.
    assert_eq!(reads.len(), 5, "{reads:?}");
    assert!(reads.iter().all(|e| e.object() == Some(b)), "{reads:?}");
    assert_eq!(place(&s.vm, reads[0].location().unwrap()).await, ("bump".into(), line("@bump")));
    assert_eq!(place(&s.vm, reads[4].location().unwrap()).await, ("fields".into(), line("@fields-read")));
    s.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn instance_filter_on_method_entry_sees_one_receiver() {
    let mut s = common::start("Events", &["fields"]).await;
    let thread = run_to(&mut s, "@fields-start").await;
    let Some(Value::Object(_, b)) = thread.frame(0).await.unwrap().get_value_by_name("b").await.unwrap() else {
        panic!("local b")
    };
    let request = EventRequest::method_entry().class_match("Events$Counter").instance(b);
    let entry = enable(&s.vm, request.suspend(SuspendPolicy::EventThread)).await;
    let done = sentinel(&s.vm, "@fields-done").await;
    s.vm.resume().await.unwrap();
    let mut receivers = Vec::new();
    loop {
        let set = s.events.next_within(TIMEOUT).await.unwrap();
        if set.events.iter().any(|e| done.matches(e)) {
            break;
        }
        assert!(set.events.iter().all(|e| entry.matches(e)), "{set:?}");
        let frame = set.thread().unwrap().frame(0).await.unwrap();
        let this = frame.this_object().await.unwrap().map(|o| o.id());
        receivers.push((place(&s.vm, frame.location()).await.0, this));
        set.resume().await.unwrap();
    }
    assert_eq!(receivers, [("bump".to_string(), Some(b)), ("bump".to_string(), Some(b))]);
    s.finish().await;
}

// ---- methods ----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn method_exit_carries_the_return_value() {
    let mut s = common::start("Events", &["methods"]).await;
    run_to(&mut s, "@methods-start").await;
    let exits = enable(&s.vm, EventRequest::method_exit_with_return_value().class_match("Events$Calc")).await;
    let plain = enable(&s.vm, EventRequest::method_exit().class_match("Events$Calc")).await;
    let done = sentinel(&s.vm, "@methods-done").await;
    s.vm.resume().await.unwrap();
    let mut seen = Vec::new();
    loop {
        let set = s.events.next_within(TIMEOUT).await.unwrap();
        if set.events.iter().any(|e| done.matches(e)) {
            break;
        }
        // Both exit requests fire at the same place: one set.
        assert!(set.events.iter().any(|e| plain.matches(e)), "{set:?}");
        for e in set.events.iter().filter(|e| exits.matches(e)) {
            let Event::MethodExitWithReturnValue { location, value, .. } = e else { panic!("{e:?}") };
            let method = place(&s.vm, *location).await.0;
            let shown = match value {
                Value::Object(..) => string_value(&s.vm, value).await,
                other => format!("{other:?}"),
            };
            seen.push((method, shown));
        }
        set.resume().await.unwrap();
    }
    let expected = [("twice", "Int(42)"), ("greet", "hi bob"), ("nothing", "Void"), ("big", "Long(1099511627776)")];
    assert_eq!(seen, expected.map(|(m, v)| (m.to_string(), v.to_string())));
    s.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn method_entry_with_class_match_and_exclude_patterns() {
    let mut s = common::start("Events", &["methods"]).await;
    run_to(&mut s, "@methods-start").await;
    let nested_not_calc = EventRequest::method_entry().class_match("Events$*").class_exclude("*$Calc");
    let nested_not_calc = enable(&s.vm, nested_not_calc.suspend(SuspendPolicy::None)).await;
    let calc = enable(&s.vm, EventRequest::method_entry().class_match("*$Calc").suspend(SuspendPolicy::None)).await;
    let done = sentinel(&s.vm, "@methods-done").await;
    let (before, _) = collect_until(&mut s, &done).await;
    let names = |handle: &RequestHandle| {
        let events = events_of(&before, handle);
        let vm = s.vm.clone();
        async move {
            let mut names = Vec::new();
            for e in events {
                names.push(place(&vm, e.location().unwrap()).await.0);
            }
            names
        }
    };
    assert_eq!(names(&calc).await, ["twice", "greet", "nothing", "big"]);
    assert_eq!(names(&nested_not_calc).await, ["id"]);
    s.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn breakpoint_and_method_entry_at_one_place_come_in_one_set() {
    let mut s = common::start("Events", &["methods"]).await;
    run_to(&mut s, "@methods-start").await;
    let bp = enable(&s.vm, EventRequest::breakpoint(location(&s.vm, "Events$Calc", "@twice").await)).await;
    let entry = enable(&s.vm, EventRequest::method_entry().class_match("Events$Calc")).await;
    s.vm.resume().await.unwrap();
    let set = s.events.next_within(TIMEOUT).await.unwrap();
    assert_eq!(set.events.len(), 2, "{set:?}");
    let bp_event = set.events.iter().find(|e| bp.matches(e)).expect("the breakpoint");
    let entry_event = set.events.iter().find(|e| entry.matches(e)).expect("the method entry");
    assert_eq!(bp_event.location(), entry_event.location());
    assert_eq!(bp_event.thread(), entry_event.thread());
    assert_eq!(place(&s.vm, set.location().unwrap()).await, ("twice".into(), line("@twice")));
    s.finish().await;
}

// ---- exceptions ----

/// Exception events of the `exceptions` scenario up to its end: (request, thrown type, throw
/// place, catch place, thread name).
type Thrown = (RequestHandle, String, (String, i32), Option<(String, i32)>, String);

async fn collect_exceptions(s: &mut Session, requests: &[&RequestHandle]) -> Vec<Thrown> {
    let done = sentinel(&s.vm, "@exceptions-done").await;
    s.vm.resume().await.unwrap();
    let mut thrown = Vec::new();
    loop {
        let set = s.events.next_within(TIMEOUT).await.unwrap();
        if set.events.iter().any(|e| done.matches(e)) {
            return thrown;
        }
        for e in &set.events {
            let Event::Exception { exception, location, .. } = e else { panic!("{e:?}") };
            let request = requests.iter().find(|r| r.matches(e)).expect("one of ours");
            let ty = ObjectReference::new(s.vm.clone(), exception.id).reference_type().await.unwrap().name();
            let catch = match e.catch_location() {
                Some(at) => Some(place(&s.vm, at).await),
                None => None,
            };
            let thread = set.thread().unwrap().name().await.unwrap();
            thrown.push(((*request).clone(), ty, place(&s.vm, *location).await, catch, thread));
        }
        set.resume().await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exception_events_carry_throw_and_catch_locations() {
    let mut s = common::start("Events", &["exceptions"]).await;
    s.run_to_class_prepare("Events").await;
    let all = enable(&s.vm, EventRequest::exception(None, true, true).class_match("Events")).await;
    let thrown = collect_exceptions(&mut s, &[&all]).await;
    let plain = |catch| {
        let catch = Some(("exceptions".to_string(), line(catch)));
        ("java.lang.IllegalStateException".to_string(), ("throwPlain".to_string(), line("@throw-plain")), catch)
    };
    let custom = ("Events$Failure".to_string(), ("throwCustom".to_string(), line("@throw-custom")));
    let got: Vec<_> = thrown.iter().map(|(_, ty, at, catch, thread)| (ty, at, catch, thread.as_str())).collect();
    let expected = [
        (plain("@catch-plain"), "main"),
        ((custom.0.clone(), custom.1.clone(), Some(("exceptions".into(), line("@catch-custom")))), "main"),
        (plain("@catch-third"), "main"),
        ((custom.0.clone(), custom.1.clone(), None), "events-uncaught"),
    ];
    let expected: Vec<_> = expected.iter().map(|((ty, at, catch), thread)| (ty, at, catch, *thread)).collect();
    assert_eq!(got, expected);
    s.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exception_filters_by_type_caught_and_uncaught() {
    let mut s = common::start("Events", &["exceptions"]).await;
    // Prepared at the second throw: the first one is over, IllegalStateException is loaded.
    let failure = s.run_to_class_prepare("Events$Failure").await;
    let ise = s.vm.classes_by_name("java.lang.IllegalStateException").await.unwrap().remove(0);
    let ise_caught = enable(&s.vm, EventRequest::exception(Some(ise.id()), true, false)).await;
    let failure_uncaught = enable(&s.vm, EventRequest::exception(Some(failure.id()), false, true)).await;
    let failure_caught = enable(&s.vm, EventRequest::exception(Some(failure.id()), true, false)).await;
    let thrown = collect_exceptions(&mut s, &[&ise_caught, &failure_uncaught, &failure_caught]).await;
    let of = |r: &RequestHandle| -> Vec<(String, i32, bool)> {
        thrown.iter().filter(|t| &t.0 == r).map(|t| (t.1.clone(), t.2.1, t.3.is_some())).collect()
    };
    let failure_name = "Events$Failure".to_string();
    // Subclasses match: the caught Failure and the third IllegalStateException.
    assert_eq!(
        of(&ise_caught),
        [
            (failure_name.clone(), line("@throw-custom"), true),
            ("java.lang.IllegalStateException".into(), line("@throw-plain"), true)
        ]
    );
    assert_eq!(of(&failure_caught), [(failure_name.clone(), line("@throw-custom"), true)]);
    assert_eq!(of(&failure_uncaught), [(failure_name, line("@throw-custom"), false)]);
    assert!(thrown.iter().filter(|t| t.0 == failure_uncaught).all(|t| t.4 == "events-uncaught"));
    s.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn location_filter_keeps_one_throw_site() {
    let mut s = common::start("Events", &["exceptions"]).await;
    s.run_to_class_prepare("Events").await;
    let first = enable(&s.vm, EventRequest::exception(None, true, true).class_match("Events")).await;
    s.vm.resume().await.unwrap();
    let set = next_of(&mut s, &first).await;
    let site = set.location().unwrap();
    assert_eq!(place(&s.vm, site).await, ("throwPlain".into(), line("@throw-plain")));
    first.delete().await.unwrap();
    let here = enable(&s.vm, EventRequest::exception(None, true, true).location_only(site)).await;
    let thrown = collect_exceptions(&mut s, &[&here]).await;
    // Only the third throw; the custom ones are thrown elsewhere.
    let got: Vec<_> = thrown.iter().map(|t| (t.2.clone(), t.3.clone())).collect();
    assert_eq!(got, [(("throwPlain".into(), line("@throw-plain")), Some(("exceptions".into(), line("@catch-third"))))]);
    s.finish().await;
}

// ---- monitors ----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn contended_enter_and_entered_name_the_monitor_and_thread() {
    let mut s = common::start("Events", &["monitors"]).await;
    s.run_to_class_prepare("Events").await;
    // Class filters match the location's class for these: the lambda's code is in Events.
    let enter = enable(&s.vm, EventRequest::monitor_contended_enter().class_match("Events")).await;
    let entered = enable(&s.vm, EventRequest::monitor_contended_entered().class_match("Events")).await;
    let done = sentinel(&s.vm, "@monitors-done").await;
    s.vm.resume().await.unwrap();
    let mut contender = Vec::new();
    loop {
        let set = s.events.next_within(TIMEOUT).await.unwrap();
        if set.events.iter().any(|e| done.matches(e)) {
            break;
        }
        let thread = set.thread().unwrap();
        if thread.name().await.unwrap() == "events-contender" {
            let [e] = set.events.as_slice() else { panic!("{set:?}") };
            let monitor = ObjectReference::new(s.vm.clone(), e.object().unwrap());
            assert_eq!(monitor.reference_type().await.unwrap().name(), "Events$Lock");
            assert_eq!(object_field_string(&monitor, "name").await, "contended");
            // HotSpot places both events after the monitorenter, on the block's first line; the
            // spec only says "location of contended monitor enter".
            let (method, at) = place(&s.vm, e.location().unwrap()).await;
            let first = line("@contender-enter");
            assert!(method.starts_with("lambda$monitors") && (first..=first + 1).contains(&at), "{method}:{at}");
            let owner = monitor.monitor_info().await.unwrap().owner;
            let owner = match owner {
                Some(t) => t.name().await.unwrap(),
                None => "nobody".into(),
            };
            contender.push((enter.matches(e), entered.matches(e), owner, monitor));
        }
        set.resume().await.unwrap();
    }
    // At the enter event main may already be letting go (it stops waiting once the contender is
    // BLOCKED, which can be before every thread is suspended); at the entered event the contender
    // owns the monitor for sure.
    let [(true, false, _, m1), (false, true, owned_by, m2)] = contender.as_slice() else {
        panic!("enter then entered: {contender:?}")
    };
    assert_eq!(m1, m2, "the same monitor");
    assert_eq!(owned_by, "events-contender");
    s.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wait_and_waited_carry_timeout_and_timed_out() {
    let mut s = common::start("Events", &["monitors"]).await;
    let lock = s.run_to_class_prepare("Events$Lock").await;
    // For monitor waits, class filters match the monitor's class (the wait itself is in Object).
    let wait = enable(&s.vm, EventRequest::monitor_wait().class_match("Events$Lock")).await;
    let waited = enable(&s.vm, EventRequest::monitor_waited().class_only(lock.id())).await;
    let done = sentinel(&s.vm, "@monitors-done").await;
    s.vm.resume().await.unwrap();
    let mut seen = Vec::new();
    loop {
        let set = s.events.next_within(TIMEOUT).await.unwrap();
        if set.events.iter().any(|e| done.matches(e)) {
            break;
        }
        let thread = set.thread().unwrap().name().await.unwrap();
        for e in &set.events {
            let monitor = ObjectReference::new(s.vm.clone(), e.object().unwrap());
            let name = object_field_string(&monitor, "name").await;
            let what = match e {
                Event::MonitorWait { timeout, .. } if wait.matches(e) => format!("wait {timeout}"),
                Event::MonitorWaited { timed_out, .. } if waited.matches(e) => format!("waited timed_out={timed_out}"),
                _ => panic!("{e:?}"),
            };
            seen.push(format!("{thread} {name} {what}"));
        }
        set.resume().await.unwrap();
    }
    assert_eq!(
        seen,
        [
            "events-waiter signal wait 0",
            "events-waiter signal waited timed_out=false",
            "main timer wait 20",
            "main timer waited timed_out=true"
        ]
    );
    s.finish().await;
}

// ---- classes ----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn class_prepare_reports_a_late_class_with_pattern_and_source_filters() {
    let mut s = common::start("Events", &["classes"]).await;
    let thread = run_to(&mut s, "@classes-late").await;
    let late = enable(&s.vm, EventRequest::class_prepare("Events$Late")).await;
    let from_source = enable(&s.vm, EventRequest::new(EventKind::ClassPrepare).source_name_match("Events.java")).await;
    let from_nowhere = enable(&s.vm, EventRequest::new(EventKind::ClassPrepare).source_name_match("Nope*")).await;
    let nested = enable(&s.vm, EventRequest::class_prepare("Events$*").class_exclude("*Late")).await;
    let done = sentinel(&s.vm, "@classes-done").await;
    let (before, _) = collect_until(&mut s, &done).await;

    let prepared = |handle: &RequestHandle| -> Vec<String> {
        events_of(&before, handle)
            .into_iter()
            .map(|e| match e {
                Event::ClassPrepare { signature, .. } => signature.clone(),
                _ => panic!("{e:?}"),
            })
            .collect()
    };
    assert_eq!(prepared(&late), ["LEvents$Late;"]);
    let Some(Event::ClassPrepare { thread: by, ref_type_tag, type_id, status, .. }) =
        events_of(&before, &late).first().copied()
    else {
        unreachable!()
    };
    assert_eq!((*by, *ref_type_tag), (thread.id(), TypeTag::Class));
    assert_ne!(status & class_status::PREPARED, 0);
    assert_eq!(s.vm.reference_type(*type_id).await.unwrap().name(), "Events$Late");
    let sources = prepared(&from_source);
    assert!(sources.starts_with(&["LEvents$Late;".to_string()]), "{sources:?}");
    assert!(sources.contains(&"LEventsUnloadable;".to_string()), "{sources:?}");
    assert!(prepared(&from_nowhere).is_empty());
    let nested = prepared(&nested);
    assert!(nested.contains(&"LEvents$IsolatingLoader;".to_string()), "{nested:?}");
    assert!(nested.iter().all(|sig| sig.starts_with("LEvents$") && !sig.ends_with("Late;")), "{nested:?}");
    s.finish().await;
}

/// Best effort by nature, made dependable by the fixture: the class is unloaded only when its
/// loader is collected (the fixture runs GCs until it is), and HotSpot's agent reports an unload
/// only at an event after a later GC (the fixture causes both before its end). The test accepts
/// the unload anywhere before the end of `main`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn class_unload_is_reported_after_the_loader_is_collected() {
    let mut s = common::start("Events", &["classes"]).await;
    s.run_to_class_prepare("Events").await;
    let unload = enable(&s.vm, EventRequest::class_unload().class_match("EventsUnloadable")).await;
    let others = enable(&s.vm, EventRequest::class_unload().class_exclude("EventsUnloadable")).await;
    let end = sentinel(&s.vm, "@done").await;
    s.vm.resume().await.unwrap();
    let mut unloaded = Vec::new();
    loop {
        let set = s.events.next_within(TIMEOUT).await.unwrap();
        if set.events.iter().any(|e| end.matches(e)) {
            break;
        }
        for e in &set.events {
            match e {
                Event::ClassUnload { signature, .. } if unload.matches(e) => unloaded.push(signature.clone()),
                Event::ClassUnload { signature, .. } if others.matches(e) => {
                    assert_ne!(signature, "LEventsUnloadable;")
                }
                _ => panic!("{e:?}"),
            }
        }
        set.resume().await.unwrap();
    }
    let outcome = tokio::task::block_in_place(|| s.jvm.wait_for_line("classes unloaded=", TIMEOUT)).unwrap();
    assert!(outcome.contains("classes unloaded=true"), "{outcome}");
    assert_eq!(unloaded, ["LEventsUnloadable;"]);
    s.finish().await;
}

/// The JDK's agent sends class unloads with suspend policy `None`, whatever their request asks:
/// the thread whose collection unloaded the class (typically one allocating until memory runs
/// out) runs on. nsk/jdi's class unload tests hang otherwise, their debuggee stopped before it
/// can say it is done. Nothing here resumes: the sentinel must come all the same.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn class_unloads_suspend_nothing_whatever_their_request_asks() {
    let mut s = common::start("Events", &["classes"]).await;
    s.run_to_class_prepare("Events").await;
    let request = EventRequest::class_unload().class_match("EventsUnloadable").suspend(SuspendPolicy::All);
    let unload = enable(&s.vm, request).await;
    let end = sentinel(&s.vm, "@done").await;
    s.vm.resume().await.unwrap();
    let mut unloaded = Vec::new();
    loop {
        let set = s.events.next_within(TIMEOUT).await.unwrap();
        if set.events.iter().any(|e| end.matches(e)) {
            break;
        }
        assert_eq!(set.suspend_policy, SuspendPolicy::None, "{set:?}");
        for e in &set.events {
            match e {
                Event::ClassUnload { signature, .. } if unload.matches(e) => unloaded.push(signature.clone()),
                _ => panic!("{e:?}"),
            }
        }
    }
    assert_eq!(unloaded, ["LEventsUnloadable;"]);
    s.finish().await;
}

// ---- VM death and the end of the stream ----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vm_death_arrives_and_then_the_stream_ends() {
    let mut s = common::start("Events", &["loop"]).await;
    let death = enable(&s.vm, EventRequest::vm_death()).await;
    s.vm.resume().await.unwrap();
    let set = s.events.wait_for(TIMEOUT, |e| matches!(e, Event::VmDeath { .. })).await.unwrap();
    assert!(set.is_vm_death());
    // The requested event (with our policy) and the automatic one share the set.
    assert_eq!(set.suspend_policy, SuspendPolicy::All);
    let mut ids: Vec<_> = set.events.iter().map(|e| e.request_id()).collect();
    ids.sort();
    assert_eq!(ids, [0, death.id().unwrap().id]);
    set.resume().await.unwrap();
    assert!(!s.events.drain(TIMEOUT).await.unwrap(), "the stream ends, with no second VM death");
    let after = s.events.next_within(TIMEOUT).await.unwrap_err();
    assert!(matches!(after, JdiError::Disconnected { .. }), "{after}");
    // The VM is gone, so there is nothing to finish: check it exited normally.
    let jvm = s.jvm;
    let status = tokio::task::spawn_blocking(move || (jvm.wait_for_exit(TIMEOUT), jvm.output_text())).await.unwrap();
    assert!(status.0.is_some_and(|st| st.success()), "{status:?}");
}
