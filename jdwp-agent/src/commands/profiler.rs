//! `Profiler` (vendor command set 128): argument checks and dispatch to `crate::profiling`.
//! Commands of features this agent does not have (allocation sites, monitor contention, heap
//! dumps) are not listed and answer `NOT_IMPLEMENTED`, as `Capabilities` tells.

use std::time::Duration;

use jdwp_protocol::ErrorCode;
use jdwp_protocol::commands::profiler::*;

use crate::agent::{Agent, lock};
use crate::dispatch::Entry;
use crate::profiling::{self, cpu, profiler};

pub(super) static TABLE: &[Entry<Agent>] = crate::dispatch_table!(Agent;
    Capabilities => capabilities,
    CpuStart => cpu_start,
    CpuStop => cpu_stop,
    CpuReport => cpu_report,
    HeapHistogram => heap_histogram,
    GcStats => gc_stats,
    Deadlocks => deadlocks,
    Subscribe => subscribe,
    Unsubscribe => unsubscribe,
);

/// The shortest sampling interval accepted: below it, a tick costs more than the interval.
const MIN_INTERVAL_MICROS: i32 = 100;

fn capabilities(agent: &Agent, _: Capabilities) -> Result<CapabilitiesReply, ErrorCode> {
    profiler()?;
    Ok(CapabilitiesReply { version: VERSION, features: profiling::features(agent) })
}

/// Version 1 defines no flags.
fn cpu_start(agent: &Agent, cmd: CpuStart) -> Result<CpuStartReply, ErrorCode> {
    let profiler = profiler()?;
    if !agent.jvmti.get_capabilities()?.can_get_thread_cpu_time() {
        return Err(ErrorCode::NOT_IMPLEMENTED);
    }
    if cmd.flags & !cpu::FLAG_JVMTI_STACKS != 0 {
        return Err(ErrorCode::ILLEGAL_ARGUMENT);
    }
    if cmd.interval_micros < MIN_INTERVAL_MICROS || cmd.max_depth < 0 {
        return Err(ErrorCode::ILLEGAL_ARGUMENT);
    }
    let depth = if cmd.max_depth == 0 { cpu::DEFAULT_DEPTH } else { cmd.max_depth.min(cpu::MAX_DEPTH) };
    let jni = agent.jni()?;
    let filter = if cmd.threads.is_empty() {
        None
    } else {
        let mut threads = Vec::with_capacity(cmd.threads.len());
        for &id in &cmd.threads {
            threads.push(agent.thread(jni, id)?);
        }
        Some(threads)
    };
    let interval = Duration::from_micros(cmd.interval_micros as u64);
    lock(&profiler.cpu).start(agent, jni, interval, depth, filter, cmd.flags)?;
    profiler.ensure_thread(agent, jni)?;
    Ok(CpuStartReply {})
}

fn cpu_stop(agent: &Agent, _: CpuStop) -> Result<CpuStopReply, ErrorCode> {
    let profiler = profiler()?;
    lock(&profiler.cpu).stop(agent, agent.jni()?);
    Ok(CpuStopReply {})
}

fn cpu_report(agent: &Agent, cmd: CpuReport) -> Result<CpuReportReply, ErrorCode> {
    let profiler = profiler()?;
    let jni = agent.jni()?;
    lock(&profiler.cpu).report(agent, jni, cmd.reset)
}

fn heap_histogram(agent: &Agent, cmd: HeapHistogram) -> Result<HeapHistogramReply, ErrorCode> {
    profiler()?;
    profiling::histogram::histogram(agent, agent.jni()?, cmd.live_only, cmd.max_entries)
}

fn gc_stats(_agent: &Agent, cmd: GcStats) -> Result<GcStatsReply, ErrorCode> {
    let profiler = profiler()?;
    profiler.gc.stats(profiler, cmd.reset)
}

fn deadlocks(agent: &Agent, cmd: Deadlocks) -> Result<DeadlocksReply, ErrorCode> {
    profiler()?;
    let caps = agent.jvmti.get_capabilities()?;
    if !(caps.can_get_current_contended_monitor() && caps.can_get_monitor_info()) {
        return Err(ErrorCode::NOT_IMPLEMENTED);
    }
    profiling::deadlock::find(agent, agent.jni()?, cmd.max_depth)
}

fn subscribe(agent: &Agent, cmd: Subscribe) -> Result<SubscribeReply, ErrorCode> {
    let profiler = profiler()?;
    profiler.events.subscribe(profiler, &cmd.kinds)?;
    profiler.ensure_thread(agent, agent.jni()?)?;
    Ok(SubscribeReply { subscribed: profiler.events.subscribed() })
}

fn unsubscribe(_agent: &Agent, cmd: Unsubscribe) -> Result<UnsubscribeReply, ErrorCode> {
    let profiler = profiler()?;
    profiler.events.unsubscribe(&cmd.kinds);
    Ok(UnsubscribeReply { subscribed: profiler.events.subscribed() })
}
