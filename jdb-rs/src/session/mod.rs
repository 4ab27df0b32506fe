//! A debugging session: the connection to the VM and the parts that hold what the user set
//! up or is looking at, each with one job: [`Position`] (current thread, frame, thread group),
//! [`Requests`] (specs, excludes, trace), [`Sources`] (source path and lines), [`Monitors`]
//! (commands run at every stop), [`History`] (`!!` and `repeat`), [`Status`] (exit status).
//! The commands (`commands/`) and the event loop (`events`) are `impl Session` blocks on them.
//!
//! Everything here talks to a [`Out`] and never to a terminal, so sessions run the same from the
//! REPL, from scripts and in tests. Commands that let the VM run (`run`, `cont`, steps) wait for
//! the next stop (or the VM's end) before they return; while one waits, an interactive session
//! can be interrupted with Ctrl-C and goes back to the prompt with the VM running.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use jdi::{EventQueue, EventRequest, EventSet, Process, StackFrame, ThreadReference, VirtualMachine};
use tokio::io::AsyncReadExt;

use crate::out::Out;
use crate::specs::Spec;
use crate::target::{Connect, Target};

mod history;
mod monitors;
mod position;
mod requests;
mod sources;
mod status;
mod vthreads;

pub use history::{History, Next};
pub use monitors::Monitors;
pub use position::Position;
pub use requests::Requests;
pub use sources::Sources;
pub use status::{EXIT_DEADLOCK, Status};

/// How long connecting and the first VM events may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(60);

/// How a session was started and how it presents itself.
#[derive(Debug, Clone)]
pub struct Config {
    /// A person at a terminal: Ctrl-C interrupts waits.
    pub interactive: bool,
    /// In scripts: how long a command may wait for the next stop.
    pub timeout: Option<Duration>,
    /// `-trackallthreads`: learn of every thread's start and end, virtual threads included.
    pub track_all_threads: bool,
}

/// Everything a session starts from (the command line's options, as far as a session needs them).
#[derive(Debug, Clone)]
pub struct SessionConfig {
    pub target: Target,
    /// The source path given (`-sourcepath`); else the VM's class path once connected.
    pub sourcepath: Option<String>,
    pub config: Config,
}

/// What the REPL's completer knows, refreshed at every stop.
#[derive(Default, Clone)]
pub struct Completions {
    pub classes: Vec<String>,
    pub locals: Vec<String>,
    pub members: Vec<String>,
    pub vm: Option<VirtualMachine>,
}

/// How long connecting waits for a suspended VM's start event (a VM that runs sends none).
pub(crate) const VM_START_GRACE: Duration = Duration::from_millis(500);

/// A live connection.
pub struct Conn {
    pub vm: VirtualMachine,
    pub events: EventQueue,
    pub process: Option<Process>,
    pub launched: bool,
    /// The tasks copying the launched JVM's output.
    pub forwarders: Vec<tokio::task::JoinHandle<()>>,
    /// The virtual threads met on this connection.
    pub virtual_threads: vthreads::VirtualThreads,
    /// An event set taken from `events` before its turn (the start event, while connecting):
    /// [`Conn::next_set`] hands it out first.
    pub(crate) held: Option<jdi::Result<EventSet>>,
}

impl Conn {
    /// The next event set: the one held back, if any, else the queue's next (cancel-safe, as
    /// the queue's own `next`).
    pub async fn next_set(&mut self) -> Option<jdi::Result<EventSet>> {
        if let Some(set) = self.held.take() {
            return Some(set);
        }
        self.events.next().await
    }
}

/// The result of one command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    Continue,
    /// `exit`/`quit`, or the VM ended.
    Quit,
}

/// How a wait for the next stop ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Waited {
    Stopped,
    /// The VM exited or disconnected.
    Ended,
    /// Ctrl-C (the VM runs on).
    Interrupted,
    TimedOut,
}

pub struct Session {
    pub out: Out,
    pub cfg: Config,
    pub(crate) target: Target,
    pub(crate) conn: Option<Conn>,
    pub(crate) position: Position,
    pub(crate) requests: Requests,
    pub(crate) sources: Sources,
    pub(crate) monitors: Monitors,
    pub(crate) history: History,
    pub status: Status,
    /// Stop at the VM start event (attach and listen do, `run` does not).
    pub(crate) stop_on_vm_start: bool,
    pub completions: Arc<Mutex<Completions>>,
}

impl Session {
    pub fn new(config: SessionConfig, out: Out) -> Session {
        Session {
            out,
            cfg: config.config,
            target: config.target,
            conn: None,
            position: Position::default(),
            requests: Requests::default(),
            sources: Sources::new(config.sourcepath.as_deref()),
            monitors: Monitors::default(),
            history: History::default(),
            status: Status::default(),
            stop_on_vm_start: false,
            completions: Arc::new(Mutex::new(Completions::default())),
        }
    }

    /// The VM, when connected.
    pub fn vm(&self) -> Option<&VirtualMachine> {
        self.conn.as_ref().map(|c| &c.vm)
    }

    pub fn is_connected(&self) -> bool {
        self.conn.is_some()
    }

    /// jdb's prompt: `main[1] ` with a current thread, `> ` without.
    pub async fn prompt_string(&self) -> String {
        match (self.position.thread(), self.conn.is_some()) {
            (Some(t), true) => match t.name().await {
                Ok(name) => format!("{name}[{}] ", self.position.frame_index() + 1),
                Err(_) => "> ".into(),
            },
            _ => "> ".into(),
        }
    }

    pub async fn print_prompt(&self) {
        if self.out.prompts() && !self.status.ended() {
            let p = self.prompt_string().await;
            self.out.prompt(&p);
        }
    }

    /// Connects at startup when attaching or listening (launching waits for `run`, or for the
    /// caller's `run` with `-launch`). Prints jdb's startup lines. The caller then settles the
    /// connection (`settle_after_connect`: a suspended VM's start event).
    pub async fn startup(&mut self) -> Result<(), String> {
        match self.target.connect.clone() {
            Connect::Launch { .. } => {
                self.out.line("Initializing jdb-rs ...");
                Ok(())
            }
            Connect::Attach(addr) => {
                let vm = jdi::attach(&addr, Some(CONNECT_TIMEOUT))
                    .await
                    .map_err(|e| format!("Unable to attach to target VM at {addr}: {e}"))?;
                self.connected(vm, None, false).await;
                self.out.line("Initializing jdb-rs ...");
                Ok(())
            }
            Connect::AttachShmem(name) => {
                let vm = jdi::attach_shmem(&name, Some(CONNECT_TIMEOUT))
                    .await
                    .map_err(|e| format!("Unable to attach to target VM at shmem:{name}: {e}"))?;
                self.connected(vm, None, false).await;
                self.out.line("Initializing jdb-rs ...");
                Ok(())
            }
            Connect::ListenShmem(name) => {
                let listener =
                    jdi::ShmemListener::bind(&name).map_err(|e| format!("Unable to listen at shmem:{name}: {e}"))?;
                self.out.line(format!("Listening at address: shmem:{}", listener.name()));
                self.out.flush();
                let vm = listener.accept(None).await.map_err(|e| format!("Unable to accept a VM connection: {e}"))?;
                self.connected(vm, None, false).await;
                self.out.line("Initializing jdb-rs ...");
                Ok(())
            }
            Connect::Listen(addr) => {
                let listener =
                    jdi::Listener::bind(&addr).await.map_err(|e| format!("Unable to listen at {addr}: {e}"))?;
                self.out.line(format!("Listening at address: {}", listener.local_addr()));
                self.out.flush();
                let vm = listener.accept(None).await.map_err(|e| format!("Unable to accept a VM connection: {e}"))?;
                self.connected(vm, None, false).await;
                self.out.line("Initializing jdb-rs ...");
                Ok(())
            }
        }
    }

    /// Records a new connection: event queue, standard requests, deferred specs, source path.
    pub(crate) async fn connected(&mut self, vm: VirtualMachine, process: Option<Process>, launched: bool) {
        let events = vm.event_queue().expect("a new VM has its event queue");
        let mut conn = Conn {
            vm: vm.clone(),
            events,
            process,
            launched,
            forwarders: Vec::new(),
            virtual_threads: Default::default(),
            held: None,
        };
        // A VM started with `suspend=y` sends its start event right after the handshake. It is
        // taken (and held, to be handled in its turn) before anything below asks the VM for an
        // object: agents number objects as they first reach the debugger, so `main` is thread 1
        // as in jdb, whose own start is slow enough to lose that race. Measured: jdb-rs's
        // `ClassesBySignature` for Throwable came first about once in 8 loaded runs.
        conn.held = tokio::time::timeout(VM_START_GRACE, conn.events.next()).await.unwrap_or(None);
        self.conn = Some(conn);
        // As jdb does: stop on uncaught exceptions, through an ordinary (ignorable) catch spec.
        let spec = Spec::exception("java.lang.Throwable", false, true);
        self.requests.add_spec(Some(&vm), &self.out, spec).await;
        // To say so when the current thread dies (suspending nothing). Platform threads only, as
        // jdb, unless asked to track all: a request for every virtual thread's start or end costs
        // the VM much (JDK-8295376). Tracking all, thread starts tell of new virtual threads.
        let none = jdi::SuspendPolicy::None;
        if self.cfg.track_all_threads {
            let _ = vm.enable_request(&EventRequest::thread_start().suspend(none)).await;
            let _ = vm.enable_request(&EventRequest::thread_death().suspend(none)).await;
        } else {
            let _ = vm.enable_request(&EventRequest::thread_death().platform_threads_only().suspend(none)).await;
        }
        self.requests.resolve_all(&vm, &self.out).await;
        if self.sources.wants_class_path() {
            let class_paths = vm.class_paths().await.ok().map(|cp| cp.classpaths);
            self.sources.adopt_class_path(class_paths.as_deref());
        }
        if let Ok(mut c) = self.completions.lock() {
            c.vm = Some(vm);
        }
    }

    /// Launches the VM (`run`).
    pub(crate) async fn launch_vm(&mut self) -> Result<(), String> {
        let launch = &self.target.launch;
        let main = launch.main.clone().ok_or("Main class and arguments must be specified")?;
        let mut opts = jdi::LaunchOptions::new(&main)
            .args(launch.args.clone())
            .timeout(CONNECT_TIMEOUT)
            .include_virtual_threads(self.cfg.track_all_threads);
        if let Some(cp) = &launch.classpath {
            opts = opts.classpath(cp.clone());
        }
        if self.cfg.interactive {
            // At a terminal, Ctrl-C interrupts a wait of ours; it must not reach the debuggee,
            // which would die of it. `setsid` (same process, new session) keeps the terminal's
            // signals away from the JVM.
            if let Some(setsid) = find_on_path("setsid") {
                opts = opts.java(setsid).jvm_option(java_executable().display().to_string());
            }
        }
        for o in &launch.jvm_options {
            opts = opts.jvm_option(o.clone());
        }
        if let Some(agent) = &launch.agent {
            opts = opts.agent_path(agent.clone());
        }
        let launched = jdi::launch(&opts).await.map_err(|e| format!("Unable to launch target VM: {e}"))?;
        let jdi::Launched { vm, process, stdin, stdout, stderr } = launched;
        drop(stdin);
        let forwarders = vec![forward(stdout, "stdout", self.out.clone()), forward(stderr, "stderr", self.out.clone())];
        self.connected(vm, Some(process), true).await;
        if let Some(c) = self.conn.as_mut() {
            c.forwarders = forwarders;
        }
        Ok(())
    }

    /// Ends the connection: a launched VM is killed, an attached one left running.
    pub async fn detach(&mut self) {
        if let Some(conn) = self.conn.take() {
            let _ = tokio::time::timeout(Duration::from_secs(5), conn.vm.dispose()).await;
            if let Some(p) = conn.process {
                p.kill();
                let _ = tokio::time::timeout(Duration::from_secs(5), p.wait()).await;
            }
        }
        self.position.clear_thread();
    }

    /// The current thread, or the message jdb gives when there is none.
    pub(crate) fn current_thread(&self) -> Result<ThreadReference, String> {
        self.position.thread().cloned().ok_or_else(|| "No thread specified.".to_string())
    }

    /// The current frame of the current thread (`None`: no Java frames).
    pub(crate) async fn current_frame(&self) -> Result<Option<StackFrame>, String> {
        let thread = self.position.thread().cloned().ok_or("No current thread")?;
        if !thread.is_suspended().await.map_err(|e| e.to_string())? {
            return Err("Current thread isn't suspended.".into());
        }
        let count = thread.frame_count().await.map_err(|e| e.to_string())?;
        let Some(index) = self.position.frame_in(count) else { return Ok(None) };
        thread.frame(index).await.map(Some).map_err(|e| e.to_string())
    }

    /// A thread by jdb's id token (`1`, `t@1`, `0x1`).
    pub(crate) async fn thread_by_token(&mut self, token: &str) -> Result<ThreadReference, String> {
        let invalid = || format!("\"{token}\" is not a valid thread id.");
        self.vm().ok_or_else(invalid)?;
        let id = crate::format::java_decode(token.strip_prefix("t@").unwrap_or(token)).ok_or_else(invalid)?;
        let threads = self.known_threads().await.map_err(|e| e.to_string())?;
        threads.into_iter().find(|t| t.id().0 as i64 == id).ok_or_else(invalid)
    }

    /// Remembers the thread of an event if it is virtual (no command lists virtual threads).
    pub(crate) async fn note_thread(&mut self, thread: Option<ThreadReference>) {
        let Some(thread) = thread else { return };
        self.take_initial_listing().await;
        if thread.is_virtual().await.unwrap_or(false)
            && let Some(conn) = self.conn.as_mut()
        {
            conn.virtual_threads.note(thread);
        }
    }

    /// Takes in the virtual threads `AllThreads` lists (the agent's `includevirtualthreads=y`)
    /// once, on the first event or listing, as jdb's `ThreadInfo.initThreads`; later ones are
    /// met through events. Asked at connect instead, `AllThreads` can reach the agent before
    /// its `VMStart` event has named the main thread, and the thread IDs then differ from jdb's
    /// (the main thread is no longer `1`).
    async fn take_initial_listing(&mut self) {
        let Some(conn) = self.conn.as_ref() else { return };
        if !conn.virtual_threads.wants_listing() {
            return;
        }
        let vm = conn.vm.clone();
        let mut listed = Vec::new();
        for t in vm.all_threads().await.unwrap_or_default() {
            if t.is_virtual().await.unwrap_or(false) {
                listed.push(t);
            }
        }
        if let Some(conn) = self.conn.as_mut() {
            conn.virtual_threads.take_listing(listed);
        }
    }

    /// Forgets a virtual thread that died.
    pub(crate) fn forget_thread(&mut self, thread: &ThreadReference) {
        if let Some(conn) = self.conn.as_mut() {
            conn.virtual_threads.forget(thread);
        }
    }

    /// The virtual threads met that are alive.
    pub(crate) async fn known_virtual_threads(&mut self) -> jdi::Result<Vec<ThreadReference>> {
        self.take_initial_listing().await;
        match self.conn.as_mut() {
            Some(conn) => Ok(conn.virtual_threads.alive().await),
            None => Ok(Vec::new()),
        }
    }

    /// Every thread jdb knows, as jdb's `where all` walks them: `AllThreads`, then the other
    /// virtual threads met.
    pub(crate) async fn known_threads(&mut self) -> jdi::Result<Vec<ThreadReference>> {
        let Some(vm) = self.vm().cloned() else { return Ok(Vec::new()) };
        let mut threads = vm.all_threads().await?;
        for t in self.known_virtual_threads().await? {
            if !threads.contains(&t) {
                threads.push(t);
            }
        }
        Ok(threads)
    }

    /// Forgets the current thread (the VM was resumed), as jdb's `invalidateAll`.
    pub(crate) fn invalidate(&mut self) {
        self.position.invalidate();
    }

    /// 3 if a deadlock was found, else 1 if a command failed, else 0.
    pub fn exit_code(&self) -> i32 {
        self.status.exit_code()
    }

    /// Refreshes what tab completion offers (at stops).
    pub(crate) async fn refresh_completions(&self) {
        if !self.cfg.interactive {
            return;
        }
        let Some(vm) = self.vm().cloned() else { return };
        let classes: Vec<String> = match vm.all_classes().await {
            Ok(all) => all.iter().map(|t| t.name()).filter(|n| !n.contains('/') && !n.contains('[')).collect(),
            Err(_) => Vec::new(),
        };
        let mut locals = Vec::new();
        let mut members = Vec::new();
        if let Ok(Some(frame)) = self.current_frame().await {
            if let Ok(vars) = frame.visible_variables().await {
                locals.extend(vars.into_iter().map(|v| v.name));
            }
            locals.push("this".into());
            if let Ok(method) = frame.method().await
                && let Ok(ty) = method.declaring_type().await
            {
                if let Ok(fields) = ty.visible_fields().await {
                    members.extend(fields.iter().map(|f| f.name.clone()));
                }
                if let Ok(methods) = ty.visible_methods().await {
                    members.extend(methods.iter().filter(|m| !m.name().starts_with('<')).map(|m| m.name().to_string()));
                }
            }
        }
        members.sort();
        members.dedup();
        if let Ok(mut c) = self.completions.lock() {
            c.classes = classes;
            c.locals = locals;
            c.members = members;
        }
    }
}

/// Copies a debuggee stream to the output until it ends.
fn forward(
    mut stream: impl tokio::io::AsyncRead + Unpin + Send + 'static,
    name: &'static str,
    out: Out,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut buf = vec![0u8; 8192];
        let mut pending: Vec<u8> = Vec::new();
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    pending.extend_from_slice(&buf[..n]);
                    // Whole lines only, so program output and ours do not interleave mid-line.
                    if let Some(end) = pending.iter().rposition(|&b| b == b'\n') {
                        let chunk: Vec<u8> = pending.drain(..=end).collect();
                        out.program_output(name, &String::from_utf8_lossy(&chunk));
                    }
                }
            }
        }
        if !pending.is_empty() {
            out.program_output(name, &String::from_utf8_lossy(&pending));
        }
    })
}

/// A request for a step, with jdb's excludes when stepping into or over.
pub(crate) fn step_request(
    thread: &ThreadReference,
    size: jdi::StepSize,
    depth: jdi::StepDepth,
    excludes: &[String],
) -> EventRequest {
    let mut r = EventRequest::step(thread.id(), size, depth);
    for p in excludes {
        r = r.class_exclude(p);
    }
    r
}

/// The `java` a launch uses: `$JAVA_HOME/bin/java`, else `java` on the `PATH`.
fn java_executable() -> std::path::PathBuf {
    match std::env::var_os("JAVA_HOME").filter(|h| !h.is_empty()) {
        Some(home) => std::path::Path::new(&home).join("bin").join("java"),
        None => find_on_path("java").unwrap_or_else(|| "java".into()),
    }
}

fn find_on_path(tool: &str) -> Option<std::path::PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(tool))
        .find(|p| std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0))
}
