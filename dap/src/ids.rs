//! Id tables for what DAP names by number: threads (stable for the session), and frames and
//! variable containers (valid only while the VM is stopped; cleared at every resume, as the
//! protocol allows), plus the paging arithmetic of `stackTrace` and `variables`. Pure, so the
//! mapping is tested without a VM.

use std::collections::HashMap;
use std::hash::Hash;

/// Small integers for keys that may not fit a JSON number exactly (JDWP ids are 64-bit; DAP
/// clients in JavaScript read numbers as doubles). The same key gets the same number for as long
/// as the table lives.
pub struct Interned<K> {
    by_key: HashMap<K, i64>,
    keys: Vec<K>,
}

impl<K: Clone + Eq + Hash> Default for Interned<K> {
    fn default() -> Self {
        Interned { by_key: HashMap::new(), keys: Vec::new() }
    }
}

impl<K: Clone + Eq + Hash> Interned<K> {
    /// The number for `key` (1, 2, ...), allotted on first sight.
    pub fn id(&mut self, key: &K) -> i64 {
        if let Some(id) = self.by_key.get(key) {
            return *id;
        }
        self.keys.push(key.clone());
        let id = self.keys.len() as i64;
        self.by_key.insert(key.clone(), id);
        id
    }

    pub fn get(&self, id: i64) -> Option<&K> {
        usize::try_from(id).ok().and_then(|i| i.checked_sub(1)).and_then(|i| self.keys.get(i))
    }
}

/// Handles valid until the next [`Handles::clear`]: ids keep growing across clears, so a stale
/// id from before a resume is never mistaken for a new one.
pub struct Handles<T> {
    first: i64,
    items: Vec<T>,
}

impl<T> Default for Handles<T> {
    fn default() -> Self {
        Handles { first: 1, items: Vec::new() }
    }
}

impl<T> Handles<T> {
    pub fn insert(&mut self, item: T) -> i64 {
        self.items.push(item);
        self.first + self.items.len() as i64 - 1
    }

    pub fn get(&self, id: i64) -> Option<&T> {
        let i = id.checked_sub(self.first)?;
        usize::try_from(i).ok().and_then(|i| self.items.get(i))
    }

    pub fn clear(&mut self) {
        self.first += self.items.len() as i64;
        self.items.clear();
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

/// The slice `[start, start + count)` of `total` items that a paged request asks for: absent or
/// non-positive counts mean "to the end", starts past the end give an empty page.
pub fn page(total: i64, start: Option<i64>, count: Option<i64>) -> (i64, i64) {
    let total = total.max(0);
    let start = start.unwrap_or(0).clamp(0, total);
    let left = total - start;
    let count = match count {
        Some(c) if c > 0 => c.min(left),
        _ => left,
    };
    (start, count)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interned_ids_are_small_stable_and_reversible() {
        let mut t = Interned::default();
        let big = u64::MAX - 7;
        assert_eq!(t.id(&big), 1);
        assert_eq!(t.id(&5u64), 2);
        assert_eq!(t.id(&big), 1);
        assert_eq!(t.get(1), Some(&big));
        assert_eq!(t.get(2), Some(&5));
        assert_eq!(t.get(0), None);
        assert_eq!(t.get(-1), None);
        assert_eq!(t.get(3), None);
    }

    #[test]
    fn handles_go_stale_at_clear() {
        let mut h = Handles::default();
        let a = h.insert("a");
        let b = h.insert("b");
        assert_eq!((h.get(a), h.get(b)), (Some(&"a"), Some(&"b")));
        h.clear();
        assert_eq!(h.get(a), None);
        assert_eq!(h.get(b), None);
        let c = h.insert("c");
        assert!(c > b, "ids are never reused");
        assert_eq!(h.get(c), Some(&"c"));
        assert_eq!(h.get(i64::MIN), None);
        assert_eq!(h.get(i64::MAX), None);
    }

    #[test]
    fn paging() {
        assert_eq!(page(2000, Some(0), Some(20)), (0, 20));
        assert_eq!(page(2000, Some(1990), Some(20)), (1990, 10));
        assert_eq!(page(2000, None, None), (0, 2000));
        assert_eq!(page(2000, Some(5), Some(0)), (5, 1995), "levels 0 means all");
        assert_eq!(page(10, Some(50), Some(3)), (10, 0));
        assert_eq!(page(10, Some(-4), Some(3)), (0, 3));
        assert_eq!(page(-1, Some(0), Some(3)), (0, 0));
    }
}
