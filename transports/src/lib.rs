//! JDWP transports: how JDWP packets travel between a debugger and a VM.
//!
//! Used by both ends of the stack: the agent inside the JVM (plain threads, no async runtime) and
//! the client library (tokio). Packet bodies are opaque here; `jdwp-protocol` gives them meaning.
//! This crate alone writes and parses packet headers.
//!
//! # Modules
//!
//! Protocol logic, free of I/O:
//! - [`packet`]: the [`Packet`] type and its 11-byte header encoding.
//! - [`framing`]: [`FrameDecoder`], a sans-I/O decoder that cuts buffered bytes into packets and
//!   rejects lying lengths before allocating for them.
//! - [`address`]: the `dt_socket` address forms ([`SocketAddress`]).
//!
//! Adapters:
//! - [`blocking`]: [`PacketReader`] / [`PacketWriter`] over `std::io` (the agent).
//! - `tokio_io` (feature `tokio`, on by default): `AsyncPacketReader` / `AsyncPacketWriter`
//!   over tokio's `AsyncRead` / `AsyncWrite` (the client).
//! - [`handshake`]: the `JDWP-Handshake` exchange, blocking and async, with timeouts.
//!
//! Transports:
//! - [`socket`]: `dt_socket`, blocking ([`listen`], [`attach`]).
//! - `socket_tokio` (feature `tokio`): the same on tokio (`listen_async`, `attach_async`).
//! - [`shmem`] (Linux): `dt_shmem`, shared memory rings with futex wake-ups, blocking
//!   ([`shmem::listen`], [`shmem::attach`]) and tokio (`shmem::async_io`).
//!
//! The JDK's transport library interface (`jdwpTransport.h`):
//! - [`spi`]: its C types and the conversion of its packets, for the libraries we build and for
//!   the agent that loads them.
//!
//! A connection splits into a reader, owned by one thread or task, and a cloneable writer shared by
//! all that send; every packet goes out as one locked write, so packets never interleave.

pub mod address;
pub mod blocking;
mod deadline;
mod error;
pub mod framing;
pub mod handshake;
pub mod packet;
#[cfg(target_os = "linux")]
pub mod shmem;
pub mod socket;
#[cfg(feature = "tokio")]
pub mod socket_tokio;
pub mod spi;
#[cfg(feature = "tokio")]
pub mod tokio_io;

pub use address::{AddressError, Host, SocketAddress};
pub use blocking::{PacketReader, PacketWriter, read_packet};
pub use error::TransportError;
pub use framing::{DEFAULT_MAX_PACKET_SIZE, FrameDecoder, FrameError};
pub use handshake::{HANDSHAKE, HandshakeError, handshake_as_debugger, handshake_as_vm};
#[cfg(feature = "tokio")]
pub use handshake::{handshake_as_debugger_async, handshake_as_vm_async};
pub use packet::{HEADER_LEN, Packet, PacketKind};
pub use socket::{SocketConnection, SocketListener, SocketReader, SocketWriter, attach, listen};
#[cfg(feature = "tokio")]
pub use socket_tokio::{
    AsyncSocketConnection, AsyncSocketListener, AsyncSocketReader, AsyncSocketWriter, attach_async, listen_async,
};
#[cfg(feature = "tokio")]
pub use tokio_io::{AsyncPacketReader, AsyncPacketWriter};
