//! Sans-I/O framing: cutting a byte stream into JDWP packets.
//!
//! [`FrameDecoder`] does no I/O. Whoever owns the stream appends received bytes to a
//! [`BytesMut`] and asks the decoder for the next packet; the blocking reader
//! ([`crate::blocking::PacketReader`]) and the tokio reader (`tokio_io::AsyncPacketReader`)
//! are thin loops around it, so both sides of the debugger frame packets identically.
//!
//! The decoder never allocates on the strength of a length field: it waits until the bytes of a
//! whole packet are actually buffered, and only then copies the body out. A length field below the
//! header size or above the configured maximum is an error at once, as soon as its four bytes
//! arrive. Errors are fatal for the stream (there is no way to find the next packet boundary), and
//! the decoder keeps reporting the same error if asked again.

use bytes::{Buf, BytesMut};

use crate::packet::{FLAG_REPLY, HEADER_LEN, Packet};

/// The default limit on one packet's length (header included): 64 MiB.
///
/// The JDK's transports accept anything up to `i32::MAX`. A lower limit keeps a corrupt or hostile
/// length from pinning memory while still fitting what real sessions send: the largest packets in
/// practice are `RedefineClasses` commands (class files, usually well under a few MiB) and replies
/// such as `ArrayReference.GetValues` on big arrays or `AllClasses` in large applications, which
/// stay far below this. Use [`FrameDecoder::new`] for another limit.
pub const DEFAULT_MAX_PACKET_SIZE: u32 = 64 * 1024 * 1024;

/// Why a byte stream (or a packet to send) is not valid JDWP framing.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    /// The length field is smaller than the 11-byte header it must include.
    #[error("packet length field is {length}, smaller than the {HEADER_LEN}-byte header it must include")]
    LengthTooSmall {
        /// The length field as received.
        length: u32,
    },
    /// The length field exceeds the configured maximum packet size.
    #[error("packet length field is {length} bytes, over the limit of {max} bytes")]
    TooLarge {
        /// The length field as received.
        length: u32,
        /// The decoder's limit.
        max: u32,
    },
    /// A complete frame was handed over whose length field disagrees with its size.
    #[error("packet length field is {length} but the frame holds {frame_len} bytes")]
    LengthMismatch {
        /// The length field as received.
        length: u32,
        /// The number of bytes actually in the frame.
        frame_len: usize,
    },
    /// A command packet's flags byte is neither 0 nor has the reply bit: undefined bits are set.
    /// Only a decoder made [`strict`](FrameDecoder::with_strict_flags) reports it (the JDK's agent
    /// treats it as a transport error and drops the connection; a debugger may be lenient).
    #[error("received a JDWP packet with flags != 0x0 (actual={flags:#x}) when a command packet was expected")]
    UndefinedFlags {
        /// The flags byte as received.
        flags: u8,
    },
    /// A packet to encode has a body too long for the 32-bit length field.
    #[error("packet body of {body_len} bytes is too long for the 32-bit length field")]
    BodyTooLarge {
        /// The body length.
        body_len: usize,
    },
}

/// Incremental JDWP frame decoder. Holds only its configuration; the buffer belongs to the caller.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameDecoder {
    max_packet_size: u32,
    /// Refuse command packets with undefined flag bits (see [`FrameError::UndefinedFlags`]).
    strict_flags: bool,
}

impl Default for FrameDecoder {
    fn default() -> Self {
        FrameDecoder { max_packet_size: DEFAULT_MAX_PACKET_SIZE, strict_flags: false }
    }
}

impl FrameDecoder {
    /// A decoder that rejects packets longer than `max_packet_size` bytes (header included).
    ///
    /// A limit below the header size is raised to it, so header-only packets always pass.
    pub fn new(max_packet_size: u32) -> FrameDecoder {
        FrameDecoder { max_packet_size: max_packet_size.max(HEADER_LEN as u32), strict_flags: false }
    }

    /// The same decoder, refusing (or, with `false`, accepting) command packets whose flags byte
    /// is not 0. JDWP defines one flag, the reply bit; a packet with it is a reply whatever the other
    /// bits are (the JDK's agent ignores replies), while a command with any other bit set is a
    /// protocol violation the JDK's agent answers by dropping the connection. The agent decodes
    /// strictly, as the JDK's does; the debugger side stays lenient.
    pub fn with_strict_flags(self, strict: bool) -> FrameDecoder {
        FrameDecoder { strict_flags: strict, ..self }
    }

    /// Whether undefined flag bits in a command packet are an error.
    pub fn strict_flags(&self) -> bool {
        self.strict_flags
    }

    /// The largest packet length (header included) this decoder accepts.
    pub fn max_packet_size(&self) -> u32 {
        self.max_packet_size
    }

    /// Checks the length field at the front of `buf`, if its four bytes are there.
    ///
    /// Returns the total frame length once it is known and valid, `None` while fewer than four
    /// bytes are buffered.
    pub fn peek_length(&self, buf: &[u8]) -> Result<Option<usize>, FrameError> {
        let Some(len_bytes) = buf.first_chunk::<4>() else {
            return Ok(None);
        };
        let length = u32::from_be_bytes(*len_bytes);
        if (length as usize) < HEADER_LEN {
            return Err(FrameError::LengthTooSmall { length });
        }
        if length > self.max_packet_size {
            return Err(FrameError::TooLarge { length, max: self.max_packet_size });
        }
        Ok(Some(length as usize))
    }

    /// Takes the next packet off the front of `buf`.
    ///
    /// Returns `Ok(None)` (leaving `buf` untouched) until a whole packet is buffered, then removes
    /// exactly that packet's bytes and returns it. Bytes after it stay in `buf` for the next call.
    pub fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Packet>, FrameError> {
        let Some(length) = self.peek_length(buf)? else {
            return Ok(None);
        };
        if buf.len() < length {
            return Ok(None);
        }
        let flags = buf[8];
        if self.strict_flags && flags != 0 && flags & FLAG_REPLY == 0 {
            return Err(FrameError::UndefinedFlags { flags });
        }
        let packet = Packet::decode_frame(&buf[..length])?;
        buf.advance(length);
        Ok(Some(packet))
    }

    /// How many more bytes must arrive before [`decode`](Self::decode) can return a packet, if
    /// known (it is not while the length field is incomplete). Errors as `decode` would.
    ///
    /// Readers may use it to size a read, never to pre-allocate: the length is the peer's claim.
    pub fn bytes_wanted(&self, buf: &[u8]) -> Result<Option<usize>, FrameError> {
        Ok(self.peek_length(buf)?.map(|length| length.saturating_sub(buf.len())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::PacketKind;
    use jdwp_protocol::ErrorCode;

    fn sample_packets() -> Vec<Packet> {
        vec![
            Packet::command(1, 1, 1, vec![]),
            Packet::command(0xdead_beef, 64, 100, (0..=255).collect()),
            Packet::reply(2, ErrorCode::NONE, vec![0, 0, 0, 8]),
            Packet::reply(u32::MAX, ErrorCode(0xffff), vec![]),
            Packet::reply(3, ErrorCode::INVALID_THREAD, vec![]),
            Packet::command(4, 0xff, 0xff, vec![0x80; 1000]),
        ]
    }

    #[test]
    fn header_layout_matches_spec() {
        let cmd = Packet::command(0x0102_0304, 15, 1, vec![0xaa, 0xbb]).encode().unwrap();
        assert_eq!(cmd, [0, 0, 0, 13, 1, 2, 3, 4, 0x00, 15, 1, 0xaa, 0xbb]);
        let reply = Packet::reply(7, ErrorCode(0x1234), vec![]).encode().unwrap();
        assert_eq!(reply, [0, 0, 0, 11, 0, 0, 0, 7, 0x80, 0x12, 0x34]);
    }

    #[test]
    fn round_trip_whole_stream() {
        let packets = sample_packets();
        let mut buf = BytesMut::new();
        for p in &packets {
            buf.extend_from_slice(&p.encode().unwrap());
        }
        let mut dec = FrameDecoder::default();
        for p in &packets {
            assert_eq!(dec.decode(&mut buf).unwrap().as_ref(), Some(p));
        }
        assert_eq!(dec.decode(&mut buf).unwrap(), None);
        assert!(buf.is_empty());
    }

    #[test]
    fn unknown_flag_bits_are_ignored() {
        let mut bytes = Packet::command(9, 1, 2, vec![5]).encode().unwrap();
        bytes[8] = 0x01;
        let mut buf = BytesMut::from(&bytes[..]);
        let p = FrameDecoder::default().decode(&mut buf).unwrap().unwrap();
        assert_eq!(p.kind, PacketKind::Command { set: 1, cmd: 2 });
        bytes[8] = 0x81;
        let mut buf = BytesMut::from(&bytes[..]);
        let p = FrameDecoder::default().decode(&mut buf).unwrap().unwrap();
        assert_eq!(p.kind, PacketKind::Reply { error: ErrorCode(0x0102) });
    }

    #[test]
    fn strict_decoder_refuses_commands_with_undefined_flags() {
        let mut bytes = Packet::command(9, 1, 1, vec![]).encode().unwrap();
        bytes[8] = 0x21;
        let strict = FrameDecoder::default().with_strict_flags(true);
        assert!(strict.strict_flags());
        let mut buf = BytesMut::from(&bytes[..]);
        let err = { strict }.decode(&mut buf).unwrap_err();
        assert_eq!(err, FrameError::UndefinedFlags { flags: 0x21 });
        assert!(err.to_string().contains("flags != 0x0 (actual=0x21)"), "{err}");
        assert_eq!(buf.len(), bytes.len(), "an error must not consume input");
        // Well-formed commands and replies pass; a reply with extra bits is still a reply.
        for (flags, reply) in [(0x00, false), (0x80, true), (0x81, true)] {
            bytes[8] = flags;
            let mut buf = BytesMut::from(&bytes[..]);
            let p = { strict }.decode(&mut buf).unwrap().unwrap();
            assert_eq!(p.is_reply(), reply, "flags {flags:#x}");
        }
        // The strictness survives a limit change only when asked for again.
        assert!(!FrameDecoder::new(100).strict_flags());
    }

    /// Tiny deterministic PRNG (xorshift64*), enough for fuzz-style loops without a dependency.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
    }

    #[test]
    fn split_at_arbitrary_chunk_boundaries_decodes_once() {
        let packets = sample_packets();
        let mut stream = Vec::new();
        for p in &packets {
            p.encode_into(&mut stream).unwrap();
        }
        for seed in 1..=500u64 {
            let mut rng = Rng(seed);
            let mut dec = FrameDecoder::default();
            let mut buf = BytesMut::new();
            let mut out = Vec::new();
            let mut pos = 0;
            while pos < stream.len() {
                // Mostly tiny chunks (including single bytes), sometimes large ones.
                let max_chunk = if rng.below(4) == 0 { 2000 } else { 7 };
                let n = (1 + rng.below(max_chunk)).min(stream.len() - pos);
                buf.extend_from_slice(&stream[pos..pos + n]);
                pos += n;
                while let Some(p) = dec.decode(&mut buf).unwrap() {
                    out.push(p);
                }
            }
            assert_eq!(out, packets, "seed {seed}");
            assert!(buf.is_empty());
        }
    }

    #[test]
    fn every_prefix_is_incomplete_not_an_error() {
        let bytes = Packet::command(5, 3, 4, vec![1, 2, 3, 4, 5]).encode().unwrap();
        let mut dec = FrameDecoder::default();
        for cut in 0..bytes.len() {
            let mut buf = BytesMut::from(&bytes[..cut]);
            assert_eq!(dec.decode(&mut buf), Ok(None), "prefix of {cut} bytes");
            assert_eq!(buf.len(), cut, "an incomplete packet must not be consumed");
        }
    }

    #[test]
    fn huge_length_is_an_error_before_the_body_arrives() {
        let mut dec = FrameDecoder::new(1024);
        let mut buf = BytesMut::from(&[0x7f, 0xff, 0xff, 0xff][..]);
        assert_eq!(dec.decode(&mut buf), Err(FrameError::TooLarge { length: 0x7fff_ffff, max: 1024 }));
        let mut buf = BytesMut::from(&u32::MAX.to_be_bytes()[..]);
        assert!(matches!(FrameDecoder::default().decode(&mut buf), Err(FrameError::TooLarge { .. })));
        // Exactly at the limit is fine.
        let mut buf = BytesMut::from(&Packet::command(1, 1, 1, vec![0; 1024 - 11]).encode().unwrap()[..]);
        assert!(dec.decode(&mut buf).unwrap().is_some());
        let mut buf = BytesMut::from(&Packet::command(1, 1, 1, vec![0; 1024 - 10]).encode().unwrap()[..]);
        assert!(matches!(dec.decode(&mut buf), Err(FrameError::TooLarge { length: 1025, .. })));
    }

    #[test]
    fn length_below_header_is_an_error() {
        for length in 0..11u32 {
            let mut buf = BytesMut::from(&length.to_be_bytes()[..]);
            buf.extend_from_slice(&[0; 20]);
            let err = FrameDecoder::default().decode(&mut buf).unwrap_err();
            assert_eq!(err, FrameError::LengthTooSmall { length });
            assert!(err.to_string().contains(&format!("is {length},")), "{err}");
        }
    }

    #[test]
    fn error_is_sticky() {
        let mut dec = FrameDecoder::default();
        let mut buf = BytesMut::from(&[0, 0, 0, 3, 1, 2, 3][..]);
        let first = dec.decode(&mut buf).unwrap_err();
        assert_eq!(dec.decode(&mut buf).unwrap_err(), first);
    }

    #[test]
    fn tiny_configured_limit_still_allows_header_only_packets() {
        let mut dec = FrameDecoder::new(0);
        assert_eq!(dec.max_packet_size(), 11);
        let mut buf = BytesMut::from(&Packet::reply(1, ErrorCode::NONE, vec![]).encode().unwrap()[..]);
        assert!(dec.decode(&mut buf).unwrap().is_some());
    }

    #[test]
    fn decode_frame_checks_length_field() {
        assert!(matches!(Packet::decode_frame(&[0; 5]), Err(FrameError::LengthTooSmall { length: 5 })));
        let mut bytes = Packet::command(1, 1, 1, vec![1, 2]).encode().unwrap();
        bytes.push(0);
        assert!(matches!(Packet::decode_frame(&bytes), Err(FrameError::LengthMismatch { length: 13, frame_len: 14 })));
    }

    #[test]
    fn random_bytes_never_panic_and_consume_correctly() {
        for seed in 1..=4000u64 {
            let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
            let len = rng.below(64);
            let mut bytes: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
            // Half the time make the length field plausible so the body path gets exercised too.
            if bytes.len() >= 4 && rng.below(2) == 0 {
                let claimed = 11 + rng.below(60) as u32;
                bytes[..4].copy_from_slice(&claimed.to_be_bytes());
            }
            let mut dec = FrameDecoder::new(1 + rng.below(100) as u32);
            let mut buf = BytesMut::from(&bytes[..]);
            let mut consumed = 0;
            loop {
                let before = buf.len();
                match dec.decode(&mut buf) {
                    Ok(Some(p)) => {
                        let used = before - buf.len();
                        assert_eq!(used, p.encoded_len(), "seed {seed}");
                        assert_eq!(p.encode().unwrap(), {
                            let mut re = bytes[consumed..consumed + used].to_vec();
                            re[8] &= 0x80; // unknown flag bits are dropped
                            re
                        });
                        consumed += used;
                    }
                    Ok(None) => {
                        assert_eq!(buf.len(), before);
                        break;
                    }
                    Err(_) => {
                        assert_eq!(buf.len(), before, "an error must not consume input");
                        break;
                    }
                }
            }
        }
    }
}
