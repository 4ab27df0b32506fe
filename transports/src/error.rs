//! The error type of every transport operation.

use std::io;
use std::time::Duration;

use crate::address::AddressError;
use crate::framing::FrameError;
use crate::handshake::HandshakeError;

/// Why listening, accepting, attaching, reading or writing failed.
#[derive(Debug, thiserror::Error)]
pub enum TransportError {
    /// The address string is not a valid `dt_socket` address, or its host did not resolve.
    #[error("invalid transport address: {0}")]
    Address(#[from] AddressError),
    /// The name is not a valid `dt_shmem` transport name.
    #[error("invalid shared memory transport name {name:?}: {reason}")]
    InvalidName {
        /// The name as given.
        name: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The peer did not complete the `JDWP-Handshake` exchange.
    #[error("JDWP handshake failed: {0}")]
    Handshake(#[from] HandshakeError),
    /// The byte stream is not valid JDWP framing (or a packet is too long to encode).
    #[error("malformed JDWP packet stream: {0}")]
    Frame(#[from] FrameError),
    /// The peer closed the connection in the middle of a packet.
    #[error("connection closed in the middle of a packet ({buffered} bytes of it received)")]
    TruncatedPacket {
        /// Bytes of the unfinished packet that had arrived.
        buffered: usize,
    },
    /// Accepting or attaching did not finish in time.
    #[error("{operation} timed out after {after:?}")]
    Timeout {
        /// What timed out, e.g. "accepting a debugger connection on 127.0.0.1:8000".
        operation: String,
        /// The timeout that expired.
        after: Duration,
    },
    /// A transport library (see [`crate::spi`]) reported an error: its code (`jdwpTransportError`)
    /// and the text of its `GetLastError`, shown as the JDK's agent shows them.
    #[error("transport error {code}: {message}")]
    Library {
        /// The `jdwpTransportError` code.
        code: i32,
        /// What `GetLastError` said (or that it said nothing).
        message: String,
    },
    /// An I/O error, with what was being done.
    #[error("{operation}: {source}")]
    Io {
        /// What was being done, e.g. "binding 127.0.0.1:8000".
        operation: String,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
}

impl TransportError {
    pub(crate) fn io(operation: impl Into<String>, source: io::Error) -> TransportError {
        TransportError::Io { operation: operation.into(), source }
    }

    /// Whether this is a timeout (of accepting, attaching, or the handshake).
    pub fn is_timeout(&self) -> bool {
        matches!(
            self,
            TransportError::Timeout { .. }
                | TransportError::Handshake(HandshakeError::Timeout { .. })
                | TransportError::Library { code: crate::spi::ERROR_TIMEOUT, .. }
        )
    }
}
