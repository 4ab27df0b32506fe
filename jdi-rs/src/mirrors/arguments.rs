//! Checks values before they are sent to the VM, as JDI does: `SetValues` and invocations carry
//! values for declared types (fields and array elements without tags), so a value of the wrong
//! type would be stored as garbage rather than refused. Primitives are converted when that loses
//! nothing; objects must be instances of the declared type; varargs are packed into an array.

use jdwp_protocol::commands::{array_reference as ar, array_type as at, object_reference as or};
use jdwp_protocol::{ObjectId, Tag, Value};

use crate::error::{JdiError, Result};
use crate::mirrors::{Method, PrimitiveType, ReferenceType, Type};
use crate::names;
use crate::vm::VirtualMachine;

/// Checks and converts arguments for `method`; a varargs method's trailing arguments are packed
/// into a new array when they are not already one.
pub(crate) async fn prepare_arguments(method: &Method, mut arguments: Vec<Value>) -> Result<Vec<Value>> {
    let (sigs, _) = method.argument_and_return_signatures();
    let declaring = method.declaring_type().await?;
    if method.is_varargs() && !sigs.is_empty() && !already_packed(&declaring, &sigs, &arguments).await? {
        let fixed = sigs.len() - 1;
        if arguments.len() < fixed {
            return Err(arity_error(method, arguments.len()));
        }
        let array_sig = &sigs[fixed];
        let rest = arguments.split_off(fixed);
        let Type::Reference(array_type) = declaring.find_type(array_sig).await? else {
            return Err(JdiError::InvalidArgument(format!("{array_sig} is not an array type")));
        };
        let component = match names::component_signature(array_sig) {
            Some(c) if array_type.is_array() => c.to_string(),
            _ => return Err(JdiError::InvalidArgument(format!("{array_sig} is not an array type"))),
        };
        let mut elements = Vec::with_capacity(rest.len());
        for (i, v) in rest.into_iter().enumerate() {
            let what = format!("variable argument {i} of {}", method.name());
            elements.push(prepare_value(&declaring, v, &component, &what).await?);
        }
        // Created here rather than through `ArrayType::new_instance`, so that checking values
        // needs no array mirrors (which check their own writes through this module).
        let length = elements.len() as i32;
        let array =
            declaring.vm().send(&at::NewInstance { arr_type: array_type.id().into(), length }).await?.new_array.id;
        if !elements.is_empty() {
            // Already checked: write them directly rather than have the array check them again.
            let cmd = ar::SetValues { array_object: array.into(), first_index: 0, values: elements };
            declaring.vm().send(&cmd).await?;
        }
        arguments.push(Value::Object(Tag::Array, array));
    }
    if arguments.len() != sigs.len() {
        return Err(arity_error(method, arguments.len()));
    }
    let mut out = Vec::with_capacity(arguments.len());
    for (i, (v, sig)) in arguments.into_iter().zip(&sigs).enumerate() {
        let what = format!("argument {i} of {}", method.name());
        out.push(prepare_value(&declaring, v, sig, &what).await?);
    }
    Ok(out)
}

fn arity_error(method: &Method, given: usize) -> JdiError {
    let (sigs, _) = method.argument_and_return_signatures();
    JdiError::InvalidArgument(format!(
        "{}{} takes {} arguments, {given} given",
        method.name(),
        method.signature(),
        sigs.len()
    ))
}

/// Whether a varargs call already passes the array itself (or null) as its last argument.
async fn already_packed(context: &ReferenceType, sigs: &[String], arguments: &[Value]) -> Result<bool> {
    if arguments.len() != sigs.len() {
        return Ok(false);
    }
    match arguments.last() {
        Some(Value::Object(_, id)) if id.is_null() => Ok(true),
        Some(Value::Object(_, id)) => {
            let runtime = runtime_type(context.vm(), *id).await?;
            runtime.is_assignable_to(&sigs[sigs.len() - 1]).await
        }
        _ => Ok(false),
    }
}

async fn runtime_type(vm: &VirtualMachine, object: ObjectId) -> Result<ReferenceType> {
    let r = vm.send(&or::ReferenceType { object }).await?;
    vm.reference_type_of_kind(r.ref_type_tag, r.type_id).await
}

/// Checks that `value` can be stored where type `target` (a JNI signature) is expected and
/// converts primitives losslessly (an `Int(3)` for a `long` becomes `Long(3)`; `Int(300)` for a
/// `byte` is refused). Objects must be null or instances of `target` (compared by signature;
/// `context` is the type whose code declares the target, which supplies the VM).
pub(crate) async fn prepare_value(context: &ReferenceType, value: Value, target: &str, what: &str) -> Result<Value> {
    let refuse = || {
        JdiError::InvalidArgument(format!(
            "{value:?} cannot be assigned to {what} of type {}",
            names::type_name_of_signature(target)
        ))
    };
    if let Some(p) = PrimitiveType::from_signature(target) {
        return convert_primitive(value, p).ok_or_else(refuse);
    }
    if !names::is_reference_signature(target) {
        return Err(refuse());
    }
    let Value::Object(_, id) = value else { return Err(refuse()) };
    if id.is_null() || target == "Ljava/lang/Object;" {
        return Ok(value);
    }
    let runtime = runtime_type(context.vm(), id).await?;
    if runtime.is_assignable_to(target).await? {
        // The VM knows the exact kind; keep the tag it would report.
        Ok(Value::Object(tag_of(&runtime, value.tag()), id))
    } else {
        Err(JdiError::InvalidArgument(format!(
            "an instance of {} cannot be assigned to {what} of type {}",
            runtime.name(),
            names::type_name_of_signature(target)
        )))
    }
}

fn tag_of(t: &ReferenceType, given: Tag) -> Tag {
    if t.is_array() { Tag::Array } else { given }
}

/// Converts a primitive value to `target` when it is representable exactly there.
pub(crate) fn convert_primitive(value: Value, target: PrimitiveType) -> Option<Value> {
    enum Num {
        Int(i64),
        Float(f64),
    }
    if target == PrimitiveType::Boolean {
        return matches!(value, Value::Boolean(_)).then_some(value);
    }
    let n = match value {
        Value::Byte(v) => Num::Int(v.into()),
        Value::Char(v) => Num::Int(v.into()),
        Value::Short(v) => Num::Int(v.into()),
        Value::Int(v) => Num::Int(v.into()),
        Value::Long(v) => Num::Int(v),
        Value::Float(v) => Num::Float(v.into()),
        Value::Double(v) => Num::Float(v),
        _ => return None,
    };
    // An integral value within [lo, hi], from an integer or an integral float.
    let integral = |lo: i128, hi: i128| -> Option<i64> {
        let v = match n {
            Num::Int(v) => i128::from(v),
            Num::Float(f) if f.is_finite() && f.fract() == 0.0 && f.abs() < 1e38 => f as i128,
            Num::Float(_) => return None,
        };
        (lo..=hi).contains(&v).then_some(v as i64)
    };
    Some(match target {
        PrimitiveType::Boolean => return None,
        PrimitiveType::Byte => Value::Byte(integral(i8::MIN.into(), i8::MAX.into())? as i8),
        PrimitiveType::Char => Value::Char(integral(0, u16::MAX.into())? as u16),
        PrimitiveType::Short => Value::Short(integral(i16::MIN.into(), i16::MAX.into())? as i16),
        PrimitiveType::Int => Value::Int(integral(i32::MIN.into(), i32::MAX.into())? as i32),
        PrimitiveType::Long => Value::Long(integral(i64::MIN.into(), i64::MAX.into())?),
        PrimitiveType::Float => match n {
            Num::Int(v) => {
                let f = v as f32;
                (f.is_finite() && f as i128 == i128::from(v)).then_some(Value::Float(f))?
            }
            Num::Float(v) => {
                let f = v as f32;
                (f64::from(f) == v || v.is_nan()).then_some(Value::Float(f))?
            }
        },
        PrimitiveType::Double => match n {
            Num::Int(v) => {
                let d = v as f64;
                (d as i128 == i128::from(v)).then_some(Value::Double(d))?
            }
            Num::Float(v) => Value::Double(v),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn primitives_convert_only_without_loss() {
        use PrimitiveType as P;
        assert_eq!(convert_primitive(Value::Int(3), P::Long), Some(Value::Long(3)));
        assert_eq!(convert_primitive(Value::Int(300), P::Byte), None);
        assert_eq!(convert_primitive(Value::Int(-1), P::Char), None);
        assert_eq!(convert_primitive(Value::Int(65), P::Char), Some(Value::Char(65)));
        assert_eq!(convert_primitive(Value::Char(65), P::Int), Some(Value::Int(65)));
        assert_eq!(convert_primitive(Value::Double(2.0), P::Int), Some(Value::Int(2)));
        assert_eq!(convert_primitive(Value::Double(2.5), P::Int), None);
        assert_eq!(convert_primitive(Value::Double(0.1), P::Float), None);
        assert_eq!(convert_primitive(Value::Double(0.5), P::Float), Some(Value::Float(0.5)));
        assert_eq!(convert_primitive(Value::Long(i64::MAX), P::Double), None);
        assert_eq!(convert_primitive(Value::Long(1 << 40), P::Double), Some(Value::Double((1u64 << 40) as f64)));
        assert_eq!(convert_primitive(Value::Int(16_777_217), P::Float), None);
        assert_eq!(convert_primitive(Value::Boolean(true), P::Int), None);
        assert_eq!(convert_primitive(Value::Int(1), P::Boolean), None);
        assert_eq!(convert_primitive(Value::Boolean(true), P::Boolean), Some(Value::Boolean(true)));
        assert_eq!(convert_primitive(Value::NULL, P::Int), None);
        assert_eq!(convert_primitive(Value::Double(f64::NAN), P::Long), None);
    }
}
