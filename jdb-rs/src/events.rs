//! Event handling, as jdb's `EventHandler` and `TTY` listener do it: which events stop the
//! session, what is printed for each (`Breakpoint hit: "thread=main", Demo.tick(), line=50
//! bci=0`, the source line, a blank line), and the end of the VM.

use std::time::Duration;

use jdi::{Event, EventSet, SuspendPolicy, ThreadReference};
use serde_json::{Map, Value as Json, json};

use crate::format::{LocInfo, loc_info};
use crate::out::Style;
use crate::record;
use crate::session::{Session, VM_START_GRACE, Waited};

/// What processing one event set did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetOutcome {
    /// Nothing to stop for; the set was resumed.
    Resumed,
    /// The session stopped (a thread is current, the location was printed).
    Stopped,
    /// The VM is gone.
    Ended,
}

impl Session {
    /// The next event set (for the REPL, which waits for input and events at once). Pending
    /// forever when not connected.
    pub async fn next_event_set(&mut self) -> Option<jdi::Result<EventSet>> {
        match self.conn.as_mut() {
            Some(c) => c.next_set().await,
            None => std::future::pending().await,
        }
    }

    /// Handles an event set that arrived while no command was waiting (REPL, VM running).
    pub async fn handle_async(&mut self, set: Option<jdi::Result<EventSet>>) -> SetOutcome {
        let outcome = match set {
            None => {
                self.vm_gone(false).await;
                SetOutcome::Ended
            }
            Some(Err(e)) => {
                self.out.error(format!("Error reading an event: {e}"));
                SetOutcome::Resumed
            }
            Some(Ok(set)) => self.process_set(set).await,
        };
        if outcome == SetOutcome::Stopped {
            self.print_prompt().await;
        }
        outcome
    }

    /// Handles the event sets already queued, without waiting (between scripted commands).
    pub async fn drain_pending_events(&mut self) {
        loop {
            let Some(conn) = self.conn.as_mut() else { return };
            let next = tokio::time::timeout(Duration::ZERO, conn.next_set()).await;
            match next {
                Err(_) => return,
                Ok(set) => {
                    if self.handle_async(set).await == SetOutcome::Ended {
                        return;
                    }
                }
            }
        }
    }

    /// After attaching: a VM started with `suspend=y` has sent its start event; handle it, and
    /// stop there as jdb does.
    ///
    /// Connecting took the start event if it came within [`VM_START_GRACE`] (and held it, see
    /// `Session::connected`); on a loaded machine it can come later, and then it stops the
    /// session when it comes (`stop_on_vm_start` stays set), as jdb's does. An earlier version
    /// decided from the threads' suspension, and a start event that came after that look
    /// resumed the VM: the program ran to its end.
    pub(crate) async fn settle_after_connect(&mut self) {
        // Only a VM start event reads it; `run` clears it for the VMs it launches.
        self.stop_on_vm_start = true;
        if self.conn.as_ref().is_some_and(|c| c.held.is_some()) {
            let _ = self.wait_for_stop(Some(VM_START_GRACE), false).await;
        }
    }

    /// Waits until the VM stops (an event that suspends), ends, or the wait is cut short by
    /// Ctrl-C (interactive sessions) or `timeout`.
    pub(crate) async fn wait_for_stop(&mut self, timeout: Option<Duration>, interruptible: bool) -> Waited {
        let deadline = timeout.map(|t| tokio::time::Instant::now() + t);
        loop {
            let Some(conn) = self.conn.as_mut() else { return Waited::Ended };
            let set = tokio::select! {
                set = conn.next_set() => set,
                _ = tokio::signal::ctrl_c(), if interruptible => {
                    self.out.newline_if_needed();
                    self.out.line("Interrupted; the VM keeps running (use 'suspend' to stop it).");
                    return Waited::Interrupted;
                }
                _ = async {
                    match deadline {
                        Some(d) => tokio::time::sleep_until(d).await,
                        None => std::future::pending().await,
                    }
                } => {
                    return Waited::TimedOut;
                }
            };
            let outcome = match set {
                None => {
                    self.vm_gone(false).await;
                    SetOutcome::Ended
                }
                Some(Err(e)) => {
                    self.out.error(format!("Error reading an event: {e}"));
                    SetOutcome::Resumed
                }
                Some(Ok(set)) => self.process_set(set).await,
            };
            match outcome {
                SetOutcome::Resumed => continue,
                SetOutcome::Stopped => return Waited::Stopped,
                SetOutcome::Ended => return Waited::Ended,
            }
        }
    }

    /// Handles one event set: prints what jdb prints, resumes it unless something stops.
    pub(crate) async fn process_set(&mut self, set: EventSet) -> SetOutcome {
        let Some(vm) = self.vm().cloned() else { return SetOutcome::Ended };
        self.note_thread(set.thread()).await;
        let policy = set.suspend_policy;
        let mut stop = false;
        let mut died = false;
        let mut headers = String::new();
        let mut record: Map<String, Json> = Map::new();
        for event in &set.events {
            match event {
                Event::VmStart { .. } => {
                    self.out.event("\nVM Started: ", record! {"type": "event", "event": "vm_start"});
                    if self.stop_on_vm_start && policy != SuspendPolicy::None {
                        stop = true;
                        record.insert("event".into(), json!("vm_start"));
                    }
                }
                Event::ClassPrepare { ref_type_tag, type_id, .. } => {
                    if let Ok(ty) = vm.reference_type_of_kind(*ref_type_tag, *type_id).await
                        && !self.requests.resolve_on_prepare(&vm, &self.out, &ty).await
                    {
                        headers.push_str("\nStopping due to deferred breakpoint errors.\n");
                        record.insert("event".into(), json!("deferred_breakpoint_errors"));
                        stop = true;
                    }
                }
                Event::ThreadDeath { thread, .. } if self.position.thread().is_some_and(|c| c.id() == *thread) => {
                    self.forget_thread(&vm.thread(*thread));
                    let name = vm.thread(*thread).name().await.map(|n| format!("\"{n}\"")).unwrap_or_default();
                    self.position.clear_thread();
                    self.out.event(
                        &format!("\nCurrent thread {name} died. Execution continuing...\n"),
                        record! {"type": "event", "event": "current_thread_died"},
                    );
                }
                Event::ThreadDeath { thread, .. } => self.forget_thread(&vm.thread(*thread)),
                Event::ThreadStart { .. } | Event::ClassUnload { .. } => {}
                Event::Breakpoint { .. } => {
                    headers.push_str(&self.header("Breakpoint hit: "));
                    record.insert("event".into(), json!("breakpoint"));
                    stop = true;
                }
                Event::SingleStep { .. } => {
                    headers.push_str(&self.header("Step completed: "));
                    record.insert("event".into(), json!("step"));
                    stop = true;
                }
                Event::Exception { exception, catch_location, .. } => {
                    let ex = jdi::ObjectReference::new(vm.clone(), exception.id);
                    let name = ex.reference_type().await.map(|t| t.name()).unwrap_or_else(|_| "?".into());
                    let text = if catch_location.class_id.is_null() {
                        format!("Exception occurred: {name} (uncaught)")
                    } else {
                        let at = loc_info(&vm, *catch_location).await.map(|l| l.location_string()).unwrap_or_default();
                        record.insert("catch_location".into(), json!(at));
                        format!("Exception occurred: {name} (to be caught at: {at})")
                    };
                    headers.push_str(&self.header(&text));
                    record.insert("event".into(), json!("exception"));
                    record.insert("exception".into(), json!(name));
                    record.insert("caught".into(), json!(!catch_location.class_id.is_null()));
                    stop = true;
                }
                Event::MethodEntry { thread, location, .. } => {
                    if policy != SuspendPolicy::None {
                        headers.push_str(&self.header("Method entered: "));
                        record.insert("event".into(), json!("method_entry"));
                        stop = true;
                    } else {
                        let line = self.base_location(*thread, *location).await;
                        self.out.event(
                            &format!("{}{line}\n", self.header("Method entered: ")),
                            record! {"type": "event", "event": "method_entry", "location": line},
                        );
                    }
                }
                Event::MethodExit { thread, location, .. }
                | Event::MethodExitWithReturnValue { thread, location, .. } => {
                    if let Some(m) = &self.requests.trace_exit_of() {
                        let this = vm.resolve_location(*location).await.ok().map(|l| l.method);
                        if this.as_ref() != Some(m) {
                            continue;
                        }
                    }
                    let text = match event {
                        Event::MethodExitWithReturnValue { value, .. } => {
                            let shown = vm.value_mirror(*value).display().await.unwrap_or_else(|e| e.to_string());
                            record.insert("return_value".into(), json!(shown));
                            format!("Method exited: return value = {shown}, ")
                        }
                        _ => "Method exited".to_string(),
                    };
                    if policy != SuspendPolicy::None {
                        headers.push_str(&self.header(&text));
                        record.insert("event".into(), json!("method_exit"));
                        stop = true;
                    } else {
                        let line = self.base_location(*thread, *location).await;
                        self.out.event(
                            &format!("{}{line}\n", self.header(&text)),
                            record! {"type": "event", "event": "method_exit", "location": line},
                        );
                    }
                }
                Event::FieldAccess { ref_type_tag, type_id, field_id, .. }
                | Event::FieldModification { ref_type_tag, type_id, field_id, .. } => {
                    let field_name = match vm.reference_type_of_kind(*ref_type_tag, *type_id).await {
                        Ok(ty) => {
                            let fields = ty.fields().await.unwrap_or_default();
                            let f = fields.iter().find(|f| f.id == *field_id);
                            (
                                format!("{}.{}", ty.name(), f.map(|f| f.name.clone()).unwrap_or_default()),
                                f.cloned(),
                                Some(ty),
                            )
                        }
                        Err(_) => ("?".into(), None, None),
                    };
                    let (name, field, ty) = field_name;
                    let text = match event {
                        Event::FieldModification { object, value_to_be, .. } => {
                            let current = match (&field, object.id.is_null(), &ty) {
                                (Some(f), false, _) => {
                                    jdi::ObjectReference::new(vm.clone(), object.id).get_value(f).await.ok()
                                }
                                (Some(f), true, Some(t)) => t.get_value(f).await.ok(),
                                _ => None,
                            };
                            let now = match current {
                                Some(v) => vm.value_mirror(v).display().await.unwrap_or_default(),
                                None => "?".into(),
                            };
                            let to_be = vm.value_mirror(*value_to_be).display().await.unwrap_or_default();
                            record.insert("event".into(), json!("field_modification"));
                            record.insert("value".into(), json!(now));
                            record.insert("new_value".into(), json!(to_be));
                            format!("Field ({name}) is {now}, will be {to_be}: ")
                        }
                        _ => {
                            record.insert("event".into(), json!("field_access"));
                            format!("Field ({name}) access encountered: ")
                        }
                    };
                    record.insert("field".into(), json!(name));
                    headers.push_str(&self.header(&text));
                    stop = true;
                }
                Event::VmDeath { .. } => died = true,
                _ => {}
            }
        }
        if died {
            self.vm_gone(true).await;
            return SetOutcome::Ended;
        }
        if !stop || policy == SuspendPolicy::None {
            if !headers.is_empty() {
                // Events that suspend nothing (`stop go`, `watch go`): shown with their location.
                let thread = set.thread().map(|t| t.id());
                let line = match (thread, set.location()) {
                    (Some(t), Some(l)) => self.base_location(t, l).await,
                    _ => String::new(),
                };
                self.out.event(&format!("{headers}{line}\n"), with_type(record));
            }
            if policy != SuspendPolicy::None
                && let Err(e) = set.resume().await
                && e.is_disconnected()
            {
                self.vm_gone(false).await;
                return SetOutcome::Ended;
            }
            return SetOutcome::Resumed;
        }
        // Stopped: the event's thread becomes current, as jdb's `setCurrentThread(eventSet)`.
        self.position.stopped(set.thread());
        let (location_text, info) = self.current_location_text().await;
        if let Some(thread) = self.position.thread() {
            record.insert("thread".into(), json!(thread.name().await.unwrap_or_default()));
            record.insert("thread_id".into(), json!(thread.id().0));
        }
        if let Some(info) = &info {
            record.insert("location".into(), info.to_json());
        }
        self.out.event(&format!("{headers}{location_text}"), with_type(record));
        self.run_monitors().await;
        self.refresh_completions().await;
        SetOutcome::Stopped
    }

    fn header(&self, text: &str) -> String {
        format!("\n{}", self.out.paint(Style::Event, text))
    }

    /// `"thread=main", Demo.tick(), line=50 bci=0`.
    async fn base_location(&self, thread: jdi::protocol::ThreadId, location: jdi::Location) -> String {
        let Some(vm) = self.vm() else { return String::new() };
        let name = vm.thread(thread).name().await.unwrap_or_default();
        let loc = loc_info(vm, location).await.map(|l| l.location_string()).unwrap_or_else(|e| e.to_string());
        format!("\"thread={name}\", {loc}")
    }

    /// jdb's `printCurrentLocation`: the location, its source line, and a blank line.
    pub(crate) async fn current_location_text(&mut self) -> (String, Option<LocInfo>) {
        let Some(thread) = self.position.thread().cloned() else {
            return ("<location unavailable>\n\n".into(), None);
        };
        let frame = match self.current_frame().await {
            Ok(Some(f)) => f,
            Ok(None) => return ("No frames on the current call stack\n\n".into(), None),
            Err(_) => return ("<location unavailable>\n\n".into(), None),
        };
        let Some(vm) = self.vm().cloned() else { return (String::new(), None) };
        let info = match loc_info(&vm, frame.location()).await {
            Ok(i) => i,
            Err(e) => return (format!("{e}\n\n"), None),
        };
        let name = thread.name().await.unwrap_or_default();
        let mut text = format!("\"thread={name}\", {}\n", info.location_string());
        if info.line != -1
            && let Some(src) = info.source_name.clone()
            && let Some(line) = self.sources.line(&info.class_signature, &src, info.line)
        {
            text.push_str(&self.source_line_text(info.line, &line, false));
            text.push('\n');
        }
        text.push('\n');
        (text, Some(info))
    }

    /// `50    int doubled = n * 2;` (or `50 => ...` for `list`'s current line).
    pub(crate) fn source_line_text(&self, number: i32, line: &str, current_marker: bool) -> String {
        let n = crate::format::group_int(number.into());
        if current_marker {
            self.out.paint(Style::Current, &format!("{n} => {line}"))
        } else {
            format!("{}    {line}", self.out.paint(Style::Dim, &n))
        }
    }

    /// Runs the `monitor` commands (at every stop).
    async fn run_monitors(&mut self) {
        for cmd in self.monitors.commands() {
            Box::pin(self.execute_one(&cmd)).await;
        }
    }

    /// The VM exited (`died`) or disconnected: says so, as jdb does, and ends the session.
    pub(crate) async fn vm_gone(&mut self, died: bool) {
        if self.status.ended() {
            return;
        }
        self.status.end();
        if let Some(conn) = self.conn.take()
            && let Some(p) = &conn.process
        {
            // Let the program's last output through first, as jdb does.
            let _ = tokio::time::timeout(Duration::from_secs(10), p.wait()).await;
            for f in conn.forwarders {
                let _ = tokio::time::timeout(Duration::from_secs(5), f).await;
            }
        }
        self.position.clear_thread();
        let (text, what) = if died {
            ("The application exited", "vm_death")
        } else {
            ("The application has been disconnected", "vm_disconnected")
        };
        self.out.newline_if_needed();
        self.out.event(&format!("\n{text}\n"), record! {"type": "event", "event": what});
    }

    /// The thread an event set stopped, if any.
    pub fn event_thread(set: &EventSet) -> Option<ThreadReference> {
        set.thread()
    }
}

fn with_type(mut record: Map<String, Json>) -> Map<String, Json> {
    record.insert("type".into(), json!("event"));
    record.entry("event").or_insert(json!("stop"));
    record
}
