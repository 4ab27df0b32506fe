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
//! (see `EventHelper::deliver_self_suspending` in [`crate::agent::helper`], the handle and jobs
//! the agent owns, and `ThreadControl::begin_self_suspend`): the debugger hears of the event only
//! once its thread is stopped, and the thread sleeps once, until the resume. (A thread the debugger has no ID for yet, and the VM death event, take the older
//! path: the callback waits until the composite is sent and the suspension requested, and the
//! thread stops when it returns into the VM.) Events that suspend nothing are handed over without
//! waiting, as the JDK's agent does, up to a bound: past [`crate::backpressure::CAP`] events
//! waiting here, an application thread that posts one waits for the helper to catch up (a
//! debugger that stops reading, or holds events, costs the program time, not memory).
//!
//! Composites that suspend nothing and that no thread waits for are written in batches: while
//! more work waits in the inbox, they are encoded and held in the helper's [`Outbox`], and written
//! together, in one write, before anything else happens (see [`crate::outbox`]).
//!
//! Each composite is tagged with the session it was matched for ([`Gate::session`]): one that is
//! still queued when its debugger leaves is dropped (its references freed), never sent to the next
//! debugger.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Instant;

use jdwp_protocol::commands::event::Composite;
use jdwp_protocol::{ErrorCode, SuspendPolicy, ThreadId, codec};

use crate::agent::helper::{Job, Task};
use crate::agent::{Agent, GlobalRef, ID_SIZES, JvmtiSuspend};
use crate::gate::{Closed, Gate, Inbound, Inbox};
use crate::jni::Jni;
use crate::outbox::Outbox;
use crate::raw::RawEvents;
use crate::session::Session;

/// The helper's outbox: bodies tagged with the session and the gate's session number they were
/// matched for.
type Held = Outbox<(Arc<Session>, u64)>;

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
    let mut out = Held::default();
    let mut frames = Frames { jni, open: None, jobs: 0 };
    loop {
        let due = timed.iter().map(|(at, _)| *at).min();
        // What is held goes out before the helper waits: never held while it is idle; nor are
        // the jobs' local references.
        let next = match inbox.try_recv() {
            Some(next) => Ok(next),
            None => {
                flush(agent, &mut out);
                frames.close();
                inbox.recv(due)
            }
        };
        match next {
            Ok(Inbound::Job(job)) if job.is_composite() => {
                if let Some(job) = gate.offer(job) {
                    run_job(agent, &mut frames, job, &mut out);
                }
            }
            Ok(Inbound::Job(Job::Timed { at, task })) => timed.push((at, task)),
            Ok(Inbound::Job(job)) => run_job(agent, &mut frames, job, &mut out),
            // The gate opened: what it held is taken below.
            Ok(Inbound::Wake) | Err(Closed::Timeout) => {}
            Err(Closed::Disconnected) => {
                flush(agent, &mut out);
                return;
            }
        }
        // No clock read per job while nothing is timed.
        if !timed.is_empty() {
            let now = Instant::now();
            while let Some(due) = timed.iter().position(|(at, _)| *at <= now) {
                let (_, task) = timed.swap_remove(due);
                run_job(agent, &mut frames, Job::Task { task, done: None }, &mut out);
            }
        }
        // One at a time: a composite that suspends all closes the gate again.
        while let Some(job) = gate.next() {
            run_job(agent, &mut frames, job, &mut out);
        }
    }
}

/// Whether `job` is a composite the outbox may hold.
fn holdable(job: &Job) -> bool {
    match job {
        Job::Deliver { policy, done, self_suspend, .. } => {
            Held::may_hold(*policy, done.is_some() || self_suspend.is_some())
        }
        _ => false,
    }
}

/// How many jobs share a local frame (see [`Frames`]).
const JOBS_PER_FRAME: usize = 32;

/// The local frame the helper's jobs run in: one for up to [`JOBS_PER_FRAME`] jobs in a row,
/// closed before the helper waits, so that their local references are freed in bounded numbers
/// and never kept while it is idle. (A frame for each job cost two JNI calls per event, a burst of
/// thread starts being a job each.)
struct Frames {
    jni: Jni,
    open: Option<crate::jni::LocalFrame>,
    jobs: usize,
}

impl Frames {
    /// Makes sure a frame with room for this job is open.
    fn enter(&mut self) {
        if self.open.is_none() || self.jobs >= JOBS_PER_FRAME {
            // The old frame is popped before the new one is pushed: local frames are a stack, and
            // dropping the old guard after the push would pop the new frame instead.
            self.open = None;
            self.open = self.jni.push_local_frame(64).ok();
            self.jobs = 0;
        }
        self.jobs += 1;
    }

    /// Frees the local references of the jobs since the frame opened.
    fn close(&mut self) {
        self.open = None;
    }
}

fn run_job(agent: &Agent, frames: &mut Frames, job: Job, out: &mut Held) {
    // Anything else comes after what is held, as it would have without the outbox.
    let hold = holdable(&job);
    if !hold {
        flush(agent, out);
    }
    frames.enter();
    let jni = frames.jni;
    // A panic in one job must not stop event delivery for good.
    crate::guard((), AssertUnwindSafe(|| handle(agent, jni, job, hold.then_some(&mut *out))));
}

/// Writes what the outbox holds, in one write, if its debugger is still the one attached.
fn flush(agent: &Agent, out: &mut Held) {
    if let Some(((session, matched_for), bodies)) = out.take() {
        write_held(agent, &session, matched_for, bodies);
    }
}

fn write_held(agent: &Agent, session: &Arc<Session>, matched_for: u64, bodies: Vec<Vec<u8>>) {
    let _order = session.order();
    // Matched for a debugger that has left: dropped (as at the check in `deliver_counted`).
    if !agent.session().is_some_and(|now| Arc::ptr_eq(&now, session)) || !agent.gate.is_current(Some(matched_for)) {
        return;
    }
    if let Err(e) = session.send_events(bodies) {
        tracing::debug!(?e, "events not delivered");
    }
}

/// `out`: the outbox, if this job's composite may wait there.
fn handle(agent: &Agent, jni: Jni, job: Job, out: Option<&mut Held>) {
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
                (Some(flag), Some(t)) => Some((flag.thread(), flag.wait_suspended(agent, t.0))),
                _ => None,
            };
            let c = Outgoing { policy, thread, events, self_suspended, matched_for: Some(session) };
            send_composite(agent, jni, c, out);
            if let Some(done) = done {
                let _ = done.send(());
            }
        }
        Job::Cleanup(requests) => crate::commands::event_request::forget_requests(agent, jni, &requests),
        Job::Unloads => {
            for (policy, events) in crate::events::unload::take_unloads(agent, jni) {
                let c = Outgoing { policy, thread: None, events, self_suspended: None, matched_for: None };
                send_composite(agent, jni, c, None);
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

/// One composite on its way out, with the references it holds.
struct Outgoing {
    policy: SuspendPolicy,
    /// The event thread (a global reference), if the composite has one.
    thread: Option<GlobalRef>,
    events: RawEvents,
    /// The event thread (this ID) suspended itself for it (whether that worked), see
    /// [`crate::agent::helper::EventHelper::deliver_self_suspending`].
    self_suspended: Option<(ThreadId, bool)>,
    /// The session it was matched for, if not the current one's.
    matched_for: Option<u64>,
}

/// Delivers one composite and releases its references. `out`: the outbox, if the composite may
/// wait there.
fn send_composite(agent: &Agent, jni: Jni, c: Outgoing, out: Option<&mut Held>) {
    if let Err(e) = deliver(agent, jni, &c, out) {
        tracing::debug!(?e, "event not delivered");
    }
    for event in c.events {
        event.release(jni);
    }
    if let Some(t) = c.thread {
        jni.delete_global_ref(t.0);
    }
}

fn deliver(agent: &Agent, jni: Jni, c: &Outgoing, out: Option<&mut Held>) -> Result<(), ErrorCode> {
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
    let end = EndSelfSuspend(JvmtiSuspend { agent, jni }, c.self_suspended);
    deliver_counted(agent, jni, c, &end.0, out)
}

fn deliver_counted(
    agent: &Agent,
    jni: Jni,
    c: &Outgoing,
    ops: &JvmtiSuspend<'_>,
    out: Option<&mut Held>,
) -> Result<(), ErrorCode> {
    let (policy, thread, raw, matched_for) = (c.policy, c.thread, &c.events[..], c.matched_for);
    // Matched for a debugger that has left: dropped, whoever listens now.
    let current = |matched_for: Option<u64>| agent.gate.is_current(matched_for);
    if !current(matched_for) {
        return Ok(());
    }
    let Some(session) = agent.session() else { return Ok(()) };
    let mut events = Vec::with_capacity(raw.len());
    for r in raw {
        // A frame per event of a composite of several; one event lives in the job's frame.
        let frame = if raw.len() > 1 { Some(jni.push_local_frame(16)?) } else { None };
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
    if let Some(out) = out {
        // Suspends nothing: held, and checked against the session again when written.
        let matched_for = matched_for.unwrap_or_else(|| agent.gate.session());
        let same = |a: &(Arc<Session>, u64), b: &(Arc<Session>, u64)| Arc::ptr_eq(&a.0, &b.0) && a.1 == b.1;
        for ((session, matched_for), bodies) in out.hold((session, matched_for), body, same) {
            write_held(agent, &session, matched_for, bodies);
        }
        return Ok(());
    }
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
