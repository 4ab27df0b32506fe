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

/// The largest reply body a JDWP packet carries: its length field is read as a signed 32-bit
/// count (by JDI, and by the JDK's transports) and includes the 11-byte header.
pub const MAX_REPLY_BODY: u64 = i32::MAX as u64 - 11;

/// The size of a `GetValues` reply for `count` elements of this component signature: the tag and
/// count, then each element (a tag and an ID for objects). `INVALID_LENGTH` if no packet could
/// carry it, before anything is read or allocated.
pub fn checked_reply_size(component: &str, count: i32) -> Result<u64, ErrorCode> {
    let width: u64 = match component {
        "Z" | "B" => 1,
        "C" | "S" => 2,
        "I" | "F" => 4,
        "J" | "D" => 8,
        _ => 1 + u64::from(crate::agent::ID_SIZES.object_id),
    };
    let size = 5 + width * u64::try_from(count).map_err(|_| ErrorCode::INVALID_LENGTH)?;
    if size > MAX_REPLY_BODY { Err(ErrorCode::INVALID_LENGTH) } else { Ok(size) }
}

/// Reads elements. The range is checked against the array's real length, and the reply's size
/// against what a packet can carry, so a count costs no more than the elements it names; object
/// elements hold one local reference at a time.
pub fn get_values(agent: &Agent, cmd: GetValues) -> Result<GetValuesReply, ErrorCode> {
    let jni = agent.jni()?;
    let (obj, signature) = array(agent, jni, cmd.array_object)?;
    let (first, count) = checked_range(jni.get_array_length(obj)?, cmd.first_index, cmd.length)?;
    checked_reply_size(&signature[1..], count)?;
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
/// instances of the component type. Everything is checked before anything is stored. Object
/// values are resolved twice (checked, then stored), each holding one local reference at a time,
/// so that their count (up to what a packet holds) costs no JNI references; an object collected
/// in between (nothing else holding it) fails the second pass with `INVALID_OBJECT`.
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
            let element = |v: &Value| -> Result<jni_sys::jobject, ErrorCode> {
                let Value::Object(_, id) = *v else { return Err(ErrorCode::TYPE_MISMATCH) };
                let element = agent.object(jni, id)?;
                if !element.is_null() && !jni.is_instance_of(element, component) {
                    jni.delete_local_ref(element);
                    return Err(ErrorCode::TYPE_MISMATCH);
                }
                Ok(element)
            };
            for v in values {
                let e = element(v)?;
                if !e.is_null() {
                    jni.delete_local_ref(e);
                }
            }
            for (i, v) in (first..).zip(values) {
                let e = element(v)?;
                let stored = jni.set_object_array_element(obj, i, e);
                if !e.is_null() {
                    jni.delete_local_ref(e);
                }
                stored?;
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

    #[test]
    fn replies_must_fit_in_a_packet() {
        assert_eq!(checked_reply_size("I", 3), Ok(5 + 12));
        assert_eq!(checked_reply_size("Ljava/lang/String;", 2), Ok(5 + 18));
        assert_eq!(checked_reply_size("[I", 1), Ok(5 + 9));
        // The biggest byte array fits; a quarter of that many longs or objects does not.
        assert!(checked_reply_size("B", i32::MAX - 100).is_ok());
        assert_eq!(checked_reply_size("J", i32::MAX / 4), Err(ErrorCode::INVALID_LENGTH));
        assert_eq!(checked_reply_size("Ljava/lang/Object;", i32::MAX / 8), Err(ErrorCode::INVALID_LENGTH));
        assert_eq!(checked_reply_size("I", -1), Err(ErrorCode::INVALID_LENGTH));
    }
}
