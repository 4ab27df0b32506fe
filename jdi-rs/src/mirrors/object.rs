//! Objects, strings and arrays.

use jdwp_protocol::commands::{array_reference as ar, object_reference as or, string_reference as sr};
use jdwp_protocol::{ArrayId, ArrayRegion, ObjectId, Value};

use crate::error::Result;
use crate::mirrors::{Field, Method, ReferenceType, ThreadReference};
use crate::vm::VirtualMachine;

/// Any object of the target VM.
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

impl std::fmt::Debug for ObjectReference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "object {:#x}", self.id.0)
    }
}

/// Who holds an object's monitor, how often, and who waits for it.
#[derive(Debug, Clone)]
pub struct MonitorInfo {
    pub owner: Option<ThreadReference>,
    pub entry_count: i32,
    pub waiters: Vec<ThreadReference>,
}

/// The outcome of a method invocation: a value, or the exception it threw.
#[derive(Debug, Clone)]
pub enum InvokeResult {
    Returned(Value),
    Threw(ObjectReference),
}

impl ObjectReference {
    pub fn new(vm: VirtualMachine, id: ObjectId) -> ObjectReference {
        ObjectReference { vm, id }
    }

    pub fn id(&self) -> ObjectId {
        self.id
    }

    pub fn vm(&self) -> &VirtualMachine {
        &self.vm
    }

    /// The object's runtime type.
    pub async fn reference_type(&self) -> Result<ReferenceType> {
        let r = self.vm.send(&or::ReferenceType { object: self.id }).await?;
        self.vm.reference_type_of_kind(r.ref_type_tag, r.type_id).await
    }

    /// Values of instance (or static) fields.
    pub async fn get_values(&self, fields: &[Field]) -> Result<Vec<Value>> {
        let fields = fields.iter().map(|f| f.id).collect();
        Ok(self.vm.send(&or::GetValues { object: self.id, fields }).await?.values)
    }

    /// Sets instance fields; each value must have its field's type.
    pub async fn set_values(&self, values: &[(Field, Value)]) -> Result<()> {
        let values = values.iter().map(|(f, v)| or::FieldValue { field_id: f.id, value: *v }).collect();
        self.vm.send(&or::SetValues { object: self.id, values }).await.map(drop)
    }

    pub async fn monitor_info(&self) -> Result<MonitorInfo> {
        let r = self.vm.send(&or::MonitorInfo { object: self.id }).await?;
        Ok(MonitorInfo {
            owner: if r.owner.is_null() { None } else { Some(self.vm.thread(r.owner)) },
            entry_count: r.entry_count,
            waiters: r.waiters.into_iter().map(|t| self.vm.thread(t)).collect(),
        })
    }

    /// Invokes `method` on this object in `thread` (which must be suspended by an event).
    pub async fn invoke_method(
        &self,
        thread: &ThreadReference,
        method: &Method,
        arguments: Vec<Value>,
        options: i32,
    ) -> Result<InvokeResult> {
        let cmd = or::InvokeMethod {
            object: self.id,
            thread: thread.id(),
            clazz: jdwp_protocol::ClassId(method.declaring_type_id().0),
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

    pub async fn disable_collection(&self) -> Result<()> {
        self.vm.send(&or::DisableCollection { object: self.id }).await.map(drop)
    }

    pub async fn enable_collection(&self) -> Result<()> {
        self.vm.send(&or::EnableCollection { object: self.id }).await.map(drop)
    }

    pub async fn is_collected(&self) -> Result<bool> {
        Ok(self.vm.send(&or::IsCollected { object: self.id }).await?.is_collected)
    }

    /// Objects that refer to this one (at most `max`, 0 for all).
    pub async fn referring_objects(&self, max: i32) -> Result<Vec<ObjectReference>> {
        let r = self.vm.send(&or::ReferringObjects { object: self.id, max_referrers: max }).await?;
        Ok(r.referring_objects.into_iter().map(|o| ObjectReference::new(self.vm.clone(), o.id)).collect())
    }
}

/// A `java.lang.String`.
#[derive(Clone, Debug)]
pub struct StringReference(pub ObjectReference);

impl StringReference {
    pub fn new(vm: VirtualMachine, id: ObjectId) -> StringReference {
        StringReference(ObjectReference::new(vm, id))
    }

    pub async fn value(&self) -> Result<String> {
        Ok(self.0.vm.send(&sr::ValueCmd { string_object: self.0.id }).await?.string_value)
    }
}

/// An array.
#[derive(Clone, Debug)]
pub struct ArrayReference(pub ObjectReference);

/// Elements fetched per round trip, so one huge array does not make one huge packet.
const ARRAY_CHUNK: i32 = 16 * 1024;

impl ArrayReference {
    pub fn new(vm: VirtualMachine, id: ObjectId) -> ArrayReference {
        ArrayReference(ObjectReference::new(vm, id))
    }

    fn array_id(&self) -> ArrayId {
        self.0.id.into()
    }

    pub async fn length(&self) -> Result<i32> {
        Ok(self.0.vm.send(&ar::Length { array_object: self.array_id() }).await?.array_length)
    }

    /// Elements `first..first+length`, fetched in chunks.
    pub async fn get_values_range(&self, first: i32, length: i32) -> Result<Vec<Value>> {
        let mut out = Vec::with_capacity(length.max(0) as usize);
        let mut index = first;
        let end = first.saturating_add(length);
        while index < end {
            let n = (end - index).min(ARRAY_CHUNK);
            let cmd = ar::GetValues { array_object: self.array_id(), first_index: index, length: n };
            let region: ArrayRegion = self.0.vm.send(&cmd).await?.values;
            out.extend(region.values());
            index += n;
        }
        Ok(out)
    }

    pub async fn get_values(&self) -> Result<Vec<Value>> {
        let len = self.length().await?;
        self.get_values_range(0, len).await
    }

    /// Writes elements from `first`; values must have the component type.
    pub async fn set_values(&self, first: i32, values: Vec<Value>) -> Result<()> {
        let cmd = ar::SetValues { array_object: self.array_id(), first_index: first, values };
        self.0.vm.send(&cmd).await.map(drop)
    }
}
