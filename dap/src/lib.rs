//! jdbg-dap: a Debug Adapter Protocol server for JVMs, on jdi-rs.
//!
//! An editor speaks DAP to [`serve`] (over stdin/stdout, or a TCP connection); the adapter turns
//! requests into jdi-rs calls and VM events into DAP events. The pure parts are modules of their
//! own and unit-tested: [`framing`] (the `Content-Length` base protocol), [`protocol`] (the DAP
//! subset, with serde), [`ids`] (numbers for threads, frames and variable containers; paging),
//! [`sources`] (source files ↔ classes), [`logmessage`] (logpoint `{expression}` parts). [`adapter`] is the session: launch/attach, breakpoints,
//! inspection, stepping, and the extras our agent offers (deadlocks, profiling). Expressions
//! (conditions, logpoints, `evaluate`, `setVariable`) go through `jdb-expr`, jdb-rs's engine.

pub mod adapter;
pub mod framing;
pub mod ids;
pub mod logmessage;
pub mod protocol;
pub mod sources;
mod values;

pub use adapter::{Config, serve};
