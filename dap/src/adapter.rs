//! The debug session: DAP requests in, jdi-rs calls out, VM events back as DAP events.
//!
//! One task owns the session ([`Adapter`]) and handles, in turn, the next request from the
//! client and the next event set from the VM, so no state is shared. A reader task decodes the
//! client's messages ([`crate::framing`]) and a writer task frames ours; the launched JVM's
//! output is copied into `output` events by tasks of their own. Every failure becomes an error
//! response (`success: false` with a message) or an event: nothing here panics on input, and a
//! VM that goes away mid-request fails that request and ends the session with `exited` and
//! `terminated`.
//!
//! Breakpoints are suspend-all (as in other Java debuggers, so that what the editor shows holds
//! still); conditions, hit counts and logpoints are decided here when one is hit, and the VM is
//! resumed when it should not stop.

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use jdb_expr::eval::{Ctx, Host, evaluate, jdi_err};
use jdi::{
    Event, EventExt, EventQueue, EventRequest, EventSet, Location, Process, ReferenceType, RequestHandle, StackFrame,
    StepDepth, StepSize, SuspendPolicy, ThreadReference, Value, VirtualMachine,
};
use serde_json::{Value as Json, json};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;

use crate::framing::{Decoder, encode};
use crate::ids::{Handles, Interned, page};
use crate::logmessage::{self, Piece};
use crate::protocol::{self as p, args};
use crate::sources::{self, SourceFile};
use crate::values::{self, Children};

/// Writes a flame graph of folded stacks (`a;b;c COUNT` lines) to a file: the renderer lives in
/// jdb-rs (`flame`), which hands it over here, so this crate does not depend on jdb-rs.
pub type FlameWriter = fn(path: &str, folded: &str, title: &str, unit: &str) -> Result<(), String>;

/// How the adapter was started.
#[derive(Debug, Clone, Default)]
pub struct Config {
    /// Our agent library, used by `launch` unless `"jdkAgent": true` (or when absent).
    pub agent: Option<PathBuf>,
    /// Draws flame graphs for `jdbg/profile` (none: only folded stacks are returned).
    pub flame: Option<FlameWriter>,
}

/// Serves one DAP session over `reader`/`writer` until the client disconnects or the input ends.
pub async fn serve<R, W>(reader: R, writer: W, config: Config) -> std::io::Result<()>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (in_tx, in_rx) = mpsc::unbounded_channel();
    let (out_tx, out_rx) = mpsc::unbounded_channel::<Vec<u8>>();
    let reader_task = tokio::spawn(read_loop(reader, in_tx));
    let writer_task = tokio::spawn(write_loop(writer, out_rx));
    let out = Out { tx: out_tx, seq: Arc::new(AtomicI64::new(1)) };
    let mut adapter = Adapter::new(out, config);
    adapter.run(in_rx).await;
    drop(adapter);
    reader_task.abort();
    let _ = tokio::time::timeout(Duration::from_secs(5), writer_task).await;
    Ok(())
}

enum Input {
    Message(p::Incoming),
    /// A message we could not read: bad framing or bad JSON.
    Bad(String),
    Eof,
}

async fn read_loop<R: AsyncRead + Unpin>(mut reader: R, tx: mpsc::UnboundedSender<Input>) {
    let mut decoder = Decoder::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        while let Some(frame) = decoder.next_frame() {
            let input = match frame {
                Ok(body) => match serde_json::from_slice::<p::Incoming>(&body) {
                    Ok(m) => Input::Message(m),
                    Err(e) => Input::Bad(format!("a message that is not a DAP request: {e}")),
                },
                Err(e) => Input::Bad(e.to_string()),
            };
            if tx.send(input).is_err() {
                return;
            }
        }
        match reader.read(&mut buf).await {
            Ok(0) | Err(_) => {
                let _ = tx.send(Input::Eof);
                return;
            }
            Ok(n) => decoder.push(&buf[..n]),
        }
    }
}

async fn write_loop<W: AsyncWrite + Unpin>(mut writer: W, mut rx: mpsc::UnboundedReceiver<Vec<u8>>) {
    while let Some(body) = rx.recv().await {
        if writer.write_all(&encode(&body)).await.is_err() || writer.flush().await.is_err() {
            return;
        }
    }
}

/// The sending half: numbers and queues our messages.
#[derive(Clone)]
struct Out {
    tx: mpsc::UnboundedSender<Vec<u8>>,
    seq: Arc<AtomicI64>,
}

impl Out {
    fn next_seq(&self) -> i64 {
        self.seq.fetch_add(1, Ordering::Relaxed)
    }

    fn send<T: serde::Serialize>(&self, msg: &T) {
        let msg = match serde_json::to_value(msg) {
            Ok(v) => strip_nulls(v),
            Err(e) => return tracing::error!(error = %e, "could not serialize a message"),
        };
        match serde_json::to_vec(&msg) {
            Ok(bytes) => {
                let _ = self.tx.send(bytes);
            }
            Err(e) => tracing::error!(error = %e, "could not serialize a message"),
        }
    }

    fn event(&self, event: &str, body: Json) {
        let body = if body.is_null() { None } else { Some(body) };
        self.send(&p::EventMsg { seq: self.next_seq(), kind: "event", event: event.into(), body });
    }

    fn respond(&self, request_seq: i64, command: &str, result: Result<Json, String>) {
        let (success, message, body) = match result {
            Ok(body) => (true, None, if body.is_null() { None } else { Some(body) }),
            Err(m) => (false, Some(m.clone()), Some(json!({"error": {"id": 1, "format": m, "showUser": true}}))),
        };
        self.send(&p::Response {
            seq: self.next_seq(),
            kind: "response",
            request_seq,
            success,
            command: command.into(),
            message,
            body,
        });
    }

    fn output(&self, category: &str, text: impl Into<String>) {
        self.event("output", json!({"category": category, "output": text.into()}));
    }
}

type R<T> = Result<T, String>;

/// Drops object members whose value is `null`: DAP's optional fields are absent, never null.
fn strip_nulls(v: Json) -> Json {
    match v {
        Json::Object(m) => {
            Json::Object(m.into_iter().filter(|(_, v)| !v.is_null()).map(|(k, v)| (k, strip_nulls(v))).collect())
        }
        Json::Array(a) => Json::Array(a.into_iter().map(strip_nulls).collect()),
        other => other,
    }
}

fn je(e: jdi::JdiError) -> String {
    jdi_err(e)
}

/// A source breakpoint as the client set it, and where it landed.
struct LineBp {
    id: i64,
    file: SourceFile,
    path: String,
    line: i64,
    condition: Option<String>,
    hit_condition: Option<String>,
    log_message: Option<String>,
    hits: u64,
    /// The line it resolved to, once a class of the file is loaded.
    actual_line: Option<i64>,
    requests: Vec<RequestHandle>,
    /// Classes already resolved (by type id), so a class prepared twice is not set twice.
    classes: HashSet<u64>,
}

struct FnBp {
    id: i64,
    class: String,
    method: String,
    condition: Option<String>,
    hit_condition: Option<String>,
    hits: u64,
    verified: bool,
    requests: Vec<RequestHandle>,
}

/// What a `variablesReference` points at.
enum VarRef {
    Locals(StackFrame),
    Statics(ReferenceType),
    Object(jdi::ObjectReference),
    Array(jdi::ArrayReference, i64),
}

pub struct Adapter {
    out: Out,
    config: Config,
    vm: Option<VirtualMachine>,
    events: Option<EventQueue>,
    process: Option<Process>,
    forwarders: Vec<tokio::task::JoinHandle<()>>,
    roots: Vec<PathBuf>,
    threads: Interned<u64>,
    frames: Handles<StackFrame>,
    vars: Handles<VarRef>,
    line_bps: Vec<LineBp>,
    fn_bps: Vec<FnBp>,
    /// Class-prepare requests by pattern, for breakpoints in classes not yet loaded.
    prepares: HashMap<String, RequestHandle>,
    exception_requests: Vec<RequestHandle>,
    exception_modes: HashMap<RequestId, &'static str>,
    /// The exception each thread stopped on, for `exceptionInfo`.
    exceptions: HashMap<u64, (jdi::ObjectReference, &'static str)>,
    /// The VM start set, held until `configurationDone`.
    start_set: Option<EventSet>,
    configured: bool,
    stop_on_entry: bool,
    /// Whether the client was told the VM stopped (and it has not been resumed since): a pause
    /// then suspends nothing more, so one resume still lets the program go.
    stopped: bool,
    /// Exception filters naming classes not loaded yet: (class name, caught, uncaught, mode),
    /// requested when the class is prepared.
    pending_exceptions: Vec<(String, bool, bool, &'static str)>,
    next_bp_id: i64,
    terminated_sent: bool,
    done: bool,
}

type RequestId = jdi::RequestId;

impl Adapter {
    fn new(out: Out, config: Config) -> Adapter {
        Adapter {
            out,
            config,
            vm: None,
            events: None,
            process: None,
            forwarders: Vec::new(),
            roots: Vec::new(),
            threads: Interned::default(),
            frames: Handles::default(),
            vars: Handles::default(),
            line_bps: Vec::new(),
            fn_bps: Vec::new(),
            prepares: HashMap::new(),
            exception_requests: Vec::new(),
            exception_modes: HashMap::new(),
            exceptions: HashMap::new(),
            start_set: None,
            configured: false,
            stop_on_entry: false,
            stopped: false,
            pending_exceptions: Vec::new(),
            next_bp_id: 1,
            terminated_sent: false,
            done: false,
        }
    }

    async fn run(&mut self, mut input: mpsc::UnboundedReceiver<Input>) {
        while !self.done {
            tokio::select! {
                msg = input.recv() => match msg {
                    Some(Input::Message(m)) => self.dispatch(m).await,
                    Some(Input::Bad(why)) => self.out.output("stderr", format!("jdbg-dap: ignored {why}\n")),
                    Some(Input::Eof) | None => {
                        self.shutdown(true).await;
                        break;
                    }
                },
                set = next_set(&mut self.events) => match set {
                    Some(Ok(set)) => self.on_event_set(set).await,
                    Some(Err(e)) => self.out.output("stderr", format!("jdbg-dap: event error: {e}\n")),
                    None => self.vm_gone().await,
                },
            }
        }
    }

    async fn dispatch(&mut self, m: p::Incoming) {
        let Some(command) = m.command.clone().filter(|_| m.kind == "request") else {
            self.out.output("stderr", format!("jdbg-dap: ignored a message of type {:?} without a command\n", m.kind));
            return;
        };
        let result = self.handle(&command, &m.arguments).await;
        // Some answers must precede the events they cause.
        match (command.as_str(), result) {
            ("launch" | "attach", Ok(body)) => {
                self.out.respond(m.seq, &command, Ok(body));
                self.out.event("initialized", Json::Null);
            }
            ("disconnect", Ok(body)) => {
                self.out.respond(m.seq, &command, Ok(body));
                self.done = true;
            }
            ("configurationDone", Ok(body)) => {
                self.out.respond(m.seq, &command, Ok(body));
                if let Err(e) = self.release_start().await {
                    self.out.output("stderr", format!("jdbg-dap: {e}\n"));
                }
            }
            ("pause", Ok(body)) => {
                self.out.respond(m.seq, &command, Ok(body));
                self.stopped = true;
                let thread = m.arguments.as_ref().and_then(|a| a.get("threadId")).and_then(Json::as_i64);
                self.out.event(
                    "stopped",
                    json!({"reason": "pause", "threadId": thread.unwrap_or(1), "allThreadsStopped": true}),
                );
            }
            (_, result) => self.out.respond(m.seq, &command, result),
        }
    }

    async fn handle(&mut self, command: &str, a: &Option<Json>) -> R<Json> {
        match command {
            "initialize" => {
                let _: p::InitializeArgs = args(command, a)?;
                Ok(p::capabilities())
            }
            "launch" => self.launch(args(command, a)?).await,
            "attach" => self.attach(args(command, a)?).await,
            "configurationDone" => {
                self.configured = true;
                Ok(Json::Null)
            }
            "setBreakpoints" => self.set_breakpoints(args(command, a)?).await,
            "setFunctionBreakpoints" => self.set_function_breakpoints(args(command, a)?).await,
            "setExceptionBreakpoints" => self.set_exception_breakpoints(args(command, a)?).await,
            "breakpointLocations" => self.breakpoint_locations(args(command, a)?).await,
            "exceptionInfo" => self.exception_info(args(command, a)?).await,
            "threads" => self.threads().await,
            "stackTrace" => self.stack_trace(args(command, a)?).await,
            "scopes" => self.scopes(args(command, a)?).await,
            "variables" => self.variables(args(command, a)?).await,
            "setVariable" => self.set_variable(args(command, a)?).await,
            "evaluate" => self.evaluate(args(command, a)?).await,
            "continue" => {
                let _: p::ThreadArgs = args(command, a)?;
                self.resume_all().await?;
                Ok(json!({"allThreadsContinued": true}))
            }
            "next" => self.step(args(command, a)?, StepDepth::Over).await,
            "stepIn" => self.step(args(command, a)?, StepDepth::Into).await,
            "stepOut" => self.step(args(command, a)?, StepDepth::Out).await,
            "pause" => {
                let _: p::ThreadArgs = args(command, a)?;
                if !self.stopped {
                    self.vm()?.suspend().await.map_err(je)?;
                }
                Ok(Json::Null)
            }
            "restartFrame" => self.restart_frame(args(command, a)?).await,
            "loadedSources" => self.loaded_sources().await,
            "disconnect" => {
                let d: p::DisconnectArgs = args(command, a)?;
                let terminate = d.terminate_debuggee.unwrap_or(self.process.is_some());
                self.shutdown(terminate).await;
                Ok(Json::Null)
            }
            "terminate" => {
                let vm = self.vm()?.clone();
                vm.exit(0).await.map_err(je)?;
                Ok(Json::Null)
            }
            "source" => Err("no source is available for this reference".into()),
            "jdbg/deadlocks" => self.deadlocks().await,
            "jdbg/profile" => self.profile(args(command, a)?).await,
            // JDWP commands sent so far on this connection (each is one round trip).
            "jdbg/stats" => Ok(json!({"jdwpCommands": self.vm()?.commands_sent()})),
            other => Err(format!("unknown request {other:?}")),
        }
    }

    fn vm(&self) -> R<&VirtualMachine> {
        self.vm.as_ref().ok_or_else(|| "no VM is connected (launch or attach first)".to_string())
    }

    // ---- launch / attach / end ----

    async fn launch(&mut self, a: p::LaunchArgs) -> R<Json> {
        if self.vm.is_some() {
            return Err("a VM is already connected".into());
        }
        let main = a.main_class.clone().filter(|m| !m.trim().is_empty()).ok_or("launch: mainClass is required")?;
        let mut opts = jdi::LaunchOptions::new(&main);
        if let Some(java) = &a.java_exec {
            opts = opts.java(java);
        }
        if !a.class_paths.is_empty() {
            opts = opts.classpath(a.class_paths.join(":"));
        }
        if !a.module_paths.is_empty() {
            opts = opts.jvm_option("--module-path").jvm_option(a.module_paths.join(":"));
        }
        for w in a.vm_args.as_ref().map(|v| v.words()).unwrap_or_default() {
            opts = opts.jvm_option(w);
        }
        if let Some(args) = &a.args {
            opts = opts.args(args.words());
        }
        for (k, v) in &a.env {
            opts = opts.env(k, v);
        }
        if let Some(cwd) = &a.cwd {
            opts = opts.current_dir(cwd);
        }
        if !a.jdk_agent
            && let Some(agent) = &self.config.agent
        {
            opts = opts.agent_path(agent);
        }
        let launched = jdi::launch(&opts).await.map_err(|e| format!("launch failed: {e}"))?;
        let pid = launched.process.pid();
        self.roots = roots(&a.source_paths, a.cwd.as_deref(), &a.class_paths);
        self.stop_on_entry = a.stop_on_entry;
        self.forwarders.push(tokio::spawn(forward(launched.stdout, self.out.clone(), "stdout")));
        self.forwarders.push(tokio::spawn(forward(launched.stderr, self.out.clone(), "stderr")));
        drop(launched.stdin);
        self.process = Some(launched.process);
        self.connected(launched.vm);
        self.out.event(
            "process",
            json!({"name": main, "systemProcessId": pid, "isLocalProcess": true, "startMethod": "launch"}),
        );
        Ok(Json::Null)
    }

    async fn attach(&mut self, a: p::AttachArgs) -> R<Json> {
        if self.vm.is_some() {
            return Err("a VM is already connected".into());
        }
        let timeout = Some(Duration::from_millis(a.timeout.unwrap_or(30_000)));
        let vm = match (&a.address, &a.port) {
            (Some(addr), _) if addr.starts_with("shmem:") => {
                jdi::attach_shmem(&addr["shmem:".len()..], timeout).await.map_err(|e| format!("attach failed: {e}"))?
            }
            (Some(addr), _) => jdi::attach(addr, timeout).await.map_err(|e| format!("attach failed: {e}"))?,
            (None, Some(port)) => {
                let port = match port {
                    Json::Number(n) => n.to_string(),
                    Json::String(s) => s.clone(),
                    _ => return Err("attach: port must be a number".into()),
                };
                let host = a.host_name.clone().unwrap_or_else(|| "127.0.0.1".into());
                jdi::attach(&format!("{host}:{port}"), timeout).await.map_err(|e| format!("attach failed: {e}"))?
            }
            (None, None) => return Err("attach: give hostName and port, or address".into()),
        };
        self.roots = roots(&a.source_paths, None, &[]);
        self.connected(vm);
        Ok(Json::Null)
    }

    fn connected(&mut self, vm: VirtualMachine) {
        self.events = vm.event_queue();
        self.vm = Some(vm);
    }

    /// At `configurationDone`: lets the VM run from its start (or reports the stop at entry).
    async fn release_start(&mut self) -> R<()> {
        let Some(set) = self.start_set.take() else { return Ok(()) };
        if self.stop_on_entry {
            let thread = set.thread().map(|t| self.thread_number(&t)).unwrap_or(1);
            self.out.event("stopped", json!({"reason": "entry", "threadId": thread, "allThreadsStopped": true}));
            self.stopped = true;
            return Ok(());
        }
        self.invalidate();
        set.resume().await.map_err(je)
    }

    async fn shutdown(&mut self, terminate: bool) {
        let Some(vm) = self.vm.take() else { return };
        if terminate {
            let _ = tokio::time::timeout(Duration::from_secs(2), vm.exit(1)).await;
            if let Some(p) = &self.process {
                p.kill();
            }
        } else {
            let _ = tokio::time::timeout(Duration::from_secs(2), vm.dispose()).await;
        }
        self.events = None;
        self.finish_output().await;
        if let Some(p) = self.process.take()
            && terminate
        {
            let _ = tokio::time::timeout(Duration::from_secs(5), p.wait()).await;
        }
        if !self.terminated_sent {
            self.terminated_sent = true;
            self.out.event("terminated", Json::Null);
        }
    }

    async fn finish_output(&mut self) {
        for f in self.forwarders.drain(..) {
            let _ = tokio::time::timeout(Duration::from_secs(2), f).await;
        }
    }

    /// The event stream ended: the VM exited or the connection broke.
    async fn vm_gone(&mut self) {
        self.events = None;
        self.vm = None;
        self.finish_output().await;
        if let Some(p) = self.process.take() {
            let code = match tokio::time::timeout(Duration::from_secs(5), p.wait()).await {
                Ok(Ok(status)) => status.code().unwrap_or(-1),
                _ => -1,
            };
            self.out.event("exited", json!({"exitCode": code}));
        }
        if !self.terminated_sent {
            self.terminated_sent = true;
            self.out.event("terminated", Json::Null);
        }
    }

    // ---- events ----

    async fn on_event_set(&mut self, set: EventSet) {
        if let Err(e) = self.handle_set(set).await {
            self.out.output("stderr", format!("jdbg-dap: {e}\n"));
        }
    }

    async fn handle_set(&mut self, set: EventSet) -> R<()> {
        if set.is_vm_start() {
            if self.configured {
                self.start_set = Some(set);
                return self.release_start().await;
            }
            self.start_set = Some(set);
            return Ok(());
        }
        if set.is_vm_death() {
            return Ok(());
        }
        let mut stop: Option<(&'static str, Option<String>, Vec<i64>)> = None;
        for event in set.events.clone() {
            match &event {
                Event::ClassPrepare { type_id, .. } => {
                    let vm = self.vm()?.clone();
                    if let Ok(ty) = vm.reference_type(*type_id).await {
                        self.class_prepared(&ty).await;
                    }
                }
                Event::Breakpoint { thread, .. } => {
                    let Some(rid) = event.request() else { continue };
                    let thread = self.vm()?.thread(*thread);
                    if let Some((reason, ids)) = self.breakpoint_hit(rid, &thread).await
                        && (stop.is_none() || reason == "breakpoint")
                    {
                        stop = Some((reason, None, ids));
                    }
                }
                Event::SingleStep { .. } if stop.is_none() => stop = Some(("step", None, Vec::new())),
                Event::Exception { thread, exception, .. } => {
                    let vm = self.vm()?.clone();
                    let obj = jdi::ObjectReference::new(vm, exception.id);
                    let mode = event.request().and_then(|r| self.exception_modes.get(&r).copied()).unwrap_or("always");
                    let name = obj.reference_type().await.map(|t| t.name()).unwrap_or_default();
                    self.exceptions.insert(thread.0, (obj, mode));
                    stop = Some(("exception", Some(name), Vec::new()));
                }
                _ => {}
            }
        }
        match stop {
            None => set.resume().await.map_err(je),
            Some((reason, text, ids)) => {
                let thread = set.thread().map(|t| self.thread_number(&t)).unwrap_or(1);
                let mut body = json!({"reason": reason, "threadId": thread, "allThreadsStopped": true});
                if let Some(t) = text {
                    body["text"] = json!(t);
                    body["description"] = json!(format!("Exception {t}"));
                }
                if !ids.is_empty() {
                    body["hitBreakpointIds"] = json!(ids);
                }
                self.out.event("stopped", body);
                self.stopped = true;
                Ok(())
            }
        }
    }

    /// A breakpoint request fired: counts, conditions and logpoints decide whether to stop.
    async fn breakpoint_hit(&mut self, rid: RequestId, thread: &ThreadReference) -> Option<(&'static str, Vec<i64>)> {
        let owner = |reqs: &[RequestHandle]| reqs.iter().any(|h| h.id() == Some(rid));
        if let Some(i) = self.line_bps.iter().position(|b| owner(&b.requests)) {
            self.line_bps[i].hits += 1;
            let (id, hits) = (self.line_bps[i].id, self.line_bps[i].hits);
            let hit_condition = self.line_bps[i].hit_condition.clone();
            let condition = self.line_bps[i].condition.clone();
            let log = self.line_bps[i].log_message.clone();
            if !self.passes(thread, hits, hit_condition.as_deref(), condition.as_deref()).await {
                return None;
            }
            if let Some(log) = log {
                let text = self.interpolate(thread, &log).await;
                self.out.output("console", text + "\n");
                return None;
            }
            return Some(("breakpoint", vec![id]));
        }
        if let Some(i) = self.fn_bps.iter().position(|b| owner(&b.requests)) {
            self.fn_bps[i].hits += 1;
            let (id, hits) = (self.fn_bps[i].id, self.fn_bps[i].hits);
            let hit_condition = self.fn_bps[i].hit_condition.clone();
            let condition = self.fn_bps[i].condition.clone();
            if !self.passes(thread, hits, hit_condition.as_deref(), condition.as_deref()).await {
                return None;
            }
            return Some(("function breakpoint", vec![id]));
        }
        None
    }

    async fn passes(&mut self, thread: &ThreadReference, hits: u64, hit: Option<&str>, cond: Option<&str>) -> bool {
        if let Some(h) = hit.filter(|h| !h.trim().is_empty()) {
            match hit_condition_met(h, hits) {
                Ok(false) => return false,
                Ok(true) => {}
                Err(e) => self.out.output("stderr", format!("jdbg-dap: hit condition {h:?}: {e}\n")),
            }
        }
        if let Some(c) = cond.filter(|c| !c.trim().is_empty()) {
            match self.eval_in(thread, 0, c).await {
                Ok(Value::Boolean(b)) => return b,
                Ok(_) => {
                    self.out.output("stderr", format!("jdbg-dap: condition {c:?} is not boolean; stopping\n"));
                }
                Err(e) => self.out.output("stderr", format!("jdbg-dap: condition {c:?} failed: {e}; stopping\n")),
            }
        }
        true
    }

    /// A logpoint's message with each `{expression}` replaced by its value.
    async fn interpolate(&mut self, thread: &ThreadReference, template: &str) -> String {
        let mut out = String::new();
        for piece in logmessage::split(template) {
            match piece {
                Piece::Text(t) => out.push_str(t),
                Piece::Expr(expr) => {
                    let shown = match self.eval_in(thread, 0, expr).await {
                        Ok(v) => self.text_of(v).await,
                        Err(e) => format!("<{e}>"),
                    };
                    out.push_str(&shown);
                }
            }
        }
        out
    }

    /// A value as text in messages: strings unquoted.
    async fn text_of(&self, v: Value) -> String {
        let Some(vm) = self.vm.clone() else { return String::new() };
        if let jdi::ValueMirror::String(s) = vm.value_mirror(v) {
            return s.value().await.unwrap_or_default();
        }
        match values::show(&vm, v).await {
            Ok(s) => s.value,
            Err(e) => format!("<{e}>"),
        }
    }

    async fn eval_in(&mut self, thread: &ThreadReference, depth: i32, src: &str) -> R<Value> {
        let vm = self.vm()?.clone();
        let frame = thread.frame(depth).await.map_err(je)?;
        let ctx = Ctx { vm, thread: Some(thread.clone()), frame: Some(frame) };
        Ok(evaluate(self, &ctx, src).await?.value)
    }

    fn thread_number(&mut self, t: &ThreadReference) -> i64 {
        self.threads.id(&t.id().0)
    }

    fn thread(&self, id: i64) -> R<ThreadReference> {
        let raw = self.threads.get(id).ok_or_else(|| format!("unknown thread id {id}"))?;
        Ok(self.vm()?.thread(jdi::protocol::ThreadId(*raw)))
    }

    fn invalidate(&mut self) {
        self.frames.clear();
        self.vars.clear();
    }

    async fn resume_all(&mut self) -> R<()> {
        self.invalidate();
        self.exceptions.clear();
        self.stopped = false;
        self.vm()?.resume().await.map_err(je)
    }

    // ---- breakpoints ----

    async fn set_breakpoints(&mut self, a: p::SetBreakpointsArgs) -> R<Json> {
        let path = a.source.path.clone().ok_or("setBreakpoints: source.path is required")?;
        let file = sources::source_file_of_path(Path::new(&path), &self.roots);
        // Replace the file's breakpoints.
        let old: Vec<LineBp> = {
            let (old, keep) = std::mem::take(&mut self.line_bps).into_iter().partition(|b| b.path == path);
            self.line_bps = keep;
            old
        };
        for b in old {
            for r in b.requests {
                let _ = r.delete().await;
            }
        }
        let wanted: Vec<p::SourceBreakpoint> = match (a.breakpoints, a.lines) {
            (Some(b), _) => b,
            (None, Some(lines)) => {
                lines.into_iter().map(|line| p::SourceBreakpoint { line, ..Default::default() }).collect()
            }
            (None, None) => Vec::new(),
        };
        let mut new = Vec::new();
        for sb in wanted {
            let id = self.next_bp_id;
            self.next_bp_id += 1;
            new.push(LineBp {
                id,
                file: file.clone(),
                path: path.clone(),
                line: sb.line,
                condition: sb.condition,
                hit_condition: sb.hit_condition,
                log_message: sb.log_message,
                hits: 0,
                actual_line: None,
                requests: Vec::new(),
                classes: HashSet::new(),
            });
        }
        let start = self.line_bps.len();
        self.line_bps.extend(new);
        if let Some(vm) = self.vm.clone() {
            self.ensure_prepare_requests(&file.prepare_patterns()).await?;
            let classes = loaded_classes_of(&vm, &file).await.map_err(je)?;
            for ty in classes {
                self.resolve_in_class(&ty, Some(start)).await;
            }
        }
        let bps: Vec<p::Breakpoint> = self.line_bps[start..].iter().map(|b| line_bp_json(b, false)).collect();
        Ok(json!({"breakpoints": bps}))
    }

    async fn ensure_prepare_requests(&mut self, patterns: &[String]) -> R<()> {
        let vm = self.vm()?.clone();
        for pat in patterns {
            if self.prepares.contains_key(pat) {
                continue;
            }
            let h = vm.create_event_request(EventRequest::class_prepare(pat).suspend(SuspendPolicy::All));
            h.enable().await.map_err(je)?;
            self.prepares.insert(pat.clone(), h);
        }
        Ok(())
    }

    /// Sets the breakpoints (from index `from` on, or all) that belong to `ty`.
    async fn resolve_in_class(&mut self, ty: &ReferenceType, from: Option<usize>) {
        let source = ty.source_name().await.unwrap_or_default();
        let name = ty.name();
        let table = match class_line_table(ty).await {
            Ok(t) => t,
            Err(_) => return,
        };
        let start = from.unwrap_or(0);
        for i in start..self.line_bps.len() {
            let b = &self.line_bps[i];
            if !b.file.contains(&name, &source) || b.classes.contains(&ty.id().0) {
                continue;
            }
            let pairs: Vec<(usize, i64)> = table.iter().map(|(m, l, _)| (*m, *l)).collect();
            let Some(line) = sources::resolve_line(&pairs, b.line) else { continue };
            // The first location of that line in each method that has it.
            let mut firsts: HashMap<usize, Location> = HashMap::new();
            for (m, l, loc) in &table {
                if *l == line {
                    firsts
                        .entry(*m)
                        .and_modify(|e| {
                            if loc.index < e.index {
                                *e = *loc
                            }
                        })
                        .or_insert(*loc);
                }
            }
            let vm = ty.vm().clone();
            let mut requests = Vec::new();
            for loc in firsts.values() {
                let h = vm.create_event_request(EventRequest::breakpoint(*loc).suspend(SuspendPolicy::All));
                if h.enable().await.is_ok() {
                    requests.push(h);
                }
            }
            let b = &mut self.line_bps[i];
            b.classes.insert(ty.id().0);
            if !requests.is_empty() {
                b.requests.extend(requests);
                let first = b.actual_line.is_none();
                b.actual_line = Some(b.actual_line.map_or(line, |l| l.min(line)));
                if from.is_none() && first {
                    let bp = line_bp_json(b, true);
                    self.out.event("breakpoint", json!({"reason": "changed", "breakpoint": bp}));
                }
            }
        }
        self.resolve_fn_bps(ty, from.is_none()).await;
    }

    async fn class_prepared(&mut self, ty: &ReferenceType) {
        self.resolve_in_class(ty, None).await;
        self.exception_class_prepared(ty).await;
    }

    async fn set_function_breakpoints(&mut self, a: p::SetFunctionBreakpointsArgs) -> R<Json> {
        for b in std::mem::take(&mut self.fn_bps) {
            for r in b.requests {
                let _ = r.delete().await;
            }
        }
        let mut result = Vec::new();
        for fb in a.breakpoints {
            let id = self.next_bp_id;
            self.next_bp_id += 1;
            let Some((class, method)) = fb.name.rsplit_once('.').or_else(|| fb.name.rsplit_once("::")) else {
                result.push(p::Breakpoint {
                    id: Some(id),
                    verified: false,
                    message: Some(format!("{:?} is not Class.method", fb.name)),
                    ..Default::default()
                });
                continue;
            };
            let (class, method) = (class.trim_end_matches(':').to_string(), method.to_string());
            self.fn_bps.push(FnBp {
                id,
                class: class.clone(),
                method,
                condition: fb.condition,
                hit_condition: fb.hit_condition,
                hits: 0,
                verified: false,
                requests: Vec::new(),
            });
            if let Some(vm) = self.vm.clone() {
                self.ensure_prepare_requests(std::slice::from_ref(&class)).await?;
                for ty in vm.classes_by_name(&class).await.map_err(je)? {
                    self.resolve_fn_bps(&ty, false).await;
                }
            }
            let verified = self.fn_bps.last().is_some_and(|b| b.verified);
            result.push(p::Breakpoint { id: Some(id), verified, ..Default::default() });
        }
        Ok(json!({"breakpoints": result}))
    }

    async fn resolve_fn_bps(&mut self, ty: &ReferenceType, announce: bool) {
        let name = ty.name();
        for i in 0..self.fn_bps.len() {
            if self.fn_bps[i].class != name || self.fn_bps[i].verified {
                continue;
            }
            let Ok(methods) = ty.methods_by_name(&self.fn_bps[i].method).await else { continue };
            let vm = ty.vm().clone();
            for m in methods {
                if let Ok(Some(loc)) = m.code_location().await {
                    let h = vm.create_event_request(EventRequest::breakpoint(loc).suspend(SuspendPolicy::All));
                    if h.enable().await.is_ok() {
                        self.fn_bps[i].requests.push(h);
                    }
                }
            }
            if !self.fn_bps[i].requests.is_empty() {
                self.fn_bps[i].verified = true;
                if announce {
                    let id = self.fn_bps[i].id;
                    self.out
                        .event("breakpoint", json!({"reason": "changed", "breakpoint": {"id": id, "verified": true}}));
                }
            }
        }
    }

    async fn request_exception(
        &mut self,
        ty: Option<jdi::protocol::ReferenceTypeId>,
        caught: bool,
        uncaught: bool,
        mode: &'static str,
    ) -> R<()> {
        let vm = self.vm()?.clone();
        let h = vm.create_event_request(EventRequest::exception(ty, caught, uncaught).suspend(SuspendPolicy::All));
        let id = h.enable().await.map_err(je)?;
        self.exception_modes.insert(id, mode);
        self.exception_requests.push(h);
        Ok(())
    }

    /// A class named by an exception filter was prepared: its exception request, before any
    /// instance of it (or of a subclass, prepared after it) can be thrown.
    async fn exception_class_prepared(&mut self, ty: &ReferenceType) {
        let name = ty.name();
        let wanted: Vec<_> = self.pending_exceptions.iter().filter(|(c, ..)| *c == name).cloned().collect();
        for (_, caught, uncaught, mode) in wanted {
            if let Err(e) = self.request_exception(Some(ty.id()), caught, uncaught, mode).await {
                self.out.output("stderr", format!("jdbg-dap: exception breakpoint on {name}: {e}\n"));
            }
        }
    }

    async fn set_exception_breakpoints(&mut self, a: p::SetExceptionBreakpointsArgs) -> R<Json> {
        for r in std::mem::take(&mut self.exception_requests) {
            let _ = r.delete().await;
        }
        self.exception_modes.clear();
        self.pending_exceptions.clear();
        let mut wanted: Vec<(String, Option<String>)> = a.filters.iter().map(|f| (f.clone(), None)).collect();
        for o in a.filter_options.unwrap_or_default() {
            wanted.push((o.filter_id, o.condition));
        }
        let vm = self.vm()?.clone();
        let mut bps = Vec::new();
        for (filter, condition) in wanted {
            let (caught, uncaught, mode) = match filter.as_str() {
                "caught" => (true, false, "always"),
                "uncaught" => (false, true, "unhandled"),
                other => {
                    bps.push(p::Breakpoint {
                        verified: false,
                        message: Some(format!("unknown filter {other:?}")),
                        ..Default::default()
                    });
                    continue;
                }
            };
            let classes: Vec<String> = condition
                .map(|c| c.split(',').map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect())
                .unwrap_or_default();
            let mut waiting = Vec::new();
            let mut types: Vec<Option<jdi::protocol::ReferenceTypeId>> = Vec::new();
            if classes.is_empty() {
                types.push(None);
            }
            for c in &classes {
                let found = vm.classes_by_name(c).await.map_err(je)?;
                if found.is_empty() {
                    // Not loaded yet: requested when it is prepared (a class-match modifier
                    // would match the throwing code's class, not the exception's).
                    waiting.push(c.clone());
                    self.pending_exceptions.push((c.clone(), caught, uncaught, mode));
                }
                types.extend(found.iter().map(|t| Some(t.id())));
            }
            for t in types {
                self.request_exception(t, caught, uncaught, mode).await?;
            }
            self.ensure_prepare_requests(&waiting).await?;
            let message = (!waiting.is_empty()).then(|| format!("not loaded yet: {}", waiting.join(", ")));
            bps.push(p::Breakpoint { verified: true, message, ..Default::default() });
        }
        Ok(json!({"breakpoints": bps}))
    }

    async fn breakpoint_locations(&mut self, a: p::BreakpointLocationsArgs) -> R<Json> {
        let path = a.source.path.ok_or("breakpointLocations: source.path is required")?;
        let file = sources::source_file_of_path(Path::new(&path), &self.roots);
        let vm = self.vm()?.clone();
        let end = a.end_line.unwrap_or(a.line);
        let mut lines = std::collections::BTreeSet::new();
        for ty in loaded_classes_of(&vm, &file).await.map_err(je)? {
            for (_, l, _) in class_line_table(&ty).await.map_err(je)? {
                if l >= a.line && l <= end {
                    lines.insert(l);
                }
            }
        }
        let list: Vec<Json> = lines.into_iter().map(|l| json!({"line": l})).collect();
        Ok(json!({"breakpoints": list}))
    }

    async fn exception_info(&mut self, a: p::ThreadArgs) -> R<Json> {
        let t = self.thread(a.thread_id)?;
        let (obj, mode) = self.exceptions.get(&t.id().0).cloned().ok_or("this thread did not stop on an exception")?;
        let ty = obj.reference_type().await.map_err(je)?;
        let name = ty.name();
        let message = match obj.get_value_by_name("detailMessage").await.map_err(je)? {
            Some(v @ Value::Object(..)) => match self.vm()?.value_mirror(v) {
                jdi::ValueMirror::String(s) => Some(s.value().await.map_err(je)?),
                _ => None,
            },
            _ => None,
        };
        Ok(json!({
            "exceptionId": name,
            "description": message.clone().unwrap_or_default(),
            "breakMode": mode,
            "details": {"typeName": name, "fullTypeName": name, "message": message.unwrap_or_default()}
        }))
    }

    // ---- inspection ----

    async fn threads(&mut self) -> R<Json> {
        let vm = self.vm()?.clone();
        let all = vm.all_threads().await.map_err(je)?;
        let mut tasks = tokio::task::JoinSet::new();
        for (i, t) in all.iter().enumerate() {
            let t = t.clone();
            tasks.spawn(async move { (i, t.name().await) });
        }
        let mut names = vec![String::new(); all.len()];
        while let Some(r) = tasks.join_next().await {
            if let Ok((i, name)) = r {
                names[i] = name.unwrap_or_else(|_| "<exited>".into());
            }
        }
        let threads: Vec<p::Thread> =
            all.iter().zip(names).map(|(t, name)| p::Thread { id: self.thread_number(t), name }).collect();
        Ok(json!({"threads": threads}))
    }

    async fn stack_trace(&mut self, a: p::StackTraceArgs) -> R<Json> {
        let t = self.thread(a.thread_id)?;
        let vm = self.vm()?.clone();
        let total = t.frame_count().await.map_err(je)?;
        let (start, count) = page(total.into(), a.start_frame, a.levels);
        let frames = if count > 0 { t.frames_range(start as i32, count as i32).await.map_err(je)? } else { Vec::new() };
        let mut out = Vec::new();
        for f in frames {
            let loc = f.location();
            let sl = vm.resolve_location(loc).await.map_err(je)?;
            let line = sl.line_number().await.unwrap_or(-1);
            let class = sl.declaring_type.name();
            let source = self.source_of(&sl.declaring_type).await;
            let id = self.frames.insert(f);
            out.push(p::StackFrame {
                id,
                name: format!("{}.{}", values::simple_name(&class), sl.method.name()),
                source,
                line: line.max(0).into(),
                column: if line > 0 { 1 } else { 0 },
                presentation_hint: if sl.method.is_native() { Some("subtle") } else { None },
                can_restart: Some(true),
            });
        }
        Ok(json!({"stackFrames": out, "totalFrames": total}))
    }

    async fn source_of(&self, ty: &ReferenceType) -> Option<p::Source> {
        let name = ty.source_name().await.ok()?;
        let rel = sources::relative_path(&ty.name(), &name);
        let path = sources::find_in_roots(&self.roots, &rel).or_else(|| {
            self.line_bps.iter().find(|b| b.file.contains(&ty.name(), &name)).map(|b| PathBuf::from(&b.path))
        });
        Some(p::Source { name: Some(name), path: path.map(|p| p.display().to_string()), source_reference: None })
    }

    fn frame(&self, id: i64) -> R<StackFrame> {
        self.frames.get(id).cloned().ok_or_else(|| format!("unknown or stale frame id {id}"))
    }

    async fn scopes(&mut self, a: p::FrameArgs) -> R<Json> {
        let f = self.frame(a.frame_id)?;
        let method = f.method().await.map_err(je)?;
        let ty = method.declaring_type().await.map_err(je)?;
        let locals = self.vars.insert(VarRef::Locals(f));
        let mut scopes = vec![p::Scope {
            name: "Locals".into(),
            presentation_hint: Some("locals"),
            variables_reference: locals,
            expensive: false,
        }];
        if ty.all_fields().await.map_err(je)?.iter().any(|f| f.is_static()) {
            let statics = self.vars.insert(VarRef::Statics(ty));
            scopes.push(p::Scope {
                name: "Static".into(),
                presentation_hint: None,
                variables_reference: statics,
                expensive: false,
            });
        }
        Ok(json!({"scopes": scopes}))
    }

    async fn variable(&mut self, name: String, v: Value, evaluate_name: Option<String>) -> R<p::Variable> {
        let vm = self.vm()?.clone();
        let shown = values::show(&vm, v).await.map_err(je)?;
        let (reference, indexed) = match shown.children {
            Children::None => (0, None),
            Children::Object(o) => (self.vars.insert(VarRef::Object(o)), None),
            Children::Array(a, len) => (self.vars.insert(VarRef::Array(a, len)), Some(len)),
        };
        Ok(p::Variable {
            name,
            value: shown.value,
            type_name: shown.type_name,
            variables_reference: reference,
            indexed_variables: indexed,
            evaluate_name,
            ..Default::default()
        })
    }

    async fn variables(&mut self, a: p::VariablesArgs) -> R<Json> {
        let target = match self.vars.get(a.variables_reference) {
            Some(VarRef::Locals(f)) => VarRef::Locals(f.clone()),
            Some(VarRef::Statics(t)) => VarRef::Statics(t.clone()),
            Some(VarRef::Object(o)) => VarRef::Object(o.clone()),
            Some(VarRef::Array(arr, n)) => VarRef::Array(arr.clone(), *n),
            None => return Err(format!("unknown or stale variablesReference {}", a.variables_reference)),
        };
        let mut out = Vec::new();
        // Arrays have only indexed children, the rest only named ones.
        let wanted = match (&target, a.filter.as_deref()) {
            (VarRef::Array(..), Some("named")) => false,
            (VarRef::Array(..), _) => true,
            (_, Some("indexed")) => false,
            _ => true,
        };
        if !wanted {
            return Ok(json!({"variables": out}));
        }
        match target {
            VarRef::Locals(f) => {
                if let Some(this) = f.this_object().await.map_err(je)? {
                    let v = Value::Object(jdi::Tag::Object, this.id());
                    out.push(self.variable("this".into(), v, Some("this".into())).await?);
                }
                let vars = f.visible_variables().await.map_err(je)?;
                let vals = f.get_values(&vars).await.map_err(je)?;
                for (var, v) in vars.iter().zip(vals) {
                    out.push(self.variable(var.name.clone(), v, Some(var.name.clone())).await?);
                }
            }
            VarRef::Statics(ty) => {
                let fields: Vec<_> = ty.all_fields().await.map_err(je)?.into_iter().filter(|f| f.is_static()).collect();
                let vals = ty.get_values(&fields).await.map_err(je)?;
                for (f, v) in fields.iter().zip(vals) {
                    out.push(self.variable(f.name.clone(), v, Some(format!("{}.{}", ty.name(), f.name))).await?);
                }
            }
            VarRef::Object(o) => {
                let ty = o.reference_type().await.map_err(je)?;
                let fields: Vec<_> =
                    ty.visible_fields().await.map_err(je)?.into_iter().filter(|f| !f.is_static()).collect();
                let (start, count) = page(fields.len() as i64, a.start, a.count);
                let fields = &fields[start as usize..(start + count) as usize];
                let vals = o.get_values(fields).await.map_err(je)?;
                for (f, v) in fields.iter().zip(vals) {
                    out.push(self.variable(f.name.clone(), v, None).await?);
                }
            }
            VarRef::Array(arr, len) => {
                let (start, count) = page(len, a.start, a.count);
                let vals = if count > 0 {
                    arr.get_values_range(start as i32, count as i32).await.map_err(je)?
                } else {
                    Vec::new()
                };
                for (i, v) in vals.into_iter().enumerate() {
                    out.push(self.variable(format!("[{}]", start + i as i64), v, None).await?);
                }
            }
        }
        Ok(json!({"variables": out}))
    }

    async fn set_variable(&mut self, a: p::SetVariableArgs) -> R<Json> {
        let vm = self.vm()?.clone();
        let (thread, frame) = match self.vars.get(a.variables_reference) {
            Some(VarRef::Locals(f)) => (Some(f.thread().clone()), Some(f.clone())),
            // A field or element: the new value is evaluated without a frame (literals, statics).
            Some(_) => (None, None),
            None => return Err(format!("unknown or stale variablesReference {}", a.variables_reference)),
        };
        let ctx = Ctx { vm: vm.clone(), thread, frame };
        let new = evaluate(self, &ctx, &a.value).await?.value;
        match self.vars.get(a.variables_reference) {
            Some(VarRef::Locals(f)) => {
                let f = f.clone();
                if a.name == "this" {
                    return Err("this cannot be assigned".into());
                }
                let var = f.visible_variable_by_name(&a.name).await.map_err(je)?.ok_or("no such local")?;
                f.set_value(&var, new).await.map_err(je)?;
            }
            Some(VarRef::Object(o)) => {
                let o = o.clone();
                let field = o.field_by_name(&a.name).await.map_err(je)?.ok_or("no such field")?;
                o.set_value(&field, new).await.map_err(je)?;
            }
            Some(VarRef::Statics(t)) => {
                let t = t.clone();
                let field = t.field_by_name(&a.name).await.map_err(je)?.ok_or("no such field")?;
                t.as_class().ok_or("not a class")?.set_value(&field, new).await.map_err(je)?;
            }
            Some(VarRef::Array(arr, _)) => {
                let arr = arr.clone();
                let i: i32 = a.name.trim_matches(|c| c == '[' || c == ']').parse().map_err(|_| "not an index")?;
                arr.set_value(i, new).await.map_err(je)?;
            }
            None => return Err(format!("unknown or stale variablesReference {}", a.variables_reference)),
        }
        let v = self.variable(a.name, new, None).await?;
        Ok(json!({"value": v.value, "type": v.type_name, "variablesReference": v.variables_reference}))
    }

    async fn evaluate(&mut self, a: p::EvaluateArgs) -> R<Json> {
        let vm = self.vm()?.clone();
        let frame = match a.frame_id {
            Some(id) => Some(self.frame(id)?),
            None => None,
        };
        let ctx = Ctx { vm, thread: frame.as_ref().map(|f| f.thread().clone()), frame };
        let v = evaluate(self, &ctx, &a.expression).await?.value;
        let var = self.variable(a.expression.clone(), v, Some(a.expression)).await?;
        Ok(json!({
            "result": var.value,
            "type": var.type_name,
            "variablesReference": var.variables_reference,
            "indexedVariables": var.indexed_variables,
        }))
    }

    // ---- running ----

    async fn step(&mut self, a: p::ThreadArgs, depth: StepDepth) -> R<Json> {
        let t = self.thread(a.thread_id)?;
        let vm = self.vm()?.clone();
        // A step left over from an earlier one that did not complete (a breakpoint came first).
        for h in vm.event_requests_of(jdi::EventKind::SingleStep) {
            let _ = h.delete().await;
        }
        let mut r = EventRequest::step(t.id(), StepSize::Line, depth).suspend(SuspendPolicy::All);
        if depth == StepDepth::Into {
            for pat in ["java.*", "javax.*", "jdk.*", "sun.*", "com.sun.*"] {
                r = r.class_exclude(pat);
            }
        }
        vm.create_event_request(r).enable().await.map_err(je)?;
        self.resume_all().await?;
        Ok(Json::Null)
    }

    async fn restart_frame(&mut self, a: p::FrameArgs) -> R<Json> {
        let f = self.frame(a.frame_id)?;
        let t = f.thread().clone();
        t.pop_frames(&f).await.map_err(je)?;
        let vm = self.vm()?.clone();
        let r = EventRequest::step(t.id(), StepSize::Line, StepDepth::Into).suspend(SuspendPolicy::All);
        vm.create_event_request(r).enable().await.map_err(je)?;
        self.resume_all().await?;
        Ok(Json::Null)
    }

    async fn loaded_sources(&mut self) -> R<Json> {
        let vm = self.vm()?.clone();
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        for ty in vm.all_classes().await.map_err(je)? {
            let name = ty.name();
            if ["java.", "javax.", "jdk.", "sun.", "com.sun."].iter().any(|p| name.starts_with(p)) || ty.is_array() {
                continue;
            }
            let Ok(src) = ty.source_name().await else { continue };
            let rel = sources::relative_path(&name, &src);
            if let Some(path) = sources::find_in_roots(&self.roots, &rel)
                && seen.insert(path.clone())
            {
                out.push(p::Source { name: Some(src), path: Some(path.display().to_string()), source_reference: None });
            }
        }
        Ok(json!({"sources": out}))
    }

    /// Deadlocks in one round trip with our agent (monitors and `java.util.concurrent` locks),
    /// else from standard commands (monitors only).
    async fn deadlocks(&mut self) -> R<Json> {
        let vm = self.vm()?.clone();
        if let Ok(p) = jdi::profiler::Profiler::detect(&vm).await
            && p.has(jdi::protocol::commands::profiler::feature::DEADLOCKS)
        {
            let cycles = p.deadlocks(0).await.map_err(je)?;
            let list: Vec<Json> = cycles
                .iter()
                .map(|c| {
                    json!({"threads": c.threads.iter().map(|t| json!({
                        "name": t.name,
                        "waitingFor": jdi::names::type_name_of_signature(&t.lock_class_signature),
                        "stack": t.frames.iter().map(jdi::profiler::frame_name).collect::<Vec<_>>(),
                    })).collect::<Vec<_>>()})
                })
                .collect();
            return Ok(json!({"deadlocks": list, "oneTrip": true}));
        }
        let found = jdi::deadlock::find_deadlocks(&vm).await.map_err(je)?;
        let list: Vec<Json> = found
            .iter()
            .map(|d| {
                json!({"threads": d.threads.iter().map(|t| json!({
                    "name": t.name,
                    "waitingFor": t.waiting_for.type_name,
                    "holds": t.holds.iter().map(|h| h.lock.type_name.clone()).collect::<Vec<_>>(),
                    "stack": t.stack.iter().map(|f| format!("{}.{}:{}", f.class_name, f.method, f.line)).collect::<Vec<_>>(),
                })).collect::<Vec<_>>()})
            })
            .collect();
        Ok(json!({"deadlocks": list, "oneTrip": false}))
    }

    /// `jdbg/profile`: `{"action": "start"|"stop", "kind": "cpu"|"alloc"|"monitors",
    /// "intervalMs", "flame": "out.svg", "top"}`. Needs our agent. `stop` answers with the
    /// heaviest folded stacks and, given `flame`, writes the flame graph there.
    async fn profile(&mut self, a: ProfileArgs) -> R<Json> {
        let vm = self.vm()?.clone();
        let p = jdi::profiler::Profiler::detect(&vm)
            .await
            .map_err(|e| format!("profiling needs jdbg's agent (launch without \"jdkAgent\"): {e}"))?;
        let kind = a.kind.as_str();
        match (a.action.as_str(), kind) {
            ("start", "cpu") => {
                let interval = Duration::from_micros((a.interval_ms.unwrap_or(10.0) * 1000.0).max(100.0) as u64);
                p.cpu_start(interval, 0, &[]).await.map_err(je)?;
            }
            ("start", "alloc") => p.alloc_start(512 * 1024, 0).await.map_err(je)?,
            ("start", "monitors") => p.monitor_start(0).await.map_err(je)?,
            ("stop", "cpu" | "alloc" | "monitors") => {
                let (stacks, title, unit) = match kind {
                    "cpu" => {
                        p.cpu_stop().await.map_err(je)?;
                        let r = p.cpu_report(false).await.map_err(je)?;
                        let s = r.traces.iter().map(|t| (jdi::profiler::folded(&t.frames), t.samples)).collect();
                        (s, "CPU samples", "samples")
                    }
                    "alloc" => {
                        p.alloc_stop().await.map_err(je)?;
                        let r = p.alloc_report(false).await.map_err(je)?;
                        let s = r
                            .sites
                            .iter()
                            .map(|site| {
                                let trace = r.traces.iter().find(|t| t.trace_id == site.trace_id);
                                let mut f = trace.map(|t| jdi::profiler::folded(&t.frames)).unwrap_or_default();
                                let class = jdi::names::type_name_of_signature(&site.class_signature);
                                f = if f.is_empty() { format!("[{class}]") } else { format!("{f};[{class}]") };
                                (f, site.allocated_bytes)
                            })
                            .collect();
                        (s, "Allocated bytes", "bytes")
                    }
                    _ => {
                        p.monitor_stop().await.map_err(je)?;
                        let r = p.monitor_report(false).await.map_err(je)?;
                        let s = r
                            .monitors
                            .iter()
                            .map(|m| {
                                let trace = r.traces.iter().find(|t| t.trace_id == m.trace_id);
                                (
                                    trace.map(|t| jdi::profiler::folded(&t.frames)).unwrap_or_default(),
                                    m.total_blocked_nanos,
                                )
                            })
                            .collect();
                        (s, "Time blocked on monitors", "ns")
                    }
                };
                let mut stacks: Vec<(String, i64)> = stacks;
                stacks.sort_by_key(|s| std::cmp::Reverse(s.1));
                let folded: String = stacks.iter().map(|(f, n)| format!("{f} {n}\n")).collect();
                let mut written = None;
                if let Some(path) = &a.flame {
                    let writer = self.config.flame.ok_or("this adapter was built without a flame graph renderer")?;
                    writer(path, &folded, title, unit)?;
                    written = Some(path.clone());
                }
                let top: Vec<Json> =
                    stacks.iter().take(a.top.unwrap_or(20)).map(|(f, n)| json!({"stack": f, "count": n})).collect();
                return Ok(json!({"kind": kind, "unit": unit, "top": top, "flame": written}));
            }
            (action, kind) => return Err(format!("jdbg/profile: unknown action {action:?} or kind {kind:?}")),
        }
        Ok(json!({"kind": kind, "running": true}))
    }
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct ProfileArgs {
    action: String,
    kind: String,
    #[serde(default)]
    interval_ms: Option<f64>,
    #[serde(default)]
    flame: Option<String>,
    #[serde(default)]
    top: Option<usize>,
}

impl Host for Adapter {
    /// While an expression runs code in the VM, events keep coming: classes prepared meanwhile
    /// get their breakpoints, and every set is resumed so the invocation can finish.
    async fn while_invoking<T>(&mut self, fut: impl Future<Output = jdi::Result<T>>) -> Result<T, String> {
        tokio::pin!(fut);
        loop {
            let Some(events) = self.events.as_mut() else { return fut.await.map_err(je) };
            tokio::select! {
                r = &mut fut => return r.map_err(je),
                set = events.next() => match set {
                    Some(Ok(set)) => {
                        for e in &set.events {
                            if let Event::ClassPrepare { type_id, .. } = e
                                && let Some(vm) = self.vm.clone()
                                && let Ok(ty) = vm.reference_type(*type_id).await
                            {
                                self.class_prepared(&ty).await;
                            }
                        }
                        if !set.is_vm_death() {
                            let _ = set.resume().await;
                        }
                    }
                    _ => return Err("the VM disconnected during the method invocation".into()),
                },
            }
        }
    }
}

async fn next_set(events: &mut Option<EventQueue>) -> Option<jdi::Result<EventSet>> {
    match events {
        Some(q) => q.next().await,
        None => std::future::pending().await,
    }
}

async fn forward<S: AsyncRead + Unpin>(mut stream: S, out: Out, category: &'static str) {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => out.output(category, String::from_utf8_lossy(&buf[..n]).into_owned()),
        }
    }
}

/// Where sources are looked up: `sourcePaths`, else the working directory and class path folders.
fn roots(source_paths: &[String], cwd: Option<&str>, class_paths: &[String]) -> Vec<PathBuf> {
    let mut r: Vec<PathBuf> = source_paths.iter().map(PathBuf::from).collect();
    if let Some(c) = cwd {
        r.push(PathBuf::from(c));
    }
    r.extend(class_paths.iter().map(PathBuf::from).filter(|p| p.is_dir()));
    if let Ok(here) = std::env::current_dir() {
        r.push(here);
    }
    r
}

fn line_bp_json(b: &LineBp, announce: bool) -> p::Breakpoint {
    let _ = announce;
    p::Breakpoint {
        id: Some(b.id),
        verified: b.actual_line.is_some(),
        message: if b.actual_line.is_none() { Some("not yet resolved to loaded code".into()) } else { None },
        source: Some(p::Source {
            name: Some(b.file.file_name.clone()),
            path: Some(b.path.clone()),
            source_reference: None,
        }),
        line: Some(b.actual_line.unwrap_or(b.line)),
        reason: if b.actual_line.is_none() { Some("pending") } else { None },
    }
}

/// Loaded classes compiled from `file`: the main class, its nested classes, then (rarely needed)
/// other classes of the package with the same source name.
async fn loaded_classes_of(vm: &VirtualMachine, file: &SourceFile) -> jdi::Result<Vec<ReferenceType>> {
    let main = file.main_class();
    let mut out = Vec::new();
    let mut queue = vm.classes_by_name(&main).await?;
    let mut seen = HashSet::new();
    while let Some(t) = queue.pop() {
        if !seen.insert(t.id().0) {
            continue;
        }
        if let Ok(nested) = t.nested_types().await {
            queue.extend(nested);
        }
        out.push(t);
    }
    Ok(out)
}

/// Every line location of a class, as `(method index, line, location)`.
async fn class_line_table(ty: &ReferenceType) -> jdi::Result<Vec<(usize, i64, Location)>> {
    let mut out = Vec::new();
    for (i, m) in ty.methods().await?.iter().enumerate() {
        if m.is_abstract() || m.is_native() {
            continue;
        }
        for ll in m.all_line_locations().await.unwrap_or_default() {
            out.push((i, i64::from(ll.line), m.location(ll.code_index)));
        }
    }
    Ok(out)
}

/// Whether the hit count meets a hit condition: `N` or `>= N` (from the Nth on), `> N`, `== N`,
/// `% N` (every Nth).
pub fn hit_condition_met(cond: &str, hits: u64) -> Result<bool, String> {
    let c = cond.trim();
    let (op, n) = if let Some(r) = c.strip_prefix(">=") {
        (">=", r)
    } else if let Some(r) = c.strip_prefix("==") {
        ("==", r)
    } else if let Some(r) = c.strip_prefix('>') {
        (">", r)
    } else if let Some(r) = c.strip_prefix('%') {
        ("%", r)
    } else if let Some(r) = c.strip_prefix('=') {
        ("==", r)
    } else {
        (">=", c)
    };
    let n: u64 = n.trim().parse().map_err(|_| format!("not a count: {:?}", n.trim()))?;
    Ok(match op {
        ">=" => hits >= n,
        ">" => hits > n,
        "==" => hits == n,
        _ => n != 0 && hits.is_multiple_of(n),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nulls_are_dropped_from_messages() {
        let v = strip_nulls(json!({"a": null, "b": [{"c": null, "d": 1}], "e": {"f": null}}));
        assert_eq!(v, json!({"b": [{"d": 1}], "e": {}}));
    }

    #[test]
    fn hit_conditions() {
        assert!(!hit_condition_met("3", 2).unwrap());
        assert!(hit_condition_met("3", 3).unwrap());
        assert!(hit_condition_met("3", 4).unwrap());
        assert!(hit_condition_met("== 3", 3).unwrap());
        assert!(!hit_condition_met("==3", 4).unwrap());
        assert!(!hit_condition_met("> 3", 3).unwrap());
        assert!(hit_condition_met("%2", 4).unwrap());
        assert!(!hit_condition_met("%2", 3).unwrap());
        assert!(!hit_condition_met("%0", 3).unwrap());
        assert!(hit_condition_met("lots", 1).is_err());
    }
}
