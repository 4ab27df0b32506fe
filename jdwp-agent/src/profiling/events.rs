//! The live profiling event stream: which kinds the debugger subscribed to, a queue the sources
//! fill (GC callbacks, monitor callbacks), and the profiler thread sending what is queued as
//! `Profiler.Event` command packets.
//!
//! Sources may run where almost nothing is allowed (inside a collection): they only check an
//! atomic and push under a lock that is never held across a VM call. The queue is bounded; events
//! beyond it are dropped and counted, since a debugger that cannot keep up must not grow the
//! target's memory.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use jdwp_protocol::commands::profiler::{self as p, ProfilerEvent, ProfilerEventKind};
use jdwp_protocol::{Command, ErrorCode, codec};

use super::Profiler;
use crate::agent::{Agent, ID_SIZES, lock};

/// Events queued beyond this are dropped.
const QUEUE_LIMIT: usize = 4096;
/// At most this many events go in one packet.
const BATCH: usize = 256;

/// Subscriptions and queued events.
#[derive(Default)]
pub struct EventStream {
    /// One bit per [`ProfilerEventKind`] (bit = kind's number).
    subscribed: AtomicU32,
    queue: Mutex<VecDeque<ProfilerEvent>>,
    dropped: AtomicU64,
}

fn bit(kind: ProfilerEventKind) -> u32 {
    1 << (kind as u8 as u32)
}

impl EventStream {
    /// Whether the debugger wants events of `kind` (cheap: callbacks ask before building one).
    pub fn wants(&self, kind: ProfilerEventKind) -> bool {
        self.subscribed.load(Ordering::Acquire) & bit(kind) != 0
    }

    /// The kinds subscribed now, in number order.
    pub fn subscribed(&self) -> Vec<ProfilerEventKind> {
        ProfilerEventKind::ALL.iter().copied().filter(|&k| self.wants(k)).collect()
    }

    /// Queues an event for the profiler thread to send (the caller then wakes it).
    pub fn push(&self, event: ProfilerEvent) {
        let mut queue = lock(&self.queue);
        if queue.len() >= QUEUE_LIMIT {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        } else {
            queue.push_back(event);
        }
    }

    /// Adds kinds; each needs its source running (GC events need GC watching).
    pub fn subscribe(&self, profiler: &Profiler, kinds: &[ProfilerEventKind]) -> Result<(), ErrorCode> {
        for &kind in kinds {
            match kind {
                ProfilerEventKind::GcFinished => {
                    profiler.gc.start_watching(profiler).map_err(|_| ErrorCode::INVALID_EVENT_TYPE)?
                }
                ProfilerEventKind::MonitorContended => {
                    let agent = crate::agent::agent().ok_or(ErrorCode::VM_DEAD)?;
                    super::monitors::set_live(agent, true).map_err(|_| ErrorCode::INVALID_EVENT_TYPE)?
                }
            }
        }
        for &kind in kinds {
            self.subscribed.fetch_or(bit(kind), Ordering::AcqRel);
        }
        Ok(())
    }

    /// Removes kinds (empty: all).
    pub fn unsubscribe(&self, kinds: &[ProfilerEventKind]) {
        if kinds.is_empty() {
            self.subscribed.store(0, Ordering::Release);
        }
        for &kind in kinds {
            self.subscribed.fetch_and(!bit(kind), Ordering::AcqRel);
        }
        if !self.wants(ProfilerEventKind::MonitorContended)
            && let Some(agent) = crate::agent::agent()
        {
            let _ = super::monitors::set_live(agent, false);
        }
        if self.subscribed.load(Ordering::Acquire) == 0 {
            lock(&self.queue).clear();
        }
    }

    /// The session ended: no more events, none left queued.
    pub fn unsubscribe_all(&self, _profiler: &Profiler) {
        self.unsubscribe(&[]);
    }

    /// Sends what is queued to the debugger, if one is attached (the profiler thread).
    pub fn flush(&self, agent: &Agent) {
        loop {
            let batch: Vec<ProfilerEvent> = {
                let mut queue = lock(&self.queue);
                let n = queue.len().min(BATCH);
                queue.drain(..n).collect()
            };
            if batch.is_empty() {
                return;
            }
            let Some(session) = agent.session() else { return };
            let body = codec::encode_body(&p::Events { events: batch }, ID_SIZES);
            if let Err(e) = session.send_command(p::SET, <p::Events as Command>::CMD, body) {
                tracing::debug!(error = %e, "could not send profiler events");
                return;
            }
        }
    }

    /// Events dropped because the queue was full.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
}
