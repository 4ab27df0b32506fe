//! Garbage collection statistics from JVMTI's `GarbageCollectionStart`/`Finish` events.
//!
//! The events are enabled (in the profiling environment) from the first `GcStats` or `GcFinished`
//! subscription of a session until the session ends, so an agent nobody asks costs nothing. The
//! callbacks run inside the collection, on a VM thread, where JNI and nearly all of JVMTI are
//! forbidden: they only read a clock, update atomics and queue an event. Heap use before and after
//! is not something these events carry, and nothing allowed in them can measure it: it is
//! reported as -1 (unknown).

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::time::Instant;

use jdwp_protocol::ErrorCode;
use jdwp_protocol::commands::profiler::{GcStatsReply, ProfilerEvent};

use super::{Profiler, profiler};
use crate::agent::lock;
use crate::jvmti::sys::{self, jvmtiEnv};

/// Collection counters, updated by the GC callbacks.
#[derive(Default)]
pub struct GcWatch {
    watching: AtomicBool,
    since: Mutex<Option<Instant>>,
    /// When the current collection started, as [`nanos`].
    current_start: AtomicI64,
    collections: AtomicI64,
    total_pause: AtomicI64,
    max_pause: AtomicI64,
    last_pause: AtomicI64,
}

/// Nanoseconds since the agent's clock origin (its first use; 0 before the agent exists).
pub fn nanos() -> i64 {
    let Some(agent) = crate::agent::agent() else { return 0 };
    let origin = *agent.memo.gc_origin.get_or_init(Instant::now);
    i64::try_from(origin.elapsed().as_nanos()).unwrap_or(i64::MAX)
}

impl GcWatch {
    /// Enables the GC events if they are not yet.
    pub fn start_watching(&self, profiler: &Profiler) -> Result<(), ErrorCode> {
        if !profiler.caps.can_generate_garbage_collection_events() {
            return Err(ErrorCode::NOT_IMPLEMENTED);
        }
        let mut since = lock(&self.since);
        if since.is_none() {
            for event in [sys::JVMTI_EVENT_GARBAGE_COLLECTION_START, sys::JVMTI_EVENT_GARBAGE_COLLECTION_FINISH] {
                profiler.env.set_event_notification_mode(true, event, std::ptr::null_mut())?;
            }
            self.watching.store(true, Ordering::Release);
            *since = Some(Instant::now());
        }
        Ok(())
    }

    /// Disables the GC events and zeroes the counters (the session ended).
    pub fn stop_watching(&self, profiler: &Profiler) {
        let mut since = lock(&self.since);
        if since.take().is_some() {
            for event in [sys::JVMTI_EVENT_GARBAGE_COLLECTION_START, sys::JVMTI_EVENT_GARBAGE_COLLECTION_FINISH] {
                let _ = profiler.env.set_event_notification_mode(false, event, std::ptr::null_mut());
            }
            self.watching.store(false, Ordering::Release);
            self.reset();
        }
    }

    fn reset(&self) {
        for counter in [&self.collections, &self.total_pause, &self.max_pause, &self.last_pause] {
            counter.store(0, Ordering::Relaxed);
        }
    }

    /// The statistics since watching started (or the last reset); starts watching if needed.
    pub fn stats(&self, profiler: &Profiler, reset: bool) -> Result<GcStatsReply, ErrorCode> {
        self.start_watching(profiler)?;
        let watching = lock(&self.since).map(|s| s.elapsed()).unwrap_or_default();
        let reply = GcStatsReply {
            watching_nanos: i64::try_from(watching.as_nanos()).unwrap_or(i64::MAX),
            collections: self.collections.load(Ordering::Acquire),
            total_pause_nanos: self.total_pause.load(Ordering::Acquire),
            max_pause_nanos: self.max_pause.load(Ordering::Acquire),
            last_pause_nanos: self.last_pause.load(Ordering::Acquire),
            heap_used_before: -1,
            heap_used_after: -1,
        };
        if reset {
            self.reset();
        }
        Ok(reply)
    }
}

/// `GarbageCollectionStart` (inside the collection: atomics only).
pub(super) unsafe extern "system" fn on_gc_start(_: *mut jvmtiEnv) {
    crate::guard((), || {
        if let Ok(p) = profiler() {
            p.gc.current_start.store(nanos(), Ordering::Release);
        }
    });
}

/// `GarbageCollectionFinish` (inside the collection: atomics, the event queue, a raw monitor).
pub(super) unsafe extern "system" fn on_gc_finish(_: *mut jvmtiEnv) {
    crate::guard((), || {
        let Ok(p) = profiler() else { return };
        let gc = &p.gc;
        if !gc.watching.load(Ordering::Acquire) {
            return;
        }
        let start = gc.current_start.load(Ordering::Acquire);
        let pause = (nanos() - start).max(0);
        let collection = gc.collections.fetch_add(1, Ordering::AcqRel) + 1;
        gc.total_pause.fetch_add(pause, Ordering::AcqRel);
        gc.max_pause.fetch_max(pause, Ordering::AcqRel);
        gc.last_pause.store(pause, Ordering::Release);
        if p.events.wants(jdwp_protocol::commands::profiler::ProfilerEventKind::GcFinished) {
            p.events.push(ProfilerEvent::GcFinished {
                collection,
                start_nanos: start,
                pause_nanos: pause,
                heap_used_before: -1,
                heap_used_after: -1,
            });
            p.wake();
        }
    });
}
