//! Raw FFI for JVMTI as of JDK 17 (interface version 17; nothing since 11 changed the table's
//! layout), plus what JVMTI 21 added for virtual threads (one capability, two events, two
//! functions, one error), written from the JVMTI specification. What a running VM offers is a
//! runtime fact: the additions are used only where `GetPotentialCapabilities` offers
//! `can_support_virtual_threads` (see `runtime.rs`).
//!
//! Names follow the specification (`jvmtiThreadInfo`, `GetFrameCount`, `JVMTI_ERROR_NONE`) so that
//! the spec can be searched for any of them. JNI's types come from `jni-sys`; only `jboolean` is
//! declared here again, as a byte (see [`jboolean`]).
//!
//! Layout facts that matter (each one is checked by the tests at the bottom):
//! * the function table has 156 slots, position N (1-based, as the spec numbers them) at offset
//!   `(N - 1) * size_of::<*const c_void>()`; positions 1, 67, 105, 113, 117 and 141 are reserved
//!   (118 and 119 are JVMTI 21's `SuspendAllVirtualThreads`/`ResumeAllVirtualThreads`);
//! * `jvmtiCapabilities` is 128 bits of C bitfields, 45 named, in spec order from the first bit;
//! * `jvmtiEventCallbacks` has one slot per event number from 50 to 88, reserved numbers included
//!   (a JDK 17 VM copies only the slots it knows: `SetEventCallbacks` takes the struct's size);
//! * `jvmtiHeapCallbacks` has 5 callbacks then 11 reserved slots.

#![allow(non_camel_case_types, non_snake_case, clippy::upper_case_acronyms)]

use std::ffi::{c_char, c_uchar, c_void};

pub use jni_sys::{
    JNIEnv, JNINativeInterface_, JavaVM, jchar, jclass, jdouble, jfieldID, jfloat, jint, jlong, jmethodID, jobject,
    jvalue,
};

/// JVMTI's `jboolean` (an `unsigned char`, 0 or 1).
///
/// `jni-sys` maps JNI's `jboolean` to Rust's `bool`, but here the VM writes booleans into memory we
/// own (out-parameters, struct fields) and passes them to our callbacks; a byte other than 0 or 1
/// in a `bool` would be undefined behaviour, so JVMTI booleans stay bytes and are read with `!= 0`.
pub type jboolean = u8;
/// A `java.lang.Thread` reference.
pub type jthread = jobject;
/// A `java.lang.ThreadGroup` reference.
pub type jthreadGroup = jobject;
/// A bytecode index within a method (`JVMTI_JLOCATION_JVMBCI` on HotSpot).
pub type jlocation = jlong;

/// Opaque target of a [`jrawMonitorID`].
#[repr(C)]
pub struct _jrawMonitorID {
    _private: [u8; 0],
}
/// A raw monitor, created by `CreateRawMonitor`.
pub type jrawMonitorID = *mut _jrawMonitorID;

/// The environment pointer: `jvmtiEnv*` in C is a pointer to a pointer to the function table.
pub type jvmtiEnv = *const JvmtiInterface;

// C enums: all have values that fit an `int` and are passed as 32-bit integers.
pub type jvmtiError = u32;
pub type jvmtiEvent = u32;
pub type jvmtiEventMode = u32;
pub type jvmtiPhase = u32;
pub type jvmtiVerboseFlag = u32;
pub type jvmtiJlocationFormat = u32;
pub type jvmtiTimerKind = u32;
pub type jvmtiHeapReferenceKind = u32;
pub type jvmtiPrimitiveType = u32;
pub type jvmtiHeapObjectFilter = u32;
pub type jvmtiHeapRootKind = u32;
pub type jvmtiObjectReferenceKind = u32;
pub type jvmtiIterationControl = u32;
pub type jvmtiParamKind = u32;
pub type jvmtiParamTypes = u32;

// ---------------------------------------------------------------------------------------------
// Versions
// ---------------------------------------------------------------------------------------------

pub const JVMTI_VERSION_INTERFACE_JNI: jint = 0x0000_0000;
pub const JVMTI_VERSION_INTERFACE_JVMTI: jint = 0x3000_0000;
pub const JVMTI_VERSION_MASK_INTERFACE_TYPE: jint = 0x7000_0000;
pub const JVMTI_VERSION_MASK_MAJOR: jint = 0x0FFF_0000;
pub const JVMTI_VERSION_MASK_MINOR: jint = 0x0000_FF00;
pub const JVMTI_VERSION_MASK_MICRO: jint = 0x0000_00FF;
pub const JVMTI_VERSION_SHIFT_MAJOR: u32 = 16;
pub const JVMTI_VERSION_SHIFT_MINOR: u32 = 8;
pub const JVMTI_VERSION_SHIFT_MICRO: u32 = 0;

/// The version number `GetEnv` takes and `GetVersionNumber` returns, built as the spec lays it out.
pub const fn jvmti_version(major: jint, minor: jint, micro: jint) -> jint {
    JVMTI_VERSION_INTERFACE_JVMTI
        | (major << JVMTI_VERSION_SHIFT_MAJOR)
        | (minor << JVMTI_VERSION_SHIFT_MINOR)
        | (micro << JVMTI_VERSION_SHIFT_MICRO)
}

pub const JVMTI_VERSION_1_0: jint = jvmti_version(1, 0, 0);
pub const JVMTI_VERSION_1_1: jint = jvmti_version(1, 1, 0);
pub const JVMTI_VERSION_1_2: jint = jvmti_version(1, 2, 0);
pub const JVMTI_VERSION_9: jint = jvmti_version(9, 0, 0);
pub const JVMTI_VERSION_11: jint = jvmti_version(11, 0, 0);
pub const JVMTI_VERSION_17: jint = jvmti_version(17, 0, 0);
/// The first version with final virtual threads (`can_support_virtual_threads` and friends).
pub const JVMTI_VERSION_21: jint = jvmti_version(21, 0, 0);

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

pub const JVMTI_ERROR_NONE: jvmtiError = 0;
pub const JVMTI_ERROR_INVALID_THREAD: jvmtiError = 10;
pub const JVMTI_ERROR_INVALID_THREAD_GROUP: jvmtiError = 11;
pub const JVMTI_ERROR_INVALID_PRIORITY: jvmtiError = 12;
pub const JVMTI_ERROR_THREAD_NOT_SUSPENDED: jvmtiError = 13;
pub const JVMTI_ERROR_THREAD_SUSPENDED: jvmtiError = 14;
pub const JVMTI_ERROR_THREAD_NOT_ALIVE: jvmtiError = 15;
pub const JVMTI_ERROR_INVALID_OBJECT: jvmtiError = 20;
pub const JVMTI_ERROR_INVALID_CLASS: jvmtiError = 21;
pub const JVMTI_ERROR_CLASS_NOT_PREPARED: jvmtiError = 22;
pub const JVMTI_ERROR_INVALID_METHODID: jvmtiError = 23;
pub const JVMTI_ERROR_INVALID_LOCATION: jvmtiError = 24;
pub const JVMTI_ERROR_INVALID_FIELDID: jvmtiError = 25;
pub const JVMTI_ERROR_INVALID_MODULE: jvmtiError = 26;
pub const JVMTI_ERROR_NO_MORE_FRAMES: jvmtiError = 31;
pub const JVMTI_ERROR_OPAQUE_FRAME: jvmtiError = 32;
pub const JVMTI_ERROR_TYPE_MISMATCH: jvmtiError = 34;
pub const JVMTI_ERROR_INVALID_SLOT: jvmtiError = 35;
pub const JVMTI_ERROR_DUPLICATE: jvmtiError = 40;
pub const JVMTI_ERROR_NOT_FOUND: jvmtiError = 41;
pub const JVMTI_ERROR_INVALID_MONITOR: jvmtiError = 50;
pub const JVMTI_ERROR_NOT_MONITOR_OWNER: jvmtiError = 51;
pub const JVMTI_ERROR_INTERRUPT: jvmtiError = 52;
pub const JVMTI_ERROR_INVALID_CLASS_FORMAT: jvmtiError = 60;
pub const JVMTI_ERROR_CIRCULAR_CLASS_DEFINITION: jvmtiError = 61;
pub const JVMTI_ERROR_FAILS_VERIFICATION: jvmtiError = 62;
pub const JVMTI_ERROR_UNSUPPORTED_REDEFINITION_METHOD_ADDED: jvmtiError = 63;
pub const JVMTI_ERROR_UNSUPPORTED_REDEFINITION_SCHEMA_CHANGED: jvmtiError = 64;
pub const JVMTI_ERROR_INVALID_TYPESTATE: jvmtiError = 65;
pub const JVMTI_ERROR_UNSUPPORTED_REDEFINITION_HIERARCHY_CHANGED: jvmtiError = 66;
pub const JVMTI_ERROR_UNSUPPORTED_REDEFINITION_METHOD_DELETED: jvmtiError = 67;
pub const JVMTI_ERROR_UNSUPPORTED_VERSION: jvmtiError = 68;
pub const JVMTI_ERROR_NAMES_DONT_MATCH: jvmtiError = 69;
/// JVMTI 21: the operation is not supported (e.g. for a virtual thread).
pub const JVMTI_ERROR_UNSUPPORTED_OPERATION: jvmtiError = 73;
pub const JVMTI_ERROR_UNSUPPORTED_REDEFINITION_CLASS_MODIFIERS_CHANGED: jvmtiError = 70;
pub const JVMTI_ERROR_UNSUPPORTED_REDEFINITION_METHOD_MODIFIERS_CHANGED: jvmtiError = 71;
pub const JVMTI_ERROR_UNSUPPORTED_REDEFINITION_CLASS_ATTRIBUTE_CHANGED: jvmtiError = 72;
pub const JVMTI_ERROR_UNMODIFIABLE_CLASS: jvmtiError = 79;
pub const JVMTI_ERROR_UNMODIFIABLE_MODULE: jvmtiError = 80;
pub const JVMTI_ERROR_NOT_AVAILABLE: jvmtiError = 98;
pub const JVMTI_ERROR_MUST_POSSESS_CAPABILITY: jvmtiError = 99;
pub const JVMTI_ERROR_NULL_POINTER: jvmtiError = 100;
pub const JVMTI_ERROR_ABSENT_INFORMATION: jvmtiError = 101;
pub const JVMTI_ERROR_INVALID_EVENT_TYPE: jvmtiError = 102;
pub const JVMTI_ERROR_ILLEGAL_ARGUMENT: jvmtiError = 103;
pub const JVMTI_ERROR_NATIVE_METHOD: jvmtiError = 104;
pub const JVMTI_ERROR_CLASS_LOADER_UNSUPPORTED: jvmtiError = 106;
pub const JVMTI_ERROR_OUT_OF_MEMORY: jvmtiError = 110;
pub const JVMTI_ERROR_ACCESS_DENIED: jvmtiError = 111;
pub const JVMTI_ERROR_WRONG_PHASE: jvmtiError = 112;
pub const JVMTI_ERROR_INTERNAL: jvmtiError = 113;
pub const JVMTI_ERROR_UNATTACHED_THREAD: jvmtiError = 115;
pub const JVMTI_ERROR_INVALID_ENVIRONMENT: jvmtiError = 116;

// ---------------------------------------------------------------------------------------------
// Events
// ---------------------------------------------------------------------------------------------

pub const JVMTI_ENABLE: jvmtiEventMode = 1;
pub const JVMTI_DISABLE: jvmtiEventMode = 0;

pub const JVMTI_EVENT_VM_INIT: jvmtiEvent = 50;
pub const JVMTI_EVENT_VM_DEATH: jvmtiEvent = 51;
pub const JVMTI_EVENT_THREAD_START: jvmtiEvent = 52;
pub const JVMTI_EVENT_THREAD_END: jvmtiEvent = 53;
pub const JVMTI_EVENT_CLASS_FILE_LOAD_HOOK: jvmtiEvent = 54;
pub const JVMTI_EVENT_CLASS_LOAD: jvmtiEvent = 55;
pub const JVMTI_EVENT_CLASS_PREPARE: jvmtiEvent = 56;
pub const JVMTI_EVENT_VM_START: jvmtiEvent = 57;
pub const JVMTI_EVENT_EXCEPTION: jvmtiEvent = 58;
pub const JVMTI_EVENT_EXCEPTION_CATCH: jvmtiEvent = 59;
pub const JVMTI_EVENT_SINGLE_STEP: jvmtiEvent = 60;
pub const JVMTI_EVENT_FRAME_POP: jvmtiEvent = 61;
pub const JVMTI_EVENT_BREAKPOINT: jvmtiEvent = 62;
pub const JVMTI_EVENT_FIELD_ACCESS: jvmtiEvent = 63;
pub const JVMTI_EVENT_FIELD_MODIFICATION: jvmtiEvent = 64;
pub const JVMTI_EVENT_METHOD_ENTRY: jvmtiEvent = 65;
pub const JVMTI_EVENT_METHOD_EXIT: jvmtiEvent = 66;
pub const JVMTI_EVENT_NATIVE_METHOD_BIND: jvmtiEvent = 67;
pub const JVMTI_EVENT_COMPILED_METHOD_LOAD: jvmtiEvent = 68;
pub const JVMTI_EVENT_COMPILED_METHOD_UNLOAD: jvmtiEvent = 69;
pub const JVMTI_EVENT_DYNAMIC_CODE_GENERATED: jvmtiEvent = 70;
pub const JVMTI_EVENT_DATA_DUMP_REQUEST: jvmtiEvent = 71;
pub const JVMTI_EVENT_MONITOR_WAIT: jvmtiEvent = 73;
pub const JVMTI_EVENT_MONITOR_WAITED: jvmtiEvent = 74;
pub const JVMTI_EVENT_MONITOR_CONTENDED_ENTER: jvmtiEvent = 75;
pub const JVMTI_EVENT_MONITOR_CONTENDED_ENTERED: jvmtiEvent = 76;
pub const JVMTI_EVENT_RESOURCE_EXHAUSTED: jvmtiEvent = 80;
pub const JVMTI_EVENT_GARBAGE_COLLECTION_START: jvmtiEvent = 81;
pub const JVMTI_EVENT_GARBAGE_COLLECTION_FINISH: jvmtiEvent = 82;
pub const JVMTI_EVENT_OBJECT_FREE: jvmtiEvent = 83;
pub const JVMTI_EVENT_VM_OBJECT_ALLOC: jvmtiEvent = 84;
pub const JVMTI_EVENT_SAMPLED_OBJECT_ALLOC: jvmtiEvent = 86;
/// JVMTI 21: a virtual thread started (posted only with `can_support_virtual_threads`).
pub const JVMTI_EVENT_VIRTUAL_THREAD_START: jvmtiEvent = 87;
/// JVMTI 21: a virtual thread ended (posted only with `can_support_virtual_threads`).
pub const JVMTI_EVENT_VIRTUAL_THREAD_END: jvmtiEvent = 88;
/// The lowest event number; `jvmtiEventCallbacks` slot `n - JVMTI_MIN_EVENT_TYPE_VAL` is event `n`.
pub const JVMTI_MIN_EVENT_TYPE_VAL: jvmtiEvent = 50;
/// The highest event number in JVMTI 17.
pub const JVMTI_MAX_EVENT_TYPE_VAL: jvmtiEvent = 88;

// ---------------------------------------------------------------------------------------------
// Thread states (GetThreadState) and thread priorities
// ---------------------------------------------------------------------------------------------

pub const JVMTI_THREAD_STATE_ALIVE: jint = 0x0001;
pub const JVMTI_THREAD_STATE_TERMINATED: jint = 0x0002;
pub const JVMTI_THREAD_STATE_RUNNABLE: jint = 0x0004;
pub const JVMTI_THREAD_STATE_WAITING_INDEFINITELY: jint = 0x0010;
pub const JVMTI_THREAD_STATE_WAITING_WITH_TIMEOUT: jint = 0x0020;
pub const JVMTI_THREAD_STATE_SLEEPING: jint = 0x0040;
pub const JVMTI_THREAD_STATE_WAITING: jint = 0x0080;
pub const JVMTI_THREAD_STATE_IN_OBJECT_WAIT: jint = 0x0100;
pub const JVMTI_THREAD_STATE_PARKED: jint = 0x0200;
pub const JVMTI_THREAD_STATE_BLOCKED_ON_MONITOR_ENTER: jint = 0x0400;
pub const JVMTI_THREAD_STATE_SUSPENDED: jint = 0x10_0000;
pub const JVMTI_THREAD_STATE_INTERRUPTED: jint = 0x20_0000;
pub const JVMTI_THREAD_STATE_IN_NATIVE: jint = 0x40_0000;
pub const JVMTI_THREAD_STATE_VENDOR_1: jint = 0x1000_0000;
pub const JVMTI_THREAD_STATE_VENDOR_2: jint = 0x2000_0000;
pub const JVMTI_THREAD_STATE_VENDOR_3: jint = 0x4000_0000;

/// Mask a thread state with this before comparing it with a `JVMTI_JAVA_LANG_THREAD_STATE_*`.
pub const JVMTI_JAVA_LANG_THREAD_STATE_MASK: jint = JVMTI_THREAD_STATE_TERMINATED
    | JVMTI_THREAD_STATE_ALIVE
    | JVMTI_THREAD_STATE_RUNNABLE
    | JVMTI_THREAD_STATE_BLOCKED_ON_MONITOR_ENTER
    | JVMTI_THREAD_STATE_WAITING
    | JVMTI_THREAD_STATE_WAITING_INDEFINITELY
    | JVMTI_THREAD_STATE_WAITING_WITH_TIMEOUT;
pub const JVMTI_JAVA_LANG_THREAD_STATE_NEW: jint = 0;
pub const JVMTI_JAVA_LANG_THREAD_STATE_TERMINATED: jint = JVMTI_THREAD_STATE_TERMINATED;
pub const JVMTI_JAVA_LANG_THREAD_STATE_RUNNABLE: jint = JVMTI_THREAD_STATE_ALIVE | JVMTI_THREAD_STATE_RUNNABLE;
pub const JVMTI_JAVA_LANG_THREAD_STATE_BLOCKED: jint =
    JVMTI_THREAD_STATE_ALIVE | JVMTI_THREAD_STATE_BLOCKED_ON_MONITOR_ENTER;
pub const JVMTI_JAVA_LANG_THREAD_STATE_WAITING: jint =
    JVMTI_THREAD_STATE_ALIVE | JVMTI_THREAD_STATE_WAITING | JVMTI_THREAD_STATE_WAITING_INDEFINITELY;
pub const JVMTI_JAVA_LANG_THREAD_STATE_TIMED_WAITING: jint =
    JVMTI_THREAD_STATE_ALIVE | JVMTI_THREAD_STATE_WAITING | JVMTI_THREAD_STATE_WAITING_WITH_TIMEOUT;

pub const JVMTI_THREAD_MIN_PRIORITY: jint = 1;
pub const JVMTI_THREAD_NORM_PRIORITY: jint = 5;
pub const JVMTI_THREAD_MAX_PRIORITY: jint = 10;

// ---------------------------------------------------------------------------------------------
// Class status (GetClassStatus)
// ---------------------------------------------------------------------------------------------

pub const JVMTI_CLASS_STATUS_VERIFIED: jint = 1;
pub const JVMTI_CLASS_STATUS_PREPARED: jint = 2;
pub const JVMTI_CLASS_STATUS_INITIALIZED: jint = 4;
pub const JVMTI_CLASS_STATUS_ERROR: jint = 8;
pub const JVMTI_CLASS_STATUS_ARRAY: jint = 16;
pub const JVMTI_CLASS_STATUS_PRIMITIVE: jint = 32;

// ---------------------------------------------------------------------------------------------
// Heap
// ---------------------------------------------------------------------------------------------

pub const JVMTI_HEAP_FILTER_TAGGED: jint = 0x4;
pub const JVMTI_HEAP_FILTER_UNTAGGED: jint = 0x8;
pub const JVMTI_HEAP_FILTER_CLASS_TAGGED: jint = 0x10;
pub const JVMTI_HEAP_FILTER_CLASS_UNTAGGED: jint = 0x20;

pub const JVMTI_VISIT_OBJECTS: jint = 0x100;
pub const JVMTI_VISIT_ABORT: jint = 0x8000;

pub const JVMTI_HEAP_REFERENCE_CLASS: jvmtiHeapReferenceKind = 1;
pub const JVMTI_HEAP_REFERENCE_FIELD: jvmtiHeapReferenceKind = 2;
pub const JVMTI_HEAP_REFERENCE_ARRAY_ELEMENT: jvmtiHeapReferenceKind = 3;
pub const JVMTI_HEAP_REFERENCE_CLASS_LOADER: jvmtiHeapReferenceKind = 4;
pub const JVMTI_HEAP_REFERENCE_SIGNERS: jvmtiHeapReferenceKind = 5;
pub const JVMTI_HEAP_REFERENCE_PROTECTION_DOMAIN: jvmtiHeapReferenceKind = 6;
pub const JVMTI_HEAP_REFERENCE_INTERFACE: jvmtiHeapReferenceKind = 7;
pub const JVMTI_HEAP_REFERENCE_STATIC_FIELD: jvmtiHeapReferenceKind = 8;
pub const JVMTI_HEAP_REFERENCE_CONSTANT_POOL: jvmtiHeapReferenceKind = 9;
pub const JVMTI_HEAP_REFERENCE_SUPERCLASS: jvmtiHeapReferenceKind = 10;
pub const JVMTI_HEAP_REFERENCE_JNI_GLOBAL: jvmtiHeapReferenceKind = 21;
pub const JVMTI_HEAP_REFERENCE_SYSTEM_CLASS: jvmtiHeapReferenceKind = 22;
pub const JVMTI_HEAP_REFERENCE_MONITOR: jvmtiHeapReferenceKind = 23;
pub const JVMTI_HEAP_REFERENCE_STACK_LOCAL: jvmtiHeapReferenceKind = 24;
pub const JVMTI_HEAP_REFERENCE_JNI_LOCAL: jvmtiHeapReferenceKind = 25;
pub const JVMTI_HEAP_REFERENCE_THREAD: jvmtiHeapReferenceKind = 26;
pub const JVMTI_HEAP_REFERENCE_OTHER: jvmtiHeapReferenceKind = 27;

pub const JVMTI_PRIMITIVE_TYPE_BOOLEAN: jvmtiPrimitiveType = 90;
pub const JVMTI_PRIMITIVE_TYPE_BYTE: jvmtiPrimitiveType = 66;
pub const JVMTI_PRIMITIVE_TYPE_CHAR: jvmtiPrimitiveType = 67;
pub const JVMTI_PRIMITIVE_TYPE_SHORT: jvmtiPrimitiveType = 83;
pub const JVMTI_PRIMITIVE_TYPE_INT: jvmtiPrimitiveType = 73;
pub const JVMTI_PRIMITIVE_TYPE_LONG: jvmtiPrimitiveType = 74;
pub const JVMTI_PRIMITIVE_TYPE_FLOAT: jvmtiPrimitiveType = 70;
pub const JVMTI_PRIMITIVE_TYPE_DOUBLE: jvmtiPrimitiveType = 68;

// The JVMTI 1.0 heap functions (IterateOverHeap and friends).
pub const JVMTI_HEAP_OBJECT_TAGGED: jvmtiHeapObjectFilter = 1;
pub const JVMTI_HEAP_OBJECT_UNTAGGED: jvmtiHeapObjectFilter = 2;
pub const JVMTI_HEAP_OBJECT_EITHER: jvmtiHeapObjectFilter = 3;
pub const JVMTI_HEAP_ROOT_JNI_GLOBAL: jvmtiHeapRootKind = 1;
pub const JVMTI_HEAP_ROOT_SYSTEM_CLASS: jvmtiHeapRootKind = 2;
pub const JVMTI_HEAP_ROOT_MONITOR: jvmtiHeapRootKind = 3;
pub const JVMTI_HEAP_ROOT_STACK_LOCAL: jvmtiHeapRootKind = 4;
pub const JVMTI_HEAP_ROOT_JNI_LOCAL: jvmtiHeapRootKind = 5;
pub const JVMTI_HEAP_ROOT_THREAD: jvmtiHeapRootKind = 6;
pub const JVMTI_HEAP_ROOT_OTHER: jvmtiHeapRootKind = 7;
pub const JVMTI_REFERENCE_CLASS: jvmtiObjectReferenceKind = 1;
pub const JVMTI_REFERENCE_FIELD: jvmtiObjectReferenceKind = 2;
pub const JVMTI_REFERENCE_ARRAY_ELEMENT: jvmtiObjectReferenceKind = 3;
pub const JVMTI_REFERENCE_CLASS_LOADER: jvmtiObjectReferenceKind = 4;
pub const JVMTI_REFERENCE_SIGNERS: jvmtiObjectReferenceKind = 5;
pub const JVMTI_REFERENCE_PROTECTION_DOMAIN: jvmtiObjectReferenceKind = 6;
pub const JVMTI_REFERENCE_INTERFACE: jvmtiObjectReferenceKind = 7;
pub const JVMTI_REFERENCE_STATIC_FIELD: jvmtiObjectReferenceKind = 8;
pub const JVMTI_REFERENCE_CONSTANT_POOL: jvmtiObjectReferenceKind = 9;
pub const JVMTI_ITERATION_CONTINUE: jvmtiIterationControl = 1;
pub const JVMTI_ITERATION_IGNORE: jvmtiIterationControl = 2;
pub const JVMTI_ITERATION_ABORT: jvmtiIterationControl = 0;

// ---------------------------------------------------------------------------------------------
// Miscellaneous enumerations
// ---------------------------------------------------------------------------------------------

pub const JVMTI_PHASE_ONLOAD: jvmtiPhase = 1;
pub const JVMTI_PHASE_PRIMORDIAL: jvmtiPhase = 2;
pub const JVMTI_PHASE_START: jvmtiPhase = 6;
pub const JVMTI_PHASE_LIVE: jvmtiPhase = 4;
pub const JVMTI_PHASE_DEAD: jvmtiPhase = 8;

pub const JVMTI_JLOCATION_JVMBCI: jvmtiJlocationFormat = 1;
pub const JVMTI_JLOCATION_MACHINEPC: jvmtiJlocationFormat = 2;
pub const JVMTI_JLOCATION_OTHER: jvmtiJlocationFormat = 0;

pub const JVMTI_VERBOSE_OTHER: jvmtiVerboseFlag = 0;
pub const JVMTI_VERBOSE_GC: jvmtiVerboseFlag = 1;
pub const JVMTI_VERBOSE_CLASS: jvmtiVerboseFlag = 2;
pub const JVMTI_VERBOSE_JNI: jvmtiVerboseFlag = 4;

pub const JVMTI_TIMER_USER_CPU: jvmtiTimerKind = 30;
pub const JVMTI_TIMER_TOTAL_CPU: jvmtiTimerKind = 31;
pub const JVMTI_TIMER_ELAPSED: jvmtiTimerKind = 32;

pub const JVMTI_RESOURCE_EXHAUSTED_OOM_ERROR: jint = 0x0001;
pub const JVMTI_RESOURCE_EXHAUSTED_JAVA_HEAP: jint = 0x0002;
pub const JVMTI_RESOURCE_EXHAUSTED_THREADS: jint = 0x0004;

pub const JVMTI_KIND_IN: jvmtiParamKind = 91;
pub const JVMTI_KIND_IN_PTR: jvmtiParamKind = 92;
pub const JVMTI_KIND_IN_BUF: jvmtiParamKind = 93;
pub const JVMTI_KIND_ALLOC_BUF: jvmtiParamKind = 94;
pub const JVMTI_KIND_ALLOC_ALLOC_BUF: jvmtiParamKind = 95;
pub const JVMTI_KIND_OUT: jvmtiParamKind = 96;
pub const JVMTI_KIND_OUT_BUF: jvmtiParamKind = 97;

pub const JVMTI_TYPE_JBYTE: jvmtiParamTypes = 101;
pub const JVMTI_TYPE_JCHAR: jvmtiParamTypes = 102;
pub const JVMTI_TYPE_JSHORT: jvmtiParamTypes = 103;
pub const JVMTI_TYPE_JINT: jvmtiParamTypes = 104;
pub const JVMTI_TYPE_JLONG: jvmtiParamTypes = 105;
pub const JVMTI_TYPE_JFLOAT: jvmtiParamTypes = 106;
pub const JVMTI_TYPE_JDOUBLE: jvmtiParamTypes = 107;
pub const JVMTI_TYPE_JBOOLEAN: jvmtiParamTypes = 108;
pub const JVMTI_TYPE_JOBJECT: jvmtiParamTypes = 109;
pub const JVMTI_TYPE_JTHREAD: jvmtiParamTypes = 110;
pub const JVMTI_TYPE_JCLASS: jvmtiParamTypes = 111;
pub const JVMTI_TYPE_JVALUE: jvmtiParamTypes = 112;
pub const JVMTI_TYPE_JFIELDID: jvmtiParamTypes = 113;
pub const JVMTI_TYPE_JMETHODID: jvmtiParamTypes = 114;
pub const JVMTI_TYPE_CCHAR: jvmtiParamTypes = 115;
pub const JVMTI_TYPE_CVOID: jvmtiParamTypes = 116;
pub const JVMTI_TYPE_JNIENV: jvmtiParamTypes = 117;

// ---------------------------------------------------------------------------------------------
// Structures
// ---------------------------------------------------------------------------------------------

/// `GetThreadInfo`. `name` is to be deallocated; the references are JNI local references.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct jvmtiThreadInfo {
    pub name: *mut c_char,
    pub priority: jint,
    pub is_daemon: jboolean,
    pub thread_group: jthreadGroup,
    pub context_class_loader: jobject,
}

/// `GetOwnedMonitorStackDepthInfo`; `stack_depth` is -1 when unknown (JNI `MonitorEnter`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct jvmtiMonitorStackDepthInfo {
    pub monitor: jobject,
    pub stack_depth: jint,
}

/// `GetThreadGroupInfo`. `name` is to be deallocated.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct jvmtiThreadGroupInfo {
    pub parent: jthreadGroup,
    pub name: *mut c_char,
    pub max_priority: jint,
    pub is_daemon: jboolean,
}

/// One frame of `GetStackTrace` and friends.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct jvmtiFrameInfo {
    pub method: jmethodID,
    pub location: jlocation,
}

/// One thread of `GetAllStackTraces`/`GetThreadListStackTraces` (all in one allocation).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct jvmtiStackInfo {
    pub thread: jthread,
    pub state: jint,
    pub frame_buffer: *mut jvmtiFrameInfo,
    pub frame_count: jint,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct jvmtiHeapReferenceInfoField {
    pub index: jint,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct jvmtiHeapReferenceInfoArray {
    pub index: jint,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct jvmtiHeapReferenceInfoConstantPool {
    pub index: jint,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct jvmtiHeapReferenceInfoStackLocal {
    pub thread_tag: jlong,
    pub thread_id: jlong,
    pub depth: jint,
    pub method: jmethodID,
    pub location: jlocation,
    pub slot: jint,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct jvmtiHeapReferenceInfoJniLocal {
    pub thread_tag: jlong,
    pub thread_id: jlong,
    pub depth: jint,
    pub method: jmethodID,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct jvmtiHeapReferenceInfoReserved {
    pub reserved1: jlong,
    pub reserved2: jlong,
    pub reserved3: jlong,
    pub reserved4: jlong,
    pub reserved5: jlong,
    pub reserved6: jlong,
    pub reserved7: jlong,
    pub reserved8: jlong,
}

/// What a heap reference callback is told about the referrer; which member is meaningful depends
/// on the reference kind.
#[repr(C)]
#[derive(Clone, Copy)]
pub union jvmtiHeapReferenceInfo {
    pub field: jvmtiHeapReferenceInfoField,
    pub array: jvmtiHeapReferenceInfoArray,
    pub constant_pool: jvmtiHeapReferenceInfoConstantPool,
    pub stack_local: jvmtiHeapReferenceInfoStackLocal,
    pub jni_local: jvmtiHeapReferenceInfoJniLocal,
    pub other: jvmtiHeapReferenceInfoReserved,
}

pub type jvmtiHeapIterationCallback = Option<
    unsafe extern "system" fn(
        class_tag: jlong,
        size: jlong,
        tag_ptr: *mut jlong,
        length: jint,
        user_data: *mut c_void,
    ) -> jint,
>;
pub type jvmtiHeapReferenceCallback = Option<
    unsafe extern "system" fn(
        reference_kind: jvmtiHeapReferenceKind,
        reference_info: *const jvmtiHeapReferenceInfo,
        class_tag: jlong,
        referrer_class_tag: jlong,
        size: jlong,
        tag_ptr: *mut jlong,
        referrer_tag_ptr: *mut jlong,
        length: jint,
        user_data: *mut c_void,
    ) -> jint,
>;
pub type jvmtiPrimitiveFieldCallback = Option<
    unsafe extern "system" fn(
        kind: jvmtiHeapReferenceKind,
        info: *const jvmtiHeapReferenceInfo,
        object_class_tag: jlong,
        object_tag_ptr: *mut jlong,
        value: jvalue,
        value_type: jvmtiPrimitiveType,
        user_data: *mut c_void,
    ) -> jint,
>;
pub type jvmtiArrayPrimitiveValueCallback = Option<
    unsafe extern "system" fn(
        class_tag: jlong,
        size: jlong,
        tag_ptr: *mut jlong,
        element_count: jint,
        element_type: jvmtiPrimitiveType,
        elements: *const c_void,
        user_data: *mut c_void,
    ) -> jint,
>;
pub type jvmtiStringPrimitiveValueCallback = Option<
    unsafe extern "system" fn(
        class_tag: jlong,
        size: jlong,
        tag_ptr: *mut jlong,
        value: *const jchar,
        value_length: jint,
        user_data: *mut c_void,
    ) -> jint,
>;
pub type jvmtiReservedCallback = Option<unsafe extern "system" fn() -> jint>;

/// The callbacks of `FollowReferences` and `IterateThroughHeap`; unused slots stay `None`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct jvmtiHeapCallbacks {
    pub heap_iteration_callback: jvmtiHeapIterationCallback,
    pub heap_reference_callback: jvmtiHeapReferenceCallback,
    pub primitive_field_callback: jvmtiPrimitiveFieldCallback,
    pub array_primitive_value_callback: jvmtiArrayPrimitiveValueCallback,
    pub string_primitive_value_callback: jvmtiStringPrimitiveValueCallback,
    pub reserved5: jvmtiReservedCallback,
    pub reserved6: jvmtiReservedCallback,
    pub reserved7: jvmtiReservedCallback,
    pub reserved8: jvmtiReservedCallback,
    pub reserved9: jvmtiReservedCallback,
    pub reserved10: jvmtiReservedCallback,
    pub reserved11: jvmtiReservedCallback,
    pub reserved12: jvmtiReservedCallback,
    pub reserved13: jvmtiReservedCallback,
    pub reserved14: jvmtiReservedCallback,
    pub reserved15: jvmtiReservedCallback,
}

// The JVMTI 1.0 heap callbacks.
pub type jvmtiHeapObjectCallback = Option<
    unsafe extern "system" fn(
        class_tag: jlong,
        size: jlong,
        tag_ptr: *mut jlong,
        user_data: *mut c_void,
    ) -> jvmtiIterationControl,
>;
pub type jvmtiHeapRootCallback = Option<
    unsafe extern "system" fn(
        root_kind: jvmtiHeapRootKind,
        class_tag: jlong,
        size: jlong,
        tag_ptr: *mut jlong,
        user_data: *mut c_void,
    ) -> jvmtiIterationControl,
>;
pub type jvmtiStackReferenceCallback = Option<
    unsafe extern "system" fn(
        root_kind: jvmtiHeapRootKind,
        class_tag: jlong,
        size: jlong,
        tag_ptr: *mut jlong,
        thread_tag: jlong,
        depth: jint,
        method: jmethodID,
        slot: jint,
        user_data: *mut c_void,
    ) -> jvmtiIterationControl,
>;
pub type jvmtiObjectReferenceCallback = Option<
    unsafe extern "system" fn(
        reference_kind: jvmtiObjectReferenceKind,
        class_tag: jlong,
        size: jlong,
        tag_ptr: *mut jlong,
        referrer_tag: jlong,
        referrer_index: jint,
        user_data: *mut c_void,
    ) -> jvmtiIterationControl,
>;

/// One class for `RedefineClasses`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct jvmtiClassDefinition {
    pub klass: jclass,
    pub class_byte_count: jint,
    pub class_bytes: *const c_uchar,
}

/// `GetObjectMonitorUsage`. Both arrays are to be deallocated; the threads are local references.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct jvmtiMonitorUsage {
    pub owner: jthread,
    pub entry_count: jint,
    pub waiter_count: jint,
    pub waiters: *mut jthread,
    pub notify_waiter_count: jint,
    pub notify_waiters: *mut jthread,
}

/// One entry of `GetLineNumberTable`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct jvmtiLineNumberEntry {
    pub start_location: jlocation,
    pub line_number: jint,
}

/// One entry of `GetLocalVariableTable`; each string is to be deallocated.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct jvmtiLocalVariableEntry {
    pub start_location: jlocation,
    pub length: jint,
    pub name: *mut c_char,
    pub signature: *mut c_char,
    pub generic_signature: *mut c_char,
    pub slot: jint,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct jvmtiParamInfo {
    pub name: *mut c_char,
    pub kind: jvmtiParamKind,
    pub base_type: jvmtiParamTypes,
    pub null_ok: jboolean,
}

/// An extension function. Variadic in C, so it can be called but not defined in stable Rust.
pub type jvmtiExtensionFunction = Option<unsafe extern "C" fn(jvmti_env: *mut jvmtiEnv, ...) -> jvmtiError>;
/// An extension event handler. Variadic in C; stable Rust cannot define one.
pub type jvmtiExtensionEvent = Option<unsafe extern "C" fn(jvmti_env: *mut jvmtiEnv, ...)>;

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct jvmtiExtensionFunctionInfo {
    pub func: jvmtiExtensionFunction,
    pub id: *mut c_char,
    pub short_description: *mut c_char,
    pub param_count: jint,
    pub params: *mut jvmtiParamInfo,
    pub error_count: jint,
    pub errors: *mut jvmtiError,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct jvmtiExtensionEventInfo {
    pub extension_event_index: jint,
    pub id: *mut c_char,
    pub short_description: *mut c_char,
    pub param_count: jint,
    pub params: *mut jvmtiParamInfo,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct jvmtiTimerInfo {
    pub max_value: jlong,
    pub may_skip_forward: jboolean,
    pub may_skip_backward: jboolean,
    pub kind: jvmtiTimerKind,
    pub reserved1: jlong,
    pub reserved2: jlong,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct jvmtiAddrLocationMap {
    pub start_address: *const c_void,
    pub location: jlocation,
}

/// The entry point of an agent thread started with `RunAgentThread`.
pub type jvmtiStartFunction =
    Option<unsafe extern "system" fn(jvmti_env: *mut jvmtiEnv, jni_env: *mut JNIEnv, arg: *mut c_void)>;

// ---------------------------------------------------------------------------------------------
// Capabilities
// ---------------------------------------------------------------------------------------------

/// The capability set: 128 bits of C bitfields (`unsigned int name : 1`), of which the first 44
/// are named, in the order the spec lists them; the rest are padding for future capabilities.
///
/// C compilers allocate bitfields within each 32-bit unit from the least significant bit on
/// little-endian targets and from the most significant bit on big-endian ones; `bit`
/// follows that, so the layout matches the VM's on either.
#[repr(C)]
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct jvmtiCapabilities {
    words: [u32; 4],
}

macro_rules! capabilities {
    ($($index:literal $name:ident $setter:ident;)*) => {
        impl jvmtiCapabilities {
            /// The named capabilities, in bit order.
            pub const NAMES: &'static [&'static str] = &[$(stringify!($name)),*];

            $(
                #[inline]
                pub const fn $name(&self) -> bool {
                    self.get($index)
                }

                #[inline]
                pub fn $setter(&mut self, on: bool) -> &mut Self {
                    self.set($index, on);
                    self
                }
            )*
        }
    };
}

capabilities! {
    0 can_tag_objects set_can_tag_objects;
    1 can_generate_field_modification_events set_can_generate_field_modification_events;
    2 can_generate_field_access_events set_can_generate_field_access_events;
    3 can_get_bytecodes set_can_get_bytecodes;
    4 can_get_synthetic_attribute set_can_get_synthetic_attribute;
    5 can_get_owned_monitor_info set_can_get_owned_monitor_info;
    6 can_get_current_contended_monitor set_can_get_current_contended_monitor;
    7 can_get_monitor_info set_can_get_monitor_info;
    8 can_pop_frame set_can_pop_frame;
    9 can_redefine_classes set_can_redefine_classes;
    10 can_signal_thread set_can_signal_thread;
    11 can_get_source_file_name set_can_get_source_file_name;
    12 can_get_line_numbers set_can_get_line_numbers;
    13 can_get_source_debug_extension set_can_get_source_debug_extension;
    14 can_access_local_variables set_can_access_local_variables;
    15 can_maintain_original_method_order set_can_maintain_original_method_order;
    16 can_generate_single_step_events set_can_generate_single_step_events;
    17 can_generate_exception_events set_can_generate_exception_events;
    18 can_generate_frame_pop_events set_can_generate_frame_pop_events;
    19 can_generate_breakpoint_events set_can_generate_breakpoint_events;
    20 can_suspend set_can_suspend;
    21 can_redefine_any_class set_can_redefine_any_class;
    22 can_get_current_thread_cpu_time set_can_get_current_thread_cpu_time;
    23 can_get_thread_cpu_time set_can_get_thread_cpu_time;
    24 can_generate_method_entry_events set_can_generate_method_entry_events;
    25 can_generate_method_exit_events set_can_generate_method_exit_events;
    26 can_generate_all_class_hook_events set_can_generate_all_class_hook_events;
    27 can_generate_compiled_method_load_events set_can_generate_compiled_method_load_events;
    28 can_generate_monitor_events set_can_generate_monitor_events;
    29 can_generate_vm_object_alloc_events set_can_generate_vm_object_alloc_events;
    30 can_generate_native_method_bind_events set_can_generate_native_method_bind_events;
    31 can_generate_garbage_collection_events set_can_generate_garbage_collection_events;
    32 can_generate_object_free_events set_can_generate_object_free_events;
    33 can_force_early_return set_can_force_early_return;
    34 can_get_owned_monitor_stack_depth_info set_can_get_owned_monitor_stack_depth_info;
    35 can_get_constant_pool set_can_get_constant_pool;
    36 can_set_native_method_prefix set_can_set_native_method_prefix;
    37 can_retransform_classes set_can_retransform_classes;
    38 can_retransform_any_class set_can_retransform_any_class;
    39 can_generate_resource_exhaustion_heap_events set_can_generate_resource_exhaustion_heap_events;
    40 can_generate_resource_exhaustion_threads_events set_can_generate_resource_exhaustion_threads_events;
    41 can_generate_early_vmstart set_can_generate_early_vmstart;
    42 can_generate_early_class_hook_events set_can_generate_early_class_hook_events;
    43 can_generate_sampled_object_alloc_events set_can_generate_sampled_object_alloc_events;
    44 can_support_virtual_threads set_can_support_virtual_threads;
}

impl jvmtiCapabilities {
    /// How many capabilities JVMTI 21 names (JVMTI 17 names the first 44; the 45th is
    /// `can_support_virtual_threads`, which an older VM never offers).
    pub const COUNT: usize = 45;

    /// The 32-bit unit and mask of capability `index` (its position in the spec's list).
    const fn bit(index: usize) -> (usize, u32) {
        let within = (index % 32) as u32;
        let shift = if cfg!(target_endian = "little") { within } else { 31 - within };
        (index / 32, 1 << shift)
    }

    /// Whether capability `index` is set. Indices past [`Self::COUNT`] read the padding bits.
    pub const fn get(&self, index: usize) -> bool {
        let (word, mask) = Self::bit(index);
        word < 4 && self.words[word] & mask != 0
    }

    /// Sets or clears capability `index`; an index past the 128 bits is ignored.
    pub fn set(&mut self, index: usize, on: bool) {
        let (word, mask) = Self::bit(index);
        if let Some(w) = self.words.get_mut(word) {
            if on { *w |= mask } else { *w &= !mask }
        }
    }

    /// The capabilities set in both.
    pub fn intersection(&self, other: &Self) -> Self {
        let mut out = *self;
        for (a, b) in out.words.iter_mut().zip(other.words) {
            *a &= b;
        }
        out
    }

    /// The capabilities set in either.
    pub fn union(&self, other: &Self) -> Self {
        let mut out = *self;
        for (a, b) in out.words.iter_mut().zip(other.words) {
            *a |= b;
        }
        out
    }

    /// The capabilities set in `self` but not in `other`.
    pub fn difference(&self, other: &Self) -> Self {
        let mut out = *self;
        for (a, b) in out.words.iter_mut().zip(other.words) {
            *a &= !b;
        }
        out
    }

    pub fn is_empty(&self) -> bool {
        self.words == [0; 4]
    }

    /// The names of the set capabilities, in bit order.
    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        Self::NAMES.iter().enumerate().filter(|(i, _)| self.get(*i)).map(|(_, name)| *name)
    }
}

impl std::fmt::Debug for jvmtiCapabilities {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.names()).finish()
    }
}

// ---------------------------------------------------------------------------------------------
// Event callbacks
// ---------------------------------------------------------------------------------------------

/// A reserved callback slot; always `None`.
pub type jvmtiEventReserved = Option<unsafe extern "system" fn()>;

pub type jvmtiEventVMInit =
    Option<unsafe extern "system" fn(jvmti_env: *mut jvmtiEnv, jni_env: *mut JNIEnv, thread: jthread)>;
pub type jvmtiEventVMDeath = Option<unsafe extern "system" fn(jvmti_env: *mut jvmtiEnv, jni_env: *mut JNIEnv)>;
pub type jvmtiEventThreadStart =
    Option<unsafe extern "system" fn(jvmti_env: *mut jvmtiEnv, jni_env: *mut JNIEnv, thread: jthread)>;
pub type jvmtiEventThreadEnd =
    Option<unsafe extern "system" fn(jvmti_env: *mut jvmtiEnv, jni_env: *mut JNIEnv, thread: jthread)>;
/// JVMTI 21.
pub type jvmtiEventVirtualThreadStart =
    Option<unsafe extern "system" fn(jvmti_env: *mut jvmtiEnv, jni_env: *mut JNIEnv, virtual_thread: jthread)>;
/// JVMTI 21.
pub type jvmtiEventVirtualThreadEnd =
    Option<unsafe extern "system" fn(jvmti_env: *mut jvmtiEnv, jni_env: *mut JNIEnv, virtual_thread: jthread)>;
pub type jvmtiEventClassFileLoadHook = Option<
    unsafe extern "system" fn(
        jvmti_env: *mut jvmtiEnv,
        jni_env: *mut JNIEnv,
        class_being_redefined: jclass,
        loader: jobject,
        name: *const c_char,
        protection_domain: jobject,
        class_data_len: jint,
        class_data: *const c_uchar,
        new_class_data_len: *mut jint,
        new_class_data: *mut *mut c_uchar,
    ),
>;
pub type jvmtiEventClassLoad =
    Option<unsafe extern "system" fn(jvmti_env: *mut jvmtiEnv, jni_env: *mut JNIEnv, thread: jthread, klass: jclass)>;
pub type jvmtiEventClassPrepare =
    Option<unsafe extern "system" fn(jvmti_env: *mut jvmtiEnv, jni_env: *mut JNIEnv, thread: jthread, klass: jclass)>;
pub type jvmtiEventVMStart = Option<unsafe extern "system" fn(jvmti_env: *mut jvmtiEnv, jni_env: *mut JNIEnv)>;
pub type jvmtiEventException = Option<
    unsafe extern "system" fn(
        jvmti_env: *mut jvmtiEnv,
        jni_env: *mut JNIEnv,
        thread: jthread,
        method: jmethodID,
        location: jlocation,
        exception: jobject,
        catch_method: jmethodID,
        catch_location: jlocation,
    ),
>;
pub type jvmtiEventExceptionCatch = Option<
    unsafe extern "system" fn(
        jvmti_env: *mut jvmtiEnv,
        jni_env: *mut JNIEnv,
        thread: jthread,
        method: jmethodID,
        location: jlocation,
        exception: jobject,
    ),
>;
pub type jvmtiEventSingleStep = Option<
    unsafe extern "system" fn(
        jvmti_env: *mut jvmtiEnv,
        jni_env: *mut JNIEnv,
        thread: jthread,
        method: jmethodID,
        location: jlocation,
    ),
>;
pub type jvmtiEventFramePop = Option<
    unsafe extern "system" fn(
        jvmti_env: *mut jvmtiEnv,
        jni_env: *mut JNIEnv,
        thread: jthread,
        method: jmethodID,
        was_popped_by_exception: jboolean,
    ),
>;
pub type jvmtiEventBreakpoint = Option<
    unsafe extern "system" fn(
        jvmti_env: *mut jvmtiEnv,
        jni_env: *mut JNIEnv,
        thread: jthread,
        method: jmethodID,
        location: jlocation,
    ),
>;
pub type jvmtiEventFieldAccess = Option<
    unsafe extern "system" fn(
        jvmti_env: *mut jvmtiEnv,
        jni_env: *mut JNIEnv,
        thread: jthread,
        method: jmethodID,
        location: jlocation,
        field_klass: jclass,
        object: jobject,
        field: jfieldID,
    ),
>;
pub type jvmtiEventFieldModification = Option<
    unsafe extern "system" fn(
        jvmti_env: *mut jvmtiEnv,
        jni_env: *mut JNIEnv,
        thread: jthread,
        method: jmethodID,
        location: jlocation,
        field_klass: jclass,
        object: jobject,
        field: jfieldID,
        signature_type: c_char,
        new_value: jvalue,
    ),
>;
pub type jvmtiEventMethodEntry = Option<
    unsafe extern "system" fn(jvmti_env: *mut jvmtiEnv, jni_env: *mut JNIEnv, thread: jthread, method: jmethodID),
>;
pub type jvmtiEventMethodExit = Option<
    unsafe extern "system" fn(
        jvmti_env: *mut jvmtiEnv,
        jni_env: *mut JNIEnv,
        thread: jthread,
        method: jmethodID,
        was_popped_by_exception: jboolean,
        return_value: jvalue,
    ),
>;
pub type jvmtiEventNativeMethodBind = Option<
    unsafe extern "system" fn(
        jvmti_env: *mut jvmtiEnv,
        jni_env: *mut JNIEnv,
        thread: jthread,
        method: jmethodID,
        address: *mut c_void,
        new_address_ptr: *mut *mut c_void,
    ),
>;
pub type jvmtiEventCompiledMethodLoad = Option<
    unsafe extern "system" fn(
        jvmti_env: *mut jvmtiEnv,
        method: jmethodID,
        code_size: jint,
        code_addr: *const c_void,
        map_length: jint,
        map: *const jvmtiAddrLocationMap,
        compile_info: *const c_void,
    ),
>;
pub type jvmtiEventCompiledMethodUnload =
    Option<unsafe extern "system" fn(jvmti_env: *mut jvmtiEnv, method: jmethodID, code_addr: *const c_void)>;
pub type jvmtiEventDynamicCodeGenerated = Option<
    unsafe extern "system" fn(jvmti_env: *mut jvmtiEnv, name: *const c_char, address: *const c_void, length: jint),
>;
pub type jvmtiEventDataDumpRequest = Option<unsafe extern "system" fn(jvmti_env: *mut jvmtiEnv)>;
pub type jvmtiEventMonitorWait = Option<
    unsafe extern "system" fn(
        jvmti_env: *mut jvmtiEnv,
        jni_env: *mut JNIEnv,
        thread: jthread,
        object: jobject,
        timeout: jlong,
    ),
>;
pub type jvmtiEventMonitorWaited = Option<
    unsafe extern "system" fn(
        jvmti_env: *mut jvmtiEnv,
        jni_env: *mut JNIEnv,
        thread: jthread,
        object: jobject,
        timed_out: jboolean,
    ),
>;
pub type jvmtiEventMonitorContendedEnter =
    Option<unsafe extern "system" fn(jvmti_env: *mut jvmtiEnv, jni_env: *mut JNIEnv, thread: jthread, object: jobject)>;
pub type jvmtiEventMonitorContendedEntered =
    Option<unsafe extern "system" fn(jvmti_env: *mut jvmtiEnv, jni_env: *mut JNIEnv, thread: jthread, object: jobject)>;
pub type jvmtiEventResourceExhausted = Option<
    unsafe extern "system" fn(
        jvmti_env: *mut jvmtiEnv,
        jni_env: *mut JNIEnv,
        flags: jint,
        reserved: *const c_void,
        description: *const c_char,
    ),
>;
pub type jvmtiEventGarbageCollectionStart = Option<unsafe extern "system" fn(jvmti_env: *mut jvmtiEnv)>;
pub type jvmtiEventGarbageCollectionFinish = Option<unsafe extern "system" fn(jvmti_env: *mut jvmtiEnv)>;
pub type jvmtiEventObjectFree = Option<unsafe extern "system" fn(jvmti_env: *mut jvmtiEnv, tag: jlong)>;
pub type jvmtiEventVMObjectAlloc = Option<
    unsafe extern "system" fn(
        jvmti_env: *mut jvmtiEnv,
        jni_env: *mut JNIEnv,
        thread: jthread,
        object: jobject,
        object_klass: jclass,
        size: jlong,
    ),
>;
pub type jvmtiEventSampledObjectAlloc = Option<
    unsafe extern "system" fn(
        jvmti_env: *mut jvmtiEnv,
        jni_env: *mut JNIEnv,
        thread: jthread,
        object: jobject,
        object_klass: jclass,
        size: jlong,
    ),
>;

/// The event handlers given to `SetEventCallbacks`: one slot per event number from
/// [`JVMTI_MIN_EVENT_TYPE_VAL`] (50) to [`JVMTI_MAX_EVENT_TYPE_VAL`] (88), in number order.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct jvmtiEventCallbacks {
    // 50
    pub VMInit: jvmtiEventVMInit,
    // 51
    pub VMDeath: jvmtiEventVMDeath,
    // 52
    pub ThreadStart: jvmtiEventThreadStart,
    // 53
    pub ThreadEnd: jvmtiEventThreadEnd,
    // 54
    pub ClassFileLoadHook: jvmtiEventClassFileLoadHook,
    // 55
    pub ClassLoad: jvmtiEventClassLoad,
    // 56
    pub ClassPrepare: jvmtiEventClassPrepare,
    // 57
    pub VMStart: jvmtiEventVMStart,
    // 58
    pub Exception: jvmtiEventException,
    // 59
    pub ExceptionCatch: jvmtiEventExceptionCatch,
    // 60
    pub SingleStep: jvmtiEventSingleStep,
    // 61
    pub FramePop: jvmtiEventFramePop,
    // 62
    pub Breakpoint: jvmtiEventBreakpoint,
    // 63
    pub FieldAccess: jvmtiEventFieldAccess,
    // 64
    pub FieldModification: jvmtiEventFieldModification,
    // 65
    pub MethodEntry: jvmtiEventMethodEntry,
    // 66
    pub MethodExit: jvmtiEventMethodExit,
    // 67
    pub NativeMethodBind: jvmtiEventNativeMethodBind,
    // 68
    pub CompiledMethodLoad: jvmtiEventCompiledMethodLoad,
    // 69
    pub CompiledMethodUnload: jvmtiEventCompiledMethodUnload,
    // 70
    pub DynamicCodeGenerated: jvmtiEventDynamicCodeGenerated,
    // 71
    pub DataDumpRequest: jvmtiEventDataDumpRequest,
    // 72
    pub reserved72: jvmtiEventReserved,
    // 73
    pub MonitorWait: jvmtiEventMonitorWait,
    // 74
    pub MonitorWaited: jvmtiEventMonitorWaited,
    // 75
    pub MonitorContendedEnter: jvmtiEventMonitorContendedEnter,
    // 76
    pub MonitorContendedEntered: jvmtiEventMonitorContendedEntered,
    // 77
    pub reserved77: jvmtiEventReserved,
    // 78
    pub reserved78: jvmtiEventReserved,
    // 79
    pub reserved79: jvmtiEventReserved,
    // 80
    pub ResourceExhausted: jvmtiEventResourceExhausted,
    // 81
    pub GarbageCollectionStart: jvmtiEventGarbageCollectionStart,
    // 82
    pub GarbageCollectionFinish: jvmtiEventGarbageCollectionFinish,
    // 83
    pub ObjectFree: jvmtiEventObjectFree,
    // 84
    pub VMObjectAlloc: jvmtiEventVMObjectAlloc,
    // 85
    pub reserved85: jvmtiEventReserved,
    // 86
    pub SampledObjectAlloc: jvmtiEventSampledObjectAlloc,
    // 87 (JVMTI 21)
    pub VirtualThreadStart: jvmtiEventVirtualThreadStart,
    // 88 (JVMTI 21)
    pub VirtualThreadEnd: jvmtiEventVirtualThreadEnd,
}

// ---------------------------------------------------------------------------------------------
// The function table
// ---------------------------------------------------------------------------------------------

/// The JVMTI function table, every slot in the spec's position order (the comment before each is
/// its position). A slot the VM does not fill is null, hence the `Option`s.
#[repr(C)]
pub struct JvmtiInterface {
    // 1
    pub reserved1: *const c_void,
    // 2
    pub SetEventNotificationMode: Option<
        unsafe extern "C" fn(
            env: *mut jvmtiEnv,
            mode: jvmtiEventMode,
            event_type: jvmtiEvent,
            event_thread: jthread,
            ...
        ) -> jvmtiError,
    >,
    // 3
    pub GetAllModules: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            module_count_ptr: *mut jint,
            modules_ptr: *mut *mut jobject,
        ) -> jvmtiError,
    >,
    // 4
    pub GetAllThreads: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            threads_count_ptr: *mut jint,
            threads_ptr: *mut *mut jthread,
        ) -> jvmtiError,
    >,
    // 5
    pub SuspendThread: Option<unsafe extern "system" fn(env: *mut jvmtiEnv, thread: jthread) -> jvmtiError>,
    // 6
    pub ResumeThread: Option<unsafe extern "system" fn(env: *mut jvmtiEnv, thread: jthread) -> jvmtiError>,
    // 7
    pub StopThread:
        Option<unsafe extern "system" fn(env: *mut jvmtiEnv, thread: jthread, exception: jobject) -> jvmtiError>,
    // 8
    pub InterruptThread: Option<unsafe extern "system" fn(env: *mut jvmtiEnv, thread: jthread) -> jvmtiError>,
    // 9
    pub GetThreadInfo: Option<
        unsafe extern "system" fn(env: *mut jvmtiEnv, thread: jthread, info_ptr: *mut jvmtiThreadInfo) -> jvmtiError,
    >,
    // 10
    pub GetOwnedMonitorInfo: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            thread: jthread,
            owned_monitor_count_ptr: *mut jint,
            owned_monitors_ptr: *mut *mut jobject,
        ) -> jvmtiError,
    >,
    // 11
    pub GetCurrentContendedMonitor:
        Option<unsafe extern "system" fn(env: *mut jvmtiEnv, thread: jthread, monitor_ptr: *mut jobject) -> jvmtiError>,
    // 12
    pub RunAgentThread: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            thread: jthread,
            proc_: jvmtiStartFunction,
            arg: *const c_void,
            priority: jint,
        ) -> jvmtiError,
    >,
    // 13
    pub GetTopThreadGroups: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            group_count_ptr: *mut jint,
            groups_ptr: *mut *mut jthreadGroup,
        ) -> jvmtiError,
    >,
    // 14
    pub GetThreadGroupInfo: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            group: jthreadGroup,
            info_ptr: *mut jvmtiThreadGroupInfo,
        ) -> jvmtiError,
    >,
    // 15
    pub GetThreadGroupChildren: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            group: jthreadGroup,
            thread_count_ptr: *mut jint,
            threads_ptr: *mut *mut jthread,
            group_count_ptr: *mut jint,
            groups_ptr: *mut *mut jthreadGroup,
        ) -> jvmtiError,
    >,
    // 16
    pub GetFrameCount:
        Option<unsafe extern "system" fn(env: *mut jvmtiEnv, thread: jthread, count_ptr: *mut jint) -> jvmtiError>,
    // 17
    pub GetThreadState: Option<
        unsafe extern "system" fn(env: *mut jvmtiEnv, thread: jthread, thread_state_ptr: *mut jint) -> jvmtiError,
    >,
    // 18
    pub GetCurrentThread: Option<unsafe extern "system" fn(env: *mut jvmtiEnv, thread_ptr: *mut jthread) -> jvmtiError>,
    // 19
    pub GetFrameLocation: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            thread: jthread,
            depth: jint,
            method_ptr: *mut jmethodID,
            location_ptr: *mut jlocation,
        ) -> jvmtiError,
    >,
    // 20
    pub NotifyFramePop:
        Option<unsafe extern "system" fn(env: *mut jvmtiEnv, thread: jthread, depth: jint) -> jvmtiError>,
    // 21
    pub GetLocalObject: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            thread: jthread,
            depth: jint,
            slot: jint,
            value_ptr: *mut jobject,
        ) -> jvmtiError,
    >,
    // 22
    pub GetLocalInt: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            thread: jthread,
            depth: jint,
            slot: jint,
            value_ptr: *mut jint,
        ) -> jvmtiError,
    >,
    // 23
    pub GetLocalLong: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            thread: jthread,
            depth: jint,
            slot: jint,
            value_ptr: *mut jlong,
        ) -> jvmtiError,
    >,
    // 24
    pub GetLocalFloat: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            thread: jthread,
            depth: jint,
            slot: jint,
            value_ptr: *mut jfloat,
        ) -> jvmtiError,
    >,
    // 25
    pub GetLocalDouble: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            thread: jthread,
            depth: jint,
            slot: jint,
            value_ptr: *mut jdouble,
        ) -> jvmtiError,
    >,
    // 26
    pub SetLocalObject: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            thread: jthread,
            depth: jint,
            slot: jint,
            value: jobject,
        ) -> jvmtiError,
    >,
    // 27
    pub SetLocalInt: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            thread: jthread,
            depth: jint,
            slot: jint,
            value: jint,
        ) -> jvmtiError,
    >,
    // 28
    pub SetLocalLong: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            thread: jthread,
            depth: jint,
            slot: jint,
            value: jlong,
        ) -> jvmtiError,
    >,
    // 29
    pub SetLocalFloat: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            thread: jthread,
            depth: jint,
            slot: jint,
            value: jfloat,
        ) -> jvmtiError,
    >,
    // 30
    pub SetLocalDouble: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            thread: jthread,
            depth: jint,
            slot: jint,
            value: jdouble,
        ) -> jvmtiError,
    >,
    // 31
    pub CreateRawMonitor: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            name: *const c_char,
            monitor_ptr: *mut jrawMonitorID,
        ) -> jvmtiError,
    >,
    // 32
    pub DestroyRawMonitor: Option<unsafe extern "system" fn(env: *mut jvmtiEnv, monitor: jrawMonitorID) -> jvmtiError>,
    // 33
    pub RawMonitorEnter: Option<unsafe extern "system" fn(env: *mut jvmtiEnv, monitor: jrawMonitorID) -> jvmtiError>,
    // 34
    pub RawMonitorExit: Option<unsafe extern "system" fn(env: *mut jvmtiEnv, monitor: jrawMonitorID) -> jvmtiError>,
    // 35
    pub RawMonitorWait:
        Option<unsafe extern "system" fn(env: *mut jvmtiEnv, monitor: jrawMonitorID, millis: jlong) -> jvmtiError>,
    // 36
    pub RawMonitorNotify: Option<unsafe extern "system" fn(env: *mut jvmtiEnv, monitor: jrawMonitorID) -> jvmtiError>,
    // 37
    pub RawMonitorNotifyAll:
        Option<unsafe extern "system" fn(env: *mut jvmtiEnv, monitor: jrawMonitorID) -> jvmtiError>,
    // 38
    pub SetBreakpoint:
        Option<unsafe extern "system" fn(env: *mut jvmtiEnv, method: jmethodID, location: jlocation) -> jvmtiError>,
    // 39
    pub ClearBreakpoint:
        Option<unsafe extern "system" fn(env: *mut jvmtiEnv, method: jmethodID, location: jlocation) -> jvmtiError>,
    // 40
    pub GetNamedModule: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            class_loader: jobject,
            package_name: *const c_char,
            module_ptr: *mut jobject,
        ) -> jvmtiError,
    >,
    // 41
    pub SetFieldAccessWatch:
        Option<unsafe extern "system" fn(env: *mut jvmtiEnv, klass: jclass, field: jfieldID) -> jvmtiError>,
    // 42
    pub ClearFieldAccessWatch:
        Option<unsafe extern "system" fn(env: *mut jvmtiEnv, klass: jclass, field: jfieldID) -> jvmtiError>,
    // 43
    pub SetFieldModificationWatch:
        Option<unsafe extern "system" fn(env: *mut jvmtiEnv, klass: jclass, field: jfieldID) -> jvmtiError>,
    // 44
    pub ClearFieldModificationWatch:
        Option<unsafe extern "system" fn(env: *mut jvmtiEnv, klass: jclass, field: jfieldID) -> jvmtiError>,
    // 45
    pub IsModifiableClass: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            klass: jclass,
            is_modifiable_class_ptr: *mut jboolean,
        ) -> jvmtiError,
    >,
    // 46
    pub Allocate:
        Option<unsafe extern "system" fn(env: *mut jvmtiEnv, size: jlong, mem_ptr: *mut *mut c_uchar) -> jvmtiError>,
    // 47
    pub Deallocate: Option<unsafe extern "system" fn(env: *mut jvmtiEnv, mem: *mut c_uchar) -> jvmtiError>,
    // 48
    pub GetClassSignature: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            klass: jclass,
            signature_ptr: *mut *mut c_char,
            generic_ptr: *mut *mut c_char,
        ) -> jvmtiError,
    >,
    // 49
    pub GetClassStatus:
        Option<unsafe extern "system" fn(env: *mut jvmtiEnv, klass: jclass, status_ptr: *mut jint) -> jvmtiError>,
    // 50
    pub GetSourceFileName: Option<
        unsafe extern "system" fn(env: *mut jvmtiEnv, klass: jclass, source_name_ptr: *mut *mut c_char) -> jvmtiError,
    >,
    // 51
    pub GetClassModifiers:
        Option<unsafe extern "system" fn(env: *mut jvmtiEnv, klass: jclass, modifiers_ptr: *mut jint) -> jvmtiError>,
    // 52
    pub GetClassMethods: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            klass: jclass,
            method_count_ptr: *mut jint,
            methods_ptr: *mut *mut jmethodID,
        ) -> jvmtiError,
    >,
    // 53
    pub GetClassFields: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            klass: jclass,
            field_count_ptr: *mut jint,
            fields_ptr: *mut *mut jfieldID,
        ) -> jvmtiError,
    >,
    // 54
    pub GetImplementedInterfaces: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            klass: jclass,
            interface_count_ptr: *mut jint,
            interfaces_ptr: *mut *mut jclass,
        ) -> jvmtiError,
    >,
    // 55
    pub IsInterface: Option<
        unsafe extern "system" fn(env: *mut jvmtiEnv, klass: jclass, is_interface_ptr: *mut jboolean) -> jvmtiError,
    >,
    // 56
    pub IsArrayClass: Option<
        unsafe extern "system" fn(env: *mut jvmtiEnv, klass: jclass, is_array_class_ptr: *mut jboolean) -> jvmtiError,
    >,
    // 57
    pub GetClassLoader: Option<
        unsafe extern "system" fn(env: *mut jvmtiEnv, klass: jclass, classloader_ptr: *mut jobject) -> jvmtiError,
    >,
    // 58
    pub GetObjectHashCode:
        Option<unsafe extern "system" fn(env: *mut jvmtiEnv, object: jobject, hash_code_ptr: *mut jint) -> jvmtiError>,
    // 59
    pub GetObjectMonitorUsage: Option<
        unsafe extern "system" fn(env: *mut jvmtiEnv, object: jobject, info_ptr: *mut jvmtiMonitorUsage) -> jvmtiError,
    >,
    // 60
    pub GetFieldName: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            klass: jclass,
            field: jfieldID,
            name_ptr: *mut *mut c_char,
            signature_ptr: *mut *mut c_char,
            generic_ptr: *mut *mut c_char,
        ) -> jvmtiError,
    >,
    // 61
    pub GetFieldDeclaringClass: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            klass: jclass,
            field: jfieldID,
            declaring_class_ptr: *mut jclass,
        ) -> jvmtiError,
    >,
    // 62
    pub GetFieldModifiers: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            klass: jclass,
            field: jfieldID,
            modifiers_ptr: *mut jint,
        ) -> jvmtiError,
    >,
    // 63
    pub IsFieldSynthetic: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            klass: jclass,
            field: jfieldID,
            is_synthetic_ptr: *mut jboolean,
        ) -> jvmtiError,
    >,
    // 64
    pub GetMethodName: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            method: jmethodID,
            name_ptr: *mut *mut c_char,
            signature_ptr: *mut *mut c_char,
            generic_ptr: *mut *mut c_char,
        ) -> jvmtiError,
    >,
    // 65
    pub GetMethodDeclaringClass: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            method: jmethodID,
            declaring_class_ptr: *mut jclass,
        ) -> jvmtiError,
    >,
    // 66
    pub GetMethodModifiers: Option<
        unsafe extern "system" fn(env: *mut jvmtiEnv, method: jmethodID, modifiers_ptr: *mut jint) -> jvmtiError,
    >,
    // 67
    pub reserved67: *const c_void,
    // 68
    pub GetMaxLocals:
        Option<unsafe extern "system" fn(env: *mut jvmtiEnv, method: jmethodID, max_ptr: *mut jint) -> jvmtiError>,
    // 69
    pub GetArgumentsSize:
        Option<unsafe extern "system" fn(env: *mut jvmtiEnv, method: jmethodID, size_ptr: *mut jint) -> jvmtiError>,
    // 70
    pub GetLineNumberTable: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            method: jmethodID,
            entry_count_ptr: *mut jint,
            table_ptr: *mut *mut jvmtiLineNumberEntry,
        ) -> jvmtiError,
    >,
    // 71
    pub GetMethodLocation: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            method: jmethodID,
            start_location_ptr: *mut jlocation,
            end_location_ptr: *mut jlocation,
        ) -> jvmtiError,
    >,
    // 72
    pub GetLocalVariableTable: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            method: jmethodID,
            entry_count_ptr: *mut jint,
            table_ptr: *mut *mut jvmtiLocalVariableEntry,
        ) -> jvmtiError,
    >,
    // 73
    pub SetNativeMethodPrefix:
        Option<unsafe extern "system" fn(env: *mut jvmtiEnv, prefix: *const c_char) -> jvmtiError>,
    // 74
    pub SetNativeMethodPrefixes: Option<
        unsafe extern "system" fn(env: *mut jvmtiEnv, prefix_count: jint, prefixes: *mut *mut c_char) -> jvmtiError,
    >,
    // 75
    pub GetBytecodes: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            method: jmethodID,
            bytecode_count_ptr: *mut jint,
            bytecodes_ptr: *mut *mut c_uchar,
        ) -> jvmtiError,
    >,
    // 76
    pub IsMethodNative: Option<
        unsafe extern "system" fn(env: *mut jvmtiEnv, method: jmethodID, is_native_ptr: *mut jboolean) -> jvmtiError,
    >,
    // 77
    pub IsMethodSynthetic: Option<
        unsafe extern "system" fn(env: *mut jvmtiEnv, method: jmethodID, is_synthetic_ptr: *mut jboolean) -> jvmtiError,
    >,
    // 78
    pub GetLoadedClasses: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            class_count_ptr: *mut jint,
            classes_ptr: *mut *mut jclass,
        ) -> jvmtiError,
    >,
    // 79
    pub GetClassLoaderClasses: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            initiating_loader: jobject,
            class_count_ptr: *mut jint,
            classes_ptr: *mut *mut jclass,
        ) -> jvmtiError,
    >,
    // 80
    pub PopFrame: Option<unsafe extern "system" fn(env: *mut jvmtiEnv, thread: jthread) -> jvmtiError>,
    // 81
    pub ForceEarlyReturnObject:
        Option<unsafe extern "system" fn(env: *mut jvmtiEnv, thread: jthread, value: jobject) -> jvmtiError>,
    // 82
    pub ForceEarlyReturnInt:
        Option<unsafe extern "system" fn(env: *mut jvmtiEnv, thread: jthread, value: jint) -> jvmtiError>,
    // 83
    pub ForceEarlyReturnLong:
        Option<unsafe extern "system" fn(env: *mut jvmtiEnv, thread: jthread, value: jlong) -> jvmtiError>,
    // 84
    pub ForceEarlyReturnFloat:
        Option<unsafe extern "system" fn(env: *mut jvmtiEnv, thread: jthread, value: jfloat) -> jvmtiError>,
    // 85
    pub ForceEarlyReturnDouble:
        Option<unsafe extern "system" fn(env: *mut jvmtiEnv, thread: jthread, value: jdouble) -> jvmtiError>,
    // 86
    pub ForceEarlyReturnVoid: Option<unsafe extern "system" fn(env: *mut jvmtiEnv, thread: jthread) -> jvmtiError>,
    // 87
    pub RedefineClasses: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            class_count: jint,
            class_definitions: *const jvmtiClassDefinition,
        ) -> jvmtiError,
    >,
    // 88
    pub GetVersionNumber: Option<unsafe extern "system" fn(env: *mut jvmtiEnv, version_ptr: *mut jint) -> jvmtiError>,
    // 89
    pub GetCapabilities:
        Option<unsafe extern "system" fn(env: *mut jvmtiEnv, capabilities_ptr: *mut jvmtiCapabilities) -> jvmtiError>,
    // 90
    pub GetSourceDebugExtension: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            klass: jclass,
            source_debug_extension_ptr: *mut *mut c_char,
        ) -> jvmtiError,
    >,
    // 91
    pub IsMethodObsolete: Option<
        unsafe extern "system" fn(env: *mut jvmtiEnv, method: jmethodID, is_obsolete_ptr: *mut jboolean) -> jvmtiError,
    >,
    // 92
    pub SuspendThreadList: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            request_count: jint,
            request_list: *const jthread,
            results: *mut jvmtiError,
        ) -> jvmtiError,
    >,
    // 93
    pub ResumeThreadList: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            request_count: jint,
            request_list: *const jthread,
            results: *mut jvmtiError,
        ) -> jvmtiError,
    >,
    // 94
    pub AddModuleReads:
        Option<unsafe extern "system" fn(env: *mut jvmtiEnv, module: jobject, to_module: jobject) -> jvmtiError>,
    // 95
    pub AddModuleExports: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            module: jobject,
            pkg_name: *const c_char,
            to_module: jobject,
        ) -> jvmtiError,
    >,
    // 96
    pub AddModuleOpens: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            module: jobject,
            pkg_name: *const c_char,
            to_module: jobject,
        ) -> jvmtiError,
    >,
    // 97
    pub AddModuleUses:
        Option<unsafe extern "system" fn(env: *mut jvmtiEnv, module: jobject, service: jclass) -> jvmtiError>,
    // 98
    pub AddModuleProvides: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            module: jobject,
            service: jclass,
            impl_class: jclass,
        ) -> jvmtiError,
    >,
    // 99
    pub IsModifiableModule: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            module: jobject,
            is_modifiable_module_ptr: *mut jboolean,
        ) -> jvmtiError,
    >,
    // 100
    pub GetAllStackTraces: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            max_frame_count: jint,
            stack_info_ptr: *mut *mut jvmtiStackInfo,
            thread_count_ptr: *mut jint,
        ) -> jvmtiError,
    >,
    // 101
    pub GetThreadListStackTraces: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            thread_count: jint,
            thread_list: *const jthread,
            max_frame_count: jint,
            stack_info_ptr: *mut *mut jvmtiStackInfo,
        ) -> jvmtiError,
    >,
    // 102
    pub GetThreadLocalStorage: Option<
        unsafe extern "system" fn(env: *mut jvmtiEnv, thread: jthread, data_ptr: *mut *mut c_void) -> jvmtiError,
    >,
    // 103
    pub SetThreadLocalStorage:
        Option<unsafe extern "system" fn(env: *mut jvmtiEnv, thread: jthread, data: *const c_void) -> jvmtiError>,
    // 104
    pub GetStackTrace: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            thread: jthread,
            start_depth: jint,
            max_frame_count: jint,
            frame_buffer: *mut jvmtiFrameInfo,
            count_ptr: *mut jint,
        ) -> jvmtiError,
    >,
    // 105
    pub reserved105: *const c_void,
    // 106
    pub GetTag:
        Option<unsafe extern "system" fn(env: *mut jvmtiEnv, object: jobject, tag_ptr: *mut jlong) -> jvmtiError>,
    // 107
    pub SetTag: Option<unsafe extern "system" fn(env: *mut jvmtiEnv, object: jobject, tag: jlong) -> jvmtiError>,
    // 108
    pub ForceGarbageCollection: Option<unsafe extern "system" fn(env: *mut jvmtiEnv) -> jvmtiError>,
    // 109
    pub IterateOverObjectsReachableFromObject: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            object: jobject,
            object_reference_callback: jvmtiObjectReferenceCallback,
            user_data: *const c_void,
        ) -> jvmtiError,
    >,
    // 110
    pub IterateOverReachableObjects: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            heap_root_callback: jvmtiHeapRootCallback,
            stack_ref_callback: jvmtiStackReferenceCallback,
            object_ref_callback: jvmtiObjectReferenceCallback,
            user_data: *const c_void,
        ) -> jvmtiError,
    >,
    // 111
    pub IterateOverHeap: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            object_filter: jvmtiHeapObjectFilter,
            heap_object_callback: jvmtiHeapObjectCallback,
            user_data: *const c_void,
        ) -> jvmtiError,
    >,
    // 112
    pub IterateOverInstancesOfClass: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            klass: jclass,
            object_filter: jvmtiHeapObjectFilter,
            heap_object_callback: jvmtiHeapObjectCallback,
            user_data: *const c_void,
        ) -> jvmtiError,
    >,
    // 113
    pub reserved113: *const c_void,
    // 114
    pub GetObjectsWithTags: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            tag_count: jint,
            tags: *const jlong,
            count_ptr: *mut jint,
            object_result_ptr: *mut *mut jobject,
            tag_result_ptr: *mut *mut jlong,
        ) -> jvmtiError,
    >,
    // 115
    pub FollowReferences: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            heap_filter: jint,
            klass: jclass,
            initial_object: jobject,
            callbacks: *const jvmtiHeapCallbacks,
            user_data: *const c_void,
        ) -> jvmtiError,
    >,
    // 116
    pub IterateThroughHeap: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            heap_filter: jint,
            klass: jclass,
            callbacks: *const jvmtiHeapCallbacks,
            user_data: *const c_void,
        ) -> jvmtiError,
    >,
    // 117
    pub reserved117: *const c_void,
    // 118 (JVMTI 21)
    pub SuspendAllVirtualThreads: Option<
        unsafe extern "system" fn(env: *mut jvmtiEnv, except_count: jint, except_list: *const jthread) -> jvmtiError,
    >,
    // 119 (JVMTI 21)
    pub ResumeAllVirtualThreads: Option<
        unsafe extern "system" fn(env: *mut jvmtiEnv, except_count: jint, except_list: *const jthread) -> jvmtiError,
    >,
    // 120
    pub SetJNIFunctionTable:
        Option<unsafe extern "system" fn(env: *mut jvmtiEnv, function_table: *const JNINativeInterface_) -> jvmtiError>,
    // 121
    pub GetJNIFunctionTable: Option<
        unsafe extern "system" fn(env: *mut jvmtiEnv, function_table: *mut *mut JNINativeInterface_) -> jvmtiError,
    >,
    // 122
    pub SetEventCallbacks: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            callbacks: *const jvmtiEventCallbacks,
            size_of_callbacks: jint,
        ) -> jvmtiError,
    >,
    // 123
    pub GenerateEvents: Option<unsafe extern "system" fn(env: *mut jvmtiEnv, event_type: jvmtiEvent) -> jvmtiError>,
    // 124
    pub GetExtensionFunctions: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            extension_count_ptr: *mut jint,
            extensions: *mut *mut jvmtiExtensionFunctionInfo,
        ) -> jvmtiError,
    >,
    // 125
    pub GetExtensionEvents: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            extension_count_ptr: *mut jint,
            extensions: *mut *mut jvmtiExtensionEventInfo,
        ) -> jvmtiError,
    >,
    // 126
    pub SetExtensionEventCallback: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            extension_event_index: jint,
            callback: jvmtiExtensionEvent,
        ) -> jvmtiError,
    >,
    // 127
    pub DisposeEnvironment: Option<unsafe extern "system" fn(env: *mut jvmtiEnv) -> jvmtiError>,
    // 128
    pub GetErrorName: Option<
        unsafe extern "system" fn(env: *mut jvmtiEnv, error: jvmtiError, name_ptr: *mut *mut c_char) -> jvmtiError,
    >,
    // 129
    pub GetJLocationFormat:
        Option<unsafe extern "system" fn(env: *mut jvmtiEnv, format_ptr: *mut jvmtiJlocationFormat) -> jvmtiError>,
    // 130
    pub GetSystemProperties: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            count_ptr: *mut jint,
            property_ptr: *mut *mut *mut c_char,
        ) -> jvmtiError,
    >,
    // 131
    pub GetSystemProperty: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            property: *const c_char,
            value_ptr: *mut *mut c_char,
        ) -> jvmtiError,
    >,
    // 132
    pub SetSystemProperty: Option<
        unsafe extern "system" fn(env: *mut jvmtiEnv, property: *const c_char, value_ptr: *const c_char) -> jvmtiError,
    >,
    // 133
    pub GetPhase: Option<unsafe extern "system" fn(env: *mut jvmtiEnv, phase_ptr: *mut jvmtiPhase) -> jvmtiError>,
    // 134
    pub GetCurrentThreadCpuTimerInfo:
        Option<unsafe extern "system" fn(env: *mut jvmtiEnv, info_ptr: *mut jvmtiTimerInfo) -> jvmtiError>,
    // 135
    pub GetCurrentThreadCpuTime:
        Option<unsafe extern "system" fn(env: *mut jvmtiEnv, nanos_ptr: *mut jlong) -> jvmtiError>,
    // 136
    pub GetThreadCpuTimerInfo:
        Option<unsafe extern "system" fn(env: *mut jvmtiEnv, info_ptr: *mut jvmtiTimerInfo) -> jvmtiError>,
    // 137
    pub GetThreadCpuTime:
        Option<unsafe extern "system" fn(env: *mut jvmtiEnv, thread: jthread, nanos_ptr: *mut jlong) -> jvmtiError>,
    // 138
    pub GetTimerInfo:
        Option<unsafe extern "system" fn(env: *mut jvmtiEnv, info_ptr: *mut jvmtiTimerInfo) -> jvmtiError>,
    // 139
    pub GetTime: Option<unsafe extern "system" fn(env: *mut jvmtiEnv, nanos_ptr: *mut jlong) -> jvmtiError>,
    // 140
    pub GetPotentialCapabilities:
        Option<unsafe extern "system" fn(env: *mut jvmtiEnv, capabilities_ptr: *mut jvmtiCapabilities) -> jvmtiError>,
    // 141
    pub reserved141: *const c_void,
    // 142
    pub AddCapabilities:
        Option<unsafe extern "system" fn(env: *mut jvmtiEnv, capabilities_ptr: *const jvmtiCapabilities) -> jvmtiError>,
    // 143
    pub RelinquishCapabilities:
        Option<unsafe extern "system" fn(env: *mut jvmtiEnv, capabilities_ptr: *const jvmtiCapabilities) -> jvmtiError>,
    // 144
    pub GetAvailableProcessors:
        Option<unsafe extern "system" fn(env: *mut jvmtiEnv, processor_count_ptr: *mut jint) -> jvmtiError>,
    // 145
    pub GetClassVersionNumbers: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            klass: jclass,
            minor_version_ptr: *mut jint,
            major_version_ptr: *mut jint,
        ) -> jvmtiError,
    >,
    // 146
    pub GetConstantPool: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            klass: jclass,
            constant_pool_count_ptr: *mut jint,
            constant_pool_byte_count_ptr: *mut jint,
            constant_pool_bytes_ptr: *mut *mut c_uchar,
        ) -> jvmtiError,
    >,
    // 147
    pub GetEnvironmentLocalStorage:
        Option<unsafe extern "system" fn(env: *mut jvmtiEnv, data_ptr: *mut *mut c_void) -> jvmtiError>,
    // 148
    pub SetEnvironmentLocalStorage:
        Option<unsafe extern "system" fn(env: *mut jvmtiEnv, data: *const c_void) -> jvmtiError>,
    // 149
    pub AddToBootstrapClassLoaderSearch:
        Option<unsafe extern "system" fn(env: *mut jvmtiEnv, segment: *const c_char) -> jvmtiError>,
    // 150
    pub SetVerboseFlag:
        Option<unsafe extern "system" fn(env: *mut jvmtiEnv, flag: jvmtiVerboseFlag, value: jboolean) -> jvmtiError>,
    // 151
    pub AddToSystemClassLoaderSearch:
        Option<unsafe extern "system" fn(env: *mut jvmtiEnv, segment: *const c_char) -> jvmtiError>,
    // 152
    pub RetransformClasses:
        Option<unsafe extern "system" fn(env: *mut jvmtiEnv, class_count: jint, classes: *const jclass) -> jvmtiError>,
    // 153
    pub GetOwnedMonitorStackDepthInfo: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            thread: jthread,
            monitor_info_count_ptr: *mut jint,
            monitor_info_ptr: *mut *mut jvmtiMonitorStackDepthInfo,
        ) -> jvmtiError,
    >,
    // 154
    pub GetObjectSize:
        Option<unsafe extern "system" fn(env: *mut jvmtiEnv, object: jobject, size_ptr: *mut jlong) -> jvmtiError>,
    // 155
    pub GetLocalInstance: Option<
        unsafe extern "system" fn(
            env: *mut jvmtiEnv,
            thread: jthread,
            depth: jint,
            value_ptr: *mut jobject,
        ) -> jvmtiError,
    >,
    // 156
    pub SetHeapSamplingInterval:
        Option<unsafe extern "system" fn(env: *mut jvmtiEnv, sampling_interval: jint) -> jvmtiError>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    const PTR: usize = size_of::<*const c_void>();

    /// Each function sits at (position - 1) pointers, the positions being the spec's.
    #[test]
    fn function_table_positions_match_the_spec() {
        macro_rules! at {
            ($($name:ident = $pos:literal),* $(,)?) => {{
                let mut count = 0;
                $(
                    assert_eq!(offset_of!(JvmtiInterface, $name), ($pos - 1) * PTR, stringify!($name));
                    count += 1;
                )*
                count
            }};
        }
        let named = at!(
            SetEventNotificationMode = 2,
            GetAllModules = 3,
            GetAllThreads = 4,
            SuspendThread = 5,
            ResumeThread = 6,
            StopThread = 7,
            InterruptThread = 8,
            GetThreadInfo = 9,
            GetOwnedMonitorInfo = 10,
            GetCurrentContendedMonitor = 11,
            RunAgentThread = 12,
            GetTopThreadGroups = 13,
            GetThreadGroupInfo = 14,
            GetThreadGroupChildren = 15,
            GetFrameCount = 16,
            GetThreadState = 17,
            GetCurrentThread = 18,
            GetFrameLocation = 19,
            NotifyFramePop = 20,
            GetLocalObject = 21,
            GetLocalInt = 22,
            GetLocalLong = 23,
            GetLocalFloat = 24,
            GetLocalDouble = 25,
            SetLocalObject = 26,
            SetLocalInt = 27,
            SetLocalLong = 28,
            SetLocalFloat = 29,
            SetLocalDouble = 30,
            CreateRawMonitor = 31,
            DestroyRawMonitor = 32,
            RawMonitorEnter = 33,
            RawMonitorExit = 34,
            RawMonitorWait = 35,
            RawMonitorNotify = 36,
            RawMonitorNotifyAll = 37,
            SetBreakpoint = 38,
            ClearBreakpoint = 39,
            GetNamedModule = 40,
            SetFieldAccessWatch = 41,
            ClearFieldAccessWatch = 42,
            SetFieldModificationWatch = 43,
            ClearFieldModificationWatch = 44,
            IsModifiableClass = 45,
            Allocate = 46,
            Deallocate = 47,
            GetClassSignature = 48,
            GetClassStatus = 49,
            GetSourceFileName = 50,
            GetClassModifiers = 51,
            GetClassMethods = 52,
            GetClassFields = 53,
            GetImplementedInterfaces = 54,
            IsInterface = 55,
            IsArrayClass = 56,
            GetClassLoader = 57,
            GetObjectHashCode = 58,
            GetObjectMonitorUsage = 59,
            GetFieldName = 60,
            GetFieldDeclaringClass = 61,
            GetFieldModifiers = 62,
            IsFieldSynthetic = 63,
            GetMethodName = 64,
            GetMethodDeclaringClass = 65,
            GetMethodModifiers = 66,
            GetMaxLocals = 68,
            GetArgumentsSize = 69,
            GetLineNumberTable = 70,
            GetMethodLocation = 71,
            GetLocalVariableTable = 72,
            SetNativeMethodPrefix = 73,
            SetNativeMethodPrefixes = 74,
            GetBytecodes = 75,
            IsMethodNative = 76,
            IsMethodSynthetic = 77,
            GetLoadedClasses = 78,
            GetClassLoaderClasses = 79,
            PopFrame = 80,
            ForceEarlyReturnObject = 81,
            ForceEarlyReturnInt = 82,
            ForceEarlyReturnLong = 83,
            ForceEarlyReturnFloat = 84,
            ForceEarlyReturnDouble = 85,
            ForceEarlyReturnVoid = 86,
            RedefineClasses = 87,
            GetVersionNumber = 88,
            GetCapabilities = 89,
            GetSourceDebugExtension = 90,
            IsMethodObsolete = 91,
            SuspendThreadList = 92,
            ResumeThreadList = 93,
            AddModuleReads = 94,
            AddModuleExports = 95,
            AddModuleOpens = 96,
            AddModuleUses = 97,
            AddModuleProvides = 98,
            IsModifiableModule = 99,
            GetAllStackTraces = 100,
            GetThreadListStackTraces = 101,
            GetThreadLocalStorage = 102,
            SetThreadLocalStorage = 103,
            GetStackTrace = 104,
            GetTag = 106,
            SetTag = 107,
            ForceGarbageCollection = 108,
            IterateOverObjectsReachableFromObject = 109,
            IterateOverReachableObjects = 110,
            IterateOverHeap = 111,
            IterateOverInstancesOfClass = 112,
            GetObjectsWithTags = 114,
            FollowReferences = 115,
            IterateThroughHeap = 116,
            SetJNIFunctionTable = 120,
            GetJNIFunctionTable = 121,
            SetEventCallbacks = 122,
            GenerateEvents = 123,
            GetExtensionFunctions = 124,
            GetExtensionEvents = 125,
            SetExtensionEventCallback = 126,
            DisposeEnvironment = 127,
            GetErrorName = 128,
            GetJLocationFormat = 129,
            GetSystemProperties = 130,
            GetSystemProperty = 131,
            SetSystemProperty = 132,
            GetPhase = 133,
            GetCurrentThreadCpuTimerInfo = 134,
            GetCurrentThreadCpuTime = 135,
            GetThreadCpuTimerInfo = 136,
            GetThreadCpuTime = 137,
            GetTimerInfo = 138,
            GetTime = 139,
            GetPotentialCapabilities = 140,
            AddCapabilities = 142,
            RelinquishCapabilities = 143,
            GetAvailableProcessors = 144,
            GetClassVersionNumbers = 145,
            GetConstantPool = 146,
            GetEnvironmentLocalStorage = 147,
            SetEnvironmentLocalStorage = 148,
            AddToBootstrapClassLoaderSearch = 149,
            SetVerboseFlag = 150,
            AddToSystemClassLoaderSearch = 151,
            RetransformClasses = 152,
            GetOwnedMonitorStackDepthInfo = 153,
            GetObjectSize = 154,
            GetLocalInstance = 155,
            SetHeapSamplingInterval = 156,
            SuspendAllVirtualThreads = 118,
            ResumeAllVirtualThreads = 119
        );
        let reserved = at!(
            reserved1 = 1,
            reserved67 = 67,
            reserved105 = 105,
            reserved113 = 113,
            reserved117 = 117,
            reserved141 = 141,
        );
        assert_eq!((named, reserved), (150, 6));
        assert_eq!(size_of::<JvmtiInterface>(), 156 * PTR);
    }

    /// One slot per event number, 50 to 86, reserved numbers included.
    #[test]
    fn event_callback_slots_follow_event_numbers() {
        macro_rules! slot {
            ($($field:ident = $event:ident),* $(,)?) => {$(
                assert_eq!(
                    offset_of!(jvmtiEventCallbacks, $field),
                    ($event - JVMTI_MIN_EVENT_TYPE_VAL) as usize * PTR,
                    stringify!($field)
                );
            )*};
        }
        slot!(
            VMInit = JVMTI_EVENT_VM_INIT,
            VMDeath = JVMTI_EVENT_VM_DEATH,
            ThreadStart = JVMTI_EVENT_THREAD_START,
            ThreadEnd = JVMTI_EVENT_THREAD_END,
            ClassFileLoadHook = JVMTI_EVENT_CLASS_FILE_LOAD_HOOK,
            ClassLoad = JVMTI_EVENT_CLASS_LOAD,
            ClassPrepare = JVMTI_EVENT_CLASS_PREPARE,
            VMStart = JVMTI_EVENT_VM_START,
            Exception = JVMTI_EVENT_EXCEPTION,
            ExceptionCatch = JVMTI_EVENT_EXCEPTION_CATCH,
            SingleStep = JVMTI_EVENT_SINGLE_STEP,
            FramePop = JVMTI_EVENT_FRAME_POP,
            Breakpoint = JVMTI_EVENT_BREAKPOINT,
            FieldAccess = JVMTI_EVENT_FIELD_ACCESS,
            FieldModification = JVMTI_EVENT_FIELD_MODIFICATION,
            MethodEntry = JVMTI_EVENT_METHOD_ENTRY,
            MethodExit = JVMTI_EVENT_METHOD_EXIT,
            NativeMethodBind = JVMTI_EVENT_NATIVE_METHOD_BIND,
            CompiledMethodLoad = JVMTI_EVENT_COMPILED_METHOD_LOAD,
            CompiledMethodUnload = JVMTI_EVENT_COMPILED_METHOD_UNLOAD,
            DynamicCodeGenerated = JVMTI_EVENT_DYNAMIC_CODE_GENERATED,
            DataDumpRequest = JVMTI_EVENT_DATA_DUMP_REQUEST,
            MonitorWait = JVMTI_EVENT_MONITOR_WAIT,
            MonitorWaited = JVMTI_EVENT_MONITOR_WAITED,
            MonitorContendedEnter = JVMTI_EVENT_MONITOR_CONTENDED_ENTER,
            MonitorContendedEntered = JVMTI_EVENT_MONITOR_CONTENDED_ENTERED,
            ResourceExhausted = JVMTI_EVENT_RESOURCE_EXHAUSTED,
            GarbageCollectionStart = JVMTI_EVENT_GARBAGE_COLLECTION_START,
            GarbageCollectionFinish = JVMTI_EVENT_GARBAGE_COLLECTION_FINISH,
            ObjectFree = JVMTI_EVENT_OBJECT_FREE,
            VMObjectAlloc = JVMTI_EVENT_VM_OBJECT_ALLOC,
            SampledObjectAlloc = JVMTI_EVENT_SAMPLED_OBJECT_ALLOC,
            VirtualThreadStart = JVMTI_EVENT_VIRTUAL_THREAD_START,
            VirtualThreadEnd = JVMTI_EVENT_VIRTUAL_THREAD_END,
        );
        for (field, number) in [
            (offset_of!(jvmtiEventCallbacks, reserved72), 72),
            (offset_of!(jvmtiEventCallbacks, reserved77), 77),
            (offset_of!(jvmtiEventCallbacks, reserved78), 78),
            (offset_of!(jvmtiEventCallbacks, reserved79), 79),
            (offset_of!(jvmtiEventCallbacks, reserved85), 85),
        ] {
            assert_eq!(field, (number - 50) * PTR);
        }
        let slots = (JVMTI_MAX_EVENT_TYPE_VAL - JVMTI_MIN_EVENT_TYPE_VAL + 1) as usize;
        assert_eq!(slots, 39);
        assert_eq!(size_of::<jvmtiEventCallbacks>(), slots * PTR);
    }

    #[test]
    fn capabilities_are_128_bits_in_spec_order() {
        assert_eq!(size_of::<jvmtiCapabilities>(), 16);
        assert_eq!(jvmtiCapabilities::NAMES.len(), jvmtiCapabilities::COUNT);
        let words = |c: jvmtiCapabilities| c.words;
        // Bit positions as a C compiler lays the bitfields out (little-endian: from bit 0 up).
        let mut c = jvmtiCapabilities::default();
        c.set_can_tag_objects(true);
        assert!(c.can_tag_objects() && c.get(0));
        if cfg!(target_endian = "little") {
            assert_eq!(words(c), [1, 0, 0, 0]);
            let mut c = jvmtiCapabilities::default();
            c.set_can_generate_breakpoint_events(true);
            assert_eq!(words(c), [1 << 19, 0, 0, 0]);
            let mut c = jvmtiCapabilities::default();
            c.set_can_generate_object_free_events(true);
            assert_eq!(words(c), [0, 1, 0, 0]);
            let mut c = jvmtiCapabilities::default();
            c.set_can_generate_sampled_object_alloc_events(true);
            assert_eq!(words(c), [0, 1 << 11, 0, 0]);
        }
        // Each getter reads its own bit, and each setter sets only it.
        for (i, name) in jvmtiCapabilities::NAMES.iter().enumerate() {
            let mut c = jvmtiCapabilities::default();
            c.set(i, true);
            assert_eq!(c.names().collect::<Vec<_>>(), [*name]);
            c.set(i, false);
            assert!(c.is_empty());
        }
        let mut a = jvmtiCapabilities::default();
        a.set_can_suspend(true).set_can_pop_frame(true);
        let mut b = jvmtiCapabilities::default();
        b.set_can_pop_frame(true).set_can_tag_objects(true);
        assert_eq!(a.intersection(&b).names().collect::<Vec<_>>(), ["can_pop_frame"]);
        assert_eq!(a.union(&b).names().collect::<Vec<_>>(), ["can_tag_objects", "can_pop_frame", "can_suspend"]);
        assert_eq!(a.difference(&b).names().collect::<Vec<_>>(), ["can_suspend"]);
        assert_eq!(format!("{a:?}"), r#"{"can_pop_frame", "can_suspend"}"#);
        // Out-of-range indices neither panic nor write.
        a.set(500, true);
        assert!(!a.get(500));
    }

    #[test]
    fn version_numbers_follow_the_spec_layout() {
        assert_eq!(JVMTI_VERSION_1_0, 0x3001_0000);
        assert_eq!(JVMTI_VERSION_1_2, 0x3001_0200);
        assert_eq!(JVMTI_VERSION_11, 0x300B_0000);
        assert_eq!(JVMTI_VERSION_17, 0x3011_0000);
        assert_eq!((JVMTI_VERSION_17 & JVMTI_VERSION_MASK_MAJOR) >> JVMTI_VERSION_SHIFT_MAJOR, 17);
        assert_eq!(JVMTI_VERSION_17 & JVMTI_VERSION_MASK_INTERFACE_TYPE, JVMTI_VERSION_INTERFACE_JVMTI);
    }

    #[test]
    fn heap_callbacks_have_sixteen_slots() {
        assert_eq!(size_of::<jvmtiHeapCallbacks>(), 16 * PTR);
        assert_eq!(offset_of!(jvmtiHeapCallbacks, string_primitive_value_callback), 4 * PTR);
        assert_eq!(offset_of!(jvmtiHeapCallbacks, reserved15), 15 * PTR);
    }

    /// Sizes and offsets of the structures on LP64 targets (Linux and macOS on x86-64 and AArch64),
    /// as the C layout rules give them for the spec's declarations.
    #[cfg(target_pointer_width = "64")]
    #[test]
    fn struct_layouts_on_lp64() {
        assert_eq!(size_of::<jvmtiThreadInfo>(), 32);
        assert_eq!(offset_of!(jvmtiThreadInfo, is_daemon), 12);
        assert_eq!(offset_of!(jvmtiThreadInfo, thread_group), 16);
        assert_eq!(offset_of!(jvmtiThreadInfo, context_class_loader), 24);
        assert_eq!(size_of::<jvmtiThreadGroupInfo>(), 24);
        assert_eq!(offset_of!(jvmtiThreadGroupInfo, max_priority), 16);
        assert_eq!(offset_of!(jvmtiThreadGroupInfo, is_daemon), 20);
        assert_eq!(size_of::<jvmtiMonitorStackDepthInfo>(), 16);
        assert_eq!(size_of::<jvmtiFrameInfo>(), 16);
        assert_eq!(size_of::<jvmtiStackInfo>(), 32);
        assert_eq!(offset_of!(jvmtiStackInfo, frame_buffer), 16);
        assert_eq!(offset_of!(jvmtiStackInfo, frame_count), 24);
        assert_eq!(size_of::<jvmtiHeapReferenceInfo>(), 64);
        assert_eq!(size_of::<jvmtiHeapReferenceInfoStackLocal>(), 48);
        assert_eq!(offset_of!(jvmtiHeapReferenceInfoStackLocal, slot), 40);
        assert_eq!(size_of::<jvmtiClassDefinition>(), 24);
        assert_eq!(size_of::<jvmtiMonitorUsage>(), 40);
        assert_eq!(offset_of!(jvmtiMonitorUsage, waiters), 16);
        assert_eq!(offset_of!(jvmtiMonitorUsage, notify_waiter_count), 24);
        assert_eq!(offset_of!(jvmtiMonitorUsage, notify_waiters), 32);
        assert_eq!(size_of::<jvmtiLineNumberEntry>(), 16);
        assert_eq!(size_of::<jvmtiLocalVariableEntry>(), 48);
        assert_eq!(offset_of!(jvmtiLocalVariableEntry, length), 8);
        assert_eq!(offset_of!(jvmtiLocalVariableEntry, name), 16);
        assert_eq!(offset_of!(jvmtiLocalVariableEntry, slot), 40);
        assert_eq!(size_of::<jvmtiParamInfo>(), 24);
        assert_eq!(size_of::<jvmtiExtensionFunctionInfo>(), 56);
        assert_eq!(size_of::<jvmtiExtensionEventInfo>(), 40);
        assert_eq!(size_of::<jvmtiTimerInfo>(), 32);
        assert_eq!(offset_of!(jvmtiTimerInfo, kind), 12);
        assert_eq!(size_of::<jvmtiAddrLocationMap>(), 16);
        assert_eq!(offset_of!(JvmtiInterface, GetVersionNumber), 696);
        assert_eq!(size_of::<JvmtiInterface>(), 1248);
    }
}
