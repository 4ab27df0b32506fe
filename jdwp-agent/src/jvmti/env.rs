//! The wrappers, grouped as the spec groups the functions.
//!
//! They take JNI references and IDs as the raw pointers they are and pass them to the VM, which is
//! what clippy's `not_unsafe_ptr_arg_deref` flags. These functions are safe by the agent-wide
//! contract in the [module docs](super): references are live wherever the agent holds them, and
//! the VM validates what they point to. Marking every call `unsafe` would repeat that contract at
//! hundreds of call sites without checking anything more.
#![allow(clippy::not_unsafe_ptr_arg_deref)]

use std::ffi::{CString, c_char, c_void};
use std::ptr::{self, NonNull};

use super::memory::{JvmtiBuf, JvmtiString};
use super::sys::*;
use super::{Jvmti, JvmtiError};

type Result<T> = std::result::Result<T, JvmtiError>;

/// `GetThreadInfo`, with the name decoded. The references are local references.
#[derive(Clone, Debug)]
pub struct ThreadInfo {
    pub name: String,
    pub priority: jint,
    pub is_daemon: bool,
    /// Null if the thread has terminated.
    pub thread_group: jthreadGroup,
    pub context_class_loader: jobject,
}

/// `GetThreadGroupInfo`, with the name decoded. `parent` is a local reference (null at the top).
#[derive(Clone, Debug)]
pub struct ThreadGroupInfo {
    pub parent: jthreadGroup,
    pub name: String,
    pub max_priority: jint,
    pub is_daemon: bool,
}

/// A name, a JNI signature and a generic signature (`None` when the class file has none), as
/// `GetMethodName` and `GetFieldName` return them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NameAndSignature {
    pub name: String,
    pub signature: String,
    pub generic: Option<String>,
}

/// One entry of `GetLocalVariableTable`, strings decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LocalVariable {
    pub start_location: jlocation,
    pub length: jint,
    pub name: String,
    pub signature: String,
    pub generic_signature: Option<String>,
    pub slot: jint,
}

/// `GetObjectMonitorUsage`. All threads are local references.
#[derive(Debug)]
pub struct MonitorUsage {
    /// Null if no thread owns the monitor.
    pub owner: jthread,
    pub entry_count: jint,
    /// Threads waiting to own the monitor.
    pub waiters: JvmtiBuf<jthread>,
    /// Threads waiting to be notified.
    pub notify_waiters: JvmtiBuf<jthread>,
}

/// The stacks `GetAllStackTraces`/`GetThreadListStackTraces` return, in one JVMTI block.
#[derive(Debug)]
pub struct StackTraces {
    infos: JvmtiBuf<jvmtiStackInfo>,
}

/// One thread's stack in a [`StackTraces`].
#[derive(Clone, Copy, Debug)]
pub struct StackTrace<'a> {
    /// A local reference.
    pub thread: jthread,
    /// As `GetThreadState` gives it.
    pub state: jint,
    /// The current frame first.
    pub frames: &'a [jvmtiFrameInfo],
}

impl StackTraces {
    pub fn len(&self) -> usize {
        self.infos.len()
    }

    pub fn is_empty(&self) -> bool {
        self.infos.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = StackTrace<'_>> {
        self.infos.iter().map(|info| {
            let frames = match usize::try_from(info.frame_count) {
                Ok(n) if n > 0 && !info.frame_buffer.is_null() => {
                    // SAFETY: JVMTI returns each thread's `frame_count` frames at `frame_buffer`,
                    // inside the same block as the infos, which lives as long as `self`.
                    unsafe { std::slice::from_raw_parts(info.frame_buffer, n) }
                }
                _ => &[],
            };
            StackTrace { thread: info.thread, state: info.state, frames }
        })
    }
}

/// A C string for a JVMTI argument; JVMTI wants (modified) UTF-8, and no Rust `&str` we pass holds
/// characters where the two differ in a way that matters (NUL aside, which is refused).
fn c_string(s: &str) -> Result<CString> {
    CString::new(s).map_err(|_| JvmtiError::ILLEGAL_ARGUMENT)
}

impl Jvmti {
    /// Takes ownership of a JVMTI-allocated string.
    ///
    /// # Safety
    ///
    /// As for [`JvmtiString::from_raw`].
    unsafe fn string(self, ptr: *mut c_char) -> JvmtiString {
        // SAFETY: forwarded to our caller.
        unsafe { JvmtiString::from_raw(self, ptr) }
    }

    /// Takes ownership of a JVMTI-allocated array of `count` elements.
    ///
    /// # Safety
    ///
    /// As for [`JvmtiBuf::from_raw`].
    unsafe fn buf<T>(self, ptr: *mut T, count: jint) -> JvmtiBuf<T> {
        // SAFETY: forwarded to our caller.
        unsafe { JvmtiBuf::from_count(self, ptr, count) }
    }

    // -----------------------------------------------------------------------------------------
    // Memory management
    // -----------------------------------------------------------------------------------------

    /// Allocates `size` bytes with the JVMTI allocator (for memory handed to the VM, such as a
    /// `ClassFileLoadHook` replacement). The block is uninitialized; free it with
    /// [`deallocate`](Self::deallocate) or hand it over.
    pub fn allocate(self, size: usize) -> Result<NonNull<u8>> {
        let size = jlong::try_from(size).map_err(|_| JvmtiError::ILLEGAL_ARGUMENT)?;
        let mut mem: *mut u8 = ptr::null_mut();
        jvmti_call!(self, Allocate(size, &mut mem))?;
        // A zero-sized allocation may legitimately return null.
        NonNull::new(mem).ok_or(JvmtiError::OUT_OF_MEMORY)
    }

    /// Frees a block this environment allocated.
    ///
    /// # Safety
    ///
    /// `mem` was allocated by this environment (by `Allocate` or as a JVMTI result), is not used
    /// afterwards, and is freed only once.
    pub unsafe fn deallocate(self, mem: *mut u8) -> Result<()> {
        jvmti_call!(self, Deallocate(mem))
    }

    // -----------------------------------------------------------------------------------------
    // Version, capabilities, environment
    // -----------------------------------------------------------------------------------------

    /// The JVMTI version the VM implements (see `sys::JVMTI_VERSION_MASK_*`).
    pub fn get_version_number(self) -> Result<jint> {
        let mut version = 0;
        jvmti_call!(self, GetVersionNumber(&mut version))?;
        Ok(version)
    }

    /// The capabilities this environment could add now.
    pub fn get_potential_capabilities(self) -> Result<jvmtiCapabilities> {
        let mut caps = jvmtiCapabilities::default();
        jvmti_call!(self, GetPotentialCapabilities(&mut caps))?;
        Ok(caps)
    }

    /// The capabilities this environment has.
    pub fn get_capabilities(self) -> Result<jvmtiCapabilities> {
        let mut caps = jvmtiCapabilities::default();
        jvmti_call!(self, GetCapabilities(&mut caps))?;
        Ok(caps)
    }

    /// Adds capabilities; fails with `NOT_AVAILABLE` if any of them cannot be had (then none is).
    pub fn add_capabilities(self, caps: &jvmtiCapabilities) -> Result<()> {
        jvmti_call!(self, AddCapabilities(caps))
    }

    pub fn relinquish_capabilities(self, caps: &jvmtiCapabilities) -> Result<()> {
        jvmti_call!(self, RelinquishCapabilities(caps))
    }

    /// Installs the event handlers (replacing all previous ones).
    pub fn set_event_callbacks(self, callbacks: &jvmtiEventCallbacks) -> Result<()> {
        let size = jint::try_from(size_of::<jvmtiEventCallbacks>()).map_err(|_| JvmtiError::INTERNAL)?;
        jvmti_call!(self, SetEventCallbacks(callbacks, size))
    }

    /// Enables or disables an event for all threads (`thread` null) or one thread.
    pub fn set_event_notification_mode(self, enable: bool, event: jvmtiEvent, thread: jthread) -> Result<()> {
        let mode = if enable { JVMTI_ENABLE } else { JVMTI_DISABLE };
        jvmti_call!(self, SetEventNotificationMode(mode, event, thread))
    }

    /// Asks for the events that already happened (`CompiledMethodLoad`, `DynamicCodeGenerated`).
    pub fn generate_events(self, event: jvmtiEvent) -> Result<()> {
        jvmti_call!(self, GenerateEvents(event))
    }

    pub fn get_phase(self) -> Result<jvmtiPhase> {
        let mut phase = 0;
        jvmti_call!(self, GetPhase(&mut phase))?;
        Ok(phase)
    }

    /// Disposes of the environment.
    ///
    /// # Safety
    ///
    /// No copy of this handle (nor anything holding one, such as a [`JvmtiBuf`]) is used afterwards.
    pub unsafe fn dispose_environment(self) -> Result<()> {
        jvmti_call!(self, DisposeEnvironment())
    }

    /// The VM's name for an error code (e.g. `JVMTI_ERROR_INVALID_THREAD`).
    pub fn get_error_name(self, error: JvmtiError) -> Result<String> {
        let mut name = ptr::null_mut();
        jvmti_call!(self, GetErrorName(error.0, &mut name))?;
        // SAFETY: on success `name` is a string JVMTI allocated for us.
        Ok(unsafe { self.string(name) }.to_string())
    }

    pub fn get_environment_local_storage(self) -> Result<*mut c_void> {
        let mut data = ptr::null_mut();
        jvmti_call!(self, GetEnvironmentLocalStorage(&mut data))?;
        Ok(data)
    }

    /// Stores a pointer in the environment (the VM never dereferences it).
    pub fn set_environment_local_storage(self, data: *const c_void) -> Result<()> {
        jvmti_call!(self, SetEnvironmentLocalStorage(data))
    }

    // -----------------------------------------------------------------------------------------
    // Threads
    // -----------------------------------------------------------------------------------------

    /// All live threads (agent threads included).
    pub fn get_all_threads(self) -> Result<JvmtiBuf<jthread>> {
        let (mut count, mut threads) = (0, ptr::null_mut());
        jvmti_call!(self, GetAllThreads(&mut count, &mut threads))?;
        // SAFETY: on success JVMTI allocated `count` threads for us.
        Ok(unsafe { self.buf(threads, count) })
    }

    /// `thread` null means the current thread.
    pub fn get_thread_info(self, thread: jthread) -> Result<ThreadInfo> {
        let mut info = jvmtiThreadInfo {
            name: ptr::null_mut(),
            priority: 0,
            is_daemon: 0,
            thread_group: ptr::null_mut(),
            context_class_loader: ptr::null_mut(),
        };
        jvmti_call!(self, GetThreadInfo(thread, &mut info))?;
        // SAFETY: on success `info.name` is a string JVMTI allocated for us.
        let name = unsafe { self.string(info.name) };
        Ok(ThreadInfo {
            name: name.to_string(),
            priority: info.priority,
            is_daemon: info.is_daemon != 0,
            thread_group: info.thread_group,
            context_class_loader: info.context_class_loader,
        })
    }

    /// The `JVMTI_THREAD_STATE_*` bits of `thread` (null: the current thread).
    pub fn get_thread_state(self, thread: jthread) -> Result<jint> {
        let mut state = 0;
        jvmti_call!(self, GetThreadState(thread, &mut state))?;
        Ok(state)
    }

    pub fn get_current_thread(self) -> Result<jthread> {
        let mut thread = ptr::null_mut();
        jvmti_call!(self, GetCurrentThread(&mut thread))?;
        Ok(thread)
    }

    pub fn suspend_thread(self, thread: jthread) -> Result<()> {
        jvmti_call!(self, SuspendThread(thread))
    }

    pub fn resume_thread(self, thread: jthread) -> Result<()> {
        jvmti_call!(self, ResumeThread(thread))
    }

    /// JVMTI 21: suspends every virtual thread but those in `except`, mounted or not, including
    /// ones this agent has never seen. Needs `can_support_virtual_threads`; a JVMTI 17 VM has no
    /// such function (its slot is reserved) and answers `NOT_AVAILABLE` here.
    pub fn suspend_all_virtual_threads(self, except: &[jthread]) -> Result<()> {
        let count = jint::try_from(except.len()).map_err(|_| JvmtiError::ILLEGAL_ARGUMENT)?;
        if !matches!(self.get_version_number(), Ok(v) if v >= JVMTI_VERSION_21) {
            return Err(JvmtiError::NOT_AVAILABLE);
        }
        jvmti_call!(self, SuspendAllVirtualThreads(count, except.as_ptr()))
    }

    /// JVMTI 21: resumes every virtual thread but those in `except` (see
    /// [`Self::suspend_all_virtual_threads`]).
    pub fn resume_all_virtual_threads(self, except: &[jthread]) -> Result<()> {
        let count = jint::try_from(except.len()).map_err(|_| JvmtiError::ILLEGAL_ARGUMENT)?;
        if !matches!(self.get_version_number(), Ok(v) if v >= JVMTI_VERSION_21) {
            return Err(JvmtiError::NOT_AVAILABLE);
        }
        jvmti_call!(self, ResumeAllVirtualThreads(count, except.as_ptr()))
    }

    /// Suspends several threads at once; the outer error is for the call, the inner ones per thread.
    pub fn suspend_thread_list(self, threads: &[jthread]) -> Result<Vec<Result<()>>> {
        self.thread_list_call(threads, true)
    }

    /// Resumes several threads at once; the outer error is for the call, the inner ones per thread.
    pub fn resume_thread_list(self, threads: &[jthread]) -> Result<Vec<Result<()>>> {
        self.thread_list_call(threads, false)
    }

    fn thread_list_call(self, threads: &[jthread], suspend: bool) -> Result<Vec<Result<()>>> {
        let count = jint::try_from(threads.len()).map_err(|_| JvmtiError::ILLEGAL_ARGUMENT)?;
        let mut results = vec![JVMTI_ERROR_NONE; threads.len()];
        if suspend {
            jvmti_call!(self, SuspendThreadList(count, threads.as_ptr(), results.as_mut_ptr()))?;
        } else {
            jvmti_call!(self, ResumeThreadList(count, threads.as_ptr(), results.as_mut_ptr()))?;
        }
        Ok(results.into_iter().map(JvmtiError::check).collect())
    }

    /// Throws `exception` in `thread` (capability `can_signal_thread`).
    pub fn stop_thread(self, thread: jthread, exception: jobject) -> Result<()> {
        jvmti_call!(self, StopThread(thread, exception))
    }

    /// Interrupts `thread` (capability `can_signal_thread`).
    pub fn interrupt_thread(self, thread: jthread) -> Result<()> {
        jvmti_call!(self, InterruptThread(thread))
    }

    /// Starts an agent thread running `start(jvmti, jni, arg)`, as a daemon, on the `java.lang.Thread`
    /// object `thread` (created by the caller and not yet started).
    ///
    /// # Safety
    ///
    /// `start` must be sound to call with `arg` on another thread at any later time (typically
    /// `arg` is a leaked `Box` the function takes back), and must not unwind.
    pub unsafe fn run_agent_thread(
        self,
        thread: jthread,
        start: unsafe extern "system" fn(*mut jvmtiEnv, *mut JNIEnv, *mut c_void),
        arg: *const c_void,
        priority: jint,
    ) -> Result<()> {
        jvmti_call!(self, RunAgentThread(thread, Some(start), arg, priority))
    }

    /// Monitors owned by `thread` (capability `can_get_owned_monitor_info`).
    pub fn get_owned_monitor_info(self, thread: jthread) -> Result<JvmtiBuf<jobject>> {
        let (mut count, mut monitors) = (0, ptr::null_mut());
        jvmti_call!(self, GetOwnedMonitorInfo(thread, &mut count, &mut monitors))?;
        // SAFETY: on success JVMTI allocated `count` objects for us.
        Ok(unsafe { self.buf(monitors, count) })
    }

    /// Monitors owned by `thread` with the depth of the frame that locked each (-1 if unknown);
    /// capability `can_get_owned_monitor_stack_depth_info`.
    pub fn get_owned_monitor_stack_depth_info(self, thread: jthread) -> Result<JvmtiBuf<jvmtiMonitorStackDepthInfo>> {
        let (mut count, mut infos) = (0, ptr::null_mut());
        jvmti_call!(self, GetOwnedMonitorStackDepthInfo(thread, &mut count, &mut infos))?;
        // SAFETY: on success JVMTI allocated `count` infos for us.
        Ok(unsafe { self.buf(infos, count) })
    }

    /// The object whose monitor `thread` waits to enter or re-enter, if any (capability
    /// `can_get_current_contended_monitor`).
    pub fn get_current_contended_monitor(self, thread: jthread) -> Result<Option<jobject>> {
        let mut monitor = ptr::null_mut();
        jvmti_call!(self, GetCurrentContendedMonitor(thread, &mut monitor))?;
        Ok((!monitor.is_null()).then_some(monitor))
    }

    /// CPU time of `thread` in nanoseconds (capability `can_get_thread_cpu_time`).
    pub fn get_thread_cpu_time(self, thread: jthread) -> Result<jlong> {
        let mut nanos = 0;
        jvmti_call!(self, GetThreadCpuTime(thread, &mut nanos))?;
        Ok(nanos)
    }

    pub fn get_thread_local_storage(self, thread: jthread) -> Result<*mut c_void> {
        let mut data = ptr::null_mut();
        jvmti_call!(self, GetThreadLocalStorage(thread, &mut data))?;
        Ok(data)
    }

    /// Stores a pointer with `thread` (the VM never dereferences it).
    pub fn set_thread_local_storage(self, thread: jthread, data: *const c_void) -> Result<()> {
        jvmti_call!(self, SetThreadLocalStorage(thread, data))
    }

    // -----------------------------------------------------------------------------------------
    // Thread groups
    // -----------------------------------------------------------------------------------------

    pub fn get_top_thread_groups(self) -> Result<JvmtiBuf<jthreadGroup>> {
        let (mut count, mut groups) = (0, ptr::null_mut());
        jvmti_call!(self, GetTopThreadGroups(&mut count, &mut groups))?;
        // SAFETY: on success JVMTI allocated `count` groups for us.
        Ok(unsafe { self.buf(groups, count) })
    }

    pub fn get_thread_group_info(self, group: jthreadGroup) -> Result<ThreadGroupInfo> {
        let mut info =
            jvmtiThreadGroupInfo { parent: ptr::null_mut(), name: ptr::null_mut(), max_priority: 0, is_daemon: 0 };
        jvmti_call!(self, GetThreadGroupInfo(group, &mut info))?;
        // SAFETY: on success `info.name` is a string JVMTI allocated for us.
        let name = unsafe { self.string(info.name) };
        Ok(ThreadGroupInfo {
            parent: info.parent,
            name: name.to_string(),
            max_priority: info.max_priority,
            is_daemon: info.is_daemon != 0,
        })
    }

    /// The live threads and the child groups of `group`.
    pub fn get_thread_group_children(self, group: jthreadGroup) -> Result<(JvmtiBuf<jthread>, JvmtiBuf<jthreadGroup>)> {
        let (mut thread_count, mut threads) = (0, ptr::null_mut());
        let (mut group_count, mut groups) = (0, ptr::null_mut());
        jvmti_call!(
            self,
            GetThreadGroupChildren(group, &mut thread_count, &mut threads, &mut group_count, &mut groups)
        )?;
        // SAFETY: on success JVMTI allocated both arrays, of the counts given, for us.
        Ok(unsafe { (self.buf(threads, thread_count), self.buf(groups, group_count)) })
    }

    // -----------------------------------------------------------------------------------------
    // Stack frames
    // -----------------------------------------------------------------------------------------

    pub fn get_frame_count(self, thread: jthread) -> Result<jint> {
        let mut count = 0;
        jvmti_call!(self, GetFrameCount(thread, &mut count))?;
        Ok(count)
    }

    /// Up to `max_frames` frames of `thread` from depth `start_depth` (0 is the current frame;
    /// negative counts from the bottom of the stack, as in the spec).
    pub fn get_stack_trace(self, thread: jthread, start_depth: jint, max_frames: jint) -> Result<Vec<jvmtiFrameInfo>> {
        let capacity = usize::try_from(max_frames).map_err(|_| JvmtiError::ILLEGAL_ARGUMENT)?;
        let mut frames: Vec<jvmtiFrameInfo> = Vec::with_capacity(capacity);
        let mut count = 0;
        jvmti_call!(self, GetStackTrace(thread, start_depth, max_frames, frames.as_mut_ptr(), &mut count))?;
        let count = usize::try_from(count).unwrap_or(0).min(capacity);
        // SAFETY: JVMTI wrote `count` frames (never more than `max_frames`, which is the capacity;
        // we clamp anyway) to the start of the buffer.
        unsafe { frames.set_len(count) };
        Ok(frames)
    }

    /// Stacks of all threads, up to `max_frames` frames each.
    pub fn get_all_stack_traces(self, max_frames: jint) -> Result<StackTraces> {
        let (mut infos, mut count) = (ptr::null_mut(), 0);
        jvmti_call!(self, GetAllStackTraces(max_frames, &mut infos, &mut count))?;
        // SAFETY: on success JVMTI allocated `count` infos (and their frames) as one block for us.
        Ok(StackTraces { infos: unsafe { self.buf(infos, count) } })
    }

    /// Stacks of the given threads, up to `max_frames` frames each.
    pub fn get_thread_list_stack_traces(self, threads: &[jthread], max_frames: jint) -> Result<StackTraces> {
        let count = jint::try_from(threads.len()).map_err(|_| JvmtiError::ILLEGAL_ARGUMENT)?;
        let mut infos = ptr::null_mut();
        jvmti_call!(self, GetThreadListStackTraces(count, threads.as_ptr(), max_frames, &mut infos))?;
        // SAFETY: on success JVMTI allocated one info per requested thread, as one block, for us.
        Ok(StackTraces { infos: unsafe { self.buf(infos, count) } })
    }

    /// The method and bytecode index executing at `depth` in `thread` (location -1 if native).
    pub fn get_frame_location(self, thread: jthread, depth: jint) -> Result<(jmethodID, jlocation)> {
        let (mut method, mut location) = (ptr::null_mut(), 0);
        jvmti_call!(self, GetFrameLocation(thread, depth, &mut method, &mut location))?;
        Ok((method, location))
    }

    /// Asks for a `FramePop` event when the frame at `depth` returns.
    pub fn notify_frame_pop(self, thread: jthread, depth: jint) -> Result<()> {
        jvmti_call!(self, NotifyFramePop(thread, depth))
    }

    /// Pops the current frame of a suspended `thread` (capability `can_pop_frame`).
    pub fn pop_frame(self, thread: jthread) -> Result<()> {
        jvmti_call!(self, PopFrame(thread))
    }

    // -----------------------------------------------------------------------------------------
    // Force early return (capability `can_force_early_return`)
    // -----------------------------------------------------------------------------------------

    pub fn force_early_return_object(self, thread: jthread, value: jobject) -> Result<()> {
        jvmti_call!(self, ForceEarlyReturnObject(thread, value))
    }

    pub fn force_early_return_int(self, thread: jthread, value: jint) -> Result<()> {
        jvmti_call!(self, ForceEarlyReturnInt(thread, value))
    }

    pub fn force_early_return_long(self, thread: jthread, value: jlong) -> Result<()> {
        jvmti_call!(self, ForceEarlyReturnLong(thread, value))
    }

    pub fn force_early_return_float(self, thread: jthread, value: jfloat) -> Result<()> {
        jvmti_call!(self, ForceEarlyReturnFloat(thread, value))
    }

    pub fn force_early_return_double(self, thread: jthread, value: jdouble) -> Result<()> {
        jvmti_call!(self, ForceEarlyReturnDouble(thread, value))
    }

    pub fn force_early_return_void(self, thread: jthread) -> Result<()> {
        jvmti_call!(self, ForceEarlyReturnVoid(thread))
    }

    // -----------------------------------------------------------------------------------------
    // Local variables (capability `can_access_local_variables`)
    // -----------------------------------------------------------------------------------------

    pub fn get_local_object(self, thread: jthread, depth: jint, slot: jint) -> Result<jobject> {
        let mut value = ptr::null_mut();
        jvmti_call!(self, GetLocalObject(thread, depth, slot, &mut value))?;
        Ok(value)
    }

    /// `this` of the frame at `depth` (errors `INVALID_SLOT` for a static method).
    pub fn get_local_instance(self, thread: jthread, depth: jint) -> Result<jobject> {
        let mut value = ptr::null_mut();
        jvmti_call!(self, GetLocalInstance(thread, depth, &mut value))?;
        Ok(value)
    }

    /// For `int`, `short`, `char`, `byte` and `boolean` locals.
    pub fn get_local_int(self, thread: jthread, depth: jint, slot: jint) -> Result<jint> {
        let mut value = 0;
        jvmti_call!(self, GetLocalInt(thread, depth, slot, &mut value))?;
        Ok(value)
    }

    pub fn get_local_long(self, thread: jthread, depth: jint, slot: jint) -> Result<jlong> {
        let mut value = 0;
        jvmti_call!(self, GetLocalLong(thread, depth, slot, &mut value))?;
        Ok(value)
    }

    pub fn get_local_float(self, thread: jthread, depth: jint, slot: jint) -> Result<jfloat> {
        let mut value = 0.0;
        jvmti_call!(self, GetLocalFloat(thread, depth, slot, &mut value))?;
        Ok(value)
    }

    pub fn get_local_double(self, thread: jthread, depth: jint, slot: jint) -> Result<jdouble> {
        let mut value = 0.0;
        jvmti_call!(self, GetLocalDouble(thread, depth, slot, &mut value))?;
        Ok(value)
    }

    pub fn set_local_object(self, thread: jthread, depth: jint, slot: jint, value: jobject) -> Result<()> {
        jvmti_call!(self, SetLocalObject(thread, depth, slot, value))
    }

    pub fn set_local_int(self, thread: jthread, depth: jint, slot: jint, value: jint) -> Result<()> {
        jvmti_call!(self, SetLocalInt(thread, depth, slot, value))
    }

    pub fn set_local_long(self, thread: jthread, depth: jint, slot: jint, value: jlong) -> Result<()> {
        jvmti_call!(self, SetLocalLong(thread, depth, slot, value))
    }

    pub fn set_local_float(self, thread: jthread, depth: jint, slot: jint, value: jfloat) -> Result<()> {
        jvmti_call!(self, SetLocalFloat(thread, depth, slot, value))
    }

    pub fn set_local_double(self, thread: jthread, depth: jint, slot: jint, value: jdouble) -> Result<()> {
        jvmti_call!(self, SetLocalDouble(thread, depth, slot, value))
    }

    // -----------------------------------------------------------------------------------------
    // Breakpoints and watched fields
    // -----------------------------------------------------------------------------------------

    /// Capability `can_generate_breakpoint_events`; `DUPLICATE` if one is already set there.
    pub fn set_breakpoint(self, method: jmethodID, location: jlocation) -> Result<()> {
        jvmti_call!(self, SetBreakpoint(method, location))
    }

    /// `NOT_FOUND` if no breakpoint is set there.
    pub fn clear_breakpoint(self, method: jmethodID, location: jlocation) -> Result<()> {
        jvmti_call!(self, ClearBreakpoint(method, location))
    }

    pub fn set_field_access_watch(self, klass: jclass, field: jfieldID) -> Result<()> {
        jvmti_call!(self, SetFieldAccessWatch(klass, field))
    }

    pub fn clear_field_access_watch(self, klass: jclass, field: jfieldID) -> Result<()> {
        jvmti_call!(self, ClearFieldAccessWatch(klass, field))
    }

    pub fn set_field_modification_watch(self, klass: jclass, field: jfieldID) -> Result<()> {
        jvmti_call!(self, SetFieldModificationWatch(klass, field))
    }

    pub fn clear_field_modification_watch(self, klass: jclass, field: jfieldID) -> Result<()> {
        jvmti_call!(self, ClearFieldModificationWatch(klass, field))
    }

    // -----------------------------------------------------------------------------------------
    // Modules
    // -----------------------------------------------------------------------------------------

    pub fn get_all_modules(self) -> Result<JvmtiBuf<jobject>> {
        let (mut count, mut modules) = (0, ptr::null_mut());
        jvmti_call!(self, GetAllModules(&mut count, &mut modules))?;
        // SAFETY: on success JVMTI allocated `count` modules for us.
        Ok(unsafe { self.buf(modules, count) })
    }

    /// The module of package `package` (internal form, `java/lang`) in `loader`; the unnamed
    /// module's answer is null.
    pub fn get_named_module(self, loader: jobject, package: &str) -> Result<jobject> {
        let package = c_string(package)?;
        let mut module = ptr::null_mut();
        jvmti_call!(self, GetNamedModule(loader, package.as_ptr(), &mut module))?;
        Ok(module)
    }

    // -----------------------------------------------------------------------------------------
    // Classes
    // -----------------------------------------------------------------------------------------

    pub fn get_loaded_classes(self) -> Result<JvmtiBuf<jclass>> {
        let (mut count, mut classes) = (0, ptr::null_mut());
        jvmti_call!(self, GetLoadedClasses(&mut count, &mut classes))?;
        // SAFETY: on success JVMTI allocated `count` classes for us.
        Ok(unsafe { self.buf(classes, count) })
    }

    /// Classes for which `loader` (null: the bootstrap loader) is an initiating loader.
    pub fn get_class_loader_classes(self, loader: jobject) -> Result<JvmtiBuf<jclass>> {
        let (mut count, mut classes) = (0, ptr::null_mut());
        jvmti_call!(self, GetClassLoaderClasses(loader, &mut count, &mut classes))?;
        // SAFETY: on success JVMTI allocated `count` classes for us.
        Ok(unsafe { self.buf(classes, count) })
    }

    /// The JNI signature (`Ljava/lang/String;`) and the generic signature, if any.
    pub fn get_class_signature(self, klass: jclass) -> Result<(String, Option<String>)> {
        let (mut signature, mut generic) = (ptr::null_mut(), ptr::null_mut());
        jvmti_call!(self, GetClassSignature(klass, &mut signature, &mut generic))?;
        // SAFETY: on success both are strings JVMTI allocated for us (or null).
        let (signature, generic) = unsafe { (self.string(signature), self.string(generic)) };
        // Decoded straight into the String (`to_string` would format it through a second copy).
        let decode = |s: &super::JvmtiString| jdwp_protocol::mutf8::decode(s.as_bytes());
        Ok((decode(&signature), (!generic.is_null()).then(|| decode(&generic))))
    }

    /// The JNI signature alone, undecoded (modified UTF-8): for comparing many classes' names
    /// with one, without a `String` or the generic signature per class.
    pub fn get_class_signature_raw(self, klass: jclass) -> Result<JvmtiString> {
        let mut signature = ptr::null_mut();
        jvmti_call!(self, GetClassSignature(klass, &mut signature, ptr::null_mut()))?;
        // SAFETY: on success a string JVMTI allocated for us.
        Ok(unsafe { self.string(signature) })
    }

    /// The `JVMTI_CLASS_STATUS_*` bits.
    pub fn get_class_status(self, klass: jclass) -> Result<jint> {
        let mut status = 0;
        jvmti_call!(self, GetClassStatus(klass, &mut status))?;
        Ok(status)
    }

    /// Capability `can_get_source_file_name`; `ABSENT_INFORMATION` without a `SourceFile` attribute.
    pub fn get_source_file_name(self, klass: jclass) -> Result<String> {
        let mut name = ptr::null_mut();
        jvmti_call!(self, GetSourceFileName(klass, &mut name))?;
        // SAFETY: on success `name` is a string JVMTI allocated for us.
        Ok(unsafe { self.string(name) }.to_string())
    }

    pub fn get_class_modifiers(self, klass: jclass) -> Result<jint> {
        let mut modifiers = 0;
        jvmti_call!(self, GetClassModifiers(klass, &mut modifiers))?;
        Ok(modifiers)
    }

    /// Declared methods (in class-file order with `can_maintain_original_method_order`);
    /// `CLASS_NOT_PREPARED` before preparation.
    pub fn get_class_methods(self, klass: jclass) -> Result<JvmtiBuf<jmethodID>> {
        let (mut count, mut methods) = (0, ptr::null_mut());
        jvmti_call!(self, GetClassMethods(klass, &mut count, &mut methods))?;
        // SAFETY: on success JVMTI allocated `count` method IDs for us.
        Ok(unsafe { self.buf(methods, count) })
    }

    /// Declared fields, in class-file order; `CLASS_NOT_PREPARED` before preparation.
    pub fn get_class_fields(self, klass: jclass) -> Result<JvmtiBuf<jfieldID>> {
        let (mut count, mut fields) = (0, ptr::null_mut());
        jvmti_call!(self, GetClassFields(klass, &mut count, &mut fields))?;
        // SAFETY: on success JVMTI allocated `count` field IDs for us.
        Ok(unsafe { self.buf(fields, count) })
    }

    /// Direct superinterfaces; `CLASS_NOT_PREPARED` before preparation.
    pub fn get_implemented_interfaces(self, klass: jclass) -> Result<JvmtiBuf<jclass>> {
        let (mut count, mut interfaces) = (0, ptr::null_mut());
        jvmti_call!(self, GetImplementedInterfaces(klass, &mut count, &mut interfaces))?;
        // SAFETY: on success JVMTI allocated `count` classes for us.
        Ok(unsafe { self.buf(interfaces, count) })
    }

    /// `(minor, major)` class file version.
    pub fn get_class_version_numbers(self, klass: jclass) -> Result<(jint, jint)> {
        let (mut minor, mut major) = (0, 0);
        jvmti_call!(self, GetClassVersionNumbers(klass, &mut minor, &mut major))?;
        Ok((minor, major))
    }

    /// The constant pool as in the class file: the entry count (`constant_pool_count`, one more
    /// than the entries) and the bytes after it. Capability `can_get_constant_pool`.
    pub fn get_constant_pool(self, klass: jclass) -> Result<(jint, JvmtiBuf<u8>)> {
        let (mut count, mut byte_count, mut bytes) = (0, 0, ptr::null_mut());
        jvmti_call!(self, GetConstantPool(klass, &mut count, &mut byte_count, &mut bytes))?;
        // SAFETY: on success JVMTI allocated `byte_count` bytes for us.
        Ok((count, unsafe { self.buf(bytes, byte_count) }))
    }

    pub fn is_interface(self, klass: jclass) -> Result<bool> {
        let mut answer = 0;
        jvmti_call!(self, IsInterface(klass, &mut answer))?;
        Ok(answer != 0)
    }

    pub fn is_array_class(self, klass: jclass) -> Result<bool> {
        let mut answer = 0;
        jvmti_call!(self, IsArrayClass(klass, &mut answer))?;
        Ok(answer != 0)
    }

    pub fn is_modifiable_class(self, klass: jclass) -> Result<bool> {
        let mut answer = 0;
        jvmti_call!(self, IsModifiableClass(klass, &mut answer))?;
        Ok(answer != 0)
    }

    /// The defining loader; null for the bootstrap loader.
    pub fn get_class_loader(self, klass: jclass) -> Result<jobject> {
        let mut loader = ptr::null_mut();
        jvmti_call!(self, GetClassLoader(klass, &mut loader))?;
        Ok(loader)
    }

    /// The `SourceDebugExtension` attribute (capability `can_get_source_debug_extension`).
    pub fn get_source_debug_extension(self, klass: jclass) -> Result<String> {
        let mut extension = ptr::null_mut();
        jvmti_call!(self, GetSourceDebugExtension(klass, &mut extension))?;
        // SAFETY: on success `extension` is a string JVMTI allocated for us.
        Ok(unsafe { self.string(extension) }.to_string())
    }

    /// Redefines classes from new class file bytes (capability `can_redefine_classes`).
    pub fn redefine_classes(self, classes: &[(jclass, &[u8])]) -> Result<()> {
        let definitions = classes
            .iter()
            .map(|&(klass, bytes)| {
                Ok(jvmtiClassDefinition {
                    klass,
                    class_byte_count: jint::try_from(bytes.len()).map_err(|_| JvmtiError::ILLEGAL_ARGUMENT)?,
                    class_bytes: bytes.as_ptr(),
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let count = jint::try_from(definitions.len()).map_err(|_| JvmtiError::ILLEGAL_ARGUMENT)?;
        jvmti_call!(self, RedefineClasses(count, definitions.as_ptr()))
    }

    // -----------------------------------------------------------------------------------------
    // Objects
    // -----------------------------------------------------------------------------------------

    pub fn get_object_hash_code(self, object: jobject) -> Result<jint> {
        let mut hash = 0;
        jvmti_call!(self, GetObjectHashCode(object, &mut hash))?;
        Ok(hash)
    }

    /// Owner, entry count and waiters of `object`'s monitor (capability `can_get_monitor_info`).
    pub fn get_object_monitor_usage(self, object: jobject) -> Result<MonitorUsage> {
        let mut usage = jvmtiMonitorUsage {
            owner: ptr::null_mut(),
            entry_count: 0,
            waiter_count: 0,
            waiters: ptr::null_mut(),
            notify_waiter_count: 0,
            notify_waiters: ptr::null_mut(),
        };
        jvmti_call!(self, GetObjectMonitorUsage(object, &mut usage))?;
        // SAFETY: on success both arrays were allocated for us, of the counts given.
        let (waiters, notify_waiters) = unsafe {
            (self.buf(usage.waiters, usage.waiter_count), self.buf(usage.notify_waiters, usage.notify_waiter_count))
        };
        Ok(MonitorUsage { owner: usage.owner, entry_count: usage.entry_count, waiters, notify_waiters })
    }

    /// An implementation-specific approximation of the object's size in bytes.
    pub fn get_object_size(self, object: jobject) -> Result<jlong> {
        let mut size = 0;
        jvmti_call!(self, GetObjectSize(object, &mut size))?;
        Ok(size)
    }

    // -----------------------------------------------------------------------------------------
    // Fields
    // -----------------------------------------------------------------------------------------

    pub fn get_field_name(self, klass: jclass, field: jfieldID) -> Result<NameAndSignature> {
        let (mut name, mut signature, mut generic) = (ptr::null_mut(), ptr::null_mut(), ptr::null_mut());
        jvmti_call!(self, GetFieldName(klass, field, &mut name, &mut signature, &mut generic))?;
        // SAFETY: on success all three are strings JVMTI allocated for us (or null).
        Ok(unsafe { self.name_and_signature(name, signature, generic) })
    }

    pub fn get_field_declaring_class(self, klass: jclass, field: jfieldID) -> Result<jclass> {
        let mut declaring = ptr::null_mut();
        jvmti_call!(self, GetFieldDeclaringClass(klass, field, &mut declaring))?;
        Ok(declaring)
    }

    pub fn get_field_modifiers(self, klass: jclass, field: jfieldID) -> Result<jint> {
        let mut modifiers = 0;
        jvmti_call!(self, GetFieldModifiers(klass, field, &mut modifiers))?;
        Ok(modifiers)
    }

    /// Capability `can_get_synthetic_attribute`.
    pub fn is_field_synthetic(self, klass: jclass, field: jfieldID) -> Result<bool> {
        let mut answer = 0;
        jvmti_call!(self, IsFieldSynthetic(klass, field, &mut answer))?;
        Ok(answer != 0)
    }

    // -----------------------------------------------------------------------------------------
    // Methods
    // -----------------------------------------------------------------------------------------

    pub fn get_method_name(self, method: jmethodID) -> Result<NameAndSignature> {
        let (mut name, mut signature, mut generic) = (ptr::null_mut(), ptr::null_mut(), ptr::null_mut());
        jvmti_call!(self, GetMethodName(method, &mut name, &mut signature, &mut generic))?;
        // SAFETY: on success all three are strings JVMTI allocated for us (or null).
        Ok(unsafe { self.name_and_signature(name, signature, generic) })
    }

    /// # Safety
    ///
    /// Each pointer is null or a string this environment allocated and nobody else frees.
    unsafe fn name_and_signature(
        self,
        name: *mut c_char,
        signature: *mut c_char,
        generic: *mut c_char,
    ) -> NameAndSignature {
        // SAFETY: forwarded to our caller; each string is taken (and freed) exactly once.
        let (name, signature, generic) = unsafe { (self.string(name), self.string(signature), self.string(generic)) };
        NameAndSignature { name: name.to_string(), signature: signature.to_string(), generic: generic.to_option() }
    }

    pub fn get_method_declaring_class(self, method: jmethodID) -> Result<jclass> {
        let mut declaring = ptr::null_mut();
        jvmti_call!(self, GetMethodDeclaringClass(method, &mut declaring))?;
        Ok(declaring)
    }

    pub fn get_method_modifiers(self, method: jmethodID) -> Result<jint> {
        let mut modifiers = 0;
        jvmti_call!(self, GetMethodModifiers(method, &mut modifiers))?;
        Ok(modifiers)
    }

    /// Slots of local variables, arguments included (`NATIVE_METHOD` for native methods).
    pub fn get_max_locals(self, method: jmethodID) -> Result<jint> {
        let mut max = 0;
        jvmti_call!(self, GetMaxLocals(method, &mut max))?;
        Ok(max)
    }

    /// Slots taken by the arguments, `this` included.
    pub fn get_arguments_size(self, method: jmethodID) -> Result<jint> {
        let mut size = 0;
        jvmti_call!(self, GetArgumentsSize(method, &mut size))?;
        Ok(size)
    }

    /// Capability `can_get_line_numbers`; `ABSENT_INFORMATION` without a `LineNumberTable`.
    pub fn get_line_number_table(self, method: jmethodID) -> Result<JvmtiBuf<jvmtiLineNumberEntry>> {
        let (mut count, mut table) = (0, ptr::null_mut());
        jvmti_call!(self, GetLineNumberTable(method, &mut count, &mut table))?;
        // SAFETY: on success JVMTI allocated `count` entries for us.
        Ok(unsafe { self.buf(table, count) })
    }

    /// First and last bytecode index of the method (-1, -1 if native).
    pub fn get_method_location(self, method: jmethodID) -> Result<(jlocation, jlocation)> {
        let (mut start, mut end) = (0, 0);
        jvmti_call!(self, GetMethodLocation(method, &mut start, &mut end))?;
        Ok((start, end))
    }

    /// Capability `can_access_local_variables`; `ABSENT_INFORMATION` without a
    /// `LocalVariableTable` (class not compiled with `-g`).
    pub fn get_local_variable_table(self, method: jmethodID) -> Result<Vec<LocalVariable>> {
        let (mut count, mut table) = (0, ptr::null_mut());
        jvmti_call!(self, GetLocalVariableTable(method, &mut count, &mut table))?;
        // SAFETY: on success JVMTI allocated `count` entries for us, each with three strings of
        // its own that we must free too.
        let table = unsafe { self.buf(table, count) };
        Ok(table
            .iter()
            .map(|entry| {
                // SAFETY: each string belongs to exactly one entry, taken once here.
                let (name, signature, generic) = unsafe {
                    (self.string(entry.name), self.string(entry.signature), self.string(entry.generic_signature))
                };
                LocalVariable {
                    start_location: entry.start_location,
                    length: entry.length,
                    name: name.to_string(),
                    signature: signature.to_string(),
                    generic_signature: generic.to_option(),
                    slot: entry.slot,
                }
            })
            .collect())
    }

    /// Capability `can_get_bytecodes`.
    pub fn get_bytecodes(self, method: jmethodID) -> Result<JvmtiBuf<u8>> {
        let (mut count, mut bytecodes) = (0, ptr::null_mut());
        jvmti_call!(self, GetBytecodes(method, &mut count, &mut bytecodes))?;
        // SAFETY: on success JVMTI allocated `count` bytes for us.
        Ok(unsafe { self.buf(bytecodes, count) })
    }

    pub fn is_method_native(self, method: jmethodID) -> Result<bool> {
        let mut answer = 0;
        jvmti_call!(self, IsMethodNative(method, &mut answer))?;
        Ok(answer != 0)
    }

    /// Capability `can_get_synthetic_attribute`.
    pub fn is_method_synthetic(self, method: jmethodID) -> Result<bool> {
        let mut answer = 0;
        jvmti_call!(self, IsMethodSynthetic(method, &mut answer))?;
        Ok(answer != 0)
    }

    /// Whether `method` was replaced by a redefinition.
    pub fn is_method_obsolete(self, method: jmethodID) -> Result<bool> {
        let mut answer = 0;
        jvmti_call!(self, IsMethodObsolete(method, &mut answer))?;
        Ok(answer != 0)
    }

    // -----------------------------------------------------------------------------------------
    // Heap (capability `can_tag_objects`)
    // -----------------------------------------------------------------------------------------

    /// The tag of `object` (0 if untagged).
    pub fn get_tag(self, object: jobject) -> Result<jlong> {
        let mut tag = 0;
        jvmti_call!(self, GetTag(object, &mut tag))?;
        Ok(tag)
    }

    /// Tags `object` (0 removes the tag).
    pub fn set_tag(self, object: jobject, tag: jlong) -> Result<()> {
        jvmti_call!(self, SetTag(object, tag))
    }

    /// The objects carrying any of `tags` (local references) and the tag of each.
    pub fn get_objects_with_tags(self, tags: &[jlong]) -> Result<(JvmtiBuf<jobject>, JvmtiBuf<jlong>)> {
        let tag_count = jint::try_from(tags.len()).map_err(|_| JvmtiError::ILLEGAL_ARGUMENT)?;
        let (mut count, mut objects, mut object_tags) = (0, ptr::null_mut(), ptr::null_mut());
        jvmti_call!(self, GetObjectsWithTags(tag_count, tags.as_ptr(), &mut count, &mut objects, &mut object_tags))?;
        // SAFETY: on success JVMTI allocated both arrays, of `count` elements each, for us.
        Ok(unsafe { (self.buf(objects, count), self.buf(object_tags, count)) })
    }

    pub fn force_garbage_collection(self) -> Result<()> {
        jvmti_call!(self, ForceGarbageCollection())
    }

    /// Reports every heap object (matching `heap_filter`, and of class `klass` unless null) to
    /// `callbacks`.
    ///
    /// # Safety
    ///
    /// The callbacks must be sound to call with `user_data`, must not unwind, and must keep to the
    /// spec's restrictions on heap callbacks (no JNI, no JVMTI but the few callback-safe functions).
    pub unsafe fn iterate_through_heap(
        self,
        heap_filter: jint,
        klass: jclass,
        callbacks: &jvmtiHeapCallbacks,
        user_data: *const c_void,
    ) -> Result<()> {
        jvmti_call!(self, IterateThroughHeap(heap_filter, klass, callbacks, user_data))
    }

    /// Follows references from the heap roots (or from `initial_object`), reporting them to
    /// `callbacks`.
    ///
    /// # Safety
    ///
    /// As for [`iterate_through_heap`](Self::iterate_through_heap).
    pub unsafe fn follow_references(
        self,
        heap_filter: jint,
        klass: jclass,
        initial_object: jobject,
        callbacks: &jvmtiHeapCallbacks,
        user_data: *const c_void,
    ) -> Result<()> {
        jvmti_call!(self, FollowReferences(heap_filter, klass, initial_object, callbacks, user_data))
    }

    /// Average bytes between `SampledObjectAlloc` events (0: every allocation).
    pub fn set_heap_sampling_interval(self, interval: jint) -> Result<()> {
        jvmti_call!(self, SetHeapSamplingInterval(interval))
    }

    // -----------------------------------------------------------------------------------------
    // System properties and timers
    // -----------------------------------------------------------------------------------------

    /// A VM system property as the VM saw it at startup (not `System.setProperty` changes).
    pub fn get_system_property(self, property: &str) -> Result<String> {
        let property = c_string(property)?;
        let mut value = ptr::null_mut();
        jvmti_call!(self, GetSystemProperty(property.as_ptr(), &mut value))?;
        // SAFETY: on success `value` is a string JVMTI allocated for us.
        Ok(unsafe { self.string(value) }.to_string())
    }

    /// The names of the properties [`get_system_property`](Self::get_system_property) knows.
    pub fn get_system_properties(self) -> Result<Vec<String>> {
        let (mut count, mut names) = (0, ptr::null_mut());
        jvmti_call!(self, GetSystemProperties(&mut count, &mut names))?;
        // SAFETY: on success JVMTI allocated `count` strings and an array for them, all ours.
        let names = unsafe { self.buf(names, count) };
        // SAFETY: each string is taken (and freed) once.
        Ok(names.iter().map(|&name| unsafe { self.string(name) }.to_string()).collect())
    }

    /// Elapsed nanoseconds from an arbitrary origin (`System.nanoTime`'s clock).
    pub fn get_time(self) -> Result<jlong> {
        let mut nanos = 0;
        jvmti_call!(self, GetTime(&mut nanos))?;
        Ok(nanos)
    }

    pub fn get_available_processors(self) -> Result<jint> {
        let mut count = 0;
        jvmti_call!(self, GetAvailableProcessors(&mut count))?;
        Ok(count)
    }

    /// `JVMTI_JLOCATION_JVMBCI` on HotSpot: locations are bytecode indices.
    pub fn get_jlocation_format(self) -> Result<jvmtiJlocationFormat> {
        let mut format = 0;
        jvmti_call!(self, GetJLocationFormat(&mut format))?;
        Ok(format)
    }
}
