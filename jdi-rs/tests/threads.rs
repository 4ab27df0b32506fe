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

    // parked is in outer-group, a child of main's group, a child of system.
    let outer = parked.thread_group().await.unwrap().unwrap();
    assert_eq!(outer.name().await.unwrap(), "outer-group");
    let main_group = outer.parent().await.unwrap().unwrap();
    assert_eq!(Some(&main_group), main.thread_group().await.unwrap().as_ref());
    assert_eq!(main_group.name().await.unwrap(), "main");
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
    assert_eq!(method_names(&main).await, ["reenter", "nested", "main"]);
    let lock_a = static_object(&s.vm, "LOCK_A").await;
    let lock_b = static_object(&s.vm, "LOCK_B").await;
    assert_eq!(lock_a.get_value_by_name("name").await.unwrap().map(|v| v.tag()), Some(jdi::Tag::String));

    let info = lock_a.monitor_info().await.unwrap();
    assert_eq!(info.owner.as_ref(), Some(&main));
    assert_eq!(info.entry_count, 2, "a synchronized block, then a synchronized method");
    assert!(info.waiters.is_empty());
    assert_eq!(lock_b.entry_count().await.unwrap(), 1);
    assert_eq!(lock_b.owning_thread().await.unwrap().as_ref(), Some(&main));

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

    // "waiter" is in LOCK_W.wait(): it owns nothing, and the monitor names it as a waiter.
    assert_eq!(waiter.status().await.unwrap().0, ThreadStatus::Wait);
    assert_eq!(waiter.current_contended_monitor().await.unwrap().as_ref(), Some(&lock_w));
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
