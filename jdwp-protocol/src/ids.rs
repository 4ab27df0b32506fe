//! Typed IDs and the ID sizes that govern their width on the wire.
//!
//! JDWP has five ID widths (object, reference type, method, field, frame), announced by the VM in
//! `VirtualMachine.IDSizes`. Object-like IDs (thread, string, class loader...) share the object
//! width, class-like IDs share the reference-type width. Each ID gets its own Rust type so a thread
//! ID cannot be passed where a method ID is expected; conversions to the general kind are free.

use crate::codec::{DecodeError, JdwpCodec, Reader, Writer};

/// The byte widths of each kind of ID, as `VirtualMachine.IDSizes` reports them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct IdSizes {
    pub field_id: u8,
    pub method_id: u8,
    pub object_id: u8,
    pub reference_type_id: u8,
    pub frame_id: u8,
}

impl Default for IdSizes {
    /// Eight bytes each, what HotSpot's agent uses; only valid until the real sizes are known.
    fn default() -> Self {
        IdSizes { field_id: 8, method_id: 8, object_id: 8, reference_type_id: 8, frame_id: 8 }
    }
}

impl IdSizes {
    /// Checks every width is in 1..=8, the widths this codec can represent.
    pub fn validate(self) -> Result<Self, DecodeError> {
        for s in [self.field_id, self.method_id, self.object_id, self.reference_type_id, self.frame_id] {
            if !(1..=8).contains(&s) {
                return Err(DecodeError::BadIdSize(s));
            }
        }
        Ok(self)
    }
}

/// Which width an ID kind uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdWidth {
    Object,
    ReferenceType,
    Method,
    Field,
    Frame,
}

impl IdWidth {
    pub fn of(self, sizes: IdSizes) -> u8 {
        match self {
            IdWidth::Object => sizes.object_id,
            IdWidth::ReferenceType => sizes.reference_type_id,
            IdWidth::Method => sizes.method_id,
            IdWidth::Field => sizes.field_id,
            IdWidth::Frame => sizes.frame_id,
        }
    }
}

/// Common behaviour of the typed IDs.
pub trait JdwpId: Copy + Eq + std::hash::Hash + std::fmt::Debug {
    const WIDTH: IdWidth;
    const KIND: IdKind;
    fn raw(self) -> u64;
    fn from_raw(raw: u64) -> Self;
}

macro_rules! id_types {
    ($($(#[$meta:meta])* $name:ident: $width:ident $(=> $($general:ident),+)?;)*) => {
        /// Which kind of ID a value is (one per ID type), for generators that pick IDs by kind.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum IdKind { $($name,)* }

        impl IdKind {
            /// Every kind, in declaration order.
            pub const ALL: &'static [IdKind] = &[$(IdKind::$name),*];

            /// The width this kind travels with.
            pub fn width(self) -> IdWidth {
                match self { $(IdKind::$name => IdWidth::$width,)* }
            }
        }
        $(
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
        pub struct $name(pub u64);

        impl $name {
            /// The null reference (ID 0), where the kind allows one.
            pub const NULL: $name = $name(0);
            pub fn is_null(self) -> bool { self.0 == 0 }
        }

        impl JdwpId for $name {
            const WIDTH: IdWidth = IdWidth::$width;
            const KIND: IdKind = IdKind::$name;
            fn raw(self) -> u64 { self.0 }
            fn from_raw(raw: u64) -> Self { $name(raw) }
        }

        impl JdwpCodec for $name {
            fn encode(&self, w: &mut Writer) {
                let size = IdWidth::$width.of(w.sizes());
                w.id(self.0, size)
            }
            fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
                let size = IdWidth::$width.of(r.sizes());
                r.id(size).map($name)
            }
        }

        #[cfg(any(test, feature = "sample"))]
        impl crate::sample::Sample for $name {
            fn sample(g: &mut crate::sample::Gen) -> Self {
                $name(g.id_of(IdKind::$name))
            }
        }

        $($(
            impl From<$name> for $general {
                fn from(id: $name) -> $general { $general(id.0) }
            }
        )+)?
    )*};
}

id_types! {
    /// Any object in the target VM (`objectID`); 0 is `null`.
    ObjectId: Object;
    /// A `java.lang.Thread` (`threadID`).
    ThreadId: Object => ObjectId;
    /// A `java.lang.ThreadGroup` (`threadGroupID`).
    ThreadGroupId: Object => ObjectId;
    /// A `java.lang.String` (`stringID`).
    StringId: Object => ObjectId;
    /// A `java.lang.ClassLoader` (`classLoaderID`); 0 is the bootstrap loader.
    ClassLoaderId: Object => ObjectId;
    /// A `java.lang.Class` instance (`classObjectID`).
    ClassObjectId: Object => ObjectId;
    /// An array (`arrayID`).
    ArrayId: Object => ObjectId;
    /// A `java.lang.Module` (`moduleID`).
    ModuleId: Object => ObjectId;
    /// Any reference type: class, interface or array type (`referenceTypeID`).
    ReferenceTypeId: ReferenceType;
    /// A class (`classID`).
    ClassId: ReferenceType => ReferenceTypeId;
    /// An interface (`interfaceID`).
    InterfaceId: ReferenceType => ReferenceTypeId;
    /// An array type (`arrayTypeID`).
    ArrayTypeId: ReferenceType => ReferenceTypeId;
    /// A method, unique only within its declaring type (`methodID`).
    MethodId: Method;
    /// A field, unique only within its declaring type (`fieldID`).
    FieldId: Field;
    /// A stack frame, valid only while its thread stays suspended (`frameID`).
    FrameId: Frame;
}

macro_rules! narrow_from {
    ($general:ident => $($name:ident),*) => {$(
        impl From<$general> for $name {
            /// Reinterprets a general ID as a narrower kind; the VM decides whether it really is one.
            fn from(id: $general) -> $name { $name(id.0) }
        }
    )*};
}

narrow_from!(ObjectId => ThreadId, ThreadGroupId, StringId, ClassLoaderId, ClassObjectId, ArrayId, ModuleId);
narrow_from!(ReferenceTypeId => ClassId, InterfaceId, ArrayTypeId);
