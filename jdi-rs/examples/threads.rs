//! Prints every thread of a JVM with its stack, grouped by thread group: suspends all threads,
//! prints, and resumes them.
//!
//! ```text
//! # a JVM started with -agentlib:jdwp=transport=dt_socket,server=y,suspend=n,address=5005
//! cargo run -p jdi-rs --example threads -- --attach 127.0.0.1:5005
//! # launch a class and print its threads when a line is reached (or after --wait seconds)
//! cargo run -p jdi-rs --example threads -- --launch Threads --classpath DIR --break Threads:34
//! ```
//!
//! Exit status: 0 on success, 1 if something failed, 2 for a bad command line.

mod common;

use std::fmt::Write as _;
use std::process::ExitCode;
use std::time::Duration;

use common::{Args, Failure, Target};
use jdi::deadlock::frame_info;
use jdi::{Event, ThreadGroupReference, VirtualMachine};

const HELP: &str = "\
usage: threads (--attach HOST:PORT | --launch MAIN [--classpath CP] [--agentpath LIB] [-- ARGS...])
               [--break CLASS:LINE] [--wait SECONDS]
Prints every thread and its stack, by thread group.
";

#[tokio::main]
async fn main() -> ExitCode {
    common::finish("threads", run().await)
}

async fn run() -> Result<ExitCode, Failure> {
    let args = Args::parse(std::env::args().skip(1), &["--wait"], &["--help"])?;
    if args.has("--help") {
        print!("{HELP}");
        return Ok(ExitCode::SUCCESS);
    }
    let target = Target::from_args(&args)?;
    let wait: f64 = args.number("--wait", 1.0)?;
    let wait = Duration::try_from_secs_f64(wait).map_err(|_| Failure::usage("--wait wants seconds >= 0"))?;
    let break_at = args.value("--break").map(common::parse_break).transpose()?;

    let mut session = common::connect(&target).await?;
    if let Some((class, line)) = break_at {
        session.run_to_line(&class, line).await?;
    } else if matches!(target, Target::Launch(_)) {
        // Let the program get going; stop early if it ends.
        session.vm.resume().await?;
        let ended = match tokio::time::timeout(wait, session.events.next()).await {
            Ok(Some(set)) => set?.events.iter().any(|e| matches!(e, Event::VmDeath { .. })),
            Ok(None) => true,
            Err(_) => false,
        };
        if ended {
            return Err(Failure { message: "the program ended before its threads were listed".into(), code: 1 });
        }
    }
    session.vm.suspend().await?;
    let printed = print_all(&session.vm).await;
    let resumed = session.vm.resume().await;
    print!("{}", printed?);
    resumed?;
    if matches!(target, Target::Attach(_)) {
        let _ = session.vm.dispose().await;
    }
    Ok(ExitCode::SUCCESS)
}

/// Renders every top-level group and, recursively, its threads and subgroups.
async fn print_all(vm: &VirtualMachine) -> jdi::Result<String> {
    let mut out = String::new();
    // An explicit stack instead of recursion (async recursion needs boxing): (group, depth).
    let mut todo: Vec<(ThreadGroupReference, usize)> =
        vm.top_level_thread_groups().await?.into_iter().rev().map(|g| (g, 0)).collect();
    while let Some((group, depth)) = todo.pop() {
        let indent = "  ".repeat(depth);
        let _ = writeln!(out, "{indent}Thread group \"{}\":", group.name().await?);
        let (threads, groups) = group.children().await?;
        for thread in threads {
            let (status, suspended) = thread.status().await?;
            let suspended = if suspended { ", suspended" } else { "" };
            let status = format!("{status:?}").to_uppercase();
            let _ = writeln!(out, "{indent}  \"{}\" {status}{suspended}", thread.name().await?);
            for frame in thread.frames().await? {
                let _ = writeln!(out, "{indent}      at {}", frame_info(vm, frame.location()).await?);
            }
        }
        todo.extend(groups.into_iter().rev().map(|g| (g, depth + 1)));
    }
    Ok(out)
}
