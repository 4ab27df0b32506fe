//! Events: requests (what to report), the queue (what was reported) and event sets.

use std::sync::Mutex;
use std::time::Duration;

use jdwp_protocol::commands::event::{Composite, Event};
use jdwp_protocol::commands::event_request::{self as er, Modifier};
use jdwp_protocol::{
    EventKind, FieldId, Location, ObjectId, ReferenceTypeId, StepDepth, StepSize, SuspendPolicy, ThreadId, codec,
};
use jdwp_transports::{Packet, PacketKind};
use tokio::sync::mpsc;

use crate::error::{JdiError, Result};
use crate::mirrors::ThreadReference;
use crate::vm::VirtualMachine;

/// Describes an event request before it is sent: kind, suspend policy and filters (in order).
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

    pub fn breakpoint(location: Location) -> EventRequest {
        EventRequest::new(EventKind::Breakpoint).with(Modifier::LocationOnly { loc: location })
    }

    pub fn step(thread: ThreadId, size: StepSize, depth: StepDepth) -> EventRequest {
        EventRequest::new(EventKind::SingleStep).with(Modifier::Step { thread, size, depth })
    }

    pub fn class_prepare(class_pattern: &str) -> EventRequest {
        EventRequest::new(EventKind::ClassPrepare).with(Modifier::ClassMatch { class_pattern: class_pattern.into() })
    }

    /// Exceptions of `exception` or a subtype (`None`: all), caught and/or uncaught.
    pub fn exception(exception: Option<ReferenceTypeId>, caught: bool, uncaught: bool) -> EventRequest {
        let exception_or_null = exception.unwrap_or(ReferenceTypeId::NULL);
        EventRequest::new(EventKind::Exception).with(Modifier::ExceptionOnly { exception_or_null, caught, uncaught })
    }

    pub fn field_access(declaring: ReferenceTypeId, field_id: FieldId) -> EventRequest {
        EventRequest::new(EventKind::FieldAccess).with(Modifier::FieldOnly { declaring, field_id })
    }

    pub fn field_modification(declaring: ReferenceTypeId, field_id: FieldId) -> EventRequest {
        EventRequest::new(EventKind::FieldModification).with(Modifier::FieldOnly { declaring, field_id })
    }

    pub fn suspend(mut self, policy: SuspendPolicy) -> EventRequest {
        self.suspend_policy = policy;
        self
    }

    /// Adds a filter; filters apply in the order added.
    pub fn with(mut self, modifier: Modifier) -> EventRequest {
        self.modifiers.push(modifier);
        self
    }

    pub fn count(self, count: i32) -> EventRequest {
        self.with(Modifier::Count { count })
    }

    pub fn thread(self, thread: ThreadId) -> EventRequest {
        self.with(Modifier::ThreadOnly { thread })
    }

    pub fn class_only(self, clazz: ReferenceTypeId) -> EventRequest {
        self.with(Modifier::ClassOnly { clazz })
    }

    pub fn class_match(self, pattern: &str) -> EventRequest {
        self.with(Modifier::ClassMatch { class_pattern: pattern.into() })
    }

    pub fn class_exclude(self, pattern: &str) -> EventRequest {
        self.with(Modifier::ClassExclude { class_pattern: pattern.into() })
    }

    pub fn instance(self, instance: ObjectId) -> EventRequest {
        self.with(Modifier::InstanceOnly { instance })
    }
}

/// An enabled request, as the VM numbered it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RequestId {
    pub kind: EventKind,
    pub id: i32,
}

/// Keeps track of the requests this client has enabled.
#[derive(Default)]
pub struct EventRequestManager {
    active: Mutex<Vec<(RequestId, EventRequest)>>,
}

impl EventRequestManager {
    /// The enabled requests, oldest first.
    pub fn requests(&self) -> Vec<(RequestId, EventRequest)> {
        self.active.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

impl VirtualMachine {
    /// Sends a request to the VM (JDI's `enable()`).
    pub async fn enable_request(&self, request: &EventRequest) -> Result<RequestId> {
        let cmd = er::Set {
            event_kind: request.kind,
            suspend_policy: request.suspend_policy,
            modifiers: request.modifiers.clone(),
        };
        let id = RequestId { kind: request.kind, id: self.send(&cmd).await?.request_id };
        self.inner.requests.active.lock().unwrap_or_else(|e| e.into_inner()).push((id, request.clone()));
        Ok(id)
    }

    /// Withdraws a request (JDI's `disable()`/`deleteEventRequest`).
    pub async fn disable_request(&self, id: RequestId) -> Result<()> {
        self.send(&er::Clear { event_kind: id.kind, request_id: id.id }).await?;
        self.inner.requests.active.lock().unwrap_or_else(|e| e.into_inner()).retain(|(r, _)| *r != id);
        Ok(())
    }

    pub async fn clear_all_breakpoints(&self) -> Result<()> {
        self.send(&er::ClearAllBreakpoints {}).await?;
        self.inner
            .requests
            .active
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|(r, _)| r.kind != EventKind::Breakpoint);
        Ok(())
    }
}

/// Events reported together, with the threads they suspended.
#[derive(Clone)]
pub struct EventSet {
    vm: VirtualMachine,
    pub suspend_policy: SuspendPolicy,
    pub events: Vec<Event>,
}

impl std::fmt::Debug for EventSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventSet").field("suspend_policy", &self.suspend_policy).field("events", &self.events).finish()
    }
}

/// The request ID of an event (0 for events nobody requested, like VM start).
pub fn request_id(event: &Event) -> i32 {
    match event {
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

/// The thread an event happened in, if it has one.
pub fn event_thread(event: &Event) -> Option<ThreadId> {
    match event {
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
        | Event::FieldModification { thread, .. } => Some(*thread),
        Event::ClassUnload { .. } | Event::VmDeath { .. } => None,
    }
}

/// The location of an event, if it has one.
pub fn event_location(event: &Event) -> Option<Location> {
    match event {
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
        _ => None,
    }
}

impl EventSet {
    /// The thread of the first event that has one.
    pub fn thread(&self) -> Option<ThreadReference> {
        self.events.iter().find_map(event_thread).map(|t| self.vm.thread(t))
    }

    /// Whether the set holds a VM death event.
    pub fn is_vm_death(&self) -> bool {
        self.events.iter().any(|e| matches!(e, Event::VmDeath { .. }))
    }

    /// Resumes what the set suspended: all threads, its thread, or nothing.
    pub async fn resume(&self) -> Result<()> {
        match self.suspend_policy {
            SuspendPolicy::All => self.vm.resume().await,
            SuspendPolicy::EventThread => match self.thread() {
                Some(t) => t.resume().await,
                None => Ok(()),
            },
            SuspendPolicy::None => Ok(()),
        }
    }
}

/// The stream of event sets from the VM. Ends (`None`) when the connection closes.
pub struct EventQueue {
    vm: VirtualMachine,
    rx: mpsc::UnboundedReceiver<Packet>,
}

impl EventQueue {
    pub(crate) fn new(vm: VirtualMachine, rx: mpsc::UnboundedReceiver<Packet>) -> EventQueue {
        EventQueue { vm, rx }
    }

    /// The next event set; `None` once the VM has disconnected.
    pub async fn next(&mut self) -> Option<Result<EventSet>> {
        loop {
            let packet = self.rx.recv().await?;
            match packet.kind {
                PacketKind::Command { set: 64, cmd: 100 } => {
                    let sizes = self.vm.id_sizes();
                    return Some(
                        codec::decode_body::<Composite>(&packet.body, sizes)
                            .map(|c| EventSet {
                                vm: self.vm.clone(),
                                suspend_policy: c.suspend_policy,
                                events: c.events,
                            })
                            .map_err(|source| JdiError::Decode { command: "Event.Composite", source }),
                    );
                }
                PacketKind::Command { set, cmd } => {
                    tracing::warn!(set, cmd, "ignoring a command from the VM that is not an event");
                }
                PacketKind::Reply { .. } => {}
            }
        }
    }

    /// The next event set within `timeout`; a disconnect or timeout is an error.
    pub async fn next_within(&mut self, timeout: Duration) -> Result<EventSet> {
        match tokio::time::timeout(timeout, self.next()).await {
            Ok(Some(set)) => set,
            Ok(None) => Err(JdiError::Disconnected { reason: Some("the event stream ended".into()) }),
            Err(_) => Err(JdiError::Timeout(format!("waiting {timeout:?} for an event"))),
        }
    }

    /// Waits for the next set containing an event that `pred` accepts, resuming (per policy)
    /// every set in between. Gives up after `timeout`.
    pub async fn wait_for(&mut self, timeout: Duration, mut pred: impl FnMut(&Event) -> bool) -> Result<EventSet> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            let set = self.next_within(left).await?;
            if set.events.iter().any(&mut pred) {
                return Ok(set);
            }
            set.resume().await?;
        }
    }
}
