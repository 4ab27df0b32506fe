//! Which JVMTI events are enabled for all threads: exactly those some request (or the method entry
//! and class unload trackers, or the `Thread.resume` guard of [`crate::app_resume`]) needs right
//! now, so that an idle debugger costs the VM nothing. What was applied last is
//! [`crate::agent::engine::EngineState::applied_modes`], changed under [`super::setup`] only.
//! Single steps and frame pops are never enabled globally: steps enable them per thread. Virtual
//! thread starts and ends only while a request could match one, or `includevirtualthreads=y`
//! tracks them ([`crate::virtual_threads::wanted`]).

use std::sync::atomic::Ordering;

use jdwp_protocol::EventKind;

use super::{entry, unload};
use crate::agent::{Agent, lock};
use crate::jvmti::sys::{self, jvmtiEvent};

/// Enables or disables each managed JVMTI event as the requests now need. Holds
/// [`super::setup`].
pub fn sync(agent: &Agent) {
    let supports_virtual_threads = agent.supports_virtual_threads();
    let wanted: Vec<(jvmtiEvent, bool)> = {
        let requests = lock(&agent.requests);
        let wants = |k: EventKind| requests.wants(k);
        let entry = entry::mode(agent);
        let (starts, ends) = (requests.of_kind(EventKind::ThreadStart), requests.of_kind(EventKind::ThreadDeath));
        let virtual_threads = crate::virtual_threads::wanted(
            supports_virtual_threads,
            agent.options.include_virtual_threads,
            starts.iter().map(|r| &**r),
            ends.iter().map(|r| &**r),
        );
        let mut wanted = vec![
            (
                sys::JVMTI_EVENT_BREAKPOINT,
                wants(EventKind::Breakpoint)
                    || entry == entry::Mode::Breakpoints
                    || agent.engine.resume_guard.active.load(Ordering::Acquire)
                    // Steps over wait for returns at breakpoints (see `crate::step`).
                    || wants(EventKind::SingleStep),
            ),
            (
                sys::JVMTI_EVENT_CLASS_PREPARE,
                wants(EventKind::ClassPrepare) || entry == entry::Mode::Breakpoints || unload::tracking(agent),
            ),
            (sys::JVMTI_EVENT_THREAD_START, wants(EventKind::ThreadStart)),
            (sys::JVMTI_EVENT_THREAD_END, wants(EventKind::ThreadDeath)),
            (sys::JVMTI_EVENT_EXCEPTION, wants(EventKind::Exception)),
            (sys::JVMTI_EVENT_METHOD_ENTRY, wants(EventKind::MethodEntry) && entry == entry::Mode::Global),
            (sys::JVMTI_EVENT_METHOD_EXIT, wants(EventKind::MethodExit) || wants(EventKind::MethodExitWithReturnValue)),
            (sys::JVMTI_EVENT_FIELD_ACCESS, wants(EventKind::FieldAccess)),
            (sys::JVMTI_EVENT_FIELD_MODIFICATION, wants(EventKind::FieldModification)),
            (sys::JVMTI_EVENT_MONITOR_CONTENDED_ENTER, wants(EventKind::MonitorContendedEnter)),
            (sys::JVMTI_EVENT_MONITOR_CONTENDED_ENTERED, wants(EventKind::MonitorContendedEntered)),
            (sys::JVMTI_EVENT_MONITOR_WAIT, wants(EventKind::MonitorWait)),
            (sys::JVMTI_EVENT_MONITOR_WAITED, wants(EventKind::MonitorWaited)),
        ];
        // These events exist from JVMTI 21 only: never named to an older VM.
        if supports_virtual_threads {
            wanted.push((sys::JVMTI_EVENT_VIRTUAL_THREAD_START, virtual_threads.start));
            wanted.push((sys::JVMTI_EVENT_VIRTUAL_THREAD_END, virtual_threads.end));
        }
        wanted
    };
    for (event, on) in wanted {
        let current = lock(&agent.engine.applied_modes).get(&event).copied().unwrap_or(false);
        if current == on {
            continue;
        }
        match agent.jvmti.set_event_notification_mode(on, event, std::ptr::null_mut()) {
            Ok(()) => {
                lock(&agent.engine.applied_modes).insert(event, on);
            }
            Err(e) => tracing::warn!(event, on, %e, "could not change an event's notification mode"),
        }
    }
}
