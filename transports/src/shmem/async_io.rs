//! The shared-memory transport on tokio (for the client).
//!
//! A futex cannot be awaited, so: connecting runs on `spawn_blocking`; reading is left to a
//! thread of the caller's, with the blocking [`ShmemReader`] (jdi-rs routes each packet to its
//! waiting call from that thread: one wake-up per reply, as over a socket, instead of a thread
//! handing bytes to a task that hands packets to the caller); writing copies into the ring
//! directly from `poll_write` (no thread hop on the hot path) and only when the ring is full does
//! a helper thread wait for room and wake the task.

use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use tokio::io::AsyncWrite;

use super::{Shared, ShmemConnection, ShmemListener, ShmemReadHalf, ShmemReader};
use crate::blocking::PacketReader;
use crate::error::TransportError;

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
    /// Splits into a blocking packet reader and a tokio write half, for a client that reads on a
    /// thread of its own (a futex cannot be awaited) and writes from its tasks. That thread can
    /// hand each packet straight to whoever waits for it: no task sits between the ring and the
    /// caller. Nothing ends a blocked read but the peer or a shutdown: keep a [`closer`] to end
    /// the thread when the connection is no longer wanted.
    ///
    /// [`closer`]: ShmemConnection::closer
    pub fn into_blocking_reader_split(self) -> (ShmemReader, AsyncShmemWriteHalf) {
        let reader = PacketReader::new(ShmemReadHalf { shared: Arc::clone(&self.shared) });
        let writer = AsyncShmemWriteHalf {
            shared: self.shared,
            waker: Arc::new(Mutex::new(None)),
            waiting: Arc::new(AtomicBool::new(false)),
        };
        (reader, writer)
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
