//! Popping frames (`StackFrame.PopFrames`). JVMTI's `PopFrame` only marks the top frame: the
//! thread pops it when it runs again. So, one frame at a time, the thread is resumed until it stops
//! again right after the pop, at its first bytecode back in the caller (a single-step event in a
//! JVMTI environment of the agent's own, [`Popper`]), and suspended there. The debugger sees the
//! thread suspended throughout, with the frames gone. Steps ask [`popping_thread`] to leave the
//! agent's own single steps out; the caller tells steps of the popped frames
//! ([`crate::step::frames_popped`]).

use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use jdwp_protocol::{ErrorCode, ThreadId};
use jni_sys::{JNIEnv, jmethodID};

use crate::agent::engine::Popper;
use crate::agent::{Agent, lock};
use crate::jvmti::sys::{self, jlocation, jthread, jvmtiEnv};

/// Pops the frames of the suspended thread `t` (whose ID is `id`) from the top down to and
/// including the one `depth` frames deep.
pub fn pop_frames(agent: &Agent, t: jthread, id: ThreadId, depth: i32) -> Result<(), ErrorCode> {
    let popper = Popper::get(agent)?;
    let mut result = Ok(());
    for _ in 0..=depth {
        result = popper.pop_one(agent, t, id);
        if result.is_err() {
            break;
        }
    }
    // The thread ran: its frames are stale, popped or not.
    agent.threads_resumed(&[id]);
    result
}

/// How long a popping thread may take to reach its caller, and a popped thread to be suspended.
const POP_TIMEOUT: Duration = Duration::from_secs(20);

/// The thread whose frame pop is completing, if any. It runs briefly, unknown to the debugger, to
/// its first bytecode back in the caller: events it causes meanwhile (a step there) are the
/// agent's doing, not the program's, and event handling may want to leave them out.
pub fn popping_thread(agent: &Agent) -> Option<ThreadId> {
    agent.engine.popper.get().and_then(|p| lock(&p.state).target).map(ThreadId)
}

/// Whether frames can be popped: the agent has `can_pop_frame` and can set up its step environment.
pub fn can_pop_frames(agent: &Agent) -> bool {
    agent.jvmti.get_capabilities().is_ok_and(|c| c.can_pop_frame()) && Popper::get(agent).is_ok()
}

impl Popper {
    fn get(agent: &Agent) -> Result<&Popper, ErrorCode> {
        if let Some(popper) = agent.engine.popper.get() {
            return Ok(popper);
        }
        let jvmti = agent.vm.get_jvmti(sys::JVMTI_VERSION_11)?;
        let mut caps = sys::jvmtiCapabilities::default();
        caps.set_can_generate_single_step_events(true);
        let callbacks = sys::jvmtiEventCallbacks { SingleStep: Some(on_pop_step), ..Default::default() };
        if let Err(e) = jvmti.add_capabilities(&caps).and_then(|()| jvmti.set_event_callbacks(&callbacks)) {
            tracing::warn!(error = %e, "no environment to complete frame pops in; PopFrames is not available");
            // SAFETY: the handle was not shared.
            let _ = unsafe { jvmti.dispose_environment() };
            return Err(ErrorCode::NOT_IMPLEMENTED);
        }
        // Only the session thread gets here, so no other environment is racing to be installed.
        let popper =
            agent.engine.popper.get_or_init(|| Popper { jvmti, state: Mutex::default(), changed: Condvar::new() });
        Ok(popper)
    }

    /// Pops the top frame of the suspended thread `t` and lets it run to the caller.
    fn pop_one(&self, agent: &Agent, t: jthread, id: ThreadId) -> Result<(), ErrorCode> {
        let pop = {
            let mut state = lock(&self.state);
            state.started += 1;
            state.target = Some(id.0);
            state.arrived = false;
            state.started
        };
        let result = self.run_pop(agent, t);
        let mut state = lock(&self.state);
        state.target = None;
        state.finished = pop;
        drop(state);
        self.changed.notify_all();
        result
    }

    fn run_pop(&self, agent: &Agent, t: jthread) -> Result<(), ErrorCode> {
        self.jvmti.set_event_notification_mode(true, sys::JVMTI_EVENT_SINGLE_STEP, t)?;
        let started = agent.jvmti.pop_frame(t).and_then(|()| agent.jvmti.resume_thread(t));
        if let Err(e) = started {
            let _ = self.jvmti.set_event_notification_mode(false, sys::JVMTI_EVENT_SINGLE_STEP, t);
            return Err(e.into());
        }
        let arrived = {
            let state = lock(&self.state);
            let (state, _) =
                self.changed.wait_timeout_while(state, POP_TIMEOUT, |s| !s.arrived).unwrap_or_else(|e| e.into_inner());
            state.arrived
        };
        let _ = self.jvmti.set_event_notification_mode(false, sys::JVMTI_EVENT_SINGLE_STEP, t);
        // The thread waits in the step callback (in native code): suspended now, it stops as soon
        // as it returns to the VM.
        match agent.jvmti.suspend_thread(t) {
            Ok(()) | Err(crate::jvmti::JvmtiError::THREAD_SUSPENDED) => {}
            Err(e) => return Err(e.into()),
        }
        if arrived {
            Ok(())
        } else {
            tracing::warn!("a thread popping a frame did not reach its caller in time; suspended it where it was");
            Err(ErrorCode::INTERNAL)
        }
    }
}

/// The single step that ends a pop: tell the session thread, and wait until it has suspended us.
unsafe extern "system" fn on_pop_step(
    _: *mut jvmtiEnv,
    _jni_env: *mut JNIEnv,
    thread: jthread,
    _method: jmethodID,
    _location: jlocation,
) {
    crate::guard((), || {
        let Some(agent) = crate::agent::agent() else { return };
        let Some(popper) = agent.engine.popper.get() else { return };
        let Some(target) = lock(&popper.state).target else { return };
        // Compared by ID outside the lock: no VM call while holding it.
        if agent.known_id(thread) != Some(target) {
            return;
        }
        let mut state = lock(&popper.state);
        if state.target != Some(target) {
            return;
        }
        state.arrived = true;
        let pop = state.started;
        popper.changed.notify_all();
        let deadline = Instant::now() + POP_TIMEOUT;
        while state.finished < pop {
            let Some(left) = deadline.checked_duration_since(Instant::now()) else { break };
            state = popper.changed.wait_timeout(state, left).unwrap_or_else(|e| e.into_inner()).0;
        }
    });
}
