//! `java.lang.Thread.resume()` of a thread the debugger suspended waits for the debugger.
//!
//! In HotSpot, `Thread.suspend`/`Thread.resume` and JVMTI's suspension are one and the same flag,
//! so an application calling `resume()` on a thread the debugger stopped (at a breakpoint, say)
//! would run it behind the debugger's back. The JDK's agent prevents that, and so do we: while a
//! debugger is connected, an internal breakpoint sits at the first bytecode of `Thread.resume`;
//! the thread that reaches it looks at its target (`this`) and, while the debugger's suspend count
//! of the target is above zero, waits until the debugger resumes it (or leaves, or the VM dies).
//! Then `resume()` goes on and does what the application asked.
//!
//! The internal breakpoint is one more use of the counted JVMTI breakpoint ([`breakpoints`]), so a
//! debugger's breakpoint at the same place coexists with it; it is in no request, so it is never
//! reported. With no debugger there is no breakpoint: idle costs nothing.
//!
//! Not done, unlike the JDK's agent: holding the debugger's suspensions off while some thread is
//! between this breakpoint and the end of `Thread.resume`. That agent tracks the rest of the call
//! with frame pop and exception catch events and makes every suspend command wait (polling) while
//! such a call is in flight; all of it to close a window of two calls (`checkAccess`, the native
//! `resume0`) in which a debugger suspending the same target would see its suspension undone by
//! the application. That window is what the application asked for anyway (a resume racing a
//! suspend), `Thread.resume` is deprecated for removal (later JDKs make it throw), and the
//! machinery would put frame pop events and waits in every debugger's suspend path. A suspension
//! lost that way leaves our count above zero with the thread running, until the debugger resumes
//! it (that resume then answers JVMTI's "not suspended", as the JDK's agent would without its
//! guard).

use std::sync::atomic::Ordering;

use jdwp_protocol::ThreadId;
use jni_sys::jmethodID;

use crate::agent::Agent;
use crate::events::{breakpoints, modes};
use crate::jni::Jni;
use crate::jvmti::sys::jthread;

/// Whether a breakpoint at (`method`, `index`) is the internal one (it may be a user's as well).
/// Where it is set is [`ResumeGuard`](crate::agent::engine::ResumeGuard), read lock-free here.
pub fn is_internal(agent: &Agent, method: usize, index: i64) -> bool {
    let guard = &agent.engine.resume_guard;
    guard.active.load(Ordering::Acquire)
        && guard.method.load(Ordering::Acquire) == method
        && guard.index.load(Ordering::Acquire) == index
}

/// A debugger attached: sets the internal breakpoint. Agent threads only.
pub fn session_started(agent: &Agent, jni: Jni) {
    let Ok(known) = agent.known() else { return };
    let _setup = crate::events::setup(agent);
    let guard = &agent.engine.resume_guard;
    if guard.active.load(Ordering::Acquire) {
        return;
    }
    // Absent from a JDK that dropped it: then there is nothing to guard.
    let method = match jni.get_method_id(known.thread.0, "resume", "()V") {
        Ok(m) => m,
        Err(e) => {
            tracing::debug!(?e, "no Thread.resume()");
            return;
        }
    };
    let index = match agent.jvmti.get_method_location(method) {
        Ok((start, _)) => start,
        Err(e) => {
            tracing::warn!(%e, "Thread.resume() has no location");
            return;
        }
    };
    if let Err(e) = breakpoints::acquire(agent, method, index) {
        tracing::warn!(?e, "cannot set the Thread.resume() breakpoint");
        return;
    }
    guard.method.store(method as usize, Ordering::Release);
    guard.index.store(index, Ordering::Release);
    guard.active.store(true, Ordering::Release);
    modes::sync(agent);
}

/// The debugger left: clears the internal breakpoint. Agent threads only. (Threads waiting in
/// [`on_breakpoint`] are released by the reset of the suspend counts, not by this.)
pub fn session_ended(agent: &Agent) {
    let _setup = crate::events::setup(agent);
    let guard = &agent.engine.resume_guard;
    if !guard.active.swap(false, Ordering::AcqRel) {
        return;
    }
    let method = guard.method.load(Ordering::Acquire) as jmethodID;
    breakpoints::release(agent, method, guard.index.load(Ordering::Acquire));
    modes::sync(agent);
}

/// The current thread is at the first bytecode of `Thread.resume()` (after any events reported
/// there): waits while the debugger keeps the thread being resumed suspended. Holds no lock.
pub fn on_breakpoint(agent: &Agent, jni: Jni, thread: jthread) {
    // `this` of `Thread.resume()`: the thread being resumed.
    let resumee = match agent.jvmti.get_local_instance(thread, 0) {
        Ok(t) if !t.is_null() => t,
        _ => return,
    };
    // Its ID (see `Agent::known_id`), read with no lock held across a VM call. None: the debugger
    // never heard of the thread, so it cannot have suspended it.
    let id = agent.known_id(resumee);
    jni.delete_local_ref(resumee);
    let Some(id) = id else { return };
    // No VM call and no lock held while waiting: see `Threads::wait_while_suspended`. If the
    // debugger suspends this thread meanwhile, the suspension takes hold when it leaves this
    // callback, so it then stays in `Thread.resume` until the debugger resumes it too.
    if agent.threads.wait_while_suspended(ThreadId(id), &|| agent.is_vm_dead()) {
        tracing::debug!(id, "Thread.resume() went on after the debugger resumed its thread");
    }
}
