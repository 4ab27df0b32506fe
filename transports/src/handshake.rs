//! The `JDWP-Handshake` exchange that opens every JDWP connection.
//!
//! Right after the transport connects, the debugger sends the 14 ASCII bytes `JDWP-Handshake` and
//! the VM answers with the same 14 bytes; only then do packets flow. The exchange is the same
//! whichever side listened and whichever attached.
//!
//! Both readers here compare bytes as they arrive and fail on the first wrong one (so a peer that
//! speaks another protocol is rejected without waiting for 14 bytes), and never read past the
//! handshake, so a packet sent right behind it is left for the packet reader. Timeouts bound the
//! whole exchange, not each read.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use crate::deadline::Deadline;

/// The handshake bytes, sent by the debugger and echoed by the VM.
pub const HANDSHAKE: &[u8; 14] = b"JDWP-Handshake";

/// Why the handshake failed.
#[derive(Debug, thiserror::Error)]
pub enum HandshakeError {
    /// The peer sent something else (shown with non-printable bytes escaped).
    #[error("expected \"JDWP-Handshake\" but received \"{received}\"")]
    Mismatch {
        /// The bytes received up to and including the first wrong one, escaped.
        received: String,
    },
    /// The peer closed the connection before the exchange completed.
    #[error("peer closed the connection during the handshake (after sending \"{received}\")")]
    Closed {
        /// The handshake bytes received before the close, escaped.
        received: String,
    },
    /// The exchange did not complete in time.
    #[error("no complete handshake within {after:?} (received so far: \"{received}\")")]
    Timeout {
        /// The timeout that expired.
        after: Duration,
        /// The handshake bytes received before the timeout, escaped.
        received: String,
    },
    /// Another I/O error.
    #[error("I/O error during the handshake: {0}")]
    Io(#[source] io::Error),
}

/// The bytes of the peer's handshake received so far.
struct Progress {
    got: [u8; HANDSHAKE.len()],
    len: usize,
}

impl Progress {
    fn new() -> Progress {
        Progress { got: [0; HANDSHAKE.len()], len: 0 }
    }

    fn done(&self) -> bool {
        self.len == HANDSHAKE.len()
    }

    fn spare(&mut self) -> &mut [u8] {
        &mut self.got[self.len..]
    }

    /// Records `n` bytes just read into `spare()`, failing at the first one that is wrong.
    fn advance(&mut self, n: usize) -> Result<(), HandshakeError> {
        if n == 0 {
            return Err(HandshakeError::Closed { received: self.received() });
        }
        let start = self.len;
        self.len += n;
        if let Some(bad) = (start..self.len).find(|&i| self.got[i] != HANDSHAKE[i]) {
            return Err(HandshakeError::Mismatch { received: escape(&self.got[..=bad]) });
        }
        Ok(())
    }

    fn received(&self) -> String {
        escape(&self.got[..self.len])
    }
}

fn escape(bytes: &[u8]) -> String {
    bytes.escape_ascii().to_string()
}

fn is_timeout(e: &io::Error) -> bool {
    matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut)
}

fn is_closed(e: &io::Error) -> bool {
    matches!(e.kind(), io::ErrorKind::BrokenPipe | io::ErrorKind::ConnectionReset | io::ErrorKind::ConnectionAborted)
}

fn timeout_error(deadline: Option<Deadline>, progress: &Progress) -> HandshakeError {
    HandshakeError::Timeout { after: deadline.map_or(Duration::ZERO, |d| d.timeout), received: progress.received() }
}

/// Debugger side, blocking: sends the handshake and waits for the echo.
///
/// `timeout` bounds the whole exchange (`None`: wait forever). The stream's own read and write
/// timeouts are restored afterwards.
pub fn handshake_as_debugger(stream: &TcpStream, timeout: Option<Duration>) -> Result<(), HandshakeError> {
    exchange(stream, Deadline::after(timeout), true)
}

/// VM side, blocking: waits for the debugger's handshake and echoes it.
///
/// `timeout` bounds the whole exchange (`None`: wait forever). The stream's own read and write
/// timeouts are restored afterwards.
pub fn handshake_as_vm(stream: &TcpStream, timeout: Option<Duration>) -> Result<(), HandshakeError> {
    exchange(stream, Deadline::after(timeout), false)
}

pub(crate) fn exchange(stream: &TcpStream, deadline: Option<Deadline>, debugger: bool) -> Result<(), HandshakeError> {
    let saved_read = stream.read_timeout().map_err(HandshakeError::Io)?;
    let saved_write = stream.write_timeout().map_err(HandshakeError::Io)?;
    let mut progress = Progress::new();
    let result = if debugger {
        send(stream, deadline, &progress).and_then(|()| receive(stream, deadline, &mut progress))
    } else {
        receive(stream, deadline, &mut progress).and_then(|()| send(stream, deadline, &progress))
    };
    let restored = stream.set_read_timeout(saved_read).and_then(|()| stream.set_write_timeout(saved_write));
    result?;
    restored.map_err(HandshakeError::Io)
}

/// Sets the socket timeout for the next call from the deadline; errors once it has passed.
fn arm(
    set: impl FnOnce(Option<Duration>) -> io::Result<()>,
    deadline: Option<Deadline>,
    progress: &Progress,
) -> Result<(), HandshakeError> {
    let remaining = match deadline {
        None => None,
        Some(d) => Some(d.remaining().ok_or_else(|| timeout_error(deadline, progress))?),
    };
    set(remaining).map_err(HandshakeError::Io)
}

fn send(mut stream: &TcpStream, deadline: Option<Deadline>, progress: &Progress) -> Result<(), HandshakeError> {
    let mut sent = 0;
    while sent < HANDSHAKE.len() {
        arm(|t| stream.set_write_timeout(t), deadline, progress)?;
        match stream.write(&HANDSHAKE[sent..]) {
            Ok(0) => return Err(HandshakeError::Closed { received: progress.received() }),
            Ok(n) => sent += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if is_timeout(&e) => return Err(timeout_error(deadline, progress)),
            Err(e) if is_closed(&e) => return Err(HandshakeError::Closed { received: progress.received() }),
            Err(e) => return Err(HandshakeError::Io(e)),
        }
    }
    Ok(())
}

fn receive(mut stream: &TcpStream, deadline: Option<Deadline>, progress: &mut Progress) -> Result<(), HandshakeError> {
    while !progress.done() {
        arm(|t| stream.set_read_timeout(t), deadline, progress)?;
        match stream.read(progress.spare()) {
            Ok(n) => progress.advance(n)?,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if is_timeout(&e) => return Err(timeout_error(deadline, progress)),
            Err(e) if is_closed(&e) => return Err(HandshakeError::Closed { received: progress.received() }),
            Err(e) => return Err(HandshakeError::Io(e)),
        }
    }
    Ok(())
}

#[cfg(feature = "tokio")]
pub(crate) use async_handshake::exchange_async;
#[cfg(feature = "tokio")]
pub use async_handshake::{handshake_as_debugger_async, handshake_as_vm_async};

#[cfg(feature = "tokio")]
mod async_handshake {
    use super::*;
    use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

    /// Debugger side, async: sends the handshake and waits for the echo, within `timeout`.
    pub async fn handshake_as_debugger_async<S>(stream: &mut S, timeout: Option<Duration>) -> Result<(), HandshakeError>
    where
        S: AsyncRead + AsyncWrite + Unpin,
    {
        exchange_async(stream, Deadline::after(timeout), true).await
    }

    /// VM side, async: waits for the debugger's handshake and echoes it, within `timeout`.
    pub async fn handshake_as_vm_async<S>(stream: &mut S, timeout: Option<Duration>) -> Result<(), HandshakeError>
    where
        S: AsyncRead + AsyncWrite + Unpin,
    {
        exchange_async(stream, Deadline::after(timeout), false).await
    }

    pub(crate) async fn exchange_async<S>(
        stream: &mut S,
        deadline: Option<Deadline>,
        debugger: bool,
    ) -> Result<(), HandshakeError>
    where
        S: AsyncRead + AsyncWrite + Unpin,
    {
        let mut progress = Progress::new();
        let steps = async {
            if debugger {
                send_async(stream).await?;
                receive_async(stream, &mut progress).await
            } else {
                receive_async(stream, &mut progress).await?;
                send_async(stream).await
            }
        };
        let result = match deadline {
            None => steps.await,
            Some(d) => match tokio::time::timeout_at(d.at.into(), steps).await {
                Ok(result) => result,
                Err(_elapsed) => Err(timeout_error(deadline, &progress)),
            },
        };
        result.map_err(|e| match e {
            HandshakeError::Closed { .. } => HandshakeError::Closed { received: progress.received() },
            other => other,
        })
    }

    async fn send_async<S: AsyncWrite + Unpin>(stream: &mut S) -> Result<(), HandshakeError> {
        let sent = async {
            stream.write_all(HANDSHAKE).await?;
            stream.flush().await
        };
        sent.await.map_err(|e| {
            if is_closed(&e) || e.kind() == io::ErrorKind::WriteZero {
                // The caller fills in what was received.
                HandshakeError::Closed { received: String::new() }
            } else {
                HandshakeError::Io(e)
            }
        })
    }

    async fn receive_async<S: AsyncRead + Unpin>(
        stream: &mut S,
        progress: &mut Progress,
    ) -> Result<(), HandshakeError> {
        while !progress.done() {
            match stream.read(progress.spare()).await {
                Ok(n) => progress.advance(n)?,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if is_closed(&e) => return Err(HandshakeError::Closed { received: progress.received() }),
                Err(e) => return Err(HandshakeError::Io(e)),
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;
    use std::time::Instant;

    fn pair() -> (TcpStream, TcpStream) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (server, _) = listener.accept().unwrap();
        (client, server)
    }

    #[test]
    fn blocking_success_leaves_following_bytes_and_restores_timeouts() {
        let (client, mut server) = pair();
        client.set_read_timeout(Some(Duration::from_secs(7))).unwrap();
        let vm = std::thread::spawn(move || {
            handshake_as_vm(&server, Some(Duration::from_secs(10))).unwrap();
            assert_eq!(server.read_timeout().unwrap(), None);
            server.write_all(b"after").unwrap();
        });
        handshake_as_debugger(&client, Some(Duration::from_secs(10))).unwrap();
        vm.join().unwrap();
        assert_eq!(client.read_timeout().unwrap(), Some(Duration::from_secs(7)));
        let mut rest = [0u8; 5];
        (&client).read_exact(&mut rest).unwrap();
        assert_eq!(&rest, b"after");
    }

    #[test]
    fn blocking_handshake_does_not_consume_a_packet_sent_right_behind_it() {
        let (mut client, server) = pair();
        let mut bytes = HANDSHAKE.to_vec();
        bytes.extend_from_slice(b"NEXT");
        client.write_all(&bytes).unwrap();
        handshake_as_vm(&server, Some(Duration::from_secs(10))).unwrap();
        let mut rest = [0u8; 4];
        (&server).read_exact(&mut rest).unwrap();
        assert_eq!(&rest, b"NEXT");
    }

    #[test]
    fn blocking_wrong_bytes_are_reported_escaped() {
        let (mut client, server) = pair();
        client.write_all(b"GET / HTTP/1.1\r\n").unwrap();
        let err = handshake_as_vm(&server, Some(Duration::from_secs(10))).unwrap_err();
        assert!(matches!(&err, HandshakeError::Mismatch { received } if received == "G"), "{err}");
        assert_eq!(err.to_string(), "expected \"JDWP-Handshake\" but received \"G\"");

        let (mut client, server) = pair();
        client.write_all(b"JDWP-Hand\x00\xffxxxxxxxxx").unwrap();
        let err = handshake_as_vm(&server, Some(Duration::from_secs(10))).unwrap_err();
        assert!(matches!(&err, HandshakeError::Mismatch { received } if received == "JDWP-Hand\\x00"), "{err}");
    }

    #[test]
    fn blocking_wrong_echo_is_reported() {
        let (client, mut server) = pair();
        let vm = std::thread::spawn(move || {
            let mut got = [0u8; 14];
            server.read_exact(&mut got).unwrap();
            server.write_all(b"JDWP-Handshak\n").unwrap();
        });
        let err = handshake_as_debugger(&client, Some(Duration::from_secs(10))).unwrap_err();
        vm.join().unwrap();
        assert!(matches!(&err, HandshakeError::Mismatch { received } if received == "JDWP-Handshak\\n"), "{err}");
    }

    #[test]
    fn blocking_silent_peer_times_out() {
        let (_client, server) = pair();
        let timeout = Duration::from_millis(100);
        let start = Instant::now();
        let err = handshake_as_vm(&server, Some(timeout)).unwrap_err();
        assert!(start.elapsed() >= timeout);
        assert!(
            matches!(&err, HandshakeError::Timeout { after, received } if *after == timeout && received.is_empty())
        );
        assert_eq!(server.read_timeout().unwrap(), None, "timeouts restored after failure");
    }

    #[test]
    fn blocking_partial_then_silent_times_out_with_what_arrived() {
        let (mut client, server) = pair();
        client.write_all(b"JDWP-").unwrap();
        let err = handshake_as_vm(&server, Some(Duration::from_millis(100))).unwrap_err();
        assert!(matches!(&err, HandshakeError::Timeout { received, .. } if received == "JDWP-"), "{err}");
    }

    #[test]
    fn blocking_peer_close_is_an_error() {
        let (mut client, server) = pair();
        client.write_all(b"JDWP").unwrap();
        drop(client);
        let err = handshake_as_vm(&server, Some(Duration::from_secs(10))).unwrap_err();
        assert!(matches!(&err, HandshakeError::Closed { received } if received == "JDWP"), "{err}");

        let (client, server) = pair();
        drop(server);
        let err = handshake_as_debugger(&client, Some(Duration::from_secs(10))).unwrap_err();
        assert!(matches!(err, HandshakeError::Closed { .. }), "{err}");
    }

    #[cfg(feature = "tokio")]
    mod async_tests {
        use super::super::*;
        use tokio::io::{AsyncReadExt, AsyncWriteExt, duplex};

        #[tokio::test]
        async fn async_success_both_sides() {
            let (mut a, mut b) = duplex(64);
            let vm = tokio::spawn(async move {
                handshake_as_vm_async(&mut b, Some(Duration::from_secs(10))).await.unwrap();
                b.write_all(b"!").await.unwrap();
            });
            handshake_as_debugger_async(&mut a, Some(Duration::from_secs(10))).await.unwrap();
            vm.await.unwrap();
            assert_eq!(a.read_u8().await.unwrap(), b'!');
        }

        #[tokio::test]
        async fn async_wrong_bytes() {
            let (mut a, mut b) = duplex(64);
            a.write_all(b"hello\n").await.unwrap();
            let err = handshake_as_vm_async(&mut b, None).await.unwrap_err();
            assert!(matches!(&err, HandshakeError::Mismatch { received } if received == "h"), "{err}");
        }

        #[tokio::test]
        async fn async_silent_peer_times_out() {
            let (_a, mut b) = duplex(64);
            let timeout = Duration::from_millis(50);
            let err = handshake_as_debugger_async(&mut b, Some(timeout)).await.unwrap_err();
            assert!(matches!(&err, HandshakeError::Timeout { after, .. } if *after == timeout), "{err}");
        }

        #[tokio::test]
        async fn async_peer_close() {
            let (mut a, mut b) = duplex(64);
            a.write_all(b"JDWP-Hand").await.unwrap();
            drop(a);
            let err = handshake_as_vm_async(&mut b, None).await.unwrap_err();
            assert!(matches!(&err, HandshakeError::Closed { received } if received == "JDWP-Hand"), "{err}");
        }
    }
}
