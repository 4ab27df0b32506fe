//! The signal side of CPU sampling: a CPU-time timer (`ITIMER_PROF`) sends `SIGPROF` to whichever
//! thread is running when each interval of the process's CPU time has been used, and the handler,
//! on that thread, takes the thread's own stack with HotSpot's `AsyncGetCallTrace`. No safepoint,
//! no handshake: the threads that are not running are never touched, and the one that is loses
//! only the handler's few microseconds. Only threads that run get samples, by construction (the
//! "thread has run" rule of `cpu.rs` comes for free).
//!
//! The handler writes into a ring of fixed slots allocated once, for the life of the VM, and never
//! allocates, locks or unwinds; the profiler thread drains the ring at each of its ticks
//! ([`drain`]). A full ring drops the sample (it still counts as a tick).
//!
//! `AsyncGetCallTrace` needs two things from the agent: JVMTI `ClassLoad` events enabled in some
//! environment (else it answers "no class load"), and a `jmethodID` for every method that can be
//! on a stack (it cannot create one inside a signal handler). [`prepare_methods`] creates them for
//! the classes loaded so far, and the profiling environment's `ClassPrepare` callback for later
//! ones, while signal sampling runs.
//!
//! The handler stays installed once installed: a `SIGPROF` still pending when sampling stops
//! would otherwise kill the process (the default action). If another `SIGPROF` handler is there
//! first (another profiler in the same JVM), signal sampling is not used and the sampler falls
//! back to JVMTI stack traces.

use std::cell::UnsafeCell;
use std::ffi::{c_int, c_void};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicI64, AtomicPtr, AtomicU8, AtomicUsize, Ordering};
use std::time::Duration;

use jni_sys::{JNI_OK, JNI_VERSION_1_6, JNIEnv, JavaVM, jint, jmethodID};

use super::fault_guard::Guarded;
use crate::jni::JavaVm;
use crate::jvmti::Jvmti;
use crate::jvmti::sys::jclass;

/// The deepest stack the signal sampler records (its slots are this big).
pub const MAX_DEPTH: i32 = 256;
/// Slots in the ring: at 1 ms on 2 busy cores, about 2000 samples a second come in, and the
/// profiler thread drains every few milliseconds.
const SLOTS: usize = 512;

const FREE: u8 = 0;
const WRITING: u8 = 1;
const FULL: u8 = 2;

/// `ASGCT_CallFrame`: `lineno` is the bytecode index for a Java frame, negative for a native one.
#[repr(C)]
#[derive(Clone, Copy)]
struct CallFrame {
    lineno: jint,
    method_id: jmethodID,
}

/// `ASGCT_CallTrace`.
#[repr(C)]
struct CallTrace {
    env_id: *mut JNIEnv,
    num_frames: jint,
    frames: *mut CallFrame,
}

/// `AsyncGetCallTrace(ASGCT_CallTrace *trace, jint depth, void *ucontext)`, with the trace untyped
/// as the fault guard calls it.
type AsyncGetCallTrace = super::fault_guard::Walk;

/// `num_frames` of a sample whose walk faulted (the fault guard jumped out of it). Our own code:
/// HotSpot's are 0 to -10.
const WALK_FAULTED: jint = -100;

/// One sample's slot: written by one handler at a time (claimed through `state`), read by the
/// profiler thread once `state` is `FULL`.
struct Slot {
    state: AtomicU8,
    env: AtomicUsize,
    num_frames: AtomicI32,
    frames: UnsafeCell<[CallFrame; MAX_DEPTH as usize]>,
}

// SAFETY: `frames` is only written by the handler that moved `state` from FREE to WRITING and only
// read by the drain after it saw FULL (release/acquire), so no two threads use it at once; the
// method IDs in it are plain values, not owned pointers.
unsafe impl Sync for Slot {}
// SAFETY: as for `Sync`; a slot owns nothing that belongs to a thread.
unsafe impl Send for Slot {}

struct Ring {
    slots: Box<[Slot]>,
    next: AtomicUsize,
}

/// Everything the handler reads, set up once.
struct Signals {
    asgct: AsyncGetCallTrace,
    vm: AtomicPtr<JavaVM>,
    ring: Ring,
}

// Static: the SIGPROF handler needs it (no other way into a signal handler).
static SIGNALS: OnceLock<Option<Signals>> = OnceLock::new();
// Static: read by the SIGPROF handler.
/// Whether the handler records (the timer may still deliver a signal after a stop).
static ACTIVE: AtomicBool = AtomicBool::new(false);
// Static: read by the SIGPROF handler.
static DEPTH: AtomicI32 = AtomicI32::new(64);
// Static: written by the SIGPROF handler.
/// Signals handled while active.
static TICKS: AtomicI64 = AtomicI64::new(0);
// Static: written by the SIGPROF handler.
/// Nanoseconds spent in `AsyncGetCallTrace`, all handlers together.
static WALK_NANOS: AtomicI64 = AtomicI64::new(0);

/// Sets up signal sampling on first use: finds `AsyncGetCallTrace` in the VM and installs the
/// handler. `None` when either is not possible; the sampler then uses JVMTI stack traces.
fn signals(vm: JavaVm) -> Option<&'static Signals> {
    SIGNALS
        .get_or_init(|| {
            // SAFETY: dlsym with a NUL-terminated name; libjvm is loaded with RTLD_GLOBAL.
            let symbol = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"AsyncGetCallTrace".as_ptr()) };
            if symbol.is_null() {
                tracing::info!("no AsyncGetCallTrace in this VM; CPU sampling uses JVMTI stack traces");
                return None;
            }
            // SAFETY: HotSpot exports AsyncGetCallTrace with this signature (its trace pointer
            // typed; the ABI of an untyped one is the same).
            let asgct: AsyncGetCallTrace = unsafe { std::mem::transmute(symbol) };
            // No walk without the guard: a fault in one would take the JVM down.
            if !super::fault_guard::install() {
                tracing::info!("no fault guard for stack walks; CPU sampling uses JVMTI stack traces");
                return None;
            }
            let slots = (0..SLOTS)
                .map(|_| Slot {
                    state: AtomicU8::new(FREE),
                    env: AtomicUsize::new(0),
                    num_frames: AtomicI32::new(0),
                    frames: UnsafeCell::new(
                        [CallFrame { lineno: 0, method_id: std::ptr::null_mut() }; MAX_DEPTH as usize],
                    ),
                })
                .collect();
            let signals =
                Signals { asgct, vm: AtomicPtr::new(vm.as_raw()), ring: Ring { slots, next: AtomicUsize::new(0) } };
            install_handler().then_some(signals)
        })
        .as_ref()
}

/// Installs the `SIGPROF` handler unless someone else has one.
fn install_handler() -> bool {
    // SAFETY: plain sigaction calls with zero-initialised structs we own.
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        if libc::sigaction(libc::SIGPROF, std::ptr::null(), &mut old) != 0 {
            return false;
        }
        if old.sa_sigaction != libc::SIG_DFL && old.sa_sigaction != libc::SIG_IGN {
            tracing::info!("SIGPROF already has a handler (another profiler?); CPU sampling uses JVMTI stack traces");
            return false;
        }
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_sigprof as *const () as usize;
        action.sa_flags = libc::SA_SIGINFO | libc::SA_RESTART;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(libc::SIGPROF, &action, std::ptr::null_mut()) == 0
    }
}

/// Whether signal sampling can be used in this VM (sets it up on first call).
pub fn available(vm: JavaVm) -> bool {
    signals(vm).is_some()
}

/// Starts the timer: a signal per `interval` of the process's CPU time. The caller has made the
/// method IDs ([`prepare_methods`]) and enabled class load events.
pub fn start(vm: JavaVm, interval: Duration, depth: i32) -> bool {
    if signals(vm).is_none() {
        return false;
    }
    DEPTH.store(depth.clamp(1, MAX_DEPTH), Ordering::Relaxed);
    // Samples of an earlier run still in the ring are not this run's.
    drain(|_| {});
    TICKS.store(0, Ordering::Relaxed);
    WALK_NANOS.store(0, Ordering::Relaxed);
    ACTIVE.store(true, Ordering::Release);
    let ok = set_timer(interval);
    if !ok {
        ACTIVE.store(false, Ordering::Release);
    }
    ok
}

/// Stops the timer; signals already on their way are ignored.
pub fn stop() {
    ACTIVE.store(false, Ordering::Release);
    set_timer(Duration::ZERO);
    let (passed_on, recovered) = super::fault_guard::counts();
    tracing::info!(
        "fault guard: handed {passed_on} faults to the VM's handler, recovered from {recovered} in stack walks"
    );
}

fn set_timer(interval: Duration) -> bool {
    let tv = libc::timeval {
        tv_sec: interval.as_secs() as libc::time_t,
        tv_usec: interval.subsec_micros() as libc::suseconds_t,
    };
    let timer = libc::itimerval { it_interval: tv, it_value: tv };
    // SAFETY: setitimer with a struct we own.
    unsafe { libc::setitimer(libc::ITIMER_PROF, &timer, std::ptr::null_mut()) == 0 }
}

/// (signals handled, nanoseconds spent walking stacks) since [`start`].
pub fn counters() -> (i64, i64) {
    (TICKS.load(Ordering::Relaxed), WALK_NANOS.load(Ordering::Relaxed))
}

/// The monotonic clock in nanoseconds; `clock_gettime` is async-signal-safe.
fn now_nanos() -> i64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime with a struct we own.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec * 1_000_000_000 + ts.tv_nsec
}

/// One sample taken by the handler: the thread's `JNIEnv` and its frames as (method, bytecode
/// index; -1 for a native frame), innermost first. `Err` holds `AsyncGetCallTrace`'s reason
/// (a count of 0 or below) when it could not walk the stack.
pub type Sample<'a> = (usize, Result<&'a [(usize, i64)], i32>);

/// Hands every finished sample to `each` and frees its slot (the profiler thread).
pub fn drain(mut each: impl FnMut(Sample<'_>)) {
    let Some(Some(signals)) = SIGNALS.get() else { return };
    let mut frames: Vec<(usize, i64)> = Vec::with_capacity(MAX_DEPTH as usize);
    for slot in signals.ring.slots.iter() {
        if slot.state.load(Ordering::Acquire) != FULL {
            continue;
        }
        let env = slot.env.load(Ordering::Relaxed);
        let count = slot.num_frames.load(Ordering::Relaxed);
        frames.clear();
        if count > 0 {
            // SAFETY: the slot is FULL, so its writer is done and no other writer can claim it
            // until it is FREE again (see `Slot`).
            let raw = unsafe { &*slot.frames.get() };
            for f in raw.iter().take(count as usize) {
                let location = if f.lineno >= 0 { i64::from(f.lineno) } else { -1 };
                frames.push((f.method_id as usize, location));
            }
        }
        slot.state.store(FREE, Ordering::Release);
        each((env, if count > 0 { Ok(&frames) } else { Err(count) }));
    }
}

/// Makes the method IDs of `classes`, so that `AsyncGetCallTrace` can name their frames.
pub fn prepare_methods(env: Jvmti, classes: &[jclass]) {
    for &class in classes {
        // Creating the IDs is the point; the list itself is not needed.
        let _ = env.get_class_methods(class);
    }
}

/// The `SIGPROF` handler: async-signal-safe (atomics, `GetEnv`, `AsyncGetCallTrace`), keeps errno.
extern "C" fn on_sigprof(_signal: c_int, _info: *mut libc::siginfo_t, ucontext: *mut c_void) {
    if !ACTIVE.load(Ordering::Acquire) {
        return;
    }
    let Some(Some(signals)) = SIGNALS.get() else { return };
    // SAFETY: errno is thread-local; saved here and restored below, as a handler must.
    let errno = unsafe { *libc::__errno_location() };
    TICKS.fetch_add(1, Ordering::Relaxed);
    let vm = signals.vm.load(Ordering::Relaxed);
    let mut env: *mut c_void = std::ptr::null_mut();
    // SAFETY: `vm` is the VM's JavaVM; GetEnv only reads the current thread's VM state, which
    // HotSpot's own signal handlers do too. A thread that is not a Java thread gets an error.
    let attached = unsafe { ((**vm).v1_4.GetEnv)(vm, &mut env, JNI_VERSION_1_6) == JNI_OK };
    if attached && !env.is_null() {
        let ring = &signals.ring;
        let index = ring.next.fetch_add(1, Ordering::Relaxed) % SLOTS;
        // A slot still full (the ring is full): the sample is dropped.
        let claimed = ring
            .slots
            .get(index)
            .filter(|slot| slot.state.compare_exchange(FREE, WRITING, Ordering::Acquire, Ordering::Relaxed).is_ok());
        if let Some(slot) = claimed {
            let mut trace =
                CallTrace { env_id: env.cast(), num_frames: 0, frames: slot.frames.get().cast::<CallFrame>() };
            let started = now_nanos();
            let depth = DEPTH.load(Ordering::Relaxed);
            // SAFETY: the slot's frames hold MAX_DEPTH entries and DEPTH is at most that; the
            // trace's env is this thread's; ucontext is the kernel's for this signal; the walk
            // takes no lock and allocates nothing, so a jump out of it leaves nothing held.
            let walked = unsafe { super::fault_guard::call(signals.asgct, (&raw mut trace).cast(), depth, ucontext) };
            WALK_NANOS.fetch_add(now_nanos() - started, Ordering::Relaxed);
            let frames = match walked {
                Guarded::Done => Some(trace.num_frames),
                Guarded::Faulted => Some(WALK_FAULTED),
                // Every guard slot taken: no sample this time.
                Guarded::Busy => None,
            };
            match frames {
                Some(frames) => {
                    slot.env.store(env as usize, Ordering::Relaxed);
                    slot.num_frames.store(frames, Ordering::Relaxed);
                    slot.state.store(FULL, Ordering::Release);
                }
                None => slot.state.store(FREE, Ordering::Release),
            }
        }
    }
    // SAFETY: as above.
    unsafe { *libc::__errno_location() = errno };
}
