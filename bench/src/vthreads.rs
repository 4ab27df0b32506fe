//! `bench vthreads`: virtual threads under a debugger, JDK 25's agent against ours, side by side in
//! one run (issue #18's speed goals; see BENCHMARKS.md).
//!
//! ```text
//! cargo run --release -p bench -- vthreads [--threads 1000000] [--runs 3] [--agent-lib PATH] \
//!     [--jdk /usr/lib/jvm/temurin-25-jdk-amd64] [--work 1000] [--hits 5000] [--steps 5000] \
//!     [--crowd 300000] [--only jdk|ours] [--no-spawn] [--no-rates] [--no-crowd]
//! ```
//!
//! The debuggee is `bench/java21/VThreads.java`, compiled with the chosen JDK's javac (`--release
//! 21`) into `<target>/bench-java21/`; the debugger is jdi-rs (in this process, current-thread
//! runtime) over a socket. Each run measures, in a rotating order:
//!
//! - **spawn**: `VThreads spawn` starts and joins `--threads` virtual threads (after a tenth as many,
//!   untimed, to warm up), each doing `--work` rounds of arithmetic (about 2 µs at 1000), and
//!   prints the time of that start-and-join phase, measured inside the program (no JVM start-up).
//!   Five configurations: no agent; each agent with the debugger attached and a breakpoint in a
//!   method no thread runs (`attached`); the same plus `ThreadStart` requests with suspend policy
//!   none (`starts`). For `starts` the debugger enables two requests, one for all threads and one
//!   with `PlatformThreadsOnly`, counts the events of each until the VM dies, and checks that the
//!   difference (the virtual threads' starts) is exactly the number of virtual threads the program
//!   started: a run that drops one is a failure, printed as such, and its time is not counted.
//! - **rates**: `VThreads events` runs one virtual thread; the debugger breaks at a line it runs
//!   `--hits` times (suspend all, resumed each time), then takes `--steps` one-shot line steps
//!   over in it. Breakpoint hits/s and steps/s, the first tenth of each not timed; every event
//!   must be in the same thread, which must say it is virtual.
//!
//! - **crowd**: `VThreads crowd` starts and joins `--crowd` virtual threads (default 300,000; 10
//!   rounds of work each) with a `ThreadStart` request on (policy none), so the agent gives each an
//!   ID, and collects garbage; then breakpoint hits/s (suspend all) in one virtual thread, as in
//!   the rates phase: what every stop costs once a debugger has seen many threads come and go.
//!
//! Our agent is `target/release/libjdwp_agent.so`, built first unless `--agent-lib` names one. The
//! JVMs run with the JVM's default options (G1 on this machine), as users run them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use jdi::event::EventExt;
use jdi::{Event, EventQueue, EventRequest, EventSet, StepDepth, StepSize, SuspendPolicy, VirtualMachine};
use test_rig::{Agent, DEFAULT_JDK_AGENT_OPTIONS, Debuggee};

use crate::{format_number, median};

/// The JDK whose agent is the reference, where the project's machines have it.
const DEFAULT_JDK: &str = "/usr/lib/jvm/temurin-25-jdk-amd64";

/// How long one awaited event or command may take in the rates phases.
const T: Duration = Duration::from_secs(120);

/// How long one spawn run may take, debuggee start to end (the JDK's agent took 36.5 s for a
/// million threads with thread starts on a quiet machine; a loaded one is several times slower).
const RUN_TIMEOUT: Duration = Duration::from_secs(1200);

const USAGE: &str = "usage: bench vthreads [--threads N] [--runs N] [--agent-lib PATH] [--jdk PATH] [--work N] \
     [--hits N] [--steps N] [--crowd N] [--only jdk|ours] [--no-spawn] [--no-rates] [--no-crowd]";

/// The program's own name for itself, in its output lines.
const PROGRAM: &str = "VThreads";

#[derive(Debug, Clone)]
struct Options {
    threads: u32,
    warm: u32,
    work: u32,
    hits: u32,
    steps: u32,
    runs: u32,
    agents: Vec<Which>,
    agent_lib: Option<PathBuf>,
    jdk: PathBuf,
    spawn: bool,
    rates: bool,
    /// Threads started before the crowd phase's hits; 0: no crowd phase.
    crowd: u32,
}

/// Who is attached to the JVM.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Which {
    None,
    Jdk,
    Ours,
}

impl Which {
    fn name(self) -> &'static str {
        match self {
            Which::None => "no agent",
            Which::Jdk => "JDK agent",
            Which::Ours => "ours",
        }
    }
}

/// What is measured; each has one value per run and side.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Metric {
    /// Start-and-join time (s): no agent, or the debugger attached with a breakpoint set.
    Attached,
    /// The same with the `ThreadStart` requests.
    Starts,
    /// Breakpoint hits/s in a virtual thread.
    Hits,
    /// One-shot line steps over /s in a virtual thread.
    Steps,
    /// Breakpoint hits/s in a virtual thread after the crowd of thread starts.
    CrowdHits,
}

/// One run's value of a metric, or why there is none.
type Outcome = Result<f64, String>;

/// Every run's outcomes, by side and metric.
type Results = BTreeMap<(Which, Metric), Vec<Outcome>>;

fn parse(argv: &[String]) -> Result<Options, String> {
    let mut o = Options {
        threads: 1_000_000,
        warm: 0,
        work: 1000,
        hits: 5000,
        steps: 5000,
        runs: 3,
        agents: vec![Which::Jdk, Which::Ours],
        agent_lib: None,
        jdk: std::env::var_os(test_rig::TEST_JDK_VAR).map_or_else(|| PathBuf::from(DEFAULT_JDK), PathBuf::from),
        spawn: true,
        rates: true,
        crowd: 300_000,
    };
    let mut warm = None;
    let mut it = argv.iter();
    while let Some(flag) = it.next() {
        let mut value = || it.next().cloned().ok_or_else(|| format!("{flag} needs a value\n{USAGE}"));
        let mut number = || -> Result<u32, String> {
            let v = value()?;
            v.parse::<u32>().ok().filter(|&n| n > 0).ok_or_else(|| format!("{flag}: not a positive number: {v}"))
        };
        match flag.as_str() {
            "--threads" => o.threads = number()?,
            "--warm" => warm = Some(number()?),
            "--work" => o.work = number()?,
            "--hits" => o.hits = number()?,
            "--steps" => o.steps = number()?,
            "--runs" => o.runs = number()?,
            "--agent-lib" => o.agent_lib = Some(PathBuf::from(value()?)),
            "--jdk" => o.jdk = PathBuf::from(value()?),
            "--no-spawn" => o.spawn = false,
            "--no-rates" => o.rates = false,
            "--crowd" => o.crowd = number()?,
            "--no-crowd" => o.crowd = 0,
            "--only" => {
                o.agents = match value()?.as_str() {
                    "jdk" => vec![Which::Jdk],
                    "ours" => vec![Which::Ours],
                    other => return Err(format!("--only wants jdk or ours, not {other}")),
                }
            }
            "--help" => return Err(USAGE.into()),
            other => return Err(format!("unknown option {other}\n{USAGE}")),
        }
    }
    o.warm = warm.unwrap_or(o.threads / 10);
    if o.hits < 2 || o.steps < 2 {
        return Err("--hits and --steps must be at least 2".into());
    }
    Ok(o)
}

pub fn main(argv: &[String]) -> Result<(), String> {
    let opts = parse(argv)?;
    if !opts.jdk.join("bin/java").is_file() {
        return Err(format!("no JDK at {} (--jdk PATH: a JDK 21 or later)", opts.jdk.display()));
    }
    // The rig starts `$JDBG_TEST_JDK/bin/java`, and `-agentlib:jdwp` is that JDK's agent.
    // SAFETY: nothing else runs yet in this process (no thread has been started), so no other
    // thread can read the environment while it changes.
    unsafe { std::env::set_var(test_rig::TEST_JDK_VAR, &opts.jdk) };
    let feature = test_rig::jdk_feature_version().map_err(|e| e.to_string())?;
    if feature < 21 {
        return Err(format!("{} is JDK {feature}: virtual threads need 21 or later", opts.jdk.display()));
    }
    let lib = match &opts.agent_lib {
        Some(lib) => lib.clone(),
        None if opts.agents.contains(&Which::Ours) => crate::agent::build_agent()?,
        None => PathBuf::new(),
    };
    if opts.agents.contains(&Which::Ours) && !lib.is_file() {
        return Err(format!("no agent library at {}", lib.display()));
    }
    let classes = compile(&opts.jdk)?;
    let source = source_path();
    let text = std::fs::read_to_string(&source).map_err(|e| format!("reading {}: {e}", source.display()))?;
    let lines = Lines {
        never: marker_line(&text, "@never")?,
        hot: marker_line(&text, "@vt-hot")?,
        step_start: marker_line(&text, "@vt-step-start")?,
    };
    let bench = Bench { opts: &opts, lib, classes, lines };
    let load_start = crate::agent::load_average();
    eprintln!(
        "bench vthreads: JDK {feature} at {}, {opts:?}, our agent {}; load average {load_start}",
        opts.jdk.display(),
        bench.lib.display()
    );
    let results = bench.run_all()?;
    let load_end = crate::agent::load_average();
    eprintln!("bench vthreads: load average {load_end}");
    println!();
    println!(
        "JDK {feature} ({}), jdi-rs as the debugger, medians of {} run(s); load average {load_start} at the start, \
         {load_end} at the end:",
        opts.jdk.display(),
        opts.runs
    );
    println!();
    print!("{}", render(&opts, &results));
    Ok(())
}

/// `bench/java21/VThreads.java`.
fn source_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("java21").join(format!("{PROGRAM}.java"))
}

/// Compiles the debuggee with `jdk`'s javac into `<target>/bench-java21/` (apart from the JDK 17
/// classes of `bench/java/`).
fn compile(jdk: &Path) -> Result<PathBuf, String> {
    let out = test_rig::fixtures_cache_root().parent().map(|t| t.join("bench-java21")).ok_or("no target directory")?;
    let source = source_path();
    let status = Command::new(jdk.join("bin/javac"))
        .args(["-g", "--release", "21", "-d"])
        .arg(&out)
        .arg(&source)
        .status()
        .map_err(|e| format!("running javac: {e}"))?;
    if !status.success() {
        return Err(format!("javac {} failed ({status})", source.display()));
    }
    Ok(out)
}

/// The 1-based number of the one line of `text` holding `marker` as a whole word.
fn marker_line(text: &str, marker: &str) -> Result<u32, String> {
    let is_marker = |line: &str| {
        line.match_indices(marker)
            .any(|(at, _)| !line[at + marker.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '-'))
    };
    let found: Vec<usize> = text.lines().enumerate().filter(|(_, l)| is_marker(l)).map(|(i, _)| i + 1).collect();
    match found[..] {
        [line] => u32::try_from(line).map_err(|e| e.to_string()),
        _ => Err(format!("marker {marker} is on {} lines of {PROGRAM}.java, not one", found.len())),
    }
}

/// Lines of VThreads.java the debugger breaks on.
#[derive(Debug, Clone, Copy)]
struct Lines {
    never: u32,
    hot: u32,
    step_start: u32,
}

/// What `VThreads spawn` printed: how many threads it timed and how long they took.
#[derive(Debug, Clone, Copy, PartialEq)]
struct SpawnLine {
    threads: u64,
    warm: u64,
    seconds: f64,
}

/// Finds and parses the program's `VThreads spawn threads=N warm=W ns=T` line.
fn parse_spawn_line(stdout: &str) -> Result<SpawnLine, String> {
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix("VThreads spawn "))
        .ok_or_else(|| format!("no \"VThreads spawn\" line in:\n{stdout}"))?;
    let mut fields = BTreeMap::new();
    for item in line.split_whitespace() {
        let (k, v) = item.split_once('=').ok_or_else(|| format!("bad item {item:?} in {line:?}"))?;
        let v: u64 = v.parse().map_err(|_| format!("bad number {item:?} in {line:?}"))?;
        fields.insert(k, v);
    }
    let field = |k: &str| fields.get(k).copied().ok_or_else(|| format!("no {k}= in {line:?}"));
    Ok(SpawnLine { threads: field("threads")?, warm: field("warm")?, seconds: field("ns")? as f64 / 1e9 })
}

/// The thread start events one `starts` run's debugger received.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct StartCounts {
    /// Of the request for all threads.
    all: u64,
    /// Of the request with `PlatformThreadsOnly`.
    platform: u64,
}

/// Checks a `starts` run: every virtual thread the program started was reported once.
fn check_starts(counts: StartCounts, spawned: &SpawnLine) -> Result<(), String> {
    let expected = spawned.threads + spawned.warm;
    let reported = counts.all.checked_sub(counts.platform).ok_or_else(|| {
        format!("more platform thread starts ({}) than thread starts ({})", counts.platform, counts.all)
    })?;
    if reported == expected {
        Ok(())
    } else {
        Err(format!(
            "{} of {} virtual thread starts reported ({} thread start events, {} of them platform threads')",
            grouped(reported),
            grouped(expected),
            counts.all,
            counts.platform
        ))
    }
}

/// A count with thousands separators (`1,100`).
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

struct Bench<'a> {
    opts: &'a Options,
    lib: PathBuf,
    classes: PathBuf,
    lines: Lines,
}

impl Bench<'_> {
    fn run_all(&self) -> Result<Results, String> {
        let mut results = Results::new();
        let o = self.opts;
        for run in 0..o.runs {
            if o.spawn {
                let mut order = vec![(Which::None, Metric::Attached)];
                for &agent in &o.agents {
                    order.extend([(agent, Metric::Attached), (agent, Metric::Starts)]);
                }
                let first = run as usize % order.len();
                order.rotate_left(first);
                for (which, metric) in order {
                    let outcome = self.spawn_run(which, metric == Metric::Starts);
                    report(run, which, metric, &outcome);
                    results.entry((which, metric)).or_default().push(outcome);
                }
            }
            if o.rates {
                let mut order = o.agents.clone();
                let first = run as usize % order.len();
                order.rotate_left(first);
                for which in order {
                    let (hits, steps) = self.rates_run(which);
                    for (metric, outcome) in [(Metric::Hits, hits), (Metric::Steps, steps)] {
                        report(run, which, metric, &outcome);
                        results.entry((which, metric)).or_default().push(outcome);
                    }
                }
            }
            if o.crowd > 0 {
                let mut order = o.agents.clone();
                let first = run as usize % order.len();
                order.rotate_left(first);
                for which in order {
                    let outcome = self.crowd_run(which);
                    report(run, which, Metric::CrowdHits, &outcome);
                    results.entry((which, Metric::CrowdHits)).or_default().push(outcome);
                }
            }
        }
        Ok(results)
    }

    fn agent(&self, which: Which) -> Agent {
        match which {
            Which::None => Agent::None,
            Which::Jdk => Agent::jdk_default(),
            Which::Ours => Agent::path(&self.lib, DEFAULT_JDK_AGENT_OPTIONS),
        }
    }

    fn spawn(&self, which: Which, args: &[String]) -> Result<Debuggee, String> {
        Debuggee::builder(PROGRAM)
            .classpath(&self.classes)
            .virtual_main(false)
            .args(args)
            .agent(self.agent(which))
            .spawn()
            .map_err(|e| format!("starting {PROGRAM} under {}: {e}", which.name()))
    }

    /// Waits for the program to end by itself and returns its stdout.
    fn finish(&self, jvm: &Debuggee, timeout: Duration) -> Result<String, String> {
        let status = jvm.wait_for_exit(timeout);
        let stdout = jvm.stdout_text();
        match status {
            Some(s) if s.success() && stdout.lines().any(|l| l.starts_with("VThreads done ")) => Ok(stdout),
            _ => Err(format!("{PROGRAM} did not finish: {status:?}\n{}", jvm.output_text())),
        }
    }

    /// One start-and-join run: its time in seconds.
    fn spawn_run(&self, which: Which, starts: bool) -> Outcome {
        let o = self.opts;
        let args = ["spawn".to_string(), o.threads.to_string(), o.warm.to_string(), o.work.to_string()];
        let jvm = self.spawn(which, &args)?;
        let started = Instant::now();
        let counts = if which == Which::None {
            None
        } else {
            let address = jvm.address().to_string();
            let counts = block_on(spawn_debugger(&address, self.lines.never, starts))
                .map_err(|e| format!("debugger: {e}\n{}", jvm.output_text()))?;
            Some(counts)
        };
        let stdout = self.finish(&jvm, RUN_TIMEOUT.saturating_sub(started.elapsed()))?;
        let spawned = parse_spawn_line(&stdout)?;
        if let (true, Some(counts)) = (starts, counts) {
            check_starts(counts, &spawned)
                .map_err(|e| format!("{e}; its time, {:.2} s, is not counted", spawned.seconds))?;
        }
        Ok(spawned.seconds)
    }

    /// One rates run: breakpoint hits/s and steps/s in a virtual thread.
    fn rates_run(&self, which: Which) -> (Outcome, Outcome) {
        let jvm = match self.spawn(which, &["events".to_string(), self.opts.hits.to_string()]) {
            Ok(jvm) => jvm,
            Err(e) => return (Err(e.clone()), Err(e)),
        };
        let (hits, steps) = block_on(rates_debugger(&jvm.address().to_string(), self.lines, self.opts));
        let ended = self.finish(&jvm, T);
        let with_output = |e: String| format!("{e}\n{}", jvm.output_text());
        match ended {
            // A rate measured is good only if the program also ended as it should.
            Err(e) => (Err(hits.err().unwrap_or_else(|| e.clone())), Err(steps.err().unwrap_or(e))),
            Ok(_) => (hits.map_err(with_output), steps.map_err(with_output)),
        }
    }
}

impl Bench<'_> {
    /// One crowd run: breakpoint hits/s after the crowd's thread starts.
    fn crowd_run(&self, which: Which) -> Outcome {
        let o = self.opts;
        let jvm = self.spawn(which, &["crowd".to_string(), o.crowd.to_string(), o.hits.to_string()])?;
        let hits = block_on(crowd_debugger(&jvm.address().to_string(), self.lines.hot, o.crowd, o.hits));
        let ended = self.finish(&jvm, T);
        match (hits, ended) {
            (Err(e), _) => Err(format!("{e}\n{}", jvm.output_text())),
            (Ok(_), Err(e)) => Err(e),
            (Ok(rate), Ok(_)) => Ok(rate),
        }
    }
}

/// Runs the debugger on a fresh current-thread runtime.
fn block_on<F: std::future::Future>(future: F) -> F::Output {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a tokio runtime starts");
    rt.block_on(future)
}

fn report(run: u32, which: Which, metric: Metric, outcome: &Outcome) {
    match outcome {
        Ok(v) => eprintln!("bench vthreads: run {} {} {metric:?}: {v:.3}", run + 1, which.name()),
        Err(e) => eprintln!("bench vthreads: run {} {} {metric:?} FAILED: {e}", run + 1, which.name()),
    }
}

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// Attaches, stops at the program's class prepare, sets the breakpoint in `never()` (and with
/// `starts` the two thread start requests, policy none), lets the program run and consumes every
/// event until the VM dies. Returns the thread start counts.
async fn spawn_debugger(address: &str, never_line: u32, starts: bool) -> Result<StartCounts, String> {
    let vm = jdi::attach(address, Some(T)).await.map_err(err)?;
    let mut events = vm.event_queue().ok_or("no event queue")?;
    let (set, class) = to_class_prepare(&vm, &mut events).await?;
    let never = first_location(&class, never_line).await?;
    let bp = vm.enable_request(&EventRequest::breakpoint(never)).await.map_err(err)?;
    let requests = if starts {
        let start = EventRequest::thread_start().suspend(SuspendPolicy::None);
        let all = vm.enable_request(&start).await.map_err(err)?;
        let platform = vm.enable_request(&start.platform_threads_only()).await.map_err(err)?;
        Some((all, platform))
    } else {
        None
    };
    set.resume().await.map_err(err)?;
    let consume = async {
        let mut counts = StartCounts::default();
        while let Some(set) = events.next().await {
            let set = set.map_err(err)?;
            for event in &set.events {
                match (event, requests) {
                    (Event::ThreadStart { .. }, Some((all, platform))) => {
                        let id = event.request();
                        counts.all += u64::from(id == Some(all));
                        counts.platform += u64::from(id == Some(platform));
                    }
                    (Event::Breakpoint { .. }, _) if event.request() == Some(bp) => {
                        return Err("the breakpoint in never() was hit".to_string());
                    }
                    _ => {}
                }
            }
            if set.is_vm_death() {
                break;
            }
            set.resume().await.map_err(err)?;
        }
        Ok(counts)
    };
    tokio::time::timeout(RUN_TIMEOUT, consume).await.map_err(|_| format!("no VM death within {RUN_TIMEOUT:?}"))?
}

/// From the VM start: runs to the program class's preparation and returns that (suspended) set and
/// the class.
async fn to_class_prepare(
    vm: &VirtualMachine,
    events: &mut EventQueue,
) -> Result<(EventSet, jdi::ReferenceType), String> {
    let set = events.next_within(T).await.map_err(err)?;
    if !set.is_vm_start() {
        return Err(format!("expected the VM start, got {set:?}"));
    }
    let prepare = vm.enable_request(&EventRequest::class_prepare(PROGRAM)).await.map_err(err)?;
    set.resume().await.map_err(err)?;
    let set = events.wait_for(T, |e| matches!(e, Event::ClassPrepare { .. })).await.map_err(err)?;
    vm.disable_request(prepare).await.map_err(err)?;
    let Some(Event::ClassPrepare { ref_type_tag, type_id, .. }) =
        set.events.iter().find(|e| matches!(e, Event::ClassPrepare { .. })).cloned()
    else {
        unreachable!("waited for it")
    };
    let class = vm.reference_type_of_kind(ref_type_tag, type_id).await.map_err(err)?;
    Ok((set, class))
}

async fn first_location(class: &jdi::ReferenceType, line: u32) -> Result<jdi::Location, String> {
    let found = class.locations_of_line(line as i32).await.map_err(err)?;
    found.first().copied().ok_or_else(|| format!("no code at {PROGRAM}.java:{line}"))
}

/// The index from which timing starts: the first tenth warms up.
fn warm_up(n: u32) -> u32 {
    n / 10
}

/// The rates phases of one `VThreads events` run: breakpoint hits/s, then steps/s, in its virtual
/// thread; then lets the program end.
async fn rates_debugger(address: &str, lines: Lines, o: &Options) -> (Outcome, Outcome) {
    let vm = match jdi::attach(address, Some(T)).await {
        Ok(vm) => vm,
        Err(e) => return (Err(e.to_string()), Err("not reached".into())),
    };
    let Some(mut events) = vm.event_queue() else { return (Err("no event queue".into()), Err("not reached".into())) };
    let hits = hit_phase(&vm, &mut events, lines, o.hits).await;
    let (hits, steps) = match hits {
        Ok((rate, set, thread, class)) => {
            (Ok(rate), step_phase(&vm, &mut events, lines.step_start, o.steps, set, thread, &class).await)
        }
        Err(e) => (Err(e), Err("not reached: the breakpoint phase failed".to_string())),
    };
    // Whatever happened, let the program run to its end.
    let _ = vm.clear_all_breakpoints().await;
    let _ = vm.resume().await;
    let _ = events.drain(T).await;
    (hits, steps)
}

/// The crowd phase's debugger: a `ThreadStart` request (policy none) through the crowd, then
/// breakpoint hits in the virtual thread (each resumed); returns hits/s. Fails unless every one of
/// the crowd's starts was reported before the first hit.
async fn crowd_debugger(address: &str, hot_line: u32, crowd: u32, hits: u32) -> Outcome {
    let vm = jdi::attach(address, Some(T)).await.map_err(err)?;
    let mut events = vm.event_queue().ok_or("no event queue")?;
    let measured = async {
        let (set, class) = to_class_prepare(&vm, &mut events).await?;
        let hot = first_location(&class, hot_line).await?;
        let starts =
            vm.enable_request(&EventRequest::thread_start().suspend(SuspendPolicy::None)).await.map_err(err)?;
        let bp = vm.enable_request(&EventRequest::breakpoint(hot)).await.map_err(err)?;
        set.resume().await.map_err(err)?;
        let (mut start, warm) = (Instant::now(), warm_up(hits));
        let (mut started, mut hit) = (0u64, 0u32);
        while hit < hits {
            let set = events.next_within(T).await.map_err(|e| format!("hit {hit}: no event: {e}"))?;
            started += set.events.iter().filter(|e| e.request() == Some(starts)).count() as u64;
            if set.events.iter().any(|e| e.request() == Some(bp)) {
                if hit == 0 && started < u64::from(crowd) {
                    return Err(format!("{started} thread starts reported before the first hit, of {crowd}"));
                }
                if hit == warm {
                    start = Instant::now();
                }
                hit += 1;
            }
            set.resume().await.map_err(err)?;
        }
        Ok(f64::from(hits - 1 - warm) / start.elapsed().as_secs_f64())
    }
    .await;
    // Whatever happened, let the program run to its end.
    let _ = vm.clear_all_breakpoints().await;
    let _ = vm.resume().await;
    let _ = events.drain(T).await;
    measured
}

/// Breakpoint hits in the virtual thread, each resumed but the last; returns the rate, the last
/// hit's set (its thread suspended), that thread and the program's class.
async fn hit_phase(
    vm: &VirtualMachine,
    events: &mut EventQueue,
    lines: Lines,
    hits: u32,
) -> Result<(f64, EventSet, jdi::ThreadReference, jdi::ReferenceType), String> {
    let (set, class) = to_class_prepare(vm, events).await?;
    let hot = first_location(&class, lines.hot).await?;
    let bp = vm.enable_request(&EventRequest::breakpoint(hot)).await.map_err(err)?;
    set.resume().await.map_err(err)?;
    let (mut start, warm) = (Instant::now(), warm_up(hits));
    let mut last: Option<(EventSet, jdi::ThreadReference)> = None;
    for i in 0..hits {
        let hit = events.next_within(T).await.map_err(|e| format!("hit {i}: no breakpoint event: {e}"))?;
        if !hit.events.iter().any(|e| e.request() == Some(bp)) {
            return Err(format!("hit {i}: expected the breakpoint, got {hit:?}"));
        }
        let thread = hit.thread().ok_or("a breakpoint without a thread")?;
        match &last {
            None => {
                if !thread.is_virtual().await.map_err(err)? {
                    return Err("the breakpoint's thread is not virtual".into());
                }
            }
            Some((_, first)) if first.id() != thread.id() => return Err(format!("hit {i} is in another thread")),
            Some(_) => {}
        }
        if i == warm {
            start = Instant::now();
        }
        if i + 1 < hits {
            hit.resume().await.map_err(err)?;
        }
        last = Some((hit, thread));
    }
    let rate = f64::from(hits - 1 - warm) / start.elapsed().as_secs_f64();
    vm.disable_request(bp).await.map_err(err)?;
    let (set, thread) = last.expect("hits >= 2");
    Ok((rate, set, thread, class))
}

/// From the suspended set of the last hit: runs the thread to stepLoop's first line, then takes
/// one-shot line steps over; returns steps/s.
async fn step_phase(
    vm: &VirtualMachine,
    events: &mut EventQueue,
    step_start: u32,
    steps: u32,
    set: EventSet,
    thread: jdi::ThreadReference,
    class: &jdi::ReferenceType,
) -> Outcome {
    let start_line = first_location(class, step_start).await?;
    let bp = vm.enable_request(&EventRequest::breakpoint(start_line)).await.map_err(err)?;
    set.resume().await.map_err(err)?;
    let mut set = events
        .wait_for(T, |e| e.request() == Some(bp))
        .await
        .map_err(|e| format!("no breakpoint event at stepLoop's first line, where the steps start: {e}"))?;
    vm.disable_request(bp).await.map_err(err)?;
    let in_thread = |set: &EventSet| set.thread().is_some_and(|t| t.id() == thread.id());
    if !in_thread(&set) {
        return Err("stepLoop runs in another thread".into());
    }
    let (mut start, warm) = (Instant::now(), warm_up(steps));
    for i in 0..steps {
        vm.enable_request(&EventRequest::step(thread.id(), StepSize::Line, StepDepth::Over)).await.map_err(err)?;
        set.resume().await.map_err(err)?;
        set = events.next_within(T).await.map_err(|e| format!("step {i}: no step event: {e}"))?;
        let stepped = set.events.iter().any(|e| matches!(e, Event::SingleStep { .. }));
        if !stepped || !in_thread(&set) {
            return Err(format!("step {i}: expected a step in the virtual thread, got {set:?}"));
        }
        if i == warm {
            start = Instant::now();
        }
    }
    Ok(f64::from(steps - 1 - warm) / start.elapsed().as_secs_f64())
}

/// The median of a metric's successful runs, and how many runs there were of it.
fn summary(results: &Results, which: Which, metric: Metric) -> Option<(f64, usize, usize)> {
    let runs = results.get(&(which, metric))?;
    let ok: Vec<f64> = runs.iter().filter_map(|r| r.as_ref().ok().copied()).collect();
    let n = ok.len();
    (n > 0).then(|| (median(ok), n, runs.len()))
}

/// How a row is judged.
#[derive(Clone, Copy)]
enum Goal {
    /// A time: ours / no agent at most this.
    SlowdownAtMost(f64),
    /// A rate: ours / the JDK's at least this.
    RateAtLeast(f64),
}

/// The results table (Markdown) and, after it, one line per failed run.
fn render(o: &Options, results: &Results) -> String {
    let mut out = String::new();
    let value = |which: Which, metric: Metric| summary(results, which, metric).map(|(v, _, _)| v);
    // Times in seconds with two decimals, rates as whole numbers.
    let number = |metric: Metric, v: f64| match metric {
        Metric::Attached | Metric::Starts => format!("{v:.2}"),
        Metric::Hits | Metric::Steps | Metric::CrowdHits => format_number(v),
    };
    let cell = |which: Which, metric: Metric| match summary(results, which, metric) {
        None if results.contains_key(&(which, metric)) => "failed".to_string(),
        None => "-".to_string(),
        Some((v, n, all)) if n < all => format!("{} ({n} of {all} runs)", number(metric, v)),
        Some((v, _, _)) => number(metric, v),
    };
    let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => Some(a / b),
        _ => None,
    };
    let show_ratio = |r: Option<f64>| r.map_or_else(|| "-".to_string(), |r| format!("{r:.2}x"));
    let threads = grouped(u64::from(o.threads));
    let rows = [
        (
            format!(
                "start and join {threads} virtual threads (s), debugger attached, a breakpoint no thread reaches, \
                 lower is better"
            ),
            Metric::Attached,
            Goal::SlowdownAtMost(1.2),
        ),
        (
            "the same with a ThreadStart request (policy none, every virtual thread's start checked), lower is better"
                .to_string(),
            Metric::Starts,
            Goal::SlowdownAtMost(3.0),
        ),
        (
            format!("breakpoint hits/s in a virtual thread ({} hits, suspend all), higher is better", o.hits),
            Metric::Hits,
            Goal::RateAtLeast(1.0),
        ),
        (
            format!("single steps/s in a virtual thread ({} one-shot line steps over), higher is better", o.steps),
            Metric::Steps,
            Goal::RateAtLeast(1.0),
        ),
        (
            format!(
                "breakpoint hits/s in a virtual thread after {} virtual threads came and went, each start reported \
                 ({} hits, suspend all), higher is better",
                grouped(u64::from(o.crowd)),
                o.hits
            ),
            Metric::CrowdHits,
            Goal::RateAtLeast(1.0),
        ),
    ];
    out.push_str(
        "| measure | no agent | JDK agent | ours | JDK / no agent | ours / no agent | ours / JDK | goal | met |\n",
    );
    out.push_str("|---|---:|---:|---:|---:|---:|---:|---|---|\n");
    for (label, metric, goal) in rows {
        if !results.keys().any(|(_, m)| *m == metric) {
            continue;
        }
        // The spawn rows' baseline is the plain JVM's start-and-join time.
        let none = value(Which::None, Metric::Attached).filter(|_| matches!(goal, Goal::SlowdownAtMost(_)));
        let (jdk, ours) = (value(Which::Jdk, metric), value(Which::Ours, metric));
        let (goal_text, met) = match goal {
            Goal::SlowdownAtMost(g) => (format!("ours / no agent <= {g}x"), ratio(ours, none).map(|r| r <= g)),
            Goal::RateAtLeast(g) => (format!("ours / JDK >= {g}x"), ratio(ours, jdk).map(|r| r >= g)),
        };
        let none_cell = if none.is_some() { cell(Which::None, Metric::Attached) } else { "-".to_string() };
        out.push_str(&format!(
            "| {label} | {none_cell} | {} | {} | {} | {} | {} | {goal_text} | {} |\n",
            cell(Which::Jdk, metric),
            cell(Which::Ours, metric),
            show_ratio(ratio(jdk, none)),
            show_ratio(ratio(ours, none)),
            show_ratio(ratio(ours, jdk)),
            match met {
                Some(true) => "yes",
                Some(false) => "**no**",
                None => "**no** (not measured)",
            }
        ));
    }
    let failures: Vec<String> = results
        .iter()
        .flat_map(|((which, metric), runs)| {
            runs.iter().enumerate().filter_map(move |(run, r)| {
                let e = r.as_ref().err()?;
                let first = e.lines().next().unwrap_or_default();
                Some(format!("- FAILED: {}, {metric:?}, run {}: {first}\n", which.name(), run + 1))
            })
        })
        .collect();
    if !failures.is_empty() {
        out.push('\n');
        failures.iter().for_each(|f| out.push_str(f));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts() -> Options {
        parse(&["--threads".into(), "1000".into(), "--hits".into(), "100".into()]).unwrap()
    }

    #[test]
    fn options_default_the_warm_up_to_a_tenth() {
        let o = opts();
        assert_eq!((o.threads, o.warm, o.hits, o.steps, o.runs), (1000, 100, 100, 5000, 3));
        assert!(parse(&["--threads".into(), "0".into()]).is_err());
        assert!(parse(&["--only".into(), "both".into()]).is_err());
    }

    #[test]
    fn the_spawn_line_is_found_and_parsed() {
        let out = "noise\nVThreads spawn threads=1000000 warm=100000 ns=580000000\nVThreads done 42\n";
        assert_eq!(parse_spawn_line(out), Ok(SpawnLine { threads: 1_000_000, warm: 100_000, seconds: 0.58 }));
        assert!(parse_spawn_line("VThreads done 42\n").is_err());
        assert!(parse_spawn_line("VThreads spawn threads=10 warm=1\n").unwrap_err().contains("no ns="));
        assert!(parse_spawn_line("VThreads spawn threads=ten warm=1 ns=5\n").is_err());
    }

    #[test]
    fn a_dropped_virtual_thread_start_fails_the_run() {
        let spawned = SpawnLine { threads: 1000, warm: 100, seconds: 1.0 };
        assert_eq!(check_starts(StartCounts { all: 1105, platform: 5 }, &spawned), Ok(()));
        let e = check_starts(StartCounts { all: 1104, platform: 5 }, &spawned).unwrap_err();
        assert!(e.starts_with("1,099 of 1,100 virtual thread starts reported"), "{e}");
        // An agent reporting no virtual thread starts: only the platform threads' in both requests.
        let e = check_starts(StartCounts { all: 5, platform: 5 }, &spawned).unwrap_err();
        assert!(e.starts_with("0 of 1,100 virtual thread starts reported"), "{e}");
        assert!(check_starts(StartCounts { all: 4, platform: 5 }, &spawned).is_err());
    }

    #[test]
    fn marker_lines_are_whole_words() {
        let text = "a\nb // @vt-hot\nc // @vt-hot-2\n";
        assert_eq!(marker_line(text, "@vt-hot"), Ok(2));
        assert!(marker_line(text, "@never").is_err());
    }

    #[test]
    fn the_table_gives_medians_ratios_goals_and_failures() {
        let mut r = Results::new();
        r.insert((Which::None, Metric::Attached), vec![Ok(0.5), Ok(0.6), Ok(0.7)]);
        r.insert((Which::Jdk, Metric::Attached), vec![Ok(7.0), Ok(7.2), Ok(7.4)]);
        r.insert((Which::Ours, Metric::Attached), vec![Ok(0.66), Ok(0.9), Ok(0.6)]);
        r.insert((Which::Jdk, Metric::Starts), vec![Ok(36.0), Ok(37.0), Err("x".into())]);
        let dropped = "0 of 1,100 virtual thread starts reported (5 thread start events, 5 of them platform threads')";
        r.insert((Which::Ours, Metric::Starts), vec![Err(dropped.into()); 3]);
        r.insert((Which::Jdk, Metric::Hits), vec![Ok(4000.0); 3]);
        r.insert((Which::Ours, Metric::Hits), vec![Ok(6000.0); 3]);
        let table = render(&opts(), &r);
        let lines: Vec<&str> = table.lines().collect();
        assert!(
            lines[2].ends_with("| 0.60 | 7.20 | 0.66 | 12.00x | 1.10x | 0.09x | ours / no agent <= 1.2x | yes |"),
            "{table}"
        );
        assert!(
            lines[3].ends_with(
                "| 0.60 | 36.50 (2 of 3 runs) | failed | 60.83x | - | - | ours / no agent <= 3x | **no** (not measured) |"
            ),
            "{table}"
        );
        assert!(lines[4].ends_with("| - | 4,000 | 6,000 | - | - | 1.50x | ours / JDK >= 1x | yes |"), "{table}");
        // No steps were measured: no row for them.
        assert_eq!(lines.len(), 5 + 1 + 4, "{table}");
        assert!(lines[6].starts_with("- FAILED: JDK agent, Starts, run 3: x"), "{table}");
        assert!(lines[7].starts_with(&format!("- FAILED: ours, Starts, run 1: {dropped}")), "{table}");
        // The crowd's row, after the rates'.
        r.insert((Which::Jdk, Metric::CrowdHits), vec![Ok(600.0), Ok(700.0), Ok(800.0)]);
        r.insert((Which::Ours, Metric::CrowdHits), vec![Ok(1400.0); 3]);
        let table = render(&opts(), &r);
        let crowd = table.lines().nth(5).unwrap();
        assert!(
            crowd.starts_with("| breakpoint hits/s in a virtual thread after 300,000 virtual threads came and went"),
            "{table}"
        );
        assert!(crowd.ends_with("| - | 700 | 1,400 | - | - | 2.00x | ours / JDK >= 1x | yes |"), "{table}");
    }
}
