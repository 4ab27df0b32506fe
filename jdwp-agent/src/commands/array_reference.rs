//! `ArrayReference` (command set 13): length and elements of arrays.
//!
//! Bounds follow the JDK's agent: the first index must name an element (so no range, not even an
//! empty one, starts at the length), and a length of -1 means "to the end".

use jdwp_protocol::commands::array_reference::*;
use jdwp_protocol::{ArrayId, ArrayRegion, ErrorCode, Tag, Value};
use jni_sys::jobject;

use crate::agent::Agent;
use crate::dispatch::Entry;
use crate::jni::Jni;
use jdwp_protocol::commands as c;

/// An array by ID, with its class signature (`[I`, `[Ljava/lang/String;`, ...).
fn array(agent: &Agent, jni: Jni, id: ArrayId) -> Result<(jobject, String), ErrorCode> {
    let obj = agent.array(jni, id)?;
    let class = jni.get_object_class(obj)?;
    let (signature, _) = agent.jvmti.get_class_signature(class)?;
    jni.delete_local_ref(class);
    if signature.starts_with('[') { Ok((obj, signature)) } else { Err(ErrorCode::INVALID_ARRAY) }
}

pub fn length(agent: &Agent, cmd: Length) -> Result<LengthReply, ErrorCode> {
    let jni = agent.jni()?;
    let (obj, _) = array(agent, jni, cmd.array_object)?;
    Ok(LengthReply { array_length: jni.get_array_length(obj)? })
}

/// The elements `first..first + count` checked against an array of `len`: `count` -1 is the rest.
pub fn checked_range(len: i32, first: i32, count: i32) -> Result<(i32, i32), ErrorCode> {
    if first < 0 || first >= len {
        return Err(ErrorCode::INVALID_INDEX);
    }
    let count = if count == -1 { len - first } else { count };
    if count < 0 || i64::from(first) + i64::from(count) > i64::from(len) {
        return Err(ErrorCode::INVALID_LENGTH);
    }
    Ok((first, count))
}

pub fn get_values(agent: &Agent, cmd: GetValues) -> Result<GetValuesReply, ErrorCode> {
    let jni = agent.jni()?;
    let (obj, signature) = array(agent, jni, cmd.array_object)?;
    let (first, count) = checked_range(jni.get_array_length(obj)?, cmd.first_index, cmd.length)?;
    let n = count as usize;
    macro_rules! region {
        ($t:ty, $variant:ident, $convert:expr) => {{
            let mut buf = vec![<$t>::default(); n];
            // SAFETY: the array's class signature says its elements are of this type.
            unsafe { jni.get_array_region::<$t>(obj, first, &mut buf) }?;
            ArrayRegion::$variant(buf.into_iter().map($convert).collect())
        }};
    }
    let values = match &signature[1..] {
        "Z" => region!(u8, Boolean, |z| z != 0),
        "B" => region!(i8, Byte, |x| x),
        "C" => region!(u16, Char, |x| x),
        "S" => region!(i16, Short, |x| x),
        "I" => region!(i32, Int, |x| x),
        "J" => region!(i64, Long, |x| x),
        "F" => region!(f32, Float, |x| x),
        "D" => region!(f64, Double, |x| x),
        component => {
            let tag = Tag::of_signature(component).ok_or(ErrorCode::INVALID_ARRAY)?;
            let mut values = Vec::with_capacity(n);
            for i in first..first + count {
                let element = jni.get_object_array_element(obj, i)?;
                values.push(crate::values::object_value(agent, jni, element)?);
                if !element.is_null() {
                    jni.delete_local_ref(element);
                }
            }
            ArrayRegion::Objects { tag, values }
        }
    };
    Ok(GetValuesReply { values })
}

/// Stores elements. The values arrive untagged, read as the component type; object values must be
/// instances of the component type. Everything is checked before anything is stored.
pub fn set_values(agent: &Agent, cmd: SetValues) -> Result<SetValuesReply, ErrorCode> {
    let jni = agent.jni()?;
    let (obj, signature) = array(agent, jni, cmd.array_object)?;
    let count = i32::try_from(cmd.values.len()).map_err(|_| ErrorCode::INVALID_LENGTH)?;
    let (first, _) = checked_range(jni.get_array_length(obj)?, cmd.first_index, count)?;
    let values = &cmd.values;
    macro_rules! store {
        ($t:ty, $variant:ident, $convert:expr) => {{
            let mut buf: Vec<$t> = Vec::with_capacity(values.len());
            for v in values {
                let Value::$variant(x) = *v else { return Err(ErrorCode::TYPE_MISMATCH) };
                buf.push($convert(x));
            }
            // SAFETY: the array's class signature says its elements are of this type.
            unsafe { jni.set_array_region::<$t>(obj, first, &buf) }?;
        }};
    }
    match &signature[1..] {
        "Z" => store!(u8, Boolean, u8::from),
        "B" => store!(i8, Byte, |x| x),
        "C" => store!(u16, Char, |x| x),
        "S" => store!(i16, Short, |x| x),
        "I" => store!(i32, Int, |x| x),
        "J" => store!(i64, Long, |x| x),
        "F" => store!(f32, Float, |x| x),
        "D" => store!(f64, Double, |x| x),
        _ => {
            let class = jni.get_object_class(obj)?;
            let component = crate::values::component_type(agent, jni, class)?;
            let mut elements = Vec::with_capacity(values.len());
            for v in values {
                let Value::Object(_, id) = *v else { return Err(ErrorCode::TYPE_MISMATCH) };
                let element = agent.object(jni, id)?;
                if !element.is_null() && !jni.is_instance_of(element, component) {
                    return Err(ErrorCode::TYPE_MISMATCH);
                }
                elements.push(element);
            }
            for (i, element) in (first..).zip(elements) {
                jni.set_object_array_element(obj, i, element)?;
                if !element.is_null() {
                    jni.delete_local_ref(element);
                }
            }
        }
    }
    Ok(SetValuesReply {})
}

/// This module's commands.
pub(super) static TABLE: &[Entry<Agent>] = crate::dispatch_table!(Agent;
    c::array_reference::Length => length,
    c::array_reference::GetValues => get_values,
    c::array_reference::SetValues => set_values,
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_start_inside_the_array() {
        assert_eq!(checked_range(3, 0, 3), Ok((0, 3)));
        assert_eq!(checked_range(3, 2, 1), Ok((2, 1)));
        assert_eq!(checked_range(3, 1, -1), Ok((1, 2)), "-1 is the rest");
        assert_eq!(checked_range(3, 0, 0), Ok((0, 0)));
        assert_eq!(checked_range(3, 3, 0), Err(ErrorCode::INVALID_INDEX), "as the JDK's agent");
        assert_eq!(checked_range(0, 0, 0), Err(ErrorCode::INVALID_INDEX));
        assert_eq!(checked_range(3, -1, 1), Err(ErrorCode::INVALID_INDEX));
        assert_eq!(checked_range(3, 0, 4), Err(ErrorCode::INVALID_LENGTH));
        assert_eq!(checked_range(3, 1, -2), Err(ErrorCode::INVALID_LENGTH));
        assert_eq!(checked_range(i32::MAX, 1, i32::MAX), Err(ErrorCode::INVALID_LENGTH), "no overflow");
    }
}
