//! The socket transport (`dt_socket`), blocking: listen/accept for the VM side, attach for the
//! debugger side, and connections split into a reader and a shareable writer.
//!
//! Both roles can listen or attach, as with the JDK (`server=y` or `n`): the handshake direction
//! depends on the role, not on who connected. [`SocketListener::accept_with_timeout`] and
//! [`attach`] perform the VM-side and debugger-side handshake respectively, matching the agent's
//! and the client's needs; use the `handshake` module directly for the other combinations.
//!
//! Every connection has `TCP_NODELAY` set (JDWP is request/response; Nagle would add latency).

use std::io;
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::Arc;
use std::time::Duration;

use socket2::{Domain, Protocol, Socket, Type};

use crate::address::{AddressError, Host, SocketAddress, prefer_ipv4};
use crate::blocking::{PacketReader, PacketWriter};
use crate::deadline::Deadline;
use crate::error::TransportError;
use crate::handshake::{self, HandshakeError};
use crate::packet::Packet;

/// Pending-connection queue length of a listener.
const LISTEN_BACKLOG: i32 = 16;

/// Parses `address` and starts listening on it. See [`SocketListener::bind`].
pub fn listen(address: &str) -> Result<SocketListener, TransportError> {
    SocketListener::bind(&SocketAddress::parse(address)?)
}

/// Parses `address`, connects, and performs the debugger-side handshake. See
/// [`SocketConnection::attach`].
pub fn attach(address: &str, timeout: Option<Duration>) -> Result<SocketConnection, TransportError> {
    SocketConnection::attach(&SocketAddress::parse(address)?, timeout)
}

/// A listening socket for the VM side of `dt_socket` (`server=y`).
#[derive(Debug)]
pub struct SocketListener {
    listener: TcpListener,
    local_addr: SocketAddr,
    address: SocketAddress,
    handshake_timeout: Option<Duration>,
}

impl SocketListener {
    /// Binds and listens. A name is resolved (blocking) and the first address taken, IPv4 first.
    ///
    /// With port 0 the system picks a free port; [`local_addr`](Self::local_addr) and
    /// [`address`](Self::address) report it.
    pub fn bind(address: &SocketAddress) -> Result<SocketListener, TransportError> {
        let resolved = match &address.host {
            Host::Name(name) => Some(resolve_blocking(name, address.port)?[0]),
            _ => None,
        };
        let listener = bind_listener(address, resolved)?;
        listener.set_nonblocking(true).map_err(|e| TransportError::io("configuring the listening socket", e))?;
        let local_addr = listener.local_addr().map_err(|e| TransportError::io("reading the listening address", e))?;
        tracing::debug!(%address, %local_addr, "listening for a debugger");
        Ok(SocketListener {
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

    /// The address as requested, with the actual port: what the JDK prints as "Listening for
    /// transport dt_socket at address: ...".
    pub fn address(&self) -> &SocketAddress {
        &self.address
    }

    /// Limits each peer's handshake separately from the accept timeout (default `None`: only the
    /// accept timeout applies, as in the JDK), so a connected but silent peer cannot hold the
    /// listener until the accept deadline.
    pub fn set_handshake_timeout(&mut self, timeout: Option<Duration>) {
        self.handshake_timeout = timeout;
    }

    /// Waits for a debugger without a time limit. See [`accept_with_timeout`](Self::accept_with_timeout).
    pub fn accept(&self) -> Result<SocketConnection, TransportError> {
        self.accept_with_timeout(None)
    }

    /// Waits for a debugger to connect and complete the handshake (VM side: read, then echo).
    ///
    /// `timeout` bounds the whole wait, handshakes included (`None`: forever). As with the JDK, a
    /// peer that fails the handshake is dropped (and logged at `warn`) and accepting goes on until
    /// a good one comes or the time is up. The listener keeps listening afterwards.
    pub fn accept_with_timeout(&self, timeout: Option<Duration>) -> Result<SocketConnection, TransportError> {
        self.accept_admitting(timeout, &|_| true)
    }

    /// As [`accept_with_timeout`](Self::accept_with_timeout), but a peer that `admit` refuses is
    /// closed before the handshake (it reads nothing back, as with the JDK's `allow` option) and
    /// the next one is awaited.
    pub fn accept_admitting(
        &self,
        timeout: Option<Duration>,
        admit: &dyn Fn(SocketAddr) -> bool,
    ) -> Result<SocketConnection, TransportError> {
        let deadline = Deadline::after(timeout);
        loop {
            let (stream, peer) = self.accept_tcp(deadline)?;
            if !admit(peer) {
                drop(stream);
                continue;
            }
            let setup = stream.set_nonblocking(false).and_then(|()| stream.set_nodelay(true));
            if let Err(e) = setup {
                tracing::warn!(%peer, error = %e, "dropping a debugger connection that could not be configured");
                continue;
            }
            let handshake_deadline = Deadline::earliest(deadline, Deadline::after(self.handshake_timeout));
            match handshake::exchange(&stream, handshake_deadline, false) {
                Ok(()) => {
                    tracing::debug!(%peer, "debugger connected");
                    return SocketConnection::new(stream);
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

    fn accept_tcp(&self, deadline: Option<Deadline>) -> Result<(TcpStream, SocketAddr), TransportError> {
        loop {
            if !wait_readable(&self.listener, deadline)
                .map_err(|e| TransportError::io(format!("waiting for a debugger on {}", self.local_addr), e))?
            {
                return Err(TransportError::Timeout {
                    operation: format!("accepting a debugger connection on {}", self.local_addr),
                    after: deadline.map_or(Duration::ZERO, |d| d.timeout),
                });
            }
            match self.listener.accept() {
                Ok(accepted) => return Ok(accepted),
                // Readiness was stale, or the peer gave up between poll and accept.
                Err(e) if is_transient_accept_error(&e) => {}
                Err(e) => {
                    return Err(TransportError::io(format!("accepting a connection on {}", self.local_addr), e));
                }
            }
        }
    }
}

pub(crate) fn is_transient_accept_error(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock
            | io::ErrorKind::Interrupted
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
    )
}

/// Waits until the listener has a connection to accept; `false` when the deadline passed first.
#[cfg(unix)]
fn wait_readable(listener: &TcpListener, deadline: Option<Deadline>) -> io::Result<bool> {
    use std::os::fd::AsRawFd;
    loop {
        let timeout_ms: libc::c_int = match deadline {
            None => -1,
            Some(d) => match d.remaining() {
                None => return Ok(false),
                // Round up so a sub-millisecond remainder does not spin with a zero timeout.
                Some(left) => left.as_micros().div_ceil(1000).min(libc::c_int::MAX as u128) as libc::c_int,
            },
        };
        let mut pollfd = libc::pollfd { fd: listener.as_raw_fd(), events: libc::POLLIN, revents: 0 };
        // SAFETY: `pollfd` is a valid, exclusively borrowed array of one element for the whole
        // call, and the descriptor stays open because `listener` is borrowed.
        let ready = unsafe { libc::poll(&mut pollfd, 1, timeout_ms) };
        if ready > 0 {
            return Ok(true);
        }
        if ready < 0 {
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
        // ready == 0: the poll timed out; the loop re-checks the deadline.
    }
}

/// Without `poll`, checks the non-blocking listener at short intervals.
#[cfg(not(unix))]
fn wait_readable(listener: &TcpListener, deadline: Option<Deadline>) -> io::Result<bool> {
    let _ = listener;
    match deadline {
        Some(d) if d.remaining().is_none() => Ok(false),
        _ => {
            std::thread::sleep(Duration::from_millis(5));
            Ok(true)
        }
    }
}

/// Creates the listening socket: `*` on `[::]` dual-stack (falling back to 0.0.0.0 where IPv6 is
/// unavailable), no host on 127.0.0.1, otherwise the given or resolved address.
pub(crate) fn bind_listener(
    address: &SocketAddress,
    resolved: Option<SocketAddr>,
) -> Result<TcpListener, TransportError> {
    let port = address.port;
    let bind_error = |addr: SocketAddr, e| TransportError::io(format!("listening on {addr}"), e);
    let single = match (&address.host, resolved) {
        (Host::AllInterfaces, _) => {
            let v6 = SocketAddr::new(std::net::Ipv6Addr::UNSPECIFIED.into(), port);
            match bind_socket(v6, true) {
                Ok(listener) => return Ok(listener),
                Err(e) if matches!(e.kind(), io::ErrorKind::AddrInUse | io::ErrorKind::PermissionDenied) => {
                    return Err(bind_error(v6, e));
                }
                Err(e) => {
                    tracing::debug!(error = %e, "no dual-stack IPv6 listener; listening on IPv4 only");
                    SocketAddr::new(std::net::Ipv4Addr::UNSPECIFIED.into(), port)
                }
            }
        }
        (Host::Loopback, _) => SocketAddr::new(std::net::Ipv4Addr::LOCALHOST.into(), port),
        (Host::Ip(ip), _) => address.ip_socket_addr(*ip, port),
        (Host::Name(_), Some(addr)) => addr,
        (Host::Name(name), None) => {
            return Err(AddressError::Resolve { host: name.clone(), reason: "not resolved".to_owned() }.into());
        }
    };
    bind_socket(single, false).map_err(|e| bind_error(single, e))
}

fn bind_socket(addr: SocketAddr, dual_stack: bool) -> io::Result<TcpListener> {
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    if dual_stack {
        socket.set_only_v6(false)?;
    }
    // As the JDK does: allow rebinding a port whose previous connections are in TIME_WAIT.
    #[cfg(unix)]
    socket.set_reuse_address(true)?;
    socket.bind(&addr.into())?;
    socket.listen(LISTEN_BACKLOG)?;
    Ok(socket.into())
}

fn resolve_blocking(name: &str, port: u16) -> Result<Vec<SocketAddr>, TransportError> {
    let found = (name, port)
        .to_socket_addrs()
        .map_err(|e| AddressError::Resolve { host: name.to_owned(), reason: e.to_string() })?;
    Ok(prefer_ipv4(name, found)?)
}

/// An established `dt_socket` connection, handshake done.
#[derive(Debug)]
pub struct SocketConnection {
    stream: TcpStream,
    peer_addr: SocketAddr,
    local_addr: SocketAddr,
}

impl SocketConnection {
    fn new(stream: TcpStream) -> Result<SocketConnection, TransportError> {
        let addrs = stream.peer_addr().and_then(|peer| Ok((peer, stream.local_addr()?)));
        let (peer_addr, local_addr) = addrs.map_err(|e| TransportError::io("reading the connection's addresses", e))?;
        Ok(SocketConnection { stream, peer_addr, local_addr })
    }

    /// Connects to a listening VM and performs the debugger-side handshake (send, then expect the
    /// echo).
    ///
    /// `timeout` bounds connecting and the handshake together (`None`: no limit). A name is
    /// resolved first (not bounded by the timeout) and its addresses are tried in turn, IPv4 first;
    /// if none connects, the first failure is reported. A handshake failure is final. Port 0 is
    /// rejected.
    pub fn attach(address: &SocketAddress, timeout: Option<Duration>) -> Result<SocketConnection, TransportError> {
        address.check_attachable()?;
        let deadline = Deadline::after(timeout);
        let candidates = match &address.host {
            Host::Name(name) => resolve_blocking(name, address.port)?,
            _ => address.attach_candidates_without_lookup().unwrap_or_default(),
        };
        let timed_out = || TransportError::Timeout {
            operation: format!("attaching to {address}"),
            after: deadline.map_or(Duration::ZERO, |d| d.timeout),
        };
        let mut first_error = None;
        for addr in candidates {
            let connected = match deadline {
                None => TcpStream::connect(addr),
                Some(d) => TcpStream::connect_timeout(&addr, d.remaining().ok_or_else(timed_out)?),
            };
            let stream = match connected {
                Ok(stream) => stream,
                Err(e) if matches!(e.kind(), io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock) => {
                    first_error.get_or_insert(timed_out());
                    continue;
                }
                Err(e) => {
                    first_error.get_or_insert(TransportError::io(format!("connecting to {addr}"), e));
                    continue;
                }
            };
            stream.set_nodelay(true).map_err(|e| TransportError::io("setting TCP_NODELAY", e))?;
            handshake::exchange(&stream, deadline, true)?;
            tracing::debug!(%addr, "attached to the VM");
            return SocketConnection::new(stream);
        }
        Err(first_error.unwrap_or_else(|| {
            AddressError::Resolve { host: address.to_string(), reason: "no addresses".to_owned() }.into()
        }))
    }

    /// The other end's address.
    pub fn peer_addr(&self) -> SocketAddr {
        self.peer_addr
    }

    /// This end's address.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Splits into a packet reader (for one thread) and a cloneable packet writer (for any number).
    pub fn into_split(self) -> Result<(SocketReader, SocketWriter), TransportError> {
        let clone = |s: &TcpStream| s.try_clone().map_err(|e| TransportError::io("duplicating the socket", e));
        let write_half = clone(&self.stream)?;
        let control = clone(&self.stream)?;
        let writer = SocketWriter { packets: PacketWriter::new(write_half), control: Arc::new(control) };
        Ok((PacketReader::new(self.stream), writer))
    }

    /// The underlying stream (blocking, no timeouts, `TCP_NODELAY` set).
    pub fn into_stream(self) -> TcpStream {
        self.stream
    }
}

/// The reading half of a [`SocketConnection`].
pub type SocketReader = PacketReader<TcpStream>;

/// The writing half of a [`SocketConnection`]: clone it for each thread that sends packets.
#[derive(Clone, Debug)]
pub struct SocketWriter {
    packets: PacketWriter<TcpStream>,
    /// A handle for shutting the socket down without waiting for a writer to finish.
    control: Arc<TcpStream>,
}

impl SocketWriter {
    /// Writes one whole packet; concurrent callers are serialized, packet by packet.
    pub fn write_packet(&self, packet: &Packet) -> Result<(), TransportError> {
        self.packets.write_packet(packet)
    }

    /// Writes whole packets back to back, in order, in one write (see
    /// [`crate::PacketWriter::write_packets`]); concurrent callers' packets never come between.
    pub fn write_packets(&self, packets: &[Packet]) -> Result<(), TransportError> {
        self.packets.write_packets(packets)
    }

    /// Shuts the connection down in both directions: the reader sees end of stream, blocked and
    /// later writes fail, and the peer sees the connection close. Idempotent.
    pub fn shutdown(&self) -> Result<(), TransportError> {
        match self.control.shutdown(Shutdown::Both) {
            Err(e) if e.kind() != io::ErrorKind::NotConnected => {
                Err(TransportError::io("shutting down the connection", e))
            }
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handshake::HANDSHAKE;
    use jdwp_protocol::ErrorCode;
    use std::io::{Read, Write};
    use std::time::Instant;

    const T: Option<Duration> = Some(Duration::from_secs(10));

    fn ipv6_available() -> bool {
        TcpListener::bind("[::1]:0").is_ok()
    }

    #[test]
    fn blocking_listen_attach_exchange_command_and_reply() {
        let listener = listen("0").unwrap();
        let port = listener.local_addr().port();
        assert_ne!(port, 0);
        assert_eq!(listener.local_addr().ip(), std::net::Ipv4Addr::LOCALHOST);
        assert_eq!(listener.address().to_string(), port.to_string());

        let vm = std::thread::spawn(move || {
            let conn = listener.accept_with_timeout(T).unwrap();
            let (mut reader, writer) = conn.into_split().unwrap();
            let cmd = reader.read_packet().unwrap().unwrap();
            assert_eq!(cmd, Packet::command(1, 1, 1, vec![]));
            writer.write_packet(&Packet::reply(cmd.id, ErrorCode::NONE, b"version".to_vec())).unwrap();
            // The debugger disconnects: a clean end of stream.
            assert_eq!(reader.read_packet().unwrap(), None);
        });

        let conn = attach(&port.to_string(), T).unwrap();
        assert_eq!(conn.peer_addr().port(), port);
        let (mut reader, writer) = conn.into_split().unwrap();
        writer.write_packet(&Packet::command(1, 1, 1, vec![])).unwrap();
        let reply = reader.read_packet().unwrap().unwrap();
        assert_eq!(reply, Packet::reply(1, ErrorCode::NONE, b"version".to_vec()));
        writer.shutdown().unwrap();
        writer.shutdown().unwrap();
        vm.join().unwrap();
    }

    #[test]
    fn shutdown_wakes_a_blocked_reader() {
        let listener = listen("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().to_string();
        let debugger = std::thread::spawn(move || attach(&addr, T).unwrap());
        let (mut reader, writer) = listener.accept_with_timeout(T).unwrap().into_split().unwrap();
        let _debugger_conn = debugger.join().unwrap();
        let blocked = std::thread::spawn(move || reader.read_packet());
        writer.shutdown().unwrap();
        assert_eq!(blocked.join().unwrap().unwrap(), None);
        assert!(writer.write_packet(&Packet::command(1, 1, 1, vec![])).is_err());
    }

    #[test]
    fn many_writer_threads_never_interleave_on_the_wire() {
        let listener = listen("0").unwrap();
        let port = listener.local_addr().port();
        let vm = std::thread::spawn(move || {
            let (_reader, writer) = listener.accept_with_timeout(T).unwrap().into_split().unwrap();
            let threads: Vec<_> = (0..4u8)
                .map(|t| {
                    let w = writer.clone();
                    std::thread::spawn(move || {
                        for i in 0..100u32 {
                            w.write_packet(&Packet::command(i, 64, t, vec![t; 5000 + i as usize])).unwrap();
                        }
                    })
                })
                .collect();
            for t in threads {
                t.join().unwrap();
            }
            writer.shutdown().unwrap();
        });
        let (mut reader, _writer) = attach(&format!("localhost:{port}"), T).unwrap().into_split().unwrap();
        let mut count = 0;
        while let Some(p) = reader.read_packet().unwrap() {
            let crate::PacketKind::Command { cmd, .. } = p.kind else { panic!() };
            assert_eq!(p.body.len(), 5000 + p.id as usize);
            assert!(p.body.iter().all(|&b| b == cmd));
            count += 1;
        }
        assert_eq!(count, 400);
        vm.join().unwrap();
    }

    #[test]
    fn accept_times_out_without_a_debugger() {
        let listener = listen("0").unwrap();
        let timeout = Duration::from_millis(100);
        let start = Instant::now();
        let err = listener.accept_with_timeout(Some(timeout)).unwrap_err();
        assert!(start.elapsed() >= timeout);
        assert!(err.is_timeout(), "{err}");
        assert!(err.to_string().contains("timed out after 100ms"), "{err}");
    }

    #[test]
    fn accept_times_out_on_a_silent_peer() {
        let listener = listen("0").unwrap();
        let _silent = TcpStream::connect(listener.local_addr()).unwrap();
        let err = listener.accept_with_timeout(Some(Duration::from_millis(100))).unwrap_err();
        assert!(matches!(err, TransportError::Handshake(HandshakeError::Timeout { .. })), "{err}");
        assert!(err.is_timeout());
    }

    #[test]
    fn accept_skips_bad_and_silent_peers_and_takes_the_next_good_one() {
        let mut listener = listen("0").unwrap();
        listener.set_handshake_timeout(Some(Duration::from_millis(50)));
        let addr = listener.local_addr();
        // Connections queue in the backlog in order: a wrong handshake, a silent peer, a real one.
        let mut bad = TcpStream::connect(addr).unwrap();
        bad.write_all(b"GET / HTTP/1.1\r\n\r\n").unwrap();
        let _silent = TcpStream::connect(addr).unwrap();
        let good = std::thread::spawn(move || attach(&addr.to_string(), T).unwrap());
        let conn = listener.accept_with_timeout(T).unwrap();
        let debugger = good.join().unwrap();
        assert_eq!(conn.peer_addr(), debugger.local_addr());
        // The bad peer was closed without an echo.
        let mut rest = Vec::new();
        let _ = bad.read_to_end(&mut rest);
        assert!(rest.is_empty());
    }

    #[test]
    fn attach_to_wrong_peer_reports_what_it_sent() {
        let fake = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = fake.local_addr().unwrap();
        let server = std::thread::spawn(move || {
            let (mut s, _) = fake.accept().unwrap();
            let mut got = [0u8; 14];
            s.read_exact(&mut got).unwrap();
            assert_eq!(&got, HANDSHAKE);
            s.write_all(b"SSH-2.0-OpenSSH\r\n").unwrap();
        });
        let err = attach(&addr.to_string(), T).unwrap_err();
        server.join().unwrap();
        assert!(matches!(err, TransportError::Handshake(HandshakeError::Mismatch { .. })), "{err}");
        assert!(err.to_string().contains("received \"S\""), "{err}");
    }

    #[test]
    fn attach_times_out_on_a_silent_listener() {
        // A plain listener that accepts (via the backlog) but never answers.
        let silent = TcpListener::bind("127.0.0.1:0").unwrap();
        let err = attach(&silent.local_addr().unwrap().to_string(), Some(Duration::from_millis(100))).unwrap_err();
        assert!(err.is_timeout(), "{err}");
    }

    #[test]
    fn attach_errors() {
        let err = attach("localhost:0", T).unwrap_err();
        assert!(matches!(err, TransportError::Address(AddressError::AttachToPortZero { .. })), "{err}");
        let err = attach("not a port", T).unwrap_err();
        assert!(matches!(err, TransportError::Address(AddressError::InvalidPort { .. })), "{err}");
        // Nothing listens on a port we just released.
        let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let err = attach(&format!("127.0.0.1:{port}"), T).unwrap_err();
        assert!(
            matches!(&err, TransportError::Io { source, .. } if source.kind() == io::ErrorKind::ConnectionRefused),
            "{err}"
        );
    }

    #[test]
    fn listen_on_all_interfaces_is_dual_stack() {
        let listener = listen("*:0").unwrap();
        let port = listener.local_addr().port();
        assert!(listener.local_addr().ip().is_unspecified());
        assert_eq!(listener.address().to_string(), format!("*:{port}"));
        let mut targets = vec![format!("127.0.0.1:{port}")];
        if ipv6_available() {
            assert!(listener.local_addr().is_ipv6(), "dual-stack [::] expected where IPv6 works");
            targets.push(format!("[::1]:{port}"));
        }
        for target in targets {
            let debugger = std::thread::spawn(move || attach(&target, T).map(|c| c.peer_addr()));
            let conn = listener.accept_with_timeout(T).unwrap();
            assert_eq!(debugger.join().unwrap().unwrap().port(), port);
            drop(conn);
        }
    }

    #[test]
    fn listen_on_ipv6_loopback() {
        if !ipv6_available() {
            return;
        }
        let listener = listen("[::1]:0").unwrap();
        assert_eq!(listener.local_addr().ip(), std::net::Ipv6Addr::LOCALHOST);
        let port = listener.local_addr().port();
        let debugger = std::thread::spawn(move || attach(&format!("[::1]:{port}"), T).unwrap());
        listener.accept_with_timeout(T).unwrap();
        debugger.join().unwrap();
    }

    #[test]
    fn listen_on_a_used_port_fails_with_context() {
        let first = listen("0").unwrap();
        let err = listen(&first.local_addr().port().to_string()).unwrap_err();
        assert!(
            matches!(&err, TransportError::Io { source, .. } if source.kind() == io::ErrorKind::AddrInUse),
            "{err}"
        );
        assert!(err.to_string().starts_with("listening on 127.0.0.1:"), "{err}");
    }
}
