//! The socket transport (`dt_socket`) on tokio, with the same semantics as the blocking
//! [`crate::socket`] module: same address forms, same handshake roles, same timeouts.

use std::net::SocketAddr;
use std::time::Duration;

use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream};

use crate::address::{AddressError, Host, SocketAddress, prefer_ipv4};
use crate::deadline::Deadline;
use crate::error::TransportError;
use crate::handshake::{HandshakeError, exchange_async};
use crate::socket::{bind_listener, is_transient_accept_error};
use crate::tokio_io::{AsyncPacketReader, AsyncPacketWriter};

/// Parses `address` and starts listening on it. See [`AsyncSocketListener::bind`].
pub async fn listen_async(address: &str) -> Result<AsyncSocketListener, TransportError> {
    AsyncSocketListener::bind(&SocketAddress::parse(address)?).await
}

/// Parses `address`, connects, and performs the debugger-side handshake. See
/// [`AsyncSocketConnection::attach`].
pub async fn attach_async(address: &str, timeout: Option<Duration>) -> Result<AsyncSocketConnection, TransportError> {
    AsyncSocketConnection::attach(&SocketAddress::parse(address)?, timeout).await
}

async fn resolve(name: &str, port: u16) -> Result<Vec<SocketAddr>, TransportError> {
    let found = tokio::net::lookup_host((name, port))
        .await
        .map_err(|e| AddressError::Resolve { host: name.to_owned(), reason: e.to_string() })?;
    Ok(prefer_ipv4(name, found)?)
}

/// A listening socket for the VM side, on tokio.
#[derive(Debug)]
pub struct AsyncSocketListener {
    listener: TcpListener,
    local_addr: SocketAddr,
    address: SocketAddress,
    handshake_timeout: Option<Duration>,
}

impl AsyncSocketListener {
    /// Binds and listens, as [`crate::SocketListener::bind`]. Must run inside a tokio runtime.
    pub async fn bind(address: &SocketAddress) -> Result<AsyncSocketListener, TransportError> {
        let resolved = match &address.host {
            Host::Name(name) => Some(resolve(name, address.port).await?[0]),
            _ => None,
        };
        let std_listener = bind_listener(address, resolved)?;
        let configure = |e| TransportError::io("configuring the listening socket", e);
        std_listener.set_nonblocking(true).map_err(configure)?;
        let listener = TcpListener::from_std(std_listener).map_err(configure)?;
        let local_addr = listener.local_addr().map_err(|e| TransportError::io("reading the listening address", e))?;
        tracing::debug!(%address, %local_addr, "listening for a debugger");
        Ok(AsyncSocketListener {
            listener,
            local_addr,
            address: address.with_port(local_addr.port()),
            handshake_timeout: None,
        })
    }

    /// The address actually bound (with the real port when 0 was asked for).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The address as requested, with the actual port.
    pub fn address(&self) -> &SocketAddress {
        &self.address
    }

    /// Limits each peer's handshake separately from the accept timeout (default `None`).
    pub fn set_handshake_timeout(&mut self, timeout: Option<Duration>) {
        self.handshake_timeout = timeout;
    }

    /// Waits for a debugger without a time limit.
    pub async fn accept(&self) -> Result<AsyncSocketConnection, TransportError> {
        self.accept_with_timeout(None).await
    }

    /// Waits for a debugger to connect and complete the handshake (VM side), within `timeout`;
    /// peers that fail the handshake are dropped and logged, as in
    /// [`crate::SocketListener::accept_with_timeout`].
    pub async fn accept_with_timeout(
        &self,
        timeout: Option<Duration>,
    ) -> Result<AsyncSocketConnection, TransportError> {
        let deadline = Deadline::after(timeout);
        loop {
            let accepted = match deadline {
                None => self.listener.accept().await,
                Some(d) => tokio::time::timeout_at(d.at.into(), self.listener.accept()).await.map_err(|_| {
                    TransportError::Timeout {
                        operation: format!("accepting a debugger connection on {}", self.local_addr),
                        after: d.timeout,
                    }
                })?,
            };
            let (mut stream, peer) = match accepted {
                Ok(accepted) => accepted,
                Err(e) if is_transient_accept_error(&e) => continue,
                Err(e) => return Err(TransportError::io(format!("accepting a connection on {}", self.local_addr), e)),
            };
            if let Err(e) = stream.set_nodelay(true) {
                tracing::warn!(%peer, error = %e, "dropping a debugger connection that could not be configured");
                continue;
            }
            let handshake_deadline = Deadline::earliest(deadline, Deadline::after(self.handshake_timeout));
            match exchange_async(&mut stream, handshake_deadline, false).await {
                Ok(()) => {
                    tracing::debug!(%peer, "debugger connected");
                    return AsyncSocketConnection::new(stream);
                }
                Err(e) => {
                    if matches!(e, HandshakeError::Timeout { .. }) && deadline.is_some_and(|d| d.remaining().is_none())
                    {
                        return Err(e.into());
                    }
                    tracing::warn!(%peer, error = %e, "debugger failed to attach");
                }
            }
        }
    }
}

/// An established `dt_socket` connection on tokio, handshake done.
#[derive(Debug)]
pub struct AsyncSocketConnection {
    stream: TcpStream,
    peer_addr: SocketAddr,
    local_addr: SocketAddr,
}

/// The reading half of an [`AsyncSocketConnection`].
pub type AsyncSocketReader = AsyncPacketReader<OwnedReadHalf>;

/// The writing half of an [`AsyncSocketConnection`]: clone it for each task that sends packets.
pub type AsyncSocketWriter = AsyncPacketWriter<OwnedWriteHalf>;

impl AsyncSocketConnection {
    fn new(stream: TcpStream) -> Result<AsyncSocketConnection, TransportError> {
        let addrs = stream.peer_addr().and_then(|peer| Ok((peer, stream.local_addr()?)));
        let (peer_addr, local_addr) = addrs.map_err(|e| TransportError::io("reading the connection's addresses", e))?;
        Ok(AsyncSocketConnection { stream, peer_addr, local_addr })
    }

    /// Connects to a listening VM and performs the debugger-side handshake, as
    /// [`crate::SocketConnection::attach`]: `timeout` bounds connecting and the handshake together
    /// (name resolution included here), addresses are tried IPv4 first, port 0 is rejected.
    pub async fn attach(
        address: &SocketAddress,
        timeout: Option<Duration>,
    ) -> Result<AsyncSocketConnection, TransportError> {
        address.check_attachable()?;
        let deadline = Deadline::after(timeout);
        let timed_out = || TransportError::Timeout {
            operation: format!("attaching to {address}"),
            after: deadline.map_or(Duration::ZERO, |d| d.timeout),
        };
        let attempt = async {
            let candidates = match &address.host {
                Host::Name(name) => resolve(name, address.port).await?,
                _ => address.attach_candidates_without_lookup().unwrap_or_default(),
            };
            let mut first_error = None;
            for addr in candidates {
                match TcpStream::connect(addr).await {
                    Ok(stream) => return Ok(stream),
                    Err(e) => {
                        first_error.get_or_insert(TransportError::io(format!("connecting to {addr}"), e));
                    }
                }
            }
            Err(first_error.unwrap_or_else(|| {
                AddressError::Resolve { host: address.to_string(), reason: "no addresses".to_owned() }.into()
            }))
        };
        let mut stream = match deadline {
            None => attempt.await?,
            Some(d) => tokio::time::timeout_at(d.at.into(), attempt).await.map_err(|_| timed_out())??,
        };
        stream.set_nodelay(true).map_err(|e| TransportError::io("setting TCP_NODELAY", e))?;
        exchange_async(&mut stream, deadline, true).await?;
        tracing::debug!(peer = ?stream.peer_addr().ok(), "attached to the VM");
        AsyncSocketConnection::new(stream)
    }

    /// The other end's address.
    pub fn peer_addr(&self) -> SocketAddr {
        self.peer_addr
    }

    /// This end's address.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Splits into a packet reader (for one task) and a cloneable packet writer.
    pub fn into_split(self) -> (AsyncSocketReader, AsyncSocketWriter) {
        let (read, write) = self.stream.into_split();
        (AsyncPacketReader::new(read), AsyncPacketWriter::new(write))
    }

    /// The underlying stream (`TCP_NODELAY` set).
    pub fn into_stream(self) -> TcpStream {
        self.stream
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Packet, attach, handshake::HANDSHAKE, listen};
    use jdwp_protocol::ErrorCode;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    const T: Option<Duration> = Some(Duration::from_secs(10));

    #[tokio::test]
    async fn async_listen_attach_exchange_command_and_reply() {
        let listener = listen_async("0").await.unwrap();
        let port = listener.local_addr().port();
        assert_eq!(listener.local_addr().ip(), std::net::Ipv4Addr::LOCALHOST);
        let vm = tokio::spawn(async move {
            let (mut reader, writer) = listener.accept_with_timeout(T).await.unwrap().into_split();
            let cmd = reader.read_packet().await.unwrap().unwrap();
            writer.write_packet(&Packet::reply(cmd.id, ErrorCode::NONE, cmd.body)).await.unwrap();
            assert_eq!(reader.read_packet().await.unwrap(), None);
        });
        let conn = attach_async(&format!("localhost:{port}"), T).await.unwrap();
        let (mut reader, writer) = conn.into_split();
        writer.write_packet(&Packet::command(77, 1, 1, b"ping".to_vec())).await.unwrap();
        let reply = reader.read_packet().await.unwrap().unwrap();
        assert_eq!(reply, Packet::reply(77, ErrorCode::NONE, b"ping".to_vec()));
        writer.shutdown().await.unwrap();
        vm.await.unwrap();
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn mixed_blocking_listener_async_attach() {
        let listener = listen("*:0").unwrap();
        let port = listener.local_addr().port();
        let vm = std::thread::spawn(move || {
            let (mut reader, writer) = listener.accept_with_timeout(T).unwrap().into_split().unwrap();
            let cmd = reader.read_packet().unwrap().unwrap();
            writer.write_packet(&Packet::reply(cmd.id, ErrorCode::INVALID_OBJECT, vec![])).unwrap();
            // An event, unsolicited, from another writer clone.
            let events = writer.clone();
            std::thread::spawn(move || events.write_packet(&Packet::command(1000, 64, 100, vec![2])).unwrap())
                .join()
                .unwrap();
            assert_eq!(reader.read_packet().unwrap(), None);
        });
        let (mut reader, writer) = attach_async(&port.to_string(), T).await.unwrap().into_split();
        writer.write_packet(&Packet::command(5, 9, 1, vec![0; 8])).await.unwrap();
        assert_eq!(reader.read_packet().await.unwrap(), Some(Packet::reply(5, ErrorCode::INVALID_OBJECT, vec![])));
        assert_eq!(reader.read_packet().await.unwrap(), Some(Packet::command(1000, 64, 100, vec![2])));
        drop(writer);
        drop(reader);
        tokio::task::spawn_blocking(move || vm.join().unwrap()).await.unwrap();
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn mixed_async_listener_blocking_attach() {
        let listener = listen_async("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().to_string();
        let debugger = tokio::task::spawn_blocking(move || {
            let (mut reader, writer) = attach(&addr, T).unwrap().into_split().unwrap();
            writer.write_packet(&Packet::command(3, 1, 7, vec![])).unwrap();
            reader.read_packet().unwrap().unwrap()
        });
        let (mut reader, writer) = listener.accept_with_timeout(T).await.unwrap().into_split();
        let cmd = reader.read_packet().await.unwrap().unwrap();
        writer.write_packet(&Packet::reply(cmd.id, ErrorCode::NONE, vec![0, 0, 0, 8])).await.unwrap();
        assert_eq!(debugger.await.unwrap(), Packet::reply(3, ErrorCode::NONE, vec![0, 0, 0, 8]));
    }

    #[tokio::test]
    async fn async_accept_times_out() {
        let listener = listen_async("0").await.unwrap();
        let err = listener.accept_with_timeout(Some(Duration::from_millis(50))).await.unwrap_err();
        assert!(matches!(err, TransportError::Timeout { .. }), "{err}");

        let _silent = TcpStream::connect(listener.local_addr()).await.unwrap();
        let err = listener.accept_with_timeout(Some(Duration::from_millis(50))).await.unwrap_err();
        assert!(matches!(err, TransportError::Handshake(HandshakeError::Timeout { .. })), "{err}");
    }

    #[tokio::test]
    async fn async_accept_skips_a_bad_peer() {
        let listener = listen_async("0").await.unwrap();
        let addr = listener.local_addr();
        let mut bad = TcpStream::connect(addr).await.unwrap();
        bad.write_all(b"\x16\x03\x01 TLS hello").await.unwrap();
        let good = tokio::spawn(async move { attach_async(&addr.to_string(), T).await.unwrap().local_addr() });
        let conn = listener.accept_with_timeout(T).await.unwrap();
        assert_eq!(conn.peer_addr(), good.await.unwrap());
    }

    #[tokio::test]
    async fn async_attach_errors() {
        let err = attach_async("[::1]:0", T).await.unwrap_err();
        assert!(matches!(err, TransportError::Address(AddressError::AttachToPortZero { .. })), "{err}");
        let err = attach_async("70000", T).await.unwrap_err();
        assert!(matches!(err, TransportError::Address(AddressError::InvalidPort { .. })), "{err}");

        // A peer that echoes the wrong bytes.
        let fake = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = fake.local_addr().unwrap();
        let server = tokio::spawn(async move {
            let (mut s, _) = fake.accept().await.unwrap();
            let mut got = [0u8; 14];
            s.read_exact(&mut got).await.unwrap();
            assert_eq!(&got, HANDSHAKE);
            s.write_all(b"JDWP-handshake").await.unwrap();
            s
        });
        let err = attach_async(&addr.to_string(), T).await.unwrap_err();
        assert!(err.to_string().contains("received \"JDWP-h\""), "{err}");
        drop(server.await.unwrap());

        // A listener that never answers.
        let silent = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let err =
            attach_async(&silent.local_addr().unwrap().to_string(), Some(Duration::from_millis(50))).await.unwrap_err();
        assert!(err.is_timeout(), "{err}");
    }
}
