//! The event helper: an agent thread that turns matched events into composites, suspends what their
//! policy says, and sends them; it also does the JVMTI work event threads may not do themselves.
//! It is the I/O shell around the [`crate::gate`], which decides what may be sent when (held
//! events, the hand-over after a suspend-all composite, the bound on what waits here) and wakes it.
//!
//! Event callbacks run on application threads, which the debugger may suspend at any call into the
//! VM; they must not hold agent locks across such calls (see [`crate::agent`]). So a callback only
//! filters and collects global references ([`crate::raw`]), then hands the event here. If the event
//! suspends, the event thread suspends itself in the VM right after handing it over, and the helper
//! sends the composite once it sees the thread suspended, counting that suspension as the event's
//! (see [`EventHelper::deliver_self_suspending`] and `ThreadControl::begin_self_suspend`): the
//! debugger hears of the event only once its thread is stopped, and the thread sleeps once, until
//! the resume. (A thread the debugger has no ID for yet, and the VM death event, take the older
//! path: the callback waits until the composite is sent and the suspension requested, and the
//! thread stops when it returns into the VM.) Events that suspend nothing are handed over without
//! waiting, as the JDK's agent does, up to a bound: past [`crate::backpressure::CAP`] events
//! waiting here, an application thread that posts one waits for the helper to catch up (a
//! debugger that stops reading, or holds events, costs the program time, not memory).
//!
//! Each composite is tagged with the session it was matched for ([`Gate::session`]): one that is
//! still queued when its debugger leaves is dropped (its references freed), never sent to the next
//! debugger.

use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, mpsc};
use std::time::Instant;

use jdwp_protocol::commands::event::Composite;
use jdwp_protocol::{ErrorCode, SuspendPolicy, ThreadId, codec};

use crate::agent::{Agent, GlobalRef, ID_SIZES, JvmtiSuspend};
use crate::events::filter::Request;
use crate::gate::{Closed, Gate, Inbound, Inbox};
use crate::jni::Jni;
use crate::raw::RawEvent;

/// Work an event thread hands to the helper thread.
pub type Task = Box<dyn FnOnce(&Agent, Jni) + Send>;

/// Work for the helper thread.
pub enum Job {
    /// A composite to deliver.
    Deliver {
        policy: SuspendPolicy,
        /// The event thread (suspended by `SuspendPolicy::EventThread`); owned.
        thread: Option<GlobalRef>,
        events: Vec<RawEvent>,
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
    fn is_composite(&self) -> bool {
        matches!(self, Job::Deliver { .. } | Job::Unloads)
    }
}

/// What a callback gets back when the helper is gone: the event thread's reference and the events,
/// for it to release.
pub type Undelivered = (Option<GlobalRef>, Vec<RawEvent>);

/// The handle callbacks use to reach the helper thread.
pub struct EventHelper {
    gate: &'static Gate<Job>,
}

impl EventHelper {
    /// The handle to the helper reading `gate`'s inbox.
    pub fn new(gate: &'static Gate<Job>) -> EventHelper {
        EventHelper { gate }
    }

    /// Queues a job; gives it back if the helper is gone.
    fn send(&self, job: Job) -> Result<(), Job> {
        self.gate.send(job)
    }

    /// Queues a composite, counted in the backlog; gives it back (counted out) if the helper is
    /// gone. Returns whether the backlog is past its bound.
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
        events: Vec<RawEvent>,
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
        events: Vec<RawEvent>,
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
    fn wait_suspended(&self, agent: &Agent, thread: jni_sys::jobject) -> bool {
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

/// The helper thread's loop (runs until the VM dies).
///
/// Composites pass through the agent's [`Gate`]: while it is closed (events held, or a
/// suspend-all composite went out and no thread has run since) they wait there, in order, and
/// nothing is sent; the other work (cleanups, tasks event threads wait for) goes on, so that
/// holding events never stalls a thread that reports nothing. Whatever opens the gate wakes this
/// loop through the inbox.
pub fn run(agent: &Agent, jni: Jni, inbox: Inbox<Job>) {
    crate::step_switch::keeper_is_current_thread(agent, jni);
    let gate = &agent.gate;
    let mut timed: Vec<(Instant, Task)> = Vec::new();
    loop {
        let due = timed.iter().map(|(at, _)| *at).min();
        match inbox.recv(due) {
            Ok(Inbound::Job(job)) if job.is_composite() => {
                if let Some(job) = gate.offer(job) {
                    run_job(agent, jni, job);
                }
            }
            Ok(Inbound::Job(Job::Timed { at, task })) => timed.push((at, task)),
            Ok(Inbound::Job(job)) => run_job(agent, jni, job),
            // The gate opened: what it held is taken below.
            Ok(Inbound::Wake) | Err(Closed::Timeout) => {}
            Err(Closed::Disconnected) => return,
        }
        let now = Instant::now();
        while let Some(due) = timed.iter().position(|(at, _)| *at <= now) {
            let (_, task) = timed.swap_remove(due);
            run_job(agent, jni, Job::Task { task, done: None });
        }
        // One at a time: a composite that suspends all closes the gate again.
        while let Some(job) = gate.next() {
            run_job(agent, jni, job);
        }
    }
}

fn run_job(agent: &Agent, jni: Jni, job: Job) {
    let frame = jni.push_local_frame(64);
    // A panic in one job must not stop event delivery for good.
    crate::guard((), AssertUnwindSafe(|| handle(agent, jni, job)));
    drop(frame);
}

fn handle(agent: &Agent, jni: Jni, job: Job) {
    match job {
        Job::Deliver { policy, thread, events, done, self_suspend, session } => {
            /// Counts the events out however their delivery ends (even by a panic, which
            /// `run_job` catches): a count left behind would make threads wait for good.
            struct CountOut<'a>(&'a Gate<Job>, usize);
            impl Drop for CountOut<'_> {
                fn drop(&mut self) {
                    self.0.count_out(self.1);
                }
            }
            let _count_out = CountOut(&agent.gate, events.len());
            let self_suspended = match (&self_suspend, thread) {
                (Some(flag), Some(t)) => Some((flag.1, flag.wait_suspended(agent, t.0))),
                _ => None,
            };
            send_composite(agent, jni, policy, thread, events, self_suspended, Some(session));
            if let Some(done) = done {
                let _ = done.send(());
            }
        }
        Job::Cleanup(requests) => crate::commands::event_request::forget_requests(agent, jni, &requests),
        Job::Unloads => {
            for (policy, events) in crate::events::unload::take_unloads(agent, jni) {
                send_composite(agent, jni, policy, None, events, None, None);
            }
        }
        // Kept by `run` until due.
        Job::Timed { task, .. } => task(agent, jni),
        Job::Task { task, done } => {
            task(agent, jni);
            if let Some(done) = done {
                let _ = done.send(());
            }
        }
    }
}

/// Delivers one composite and releases its references. `self_suspended`: the event thread (this
/// ID) suspended itself for it (whether that worked), see [`EventHelper::deliver_self_suspending`].
/// `session`: the session it was matched for, if not the current one's.
fn send_composite(
    agent: &Agent,
    jni: Jni,
    policy: SuspendPolicy,
    thread: Option<GlobalRef>,
    events: Vec<RawEvent>,
    self_suspended: Option<(ThreadId, bool)>,
    session: Option<u64>,
) {
    if let Err(e) = deliver(agent, jni, policy, thread, &events, self_suspended, session) {
        tracing::debug!(?e, "event not delivered");
    }
    for event in events {
        event.release(jni);
    }
    if let Some(t) = thread {
        jni.delete_global_ref(t.0);
    }
}

fn deliver(
    agent: &Agent,
    jni: Jni,
    policy: SuspendPolicy,
    thread: Option<GlobalRef>,
    raw: &[RawEvent],
    self_suspended: Option<(ThreadId, bool)>,
    matched_for: Option<u64>,
) -> Result<(), ErrorCode> {
    /// Whatever happens (an error, even a panic), a self-suspending event thread is counted or let
    /// go when delivery ends.
    struct EndSelfSuspend<'a>(JvmtiSuspend<'a>, Option<(ThreadId, bool)>);
    impl Drop for EndSelfSuspend<'_> {
        fn drop(&mut self) {
            if let Some((id, in_vm)) = self.1 {
                let _ = self.0.agent.threads.lock().end_self_suspend(&self.0, id, in_vm);
            }
        }
    }
    let end = EndSelfSuspend(JvmtiSuspend { agent, jni }, self_suspended);
    deliver_counted(agent, jni, policy, thread, raw, &end.0, matched_for)
}

fn deliver_counted(
    agent: &Agent,
    jni: Jni,
    policy: SuspendPolicy,
    thread: Option<GlobalRef>,
    raw: &[RawEvent],
    ops: &JvmtiSuspend<'_>,
    matched_for: Option<u64>,
) -> Result<(), ErrorCode> {
    // Matched for a debugger that has left: dropped, whoever listens now.
    let current = |matched_for: Option<u64>| agent.gate.is_current(matched_for);
    if !current(matched_for) {
        return Ok(());
    }
    let Some(session) = agent.session() else { return Ok(()) };
    let mut events = Vec::with_capacity(raw.len());
    for r in raw {
        let frame = jni.push_local_frame(16)?;
        match crate::raw::convert(agent, jni, r) {
            Ok(event) => events.push(event),
            // Say what can be said (an object may have gone meanwhile).
            Err(e) => tracing::debug!(?e, "an event could not be converted; left out"),
        }
        drop(frame);
    }
    if events.is_empty() {
        return Err(ErrorCode::INTERNAL);
    }
    let body = codec::encode_body(&Composite { suspend_policy: policy, events }, ID_SIZES);
    let _order = session.order();
    // The debugger may have left since the look above: its detach (under the same lock) resumed
    // every thread, and suspending now would leave the VM stopped with no one to resume it.
    if !agent.session().is_some_and(|now| Arc::ptr_eq(&now, &session)) || !current(matched_for) {
        return Ok(());
    }
    match policy {
        SuspendPolicy::All => {
            // Before anything is sent: the debugger's resume (under `order` too) comes after.
            agent.gate.suspended_all();
            agent.threads.lock().suspend_all(ops)?
        }
        SuspendPolicy::EventThread => {
            if let Some(t) = thread {
                let id = agent.thread_id(jni, t.0)?;
                agent.threads.lock().suspend_thread(ops, id)?;
            }
        }
        SuspendPolicy::None => {}
    }
    session.send_event(body).map_err(|_| ErrorCode::VM_DEAD)
}
