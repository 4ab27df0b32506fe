//! The debuggee: `FuzzTarget` (fuzz/fixtures) in a JVM under one agent, started through the test
//! rig, in a scratch directory of its own (where HeapDump's relative paths and hs_err files land).
//! One JVM at a time; it is killed when dropped.

use std::net::SocketAddr;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::time::Duration;

use test_rig::{Agent, Debuggee, FREE_PORT};

/// Which agent the debuggee runs with.
#[derive(Debug, Clone)]
pub enum AgentKind {
    /// Ours, by library path.
    Ours(PathBuf),
    /// The JDK's `-agentlib:jdwp`.
    Jdk,
}

impl AgentKind {
    pub fn name(&self) -> &'static str {
        match self {
            AgentKind::Ours(_) => "ours",
            AgentKind::Jdk => "jdk",
        }
    }
}

/// Where to find our agent when not told: next to this binary (`target/<profile>/`).
pub fn default_agent_library() -> PathBuf {
    let exe = std::env::current_exe().unwrap_or_default();
    exe.parent().unwrap_or(Path::new(".")).join("libjdwp_agent.so")
}

/// The compiled fixture's classpath (compiled once, cached under target/java-fixtures).
pub fn fixture_classes() -> Result<PathBuf, String> {
    let sources = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    test_rig::compile_java_sources(&sources, &test_rig::fixtures_cache_root())
        .map(|c| c.classes_dir)
        .map_err(|e| format!("compiling the fuzz fixture: {e}"))
}

/// Settings of every debuggee of a run.
#[derive(Debug, Clone)]
pub struct TargetConfig {
    pub agent: AgentKind,
    pub classes: PathBuf,
    pub scratch: PathBuf,
    pub heap_mb: u32,
}

/// A running debuggee.
pub struct Target {
    pub debuggee: Debuggee,
    pub addr: SocketAddr,
    pub scratch: PathBuf,
}

impl Target {
    pub fn start(config: &TargetConfig) -> Result<Target, String> {
        std::fs::create_dir_all(&config.scratch).map_err(|e| format!("{}: {e}", config.scratch.display()))?;
        let address = format!("127.0.0.1:{FREE_PORT}");
        let agent = match &config.agent {
            AgentKind::Ours(lib) => {
                Agent::path(lib, format!("transport=dt_socket,server=y,suspend=n,address={address},loglevel=error"))
            }
            AgentKind::Jdk => Agent::jdk(format!("transport=dt_socket,server=y,suspend=n,address={address}")),
        };
        let builder = Debuggee::builder("FuzzTarget")
            .classpath(&config.classes)
            .agent(agent)
            .current_dir(&config.scratch)
            .jvm_options([
                format!("-Xmx{}m", config.heap_mb),
                "-XX:+UseSerialGC".into(),
                "-XX:-UsePerfData".into(),
                "-XX:-CreateCoredumpOnCrash".into(),
                format!("-XX:ErrorFile={}/hs_err_pid%p.log", config.scratch.display()),
            ]);
        let debuggee = builder.spawn().map_err(|e| format!("starting the debuggee: {e}"))?;
        debuggee
            .wait_for_line("FuzzTarget ready", Duration::from_secs(120))
            .map_err(|e| format!("the debuggee did not get ready: {e}"))?;
        let addr = debuggee.listen_address().ok_or("the agent printed no address")?;
        Ok(Target { debuggee, addr, scratch: config.scratch.clone() })
    }

    pub fn pid(&self) -> u32 {
        self.debuggee.pid()
    }

    /// The exit status, waiting up to `wait` for the JVM to go.
    pub fn exited(&self, wait: Duration) -> Option<ExitStatus> {
        if wait.is_zero() { self.debuggee.exit_status() } else { self.debuggee.wait_for_exit(wait) }
    }

    /// The debuggee's resident set size in MiB (from /proc).
    pub fn rss_mb(&self) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid())).ok()?;
        let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
        let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kb / 1024)
    }

    /// The hs_err file the JVM wrote, if it crashed.
    pub fn hs_err(&self) -> Option<PathBuf> {
        let path = self.scratch.join(format!("hs_err_pid{}.log", self.pid()));
        path.exists().then_some(path)
    }

    /// The last `n` bytes of the JVM's output.
    pub fn output_tail(&self, n: usize) -> String {
        let text = self.debuggee.output_text();
        let start = text.len().saturating_sub(n);
        let start = (start..text.len()).find(|i| text.is_char_boundary(*i)).unwrap_or(text.len());
        text[start..].to_owned()
    }

    /// Removes files the run's packets made the JVM write (heap dumps) from the scratch directory.
    pub fn clean_scratch(&self) {
        if let Ok(dir) = std::fs::read_dir(&self.scratch) {
            for e in dir.flatten() {
                let name = e.file_name();
                if !name.to_string_lossy().starts_with("hs_err") {
                    let p = e.path();
                    let _ = if p.is_dir() { std::fs::remove_dir_all(&p) } else { std::fs::remove_file(&p) };
                }
            }
        }
    }
}

/// `exit 3`, `signal 11 (SIGSEGV)`.
pub fn describe_status(status: ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (Some(c), _) => format!("exit {c}"),
        (None, Some(s)) => format!("signal {s}{}", signal_name(s)),
        _ => status.to_string(),
    }
}

fn signal_name(s: i32) -> &'static str {
    match s {
        libc::SIGSEGV => " (SIGSEGV)",
        libc::SIGABRT => " (SIGABRT)",
        libc::SIGBUS => " (SIGBUS)",
        libc::SIGKILL => " (SIGKILL)",
        libc::SIGILL => " (SIGILL)",
        libc::SIGFPE => " (SIGFPE)",
        _ => "",
    }
}
