//! [`Field`] mirrors: what a field is ([`FieldData`], cached once per declaring type) and its
//! type, resolved on demand and remembered (a loaded type cannot change).

use std::ops::Deref;
use std::sync::{Arc, OnceLock};

use jdwp_protocol::{FieldId, ReferenceTypeId, TypeTag, modifiers};

use super::reference_type::SYNTHETIC_BITS;
use crate::error::Result;
use crate::mirrors::{ReferenceType, Type};
use crate::names;
use crate::vm::VirtualMachine;

/// What a field is: cached once per type, shared by every [`Field`] mirror of it.
#[derive(Debug)]
pub struct FieldData {
    /// The type that declares the field.
    pub declaring_type: ReferenceTypeId,
    /// The field's ID (unique within its declaring type).
    pub id: FieldId,
    /// The field's simple name.
    pub name: String,
    /// The JNI signature of the field's type.
    pub signature: String,
    /// The generic signature of the field's type (`TT;`), when it has one.
    pub generic_signature: Option<String>,
    /// The access flags (`jdwp_protocol::modifiers` bits).
    pub modifiers: i32,
    /// The field's reference type, once resolved (it cannot change once loaded).
    pub(super) resolved_type: OnceLock<(TypeTag, ReferenceTypeId)>,
}

/// A field of a reference type. Its data (`id`, `name`, `signature`, `modifiers`...) reads as
/// plain fields through [`FieldData`].
#[derive(Clone)]
pub struct Field {
    pub(super) vm: VirtualMachine,
    pub(super) data: Arc<FieldData>,
}

impl Deref for Field {
    type Target = FieldData;
    fn deref(&self) -> &FieldData {
        &self.data
    }
}

impl PartialEq for Field {
    fn eq(&self, other: &Self) -> bool {
        self.data.declaring_type == other.data.declaring_type && self.data.id == other.data.id
    }
}

impl Eq for Field {}

impl std::hash::Hash for Field {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        (self.data.declaring_type, self.data.id).hash(state)
    }
}

impl std::fmt::Debug for Field {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.type_name(), self.data.name)
    }
}

impl Field {
    /// The VM the field belongs to.
    pub fn vm(&self) -> &VirtualMachine {
        &self.vm
    }

    /// The type that declares the field (known to the VM already: no round trip).
    pub async fn declaring_type(&self) -> Result<ReferenceType> {
        self.vm.reference_type(self.data.declaring_type).await
    }

    /// The Java name of the field's type (`int`, `java.lang.String[]`).
    pub fn type_name(&self) -> String {
        names::type_name_of_signature(&self.data.signature)
    }

    /// The field's type; [`JdiError::ClassNotLoaded`] when it is a reference type not loaded
    /// (as the declaring type's loader sees it). Cached once found.
    pub async fn field_type(&self) -> Result<Type> {
        if let Some((tag, id)) = self.data.resolved_type.get() {
            return Ok(Type::Reference(self.vm.reference_type_of_kind(*tag, *id).await?));
        }
        let t = self.declaring_type().await?.find_type(&self.data.signature).await?;
        if let Type::Reference(r) = &t {
            let _ = self.data.resolved_type.set((r.tag(), r.id()));
        }
        Ok(t)
    }

    fn has(&self, bits: i32) -> bool {
        self.data.modifiers & bits != 0
    }
    /// The access flags (`jdwp_protocol::modifiers` bits).
    pub fn modifiers(&self) -> i32 {
        self.data.modifiers
    }
    /// A class (static) field.
    pub fn is_static(&self) -> bool {
        self.has(modifiers::STATIC)
    }
    /// Declared `final`.
    pub fn is_final(&self) -> bool {
        self.has(modifiers::FINAL)
    }
    /// Declared `public`.
    pub fn is_public(&self) -> bool {
        self.has(modifiers::PUBLIC)
    }
    /// Declared `private`.
    pub fn is_private(&self) -> bool {
        self.has(modifiers::PRIVATE)
    }
    /// Declared `protected`.
    pub fn is_protected(&self) -> bool {
        self.has(modifiers::PROTECTED)
    }
    /// Neither public, private nor protected.
    pub fn is_package_private(&self) -> bool {
        !self.has(modifiers::PUBLIC | modifiers::PRIVATE | modifiers::PROTECTED)
    }
    /// Declared `transient`.
    pub fn is_transient(&self) -> bool {
        self.has(modifiers::TRANSIENT)
    }
    /// Declared `volatile`.
    pub fn is_volatile(&self) -> bool {
        self.has(modifiers::VOLATILE)
    }
    /// Made by the compiler (`this$0`, `$VALUES`...).
    pub fn is_synthetic(&self) -> bool {
        self.has(SYNTHETIC_BITS)
    }
    /// One of an enum's constants.
    pub fn is_enum_constant(&self) -> bool {
        self.has(modifiers::ENUM)
    }
}
