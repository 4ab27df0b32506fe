//! The JVMTI state behind event requests — breakpoints, field watches, steps, enabled events —
//! kept in step with the request table: [`add`] sets a checked request up, [`forget_requests`]
//! undoes it exactly. What each request installed is [`EngineState::installed`]; the modules that
//! do the setting up are [`super::breakpoints`], [`super::entry`], [`super::unload`],
//! [`super::modes`] and [`crate::step`].
//!
//! All changes happen under [`super::setup`], on agent threads: the session thread (the
//! `EventRequest` commands) and the event helper (requests a count expired).
//!
//! [`EngineState::installed`]: crate::agent::engine::EngineState::installed

use std::sync::Arc;

use jdwp_protocol::commands::event_request::Modifier;
use jdwp_protocol::{ErrorCode, EventKind, FieldId, SuspendPolicy};
use jni_sys::{jclass, jfieldID, jmethodID};

use super::breakpoints::{self, Watch};
use super::filter::Request;
use super::{entry, modes, unload};
use crate::agent::engine::Installed;
use crate::agent::{Agent, lock};
use crate::jni::Jni;
use crate::jvmti::sys::jthread;

/// What a request needs in JVMTI, resolved from its modifiers before anything is set up.
pub enum Plan {
    Nothing,
    Breakpoint(jmethodID, i64),
    Watch(Watch, jclass, u64, FieldId, jfieldID),
    Step(jthread),
}

/// Adds a request, whose modifiers the caller has checked, to the table and sets up what `plan`
/// says in JVMTI; nothing is left behind if that fails. Returns the request's ID.
pub fn add(
    agent: &Agent,
    jni: Jni,
    kind: EventKind,
    suspend_policy: SuspendPolicy,
    modifiers: Vec<Modifier>,
    plan: Plan,
) -> Result<i32, ErrorCode> {
    let _setup = super::setup(agent);
    let request = lock(&agent.requests).add(kind, suspend_policy, modifiers)?;
    if let Err(e) = install(agent, jni, &request, plan) {
        lock(&agent.requests).remove(kind, request.id);
        uninstall(agent, jni, &request);
        return Err(e);
    }
    changed(agent, jni, &[kind]);
    Ok(request.id)
}

fn install(agent: &Agent, jni: Jni, request: &Arc<Request>, plan: Plan) -> Result<(), ErrorCode> {
    let installed = match plan {
        Plan::Nothing => return Ok(()),
        Plan::Breakpoint(method, index) => {
            breakpoints::acquire(agent, method, index)?;
            Installed::Breakpoint(method as usize, index)
        }
        Plan::Watch(watch, class, class_id, field_id, field) => {
            lock(&agent.engine.watched_fields).insert(field_id.0, field as usize);
            breakpoints::acquire_watch(agent, jni, watch, class, class_id, field)?;
            Installed::Watch(watch, class_id, field as usize)
        }
        Plan::Step(thread) => {
            // Record it first: a failed begin is undone like a finished step.
            lock(&agent.engine.installed).insert(request.id, Installed::Step);
            crate::step::begin(agent, jni, thread, request.clone())?;
            Installed::Step
        }
    };
    lock(&agent.engine.installed).insert(request.id, installed);
    Ok(())
}

/// Undoes what a request installed (nothing if it installed nothing).
fn uninstall(agent: &Agent, jni: Jni, request: &Request) {
    let Some(installed) = lock(&agent.engine.installed).remove(&request.id) else { return };
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
    let _setup = super::setup(agent);
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
    let _setup = super::setup(agent);
    entry::classes_redefined(agent, jni, classes);
    modes::sync(agent);
}
