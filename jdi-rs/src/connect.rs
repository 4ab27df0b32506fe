//! Getting a [`VirtualMachine`]: attach to a listening agent, listen for an agent that attaches,
//! or launch a JVM with an agent. Every step has a deadline; failures say which step failed.

use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::time::Duration;

use jdwp_transports::{
    AddressError, AsyncPacketReader, HandshakeError, Host, SocketAddress, TransportError, attach_async,
    handshake_as_debugger_async, shmem::ShmemConnection,
};
use tokio::io::AsyncReadExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::process::{ChildStderr, ChildStdin, ChildStdout};
use tokio::time::Instant;

use crate::connection::Connection;
use crate::error::{JdiError, Result};
use crate::process::{KillOnDrop, Pipes, Process};
use crate::vm::VirtualMachine;

/// How long connecting (and the handshake, and the first reply) may take unless told otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// How long to collect a dead JVM's output for the error message (a grandchild may hold a pipe),
/// or to wait for a JVM we killed to be reaped.
const OUTPUT_GRACE: Duration = Duration::from_secs(2);

/// Wraps a connection whose handshake is done and asks for the ID sizes, by `deadline`.
async fn start(stream: TcpStream, deadline: Instant, what: &str) -> Result<VirtualMachine> {
    let (read, write) = stream.into_split();
    let (conn, events) = Connection::start(AsyncPacketReader::new(read), write);
    first_reply(conn, events, deadline, what).await
}

/// Like [`start`], over shared memory: a reader thread routes replies (see
/// [`Connection::start_with_reader_thread`]); dropping the connection shuts the transport down,
/// which ends that thread.
async fn start_shmem(conn: ShmemConnection, deadline: Instant, what: &str) -> Result<VirtualMachine> {
    let closer = conn.closer();
    let (read, write) = conn.into_blocking_reader_split();
    let (conn, events) = Connection::start_with_reader_thread(read, move || closer.shutdown(), write)?;
    first_reply(conn, events, deadline, what).await
}

/// Asks for the ID sizes, by `deadline`.
async fn first_reply(
    conn: Connection,
    events: tokio::sync::mpsc::UnboundedReceiver<jdwp_transports::Packet>,
    deadline: Instant,
    what: &str,
) -> Result<VirtualMachine> {
    match tokio::time::timeout_at(deadline, VirtualMachine::start(conn, events)).await {
        Ok(vm) => vm,
        Err(_) => Err(JdiError::Timeout(format!("waiting for the VM's first reply (VirtualMachine.IDSizes) {what}"))),
    }
}

/// Attaches to an agent listening at `address` (`port`, `host:port`, `[::1]:port`). `timeout`
/// (default [`DEFAULT_TIMEOUT`]) bounds connecting, the handshake and the first command.
///
/// Fails with [`JdiError::Transport`]: an I/O error for a refused connection, a handshake error
/// for a peer that is not a JDWP agent, a timeout for a silent one.
pub async fn attach(address: &str, timeout: Option<Duration>) -> Result<VirtualMachine> {
    let timeout = timeout.unwrap_or(DEFAULT_TIMEOUT);
    let deadline = Instant::now() + timeout;
    let conn = attach_async(address, Some(timeout)).await?;
    start(conn.into_stream(), deadline, &format!("after attaching to {address}")).await
}

/// Attaches over shared memory (`dt_shmem`, Linux) to an agent listening under `name`
/// (`transport=dt_shmem,server=y,address=<name>`). `timeout` (default [`DEFAULT_TIMEOUT`]) bounds
/// attaching, the handshake and the first command.
///
/// Fails with [`JdiError::Transport`]: `NotFound` when nothing listens under that name,
/// `AddrInUse` when another debugger holds it, a timeout for a silent one.
pub async fn attach_shmem(name: &str, timeout: Option<Duration>) -> Result<VirtualMachine> {
    let timeout = timeout.unwrap_or(DEFAULT_TIMEOUT);
    let deadline = Instant::now() + timeout;
    let conn = jdwp_transports::shmem::async_io::attach_async(name, Some(timeout)).await?;
    start_shmem(conn, deadline, &format!("after attaching to shared memory {name}")).await
}

/// Listens over shared memory (`dt_shmem`) for an agent started with
/// `transport=dt_shmem,server=n,address=<name>` to attach to us.
pub struct ShmemListener {
    inner: jdwp_transports::shmem::async_io::AsyncShmemListener,
}

impl ShmemListener {
    /// Creates the shared memory name (an error if a live process uses it).
    pub fn bind(name: &str) -> Result<ShmemListener> {
        Ok(ShmemListener { inner: jdwp_transports::shmem::async_io::AsyncShmemListener::bind(name)? })
    }

    pub fn name(&self) -> &str {
        self.inner.name()
    }

    /// Waits for one agent to attach and complete the handshake, then asks for the ID sizes;
    /// `timeout` (default [`DEFAULT_TIMEOUT`]) bounds it all.
    pub async fn accept(&self, timeout: Option<Duration>) -> Result<VirtualMachine> {
        let timeout = timeout.unwrap_or(DEFAULT_TIMEOUT);
        let deadline = Instant::now() + timeout;
        let conn = self.inner.accept_as_debugger(Some(timeout)).await?;
        start_shmem(conn, deadline, &format!("after accepting on shared memory {}", self.name())).await
    }
}

/// Listens for an agent started with `server=n,address=<this listener>` to connect to us.
///
/// The debugger speaks first in the handshake whichever side connected, so this is not the
/// VM-side listener of `jdwp-transports`: it accepts, then sends `JDWP-Handshake` itself.
pub struct Listener {
    inner: TcpListener,
    local_addr: SocketAddr,
}

impl Listener {
    /// Binds a `dt_socket` address (`port` and `:port` mean loopback, `*:port` every interface,
    /// `host:port`); port 0 picks a free port, see [`Listener::port`].
    pub async fn bind(address: &str) -> Result<Listener> {
        let parsed = SocketAddress::parse(address).map_err(TransportError::from)?;
        let port = parsed.port;
        let candidates: Vec<SocketAddr> = match &parsed.host {
            Host::Loopback => vec![(Ipv4Addr::LOCALHOST, port).into()],
            // Dual-stack where IPv6 exists, IPv4 otherwise.
            Host::AllInterfaces => vec![(Ipv6Addr::UNSPECIFIED, port).into(), (Ipv4Addr::UNSPECIFIED, port).into()],
            Host::Ip(ip) => vec![(*ip, port).into()],
            Host::Name(name) => {
                let resolve =
                    |reason: String| TransportError::from(AddressError::Resolve { host: name.clone(), reason });
                let mut found: Vec<SocketAddr> =
                    tokio::net::lookup_host((name.as_str(), port)).await.map_err(|e| resolve(e.to_string()))?.collect();
                // IPv4 first, as attaching does.
                found.sort_by_key(|a| a.is_ipv6());
                found.truncate(1);
                if found.is_empty() {
                    return Err(resolve("no addresses".into()).into());
                }
                found
            }
        };
        let mut first_error = None;
        for addr in candidates {
            match TcpListener::bind(addr).await {
                Ok(inner) => {
                    let local_addr = inner.local_addr().map_err(|source| TransportError::Io {
                        operation: format!("reading the address bound for {addr}"),
                        source,
                    })?;
                    tracing::debug!(%local_addr, "listening for a JVM to connect");
                    return Ok(Listener { inner, local_addr });
                }
                Err(e) => {
                    first_error
                        .get_or_insert(TransportError::Io { operation: format!("listening on {addr}"), source: e });
                }
            }
        }
        Err(first_error.map_or_else(|| JdiError::InvalidArgument(format!("nothing to bind for {address}")), Into::into))
    }

    /// The address bound, with the real port.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    pub fn port(&self) -> u16 {
        self.local_addr.port()
    }

    /// Waits for one agent to connect and complete the handshake, then asks for the ID sizes;
    /// `timeout` (default [`DEFAULT_TIMEOUT`]) bounds it all. Peers that fail the handshake are
    /// dropped and the wait goes on.
    pub async fn accept(&self, timeout: Option<Duration>) -> Result<VirtualMachine> {
        let timeout = timeout.unwrap_or(DEFAULT_TIMEOUT);
        let deadline = Instant::now() + timeout;
        let stream = self.accept_connection(deadline).await?;
        start(stream, deadline, &format!("after accepting on {}", self.local_addr)).await
    }

    async fn accept_connection(&self, deadline: Instant) -> Result<TcpStream> {
        let started = Instant::now();
        let timed_out = || {
            let waited = deadline.saturating_duration_since(started);
            JdiError::Timeout(format!("waiting {waited:?} for a JVM to connect to {}", self.local_addr))
        };
        loop {
            let accepted = tokio::time::timeout_at(deadline, self.inner.accept()).await.map_err(|_| timed_out())?;
            let (mut stream, peer) = match accepted {
                Ok(accepted) => accepted,
                // A peer that gave up before we took it.
                Err(e) if is_transient(&e) => continue,
                Err(e) => {
                    let operation = format!("accepting a connection on {}", self.local_addr);
                    return Err(TransportError::Io { operation, source: e }.into());
                }
            };
            let _ = stream.set_nodelay(true);
            let left = deadline.saturating_duration_since(Instant::now());
            match handshake_as_debugger_async(&mut stream, Some(left)).await {
                Ok(()) => {
                    tracing::debug!(%peer, "a JVM connected");
                    return Ok(stream);
                }
                Err(HandshakeError::Timeout { .. }) if Instant::now() >= deadline => return Err(timed_out()),
                Err(e) => tracing::warn!(%peer, error = %e, "dropping a peer that failed the JDWP handshake"),
            }
        }
    }
}

fn is_transient(e: &std::io::Error) -> bool {
    use std::io::ErrorKind::*;
    matches!(e.kind(), ConnectionAborted | ConnectionReset | Interrupted | WouldBlock)
}

/// What to launch: `java [jvm_options] <agent> [-cp classpath] main_class [args]`, where the
/// agent is told `transport=dt_socket,server=n,suspend=y,address=<our listener>`.
#[derive(Debug, Clone)]
pub struct LaunchOptions {
    /// The `java` executable (default: `$JAVA_HOME/bin/java`, else `java` on the `PATH`).
    pub java: Option<PathBuf>,
    /// `-cp` for the JVM (default: none, so `CLASSPATH` or the current directory).
    pub classpath: Option<String>,
    /// Options placed before the agent and the main class (`-Xint`, `-Dkey=value`...).
    pub jvm_options: Vec<String>,
    pub main_class: String,
    /// Arguments to `main`.
    pub args: Vec<String>,
    /// `None`: the JDK's agent (`-agentlib:jdwp`); `Some(path)`: an agent library (`-agentpath`).
    pub agent_path: Option<PathBuf>,
    /// Environment variables to set (on top of ours).
    pub env: Vec<(String, String)>,
    /// Environment variables to remove.
    pub env_remove: Vec<String>,
    /// The JVM's working directory (default: ours).
    pub current_dir: Option<PathBuf>,
    /// Bounds the whole launch: starting, the agent connecting, the handshake and the first reply.
    pub timeout: Duration,
    /// The agent's `includevirtualthreads=y` (JDI's launching connector argument of the same
    /// name): `AllThreads` lists virtual threads too. Default: the agent's (`n`).
    pub include_virtual_threads: bool,
}

impl LaunchOptions {
    pub fn new(main_class: &str) -> LaunchOptions {
        LaunchOptions {
            java: None,
            classpath: None,
            jvm_options: Vec::new(),
            main_class: main_class.to_string(),
            args: Vec::new(),
            agent_path: None,
            env: Vec::new(),
            env_remove: Vec::new(),
            current_dir: None,
            timeout: DEFAULT_TIMEOUT,
            include_virtual_threads: false,
        }
    }

    /// Tells the agent `includevirtualthreads=y`.
    pub fn include_virtual_threads(mut self, include: bool) -> Self {
        self.include_virtual_threads = include;
        self
    }

    pub fn java(mut self, java: impl Into<PathBuf>) -> Self {
        self.java = Some(java.into());
        self
    }

    pub fn classpath(mut self, classpath: impl Into<String>) -> Self {
        self.classpath = Some(classpath.into());
        self
    }

    pub fn jvm_option(mut self, option: impl Into<String>) -> Self {
        self.jvm_options.push(option.into());
        self
    }

    pub fn arg(mut self, arg: impl Into<String>) -> Self {
        self.args.push(arg.into());
        self
    }

    pub fn args<I: IntoIterator<Item = S>, S: Into<String>>(mut self, args: I) -> Self {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Uses the agent library at `path` instead of the JDK's.
    pub fn agent_path(mut self, path: impl Into<PathBuf>) -> Self {
        self.agent_path = Some(path.into());
        self
    }

    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }

    pub fn env_remove(mut self, key: impl Into<String>) -> Self {
        self.env_remove.push(key.into());
        self
    }

    pub fn current_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.current_dir = Some(dir.into());
        self
    }

    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    fn java_executable(&self) -> PathBuf {
        if let Some(java) = &self.java {
            return java.clone();
        }
        match std::env::var_os("JAVA_HOME").filter(|h| !h.is_empty()) {
            Some(home) => Path::new(&home).join("bin").join("java"),
            None => "java".into(),
        }
    }

    /// The command, and the command line as a shell would show it.
    fn command(&self, agent_options: &str) -> (std::process::Command, String) {
        let java = self.java_executable();
        let mut argv = self.jvm_options.clone();
        argv.push(match &self.agent_path {
            None => format!("-agentlib:jdwp={agent_options}"),
            Some(path) => format!("-agentpath:{}={agent_options}", path.display()),
        });
        if let Some(cp) = &self.classpath {
            argv.push("-cp".into());
            argv.push(cp.clone());
        }
        argv.push(self.main_class.clone());
        argv.extend(self.args.iter().cloned());
        let mut cmd = std::process::Command::new(&java);
        cmd.args(&argv);
        for key in &self.env_remove {
            cmd.env_remove(key);
        }
        for (key, value) in &self.env {
            cmd.env(key, value);
        }
        if let Some(dir) = &self.current_dir {
            cmd.current_dir(dir);
        }
        let shown: Vec<String> =
            std::iter::once(java.display().to_string()).chain(argv).map(|w| shell_word(&w)).collect();
        (cmd, shown.join(" "))
    }
}

fn shell_word(word: &str) -> String {
    if !word.is_empty() && word.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_./:=,@+%".contains(&b)) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// A launched VM, suspended at its start, with its process and standard streams. Read stdout
/// and stderr (or drop them): a JVM blocks once a pipe it writes to is full.
pub struct Launched {
    pub vm: VirtualMachine,
    /// The JVM process; it is killed when the last handle on `vm` goes (or when we die).
    pub process: Process,
    pub stdin: ChildStdin,
    pub stdout: ChildStdout,
    pub stderr: ChildStderr,
}

/// Starts a JVM suspended under a JDWP agent that connects back to a listener of ours on a free
/// loopback port (as the JDK's launching connector does), and returns the connected VM.
///
/// Fails with [`JdiError::Launch`] if `java` cannot be started, with
/// [`JdiError::ExitedBeforeConnecting`] (carrying its output) if the JVM dies first (a bad option,
/// a missing agent library), and with a timeout if its agent does not connect and answer within
/// `opts.timeout`. A JVM that was started is killed on every failure.
pub async fn launch(opts: &LaunchOptions) -> Result<Launched> {
    let deadline = Instant::now() + opts.timeout;
    let listener = Listener::bind("127.0.0.1:0").await?;
    let mut agent_options = format!("transport=dt_socket,server=n,suspend=y,address={}", listener.local_addr());
    if opts.include_virtual_threads {
        agent_options.push_str(",includevirtualthreads=y");
    }
    let (cmd, command_line) = opts.command(&agent_options);
    tracing::debug!(command = %command_line, "launching a JVM");
    let (process, pipes) = Process::spawn(cmd, command_line.clone())
        .await
        .map_err(|e| JdiError::Launch(format!("starting {}: {e}", opts.java_executable().display())))?;
    let result = connect_launched(&listener, &process, pipes, deadline, opts.timeout, &command_line).await;
    if result.is_err() {
        // Kill and reap before reporting, so a failed launch leaves nothing behind.
        process.kill();
        let _ = tokio::time::timeout(OUTPUT_GRACE, process.wait()).await;
    }
    result
}

async fn connect_launched(
    listener: &Listener,
    process: &Process,
    pipes: Pipes,
    deadline: Instant,
    timeout: Duration,
    command_line: &str,
) -> Result<Launched> {
    let io = |e: std::io::Error| JdiError::Launch(format!("registering the JVM's pipes: {e}"));
    let stdin = ChildStdin::from_std(pipes.stdin).map_err(io)?;
    let mut stdout = ChildStdout::from_std(pipes.stdout).map_err(io)?;
    let mut stderr = ChildStderr::from_std(pipes.stderr).map_err(io)?;
    let conn = tokio::select! {
        conn = listener.accept_connection(deadline) => conn.map_err(|e| match e {
            JdiError::Timeout(_) => JdiError::Timeout(format!(
                "waiting {timeout:?} for the launched JVM's agent to connect; command: {command_line}"
            )),
            e => e,
        })?,
        status = process.wait() => {
            let (mut err, mut out) = (Vec::new(), Vec::new());
            let read_both = async { tokio::join!(stderr.read_to_end(&mut err), stdout.read_to_end(&mut out)) };
            let _ = tokio::time::timeout(OUTPUT_GRACE, read_both).await;
            err.extend_from_slice(&out);
            return Err(JdiError::ExitedBeforeConnecting {
                status: status.map_or_else(|e| e.to_string(), |s| s.to_string()),
                command: command_line.to_string(),
                output: String::from_utf8_lossy(&err).into_owned(),
            });
        }
    };
    let vm = start(conn, deadline, "from the launched JVM").await?;
    vm.connection().own_process(KillOnDrop(process.clone()));
    Ok(Launched { vm, process: process.clone(), stdin, stdout, stderr })
}
