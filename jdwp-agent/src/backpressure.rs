//! The bound on events waiting for the event helper: a debugger that is slow, stuck or holding
//! events costs the program time, never memory.
//!
//! Every event a callback hands to the helper is counted in ([`Backlog::add`]) and counted out
//! once the helper has sent or dropped it ([`Backlog::take`]); the agent's one backlog is part of
//! its [`crate::gate::Gate`], which counts through it. An application thread whose event
//! suspends nothing (policy `NONE`), and that thus would not wait for it, hands it over and then,
//! if the backlog is past [`CAP`], waits until the helper has brought it down to [`RESUME_AT`]
//! (hysteresis, so that a full queue costs one wake-up per half queue, not one per event). The
//! event is queued before the wait: nothing is lost and the order stays the helper's. Threads
//! that wait for their event anyway (a suspending policy, VM death) are counted but never wait
//! here; agent threads never wait here either (the helper may be the very thread, and the command
//! loop must keep reading, or nobody could release a hold). Whatever lets the helper drain (the
//! debugger reading again, `ReleaseEvents`, the session's end, which drops what is queued) wakes
//! the waiters through [`Backlog::take`].
//!
//! The fast path is two atomic additions per event; the lock is taken only by a thread that
//! waits and, while some thread waits, by the helper when the backlog reaches [`RESUME_AT`].
//! The wait follows the locking rules of [`crate::agent`]: the waiting thread holds no agent
//! lock, and the lock it waits on is this module's own, which no agent thread holds across
//! anything. See spec-notes/event-queue.md.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};

/// Events the helper may have waiting (queued or held) before posting threads wait. An event
/// waiting for the helper takes about 100 to 150 bytes (its part of the composite, the job, a
/// JNI global reference or two), so the queue stays under about 0.6 MB.
pub const CAP: usize = 4096;

/// Threads waiting for room go on once the backlog is down to this.
pub const RESUME_AT: usize = CAP / 2;

/// Whether a thread posting an event waits for room when the backlog is past the bound: only an
/// application thread that does not wait for its event anyway.
pub fn waits_for_room(agent_thread: bool, waits_for_delivery: bool) -> bool {
    !agent_thread && !waits_for_delivery
}

/// Whether a thread that made the backlog `queued` (its events included) must wait for room.
pub fn over(queued: usize) -> bool {
    queued > CAP
}

/// Whether a waiting thread may go on at `queued`.
pub fn has_room(queued: usize) -> bool {
    queued <= RESUME_AT
}

/// Whether the helper, having brought the backlog to `queued`, wakes the `waiters`.
pub fn must_wake(queued: usize, waiters: usize) -> bool {
    waiters > 0 && has_room(queued)
}

/// How a thread sleeps until woken: a condition variable in the agent, a fake in tests.
pub trait Park {
    /// Returns once `blocked()` is false. `blocked` is evaluated under the lock that
    /// [`Park::wake_all`] takes, so no wake-up is lost between a look and the sleep.
    fn wait_while(&self, blocked: &dyn Fn() -> bool);
    /// Wakes every thread in [`Park::wait_while`], which looks again.
    fn wake_all(&self);
}

/// A mutex and a condition variable of their own.
#[derive(Default)]
pub struct CondvarPark {
    lock: Mutex<()>,
    changed: Condvar,
}

impl CondvarPark {
    pub const fn new() -> CondvarPark {
        CondvarPark { lock: Mutex::new(()), changed: Condvar::new() }
    }
}

impl Park for CondvarPark {
    fn wait_while(&self, blocked: &dyn Fn() -> bool) {
        let mut guard = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        while blocked() {
            guard = self.changed.wait(guard).unwrap_or_else(|e| e.into_inner());
        }
    }

    fn wake_all(&self) {
        let _guard = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        self.changed.notify_all();
    }
}

/// The count of events waiting for the helper, and the threads waiting for room.
pub struct Backlog<P> {
    queued: AtomicUsize,
    waiters: AtomicUsize,
    park: P,
}

impl Backlog<CondvarPark> {
    pub const fn new() -> Backlog<CondvarPark> {
        Backlog::with_park(CondvarPark::new())
    }
}

impl Default for Backlog<CondvarPark> {
    fn default() -> Self {
        Backlog::new()
    }
}

impl<P: Park> Backlog<P> {
    pub const fn with_park(park: P) -> Backlog<P> {
        Backlog { queued: AtomicUsize::new(0), waiters: AtomicUsize::new(0), park }
    }

    /// Counts `n` events in, before they are handed to the helper; returns whether the backlog is
    /// now past the bound (a thread that [`waits_for_room`] then calls [`Backlog::wait_for_room`]
    /// once they are handed over).
    pub fn add(&self, n: usize) -> bool {
        over(self.queued.fetch_add(n, Ordering::SeqCst) + n)
    }

    /// Waits until the helper has brought the backlog down to [`RESUME_AT`].
    pub fn wait_for_room(&self) {
        // Counted as a waiter before the look at the backlog, which `take` makes after its
        // subtraction: either `take` sees the waiter, or this look sees the smaller backlog.
        self.waiters.fetch_add(1, Ordering::SeqCst);
        self.park.wait_while(&|| !has_room(self.queued.load(Ordering::SeqCst)));
        self.waiters.fetch_sub(1, Ordering::SeqCst);
    }

    /// Counts `n` events out (sent, dropped, or given back because the helper is gone), waking
    /// the waiters if there is room now.
    pub fn take(&self, n: usize) {
        let before = self.queued.fetch_sub(n, Ordering::SeqCst);
        debug_assert!(before >= n, "more events taken than added");
        if must_wake(before.saturating_sub(n), self.waiters.load(Ordering::SeqCst)) {
            self.park.wake_all();
        }
    }

    /// Events waiting for the helper now.
    #[cfg(test)]
    pub fn queued(&self) -> usize {
        self.queued.load(Ordering::SeqCst)
    }

    /// Threads waiting for room now.
    #[cfg(test)]
    pub fn waiters(&self) -> usize {
        self.waiters.load(Ordering::SeqCst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::{Cell, OnceCell, RefCell};
    use std::rc::Rc;
    use std::sync::Arc;

    /// A park that never sleeps: when the waiter would, it runs `helper` (what the event helper
    /// would do meanwhile) and looks again; it fails the test if the helper makes no progress.
    struct FakePark {
        helper: RefCell<Box<dyn FnMut() -> bool>>,
        sleeps: Cell<usize>,
        wakes: Cell<usize>,
    }

    impl FakePark {
        fn new(helper: impl FnMut() -> bool + 'static) -> FakePark {
            FakePark { helper: RefCell::new(Box::new(helper)), sleeps: Cell::new(0), wakes: Cell::new(0) }
        }
    }

    impl Park for FakePark {
        fn wait_while(&self, blocked: &dyn Fn() -> bool) {
            while blocked() {
                self.sleeps.set(self.sleeps.get() + 1);
                assert!((self.helper.borrow_mut())(), "a waiter sleeps and nothing will wake it");
            }
        }
        fn wake_all(&self) {
            self.wakes.set(self.wakes.get() + 1);
        }
    }

    #[test]
    fn only_application_threads_that_do_not_wait_anyway_wait_for_room() {
        assert!(waits_for_room(false, false));
        assert!(!waits_for_room(false, true), "a suspending event's thread waits for it already");
        assert!(!waits_for_room(true, false), "an agent thread never waits on the bound");
        assert!(!waits_for_room(true, true));
    }

    #[test]
    fn the_bound_and_the_hysteresis() {
        assert!(!over(CAP));
        assert!(over(CAP + 1));
        assert!(has_room(RESUME_AT));
        assert!(!has_room(RESUME_AT + 1));
        assert!(!must_wake(0, 0), "nobody to wake");
        assert!(must_wake(RESUME_AT, 1));
        assert!(!must_wake(RESUME_AT + 1, 3), "waiters go on only at the low mark");
    }

    #[test]
    fn below_the_bound_nothing_waits_or_wakes() {
        let backlog = Backlog::with_park(FakePark::new(|| false));
        for _ in 0..CAP {
            assert!(!backlog.add(1));
        }
        for _ in 0..CAP {
            backlog.take(1);
        }
        assert_eq!(backlog.queued(), 0);
        assert_eq!(backlog.park.wakes.get(), 0, "no waiter, no wake-up");
    }

    #[test]
    fn past_the_bound_the_poster_waits_until_the_helper_drains_to_the_low_mark() {
        // The helper, as the fake runs it while the poster waits: takes one event at a time.
        let taken = Arc::new(AtomicUsize::new(0));
        let backlog: Rc<OnceCell<Backlog<FakePark>>> = Rc::new(OnceCell::new());
        let helper = {
            let (backlog, taken) = (backlog.clone(), taken.clone());
            move || {
                let b = backlog.get().unwrap();
                if b.queued() == 0 {
                    return false;
                }
                b.take(1);
                taken.fetch_add(1, Ordering::SeqCst);
                true
            }
        };
        let _ = backlog.set(Backlog::with_park(FakePark::new(helper)));
        let b = backlog.get().unwrap();
        for _ in 0..CAP {
            assert!(!b.add(1));
        }
        // One composite of three events more: queued first, then the poster waits.
        assert!(b.add(3));
        b.wait_for_room();
        assert_eq!(b.queued(), RESUME_AT, "the poster goes on at the low mark, not before");
        assert_eq!(taken.load(Ordering::SeqCst), CAP + 3 - RESUME_AT);
        assert_eq!(b.waiters(), 0);
        assert!(b.park.wakes.get() >= 1, "the helper woke the waiter");
    }

    #[test]
    fn a_composite_larger_than_the_bound_is_queued_and_its_poster_waits_for_it_to_drain() {
        let backlog: Rc<OnceCell<Backlog<FakePark>>> = Rc::new(OnceCell::new());
        let helper = {
            let backlog = backlog.clone();
            move || {
                let b = backlog.get().unwrap();
                // The helper sends the whole composite at once.
                let n = b.queued();
                b.take(n);
                n > 0
            }
        };
        let _ = backlog.set(Backlog::with_park(FakePark::new(helper)));
        let b = backlog.get().unwrap();
        assert!(b.add(3 * CAP));
        b.wait_for_room();
        assert_eq!(b.queued(), 0);
    }

    #[test]
    fn the_real_park_loses_no_wake_up() {
        // Posters on their own threads against a helper on this one, many times round: a lost
        // wake-up would leave a poster asleep and the join below hanging.
        for round in 0..50 {
            let backlog = Arc::new(Backlog::new());
            let posters: Vec<_> = (0..3)
                .map(|_| {
                    let backlog = backlog.clone();
                    std::thread::spawn(move || {
                        for _ in 0..CAP {
                            if backlog.add(1) {
                                backlog.wait_for_room();
                            }
                        }
                    })
                })
                .collect();
            let mut taken = 0;
            while taken < 3 * CAP {
                if backlog.queued() > 0 {
                    backlog.take(1);
                    taken += 1;
                } else {
                    std::thread::yield_now();
                }
            }
            for p in posters {
                p.join().unwrap();
            }
            assert_eq!(backlog.queued(), 0, "round {round}");
            assert_eq!(backlog.waiters(), 0, "round {round}");
        }
    }
}
