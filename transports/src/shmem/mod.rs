//! The shared-memory transport (`dt_shmem`) for Linux: a debugger and a VM on the same machine
//! exchange JDWP packets through POSIX shared memory instead of a TCP socket.
//!
//! # How it works (details in `spec-notes/shmem.md`)
//!
//! The listening side creates a *rendezvous* segment `/jdwp-shmem-<NAME>` (`shm_open` with
//! `O_EXCL`, mode 0600). It holds the listener's pid and a state word: 0 when free, the pid of the
//! attaching process when claimed (one peer at a time), [`CLOSED`] when the listener is gone. An
//! attacher claims the state word with a compare-and-swap and wakes the listener (futex). The
//! listener then creates a per-connection segment `/jdwp-shmem-<NAME>~<n>` holding two byte
//! rings (one per direction, see [`ring`]), announces `n`, and waits until the attacher has mapped
//! it; the name is then unlinked, so the memory disappears with the last mapping, whoever dies.
//! Over the rings go the same 14-byte handshake and the same packet framing as over a socket.
//!
//! Hygiene: the rendezvous segment is unlinked when the listener is dropped, and at process exit
//! (`atexit`) if it never was. A segment whose owner is dead is removed (with a log line) by the
//! next listener of the same name, or by an attacher that finds it. A name in use by a live
//! process is an error. Segments are checked to belong to this user and to be private to it.
//!
//! Liveness: every sleep is a futex wait of at most [`ring::LIVENESS_SLICE`], after which the
//! peer's pid is checked (pidfd), so a peer that dies mid-packet gives an error, not a hang.
//!
//! # API
//!
//! Shaped like [`crate::socket`]: [`listen`] / [`ShmemListener::accept_with_timeout`] (VM side)
//! and [`attach`] (debugger side), connections that split into a [`ShmemReader`] for one thread
//! and a cloneable [`ShmemWriter`]. The other role pairings are
//! [`ShmemListener::accept_as_debugger`] and [`attach_as_vm`]. For tokio, `shmem::async_io` (feature
//! `tokio`) splits a connection into the blocking [`ShmemReader`], for a reader thread of the
//! client's (a futex cannot be awaited), and an `AsyncWrite` half that copies into the ring
//! directly and only waits on a helper thread when the ring is full; a [`ShmemCloser`] ends the
//! reader thread's blocked read; connecting runs on `spawn_blocking`.

#[cfg(feature = "tokio")]
pub mod async_io;
pub(crate) mod ring;
mod sys;

use std::ffi::CString;
use std::io::{self, Read, Write};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Once};
use std::time::{Duration, Instant};

use crate::blocking::{PacketReader, PacketWriter};
use crate::deadline::Deadline;
use crate::error::TransportError;
use crate::handshake::{HANDSHAKE, HandshakeError};
use crate::packet::Packet;
use ring::{RING_HEADER_LEN, Ring};

/// Prefix of every segment name (as seen in `/dev/shm`, without the slash).
pub const SEGMENT_PREFIX: &str = "jdwp-shmem-";

/// The default size of each ring (each direction), in bytes.
pub const DEFAULT_RING_SIZE: usize = 256 * 1024;

/// Rendezvous state word value once the listener has gone.
pub const CLOSED: u32 = u32::MAX;

const RENDEZVOUS_MAGIC: u64 = u64::from_le_bytes(*b"JDWPshm1");
const CONNECTION_MAGIC: u64 = u64::from_le_bytes(*b"JDWPcon1");
const LAYOUT_VERSION: u32 = 1;
const RENDEZVOUS_LEN: usize = 4096;
const CONNECTION_HEADER_LEN: usize = 64;
/// How long an attacher waits for a busy listener (held by a live peer) to become free, at most.
/// Long enough for the agent to go back to accepting after the previous debugger left.
const BUSY_WAIT: Duration = Duration::from_secs(3);
/// How long a half-created segment (not yet sized or initialized) is given to become ready.
const SETUP_WAIT: Duration = Duration::from_secs(2);

/// The first page of the rendezvous segment.
#[repr(C)]
struct Rendezvous {
    /// [`RENDEZVOUS_MAGIC`], stored last when the segment is ready.
    magic: AtomicU64,
    version: AtomicU32,
    listener_pid: AtomicU32,
    /// 0: free; [`CLOSED`]; otherwise the pid of the process that claimed the listener. Futex.
    state: AtomicU32,
    /// Number of the last connection segment announced. Futex.
    conn_seq: AtomicU32,
    /// The pid the announced connection segment is for.
    conn_for: AtomicU32,
}

/// The first 64 bytes of a connection segment; the two ring headers and the data follow.
#[repr(C)]
struct ConnectionHeader {
    magic: AtomicU64,
    ring_size: AtomicU32,
    listener_pid: AtomicU32,
    attacher_pid: AtomicU32,
    /// Set (and woken) by the attacher once it has mapped the segment. Futex.
    attached: AtomicU32,
}

const _: () = assert!(std::mem::size_of::<Rendezvous>() <= RENDEZVOUS_LEN);
const _: () = assert!(std::mem::size_of::<ConnectionHeader>() <= CONNECTION_HEADER_LEN);

fn connection_len(ring_size: usize) -> usize {
    CONNECTION_HEADER_LEN + 2 * RING_HEADER_LEN + 2 * ring_size
}

/// Checks a transport name: 1 to 100 characters among `A-Z a-z 0-9 _ - .`.
pub fn check_name(name: &str) -> Result<(), TransportError> {
    let reason = if name.is_empty() {
        Some("it is empty")
    } else if name.len() > 100 {
        Some("it is longer than 100 characters")
    } else if !name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.')) {
        Some("only letters, digits, '_', '-' and '.' are allowed")
    } else {
        None
    };
    match reason {
        Some(reason) => Err(TransportError::InvalidName { name: name.to_owned(), reason: reason.to_owned() }),
        None => Ok(()),
    }
}

/// The segment names (`/jdwp-shmem-NAME`, as passed to `shm_open`) of a transport name.
fn rendezvous_name(name: &str) -> String {
    format!("/{SEGMENT_PREFIX}{name}")
}

fn connection_name(name: &str, seq: u32) -> String {
    format!("/{SEGMENT_PREFIX}{name}~{seq}")
}

/// A fresh name for a listener started without one: `javadebug-<pid>-<n>`.
pub fn generated_name() -> String {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    format!("javadebug-{}-{}", sys::my_pid(), NEXT.fetch_add(1, Ordering::Relaxed))
}

/// Rendezvous segments this process owns, unlinked at exit if still there.
static OWNED: Mutex<Vec<CString>> = Mutex::new(Vec::new());

fn own_segment(name: &CString) {
    static AT_EXIT: Once = Once::new();
    AT_EXIT.call_once(|| {
        // SAFETY: registering a plain extern "C" function without arguments.
        unsafe { libc::atexit(unlink_owned_at_exit) };
    });
    OWNED.lock().unwrap_or_else(|e| e.into_inner()).push(name.clone());
}

fn disown_segment(name: &CString) {
    OWNED.lock().unwrap_or_else(|e| e.into_inner()).retain(|n| n != name);
}

extern "C" fn unlink_owned_at_exit() {
    // Never block at exit: if another thread holds the lock, its listener is being dropped anyway.
    if let Ok(names) = OWNED.try_lock() {
        for name in names.iter() {
            let _ = sys::unlink(name);
        }
    }
}

fn shm_error(operation: String) -> impl FnOnce(io::Error) -> TransportError {
    move |source| TransportError::Io { operation, source }
}

/// Starts listening on `name`. See [`ShmemListener::bind`].
pub fn listen(name: &str) -> Result<ShmemListener, TransportError> {
    ShmemListener::bind(name)
}

/// Attaches to the listener `name` and performs the debugger-side handshake (send, expect echo).
/// `timeout` bounds it all (`None`: no limit, except that a listener busy with another peer is
/// waited for a few seconds only).
pub fn attach(name: &str, timeout: Option<Duration>) -> Result<ShmemConnection, TransportError> {
    let deadline = Deadline::after(timeout);
    let conn = attach_raw(name, deadline)?;
    handshake(&conn.shared, deadline, true)?;
    Ok(conn)
}

/// Attaches to a debugger listening on `name` and performs the VM-side handshake (`server=n`).
pub fn attach_as_vm(name: &str, timeout: Option<Duration>) -> Result<ShmemConnection, TransportError> {
    let deadline = Deadline::after(timeout);
    let conn = attach_raw(name, deadline)?;
    handshake(&conn.shared, deadline, false)?;
    Ok(conn)
}

/// A mapped rendezvous segment.
struct RendezvousMap {
    map: sys::Mapping,
}

impl RendezvousMap {
    fn header(&self) -> &Rendezvous {
        // SAFETY: the mapping is at least RENDEZVOUS_LEN bytes, page-aligned, and lives as long as
        // `self`; every field is atomic.
        unsafe { &*self.map.as_ptr().cast::<Rendezvous>() }
    }

    /// Frees the state word if `pid` holds it, and wakes whoever waits on it.
    fn release(&self, pid: u32) {
        let state = &self.header().state;
        if state.compare_exchange(pid, 0, Ordering::AcqRel, Ordering::Acquire).is_ok() {
            sys::futex_wake(state);
        }
    }
}

/// Opens an existing rendezvous segment, waiting (bounded) for one still being set up.
fn open_rendezvous(name: &str, deadline: Option<Deadline>) -> Result<RendezvousMap, TransportError> {
    let seg = rendezvous_name(name);
    let c_seg = sys::c_name(&seg);
    let setup_deadline = Instant::now() + SETUP_WAIT;
    loop {
        let not_ready = match sys::Mapping::open(&c_seg, RENDEZVOUS_LEN) {
            Ok(sys::Opened::Mapped(map)) => {
                let rv = RendezvousMap { map };
                if rv.header().magic.load(Ordering::Acquire) == RENDEZVOUS_MAGIC {
                    if rv.header().version.load(Ordering::Relaxed) != LAYOUT_VERSION {
                        return Err(TransportError::io(
                            format!("attaching to shared memory {name}"),
                            io::Error::new(io::ErrorKind::InvalidData, "incompatible segment layout version"),
                        ));
                    }
                    return Ok(rv);
                }
                true
            }
            Ok(sys::Opened::NotReady) => true,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Err(TransportError::io(
                    format!("attaching to shared memory {name}"),
                    io::Error::new(io::ErrorKind::NotFound, format!("nothing listens there (no /dev/shm{seg})")),
                ));
            }
            Err(e) => return Err(TransportError::io(format!("opening shared memory /dev/shm{seg}"), e)),
        };
        debug_assert!(not_ready);
        let now = Instant::now();
        if now >= setup_deadline || deadline.is_some_and(|d| d.remaining().is_none()) {
            return Err(TransportError::io(
                format!("attaching to shared memory {name}"),
                io::Error::new(io::ErrorKind::InvalidData, format!("/dev/shm{seg} was never initialized")),
            ));
        }
        // A creator is between shm_open and its first store: it takes microseconds.
        std::thread::sleep(Duration::from_millis(1));
    }
}

fn timeout_error(operation: String, deadline: Option<Deadline>) -> TransportError {
    TransportError::Timeout { operation, after: deadline.map_or(Duration::ZERO, |d| d.timeout) }
}

/// Claims the listener `name`, maps the connection segment it makes for us. No handshake.
fn attach_raw(name: &str, deadline: Option<Deadline>) -> Result<ShmemConnection, TransportError> {
    check_name(name)?;
    let rv = open_rendezvous(name, deadline)?;
    let h = rv.header();
    let listener_pid = h.listener_pid.load(Ordering::Relaxed);
    let listener = sys::Process::watch(listener_pid);
    if !listener.is_alive() {
        let seg = rendezvous_name(name);
        tracing::warn!(segment = %seg, pid = listener_pid, "removing a stale shared memory segment whose listener died");
        let _ = sys::unlink(&sys::c_name(&seg));
        return Err(TransportError::io(
            format!("attaching to shared memory {name}"),
            io::Error::new(io::ErrorKind::ConnectionRefused, format!("its listener (pid {listener_pid}) is dead")),
        ));
    }
    let me = sys::my_pid();
    let seen_seq = h.conn_seq.load(Ordering::Acquire);
    let busy_until = Instant::now() + BUSY_WAIT;
    // Claim the state word: free -> our pid.
    loop {
        match h.state.compare_exchange(0, me, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => break,
            Err(CLOSED) => {
                return Err(TransportError::io(
                    format!("attaching to shared memory {name}"),
                    io::Error::new(io::ErrorKind::ConnectionRefused, "the listener has closed"),
                ));
            }
            Err(holder) if holder != me && !sys::pid_alive(holder) => {
                // A peer that died while holding the listener: free it for everyone.
                let _ = h.state.compare_exchange(holder, 0, Ordering::AcqRel, Ordering::Acquire);
            }
            Err(holder) => {
                let now = Instant::now();
                let until = deadline.map_or(busy_until, |d| d.at.min(busy_until));
                if now >= until {
                    return Err(TransportError::io(
                        format!("attaching to shared memory {name}"),
                        io::Error::new(
                            io::ErrorKind::AddrInUse,
                            format!("the listener is busy with another peer (pid {holder})"),
                        ),
                    ));
                }
                sys::futex_wait(&h.state, holder, Some((until - now).min(ring::LIVENESS_SLICE)));
            }
        }
    }
    sys::futex_wake(&h.state);
    // From here on, give the claim back on any failure.
    let fail = |e: TransportError| {
        rv.release(me);
        e
    };
    // Wait for the listener to announce our connection segment.
    let seq = loop {
        let seq = h.conn_seq.load(Ordering::Acquire);
        if seq != seen_seq && h.conn_for.load(Ordering::Acquire) == me {
            break seq;
        }
        if h.state.load(Ordering::Acquire) != me {
            return Err(fail(TransportError::io(
                format!("attaching to shared memory {name}"),
                io::Error::new(io::ErrorKind::ConnectionRefused, "the listener turned us away"),
            )));
        }
        if !listener.is_alive() {
            return Err(fail(TransportError::io(
                format!("attaching to shared memory {name}"),
                io::Error::new(io::ErrorKind::ConnectionRefused, format!("the listener (pid {listener_pid}) died")),
            )));
        }
        let wait = match deadline {
            None => ring::LIVENESS_SLICE,
            Some(d) => match d.remaining() {
                None => return Err(fail(timeout_error(format!("attaching to shared memory {name}"), deadline))),
                Some(left) => left.min(ring::LIVENESS_SLICE),
            },
        };
        sys::futex_wait(&h.conn_seq, seq, Some(wait));
    };
    let conn_seg = connection_name(name, seq);
    let c_conn = sys::c_name(&conn_seg);
    let map = match sys::Mapping::open(&c_conn, CONNECTION_HEADER_LEN) {
        Ok(sys::Opened::Mapped(map)) => map,
        Ok(sys::Opened::NotReady) => {
            return Err(fail(TransportError::io(
                format!("opening shared memory /dev/shm{conn_seg}"),
                io::Error::new(io::ErrorKind::InvalidData, "announced but not sized"),
            )));
        }
        Err(e) => return Err(fail(shm_error(format!("opening shared memory /dev/shm{conn_seg}"))(e))),
    };
    // Our mapping keeps the memory: the name can go now (the listener unlinks it too).
    let _ = sys::unlink(&c_conn);
    let mut shared = Shared::new(map, Side::Attacher, listener, None).map_err(fail)?;
    shared.listener_segment = Some(rendezvous_name(name));
    let header = shared.header();
    header.attached.store(1, Ordering::Release);
    sys::futex_wake(&header.attached);
    tracing::debug!(name, seq, "attached over shared memory");
    Ok(ShmemConnection { shared: Arc::new(shared), name: name.to_owned() })
}

/// Which end of a connection segment this is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Side {
    Listener,
    Attacher,
}

/// One end of a connection: the mapping, its two rings seen from this side, the peer process, and
/// (listener side) the claim to give back when the connection ends.
struct Shared {
    map: sys::Mapping,
    rx: Ring,
    tx: Ring,
    peer: sys::Process,
    release: Option<(Arc<RendezvousMap>, u32)>,
    /// Attacher side: the listener's rendezvous name, removed if the listener is found dead.
    listener_segment: Option<String>,
    shut: std::sync::atomic::AtomicBool,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared").field("peer", &self.peer.pid()).finish_non_exhaustive()
    }
}

impl Shared {
    fn new(
        map: sys::Mapping,
        side: Side,
        peer: sys::Process,
        release: Option<(Arc<RendezvousMap>, u32)>,
    ) -> Result<Shared, TransportError> {
        let base = map.as_ptr();
        // SAFETY: the mapping holds at least the header (checked when opened or created).
        let header = unsafe { &*base.cast::<ConnectionHeader>() };
        let invalid = |what: &str| {
            TransportError::io(
                "mapping a shared memory connection",
                io::Error::new(io::ErrorKind::InvalidData, what.to_owned()),
            )
        };
        if header.magic.load(Ordering::Acquire) != CONNECTION_MAGIC {
            return Err(invalid("not a JDWP connection segment"));
        }
        let ring_size = header.ring_size.load(Ordering::Relaxed) as usize;
        if ring_size == 0 || connection_len(ring_size) > map.len() {
            return Err(invalid("ring size does not match the segment"));
        }
        // Ring 0 carries listener -> attacher, ring 1 attacher -> listener.
        let ring_at = |i: usize| {
            let header_at = CONNECTION_HEADER_LEN + i * RING_HEADER_LEN;
            let data_at = CONNECTION_HEADER_LEN + 2 * RING_HEADER_LEN + i * ring_size;
            // SAFETY: both regions lie within the mapping (checked above) and stay mapped while
            // `Shared` (which owns the mapping and the rings) lives; the header offset is a
            // multiple of 64 in a page-aligned mapping.
            unsafe { Ring::new(base.add(header_at), base.add(data_at), ring_size) }
        };
        let (rx, tx) = match side {
            Side::Listener => (ring_at(1), ring_at(0)),
            Side::Attacher => (ring_at(0), ring_at(1)),
        };
        Ok(Shared {
            map,
            rx,
            tx,
            peer,
            release,
            listener_segment: None,
            shut: std::sync::atomic::AtomicBool::new(false),
        })
    }

    /// Reads from the peer; when it turns out dead, cleans up after it.
    fn read(&self, buf: &mut [u8], deadline: Option<Instant>) -> io::Result<usize> {
        let result = self.rx.read(buf, deadline, &self.peer);
        if matches!(&result, Err(e) if e.kind() == io::ErrorKind::ConnectionReset) {
            self.peer_died();
        }
        result
    }

    /// The peer died without closing: a dead listener cannot unlink its rendezvous segment, so
    /// the attacher does (if the name still holds that listener's segment).
    fn peer_died(&self) {
        let Some(seg) = &self.listener_segment else { return };
        let c_seg = sys::c_name(seg);
        if let Ok(sys::Opened::Mapped(map)) = sys::Mapping::open(&c_seg, RENDEZVOUS_LEN) {
            let rv = RendezvousMap { map };
            let pid = rv.header().listener_pid.load(Ordering::Relaxed);
            if pid == self.peer.pid() && !sys::pid_alive(pid) {
                tracing::warn!(segment = %seg, pid, "the listener died; removing its shared memory segment");
                let _ = sys::unlink(&c_seg);
            }
        }
    }

    fn header(&self) -> &ConnectionHeader {
        // SAFETY: checked in `new`; the mapping lives as long as `self`.
        unsafe { &*self.map.as_ptr().cast::<ConnectionHeader>() }
    }

    /// Ends the connection both ways: our reads end, our writes and the peer's fail, the peer's
    /// reads end after draining; the listener is freed for the next peer. Idempotent.
    fn shutdown(&self) {
        if self.shut.swap(true, Ordering::AcqRel) {
            return;
        }
        self.tx.close_writer();
        self.rx.close_reader();
        if let Some((rv, pid)) = &self.release {
            rv.release(*pid);
        }
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        self.shutdown();
    }
}

fn handshake(shared: &Shared, deadline: Option<Deadline>, debugger: bool) -> Result<(), HandshakeError> {
    let at = deadline.map(|d| d.at);
    let mut got = [0u8; HANDSHAKE.len()];
    let mut len = 0;
    let received = |got: &[u8]| got.escape_ascii().to_string();
    let send = || -> Result<(), HandshakeError> {
        let mut sent = 0;
        while sent < HANDSHAKE.len() {
            match shared.tx.write(&HANDSHAKE[sent..], at, &shared.peer) {
                Ok(n) => sent += n,
                Err(e) if e.kind() == io::ErrorKind::TimedOut => {
                    return Err(HandshakeError::Timeout {
                        after: deadline.map_or(Duration::ZERO, |d| d.timeout),
                        received: String::new(),
                    });
                }
                Err(e) => return Err(HandshakeError::Io(e)),
            }
        }
        Ok(())
    };
    if debugger {
        send()?;
    }
    while len < HANDSHAKE.len() {
        // Never more than the handshake: a packet right behind it stays for the packet reader.
        match shared.rx.read(&mut got[len..], at, &shared.peer) {
            Ok(0) => return Err(HandshakeError::Closed { received: received(&got[..len]) }),
            Ok(n) => {
                let start = len;
                len += n;
                if let Some(bad) = (start..len).find(|&i| got[i] != HANDSHAKE[i]) {
                    return Err(HandshakeError::Mismatch { received: received(&got[..=bad]) });
                }
            }
            Err(e) if e.kind() == io::ErrorKind::TimedOut => {
                return Err(HandshakeError::Timeout {
                    after: deadline.map_or(Duration::ZERO, |d| d.timeout),
                    received: received(&got[..len]),
                });
            }
            Err(e) if e.kind() == io::ErrorKind::ConnectionReset => {
                return Err(HandshakeError::Closed { received: received(&got[..len]) });
            }
            Err(e) => return Err(HandshakeError::Io(e)),
        }
    }
    if !debugger {
        send()?;
    }
    Ok(())
}

/// A listening `dt_shmem` endpoint: the rendezvous segment and its state word.
pub struct ShmemListener {
    name: String,
    segment: CString,
    rv: Arc<RendezvousMap>,
    ring_size: usize,
    handshake_timeout: Option<Duration>,
    /// Set by the first `close`: later ones must not unlink a newer segment of the same name.
    closed: std::sync::atomic::AtomicBool,
}

impl std::fmt::Debug for ShmemListener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShmemListener").field("name", &self.name).finish_non_exhaustive()
    }
}

impl ShmemListener {
    /// Creates the rendezvous segment `/jdwp-shmem-<name>`. A leftover segment of a dead process
    /// is removed (logged at `warn`); one of a live process is an `AddrInUse` error naming it.
    pub fn bind(name: &str) -> Result<ShmemListener, TransportError> {
        check_name(name)?;
        let seg = rendezvous_name(name);
        let c_seg = sys::c_name(&seg);
        let map = loop {
            match sys::Mapping::create(&c_seg, RENDEZVOUS_LEN) {
                Ok(map) => break map,
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                    remove_if_stale(name, &seg)?;
                }
                Err(e) => return Err(TransportError::io(format!("creating shared memory /dev/shm{seg}"), e)),
            }
        };
        let rv = RendezvousMap { map };
        let h = rv.header();
        h.version.store(LAYOUT_VERSION, Ordering::Relaxed);
        h.listener_pid.store(sys::my_pid(), Ordering::Relaxed);
        h.state.store(0, Ordering::Relaxed);
        h.conn_seq.store(0, Ordering::Relaxed);
        h.magic.store(RENDEZVOUS_MAGIC, Ordering::Release);
        own_segment(&c_seg);
        remove_stale_segments();
        tracing::debug!(name, "listening on shared memory");
        Ok(ShmemListener {
            name: name.to_owned(),
            segment: c_seg,
            rv: Arc::new(rv),
            ring_size: DEFAULT_RING_SIZE,
            handshake_timeout: None,
            closed: std::sync::atomic::AtomicBool::new(false),
        })
    }

    /// The transport name (the `address` printed in "Listening for transport dt_shmem at address").
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Sets the size of each ring of later connections (at least 64 bytes; for tests).
    pub fn set_ring_size(&mut self, bytes: usize) {
        self.ring_size = bytes.max(64);
    }

    /// Limits each peer's handshake separately from the accept timeout (as for sockets).
    pub fn set_handshake_timeout(&mut self, timeout: Option<Duration>) {
        self.handshake_timeout = timeout;
    }

    /// Waits without a time limit for a debugger. See [`accept_with_timeout`](Self::accept_with_timeout).
    pub fn accept(&self) -> Result<ShmemConnection, TransportError> {
        self.accept_with_timeout(None)
    }

    /// Waits for a debugger to attach and complete the handshake (VM side: read, then echo).
    /// Peers that fail the handshake or die are dropped and the wait goes on, until `timeout`.
    pub fn accept_with_timeout(&self, timeout: Option<Duration>) -> Result<ShmemConnection, TransportError> {
        self.accept_role(timeout, false)
    }

    /// Waits for a VM to attach (`server=n` agents), then performs the debugger-side handshake.
    pub fn accept_as_debugger(&self, timeout: Option<Duration>) -> Result<ShmemConnection, TransportError> {
        self.accept_role(timeout, true)
    }

    /// [`accept_with_timeout`](Self::accept_with_timeout) with a handshake limit for this call
    /// only (for callers that share the listener and cannot set it).
    pub fn accept_with_limits(
        &self,
        timeout: Option<Duration>,
        handshake_timeout: Option<Duration>,
    ) -> Result<ShmemConnection, TransportError> {
        self.accept_full(timeout, handshake_timeout, false)
    }

    /// Stops listening now: the name is removed, a blocked accept returns an error, attachers are
    /// refused. A live connection is not affected. (Dropping the listener does the same.)
    pub fn close(&self) {
        if self.closed.swap(true, Ordering::AcqRel) {
            return;
        }
        let state = &self.rv.header().state;
        state.store(CLOSED, Ordering::Release);
        sys::futex_wake(state);
        let _ = sys::unlink(&self.segment);
        disown_segment(&self.segment);
    }

    fn accept_role(&self, timeout: Option<Duration>, debugger: bool) -> Result<ShmemConnection, TransportError> {
        self.accept_full(timeout, self.handshake_timeout, debugger)
    }

    fn accept_full(
        &self,
        timeout: Option<Duration>,
        handshake_timeout: Option<Duration>,
        debugger: bool,
    ) -> Result<ShmemConnection, TransportError> {
        let deadline = Deadline::after(timeout);
        loop {
            let conn = self.accept_raw(deadline)?;
            let handshake_deadline = Deadline::earliest(deadline, Deadline::after(handshake_timeout));
            match handshake(&conn.shared, handshake_deadline, debugger) {
                Ok(()) => return Ok(conn),
                Err(e) => {
                    if matches!(e, HandshakeError::Timeout { .. }) && deadline.is_some_and(|d| d.remaining().is_none())
                    {
                        return Err(e.into());
                    }
                    tracing::warn!(name = %self.name, peer = conn.peer_pid(), error = %e, "peer failed the handshake");
                }
            }
        }
    }

    /// Waits for a claim, makes the connection segment, waits until the claimer mapped it.
    fn accept_raw(&self, deadline: Option<Deadline>) -> Result<ShmemConnection, TransportError> {
        let h = self.rv.header();
        let timed_out = || timeout_error(format!("accepting a peer on shared memory {}", self.name), deadline);
        loop {
            let state = h.state.load(Ordering::Acquire);
            if state == 0 {
                let wait = match deadline {
                    None => None,
                    Some(d) => Some(d.remaining().ok_or_else(timed_out)?),
                };
                // No liveness slice needed: a claimer always wakes us.
                sys::futex_wait(&h.state, 0, wait);
                continue;
            }
            if state == CLOSED {
                return Err(TransportError::io(
                    format!("accepting on shared memory {}", self.name),
                    io::Error::new(io::ErrorKind::ConnectionAborted, "the listener was closed"),
                ));
            }
            let peer = sys::Process::watch(state);
            if !peer.is_alive() {
                self.rv.release(state);
                continue;
            }
            match self.connect(state, peer, deadline) {
                Ok(conn) => return Ok(conn),
                Err(e) if e.is_timeout() => {
                    self.rv.release(state);
                    return Err(e);
                }
                Err(e) => {
                    self.rv.release(state);
                    tracing::warn!(name = %self.name, pid = state, error = %e, "could not connect a peer");
                }
            }
        }
    }

    fn connect(
        &self,
        pid: u32,
        peer: sys::Process,
        deadline: Option<Deadline>,
    ) -> Result<ShmemConnection, TransportError> {
        let h = self.rv.header();
        let seq = h.conn_seq.load(Ordering::Relaxed).wrapping_add(1).max(1);
        let seg = connection_name(&self.name, seq);
        let c_seg = sys::c_name(&seg);
        let len = connection_len(self.ring_size);
        let map = match sys::Mapping::create(&c_seg, len) {
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                // Left by an earlier listener of this name that died: ours now.
                tracing::warn!(segment = %seg, "removing a stale shared memory connection segment");
                let _ = sys::unlink(&c_seg);
                sys::Mapping::create(&c_seg, len)
            }
            other => other,
        }
        .map_err(shm_error(format!("creating shared memory /dev/shm{seg}")))?;
        // SAFETY: the new mapping holds `len` zeroed bytes, more than the header.
        let header = unsafe { &*map.as_ptr().cast::<ConnectionHeader>() };
        header.ring_size.store(self.ring_size as u32, Ordering::Relaxed);
        header.listener_pid.store(sys::my_pid(), Ordering::Relaxed);
        header.attacher_pid.store(pid, Ordering::Relaxed);
        header.magic.store(CONNECTION_MAGIC, Ordering::Release);
        let shared = Shared::new(map, Side::Listener, peer, Some((Arc::clone(&self.rv), pid)));
        let shared = match shared {
            Ok(shared) => shared,
            Err(e) => {
                let _ = sys::unlink(&c_seg);
                return Err(e);
            }
        };
        shared.rx.init();
        shared.tx.init();
        h.conn_for.store(pid, Ordering::Release);
        h.conn_seq.store(seq, Ordering::Release);
        sys::futex_wake(&h.conn_seq);
        // Wait until the peer has mapped it; then the name can go.
        let attached = &shared.header().attached;
        let result = loop {
            if attached.load(Ordering::Acquire) != 0 {
                break Ok(());
            }
            if !shared.peer.is_alive() {
                break Err(TransportError::io(
                    format!("connecting a peer on shared memory {}", self.name),
                    io::Error::new(io::ErrorKind::ConnectionAborted, format!("the peer (pid {pid}) died")),
                ));
            }
            let wait = match deadline {
                None => ring::LIVENESS_SLICE,
                Some(d) => match d.remaining() {
                    Some(left) => left.min(ring::LIVENESS_SLICE),
                    None => {
                        break Err(timeout_error(format!("accepting a peer on shared memory {}", self.name), deadline));
                    }
                },
            };
            sys::futex_wait(attached, 0, Some(wait));
        };
        let _ = sys::unlink(&c_seg);
        result?;
        tracing::debug!(name = %self.name, pid, seq, "peer attached over shared memory");
        Ok(ShmemConnection { shared: Arc::new(shared), name: self.name.clone() })
    }
}

impl Drop for ShmemListener {
    fn drop(&mut self) {
        self.close();
    }
}

/// Removes the rendezvous segment `seg` if its listener is dead; errors if it is alive.
fn remove_if_stale(name: &str, seg: &str) -> Result<(), TransportError> {
    let c_seg = sys::c_name(seg);
    let in_use = |pid: u32| {
        TransportError::io(
            format!("listening on shared memory {name}"),
            io::Error::new(io::ErrorKind::AddrInUse, format!("the name is in use by process {pid} (/dev/shm{seg})")),
        )
    };
    let setup_deadline = Instant::now() + SETUP_WAIT;
    loop {
        match sys::Mapping::open(&c_seg, RENDEZVOUS_LEN) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(TransportError::io(format!("inspecting shared memory /dev/shm{seg}"), e)),
            Ok(sys::Opened::Mapped(map)) => {
                let rv = RendezvousMap { map };
                let h = rv.header();
                if h.magic.load(Ordering::Acquire) == RENDEZVOUS_MAGIC {
                    let pid = h.listener_pid.load(Ordering::Relaxed);
                    if sys::pid_alive(pid) && h.state.load(Ordering::Acquire) != CLOSED {
                        return Err(in_use(pid));
                    }
                    tracing::warn!(segment = %seg, pid, "removing a stale shared memory segment of a dead process");
                    let _ = sys::unlink(&c_seg);
                    return Ok(());
                }
            }
            Ok(sys::Opened::NotReady) => {}
        }
        if Instant::now() >= setup_deadline {
            tracing::warn!(segment = %seg, "removing a shared memory segment that was never initialized");
            let _ = sys::unlink(&c_seg);
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Removes the segments of dead listeners of any name (this user's only: others' cannot be
/// opened): rendezvous segments whose listener was killed while no debugger was attached (nothing
/// runs at SIGKILL), and connection segments `NAME~n` of a listener killed before its peer mapped
/// them. Segments still being set up (no magic yet) are left alone. Each removal is logged.
fn remove_stale_segments() {
    let Ok(entries) = std::fs::read_dir("/dev/shm") else { return };
    for entry in entries.flatten() {
        let file = entry.file_name();
        let Some(file) = file.to_str() else { continue };
        if !file.starts_with(SEGMENT_PREFIX) {
            continue;
        }
        let c_seg = sys::c_name(&format!("/{file}"));
        let Ok(sys::Opened::Mapped(map)) = sys::Mapping::open(&c_seg, CONNECTION_HEADER_LEN) else { continue };
        let owner = if file.contains('~') {
            // SAFETY: the mapping holds at least the connection header.
            let header = unsafe { &*map.as_ptr().cast::<ConnectionHeader>() };
            (header.magic.load(Ordering::Acquire) == CONNECTION_MAGIC)
                .then(|| header.listener_pid.load(Ordering::Relaxed))
        } else if map.len() >= RENDEZVOUS_LEN {
            let rv = RendezvousMap { map };
            let h = rv.header();
            (h.magic.load(Ordering::Acquire) == RENDEZVOUS_MAGIC).then(|| h.listener_pid.load(Ordering::Relaxed))
        } else {
            None
        };
        if let Some(pid) = owner
            && pid != sys::my_pid()
            && !sys::pid_alive(pid)
        {
            tracing::warn!(segment = file, pid, "removing a stale shared memory segment of a dead process");
            let _ = sys::unlink(&c_seg);
        }
    }
}

/// An established `dt_shmem` connection, handshake done.
#[derive(Debug)]
pub struct ShmemConnection {
    shared: Arc<Shared>,
    name: String,
}

impl ShmemConnection {
    /// The transport name it was made on.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The other process's id.
    pub fn peer_pid(&self) -> u32 {
        self.shared.peer.pid()
    }

    /// Splits into a packet reader (for one thread) and a cloneable packet writer (for any number).
    pub fn into_split(self) -> (ShmemReader, ShmemWriter) {
        let reader = PacketReader::new(ShmemReadHalf { shared: Arc::clone(&self.shared) });
        let writer = ShmemWriter {
            packets: PacketWriter::new(ShmemWriteHalf { shared: Arc::clone(&self.shared) }),
            control: self.shared,
        };
        (reader, writer)
    }

    /// The raw byte-stream halves (for adapters such as the JDK transport library).
    pub fn into_halves(self) -> (ShmemReadHalf, ShmemWriteHalf) {
        (ShmemReadHalf { shared: Arc::clone(&self.shared) }, ShmemWriteHalf { shared: self.shared })
    }

    /// Ends the connection both ways (see [`ShmemWriter::shutdown`]).
    pub fn shutdown(&self) {
        self.shared.shutdown();
    }

    /// A handle that shuts the connection down from anywhere, whatever became of its halves: a
    /// reader blocked on a thread of its own then sees end of stream.
    pub fn closer(&self) -> ShmemCloser {
        ShmemCloser { shared: Arc::clone(&self.shared) }
    }
}

/// Shuts a connection down (see [`ShmemConnection::closer`]). It keeps the mapping alive until
/// dropped, so it is always safe to use.
#[derive(Clone, Debug)]
pub struct ShmemCloser {
    shared: Arc<Shared>,
}

impl ShmemCloser {
    /// Ends the connection both ways (see [`ShmemWriter::shutdown`]). Idempotent.
    pub fn shutdown(&self) {
        self.shared.shutdown();
    }
}

/// The reading byte stream of a connection (blocking `Read`; `Ok(0)` at the end).
#[derive(Debug)]
pub struct ShmemReadHalf {
    shared: Arc<Shared>,
}

impl ShmemReadHalf {
    /// Reads with a time limit: `TimedOut` when nothing came by `deadline`.
    pub fn read_until(&mut self, buf: &mut [u8], deadline: Option<Instant>) -> io::Result<usize> {
        self.shared.read(buf, deadline)
    }

    /// Ends the connection both ways.
    pub fn shutdown(&self) {
        self.shared.shutdown();
    }
}

impl Read for ShmemReadHalf {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.shared.read(buf, None)
    }
}

/// The writing byte stream of a connection (blocking `Write`; waits for room in the ring).
#[derive(Debug)]
pub struct ShmemWriteHalf {
    shared: Arc<Shared>,
}

impl ShmemWriteHalf {
    /// Ends the connection both ways.
    pub fn shutdown(&self) {
        self.shared.shutdown();
    }
}

impl Write for ShmemWriteHalf {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.shared.tx.write(buf, None, &self.shared.peer)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The reading half of a [`ShmemConnection`].
pub type ShmemReader = PacketReader<ShmemReadHalf>;

/// The writing half of a [`ShmemConnection`]: clone it for each thread that sends packets.
#[derive(Clone, Debug)]
pub struct ShmemWriter {
    packets: PacketWriter<ShmemWriteHalf>,
    control: Arc<Shared>,
}

impl ShmemWriter {
    /// Writes one whole packet; concurrent callers are serialized, packet by packet. A packet
    /// larger than the ring streams through it as the reader drains it.
    pub fn write_packet(&self, packet: &Packet) -> Result<(), TransportError> {
        self.packets.write_packet(packet)
    }

    /// Writes whole packets back to back, in order, in one write (see
    /// [`crate::PacketWriter::write_packets`]); concurrent callers' packets never come between.
    pub fn write_packets(&self, packets: &[Packet]) -> Result<(), TransportError> {
        self.packets.write_packets(packets)
    }

    /// Ends the connection both ways: our reader sees end of stream, writes fail, the peer reads
    /// what was sent and then sees the end; a listener is freed for its next peer. Idempotent.
    pub fn shutdown(&self) -> Result<(), TransportError> {
        self.control.shutdown();
        Ok(())
    }
}

#[cfg(test)]
mod tests;
