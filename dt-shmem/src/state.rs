//! The transport's state behind the C functions: the agent's allocator, the listener, the one
//! connection, and the last error of each thread.
//!
//! Locking: `ReadPacket` blocks on its own reader lock (not the state lock), so `WritePacket` from
//! other threads and `Close` (which shuts the connection down and so wakes a blocked read) are
//! never held up by it. `Accept` likewise holds only its own handle on the listener, and
//! `StopListening` closes the listener, which wakes a blocked `Accept`.

use std::cell::RefCell;
use std::ffi::c_char;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};

use jdwp_transports::TransportError;
use jdwp_transports::shmem::{self, ShmemListener, ShmemReader, ShmemWriter};
use jdwp_transports::spi::*;

static ALLOCATOR: OnceLock<(AllocFn, FreeFn)> = OnceLock::new();
static LISTENER: Mutex<Option<Arc<ShmemListener>>> = Mutex::new(None);
static CONNECTION: Mutex<Option<Connection>> = Mutex::new(None);

struct Connection {
    reader: Arc<Mutex<ShmemReader>>,
    writer: ShmemWriter,
}

thread_local! {
    static LAST_ERROR: RefCell<Option<String>> = const { RefCell::new(None) };
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

pub fn set_allocator(alloc: AllocFn, free: FreeFn) {
    let _ = ALLOCATOR.set((alloc, free));
}

pub fn set_last_error(message: String) {
    tracing::debug!(%message, "dt_shmem error");
    LAST_ERROR.with(|e| *e.borrow_mut() = Some(message));
}

pub fn last_error() -> Option<String> {
    LAST_ERROR.with(|e| e.borrow().clone())
}

/// Records `message` for `GetLastError` and returns `code`.
pub fn fail(code: TransportErrorCode, message: impl Into<String>) -> TransportErrorCode {
    set_last_error(message.into());
    code
}

fn transport_failure(e: &TransportError) -> TransportErrorCode {
    let code = if e.is_timeout() {
        ERROR_TIMEOUT
    } else if matches!(e, TransportError::InvalidName { .. }) {
        ERROR_ILLEGAL_ARGUMENT
    } else {
        ERROR_IO_ERROR
    };
    fail(code, e.to_string())
}

/// Allocates `len` bytes with the agent's allocator (which it frees with its own `free`).
fn alloc(len: usize) -> Option<*mut u8> {
    let (alloc, _) = ALLOCATOR.get()?;
    let len = Jint::try_from(len).ok()?;
    // SAFETY: the agent's allocator, called with a positive size.
    let p = unsafe { alloc(len) };
    (!p.is_null()).then_some(p.cast())
}

/// `s` as a NUL-terminated string in memory from the agent's allocator.
pub fn alloc_c_string(s: &str) -> Option<*mut c_char> {
    let p = alloc(s.len() + 1)?;
    // SAFETY: `p` holds `s.len() + 1` bytes.
    unsafe {
        std::ptr::copy_nonoverlapping(s.as_ptr(), p, s.len());
        *p.add(s.len()) = 0;
    }
    Some(p.cast())
}

fn install(conn: shmem::ShmemConnection) -> TransportErrorCode {
    let mut slot = lock(&CONNECTION);
    if slot.is_some() {
        conn.shutdown();
        return fail(ERROR_ILLEGAL_STATE, "already connected");
    }
    let (reader, writer) = conn.into_split();
    *slot = Some(Connection { reader: Arc::new(Mutex::new(reader)), writer });
    ERROR_NONE
}

pub fn attach(address: &str, attach_timeout: Jlong, handshake_timeout: Jlong) -> TransportErrorCode {
    if lock(&CONNECTION).is_some() {
        return fail(ERROR_ILLEGAL_STATE, "already connected");
    }
    // One deadline for both: attaching and the handshake are one call here.
    let limit = match (timeout_from_millis(attach_timeout), timeout_from_millis(handshake_timeout)) {
        (Some(a), Some(h)) => Some(a + h),
        (a, h) => a.or(h),
    };
    match shmem::attach_as_vm(address, limit) {
        Ok(conn) => install(conn),
        Err(e) => transport_failure(&e),
    }
}

pub fn start_listening(address: Option<&str>) -> Result<String, TransportErrorCode> {
    let mut slot = lock(&LISTENER);
    if slot.is_some() {
        return Err(fail(ERROR_ILLEGAL_STATE, "already listening"));
    }
    let name = address.map_or_else(shmem::generated_name, str::to_owned);
    let listener = shmem::listen(&name).map_err(|e| transport_failure(&e))?;
    let name = listener.name().to_owned();
    *slot = Some(Arc::new(listener));
    Ok(name)
}

pub fn stop_listening() -> TransportErrorCode {
    match lock(&LISTENER).take() {
        Some(listener) => {
            // Wakes an Accept blocked on it; the name is gone at once.
            listener.close();
            ERROR_NONE
        }
        None => fail(ERROR_ILLEGAL_STATE, "not listening"),
    }
}

pub fn accept(accept_timeout: Jlong, handshake_timeout: Jlong) -> TransportErrorCode {
    let Some(listener) = lock(&LISTENER).clone() else {
        return fail(ERROR_ILLEGAL_STATE, "not listening");
    };
    if lock(&CONNECTION).is_some() {
        return fail(ERROR_ILLEGAL_STATE, "already connected");
    }
    // The listener is shared (Arc) with StopListening; the handshake limit is set per call.
    let conn = listener.accept_with_limits(timeout_from_millis(accept_timeout), timeout_from_millis(handshake_timeout));
    match conn {
        Ok(conn) => install(conn),
        Err(e) => transport_failure(&e),
    }
}

pub fn is_open() -> bool {
    lock(&CONNECTION).is_some()
}

pub fn close() -> TransportErrorCode {
    if let Some(conn) = lock(&CONNECTION).take() {
        // Wakes a ReadPacket blocked on this connection: it sees the end of the stream.
        let _ = conn.writer.shutdown();
    }
    ERROR_NONE
}

pub fn read_packet(out: &mut Packet) -> TransportErrorCode {
    let Some(reader) = lock(&CONNECTION).as_ref().map(|c| Arc::clone(&c.reader)) else {
        return fail(ERROR_ILLEGAL_STATE, "not connected");
    };
    let packet = lock(&reader).read_packet();
    match packet {
        // End of stream: as the JDK's transports, a packet of length 0.
        Ok(None) => {
            out.cmd = CmdPacket { len: 0, id: 0, flags: 0, cmd_set: 0, cmd: 0, data: std::ptr::null_mut() };
            ERROR_NONE
        }
        Ok(Some(p)) => {
            let data = if p.body.is_empty() {
                std::ptr::null_mut()
            } else {
                let Some(data) = alloc(p.body.len()) else {
                    return fail(ERROR_OUT_OF_MEMORY, "cannot allocate the packet data");
                };
                // SAFETY: `data` holds `body.len()` bytes.
                unsafe { std::ptr::copy_nonoverlapping(p.body.as_ptr(), data, p.body.len()) };
                data.cast::<i8>()
            };
            match packet_to_spi(&p, data) {
                Ok(raw) => {
                    *out = raw;
                    ERROR_NONE
                }
                // Unreachable: the framing layer bounds packets to 64 MiB.
                Err(e) => fail(ERROR_INTERNAL, e.to_string()),
            }
        }
        Err(e) => transport_failure(&e),
    }
}

/// # Safety
/// `packet` is the agent's, with `data` valid for `len - 11` bytes when `len > 11`.
pub unsafe fn write_packet(packet: &Packet) -> TransportErrorCode {
    let Some(writer) = lock(&CONNECTION).as_ref().map(|c| c.writer.clone()) else {
        return fail(ERROR_ILLEGAL_STATE, "not connected");
    };
    // SAFETY: guaranteed by the caller.
    let p = match unsafe { packet_from_spi(packet, false) } {
        Ok(p) => p,
        Err(e) => return fail(ERROR_ILLEGAL_ARGUMENT, e.to_string()),
    };
    match writer.write_packet(&p) {
        Ok(()) => ERROR_NONE,
        Err(e) => transport_failure(&e),
    }
}
