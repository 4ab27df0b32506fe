//! Values as JDWP carries them: tagged values, untagged values, tagged object IDs, array regions and
//! locations.

use crate::codec::{DecodeError, JdwpCodec, Reader, Writer};
use crate::constants::{TypeTag, wire_enum};
use crate::ids::*;

wire_enum! {
    /// `Tag`: the type of a value, one signature character.
    Tag: u8 as "value" {
        Array = 91,        // '['
        Byte = 66,         // 'B'
        Char = 67,         // 'C'
        Object = 76,       // 'L'
        Float = 70,        // 'F'
        Double = 68,       // 'D'
        Int = 73,          // 'I'
        Long = 74,         // 'J'
        Short = 83,        // 'S'
        Void = 86,         // 'V'
        Boolean = 90,      // 'Z'
        String = 115,      // 's'
        Thread = 116,      // 't'
        ThreadGroup = 103, // 'g'
        ClassLoader = 108, // 'l'
        ClassObject = 99,  // 'c'
    }
}

impl Tag {
    /// Whether values of this tag are object references.
    pub fn is_object(self) -> bool {
        matches!(
            self,
            Tag::Array
                | Tag::Object
                | Tag::String
                | Tag::Thread
                | Tag::ThreadGroup
                | Tag::ClassLoader
                | Tag::ClassObject
        )
    }

    /// The tag of a JNI type signature's first character (`I`, `Ljava/lang/String;`, `[J`...).
    /// Object signatures give `Object` or `Array`; only the VM can refine them to `String` etc.
    pub fn of_signature(sig: &str) -> Option<Tag> {
        let tag = Tag::from_raw(*sig.as_bytes().first()?)?;
        match tag {
            Tag::String | Tag::Thread | Tag::ThreadGroup | Tag::ClassLoader | Tag::ClassObject => None,
            t => Some(t),
        }
    }

    /// Bytes of an untagged value of this tag, given the object ID width.
    pub fn untagged_size(self, sizes: IdSizes) -> usize {
        match self {
            Tag::Byte | Tag::Boolean => 1,
            Tag::Char | Tag::Short => 2,
            Tag::Int | Tag::Float => 4,
            Tag::Long | Tag::Double => 8,
            Tag::Void => 0,
            _ => sizes.object_id as usize,
        }
    }
}

/// A Java value. Object variants carry the tag the VM reported (`String`, `Thread`, ...), so a
/// round trip keeps it; an object ID of 0 is `null`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value {
    Byte(i8),
    Char(u16),
    Float(f32),
    Double(f64),
    Int(i32),
    Long(i64),
    Short(i16),
    Boolean(bool),
    Void,
    /// Any object reference, tagged with its most specific kind.
    Object(Tag, ObjectId),
}

impl Value {
    pub const NULL: Value = Value::Object(Tag::Object, ObjectId::NULL);

    pub fn tag(&self) -> Tag {
        match self {
            Value::Byte(_) => Tag::Byte,
            Value::Char(_) => Tag::Char,
            Value::Float(_) => Tag::Float,
            Value::Double(_) => Tag::Double,
            Value::Int(_) => Tag::Int,
            Value::Long(_) => Tag::Long,
            Value::Short(_) => Tag::Short,
            Value::Boolean(_) => Tag::Boolean,
            Value::Void => Tag::Void,
            Value::Object(tag, _) => *tag,
        }
    }

    pub fn object_id(&self) -> Option<ObjectId> {
        match self {
            Value::Object(_, id) => Some(*id),
            _ => None,
        }
    }

    /// Writes the value without its tag (the reader must know the type).
    pub fn encode_untagged(&self, w: &mut Writer) {
        match *self {
            Value::Byte(v) => w.i8(v),
            Value::Char(v) => w.u16(v),
            Value::Float(v) => w.f32(v),
            Value::Double(v) => w.f64(v),
            Value::Int(v) => w.i32(v),
            Value::Long(v) => w.i64(v),
            Value::Short(v) => w.i16(v),
            Value::Boolean(v) => w.bool(v),
            Value::Void => {}
            Value::Object(_, id) => id.encode(w),
        }
    }

    /// Reads an untagged value of a known type.
    pub fn decode_untagged(tag: Tag, r: &mut Reader<'_>) -> Result<Value, DecodeError> {
        Ok(match tag {
            Tag::Byte => Value::Byte(r.i8()?),
            Tag::Char => Value::Char(r.u16()?),
            Tag::Float => Value::Float(r.f32()?),
            Tag::Double => Value::Double(r.f64()?),
            Tag::Int => Value::Int(r.i32()?),
            Tag::Long => Value::Long(r.i64()?),
            Tag::Short => Value::Short(r.i16()?),
            Tag::Boolean => Value::Boolean(r.bool()?),
            Tag::Void => Value::Void,
            t => Value::Object(t, ObjectId::decode(r)?),
        })
    }
}

impl JdwpCodec for Value {
    fn encode(&self, w: &mut Writer) {
        w.u8(self.tag() as u8);
        self.encode_untagged(w);
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let tag = Tag::decode(r)?;
        Value::decode_untagged(tag, r)
    }
}

#[cfg(any(test, feature = "sample"))]
impl crate::sample::Sample for Value {
    fn sample(g: &mut crate::sample::Gen) -> Self {
        sample_of_tag(crate::sample::Sample::sample(g), g)
    }
}

#[cfg(any(test, feature = "sample"))]
fn sample_of_tag(tag: Tag, g: &mut crate::sample::Gen) -> Value {
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
        t => Value::Object(t, Sample::sample(g)),
    }
}

/// A value whose tag is implied by context (`untagged-value` in the spec). On the agent side the
/// tag comes from [`crate::codec::UntaggedTypes`]; a client only ever encodes these.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct UntaggedValue(pub Value);

/// An object ID with its tag (`tagged-objectID`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TaggedObjectId {
    pub tag: Tag,
    pub id: ObjectId,
}

impl JdwpCodec for TaggedObjectId {
    fn encode(&self, w: &mut Writer) {
        self.tag.encode(w);
        self.id.encode(w);
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let tag = Tag::decode(r)?;
        let id = ObjectId::decode(r)?;
        Ok(TaggedObjectId { tag, id })
    }
}

#[cfg(any(test, feature = "sample"))]
impl crate::sample::Sample for TaggedObjectId {
    fn sample(g: &mut crate::sample::Gen) -> Self {
        const OBJECT_TAGS: &[Tag] =
            &[Tag::Array, Tag::Object, Tag::String, Tag::Thread, Tag::ThreadGroup, Tag::ClassLoader, Tag::ClassObject];
        TaggedObjectId { tag: OBJECT_TAGS[g.pick(OBJECT_TAGS.len())], id: crate::sample::Sample::sample(g) }
    }
}

/// An executable location: a code index within a method of a type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Location {
    pub type_tag: TypeTag,
    pub class_id: ClassId,
    pub method_id: MethodId,
    /// The bytecode index (the spec leaves its meaning to the VM; HotSpot uses the bci).
    pub index: u64,
}

impl JdwpCodec for Location {
    fn encode(&self, w: &mut Writer) {
        self.type_tag.encode(w);
        self.class_id.encode(w);
        self.method_id.encode(w);
        w.u64(self.index);
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(Location {
            type_tag: TypeTag::decode(r)?,
            class_id: ClassId::decode(r)?,
            method_id: MethodId::decode(r)?,
            index: r.u64()?,
        })
    }
}

#[cfg(any(test, feature = "sample"))]
impl crate::sample::Sample for Location {
    fn sample(g: &mut crate::sample::Gen) -> Self {
        use crate::sample::Sample;
        Location {
            type_tag: Sample::sample(g),
            class_id: Sample::sample(g),
            method_id: Sample::sample(g),
            index: Sample::sample(g),
        }
    }
}

/// A slice of an array's elements (`arrayregion`): one tag, then untagged primitives or tagged objects.
#[derive(Debug, Clone, PartialEq)]
pub enum ArrayRegion {
    Byte(Vec<i8>),
    Char(Vec<u16>),
    Float(Vec<f32>),
    Double(Vec<f64>),
    Int(Vec<i32>),
    Long(Vec<i64>),
    Short(Vec<i16>),
    Boolean(Vec<bool>),
    /// Elements of a reference array: `tag` is the array's (`L` or `[`), each value carries its own.
    Objects {
        tag: Tag,
        values: Vec<Value>,
    },
}

impl ArrayRegion {
    pub fn len(&self) -> usize {
        match self {
            ArrayRegion::Byte(v) => v.len(),
            ArrayRegion::Char(v) => v.len(),
            ArrayRegion::Float(v) => v.len(),
            ArrayRegion::Double(v) => v.len(),
            ArrayRegion::Int(v) => v.len(),
            ArrayRegion::Long(v) => v.len(),
            ArrayRegion::Short(v) => v.len(),
            ArrayRegion::Boolean(v) => v.len(),
            ArrayRegion::Objects { values, .. } => values.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The elements as values.
    pub fn values(&self) -> Vec<Value> {
        match self {
            ArrayRegion::Byte(v) => v.iter().map(|x| Value::Byte(*x)).collect(),
            ArrayRegion::Char(v) => v.iter().map(|x| Value::Char(*x)).collect(),
            ArrayRegion::Float(v) => v.iter().map(|x| Value::Float(*x)).collect(),
            ArrayRegion::Double(v) => v.iter().map(|x| Value::Double(*x)).collect(),
            ArrayRegion::Int(v) => v.iter().map(|x| Value::Int(*x)).collect(),
            ArrayRegion::Long(v) => v.iter().map(|x| Value::Long(*x)).collect(),
            ArrayRegion::Short(v) => v.iter().map(|x| Value::Short(*x)).collect(),
            ArrayRegion::Boolean(v) => v.iter().map(|x| Value::Boolean(*x)).collect(),
            ArrayRegion::Objects { values, .. } => values.clone(),
        }
    }
}

fn encode_all<T: Copy>(w: &mut Writer, tag: Tag, items: &[T], put: impl Fn(&mut Writer, T)) {
    w.u8(tag as u8);
    w.count(items.len());
    for &x in items {
        put(w, x);
    }
}

impl JdwpCodec for ArrayRegion {
    fn encode(&self, w: &mut Writer) {
        match self {
            ArrayRegion::Byte(v) => encode_all(w, Tag::Byte, v, Writer::i8),
            ArrayRegion::Char(v) => encode_all(w, Tag::Char, v, Writer::u16),
            ArrayRegion::Float(v) => encode_all(w, Tag::Float, v, Writer::f32),
            ArrayRegion::Double(v) => encode_all(w, Tag::Double, v, Writer::f64),
            ArrayRegion::Int(v) => encode_all(w, Tag::Int, v, Writer::i32),
            ArrayRegion::Long(v) => encode_all(w, Tag::Long, v, Writer::i64),
            ArrayRegion::Short(v) => encode_all(w, Tag::Short, v, Writer::i16),
            ArrayRegion::Boolean(v) => encode_all(w, Tag::Boolean, v, Writer::bool),
            ArrayRegion::Objects { tag, values } => {
                w.u8(*tag as u8);
                values.encode(w);
            }
        }
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let tag = Tag::decode(r)?;
        Ok(match tag {
            Tag::Byte => ArrayRegion::Byte(Vec::decode(r)?),
            Tag::Char => ArrayRegion::Char(Vec::decode(r)?),
            Tag::Float => ArrayRegion::Float(Vec::decode(r)?),
            Tag::Double => ArrayRegion::Double(Vec::decode(r)?),
            Tag::Int => ArrayRegion::Int(Vec::decode(r)?),
            Tag::Long => ArrayRegion::Long(Vec::decode(r)?),
            Tag::Short => ArrayRegion::Short(Vec::decode(r)?),
            Tag::Boolean => ArrayRegion::Boolean(Vec::decode(r)?),
            Tag::Void => return Err(DecodeError::InvalidTag { what: "array region", tag: Tag::Void as u8 }),
            tag => ArrayRegion::Objects { tag, values: Vec::<Value>::decode(r)? },
        })
    }
}

#[cfg(any(test, feature = "sample"))]
impl crate::sample::Sample for ArrayRegion {
    fn sample(g: &mut crate::sample::Gen) -> Self {
        use crate::sample::Sample;
        match g.pick(9) {
            0 => ArrayRegion::Byte(Sample::sample(g)),
            1 => ArrayRegion::Char(Sample::sample(g)),
            2 => ArrayRegion::Float(Sample::sample(g)),
            3 => ArrayRegion::Double(Sample::sample(g)),
            4 => ArrayRegion::Int(Sample::sample(g)),
            5 => ArrayRegion::Long(Sample::sample(g)),
            6 => ArrayRegion::Short(Sample::sample(g)),
            7 => ArrayRegion::Boolean(Sample::sample(g)),
            _ => {
                let tag = if g.bool() { Tag::Object } else { Tag::Array };
                let values =
                    (0..g.len()).map(|_| Value::Object(TaggedObjectId::sample(g).tag, Sample::sample(g))).collect();
                ArrayRegion::Objects { tag, values }
            }
        }
    }
}
