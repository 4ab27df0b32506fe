//! The three kinds of reference type and what only they can do: [`ClassType`] (static field
//! writes, static calls, object creation, subclasses), [`InterfaceType`] (static calls,
//! implementors) and [`ArrayType`] (array creation, component type). Each dereferences to its
//! [`ReferenceType`].
//!
//! Values sent to the VM are checked against the declared types first, as JDI does: `SetValues`
//! carries values without tags, so a wrong one would be stored as garbage rather than refused.

use std::ops::Deref;

use jdwp_protocol::commands::{
    array_reference as ar, array_type as at, class_type as ct, interface_type as it, object_reference as or,
};
use jdwp_protocol::{ObjectId, Tag, TaggedObjectId, TypeTag, Value};

use super::object::InvokeResult;
use super::reference_type::join_all;
use crate::error::{JdiError, Result};
use crate::mirrors::{
    ArrayReference, Field, Method, ObjectReference, PrimitiveType, ReferenceType, ThreadReference, Type,
};
use crate::names;
use crate::vm::VirtualMachine;

macro_rules! kind_wrapper {
    ($(#[$meta:meta])* $name:ident) => {
        $(#[$meta])*
        #[derive(Clone, PartialEq, Eq, Hash)]
        pub struct $name(ReferenceType);

        impl $name {
            pub(crate) fn new(t: ReferenceType) -> $name {
                $name(t)
            }

            /// This type as a plain reference type.
            pub fn reference_type(&self) -> &ReferenceType {
                &self.0
            }
        }

        impl Deref for $name {
            type Target = ReferenceType;
            fn deref(&self) -> &ReferenceType {
                &self.0
            }
        }

        impl AsRef<ReferenceType> for $name {
            fn as_ref(&self) -> &ReferenceType {
                &self.0
            }
        }

        impl From<$name> for ReferenceType {
            fn from(t: $name) -> ReferenceType {
                t.0
            }
        }

        impl std::fmt::Debug for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "{} {:?}", stringify!($name), self.0)
            }
        }
    };
}

kind_wrapper! {
    /// A class (also enums, records and the primitive classes such as `int.class`).
    ClassType
}
kind_wrapper! {
    /// An interface (also annotation types).
    InterfaceType
}
kind_wrapper! {
    /// An array type (`int[]`, `java.lang.String[][]`).
    ArrayType
}

fn classes(types: Vec<ReferenceType>) -> Vec<ClassType> {
    types.into_iter().filter_map(|t| t.as_class()).collect()
}

fn interfaces(types: Vec<ReferenceType>) -> Vec<InterfaceType> {
    types.into_iter().filter_map(|t| t.as_interface()).collect()
}

/// Loaded, prepared types of one kind, each paired with a cached per-type answer. Types that
/// vanish or are not ready meanwhile are skipped: they cannot be the answer.
async fn loaded_with<T, F, Fut>(vm: &VirtualMachine, kind: TypeTag, ask: F) -> Result<Vec<(ReferenceType, T)>>
where
    F: Fn(ReferenceType) -> Fut,
    Fut: std::future::Future<Output = Result<T>>,
{
    let types: Vec<ReferenceType> = vm.all_classes().await?.into_iter().filter(|t| t.tag() == kind).collect();
    let answers = join_all(types.iter().map(|t| ask(t.clone()))).await;
    let mut out = Vec::new();
    for (t, answer) in types.into_iter().zip(answers) {
        match answer {
            Ok(a) => out.push((t, a)),
            Err(e) if is_gone(&e) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(out)
}

fn is_gone(e: &JdiError) -> bool {
    use jdwp_protocol::ErrorCode;
    matches!(e.code(), Some(ErrorCode::INVALID_CLASS | ErrorCode::CLASS_NOT_PREPARED | ErrorCode::INVALID_OBJECT))
}

impl ClassType {
    /// The superclass; `None` for `java.lang.Object`.
    pub async fn superclass(&self) -> Result<Option<ClassType>> {
        Ok(self.0.superclass().await?.and_then(|t| t.as_class()))
    }

    /// The interfaces this class declares it implements.
    pub async fn interfaces(&self) -> Result<Vec<InterfaceType>> {
        Ok(interfaces(self.0.interfaces().await?))
    }

    /// Every interface the class implements, directly or through superclasses and
    /// superinterfaces, each once.
    pub async fn all_interfaces(&self) -> Result<Vec<InterfaceType>> {
        Ok(interfaces(self.0.all_interfaces().await?))
    }

    /// The loaded classes whose direct superclass is this one. Asks about every loaded class
    /// the first time (answers are cached, later calls cost one round trip).
    pub async fn subclasses(&self) -> Result<Vec<ClassType>> {
        let all = loaded_with(self.vm(), TypeTag::Class, |t| async move { t.superclass_id().await }).await?;
        Ok(classes(all.into_iter().filter(|(_, sup)| *sup == Some(self.id())).map(|(t, _)| t).collect()))
    }

    /// Whether this is an enum class (its direct superclass is `java.lang.Enum`).
    pub async fn is_enum(&self) -> Result<bool> {
        Ok(self.superclass().await?.is_some_and(|s| s.signature() == "Ljava/lang/Enum;"))
    }

    /// The non-abstract method with this name and signature that a call on an instance of
    /// exactly this class would run: declared here, inherited from a superclass, or an
    /// interface's default method.
    pub async fn concrete_method_by_name(&self, name: &str, signature: &str) -> Result<Option<Method>> {
        let candidates = self.methods_by_name_and_signature(name, signature).await?;
        Ok(candidates.into_iter().find(|m| !m.is_abstract()))
    }

    /// Writes one static field (see [`ClassType::set_values`]).
    pub async fn set_value(&self, field: &Field, value: Value) -> Result<()> {
        self.set_values(&[(field.clone(), value)]).await
    }

    /// Writes static fields of this class or its supertypes. Each field must be static and not
    /// final; each value must fit the field's type (primitives convert when no information is
    /// lost, objects must be instances of it); else [`JdiError::InvalidArgument`] and nothing is
    /// sent.
    pub async fn set_values(&self, values: &[(Field, Value)]) -> Result<()> {
        let mut checked = Vec::with_capacity(values.len());
        for (field, value) in values {
            self.check_static_member(field).await?;
            if field.is_final() {
                return Err(JdiError::InvalidArgument(format!("field {} is final", field.name)));
            }
            let declaring = field.declaring_type().await?;
            let what = format!("field {}", field.name);
            let value = prepare_value(&declaring, *value, &field.signature, &what).await?;
            checked.push(or::FieldValue { field_id: field.id, value });
        }
        self.vm().send(&ct::SetValues { clazz: self.id().into(), values: checked }).await.map(drop)
    }

    /// Runs a static method of this class or a superclass in `thread`, which must be suspended
    /// by an event. `options` are `jdwp_protocol::invoke_options` bits. While the method runs,
    /// all threads resume unless `INVOKE_SINGLE_THREADED` is given.
    pub async fn invoke_method(
        &self,
        thread: &ThreadReference,
        method: &Method,
        arguments: Vec<Value>,
        options: i32,
    ) -> Result<InvokeResult> {
        if !method.is_static() || method.is_static_initializer() {
            return Err(JdiError::InvalidArgument(format!("{} is not a static method", method.name())));
        }
        self.check_in_class_chain(method).await?;
        let arguments = prepare_arguments(method, arguments).await?;
        let cmd = ct::InvokeMethod {
            clazz: self.id().into(),
            thread: thread.id(),
            method_id: method.id(),
            arguments,
            options,
        };
        let r = self.vm().send(&cmd).await?;
        Ok(invoke_result(self.vm(), r.return_value, r.exception))
    }

    /// Creates an instance with `constructor` (declared by this class) in `thread`, which must
    /// be suspended by an event. The new object comes back as [`InvokeResult::Returned`].
    pub async fn new_instance(
        &self,
        thread: &ThreadReference,
        constructor: &Method,
        arguments: Vec<Value>,
        options: i32,
    ) -> Result<InvokeResult> {
        if !constructor.is_constructor() || constructor.declaring_type_id() != self.id() {
            return Err(JdiError::InvalidArgument(format!(
                "{}{} is not a constructor of {}",
                constructor.name(),
                constructor.signature(),
                self.name()
            )));
        }
        let arguments = prepare_arguments(constructor, arguments).await?;
        let cmd = ct::NewInstance {
            clazz: self.id().into(),
            thread: thread.id(),
            method_id: constructor.id(),
            arguments,
            options,
        };
        let r = self.vm().send(&cmd).await?;
        let object = Value::Object(r.new_object.tag, r.new_object.id);
        Ok(invoke_result(self.vm(), object, r.exception))
    }

    async fn check_in_class_chain(&self, method: &Method) -> Result<()> {
        let mut class = Some(self.clone());
        while let Some(c) = class {
            if c.id() == method.declaring_type_id() {
                return Ok(());
            }
            class = c.superclass().await?;
        }
        Err(JdiError::InvalidArgument(format!(
            "{}{} is not a method of {} or its superclasses",
            method.name(),
            method.signature(),
            self.name()
        )))
    }
}

impl InterfaceType {
    /// The interfaces this one extends directly.
    pub async fn superinterfaces(&self) -> Result<Vec<InterfaceType>> {
        Ok(interfaces(self.0.interfaces().await?))
    }

    /// Loaded interfaces that extend this one directly.
    pub async fn subinterfaces(&self) -> Result<Vec<InterfaceType>> {
        let all = loaded_with(self.vm(), TypeTag::Interface, |t| async move { t.interface_ids().await }).await?;
        Ok(interfaces(all.into_iter().filter(|(_, ids)| ids.contains(&self.id())).map(|(t, _)| t).collect()))
    }

    /// Loaded classes that name this interface in their `implements` clause.
    pub async fn implementors(&self) -> Result<Vec<ClassType>> {
        let all = loaded_with(self.vm(), TypeTag::Class, |t| async move { t.interface_ids().await }).await?;
        Ok(classes(all.into_iter().filter(|(_, ids)| ids.contains(&self.id())).map(|(t, _)| t).collect()))
    }

    /// Runs a static method declared by this interface in `thread` (suspended by an event);
    /// `options` as for [`ClassType::invoke_method`].
    pub async fn invoke_method(
        &self,
        thread: &ThreadReference,
        method: &Method,
        arguments: Vec<Value>,
        options: i32,
    ) -> Result<InvokeResult> {
        if !method.is_static() || method.is_static_initializer() || method.declaring_type_id() != self.id() {
            return Err(JdiError::InvalidArgument(format!(
                "{}{} is not a static method of {}",
                method.name(),
                method.signature(),
                self.name()
            )));
        }
        let arguments = prepare_arguments(method, arguments).await?;
        let cmd = it::InvokeMethod {
            clazz: self.id().into(),
            thread: thread.id(),
            method_id: method.id(),
            arguments,
            options,
        };
        let r = self.vm().send(&cmd).await?;
        Ok(invoke_result(self.vm(), r.return_value, r.exception))
    }
}

impl ArrayType {
    /// The signature of the elements: `[[I` → `[I`.
    pub fn component_signature(&self) -> &str {
        names::component_signature(self.signature()).unwrap_or("")
    }

    /// The Java name of the elements' type: `java.lang.String`.
    pub fn component_type_name(&self) -> String {
        names::type_name_of_signature(self.component_signature())
    }

    /// The elements' type; [`JdiError::ClassNotLoaded`] when it is a reference type not loaded
    /// by (or visible to) this array's loader.
    pub async fn component_type(&self) -> Result<Type> {
        self.find_type(self.component_signature()).await
    }

    /// A new array of `length` zero or null elements.
    pub async fn new_instance(&self, length: i32) -> Result<ArrayReference> {
        if length < 0 {
            return Err(JdiError::InvalidArgument(format!("array length must not be negative, got {length}")));
        }
        let r = self.vm().send(&at::NewInstance { arr_type: self.id().into(), length }).await?;
        Ok(ArrayReference::new(self.vm().clone(), r.new_array.id))
    }
}

fn invoke_result(vm: &VirtualMachine, value: Value, exception: TaggedObjectId) -> InvokeResult {
    if exception.id.is_null() {
        InvokeResult::Returned(value)
    } else {
        InvokeResult::Threw(ObjectReference::new(vm.clone(), exception.id))
    }
}

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
        let Some(array_type) = array_type.as_array() else {
            return Err(JdiError::InvalidArgument(format!("{array_sig} is not an array type")));
        };
        let component = array_type.component_signature().to_string();
        let mut elements = Vec::with_capacity(rest.len());
        for (i, v) in rest.into_iter().enumerate() {
            let what = format!("variable argument {i} of {}", method.name());
            elements.push(prepare_value(&declaring, v, &component, &what).await?);
        }
        let array = array_type.new_instance(elements.len() as i32).await?;
        if !elements.is_empty() {
            // Already checked: write them directly rather than have the array check them again.
            let cmd = ar::SetValues { array_object: array.0.id().into(), first_index: 0, values: elements };
            declaring.vm().send(&cmd).await?;
        }
        arguments.push(Value::Object(Tag::Array, array.0.id()));
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
