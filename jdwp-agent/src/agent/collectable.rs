//! The weak references of the objects with IDs that can be collected, which the ID table holds
//! while the whole VM is suspended (see `ObjectTable` in `agent.rs`), and the freeing of the
//! references of objects that are gone.
//!
//! Objects die and their references clear. After a `ThreadStart` request had seen 300,000 short
//! virtual threads, every suspend-all went over 300,000 cleared references (23 ms a breakpoint
//! hit, against 1.6 ms with JDK 25's agent), and every ID ever handed out kept its JNI weak
//! reference (which each garbage collection goes over) for the life of the VM. So the references
//! that no longer resolve leave the list when the VM is suspended (the list is gone over then
//! anyway) and when it has doubled since it was last swept (amortized O(1) a push, for programs
//! that never stop); their IDs are reported `gone`, and the ID table forgets their references.
//!
//! A forgotten reference is not deleted at once: other threads copy references out of the table
//! and resolve them after releasing its lock. Each such reader is counted ([`Readers`], entered
//! under the table's lock); retired references are deleted only at a moment, under the lock, when
//! no reader is counted: a reader that copied one has finished, and no new reader can find it.

use std::sync::atomic::{AtomicUsize, Ordering};

use super::GlobalRef;

/// Below this many references the list is never swept.
const MIN_SWEEP: usize = 4096;

#[derive(Default)]
pub struct Collectable {
    /// Each reference with the ID whose entry holds it.
    refs: Vec<(GlobalRef, u64)>,
    /// The length after the last sweep.
    swept: usize,
    /// Cleared references whose IDs were reported gone, waiting for no reader to be counted.
    retired: Vec<GlobalRef>,
}

impl Collectable {
    /// Adds the reference held by ID `id`'s entry; sweeps the list first if it has doubled,
    /// dropping every reference `cleared` says no longer names an object and reporting its ID
    /// `gone`.
    pub fn push(&mut self, weak: GlobalRef, id: u64, cleared: impl FnMut(GlobalRef) -> bool, gone: impl FnMut(u64)) {
        if self.refs.len() >= (2 * self.swept).max(MIN_SWEEP) {
            self.sweep(cleared, gone);
        }
        self.refs.push((weak, id));
    }

    fn sweep(&mut self, mut cleared: impl FnMut(GlobalRef) -> bool, mut gone: impl FnMut(u64)) {
        let retired = &mut self.retired;
        self.refs.retain(|&(weak, id)| {
            if cleared(weak) {
                gone(id);
                retired.push(weak);
                false
            } else {
                true
            }
        });
        self.swept = self.refs.len();
    }

    /// Holds every listed object (the VM is being suspended): `hold` returns the strong
    /// reference, or `None` where the object is gone, which `cleared` confirms before the
    /// reference leaves the list and its ID is reported `gone` (a hold can fail for another
    /// reason: out of memory). The whole list is gone over anyway, so a suspension costs what the
    /// objects alive since the last one cost, not every object that ever had an ID.
    pub fn hold_all(
        &mut self,
        mut hold: impl FnMut(GlobalRef) -> Option<GlobalRef>,
        mut cleared: impl FnMut(GlobalRef) -> bool,
        mut gone: impl FnMut(u64),
    ) -> Vec<GlobalRef> {
        let mut held = Vec::with_capacity(self.refs.len());
        let retired = &mut self.retired;
        self.refs.retain(|&(weak, id)| match hold(weak) {
            Some(strong) => {
                held.push(strong);
                true
            }
            None if cleared(weak) => {
                gone(id);
                retired.push(weak);
                false
            }
            None => true,
        });
        // Every cleared reference has just left: this was a sweep.
        self.swept = self.refs.len();
        held
    }

    /// The retired references that may be deleted now (under the table's lock): all of them if
    /// no reader is counted, else none (they wait for a later call).
    pub fn reclaimable(&mut self, readers: &Readers) -> Vec<GlobalRef> {
        if self.retired.is_empty() || !readers.idle() {
            return Vec::new();
        }
        std::mem::take(&mut self.retired)
    }

    #[cfg(test)]
    fn iter(&self) -> impl Iterator<Item = &GlobalRef> {
        self.refs.iter().map(|(weak, _)| weak)
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.refs.len()
    }
}

/// The threads that have copied a reference out of the ID table and may still resolve it.
#[derive(Default)]
pub struct Readers(AtomicUsize);

impl Readers {
    /// Counts a reader until the guard drops. Entered under the ID table's lock, before the
    /// reference is copied out.
    pub fn enter(&self) -> Reading<'_> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Reading(self)
    }

    /// Whether no reader is counted (meaningful under the ID table's lock).
    pub fn idle(&self) -> bool {
        self.0.load(Ordering::SeqCst) == 0
    }
}

/// A counted reader (see [`Readers::enter`]).
#[must_use]
pub struct Reading<'a>(&'a Readers);

impl Drop for Reading<'_> {
    fn drop(&mut self) {
        self.0.0.fetch_sub(1, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    fn weak(n: usize) -> GlobalRef {
        GlobalRef(n as jni_sys::jobject)
    }

    #[test]
    fn cleared_references_are_dropped_once_the_list_doubles() {
        // A million short-lived objects (each dead by the time the next sweep looks) and every
        // hundredth one alive.
        let mut list = Collectable::default();
        let mut looked_at = 0usize;
        let alive = |w: GlobalRef| (w.0 as usize).is_multiple_of(100);
        for n in 1..=1_000_000 {
            list.push(
                weak(n),
                n as u64,
                |w| {
                    looked_at += 1;
                    !alive(w)
                },
                |_| {},
            );
            assert!(list.len() <= (2 * 10_000 + 1).max(MIN_SWEEP + 1), "{n}: {}", list.len());
        }
        // Amortized: each reference looked at a bounded number of times in all.
        assert!(looked_at < 2 * 1_000_000, "{looked_at}");
        // Every live object is still listed; what was dropped was cleared.
        let listed: HashSet<usize> = list.iter().map(|w| w.0 as usize).collect();
        assert!((1..=1_000_000usize).filter(|n| n.is_multiple_of(100)).all(|n| listed.contains(&n)));
    }

    #[test]
    fn holding_all_drops_the_cleared_and_keeps_what_failed_otherwise() {
        let mut list = Collectable::default();
        for n in 1..=10 {
            list.push(weak(n), n as u64, |_| false, |_| {});
        }
        // 1..=4 are gone; 5 could not be held (out of memory), but is alive.
        let mut gone = Vec::new();
        let held = list.hold_all(
            |w| (w.0 as usize > 5).then(|| weak(w.0 as usize + 100)),
            |w| (w.0 as usize) < 5,
            |id| gone.push(id),
        );
        assert_eq!(gone, vec![1, 2, 3, 4]);
        assert_eq!(held.iter().map(|w| w.0 as usize).collect::<Vec<_>>(), vec![106, 107, 108, 109, 110]);
        assert_eq!(list.iter().map(|w| w.0 as usize).collect::<Vec<_>>(), vec![5, 6, 7, 8, 9, 10]);
    }

    #[test]
    fn live_references_are_all_kept_and_small_lists_never_swept() {
        let mut list = Collectable::default();
        for n in 1..MIN_SWEEP {
            list.push(weak(n), n as u64, |_| panic!("swept below the minimum"), |_| {});
        }
        for n in MIN_SWEEP..3 * MIN_SWEEP {
            list.push(weak(n), n as u64, |_| false, |_| {});
        }
        assert_eq!(list.len(), 3 * MIN_SWEEP - 1);
        let listed: Vec<usize> = list.iter().map(|w| w.0 as usize).collect();
        assert_eq!(listed, (1..3 * MIN_SWEEP).collect::<Vec<_>>());
    }

    #[test]
    fn gone_references_are_retired_then_deleted_only_when_no_reader_is_counted() {
        let mut list = Collectable::default();
        let readers = Readers::default();
        for n in 1..=10 {
            list.push(weak(n), 100 + n as u64, |_| false, |_| {});
        }
        // Nothing retired yet: nothing to delete.
        assert!(list.reclaimable(&readers).is_empty());
        // A reader copied a reference before the suspension found 1..=3 gone.
        let reader = readers.enter();
        let mut gone = Vec::new();
        let held = list.hold_all(|w| (w.0 as usize > 3).then_some(w), |w| (w.0 as usize) <= 3, |id| gone.push(id));
        assert_eq!(held.len(), 7);
        assert_eq!(gone, vec![101, 102, 103]);
        // Not deleted while it may still resolve one of them.
        assert!(list.reclaimable(&readers).is_empty());
        drop(reader);
        let freed: Vec<usize> = list.reclaimable(&readers).iter().map(|w| w.0 as usize).collect();
        assert_eq!(freed, vec![1, 2, 3]);
        // Each is handed out once.
        assert!(list.reclaimable(&readers).is_empty());
    }

    #[test]
    fn a_sweep_reports_each_gone_id_once() {
        let mut list = Collectable::default();
        let readers = Readers::default();
        let mut gone = Vec::new();
        // Odd objects die; sweeps happen as the list doubles.
        for n in 1..=5 * MIN_SWEEP {
            list.push(weak(n), n as u64, |w| (w.0 as usize) % 2 == 1, |id| gone.push(id));
        }
        let unique: HashSet<u64> = gone.iter().copied().collect();
        assert_eq!(unique.len(), gone.len());
        assert!(gone.iter().all(|id| id % 2 == 1));
        assert!(!gone.is_empty());
        let freed = list.reclaimable(&readers);
        assert_eq!(freed.len(), gone.len());
        assert!(freed.iter().zip(&gone).all(|(w, id)| w.0 as u64 == *id));
    }
}
