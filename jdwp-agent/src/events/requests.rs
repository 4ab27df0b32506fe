//! The table of enabled event requests, and the composite a matching event produces.
//!
//! Each kind's requests live in an `Arc`'d list that is replaced, never edited, when a request is
//! added or removed. An event thread takes the lock only to clone that `Arc`, then filters without
//! any lock held: filters call JVMTI, and a thread that the debugger suspends in the middle of a
//! JVMTI call must not be holding a lock the debugger's next command needs.

use std::sync::Arc;

use jdwp_protocol::commands::event_request::Modifier;
use jdwp_protocol::{ErrorCode, EventKind, SuspendPolicy};

use super::filter::{EventSubject, Request, Verdict};

/// One kind's requests, as event threads see them.
pub type Snapshot = Arc<Vec<Arc<Request>>>;

/// Every enabled request, grouped by event kind so an event only meets its own kind's requests.
#[derive(Debug, Default)]
pub struct RequestTable {
    by_kind: Vec<(EventKind, Snapshot)>,
    last_id: i32,
}

/// The requests one event matched, and how much it suspends: the strongest policy among them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Matches {
    /// Inline for the usual one or two: filtering allocates nothing on the event's thread.
    pub request_ids: smallvec::SmallVec<[i32; 2]>,
    pub suspend_policy: SuspendPolicy,
}

impl RequestTable {
    /// Adds a request and returns it (IDs start at 1; 0 is for automatically generated events).
    pub fn add(
        &mut self,
        kind: EventKind,
        policy: SuspendPolicy,
        modifiers: Vec<Modifier>,
    ) -> Result<Arc<Request>, ErrorCode> {
        let id = self.last_id.checked_add(1).ok_or(ErrorCode::OUT_OF_MEMORY)?;
        let request = Arc::new(Request::new(id, kind, policy, modifiers)?);
        self.last_id = id;
        self.edit(kind, |list| list.push(request.clone()));
        Ok(request)
    }

    fn edit(&mut self, kind: EventKind, f: impl FnOnce(&mut Vec<Arc<Request>>)) {
        let pos = match self.by_kind.iter().position(|(k, _)| *k == kind) {
            Some(pos) => pos,
            None => {
                self.by_kind.push((kind, Arc::default()));
                self.by_kind.len() - 1
            }
        };
        let mut list: Vec<Arc<Request>> = self.by_kind[pos].1.as_ref().clone();
        f(&mut list);
        self.by_kind[pos].1 = Arc::new(list);
    }

    /// The requests of one kind, to filter an event against without holding the table's lock.
    pub fn snapshot(&self, kind: EventKind) -> Option<Snapshot> {
        self.enabled(kind).cloned()
    }

    /// Whether any request of `kind` is enabled (decides whether its JVMTI event is enabled).
    pub fn wants(&self, kind: EventKind) -> bool {
        // No snapshot taken: an `Arc` count touched by every thread that asks costs more than the
        // question.
        self.enabled(kind).is_some()
    }

    /// The requests of one kind, if there are any.
    fn enabled(&self, kind: EventKind) -> Option<&Snapshot> {
        self.by_kind.iter().find(|(k, _)| *k == kind).map(|(_, r)| r).filter(|r| !r.is_empty())
    }

    /// All requests of one kind.
    pub fn of_kind(&self, kind: EventKind) -> Vec<Arc<Request>> {
        self.snapshot(kind).map(|s| s.as_ref().clone()).unwrap_or_default()
    }

    /// Removes a request; returns it so the caller can undo what it set up (breakpoints, watches).
    /// Clearing an unknown ID is not an error, as with the JDK's agent.
    pub fn remove(&mut self, kind: EventKind, id: i32) -> Option<Arc<Request>> {
        let mut removed = None;
        self.edit(kind, |list| {
            if let Some(pos) = list.iter().position(|r| r.id == id) {
                removed = Some(list.remove(pos));
            }
        });
        removed
    }

    /// Removes every request of one kind.
    pub fn remove_kind(&mut self, kind: EventKind) -> Vec<Arc<Request>> {
        let mut removed = Vec::new();
        self.edit(kind, |list| removed = std::mem::take(list));
        removed
    }

    /// Removes everything (a debugger left).
    pub fn clear(&mut self) -> Vec<Arc<Request>> {
        self.by_kind.drain(..).flat_map(|(_, r)| r.as_ref().clone()).collect()
    }
}

/// Offers an event to every request of a snapshot. Requests a spent count expired are listed in
/// `expired`, for the caller to remove from the table (under its lock) and clean up.
pub fn match_event(
    snapshot: &[Arc<Request>],
    subject: &dyn EventSubject,
    expired: &mut Vec<Arc<Request>>,
) -> Option<Matches> {
    let mut matches: Option<Matches> = None;
    for request in snapshot {
        if request.offer(subject) == Verdict::Report {
            let m = matches
                .get_or_insert(Matches { request_ids: smallvec::SmallVec::new(), suspend_policy: SuspendPolicy::None });
            m.request_ids.push(request.id);
            m.suspend_policy = m.suspend_policy.max(request.suspend_policy);
        }
        if request.is_expired() {
            expired.push(request.clone());
        }
    }
    matches
}

#[cfg(test)]
mod tests {
    use super::*;
    use jdwp_protocol::{FieldId, Location, ObjectId, ReferenceTypeId, ThreadId};

    struct InThread(u64);

    impl EventSubject for InThread {
        fn in_thread(&self, thread: ThreadId) -> bool {
            thread.0 == self.0
        }
        fn in_virtual_thread(&self) -> bool {
            false
        }
        fn class_is_subtype_of(&self, _: ReferenceTypeId) -> bool {
            true
        }
        fn class_name_matches(&self, pred: &dyn Fn(&str) -> bool) -> bool {
            pred("A")
        }
        fn at_location(&self, _: &Location) -> bool {
            true
        }
        fn this_is(&self, _: ObjectId) -> bool {
            true
        }
        fn exception_matches(&self, _: ReferenceTypeId, _: bool, _: bool) -> bool {
            true
        }
        fn field_is(&self, _: ReferenceTypeId, _: FieldId) -> bool {
            true
        }
        fn source_name_matches(&self, _: &dyn Fn(&str) -> bool) -> bool {
            true
        }
    }

    #[test]
    fn strongest_policy_wins_and_ids_are_reported_in_order() {
        let mut t = RequestTable::default();
        let a = t.add(EventKind::Breakpoint, SuspendPolicy::None, vec![]).unwrap().id;
        let b = t.add(EventKind::Breakpoint, SuspendPolicy::EventThread, vec![]).unwrap().id;
        let _other_thread = t
            .add(EventKind::Breakpoint, SuspendPolicy::All, vec![Modifier::ThreadOnly { thread: ThreadId(2) }])
            .unwrap();
        let snapshot = t.snapshot(EventKind::Breakpoint).unwrap();
        let m = match_event(&snapshot, &InThread(1), &mut Vec::new()).unwrap();
        assert_eq!(m, Matches { request_ids: smallvec::smallvec![a, b], suspend_policy: SuspendPolicy::EventThread });
        assert!(t.snapshot(EventKind::MethodEntry).is_none());
    }

    #[test]
    fn spent_counts_remove_their_request() {
        let mut t = RequestTable::default();
        let id = t.add(EventKind::SingleStep, SuspendPolicy::All, vec![Modifier::Count { count: 1 }]).unwrap().id;
        let mut expired = Vec::new();
        let snapshot = t.snapshot(EventKind::SingleStep).unwrap();
        assert!(match_event(&snapshot, &InThread(1), &mut expired).is_some());
        assert_eq!(expired.iter().map(|r| r.id).collect::<Vec<_>>(), [id]);
        t.remove(EventKind::SingleStep, id);
        assert!(!t.wants(EventKind::SingleStep));
        // A racing second occurrence on the old snapshot is not reported.
        assert!(match_event(&snapshot, &InThread(1), &mut Vec::new()).is_none());
    }

    #[test]
    fn ids_are_unique_and_removal_is_idempotent() {
        let mut t = RequestTable::default();
        let a = t.add(EventKind::ThreadStart, SuspendPolicy::None, vec![]).unwrap().id;
        let b = t.add(EventKind::ThreadStart, SuspendPolicy::None, vec![]).unwrap().id;
        assert_ne!(a, b);
        assert!(t.remove(EventKind::ThreadStart, a).is_some());
        assert!(t.remove(EventKind::ThreadStart, a).is_none());
        assert_eq!(t.clear().len(), 1);
    }
}
