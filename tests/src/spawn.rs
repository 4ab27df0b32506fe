//! Spawning child processes that die with the test process.
//!
//! `prctl(PR_SET_PDEATHSIG, SIGKILL)` kills the child when its parent goes
//! away, but Linux defines "parent" as the *thread* that forked it, not the
//! process. cargo runs each test on its own thread, and async tests may spawn
//! from short-lived blocking-pool threads, so a JVM forked directly from such
//! a thread would be killed as soon as that thread ends, even if the
//! `Debuggee` was handed to another thread. All forks therefore go through
//! one dedicated thread that lives until the process exits.

use std::{
    io,
    os::unix::process::CommandExt,
    process::{Child, Command},
    sync::{OnceLock, mpsc},
};

type Reply = mpsc::Sender<io::Result<Child>>;

/// Spawns `cmd` so that the child gets SIGKILL when this process dies.
pub(crate) fn spawn_tied_to_process(mut cmd: Command) -> io::Result<Child> {
    // SAFETY: getpid has no preconditions.
    let parent = unsafe { libc::getpid() };
    // SAFETY: the closure runs between fork and exec and only makes
    // async-signal-safe calls (prctl, getppid) and builds errors from raw
    // errno values, which does not allocate.
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong) != 0 {
                return Err(io::Error::last_os_error());
            }
            // The parent may have died between fork and prctl; then nobody
            // would deliver the signal, so give up instead of running orphaned.
            if libc::getppid() != parent {
                return Err(io::Error::from_raw_os_error(libc::ESRCH));
            }
            Ok(())
        });
    }

    static SPAWNER: OnceLock<Option<mpsc::Sender<(Command, Reply)>>> = OnceLock::new();
    let spawner = SPAWNER.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<(Command, Reply)>();
        std::thread::Builder::new()
            .name("test-rig-spawner".into())
            .spawn(move || {
                for (mut cmd, reply) in rx {
                    let _ = reply.send(cmd.spawn());
                }
            })
            .ok()
            .map(|_| tx)
    });
    match spawner {
        Some(tx) => {
            let (reply_tx, reply_rx) = mpsc::channel();
            tx.send((cmd, reply_tx)).map_err(|_| io::Error::other("test-rig spawner thread is gone"))?;
            reply_rx.recv().map_err(|_| io::Error::other("test-rig spawner thread is gone"))?
        }
        // Could not start the thread: still spawn, with thread-scoped
        // parent-death semantics (better than failing the test).
        None => cmd.spawn(),
    }
}
