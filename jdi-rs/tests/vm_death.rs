//! The VM death event set against a real VM, under the agent `JDI_TEST_AGENT` picks: with VM
//! death requests enabled, the set carries an event for each (newest first) and then the
//! automatic one (request 0), as the JDK's agent sends it. JDI's users read the set's first
//! event: nsk/jdi `Event/request/request001` expects it to name the debugger's request.

mod common;

use common::TIMEOUT;
use jdi::{Event, EventExt, EventRequest, SuspendPolicy};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requested_vm_death_events_come_first_newest_first() {
    let mut s = common::start("Events", &["loop"]).await;
    let older = s.vm.enable_request(&EventRequest::vm_death().suspend(SuspendPolicy::None)).await.unwrap();
    let newer = s.vm.enable_request(&EventRequest::vm_death().suspend(SuspendPolicy::None)).await.unwrap();
    // A disabled request has no event.
    let disabled = s.vm.enable_request(&EventRequest::vm_death()).await.unwrap();
    s.vm.disable_request(disabled).await.unwrap();
    s.vm.resume().await.unwrap();
    let set = s.events.wait_for(TIMEOUT, |e| matches!(e, Event::VmDeath { .. })).await.unwrap();
    let ids: Vec<i32> = set.events.iter().map(|e| e.request_id()).collect();
    assert_eq!(ids, [newer.id, older.id, 0], "{set:?}");
    assert!(set.events.iter().all(|e| matches!(e, Event::VmDeath { .. })));
    assert_eq!(set.suspend_policy, SuspendPolicy::None);
    s.exits_normally().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_request_vm_death_is_the_automatic_event_alone() {
    let mut s = common::start("Events", &["loop"]).await;
    s.vm.resume().await.unwrap();
    let set = s.events.wait_for(TIMEOUT, |e| matches!(e, Event::VmDeath { .. })).await.unwrap();
    let ids: Vec<i32> = set.events.iter().map(|e| e.request_id()).collect();
    assert_eq!(ids, [0], "{set:?}");
    s.exits_normally().await;
}
