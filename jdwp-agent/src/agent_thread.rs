//! Starting the agent's own threads: JVMTI agent threads (daemons the VM runs for us), registered
//! with the [`Agent`] before they run so that the debugger never sees them and their events are
//! ignored. Used by the loader (session, event helper), invocations and the profiler.

use std::ffi::c_void;

use jni_sys::{JNIEnv, jvalue};

use crate::agent::{Agent, GlobalRef};
use crate::jni::Jni;
use crate::jvmti::sys::{self, jvmtiEnv};

pub(crate) type StartFn = unsafe extern "system" fn(*mut jvmtiEnv, *mut JNIEnv, *mut c_void);

/// Starts a JVMTI agent thread: a daemon the VM runs for us and the debugger never sees.
pub(crate) fn start_agent_thread(
    agent: &Agent,
    jni: Jni,
    name: &str,
    main: StartFn,
    arg: *mut c_void,
) -> Result<(), String> {
    let fail = |what: &str| format!("cannot start the {name} thread: {what}");
    let thread_class = jni.find_class("java/lang/Thread").map_err(|e| fail(&e.to_string()))?;
    let ctor = jni.get_method_id(thread_class, "<init>", "(Ljava/lang/String;)V").map_err(|e| fail(&e.to_string()))?;
    let jname = jni.new_string_utf(name).map_err(|e| fail(&e.to_string()))?;
    // SAFETY: `ctor` is Thread(String) and the one argument is a String.
    let thread =
        unsafe { jni.new_object(thread_class, ctor, &[jvalue { l: jname }]) }.map_err(|e| fail(&e.to_string()))?;
    let global = jni.new_global_ref(thread).map_err(|e| fail(&e.to_string()))?;
    // Registered before it runs, so its events are ignored from the first one.
    agent.add_agent_thread(GlobalRef(global)).map_err(|_| fail("too many agent threads"))?;
    // SAFETY: `main` is an agent thread body that takes ownership of `arg`, which it was built for.
    unsafe { agent.jvmti.run_agent_thread(thread, main, arg, sys::JVMTI_THREAD_MAX_PRIORITY) }
        .map_err(|e| fail(&e.to_string()))
}
