//! JVMTI error codes, their names, and the JDWP error each one is reported as.

use jdwp_protocol::ErrorCode;

use super::sys;

/// A JVMTI error code other than `JVMTI_ERROR_NONE` (as the `Err` of a wrapper), or any raw code.
///
/// Kept as the raw number so that a code from a newer VM still prints and maps (to `INTERNAL`).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct JvmtiError(pub sys::jvmtiError);

macro_rules! errors {
    ($($name:ident = $raw:ident),* $(,)?) => {
        impl JvmtiError {
            $(pub const $name: JvmtiError = JvmtiError(sys::$raw);)*

            /// Every error code JVMTI 21 defines, `NONE` included.
            pub const ALL: &'static [JvmtiError] = &[$(JvmtiError::$name),*];

            /// The spec's name without the `JVMTI_ERROR_` prefix, or `None` for an unknown code.
            pub fn name(self) -> Option<&'static str> {
                $(if self == JvmtiError::$name { return Some(stringify!($name)); })*
                None
            }
        }
    };
}

errors! {
    NONE = JVMTI_ERROR_NONE,
    INVALID_THREAD = JVMTI_ERROR_INVALID_THREAD,
    INVALID_THREAD_GROUP = JVMTI_ERROR_INVALID_THREAD_GROUP,
    INVALID_PRIORITY = JVMTI_ERROR_INVALID_PRIORITY,
    THREAD_NOT_SUSPENDED = JVMTI_ERROR_THREAD_NOT_SUSPENDED,
    THREAD_SUSPENDED = JVMTI_ERROR_THREAD_SUSPENDED,
    THREAD_NOT_ALIVE = JVMTI_ERROR_THREAD_NOT_ALIVE,
    INVALID_OBJECT = JVMTI_ERROR_INVALID_OBJECT,
    INVALID_CLASS = JVMTI_ERROR_INVALID_CLASS,
    CLASS_NOT_PREPARED = JVMTI_ERROR_CLASS_NOT_PREPARED,
    INVALID_METHODID = JVMTI_ERROR_INVALID_METHODID,
    INVALID_LOCATION = JVMTI_ERROR_INVALID_LOCATION,
    INVALID_FIELDID = JVMTI_ERROR_INVALID_FIELDID,
    INVALID_MODULE = JVMTI_ERROR_INVALID_MODULE,
    NO_MORE_FRAMES = JVMTI_ERROR_NO_MORE_FRAMES,
    OPAQUE_FRAME = JVMTI_ERROR_OPAQUE_FRAME,
    TYPE_MISMATCH = JVMTI_ERROR_TYPE_MISMATCH,
    INVALID_SLOT = JVMTI_ERROR_INVALID_SLOT,
    DUPLICATE = JVMTI_ERROR_DUPLICATE,
    NOT_FOUND = JVMTI_ERROR_NOT_FOUND,
    INVALID_MONITOR = JVMTI_ERROR_INVALID_MONITOR,
    NOT_MONITOR_OWNER = JVMTI_ERROR_NOT_MONITOR_OWNER,
    INTERRUPT = JVMTI_ERROR_INTERRUPT,
    INVALID_CLASS_FORMAT = JVMTI_ERROR_INVALID_CLASS_FORMAT,
    CIRCULAR_CLASS_DEFINITION = JVMTI_ERROR_CIRCULAR_CLASS_DEFINITION,
    FAILS_VERIFICATION = JVMTI_ERROR_FAILS_VERIFICATION,
    UNSUPPORTED_REDEFINITION_METHOD_ADDED = JVMTI_ERROR_UNSUPPORTED_REDEFINITION_METHOD_ADDED,
    UNSUPPORTED_REDEFINITION_SCHEMA_CHANGED = JVMTI_ERROR_UNSUPPORTED_REDEFINITION_SCHEMA_CHANGED,
    INVALID_TYPESTATE = JVMTI_ERROR_INVALID_TYPESTATE,
    UNSUPPORTED_REDEFINITION_HIERARCHY_CHANGED = JVMTI_ERROR_UNSUPPORTED_REDEFINITION_HIERARCHY_CHANGED,
    UNSUPPORTED_REDEFINITION_METHOD_DELETED = JVMTI_ERROR_UNSUPPORTED_REDEFINITION_METHOD_DELETED,
    UNSUPPORTED_VERSION = JVMTI_ERROR_UNSUPPORTED_VERSION,
    NAMES_DONT_MATCH = JVMTI_ERROR_NAMES_DONT_MATCH,
    UNSUPPORTED_OPERATION = JVMTI_ERROR_UNSUPPORTED_OPERATION,
    UNSUPPORTED_REDEFINITION_CLASS_MODIFIERS_CHANGED = JVMTI_ERROR_UNSUPPORTED_REDEFINITION_CLASS_MODIFIERS_CHANGED,
    UNSUPPORTED_REDEFINITION_METHOD_MODIFIERS_CHANGED = JVMTI_ERROR_UNSUPPORTED_REDEFINITION_METHOD_MODIFIERS_CHANGED,
    UNSUPPORTED_REDEFINITION_CLASS_ATTRIBUTE_CHANGED = JVMTI_ERROR_UNSUPPORTED_REDEFINITION_CLASS_ATTRIBUTE_CHANGED,
    UNMODIFIABLE_CLASS = JVMTI_ERROR_UNMODIFIABLE_CLASS,
    UNMODIFIABLE_MODULE = JVMTI_ERROR_UNMODIFIABLE_MODULE,
    NOT_AVAILABLE = JVMTI_ERROR_NOT_AVAILABLE,
    MUST_POSSESS_CAPABILITY = JVMTI_ERROR_MUST_POSSESS_CAPABILITY,
    NULL_POINTER = JVMTI_ERROR_NULL_POINTER,
    ABSENT_INFORMATION = JVMTI_ERROR_ABSENT_INFORMATION,
    INVALID_EVENT_TYPE = JVMTI_ERROR_INVALID_EVENT_TYPE,
    ILLEGAL_ARGUMENT = JVMTI_ERROR_ILLEGAL_ARGUMENT,
    NATIVE_METHOD = JVMTI_ERROR_NATIVE_METHOD,
    CLASS_LOADER_UNSUPPORTED = JVMTI_ERROR_CLASS_LOADER_UNSUPPORTED,
    OUT_OF_MEMORY = JVMTI_ERROR_OUT_OF_MEMORY,
    ACCESS_DENIED = JVMTI_ERROR_ACCESS_DENIED,
    WRONG_PHASE = JVMTI_ERROR_WRONG_PHASE,
    INTERNAL = JVMTI_ERROR_INTERNAL,
    UNATTACHED_THREAD = JVMTI_ERROR_UNATTACHED_THREAD,
    INVALID_ENVIRONMENT = JVMTI_ERROR_INVALID_ENVIRONMENT,
}

impl JvmtiError {
    /// `Ok(())` for `JVMTI_ERROR_NONE`, the error otherwise.
    #[inline]
    pub fn check(raw: sys::jvmtiError) -> Result<(), JvmtiError> {
        if raw == sys::JVMTI_ERROR_NONE { Ok(()) } else { Err(JvmtiError(raw)) }
    }

    /// The JDWP error to report for this JVMTI error.
    ///
    /// Codes JDWP shares with JVMTI keep their meaning (some under another number: `INVALID_MODULE`
    /// and `NATIVE_METHOD`; some under another name: the `UNSUPPORTED_REDEFINITION_*` family maps to
    /// the `*_NOT_IMPLEMENTED` errors). Where JDWP has no counterpart we follow what HotSpot's agent
    /// sends, because JDI clients are written against it:
    /// * `THREAD_NOT_ALIVE` → `INVALID_THREAD` (JDWP's `THREAD_NOT_ALIVE` is never sent by HotSpot,
    ///   and JDI reads `INVALID_THREAD` as "the thread is gone");
    /// * `WRONG_PHASE` → `VM_DEAD` (after VMDeath is the only wrong phase an agent sees);
    /// * `NOT_AVAILABLE`, `MUST_POSSESS_CAPABILITY`, `UNMODIFIABLE_CLASS`, `UNMODIFIABLE_MODULE`,
    ///   `CLASS_LOADER_UNSUPPORTED` and JVMTI 21's `UNSUPPORTED_OPERATION` (e.g. an operation a VM
    ///   does not support on a virtual thread) → `NOT_IMPLEMENTED` (JDI turns it into
    ///   `UnsupportedOperationException`);
    /// * `INVALID_ENVIRONMENT` and anything unknown → `INTERNAL`.
    pub fn to_jdwp(self) -> ErrorCode {
        match self {
            JvmtiError::NONE => ErrorCode::NONE,
            JvmtiError::INVALID_THREAD | JvmtiError::THREAD_NOT_ALIVE => ErrorCode::INVALID_THREAD,
            JvmtiError::INVALID_THREAD_GROUP => ErrorCode::INVALID_THREAD_GROUP,
            JvmtiError::INVALID_PRIORITY => ErrorCode::INVALID_PRIORITY,
            JvmtiError::THREAD_NOT_SUSPENDED => ErrorCode::THREAD_NOT_SUSPENDED,
            JvmtiError::THREAD_SUSPENDED => ErrorCode::THREAD_SUSPENDED,
            JvmtiError::INVALID_OBJECT => ErrorCode::INVALID_OBJECT,
            JvmtiError::INVALID_CLASS => ErrorCode::INVALID_CLASS,
            JvmtiError::CLASS_NOT_PREPARED => ErrorCode::CLASS_NOT_PREPARED,
            JvmtiError::INVALID_METHODID => ErrorCode::INVALID_METHODID,
            JvmtiError::INVALID_LOCATION => ErrorCode::INVALID_LOCATION,
            JvmtiError::INVALID_FIELDID => ErrorCode::INVALID_FIELDID,
            JvmtiError::INVALID_MODULE => ErrorCode::INVALID_MODULE,
            JvmtiError::NO_MORE_FRAMES => ErrorCode::NO_MORE_FRAMES,
            JvmtiError::OPAQUE_FRAME => ErrorCode::OPAQUE_FRAME,
            JvmtiError::TYPE_MISMATCH => ErrorCode::TYPE_MISMATCH,
            JvmtiError::INVALID_SLOT => ErrorCode::INVALID_SLOT,
            JvmtiError::DUPLICATE => ErrorCode::DUPLICATE,
            JvmtiError::NOT_FOUND => ErrorCode::NOT_FOUND,
            JvmtiError::INVALID_MONITOR => ErrorCode::INVALID_MONITOR,
            JvmtiError::NOT_MONITOR_OWNER => ErrorCode::NOT_MONITOR_OWNER,
            JvmtiError::INTERRUPT => ErrorCode::INTERRUPT,
            JvmtiError::INVALID_CLASS_FORMAT => ErrorCode::INVALID_CLASS_FORMAT,
            JvmtiError::CIRCULAR_CLASS_DEFINITION => ErrorCode::CIRCULAR_CLASS_DEFINITION,
            JvmtiError::FAILS_VERIFICATION => ErrorCode::FAILS_VERIFICATION,
            JvmtiError::UNSUPPORTED_REDEFINITION_METHOD_ADDED => ErrorCode::ADD_METHOD_NOT_IMPLEMENTED,
            JvmtiError::UNSUPPORTED_REDEFINITION_SCHEMA_CHANGED => ErrorCode::SCHEMA_CHANGE_NOT_IMPLEMENTED,
            JvmtiError::INVALID_TYPESTATE => ErrorCode::INVALID_TYPESTATE,
            JvmtiError::UNSUPPORTED_REDEFINITION_HIERARCHY_CHANGED => ErrorCode::HIERARCHY_CHANGE_NOT_IMPLEMENTED,
            JvmtiError::UNSUPPORTED_REDEFINITION_METHOD_DELETED => ErrorCode::DELETE_METHOD_NOT_IMPLEMENTED,
            JvmtiError::UNSUPPORTED_VERSION => ErrorCode::UNSUPPORTED_VERSION,
            JvmtiError::NAMES_DONT_MATCH => ErrorCode::NAMES_DONT_MATCH,
            JvmtiError::UNSUPPORTED_REDEFINITION_CLASS_MODIFIERS_CHANGED => {
                ErrorCode::CLASS_MODIFIERS_CHANGE_NOT_IMPLEMENTED
            }
            JvmtiError::UNSUPPORTED_REDEFINITION_METHOD_MODIFIERS_CHANGED => {
                ErrorCode::METHOD_MODIFIERS_CHANGE_NOT_IMPLEMENTED
            }
            JvmtiError::UNSUPPORTED_REDEFINITION_CLASS_ATTRIBUTE_CHANGED => {
                ErrorCode::CLASS_ATTRIBUTE_CHANGE_NOT_IMPLEMENTED
            }
            JvmtiError::NOT_AVAILABLE
            | JvmtiError::MUST_POSSESS_CAPABILITY
            | JvmtiError::UNMODIFIABLE_CLASS
            | JvmtiError::UNMODIFIABLE_MODULE
            | JvmtiError::CLASS_LOADER_UNSUPPORTED
            | JvmtiError::UNSUPPORTED_OPERATION => ErrorCode::NOT_IMPLEMENTED,
            JvmtiError::NULL_POINTER => ErrorCode::NULL_POINTER,
            JvmtiError::ABSENT_INFORMATION => ErrorCode::ABSENT_INFORMATION,
            JvmtiError::INVALID_EVENT_TYPE => ErrorCode::INVALID_EVENT_TYPE,
            JvmtiError::ILLEGAL_ARGUMENT => ErrorCode::ILLEGAL_ARGUMENT,
            JvmtiError::NATIVE_METHOD => ErrorCode::NATIVE_METHOD,
            JvmtiError::OUT_OF_MEMORY => ErrorCode::OUT_OF_MEMORY,
            JvmtiError::ACCESS_DENIED => ErrorCode::ACCESS_DENIED,
            JvmtiError::WRONG_PHASE => ErrorCode::VM_DEAD,
            JvmtiError::UNATTACHED_THREAD => ErrorCode::UNATTACHED_THREAD,
            _ => ErrorCode::INTERNAL,
        }
    }
}

impl From<JvmtiError> for ErrorCode {
    fn from(e: JvmtiError) -> ErrorCode {
        e.to_jdwp()
    }
}

impl std::fmt::Debug for JvmtiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.name() {
            Some(name) => write!(f, "JVMTI_ERROR_{name}({})", self.0),
            None => write!(f, "JvmtiError({})", self.0),
        }
    }
}

impl std::fmt::Display for JvmtiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "JVMTI error {} ({})", self.name().unwrap_or("UNKNOWN"), self.0)
    }
}

impl std::error::Error for JvmtiError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_known_codes_count_53() {
        let mut names: Vec<_> = JvmtiError::ALL.iter().map(|e| e.name().unwrap()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), JvmtiError::ALL.len());
        assert_eq!(JvmtiError::ALL.len(), 53);
        assert_eq!(JvmtiError(9999).name(), None);
        assert_eq!(JvmtiError::OPAQUE_FRAME.name(), Some("OPAQUE_FRAME"));
        assert_eq!(format!("{:?}", JvmtiError(32)), "JVMTI_ERROR_OPAQUE_FRAME(32)");
        assert_eq!(JvmtiError(32).to_string(), "JVMTI error OPAQUE_FRAME (32)");
    }

    #[test]
    fn check_splits_none_from_errors() {
        assert_eq!(JvmtiError::check(sys::JVMTI_ERROR_NONE), Ok(()));
        assert_eq!(JvmtiError::check(sys::JVMTI_ERROR_INVALID_SLOT), Err(JvmtiError::INVALID_SLOT));
    }

    #[test]
    fn shared_codes_keep_their_meaning() {
        // Same name on both sides: the JDWP code has the same name (and, but for two, the same number).
        for e in JvmtiError::ALL {
            let name = e.name().unwrap();
            if let Some(jdwp) = ErrorCode::ALL.iter().find(|c| c.name() == Some(name)) {
                let expected = if *e == JvmtiError::THREAD_NOT_ALIVE { ErrorCode::INVALID_THREAD } else { *jdwp };
                assert_eq!(e.to_jdwp(), expected, "{name}");
            }
        }
        assert_eq!(JvmtiError::NATIVE_METHOD.to_jdwp(), ErrorCode::NATIVE_METHOD);
        assert_eq!(JvmtiError::NATIVE_METHOD.to_jdwp().0, 511);
        assert_eq!(JvmtiError::INVALID_MODULE.to_jdwp().0, 42);
    }

    #[test]
    fn jvmti_only_codes_map_like_hotspot() {
        let cases = [
            (JvmtiError::THREAD_NOT_ALIVE, ErrorCode::INVALID_THREAD),
            (JvmtiError::WRONG_PHASE, ErrorCode::VM_DEAD),
            (JvmtiError::MUST_POSSESS_CAPABILITY, ErrorCode::NOT_IMPLEMENTED),
            (JvmtiError::NOT_AVAILABLE, ErrorCode::NOT_IMPLEMENTED),
            (JvmtiError::UNSUPPORTED_OPERATION, ErrorCode::NOT_IMPLEMENTED),
            (JvmtiError::UNMODIFIABLE_CLASS, ErrorCode::NOT_IMPLEMENTED),
            (JvmtiError::UNSUPPORTED_REDEFINITION_METHOD_ADDED, ErrorCode::ADD_METHOD_NOT_IMPLEMENTED),
            (JvmtiError::UNSUPPORTED_REDEFINITION_SCHEMA_CHANGED, ErrorCode::SCHEMA_CHANGE_NOT_IMPLEMENTED),
            (JvmtiError::UNSUPPORTED_REDEFINITION_HIERARCHY_CHANGED, ErrorCode::HIERARCHY_CHANGE_NOT_IMPLEMENTED),
            (JvmtiError::UNSUPPORTED_REDEFINITION_METHOD_DELETED, ErrorCode::DELETE_METHOD_NOT_IMPLEMENTED),
            (
                JvmtiError::UNSUPPORTED_REDEFINITION_CLASS_MODIFIERS_CHANGED,
                ErrorCode::CLASS_MODIFIERS_CHANGE_NOT_IMPLEMENTED,
            ),
            (
                JvmtiError::UNSUPPORTED_REDEFINITION_METHOD_MODIFIERS_CHANGED,
                ErrorCode::METHOD_MODIFIERS_CHANGE_NOT_IMPLEMENTED,
            ),
            (
                JvmtiError::UNSUPPORTED_REDEFINITION_CLASS_ATTRIBUTE_CHANGED,
                ErrorCode::CLASS_ATTRIBUTE_CHANGE_NOT_IMPLEMENTED,
            ),
            (JvmtiError::INVALID_ENVIRONMENT, ErrorCode::INTERNAL),
            (JvmtiError(12345), ErrorCode::INTERNAL),
        ];
        for (jvmti, jdwp) in cases {
            assert_eq!(jvmti.to_jdwp(), jdwp, "{jvmti:?}");
        }
        // Every JVMTI error becomes a JDWP error the protocol defines.
        for e in JvmtiError::ALL {
            assert!(e.to_jdwp().name().is_some(), "{e:?}");
            assert_eq!(e.to_jdwp().is_error(), *e != JvmtiError::NONE);
        }
    }
}
