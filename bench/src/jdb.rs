//! `bench jdb`: jdb-rs against the JDK's jdb, side by side in one run: time from start to the
//! first prompt in attach mode, and the peak RSS of a short session (attach, first prompt,
//! `threads`, `where all`, `quit`).
//!
//! ```text
//! cargo run --release -p bench -- jdb [--runs 10]
//! ```
//!
//! Each session attaches to a fresh debuggee (`tests/fixtures/Deadlock.java`, which stays alive
//! with four threads: main and three blocked on each other) under the JDK's agent, started before
//! the clock starts. The runs alternate between the two debuggers. The time runs from `spawn` to the first prompt (`> `) on the debugger's stdout;
//! the peak RSS is `ru_maxrss` of the debugger process from `wait4` (jdb runs its JVM in the
//! launcher process, so that counts all of it). jdb-rs runs as shipped, the `dist` profile
//! (`cargo build --profile dist -p jdb-rs`: size-optimized, LTO), and as the plain release build.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use test_rig::{Agent, Debuggee};

const TIMEOUT: Duration = Duration::from_secs(120);

/// The commands after the first prompt, before the debugger's stdin closes.
const SESSION: &[&str] = &["threads", "where all", "quit"];

struct Sample {
    first_prompt: Duration,
    peak_rss_kib: u64,
}

pub fn main(argv: &[String]) -> Result<(), String> {
    let mut runs = 10u32;
    let mut it = argv.iter();
    while let Some(flag) = it.next() {
        match flag.as_str() {
            "--runs" => {
                let v = it.next().ok_or("--runs needs a value")?;
                runs =
                    v.parse().ok().filter(|&n| n > 0).ok_or_else(|| format!("--runs: not a positive number: {v}"))?;
            }
            "--help" | "-h" => {
                println!("usage: bench jdb [--runs N]   (jdb-rs vs jdb: first prompt in attach mode, peak RSS)");
                return Ok(());
            }
            other => return Err(format!("unknown option {other} (try --help)")),
        }
    }
    let jdb_rs = build_jdb_rs("dist")?;
    let jdb_rs_release = build_jdb_rs("release")?;
    let jdb = test_rig::java_tool("jdb").map_err(|e| e.to_string())?;
    let programs = [&jdb, &jdb_rs, &jdb_rs_release];
    let mut samples: [Vec<Sample>; 3] = Default::default();
    // One unmeasured run of each first: page cache, class data sharing archive.
    for program in programs {
        session(program)?;
    }
    for run in 0..runs as usize {
        // Rotate the order so that no program always runs right after another.
        for k in 0..programs.len() {
            let i = (run + k) % programs.len();
            samples[i].push(session(programs[i])?);
        }
        eprintln!("bench jdb: run {}/{runs} done", run + 1);
    }

    let ms = |v: &[Sample]| median(v.iter().map(|s| s.first_prompt.as_secs_f64() * 1e3).collect());
    let mib = |v: &[Sample]| median(v.iter().map(|s| s.peak_rss_kib as f64 / 1024.0).collect());
    let [jdb_s, dist_s, release_s] = &samples;
    println!("jdb-rs against jdb (attach mode, medians of {runs} runs; load average {})", load_average());
    println!("jdb-rs: the `dist` profile (how it is shipped); in brackets the plain `release` build");
    println!();
    println!("| measure | jdb | jdb-rs | jdb-rs / jdb | goal | met |");
    println!("|---|---:|---:|---:|---|---|");
    row("start to first prompt (ms), lower is better", ms(jdb_s), ms(dist_s), ms(release_s));
    row("peak RSS of the session (MiB), lower is better", mib(jdb_s), mib(dist_s), mib(release_s));
    Ok(())
}

fn row(what: &str, jdb: f64, ours: f64, release: f64) {
    let ratio = ours / jdb;
    let met = if ratio <= 0.1 { "yes" } else { "**no**" };
    println!(
        "| {what} | {jdb:.1} | {ours:.1} ({release:.1}) | {ratio:.3}x ({:.3}x) | jdb-rs/jdb <= 0.1x | {met} |",
        release / jdb
    );
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 }
}

/// One debugger session against a fresh debuggee (the JDK's agent needs a moment to listen
/// again after a detach, and a debugger arriving then is refused): spawn the debugger, wait for
/// the first prompt, run [`SESSION`], reap it with rusage.
fn session(program: &Path) -> Result<Sample, String> {
    let options = "transport=dt_socket,server=y,suspend=n,address=127.0.0.1:0";
    let jvm = Debuggee::builder("Deadlock").agent(Agent::jdk(options)).spawn().map_err(|e| e.to_string())?;
    jvm.wait_for_line("deadlocked", TIMEOUT).map_err(|e| e.to_string())?;
    let address = jvm.address().to_string();
    let start = Instant::now();
    let mut child = Command::new(program)
        .args(["-attach", &address])
        .env("NO_COLOR", "1")
        .env_remove("JAVA_TOOL_OPTIONS")
        .env_remove("_JAVA_OPTIONS")
        .env_remove("JDK_JAVA_OPTIONS")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("starting {}: {e}", program.display()))?;
    let pid = child.id() as libc::pid_t;
    let mut stdout = child.stdout.take().ok_or("no stdout")?;
    let (tx, rx) = mpsc::channel::<Vec<u8>>();
    std::thread::spawn(move || {
        let mut buf = [0u8; 8192];
        while let Ok(n) = stdout.read(&mut buf) {
            if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                break;
            }
        }
    });
    let mut text = Vec::new();
    let deadline = start + TIMEOUT;
    let first_prompt = loop {
        if text.ends_with(b"> ") {
            break start.elapsed();
        }
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(chunk) => text.extend_from_slice(&chunk),
            Err(_) => {
                // SAFETY: kill(2) of our own, not yet reaped child.
                unsafe { libc::kill(pid, libc::SIGKILL) };
                let _ = child.wait();
                return Err(format!(
                    "{} showed no prompt; output:\n{}",
                    program.display(),
                    String::from_utf8_lossy(&text)
                ));
            }
        }
    };
    {
        let mut stdin = child.stdin.take().ok_or("no stdin")?;
        for cmd in SESSION {
            // A debugger that already quit closes the pipe: not an error here.
            let _ = writeln!(stdin, "{cmd}");
        }
    }
    // Keep draining stdout so the debugger never blocks on a full pipe.
    let drain = std::thread::spawn(move || while rx.recv_timeout(TIMEOUT).is_ok() {});
    let peak_rss_kib = reap_with_rusage(pid, program)?;
    // `Child` would reap again on wait(); it is already reaped, so just forget it.
    std::mem::forget(child);
    let _ = drain.join();
    Ok(Sample { first_prompt, peak_rss_kib })
}

/// Waits (up to [`TIMEOUT`]) for `pid` and returns its peak RSS in KiB.
fn reap_with_rusage(pid: libc::pid_t, program: &Path) -> Result<u64, String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut status = 0;
        // SAFETY: rusage is plain data, zero is a valid value; wait4 fills it in.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: our own child, reaped only here.
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        let _ = tx.send(if r == pid { Ok(usage.ru_maxrss as u64) } else { Err(std::io::Error::last_os_error()) });
    });
    match rx.recv_timeout(TIMEOUT) {
        Ok(Ok(kib)) => Ok(kib),
        Ok(Err(e)) => Err(format!("wait4: {e}")),
        Err(_) => {
            // SAFETY: kill(2) of our own child, which the thread above has not reaped.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            Err(format!("{} did not exit after quit", program.display()))
        }
    }
}

/// Builds jdb-rs in `profile` and returns its path.
fn build_jdb_rs(profile: &str) -> Result<PathBuf, String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().ok_or("no workspace directory")?;
    eprintln!("bench jdb: cargo build --profile {profile} -p jdb-rs");
    let status = Command::new(cargo)
        .args(["build", "--profile", profile, "-p", "jdb-rs"])
        .current_dir(workspace)
        .status()
        .map_err(|e| format!("running cargo: {e}"))?;
    if !status.success() {
        return Err(format!("cargo build --profile {profile} -p jdb-rs failed ({status})"));
    }
    let target = test_rig::fixtures_cache_root().parent().map(Path::to_path_buf).ok_or("no target directory")?;
    Ok(target.join(profile).join("jdb-rs"))
}

fn load_average() -> String {
    let text = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    text.split_whitespace().take(3).collect::<Vec<_>>().join(" ")
}
