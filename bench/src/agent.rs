//! The agent benchmark: the JDK's JDWP agent against ours, side by side in one run, with the same
//! client (the JDK's own JDI) and the same debuggees (see BENCHMARKS.md).
//!
//! ```text
//! cargo run --release -p bench -- agent [--runs 3] [--agent-lib PATH] [--before PATH] [--only jdk|ours] ...
//! ```
//!
//! `--before PATH` adds a third agent to the rotation, another build of ours (say main before a
//! refactor), so that before and after are measured in the same run under the same load; a
//! second table then compares the two.
//!
//! For each run and each agent (the order rotates), these jobs, each a fresh debuggee under that
//! agent and a fresh client process:
//!
//! - `tests/fixtures/Bench.java` driven by `bench/java/JdiBench.java` (the client benchmark's JDI
//!   side, unchanged): breakpoint hits, single steps, round trips, deep frames; then again with
//!   `--idle-threads` more threads asleep (a server-sized VM), for its breakpoint hits and single
//!   steps, each of which stops every thread; then again with `--listed-classes` classes of
//!   java.base loaded, which the client lists at the first hit (`allClasses`), so that every
//!   suspend-all event finds thousands of class IDs in the agent's table;
//! - `tests/fixtures/AgentBench.java` driven by `bench/java/JdiAgentBench.java phases`: filtered
//!   method entries (suspend all, then none), step throughput, step over a CPU-bound call, many
//!   threads at one breakpoint (suspend all, then event thread);
//! - unless `--no-jdi-rs`, Bench.java again with jdi-rs as the client (`--side jdi-rs current`):
//!   supplementary rows that show the agents behind a client that costs less per event;
//! - `tests/fixtures/AgentWork.java`, a CPU-bound workload that times itself (wall-clock and the
//!   main thread's CPU time): with no agent at all, with the agent and a client attached that asks
//!   for nothing (`JdiAgentBench work ... idle`; `--work-procs` processes of each, taking turns),
//!   and with one method entry request filtered to a class the workload does not call (`...
//!   entry`), at a smaller size (the JDK's agent is hundreds of times slower there).
//!
//! Every debuggee must end by itself with the same "... done <checksum>" line under both agents
//! (and without one); the clients check what they see (event counts, where a step lands).
//! Our agent is `target/release/libjdwp_agent.so`, built first with `cargo build --release -p
//! jdwp-agent` unless `--agent-lib` names a library.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use test_rig::{Agent, DEFAULT_JDK_AGENT_OPTIONS, Debuggee};

use crate::{Config, Lines, format_number, median, run_side, side_args};

/// The method entry filter of the workload runs: a class the workload itself never calls.
const WORK_TARGET: &str = "AgentWork$Target";

/// How long a debuggee may take to end once its client is done.
const EXIT_TIMEOUT: Duration = Duration::from_secs(60);

/// What to measure: the same for both agents.
#[derive(Debug, Clone)]
struct AgentConfig {
    /// The phases of Bench.java / JdiBench.java.
    client: Config,
    entry_calls: u32,
    filler: u32,
    step_events: u32,
    spin: u32,
    over_reps: u32,
    threads: u32,
    thread_hits: u32,
    /// Sleeping threads for the Bench.java phases' server-sized variant.
    idle_threads: u32,
    /// Its breakpoint hits and single steps.
    idle_hits: u32,
    idle_steps: u32,
    /// Classes of java.base the Bench.java variant loads first (the client lists them all at the
    /// first hit).
    listed_classes: u32,
    /// Its breakpoint hits and single steps.
    listed_hits: u32,
    listed_steps: u32,
    work_size: u32,
    work_reps: u32,
    /// Workload processes per configuration and run for the idle overhead (its per-process spread
    /// is larger than the 1% to be seen).
    work_procs: u32,
    entry_size: u32,
    entry_reps: u32,
    entry_budget_ms: u32,
    target_calls: u32,
}

/// The agents, in table order; `none` is the plain JVM of the workload baseline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Which {
    Jdk,
    Ours,
    /// Another build of our agent (`--before`).
    Before,
    None,
}

impl Which {
    fn name(self) -> &'static str {
        match self {
            Which::Jdk => "jdk",
            Which::Ours => "ours",
            Which::Before => "before",
            Which::None => "none",
        }
    }
}

struct Options {
    config: AgentConfig,
    runs: u32,
    agents: Vec<Which>,
    agent_lib: Option<PathBuf>,
    /// Another build of our agent, measured in the same rotation.
    before: Option<PathBuf>,
    /// Also run Bench.java's phases with jdi-rs as the client (supplementary rows).
    jdi_rs: bool,
}

const USAGE: &str = "usage: bench agent [--runs N] [--agent-lib PATH] [--before PATH] [--only jdk|ours] [--no-jdi-rs] \
     [--hits N] [--steps N] [--round-trips N] [--concurrency N] [--depth N] [--reps N] [--entry-calls N] \
     [--filler N] [--step-events N] [--spin N] [--over-reps N] [--threads N] [--thread-hits N] [--idle-threads N] [--idle-hits N] [--idle-steps N] \
     [--listed-classes N] [--listed-hits N] [--listed-steps N] [--work-size N] \
     [--work-reps N] [--work-procs N] [--entry-size N] [--entry-reps N] [--entry-budget-ms N] [--target-calls N]";

fn parse(argv: &[String]) -> Result<Options, String> {
    let mut c = AgentConfig {
        client: Config { hits: 5000, steps: 5000, round_trips: 20000, concurrency: 16, depth: 2000, reps: 10 },
        entry_calls: 2000,
        filler: 1000,
        step_events: 20000,
        spin: 20_000_000,
        over_reps: 3,
        threads: 100,
        thread_hits: 50,
        idle_threads: 500,
        idle_hits: 2000,
        idle_steps: 2000,
        listed_classes: 5000,
        listed_hits: 2000,
        listed_steps: 2000,
        work_size: 5_000_000,
        work_reps: 16,
        work_procs: 3,
        entry_size: 200_000,
        entry_reps: 60,
        entry_budget_ms: 8000,
        target_calls: 100,
    };
    let (mut runs, mut agents, mut agent_lib, mut jdi_rs) = (3, vec![Which::Jdk, Which::Ours], None, true);
    let mut before = None;
    let mut it = argv.iter();
    while let Some(flag) = it.next() {
        let mut value = || it.next().cloned().ok_or_else(|| format!("{flag} needs a value"));
        let mut number = || -> Result<u32, String> {
            let v = value()?;
            v.parse::<u32>().ok().filter(|&n| n > 0).ok_or_else(|| format!("{flag}: not a positive number: {v}"))
        };
        match flag.as_str() {
            "--runs" => runs = number()?,
            "--hits" => c.client.hits = number()?,
            "--steps" => c.client.steps = number()?,
            "--round-trips" => c.client.round_trips = number()?,
            "--concurrency" => c.client.concurrency = number()?,
            "--depth" => c.client.depth = number()?,
            "--reps" => c.client.reps = number()?,
            "--entry-calls" => c.entry_calls = number()?,
            "--filler" => c.filler = number()?,
            "--step-events" => c.step_events = number()?,
            "--spin" => c.spin = number()?,
            "--over-reps" => c.over_reps = number()?,
            "--threads" => c.threads = number()?,
            "--thread-hits" => c.thread_hits = number()?,
            "--idle-threads" => c.idle_threads = number()?,
            "--idle-hits" => c.idle_hits = number()?,
            "--idle-steps" => c.idle_steps = number()?,
            "--listed-classes" => c.listed_classes = number()?,
            "--listed-hits" => c.listed_hits = number()?,
            "--listed-steps" => c.listed_steps = number()?,
            "--work-size" => c.work_size = number()?,
            "--work-reps" => c.work_reps = number()?,
            "--work-procs" => c.work_procs = number()?,
            "--entry-size" => c.entry_size = number()?,
            "--entry-reps" => c.entry_reps = number()?,
            "--entry-budget-ms" => c.entry_budget_ms = number()?,
            "--target-calls" => c.target_calls = number()?,
            "--agent-lib" => agent_lib = Some(PathBuf::from(value()?)),
            "--before" => before = Some(PathBuf::from(value()?)),
            "--no-jdi-rs" => jdi_rs = false,
            "--only" => {
                agents = match value()?.as_str() {
                    "jdk" => vec![Which::Jdk],
                    "ours" => vec![Which::Ours],
                    other => return Err(format!("--only wants jdk or ours, not {other}")),
                }
            }
            "--help" => return Err(USAGE.into()),
            other => return Err(format!("unknown option {other} (try --help)")),
        }
    }
    let at_least_2 = [
        c.client.hits,
        c.client.steps,
        c.entry_calls,
        c.step_events,
        c.threads * c.thread_hits,
        c.idle_hits,
        c.idle_steps,
        c.listed_hits,
        c.listed_steps,
    ];
    if at_least_2.iter().any(|&n| n < 2) || c.work_reps < 2 || c.entry_reps < 2 {
        return Err("every count of events and reps must be at least 2".into());
    }
    if let Some(path) = &before {
        if !path.is_file() {
            return Err(format!("--before: no agent library at {}", path.display()));
        }
        agents.push(Which::Before);
    }
    Ok(Options { config: c, runs, agents, agent_lib, before, jdi_rs })
}

/// The results of a variant's run under `keys`, named `<prefix>_<key>` (those it has).
fn prefixed<'a>(prefix: &'a str, keys: &'a [&str], result: &'a RunResult) -> impl Iterator<Item = (String, f64)> + 'a {
    keys.iter().filter_map(move |k| Some((format!("{prefix}_{k}"), *result.get(*k)?)))
}

/// The Bench.java phases for a variant that measures only breakpoint hits and single steps: the
/// other phases run short.
fn hits_and_steps_only(hits: u32, steps: u32) -> Config {
    Config { hits, steps, round_trips: 100, concurrency: 1, depth: 10, reps: 2 }
}

/// Lines of AgentBench.java that the phases break on.
#[derive(Debug, Clone, Copy)]
struct AgentLines {
    entry_start: u32,
    entry_end: u32,
    steps_start: u32,
    over: u32,
    over_end: u32,
    threads_start: u32,
    shared: u32,
}

/// One run's results for one agent (merged over its jobs).
type RunResult = BTreeMap<String, f64>;

/// Every run's results, by agent.
type Results = BTreeMap<Which, Vec<RunResult>>;

pub fn main(argv: &[String]) -> Result<(), String> {
    let opts = parse(argv)?;
    test_rig::fixtures().map_err(|e| e.to_string())?;
    let line = |file: &str, marker: &str| test_rig::fixture_line(file, marker).map_err(|e| e.to_string());
    let lines = Lines {
        hot: line("Bench.java", "@hot")?,
        step_start: line("Bench.java", "@step-start")?,
        idle: line("Bench.java", "@idle")?,
        deep_bottom: line("Bench.java", "@deep-bottom")?,
    };
    let agent_lines = AgentLines {
        entry_start: line("AgentBench.java", "@entry-start")?,
        entry_end: line("AgentBench.java", "@entry-end")?,
        steps_start: line("AgentBench.java", "@steps-start")?,
        over: line("AgentBench.java", "@over")?,
        over_end: line("AgentBench.java", "@over-end")?,
        threads_start: line("AgentBench.java", "@threads-start")?,
        shared: line("AgentBench.java", "@shared")?,
    };
    let lib = match &opts.agent_lib {
        Some(lib) => lib.clone(),
        None => build_agent()?,
    };
    if opts.agents.contains(&Which::Ours) && !lib.is_file() {
        return Err(format!("no agent library at {}", lib.display()));
    }
    let classes = crate::compile_jdi_bench()?;
    let bench = Bench { opts: &opts, lib, classes, lines, agent_lines, done: BTreeMap::new() };
    eprintln!(
        "bench agent: {:?}, {} run(s) of {:?}, our agent {}; load average {}",
        opts.config,
        opts.runs,
        opts.agents,
        bench.lib.display(),
        load_average()
    );
    let (results, mismatch) = bench.run_all()?;
    eprintln!("bench agent: load average {}", load_average());
    print_table(&opts, &results);
    mismatch.map_or(Ok(()), Err)
}

/// Builds our agent in the release profile and returns its path.
pub(crate) fn build_agent() -> Result<PathBuf, String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().ok_or("no workspace directory")?;
    eprintln!("bench agent: cargo build --release -p jdwp-agent");
    let status = Command::new(cargo)
        .args(["build", "--release", "-p", "jdwp-agent"])
        .current_dir(workspace)
        .status()
        .map_err(|e| format!("running cargo: {e}"))?;
    if !status.success() {
        return Err(format!("cargo build --release -p jdwp-agent failed ({status})"));
    }
    let target = test_rig::fixtures_cache_root().parent().map(Path::to_path_buf).ok_or("no target directory")?;
    Ok(target.join("release").join("libjdwp_agent.so"))
}

/// `/proc/loadavg`'s first three fields (how busy the machine was).
pub(crate) fn load_average() -> String {
    let text = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    text.split_whitespace().take(3).collect::<Vec<_>>().join(" ")
}

struct Bench<'a> {
    opts: &'a Options,
    lib: PathBuf,
    classes: PathBuf,
    lines: Lines,
    agent_lines: AgentLines,
    /// Each program's "... done <checksum>" lines, with the agent of each: must all agree.
    done: BTreeMap<String, Vec<(Which, String)>>,
}

impl Bench<'_> {
    /// All runs; with an error message if a program ended differently under the two agents.
    fn run_all(mut self) -> Result<(Results, Option<String>), String> {
        let mut results = Results::new();
        for run in 0..self.opts.runs {
            let mut per_agent: BTreeMap<Which, RunResult> = BTreeMap::new();
            let mut order = self.opts.agents.clone();
            let first = run as usize % order.len();
            order.rotate_left(first);
            for &agent in &order {
                let r = per_agent.entry(agent).or_default();
                r.extend(self.client_phases(agent)?);
                let idle = self.idle_threads_phases(agent)?;
                r.extend(prefixed("idle", &["bp_per_s", "steps_per_s"], &idle));
                let listed = self.listed_classes_phases(agent)?;
                r.extend(prefixed("listed", &["bp_per_s", "steps_per_s", "classes"], &listed));
                r.extend(self.agent_phases(agent)?);
                if self.opts.jdi_rs {
                    let rs = self.jdi_rs_phases(agent)?;
                    r.extend(rs.into_iter().map(|(k, v)| (format!("rs_{k}"), v)));
                }
            }
            // The workload: the plain JVM too, in the rotation.
            let mut order = self.opts.agents.clone();
            order.push(Which::None);
            let first = run as usize % order.len();
            order.rotate_left(first);
            // Idle: several processes each (their median), taking turns; then the entry request.
            let idle_procs = self.opts.config.work_procs as usize;
            for (entry, key, procs) in [(false, "work_idle", idle_procs), (true, "work_entry", 1)] {
                let mut times: BTreeMap<Which, (Vec<f64>, Vec<f64>)> = BTreeMap::new();
                for _ in 0..procs {
                    for &agent in &order {
                        let (wall, cpu) = self.workload(agent, entry)?;
                        let t = times.entry(agent).or_default();
                        t.0.push(wall);
                        t.1.push(cpu);
                    }
                }
                for (agent, (wall, cpu)) in times {
                    let r = per_agent.entry(agent).or_default();
                    r.insert(format!("{key}_ms"), median(wall));
                    r.insert(format!("{key}_cpu_ms"), median(cpu));
                }
            }
            for (agent, r) in per_agent {
                eprintln!("bench agent: run {} {}: {r:?}", run + 1, agent.name());
                results.entry(agent).or_default().push(r);
            }
        }
        let mismatch = self.done.iter().find_map(|(program, ends)| {
            let differ = ends.iter().any(|(_, line)| *line != ends[0].1);
            differ.then(|| format!("{program} ended differently: {ends:?}"))
        });
        Ok((results, mismatch))
    }

    fn agent(&self, which: Which) -> Agent {
        match which {
            Which::Jdk => Agent::jdk_default(),
            Which::Ours => Agent::path(&self.lib, DEFAULT_JDK_AGENT_OPTIONS),
            Which::Before => match &self.opts.before {
                Some(path) => Agent::path(path, DEFAULT_JDK_AGENT_OPTIONS),
                None => Agent::None,
            },
            Which::None => Agent::None,
        }
    }

    fn spawn(&self, which: Which, main: &str, args: &[u32]) -> Result<Debuggee, String> {
        Debuggee::builder(main)
            .args(args.iter().map(u32::to_string))
            .agent(self.agent(which))
            .spawn()
            .map_err(|e| format!("starting {main} under {}: {e}", which.name()))
    }

    /// The JDK's JDI running `class` with `args`.
    fn client(&self, class: &str, args: impl IntoIterator<Item = String>) -> Result<Command, String> {
        let mut cmd = Command::new(test_rig::java_tool("java").map_err(|e| e.to_string())?);
        cmd.args(["--add-modules", "jdk.jdi", "-cp"]).arg(&self.classes).arg(class).args(args);
        Ok(cmd)
    }

    /// Waits for the debuggee to end by itself, checks its "`program` done" line (kept under `key`,
    /// to compare across agents) and returns its stdout.
    fn finish(&mut self, jvm: Debuggee, which: Which, program: &str, key: &str) -> Result<String, String> {
        let status = jvm.wait_for_exit(EXIT_TIMEOUT);
        let stdout = jvm.stdout_text();
        let done = stdout.lines().find(|l| l.starts_with(&format!("{program} done")));
        match (status, done) {
            (Some(s), Some(done)) if s.success() => {
                self.done.entry(key.to_string()).or_default().push((which, done.to_string()));
                Ok(stdout)
            }
            _ => Err(format!("{program} under {} did not finish: {status:?}\n{}", which.name(), jvm.output_text())),
        }
    }

    /// Bench.java driven by the client benchmark's JDI side.
    fn client_phases(&mut self, which: Which) -> Result<RunResult, String> {
        let c = self.opts.config.client.clone();
        self.jdi_bench(which, &c, &[], false, "Bench")
    }

    /// Bench.java again with its idle threads (a server-sized VM), driven by JDI: breakpoint hits and
    /// single steps, each of which stops every thread (the other phases run short).
    fn idle_threads_phases(&mut self, which: Which) -> Result<RunResult, String> {
        let c = hits_and_steps_only(self.opts.config.idle_hits, self.opts.config.idle_steps);
        self.jdi_bench(which, &c, &[self.opts.config.idle_threads], false, "Bench idle threads")
    }

    /// Bench.java with `--listed-classes` classes of java.base loaded, driven by JDI, which lists
    /// every loaded class at the first hit (as jdb's `classes` does): breakpoint hits and single
    /// steps while the agent holds an ID for each class (the other phases run short).
    fn listed_classes_phases(&mut self, which: Which) -> Result<RunResult, String> {
        let c = hits_and_steps_only(self.opts.config.listed_hits, self.opts.config.listed_steps);
        self.jdi_bench(which, &c, &[0, self.opts.config.listed_classes], true, "Bench listed classes")
    }

    /// Bench.java (`more` program arguments after its first three: sleeping threads, classes to
    /// load) driven by `JdiBench` with `c`, which lists the loaded classes at the first hit if
    /// `list_classes`; the program's end is kept under `key`.
    fn jdi_bench(
        &mut self,
        which: Which,
        c: &Config,
        more: &[u32],
        list_classes: bool,
        key: &str,
    ) -> Result<RunResult, String> {
        let program: Vec<u32> = [c.hits, c.depth, c.reps].iter().chain(more).copied().collect();
        let jvm = self.spawn(which, "Bench", &program)?;
        let mut args = vec![jvm.address().to_string()];
        args.extend(side_args(c, self.lines));
        if list_classes {
            args.push("list".into());
        }
        let result = run_side(&format!("JdiBench on {key}/{}", which.name()), self.client("JdiBench", args)?);
        let result = result.map_err(|e| format!("{e}\n{}", jvm.output_text()))?;
        self.finish(jvm, which, "Bench", key)?;
        Ok(result)
    }

    /// Bench.java driven by jdi-rs (this binary's `--side jdi-rs`, current-thread runtime).
    fn jdi_rs_phases(&mut self, which: Which) -> Result<RunResult, String> {
        let c = &self.opts.config.client;
        let jvm = self.spawn(which, "Bench", &[c.hits, c.depth, c.reps])?;
        let mut cmd = Command::new(std::env::current_exe().map_err(|e| e.to_string())?);
        cmd.args(["--side", "jdi-rs", "current"]).arg(jvm.address().to_string()).args(side_args(c, self.lines));
        let result = run_side(&format!("jdi-rs/{}", which.name()), cmd);
        let result = result.map_err(|e| format!("{e}\n{}", jvm.output_text()))?;
        self.finish(jvm, which, "Bench", "Bench")?;
        Ok(result)
    }

    /// AgentBench.java driven by `JdiAgentBench phases`.
    fn agent_phases(&mut self, which: Which) -> Result<RunResult, String> {
        let c = &self.opts.config;
        let l = self.agent_lines;
        let jvm =
            self.spawn(which, "AgentBench", &[c.entry_calls, c.filler, c.spin, c.over_reps, c.threads, c.thread_hits])?;
        let mut args = vec!["phases".to_string(), jvm.address().to_string()];
        args.extend(
            [
                c.entry_calls,
                c.step_events,
                c.over_reps,
                c.threads,
                c.thread_hits,
                l.entry_start,
                l.entry_end,
                l.steps_start,
                l.over,
                l.over_end,
                l.threads_start,
                l.shared,
            ]
            .iter()
            .map(u32::to_string),
        );
        let result = run_side(&format!("JdiAgentBench phases/{}", which.name()), self.client("JdiAgentBench", args)?);
        let result = result.map_err(|e| format!("{e}\n{}", jvm.output_text()))?;
        self.finish(jvm, which, "AgentBench", "AgentBench")?;
        Ok(result)
    }

    /// AgentWork.java: the median time of one rep (ms), wall-clock and the main thread's CPU time,
    /// over the second half of the reps. With an agent, a client is attached that asks for nothing
    /// or (with `entry`) for the method entries of [`WORK_TARGET`].
    fn workload(&mut self, which: Which, entry: bool) -> Result<(f64, f64), String> {
        let c = &self.opts.config;
        let args = if entry {
            [c.entry_reps, c.entry_size, c.target_calls, c.entry_budget_ms]
        } else {
            [c.work_reps, c.work_size, c.target_calls, 0]
        };
        let jvm = self.spawn(which, "AgentWork", &args)?;
        if which != Which::None {
            let mode = if entry { "entry" } else { "idle" };
            let client_args = ["work", &jvm.address().to_string(), mode, WORK_TARGET].map(String::from);
            let side = format!("JdiAgentBench work {mode}/{}", which.name());
            let result = run_side(&side, self.client("JdiAgentBench", client_args)?);
            let result = result.map_err(|e| format!("{e}\n{}", jvm.output_text()))?;
            let expected = if entry { c.target_calls } else { 0 };
            if result.get("entries") != Some(&f64::from(expected)) {
                return Err(format!("{side}: expected {expected} method entries, got {result:?}"));
            }
        }
        // The checksum depends on the size: the two sizes are kept apart.
        let key = if entry { "AgentWork (entry size)" } else { "AgentWork" };
        let stdout = self.finish(jvm, which, "AgentWork", key)?;
        // "AgentWork rep R ns N cpu C"
        let reps: Vec<(f64, f64)> = stdout
            .lines()
            .filter_map(|l| l.strip_prefix("AgentWork rep "))
            .filter_map(|l| {
                let words: Vec<&str> = l.split_whitespace().collect();
                let ns = |i: usize| words.get(i)?.parse::<f64>().ok().map(|ns| ns / 1e6);
                Some((ns(2)?, ns(4)?))
            })
            .collect();
        if reps.is_empty() {
            return Err(format!("AgentWork under {} printed no reps:\n{stdout}", which.name()));
        }
        // The first half warms up the JIT.
        let measured = &reps[reps.len() / 2..];
        Ok((median(measured.iter().map(|r| r.0).collect()), median(measured.iter().map(|r| r.1).collect())))
    }
}

/// How a row's two values compare and what the issues ask of them.
#[derive(Clone, Copy)]
enum Goal {
    /// A rate: ours / JDK at least this.
    RateAtLeast(f64),
    /// A time: ours / JDK at most this.
    TimeAtMost(f64),
}

fn print_table(opts: &Options, results: &Results) {
    let get = |which: Which, key: &str| {
        results
            .get(&which)
            .map(|runs| median(runs.iter().filter_map(|r| r.get(key).copied()).collect()))
            .filter(|v| !v.is_nan())
    };
    let c = &opts.config;
    let show = |v: Option<f64>| v.map_or_else(|| "-".to_string(), format_number);
    let spin = get(Which::Jdk, "spin_ms").or(get(Which::Ours, "spin_ms"));
    let rows: Vec<(String, &str, Goal)> = vec![
        (format!("breakpoint hits/s, with resume ({} hits)", c.client.hits), "bp_per_s", Goal::RateAtLeast(1.5)),
        (
            format!("single steps/s ({} line steps over, a one-shot request each)", c.client.steps),
            "steps_per_s",
            Goal::RateAtLeast(1.5),
        ),
        (
            format!("step throughput, steps/s (one line-over request left enabled, {} steps)", c.step_events),
            "step_tp_per_s",
            Goal::RateAtLeast(1.5),
        ),
        (
            format!(
                "step over a CPU-bound call (ms, median of {}; the call alone takes {} ms)",
                c.over_reps,
                show(spin)
            ),
            "over_ms",
            Goal::TimeAtMost(1.0),
        ),
        (
            format!("command round trips/s, one at a time ({} ThreadReference.Name)", c.client.round_trips),
            "rt_per_s",
            Goal::RateAtLeast(1.0),
        ),
        (
            format!("command round trips/s, {} callers at once", c.client.concurrency),
            "rt_conc_per_s",
            Goal::RateAtLeast(1.0),
        ),
        (
            format!("all frames at depth {}, with locations (ms, median of {})", c.client.depth, c.client.reps),
            "frames_ms",
            Goal::TimeAtMost(1.0),
        ),
        ("the same, first time (ms)".to_string(), "frames_first_ms", Goal::TimeAtMost(1.0)),
        (
            format!(
                "filtered method entry events/s (ClassMatch on one class, {} calls to other classes between)",
                c.filler
            ),
            "entry_per_s",
            Goal::RateAtLeast(5.0),
        ),
        ("the same, suspend policy none".to_string(), "entry_none_per_s", Goal::RateAtLeast(5.0)),
        (
            format!("breakpoint hits/s, {} threads at one breakpoint, suspend all", c.threads),
            "mt_all_per_s",
            Goal::RateAtLeast(1.5),
        ),
        (
            format!("breakpoint hits/s, {} threads at one breakpoint, suspend event thread", c.threads),
            "mt_thread_per_s",
            Goal::RateAtLeast(1.5),
        ),
        (
            format!(
                "breakpoint hits/s with {} more threads asleep (a server-sized VM; {} hits, suspend all)",
                c.idle_threads, c.idle_hits
            ),
            "idle_bp_per_s",
            Goal::RateAtLeast(1.5),
        ),
        (
            format!(
                "single steps/s with {} more threads asleep ({} one-shot line steps over)",
                c.idle_threads, c.idle_steps
            ),
            "idle_steps_per_s",
            Goal::RateAtLeast(1.5),
        ),
        (
            format!(
                "breakpoint hits/s after the debugger listed the loaded classes ({} of java.base loaded first, \
                 {} hits, suspend all)",
                c.listed_classes, c.listed_hits
            ),
            "listed_bp_per_s",
            Goal::RateAtLeast(1.5),
        ),
        (
            format!(
                "single steps/s after the debugger listed the loaded classes ({} one-shot line steps over)",
                c.listed_steps
            ),
            "listed_steps_per_s",
            Goal::RateAtLeast(1.5),
        ),
    ];
    let print_row = |label: &str, key: &str, goal: Goal| {
        let (jdk, ours) = (get(Which::Jdk, key), get(Which::Ours, key));
        let ratio = match (ours, jdk) {
            (Some(a), Some(b)) if b > 0.0 => Some(a / b),
            _ => None,
        };
        let (better, goal_text, met) = match goal {
            Goal::RateAtLeast(g) => ("higher is better", format!("ours/JDK >= {g}x"), ratio.map(|r| r >= g)),
            Goal::TimeAtMost(g) => ("lower is better", format!("ours/JDK <= {g}x"), ratio.map(|r| r <= g)),
        };
        println!(
            "| {label}, {better} | {} | {} | {} | {goal_text} | {} |",
            show(jdk),
            show(ours),
            ratio.map_or_else(|| "-".into(), |r| format!("{r:.2}x")),
            yes_no(met)
        );
    };
    println!();
    println!("The JDK's JDI as the client of both agents:");
    println!();
    println!("| measure | JDK agent | ours | ours / JDK | goal | met |");
    println!("|---|---:|---:|---:|---|---|");
    for (label, key, goal) in &rows {
        print_row(label, key, *goal);
    }
    // The workload rows: each agent against the plain JVM, and ours against the JDK's.
    let versus = |which: Which, key: &str| Some(get(which, key)? / get(Which::None, key)?);
    let ratio = |key: &str, digits: usize| match (get(Which::Ours, key), get(Which::Jdk, key)) {
        (Some(a), Some(b)) => format!("{:.digits$}x", a / b),
        _ => "-".into(),
    };
    let overhead = |v: Option<f64>| v.map_or_else(|| "-".into(), |r| format!("{:+.1}%", (r - 1.0) * 100.0));
    let slowdown = |v: Option<f64>| {
        v.map_or_else(|| "-".into(), |r| if r < 10.0 { format!("{r:.2}x") } else { format!("{}x", format_number(r)) })
    };
    for (clock, suffix) in [("wall-clock", ""), ("main thread's CPU time", "_cpu")] {
        let key = format!("work_idle{suffix}_ms");
        println!(
            "| idle overhead: CPU-bound workload with a debugger attached and no requests, vs no agent ({} ms a rep, \
             {clock}), lower is better | {} ({} ms) | {} ({} ms) | {} | ours within 1% of no agent | {} |",
            show(get(Which::None, &key)),
            overhead(versus(Which::Jdk, &key)),
            show(get(Which::Jdk, &key)),
            overhead(versus(Which::Ours, &key)),
            show(get(Which::Ours, &key)),
            ratio(&key, 3),
            yes_no(versus(Which::Ours, &key).map(|r| r <= 1.01)),
        );
    }
    for (clock, suffix) in [("wall-clock", ""), ("main thread's CPU time", "_cpu")] {
        let key = format!("work_entry{suffix}_ms");
        println!(
            "| slowdown: the workload with one method entry request filtered to another class (ClassMatch), vs no \
             agent ({} ms a rep, {clock}), lower is better | {} ({} ms) | {} ({} ms) | {} | ours near 1x (<= 1.1x) \
             | {} |",
            show(get(Which::None, &key)),
            slowdown(versus(Which::Jdk, &key)),
            show(get(Which::Jdk, &key)),
            slowdown(versus(Which::Ours, &key)),
            show(get(Which::Ours, &key)),
            ratio(&key, 4),
            yes_no(versus(Which::Ours, &key).map(|r| r <= 1.1)),
        );
    }
    if opts.jdi_rs {
        println!();
        println!("Supplementary: the same Bench.java phases with jdi-rs (current-thread runtime) as the client:");
        println!();
        println!("| measure | JDK agent | ours | ours / JDK | goal | met |");
        println!("|---|---:|---:|---:|---|---|");
        // The phases of Bench.java only.
        let bench = ["bp_per_s", "steps_per_s", "rt_per_s", "rt_conc_per_s", "frames_ms", "frames_first_ms"];
        for (label, key, goal) in rows.iter().filter(|r| bench.contains(&r.1)) {
            print_row(label, &format!("rs_{key}"), *goal);
        }
    }
    if let Some(before) = &opts.before {
        print_before_after(before, &rows, opts.jdi_rs, &get);
    }
}

/// The `--before` table: every row of the other tables, the earlier build against ours (both
/// also against the JDK's agent), from the same runs.
fn print_before_after(
    before: &Path,
    rows: &[(String, &str, Goal)],
    jdi_rs: bool,
    get: &dyn Fn(Which, &str) -> Option<f64>,
) {
    let mut all: Vec<(String, String, bool)> =
        rows.iter().map(|(label, key, goal)| (label.clone(), key.to_string(), higher_is_better(*goal))).collect();
    for (label, key) in [
        ("idle workload, wall-clock ms a rep", "work_idle_ms"),
        ("idle workload, main thread's CPU ms a rep", "work_idle_cpu_ms"),
        ("workload with a filtered method entry request, wall-clock ms a rep", "work_entry_ms"),
        ("workload with a filtered method entry request, CPU ms a rep", "work_entry_cpu_ms"),
    ] {
        all.push((label.to_string(), key.to_string(), false));
    }
    if jdi_rs {
        let bench = ["bp_per_s", "steps_per_s", "rt_per_s", "rt_conc_per_s", "frames_ms", "frames_first_ms"];
        for (label, key, goal) in rows.iter().filter(|r| bench.contains(&r.1)) {
            all.push((format!("jdi-rs client: {label}"), format!("rs_{key}"), higher_is_better(*goal)));
        }
    }
    let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => format!("{:.2}x", a / b),
        _ => "-".into(),
    };
    let show = |v: Option<f64>| v.map_or_else(|| "-".to_string(), format_number);
    println!();
    println!("Before and after, in the same runs: before = {}", before.display());
    println!();
    println!("| measure | JDK agent | before | ours | ours / before | before / JDK | ours / JDK |");
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for (label, key, higher) in all {
        let (jdk, old, new) = (get(Which::Jdk, &key), get(Which::Before, &key), get(Which::Ours, &key));
        let better = if higher { "higher is better" } else { "lower is better" };
        println!(
            "| {label}, {better} | {} | {} | {} | {} | {} | {} |",
            show(jdk),
            show(old),
            show(new),
            ratio(new, old),
            ratio(old, jdk),
            ratio(new, jdk)
        );
    }
}

fn higher_is_better(goal: Goal) -> bool {
    matches!(goal, Goal::RateAtLeast(_))
}

fn yes_no(met: Option<bool>) -> &'static str {
    match met {
        Some(true) => "yes",
        Some(false) => "**no**",
        None => "-",
    }
}
