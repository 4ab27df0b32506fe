//! Running and stopping: run, cont, step, step up, stepi, next, suspend, resume, kill,
//! interrupt, pop, reenter.

use jdi::{EventKind, StepDepth, StepSize, Tag, Value};
use serde_json::json;

use crate::session::{Flow, Session, Waited, step_request};

impl Session {
    /// Lets the VM run until the next stop, as jdb shows it: a `> ` prompt, then the event.
    pub(crate) async fn let_run(&mut self) {
        self.out.prompt("> ");
        self.out.flush();
        let waited = self.wait_for_stop(self.cfg.timeout, self.cfg.interactive).await;
        self.out.data("stopped", json!(waited == Waited::Stopped));
        if waited == Waited::TimedOut {
            self.out.newline_if_needed();
            self.out.error("Timed out waiting for the VM to stop; it is still running.");
        }
    }

    /// `run [class [args]]`: launches the VM (or, attached, continues it).
    pub(crate) async fn run_command(&mut self, args: &str) -> Flow {
        let launching = self.target.launches();
        if !launching {
            if args.is_empty() {
                return self.cmd_cont().await;
            }
            self.out.error("'run <args>' command is valid only with launched VMs");
            return Flow::Continue;
        }
        if self.is_connected() {
            self.out.error("VM already running. Use 'cont' to continue after events.");
            return Flow::Continue;
        }
        if self.status.ended() {
            self.out.error("The VM has exited; start jdb-rs again to run it again.");
            return Flow::Continue;
        }
        let shown = match self.target.run_line(args) {
            Ok(shown) => shown,
            Err(e) => {
                self.out.error(e);
                return Flow::Continue;
            }
        };
        self.out.line(format!("run {shown}"));
        self.out.flush();
        if let Err(e) = self.launch_vm().await {
            self.out.error(e);
            return Flow::Continue;
        }
        self.stop_on_vm_start = false;
        self.let_run().await;
        Flow::Continue
    }

    pub(crate) async fn cmd_cont(&mut self) -> Flow {
        if self.position.thread().is_none() {
            self.out.error("Nothing suspended.");
            return Flow::Continue;
        }
        let Some(vm) = self.vm().cloned() else { return Flow::Continue };
        self.invalidate();
        if let Err(e) = vm.resume().await {
            self.out.error(format!("Unable to resume: {e}"));
            return Flow::Continue;
        }
        self.let_run().await;
        Flow::Continue
    }

    async fn step(&mut self, size: StepSize, depth: StepDepth, excludes: bool) {
        let Some(thread) = self.position.thread().cloned() else {
            self.out.error("Nothing suspended.");
            return;
        };
        let Some(vm) = self.vm().cloned() else { return };
        // A previous step of this thread may not have completed.
        for old in vm.event_requests_of(EventKind::SingleStep) {
            if old.request().step_thread() == Some(thread.id()) {
                let _ = old.delete().await;
            }
        }
        let excl = if excludes { self.requests.excludes() } else { &[] };
        let request = step_request(&thread, size, depth, excl);
        if let Err(e) = vm.enable_request(&request).await {
            self.out.error(format!("Unable to step: {e}"));
            return;
        }
        self.invalidate();
        if let Err(e) = vm.resume().await {
            self.out.error(format!("Unable to resume: {e}"));
            return;
        }
        self.let_run().await;
    }

    /// `step` (into) or `step up` (out of the current method).
    pub(crate) async fn cmd_step(&mut self, args: &str) -> Flow {
        if args.eq_ignore_ascii_case("up") {
            self.step(StepSize::Line, StepDepth::Out, false).await;
        } else {
            self.step(StepSize::Line, StepDepth::Into, true).await;
        }
        Flow::Continue
    }

    pub(crate) async fn cmd_stepi(&mut self) -> Flow {
        self.step(StepSize::Min, StepDepth::Into, true).await;
        Flow::Continue
    }

    pub(crate) async fn cmd_next(&mut self) -> Flow {
        self.step(StepSize::Line, StepDepth::Over, true).await;
        Flow::Continue
    }

    pub(crate) async fn cmd_suspend(&mut self, args: &str) {
        let Some(vm) = self.vm().cloned() else { return };
        if args.is_empty() {
            match vm.suspend().await {
                Ok(()) => self.out.line("All threads suspended."),
                Err(e) => self.out.error(format!("Unable to suspend: {e}")),
            }
            return;
        }
        for token in args.split_whitespace() {
            match self.thread_by_token(token).await {
                Ok(t) => {
                    if let Err(e) = t.suspend().await {
                        self.out.error(format!("Unable to suspend {token}: {e}"));
                    }
                }
                Err(e) => self.out.error(e),
            }
        }
    }

    pub(crate) async fn cmd_resume(&mut self, args: &str) {
        let Some(vm) = self.vm().cloned() else { return };
        if args.is_empty() {
            self.invalidate();
            match vm.resume().await {
                Ok(()) => self.out.line("All threads resumed."),
                Err(e) => self.out.error(format!("Unable to resume: {e}")),
            }
            return;
        }
        for token in args.split_whitespace() {
            match self.thread_by_token(token).await {
                Ok(t) => {
                    if self.position.thread() == Some(&t) {
                        self.position.top_frame();
                    }
                    if let Err(e) = t.resume().await {
                        self.out.error(format!("Unable to resume {token}: {e}"));
                    }
                }
                Err(e) => self.out.error(e),
            }
        }
    }

    /// `kill <thread id> <expr>`: makes the thread throw the object.
    pub(crate) async fn cmd_kill(&mut self, args: &str) {
        let mut parts = args.splitn(2, char::is_whitespace);
        let (Some(token), rest) = (parts.next().filter(|t| !t.is_empty()), parts.next()) else {
            self.out.error("Usage: kill <thread id> <throwable>");
            return;
        };
        let thread = match self.thread_by_token(token).await {
            Ok(t) => t,
            Err(e) => return self.out.error(e),
        };
        let name = thread.name().await.unwrap_or_default();
        self.out.line(format!("killing thread: {name}"));
        let Some(expr) = rest.map(str::trim).filter(|r| !r.is_empty()) else {
            self.out.error("No exception object specified.");
            return;
        };
        let v = match self.evaluate(expr).await {
            Ok((v, _)) => v.value,
            Err(e) => return self.out.error(e),
        };
        let Value::Object(_, id) = v else {
            return self.out.error("Expression must evaluate to an object");
        };
        if id.is_null() {
            return self.out.error("Expression must evaluate to an object");
        }
        let Some(vm) = self.vm().cloned() else { return };
        let obj = jdi::ObjectReference::new(vm.clone(), id);
        match thread.stop(&obj).await {
            Ok(()) => {
                let shown =
                    vm.value_mirror(Value::Object(Tag::Thread, thread.id().into())).display().await.unwrap_or(name);
                self.out.line(format!("{shown} killed"));
            }
            Err(jdi::JdiError::InvalidArgument(_)) => self.out.error("Invalid exception object"),
            Err(e) => self.out.error(format!("Illegal thread state: {e}")),
        }
    }

    pub(crate) async fn cmd_interrupt(&mut self, args: &str) {
        let thread = if args.is_empty() {
            match self.current_thread() {
                Ok(t) => t,
                Err(e) => return self.out.error(e),
            }
        } else {
            match self.thread_by_token(args.split_whitespace().next().unwrap_or("")).await {
                Ok(t) => t,
                Err(e) => return self.out.error(e),
            }
        };
        if let Err(e) = thread.interrupt().await {
            self.out.error(format!("Unable to interrupt: {e}"));
        }
    }

    /// `pop` / `reenter`: pops the current frame (and with `reenter`, steps into the call again).
    pub(crate) async fn cmd_pop(&mut self, args: &str, reenter: bool) {
        let thread = if args.is_empty() {
            match self.current_thread() {
                Ok(t) => t,
                Err(e) => return self.out.error(e),
            }
        } else {
            match self.thread_by_token(args).await {
                Ok(t) => t,
                Err(e) => return self.out.error(e),
            }
        };
        let previous = self.position.swap_thread(thread.clone());
        let frame = match self.current_frame().await {
            Ok(Some(f)) => f,
            Ok(None) => {
                self.position.restore(previous);
                return self.out.error("No frames on the current call stack");
            }
            Err(e) => {
                self.position.restore(previous);
                return self.out.error(e);
            }
        };
        match thread.pop_frames(&frame).await {
            Ok(()) => {
                self.position.top_frame();
                if reenter {
                    self.step(StepSize::Min, StepDepth::Into, true).await;
                }
            }
            Err(e) => self.out.error(format!("Error popping frame - {e}")),
        }
    }
}
