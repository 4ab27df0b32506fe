//! Event requests: stop, clear, catch, ignore, watch, unwatch, trace, untrace, exclude.

use jdi::{EventRequest, SuspendPolicy};

use crate::session::Session;
use crate::specs::{Spec, parse_location};

const STOP_USAGE: &str = "Usage: stop [go|thread] [<thread_id>] <at|in> <location>
  If \"go\" is specified, immediately resume after stopping
  If \"thread\" is specified, only suspend the thread we stop in
  If neither \"go\" nor \"thread\" are specified, suspend all threads
  If an integer <thread_id> is specified, only stop in the specified thread
  \"at\" and \"in\" have the same meaning
  <location> can either be a line number or a method:
    <class_id>:<line_number>
    <class_id>.<method>[(argument_type,...)]";

impl Session {
    /// Adds a spec (set now, or deferred until its class loads).
    async fn add_spec(&mut self, spec: Spec) -> bool {
        let vm = self.conn.as_ref().map(|c| &c.vm);
        self.requests.add_spec(vm, &self.out, spec).await
    }

    fn list_specs(&mut self, breakpoints: bool) {
        let listed: Vec<String> = self
            .requests
            .specs()
            .iter()
            .filter(|s| if breakpoints { s.is_breakpoint() } else { s.is_exception() })
            .map(Spec::describe)
            .collect();
        if listed.is_empty() {
            self.out.line(if breakpoints { "No breakpoints set." } else { "No exceptions caught." });
            return;
        }
        self.out.line(if breakpoints { "Breakpoints set:" } else { "Break when these exceptions occur:" });
        for s in &listed {
            self.out.line(format!("\t{s}"));
        }
        self.out.data("specs", serde_json::json!(listed));
    }

    /// `stop [go|thread] [<thread id>] at|in <location>`; without arguments, lists breakpoints.
    pub(crate) async fn cmd_stop(&mut self, args: &str) {
        if args.is_empty() {
            return self.list_specs(true);
        }
        let mut rest = args;
        let mut policy = SuspendPolicy::All;
        let mut thread = None;
        let (mut word, mut after) = crate::commands::split_command(rest);
        if (word == "go" || word == "thread") && !after.trim().is_empty() {
            policy = if word == "go" { SuspendPolicy::None } else { SuspendPolicy::EventThread };
            rest = after;
            (word, after) = crate::commands::split_command(rest);
        }
        if word != "at" && word != "in" {
            if crate::format::java_decode(word).is_none() {
                self.out.error(format!("Expected \"at\", \"in\", or an integer <thread_id>: {word}"));
                return;
            }
            if !self.is_connected() {
                return self.out.error("<thread_id> option not valid until the VM is started with the run command");
            }
            match self.thread_by_token(word).await {
                Ok(t) => thread = Some(t.id()),
                Err(_) => return self.out.error(format!("Invalid <thread_id>: {word}")),
            }
            rest = after;
            (word, after) = crate::commands::split_command(rest);
        }
        if word != "at" && word != "in" {
            self.out.error("Missing \"at\" or \"in\"");
            return;
        }
        if after.trim().is_empty() {
            self.out.error(STOP_USAGE);
            return;
        }
        let mut spec = match parse_location(after) {
            Ok(s) => s,
            Err(e) => {
                self.out.error(e);
                return;
            }
        };
        spec.suspend = policy;
        spec.thread = thread;
        if self.requests.has_spec(&spec) {
            self.out.line(format!("Breakpoint already set: {}", spec.describe()));
            return;
        }
        self.add_spec(spec).await;
    }

    /// `clear <location>`; without arguments, lists breakpoints.
    pub(crate) async fn cmd_clear(&mut self, args: &str) {
        if args.is_empty() {
            return self.list_specs(true);
        }
        let spec = match parse_location(args) {
            Ok(s) => s,
            Err(e) => {
                self.out
                    .error(format!("{e} (usage: clear <class>:<line> or clear <class>.<method>[(argument_type,...)])"));
                return;
            }
        };
        if self.requests.delete_spec(&spec).await {
            self.out.line(format!("Removed: {}", spec.describe()));
        } else {
            self.out.error(format!("Not found: {}", spec.describe()));
        }
    }

    /// `catch`/`ignore [uncaught|caught|all] <class pattern>`.
    pub(crate) async fn cmd_catch(&mut self, args: &str, catch: bool) {
        if args.is_empty() {
            return self.list_specs(false);
        }
        let mut words = args.split_whitespace();
        let first = words.next().unwrap_or("");
        let (caught, uncaught, pattern) = match first {
            "uncaught" => (false, true, words.next()),
            "caught" => (true, false, words.next()),
            "all" => (true, true, words.next()),
            other => (true, true, Some(other)),
        };
        let usage = if catch {
            "Usage: catch [uncaught|caught|all] <class id>|<class pattern>"
        } else {
            "Usage: ignore [uncaught|caught|all] <class id>|<class pattern>"
        };
        let Some(pattern) = pattern else { return self.out.error(usage) };
        if let Err(e) = Spec::check_pattern(pattern) {
            self.out.error(e);
            return;
        }
        let spec = Spec::exception(pattern, caught, uncaught);
        if catch {
            if self.requests.has_spec(&spec) {
                return self.out.line(format!("Already set: {}", spec.describe()));
            }
            self.add_spec(spec).await;
        } else if self.requests.delete_spec(&spec).await {
            self.out.line(format!("Removed: {}", spec.describe()));
        } else {
            self.out.error(format!("Not found: {}", spec.describe()));
        }
    }

    /// `watch`/`unwatch [go|thread] [access|all] <class>.<field>`.
    pub(crate) async fn cmd_watch(&mut self, args: &str, watch: bool) {
        if args.is_empty() {
            return self.out.error(if watch {
                "Field to watch not specified."
            } else {
                "Field to unwatch not specified."
            });
        }
        let mut words: Vec<&str> = args.split_whitespace().collect();
        let mut policy = SuspendPolicy::All;
        if matches!(words.first(), Some(&"go") | Some(&"thread")) && words.len() > 1 {
            policy = if words[0] == "go" { SuspendPolicy::None } else { SuspendPolicy::EventThread };
            words.remove(0);
        }
        let (access, modification) = match words.first() {
            Some(&"access") if words.len() > 1 => {
                words.remove(0);
                (true, false)
            }
            Some(&"all") if words.len() > 1 => {
                words.remove(0);
                (true, true)
            }
            _ => (false, true),
        };
        let target = words.first().copied().unwrap_or("");
        let Some((class, field)) = target.rsplit_once('.') else {
            return self.out.error("Class containing field must be specified.");
        };
        if !crate::format::is_java_identifier(field) {
            return self.out.error(format!("\"{field}\" is not a valid field name."));
        }
        if let Err(e) = Spec::check_pattern(class) {
            return self.out.error(e);
        }
        let mut specs = Vec::new();
        if access {
            specs.push(Spec::watch(class, field, true));
        }
        if modification {
            specs.push(Spec::watch(class, field, false));
        }
        for mut spec in specs {
            spec.suspend = policy;
            if watch {
                self.add_spec(spec).await;
            } else if self.requests.delete_spec(&spec).await {
                self.out.line(format!("Removed: {}", spec.describe()));
            } else {
                self.out.error(format!("Not found: {}", spec.describe()));
            }
        }
    }

    /// `trace [go] methods [thread]`, `trace [go] method exit|exits [thread]`, `trace`.
    pub(crate) async fn cmd_trace(&mut self, args: &str) {
        if args.is_empty() {
            if let Some(t) = self.requests.trace_command() {
                self.out.line(t);
            } else {
                self.out.line("trace not in effect");
            }
            return;
        }
        let mut words: Vec<&str> = args.split_whitespace().collect();
        let mut policy = SuspendPolicy::All;
        let mut go = " ";
        if words[0] == "go" {
            policy = SuspendPolicy::None;
            go = " go ";
            words.remove(0);
        } else if words[0] == "thread" {
            policy = SuspendPolicy::EventThread;
            words.remove(0);
        }
        let Some(vm) = self.vm().cloned() else { return };
        let can_values = vm.can_get_method_return_values().await.unwrap_or(false);
        match words.as_slice() {
            ["method", which @ ("exit" | "exits"), rest @ ..] => {
                let thread = match rest.first() {
                    Some(t) => match self.thread_by_token(t).await {
                        Ok(t) => Some(t),
                        Err(e) => return self.out.error(e),
                    },
                    None => None,
                };
                let mut exit_of = None;
                let text = if *which == "exit" {
                    let frame = match self.current_frame().await {
                        Ok(Some(f)) => f,
                        _ => return self.out.error("Current thread isn't suspended."),
                    };
                    let method = match frame.method().await {
                        Ok(m) => m,
                        Err(e) => return self.out.error(e.to_string()),
                    };
                    let declaring = method.declaring_type().await.map(|t| t.name()).unwrap_or_default();
                    let shown = format!("{declaring}.{}", crate::format::typed_name(&method));
                    exit_of = Some(method);
                    format!("trace{go}method exit in effect for {shown}")
                } else {
                    format!("trace{go}method exits in effect")
                };
                self.requests.untrace().await;
                self.requests.set_trace_exit_of(exit_of);
                let mut exit = if can_values {
                    EventRequest::method_exit_with_return_value()
                } else {
                    EventRequest::method_exit()
                };
                if let Some(t) = &thread {
                    exit = exit.thread(t.id());
                }
                let exit = self.requests.excluding(exit, policy);
                match vm.enable_request(&exit).await {
                    Ok(id) => {
                        if let Some(h) = vm.event_request(id) {
                            self.requests.add_trace_request(h);
                        }
                    }
                    Err(e) => return self.out.error(e.to_string()),
                }
                self.requests.set_trace_command(text);
            }
            ["methods", rest @ ..] => {
                let thread = match rest.first() {
                    Some(t) => match self.thread_by_token(t).await {
                        Ok(t) => Some(t),
                        Err(e) => return self.out.error(e),
                    },
                    None => None,
                };
                if thread.is_none() {
                    self.requests.untrace().await;
                }
                let mut entry = EventRequest::method_entry();
                let mut exit = if can_values {
                    EventRequest::method_exit_with_return_value()
                } else {
                    EventRequest::method_exit()
                };
                if let Some(t) = &thread {
                    entry = entry.thread(t.id());
                    exit = exit.thread(t.id());
                }
                for r in [self.requests.excluding(entry, policy), self.requests.excluding(exit, policy)] {
                    match vm.enable_request(&r).await {
                        Ok(id) => {
                            if let Some(h) = vm.event_request(id) {
                                self.requests.add_trace_request(h);
                            }
                        }
                        Err(e) => return self.out.error(e.to_string()),
                    }
                }
                self.requests.set_trace_command(format!("trace{go}methods in effect"));
            }
            _ => self.out.error("Can only trace 'methods' or 'method exit' or 'method exits'"),
        }
    }

    pub(crate) async fn cmd_untrace(&mut self, args: &str) {
        if args.is_empty() || args == "methods" {
            self.requests.untrace().await;
        } else {
            self.out.error("Usage: untrace [methods]");
        }
    }

    /// `exclude [patterns | none]`: classes steps and method traces skip.
    pub(crate) fn cmd_exclude(&mut self, rest: &str) {
        let rest = rest.trim();
        if rest.is_empty() {
            self.out.line(self.requests.excludes_shown());
            return;
        }
        self.requests.set_excludes(rest);
    }
}
