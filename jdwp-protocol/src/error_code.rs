//! JDWP error codes (`Error` constant set), with names and descriptions.
//!
//! An error code is kept as its raw number so that a code this crate does not know (from a newer VM
//! or a vendor) still round-trips and prints; the known ones have constants, names and descriptions.

/// A JDWP error code, as carried in a reply header.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ErrorCode(pub u16);

impl ErrorCode {
    /// No error.
    pub const NONE: ErrorCode = ErrorCode(0);
    /// The thread is null or not a valid thread.
    pub const INVALID_THREAD: ErrorCode = ErrorCode(10);
    /// The thread group is invalid.
    pub const INVALID_THREAD_GROUP: ErrorCode = ErrorCode(11);
    /// The priority is invalid.
    pub const INVALID_PRIORITY: ErrorCode = ErrorCode(12);
    /// The thread is not suspended, and the operation needs it to be.
    pub const THREAD_NOT_SUSPENDED: ErrorCode = ErrorCode(13);
    /// The thread is already suspended.
    pub const THREAD_SUSPENDED: ErrorCode = ErrorCode(14);
    /// The thread has not started or has already terminated.
    pub const THREAD_NOT_ALIVE: ErrorCode = ErrorCode(15);
    /// The object ID does not name a live object (never valid, or collected).
    pub const INVALID_OBJECT: ErrorCode = ErrorCode(20);
    /// The class is invalid.
    pub const INVALID_CLASS: ErrorCode = ErrorCode(21);
    /// The class has been loaded but not yet prepared.
    pub const CLASS_NOT_PREPARED: ErrorCode = ErrorCode(22);
    /// The method is invalid.
    pub const INVALID_METHODID: ErrorCode = ErrorCode(23);
    /// The location is invalid.
    pub const INVALID_LOCATION: ErrorCode = ErrorCode(24);
    /// The field is invalid.
    pub const INVALID_FIELDID: ErrorCode = ErrorCode(25);
    /// The frame ID is invalid (stale after a resume, or never valid).
    pub const INVALID_FRAMEID: ErrorCode = ErrorCode(30);
    /// There are no more Java or JNI frames on the call stack.
    pub const NO_MORE_FRAMES: ErrorCode = ErrorCode(31);
    /// Information about the frame is not available (e.g. a native frame).
    pub const OPAQUE_FRAME: ErrorCode = ErrorCode(32);
    /// The operation can only be performed on the current frame.
    pub const NOT_CURRENT_FRAME: ErrorCode = ErrorCode(33);
    /// The variable is not of an appropriate type for the function used.
    pub const TYPE_MISMATCH: ErrorCode = ErrorCode(34);
    /// The slot is invalid.
    pub const INVALID_SLOT: ErrorCode = ErrorCode(35);
    /// The item is already set.
    pub const DUPLICATE: ErrorCode = ErrorCode(40);
    /// The desired element was not found.
    pub const NOT_FOUND: ErrorCode = ErrorCode(41);
    /// The module is invalid.
    pub const INVALID_MODULE: ErrorCode = ErrorCode(42);
    /// The monitor is invalid.
    pub const INVALID_MONITOR: ErrorCode = ErrorCode(50);
    /// The thread does not own the monitor.
    pub const NOT_MONITOR_OWNER: ErrorCode = ErrorCode(51);
    /// The call was interrupted before completion.
    pub const INTERRUPT: ErrorCode = ErrorCode(52);
    /// The class file is malformed.
    pub const INVALID_CLASS_FORMAT: ErrorCode = ErrorCode(60);
    /// The class would be its own superclass or superinterface.
    pub const CIRCULAR_CLASS_DEFINITION: ErrorCode = ErrorCode(61);
    /// The class file failed verification.
    pub const FAILS_VERIFICATION: ErrorCode = ErrorCode(62);
    /// The redefinition would add a method, which is not supported.
    pub const ADD_METHOD_NOT_IMPLEMENTED: ErrorCode = ErrorCode(63);
    /// The redefinition would change a field, which is not supported.
    pub const SCHEMA_CHANGE_NOT_IMPLEMENTED: ErrorCode = ErrorCode(64);
    /// The thread state has been modified and is now inconsistent.
    pub const INVALID_TYPESTATE: ErrorCode = ErrorCode(65);
    /// The redefinition would change the direct superclass or interfaces.
    pub const HIERARCHY_CHANGE_NOT_IMPLEMENTED: ErrorCode = ErrorCode(66);
    /// The redefinition would delete a method, which is not supported.
    pub const DELETE_METHOD_NOT_IMPLEMENTED: ErrorCode = ErrorCode(67);
    /// The class file's version is not supported by this VM.
    pub const UNSUPPORTED_VERSION: ErrorCode = ErrorCode(68);
    /// The class file names a different class than the one being redefined.
    pub const NAMES_DONT_MATCH: ErrorCode = ErrorCode(69);
    /// The redefinition would change class modifiers.
    pub const CLASS_MODIFIERS_CHANGE_NOT_IMPLEMENTED: ErrorCode = ErrorCode(70);
    /// The redefinition would change method modifiers.
    pub const METHOD_MODIFIERS_CHANGE_NOT_IMPLEMENTED: ErrorCode = ErrorCode(71);
    /// The redefinition would change a class attribute.
    pub const CLASS_ATTRIBUTE_CHANGE_NOT_IMPLEMENTED: ErrorCode = ErrorCode(72);
    /// The functionality is not implemented in this virtual machine.
    pub const NOT_IMPLEMENTED: ErrorCode = ErrorCode(99);
    /// A null pointer was given where one is not allowed.
    pub const NULL_POINTER: ErrorCode = ErrorCode(100);
    /// The requested information is not available (e.g. compiled without -g).
    pub const ABSENT_INFORMATION: ErrorCode = ErrorCode(101);
    /// The event type is not recognized.
    pub const INVALID_EVENT_TYPE: ErrorCode = ErrorCode(102);
    /// An argument is illegal.
    pub const ILLEGAL_ARGUMENT: ErrorCode = ErrorCode(103);
    /// The function needed memory and none could be allocated.
    pub const OUT_OF_MEMORY: ErrorCode = ErrorCode(110);
    /// Debugging has not been enabled in this VM; JVMTI cannot be used.
    pub const ACCESS_DENIED: ErrorCode = ErrorCode(111);
    /// The virtual machine is not running.
    pub const VM_DEAD: ErrorCode = ErrorCode(112);
    /// An unexpected internal error occurred.
    pub const INTERNAL: ErrorCode = ErrorCode(113);
    /// The thread making the call is not attached to the VM.
    pub const UNATTACHED_THREAD: ErrorCode = ErrorCode(115);
    /// The object type tag is not recognized.
    pub const INVALID_TAG: ErrorCode = ErrorCode(500);
    /// A method invocation is already in progress on this thread.
    pub const ALREADY_INVOKING: ErrorCode = ErrorCode(502);
    /// The index is out of range.
    pub const INVALID_INDEX: ErrorCode = ErrorCode(503);
    /// The length is invalid.
    pub const INVALID_LENGTH: ErrorCode = ErrorCode(504);
    /// The string is invalid.
    pub const INVALID_STRING: ErrorCode = ErrorCode(506);
    /// The class loader is invalid.
    pub const INVALID_CLASS_LOADER: ErrorCode = ErrorCode(507);
    /// The array is invalid.
    pub const INVALID_ARRAY: ErrorCode = ErrorCode(508);
    /// The transport could not be loaded.
    pub const TRANSPORT_LOAD: ErrorCode = ErrorCode(509);
    /// The transport could not be initialized.
    pub const TRANSPORT_INIT: ErrorCode = ErrorCode(510);
    /// The operation is not valid on a native method.
    pub const NATIVE_METHOD: ErrorCode = ErrorCode(511);
    /// The count is invalid.
    pub const INVALID_COUNT: ErrorCode = ErrorCode(512);

    /// Every error code the protocol defines.
    pub const ALL: &'static [ErrorCode] = &[
        ErrorCode::NONE,
        ErrorCode::INVALID_THREAD,
        ErrorCode::INVALID_THREAD_GROUP,
        ErrorCode::INVALID_PRIORITY,
        ErrorCode::THREAD_NOT_SUSPENDED,
        ErrorCode::THREAD_SUSPENDED,
        ErrorCode::THREAD_NOT_ALIVE,
        ErrorCode::INVALID_OBJECT,
        ErrorCode::INVALID_CLASS,
        ErrorCode::CLASS_NOT_PREPARED,
        ErrorCode::INVALID_METHODID,
        ErrorCode::INVALID_LOCATION,
        ErrorCode::INVALID_FIELDID,
        ErrorCode::INVALID_FRAMEID,
        ErrorCode::NO_MORE_FRAMES,
        ErrorCode::OPAQUE_FRAME,
        ErrorCode::NOT_CURRENT_FRAME,
        ErrorCode::TYPE_MISMATCH,
        ErrorCode::INVALID_SLOT,
        ErrorCode::DUPLICATE,
        ErrorCode::NOT_FOUND,
        ErrorCode::INVALID_MODULE,
        ErrorCode::INVALID_MONITOR,
        ErrorCode::NOT_MONITOR_OWNER,
        ErrorCode::INTERRUPT,
        ErrorCode::INVALID_CLASS_FORMAT,
        ErrorCode::CIRCULAR_CLASS_DEFINITION,
        ErrorCode::FAILS_VERIFICATION,
        ErrorCode::ADD_METHOD_NOT_IMPLEMENTED,
        ErrorCode::SCHEMA_CHANGE_NOT_IMPLEMENTED,
        ErrorCode::INVALID_TYPESTATE,
        ErrorCode::HIERARCHY_CHANGE_NOT_IMPLEMENTED,
        ErrorCode::DELETE_METHOD_NOT_IMPLEMENTED,
        ErrorCode::UNSUPPORTED_VERSION,
        ErrorCode::NAMES_DONT_MATCH,
        ErrorCode::CLASS_MODIFIERS_CHANGE_NOT_IMPLEMENTED,
        ErrorCode::METHOD_MODIFIERS_CHANGE_NOT_IMPLEMENTED,
        ErrorCode::CLASS_ATTRIBUTE_CHANGE_NOT_IMPLEMENTED,
        ErrorCode::NOT_IMPLEMENTED,
        ErrorCode::NULL_POINTER,
        ErrorCode::ABSENT_INFORMATION,
        ErrorCode::INVALID_EVENT_TYPE,
        ErrorCode::ILLEGAL_ARGUMENT,
        ErrorCode::OUT_OF_MEMORY,
        ErrorCode::ACCESS_DENIED,
        ErrorCode::VM_DEAD,
        ErrorCode::INTERNAL,
        ErrorCode::UNATTACHED_THREAD,
        ErrorCode::INVALID_TAG,
        ErrorCode::ALREADY_INVOKING,
        ErrorCode::INVALID_INDEX,
        ErrorCode::INVALID_LENGTH,
        ErrorCode::INVALID_STRING,
        ErrorCode::INVALID_CLASS_LOADER,
        ErrorCode::INVALID_ARRAY,
        ErrorCode::TRANSPORT_LOAD,
        ErrorCode::TRANSPORT_INIT,
        ErrorCode::NATIVE_METHOD,
        ErrorCode::INVALID_COUNT,
    ];

    /// The spec's name, or `None` for a code the protocol does not define.
    pub fn name(self) -> Option<&'static str> {
        Some(match self.0 {
            0 => "NONE",
            10 => "INVALID_THREAD",
            11 => "INVALID_THREAD_GROUP",
            12 => "INVALID_PRIORITY",
            13 => "THREAD_NOT_SUSPENDED",
            14 => "THREAD_SUSPENDED",
            15 => "THREAD_NOT_ALIVE",
            20 => "INVALID_OBJECT",
            21 => "INVALID_CLASS",
            22 => "CLASS_NOT_PREPARED",
            23 => "INVALID_METHODID",
            24 => "INVALID_LOCATION",
            25 => "INVALID_FIELDID",
            30 => "INVALID_FRAMEID",
            31 => "NO_MORE_FRAMES",
            32 => "OPAQUE_FRAME",
            33 => "NOT_CURRENT_FRAME",
            34 => "TYPE_MISMATCH",
            35 => "INVALID_SLOT",
            40 => "DUPLICATE",
            41 => "NOT_FOUND",
            42 => "INVALID_MODULE",
            50 => "INVALID_MONITOR",
            51 => "NOT_MONITOR_OWNER",
            52 => "INTERRUPT",
            60 => "INVALID_CLASS_FORMAT",
            61 => "CIRCULAR_CLASS_DEFINITION",
            62 => "FAILS_VERIFICATION",
            63 => "ADD_METHOD_NOT_IMPLEMENTED",
            64 => "SCHEMA_CHANGE_NOT_IMPLEMENTED",
            65 => "INVALID_TYPESTATE",
            66 => "HIERARCHY_CHANGE_NOT_IMPLEMENTED",
            67 => "DELETE_METHOD_NOT_IMPLEMENTED",
            68 => "UNSUPPORTED_VERSION",
            69 => "NAMES_DONT_MATCH",
            70 => "CLASS_MODIFIERS_CHANGE_NOT_IMPLEMENTED",
            71 => "METHOD_MODIFIERS_CHANGE_NOT_IMPLEMENTED",
            72 => "CLASS_ATTRIBUTE_CHANGE_NOT_IMPLEMENTED",
            99 => "NOT_IMPLEMENTED",
            100 => "NULL_POINTER",
            101 => "ABSENT_INFORMATION",
            102 => "INVALID_EVENT_TYPE",
            103 => "ILLEGAL_ARGUMENT",
            110 => "OUT_OF_MEMORY",
            111 => "ACCESS_DENIED",
            112 => "VM_DEAD",
            113 => "INTERNAL",
            115 => "UNATTACHED_THREAD",
            500 => "INVALID_TAG",
            502 => "ALREADY_INVOKING",
            503 => "INVALID_INDEX",
            504 => "INVALID_LENGTH",
            506 => "INVALID_STRING",
            507 => "INVALID_CLASS_LOADER",
            508 => "INVALID_ARRAY",
            509 => "TRANSPORT_LOAD",
            510 => "TRANSPORT_INIT",
            511 => "NATIVE_METHOD",
            512 => "INVALID_COUNT",
            _ => return None,
        })
    }

    /// A one-line explanation.
    pub fn description(self) -> &'static str {
        match self.0 {
            0 => "No error.",
            10 => "The thread is null or not a valid thread.",
            11 => "The thread group is invalid.",
            12 => "The priority is invalid.",
            13 => "The thread is not suspended, and the operation needs it to be.",
            14 => "The thread is already suspended.",
            15 => "The thread has not started or has already terminated.",
            20 => "The object ID does not name a live object (never valid, or collected).",
            21 => "The class is invalid.",
            22 => "The class has been loaded but not yet prepared.",
            23 => "The method is invalid.",
            24 => "The location is invalid.",
            25 => "The field is invalid.",
            30 => "The frame ID is invalid (stale after a resume, or never valid).",
            31 => "There are no more Java or JNI frames on the call stack.",
            32 => "Information about the frame is not available (e.g. a native frame).",
            33 => "The operation can only be performed on the current frame.",
            34 => "The variable is not of an appropriate type for the function used.",
            35 => "The slot is invalid.",
            40 => "The item is already set.",
            41 => "The desired element was not found.",
            42 => "The module is invalid.",
            50 => "The monitor is invalid.",
            51 => "The thread does not own the monitor.",
            52 => "The call was interrupted before completion.",
            60 => "The class file is malformed.",
            61 => "The class would be its own superclass or superinterface.",
            62 => "The class file failed verification.",
            63 => "The redefinition would add a method, which is not supported.",
            64 => "The redefinition would change a field, which is not supported.",
            65 => "The thread state has been modified and is now inconsistent.",
            66 => "The redefinition would change the direct superclass or interfaces.",
            67 => "The redefinition would delete a method, which is not supported.",
            68 => "The class file's version is not supported by this VM.",
            69 => "The class file names a different class than the one being redefined.",
            70 => "The redefinition would change class modifiers.",
            71 => "The redefinition would change method modifiers.",
            72 => "The redefinition would change a class attribute.",
            99 => "The functionality is not implemented in this virtual machine.",
            100 => "A null pointer was given where one is not allowed.",
            101 => "The requested information is not available (e.g. compiled without -g).",
            102 => "The event type is not recognized.",
            103 => "An argument is illegal.",
            110 => "The function needed memory and none could be allocated.",
            111 => "Debugging has not been enabled in this VM; JVMTI cannot be used.",
            112 => "The virtual machine is not running.",
            113 => "An unexpected internal error occurred.",
            115 => "The thread making the call is not attached to the VM.",
            500 => "The object type tag is not recognized.",
            502 => "A method invocation is already in progress on this thread.",
            503 => "The index is out of range.",
            504 => "The length is invalid.",
            506 => "The string is invalid.",
            507 => "The class loader is invalid.",
            508 => "The array is invalid.",
            509 => "The transport could not be loaded.",
            510 => "The transport could not be initialized.",
            511 => "The operation is not valid on a native method.",
            512 => "The count is invalid.",
            _ => "Unknown error code.",
        }
    }

    pub fn is_error(self) -> bool {
        self.0 != 0
    }
}

impl std::fmt::Debug for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.name() {
            Some(name) => write!(f, "{name}({})", self.0),
            None => write!(f, "ErrorCode({})", self.0),
        }
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({}): {}", self.name().unwrap_or("UNKNOWN"), self.0, self.description())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_has_a_unique_name() {
        let mut names: Vec<_> = ErrorCode::ALL.iter().map(|c| c.name().unwrap()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), ErrorCode::ALL.len());
        assert_eq!(ErrorCode::ALL.len(), 59);
        assert_eq!(ErrorCode(9999).name(), None);
    }
}
