//! Which virtual thread a carrier thread has mounted (JDK 21+), for CPU samples: JVMTI has no
//! such function, and a carrier's stack (JVMTI) shows only the carrier's frames, while
//! `AsyncGetCallTrace` in a carrier shows the virtual thread's frames on top of the carrier's.
//!
//! The carrier's innermost continuation is `Thread.cont`; a virtual thread's continuation runs a
//! task made by `VirtualThread.VThreadContinuation.wrap`, which keeps the virtual thread in its
//! field `val$vthread`; that virtual thread's `carrierThread` must be the carrier, else nothing
//! is mounted (or the JDK's layout differs: each name is looked up at run time, and any missing
//! one means "no virtual thread", the behaviour before virtual threads). Reads of fields of a
//! running thread, which can change the next instant: a sample taken through them may belong to
//! the next virtual thread the carrier mounted (see `spec-notes/virtual-threads.md`).

use jni_sys::{jclass, jfieldID, jmethodID, jvalue};

use crate::agent::Agent;
use crate::jni::{JavaType, Jni};
use crate::jvmti::sys::{self, jlocation, jthread};

/// `java.lang.VirtualThread` (a local reference) if it is initialized: no virtual thread exists
/// before. Looked up without initializing it (`Class.forName(name, false, null)`), since JNI's
/// `FindClass` and `GetFieldID` would: a debugger command must not start the virtual thread
/// scheduler of a program that has none. Once found, it is kept (a global reference), so later
/// calls run no Java code.
pub(crate) fn virtual_thread_class(agent: &Agent, jni: Jni) -> Option<jclass> {
    if !agent.supports_virtual_threads() {
        return None;
    }
    if let Some(class) = known_virtual_thread_class(agent, jni) {
        return Some(class);
    }
    let class = look_up_virtual_thread_class(agent, jni)?;
    if let Ok(global) = jni.new_global_ref(class)
        && !global.is_null()
        && agent.memo.virtual_thread_class.set(global as usize).is_err()
    {
        jni.delete_global_ref(global);
    }
    Some(class)
}

/// `java.lang.VirtualThread` (a local reference) if an earlier [`virtual_thread_class`] found it:
/// no lookup, no Java code (for the profiler thread).
pub(crate) fn known_virtual_thread_class(agent: &Agent, jni: Jni) -> Option<jclass> {
    let &global = agent.memo.virtual_thread_class.get()?;
    Some(jni.new_local_ref(global as jclass)).filter(|c| !c.is_null())
}

fn look_up_virtual_thread_class(agent: &Agent, jni: Jni) -> Option<jclass> {
    let class_class = lookup(jni, || jni.find_class("java/lang/Class").map(|c| c as usize))? as jclass;
    let for_name = lookup(jni, || {
        jni.get_static_method_id(
            class_class,
            "forName",
            "(Ljava/lang/String;ZLjava/lang/ClassLoader;)Ljava/lang/Class;",
        )
        .map(|m| m as usize)
    });
    let name = jni.new_string_utf("java.lang.VirtualThread").ok();
    let class = match (for_name, name) {
        (Some(for_name), Some(name)) => {
            let args = [jvalue { l: name }, jvalue { z: false }, jvalue { l: std::ptr::null_mut() }];
            // SAFETY: `forName(String, boolean, ClassLoader)` is a static method of Class, called
            // with arguments of its types.
            let found = unsafe { jni.call_static_method(class_class, for_name as jmethodID, JavaType::Object, &args) };
            jni.delete_local_ref(name);
            found.ok().map(|v| unsafe { v.l }).filter(|c| !c.is_null())
        }
        (_, name) => {
            if let Some(name) = name {
                jni.delete_local_ref(name);
            }
            None
        }
    };
    jni.exception_clear();
    jni.delete_local_ref(class_class);
    let class = class?;
    let initialized = agent.jvmti.get_class_status(class).is_ok_and(|s| s & sys::JVMTI_CLASS_STATUS_INITIALIZED != 0);
    if initialized {
        Some(class)
    } else {
        jni.delete_local_ref(class);
        None
    }
}

/// The JNI handles, looked up once per sampling run.
#[derive(Clone, Copy)]
pub(crate) struct Mounts {
    /// `Thread.cont`.
    cont: jfieldID,
    /// `Continuation.target`.
    target: jfieldID,
    /// `VirtualThread.carrierThread`.
    carrier: jfieldID,
    /// `Continuation.enterSpecial`, the frame where a continuation's own stack starts.
    pub(crate) enter_special: jmethodID,
}

fn lookup<E>(jni: Jni, f: impl FnOnce() -> Result<usize, E>) -> Option<usize> {
    let found = f().ok();
    if found.is_none() {
        jni.exception_clear();
    }
    found
}

// SAFETY: JNI field and method IDs are valid on every thread for as long as their class is
// loaded, and these are java.base classes, never unloaded.
unsafe impl Send for Mounts {}

impl Mounts {
    /// `None` on a VM without virtual threads, before the first one (the class is not
    /// initialized), or with another layout.
    pub(crate) fn new(agent: &Agent, jni: Jni) -> Option<Mounts> {
        let virtual_thread = virtual_thread_class(agent, jni)?;
        let found = Mounts::with(agent, jni, virtual_thread);
        jni.delete_local_ref(virtual_thread);
        found
    }

    fn with(agent: &Agent, jni: Jni, virtual_thread: jclass) -> Option<Mounts> {
        let thread: jclass = agent.known().ok()?.thread.0;
        let cont =
            lookup(jni, || jni.get_field_id(thread, "cont", "Ljdk/internal/vm/Continuation;").map(|f| f as usize))?;
        let continuation =
            lookup(jni, || jni.find_class("jdk/internal/vm/Continuation").map(|c| c as usize))? as jclass;
        let target =
            lookup(jni, || jni.get_field_id(continuation, "target", "Ljava/lang/Runnable;").map(|f| f as usize));
        let enter_special = lookup(jni, || {
            jni.get_static_method_id(continuation, "enterSpecial", "(Ljdk/internal/vm/Continuation;ZZ)V")
                .map(|m| m as usize)
        });
        jni.delete_local_ref(continuation);
        let carrier =
            lookup(jni, || jni.get_field_id(virtual_thread, "carrierThread", "Ljava/lang/Thread;").map(|f| f as usize));
        Some(Mounts {
            cont: cont as jfieldID,
            target: target? as jfieldID,
            carrier: carrier? as jfieldID,
            enter_special: enter_special? as jmethodID,
        })
    }

    /// The virtual thread mounted on `carrier` now, as a local reference, if any.
    pub(crate) fn virtual_on(&self, jni: Jni, carrier: jthread) -> Option<jthread> {
        // SAFETY: `cont` is `Thread.cont`, an object field, and `carrier` is a Thread.
        let cont = unsafe { jni.get_field(carrier, self.cont, JavaType::Object).l };
        if cont.is_null() {
            return None;
        }
        // SAFETY: `target` is `Continuation.target`, an object field, and `cont` a Continuation.
        let task = unsafe { jni.get_field(cont, self.target, JavaType::Object).l };
        jni.delete_local_ref(cont);
        if task.is_null() {
            return None;
        }
        let vthread = jni.get_object_class(task).ok().and_then(|class| {
            let field =
                lookup(jni, || jni.get_field_id(class, "val$vthread", "Ljava/lang/VirtualThread;").map(|f| f as usize));
            jni.delete_local_ref(class);
            // SAFETY: `field` is an object field of `task`'s own class.
            field.map(|f| unsafe { jni.get_field(task, f as jfieldID, JavaType::Object).l })
        });
        jni.delete_local_ref(task);
        let vthread = vthread.filter(|v| !v.is_null())?;
        // SAFETY: `carrier` is `VirtualThread.carrierThread` and `vthread` a VirtualThread.
        let on = unsafe { jni.get_field(vthread, self.carrier, JavaType::Object).l };
        let mounted = !on.is_null() && jni.is_same_object(on, carrier);
        jni.delete_local_ref(on);
        if mounted {
            Some(vthread)
        } else {
            jni.delete_local_ref(vthread);
            None
        }
    }
}

/// How many of a carrier's frames (innermost first) are the mounted virtual thread's: those above
/// the continuation's entry frame (`enter_special`). `None` when no continuation runs.
pub(crate) fn own_frames(frames: &[(usize, jlocation)], enter_special: usize) -> Option<usize> {
    frames.iter().position(|&(method, _)| method == enter_special)
}

#[cfg(test)]
mod tests {
    use super::own_frames;

    #[test]
    fn the_virtual_threads_frames_end_above_the_continuation_entry() {
        let enter = 7;
        assert_eq!(own_frames(&[(1, 3), (2, 0), (enter, -1), (4, 9)], enter), Some(2));
        assert_eq!(own_frames(&[(1, 3), (2, 0)], enter), None);
        assert_eq!(own_frames(&[(enter, -1)], enter), Some(0));
    }
}
