//! `ClassObjectReference` (command set 17).

use jdwp_protocol::ErrorCode;
use jdwp_protocol::commands::class_object_reference::*;

use crate::agent::Agent;
use crate::dispatch::Entry;
use jdwp_protocol::commands as c;

/// The type a `java.lang.Class` object reflects: the same ID, as reference type IDs are the IDs
/// of class objects. Primitive classes (`int.class`) are reflected as classes, as by the JDK's
/// agent.
pub fn reflected_type(agent: &Agent, cmd: ReflectedType) -> Result<ReflectedTypeReply, ErrorCode> {
    let jni = agent.jni()?;
    let class = agent.class_object(jni, cmd.class_object)?;
    let (ref_type_tag, type_id) = agent.tagged_type(jni, class)?;
    Ok(ReflectedTypeReply { ref_type_tag, type_id })
}

/// This module's commands.
pub(super) static TABLE: &[Entry<Agent>] = crate::dispatch_table!(Agent;
    c::class_object_reference::ReflectedType => reflected_type,
);
