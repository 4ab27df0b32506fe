//! Which JVMTI breakpoints are set, and why: the users of each (requests, the method entry
//! tracker, steps), and the events held for it. Pure: [`super::breakpoints`] makes the JVMTI
//! calls this table asks for.
//!
//! A callback that reports a method entry or a single step where a breakpoint is set holds its
//! events back for the breakpoint event at the same bytecode, which JVMTI posts next, so that
//! they go out in one composite (see `callbacks.rs`). A hold keeps the JVMTI breakpoint set even
//! when its last user goes meanwhile (the debugger cleared the request), so the breakpoint event
//! still comes and takes the held events out: none is left behind on the thread (or, for a
//! virtual thread, on its carrier) to go out late with an unrelated event. A breakpoint with
//! neither users nor holds left by a hold is an orphan: set in JVMTI, wanted by nobody. Only the
//! agent threads that change breakpoints clear JVMTI breakpoints, so orphans wait for their next
//! change ([`BreakpointTable::take_orphans`]); meanwhile a hit there matches no request.

use std::collections::HashMap;

/// A code location: (`jmethodID` as a number, code index).
pub type Key = (usize, i64);

#[derive(Debug, Default, Clone, Copy)]
struct Entry {
    users: u32,
    holds: u32,
}

/// The set JVMTI breakpoints: every location in the table is set in JVMTI.
#[derive(Debug, Default)]
pub struct BreakpointTable {
    entries: HashMap<Key, Entry>,
}

impl BreakpointTable {
    /// Whether a JVMTI breakpoint is set at `key` (so a breakpoint event follows a step or method
    /// entry there).
    pub fn is_set(&self, key: Key) -> bool {
        self.entries.contains_key(&key)
    }

    /// One more user of `key`; true when the JVMTI breakpoint must be set (it is not yet).
    pub fn acquire(&mut self, key: Key) -> bool {
        let fresh = !self.entries.contains_key(&key);
        self.entries.entry(key).or_default().users += 1;
        fresh
    }

    /// Undoes an [`acquire`](Self::acquire) whose JVMTI set failed (nothing is set there).
    pub fn set_failed(&mut self, key: Key) {
        self.entries.remove(&key);
    }

    /// One user less; true when the JVMTI breakpoint must be cleared: no user and no hold left.
    pub fn release(&mut self, key: Key) -> bool {
        let Some(entry) = self.entries.get_mut(&key) else { return false };
        if entry.users == 0 {
            return false;
        }
        entry.users -= 1;
        if entry.users == 0 && entry.holds == 0 {
            self.entries.remove(&key);
            return true;
        }
        false
    }

    /// Holds events for the breakpoint event at `key` if a breakpoint is set there (true); it
    /// then stays set until [`unhold`](Self::unhold).
    pub fn hold(&mut self, key: Key) -> bool {
        match self.entries.get_mut(&key) {
            Some(entry) => {
                entry.holds += 1;
                true
            }
            None => false,
        }
    }

    /// The held events went out. A breakpoint left with neither users nor holds stays set, an
    /// orphan, until [`take_orphans`](Self::take_orphans).
    pub fn unhold(&mut self, key: Key) {
        if let Some(entry) = self.entries.get_mut(&key) {
            entry.holds = entry.holds.saturating_sub(1);
        }
    }

    /// Removes the orphans, whose JVMTI breakpoints the caller then clears.
    pub fn take_orphans(&mut self) -> Vec<Key> {
        let orphans: Vec<Key> =
            self.entries.iter().filter(|(_, e)| e.users == 0 && e.holds == 0).map(|(k, _)| *k).collect();
        for key in &orphans {
            self.entries.remove(key);
        }
        orphans
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const AT: Key = (7, 3);

    #[test]
    fn the_first_user_sets_and_the_last_clears() {
        let mut t = BreakpointTable::default();
        assert!(t.acquire(AT));
        assert!(!t.acquire(AT));
        assert!(t.is_set(AT));
        assert!(!t.release(AT));
        assert!(t.release(AT));
        assert!(!t.is_set(AT));
        // A release too many changes nothing.
        assert!(!t.release(AT));
        assert!(t.take_orphans().is_empty());
    }

    #[test]
    fn a_failed_set_leaves_nothing() {
        let mut t = BreakpointTable::default();
        assert!(t.acquire(AT));
        t.set_failed(AT);
        assert!(!t.is_set(AT));
        assert!(!t.hold(AT));
    }

    #[test]
    fn no_hold_where_nothing_is_set() {
        let mut t = BreakpointTable::default();
        assert!(!t.hold(AT));
        t.unhold(AT);
        assert!(!t.is_set(AT));
    }

    #[test]
    fn a_hold_keeps_the_breakpoint_past_its_last_user() {
        let mut t = BreakpointTable::default();
        assert!(t.acquire(AT));
        assert!(t.hold(AT));
        // The debugger clears the request between the step event and the breakpoint event.
        assert!(!t.release(AT), "held: must stay set");
        assert!(t.is_set(AT));
        assert!(t.take_orphans().is_empty(), "still held");
        // The breakpoint event takes the held events out; now nobody wants it.
        t.unhold(AT);
        assert!(t.is_set(AT), "cleared only by an agent thread");
        assert_eq!(t.take_orphans(), vec![AT]);
        assert!(!t.is_set(AT));
    }

    #[test]
    fn an_orphan_can_be_taken_again_without_a_new_set() {
        let mut t = BreakpointTable::default();
        t.acquire(AT);
        t.hold(AT);
        t.release(AT);
        t.unhold(AT);
        // Still set in JVMTI: a new user needs no set, and it is no orphan any more.
        assert!(!t.acquire(AT));
        assert!(t.take_orphans().is_empty());
        assert!(t.release(AT));
    }

    #[test]
    fn holds_of_two_threads_at_one_place() {
        let mut t = BreakpointTable::default();
        t.acquire(AT);
        assert!(t.hold(AT));
        assert!(t.hold(AT));
        assert!(!t.release(AT));
        t.unhold(AT);
        assert!(t.take_orphans().is_empty(), "one hold is left");
        t.unhold(AT);
        assert_eq!(t.take_orphans(), vec![AT]);
    }

    #[test]
    fn a_hold_with_users_left_is_no_orphan() {
        let mut t = BreakpointTable::default();
        t.acquire(AT);
        t.hold(AT);
        t.unhold(AT);
        assert!(t.take_orphans().is_empty());
        assert!(t.release(AT));
    }
}
