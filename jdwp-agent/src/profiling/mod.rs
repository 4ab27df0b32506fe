//! Profiling and deadlock detection: the agent side of the `Profiler` vendor command set (128).
//!
//! Profiling runs in a JVMTI environment of its own ([`Profiler::env`]), created in
//! `Agent_OnLoad` next to the debugger's: its events (garbage collections, and the allocation and
//! monitor events of other features) are enabled and disabled without touching the debugger's
//! event requests, and its object tags never mix with the debugger's object IDs, which are tags of
//! the main environment.
//!
//! One JVMTI agent thread, the profiler thread, started on first need, does the periodic work: it
//! takes the CPU samples ([`cpu`]), looks for the owners of contended monitors held by unmounted
//! virtual threads ([`unmounted`]) and sends live events ([`events`]). It is never suspended and
//! runs no Java code, so it may hold the profiler's locks across VM calls (see `agent.rs`'s
//! locking rules). GC callbacks run inside a collection, where only raw monitors and memory
//! functions are allowed: they touch only atomics and the event queue, then notify the thread.
//!
//! Everything a session started (sampling, GC watching, subscriptions) stops when the debugger
//! leaves ([`session_ended`]).

pub mod alloc;
pub mod cpu;
pub mod cpu_signal;
pub mod deadlock;
pub mod events;
pub mod fault_guard;
pub mod gc;
pub mod heap_dump;
pub mod histogram;
pub mod hprof;
pub mod monitors;
pub mod mounted;
pub mod stacks;
pub mod unmounted;
pub mod virtuals;

use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use jdwp_protocol::ErrorCode;
use jni_sys::JNIEnv;

use crate::agent::lock_order::{PROFILER, Ranked};
use crate::agent::{Agent, agent, lock};
use crate::jni::Jni;
use crate::jvmti::Jvmti;
use crate::jvmti::RawMonitor;
use crate::jvmti::sys::{self, jvmtiCapabilities, jvmtiEnv, jvmtiEventCallbacks};

/// The profiler's state, for the life of the VM.
pub struct Profiler {
    /// The profiling JVMTI environment (events and tags of its own).
    pub env: Jvmti,
    /// What the profiling environment was granted.
    pub caps: jvmtiCapabilities,
    /// Wakes the profiler thread (GC callbacks, new work); guards [`Profiler::woken`].
    wake: RawMonitor,
    woken: AtomicBool,
    thread_started: Ranked<bool, PROFILER>,
    pub cpu: Ranked<cpu::CpuSampler, PROFILER>,
    pub gc: gc::GcWatch,
    pub events: events::EventStream,
    /// Whether signal sampling needs the profiling environment's class events (read by its
    /// `ClassLoad`/`ClassPrepare` callbacks).
    pub class_events_wanted: AtomicBool,
}

/// The profiler (`agent.profilers.profiler`), if `Agent_OnLoad` could create its environment.
/// Reached from the profiling environment's callbacks too, which get no agent.
pub fn profiler() -> Result<&'static Profiler, ErrorCode> {
    crate::agent::agent().and_then(|agent| agent.profilers.profiler.get()).ok_or(ErrorCode::NOT_IMPLEMENTED)
}

/// Creates the profiling environment (in `Agent_OnLoad`, where every capability can still be had).
/// A VM that refuses one leaves the profiler out; the debugger works without it.
pub(crate) fn on_load(agent: &Agent) {
    let vm = agent.vm;
    let result = (|| -> Result<Profiler, crate::jvmti::JvmtiError> {
        let env = vm.get_jvmti(sys::JVMTI_VERSION_11).map_err(|_| crate::jvmti::JvmtiError::INTERNAL)?;
        let mut wanted = jvmtiCapabilities::default();
        wanted.set_can_generate_garbage_collection_events(true);
        let caps = wanted.intersection(&env.get_potential_capabilities()?);
        env.add_capabilities(&caps)?;
        // SAFETY: the struct is a plain table of `Option<fn>`; all-zero bytes are all `None`.
        let mut callbacks: jvmtiEventCallbacks = unsafe { std::mem::zeroed() };
        callbacks.GarbageCollectionStart = Some(gc::on_gc_start);
        callbacks.GarbageCollectionFinish = Some(gc::on_gc_finish);
        // Enabled only while signal sampling runs (see `cpu_signal`).
        callbacks.ClassLoad = Some(cpu::on_class_load);
        callbacks.ClassPrepare = Some(cpu::on_class_prepare);
        env.set_event_callbacks(&callbacks)?;
        let wake = env.create_raw_monitor("JDWP profiler")?;
        Ok(Profiler {
            env,
            caps,
            wake,
            woken: AtomicBool::new(false),
            thread_started: Ranked::new(false),
            cpu: Ranked::new(cpu::CpuSampler::default()),
            gc: gc::GcWatch::default(),
            events: events::EventStream::default(),
            class_events_wanted: AtomicBool::new(false),
        })
    })();
    match result {
        Ok(profiler) => {
            agent.profilers.profiler.set(profiler);
        }
        Err(e) => tracing::warn!(error = %e, "no profiling environment; the Profiler command set is unavailable"),
    }
}

impl Profiler {
    /// Wakes the profiler thread. Safe in GC callbacks (raw monitor functions only).
    pub fn wake(&self) {
        if let Ok(guard) = self.wake.enter() {
            self.woken.store(true, Ordering::Release);
            let _ = guard.notify_all();
        }
    }

    /// Starts the profiler thread if it is not running yet (from a command handler: an agent
    /// thread with a JNI environment).
    pub fn ensure_thread(&self, agent: &Agent, jni: Jni) -> Result<(), ErrorCode> {
        let mut started = lock(&self.thread_started);
        if !*started {
            crate::agent_thread::start_agent_thread(
                agent,
                jni,
                "JDWP Profiler Thread",
                profiler_main,
                std::ptr::null_mut(),
            )
            .map_err(|message| {
                tracing::warn!(%message, "cannot start the profiler thread");
                ErrorCode::INTERNAL
            })?;
            *started = true;
        }
        drop(started);
        self.wake();
        Ok(())
    }

    /// Sleeps until woken or until `deadline` (none: until woken).
    fn sleep(&self, deadline: Option<Instant>) {
        match deadline {
            // Sampling: precise sleeps (raw monitor waits have millisecond granularity); work that
            // arrives meanwhile is picked up at the next tick, at most one interval later.
            Some(deadline) => {
                let left = deadline.saturating_duration_since(Instant::now());
                if !left.is_zero() {
                    std::thread::sleep(left);
                }
            }
            None => {
                let Ok(guard) = self.wake.enter() else { return };
                if !self.woken.swap(false, Ordering::AcqRel) {
                    // Bounded, so a lost notification costs a second, not forever.
                    let _ = guard.wait(Some(Duration::from_secs(1)));
                    self.woken.store(false, Ordering::Release);
                }
            }
        }
    }
}

unsafe extern "system" fn profiler_main(_: *mut jvmtiEnv, jni_env: *mut JNIEnv, _arg: *mut c_void) {
    crate::guard((), || {
        // SAFETY: the VM passes this agent thread's JNI environment.
        let (Some(agent), Some(jni), Ok(profiler)) = (agent(), unsafe { Jni::from_raw(jni_env) }, profiler()) else {
            return;
        };
        run(agent, jni, profiler);
    });
}

/// The profiler thread: CPU ticks while sampling, looks for monitor owners held unmounted when
/// contentions wait for one (`monitors::look_for_owners`), live events whenever there are some.
fn run(agent: &Agent, jni: Jni, profiler: &Profiler) {
    while !agent.is_vm_dead() {
        let next_tick = lock(&profiler.cpu).next_tick();
        let wake_at = match (next_tick, monitors::next_owner_look()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        profiler.sleep(wake_at);
        if agent.is_vm_dead() {
            break;
        }
        if next_tick.is_some_and(|t| Instant::now() >= t) {
            let Ok(frame) = jni.push_local_frame(64) else { continue };
            lock(&profiler.cpu).tick(agent, jni);
            drop(frame);
        }
        monitors::look_for_owners(agent, jni);
        monitors::flush_live(agent, jni, &profiler.events);
        profiler.events.flush(agent);
    }
}

/// The debugger left: stop everything its session started (reports are kept for the next one).
pub(crate) fn session_ended(agent: &Agent, jni: Jni) {
    let Ok(profiler) = profiler() else { return };
    profiler.events.unsubscribe_all(profiler);
    lock(&profiler.cpu).stop(agent, jni);
    profiler.gc.stop_watching(profiler);
    let _ = alloc::stop();
    monitors::session_ended(agent);
}

/// The feature names this agent implements, for `Capabilities`.
pub fn features(agent: &Agent) -> Vec<String> {
    use jdwp_protocol::commands::profiler::feature;
    let Ok(profiler) = profiler() else { return Vec::new() };
    let mut features = Vec::new();
    let main_caps = agent.jvmti.get_capabilities().unwrap_or_default();
    if main_caps.can_get_thread_cpu_time() {
        features.push(feature::CPU);
    }
    features.push(feature::HEAP_HISTOGRAM);
    let gc = profiler.caps.can_generate_garbage_collection_events();
    if gc {
        features.push(feature::GC);
    }
    if main_caps.can_get_owned_monitor_info() && main_caps.can_get_current_contended_monitor() {
        features.push(feature::DEADLOCKS);
    }
    features.push(feature::EVENTS);
    // Allocation sampling, monitor events and heap walks use capabilities HotSpot grants at any
    // time (environments of their own, created on first use).
    features.extend([feature::ALLOC, feature::MONITOR, feature::HEAP_DUMP]);
    let mut names: Vec<String> = features.into_iter().map(String::from).collect();
    if gc {
        names.push(format!("event:{}", jdwp_protocol::commands::profiler::ProfilerEventKind::GcFinished.name()));
    }
    names.push(format!("event:{}", jdwp_protocol::commands::profiler::ProfilerEventKind::MonitorContended.name()));
    names
}
