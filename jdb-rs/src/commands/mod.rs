//! jdb's commands, one file per family, dispatched from one table (the names and whether each
//! works before the VM is connected are jdb's).
//!
//! - `exec`: run, cont, step, next, stepi, suspend, resume, kill, interrupt, pop, reenter, exit
//! - `stack`: threads, thread, threadgroups, threadgroup, where, wherei, up, down, locals,
//!   threadlocks, list
//! - `data`: print, eval, dump, set, lock, disablegc, enablegc
//! - `types`: classes, class, methods, fields, classpath, redefine
//! - `requests`: stop, clear, catch, ignore, watch, unwatch, trace, untrace, exclude
//! - `misc`: help, version, use/sourcepath, monitor, unmonitor, read, repeat, deadlocks
//! - `profile`: profile, heap, gc (our agent's profiler)

mod data;
mod exec;
mod misc;
pub mod profile;
pub mod profile_alloc_monitors;
mod requests;
mod stack;
mod types;

use crate::session::{Flow, Next, Session};

/// `(name, works before the VM is connected)`, as jdb's `commandList`, plus `deadlocks`,
/// `heap` and `profile`.
pub const COMMANDS: &[(&str, bool)] = &[
    ("!!", false),
    ("?", true),
    ("catch", true),
    ("class", false),
    ("classes", false),
    ("classpath", false),
    ("clear", true),
    ("cont", false),
    ("deadlocks", false),
    ("disablegc", false),
    ("down", false),
    ("dump", false),
    ("enablegc", false),
    ("eval", false),
    ("exclude", true),
    ("exit", true),
    ("fields", false),
    ("gc", false),
    ("heap", false),
    ("help", true),
    ("ignore", true),
    ("interrupt", false),
    ("kill", false),
    ("list", false),
    ("locals", false),
    ("lock", false),
    ("methods", false),
    ("monitor", false),
    ("next", false),
    ("pop", false),
    ("print", false),
    ("profile", false),
    ("quit", true),
    ("read", true),
    ("redefine", false),
    ("reenter", false),
    ("repeat", true),
    ("resume", false),
    ("run", true),
    ("set", false),
    ("sourcepath", true),
    ("step", false),
    ("stepi", false),
    ("stop", true),
    ("suspend", false),
    ("thread", false),
    ("threadgroup", false),
    ("threadgroups", false),
    ("threadlocks", false),
    ("threads", false),
    ("trace", false),
    ("unmonitor", false),
    ("untrace", false),
    ("unwatch", true),
    ("up", false),
    ("use", true),
    ("version", true),
    ("watch", true),
    ("where", false),
    ("wherei", false),
];

/// Splits `cmd rest`, keeping `rest` as typed (jdb prints `print`'s expression with its
/// leading space: ` x = 1`).
pub fn split_command(line: &str) -> (&str, &str) {
    let line = line.trim_start();
    match line.find(char::is_whitespace) {
        Some(i) => (&line[..i], &line[i..]),
        None => (line, ""),
    }
}

impl Session {
    /// Runs one line as typed: `!!` (repeat the last line, with what follows appended), an
    /// empty line (repeats the last repeatable command with `repeat on`), or a command.
    pub async fn execute_line(&mut self, line: &str) -> Flow {
        match self.history.next(line) {
            Next::Run { line, echo } => {
                if echo {
                    self.out.line(line.clone());
                }
                self.execute_one(&line).await
            }
            Next::Nothing => Flow::Continue,
            Next::NoPrevious => {
                self.out.error("No previous command to repeat.");
                self.status.fail();
                Flow::Continue
            }
        }
    }

    /// Runs one command (with jdb's `N command` repetition and `#` comments).
    pub async fn execute_one(&mut self, line: &str) -> Flow {
        let (cmd, rest) = split_command(line);
        if cmd.is_empty() || cmd.starts_with('#') {
            return Flow::Continue;
        }
        if cmd.starts_with(|c: char| c.is_ascii_digit()) && !rest.trim().is_empty() {
            match cmd.parse::<u32>() {
                Ok(n) => {
                    let sub = rest.trim().to_string();
                    for _ in 0..n {
                        if Box::pin(self.execute_one(&sub)).await == Flow::Quit || self.status.ended() {
                            return Flow::Quit;
                        }
                    }
                    return Flow::Continue;
                }
                Err(_) => {
                    self.out.error(format!("Unrecognized command: '{cmd}'.  Try help..."));
                    self.finish(line, cmd);
                    return Flow::Continue;
                }
            }
        }
        let name = cmd.to_lowercase();
        let flow = match COMMANDS.iter().find(|(n, _)| *n == name) {
            None => {
                self.out.error(format!("Unrecognized command: '{name}'.  Try help..."));
                Flow::Continue
            }
            Some((_, offline_ok)) if !offline_ok && !self.is_connected() => {
                if self.status.ended() {
                    self.out.error("The VM is no longer connected.");
                } else if self.target.launches() {
                    self.out
                        .error(format!("Command '{name}' is not valid until the VM is started with the 'run' command"));
                } else {
                    self.out.error("No VM connected");
                }
                Flow::Continue
            }
            Some(_) => self.dispatch(&name, rest).await,
        };
        self.finish(line, &name);
        if self.status.ended() { Flow::Quit } else { flow }
    }

    fn finish(&mut self, line: &str, name: &str) {
        if self.out.finish_command(line.trim(), name) {
            self.status.fail();
        }
    }

    async fn dispatch(&mut self, name: &str, rest: &str) -> Flow {
        let args = rest.trim();
        match name {
            "run" => return self.run_command(args).await,
            "cont" => return self.cmd_cont().await,
            "step" => return self.cmd_step(args).await,
            "stepi" => return self.cmd_stepi().await,
            "next" => return self.cmd_next().await,
            "suspend" => self.cmd_suspend(args).await,
            "resume" => self.cmd_resume(args).await,
            "kill" => self.cmd_kill(args).await,
            "interrupt" => self.cmd_interrupt(args).await,
            "pop" => self.cmd_pop(args, false).await,
            "reenter" => self.cmd_pop(args, true).await,
            "exit" | "quit" => return Flow::Quit,
            "threads" => self.cmd_threads(args).await,
            "thread" => self.cmd_thread(args).await,
            "threadgroups" => self.cmd_threadgroups().await,
            "threadgroup" => self.cmd_threadgroup(args).await,
            "where" => self.cmd_where(args, false).await,
            "wherei" => self.cmd_where(args, true).await,
            "up" => self.cmd_up_down(args, true).await,
            "down" => self.cmd_up_down(args, false).await,
            "locals" => self.cmd_locals().await,
            "threadlocks" => self.cmd_threadlocks(args).await,
            "list" => self.cmd_list(args).await,
            "print" | "eval" => self.cmd_print(rest, false).await,
            "dump" => self.cmd_print(rest, true).await,
            "set" => self.cmd_set(rest).await,
            "lock" => self.cmd_lock(rest).await,
            "disablegc" => self.cmd_gc(rest, false).await,
            "enablegc" => self.cmd_gc(rest, true).await,
            "classes" => self.cmd_classes().await,
            "class" => self.cmd_class(args).await,
            "methods" => self.cmd_methods(args).await,
            "fields" => self.cmd_fields(args).await,
            "classpath" => self.cmd_classpath().await,
            "redefine" => self.cmd_redefine(args).await,
            "stop" => self.cmd_stop(args).await,
            "clear" => self.cmd_clear(args).await,
            "catch" => self.cmd_catch(args, true).await,
            "ignore" => self.cmd_catch(args, false).await,
            "watch" => self.cmd_watch(args, true).await,
            "unwatch" => self.cmd_watch(args, false).await,
            "trace" => self.cmd_trace(args).await,
            "untrace" => self.cmd_untrace(args).await,
            "exclude" => self.cmd_exclude(rest),
            "help" | "?" => self.cmd_help(),
            "version" => self.cmd_version().await,
            "use" | "sourcepath" => self.cmd_use(rest),
            "monitor" => self.cmd_monitor(rest),
            "unmonitor" => self.cmd_unmonitor(args),
            "read" => return self.cmd_read(args).await,
            "repeat" => self.cmd_repeat(args),
            "gc" => self.cmd_gc_stats().await,
            "profile" => self.cmd_profile(args).await,
            "heap" => self.cmd_heap(args).await,
            "deadlocks" => self.cmd_deadlocks(args).await,
            "!!" => {}
            _ => self.out.error(format!("Unrecognized command: '{name}'.  Try help...")),
        }
        Flow::Continue
    }
}
