//! Support shared by jdi-rs's integration tests: start a fixture under the agent chosen at run
//! time, attach, and drive it to interesting places.
//!
//! `JDI_TEST_AGENT` picks the agent: unset or `jdk` for the JDK's `-agentlib:jdwp`, `ours` for this
//! workspace's `libjdwp_agent.so` (built in the same profile), or a path to any agent library.
#![allow(dead_code)]

use std::path::PathBuf;
use std::time::Duration;

use jdi::{Event, EventQueue, EventRequest, EventSet, ReferenceType, SuspendPolicy, ThreadReference, VirtualMachine};
use test_rig::{Agent, DEFAULT_JDK_AGENT_OPTIONS, Debuggee};

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

/// `target/<profile>/libjdwp_agent.so`, next to the test binary's profile directory.
pub fn our_agent_path() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    // target/<profile>/deps/<test> → target/<profile>/libjdwp_agent.so
    exe.parent().and_then(|deps| deps.parent()).expect("target profile dir").join("libjdwp_agent.so")
}

/// A debuggee with a connected VM, stopped at VM start.
pub struct Session {
    pub jvm: Debuggee,
    pub vm: VirtualMachine,
    pub events: EventQueue,
}

/// Starts `main_class` (a fixture) suspended, attaches, and consumes the VM start event.
pub async fn start(main_class: &str, args: &[&str]) -> Session {
    let jvm = Debuggee::builder(main_class).args(args.iter().copied()).agent(agent()).spawn().expect("debuggee starts");
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
        let status = tokio::task::spawn_blocking(move || {
            let status = self.jvm.wait_for_exit(TIMEOUT);
            (status, self.jvm.output_text())
        })
        .await
        .unwrap();
        assert!(status.0.is_some_and(|s| s.success()), "debuggee did not exit normally: {:?}\n{}", status.0, status.1);
    }
}
