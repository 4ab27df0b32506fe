//! The event stream: [`EventQueue`] yields [`EventSet`]s as the VM reports them.

use std::time::Duration;

use jdwp_protocol::commands::event::{Composite, Event};
use jdwp_protocol::{Location, SuspendPolicy, ThreadId, codec};
use jdwp_transports::{Packet, PacketKind};
use tokio::sync::mpsc;

use crate::error::{JdiError, Result};
use crate::event::{EventExt, RequestHandle, is_gone};
use crate::mirrors::ThreadReference;
use crate::vm::VirtualMachine;

/// Events the VM reported together (one `Event.Composite`), and which threads they suspended.
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

impl EventSet {
    pub fn vm(&self) -> &VirtualMachine {
        &self.vm
    }

    /// The thread of the first event that has one: the thread an event-thread policy suspended.
    pub fn thread(&self) -> Option<ThreadReference> {
        self.thread_id().map(|t| self.vm.thread(t))
    }

    fn thread_id(&self) -> Option<ThreadId> {
        self.events.iter().find_map(EventExt::thread)
    }

    /// The location of the first event that has one (the events of a set share it, when they
    /// have one: the VM groups only events of the same place).
    pub fn location(&self) -> Option<Location> {
        self.events.iter().find_map(EventExt::location)
    }

    /// The request that `event` (one of this set's) was reported for, if this client made it.
    pub fn request_of(&self, event: &Event) -> Option<RequestHandle> {
        self.vm.event_request(event.request()?)
    }

    pub fn is_vm_start(&self) -> bool {
        self.events.iter().any(|e| matches!(e, Event::VmStart { .. }))
    }

    /// Whether the set holds a VM death event; the stream ends after it.
    pub fn is_vm_death(&self) -> bool {
        self.events.iter().any(|e| matches!(e, Event::VmDeath { .. }))
    }

    /// Resumes what the set suspended: all threads, its thread, or nothing.
    pub async fn resume(&self) -> Result<()> {
        resume(&self.vm, self.suspend_policy, self.thread_id()).await
    }
}

async fn resume(vm: &VirtualMachine, policy: SuspendPolicy, thread: Option<ThreadId>) -> Result<()> {
    match (policy, thread) {
        (SuspendPolicy::All, _) => vm.resume().await,
        (SuspendPolicy::EventThread, Some(t)) => vm.thread(t).resume().await,
        (SuspendPolicy::EventThread, None) | (SuspendPolicy::None, _) => Ok(()),
    }
}

/// The stream of event sets from the VM, in the order the VM sent them.
///
/// It starts with the VM start set (when the VM was started suspended with the agent waiting for
/// us), ends with a VM death set when the VM exits while connected, and then yields `None` once
/// the connection is closed: `None` is this client's `VMDisconnectEvent`, and also comes after
/// [`VirtualMachine::dispose`] or a transport failure.
pub struct EventQueue {
    vm: VirtualMachine,
    rx: mpsc::UnboundedReceiver<Packet>,
}

impl EventQueue {
    pub(crate) fn new(vm: VirtualMachine, rx: mpsc::UnboundedReceiver<Packet>) -> EventQueue {
        EventQueue { vm, rx }
    }

    /// The next event set; `None` once the VM has disconnected.
    ///
    /// Events of requests this client has disabled or deleted are dropped (they may still be on
    /// the wire when the request goes); a set left empty is resumed here and never seen.
    pub async fn next(&mut self) -> Option<Result<EventSet>> {
        loop {
            let packet = self.rx.recv().await?;
            match packet.kind {
                PacketKind::Command { set: 64, cmd: 100 } => {
                    let composite = match codec::decode_body::<Composite>(&packet.body, self.vm.id_sizes()) {
                        Ok(c) => c,
                        Err(source) => return Some(Err(JdiError::Decode { command: "Event.Composite", source })),
                    };
                    let Composite { suspend_policy, mut events } = composite;
                    let dropped_thread = self.vm.event_request_manager().screen(&mut events);
                    if events.is_empty() {
                        match resume(&self.vm, suspend_policy, dropped_thread).await {
                            Err(e) if !is_gone(&e) => return Some(Err(e)),
                            _ => continue,
                        }
                    }
                    return Some(Ok(EventSet { vm: self.vm.clone(), suspend_policy, events }));
                }
                PacketKind::Command { set, cmd } => {
                    tracing::warn!(set, cmd, "ignoring a command from the VM that is not an event");
                }
                PacketKind::Reply { .. } => {}
            }
        }
    }

    /// The next event set within `timeout`; the end of the stream is a `Disconnected` error.
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

    /// Resumes and discards sets until the stream ends (the VM exited or disconnected), within
    /// `timeout`. Returns whether a VM death event came first.
    pub async fn drain(&mut self, timeout: Duration) -> Result<bool> {
        let deadline = tokio::time::Instant::now() + timeout;
        let mut died = false;
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            match tokio::time::timeout(left, self.next()).await {
                Err(_) => return Err(JdiError::Timeout(format!("waiting {timeout:?} for the event stream to end"))),
                Ok(None) => return Ok(died),
                Ok(Some(set)) => {
                    let set = set?;
                    died |= set.is_vm_death();
                    match set.resume().await {
                        Err(e) if !is_gone(&e) => return Err(e),
                        _ => {}
                    }
                }
            }
        }
    }
}
