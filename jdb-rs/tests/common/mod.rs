//! Support for jdb-rs's integration tests: run jdb-rs (or the JDK's jdb) as a child whose
//! output is collected in the background, and wait for text in it. Waits are driven by the
//! output itself (a condition variable), never by sleeping.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// Generous: the tests must pass on a loaded 2-core machine.
pub const TIMEOUT: Duration = Duration::from_secs(120);

pub fn jdb_rs() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_jdb-rs"))
}

/// Whether `JDI_TEST_AGENT=ours` asks for this workspace's agent (the same switch as jdi-rs's
/// tests); otherwise the JDK's agent is under test.
pub fn testing_our_agent() -> bool {
    std::env::var("JDI_TEST_AGENT").is_ok_and(|v| v == "ours")
}

/// Whether a test that runs our agent whatever `JDI_TEST_AGENT` says (the profiler's) runs its
/// fixture's `main` in a virtual thread: only in the runs against our agent
/// (`JDI_TEST_AGENT=ours JDBG_TEST_VIRTUAL_MAIN=1`). The runs against the JDK's agent with virtual
/// mains check the JDK's behaviour; these tests run with platform mains there, as they do in the
/// run against our agent with platform mains.
pub fn ours_virtual_main() -> bool {
    test_rig::virtual_main_requested() && testing_our_agent()
}

/// `target/<profile>/libjdwp_agent.so`, next to the test binary's profile directory.
pub fn our_agent_path() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    let lib = exe.parent().and_then(|deps| deps.parent()).expect("target profile dir").join("libjdwp_agent.so");
    assert!(lib.is_file(), "JDI_TEST_AGENT=ours needs {} (cargo build -p jdwp-agent)", lib.display());
    lib
}

/// The agent the launched VM gets, as jdb-rs options: always explicit, so that a test never
/// depends on which library happens to lie next to the binary.
pub fn agent_args() -> Vec<String> {
    if testing_our_agent() {
        vec!["--agent".into(), our_agent_path().display().to_string()]
    } else {
        vec!["--jdk-agent".into()]
    }
}

/// `args` with [`agent_args`] in front, unless jdb-rs will not launch a VM (attach, listen, the
/// one-shot subcommands, help).
pub fn with_agent_args(args: &[String]) -> Vec<String> {
    let launches = !args.iter().any(|a| {
        matches!(a.as_str(), "deadlocks" | "-attach" | "--attach" | "-listen" | "--listen" | "-listenany")
            || a.starts_with("-help")
            || a == "--help"
            || a == "-version"
    });
    let mut out = if launches { agent_args() } else { Vec::new() };
    out.extend_from_slice(args);
    out
}

pub fn fixtures() -> String {
    test_rig::fixtures().expect("the Java fixtures compile").display().to_string()
}

pub fn sources() -> String {
    test_rig::fixture_source_dir().display().to_string()
}

pub fn line_of(file: &str, marker: &str) -> u32 {
    test_rig::fixture_line(file, marker).expect("marker in fixture")
}

/// Text collected from a stream, with a condition variable to wait for more.
#[derive(Default)]
pub struct Collected {
    text: Mutex<(String, bool)>,
    changed: Condvar,
}

impl Collected {
    pub fn start(mut r: impl Read + Send + 'static) -> Arc<Collected> {
        let c = Arc::new(Collected::default());
        let c2 = c.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            loop {
                match r.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        let mut g = c2.text.lock().unwrap();
                        g.0.push_str(&String::from_utf8_lossy(&buf[..n]));
                        c2.changed.notify_all();
                    }
                }
            }
            c2.text.lock().unwrap().1 = true;
            c2.changed.notify_all();
        });
        c
    }

    pub fn text(&self) -> String {
        self.text.lock().unwrap().0.clone()
    }

    pub fn len(&self) -> usize {
        self.text.lock().unwrap().0.len()
    }

    /// Waits until `pred` holds for the text from byte `from` on (or the stream ends); returns
    /// that text.
    pub fn wait_from(&self, from: usize, what: &str, pred: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + TIMEOUT;
        let mut g = self.text.lock().unwrap();
        loop {
            let tail = g.0.get(from..).unwrap_or("").to_string();
            if pred(&tail) {
                return tail;
            }
            if g.1 {
                panic!("the output ended while waiting for {what}; output so far:\n{}", g.0);
            }
            let now = Instant::now();
            if now >= deadline {
                panic!("timed out waiting for {what}; output so far:\n{}", g.0);
            }
            g = self.changed.wait_timeout(g, deadline - now).unwrap().0;
        }
    }

    /// Waits up to `timeout` for the stream to end; whether it did.
    pub fn ended_within(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut g = self.text.lock().unwrap();
        while !g.1 {
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            g = self.changed.wait_timeout(g, deadline - now).unwrap().0;
        }
        true
    }
}

/// A debugger (jdb or jdb-rs) driven through its standard input, as a person at a pipe would.
pub struct Driver {
    child: Option<Child>,
    stdin: Option<ChildStdin>,
    pub out: Arc<Collected>,
    pub err: Arc<Collected>,
}

/// Whether `text` ends with a jdb prompt: `> ` or `thread[1] `.
pub fn ends_with_prompt(text: &str) -> bool {
    let last = text.rsplit('\n').next().unwrap_or("");
    if last == "> " {
        return true;
    }
    last.ends_with("] ")
        && last.rfind('[').is_some_and(|open| last[open + 1..last.len() - 2].chars().all(|c| c.is_ascii_digit()))
}

impl Driver {
    pub fn spawn(program: &std::path::Path, args: &[String]) -> Driver {
        let args = if program == jdb_rs() { with_agent_args(args) } else { args.to_vec() };
        let mut cmd = Command::new(program);
        cmd.args(&args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
        for v in ["JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS"] {
            cmd.env_remove(v);
        }
        cmd.env("NO_COLOR", "1");
        let mut child = cmd.spawn().unwrap_or_else(|e| panic!("starting {}: {e}", program.display()));
        let out = Collected::start(child.stdout.take().unwrap());
        let err = Collected::start(child.stderr.take().unwrap());
        let stdin = child.stdin.take();
        Driver { child: Some(child), stdin, out, err }
    }

    /// Waits for the first prompt.
    pub fn ready(&self) -> String {
        self.out.wait_from(0, "the first prompt", ends_with_prompt)
    }

    /// Waits for the stop at the VM start event of a VM started with `suspend=y`, as a user
    /// waits for `VM Started:`. jdb handles that event apart from its command loop and may show
    /// its first prompt before it: a `cont` typed then finds "Nothing suspended." (JDK 25's jdb,
    /// seen under load), and the VM stays suspended at its start.
    pub fn ready_at_vm_start(&self) -> String {
        self.out.wait_from(0, "the stop at the VM start", |t| t.contains("VM Started:") && ends_with_prompt(t))
    }

    /// Sends a command and returns its output, up to the next prompt; for commands that let the
    /// VM run, up to the prompt after the next stop (or the VM's end).
    pub fn command(&mut self, cmd: &str) -> String {
        let from = self.out.len();
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{cmd}").unwrap();
        stdin.flush().unwrap();
        let word = cmd.split_whitespace().next().unwrap_or("");
        let resumes = matches!(word, "run" | "cont" | "step" | "next" | "stepi");

        self.out.wait_from(from, &format!("the output of {cmd:?}"), |t| {
            if t.contains("The application exited") || t.contains("has been disconnected") {
                return true;
            }
            if resumes {
                let stopped =
                    ["Breakpoint hit:", "Step completed:", "Exception occurred:", "Method entered:", "Method exited"]
                        .iter()
                        .any(|m| t.contains(m));
                stopped && ends_with_prompt(t)
            } else {
                ends_with_prompt(t)
            }
        })
    }

    /// Kills the debugger with SIGKILL (no cleanup of any kind runs) and reaps it.
    pub fn kill_hard(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    pub fn close_stdin(&mut self) {
        self.stdin.take();
    }

    /// Closes stdin and waits for the debugger to exit: (status, stdout, stderr).
    pub fn wait(mut self) -> (std::process::ExitStatus, String, String) {
        self.stdin.take();
        let mut child = self.child.take().expect("child");
        let pid = child.id();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(child.wait());
        });
        match rx.recv_timeout(TIMEOUT) {
            Ok(status) => {
                let status = status.expect("wait for the debugger");
                // The readers may still hold the last bytes; a process the debugger started may
                // keep the pipes open, so this wait is bounded and its result not required.
                for stream in [&self.out, &self.err] {
                    stream.ended_within(Duration::from_secs(10));
                }
                (status, self.out.text(), self.err.text())
            }
            Err(_) => {
                // SAFETY: plain kill(2) of our own child, which has not been reaped.
                unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
                panic!("the debugger did not exit; stdout:\n{}\nstderr:\n{}", self.out.text(), self.err.text());
            }
        }
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        if let Some(child) = self.child.as_mut() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Runs jdb-rs to completion with `args`, stdin closed; returns (exit code, stdout, stderr).
/// A run that outlives the drivers' timeout is killed and fails the test with what it printed.
pub fn run_jdb_rs(args: &[&str]) -> (i32, String, String) {
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    let (status, out, err) = Driver::spawn(&jdb_rs(), &args).wait();
    (status.code().unwrap_or(-1), out, err)
}
