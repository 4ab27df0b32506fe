//! Mirrors: handles on things in the target VM. Each holds the [`VirtualMachine`] and an ID; data
//! that never changes (signatures, members, line and variable tables) is cached after the first
//! round trip, so asking twice costs nothing.

/// A kind of reference type: a wrapper that dereferences to its [`ReferenceType`].
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

mod arguments;
mod array_type;
mod class_type;
mod field;
mod loader;
mod method;
mod object;
mod reference_type;
mod thread;
mod types;

pub use array_type::{ArrayReference, ArrayType};
pub use class_type::{ClassType, InterfaceType};
pub use field::{Field, FieldData};
pub(crate) use loader::ModuleInfo;
pub use loader::{ClassLoaderReference, ClassObjectReference, ModuleReference};
pub use method::{LineLocation, Method, Variable};
pub use object::{InvokeResult, MonitorInfo, ObjectReference, StringReference};
pub(crate) use reference_type::join_all;
pub use reference_type::{ClassFileVersion, ConstantPool, ReferenceType, TypeInfo};
pub use thread::{OwnedMonitor, StackFrame, ThreadGroupReference, ThreadReference};
pub use types::{PrimitiveType, Type};

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
