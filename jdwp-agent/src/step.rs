//! Step control: JDWP steps made of JVMTI single steps, frame pops and method entries.
//!
//! A step request names a thread, a size (one bytecode, or one line) and a depth (into, over or out
//! of calls). JVMTI only steps bytecode by bytecode, so the agent remembers where the step began —
//! its *origin*: stack depth, method and line — and judges every JVMTI single step against it
//! ([`judge_step`]):
//!
//! * back in a caller (the stack is shallower than at the origin, or the origin frame was seen to
//!   pop): the step is done, whatever its kind;
//! * in a callee: a step into stops at the first location of a method it may stop in (not excluded
//!   by the request's class filters and, for a line step, with line numbers). Otherwise the agent
//!   stops single-stepping until the callee returns, so that callees run without a callback per
//!   bytecode. A step over waits at a *return breakpoint*: an internal breakpoint on the
//!   instruction after the call in the origin frame ([`after_call`]), taken as reached once the
//!   thread is back at the origin's depth there (deeper hits are recursive calls). A frame pop
//!   would do too, but HotSpot keeps a thread with a frame pop pending in interpreter-only mode,
//!   so a callee stepped over would run interpreted, several times slower (as with the JDK's
//!   agent). A step into watches method entries for a method it may stop in (which needs
//!   interpreter-only mode anyway) and waits for a frame pop. Where no return breakpoint can be
//!   set (a native or obsolete origin frame, a call from an instruction other than those of
//!   [`after_call`]), a frame pop it is. An exception that leaves the callee resumes
//!   single-stepping where it is caught;
//! * in the origin frame: a min step is done at once, a line step once the line changes (leaving a
//!   method without line numbers counts as a change, as with the JDK's agent).
//!
//! Native frames are never single-stepped: a step in native code completes at the first Java
//! location that qualifies. A step out does not single-step the origin frame at all: it asks for
//! its frame pop and steps from there. (It keeps the frame pop, unlike a step over, because it
//! begins without single-stepping: a frame pop is what puts the thread in interpreter-only mode
//! and deoptimizes its compiled frames, as OpenJDK's tests of escape analysis expect of a step,
//! `EATests`, while a breakpoint in the caller would deoptimize only what depends on that method.)
//! When a step completes, the next one starts where it ended (a request without a count reports
//! step after step), single-stepping on as the JDK's agent does: a step out so continued ends at
//! the next bytecode or line of its new frame, as a step over would, or in a caller (once it went
//! into a call, only in a caller); when the request goes, the thread's single-step, frame pop and method entry
//! events are switched off, so that it leaves interpreter-only mode.
//!
//! Threads: the session thread begins and ends steps (the stepping thread is then normally
//! suspended); the stepping thread itself moves its step along from its event callbacks. Neither
//! holds the step table (`agent.engine.steps`) across a JVMTI call; the thread-level event modes are applied after the fact
//! and re-applied until no change raced with them (see [`resync`]). Return breakpoints are
//! counted uses of the shared JVMTI breakpoints ([`breakpoints`]), so a user's breakpoint at the
//! same place coexists with them; a callback has the event helper set or clear them (that takes
//! the setup lock, which application threads may not hold).

pub mod switch;
pub mod switch_state;

use std::sync::Arc;
use std::sync::atomic::Ordering;

use jdwp_protocol::commands::event_request::Modifier;
use jdwp_protocol::{ErrorCode, StepDepth, StepSize, ThreadId};
use jni_sys::jmethodID;

use self::switch as step_switch;
pub use crate::agent::engine::steps::{Lines, Needs, Origin, Phase, ReturnPoint};
use crate::agent::engine::steps::{StepState, Steps};
use crate::agent::{Agent, GlobalRef, lock};
use crate::events::breakpoints;
use crate::events::filter::Request;
use crate::jni::Jni;
use crate::jvmti::sys::{self, jthread};

// ---- decisions (pure) ---------------------------------------------------------------------------

/// Where the stepping thread is at a JVMTI single step.
#[derive(Debug, Clone, Copy)]
pub struct Here {
    pub depth: i32,
    pub method: usize,
    pub index: i64,
}

/// What to do about a single step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The step is done here.
    Complete,
    /// Not yet: keep single-stepping.
    KeepStepping,
    /// Not in this frame: stop single-stepping until it returns.
    AwaitReturn,
}

/// Judges a single step at `here` for a step of `size` and `depth` that began at `origin`.
/// `enterable` says (only asked when needed) whether a step into may stop in the current method.
pub fn judge_step(
    size: StepSize,
    depth: StepDepth,
    origin: &Origin,
    here: &Here,
    enterable: impl FnOnce() -> bool,
) -> Verdict {
    // A min step into stops at the very next bytecode, wherever it is (JDK behaviour).
    if depth == StepDepth::Into && size == StepSize::Min {
        return Verdict::Complete;
    }
    if origin.exited || here.depth < origin.depth {
        return Verdict::Complete;
    }
    if here.depth > origin.depth {
        return if depth == StepDepth::Into && enterable() { Verdict::Complete } else { Verdict::AwaitReturn };
    }
    // Same depth: normally the origin frame.
    if depth == StepDepth::Out && !origin.continued {
        // Only reached when the origin frame could not be watched for its pop: watch it now.
        return if here.method == origin.method { Verdict::AwaitReturn } else { Verdict::Complete };
    }
    // A continued step out single-steps its frame as a step over would, and so ends at the next
    // bytecode (min) or line (line) there, as with the JDK's agent, which re-bases a completed
    // step where it ended and leaves single-stepping on (nsk/jdi's crstepreq009 counts on it).
    match (size, origin.line) {
        (StepSize::Min, _) => Verdict::Complete,
        // Began without a line: any move ends the step.
        (StepSize::Line, None) => Verdict::Complete,
        (StepSize::Line, Some(from)) => {
            let now = if here.method == origin.method { origin.lines.line_at(here.index) } else { None };
            if now == Some(from) { Verdict::KeepStepping } else { Verdict::Complete }
        }
    }
}

/// Whether a step into, waiting for a filtered callee to return, stops in a method just entered.
pub fn entry_stops(size: StepSize, filtered: bool, has_lines: impl FnOnce() -> bool) -> bool {
    !filtered && (size != StepSize::Line || has_lines())
}

/// An exception thrown while a step waited for a frame to return was caught at stack depth
/// `depth`: whether single-stepping resumes there, which it does once the catch is back in the
/// origin frame (or below it; for a step out, below it only).
pub fn catch_resumes(depth: StepDepth, origin_depth: i32, phase: Phase, catch_depth: i32) -> bool {
    match phase {
        Phase::Stepping => false,
        Phase::AwaitingReturn { .. } if depth == StepDepth::Out => catch_depth < origin_depth,
        Phase::AwaitingReturn { .. } => catch_depth <= origin_depth,
    }
}

/// A frame pop the step asked for came, leaving the thread `after_pop_depth` frames deep:
/// whether single-stepping resumes. A step out whose origin frame's pop is watched waits for that
/// frame to go (a callee it waited for returning into the origin frame is not enough: as with the
/// JDK's agent, a continued step out that went into a call ends only in a caller); other steps,
/// and a step out from a frame that cannot be watched (native), single-step again and judge where
/// they are at the next single step.
pub fn frame_pop_resumes(depth: StepDepth, origin: &Origin, after_pop_depth: i32) -> bool {
    depth != StepDepth::Out || !origin.pop_watched || after_pop_depth < origin.depth
}

/// The phase a step starts in: a step out with a watchable origin frame waits for its pop.
pub fn starting_phase(depth: StepDepth, origin_pop_watched: bool) -> Phase {
    if depth == StepDepth::Out && origin_pop_watched {
        Phase::AwaitingReturn { watch_entries: false }
    } else {
        Phase::Stepping
    }
}

/// The code index at which a frame stopped at `index` of `code` goes on once the Java code its
/// instruction runs has returned: for the invocations, and for the instructions that may run a
/// class initializer and then go on (`new`, `getstatic`, `putstatic`). `None` for any other
/// instruction (whatever Java code it runs, such as a class loader's, a frame pop is waited for
/// instead) and for an index outside the code.
pub fn after_call(code: &[u8], index: i64) -> Option<i64> {
    const GETSTATIC: u8 = 0xb2;
    const PUTSTATIC: u8 = 0xb3;
    const INVOKEVIRTUAL: u8 = 0xb6;
    const INVOKESPECIAL: u8 = 0xb7;
    const INVOKESTATIC: u8 = 0xb8;
    const INVOKEINTERFACE: u8 = 0xb9;
    const INVOKEDYNAMIC: u8 = 0xba;
    const NEW: u8 = 0xbb;
    let length = match *code.get(usize::try_from(index).ok()?)? {
        GETSTATIC | PUTSTATIC | INVOKEVIRTUAL | INVOKESPECIAL | INVOKESTATIC | NEW => 3,
        INVOKEINTERFACE | INVOKEDYNAMIC => 5,
        _ => return None,
    };
    let next = index + length;
    (usize::try_from(next).ok()? < code.len()).then_some(next)
}

/// The origin frame of a step that began `origin_depth` frames deep, seen from a thread now in a
/// callee `here_depth` frames deep: its index from the top of the stack. `None` if the step began
/// with no Java frame, or the thread is not deeper.
pub fn origin_frame(origin_depth: i32, here_depth: i32) -> Option<i32> {
    (origin_depth >= 1 && here_depth > origin_depth).then_some(here_depth - origin_depth)
}

// ---- state ----------------------------------------------------------------------------------------

fn with_steps<R>(agent: &Agent, f: impl FnOnce(&mut Steps) -> R) -> R {
    f(&mut lock(&agent.engine.steps))
}

/// What a callback needs of a thread's step, copied out of the lock.
struct Snapshot {
    serial: u64,
    request: Arc<Request>,
    size: StepSize,
    depth: StepDepth,
    origin: Origin,
    phase: Phase,
    returning: Option<ReturnPoint>,
}

fn snapshot(agent: &Agent, thread: ThreadId) -> Option<Snapshot> {
    with_steps(agent, |s| {
        s.by_thread.get(&thread).map(|st| Snapshot {
            serial: st.serial,
            request: st.request.clone(),
            size: st.size,
            depth: st.depth,
            origin: st.origin.clone(),
            phase: st.phase,
            returning: st.returning,
        })
    })
}

/// Changes the step `serial` of `thread` (if it is still that step) and says whether it did. The
/// return breakpoint the step no longer waits at after the change, if any, is given back.
fn update(agent: &Agent, thread: ThreadId, serial: u64, f: impl FnOnce(&mut StepState)) -> bool {
    let (applied, left) = with_steps(agent, |s| match s.by_thread.get_mut(&thread) {
        Some(st) if st.serial == serial => {
            let before = st.returning;
            f(st);
            s.version += 1;
            (true, before.filter(|&r| st.returning != Some(r)))
        }
        _ => (false, None),
    });
    if let Some(point) = left {
        unwatch_return(agent, point);
    }
    applied
}

/// The thread ID of a thread object (none if the debugger never saw it, so it cannot step).
fn thread_id(agent: &Agent, thread: jthread) -> Option<ThreadId> {
    agent.known_id(thread).map(ThreadId)
}

/// Whether any thread steps (cheap; for callbacks of events not enabled for steps only).
pub fn any_active() -> bool {
    crate::agent::agent().is_some_and(active)
}

/// [`any_active`], for a caller with the agent at hand.
fn active(agent: &Agent) -> bool {
    agent.engine.steps_active.load(Ordering::Acquire) > 0
}

/// Whether any thread's step single-steps now (rather than wait for a return or a frame pop).
pub fn anyone_single_steps(agent: &Agent) -> bool {
    active(agent) && with_steps(agent, |s| s.by_thread.values().any(|st| Needs::of(Some(st.phase)).single_step))
}

/// Applies the thread-level events `thread`'s step needs, again until no change raced with it.
///
/// A change made while another thread applies an older state makes that one loop and apply the
/// newer state, so the last application always matches the state. Only agent threads (never
/// suspended) and the stepping thread itself apply; an application the debugger interrupts by
/// suspending the stepping thread can only be stale while that thread is suspended, which is
/// harmless, since a suspended thread produces no events.
fn resync(agent: &Agent, thread: jthread, id: ThreadId) {
    // Only the events whose mode changes are set: each `SetEventNotificationMode` makes HotSpot
    // recompute its event state over every thread of the VM, which with hundreds of threads was a
    // sixth of what a step cost. The record of what was set is written before the calls, so it
    // can be ahead of the VM: whenever another resync of the thread is under way, or after a
    // race (see above), everything is set.
    let mut everything = false;
    loop {
        let (needs, before, version) = with_steps(agent, |s| {
            let needs = Needs::of(s.by_thread.get(&id).map(|st| st.phase));
            let under_way = s.applying.entry(id).or_insert(0);
            let others = *under_way;
            *under_way += 1;
            let before = if everything || others > 0 {
                None
            } else {
                s.applied.get(&id).copied().unwrap_or(Some(Needs::default()))
            };
            if needs == Needs::default() {
                s.applied.remove(&id);
            } else {
                s.applied.insert(id, Some(needs));
            }
            (needs, before, s.version)
        });
        if needs.single_step {
            // Before the thread's own switch, so that it does not flip HotSpot's VM-wide one.
            step_switch::stepping_starts(agent);
        }
        let mut failed = false;
        for (event, on, was) in needs.changes(before) {
            if let Err(e) = agent.jvmti.set_event_notification_mode(on, event, thread) {
                // A thread that ended needs nothing any more.
                tracing::debug!(%e, event, on, was, "thread-level event mode for a step");
                failed = true;
            }
        }
        let latest = with_steps(agent, |s| {
            if failed {
                s.applied.insert(id, None);
            }
            match s.applying.get_mut(&id) {
                Some(n) if *n > 1 => *n -= 1,
                _ => {
                    s.applying.remove(&id);
                }
            }
            s.version
        });
        if latest == version {
            if !needs.single_step {
                step_switch::stepping_stopped(agent);
            }
            return;
        }
        everything = true;
    }
}

// ---- JVMTI side --------------------------------------------------------------------------------------

/// The line table a line step judges by: the method's Java lines, or its lines in the default
/// stratum when its class has an SMAP (see [`crate::sde`]).
fn line_table(agent: &Agent, method: jmethodID) -> Lines {
    // A method redefined while it runs has, for the debugger, no lines (JDI shows line -1 there):
    // as with the JDK's agent, which does not ask for an obsolete method's table, a line step in
    // it ends at the next location instead of running on by the old lines (RedefineStep).
    if agent.jvmti.is_method_obsolete(method).unwrap_or(false) {
        return Lines::default();
    }
    let mut entries: Vec<(i64, i32)> = match agent.jvmti.get_line_number_table(method) {
        Ok(table) => table.iter().map(|e| (e.start_location, e.line_number)).collect(),
        // Native, or compiled without line numbers.
        Err(_) => return Lines::default(),
    };
    entries.sort_by_key(|&(start, _)| start);
    if let Some(converted) = stratum_lines(agent, method, &entries) {
        entries = converted;
    }
    Lines::new(entries)
}

/// `entries` in the default stratum, if the method's class has an SMAP that maps them.
fn stratum_lines(agent: &Agent, method: jmethodID, entries: &[(i64, i32)]) -> Option<Vec<(i64, i32)>> {
    let jni = agent.jni().ok()?;
    let class = agent.jvmti.get_method_declaring_class(method).ok()?;
    let smap = agent.jvmti.get_source_debug_extension(class);
    jni.delete_local_ref(class);
    let smap = crate::sde::Smap::parse(&smap.ok()?)?;
    smap.convert(crate::sde::default_stratum(agent).as_deref(), entries)
}

fn has_lines(agent: &Agent, method: jmethodID) -> bool {
    if let Some(known) = lock(&agent.engine.has_lines).get(&(method as usize)) {
        return *known;
    }
    let has = !line_table(agent, method).is_empty();
    lock(&agent.engine.has_lines).insert(method as usize, has);
    has
}

/// Where `thread` is now, as the origin of a step of `size`.
fn origin_here(agent: &Agent, thread: jthread, size: StepSize) -> Result<Origin, ErrorCode> {
    let depth = agent.jvmti.get_frame_count(thread)?;
    if depth == 0 {
        return Ok(Origin::default());
    }
    let (method, index) = agent.jvmti.get_frame_location(thread, 0)?;
    let lines = if size == StepSize::Line { line_table(agent, method) } else { Lines::default() };
    let line = if size == StepSize::Line { lines.line_at(index) } else { None };
    Ok(Origin {
        depth,
        method: method as usize,
        line,
        lines: Arc::new(lines),
        exited: false,
        continued: false,
        pop_watched: false,
    })
}

/// Whether a step into may stop in `method`: the request's class filters do not exclude its class,
/// and a line step needs line numbers.
fn enterable(agent: &Agent, jni: Jni, request: &Request, size: StepSize, method: jmethodID) -> bool {
    let subject = crate::events::subject::Subject::of_method(agent, jni, std::ptr::null_mut(), method, 0);
    entry_stops(size, request.class_rejects(&subject), || has_lines(agent, method))
}

/// Takes a use of the breakpoint where the current thread, in a callee `here_depth` frames deep,
/// comes back to the origin frame of a step over begun `origin_depth` deep (see [`origin_frame`],
/// [`after_call`]); returns that return point. The event helper sets the breakpoint (the callback
/// waits; the callee cannot return meanwhile). `None` if the origin frame is native or obsolete,
/// or its instruction is not one of [`after_call`]'s.
fn watch_return(agent: &Agent, thread: jthread, origin_depth: i32, here_depth: i32) -> Option<ReturnPoint> {
    let frame = origin_frame(origin_depth, here_depth)?;
    let (method, at) = agent.jvmti.get_frame_location(thread, frame).ok()?;
    if at < 0 || agent.jvmti.is_method_obsolete(method).unwrap_or(true) {
        return None;
    }
    let code = agent.jvmti.get_bytecodes(method).ok()?;
    let index = after_call(&code, at)?;
    let helper = agent.helper.get()?;
    let method = method as usize;
    let (taken_tx, taken) = std::sync::mpsc::sync_channel(1);
    helper.run_task(move |agent, _| {
        let _setup = crate::events::setup(agent);
        let _ = taken_tx.send(breakpoints::acquire(agent, method as jmethodID, index).is_ok());
    });
    taken.try_recv().unwrap_or(false).then_some(ReturnPoint { method, index, depth: origin_depth })
}

/// Gives a return breakpoint's use back, on the event helper, not waited for: safe from any thread
/// (and in any order with other uses: the helper takes the setup lock).
fn unwatch_return(agent: &Agent, point: ReturnPoint) {
    if let Some(helper) = agent.helper.get() {
        helper.spawn_task(move |agent, _| {
            let _setup = crate::events::setup(agent);
            breakpoints::release(agent, point.method as jmethodID, point.index);
        });
    }
}

/// Starts stepping `thread` for `request` (its `Step` modifier), replacing any step it had, as the
/// JDK's agent does. Called by the session thread; the thread is normally suspended.
pub fn begin(agent: &Agent, jni: Jni, thread: jthread, request: Arc<Request>) -> Result<(), ErrorCode> {
    let Some(&Modifier::Step { thread: id, size, depth }) = request.step() else {
        return Err(ErrorCode::ILLEGAL_ARGUMENT);
    };
    let mut origin = origin_here(agent, thread, size).map_err(|e| match e {
        ErrorCode::THREAD_NOT_ALIVE | ErrorCode::INVALID_THREAD => ErrorCode::INVALID_THREAD,
        other => other,
    })?;
    // The frame pop can be asked for only on a suspended thread, and not for a native frame;
    // otherwise single steps find the way out.
    origin.pop_watched = depth == StepDepth::Out && origin.depth > 0 && agent.jvmti.notify_frame_pop(thread, 0).is_ok();
    let phase = starting_phase(depth, origin.pop_watched);
    let global = GlobalRef(jni.new_global_ref(thread)?);
    let replaced = with_steps(agent, |s| {
        s.next_serial += 1;
        s.version += 1;
        let state =
            StepState { serial: s.next_serial, request, thread: global, size, depth, origin, phase, returning: None };
        s.by_thread.insert(id, state)
    });
    match replaced {
        Some(old) => {
            if let Some(point) = old.returning {
                unwatch_return(agent, point);
            }
            jni.delete_global_ref(old.thread.0)
        }
        None => {
            agent.engine.steps_active.fetch_add(1, Ordering::AcqRel);
        }
    }
    resync(agent, thread, id);
    Ok(())
}

/// The step of `request` is over (cleared, expired, or the debugger left): its thread stops
/// stepping. Safe from any thread.
pub fn end(agent: &Agent, jni: Jni, request: &Request) {
    if let Some((id, thread)) = take(agent, request) {
        resync(agent, thread.0, id);
        jni.delete_global_ref(thread.0);
    }
}

/// Removes the step of `request`, if its thread still has it: the thread's ID and the step's
/// reference to it, for the caller to resync and delete.
fn take(agent: &Agent, request: &Request) -> Option<(ThreadId, GlobalRef)> {
    let Some(&Modifier::Step { thread: id, .. }) = request.step() else { return None };
    let removed = with_steps(agent, |s| {
        let ours = s.by_thread.get(&id).is_some_and(|st| st.request.id == request.id);
        let removed = if ours { s.by_thread.remove(&id) } else { None };
        if removed.is_some() {
            s.version += 1;
        }
        removed
    });
    Some((id, retire(agent, removed?)))
}

/// Undoes what a step removed from the table still holds (the active count, its return
/// breakpoint); gives back its reference to the thread, for the caller to delete.
fn retire(agent: &Agent, state: StepState) -> GlobalRef {
    agent.engine.steps_active.fetch_sub(1, Ordering::AcqRel);
    if let Some(point) = state.returning {
        unwatch_return(agent, point);
    }
    state.thread
}

/// A thread ends: forget its step (its request stays until the debugger clears it).
pub fn thread_ended(agent: &Agent, jni: Jni, thread: jthread) {
    if !active(agent) {
        return;
    }
    let Some(id) = thread_id(agent, thread) else { return };
    let removed = with_steps(agent, |s| {
        // A thread's event modes end with it.
        s.applied.remove(&id);
        let removed = s.by_thread.remove(&id);
        if removed.is_some() {
            s.version += 1;
        }
        removed
    });
    if let Some(state) = removed {
        jni.delete_global_ref(retire(agent, state).0);
        step_switch::stepping_stopped(agent);
    }
}

/// A JVMTI single step of the current thread at (`method`, `index`). Returns the step request if
/// its step completes here (the caller reports it and then calls [`completed`]).
pub fn on_single_step(agent: &Agent, jni: Jni, thread: jthread, method: jmethodID, index: i64) -> Option<Arc<Request>> {
    let id = thread_id(agent, thread)?;
    let Some(step) = snapshot(agent, id) else {
        // Stepping left on by a race with the end of a step: switch it off.
        resync(agent, thread, id);
        return None;
    };
    if step.phase != Phase::Stepping {
        // Left on by a race with a change of phase: switch it off.
        resync(agent, thread, id);
        return None;
    }
    // A thread completing a `PopFrames` steps to its caller for the agent, not for the program.
    if crate::frame_pop::popping_thread(agent) == Some(id) {
        return None;
    }
    let depth = agent.jvmti.get_frame_count(thread).ok()?;
    let here = Here { depth, method: method as usize, index };
    let verdict = judge_step(step.size, step.depth, &step.origin, &here, || {
        enterable(agent, jni, &step.request, step.size, method)
    });
    match verdict {
        Verdict::Complete => Some(step.request),
        Verdict::KeepStepping => None,
        Verdict::AwaitReturn => {
            let watch_entries = step.depth == StepDepth::Into;
            let waiting = Phase::AwaitingReturn { watch_entries };
            // Only a step over: a step into watches method entries, which keep the thread
            // interpreted anyway; for a step out, see the module's notes.
            if step.depth == StepDepth::Over
                && let Some(point) = watch_return(agent, thread, step.origin.depth, depth)
            {
                if update(agent, id, step.serial, |st| {
                    st.set_phase(waiting);
                    st.returning = Some(point);
                }) {
                    resync(agent, thread, id);
                } else {
                    // The step went meanwhile (the debugger cleared it).
                    unwatch_return(agent, point);
                }
                return None;
            }
            // The current thread may always ask for its own frame pops.
            match agent.jvmti.notify_frame_pop(thread, 0) {
                Ok(()) => {
                    if update(agent, id, step.serial, |st| st.set_phase(waiting)) {
                        resync(agent, thread, id);
                    }
                }
                Err(e) => tracing::debug!(%e, "no frame pop for a step; single-stepping on"),
            }
            None
        }
    }
}

/// A breakpoint of the current thread at (`method`, `index`). If its step waits there and the thread
/// is back in the frame the step waits for (not in a deeper call of the same method), the step
/// goes on as if single-stepped to here. Returns the step request if its step completes here (the
/// caller reports it, with any breakpoint of the debugger's at the same place, and then calls
/// [`completed`]).
pub fn on_breakpoint(agent: &Agent, jni: Jni, thread: jthread, method: jmethodID, index: i64) -> Option<Arc<Request>> {
    if !active(agent) {
        return None;
    }
    let id = thread_id(agent, thread)?;
    let step = snapshot(agent, id)?;
    let point = step.returning.filter(|p| p.method == method as usize && p.index == index)?;
    if crate::frame_pop::popping_thread(agent) == Some(id) {
        return None;
    }
    let depth = agent.jvmti.get_frame_count(thread).ok()?;
    if depth > point.depth {
        return None;
    }
    let here = Here { depth, method: method as usize, index };
    let verdict = judge_step(step.size, step.depth, &step.origin, &here, || {
        enterable(agent, jni, &step.request, step.size, method)
    });
    tracing::debug!(?here, ?verdict, "step at its return breakpoint");
    match verdict {
        // `completed` starts the next step, which leaves the breakpoint.
        Verdict::Complete => Some(step.request),
        // Single steps take over from the next instruction: this one has been judged.
        Verdict::KeepStepping | Verdict::AwaitReturn => {
            if update(agent, id, step.serial, |st| st.set_phase(Phase::Stepping)) {
                resync(agent, thread, id);
            }
            None
        }
    }
}

/// Classes were redefined, which cleared every JVMTI breakpoint in them: a step waiting at a
/// return breakpoint in one of them single-steps again from where its thread is, and waits anew
/// when that is in a callee (at a return breakpoint in the frame's method as it now is, or, for
/// an obsolete one, for a frame pop). For the session thread.
pub fn classes_redefined(agent: &Agent, jni: Jni, classes: &[sys::jclass]) {
    if !active(agent) {
        return;
    }
    let waiting: Vec<(ThreadId, u64, ReturnPoint)> = with_steps(agent, |s| {
        s.by_thread.iter().filter_map(|(&id, st)| st.returning.map(|point| (id, st.serial, point))).collect()
    });
    for (id, serial, point) in waiting {
        let Ok(class) = agent.jvmti.get_method_declaring_class(point.method as jmethodID) else { continue };
        let redefined = classes.iter().any(|&c| jni.is_same_object(c, class));
        jni.delete_local_ref(class);
        if !redefined {
            continue;
        }
        let Ok(thread) = agent.thread(jni, id) else { continue };
        if update(agent, id, serial, |st| st.set_phase(Phase::Stepping)) {
            resync(agent, thread, id);
        }
        jni.delete_local_ref(thread);
    }
}

/// A method entry of the current thread: a step into, waiting for a filtered callee, single-steps
/// again in a method it may stop in, and stops at its first step event there. (Single-stepping
/// enabled at a method's entry skips its first bytecode, so, as with the JDK's agent, the step
/// ends at the second.)
pub fn on_method_entry(agent: &Agent, jni: Jni, thread: jthread, method: jmethodID) {
    let Some(id) = thread_id(agent, thread) else { return };
    let Some(step) = snapshot(agent, id) else { return };
    if step.phase != (Phase::AwaitingReturn { watch_entries: true }) {
        return;
    }
    let Ok(depth) = agent.jvmti.get_frame_count(thread) else { return };
    if depth > step.origin.depth
        && enterable(agent, jni, &step.request, step.size, method)
        && update(agent, id, step.serial, |st| st.set_phase(Phase::Stepping))
    {
        resync(agent, thread, id);
    }
}

/// A frame pop the current thread's step asked for: single-step again (the step decides at the
/// next single step whether it is done). Frames popped by an exception are left to
/// [`on_exception_catch`], as the JDK's agent does: stepping then resumes where the exception is
/// caught, and the first step event comes after the handler's first bytecode.
pub fn on_frame_pop(agent: &Agent, thread: jthread, by_exception: bool) {
    if by_exception {
        return;
    }
    let Some(id) = thread_id(agent, thread) else { return };
    let Some(step) = snapshot(agent, id) else {
        resync(agent, thread, id);
        return;
    };
    // The popping frame is still on the stack.
    let after = agent.jvmti.get_frame_count(thread).map(|n| n - 1).unwrap_or(0);
    let exited = after < step.origin.depth;
    let resume = frame_pop_resumes(step.depth, &step.origin, after);
    tracing::debug!(after, exited, resume, phase = ?step.phase, "frame pop for a step");
    if (exited || resume)
        && update(agent, id, step.serial, |st| {
            st.origin.exited |= exited;
            if resume {
                st.set_phase(Phase::Stepping);
            }
        })
    {
        resync(agent, thread, id);
    }
}

/// An exception was caught in the current thread (at its current frame).
pub fn on_exception_catch(agent: &Agent, thread: jthread) {
    let Some(id) = thread_id(agent, thread) else { return };
    let Some(step) = snapshot(agent, id) else {
        resync(agent, thread, id);
        return;
    };
    let Ok(depth) = agent.jvmti.get_frame_count(thread) else { return };
    let exited = depth < step.origin.depth;
    let resume = catch_resumes(step.depth, step.origin.depth, step.phase, depth);
    tracing::debug!(depth, exited, resume, phase = ?step.phase, "exception caught during a step");
    if (exited || resume)
        && update(agent, id, step.serial, |st| {
            st.origin.exited |= exited;
            if resume {
                st.set_phase(Phase::Stepping);
            }
        })
    {
        resync(agent, thread, id);
    }
}

/// The step of `request` completed on the current thread and its event was offered: unless the
/// request is gone, the next step starts here.
pub fn completed(agent: &Agent, jni: Jni, thread: jthread, request: &Request) {
    if request.is_expired() {
        // The thread normally stops for this step's event, and the debugger then often starts
        // its next step (a count-1 request each, as JDI debuggers step): the thread-level modes
        // are left as they are until the thread runs on ([`settle`]), so that a next step needing
        // the same ones costs no mode change at all.
        if let Some((id, reference)) = take(agent, request) {
            jni.delete_global_ref(reference.0);
            UNSETTLED.set(Some(id));
        }
        return;
    }
    let Some(id) = thread_id(agent, thread) else { return };
    if let Some(step) = snapshot(agent, id).filter(|s| s.request.id == request.id) {
        restart(agent, thread, id, &step, true);
    }
}

thread_local! {
    // Thread-local: per-thread scratch of the callback running on that thread.
    /// A step of the current thread ended in this callback and left its thread-level modes as
    /// they were (see [`completed`]).
    static UNSETTLED: std::cell::Cell<Option<ThreadId>> = const { std::cell::Cell::new(None) };
}

/// Called by the current thread (`thread`) before it runs Java code again (at the end of a
/// callback that may have completed a step, and before it runs an invoke): sets the thread-level
/// modes that a step ended here left as they were (see [`completed`]).
pub fn settle(agent: &Agent, thread: jthread) {
    if let Some(id) = UNSETTLED.take() {
        resync(agent, thread, id);
    }
}

/// Frames of `thread` were popped (`StackFrame.PopFrames`, which JVMTI reports no frame pops for;
/// the thread is suspended): its step, if any, starts again from where the thread now is, as with
/// the JDK's agent. For the session thread, once the frames are gone.
pub fn frames_popped(agent: &Agent, thread: jthread) {
    let Some(id) = thread_id(agent, thread) else { return };
    if let Some(step) = snapshot(agent, id) {
        restart(agent, thread, id, &step, false);
    }
}

/// Starts `step` again from the thread's current location. `continued`: it goes on after it
/// completed there (on the thread itself, which single-steps), and keeps single-stepping as the
/// JDK's agent does; a step out still watches its new origin frame's pop, to know when it goes.
/// Otherwise it starts as a new step would.
fn restart(agent: &Agent, thread: jthread, id: ThreadId, step: &Snapshot, continued: bool) {
    let Ok(mut origin) = origin_here(agent, thread, step.size) else { return };
    origin.continued = continued;
    origin.pop_watched =
        step.depth == StepDepth::Out && origin.depth > 0 && agent.jvmti.notify_frame_pop(thread, 0).is_ok();
    let phase = if continued { Phase::Stepping } else { starting_phase(step.depth, origin.pop_watched) };
    if update(agent, id, step.serial, |st| {
        st.origin = origin;
        st.set_phase(phase);
    }) {
        resync(agent, thread, id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_modes_that_change_are_set_unless_the_old_ones_are_unknown() {
        let stepping = Needs::of(Some(Phase::Stepping));
        let awaiting = Needs::of(Some(Phase::AwaitingReturn { watch_entries: true }));
        let set = |now: Needs, before: Option<Needs>| now.changes(before).map(|(e, on, _)| (e, on)).collect::<Vec<_>>();
        assert_eq!(
            set(stepping, Some(Needs::default())),
            vec![
                (sys::JVMTI_EVENT_SINGLE_STEP, true),
                (sys::JVMTI_EVENT_FRAME_POP, true),
                (sys::JVMTI_EVENT_EXCEPTION_CATCH, true)
            ]
        );
        assert_eq!(set(stepping, Some(stepping)), vec![]);
        assert_eq!(
            set(awaiting, Some(stepping)),
            vec![(sys::JVMTI_EVENT_SINGLE_STEP, false), (sys::JVMTI_EVENT_METHOD_ENTRY, true)]
        );
        assert_eq!(set(Needs::default(), None).len(), 4, "unknown: every mode is set");
        assert!(set(Needs::default(), None).iter().all(|&(_, on)| !on));
    }

    /// `stepTarget`-like method 1: lines 10 (0..4), 11 (4..9, a call at 5), 12 (9..); a second
    /// range of line 10 at 20 (a loop back to the first line).
    fn origin(line_index: i64, depth: i32) -> Origin {
        let lines = Lines::new(vec![(9, 12), (0, 10), (4, 11), (20, 10)]);
        Origin {
            depth,
            method: 1,
            line: lines.line_at(line_index),
            lines: Arc::new(lines),
            exited: false,
            continued: false,
            pop_watched: false,
        }
    }

    fn at(depth: i32, method: usize, index: i64) -> Here {
        Here { depth, method, index }
    }

    fn judge(size: StepSize, depth: StepDepth, origin: &Origin, here: Here, enterable: bool) -> Verdict {
        judge_step(size, depth, origin, &here, || enterable)
    }

    use StepDepth::{Into, Out, Over};
    use StepSize::{Line, Min};
    use Verdict::{AwaitReturn, Complete, KeepStepping};

    #[test]
    fn line_lookup_takes_the_last_entry_at_or_before_the_index() {
        let lines = Lines::new(vec![(9, 12), (2, 10), (4, 11)]);
        assert_eq!(lines.line_at(0), Some(10), "code before the first entry is on the first line");
        assert_eq!(lines.line_at(3), Some(10));
        assert_eq!(lines.line_at(4), Some(11));
        assert_eq!(lines.line_at(100), Some(12));
        assert_eq!(lines.line_at(-1), None, "native code has no line");
        assert_eq!(Lines::default().line_at(5), None);
    }

    #[test]
    fn line_step_over_keeps_going_on_its_line_and_stops_on_the_next() {
        let o = origin(4, 3);
        assert_eq!(o.line, Some(11));
        assert_eq!(judge(Line, Over, &o, at(3, 1, 5), false), KeepStepping);
        assert_eq!(judge(Line, Over, &o, at(3, 1, 9), false), Complete);
        // Back to an earlier line (a loop) is a change too.
        assert_eq!(judge(Line, Over, &o, at(3, 1, 20), false), Complete);
    }

    #[test]
    fn step_over_waits_out_calls_and_completes_in_the_caller() {
        let o = origin(4, 3);
        assert_eq!(judge(Line, Over, &o, at(4, 2, 0), true), AwaitReturn, "a callee, even one it could enter");
        assert_eq!(judge(Min, Over, &o, at(4, 2, 0), true), AwaitReturn);
        assert_eq!(judge(Line, Over, &o, at(2, 7, 15), false), Complete, "returned to the caller mid-line");
    }

    #[test]
    fn step_into_stops_in_callees_it_may_enter_and_skips_the_others() {
        let o = origin(4, 3);
        assert_eq!(judge(Line, Into, &o, at(4, 2, 0), true), Complete);
        assert_eq!(judge(Line, Into, &o, at(4, 2, 0), false), AwaitReturn, "filtered or without lines");
        assert_eq!(judge(Line, Into, &o, at(3, 1, 5), false), KeepStepping);
        // A min step into stops at the next bytecode wherever it is, filtered or not.
        assert_eq!(judge(Min, Into, &o, at(6, 9, 3), false), Complete);
        // The method filter is only asked about callees.
        let asked = std::cell::Cell::new(false);
        judge_step(Line, Into, &o, &at(3, 1, 9), || {
            asked.set(true);
            true
        });
        assert!(!asked.get());
    }

    #[test]
    fn min_step_completes_at_the_next_bytecode_of_its_frame() {
        let o = origin(0, 3);
        assert_eq!(judge(Min, Over, &o, at(3, 1, 1), false), Complete);
    }

    #[test]
    fn step_out_completes_only_in_a_caller() {
        let o = origin(4, 3);
        assert_eq!(judge(Line, Out, &o, at(4, 2, 0), true), AwaitReturn);
        assert_eq!(judge(Line, Out, &o, at(3, 1, 9), true), AwaitReturn, "its own frame: wait for the pop");
        assert_eq!(judge(Line, Out, &o, at(2, 5, 7), false), Complete);
        assert_eq!(judge(Min, Out, &o, at(2, 5, 7), false), Complete);
        // Same depth in another method: the origin frame (native) already returned.
        assert_eq!(judge(Line, Out, &o, at(3, 8, 0), false), Complete);
    }

    #[test]
    fn a_continued_step_out_ends_at_the_next_place_in_its_frame_or_in_a_caller() {
        // A step out without a count completed at line 11 (after a call); the next one begins
        // there, single-stepping, as with the JDK's agent (nsk/jdi crstepreq009).
        let mut o = origin(4, 3);
        o.continued = true;
        assert_eq!(judge(Min, Out, &o, at(3, 1, 5), false), Complete, "min: the next bytecode of its frame");
        let mut line = origin(4, 3);
        line.continued = true;
        assert_eq!(judge(Line, Out, &line, at(3, 1, 5), false), KeepStepping, "line: still on line 11");
        assert_eq!(judge(Line, Out, &line, at(3, 1, 9), false), Complete, "line: line 12");
        assert_eq!(judge(Min, Out, &o, at(4, 2, 0), true), AwaitReturn, "a callee is waited out");
        assert_eq!(judge(Min, Out, &o, at(2, 5, 7), false), Complete, "a caller");
    }

    #[test]
    fn a_step_out_single_steps_again_only_once_its_watched_origin_frame_pops() {
        let mut o = origin(4, 3);
        o.pop_watched = true;
        assert!(frame_pop_resumes(Out, &o, 2), "the origin frame went");
        assert!(!frame_pop_resumes(Out, &o, 3), "a callee returned into the origin frame: wait on");
        assert!(frame_pop_resumes(Over, &o, 3), "a step over steps its frame again");
        assert!(frame_pop_resumes(Into, &o, 4));
        // A native origin frame cannot be watched: nothing else would say when it returns.
        o.pop_watched = false;
        assert!(frame_pop_resumes(Out, &o, 3), "back in an unwatched origin frame: single-step on");
    }

    #[test]
    fn an_exited_origin_frame_completes_at_the_next_step() {
        let mut o = origin(4, 3);
        o.exited = true;
        assert_eq!(judge(Line, Over, &o, at(3, 1, 5), false), Complete);
    }

    #[test]
    fn steps_without_lines_or_from_native_code_complete_at_the_first_move() {
        // A method without line numbers: any single step in its frame ends a line step.
        let no_lines = Origin { depth: 2, method: 4, ..Origin::default() };
        assert_eq!(judge(Line, Over, &no_lines, at(2, 4, 7), false), Complete);
        // From a thread with no Java frame yet (depth 0): the first Java location is deeper.
        let from_native = Origin::default();
        assert_eq!(judge(Line, Into, &from_native, at(1, 3, 0), true), Complete);
        assert_eq!(judge(Line, Over, &from_native, at(1, 3, 0), true), AwaitReturn);
        // Same depth, another method: the line is that of a different method, so it changed.
        let o = origin(4, 3);
        assert_eq!(judge(Line, Over, &o, at(3, 2, 4), false), Complete);
    }

    #[test]
    fn method_entries_stop_a_waiting_step_into_only_where_it_may_stop() {
        assert!(entry_stops(Line, false, || true));
        assert!(!entry_stops(Line, false, || false), "no line numbers (or native)");
        assert!(!entry_stops(Line, true, || true), "class filtered out");
        assert!(entry_stops(Min, false, || unreachable!("a min step needs no lines")));
    }

    #[test]
    fn a_catch_in_or_below_the_origin_frame_resumes_a_waiting_step() {
        let waiting = Phase::AwaitingReturn { watch_entries: false };
        assert!(catch_resumes(Over, 3, waiting, 3), "caught in the origin frame");
        assert!(catch_resumes(Over, 3, waiting, 2), "caught in a caller");
        assert!(!catch_resumes(Over, 3, waiting, 4), "caught in the callee it waits for");
        assert!(catch_resumes(Into, 3, Phase::AwaitingReturn { watch_entries: true }, 3));
        assert!(!catch_resumes(Out, 3, waiting, 3), "a step out waits for the origin frame to go");
        assert!(catch_resumes(Out, 3, waiting, 2));
        assert!(!catch_resumes(Over, 3, Phase::Stepping, 3), "already stepping");
    }

    #[test]
    fn a_return_breakpoint_goes_after_the_calling_instruction() {
        // iload_0, invokestatic #2, istore_1, aload_0, invokeinterface #3 1 0, new #4, return
        let code = [0x1a, 0xb8, 0, 2, 0x3c, 0x2a, 0xb9, 0, 3, 1, 0, 0xbb, 0, 4, 0xb1];
        assert_eq!(after_call(&code, 1), Some(4), "invokestatic: three bytes");
        assert_eq!(after_call(&code, 6), Some(11), "invokeinterface: five bytes");
        assert_eq!(after_call(&code, 11), Some(14), "new (a class initializer may run)");
        assert_eq!(after_call(&code, 0), None, "not a calling instruction: a frame pop it is");
        assert_eq!(after_call(&code, 4), None);
        assert_eq!(after_call(&code, -1), None, "native");
        assert_eq!(after_call(&code, 99), None);
        // getstatic and invokedynamic; a call that is the last instruction has no return point.
        assert_eq!(after_call(&[0xb2, 0, 1, 0xb1], 0), Some(3));
        assert_eq!(after_call(&[0xba, 0, 1, 0, 0, 0xb0], 0), Some(5));
        assert_eq!(after_call(&[0xb6, 0, 1], 0), None);
    }

    #[test]
    fn a_step_over_waits_for_its_origin_frame() {
        // Begun 3 deep, now 4 deep in a callee: the origin is frame 1 from the top.
        assert_eq!(origin_frame(3, 4), Some(1));
        // Through a native frame: the callee's Java code is 5 deep.
        assert_eq!(origin_frame(3, 5), Some(2));
        assert_eq!(origin_frame(3, 3), None, "not in a callee");
        assert_eq!(origin_frame(0, 1), None, "begun with no Java frame: nothing to come back to");
    }

    #[test]
    fn phases_ask_for_just_the_events_they_need() {
        assert_eq!(Needs::of(None), Needs::default());
        assert_eq!(
            Needs::of(Some(Phase::Stepping)),
            Needs { single_step: true, frame_pop: true, exception_catch: true, method_entry: false }
        );
        assert_eq!(
            Needs::of(Some(Phase::AwaitingReturn { watch_entries: true })),
            Needs { single_step: false, frame_pop: true, exception_catch: true, method_entry: true }
        );
        assert_eq!(starting_phase(Out, true), Phase::AwaitingReturn { watch_entries: false });
        assert_eq!(starting_phase(Out, false), Phase::Stepping, "an unwatchable origin frame is single-stepped");
        assert_eq!(starting_phase(Over, true), Phase::Stepping);
    }
}
