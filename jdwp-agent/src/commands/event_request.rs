//! `EventRequest` (command set 15): checks a request's modifiers and hands it to
//! [`crate::events::install`], which keeps the request table and the JVMTI state behind it in step.

use jdwp_protocol::commands::event_request::*;
use jdwp_protocol::{ErrorCode, EventKind, Location};
use jni_sys::jmethodID;

use crate::agent::{Agent, FieldScope, lock};
use crate::dispatch::Entry;
use crate::events::breakpoints::Watch;
use crate::events::install::{self, Plan};
use crate::jni::Jni;
use jdwp_protocol::commands as c;

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
    let request_id = install::add(agent, jni, kind, cmd.suspend_policy, cmd.modifiers, plan)?;
    Ok(SetReply { request_id })
}

pub fn clear(agent: &Agent, cmd: Clear) -> Result<ClearReply, ErrorCode> {
    let removed = lock(&agent.requests).remove(cmd.event_kind, cmd.request_id);
    if let Some(r) = removed {
        install::forget_requests(agent, agent.jni()?, &[r]);
    }
    Ok(ClearReply {})
}

pub fn clear_all_breakpoints(agent: &Agent, _: ClearAllBreakpoints) -> Result<ClearAllBreakpointsReply, ErrorCode> {
    let removed = lock(&agent.requests).remove_kind(EventKind::Breakpoint);
    install::forget_requests(agent, agent.jni()?, &removed);
    Ok(ClearAllBreakpointsReply {})
}

// The event helper and the backend still reach the engine through this module.
pub(crate) use crate::events::install::forget_requests;

/// This module's commands.
pub(super) static TABLE: &[Entry<Agent>] = crate::dispatch_table!(Agent;
    c::event_request::Set => set,
    c::event_request::Clear => clear,
    c::event_request::ClearAllBreakpoints => clear_all_breakpoints,
);
