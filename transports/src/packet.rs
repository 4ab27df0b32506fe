//! The JDWP packet: an 11-byte header followed by a body.
//!
//! Header layout, all integers big-endian:
//!
//! | bytes | command packet       | reply packet         |
//! |-------|----------------------|----------------------|
//! | 0..4  | length (header+body) | length (header+body) |
//! | 4..8  | id                   | id                   |
//! | 8     | flags = 0x00         | flags = 0x80         |
//! | 9..11 | command set, command | error code (u16)     |
//!
//! The body is opaque here: `jdwp-protocol` gives it meaning. Only this crate writes or parses the
//! header.

use jdwp_protocol::ErrorCode;

use crate::framing::FrameError;

/// Size of the packet header in bytes; the smallest legal `length` field.
pub const HEADER_LEN: usize = 11;

/// The flag bit that marks a packet as a reply. No other bit is defined by JDWP.
pub const FLAG_REPLY: u8 = 0x80;

/// What a packet is: a command (from either side) or the reply to one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PacketKind {
    /// A command; events sent by the VM are commands too (set 64, command 100).
    Command {
        /// Command set number.
        set: u8,
        /// Command number within the set.
        cmd: u8,
    },
    /// A reply to the command with the same id.
    Reply {
        /// `ErrorCode::NONE` on success; otherwise the body is normally empty.
        error: ErrorCode,
    },
}

/// One JDWP packet with its body still encoded.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Packet {
    /// Matches a reply to its command. The sender of a command chooses it.
    pub id: u32,
    /// Command or reply, with the header fields that differ between the two.
    pub kind: PacketKind,
    /// The body bytes, laid out by `jdwp-protocol`.
    pub body: Vec<u8>,
}

impl Packet {
    /// A command packet.
    pub fn command(id: u32, set: u8, cmd: u8, body: Vec<u8>) -> Packet {
        Packet { id, kind: PacketKind::Command { set, cmd }, body }
    }

    /// A reply packet.
    pub fn reply(id: u32, error: ErrorCode, body: Vec<u8>) -> Packet {
        Packet { id, kind: PacketKind::Reply { error }, body }
    }

    /// Whether this is a reply.
    pub fn is_reply(&self) -> bool {
        matches!(self.kind, PacketKind::Reply { .. })
    }

    /// The flags byte this packet is written with.
    pub fn flags(&self) -> u8 {
        match self.kind {
            PacketKind::Command { .. } => 0,
            PacketKind::Reply { .. } => FLAG_REPLY,
        }
    }

    /// Header plus body, in bytes. May exceed `u32::MAX`, in which case encoding fails.
    pub fn encoded_len(&self) -> usize {
        HEADER_LEN.saturating_add(self.body.len())
    }

    /// Appends the encoded packet (header and body) to `out`.
    ///
    /// Fails only if the packet is too long for the 32-bit length field; `out` is then unchanged.
    pub fn encode_into(&self, out: &mut Vec<u8>) -> Result<(), FrameError> {
        let length =
            u32::try_from(self.encoded_len()).map_err(|_| FrameError::BodyTooLarge { body_len: self.body.len() })?;
        out.reserve(self.encoded_len());
        out.extend_from_slice(&length.to_be_bytes());
        out.extend_from_slice(&self.id.to_be_bytes());
        out.push(self.flags());
        match self.kind {
            PacketKind::Command { set, cmd } => out.extend_from_slice(&[set, cmd]),
            PacketKind::Reply { error } => out.extend_from_slice(&error.0.to_be_bytes()),
        }
        out.extend_from_slice(&self.body);
        Ok(())
    }

    /// The encoded packet (header and body) as one buffer, ready for a single write.
    pub fn encode(&self) -> Result<Vec<u8>, FrameError> {
        let mut out = Vec::new();
        self.encode_into(&mut out)?;
        Ok(out)
    }

    /// Parses one complete frame: exactly `length` bytes, header included.
    ///
    /// Checks that the buffer is at least a header long and that the length field equals the
    /// buffer's length; it does not apply a maximum size (that is the decoder's job).
    pub fn decode_frame(frame: &[u8]) -> Result<Packet, FrameError> {
        let Some((header, body)) = frame.split_first_chunk::<HEADER_LEN>() else {
            return Err(FrameError::LengthTooSmall { length: frame.len().min(u32::MAX as usize) as u32 });
        };
        let length = u32::from_be_bytes([header[0], header[1], header[2], header[3]]);
        if usize::try_from(length).ok() != Some(frame.len()) {
            return Err(FrameError::LengthMismatch { length, frame_len: frame.len() });
        }
        let id = u32::from_be_bytes([header[4], header[5], header[6], header[7]]);
        let flags = header[8];
        let kind = if flags & FLAG_REPLY != 0 {
            PacketKind::Reply { error: ErrorCode(u16::from_be_bytes([header[9], header[10]])) }
        } else {
            PacketKind::Command { set: header[9], cmd: header[10] }
        };
        Ok(Packet { id, kind, body: body.to_vec() })
    }
}
