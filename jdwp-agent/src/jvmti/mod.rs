//! JVMTI: the raw interface ([`sys`]) and thin safe wrappers over it ([`Jvmti`]).
//!
//! Every wrapper calls one JVMTI function and returns `Result<_, JvmtiError>`; nothing is cached and
//! no policy lives here. Memory JVMTI allocates comes back as [`JvmtiBuf`] or [`JvmtiString`] (freed
//! with `Deallocate` on drop) or is copied into owned values and freed at once.
//!
//! # References are the caller's business
//!
//! JNI references (`jobject`, `jclass`, `jthread`) and JNI IDs (`jmethodID`, `jfieldID`) are passed
//! through unchecked. The VM checks what they refer to (a `jclass` that is not a class gives
//! `INVALID_CLASS`) but not whether a reference is still live: a local reference used after its
//! frame was popped, or on another thread, or a deleted global reference, is undefined behaviour
//! inside the VM. The agent keeps this sound by construction: IDs handed to the debugger map to
//! global references it owns, and local references never leave the callback or the
//! [`LocalFrame`](crate::jni::LocalFrame) that produced them. References returned by wrappers are
//! JNI local references of the calling thread, unless documented otherwise.
//!
//! # Threads
//!
//! Most functions need the calling thread attached to the VM (event callbacks and agent threads
//! are); from a detached thread they fail with `UNATTACHED_THREAD`.
//!
//! # Capabilities come early
//!
//! HotSpot offers most debugging capabilities (breakpoints, single step, local variables, frame
//! pop, field watches, method entry/exit, early return, monitor info) only during `Agent_OnLoad`;
//! an environment created later gets a much smaller set from `GetPotentialCapabilities`.

/// Calls JVMTI function `$name` through `$jvmti`'s table, with the environment prepended to the
/// arguments, and turns its error code into a `Result`. A slot the VM left null gives
/// `NOT_AVAILABLE`.
macro_rules! jvmti_call {
    ($jvmti:expr, $name:ident($($arg:expr),* $(,)?)) => {{
        let jvmti: $crate::jvmti::Jvmti = $jvmti;
        match jvmti.table().$name {
            // SAFETY: `jvmti` wraps a live environment (`Jvmti::from_raw`'s contract), whose table
            // slot `$name` holds the function the spec defines at that position, with the
            // signature declared in `sys`. The arguments are what that function expects: plain
            // values; pointers to locals or borrowed Rust data that outlive the call (out-pointers
            // are written at most once, with the types declared); and JNI references and IDs whose
            // validity is the caller's to ensure (see the module docs), which the VM checks as far
            // as it can.
            Some(f) => $crate::jvmti::JvmtiError::check(unsafe { f(jvmti.as_raw() $(, $arg)*) }),
            None => Err($crate::jvmti::JvmtiError::NOT_AVAILABLE),
        }
    }};
}

mod env;
mod error;
mod memory;
mod monitor;
pub mod sys;

#[cfg(test)]
mod fake;
#[cfg(test)]
mod tests;

use std::ptr::NonNull;

pub use env::{LocalVariable, MonitorUsage, NameAndSignature, StackTrace, StackTraces, ThreadGroupInfo, ThreadInfo};
pub use error::JvmtiError;
pub use memory::{JvmtiBuf, JvmtiString};
pub use monitor::{RawMonitor, RawMonitorGuard};

/// A JVMTI environment: a copyable handle the agent keeps for its lifetime.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Jvmti {
    env: NonNull<sys::jvmtiEnv>,
}

// SAFETY: the spec says JVMTI environments, unlike JNI environments, "work across threads": any
// attached thread may call any function through the same environment pointer, and the VM
// serializes what needs it. The handle is a pointer the VM owns and never moves; we never write
// through it. Functions with thread affinity (raw monitor exit) are guarded at the type level.
unsafe impl Send for Jvmti {}
// SAFETY: as for `Send`: shared use from many threads is the intended use.
unsafe impl Sync for Jvmti {}

impl Jvmti {
    /// Wraps an environment pointer obtained from `JavaVM::GetEnv`; `None` if it is null.
    ///
    /// # Safety
    ///
    /// `env` came from `GetEnv` with a version of at least [`sys::JVMTI_VERSION_11`] (so that its
    /// function table has all 156 slots [`sys::JvmtiInterface`] declares), and the environment is
    /// not disposed while any copy of the handle is used.
    pub unsafe fn from_raw(env: *mut sys::jvmtiEnv) -> Option<Jvmti> {
        let env = NonNull::new(env)?;
        // SAFETY: the caller promises a live environment, which points to a function table.
        if unsafe { env.as_ptr().read() }.is_null() {
            return None;
        }
        Some(Jvmti { env })
    }

    /// The environment pointer, for calls this module does not wrap.
    pub fn as_raw(self) -> *mut sys::jvmtiEnv {
        self.env.as_ptr()
    }

    /// The function table.
    fn table(self) -> &'static sys::JvmtiInterface {
        // SAFETY: `from_raw`'s contract: `env` points to a non-null pointer to a table of at least
        // `size_of::<JvmtiInterface>()` bytes that the VM never frees or changes while the
        // environment lives, and the environment outlives every use of the handle.
        unsafe { &**self.env.as_ptr() }
    }
}

impl std::fmt::Debug for Jvmti {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Jvmti({:p})", self.env)
    }
}
