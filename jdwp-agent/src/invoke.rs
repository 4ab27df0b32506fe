//! Method invocation on a suspended thread (`InvokeMethod`, `NewInstance`): not built yet.
//!
//! [`after_event`] is where an event thread, once resumed, will pick up invocations the debugger
//! queued for it. Today it does nothing: invoke commands answer `NOT_IMPLEMENTED`.

use crate::agent::Agent;
use crate::jni::Jni;
use crate::jvmti::sys::jthread;

/// Called by an event thread after its event was delivered, before it returns to the VM.
pub fn after_event(_agent: &Agent, _jni: Jni, _thread: jthread) {}
