//! [`EventRequest`]: what to report, as plain data, built before it is sent.

use jdwp_protocol::commands::event_request::Modifier;
use jdwp_protocol::{
    EventKind, FieldId, Location, ObjectId, ReferenceTypeId, StepDepth, StepSize, SuspendPolicy, ThreadId,
};

use crate::error::{JdiError, Result};

/// What a request asks the VM to report: an event kind, which threads the event suspends, and
/// filters, applied by the VM in the order given (the order matters for [`EventRequest::count`]).
///
/// Build one with a constructor per kind and the filter methods, then register it with
/// [`VirtualMachine::create_event_request`](crate::VirtualMachine::create_event_request) (or send it
/// at once with [`VirtualMachine::enable_request`](crate::VirtualMachine::enable_request)).
#[derive(Debug, Clone, PartialEq)]
pub struct EventRequest {
    pub kind: EventKind,
    pub suspend_policy: SuspendPolicy,
    pub modifiers: Vec<Modifier>,
}

impl EventRequest {
    /// A request of `kind` that suspends all threads (JDI's default) and has no filters.
    pub fn new(kind: EventKind) -> EventRequest {
        EventRequest { kind, suspend_policy: SuspendPolicy::All, modifiers: Vec::new() }
    }

    /// Stops before the code at `location` runs.
    pub fn breakpoint(location: Location) -> EventRequest {
        EventRequest::new(EventKind::Breakpoint).location_only(location)
    }

    /// One step of `thread`. Steps are one-shot: unless the request has its own count filter, it is
    /// sent with a final `Count 1` (as jdb does), so the VM reports the first step that passes the
    /// other filters and then drops the request. A thread may have one enabled step at a time.
    pub fn step(thread: ThreadId, size: StepSize, depth: StepDepth) -> EventRequest {
        EventRequest::new(EventKind::SingleStep).with(Modifier::Step { thread, size, depth })
    }

    /// Preparation of types whose name matches `class_pattern` (see [`EventRequest::class_match`]).
    pub fn class_prepare(class_pattern: &str) -> EventRequest {
        EventRequest::new(EventKind::ClassPrepare).class_match(class_pattern)
    }

    /// Unloading of classes. HotSpot's agent notices unloads only after a GC, at its next event,
    /// and always reports them with suspend policy `None`.
    pub fn class_unload() -> EventRequest {
        EventRequest::new(EventKind::ClassUnload)
    }

    /// Exceptions of `exception` or a subtype (`None`: all), caught and/or uncaught.
    pub fn exception(exception: Option<ReferenceTypeId>, caught: bool, uncaught: bool) -> EventRequest {
        let exception_or_null = exception.unwrap_or(ReferenceTypeId::NULL);
        EventRequest::new(EventKind::Exception).with(Modifier::ExceptionOnly { exception_or_null, caught, uncaught })
    }

    /// Entry into any method (native ones too): add class filters, or the VM reports every call.
    pub fn method_entry() -> EventRequest {
        EventRequest::new(EventKind::MethodEntry)
    }

    /// Normal return from any method (not by an exception).
    pub fn method_exit() -> EventRequest {
        EventRequest::new(EventKind::MethodExit)
    }

    /// Like [`EventRequest::method_exit`], with the value returned (needs `canGetMethodReturnValues`).
    pub fn method_exit_with_return_value() -> EventRequest {
        EventRequest::new(EventKind::MethodExitWithReturnValue)
    }

    /// Reads of one field (needs `canWatchFieldAccess`).
    pub fn field_access(declaring: ReferenceTypeId, field_id: FieldId) -> EventRequest {
        EventRequest::new(EventKind::FieldAccess).with(Modifier::FieldOnly { declaring, field_id })
    }

    /// Writes of one field, with the value to be written (needs `canWatchFieldModification`).
    pub fn field_modification(declaring: ReferenceTypeId, field_id: FieldId) -> EventRequest {
        EventRequest::new(EventKind::FieldModification).with(Modifier::FieldOnly { declaring, field_id })
    }

    /// A thread about to block on a monitor another thread holds (needs `canRequestMonitorEvents`).
    pub fn monitor_contended_enter() -> EventRequest {
        EventRequest::new(EventKind::MonitorContendedEnter)
    }

    /// A thread got a monitor it had blocked on.
    pub fn monitor_contended_entered() -> EventRequest {
        EventRequest::new(EventKind::MonitorContendedEntered)
    }

    /// A thread about to `wait()` on a monitor. Class filters match the monitor's class here.
    pub fn monitor_wait() -> EventRequest {
        EventRequest::new(EventKind::MonitorWait)
    }

    /// A thread done waiting on a monitor, notified or timed out.
    pub fn monitor_waited() -> EventRequest {
        EventRequest::new(EventKind::MonitorWaited)
    }

    pub fn thread_start() -> EventRequest {
        EventRequest::new(EventKind::ThreadStart)
    }

    pub fn thread_death() -> EventRequest {
        EventRequest::new(EventKind::ThreadDeath)
    }

    /// Only thread starts and deaths of platform threads (JDI's `addPlatformThreadsOnlyFilter`).
    /// Like JDI, sent only to a VM whose JDWP version is 19 or more: older VMs have no virtual
    /// threads, and their agents do not know the modifier.
    pub fn platform_threads_only(self) -> EventRequest {
        self.with(Modifier::PlatformThreadsOnly {})
    }

    /// VM death is reported without a request (policy `None`); a request adds a second VM death
    /// event, in the same set, with its own ID and suspend policy.
    pub fn vm_death() -> EventRequest {
        EventRequest::new(EventKind::VmDeath)
    }

    /// Which threads the event suspends: all, the event's thread, or none.
    pub fn suspend(mut self, policy: SuspendPolicy) -> EventRequest {
        self.suspend_policy = policy;
        self
    }

    /// Adds any filter; filters apply in the order added.
    pub fn with(mut self, modifier: Modifier) -> EventRequest {
        self.modifiers.push(modifier);
        self
    }

    /// Reports only the `count`-th occurrence that reaches this filter; the request then expires,
    /// whether or not the later filters let that occurrence through.
    pub fn count(self, count: i32) -> EventRequest {
        self.with(Modifier::Count { count })
    }

    /// Only events in `thread`. Not for class unloads.
    pub fn thread(self, thread: ThreadId) -> EventRequest {
        self.with(Modifier::ThreadOnly { thread })
    }

    /// Only events located in `class` or a subtype (class prepares: of it; monitor waits: on an
    /// instance of it). Not for class unloads or thread starts and deaths.
    pub fn class_only(self, class: ReferenceTypeId) -> EventRequest {
        self.with(Modifier::ClassOnly { clazz: class })
    }

    /// Only events whose class name (`java.lang.String`, `Outer$Inner`) matches `pattern`: exact,
    /// or one `*` at its start or end. The class is the event location's, except for class
    /// prepares and unloads (the class itself) and monitor waits (the monitor's class).
    pub fn class_match(self, pattern: &str) -> EventRequest {
        self.with(Modifier::ClassMatch { class_pattern: pattern.into() })
    }

    /// Drops events whose class name matches `pattern` (as in [`EventRequest::class_match`]).
    pub fn class_exclude(self, pattern: &str) -> EventRequest {
        self.with(Modifier::ClassExclude { class_pattern: pattern.into() })
    }

    /// Only events at exactly this location (breakpoints, steps, exceptions, watchpoints).
    pub fn location_only(self, location: Location) -> EventRequest {
        self.with(Modifier::LocationOnly { loc: location })
    }

    /// Only events whose `this` is `instance` (needs `canUseInstanceFilters`). Not for class
    /// prepares or unloads or thread starts and deaths.
    pub fn instance(self, instance: ObjectId) -> EventRequest {
        self.with(Modifier::InstanceOnly { instance })
    }

    /// Class prepares only: types whose source name matches `pattern` (needs
    /// `canUseSourceNameFilters`). HotSpot also matches the class file's `SourceFile`.
    pub fn source_name_match(self, pattern: &str) -> EventRequest {
        self.with(Modifier::SourceNameMatch { source_name_pattern: pattern.into() })
    }

    /// The breakpoint location (the first location filter).
    pub fn location(&self) -> Option<Location> {
        self.modifiers.iter().find_map(|m| match m {
            Modifier::LocationOnly { loc } => Some(*loc),
            _ => None,
        })
    }

    /// The stepping thread of a step request.
    pub fn step_thread(&self) -> Option<ThreadId> {
        self.modifiers.iter().find_map(|m| match m {
            Modifier::Step { thread, .. } => Some(*thread),
            _ => None,
        })
    }

    /// The count of the first count filter.
    pub fn count_filter(&self) -> Option<i32> {
        self.modifiers.iter().find_map(|m| match m {
            Modifier::Count { count } => Some(*count),
            _ => None,
        })
    }

    /// Whether the VM drops the request after one reported event (a count filter, or a step).
    pub fn is_one_shot(&self) -> bool {
        self.kind == EventKind::SingleStep || self.count_filter().is_some()
    }

    /// The filters as sent to a VM speaking JDWP `jdwp_major`: the ones given (less
    /// `PlatformThreadsOnly` before JDWP 19), plus the final `Count 1` of a one-shot step.
    pub(crate) fn wire_modifiers(&self, jdwp_major: i32) -> Vec<Modifier> {
        let mut modifiers = self.modifiers.clone();
        if jdwp_major < 19 {
            modifiers.retain(|m| !matches!(m, Modifier::PlatformThreadsOnly {}));
        }
        if self.kind == EventKind::SingleStep && self.count_filter().is_none() {
            modifiers.push(Modifier::Count { count: 1 });
        }
        modifiers
    }

    /// Checks the request against the spec's rules (which kinds can be requested, which filters
    /// each kind takes, what each kind requires), so every agent sees only valid requests.
    pub fn validate(&self) -> Result<()> {
        use EventKind as K;
        let kind = self.kind;
        let invalid = |why: String| Err(JdiError::InvalidArgument(format!("{} request: {why}", kind.name())));
        if matches!(kind, K::FramePop | K::UserDefined | K::ClassLoad | K::ExceptionCatch | K::VmDisconnected) {
            return invalid("this kind cannot be requested".into());
        }
        let thread_life = matches!(kind, K::ThreadStart | K::ThreadDeath);
        for m in &self.modifiers {
            let allowed = match m {
                Modifier::Count { count } => {
                    if *count <= 0 {
                        return invalid(format!("count must be positive, not {count}"));
                    }
                    true
                }
                Modifier::Conditional { .. } => true,
                Modifier::ThreadOnly { .. } => kind != K::ClassUnload,
                Modifier::ClassOnly { .. } => !thread_life && kind != K::ClassUnload,
                Modifier::ClassMatch { class_pattern: p } | Modifier::ClassExclude { class_pattern: p } => {
                    check_pattern(p).or_else(invalid)?;
                    !thread_life
                }
                Modifier::LocationOnly { .. } => {
                    matches!(kind, K::Breakpoint | K::FieldAccess | K::FieldModification | K::SingleStep | K::Exception)
                }
                Modifier::ExceptionOnly { .. } => kind == K::Exception,
                Modifier::FieldOnly { .. } => matches!(kind, K::FieldAccess | K::FieldModification),
                Modifier::Step { .. } => kind == K::SingleStep,
                Modifier::InstanceOnly { .. } => !thread_life && !matches!(kind, K::ClassPrepare | K::ClassUnload),
                Modifier::SourceNameMatch { source_name_pattern: p } => {
                    check_pattern(p).or_else(invalid)?;
                    kind == K::ClassPrepare
                }
                Modifier::PlatformThreadsOnly {} => thread_life,
            };
            if !allowed {
                return invalid(format!("the {} filter does not apply", m.kind().name()));
            }
        }
        let has = |f: fn(&Modifier) -> bool| self.modifiers.iter().filter(|m| f(m)).count();
        let required = match kind {
            K::Breakpoint => Some(("a location", has(|m| matches!(m, Modifier::LocationOnly { .. })))),
            K::SingleStep => Some(("exactly one step filter", has(|m| matches!(m, Modifier::Step { .. })))),
            K::FieldAccess | K::FieldModification => {
                Some(("a field filter", has(|m| matches!(m, Modifier::FieldOnly { .. }))))
            }
            _ => None,
        };
        match required {
            Some((what, n)) if n == 0 || (kind == K::SingleStep && n > 1) => invalid(format!("needs {what}")),
            _ => Ok(()),
        }
    }
}

/// Patterns are exact, or have a single `*` as their first or last character; agents treat any
/// other `*` literally, so such a pattern would silently match nothing.
fn check_pattern(pattern: &str) -> std::result::Result<(), String> {
    let inner = pattern.strip_prefix('*').or_else(|| pattern.strip_suffix('*')).unwrap_or(pattern);
    if pattern.is_empty() || inner.contains('*') {
        return Err(format!("pattern {pattern:?}: use an exact name or one '*' at its start or end"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use jdwp_protocol::{ClassId, MethodId, TypeTag};

    fn at(index: u64) -> Location {
        Location { type_tag: TypeTag::Class, class_id: ClassId(1), method_id: MethodId(2), index }
    }

    #[test]
    fn steps_are_sent_one_shot_unless_counted() {
        let step = EventRequest::step(ThreadId(1), StepSize::Line, StepDepth::Over).class_exclude("java.*");
        let wire = step.wire_modifiers(17);
        assert_eq!(wire.last(), Some(&Modifier::Count { count: 1 }), "count 1 comes after the other filters");
        assert_eq!(wire.len(), 3);
        let counted = EventRequest::step(ThreadId(1), StepSize::Min, StepDepth::Into).count(3);
        assert_eq!(counted.wire_modifiers(17), counted.modifiers);
        let bp = EventRequest::breakpoint(at(0));
        assert_eq!(bp.wire_modifiers(17), bp.modifiers);
        assert!(step.is_one_shot() && counted.is_one_shot() && !bp.is_one_shot());
    }

    #[test]
    fn platform_threads_only_goes_to_jdwp_19_and_later() {
        let start = EventRequest::thread_start().platform_threads_only().count(2);
        assert_eq!(start.wire_modifiers(19), start.modifiers);
        assert_eq!(start.wire_modifiers(25), start.modifiers);
        assert_eq!(start.wire_modifiers(17), [Modifier::Count { count: 2 }]);
        assert!(start.validate().is_ok() && EventRequest::thread_death().platform_threads_only().validate().is_ok());
        for kind in [EventKind::ClassPrepare, EventKind::MethodEntry, EventKind::ClassUnload] {
            let r = EventRequest::new(kind).platform_threads_only();
            assert!(r.validate().is_err(), "{kind:?}");
        }
    }

    #[test]
    fn validation_follows_the_spec_table() {
        let ok = [
            EventRequest::breakpoint(at(0)).thread(ThreadId(1)).count(2).instance(ObjectId(3)),
            EventRequest::class_prepare("java.*").source_name_match("*.java"),
            EventRequest::class_unload().class_exclude("*Foo"),
            EventRequest::thread_start().thread(ThreadId(2)).count(1),
            EventRequest::exception(None, true, false).location_only(at(0)).class_match("*"),
            EventRequest::monitor_wait().class_only(ReferenceTypeId(4)),
            EventRequest::vm_death(),
        ];
        for r in ok {
            assert!(r.validate().is_ok(), "{r:?}");
        }
        let bad = [
            EventRequest::new(EventKind::FramePop),
            EventRequest::new(EventKind::Breakpoint),
            EventRequest::new(EventKind::SingleStep),
            EventRequest::step(ThreadId(1), StepSize::Line, StepDepth::Over).with(Modifier::Step {
                thread: ThreadId(1),
                size: StepSize::Min,
                depth: StepDepth::Out,
            }),
            EventRequest::new(EventKind::FieldAccess),
            EventRequest::class_unload().thread(ThreadId(1)),
            EventRequest::thread_start().class_match("x"),
            EventRequest::thread_death().class_only(ReferenceTypeId(1)),
            EventRequest::class_prepare("x").instance(ObjectId(1)),
            EventRequest::method_entry().location_only(at(0)),
            EventRequest::method_entry().source_name_match("*.java"),
            EventRequest::method_entry().class_match("a*b"),
            EventRequest::method_entry().class_match("*a*"),
            EventRequest::method_entry().class_match(""),
            EventRequest::method_entry().count(0),
            EventRequest::method_exit().with(Modifier::ExceptionOnly {
                exception_or_null: ReferenceTypeId::NULL,
                caught: true,
                uncaught: true,
            }),
        ];
        for r in bad {
            let err = r.validate().expect_err(&format!("{r:?} should be refused"));
            assert!(matches!(err, JdiError::InvalidArgument(_)), "{err}");
        }
    }

    #[test]
    fn accessors_find_the_filters() {
        let loc = at(7);
        let r = EventRequest::breakpoint(loc).count(4);
        assert_eq!((r.location(), r.count_filter(), r.step_thread()), (Some(loc), Some(4), None));
        let s = EventRequest::step(ThreadId(9), StepSize::Line, StepDepth::Out);
        assert_eq!(s.step_thread(), Some(ThreadId(9)));
    }
}
