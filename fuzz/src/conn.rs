//! One debugger connection, driven synchronously with bounded waits: raw frames out (the fuzzer
//! writes its own headers, lies included), packets in through `jdwp-transports`' framing. Events
//! the VM sends while we wait are queued for the run to handle.

use std::collections::VecDeque;
use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use jdwp_protocol::commands::virtual_machine as vm;
use jdwp_protocol::{Command, IdSizes, codec};
use jdwp_transports::{FrameDecoder, Packet, PacketKind, PacketReader, TransportError, handshake_as_debugger};
use test_rig::wire::{ReplyError, decode_reply, id_sizes};

/// Why a housekeeping command failed.
#[derive(Debug, thiserror::Error)]
pub enum ConnError {
    #[error("{0}")]
    Io(String),
    /// An error reply, or one that does not decode.
    #[error(transparent)]
    Reply(#[from] ReplyError),
    #[error("the connection was closed")]
    Closed,
    #[error("no reply to {0} in time")]
    Timeout(&'static str),
}

/// What came back for one packet.
#[derive(Debug)]
pub enum Outcome {
    Reply(Packet),
    /// The peer closed the connection (or reset it, or sent a frame we cannot read).
    Closed(String),
    /// Nothing within the wait.
    Timeout,
}

pub struct Conn {
    stream: TcpStream,
    reader: PacketReader<TcpStream>,
    pub sizes: IdSizes,
    next_id: u32,
    /// Command packets (events) the VM sent, not yet handled.
    pub events: VecDeque<Packet>,
    /// Set once the stream is known broken.
    pub broken: bool,
}

/// Largest reply we read (AllClasses of a big VM, heap histograms).
const MAX_PACKET: u32 = 512 << 20;

impl Conn {
    /// Connects, handshakes and reads the ID sizes.
    pub fn attach(addr: SocketAddr, timeout: Duration) -> Result<Conn, ConnError> {
        let stream = TcpStream::connect_timeout(&addr, timeout).map_err(|e| ConnError::Io(format!("connect: {e}")))?;
        let _ = stream.set_nodelay(true);
        handshake_as_debugger(&stream, Some(timeout)).map_err(|e| ConnError::Io(format!("handshake: {e}")))?;
        stream.set_write_timeout(Some(timeout)).map_err(|e| ConnError::Io(e.to_string()))?;
        let read_half = stream.try_clone().map_err(|e| ConnError::Io(e.to_string()))?;
        let reader = PacketReader::with_decoder(read_half, FrameDecoder::new(MAX_PACKET));
        let mut conn = Conn {
            stream,
            reader,
            sizes: IdSizes::default(),
            next_id: 0x8000_0000,
            events: VecDeque::new(),
            broken: false,
        };
        conn.sizes = id_sizes(&conn.request(&vm::IdSizesCmd {}, timeout)?)?;
        Ok(conn)
    }

    /// Writes raw bytes (a whole frame, or a lie).
    pub fn send_bytes(&mut self, bytes: &[u8]) -> Result<(), String> {
        self.stream.write_all(bytes).map_err(|e| {
            self.broken = true;
            format!("write: {e}")
        })
    }

    /// Reads until the reply with `id` arrives, the connection ends, or `timeout` passes.
    pub fn wait_reply(&mut self, id: u32, timeout: Duration) -> Outcome {
        let deadline = Instant::now() + timeout;
        loop {
            let now = Instant::now();
            if now >= deadline {
                return Outcome::Timeout;
            }
            let _ = self.reader.get_ref().set_read_timeout(Some((deadline - now).max(Duration::from_millis(1))));
            match self.reader.read_packet() {
                Ok(Some(p)) => match p.kind {
                    PacketKind::Reply { .. } if p.id == id => return Outcome::Reply(p),
                    PacketKind::Reply { .. } => {} // a late reply to something we gave up on
                    PacketKind::Command { .. } => self.events.push_back(p),
                },
                Ok(None) => {
                    self.broken = true;
                    return Outcome::Closed("end of stream".into());
                }
                Err(TransportError::Io { source, .. })
                    if matches!(source.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) =>
                {
                    return Outcome::Timeout;
                }
                Err(e) => {
                    self.broken = true;
                    return Outcome::Closed(e.to_string());
                }
            }
        }
    }

    /// A fresh id for a housekeeping command.
    pub fn next_id(&mut self) -> u32 {
        let id = self.next_id;
        self.next_id = self.next_id.wrapping_add(1) | 0x8000_0000;
        id
    }

    /// Sends a raw command and waits for its reply.
    pub fn raw(&mut self, set: u8, cmd: u8, body: Vec<u8>, timeout: Duration) -> Result<Packet, ConnError> {
        let id = self.next_id();
        let bytes = Packet::command(id, set, cmd, body).encode().map_err(|e| ConnError::Io(e.to_string()))?;
        self.send_bytes(&bytes).map_err(ConnError::Io)?;
        match self.wait_reply(id, timeout) {
            Outcome::Reply(p) => Ok(p),
            Outcome::Closed(_) => Err(ConnError::Closed),
            Outcome::Timeout => Err(ConnError::Timeout("a housekeeping command")),
        }
    }

    /// Sends a typed command and decodes its reply.
    pub fn request<C: Command>(&mut self, command: &C, timeout: Duration) -> Result<C::Reply, ConnError> {
        let body = codec::encode_body(command, self.sizes);
        let reply = self.raw(C::SET, C::CMD, body, timeout).map_err(|e| match e {
            ConnError::Timeout(_) => ConnError::Timeout(C::QUALIFIED_NAME),
            e => e,
        })?;
        Ok(decode_reply::<C>(&reply, self.sizes)?)
    }

    /// Closes the connection.
    pub fn close(self) {
        let _ = self.stream.shutdown(std::net::Shutdown::Both);
    }
}
