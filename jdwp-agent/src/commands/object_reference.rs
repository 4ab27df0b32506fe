//! `ObjectReference` (command set 9) and `StringReference` (10).

use jdwp_protocol::ErrorCode;
use jdwp_protocol::commands::object_reference::*;
use jdwp_protocol::commands::string_reference::{ValueCmd, ValueReply};

use crate::agent::Agent;
use crate::dispatch::Entry;
use jdwp_protocol::commands as c;

pub fn reference_type(agent: &Agent, cmd: ReferenceType) -> Result<ReferenceTypeReply, ErrorCode> {
    let jni = agent.jni()?;
    let obj = agent.non_null_object(jni, cmd.object)?;
    let class = jni.get_object_class(obj)?;
    Ok(ReferenceTypeReply { ref_type_tag: super::type_tag(agent, class)?, type_id: agent.class_id(jni, class)? })
}

pub fn get_values(agent: &Agent, cmd: GetValues) -> Result<GetValuesReply, ErrorCode> {
    let jni = agent.jni()?;
    let obj = agent.non_null_object(jni, cmd.object)?;
    let mut values = Vec::with_capacity(cmd.fields.len());
    for f in cmd.fields {
        values.push(crate::values::read_field(agent, jni, obj, &agent.field(f)?)?);
    }
    Ok(GetValuesReply { values })
}

pub fn disable_collection(agent: &Agent, cmd: DisableCollection) -> Result<DisableCollectionReply, ErrorCode> {
    agent.pin(agent.jni()?, cmd.object)?;
    Ok(DisableCollectionReply {})
}

pub fn enable_collection(agent: &Agent, cmd: EnableCollection) -> Result<EnableCollectionReply, ErrorCode> {
    agent.unpin(agent.jni()?, cmd.object)?;
    Ok(EnableCollectionReply {})
}

pub fn is_collected(agent: &Agent, cmd: IsCollected) -> Result<IsCollectedReply, ErrorCode> {
    Ok(IsCollectedReply { is_collected: agent.is_collected(agent.jni()?, cmd.object)? })
}

pub fn string_value(agent: &Agent, cmd: ValueCmd) -> Result<ValueReply, ErrorCode> {
    let jni = agent.jni()?;
    let obj = agent.non_null_object(jni, cmd.string_object)?;
    if !jni.is_instance_of(obj, agent.known()?.string.0) {
        return Err(ErrorCode::INVALID_STRING);
    }
    let units = jni.get_string_utf16(obj)?;
    Ok(ValueReply { string_value: String::from_utf16_lossy(&units) })
}

/// This module's commands.
pub(super) static TABLE: &[Entry<Agent>] = crate::dispatch_table!(Agent;
    c::object_reference::ReferenceType => reference_type,
    c::object_reference::GetValues => get_values,
    c::object_reference::DisableCollection => disable_collection,
    c::object_reference::EnableCollection => enable_collection,
    c::object_reference::IsCollected => is_collected,
    c::string_reference::ValueCmd => string_value,
);
