//! State the [`Agent`](super::Agent) owns whose type belongs to a module above the agent's layer
//! (the invocation slots, the profilers): the agent keeps the value for the VM's life, the module
//! that names the type is its only user. The layers forbid the agent to name that type, so the
//! value is kept as `dyn Any` and found again by its type: one atomic load and a type-ID
//! comparison, no lock. Also the agent's start-up state and small memos of VM facts, plain data.

use std::any::Any;
use std::ffi::CString;
use std::sync::atomic::{AtomicBool, AtomicU8};
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

/// One module's state, made once (see the module doc).
#[derive(Default)]
pub struct Owned(OnceLock<Box<dyn Any + Send + Sync>>);

impl Owned {
    pub const fn new() -> Owned {
        Owned(OnceLock::new())
    }

    /// The value, if it was made (and is a `T`).
    pub fn get<T: Any>(&self) -> Option<&T> {
        self.0.get()?.downcast_ref()
    }

    /// The value, made by `init` if it was not yet. `None` only if this slot holds another type,
    /// which would be a bug: each slot has one module, with one type.
    pub fn get_or_init<T: Any + Send + Sync>(&self, init: impl FnOnce() -> T) -> Option<&T> {
        self.0.get_or_init(|| Box::new(init())).downcast_ref()
    }

    /// Stores the value unless one was made already; returns whether it did.
    pub fn set<T: Any + Send + Sync>(&self, value: T) -> bool {
        self.0.set(Box::new(value)).is_ok()
    }
}

/// The profilers' state ([`crate::profiling`]), each made on first use.
#[derive(Default)]
pub struct Profilers {
    /// The profiling environment and its samplers (`profiling::Profiler`, made in `Agent_OnLoad`).
    pub profiler: Owned,
    /// The allocation sampler (`profiling::alloc`).
    pub alloc: Owned,
    /// Monitor contention profiling (`profiling::monitors`).
    pub monitors: Owned,
}

/// How debugging starts ([`crate::loader`]): deferred to an exception (`onthrow`/`onuncaught`) or
/// to jcmd (`onjcmd`), and what jcmd is told.
#[derive(Default)]
pub struct Startup {
    /// Set while `onthrow=`/`onuncaught=` defer the start of debugging to an exception (read by
    /// the loader's Exception callback).
    pub deferred: AtomicBool,
    /// Where `onjcmd=y` stands (the loader's `JcmdStart`).
    pub jcmd: AtomicU8,
    /// The transport's name and the address printed at startup, for jcmd's answer: C strings that
    /// live as long as the agent, which lives as long as the library (jcmd keeps the pointers).
    pub started_at: OnceLock<(CString, CString)>,
}

/// Facts about the VM looked up once, on first use.
#[derive(Default)]
pub struct Memo {
    /// `java.lang.Class.getComponentType` ([`crate::values`]).
    pub get_component_type: OnceLock<usize>,
    /// The `java.version` property (`VirtualMachine.Version`).
    pub java_version: OnceLock<String>,
    /// The clock origin of the profilers' timestamps (`profiling::gc::nanos`).
    pub gc_origin: OnceLock<Instant>,
    /// The file `JDWP_AGENT_TRACE_COMMANDS` names (`None`: no trace; [`crate::backend`]).
    pub trace: OnceLock<Option<Mutex<std::fs::File>>>,
    /// Whether this environment has `can_support_virtual_threads` (JVMTI 21+; fixed once the
    /// loader has added its capabilities), asked on every suspending event.
    pub virtual_threads: OnceLock<bool>,
    /// `java.lang.Thread.tid`'s field ID, if the VM's `Thread` has that field (`Agent::virtual_tid`).
    pub thread_tid: OnceLock<Option<usize>>,
    /// `java.lang.VirtualThread`, a JNI global reference, once found initialized
    /// ([`crate::profiling::mounted::virtual_thread_class`]; java.base classes never unload).
    pub virtual_thread_class: OnceLock<usize>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slot_keeps_one_value_of_its_type() {
        let slot = Owned::new();
        assert!(slot.get::<u32>().is_none());
        assert_eq!(slot.get_or_init(|| 7u32), Some(&7));
        assert_eq!(slot.get_or_init(|| 8u32), Some(&7), "made once");
        assert!(!slot.set(9u32));
        assert_eq!(slot.get::<u32>(), Some(&7));
        assert!(slot.get::<i64>().is_none(), "another type is not there");
        let fresh = Owned::new();
        assert!(fresh.set(String::from("x")));
        assert_eq!(fresh.get::<String>().map(String::as_str), Some("x"));
    }
}
