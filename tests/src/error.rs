//! The rig's error type.
//!
//! Errors carry everything needed to diagnose a CI failure from the message
//! alone (captured JVM output, javac diagnostics, the command line), because
//! a test typically just `unwrap()`s them.

use std::{io, path::PathBuf, sync::Arc, time::Duration};

/// Result alias for the rig.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What went wrong while compiling fixtures or running a JVM.
///
/// `Clone` so that [`crate::fixtures()`] can cache a failure and report it to
/// every test that asks, instead of retrying a broken compile in each one.
#[derive(Debug, Clone, thiserror::Error)]
pub enum Error {
    /// No JDK was found (neither `JAVA_HOME` nor `java`/`javac` on `PATH`).
    #[error("Java not found: {0} (set JAVA_HOME or put a JDK's bin/ on PATH)")]
    JavaNotFound(String),

    /// Our agent library is not where the test binary's profile keeps it.
    #[error("our agent is not built ({0} is missing): run `cargo build -p jdwp-agent`")]
    AgentNotBuilt(PathBuf),

    /// `javac` ran but rejected the sources.
    #[error("javac failed ({status}) compiling {sources}:\n{diagnostics}")]
    Compile {
        /// Exit status of javac, as text.
        status: String,
        /// The source directory that was compiled.
        sources: PathBuf,
        /// javac's stdout and stderr.
        diagnostics: String,
    },

    /// A file-system or process operation failed.
    #[error("{context}: {source}")]
    Io {
        /// What the rig was doing.
        context: String,
        /// The underlying error (shared so the error stays `Clone`).
        #[source]
        source: Arc<io::Error>,
    },

    /// The JVM's output ended (it exited or closed its streams) before the
    /// expected output appeared.
    #[error("JVM ended ({status}) before printing {expected}\ncommand: {command}\n{output}")]
    Exited {
        /// What the rig was waiting for.
        expected: String,
        /// Exit status, or "still running" if only the streams were closed.
        status: String,
        /// The JVM command line.
        command: String,
        /// Everything the JVM printed.
        output: String,
    },

    /// The expected output did not appear in time.
    #[error("timed out after {timeout:?} waiting for {expected}\ncommand: {command}\n{output}")]
    Timeout {
        /// What the rig was waiting for.
        expected: String,
        /// How long it waited.
        timeout: Duration,
        /// The JVM command line.
        command: String,
        /// Everything the JVM printed so far.
        output: String,
    },

    /// A fixture source lacks what a test looked for (e.g. a line marker).
    #[error("fixture {}: {problem}", file.display())]
    Fixture {
        /// The fixture source file.
        file: PathBuf,
        /// What is wrong.
        problem: String,
    },

    /// The agent's "Listening ..." line could not be parsed.
    #[error("cannot parse listen address from {line:?}")]
    BadListenLine {
        /// The offending line.
        line: String,
    },
}

impl Error {
    /// Wraps an `io::Error` with a description of what was being done.
    pub(crate) fn io(context: impl Into<String>, source: io::Error) -> Self {
        Error::Io { context: context.into(), source: Arc::new(source) }
    }
}

/// `.context(...)` for `io::Result`, mirroring the usual anyhow idiom.
pub(crate) trait IoContext<T> {
    fn context(self, what: impl FnOnce() -> String) -> Result<T>;
}

impl<T> IoContext<T> for io::Result<T> {
    fn context(self, what: impl FnOnce() -> String) -> Result<T> {
        self.map_err(|e| Error::io(what(), e))
    }
}
