//! The wrappers against the fake environment: memory freed exactly once, errors passed through,
//! missing functions reported, strings decoded.

use std::ptr;
use std::sync::atomic::Ordering::SeqCst;
use std::time::Duration;

use super::fake::FakeEnv;
use super::sys::*;
use super::*;

fn fake_thread(addr: usize) -> jthread {
    ptr::without_provenance_mut(addr)
}

#[test]
fn arrays_are_freed_when_dropped() {
    let (env, jvmti) = FakeEnv::new();
    let threads = jvmti.get_all_threads().unwrap();
    assert_eq!(threads.iter().map(|t| t.addr()).collect::<Vec<_>>(), [0x10, 0x20, 0x30]);
    assert_eq!(env.live_allocations.load(SeqCst), 1);
    drop(threads);
    assert_eq!(env.live_allocations.load(SeqCst), 0);
}

#[test]
fn into_raw_hands_the_block_over() {
    let (env, jvmti) = FakeEnv::new();
    let (ptr, len) = jvmti.get_all_threads().unwrap().into_raw();
    assert_eq!(len, 3);
    assert_eq!(env.live_allocations.load(SeqCst), 1);
    // SAFETY: the block came from this environment and is freed once.
    unsafe { jvmti.deallocate(ptr.cast()) }.unwrap();
    assert_eq!(env.live_allocations.load(SeqCst), 0);
}

#[test]
fn strings_are_decoded_and_freed() {
    let (env, jvmti) = FakeEnv::new();
    let (signature, generic) = jvmti.get_class_signature(ptr::without_provenance_mut(1)).unwrap();
    assert_eq!(signature, "Ljava/util/List;");
    assert_eq!(generic.as_deref(), Some("<E:Ljava/lang/Object;>Ljava/lang/Object;"));
    // Modified UTF-8: C0 80 is NUL, and a surrogate pair spelled as two 3-byte sequences.
    let (signature, generic) = jvmti.get_class_signature(ptr::without_provenance_mut(2)).unwrap();
    assert_eq!(signature, "LA\0\u{1F600};");
    assert_eq!(generic, None);
    assert_eq!(env.live_allocations.load(SeqCst), 0);
}

#[test]
fn errors_pass_through_and_allocate_nothing() {
    let (env, jvmti) = FakeEnv::new();
    let err = jvmti.get_class_signature(ptr::without_provenance_mut(3)).unwrap_err();
    assert_eq!(err, JvmtiError::INVALID_CLASS);
    assert_eq!(err.to_jdwp(), jdwp_protocol::ErrorCode::INVALID_CLASS);
    assert_eq!(jvmti.get_frame_count(fake_thread(0x10)), Ok(5));
    assert_eq!(jvmti.get_frame_count(fake_thread(0x11)), Err(JvmtiError::INVALID_THREAD));
    assert_eq!(env.live_allocations.load(SeqCst), 0);
}

#[test]
fn a_null_slot_is_not_available() {
    let (_env, jvmti) = FakeEnv::new();
    assert_eq!(jvmti.get_phase(), Err(JvmtiError::NOT_AVAILABLE));
    assert_eq!(jvmti.get_phase().unwrap_err().to_jdwp(), jdwp_protocol::ErrorCode::NOT_IMPLEMENTED);
}

#[test]
fn local_variable_table_frees_every_string() {
    let (env, jvmti) = FakeEnv::new();
    let table = jvmti.get_local_variable_table(ptr::without_provenance_mut(1)).unwrap();
    assert_eq!(
        table,
        [
            LocalVariable {
                start_location: 0,
                length: 10,
                name: "this".into(),
                signature: "LMain;".into(),
                generic_signature: None,
                slot: 0,
            },
            LocalVariable {
                start_location: 2,
                length: 8,
                name: "list".into(),
                signature: "Ljava/util/List;".into(),
                generic_signature: Some("Ljava/util/List<Ljava/lang/String;>;".into()),
                slot: 1,
            },
        ]
    );
    assert_eq!(env.live_allocations.load(SeqCst), 0);
}

#[test]
fn system_properties_free_names_and_array() {
    let (env, jvmti) = FakeEnv::new();
    assert_eq!(jvmti.get_system_properties().unwrap(), ["java.version", "os.name"]);
    assert_eq!(env.live_allocations.load(SeqCst), 0);
}

#[test]
fn thread_info_decodes_and_frees_the_name() {
    let (env, jvmti) = FakeEnv::new();
    let info = jvmti.get_thread_info(ptr::null_mut()).unwrap();
    assert_eq!(info.name, "main");
    assert_eq!(info.priority, 5);
    assert!(info.is_daemon);
    assert_eq!(info.thread_group.addr(), 0x99);
    assert!(info.context_class_loader.is_null());
    assert_eq!(env.live_allocations.load(SeqCst), 0);
}

#[test]
fn stack_trace_fills_a_caller_buffer() {
    let (_env, jvmti) = FakeEnv::new();
    let frames = jvmti.get_stack_trace(fake_thread(0x10), 1, 3).unwrap();
    let summary: Vec<_> = frames.iter().map(|f| (f.method.addr(), f.location)).collect();
    assert_eq!(summary, [(2, 10), (3, 20), (4, 30)]);
    assert!(jvmti.get_stack_trace(fake_thread(0x10), 0, 0).unwrap().is_empty());
    assert_eq!(jvmti.get_stack_trace(fake_thread(0x10), 0, -1), Err(JvmtiError::ILLEGAL_ARGUMENT));
}

#[test]
fn thread_lists_report_per_thread_results() {
    let (_env, jvmti) = FakeEnv::new();
    let results = jvmti.suspend_thread_list(&[fake_thread(0x10), fake_thread(0x20), fake_thread(0x30)]).unwrap();
    assert_eq!(results, [Ok(()), Err(JvmtiError::THREAD_SUSPENDED), Ok(())]);
    // ResumeThreadList is not in the fake table.
    assert_eq!(jvmti.resume_thread_list(&[fake_thread(0x10)]), Err(JvmtiError::NOT_AVAILABLE));
}

#[test]
fn capabilities_and_version() {
    let (_env, jvmti) = FakeEnv::new();
    let caps = jvmti.get_potential_capabilities().unwrap();
    assert!(caps.can_suspend() && caps.can_generate_breakpoint_events() && !caps.can_pop_frame());
    assert_eq!(jvmti.get_version_number(), Ok(JVMTI_VERSION_17));
}

#[test]
fn raw_monitor_guard_exits_once() {
    let (env, jvmti) = FakeEnv::new();
    let monitor = jvmti.create_raw_monitor("agent lock").unwrap();
    {
        let guard = monitor.enter().unwrap();
        let nested = monitor.enter().unwrap();
        assert_eq!(env.monitor_depth.load(SeqCst), 2);
        drop(nested);
        guard.notify_all().unwrap();
        assert_eq!(env.monitor_depth.load(SeqCst), 1);
        // Wait is not in the fake table: the error comes back, the guard stays usable.
        assert_eq!(guard.wait(Some(Duration::from_micros(1))), Err(JvmtiError::NOT_AVAILABLE));
    }
    assert_eq!(env.monitor_depth.load(SeqCst), 0);
    assert_eq!(env.notifications.load(SeqCst), 1);
}

#[test]
fn allocate_and_deallocate() {
    let (env, jvmti) = FakeEnv::new();
    let block = jvmti.allocate(64).unwrap();
    assert_eq!(env.live_allocations.load(SeqCst), 1);
    // SAFETY: allocated above by this environment, freed once.
    unsafe { jvmti.deallocate(block.as_ptr()) }.unwrap();
    assert_eq!(env.live_allocations.load(SeqCst), 0);
}

#[test]
fn a_null_environment_is_refused() {
    // SAFETY: null is allowed and refused.
    assert!(unsafe { Jvmti::from_raw(ptr::null_mut()) }.is_none());
    let mut no_table: *const JvmtiInterface = ptr::null();
    // SAFETY: points to a (null) table pointer, which is refused before any use.
    assert!(unsafe { Jvmti::from_raw(&mut no_table) }.is_none());
}

#[test]
fn handles_are_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Jvmti>();
    assert_send_sync::<RawMonitor>();
}
