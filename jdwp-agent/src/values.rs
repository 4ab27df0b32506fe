//! Java values ↔ JDWP values: fields, locals and JNI `jvalue`s, with the type checks that keep a
//! hostile or mistaken command from making the VM read or write at the wrong width.

use jdwp_protocol::{ErrorCode, Value};
use jni_sys::{jobject, jvalue};

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

/// A `jvalue` of JNI type `ty` as a JDWP value.
///
/// # Safety
///
/// `v` was produced for type `ty` (the member `ty` selects is the one written).
pub unsafe fn from_jvalue(agent: &Agent, jni: Jni, ty: JavaType, v: jvalue) -> Result<Value, ErrorCode> {
    // SAFETY: the caller promises the union member matching `ty` is initialized.
    Ok(unsafe {
        match ty {
            JavaType::Boolean => Value::Boolean(v.z),
            JavaType::Byte => Value::Byte(v.b),
            JavaType::Char => Value::Char(v.c),
            JavaType::Short => Value::Short(v.s),
            JavaType::Int => Value::Int(v.i),
            JavaType::Long => Value::Long(v.j),
            JavaType::Float => Value::Float(v.f),
            JavaType::Double => Value::Double(v.d),
            JavaType::Void => Value::Void,
            JavaType::Object => {
                let value = object_value(agent, jni, v.l)?;
                if !v.l.is_null() {
                    jni.delete_local_ref(v.l);
                }
                value
            }
        }
    })
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

/// Reads a field of `obj` (static fields are read through their class, as the spec allows).
pub fn read_field(agent: &Agent, jni: Jni, obj: jobject, field: &FieldEntry) -> Result<Value, ErrorCode> {
    if field.is_static {
        return read_static(agent, jni, field);
    }
    // The field must belong to the object's class or a superclass, or JNI would read garbage.
    if !jni.is_instance_of(obj, field.class.0) {
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
