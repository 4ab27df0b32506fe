//! Mirrors: handles on things in the target VM. Each holds the [`VirtualMachine`] and an ID; data
//! that never changes (signatures, members, line and variable tables) is cached after the first
//! round trip, so asking twice costs nothing.

mod class_type;
mod loader;
mod object;
mod reference_type;
mod thread;

pub use class_type::{ArrayType, ClassType, InterfaceType};
pub(crate) use loader::ModuleInfo;
pub use loader::{ClassLoaderReference, ClassObjectReference, ModuleReference};
pub use object::{ArrayReference, InvokeResult, MonitorInfo, ObjectReference, StringReference};
pub(crate) use reference_type::join_all;
pub use reference_type::{
    ClassFileVersion, ConstantPool, Field, FieldData, LineLocation, Method, PrimitiveType, ReferenceType, Type,
    TypeInfo, Variable,
};
pub use thread::{OwnedMonitor, StackFrame, ThreadGroupReference, ThreadReference};

use crate::vm::VirtualMachine;
use jdwp_protocol::Location;

/// A code location with the mirrors needed to describe it.
#[derive(Clone)]
pub struct SourceLocation {
    pub location: Location,
    pub declaring_type: ReferenceType,
    pub method: Method,
}

impl SourceLocation {
    /// The source line, or -1 when the method has no line table.
    pub async fn line_number(&self) -> crate::Result<i32> {
        self.method.line_of(self.location.index).await
    }
}

impl std::fmt::Debug for SourceLocation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}@{}", self.declaring_type.name(), self.method.name(), self.location.index)
    }
}

impl VirtualMachine {
    /// Mirrors for the type and method of a protocol location.
    pub async fn resolve_location(&self, location: Location) -> crate::Result<SourceLocation> {
        let declaring_type = self.reference_type(location.class_id.into()).await?;
        let method = declaring_type.method_by_id(location.method_id).await?;
        Ok(SourceLocation { location, declaring_type, method })
    }
}
