//! Allocation sites (`AllocStart`, `AllocStop`, `AllocReport`): JVMTI's heap sampling
//! (`SampledObjectAlloc`, after `SetHeapSamplingInterval`) with the allocating stack, aggregated per
//! site (stack + class), with how much of it is still alive.
//!
//! Runs in a JVMTI environment of its own, created at the first `AllocStart`: its events are
//! enabled only while sampling (the `ObjectFree` events stay on after `AllocStop`, so live counts
//! keep falling, until the report is reset), and its object tags (one per sampled object, to see
//! it freed) never mix with the debugger's object IDs, which are tags of the main environment.
//! `AllocReport` with `reset` disposes of the environment, and all its tags with it.
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
use std::sync::Mutex;
use std::sync::atomic::{AtomicI64, Ordering};

use jdwp_protocol::ErrorCode;
use jni_sys::{JNIEnv, jclass, jobject};

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
    env: Option<Jvmti>,
    running: bool,
    interval: i32,
    max_depth: i32,
    table: AllocTable,
}

static STATE: Mutex<Option<State>> = Mutex::new(None);
/// Tags for sampled objects (in the sampler's environment only).
static NEXT_TAG: AtomicI64 = AtomicI64::new(1);

fn with_state<T>(f: impl FnOnce(&mut State) -> T) -> T {
    let mut guard = lock(&STATE);
    f(guard.get_or_insert_with(State::default))
}

/// Creates the sampler's environment, with its callbacks; nothing is enabled yet.
fn create_env(agent: &Agent) -> Result<Jvmti, ErrorCode> {
    let env = agent.vm.get_jvmti(sys::JVMTI_VERSION_11)?;
    let mut caps = jvmtiCapabilities::default();
    caps.set_can_generate_sampled_object_alloc_events(true)
        .set_can_tag_objects(true)
        .set_can_generate_object_free_events(true);
    if let Err(e) = env.add_capabilities(&caps) {
        // SAFETY: the environment was just created and no handle to it escapes.
        let _ = unsafe { env.dispose_environment() };
        tracing::warn!(error = %e, "no allocation sampling in this VM");
        return Err(ErrorCode::NOT_IMPLEMENTED);
    }
    // SAFETY: the struct is a plain table of `Option<fn>`; all-zero bytes are all `None`.
    let mut callbacks: jvmtiEventCallbacks = unsafe { std::mem::zeroed() };
    callbacks.SampledObjectAlloc = Some(on_sampled_alloc);
    callbacks.ObjectFree = Some(on_object_free);
    env.set_event_callbacks(&callbacks)?;
    Ok(env)
}

/// Starts sampling about one allocation every `interval` bytes, discarding earlier sites.
pub fn start(agent: &Agent, interval: i32, max_depth: i32) -> Result<(), ErrorCode> {
    if interval < 0 || max_depth < 0 {
        return Err(ErrorCode::ILLEGAL_ARGUMENT);
    }
    // A fresh environment: the old one's tags (and pending frees) go with it.
    dispose();
    let env = create_env(agent)?;
    env.set_heap_sampling_interval(interval)?;
    with_state(|s| {
        *s = State {
            env: Some(env),
            running: true,
            interval,
            max_depth: if max_depth == 0 { DEFAULT_MAX_DEPTH } else { max_depth },
            table: AllocTable::default(),
        }
    });
    for event in [sys::JVMTI_EVENT_OBJECT_FREE, sys::JVMTI_EVENT_SAMPLED_OBJECT_ALLOC] {
        if let Err(e) = env.set_event_notification_mode(true, event, std::ptr::null_mut()) {
            dispose();
            return Err(e.into());
        }
    }
    Ok(())
}

/// Stops sampling; freed objects are still counted until the report is reset.
pub fn stop() -> Result<(), ErrorCode> {
    let env = with_state(|s| {
        s.running = false;
        s.env
    });
    if let Some(env) = env {
        env.set_event_notification_mode(false, sys::JVMTI_EVENT_SAMPLED_OBJECT_ALLOC, std::ptr::null_mut())?;
    }
    Ok(())
}

/// Stops everything and drops the environment (and its tags).
pub fn dispose() {
    let env = with_state(|s| {
        s.running = false;
        s.env.take()
    });
    if let Some(env) = env {
        for event in [sys::JVMTI_EVENT_SAMPLED_OBJECT_ALLOC, sys::JVMTI_EVENT_OBJECT_FREE] {
            let _ = env.set_event_notification_mode(false, event, std::ptr::null_mut());
        }
        // SAFETY: the handle was taken out of the state, so no new callback work starts with it;
        // callbacks still running get their environment from the VM, which stops calling them.
        let _ = unsafe { env.dispose_environment() };
    }
}

/// A copy of the sites for a report: (running, interval, samples, sites by decreasing bytes).
/// `reset` discards them (and the environment) afterwards.
pub fn report(reset: bool) -> (bool, i32, i64, Vec<Site>) {
    // Looking tags up makes HotSpot post the ObjectFree events it still holds back.
    if let Some(env) = with_state(|s| s.env) {
        let _ = env.get_objects_with_tags(&[jlong::MAX]);
    }
    let out = with_state(|s| {
        let sites = s.table.sorted_sites().into_iter().cloned().collect();
        (s.running, s.interval, s.table.samples, sites)
    });
    if reset {
        dispose();
        with_state(|s| s.table = AllocTable::default());
    }
    out
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
        let (running, max_depth, interval) = with_state(|s| (s.running, s.max_depth, s.interval));
        if !running {
            return;
        }
        let stack: RawStack = match env.get_stack_trace(thread, 0, max_depth) {
            Ok(frames) => frames.iter().map(|f| (f.method as usize, f.location)).collect(),
            Err(_) => Vec::new(),
        };
        let class_signature = env.get_class_signature(object_klass).map(|s| s.0).unwrap_or_else(|_| "L?;".into());
        let tag = NEXT_TAG.fetch_add(1, Ordering::Relaxed);
        let tracked = env.set_tag(object, tag).is_ok();
        with_state(|s| {
            // Sampling may have been restarted meanwhile, in a new environment: drop the sample.
            if s.running && s.env == Some(env) {
                s.table.record(stack, class_signature, size, interval, tracked.then_some(tag));
            }
        });
    });
}

unsafe extern "system" fn on_object_free(jvmti_env: *mut jvmtiEnv, tag: jlong) {
    crate::guard((), || {
        // SAFETY: as in `on_sampled_alloc`.
        let env = unsafe { Jvmti::from_raw(jvmti_env) };
        with_state(|s| {
            if s.env == env {
                s.table.freed(tag);
            }
        });
    });
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
