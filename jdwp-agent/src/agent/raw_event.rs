//! Events as callbacks capture them: owned JNI global references, `jmethodID`s, `jlocation`s.
//! Their conversion to the protocol's events is [`crate::raw`]'s; the types live here, with the
//! agent, because the event helper's jobs ([`super::helper::Job`]) carry them.

use jdwp_protocol::Value;

use super::GlobalRef;
use crate::jni::Jni;

/// A value as a callback captured it.
#[derive(Debug)]
pub enum RawValue {
    Plain(Value),
    /// A reference (`None`: null), converted to a tagged object ID by the helper.
    Object(Option<GlobalRef>),
}

/// The events of one occurrence: almost always one, kept inline, so that a callback allocates
/// nothing for it on the application thread and the helper frees nothing another thread
/// allocated.
pub type RawEvents = smallvec::SmallVec<[RawEvent; 1]>;

/// An event as a callback captured it: owned global references, raw JVMTI values (methods as
/// `jmethodID`s, code indexes as `jlocation`s, -1 for native code).
#[derive(Debug)]
pub enum RawEvent {
    VmStart {
        request_id: i32,
        thread: GlobalRef,
    },
    VmDeath {
        request_id: i32,
    },
    /// `virtual_thread`: reported by `VirtualThreadStart` (the helper then asks no JNI whether it
    /// is one).
    ThreadStart {
        request_id: i32,
        thread: GlobalRef,
        virtual_thread: bool,
    },
    ThreadDeath {
        request_id: i32,
        thread: GlobalRef,
        virtual_thread: bool,
    },
    ClassPrepare {
        request_id: i32,
        thread: GlobalRef,
        class: GlobalRef,
    },
    ClassUnload {
        request_id: i32,
        signature: String,
    },
    Breakpoint {
        request_id: i32,
        thread: GlobalRef,
        method: usize,
        index: i64,
    },
    SingleStep {
        request_id: i32,
        thread: GlobalRef,
        method: usize,
        index: i64,
    },
    MethodEntry {
        request_id: i32,
        thread: GlobalRef,
        method: usize,
        index: i64,
    },
    MethodExit {
        request_id: i32,
        thread: GlobalRef,
        method: usize,
        index: i64,
    },
    MethodExitWithReturnValue {
        request_id: i32,
        thread: GlobalRef,
        method: usize,
        index: i64,
        value: RawValue,
    },
    MonitorContendedEnter {
        request_id: i32,
        thread: GlobalRef,
        object: GlobalRef,
        method: usize,
        index: i64,
    },
    MonitorContendedEntered {
        request_id: i32,
        thread: GlobalRef,
        object: GlobalRef,
        method: usize,
        index: i64,
    },
    MonitorWait {
        request_id: i32,
        thread: GlobalRef,
        object: GlobalRef,
        method: usize,
        index: i64,
        timeout: i64,
    },
    MonitorWaited {
        request_id: i32,
        thread: GlobalRef,
        object: GlobalRef,
        method: usize,
        index: i64,
        timed_out: bool,
    },
    Exception {
        request_id: i32,
        thread: GlobalRef,
        method: usize,
        index: i64,
        exception: GlobalRef,
        /// Where it will be caught; `None` if uncaught.
        catch: Option<(usize, i64)>,
    },
    FieldAccess {
        request_id: i32,
        thread: GlobalRef,
        method: usize,
        index: i64,
        field_class: GlobalRef,
        field: usize,
        object: Option<GlobalRef>,
    },
    FieldModification {
        request_id: i32,
        thread: GlobalRef,
        method: usize,
        index: i64,
        field_class: GlobalRef,
        field: usize,
        object: Option<GlobalRef>,
        value: RawValue,
    },
}

impl RawEvent {
    /// The global references the event owns (at most four; no allocation: events that suspend
    /// nothing are released one by one on the helper's path).
    pub fn refs(&self) -> impl Iterator<Item = GlobalRef> {
        let value_ref = |v: &RawValue| match v {
            RawValue::Object(Some(r)) => Some(*r),
            _ => None,
        };
        let refs: [Option<GlobalRef>; 4] = match self {
            RawEvent::VmDeath { .. } | RawEvent::ClassUnload { .. } => [None; 4],
            RawEvent::VmStart { thread, .. }
            | RawEvent::ThreadStart { thread, .. }
            | RawEvent::ThreadDeath { thread, .. }
            | RawEvent::Breakpoint { thread, .. }
            | RawEvent::SingleStep { thread, .. }
            | RawEvent::MethodEntry { thread, .. }
            | RawEvent::MethodExit { thread, .. } => [Some(*thread), None, None, None],
            RawEvent::MethodExitWithReturnValue { thread, value, .. } => [Some(*thread), value_ref(value), None, None],
            RawEvent::ClassPrepare { thread, class, .. } => [Some(*thread), Some(*class), None, None],
            RawEvent::MonitorContendedEnter { thread, object, .. }
            | RawEvent::MonitorContendedEntered { thread, object, .. }
            | RawEvent::MonitorWait { thread, object, .. }
            | RawEvent::MonitorWaited { thread, object, .. } => [Some(*thread), Some(*object), None, None],
            RawEvent::Exception { thread, exception, .. } => [Some(*thread), Some(*exception), None, None],
            RawEvent::FieldAccess { thread, field_class, object, .. } => {
                [Some(*thread), Some(*field_class), *object, None]
            }
            RawEvent::FieldModification { thread, field_class, object, value, .. } => {
                [Some(*thread), Some(*field_class), *object, value_ref(value)]
            }
        };
        refs.into_iter().flatten()
    }

    /// Deletes the event's global references (an event dropped without being sent).
    pub fn release(self, jni: Jni) {
        for r in self.refs() {
            jni.delete_global_ref(r.0);
        }
    }
}
