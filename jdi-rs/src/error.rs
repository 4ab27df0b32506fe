//! The error type of every jdi-rs call.

use jdwp_protocol::{DecodeError, ErrorCode};
use jdwp_transports::TransportError;

/// Why a call failed. JDWP errors carry the command that failed, so a log line says what was asked.
#[derive(Debug, thiserror::Error)]
pub enum JdiError {
    /// The target VM answered with a JDWP error code.
    #[error("{command} failed: {code}")]
    Jdwp { command: &'static str, code: ErrorCode },
    /// A reply or event could not be decoded.
    #[error("malformed reply to {command}: {source}")]
    Decode {
        command: &'static str,
        #[source]
        source: DecodeError,
    },
    /// The connection is closed (the VM exited, or the debugger disposed it).
    #[error("the connection to the target VM is closed{}", reason.as_ref().map(|r| format!(": {r}")).unwrap_or_default())]
    Disconnected { reason: Option<String> },
    /// Connecting, the handshake or the transport failed.
    #[error(transparent)]
    Transport(#[from] TransportError),
    /// Something did not finish in time (a reply, a connection, an event).
    #[error("timed out {0}")]
    Timeout(String),
    /// Launching the target VM failed.
    #[error("launching the target VM: {0}")]
    Launch(String),
    /// The launched JVM exited before its agent connected; its `output` (stderr, then stdout,
    /// where HotSpot reports bad options and missing agents) usually says why.
    #[error(
        "the launched JVM exited ({status}) before its agent connected; command: {command}{}",
        output_suffix(output)
    )]
    ExitedBeforeConnecting { status: String, command: String, output: String },
    /// The target VM lacks a capability the operation needs.
    #[error("the target VM cannot {0}")]
    Unsupported(&'static str),
    /// A type an operation needs is not loaded (JDI's `ClassNotLoadedException`): resolving a
    /// field's, argument's or component's type that no loader has loaded yet. Holds its name.
    #[error("class {0} is not loaded")]
    ClassNotLoaded(String),
    /// A caller asked for something the mirror cannot give (wrong value type, bad argument).
    #[error("{0}")]
    InvalidArgument(String),
}

fn output_suffix(output: &str) -> String {
    let output = output.trim_end();
    if output.is_empty() { String::new() } else { format!("; its output:\n{output}") }
}

impl JdiError {
    /// The JDWP error code, when the VM refused the command.
    pub fn code(&self) -> Option<ErrorCode> {
        match self {
            JdiError::Jdwp { code, .. } => Some(*code),
            _ => None,
        }
    }

    /// The command the VM refused, for JDWP errors (`"ObjectReference.ReferenceType"`).
    pub fn command(&self) -> Option<&'static str> {
        match self {
            JdiError::Jdwp { command, .. } | JdiError::Decode { command, .. } => Some(command),
            _ => None,
        }
    }

    /// Whether the connection is gone (every later call fails the same way).
    pub fn is_disconnected(&self) -> bool {
        matches!(self, JdiError::Disconnected { .. })
    }

    /// Whether something timed out: a reply, connecting, the handshake or a launch.
    pub fn is_timeout(&self) -> bool {
        match self {
            JdiError::Timeout(_) => true,
            JdiError::Transport(e) => e.is_timeout(),
            _ => false,
        }
    }
}

pub type Result<T, E = JdiError> = std::result::Result<T, E>;
