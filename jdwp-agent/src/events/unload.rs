//! Class unload events, best effort as with the JDK's agent.
//!
//! JVMTI has no class unload event. While a class unload request exists, the agent tags every
//! loaded class in a second JVMTI environment of its own, where a tag marks a class and nothing
//! else and stands for its signature. A class is unloaded when its loader is collected, and then
//! its `Class` object is freed: that environment gets an `ObjectFree` event for the tag. Such
//! callbacks may not use JNI, and run while the VM may be stopped, so they only queue the tag and
//! nudge the event helper, which matches and reports the unloads. HotSpot's service thread posts
//! them right after the collection that freed the classes, so an unload is reported soon after
//! it (the JDK's agent reports it at its next event after a later collection).
//!
//! The environment is never changed after it is made: enabling or disabling `ObjectFree`, setting
//! callbacks or disposing of it from a Java thread can deadlock HotSpot 17 while the service thread
//! posts (see `profiling/alloc.rs`).
//!
//! Class unloads suspend nothing, whatever their requests' suspend policy: the JDK's agent sends
//! them with policy `NONE` (an unload has no thread, and its composites take their policy from
//! thread events only). The collection that unloads a class runs in some application thread,
//! typically one allocating until memory runs out; suspending every thread there would stop it
//! before it can tell the debugger it is done, and nsk/jdi's class unload tests then hang.
//!
//! Classes prepared while no class unload request exists are tagged when the next one comes; a
//! class unloaded in between is never reported.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicI64, Ordering};

use jdwp_protocol::{EventKind, SuspendPolicy};
use jni_sys::{jclass, jlong};

use crate::agent::engine::Tracker;
use crate::agent::{Agent, agent, lock};
use crate::events::subject::Subject;
use crate::jni::Jni;
use crate::jvmti::sys::{self, jvmtiCapabilities, jvmtiEnv, jvmtiEventCallbacks};
use crate::raw::{RawEvent, RawEvents};

/// The suspend policy of every class unload composite (see the module doc).
pub const UNLOAD_POLICY: SuspendPolicy = SuspendPolicy::None;

/// Whether classes are being tracked (class prepare events are then needed).
pub fn tracking(agent: &Agent) -> bool {
    agent.engine.unloads.tracking.load(Ordering::Acquire)
}

fn create(agent: &Agent) -> Result<Tracker, String> {
    let env = agent.vm.get_jvmti(sys::JVMTI_VERSION_11).map_err(|e| e.to_string())?;
    let mut caps = jvmtiCapabilities::default();
    caps.set_can_tag_objects(true).set_can_generate_object_free_events(true);
    env.add_capabilities(&caps).map_err(|e| e.to_string())?;
    // SAFETY: the struct is a plain table of `Option<fn>`; all-zero bytes are all `None`.
    let mut callbacks: jvmtiEventCallbacks = unsafe { std::mem::zeroed() };
    callbacks.ObjectFree = Some(on_object_free);
    env.set_event_callbacks(&callbacks).map_err(|e| e.to_string())?;
    // Safe to enable here (see the module doc): the environment has no tags yet.
    env.set_event_notification_mode(true, sys::JVMTI_EVENT_OBJECT_FREE, std::ptr::null_mut())
        .map_err(|e| e.to_string())?;
    Ok(Tracker { env, names: Mutex::new(HashMap::new()), next: AtomicI64::new(1) })
}

/// Starts or stops tracking as class unload requests come and go. Holds [`super::setup`].
pub fn sync(agent: &Agent, jni: Jni) {
    let wanted = lock(&agent.requests).wants(EventKind::ClassUnload);
    if wanted == tracking(agent) {
        return;
    }
    if !wanted {
        agent.engine.unloads.tracking.store(false, Ordering::Release);
        super::modes::sync(agent);
        return;
    }
    if agent.engine.unloads.tracker.get().is_none() {
        match create(agent) {
            Ok(t) => {
                let _ = agent.engine.unloads.tracker.set(t);
            }
            Err(e) => {
                tracing::warn!(error = %e, "class unloads cannot be tracked");
                return;
            }
        }
    }
    let Some(tracker) = agent.engine.unloads.tracker.get() else { return };
    // Class prepare events first, so that no class slips between them and the scan.
    agent.engine.unloads.tracking.store(true, Ordering::Release);
    super::modes::sync(agent);
    if let Ok(classes) = agent.jvmti.get_loaded_classes() {
        for &class in classes.iter() {
            tag(agent, tracker, class);
            jni.delete_local_ref(class);
        }
    }
}

fn tag(agent: &Agent, tracker: &Tracker, class: jclass) {
    if !matches!(tracker.env.get_tag(class), Ok(0)) {
        return;
    }
    let Ok((signature, _)) = agent.jvmti.get_class_signature(class) else { return };
    let tag = tracker.next.fetch_add(1, Ordering::Relaxed);
    if tracker.env.set_tag(class, tag).is_ok() {
        lock(&tracker.names).insert(tag, signature);
    }
}

/// A class was prepared: track it (any thread).
pub fn class_prepared(agent: &Agent, class: jclass) {
    if tracking(agent)
        && let Some(tracker) = agent.engine.unloads.tracker.get()
    {
        tag(agent, tracker, class);
    }
}

fn nudge(agent: &Agent) {
    if !agent.engine.unloads.nudged.swap(true, Ordering::AcqRel)
        && let Some(helper) = agent.helper.get()
    {
        helper.nudge_unloads();
    }
}

unsafe extern "system" fn on_object_free(_: *mut jvmtiEnv, tag: jlong) {
    crate::guard((), || {
        // Only plain code runs here (ObjectFree forbids JNI and most JVMTI), and under the lock.
        let Some(agent) = agent() else { return };
        lock(&agent.engine.freed).push(tag);
        nudge(agent);
    });
}

/// The unloads since the last call, one composite (policy and events) per class. Event helper only.
pub fn take_unloads(agent: &Agent, jni: Jni) -> Vec<(SuspendPolicy, RawEvents)> {
    agent.engine.unloads.nudged.store(false, Ordering::Release);
    let Some(tracker) = agent.engine.unloads.tracker.get() else { return Vec::new() };
    let freed = std::mem::take(&mut *lock(&agent.engine.freed));
    let mut out = Vec::new();
    for tag in freed {
        let Some(signature) = lock(&tracker.names).remove(&tag) else { continue };
        if !tracking(agent) {
            continue;
        }
        let subject = Subject::of_signature(agent, jni, &signature);
        let Some(m) = crate::events::subject::matches(agent, EventKind::ClassUnload, &subject) else { continue };
        let events = m
            .request_ids
            .iter()
            .map(|&request_id| RawEvent::ClassUnload { request_id, signature: signature.clone() })
            .collect();
        // Whatever `m.suspend_policy` is (see the module doc).
        out.push((UNLOAD_POLICY, events));
    }
    out
}
