//! `EventRequest` (command set 15): asking the VM to report events, and withdrawing the requests.
//!
//! A request names an event kind, how much of the VM the event suspends, and a list of
//! [`Modifier`]s, filters applied in order; only events that pass every one are reported.

use super::prelude::*;

jdwp_select! {
    /// A filter of an event request, selected by its [`ModKind`].
    Modifier by ModKind {
        /// Lets the event through only once, on its `count`-th occurrence; later filters still apply
        /// to that occurrence, and the request never reports again. Any event kind.
        Count { count: i32 },
        /// Meant for conditions on an expression; the spec leaves it for future use and gives the ID no
        /// meaning.
        Conditional { expr_id: i32 },
        /// Only events in this thread. Not for class unloads.
        ThreadOnly { thread: ThreadId },
        /// Only events whose location (for class prepares the prepared type, for monitor waits the
        /// monitor's class) is this type or a subtype. Not for class unloads, thread starts or ends.
        ClassOnly { clazz: ReferenceTypeId },
        /// Only events whose class name matches a pattern that is exact or has one `*` at its start
        /// or end. Not for thread starts or ends.
        ClassMatch { class_pattern: String },
        /// Like `ClassMatch`, inverted: events whose class name matches are dropped.
        ClassExclude { class_pattern: String },
        /// Only events at this location (breakpoints, watchpoints, steps, exceptions).
        LocationOnly { loc: Location },
        /// Exception events only: of this type or a subtype (null: any), and whether caught and/or
        /// uncaught ones are wanted.
        ExceptionOnly { exception_or_null: ReferenceTypeId, caught: bool, uncaught: bool },
        /// Watchpoint events only: for this field of this declaring type.
        FieldOnly { declaring: ReferenceTypeId, field_id: FieldId },
        /// Step events only: which thread steps, and how far (size before depth on the wire, both
        /// `int`s).
        Step { thread: ThreadId, size: StepSize, depth: StepDepth },
        /// Only events whose `this` is this object (null matches static methods). Not for class
        /// prepares or unloads, thread starts or ends (JDWP 1.4).
        InstanceOnly { instance: ObjectId },
        /// Class prepare events only: types whose source name (from their SMAP) matches the pattern
        /// (JDWP 1.6, needs `canUseSourceNameFilters`).
        SourceNameMatch { source_name_pattern: String },
        /// Thread start and end events only: drops those of virtual threads (JDWP 19). Has no
        /// fields; other event kinds answer `ILLEGAL_ARGUMENT`.
        PlatformThreadsOnly {},
    }
}

command_set! {
    EventRequest = 15 {
        /// Creates an event request; the reply carries the ID events of this request will quote.
        /// VM start and death are reported even without a request.
        Set = 1 {
            out Set { event_kind: EventKind, suspend_policy: SuspendPolicy, modifiers: Vec<Modifier> }
            reply SetReply { request_id: i32 }
        }
        /// Removes the request of this kind with this ID; unknown IDs are silently ignored.
        /// Automatically generated events (ID 0) cannot be cleared.
        Clear = 2 {
            out Clear { event_kind: EventKind, request_id: i32 }
            reply ClearReply {}
        }
        /// Removes every breakpoint request.
        ClearAllBreakpoints = 3 {
            out ClearAllBreakpoints {}
            reply ClearAllBreakpointsReply {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::{decode_body, encode_body};
    use crate::ids::IdSizes;

    fn sizes() -> IdSizes {
        IdSizes { field_id: 4, method_id: 4, object_id: 4, reference_type_id: 4, frame_id: 4 }
    }

    #[test]
    fn step_request_layout() {
        let set = Set {
            event_kind: EventKind::SingleStep,
            suspend_policy: SuspendPolicy::EventThread,
            modifiers: vec![
                Modifier::Step { thread: ThreadId(3), size: StepSize::Line, depth: StepDepth::Over },
                Modifier::Count { count: 1 },
            ],
        };
        let bytes = encode_body(&set, sizes());
        #[rustfmt::skip]
        let expected = [
            1, 1, 0, 0, 0, 2,
            10, 0, 0, 0, 3, 0, 0, 0, 1, 0, 0, 0, 1,
            1, 0, 0, 0, 1,
        ];
        assert_eq!(bytes, expected);
        assert_eq!(decode_body::<Set>(&bytes, sizes()).unwrap(), set);
    }

    #[test]
    fn unknown_modifier_kind_is_rejected() {
        let bytes = [2, 0, 0, 0, 0, 1, 14];
        assert_eq!(
            decode_body::<Set>(&bytes, sizes()),
            Err(DecodeError::InvalidTag { what: "modifier kind", tag: 14 })
        );
    }

    #[test]
    fn platform_threads_only_is_a_bare_kind_byte() {
        let set = Set {
            event_kind: EventKind::ThreadStart,
            suspend_policy: SuspendPolicy::None,
            modifiers: vec![Modifier::PlatformThreadsOnly {}],
        };
        let bytes = encode_body(&set, sizes());
        assert_eq!(bytes, [6, 0, 0, 0, 0, 1, 13]);
        assert_eq!(decode_body::<Set>(&bytes, sizes()).unwrap(), set);
    }
}
