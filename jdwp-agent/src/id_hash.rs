//! A fast hasher for the agent's tables keyed by IDs (object, thread and method IDs).
//!
//! Suspending every thread of the VM looks each one up in several such tables; with hundreds of
//! threads, std's SipHash was a measurable part of every suspend-all event. The keys are numbers
//! the agent hands out itself (or JVM pointers), never chosen by a peer, so hash flooding is no
//! concern and a multiplicative hash (the one rustc uses) is enough.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

/// A `HashMap` keyed by IDs.
pub type IdMap<K, V> = HashMap<K, V, BuildHasherDefault<IdHasher>>;
/// A `HashSet` of IDs.
pub type IdSet<K> = HashSet<K, BuildHasherDefault<IdHasher>>;

/// Multiplies each word in; see the module doc.
#[derive(Debug, Default, Clone, Copy)]
pub struct IdHasher(u64);

/// An odd constant with well-spread bits (rustc-hash's).
const SEED: u64 = 0xf135_7aea_2e62_a9c5;

impl IdHasher {
    fn add(&mut self, word: u64) {
        self.0 = self.0.wrapping_add(word).wrapping_mul(SEED);
    }
}

impl Hasher for IdHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.add(n);
    }

    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }

    fn write_u32(&mut self, n: u32) {
        self.add(u64::from(n));
    }

    fn finish(&self) -> u64 {
        // The product's entropy sits in its high bits; the table indexes with the low ones.
        self.0.rotate_left(26)
    }
}

/// Values for IDs the agent hands out in order, from 1, and never frees (object IDs): the value
/// of ID `n` sits at `n - 1`, with no hashing, no rehashing as the table grows (a program that
/// starts a million threads under a thread start request gives each an ID), and no memory per
/// entry beyond the value. Any other number (0, a tag the agent did not hand out) has no value.
#[derive(Debug, Clone)]
pub struct IdVec<V>(Vec<V>);

impl<V> Default for IdVec<V> {
    fn default() -> Self {
        IdVec(Vec::new())
    }
}

impl<V> IdVec<V> {
    /// The ID the next [`IdVec::push`] gets.
    pub fn next_id(&self) -> u64 {
        self.0.len() as u64 + 1
    }

    /// Stores the value of the next ID and returns that ID.
    pub fn push(&mut self, value: V) -> u64 {
        self.0.push(value);
        self.0.len() as u64
    }

    fn index(&self, id: u64) -> Option<usize> {
        id.checked_sub(1).and_then(|i| usize::try_from(i).ok()).filter(|&i| i < self.0.len())
    }

    pub fn get(&self, id: u64) -> Option<&V> {
        self.index(id).map(|i| &self.0[i])
    }

    pub fn get_mut(&mut self, id: u64) -> Option<&mut V> {
        self.index(id).map(|i| &mut self.0[i])
    }

    pub fn contains(&self, id: u64) -> bool {
        self.index(id).is_some()
    }

    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut V> {
        self.0.iter_mut()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::BuildHasher;

    #[test]
    fn id_vec_hands_out_ids_from_one_and_knows_no_other() {
        let mut v = IdVec::default();
        assert_eq!(v.next_id(), 1);
        assert_eq!(v.push("a"), 1);
        assert_eq!(v.next_id(), 2);
        assert_eq!(v.push("b"), 2);
        assert_eq!(v.get(1), Some(&"a"));
        assert_eq!(v.get(2), Some(&"b"));
        for unknown in [0, 3, u64::MAX] {
            assert_eq!(v.get(unknown), None);
            assert!(!v.contains(unknown));
        }
        *v.get_mut(2).unwrap() = "c";
        assert!(v.contains(2));
        assert_eq!(v.values_mut().map(|x| *x).collect::<Vec<_>>(), ["a", "c"]);
    }

    #[test]
    fn sequential_ids_spread_over_the_low_bits() {
        let build = BuildHasherDefault::<IdHasher>::default();
        let buckets: HashSet<u64> = (1..=1024u64).map(|id| build.hash_one(id) & 1023).collect();
        assert!(buckets.len() > 600, "1024 sequential IDs fell into only {} of 1024 buckets", buckets.len());
    }

    #[test]
    fn maps_work_with_composite_keys() {
        let mut map: IdMap<(u64, usize), u32> = IdMap::default();
        for i in 0..1000u64 {
            map.insert((i, i as usize * 7), i as u32);
        }
        assert_eq!(map.len(), 1000);
        assert_eq!(map.get(&(500, 3500)), Some(&500));
        assert_eq!(map.get(&(500, 3501)), None);
    }
}
