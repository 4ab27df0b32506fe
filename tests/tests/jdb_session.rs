//! The JDK's real `jdb` drives the `Demo` fixture through a scripted session (breakpoint, run,
//! where, locals, print, dump, step, next, step up, threads, clear, cont to the end), once with
//! the JDK's agent in the debuggee and once with ours; the two transcripts must be identical once
//! object ids and column padding are normalized.
//!
//! The debuggee is started by the rig (`suspend=y`, ephemeral port) and jdb attaches with
//! `-attach`. Commands are fed one at a time; after each, the test waits for what jdb prints when
//! the command is done (its prompt, or for commands that resume the VM the event line and the
//! prompt after it), never sleeping, with a timeout on every wait.

use std::{
    io::{Read, Write},
    os::unix::process::CommandExt,
    path::{Path, PathBuf},
    process::{Child, ChildStdin, Command, Stdio},
    sync::{Arc, Condvar, Mutex},
    time::{Duration, Instant},
};

use test_rig::{Agent, DEFAULT_JDK_AGENT_OPTIONS, Debuggee, fixture_line, fixture_source_dir, java_tool};

/// Generous: CI runs on a small, busy machine.
const TIMEOUT: Duration = Duration::from_secs(60);

/// What a command is finished with.
#[derive(Debug, Clone, Copy)]
enum Until {
    /// jdb's prompt (`> ` or `main[1] `) ends the output.
    Prompt,
    /// The VM was resumed: a line containing this text, then a thread prompt.
    Event(&'static str),
    /// The debuggee ran to its end: this text, then jdb exits.
    Exit(&'static str),
}

/// The scripted session, as (command, until) pairs.
fn script() -> Vec<(String, Until)> {
    let line = |marker| fixture_line("Demo.java", marker).unwrap();
    let tick_first = line("@tick-first");
    vec![
        (format!("stop at Demo:{tick_first}"), Until::Prompt),
        ("run".into(), Until::Event("Breakpoint hit:")),
        ("where".into(), Until::Prompt),
        ("locals".into(), Until::Prompt),
        ("print n".into(), Until::Prompt),
        ("print this.counter".into(), Until::Prompt),
        ("print this".into(), Until::Prompt),
        ("dump this".into(), Until::Prompt),
        ("step".into(), Until::Event("Step completed:")),
        ("next".into(), Until::Event("Step completed:")),
        ("locals".into(), Until::Prompt),
        ("step up".into(), Until::Event("Step completed:")),
        ("where".into(), Until::Prompt),
        ("locals".into(), Until::Prompt),
        ("print demo.counter".into(), Until::Prompt),
        ("threads".into(), Until::Prompt),
        ("cont".into(), Until::Event("Breakpoint hit:")),
        ("print n".into(), Until::Prompt),
        (format!("clear Demo:{tick_first}"), Until::Prompt),
        ("cont".into(), Until::Exit("The application exited")),
    ]
}

/// jdb's output, collected by reader threads and announced on a condvar.
#[derive(Default)]
struct Output {
    state: Mutex<(Vec<u8>, usize)>, // (bytes, number of streams at EOF)
    changed: Condvar,
}

/// A running jdb, killed on drop.
struct Jdb {
    child: Child,
    stdin: Option<ChildStdin>,
    output: Arc<Output>,
    /// Where the previous command's output ended.
    consumed: usize,
}

impl Jdb {
    fn attach(address: &str, work_dir: &Path) -> Jdb {
        let jdb = java_tool("jdb").expect("the JDK has jdb");
        let mut cmd = Command::new(jdb);
        // A private home and working directory: jdb reads jdb.ini / .jdbrc from both.
        cmd.arg(format!("-J-Duser.home={}", work_dir.display()))
            .args(["-J-Duser.language=en", "-J-Duser.country=US"])
            .arg("-sourcepath")
            .arg(fixture_source_dir())
            .arg("-attach")
            .arg(address)
            .current_dir(work_dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for var in ["JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS"] {
            cmd.env_remove(var);
        }
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            cmd.pre_exec(|| {
                // jdb dies with the thread that started it, so it never outlives the test.
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong);
                Ok(())
            });
        }
        let mut child = cmd.spawn().expect("jdb starts");
        let output = Arc::new(Output::default());
        for stream in
            [Box::new(child.stdout.take().unwrap()) as Box<dyn Read + Send>, Box::new(child.stderr.take().unwrap())]
        {
            let output = Arc::clone(&output);
            std::thread::spawn(move || pump(stream, &output));
        }
        let stdin = child.stdin.take();
        Jdb { child, stdin, output, consumed: 0 }
    }

    /// Everything jdb printed so far.
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.output.state.lock().unwrap().0).into_owned()
    }

    fn send(&mut self, command: &str) {
        let stdin = self.stdin.as_mut().expect("jdb's stdin is open");
        stdin
            .write_all(format!("{command}\n").as_bytes())
            .and_then(|()| stdin.flush())
            .unwrap_or_else(|e| panic!("writing {command:?} to jdb: {e}\njdb's output so far:\n{}", self.text()));
    }

    /// Waits until the output after the previous command satisfies `until`; returns that output.
    fn wait(&mut self, until: Until, what: &str) -> String {
        let deadline = Instant::now() + TIMEOUT;
        let mut state = self.output.state.lock().unwrap();
        loop {
            let (bytes, eofs) = &*state;
            let new = String::from_utf8_lossy(&bytes[self.consumed..]).into_owned();
            let done = match until {
                // Every command of the script prints something: a lone prompt is a late one of
                // the previous command (jdb's event thread and command loop both print prompts).
                Until::Prompt => ends_with_prompt(&new) && !normalize(&new).is_empty(),
                Until::Event(marker) => new.find(marker).is_some_and(|at| ends_with_thread_prompt(&new[at..])),
                Until::Exit(marker) => new.contains(marker) && *eofs == 2,
            };
            if done {
                self.consumed = bytes.len();
                return new;
            }
            let now = Instant::now();
            if now >= deadline || *eofs == 2 {
                let why = if *eofs == 2 { "jdb exited" } else { "timed out" };
                drop(state);
                panic!("{why} waiting for {until:?} after {what:?}\njdb's output so far:\n{}", self.text());
            }
            state = self.output.changed.wait_timeout(state, deadline - now).unwrap().0;
        }
    }
}

impl Drop for Jdb {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn pump(mut stream: impl Read, output: &Output) {
    let mut buf = [0u8; 8192];
    loop {
        let n = stream.read(&mut buf).unwrap_or(0);
        let mut state = output.state.lock().unwrap();
        if n == 0 {
            state.1 += 1;
        } else {
            state.0.extend_from_slice(&buf[..n]);
        }
        drop(state);
        output.changed.notify_all();
        if n == 0 {
            return;
        }
    }
}

/// The text after the last newline is a prompt: `> ` or a thread prompt.
fn ends_with_prompt(text: &str) -> bool {
    let last = text.rsplit('\n').next().unwrap_or_default();
    last == "> " || is_thread_prompt(last)
}

fn ends_with_thread_prompt(text: &str) -> bool {
    is_thread_prompt(text.rsplit('\n').next().unwrap_or_default())
}

/// `main[1] `: a thread name without blanks, a frame number in brackets, a blank.
fn is_thread_prompt(s: &str) -> bool {
    let Some(body) = s.strip_suffix("] ") else { return false };
    let Some((name, frame)) = body.rsplit_once('[') else { return false };
    !name.is_empty()
        && !name.contains(char::is_whitespace)
        && !frame.is_empty()
        && frame.chars().all(|c| c.is_ascii_digit())
}

/// Starts `Demo` under `agent`, attaches jdb and runs the script; returns the raw transcript
/// (`## command` headers, each followed by what jdb printed for it).
fn run_session(agent: Agent, label: &str) -> String {
    let work_dir =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join("jdb-session").join(format!("{label}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work_dir);
    std::fs::create_dir_all(&work_dir).unwrap();

    let jvm = Debuggee::builder("Demo").agent(agent).spawn().expect("the debuggee starts listening");
    let mut jdb = Jdb::attach(&jvm.address().to_string(), &work_dir);
    let mut transcript = String::new();
    // Attaching: jdb reports the VM start and stops at a thread prompt.
    let banner = jdb.wait(Until::Event("VM Started:"), "attach");
    transcript.push_str(&format!("## (attach)\n{banner}\n"));
    for (command, until) in script() {
        jdb.send(&command);
        let out = jdb.wait(until, &command);
        transcript.push_str(&format!("## {command}\n{out}\n"));
    }
    let status = jdb.child.wait().expect("jdb exits");
    assert!(status.success(), "jdb exited with {status}\n{transcript}");
    let vm_status = jvm.wait_for_exit(TIMEOUT).expect("Demo exits after the last cont");
    assert!(vm_status.success(), "Demo exited with {vm_status}\n{}", jvm.output_text());
    assert!(jvm.stdout_text().contains("Demo total=584 "), "{}", jvm.output_text());
    let _ = std::fs::remove_dir_all(&work_dir);
    transcript
}

/// The transcript with what legitimately differs between runs and agents made uniform: prompts
/// (jdb prints them from its command loop while the event thread prints events, so where they land
/// depends on timing, even inside an event's line), object ids, hash codes, and the column padding
/// that depends on the ids' widths. Blank lines are dropped.
fn normalize(transcript: &str) -> String {
    let mut out = String::new();
    for line in transcript.lines() {
        let line = normalize_numbers(line);
        let mut words: Vec<&str> = line.split_whitespace().filter(|w| *w != ">").collect();
        while words.first().is_some_and(|w| is_thread_prompt(&format!("{w} "))) {
            words.remove(0);
        }
        if !words.is_empty() {
            out.push_str(&words.join(" "));
            out.push('\n');
        }
    }
    out
}

/// `(id=123)` → `(id=#)`, `(java.lang.Thread)123 ` → `(java.lang.Thread)# `, `@1b6d3586` → `@#`,
/// `0x7f..` → `0x#`.
fn normalize_numbers(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(c) = rest.chars().next() {
        let (prefix, is_digit): (&str, fn(char) -> bool) = if rest.starts_with("(id=") {
            ("(id=", |c| c.is_ascii_digit())
        } else if rest.starts_with("0x") {
            ("0x", |c| c.is_ascii_hexdigit())
        } else if c == '@' && out.ends_with(|p: char| p.is_alphanumeric() || p == '$' || p == ']' || p == ';') {
            ("@", |c| c.is_ascii_hexdigit())
        } else if c == ')' && rest[1..].starts_with(|c: char| c.is_ascii_digit()) {
            (")", |c| c.is_ascii_digit())
        } else {
            out.push(c);
            rest = &rest[c.len_utf8()..];
            continue;
        };
        let after = &rest[prefix.len()..];
        let digits = after.chars().take_while(|&c| is_digit(c)).count();
        // A number ends at a non-alphanumeric character (`@tick-first` is no hash code).
        let whole = !after[digits..].starts_with(|c: char| c.is_alphanumeric() || c == '_');
        out.push_str(prefix);
        if digits > 0 && whole {
            out.push('#');
            rest = &after[digits..];
        } else {
            rest = after;
        }
    }
    out
}

/// `<target>/<profile>/libjdwp_agent.so`, next to this test binary's profile directory.
fn our_agent() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    let lib = exe.parent().and_then(Path::parent).expect("target/<profile>/deps/<test>").join("libjdwp_agent.so");
    assert!(lib.is_file(), "{} is missing: build it with `cargo build -p jdwp-agent`", lib.display());
    lib
}

/// Line-by-line comparison for the assertion message: the first differences with context.
fn first_differences(a: &str, b: &str) -> String {
    let (a, b): (Vec<&str>, Vec<&str>) = (a.lines().collect(), b.lines().collect());
    let mut out = String::new();
    let mut shown = 0;
    for i in 0..a.len().max(b.len()) {
        let (x, y) = (a.get(i).copied().unwrap_or("<end>"), b.get(i).copied().unwrap_or("<end>"));
        if x != y {
            out.push_str(&format!("line {}:\n  jdk:  {x}\n  ours: {y}\n", i + 1));
            shown += 1;
            if shown == 10 {
                break;
            }
        }
    }
    out
}

#[test]
fn jdb_session_with_the_jdk_agent() {
    let raw = run_session(Agent::jdk(DEFAULT_JDK_AGENT_OPTIONS), "jdk");
    let t = normalize(&raw);
    let tick = fixture_line("Demo.java", "@tick-first").unwrap();
    let tick_add = fixture_line("Demo.java", "@tick-add").unwrap();
    let tick_return = fixture_line("Demo.java", "@tick-return").unwrap();
    let loop_tick = fixture_line("Demo.java", "@loop-tick").unwrap();
    for expected in [
        format!("Deferring breakpoint Demo:{tick}."),
        format!("Breakpoint hit: \"thread=main\", Demo.tick(), line={tick} bci=0"),
        format!("[1] Demo.tick (Demo.java:{tick})"),
        format!("[2] Demo.main (Demo.java:{loop_tick})"),
        "n = 0".into(),
        "this.counter = 0".into(),
        "this = \"Demo@#\"".into(),
        "name: \"demo\"".into(),
        "sString: \"static string\"".into(),
        format!("Step completed: \"thread=main\", Demo.tick(), line={tick_add} bci=4"),
        format!("Step completed: \"thread=main\", Demo.tick(), line={tick_return} bci=14"),
        "doubled = 0".into(),
        format!("Step completed: \"thread=main\", Demo.main(), line={loop_tick}"),
        "iIntLocal = 123456789".into(),
        "demo = instance of Demo(id=#)".into(),
        "Group main:".into(),
        "(java.lang.Thread)# main running".into(),
        "n = 1".into(),
        format!("Removed: breakpoint Demo:{tick}"),
        "The application exited".into(),
    ] {
        assert!(t.contains(&expected), "missing {expected:?} in the normalized transcript:\n{t}\nraw:\n{raw}");
    }
    // The normalization must make two runs with the same agent agree, or comparing agents means nothing.
    let again = normalize(&run_session(Agent::jdk(DEFAULT_JDK_AGENT_OPTIONS), "jdk-again"));
    assert!(t == again, "two runs with the JDK agent differ:\n{}", first_differences(&t, &again));
}

#[test]
fn jdb_session_with_our_agent_matches_the_jdk_agent() {
    let jdk = normalize(&run_session(Agent::jdk(DEFAULT_JDK_AGENT_OPTIONS), "jdk"));
    let ours = normalize(&run_session(Agent::path(our_agent(), DEFAULT_JDK_AGENT_OPTIONS), "ours"));
    assert!(
        jdk == ours,
        "jdb sessions differ between the JDK agent and ours:\n{}\n--- jdk ---\n{jdk}\n--- ours ---\n{ours}",
        first_differences(&jdk, &ours)
    );
}

#[test]
fn normalization() {
    assert!(is_thread_prompt("main[1] "));
    assert!(!is_thread_prompt("  [1] "));
    assert!(!is_thread_prompt("main[] "));
    assert!(ends_with_prompt("x\n> "));
    assert!(ends_with_prompt("  [1] Demo.tick (Demo.java:50)\nmain[1] "));
    assert!(!ends_with_prompt("  [1] "));
    assert_eq!(
        normalize("main[1] > Set deferred breakpoint Demo:50\n\n> main[1]   [1] Demo.tick (Demo.java:50)\n"),
        "Set deferred breakpoint Demo:50\n[1] Demo.tick (Demo.java:50)\n"
    );
    assert_eq!(
        normalize("  (java.lang.Thread)1                           main                running\n"),
        "(java.lang.Thread)# main running\n"
    );
    assert_eq!(
        normalize("demo = instance of Demo(id=414) Demo@1b6d3586 0x7fa0 (x)"),
        "demo = instance of Demo(id=#) Demo@# 0x# (x)\n"
    );
    assert_eq!(normalize_numbers("line=50 bci=0 (id=)"), "line=50 bci=0 (id=)");
    assert_eq!(normalize_numbers("// @tick-first @done @add Demo@1f [I@2a"), "// @tick-first @done @add Demo@# [I@#");
    assert_eq!(normalize("VM Started: > No frames\n"), "VM Started: No frames\n");
}
