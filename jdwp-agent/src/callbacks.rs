//! JVMTI event callbacks: filter each event against the debugger's requests and hand what matches
//! to the event helper. They run on application threads, so they follow the locking rules of
//! [`crate::agent`]: locks only around plain Rust, never across a VM call; JVMTI work that needs a
//! lock held across calls (breakpoints, watches, event modes) goes to the event helper.
//!
//! Events of one thread at one location — method entry, single step, breakpoint — come in one
//! composite, as the spec asks. JVMTI reports them one by one, the breakpoint last; so when a
//! breakpoint is set where a method entry or a step event happens, those events are held back in a
//! per-thread slot and sent with the breakpoint's. Should the breakpoint vanish meanwhile (cleared
//! by the debugger), they go out with the thread's next event. (When method entries are caught by
//! breakpoints, see [`crate::events::entry`], a step ending at a method's first bytecode thus
//! comes with its entry; the JDK's agent sends those two apart, which the spec allows too.)

use std::cell::{Cell, OnceCell, RefCell};
use std::sync::Arc;

use jdwp_protocol::{EventKind, FieldId, Location, ObjectId, ReferenceTypeId, SuspendPolicy, ThreadId, Value};
use jni_sys::{JNIEnv, jclass, jfieldID, jlong, jmethodID, jobject, jvalue};

use crate::agent::{Agent, GlobalRef, agent, lock};
use crate::event_helper::{RawEvent, RawValue};
use crate::events::filter::{EventSubject, Request, Verdict};
use crate::events::requests::{Matches, match_event};
use crate::events::{breakpoints, entry, unload};
use crate::jni::{JavaType, Jni};
use crate::jvmti::sys::{jboolean, jlocation, jthread, jvmtiEnv};
use crate::step;

// ---- what filters may ask -----------------------------------------------------------------------

/// How to find the event's class (the one class filters test).
enum ClassSource {
    None,
    Given(jclass),
    /// The declaring class of the event's method (the location's class).
    OfMethod,
    /// The class of an object (the monitor, for monitor waits).
    OfObject(jobject),
    /// Only a signature is left (class unloads).
    Signature(String),
}

/// How to find the event's instance (the one instance filters test).
enum InstanceSource {
    None,
    /// `this` of the current frame, if not static.
    Frame,
    /// A given object (the field's object for watchpoints); null for static fields.
    Object(jobject),
}

/// What filters may ask about one event, answered lazily from JVMTI and cached.
pub struct Subject<'a> {
    agent: &'a Agent,
    jni: Jni,
    thread: jthread,
    method: Option<jmethodID>,
    index: jlocation,
    class_source: ClassSource,
    class: OnceCell<Option<jclass>>,
    signature: OnceCell<Option<String>>,
    instance: InstanceSource,
    exception: Option<(jobject, bool)>,
    field: Option<(jclass, jfieldID)>,
}

impl<'a> Subject<'a> {
    pub fn new(agent: &'a Agent, jni: Jni, thread: jthread) -> Subject<'a> {
        Subject {
            agent,
            jni,
            thread,
            method: None,
            index: -1,
            class_source: ClassSource::None,
            class: OnceCell::new(),
            signature: OnceCell::new(),
            instance: InstanceSource::None,
            exception: None,
            field: None,
        }
    }

    /// An event at code index `index` of `method` in `thread` (class: the declaring class;
    /// instance: `this` of the current frame).
    pub fn of_method(agent: &'a Agent, jni: Jni, thread: jthread, method: jmethodID, index: jlocation) -> Self {
        let mut s = Subject::new(agent, jni, thread);
        s.method = Some(method);
        s.index = index;
        s.class_source = ClassSource::OfMethod;
        s.instance = InstanceSource::Frame;
        s
    }

    /// An event about `class` (class prepare; what a method entry tracker asks of a class).
    pub fn of_class(agent: &'a Agent, jni: Jni, class: jclass) -> Self {
        let mut s = Subject::new(agent, jni, std::ptr::null_mut());
        s.class_source = ClassSource::Given(class);
        s
    }

    /// An event about a class known by its signature only.
    pub fn of_signature(agent: &'a Agent, jni: Jni, signature: &str) -> Self {
        let mut s = Subject::new(agent, jni, std::ptr::null_mut());
        s.class_source = ClassSource::Signature(signature.to_string());
        s
    }

    fn with_class_of(mut self, object: jobject) -> Self {
        self.class_source = ClassSource::OfObject(object);
        self
    }

    fn with_instance(mut self, object: jobject) -> Self {
        self.instance = InstanceSource::Object(object);
        self
    }

    fn with_exception(mut self, exception: jobject, caught: bool) -> Self {
        self.exception = Some((exception, caught));
        self
    }

    fn with_field(mut self, class: jclass, field: jfieldID) -> Self {
        self.field = Some((class, field));
        self
    }

    fn tag_of(&self, obj: jobject) -> Option<u64> {
        self.agent.jvmti.get_tag(obj).ok().map(|t| t as u64)
    }

    /// The event's class (a local reference this subject owns unless given).
    fn class(&self) -> Option<jclass> {
        *self.class.get_or_init(|| match &self.class_source {
            ClassSource::Given(c) => Some(*c),
            ClassSource::OfMethod => self.method.and_then(|m| self.agent.jvmti.get_method_declaring_class(m).ok()),
            ClassSource::OfObject(o) if !o.is_null() => self.jni.get_object_class(*o).ok(),
            _ => None,
        })
    }

    fn signature(&self) -> Option<&str> {
        self.signature
            .get_or_init(|| match &self.class_source {
                ClassSource::Signature(s) => Some(s.clone()),
                _ => self.class().and_then(|c| self.agent.jvmti.get_class_signature(c).ok()).map(|(s, _)| s),
            })
            .as_deref()
    }

    /// The event's instance: a local reference (to delete if `owned`), or null.
    fn instance(&self) -> (jobject, bool) {
        match self.instance {
            InstanceSource::None => (std::ptr::null_mut(), false),
            InstanceSource::Object(o) => (o, false),
            InstanceSource::Frame => {
                let (Some(method), false) = (self.method, self.thread.is_null()) else {
                    return (std::ptr::null_mut(), false);
                };
                let is_static = self
                    .agent
                    .jvmti
                    .get_method_modifiers(method)
                    .map_or(true, |m| m & jdwp_protocol::modifiers::STATIC != 0);
                if is_static {
                    return (std::ptr::null_mut(), false);
                }
                match self.agent.jvmti.get_local_instance(self.thread, 0) {
                    Ok(this) => (this, true),
                    // Native frames have no `this` to show.
                    Err(_) => (std::ptr::null_mut(), false),
                }
            }
        }
    }
}

impl Drop for Subject<'_> {
    fn drop(&mut self) {
        let owned = matches!(self.class_source, ClassSource::OfMethod | ClassSource::OfObject(_));
        if owned && let Some(Some(class)) = self.class.get() {
            self.jni.delete_local_ref(*class);
        }
    }
}

/// `Lpkg/Name;` → `pkg.Name`; arrays and primitives keep their signature form.
fn dotted(signature: &str) -> String {
    match signature.strip_prefix('L').and_then(|s| s.strip_suffix(';')) {
        Some(name) => name.replace('/', "."),
        None => signature.to_string(),
    }
}

/// The source names a `SourceDebugExtension` (SMAP, JSR-45) lists in its file sections.
pub fn smap_source_names(smap: &str) -> Vec<&str> {
    let mut names = Vec::new();
    let mut in_files = false;
    let mut lines = smap.lines().map(str::trim);
    while let Some(line) = lines.next() {
        if line.starts_with('*') {
            in_files = line == "*F";
            continue;
        }
        if !in_files {
            continue;
        }
        // "+ id name" is followed by a path line; "id name" stands alone.
        let (with_path, rest) = match line.strip_prefix('+') {
            Some(rest) => (true, rest.trim_start()),
            None => (false, line),
        };
        if let Some((_id, name)) = rest.split_once(char::is_whitespace) {
            names.push(name.trim());
        }
        if with_path {
            lines.next();
        }
    }
    names
}

impl EventSubject for Subject<'_> {
    fn in_thread(&self, thread: ThreadId) -> bool {
        // An object's ID is its JVMTI tag: comparing tags needs neither a lock nor an allocation.
        !self.thread.is_null() && self.tag_of(self.thread) == Some(thread.0)
    }

    fn in_virtual_thread(&self) -> bool {
        !self.thread.is_null() && self.jni.is_virtual_thread(self.thread)
    }

    fn class_is_subtype_of(&self, class: ReferenceTypeId) -> bool {
        let Some(ours) = self.class() else { return false };
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
        self.signature().is_some_and(|s| pred(&dotted(s)))
    }

    fn at_location(&self, location: &Location) -> bool {
        self.method.is_some_and(|m| location.method_id.0 == m as u64) && location.index == self.index as u64
    }

    fn this_is(&self, instance: ObjectId) -> bool {
        let (this, owned) = self.instance();
        if this.is_null() {
            // Like the JDK's agent: an event without an instance passes.
            return true;
        }
        let same = self.tag_of(this) == Some(instance.0) && !instance.is_null();
        if owned {
            self.jni.delete_local_ref(this);
        }
        same
    }

    fn exception_matches(&self, class: ReferenceTypeId, caught: bool, uncaught: bool) -> bool {
        let Some((exception, is_caught)) = self.exception else { return false };
        if !(if is_caught { caught } else { uncaught }) {
            return false;
        }
        if class.is_null() {
            return true;
        }
        match self.agent.object(self.jni, ObjectId(class.0)) {
            Ok(target) if !target.is_null() => {
                let result = self.jni.is_instance_of(exception, target);
                self.jni.delete_local_ref(target);
                result
            }
            _ => false,
        }
    }

    fn field_is(&self, declaring: ReferenceTypeId, field: FieldId) -> bool {
        let Some((class, jfield)) = self.field else { return false };
        self.tag_of(class) == Some(declaring.0)
            && crate::commands::event_request::watched_field(field) == Some(jfield as usize)
    }

    fn source_name_matches(&self, pred: &dyn Fn(&str) -> bool) -> bool {
        let Some(class) = self.class() else { return false };
        if let Ok(smap) = self.agent.jvmti.get_source_debug_extension(class)
            && smap_source_names(&smap).into_iter().any(pred)
        {
            return true;
        }
        self.agent.jvmti.get_source_file_name(class).is_ok_and(|s| pred(&s))
    }
}

// ---- matching and reporting ------------------------------------------------------------------------

/// Filters an event of `kind` and returns what it matched. Requests a count used up leave the
/// table at once; the event helper undoes their JVMTI state.
pub fn matches(agent: &Agent, kind: EventKind, subject: &dyn EventSubject) -> Option<Matches> {
    let snapshot = lock(&agent.requests).snapshot(kind)?;
    let mut expired: Vec<Arc<Request>> = Vec::new();
    let found = match_event(&snapshot, subject, &mut expired);
    if !expired.is_empty() {
        expire(agent, expired);
    }
    found
}

/// Offers an event to one request (a step's); true if it is to be reported.
fn offer_one(agent: &Agent, request: &Arc<Request>, subject: &dyn EventSubject) -> bool {
    let report = request.offer(subject) == Verdict::Report;
    if request.is_expired() {
        expire(agent, vec![request.clone()]);
    }
    report
}

fn expire(agent: &Agent, expired: Vec<Arc<Request>>) {
    {
        let mut table = lock(&agent.requests);
        for r in &expired {
            table.remove(r.kind, r.id);
        }
    }
    if let Some(helper) = agent.helper.get() {
        helper.cleanup(expired);
    }
}

thread_local! {
    /// Whether this thread is one of the agent's (asked once per thread: the answer never changes).
    static AGENT_THREAD: Cell<Option<bool>> = const { Cell::new(None) };
    /// Events waiting for the breakpoint event at their location (see the module docs).
    static PENDING: RefCell<Option<Pending>> = const { RefCell::new(None) };
}

fn on_agent_thread(agent: &Agent, jni: Jni, current: jthread) -> bool {
    AGENT_THREAD.with(|cached| match cached.get() {
        Some(known) => known,
        None => {
            let known = agent.is_agent_thread(jni, current);
            cached.set(Some(known));
            known
        }
    })
}

/// The events of one occurrence, as they are collected.
struct Batch {
    policy: SuspendPolicy,
    events: Vec<RawEvent>,
}

impl Batch {
    fn new() -> Batch {
        Batch { policy: SuspendPolicy::None, events: Vec::new() }
    }

    /// Adds an event per matched request (`make` may fail to build one).
    fn add(&mut self, m: &Matches, mut make: impl FnMut(i32) -> Option<RawEvent>) {
        let before = self.events.len();
        self.events.extend(m.request_ids.iter().filter_map(|&id| make(id)));
        if self.events.len() > before {
            self.policy = self.policy.max(m.suspend_policy);
        }
    }

    fn merge(&mut self, other: Batch) {
        self.policy = self.policy.max(other.policy);
        self.events.extend(other.events);
    }
}

struct Pending {
    method: usize,
    index: i64,
    batch: Batch,
}

/// Takes the events held back for (`method`, `index`) on this thread; any held back for another
/// place are sent first (their breakpoint did not come).
fn take_pending(agent: &Agent, jni: Jni, thread: jthread, at: Option<(usize, i64)>) -> Batch {
    let Some(pending) = PENDING.with(|p| p.borrow_mut().take()) else { return Batch::new() };
    if at == Some((pending.method, pending.index)) {
        return pending.batch;
    }
    send(agent, jni, thread, pending.batch);
    Batch::new()
}

/// Sends a batch, or holds it back when a breakpoint at the same place will report with it.
fn finish(agent: &Agent, jni: Jni, thread: jthread, method: usize, index: i64, batch: Batch) {
    if batch.events.is_empty() {
        return;
    }
    if breakpoints::is_set(method, index) {
        PENDING.with(|p| *p.borrow_mut() = Some(Pending { method, index, batch }));
    } else {
        send(agent, jni, thread, batch);
    }
}

fn send(agent: &Agent, jni: Jni, thread: jthread, batch: Batch) {
    report(agent, jni, thread, batch.policy, batch.events);
}

/// Hands matched events to the helper; if they suspend anything, waits until they are sent.
pub fn report(agent: &Agent, jni: Jni, thread: jthread, policy: SuspendPolicy, events: Vec<RawEvent>) {
    if events.is_empty() {
        return;
    }
    let release = |thread: Option<GlobalRef>, events: Vec<RawEvent>| {
        events.into_iter().for_each(|e| e.release(jni));
        if let Some(t) = thread {
            jni.delete_global_ref(t.0);
        }
    };
    let Some(helper) = agent.helper.get() else {
        release(None, events);
        return;
    };
    let death = events.iter().any(|e| matches!(e, RawEvent::VmDeath { .. }));
    // An agent thread must never wait for the helper, which may be itself. (The event thread is
    // the current thread, or null; an agent thread reporting, which only class prepares do, passes
    // null and has its answer cached already.)
    let agent_thread =
        AGENT_THREAD.with(Cell::get) == Some(true) || (!thread.is_null() && on_agent_thread(agent, jni, thread));
    if !agent_thread {
        // The debugger may invoke methods in this thread as soon as it hears of the event.
        crate::invoke::before_event(jni, thread, policy);
    }
    let event_thread = if thread.is_null() || agent_thread { None } else { global(jni, thread) };
    let wait = (policy != SuspendPolicy::None || death) && !agent_thread;
    // A suspending event suspends its own thread here, which the helper then counts: one wake-up
    // per event instead of two (the helper's "sent", then the resume).
    let self_suspend = match event_thread {
        // A thread the debugger has no ID for yet takes the helper's path, which assigns one.
        Some(t) if wait && !death => agent.existing_thread_id(thread).map(|id| (t, id)),
        _ => None,
    };
    if let Some((t, id)) = self_suspend {
        let already = agent.threads.lock().begin_self_suspend(id);
        match helper.deliver_self_suspending(policy, (t, id), events, already) {
            Ok((flag, done)) => {
                if !already {
                    flag.suspend_self(agent, thread, done);
                }
            }
            Err((t, events)) => {
                // No helper (the VM is going away): nothing was suspended, nothing will be.
                agent.threads.lock().cancel_self_suspend(id);
                release(t, events);
            }
        }
    } else if let Err((t, events)) = helper.deliver(
        policy,
        event_thread,
        events,
        wait,
        // Past the helper's bound, an application thread whose event suspends nothing waits for
        // room (see `crate::backpressure`), holding nothing: no agent lock is taken here.
        crate::backpressure::waits_for_room(agent_thread, wait),
    ) {
        release(t, events);
    }
    if policy != SuspendPolicy::None && !thread.is_null() && !agent_thread {
        crate::invoke::after_event(agent, jni, thread);
    }
}

fn global(jni: Jni, obj: jobject) -> Option<GlobalRef> {
    jni.new_global_ref(obj).ok().map(GlobalRef)
}

/// Common entry: the agent and this thread's JNI, unless the VM is dead or the event is the
/// agent's own. `thread` is the current thread (JVMTI posts these events on the thread they are
/// about).
fn enter(jni_env: *mut JNIEnv, thread: jthread) -> Option<(&'static Agent, Jni)> {
    let agent = agent()?;
    // SAFETY: the VM passes the calling thread's JNI environment to every callback.
    let jni = unsafe { Jni::from_raw(jni_env) }?;
    if agent.is_vm_dead() || (!thread.is_null() && on_agent_thread(agent, jni, thread)) {
        return None;
    }
    Some((agent, jni))
}

/// Runs `f` in a local frame, so that the references a callback makes die with it.
fn framed(jni: Jni, f: impl FnOnce()) {
    let frame = jni.push_local_frame(32);
    f();
    drop(frame);
}

// ---- thread, class and VM events -----------------------------------------------------------------------

pub unsafe extern "system" fn on_thread_start(_: *mut jvmtiEnv, jni_env: *mut JNIEnv, thread: jthread) {
    crate::guard((), || thread_event(jni_env, thread, EventKind::ThreadStart));
}

pub unsafe extern "system" fn on_thread_end(_: *mut jvmtiEnv, jni_env: *mut JNIEnv, thread: jthread) {
    crate::guard((), || thread_event(jni_env, thread, EventKind::ThreadDeath));
}

fn thread_event(jni_env: *mut JNIEnv, thread: jthread, kind: EventKind) {
    let Some((agent, jni)) = enter(jni_env, thread) else { return };
    framed(jni, || {
        let mut batch = take_pending(agent, jni, thread, None);
        if kind == EventKind::ThreadDeath {
            // Nothing held back may outlive the thread.
            send(agent, jni, thread, std::mem::replace(&mut batch, Batch::new()));
            step::thread_ended(agent, jni, thread);
        }
        let subject = Subject::new(agent, jni, thread);
        if let Some(m) = matches(agent, kind, &subject) {
            batch.add(&m, |request_id| {
                let t = global(jni, thread)?;
                Some(match kind {
                    EventKind::ThreadStart => RawEvent::ThreadStart { request_id, thread: t },
                    _ => RawEvent::ThreadDeath { request_id, thread: t },
                })
            });
        }
        send(agent, jni, thread, batch);
    });
}

pub unsafe extern "system" fn on_class_prepare(_: *mut jvmtiEnv, jni_env: *mut JNIEnv, thread: jthread, klass: jclass) {
    crate::guard((), || {
        let Some(agent) = agent() else { return };
        // SAFETY: the VM passes the calling thread's JNI environment to every callback.
        let Some(jni) = (unsafe { Jni::from_raw(jni_env) }) else { return };
        if agent.is_vm_dead() {
            return;
        }
        // Classes prepared by the agent's own threads count too (reported without a thread, as
        // the JDK's agent does).
        let ours = !thread.is_null() && on_agent_thread(agent, jni, thread);
        framed(jni, || {
            unload::class_prepared(agent, klass);
            if entry::wants_class(agent, jni, klass) {
                add_entry_breakpoints(agent, jni, klass, ours);
            }
            let event_thread = if ours { std::ptr::null_mut() } else { thread };
            let subject = Subject::of_class(agent, jni, klass);
            let Some(m) = matches(agent, EventKind::ClassPrepare, &subject) else { return };
            drop(subject);
            let mut batch = Batch::new();
            batch.add(&m, |request_id| {
                let t = if event_thread.is_null() { GlobalRef(std::ptr::null_mut()) } else { global(jni, thread)? };
                Some(RawEvent::ClassPrepare { request_id, thread: t, class: global(jni, klass)? })
            });
            send(agent, jni, event_thread, batch);
        });
    });
}

/// Sets the method entry breakpoints of a class before any of its code runs: on the event helper
/// (the work holds a lock across JVMTI calls), waiting for it.
fn add_entry_breakpoints(agent: &Agent, jni: Jni, klass: jclass, agent_thread: bool) {
    if agent_thread {
        // The helper may be this very thread: work in place if nobody holds the setup lock.
        if let Ok(_setup) = crate::events::try_setup() {
            entry::add_class(agent, jni, klass);
        } else {
            tracing::warn!("a class prepared by an agent thread may miss its method entry breakpoints");
        }
        return;
    }
    let Some(helper) = agent.helper.get() else { return };
    let Some(class) = global(jni, klass) else { return };
    helper.run_task(move |agent, jni| {
        // Bound as a whole: the closure then captures the `Send` wrapper, not its pointer.
        let class = class;
        {
            let _setup = crate::events::setup();
            entry::add_class(agent, jni, class.0);
        }
        jni.delete_global_ref(class.0);
    });
}

pub unsafe extern "system" fn on_vm_death(_: *mut jvmtiEnv, jni_env: *mut JNIEnv) {
    crate::guard((), || {
        let Some((agent, jni)) = enter(jni_env, std::ptr::null_mut()) else { return };
        // One composite: an event for each VM death request (newest first), then the automatic
        // one (request 0), as the JDK's agent sends them. JDI's users read the first event of the
        // set (nsk/jdi Event/request/request001 expects it to name their request).
        let subject = Subject::new(agent, jni, std::ptr::null_mut());
        let requested = matches(agent, EventKind::VmDeath, &subject);
        let mut events = Vec::new();
        let mut policy = SuspendPolicy::None;
        if let Some(m) = requested {
            policy = m.suspend_policy;
            events.extend(m.request_ids.into_iter().rev().map(|request_id| RawEvent::VmDeath { request_id }));
        }
        events.push(RawEvent::VmDeath { request_id: 0 });
        // Held events would keep the VM from ever exiting.
        crate::hold::release();
        crate::event_helper::unblock();
        report(agent, jni, std::ptr::null_mut(), policy, events);
        if policy != SuspendPolicy::None {
            // This thread stops at its next call into the VM while the debugger keeps it suspended...
            if let Ok(me) = agent.jvmti.get_current_thread() {
                jni.delete_local_ref(me);
            }
            // ...and once resumed, waits until the reply to the command that resumed it is written:
            // the VM exits as soon as this callback returns, and would cut that reply off.
            if let Some(session) = agent.session() {
                drop(session.order());
            }
        }
        agent.vm_dead.store(true, std::sync::atomic::Ordering::Release);
        // Nothing waits in `Thread.resume` for a debugger once the VM is going.
        agent.threads.wake_waiters();
    });
}

// ---- location events: breakpoints, steps, method entry and exit --------------------------------------

fn located(kind: EventKind, request_id: i32, thread: GlobalRef, method: jmethodID, index: i64) -> RawEvent {
    let method = method as usize;
    match kind {
        EventKind::Breakpoint => RawEvent::Breakpoint { request_id, thread, method, index },
        EventKind::SingleStep => RawEvent::SingleStep { request_id, thread, method, index },
        EventKind::MethodEntry => RawEvent::MethodEntry { request_id, thread, method, index },
        _ => RawEvent::MethodExit { request_id, thread, method, index },
    }
}

/// Adds the events of `kind` requests that `subject` (the thread at its location) matches.
fn add_located(agent: &Agent, jni: Jni, batch: &mut Batch, kind: EventKind, subject: &Subject<'_>) {
    let (Some(method), thread, index) = (subject.method, subject.thread, subject.index) else { return };
    if let Some(m) = matches(agent, kind, subject) {
        batch.add(&m, |request_id| Some(located(kind, request_id, global(jni, thread)?, method, index)));
    }
}

/// A step of the current thread completed at (`method`, `index`): offers its event and starts the
/// next step from here.
fn complete_step(
    agent: &Agent,
    jni: Jni,
    thread: jthread,
    request: &Arc<Request>,
    method: jmethodID,
    index: i64,
    batch: &mut Batch,
) {
    let subject = Subject::of_method(agent, jni, thread, method, index);
    let report = offer_one(agent, request, &subject);
    drop(subject);
    if report && let Some(t) = global(jni, thread) {
        let m = Matches { request_ids: vec![request.id], suspend_policy: request.suspend_policy };
        batch.add(&m, |request_id| Some(located(EventKind::SingleStep, request_id, t, method, index)));
    }
    step::completed(agent, jni, thread, request);
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
        framed(jni, || {
            let mut batch = take_pending(agent, jni, thread, Some((method as usize, location)));
            // A step waiting here for a return (see `step`) comes first, as its single step would.
            if let Some(request) = step::on_breakpoint(agent, jni, thread, method, location) {
                complete_step(agent, jni, thread, &request, method, location, &mut batch);
            }
            let subject = Subject::of_method(agent, jni, thread, method, location);
            if entry::is_entry(method as usize, location) {
                let mut entries = Batch::new();
                add_located(agent, jni, &mut entries, EventKind::MethodEntry, &subject);
                // JVMTI's order: the entry comes before anything else at the location.
                entries.merge(batch);
                batch = entries;
            }
            add_located(agent, jni, &mut batch, EventKind::Breakpoint, &subject);
            drop(subject);
            send(agent, jni, thread, batch);
            step::settle(agent, thread);
        });
        // After the debugger has heard of any events here (a user's breakpoint at the same place
        // included), so that a wait for it never keeps them from it.
        if crate::app_resume::is_internal(method as usize, location) {
            framed(jni, || crate::app_resume::on_breakpoint(agent, jni, thread));
        }
    });
}

pub unsafe extern "system" fn on_single_step(
    _: *mut jvmtiEnv,
    jni_env: *mut JNIEnv,
    thread: jthread,
    method: jmethodID,
    location: jlocation,
) {
    crate::guard((), || {
        let Some((agent, jni)) = enter(jni_env, thread) else { return };
        framed(jni, || {
            let mut batch = take_pending(agent, jni, thread, Some((method as usize, location)));
            if let Some(request) = step::on_single_step(agent, jni, thread, method, location) {
                complete_step(agent, jni, thread, &request, method, location, &mut batch);
            }
            finish(agent, jni, thread, method as usize, location, batch);
            step::settle(agent, thread);
        });
    });
}

pub unsafe extern "system" fn on_frame_pop(
    _: *mut jvmtiEnv,
    jni_env: *mut JNIEnv,
    thread: jthread,
    _method: jmethodID,
    by_exception: jboolean,
) {
    crate::guard((), || {
        let Some((agent, _jni)) = enter(jni_env, thread) else { return };
        // Frame pops are only ever asked for by steps.
        step::on_frame_pop(agent, thread, by_exception != 0);
    });
}

pub unsafe extern "system" fn on_exception_catch(
    _: *mut jvmtiEnv,
    jni_env: *mut JNIEnv,
    thread: jthread,
    _method: jmethodID,
    _location: jlocation,
    _exception: jobject,
) {
    crate::guard((), || {
        let Some((agent, jni)) = enter(jni_env, thread) else { return };
        // Only steps enable catches (JDWP's ExceptionCatch is never reported). A catch comes first
        // at its location: anything held back is stale.
        framed(jni, || {
            let stale = take_pending(agent, jni, thread, None);
            send(agent, jni, thread, stale);
        });
        step::on_exception_catch(agent, thread);
    });
}

pub unsafe extern "system" fn on_method_entry(
    _: *mut jvmtiEnv,
    jni_env: *mut JNIEnv,
    thread: jthread,
    method: jmethodID,
) {
    crate::guard((), || {
        let Some((agent, jni)) = enter(jni_env, thread) else { return };
        framed(jni, || {
            // Nothing at a method's entry precedes this event: anything held back is stale.
            let mut batch = take_pending(agent, jni, thread, None);
            let start = OnceCell::new();
            let start = || *start.get_or_init(|| agent.jvmti.get_method_location(method).map_or(-1, |(s, _)| s));
            if entry::mode() == entry::Mode::Global {
                let subject = Subject::of_method(agent, jni, thread, method, 0);
                if let Some(m) = matches(agent, EventKind::MethodEntry, &subject) {
                    let index = start();
                    batch.add(&m, |id| Some(located(EventKind::MethodEntry, id, global(jni, thread)?, method, index)));
                }
            }
            if step::any_active() {
                step::on_method_entry(agent, jni, thread, method);
            }
            if !batch.events.is_empty() {
                finish(agent, jni, thread, method as usize, start(), batch);
            }
        });
    });
}

/// A `jvalue` of JNI type `ty`, objects as global references (converted by the helper).
///
/// # Safety
///
/// The member of `v` that `ty` selects is initialized.
unsafe fn raw_value(jni: Jni, ty: JavaType, v: jvalue) -> RawValue {
    // SAFETY: the caller's promise.
    RawValue::Plain(unsafe {
        match ty {
            JavaType::Boolean => Value::Boolean(v.z),
            JavaType::Byte => Value::Byte(v.b),
            JavaType::Char => Value::Char(v.c),
            JavaType::Short => Value::Short(v.s),
            JavaType::Int => Value::Int(v.i),
            JavaType::Long => Value::Long(v.j),
            JavaType::Float => Value::Float(v.f),
            JavaType::Double => Value::Double(v.d),
            JavaType::Void => Value::Void,
            JavaType::Object => {
                return RawValue::Object(if v.l.is_null() { None } else { global(jni, v.l) });
            }
        }
    })
}

pub unsafe extern "system" fn on_method_exit(
    _: *mut jvmtiEnv,
    jni_env: *mut JNIEnv,
    thread: jthread,
    method: jmethodID,
    by_exception: jboolean,
    return_value: jvalue,
) {
    crate::guard((), || {
        let Some((agent, jni)) = enter(jni_env, thread) else { return };
        // JDWP reports normal returns only.
        if by_exception != 0 {
            return;
        }
        framed(jni, || {
            let mut batch = take_pending(agent, jni, thread, None);
            let subject = Subject::of_method(agent, jni, thread, method, 0);
            let plain = matches(agent, EventKind::MethodExit, &subject);
            let with_value = matches(agent, EventKind::MethodExitWithReturnValue, &subject);
            drop(subject);
            if plain.is_none() && with_value.is_none() {
                send(agent, jni, thread, batch);
                return;
            }
            // The exiting frame is still on the stack, at its last location.
            let index = agent.jvmti.get_frame_location(thread, 0).map_or(-1, |(_, l)| l);
            if let Some(m) = plain {
                batch.add(&m, |id| Some(located(EventKind::MethodExit, id, global(jni, thread)?, method, index)));
            }
            if let Some(m) = with_value {
                let ty = agent
                    .jvmti
                    .get_method_name(method)
                    .ok()
                    .and_then(|n| JavaType::from_method_descriptor(&n.signature))
                    .unwrap_or(JavaType::Void);
                batch.add(&m, |request_id| {
                    // SAFETY: JVMTI fills the member of the method's return type.
                    let value = unsafe { raw_value(jni, ty, return_value) };
                    Some(RawEvent::MethodExitWithReturnValue {
                        request_id,
                        thread: global(jni, thread)?,
                        method: method as usize,
                        index,
                        value,
                    })
                });
            }
            send(agent, jni, thread, batch);
        });
    });
}

// ---- exceptions and watchpoints -------------------------------------------------------------------------

#[allow(clippy::too_many_arguments)]
pub unsafe extern "system" fn on_exception(
    _: *mut jvmtiEnv,
    jni_env: *mut JNIEnv,
    thread: jthread,
    method: jmethodID,
    location: jlocation,
    exception: jobject,
    catch_method: jmethodID,
    catch_location: jlocation,
) {
    crate::guard((), || {
        if crate::loader::deferred_start_pending() {
            // `onthrow`/`onuncaught`: no debugger yet, maybe this exception starts one.
            let thrown = crate::loader::ThrownException {
                method: method as usize,
                location,
                exception,
                catch: (!catch_method.is_null()).then_some((catch_method as usize, catch_location)),
            };
            crate::loader::deferred_exception(jni_env, thread, thrown);
            return;
        }
        let Some((agent, jni)) = enter(jni_env, thread) else { return };
        framed(jni, || {
            let mut batch = take_pending(agent, jni, thread, None);
            let caught = !catch_method.is_null();
            let subject = Subject::of_method(agent, jni, thread, method, location).with_exception(exception, caught);
            if let Some(m) = matches(agent, EventKind::Exception, &subject) {
                let catch = caught.then_some((catch_method as usize, catch_location));
                batch.add(&m, |request_id| {
                    Some(RawEvent::Exception {
                        request_id,
                        thread: global(jni, thread)?,
                        method: method as usize,
                        index: location,
                        exception: global(jni, exception)?,
                        catch,
                    })
                });
            }
            drop(subject);
            send(agent, jni, thread, batch);
        });
    });
}

/// What field events share.
struct FieldEvent {
    thread: jthread,
    method: jmethodID,
    location: jlocation,
    field_klass: jclass,
    object: jobject,
    field: jfieldID,
}

fn field_event(agent: &Agent, jni: Jni, kind: EventKind, e: &FieldEvent, mut value: impl FnMut() -> Option<RawValue>) {
    let mut batch = take_pending(agent, jni, e.thread, None);
    // Class filters look at the location's class; instance filters at the field's object.
    let subject = Subject::of_method(agent, jni, e.thread, e.method, e.location)
        .with_instance(e.object)
        .with_field(e.field_klass, e.field);
    if let Some(m) = matches(agent, kind, &subject) {
        batch.add(&m, |request_id| {
            let thread = global(jni, e.thread)?;
            let field_class = global(jni, e.field_klass)?;
            let object = if e.object.is_null() { None } else { Some(global(jni, e.object)?) };
            let (method, index, field) = (e.method as usize, e.location, e.field as usize);
            Some(match kind {
                EventKind::FieldAccess => {
                    RawEvent::FieldAccess { request_id, thread, method, index, field_class, field, object }
                }
                _ => RawEvent::FieldModification {
                    request_id,
                    thread,
                    method,
                    index,
                    field_class,
                    field,
                    object,
                    value: value()?,
                },
            })
        });
    }
    drop(subject);
    send(agent, jni, e.thread, batch);
}

#[allow(clippy::too_many_arguments)]
pub unsafe extern "system" fn on_field_access(
    _: *mut jvmtiEnv,
    jni_env: *mut JNIEnv,
    thread: jthread,
    method: jmethodID,
    location: jlocation,
    field_klass: jclass,
    object: jobject,
    field: jfieldID,
) {
    crate::guard((), || {
        let Some((agent, jni)) = enter(jni_env, thread) else { return };
        let e = FieldEvent { thread, method, location, field_klass, object, field };
        framed(jni, || field_event(agent, jni, EventKind::FieldAccess, &e, || None));
    });
}

#[allow(clippy::too_many_arguments)]
pub unsafe extern "system" fn on_field_modification(
    _: *mut jvmtiEnv,
    jni_env: *mut JNIEnv,
    thread: jthread,
    method: jmethodID,
    location: jlocation,
    field_klass: jclass,
    object: jobject,
    field: jfieldID,
    signature_type: std::ffi::c_char,
    new_value: jvalue,
) {
    crate::guard((), || {
        let Some((agent, jni)) = enter(jni_env, thread) else { return };
        let ty = match signature_type as u8 {
            b'Z' => JavaType::Boolean,
            b'B' => JavaType::Byte,
            b'C' => JavaType::Char,
            b'S' => JavaType::Short,
            b'I' => JavaType::Int,
            b'J' => JavaType::Long,
            b'F' => JavaType::Float,
            b'D' => JavaType::Double,
            _ => JavaType::Object,
        };
        let e = FieldEvent { thread, method, location, field_klass, object, field };
        // SAFETY: JVMTI fills the member of the field's type, which `signature_type` names.
        framed(jni, || {
            field_event(agent, jni, EventKind::FieldModification, &e, || Some(unsafe { raw_value(jni, ty, new_value) }))
        });
    });
}

// ---- monitors ---------------------------------------------------------------------------------------------

/// What a monitor event carries besides its thread, object and location.
#[derive(Clone, Copy)]
enum MonitorDetail {
    Enter,
    Entered,
    Wait(jlong),
    Waited(bool),
}

fn monitor_event(jni_env: *mut JNIEnv, thread: jthread, object: jobject, detail: MonitorDetail) {
    let Some((agent, jni)) = enter(jni_env, thread) else { return };
    framed(jni, || {
        let mut batch = take_pending(agent, jni, thread, None);
        // Located where the thread is: its current frame (native `Object.wait` for waits).
        let Ok((method, index)) = agent.jvmti.get_frame_location(thread, 0) else {
            send(agent, jni, thread, batch);
            return;
        };
        let kind = match detail {
            MonitorDetail::Enter => EventKind::MonitorContendedEnter,
            MonitorDetail::Entered => EventKind::MonitorContendedEntered,
            MonitorDetail::Wait(_) => EventKind::MonitorWait,
            MonitorDetail::Waited(_) => EventKind::MonitorWaited,
        };
        let subject = Subject::of_method(agent, jni, thread, method, index);
        // Class filters of waits look at the monitor's class (the wait itself is in Object); those
        // of contended monitors at the location's, as the JDK's agent does.
        let subject = match detail {
            MonitorDetail::Wait(_) | MonitorDetail::Waited(_) => subject.with_class_of(object),
            _ => subject,
        };
        if let Some(m) = matches(agent, kind, &subject) {
            batch.add(&m, |request_id| {
                let (thread, object, method) = (global(jni, thread)?, global(jni, object)?, method as usize);
                Some(match detail {
                    MonitorDetail::Enter => {
                        RawEvent::MonitorContendedEnter { request_id, thread, object, method, index }
                    }
                    MonitorDetail::Entered => {
                        RawEvent::MonitorContendedEntered { request_id, thread, object, method, index }
                    }
                    MonitorDetail::Wait(timeout) => {
                        RawEvent::MonitorWait { request_id, thread, object, method, index, timeout }
                    }
                    MonitorDetail::Waited(timed_out) => {
                        RawEvent::MonitorWaited { request_id, thread, object, method, index, timed_out }
                    }
                })
            });
        }
        drop(subject);
        send(agent, jni, thread, batch);
    });
}

pub unsafe extern "system" fn on_monitor_contended_enter(
    _: *mut jvmtiEnv,
    jni_env: *mut JNIEnv,
    thread: jthread,
    object: jobject,
) {
    crate::guard((), || monitor_event(jni_env, thread, object, MonitorDetail::Enter));
}

pub unsafe extern "system" fn on_monitor_contended_entered(
    _: *mut jvmtiEnv,
    jni_env: *mut JNIEnv,
    thread: jthread,
    object: jobject,
) {
    crate::guard((), || monitor_event(jni_env, thread, object, MonitorDetail::Entered));
}

pub unsafe extern "system" fn on_monitor_wait(
    _: *mut jvmtiEnv,
    jni_env: *mut JNIEnv,
    thread: jthread,
    object: jobject,
    timeout: jlong,
) {
    crate::guard((), || monitor_event(jni_env, thread, object, MonitorDetail::Wait(timeout)));
}

pub unsafe extern "system" fn on_monitor_waited(
    _: *mut jvmtiEnv,
    jni_env: *mut JNIEnv,
    thread: jthread,
    object: jobject,
    timed_out: jboolean,
) {
    crate::guard((), || monitor_event(jni_env, thread, object, MonitorDetail::Waited(timed_out != 0)));
}

#[cfg(test)]
mod tests {
    use super::{dotted, smap_source_names};

    #[test]
    fn signatures_read_as_dotted_names() {
        assert_eq!(dotted("Ljava/lang/String;"), "java.lang.String");
        assert_eq!(dotted("LEvents$Late;"), "Events$Late");
        assert_eq!(dotted("[I"), "[I");
    }

    #[test]
    fn smap_file_sections_name_the_sources() {
        let smap = "SMAP\nHello.java\nJSP\n*S JSP\n*F\n+ 0 Hello.jsp\npages/Hello.jsp\n1 Footer.jsp\n*L\n1#0:5\n*E\n";
        assert_eq!(smap_source_names(smap), ["Hello.jsp", "Footer.jsp"]);
        assert!(smap_source_names("SMAP\nA.java\nJava\n*E\n").is_empty());
    }
}
