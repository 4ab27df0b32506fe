//! The [`Type`] of values (fields, variables, arguments, results) and the [`PrimitiveType`]s,
//! which have no mirror of their own in the VM.

use jdwp_protocol::Tag;

use crate::mirrors::ReferenceType;
use crate::names;

/// A primitive type. Primitive types are not reference types: they have no [`ReferenceType`]
/// mirror and [`VirtualMachine::classes_by_name`] never returns them; name them with
/// [`PrimitiveType::from_name`] instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PrimitiveType {
    /// `boolean`
    Boolean,
    /// `byte`
    Byte,
    /// `char`
    Char,
    /// `short`
    Short,
    /// `int`
    Int,
    /// `long`
    Long,
    /// `float`
    Float,
    /// `double`
    Double,
}

impl PrimitiveType {
    /// Every primitive type.
    pub const ALL: [PrimitiveType; 8] = [
        PrimitiveType::Boolean,
        PrimitiveType::Byte,
        PrimitiveType::Char,
        PrimitiveType::Short,
        PrimitiveType::Int,
        PrimitiveType::Long,
        PrimitiveType::Float,
        PrimitiveType::Double,
    ];

    /// `I` → `Int`; `None` for anything else (including `V`).
    pub fn from_signature(sig: &str) -> Option<PrimitiveType> {
        PrimitiveType::ALL.into_iter().find(|p| p.signature() == sig)
    }

    /// `int` → `Int`.
    pub fn from_name(name: &str) -> Option<PrimitiveType> {
        PrimitiveType::ALL.into_iter().find(|p| p.name() == name)
    }

    /// The JNI signature: `I`.
    pub fn signature(self) -> &'static str {
        match self {
            PrimitiveType::Boolean => "Z",
            PrimitiveType::Byte => "B",
            PrimitiveType::Char => "C",
            PrimitiveType::Short => "S",
            PrimitiveType::Int => "I",
            PrimitiveType::Long => "J",
            PrimitiveType::Float => "F",
            PrimitiveType::Double => "D",
        }
    }

    /// The Java keyword: `int`.
    pub fn name(self) -> &'static str {
        match self {
            PrimitiveType::Boolean => "boolean",
            PrimitiveType::Byte => "byte",
            PrimitiveType::Char => "char",
            PrimitiveType::Short => "short",
            PrimitiveType::Int => "int",
            PrimitiveType::Long => "long",
            PrimitiveType::Float => "float",
            PrimitiveType::Double => "double",
        }
    }

    /// The tag of values of this type.
    pub fn tag(self) -> Tag {
        match self {
            PrimitiveType::Boolean => Tag::Boolean,
            PrimitiveType::Byte => Tag::Byte,
            PrimitiveType::Char => Tag::Char,
            PrimitiveType::Short => Tag::Short,
            PrimitiveType::Int => Tag::Int,
            PrimitiveType::Long => Tag::Long,
            PrimitiveType::Float => Tag::Float,
            PrimitiveType::Double => Tag::Double,
        }
    }
}

/// The type of a field, variable, argument or method result.
#[derive(Debug, Clone, PartialEq)]
pub enum Type {
    /// `int`, `boolean`...
    Primitive(PrimitiveType),
    /// The result type of methods that return nothing.
    Void,
    /// A class, interface or array type.
    Reference(ReferenceType),
}

impl Type {
    /// The JNI signature: `I`, `V`, `Ljava/lang/String;`.
    pub fn signature(&self) -> String {
        match self {
            Type::Primitive(p) => p.signature().to_string(),
            Type::Void => "V".to_string(),
            Type::Reference(r) => r.signature().to_string(),
        }
    }

    /// The Java name: `int`, `void`, `java.lang.String[]`.
    pub fn name(&self) -> String {
        names::type_name_of_signature(&self.signature())
    }

    /// The reference type, unless primitive or void.
    pub fn as_reference(&self) -> Option<&ReferenceType> {
        match self {
            Type::Reference(r) => Some(r),
            _ => None,
        }
    }
}
