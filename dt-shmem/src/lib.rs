//! `libdt_shmem.so`: the shared-memory transport of `jdwp-transports` behind the JDK's transport
//! library interface (`$JAVA_HOME/include/jdwpTransport.h`), so that the JDK's own agent can use it:
//!
//! ```text
//! LD_LIBRARY_PATH=target/release java -agentlib:jdwp=transport=dt_shmem,server=y,address=NAME ...
//! ```
//!
//! The JDK's agent loads `libdt_shmem.so` by name, calls [`jdwpTransport_OnLoad`], and drives one
//! connection at a time through the function table: `StartListening`/`Accept`/`StopListening`
//! (`server=y`) or `Attach` (`server=n`), then `ReadPacket` on one thread while others call
//! `WritePacket`, and `Close`. Packets handed to the agent are allocated with its callback.
//!
//! Nothing panics across the C boundary: every entry point runs inside `catch_unwind` and turns a
//! panic into `JDWPTRANSPORT_ERROR_INTERNAL`. Errors are remembered per thread for `GetLastError`.

mod state;

use std::ffi::{CStr, c_char, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, Ordering};

use jdwp_transports::spi::*;

/// The JDK's agent keeps a pointer to this (its `jdwpTransportEnv`), which points to the table.
struct EnvCell(Env);
// SAFETY: the pointer is to an immutable static table.
unsafe impl Sync for EnvCell {}

static TABLE: NativeInterface = NativeInterface {
    reserved1: std::ptr::null_mut(),
    get_capabilities: Some(get_capabilities),
    attach: Some(attach),
    start_listening: Some(start_listening),
    stop_listening: Some(stop_listening),
    accept: Some(accept),
    is_open: Some(is_open),
    close: Some(close),
    read_packet: Some(read_packet),
    write_packet: Some(write_packet),
    get_last_error: Some(get_last_error),
    set_transport_configuration: Some(set_transport_configuration),
};

static ENV: EnvCell = EnvCell(&TABLE);

static LOADED: AtomicBool = AtomicBool::new(false);

/// Runs an entry point's body, turning a panic into `ERROR_INTERNAL`.
fn guarded(f: impl FnOnce() -> TransportErrorCode) -> TransportErrorCode {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|_| {
        state::set_last_error("internal error in libdt_shmem (a panic was caught)".into());
        ERROR_INTERNAL
    })
}

/// The transport's entry point. Only one environment per process (as the JDK's own transports).
///
/// # Safety
/// Called by the JDK's agent with a valid callback and a writable `env`.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn jdwpTransport_OnLoad(
    _vm: *mut c_void,
    callback: *mut Callback,
    version: Jint,
    env: *mut *mut Env,
) -> Jint {
    catch_unwind(AssertUnwindSafe(|| {
        if version != JDWPTRANSPORT_VERSION_1_0 && version != JDWPTRANSPORT_VERSION_1_1 {
            return JNI_EVERSION;
        }
        if callback.is_null() || env.is_null() {
            return JNI_ERR;
        }
        // SAFETY: non-null, and the agent keeps its callback alive for the life of the transport.
        let cb = unsafe { &*callback };
        let (Some(alloc), Some(free)) = (cb.alloc, cb.free) else { return JNI_ERR };
        if LOADED.swap(true, Ordering::AcqRel) {
            return JNI_EEXIST;
        }
        state::set_allocator(alloc, free);
        // SAFETY: `env` is writable (checked non-null); the agent only reads through the pointer.
        unsafe { *env = (&ENV.0 as *const Env).cast_mut() };
        JNI_OK
    }))
    .unwrap_or(JNI_ERR)
}

unsafe extern "system" fn get_capabilities(_: *mut Env, caps: *mut Capabilities) -> TransportErrorCode {
    guarded(|| {
        if caps.is_null() {
            return state::fail(ERROR_ILLEGAL_ARGUMENT, "capabilities pointer is NULL");
        }
        // SAFETY: non-null, provided by the agent for us to fill.
        unsafe { (*caps).bits = CAN_TIMEOUT_ATTACH | CAN_TIMEOUT_ACCEPT | CAN_TIMEOUT_HANDSHAKE };
        ERROR_NONE
    })
}

/// A C string argument as `&str`; `None` for NULL or an empty string.
///
/// # Safety
/// `s` is NULL or a NUL-terminated string valid for the call.
unsafe fn opt_str<'a>(s: *const c_char) -> Result<Option<&'a str>, TransportErrorCode> {
    if s.is_null() {
        return Ok(None);
    }
    // SAFETY: guaranteed by the caller.
    let s = unsafe { CStr::from_ptr(s) };
    match s.to_str() {
        Ok("") => Ok(None),
        Ok(s) => Ok(Some(s)),
        Err(_) => Err(state::fail(ERROR_ILLEGAL_ARGUMENT, "the address is not UTF-8")),
    }
}

unsafe extern "system" fn attach(
    _: *mut Env,
    address: *const c_char,
    attach_timeout: Jlong,
    handshake_timeout: Jlong,
) -> TransportErrorCode {
    guarded(|| {
        // SAFETY: the agent passes NULL or a C string.
        let address = match unsafe { opt_str(address) } {
            Ok(Some(a)) => a,
            Ok(None) => return state::fail(ERROR_ILLEGAL_ARGUMENT, "no address to attach to"),
            Err(code) => return code,
        };
        state::attach(address, attach_timeout, handshake_timeout)
    })
}

unsafe extern "system" fn start_listening(
    _: *mut Env,
    address: *const c_char,
    actual: *mut *mut c_char,
) -> TransportErrorCode {
    guarded(|| {
        if actual.is_null() {
            return state::fail(ERROR_ILLEGAL_ARGUMENT, "actual_address pointer is NULL");
        }
        // SAFETY: the agent passes NULL or a C string.
        let address = match unsafe { opt_str(address) } {
            Ok(a) => a,
            Err(code) => return code,
        };
        match state::start_listening(address) {
            Ok(name) => match state::alloc_c_string(&name) {
                // SAFETY: `actual` is non-null; the agent frees the string with its callback.
                Some(s) => {
                    unsafe { *actual = s };
                    ERROR_NONE
                }
                None => state::fail(ERROR_OUT_OF_MEMORY, "cannot allocate the address"),
            },
            Err(code) => code,
        }
    })
}

unsafe extern "system" fn stop_listening(_: *mut Env) -> TransportErrorCode {
    guarded(state::stop_listening)
}

unsafe extern "system" fn accept(_: *mut Env, accept_timeout: Jlong, handshake_timeout: Jlong) -> TransportErrorCode {
    guarded(|| state::accept(accept_timeout, handshake_timeout))
}

unsafe extern "system" fn is_open(_: *mut Env) -> Jboolean {
    catch_unwind(state::is_open).map_or(0, u8::from)
}

unsafe extern "system" fn close(_: *mut Env) -> TransportErrorCode {
    guarded(state::close)
}

unsafe extern "system" fn read_packet(_: *mut Env, packet: *mut Packet) -> TransportErrorCode {
    guarded(|| {
        if packet.is_null() {
            return state::fail(ERROR_ILLEGAL_ARGUMENT, "packet pointer is NULL");
        }
        // SAFETY: non-null, provided by the agent for us to fill.
        state::read_packet(unsafe { &mut *packet })
    })
}

unsafe extern "system" fn write_packet(_: *mut Env, packet: *const Packet) -> TransportErrorCode {
    guarded(|| {
        if packet.is_null() {
            return state::fail(ERROR_ILLEGAL_ARGUMENT, "packet pointer is NULL");
        }
        // SAFETY: non-null, a packet of the agent's, read-only for the call.
        unsafe { state::write_packet(&*packet) }
    })
}

unsafe extern "system" fn get_last_error(_: *mut Env, message: *mut *mut c_char) -> TransportErrorCode {
    guarded(|| {
        if message.is_null() {
            return ERROR_ILLEGAL_ARGUMENT;
        }
        let Some(text) = state::last_error() else { return ERROR_MSG_NOT_AVAILABLE };
        match state::alloc_c_string(&text) {
            Some(s) => {
                // SAFETY: non-null; the agent frees it with its callback.
                unsafe { *message = s };
                ERROR_NONE
            }
            None => ERROR_OUT_OF_MEMORY,
        }
    })
}

unsafe extern "system" fn set_transport_configuration(_: *mut Env, config: *mut Configuration) -> TransportErrorCode {
    guarded(|| {
        if config.is_null() {
            return state::fail(ERROR_ILLEGAL_ARGUMENT, "configuration pointer is NULL");
        }
        // SAFETY: non-null configuration of the agent's.
        if unsafe { (*config).allowed_peers }.is_null() {
            ERROR_NONE
        } else {
            // Peers of shared memory are processes of this user on this machine, not addresses.
            state::fail(ERROR_ILLEGAL_ARGUMENT, "allow= is not supported by dt_shmem")
        }
    })
}
