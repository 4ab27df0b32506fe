//! A fake JVMTI environment for unit tests: a function table with a few slots filled by Rust
//! functions, enough to check the wrappers' memory handling and error paths without a JVM.
//!
//! Every allocation it hands out is counted, so a test can assert that the wrappers freed all of
//! them, exactly once.

use std::alloc::{Layout, alloc, dealloc};
use std::ffi::{CStr, c_char};
use std::ptr;
use std::sync::atomic::{AtomicI32, AtomicIsize, Ordering::SeqCst};

use super::Jvmti;
use super::sys::*;

/// What `env` points to: the table pointer first (which is all the wrappers look at), then state.
#[repr(C)]
pub struct FakeEnv {
    table: *const JvmtiInterface,
    /// Blocks handed out and not yet deallocated.
    pub live_allocations: AtomicIsize,
    /// Raw monitor entries minus exits.
    pub monitor_depth: AtomicI32,
    pub notifications: AtomicI32,
}

impl FakeEnv {
    /// A leaked environment (tests are short-lived) and its handle.
    pub fn new() -> (&'static FakeEnv, Jvmti) {
        // SAFETY: all-zero bytes are a valid `JvmtiInterface`: every slot is an `Option` of a
        // function pointer (`None`) or a raw pointer (null).
        let mut table: JvmtiInterface = unsafe { std::mem::zeroed() };
        table.Allocate = Some(allocate);
        table.Deallocate = Some(deallocate);
        table.GetVersionNumber = Some(get_version_number);
        table.GetAllThreads = Some(get_all_threads);
        table.GetClassSignature = Some(get_class_signature);
        table.GetLocalVariableTable = Some(get_local_variable_table);
        table.GetFrameCount = Some(get_frame_count);
        table.GetStackTrace = Some(get_stack_trace);
        table.SuspendThreadList = Some(suspend_thread_list);
        table.GetThreadInfo = Some(get_thread_info);
        table.GetPotentialCapabilities = Some(get_potential_capabilities);
        table.CreateRawMonitor = Some(create_raw_monitor);
        table.RawMonitorEnter = Some(raw_monitor_enter);
        table.RawMonitorExit = Some(raw_monitor_exit);
        table.RawMonitorNotifyAll = Some(raw_monitor_notify_all);
        table.GetSystemProperties = Some(get_system_properties);
        let env = Box::leak(Box::new(FakeEnv {
            table: Box::leak(Box::new(table)),
            live_allocations: AtomicIsize::new(0),
            monitor_depth: AtomicI32::new(0),
            notifications: AtomicI32::new(0),
        }));
        let raw = ptr::from_mut(env).cast::<jvmtiEnv>();
        // SAFETY: `raw` points to a table pointer, to a table of the full size, leaked (so never
        // freed); the fake implements no `DisposeEnvironment`.
        let jvmti = unsafe { Jvmti::from_raw(raw) }.unwrap();
        (env, jvmti)
    }
}

/// # Safety
///
/// `env` is a pointer made by [`FakeEnv::new`].
unsafe fn state<'a>(env: *mut jvmtiEnv) -> &'a FakeEnv {
    // SAFETY: the caller's promise; `FakeEnv` is `repr(C)` with the table pointer first.
    unsafe { &*env.cast::<FakeEnv>() }
}

const HEADER: usize = 16;

/// Allocates a block with its size in a header, so `deallocate` can rebuild the layout.
unsafe extern "system" fn allocate(env: *mut jvmtiEnv, size: jlong, mem: *mut *mut u8) -> jvmtiError {
    let Ok(size) = usize::try_from(size) else { return JVMTI_ERROR_ILLEGAL_ARGUMENT };
    let layout = Layout::from_size_align(size + HEADER, HEADER).unwrap();
    // SAFETY: the layout is not zero-sized; the header is written before the block is handed
    // out; `env` and `mem` come from the wrappers under test.
    unsafe {
        let block = alloc(layout);
        if block.is_null() {
            return JVMTI_ERROR_OUT_OF_MEMORY;
        }
        block.cast::<usize>().write(size);
        *mem = block.add(HEADER);
        state(env).live_allocations.fetch_add(1, SeqCst);
    }
    JVMTI_ERROR_NONE
}

unsafe extern "system" fn deallocate(env: *mut jvmtiEnv, mem: *mut u8) -> jvmtiError {
    if mem.is_null() {
        return JVMTI_ERROR_NONE;
    }
    // SAFETY: `mem` came from `allocate` (else the wrapper under test is wrong, and the test may
    // crash, which is a failure too), so the header sits just before it.
    unsafe {
        let block = mem.sub(HEADER);
        let size = block.cast::<usize>().read();
        dealloc(block, Layout::from_size_align(size + HEADER, HEADER).unwrap());
        state(env).live_allocations.fetch_sub(1, SeqCst);
    }
    JVMTI_ERROR_NONE
}

/// Copies `bytes` and a NUL into a fresh block.
///
/// # Safety
///
/// `env` is a fake environment.
unsafe fn alloc_string(env: *mut jvmtiEnv, bytes: &[u8]) -> *mut c_char {
    let mut mem = ptr::null_mut();
    // SAFETY: `allocate` with a valid out-pointer; the block has room for the bytes and the NUL.
    unsafe {
        assert_eq!(allocate(env, (bytes.len() + 1) as jlong, &mut mem), JVMTI_ERROR_NONE);
        ptr::copy_nonoverlapping(bytes.as_ptr(), mem, bytes.len());
        *mem.add(bytes.len()) = 0;
    }
    mem.cast()
}

/// Copies `items` into a fresh block.
///
/// # Safety
///
/// `env` is a fake environment.
unsafe fn alloc_array<T: Copy>(env: *mut jvmtiEnv, items: &[T]) -> *mut T {
    let mut mem = ptr::null_mut();
    // SAFETY: `allocate` with a valid out-pointer, then a copy into a block of the right size,
    // aligned to 16 (enough for every T used here).
    unsafe {
        assert_eq!(allocate(env, size_of_val(items) as jlong, &mut mem), JVMTI_ERROR_NONE);
        ptr::copy_nonoverlapping(items.as_ptr(), mem.cast::<T>(), items.len());
    }
    mem.cast()
}

unsafe extern "system" fn get_version_number(_env: *mut jvmtiEnv, version: *mut jint) -> jvmtiError {
    // SAFETY: out-pointer from the wrapper.
    unsafe { *version = JVMTI_VERSION_17 };
    JVMTI_ERROR_NONE
}

/// Three made-up thread handles (never dereferenced).
unsafe extern "system" fn get_all_threads(
    env: *mut jvmtiEnv,
    count: *mut jint,
    threads: *mut *mut jthread,
) -> jvmtiError {
    let fake: [jthread; 3] =
        [ptr::without_provenance_mut(0x10), ptr::without_provenance_mut(0x20), ptr::without_provenance_mut(0x30)];
    // SAFETY: out-pointers from the wrapper.
    unsafe {
        *threads = alloc_array(env, &fake);
        *count = 3;
    }
    JVMTI_ERROR_NONE
}

/// Class 0x1 has a generic signature; class 0x2 has none; anything else is not a class.
unsafe extern "system" fn get_class_signature(
    env: *mut jvmtiEnv,
    klass: jclass,
    signature: *mut *mut c_char,
    generic: *mut *mut c_char,
) -> jvmtiError {
    // SAFETY: out-pointers from the wrapper; the fake allocates what it returns.
    unsafe {
        match klass.addr() {
            1 => {
                *signature = alloc_string(env, b"Ljava/util/List;");
                *generic = alloc_string(env, b"<E:Ljava/lang/Object;>Ljava/lang/Object;");
            }
            2 => {
                // A class named with a NUL and a supplementary character, in modified UTF-8.
                *signature = alloc_string(env, b"LA\xc0\x80\xed\xa0\xbd\xed\xb8\x80;");
                *generic = ptr::null_mut();
            }
            _ => return JVMTI_ERROR_INVALID_CLASS,
        }
    }
    JVMTI_ERROR_NONE
}

unsafe extern "system" fn get_local_variable_table(
    env: *mut jvmtiEnv,
    _method: jmethodID,
    count: *mut jint,
    table: *mut *mut jvmtiLocalVariableEntry,
) -> jvmtiError {
    // SAFETY: out-pointers from the wrapper; the fake allocates every string and the array.
    unsafe {
        let entries = [
            jvmtiLocalVariableEntry {
                start_location: 0,
                length: 10,
                name: alloc_string(env, b"this"),
                signature: alloc_string(env, b"LMain;"),
                generic_signature: ptr::null_mut(),
                slot: 0,
            },
            jvmtiLocalVariableEntry {
                start_location: 2,
                length: 8,
                name: alloc_string(env, b"list"),
                signature: alloc_string(env, b"Ljava/util/List;"),
                generic_signature: alloc_string(env, b"Ljava/util/List<Ljava/lang/String;>;"),
                slot: 1,
            },
        ];
        *table = alloc_array(env, &entries);
        *count = 2;
    }
    JVMTI_ERROR_NONE
}

/// Thread 0x10 has 5 frames; any other thread is invalid.
unsafe extern "system" fn get_frame_count(_env: *mut jvmtiEnv, thread: jthread, count: *mut jint) -> jvmtiError {
    if thread.addr() != 0x10 {
        return JVMTI_ERROR_INVALID_THREAD;
    }
    // SAFETY: out-pointer from the wrapper.
    unsafe { *count = 5 };
    JVMTI_ERROR_NONE
}

/// Five frames, method `depth + 1`, location `depth * 10`.
unsafe extern "system" fn get_stack_trace(
    _env: *mut jvmtiEnv,
    _thread: jthread,
    start_depth: jint,
    max_frames: jint,
    buffer: *mut jvmtiFrameInfo,
    count: *mut jint,
) -> jvmtiError {
    let frames = (start_depth.max(0)..5).take(max_frames.max(0) as usize);
    let mut n = 0;
    for depth in frames {
        // SAFETY: the wrapper's buffer holds `max_frames` frames and we write fewer.
        unsafe {
            buffer.add(n).write(jvmtiFrameInfo {
                method: ptr::without_provenance_mut(depth as usize + 1),
                location: jlocation::from(depth) * 10,
            })
        };
        n += 1;
    }
    // SAFETY: out-pointer from the wrapper.
    unsafe { *count = n as jint };
    JVMTI_ERROR_NONE
}

/// Thread 0x20 is already suspended; the rest succeed.
unsafe extern "system" fn suspend_thread_list(
    _env: *mut jvmtiEnv,
    count: jint,
    threads: *const jthread,
    results: *mut jvmtiError,
) -> jvmtiError {
    for i in 0..count as usize {
        // SAFETY: the wrapper passes `count` threads and room for `count` results.
        unsafe {
            let thread = *threads.add(i);
            *results.add(i) = if thread.addr() == 0x20 { JVMTI_ERROR_THREAD_SUSPENDED } else { JVMTI_ERROR_NONE };
        }
    }
    JVMTI_ERROR_NONE
}

unsafe extern "system" fn get_thread_info(
    env: *mut jvmtiEnv,
    _thread: jthread,
    info: *mut jvmtiThreadInfo,
) -> jvmtiError {
    // SAFETY: out-pointer from the wrapper; the name is allocated for the caller.
    unsafe {
        *info = jvmtiThreadInfo {
            name: alloc_string(env, b"main"),
            priority: 5,
            is_daemon: 1,
            thread_group: ptr::without_provenance_mut(0x99),
            context_class_loader: ptr::null_mut(),
        };
    }
    JVMTI_ERROR_NONE
}

unsafe extern "system" fn get_potential_capabilities(_env: *mut jvmtiEnv, caps: *mut jvmtiCapabilities) -> jvmtiError {
    let mut c = jvmtiCapabilities::default();
    c.set_can_suspend(true).set_can_generate_breakpoint_events(true);
    // SAFETY: out-pointer from the wrapper.
    unsafe { *caps = c };
    JVMTI_ERROR_NONE
}

unsafe extern "system" fn create_raw_monitor(
    _env: *mut jvmtiEnv,
    name: *const c_char,
    monitor: *mut jrawMonitorID,
) -> jvmtiError {
    // SAFETY: the wrapper passes a NUL-terminated name and an out-pointer.
    unsafe {
        assert_eq!(CStr::from_ptr(name).to_bytes(), b"agent lock");
        *monitor = ptr::without_provenance_mut(0x77);
    }
    JVMTI_ERROR_NONE
}

unsafe extern "system" fn raw_monitor_enter(env: *mut jvmtiEnv, _monitor: jrawMonitorID) -> jvmtiError {
    // SAFETY: `env` is a fake environment.
    unsafe { state(env) }.monitor_depth.fetch_add(1, SeqCst);
    JVMTI_ERROR_NONE
}

unsafe extern "system" fn raw_monitor_exit(env: *mut jvmtiEnv, _monitor: jrawMonitorID) -> jvmtiError {
    // SAFETY: `env` is a fake environment.
    unsafe { state(env) }.monitor_depth.fetch_sub(1, SeqCst);
    JVMTI_ERROR_NONE
}

unsafe extern "system" fn raw_monitor_notify_all(env: *mut jvmtiEnv, _monitor: jrawMonitorID) -> jvmtiError {
    // SAFETY: `env` is a fake environment.
    let env = unsafe { state(env) };
    if env.monitor_depth.load(SeqCst) <= 0 {
        return JVMTI_ERROR_NOT_MONITOR_OWNER;
    }
    env.notifications.fetch_add(1, SeqCst);
    JVMTI_ERROR_NONE
}

unsafe extern "system" fn get_system_properties(
    env: *mut jvmtiEnv,
    count: *mut jint,
    names: *mut *mut *mut c_char,
) -> jvmtiError {
    // SAFETY: out-pointers from the wrapper; every string and the array are allocated.
    unsafe {
        let strings = [alloc_string(env, b"java.version"), alloc_string(env, b"os.name")];
        *names = alloc_array(env, &strings);
        *count = 2;
    }
    JVMTI_ERROR_NONE
}
