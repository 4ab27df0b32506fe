//! Classes and interfaces and what only they can do: [`ClassType`] (static field writes, static
//! calls, object creation, subclasses) and [`InterfaceType`] (static calls, implementors). Each
//! dereferences to its [`ReferenceType`].
//!
//! Values sent to the VM are checked against the declared types first (see `arguments`), as JDI
//! does.

use std::ops::Deref;

use jdwp_protocol::commands::{class_type as ct, interface_type as it, object_reference as or};
use jdwp_protocol::{TaggedObjectId, TypeTag, Value};

use super::arguments::{prepare_arguments, prepare_value};
use super::object::InvokeResult;
use super::reference_type::join_all;
use crate::error::{JdiError, Result};
use crate::mirrors::{Field, Method, ObjectReference, ReferenceType, ThreadReference};
use crate::vm::VirtualMachine;

kind_wrapper! {
    /// A class (also enums, records and the primitive classes such as `int.class`).
    ClassType
}
kind_wrapper! {
    /// An interface (also annotation types).
    InterfaceType
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

fn invoke_result(vm: &VirtualMachine, value: Value, exception: TaggedObjectId) -> InvokeResult {
    if exception.id.is_null() {
        InvokeResult::Returned(value)
    } else {
        InvokeResult::Threw(ObjectReference::new(vm.clone(), exception.id))
    }
}
