//! The lock order of [`crate::agent`], checked in debug builds: each of the agent's ranked locks
//! ([`Ranked`]) has a [`Rank`] in its type, and a thread may take one only while every ranked
//! lock it holds has a lower rank (leaves share the highest rank, so no leaf is taken under
//! another). Each thread keeps the ranks it holds, and where it took them, in a thread-local
//! stack (per thread, not shared state). A violation is reported with `tracing::error!` and a
//! line on stderr, which fails the test rig's test that saw it (and panics in unit tests; never
//! across `extern "C"`, where `guard` stands). Release builds keep no stack and check nothing: a
//! [`Ranked`] is then a plain `Mutex`.
//!
//! Locks outside the agent's fields (`Session::order`, `setup`, `threads`, the gate's) keep
//! their places in the order by reading; their ranks are listed here for the record.

use std::ops::{Deref, DerefMut};
use std::panic::Location;
use std::sync::{Mutex, MutexGuard};

/// A lock's place in the order (see the list at the top of `agent.rs`): lower ranks are taken
/// first. (Plain numbers, so that a [`Ranked`] carries its rank in its type, at no cost.)
pub type Rank = u8;
/// `Session::order` (not checked here).
pub const SESSION_ORDER: Rank = 10;
/// `agent.engine.setup` (not checked here).
pub const SETUP: Rank = 20;
/// `agent.engine.step_switch`.
pub const STEP_SWITCH: Rank = 30;
/// `agent.threads`, then `Session::handling` (not checked here).
pub const THREADS: Rank = 40;
/// `agent.requests`.
pub const REQUESTS: Rank = 50;
/// The profiler's locks held across VM calls on agent threads, with leaves under them: the CPU
/// sampler (`profiler.cpu`) and the profiler thread's start (`thread_started`).
pub const PROFILER: Rank = 55;
/// Every leaf: nothing is taken while one is held.
pub const LEAF: Rank = 60;

/// A rank's name, for reports.
pub fn name(rank: Rank) -> &'static str {
    match rank {
        SESSION_ORDER => "Session::order",
        SETUP => "setup",
        STEP_SWITCH => "step_switch",
        THREADS => "threads",
        REQUESTS => "requests",
        PROFILER => "a profiler lock",
        LEAF => "a leaf",
        _ => "unranked",
    }
}

/// A mutex with its rank in the lock order (a leaf unless said otherwise).
#[derive(Default)]
pub struct Ranked<T, const RANK: Rank = LEAF>(Mutex<T>);

impl<T, const RANK: Rank> Ranked<T, RANK> {
    pub const fn new(value: T) -> Self {
        Ranked(Mutex::new(value))
    }

    /// Locks it, carrying on after a panic elsewhere (see [`super::lock`]); in debug builds,
    /// checks the order first.
    #[inline]
    #[cfg_attr(debug_assertions, track_caller)]
    pub fn lock(&self) -> RankedGuard<'_, T, RANK> {
        #[cfg(debug_assertions)]
        held::acquire(RANK, Location::caller());
        RankedGuard(self.0.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

/// A held [`Ranked`] lock.
pub struct RankedGuard<'a, T, const RANK: Rank>(MutexGuard<'a, T>);

impl<T, const RANK: Rank> Deref for RankedGuard<'_, T, RANK> {
    type Target = T;
    #[inline]
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T, const RANK: Rank> DerefMut for RankedGuard<'_, T, RANK> {
    #[inline]
    fn deref_mut(&mut self) -> &mut T {
        &mut self.0
    }
}

impl<T, const RANK: Rank> Drop for RankedGuard<'_, T, RANK> {
    #[inline]
    fn drop(&mut self) {
        #[cfg(debug_assertions)]
        held::release(RANK);
    }
}

/// What [`super::lock`] locks: a plain `Mutex` (unchecked) or a [`Ranked`] one.
pub trait Lockable {
    type Guard<'a>
    where
        Self: 'a;
    #[cfg_attr(debug_assertions, track_caller)]
    fn acquire(&self) -> Self::Guard<'_>;
}

impl<T> Lockable for Mutex<T> {
    type Guard<'a>
        = MutexGuard<'a, T>
    where
        T: 'a;
    #[inline]
    fn acquire(&self) -> MutexGuard<'_, T> {
        self.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl<T, const RANK: Rank> Lockable for Ranked<T, RANK> {
    type Guard<'a>
        = RankedGuard<'a, T, RANK>
    where
        T: 'a;
    #[inline]
    #[cfg_attr(debug_assertions, track_caller)]
    fn acquire(&self) -> RankedGuard<'_, T, RANK> {
        self.lock()
    }
}

/// The ranks a thread holds, in the order taken (pure; the thread-local wraps it).
#[derive(Debug, Default)]
pub struct Held(Vec<(Rank, &'static Location<'static>)>);

impl Held {
    /// Takes a lock of `rank` at `at`; `Err` names the held lock it may not be taken under (its
    /// rank and where it was taken).
    pub fn acquire(
        &mut self,
        rank: Rank,
        at: &'static Location<'static>,
    ) -> Result<(), (Rank, &'static Location<'static>)> {
        let worst = self.0.iter().copied().max_by_key(|(r, _)| *r);
        self.0.push((rank, at));
        match worst {
            Some(held) if held.0 >= rank => Err(held),
            _ => Ok(()),
        }
    }

    /// Releases a lock of `rank` (guards may drop in any order).
    pub fn release(&mut self, rank: Rank) {
        if let Some(at) = self.0.iter().rposition(|&(r, _)| r == rank) {
            self.0.remove(at);
        }
    }
}

#[cfg(debug_assertions)]
mod held {
    use std::cell::RefCell;

    use std::panic::Location;

    use super::{Held, Rank};

    thread_local! {
        // Thread-local: the ranks this thread holds (per thread by nature, not shared state).
        static HELD: RefCell<Held> = RefCell::new(Held::default());
    }

    pub(super) fn acquire(rank: Rank, at: &'static Location<'static>) {
        let result = HELD.try_with(|h| h.try_borrow_mut().map(|mut h| h.acquire(rank, at)));
        if let Ok(Ok(Err((held, held_at)))) = result {
            let (rank, held) = (super::name(rank), super::name(held));
            tracing::error!(rank, %at, held, %held_at, "lock order violated: a lock taken under one it must precede");
            // Loud in debug builds even with logging off (the test rig shows a JVM's stderr).
            eprintln!(
                "JDWP agent (debug build): lock order violated: {rank} taken at {at} while holding {held} taken at {held_at}"
            );
            #[cfg(test)]
            panic!("lock order violated: {rank} taken at {at} while holding {held} taken at {held_at}");
        }
    }

    pub(super) fn release(rank: Rank) {
        let _ = HELD.try_with(|h| h.try_borrow_mut().map(|mut h| h.release(rank)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_must_rise() {
        let here = Location::caller();
        let rank = |r: Result<(), (Rank, &Location)>| r.map_err(|(rank, _)| rank);
        let mut held = Held::default();
        assert_eq!(held.acquire(STEP_SWITCH, here), Ok(()));
        assert_eq!(held.acquire(REQUESTS, here), Ok(()));
        assert_eq!(held.acquire(LEAF, here), Ok(()));
        assert_eq!(rank(held.acquire(LEAF, here)), Err(LEAF), "a leaf under a leaf");
        held.release(LEAF);
        held.release(LEAF);
        assert_eq!(rank(held.acquire(STEP_SWITCH, here)), Err(REQUESTS), "an outer lock under an inner one");
        held.release(STEP_SWITCH);
        held.release(REQUESTS);
        held.release(STEP_SWITCH);
        assert_eq!(held.acquire(LEAF, here), Ok(()), "all released, in any order");
    }

    #[test]
    fn locks_in_order_pass() {
        let outer: Ranked<i32, REQUESTS> = Ranked::new(1);
        let inner: Ranked<i32> = Ranked::new(2);
        let a = outer.lock();
        let b = inner.lock();
        assert_eq!(*a + *b, 3);
        drop(a);
        drop(b);
        let _again = outer.lock();
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "lock order violated")]
    fn locks_out_of_order_are_reported() {
        let outer: Ranked<(), REQUESTS> = Ranked::new(());
        let inner: Ranked<()> = Ranked::new(());
        let _b = inner.lock();
        let _a = outer.lock();
    }
}
