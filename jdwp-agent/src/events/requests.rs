//! The table of enabled event requests, and the composite a matching event produces.

use jdwp_protocol::commands::event_request::Modifier;
use jdwp_protocol::{ErrorCode, EventKind, SuspendPolicy};

use super::filter::{EventSubject, Request, Verdict};

/// Every enabled request, grouped by event kind so an event only meets its own kind's requests.
#[derive(Debug, Default)]
pub struct RequestTable {
    by_kind: Vec<(EventKind, Vec<Request>)>,
    last_id: i32,
}

/// The requests one event matched, and how much it suspends: the strongest policy among them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Matches {
    pub request_ids: Vec<i32>,
    pub suspend_policy: SuspendPolicy,
}

impl RequestTable {
    /// Adds a request and returns its ID (IDs start at 1; 0 is for automatically generated events).
    pub fn add(&mut self, kind: EventKind, policy: SuspendPolicy, modifiers: Vec<Modifier>) -> Result<i32, ErrorCode> {
        let id = self.last_id.checked_add(1).ok_or(ErrorCode::OUT_OF_MEMORY)?;
        let request = Request::new(id, kind, policy, modifiers)?;
        self.last_id = id;
        self.kind_mut(kind).push(request);
        Ok(id)
    }

    fn kind_mut(&mut self, kind: EventKind) -> &mut Vec<Request> {
        let pos = match self.by_kind.iter().position(|(k, _)| *k == kind) {
            Some(pos) => pos,
            None => {
                self.by_kind.push((kind, Vec::new()));
                self.by_kind.len() - 1
            }
        };
        &mut self.by_kind[pos].1
    }

    /// The requests of one kind.
    pub fn of_kind(&self, kind: EventKind) -> &[Request] {
        self.by_kind.iter().find(|(k, _)| *k == kind).map(|(_, r)| r.as_slice()).unwrap_or(&[])
    }

    /// Whether any request of `kind` is enabled (decides whether its JVMTI event is enabled).
    pub fn wants(&self, kind: EventKind) -> bool {
        !self.of_kind(kind).is_empty()
    }

    /// Removes a request; returns it so the caller can undo what it set up (breakpoints, watches).
    /// Clearing an unknown ID is not an error, as with the JDK's agent.
    pub fn remove(&mut self, kind: EventKind, id: i32) -> Option<Request> {
        let list = self.kind_mut(kind);
        let pos = list.iter().position(|r| r.id == id)?;
        Some(list.remove(pos))
    }

    /// Removes every request of one kind.
    pub fn remove_kind(&mut self, kind: EventKind) -> Vec<Request> {
        std::mem::take(self.kind_mut(kind))
    }

    /// Removes everything (a debugger left).
    pub fn clear(&mut self) -> Vec<Request> {
        self.by_kind.drain(..).flat_map(|(_, r)| r).collect()
    }

    /// Offers an event to every request of its kind. Expired requests (spent counts) are removed and
    /// returned in `expired` so their resources can be released.
    pub fn match_event(
        &mut self,
        kind: EventKind,
        subject: &dyn EventSubject,
        expired: &mut Vec<Request>,
    ) -> Option<Matches> {
        let list = self.kind_mut(kind);
        let mut matches: Option<Matches> = None;
        for request in list.iter_mut() {
            if request.offer(subject) == Verdict::Report {
                let m = matches.get_or_insert(Matches { request_ids: Vec::new(), suspend_policy: SuspendPolicy::None });
                m.request_ids.push(request.id);
                m.suspend_policy = m.suspend_policy.max(request.suspend_policy);
            }
        }
        if list.iter().any(Request::is_expired) {
            let (gone, kept): (Vec<Request>, Vec<Request>) = list.drain(..).partition(Request::is_expired);
            *list = kept;
            expired.extend(gone);
        }
        matches
    }
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
        let a = t.add(EventKind::Breakpoint, SuspendPolicy::None, vec![]).unwrap();
        let b = t.add(EventKind::Breakpoint, SuspendPolicy::EventThread, vec![]).unwrap();
        let _other_thread = t
            .add(EventKind::Breakpoint, SuspendPolicy::All, vec![Modifier::ThreadOnly { thread: ThreadId(2) }])
            .unwrap();
        let m = t.match_event(EventKind::Breakpoint, &InThread(1), &mut Vec::new()).unwrap();
        assert_eq!(m, Matches { request_ids: vec![a, b], suspend_policy: SuspendPolicy::EventThread });
        assert!(t.match_event(EventKind::MethodEntry, &InThread(1), &mut Vec::new()).is_none());
    }

    #[test]
    fn spent_counts_remove_their_request() {
        let mut t = RequestTable::default();
        let id = t.add(EventKind::SingleStep, SuspendPolicy::All, vec![Modifier::Count { count: 1 }]).unwrap();
        let mut expired = Vec::new();
        assert!(t.match_event(EventKind::SingleStep, &InThread(1), &mut expired).is_some());
        assert_eq!(expired.iter().map(|r| r.id).collect::<Vec<_>>(), [id]);
        assert!(!t.wants(EventKind::SingleStep));
    }

    #[test]
    fn ids_are_unique_and_removal_is_idempotent() {
        let mut t = RequestTable::default();
        let a = t.add(EventKind::ThreadStart, SuspendPolicy::None, vec![]).unwrap();
        let b = t.add(EventKind::ThreadStart, SuspendPolicy::None, vec![]).unwrap();
        assert_ne!(a, b);
        assert!(t.remove(EventKind::ThreadStart, a).is_some());
        assert!(t.remove(EventKind::ThreadStart, a).is_none());
        assert_eq!(t.clear().len(), 1);
    }
}
