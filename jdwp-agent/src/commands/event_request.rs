//! `EventRequest` (command set 15): requests in the table, and the JVMTI state behind them
//! (breakpoints, field watches, steps, enabled events) kept in step with it.
//!
//! All changes to that JVMTI state happen under [`crate::events::setup`], on agent threads: here
//! (the session thread) and in [`forget_requests`] (also run by the event helper for requests a
//! count expired).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use jdwp_protocol::commands::event_request::*;
use jdwp_protocol::{ErrorCode, EventKind, FieldId, Location};
use jni_sys::{jclass, jfieldID, jmethodID};

use crate::agent::{Agent, FieldScope, lock};
use crate::dispatch::Entry;
use crate::events::breakpoints::{self, Watch};
use crate::events::filter::Request;
use crate::events::{entry, modes, unload};
use crate::jni::Jni;
use crate::jvmti::sys::jthread;
use jdwp_protocol::commands as c;

/// What a request set up in JVMTI, to be undone exactly when it goes.
#[derive(Debug, Clone, Copy)]
enum Installed {
    Breakpoint(usize, i64),
    Watch(Watch, u64, usize),
    Step,
}

/// Request ID → what it installed. Changed under the setup lock.
static INSTALLED: Mutex<Option<HashMap<i32, Installed>>> = Mutex::new(None);

/// Field IDs named by watchpoint requests → their `jfieldID`s, for the `FieldOnly` filter (read by
/// event threads). Entries stay: field IDs are never reused.
static WATCHED_FIELDS: Mutex<Option<HashMap<u64, usize>>> = Mutex::new(None);

/// The `jfieldID` of a field some watchpoint request named.
pub fn watched_field(field: FieldId) -> Option<usize> {
    lock(&WATCHED_FIELDS).as_ref().and_then(|m| m.get(&field.0).copied())
}

/// Whether events of this kind are ever reported. `FramePop`, `ExceptionCatch`, `ClassLoad` and
/// `UserDefined` have no event layout in JDWP (HotSpot's agent accepts them and never reports
/// them); `VmDisconnected` is the debugger's own.
fn reported(kind: EventKind) -> bool {
    !matches!(
        kind,
        EventKind::FramePop
            | EventKind::ExceptionCatch
            | EventKind::ClassLoad
            | EventKind::UserDefined
            | EventKind::VmDisconnected
    )
}

/// Checks a breakpoint location and returns its method and index.
fn breakpoint_target(agent: &Agent, jni: Jni, loc: &Location) -> Result<(jmethodID, i64), ErrorCode> {
    let method = location_method(agent, jni, loc)?;
    let (start, end) = agent.jvmti.get_method_location(method).map_err(|_| ErrorCode::INVALID_LOCATION)?;
    let index = i64::try_from(loc.index).map_err(|_| ErrorCode::INVALID_LOCATION)?;
    if index < start || index > end {
        return Err(ErrorCode::INVALID_LOCATION);
    }
    Ok((method, index))
}

/// Checks a location's class and method (the method must be the class's own).
fn location_method(agent: &Agent, jni: Jni, loc: &Location) -> Result<jmethodID, ErrorCode> {
    let class = agent.class(jni, loc.class_id.into())?;
    let method = agent.method_of(jni, class, loc.method_id);
    jni.delete_local_ref(class);
    method
}

/// What a request needs in JVMTI, resolved from its modifiers before anything is set up.
enum Plan {
    Nothing,
    Breakpoint(jmethodID, i64),
    Watch(Watch, jclass, u64, FieldId, jfieldID),
    Step(jthread),
}

fn plan(agent: &Agent, jni: Jni, cmd: &Set) -> Result<Plan, ErrorCode> {
    let kind = cmd.event_kind;
    let mut plan = Plan::Nothing;
    // A checked reference only the check needs: one at a time, however many modifiers there are.
    let release = |r: jni_sys::jobject| jni.delete_local_ref(r);
    // Check everything the modifiers name before anything is set up.
    for m in &cmd.modifiers {
        match m {
            Modifier::ThreadOnly { thread } => {
                release(agent.thread(jni, *thread)?);
            }
            Modifier::ClassOnly { clazz } => {
                release(agent.class(jni, *clazz)?);
            }
            Modifier::InstanceOnly { instance } if !instance.is_null() => {
                release(agent.non_null_object(jni, *instance)?);
            }
            Modifier::LocationOnly { loc } if kind == EventKind::Breakpoint => {
                let (method, index) = breakpoint_target(agent, jni, loc)?;
                if matches!(plan, Plan::Nothing) {
                    plan = Plan::Breakpoint(method, index);
                }
            }
            Modifier::LocationOnly { loc } => {
                location_method(agent, jni, loc)?;
            }
            Modifier::ExceptionOnly { exception_or_null, .. } if !exception_or_null.is_null() => {
                release(agent.class(jni, *exception_or_null)?);
            }
            Modifier::FieldOnly { declaring, field_id } => {
                // The field must be the type's own: JVMTI looks a field up in the class it is
                // given, and crashes on one that has no such field (an array type, say).
                let class = agent.class(jni, *declaring)?;
                let field = agent.field_of(jni, class, *field_id, FieldScope::Declared, None)?;
                let watch = match kind {
                    EventKind::FieldAccess => Some(Watch::Access),
                    EventKind::FieldModification => Some(Watch::Modification),
                    _ => None,
                };
                if let (Some(watch), Plan::Nothing) = (watch, &plan) {
                    plan = Plan::Watch(watch, class, declaring.0, *field_id, field.jfield());
                } else {
                    release(class);
                }
            }
            Modifier::Step { thread, .. } => {
                let t = agent.thread(jni, *thread)?;
                if matches!(plan, Plan::Nothing) {
                    plan = Plan::Step(t);
                } else {
                    release(t);
                }
            }
            _ => {}
        }
    }
    // A breakpoint without a location, a watchpoint without a field: the JDK's agent answers
    // INTERNAL. (A step request without a step modifier it accepts, and it never fires.)
    match (kind, &plan) {
        (EventKind::Breakpoint, Plan::Breakpoint(..)) => {}
        (EventKind::FieldAccess | EventKind::FieldModification, Plan::Watch(..)) => {}
        (EventKind::Breakpoint | EventKind::FieldAccess | EventKind::FieldModification, _) => {
            return Err(ErrorCode::INTERNAL);
        }
        _ => {}
    }
    Ok(plan)
}

/// Whether this VM can report `kind` at all (capabilities the loader may not have obtained).
fn supported(agent: &Agent, kind: EventKind) -> bool {
    let Ok(caps) = agent.jvmti.get_capabilities() else { return false };
    match kind {
        EventKind::FieldAccess => caps.can_generate_field_access_events(),
        EventKind::FieldModification => caps.can_generate_field_modification_events(),
        EventKind::MonitorContendedEnter
        | EventKind::MonitorContendedEntered
        | EventKind::MonitorWait
        | EventKind::MonitorWaited => caps.can_generate_monitor_events(),
        EventKind::SingleStep => caps.can_generate_single_step_events() && caps.can_generate_frame_pop_events(),
        EventKind::MethodEntry => caps.can_generate_method_entry_events(),
        EventKind::MethodExit | EventKind::MethodExitWithReturnValue => caps.can_generate_method_exit_events(),
        EventKind::Exception => caps.can_generate_exception_events(),
        EventKind::Breakpoint => caps.can_generate_breakpoint_events(),
        _ => true,
    }
}

pub fn set(agent: &Agent, cmd: Set) -> Result<SetReply, ErrorCode> {
    let kind = cmd.event_kind;
    if !reported(kind) {
        return Err(ErrorCode::INVALID_EVENT_TYPE);
    }
    if !supported(agent, kind) {
        return Err(ErrorCode::NOT_IMPLEMENTED);
    }
    let jni = agent.jni()?;
    let plan = plan(agent, jni, &cmd)?;
    let _setup = crate::events::setup();
    let request = lock(&agent.requests).add(kind, cmd.suspend_policy, cmd.modifiers)?;
    if let Err(e) = install(agent, jni, &request, plan) {
        lock(&agent.requests).remove(kind, request.id);
        uninstall(agent, jni, &request);
        return Err(e);
    }
    changed(agent, jni, &[kind]);
    Ok(SetReply { request_id: request.id })
}

fn install(agent: &Agent, jni: Jni, request: &Arc<Request>, plan: Plan) -> Result<(), ErrorCode> {
    let installed = match plan {
        Plan::Nothing => return Ok(()),
        Plan::Breakpoint(method, index) => {
            breakpoints::acquire(agent, method, index)?;
            Installed::Breakpoint(method as usize, index)
        }
        Plan::Watch(watch, class, class_id, field_id, field) => {
            lock(&WATCHED_FIELDS).get_or_insert_with(HashMap::new).insert(field_id.0, field as usize);
            breakpoints::acquire_watch(agent, jni, watch, class, class_id, field)?;
            Installed::Watch(watch, class_id, field as usize)
        }
        Plan::Step(thread) => {
            // Record it first: a failed begin is undone like a finished step.
            lock(&INSTALLED).get_or_insert_with(HashMap::new).insert(request.id, Installed::Step);
            crate::step::begin(agent, jni, thread, request.clone())?;
            Installed::Step
        }
    };
    lock(&INSTALLED).get_or_insert_with(HashMap::new).insert(request.id, installed);
    Ok(())
}

/// Undoes what a request installed (nothing if it installed nothing).
fn uninstall(agent: &Agent, jni: Jni, request: &Request) {
    let Some(installed) = lock(&INSTALLED).as_mut().and_then(|m| m.remove(&request.id)) else { return };
    match installed {
        Installed::Breakpoint(method, index) => breakpoints::release(agent, method as jmethodID, index),
        Installed::Watch(watch, class_id, field) => {
            breakpoints::release_watch(agent, jni, watch, class_id, field as jfieldID)
        }
        Installed::Step => crate::step::end(agent, jni, request),
    }
}

/// The requests of these kinds changed: bring the trackers and the enabled events in line.
fn changed(agent: &Agent, jni: Jni, kinds: &[EventKind]) {
    if kinds.contains(&EventKind::MethodEntry) {
        entry::recompute(agent, jni);
    }
    if kinds.contains(&EventKind::ClassUnload) {
        unload::sync(agent, jni);
    }
    modes::sync(agent);
}

/// Removes requests from the table (if still there) and undoes their JVMTI state. Agent threads
/// only: the session thread, or the event helper for requests a count expired.
pub fn forget_requests(agent: &Agent, jni: Jni, requests: &[Arc<Request>]) {
    if requests.is_empty() {
        return;
    }
    let _setup = crate::events::setup();
    let mut kinds = Vec::new();
    for r in requests {
        lock(&agent.requests).remove(r.kind, r.id);
        uninstall(agent, jni, r);
        if !kinds.contains(&r.kind) {
            kinds.push(r.kind);
        }
    }
    changed(agent, jni, &kinds);
}

/// Classes were redefined, which cleared every JVMTI breakpoint in them: breakpoint requests
/// located in them go, as with the JDK's agent (JDI deletes them too), and method entry
/// breakpoints are set again in their new code, and steps waiting at a breakpoint in them wait
/// anew. For the session thread, after `RedefineClasses`.
pub fn classes_redefined(agent: &Agent, jni: Jni, classes: &[jclass]) {
    let ids: Vec<u64> = classes.iter().filter_map(|&c| agent.jvmti.get_tag(c).ok()).map(|t| t as u64).collect();
    let doomed: Vec<Arc<Request>> = lock(&agent.requests)
        .of_kind(EventKind::Breakpoint)
        .into_iter()
        .filter(|r| r.location().is_some_and(|l| ids.contains(&l.class_id.0)))
        .collect();
    forget_requests(agent, jni, &doomed);
    crate::step::classes_redefined(agent, jni, classes);
    let _setup = crate::events::setup();
    entry::classes_redefined(agent, jni, classes);
    modes::sync(agent);
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
