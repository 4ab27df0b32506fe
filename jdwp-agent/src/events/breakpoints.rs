//! JVMTI breakpoints and field watches, counted: JVMTI allows one of each per location or field,
//! while any number of requests (and the method entry tracker) may want one.
//!
//! Their counts are [`crate::agent::engine::EngineState`]'s, the breakpoints' in a
//! [`super::breakpoint_table::BreakpointTable`]. Changed only under [`super::setup`] (agent
//! threads); event callbacks only ask whether a breakpoint is set and hold events for it, under a
//! lock never held across a VM call.

use jdwp_protocol::ErrorCode;
use jni_sys::{jfieldID, jmethodID};

use crate::agent::engine::WatchEntry;
use crate::agent::{Agent, GlobalRef, lock};
use crate::jni::Jni;

/// Holds events back for the breakpoint event at this location, if a breakpoint is set there
/// (true: a breakpoint event will follow the single step or method entry there); it stays set
/// until [`unhold`]. Event threads.
pub fn hold(agent: &Agent, method: usize, index: i64) -> bool {
    lock(&agent.engine.breakpoints).hold((method, index))
}

/// The events held for this location went out. Event threads.
pub fn unhold(agent: &Agent, method: usize, index: i64) {
    lock(&agent.engine.breakpoints).unhold((method, index));
}

/// Takes one use of the breakpoint at (`method`, `index`), setting it if it is the first.
pub fn acquire(agent: &Agent, method: jmethodID, index: i64) -> Result<(), ErrorCode> {
    let key = (method as usize, index);
    // Set in JVMTI before the table says so: a callback that sees it in the table holds events
    // for its breakpoint event, which must then come.
    let (set, orphans) = {
        let mut table = lock(&agent.engine.breakpoints);
        let orphans = table.take_orphans();
        (!table.is_set(key), orphans)
    };
    clear_all(agent, orphans);
    if set && let Err(e) = agent.jvmti.set_breakpoint(method, index) {
        // Someone else's breakpoint (another JVMTI agent) is no error; anything else is.
        if e != crate::jvmti::JvmtiError::DUPLICATE {
            return Err(e.into());
        }
    }
    lock(&agent.engine.breakpoints).acquire(key);
    Ok(())
}

/// Gives back one use, clearing the breakpoint with the last (unless events are held for it).
pub fn release(agent: &Agent, method: jmethodID, index: i64) {
    let key = (method as usize, index);
    let (last, mut orphans) = {
        let mut table = lock(&agent.engine.breakpoints);
        (table.release(key), table.take_orphans())
    };
    if last {
        orphans.push(key);
    }
    clear_all(agent, orphans);
}

/// Clears the JVMTI breakpoints the table let go of.
fn clear_all(agent: &Agent, keys: Vec<(usize, i64)>) {
    for (method, index) in keys {
        if let Err(e) = agent.jvmti.clear_breakpoint(method as jmethodID, index) {
            // Gone already: its class was redefined or unloaded.
            tracing::debug!(%e, "clearing a breakpoint");
        }
    }
}

pub use crate::agent::engine::Watch;

/// Takes one use of a watch of `field` of `class` (whose ID is `class_id`), setting it if first.
pub fn acquire_watch(
    agent: &Agent,
    jni: Jni,
    watch: Watch,
    class: jni_sys::jclass,
    class_id: u64,
    field: jfieldID,
) -> Result<(), ErrorCode> {
    let key = (watch, class_id, field as usize);
    if let Some(entry) = lock(&agent.engine.watches).get_mut(&key) {
        entry.count += 1;
        return Ok(());
    }
    let set = match watch {
        Watch::Access => agent.jvmti.set_field_access_watch(class, field),
        Watch::Modification => agent.jvmti.set_field_modification_watch(class, field),
    };
    match set {
        Ok(()) => {}
        Err(e) if e == crate::jvmti::JvmtiError::DUPLICATE => {}
        Err(e) => return Err(e.into()),
    }
    let global = GlobalRef(jni.new_global_ref(class)?);
    lock(&agent.engine.watches).insert(key, WatchEntry { count: 1, class: global });
    Ok(())
}

/// Gives back one use of a watch, clearing it with the last.
pub fn release_watch(agent: &Agent, jni: Jni, watch: Watch, class_id: u64, field: jfieldID) {
    let key = (watch, class_id, field as usize);
    let last = {
        let mut map = lock(&agent.engine.watches);
        match map.get_mut(&key) {
            Some(entry) if entry.count > 1 => {
                entry.count -= 1;
                None
            }
            Some(_) => map.remove(&key),
            None => None,
        }
    };
    if let Some(entry) = last {
        let cleared = match watch {
            Watch::Access => agent.jvmti.clear_field_access_watch(entry.class.0, field),
            Watch::Modification => agent.jvmti.clear_field_modification_watch(entry.class.0, field),
        };
        if let Err(e) = cleared {
            tracing::debug!(%e, "clearing a field watch");
        }
        jni.delete_global_ref(entry.class.0);
    }
}

/// The `jfieldID` of a field some watchpoint request named ([`super::install`] records them). Any
/// thread.
pub fn watched_field(agent: &Agent, field: jdwp_protocol::FieldId) -> Option<usize> {
    lock(&agent.engine.watched_fields).get(&field.0).copied()
}
