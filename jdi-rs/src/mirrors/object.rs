//! Objects and strings (arrays are in `array_type`), and the [`InvokeResult`] of method calls.
//!
//! Writes (fields, invoke arguments) are checked against the declared type before anything is
//! sent (see `arguments`), as JDI does.

use jdwp_protocol::commands::{class_type as ct, object_reference as or, reference_type as rt, string_reference as sr};
use jdwp_protocol::{ClassId, ObjectId, Value, invoke_options};

use super::arguments::{prepare_arguments, prepare_value};
use crate::error::{JdiError, Result};
use crate::mirrors::{Field, Method, ReferenceType, ThreadReference};
use crate::vm::VirtualMachine;

/// Any object of the target VM. Equal mirrors name the same object.
#[derive(Clone)]
pub struct ObjectReference {
    vm: VirtualMachine,
    id: ObjectId,
}

impl PartialEq for ObjectReference {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
    }
}

impl Eq for ObjectReference {}

impl std::hash::Hash for ObjectReference {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.id.hash(state);
    }
}

impl std::fmt::Debug for ObjectReference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "object {:#x}", self.id.0)
    }
}

/// Who holds an object's monitor, how often, and who waits for it.
#[derive(Debug, Clone, PartialEq)]
pub struct MonitorInfo {
    /// The owning thread, `None` when the monitor is free.
    pub owner: Option<ThreadReference>,
    /// How many times the owner has entered the monitor (nested `synchronized`).
    pub entry_count: i32,
    /// Threads waiting to enter the monitor or to be notified (`wait()`).
    pub waiters: Vec<ThreadReference>,
}

/// The outcome of a method invocation: a value, or the exception it threw.
#[derive(Debug, Clone, PartialEq)]
pub enum InvokeResult {
    /// The method returned; [`Value::Void`] for `void` methods.
    Returned(Value),
    /// The method threw this exception (JDI's `InvocationException`).
    Threw(ObjectReference),
}

impl InvokeResult {
    /// The returned value, if the method did not throw.
    pub fn returned(&self) -> Option<Value> {
        match self {
            InvokeResult::Returned(v) => Some(*v),
            InvokeResult::Threw(_) => None,
        }
    }

    /// The thrown exception, if the method threw.
    pub fn exception(&self) -> Option<&ObjectReference> {
        match self {
            InvokeResult::Returned(_) => None,
            InvokeResult::Threw(e) => Some(e),
        }
    }
}

impl ObjectReference {
    /// A mirror for an object ID obtained elsewhere (nothing checks that it names a live object).
    pub fn new(vm: VirtualMachine, id: ObjectId) -> ObjectReference {
        ObjectReference { vm, id }
    }

    /// The object's JDWP ID.
    pub fn id(&self) -> ObjectId {
        self.id
    }

    /// The VM the object lives in.
    pub fn vm(&self) -> &VirtualMachine {
        &self.vm
    }

    /// JDI's `uniqueID`: the object ID, unique among live objects for this connection.
    pub fn unique_id(&self) -> u64 {
        self.id.0
    }

    /// The object's runtime type (a class or an array type).
    pub async fn reference_type(&self) -> Result<ReferenceType> {
        let r = self.vm.send(&or::ReferenceType { object: self.id }).await?;
        self.vm.reference_type_of_kind(r.ref_type_tag, r.type_id).await
    }

    /// The value of one field (instance or static) of this object's class or a superclass.
    pub async fn get_value(&self, field: &Field) -> Result<Value> {
        let mut values = self.get_values(std::slice::from_ref(field)).await?;
        values.pop().ok_or_else(|| short_reply("ObjectReference.GetValues"))
    }

    /// Values of fields, in order. Instance fields come in one round trip; static fields are read
    /// from their declaring type, as JDI allows both here.
    pub async fn get_values(&self, fields: &[Field]) -> Result<Vec<Value>> {
        let instance: Vec<_> = fields.iter().filter(|f| !f.is_static()).map(|f| f.id).collect();
        let mut instance_values = if instance.is_empty() {
            Vec::new()
        } else {
            self.vm.send(&or::GetValues { object: self.id, fields: instance }).await?.values
        }
        .into_iter();
        let mut out = Vec::with_capacity(fields.len());
        for field in fields {
            let value = if field.is_static() {
                let cmd = rt::GetValues { ref_type: field.declaring_type, fields: vec![field.id] };
                self.vm.send(&cmd).await?.values.pop()
            } else {
                instance_values.next()
            };
            out.push(value.ok_or_else(|| short_reply("ObjectReference.GetValues"))?);
        }
        Ok(out)
    }

    /// The field called `name` visible in the object's class: declared there or inherited
    /// (see [`ReferenceType::field_by_name`]).
    pub async fn field_by_name(&self, name: &str) -> Result<Option<Field>> {
        self.reference_type().await?.field_by_name(name).await
    }

    /// The value of the field called `name` (see [`ObjectReference::field_by_name`]).
    pub async fn get_value_by_name(&self, name: &str) -> Result<Option<Value>> {
        match self.field_by_name(name).await? {
            Some(f) => self.get_value(&f).await.map(Some),
            None => Ok(None),
        }
    }

    /// Sets one field; see [`ObjectReference::set_values`].
    pub async fn set_value(&self, field: &Field, value: Value) -> Result<()> {
        self.set_values(&[(field.clone(), value)]).await
    }

    /// Sets fields after checking each value against the field's type (converting primitives
    /// where that loses nothing, e.g. `Int(5)` into a `long` field); a mismatch is an
    /// [`JdiError::InvalidArgument`] naming the field and both types, and nothing is written.
    /// Static fields are written through their class; `static final` ones are refused.
    pub async fn set_values(&self, values: &[(Field, Value)]) -> Result<()> {
        let mut instance = Vec::new();
        let mut statics = Vec::new();
        for (field, value) in values {
            let declaring = field.declaring_type().await?;
            let what = format!("field {}.{}", declaring.name(), field.name);
            if field.is_static() && field.is_final() {
                return Err(JdiError::InvalidArgument(format!("cannot set {what}: it is static and final")));
            }
            let value = prepare_value(&declaring, *value, &field.signature, &what).await?;
            let fv = or::FieldValue { field_id: field.id, value };
            if field.is_static() { statics.push((declaring.id(), fv)) } else { instance.push(fv) }
        }
        if !instance.is_empty() {
            self.vm.send(&or::SetValues { object: self.id, values: instance }).await?;
        }
        for (declaring, fv) in statics {
            self.vm.send(&ct::SetValues { clazz: ClassId(declaring.0), values: vec![fv] }).await?;
        }
        Ok(())
    }

    /// Who owns the monitor, its entry count and its waiters. The VM answers only while every
    /// thread is suspended (`THREAD_NOT_SUSPENDED` otherwise).
    pub async fn monitor_info(&self) -> Result<MonitorInfo> {
        let r = self.vm.send(&or::MonitorInfo { object: self.id }).await?;
        Ok(MonitorInfo {
            owner: if r.owner.is_null() { None } else { Some(self.vm.thread(r.owner)) },
            entry_count: r.entry_count,
            waiters: r.waiters.into_iter().map(|t| self.vm.thread(t)).collect(),
        })
    }

    /// The thread owning the monitor, if any.
    pub async fn owning_thread(&self) -> Result<Option<ThreadReference>> {
        Ok(self.monitor_info().await?.owner)
    }

    /// How many times the owner entered the monitor (0 when free).
    pub async fn entry_count(&self) -> Result<i32> {
        Ok(self.monitor_info().await?.entry_count)
    }

    /// Threads waiting for the monitor.
    pub async fn waiting_threads(&self) -> Result<Vec<ThreadReference>> {
        Ok(self.monitor_info().await?.waiters)
    }

    /// Invokes instance `method` on this object in `thread`, which must be suspended by an event
    /// (a breakpoint, a step...). `options` takes [`invoke_options`] bits: by default every
    /// thread runs during the call (`INVOKE_SINGLE_THREADED`: only `thread`) and the method is
    /// dispatched on the object's class (`INVOKE_NONVIRTUAL`: exactly `method`, even if
    /// overridden). Arguments are checked and converted like field values (a varargs method's
    /// trailing arguments are packed into an array). When the call returns, the threads it
    /// resumed are suspended again; frames fetched before are stale.
    pub async fn invoke_method(
        &self,
        thread: &ThreadReference,
        method: &Method,
        arguments: Vec<Value>,
        options: i32,
    ) -> Result<InvokeResult> {
        let describe = || format!("{}{}", method.name(), method.signature());
        if method.is_static() || method.name().starts_with('<') {
            return Err(JdiError::InvalidArgument(format!(
                "{} is not an instance method; invoke static methods and constructors through their class",
                describe()
            )));
        }
        if options & invoke_options::INVOKE_NONVIRTUAL != 0 && method.is_abstract() {
            return Err(JdiError::InvalidArgument(format!("cannot invoke abstract {} non-virtually", describe())));
        }
        // The VM calls whatever method ID it is given; one of an unrelated class must not reach it.
        let declaring = self.vm.reference_type(method.declaring_type_id()).await?;
        let object_type = self.reference_type().await?;
        if !object_type.is_assignable_to(declaring.signature()).await? {
            return Err(JdiError::InvalidArgument(format!(
                "{} is declared by {}, which {} does not extend or implement",
                describe(),
                declaring.name(),
                object_type.name()
            )));
        }
        let arguments = prepare_arguments(method, arguments).await?;
        let cmd = or::InvokeMethod {
            object: self.id,
            thread: thread.id(),
            clazz: ClassId(declaring.id().0),
            method_id: method.id(),
            arguments,
            options,
        };
        let r = self.vm.send(&cmd).await?;
        Ok(if r.exception.id.is_null() {
            InvokeResult::Returned(r.return_value)
        } else {
            InvokeResult::Threw(ObjectReference::new(self.vm.clone(), r.exception.id))
        })
    }

    /// Keeps the object from being garbage collected until [`ObjectReference::enable_collection`]
    /// (the VM counts the calls).
    pub async fn disable_collection(&self) -> Result<()> {
        self.vm.send(&or::DisableCollection { object: self.id }).await.map(drop)
    }

    /// Undoes one [`ObjectReference::disable_collection`].
    pub async fn enable_collection(&self) -> Result<()> {
        self.vm.send(&or::EnableCollection { object: self.id }).await.map(drop)
    }

    /// Whether the object has been garbage collected (its ID then names nothing).
    pub async fn is_collected(&self) -> Result<bool> {
        Ok(self.vm.send(&or::IsCollected { object: self.id }).await?.is_collected)
    }

    /// Objects that refer to this one (at most `max`, 0 for all).
    pub async fn referring_objects(&self, max: i32) -> Result<Vec<ObjectReference>> {
        let r = self.vm.send(&or::ReferringObjects { object: self.id, max_referrers: max }).await?;
        Ok(r.referring_objects.into_iter().map(|o| ObjectReference::new(self.vm.clone(), o.id)).collect())
    }
}

/// A reply with fewer values than were asked for: it ended where the next value should be.
pub(crate) fn short_reply(command: &'static str) -> JdiError {
    JdiError::Decode { command, source: jdwp_protocol::DecodeError::Truncated { offset: 0, needed: 1, available: 0 } }
}

/// A `java.lang.String`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct StringReference(pub ObjectReference);

impl StringReference {
    /// A mirror for the ID of a `java.lang.String`.
    pub fn new(vm: VirtualMachine, id: ObjectId) -> StringReference {
        StringReference(ObjectReference::new(vm, id))
    }

    /// The string as a plain object.
    pub fn as_object(&self) -> &ObjectReference {
        &self.0
    }

    /// The string's characters.
    pub async fn value(&self) -> Result<String> {
        Ok(self.0.vm.send(&sr::ValueCmd { string_object: self.0.id }).await?.string_value)
    }
}
