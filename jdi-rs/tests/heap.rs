//! Heap queries against a real VM (`VirtualMachine.InstanceCounts`, `ReferenceType.Instances`,
//! `ObjectReference.ReferringObjects`), under the agent `JDI_TEST_AGENT` picks: they count only
//! objects reachable for garbage collection, as the JDWP spec says. `Garbage`
//! (tests/fixtures/Garbage.java) drops objects it held without forcing a collection, so a walk
//! that counts every object in the heap sees them still; its items are each reached through two
//! references, so a walk that counts references instead of objects sees them twice.

mod common;

use std::collections::HashSet;

use common::{Session, TIMEOUT};
use jdi::protocol::SuspendPolicy;
use jdi::{Event, EventRequest, ObjectReference, ReferenceType, ThreadReference, VirtualMachine};

/// Runs to the line marked `// @marker` in Garbage.java with only the event thread suspended: a
/// VM suspended whole keeps every object the debugger has an ID for (both agents pin them, so
/// that nothing is collected under a debugger looking at a stopped VM), dropped ones included.
async fn run_to(s: &mut Session, thread: Option<&ThreadReference>, marker: &str) -> ThreadReference {
    let line = test_rig::fixture_line("Garbage.java", marker).unwrap() as i32;
    let garbage = class(&s.vm, "Garbage").await;
    let location = garbage.locations_of_line(line).await.unwrap()[0];
    let req =
        s.vm.enable_request(&EventRequest::breakpoint(location).suspend(SuspendPolicy::EventThread)).await.unwrap();
    match thread {
        Some(t) => t.resume().await.unwrap(),
        None => s.vm.resume().await.unwrap(),
    }
    let set = s
        .events
        .wait_for(TIMEOUT, |e| matches!(e, Event::Breakpoint { request_id, .. } if *request_id == req.id))
        .await
        .unwrap();
    s.vm.disable_request(req).await.unwrap();
    set.thread().expect("breakpoint thread")
}

async fn class(vm: &VirtualMachine, name: &str) -> ReferenceType {
    let mut found = vm.classes_by_name(name).await.unwrap();
    assert_eq!(found.len(), 1, "{name}: {found:?}");
    found.pop().unwrap()
}

/// The object in local `name` of the top frame.
async fn local_object(thread: &ThreadReference, name: &str) -> ObjectReference {
    let frame = thread.frame(0).await.unwrap();
    let value = frame.get_value_by_name(name).await.unwrap().unwrap_or_else(|| panic!("no local {name}"));
    thread.vm().value_mirror(value).as_object().unwrap_or_else(|| panic!("{name} is not an object: {value:?}"))
}

fn distinct(objects: &[ObjectReference]) -> usize {
    objects.iter().map(ObjectReference::unique_id).collect::<HashSet<_>>().len()
}

/// What the heap queries answer for `Item`s and the referrers of `target`.
async fn check(vm: &VirtualMachine, item: &ReferenceType, target: &ObjectReference, items: usize, referrers: usize) {
    let target_type = class(vm, "Garbage$Target").await;
    let counts = vm.instance_counts(&[item.clone(), target_type.clone()]).await.unwrap();
    assert_eq!(counts, [items as i64, 1], "Item, Target");
    // A type asked for twice is answered twice by our agent (the JDK's answers 0 for all but its
    // last place in the list).
    if common::agent_is_ours() {
        let counts = vm.instance_counts(&[item.clone(), target_type.clone(), item.clone()]).await.unwrap();
        assert_eq!(counts, [items as i64, 1, items as i64], "Item, Target, Item");
    }
    let all = item.instances(0).await.unwrap();
    assert_eq!((all.len(), distinct(&all)), (items, items), "Item instances");
    if items > 3 {
        assert_eq!(item.instances(3).await.unwrap().len(), 3);
    }
    for i in all.iter().take(3) {
        assert_eq!(i.reference_type().await.unwrap(), *item);
    }
    assert_eq!(target_type.instances(0).await.unwrap(), std::slice::from_ref(target));
    let holders = target.referring_objects(0).await.unwrap();
    assert_eq!((holders.len(), distinct(&holders)), (referrers, referrers), "referrers of the target: {holders:?}");
    for h in &holders {
        assert_eq!(h.reference_type().await.unwrap(), *item);
    }
    if referrers > 2 {
        assert_eq!(target.referring_objects(2).await.unwrap().len(), 2);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn heap_queries_count_only_reachable_objects_once_each() {
    let mut s = common::start("Garbage", &[]).await;
    if !s.vm.can_get_instance_info().await.unwrap() {
        eprintln!("the agent cannot report instances; skipping");
        return s.finish().await;
    }
    s.run_to_class_prepare("Garbage").await;
    let thread = run_to(&mut s, None, "@held").await;
    let vm = s.vm.clone();
    let item = class(&vm, "Garbage$Item").await;
    let target = local_object(&thread, "target").await;
    // Items 0-3 and 20 hold the target.
    check(&vm, &item, &target, 26, 5).await;
    // java.lang.Class asked for beside Item: Item's class object is counted as an instance of
    // Class, and Item's own instances still count.
    let class_class = class(&vm, "java.lang.Class").await;
    let counts = vm.instance_counts(&[class_class.clone(), item.clone()]).await.unwrap();
    assert!(counts[0] > 0 && counts[1] == 26, "{counts:?}");
    assert!(class_class.instances(0).await.unwrap().contains(&item.class_object().await.unwrap().0));

    // The second half dropped: items 13-25 still refer to each other, to item 0 and (item 20) to
    // the target, but nothing live refers to them.
    let thread = run_to(&mut s, Some(&thread), "@half").await;
    check(&vm, &item, &target, 13, 4).await;
    let thread = run_to(&mut s, Some(&thread), "@dropped").await;
    check(&vm, &item, &target, 0, 0).await;

    // More instances than the agent fetches at once.
    run_to(&mut s, Some(&thread), "@many").await;
    check(&vm, &item, &target, 40_000, 0).await;
    assert_eq!(item.instances(20_000).await.unwrap().len(), 20_000);
    s.finish().await;
}
