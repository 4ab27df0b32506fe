//! The JDWP connection: many commands in flight over one transport, replies matched by id, events
//! forwarded to a channel.
//!
//! A reader task owns the read half; callers write whole packets under a lock, register a oneshot
//! for the reply id, and await it. When the transport closes, every pending call fails at once
//! with [`JdiError::Disconnected`] and the event channel ends, so nothing waits forever.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use jdwp_protocol::{Command, ErrorCode, IdSizes, codec};
use jdwp_transports::{AsyncPacketReader, AsyncPacketWriter, Packet, PacketKind, TransportError};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{mpsc, oneshot};

use crate::error::{JdiError, Result};

type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The write side of any transport, with its concrete stream type erased.
trait PacketSink: Send + Sync {
    fn write<'a>(&'a self, packet: &'a Packet) -> BoxFuture<'a, Result<(), TransportError>>;
    fn close(&self) -> BoxFuture<'_, Result<(), TransportError>>;
}

impl<W: AsyncWrite + Send + Unpin + 'static> PacketSink for AsyncPacketWriter<W> {
    fn write<'a>(&'a self, packet: &'a Packet) -> BoxFuture<'a, Result<(), TransportError>> {
        Box::pin(self.write_packet(packet))
    }
    fn close(&self) -> BoxFuture<'_, Result<(), TransportError>> {
        Box::pin(self.shutdown())
    }
}

struct Pending {
    waiting: HashMap<u32, oneshot::Sender<Packet>>,
    /// Set once the reader has stopped; later calls fail immediately with it.
    closed: Option<String>,
}

/// A live JDWP connection (cheap to clone).
#[derive(Clone)]
pub struct Connection {
    inner: Arc<Inner>,
}

struct Inner {
    writer: Box<dyn PacketSink>,
    pending: Mutex<Pending>,
    next_id: AtomicU32,
    sizes: RwLock<IdSizes>,
}

impl Connection {
    /// Starts the reader task over a transport that has completed the handshake. Commands the VM
    /// sends (event composites) go to the returned channel; it ends when the connection closes.
    pub fn start<R, W>(
        reader: AsyncPacketReader<R>,
        writer: AsyncPacketWriter<W>,
    ) -> (Connection, mpsc::UnboundedReceiver<Packet>)
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        let inner = Arc::new(Inner {
            writer: Box::new(writer),
            pending: Mutex::new(Pending { waiting: HashMap::new(), closed: None }),
            next_id: AtomicU32::new(1),
            sizes: RwLock::new(IdSizes::default()),
        });
        let (events_tx, events_rx) = mpsc::unbounded_channel();
        tokio::spawn(read_loop(reader, Arc::downgrade(&inner), events_tx));
        (Connection { inner }, events_rx)
    }

    /// The ID sizes in force (HotSpot's defaults until [`Connection::set_id_sizes`]).
    pub fn id_sizes(&self) -> IdSizes {
        *self.inner.sizes.read().unwrap_or_else(|e| e.into_inner())
    }

    pub fn set_id_sizes(&self, sizes: IdSizes) {
        *self.inner.sizes.write().unwrap_or_else(|e| e.into_inner()) = sizes;
    }

    /// Whether the transport has closed.
    pub fn is_closed(&self) -> bool {
        self.lock_pending().closed.is_some()
    }

    fn lock_pending(&self) -> std::sync::MutexGuard<'_, Pending> {
        self.inner.pending.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Sends a command and waits for its typed reply.
    pub async fn send<C: Command>(&self, command: &C) -> Result<C::Reply> {
        let sizes = self.id_sizes();
        let body = self.send_raw(C::SET, C::CMD, codec::encode_body(command, sizes), C::QUALIFIED_NAME).await?;
        codec::decode_body(&body, sizes).map_err(|source| JdiError::Decode { command: C::QUALIFIED_NAME, source })
    }

    /// Sends an already-encoded command and returns the reply body (or the VM's error).
    pub async fn send_raw(&self, set: u8, cmd: u8, body: Vec<u8>, name: &'static str) -> Result<Vec<u8>> {
        let id = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        {
            let mut pending = self.lock_pending();
            if let Some(reason) = &pending.closed {
                return Err(JdiError::Disconnected { reason: Some(reason.clone()) });
            }
            pending.waiting.insert(id, tx);
        }
        let packet = Packet::command(id, set, cmd, body);
        if let Err(e) = self.inner.writer.write(&packet).await {
            self.lock_pending().waiting.remove(&id);
            return Err(JdiError::Disconnected { reason: Some(format!("sending {name}: {e}")) });
        }
        tracing::trace!(id, name, "command sent");
        let reply = rx.await.map_err(|_| {
            let reason = self.lock_pending().closed.clone();
            JdiError::Disconnected { reason }
        })?;
        match reply.kind {
            PacketKind::Reply { error } if error == ErrorCode::NONE => Ok(reply.body),
            PacketKind::Reply { error } => Err(JdiError::Jdwp { command: name, code: error }),
            // The reader routes only replies to callers.
            PacketKind::Command { .. } => Err(JdiError::Disconnected { reason: Some("protocol confusion".into()) }),
        }
    }

    /// Closes the write side; the VM then sees the debugger go away.
    pub async fn shutdown(&self) {
        let _ = self.inner.writer.close().await;
    }
}

async fn read_loop<R: AsyncRead + Unpin>(
    mut reader: AsyncPacketReader<R>,
    inner: std::sync::Weak<Inner>,
    events: mpsc::UnboundedSender<Packet>,
) {
    let reason = loop {
        match reader.read_packet().await {
            Ok(Some(packet)) => {
                let Some(inner) = inner.upgrade() else { return };
                route(&inner, &events, packet);
            }
            Ok(None) => break "the VM closed the connection".to_string(),
            Err(e) => break e.to_string(),
        }
    };
    tracing::debug!(%reason, "JDWP connection closed");
    if let Some(inner) = inner.upgrade() {
        let mut pending = inner.pending.lock().unwrap_or_else(|e| e.into_inner());
        pending.closed = Some(reason);
        // Dropping the senders wakes every waiting caller with an error.
        pending.waiting.clear();
    }
}

fn route(inner: &Inner, events: &mpsc::UnboundedSender<Packet>, packet: Packet) {
    match packet.kind {
        PacketKind::Reply { .. } => {
            let waiter = inner.pending.lock().unwrap_or_else(|e| e.into_inner()).waiting.remove(&packet.id);
            match waiter {
                Some(tx) => {
                    let _ = tx.send(packet);
                }
                None => tracing::warn!(id = packet.id, "reply to no pending command"),
            }
        }
        PacketKind::Command { set, cmd } => {
            if events.send(packet).is_err() {
                tracing::trace!(set, cmd, "command from the VM dropped: nobody listens for events");
            }
        }
    }
}
