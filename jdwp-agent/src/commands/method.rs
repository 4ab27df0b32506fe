//! `Method` (command set 6).

use jdwp_protocol::commands::method::*;
use jdwp_protocol::{ErrorCode, MethodId, ReferenceTypeId};
use jni_sys::jmethodID;

use crate::agent::Agent;
use crate::dispatch::Entry;
use jdwp_protocol::commands as c;

/// The method, checked to be one the agent handed out and to belong to `ref_type`.
fn method(agent: &Agent, ref_type: ReferenceTypeId, id: MethodId) -> Result<jmethodID, ErrorCode> {
    let jni = agent.jni()?;
    let class = agent.class(jni, ref_type)?;
    agent.method_of(jni, class, id)
}

pub fn line_table(agent: &Agent, cmd: LineTable) -> Result<LineTableReply, ErrorCode> {
    let m = method(agent, cmd.ref_type, cmd.method_id)?;
    if agent.jvmti.is_method_native(m)? {
        return Err(ErrorCode::NATIVE_METHOD);
    }
    let (start, end) = match agent.jvmti.get_method_location(m) {
        Ok(range) => range,
        // Abstract methods have no code: an empty table, as the JDK's agent answers.
        Err(_) => return Ok(LineTableReply { start: -1, end: -1, lines: Vec::new() }),
    };
    let lines = match agent.jvmti.get_line_number_table(m) {
        Ok(table) => table
            .iter()
            .map(|e| LineTableEntry { line_code_index: e.start_location, line_number: e.line_number })
            .collect(),
        // Compiled without line numbers: the code range is still worth having, so (as the JDK's
        // agent does) an empty table rather than ABSENT_INFORMATION, which JDI does not expect.
        Err(e) if ErrorCode::from(e) == ErrorCode::ABSENT_INFORMATION => Vec::new(),
        Err(e) => return Err(e.into()),
    };
    Ok(LineTableReply { start, end, lines })
}

fn variables(
    agent: &Agent,
    ref_type: ReferenceTypeId,
    id: MethodId,
) -> Result<(i32, Vec<GenericVariableSlot>), ErrorCode> {
    let m = method(agent, ref_type, id)?;
    if agent.jvmti.is_method_native(m)? {
        return Err(ErrorCode::NATIVE_METHOD);
    }
    let arg_cnt = agent.jvmti.get_arguments_size(m)?;
    let table = agent.jvmti.get_local_variable_table(m)?;
    let slots = table
        .into_iter()
        .map(|v| GenericVariableSlot {
            code_index: v.start_location,
            name: v.name,
            signature: v.signature,
            generic_signature: v.generic_signature.unwrap_or_default(),
            length: v.length,
            slot: v.slot,
        })
        .collect();
    Ok((arg_cnt, slots))
}

pub fn variable_table(agent: &Agent, cmd: VariableTable) -> Result<VariableTableReply, ErrorCode> {
    let (arg_cnt, slots) = variables(agent, cmd.ref_type, cmd.method_id)?;
    let slots = slots
        .into_iter()
        .map(|v| VariableSlot {
            code_index: v.code_index,
            name: v.name,
            signature: v.signature,
            length: v.length,
            slot: v.slot,
        })
        .collect();
    Ok(VariableTableReply { arg_cnt, slots })
}

pub fn variable_table_with_generic(
    agent: &Agent,
    cmd: VariableTableWithGeneric,
) -> Result<VariableTableWithGenericReply, ErrorCode> {
    let (arg_cnt, slots) = variables(agent, cmd.ref_type, cmd.method_id)?;
    Ok(VariableTableWithGenericReply { arg_cnt, slots })
}

pub fn bytecodes(agent: &Agent, cmd: Bytecodes) -> Result<BytecodesReply, ErrorCode> {
    let m = method(agent, cmd.ref_type, cmd.method_id)?;
    if agent.jvmti.is_method_native(m)? {
        return Ok(BytecodesReply { bytes: Vec::new() });
    }
    Ok(BytecodesReply { bytes: agent.jvmti.get_bytecodes(m)?.to_vec() })
}

pub fn is_obsolete(agent: &Agent, cmd: IsObsolete) -> Result<IsObsoleteReply, ErrorCode> {
    // Method ID 0 is how locations in obsolete methods name their method (see
    // `raw::location`): obsolete, as the JDK's agent answers (nsk/jdwp isobsolete002).
    if cmd.method_id == MethodId::NULL {
        let jni = agent.jni()?;
        let class = agent.class(jni, cmd.ref_type)?;
        jni.delete_local_ref(class);
        return Ok(IsObsoleteReply { is_obsolete: true });
    }
    let m = method(agent, cmd.ref_type, cmd.method_id)?;
    Ok(IsObsoleteReply { is_obsolete: agent.jvmti.is_method_obsolete(m)? })
}

/// This module's commands.
pub(super) static TABLE: &[Entry<Agent>] = crate::dispatch_table!(Agent;
    c::method::LineTable => line_table,
    c::method::VariableTable => variable_table,
    c::method::VariableTableWithGeneric => variable_table_with_generic,
    c::method::Bytecodes => bytecodes,
    c::method::IsObsolete => is_obsolete,
);
