//! help, version, use/sourcepath, monitor, unmonitor, read, repeat, deadlocks.

use serde_json::json;

use crate::session::{Flow, Session};

pub const HELP: &str = "** command list **
run [class [args]]        -- start execution of application's main class

threads [threadgroup]     -- list threads in threadgroup. Use current threadgroup if none specified.
thread <thread id>        -- set default thread
suspend [thread id(s)]    -- suspend threads (default: all)
resume [thread id(s)]     -- resume threads (default: all)
where [<thread id> | all] -- dump a thread's stack
wherei [<thread id> | all]-- dump a thread's stack, with pc info
up [n frames]             -- move up a thread's stack
down [n frames]           -- move down a thread's stack
kill <thread id> <expr>   -- kill a thread with the given exception object
interrupt <thread id>     -- interrupt a thread

print <expr>              -- print value of expression
dump <expr>               -- print all object information
eval <expr>               -- evaluate expression (same as print)
set <lvalue> = <expr>     -- assign new value to field/variable/array element
locals                    -- print all local variables in current stack frame

classes                   -- list currently known classes
class <class id>          -- show details of named class
methods <class id>        -- list a class's methods
fields <class id>         -- list a class's fields

threadgroups              -- list threadgroups
threadgroup <name>        -- set current threadgroup to <name>
threadgroup               -- set current threadgroup back to the top level threadgroup

stop [go|thread] [<thread_id>] <at|in> <location>
                          -- set a breakpoint
                          -- if no options are given, the current list of breakpoints is printed
                          -- if \"go\" is specified, immediately resume after stopping
                          -- if \"thread\" is specified, only suspend the thread we stop in
                          -- if neither \"go\" nor \"thread\" are specified, suspend all threads
                          -- if an integer <thread_id> is specified, only stop in the specified thread
                          -- \"at\" and \"in\" have the same meaning
                          -- <location> can either be a line number or a method:
                          --   <class_id>:<line_number>
                          --   <class_id>.<method>[(argument_type,...)]
clear <class id>.<method>[(argument_type,...)]
                          -- clear a breakpoint in a method
clear <class id>:<line>   -- clear a breakpoint at a line
clear                     -- list breakpoints
catch [uncaught|caught|all] <class id>|<class pattern>
                          -- break when specified exception occurs
ignore [uncaught|caught|all] <class id>|<class pattern>
                          -- cancel 'catch' for the specified exception
watch [access|all] <class id>.<field name>
                          -- watch access/modifications to a field
unwatch [access|all] <class id>.<field name>
                          -- discontinue watching access/modifications to a field
trace [go] methods [thread]
                          -- trace method entries and exits.
                          -- All threads are suspended unless 'go' is specified
trace [go] method exit | exits [thread]
                          -- trace the current method's exit, or all methods' exits
                          -- All threads are suspended unless 'go' is specified
untrace [methods]         -- stop tracing method entries and/or exits
step                      -- execute current line
step up                   -- execute until the current method returns to its caller
stepi                     -- execute current instruction
next                      -- step one line (step OVER calls)
cont                      -- continue execution from breakpoint

list [line number|method] -- print source code
use (or sourcepath) [source file path]
                          -- display or change the source path
exclude [<class pattern>, ... | \"none\"]
                          -- do not report step or method events for specified classes
classpath                 -- print classpath info from target VM

monitor <command>         -- execute command each time the program stops
monitor                   -- list monitors
unmonitor <monitor#>      -- delete a monitor
read <filename>           -- read and execute a command file

lock <expr>               -- print lock info for an object
threadlocks [thread id]   -- print lock info for a thread
deadlocks                 -- find deadlocks (threads, locks and stacks; with jdb-rs's agent
                             also java.util.concurrent locks, in one round trip)

With jdb-rs's agent (jdwp-agent):
profile cpu start [interval] [jvmti] -- sample CPU use every interval (default 10ms; e.g. 1ms);
                             jvmti: with JVMTI stack traces instead of signals
profile cpu stop          -- stop sampling (the samples are kept)
profile report [n]        -- HPROF-like CPU report of the top n traces (default 20),
                             with the SITES and MONITOR TIME sections when recorded
profile alloc start [b]   -- sample allocations about every b bytes (default 524288)
profile alloc stop        -- stop sampling allocations (the sites are kept)
profile monitors start    -- record monitor contention (who blocked, where, on whom)
profile monitors stop     -- stop recording monitor contention
profile flame <file> [cpu|alloc] -- write a flame graph (SVG) of the CPU samples or allocations
heap histo [live] [n]     -- instances and bytes per class (live: collect garbage first)
heap dump <file> [live]   -- write an HPROF heap dump on the target's machine
gc                        -- garbage collection statistics

pop                       -- pop the stack through and including the current frame
reenter                   -- same as pop, but current frame is reentered
redefine <class id> <class file name>
                          -- redefine the code for a class

disablegc <expr>          -- prevent garbage collection of an object
enablegc <expr>           -- permit garbage collection of an object

!!                        -- repeat last command
<n> <command>             -- repeat command n times
repeat                    -- show whether GDB-style empty command repetition is enabled
repeat <on|off>           -- enable/disable GDB-style repetition
# <command>               -- discard (no-op)
help (or ?)               -- list commands
version                   -- print version information
exit (or quit)            -- exit debugger

<class id>: a full class name with package qualifiers
<class pattern>: a class name with a leading or trailing wildcard ('*')
<thread id>: thread number as reported in the 'threads' command
<expr>: a Java(TM) Programming Language expression.
Most common syntax is supported.

Line editing, persistent history (~/.jdb_rs_history) and tab completion at a terminal.";

impl Session {
    pub(crate) fn cmd_help(&mut self) {
        self.out.lines(HELP);
    }

    pub(crate) async fn cmd_version(&mut self) {
        self.out.line(format!(
            "This is jdb-rs version {} (a jdb-compatible debugger on jdi-rs)",
            env!("CARGO_PKG_VERSION")
        ));
        if let Some(vm) = self.vm().cloned() {
            match vm.version().await {
                Ok(v) => {
                    self.out.lines(&v.description);
                    self.out.data(
                        "vm",
                        json!({"name": v.vm_name, "version": v.vm_version, "jdwp": format!("{}.{}", v.jdwp_major, v.jdwp_minor)}),
                    );
                }
                Err(e) => self.out.error(e.to_string()),
            }
        }
    }

    pub(crate) fn cmd_use(&mut self, rest: &str) {
        let rest = rest.trim();
        if rest.is_empty() {
            self.out.line(self.sources.display());
        } else {
            self.sources.set(rest);
        }
    }

    pub(crate) fn cmd_monitor(&mut self, rest: &str) {
        let rest = rest.trim();
        if rest.is_empty() {
            for l in self.monitors.listed() {
                self.out.line(l);
            }
            return;
        }
        self.monitors.add(rest);
    }

    pub(crate) fn cmd_unmonitor(&mut self, args: &str) {
        if args.is_empty() {
            return self.out.error("Usage: unmonitor <monitor#>");
        }
        let Ok(n) = args.parse::<u32>() else {
            return self.out.error(format!("Not a monitor number: '{args}'"));
        };
        match self.monitors.remove(n) {
            Some(c) => self.out.line(format!("Unmonitoring {n}: {c} ")),
            None => self.out.error(format!("No monitor numbered: {n}")),
        }
    }

    /// `read <file>`: runs the commands in a file.
    pub(crate) async fn cmd_read(&mut self, args: &str) -> Flow {
        if args.is_empty() {
            self.out.error("Usage: read <command-filename>");
            return Flow::Continue;
        }
        let text = match std::fs::read_to_string(args) {
            Ok(t) => t,
            Err(_) => {
                self.out.error(format!("Could not open: {args}"));
                return Flow::Continue;
            }
        };
        self.out.line(format!("*** Reading commands from {args}"));
        for line in text.lines() {
            if line.trim().is_empty() {
                continue;
            }
            if Box::pin(self.execute_one(line)).await == Flow::Quit {
                return Flow::Quit;
            }
        }
        Flow::Continue
    }

    pub(crate) fn cmd_repeat(&mut self, args: &str) {
        match args.to_lowercase().as_str() {
            "" => self.out.line(if self.history.repeat() { "Repeat is on" } else { "Repeat is off" }),
            "on" => self.history.set_repeat(true),
            "off" => self.history.set_repeat(false),
            _ => self.out.error("Usage: repeat <on|off>"),
        }
    }

    /// `deadlocks`: every deadlock with each thread's locks and stack: in one round trip over
    /// monitors and `java.util.concurrent` locks when the agent is ours, else monitor deadlocks
    /// found with standard commands.
    pub(crate) async fn cmd_deadlocks(&mut self, _args: &str) {
        let Some(vm) = self.vm().cloned() else { return };
        match super::profile::one_trip_deadlocks(&vm).await {
            Some(Ok(cycles)) => {
                for c in &cycles {
                    self.out.lines(&super::profile::deadlock_text(c));
                }
                if cycles.is_empty() {
                    self.out.line("No deadlock found.");
                } else {
                    self.out.line(format!("Found {} deadlock(s).", cycles.len()));
                    self.status.found_deadlock();
                }
                self.out.data("deadlocks", super::profile::deadlocks_json(&cycles));
                return;
            }
            Some(Err(e)) => return self.out.error(format!("Unable to look for deadlocks: {e}")),
            None => {}
        }
        match jdi::deadlock::find_deadlocks(&vm).await {
            Ok(found) => {
                for d in &found {
                    self.out.lines(&d.to_string());
                }
                if found.is_empty() {
                    self.out.line("No deadlock found.");
                } else {
                    self.out.line(format!("Found {} deadlock(s).", found.len()));
                    self.status.found_deadlock();
                }
                self.out.data("deadlocks", crate::json::deadlocks(&found));
            }
            Err(e) => self.out.error(format!("Unable to look for deadlocks: {e}")),
        }
    }
}
