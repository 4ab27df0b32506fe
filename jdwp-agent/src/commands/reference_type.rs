//! `ReferenceType` (command set 2), and `ClassType.Superclass`.

use jdwp_protocol::commands::class_type::{Superclass, SuperclassReply};
use jdwp_protocol::commands::reference_type::*;
use jdwp_protocol::{ClassId, ErrorCode, InterfaceId, ReferenceTypeId, modifiers};
use jni_sys::jclass;

use crate::agent::Agent;
use crate::dispatch::Entry;
use crate::jni::Jni;
use jdwp_protocol::commands as c;

fn class(agent: &Agent, id: ReferenceTypeId) -> Result<(Jni, jclass), ErrorCode> {
    let jni = agent.jni()?;
    Ok((jni, agent.class(jni, id)?))
}

pub fn signature(agent: &Agent, cmd: Signature) -> Result<SignatureReply, ErrorCode> {
    let (_, c) = class(agent, cmd.ref_type)?;
    Ok(SignatureReply { signature: agent.jvmti.get_class_signature(c)?.0 })
}

pub fn signature_with_generic(
    agent: &Agent,
    cmd: SignatureWithGeneric,
) -> Result<SignatureWithGenericReply, ErrorCode> {
    let (_, c) = class(agent, cmd.ref_type)?;
    let (signature, generic) = agent.jvmti.get_class_signature(c)?;
    Ok(SignatureWithGenericReply { signature, generic_signature: generic.unwrap_or_default() })
}

pub fn class_loader(agent: &Agent, cmd: ClassLoader) -> Result<ClassLoaderReply, ErrorCode> {
    let (jni, c) = class(agent, cmd.ref_type)?;
    let loader = agent.jvmti.get_class_loader(c)?;
    Ok(ClassLoaderReply { class_loader: agent.object_id(jni, loader)?.into() })
}

pub fn modifiers(agent: &Agent, cmd: Modifiers) -> Result<ModifiersReply, ErrorCode> {
    let (_, c) = class(agent, cmd.ref_type)?;
    Ok(ModifiersReply { mod_bits: agent.jvmti.get_class_modifiers(c)? })
}

pub fn status(agent: &Agent, cmd: Status) -> Result<StatusReply, ErrorCode> {
    let (_, c) = class(agent, cmd.ref_type)?;
    Ok(StatusReply { status: super::jdwp_class_status(agent.jvmti.get_class_status(c)?) })
}

pub fn source_file(agent: &Agent, cmd: SourceFile) -> Result<SourceFileReply, ErrorCode> {
    let (_, c) = class(agent, cmd.ref_type)?;
    Ok(SourceFileReply { source_file: agent.jvmti.get_source_file_name(c)? })
}

pub fn interfaces(agent: &Agent, cmd: Interfaces) -> Result<InterfacesReply, ErrorCode> {
    let (jni, c) = class(agent, cmd.ref_type)?;
    let list = agent.jvmti.get_implemented_interfaces(c)?;
    let mut interfaces = Vec::with_capacity(list.len());
    for &i in list.iter() {
        interfaces.push(InterfaceId(agent.class_id(jni, i)?.0));
    }
    Ok(InterfacesReply { interfaces })
}

pub fn superclass(agent: &Agent, cmd: Superclass) -> Result<SuperclassReply, ErrorCode> {
    let (jni, c) = class(agent, cmd.clazz.into())?;
    let superclass = match jni.get_superclass(c) {
        Some(s) => ClassId(agent.class_id(jni, s)?.0),
        None => ClassId::NULL,
    };
    Ok(SuperclassReply { superclass })
}

/// Declared fields with generic signatures and modifiers (synthetic ones flagged as JDWP says).
fn declared_fields(agent: &Agent, id: ReferenceTypeId) -> Result<Vec<GenericFieldInfo>, ErrorCode> {
    let (jni, c) = class(agent, id)?;
    let fields = agent.jvmti.get_class_fields(c)?;
    let mut out = Vec::with_capacity(fields.len());
    for &f in fields.iter() {
        let names = agent.jvmti.get_field_name(c, f)?;
        let mut mod_bits = agent.jvmti.get_field_modifiers(c, f)?;
        if agent.jvmti.is_field_synthetic(c, f).unwrap_or(false) {
            mod_bits |= modifiers::SYNTHETIC_JDWP;
        }
        out.push(GenericFieldInfo {
            field_id: agent.field_id(jni, c, f)?,
            name: names.name,
            signature: names.signature,
            generic_signature: names.generic.unwrap_or_default(),
            mod_bits,
        });
    }
    Ok(out)
}

pub fn fields(agent: &Agent, cmd: Fields) -> Result<FieldsReply, ErrorCode> {
    let declared = declared_fields(agent, cmd.ref_type)?
        .into_iter()
        .map(|f| FieldInfo { field_id: f.field_id, name: f.name, signature: f.signature, mod_bits: f.mod_bits })
        .collect();
    Ok(FieldsReply { declared })
}

pub fn fields_with_generic(agent: &Agent, cmd: FieldsWithGeneric) -> Result<FieldsWithGenericReply, ErrorCode> {
    Ok(FieldsWithGenericReply { declared: declared_fields(agent, cmd.ref_type)? })
}

fn declared_methods(agent: &Agent, id: ReferenceTypeId) -> Result<Vec<GenericMethodInfo>, ErrorCode> {
    let (_, c) = class(agent, id)?;
    let methods = agent.jvmti.get_class_methods(c)?;
    let mut out = Vec::with_capacity(methods.len());
    for &m in methods.iter() {
        let names = agent.jvmti.get_method_name(m)?;
        let mut mod_bits = agent.jvmti.get_method_modifiers(m)?;
        if agent.jvmti.is_method_synthetic(m).unwrap_or(false) {
            mod_bits |= modifiers::SYNTHETIC_JDWP;
        }
        out.push(GenericMethodInfo {
            method_id: agent.method_id(m),
            name: names.name,
            signature: names.signature,
            generic_signature: names.generic.unwrap_or_default(),
            mod_bits,
        });
    }
    Ok(out)
}

pub fn methods(agent: &Agent, cmd: Methods) -> Result<MethodsReply, ErrorCode> {
    let declared = declared_methods(agent, cmd.ref_type)?
        .into_iter()
        .map(|m| MethodInfo { method_id: m.method_id, name: m.name, signature: m.signature, mod_bits: m.mod_bits })
        .collect();
    Ok(MethodsReply { declared })
}

pub fn methods_with_generic(agent: &Agent, cmd: MethodsWithGeneric) -> Result<MethodsWithGenericReply, ErrorCode> {
    Ok(MethodsWithGenericReply { declared: declared_methods(agent, cmd.ref_type)? })
}

/// Static field values.
pub fn get_values(agent: &Agent, cmd: GetValues) -> Result<GetValuesReply, ErrorCode> {
    let (jni, _) = class(agent, cmd.ref_type)?;
    let mut values = Vec::with_capacity(cmd.fields.len());
    for f in cmd.fields {
        let field = agent.field(f)?;
        if !field.is_static {
            return Err(ErrorCode::INVALID_FIELDID);
        }
        values.push(crate::values::read_static(agent, jni, &field)?);
    }
    Ok(GetValuesReply { values })
}

/// This module's commands.
pub(super) static TABLE: &[Entry<Agent>] = crate::dispatch_table!(Agent;
    c::reference_type::Signature => signature,
    c::reference_type::ClassLoader => class_loader,
    c::reference_type::Modifiers => modifiers,
    c::reference_type::Fields => fields,
    c::reference_type::Methods => methods,
    c::reference_type::GetValues => get_values,
    c::reference_type::SourceFile => source_file,
    c::reference_type::Status => status,
    c::reference_type::Interfaces => interfaces,
    c::reference_type::SignatureWithGeneric => signature_with_generic,
    c::reference_type::FieldsWithGeneric => fields_with_generic,
    c::reference_type::MethodsWithGeneric => methods_with_generic,
    c::class_type::Superclass => superclass,
);
