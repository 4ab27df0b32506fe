//! Events: requests (what to report), the queue (what was reported) and event sets.
//!
//! Events are the protocol's own [`Event`] values, decoded straight from the wire; [`EventExt`]
//! reads the fields most kinds share. The semantics this client chose, where JDWP or JDI leave
//! room:
//!
//! - **Requests** are registered with [`VirtualMachine::create_event_request`](crate::VirtualMachine::create_event_request) (disabled) and then
//!   enabled, disabled and deleted through their [`RequestHandle`]; each enable is a new VM request
//!   with a new [`RequestId`]. [`VirtualMachine::enable_request`](crate::VirtualMachine::enable_request) does create-and-enable in one go.
//!   Requests are checked against the spec's filter table before they are sent.
//! - **Withdrawn requests stay quiet**: once disabled or deleted, their events still in flight are
//!   dropped by the queue, and a set left empty is resumed (JDI does the same).
//! - **One-shot requests expire**: after the event of a request with a count filter, the VM drops
//!   the request; its handle turns [`RequestState::Expired`], and enabling it again re-arms it.
//! - **Steps are one-shot**: a step request without its own count filter is sent with a final
//!   `Count 1`, so it reports one step and expires (a bare JDWP step keeps reporting every line
//!   until cleared). A thread can have one enabled step request at a time.
//! - **The stream ends with the connection**: VM start and VM death arrive as ordinary sets (with
//!   a VM death request, its event and the automatic one share one set); after that
//!   [`EventQueue::next`] returns `None`, this client's form of JDI's `VMDisconnectEvent`.
//! - **Grouping is the VM's**: events of one thread at one location (breakpoint, step, method
//!   entry and exit) come in one set, as do events of one occurrence (one exception, one class
//!   prepare).

mod manager;
mod queue;
mod request;

pub use manager::{EventRequestManager, RequestHandle, RequestId, RequestState};
pub use queue::{EventQueue, EventSet};
pub use request::EventRequest;

use jdwp_protocol::commands::event::Event;
use jdwp_protocol::{Location, ObjectId, ThreadId};

/// What most event kinds share, read without matching on each variant.
pub trait EventExt {
    /// The ID of the request that produced the event; 0 for automatic events (VM start, death).
    fn request_id(&self) -> i32;

    /// The request as the VM numbered it; `None` for automatic events.
    fn request(&self) -> Option<RequestId>;

    /// The event's thread; `None` for class unloads, VM death, and class prepares done by a VM
    /// thread the spec reports as null.
    fn thread(&self) -> Option<ThreadId>;

    /// Where it happened, for events that have a location. Native code (such as `Object.wait`,
    /// where monitor wait events are located) has index `u64::MAX`, the spec's -1.
    fn location(&self) -> Option<Location>;

    /// Where an exception will be caught; `None` for other events and uncaught exceptions.
    fn catch_location(&self) -> Option<Location>;

    /// The object involved: the exception, the monitor, or the object whose field is accessed
    /// (`None` for static fields and other events).
    fn object(&self) -> Option<ObjectId>;
}

impl EventExt for Event {
    fn request_id(&self) -> i32 {
        match self {
            Event::VmStart { request_id, .. }
            | Event::SingleStep { request_id, .. }
            | Event::Breakpoint { request_id, .. }
            | Event::MethodEntry { request_id, .. }
            | Event::MethodExit { request_id, .. }
            | Event::MethodExitWithReturnValue { request_id, .. }
            | Event::MonitorContendedEnter { request_id, .. }
            | Event::MonitorContendedEntered { request_id, .. }
            | Event::MonitorWait { request_id, .. }
            | Event::MonitorWaited { request_id, .. }
            | Event::Exception { request_id, .. }
            | Event::ThreadStart { request_id, .. }
            | Event::ThreadDeath { request_id, .. }
            | Event::ClassPrepare { request_id, .. }
            | Event::ClassUnload { request_id, .. }
            | Event::FieldAccess { request_id, .. }
            | Event::FieldModification { request_id, .. }
            | Event::VmDeath { request_id } => *request_id,
        }
    }

    fn request(&self) -> Option<RequestId> {
        match self.request_id() {
            0 => None,
            id => Some(RequestId { kind: self.kind(), id }),
        }
    }

    fn thread(&self) -> Option<ThreadId> {
        let thread = match self {
            Event::VmStart { thread, .. }
            | Event::SingleStep { thread, .. }
            | Event::Breakpoint { thread, .. }
            | Event::MethodEntry { thread, .. }
            | Event::MethodExit { thread, .. }
            | Event::MethodExitWithReturnValue { thread, .. }
            | Event::MonitorContendedEnter { thread, .. }
            | Event::MonitorContendedEntered { thread, .. }
            | Event::MonitorWait { thread, .. }
            | Event::MonitorWaited { thread, .. }
            | Event::Exception { thread, .. }
            | Event::ThreadStart { thread, .. }
            | Event::ThreadDeath { thread, .. }
            | Event::ClassPrepare { thread, .. }
            | Event::FieldAccess { thread, .. }
            | Event::FieldModification { thread, .. } => *thread,
            Event::ClassUnload { .. } | Event::VmDeath { .. } => return None,
        };
        Some(thread).filter(|t| !t.is_null())
    }

    fn location(&self) -> Option<Location> {
        match self {
            Event::SingleStep { location, .. }
            | Event::Breakpoint { location, .. }
            | Event::MethodEntry { location, .. }
            | Event::MethodExit { location, .. }
            | Event::MethodExitWithReturnValue { location, .. }
            | Event::MonitorContendedEnter { location, .. }
            | Event::MonitorContendedEntered { location, .. }
            | Event::MonitorWait { location, .. }
            | Event::MonitorWaited { location, .. }
            | Event::Exception { location, .. }
            | Event::FieldAccess { location, .. }
            | Event::FieldModification { location, .. } => Some(*location),
            Event::VmStart { .. }
            | Event::ThreadStart { .. }
            | Event::ThreadDeath { .. }
            | Event::ClassPrepare { .. }
            | Event::ClassUnload { .. }
            | Event::VmDeath { .. } => None,
        }
    }

    fn catch_location(&self) -> Option<Location> {
        match self {
            // Uncaught: null class and method (HotSpot still tags the location `Class`).
            Event::Exception { catch_location, .. } if !catch_location.class_id.is_null() => Some(*catch_location),
            _ => None,
        }
    }

    fn object(&self) -> Option<ObjectId> {
        let object = match self {
            Event::MonitorContendedEnter { object, .. }
            | Event::MonitorContendedEntered { object, .. }
            | Event::MonitorWait { object, .. }
            | Event::MonitorWaited { object, .. }
            | Event::FieldAccess { object, .. }
            | Event::FieldModification { object, .. }
            | Event::Exception { exception: object, .. } => object.id,
            _ => return None,
        };
        Some(object).filter(|o| !o.is_null())
    }
}

fn is_gone(e: &crate::JdiError) -> bool {
    matches!(e, crate::JdiError::Disconnected { .. })
}
