//! The event helper's outbox: composites that suspend nothing and that no thread waits for,
//! encoded and held for a moment so that those queued back to back go out in one write instead of
//! one system call (and one TCP segment for the debugger to read) each. A program that starts
//! threads under a `ThreadStart` request sends one small composite per thread: written one by one,
//! their writes cost more than everything else the agent does for them.
//!
//! The helper holds a composite here only while more work is waiting in its inbox, and writes
//! what is held before it does anything else: before it waits for work, before a composite that
//! suspends or that a thread waits for, before any other job, and once [`FLUSH_AT`] bytes are
//! held. So the order of what is sent never changes, and an event is never held while the helper
//! is idle. The bodies are tagged with the session they were encoded for (`S`): held bodies of a
//! debugger that has left are handed back for the helper to drop, never mixed with another's.

use jdwp_protocol::SuspendPolicy;

/// Bytes of encoded bodies after which what is held is written at once.
pub const FLUSH_AT: usize = 16 * 1024;

/// Encoded composite bodies waiting to be written together, all for one session `S`.
pub struct Outbox<S> {
    held: Option<(S, Vec<Vec<u8>>)>,
    bytes: usize,
}

impl<S> Default for Outbox<S> {
    fn default() -> Self {
        Outbox { held: None, bytes: 0 }
    }
}

impl<S> Outbox<S> {
    /// Whether a composite may be held: it suspends nothing and no thread waits for its sending
    /// (the VM death event, a thread that suspends itself for its event, a thread the debugger
    /// has no ID for yet: those are written at once, after what is held).
    pub fn may_hold(policy: SuspendPolicy, waited_for: bool) -> bool {
        policy == SuspendPolicy::None && !waited_for
    }

    /// Holds `body`, encoded for `session`. Returns what is to be written now, in order: the
    /// bodies held for another session (`same` tells sessions apart) and, once [`FLUSH_AT`] bytes
    /// are held, all of them (`body` included).
    pub fn hold(&mut self, session: S, body: Vec<u8>, same: impl Fn(&S, &S) -> bool) -> Vec<(S, Vec<Vec<u8>>)> {
        let mut out = Vec::new();
        if self.held.as_ref().is_some_and(|(held_for, _)| !same(held_for, &session)) {
            out.extend(self.take());
        }
        self.bytes += body.len();
        match &mut self.held {
            Some((_, bodies)) => bodies.push(body),
            None => self.held = Some((session, vec![body])),
        }
        if self.bytes >= FLUSH_AT {
            out.extend(self.take());
        }
        out
    }

    /// Everything held, with its session, leaving the outbox empty.
    pub fn take(&mut self) -> Option<(S, Vec<Vec<u8>>)> {
        self.bytes = 0;
        self.held.take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn same(a: &u32, b: &u32) -> bool {
        a == b
    }

    #[test]
    fn only_composites_that_suspend_nothing_and_no_one_waits_for_are_held() {
        assert!(Outbox::<u32>::may_hold(SuspendPolicy::None, false));
        assert!(!Outbox::<u32>::may_hold(SuspendPolicy::None, true));
        assert!(!Outbox::<u32>::may_hold(SuspendPolicy::EventThread, false));
        assert!(!Outbox::<u32>::may_hold(SuspendPolicy::All, false));
    }

    #[test]
    fn bodies_are_held_in_order_until_taken() {
        let mut outbox = Outbox::default();
        assert_eq!(outbox.take(), None);
        assert!(outbox.hold(1, vec![1], same).is_empty());
        assert!(outbox.hold(1, vec![2, 2], same).is_empty());
        assert_eq!(outbox.take(), Some((1, vec![vec![1], vec![2, 2]])));
        assert_eq!(outbox.take(), None);
    }

    #[test]
    fn a_full_outbox_hands_everything_back_at_once() {
        let mut outbox = Outbox::default();
        let half = FLUSH_AT / 2;
        assert!(outbox.hold(7, vec![0; half - 1], same).is_empty());
        assert!(outbox.hold(7, vec![1; half - 1], same).is_empty());
        let out = outbox.hold(7, vec![2; 2], same);
        assert_eq!(out, vec![(7, vec![vec![0; half - 1], vec![1; half - 1], vec![2; 2]])]);
        assert_eq!(outbox.take(), None);
        // The count starts again after a flush.
        assert!(outbox.hold(7, vec![3; half], same).is_empty());
    }

    #[test]
    fn bodies_of_another_session_are_handed_back_first_never_mixed() {
        let mut outbox = Outbox::default();
        assert!(outbox.hold(1, vec![1], same).is_empty());
        let out = outbox.hold(2, vec![2], same);
        assert_eq!(out, vec![(1, vec![vec![1]])]);
        assert_eq!(outbox.take(), Some((2, vec![vec![2]])));
    }
}
