//! Threads, thread groups, suspension, monitors, interrupts and `Thread.stop`, against the
//! `Monitors` fixture, under the agent `JDI_TEST_AGENT` picks.

mod common;

use common::{Session, TIMEOUT};
use jdi::protocol::ErrorCode;
use jdi::{JdiError, ObjectReference, OwnedMonitor, ThreadReference, ThreadStatus, Value, VirtualMachine};

/// The line containing `needle` in the debuggee's output (waits for it).
fn output_line(s: &Session, needle: &str) -> String {
    tokio::task::block_in_place(|| s.jvm.wait_for_line(needle, TIMEOUT)).unwrap()
}

async fn thread_named(vm: &VirtualMachine, name: &str) -> ThreadReference {
    for t in vm.all_threads().await.unwrap() {
        if t.name().await.unwrap() == name {
            return t;
        }
    }
    panic!("no thread {name}");
}

/// A static field of `Monitors`.
async fn static_value(vm: &VirtualMachine, name: &str) -> Value {
    let ty = vm.classes_by_name("Monitors").await.unwrap().remove(0);
    let field = ty.field_by_name(name).await.unwrap().unwrap_or_else(|| panic!("no field {name}"));
    ty.get_value(&field).await.unwrap()
}

async fn static_object(vm: &VirtualMachine, name: &str) -> ObjectReference {
    vm.value_mirror(static_value(vm, name).await).as_object().unwrap()
}

async fn method_names(thread: &ThreadReference) -> Vec<String> {
    let mut out = Vec::new();
    for f in thread.frames().await.unwrap() {
        out.push(f.method().await.unwrap().name().to_string());
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn threads_report_names_statuses_and_groups() {
    let mut s = common::start("Monitors", &["states"]).await;
    let (_, main) = s.run_to_marker("Monitors", "@states-ready").await;
    assert_eq!(main.name().await.unwrap(), "main");
    assert_eq!(main.status().await.unwrap(), (ThreadStatus::Running, true));
    assert!(main.is_at_breakpoint().await.unwrap());

    let unstarted = s.vm.value_mirror(static_value(&s.vm, "unstarted").await).as_thread().cloned().unwrap();
    assert_eq!(unstarted.name().await.unwrap(), "unstarted");
    assert_eq!(unstarted.status().await.unwrap().0, ThreadStatus::NotStarted);
    let finished = s.vm.value_mirror(static_value(&s.vm, "finished").await).as_thread().cloned().unwrap();
    assert_eq!(finished.status().await.unwrap().0, ThreadStatus::Zombie);
    assert_eq!(finished.thread_group().await.unwrap(), None, "a finished thread leaves its group");

    let parked = thread_named(&s.vm, "parked").await;
    assert_eq!(parked.status().await.unwrap(), (ThreadStatus::Wait, true));
    assert!(!parked.is_at_breakpoint().await.unwrap());
    assert!(method_names(&parked).await.contains(&"await".to_string()));

    // parked is in outer-group, a child of main's group (VirtualThreads for a virtual main), a
    // child of system.
    let outer = parked.thread_group().await.unwrap().unwrap();
    assert_eq!(outer.name().await.unwrap(), "outer-group");
    let main_group = outer.parent().await.unwrap().unwrap();
    assert_eq!(Some(&main_group), main.thread_group().await.unwrap().as_ref());
    assert_eq!(main_group.name().await.unwrap(), common::main_group_name());
    let system = main_group.parent().await.unwrap().unwrap();
    assert_eq!(system.name().await.unwrap(), "system");
    assert_eq!(system.parent().await.unwrap(), None);
    assert_eq!(s.vm.top_level_thread_groups().await.unwrap(), std::slice::from_ref(&system));

    assert_eq!(outer.threads().await.unwrap(), std::slice::from_ref(&parked));
    let inner_groups = outer.thread_groups().await.unwrap();
    assert_eq!(inner_groups.len(), 1);
    assert_eq!(inner_groups[0].name().await.unwrap(), "inner-group");
    let inner_parked = thread_named(&s.vm, "inner-parked").await;
    assert_eq!(inner_groups[0].threads().await.unwrap(), std::slice::from_ref(&inner_parked));
    let mut everyone = outer.all_threads().await.unwrap();
    everyone.sort_by_key(|t| t.id());
    let mut expected = vec![parked, inner_parked];
    expected.sort_by_key(|t| t.id());
    assert_eq!(everyone, expected);
    s.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn suspend_and_resume_are_counted() {
    let mut s = common::start("Monitors", &["states"]).await;
    s.run_to_marker("Monitors", "@states-ready").await;
    let parked = thread_named(&s.vm, "parked").await;
    // The breakpoint suspended every thread once.
    assert_eq!(parked.suspend_count().await.unwrap(), 1);
    let stale = parked.frame(0).await.unwrap();
    parked.suspend().await.unwrap();
    parked.suspend().await.unwrap();
    assert_eq!(parked.suspend_count().await.unwrap(), 3);
    parked.resume().await.unwrap();
    assert_eq!(parked.suspend_count().await.unwrap(), 2);
    assert!(parked.is_suspended().await.unwrap());
    parked.resume().await.unwrap();
    parked.resume().await.unwrap();
    assert_eq!(parked.suspend_count().await.unwrap(), 0);
    assert!(!parked.is_suspended().await.unwrap());

    // A running thread has no frames to show; suspended again, it has.
    let err = parked.frames().await.unwrap_err();
    assert_eq!(err.code(), Some(ErrorCode::THREAD_NOT_SUSPENDED), "{err}");
    let err = stale.this_object().await.unwrap_err();
    assert_eq!(err.code(), Some(ErrorCode::THREAD_NOT_SUSPENDED), "{err}");
    parked.suspend().await.unwrap();
    assert!(parked.is_suspended().await.unwrap());
    assert!(parked.frame_count().await.unwrap() > 2);
    // Suspended again, but frames from before the resume stay dead.
    let err = stale.this_object().await.unwrap_err();
    assert_eq!(err.code(), Some(ErrorCode::INVALID_FRAMEID), "{err}");
    assert!(parked.frame(0).await.unwrap().this_object().await.is_ok());

    // A group suspends its threads and its subgroups' threads.
    let inner_parked = thread_named(&s.vm, "inner-parked").await;
    let outer = parked.thread_group().await.unwrap().unwrap();
    outer.suspend().await.unwrap();
    assert_eq!(parked.suspend_count().await.unwrap(), 2);
    assert_eq!(inner_parked.suspend_count().await.unwrap(), 2);
    outer.resume().await.unwrap();
    assert_eq!(parked.suspend_count().await.unwrap(), 1);
    assert_eq!(inner_parked.suspend_count().await.unwrap(), 1);
    s.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nested_monitors_have_entry_counts_and_frame_depths() {
    let mut s = common::start("Monitors", &["nested"]).await;
    // The marked line is in the nested class Monitors$Lock.
    let line = test_rig::fixture_line("Monitors.java", "@nested").unwrap();
    let (_, main) = s.run_to_line("Monitors$Lock", line).await;
    let below_main = common::frames_below_main().iter().map(|m| m.to_string());
    let expected: Vec<String> = ["reenter", "nested", "main"].map(String::from).into_iter().chain(below_main).collect();
    assert_eq!(method_names(&main).await, expected);
    let lock_a = static_object(&s.vm, "LOCK_A").await;
    let lock_b = static_object(&s.vm, "LOCK_B").await;
    assert_eq!(lock_a.get_value_by_name("name").await.unwrap().map(|v| v.tag()), Some(jdi::Tag::String));

    // ObjectReference.MonitorInfo of a monitor a virtual main holds: JDK 25's agent answers no
    // owner and an entry count of 0 (JDK 25's JVMTI GetObjectMonitorUsage answers so for a
    // virtual owner, as measured), while ThreadReference.OwnedMonitors of the virtual thread lists
    // the monitor (below).
    let virtual_owner = common::virtual_main();
    let owner = (!virtual_owner).then_some(&main);
    let info = lock_a.monitor_info().await.unwrap();
    assert_eq!(info.owner.as_ref(), owner);
    let entries = if virtual_owner { 0 } else { 2 };
    assert_eq!(info.entry_count, entries, "a synchronized block, then a synchronized method");
    assert!(info.waiters.is_empty());
    assert_eq!(lock_b.entry_count().await.unwrap(), if virtual_owner { 0 } else { 1 });
    assert_eq!(lock_b.owning_thread().await.unwrap().as_ref(), owner);

    let mut owned = main.owned_monitors().await.unwrap();
    owned.sort_by_key(|o| o.id());
    let mut expected = vec![lock_a.clone(), lock_b.clone()];
    expected.sort_by_key(|o| o.id());
    assert_eq!(owned, expected);

    // Each monitor once, at the innermost frame that entered it: LOCK_A by reenter() (depth 0,
    // though nested() at depth 1 entered it first), LOCK_B by nested().
    let mut with_depths = main.owned_monitors_and_frames().await.unwrap();
    with_depths.sort_by_key(|m| m.stack_depth);
    assert_eq!(
        with_depths,
        [
            OwnedMonitor { monitor: lock_a.clone(), stack_depth: 0 },
            OwnedMonitor { monitor: lock_b.clone(), stack_depth: 1 }
        ]
    );
    s.run_to_marker("Monitors", "@end").await;
    output_line(&s, "nested done");
    s.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn contended_monitor_names_the_object_and_its_owner() {
    let mut s = common::start("Monitors", &["contended"]).await;
    s.run_to_marker("Monitors", "@contended").await;
    let lock_c = static_object(&s.vm, "LOCK_C").await;
    let lock_w = static_object(&s.vm, "LOCK_W").await;
    let holder = thread_named(&s.vm, "holder").await;
    let blocked = thread_named(&s.vm, "blocked").await;
    let waiter = thread_named(&s.vm, "waiter").await;

    // "blocked" waits to enter LOCK_C, which "holder" owns.
    assert_eq!(blocked.status().await.unwrap().0, ThreadStatus::Monitor);
    assert_eq!(blocked.current_contended_monitor().await.unwrap().as_ref(), Some(&lock_c));
    let top = blocked.frame(0).await.unwrap().source_location().await.unwrap();
    assert!(top.method.name().starts_with("lambda$contended"), "{top:?}");
    // HotSpot reports the code index after the monitorenter, which javac puts on the next line.
    let line = test_rig::fixture_line("Monitors.java", "@blocked-enter").unwrap() as i32;
    assert!([line, line + 1].contains(&top.line_number().await.unwrap()), "{top:?}");
    let info = lock_c.monitor_info().await.unwrap();
    assert_eq!(info.owner.as_ref(), Some(&holder));
    assert_eq!(info.entry_count, 1);
    assert!(info.waiters.contains(&blocked), "{info:?}");
    assert!(holder.owned_monitors().await.unwrap().contains(&lock_c));
    assert_eq!(holder.current_contended_monitor().await.unwrap(), None);

    // "waiter" is in LOCK_W.wait(): it owns nothing, and the monitor names it as a waiter. Its
    // contended monitor is LOCK_W on JDK 17 and null on JDK 25: JDK 23 changed JVMTI's
    // GetCurrentContendedMonitor to name only a monitor the thread waits to enter, not one it
    // waits on in Object.wait() (JDK-8256314); both agents answer what JVMTI says.
    assert_eq!(waiter.status().await.unwrap().0, ThreadStatus::Wait);
    let waited_on_is_contended = test_rig::jdk_feature_version().unwrap() < 23;
    assert_eq!(
        waiter.current_contended_monitor().await.unwrap().as_ref(),
        waited_on_is_contended.then_some(&lock_w),
        "JDK {}",
        test_rig::jdk_feature_version().unwrap()
    );
    assert!(waiter.owned_monitors().await.unwrap().is_empty());
    let info = lock_w.monitor_info().await.unwrap();
    assert_eq!((info.owner, info.entry_count), (None, 0));
    assert_eq!(info.waiters, std::slice::from_ref(&waiter));

    s.run_to_marker("Monitors", "@end").await;
    output_line(&s, "contended done");
    s.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interrupt_wakes_a_sleeping_and_a_waiting_thread() {
    let mut s = common::start("Monitors", &["interrupt"]).await;
    s.run_to_marker("Monitors", "@interrupt-ready").await;
    let sleeper = thread_named(&s.vm, "sleeper").await;
    let waiter = thread_named(&s.vm, "forever-waiter").await;
    assert_eq!(sleeper.status().await.unwrap().0, ThreadStatus::Sleeping);
    assert_eq!(waiter.status().await.unwrap().0, ThreadStatus::Wait);
    // Without these, both threads sleep and wait forever and main never ends.
    sleeper.interrupt().await.unwrap();
    waiter.interrupt().await.unwrap();
    s.run_to_marker("Monitors", "@end").await;
    output_line(&s, "sleeper interrupted");
    output_line(&s, "waiter interrupted");
    output_line(&s, "interrupt done");
    s.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_throws_the_given_exception_in_the_thread() {
    let mut s = common::start("Monitors", &["stop"]).await;
    s.run_to_marker("Monitors", "@stop-ready").await;
    let victim = thread_named(&s.vm, "victim").await;
    assert_eq!(victim.status().await.unwrap().0, ThreadStatus::Sleeping);
    let not_throwable = static_object(&s.vm, "LOCK_A").await;
    match victim.stop(&not_throwable).await {
        Err(JdiError::InvalidArgument(message)) => assert!(message.contains("Throwable"), "{message}"),
        other => panic!("a Lock is not a Throwable: {other:?}"),
    }
    victim.stop(&static_object(&s.vm, "STOP").await).await.unwrap();
    s.run_to_marker("Monitors", "@end").await;
    let line = output_line(&s, "victim caught");
    assert_eq!(line, "victim caught java.lang.IllegalStateException: stopped by the debugger");
    output_line(&s, "stop done");
    s.finish().await;
}

/// Three threads hit one suspend-all breakpoint at once. As with the JDK's agent, the events reach
/// the debugger one per resume, each finding its thread suspended once: were they all sent at once,
/// each suspending every thread again, one resume would no longer run anything (nsk/jdb's kill001
/// hung so through our agent).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn simultaneous_suspend_all_events_come_one_per_resume() {
    use jdi::{Event, EventRequest, SuspendPolicy};

    let mut s = common::start("Threads", &[]).await;
    // Every worker is parked on the latch; main is about to open it.
    // (The marker's name is in the fixture's doc comment too: find the line by its code.)
    let opening = test_rig::fixture_line("Threads.java", "println(\"Threads started\")").unwrap();
    let (_, _main) = s.run_to_line("Threads", opening).await;
    let ty = s.vm.classes_by_name("Threads").await.unwrap().remove(0);
    let line = test_rig::fixture_line("Threads.java", "@worker-finish").unwrap();
    let at = *ty.locations_of_line(line as i32).await.unwrap().first().expect("code at @worker-finish");
    let req = s.vm.enable_request(&EventRequest::breakpoint(at).suspend(SuspendPolicy::All)).await.unwrap();
    let mut workers = Vec::new();
    for _ in 0..3 {
        s.vm.resume().await.unwrap();
        let set = s
            .events
            .wait_for(TIMEOUT, |e| matches!(e, Event::Breakpoint { request_id, .. } if *request_id == req.id))
            .await
            .unwrap();
        let thread = set.thread().expect("breakpoint thread");
        assert_eq!(thread.suspend_count().await.unwrap(), 1, "suspended by this event only");
        workers.push(thread.name().await.unwrap());
    }
    workers.sort();
    assert_eq!(workers, ["worker-1", "worker-2", "worker-3"]);
    s.finish().await;
}

/// Whether the application's `Thread.resume()` works on the test JDK, so that the `AppResume` tests
/// below apply: up to JDK 19 only. JDK 20 made `Thread.resume()` throw
/// `UnsupportedOperationException` (JDK-8249627) and JDK 23 removed it (JDK-8320532): on those
/// JDKs the application cannot resume a thread at all, so there is no application resume of a
/// debugger-suspended thread for an agent to hold, and these tests are for JDK 17 only (the one
/// JDK of 17–19 we test on). `application_thread_resume_is_gone_on_jdk_23_and_later` checks
/// what the JDK 25 VM does with the same fixture instead.
fn app_thread_resume_works(test: &str) -> bool {
    let feature = test_rig::jdk_feature_version().unwrap();
    if feature >= 20 {
        eprintln!("{test}: JDK {feature} has no working Thread.resume() (JDK 17 only, see app_thread_resume_works)");
    }
    feature < 20
}

/// The fixture of the `Thread.resume()` tests on each JDK: the VM's `java.lang.Thread` has a
/// `resume()` with code before JDK 23, and none on JDK 23 and later; there, main's
/// `resumee.resume()` (compiled with `--release 17`) throws `NoSuchMethodError`, main dies, and the
/// debugger's suspension of "resumee" is untouched until the debugger resumes it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn application_thread_resume_is_gone_on_jdk_23_and_later() {
    let feature = test_rig::jdk_feature_version().unwrap();
    let mut s = common::start("AppResume", &[]).await;
    let (main, resumee) = app_resume_both_stopped(&mut s).await;
    let thread_class = s.vm.classes_by_name("java.lang.Thread").await.unwrap().remove(0);
    let resume = thread_class.methods_by_name_and_signature("resume", "()V").await.unwrap();
    if feature < 23 {
        assert_eq!(resume.len(), 1, "JDK {feature}: Thread.resume()");
        assert!(resume[0].code_location().await.unwrap().is_some(), "JDK {feature}: Thread.resume() has code");
        s.finish().await;
        return;
    }
    assert!(resume.is_empty(), "JDK {feature} has no Thread.resume(): {resume:?}");
    main.resume().await.unwrap();
    let error = tokio::task::block_in_place(|| {
        s.jvm.wait_for_line_in(test_rig::Stream::Stderr, "java.lang.NoSuchMethodError", TIMEOUT)
    })
    .unwrap();
    assert!(error.contains("java.lang.Thread.resume()"), "{error}");
    // A thread started by a virtual thread is a daemon (virtual threads are): with a virtual main,
    // the VM ends as soon as main has died, while "resumee" is suspended at its breakpoint.
    if !common::virtual_main() {
        assert!(!app_resume_returned(&s.vm).await);
        assert_eq!(resumee.suspend_count().await.unwrap(), 1, "still suspended by its breakpoint only");
        resumee.resume().await.unwrap();
        output_line(&s, "resumee continued");
        let _ = s.vm.dispose().await;
    }
    let (status, output) =
        tokio::task::spawn_blocking(move || (s.jvm.wait_for_exit(TIMEOUT), s.jvm.output_text())).await.unwrap();
    assert_eq!(status.and_then(|s| s.code()), Some(1), "main died of the NoSuchMethodError\n{output}");
    assert!(!output.contains("resume returned"), "{output}");
    if !common::virtual_main() {
        assert!(output.contains("resumee continued"), "{output}");
    }
    // (With a virtual main, the daemon "resumee" may or may not print before the VM halts: the
    // agent lets suspended threads go at VM death, racing the exit.)
}

/// `AppResume.returned`: whether main came back from `resumee.resume()`.
async fn app_resume_returned(vm: &VirtualMachine) -> bool {
    let ty = vm.classes_by_name("AppResume").await.unwrap().remove(0);
    let field = ty.field_by_name("returned").await.unwrap().expect("field returned");
    ty.get_value(&field).await.unwrap() == Value::Boolean(true)
}

/// Runs `AppResume` until "resumee" is stopped at a breakpoint (suspending it alone) and main,
/// let go, has called `resumee.resume()` and is held at its start. Returns (main, resumee).
async fn main_held_in_thread_resume(s: &mut Session) -> (ThreadReference, ThreadReference) {
    let (main, resumee) = app_resume_both_stopped(s).await;
    main.resume().await.unwrap();
    wait_until_in_thread_resume(&main).await;
    (main, resumee)
}

/// Runs `AppResume` until "resumee" and main are both stopped at breakpoints (each suspending
/// its thread alone), main just before `resumee.resume()`. Returns (main, resumee).
async fn app_resume_both_stopped(s: &mut Session) -> (ThreadReference, ThreadReference) {
    use jdi::{Event, EventRequest, SuspendPolicy};
    let ty = s.run_to_class_prepare("AppResume").await;
    let mut stops = Vec::new();
    for marker in ["@resumee-stop", "@main-ready"] {
        let line = test_rig::fixture_line("AppResume.java", marker).unwrap();
        let location = ty.locations_of_line(line as i32).await.unwrap()[0];
        let request = EventRequest::breakpoint(location).suspend(SuspendPolicy::EventThread);
        stops.push(s.vm.enable_request(&request).await.unwrap().id);
    }
    s.vm.resume().await.unwrap();
    let (mut resumee, mut main) = (None, None);
    while resumee.is_none() || main.is_none() {
        let set = s.events.next_within(TIMEOUT).await.unwrap();
        for event in &set.events {
            if let Event::Breakpoint { request_id, .. } = event {
                let slot = if *request_id == stops[0] { &mut resumee } else { &mut main };
                *slot = set.thread();
            }
        }
    }
    let (main, resumee) = (main.unwrap(), resumee.unwrap());
    assert_eq!(resumee.name().await.unwrap(), "resumee");
    assert_eq!(resumee.suspend_count().await.unwrap(), 1);
    (main, resumee)
}

/// Waits until running `main` is inside `Thread.resume`: suspends it until its top frame is there
/// (resuming it again each time).
async fn wait_until_in_thread_resume(main: &ThreadReference) {
    let deadline = std::time::Instant::now() + TIMEOUT;
    loop {
        main.suspend().await.unwrap();
        let frames = main.frames().await.unwrap();
        let top = frames[0].source_location().await.unwrap();
        let held = top.declaring_type.name() == "java.lang.Thread" && top.method.name() == "resume";
        if held {
            assert_eq!(frames[1].method().await.unwrap().name(), "main");
        }
        main.resume().await.unwrap();
        if held {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "main never got into Thread.resume");
        tokio::task::yield_now().await;
    }
}

/// The application's `Thread.resume()` of a thread the debugger suspended waits until the debugger
/// resumes that thread (the JDK's agent does; OpenJDK's ResumeAfterThreadResumeCallTest): meanwhile
/// the caller is an ordinary running thread, and the debugger's counts still nest.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn app_thread_resume_waits_for_the_debugger_resume() {
    if !app_thread_resume_works("app_thread_resume_waits_for_the_debugger_resume") {
        return;
    }
    let mut s = common::start("AppResume", &[]).await;
    let (main, resumee) = main_held_in_thread_resume(&mut s).await;
    assert_eq!(main.status().await.unwrap(), (ThreadStatus::Running, false));
    assert!(!app_resume_returned(&s.vm).await, "main came back from Thread.resume()");
    assert!(resumee.is_suspended().await.unwrap(), "the application resumed a thread the debugger holds");

    // Suspended once more and resumed once: still the debugger's, main still held.
    resumee.suspend().await.unwrap();
    resumee.resume().await.unwrap();
    assert!(resumee.is_suspended().await.unwrap());
    assert!(!app_resume_returned(&s.vm).await, "main came back from Thread.resume()");

    // The debugger's last resume lets main go on, and then the application's resume runs: main
    // gets to the end (stopped there, so the VM stays to be asked) after "resumee" has finished.
    let done = {
        use jdi::{EventRequest, SuspendPolicy};
        let ty = s.vm.classes_by_name("AppResume").await.unwrap().remove(0);
        let line = test_rig::fixture_line("AppResume.java", "@done").unwrap();
        let location = ty.locations_of_line(line as i32).await.unwrap()[0];
        s.vm.enable_request(&EventRequest::breakpoint(location).suspend(SuspendPolicy::EventThread)).await.unwrap()
    };
    resumee.resume().await.unwrap();
    let set = s
        .events
        .wait_for(TIMEOUT, |e| matches!(e, jdi::Event::Breakpoint { request_id, .. } if *request_id == done.id))
        .await
        .unwrap();
    assert_eq!(set.thread().as_ref(), Some(&main));
    assert!(app_resume_returned(&s.vm).await);
    let output = s.jvm.output_text();
    assert!(output.contains("resume returned") && output.contains("resumee continued"), "{output}");
    s.finish().await;
}

/// A debugger that goes away (its connection closed, no Dispose) while main is held in
/// `Thread.resume()` leaves nothing blocked: the VM finishes normally.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_vanishing_debugger_releases_a_thread_held_in_thread_resume() {
    if !app_thread_resume_works("a_vanishing_debugger_releases_a_thread_held_in_thread_resume") {
        return;
    }
    let mut s = common::start("AppResume", &[]).await;
    let (_main, resumee) = main_held_in_thread_resume(&mut s).await;
    assert!(resumee.is_suspended().await.unwrap());
    s.vm.connection().shutdown().await;
    let output = s.exits_normally().await;
    assert!(output.contains("resume returned") && output.contains("resumee continued"), "{output}");
}

/// The debugger may suspend a thread held in `Thread.resume()` like any other: resuming the target
/// then lets the held thread go on only as far as the debugger's suspension allows (nowhere), and
/// the debugger resuming it finishes the call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thread_held_in_thread_resume_can_be_suspended() {
    if !app_thread_resume_works("a_thread_held_in_thread_resume_can_be_suspended") {
        return;
    }
    let mut s = common::start("AppResume", &[]).await;
    let (main, resumee) = main_held_in_thread_resume(&mut s).await;
    main.suspend().await.unwrap();
    assert_eq!(main.status().await.unwrap(), (ThreadStatus::Running, true));
    resumee.resume().await.unwrap();
    output_line(&s, "resumee continued");
    let frames = main.frames().await.unwrap();
    assert_eq!(frames[0].method().await.unwrap().name(), "resume");
    assert!(!app_resume_returned(&s.vm).await, "main ran while the debugger had it suspended");
    main.resume().await.unwrap();
    let output = s.exits_normally().await;
    assert!(output.contains("resume returned"), "{output}");
}

/// A debugger's own breakpoint at the start of `Thread.resume()` is reported as usual (and the
/// agent's internal one there never is); with it gone, the application's resume still waits.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_breakpoint_at_thread_resume_coexists_with_the_agents_own() {
    if !app_thread_resume_works("a_breakpoint_at_thread_resume_coexists_with_the_agents_own") {
        return;
    }
    use jdi::{Event, EventRequest, SuspendPolicy};
    let mut s = common::start("AppResume", &[]).await;
    let (main, resumee) = app_resume_both_stopped(&mut s).await;
    let thread_class = s.vm.classes_by_name("java.lang.Thread").await.unwrap().remove(0);
    let resume = thread_class.methods_by_name_and_signature("resume", "()V").await.unwrap().remove(0);
    let start = resume.code_location().await.unwrap().expect("Thread.resume() has code");
    let request = EventRequest::breakpoint(start).suspend(SuspendPolicy::EventThread);
    let user = s.vm.enable_request(&request).await.unwrap();
    main.resume().await.unwrap();
    let set = s.events.next_within(TIMEOUT).await.unwrap();
    assert!(
        matches!(set.events.as_slice(), [Event::Breakpoint { request_id, .. }] if *request_id == user.id),
        "{set:?}"
    );
    assert_eq!(set.thread().as_ref(), Some(&main));
    s.vm.disable_request(user).await.unwrap();
    main.resume().await.unwrap();
    wait_until_in_thread_resume(&main).await;
    assert!(!app_resume_returned(&s.vm).await, "main came back from Thread.resume()");
    assert!(resumee.is_suspended().await.unwrap());
    resumee.resume().await.unwrap();
    output_line(&s, "resume returned");
    // No other event came (the internal breakpoint is never reported): the next is the VM's death.
    let next = s.events.next_within(TIMEOUT).await.unwrap();
    assert!(next.is_vm_death(), "{next:?}");
}

/// A suspend-all event in a VM of hundreds of threads stops every one of them once, and the
/// resume lets every one go (the agent suspends and resumes them in one batch each, by IDs it
/// looks up together; a thread left suspended or counted twice would show at the next hit).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_suspend_all_event_in_a_crowded_vm_stops_every_thread_once_and_the_resume_frees_them() {
    const SLEEPERS: usize = 300;
    // Bench: hot() 3 times, then a loop, then idle() until `released`, then deep(1) once.
    let mut s = common::start("Bench", &["3", "1", "1", &SLEEPERS.to_string()]).await;
    let hot = test_rig::fixture_line("Bench.java", "@hot").unwrap();
    for hit in 1..=3 {
        let (_, thread) = if hit == 1 {
            s.run_to_line("Bench", hot).await
        } else {
            s.vm.resume().await.unwrap();
            let set = s.events.wait_for(TIMEOUT, |e| matches!(e, jdi::Event::Breakpoint { .. })).await.unwrap();
            let thread = set.thread().expect("breakpoint thread");
            (set, thread)
        };
        assert_eq!(thread.name().await.unwrap(), "main");
        let threads = s.vm.all_threads().await.unwrap();
        let mut sleepers = 0;
        for t in &threads {
            let name = t.name().await.unwrap();
            assert_eq!(t.suspend_count().await.unwrap(), 1, "hit {hit}: thread {name} suspended once");
            sleepers += usize::from(name.starts_with("idle-"));
        }
        assert_eq!(sleepers, SLEEPERS, "hit {hit}: every sleeper is listed");
    }
    let bench = s.vm.classes_by_name("Bench").await.unwrap().remove(0);
    let released = bench.field_by_name("released").await.unwrap().expect("Bench.released");
    bench.as_class().expect("a class").set_value(&released, Value::Boolean(true)).await.unwrap();
    let output = {
        s.vm.clear_all_breakpoints().await.unwrap();
        s.vm.resume().await.unwrap();
        s.vm.dispose().await.unwrap();
        s.exits_normally().await
    };
    assert!(output.contains("Bench done"), "{output}");
}
