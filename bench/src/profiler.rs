//! The profiler benchmark: our agent's CPU sampler against JFR's execution sampler, and the
//! one-trip deadlock command against the standard-commands search, side by side in one run (see
//! BENCHMARKS.md).
//!
//! ```text
//! cargo run --release -p bench -- profiler [--runs 3] [--threads 10] [--units 3000] [--rounds 10]
//!     [--deadlock-threads 200] [--deadlock-reps 5] [--agent-lib PATH]
//! ```
//!
//! CPU sampling overhead: `tests/fixtures/ProfWork.java` (THREADS threads of arithmetic, timed by
//! itself per round) runs in fresh JVMs, in turns within each run:
//! - `plain`: no agent;
//! - `jfr-10ms`, `jfr-1ms`: no agent, JFR recording only `jdk.ExecutionSample` at that period
//!   (a custom `.jfc` written next to the results; the sample count is read back with `jfr
//!   summary`);
//! - `ours-idle`: our agent, a jdi-rs client attached that asks for nothing (the baseline of the
//!   two below, so they show what sampling itself costs);
//! - `ours-10ms`, `ours-1ms`: our agent sampling every thread that ran, at that interval, from
//!   before the work starts to its end, with its default mechanism (signals and
//!   `AsyncGetCallTrace` in HotSpot);
//! - `ours-10ms-jvmti`, `ours-1ms-jvmti`: the same with JVMTI stack traces
//!   (`CPU_FLAG_JVMTI_STACKS`), the mechanism of earlier versions.
//!
//! The work is the same in every JVM (the checksum must match). Overheads are medians of the
//! work's wall time against the matching baseline. Samples per second are samples recorded over
//! the work's wall time. For our sampler, `CpuReport` also says what it cost, which a busy
//! machine's noise does not blur: its thread's CPU time and the wall time spent taking stacks
//! (during which the sampled threads are stopped), both as shares of the work's wall time.
//!
//! Deadlocks: `tests/fixtures/ManyDeadlocks.java` with N threads in N/2 monitor pairs under our
//! agent; `Profiler.Deadlocks` (one command) and jdi-rs's `deadlock::find_deadlocks` (suspend,
//! per-thread standard commands, resume) are timed alternately, each must find N/2 cycles. The
//! standard method also runs against the JDK's agent, for reference.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use jdi::Value;
use jdi::profiler::{CPU_FLAG_JVMTI_STACKS, Profiler};
use test_rig::{Agent, Debuggee};

use crate::{format_number, median};

const USAGE: &str = "usage: bench profiler [--runs N] [--threads N] [--units N] [--rounds N] \
                     [--deadlock-threads N] [--deadlock-reps N] [--agent-lib PATH] [--skip-cpu] [--skip-deadlocks]";

/// How long one workload JVM may take.
const WORK_TIMEOUT: Duration = Duration::from_secs(600);

struct Options {
    runs: u32,
    threads: u32,
    units: u32,
    rounds: u32,
    deadlock_threads: u32,
    deadlock_reps: u32,
    agent_lib: Option<PathBuf>,
    cpu: bool,
    deadlocks: bool,
}

fn parse(argv: &[String]) -> Result<Options, String> {
    let mut o = Options {
        runs: 3,
        threads: 10,
        units: 3000,
        rounds: 10,
        deadlock_threads: 200,
        deadlock_reps: 5,
        agent_lib: None,
        cpu: true,
        deadlocks: true,
    };
    let mut it = argv.iter();
    while let Some(flag) = it.next() {
        let mut value = || it.next().cloned().ok_or_else(|| format!("{flag} needs a value"));
        let mut number = || -> Result<u32, String> {
            let v = value()?;
            v.parse::<u32>().ok().filter(|&n| n > 0).ok_or_else(|| format!("{flag}: not a positive number: {v}"))
        };
        match flag.as_str() {
            "--runs" => o.runs = number()?,
            "--threads" => o.threads = number()?,
            "--units" => o.units = number()?,
            "--rounds" => o.rounds = number()?,
            "--deadlock-threads" => o.deadlock_threads = number()?,
            "--deadlock-reps" => o.deadlock_reps = number()?,
            "--agent-lib" => o.agent_lib = Some(PathBuf::from(value()?)),
            "--skip-cpu" => o.cpu = false,
            "--skip-deadlocks" => o.deadlocks = false,
            "--help" => return Err(USAGE.into()),
            other => return Err(format!("unknown option {other}\n{USAGE}")),
        }
    }
    Ok(o)
}

pub fn main(argv: &[String]) -> Result<(), String> {
    let opts = parse(argv)?;
    test_rig::fixtures().map_err(|e| e.to_string())?;
    let lib = match &opts.agent_lib {
        Some(lib) => lib.clone(),
        None => crate::agent::build_agent()?,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| format!("tokio: {e}"))?;
    eprintln!("bench profiler: machine load before: {}", load_average());
    if opts.cpu {
        runtime.block_on(cpu_overhead(&opts, &lib))?;
    }
    if opts.deadlocks {
        runtime.block_on(deadlocks(&opts, &lib))?;
    }
    eprintln!("bench profiler: machine load after: {}", load_average());
    Ok(())
}

// ---- CPU sampling overhead ------------------------------------------------------------------

/// The configurations, in table order.
const CONFIGS: [&str; 8] =
    ["plain", "jfr-10ms", "jfr-1ms", "ours-idle", "ours-10ms", "ours-1ms", "ours-10ms-jvmti", "ours-1ms-jvmti"];

/// What one workload JVM measured.
#[derive(Debug, Clone, Copy)]
struct WorkResult {
    total_ms: f64,
    /// Samples recorded (JFR: `jdk.ExecutionSample` events), if the configuration samples.
    samples: Option<f64>,
    /// Our sampler's ticks.
    ticks: Option<f64>,
    /// Our sampler's own CPU time and the wall time it spent taking stacks (ms).
    sampler_cpu_ms: Option<f64>,
    stack_walk_ms: Option<f64>,
}

async fn cpu_overhead(opts: &Options, lib: &Path) -> Result<(), String> {
    let dir = test_rig::fixtures_cache_root().parent().map(|t| t.join("bench-profiler")).ok_or("no target dir")?;
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut results: BTreeMap<&str, Vec<WorkResult>> = BTreeMap::new();
    let mut checksum: Option<String> = None;
    eprintln!(
        "bench profiler: ProfWork {} threads x {} units x {} rounds, {} run(s) of {CONFIGS:?}",
        opts.threads, opts.units, opts.rounds, opts.runs
    );
    for run in 0..opts.runs {
        let mut order = CONFIGS.to_vec();
        let first = run as usize % order.len();
        order.rotate_left(first);
        for config in order {
            let (result, sum) = work_run(opts, lib, &dir, config).await?;
            eprintln!("bench profiler: run {} {config}: {result:?}", run + 1);
            match &checksum {
                None => checksum = Some(sum),
                Some(c) if *c != sum => return Err(format!("{config}: checksum {sum}, others {c}")),
                Some(_) => {}
            }
            results.entry(config).or_default().push(result);
        }
    }
    let med = |config: &str, f: fn(&WorkResult) -> Option<f64>| {
        results.get(config).map(|rs| median(rs.iter().filter_map(f).collect())).filter(|v| !v.is_nan())
    };
    let time = |config: &str| med(config, |r| Some(r.total_ms));
    println!();
    println!(
        "CPU sampling, {} threads of arithmetic on {} cores, median of {} runs (work wall time):",
        opts.threads,
        std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0),
        opts.runs
    );
    println!();
    println!(
        "| configuration | work (ms) | overhead | vs | samples | samples/s | ticks/s | sampler CPU | taking stacks |"
    );
    println!("|---|---:|---:|---|---:|---:|---:|---:|---:|");
    for config in CONFIGS {
        let baseline = if config.starts_with("ours") { "ours-idle" } else { "plain" };
        let overhead = match (time(config), time(baseline)) {
            (Some(t), Some(b)) if config != baseline && b > 0.0 => format!("{:+.2}%", (t / b - 1.0) * 100.0),
            _ => "-".into(),
        };
        let vs = if config == baseline { "-" } else { baseline };
        let ms = time(config).unwrap_or(f64::NAN);
        let samples = med(config, |r| r.samples);
        let rate = |v: Option<f64>| v.map(|v| format_number(v / (ms / 1000.0))).unwrap_or_else(|| "-".into());
        // The sampler's own costs, as a share of the work's wall time.
        let share = |v: Option<f64>| v.map(|v| format!("{:.2}%", v / ms * 100.0)).unwrap_or_else(|| "-".into());
        println!(
            "| {config} | {} | {overhead} | {vs} | {} | {} | {} | {} | {} |",
            format_number(ms),
            samples.map(format_number).unwrap_or_else(|| "-".into()),
            rate(samples),
            rate(med(config, |r| r.ticks)),
            share(med(config, |r| r.sampler_cpu_ms)),
            share(med(config, |r| r.stack_walk_ms)),
        );
    }
    // Ours idle against no agent at all, for completeness (the agent's cost when nobody samples).
    if let (Some(idle), Some(plain)) = (time("ours-idle"), time("plain")) {
        println!();
        println!("ours-idle vs plain: {:+.2}%", (idle / plain - 1.0) * 100.0);
    }
    Ok(())
}

/// One workload JVM in `config`; returns what it measured and its checksum.
async fn work_run(opts: &Options, lib: &Path, dir: &Path, config: &str) -> Result<(WorkResult, String), String> {
    let args = [opts.threads, opts.units, opts.rounds].map(|n| n.to_string());
    let ours = config.starts_with("ours");
    let mut builder = Debuggee::builder("ProfWork").args(args).expect_listening(ours).startup_timeout(WORK_TIMEOUT);
    let mut jfr_file = None;
    if ours {
        builder = builder.agent(Agent::path(lib, "transport=dt_socket,server=y,suspend=n,address=127.0.0.1:0"));
    } else {
        builder = builder.agent(Agent::None).arg("auto");
        if let Some(period) = config.strip_prefix("jfr-") {
            let period = period.replace("ms", " ms");
            let jfc = dir.join(format!("execution-sample-{}.jfc", period.replace(' ', "")));
            std::fs::write(&jfc, jfc_text(&period)).map_err(|e| format!("{}: {e}", jfc.display()))?;
            let file = dir.join(format!("{config}-{}.jfr", std::process::id()));
            let _ = std::fs::remove_file(&file);
            builder = builder.jvm_option(format!(
                "-XX:StartFlightRecording=settings={},filename={},dumponexit=true",
                jfc.display(),
                file.display()
            ));
            jfr_file = Some(file);
        }
    }
    let jvm = builder.spawn().map_err(|e| e.to_string())?;
    let mut samples = None;
    let mut ticks = None;
    let mut sampler_cpu_ms = None;
    let mut stack_walk_ms = None;
    let done = if ours {
        let vm = jdi::attach(&jvm.address().to_string(), Some(WORK_TIMEOUT)).await.map_err(|e| e.to_string())?;
        let jvm = wait_line(jvm, "ready").await?;
        let profiler = match config.trim_end_matches("-jvmti") {
            "ours-10ms" => Some(Duration::from_millis(10)),
            "ours-1ms" => Some(Duration::from_millis(1)),
            _ => None,
        };
        let flags = if config.ends_with("-jvmti") { CPU_FLAG_JVMTI_STACKS } else { 0 };
        let profiler = match profiler {
            Some(interval) => {
                let p = Profiler::detect(&vm).await.map_err(|e| e.to_string())?;
                p.cpu_start_with_flags(interval, 0, &[], flags).await.map_err(|e| e.to_string())?;
                Some(p)
            }
            None => None,
        };
        let class = vm
            .classes_by_name("ProfWork")
            .await
            .map_err(|e| e.to_string())?
            .into_iter()
            .find_map(|t| t.as_class())
            .ok_or("ProfWork is not loaded")?;
        let go = class.field_by_name("go").await.map_err(|e| e.to_string())?.ok_or("no field go")?;
        class.set_value(&go, Value::Boolean(true)).await.map_err(|e| e.to_string())?;
        let (jvm, line) = wait_line_text(jvm, "ProfWork done").await?;
        if let Some(p) = profiler {
            p.cpu_stop().await.map_err(|e| e.to_string())?;
            let report = p.cpu_report(true).await.map_err(|e| e.to_string())?;
            samples = Some(report.samples as f64);
            ticks = Some(report.ticks as f64);
            sampler_cpu_ms = Some(report.sampler_cpu_nanos as f64 / 1e6);
            stack_walk_ms = Some(report.stack_walk_nanos as f64 / 1e6);
        }
        // Lets the workload exit.
        class.set_value(&go, Value::Boolean(false)).await.map_err(|e| e.to_string())?;
        let _ = vm.dispose().await;
        finish(jvm).await?;
        line
    } else {
        let (jvm, line) = wait_line_text(jvm, "ProfWork done").await?;
        finish(jvm).await?;
        line
    };
    if let Some(file) = jfr_file {
        samples = Some(jfr_samples(&file)?);
        let _ = std::fs::remove_file(&file);
    }
    // "ProfWork done <checksum> total-ms <T>"
    let words: Vec<&str> = done.split_whitespace().collect();
    let (Some(sum), Some(total)) = (words.get(2), words.get(4).and_then(|t| t.parse::<f64>().ok())) else {
        return Err(format!("{config}: unexpected line {done:?}"));
    };
    Ok((WorkResult { total_ms: total, samples, ticks, sampler_cpu_ms, stack_walk_ms }, sum.to_string()))
}

/// A JFR configuration that enables only the execution sampler, at `period` ("10 ms").
fn jfc_text(period: &str) -> String {
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <configuration version=\"2.0\" label=\"execution samples\" description=\"jdk.ExecutionSample only\">\n\
         \x20 <event name=\"jdk.ExecutionSample\">\n\
         \x20   <setting name=\"enabled\">true</setting>\n\
         \x20   <setting name=\"period\">{period}</setting>\n\
         \x20 </event>\n\
         </configuration>\n"
    )
}

/// How many `jdk.ExecutionSample` events a recording holds (`jfr summary`).
fn jfr_samples(file: &Path) -> Result<f64, String> {
    let jfr = test_rig::java_tool("jfr").map_err(|e| e.to_string())?;
    let out = Command::new(jfr).arg("summary").arg(file).output().map_err(|e| format!("jfr summary: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .find_map(|l| {
            let mut words = l.split_whitespace();
            (words.next() == Some("jdk.ExecutionSample")).then(|| words.next()?.parse::<f64>().ok()).flatten()
        })
        .ok_or_else(|| format!("no jdk.ExecutionSample count in `jfr summary {}`:\n{text}", file.display()))
}

pub(crate) async fn wait_line(jvm: Debuggee, needle: &str) -> Result<Debuggee, String> {
    wait_line_text(jvm, needle).await.map(|(jvm, _)| jvm)
}

/// Waits (off the runtime's threads) for a line of the JVM's output containing `needle`.
pub(crate) async fn wait_line_text(jvm: Debuggee, needle: &str) -> Result<(Debuggee, String), String> {
    let needle = needle.to_string();
    tokio::task::spawn_blocking(move || {
        let line = jvm.wait_for_line(&needle, WORK_TIMEOUT).map_err(|e| format!("{e}\n{}", jvm.output_text()))?;
        Ok((jvm, line))
    })
    .await
    .map_err(|e| e.to_string())?
}

pub(crate) async fn finish(jvm: Debuggee) -> Result<(), String> {
    tokio::task::spawn_blocking(move || match jvm.wait_for_exit(Duration::from_secs(60)) {
        Some(s) if s.success() => Ok(()),
        status => Err(format!("the workload did not end well: {status:?}\n{}", jvm.output_text())),
    })
    .await
    .map_err(|e| e.to_string())?
}

// ---- deadlock detection -----------------------------------------------------------------------

async fn deadlocks(opts: &Options, lib: &Path) -> Result<(), String> {
    let n = opts.deadlock_threads / 2 * 2;
    let expected = (n / 2) as usize;
    let spawn = |agent: Agent| {
        Debuggee::builder("ManyDeadlocks").arg(n.to_string()).agent(agent).startup_timeout(WORK_TIMEOUT).spawn()
    };
    let options = "transport=dt_socket,server=y,suspend=n,address=127.0.0.1:0";
    let ours = spawn(Agent::path(lib, options)).map_err(|e| e.to_string())?;
    let ours = wait_line(ours, "deadlocked").await?;
    let vm = jdi::attach(&ours.address().to_string(), Some(WORK_TIMEOUT)).await.map_err(|e| e.to_string())?;
    let profiler = Profiler::detect(&vm).await.map_err(|e| e.to_string())?;

    let (mut one_trip, mut standard) = (Vec::new(), Vec::new());
    for rep in 0..opts.deadlock_reps {
        // Alternate which goes first.
        for first in [rep % 2 == 0, rep % 2 != 0] {
            let start = Instant::now();
            if first {
                let cycles = profiler.deadlocks(0).await.map_err(|e| e.to_string())?;
                one_trip.push(start.elapsed().as_secs_f64() * 1e3);
                check(cycles.len(), expected, "Profiler.Deadlocks")?;
            } else {
                let found = jdi::deadlock::find_deadlocks(&vm).await.map_err(|e| e.to_string())?;
                standard.push(start.elapsed().as_secs_f64() * 1e3);
                check(found.len(), expected, "standard commands")?;
            }
        }
    }
    let _ = vm.dispose().await;
    drop(ours);

    // The standard method against the JDK's agent, for reference.
    let jdk = spawn(Agent::jdk(options)).map_err(|e| e.to_string())?;
    let jdk = wait_line(jdk, "deadlocked").await?;
    let vm = jdi::attach(&jdk.address().to_string(), Some(WORK_TIMEOUT)).await.map_err(|e| e.to_string())?;
    let mut jdk_standard = Vec::new();
    for _ in 0..opts.deadlock_reps {
        let start = Instant::now();
        let found = jdi::deadlock::find_deadlocks(&vm).await.map_err(|e| e.to_string())?;
        jdk_standard.push(start.elapsed().as_secs_f64() * 1e3);
        check(found.len(), expected, "standard commands (JDK agent)")?;
    }
    let _ = vm.dispose().await;
    drop(jdk);

    let (one, std_ours, std_jdk) = (median(one_trip), median(standard), median(jdk_standard));
    println!();
    println!("Deadlock detection, {n} threads in {expected} monitor cycles, median of {} reps:", opts.deadlock_reps);
    println!();
    println!("| method | agent | ms | vs one trip |");
    println!("|---|---|---:|---:|");
    println!("| Profiler.Deadlocks (one command) | ours | {one:.2} | 1.00x |");
    println!("| standard commands (jdi-rs deadlock.rs) | ours | {std_ours:.2} | {:.1}x |", std_ours / one);
    println!("| standard commands (jdi-rs deadlock.rs) | JDK's | {std_jdk:.2} | {:.1}x |", std_jdk / one);
    Ok(())
}

fn check(found: usize, expected: usize, what: &str) -> Result<(), String> {
    if found == expected { Ok(()) } else { Err(format!("{what} found {found} cycles, not {expected}")) }
}

/// `/proc/loadavg`'s first three fields.
pub(crate) fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}
