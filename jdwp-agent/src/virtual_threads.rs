//! Decisions about virtual threads that need no VM: when JVMTI's `VirtualThreadStart`/`End` are
//! worth enabling, and the list of virtual threads kept for `includevirtualthreads=y`.
//!
//! JVMTI cannot list virtual threads, and its start and end events for them cost every virtual
//! thread a call into the agent (JDK-8295376: the JDK's agent made programs of many short virtual
//! threads up to 250x slower with them on). So the events are on only while a thread start or end
//! request could match a virtual thread, or while the user asked for virtual threads in
//! `AllThreads` (`includevirtualthreads=y`). Then each start adds a weak reference to a list, and
//! the list is pruned of ended threads each time it has doubled since the last pruning, so its
//! length stays within twice the number of live virtual threads (plus a floor) without a search
//! per thread end.

use std::collections::HashSet;
use std::hash::Hash;

use jdwp_protocol::EventKind;
use jdwp_protocol::commands::event_request::Modifier;

use crate::events::filter::Request;

/// Which of `VirtualThreadStart` and `VirtualThreadEnd` to enable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Wanted {
    pub start: bool,
    pub end: bool,
}

/// What the virtual-thread events are needed for now: `supported` is the VM's
/// `can_support_virtual_threads` (JVMTI 21+; without it the events do not exist), `tracking`
/// is `includevirtualthreads=y`, and `starts`/`ends` are the enabled `ThreadStart` and
/// `ThreadDeath` requests.
pub fn wanted<'a>(
    supported: bool,
    tracking: bool,
    starts: impl IntoIterator<Item = &'a Request>,
    ends: impl IntoIterator<Item = &'a Request>,
) -> Wanted {
    if !supported {
        return Wanted::default();
    }
    let start = tracking || starts.into_iter().any(may_match_virtual);
    Wanted { start, end: ends.into_iter().any(may_match_virtual) }
}

/// Whether a thread start or end request could report a virtual thread: any without
/// `PlatformThreadsOnly` (a `ThreadOnly` naming a platform thread cannot either, but telling that
/// would need the VM; enabling the events for it costs only time, never a wrong answer).
fn may_match_virtual(request: &Request) -> bool {
    matches!(request.kind, EventKind::ThreadStart | EventKind::ThreadDeath)
        && !request.modifiers().any(|m| matches!(m, Modifier::PlatformThreadsOnly {}))
}

/// The virtual threads started while tracking, as references of type `R` (the agent's weak
/// global references), some of which may have ended.
///
/// One pruner at a time: [`Tracked::push`] hands out a copy of the list when it is due, the
/// caller finds the ended threads with no lock held, and [`Tracked::pruned`] removes them. The
/// list is never reordered and only pushes add to it meanwhile, so nothing is lost; the caller
/// deletes the removed references after that, when no one else can see them.
#[derive(Debug)]
pub struct Tracked<R> {
    refs: Vec<R>,
    /// The length at which the list is next pruned.
    prune_at: usize,
    pruning: bool,
}

/// The smallest length at which the list is pruned: below it, pruning would cost more than the
/// memory it frees.
pub const PRUNE_FLOOR: usize = 1024;

impl<R> Default for Tracked<R> {
    fn default() -> Self {
        Tracked { refs: Vec::new(), prune_at: PRUNE_FLOOR, pruning: false }
    }
}

impl<R: Copy + Eq + Hash> Tracked<R> {
    /// Adds a started thread. When the list is due to be pruned (it has doubled since the last
    /// pruning) and no one prunes it already, returns a copy of it to prune.
    pub fn push(&mut self, r: R) -> Option<Vec<R>> {
        self.refs.push(r);
        if self.refs.len() < self.prune_at || self.pruning {
            return None;
        }
        self.pruning = true;
        Some(self.refs.clone())
    }

    /// Removes the ended threads the pruner found; the next pruning is due once the list has
    /// doubled again.
    pub fn pruned(&mut self, ended: &[R]) {
        if !ended.is_empty() {
            let ended: HashSet<&R> = ended.iter().collect();
            self.refs.retain(|r| !ended.contains(r));
        }
        self.pruning = false;
        self.prune_at = (self.refs.len() * 2).max(PRUNE_FLOOR);
    }

    /// Every thread kept (some may have ended).
    pub fn refs(&self) -> &[R] {
        &self.refs
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jdwp_protocol::{SuspendPolicy, ThreadId};

    fn request(kind: EventKind, modifiers: Vec<Modifier>) -> Request {
        Request::new(1, kind, SuspendPolicy::None, modifiers).unwrap()
    }

    const NONE: [&Request; 0] = [];

    #[test]
    fn nothing_is_enabled_without_the_capability() {
        let starts = [request(EventKind::ThreadStart, vec![])];
        assert_eq!(wanted(false, true, &starts, &starts), Wanted::default());
    }

    #[test]
    fn an_idle_agent_enables_nothing() {
        assert_eq!(wanted(true, false, NONE, NONE), Wanted::default());
    }

    #[test]
    fn tracking_needs_starts_only() {
        assert_eq!(wanted(true, true, NONE, NONE), Wanted { start: true, end: false });
    }

    #[test]
    fn requests_for_platform_threads_only_enable_nothing() {
        let starts = [request(EventKind::ThreadStart, vec![Modifier::PlatformThreadsOnly {}])];
        let ends =
            [request(EventKind::ThreadDeath, vec![Modifier::Count { count: 2 }, Modifier::PlatformThreadsOnly {}])];
        assert_eq!(wanted(true, false, &starts, &ends), Wanted::default());
    }

    #[test]
    fn any_request_that_may_match_a_virtual_thread_enables_its_event() {
        let platform = request(EventKind::ThreadStart, vec![Modifier::PlatformThreadsOnly {}]);
        let any = request(EventKind::ThreadStart, vec![]);
        let one = request(EventKind::ThreadDeath, vec![Modifier::ThreadOnly { thread: ThreadId(5) }]);
        assert_eq!(wanted(true, false, &[platform, any], NONE), Wanted { start: true, end: false });
        assert_eq!(wanted(true, false, NONE, &[one]), Wanted { start: false, end: true });
    }

    #[test]
    fn the_list_is_pruned_when_it_has_doubled() {
        let mut t = Tracked::default();
        for i in 0..PRUNE_FLOOR - 1 {
            assert_eq!(t.push(i), None, "below the floor at {i}");
        }
        let copy = t.push(PRUNE_FLOOR - 1).expect("due at the floor");
        assert_eq!(copy.len(), PRUNE_FLOOR);
        // Starts while the pruning runs land in the list, and start no second pruning.
        for i in 0..10_000 {
            assert_eq!(t.push(PRUNE_FLOOR + i), None);
        }
        // All but 900 of the copy had ended: 10,900 are left, pruned again at 21,800.
        let ended: Vec<usize> = copy.into_iter().skip(900).collect();
        t.pruned(&ended);
        assert_eq!(t.refs().len(), 10_900);
        assert_eq!(t.refs()[899], 899);
        assert_eq!(t.refs()[900], PRUNE_FLOOR, "the order is kept");
        for i in 0..10_899 {
            assert_eq!(t.push(100_000 + i), None, "at {i}");
        }
        assert!(t.push(0).is_some());
    }

    #[test]
    fn a_small_list_keeps_the_floor() {
        let mut t = Tracked::default();
        t.pruned(&[]);
        for i in 0..PRUNE_FLOOR - 1 {
            assert_eq!(t.push(i), None);
        }
        let copy = t.push(7).unwrap();
        t.pruned(&copy[1..]);
        assert_eq!(t.refs(), [0]);
        for i in 0..PRUNE_FLOOR - 2 {
            assert_eq!(t.push(i), None);
        }
        assert!(t.push(0).is_some());
    }
}
