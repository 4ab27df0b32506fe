//! One direction of a shared-memory connection: a single-producer, single-consumer byte ring.
//!
//! The ring holds a byte stream, not packets: the writer copies as much as fits and waits for room
//! for the rest, so a packet larger than the ring streams through it, and the packet framing is the
//! same [`crate::framing`] as over a socket.
//!
//! Positions are free-running 64-bit byte counts (`head`: written, `tail`: read), so full and
//! empty are never ambiguous and the index is `position % size`. The producer alone stores `head`,
//! the consumer alone `tail`.
//!
//! Waiting: a side with nothing to do polls briefly, yielding the CPU between looks (a reply often
//! arrives within microseconds),
//! then announces itself (`reader_waiting` / `writer_waiting`) and sleeps on a futex sequence word
//! (`data_seq` / `space_seq`). The other side bumps the word and wakes it only when someone
//! announced itself, so the common case costs no system call. The announce-then-recheck and
//! publish-then-check orders, both with a sequentially consistent fence in between, mean a sleeper
//! cannot miss a wake-up; the futex value check covers the remaining gap. Sleeps are bounded
//! (`LIVENESS_SLICE`) so a waiting side notices when its peer process has died without closing.

use std::io;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering, fence};
use std::time::{Duration, Instant};

use super::sys;

/// How long one futex sleep lasts before the peer's liveness is checked again.
pub(crate) const LIVENESS_SLICE: Duration = Duration::from_millis(200);

/// How long a side polls (yielding the CPU between looks) before it sleeps on the futex. Measured
/// on a loaded 2-core machine (`bench shmem`): a pure `spin_loop` spin of 30 µs made round trips
/// twice as slow as the socket's (the spinner took the core the peer needed); no spin at all gave
/// the socket's latency; polling with `yield_now` for 20 µs gave under half of it.
const SPIN: Duration = Duration::from_micros(20);

/// A yield that took this long handed the core to another runnable thread for a time slice: the
/// machine has CPU-bound work competing with us (measured: with two busy loops on 2 cores, polling
/// cut breakpoint hits over shared memory to a fraction of the socket's; sleeping at once did not).
const SLOW_YIELD: Duration = Duration::from_micros(500);

/// After a slow yield, the waiting thread sleeps at once for this long before it polls again.
const NO_POLL_BACKOFF: Duration = Duration::from_millis(100);

thread_local! {
    /// Until when this thread skips polling (see [`SLOW_YIELD`]). Per thread: each side of each
    /// connection waits on its own thread, and learns from its own yields.
    static NO_POLL_UNTIL: std::cell::Cell<Option<Instant>> = const { std::cell::Cell::new(None) };
}

/// The shared control block of one ring (in the segment, before the data).
#[repr(C, align(64))]
pub(crate) struct RingHeader {
    /// Bytes ever written (producer-owned).
    head: AtomicU64,
    _pad_head: [u8; 56],
    /// Bytes ever read (consumer-owned).
    tail: AtomicU64,
    _pad_tail: [u8; 56],
    /// Bumped (and woken) when data arrives for a sleeping reader, or on close.
    data_seq: AtomicU32,
    /// Bumped (and woken) when room is made for a sleeping writer, or on close.
    space_seq: AtomicU32,
    reader_waiting: AtomicU32,
    writer_waiting: AtomicU32,
    /// The producer will write no more: the reader sees end of stream once the ring is drained.
    writer_closed: AtomicU32,
    /// The consumer will read no more: writes fail.
    reader_closed: AtomicU32,
    _pad_end: [u8; 40],
}

/// Size of [`RingHeader`] in the segment.
pub(crate) const RING_HEADER_LEN: usize = std::mem::size_of::<RingHeader>();

/// Is the other end of a connection still there?
pub(crate) trait Liveness {
    fn peer_alive(&self) -> bool;
}

impl Liveness for sys::Process {
    fn peer_alive(&self) -> bool {
        self.is_alive()
    }
}

/// For rings within one process (tests): the peer is always alive.
impl Liveness for () {
    fn peer_alive(&self) -> bool {
        true
    }
}

/// A view of one ring: its header and `size` data bytes, both inside a live mapping that the
/// owner of this view keeps alive.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Ring {
    header: *const RingHeader,
    data: *mut u8,
    size: usize,
}

// SAFETY: a `Ring` is a pair of pointers into shared memory kept alive by its owner; all shared
// state is atomic and the data bytes are handed over through `head`/`tail` with acquire/release.
unsafe impl Send for Ring {}
// SAFETY: as above.
unsafe impl Sync for Ring {}

/// What a blocking wait ended with.
enum Waited {
    Ready,
    TimedOut,
    PeerDied,
}

impl Ring {
    /// # Safety
    /// `header` must point to a `RingHeader` and `data` to `size` bytes, both valid, suitably
    /// aligned and shared for as long as this `Ring` (and its copies) is used. At most one thread
    /// reads and one writes at a time.
    pub(crate) unsafe fn new(header: *mut u8, data: *mut u8, size: usize) -> Ring {
        Ring { header: header.cast(), data, size }
    }

    fn h(&self) -> &RingHeader {
        // SAFETY: guaranteed by `new`'s contract.
        unsafe { &*self.header }
    }

    /// Resets a ring nobody uses yet.
    pub(crate) fn init(&self) {
        let h = self.h();
        for w in [&h.head, &h.tail] {
            w.store(0, Ordering::Relaxed);
        }
        for w in [&h.data_seq, &h.space_seq, &h.reader_waiting, &h.writer_waiting, &h.writer_closed, &h.reader_closed] {
            w.store(0, Ordering::Relaxed);
        }
        fence(Ordering::Release);
    }

    /// Bytes waiting to be read.
    pub(crate) fn available(&self) -> usize {
        let h = self.h();
        (h.head.load(Ordering::Acquire).wrapping_sub(h.tail.load(Ordering::Acquire))) as usize
    }

    /// Copies out what is there (up to `out.len()`) without blocking; 0 if empty.
    pub(crate) fn try_read(&self, out: &mut [u8]) -> usize {
        let h = self.h();
        let head = h.head.load(Ordering::Acquire);
        let tail = h.tail.load(Ordering::Relaxed);
        // A corrupt head (a hostile or broken peer) must not make us read out of bounds.
        let avail = (head.wrapping_sub(tail) as usize).min(self.size);
        let n = avail.min(out.len());
        if n == 0 {
            return 0;
        }
        let start = (tail % self.size as u64) as usize;
        let first = n.min(self.size - start);
        // SAFETY: `start + first <= size` and `n - first <= size`; the producer does not touch
        // bytes between tail and head until `tail` moves past them.
        unsafe {
            std::ptr::copy_nonoverlapping(self.data.add(start), out.as_mut_ptr(), first);
            std::ptr::copy_nonoverlapping(self.data, out.as_mut_ptr().add(first), n - first);
        }
        h.tail.store(tail + n as u64, Ordering::Release);
        fence(Ordering::SeqCst);
        if h.writer_waiting.load(Ordering::Relaxed) != 0 {
            h.space_seq.fetch_add(1, Ordering::Release);
            sys::futex_wake(&h.space_seq);
        }
        n
    }

    /// Copies in what fits of `src` without blocking; 0 if full.
    pub(crate) fn try_write(&self, src: &[u8]) -> usize {
        let h = self.h();
        let tail = h.tail.load(Ordering::Acquire);
        let head = h.head.load(Ordering::Relaxed);
        let used = (head.wrapping_sub(tail) as usize).min(self.size);
        let n = (self.size - used).min(src.len());
        if n == 0 {
            return 0;
        }
        let start = (head % self.size as u64) as usize;
        let first = n.min(self.size - start);
        // SAFETY: as in `try_read`, for the free part of the ring.
        unsafe {
            std::ptr::copy_nonoverlapping(src.as_ptr(), self.data.add(start), first);
            std::ptr::copy_nonoverlapping(src.as_ptr().add(first), self.data, n - first);
        }
        h.head.store(head + n as u64, Ordering::Release);
        fence(Ordering::SeqCst);
        if h.reader_waiting.load(Ordering::Relaxed) != 0 {
            h.data_seq.fetch_add(1, Ordering::Release);
            sys::futex_wake(&h.data_seq);
        }
        n
    }

    /// Blocks until at least one byte is read. `Ok(0)` at end of stream (the writer closed and
    /// everything was read, or this side shut its reading down). `deadline` bounds the wait
    /// (`TimedOut`); a dead peer is `ConnectionReset`.
    pub(crate) fn read(&self, out: &mut [u8], deadline: Option<Instant>, peer: &dyn Liveness) -> io::Result<usize> {
        if out.is_empty() {
            return Ok(0);
        }
        let h = self.h();
        loop {
            let n = self.try_read(out);
            if n > 0 {
                return Ok(n);
            }
            if h.reader_closed.load(Ordering::Acquire) != 0 {
                return Ok(0);
            }
            if h.writer_closed.load(Ordering::Acquire) != 0 {
                // The writer closes after its last write: one more look, then it is the end.
                return Ok(self.try_read(out));
            }
            let ready = || {
                self.available() > 0
                    || h.writer_closed.load(Ordering::Acquire) != 0
                    || h.reader_closed.load(Ordering::Acquire) != 0
            };
            match wait(&h.data_seq, &h.reader_waiting, ready, deadline, peer) {
                Waited::Ready => {}
                Waited::TimedOut => return Err(io::Error::new(io::ErrorKind::TimedOut, "timed out waiting for data")),
                Waited::PeerDied => {
                    // Whatever it wrote before dying is still worth reading.
                    let n = self.try_read(out);
                    if n > 0 {
                        return Ok(n);
                    }
                    return Err(io::Error::new(io::ErrorKind::ConnectionReset, "the peer process died"));
                }
            }
        }
    }

    /// Blocks until at least one byte of `src` is written; `BrokenPipe` once the reader closed or
    /// died (or this side shut writing down).
    pub(crate) fn write(&self, src: &[u8], deadline: Option<Instant>, peer: &dyn Liveness) -> io::Result<usize> {
        if src.is_empty() {
            return Ok(0);
        }
        let h = self.h();
        loop {
            if h.reader_closed.load(Ordering::Acquire) != 0 || h.writer_closed.load(Ordering::Acquire) != 0 {
                return Err(io::Error::new(io::ErrorKind::BrokenPipe, "the connection is closed"));
            }
            let n = self.try_write(src);
            if n > 0 {
                return Ok(n);
            }
            let ready = || {
                self.available() < self.size
                    || h.reader_closed.load(Ordering::Acquire) != 0
                    || h.writer_closed.load(Ordering::Acquire) != 0
            };
            match wait(&h.space_seq, &h.writer_waiting, ready, deadline, peer) {
                Waited::Ready => {}
                Waited::TimedOut => return Err(io::Error::new(io::ErrorKind::TimedOut, "timed out waiting for room")),
                Waited::PeerDied => return Err(io::Error::new(io::ErrorKind::BrokenPipe, "the peer process died")),
            }
        }
    }

    /// Blocks until there is room to write (or the ring is closed, or the peer died, or
    /// `deadline`). For the async writer, which waits on a helper thread and then retries.
    #[cfg_attr(not(feature = "tokio"), allow(dead_code))]
    pub(crate) fn wait_for_room(&self, deadline: Option<Instant>, peer: &dyn Liveness) {
        let h = self.h();
        let ready = || {
            self.available() < self.size
                || h.reader_closed.load(Ordering::Acquire) != 0
                || h.writer_closed.load(Ordering::Acquire) != 0
        };
        let _ = wait(&h.space_seq, &h.writer_waiting, ready, deadline, peer);
    }

    /// Whether writing can no longer succeed (reader closed, or writing shut down).
    #[cfg_attr(not(feature = "tokio"), allow(dead_code))]
    pub(crate) fn write_closed(&self) -> bool {
        let h = self.h();
        h.reader_closed.load(Ordering::Acquire) != 0 || h.writer_closed.load(Ordering::Acquire) != 0
    }

    /// The producer is done: the reader drains what is there and then sees end of stream.
    pub(crate) fn close_writer(&self) {
        let h = self.h();
        h.writer_closed.store(1, Ordering::Release);
        Self::bump(&h.data_seq);
        Self::bump(&h.space_seq);
    }

    /// The consumer is done: writers fail, and a thread of ours blocked reading wakes up to end.
    pub(crate) fn close_reader(&self) {
        let h = self.h();
        h.reader_closed.store(1, Ordering::Release);
        Self::bump(&h.data_seq);
        Self::bump(&h.space_seq);
    }

    fn bump(word: &AtomicU32) {
        word.fetch_add(1, Ordering::Release);
        sys::futex_wake(word);
    }
}

/// Polls (yielding), then sleeps on `seq` in liveness slices, until `ready()`, the deadline, or the peer's
/// death.
fn wait(
    seq: &AtomicU32,
    waiting: &AtomicU32,
    ready: impl Fn() -> bool,
    deadline: Option<Instant>,
    peer: &dyn Liveness,
) -> Waited {
    let mut now = Instant::now();
    let spin_until = now + SPIN;
    let polling = NO_POLL_UNTIL.with(|until| until.get().is_none_or(|until| now >= until));
    if polling {
        loop {
            if ready() {
                return Waited::Ready;
            }
            // Yield rather than burn the CPU: on a busy machine the thread that will wake us may be
            // waiting for this very core; on an idle one a yield returns at once.
            std::thread::yield_now();
            let before = now;
            now = Instant::now();
            if now - before >= SLOW_YIELD {
                // The scheduler gave this core to a CPU-bound thread for a whole slice: polling
                // only loses slices from here on, while a futex sleeper is woken (and run) at once.
                NO_POLL_UNTIL.with(|until| until.set(Some(now + NO_POLL_BACKOFF)));
                break;
            }
            if now >= spin_until {
                break;
            }
        }
    }
    loop {
        let seen = seq.load(Ordering::Acquire);
        waiting.store(1, Ordering::SeqCst);
        fence(Ordering::SeqCst);
        if ready() {
            waiting.store(0, Ordering::Relaxed);
            return Waited::Ready;
        }
        let now = Instant::now();
        let slice = match deadline {
            Some(d) if d <= now => {
                waiting.store(0, Ordering::Relaxed);
                return Waited::TimedOut;
            }
            Some(d) => (d - now).min(LIVENESS_SLICE),
            None => LIVENESS_SLICE,
        };
        sys::futex_wait(seq, seen, Some(slice));
        waiting.store(0, Ordering::Relaxed);
        if ready() {
            return Waited::Ready;
        }
        if seq.load(Ordering::Acquire) == seen && !peer.peer_alive() {
            return Waited::PeerDied;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    /// A ring in ordinary heap memory, for tests without a second process.
    struct HeapRing {
        mem: Vec<u64>,
        size: usize,
    }

    impl HeapRing {
        fn new(size: usize) -> Arc<HeapRing> {
            let words = (RING_HEADER_LEN + size).div_ceil(8) + 8;
            let ring = Arc::new(HeapRing { mem: vec![0u64; words], size });
            ring.ring().init();
            ring
        }

        fn ring(&self) -> Ring {
            let base = self.mem.as_ptr() as *mut u8;
            // Align the header to 64 bytes inside the buffer.
            let offset = base.align_offset(64);
            // SAFETY: the buffer holds the header and data at `offset` and outlives every use in
            // these tests (the Arc is held by each thread).
            unsafe { Ring::new(base.add(offset), base.add(offset + RING_HEADER_LEN), self.size) }
        }
    }

    #[test]
    fn header_is_cache_line_sized() {
        assert_eq!(RING_HEADER_LEN, 192, "spec-notes/shmem.md documents this layout");
        assert_eq!(std::mem::align_of::<RingHeader>(), 64);
    }

    #[test]
    fn wraps_around_and_reports_full_and_empty() {
        let heap = HeapRing::new(8);
        let ring = heap.ring();
        let mut out = [0u8; 16];
        assert_eq!(ring.try_read(&mut out), 0);
        assert_eq!(ring.try_write(b"abcdef"), 6);
        assert_eq!(ring.try_read(&mut out[..4]), 4);
        assert_eq!(&out[..4], b"abcd");
        // 2 bytes in, 6 free: the write wraps around the end.
        assert_eq!(ring.try_write(b"0123456789"), 6);
        assert_eq!(ring.try_write(b"x"), 0, "full");
        assert_eq!(ring.try_read(&mut out), 8);
        assert_eq!(&out[..8], b"ef012345");
        assert_eq!(ring.try_read(&mut out), 0);
    }

    #[test]
    fn streams_far_more_than_its_size_between_threads() {
        let heap = HeapRing::new(1000);
        let data: Vec<u8> = (0..2_000_000u32).map(|i| (i * 7 + i / 1000) as u8).collect();
        let writer = {
            let heap = Arc::clone(&heap);
            let data = data.clone();
            std::thread::spawn(move || {
                let ring = heap.ring();
                let mut pos = 0;
                // Odd chunk sizes so writes straddle the wrap point in every way.
                let mut chunk = 1;
                while pos < data.len() {
                    let end = (pos + chunk).min(data.len());
                    pos += ring.write(&data[pos..end], None, &()).unwrap();
                    chunk = chunk % 3001 + 17;
                }
                ring.close_writer();
            })
        };
        let ring = heap.ring();
        let mut got = Vec::with_capacity(data.len());
        let mut buf = [0u8; 777];
        loop {
            let n = ring.read(&mut buf, Some(Instant::now() + Duration::from_secs(60)), &()).unwrap();
            if n == 0 {
                break;
            }
            got.extend_from_slice(&buf[..n]);
        }
        writer.join().unwrap();
        assert_eq!(got.len(), data.len());
        assert!(got == data, "stream corrupted");
    }

    #[test]
    fn reader_closing_fails_a_blocked_writer_and_ends_reads() {
        let heap = HeapRing::new(16);
        let ring = heap.ring();
        assert_eq!(ring.try_write(&[1; 16]), 16);
        let blocked = {
            let heap = Arc::clone(&heap);
            std::thread::spawn(move || heap.ring().write(&[2; 4], None, &()))
        };
        ring.close_reader();
        let err = blocked.join().unwrap().unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::BrokenPipe);
        assert_eq!(ring.read(&mut [0; 4], None, &()).unwrap(), 4, "buffered bytes are still readable");
    }

    #[test]
    fn closing_the_writer_wakes_a_blocked_reader_with_end_of_stream() {
        let heap = HeapRing::new(16);
        let reader = {
            let heap = Arc::clone(&heap);
            std::thread::spawn(move || heap.ring().read(&mut [0; 4], None, &()))
        };
        // The reader may or may not be asleep yet; either way it must end.
        heap.ring().close_writer();
        assert_eq!(reader.join().unwrap().unwrap(), 0);
    }

    #[test]
    fn read_times_out_and_detects_a_dead_peer() {
        let heap = HeapRing::new(16);
        let ring = heap.ring();
        let start = Instant::now();
        let err = ring.read(&mut [0; 4], Some(start + Duration::from_millis(50)), &()).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
        assert!(start.elapsed() >= Duration::from_millis(50));

        struct Dead;
        impl Liveness for Dead {
            fn peer_alive(&self) -> bool {
                false
            }
        }
        let err = ring.read(&mut [0; 4], None, &Dead).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::ConnectionReset);
        let err = {
            ring.try_write(&[0; 16]);
            ring.write(&[0; 1], None, &Dead).unwrap_err()
        };
        assert_eq!(err.kind(), io::ErrorKind::BrokenPipe);
    }

    #[test]
    fn a_corrupt_head_cannot_make_reads_go_out_of_bounds() {
        let heap = HeapRing::new(16);
        let ring = heap.ring();
        ring.h().head.store(u64::MAX - 3, Ordering::Relaxed);
        let mut out = [0u8; 64];
        assert!(ring.try_read(&mut out) <= 16);
    }
}
