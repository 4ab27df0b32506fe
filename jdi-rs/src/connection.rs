//! The JDWP connection: many commands in flight over one transport, replies matched by id, events
//! forwarded to a channel.
//!
//! A reader owns the read half: a task over an async transport (sockets), or a thread of its own
//! over a blocking one (shared memory, whose reads sleep on a futex that cannot be awaited); either
//! routes each packet itself, so a reply wakes its caller directly. Callers register a oneshot for
//! their command's id, write the whole packet, and await the reply. When the transport closes (or
//! a write fails), every pending call fails at once with [`JdiError::Disconnected`] and the event
//! channel ends, so nothing waits forever on a dead VM. An optional per-call timeout bounds
//! waiting on a live but silent one.
//!
//! Calls are cancel-safe: a caller that gives up (a timeout, a `select!`) never leaves half a
//! packet on the stream, because a packet is written without awaiting, and when the socket cannot
//! take all of it at once, a task finishes it under the writer lock.

use std::collections::HashMap;
use std::io::{self, Read};
use std::pin::Pin;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock, Weak};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use jdwp_protocol::{Command, ErrorCode, IdSizes, codec};
use jdwp_transports::{AsyncPacketReader, Packet, PacketKind, PacketReader, TransportError};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot};

use crate::error::{JdiError, Result};
use crate::process::{KillOnDrop, Process};

type Stream = Box<dyn AsyncWrite + Send + Unpin>;

struct Pending {
    waiting: HashMap<u32, oneshot::Sender<Packet>>,
    /// Set once the connection is dead; later calls fail immediately with it.
    closed: Option<String>,
}

/// A live JDWP connection (cheap to clone).
#[derive(Clone)]
pub struct Connection {
    inner: Arc<Inner>,
}

struct Inner {
    writer: Arc<tokio::sync::Mutex<Stream>>,
    pending: Mutex<Pending>,
    next_id: AtomicU32,
    sizes: RwLock<IdSizes>,
    sent: AtomicU64,
    /// Per-call reply timeout in nanoseconds; 0 for none.
    call_timeout: AtomicU64,
    /// The launched JVM, killed when the last handle on the connection goes.
    process: OnceLock<KillOnDrop>,
    /// Where commands of vendor sets go (see [`Connection::vendor_commands`]), by set number.
    vendor: Mutex<HashMap<u8, mpsc::UnboundedSender<Packet>>>,
    /// Dropped with the connection, which stops the reader.
    stop_reader: StopReader,
}

/// How the reader learns that every handle on the connection is gone.
enum StopReader {
    /// The reader task selects on the receiving end, which ends when this is dropped.
    Task { _stop: oneshot::Sender<()> },
    /// Shuts the transport down, so that the reader thread's blocked read returns.
    Thread(Box<dyn Fn() + Send + Sync>),
}

impl Drop for StopReader {
    fn drop(&mut self) {
        if let StopReader::Thread(stop) = self {
            stop();
        }
    }
}

impl Connection {
    /// Starts the reader task over a transport whose handshake is done. `writer` is the raw write
    /// half: packets are encoded by `jdwp-transports` and written here whole. Commands the VM
    /// sends (event composites) go to the returned channel, which ends when the connection closes.
    pub fn start<R, W>(reader: AsyncPacketReader<R>, writer: W) -> (Connection, mpsc::UnboundedReceiver<Packet>)
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        let (stop_tx, stop_rx) = oneshot::channel();
        let inner = Inner::new(Box::new(writer), StopReader::Task { _stop: stop_tx });
        let (events_tx, events_rx) = mpsc::unbounded_channel();
        tokio::spawn(read_loop(reader, Arc::downgrade(&inner), events_tx, stop_rx));
        (Connection { inner }, events_rx)
    }

    /// Like [`Connection::start`], for a transport whose reads block a thread (shared memory):
    /// a thread of the connection's own reads packets and routes each one itself, so a reply
    /// wakes its caller's task directly (one wake-up, as a socket's reply does through the reader
    /// task; a thread feeding the task would be one more). `stop` is called once every handle on
    /// the connection is gone and must make a blocked `read_packet` return (shut the transport
    /// down); the thread then ends.
    pub fn start_with_reader_thread<R, W>(
        reader: PacketReader<R>,
        stop: impl Fn() + Send + Sync + 'static,
        writer: W,
    ) -> Result<(Connection, mpsc::UnboundedReceiver<Packet>)>
    where
        R: Read + Send + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        let inner = Inner::new(Box::new(writer), StopReader::Thread(Box::new(stop)));
        let (events_tx, events_rx) = mpsc::unbounded_channel();
        let weak = Arc::downgrade(&inner);
        std::thread::Builder::new()
            .name("jdwp-reader".into())
            .spawn(move || read_thread(reader, &weak, &events_tx))
            .map_err(|source| TransportError::Io { operation: "starting the JDWP reader thread".into(), source })?;
        Ok((Connection { inner }, events_rx))
    }

    /// From now on, commands the VM sends in vendor command set `set` (128 and up: the profiler's
    /// live events) go to the returned channel instead of the event channel, so the JDWP event
    /// queue never sees them. A later call for the same set replaces the channel.
    pub fn vendor_commands(&self, set: u8) -> mpsc::UnboundedReceiver<Packet> {
        let (tx, rx) = mpsc::unbounded_channel();
        self.inner.vendor.lock().unwrap_or_else(|e| e.into_inner()).insert(set, tx);
        rx
    }

    /// The ID sizes in force (HotSpot's defaults until [`Connection::set_id_sizes`]).
    pub fn id_sizes(&self) -> IdSizes {
        *self.inner.sizes.read().unwrap_or_else(|e| e.into_inner())
    }

    pub fn set_id_sizes(&self, sizes: IdSizes) {
        *self.inner.sizes.write().unwrap_or_else(|e| e.into_inner()) = sizes;
    }

    /// Whether the connection is dead (transport closed or a write failed).
    pub fn is_closed(&self) -> bool {
        self.inner.lock_pending().closed.is_some()
    }

    /// How many commands have been written so far: a cheap way for tests to prove that
    /// something was answered from a cache.
    pub fn commands_sent(&self) -> u64 {
        self.inner.sent.load(Ordering::Relaxed)
    }

    /// How many calls are waiting for their reply right now.
    pub fn pending_calls(&self) -> usize {
        self.inner.lock_pending().waiting.len()
    }

    /// Limits how long each call waits (for the writer and for its reply); `None` (the default)
    /// waits as long as the connection lives. A call that times out fails with
    /// [`JdiError::Timeout`]; its late reply is dropped and the connection stays usable.
    pub fn set_call_timeout(&self, timeout: Option<Duration>) {
        // 0 means "none", so a zero timeout is stored as the shortest non-zero one.
        let nanos = timeout.map_or(0, |t| u64::try_from(t.as_nanos()).unwrap_or(u64::MAX).max(1));
        self.inner.call_timeout.store(nanos, Ordering::Relaxed);
    }

    /// The per-call timeout in force.
    pub fn call_timeout(&self) -> Option<Duration> {
        match self.inner.call_timeout.load(Ordering::Relaxed) {
            0 => None,
            nanos => Some(Duration::from_nanos(nanos)),
        }
    }

    /// The launched JVM behind this connection, if [`crate::launch`] started it.
    pub fn process(&self) -> Option<Process> {
        self.inner.process.get().map(|p| p.0.clone())
    }

    /// Ties a launched process to this connection: it is killed when the connection goes.
    pub(crate) fn own_process(&self, process: KillOnDrop) {
        // A second process cannot happen (one launch, one connection); it would be killed here.
        let _ = self.inner.process.set(process);
    }

    /// Sends a command and waits for its typed reply.
    pub async fn send<C: Command>(&self, command: &C) -> Result<C::Reply> {
        let sizes = self.id_sizes();
        let body = self.send_raw(C::SET, C::CMD, codec::encode_body(command, sizes), C::QUALIFIED_NAME).await?;
        codec::decode_body(&body, sizes).map_err(|source| JdiError::Decode { command: C::QUALIFIED_NAME, source })
    }

    /// [`Connection::send`] with its own timeout instead of the connection's.
    pub async fn send_with_timeout<C: Command>(&self, command: &C, timeout: Duration) -> Result<C::Reply> {
        let sizes = self.id_sizes();
        let body = codec::encode_body(command, sizes);
        let body =
            with_timeout(Some(timeout), C::QUALIFIED_NAME, self.call(C::SET, C::CMD, body, C::QUALIFIED_NAME)).await?;
        codec::decode_body(&body, sizes).map_err(|source| JdiError::Decode { command: C::QUALIFIED_NAME, source })
    }

    /// Sends an already-encoded command and returns the reply body (or the VM's error).
    pub async fn send_raw(&self, set: u8, cmd: u8, body: Vec<u8>, name: &'static str) -> Result<Vec<u8>> {
        with_timeout(self.call_timeout(), name, self.call(set, cmd, body, name)).await
    }

    async fn call(&self, set: u8, cmd: u8, body: Vec<u8>, name: &'static str) -> Result<Vec<u8>> {
        let id = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        {
            let mut pending = self.inner.lock_pending();
            if let Some(reason) = &pending.closed {
                return Err(JdiError::Disconnected { reason: Some(reason.clone()) });
            }
            pending.waiting.insert(id, tx);
        }
        // Unregisters the call if it is abandoned (timeout, cancellation, error) before a reply.
        let mut registered = Registration { inner: &self.inner, id, armed: true };
        let bytes = Packet::command(id, set, cmd, body).encode().map_err(|e| JdiError::Transport(e.into()))?;
        self.write(bytes, name).await?;
        self.inner.sent.fetch_add(1, Ordering::Relaxed);
        tracing::trace!(id, name, "command sent");
        let reply = rx.await;
        // Either the reader delivered the reply or the connection closed: the entry is gone.
        registered.armed = false;
        let reply = reply.map_err(|_| JdiError::Disconnected { reason: self.inner.lock_pending().closed.clone() })?;
        match reply.kind {
            PacketKind::Reply { error } if error == ErrorCode::NONE => Ok(reply.body),
            PacketKind::Reply { error } => Err(JdiError::Jdwp { command: name, code: error }),
            // The reader routes only replies to callers.
            PacketKind::Command { .. } => Err(JdiError::Disconnected { reason: Some("protocol confusion".into()) }),
        }
    }

    /// Writes one whole packet. Waiting for the writer lock is cancel-safe; after that nothing
    /// awaits until the packet is written or handed to a task that finishes it.
    async fn write(&self, bytes: Vec<u8>, name: &'static str) -> Result<()> {
        let mut stream = self.inner.writer.clone().lock_owned().await;
        let failed = move |inner: &Inner, e: io::Error| {
            let reason = format!("sending {name}: {e}");
            inner.close(reason.clone());
            JdiError::Disconnected { reason: Some(reason) }
        };
        let written = match write_without_waiting(&mut stream, &bytes) {
            Ok(None) => return Ok(()),
            Ok(Some(written)) => written,
            Err(e) => return Err(failed(&self.inner, e)),
        };
        // The socket is full: finish in a task that holds the lock, so packets never interleave.
        // If that fails, closing the connection fails this call (and every other) promptly.
        let inner = Arc::downgrade(&self.inner);
        tokio::spawn(async move {
            let result = async {
                stream.write_all(&bytes[written..]).await?;
                stream.flush().await
            }
            .await;
            drop(stream);
            if let (Err(e), Some(inner)) = (result, inner.upgrade()) {
                failed(&inner, e);
            }
        });
        Ok(())
    }

    /// Closes the write side; the VM then sees the debugger go away.
    pub async fn shutdown(&self) {
        let _ = self.inner.writer.lock().await.shutdown().await;
    }
}

async fn with_timeout<T>(
    timeout: Option<Duration>,
    name: &'static str,
    call: impl Future<Output = Result<T>>,
) -> Result<T> {
    match timeout {
        None => call.await,
        Some(t) => tokio::time::timeout(t, call)
            .await
            .unwrap_or_else(|_| Err(JdiError::Timeout(format!("waiting {t:?} for the reply to {name}")))),
    }
}

/// Writes and flushes as much of `bytes` as `stream` takes without waiting. `Ok(None)`: all
/// written and flushed; `Ok(Some(n))`: `n` bytes written, the rest (or the flush) must wait.
fn write_without_waiting(stream: &mut Stream, bytes: &[u8]) -> io::Result<Option<usize>> {
    let mut cx = Context::from_waker(Waker::noop());
    let mut written = 0;
    while written < bytes.len() {
        match Pin::new(&mut *stream).poll_write(&mut cx, &bytes[written..]) {
            Poll::Ready(Ok(0)) => return Err(io::ErrorKind::WriteZero.into()),
            Poll::Ready(Ok(n)) => written += n,
            Poll::Ready(Err(e)) if e.kind() == io::ErrorKind::Interrupted => {}
            Poll::Ready(Err(e)) => return Err(e),
            Poll::Pending => return Ok(Some(written)),
        }
    }
    match Pin::new(&mut *stream).poll_flush(&mut cx) {
        Poll::Ready(Ok(())) => Ok(None),
        Poll::Ready(Err(e)) => Err(e),
        Poll::Pending => Ok(Some(written)),
    }
}

struct Registration<'a> {
    inner: &'a Inner,
    id: u32,
    armed: bool,
}

impl Drop for Registration<'_> {
    fn drop(&mut self) {
        if self.armed {
            self.inner.lock_pending().waiting.remove(&self.id);
        }
    }
}

impl Inner {
    fn new(writer: Stream, stop: StopReader) -> Arc<Inner> {
        Arc::new(Inner {
            writer: Arc::new(tokio::sync::Mutex::new(writer)),
            pending: Mutex::new(Pending { waiting: HashMap::new(), closed: None }),
            next_id: AtomicU32::new(1),
            sizes: RwLock::new(IdSizes::default()),
            sent: AtomicU64::new(0),
            call_timeout: AtomicU64::new(0),
            process: OnceLock::new(),
            vendor: Mutex::new(HashMap::new()),
            stop_reader: stop,
        })
    }

    fn lock_pending(&self) -> std::sync::MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Marks the connection dead and fails every pending call (dropping their senders wakes them).
    fn close(&self, reason: String) {
        let waiting = {
            let mut pending = self.lock_pending();
            pending.closed.get_or_insert(reason);
            std::mem::take(&mut pending.waiting)
        };
        drop(waiting);
        // Vendor channels end with the connection, like the event channel.
        self.vendor.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }
}

async fn read_loop<R: AsyncRead + Unpin>(
    mut reader: AsyncPacketReader<R>,
    inner: Weak<Inner>,
    events: mpsc::UnboundedSender<Packet>,
    mut stop: oneshot::Receiver<()>,
) {
    let reason = loop {
        let packet = tokio::select! {
            biased;
            packet = reader.read_packet() => packet,
            // Every handle on the connection is gone.
            _ = &mut stop => return,
        };
        match packet {
            Ok(Some(packet)) => {
                let Some(inner) = inner.upgrade() else { return };
                route(&inner, &events, packet);
            }
            Ok(None) => break "the VM closed the connection".to_string(),
            Err(e) => break e.to_string(),
        }
    };
    reader_ended(&inner, reason);
}

/// [`read_loop`] on a thread, over a blocking reader. Dropping the last handle stops it by
/// shutting the transport down (see [`StopReader::Thread`]): the read then ends, and the
/// connection is gone.
fn read_thread<R: Read>(mut reader: PacketReader<R>, inner: &Weak<Inner>, events: &mpsc::UnboundedSender<Packet>) {
    let reason = loop {
        match reader.read_packet() {
            Ok(Some(packet)) => {
                // Held only while routing: should the last handle go meanwhile, the connection
                // is dropped here, which shuts the transport down and ends the next read.
                let Some(inner) = inner.upgrade() else { return };
                route(&inner, events, packet);
            }
            Ok(None) => break "the VM closed the connection".to_string(),
            Err(e) => break e.to_string(),
        }
    };
    reader_ended(inner, reason);
    // Nothing reads any more: end the transport both ways now (as dropping a reader task's read
    // half does), not when the last handle goes.
    if let Some(inner) = inner.upgrade()
        && let StopReader::Thread(stop) = &inner.stop_reader
    {
        stop();
    }
}

/// The transport ended (the VM closed it or went away): fail every pending call.
fn reader_ended(inner: &Weak<Inner>, reason: String) {
    tracing::debug!(%reason, "JDWP connection closed");
    if let Some(inner) = inner.upgrade() {
        inner.close(reason);
    }
}

fn route(inner: &Inner, events: &mpsc::UnboundedSender<Packet>, packet: Packet) {
    match packet.kind {
        PacketKind::Reply { .. } => {
            let waiter = inner.lock_pending().waiting.remove(&packet.id);
            match waiter {
                Some(tx) => {
                    let _ = tx.send(packet);
                }
                None => tracing::debug!(id = packet.id, "reply to a call that gave up"),
            }
        }
        PacketKind::Command { set, cmd } if set >= 128 => {
            let vendor = inner.vendor.lock().unwrap_or_else(|e| e.into_inner()).get(&set).cloned();
            if vendor.is_none_or(|tx| tx.send(packet).is_err()) {
                tracing::trace!(set, cmd, "vendor command from the VM dropped: nobody listens for it");
            }
        }
        PacketKind::Command { set, cmd } => {
            if events.send(packet).is_err() {
                tracing::trace!(set, cmd, "command from the VM dropped: nobody listens for events");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::net::Shutdown;
    use std::os::unix::net::UnixStream;
    use std::sync::mpsc as std_mpsc;

    use jdwp_transports::PacketWriter;

    use super::*;

    const T: Duration = Duration::from_secs(20);

    /// The client's reading stream; says when the reader thread has dropped it (it has ended).
    struct Reading {
        stream: UnixStream,
        dropped: std_mpsc::Sender<()>,
    }

    impl Read for Reading {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            self.stream.read(buf)
        }
    }

    impl Drop for Reading {
        fn drop(&mut self) {
            let _ = self.dropped.send(());
        }
    }

    /// A connection over two socket pairs (one per direction, so the client's blocking reads and
    /// its tokio writes use separate streams), with the VM's ends for the test to play the VM.
    struct Setup {
        conn: Connection,
        events: mpsc::UnboundedReceiver<Packet>,
        vm_reader: PacketReader<UnixStream>,
        vm_writer: PacketWriter<UnixStream>,
        reader_gone: std_mpsc::Receiver<()>,
    }

    fn setup() -> Setup {
        let (client_read, vm_write) = UnixStream::pair().unwrap();
        let (client_write, vm_read) = UnixStream::pair().unwrap();
        client_write.set_nonblocking(true).unwrap();
        let writer = tokio::net::UnixStream::from_std(client_write).unwrap();
        let to_shut = client_read.try_clone().unwrap();
        let (dropped, reader_gone) = std_mpsc::channel();
        let reader = PacketReader::new(Reading { stream: client_read, dropped });
        let stop = move || {
            let _ = to_shut.shutdown(Shutdown::Both);
        };
        let (conn, events) = Connection::start_with_reader_thread(reader, stop, writer).unwrap();
        Setup {
            conn,
            events,
            vm_reader: PacketReader::new(vm_read),
            vm_writer: PacketWriter::new(vm_write),
            reader_gone,
        }
    }

    #[tokio::test]
    async fn a_reader_thread_routes_replies_and_events_and_ends_with_the_last_handle() {
        let Setup { conn, mut events, mut vm_reader, vm_writer, reader_gone } = setup();
        let vm = std::thread::spawn(move || {
            let cmd = vm_reader.read_packet().unwrap().unwrap();
            vm_writer.write_packet(&Packet::command(7, 64, 100, b"event".to_vec())).unwrap();
            vm_writer.write_packet(&Packet::reply(cmd.id, ErrorCode::NONE, b"reply".to_vec())).unwrap();
            // The client's write half goes with its last handle: the VM sees the end.
            assert_eq!(vm_reader.read_packet().unwrap(), None);
            // Kept open (in the join handle) until joined: the VM does not end the client's reads.
            vm_writer
        });
        assert_eq!(conn.send_raw(1, 1, vec![], "Test.Command").await.unwrap(), b"reply");
        assert_eq!(events.recv().await.unwrap().body, b"event");
        let clone = conn.clone();
        drop(conn);
        // One handle left: the reader thread stays.
        assert_eq!(reader_gone.try_recv(), Err(std_mpsc::TryRecvError::Empty));
        drop(clone);
        // Nothing more comes from the VM, so only the stop can have ended the blocked read.
        reader_gone.recv_timeout(T).expect("the reader thread ends with the last handle");
        drop(vm.join().unwrap());
    }

    #[tokio::test]
    async fn a_vm_that_goes_away_fails_the_pending_call_and_later_ones() {
        let Setup { conn, events: _events, mut vm_reader, vm_writer, reader_gone } = setup();
        let vm = std::thread::spawn(move || {
            vm_reader.read_packet().unwrap().unwrap();
            // Gone without replying.
            drop((vm_reader, vm_writer));
        });
        let r = conn.send_raw(1, 1, vec![], "Test.Command").await;
        let Err(JdiError::Disconnected { reason: Some(reason) }) = r else { panic!("{r:?}") };
        assert_eq!(reason, "the VM closed the connection");
        assert_eq!(conn.pending_calls(), 0);
        assert!(conn.is_closed());
        assert!(matches!(conn.send_raw(1, 1, vec![], "Test.Command").await, Err(JdiError::Disconnected { .. })));
        // The thread ended on its own, while a handle is still held.
        reader_gone.recv_timeout(T).expect("the reader thread ends with the transport");
        vm.join().unwrap();
    }
}
