//! Values as a DAP client shows them: primitives and strings as themselves, boxed primitives as
//! their value, arrays as `int[1000000]` with indexed children, collections and maps with their
//! size (read from the `size` field their JDK classes keep, so no code runs in the VM), other
//! objects as `Type@id` with named children.

use jdi::{ArrayReference, ObjectReference, Tag, Value, ValueMirror, VirtualMachine};

/// What to show, and what the value expands to.
pub struct Shown {
    pub value: String,
    pub type_name: Option<String>,
    pub children: Children,
}

pub enum Children {
    None,
    Object(ObjectReference),
    Array(ArrayReference, i64),
}

const BOXES: &[&str] = &[
    "java.lang.Integer",
    "java.lang.Long",
    "java.lang.Short",
    "java.lang.Byte",
    "java.lang.Character",
    "java.lang.Boolean",
    "java.lang.Float",
    "java.lang.Double",
];

/// The simple name of a binary class name: `ArrayList` of `java.util.ArrayList`, `Outer$Inner`
/// stays whole (it is what the source calls `Outer.Inner`).
pub fn simple_name(name: &str) -> &str {
    name.rsplit_once('.').map(|(_, s)| s).unwrap_or(name)
}

pub async fn show(vm: &VirtualMachine, v: Value) -> jdi::Result<Shown> {
    let mirror = vm.value_mirror(v);
    let prim = |value: String, t: &str| Shown { value, type_name: Some(t.into()), children: Children::None };
    Ok(match mirror {
        ValueMirror::Null => Shown { value: "null".into(), type_name: None, children: Children::None },
        ValueMirror::String(s) => prim(format!("{:?}", s.value().await?), "String"),
        ValueMirror::Array(a) => {
            let len = a.length().await?;
            let t = a.0.reference_type().await?.name();
            let shown = match t.find("[]") {
                Some(at) => format!("{}[{len}]{}", &t[..at], &t[at + 2..]),
                None => t.clone(),
            };
            Shown { value: shown, type_name: Some(t), children: Children::Array(a, len.into()) }
        }
        ValueMirror::Object(o) => {
            let ty = o.reference_type().await?;
            let name = ty.name();
            if BOXES.contains(&name.as_str())
                && let Some(inner) = o.get_value_by_name("value").await?
            {
                let s = vm.value_mirror(inner).display().await?;
                return Ok(Shown { value: s, type_name: Some(name), children: Children::None });
            }
            let mut value = format!("{}@{}", simple_name(&name), o.unique_id());
            let collection =
                ty.is_assignable_to("Ljava/util/Collection;").await? || ty.is_assignable_to("Ljava/util/Map;").await?;
            if collection && let Some(Value::Int(n)) = o.get_value_by_name("size").await? {
                value = format!("{} (size={n})", simple_name(&name));
            }
            Shown { value, type_name: Some(name), children: Children::Object(o) }
        }
        other => {
            let t = match v {
                Value::Object(..) => None,
                _ => Some(primitive_name(v).to_string()),
            };
            let value = other.display().await?;
            match other.as_object() {
                Some(o) => {
                    let name = o.reference_type().await?.name();
                    Shown {
                        value: format!("{}@{}", simple_name(&name), o.unique_id()),
                        type_name: Some(name),
                        children: Children::Object(o),
                    }
                }
                None => Shown { value, type_name: t, children: Children::None },
            }
        }
    })
}

fn primitive_name(v: Value) -> &'static str {
    match v {
        Value::Boolean(_) => "boolean",
        Value::Byte(_) => "byte",
        Value::Char(_) => "char",
        Value::Short(_) => "short",
        Value::Int(_) => "int",
        Value::Long(_) => "long",
        Value::Float(_) => "float",
        Value::Double(_) => "double",
        Value::Void => "void",
        Value::Object(Tag::String, _) => "String",
        Value::Object(..) => "Object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simple_names() {
        assert_eq!(simple_name("java.util.ArrayList"), "ArrayList");
        assert_eq!(simple_name("a.Outer$Inner"), "Outer$Inner");
        assert_eq!(simple_name("Main"), "Main");
    }
}
