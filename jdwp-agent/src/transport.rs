//! The agent's view of its transports: the built-in `dt_socket` and `dt_shmem`, or a transport
//! library (see [`library`]), behind one small enum each for the listener, the connection and its
//! two halves, so the session and the loader do not care which one the user picked.

pub mod library;

use std::sync::Arc;
use std::time::Duration;

use jdwp_transports::shmem::{ShmemConnection, ShmemListener, ShmemReader, ShmemWriter};
use jdwp_transports::{Packet, SocketConnection, SocketListener, SocketReader, SocketWriter, TransportError};

use crate::options::Transport;
use library::Library;

/// Listens for debuggers (`server=y`).
#[derive(Debug)]
pub enum Listener {
    Socket(SocketListener),
    Shmem(ShmemListener),
    /// A transport library listening; `address` is what its `StartListening` answered.
    Library {
        library: Arc<Library>,
        address: String,
    },
}

impl Listener {
    /// Starts listening on `address` (`None`: a free port on loopback, or a generated name; a
    /// library picks its own). A library must have been loaded ([`library::open`]).
    pub fn bind(transport: &Transport, address: Option<&str>) -> Result<Listener, TransportError> {
        Ok(match transport {
            Transport::Socket => Listener::Socket(jdwp_transports::listen(address.unwrap_or("127.0.0.1:0"))?),
            Transport::SharedMemory => Listener::Shmem(match address {
                Some(name) => jdwp_transports::shmem::listen(name)?,
                None => jdwp_transports::shmem::listen(&jdwp_transports::shmem::generated_name())?,
            }),
            Transport::Library(_) => {
                let library = library::loaded()?;
                let address = library.start_listening(address)?;
                Listener::Library { library, address }
            }
        })
    }

    /// What the JDK prints after "Listening for transport ... at address: ": the port, the name,
    /// or what the library said.
    pub fn printed_address(&self) -> String {
        match self {
            Listener::Socket(l) => l.local_addr().port().to_string(),
            Listener::Shmem(l) => l.name().to_owned(),
            Listener::Library { address, .. } => address.clone(),
        }
    }

    /// A library keeps its own handshake timeout (see [`Library::accept`]).
    pub fn set_handshake_timeout(&mut self, timeout: Option<Duration>) {
        match self {
            Listener::Socket(l) => l.set_handshake_timeout(timeout),
            Listener::Shmem(l) => l.set_handshake_timeout(timeout),
            Listener::Library { .. } => {}
        }
    }

    /// Waits for a debugger and its handshake.
    pub fn accept_with_timeout(&self, timeout: Option<Duration>) -> Result<Connection, TransportError> {
        Ok(match self {
            Listener::Socket(l) => Connection::Socket(l.accept_with_timeout(timeout)?),
            Listener::Shmem(l) => Connection::Shmem(l.accept_with_timeout(timeout)?),
            Listener::Library { library, .. } => {
                library.accept(timeout)?;
                Connection::Library(Arc::clone(library))
            }
        })
    }

    /// Waits for a debugger that `admit` lets in (checked before the handshake) and its handshake.
    /// Shared memory has no peer address (only this user's local processes reach it), and a
    /// library applies `allow` itself (it was configured with it): `admit` does not apply there.
    pub fn accept_admitting(
        &self,
        timeout: Option<Duration>,
        admit: &dyn Fn(std::net::SocketAddr) -> bool,
    ) -> Result<Connection, TransportError> {
        Ok(match self {
            Listener::Socket(l) => Connection::Socket(l.accept_admitting(timeout, admit)?),
            Listener::Shmem(_) | Listener::Library { .. } => self.accept_with_timeout(timeout)?,
        })
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        if let Listener::Library { library, .. } = self {
            library.stop_listening();
        }
    }
}

impl From<SocketListener> for Listener {
    fn from(l: SocketListener) -> Listener {
        Listener::Socket(l)
    }
}

/// Attaches to a listening debugger (`server=n`). Sockets keep their existing handshake (send,
/// then expect the same bytes back, which works against a debugger that also sends first);
/// shared memory does the VM-side one (wait for the debugger's, then echo); a library does its own.
pub fn attach(transport: &Transport, address: &str, timeout: Option<Duration>) -> Result<Connection, TransportError> {
    Ok(match transport {
        Transport::Socket => Connection::Socket(jdwp_transports::attach(address, timeout)?),
        Transport::SharedMemory => Connection::Shmem(jdwp_transports::shmem::attach_as_vm(address, timeout)?),
        Transport::Library(_) => {
            let library = library::loaded()?;
            library.attach(address, timeout)?;
            Connection::Library(library)
        }
    })
}

/// A debugger connection, handshake done.
#[derive(Debug)]
pub enum Connection {
    Socket(SocketConnection),
    Shmem(ShmemConnection),
    /// A library's one connection (its environment holds it).
    Library(Arc<Library>),
}

impl From<SocketConnection> for Connection {
    fn from(c: SocketConnection) -> Connection {
        Connection::Socket(c)
    }
}

impl Connection {
    /// Who is connected, for logs and the `allow` option: the peer's IP address for sockets.
    pub fn peer_ip(&self) -> Option<std::net::IpAddr> {
        match self {
            Connection::Socket(c) => Some(c.peer_addr().ip()),
            Connection::Shmem(_) | Connection::Library(_) => None,
        }
    }

    pub fn into_split(self) -> Result<(Reader, Writer), TransportError> {
        Ok(match self {
            Connection::Socket(c) => {
                let (r, w) = c.into_split()?;
                (Reader::Socket(r), Writer::Socket(w))
            }
            Connection::Shmem(c) => {
                let (r, w) = c.into_split();
                (Reader::Shmem(r), Writer::Shmem(w))
            }
            Connection::Library(library) => {
                (Reader::Library { library: Arc::clone(&library), strict_flags: false }, Writer::Library(library))
            }
        })
    }
}

/// The reading half (one thread).
pub enum Reader {
    Socket(SocketReader),
    Shmem(ShmemReader),
    Library { library: Arc<Library>, strict_flags: bool },
}

impl Reader {
    /// Treats undefined flag bits in a packet header as a framing error.
    pub fn set_strict_flags(&mut self, strict: bool) {
        match self {
            Reader::Socket(r) => r.set_strict_flags(strict),
            Reader::Shmem(r) => r.set_strict_flags(strict),
            Reader::Library { strict_flags, .. } => *strict_flags = strict,
        }
    }

    /// The next packet; `Ok(None)` when the debugger closed the connection between packets.
    pub fn read_packet(&mut self) -> Result<Option<Packet>, TransportError> {
        match self {
            Reader::Socket(r) => r.read_packet(),
            Reader::Shmem(r) => r.read_packet(),
            Reader::Library { library, strict_flags } => library.read_packet(*strict_flags),
        }
    }
}

/// The writing half (cloneable; packets never interleave).
#[derive(Clone, Debug)]
pub enum Writer {
    Socket(SocketWriter),
    Shmem(ShmemWriter),
    Library(Arc<Library>),
}

impl Writer {
    pub fn write_packet(&self, packet: &Packet) -> Result<(), TransportError> {
        match self {
            Writer::Socket(w) => w.write_packet(packet),
            Writer::Shmem(w) => w.write_packet(packet),
            Writer::Library(l) => l.write_packet(packet),
        }
    }

    /// Writes whole packets in order; back to back in one write where the transport can (a socket,
    /// shared memory), one by one through a library transport.
    pub fn write_packets(&self, packets: &[Packet]) -> Result<(), TransportError> {
        match self {
            Writer::Socket(w) => w.write_packets(packets),
            Writer::Shmem(w) => w.write_packets(packets),
            Writer::Library(l) => packets.iter().try_for_each(|p| l.write_packet(p)),
        }
    }

    /// Ends the connection both ways (idempotent).
    pub fn shutdown(&self) -> Result<(), TransportError> {
        match self {
            Writer::Socket(w) => w.shutdown(),
            Writer::Shmem(w) => w.shutdown(),
            // Idempotent as the others: a library's Close of a closed connection does nothing.
            Writer::Library(l) => l.close(),
        }
    }
}
