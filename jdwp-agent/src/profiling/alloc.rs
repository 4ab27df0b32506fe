//! Allocation sites (`AllocStart`, `AllocStop`, `AllocReport`): JVMTI's heap sampling
//! (`SampledObjectAlloc`, after `SetHeapSamplingInterval`) with the allocating stack, aggregated per
//! site (stack + class), with how much of it is still alive.
//!
//! Runs in a JVMTI environment of its own, created at the first `AllocStart`, so that its object
//! tags (one per sampled object, to see it freed) never mix with the debugger's object IDs, which
//! are tags of the main environment. `SampledObjectAlloc` is enabled only while sampling.
//!
//! `ObjectFree` is enabled once, with the environment, and the environment is never disposed:
//! HotSpot 17 deadlocks when a Java thread enables or disables `ObjectFree`, sets callbacks or
//! disposes of an environment (each first flushes the pending `ObjectFree` events) while the
//! service thread is posting them and a safepoint is pending. The flushing thread waits in the VM
//! without letting the safepoint through, and the poster waits for the safepoint (seen in CI: the
//! transport thread disabling `ObjectFree` in `AllocReport`, a contended-enter callback's
//! `GetObjectMonitorUsage` asking for the safepoint). A reset therefore only forgets the table:
//! tags of objects sampled before stay in the environment until those objects die, and their
//! frees are ignored. Idle, the cost is the `ObjectFree` events of those objects.
//!
//! Sampling is statistical: an object of `size` bytes is sampled with probability
//! `p = 1 - exp(-size / interval)` (the VM picks sampling points by a geometric law of mean
//! `interval` bytes), so each sample stands for `1/p` objects and `size/p` bytes. With interval 0
//! every allocation is sampled (`p = 1`).
//!
//! The sampling callback runs on the allocating thread: it takes the stack and the class name (VM
//! calls) and tags the object before taking the lock, which guards plain data only (the locking
//! rules of `agent.rs`). `ObjectFree` may run inside a collection: it only takes the same lock.

use std::collections::HashMap;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicI64, Ordering};

use jdwp_protocol::ErrorCode;
use jni_sys::{JNIEnv, jclass, jobject};

use crate::agent::lock_order::Ranked;
use crate::agent::{Agent, lock};
use crate::jvmti::Jvmti;
use crate::jvmti::sys::{self, jlocation, jlong, jthread, jvmtiCapabilities, jvmtiEnv, jvmtiEventCallbacks};

/// Frames recorded when `AllocStart` asks for the default (0).
pub const DEFAULT_MAX_DEPTH: i32 = 64;

/// A stack as recorded: (method, bytecode index), innermost first.
pub type RawStack = Vec<(usize, jlocation)>;

/// One allocation site and what was allocated there (estimated from the samples).
#[derive(Debug, Clone, Default)]
pub struct Site {
    pub stack: RawStack,
    pub class_signature: String,
    pub samples: i64,
    pub allocated_count: f64,
    pub allocated_bytes: f64,
    pub live_count: f64,
    pub live_bytes: f64,
}

/// What the sampler knows: pure data, unit-tested without a VM.
#[derive(Debug, Default)]
pub struct AllocTable {
    pub sites: Vec<Site>,
    index: HashMap<(RawStack, String), usize>,
    /// Tag of a sampled object still alive → (site, weight in objects, weight in bytes).
    live: HashMap<jlong, (usize, f64, f64)>,
    pub samples: i64,
}

/// How many objects and bytes one sample of `size` bytes stands for at `interval`.
pub fn sample_weight(size: i64, interval: i32) -> (f64, f64) {
    let size = size.max(1) as f64;
    if interval <= 0 {
        return (1.0, size);
    }
    let p = 1.0 - (-size / f64::from(interval)).exp();
    let p = p.max(f64::MIN_POSITIVE);
    (1.0 / p, size / p)
}

impl AllocTable {
    /// Records one sample; `tag` is the object's tag if it is tracked for liveness.
    pub fn record(&mut self, stack: RawStack, class_signature: String, size: i64, interval: i32, tag: Option<jlong>) {
        let (count, bytes) = sample_weight(size, interval);
        let key = (stack, class_signature);
        // The common case, a site seen before, allocates nothing.
        let site = match self.index.get(&key) {
            Some(&site) => site,
            None => {
                let site = self.sites.len();
                self.sites.push(Site { stack: key.0.clone(), class_signature: key.1.clone(), ..Default::default() });
                self.index.insert(key, site);
                site
            }
        };
        let s = &mut self.sites[site];
        s.samples += 1;
        s.allocated_count += count;
        s.allocated_bytes += bytes;
        if let Some(tag) = tag {
            s.live_count += count;
            s.live_bytes += bytes;
            self.live.insert(tag, (site, count, bytes));
        }
        self.samples += 1;
    }

    /// A tracked object was freed.
    pub fn freed(&mut self, tag: jlong) {
        if let Some((site, count, bytes)) = self.live.remove(&tag)
            && let Some(s) = self.sites.get_mut(site)
        {
            s.live_count = (s.live_count - count).max(0.0);
            s.live_bytes = (s.live_bytes - bytes).max(0.0);
        }
    }

    /// Sites by decreasing allocated bytes.
    pub fn sorted_sites(&self) -> Vec<&Site> {
        let mut sites: Vec<&Site> = self.sites.iter().collect();
        sites.sort_by(|a, b| b.allocated_bytes.total_cmp(&a.allocated_bytes));
        sites
    }
}

/// The sampler's state.
#[derive(Default)]
struct State {
    /// Counts `AllocStart`s, so that a sample taken for an earlier run is not recorded in a later one.
    run: u64,
    running: bool,
    interval: i32,
    max_depth: i32,
    table: AllocTable,
}

/// What the agent keeps for the sampler (`agent.profilers.alloc`), reached from the sampler's
/// own JVMTI callbacks too.
struct Sampler {
    /// A leaf lock, never held across a VM call.
    state: Ranked<State>,
    /// The sampler's environment, created at the first `AllocStart` and kept for the VM's life.
    env: OnceLock<Jvmti>,
    /// Tags for sampled objects (in the sampler's environment only), never reused; 0 is no tag.
    next_tag: AtomicI64,
}

impl Default for Sampler {
    fn default() -> Sampler {
        Sampler { state: Ranked::new(State::default()), env: OnceLock::new(), next_tag: AtomicI64::new(1) }
    }
}

fn sampler() -> Option<&'static Sampler> {
    crate::agent::agent()?.profilers.alloc.get_or_init(Sampler::default)
}

/// Runs `f` on the sampler's state (on an empty one before the agent exists).
fn with_state<T>(f: impl FnOnce(&mut State) -> T) -> T {
    match sampler() {
        Some(sampler) => f(&mut lock(&sampler.state)),
        None => f(&mut State::default()),
    }
}

/// The sampler's environment, with its callbacks and `ObjectFree` on (see the module doc).
fn env(agent: &Agent) -> Result<Jvmti, ErrorCode> {
    // Only the transport thread starts sampling, so the environment is never created twice.
    let made = &sampler().ok_or(ErrorCode::INTERNAL)?.env;
    if let Some(&env) = made.get() {
        return Ok(env);
    }
    let env = agent.vm.get_jvmti(sys::JVMTI_VERSION_11)?;
    let mut caps = jvmtiCapabilities::default();
    caps.set_can_generate_sampled_object_alloc_events(true)
        .set_can_tag_objects(true)
        .set_can_generate_object_free_events(true);
    let ready = env.add_capabilities(&caps).map_err(|e| {
        tracing::warn!(error = %e, "no allocation sampling in this VM");
        ErrorCode::NOT_IMPLEMENTED
    });
    let ready = ready.and_then(|()| {
        // SAFETY: the struct is a plain table of `Option<fn>`; all-zero bytes are all `None`.
        let mut callbacks: jvmtiEventCallbacks = unsafe { std::mem::zeroed() };
        callbacks.SampledObjectAlloc = Some(on_sampled_alloc);
        callbacks.ObjectFree = Some(on_object_free);
        env.set_event_callbacks(&callbacks)?;
        // Safe to enable here: the environment has no tags yet, so there is nothing to flush.
        Ok(env.set_event_notification_mode(true, sys::JVMTI_EVENT_OBJECT_FREE, std::ptr::null_mut())?)
    });
    if let Err(e) = ready {
        // SAFETY: the environment was just created, has no tags and no handle to it escapes.
        let _ = unsafe { env.dispose_environment() };
        return Err(e);
    }
    let _ = made.set(env);
    Ok(env)
}

/// Starts sampling about one allocation every `interval` bytes, discarding earlier sites.
pub fn start(agent: &Agent, interval: i32, max_depth: i32) -> Result<(), ErrorCode> {
    if interval < 0 || max_depth < 0 {
        return Err(ErrorCode::ILLEGAL_ARGUMENT);
    }
    let env = env(agent)?;
    env.set_heap_sampling_interval(interval)?;
    with_state(|s| {
        *s = State {
            run: s.run + 1,
            running: true,
            interval,
            max_depth: if max_depth == 0 { DEFAULT_MAX_DEPTH } else { max_depth },
            table: AllocTable::default(),
        }
    });
    if let Err(e) = env.set_event_notification_mode(true, sys::JVMTI_EVENT_SAMPLED_OBJECT_ALLOC, std::ptr::null_mut()) {
        with_state(|s| s.running = false);
        return Err(e.into());
    }
    Ok(())
}

/// Stops sampling; freed objects are still counted until the report is reset.
pub fn stop() -> Result<(), ErrorCode> {
    with_state(|s| s.running = false);
    if let Some(env) = sampler().and_then(|s| s.env.get()) {
        env.set_event_notification_mode(false, sys::JVMTI_EVENT_SAMPLED_OBJECT_ALLOC, std::ptr::null_mut())?;
    }
    Ok(())
}

/// A copy of the sites for a report: (running, interval, samples, sites by decreasing bytes).
/// `reset` discards them afterwards; sampling, if on, goes on into an empty table.
pub fn report(reset: bool) -> (bool, i32, i64, Vec<Site>) {
    with_state(|s| {
        let sites = s.table.sorted_sites().into_iter().cloned().collect();
        let out = (s.running, s.interval, s.table.samples, sites);
        if reset {
            s.table = AllocTable::default();
        }
        out
    })
}

/// Whether sampling is on.
pub fn running() -> bool {
    with_state(|s| s.running)
}

unsafe extern "system" fn on_sampled_alloc(
    jvmti_env: *mut jvmtiEnv,
    _jni_env: *mut JNIEnv,
    thread: jthread,
    object: jobject,
    object_klass: jclass,
    size: jlong,
) {
    crate::guard((), || {
        // SAFETY: the VM calls back with the live environment the callbacks were set on.
        let Some(env) = (unsafe { Jvmti::from_raw(jvmti_env) }) else { return };
        let Some(sampler) = sampler() else { return };
        let (run, running, max_depth, interval) = with_state(|s| (s.run, s.running, s.max_depth, s.interval));
        if !running {
            return;
        }
        let stack: RawStack = match env.get_stack_trace(thread, 0, max_depth) {
            Ok(frames) => frames.iter().map(|f| (f.method as usize, f.location)).collect(),
            Err(_) => Vec::new(),
        };
        let class_signature = env.get_class_signature(object_klass).map(|s| s.0).unwrap_or_else(|_| "L?;".into());
        let tag = sampler.next_tag.fetch_add(1, Ordering::Relaxed);
        let tracked = env.set_tag(object, tag).is_ok();
        with_state(|s| {
            // Sampling may have been restarted meanwhile: the sample belongs to the old run.
            if s.running && s.run == run {
                s.table.record(stack, class_signature, size, interval, tracked.then_some(tag));
            }
        });
    });
}

unsafe extern "system" fn on_object_free(_: *mut jvmtiEnv, tag: jlong) {
    // Tags are never reused, so a tag from before a reset is simply not in the table.
    crate::guard((), || with_state(|s| s.table.freed(tag)));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_scale_rare_small_objects_up() {
        assert_eq!(sample_weight(100, 0), (1.0, 100.0));
        let (count, bytes) = sample_weight(16, 512 * 1024);
        // A 16-byte object is sampled about once per 32768 such objects.
        assert!((count - 32768.5).abs() < 1.0, "{count}");
        assert!((bytes - count * 16.0).abs() < 1e-6);
        // An object much larger than the interval is always sampled.
        let (count, bytes) = sample_weight(100 * 1024 * 1024, 1024);
        assert!((count - 1.0).abs() < 1e-9 && (bytes - 100.0 * 1024.0 * 1024.0).abs() < 1.0);
    }

    #[test]
    fn sites_aggregate_by_stack_and_class_and_track_liveness() {
        let mut t = AllocTable::default();
        let a = vec![(1, 0), (2, 5)];
        let b = vec![(3, 1)];
        t.record(a.clone(), "[B".into(), 1000, 0, Some(1));
        t.record(a.clone(), "[B".into(), 1000, 0, Some(2));
        t.record(a.clone(), "Ljava/lang/String;".into(), 24, 0, None);
        t.record(b, "[B".into(), 10, 0, Some(3));
        assert_eq!(t.sites.len(), 3);
        assert_eq!(t.samples, 4);
        let top = t.sorted_sites()[0].clone();
        assert_eq!((top.stack.clone(), top.class_signature.as_str()), (a, "[B"));
        assert_eq!((top.allocated_count, top.allocated_bytes), (2.0, 2000.0));
        assert_eq!((top.live_count, top.live_bytes), (2.0, 2000.0));
        t.freed(1);
        t.freed(1); // twice: no effect
        t.freed(99); // unknown: no effect
        let top = t.sorted_sites()[0].clone();
        assert_eq!((top.live_count, top.live_bytes), (1.0, 1000.0));
        assert_eq!(top.allocated_count, 2.0);
    }
}
