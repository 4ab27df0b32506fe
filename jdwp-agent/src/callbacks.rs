//! JVMTI event callbacks: filter each event against the debugger's requests and hand what matches
//! to the event helper. They run on application threads, so they follow the locking rules of
//! [`crate::agent`]: locks only around plain Rust, never across a VM call; JVMTI work that needs a
//! lock held across calls (breakpoints, watches, event modes) goes to the event helper.
//!
//! Events of one thread at one location — method entry, single step, breakpoint — come in one
//! composite, as the spec asks. JVMTI reports them one by one, the breakpoint last; so when a
//! breakpoint is set where a method entry or a step event happens, those events are held back in a
//! per-thread slot and sent with the breakpoint's. The hold keeps the JVMTI breakpoint set until
//! then, even if the debugger clears its request meanwhile (see [`crate::events::breakpoint_table`]),
//! so the slot is empty again before the thread leaves the bytecode, and a virtual thread leaves
//! nothing in its carrier's slot. (Should the breakpoint still vanish, say by a class redefinition,
//! they go out with the next event on the thread.) (When method entries are caught by
//! breakpoints, see [`crate::events::entry`], a step ending at a method's first bytecode thus
//! comes with its entry; the JDK's agent sends those two apart, which the spec allows too.)

use std::cell::{Cell, OnceCell, RefCell};
use std::sync::Arc;

use jdwp_protocol::{EventKind, SuspendPolicy};
use jni_sys::{JNIEnv, jclass, jfieldID, jlong, jmethodID, jobject, jvalue};

use crate::agent::{Agent, GlobalRef, agent, lock};
use crate::events::filter::Request;
use crate::events::requests::Matches;
use crate::events::requests::Snapshot;
use crate::events::subject::{Subject, matches, matches_in, offer_one};
use crate::events::{breakpoints, entry, unload};
use crate::jni::{JavaType, Jni};
use crate::jvmti::sys::{jboolean, jlocation, jthread, jvmtiEnv};
use crate::raw::{RawEvent, RawEvents, RawValue};
use crate::step;

thread_local! {
    /// Whether this thread is one of the agent's (asked once per thread: the answer never changes).
    static AGENT_THREAD: Cell<Option<bool>> = const { Cell::new(None) };
    /// Events waiting for the breakpoint event at their location (see the module docs).
    static PENDING: RefCell<Option<Pending>> = const { RefCell::new(None) };
}

fn on_agent_thread(agent: &Agent, jni: Jni, current: jthread) -> bool {
    AGENT_THREAD.with(|cached| match cached.get() {
        Some(known) => known,
        None => {
            let known = agent.is_agent_thread(jni, current);
            cached.set(Some(known));
            known
        }
    })
}

/// The events of one occurrence, as they are collected.
struct Batch {
    policy: SuspendPolicy,
    events: RawEvents,
}

impl Batch {
    fn new() -> Batch {
        Batch { policy: SuspendPolicy::None, events: RawEvents::new() }
    }

    /// Adds an event per matched request (`make` may fail to build one).
    fn add(&mut self, m: &Matches, mut make: impl FnMut(i32) -> Option<RawEvent>) {
        let before = self.events.len();
        self.events.extend(m.request_ids.iter().filter_map(|&id| make(id)));
        if self.events.len() > before {
            self.policy = self.policy.max(m.suspend_policy);
        }
    }

    fn merge(&mut self, other: Batch) {
        self.policy = self.policy.max(other.policy);
        self.events.extend(other.events);
    }
}

struct Pending {
    method: usize,
    index: i64,
    batch: Batch,
}

/// Takes the events held back for (`method`, `index`) on this thread; any held back for another
/// place are sent first (their breakpoint did not come).
fn take_pending(agent: &Agent, jni: Jni, thread: jthread, at: Option<(usize, i64)>) -> Batch {
    let Some(pending) = PENDING.with(|p| p.borrow_mut().take()) else { return Batch::new() };
    breakpoints::unhold(agent, pending.method, pending.index);
    if at == Some((pending.method, pending.index)) {
        return pending.batch;
    }
    send(agent, jni, thread, pending.batch);
    Batch::new()
}

/// Holds a batch back (leaving it empty) when a breakpoint at the same place will report with it;
/// otherwise it is sent as usual, at the end of the callback.
fn hold(agent: &Agent, batch: &mut Batch, method: usize, index: i64) {
    if !batch.events.is_empty() && breakpoints::hold(agent, method, index) {
        let batch = std::mem::replace(batch, Batch::new());
        PENDING.with(|p| *p.borrow_mut() = Some(Pending { method, index, batch }));
    }
}

fn send(agent: &Agent, jni: Jni, thread: jthread, batch: Batch) {
    report(agent, jni, thread, batch.policy, batch.events);
}

/// Hands matched events to the helper; if they suspend anything, waits until they are sent.
pub fn report(agent: &Agent, jni: Jni, thread: jthread, policy: SuspendPolicy, events: RawEvents) {
    if events.is_empty() {
        return;
    }
    let release = |thread: Option<GlobalRef>, events: RawEvents| {
        events.into_iter().for_each(|e| e.release(jni));
        if let Some(t) = thread {
            jni.delete_global_ref(t.0);
        }
    };
    let Some(helper) = agent.helper.get() else {
        release(None, events);
        return;
    };
    let death = events.iter().any(|e| matches!(e, RawEvent::VmDeath { .. }));
    // An agent thread must never wait for the helper, which may be itself. (The event thread is
    // the current thread, or null; an agent thread reporting, which only class prepares do, passes
    // null and has its answer cached already.)
    let agent_thread =
        AGENT_THREAD.with(Cell::get) == Some(true) || (!thread.is_null() && on_agent_thread(agent, jni, thread));
    if !agent_thread {
        // The debugger may invoke methods in this thread as soon as it hears of the event.
        crate::invoke::before_event(jni, thread, policy);
    }
    let wait = (policy != SuspendPolicy::None || death) && !agent_thread;
    // A reference to the thread for the helper only when it has a use for one: no global
    // reference to make and free for each event that suspends nothing.
    let event_thread = if thread.is_null() || agent_thread || !helper_needs_thread(policy, wait, death) {
        None
    } else {
        global(jni, thread)
    };
    // A suspending event suspends its own thread here, which the helper then counts: one wake-up
    // per event instead of two (the helper's "sent", then the resume).
    let self_suspend = match event_thread {
        // A thread the debugger has no ID for yet takes the helper's path, which assigns one.
        Some(t) if wait && !death => agent.existing_thread_id(thread).map(|id| (t, id)),
        _ => None,
    };
    if let Some((t, id)) = self_suspend {
        let already = agent.threads.lock().begin_self_suspend(id);
        match helper.deliver_self_suspending(policy, (t, id), events, already) {
            Ok((flag, done)) => {
                if !already {
                    flag.suspend_self(agent, thread, done);
                }
            }
            Err((t, events)) => {
                // No helper (the VM is going away): nothing was suspended, nothing will be.
                agent.threads.lock().cancel_self_suspend(id);
                release(t, events);
            }
        }
    } else if let Err((t, events)) = helper.deliver(
        policy,
        event_thread,
        events,
        wait,
        // Past the helper's bound, an application thread whose event suspends nothing waits for
        // room (see `crate::backpressure`), holding nothing: no agent lock is taken here.
        crate::backpressure::waits_for_room(agent_thread, wait),
    ) {
        release(t, events);
    }
    if policy != SuspendPolicy::None && !thread.is_null() && !agent_thread {
        crate::invoke::after_event(agent, jni, thread);
    }
}

/// Whether the helper needs the event thread itself for a composite: to suspend it (policy
/// `EventThread`), or to see it suspend itself (a suspending event it waits for, see [`report`]).
/// An event that suspends nothing names its thread in its events; the helper never touches it.
fn helper_needs_thread(policy: SuspendPolicy, wait: bool, death: bool) -> bool {
    policy == SuspendPolicy::EventThread || (wait && !death)
}

fn global(jni: Jni, obj: jobject) -> Option<GlobalRef> {
    jni.new_global_ref(obj).ok().map(GlobalRef)
}

/// The agent and this thread's JNI, unless the VM is dead.
fn live(jni_env: *mut JNIEnv) -> Option<(&'static Agent, Jni)> {
    let agent = agent()?;
    // SAFETY: the VM passes the calling thread's JNI environment to every callback.
    let jni = unsafe { Jni::from_raw(jni_env) }?;
    (!agent.is_vm_dead()).then_some((agent, jni))
}

/// Common entry: as [`live`], and not for the agent's own events. `thread` is the current thread
/// (JVMTI posts these events on the thread they are about).
fn enter(jni_env: *mut JNIEnv, thread: jthread) -> Option<(&'static Agent, Jni)> {
    let (agent, jni) = live(jni_env)?;
    if !thread.is_null() && on_agent_thread(agent, jni, thread) {
        return None;
    }
    Some((agent, jni))
}

/// The shape of an event callback on the event's own thread, within the `guard` of its
/// `extern "C"` edge: after [`enter`], `body` runs in a local frame ([`framed`]) on a batch that
/// starts with the events held back for `at` (see [`take_pending`]; `None`: those held back are
/// stale and go first). Then the batch is sent, and a step that ended here is settled before the
/// thread runs on ([`step::settle`]). No agent lock is held across any of it. Returns what
/// [`enter`] did, for work after the frame.
fn on_event(
    jni_env: *mut JNIEnv,
    thread: jthread,
    at: Option<(usize, i64)>,
    body: impl FnOnce(&'static Agent, Jni, &mut Batch),
) -> Option<(&'static Agent, Jni)> {
    let (agent, jni) = enter(jni_env, thread)?;
    framed(jni, || event_body(agent, jni, thread, at, body));
    Some((agent, jni))
}

/// [`on_event`]'s work, within whatever local frame the caller chose.
fn event_body(
    agent: &'static Agent,
    jni: Jni,
    thread: jthread,
    at: Option<(usize, i64)>,
    body: impl FnOnce(&'static Agent, Jni, &mut Batch),
) {
    let mut batch = take_pending(agent, jni, thread, at);
    body(agent, jni, &mut batch);
    send(agent, jni, thread, batch);
    step::settle(agent, thread);
}

/// Runs `f` in a local frame, so that the references a callback makes die with it.
fn framed(jni: Jni, f: impl FnOnce()) {
    let frame = jni.push_local_frame(32);
    f();
    drop(frame);
}

// ---- thread, class and VM events -----------------------------------------------------------------------

pub unsafe extern "system" fn on_thread_start(_: *mut jvmtiEnv, jni_env: *mut JNIEnv, thread: jthread) {
    crate::guard((), || thread_event(jni_env, thread, EventKind::ThreadStart, false));
}

pub unsafe extern "system" fn on_thread_end(_: *mut jvmtiEnv, jni_env: *mut JNIEnv, thread: jthread) {
    crate::guard((), || thread_event(jni_env, thread, EventKind::ThreadDeath, false));
}

/// JVMTI 21+, on the virtual thread itself: kept for `AllThreads` under `includevirtualthreads=y`,
/// and reported to the thread start requests that match it. Enabled only while one of the two
/// needs it (see [`crate::virtual_threads`]).
pub unsafe extern "system" fn on_virtual_thread_start(_: *mut jvmtiEnv, jni_env: *mut JNIEnv, thread: jthread) {
    crate::guard((), || {
        let Some((agent, jni)) = live(jni_env) else { return };
        if agent.options.include_virtual_threads {
            agent.track_virtual_thread(jni, thread);
        }
        // A virtual thread is never one of the agent's: no `enter`. The requests are taken once,
        // for both the question and the filtering.
        if let Some(requests) = lock(&agent.requests).snapshot(EventKind::ThreadStart) {
            thread_event_in(agent, jni, thread, EventKind::ThreadStart, true, Some(requests));
        }
    });
}

/// JVMTI 21+, on the virtual thread itself: reported to the thread death requests that match it
/// (enabled only while one could).
pub unsafe extern "system" fn on_virtual_thread_end(_: *mut jvmtiEnv, jni_env: *mut JNIEnv, thread: jthread) {
    crate::guard((), || thread_event(jni_env, thread, EventKind::ThreadDeath, true));
}

/// A thread's start or end; `virtual_thread` says which callback reported it (JVMTI reports
/// platform and virtual threads by different events, so no JNI call need ask).
fn thread_event(jni_env: *mut JNIEnv, thread: jthread, kind: EventKind, virtual_thread: bool) {
    if let Some((agent, jni)) = enter(jni_env, thread) {
        thread_event_in(agent, jni, thread, kind, virtual_thread, None);
    }
}

/// [`thread_event`] after [`enter`]. With no local frame of its own: it makes no local
/// reference (its events hold global ones), and HotSpot gives each event callback a block of
/// local references of its own, freed when the callback returns. At each virtual thread's start
/// under a `ThreadStart` request, pushing and popping a frame took about a sixth of the
/// carrier's time in our callback.
///
/// `requests`: the kind's requests, if the caller took them already.
fn thread_event_in(
    agent: &'static Agent,
    jni: Jni,
    thread: jthread,
    kind: EventKind,
    virtual_thread: bool,
    requests: Option<Snapshot>,
) {
    event_body(agent, jni, thread, None, |agent, jni, batch| {
        if kind == EventKind::ThreadDeath {
            // Nothing held back may outlive the thread.
            send(agent, jni, thread, std::mem::replace(batch, Batch::new()));
            step::thread_ended(agent, jni, thread);
        }
        let subject = Subject::new(agent, jni, thread).virtual_thread(virtual_thread);
        let found = match &requests {
            Some(requests) => matches_in(agent, requests, &subject),
            None => matches(agent, kind, &subject),
        };
        let Some(m) = found else { return };
        batch.add(&m, |request_id| {
            let t = global(jni, thread)?;
            Some(match kind {
                EventKind::ThreadStart => RawEvent::ThreadStart { request_id, thread: t, virtual_thread },
                _ => RawEvent::ThreadDeath { request_id, thread: t, virtual_thread },
            })
        });
    });
}

pub unsafe extern "system" fn on_class_prepare(_: *mut jvmtiEnv, jni_env: *mut JNIEnv, thread: jthread, klass: jclass) {
    crate::guard((), || {
        let Some((agent, jni)) = live(jni_env) else { return };
        // Classes prepared by the agent's own threads count too (reported without a thread, as
        // the JDK's agent does).
        let ours = !thread.is_null() && on_agent_thread(agent, jni, thread);
        framed(jni, || {
            unload::class_prepared(agent, klass);
            if entry::wants_class(agent, jni, klass) {
                add_entry_breakpoints(agent, jni, klass, ours);
            }
            let event_thread = if ours { std::ptr::null_mut() } else { thread };
            let subject = Subject::of_class(agent, jni, klass);
            let Some(m) = matches(agent, EventKind::ClassPrepare, &subject) else { return };
            drop(subject);
            let mut batch = Batch::new();
            batch.add(&m, |request_id| {
                let t = if event_thread.is_null() { GlobalRef(std::ptr::null_mut()) } else { global(jni, thread)? };
                Some(RawEvent::ClassPrepare { request_id, thread: t, class: global(jni, klass)? })
            });
            send(agent, jni, event_thread, batch);
        });
    });
}

/// Sets the method entry breakpoints of a class before any of its code runs: on the event helper
/// (the work holds a lock across JVMTI calls), waiting for it.
fn add_entry_breakpoints(agent: &Agent, jni: Jni, klass: jclass, agent_thread: bool) {
    if agent_thread {
        // The helper may be this very thread: work in place if nobody holds the setup lock.
        if let Ok(_setup) = crate::events::try_setup(agent) {
            entry::add_class(agent, jni, klass);
        } else {
            tracing::warn!("a class prepared by an agent thread may miss its method entry breakpoints");
        }
        return;
    }
    let Some(helper) = agent.helper.get() else { return };
    let Some(class) = global(jni, klass) else { return };
    helper.run_task(move |agent, jni| {
        // Bound as a whole: the closure then captures the `Send` wrapper, not its pointer.
        let class = class;
        {
            let _setup = crate::events::setup(agent);
            entry::add_class(agent, jni, class.0);
        }
        jni.delete_global_ref(class.0);
    });
}

pub unsafe extern "system" fn on_vm_death(_: *mut jvmtiEnv, jni_env: *mut JNIEnv) {
    crate::guard((), || {
        let Some((agent, jni)) = enter(jni_env, std::ptr::null_mut()) else { return };
        // One composite: an event for each VM death request (newest first), then the automatic
        // one (request 0), as the JDK's agent sends them. JDI's users read the first event of the
        // set (nsk/jdi Event/request/request001 expects it to name their request).
        let subject = Subject::new(agent, jni, std::ptr::null_mut());
        let requested = matches(agent, EventKind::VmDeath, &subject);
        let mut events = RawEvents::new();
        let mut policy = SuspendPolicy::None;
        if let Some(m) = requested {
            policy = m.suspend_policy;
            events.extend(m.request_ids.into_iter().rev().map(|request_id| RawEvent::VmDeath { request_id }));
        }
        events.push(RawEvent::VmDeath { request_id: 0 });
        // Held events would keep the VM from ever exiting.
        agent.gate.ended();
        report(agent, jni, std::ptr::null_mut(), policy, events);
        if policy != SuspendPolicy::None {
            // This thread stops at its next call into the VM while the debugger keeps it suspended...
            if let Ok(me) = agent.jvmti.get_current_thread() {
                jni.delete_local_ref(me);
            }
            // ...and once resumed, waits until the reply to the command that resumed it is written:
            // the VM exits as soon as this callback returns, and would cut that reply off.
            if let Some(session) = agent.session() {
                drop(session.order());
            }
        }
        agent.vm_dead.store(true, std::sync::atomic::Ordering::Release);
        // Nothing waits in `Thread.resume` for a debugger once the VM is going.
        agent.threads.wake_waiters();
    });
}

// ---- location events: breakpoints, steps, method entry and exit --------------------------------------

fn located(kind: EventKind, request_id: i32, thread: GlobalRef, method: jmethodID, index: i64) -> RawEvent {
    let method = method as usize;
    match kind {
        EventKind::Breakpoint => RawEvent::Breakpoint { request_id, thread, method, index },
        EventKind::SingleStep => RawEvent::SingleStep { request_id, thread, method, index },
        EventKind::MethodEntry => RawEvent::MethodEntry { request_id, thread, method, index },
        _ => RawEvent::MethodExit { request_id, thread, method, index },
    }
}

/// Adds the events of `kind` requests that `subject` (the thread at its location) matches.
fn add_located(agent: &Agent, jni: Jni, batch: &mut Batch, kind: EventKind, subject: &Subject<'_>) {
    let (Some(method), thread, index) = (subject.method, subject.thread, subject.index) else { return };
    if let Some(m) = matches(agent, kind, subject) {
        batch.add(&m, |request_id| Some(located(kind, request_id, global(jni, thread)?, method, index)));
    }
}

/// A step of the current thread completed at (`method`, `index`): offers its event and starts the
/// next step from here.
fn complete_step(
    agent: &Agent,
    jni: Jni,
    thread: jthread,
    request: &Arc<Request>,
    method: jmethodID,
    index: i64,
    batch: &mut Batch,
) {
    let subject = Subject::of_method(agent, jni, thread, method, index);
    let report = offer_one(agent, request, &subject);
    drop(subject);
    if report && let Some(t) = global(jni, thread) {
        let m = Matches { request_ids: smallvec::smallvec![request.id], suspend_policy: request.suspend_policy };
        batch.add(&m, |request_id| Some(located(EventKind::SingleStep, request_id, t, method, index)));
    }
    step::completed(agent, jni, thread, request);
}

pub unsafe extern "system" fn on_breakpoint(
    _: *mut jvmtiEnv,
    jni_env: *mut JNIEnv,
    thread: jthread,
    method: jmethodID,
    location: jlocation,
) {
    crate::guard((), || {
        let at = Some((method as usize, location));
        let Some((agent, jni)) = on_event(jni_env, thread, at, |agent, jni, batch| {
            // A step waiting here for a return (see `step`) comes first, as its single step would.
            if let Some(request) = step::on_breakpoint(agent, jni, thread, method, location) {
                complete_step(agent, jni, thread, &request, method, location, batch);
            }
            let subject = Subject::of_method(agent, jni, thread, method, location);
            if entry::is_entry(agent, method as usize, location) {
                let mut entries = Batch::new();
                add_located(agent, jni, &mut entries, EventKind::MethodEntry, &subject);
                // JVMTI's order: the entry comes before anything else at the location.
                entries.merge(std::mem::replace(batch, Batch::new()));
                *batch = entries;
            }
            add_located(agent, jni, batch, EventKind::Breakpoint, &subject);
        }) else {
            return;
        };
        // After the debugger has heard of any events here (a user's breakpoint at the same place
        // included), so that a wait for it never keeps them from it.
        if crate::app_resume::is_internal(agent, method as usize, location) {
            framed(jni, || crate::app_resume::on_breakpoint(agent, jni, thread));
        }
    });
}

pub unsafe extern "system" fn on_single_step(
    _: *mut jvmtiEnv,
    jni_env: *mut JNIEnv,
    thread: jthread,
    method: jmethodID,
    location: jlocation,
) {
    crate::guard((), || {
        on_event(jni_env, thread, Some((method as usize, location)), |agent, jni, batch| {
            if let Some(request) = step::on_single_step(agent, jni, thread, method, location) {
                complete_step(agent, jni, thread, &request, method, location, batch);
            }
            hold(agent, batch, method as usize, location);
        });
    });
}

pub unsafe extern "system" fn on_frame_pop(
    _: *mut jvmtiEnv,
    jni_env: *mut JNIEnv,
    thread: jthread,
    _method: jmethodID,
    by_exception: jboolean,
) {
    crate::guard((), || {
        let Some((agent, _jni)) = enter(jni_env, thread) else { return };
        // Frame pops are only ever asked for by steps.
        step::on_frame_pop(agent, thread, by_exception != 0);
    });
}

pub unsafe extern "system" fn on_exception_catch(
    _: *mut jvmtiEnv,
    jni_env: *mut JNIEnv,
    thread: jthread,
    _method: jmethodID,
    _location: jlocation,
    _exception: jobject,
) {
    crate::guard((), || {
        // Only steps enable catches (JDWP's ExceptionCatch is never reported). A catch comes first
        // at its location: anything held back is stale, and is all this sends.
        let Some((agent, _jni)) = on_event(jni_env, thread, None, |_, _, _| {}) else { return };
        step::on_exception_catch(agent, thread);
    });
}

pub unsafe extern "system" fn on_method_entry(
    _: *mut jvmtiEnv,
    jni_env: *mut JNIEnv,
    thread: jthread,
    method: jmethodID,
) {
    crate::guard((), || {
        // Nothing at a method's entry precedes this event: anything held back is stale.
        on_event(jni_env, thread, None, |agent, jni, batch| {
            let start = OnceCell::new();
            let start = || *start.get_or_init(|| agent.jvmti.get_method_location(method).map_or(-1, |(s, _)| s));
            if entry::mode(agent) == entry::Mode::Global {
                let subject = Subject::of_method(agent, jni, thread, method, 0);
                if let Some(m) = matches(agent, EventKind::MethodEntry, &subject) {
                    let index = start();
                    batch.add(&m, |id| Some(located(EventKind::MethodEntry, id, global(jni, thread)?, method, index)));
                }
            }
            if step::any_active() {
                step::on_method_entry(agent, jni, thread, method);
            }
            if !batch.events.is_empty() {
                hold(agent, batch, method as usize, start());
            }
        });
    });
}

/// A `jvalue` of JNI type `ty`, objects as global references (converted by the helper).
///
/// # Safety
///
/// The member of `v` that `ty` selects is initialized.
unsafe fn raw_value(jni: Jni, ty: JavaType, v: jvalue) -> RawValue {
    // SAFETY: the caller's promise.
    match unsafe { crate::values::read_jvalue(ty, v) } {
        Ok(value) => RawValue::Plain(value),
        Err(obj) => RawValue::Object(if obj.is_null() { None } else { global(jni, obj) }),
    }
}

pub unsafe extern "system" fn on_method_exit(
    _: *mut jvmtiEnv,
    jni_env: *mut JNIEnv,
    thread: jthread,
    method: jmethodID,
    by_exception: jboolean,
    return_value: jvalue,
) {
    crate::guard((), || {
        // JDWP reports normal returns only.
        if by_exception != 0 {
            return;
        }
        on_event(jni_env, thread, None, |agent, jni, batch| {
            let subject = Subject::of_method(agent, jni, thread, method, 0);
            let plain = matches(agent, EventKind::MethodExit, &subject);
            let with_value = matches(agent, EventKind::MethodExitWithReturnValue, &subject);
            drop(subject);
            if plain.is_none() && with_value.is_none() {
                return;
            }
            // The exiting frame is still on the stack, at its last location.
            let index = agent.jvmti.get_frame_location(thread, 0).map_or(-1, |(_, l)| l);
            if let Some(m) = plain {
                batch.add(&m, |id| Some(located(EventKind::MethodExit, id, global(jni, thread)?, method, index)));
            }
            if let Some(m) = with_value {
                let ty = agent
                    .jvmti
                    .get_method_name(method)
                    .ok()
                    .and_then(|n| JavaType::from_method_descriptor(&n.signature))
                    .unwrap_or(JavaType::Void);
                batch.add(&m, |request_id| {
                    // SAFETY: JVMTI fills the member of the method's return type.
                    let value = unsafe { raw_value(jni, ty, return_value) };
                    Some(RawEvent::MethodExitWithReturnValue {
                        request_id,
                        thread: global(jni, thread)?,
                        method: method as usize,
                        index,
                        value,
                    })
                });
            }
        });
    });
}

// ---- exceptions and watchpoints -------------------------------------------------------------------------

/// The Exception event (the loader's `on_exception` calls it once debugging has started).
#[allow(clippy::too_many_arguments)]
pub unsafe extern "system" fn on_exception(
    _: *mut jvmtiEnv,
    jni_env: *mut JNIEnv,
    thread: jthread,
    method: jmethodID,
    location: jlocation,
    exception: jobject,
    catch_method: jmethodID,
    catch_location: jlocation,
) {
    crate::guard((), || {
        on_event(jni_env, thread, None, |agent, jni, batch| {
            let caught = !catch_method.is_null();
            let subject = Subject::of_method(agent, jni, thread, method, location).with_exception(exception, caught);
            if let Some(m) = matches(agent, EventKind::Exception, &subject) {
                let catch = caught.then_some((catch_method as usize, catch_location));
                batch.add(&m, |request_id| {
                    Some(RawEvent::Exception {
                        request_id,
                        thread: global(jni, thread)?,
                        method: method as usize,
                        index: location,
                        exception: global(jni, exception)?,
                        catch,
                    })
                });
            }
        });
    });
}

/// What field events share.
struct FieldEvent {
    thread: jthread,
    method: jmethodID,
    location: jlocation,
    field_klass: jclass,
    object: jobject,
    field: jfieldID,
}

fn field_event(jni_env: *mut JNIEnv, kind: EventKind, e: FieldEvent, mut value: impl FnMut(Jni) -> Option<RawValue>) {
    on_event(jni_env, e.thread, None, |agent, jni, batch| field_matches(agent, jni, batch, kind, &e, &mut value));
}

fn field_matches(
    agent: &Agent,
    jni: Jni,
    batch: &mut Batch,
    kind: EventKind,
    e: &FieldEvent,
    mut value: impl FnMut(Jni) -> Option<RawValue>,
) {
    // Class filters look at the location's class; instance filters at the field's object.
    let subject = Subject::of_method(agent, jni, e.thread, e.method, e.location)
        .with_instance(e.object)
        .with_field(e.field_klass, e.field);
    if let Some(m) = matches(agent, kind, &subject) {
        batch.add(&m, |request_id| {
            let thread = global(jni, e.thread)?;
            let field_class = global(jni, e.field_klass)?;
            let object = if e.object.is_null() { None } else { Some(global(jni, e.object)?) };
            let (method, index, field) = (e.method as usize, e.location, e.field as usize);
            Some(match kind {
                EventKind::FieldAccess => {
                    RawEvent::FieldAccess { request_id, thread, method, index, field_class, field, object }
                }
                _ => RawEvent::FieldModification {
                    request_id,
                    thread,
                    method,
                    index,
                    field_class,
                    field,
                    object,
                    value: value(jni)?,
                },
            })
        });
    }
}

#[allow(clippy::too_many_arguments)]
pub unsafe extern "system" fn on_field_access(
    _: *mut jvmtiEnv,
    jni_env: *mut JNIEnv,
    thread: jthread,
    method: jmethodID,
    location: jlocation,
    field_klass: jclass,
    object: jobject,
    field: jfieldID,
) {
    crate::guard((), || {
        let e = FieldEvent { thread, method, location, field_klass, object, field };
        field_event(jni_env, EventKind::FieldAccess, e, |_| None);
    });
}

#[allow(clippy::too_many_arguments)]
pub unsafe extern "system" fn on_field_modification(
    _: *mut jvmtiEnv,
    jni_env: *mut JNIEnv,
    thread: jthread,
    method: jmethodID,
    location: jlocation,
    field_klass: jclass,
    object: jobject,
    field: jfieldID,
    signature_type: std::ffi::c_char,
    new_value: jvalue,
) {
    crate::guard((), || {
        // JVMTI gives the field's descriptor's first byte (`L` or `[` for objects).
        let ty = JavaType::from_descriptor_byte(signature_type as u8).unwrap_or(JavaType::Object);
        let e = FieldEvent { thread, method, location, field_klass, object, field };
        // SAFETY: JVMTI fills the member of the field's type, which `signature_type` names.
        field_event(jni_env, EventKind::FieldModification, e, |jni| Some(unsafe { raw_value(jni, ty, new_value) }));
    });
}

// ---- monitors ---------------------------------------------------------------------------------------------

/// What a monitor event carries besides its thread, object and location.
#[derive(Clone, Copy)]
enum MonitorDetail {
    Enter,
    Entered,
    Wait(jlong),
    Waited(bool),
}

fn monitor_event(jni_env: *mut JNIEnv, thread: jthread, object: jobject, detail: MonitorDetail) {
    on_event(jni_env, thread, None, |agent, jni, batch| {
        // Located where the thread is: its current frame (native `Object.wait` for waits).
        let Ok((method, index)) = agent.jvmti.get_frame_location(thread, 0) else { return };
        let kind = match detail {
            MonitorDetail::Enter => EventKind::MonitorContendedEnter,
            MonitorDetail::Entered => EventKind::MonitorContendedEntered,
            MonitorDetail::Wait(_) => EventKind::MonitorWait,
            MonitorDetail::Waited(_) => EventKind::MonitorWaited,
        };
        let subject = Subject::of_method(agent, jni, thread, method, index);
        // Class filters of waits look at the monitor's class (the wait itself is in Object); those
        // of contended monitors at the location's, as the JDK's agent does.
        let subject = match detail {
            MonitorDetail::Wait(_) | MonitorDetail::Waited(_) => subject.with_class_of(object),
            _ => subject,
        };
        if let Some(m) = matches(agent, kind, &subject) {
            batch.add(&m, |request_id| {
                let (thread, object, method) = (global(jni, thread)?, global(jni, object)?, method as usize);
                Some(match detail {
                    MonitorDetail::Enter => {
                        RawEvent::MonitorContendedEnter { request_id, thread, object, method, index }
                    }
                    MonitorDetail::Entered => {
                        RawEvent::MonitorContendedEntered { request_id, thread, object, method, index }
                    }
                    MonitorDetail::Wait(timeout) => {
                        RawEvent::MonitorWait { request_id, thread, object, method, index, timeout }
                    }
                    MonitorDetail::Waited(timed_out) => {
                        RawEvent::MonitorWaited { request_id, thread, object, method, index, timed_out }
                    }
                })
            });
        }
    });
}

pub unsafe extern "system" fn on_monitor_contended_enter(
    _: *mut jvmtiEnv,
    jni_env: *mut JNIEnv,
    thread: jthread,
    object: jobject,
) {
    crate::guard((), || monitor_event(jni_env, thread, object, MonitorDetail::Enter));
}

pub unsafe extern "system" fn on_monitor_contended_entered(
    _: *mut jvmtiEnv,
    jni_env: *mut JNIEnv,
    thread: jthread,
    object: jobject,
) {
    crate::guard((), || monitor_event(jni_env, thread, object, MonitorDetail::Entered));
}

pub unsafe extern "system" fn on_monitor_wait(
    _: *mut jvmtiEnv,
    jni_env: *mut JNIEnv,
    thread: jthread,
    object: jobject,
    timeout: jlong,
) {
    crate::guard((), || monitor_event(jni_env, thread, object, MonitorDetail::Wait(timeout)));
}

pub unsafe extern "system" fn on_monitor_waited(
    _: *mut jvmtiEnv,
    jni_env: *mut JNIEnv,
    thread: jthread,
    object: jobject,
    timed_out: jboolean,
) {
    crate::guard((), || monitor_event(jni_env, thread, object, MonitorDetail::Waited(timed_out != 0)));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_helper_gets_the_event_thread_only_to_suspend_it() {
        use SuspendPolicy::{All, EventThread, None};
        // (policy, wait, death)
        assert!(!helper_needs_thread(None, false, false), "suspends nothing");
        assert!(!helper_needs_thread(None, true, true), "the VM death event");
        assert!(helper_needs_thread(EventThread, true, false));
        assert!(helper_needs_thread(All, true, false), "the thread may suspend itself");
        assert!(!helper_needs_thread(All, true, true), "suspends all at VM death: not by its thread");
    }
}
