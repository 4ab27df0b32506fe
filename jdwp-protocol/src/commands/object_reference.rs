//! `ObjectReference` (command set 9): operations on one object — its runtime type, instance
//! fields, monitor, method calls, garbage collection and referrers.
//!
//! Also home of [`FieldValue`], the `(fieldID, untagged value)` pair that both this set's
//! `SetValues` and `ClassType.SetValues` send.

use super::prelude::*;

/// A field and the value to store in it, as the `SetValues` commands send them: the field ID,
/// then the value *without* its tag, since the field's declared type already fixes it.
///
/// Encoding needs nothing more. Decoding (the agent's side) asks the reader's
/// [`crate::codec::UntaggedTypes`] context for the field's type and fails with
/// [`DecodeError::UnknownUntaggedType`] when there is no context or it does not know the field.
/// A decoded object value carries the tag the context gives, usually `Object` or `Array` from the
/// field's signature, not the runtime kind the sender may have had in mind (`String`, `Thread`...).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FieldValue {
    pub field_id: FieldId,
    pub value: Value,
}

impl JdwpCodec for FieldValue {
    fn encode(&self, w: &mut Writer) {
        self.field_id.encode(w);
        self.value.encode_untagged(w);
    }

    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let field_id = FieldId::decode(r)?;
        let tag = r
            .untagged_types()
            .and_then(|types| types.field_tag(field_id))
            .ok_or(DecodeError::UnknownUntaggedType("field value"))?;
        let value = Value::decode_untagged(tag, r)?;
        Ok(FieldValue { field_id, value })
    }

    /// The field ID alone: the value's width is unknown until its type is.
    const MIN_SIZE: usize = <FieldId as JdwpCodec>::MIN_SIZE;
}

#[cfg(any(test, feature = "sample"))]
impl crate::sample::Sample for FieldValue {
    /// A field of any type a field can have (no `void`), consistent with earlier samples of the
    /// same field ID: the generator remembers each field's type and answers for it when decoding.
    fn sample(g: &mut crate::sample::Gen) -> Self {
        let field_id = FieldId::sample(g);
        let drawn = match Tag::sample(g) {
            Tag::Void => Tag::Int,
            t => t,
        };
        let value = value_of_tag(drawn, g);
        let tag = g.field_tag_for(field_id, value.tag());
        let value = if tag == value.tag() { value } else { value_of_tag(tag, g) };
        FieldValue { field_id, value }
    }
}

/// A random value of exactly `tag` (value.rs keeps its own equivalent private).
#[cfg(any(test, feature = "sample"))]
fn value_of_tag(tag: Tag, g: &mut crate::sample::Gen) -> Value {
    use crate::sample::Sample;
    match tag {
        Tag::Byte => Value::Byte(Sample::sample(g)),
        Tag::Char => Value::Char(Sample::sample(g)),
        Tag::Float => Value::Float(Sample::sample(g)),
        Tag::Double => Value::Double(Sample::sample(g)),
        Tag::Int => Value::Int(Sample::sample(g)),
        Tag::Void => Value::Void,
        Tag::Long => Value::Long(Sample::sample(g)),
        Tag::Short => Value::Short(Sample::sample(g)),
        Tag::Boolean => Value::Boolean(Sample::sample(g)),
        t => Value::Object(t, Sample::sample(g)),
    }
}

command_set! {
    ObjectReference = 9 {
        /// The object's runtime type: always a class or an array type.
        ReferenceType = 1 {
            out ReferenceType { object: ObjectId }
            reply ReferenceTypeReply { ref_type_tag: TypeTag, type_id: ReferenceTypeId }
        }
        /// Values of instance fields, in the order the fields were asked for.
        GetValues = 2 {
            out GetValues { object: ObjectId, fields: Vec<FieldId> }
            reply GetValuesReply { values: Vec<Value> }
        }
        /// Writes instance fields. Values travel untagged: the decoder needs an
        /// [`crate::codec::UntaggedTypes`] context (see [`FieldValue`]).
        SetValues = 3 {
            out SetValues { object: ObjectId, values: Vec<FieldValue> }
            reply SetValuesReply {}
        }
        /// Who owns the object's monitor (null if nobody), how many times it entered it, and
        /// the threads waiting for it. Every thread must be suspended.
        MonitorInfo = 5 {
            out MonitorInfo { object: ObjectId }
            reply MonitorInfoReply { owner: ThreadId, entry_count: i32, waiters: Vec<ThreadId> }
        }
        /// Calls an instance method on the object in `thread`, which must be suspended by an
        /// event; `clazz` is the class the method is looked up in (`invoke_options` bits in `options`).
        InvokeMethod = 6 {
            out InvokeMethod {
                object: ObjectId,
                thread: ThreadId,
                clazz: ClassId,
                method_id: MethodId,
                arguments: Vec<Value>,
                options: i32,
            }
            reply InvokeMethodReply { return_value: Value, exception: TaggedObjectId }
        }
        /// Keeps the object alive until `EnableCollection`.
        DisableCollection = 7 {
            out DisableCollection { object: ObjectId }
            reply DisableCollectionReply {}
        }
        /// Lets the object be collected again after `DisableCollection`.
        EnableCollection = 8 {
            out EnableCollection { object: ObjectId }
            reply EnableCollectionReply {}
        }
        /// Whether the object has been garbage collected.
        IsCollected = 9 {
            out IsCollected { object: ObjectId }
            reply IsCollectedReply { is_collected: bool }
        }
        /// Reachable objects that hold a direct reference to this one, at most `max_referrers`
        /// of them (0: no limit).
        ReferringObjects = 10 {
            out ReferringObjects { object: ObjectId, max_referrers: i32 }
            reply ReferringObjectsReply { referring_objects: Vec<TaggedObjectId> }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::{UntaggedTypes, encode_body};

    /// Knows one field, of type `int`.
    struct OneIntField(FieldId);

    impl UntaggedTypes for OneIntField {
        fn field_tag(&self, field: FieldId) -> Option<Tag> {
            (field == self.0).then_some(Tag::Int)
        }
        fn array_component_tag(&self, _array: ArrayId) -> Option<Tag> {
            None
        }
    }

    fn sizes() -> IdSizes {
        IdSizes { field_id: 2, object_id: 4, ..IdSizes::default() }
    }

    /// `SetValues` of object 7: one value, field 0x0102 := int 5.
    const SET_VALUES: [u8; 14] = [0, 0, 0, 7, 0, 0, 0, 1, 0x01, 0x02, 0, 0, 0, 5];

    #[test]
    fn field_value_decodes_with_context() {
        let types = OneIntField(FieldId(0x0102));
        let mut r = Reader::with_untagged_types(&SET_VALUES, sizes(), &types);
        let cmd = SetValues::decode(&mut r).unwrap();
        r.finish().unwrap();
        let expected = SetValues {
            object: ObjectId(7),
            values: vec![FieldValue { field_id: FieldId(0x0102), value: Value::Int(5) }],
        };
        assert_eq!(cmd, expected);
        assert_eq!(encode_body(&expected, sizes()), SET_VALUES);
    }

    #[test]
    fn field_value_without_context_is_an_error() {
        let err = crate::codec::decode_body::<SetValues>(&SET_VALUES, sizes()).unwrap_err();
        assert_eq!(err, DecodeError::UnknownUntaggedType("field value"));
    }

    #[test]
    fn field_value_of_unknown_field_is_an_error() {
        let types = OneIntField(FieldId(0x0999));
        let mut r = Reader::with_untagged_types(&SET_VALUES, sizes(), &types);
        assert_eq!(SetValues::decode(&mut r), Err(DecodeError::UnknownUntaggedType("field value")));
    }

    #[test]
    fn class_type_set_values_shares_the_layout() {
        let types = OneIntField(FieldId(0x0102));
        let sizes = IdSizes { reference_type_id: 4, ..sizes() };
        let mut r = Reader::with_untagged_types(&SET_VALUES, sizes, &types);
        let cmd = super::super::class_type::SetValues::decode(&mut r).unwrap();
        assert_eq!(cmd.clazz, ClassId(7));
        assert_eq!(cmd.values, vec![FieldValue { field_id: FieldId(0x0102), value: Value::Int(5) }]);
    }

    #[test]
    fn sampled_field_values_round_trip() {
        for seed in 0..500 {
            // One-byte field IDs make repeated IDs (and so the re-sampling path) common.
            let sizes = IdSizes { field_id: 1, ..IdSizes::default() };
            let mut g = crate::sample::Gen::new(seed, sizes);
            crate::check::round_trip::<SetValues>(&mut g).unwrap();
            crate::check::round_trip::<super::super::class_type::SetValues>(&mut g).unwrap();
        }
    }
}
