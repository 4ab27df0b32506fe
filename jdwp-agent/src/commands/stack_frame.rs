//! `StackFrame` (command set 16).

use jdwp_protocol::commands::stack_frame::*;
use jdwp_protocol::{ErrorCode, Tag, TaggedObjectId, Value};

use crate::agent::{Agent, lock};
use crate::dispatch::Entry;
use jdwp_protocol::commands as c;

/// The thread and depth of a frame, checked to still be valid.
fn frame(
    agent: &Agent,
    thread: jdwp_protocol::ThreadId,
    frame: jdwp_protocol::FrameId,
) -> Result<(crate::jni::Jni, crate::jvmti::sys::jthread, i32), ErrorCode> {
    let jni = agent.jni()?;
    let t = agent.thread(jni, thread)?;
    if lock(&agent.threads).suspend_count(thread) == 0 {
        return Err(ErrorCode::THREAD_NOT_SUSPENDED);
    }
    let depth = agent.frame_depth(thread, frame)?;
    if depth >= agent.jvmti.get_frame_count(t)? {
        return Err(ErrorCode::INVALID_FRAMEID);
    }
    Ok((jni, t, depth))
}

pub fn get_values(agent: &Agent, cmd: GetValues) -> Result<GetValuesReply, ErrorCode> {
    let (jni, t, depth) = frame(agent, cmd.thread, cmd.frame)?;
    let jvmti = agent.jvmti;
    let mut values = Vec::with_capacity(cmd.slots.len());
    for s in cmd.slots {
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
                let obj = jvmti.get_local_object(t, depth, s.slot)?;
                crate::values::object_value(agent, jni, obj)?
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

/// This module's commands.
pub(super) static TABLE: &[Entry<Agent>] = crate::dispatch_table!(Agent;
    c::stack_frame::GetValues => get_values,
    c::stack_frame::ThisObject => this_object,
);
