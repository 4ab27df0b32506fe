//! `Profiler` (vendor set 128), part: allocation sites, monitor contention and the HPROF heap dump
//! (the rest of the set is in `profiler.rs`). Handlers only decode, call the feature's module in
//! `crate::profiling`, and encode.

use jdwp_protocol::ErrorCode;
use jdwp_protocol::commands::profiler::*;

use crate::agent::Agent;
use crate::dispatch::Entry;

/// Writes an HPROF dump on the target's machine.
pub fn heap_dump(agent: &Agent, cmd: HeapDump) -> Result<HeapDumpReply, ErrorCode> {
    if cmd.path.is_empty() {
        return Err(ErrorCode::ILLEGAL_ARGUMENT);
    }
    let bytes_written = crate::profiling::heap_dump::dump(agent, &cmd.path, cmd.live_only)?;
    Ok(HeapDumpReply { bytes_written })
}

/// This module's commands.
pub(super) static TABLE: &[Entry<Agent>] = crate::dispatch_table!(Agent;
    HeapDump => heap_dump,
);
