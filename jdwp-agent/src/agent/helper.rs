//! The event helper's handle and its work items ([`Job`]), owned by the [`Agent`] (its gate's
//! payload): callbacks and commands reach the helper thread through these. The thread itself, the
//! I/O shell that runs the jobs, is [`crate::event_helper`].

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, mpsc};
use std::time::Instant;

use jdwp_protocol::{SuspendPolicy, ThreadId};

use super::raw_event::RawEvents;
use super::{Agent, GlobalRef};
use crate::events::filter::Request;
use crate::gate::Gate;
use crate::jni::Jni;

/// Work an event thread hands to the helper thread.
pub type Task = Box<dyn FnOnce(&Agent, Jni) + Send>;

/// Work for the helper thread.
pub enum Job {
    /// A composite to deliver.
    Deliver {
        policy: SuspendPolicy,
        /// The event thread (suspended by `SuspendPolicy::EventThread`); owned.
        thread: Option<GlobalRef>,
        events: RawEvents,
        /// Signalled once the composite is sent and the suspension requested.
        done: Option<mpsc::SyncSender<()>>,
        /// Set when the event thread suspends itself instead of waiting for `done` (see
        /// [`EventHelper::deliver_self_suspending`]).
        self_suspend: Option<Arc<SelfSuspend>>,
        /// The session the events were matched for (see [`Gate::session`]).
        session: u64,
    },
    /// Undo the JVMTI state behind requests that a count expired during event filtering.
    Cleanup(Vec<Arc<Request>>),
    /// Class unloads may be waiting (see [`crate::events::unload`]).
    Unloads,
    /// JVMTI work an event thread needs done on an agent thread; `done` (if any) is told when it
    /// is.
    Task { task: Task, done: Option<mpsc::SyncSender<()>> },
    /// A task to run once `at` has come.
    Timed { at: Instant, task: Task },
}

impl Job {
    /// Whether the job sends composites, and so goes through the gate.
    pub fn is_composite(&self) -> bool {
        matches!(self, Job::Deliver { .. } | Job::Unloads)
    }
}

/// What a callback gets back when the helper is gone: the event thread's reference and the events,
/// for it to release.
pub type Undelivered = (Option<GlobalRef>, RawEvents);

/// The handle callbacks use to reach the helper thread.
pub struct EventHelper {
    gate: &'static Gate<Job>,
}

impl EventHelper {
    /// The handle to the helper reading `gate`'s inbox.
    pub fn new(gate: &'static Gate<Job>) -> EventHelper {
        EventHelper { gate }
    }

    /// Queues a job; gives it back if the helper is gone. (A job is large, its one event inline:
    /// boxing it to shrink this `Err` would allocate for every event.)
    #[allow(clippy::result_large_err)]
    fn send(&self, job: Job) -> Result<(), Job> {
        self.gate.send(job)
    }

    /// Queues a composite, counted in the backlog; gives it back (counted out) if the helper is
    /// gone. Returns whether the backlog is past its bound.
    #[allow(clippy::result_large_err)]
    fn send_counted(&self, job: Job) -> Result<bool, Job> {
        let n = match &job {
            Job::Deliver { events, .. } => events.len(),
            _ => 0,
        };
        self.gate.send_counted(job, n)
    }

    /// Hands a composite over; with `wait`, returns once it is sent (or dropped because nobody
    /// listens). With `room` (an application thread that does not `wait`), returns only once the
    /// helper's backlog is within its bound (see [`crate::backpressure`]); the composite is queued
    /// before that wait. Returns the events if the helper is gone.
    pub fn deliver(
        &self,
        policy: SuspendPolicy,
        thread: Option<GlobalRef>,
        events: RawEvents,
        wait: bool,
        room: bool,
    ) -> Result<(), Undelivered> {
        let (done, done_rx) = if wait {
            let (tx, rx) = mpsc::sync_channel(1);
            (Some(tx), Some(rx))
        } else {
            (None, None)
        };
        let session = self.gate.session();
        match self.send_counted(Job::Deliver { policy, thread, events, done, self_suspend: None, session }) {
            Ok(over) => {
                if let Some(rx) = done_rx {
                    // The helper always answers, even when it drops the job; an error means it is gone.
                    let _ = rx.recv();
                } else if over && room {
                    // Tests wait for this line: the bound was reached and the program waits.
                    tracing::debug!(
                        cap = crate::backpressure::CAP,
                        "event backlog at its bound: an application thread waits for the event helper"
                    );
                    self.gate.wait_for_room();
                }
                Ok(())
            }
            Err(Job::Deliver { thread, events, .. }) => Err((thread, events)),
            Err(_) => Ok(()),
        }
    }

    /// Hands a suspending composite over from an event thread that then suspends itself in the VM
    /// rather than waiting for the helper to send it and suspend it: the thread sleeps once per
    /// event (until the resume) instead of twice (until "sent", then until the resume). The caller
    /// has called `begin_self_suspend` for its thread and next calls
    /// [`SelfSuspend::suspend_self`], unless `already_suspended` (the debugger's suspension is
    /// pending on it). The helper sends the composite only once the thread is suspended; if it
    /// drops the composite, it resumes the thread. Returns the events if the helper is gone (then
    /// nothing is suspended).
    pub fn deliver_self_suspending(
        &self,
        policy: SuspendPolicy,
        thread: (GlobalRef, ThreadId),
        events: RawEvents,
        already_suspended: bool,
    ) -> Result<(Arc<SelfSuspend>, mpsc::Receiver<()>), Undelivered> {
        let state = if already_suspended { SelfSuspend::ALREADY } else { SelfSuspend::SUSPENDING };
        let (thread, id) = thread;
        let flag = Arc::new(SelfSuspend(AtomicU8::new(state), id));
        let (done, done_rx) = mpsc::sync_channel(1);
        let session = self.gate.session();
        let job = Job::Deliver {
            policy,
            thread: Some(thread),
            events,
            done: Some(done),
            self_suspend: Some(flag.clone()),
            session,
        };
        // This thread waits for its event (suspended): it is counted, and never waits for room.
        match self.send_counted(job) {
            Ok(_) => Ok((flag, done_rx)),
            Err(Job::Deliver { thread, events, .. }) => Err((thread, events)),
            Err(_) => unreachable!("send gives back the job it was given"),
        }
    }

    /// Queues the cleanup of expired requests (not waited for).
    pub fn cleanup(&self, requests: Vec<Arc<Request>>) {
        let _ = self.send(Job::Cleanup(requests));
    }

    /// Tells the helper to look for class unloads. Plain code only: callable from restricted
    /// JVMTI callbacks (`ObjectFree`, garbage collection), which may run with the VM stopped.
    pub fn nudge_unloads(&self) {
        let _ = self.send(Job::Unloads);
    }

    /// Runs `task` on the helper thread and waits for it.
    pub fn run_task(&self, task: impl FnOnce(&Agent, Jni) + Send + 'static) {
        let (done, done_rx) = mpsc::sync_channel(1);
        if self.send(Job::Task { task: Box::new(task), done: Some(done) }).is_ok() {
            let _ = done_rx.recv();
        }
    }

    /// Runs `task` on the helper thread later, without waiting; returns whether it was queued
    /// (not if the helper is gone).
    pub fn spawn_task(&self, task: impl FnOnce(&Agent, Jni) + Send + 'static) -> bool {
        self.send(Job::Task { task: Box::new(task), done: None }).is_ok()
    }

    /// Runs `task` on the helper thread once `at` has come (or soon after); returns whether it was
    /// queued.
    pub fn spawn_task_at(&self, at: Instant, task: impl FnOnce(&Agent, Jni) + Send + 'static) -> bool {
        self.send(Job::Timed { at, task: Box::new(task) }).is_ok()
    }
}

/// How an event thread's own suspension went (see [`EventHelper::deliver_self_suspending`]), and
/// the thread's ID, under which it called `begin_self_suspend`.
pub struct SelfSuspend(AtomicU8, ThreadId);

impl SelfSuspend {
    /// The event thread's ID.
    pub fn thread(&self) -> ThreadId {
        self.1
    }

    /// The thread is suspending itself, or is suspended by itself.
    const SUSPENDING: u8 = 0;
    /// It was suspended already (by the debugger, before it said it would suspend itself).
    const ALREADY: u8 = 1;
    /// Its suspension failed: it waits for the helper's `done` instead, and the helper suspends it.
    const FAILED: u8 = 2;

    /// Suspends the current (event) thread in the VM; returns once the debugger resumes it, or
    /// after the helper is done with the event if the suspension failed.
    pub fn suspend_self(&self, agent: &Agent, thread: jni_sys::jobject, done: mpsc::Receiver<()>) {
        match agent.jvmti.suspend_thread(thread) {
            Ok(()) => {}
            // Suspended by someone else meanwhile (not the debugger, whose suspension
            // `begin_self_suspend` reported, so that this was not called).
            Err(crate::jvmti::JvmtiError::THREAD_SUSPENDED) => self.0.store(Self::ALREADY, Ordering::Release),
            Err(e) => {
                tracing::debug!(%e, "an event thread could not suspend itself; the helper will");
                self.0.store(Self::FAILED, Ordering::Release);
                let _ = done.recv();
            }
        }
    }

    /// Waits (the helper) until the event thread is suspended in the VM or gave up trying;
    /// returns whether it is suspended.
    pub(crate) fn wait_suspended(&self, agent: &Agent, thread: jni_sys::jobject) -> bool {
        let give_up = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            match self.0.load(Ordering::Acquire) {
                Self::ALREADY => return true,
                Self::FAILED => return false,
                _ => {}
            }
            match agent.jvmti.get_thread_state(thread) {
                Ok(state) if state & crate::jvmti::sys::JVMTI_THREAD_STATE_SUSPENDED != 0 => return true,
                Ok(state) if state & crate::jvmti::sys::JVMTI_THREAD_STATE_ALIVE == 0 => return false,
                Err(_) => return false,
                Ok(_) => {}
            }
            // It calls SuspendThread right after queueing the event: this is a short wait.
            if std::time::Instant::now() > give_up {
                tracing::warn!("an event thread did not suspend itself within 10 s");
                return false;
            }
            std::thread::yield_now();
        }
    }
}
