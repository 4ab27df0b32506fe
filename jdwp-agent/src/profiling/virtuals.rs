//! The virtual threads of the heap, found and held still for a look (JDK 21+): JVMTI lists
//! platform threads only, and an unmounted virtual thread is on no carrier, so they come from a
//! walk of the heap for `java.lang.VirtualThread` instances, done only when asked. JVMTI answers
//! an unmounted virtual thread's monitors and stack when it is suspended, so a look suspends them
//! in one `SuspendThreadList` and resumes exactly those it suspended in one `ResumeThreadList`
//! (one already suspended by someone else, the debugger, is left as it was). Shared by the
//! deadlock scan and the monitor profiler's look for owners that hold a monitor unmounted.

use std::ffi::c_void;

use jdwp_protocol::ErrorCode;

use crate::agent::Agent;
use crate::heap_walk::{WalkEnv, batch_tag, guarded};
use crate::jni::Jni;
use crate::jvmti::sys::{self, jint, jlong, jthread};

/// The live virtual threads whose JVMTI thread state passes `keep`, as local references.
/// Unstarted and ended ones are not alive, and are never kept (the heap may still hold them).
/// With `known_class_only`, none unless `java.lang.VirtualThread` was found before, so that the
/// caller (the profiler thread) runs no Java code to look it up.
pub(crate) fn virtual_threads(
    agent: &Agent,
    jni: Jni,
    known_class_only: bool,
    keep: impl Fn(jint) -> bool,
) -> Result<Vec<jthread>, ErrorCode> {
    let class = if known_class_only {
        super::mounted::known_virtual_thread_class(agent, jni)
    } else {
        super::mounted::virtual_thread_class(agent, jni)
    };
    let Some(class) = class else { return Ok(Vec::new()) };
    let env = WalkEnv::new(agent)?;
    let mut count = 0usize;
    let walked = env.iterate(class, Some(tag_instance), &mut count);
    jni.delete_local_ref(class);
    walked?;
    let mut found = Vec::new();
    env.each_found(jni, FIRST_VIRTUAL_TAG, count, |vt| {
        let state = agent.jvmti.get_thread_state(vt).unwrap_or(0);
        if state & sys::JVMTI_THREAD_STATE_ALIVE != 0 && keep(state) {
            let local = jni.new_local_ref(vt);
            if !local.is_null() {
                found.push(local);
            }
        }
        Ok(())
    })?;
    Ok(found)
}

/// Runs `look` with `threads` suspended: those not suspended yet are suspended in one call, and
/// exactly those are resumed in one call after it, whatever it did. The caller keeps the
/// debugger's own suspensions from changing meanwhile (the command thread, or `agent.threads`
/// held).
pub(crate) fn while_suspended<T>(agent: &Agent, threads: &[jthread], look: impl FnOnce() -> T) -> Result<T, ErrorCode> {
    if threads.is_empty() {
        return Ok(look());
    }
    let results = agent.jvmti.suspend_thread_list(threads)?;
    // One suspended by someone else (the debugger) stays so: it is not ours to resume.
    let ours: Vec<jthread> = threads.iter().zip(results).filter(|(_, r)| r.is_ok()).map(|(&t, _)| t).collect();
    let answer = look();
    if !ours.is_empty()
        && let Err(e) = agent.jvmti.resume_thread_list(&ours)
    {
        tracing::warn!(?e, "resuming the virtual threads looked at failed");
    }
    Ok(answer)
}

/// The tags of found virtual threads start here (0 is "not found").
const FIRST_VIRTUAL_TAG: jlong = 1;

unsafe extern "system" fn tag_instance(
    _class_tag: jlong,
    _size: jlong,
    tag_ptr: *mut jlong,
    _length: jint,
    user_data: *mut c_void,
) -> jint {
    guarded(|| {
        // SAFETY: the VM passes the object's tag (an instance of the class: the walk filters by
        // it), and our count is the user data, both valid for this call (`WalkEnv::iterate`).
        let (tag, count) = unsafe { (&mut *tag_ptr, &mut *user_data.cast::<usize>()) };
        *tag = batch_tag(FIRST_VIRTUAL_TAG, *count);
        *count += 1;
        0
    })
}
