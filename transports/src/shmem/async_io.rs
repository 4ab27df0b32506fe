//! The shared-memory transport on tokio (for the client).
//!
//! A futex cannot be awaited, so: connecting runs on `spawn_blocking`; reading is done by a
//! dedicated thread per connection, which sleeps on the ring and hands chunks to the task through
//! a bounded channel (backpressure: it stops reading when the task does); writing copies into the
//! ring directly from `poll_write` (no thread hop on the hot path) and only when the ring is full
//! does a helper thread wait for room and wake the task.

use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::mpsc;

use super::{Shared, ShmemConnection, ShmemListener};
use crate::error::TransportError;

/// How much the reader thread takes from the ring at once.
const CHUNK: usize = 64 * 1024;

/// [`super::attach`] on the blocking pool: debugger-side handshake.
pub async fn attach_async(name: &str, timeout: Option<Duration>) -> Result<ShmemConnection, TransportError> {
    let name = name.to_owned();
    spawn_blocking(move || super::attach(&name, timeout)).await
}

/// A listener for the debugger side (`server=n` agents attach to it), on tokio.
#[derive(Debug)]
pub struct AsyncShmemListener {
    inner: Arc<ShmemListener>,
}

impl AsyncShmemListener {
    /// Creates the rendezvous segment for `name` (see [`ShmemListener::bind`]).
    pub fn bind(name: &str) -> Result<AsyncShmemListener, TransportError> {
        Ok(AsyncShmemListener { inner: Arc::new(ShmemListener::bind(name)?) })
    }

    pub fn name(&self) -> &str {
        self.inner.name()
    }

    /// Waits for a VM to attach, then performs the debugger-side handshake.
    pub async fn accept_as_debugger(&self, timeout: Option<Duration>) -> Result<ShmemConnection, TransportError> {
        let inner = Arc::clone(&self.inner);
        spawn_blocking(move || inner.accept_as_debugger(timeout)).await
    }
}

async fn spawn_blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, TransportError> + Send + 'static,
) -> Result<T, TransportError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| TransportError::io("waiting for shared memory", io::Error::other(e)))?
}

impl ShmemConnection {
    /// Splits into tokio byte streams (wrap the reader in an `AsyncPacketReader`). Starts the
    /// connection's reader thread.
    pub fn into_async_split(self) -> Result<(AsyncShmemReadHalf, AsyncShmemWriteHalf), TransportError> {
        let (tx, rx) = mpsc::channel(8);
        let shared = Arc::clone(&self.shared);
        std::thread::Builder::new()
            .name("jdwp-shmem-reader".into())
            .spawn(move || read_thread(&shared, &tx))
            .map_err(|e| TransportError::io("starting the shared memory reader thread", e))?;
        let reader = AsyncShmemReadHalf { rx, chunk: Vec::new(), pos: 0, shared: Arc::clone(&self.shared) };
        let writer = AsyncShmemWriteHalf {
            shared: self.shared,
            waker: Arc::new(Mutex::new(None)),
            waiting: Arc::new(AtomicBool::new(false)),
        };
        Ok((reader, writer))
    }
}

fn read_thread(shared: &Shared, tx: &mpsc::Sender<io::Result<Vec<u8>>>) {
    let mut buf = vec![0u8; CHUNK];
    loop {
        match shared.read(&mut buf, None) {
            // End of stream: dropping the sender ends the task's reads.
            Ok(0) => return,
            Ok(n) => {
                if tx.blocking_send(Ok(buf[..n].to_vec())).is_err() {
                    return;
                }
            }
            Err(e) => {
                let _ = tx.blocking_send(Err(e));
                return;
            }
        }
    }
}

/// The reading half: `AsyncRead` fed by the connection's reader thread.
#[derive(Debug)]
pub struct AsyncShmemReadHalf {
    rx: mpsc::Receiver<io::Result<Vec<u8>>>,
    chunk: Vec<u8>,
    pos: usize,
    shared: Arc<Shared>,
}

impl AsyncRead for AsyncShmemReadHalf {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        if this.pos == this.chunk.len() {
            match this.rx.poll_recv(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(None) => return Poll::Ready(Ok(())),
                Poll::Ready(Some(Err(e))) => return Poll::Ready(Err(e)),
                Poll::Ready(Some(Ok(chunk))) => {
                    this.chunk = chunk;
                    this.pos = 0;
                }
            }
        }
        let n = buf.remaining().min(this.chunk.len() - this.pos);
        buf.put_slice(&this.chunk[this.pos..this.pos + n]);
        this.pos += n;
        Poll::Ready(Ok(()))
    }
}

impl Drop for AsyncShmemReadHalf {
    fn drop(&mut self) {
        // Nobody reads any more: end the connection, which also ends the reader thread.
        self.shared.shutdown();
    }
}

/// The writing half: `AsyncWrite` straight into the ring.
#[derive(Debug)]
pub struct AsyncShmemWriteHalf {
    shared: Arc<Shared>,
    waker: Arc<Mutex<Option<Waker>>>,
    /// A helper thread is waiting for room.
    waiting: Arc<AtomicBool>,
}

impl AsyncWrite for AsyncShmemWriteHalf {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        if buf.is_empty() {
            return Poll::Ready(Ok(0));
        }
        let shared = &self.shared;
        if shared.tx.write_closed() {
            return Poll::Ready(Err(io::Error::new(io::ErrorKind::BrokenPipe, "the connection is closed")));
        }
        let n = shared.tx.try_write(buf);
        if n > 0 {
            return Poll::Ready(Ok(n));
        }
        if !shared.peer.is_alive() {
            return Poll::Ready(Err(io::Error::new(io::ErrorKind::BrokenPipe, "the peer process died")));
        }
        *self.waker.lock().unwrap_or_else(|e| e.into_inner()) = Some(cx.waker().clone());
        if !self.waiting.swap(true, Ordering::AcqRel) {
            let (shared, waker, waiting) = (Arc::clone(shared), Arc::clone(&self.waker), Arc::clone(&self.waiting));
            let spawned = std::thread::Builder::new().name("jdwp-shmem-writer".into()).spawn(move || {
                shared.tx.wait_for_room(None, &shared.peer);
                waiting.store(false, Ordering::Release);
                if let Some(w) = waker.lock().unwrap_or_else(|e| e.into_inner()).take() {
                    w.wake();
                }
            });
            if let Err(e) = spawned {
                self.waiting.store(false, Ordering::Release);
                return Poll::Ready(Err(e));
            }
        }
        // The ring may have drained between the attempt and the registration.
        let n = self.shared.tx.try_write(buf);
        if n > 0 {
            return Poll::Ready(Ok(n));
        }
        Poll::Pending
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.shared.tx.close_writer();
        Poll::Ready(Ok(()))
    }
}

impl Drop for AsyncShmemWriteHalf {
    fn drop(&mut self) {
        self.shared.tx.close_writer();
    }
}
