//! Java values ↔ JDWP values: fields, locals and JNI `jvalue`s, with the type checks that keep a
//! hostile or mistaken command from making the VM read or write at the wrong width.

use jdwp_protocol::{ErrorCode, Value};
use jni_sys::{jclass, jmethodID, jobject, jvalue};

use crate::agent::{Agent, FieldEntry};
use crate::jni::{JavaType, Jni};

/// A reference as a tagged value, with its runtime kind.
pub fn object_value(agent: &Agent, jni: Jni, obj: jobject) -> Result<Value, ErrorCode> {
    if obj.is_null() {
        return Ok(Value::NULL);
    }
    let tagged = agent.tagged_object(jni, obj)?;
    Ok(Value::Object(tagged.tag, tagged.id))
}

/// A `jvalue` of JNI type `ty` as a JDWP value, or for objects the reference itself (naming it is
/// the caller's: a tagged ID here, a global reference for the event helper in callbacks).
///
/// # Safety
///
/// `v` was produced for type `ty` (the member `ty` selects is the one written).
pub unsafe fn read_jvalue(ty: JavaType, v: jvalue) -> Result<Value, jobject> {
    // SAFETY: the caller promises the union member matching `ty` is initialized.
    unsafe {
        Ok(match ty {
            JavaType::Boolean => Value::Boolean(v.z),
            JavaType::Byte => Value::Byte(v.b),
            JavaType::Char => Value::Char(v.c),
            JavaType::Short => Value::Short(v.s),
            JavaType::Int => Value::Int(v.i),
            JavaType::Long => Value::Long(v.j),
            JavaType::Float => Value::Float(v.f),
            JavaType::Double => Value::Double(v.d),
            JavaType::Void => Value::Void,
            JavaType::Object => return Err(v.l),
        })
    }
}

/// A `jvalue` of JNI type `ty` as a JDWP value (an object's local reference is deleted).
///
/// # Safety
///
/// `v` was produced for type `ty` (the member `ty` selects is the one written).
pub unsafe fn from_jvalue(agent: &Agent, jni: Jni, ty: JavaType, v: jvalue) -> Result<Value, ErrorCode> {
    // SAFETY: the caller's promise.
    match unsafe { read_jvalue(ty, v) } {
        Ok(value) => Ok(value),
        Err(obj) => {
            let value = object_value(agent, jni, obj)?;
            if !obj.is_null() {
                jni.delete_local_ref(obj);
            }
            Ok(value)
        }
    }
}

/// Reads a static field.
pub fn read_static(agent: &Agent, jni: Jni, field: &FieldEntry) -> Result<Value, ErrorCode> {
    let ty = JavaType::from_descriptor(&field.signature).ok_or(ErrorCode::INVALID_FIELDID)?;
    // SAFETY: the field entry was built by the agent from JVMTI for this class, with this type.
    unsafe {
        let v = jni.get_static_field(field.class.0, field.jfield(), ty);
        from_jvalue(agent, jni, ty, v)
    }
}

/// Reads an instance field of `obj`. Static fields are refused: `ObjectReference.GetValues` is for
/// instance fields (JDI reads statics through `ReferenceType.GetValues`).
pub fn read_field(agent: &Agent, jni: Jni, obj: jobject, field: &FieldEntry) -> Result<Value, ErrorCode> {
    // The field must belong to the object's class or a supertype, or JNI would read garbage.
    if field.is_static || !jni.is_instance_of(obj, field.class.0) {
        return Err(ErrorCode::INVALID_FIELDID);
    }
    let ty = JavaType::from_descriptor(&field.signature).ok_or(ErrorCode::INVALID_FIELDID)?;
    // SAFETY: checked above that `obj` is an instance of the field's class; the type comes from
    // the field's own signature.
    unsafe {
        let v = jni.get_field(obj, field.jfield(), ty);
        from_jvalue(agent, jni, ty, v)
    }
}

// ---- writing ---------------------------------------------------------------------------------

/// Whether a JDWP value has exactly the JNI type `ty`: primitives must match (JDWP leaves
/// conversions to the debugger), objects must be object kinds (their class is checked apart).
pub fn value_fits(ty: JavaType, value: &Value) -> bool {
    matches!(
        (ty, value),
        (JavaType::Boolean, Value::Boolean(_))
            | (JavaType::Byte, Value::Byte(_))
            | (JavaType::Char, Value::Char(_))
            | (JavaType::Short, Value::Short(_))
            | (JavaType::Int, Value::Int(_))
            | (JavaType::Long, Value::Long(_))
            | (JavaType::Float, Value::Float(_))
            | (JavaType::Double, Value::Double(_))
            | (JavaType::Void, Value::Void)
    ) || (ty == JavaType::Object && value.tag().is_object())
}

/// A value checked to fit a declared type, as a `jvalue` (objects as local references).
///
/// `signature` is the declared type (a field, array component or return descriptor) as `context`
/// (a class whose loader resolves it) sees it; object values must be instances of it, so that the
/// VM never stores an object where another type is expected. `TYPE_MISMATCH` otherwise.
pub fn checked_jvalue(
    agent: &Agent,
    jni: Jni,
    signature: &str,
    context: jclass,
    value: &Value,
) -> Result<jvalue, ErrorCode> {
    let ty = JavaType::from_descriptor(signature).ok_or(ErrorCode::TYPE_MISMATCH)?;
    if !value_fits(ty, value) {
        return Err(ErrorCode::TYPE_MISMATCH);
    }
    Ok(match *value {
        Value::Boolean(z) => jvalue { z },
        Value::Byte(b) => jvalue { b },
        Value::Char(c) => jvalue { c },
        Value::Short(s) => jvalue { s },
        Value::Int(i) => jvalue { i },
        Value::Long(j) => jvalue { j },
        Value::Float(f) => jvalue { f },
        Value::Double(d) => jvalue { d },
        Value::Void => jvalue { j: 0 },
        Value::Object(_, id) => {
            let obj = agent.object(jni, id)?;
            if !is_assignable(agent, jni, obj, signature, context)? {
                return Err(ErrorCode::TYPE_MISMATCH);
            }
            jvalue { l: obj }
        }
    })
}

/// Writes a static field (values checked as by [`checked_jvalue`]).
pub fn write_static(jni: Jni, field: &FieldEntry, value: jvalue) -> Result<(), ErrorCode> {
    let ty = JavaType::from_descriptor(&field.signature).ok_or(ErrorCode::INVALID_FIELDID)?;
    // SAFETY: the field entry was built by the agent from JVMTI for this class, with this type;
    // the caller checked the value against the field's signature (`checked_jvalue`).
    unsafe { jni.set_static_field(field.class.0, field.jfield(), ty, value) };
    Ok(())
}

/// Writes a field of `obj` (static fields through their class), the value checked as by
/// [`checked_jvalue`].
pub fn write_field(jni: Jni, obj: jobject, field: &FieldEntry, value: jvalue) -> Result<(), ErrorCode> {
    if field.is_static {
        return write_static(jni, field, value);
    }
    if !jni.is_instance_of(obj, field.class.0) {
        return Err(ErrorCode::INVALID_FIELDID);
    }
    let ty = JavaType::from_descriptor(&field.signature).ok_or(ErrorCode::INVALID_FIELDID)?;
    // SAFETY: `obj` is an instance of the field's class, the type is the field's own, and the
    // caller checked the value against the field's signature.
    unsafe { jni.set_field(obj, field.jfield(), ty, value) };
    Ok(())
}

// ---- types ------------------------------------------------------------------------------------

/// Whether a type descriptor names a primitive type.
pub fn is_primitive_descriptor(descriptor: &str) -> bool {
    matches!(descriptor, "Z" | "B" | "C" | "S" | "I" | "J" | "F" | "D")
}

/// `Class.getComponentType` for the array class `array_class` (a local reference).
pub fn component_type(agent: &Agent, jni: Jni, array_class: jclass) -> Result<jclass, ErrorCode> {
    // A method ID of a bootstrap class, valid for the VM's life.
    let memo = &agent.memo.get_component_type;
    let method = match memo.get() {
        Some(m) => *m,
        None => {
            let m = jni.get_method_id(agent.known()?.class.0, "getComponentType", "()Ljava/lang/Class;")? as usize;
            *memo.get_or_init(|| m)
        }
    };
    // SAFETY: `getComponentType()` is an instance method of `Class` returning a `Class`, it takes
    // no arguments, and `array_class` is a class. It reads a field and runs no debuggee code.
    let component = unsafe { jni.call_method(array_class, method as jmethodID, JavaType::Object, &[]) }?;
    // SAFETY: the call returns an object.
    let component = unsafe { component.l };
    if component.is_null() { Err(ErrorCode::INVALID_ARRAY) } else { Ok(component) }
}

/// Whether `obj` may be stored where the type `signature` is declared, as the loader of `context`
/// resolves that name (null is assignable to every reference type).
///
/// The VM is not asked to resolve the name, which could load classes: the object's own class and
/// supertypes are searched for the name, and when the context's loader has already resolved the
/// name to a class, that class must be the one found.
pub fn is_assignable(
    agent: &Agent,
    jni: Jni,
    obj: jobject,
    signature: &str,
    context: jclass,
) -> Result<bool, ErrorCode> {
    if obj.is_null() {
        return Ok(true);
    }
    let class = jni.get_object_class(obj)?;
    let loader = agent.jvmti.get_class_loader(context)?;
    let result = class_assignable(agent, jni, class, signature, loader);
    jni.delete_local_ref(class);
    if !loader.is_null() {
        jni.delete_local_ref(loader);
    }
    result
}

fn class_assignable(agent: &Agent, jni: Jni, class: jclass, target: &str, loader: jobject) -> Result<bool, ErrorCode> {
    if target == "Ljava/lang/Object;" {
        return Ok(true);
    }
    let (signature, _) = agent.jvmti.get_class_signature(class)?;
    if let Some(target_component) = target.strip_prefix('[') {
        let Some(component) = signature.strip_prefix('[') else { return Ok(false) };
        if is_primitive_descriptor(target_component) || is_primitive_descriptor(component) {
            return Ok(target_component == component);
        }
        // Arrays are covariant: compare the component types.
        let component_class = component_type(agent, jni, class)?;
        let result = class_assignable(agent, jni, component_class, target_component, loader);
        jni.delete_local_ref(component_class);
        return result;
    }
    if signature.starts_with('[') {
        return Ok(matches!(target, "Ljava/lang/Cloneable;" | "Ljava/io/Serializable;"));
    }
    let Some(found) = supertype_named(agent, jni, class, target)? else { return Ok(false) };
    let found_loader = agent.jvmti.get_class_loader(found)?;
    // A loader that defined the class maps its name to it; otherwise ask what the context's loader
    // resolved the name to, if it has.
    let result = if jni.is_same_object(found_loader, loader) {
        Ok(true)
    } else {
        match initiated_class_named(agent, jni, loader, target)? {
            Some(resolved) => {
                let same = jni.is_same_object(resolved, found);
                jni.delete_local_ref(resolved);
                Ok(same)
            }
            None => Ok(true),
        }
    };
    if !found_loader.is_null() {
        jni.delete_local_ref(found_loader);
    }
    jni.delete_local_ref(found);
    result
}

/// The class or interface named `signature` among `class` and its supertypes (a new local
/// reference).
fn supertype_named(agent: &Agent, jni: Jni, class: jclass, signature: &str) -> Result<Option<jclass>, ErrorCode> {
    let mut work = vec![jni.new_local_ref(class)];
    let mut found = None;
    let mut outcome = Ok(());
    while let Some(c) = work.pop() {
        if found.is_none() && outcome.is_ok() {
            match visit_supertype(agent, jni, c, signature, &mut work) {
                Ok(true) => {
                    found = Some(c);
                    continue;
                }
                Ok(false) => {}
                Err(e) => outcome = Err(e),
            }
        }
        jni.delete_local_ref(c);
    }
    outcome.map(|()| found)
}

/// Whether `class` is named `signature`; if not, queues its direct supertypes.
fn visit_supertype(
    agent: &Agent,
    jni: Jni,
    class: jclass,
    signature: &str,
    work: &mut Vec<jclass>,
) -> Result<bool, ErrorCode> {
    if agent.jvmti.get_class_signature(class)?.0 == signature {
        return Ok(true);
    }
    work.extend(jni.get_superclass(class));
    work.extend(agent.jvmti.get_implemented_interfaces(class)?.iter().copied());
    Ok(false)
}

/// The class named `signature` that `loader` has resolved (defined, or loaded by delegation), if
/// any (a new local reference).
fn initiated_class_named(
    agent: &Agent,
    jni: Jni,
    loader: jobject,
    signature: &str,
) -> Result<Option<jclass>, ErrorCode> {
    let classes = agent.jvmti.get_class_loader_classes(loader)?;
    let mut found = None;
    for &c in classes.iter() {
        if found.is_none() && agent.jvmti.get_class_signature(c).is_ok_and(|(s, _)| s == signature) {
            found = Some(c);
        } else {
            jni.delete_local_ref(c);
        }
    }
    Ok(found)
}

/// JVMTI class status bits → JDWP's (the same bit values for the four JDWP defines).
pub fn jdwp_class_status(jvmti_status: i32) -> i32 {
    use jdwp_protocol::class_status;
    jvmti_status & (class_status::VERIFIED | class_status::PREPARED | class_status::INITIALIZED | class_status::ERROR)
}

#[cfg(test)]
mod tests {
    use super::*;
    use jdwp_protocol::{ObjectId, Tag};

    #[test]
    fn jvalues_read_at_their_type_and_leave_objects_to_the_caller() {
        let v = jvalue { j: -5 };
        // SAFETY: each read is of the member just written.
        unsafe {
            assert_eq!(read_jvalue(JavaType::Long, v), Ok(Value::Long(-5)));
            assert_eq!(read_jvalue(JavaType::Int, jvalue { i: 7 }), Ok(Value::Int(7)));
            assert_eq!(read_jvalue(JavaType::Boolean, jvalue { z: true }), Ok(Value::Boolean(true)));
            assert_eq!(read_jvalue(JavaType::Void, v), Ok(Value::Void));
            let obj = std::ptr::dangling_mut();
            assert_eq!(read_jvalue(JavaType::Object, jvalue { l: obj }), Err(obj));
        }
        assert_eq!(JavaType::from_descriptor_byte(b'['), Some(JavaType::Object));
        assert_eq!(JavaType::from_descriptor_byte(b'F'), Some(JavaType::Float));
        assert_eq!(JavaType::from_descriptor_byte(b'x'), None);
    }

    #[test]
    fn values_fit_only_their_exact_type() {
        assert!(value_fits(JavaType::Int, &Value::Int(1)));
        assert!(!value_fits(JavaType::Int, &Value::Short(1)));
        assert!(!value_fits(JavaType::Long, &Value::Int(1)));
        assert!(value_fits(JavaType::Boolean, &Value::Boolean(true)));
        assert!(!value_fits(JavaType::Boolean, &Value::Byte(1)));
        assert!(value_fits(JavaType::Void, &Value::Void));
        assert!(value_fits(JavaType::Object, &Value::NULL));
        assert!(value_fits(JavaType::Object, &Value::Object(Tag::String, ObjectId(3))));
        assert!(value_fits(JavaType::Object, &Value::Object(Tag::Array, ObjectId(3))));
        assert!(!value_fits(JavaType::Object, &Value::Int(0)));
        assert!(!value_fits(JavaType::Int, &Value::NULL));
    }

    #[test]
    fn primitive_descriptors_are_single_letters() {
        for d in ["Z", "B", "C", "S", "I", "J", "F", "D"] {
            assert!(is_primitive_descriptor(d), "{d}");
        }
        for d in ["V", "L", "[I", "Ljava/lang/Object;", "", "II"] {
            assert!(!is_primitive_descriptor(d), "{d}");
        }
    }
}
