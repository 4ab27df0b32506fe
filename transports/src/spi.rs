//! The JDK's transport library interface, `$JAVA_HOME/include/jdwpTransport.h`
//! (`JDWPTRANSPORT_VERSION_1_0` and `1_1`), declared once for both of its sides in this workspace:
//! `libdt_shmem.so` implements it, and the agent calls libraries that implement it
//! (`transport=NAME` loads `libNAME.so`).
//!
//! The types are layout-compatible `#[repr(C)]` mirrors of the header's, declared by hand. Function
//! table entries are `Option`s because a table may leave some NULL (a 1.0 library has no
//! `SetTransportConfiguration`). Besides the types, this module converts between the interface's
//! `jdwpPacket` and [`crate::Packet`], so that packet headers are still read and written only in
//! this crate.

use std::ffi::{c_char, c_void};
use std::time::Duration;

use jdwp_protocol::ErrorCode;

use crate::framing::FrameError;
use crate::packet::{HEADER_LEN, PacketKind};

pub type Jint = i32;
pub type Jlong = i64;
pub type Jboolean = u8;

pub const JNI_OK: Jint = 0;
pub const JNI_ERR: Jint = -1;
pub const JNI_ENOMEM: Jint = -4;
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

/// `JDWPTransportCapabilities`: sixteen one-bit fields in an `unsigned int`, the first declared
/// in the lowest bit (see the `CAN_*` masks).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct Capabilities {
    pub bits: u32,
}

/// `can_timeout_attach`.
pub const CAN_TIMEOUT_ATTACH: u32 = 1 << 0;
/// `can_timeout_accept`.
pub const CAN_TIMEOUT_ACCEPT: u32 = 1 << 1;
/// `can_timeout_handshake`.
pub const CAN_TIMEOUT_HANDSHAKE: u32 = 1 << 2;

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

/// `jdwpPacket`: the union of both. `len` counts the 11 header bytes; `len == 0` from
/// `ReadPacket` means the peer closed the connection between packets.
#[repr(C)]
#[derive(Clone, Copy)]
pub union Packet {
    pub cmd: CmdPacket,
    pub reply: ReplyPacket,
}

impl Packet {
    /// An all-zero packet for `ReadPacket` to fill.
    pub fn empty() -> Packet {
        Packet { cmd: CmdPacket { len: 0, id: 0, flags: 0, cmd_set: 0, cmd: 0, data: std::ptr::null_mut() } }
    }

    /// The length field (header included), whichever member is active.
    pub fn length(&self) -> Jint {
        // SAFETY: both members start with `len`, `id`, `flags` at the same offsets.
        unsafe { self.cmd.len }
    }

    /// Whether this is the end-of-stream marker `ReadPacket` returns (length 0).
    pub fn is_end_of_stream(&self) -> bool {
        self.length() == 0
    }

    /// The data pointer, whichever member is active.
    pub fn data(&self) -> *mut i8 {
        // SAFETY: a packet is always written through one member; both have `data` last, and the
        // member is chosen by `flags`, which both share.
        unsafe { if self.cmd.flags & FLAGS_REPLY != 0 { self.reply.data } else { self.cmd.data } }
    }
}

/// The header of `packet` in the interface's form, with `data` as its data pointer (null for an
/// empty body). Fails only for a body too long for the 32-bit length field.
pub fn packet_to_spi(packet: &crate::Packet, data: *mut i8) -> Result<Packet, FrameError> {
    let len =
        Jint::try_from(packet.encoded_len()).map_err(|_| FrameError::BodyTooLarge { body_len: packet.body.len() })?;
    let id = packet.id as Jint;
    let data = if packet.body.is_empty() { std::ptr::null_mut() } else { data };
    Ok(match packet.kind {
        PacketKind::Command { set, cmd } => {
            Packet { cmd: CmdPacket { len, id, flags: 0, cmd_set: set as i8, cmd: cmd as i8, data } }
        }
        PacketKind::Reply { error } => {
            Packet { reply: ReplyPacket { len, id, flags: FLAGS_REPLY, error_code: error.0 as i16, data } }
        }
    })
}

/// The packet `packet` describes, its data copied. With `strict_flags`, a command whose flags
/// byte has undefined bits is refused as the strict frame decoder refuses it.
///
/// # Safety
/// When `len > 11`, the packet's data pointer is null or valid for `len - 11` bytes.
pub unsafe fn packet_from_spi(packet: &Packet, strict_flags: bool) -> Result<crate::Packet, FrameError> {
    // SAFETY: both members start with `len`, `id`, `flags` at the same offsets.
    let head = unsafe { packet.cmd };
    let length = head.len as u32;
    let Some(body_len) = usize::try_from(head.len).ok().and_then(|l| l.checked_sub(HEADER_LEN)) else {
        return Err(FrameError::LengthTooSmall { length });
    };
    let data = packet.data();
    if body_len > 0 && data.is_null() {
        return Err(FrameError::LengthMismatch { length, frame_len: HEADER_LEN });
    }
    let flags = head.flags as u8;
    if strict_flags && flags != 0 && flags & FLAGS_REPLY as u8 == 0 {
        return Err(FrameError::UndefinedFlags { flags });
    }
    let body = if body_len == 0 {
        Vec::new()
    } else {
        // SAFETY: non-null and valid for `body_len` bytes, guaranteed by the caller.
        unsafe { std::slice::from_raw_parts(data.cast::<u8>(), body_len) }.to_vec()
    };
    let id = head.id as u32;
    Ok(if flags & FLAGS_REPLY as u8 != 0 {
        // SAFETY: a reply, so the reply member is the active one.
        let reply = unsafe { packet.reply };
        crate::Packet::reply(id, ErrorCode(reply.error_code as u16), body)
    } else {
        crate::Packet::command(id, head.cmd_set as u8, head.cmd as u8, body)
    })
}

/// A timeout argument (milliseconds; 0 or less: none) as a duration.
pub fn timeout_from_millis(ms: Jlong) -> Option<Duration> {
    u64::try_from(ms).ok().filter(|&ms| ms > 0).map(Duration::from_millis)
}

/// A duration as a timeout argument (none: 0).
pub fn timeout_to_millis(timeout: Option<Duration>) -> Jlong {
    timeout.map_or(0, |t| Jlong::try_from(t.as_millis()).unwrap_or(Jlong::MAX).max(1))
}

pub type AllocFn = unsafe extern "C" fn(Jint) -> *mut c_void;
pub type FreeFn = unsafe extern "C" fn(*mut c_void);

/// `jdwpTransportCallback`: all memory handed from one side to the other comes from `alloc` and
/// is released with `free`.
#[repr(C)]
pub struct Callback {
    pub alloc: Option<AllocFn>,
    pub free: Option<FreeFn>,
}

/// `jdwpTransportConfiguration` (1.1).
#[repr(C)]
pub struct Configuration {
    pub allowed_peers: *const c_char,
}

/// `jdwpTransportEnv` in C: a pointer to the function table.
pub type Env = *const NativeInterface;

/// `jdwpTransport_OnLoad(JavaVM *vm, jdwpTransportCallback *callback, jint version,
/// jdwpTransportEnv **env)`, the library's one exported symbol.
pub type OnLoadFn = unsafe extern "system" fn(*mut c_void, *mut Callback, Jint, *mut *mut Env) -> Jint;

/// The name of the [`OnLoadFn`] symbol.
pub const ON_LOAD_SYMBOL: &std::ffi::CStr = c"jdwpTransport_OnLoad";

/// `struct jdwpTransportNativeInterface_`.
#[repr(C)]
pub struct NativeInterface {
    pub reserved1: *mut c_void,
    pub get_capabilities: Option<unsafe extern "system" fn(*mut Env, *mut Capabilities) -> TransportErrorCode>,
    pub attach: Option<unsafe extern "system" fn(*mut Env, *const c_char, Jlong, Jlong) -> TransportErrorCode>,
    pub start_listening:
        Option<unsafe extern "system" fn(*mut Env, *const c_char, *mut *mut c_char) -> TransportErrorCode>,
    pub stop_listening: Option<unsafe extern "system" fn(*mut Env) -> TransportErrorCode>,
    pub accept: Option<unsafe extern "system" fn(*mut Env, Jlong, Jlong) -> TransportErrorCode>,
    pub is_open: Option<unsafe extern "system" fn(*mut Env) -> Jboolean>,
    pub close: Option<unsafe extern "system" fn(*mut Env) -> TransportErrorCode>,
    pub read_packet: Option<unsafe extern "system" fn(*mut Env, *mut Packet) -> TransportErrorCode>,
    pub write_packet: Option<unsafe extern "system" fn(*mut Env, *const Packet) -> TransportErrorCode>,
    pub get_last_error: Option<unsafe extern "system" fn(*mut Env, *mut *mut c_char) -> TransportErrorCode>,
    pub set_transport_configuration:
        Option<unsafe extern "system" fn(*mut Env, *mut Configuration) -> TransportErrorCode>,
}

// SAFETY: a table is immutable once a library hands it out; `reserved1` is not used.
unsafe impl Sync for NativeInterface {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packets_round_trip_through_the_interface_form() {
        let command = crate::Packet::command(7, 1, 2, vec![1, 2, 3]);
        let mut body = command.body.clone();
        let raw = packet_to_spi(&command, body.as_mut_ptr().cast()).unwrap();
        assert_eq!(raw.length(), 14);
        // SAFETY: the data pointer is `body`, three bytes long.
        assert_eq!(unsafe { packet_from_spi(&raw, true) }.unwrap(), command);

        let reply = crate::Packet::reply(9, ErrorCode(41), Vec::new());
        let raw = packet_to_spi(&reply, std::ptr::null_mut()).unwrap();
        assert!(raw.data().is_null());
        // SAFETY: no body, no data.
        assert_eq!(unsafe { packet_from_spi(&raw, true) }.unwrap(), reply);
    }

    #[test]
    fn bad_interface_packets_are_frame_errors() {
        let mut raw = Packet::empty();
        assert!(raw.is_end_of_stream());
        // SAFETY: no data is read for these.
        unsafe {
            raw.cmd.len = 5;
            assert!(matches!(packet_from_spi(&raw, false), Err(FrameError::LengthTooSmall { length: 5 })));
            raw.cmd.len = 20;
            assert!(matches!(packet_from_spi(&raw, false), Err(FrameError::LengthMismatch { .. })));
            raw.cmd.len = 11;
            raw.cmd.flags = 0x21;
            assert!(matches!(packet_from_spi(&raw, true), Err(FrameError::UndefinedFlags { flags: 0x21 })));
            assert!(packet_from_spi(&raw, false).is_ok());
        }
    }

    #[test]
    fn timeouts() {
        assert_eq!(timeout_from_millis(0), None);
        assert_eq!(timeout_from_millis(-1), None);
        assert_eq!(timeout_from_millis(1500), Some(Duration::from_millis(1500)));
        assert_eq!(timeout_to_millis(None), 0);
        assert_eq!(timeout_to_millis(Some(Duration::from_micros(10))), 1);
        assert_eq!(timeout_to_millis(Some(Duration::from_secs(2))), 2000);
    }
}
