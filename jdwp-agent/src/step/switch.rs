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
//! came after it; it is never taken under [`crate::step`]'s lock.

use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use crate::agent::{Agent, GlobalRef, lock};
use crate::jni::Jni;
use crate::jvmti::sys;

/// How long the switch stays on after the last thread stopped single-stepping: longer than a
/// debugger takes from one step's end to the next one's beginning when it steps in a loop (a
/// fraction of a millisecond), short enough that what it costs the program stays small.
pub const LINGER: Duration = Duration::from_millis(50);

/// The decisions, apart from JVMTI.
#[derive(Debug, Default)]
struct Switch {
    /// The keeper has single-stepping enabled.
    held: bool,
    /// Bumped whenever a thread is about to single-step, so that a release decided before knows
    /// it is stale.
    generation: u64,
    /// A timed release is queued on the event helper (one at a time).
    release_queued: bool,
}

/// What a queued release finds when it is due.
#[derive(Debug, PartialEq, Eq)]
enum Due {
    /// Let go of the switch now.
    Release,
    /// A thread single-stepped since it was queued: queue it again for this generation.
    Again(u64),
    /// Nothing to do (not held, or a thread single-steps now and will queue a release when it stops).
    Nothing,
}

impl Switch {
    /// A thread is about to single-step: whether the keeper must switch single-stepping on first.
    fn stepping_starts(&mut self) -> bool {
        self.generation += 1;
        !self.held
    }

    /// A thread stopped single-stepping; `anyone_steps` says whether any still does (asked only
    /// while held with no release queued): the generation a release to queue must find, if one
    /// is to be queued.
    fn stepping_stopped(&mut self, anyone_steps: impl FnOnce() -> bool) -> Option<u64> {
        if !self.held || self.release_queued || anyone_steps() {
            return None;
        }
        self.release_queued = true;
        Some(self.generation)
    }

    /// The release queued at `generation` is due.
    fn due(&mut self, generation: u64, anyone_steps: bool) -> Due {
        self.release_queued = false;
        if !self.held || anyone_steps {
            Due::Nothing
        } else if generation == self.generation {
            Due::Release
        } else {
            self.release_queued = true;
            Due::Again(self.generation)
        }
    }

    /// The debugger is about to let threads run; `any_step` says whether a thread has a step:
    /// whether to let go now.
    fn threads_resuming(&self, any_step: bool) -> bool {
        self.held && !any_step
    }
}

static SWITCH: Mutex<Switch> = Mutex::new(Switch { held: false, generation: 0, release_queued: false });
static KEEPER: OnceLock<GlobalRef> = OnceLock::new();

/// Makes the current thread (the event helper, at its start) the keeper.
pub fn keeper_is_current_thread(agent: &Agent, jni: Jni) {
    let thread = agent.jvmti.get_current_thread().ok().and_then(|t| jni.new_global_ref(t).ok());
    match thread {
        Some(thread) => {
            let _ = KEEPER.set(GlobalRef(thread));
        }
        // Without a keeper each step switches single-stepping on and off by itself.
        None => tracing::debug!("no single-step keeper"),
    }
}

/// Call before enabling single-stepping for a thread.
pub fn stepping_starts(agent: &Agent) {
    let Some(keeper) = KEEPER.get() else { return };
    let mut switch = lock(&SWITCH);
    if switch.stepping_starts() {
        match agent.jvmti.set_event_notification_mode(true, sys::JVMTI_EVENT_SINGLE_STEP, keeper.0) {
            Ok(()) => switch.held = true,
            Err(e) => tracing::debug!(%e, "the single-step keeper could not switch single-stepping on"),
        }
    }
}

/// Call after a thread stopped single-stepping.
pub fn stepping_stopped(agent: &Agent) {
    let queued = lock(&SWITCH).stepping_stopped(crate::step::anyone_single_steps);
    if let Some(generation) = queued {
        queue_release(agent, generation, Instant::now() + LINGER);
    }
}

/// Call before the debugger lets threads run (a resume command, or a debugger leaving): with no
/// step left, the switch goes off now, while the threads are still stopped (a cheap safepoint),
/// rather than after they ran for [`LINGER`] with it on.
pub fn threads_resuming(agent: &Agent) {
    let mut switch = lock(&SWITCH);
    if switch.threads_resuming(crate::step::any_active()) {
        release(agent, &mut switch);
    }
}

fn queue_release(agent: &Agent, generation: u64, at: Instant) {
    let queued = agent.helper.get().is_some_and(|helper| {
        helper.spawn_task_at(at, move |agent, _| {
            let mut switch = lock(&SWITCH);
            match switch.due(generation, crate::step::anyone_single_steps()) {
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
        lock(&SWITCH).release_queued = false;
    }
}

/// Switches the keeper's single-stepping off. With `switch` locked.
fn release(agent: &Agent, switch: &mut Switch) {
    let Some(keeper) = KEEPER.get() else { return };
    match agent.jvmti.set_event_notification_mode(false, sys::JVMTI_EVENT_SINGLE_STEP, keeper.0) {
        Ok(()) => switch.held = false,
        Err(e) => tracing::warn!(%e, "the single-step keeper could not switch single-stepping off"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn held() -> Switch {
        let mut s = Switch::default();
        assert!(s.stepping_starts(), "the first step switches the keeper on");
        s.held = true;
        s
    }

    #[test]
    fn steps_in_a_row_switch_the_keeper_on_once() {
        let mut s = held();
        let g = s.stepping_stopped(|| false).expect("a release is queued when the last thread stops");
        assert!(!s.stepping_starts(), "the next step finds the switch on");
        assert_eq!(s.stepping_stopped(|| false), None, "one queued release at a time");
        // The release queued before that step finds it stale and queues itself again.
        let again = s.due(g, false);
        assert_eq!(again, Due::Again(s.generation));
        let Due::Again(g2) = again else { unreachable!() };
        assert_eq!(s.due(g2, false), Due::Release);
    }

    #[test]
    fn a_release_waits_while_a_thread_single_steps() {
        let mut s = held();
        let g = s.stepping_stopped(|| false).unwrap();
        s.stepping_starts();
        assert_eq!(s.due(g, true), Due::Nothing, "the stepping thread queues a release when it stops");
        assert_eq!(s.stepping_stopped(|| true), None, "not while another thread single-steps");
        assert_eq!(s.stepping_stopped(|| false), Some(s.generation));
    }

    #[test]
    fn nothing_is_released_that_is_not_held() {
        let mut s = Switch::default();
        assert_eq!(s.stepping_stopped(|| false), None);
        assert_eq!(s.due(0, false), Due::Nothing);
        assert!(!s.threads_resuming(false));
    }

    #[test]
    fn resuming_with_no_step_left_lets_go_at_once() {
        let s = held();
        assert!(s.threads_resuming(false));
        assert!(!s.threads_resuming(true), "a step still under way keeps it");
    }
}
