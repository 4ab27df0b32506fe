//! The JDK copy whose `lib/libjdwp.so` is the agent under test, and the check that it is used.
//!
//! `-agentlib:jdwp` loads `<java.home>/lib/libjdwp.so`, and every suite starts its debuggees with
//! `-agentlib:jdwp`, so replacing that one file in a JDK copy puts our agent under every test
//! without touching the tests. Two files must be real copies, not symlinks: the launchers in `bin/`
//! (they find their JDK from `/proc/self/exe`, which resolves symlinks) and `lib/server/libjvm.so`
//! (HotSpot derives `java.home` from libjvm's real path). Everything else is a symlink.

use std::{
    fs,
    io::{BufRead, BufReader},
    os::unix::fs::symlink,
    path::{Path, PathBuf},
    process::{Command, Stdio},
    sync::mpsc,
    time::Duration,
};

use super::{target_dir, workspace_root};
use crate::process::{self, Context, Result};

/// How long the verification debuggee may take to start listening.
const VERIFY_TIMEOUT: Duration = Duration::from_secs(60);

/// `cargo build --release -p jdwp-agent`; returns `target/release/libjdwp_agent.so`.
pub fn build_our_agent() -> Result<PathBuf> {
    println!("== building our agent");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.args(["build", "--release", "-p", "jdwp-agent"]).current_dir(workspace_root());
    process::run(&mut cmd)?;
    let lib = target_dir().join("release").join("libjdwp_agent.so");
    if !lib.is_file() {
        return Err(format!("{} was not built", lib.display()));
    }
    Ok(lib)
}

/// (Re)creates `copy` from `jdk`: real `bin/*` and `lib/server/libjvm.so`, `lib/libjdwp.so` a copy
/// of `agent` (or, without one, a symlink to the JDK's own), symlinks for the rest.
pub fn make_copy(jdk: &Path, copy: &Path, agent: Option<&Path>) -> Result<()> {
    println!(
        "== JDK copy {} (libjdwp.so: {})",
        copy.display(),
        agent.map_or("the JDK's own".into(), |a| a.display().to_string())
    );
    let tmp = copy.with_extension(format!("tmp-{}", std::process::id()));
    let _ = fs::remove_dir_all(&tmp);
    populate(jdk, &tmp, agent).inspect_err(|_| {
        let _ = fs::remove_dir_all(&tmp);
    })?;
    if copy.exists() {
        fs::remove_dir_all(copy).ctx(|| format!("removing the old {}", copy.display()))?;
    }
    fs::rename(&tmp, copy).ctx(|| format!("moving {} to {}", tmp.display(), copy.display()))
}

fn populate(jdk: &Path, copy: &Path, agent: Option<&Path>) -> Result<()> {
    mkdir(copy)?;
    for entry in read_dir(jdk)? {
        let name = entry.file_name().expect("read_dir entries have names").to_owned();
        let dest = copy.join(&name);
        match name.to_str() {
            Some("bin") => {
                mkdir(&dest)?;
                for tool in read_dir(&entry)? {
                    copy_file(&tool, &dest.join(tool.file_name().expect("named")))?;
                }
            }
            Some("lib") => {
                mkdir(&dest)?;
                for item in read_dir(&entry)? {
                    let item_name = item.file_name().expect("named");
                    let item_dest = dest.join(item_name);
                    match item_name.to_str() {
                        Some("server") => {
                            mkdir(&item_dest)?;
                            for f in read_dir(&item)? {
                                let f_dest = item_dest.join(f.file_name().expect("named"));
                                if f.file_name().is_some_and(|n| n == "libjvm.so") {
                                    copy_file(&f, &f_dest)?;
                                } else {
                                    link(&f, &f_dest)?;
                                }
                            }
                        }
                        Some("libjdwp.so") => match agent {
                            Some(agent) => copy_file(agent, &item_dest)?,
                            None => link(&item, &item_dest)?,
                        },
                        _ => link(&item, &item_dest)?,
                    }
                }
            }
            _ => link(&entry, &dest)?,
        }
    }
    Ok(())
}

fn read_dir(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut entries: Vec<PathBuf> = fs::read_dir(dir)
        .ctx(|| format!("reading {}", dir.display()))?
        .map(|e| e.map(|e| e.path()))
        .collect::<std::io::Result<_>>()
        .ctx(|| format!("reading {}", dir.display()))?;
    entries.sort();
    Ok(entries)
}

fn mkdir(dir: &Path) -> Result<()> {
    fs::create_dir_all(dir).ctx(|| format!("creating {}", dir.display()))
}

/// Copies file contents and permissions (following symlinks).
fn copy_file(from: &Path, to: &Path) -> Result<()> {
    fs::copy(from, to).map(drop).ctx(|| format!("copying {} to {}", from.display(), to.display()))
}

fn link(target: &Path, at: &Path) -> Result<()> {
    symlink(target, at).ctx(|| format!("linking {} to {}", at.display(), target.display()))
}

/// Starts a debuggee from the copy (`-agentlib:jdwp=...,suspend=y`), waits until its agent listens,
/// and checks in `/proc/PID/maps` that it runs the copy's libjvm and the intended libjdwp.so: the
/// copy's own file (a copy of `agent`), or the JDK's when `agent` is `None`.
pub fn verify_copy(jdk: &Path, copy: &Path, agent: Option<&Path>) -> Result<()> {
    let java = copy.join("bin/java");
    let mut cmd = Command::new(&java);
    cmd.arg("-agentlib:jdwp=transport=dt_socket,server=y,suspend=y,address=127.0.0.1:0")
        .arg("-version")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for var in ["JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS"] {
        cmd.env_remove(var);
    }
    let line = process::shown(&cmd);
    let mut child = cmd.spawn().ctx(|| format!("starting `{line}`"))?;
    let pid = child.id();
    let (tx, rx) = mpsc::channel::<String>();
    for stream in [
        Box::new(child.stdout.take().expect("piped")) as Box<dyn std::io::Read + Send>,
        Box::new(child.stderr.take().expect("piped")),
    ] {
        let tx = tx.clone();
        std::thread::spawn(move || {
            for l in BufReader::new(stream).lines().map_while(std::io::Result::ok) {
                if tx.send(l).is_err() {
                    break;
                }
            }
        });
    }
    drop(tx);
    let mut seen = Vec::new();
    let listening = loop {
        match rx.recv_timeout(VERIFY_TIMEOUT) {
            Ok(l) if l.contains("Listening for transport") => break true,
            Ok(l) => seen.push(l),
            Err(_) => break false,
        }
    };
    let maps = fs::read_to_string(format!("/proc/{pid}/maps")).unwrap_or_default();
    let _ = child.kill();
    let _ = child.wait();
    if !listening {
        return Err(format!(
            "the debuggee `{line}` did not report a listening agent within {VERIFY_TIMEOUT:?}; output:\n{}",
            seen.join("\n")
        ));
    }
    let mapped: Vec<&str> = maps.lines().filter_map(|l| l.split_whitespace().nth(5)).collect();
    let libjvm = copy.join("lib/server/libjvm.so");
    if !mapped.iter().any(|p| Path::new(p) == libjvm) {
        return Err(format!("the debuggee does not map {} (is bin/java a real copy?)", libjvm.display()));
    }
    let want = match agent {
        Some(_) => copy.join("lib/libjdwp.so"),
        None => fs::canonicalize(jdk.join("lib/libjdwp.so")).ctx(|| "resolving the JDK's libjdwp.so".into())?,
    };
    let jdwp_maps: Vec<&&str> = mapped.iter().filter(|p| p.ends_with("/libjdwp.so")).collect();
    if !jdwp_maps.iter().any(|p| Path::new(p) == want) {
        return Err(format!("the debuggee maps {jdwp_maps:?}, not {}", want.display()));
    }
    if let Some(agent) = agent {
        let (a, b) =
            (fs::read(agent).ctx(|| "reading the agent".into())?, fs::read(&want).ctx(|| "reading the copy".into())?);
        if a != b {
            return Err(format!("{} differs from {}", want.display(), agent.display()));
        }
    }
    println!("verified: a debuggee started from the copy (pid {pid}) maps {} and {}", libjvm.display(), want.display());
    Ok(())
}

/// Kills the processes still running a program of the JDK copy once jtreg has ended: debuggees whose
/// test was stopped at its timeout outlive it (a debuggee stuck in a held event never exits). Processes
/// are matched by their executable's path, inside `copy`, which no other run shares. Returns their pids.
pub fn kill_leftovers(copy: &Path) -> Vec<u32> {
    let Ok(copy) = fs::canonicalize(copy) else { return Vec::new() };
    let Ok(entries) = fs::read_dir("/proc") else { return Vec::new() };
    let pids: Vec<u32> = entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| fs::read_link(format!("/proc/{pid}/exe")).is_ok_and(|exe| exe.starts_with(&copy)))
        .collect();
    for pid in &pids {
        let _ = Command::new("kill").args(["-KILL", &pid.to_string()]).status();
    }
    pids
}
