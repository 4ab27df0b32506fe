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
    /// A step did not finish in time.
    #[error("timed out {0}")]
    Timeout(String),
    /// Launching the target VM failed.
    #[error("launching the target VM: {0}")]
    Launch(String),
    /// A caller asked for something the mirror cannot give (wrong value type, bad argument).
    #[error("{0}")]
    InvalidArgument(String),
}

impl JdiError {
    /// The JDWP error code, when the VM refused the command.
    pub fn code(&self) -> Option<ErrorCode> {
        match self {
            JdiError::Jdwp { code, .. } => Some(*code),
            _ => None,
        }
    }
}

pub type Result<T, E = JdiError> = std::result::Result<T, E>;
