//! Launching a JVM as a debuggee and watching its output.

use std::{
    ffi::{OsStr, OsString},
    io::{self, ErrorKind, Read},
    net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener, ToSocketAddrs},
    os::unix::process::ExitStatusExt,
    path::PathBuf,
    process::{Child, Command, ExitStatus, Stdio},
    sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError},
    thread::JoinHandle,
    time::{Duration, Instant},
};

use crate::{
    error::{Error, IoContext, Result},
    java::{fixtures, java_tool, virtual_main_requested, virtual_main_wrapper},
    spawn::spawn_tied_to_process,
};

/// JDK agent options used by [`Agent::jdk_default`] and by default in
/// [`Debuggee::builder`]: the VM listens on an ephemeral loopback port
/// (reported by [`Debuggee::port`]) and stays suspended until a debugger
/// resumes it.
pub const DEFAULT_JDK_AGENT_OPTIONS: &str = "transport=dt_socket,server=y,suspend=y,address=127.0.0.1:0";

/// Default time allowed for the JVM to start listening. Generous on purpose:
/// CI machines are small and busy, and a slow start is not a failure.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// How long to wait for a SIGKILLed JVM to be reaped before giving up.
const KILL_TIMEOUT: Duration = Duration::from_secs(30);

/// Text the JDK's socket transport (and our agent) prints once listening.
const LISTENING: &str = "Listening for transport";

/// Environment variables that inject options into every JVM. Removed from
/// the debuggee's environment so tests behave the same on every machine
/// (re-add one with [`DebuggeeBuilder::env`] if a test needs it).
const JVM_ENV_OPTIONS: &[&str] = &["JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS"];

/// Which JDWP agent the debuggee is started with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Agent {
    /// No agent: a plain JVM.
    None,
    /// The JDK's agent: `-agentlib:jdwp=<options>`.
    Jdk(String),
    /// An agent library by path (e.g. ours): `-agentpath:<lib>=<options>`.
    Path(PathBuf, String),
}

impl Agent {
    /// The JDK agent with [`DEFAULT_JDK_AGENT_OPTIONS`].
    pub fn jdk_default() -> Self {
        Agent::Jdk(DEFAULT_JDK_AGENT_OPTIONS.into())
    }

    /// The JDK agent with the given options.
    pub fn jdk(options: impl Into<String>) -> Self {
        Agent::Jdk(options.into())
    }

    /// An agent library at `lib` with the given options.
    pub fn path(lib: impl Into<PathBuf>, options: impl Into<String>) -> Self {
        Agent::Path(lib.into(), options.into())
    }

    /// The agent's option string, if there is an agent.
    pub fn options(&self) -> Option<&str> {
        match self {
            Agent::None => None,
            Agent::Jdk(o) | Agent::Path(_, o) => Some(o),
        }
    }

    /// The same agent with [`FREE_PORT`] in its options replaced by `port`.
    fn with_port(&self, port: u16) -> Agent {
        let port = port.to_string();
        match self {
            Agent::None => Agent::None,
            Agent::Jdk(o) => Agent::Jdk(o.replace(FREE_PORT, &port)),
            Agent::Path(lib, o) => Agent::Path(lib.clone(), o.replace(FREE_PORT, &port)),
        }
    }

    /// The JVM command-line option that loads this agent.
    pub fn jvm_option(&self) -> Option<OsString> {
        match self {
            Agent::None => None,
            Agent::Jdk(o) => Some(format!("-agentlib:jdwp={o}").into()),
            Agent::Path(lib, o) => {
                let mut opt = OsString::from("-agentpath:");
                opt.push(lib);
                opt.push("=");
                opt.push(o);
                Some(opt)
            }
        }
    }

    /// Whether the agent will print a "Listening for transport ..." line at
    /// startup: a socket server that is not `quiet=y` and does not defer
    /// listening until an exception (`onthrow`/`onuncaught`).
    pub fn prints_listen_line(&self) -> bool {
        let Some(options) = self.options() else {
            return false;
        };
        let (mut server, mut quiet, mut socket, mut deferred) = (false, false, true, false);
        for kv in options.split(',') {
            match kv.split_once('=') {
                Some(("server", v)) => server = v == "y",
                Some(("quiet", v)) => quiet = v == "y",
                Some(("transport", t)) => socket = t == "dt_socket",
                Some(("onthrow" | "onuncaught" | "launch", _)) => deferred = true,
                _ => {}
            }
        }
        server && !quiet && socket && !deferred
    }
}

impl Default for Agent {
    fn default() -> Self {
        Agent::jdk_default()
    }
}

/// Which output stream(s) of the JVM to look at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    /// Standard output.
    Stdout,
    /// Standard error.
    Stderr,
    /// Either of them.
    Any,
}

/// Configures and starts a [`Debuggee`]. Created by [`Debuggee::builder`].
#[derive(Debug, Clone)]
#[must_use = "call .spawn() to start the JVM"]
pub struct DebuggeeBuilder {
    main_class: String,
    args: Vec<OsString>,
    classpath: Option<OsString>,
    jvm_options: Vec<OsString>,
    agent: Agent,
    expect_listening: Option<bool>,
    startup_timeout: Duration,
    env: Vec<(OsString, OsString)>,
    current_dir: Option<PathBuf>,
    /// Run `main` in a virtual thread; `None`: as `JDBG_TEST_VIRTUAL_MAIN` says.
    virtual_main: Option<bool>,
}

impl DebuggeeBuilder {
    /// Runs `main` in a virtual thread named `main` (JDK 21+), or in the platform main thread,
    /// whatever `JDBG_TEST_VIRTUAL_MAIN` says.
    pub fn virtual_main(mut self, virtual_main: bool) -> Self {
        self.virtual_main = Some(virtual_main);
        self
    }

    /// Appends a program argument (passed to `main`).
    pub fn arg(mut self, arg: impl Into<OsString>) -> Self {
        self.args.push(arg.into());
        self
    }

    /// Appends program arguments.
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Sets the classpath (default: the compiled fixtures, see
    /// [`crate::fixtures()`]).
    pub fn classpath(mut self, classpath: impl Into<OsString>) -> Self {
        self.classpath = Some(classpath.into());
        self
    }

    /// Appends a JVM option (e.g. `-Xint`), placed before the main class.
    pub fn jvm_option(mut self, option: impl Into<OsString>) -> Self {
        self.jvm_options.push(option.into());
        self
    }

    /// Appends JVM options.
    pub fn jvm_options<I, S>(mut self, options: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.jvm_options.extend(options.into_iter().map(Into::into));
        self
    }

    /// Sets the agent (default: [`Agent::jdk_default`]).
    pub fn agent(mut self, agent: Agent) -> Self {
        self.agent = agent;
        self
    }

    /// Overrides whether [`DebuggeeBuilder::spawn`] waits for the agent's
    /// "Listening for transport ..." line (default:
    /// [`Agent::prints_listen_line`]).
    pub fn expect_listening(mut self, expect: bool) -> Self {
        self.expect_listening = Some(expect);
        self
    }

    /// How long [`DebuggeeBuilder::spawn`] waits for the listening line
    /// (default [`DEFAULT_TIMEOUT`]).
    pub fn startup_timeout(mut self, timeout: Duration) -> Self {
        self.startup_timeout = timeout;
        self
    }

    /// Sets an environment variable for the JVM.
    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }

    /// Sets the JVM's working directory (default: the test's).
    pub fn current_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.current_dir = Some(dir.into());
        self
    }

    /// The full command line: `java [jvm options] [agent] -cp CP MAIN [args]`, or with
    /// [`VIRTUAL_MAIN_VAR`](crate::VIRTUAL_MAIN_VAR) set, `... -cp CP:WRAPPER VirtualMainWrapper
    /// MAIN [args]`, which runs `MAIN` in a virtual thread named `main`.
    fn command(&self) -> Result<(Command, String)> {
        let java = java_tool("java")?;
        let mut classpath = match &self.classpath {
            Some(cp) => cp.clone(),
            None => fixtures()?.as_os_str().to_owned(),
        };
        let mut argv: Vec<OsString> = self.jvm_options.clone();
        argv.extend(self.agent.jvm_option());
        argv.push("-cp".into());
        if self.virtual_main.unwrap_or_else(virtual_main_requested) {
            let (wrapper, dir) = virtual_main_wrapper()?;
            classpath.push(":");
            classpath.push(dir);
            argv.push(classpath);
            argv.push(wrapper.into());
        } else {
            argv.push(classpath);
        }
        argv.push(self.main_class.clone().into());
        argv.extend(self.args.iter().cloned());

        let mut cmd = Command::new(&java);
        cmd.args(&argv).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
        for var in JVM_ENV_OPTIONS {
            cmd.env_remove(var);
        }
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        if let Some(dir) = &self.current_dir {
            cmd.current_dir(dir);
        }
        let shown = std::iter::once(java.as_os_str())
            .chain(argv.iter().map(OsString::as_os_str))
            .map(shell_word)
            .collect::<Vec<_>>()
            .join(" ");
        Ok((cmd, shown))
    }

    /// Starts the JVM. If the agent listens (see
    /// [`DebuggeeBuilder::expect_listening`]), waits until it prints its
    /// address; fails with the JVM's output if it exits or stays silent.
    /// Agent options with [`FREE_PORT`] get a free port, and another one if
    /// the agent finds the first taken.
    pub fn spawn(self) -> Result<Debuggee> {
        self.spawn_picking_ports(free_port)
    }

    /// [`DebuggeeBuilder::spawn`], with `pick` choosing the ports for [`FREE_PORT`].
    fn spawn_picking_ports(self, mut pick: impl FnMut() -> u16) -> Result<Debuggee> {
        if !self.agent.options().is_some_and(|o| o.contains(FREE_PORT)) {
            return self.spawn_once();
        }
        let mut attempt = 1;
        loop {
            let mut builder = self.clone();
            builder.agent = self.agent.with_port(pick());
            match builder.spawn_once() {
                Err(e @ Error::Exited { .. })
                    if attempt < FREE_PORT_ATTEMPTS && e.to_string().contains("Address already in use") =>
                {
                    tracing::debug!(attempt, "the agent's port was taken meanwhile; starting again");
                    attempt += 1;
                }
                result => return result,
            }
        }
    }

    fn spawn_once(self) -> Result<Debuggee> {
        let (cmd, command) = self.command()?;
        tracing::debug!(%command, "starting debuggee");
        let mut child = spawn_tied_to_process(cmd).context(|| format!("spawning `{command}`"))?;
        let pid = child.id();
        let shared = Arc::new(Shared::default());
        let echo = std::env::var_os("TEST_RIG_ECHO").is_some_and(|v| !v.is_empty() && v != "0");
        let stdout = child.stdout.take().expect("stdout is piped");
        let stderr = child.stderr.take().expect("stderr is piped");
        // Reader threads are detached: they end at EOF, which comes when the
        // JVM dies, and must never block Drop.
        start_reader(stdout, Stream::Stdout, pid, &shared, echo)?;
        start_reader(stderr, Stream::Stderr, pid, &shared, echo)?;
        let waiter = {
            let shared = Arc::clone(&shared);
            std::thread::Builder::new()
                .name(format!("jvm-{pid}-waiter"))
                .spawn(move || wait_and_reap(child, &shared))
                .context(|| "starting waiter thread".into())?
        };
        let mut debuggee = Debuggee { pid, command, listen: None, shared, waiter: Some(waiter) };
        if self.expect_listening.unwrap_or_else(|| self.agent.prints_listen_line()) {
            // On error `debuggee` is dropped here, which kills the JVM.
            let line = debuggee.wait_for_line(LISTENING, self.startup_timeout)?;
            let addr = parse_listen_line(&line)?;
            tracing::debug!(pid, %addr, "debuggee listening");
            debuggee.listen = Some(addr);
        }
        Ok(debuggee)
    }
}

/// A running JVM started by the rig.
///
/// Its stdout and stderr are captured in the background. Dropping it kills
/// (SIGKILL) and reaps the JVM, and prints the captured output to stderr if
/// the test is panicking (or if `TEST_RIG_SHOW_OUTPUT` is set). The JVM also
/// gets SIGKILL if the test process dies. Set `TEST_RIG_ECHO=1` to see the
/// JVM's output live, line by line, while a test runs.
#[derive(Debug)]
pub struct Debuggee {
    pid: u32,
    command: String,
    listen: Option<SocketAddr>,
    shared: Arc<Shared>,
    waiter: Option<JoinHandle<()>>,
}

impl Debuggee {
    /// Starts configuring a JVM that runs `main_class` (e.g. `"Demo"`), from
    /// the fixtures, with the JDK agent and [`DEFAULT_JDK_AGENT_OPTIONS`].
    pub fn builder(main_class: impl Into<String>) -> DebuggeeBuilder {
        DebuggeeBuilder {
            main_class: main_class.into(),
            args: Vec::new(),
            classpath: None,
            jvm_options: Vec::new(),
            agent: Agent::default(),
            expect_listening: None,
            startup_timeout: DEFAULT_TIMEOUT,
            env: Vec::new(),
            current_dir: None,
            virtual_main: None,
        }
    }

    /// Process id of the JVM.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// The command line the JVM was started with (for messages).
    pub fn command_line(&self) -> &str {
        &self.command
    }

    /// The address the agent listens on, if it printed one at startup.
    /// Wildcard addresses are reported as `127.0.0.1`, ready to connect to.
    pub fn listen_address(&self) -> Option<SocketAddr> {
        self.listen
    }

    /// The address the agent listens on.
    ///
    /// # Panics
    /// If the debuggee was started without a listening agent.
    pub fn address(&self) -> SocketAddr {
        self.listen.unwrap_or_else(|| panic!("debuggee was not started with a listening agent: {}", self.command))
    }

    /// The port the agent listens on.
    ///
    /// # Panics
    /// If the debuggee was started without a listening agent.
    pub fn port(&self) -> u16 {
        self.address().port()
    }

    /// Everything the JVM wrote to stdout so far (lossy UTF-8).
    pub fn stdout_text(&self) -> String {
        String::from_utf8_lossy(&self.shared.lock().stdout).into_owned()
    }

    /// Everything the JVM wrote to stderr so far (lossy UTF-8).
    pub fn stderr_text(&self) -> String {
        String::from_utf8_lossy(&self.shared.lock().stderr).into_owned()
    }

    /// Both streams so far, labelled, for assertion messages.
    pub fn output_text(&self) -> String {
        self.shared.lock().render()
    }

    /// Waits until stdout or stderr has a line containing `needle` and
    /// returns that line (without the line terminator). Fails if the output
    /// ends or `timeout` passes first; the error includes all output.
    pub fn wait_for_line(&self, needle: &str, timeout: Duration) -> Result<String> {
        self.wait_for_line_in(Stream::Any, needle, timeout)
    }

    /// Like [`Debuggee::wait_for_line`], on the chosen stream(s). Lines
    /// printed before the call count too: the whole output is searched.
    pub fn wait_for_line_in(&self, stream: Stream, needle: &str, timeout: Duration) -> Result<String> {
        let deadline = Instant::now() + timeout;
        let mut state = self.shared.lock();
        loop {
            if let Some(line) = state.find_line(stream, needle) {
                return Ok(line);
            }
            if state.ended(stream) {
                drop(state);
                // The JVM is exiting; its status makes the error clearer.
                let status = self
                    .wait_for_exit(Duration::from_secs(10))
                    .map_or_else(|| "still running".to_owned(), |s| s.to_string());
                return Err(Error::Exited {
                    expected: format!("a line containing {needle:?}"),
                    status,
                    command: self.command.clone(),
                    output: self.output_text(),
                });
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(Error::Timeout {
                    expected: format!("a line containing {needle:?}"),
                    timeout,
                    command: self.command.clone(),
                    output: state.render(),
                });
            }
            state = self.shared.wait(state, deadline - now);
        }
    }

    /// Waits up to `timeout` for the JVM to exit; `None` if it is still
    /// running. Once exited, returns the same status on every call.
    pub fn wait_for_exit(&self, timeout: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + timeout;
        let mut drain_deadline: Option<Instant> = None;
        let mut state = self.shared.lock();
        loop {
            let now = Instant::now();
            if let Some(status) = state.exit {
                // The reader threads may still be draining the pipes; give
                // them a moment so callers see everything the JVM wrote.
                // (A grandchild holding the pipes open must not stall us.)
                let drained = *drain_deadline.get_or_insert(now + Duration::from_secs(5));
                if state.ended(Stream::Any) || now >= drained {
                    return Some(status);
                }
                state = self.shared.wait(state, drained - now);
                continue;
            }
            if now >= deadline {
                return None;
            }
            state = self.shared.wait(state, deadline - now);
        }
    }

    /// The exit status if the JVM has exited, without waiting.
    pub fn exit_status(&self) -> Option<ExitStatus> {
        self.shared.lock().exit
    }

    /// Kills the JVM with SIGKILL (if still running) and waits until it is
    /// reaped. Returns its exit status, or `None` if it did not die within
    /// 30 s (e.g. stuck in the kernel).
    pub fn kill(&mut self) -> Option<ExitStatus> {
        {
            let state = self.shared.lock();
            if state.exit.is_none() {
                // The waiter reaps the child only while holding this lock,
                // so the pid still belongs to our (possibly zombie) child
                // here and cannot have been reused by another process.
                // SAFETY: kill has no memory-safety preconditions.
                unsafe { libc::kill(self.pid as libc::pid_t, libc::SIGKILL) };
            }
        }
        let status = self.wait_for_exit(KILL_TIMEOUT);
        // Join only once reaped: then the waiter is finishing and cannot block us.
        if let Some(waiter) = self.waiter.take_if(|_| status.is_some()) {
            let _ = waiter.join();
        }
        status
    }
}

impl Drop for Debuggee {
    fn drop(&mut self) {
        let status = self.kill();
        if status.is_none() {
            eprintln!("test-rig: JVM {} did not die within {KILL_TIMEOUT:?} of SIGKILL", self.pid);
        }
        let show = std::env::var_os("TEST_RIG_SHOW_OUTPUT").is_some_and(|v| !v.is_empty());
        if std::thread::panicking() || show {
            eprintln!(
                "==== test-rig: output of JVM {} ({}) ====\ncommand: {}\n{}==== end of JVM {} output ====",
                self.pid,
                status.map_or_else(|| "still running".to_owned(), |s| s.to_string()),
                self.command,
                self.output_text(),
                self.pid,
            );
        }
        // Our agent's debug builds report a broken lock order on stderr (jdwp-agent's
        // `agent/lock_order.rs`): a test that saw one fails, whatever else it checked.
        let stderr = self.stderr_text();
        let violations: Vec<&str> = stderr.lines().filter(|l| l.contains("lock order violated")).collect();
        if !violations.is_empty() && !std::thread::panicking() {
            panic!("the agent in JVM {} reported lock-order violations:\n{}", self.pid, violations.join("\n"));
        }
    }
}

/// In agent options, stands for a fixed port the rig picks when it starts the JVM: for an agent
/// that must keep one port across sessions (the JDK's listens anew after a detach, on a new port
/// if given port 0). The port is free when picked, but something else may take it before the JVM
/// binds it; then [`DebuggeeBuilder::spawn`] starts the JVM again on another one.
pub const FREE_PORT: &str = "{free_port}";

/// How many times [`DebuggeeBuilder::spawn`] starts a JVM whose [`FREE_PORT`] was taken meanwhile.
const FREE_PORT_ATTEMPTS: usize = 3;

/// A free TCP port on 127.0.0.1, for setups that need a fixed port (e.g.
/// `server=n`, where the debugger listens and the JVM connects). The port is
/// released before returning, so another process could take it in between;
/// prefer port 0 where the listener can report its own port, and [`FREE_PORT`]
/// in agent options.
///
/// # Panics
/// If no port can be bound.
pub fn free_port() -> u16 {
    TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or_else(|e| panic!("cannot bind 127.0.0.1:0: {e}"))
}

/// Output and exit state shared by the reader/waiter threads and the
/// `Debuggee`; every change is announced on the condvar so waiters never poll.
#[derive(Default, Debug)]
struct Shared {
    state: Mutex<State>,
    changed: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock cannot leave State inconsistent
        // (it is only appended to), so poisoning is ignored.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn wait<'a>(&self, guard: MutexGuard<'a, State>, timeout: Duration) -> MutexGuard<'a, State> {
        self.changed.wait_timeout(guard, timeout).unwrap_or_else(PoisonError::into_inner).0
    }

    fn update(&self, f: impl FnOnce(&mut State)) {
        f(&mut self.lock());
        self.changed.notify_all();
    }
}

#[derive(Default, Debug)]
struct State {
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    stdout_eof: bool,
    stderr_eof: bool,
    exit: Option<ExitStatus>,
}

impl State {
    fn find_line(&self, stream: Stream, needle: &str) -> Option<String> {
        let search = |buf: &[u8], eof: bool| {
            let text = String::from_utf8_lossy(buf);
            let mut lines: Vec<&str> = text.split('\n').collect();
            // The last piece is an unfinished line unless the stream ended;
            // matching it early could cut e.g. a port number in half.
            let last = lines.pop().unwrap_or_default();
            if eof {
                lines.push(last);
            }
            lines.into_iter().map(|l| l.strip_suffix('\r').unwrap_or(l)).find(|l| l.contains(needle)).map(str::to_owned)
        };
        let out = || search(&self.stdout, self.stdout_eof);
        let err = || search(&self.stderr, self.stderr_eof);
        match stream {
            Stream::Stdout => out(),
            Stream::Stderr => err(),
            Stream::Any => out().or_else(err),
        }
    }

    /// No more output can arrive on `stream`.
    fn ended(&self, stream: Stream) -> bool {
        match stream {
            Stream::Stdout => self.stdout_eof,
            Stream::Stderr => self.stderr_eof,
            Stream::Any => self.stdout_eof && self.stderr_eof,
        }
    }

    fn render(&self) -> String {
        let block = |name: &str, buf: &[u8]| {
            let text = String::from_utf8_lossy(buf);
            let nl = if text.is_empty() || text.ends_with('\n') { "" } else { "\n" };
            format!("--- {name} ---\n{text}{nl}")
        };
        block("stdout", &self.stdout) + &block("stderr", &self.stderr)
    }
}

fn start_reader(
    source: impl Read + Send + 'static,
    stream: Stream,
    pid: u32,
    shared: &Arc<Shared>,
    echo: bool,
) -> Result<()> {
    let shared = Arc::clone(shared);
    let name = if stream == Stream::Stdout { "stdout" } else { "stderr" };
    std::thread::Builder::new()
        .name(format!("jvm-{pid}-{name}"))
        .spawn(move || read_stream(source, stream, pid, &shared, echo))
        .context(|| format!("starting {name} reader thread"))?;
    Ok(())
}

fn read_stream(mut source: impl Read, stream: Stream, pid: u32, shared: &Shared, echo: bool) {
    let mut buf = [0u8; 8192];
    let mut pending = Vec::new(); // unfinished line for echo
    loop {
        match source.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                let chunk = &buf[..n];
                shared.update(|s| match stream {
                    Stream::Stderr => s.stderr.extend_from_slice(chunk),
                    _ => s.stdout.extend_from_slice(chunk),
                });
                if echo {
                    pending.extend_from_slice(chunk);
                    while let Some(i) = pending.iter().position(|&b| b == b'\n') {
                        let line: Vec<u8> = pending.drain(..=i).collect();
                        eprint!("[jvm {pid} {stream:?}] {}", String::from_utf8_lossy(&line));
                    }
                }
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => {
                tracing::warn!(pid, ?stream, error = %e, "reading JVM output failed");
                break;
            }
        }
    }
    if echo && !pending.is_empty() {
        eprintln!("[jvm {pid} {stream:?}] {}", String::from_utf8_lossy(&pending));
    }
    shared.update(|s| match stream {
        Stream::Stderr => s.stderr_eof = true,
        _ => s.stdout_eof = true,
    });
}

/// Waits for the child to exit, then reaps it and publishes the status.
///
/// The wait uses `waitid(WNOWAIT)`, which leaves the child a zombie, and the
/// reaping happens under the state lock: [`Debuggee::kill`] checks the state
/// under the same lock before sending SIGKILL, so it can never signal a pid
/// that was reaped and reused by an unrelated process.
fn wait_and_reap(mut child: Child, shared: &Shared) {
    let pid = child.id() as libc::id_t;
    loop {
        // SAFETY: siginfo_t is plain data, and all-zero is a valid value.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: `info` is a valid out-pointer for the duration of the call.
        let rc = unsafe { libc::waitid(libc::P_PID, pid, &mut info, libc::WEXITED | libc::WNOWAIT) };
        if rc == 0 || io::Error::last_os_error().kind() != ErrorKind::Interrupted {
            break;
        }
    }
    shared.update(|s| {
        let status = child.wait().unwrap_or_else(|e| {
            tracing::warn!(pid, error = %e, "reaping JVM failed");
            ExitStatus::from_raw(255 << 8) // reported as exit code 255
        });
        tracing::debug!(pid, %status, "debuggee exited");
        s.exit = Some(status);
    });
}

/// Parses the agent's `Listening for transport dt_socket at address: A`
/// line. `A` is a bare port (what JDK 17 prints, even for `address=HOST:N`)
/// or `host:port`; wildcard and missing hosts become 127.0.0.1.
fn parse_listen_line(line: &str) -> Result<SocketAddr> {
    let bad = || Error::BadListenLine { line: line.into() };
    let addr = line.rsplit_once("address:").map(|(_, a)| a.trim()).ok_or_else(bad)?;
    let loopback = IpAddr::V4(Ipv4Addr::LOCALHOST);
    if let Ok(port) = addr.parse::<u16>() {
        return Ok(SocketAddr::new(loopback, port));
    }
    if let Ok(mut sa) = addr.parse::<SocketAddr>() {
        if sa.ip().is_unspecified() {
            sa.set_ip(loopback);
        }
        return Ok(sa);
    }
    let (host, port) = addr.rsplit_once(':').ok_or_else(bad)?;
    let port: u16 = port.parse().map_err(|_| bad())?;
    match host {
        "" | "*" => Ok(SocketAddr::new(loopback, port)),
        _ => (host, port).to_socket_addrs().ok().and_then(|mut it| it.next()).ok_or_else(bad),
    }
}

/// Quotes a command-line word for display if it needs it.
fn shell_word(word: &OsStr) -> String {
    let s = word.to_string_lossy();
    if !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "-_=.,:/@+%".contains(c)) {
        s.into_owned()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_listen_lines() {
        let p = |l: &str| parse_listen_line(l).unwrap();
        assert_eq!(p("Listening for transport dt_socket at address: 40123"), "127.0.0.1:40123".parse().unwrap());
        assert_eq!(
            p("Listening for transport dt_socket at address: 127.0.0.1:5005"),
            "127.0.0.1:5005".parse().unwrap()
        );
        assert_eq!(p("Listening for transport dt_socket at address: *:5005"), "127.0.0.1:5005".parse().unwrap());
        assert_eq!(p("Listening for transport dt_socket at address: 0.0.0.0:5005"), "127.0.0.1:5005".parse().unwrap());
        assert!(parse_listen_line("Listening for transport dt_socket at address: x").is_err());
    }

    /// A [`FREE_PORT`] found taken by the time the agent binds it: the JVM is started again on
    /// another port. Here the first pick is a port this test keeps listening on.
    #[test]
    fn a_free_port_taken_meanwhile_is_replaced() {
        let taken = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        let taken_port = taken.local_addr().unwrap().port();
        let mut picks = Vec::new();
        let builder = Debuggee::builder("Hello")
            .agent(Agent::jdk(format!("transport=dt_socket,server=y,suspend=y,address=127.0.0.1:{FREE_PORT}")));
        let jvm = builder
            .spawn_picking_ports(|| {
                let port = if picks.is_empty() { taken_port } else { free_port() };
                picks.push(port);
                port
            })
            .expect("the second port works");
        assert_eq!((picks.len(), picks[0]), (2, taken_port), "the taken port, then another: {picks:?}");
        assert_eq!(jvm.port(), picks[1]);
        assert!(!jvm.command_line().contains(FREE_PORT), "{}", jvm.command_line());
        drop(taken);
    }

    #[test]
    fn agent_options() {
        assert!(Agent::jdk_default().prints_listen_line());
        assert!(!Agent::None.prints_listen_line());
        assert!(!Agent::jdk("transport=dt_socket,server=n,address=1234").prints_listen_line());
        assert!(!Agent::jdk(format!("{DEFAULT_JDK_AGENT_OPTIONS},quiet=y")).prints_listen_line());
        assert!(!Agent::jdk("transport=dt_socket,server=y,onuncaught=y,launch=x").prints_listen_line());
        assert_eq!(Agent::path("/x/libagent.so", "a=b").jvm_option().unwrap(), "-agentpath:/x/libagent.so=a=b");
        assert_eq!(Agent::jdk("a=b").jvm_option().unwrap(), "-agentlib:jdwp=a=b");
    }

    #[test]
    fn finds_only_complete_lines() {
        let mut s = State { stdout: b"one\nListening at address: 123".to_vec(), ..State::default() };
        assert_eq!(s.find_line(Stream::Any, "address"), None);
        s.stdout.extend_from_slice(b"45\r\n");
        assert_eq!(s.find_line(Stream::Stdout, "address").as_deref(), Some("Listening at address: 12345"));
        assert_eq!(s.find_line(Stream::Stderr, "address"), None);
        s.stderr = b"tail without newline".to_vec();
        assert_eq!(s.find_line(Stream::Any, "tail"), None);
        s.stderr_eof = true;
        assert_eq!(s.find_line(Stream::Any, "tail").as_deref(), Some("tail without newline"));
    }
}
