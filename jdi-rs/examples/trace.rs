//! Traces the method calls of some classes: method entry and exit requests filtered by a class
//! pattern, printed as an indented call tree per thread, with arguments and return values.
//!
//! ```text
//! cargo run -p jdi-rs --example trace -- --launch Demo --classpath DIR [--class 'Demo*'] [-- ARGS...]
//! # a JVM started with -agentlib:jdwp=transport=dt_socket,server=y,suspend=y,address=5005
//! cargo run -p jdi-rs --example trace -- --attach 127.0.0.1:5005 --class 'com.example.*'
//! ```
//!
//! `--class` takes a JDWP class pattern (a name, optionally with a leading or trailing `*`); it
//! defaults to the launched main class. Output, one line per call and return:
//!
//! ```text
//! [main] -> Demo.tick(n=0)
//! [main] <- Demo.tick = 0
//! ```
//!
//! Exit status: 0 once the VM has exited, 1 if something failed, 2 for a bad command line.

mod common;

use std::collections::HashMap;
use std::process::ExitCode;

use common::{Args, Failure, Target};
use jdi::protocol::{Location, ThreadId, Value};
use jdi::{Event, EventRequest, SuspendPolicy, VirtualMachine};

const HELP: &str = "\
usage: trace (--attach HOST:PORT | --launch MAIN [--classpath CP] [--agentpath LIB] [-- ARGS...])
             [--class PATTERN]
Prints the calls and returns of methods of the classes matching PATTERN (default: MAIN).
";

#[tokio::main]
async fn main() -> ExitCode {
    common::finish("trace", run().await)
}

async fn run() -> Result<ExitCode, Failure> {
    let args = Args::parse(std::env::args().skip(1), &["--class"], &["--help"])?;
    if args.has("--help") {
        print!("{HELP}");
        return Ok(ExitCode::SUCCESS);
    }
    let target = Target::from_args(&args)?;
    if args.value("--break").is_some() {
        return Err(Failure::usage("trace does not take --break"));
    }
    let pattern = match (args.value("--class"), target.main_class()) {
        (Some(p), _) => p.to_string(),
        (None, Some(main)) => main.to_string(),
        (None, None) => return Err(Failure::usage("--attach needs --class PATTERN")),
    };
    if pattern.is_empty() || pattern.trim_matches('*').contains('*') {
        return Err(Failure::usage(format!("--class: {pattern:?} is not a class pattern (one leading or trailing *)")));
    }

    let mut session = common::connect(&target).await?;
    let vm = session.vm.clone();
    // Entries stop their thread so its arguments can be read; exits carry their value.
    let entry = EventRequest::method_entry().class_match(&pattern).suspend(SuspendPolicy::EventThread);
    let exit = EventRequest::method_exit_with_return_value().class_match(&pattern).suspend(SuspendPolicy::None);
    vm.enable_request(&entry).await?;
    vm.enable_request(&exit).await?;
    vm.enable_request(&EventRequest::vm_death().suspend(SuspendPolicy::None)).await?;
    // Started suspended (launched, or an agent with suspend=y): go. A running VM is unaffected.
    vm.resume().await?;

    let mut tracer = Tracer { vm: vm.clone(), threads: HashMap::new() };
    while let Some(set) = session.events.next().await {
        let set = set?;
        let mut died = false;
        for event in &set.events {
            match *event {
                Event::MethodEntry { thread, location, .. } => tracer.entered(thread, location).await?,
                Event::MethodExitWithReturnValue { thread, location, value, .. } => {
                    tracer.returned(thread, location, value).await?
                }
                Event::VmDeath { .. } => died = true,
                _ => {}
            }
        }
        if died {
            break;
        }
        match set.resume().await {
            Err(e) if e.is_disconnected() => break,
            other => other?,
        }
    }
    if let Some(process) = session.process {
        // Let the forwarded output drain before we exit.
        let _ = tokio::time::timeout(common::TIMEOUT, process.wait()).await;
    }
    Ok(ExitCode::SUCCESS)
}

/// A traced call still running: its method and its thread's frame count when it started.
struct Call {
    method: (u64, u64),
    name: String,
    frames: i32,
}

#[derive(Default)]
struct ThreadState {
    name: String,
    /// The frame count of the first traced call: the tree's left margin.
    base: i32,
    calls: Vec<Call>,
}

struct Tracer {
    vm: VirtualMachine,
    threads: HashMap<ThreadId, ThreadState>,
}

fn method_key(location: Location) -> (u64, u64) {
    (location.class_id.0, location.method_id.0)
}

impl Tracer {
    async fn thread(&mut self, thread: ThreadId, frames: i32) -> jdi::Result<&mut ThreadState> {
        if !self.threads.contains_key(&thread) {
            let name = self.vm.thread(thread).name().await?;
            self.threads.insert(thread, ThreadState { name, base: frames, calls: Vec::new() });
        }
        Ok(self.threads.get_mut(&thread).expect("just inserted"))
    }

    async fn method_name(&self, location: Location) -> jdi::Result<String> {
        let loc = self.vm.resolve_location(location).await?;
        Ok(format!("{}.{}", loc.declaring_type.name(), loc.method.name()))
    }

    /// Prints a line at the depth of a call that started with `frames` frames on the stack.
    fn print(state: &ThreadState, frames: i32, text: &str) {
        let depth = usize::try_from(frames - state.base).unwrap_or(0);
        println!("[{}] {}{text}", state.name, "  ".repeat(depth));
    }

    /// Forgets calls whose frames are gone although no exit was reported: they ended by throwing.
    fn unwind_to(&mut self, thread: ThreadId, frames: i32) {
        let Some(state) = self.threads.get_mut(&thread) else { return };
        while state.calls.last().is_some_and(|c| c.frames >= frames) {
            let Some(call) = state.calls.pop() else { break };
            Self::print(state, call.frames, &format!("<- {} threw", call.name));
        }
    }

    async fn entered(&mut self, thread: ThreadId, location: Location) -> jdi::Result<()> {
        // The thread is suspended at its entry, so its stack can be read.
        let frames = self.vm.thread(thread).frame_count().await?;
        self.thread(thread, frames).await?;
        self.unwind_to(thread, frames);
        let name = self.method_name(location).await?;
        let args = self.arguments(thread).await.unwrap_or_else(|_| "...".into());
        let state = self.threads.get_mut(&thread).expect("known thread");
        state.base = state.base.min(frames);
        Self::print(state, frames, &format!("-> {name}({args})"));
        state.calls.push(Call { method: method_key(location), name, frames });
        Ok(())
    }

    async fn returned(&mut self, thread: ThreadId, location: Location, value: Value) -> jdi::Result<()> {
        let name = self.method_name(location).await?;
        let shown = match value {
            Value::Void => String::new(),
            value => format!(" = {}", self.vm.value_mirror(value).display().await?),
        };
        let key = method_key(location);
        let frames = match self.threads.get(&thread).and_then(|s| s.calls.iter().rposition(|c| c.method == key)) {
            Some(at) => {
                let frames = self.threads[&thread].calls[at].frames;
                // Calls above it that reported no exit threw.
                self.unwind_to(thread, frames + 1);
                self.threads.get_mut(&thread).expect("known thread").calls.pop();
                frames
            }
            // A call that started before tracing did.
            None => self.thread(thread, 0).await?.base,
        };
        Self::print(&self.threads[&thread], frames, &format!("<- {name}{shown}"));
        Ok(())
    }

    /// `name=value, ...` of the top frame's arguments (needs classes compiled with `-g`).
    async fn arguments(&self, thread: ThreadId) -> jdi::Result<String> {
        let frame = self.vm.thread(thread).frame(0).await?;
        let loc = self.vm.resolve_location(frame.location()).await?;
        let params: Vec<_> = loc.method.variables().await?.iter().filter(|v| v.is_argument).cloned().collect();
        let values = frame.get_values(&params).await?;
        let mut shown = Vec::new();
        for (param, value) in params.iter().zip(values) {
            shown.push(format!("{}={}", param.name, self.vm.value_mirror(value).display().await?));
        }
        Ok(shown.join(", "))
    }
}
