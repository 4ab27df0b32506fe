//! The heap side of the profiler benchmark: our agent's HPROF heap dump against the JDK's own
//! (`jcmd GC.heap_dump`), and allocation sampling overhead against JFR's allocation sampler, side
//! by side in one run (see BENCHMARKS.md).
//!
//! ```text
//! cargo run --release -p bench -- profiler-heap [--runs 3] [--records 200000] [--dump-reps 3]
//!     [--threads 4] [--units 200000] [--rounds 5] [--agent-lib PATH] [--skip-dump] [--skip-alloc]
//! ```
//!
//! Heap dump: `tests/fixtures/HeapBench.java` with N records (about 3N objects) under our agent;
//! `Profiler.HeapDump` (live) and `jcmd <pid> GC.heap_dump` (live, the JDK's dumper in the VM)
//! alternate; both files are parsed with the test rig's strict HPROF reader, which must find the N
//! records in each. Reported: median wall time (as the client sees it) and file size.
//!
//! Allocation sampling: `tests/fixtures/AllocWork.java` (THREADS threads allocating about 450
//! bytes per unit, timed by itself per round) in fresh JVMs, in turns:
//! - `plain`: no agent; `jfr-alloc`: no agent, JFR recording only `jdk.ObjectAllocationSample`
//!   (throttle 300/s, JFR's `profile` setting);
//! - `ours-idle`: our agent, a client attached asking for nothing (the baseline of the next two);
//! - `ours-512k`, `ours-32k`: our agent sampling about every 512 KiB (JVMTI's default, and
//!   jdb-rs's) and every 32 KiB, live tracking on.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use jdi::Value;
use jdi::profiler::Profiler;
use test_rig::hprof::Hprof;
use test_rig::{Agent, Debuggee};

use crate::profiler::{finish, load_average, wait_line, wait_line_text};
use crate::{format_number, median};

const USAGE: &str = "usage: bench profiler-heap [--runs N] [--records N] [--dump-reps N] [--threads N] [--units N] \
                     [--rounds N] [--agent-lib PATH] [--skip-dump] [--skip-alloc]";

const WORK_TIMEOUT: Duration = Duration::from_secs(600);
const OUR_OPTIONS: &str = "transport=dt_socket,server=y,suspend=n,address=127.0.0.1:0";

struct Options {
    runs: u32,
    records: u32,
    dump_reps: u32,
    threads: u32,
    units: u32,
    rounds: u32,
    agent_lib: Option<PathBuf>,
    dump: bool,
    alloc: bool,
}

fn parse(argv: &[String]) -> Result<Options, String> {
    let mut o = Options {
        runs: 3,
        records: 200_000,
        dump_reps: 3,
        threads: 4,
        units: 200_000,
        rounds: 5,
        agent_lib: None,
        dump: true,
        alloc: true,
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
            "--records" => o.records = number()?,
            "--dump-reps" => o.dump_reps = number()?,
            "--threads" => o.threads = number()?,
            "--units" => o.units = number()?,
            "--rounds" => o.rounds = number()?,
            "--agent-lib" => o.agent_lib = Some(PathBuf::from(value()?)),
            "--skip-dump" => o.dump = false,
            "--skip-alloc" => o.alloc = false,
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
    let dir = test_rig::fixtures_cache_root().parent().map(|t| t.join("bench-profiler-heap")).ok_or("no target dir")?;
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| format!("tokio: {e}"))?;
    eprintln!("bench profiler-heap: machine load before: {}", load_average());
    if opts.dump {
        runtime.block_on(heap_dump(&opts, &lib, &dir))?;
    }
    if opts.alloc {
        runtime.block_on(alloc_overhead(&opts, &lib, &dir))?;
    }
    eprintln!("bench profiler-heap: machine load after: {}", load_average());
    Ok(())
}

// ---- heap dump ----------------------------------------------------------------------------------

/// Parses a dump and checks it holds the benchmark's records.
fn check_dump(path: &Path, records: u32, who: &str) -> Result<(), String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let dump = Hprof::parse(&bytes).map_err(|e| format!("{who}'s dump: {e}"))?;
    let found = dump.instances_of("HeapBench$Record").len();
    if found != records as usize {
        return Err(format!("{who}'s dump has {found} records, not {records}"));
    }
    Ok(())
}

async fn heap_dump(opts: &Options, lib: &Path, dir: &Path) -> Result<(), String> {
    let jvm = Debuggee::builder("HeapBench")
        .arg(opts.records.to_string())
        .agent(Agent::path(lib, OUR_OPTIONS))
        .startup_timeout(WORK_TIMEOUT)
        .spawn()
        .map_err(|e| e.to_string())?;
    let jvm = wait_line(jvm, "ready").await?;
    let vm = jdi::attach(&jvm.address().to_string(), Some(WORK_TIMEOUT)).await.map_err(|e| e.to_string())?;
    let profiler = Profiler::detect(&vm).await.map_err(|e| e.to_string())?;
    let jcmd = test_rig::java_tool("jcmd").map_err(|e| e.to_string())?;
    let (mut ours, mut jdk) = (Vec::new(), Vec::new());
    let (mut ours_size, mut jdk_size) = (0u64, 0u64);
    for rep in 0..opts.dump_reps {
        for ours_first in [rep % 2 == 0, rep % 2 != 0] {
            if ours_first {
                let path = dir.join(format!("ours-{}-{rep}.hprof", std::process::id()));
                let _ = std::fs::remove_file(&path);
                let start = Instant::now();
                let bytes =
                    profiler.heap_dump(&path.to_string_lossy(), true).await.map_err(|e| format!("HeapDump: {e}"))?;
                ours.push(start.elapsed().as_secs_f64() * 1e3);
                ours_size = bytes as u64;
                if rep == 0 {
                    check_dump(&path, opts.records, "our")?;
                }
                let _ = std::fs::remove_file(&path);
            } else {
                let path = dir.join(format!("jdk-{}-{rep}.hprof", std::process::id()));
                let _ = std::fs::remove_file(&path);
                let start = Instant::now();
                let out = Command::new(&jcmd)
                    .arg(jvm.pid().to_string())
                    .arg("GC.heap_dump")
                    .arg(&path)
                    .output()
                    .map_err(|e| format!("jcmd: {e}"))?;
                jdk.push(start.elapsed().as_secs_f64() * 1e3);
                if !out.status.success() {
                    return Err(format!("jcmd GC.heap_dump: {}", String::from_utf8_lossy(&out.stderr)));
                }
                jdk_size = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
                if rep == 0 {
                    check_dump(&path, opts.records, "the JDK")?;
                }
                let _ = std::fs::remove_file(&path);
            }
        }
        eprintln!(
            "bench profiler-heap: dump rep {}: ours {:.0} ms, jcmd {:.0} ms",
            rep + 1,
            ours[rep as usize],
            jdk[rep as usize]
        );
    }
    let _ = vm.dispose().await;
    drop(jvm);
    let (ours_ms, jdk_ms) = (median(ours), median(jdk));
    println!();
    println!(
        "Heap dump (live) of HeapBench with {} records (about {} objects), median of {} reps:",
        opts.records,
        format_number(opts.records as f64 * 3.0),
        opts.dump_reps
    );
    println!();
    println!("| dumper | wall time (ms) | file (MB) | time vs jcmd |");
    println!("|---|---:|---:|---:|");
    println!(
        "| jcmd GC.heap_dump (the JDK's, in the VM) | {} | {:.1} | 1.00x |",
        format_number(jdk_ms),
        jdk_size as f64 / 1e6
    );
    println!(
        "| Profiler.HeapDump (ours, JVMTI) | {} | {:.1} | {:.2}x |",
        format_number(ours_ms),
        ours_size as f64 / 1e6,
        ours_ms / jdk_ms
    );
    Ok(())
}

// ---- allocation sampling overhead ---------------------------------------------------------------

const CONFIGS: [&str; 5] = ["plain", "jfr-alloc", "ours-idle", "ours-512k", "ours-32k"];

#[derive(Debug, Clone, Copy)]
struct WorkResult {
    total_ms: f64,
    samples: Option<f64>,
}

async fn alloc_overhead(opts: &Options, lib: &Path, dir: &Path) -> Result<(), String> {
    let mut results: BTreeMap<&str, Vec<WorkResult>> = BTreeMap::new();
    let mut checksum: Option<String> = None;
    eprintln!(
        "bench profiler-heap: AllocWork {} threads x {} units x {} rounds, {} run(s) of {CONFIGS:?}",
        opts.threads, opts.units, opts.rounds, opts.runs
    );
    for run in 0..opts.runs {
        let mut order = CONFIGS.to_vec();
        order.rotate_left(run as usize % CONFIGS.len());
        for config in order {
            let (result, sum) = work_run(opts, lib, dir, config).await?;
            eprintln!("bench profiler-heap: run {} {config}: {result:?}", run + 1);
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
    let bytes = opts.threads as f64 * opts.units as f64 * opts.rounds as f64 * 448.0;
    println!();
    println!(
        "Allocation sampling, {} threads allocating about {:.1} GB in all, on {} cores, median of {} runs (work wall time):",
        opts.threads,
        bytes / 1e9,
        std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0),
        opts.runs
    );
    println!();
    println!("| configuration | work (ms) | overhead | vs | samples | samples/s |");
    println!("|---|---:|---:|---|---:|---:|");
    for config in CONFIGS {
        let baseline = if config.starts_with("ours") { "ours-idle" } else { "plain" };
        let overhead = match (time(config), time(baseline)) {
            (Some(t), Some(b)) if config != baseline && b > 0.0 => format!("{:+.2}%", (t / b - 1.0) * 100.0),
            _ => "-".into(),
        };
        let ms = time(config).unwrap_or(f64::NAN);
        let samples = med(config, |r| r.samples);
        println!(
            "| {config} | {} | {overhead} | {} | {} | {} |",
            format_number(ms),
            if config == baseline { "-" } else { baseline },
            samples.map(format_number).unwrap_or_else(|| "-".into()),
            samples.map(|s| format_number(s / (ms / 1000.0))).unwrap_or_else(|| "-".into()),
        );
    }
    if let (Some(idle), Some(plain)) = (time("ours-idle"), time("plain")) {
        println!();
        println!("ours-idle vs plain: {:+.2}%", (idle / plain - 1.0) * 100.0);
    }
    Ok(())
}

/// A JFR configuration that enables only the allocation sampler, at JFR's `profile` throttle.
const JFC_ALLOC: &str = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
<configuration version=\"2.0\" label=\"allocation samples\" description=\"jdk.ObjectAllocationSample only\">\n\
  <event name=\"jdk.ObjectAllocationSample\">\n\
    <setting name=\"enabled\">true</setting>\n\
    <setting name=\"throttle\">300/s</setting>\n\
    <setting name=\"stackTrace\">true</setting>\n\
  </event>\n\
</configuration>\n";

/// How many events of `event` a recording holds (`jfr summary`).
fn jfr_count(file: &Path, event: &str) -> Result<f64, String> {
    let jfr = test_rig::java_tool("jfr").map_err(|e| e.to_string())?;
    let out = Command::new(jfr).arg("summary").arg(file).output().map_err(|e| format!("jfr summary: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .find_map(|l| {
            let mut words = l.split_whitespace();
            (words.next() == Some(event)).then(|| words.next()?.parse::<f64>().ok()).flatten()
        })
        .ok_or_else(|| format!("no {event} count in `jfr summary {}`:\n{text}", file.display()))
}

async fn work_run(opts: &Options, lib: &Path, dir: &Path, config: &str) -> Result<(WorkResult, String), String> {
    let args = [opts.threads, opts.units, opts.rounds].map(|n| n.to_string());
    let ours = config.starts_with("ours");
    let mut builder = Debuggee::builder("AllocWork").args(args).expect_listening(ours).startup_timeout(WORK_TIMEOUT);
    let mut jfr_file = None;
    if ours {
        builder = builder.agent(Agent::path(lib, OUR_OPTIONS));
    } else {
        builder = builder.agent(Agent::None).arg("auto");
        if config == "jfr-alloc" {
            let jfc = dir.join("allocation-sample.jfc");
            std::fs::write(&jfc, JFC_ALLOC).map_err(|e| format!("{}: {e}", jfc.display()))?;
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
    let done = if ours {
        let vm = jdi::attach(&jvm.address().to_string(), Some(WORK_TIMEOUT)).await.map_err(|e| e.to_string())?;
        let jvm = wait_line(jvm, "ready").await?;
        let interval = match config {
            "ours-512k" => Some(512 * 1024),
            "ours-32k" => Some(32 * 1024),
            _ => None,
        };
        let profiler = match interval {
            Some(interval) => {
                let p = Profiler::detect(&vm).await.map_err(|e| e.to_string())?;
                p.alloc_start(interval, 0).await.map_err(|e| e.to_string())?;
                Some(p)
            }
            None => None,
        };
        let class = vm
            .classes_by_name("AllocWork")
            .await
            .map_err(|e| e.to_string())?
            .into_iter()
            .find_map(|t| t.as_class())
            .ok_or("AllocWork is not loaded")?;
        let go = class.field_by_name("go").await.map_err(|e| e.to_string())?.ok_or("no field go")?;
        class.set_value(&go, Value::Boolean(true)).await.map_err(|e| e.to_string())?;
        let (jvm, line) = wait_line_text(jvm, "AllocWork done").await?;
        if let Some(p) = profiler {
            p.alloc_stop().await.map_err(|e| e.to_string())?;
            let report = p.alloc_report(true).await.map_err(|e| e.to_string())?;
            samples = Some(report.samples as f64);
        }
        class.set_value(&go, Value::Boolean(false)).await.map_err(|e| e.to_string())?;
        let _ = vm.dispose().await;
        finish(jvm).await?;
        line
    } else {
        let (jvm, line) = wait_line_text(jvm, "AllocWork done").await?;
        finish(jvm).await?;
        line
    };
    if let Some(file) = jfr_file {
        samples = Some(jfr_count(&file, "jdk.ObjectAllocationSample")?);
        let _ = std::fs::remove_file(&file);
    }
    let words: Vec<&str> = done.split_whitespace().collect();
    let (Some(sum), Some(total)) = (words.get(2), words.get(4).and_then(|t| t.parse::<f64>().ok())) else {
        return Err(format!("{config}: unexpected line {done:?}"));
    };
    Ok((WorkResult { total_ms: total, samples }, sum.to_string()))
}
