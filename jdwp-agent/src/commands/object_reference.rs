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
    let (ref_type_tag, type_id) = agent.tagged_type(jni, class)?;
    Ok(ReferenceTypeReply { ref_type_tag, type_id })
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

/// Writes fields of the object (static ones through their class, as the spec allows). Every value
/// is checked before any is written, so a refused command changes nothing. Final fields are
/// written like the others, as the JDK's agent does (refusing them is the debugger's choice).
pub fn set_values(agent: &Agent, cmd: SetValues) -> Result<SetValuesReply, ErrorCode> {
    let jni = agent.jni()?;
    let obj = agent.non_null_object(jni, cmd.object)?;
    let field = |fv: &FieldValue| {
        let field = agent.field(fv.field_id)?;
        // A member of the object's class or of one of its supertypes.
        if !jni.is_instance_of(obj, field.class.0) {
            return Err(ErrorCode::INVALID_FIELDID);
        }
        Ok(field)
    };
    super::check_then_write(
        jni,
        &cmd.values,
        |fv| {
            let f = field(fv)?;
            let value = crate::values::checked_jvalue(agent, jni, &f.signature, f.class.0, &fv.value)?;
            Ok((value, fv.value.tag().is_object()))
        },
        |fv, value| crate::values::write_field(jni, obj, &field(fv)?, value),
    )?;
    Ok(SetValuesReply {})
}

/// The owner, entry count and waiters of the object's monitor. Waiters are the threads waiting to
/// enter it and those in `Object.wait` on it (JVMTI splits them differently across versions).
pub fn monitor_info(agent: &Agent, cmd: MonitorInfo) -> Result<MonitorInfoReply, ErrorCode> {
    let jni = agent.jni()?;
    let obj = agent.non_null_object(jni, cmd.object)?;
    let usage = agent.jvmti.get_object_monitor_usage(obj)?;
    let owner = agent.thread_id(jni, usage.owner)?;
    let mut waiters: Vec<jdwp_protocol::ThreadId> = Vec::new();
    for &t in usage.waiters.iter().chain(usage.notify_waiters.iter()) {
        let id = agent.thread_id(jni, t)?;
        if !waiters.contains(&id) {
            waiters.push(id);
        }
    }
    Ok(MonitorInfoReply { owner, entry_count: usage.entry_count, waiters })
}

/// Live objects that refer to this one directly (up to `max_referrers`; 0 for all).
pub fn referring_objects(agent: &Agent, cmd: ReferringObjects) -> Result<ReferringObjectsReply, ErrorCode> {
    if cmd.max_referrers < 0 {
        return Err(ErrorCode::ILLEGAL_ARGUMENT);
    }
    let jni = agent.jni()?;
    let obj = agent.non_null_object(jni, cmd.object)?;
    let mut referring_objects = Vec::new();
    super::heap::referrers(agent, jni, obj, cmd.max_referrers, |r| {
        referring_objects.push(agent.tagged_object(jni, r)?);
        Ok(())
    })?;
    Ok(ReferringObjectsReply { referring_objects })
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
    let obj = agent.string(jni, cmd.string_object)?;
    let units = jni.get_string_utf16(obj)?;
    Ok(ValueReply { string_value: String::from_utf16_lossy(&units) })
}

/// This module's commands.
pub(super) static TABLE: &[Entry<Agent>] = crate::dispatch_table!(Agent;
    c::object_reference::ReferenceType => reference_type,
    c::object_reference::GetValues => get_values,
    c::object_reference::SetValues => set_values,
    c::object_reference::MonitorInfo => monitor_info,
    c::object_reference::DisableCollection => disable_collection,
    c::object_reference::EnableCollection => enable_collection,
    c::object_reference::IsCollected => is_collected,
    c::object_reference::ReferringObjects => referring_objects,
    c::object_reference::InvokeMethod => invoke_method,
    c::string_reference::ValueCmd => string_value,
);

/// `InvokeMethod`: queues the call (see [`crate::invoke`]); the reply comes once the method returns.
pub fn invoke_method(agent: &Agent, cmd: InvokeMethod) -> Result<InvokeMethodReply, ErrorCode> {
    crate::invoke::invoke_instance(agent, &cmd)?;
    Err(crate::invoke::DEFERRED)
}
