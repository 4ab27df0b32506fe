//! Values with their objects mirrored ([`ValueMirror`]) and displayed as jdb shows them.
//!
//! The protocol's [`Value`] stays the currency of every call: it is `Copy` and carries the kind
//! of object the VM reported (`String`, `Thread`, ...). [`VirtualMachine::value_mirror`] turns one
//! into a [`ValueMirror`] without a round trip, because that tag already says which mirror fits.

use jdwp_protocol::{Tag, Value};

use crate::error::Result;
use crate::mirrors::{
    ArrayReference, ClassLoaderReference, ClassObjectReference, ObjectReference, StringReference, ThreadGroupReference,
    ThreadReference,
};
use crate::vm::VirtualMachine;

/// A value of the target VM with its object, if any, as a mirror of the right kind: JDI's `Value`
/// hierarchy as one enum. `null` is [`ValueMirror::Null`], never an object mirror.
#[derive(Clone, Debug, PartialEq)]
pub enum ValueMirror {
    Boolean(bool),
    Byte(i8),
    Char(u16),
    Short(i16),
    Int(i32),
    Long(i64),
    Float(f32),
    Double(f64),
    /// What a `void` method returns.
    Void,
    Null,
    String(StringReference),
    Thread(ThreadReference),
    ThreadGroup(ThreadGroupReference),
    ClassLoader(ClassLoaderReference),
    ClassObject(ClassObjectReference),
    Array(ArrayReference),
    /// Any other object.
    Object(ObjectReference),
}

impl VirtualMachine {
    /// The mirror for a value, chosen by the tag the VM gave it (no round trip).
    pub fn value_mirror(&self, value: Value) -> ValueMirror {
        match value {
            Value::Boolean(v) => ValueMirror::Boolean(v),
            Value::Byte(v) => ValueMirror::Byte(v),
            Value::Char(v) => ValueMirror::Char(v),
            Value::Short(v) => ValueMirror::Short(v),
            Value::Int(v) => ValueMirror::Int(v),
            Value::Long(v) => ValueMirror::Long(v),
            Value::Float(v) => ValueMirror::Float(v),
            Value::Double(v) => ValueMirror::Double(v),
            Value::Void => ValueMirror::Void,
            Value::Object(_, id) if id.is_null() => ValueMirror::Null,
            Value::Object(tag, id) => {
                let object = ObjectReference::new(self.clone(), id);
                match tag {
                    Tag::String => ValueMirror::String(StringReference(object)),
                    Tag::Thread => ValueMirror::Thread(self.thread(id.into())),
                    Tag::ThreadGroup => ValueMirror::ThreadGroup(self.thread_group(id.into())),
                    Tag::ClassLoader => ValueMirror::ClassLoader(ClassLoaderReference(object)),
                    Tag::ClassObject => ValueMirror::ClassObject(ClassObjectReference(object)),
                    Tag::Array => ValueMirror::Array(ArrayReference(object)),
                    _ => ValueMirror::Object(object),
                }
            }
        }
    }
}

impl ValueMirror {
    /// Back to the protocol's value, tag included.
    pub fn value(&self) -> Value {
        match self {
            ValueMirror::Boolean(v) => Value::Boolean(*v),
            ValueMirror::Byte(v) => Value::Byte(*v),
            ValueMirror::Char(v) => Value::Char(*v),
            ValueMirror::Short(v) => Value::Short(*v),
            ValueMirror::Int(v) => Value::Int(*v),
            ValueMirror::Long(v) => Value::Long(*v),
            ValueMirror::Float(v) => Value::Float(*v),
            ValueMirror::Double(v) => Value::Double(*v),
            ValueMirror::Void => Value::Void,
            ValueMirror::Null => Value::NULL,
            ValueMirror::String(s) => Value::Object(Tag::String, s.0.id()),
            ValueMirror::Thread(t) => Value::Object(Tag::Thread, t.id().into()),
            ValueMirror::ThreadGroup(g) => Value::Object(Tag::ThreadGroup, g.id().into()),
            ValueMirror::ClassLoader(l) => Value::Object(Tag::ClassLoader, l.0.id()),
            ValueMirror::ClassObject(c) => Value::Object(Tag::ClassObject, c.0.id()),
            ValueMirror::Array(a) => Value::Object(Tag::Array, a.0.id()),
            ValueMirror::Object(o) => Value::Object(Tag::Object, o.id()),
        }
    }

    /// Whether this is `null`.
    pub fn is_null(&self) -> bool {
        matches!(self, ValueMirror::Null)
    }

    /// Whether this is a primitive (`void` is not).
    pub fn is_primitive(&self) -> bool {
        matches!(
            self,
            ValueMirror::Boolean(_)
                | ValueMirror::Byte(_)
                | ValueMirror::Char(_)
                | ValueMirror::Short(_)
                | ValueMirror::Int(_)
                | ValueMirror::Long(_)
                | ValueMirror::Float(_)
                | ValueMirror::Double(_)
        )
    }

    /// Any non-null object, as a plain object mirror.
    pub fn as_object(&self) -> Option<ObjectReference> {
        match self {
            ValueMirror::String(s) => Some(s.0.clone()),
            ValueMirror::Thread(t) => Some(t.as_object()),
            ValueMirror::ThreadGroup(g) => Some(g.as_object()),
            ValueMirror::ClassLoader(l) => Some(l.0.clone()),
            ValueMirror::ClassObject(c) => Some(c.0.clone()),
            ValueMirror::Object(o) => Some(o.clone()),
            ValueMirror::Array(a) => Some(a.0.clone()),
            _ => None,
        }
    }

    /// The string, if this is one.
    pub fn as_string(&self) -> Option<&StringReference> {
        match self {
            ValueMirror::String(s) => Some(s),
            _ => None,
        }
    }

    /// The thread, if this is one.
    pub fn as_thread(&self) -> Option<&ThreadReference> {
        match self {
            ValueMirror::Thread(t) => Some(t),
            _ => None,
        }
    }

    /// The thread group, if this is one.
    pub fn as_thread_group(&self) -> Option<&ThreadGroupReference> {
        match self {
            ValueMirror::ThreadGroup(g) => Some(g),
            _ => None,
        }
    }

    /// The class loader, if this is one.
    pub fn as_class_loader(&self) -> Option<&ClassLoaderReference> {
        match self {
            ValueMirror::ClassLoader(l) => Some(l),
            _ => None,
        }
    }

    /// The `java.lang.Class` object, if this is one.
    pub fn as_class_object(&self) -> Option<&ClassObjectReference> {
        match self {
            ValueMirror::ClassObject(c) => Some(c),
            _ => None,
        }
    }

    /// The array, if this is one.
    pub fn as_array(&self) -> Option<&ArrayReference> {
        match self {
            ValueMirror::Array(a) => Some(a),
            _ => None,
        }
    }

    /// A `boolean` value.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            ValueMirror::Boolean(v) => Some(*v),
            _ => None,
        }
    }

    /// An integral value (`byte`, `char`, `short`, `int`, `long`) as `i64`.
    pub fn as_i64(&self) -> Option<i64> {
        match *self {
            ValueMirror::Byte(v) => Some(v.into()),
            ValueMirror::Char(v) => Some(v.into()),
            ValueMirror::Short(v) => Some(v.into()),
            ValueMirror::Int(v) => Some(v.into()),
            ValueMirror::Long(v) => Some(v),
            _ => None,
        }
    }

    /// Any numeric value as `f64` (a `long` beyond 2^53 rounds, as in Java).
    pub fn as_f64(&self) -> Option<f64> {
        match *self {
            ValueMirror::Float(v) => Some(v.into()),
            ValueMirror::Double(v) => Some(v),
            _ => self.as_i64().map(|v| v as f64),
        }
    }

    /// A `char` value (unpaired surrogates become U+FFFD).
    pub fn as_char(&self) -> Option<char> {
        match *self {
            ValueMirror::Char(v) => Some(char::from_u32(v.into()).unwrap_or(char::REPLACEMENT_CHARACTER)),
            _ => None,
        }
    }

    /// The value as jdb's `locals` and `dump` show it (JDI's `toString`): `42`, `x`, `1.0E10`,
    /// `"text"`, `null`, `instance of Demo(id=419)`, `instance of int[3] (id=417)`,
    /// `instance of java.lang.Thread(name='main', id=1)`. Costs round trips for objects (type
    /// name, array length, thread name).
    pub async fn display(&self) -> Result<String> {
        Ok(match self {
            ValueMirror::Boolean(v) => v.to_string(),
            ValueMirror::Byte(v) => v.to_string(),
            ValueMirror::Short(v) => v.to_string(),
            ValueMirror::Int(v) => v.to_string(),
            ValueMirror::Long(v) => v.to_string(),
            ValueMirror::Char(_) => self.as_char().map(String::from).unwrap_or_default(),
            ValueMirror::Float(v) => java_float_string(*v),
            ValueMirror::Double(v) => java_double_string(*v),
            ValueMirror::Void => "<void value>".into(),
            ValueMirror::Null => "null".into(),
            ValueMirror::String(s) => format!("\"{}\"", s.value().await?),
            ValueMirror::Array(a) => {
                let type_name = a.0.reference_type().await?.name();
                let len = a.length().await?;
                // JDI puts the length in the first pair of brackets: int[3][].
                let shown = match type_name.find("[]") {
                    Some(at) => format!("{}[{len}]{}", &type_name[..at], &type_name[at + 2..]),
                    None => type_name,
                };
                format!("instance of {shown} (id={})", a.0.unique_id())
            }
            ValueMirror::Thread(t) => {
                let type_name = t.as_object().reference_type().await?.name();
                format!("instance of {type_name}(name='{}', id={})", t.name().await?, t.as_object().unique_id())
            }
            ValueMirror::ThreadGroup(g) => {
                let type_name = g.as_object().reference_type().await?.name();
                format!("instance of {type_name}(name='{}', id={})", g.name().await?, g.as_object().unique_id())
            }
            ValueMirror::ClassObject(c) => {
                let reflected = c.reflected_type().await?.name();
                let type_name = c.0.reference_type().await?.name();
                format!("instance of {type_name}(reflected class={reflected}, id={})", c.0.unique_id())
            }
            ValueMirror::ClassLoader(ClassLoaderReference(o)) | ValueMirror::Object(o) => {
                format!("instance of {}(id={})", o.reference_type().await?.name(), o.unique_id())
            }
        })
    }
}

/// Java's `Float.toString`.
pub(crate) fn java_float_string(v: f32) -> String {
    // Rust prints an f32 with the shortest digits that read back as the same f32, as Java does.
    java_decimal(f64::from(v), format!("{v}"), format!("{v:e}"))
}

/// Java's `Double.toString`.
pub(crate) fn java_double_string(v: f64) -> String {
    java_decimal(v, format!("{v}"), format!("{v:e}"))
}

/// Java's layout of a floating-point number, given Rust's shortest plain and scientific forms:
/// plain decimal with at least one fractional digit for magnitudes in [1e-3, 1e7), else
/// `d.dddE±n`.
fn java_decimal(v: f64, plain: String, scientific: String) -> String {
    if v.is_nan() {
        return "NaN".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    let magnitude = v.abs();
    if magnitude == 0.0 || (1e-3..1e7).contains(&magnitude) {
        return if plain.contains('.') { plain } else { plain + ".0" };
    }
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let mantissa = if mantissa.contains('.') { mantissa.to_string() } else { format!("{mantissa}.0") };
    format!("{mantissa}E{exponent}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_print_as_java_does() {
        for (v, s) in [
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (1.0, "1.0"),
            (-2.75, "-2.75"),
            (1e7, "1.0E7"),
            (1.0e10, "1.0E10"),
            (0.001, "0.001"),
            (1e-4, "1.0E-4"),
            (1.5e-5, "1.5E-5"),
            (123456.5, "123456.5"),
            (f64::NAN, "NaN"),
            (f64::NEG_INFINITY, "-Infinity"),
        ] {
            assert_eq!(java_double_string(v), s, "{v}");
        }
        assert_eq!(java_float_string(1.5), "1.5");
        assert_eq!(java_float_string(0.1), "0.1");
        assert_eq!(java_float_string(3.0e10), "3.0E10");
    }
}
