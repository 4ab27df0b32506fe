//! Blocking adapter: packet reading and writing over `std::io`, for plain threads (the agent).
//!
//! [`PacketReader`] wraps any [`Read`] with a buffer and a [`FrameDecoder`]; [`PacketWriter`] wraps
//! any [`Write`] behind an `Arc<Mutex<_>>` so that several threads (reply senders, event senders)
//! can share it. Each packet is encoded into one buffer first and written with a single
//! `write_all` under the lock, so packets from different threads never interleave.

use std::io::{self, Read, Write};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use bytes::BytesMut;

use crate::error::TransportError;
use crate::framing::FrameDecoder;
use crate::packet::Packet;

/// How many bytes one `read` call asks for. Independent of any length the peer claims.
pub(crate) const READ_CHUNK: usize = 16 * 1024;

/// Reads whole packets from a byte stream.
#[derive(Debug)]
pub struct PacketReader<R> {
    inner: R,
    buf: BytesMut,
    decoder: FrameDecoder,
    /// Read no byte past the end of the current packet (for one-off reads that drop the reader).
    exact: bool,
}

impl<R: Read> PacketReader<R> {
    /// A reader with the default decoder (see [`crate::DEFAULT_MAX_PACKET_SIZE`]).
    pub fn new(inner: R) -> PacketReader<R> {
        PacketReader::with_decoder(inner, FrameDecoder::default())
    }

    /// A reader with the given decoder configuration.
    pub fn with_decoder(inner: R, decoder: FrameDecoder) -> PacketReader<R> {
        PacketReader { inner, buf: BytesMut::new(), decoder, exact: false }
    }

    /// Changes the largest packet accepted from now on.
    pub fn set_max_packet_size(&mut self, max_packet_size: u32) {
        self.decoder = FrameDecoder::new(max_packet_size).with_strict_flags(self.decoder.strict_flags());
    }

    /// Refuse command packets with undefined flag bits from now on (see
    /// [`FrameDecoder::with_strict_flags`]): the agent reads its debugger's packets this way.
    pub fn set_strict_flags(&mut self, strict: bool) {
        self.decoder = self.decoder.with_strict_flags(strict);
    }

    /// Blocks until a whole packet has arrived and returns it.
    ///
    /// Returns `Ok(None)` when the peer closed the stream cleanly between packets, and
    /// [`TransportError::TruncatedPacket`] when it closed in the middle of one. Framing errors are
    /// fatal: the stream cannot be resynchronized, so the caller should close the connection.
    pub fn read_packet(&mut self) -> Result<Option<Packet>, TransportError> {
        let mut chunk = [0u8; READ_CHUNK];
        loop {
            if let Some(packet) = self.decoder.decode(&mut self.buf)? {
                return Ok(Some(packet));
            }
            // Normally read whatever is there (several small packets may come in one read); in
            // exact mode, only up to the end of the length field and then of the packet.
            let want = if self.exact {
                match self.decoder.bytes_wanted(&self.buf)? {
                    Some(n) => n.clamp(1, READ_CHUNK),
                    None => 4 - self.buf.len(),
                }
            } else {
                READ_CHUNK
            };
            match self.inner.read(&mut chunk[..want]) {
                Ok(0) if self.buf.is_empty() => return Ok(None),
                Ok(0) => return Err(TransportError::TruncatedPacket { buffered: self.buf.len() }),
                Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(TransportError::io("reading a JDWP packet", e)),
            }
        }
    }

    /// The wrapped stream.
    pub fn get_ref(&self) -> &R {
        &self.inner
    }

    /// The wrapped stream and any bytes already read from it but not yet returned as a packet.
    pub fn into_parts(self) -> (R, BytesMut) {
        (self.inner, self.buf)
    }
}

/// Reads one packet from `reader` with the default decoder.
///
/// Convenience for one-off reads: it reads no further than the packet's end (it never buffers
/// bytes of the next packet), at the cost of small reads. For a connection, keep a
/// [`PacketReader`] instead. Returns `Ok(None)` on a clean end of stream before the packet.
pub fn read_packet(reader: &mut impl Read) -> Result<Option<Packet>, TransportError> {
    let mut packets = PacketReader::new(reader);
    packets.exact = true;
    packets.read_packet()
}

/// Writes packets to a byte stream; cloneable and shareable between threads.
#[derive(Debug)]
pub struct PacketWriter<W> {
    inner: Arc<Mutex<W>>,
}

impl<W> Clone for PacketWriter<W> {
    fn clone(&self) -> Self {
        PacketWriter { inner: Arc::clone(&self.inner) }
    }
}

impl<W: Write> PacketWriter<W> {
    /// Wraps `inner`; clones of the result share it.
    pub fn new(inner: W) -> PacketWriter<W> {
        PacketWriter { inner: Arc::new(Mutex::new(inner)) }
    }

    /// Encodes `packet` and writes all of it, then flushes, under one lock.
    ///
    /// Blocks while another thread is writing. On error the stream may hold part of a packet, so
    /// the connection should be closed.
    pub fn write_packet(&self, packet: &Packet) -> Result<(), TransportError> {
        let bytes = packet.encode()?;
        let mut inner = self.lock();
        inner.write_all(&bytes).map_err(|e| TransportError::io("writing a JDWP packet", e))?;
        inner.flush().map_err(|e| TransportError::io("flushing a JDWP packet", e))
    }

    /// Encodes `packets` into one buffer and writes it with one `write_all`, then flushes, under
    /// one lock: the packets go out back to back, in order, in as few system calls as the stream
    /// needs (one, for a socket that takes them all). Nothing is written if one cannot be encoded.
    pub fn write_packets(&self, packets: &[Packet]) -> Result<(), TransportError> {
        let mut bytes = Vec::with_capacity(packets.iter().map(Packet::encoded_len).sum());
        for packet in packets {
            packet.encode_into(&mut bytes)?;
        }
        let mut inner = self.lock();
        inner.write_all(&bytes).map_err(|e| TransportError::io("writing JDWP packets", e))?;
        inner.flush().map_err(|e| TransportError::io("flushing JDWP packets", e))
    }

    /// Locks the stream for direct use (for example to shut it down). Packets written through
    /// other clones wait meanwhile.
    pub fn lock(&self) -> MutexGuard<'_, W> {
        // A panic while the lock was held cannot have happened inside `write_packet` (it does
        // not panic), so the stream is as usable as the I/O errors already reported left it.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jdwp_protocol::ErrorCode;
    use std::io::Cursor;

    /// A reader that hands out at most `step` bytes per call and is interrupted every other call.
    struct Trickle {
        data: Vec<u8>,
        pos: usize,
        step: usize,
        interrupt: bool,
    }

    impl Read for Trickle {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            self.interrupt = !self.interrupt;
            if self.interrupt {
                return Err(io::Error::from(io::ErrorKind::Interrupted));
            }
            let n = self.step.min(out.len()).min(self.data.len() - self.pos);
            out[..n].copy_from_slice(&self.data[self.pos..self.pos + n]);
            self.pos += n;
            Ok(n)
        }
    }

    #[test]
    fn reader_handles_trickled_and_interrupted_input() {
        let packets = [
            Packet::command(1, 1, 7, vec![]),
            Packet::reply(1, ErrorCode::NONE, vec![9; 40_000]),
            Packet::command(2, 64, 100, vec![1, 2, 3]),
        ];
        let mut data = Vec::new();
        for p in &packets {
            p.encode_into(&mut data).unwrap();
        }
        for step in [1, 3, 11, 4096, 100_000] {
            let mut r = PacketReader::new(Trickle { data: data.clone(), pos: 0, step, interrupt: false });
            for p in &packets {
                assert_eq!(r.read_packet().unwrap().as_ref(), Some(p));
            }
            assert_eq!(r.read_packet().unwrap(), None);
        }
    }

    #[test]
    fn reader_reports_truncation_and_lies() {
        let bytes = Packet::command(1, 1, 1, vec![1, 2, 3]).encode().unwrap();
        let mut r = PacketReader::new(Cursor::new(bytes[..bytes.len() - 1].to_vec()));
        assert!(matches!(r.read_packet(), Err(TransportError::TruncatedPacket { buffered: 13 })));

        let mut r = PacketReader::new(Cursor::new(vec![0xff, 0xff, 0xff, 0xff, 0, 0, 0]));
        let err = r.read_packet().unwrap_err();
        assert!(matches!(err, TransportError::Frame(crate::FrameError::TooLarge { .. })), "{err}");

        let mut r = PacketReader::new(Cursor::new(vec![0, 0, 0, 2]));
        assert!(matches!(r.read_packet(), Err(TransportError::Frame(crate::FrameError::LengthTooSmall { length: 2 }))));
    }

    #[test]
    fn one_off_read_packet_does_not_overread() {
        let mut data = Packet::command(1, 2, 3, vec![4]).encode().unwrap();
        data.extend_from_slice(b"rest");
        let mut cursor = Cursor::new(data);
        assert_eq!(read_packet(&mut cursor).unwrap(), Some(Packet::command(1, 2, 3, vec![4])));
        assert_eq!(cursor.position(), 12);
        let mut empty = Cursor::new(Vec::new());
        assert_eq!(read_packet(&mut empty).unwrap(), None);
    }

    #[test]
    fn writer_clones_share_one_stream_and_never_interleave() {
        let writer = PacketWriter::new(Vec::<u8>::new());
        let threads: Vec<_> = (0..4u8)
            .map(|t| {
                let w = writer.clone();
                std::thread::spawn(move || {
                    for i in 0..50u32 {
                        w.write_packet(&Packet::command(i, t, t, vec![t; 300 + i as usize])).unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let data = std::mem::take(&mut *writer.lock());
        let mut r = PacketReader::new(Cursor::new(data));
        let mut count = 0;
        while let Some(p) = r.read_packet().unwrap() {
            let crate::PacketKind::Command { set, cmd } = p.kind else { panic!("not a command") };
            assert_eq!(set, cmd);
            assert!(p.body.iter().all(|&b| b == set));
            count += 1;
        }
        assert_eq!(count, 200);
    }

    /// Counts the writes it is given.
    struct Writes(Vec<u8>, usize);

    impl io::Write for Writes {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.1 += 1;
            self.0.extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn packets_written_together_go_in_one_write_in_order() {
        let writer = PacketWriter::new(Writes(Vec::new(), 0));
        let packets: Vec<Packet> = (0..5u32).map(|i| Packet::command(i, 64, 100, vec![i as u8; i as usize])).collect();
        writer.write_packets(&packets).unwrap();
        writer.write_packets(&[]).unwrap();
        let Writes(data, writes) = std::mem::replace(&mut *writer.lock(), Writes(Vec::new(), 0));
        assert_eq!(writes, 1, "one write for the batch (and none for an empty one)");
        let mut r = PacketReader::new(Cursor::new(data));
        for expected in &packets {
            assert_eq!(r.read_packet().unwrap().as_ref(), Some(expected));
        }
        assert_eq!(r.read_packet().unwrap(), None);
    }
}
