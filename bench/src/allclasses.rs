//! `bench allclasses`: the debugger's first `allClasses`, our agent against the JDK's, side by side
//! in one run, on the wire (no client library in between).
//!
//! ```text
//! cargo run --release -p bench -- allclasses [--runs 21] [--agent-lib PATH] [--before PATH] [--warm N]
//! ```
//!
//! For each run and each agent (the order rotates), a fresh `tests/fixtures/Hello.java` starts
//! suspended (`suspend=y`) under that agent; a raw JDWP session attaches, reads the VM start event
//! and, with the VM still suspended there (about 450 classes loaded), times from writing each command
//! to reading its reply:
//!
//! - `first`: the first `VirtualMachine.AllClassesWithGeneric` (what JDI's `allClasses()` sends):
//!   every class gets its ID here;
//! - `warm`: the same command `--warm` times more (median), every class already known;
//! - `plain`: `VirtualMachine.AllClasses` once (jdb-style clients without generics);
//! - `by-sig`: `VirtualMachine.ClassesBySignature` of `Ljava/lang/String;` once.
//!
//! The replies of both agents must list the same number of classes and find `String` once. The
//! table gives medians over the runs, and the median of the per-run ratios ours / the JDK's (each run
//! measures both agents within a second of each other, so that ratio follows the machine's load
//! least). `--before PATH` adds a third side, another build of our agent (say main's before a
//! change), to compare before and after in the same run.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use jdwp_protocol::commands::virtual_machine as vm;
use jdwp_protocol::{Command, ErrorCode, codec};
use jdwp_transports::{Packet, PacketKind};
use test_rig::wire::RawSession;
use test_rig::{Agent, DEFAULT_JDK_AGENT_OPTIONS, Debuggee};

use crate::median;

const T: Duration = Duration::from_secs(60);
const USAGE: &str = "usage: bench allclasses [--runs N] [--warm N] [--agent-lib PATH] [--before PATH]";

/// One side of the comparison.
#[derive(Clone)]
struct Side {
    name: &'static str,
    agent: Agent,
}

/// One side's figures from one run (milliseconds, and the class count).
#[derive(Clone, Copy, Default)]
struct Measured {
    first: f64,
    warm: f64,
    plain: f64,
    by_sig: f64,
    classes: usize,
}

pub fn main(argv: &[String]) -> Result<(), String> {
    let (mut runs, mut warm) = (21u32, 9u32);
    let (mut agent_lib, mut before): (Option<PathBuf>, Option<PathBuf>) = (None, None);
    let mut args = argv.iter();
    while let Some(flag) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{flag} needs a value\n{USAGE}"));
        let number = |v: &String| -> Result<u32, String> {
            v.parse().ok().filter(|&n| n >= 1).ok_or_else(|| format!("{flag}: {v} is not a positive number\n{USAGE}"))
        };
        match flag.as_str() {
            "--runs" => runs = number(value()?)?,
            "--warm" => warm = number(value()?)?,
            "--agent-lib" => agent_lib = Some(value()?.into()),
            "--before" => before = Some(value()?.into()),
            _ => return Err(format!("unknown option {flag}\n{USAGE}")),
        }
    }
    let lib = match agent_lib {
        Some(lib) => lib,
        None => crate::agent::build_agent()?,
    };
    let mut sides = vec![
        Side { name: "jdk", agent: Agent::jdk_default() },
        Side { name: "ours", agent: Agent::path(&lib, DEFAULT_JDK_AGENT_OPTIONS) },
    ];
    if let Some(before) = before {
        sides.push(Side { name: "before", agent: Agent::path(before, DEFAULT_JDK_AGENT_OPTIONS) });
    }
    test_rig::fixtures().map_err(|e| e.to_string())?;
    let load_start = crate::agent::load_average();
    let mut results: Vec<Vec<Measured>> = vec![Vec::new(); sides.len()];
    for run in 0..runs {
        let mut order: Vec<usize> = (0..sides.len()).collect();
        order.rotate_left(run as usize % sides.len());
        for i in order {
            let m = one_run(&sides[i], warm)?;
            eprintln!(
                "bench allclasses: run {}/{runs} {:<6} {} classes: first {:.2} ms, warm {:.2}, plain {:.2}, by-sig {:.3}",
                run + 1,
                sides[i].name,
                m.classes,
                m.first,
                m.warm,
                m.plain,
                m.by_sig
            );
            results[i].push(m);
        }
        let counts: Vec<usize> = results.iter().map(|r| r[run as usize].classes).collect();
        if counts.iter().any(|&c| c != counts[0]) {
            eprintln!("bench allclasses: run {}: the agents list different numbers of classes: {counts:?}", run + 1);
        }
    }
    print_table(&sides, &results, runs, warm, &load_start);
    Ok(())
}

/// Starts a suspended debuggee under `side`'s agent, attaches and times the commands.
fn one_run(side: &Side, warm: u32) -> Result<Measured, String> {
    let jvm =
        Debuggee::builder("Hello").agent(side.agent.clone()).spawn().map_err(|e| format!("starting Hello: {e}"))?;
    let mut s = RawSession::attach(&jvm.address().to_string(), T).map_err(|e| e.to_string())?;
    s.next_event().map_err(|e| format!("waiting for the VM start event: {e}"))?;
    let (first, reply) = timed(&mut s, &vm::AllClassesWithGeneric {})?;
    let classes = reply.classes.len();
    if classes < 100 {
        return Err(format!("{}: only {classes} classes listed", side.name));
    }
    let mut warms = Vec::new();
    for _ in 0..warm {
        let (ms, again) = timed(&mut s, &vm::AllClassesWithGeneric {})?;
        if again.classes.len() != classes {
            return Err(format!("{}: {} classes, then {}", side.name, classes, again.classes.len()));
        }
        warms.push(ms);
    }
    let (plain, plain_reply) = timed(&mut s, &vm::AllClasses {})?;
    if plain_reply.classes.len() != classes {
        return Err(format!(
            "{}: AllClasses lists {}, AllClassesWithGeneric {classes}",
            side.name,
            plain_reply.classes.len()
        ));
    }
    let (by_sig, found) = timed(&mut s, &vm::ClassesBySignature { signature: "Ljava/lang/String;".into() })?;
    if found.classes.len() != 1 {
        return Err(format!("{}: ClassesBySignature found {} String classes", side.name, found.classes.len()));
    }
    let _ = s.send(&vm::Exit { exit_code: 0 });
    s.close();
    drop(jvm);
    Ok(Measured { first, warm: median(warms), plain, by_sig, classes })
}

/// Sends `command`, times until its reply has arrived (not decoding it), then decodes it.
fn timed<C: Command>(s: &mut RawSession, command: &C) -> Result<(f64, C::Reply), String> {
    let sizes = s.id_sizes();
    let packet = Packet::command(0, C::SET, C::CMD, codec::encode_body(command, sizes));
    let start = Instant::now();
    let reply = s.send_raw(packet).map_err(|e| format!("{}: {e}", C::QUALIFIED_NAME))?;
    let ms = start.elapsed().as_secs_f64() * 1e3;
    match reply.kind {
        PacketKind::Reply { error } if error == ErrorCode::NONE => {
            let decoded = codec::decode_body(&reply.body, sizes).map_err(|e| format!("{}: {e}", C::QUALIFIED_NAME))?;
            Ok((ms, decoded))
        }
        PacketKind::Reply { error } => Err(format!("{} answered {error:?}", C::QUALIFIED_NAME)),
        PacketKind::Command { .. } => Err(format!("{}: a command instead of the reply", C::QUALIFIED_NAME)),
    }
}

/// Reads one figure of a [`Measured`].
type Getter = fn(&Measured) -> f64;

fn print_table(sides: &[Side], results: &[Vec<Measured>], runs: u32, warm: u32, load_start: &str) {
    let classes = results[0].first().map_or(0, |m| m.classes);
    println!(
        "bench allclasses: {classes} classes (Hello at its VM start), medians of {runs} run(s), ms; load {load_start} at the start, {} at the end",
        crate::agent::load_average()
    );
    let mut header = format!("{:<44}", "metric (ms, lower is better)");
    for side in sides {
        header += &format!(" {:>9}", side.name);
    }
    header += &format!(" {:>12} {:>12}", "ours/jdk", "per-run");
    if sides.len() > 2 {
        header += &format!(" {:>12}", "before/jdk");
    }
    println!("{header}");
    let metrics: [(String, Getter); 4] = [
        ("first AllClassesWithGeneric".into(), |m| m.first),
        (format!("AllClassesWithGeneric again (median of {warm})"), |m| m.warm),
        ("AllClasses (after)".into(), |m| m.plain),
        ("ClassesBySignature String (after)".into(), |m| m.by_sig),
    ];
    for (name, get) in metrics {
        let medians: Vec<f64> = results.iter().map(|r| median(r.iter().map(get).collect())).collect();
        let per_run = |i: usize| median(results[i].iter().zip(&results[0]).map(|(a, j)| get(a) / get(j)).collect());
        let mut line = format!("{name:<44}");
        for m in &medians {
            line += &format!(" {m:>9.3}");
        }
        line += &format!(" {:>11.2}x {:>11.2}x", medians[1] / medians[0], per_run(1));
        if sides.len() > 2 {
            line += &format!(" {:>11.2}x", per_run(2));
        }
        println!("{line}");
    }
    println!("(ours/jdk: ratio of the medians; per-run: median of the per-run ratios; before/jdk: per-run)");
}
