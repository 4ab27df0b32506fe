//! Virtual threads in jdi-rs's thread lists and mirrors, as JDI shows them, on VirtualWork (a
//! named virtual thread that parks, an unnamed one that computes; platform threads before
//! JDK 21). Run on the JDK 17 on `PATH` and on a JDK 21+ (`JDBG_TEST_JDK`), with the JDK's agent
//! (the reference) and ours (`JDI_TEST_AGENT=ours`). Tests about virtual threads say so loudly
//! and check nothing on a JDK without them; the others check the JDK 17 behaviour there.

mod common;

use common::{Session, TIMEOUT, our_agent_path};
use jdi::ThreadReference;
use test_rig::{Agent, DEFAULT_JDK_AGENT_OPTIONS, Debuggee};

/// The agent under test with `extra` options.
fn agent_with(extra: &str) -> Agent {
    let options = format!("{DEFAULT_JDK_AGENT_OPTIONS}{extra}");
    if common::agent_is_ours() { Agent::path(our_agent_path(), options) } else { Agent::jdk(options) }
}

/// VirtualWork with its `main` in a platform thread, stopped at VM start.
async fn start(extra_agent_options: &str) -> Session {
    let jvm = Debuggee::builder("VirtualWork")
        .agent(agent_with(extra_agent_options))
        .virtual_main(false)
        .spawn()
        .expect("debuggee starts");
    let vm = jdi::attach(&jvm.address().to_string(), Some(TIMEOUT)).await.expect("attach");
    let mut events = vm.event_queue().expect("the event queue");
    let set = events.next_within(TIMEOUT).await.expect("VM start event");
    assert!(set.is_vm_start(), "{set:?}");
    Session { jvm, vm, events }
}

fn jdk_has_virtual_threads(test: &str) -> bool {
    let feature = test_rig::jdk_feature_version().expect("the test JDK's version");
    if feature < 21 {
        eprintln!("SKIPPED {test}: the test JDK is {feature}, virtual threads need 21 (set JDBG_TEST_JDK)");
    }
    feature >= 21
}

async fn named(threads: &[ThreadReference], name: &str) -> Option<ThreadReference> {
    for t in threads {
        if t.name().await.ok().as_deref() == Some(name) {
            return Some(t.clone());
        }
    }
    None
}

/// JDI asks `IsVirtual` only of a VM whose JDWP major is 19 or more, and once per thread.
#[tokio::test]
async fn is_virtual_is_asked_once_per_thread_and_only_of_a_jdwp_19_vm() {
    let mut s = start("").await;
    let (_, worker) = s.run_to_marker("VirtualWork", "@vt-work").await;
    let jdwp_major = s.vm.version().await.unwrap().jdwp_major;
    let before = s.vm.commands_sent();
    let first = worker.is_virtual().await.unwrap();
    let asked = s.vm.commands_sent() - before;
    // A new mirror of the same thread: the answer is the VM's, kept per thread.
    let again = s.vm.thread(worker.id()).is_virtual().await.unwrap();
    assert_eq!(first, again);
    assert_eq!(s.vm.commands_sent() - before, asked, "the second answer comes from the cache");
    if jdwp_major >= 19 {
        assert_eq!(asked, 1, "one IsVirtual");
        assert!(first, "the executor's worker is virtual on a JDWP {jdwp_major} VM");
    } else {
        assert_eq!(asked, 0, "no IsVirtual to a JDWP {jdwp_major} VM");
        assert!(!first);
    }
    s.finish().await;
}

/// A hidden class (the lambda's) is named as JDI names it, `VirtualWork$$Lambda/0x...`, and the
/// name finds the class again.
#[tokio::test]
async fn a_hidden_class_is_named_with_a_slash_before_its_suffix() {
    let mut s = start("").await;
    let (_, worker) = s.run_to_marker("VirtualWork", "@vt-work").await;
    let frames = worker.frames().await.unwrap();
    let mut names = Vec::new();
    for f in &frames {
        names.push(s.vm.reference_type(f.location().class_id.into()).await.unwrap().name());
    }
    assert_eq!(names[..2], ["VirtualWork", "VirtualWork"], "{names:?}");
    let lambda = &names[2];
    let (host, suffix) = lambda.split_once('/').unwrap_or_else(|| panic!("{lambda} has no '/'"));
    assert!(host.starts_with("VirtualWork$$Lambda"), "{names:?}");
    assert!(suffix.starts_with("0x") && !suffix.contains('.'), "{names:?}");
    let found = s.vm.classes_by_name(lambda).await.unwrap();
    assert_eq!(found.len(), 1, "{lambda}");
    assert_eq!(found[0].name(), *lambda);
    s.finish().await;
}

/// A virtual thread's group is `VirtualThreads`, a child of `system`, whose `threads` (JDWP
/// `Children`) never lists virtual threads; `AllThreads` leaves them out without `includevirtualthreads=y`.
#[tokio::test]
async fn virtual_threads_are_in_their_group_but_not_in_group_or_vm_lists() {
    let test = "virtual_threads_are_in_their_group_but_not_in_group_or_vm_lists";
    if !jdk_has_virtual_threads(test) {
        return;
    }
    let mut s = start("").await;
    let (_, worker) = s.run_to_marker("VirtualWork", "@vt-work").await;
    assert!(worker.is_virtual().await.unwrap());
    let group = worker.thread_group().await.unwrap().expect("a live thread has a group");
    assert_eq!(group.name().await.unwrap(), "VirtualThreads");
    assert!(!group.threads().await.unwrap().contains(&worker));
    // A child of `system` (jdb's `threadgroups` lists it there), listed by its parent.
    let parent = group.parent().await.unwrap().expect("VirtualThreads has a parent");
    assert_eq!(parent.name().await.unwrap(), "system");
    assert!(parent.children().await.unwrap().1.contains(&group));
    let all = s.vm.all_threads().await.unwrap();
    assert!(!all.contains(&worker), "AllThreads without includevirtualthreads=y");
    for t in &all {
        assert!(!t.is_virtual().await.unwrap(), "{t:?} in AllThreads is virtual");
    }
    assert!(named(&all, "vt-parked").await.is_none());
    s.finish().await;
}

/// With `includevirtualthreads=y`, `AllThreads` lists the live virtual threads too, the parked
/// one and the one at the breakpoint, as the JDK's agent does.
#[tokio::test]
async fn include_virtual_threads_lists_them_in_all_threads() {
    let test = "include_virtual_threads_lists_them_in_all_threads";
    if !jdk_has_virtual_threads(test) {
        return;
    }
    let mut s = start(",includevirtualthreads=y").await;
    let (_, worker) = s.run_to_marker("VirtualWork", "@vt-work").await;
    let all = s.vm.all_threads().await.unwrap();
    assert!(all.contains(&worker), "the event thread is listed: {all:?}");
    let parked = named(&all, "vt-parked").await.expect("the parked virtual thread is listed");
    assert!(parked.is_virtual().await.unwrap());
    let main = named(&all, "main").await.expect("main is listed");
    assert!(!main.is_virtual().await.unwrap());
    s.finish().await;
}
