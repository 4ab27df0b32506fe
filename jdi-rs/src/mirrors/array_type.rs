//! Arrays: their type ([`ArrayType`]: component type, array creation) and their instances
//! ([`ArrayReference`]: elements read in chunks, writes checked against the component type).

use std::ops::Deref;

use jdwp_protocol::commands::{array_reference as ar, array_type as at};
use jdwp_protocol::{ArrayId, ArrayRegion, ObjectId, Value};

use super::arguments::prepare_value;
use super::object::short_reply;
use crate::error::{JdiError, Result};
use crate::mirrors::{ObjectReference, ReferenceType, Type};
use crate::names;
use crate::vm::VirtualMachine;

kind_wrapper! {
    /// An array type (`int[]`, `java.lang.String[][]`).
    ArrayType
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

/// An array.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ArrayReference(pub ObjectReference);

/// Elements per round trip, so a huge array does not make one huge packet.
const ARRAY_CHUNK: i32 = 16 * 1024;

impl ArrayReference {
    /// A mirror for the ID of an array.
    pub fn new(vm: VirtualMachine, id: ObjectId) -> ArrayReference {
        ArrayReference(ObjectReference::new(vm, id))
    }

    /// The array as a plain object.
    pub fn as_object(&self) -> &ObjectReference {
        &self.0
    }

    fn array_id(&self) -> ArrayId {
        self.0.id().into()
    }

    /// The number of elements.
    pub async fn length(&self) -> Result<i32> {
        Ok(self.0.vm().send(&ar::Length { array_object: self.array_id() }).await?.array_length)
    }

    /// Element `index`.
    pub async fn get_value(&self, index: i32) -> Result<Value> {
        let mut values = self.get_values_range(index, 1).await?;
        values.pop().ok_or_else(|| short_reply("ArrayReference.GetValues"))
    }

    /// Elements `first..first+length` (`length` -1: to the end). Large ranges are fetched in
    /// chunks whose requests are all in flight at once.
    pub async fn get_values_range(&self, first: i32, length: i32) -> Result<Vec<Value>> {
        let length = if length == -1 { self.length().await? - first } else { length };
        if first < 0 || length < 0 {
            return Err(JdiError::InvalidArgument(format!("bad array range: first {first}, length {length}")));
        }
        let end = first
            .checked_add(length)
            .ok_or_else(|| JdiError::InvalidArgument(format!("bad array range: first {first}, length {length}")))?;
        // Nothing to ask for (HotSpot's agent even refuses an empty read at index 0 of an empty
        // array with INVALID_INDEX).
        if length == 0 {
            return Ok(Vec::new());
        }
        let mut pending = Vec::new();
        let mut index = first;
        while index < end {
            let n = (end - index).min(ARRAY_CHUNK);
            let vm = self.0.vm().clone();
            let cmd = ar::GetValues { array_object: self.array_id(), first_index: index, length: n };
            pending.push(tokio::spawn(async move { vm.send(&cmd).await }));
            index += n;
        }
        let mut out = Vec::with_capacity(length as usize);
        for task in pending {
            let region: ArrayRegion = task
                .await
                .map_err(|e| JdiError::Disconnected { reason: Some(format!("array read task failed: {e}")) })??
                .values;
            out.extend(region.values());
        }
        Ok(out)
    }

    /// Every element.
    pub async fn get_values(&self) -> Result<Vec<Value>> {
        self.get_values_range(0, -1).await
    }

    /// Sets element `index`; see [`ArrayReference::set_values`].
    pub async fn set_value(&self, index: i32, value: Value) -> Result<()> {
        self.set_values(index, vec![value]).await
    }

    /// Writes `values` from index `first` on, after checking (and converting) each against the
    /// component type like a field write; nothing is written if one does not fit. Large writes
    /// go in chunks.
    pub async fn set_values(&self, first: i32, values: Vec<Value>) -> Result<()> {
        if values.is_empty() {
            return Ok(());
        }
        let array_type = self.array_type().await?;
        let component = array_type.component_signature().to_string();
        let mut checked = Vec::with_capacity(values.len());
        for (i, v) in values.into_iter().enumerate() {
            let what = format!("element {} of {}", i64::from(first) + i as i64, array_type.name());
            checked.push(prepare_value(&array_type, v, &component, &what).await?);
        }
        let mut index = first;
        for chunk in checked.chunks(ARRAY_CHUNK as usize) {
            let cmd = ar::SetValues { array_object: self.array_id(), first_index: index, values: chunk.to_vec() };
            self.0.vm().send(&cmd).await?;
            index += chunk.len() as i32;
        }
        Ok(())
    }

    /// The array's type.
    pub async fn array_type(&self) -> Result<ArrayType> {
        let ty = self.0.reference_type().await?;
        ty.as_array().ok_or_else(|| JdiError::InvalidArgument(format!("{} is not an array type", ty.name())))
    }

    /// The JNI signature of the elements' declared type: `I`, `Ljava/lang/String;`, `[I`.
    pub async fn component_signature(&self) -> Result<String> {
        Ok(self.array_type().await?.component_signature().to_string())
    }

    /// The Java name of the component type: `int`, `java.lang.String`, `int[]`.
    pub async fn component_type_name(&self) -> Result<String> {
        Ok(self.array_type().await?.component_type_name())
    }

    /// The component type ([`JdiError::ClassNotLoaded`] for a reference type the array's
    /// loader has not loaded).
    pub async fn component_type(&self) -> Result<Type> {
        self.array_type().await?.component_type().await
    }
}
