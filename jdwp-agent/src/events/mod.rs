//! Event requests and filtering: which debugger requests an event satisfies, and the JVMTI state
//! (breakpoints, watches, enabled events) kept in step with the requests.

pub mod breakpoint_table;
pub mod breakpoints;
pub mod entry;
pub mod filter;
pub mod install;
pub mod modes;
pub mod requests;
pub mod subject;
pub mod unload;

use std::sync::{MutexGuard, TryLockError};

use crate::agent::Agent;

/// Serializes every change to the JVMTI state behind requests (breakpoints, field watches, event
/// modes, method entry and class unload tracking). Taken by agent threads only — the session thread
/// and the event helper — which may hold it across JVMTI calls; event callbacks hand such work to
/// the helper instead (see the locking rules in [`crate::agent`]).
pub(crate) fn setup(agent: &Agent) -> MutexGuard<'_, ()> {
    crate::agent::lock(&agent.engine.setup)
}

/// [`setup`], unless someone holds it (for agent threads that may not wait, such as the helper
/// itself when it prepares a class).
pub(crate) fn try_setup(agent: &Agent) -> Result<MutexGuard<'_, ()>, ()> {
    match agent.engine.setup.try_lock() {
        Ok(guard) => Ok(guard),
        Err(TryLockError::Poisoned(e)) => Ok(e.into_inner()),
        Err(TryLockError::WouldBlock) => Err(()),
    }
}
