//! The virtual threads the agent keeps for `includevirtualthreads=y` (the decisions are
//! [`crate::virtual_threads`]'s): each is added on its own `VirtualThreadStart`, `AllThreads`
//! lists those still alive.
//!
//! Locking: an application thread adds and prunes with the lock held only around plain Rust. The
//! pruner deletes the weak references it removed only after removing them, so nobody else holds a
//! copy; `AllThreads` (an agent thread, never suspended) turns references into local ones under
//! the lock, so a pruner cannot delete one in between.

use jdwp_protocol::{ErrorCode, ThreadId};

use super::{Agent, GlobalRef, lock};
use crate::jni::Jni;
use crate::jvmti::sys::{JVMTI_THREAD_STATE_ALIVE, jthread};

impl Agent {
    /// Whether this environment has `can_support_virtual_threads` (JVMTI 21+), asked once: it is
    /// fixed once the loader has added its capabilities.
    pub fn supports_virtual_threads(&self) -> bool {
        *self
            .memo
            .virtual_threads
            .get_or_init(|| self.jvmti.get_capabilities().is_ok_and(|c| c.can_support_virtual_threads()))
    }

    /// Keeps a virtual thread that has just started (on that thread, in its `VirtualThreadStart`).
    pub fn track_virtual_thread(&self, jni: Jni, thread: jthread) {
        let Ok(weak) = jni.new_weak_global_ref(thread) else { return };
        let due = lock(&self.tracked_virtual_threads).push(GlobalRef(weak));
        let Some(copy) = due else { return };
        // No lock held: these calls may stop this thread if the debugger suspends it.
        let ended: Vec<GlobalRef> = copy.into_iter().filter(|r| !self.alive(jni, r.0)).collect();
        lock(&self.tracked_virtual_threads).pruned(&ended);
        for r in ended {
            jni.delete_weak_global_ref(r.0);
        }
    }

    /// The IDs of the kept virtual threads that are still alive. Agent threads only.
    pub fn tracked_virtual_thread_ids(&self, jni: Jni) -> Result<Vec<ThreadId>, ErrorCode> {
        let locals: Vec<jthread> = {
            let tracked = lock(&self.tracked_virtual_threads);
            tracked.refs().iter().map(|r| jni.new_local_ref(r.0)).filter(|l| !l.is_null()).collect()
        };
        let mut ids = Vec::with_capacity(locals.len());
        let mut result = Ok(());
        for &local in &locals {
            if result.is_ok() && self.alive(jni, local) {
                match self.thread_id(jni, local) {
                    Ok(id) => ids.push(id),
                    Err(e) => result = Err(e),
                }
            }
            jni.delete_local_ref(local);
        }
        result.map(|()| ids)
    }

    /// Whether a thread (any live or weak reference) has started and not ended.
    fn alive(&self, jni: Jni, thread: jthread) -> bool {
        let local = jni.new_local_ref(thread);
        if local.is_null() {
            return false;
        }
        let alive = self.jvmti.get_thread_state(local).is_ok_and(|s| s & JVMTI_THREAD_STATE_ALIVE != 0);
        jni.delete_local_ref(local);
        alive
    }
}
