//! `ArrayReference` (command set 13): an array's length and elements.
//!
//! `SetValues` sends its elements untagged: their type is the array's component type, which only
//! the VM knows. Its command type is therefore written by hand; decoding it needs an
//! [`crate::codec::UntaggedTypes`] context (the agent's), encoding does not.

use super::prelude::*;

command_set! {
    ArrayReference = 13 {
        /// The number of elements of the array.
        Length = 1 {
            out Length { array_object: ArrayId }
            reply LengthReply { array_length: i32 }
        }
        /// `length` elements from `first_index` on (the range must lie inside the array):
        /// primitives untagged, references tagged.
        GetValues = 2 {
            out GetValues { array_object: ArrayId, first_index: i32, length: i32 }
            reply GetValuesReply { values: ArrayRegion }
        }
        /// Stores values into consecutive elements from `first_index` on. Primitive values must
        /// have exactly the component type; references must be assignable to it.
        SetValues = 3 {
            out SetValues;
            reply SetValuesReply {}
        }
    }
}

/// The command of `ArrayReference.SetValues`: an array, the first index to store at, and the
/// values, sent as a count followed by untagged values.
///
/// Every value is written without its tag, so they must all have the array's component type; a
/// value of another type is written anyway and the VM sees garbage or rejects it.
#[derive(Debug, Clone, PartialEq)]
pub struct SetValues {
    pub array_object: ArrayId,
    pub first_index: i32,
    pub values: Vec<Value>,
}

impl JdwpCodec for SetValues {
    fn encode(&self, w: &mut Writer) {
        self.array_object.encode(w);
        w.i32(self.first_index);
        w.count(self.values.len());
        for value in &self.values {
            value.encode_untagged(w);
        }
    }

    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let array_object = ArrayId::decode(r)?;
        let first_index = r.i32()?;
        let tag = r
            .untagged_types()
            .and_then(|types| types.array_component_tag(array_object))
            .ok_or(DecodeError::UnknownUntaggedType("array element"))?;
        let n = r.count(tag.untagged_size(r.sizes()))?;
        let mut values = Vec::with_capacity(n);
        for _ in 0..n {
            values.push(Value::decode_untagged(tag, r)?);
        }
        Ok(SetValues { array_object, first_index, values })
    }
}

#[cfg(any(test, feature = "sample"))]
impl crate::sample::Sample for SetValues {
    fn sample(g: &mut crate::sample::Gen) -> Self {
        use crate::sample::Sample;
        let array_object = ArrayId::sample(g);
        let mut tag = Tag::sample(g);
        while tag == Tag::Void {
            tag = Tag::sample(g);
        }
        // An array seen before keeps the component type chosen for it then.
        let tag = g.array_tag_for(array_object, tag);
        let first_index = Sample::sample(g);
        let values = (0..g.len()).map(|_| sample_value_of(tag, g)).collect();
        SetValues { array_object, first_index, values }
    }
}

/// A random value of the given type (object kinds carry `tag` itself, as an untagged decode does).
#[cfg(any(test, feature = "sample"))]
fn sample_value_of(tag: Tag, g: &mut crate::sample::Gen) -> Value {
    use crate::sample::Sample;
    match tag {
        Tag::Byte => Value::Byte(Sample::sample(g)),
        Tag::Char => Value::Char(Sample::sample(g)),
        Tag::Float => Value::Float(Sample::sample(g)),
        Tag::Double => Value::Double(Sample::sample(g)),
        Tag::Int => Value::Int(Sample::sample(g)),
        Tag::Long => Value::Long(Sample::sample(g)),
        Tag::Short => Value::Short(Sample::sample(g)),
        Tag::Boolean => Value::Boolean(Sample::sample(g)),
        Tag::Void => Value::Void,
        object => Value::Object(object, Sample::sample(g)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::{decode_body, encode_body};
    use crate::ids::IdSizes;

    /// An oracle that knows the component type of one array.
    struct OneArray(ArrayId, Tag);

    impl crate::codec::UntaggedTypes for OneArray {
        fn field_tag(&self, _: FieldId) -> Option<Tag> {
            None
        }
        fn array_component_tag(&self, array: ArrayId) -> Option<Tag> {
            (array == self.0).then_some(self.1)
        }
    }

    fn sizes() -> IdSizes {
        IdSizes { field_id: 4, method_id: 4, object_id: 4, reference_type_id: 4, frame_id: 4 }
    }

    #[test]
    fn set_values_is_untagged_on_the_wire() {
        let cmd =
            SetValues { array_object: ArrayId(7), first_index: 2, values: vec![Value::Short(-1), Value::Short(3)] };
        let bytes = encode_body(&cmd, sizes());
        assert_eq!(bytes, [0, 0, 0, 7, 0, 0, 0, 2, 0, 0, 0, 2, 0xff, 0xff, 0, 3]);
        let oracle = OneArray(ArrayId(7), Tag::Short);
        let mut r = Reader::with_untagged_types(&bytes, sizes(), &oracle);
        assert_eq!(SetValues::decode(&mut r).unwrap(), cmd);
        r.finish().unwrap();
    }

    #[test]
    fn set_values_of_objects_take_the_component_tag() {
        let cmd = SetValues {
            array_object: ArrayId(9),
            first_index: 0,
            values: vec![Value::Object(Tag::String, ObjectId(5))],
        };
        let bytes = encode_body(&cmd, sizes());
        assert_eq!(bytes, [0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 5]);
        let oracle = OneArray(ArrayId(9), Tag::String);
        let mut r = Reader::with_untagged_types(&bytes, sizes(), &oracle);
        assert_eq!(SetValues::decode(&mut r).unwrap(), cmd);
    }

    #[test]
    fn set_values_without_context_is_an_error() {
        let cmd = SetValues { array_object: ArrayId(7), first_index: 0, values: vec![Value::Int(1)] };
        let bytes = encode_body(&cmd, sizes());
        assert_eq!(decode_body::<SetValues>(&bytes, sizes()), Err(DecodeError::UnknownUntaggedType("array element")));
        // A context that does not know this array is no better.
        let oracle = OneArray(ArrayId(8), Tag::Int);
        let mut r = Reader::with_untagged_types(&bytes, sizes(), &oracle);
        assert_eq!(SetValues::decode(&mut r), Err(DecodeError::UnknownUntaggedType("array element")));
    }

    #[test]
    fn set_values_count_beyond_the_body_is_rejected() {
        // Claims 1000 ints but carries one.
        let bytes = [0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0x03, 0xe8, 0, 0, 0, 1];
        let oracle = OneArray(ArrayId(7), Tag::Int);
        let mut r = Reader::with_untagged_types(&bytes, sizes(), &oracle);
        assert!(matches!(SetValues::decode(&mut r), Err(DecodeError::Truncated { .. })));
    }

    #[test]
    fn sampled_set_values_round_trip() {
        let mut g = crate::sample::Gen::new(42, sizes());
        for _ in 0..200 {
            crate::check::round_trip::<SetValues>(&mut g).unwrap();
        }
    }
}
