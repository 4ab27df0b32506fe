//! `ArrayType` (command set 4).

use jdwp_protocol::commands::array_type::*;
use jdwp_protocol::{ErrorCode, Tag, TaggedObjectId};

use crate::agent::Agent;
use crate::dispatch::Entry;
use crate::jni::JniError;
use jdwp_protocol::commands as c;

/// A new array of the type, all zeroes or nulls.
pub fn new_instance(agent: &Agent, cmd: NewInstance) -> Result<NewInstanceReply, ErrorCode> {
    let jni = agent.jni()?;
    let class = agent.array_type(jni, cmd.arr_type)?;
    let (signature, _) = agent.jvmti.get_class_signature(class)?;
    let component = signature.strip_prefix('[').ok_or(ErrorCode::INVALID_ARRAY)?;
    if cmd.length < 0 {
        return Err(ErrorCode::ILLEGAL_ARGUMENT);
    }
    let len = cmd.length;
    let created = match component {
        "Z" => jni.new_primitive_array::<u8>(len),
        "B" => jni.new_primitive_array::<i8>(len),
        "C" => jni.new_primitive_array::<u16>(len),
        "S" => jni.new_primitive_array::<i16>(len),
        "I" => jni.new_primitive_array::<i32>(len),
        "J" => jni.new_primitive_array::<i64>(len),
        "F" => jni.new_primitive_array::<f32>(len),
        "D" => jni.new_primitive_array::<f64>(len),
        _ => {
            let element_class = crate::values::component_type(agent, jni, class)?;
            jni.new_object_array(len, element_class, std::ptr::null_mut())
        }
    };
    // The one way allocating fails for a valid length is running out of memory, as the JDK's agent
    // reports it.
    let array = created.map_err(|e| match e {
        JniError::Exception(_) | JniError::Failed(_) => ErrorCode::OUT_OF_MEMORY,
        other => other.to_jdwp(),
    })?;
    Ok(NewInstanceReply { new_array: TaggedObjectId { tag: Tag::Array, id: agent.object_id(jni, array)? } })
}

/// This module's commands.
pub(super) static TABLE: &[Entry<Agent>] = crate::dispatch_table!(Agent;
    c::array_type::NewInstance => new_instance,
);
