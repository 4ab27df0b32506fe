//! The Linux system calls under the shared-memory transport: POSIX shared memory segments
//! (`shm_open`/`mmap`), futexes, and peer liveness (pidfd, `kill(pid, 0)` as a fallback).
//!
//! Everything `unsafe` about the OS lives here; the ring and the rendezvous only see a
//! [`Mapping`] (a live, page-aligned, shared mapping) and safe wrappers.

use std::ffi::{CStr, CString};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::AtomicU32;
use std::time::Duration;

/// A shared memory segment mapped read-write into this process; unmapped on drop.
#[derive(Debug)]
pub(crate) struct Mapping {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: the mapping is plain shared memory; all access to it goes through atomics or through
// the ring's single-producer/single-consumer discipline, which the users uphold.
unsafe impl Send for Mapping {}
// SAFETY: as above.
unsafe impl Sync for Mapping {}

/// What opening an existing segment found.
pub(crate) enum Opened {
    Mapped(Mapping),
    /// The segment exists but is not sized yet (its creator is still setting it up).
    NotReady,
}

impl Mapping {
    /// Creates the segment `name` exclusively (`O_EXCL`, mode 0600), sizes it to `len` (zeroed)
    /// and maps it.
    pub(crate) fn create(name: &CStr, len: usize) -> io::Result<Mapping> {
        // SAFETY: `name` is a valid C string; the flags and mode are plain integers.
        let fd = unsafe { libc::shm_open(name.as_ptr(), libc::O_RDWR | libc::O_CREAT | libc::O_EXCL, 0o600) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` was just returned by shm_open and is owned by nobody else.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let sized = libc::off_t::try_from(len).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput)).and_then(
            // SAFETY: `fd` is open.
            |len| {
                if unsafe { libc::ftruncate(fd.as_raw_fd(), len) } == 0 {
                    Ok(())
                } else {
                    Err(io::Error::last_os_error())
                }
            },
        );
        if let Err(e) = sized.and_then(|()| fchmod_private(&fd)) {
            let _ = unlink(name);
            return Err(e);
        }
        map(&fd, len).inspect_err(|_| {
            let _ = unlink(name);
        })
    }

    /// Opens and maps the existing segment `name` after checking that it belongs to this user,
    /// is private to it, and holds at least `min_len` bytes.
    pub(crate) fn open(name: &CStr, min_len: usize) -> io::Result<Opened> {
        // SAFETY: `name` is a valid C string.
        let fd = unsafe { libc::shm_open(name.as_ptr(), libc::O_RDWR, 0) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` was just returned by shm_open and is owned by nobody else.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        // SAFETY: an all-zero `stat` is a valid value for fstat to overwrite.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: `fd` is open and `st` is a valid, exclusively borrowed stat buffer.
        if unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: geteuid has no preconditions.
        let me = unsafe { libc::geteuid() };
        if st.st_uid != me {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!("the segment belongs to uid {}, not to this user (uid {me})", st.st_uid),
            ));
        }
        if st.st_mode & 0o077 != 0 {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!("the segment is accessible to other users (mode {:o})", st.st_mode & 0o777),
            ));
        }
        let len = usize::try_from(st.st_size).unwrap_or(0);
        if len < min_len {
            return Ok(Opened::NotReady);
        }
        map(&fd, len).map(Opened::Mapped)
    }

    pub(crate) fn as_ptr(&self) -> *mut u8 {
        self.ptr
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: `ptr`/`len` are exactly what mmap returned, unmapped only here.
        unsafe { libc::munmap(self.ptr.cast(), self.len) };
    }
}

fn fchmod_private(fd: &OwnedFd) -> io::Result<()> {
    // The umask may have narrowed 0600 further (never widened it); set it exactly.
    // SAFETY: `fd` is open.
    if unsafe { libc::fchmod(fd.as_raw_fd(), 0o600) } == 0 { Ok(()) } else { Err(io::Error::last_os_error()) }
}

fn map(fd: &OwnedFd, len: usize) -> io::Result<Mapping> {
    // SAFETY: a fresh shared mapping of an open descriptor; the kernel picks the address.
    let ptr = unsafe {
        libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED, fd.as_raw_fd(), 0)
    };
    if ptr == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    // The descriptor is not needed once mapped: the mapping keeps the memory alive.
    Ok(Mapping { ptr: ptr.cast(), len })
}

/// Removes the segment's name (the memory lives on while mapped). `NotFound` if already gone.
pub(crate) fn unlink(name: &CStr) -> io::Result<()> {
    // SAFETY: `name` is a valid C string.
    if unsafe { libc::shm_unlink(name.as_ptr()) } == 0 { Ok(()) } else { Err(io::Error::last_os_error()) }
}

/// The segment's name as a C string (names are checked to hold no NUL before this is called).
pub(crate) fn c_name(name: &str) -> CString {
    CString::new(name).unwrap_or_default()
}

/// Sleeps until `word` is woken or no longer holds `expected`, or `timeout` passes. Spurious
/// returns are possible: callers re-check their condition.
pub(crate) fn futex_wait(word: &AtomicU32, expected: u32, timeout: Option<Duration>) {
    let ts = timeout.map(|t| libc::timespec {
        tv_sec: libc::time_t::try_from(t.as_secs()).unwrap_or(libc::time_t::MAX),
        tv_nsec: libc::c_long::from(t.subsec_nanos() as i32),
    });
    let ts_ptr = ts.as_ref().map_or(std::ptr::null(), |t| t as *const libc::timespec);
    // SAFETY: `word` is a valid, aligned u32 for the whole call; FUTEX_WAIT (not PRIVATE, since the
    // word is in memory shared between processes) only reads it. The timeout pointer is null or
    // points to `ts`, which outlives the call.
    unsafe {
        libc::syscall(libc::SYS_futex, word.as_ptr(), libc::FUTEX_WAIT, expected, ts_ptr, std::ptr::null::<u32>(), 0)
    };
}

/// Wakes every thread (of any process) sleeping on `word`.
pub(crate) fn futex_wake(word: &AtomicU32) {
    // SAFETY: `word` is a valid, aligned u32; FUTEX_WAKE does not access memory through it.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAKE,
            i32::MAX,
            std::ptr::null::<u32>(),
            std::ptr::null::<u32>(),
            0,
        )
    };
}

/// This process's id.
pub(crate) fn my_pid() -> u32 {
    std::process::id()
}

/// Another process, watched for death: through a pidfd where the kernel has them (exact, and a
/// zombie counts as dead), else with `kill(pid, 0)`.
#[derive(Debug)]
pub(crate) struct Process {
    pid: u32,
    pidfd: Option<OwnedFd>,
}

impl Process {
    pub(crate) fn watch(pid: u32) -> Process {
        let raw = libc::pid_t::try_from(pid).unwrap_or(0);
        // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor or -1.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, raw, 0) };
        let pidfd = i32::try_from(fd).ok().filter(|&fd| fd >= 0).map(|fd| {
            // SAFETY: the descriptor was just created for us.
            unsafe { OwnedFd::from_raw_fd(fd) }
        });
        Process { pid, pidfd }
    }

    pub(crate) fn pid(&self) -> u32 {
        self.pid
    }

    pub(crate) fn is_alive(&self) -> bool {
        match &self.pidfd {
            Some(fd) => {
                let mut pollfd = libc::pollfd { fd: fd.as_raw_fd(), events: libc::POLLIN, revents: 0 };
                // SAFETY: one valid pollfd, zero timeout.
                let ready = unsafe { libc::poll(&mut pollfd, 1, 0) };
                // Readable means the process has exited.
                !(ready > 0 && pollfd.revents & libc::POLLIN != 0)
            }
            None => pid_alive(self.pid),
        }
    }
}

/// Whether a process with this id exists (one of another user counts; pid 0 never does).
pub(crate) fn pid_alive(pid: u32) -> bool {
    let Ok(raw) = libc::pid_t::try_from(pid) else { return false };
    if raw <= 0 {
        return false;
    }
    // A zombie (dead, not yet reaped) still answers kill(pid, 0): ask the pidfd first.
    // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, raw, 0) };
    if let Ok(fd) = i32::try_from(fd)
        && fd >= 0
    {
        // SAFETY: the descriptor was just created for us.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let mut pollfd = libc::pollfd { fd: fd.as_raw_fd(), events: libc::POLLIN, revents: 0 };
        // SAFETY: one valid pollfd, zero timeout.
        let ready = unsafe { libc::poll(&mut pollfd, 1, 0) };
        return !(ready > 0 && pollfd.revents & libc::POLLIN != 0);
    }
    // SAFETY: signal 0 only checks for existence and permission.
    if unsafe { libc::kill(raw, 0) } == 0 {
        return true;
    }
    io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}
