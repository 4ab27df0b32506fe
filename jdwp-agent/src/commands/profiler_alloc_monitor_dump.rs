//! `Profiler` (vendor set 128), part: allocation sites, monitor contention and the HPROF heap dump
//! (the rest of the set is in `profiler.rs`). Handlers check arguments, call the feature's module
//! in `crate::profiling`, and build the reply (stacks resolved to names here, on the command
//! thread).

use std::collections::HashMap;

use jdwp_protocol::commands::{self as c, profiler::*};
use jdwp_protocol::{ErrorCode, ThreadId};
use jni_sys::jobject;

use crate::agent::Agent;
use crate::dispatch::Entry;
use crate::profiling::alloc::RawStack;
use crate::profiling::stacks::FrameResolver;
use crate::profiling::{alloc, monitors};

/// This module's commands.
/// (Named `c::profiler::…`: these are commands of the `profiler` set though this file is not
/// `profiler.rs`; the coverage generator reads the set from the path.)
pub(super) static TABLE: &[Entry<Agent>] = crate::dispatch_table!(Agent;
    c::profiler::AllocStart => alloc_start,
    c::profiler::AllocStop => alloc_stop,
    c::profiler::AllocReport => alloc_report,
    c::profiler::MonitorStart => monitor_start,
    c::profiler::MonitorStop => monitor_stop,
    c::profiler::MonitorReport => monitor_report,
    c::profiler::HeapDump => heap_dump,
);

/// Deepest stack recorded, whatever the debugger asks.
const MAX_DEPTH: i32 = 1024;

/// Version 1 defines no flags.
fn check_flags(flags: i32) -> Result<(), ErrorCode> {
    if flags == 0 { Ok(()) } else { Err(ErrorCode::ILLEGAL_ARGUMENT) }
}

/// Gives each distinct stack a trace ID (from 1, in order of first use) and resolves its frames.
struct TraceTable {
    resolver: FrameResolver,
    ids: HashMap<RawStack, i32>,
    traces: Vec<Trace>,
}

impl TraceTable {
    fn new(agent: &Agent) -> TraceTable {
        TraceTable { resolver: FrameResolver::new(agent.jvmti), ids: HashMap::new(), traces: Vec::new() }
    }

    fn id(&mut self, stack: &RawStack) -> i32 {
        if let Some(&id) = self.ids.get(stack) {
            return id;
        }
        let id = self.traces.len() as i32 + 1;
        let frames = stack.iter().map(|&(m, l)| self.resolver.frame(m as jni_sys::jmethodID, l)).collect();
        self.traces.push(Trace { trace_id: id, frames });
        self.ids.insert(stack.clone(), id);
        id
    }
}

fn alloc_start(agent: &Agent, cmd: AllocStart) -> Result<AllocStartReply, ErrorCode> {
    check_flags(cmd.flags)?;
    alloc::start(agent, cmd.sampling_interval_bytes, cmd.max_depth.min(MAX_DEPTH))?;
    Ok(AllocStartReply {})
}

fn alloc_stop(_agent: &Agent, _: AllocStop) -> Result<AllocStopReply, ErrorCode> {
    alloc::stop()?;
    Ok(AllocStopReply {})
}

/// Rounds an estimate to the protocol's integers.
fn round(v: f64) -> i64 {
    v.round() as i64
}

fn alloc_report(agent: &Agent, cmd: AllocReport) -> Result<AllocReportReply, ErrorCode> {
    let (running, interval, samples, sites) = alloc::report(cmd.reset);
    let mut traces = TraceTable::new(agent);
    let sites = sites
        .iter()
        .map(|s| AllocSite {
            trace_id: traces.id(&s.stack),
            class_signature: s.class_signature.clone(),
            allocated_count: round(s.allocated_count),
            allocated_bytes: round(s.allocated_bytes),
            live_count: round(s.live_count),
            live_bytes: round(s.live_bytes),
        })
        .collect();
    Ok(AllocReportReply { running, sampling_interval_bytes: interval, samples, traces: traces.traces, sites })
}

fn monitor_start(agent: &Agent, cmd: MonitorStart) -> Result<MonitorStartReply, ErrorCode> {
    check_flags(cmd.flags)?;
    monitors::start(agent, agent.jni()?, cmd.max_depth.min(MAX_DEPTH))?;
    Ok(MonitorStartReply {})
}

fn monitor_stop(_agent: &Agent, _: MonitorStop) -> Result<MonitorStopReply, ErrorCode> {
    monitors::stop()?;
    Ok(MonitorStopReply {})
}

fn monitor_report(agent: &Agent, cmd: MonitorReport) -> Result<MonitorReportReply, ErrorCode> {
    let jni = agent.jni()?;
    let _frame = jni.push_local_frame(16)?;
    let (running, sites) = monitors::report();
    let mut traces = TraceTable::new(agent);
    let mut monitors_out = Vec::with_capacity(sites.len());
    for site in &sites {
        let mut owners = Vec::with_capacity(site.owners.len());
        for owner in &site.owners {
            // A thread that is gone since keeps its name; its ID is null.
            let thread = match jni.new_local_ref(owner.thread as jobject) {
                t if t.is_null() => ThreadId::NULL,
                t => {
                    let id = agent.thread_id(jni, t).unwrap_or(ThreadId::NULL);
                    jni.delete_local_ref(t);
                    id
                }
            };
            owners.push(MonitorOwner {
                thread,
                thread_name: owner.name.clone(),
                trace_id: traces.id(&owner.stack),
                times: owner.times,
            });
        }
        monitors_out.push(MonitorSite {
            class_signature: site.class_signature.clone(),
            trace_id: traces.id(&site.stack),
            contended_count: site.contended_count,
            total_blocked_nanos: site.total_blocked_nanos,
            max_blocked_nanos: site.max_blocked_nanos,
            owners,
        });
    }
    if cmd.reset {
        monitors::reset(jni);
    }
    Ok(MonitorReportReply { running, traces: traces.traces, monitors: monitors_out })
}

/// Writes an HPROF dump on the target's machine.
fn heap_dump(agent: &Agent, cmd: HeapDump) -> Result<HeapDumpReply, ErrorCode> {
    if cmd.path.is_empty() {
        return Err(ErrorCode::ILLEGAL_ARGUMENT);
    }
    let bytes_written = crate::profiling::heap_dump::dump(agent, &cmd.path, cmd.live_only)?;
    Ok(HeapDumpReply { bytes_written })
}
