//! JVMTI raw monitors: the one lock an agent can hold while the VM suspends or calls back into it
//! without deadlocking against VM internals, with an RAII guard for enter/exit.

use std::ffi::CString;
use std::marker::PhantomData;
use std::time::Duration;

use super::sys::{jlong, jrawMonitorID};
use super::{Jvmti, JvmtiError};

/// A raw monitor created by [`Jvmti::create_raw_monitor`].
///
/// Dropping it does not destroy it: the agent's monitors live as long as the VM, and destroying one
/// that another thread may be entering or waiting on is a bug JVMTI cannot always report. Call
/// [`destroy`](Self::destroy) when no thread can use it any more.
#[derive(Debug)]
pub struct RawMonitor {
    jvmti: Jvmti,
    id: jrawMonitorID,
}

// SAFETY: a raw monitor is a VM object meant to be entered, waited on and notified from any thread
// (that is its purpose); the ID is an opaque handle the VM owns, valid until `DestroyRawMonitor`,
// which takes `self` by value. `Jvmti` itself is Send + Sync.
unsafe impl Send for RawMonitor {}
// SAFETY: as above; every operation goes through the VM, which does its own synchronization.
unsafe impl Sync for RawMonitor {}

impl Jvmti {
    /// Creates a raw monitor; the name shows in VM diagnostics (interior NULs are dropped).
    pub fn create_raw_monitor(self, name: &str) -> Result<RawMonitor, JvmtiError> {
        let name = CString::new(name.replace('\0', "")).unwrap_or_default();
        let mut id: jrawMonitorID = std::ptr::null_mut();
        jvmti_call!(self, CreateRawMonitor(name.as_ptr(), &mut id))?;
        Ok(RawMonitor { jvmti: self, id })
    }
}

impl RawMonitor {
    /// Enters the monitor (re-entrantly), returning a guard that exits it when dropped.
    pub fn enter(&self) -> Result<RawMonitorGuard<'_>, JvmtiError> {
        jvmti_call!(self.jvmti, RawMonitorEnter(self.id))?;
        Ok(RawMonitorGuard { monitor: self, _not_send: PhantomData })
    }

    pub fn raw(&self) -> jrawMonitorID {
        self.id
    }

    /// Destroys the monitor. Fails with `NOT_MONITOR_OWNER` if another thread holds it.
    pub fn destroy(self) -> Result<(), JvmtiError> {
        jvmti_call!(self.jvmti, DestroyRawMonitor(self.id))
    }
}

/// Proof that the current thread holds a [`RawMonitor`]; exits it once when dropped.
#[must_use = "the monitor is exited as soon as the guard is dropped"]
#[derive(Debug)]
pub struct RawMonitorGuard<'a> {
    monitor: &'a RawMonitor,
    /// Not `Send`: only the thread that entered a monitor may exit it.
    _not_send: PhantomData<*const ()>,
}

impl RawMonitorGuard<'_> {
    /// Waits for a notification, releasing the monitor meanwhile; `None` waits without a timeout.
    ///
    /// `Err(INTERRUPT)` means the thread was interrupted. Wake-ups may be spurious: wait in a loop
    /// that re-checks the condition.
    pub fn wait(&self, timeout: Option<Duration>) -> Result<(), JvmtiError> {
        // 0 means "no timeout" to JVMTI, so a sub-millisecond timeout must round up, not down.
        let millis: jlong = match timeout {
            None => 0,
            Some(t) => jlong::try_from(t.as_nanos().div_ceil(1_000_000)).unwrap_or(jlong::MAX).max(1),
        };
        jvmti_call!(self.monitor.jvmti, RawMonitorWait(self.monitor.id, millis))
    }

    pub fn notify(&self) -> Result<(), JvmtiError> {
        jvmti_call!(self.monitor.jvmti, RawMonitorNotify(self.monitor.id))
    }

    pub fn notify_all(&self) -> Result<(), JvmtiError> {
        jvmti_call!(self.monitor.jvmti, RawMonitorNotifyAll(self.monitor.id))
    }
}

impl Drop for RawMonitorGuard<'_> {
    fn drop(&mut self) {
        if let Err(e) = jvmti_call!(self.monitor.jvmti, RawMonitorExit(self.monitor.id)) {
            tracing::error!(error = %e, "RawMonitorExit failed");
        }
    }
}
