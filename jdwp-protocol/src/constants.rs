//! The protocol's constant sets (JDWP's `ConstantSet`s): tags, event kinds, suspend policies, step
//! depth and size, class and thread status, invoke options, modifier kinds.
//!
//! Closed sets become enums that refuse unknown values when decoded; bit sets (class status,
//! invoke options) stay integers with named bits, since the spec lets them combine.

use crate::codec::{DecodeError, JdwpCodec, Reader, Writer};

/// Declares an enum whose values travel as a fixed-width integer.
macro_rules! wire_enum {
    ($(#[$meta:meta])* $name:ident: $repr:ident as $what:literal {
        $($(#[$vmeta:meta])* $variant:ident = $value:literal,)*
    }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr($repr)]
        pub enum $name {
            $($(#[$vmeta])* $variant = $value,)*
        }

        impl $name {
            /// Every value of the set, in spec order.
            pub const ALL: &'static [$name] = &[$($name::$variant),*];

            /// The spec's name of the constant.
            pub fn name(self) -> &'static str {
                match self { $($name::$variant => stringify!($variant),)* }
            }

            pub fn from_raw(raw: $repr) -> Option<Self> {
                match raw { $($value => Some($name::$variant),)* _ => None }
            }
        }

        impl TryFrom<$repr> for $name {
            type Error = DecodeError;
            fn try_from(raw: $repr) -> Result<Self, DecodeError> {
                Self::from_raw(raw).ok_or(DecodeError::InvalidTag { what: $what, tag: raw as u8 })
            }
        }

        impl JdwpCodec for $name {
            fn encode(&self, w: &mut Writer) { w.$repr(*self as $repr) }
            fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
                let raw = r.$repr()?;
                Self::try_from(raw)
            }
            const MIN_SIZE: usize = std::mem::size_of::<$repr>();
        }

        #[cfg(any(test, feature = "sample"))]
        impl crate::sample::Sample for $name {
            fn sample(g: &mut crate::sample::Gen) -> Self {
                Self::ALL[g.pick(Self::ALL.len())]
            }
        }
    };
}
pub(crate) use wire_enum;

wire_enum! {
    /// `TypeTag`: the kind of a reference type.
    TypeTag: u8 as "type" {
        Class = 1,
        Interface = 2,
        Array = 3,
    }
}

wire_enum! {
    /// `EventKind`.
    EventKind: u8 as "event kind" {
        SingleStep = 1,
        Breakpoint = 2,
        FramePop = 3,
        Exception = 4,
        UserDefined = 5,
        ThreadStart = 6,
        ThreadDeath = 7,
        ClassPrepare = 8,
        ClassUnload = 9,
        ClassLoad = 10,
        FieldAccess = 20,
        FieldModification = 21,
        ExceptionCatch = 30,
        MethodEntry = 40,
        MethodExit = 41,
        MethodExitWithReturnValue = 42,
        MonitorContendedEnter = 43,
        MonitorContendedEntered = 44,
        MonitorWait = 45,
        MonitorWaited = 46,
        VmStart = 90,
        VmDeath = 99,
        /// Never sent by a VM; JDI uses it internally for a closed connection.
        VmDisconnected = 100,
    }
}

impl EventKind {
    /// The spec's alias `THREAD_END` is `ThreadDeath`; `VM_INIT` is `VmStart`.
    pub const THREAD_END: EventKind = EventKind::ThreadDeath;
    pub const VM_INIT: EventKind = EventKind::VmStart;
}

wire_enum! {
    /// `SuspendPolicy`: which threads an event suspends.
    SuspendPolicy: u8 as "suspend policy" {
        None = 0,
        EventThread = 1,
        All = 2,
    }
}

wire_enum! {
    /// `StepDepth`.
    StepDepth: i32 as "step depth" {
        Into = 0,
        Over = 1,
        Out = 2,
    }
}

wire_enum! {
    /// `StepSize`.
    StepSize: i32 as "step size" {
        Min = 0,
        Line = 1,
    }
}

wire_enum! {
    /// `ThreadStatus`.
    ThreadStatus: i32 as "thread status" {
        /// Not in the spec's list: HotSpot's agent reports -1 for a thread that has not started.
        NotStarted = -1,
        Zombie = 0,
        Running = 1,
        Sleeping = 2,
        Monitor = 3,
        Wait = 4,
    }
}

wire_enum! {
    /// Event request modifier kinds (`modKind` of `EventRequest.Set`).
    ModKind: u8 as "modifier kind" {
        Count = 1,
        Conditional = 2,
        ThreadOnly = 3,
        ClassOnly = 4,
        ClassMatch = 5,
        ClassExclude = 6,
        LocationOnly = 7,
        ExceptionOnly = 8,
        FieldOnly = 9,
        Step = 10,
        InstanceOnly = 11,
        SourceNameMatch = 12,
        /// JDWP 19.
        PlatformThreadsOnly = 13,
    }
}

/// `SuspendStatus` bits of `ThreadReference.Status`.
pub mod suspend_status {
    pub const SUSPENDED: i32 = 0x1;
}

/// `ClassStatus` bits.
pub mod class_status {
    pub const VERIFIED: i32 = 1;
    pub const PREPARED: i32 = 2;
    pub const INITIALIZED: i32 = 4;
    pub const ERROR: i32 = 8;
}

/// `InvokeOptions` bits.
pub mod invoke_options {
    /// Resume only the invoking thread during the invoke.
    pub const INVOKE_SINGLE_THREADED: i32 = 0x01;
    /// Call the method of the given class, not the override of the object's class.
    pub const INVOKE_NONVIRTUAL: i32 = 0x02;
}

/// Access flags used in `modBits` of types, fields and methods (from the class file format); JDWP
/// adds `SYNTHETIC_JDWP` for synthetic members when the VM cannot express them otherwise.
pub mod modifiers {
    pub const PUBLIC: i32 = 0x0001;
    pub const PRIVATE: i32 = 0x0002;
    pub const PROTECTED: i32 = 0x0004;
    pub const STATIC: i32 = 0x0008;
    pub const FINAL: i32 = 0x0010;
    pub const SYNCHRONIZED: i32 = 0x0020;
    pub const VOLATILE: i32 = 0x0040;
    pub const BRIDGE: i32 = 0x0040;
    pub const TRANSIENT: i32 = 0x0080;
    pub const VARARGS: i32 = 0x0080;
    pub const NATIVE: i32 = 0x0100;
    pub const INTERFACE: i32 = 0x0200;
    pub const ABSTRACT: i32 = 0x0400;
    pub const STRICT: i32 = 0x0800;
    pub const SYNTHETIC: i32 = 0x1000;
    pub const ANNOTATION: i32 = 0x2000;
    pub const ENUM: i32 = 0x4000;
    pub const SYNTHETIC_JDWP: i32 = 0xf000_0000_u32 as i32;
}
