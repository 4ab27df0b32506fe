//! The event helper: an agent thread that turns matched events into composites, suspends what their
//! policy says, and sends them; it also does the JVMTI work event threads may not do themselves.
//!
//! Event callbacks run on application threads, which the debugger may suspend at any call into the
//! VM; they must not hold agent locks across such calls (see [`crate::agent`]). So a callback only
//! filters and collects global references, then hands the event here. If the event suspends, the
//! event thread suspends itself in the VM right after handing it over, and the helper sends the
//! composite once it sees the thread suspended, counting that suspension as the event's (see
//! [`EventHelper::deliver_self_suspending`] and `ThreadControl::begin_self_suspend`): the debugger
//! hears of the event only once its thread is stopped, and the thread sleeps once, until the
//! resume. (A thread the debugger has no ID for yet, and the VM death event, take the older path:
//! the callback waits until the composite is sent and the suspension requested, and the thread
//! stops when it returns into the VM.) Events that suspend nothing are handed over without
//! waiting, as the JDK's agent does, up to a bound: past [`crate::backpressure::CAP`] events
//! waiting here, an application thread that posts one waits for the helper to catch up (a
//! debugger that stops reading, or holds events, costs the program time, not memory).
//!
//! Each composite is tagged with the session it was matched for ([`session_changed`]): one that
//! is still queued when its debugger leaves is dropped (its references freed), never sent to the
//! next debugger.

use std::collections::VecDeque;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, mpsc};
use std::time::Instant;

use jdwp_protocol::commands::event::{Composite, Event};
use jdwp_protocol::{ErrorCode, Location, MethodId, ReferenceTypeId, SuspendPolicy, ThreadId, TypeTag, Value, codec};
use jni_sys::{jfieldID, jmethodID};

use crate::agent::{Agent, GlobalRef, ID_SIZES, JvmtiSuspend};
use crate::backpressure::Backlog;
use crate::events::filter::Request;
use crate::jni::Jni;

/// A value as a callback captured it.
#[derive(Debug)]
pub enum RawValue {
    Plain(Value),
    /// A reference (`None`: null), converted to a tagged object ID by the helper.
    Object(Option<GlobalRef>),
}

/// An event as a callback captured it: owned global references, raw JVMTI values (methods as
/// `jmethodID`s, code indexes as `jlocation`s, -1 for native code).
#[derive(Debug)]
pub enum RawEvent {
    VmStart {
        request_id: i32,
        thread: GlobalRef,
    },
    VmDeath {
        request_id: i32,
    },
    ThreadStart {
        request_id: i32,
        thread: GlobalRef,
    },
    ThreadDeath {
        request_id: i32,
        thread: GlobalRef,
    },
    ClassPrepare {
        request_id: i32,
        thread: GlobalRef,
        class: GlobalRef,
    },
    ClassUnload {
        request_id: i32,
        signature: String,
    },
    Breakpoint {
        request_id: i32,
        thread: GlobalRef,
        method: usize,
        index: i64,
    },
    SingleStep {
        request_id: i32,
        thread: GlobalRef,
        method: usize,
        index: i64,
    },
    MethodEntry {
        request_id: i32,
        thread: GlobalRef,
        method: usize,
        index: i64,
    },
    MethodExit {
        request_id: i32,
        thread: GlobalRef,
        method: usize,
        index: i64,
    },
    MethodExitWithReturnValue {
        request_id: i32,
        thread: GlobalRef,
        method: usize,
        index: i64,
        value: RawValue,
    },
    MonitorContendedEnter {
        request_id: i32,
        thread: GlobalRef,
        object: GlobalRef,
        method: usize,
        index: i64,
    },
    MonitorContendedEntered {
        request_id: i32,
        thread: GlobalRef,
        object: GlobalRef,
        method: usize,
        index: i64,
    },
    MonitorWait {
        request_id: i32,
        thread: GlobalRef,
        object: GlobalRef,
        method: usize,
        index: i64,
        timeout: i64,
    },
    MonitorWaited {
        request_id: i32,
        thread: GlobalRef,
        object: GlobalRef,
        method: usize,
        index: i64,
        timed_out: bool,
    },
    Exception {
        request_id: i32,
        thread: GlobalRef,
        method: usize,
        index: i64,
        exception: GlobalRef,
        /// Where it will be caught; `None` if uncaught.
        catch: Option<(usize, i64)>,
    },
    FieldAccess {
        request_id: i32,
        thread: GlobalRef,
        method: usize,
        index: i64,
        field_class: GlobalRef,
        field: usize,
        object: Option<GlobalRef>,
    },
    FieldModification {
        request_id: i32,
        thread: GlobalRef,
        method: usize,
        index: i64,
        field_class: GlobalRef,
        field: usize,
        object: Option<GlobalRef>,
        value: RawValue,
    },
}

impl RawEvent {
    /// The global references the event owns.
    pub fn refs(&self) -> Vec<GlobalRef> {
        let value_ref = |v: &RawValue| match v {
            RawValue::Object(Some(r)) => Some(*r),
            _ => None,
        };
        match self {
            RawEvent::VmDeath { .. } | RawEvent::ClassUnload { .. } => vec![],
            RawEvent::VmStart { thread, .. }
            | RawEvent::ThreadStart { thread, .. }
            | RawEvent::ThreadDeath { thread, .. }
            | RawEvent::Breakpoint { thread, .. }
            | RawEvent::SingleStep { thread, .. }
            | RawEvent::MethodEntry { thread, .. }
            | RawEvent::MethodExit { thread, .. } => vec![*thread],
            RawEvent::MethodExitWithReturnValue { thread, value, .. } => {
                std::iter::once(*thread).chain(value_ref(value)).collect()
            }
            RawEvent::ClassPrepare { thread, class, .. } => vec![*thread, *class],
            RawEvent::MonitorContendedEnter { thread, object, .. }
            | RawEvent::MonitorContendedEntered { thread, object, .. }
            | RawEvent::MonitorWait { thread, object, .. }
            | RawEvent::MonitorWaited { thread, object, .. } => vec![*thread, *object],
            RawEvent::Exception { thread, exception, .. } => vec![*thread, *exception],
            RawEvent::FieldAccess { thread, field_class, object, .. } => {
                [Some(*thread), Some(*field_class), *object].into_iter().flatten().collect()
            }
            RawEvent::FieldModification { thread, field_class, object, value, .. } => {
                [Some(*thread), Some(*field_class), *object, value_ref(value)].into_iter().flatten().collect()
            }
        }
    }

    /// Deletes the event's global references (an event dropped without being sent).
    pub fn release(self, jni: Jni) {
        for r in self.refs() {
            jni.delete_global_ref(r.0);
        }
    }
}

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
        /// The session the events were matched for (see [`session_changed`]).
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
    /// Composites held back may go now (see [`wake`]).
    Wake,
}

/// What a callback gets back when the helper is gone: the event thread's reference and the events,
/// for it to release.
pub type Undelivered = (Option<GlobalRef>, Vec<RawEvent>);

/// Events handed to the helper and not yet sent or dropped (queued, or held back): see
/// [`crate::backpressure`].
static BACKLOG: Backlog<crate::backpressure::CondvarPark> = Backlog::new();

/// The current session's number, tagged on every composite when it is queued: bumped when a
/// debugger attaches and when it leaves, so that composites queued for a debugger that has left
/// are dropped rather than sent to the next one.
static SESSION: AtomicU64 = AtomicU64::new(0);

/// A debugger attached or left (called before an attach is made known, and under the session's
/// order lock when it leaves).
pub fn session_changed() {
    SESSION.fetch_add(1, Ordering::SeqCst);
}

/// The handle callbacks use to reach the helper thread.
pub struct EventHelper {
    tx: mpsc::Sender<Job>,
}

impl EventHelper {
    pub fn new() -> (EventHelper, mpsc::Receiver<Job>) {
        let (tx, rx) = mpsc::channel();
        (EventHelper { tx }, rx)
    }

    /// Queues a job; gives it back if the helper is gone.
    fn send(&self, job: Job) -> Result<(), Job> {
        self.tx.send(job).map_err(|e| e.0)
    }

    /// Queues a composite, counted in the backlog; gives it back (counted out) if the helper is
    /// gone. Returns whether the backlog is past its bound.
    fn send_counted(&self, job: Job) -> Result<bool, Job> {
        let n = match &job {
            Job::Deliver { events, .. } => events.len(),
            _ => 0,
        };
        let over = BACKLOG.add(n);
        self.send(job).map(|()| over).inspect_err(|_| BACKLOG.take(n))
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
        let session = SESSION.load(Ordering::SeqCst);
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
                    BACKLOG.wait_for_room();
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
        let session = SESSION.load(Ordering::SeqCst);
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

/// Set (under the session's order lock, before it is sent) when a composite that suspends every
/// thread goes out; cleared when the debugger lets a thread run again (see [`unblock`]).
static AFTER_SUSPEND_ALL: AtomicBool = AtomicBool::new(false);

/// A thread the debugger had suspended runs again (or the debugger left, or the VM is dying):
/// composites held back after a suspend-all event may go out.
pub fn unblock() {
    if AFTER_SUSPEND_ALL.swap(false, Ordering::SeqCst) {
        wake();
    }
}

/// Set by the helper while it holds composites back (cleared once none is left), so that lifting
/// a hold wakes it only when it has something to send: a resume after each event would otherwise
/// cost a wake-up of the helper for nothing.
static HOLDING: AtomicBool = AtomicBool::new(false);

/// Tells the helper that composites it holds back may go (their hold was lifted): it looks at
/// once, rather than when its next job comes, which may be never. The caller has lifted the hold
/// first: a helper that has not yet said it holds something looks at the hold again after saying
/// so (see [`run`]).
pub fn wake() {
    if !HOLDING.load(Ordering::SeqCst) {
        return;
    }
    if let Some(helper) = crate::agent::agent().and_then(|a| a.helper.get()) {
        let _ = helper.send(Job::Wake);
    }
}

/// Whether composites wait: events are held, or a suspend-all composite went out and nothing has
/// run since. The JDK's agent blocks its event helper the same way, so that events several threads
/// hit at once (each suspending all) reach the debugger one per resume rather than all at once,
/// stacking suspensions a single resume cannot undo (nsk/jdb's kill001 counts on it).
fn composites_wait() -> bool {
    crate::hold::is_held() || AFTER_SUSPEND_ALL.load(Ordering::SeqCst)
}

/// The helper thread's loop (runs until the VM dies).
///
/// While the debugger holds events (`VirtualMachine.HoldEvents`, see [`crate::hold`]), and after a
/// suspend-all composite until a thread runs again, composites wait here, in order, and nothing is
/// sent; the other work (cleanups, tasks event threads wait for) goes on, so that holding events
/// never stalls a thread that reports nothing. Whatever lifts the hold sends a [`Job::Wake`].
pub fn run(agent: &Agent, jni: Jni, jobs: mpsc::Receiver<Job>) {
    crate::step_switch::keeper_is_current_thread(agent, jni);
    let mut held: VecDeque<Job> = VecDeque::new();
    let mut timed: Vec<(Instant, Task)> = Vec::new();
    loop {
        let due = timed.iter().map(|(at, _)| *at).min();
        let job = match due {
            None => jobs.recv().map_err(|_| mpsc::RecvTimeoutError::Disconnected),
            Some(at) => jobs.recv_timeout(at.saturating_duration_since(Instant::now())),
        };
        match job {
            Ok(job @ (Job::Deliver { .. } | Job::Unloads)) if !held.is_empty() || composites_wait() => {
                held.push_back(job);
                // Before the look at the hold below, so that a release either sees this or
                // came before that look.
                HOLDING.store(true, Ordering::SeqCst);
            }
            Ok(Job::Timed { at, task }) => timed.push((at, task)),
            Ok(job) => run_job(agent, jni, job),
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => return,
        }
        let now = Instant::now();
        while let Some(due) = timed.iter().position(|(at, _)| *at <= now) {
            let (_, task) = timed.swap_remove(due);
            run_job(agent, jni, Job::Task { task, done: None });
        }
        while !held.is_empty() && !composites_wait() {
            if let Some(job) = held.pop_front() {
                run_job(agent, jni, job);
            }
        }
        if held.is_empty() {
            HOLDING.store(false, Ordering::SeqCst);
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
            struct CountOut(usize);
            impl Drop for CountOut {
                fn drop(&mut self) {
                    BACKLOG.take(self.0);
                }
            }
            let _count_out = CountOut(events.len());
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
        // `run` looks at the held composites after every job.
        Job::Wake => {}
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
    let current = |matched_for: Option<u64>| matched_for.is_none_or(|s| s == SESSION.load(Ordering::SeqCst));
    if !current(matched_for) {
        return Ok(());
    }
    let Some(session) = agent.session() else { return Ok(()) };
    let mut events = Vec::with_capacity(raw.len());
    for r in raw {
        let frame = jni.push_local_frame(16)?;
        match convert(agent, jni, r) {
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
            AFTER_SUSPEND_ALL.store(true, Ordering::SeqCst);
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

/// The location of code index `index` in `method`.
pub fn location(agent: &Agent, jni: Jni, method: jmethodID, index: i64) -> Result<Location, ErrorCode> {
    let class = agent.jvmti.get_method_declaring_class(method)?;
    let type_tag = if agent.jvmti.is_interface(class)? { TypeTag::Interface } else { TypeTag::Class };
    let class_id = agent.class_id(jni, class)?;
    jni.delete_local_ref(class);
    // A method replaced by `RedefineClasses` while running here has no ID the debugger knows
    // (HotSpot gives the old version a new jmethodID): like the JDK's agent we send 0, which JDI
    // reads as an obsolete method.
    let method_id =
        if agent.jvmti.is_method_obsolete(method).unwrap_or(false) { MethodId::NULL } else { agent.method_id(method) };
    Ok(Location { type_tag, class_id: class_id.into(), method_id, index: index as u64 })
}

/// What HotSpot's agent sends as the catch location of an uncaught exception.
const NO_LOCATION: Location =
    Location { type_tag: TypeTag::Class, class_id: jdwp_protocol::ClassId::NULL, method_id: MethodId::NULL, index: 0 };

fn value(agent: &Agent, jni: Jni, v: &RawValue) -> Result<Value, ErrorCode> {
    match v {
        RawValue::Plain(v) => Ok(*v),
        RawValue::Object(None) => Ok(Value::NULL),
        RawValue::Object(Some(r)) => crate::values::object_value(agent, jni, r.0),
    }
}

fn tagged(agent: &Agent, jni: Jni, obj: Option<GlobalRef>) -> Result<jdwp_protocol::TaggedObjectId, ErrorCode> {
    agent.tagged_object(jni, obj.map_or(std::ptr::null_mut(), |r| r.0))
}

/// The type tag, type ID and field ID of a watched field.
fn field_ids(
    agent: &Agent,
    jni: Jni,
    class: GlobalRef,
    field: usize,
) -> Result<(TypeTag, ReferenceTypeId, jdwp_protocol::FieldId), ErrorCode> {
    let (tag, type_id) = agent.tagged_type(jni, class.0)?;
    let field_id = agent.field_id(jni, class.0, field as jfieldID)?;
    Ok((tag, type_id, field_id))
}

fn convert(agent: &Agent, jni: Jni, raw: &RawEvent) -> Result<Event, ErrorCode> {
    let thread = |t: &GlobalRef| agent.thread_id(jni, t.0);
    let at = |method: &usize, index: &i64| location(agent, jni, *method as jmethodID, *index);
    Ok(match raw {
        RawEvent::VmStart { request_id, thread: t } => Event::VmStart { request_id: *request_id, thread: thread(t)? },
        RawEvent::VmDeath { request_id } => Event::VmDeath { request_id: *request_id },
        RawEvent::ThreadStart { request_id, thread: t } => {
            Event::ThreadStart { request_id: *request_id, thread: thread(t)? }
        }
        RawEvent::ThreadDeath { request_id, thread: t } => {
            Event::ThreadDeath { request_id: *request_id, thread: thread(t)? }
        }
        RawEvent::ClassPrepare { request_id, thread: t, class } => {
            let (signature, _) = agent.jvmti.get_class_signature(class.0)?;
            let status = agent.jvmti.get_class_status(class.0)?;
            let (ref_type_tag, type_id) = agent.tagged_type(jni, class.0)?;
            Event::ClassPrepare {
                request_id: *request_id,
                thread: thread(t)?,
                ref_type_tag,
                type_id,
                signature,
                status: crate::commands::jdwp_class_status(status),
            }
        }
        RawEvent::ClassUnload { request_id, signature } => {
            Event::ClassUnload { request_id: *request_id, signature: signature.clone() }
        }
        RawEvent::Breakpoint { request_id, thread: t, method, index } => {
            Event::Breakpoint { request_id: *request_id, thread: thread(t)?, location: at(method, index)? }
        }
        RawEvent::SingleStep { request_id, thread: t, method, index } => {
            Event::SingleStep { request_id: *request_id, thread: thread(t)?, location: at(method, index)? }
        }
        RawEvent::MethodEntry { request_id, thread: t, method, index } => {
            Event::MethodEntry { request_id: *request_id, thread: thread(t)?, location: at(method, index)? }
        }
        RawEvent::MethodExit { request_id, thread: t, method, index } => {
            Event::MethodExit { request_id: *request_id, thread: thread(t)?, location: at(method, index)? }
        }
        RawEvent::MethodExitWithReturnValue { request_id, thread: t, method, index, value: v } => {
            Event::MethodExitWithReturnValue {
                request_id: *request_id,
                thread: thread(t)?,
                location: at(method, index)?,
                value: value(agent, jni, v)?,
            }
        }
        RawEvent::MonitorContendedEnter { request_id, thread: t, object, method, index } => {
            Event::MonitorContendedEnter {
                request_id: *request_id,
                thread: thread(t)?,
                object: agent.tagged_object(jni, object.0)?,
                location: at(method, index)?,
            }
        }
        RawEvent::MonitorContendedEntered { request_id, thread: t, object, method, index } => {
            Event::MonitorContendedEntered {
                request_id: *request_id,
                thread: thread(t)?,
                object: agent.tagged_object(jni, object.0)?,
                location: at(method, index)?,
            }
        }
        RawEvent::MonitorWait { request_id, thread: t, object, method, index, timeout } => Event::MonitorWait {
            request_id: *request_id,
            thread: thread(t)?,
            object: agent.tagged_object(jni, object.0)?,
            location: at(method, index)?,
            timeout: *timeout,
        },
        RawEvent::MonitorWaited { request_id, thread: t, object, method, index, timed_out } => Event::MonitorWaited {
            request_id: *request_id,
            thread: thread(t)?,
            object: agent.tagged_object(jni, object.0)?,
            location: at(method, index)?,
            timed_out: *timed_out,
        },
        RawEvent::Exception { request_id, thread: t, method, index, exception, catch } => Event::Exception {
            request_id: *request_id,
            thread: thread(t)?,
            location: at(method, index)?,
            exception: agent.tagged_object(jni, exception.0)?,
            catch_location: match catch {
                Some((m, i)) => at(m, i)?,
                None => NO_LOCATION,
            },
        },
        RawEvent::FieldAccess { request_id, thread: t, method, index, field_class, field, object } => {
            let (ref_type_tag, type_id, field_id) = field_ids(agent, jni, *field_class, *field)?;
            Event::FieldAccess {
                request_id: *request_id,
                thread: thread(t)?,
                location: at(method, index)?,
                ref_type_tag,
                type_id,
                field_id,
                object: tagged(agent, jni, *object)?,
            }
        }
        RawEvent::FieldModification { request_id, thread: t, method, index, field_class, field, object, value: v } => {
            let (ref_type_tag, type_id, field_id) = field_ids(agent, jni, *field_class, *field)?;
            Event::FieldModification {
                request_id: *request_id,
                thread: thread(t)?,
                location: at(method, index)?,
                ref_type_tag,
                type_id,
                field_id,
                object: tagged(agent, jni, *object)?,
                value_to_be: value(agent, jni, v)?,
            }
        }
    })
}
