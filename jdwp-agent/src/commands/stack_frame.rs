//! `StackFrame` (command set 16).

use jdwp_protocol::commands::stack_frame::*;
use jdwp_protocol::{ErrorCode, Tag, TaggedObjectId, Value};

use crate::agent::Agent;
use crate::dispatch::Entry;
use crate::jvmti::Jvmti;
use crate::jvmti::sys::jthread;
use jdwp_protocol::commands as c;

/// The thread and depth of a frame, checked to still be valid.
fn frame(
    agent: &Agent,
    thread: jdwp_protocol::ThreadId,
    frame: jdwp_protocol::FrameId,
) -> Result<(crate::jni::Jni, crate::jvmti::sys::jthread, i32), ErrorCode> {
    let jni = agent.jni()?;
    let t = agent.thread(jni, thread)?;
    if crate::commands::thread_reference::suspend_count_of(agent, jni, thread, t) == 0 {
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

/// Pops the frames from the top down to and including `frame` ([`crate::frame_pop`]).
pub fn pop_frames(agent: &Agent, cmd: PopFrames) -> Result<PopFramesReply, ErrorCode> {
    let (_, t, depth) = frame(agent, cmd.thread, cmd.frame)?;
    if !agent.jvmti.get_capabilities()?.can_pop_frame() {
        return Err(ErrorCode::NOT_IMPLEMENTED);
    }
    let popped = crate::frame_pop::pop_frames(agent, t, cmd.thread, depth);
    // A step waiting for one of the popped frames to return restarts from where the thread is now
    // (JVMTI reports no frame pop for frames popped this way), popped or not.
    crate::step::frames_popped(agent, t);
    popped.map(|()| PopFramesReply {})
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
