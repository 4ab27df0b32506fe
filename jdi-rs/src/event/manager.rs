//! The request registry: which requests exist, their state, and how the VM numbered them.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};

use jdwp_protocol::commands::event::Event;
use jdwp_protocol::commands::event_request as er;
use jdwp_protocol::{EventKind, SuspendPolicy, ThreadId};

use crate::error::{JdiError, Result};
use crate::event::{EventExt, EventRequest, is_gone};
use crate::vm::VirtualMachine;

/// An enabled request, as the VM numbered it; events quote `id`. Each enable gets a new number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RequestId {
    pub kind: EventKind,
    pub id: i32,
}

/// Where a request stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestState {
    /// Known here only; the VM reports nothing for it.
    Disabled,
    /// Installed in the VM under this ID.
    Enabled(RequestId),
    /// A one-shot request (count filter, step) that has reported its event; the VM dropped it.
    /// Enabling it again re-arms it.
    Expired(RequestId),
    /// Gone for good.
    Deleted,
}

/// The client's record of its event requests (JDI's `EventRequestManager`). Reach it through
/// [`VirtualMachine::event_request_manager`]; the handle-returning queries live on
/// [`VirtualMachine`] ([`VirtualMachine::event_requests`] and friends).
#[derive(Default)]
pub struct EventRequestManager {
    registry: Mutex<Registry>,
}

#[derive(Default)]
struct Registry {
    /// Every request not deleted, oldest first.
    entries: Vec<Arc<Entry>>,
    /// Requests by the ID the VM gave them (enabled or expired).
    by_id: HashMap<RequestId, Arc<Entry>>,
    /// IDs this client has withdrawn: events of theirs still in flight are dropped, as JDI does.
    withdrawn: HashSet<RequestId>,
    /// IDs seen in events before their `Set` reply was processed (or never ours): an enable that
    /// gets one of these for a one-shot request knows it has already expired.
    early: HashSet<RequestId>,
}

struct Entry {
    request: EventRequest,
    /// Guarded by the registry lock (always taken first).
    state: Mutex<RequestState>,
    /// Serializes enable/disable/delete of one request, so two enables cannot install it twice.
    op: tokio::sync::Mutex<()>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl EventRequestManager {
    fn registry(&self) -> MutexGuard<'_, Registry> {
        lock(&self.registry)
    }

    /// The enabled requests with their IDs, oldest first.
    pub fn requests(&self) -> Vec<(RequestId, EventRequest)> {
        let reg = self.registry();
        reg.entries
            .iter()
            .filter_map(|e| match *lock(&e.state) {
                RequestState::Enabled(id) => Some((id, e.request.clone())),
                _ => None,
            })
            .collect()
    }

    /// How many requests exist (in any state but deleted).
    pub fn len(&self) -> usize {
        self.registry().entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Applies the client-side rules to a decoded event set, in place: drops events of withdrawn
    /// requests and marks one-shot requests expired. Returns the thread of the first dropped event
    /// (to resume it if nothing is left of an event-thread set).
    pub(crate) fn screen(&self, events: &mut Vec<Event>) -> Option<ThreadId> {
        if events.iter().all(|e| e.request_id() == 0) {
            return None;
        }
        let mut reg = self.registry();
        let reg = &mut *reg;
        let mut dropped_thread = None;
        events.retain(|event| {
            let Some(id) = event.request() else { return true };
            if reg.withdrawn.contains(&id) {
                tracing::trace!(?id, "dropping an event of a withdrawn request");
                dropped_thread = dropped_thread.or(event.thread());
                return false;
            }
            // Expired IDs stay in `by_id`, so their events still resolve to their request.
            match reg.by_id.get(&id) {
                Some(entry) if entry.request.is_one_shot() => {
                    let mut state = lock(&entry.state);
                    if *state == RequestState::Enabled(id) {
                        *state = RequestState::Expired(id);
                    }
                }
                Some(_) => {}
                None => {
                    reg.early.insert(id);
                }
            }
            true
        });
        dropped_thread
    }

    fn entry(&self, id: RequestId) -> Option<Arc<Entry>> {
        self.registry().by_id.get(&id).cloned()
    }
}

/// A request registered with the client (JDI's `EventRequest` object): its identity survives
/// disabling and re-enabling, while the VM's [`RequestId`] changes each time. Cheap to clone;
/// clones are the same request.
#[derive(Clone)]
pub struct RequestHandle {
    vm: VirtualMachine,
    entry: Arc<Entry>,
}

impl PartialEq for RequestHandle {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.entry, &other.entry)
    }
}

impl Eq for RequestHandle {}

impl std::fmt::Debug for RequestHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestHandle").field("state", &self.state()).field("request", &self.entry.request).finish()
    }
}

impl RequestHandle {
    /// What the request asks for (as given; a step's implicit final count is not shown).
    pub fn request(&self) -> &EventRequest {
        &self.entry.request
    }

    pub fn kind(&self) -> EventKind {
        self.entry.request.kind
    }

    pub fn suspend_policy(&self) -> SuspendPolicy {
        self.entry.request.suspend_policy
    }

    pub fn state(&self) -> RequestState {
        *lock(&self.entry.state)
    }

    pub fn is_enabled(&self) -> bool {
        matches!(self.state(), RequestState::Enabled(_))
    }

    /// The VM's ID while enabled (or expired): the ID its events quote.
    pub fn id(&self) -> Option<RequestId> {
        match self.state() {
            RequestState::Enabled(id) | RequestState::Expired(id) => Some(id),
            _ => None,
        }
    }

    /// Whether `event` was reported for this request (in its current enabling).
    pub fn matches(&self, event: &Event) -> bool {
        self.id().is_some_and(|id| event.request() == Some(id))
    }

    /// Installs the request in the VM (`EventRequest.Set`). No-op when enabled; re-arms an expired
    /// request. Fails for a deleted request, an invalid one, or a second step of one thread.
    pub async fn enable(&self) -> Result<RequestId> {
        let _op = self.entry.op.lock().await;
        match self.state() {
            RequestState::Enabled(id) => return Ok(id),
            RequestState::Deleted => return Err(deleted()),
            RequestState::Disabled | RequestState::Expired(_) => {}
        }
        let request = &self.entry.request;
        request.validate()?;
        let manager = self.vm.event_request_manager();
        if let Some(thread) = request.step_thread() {
            // HotSpot silently replaces a thread's step with a newer one; JDI refuses the duplicate.
            let busy = manager.registry().entries.iter().any(|e| {
                !Arc::ptr_eq(e, &self.entry)
                    && e.request.step_thread() == Some(thread)
                    && matches!(*lock(&e.state), RequestState::Enabled(_))
            });
            if busy {
                return Err(JdiError::InvalidArgument(format!(
                    "thread {:#x} already has an enabled step request",
                    thread.0
                )));
            }
        }
        let set = er::Set {
            event_kind: request.kind,
            suspend_policy: request.suspend_policy,
            modifiers: request.wire_modifiers(self.vm.version().await?.jdwp_major),
        };
        let id = RequestId { kind: request.kind, id: self.vm.send(&set).await?.request_id };
        let mut reg = manager.registry();
        if let RequestState::Expired(old) = self.state() {
            reg.by_id.remove(&old);
        }
        reg.by_id.insert(id, self.entry.clone());
        let fired = reg.early.remove(&id);
        *lock(&self.entry.state) =
            if fired && request.is_one_shot() { RequestState::Expired(id) } else { RequestState::Enabled(id) };
        Ok(id)
    }

    /// Withdraws the request from the VM (`EventRequest.Clear`) but keeps it for a later
    /// [`RequestHandle::enable`]. Events of it not yet taken from the queue are dropped.
    pub async fn disable(&self) -> Result<()> {
        let _op = self.entry.op.lock().await;
        match self.state() {
            RequestState::Deleted => Err(deleted()),
            RequestState::Disabled => Ok(()),
            RequestState::Enabled(id) | RequestState::Expired(id) => {
                self.withdraw(id).await?;
                *lock(&self.entry.state) = RequestState::Disabled;
                Ok(())
            }
        }
    }

    /// [`RequestHandle::enable`] or [`RequestHandle::disable`].
    pub async fn set_enabled(&self, enabled: bool) -> Result<()> {
        if enabled { self.enable().await.map(drop) } else { self.disable().await }
    }

    /// Withdraws the request and forgets it (JDI's `deleteEventRequest`). Deleting twice is fine.
    pub async fn delete(&self) -> Result<()> {
        let _op = self.entry.op.lock().await;
        match self.state() {
            RequestState::Deleted => return Ok(()),
            RequestState::Disabled => {}
            RequestState::Enabled(id) | RequestState::Expired(id) => self.withdraw(id).await?,
        }
        let mut reg = self.vm.event_request_manager().registry();
        reg.entries.retain(|e| !Arc::ptr_eq(e, &self.entry));
        *lock(&self.entry.state) = RequestState::Deleted;
        Ok(())
    }

    /// Clears `id` in the VM (also when expired: the VM ignores unknown IDs) and stops routing it.
    async fn withdraw(&self, id: RequestId) -> Result<()> {
        let manager = self.vm.event_request_manager();
        // Withdrawn before the command goes out, so no event of it slips through meanwhile.
        manager.registry().withdrawn.insert(id);
        match self.vm.send(&er::Clear { event_kind: id.kind, request_id: id.id }).await {
            // A VM that is gone reports nothing more: the request is as good as cleared.
            Err(e) if !is_gone(&e) => {
                manager.registry().withdrawn.remove(&id);
                Err(e)
            }
            _ => {
                manager.registry().by_id.remove(&id);
                Ok(())
            }
        }
    }
}

fn deleted() -> JdiError {
    JdiError::InvalidArgument("the event request was deleted".into())
}

/// Event requests: creating, enabling and listing them.
impl VirtualMachine {
    /// Registers a request, disabled (JDI's `create...Request`); enable it with
    /// [`RequestHandle::enable`].
    pub fn create_event_request(&self, request: EventRequest) -> RequestHandle {
        let entry =
            Arc::new(Entry { request, state: Mutex::new(RequestState::Disabled), op: tokio::sync::Mutex::new(()) });
        self.event_request_manager().registry().entries.push(entry.clone());
        RequestHandle { vm: self.clone(), entry }
    }

    /// Registers and enables a request in one go; returns the ID its events will quote.
    pub async fn enable_request(&self, request: &EventRequest) -> Result<RequestId> {
        let handle = self.create_event_request(request.clone());
        match handle.enable().await {
            Ok(id) => Ok(id),
            Err(e) => {
                let _ = handle.delete().await;
                Err(e)
            }
        }
    }

    /// Deletes the request the VM knows as `id` (an ID from [`VirtualMachine::enable_request`] or
    /// [`RequestHandle::id`]). IDs this client does not know are cleared in the VM all the same.
    pub async fn disable_request(&self, id: RequestId) -> Result<()> {
        match self.event_request(id) {
            Some(handle) => handle.delete().await,
            None => {
                self.event_request_manager().registry().withdrawn.insert(id);
                self.send(&er::Clear { event_kind: id.kind, request_id: id.id }).await.map(drop)
            }
        }
    }

    /// Removes every breakpoint from the VM and deletes the breakpoint requests
    /// (JDI's `deleteAllBreakpoints`).
    pub async fn clear_all_breakpoints(&self) -> Result<()> {
        self.send(&er::ClearAllBreakpoints {}).await?;
        let mut reg = self.event_request_manager().registry();
        let reg = &mut *reg;
        reg.entries.retain(|e| {
            if e.request.kind != EventKind::Breakpoint {
                return true;
            }
            let mut state = lock(&e.state);
            if let RequestState::Enabled(id) | RequestState::Expired(id) = *state {
                reg.withdrawn.insert(id);
                reg.by_id.remove(&id);
            }
            *state = RequestState::Deleted;
            false
        });
        Ok(())
    }

    /// Every request not deleted, enabled or not, oldest first.
    pub fn event_requests(&self) -> Vec<RequestHandle> {
        let entries = self.event_request_manager().registry().entries.clone();
        entries.into_iter().map(|entry| RequestHandle { vm: self.clone(), entry }).collect()
    }

    /// The requests of one kind (JDI's `breakpointRequests()`, `stepRequests()`...).
    pub fn event_requests_of(&self, kind: EventKind) -> Vec<RequestHandle> {
        self.event_requests().into_iter().filter(|h| h.kind() == kind).collect()
    }

    /// The request the VM knows as `id`, if this client made it.
    pub fn event_request(&self, id: RequestId) -> Option<RequestHandle> {
        let entry = self.event_request_manager().entry(id)?;
        Some(RequestHandle { vm: self.clone(), entry })
    }
}
