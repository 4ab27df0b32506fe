//! `StackFrame` (command set 16).

use std::sync::{Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

use jdwp_protocol::commands::stack_frame::*;
use jdwp_protocol::{ErrorCode, Tag, TaggedObjectId, ThreadId, Value};
use jni_sys::{JNIEnv, jmethodID};

use crate::agent::{Agent, lock};
use crate::dispatch::Entry;
use crate::jvmti::Jvmti;
use crate::jvmti::sys::{self, jlocation, jthread, jvmtiEnv};
use jdwp_protocol::commands as c;

/// The thread and depth of a frame, checked to still be valid.
fn frame(
    agent: &Agent,
    thread: jdwp_protocol::ThreadId,
    frame: jdwp_protocol::FrameId,
) -> Result<(crate::jni::Jni, crate::jvmti::sys::jthread, i32), ErrorCode> {
    let jni = agent.jni()?;
    let t = agent.thread(jni, thread)?;
    if agent.threads.lock().suspend_count(thread) == 0 {
        return Err(ErrorCode::THREAD_NOT_SUSPENDED);
    }
    let depth = agent.frame_depth(thread, frame)?;
    if depth >= agent.jvmti.get_frame_count(t)? {
        return Err(ErrorCode::INVALID_FRAMEID);
    }
    Ok((jni, t, depth))
}

/// Whether a local of `width` slots (2 for long and double) at `slot` lies within the frame's
/// `max_locals`. HotSpot's own check overflows at the top of the `jint` range (a double at slot
/// `0x7fffffff` crashes JDK 17's `VM_GetOrSetLocal`), so the agent checks first, without overflow.
fn slot_in_frame(slot: i32, width: i32, max_locals: i32) -> bool {
    slot >= 0 && i64::from(slot) + i64::from(width) <= i64::from(max_locals)
}

/// The frame's method's `max_locals`, or `None` where JVMTI has none (a native frame, which
/// JVMTI itself refuses with `OPAQUE_FRAME`).
fn max_locals(jvmti: Jvmti, t: jthread, depth: i32) -> Option<i32> {
    let (method, _) = jvmti.get_frame_location(t, depth).ok()?;
    jvmti.get_max_locals(method).ok()
}

/// Refuses a slot outside the frame before JVMTI sees it.
fn check_slot(max_locals: Option<i32>, slot: i32, width: i32) -> Result<(), ErrorCode> {
    match max_locals {
        Some(max) if !slot_in_frame(slot, width, max) => Err(ErrorCode::INVALID_SLOT),
        _ => Ok(()),
    }
}

pub fn get_values(agent: &Agent, cmd: GetValues) -> Result<GetValuesReply, ErrorCode> {
    let (jni, t, depth) = frame(agent, cmd.thread, cmd.frame)?;
    let jvmti = agent.jvmti;
    let max = max_locals(jvmti, t, depth);
    let mut values = Vec::with_capacity(cmd.slots.len());
    for s in cmd.slots {
        check_slot(max, s.slot, if matches!(s.sig_byte, Tag::Long | Tag::Double) { 2 } else { 1 })?;
        let v = match s.sig_byte {
            Tag::Boolean => Value::Boolean(jvmti.get_local_int(t, depth, s.slot)? != 0),
            Tag::Byte => Value::Byte(jvmti.get_local_int(t, depth, s.slot)? as i8),
            Tag::Char => Value::Char(jvmti.get_local_int(t, depth, s.slot)? as u16),
            Tag::Short => Value::Short(jvmti.get_local_int(t, depth, s.slot)? as i16),
            Tag::Int => Value::Int(jvmti.get_local_int(t, depth, s.slot)?),
            Tag::Long => Value::Long(jvmti.get_local_long(t, depth, s.slot)?),
            Tag::Float => Value::Float(jvmti.get_local_float(t, depth, s.slot)?),
            Tag::Double => Value::Double(jvmti.get_local_double(t, depth, s.slot)?),
            Tag::Void => return Err(ErrorCode::INVALID_TAG),
            _ => {
                // One local reference at a time, however many slots the command names.
                let obj = jvmti.get_local_object(t, depth, s.slot)?;
                let value = crate::values::object_value(agent, jni, obj);
                if !obj.is_null() {
                    jni.delete_local_ref(obj);
                }
                value?
            }
        };
        values.push(v);
    }
    Ok(GetValuesReply { values })
}

pub fn this_object(agent: &Agent, cmd: ThisObject) -> Result<ThisObjectReply, ErrorCode> {
    let (jni, t, depth) = frame(agent, cmd.thread, cmd.frame)?;
    let (method, _) = agent.jvmti.get_frame_location(t, depth)?;
    let modifiers = agent.jvmti.get_method_modifiers(method)?;
    if modifiers & (jdwp_protocol::modifiers::STATIC | jdwp_protocol::modifiers::NATIVE) != 0 {
        return Ok(ThisObjectReply {
            object_this: TaggedObjectId { tag: Tag::Object, id: jdwp_protocol::ObjectId::NULL },
        });
    }
    let this = agent.jvmti.get_local_instance(t, depth)?;
    Ok(ThisObjectReply { object_this: agent.tagged_object(jni, this)? })
}

/// Writes locals. JVMTI checks each value against the slot's declared type where the method has
/// a variable table (`TYPE_MISMATCH`), and the slot against the frame (`INVALID_SLOT`).
pub fn set_values(agent: &Agent, cmd: SetValues) -> Result<SetValuesReply, ErrorCode> {
    let (jni, t, depth) = frame(agent, cmd.thread, cmd.frame)?;
    let jvmti = agent.jvmti;
    let max = max_locals(jvmti, t, depth);
    for SlotValue { slot, slot_value } in cmd.slot_values {
        check_slot(max, slot, if matches!(slot_value, Value::Long(_) | Value::Double(_)) { 2 } else { 1 })?;
        match slot_value {
            Value::Boolean(z) => jvmti.set_local_int(t, depth, slot, i32::from(z))?,
            Value::Byte(b) => jvmti.set_local_int(t, depth, slot, i32::from(b))?,
            Value::Char(ch) => jvmti.set_local_int(t, depth, slot, i32::from(ch))?,
            Value::Short(sh) => jvmti.set_local_int(t, depth, slot, i32::from(sh))?,
            Value::Int(i) => jvmti.set_local_int(t, depth, slot, i)?,
            Value::Long(j) => jvmti.set_local_long(t, depth, slot, j)?,
            Value::Float(f) => jvmti.set_local_float(t, depth, slot, f)?,
            Value::Double(d) => jvmti.set_local_double(t, depth, slot, d)?,
            Value::Void => return Err(ErrorCode::INVALID_TAG),
            Value::Object(_, id) => {
                let obj = agent.object(jni, id)?;
                let set = jvmti.set_local_object(t, depth, slot, obj);
                if !obj.is_null() {
                    jni.delete_local_ref(obj);
                }
                set?;
            }
        }
    }
    Ok(SetValuesReply {})
}

/// Pops the frames from the top down to and including `frame`.
///
/// JVMTI's `PopFrame` only marks the top frame: the thread pops it when it runs again. So, one
/// frame at a time, the thread is resumed until it stops again right after the pop, at its first
/// bytecode back in the caller (a single-step event), and suspended there. The debugger sees the
/// thread suspended throughout, with the frames gone.
pub fn pop_frames(agent: &Agent, cmd: PopFrames) -> Result<PopFramesReply, ErrorCode> {
    let (_, t, depth) = frame(agent, cmd.thread, cmd.frame)?;
    if !agent.jvmti.get_capabilities()?.can_pop_frame() {
        return Err(ErrorCode::NOT_IMPLEMENTED);
    }
    let popper = Popper::get(agent)?;
    let mut result = Ok(());
    for _ in 0..=depth {
        result = popper.pop_one(agent, t, cmd.thread);
        if result.is_err() {
            break;
        }
    }
    // The thread ran: its frames are stale, popped or not.
    agent.threads_resumed(&[cmd.thread]);
    // A step waiting for one of the popped frames to return restarts from where the thread is now
    // (JVMTI reports no frame pop for frames popped this way).
    crate::step::frames_popped(agent, t);
    result.map(|()| PopFramesReply {})
}

/// How long a popping thread may take to reach its caller, and a popped thread to be suspended.
const POP_TIMEOUT: Duration = Duration::from_secs(20);

/// A JVMTI environment of the agent's own, for completing frame pops: its only event is single
/// step, enabled for one thread while it runs to the end of a pop. Being separate, it neither sees
/// nor disturbs the debugger's step requests.
struct Popper {
    jvmti: Jvmti,
    state: Mutex<PopState>,
    changed: Condvar,
}

#[derive(Default)]
struct PopState {
    /// The ID (agent tag) of the thread being popped.
    target: Option<u64>,
    /// Counts pops; the step callback waits for the end of its own.
    started: u64,
    /// The last pop after which the thread was suspended: its callback may return to the VM (and
    /// stop there).
    finished: u64,
    /// The thread reached its caller in the current pop.
    arrived: bool,
}

static POPPER: OnceLock<Popper> = OnceLock::new();

/// The thread whose frame pop is completing, if any. It runs briefly, unknown to the debugger, to
/// its first bytecode back in the caller: events it causes meanwhile (a step there) are the
/// agent's doing, not the program's, and event handling may want to leave them out.
pub fn popping_thread() -> Option<ThreadId> {
    POPPER.get().and_then(|p| lock(&p.state).target).map(ThreadId)
}

/// Whether frames can be popped: the agent has `can_pop_frame` and can set up its step environment.
pub fn can_pop_frames(agent: &Agent) -> bool {
    agent.jvmti.get_capabilities().is_ok_and(|c| c.can_pop_frame()) && Popper::get(agent).is_ok()
}

impl Popper {
    fn get(agent: &Agent) -> Result<&'static Popper, ErrorCode> {
        if let Some(popper) = POPPER.get() {
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
        let popper = POPPER.get_or_init(|| Popper { jvmti, state: Mutex::default(), changed: Condvar::new() });
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
        let (Some(popper), Some(agent)) = (POPPER.get(), crate::agent::agent()) else { return };
        let Some(target) = lock(&popper.state).target else { return };
        // Compared by tag (the thread's ID) outside the lock: no VM call while holding it.
        if agent.jvmti.get_tag(thread).ok() != Some(target as i64) {
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

/// This module's commands.
pub(super) static TABLE: &[Entry<Agent>] = crate::dispatch_table!(Agent;
    c::stack_frame::GetValues => get_values,
    c::stack_frame::SetValues => set_values,
    c::stack_frame::ThisObject => this_object,
    c::stack_frame::PopFrames => pop_frames,
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_must_lie_within_the_frame_without_overflow() {
        assert!(slot_in_frame(0, 1, 1));
        assert!(slot_in_frame(2, 2, 4));
        assert!(!slot_in_frame(3, 2, 4), "a double's second slot past the frame");
        assert!(!slot_in_frame(-1, 1, 4));
        assert!(!slot_in_frame(i32::MAX, 2, i32::MAX), "no overflow at the top of the range");
        assert!(!slot_in_frame(i32::MAX, 1, 4));
        assert_eq!(check_slot(None, i32::MAX, 2), Ok(()), "native frames: JVMTI answers");
        assert_eq!(check_slot(Some(4), 4, 1), Err(ErrorCode::INVALID_SLOT));
    }
}
