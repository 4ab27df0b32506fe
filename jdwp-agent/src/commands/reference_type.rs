//! `ReferenceType` (command set 2), and `ClassType.Superclass`.

use jdwp_protocol::commands::class_type::{
    SetValues as SetStaticValues, SetValuesReply as SetStaticValuesReply, Superclass, SuperclassReply,
};
use jdwp_protocol::commands::reference_type::*;
use jdwp_protocol::{ClassId, ClassObjectId, ErrorCode, InterfaceId, ModuleId, ReferenceTypeId, modifiers};
use jni_sys::jclass;

use crate::agent::{Agent, FieldScope};
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

/// The superclass of any reference type, as the JDK's agent answers it: null for an interface or
/// a primitive type, `Object` for an array type. JDI asks it of every type it mirrors as a class,
/// the primitive types' class objects included (nsk/jdi `allfields005`), so refusing anything but
/// a class type would break JDI (see spec-notes/id-checks.md).
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
    let (jni, c) = class(agent, cmd.ref_type)?;
    let mut values = Vec::with_capacity(cmd.fields.len());
    for f in cmd.fields {
        // Static, and declared by this type or one of its supertypes (as the spec requires).
        let field = agent.field_of(jni, c, f, FieldScope::Member, Some(true))?;
        values.push(crate::values::read_static(agent, jni, &field)?);
    }
    Ok(GetValuesReply { values })
}

/// Types nested in this one: the loaded types its loader knows whose names extend this type's name
/// with `$Name` (member, local and anonymous-with-a-name classes, not anonymous ones, and not
/// types nested deeper), as the JDK's agent lists them.
pub fn nested_types(agent: &Agent, cmd: NestedTypes) -> Result<NestedTypesReply, ErrorCode> {
    let (jni, c) = class(agent, cmd.ref_type)?;
    let outer = agent.jvmti.get_class_signature(c)?.0;
    let loader = agent.jvmti.get_class_loader(c)?;
    let candidates = agent.jvmti.get_class_loader_classes(loader)?;
    let mut classes = Vec::new();
    for &candidate in candidates.iter() {
        let nested = agent.jvmti.get_class_signature(candidate).is_ok_and(|(sig, _)| is_nested_signature(&outer, &sig));
        if nested {
            let (ref_type_tag, type_id) = agent.tagged_type(jni, candidate)?;
            classes.push(NestedTypeInfo { ref_type_tag, type_id });
        }
        jni.delete_local_ref(candidate);
    }
    Ok(NestedTypesReply { classes })
}

/// Whether `inner` (a type signature) names a type nested directly in the class `outer`:
/// `LOuter$Name;` or `LOuter$1Name;` (a local class), not `LOuter$1;` (anonymous) nor
/// `LOuter$Name$Deeper;`. `#` separates like `$` (as in the JDK's agent).
pub fn is_nested_signature(outer: &str, inner: &str) -> bool {
    let Some(outer_name) = outer.strip_prefix('L').and_then(|o| o.strip_suffix(';')) else { return false };
    let Some(rest) = inner.strip_prefix('L').and_then(|i| i.strip_prefix(outer_name)) else { return false };
    let Some(sep) = rest.chars().next().filter(|c| matches!(c, '$' | '#')) else { return false };
    let Some(name) = rest[1..].strip_suffix(';') else { return false };
    let name = name.trim_start_matches(|c: char| c.is_ascii_digit());
    !name.is_empty() && !name.contains(sep)
}

/// The `java.lang.Class` object of the type: its ID is the type's ID.
pub fn class_object(agent: &Agent, cmd: ClassObject) -> Result<ClassObjectReply, ErrorCode> {
    let (jni, c) = class(agent, cmd.ref_type)?;
    Ok(ClassObjectReply { class_object: ClassObjectId(agent.object_id(jni, c)?.0) })
}

pub fn source_debug_extension(
    agent: &Agent,
    cmd: SourceDebugExtension,
) -> Result<SourceDebugExtensionReply, ErrorCode> {
    let (_, c) = class(agent, cmd.ref_type)?;
    Ok(SourceDebugExtensionReply { extension: agent.jvmti.get_source_debug_extension(c)? })
}

/// Instances of exactly this type (up to `max_instances`; 0 for all), those reachable for garbage
/// collection only, as the spec says and the JDK's agent answers.
pub fn instances(agent: &Agent, cmd: Instances) -> Result<InstancesReply, ErrorCode> {
    if cmd.max_instances < 0 {
        return Err(ErrorCode::ILLEGAL_ARGUMENT);
    }
    let (jni, c) = class(agent, cmd.ref_type)?;
    let mut instances = Vec::new();
    super::heap::instances(agent, jni, c, cmd.max_instances, |obj| {
        instances.push(agent.tagged_object(jni, obj)?);
        Ok(())
    })?;
    Ok(InstancesReply { instances })
}

/// `ABSENT_INFORMATION` for arrays and primitive types, which have no class file.
pub fn class_file_version(agent: &Agent, cmd: ClassFileVersion) -> Result<ClassFileVersionReply, ErrorCode> {
    let (_, c) = class(agent, cmd.ref_type)?;
    let (minor_version, major_version) = agent.jvmti.get_class_version_numbers(c)?;
    Ok(ClassFileVersionReply { major_version, minor_version })
}

pub fn constant_pool(agent: &Agent, cmd: ConstantPool) -> Result<ConstantPoolReply, ErrorCode> {
    let (_, c) = class(agent, cmd.ref_type)?;
    let (count, bytes) = agent.jvmti.get_constant_pool(c)?;
    Ok(ConstantPoolReply { count, bytes: bytes.to_vec() })
}

/// The module of the type (an array's is its element type's).
pub fn module(agent: &Agent, cmd: Module) -> Result<ModuleReply, ErrorCode> {
    let (jni, c) = class(agent, cmd.ref_type)?;
    let module = super::module_reference::class_module(agent, jni, c)?;
    Ok(ModuleReply { module: ModuleId(agent.object_id(jni, module)?.0) })
}

/// `ClassType.SetValues`: writes static fields of the class or its supertypes. Every value is
/// checked before any is written; final fields are written like the others, as the JDK's agent
/// does.
pub fn set_static_values(agent: &Agent, cmd: SetStaticValues) -> Result<SetStaticValuesReply, ErrorCode> {
    let jni = agent.jni()?;
    let c = agent.class_type(jni, cmd.clazz)?;
    let field = |id| agent.field_of(jni, c, id, FieldScope::Member, Some(true));
    super::check_then_write(
        jni,
        &cmd.values,
        |fv| {
            let f = field(fv.field_id)?;
            let value = crate::values::checked_jvalue(agent, jni, &f.signature, f.class.0, &fv.value)?;
            Ok((value, fv.value.tag().is_object()))
        },
        |fv, value| crate::values::write_static(jni, &field(fv.field_id)?, value),
    )?;
    Ok(SetStaticValuesReply {})
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
    c::reference_type::NestedTypes => nested_types,
    c::reference_type::Status => status,
    c::reference_type::Interfaces => interfaces,
    c::reference_type::ClassObject => class_object,
    c::reference_type::SourceDebugExtension => source_debug_extension,
    c::reference_type::SignatureWithGeneric => signature_with_generic,
    c::reference_type::FieldsWithGeneric => fields_with_generic,
    c::reference_type::MethodsWithGeneric => methods_with_generic,
    c::reference_type::Instances => instances,
    c::reference_type::ClassFileVersion => class_file_version,
    c::reference_type::ConstantPool => constant_pool,
    c::reference_type::Module => module,
    c::class_type::Superclass => superclass,
    c::class_type::SetValues => set_static_values,
);

#[cfg(test)]
mod tests {
    use super::is_nested_signature;

    #[test]
    fn nested_types_are_direct_and_named() {
        let outer = "LShapes;";
        assert!(is_nested_signature(outer, "LShapes$Circle;"));
        assert!(is_nested_signature(outer, "LShapes$1Local;"), "a local class");
        assert!(is_nested_signature(outer, "LShapes#Odd;"));
        assert!(!is_nested_signature(outer, "LShapes$1;"), "anonymous");
        assert!(!is_nested_signature(outer, "LShapes$Circle$Deeper;"), "nested deeper");
        assert!(!is_nested_signature(outer, "LShapes$$Lambda$14.0x0000000800c03000;"));
        assert!(!is_nested_signature(outer, "LShapes;"));
        assert!(!is_nested_signature(outer, "LShapesAndMore$X;"));
        assert!(!is_nested_signature(outer, "[LShapes$Circle;"));
        assert!(!is_nested_signature(outer, "LShapes$;"));
        assert!(is_nested_signature("Lp/Outer;", "Lp/Outer$In;"));
        assert!(!is_nested_signature("[I", "[I$X;"));
    }
}
