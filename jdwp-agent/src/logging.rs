//! Logging for the agent (our `logfile`/`loglevel` options), through `tracing`.
//!
//! Nothing is installed unless one of the options asks for it: an agent must not print into the
//! debuggee's output on its own.

use std::sync::Mutex;

use crate::options::{LogLevel, Options};

pub fn init(options: &Options) {
    let level = match (options.loglevel, &options.logfile) {
        (Some(LogLevel::Off), _) | (None, None) => return,
        (Some(level), _) => level,
        (None, Some(_)) => LogLevel::Info,
    };
    let filter = match level {
        LogLevel::Off => return,
        LogLevel::Error => tracing::Level::ERROR,
        LogLevel::Warn => tracing::Level::WARN,
        LogLevel::Info => tracing::Level::INFO,
        LogLevel::Debug => tracing::Level::DEBUG,
        LogLevel::Trace => tracing::Level::TRACE,
    };
    let builder = tracing_subscriber::fmt().with_max_level(filter).with_ansi(false).with_thread_names(true);
    let result = match &options.logfile {
        Some(path) => match std::fs::OpenOptions::new().create(true).append(true).open(path) {
            Ok(file) => builder.with_writer(Mutex::new(file)).try_init(),
            Err(e) => {
                eprintln!("WARNING: JDWP: cannot open log file {path}: {e}");
                return;
            }
        },
        None => builder.with_writer(std::io::stderr).try_init(),
    };
    if result.is_err() {
        eprintln!("WARNING: JDWP: a logger is already installed; agent logging stays off");
    }
}
