//! Monitor contention (`MonitorStart`, `MonitorStop`, `MonitorReport`, and the live
//! `MonitorContended` event): JVMTI's `MonitorContendedEnter`/`MonitorContendedEntered`.
//!
//! At *enter* (the thread is about to block) the callback, on the blocking thread, notes the time,
//! the monitor's class, the waiting stack, and who owns the monitor (`GetObjectMonitorUsage`, or
//! for a virtual owner the mounted virtual threads' owned monitors: see `owner_of`) with the
//! owner's stack at that moment. Finding none on a VM with virtual threads, it queues the monitor
//! for the profiler thread, whose look at every virtual thread finds an owner that holds it
//! unmounted ([`super::unmounted`]); the *entered* callback picks up what the look found. At
//! *entered* it adds the blocked time to the site: the
//! monitor's class and the waiting stack (JVMTI does not say where a monitor object was
//! allocated; the waiting stack tells the locks apart well enough, as `synchronized` sites are
//! where contention is fixed). Per site: count, total and maximum blocked nanoseconds, and the
//! owners seen (thread, stack, times).
//!
//! Runs in a JVMTI environment of its own, created on first need, whose two events are enabled
//! only while recording or while a debugger subscribed to the live event. Callbacks keep the
//! pending enter in a thread-local (a thread blocks on one monitor at a time) and take the lock
//! only around plain data. Owner threads are kept as JNI weak global references, turned into JDWP
//! thread IDs at report time on the command thread (never in a callback: making an ID takes the
//! agent's ID table lock, which must not be held across VM calls on application threads).

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use jdwp_protocol::ErrorCode;
use jni_sys::{JNIEnv, jobject};

use super::alloc::RawStack;
use super::mounted::Mounts;
use super::unmounted::{FoundOwner, OwnerLooks, Picked, Ticket};
use crate::agent::lock_order::Ranked;
use crate::agent::{Agent, lock};
use crate::jni::Jni;
use crate::jvmti::Jvmti;
use crate::jvmti::sys::{self, jthread, jvmtiCapabilities, jvmtiEnv, jvmtiEventCallbacks};

/// Frames recorded when `MonitorStart` asks for the default (0).
pub const DEFAULT_MAX_DEPTH: i32 = 32;

/// A JNI weak global reference, kept as an address (deleted when its table is cleared).
pub type Weak = usize;

/// An owner of a contended monitor, at the stack it held it from.
#[derive(Debug, Clone)]
pub struct Owner {
    pub thread: Weak,
    pub name: String,
    pub stack: RawStack,
    pub times: i64,
}

/// Contention on monitors of one class at one waiting stack.
#[derive(Debug, Clone, Default)]
pub struct MonitorSite {
    pub class_signature: String,
    pub stack: RawStack,
    pub contended_count: i64,
    pub total_blocked_nanos: i64,
    pub max_blocked_nanos: i64,
    pub owners: Vec<Owner>,
}

/// One contended entry, as the callbacks saw it.
#[derive(Debug, Clone)]
pub struct Contention {
    pub class_signature: String,
    pub stack: RawStack,
    pub blocked_nanos: i64,
    /// Owner thread (weak reference), its name and stack, when known.
    pub owner: Option<(Weak, String, RawStack)>,
}

/// The recorded sites: pure data, unit-tested without a VM.
#[derive(Debug, Default)]
pub struct MonitorTable {
    pub sites: Vec<MonitorSite>,
    index: HashMap<(String, RawStack), usize>,
}

impl MonitorTable {
    /// Adds one contention; returns the weak reference it did not keep (an owner already known
    /// under the same name and stack), for the caller to delete.
    pub fn record(&mut self, c: Contention) -> Option<Weak> {
        let next = self.sites.len();
        let key = (c.class_signature, c.stack);
        let i = *self.index.entry(key.clone()).or_insert(next);
        if i == next {
            self.sites.push(MonitorSite { class_signature: key.0, stack: key.1, ..Default::default() });
        }
        let site = &mut self.sites[i];
        site.contended_count += 1;
        site.total_blocked_nanos = site.total_blocked_nanos.saturating_add(c.blocked_nanos);
        site.max_blocked_nanos = site.max_blocked_nanos.max(c.blocked_nanos);
        let (thread, name, stack) = c.owner?;
        match site.owners.iter_mut().find(|o| o.name == name && o.stack == stack) {
            Some(o) => {
                o.times += 1;
                Some(thread)
            }
            None => {
                site.owners.push(Owner { thread, name, stack, times: 1 });
                None
            }
        }
    }

    /// Sites by decreasing total blocked time.
    pub fn sorted_sites(&self) -> Vec<&MonitorSite> {
        let mut sites: Vec<&MonitorSite> = self.sites.iter().collect();
        sites.sort_by_key(|s| std::cmp::Reverse(s.total_blocked_nanos));
        sites
    }

    /// Every weak reference the table holds.
    fn weak_refs(&self) -> impl Iterator<Item = Weak> + '_ {
        self.sites.iter().flat_map(|s| s.owners.iter().map(|o| o.thread))
    }
}

/// A contention for the live event stream: the blocked thread, the monitor and the owner as weak
/// references (0 when unknown), turned into IDs by the thread that sends the event.
#[derive(Debug, Clone)]
pub struct LiveContention {
    pub thread: Weak,
    pub monitor: Weak,
    pub owner: Weak,
    pub class_signature: String,
    pub blocked_nanos: i64,
}

#[derive(Default)]
struct State {
    env: Option<Jvmti>,
    /// How to find a carrier's mounted virtual thread, once a virtual owner was looked for.
    mounts: Option<Mounts>,
    recording: bool,
    max_depth: i32,
    table: MonitorTable,
    live: Vec<LiveContention>,
    /// Contentions whose owner may hold the monitor unmounted, for the profiler thread's looks
    /// (monitors as JNI global references).
    looks: OwnerLooks<usize, FoundOwner>,
}

/// Whether contentions wait in `State::looks`' queue (updated under the state's lock), so that the
/// profiler thread takes no lock for them while there are none.
static LOOKS_QUEUED: AtomicBool = AtomicBool::new(false);

/// What the agent keeps for monitor profiling (`agent.profilers.monitors`), reached from the
/// monitor callbacks too.
#[derive(Default)]
struct Monitors {
    /// A leaf lock, never held across a VM call.
    state: Ranked<State>,
    /// Whether a debugger subscribed to the live `MonitorContended` event.
    live_wanted: AtomicBool,
}

fn monitors() -> Option<&'static Monitors> {
    crate::agent::agent()?.profilers.monitors.get_or_init(Monitors::default)
}

/// Whether a debugger subscribed to the live event (no, before the agent exists).
fn live_wanted() -> bool {
    monitors().is_some_and(|m| m.live_wanted.load(Ordering::Acquire))
}
/// Live events queued at most (a debugger that subscribes but never reads loses the oldest).
const LIVE_QUEUE_MAX: usize = 10_000;

/// Runs `f` on the profiler's state (on an empty one before the agent exists).
fn with_state<T>(f: impl FnOnce(&mut State) -> T) -> T {
    match monitors() {
        Some(monitors) => f(&mut lock(&monitors.state)),
        None => f(&mut State::default()),
    }
}

/// What the blocked thread noted at enter.
struct Pending {
    start: Instant,
    class_signature: String,
    stack: RawStack,
    owner: Option<(Weak, String, RawStack)>,
    /// The contention queued for a look at the virtual threads (its owner was not found).
    ticket: Option<Ticket>,
}

thread_local! {
    // Thread-local: per-thread scratch between a contended enter and its entered event.
    static PENDING: RefCell<Option<Pending>> = const { RefCell::new(None) };
}

fn env(agent: &Agent) -> Result<Jvmti, ErrorCode> {
    if let Some(env) = with_state(|s| s.env) {
        return Ok(env);
    }
    let env = agent.vm.get_jvmti(sys::JVMTI_VERSION_11)?;
    let mut caps = jvmtiCapabilities::default();
    caps.set_can_generate_monitor_events(true).set_can_get_monitor_info(true);
    if let Err(e) = env.add_capabilities(&caps) {
        // SAFETY: just created; no handle escapes.
        let _ = unsafe { env.dispose_environment() };
        tracing::warn!(error = %e, "no monitor events in this VM");
        return Err(ErrorCode::NOT_IMPLEMENTED);
    }
    // SAFETY: the struct is a plain table of `Option<fn>`; all-zero bytes are all `None`.
    let mut callbacks: jvmtiEventCallbacks = unsafe { std::mem::zeroed() };
    callbacks.MonitorContendedEnter = Some(on_contended_enter);
    callbacks.MonitorContendedEntered = Some(on_contended_entered);
    env.set_event_callbacks(&callbacks)?;
    with_state(|s| s.env = Some(env));
    Ok(env)
}

/// Enables the events exactly while recording or subscribed.
fn sync_events(env: Jvmti) -> Result<(), ErrorCode> {
    let wanted = with_state(|s| s.recording) || live_wanted();
    for event in [sys::JVMTI_EVENT_MONITOR_CONTENDED_ENTER, sys::JVMTI_EVENT_MONITOR_CONTENDED_ENTERED] {
        env.set_event_notification_mode(wanted, event, std::ptr::null_mut())?;
    }
    Ok(())
}

/// Starts recording (discarding earlier sites).
pub fn start(agent: &Agent, jni: Jni, max_depth: i32) -> Result<(), ErrorCode> {
    if max_depth < 0 {
        return Err(ErrorCode::ILLEGAL_ARGUMENT);
    }
    let env = env(agent)?;
    let (old, looks) = with_state(|s| {
        s.recording = true;
        s.max_depth = if max_depth == 0 { DEFAULT_MAX_DEPTH } else { max_depth };
        (std::mem::take(&mut s.table), clear_looks(s))
    });
    delete_weak_refs(jni, old.weak_refs());
    release_looks(jni, looks);
    // Owners held unmounted are looked for on the profiler thread.
    if agent.supports_virtual_threads()
        && let Ok(profiler) = super::profiler()
    {
        let _ = profiler.ensure_thread(agent, jni);
    }
    sync_events(env)
}

/// Empties the looks' queue and table (under the state's lock); what they held, to release.
fn clear_looks(s: &mut State) -> (Vec<usize>, Vec<FoundOwner>) {
    LOOKS_QUEUED.store(false, Ordering::Release);
    s.looks.clear()
}

fn release_looks(jni: Jni, (monitors, owners): (Vec<usize>, Vec<FoundOwner>)) {
    for m in monitors {
        jni.delete_global_ref(m as jobject);
    }
    delete_weak_refs(jni, owners.into_iter().map(|o| o.0));
}

/// When the profiler thread should look for owners that hold monitors unmounted: `None` while no
/// contention waits for one.
pub fn next_owner_look() -> Option<Instant> {
    if !LOOKS_QUEUED.load(Ordering::Acquire) {
        return None;
    }
    with_state(|s| s.looks.next_look(Instant::now()))
}

/// On the profiler thread: one look for the owners of every contention queued by now, when one
/// is due (see `unmounted`). Queued contentions are dropped once nothing records them.
pub fn look_for_owners(agent: &Agent, jni: Jni) {
    if !LOOKS_QUEUED.load(Ordering::Acquire) {
        return;
    }
    let started = Instant::now();
    let wanted = live_wanted();
    let (batch, depth, dropped) = with_state(|s| {
        if !s.recording && !wanted {
            return (Vec::new(), 0, Some(clear_looks(s)));
        }
        let batch = s.looks.take(started);
        if s.looks.next_look(started).is_none() {
            LOOKS_QUEUED.store(false, Ordering::Release);
        }
        (batch, s.max_depth, None)
    });
    if let Some(dropped) = dropped {
        release_looks(jni, dropped);
    }
    if batch.is_empty() {
        return;
    }
    let depth = if depth == 0 { DEFAULT_MAX_DEPTH } else { depth };
    let monitors: Vec<jobject> = batch.iter().map(|&(_, m)| m as jobject).collect();
    let found = super::unmounted::find_owners(agent, jni, &monitors, depth);
    let ended = Instant::now();
    for m in monitors {
        jni.delete_global_ref(m);
    }
    let found = batch.iter().map(|&(ticket, _)| ticket).zip(found).collect();
    let unclaimed = with_state(|s| s.looks.file(found, started, ended));
    delete_weak_refs(jni, unclaimed.into_iter().map(|o| o.0));
    tracing::debug!(contentions = batch.len(), took = ?ended - started, "monitor owners: looked at the virtual threads");
}

/// Queues a contention whose owner was not found for the profiler thread's next look (only on a
/// VM with virtual threads, where the owner may hold the monitor unmounted).
fn queue_look(jni: Jni, object: jobject) -> Option<Ticket> {
    let agent = crate::agent::agent()?;
    // Known once a virtual thread exists and `owner_of` looked among the mounted ones.
    if !agent.supports_virtual_threads() || agent.memo.virtual_thread_class.get().is_none() {
        return None;
    }
    let profiler = super::profiler().ok()?;
    let global = jni.new_global_ref(object).ok().filter(|g| !g.is_null())?;
    let queued = with_state(|s| {
        let queued = s.looks.queue(global as usize);
        if queued.is_ok() {
            LOOKS_QUEUED.store(true, Ordering::Release);
        }
        queued
    });
    match queued {
        Ok(ticket) => {
            profiler.wake();
            Some(ticket)
        }
        Err(_) => {
            jni.delete_global_ref(global);
            None
        }
    }
}

/// Stops recording; the sites stay for the report.
pub fn stop() -> Result<(), ErrorCode> {
    let env = with_state(|s| {
        s.recording = false;
        s.env
    });
    match env {
        Some(env) => sync_events(env),
        None => Ok(()),
    }
}

/// Turns the live event on or off (prof1's event stream calls this on (un)subscription).
pub fn set_live(agent: &Agent, wanted: bool) -> Result<(), ErrorCode> {
    if let Some(monitors) = monitors() {
        monitors.live_wanted.store(wanted, Ordering::Release);
    }
    if !wanted {
        with_state(|s| s.live.clear());
    }
    let env = if wanted { Some(env(agent)?) } else { with_state(|s| s.env) };
    match env {
        Some(env) => sync_events(env),
        None => Ok(()),
    }
}

/// Turns the live contentions queued since the last call into `MonitorContended` events on the
/// stream (the profiler thread, which may make IDs: it is an agent thread, never suspended).
pub fn flush_live(agent: &Agent, jni: Jni, events: &super::events::EventStream) {
    use jdwp_protocol::ThreadId;
    use jdwp_protocol::commands::profiler::{ProfilerEvent, ProfilerEventKind};
    let live = with_state(|s| std::mem::take(&mut s.live));
    if live.is_empty() {
        return;
    }
    let wanted = events.wants(ProfilerEventKind::MonitorContended);
    let Ok(_frame) = jni.push_local_frame(16) else { return };
    for c in live {
        if wanted {
            let local = |w: Weak| if w == 0 { std::ptr::null_mut() } else { jni.new_local_ref(w as jobject) };
            let (thread, monitor, owner) = (local(c.thread), local(c.monitor), local(c.owner));
            let thread_id = |t: jobject| {
                if t.is_null() { ThreadId::NULL } else { agent.thread_id(jni, t).unwrap_or(ThreadId::NULL) }
            };
            let monitor_id = if monitor.is_null() { None } else { agent.tagged_object(jni, monitor).ok() };
            if let Some(monitor) = monitor_id {
                events.push(ProfilerEvent::MonitorContended {
                    thread: thread_id(thread),
                    monitor,
                    class_signature: c.class_signature,
                    owner: thread_id(owner),
                    blocked_nanos: c.blocked_nanos,
                });
            }
            for l in [thread, monitor, owner] {
                if !l.is_null() {
                    jni.delete_local_ref(l);
                }
            }
        }
        delete_weak_refs(jni, [c.thread, c.monitor, c.owner].into_iter());
    }
}

/// Whether recording is on.
pub fn recording() -> bool {
    with_state(|s| s.recording)
}

/// Whether recording is on, and the sites by decreasing blocked time (owners still as weak
/// references: resolve them before [`reset`]).
pub fn report() -> (bool, Vec<MonitorSite>) {
    with_state(|s| (s.recording, s.table.sorted_sites().into_iter().cloned().collect()))
}

/// Discards the recorded sites.
pub fn reset(jni: Jni) {
    let (old, looks) = with_state(|s| (std::mem::take(&mut s.table), clear_looks(s)));
    delete_weak_refs(jni, old.weak_refs());
    release_looks(jni, looks);
}

/// Stops recording and the live event (the debugger left).
pub fn session_ended(agent: &Agent) {
    let _ = stop();
    let _ = set_live(agent, false);
}

/// Releases what a pending contention held (one replaced without its entered event).
fn release_pending(jni: Jni, pending: Pending) {
    if let Some((w, _, _)) = pending.owner {
        delete_weak_refs(jni, std::iter::once(w));
    }
    if let Some(ticket) = pending.ticket {
        match with_state(|s| s.looks.pick(ticket)) {
            Picked::Owner((w, _, _)) => delete_weak_refs(jni, std::iter::once(w)),
            Picked::Unlooked(monitor) => jni.delete_global_ref(monitor as jobject),
            Picked::Nothing => {}
        }
    }
}

fn delete_weak_refs(jni: Jni, refs: impl Iterator<Item = Weak>) {
    for weak in refs {
        if weak != 0 {
            jni.delete_weak_global_ref(weak as jobject);
        }
    }
}

/// A JNI weak global reference to `obj` (0 when null or refused).
fn weak(jni: Jni, obj: jobject) -> Weak {
    if obj.is_null() {
        return 0;
    }
    jni.new_weak_global_ref(obj).map(|w| w as Weak).unwrap_or(0)
}

fn stack_of(env: Jvmti, thread: jthread, depth: i32) -> RawStack {
    match env.get_stack_trace(thread, 0, depth) {
        Ok(frames) => frames.iter().map(|f| (f.method as usize, f.location)).collect(),
        Err(_) => Vec::new(),
    }
}

/// The thread that owns `object`'s monitor, as a local reference. `GetObjectMonitorUsage` names
/// platform threads only from JDK 23 on (JDK-8328083), so when it names none on a VM with virtual
/// threads, the owner is looked for among the virtual threads mounted now, by their owned monitors
/// (the agent's environment, which supports virtual threads). A virtual thread that holds the
/// monitor unmounted (JDK 24+: it blocks or sleeps inside `synchronized`) is not found here: only
/// a heap walk finds it, too slow for the blocking thread; the caller queues such a contention for
/// the profiler thread's look ([`queue_look`]).
fn owner_of(env: Jvmti, jni: Jni, object: jobject) -> Option<jthread> {
    if let Ok(usage) = env.get_object_monitor_usage(object)
        && !usage.owner.is_null()
    {
        return Some(usage.owner);
    }
    let agent = crate::agent::agent()?;
    if !agent.supports_virtual_threads() {
        return None;
    }
    let mounts = match with_state(|s| s.mounts) {
        Some(mounts) => mounts,
        None => {
            let mounts = Mounts::new(agent, jni)?;
            with_state(|s| s.mounts = Some(mounts));
            mounts
        }
    };
    let carriers = agent.jvmti.get_all_threads().ok()?;
    let mut found = None;
    for &carrier in carriers.iter() {
        if found.is_none()
            && let Some(vthread) = mounts.virtual_on(jni, carrier)
        {
            let owns = agent.jvmti.get_owned_monitor_info(vthread).is_ok_and(|monitors| {
                let hit = monitors.iter().any(|&m| jni.is_same_object(m, object));
                monitors.iter().for_each(|&m| jni.delete_local_ref(m));
                hit
            });
            if owns {
                found = Some(vthread);
            } else {
                jni.delete_local_ref(vthread);
            }
        }
        jni.delete_local_ref(carrier);
    }
    found
}

unsafe extern "system" fn on_contended_enter(
    jvmti_env: *mut jvmtiEnv,
    jni_env: *mut JNIEnv,
    thread: jthread,
    object: jobject,
) {
    crate::guard((), || {
        // SAFETY: the VM passes the environment the callbacks were set on, and the calling
        // thread's JNI environment.
        let (Some(env), Some(jni)) = (unsafe { Jvmti::from_raw(jvmti_env) }, unsafe { Jni::from_raw(jni_env) }) else {
            return;
        };
        let (recording, depth) = with_state(|s| (s.recording, s.max_depth));
        if !recording && !live_wanted() {
            return;
        }
        let depth = if depth == 0 { DEFAULT_MAX_DEPTH } else { depth };
        let start = Instant::now();
        // The owner first, with its stack: it may let go at any moment (this thread's own stack
        // and the monitor's class stay as they are while it waits).
        let owner = owner_of(env, jni, object).map(|owner| {
            let owner_stack = stack_of(env, owner, depth);
            let name = env.get_thread_info(owner).map(|i| i.name).unwrap_or_default();
            let w = weak(jni, owner);
            jni.delete_local_ref(owner);
            (w, name, owner_stack)
        });
        let class_signature = match jni.get_object_class(object) {
            Ok(class) => {
                let s = env.get_class_signature(class).map(|s| s.0).unwrap_or_else(|_| "L?;".into());
                jni.delete_local_ref(class);
                s
            }
            Err(_) => "L?;".into(),
        };
        let stack = stack_of(env, thread, depth);
        // No owner named: it may be a virtual thread that holds the monitor unmounted, which only
        // a look at every virtual thread finds (on the profiler thread, not here).
        let ticket = if owner.is_none() { queue_look(jni, object) } else { None };
        PENDING.with(|p| {
            if let Some(old) = p.borrow_mut().replace(Pending { start, class_signature, stack, owner, ticket }) {
                release_pending(jni, old);
            }
        });
    });
}

unsafe extern "system" fn on_contended_entered(
    _jvmti_env: *mut jvmtiEnv,
    jni_env: *mut JNIEnv,
    thread: jthread,
    object: jobject,
) {
    crate::guard((), || {
        // SAFETY: the calling thread's JNI environment.
        let Some(jni) = (unsafe { Jni::from_raw(jni_env) }) else { return };
        let Some(mut pending) = PENDING.with(|p| p.borrow_mut().take()) else { return };
        if let Some(ticket) = pending.ticket.take() {
            match with_state(|s| s.looks.pick(ticket)) {
                // A ticket is taken only when no owner was named at enter.
                Picked::Owner(found) => pending.owner = Some(found),
                Picked::Unlooked(monitor) => jni.delete_global_ref(monitor as jobject),
                Picked::Nothing => {}
            }
        }
        let blocked_nanos = i64::try_from(pending.start.elapsed().as_nanos()).unwrap_or(i64::MAX);
        let live = live_wanted().then(|| LiveContention {
            thread: weak(jni, thread),
            monitor: weak(jni, object),
            owner: pending.owner.as_ref().map_or(0, |o| weak(jni, jni.new_local_ref(o.0 as jobject))),
            class_signature: pending.class_signature.clone(),
            blocked_nanos,
        });
        let contention = Contention {
            class_signature: pending.class_signature,
            stack: pending.stack,
            blocked_nanos,
            owner: pending.owner,
        };
        let mut unused = Vec::new();
        with_state(|s| {
            if s.recording {
                unused.extend(s.table.record(contention));
            } else if let Some((w, _, _)) = contention.owner {
                unused.push(w);
            }
            if let Some(live) = live {
                if s.live.len() >= LIVE_QUEUE_MAX {
                    let dropped = s.live.remove(0);
                    unused.extend([dropped.thread, dropped.monitor, dropped.owner]);
                }
                s.live.push(live);
            }
        });
        delete_weak_refs(jni, unused.into_iter());
        if live_wanted()
            && let Ok(profiler) = super::profiler()
        {
            profiler.wake();
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn contention(class: &str, stack: RawStack, nanos: i64, owner: Option<(Weak, &str)>) -> Contention {
        Contention {
            class_signature: class.into(),
            stack,
            blocked_nanos: nanos,
            owner: owner.map(|(w, n)| (w, n.to_owned(), vec![(9, 9)])),
        }
    }

    #[test]
    fn sites_aggregate_blocked_time_and_owners() {
        let mut t = MonitorTable::default();
        let a = vec![(1, 2)];
        assert_eq!(t.record(contention("LLock;", a.clone(), 100, Some((11, "holder")))), None);
        // The same owner again: counted, and its second weak reference handed back.
        assert_eq!(t.record(contention("LLock;", a.clone(), 300, Some((12, "holder")))), Some(12));
        assert_eq!(t.record(contention("LLock;", a.clone(), 50, Some((13, "other")))), None);
        assert_eq!(t.record(contention("LOther;", a.clone(), 1000, None)), None);
        let sites = t.sorted_sites();
        assert_eq!(sites[0].class_signature, "LOther;");
        let lock = sites[1];
        assert_eq!((lock.contended_count, lock.total_blocked_nanos, lock.max_blocked_nanos), (3, 450, 300));
        assert_eq!(lock.owners.len(), 2);
        assert_eq!((lock.owners[0].name.as_str(), lock.owners[0].times, lock.owners[0].thread), ("holder", 2, 11));
        assert_eq!(t.weak_refs().collect::<Vec<_>>(), vec![11, 13]);
    }
}
