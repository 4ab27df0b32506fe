//! The JDWP agent: a `cdylib` loaded into a HotSpot JVM (`-agentpath:libjdwp_agent.so=...`, or in
//! place of the JDK's `libjdwp.so`) that serves debuggers over JDWP using JVMTI.
//!
//! The layout is in `ARCHITECTURE.md`: modules form layers, from the FFI (`jvmti`, `jni`) up
//! through the agent's state ([`agent`]), the event vocabulary and engine (steps, invocations,
//! profiling), the command sets (`commands`), to event delivery and the loader (`Agent_OnLoad`);
//! `tests/layers.rs` checks that no module imports a higher layer. State is owned by the one
//! [`agent::Agent`]; each remaining module static says why it is one.
//!
//! Every function the VM calls (exports and JVMTI callbacks) must run its body inside `guard`,
//! so that no panic unwinds into the VM.

pub mod agent;
mod agent_properties;
mod agent_thread;
mod allow;
mod app_resume;
mod backend;
mod backpressure;
mod callbacks;
mod commands;
pub mod dispatch;
mod event_helper;
pub mod events;
mod frame_pop;
mod gate;
mod heap_walk;
mod id_hash;
pub mod id_kinds;
mod invoke;
pub mod jni;
pub mod jvmti;
mod loader;
mod logging;
pub mod options;
mod outbox;
pub mod profiling;
mod raw;
pub mod runtime;
mod sde;
pub mod session;
mod step;
pub mod thread_control;
mod tid_index;
pub mod transport;
mod values;
mod virtual_threads;

use std::panic::{AssertUnwindSafe, UnwindSafe};

// The single-stepping switch is part of stepping; the event helper and the backend name it by
// its old path.
use step::switch as step_switch;

/// Runs `f`, returning `default` instead if it panics: a panic must never unwind out of an
/// `extern "C"` function into the VM (that aborts the process at best).
///
/// The panic is logged with `tracing` (the default panic hook has already printed it to stderr
/// unless the loader replaced the hook).
pub(crate) fn guard<F: FnOnce() -> R + UnwindSafe, R>(default: R, f: F) -> R {
    match std::panic::catch_unwind(f) {
        Ok(value) => value,
        Err(payload) => {
            let message = payload
                .downcast_ref::<&str>()
                .copied()
                .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
                .unwrap_or("(not a string)");
            // Logging runs arbitrary subscriber code; a panic there must not escape either.
            let _ = std::panic::catch_unwind(AssertUnwindSafe(|| {
                tracing::error!(panic = message, "panic caught at the VM boundary; carrying on with a default");
            }));
            // Dropping the payload runs its destructor, which could itself panic.
            let _ = std::panic::catch_unwind(AssertUnwindSafe(move || drop(payload)));
            default
        }
    }
}

#[cfg(test)]
mod tests {
    use super::guard;

    #[test]
    fn guard_passes_values_through() {
        assert_eq!(guard(0, || 42), 42);
    }

    #[test]
    fn guard_turns_a_panic_into_the_default() {
        assert_eq!(guard(-1, || -> i32 { panic!("boom") }), -1);
        let formatted = guard("default", || -> &str { panic!("{} {}", "formatted", 1) });
        assert_eq!(formatted, "default");
        // A payload that is not a string.
        assert_eq!(guard(7u8, || -> u8 { std::panic::panic_any(12345u64) }), 7);
    }
}
