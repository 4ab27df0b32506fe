//! Event filters: which requests an event matches, decided before anything is allocated.
//!
//! A request is an event kind, a suspend policy and an ordered list of modifiers. An event matches a
//! request when every modifier accepts it, applied in order. `Count` is the one stateful modifier:
//! it swallows the first `count - 1` events that reach it, lets the `count`-th through to the
//! modifiers after it, and then expires the request for good, whatever those later modifiers say.
//!
//! The event handler describes the event through [`EventSubject`], whose questions it answers lazily
//! from JVMTI (a class name is only computed if a `ClassMatch` asks for it), so filtering a
//! non-matching event costs a few comparisons and no allocation.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

use jdwp_protocol::commands::event_request::Modifier;
use jdwp_protocol::{ErrorCode, EventKind, FieldId, Location, ObjectId, ReferenceTypeId, SuspendPolicy, ThreadId};

/// What filters may ask about an event. Every answer is about *this* event: "its thread", "its
/// class" (the location's class, the prepared class, or the monitor object's class, per kind).
pub trait EventSubject {
    /// Whether the event happened in `thread`.
    fn in_thread(&self, thread: ThreadId) -> bool;
    /// Whether the event's thread is a virtual thread (false when it has none).
    fn in_virtual_thread(&self) -> bool;
    /// Whether the event's class is `class` or a subtype of it.
    fn class_is_subtype_of(&self, class: ReferenceTypeId) -> bool;
    /// Whether the event's class name (dotted, like `java.lang.String`) satisfies `pred`.
    fn class_name_matches(&self, pred: &dyn Fn(&str) -> bool) -> bool;
    /// Whether the event happened at `location`.
    fn at_location(&self, location: &Location) -> bool;
    /// Whether the event's instance is `instance`: the active `this` (watchpoints: the field's
    /// object). Like the JDK's agent, an event without one (static code) passes any instance filter.
    fn this_is(&self, instance: ObjectId) -> bool;
    /// For exception events: whether the exception is of `class` or a subtype (null: any), and whether
    /// it is caught.
    fn exception_matches(&self, class: ReferenceTypeId, caught: bool, uncaught: bool) -> bool;
    /// For watchpoint events: whether the field is `field` of `declaring`.
    fn field_is(&self, declaring: ReferenceTypeId, field: FieldId) -> bool;
    /// For class prepare events: whether a source name of the class satisfies `pred`.
    fn source_name_matches(&self, pred: &dyn Fn(&str) -> bool) -> bool;
}

/// The restricted patterns of `ClassMatch`, `ClassExclude` and `SourceNameMatch`: an exact name, or
/// one `*` at the start or at the end.
pub fn pattern_matches(pattern: &str, name: &str) -> bool {
    if let Some(suffix) = pattern.strip_prefix('*') {
        name.ends_with(suffix)
    } else if let Some(prefix) = pattern.strip_suffix('*') {
        name.starts_with(prefix)
    } else {
        pattern == name
    }
}

/// One modifier as the agent keeps it: the protocol's modifier plus the count still to go.
#[derive(Debug)]
struct Filter {
    modifier: Modifier,
    /// For `Count`: events still to swallow before letting one through. Atomic because requests are
    /// matched from many event threads at once without a lock (see the crate's locking rules).
    remaining: AtomicI32,
}

/// An enabled event request.
#[derive(Debug)]
pub struct Request {
    pub id: i32,
    pub kind: EventKind,
    pub suspend_policy: SuspendPolicy,
    filters: Vec<Filter>,
    /// Set once a `Count` filter has let its event through: the request never fires again.
    expired: AtomicBool,
}

/// The outcome of offering one event to one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Report the event for this request.
    Report,
    /// Do not report it.
    Skip,
}

impl Request {
    /// Validates `modifiers` for `kind` and builds the request.
    pub fn new(
        id: i32,
        kind: EventKind,
        suspend_policy: SuspendPolicy,
        modifiers: Vec<Modifier>,
    ) -> Result<Request, ErrorCode> {
        let mut filters = Vec::with_capacity(modifiers.len());
        for modifier in modifiers {
            check_modifier(kind, &modifier)?;
            let remaining = match modifier {
                Modifier::Count { count } => count,
                _ => 0,
            };
            filters.push(Filter { modifier, remaining: AtomicI32::new(remaining) });
        }
        Ok(Request { id, kind, suspend_policy, filters, expired: AtomicBool::new(false) })
    }

    pub fn modifiers(&self) -> impl Iterator<Item = &Modifier> {
        self.filters.iter().map(|f| &f.modifier)
    }

    /// Whether a `Count` has expired this request; the caller may then delete it.
    pub fn is_expired(&self) -> bool {
        self.expired.load(Ordering::Acquire)
    }

    /// The `LocationOnly` location, if any (breakpoints are set where these say).
    pub fn location(&self) -> Option<Location> {
        self.modifiers().find_map(|m| match m {
            Modifier::LocationOnly { loc } => Some(*loc),
            _ => None,
        })
    }

    /// The `FieldOnly` field, if any (watchpoints are set where these say).
    pub fn field(&self) -> Option<(ReferenceTypeId, FieldId)> {
        self.modifiers().find_map(|m| match m {
            Modifier::FieldOnly { declaring, field_id } => Some((*declaring, *field_id)),
            _ => None,
        })
    }

    /// The `Step` modifier, if any.
    pub fn step(&self) -> Option<&Modifier> {
        self.modifiers().find(|m| matches!(m, Modifier::Step { .. }))
    }

    /// The thread a `ThreadOnly` or `Step` modifier restricts the request to.
    pub fn thread(&self) -> Option<ThreadId> {
        self.modifiers().find_map(|m| match m {
            Modifier::ThreadOnly { thread } | Modifier::Step { thread, .. } => Some(*thread),
            _ => None,
        })
    }

    /// The class filters that come before any `Count`: they can be judged without spending it.
    fn class_filters_before_count(&self) -> impl Iterator<Item = &Modifier> {
        self.modifiers().take_while(|m| !matches!(m, Modifier::Count { .. })).filter(|m| {
            matches!(m, Modifier::ClassOnly { .. } | Modifier::ClassMatch { .. } | Modifier::ClassExclude { .. })
        })
    }

    /// Whether the class filters before any `Count` reject every event located in the subject's
    /// class. Stepping uses it to run through methods it could never stop in, and method entry to
    /// find the classes whose methods can report at all.
    pub fn class_rejects(&self, subject: &dyn EventSubject) -> bool {
        self.class_filters_before_count().any(|m| match m {
            Modifier::ClassOnly { clazz } => !subject.class_is_subtype_of(*clazz),
            Modifier::ClassMatch { class_pattern } => {
                !subject.class_name_matches(&|name| pattern_matches(class_pattern, name))
            }
            Modifier::ClassExclude { class_pattern } => {
                subject.class_name_matches(&|name| pattern_matches(class_pattern, name))
            }
            _ => false,
        })
    }

    /// Whether the class filters before any `Count` narrow the request to some classes (a
    /// `ClassOnly` or `ClassMatch`; an exclusion alone leaves almost everything in).
    pub fn has_class_scope(&self) -> bool {
        self.class_filters_before_count().any(|m| matches!(m, Modifier::ClassOnly { .. } | Modifier::ClassMatch { .. }))
    }

    /// Applies the filters in order. Updates `Count` state, so call it once per event occurrence.
    pub fn offer(&self, subject: &dyn EventSubject) -> Verdict {
        if self.is_expired() {
            return Verdict::Skip;
        }
        for filter in &self.filters {
            let pass = match &filter.modifier {
                Modifier::Count { .. } => {
                    // Exactly one occurrence sees the count go from 1 to 0, even when threads race.
                    let before = filter.remaining.fetch_sub(1, Ordering::AcqRel);
                    if before > 1 {
                        return Verdict::Skip;
                    }
                    if before < 1 || self.expired.swap(true, Ordering::AcqRel) {
                        return Verdict::Skip;
                    }
                    // The count is used up: whatever the later filters decide, this request is done.
                    true
                }
                // Reserved by the spec; nothing to evaluate.
                Modifier::Conditional { .. } => true,
                Modifier::ThreadOnly { thread } => subject.in_thread(*thread),
                Modifier::ClassOnly { clazz } => subject.class_is_subtype_of(*clazz),
                Modifier::ClassMatch { class_pattern } => {
                    subject.class_name_matches(&|name| pattern_matches(class_pattern, name))
                }
                Modifier::ClassExclude { class_pattern } => {
                    !subject.class_name_matches(&|name| pattern_matches(class_pattern, name))
                }
                Modifier::LocationOnly { loc } => subject.at_location(loc),
                Modifier::ExceptionOnly { exception_or_null, caught, uncaught } => {
                    subject.exception_matches(*exception_or_null, *caught, *uncaught)
                }
                Modifier::FieldOnly { declaring, field_id } => subject.field_is(*declaring, *field_id),
                // The step controller decides when a step completes; here only the thread matters.
                Modifier::Step { thread, .. } => subject.in_thread(*thread),
                Modifier::InstanceOnly { instance } => subject.this_is(*instance),
                Modifier::SourceNameMatch { source_name_pattern } => {
                    subject.source_name_matches(&|name| pattern_matches(source_name_pattern, name))
                }
                Modifier::PlatformThreadsOnly {} => !subject.in_virtual_thread(),
            };
            if !pass {
                return Verdict::Skip;
            }
        }
        Verdict::Report
    }
}

/// Rejects modifiers the spec does not allow for `kind`, with the JDWP error the JDK's agent gives.
fn check_modifier(kind: EventKind, modifier: &Modifier) -> Result<(), ErrorCode> {
    use EventKind as K;
    let thread_life = matches!(kind, K::ThreadStart | K::ThreadDeath);
    let allowed = match modifier {
        Modifier::Count { count } => {
            if *count <= 0 {
                return Err(ErrorCode::INVALID_COUNT);
            }
            true
        }
        Modifier::Conditional { .. } => true,
        Modifier::ThreadOnly { thread } => {
            if thread.is_null() {
                return Err(ErrorCode::INVALID_THREAD);
            }
            kind != K::ClassUnload
        }
        Modifier::ClassOnly { .. } => !thread_life && kind != K::ClassUnload,
        Modifier::ClassMatch { .. } | Modifier::ClassExclude { .. } => !thread_life,
        Modifier::LocationOnly { .. } => {
            matches!(kind, K::Breakpoint | K::FieldAccess | K::FieldModification | K::SingleStep | K::Exception)
        }
        Modifier::ExceptionOnly { .. } => kind == K::Exception,
        Modifier::FieldOnly { .. } => matches!(kind, K::FieldAccess | K::FieldModification),
        Modifier::Step { thread, .. } => {
            if thread.is_null() {
                return Err(ErrorCode::INVALID_THREAD);
            }
            kind == K::SingleStep
        }
        Modifier::InstanceOnly { .. } => !thread_life && !matches!(kind, K::ClassPrepare | K::ClassUnload),
        Modifier::SourceNameMatch { .. } => kind == K::ClassPrepare,
        Modifier::PlatformThreadsOnly {} => thread_life,
    };
    if allowed { Ok(()) } else { Err(ErrorCode::ILLEGAL_ARGUMENT) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jdwp_protocol::{ClassId, MethodId, TypeTag};

    /// A scripted event: thread 1 (virtual if `virtual_thread`) in class `demo.Main` (ID 10,
    /// subtype of 11) at method 5, index 3.
    struct Fake {
        class_name_asked: std::cell::Cell<u32>,
        virtual_thread: bool,
    }

    impl EventSubject for Fake {
        fn in_thread(&self, thread: ThreadId) -> bool {
            thread == ThreadId(1)
        }
        fn in_virtual_thread(&self) -> bool {
            self.virtual_thread
        }
        fn class_is_subtype_of(&self, class: ReferenceTypeId) -> bool {
            class == ReferenceTypeId(10) || class == ReferenceTypeId(11)
        }
        fn class_name_matches(&self, pred: &dyn Fn(&str) -> bool) -> bool {
            self.class_name_asked.set(self.class_name_asked.get() + 1);
            pred("demo.Main")
        }
        fn at_location(&self, location: &Location) -> bool {
            location.method_id == MethodId(5) && location.index == 3
        }
        fn this_is(&self, instance: ObjectId) -> bool {
            instance == ObjectId(77)
        }
        fn exception_matches(&self, _: ReferenceTypeId, caught: bool, _: bool) -> bool {
            caught
        }
        fn field_is(&self, declaring: ReferenceTypeId, field: FieldId) -> bool {
            declaring == ReferenceTypeId(10) && field == FieldId(4)
        }
        fn source_name_matches(&self, pred: &dyn Fn(&str) -> bool) -> bool {
            pred("Main.java")
        }
    }

    fn subject() -> Fake {
        Fake { class_name_asked: std::cell::Cell::new(0), virtual_thread: false }
    }

    fn request(kind: EventKind, modifiers: Vec<Modifier>) -> Request {
        Request::new(1, kind, SuspendPolicy::All, modifiers).unwrap()
    }

    #[test]
    fn patterns_are_exact_or_anchored_with_one_star() {
        assert!(pattern_matches("demo.Main", "demo.Main"));
        assert!(pattern_matches("demo.*", "demo.Main"));
        assert!(pattern_matches("*.Main", "demo.Main"));
        assert!(pattern_matches("*", "anything"));
        assert!(!pattern_matches("demo", "demo.Main"));
        assert!(!pattern_matches("other.*", "demo.Main"));
    }

    #[test]
    fn count_swallows_then_reports_once_then_expires() {
        let r = request(EventKind::Breakpoint, vec![Modifier::Count { count: 3 }]);
        let s = subject();
        let verdicts: Vec<Verdict> = (0..5).map(|_| r.offer(&s)).collect();
        assert_eq!(verdicts, [Verdict::Skip, Verdict::Skip, Verdict::Report, Verdict::Skip, Verdict::Skip]);
        assert!(r.is_expired());
    }

    #[test]
    fn count_expires_even_when_a_later_filter_rejects() {
        let r = request(
            EventKind::Breakpoint,
            vec![Modifier::Count { count: 1 }, Modifier::ThreadOnly { thread: ThreadId(2) }],
        );
        assert_eq!(r.offer(&subject()), Verdict::Skip);
        assert!(r.is_expired());
    }

    #[test]
    fn filters_before_count_keep_it_from_counting() {
        let r = request(
            EventKind::Breakpoint,
            vec![Modifier::ThreadOnly { thread: ThreadId(2) }, Modifier::Count { count: 1 }],
        );
        assert_eq!(r.offer(&subject()), Verdict::Skip);
        assert!(!r.is_expired(), "the count was never reached");
    }

    #[test]
    fn each_modifier_filters_what_it_says() {
        let s = subject();
        let loc = |index| Location { type_tag: TypeTag::Class, class_id: ClassId(10), method_id: MethodId(5), index };
        let cases: Vec<(EventKind, Modifier, Verdict)> = vec![
            (EventKind::Breakpoint, Modifier::ThreadOnly { thread: ThreadId(1) }, Verdict::Report),
            (EventKind::Breakpoint, Modifier::ThreadOnly { thread: ThreadId(9) }, Verdict::Skip),
            (EventKind::Breakpoint, Modifier::ClassOnly { clazz: ReferenceTypeId(11) }, Verdict::Report),
            (EventKind::Breakpoint, Modifier::ClassOnly { clazz: ReferenceTypeId(12) }, Verdict::Skip),
            (EventKind::MethodEntry, Modifier::ClassMatch { class_pattern: "demo.*".into() }, Verdict::Report),
            (EventKind::MethodEntry, Modifier::ClassMatch { class_pattern: "java.*".into() }, Verdict::Skip),
            (EventKind::MethodEntry, Modifier::ClassExclude { class_pattern: "demo.*".into() }, Verdict::Skip),
            (EventKind::MethodEntry, Modifier::ClassExclude { class_pattern: "java.*".into() }, Verdict::Report),
            (EventKind::Breakpoint, Modifier::LocationOnly { loc: loc(3) }, Verdict::Report),
            (EventKind::Breakpoint, Modifier::LocationOnly { loc: loc(4) }, Verdict::Skip),
            (
                EventKind::Exception,
                Modifier::ExceptionOnly { exception_or_null: ReferenceTypeId(0), caught: true, uncaught: false },
                Verdict::Report,
            ),
            (
                EventKind::Exception,
                Modifier::ExceptionOnly { exception_or_null: ReferenceTypeId(0), caught: false, uncaught: true },
                Verdict::Skip,
            ),
            (
                EventKind::FieldAccess,
                Modifier::FieldOnly { declaring: ReferenceTypeId(10), field_id: FieldId(4) },
                Verdict::Report,
            ),
            (
                EventKind::FieldAccess,
                Modifier::FieldOnly { declaring: ReferenceTypeId(10), field_id: FieldId(5) },
                Verdict::Skip,
            ),
            (EventKind::MethodEntry, Modifier::InstanceOnly { instance: ObjectId(77) }, Verdict::Report),
            (EventKind::MethodEntry, Modifier::InstanceOnly { instance: ObjectId(78) }, Verdict::Skip),
            (
                EventKind::ClassPrepare,
                Modifier::SourceNameMatch { source_name_pattern: "*.java".into() },
                Verdict::Report,
            ),
            (EventKind::ClassPrepare, Modifier::SourceNameMatch { source_name_pattern: "*.kt".into() }, Verdict::Skip),
            (EventKind::Breakpoint, Modifier::Conditional { expr_id: 1 }, Verdict::Report),
        ];
        for (kind, modifier, expected) in cases {
            let r = request(kind, vec![modifier.clone()]);
            assert_eq!(r.offer(&s), expected, "{kind:?} {modifier:?}");
        }
    }

    #[test]
    fn platform_threads_only_drops_thread_starts_and_ends_of_virtual_threads() {
        let platform = subject();
        let virtual_thread = Fake { virtual_thread: true, ..subject() };
        for kind in [EventKind::ThreadStart, EventKind::ThreadDeath] {
            let r = request(kind, vec![Modifier::PlatformThreadsOnly {}]);
            assert_eq!(r.offer(&platform), Verdict::Report, "{kind:?}");
            assert_eq!(r.offer(&virtual_thread), Verdict::Skip, "{kind:?}");
        }
        // In order with the others: a count after it counts only platform threads.
        let r = request(EventKind::ThreadStart, vec![Modifier::PlatformThreadsOnly {}, Modifier::Count { count: 1 }]);
        assert_eq!(r.offer(&virtual_thread), Verdict::Skip);
        assert!(!r.is_expired());
        assert_eq!(r.offer(&platform), Verdict::Report);
        assert!(r.is_expired());
    }

    #[test]
    fn platform_threads_only_is_for_thread_starts_and_ends_only() {
        for kind in [
            EventKind::Breakpoint,
            EventKind::SingleStep,
            EventKind::MethodEntry,
            EventKind::ClassPrepare,
            EventKind::ClassUnload,
            EventKind::Exception,
            EventKind::MonitorWait,
        ] {
            let err = Request::new(1, kind, SuspendPolicy::None, vec![Modifier::PlatformThreadsOnly {}]).unwrap_err();
            assert_eq!(err, ErrorCode::ILLEGAL_ARGUMENT, "{kind:?}");
        }
        for kind in [EventKind::ThreadStart, EventKind::ThreadDeath] {
            assert!(Request::new(1, kind, SuspendPolicy::None, vec![Modifier::PlatformThreadsOnly {}]).is_ok());
        }
    }

    #[test]
    fn class_rejection_uses_only_the_class_filters_before_the_count() {
        let s = subject();
        let matching = request(EventKind::MethodEntry, vec![Modifier::ClassMatch { class_pattern: "demo.*".into() }]);
        assert!(!matching.class_rejects(&s) && matching.has_class_scope());
        let other = request(EventKind::MethodEntry, vec![Modifier::ClassOnly { clazz: ReferenceTypeId(12) }]);
        assert!(other.class_rejects(&s) && other.has_class_scope());
        let excluded = request(EventKind::MethodEntry, vec![Modifier::ClassExclude { class_pattern: "*Main".into() }]);
        assert!(excluded.class_rejects(&s) && !excluded.has_class_scope(), "an exclusion alone is no scope");
        // After a count, a class filter cannot be judged ahead: the count is spent first.
        let counted = request(
            EventKind::MethodEntry,
            vec![Modifier::Count { count: 2 }, Modifier::ClassMatch { class_pattern: "java.*".into() }],
        );
        assert!(!counted.class_rejects(&s) && !counted.has_class_scope());
        assert!(!counted.is_expired(), "judging the class spends nothing");
    }

    #[test]
    fn class_names_are_only_computed_when_a_filter_needs_them() {
        let s = subject();
        let r = request(
            EventKind::MethodEntry,
            vec![Modifier::ThreadOnly { thread: ThreadId(9) }, Modifier::ClassMatch { class_pattern: "demo.*".into() }],
        );
        assert_eq!(r.offer(&s), Verdict::Skip);
        assert_eq!(s.class_name_asked.get(), 0, "the thread filter rejected it first");
    }

    #[test]
    fn invalid_modifiers_are_refused_like_the_jdk_agent() {
        let bad = |kind, m| Request::new(1, kind, SuspendPolicy::None, vec![m]).unwrap_err();
        assert_eq!(bad(EventKind::Breakpoint, Modifier::Count { count: 0 }), ErrorCode::INVALID_COUNT);
        assert_eq!(bad(EventKind::Breakpoint, Modifier::ThreadOnly { thread: ThreadId(0) }), ErrorCode::INVALID_THREAD);
        assert_eq!(
            bad(EventKind::ThreadStart, Modifier::ClassMatch { class_pattern: "x".into() }),
            ErrorCode::ILLEGAL_ARGUMENT
        );
        assert_eq!(
            bad(EventKind::MethodEntry, Modifier::FieldOnly { declaring: ReferenceTypeId(1), field_id: FieldId(1) }),
            ErrorCode::ILLEGAL_ARGUMENT
        );
        assert_eq!(
            bad(EventKind::ClassPrepare, Modifier::InstanceOnly { instance: ObjectId(1) }),
            ErrorCode::ILLEGAL_ARGUMENT
        );
    }
}
