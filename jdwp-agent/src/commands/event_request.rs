//! `EventRequest` (command set 15): requests in the table, and the JVMTI state behind them
//! (breakpoints set, events enabled) kept in step with it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use jdwp_protocol::commands::event_request::*;
use jdwp_protocol::{ErrorCode, EventKind, Location};

use crate::agent::{Agent, lock};
use crate::dispatch::Entry;
use crate::events::filter::Request;
use crate::jni::Jni;
use crate::jvmti::sys::{self, jvmtiEvent};
use jdwp_protocol::commands as c;

/// How many requests use each breakpoint location (JVMTI allows one breakpoint per location).
static BREAKPOINTS: Mutex<Option<HashMap<(usize, i64), u32>>> = Mutex::new(None);

/// The JVMTI event behind a request kind, for the kinds this agent implements.
fn jvmti_event(kind: EventKind) -> Option<jvmtiEvent> {
    Some(match kind {
        EventKind::Breakpoint => sys::JVMTI_EVENT_BREAKPOINT,
        EventKind::ClassPrepare => sys::JVMTI_EVENT_CLASS_PREPARE,
        EventKind::ThreadStart => sys::JVMTI_EVENT_THREAD_START,
        EventKind::ThreadDeath => sys::JVMTI_EVENT_THREAD_END,
        // Always on: the automatic VM death event needs it.
        EventKind::VmDeath => return None,
        _ => return None,
    })
}

fn implemented(kind: EventKind) -> bool {
    matches!(
        kind,
        EventKind::Breakpoint
            | EventKind::ClassPrepare
            | EventKind::ThreadStart
            | EventKind::ThreadDeath
            | EventKind::VmDeath
    )
}

/// Enables a kind's JVMTI event exactly while some request needs it: idle costs nothing.
fn sync_event(agent: &Agent, kind: EventKind) {
    if let Some(event) = jvmti_event(kind) {
        let wanted = lock(&agent.requests).wants(kind);
        if let Err(e) = agent.jvmti.set_event_notification_mode(wanted, event, std::ptr::null_mut()) {
            tracing::warn!(?kind, %e, "could not change an event's notification mode");
        }
    }
}

/// Checks a breakpoint location and returns its method and index.
fn breakpoint_target(agent: &Agent, jni: Jni, loc: &Location) -> Result<(jni_sys::jmethodID, i64), ErrorCode> {
    let class = agent.class(jni, loc.class_id.into())?;
    let method = agent.method(loc.method_id)?;
    let declaring = agent.jvmti.get_method_declaring_class(method)?;
    let same = jni.is_same_object(class, declaring);
    jni.delete_local_ref(declaring);
    if !same {
        return Err(ErrorCode::INVALID_METHODID);
    }
    let (start, end) = agent.jvmti.get_method_location(method).map_err(|_| ErrorCode::INVALID_LOCATION)?;
    let index = i64::try_from(loc.index).map_err(|_| ErrorCode::INVALID_LOCATION)?;
    if index < start || index > end {
        return Err(ErrorCode::INVALID_LOCATION);
    }
    Ok((method, index))
}

pub fn set(agent: &Agent, cmd: Set) -> Result<SetReply, ErrorCode> {
    if !implemented(cmd.event_kind) {
        return Err(ErrorCode::NOT_IMPLEMENTED);
    }
    let jni = agent.jni()?;
    // Check everything the modifiers name before anything is set up.
    let mut breakpoint = None;
    for m in &cmd.modifiers {
        match m {
            Modifier::ThreadOnly { thread } => {
                agent.thread(jni, *thread)?;
            }
            Modifier::ClassOnly { clazz } => {
                agent.class(jni, *clazz)?;
            }
            Modifier::InstanceOnly { instance } if !instance.is_null() => {
                agent.non_null_object(jni, *instance)?;
            }
            Modifier::LocationOnly { loc } if cmd.event_kind == EventKind::Breakpoint => {
                breakpoint = Some(breakpoint_target(agent, jni, loc)?);
            }
            _ => {}
        }
    }
    if cmd.event_kind == EventKind::Breakpoint && breakpoint.is_none() {
        return Err(ErrorCode::INVALID_LOCATION);
    }
    if let Some((method, index)) = breakpoint {
        let first = {
            let mut bps = lock(&BREAKPOINTS);
            let count = bps.get_or_insert_with(HashMap::new).entry((method as usize, index)).or_insert(0);
            *count += 1;
            *count == 1
        };
        if first && let Err(e) = agent.jvmti.set_breakpoint(method, index) {
            release_breakpoint(agent, method as usize, index);
            return Err(e.into());
        }
    }
    let request = lock(&agent.requests).add(cmd.event_kind, cmd.suspend_policy, cmd.modifiers);
    let request = match request {
        Ok(r) => r,
        Err(e) => {
            if let Some((method, index)) = breakpoint {
                release_breakpoint(agent, method as usize, index);
            }
            return Err(e);
        }
    };
    sync_event(agent, cmd.event_kind);
    Ok(SetReply { request_id: request.id })
}

fn release_breakpoint(agent: &Agent, method: usize, index: i64) {
    let last = {
        let mut bps = lock(&BREAKPOINTS);
        let map = bps.get_or_insert_with(HashMap::new);
        match map.get_mut(&(method, index)) {
            Some(count) if *count > 1 => {
                *count -= 1;
                false
            }
            Some(_) => {
                map.remove(&(method, index));
                true
            }
            None => false,
        }
    };
    if last {
        let _ = agent.jvmti.clear_breakpoint(method as jni_sys::jmethodID, index);
    }
}

/// Undoes what requests set up (they are already out of the table, or are taken out here).
/// Safe from any thread: no lock is held across a VM call.
pub fn forget_requests(agent: &Agent, _jni: Jni, requests: &[Arc<Request>]) {
    let mut kinds = Vec::new();
    for r in requests {
        lock(&agent.requests).remove(r.kind, r.id);
        if r.kind == EventKind::Breakpoint
            && let Some(loc) = r.location()
        {
            release_breakpoint(agent, loc.method_id.0 as usize, loc.index as i64);
        }
        if !kinds.contains(&r.kind) {
            kinds.push(r.kind);
        }
    }
    for kind in kinds {
        sync_event(agent, kind);
    }
}

pub fn clear(agent: &Agent, cmd: Clear) -> Result<ClearReply, ErrorCode> {
    let removed = lock(&agent.requests).remove(cmd.event_kind, cmd.request_id);
    if let Some(r) = removed {
        forget_requests(agent, agent.jni()?, &[r]);
    }
    Ok(ClearReply {})
}

pub fn clear_all_breakpoints(agent: &Agent, _: ClearAllBreakpoints) -> Result<ClearAllBreakpointsReply, ErrorCode> {
    let removed = lock(&agent.requests).remove_kind(EventKind::Breakpoint);
    forget_requests(agent, agent.jni()?, &removed);
    Ok(ClearAllBreakpointsReply {})
}

/// This module's commands.
pub(super) static TABLE: &[Entry<Agent>] = crate::dispatch_table!(Agent;
    c::event_request::Set => set,
    c::event_request::Clear => clear,
    c::event_request::ClearAllBreakpoints => clear_all_breakpoints,
);
