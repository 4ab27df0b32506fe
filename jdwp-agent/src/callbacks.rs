//! JVMTI event callbacks: filter each event against the debugger's requests and hand what matches
//! to the event helper. They run on application threads, so they follow the locking rules of
//! [`crate::agent`]: locks only around plain Rust, never across a VM call.

use std::sync::Arc;

use crate::jvmti::sys::{jlocation, jthread};
use jdwp_protocol::{EventKind, FieldId, Location, ObjectId, ReferenceTypeId, SuspendPolicy, ThreadId};
use jni_sys::{JNIEnv, jclass, jmethodID};

use crate::agent::{Agent, GlobalRef, agent, lock};
use crate::event_helper::{Job, RawEvent};
use crate::events::filter::{EventSubject, Request};
use crate::events::requests::{Matches, match_event};
use crate::jni::Jni;
use crate::jvmti::sys::jvmtiEnv;

/// What filters may ask about one event, answered lazily from JVMTI.
pub struct Subject<'a> {
    pub agent: &'a Agent,
    pub jni: Jni,
    pub thread: jthread,
    /// The class the event is "in": the location's class, or the prepared class.
    pub class: Option<jclass>,
    pub method: Option<jmethodID>,
    pub index: jlocation,
}

impl Subject<'_> {
    fn tag_of(&self, obj: jni_sys::jobject) -> Option<u64> {
        self.agent.jvmti.get_tag(obj).ok().map(|t| t as u64)
    }

    fn class_signature(&self) -> Option<String> {
        self.class.and_then(|c| self.agent.jvmti.get_class_signature(c).ok()).map(|(s, _)| s)
    }
}

/// `Lpkg/Name;` → `pkg.Name`; arrays and primitives keep their signature form.
fn dotted(signature: &str) -> String {
    match signature.strip_prefix('L').and_then(|s| s.strip_suffix(';')) {
        Some(name) => name.replace('/', "."),
        None => signature.to_string(),
    }
}

impl EventSubject for Subject<'_> {
    fn in_thread(&self, thread: ThreadId) -> bool {
        // An object's ID is its JVMTI tag: comparing tags needs neither a lock nor an allocation.
        !self.thread.is_null() && self.tag_of(self.thread) == Some(thread.0)
    }

    fn class_is_subtype_of(&self, class: ReferenceTypeId) -> bool {
        let Some(ours) = self.class else { return false };
        match self.agent.object(self.jni, ObjectId(class.0)) {
            Ok(target) if !target.is_null() => {
                let result = self.jni.is_assignable_from(ours, target);
                self.jni.delete_local_ref(target);
                result
            }
            _ => false,
        }
    }

    fn class_name_matches(&self, pred: &dyn Fn(&str) -> bool) -> bool {
        self.class_signature().is_some_and(|s| pred(&dotted(&s)))
    }

    fn at_location(&self, location: &Location) -> bool {
        self.method.is_some_and(|m| location.method_id.0 == m as u64) && location.index == self.index as u64
    }

    fn this_is(&self, instance: ObjectId) -> bool {
        if self.thread.is_null() {
            return false;
        }
        match self.agent.jvmti.get_local_instance(self.thread, 0) {
            Ok(this) if this.is_null() => instance.is_null(),
            Ok(this) => {
                let same = self.tag_of(this) == Some(instance.0);
                self.jni.delete_local_ref(this);
                same
            }
            // Static or native frames have no `this`.
            Err(_) => instance.is_null(),
        }
    }

    fn exception_matches(&self, _: ReferenceTypeId, _: bool, _: bool) -> bool {
        false
    }

    fn field_is(&self, _: ReferenceTypeId, _: FieldId) -> bool {
        false
    }

    fn source_name_matches(&self, pred: &dyn Fn(&str) -> bool) -> bool {
        self.class.and_then(|c| self.agent.jvmti.get_source_file_name(c).ok()).is_some_and(|s| pred(&s))
    }
}

/// Filters an event of `kind` and returns what it matched. Requests spent by a count are removed.
pub fn matches(agent: &Agent, kind: EventKind, subject: &Subject<'_>) -> Option<Matches> {
    let snapshot = lock(&agent.requests).snapshot(kind)?;
    let mut expired: Vec<Arc<Request>> = Vec::new();
    let found = match_event(&snapshot, subject, &mut expired);
    if !expired.is_empty() {
        crate::commands::event_request::forget_requests(agent, subject.jni, &expired);
    }
    found
}

/// Hands matched events to the helper and waits until they are sent.
pub fn report(agent: &Agent, jni: Jni, thread: jthread, policy: SuspendPolicy, events: Vec<RawEvent>) {
    let Some(helper) = agent.helper.get() else { return };
    let event_thread = if thread.is_null() { None } else { jni.new_global_ref(thread).ok().map(GlobalRef) };
    helper.deliver(Job { policy, thread: event_thread, events, done: None });
    if policy != SuspendPolicy::None && !thread.is_null() {
        crate::invoke::after_event(agent, jni, thread);
    }
}

fn global(jni: Jni, obj: jni_sys::jobject) -> Option<GlobalRef> {
    jni.new_global_ref(obj).ok().map(GlobalRef)
}

/// Common entry: the agent and this thread's JNI, unless the event is the agent's own.
fn enter(jni_env: *mut JNIEnv, thread: jthread) -> Option<(&'static Agent, Jni)> {
    let agent = agent()?;
    // SAFETY: the VM passes the calling thread's JNI environment to every callback.
    let jni = unsafe { Jni::from_raw(jni_env) }?;
    if agent.is_vm_dead() || (!thread.is_null() && agent.is_agent_thread(jni, thread)) {
        return None;
    }
    Some((agent, jni))
}

pub unsafe extern "system" fn on_thread_start(_: *mut jvmtiEnv, jni_env: *mut JNIEnv, thread: jthread) {
    crate::guard((), || thread_event(jni_env, thread, EventKind::ThreadStart));
}

pub unsafe extern "system" fn on_thread_end(_: *mut jvmtiEnv, jni_env: *mut JNIEnv, thread: jthread) {
    crate::guard((), || thread_event(jni_env, thread, EventKind::ThreadDeath));
}

fn thread_event(jni_env: *mut JNIEnv, thread: jthread, kind: EventKind) {
    let Some((agent, jni)) = enter(jni_env, thread) else { return };
    let subject = Subject { agent, jni, thread, class: None, method: None, index: 0 };
    let Some(m) = matches(agent, kind, &subject) else { return };
    let mut events = Vec::with_capacity(m.request_ids.len());
    for request_id in m.request_ids {
        let Some(t) = global(jni, thread) else { return };
        events.push(match kind {
            EventKind::ThreadStart => RawEvent::ThreadStart { request_id, thread: t },
            _ => RawEvent::ThreadDeath { request_id, thread: t },
        });
    }
    report(agent, jni, thread, m.suspend_policy, events);
}

pub unsafe extern "system" fn on_class_prepare(_: *mut jvmtiEnv, jni_env: *mut JNIEnv, thread: jthread, klass: jclass) {
    crate::guard((), || {
        let Some((agent, jni)) = enter(jni_env, thread) else { return };
        let subject = Subject { agent, jni, thread, class: Some(klass), method: None, index: 0 };
        let Some(m) = matches(agent, EventKind::ClassPrepare, &subject) else { return };
        let mut events = Vec::with_capacity(m.request_ids.len());
        for request_id in m.request_ids {
            let (Some(t), Some(c)) = (global(jni, thread), global(jni, klass)) else { return };
            events.push(RawEvent::ClassPrepare { request_id, thread: t, class: c });
        }
        report(agent, jni, thread, m.suspend_policy, events);
    });
}

pub unsafe extern "system" fn on_breakpoint(
    _: *mut jvmtiEnv,
    jni_env: *mut JNIEnv,
    thread: jthread,
    method: jmethodID,
    location: jlocation,
) {
    crate::guard((), || {
        let Some((agent, jni)) = enter(jni_env, thread) else { return };
        let class = agent.jvmti.get_method_declaring_class(method).ok();
        let subject = Subject { agent, jni, thread, class, method: Some(method), index: location };
        let found = matches(agent, EventKind::Breakpoint, &subject);
        if let Some(c) = class {
            jni.delete_local_ref(c);
        }
        let Some(m) = found else { return };
        let mut events = Vec::with_capacity(m.request_ids.len());
        for request_id in m.request_ids {
            let Some(t) = global(jni, thread) else { return };
            events.push(RawEvent::Breakpoint { request_id, thread: t, method: method as usize, index: location });
        }
        report(agent, jni, thread, m.suspend_policy, events);
    });
}

pub unsafe extern "system" fn on_vm_death(_: *mut jvmtiEnv, jni_env: *mut JNIEnv) {
    crate::guard((), || {
        let Some((agent, jni)) = enter(jni_env, std::ptr::null_mut()) else { return };
        // The automatic VM death event (request 0), plus any requested ones, in one composite.
        let subject = Subject { agent, jni, thread: std::ptr::null_mut(), class: None, method: None, index: 0 };
        let requested = matches(agent, EventKind::VmDeath, &subject);
        let mut events = vec![RawEvent::VmDeath { request_id: 0 }];
        let mut policy = SuspendPolicy::None;
        if let Some(m) = requested {
            policy = m.suspend_policy;
            events.extend(m.request_ids.into_iter().map(|request_id| RawEvent::VmDeath { request_id }));
        }
        report(agent, jni, std::ptr::null_mut(), policy, events);
        agent.vm_dead.store(true, std::sync::atomic::Ordering::Release);
    });
}
