//! The benchmark: jdi-rs against the JDK's JDI, side by side in one run (see BENCHMARKS.md).
//!
//! ```text
//! cargo run --release -p bench
//! cargo run --release -p bench -- --hits 5000 --steps 5000 --round-trips 20000 --concurrency 16 \
//!     --depth 2000 --reps 10 --runs 3 [--only jdi-rs|jdi-rs-ct|jdi]
//! ```
//!
//! Each side runs in a fresh process of its own (so peak RSS compares the clients alone) against
//! a fresh debuggee, `tests/fixtures/Bench.java` under the JDK's agent. The JDI side is
//! `bench/java/JdiBench.java`, compiled with javac into `target/bench-java/` at run time and run
//! with `java`; the jdi-rs side is this binary again (`--side jdi-rs`). Both do the same work in
//! the same order and print one `RESULT key=value...` line; with `--runs N` each side runs N times
//! (rotating the order) and the table shows medians. jdi-rs runs twice: on tokio's multi-thread
//! runtime (`jdi-rs`, what `#[tokio::main]` gives) and on its current-thread one (`jdi-rs-ct`).
//!
//! `bench agent [...]` is the other benchmark: the JDK's agent against ours, with the JDK's JDI as
//! the client of both (see `agent.rs`). `bench jdb [...]`: jdb-rs against jdb, first prompt and
//! peak RSS (see `jdb.rs`). `bench profiler [...]` measures our agent's profiler: CPU sampling
//! overhead against JFR's, and one-trip deadlock detection against standard commands (see
//! `profiler.rs`). `bench profiler-heap [...]` measures its heap side: the HPROF dump against
//! `jcmd GC.heap_dump`, and allocation sampling overhead against JFR's (see `profiler_heap.rs`).
//! `bench allclasses [...]`: the debugger's first `allClasses`, our agent against the JDK's, on the
//! wire (see `allclasses.rs`). `bench shmem [...]` compares the shared-memory transport with the socket one, same agent and
//! client (see `shmem.rs`). `bench vthreads [...]`: virtual threads under a debugger (start-and-join
//! slowdown, thread start events, breakpoint and step rates), JDK 25's agent against ours (see
//! `vthreads.rs`).

mod agent;
mod allclasses;
mod jdb;
mod profiler;
mod profiler_heap;
mod shmem;
mod side;
mod vthreads;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::Duration;

use test_rig::Debuggee;

/// How long one side may take before it is considered hung.
const SIDE_TIMEOUT: Duration = Duration::from_secs(600);

/// What to measure: the same for both sides.
#[derive(Debug, Clone)]
pub struct Config {
    pub hits: u32,
    pub steps: u32,
    pub round_trips: u32,
    pub concurrency: u32,
    pub depth: u32,
    pub reps: u32,
}

/// Lines of Bench.java that the phases break on.
#[derive(Debug, Clone, Copy)]
pub struct Lines {
    pub hot: u32,
    pub step_start: u32,
    pub idle: u32,
    pub deep_bottom: u32,
}

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let result = match argv.first().map(String::as_str) {
        Some("--side") => side::main(&argv[1..]),
        Some("agent") => agent::main(&argv[1..]),
        Some("allclasses") => allclasses::main(&argv[1..]),
        Some("jdb") => jdb::main(&argv[1..]),
        Some("profiler") => profiler::main(&argv[1..]),
        Some("profiler-heap") => profiler_heap::main(&argv[1..]),
        Some("shmem") => shmem::main(&argv[1..]),
        Some("vthreads") => vthreads::main(&argv[1..]),
        _ => orchestrate(&argv),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bench: {e}");
            ExitCode::FAILURE
        }
    }
}

struct Options {
    config: Config,
    runs: u32,
    sides: Vec<&'static str>,
}

/// The sides, in table order.
const SIDES: [&str; 3] = ["jdi-rs", "jdi-rs-ct", "jdi"];

fn parse(argv: &[String]) -> Result<Options, String> {
    let mut config = Config { hits: 5000, steps: 5000, round_trips: 20000, concurrency: 16, depth: 2000, reps: 10 };
    let mut opts = Options { config: config.clone(), runs: 3, sides: SIDES.to_vec() };
    let mut it = argv.iter();
    while let Some(flag) = it.next() {
        let mut value = || it.next().cloned().ok_or_else(|| format!("{flag} needs a value"));
        let mut number = || -> Result<u32, String> {
            let v = value()?;
            v.parse::<u32>().ok().filter(|&n| n > 0).ok_or_else(|| format!("{flag}: not a positive number: {v}"))
        };
        match flag.as_str() {
            "--hits" => config.hits = number()?,
            "--steps" => config.steps = number()?,
            "--round-trips" => config.round_trips = number()?,
            "--concurrency" => config.concurrency = number()?,
            "--depth" => config.depth = number()?,
            "--reps" => config.reps = number()?,
            "--runs" => opts.runs = number()?,
            "--only" => {
                let only = value()?;
                let side = SIDES.iter().find(|&&s| s == only);
                opts.sides = vec![*side.ok_or_else(|| format!("--only wants one of {SIDES:?}, not {only}"))?];
            }
            "--help" => {
                return Err("usage: bench [--hits N] [--steps N] [--round-trips N] [--concurrency N] [--depth N] \
                            [--reps N] [--runs N] [--only jdi-rs|jdi-rs-ct|jdi]\n       \
                            bench agent --help   (the agent benchmark: the JDK's agent against ours)\n       \
                            bench profiler --help   (the profiler benchmark: sampling overhead, deadlocks)
                            bench profiler-heap --help   (heap dump vs jcmd, allocation sampling overhead)
                            bench vthreads --help   (virtual threads under a debugger, JDK 25's agent vs ours)"
                    .into());
            }
            other => return Err(format!("unknown option {other} (try --help)")),
        }
    }
    if config.hits < 2 || config.steps < 2 {
        return Err("--hits and --steps must be at least 2".into());
    }
    opts.config = config;
    Ok(opts)
}

fn orchestrate(argv: &[String]) -> Result<(), String> {
    let opts = parse(argv)?;
    // Compiles the fixtures (Bench among them) now, not inside the first measurement.
    test_rig::fixtures().map_err(|e| e.to_string())?;
    let line = |marker: &str| test_rig::fixture_line("Bench.java", marker).map_err(|e| e.to_string());
    let lines = Lines {
        hot: line("@hot")?,
        step_start: line("@step-start")?,
        idle: line("@idle")?,
        deep_bottom: line("@deep-bottom")?,
    };
    let jdi_classes = if opts.sides.contains(&"jdi") { Some(compile_jdi_bench()?) } else { None };
    eprintln!("bench: {:?}, {} run(s) of {:?}", opts.config, opts.runs, opts.sides);

    let mut results: BTreeMap<&str, Vec<BTreeMap<String, f64>>> = BTreeMap::new();
    for run in 0..opts.runs {
        // Rotate which side goes first, so none always gets the quieter moment.
        let mut order = opts.sides.clone();
        let first = run as usize % order.len();
        order.rotate_left(first);
        for side in order {
            // Bench's arguments are HITS DEPTH REPS.
            let jvm = Debuggee::builder("Bench")
                .args([opts.config.hits, opts.config.depth, opts.config.reps].map(|n| n.to_string()))
                .spawn()
                .map_err(|e| e.to_string())?;
            let address = jvm.address().to_string();
            let mut cmd = match side {
                "jdi-rs" | "jdi-rs-ct" => {
                    let mut cmd = Command::new(std::env::current_exe().map_err(|e| e.to_string())?);
                    let runtime = if side == "jdi-rs" { "multi" } else { "current" };
                    cmd.args(["--side", "jdi-rs", runtime]);
                    cmd
                }
                _ => {
                    let mut cmd = Command::new(test_rig::java_tool("java").map_err(|e| e.to_string())?);
                    let classes = jdi_classes.as_ref().expect("compiled above");
                    cmd.args(["--add-modules", "jdk.jdi", "-cp"]).arg(classes).arg("JdiBench");
                    cmd
                }
            };
            cmd.arg(&address).args(side_args(&opts.config, lines));
            let result = run_side(side, cmd)?;
            eprintln!("bench: run {} {side}: {result:?}", run + 1);
            // The debuggee ends by itself after the last phase; if not, dropping it kills it.
            let status = jvm.wait_for_exit(Duration::from_secs(30));
            if !status.is_some_and(|s| s.success()) {
                return Err(format!("the {side} side's debuggee did not finish: {:?}\n{}", status, jvm.output_text()));
            }
            results.entry(side).or_default().push(result);
        }
    }
    print_table(&opts, &results);
    Ok(())
}

/// The arguments after the address, the same for both sides.
fn side_args(c: &Config, l: Lines) -> Vec<String> {
    [c.hits, c.steps, c.round_trips, c.concurrency, c.reps, l.hot, l.step_start, l.idle, l.deep_bottom]
        .iter()
        .map(u32::to_string)
        .collect()
}

/// Runs one side to its end and parses its `RESULT` line.
fn run_side(side: &str, mut cmd: Command) -> Result<BTreeMap<String, f64>, String> {
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let child = cmd.spawn().map_err(|e| format!("starting the {side} side: {e}"))?;
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let output = match rx.recv_timeout(SIDE_TIMEOUT) {
        Ok(output) => output.map_err(|e| format!("waiting for the {side} side: {e}"))?,
        Err(_) => {
            // SAFETY: kill has no memory-safety preconditions; the child is not reaped yet (its
            // waiter has not returned).
            unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
            return Err(format!("the {side} side did not finish within {SIDE_TIMEOUT:?}"));
        }
    };
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let line = stdout.lines().find_map(|l| l.strip_prefix("RESULT ")).filter(|_| output.status.success());
    let Some(line) = line else {
        return Err(format!("the {side} side failed ({}):\n{stdout}{stderr}", output.status));
    };
    line.split_whitespace()
        .map(|kv| {
            let (k, v) = kv.split_once('=').ok_or_else(|| format!("bad RESULT item {kv}"))?;
            let v: f64 = v.parse().map_err(|_| format!("bad RESULT value {kv}"))?;
            Ok((k.to_string(), v))
        })
        .collect()
}

/// Compiles the JDI clients (`bench/java/*.java`: JdiBench, JdiAgentBench) into
/// `<target>/bench-java/` and returns that directory.
fn compile_jdi_bench() -> Result<PathBuf, String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("java");
    let mut sources: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map_err(|e| format!("reading {}: {e}", dir.display()))?
        .filter_map(|entry| Some(entry.ok()?.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "java"))
        .collect();
    sources.sort();
    let out = test_rig::fixtures_cache_root().parent().map(|t| t.join("bench-java")).ok_or("no target directory")?;
    let javac = test_rig::java_tool("javac").map_err(|e| e.to_string())?;
    let status = Command::new(javac)
        .args(["--add-modules", "jdk.jdi", "-d"])
        .arg(&out)
        .args(&sources)
        .status()
        .map_err(|e| format!("running javac: {e}"))?;
    if !status.success() {
        return Err(format!("javac {} failed ({status})", dir.display()));
    }
    Ok(out)
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n == 0 {
        f64::NAN
    } else if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    }
}

fn print_table(opts: &Options, results: &BTreeMap<&str, Vec<BTreeMap<String, f64>>>) {
    let get = |side: &str, key: &str| {
        results.get(side).map(|runs| median(runs.iter().filter_map(|r| r.get(key).copied()).collect()))
    };
    let c = &opts.config;
    let frames = SIDES.iter().find_map(|side| get(side, "frames")).unwrap_or(f64::NAN);
    let rows: [(String, &str, bool, f64); 7] = [
        (format!("breakpoint hits/s, with resume ({} hits)", c.hits), "bp_per_s", true, 1.0),
        (format!("single steps/s ({} line steps over)", c.steps), "steps_per_s", true, 1.0),
        (format!("round trips/s, one at a time ({} ThreadReference.Name)", c.round_trips), "rt_per_s", true, 1.0),
        (format!("round trips/s, {} callers at once", c.concurrency), "rt_conc_per_s", true, 1.0),
        (
            format!("all {frames} frames at depth {}, with locations (ms, median of {})", c.depth, c.reps),
            "frames_ms",
            false,
            1.0,
        ),
        ("the same, first time (ms, cold caches)".to_string(), "frames_first_ms", false, 1.0),
        ("client peak RSS (MiB, VmHWM)".to_string(), "rss_kb", false, 1024.0),
    ];
    println!();
    println!("| measure | jdi-rs | jdi-rs, current-thread rt | JDI (JDK 17) | jdi-rs / JDI | jdi-rs ct / JDI |");
    println!("|---|---:|---:|---:|---:|---:|");
    for (label, key, higher_is_better, scale) in rows {
        let [multi, current, jdi] = SIDES.map(|side| get(side, key).map(|v| v / scale));
        let show = |v: Option<f64>| v.map_or_else(|| "-".to_string(), format_number);
        let ratio = |ours: Option<f64>| match (ours, jdi) {
            (Some(a), Some(b)) if b > 0.0 => format!("{:.2}x", a / b),
            _ => "-".into(),
        };
        let better = if higher_is_better { "higher is better" } else { "lower is better" };
        println!(
            "| {label}, {better} | {} | {} | {} | {} | {} |",
            show(multi),
            show(current),
            show(jdi),
            ratio(multi),
            ratio(current)
        );
    }
}

fn format_number(v: f64) -> String {
    if v >= 100.0 {
        let n = v.round() as u64;
        let s = n.to_string();
        let mut out = String::new();
        for (i, ch) in s.chars().enumerate() {
            if i > 0 && (s.len() - i) % 3 == 0 {
                out.push(',');
            }
            out.push(ch);
        }
        out
    } else {
        format!("{v:.1}")
    }
}
