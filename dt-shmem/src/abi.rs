//! The C types of `$JAVA_HOME/include/jdwpTransport.h` (JDWPTRANSPORT_VERSION_1_0 and 1_1),
//! declared by hand: layout-compatible `#[repr(C)]` mirrors, nothing else.

use std::ffi::{c_char, c_void};

pub type Jint = i32;
pub type Jlong = i64;
pub type Jboolean = u8;

pub const JNI_OK: Jint = 0;
pub const JNI_ERR: Jint = -1;
pub const JNI_EVERSION: Jint = -3;
pub const JNI_EEXIST: Jint = -5;

pub const JDWPTRANSPORT_VERSION_1_0: Jint = 0x0001_0000;
pub const JDWPTRANSPORT_VERSION_1_1: Jint = 0x0001_0001;

/// `jdwpTransportError`.
pub type TransportErrorCode = i32;
pub const ERROR_NONE: TransportErrorCode = 0;
pub const ERROR_ILLEGAL_ARGUMENT: TransportErrorCode = 103;
pub const ERROR_OUT_OF_MEMORY: TransportErrorCode = 110;
pub const ERROR_INTERNAL: TransportErrorCode = 113;
pub const ERROR_ILLEGAL_STATE: TransportErrorCode = 201;
pub const ERROR_IO_ERROR: TransportErrorCode = 202;
pub const ERROR_TIMEOUT: TransportErrorCode = 203;
pub const ERROR_MSG_NOT_AVAILABLE: TransportErrorCode = 204;

/// `JDWPTransportCapabilities`: sixteen one-bit fields in an `unsigned int`; bit 0
/// `can_timeout_attach`, bit 1 `can_timeout_accept`, bit 2 `can_timeout_handshake`.
#[repr(C)]
pub struct Capabilities {
    pub bits: u32,
}

pub const FLAGS_REPLY: i8 = 0x80u8 as i8;

/// `jdwpCmdPacket`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct CmdPacket {
    pub len: Jint,
    pub id: Jint,
    pub flags: i8,
    pub cmd_set: i8,
    pub cmd: i8,
    pub data: *mut i8,
}

/// `jdwpReplyPacket`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct ReplyPacket {
    pub len: Jint,
    pub id: Jint,
    pub flags: i8,
    pub error_code: i16,
    pub data: *mut i8,
}

/// `jdwpPacket`: the union of both.
#[repr(C)]
pub union Packet {
    pub cmd: CmdPacket,
    pub reply: ReplyPacket,
}

/// `jdwpTransportCallback`: all memory handed to the agent comes from `alloc`.
#[repr(C)]
pub struct Callback {
    pub alloc: Option<unsafe extern "C" fn(Jint) -> *mut c_void>,
    pub free: Option<unsafe extern "C" fn(*mut c_void)>,
}

/// `jdwpTransportConfiguration` (1.1).
#[repr(C)]
pub struct Configuration {
    pub allowed_peers: *const c_char,
}

/// `jdwpTransportEnv` in C: a pointer to the function table.
pub type Env = *const NativeInterface;

/// `struct jdwpTransportNativeInterface_`.
#[repr(C)]
pub struct NativeInterface {
    pub reserved1: *mut c_void,
    pub get_capabilities: unsafe extern "system" fn(*mut Env, *mut Capabilities) -> TransportErrorCode,
    pub attach: unsafe extern "system" fn(*mut Env, *const c_char, Jlong, Jlong) -> TransportErrorCode,
    pub start_listening: unsafe extern "system" fn(*mut Env, *const c_char, *mut *mut c_char) -> TransportErrorCode,
    pub stop_listening: unsafe extern "system" fn(*mut Env) -> TransportErrorCode,
    pub accept: unsafe extern "system" fn(*mut Env, Jlong, Jlong) -> TransportErrorCode,
    pub is_open: unsafe extern "system" fn(*mut Env) -> Jboolean,
    pub close: unsafe extern "system" fn(*mut Env) -> TransportErrorCode,
    pub read_packet: unsafe extern "system" fn(*mut Env, *mut Packet) -> TransportErrorCode,
    pub write_packet: unsafe extern "system" fn(*mut Env, *const Packet) -> TransportErrorCode,
    pub get_last_error: unsafe extern "system" fn(*mut Env, *mut *mut c_char) -> TransportErrorCode,
    pub set_transport_configuration: unsafe extern "system" fn(*mut Env, *mut Configuration) -> TransportErrorCode,
}

// SAFETY: the table is immutable after construction; `reserved1` is always null.
unsafe impl Sync for NativeInterface {}
