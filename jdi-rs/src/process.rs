//! The JVM process behind a launched [`VirtualMachine`](crate::VirtualMachine).
//!
//! Each launched process gets one plain thread that forks it and then waits for it, so that:
//! - it is always reaped (no zombies), whether or not a tokio runtime is still running;
//! - it dies with the debugger: the fork sets `PR_SET_PDEATHSIG`, which Linux ties to the forking
//!   *thread*, and this thread lives exactly as long as the child;
//! - killing never signals a recycled pid: the thread waits with `WNOWAIT` and reaps only under the
//!   same lock that [`Process::kill`] takes.

use std::io;
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command, ExitStatus};
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::{oneshot, watch};

use crate::error::{JdiError, Result};

/// A handle on a launched JVM process (cheap to clone). Holding one does not keep the process
/// alive: it is killed when the last handle on its [`VirtualMachine`](crate::VirtualMachine) goes.
#[derive(Clone)]
pub struct Process {
    shared: Arc<Shared>,
}

struct Shared {
    pid: u32,
    command_line: String,
    state: Mutex<State>,
    exited: watch::Sender<bool>,
}

struct State {
    child: Child,
    /// Set when reaped; `Err` if waiting failed (then the pid is not ours any more either).
    status: Option<Result<ExitStatus, String>>,
}

/// The standard streams of a freshly spawned process.
pub(crate) struct Pipes {
    pub stdin: ChildStdin,
    pub stdout: ChildStdout,
    pub stderr: ChildStderr,
}

impl std::fmt::Debug for Process {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Process").field("pid", &self.shared.pid).field("status", &self.try_status()).finish()
    }
}

impl Process {
    /// Spawns `cmd` (stdio piped) from a new reaper thread. `command_line` is kept for messages.
    pub(crate) async fn spawn(mut cmd: Command, command_line: String) -> io::Result<(Process, Pipes)> {
        cmd.stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        // SAFETY: getpid has no preconditions.
        let parent = unsafe { libc::getpid() };
        // SAFETY: the closure runs between fork and exec and only makes async-signal-safe calls
        // (prctl, getppid) and builds errors from raw errno values, which does not allocate.
        unsafe {
            cmd.pre_exec(move || {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong) != 0 {
                    return Err(io::Error::last_os_error());
                }
                // The debugger may have died between fork and prctl; nobody would signal us then.
                if libc::getppid() != parent {
                    return Err(io::Error::from_raw_os_error(libc::ESRCH));
                }
                Ok(())
            });
        }
        let (tx, rx) = oneshot::channel();
        std::thread::Builder::new().name("jdi-jvm-reaper".into()).spawn(move || {
            let mut child = match cmd.spawn() {
                Ok(child) => child,
                Err(e) => {
                    let _ = tx.send(Err(e));
                    return;
                }
            };
            let (Some(stdin), Some(stdout), Some(stderr)) =
                (child.stdin.take(), child.stdout.take(), child.stderr.take())
            else {
                // Unreachable with piped stdio; never leave the child behind.
                let _ = child.kill();
                let _ = child.wait();
                let _ = tx.send(Err(io::Error::other("the child's standard streams were not captured")));
                return;
            };
            let shared = Arc::new(Shared {
                pid: child.id(),
                command_line,
                state: Mutex::new(State { child, status: None }),
                exited: watch::Sender::new(false),
            });
            if tx.send(Ok((Process { shared: shared.clone() }, Pipes { stdin, stdout, stderr }))).is_err() {
                // The launch was abandoned while we forked.
                Process { shared: shared.clone() }.kill();
            }
            reap(&shared);
        })?;
        rx.await.unwrap_or_else(|_| Err(io::Error::other("the process spawner thread died")))
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.shared.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.shared.pid
    }

    /// The command line it was started with (for messages).
    pub fn command_line(&self) -> &str {
        &self.shared.command_line
    }

    /// Kills the process (`SIGKILL`) unless it has already exited; does not wait.
    pub fn kill(&self) {
        let mut state = self.lock();
        if state.status.is_none() {
            // Not reaped yet (that happens only under this lock), so the pid is still our child's.
            let _ = state.child.kill();
        }
    }

    /// The exit status, if the process has exited (and been reaped).
    pub fn try_status(&self) -> Option<ExitStatus> {
        self.lock().status.as_ref().and_then(|s| s.as_ref().ok().copied())
    }

    /// Whether the process has exited.
    pub fn has_exited(&self) -> bool {
        *self.shared.exited.borrow()
    }

    /// Waits until the process has exited and been reaped.
    pub async fn wait(&self) -> Result<ExitStatus> {
        let mut exited = self.shared.exited.subscribe();
        // The sender lives in `shared`, which we hold, so this cannot fail.
        let _ = exited.wait_for(|&done| done).await;
        match &self.lock().status {
            Some(Ok(status)) => Ok(*status),
            Some(Err(e)) => Err(JdiError::Launch(format!("waiting for process {}: {e}", self.shared.pid))),
            None => Err(JdiError::Launch(format!("process {} was not reaped", self.shared.pid))),
        }
    }
}

/// Blocks until the child exits, then reaps it and announces the exit.
fn reap(shared: &Shared) {
    loop {
        // SAFETY: a zeroed siginfo_t is a valid out-parameter for waitid.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: plain syscall on our own child's pid with a valid out-pointer; WNOWAIT leaves
        // the child unreaped so the pid cannot be recycled before we hold the lock.
        let r = unsafe { libc::waitid(libc::P_PID, shared.pid, &mut info, libc::WEXITED | libc::WNOWAIT) };
        if r == 0 || io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
            break;
        }
    }
    {
        let mut state = shared.state.lock().unwrap_or_else(|e| e.into_inner());
        let status = state.child.wait().map_err(|e| e.to_string());
        tracing::debug!(pid = shared.pid, ?status, "launched JVM exited");
        state.status = Some(status);
    }
    shared.exited.send_replace(true);
}

/// Kills the process when dropped; owned by the connection of a launched VM.
pub(crate) struct KillOnDrop(pub Process);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        self.0.kill();
    }
}
