//! Virtual threads' object IDs by `java.lang.Thread.tid` (the ID table's `by_tid`): a virtual
//! thread gets no JVMTI tag, so this is where its ID is found again.
//!
//! A program under a `ThreadStart` request may start a million virtual threads, each looked up
//! and inserted here by the event helper, the agent's critical path for thread starts; the index
//! holds every virtual thread that has an ID and is not yet collected. Measured on that path
//! (`bench vthreads --work 10`, the helper's samples): a hash map missed the cache twice per
//! start; a sorted deque spent 40% of all CPU moving elements, because virtual threads first
//! run (and report their start) in the scheduler's order, far from the order of their `tid`s;
//! a B-tree keeps its searches within a few nodes near the newest `tid`s and cost the least.

use std::collections::BTreeMap;
use std::collections::btree_map::Entry;

/// `tid` → ID.
#[derive(Debug, Default)]
pub struct TidIndex(BTreeMap<i64, u64>);

impl TidIndex {
    /// The ID of the thread with this `tid`, if it has one.
    pub fn get(&self, tid: i64) -> Option<u64> {
        self.0.get(&tid).copied()
    }

    /// Gives the thread with this `tid` the ID `id`, unless it has one: then that one. One
    /// search for both.
    pub fn get_or_insert(&mut self, tid: i64, id: u64) -> Result<(), u64> {
        match self.0.entry(tid) {
            Entry::Occupied(known) => Err(*known.get()),
            Entry::Vacant(new) => {
                new.insert(id);
                Ok(())
            }
        }
    }

    /// The thread with this `tid` is gone (or its ID could not be made): it leaves the index.
    pub fn remove(&mut self, tid: i64) {
        self.0.remove(&tid);
    }

    /// How many threads have an ID here.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.0.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_in_tid_order_are_found_and_keep_their_first_id() {
        let mut index = TidIndex::default();
        for tid in 10..20 {
            assert_eq!(index.get_or_insert(tid, tid as u64 * 100), Ok(()));
        }
        assert_eq!(index.len(), 10);
        assert_eq!(index.get(15), Some(1500));
        assert_eq!(index.get(9), None);
        assert_eq!(index.get(20), None);
        assert_eq!(index.get_or_insert(15, 7), Err(1500), "a thread keeps its ID");
        assert_eq!(index.get(15), Some(1500));
    }

    #[test]
    fn threads_out_of_order_are_found() {
        let mut index = TidIndex::default();
        for (tid, id) in [(5, 1), (3, 2), (9, 3), (4, 4), (1, 5), (7, 6)] {
            assert_eq!(index.get_or_insert(tid, id), Ok(()));
        }
        for (tid, id) in [(1, 5), (3, 2), (4, 4), (5, 1), (7, 6), (9, 3)] {
            assert_eq!(index.get(tid), Some(id), "tid {tid}");
        }
        for tid in [0, 2, 6, 8, 10] {
            assert_eq!(index.get(tid), None, "tid {tid}");
        }
    }

    #[test]
    fn a_removed_thread_is_not_found_and_removing_twice_changes_nothing() {
        let mut index = TidIndex::default();
        for tid in 1..=5 {
            index.get_or_insert(tid, tid as u64).unwrap();
        }
        index.remove(3);
        assert_eq!(index.get(3), None);
        assert_eq!(index.len(), 4);
        index.remove(3);
        index.remove(42);
        assert_eq!(index.len(), 4);
        assert_eq!((index.get(2), index.get(4)), (Some(2), Some(4)));
        assert_eq!(index.get_or_insert(3, 33), Ok(()), "a removed tid is free again");
        assert_eq!((index.get(3), index.len()), (Some(33), 5));
    }
}
