//! Getting a [`VirtualMachine`]: attach to a listening agent, listen for an agent that attaches,
//! or launch a JVM with an agent.

use std::process::Stdio;
use std::time::Duration;

use jdwp_transports::{AsyncSocketConnection, AsyncSocketListener, attach_async, listen_async};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{ChildStderr, ChildStdout, Command};

use crate::connection::Connection;
use crate::error::{JdiError, Result};
use crate::vm::VirtualMachine;

/// How long connecting and the handshake may take unless told otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

async fn start(conn: AsyncSocketConnection) -> Result<VirtualMachine> {
    let (reader, writer) = conn.into_split();
    let (conn, events) = Connection::start(reader, writer);
    VirtualMachine::start(conn, events).await
}

/// Attaches to an agent listening at `address` (`port`, `host:port`, `[::1]:port`).
pub async fn attach(address: &str, timeout: Option<Duration>) -> Result<VirtualMachine> {
    let conn = attach_async(address, Some(timeout.unwrap_or(DEFAULT_TIMEOUT))).await?;
    start(conn).await
}

/// Listens for an agent started with `server=n` to connect.
pub struct Listener {
    inner: AsyncSocketListener,
}

impl Listener {
    /// Binds `address` (port 0 picks a free port; see [`Listener::port`]).
    pub async fn bind(address: &str) -> Result<Listener> {
        Ok(Listener { inner: listen_async(address).await? })
    }

    pub fn port(&self) -> u16 {
        self.inner.local_addr().port()
    }

    /// Waits for one agent to connect and completes the handshake.
    pub async fn accept(&self, timeout: Option<Duration>) -> Result<VirtualMachine> {
        let conn = self.inner.accept_with_timeout(timeout).await?;
        start(conn).await
    }
}

/// What to launch: `java [jvm_options] -agentlib:jdwp=... main_class [args]`.
#[derive(Debug, Clone)]
pub struct LaunchOptions {
    /// The `java` executable (default: `$JAVA_HOME/bin/java`, else `java` on the PATH).
    pub java: Option<std::path::PathBuf>,
    pub jvm_options: Vec<String>,
    pub main_class: String,
    pub args: Vec<String>,
    /// `None`: the JDK's agent (`-agentlib:jdwp`); `Some(path)`: an agent library (`-agentpath`).
    pub agent_path: Option<std::path::PathBuf>,
    pub timeout: Duration,
}

impl LaunchOptions {
    pub fn new(main_class: &str) -> LaunchOptions {
        LaunchOptions {
            java: None,
            jvm_options: Vec::new(),
            main_class: main_class.to_string(),
            args: Vec::new(),
            agent_path: None,
            timeout: DEFAULT_TIMEOUT,
        }
    }
}

/// A launched VM with the streams of its process.
pub struct Launched {
    pub vm: VirtualMachine,
    /// The debuggee's stdout after the agent's "Listening" line.
    pub stdout: BufReader<ChildStdout>,
    pub stderr: ChildStderr,
}

fn java_executable(opts: &LaunchOptions) -> std::path::PathBuf {
    if let Some(java) = &opts.java {
        return java.clone();
    }
    match std::env::var_os("JAVA_HOME") {
        Some(home) => std::path::Path::new(&home).join("bin").join("java"),
        None => "java".into(),
    }
}

/// Starts a JVM suspended under a JDWP agent listening on a free loopback port, and attaches.
/// The process is killed when the last handle on the VM goes away.
pub async fn launch(opts: &LaunchOptions) -> Result<Launched> {
    let agent_opts = "transport=dt_socket,server=y,suspend=y,address=127.0.0.1:0";
    let agent = match &opts.agent_path {
        None => format!("-agentlib:jdwp={agent_opts}"),
        Some(path) => format!("-agentpath:{}={agent_opts}", path.display()),
    };
    let java = java_executable(opts);
    let mut child = Command::new(&java)
        .arg(agent)
        .args(&opts.jvm_options)
        .arg(&opts.main_class)
        .args(&opts.args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| JdiError::Launch(format!("starting {}: {e}", java.display())))?;
    let (Some(stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
        return Err(JdiError::Launch("the child's output was not captured".into()));
    };
    let mut stdout = BufReader::new(stdout);
    let port = tokio::time::timeout(opts.timeout, read_listening_port(&mut stdout))
        .await
        .map_err(|_| JdiError::Launch(format!("no 'Listening for transport' line within {:?}", opts.timeout)))??;
    let vm = attach(&format!("127.0.0.1:{port}"), Some(opts.timeout)).await?;
    vm.set_process(child);
    Ok(Launched { vm, stdout, stderr })
}

/// Reads lines until the agent's `Listening for transport dt_socket at address: N`.
async fn read_listening_port(stdout: &mut BufReader<ChildStdout>) -> Result<u16> {
    let mut line = String::new();
    loop {
        line.clear();
        let n = stdout.read_line(&mut line).await.map_err(|e| JdiError::Launch(format!("reading stdout: {e}")))?;
        if n == 0 {
            return Err(JdiError::Launch("the JVM exited before its agent listened".into()));
        }
        if let Some(rest) = line.trim().strip_prefix("Listening for transport dt_socket at address: ") {
            return rest
                .rsplit(':')
                .next()
                .and_then(|p| p.parse().ok())
                .ok_or_else(|| JdiError::Launch(format!("unexpected listening line: {line}")));
        }
    }
}
