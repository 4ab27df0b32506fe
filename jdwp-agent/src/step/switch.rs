//! HotSpot's VM-wide single-stepping switch, kept on between steps that follow each other closely.
//!
//! HotSpot runs a VM operation at a safepoint (`ChangeSingleStep`) whenever the first thread starts
//! single-stepping and whenever the last one stops: it switches its interpreter's dispatch table.
//! A debugger that steps line after line with one-shot step requests, as JDI clients do, would
//! stop the whole VM twice per step for that (and a step over a call four times: the thread stops
//! single-stepping while the callee runs). So while some thread single-steps, and for [`LINGER`]
//! after the last one stopped, the agent keeps single-stepping enabled for a thread of its own,
//! the *keeper* (the event helper thread, which runs no Java code), so the switch stays on.
//!
//! The price while the switch is on is HotSpot's: the interpreted code of every thread goes
//! through the dispatch table's safepoint entry (the same as while any thread steps, with either
//! agent), compiled code is not affected. That is why the keeper holds it no longer than
//! [`LINGER`] after the last single step, and lets go before the debugger lets threads run with no
//! step left: an idle debugger costs nothing. A step over a cold, interpreted callee pays
//! at most [`LINGER`] of that before the switch goes off.
//!
//! Threads: the switch is taken by whichever thread is about to enable single-stepping (the
//! session thread beginning a step, or a stepping thread from its callbacks), before it does, and
//! let go by the event helper (after [`LINGER`]) or by the session thread (before a resume). Its
//! lock is held across the JVMTI call that flips the keeper, so a release cannot undo a hold that
//! came after it; it is never taken under [`crate::step`]'s lock. The switch and the keeper are
//! [`crate::agent::engine::EngineState`]'s; the decisions are [`super::switch_state`]'s.

use std::time::{Duration, Instant};

use super::switch_state::{Due, Switch};
use crate::agent::{Agent, GlobalRef, lock};
use crate::jni::Jni;
use crate::jvmti::sys;

/// How long the switch stays on after the last thread stopped single-stepping: longer than a
/// debugger takes from one step's end to the next one's beginning when it steps in a loop (a
/// fraction of a millisecond), short enough that what it costs the program stays small.
pub const LINGER: Duration = Duration::from_millis(50);

/// Makes the current thread (the event helper, at its start) the keeper.
pub fn keeper_is_current_thread(agent: &Agent, jni: Jni) {
    let thread = agent.jvmti.get_current_thread().ok().and_then(|t| jni.new_global_ref(t).ok());
    match thread {
        Some(thread) => {
            let _ = agent.engine.step_keeper.set(GlobalRef(thread));
        }
        // Without a keeper each step switches single-stepping on and off by itself.
        None => tracing::debug!("no single-step keeper"),
    }
}

/// Call before enabling single-stepping for a thread.
pub fn stepping_starts(agent: &Agent) {
    let Some(keeper) = agent.engine.step_keeper.get() else { return };
    let mut switch = lock(&agent.engine.step_switch);
    if switch.stepping_starts() {
        match agent.jvmti.set_event_notification_mode(true, sys::JVMTI_EVENT_SINGLE_STEP, keeper.0) {
            Ok(()) => switch.held = true,
            Err(e) => tracing::debug!(%e, "the single-step keeper could not switch single-stepping on"),
        }
    }
}

/// Call after a thread stopped single-stepping.
pub fn stepping_stopped(agent: &Agent) {
    let queued = lock(&agent.engine.step_switch).stepping_stopped(|| crate::step::anyone_single_steps(agent));
    if let Some(generation) = queued {
        queue_release(agent, generation, Instant::now() + LINGER);
    }
}

/// Call before the debugger lets threads run (a resume command, or a debugger leaving): with no
/// step left, the switch goes off now, while the threads are still stopped (a cheap safepoint),
/// rather than after they ran for [`LINGER`] with it on.
pub fn threads_resuming(agent: &Agent) {
    let mut switch = lock(&agent.engine.step_switch);
    if switch.threads_resuming(crate::step::any_active()) {
        release(agent, &mut switch);
    }
}

fn queue_release(agent: &Agent, generation: u64, at: Instant) {
    let queued = agent.helper.get().is_some_and(|helper| {
        helper.spawn_task_at(at, move |agent, _| {
            let mut switch = lock(&agent.engine.step_switch);
            match switch.due(generation, crate::step::anyone_single_steps(agent)) {
                Due::Release => release(agent, &mut switch),
                Due::Again(generation) => {
                    drop(switch);
                    queue_release(agent, generation, Instant::now() + LINGER);
                }
                Due::Nothing => {}
            }
        })
    });
    if !queued {
        lock(&agent.engine.step_switch).release_queued = false;
    }
}

/// Switches the keeper's single-stepping off. With `switch` locked.
fn release(agent: &Agent, switch: &mut Switch) {
    let Some(keeper) = agent.engine.step_keeper.get() else { return };
    match agent.jvmti.set_event_notification_mode(false, sys::JVMTI_EVENT_SINGLE_STEP, keeper.0) {
        Ok(()) => switch.held = false,
        Err(e) => tracing::warn!(%e, "the single-step keeper could not switch single-stepping off"),
    }
}
