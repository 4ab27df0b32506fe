//! Heap walks in a JVMTI environment of their own ([`WalkEnv`]): its tags mark what a walk has
//! seen and all vanish when it is disposed of, leaving the agent's tags (object IDs) alone. Shared
//! by the debugger's heap commands (`commands::heap`) and the profiler (histograms, lock owners).

use std::panic::AssertUnwindSafe;

use jdwp_protocol::ErrorCode;
use jni_sys::{jclass, jobject};

use crate::agent::Agent;
use crate::jni::Jni;
use crate::jvmti::Jvmti;
use crate::jvmti::sys::{
    self, jint, jlong, jvmtiCapabilities, jvmtiHeapCallbacks, jvmtiHeapIterationCallback, jvmtiHeapReferenceCallback,
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

    /// Follows references from the roots, reporting the references to objects that pass
    /// `heap_filter` and are instances of exactly `class` (any class if null) to `callback`.
    pub(crate) fn follow<T>(
        &self,
        heap_filter: jint,
        class: jclass,
        callback: jvmtiHeapReferenceCallback,
        data: &mut T,
    ) -> Result<(), ErrorCode> {
        let callbacks = jvmtiHeapCallbacks { heap_reference_callback: callback, ..Default::default() };
        let user_data: *mut T = data;
        // SAFETY: `callback` is one of this module's callbacks, written for a `T` behind
        // `user_data`, which outlives the call; they neither unwind (guarded) nor call JNI/JVMTI.
        unsafe { self.0.follow_references(heap_filter, class, std::ptr::null_mut(), &callbacks, user_data.cast()) }?;
        Ok(())
    }

    /// Hands the `count` objects a walk found, tagged by [`batch_tag`] from `first_tag` on, to
    /// `each` as local references, one batch at a time; each is deleted once `each` returns.
    pub(crate) fn each_found(
        &self,
        jni: Jni,
        first_tag: jlong,
        count: usize,
        mut each: impl FnMut(jobject) -> Result<(), ErrorCode>,
    ) -> Result<(), ErrorCode> {
        let mut left = count;
        for batch in 0..count.div_ceil(BATCH) {
            let (objects, _tags) = self.0.get_objects_with_tags(&[first_tag + batch as jlong])?;
            let mut result = Ok(());
            for &obj in objects.iter() {
                // No more than the walk counted, whatever else carries the tag.
                if result.is_ok() && left > 0 {
                    left -= 1;
                    result = each(obj);
                }
                jni.delete_local_ref(obj);
            }
            result?;
        }
        Ok(())
    }
}

/// How many found objects share a tag, and so come back from the walk environment at once.
pub(crate) const BATCH: usize = 16 * 1024;

/// The tag of the `n`th object a walk found (from 0), batches numbered from `first_tag` on.
pub(crate) fn batch_tag(first_tag: jlong, n: usize) -> jlong {
    first_tag + (n / BATCH) as jlong
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
