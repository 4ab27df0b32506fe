//! Transport libraries: `transport=NAME`, for a NAME that is not built in, loads `libNAME.so` and
//! drives it through the JDK's transport interface ([`jdwp_transports::spi`]), as the JDK's agent
//! does. The library is looked for first in the JDK's own library directories (the entries of
//! `sun.boot.library.path`), then by its plain name through the dynamic loader (so
//! `LD_LIBRARY_PATH` works), and asked for interface version 1.1, then 1.0.
//!
//! One library environment per process, loaded once (the JDK's libraries refuse a second one):
//! [`open`] keeps it for the listener, connection and halves that use it. `ReadPacket` runs on the
//! session thread while other threads write; writes are serialized here, as the JDK's agent
//! serializes them, since a library need not make whole-packet writes atomic.

use std::ffi::{CStr, CString, c_char, c_void};
use std::fmt;
use std::panic::catch_unwind;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;

use jdwp_transports::spi::{self, Env, Jint, NativeInterface, TransportErrorCode};
use jdwp_transports::{Packet, TransportError};

/// Why a library could not be loaded or set up, in the JDK's agent's words (without `ERROR: `),
/// and which of the JDK's two failures it is.
#[derive(Debug, PartialEq, Eq)]
pub struct InitError {
    pub message: String,
    /// `TRANSPORT_LOAD` (the library or its entry point is missing) rather than `TRANSPORT_INIT`.
    pub load: bool,
}

impl InitError {
    fn load(message: impl Into<String>) -> InitError {
        InitError { message: message.into(), load: true }
    }

    fn init(message: impl Into<String>) -> InitError {
        InitError { message: message.into(), load: false }
    }

    /// The lines the JDK's agent prints before it takes the VM down.
    pub fn startup_message(&self, transport: &str) -> String {
        let (jdwp, agent) = if self.load {
            ("TRANSPORT_LOAD(509)", "AGENT_ERROR_TRANSPORT_LOAD(196)")
        } else {
            ("TRANSPORT_INIT(510)", "AGENT_ERROR_TRANSPORT_INIT(197)")
        };
        format!(
            "ERROR: {}\nERROR: JDWP Transport {transport} failed to initialize, {jdwp}\n\
             JDWP exit error {agent}: No transports initialized",
            self.message
        )
    }
}

impl From<TransportError> for InitError {
    /// A library call that failed while debugging was starting: `transport error N: text`.
    fn from(e: TransportError) -> InitError {
        InitError::init(e.to_string())
    }
}

/// A loaded transport library's environment.
pub struct Library {
    env: *mut Env,
    table: &'static NativeInterface,
    version: Jint,
    write: Mutex<()>,
}

// SAFETY: the interface is made to be called from the agent's threads (the JDK's agent reads on
// one thread while others write); writes are serialized by `write`.
unsafe impl Send for Library {}
// SAFETY: as above.
unsafe impl Sync for Library {}

impl fmt::Debug for Library {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Library")
            .field("env", &self.env)
            .field("version", &format_args!("{:#x}", self.version))
            .finish()
    }
}

// Static: the transport library is loaded once per process (its C callbacks have no context).
static LOADED: OnceLock<Arc<Library>> = OnceLock::new();

/// The library [`open`] loaded, if any.
pub fn loaded() -> Result<Arc<Library>, TransportError> {
    LOADED.get().cloned().ok_or_else(|| TransportError::Library {
        code: spi::ERROR_ILLEGAL_STATE,
        message: "no transport library is loaded".into(),
    })
}

/// Loads `lib<name>.so` (see the module docs for where it is looked for) and initializes it with
/// `vm`. `allow`: with `Some`, the agent listens, and the library is configured with the `allow`
/// option as the JDK's agent configures it (1.1 libraries always, with no peers when there is no
/// option; a 1.0 library cannot take one).
///
/// # Safety
/// `vm` is this process's `JavaVM*`, and the calling thread is attached to it (the library may
/// use JNI from its `jdwpTransport_OnLoad`).
pub unsafe fn open(
    name: &str,
    boot_library_path: Option<&str>,
    vm: *mut c_void,
    allow: Option<Option<&str>>,
) -> Result<Arc<Library>, InitError> {
    if let Some(library) = LOADED.get() {
        return Ok(Arc::clone(library));
    }
    let boot_library_path =
        boot_library_path.ok_or_else(|| InitError::load("Java property sun.boot.library.path is not set"))?;
    let handle = find_in(boot_library_path, name)
        .and_then(|path| dlopen(path.as_os_str().as_encoded_bytes()))
        .or_else(|| dlopen(format!("lib{name}.so").as_bytes()))
        .ok_or_else(|| InitError::load(format!("transport library not found: {name}")))?;
    // SAFETY: `handle` is a live dlopen handle (never closed) and the symbol name a C string.
    let symbol = unsafe { libc::dlsym(handle, spi::ON_LOAD_SYMBOL.as_ptr()) };
    if symbol.is_null() {
        return Err(InitError::load(format!("transport library missing onLoad entry: {name}")));
    }
    // SAFETY: the interface defines the symbol as `jdwpTransport_OnLoad`, of this type.
    let on_load: spi::OnLoadFn = unsafe { std::mem::transmute::<*mut c_void, spi::OnLoadFn>(symbol) };

    let mut env: *mut Env = std::ptr::null_mut();
    let mut rc = spi::JNI_EVERSION;
    let mut version = spi::JDWPTRANSPORT_VERSION_1_1;
    for v in [spi::JDWPTRANSPORT_VERSION_1_1, spi::JDWPTRANSPORT_VERSION_1_0] {
        version = v;
        // SAFETY: the callback is a static the library may keep; `env` is ours to be written.
        rc = unsafe { on_load(vm, (&raw const CALLBACK).cast_mut(), v, &mut env) };
        if rc != spi::JNI_EVERSION {
            break;
        }
    }
    match rc {
        spi::JNI_OK => {}
        spi::JNI_ENOMEM => return Err(InitError::init("insufficient memory to complete initialization")),
        spi::JNI_EVERSION => {
            return Err(InitError::init("transport doesn't recognize all supported versions: { 1_1, 1_0 }"));
        }
        spi::JNI_EEXIST => return Err(InitError::init("transport doesn't support multiple environments")),
        other => return Err(InitError::init(format!("unrecognized error {other} from transport"))),
    }
    // SAFETY: on JNI_OK the library wrote a valid environment, a pointer to its function table,
    // which lives as long as the library, which is never unloaded.
    let table = match unsafe { env.as_ref().and_then(|e| e.as_ref()) } {
        Some(table) => table,
        None => return Err(InitError::init(format!("transport {name} returned no environment"))),
    };
    let library = Library { env, table, version, write: Mutex::new(()) };
    tracing::debug!(name, ?library, capabilities = ?library.capabilities(), "transport library loaded");
    if let Some(allow) = allow {
        library.configure(allow)?;
    }
    Ok(Arc::clone(LOADED.get_or_init(|| Arc::new(library))))
}

/// The first `lib<name>.so` in the directories of `path` (separated by `:`), as the JDK's agent
/// looks for it there.
fn find_in(path: &str, name: &str) -> Option<std::path::PathBuf> {
    path.split(':')
        .filter(|dir| !dir.is_empty())
        .map(|dir| Path::new(dir).join(format!("lib{name}.so")))
        .find(|p| p.exists())
}

fn dlopen(name: &[u8]) -> Option<*mut c_void> {
    let name = CString::new(name).ok()?;
    // SAFETY: a C string; the handle is kept for the life of the process.
    let handle = unsafe { libc::dlopen(name.as_ptr(), libc::RTLD_LAZY) };
    if handle.is_null() {
        // SAFETY: dlerror returns NULL or a C string valid until the next dl call on this thread.
        let why = unsafe { libc::dlerror() };
        if !why.is_null() {
            // SAFETY: as above.
            tracing::debug!(error = %unsafe { CStr::from_ptr(why) }.to_string_lossy(), "dlopen failed");
        }
        None
    } else {
        Some(handle)
    }
}

// Static: the allocation callbacks handed to the transport library (C ABI, no context).
/// Memory the library hands us (packet data, strings) and we hand it: plain `malloc`, so that
/// either side can free what the other allocated through the callback.
static CALLBACK: spi::Callback = spi::Callback { alloc: Some(alloc), free: Some(free) };

unsafe extern "C" fn alloc(size: Jint) -> *mut c_void {
    catch_unwind(|| match usize::try_from(size) {
        // SAFETY: malloc with a non-negative size; a null result is the callback's failure value.
        Ok(size) => unsafe { libc::malloc(size.max(1)) },
        Err(_) => std::ptr::null_mut(),
    })
    .unwrap_or(std::ptr::null_mut())
}

unsafe extern "C" fn free(mem: *mut c_void) {
    // SAFETY: `mem` came from `alloc` (malloc) or is null.
    let _ = catch_unwind(|| unsafe { libc::free(mem) });
}

/// A C string the library allocated through the callback, copied and released.
///
/// # Safety
/// `s` is null or a NUL-terminated string from `alloc`.
unsafe fn take_c_string(s: *mut c_char) -> Option<String> {
    if s.is_null() {
        return None;
    }
    // SAFETY: guaranteed by the caller.
    let text = unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned();
    // SAFETY: allocated through our callback.
    unsafe { free(s.cast()) };
    Some(text)
}

impl Library {
    fn missing(what: &str) -> TransportError {
        TransportError::Library { code: spi::ERROR_INTERNAL, message: format!("the transport has no {what} function") }
    }

    /// The error `code` with the library's `GetLastError` text for this thread ("UNKNOWN" when
    /// it has none, as the JDK's agent says).
    fn error(&self, code: TransportErrorCode) -> TransportError {
        let mut text: *mut c_char = std::ptr::null_mut();
        let message = match self.table.get_last_error {
            // SAFETY: our env; the library allocates the message through our callback.
            Some(f) => unsafe {
                let _ = f(self.env, &mut text);
                take_c_string(text)
            },
            None => None,
        };
        TransportError::Library { code, message: message.unwrap_or_else(|| "UNKNOWN".into()) }
    }

    fn check(&self, code: TransportErrorCode) -> Result<(), TransportError> {
        if code == spi::ERROR_NONE { Ok(()) } else { Err(self.error(code)) }
    }

    /// What the library says it can do (`can_timeout_*`), for the log.
    pub fn capabilities(&self) -> Option<u32> {
        let f = self.table.get_capabilities?;
        let mut caps = spi::Capabilities::default();
        // SAFETY: our env and a capabilities struct for the library to fill.
        (unsafe { f(self.env, &mut caps) } == spi::ERROR_NONE).then_some(caps.bits)
    }

    fn configure(&self, allow: Option<&str>) -> Result<(), InitError> {
        if self.version == spi::JDWPTRANSPORT_VERSION_1_0 {
            return match allow {
                Some(_) => Err(InitError::init("Allow parameter is specified but transport doesn't support it")),
                None => Ok(()),
            };
        }
        let peers = allow
            .map(CString::new)
            .transpose()
            .map_err(|_| InitError::init("the allow option contains a NUL character"))?;
        let mut config = spi::Configuration { allowed_peers: peers.as_ref().map_or(std::ptr::null(), |p| p.as_ptr()) };
        let f = self
            .table
            .set_transport_configuration
            .ok_or_else(|| InitError::init(Self::missing("SetTransportConfiguration").to_string()))?;
        // SAFETY: our env; the configuration and its string outlive the call.
        let code = unsafe { f(self.env, &mut config) };
        self.check(code).map_err(|e| InitError::init(e.to_string()))
    }

    /// `StartListening`: the address actually listened on (the library picks one for `None`).
    pub fn start_listening(&self, address: Option<&str>) -> Result<String, TransportError> {
        let f = self.table.start_listening.ok_or_else(|| Self::missing("StartListening"))?;
        let address = address.map(CString::new).transpose().map_err(|_| TransportError::Library {
            code: spi::ERROR_ILLEGAL_ARGUMENT,
            message: "the address contains a NUL character".into(),
        })?;
        let mut actual: *mut c_char = std::ptr::null_mut();
        // SAFETY: our env, a C string or NULL, and a place for the library's answer.
        let code = unsafe { f(self.env, address.as_ref().map_or(std::ptr::null(), |a| a.as_ptr()), &mut actual) };
        // SAFETY: the library allocated it through our callback (or left it NULL).
        let actual = unsafe { take_c_string(actual) };
        self.check(code)?;
        Ok(actual.unwrap_or_default())
    }

    pub fn stop_listening(&self) {
        if let Some(f) = self.table.stop_listening {
            // SAFETY: our env.
            let _ = unsafe { f(self.env) };
        }
    }

    /// `Accept`, with `timeout` for the debugger to come. The handshake timeout is passed as the
    /// JDK's agent passes it, 0: the library's own default (the JDK's dt_socket uses 2 s).
    pub fn accept(&self, timeout: Option<Duration>) -> Result<(), TransportError> {
        let f = self.table.accept.ok_or_else(|| Self::missing("Accept"))?;
        // SAFETY: our env.
        self.check(unsafe { f(self.env, spi::timeout_to_millis(timeout), 0) })
    }

    /// `Attach` to a listening debugger, handshake timeout as in [`Library::accept`].
    pub fn attach(&self, address: &str, timeout: Option<Duration>) -> Result<(), TransportError> {
        let f = self.table.attach.ok_or_else(|| Self::missing("Attach"))?;
        let address = CString::new(address).map_err(|_| TransportError::Library {
            code: spi::ERROR_ILLEGAL_ARGUMENT,
            message: "the address contains a NUL character".into(),
        })?;
        // SAFETY: our env and a C string.
        self.check(unsafe { f(self.env, address.as_ptr(), spi::timeout_to_millis(timeout), 0) })
    }

    pub fn is_open(&self) -> bool {
        // SAFETY: our env.
        self.table.is_open.is_some_and(|f| unsafe { f(self.env) } != 0)
    }

    /// `Close`: ends the connection (the listener stays).
    pub fn close(&self) -> Result<(), TransportError> {
        let f = self.table.close.ok_or_else(|| Self::missing("Close"))?;
        // SAFETY: our env.
        self.check(unsafe { f(self.env) })
    }

    /// The next packet; `Ok(None)` at the end of the stream, and, as the JDK's agent takes it,
    /// when reading failed because the connection was closed meanwhile.
    pub fn read_packet(&self, strict_flags: bool) -> Result<Option<Packet>, TransportError> {
        let f = self.table.read_packet.ok_or_else(|| Self::missing("ReadPacket"))?;
        let mut raw = spi::Packet::empty();
        // SAFETY: our env and a packet for the library to fill.
        let code = unsafe { f(self.env, &mut raw) };
        if code != spi::ERROR_NONE {
            return if self.is_open() { Err(self.error(code)) } else { Ok(None) };
        }
        if raw.is_end_of_stream() {
            return Ok(None);
        }
        // SAFETY: the library filled the packet, its data valid for the body length.
        let packet = unsafe { spi::packet_from_spi(&raw, strict_flags) };
        let data = raw.data();
        if !data.is_null() {
            // SAFETY: the library allocated the data through our callback; it is ours to free.
            unsafe { free(data.cast()) };
        }
        Ok(Some(packet?))
    }

    /// `WritePacket`, one at a time.
    pub fn write_packet(&self, packet: &Packet) -> Result<(), TransportError> {
        let f = self.table.write_packet.ok_or_else(|| Self::missing("WritePacket"))?;
        // The library only reads the data of the packet it is given.
        let raw = spi::packet_to_spi(packet, packet.body.as_ptr().cast_mut().cast())?;
        let _one_at_a_time = self.write.lock().unwrap_or_else(PoisonError::into_inner);
        // SAFETY: our env and a packet whose data (`packet.body`) outlives the call.
        self.check(unsafe { f(self.env, &raw) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn startup_messages_are_the_jdk_agents() {
        assert_eq!(
            InitError::load("transport library not found: dt_foo").startup_message("dt_foo"),
            "ERROR: transport library not found: dt_foo\n\
             ERROR: JDWP Transport dt_foo failed to initialize, TRANSPORT_LOAD(509)\n\
             JDWP exit error AGENT_ERROR_TRANSPORT_LOAD(196): No transports initialized"
        );
        assert!(InitError::init("x").startup_message("t").contains("TRANSPORT_INIT(510)"));
    }

    #[test]
    fn a_missing_library_is_not_found_anywhere() {
        let dir = std::env::temp_dir();
        // SAFETY: no library is found, so the VM pointer is never handed to one.
        let err = unsafe { open("surely_no_such_transport", dir.to_str(), std::ptr::null_mut(), None) }.unwrap_err();
        assert_eq!(err, InitError::load("transport library not found: surely_no_such_transport"));
        // SAFETY: as above.
        let err = unsafe { open("x", None, std::ptr::null_mut(), None) }.unwrap_err();
        assert_eq!(err, InitError::load("Java property sun.boot.library.path is not set"));
    }

    #[test]
    fn the_callback_allocates_and_frees() {
        // SAFETY: the callback's own contract.
        unsafe {
            let p = alloc(16);
            assert!(!p.is_null());
            free(p);
            assert!(alloc(-1).is_null());
            free(std::ptr::null_mut());
        }
    }
}
