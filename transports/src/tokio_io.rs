//! Tokio adapter: packet reading and writing over `AsyncRead`/`AsyncWrite`, for the client.
//!
//! The same [`FrameDecoder`] as the blocking side, driven by an async read loop.
//! [`AsyncPacketReader::read_packet`] is cancel-safe, so it can sit in a `select!` loop.
//! [`AsyncPacketWriter`] is cloneable; each packet is encoded first and written with one
//! `write_all` under a tokio mutex, so packets from different tasks never interleave.

use std::io;
use std::sync::Arc;

use bytes::BytesMut;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::{Mutex, MutexGuard};

use crate::blocking::READ_CHUNK;
use crate::error::TransportError;
use crate::framing::FrameDecoder;
use crate::packet::Packet;

/// Reads whole packets from an async byte stream.
#[derive(Debug)]
pub struct AsyncPacketReader<R> {
    inner: R,
    buf: BytesMut,
    decoder: FrameDecoder,
}

impl<R: AsyncRead + Unpin> AsyncPacketReader<R> {
    /// A reader with the default decoder (see [`crate::DEFAULT_MAX_PACKET_SIZE`]).
    pub fn new(inner: R) -> AsyncPacketReader<R> {
        AsyncPacketReader::with_decoder(inner, FrameDecoder::default())
    }

    /// A reader with the given decoder configuration.
    pub fn with_decoder(inner: R, decoder: FrameDecoder) -> AsyncPacketReader<R> {
        AsyncPacketReader { inner, buf: BytesMut::new(), decoder }
    }

    /// Changes the largest packet accepted from now on.
    pub fn set_max_packet_size(&mut self, max_packet_size: u32) {
        self.decoder = FrameDecoder::new(max_packet_size);
    }

    /// Waits until a whole packet has arrived and returns it.
    ///
    /// `Ok(None)` when the peer closed the stream cleanly between packets;
    /// [`TransportError::TruncatedPacket`] when it closed in the middle of one. Framing errors are
    /// fatal for the stream.
    ///
    /// Cancel-safe: if the future is dropped before completing, no bytes are lost; the next call
    /// continues where it stopped.
    pub async fn read_packet(&mut self) -> Result<Option<Packet>, TransportError> {
        loop {
            if let Some(packet) = self.decoder.decode(&mut self.buf)? {
                return Ok(Some(packet));
            }
            // Room for one chunk; growth follows the bytes that actually arrive.
            self.buf.reserve(READ_CHUNK);
            match self.inner.read_buf(&mut self.buf).await {
                Ok(0) if self.buf.is_empty() => return Ok(None),
                Ok(0) => return Err(TransportError::TruncatedPacket { buffered: self.buf.len() }),
                Ok(_) => {}
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

/// Writes packets to an async byte stream; cloneable and shareable between tasks.
#[derive(Debug)]
pub struct AsyncPacketWriter<W> {
    inner: Arc<Mutex<W>>,
}

impl<W> Clone for AsyncPacketWriter<W> {
    fn clone(&self) -> Self {
        AsyncPacketWriter { inner: Arc::clone(&self.inner) }
    }
}

impl<W: AsyncWrite + Unpin> AsyncPacketWriter<W> {
    /// Wraps `inner`; clones of the result share it.
    pub fn new(inner: W) -> AsyncPacketWriter<W> {
        AsyncPacketWriter { inner: Arc::new(Mutex::new(inner)) }
    }

    /// Encodes `packet` and writes all of it, then flushes, under one lock.
    ///
    /// Not cancel-safe: dropping the future while it writes can leave part of a packet on the
    /// stream, after which the connection is unusable. Callers that may cancel should hand the
    /// write to a task (or a single writer task fed by a channel).
    pub async fn write_packet(&self, packet: &Packet) -> Result<(), TransportError> {
        let bytes = packet.encode()?;
        let mut inner = self.inner.lock().await;
        inner.write_all(&bytes).await.map_err(|e| TransportError::io("writing a JDWP packet", e))?;
        inner.flush().await.map_err(|e| TransportError::io("flushing a JDWP packet", e))
    }

    /// Shuts down the writing direction (the peer sees end of stream), after any packet being
    /// written.
    pub async fn shutdown(&self) -> Result<(), TransportError> {
        match self.inner.lock().await.shutdown().await {
            Err(e) if e.kind() != io::ErrorKind::NotConnected => {
                Err(TransportError::io("shutting down the connection", e))
            }
            _ => Ok(()),
        }
    }

    /// Locks the stream for direct use; packets written through other clones wait meanwhile.
    pub async fn lock(&self) -> MutexGuard<'_, W> {
        self.inner.lock().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jdwp_protocol::ErrorCode;
    use tokio::io::duplex;

    #[tokio::test]
    async fn round_trip_over_a_small_pipe() {
        // A 7-byte pipe forces every packet across many reads.
        let (a, b) = duplex(7);
        let writer = AsyncPacketWriter::new(a);
        let mut reader = AsyncPacketReader::new(b);
        let packets = vec![
            Packet::command(1, 1, 1, vec![]),
            Packet::reply(1, ErrorCode::NONE, (0..200).collect()),
            Packet::command(2, 64, 100, vec![3; 33]),
        ];
        let sent = packets.clone();
        let w = writer.clone();
        let send = tokio::spawn(async move {
            for p in &sent {
                w.write_packet(p).await.unwrap();
            }
            w.shutdown().await.unwrap();
        });
        drop(writer);
        for p in &packets {
            assert_eq!(reader.read_packet().await.unwrap().as_ref(), Some(p));
        }
        assert_eq!(reader.read_packet().await.unwrap(), None);
        send.await.unwrap();
    }

    #[tokio::test]
    async fn cancelled_reads_lose_nothing() {
        let (mut a, b) = duplex(1024);
        let mut reader = AsyncPacketReader::new(b);
        let bytes = Packet::command(9, 2, 3, vec![1; 100]).encode().unwrap();
        a.write_all(&bytes[..50]).await.unwrap();
        // Poll the read once (it buffers the first half and cannot finish), then drop it.
        tokio::select! {
            biased;
            _ = reader.read_packet() => panic!("half a packet cannot complete a read"),
            () = std::future::ready(()) => {}
        }
        assert_eq!(reader.buf.len(), 50, "the cancelled read kept what it had read");
        a.write_all(&bytes[50..]).await.unwrap();
        assert_eq!(reader.read_packet().await.unwrap(), Some(Packet::command(9, 2, 3, vec![1; 100])));
    }

    #[tokio::test]
    async fn truncation_and_lies_are_errors() {
        let (mut a, b) = duplex(1024);
        let mut reader = AsyncPacketReader::new(b);
        a.write_all(&[0, 0, 0, 20, 1, 2]).await.unwrap();
        drop(a);
        assert!(matches!(reader.read_packet().await, Err(TransportError::TruncatedPacket { buffered: 6 })));

        let (mut a, b) = duplex(1024);
        let mut reader = AsyncPacketReader::with_decoder(b, FrameDecoder::new(100));
        a.write_all(&[0, 0, 0, 101]).await.unwrap();
        assert!(matches!(reader.read_packet().await, Err(TransportError::Frame(crate::FrameError::TooLarge { .. }))));
    }
}
