//! `Event` (command set 64): the events the VM reports, always bundled in a `Composite` command.
//!
//! Unlike every other command, `Composite` travels from the VM to the debugger, and nothing answers
//! it. Each event quotes the ID of the request that produced it; VM start and death are also sent
//! unrequested, with request ID 0 (VM death then with suspend policy `None`; the policy of an
//! automatic VM start is up to the VM's configuration).

use super::prelude::*;

jdwp_select! {
    /// One event of a composite, selected by its [`EventKind`]. Kinds that are never reported
    /// (`FramePop`, `ClassLoad`, `ExceptionCatch`, `UserDefined`, `VmDisconnected`) are decoding
    /// errors.
    Event by EventKind {
        /// The VM finished initializing; no application code has run yet.
        VmStart { request_id: i32, thread: ThreadId },
        /// A step finished; the code at `location` has not run yet.
        SingleStep { request_id: i32, thread: ThreadId, location: Location },
        /// A breakpoint was hit; the code at `location` has not run yet.
        Breakpoint { request_id: i32, thread: ThreadId, location: Location },
        /// A method (native ones included) was entered; `location` is its first executable one.
        MethodEntry { request_id: i32, thread: ThreadId, location: Location },
        /// A method returned normally (not by an exception); `location` is the last one executed.
        MethodExit { request_id: i32, thread: ThreadId, location: Location },
        /// Like `MethodExit`, with the value being returned (JDWP 1.6).
        MethodExitWithReturnValue { request_id: i32, thread: ThreadId, location: Location, value: Value },
        /// The thread is about to block on a monitor another thread holds (JDWP 1.6).
        MonitorContendedEnter { request_id: i32, thread: ThreadId, object: TaggedObjectId, location: Location },
        /// The thread got a monitor it had blocked on (JDWP 1.6).
        MonitorContendedEntered { request_id: i32, thread: ThreadId, object: TaggedObjectId, location: Location },
        /// The thread is about to `wait` on a monitor, for `timeout` milliseconds (JDWP 1.6).
        MonitorWait { request_id: i32, thread: ThreadId, object: TaggedObjectId, location: Location, timeout: i64 },
        /// The thread finished waiting on a monitor, by timeout or not (JDWP 1.6).
        MonitorWaited { request_id: i32, thread: ThreadId, object: TaggedObjectId, location: Location, timed_out: bool },
        /// An exception was thrown at `location` (the first non-native one when thrown natively);
        /// `catch_location` is where it will be caught, as far as the VM can tell at throw time
        /// (native frames may catch it first). Uncaught: null class and method IDs; HotSpot sends
        /// them with type tag `Class`, where the spec just says "0".
        Exception {
            request_id: i32,
            thread: ThreadId,
            location: Location,
            exception: TaggedObjectId,
            catch_location: Location,
        },
        /// A thread is starting (sent by the new thread, so other events of it may come first).
        ThreadStart { request_id: i32, thread: ThreadId },
        /// A thread is ending (sent by the thread just before it ends).
        ThreadDeath { request_id: i32, thread: ThreadId },
        /// A type was prepared. `thread` is null when a debugger thread of the VM prepared it.
        ClassPrepare {
            request_id: i32,
            thread: ThreadId,
            ref_type_tag: TypeTag,
            type_id: ReferenceTypeId,
            signature: String,
            status: i32,
        },
        /// A type was unloaded; only its signature is left to report.
        ClassUnload { request_id: i32, signature: String },
        /// A watched field is about to be read; `object` is null for a static field.
        FieldAccess {
            request_id: i32,
            thread: ThreadId,
            location: Location,
            ref_type_tag: TypeTag,
            type_id: ReferenceTypeId,
            field_id: FieldId,
            object: TaggedObjectId,
        },
        /// A watched field is about to be written with `value_to_be`; `object` is null for a
        /// static field.
        FieldModification {
            request_id: i32,
            thread: ThreadId,
            location: Location,
            ref_type_tag: TypeTag,
            type_id: ReferenceTypeId,
            field_id: FieldId,
            object: TaggedObjectId,
            value_to_be: Value,
        },
        /// The VM is ending.
        VmDeath { request_id: i32 },
    }
}

command_set! {
    Event = 64 {
        /// One or more events that happened together, and which threads they suspended. Sent by
        /// the VM; there is never a reply (`CompositeReply` exists only to fill the table).
        Composite = 100 {
            out Composite { suspend_policy: SuspendPolicy, events: Vec<Event> }
            reply CompositeReply {}
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
    fn breakpoint_composite_decodes() {
        #[rustfmt::skip]
        let body = [
            1,                      // suspend policy: event thread
            0, 0, 0, 1,             // one event
            2,                      // breakpoint
            0, 0, 0, 5,             // request 5
            0, 0, 0, 0x21,          // thread
            1,                      // location: class
            0, 0, 0, 0x30,          //   class ID
            0, 0, 0, 0x40,          //   method ID
            0, 0, 0, 0, 0, 0, 0, 7, //   index
        ];
        let composite: Composite = decode_body(&body, sizes()).unwrap();
        assert_eq!(composite.suspend_policy, SuspendPolicy::EventThread);
        assert_eq!(
            composite.events,
            [Event::Breakpoint {
                request_id: 5,
                thread: ThreadId(0x21),
                location: Location {
                    type_tag: TypeTag::Class,
                    class_id: ClassId(0x30),
                    method_id: MethodId(0x40),
                    index: 7
                },
            }]
        );
        assert_eq!(composite.events[0].kind(), EventKind::Breakpoint);
        assert_eq!(encode_body(&composite, sizes()), body);
    }

    #[test]
    fn vm_death_and_class_unload_layouts() {
        let composite = Composite {
            suspend_policy: SuspendPolicy::None,
            events: vec![
                Event::VmDeath { request_id: 0 },
                Event::ClassUnload { request_id: 3, signature: "LA;".into() },
            ],
        };
        let bytes = encode_body(&composite, sizes());
        #[rustfmt::skip]
        let expected = [
            0, 0, 0, 0, 2,
            99, 0, 0, 0, 0,
            9, 0, 0, 0, 3, 0, 0, 0, 3, b'L', b'A', b';',
        ];
        assert_eq!(bytes, expected);
        assert_eq!(decode_body::<Composite>(&bytes, sizes()).unwrap(), composite);
    }

    #[test]
    fn uncaught_exception_has_a_null_catch_location() {
        // What HotSpot sends when no handler is found: tag `Class`, null class and method.
        let uncaught =
            Location { type_tag: TypeTag::Class, class_id: ClassId::NULL, method_id: MethodId::NULL, index: 0 };
        let event = Event::Exception {
            request_id: 1,
            thread: ThreadId(2),
            location: Location { type_tag: TypeTag::Class, class_id: ClassId(3), method_id: MethodId(4), index: 5 },
            exception: TaggedObjectId { tag: Tag::Object, id: ObjectId(6) },
            catch_location: uncaught,
        };
        let bytes = encode_body(&event, sizes());
        assert_eq!(bytes[bytes.len() - 17..], [1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(decode_body::<Event>(&bytes, sizes()).unwrap(), event);
    }

    #[test]
    fn kinds_never_reported_are_rejected() {
        for kind in [EventKind::FramePop, EventKind::ClassLoad, EventKind::ExceptionCatch, EventKind::UserDefined] {
            let body = [2, 0, 0, 0, 1, kind as u8, 0, 0, 0, 0];
            assert_eq!(
                decode_body::<Composite>(&body, sizes()),
                Err(DecodeError::InvalidTag { what: "Event", tag: kind as u8 })
            );
        }
    }
}
