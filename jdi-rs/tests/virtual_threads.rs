//! Virtual threads and the runtime version, against a real JVM: run on the JDK 17 on `PATH` and on
//! a JDK 21+ (`JDBG_TEST_JDK=/usr/lib/jvm/temurin-25-jdk-amd64`), with the JDK's agent (the
//! reference) and ours (`JDI_TEST_AGENT=ours`). The virtual-thread tests say so loudly and check
//! nothing on a JDK without virtual threads.

mod common;

use common::{Session, TIMEOUT, agent, agent_is_ours};
use jdi::{Event, EventRequest, SuspendPolicy};
use test_rig::Debuggee;

/// Starts `main_class` suspended, its `main` in a virtual thread or not, attaches and consumes the
/// VM start event.
async fn start(main_class: &str, virtual_main: bool) -> Session {
    let jvm = Debuggee::builder(main_class).agent(agent()).virtual_main(virtual_main).spawn().expect("debuggee starts");
    let vm = jdi::attach(&jvm.address().to_string(), Some(TIMEOUT)).await.expect("attach");
    let mut events = vm.event_queue().expect("the event queue");
    let set = events.next_within(TIMEOUT).await.expect("VM start event");
    assert!(set.is_vm_start(), "{set:?}");
    Session { jvm, vm, events }
}

/// Whether the test JDK has virtual threads; says so when it has not.
fn jdk_has_virtual_threads(test: &str) -> bool {
    let feature = test_rig::jdk_feature_version().expect("the test JDK's version");
    if feature < 21 {
        eprintln!("SKIPPED {test}: the test JDK is {feature}, virtual threads need 21 (set JDBG_TEST_JDK)");
    }
    feature >= 21
}

#[tokio::test]
async fn version_is_the_running_vms_jvmti_version_as_the_jdk_agent_reports_it() {
    let s = start("Hello", false).await;
    let feature = test_rig::jdk_feature_version().unwrap() as i32;
    let v = s.vm.version().await.unwrap();
    assert_eq!((v.jdwp_major, v.jdwp_minor), (feature, 0), "{v:?}");
    let lines: Vec<&str> = v.description.lines().collect();
    assert_eq!(lines.len(), 3, "{:?}", v.description);
    let implementation = if agent_is_ours() { "jdbg-rs agent " } else { "Reference Implementation" };
    assert!(lines[0].starts_with(&format!("Java Debug Wire Protocol ({implementation}")), "{lines:?}");
    assert!(lines[0].ends_with(&format!(") version {feature}.0")), "{lines:?}");
    assert_eq!(lines[1], format!("JVM Debug Interface version {feature}.0"));
    assert!(v.vm_version.starts_with(&feature.to_string()), "{v:?}");
    assert!(lines[2].starts_with(&format!("JVM version {} ({}, ", v.vm_version, v.vm_name)), "{lines:?}");
    s.finish().await;
}

#[tokio::test]
async fn a_platform_main_thread_is_not_virtual() {
    let mut s = start("Hello", false).await;
    let (_, thread) = s.run_to_marker("Hello", "@hello-print").await;
    assert!(!thread.is_virtual().await.unwrap());
    assert_eq!(thread.name().await.unwrap(), "main");
    s.finish().await;
}

#[tokio::test]
async fn a_breakpoint_in_a_virtual_main_is_hit_in_a_virtual_thread() {
    if !jdk_has_virtual_threads("a_breakpoint_in_a_virtual_main_is_hit_in_a_virtual_thread") {
        return;
    }
    let mut s = start("Hello", true).await;
    let (_, thread) = s.run_to_marker("Hello", "@hello-print").await;
    assert!(thread.is_virtual().await.unwrap());
    assert_eq!(thread.name().await.unwrap(), "main");
    s.finish().await;
}

/// Thread starts with and without `PlatformThreadsOnly`, in a program whose main runs in a
/// virtual thread (whose carrier is a platform thread started for it).
#[tokio::test]
async fn platform_threads_only_leaves_out_virtual_thread_starts() {
    let test = "platform_threads_only_leaves_out_virtual_thread_starts";
    if !jdk_has_virtual_threads(test) {
        return;
    }
    if agent_is_ours() {
        // Our agent does not report virtual threads' starts yet (issue #18, events in virtual
        // threads): only the filtered half could be checked, and it would pass vacuously.
        eprintln!("SKIPPED {test}: our agent does not report virtual thread starts yet");
        return;
    }
    let mut s = start("Hello", true).await;
    let all = s.vm.enable_request(&EventRequest::thread_start().suspend(SuspendPolicy::EventThread)).await.unwrap();
    let platform =
        s.vm.enable_request(&EventRequest::thread_start().platform_threads_only().suspend(SuspendPolicy::EventThread))
            .await
            .unwrap();
    s.vm.resume().await.unwrap();
    let (mut seen_all, mut seen_platform) = (Vec::new(), Vec::new());
    loop {
        let set = s.events.next_within(TIMEOUT).await.unwrap();
        if set.is_vm_death() {
            break;
        }
        for event in &set.events {
            if let Event::ThreadStart { request_id, thread } = event {
                let is_virtual = s.vm.thread(*thread).is_virtual().await.unwrap();
                if *request_id == all.id {
                    seen_all.push(is_virtual);
                } else if *request_id == platform.id {
                    seen_platform.push(is_virtual);
                }
            }
        }
        set.resume().await.unwrap();
    }
    assert!(seen_all.contains(&true), "the virtual main's start is reported without the filter: {seen_all:?}");
    assert!(!seen_platform.contains(&true), "with the filter no virtual thread start: {seen_platform:?}");
    assert!(!seen_platform.is_empty(), "the carrier's start is a platform thread start");
    assert_eq!(seen_platform.len(), seen_all.iter().filter(|v| !**v).count(), "{seen_all:?} {seen_platform:?}");
    s.exits_normally().await;
}

#[tokio::test]
async fn platform_threads_only_is_refused_for_other_event_kinds() {
    let s = start("Hello", false).await;
    let err = s.vm.enable_request(&EventRequest::class_prepare("*").platform_threads_only()).await.unwrap_err();
    assert!(matches!(err, jdi::JdiError::InvalidArgument(_)), "{err}");
    s.finish().await;
}
