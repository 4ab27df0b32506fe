//! Scripted use: `-c "cmd; cmd"`, `--script FILE`, and commands on a standard input that is not
//! a terminal. Each command runs to completion (for `run`, `cont` and steps: until the next
//! stop) before the next one starts.

use tokio::io::{AsyncBufReadExt, BufReader};

use crate::session::{Flow, Session};

/// Runs `commands` in order; stops early if one quits or the VM ends.
pub async fn run_commands(session: &mut Session, commands: &[String]) {
    for cmd in commands {
        session.drain_pending_events().await;
        if session.status.ended() {
            break;
        }
        if session.execute_line(cmd).await == Flow::Quit || session.status.ended() {
            break;
        }
    }
}

/// Reads commands from standard input (not a terminal), printing jdb's prompts, and handles
/// events that arrive while it waits for the next line.
pub async fn run_stdin(session: &mut Session) {
    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    session.print_prompt().await;
    loop {
        let line = tokio::select! {
            line = lines.next_line() => line,
            set = session.next_event_set() => {
                session.handle_async(set).await;
                if session.status.ended() {
                    return;
                }
                continue;
            }
        };
        match line {
            Ok(Some(line)) => {
                if session.execute_line(&line).await == Flow::Quit || session.status.ended() {
                    return;
                }
                session.print_prompt().await;
            }
            Ok(None) | Err(_) => {
                session.out.line("Input stream closed.");
                return;
            }
        }
    }
}
