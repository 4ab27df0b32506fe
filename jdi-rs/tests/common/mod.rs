//! Support shared by jdi-rs's integration tests: start a fixture under the agent chosen at run
//! time, attach, and drive it to interesting places.
//!
//! `JDI_TEST_AGENT` picks the agent: unset or `jdk` for the JDK's `-agentlib:jdwp`, `ours` for this
//! workspace's `libjdwp_agent.so` (built in the same profile), or a path to any agent library.
//! `JDI_TEST_TRANSPORT=shmem` runs the tests over shared memory (`dt_shmem`) instead of a socket;
//! with the JDK's agent that is this workspace's `libdt_shmem.so` (build `-p dt-shmem` first).
#![allow(dead_code)]

use std::path::PathBuf;
use std::time::Duration;

use jdi::{Event, EventQueue, EventRequest, EventSet, ReferenceType, SuspendPolicy, ThreadReference, VirtualMachine};
use test_rig::{Agent, DEFAULT_JDK_AGENT_OPTIONS, Debuggee, DebuggeeBuilder};

/// Generous: tests must pass on a loaded 2-core machine.
pub const TIMEOUT: Duration = Duration::from_secs(60);

/// The agent under test.
pub fn agent() -> Agent {
    match std::env::var("JDI_TEST_AGENT").ok().as_deref() {
        None | Some("") | Some("jdk") => Agent::jdk_default(),
        Some("ours") => Agent::path(our_agent_path(), DEFAULT_JDK_AGENT_OPTIONS),
        Some(path) => Agent::path(PathBuf::from(path), DEFAULT_JDK_AGENT_OPTIONS),
    }
}

/// Whether the agent under test is this workspace's (`JDI_TEST_AGENT=ours`).
pub fn agent_is_ours() -> bool {
    std::env::var("JDI_TEST_AGENT").is_ok_and(|a| a == "ours")
}

/// `target/<profile>/libjdwp_agent.so`, next to the test binary's profile directory.
pub fn our_agent_path() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    // target/<profile>/deps/<test> → target/<profile>/libjdwp_agent.so
    exe.parent().and_then(|deps| deps.parent()).expect("target profile dir").join("libjdwp_agent.so")
}

/// Whether `JDI_TEST_TRANSPORT` asks for shared memory.
pub fn shmem_selected() -> bool {
    std::env::var("JDI_TEST_TRANSPORT").is_ok_and(|t| t == "shmem")
}

/// A shared memory name no other test (or run) uses.
pub fn unique_shmem_name(tag: &str) -> String {
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    format!("jdi-{tag}-{}-{}", std::process::id(), N.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
}

/// `target/<profile>/libdt_shmem.so`, the JDK transport library of this workspace.
pub fn dt_shmem_dir() -> PathBuf {
    let dir = our_agent_path().parent().expect("profile dir").to_path_buf();
    assert!(
        dir.join("libdt_shmem.so").exists(),
        "{} is missing: build it with `cargo build -p dt-shmem` (same profile as the tests)",
        dir.join("libdt_shmem.so").display()
    );
    dir
}

/// Which agent serves a shared memory session.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShmemAgent {
    /// Ours (`libjdwp_agent.so`) with its built-in `dt_shmem`.
    Ours,
    /// The JDK's `-agentlib:jdwp` loading our `libdt_shmem.so`.
    JdkWithOurTransport,
    /// Ours loading a copy of our `libdt_shmem.so` as a transport library of another name
    /// ([`LIBRARY_TRANSPORT`]), since the name `dt_shmem` is its built-in transport.
    OursWithLibrary,
}

/// The transport name under which [`ShmemAgent::OursWithLibrary`] loads `libdt_shmem.so`.
pub const LIBRARY_TRANSPORT: &str = "copied_dt_shmem";

impl ShmemAgent {
    /// The `transport=` name this agent is given.
    pub fn transport(self) -> &'static str {
        match self {
            ShmemAgent::OursWithLibrary => LIBRARY_TRANSPORT,
            ShmemAgent::Ours | ShmemAgent::JdkWithOurTransport => "dt_shmem",
        }
    }

    /// `builder` with this agent, `transport=` and then `options`, and the library path it needs.
    pub fn configure(self, builder: DebuggeeBuilder, options: &str) -> DebuggeeBuilder {
        let options = format!("transport={},{options}", self.transport());
        match self {
            ShmemAgent::Ours => builder.agent(Agent::path(our_agent_path(), options)),
            ShmemAgent::JdkWithOurTransport => {
                builder.agent(Agent::jdk(options)).env("LD_LIBRARY_PATH", dt_shmem_dir().into_os_string())
            }
            ShmemAgent::OursWithLibrary => builder
                .agent(Agent::path(our_agent_path(), options))
                .env("LD_LIBRARY_PATH", library_copy_dir().into_os_string()),
        }
    }
}

/// `target/<profile>/transport-library-copy/`, holding `libdt_shmem.so` as
/// `lib<LIBRARY_TRANSPORT>.so`. Copied once per test process, and put in place by a rename, so a
/// JVM of another test process that has the previous copy loaded is not disturbed.
pub fn library_copy_dir() -> PathBuf {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let dir = our_agent_path().parent().expect("profile dir").join("transport-library-copy");
        std::fs::create_dir_all(&dir).unwrap();
        let staged = dir.join(format!(".lib{LIBRARY_TRANSPORT}.so.{}", std::process::id()));
        std::fs::copy(dt_shmem_dir().join("libdt_shmem.so"), &staged).unwrap();
        std::fs::rename(&staged, dir.join(format!("lib{LIBRARY_TRANSPORT}.so"))).unwrap();
        dir
    })
    .clone()
}

/// Starts `main_class` suspended with `agent` listening on shared memory as `name`, waits for
/// its "Listening for transport <transport> at address: NAME" line, and returns the debuggee.
pub fn spawn_shmem(main_class: &str, args: &[&str], agent: ShmemAgent, name: &str) -> Debuggee {
    spawn_shmem_with(main_class, args, &[], agent, name)
}

/// Like [`spawn_shmem`], with extra options for the debuggee's JVM.
pub fn spawn_shmem_with(
    main_class: &str,
    args: &[&str],
    jvm_options: &[&str],
    agent: ShmemAgent,
    name: &str,
) -> Debuggee {
    let builder = Debuggee::builder(main_class)
        .args(args.iter().copied())
        .jvm_options(jvm_options.iter().copied())
        .expect_listening(false);
    let builder = match agent {
        ShmemAgent::Ours | ShmemAgent::OursWithLibrary => builder.virtual_main(ours_virtual_main()),
        ShmemAgent::JdkWithOurTransport => builder,
    };
    let builder = agent.configure(builder, &format!("server=y,suspend=y,address={name}"));
    let jvm = builder.spawn().expect("debuggee starts");
    jvm.wait_for_line(&format!("Listening for transport {} at address: {name}", agent.transport()), TIMEOUT)
        .expect("the agent announces its shared memory name");
    jvm
}

/// Like [`start`], over shared memory with the given agent.
pub async fn start_shmem(main_class: &str, args: &[&str], agent: ShmemAgent) -> Session {
    start_shmem_with(main_class, args, &[], agent).await
}

async fn start_shmem_with(main_class: &str, args: &[&str], jvm_options: &[&str], agent: ShmemAgent) -> Session {
    let name = unique_shmem_name(main_class);
    let jvm = spawn_shmem_with(main_class, args, jvm_options, agent, &name);
    let vm = jdi::attach_shmem(&name, Some(TIMEOUT)).await.expect("attach over shared memory");
    let mut events = vm.event_queue().expect("the event queue");
    let set = events.next_within(TIMEOUT).await.expect("VM start event");
    assert!(matches!(set.events.as_slice(), [Event::VmStart { .. }]), "{set:?}");
    Session { jvm, vm, events }
}

/// A debuggee with a connected VM, stopped at VM start.
pub struct Session {
    pub jvm: Debuggee,
    pub vm: VirtualMachine,
    pub events: EventQueue,
}

/// Starts `main_class` (a fixture) suspended, attaches, and consumes the VM start event.
pub async fn start(main_class: &str, args: &[&str]) -> Session {
    start_with(main_class, args, &[]).await
}

/// Like [`start`], with extra options for the debuggee's JVM.
pub async fn start_with(main_class: &str, args: &[&str], jvm_options: &[&str]) -> Session {
    if shmem_selected() {
        let agent = match std::env::var("JDI_TEST_AGENT").ok().as_deref() {
            Some("ours") => ShmemAgent::Ours,
            _ => ShmemAgent::JdkWithOurTransport,
        };
        return start_shmem_with(main_class, args, jvm_options, agent).await;
    }
    let jvm = Debuggee::builder(main_class)
        .args(args.iter().copied())
        .jvm_options(jvm_options.iter().copied())
        .agent(agent())
        .spawn()
        .expect("debuggee starts");
    let vm = jdi::attach(&jvm.address().to_string(), Some(TIMEOUT)).await.expect("attach");
    let mut events = vm.event_queue().expect("the event queue");
    let set = events.next_within(TIMEOUT).await.expect("VM start event");
    assert!(matches!(set.events.as_slice(), [Event::VmStart { .. }]), "{set:?}");
    Session { jvm, vm, events }
}

impl Session {
    /// Resumes until `class` is prepared and returns its mirror (all threads suspended).
    pub async fn run_to_class_prepare(&mut self, class: &str) -> ReferenceType {
        let req = self.vm.enable_request(&EventRequest::class_prepare(class)).await.unwrap();
        self.vm.resume().await.unwrap();
        let set = self
            .events
            .wait_for(TIMEOUT, |e| matches!(e, Event::ClassPrepare { request_id, .. } if *request_id == req.id))
            .await
            .unwrap();
        self.vm.disable_request(req).await.unwrap();
        let Some(Event::ClassPrepare { type_id, ref_type_tag, .. }) =
            set.events.iter().find(|e| matches!(e, Event::ClassPrepare { .. })).cloned()
        else {
            unreachable!()
        };
        self.vm.reference_type_of_kind(ref_type_tag, type_id).await.unwrap()
    }

    /// Runs to the first breakpoint at `class:line` and returns the event set and its thread
    /// (all threads suspended; the breakpoint request stays enabled).
    pub async fn run_to_line(&mut self, class: &str, line: u32) -> (EventSet, ThreadReference) {
        let ty = match self.vm.classes_by_name(class).await.unwrap().into_iter().next() {
            Some(ty) => ty,
            None => self.run_to_class_prepare(class).await,
        };
        let locations = ty.locations_of_line(line as i32).await.unwrap();
        let location = *locations.first().unwrap_or_else(|| panic!("no code at {class}:{line}"));
        let req =
            self.vm.enable_request(&EventRequest::breakpoint(location).suspend(SuspendPolicy::All)).await.unwrap();
        self.vm.resume().await.unwrap();
        let set = self
            .events
            .wait_for(TIMEOUT, |e| matches!(e, Event::Breakpoint { request_id, .. } if *request_id == req.id))
            .await
            .unwrap();
        let thread = set.thread().expect("breakpoint thread");
        (set, thread)
    }

    /// Runs to the line marked `// @marker` in `File.java` (class = file stem).
    pub async fn run_to_marker(&mut self, class: &str, marker: &str) -> (EventSet, ThreadReference) {
        let line = test_rig::fixture_line(&format!("{class}.java"), marker).unwrap();
        self.run_to_line(class, line).await
    }

    /// Clears every request, resumes and waits for the debuggee to exit normally.
    pub async fn finish(self) {
        let _ = self.vm.clear_all_breakpoints().await;
        for (id, _) in self.vm.event_request_manager().requests() {
            let _ = self.vm.disable_request(id).await;
        }
        // Drain: resume whatever is suspended until the VM dies or disconnects.
        self.vm.resume().await.unwrap();
        let _ = self.vm.dispose().await;
        self.exits_normally().await;
    }

    /// Waits for the debuggee to end by itself, asserts that it exited normally, and returns its
    /// output.
    pub async fn exits_normally(self) -> String {
        let (status, output) = tokio::task::spawn_blocking(move || {
            let status = self.jvm.wait_for_exit(TIMEOUT);
            (status, self.jvm.output_text())
        })
        .await
        .unwrap();
        assert!(status.is_some_and(|s| s.success()), "debuggee did not exit normally: {status:?}\n{output}");
        output
    }
}

/// Whether the fixtures' `main`s run in a virtual thread (`JDBG_TEST_VIRTUAL_MAIN=1`).
pub fn virtual_main() -> bool {
    test_rig::virtual_main_requested()
}

/// The class of the thread running a fixture's `main`: `java.lang.VirtualThread` for a virtual
/// main, `java.lang.Thread` for a platform one.
pub fn main_thread_class() -> &'static str {
    if virtual_main() { "java.lang.VirtualThread" } else { "java.lang.Thread" }
}

/// The name of the thread group of the thread running a fixture's `main` (and so of the groups
/// and threads it creates without naming one): `VirtualThreads` for a virtual main (JDK 21+: every
/// virtual thread is in that group), `main` for a platform one.
pub fn main_group_name() -> &'static str {
    if virtual_main() { "VirtualThreads" } else { "main" }
}

/// The frames below a fixture's `main` (innermost first) in the thread running it: none for a
/// platform main; for a virtual main, the wrapper's reflective call of `main`
/// (`tests/src/virtual_main/VirtualMainWrapper.java`) and the virtual thread's own start, as JDK 25
/// has them (recorded from JDK 25's agent; another JDK's frames are to be recorded first).
pub fn frames_below_main() -> &'static [&'static str] {
    if !virtual_main() {
        return &[];
    }
    match test_rig::jdk_feature_version().unwrap() {
        25 => &[
            "invokeStatic",   // DirectMethodHandle$Holder
            "invoke",         // LambdaForm$MH
            "invokeExact_MT", // Invokers$Holder
            "invokeImpl",     // DirectMethodHandleAccessor
            "invoke",         // DirectMethodHandleAccessor
            "invoke",         // Method
            "lambda$main$0",  // VirtualMainWrapper
            "run",            // VirtualMainWrapper$$Lambda
            "runWith",        // Thread
            "run",            // VirtualThread
            "run",            // VirtualThread$VThreadContinuation$1
            "enter0",         // Continuation
            "enter",          // Continuation
        ],
        other => panic!("the frames below a virtual main on JDK {other} are not recorded (see frames_below_main)"),
    }
}

/// Whether a test that runs our agent whatever `JDI_TEST_AGENT` says (the shmem variants, the
/// profiler) runs its fixture's `main` in a virtual thread: only in the runs against our agent
/// (`JDI_TEST_AGENT=ours JDBG_TEST_VIRTUAL_MAIN=1`). The runs against the JDK's agent with
/// virtual mains check the JDK's behaviour; these tests run with platform mains there, as they
/// do in the run against our agent with platform mains.
pub fn ours_virtual_main() -> bool {
    virtual_main() && agent_is_ours()
}
