//! Heap walks for `VirtualMachine.InstanceCounts`, `ReferenceType.Instances` and
//! `ObjectReference.ReferringObjects`.
//!
//! Instances are found by visiting every object in the heap (`IterateThroughHeap`), so, as with the
//! JDK's agent, an object nothing refers to any more counts until the collector reclaims it (a
//! debugger that just created an object sees it). Referrers need the references themselves, which
//! only a walk from the roots reports (`FollowReferences`): they are live objects.
//!
//! Walks mark objects with JVMTI tags, but the agent's own environment uses tags as object IDs; so
//! each walk runs in a JVMTI environment of its own, whose tags all vanish when it is disposed of at
//! the end.
//!
//! The callbacks run inside the VM's heap walk (on a VM thread, at a safepoint), where JNI and most
//! of JVMTI are forbidden: they only read and write tags and the walk's own counters.

use std::ffi::c_void;
use std::panic::AssertUnwindSafe;

use jdwp_protocol::ErrorCode;
use jni_sys::{jclass, jobject};

use crate::agent::Agent;
use crate::jvmti::Jvmti;
use crate::jvmti::sys::{
    self, jint, jlong, jvmtiCapabilities, jvmtiHeapCallbacks, jvmtiHeapIterationCallback, jvmtiHeapReferenceCallback,
    jvmtiHeapReferenceInfo, jvmtiHeapReferenceKind,
};

/// A JVMTI environment for one walk, disposed of (with all its tags) when dropped.
pub(crate) struct WalkEnv(pub(crate) Jvmti);

impl WalkEnv {
    pub(crate) fn new(agent: &Agent) -> Result<WalkEnv, ErrorCode> {
        let env = WalkEnv(agent.vm.get_jvmti(sys::JVMTI_VERSION_11)?);
        let mut caps = jvmtiCapabilities::default();
        caps.set_can_tag_objects(true);
        env.0.add_capabilities(&caps).map_err(|_| ErrorCode::NOT_IMPLEMENTED)?;
        Ok(env)
    }

    /// Visits every object in the heap that is an instance of exactly `class` (every object if
    /// null), reporting it to `callback`.
    pub(crate) fn iterate<T>(
        &self,
        class: jclass,
        callback: jvmtiHeapIterationCallback,
        data: &mut T,
    ) -> Result<(), ErrorCode> {
        let callbacks = jvmtiHeapCallbacks { heap_iteration_callback: callback, ..Default::default() };
        let user_data: *mut T = data;
        // SAFETY: as in `follow`.
        unsafe { self.0.iterate_through_heap(0, class, &callbacks, user_data.cast()) }?;
        Ok(())
    }

    /// Follows references from the roots, reporting references to instances of exactly `class`
    /// (every reference if null) to `callback`.
    fn follow<T>(&self, class: jclass, callback: jvmtiHeapReferenceCallback, data: &mut T) -> Result<(), ErrorCode> {
        let callbacks = jvmtiHeapCallbacks { heap_reference_callback: callback, ..Default::default() };
        let user_data: *mut T = data;
        // SAFETY: `callback` is one of this module's callbacks, written for a `T` behind
        // `user_data`, which outlives the call; they neither unwind (guarded) nor call JNI/JVMTI.
        unsafe { self.0.follow_references(0, class, std::ptr::null_mut(), &callbacks, user_data.cast()) }?;
        Ok(())
    }

    /// The objects tagged `tag` in this environment, as local references.
    fn objects_tagged(&self, tag: jlong) -> Result<Vec<jobject>, ErrorCode> {
        let (objects, _tags) = self.0.get_objects_with_tags(&[tag])?;
        Ok(objects.to_vec())
    }
}

impl Drop for WalkEnv {
    fn drop(&mut self) {
        // SAFETY: the handle never leaves this value, and the walk functions free what the
        // environment allocated (copied out of `JvmtiBuf`s) before it is dropped.
        let _ = unsafe { self.0.dispose_environment() };
    }
}

/// Runs a heap callback's body, aborting the walk instead of unwinding into the VM.
pub(crate) fn guarded(f: impl FnOnce() -> jint) -> jint {
    crate::guard(sys::JVMTI_VISIT_ABORT, AssertUnwindSafe(f))
}

// ---- instance counts --------------------------------------------------------------------------

/// How many instances each class has (exactly that class, not subclasses).
pub fn instance_counts(agent: &Agent, classes: &[jclass]) -> Result<Vec<i64>, ErrorCode> {
    if classes.is_empty() {
        return Ok(Vec::new());
    }
    let env = WalkEnv::new(agent)?;
    // Class `i` is tagged `i + 1`, so each object's class tag says whose count it adds to; a class
    // asked for twice keeps its first tag.
    let mut index = Vec::with_capacity(classes.len());
    for (i, &class) in classes.iter().enumerate() {
        match env.0.get_tag(class)? {
            0 => {
                env.0.set_tag(class, i as jlong + 1)?;
                index.push(i);
            }
            tag => index.push(usize::try_from(tag - 1).map_err(|_| ErrorCode::INTERNAL)?),
        }
    }
    let mut counts = vec![0i64; classes.len()];
    env.iterate(std::ptr::null_mut(), Some(count_by_class), &mut counts)?;
    Ok(index.into_iter().map(|i| counts.get(i).copied().unwrap_or(0)).collect())
}

unsafe extern "system" fn count_by_class(
    class_tag: jlong,
    _size: jlong,
    _tag_ptr: *mut jlong,
    _length: jint,
    user_data: *mut c_void,
) -> jint {
    guarded(|| {
        // SAFETY: the user data is our `Vec<i64>`, valid for the walk (`WalkEnv::iterate`).
        let counts = unsafe { &mut *user_data.cast::<Vec<i64>>() };
        if let Some(count) =
            usize::try_from(class_tag).ok().and_then(|i| i.checked_sub(1)).and_then(|i| counts.get_mut(i))
        {
            *count += 1;
        }
        0
    })
}

// ---- instances --------------------------------------------------------------------------------

const FOUND: jlong = 1;

struct Limit {
    max: usize,
    found: usize,
    self_reference: bool,
}

impl Limit {
    fn new(max: i32) -> Limit {
        Limit { max: usize::try_from(max).unwrap_or(0), found: 0, self_reference: false }
    }

    /// Counts one more; whether the walk should stop.
    fn one_more(&mut self) -> bool {
        self.found += 1;
        self.max != 0 && self.found >= self.max
    }
}

/// Up to `max` (0: all) instances of exactly `class`, as local references.
pub fn instances(agent: &Agent, class: jclass, max: i32) -> Result<Vec<jobject>, ErrorCode> {
    let env = WalkEnv::new(agent)?;
    let mut limit = Limit::new(max);
    // Following references from the roots, as the JDK's agent does: the instances reachable for
    // garbage collection, as JDI's `instances` says, and HotSpot then first re-materializes the
    // objects escape analysis replaced by scalars in compiled frames (EATests'
    // EAGetInstancesOfReferenceType counts them), which a plain heap iteration does not see.
    env.follow(class, Some(tag_reached_instance), &mut limit)?;
    let mut objects = env.objects_tagged(FOUND)?;
    if limit.max != 0 {
        objects.truncate(limit.max);
    }
    Ok(objects)
}

unsafe extern "system" fn tag_reached_instance(
    _kind: jvmtiHeapReferenceKind,
    _info: *const jvmtiHeapReferenceInfo,
    _class_tag: jlong,
    _referrer_class_tag: jlong,
    _size: jlong,
    tag_ptr: *mut jlong,
    _referrer_tag_ptr: *mut jlong,
    _length: jint,
    user_data: *mut c_void,
) -> jint {
    guarded(|| {
        // SAFETY: the VM passes the referree's tag (an instance of the class: the walk filters by
        // it), and our `Limit` is the user data, both valid for this call (`WalkEnv::follow`).
        let (tag, limit) = unsafe { (&mut *tag_ptr, &mut *user_data.cast::<Limit>()) };
        // Reached again through another reference: counted already.
        if *tag == FOUND {
            return sys::JVMTI_VISIT_OBJECTS;
        }
        *tag = FOUND;
        if limit.one_more() { sys::JVMTI_VISIT_ABORT } else { sys::JVMTI_VISIT_OBJECTS }
    })
}

// ---- referrers --------------------------------------------------------------------------------

const TARGET: jlong = 1;
const REFERRER: jlong = 2;

/// Up to `max` (0: all) live objects holding a reference to `target` (itself included if it
/// refers to itself), as local references.
pub fn referrers(agent: &Agent, target: jobject, max: i32) -> Result<Vec<jobject>, ErrorCode> {
    let env = WalkEnv::new(agent)?;
    env.0.set_tag(target, TARGET)?;
    let mut limit = Limit::new(max);
    env.follow(std::ptr::null_mut(), Some(tag_referrer), &mut limit)?;
    let mut objects = env.objects_tagged(REFERRER)?;
    if limit.self_reference {
        objects.push(agent.jni()?.new_local_ref(target));
    }
    if limit.max != 0 {
        objects.truncate(limit.max);
    }
    Ok(objects)
}

unsafe extern "system" fn tag_referrer(
    _kind: jvmtiHeapReferenceKind,
    _info: *const jvmtiHeapReferenceInfo,
    _class_tag: jlong,
    _referrer_class_tag: jlong,
    _size: jlong,
    tag_ptr: *mut jlong,
    referrer_tag_ptr: *mut jlong,
    _length: jint,
    user_data: *mut c_void,
) -> jint {
    guarded(|| {
        // Roots have no referrer object.
        if referrer_tag_ptr.is_null() {
            return sys::JVMTI_VISIT_OBJECTS;
        }
        // SAFETY: the VM passes the referree's tag, and our `Limit` is the user data, both valid
        // for this call (`WalkEnv::follow`); the referrer's tag is valid too (it is the referree's
        // own when an object refers to itself).
        let (tag, limit) = unsafe { (*tag_ptr, &mut *user_data.cast::<Limit>()) };
        if tag != TARGET {
            return sys::JVMTI_VISIT_OBJECTS;
        }
        let stop = if referrer_tag_ptr == tag_ptr {
            !limit.self_reference && {
                limit.self_reference = true;
                limit.one_more()
            }
        } else {
            // SAFETY: see above.
            let referrer_tag = unsafe { &mut *referrer_tag_ptr };
            *referrer_tag == 0 && {
                *referrer_tag = REFERRER;
                limit.one_more()
            }
        };
        if stop { sys::JVMTI_VISIT_ABORT } else { sys::JVMTI_VISIT_OBJECTS }
    })
}

#[cfg(test)]
mod tests {
    use super::Limit;

    #[test]
    fn limits_stop_at_max_unless_zero() {
        let mut all = Limit::new(0);
        assert!((0..1000).all(|_| !all.one_more()));
        let mut two = Limit::new(2);
        assert!(!two.one_more());
        assert!(two.one_more());
        assert_eq!(Limit::new(-5).max, 0);
    }
}
