//! Finds monitor deadlocks in a JVM using only standard JDWP commands: suspend all, each
//! thread's contended monitor, each monitor's owner, a cycle search, then each cycle's threads,
//! locks (type and identity) and stacks. `java.util.concurrent` locks are not monitors and are
//! not seen.
//!
//! ```text
//! # a JVM started with -agentlib:jdwp=transport=dt_socket,server=y,suspend=n,address=5005
//! cargo run -p jdi-rs --example deadlocks -- --attach 127.0.0.1:5005
//! # launch a class, let it run (up to --wait seconds, default 10) until a deadlock shows
//! cargo run -p jdi-rs --example deadlocks -- --launch Deadlock --classpath DIR [--wait 10]
//! # or look exactly when a line is reached
//! cargo run -p jdi-rs --example deadlocks -- --launch Deadlock --classpath DIR --break Deadlock:61
//! ```
//!
//! Exit status: 3 if a deadlock was found, 0 if not, 1 if something failed, 2 for a bad command
//! line. A launched JVM is killed on exit; an attached one is left running.

mod common;

use std::process::ExitCode;
use std::time::Duration;

use common::{Args, Failure, Session, Target};
use jdi::Event;
use jdi::deadlock::{Deadlock, find_deadlocks};

const HELP: &str = "\
usage: deadlocks (--attach HOST:PORT | --launch MAIN [--classpath CP] [--agentpath LIB] [-- ARGS...])
                 [--break CLASS:LINE] [--wait SECONDS]
Finds monitor deadlocks. Exit status: 3 found, 0 none, 1 error, 2 usage.
";

/// Exit status when a deadlock was found.
const FOUND: u8 = 3;

/// How often a launched program is checked while it runs.
const POLL: Duration = Duration::from_millis(200);

#[tokio::main]
async fn main() -> ExitCode {
    common::finish("deadlocks", run().await)
}

async fn run() -> Result<ExitCode, Failure> {
    let args = Args::parse(std::env::args().skip(1), &["--wait"], &["--help"])?;
    if args.has("--help") {
        print!("{HELP}");
        return Ok(ExitCode::SUCCESS);
    }
    let target = Target::from_args(&args)?;
    let wait: f64 = args.number("--wait", 10.0)?;
    let wait = Duration::try_from_secs_f64(wait).map_err(|_| Failure::usage("--wait wants seconds >= 0"))?;
    let break_at = args.value("--break").map(common::parse_break).transpose()?;

    let mut session = common::connect(&target).await?;
    let deadlocks = match (&target, break_at) {
        (_, Some((class, line))) => {
            session.run_to_line(&class, line).await?;
            find_deadlocks(&session.vm).await?
        }
        (Target::Attach(_), None) => find_deadlocks(&session.vm).await?,
        (Target::Launch(_), None) => watch(&mut session, wait).await?,
    };
    for deadlock in &deadlocks {
        println!("{deadlock}");
    }
    if let Some(process) = session.process.as_ref().filter(|_| session.vm.connection().is_closed()) {
        // The program ended by itself: say how, since that may be why nothing was found.
        if let Ok(Ok(status)) = tokio::time::timeout(Duration::from_secs(2), process.wait()).await {
            eprintln!("deadlocks: the program exited ({status})");
        }
    }
    let code = if deadlocks.is_empty() {
        println!("No deadlock found.");
        ExitCode::SUCCESS
    } else {
        println!("Found {} deadlock(s).", deadlocks.len());
        ExitCode::from(FOUND)
    };
    if matches!(target, Target::Attach(_)) {
        // Leave the attached VM running as it was.
        let _ = session.vm.dispose().await;
    }
    Ok(code)
}

/// Lets a launched program run, looking for a deadlock every [`POLL`] until one shows, the
/// program ends, or `wait` passes.
async fn watch(session: &mut Session, wait: Duration) -> Result<Vec<Deadlock>, Failure> {
    session.vm.resume().await?;
    let deadline = tokio::time::Instant::now() + wait;
    loop {
        tokio::select! {
            set = session.events.next() => match set {
                None => return Ok(Vec::new()),
                Some(set) => {
                    let set = set?;
                    if set.events.iter().any(|e| matches!(e, Event::VmDeath { .. })) {
                        return Ok(Vec::new());
                    }
                    set.resume().await?;
                }
            },
            () = tokio::time::sleep(POLL) => match find_deadlocks(&session.vm).await {
                Ok(found) if !found.is_empty() => return Ok(found),
                Ok(_) if tokio::time::Instant::now() >= deadline => return Ok(Vec::new()),
                Ok(_) => {}
                // The program ended while we looked: the connection closed, or the agent, with
                // the VM dying, answered VM_DEAD before closing it.
                Err(e) if e.is_disconnected() || e.code() == Some(jdi::protocol::ErrorCode::VM_DEAD) => {
                    return Ok(Vec::new());
                }
                Err(e) => return Err(e.into()),
            },
        }
    }
}
