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

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::BuildHasher;

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
