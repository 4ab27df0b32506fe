//! Event requests and filtering: which debugger requests an event satisfies, and the JVMTI state
//! (breakpoints, watches, enabled events) kept in step with the requests.

pub mod breakpoints;
pub mod entry;
pub mod filter;
pub mod modes;
pub mod requests;
pub mod subject;
pub mod unload;

use std::sync::{Mutex, MutexGuard, TryLockError};

/// Serializes every change to the JVMTI state behind requests (breakpoints, field watches, event
/// modes, method entry and class unload tracking). Taken by agent threads only — the session thread
/// and the event helper — which may hold it across JVMTI calls; event callbacks hand such work to
/// the helper instead (see the locking rules in [`crate::agent`]).
static SETUP: Mutex<()> = Mutex::new(());

pub(crate) fn setup() -> MutexGuard<'static, ()> {
    crate::agent::lock(&SETUP)
}

/// [`setup`], unless someone holds it (for agent threads that may not wait, such as the helper
/// itself when it prepares a class).
pub(crate) fn try_setup() -> Result<MutexGuard<'static, ()>, ()> {
    match SETUP.try_lock() {
        Ok(guard) => Ok(guard),
        Err(TryLockError::Poisoned(e)) => Ok(e.into_inner()),
        Err(TryLockError::WouldBlock) => Err(()),
    }
}
