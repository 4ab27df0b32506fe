//! The profiler of our agent (vendor command set 128, `Profiler`), as a typed API.
//!
//! [`Profiler::detect`] checks that the agent is ours (its `VirtualMachine.Version` description
//! names it) and then asks for the set's `Capabilities`. Any other agent is
//! [`JdiError::Unsupported`] without a vendor command ever being sent: the JDK 17 agent crashes
//! the VM on a command set of 128 or more. A client then falls back (deadlocks:
//! [`crate::deadlock::find_deadlocks`]) or tells the user. Replies are the protocol's
//! own types, re-exported here; see `spec-notes/profiler.md` for what each field means.

use std::time::Duration;

use jdwp_protocol::codec;
use jdwp_protocol::commands::profiler as p;
use tokio::sync::mpsc;

use crate::error::{JdiError, Result};
use crate::mirrors::ThreadReference;
use crate::vm::VirtualMachine;

pub use p::{
    AllocReportReply, AllocSite, CpuReportReply, CpuTrace, DeadlockCycle, DeadlockedThread, FrameInfo, GcStatsReply,
    HeapHistogramReply, HistogramEntry, LockKind, MonitorReportReply, ProfiledThread, ProfilerEvent, ProfilerEventKind,
    ThreadSamples, Trace, feature,
};

mod alloc_monitor_dump;

pub use p::{CPU_FLAG_JVMTI_STACKS, MonitorOwner, MonitorSite};

/// What [`JdiError::Unsupported`] says when the agent has no profiler.
const NO_PROFILER: &str = "profile: its JDWP agent has no Profiler command set (it is not jdwp-rs's agent)";

/// The profiler of one VM, once detected.
#[derive(Clone)]
pub struct Profiler {
    vm: VirtualMachine,
    version: i32,
    features: Vec<String>,
}

impl Profiler {
    /// Asks the agent whether it has the profiler: [`JdiError::Unsupported`] when it is not ours
    /// (nothing is sent to it but `VirtualMachine.Version`), or when it answers the discovery with
    /// an error (`NOT_IMPLEMENTED` from an agent of ours without the set).
    pub async fn detect(vm: &VirtualMachine) -> Result<Profiler> {
        if !vm.version().await?.description.contains(p::AGENT_MARKER) {
            return Err(JdiError::Unsupported(NO_PROFILER));
        }
        match vm.send(&p::Capabilities {}).await {
            Ok(reply) => Ok(Profiler { vm: vm.clone(), version: reply.version, features: reply.features }),
            Err(JdiError::Jdwp { .. }) => Err(JdiError::Unsupported(NO_PROFILER)),
            Err(e) => Err(e),
        }
    }

    /// The version of the command set the agent speaks.
    pub fn version(&self) -> i32 {
        self.version
    }

    /// The feature names the agent announced (see [`feature`]).
    pub fn features(&self) -> &[String] {
        &self.features
    }

    /// Whether the agent announced `feature`.
    pub fn has(&self, feature: &str) -> bool {
        self.features.iter().any(|f| f == feature)
    }

    fn require(&self, feature: &'static str) -> Result<()> {
        if self.has(feature) { Ok(()) } else { Err(JdiError::Unsupported(feature_message(feature))) }
    }

    /// Starts CPU sampling every `interval` (at least 100 µs), stacks of at most `max_depth`
    /// frames (0: the agent's default), of `threads` only (empty: all threads).
    pub async fn cpu_start(&self, interval: Duration, max_depth: i32, threads: &[ThreadReference]) -> Result<()> {
        self.cpu_start_with_flags(interval, max_depth, threads, 0).await
    }

    /// [`Profiler::cpu_start`] with `CpuStart`'s flags, e.g. [`CPU_FLAG_JVMTI_STACKS`] to sample
    /// with JVMTI stack traces where the agent would use signals.
    pub async fn cpu_start_with_flags(
        &self,
        interval: Duration,
        max_depth: i32,
        threads: &[ThreadReference],
        flags: i32,
    ) -> Result<()> {
        self.require(feature::CPU)?;
        let interval_micros = i32::try_from(interval.as_micros())
            .map_err(|_| JdiError::InvalidArgument(format!("sampling interval {interval:?} is too long")))?;
        let threads = threads.iter().map(|t| t.id()).collect();
        self.vm.send(&p::CpuStart { interval_micros, max_depth, threads, flags }).await?;
        Ok(())
    }

    /// Stops CPU sampling (the samples stay for [`Profiler::cpu_report`]).
    pub async fn cpu_stop(&self) -> Result<()> {
        self.require(feature::CPU)?;
        self.vm.send(&p::CpuStop {}).await?;
        Ok(())
    }

    /// The CPU samples so far; `reset` discards them afterwards.
    pub async fn cpu_report(&self, reset: bool) -> Result<CpuReportReply> {
        self.require(feature::CPU)?;
        self.vm.send(&p::CpuReport { reset }).await
    }

    /// Instances and bytes per class, by decreasing bytes (`max_entries` 0: all rows);
    /// `live_only` collects garbage first.
    pub async fn heap_histogram(&self, live_only: bool, max_entries: i32) -> Result<HeapHistogramReply> {
        self.require(feature::HEAP_HISTOGRAM)?;
        self.vm.send(&p::HeapHistogram { live_only, max_entries }).await
    }

    /// Garbage collection statistics (the agent watches from the first call on); `reset` zeroes
    /// them afterwards.
    pub async fn gc_stats(&self, reset: bool) -> Result<GcStatsReply> {
        self.require(feature::GC)?;
        self.vm.send(&p::GcStats { reset }).await
    }

    /// Every deadlock cycle, over monitors and ownable synchronizers, in one round trip; stacks of
    /// at most `max_depth` frames (0: the agent's default, -1: all).
    pub async fn deadlocks(&self, max_depth: i32) -> Result<Vec<DeadlockCycle>> {
        self.require(feature::DEADLOCKS)?;
        Ok(self.vm.send(&p::Deadlocks { max_depth }).await?.cycles)
    }

    /// Subscribes to live events of `kinds`; they arrive on the returned stream (which replaces
    /// any earlier one) until [`Profiler::unsubscribe`] or the end of the connection.
    pub async fn subscribe(&self, kinds: &[ProfilerEventKind]) -> Result<ProfilerEvents> {
        self.require(feature::EVENTS)?;
        // Route the set's packets before asking, so no event is missed.
        let rx = self.vm.connection().vendor_commands(p::SET);
        self.vm.send(&p::Subscribe { kinds: kinds.to_vec() }).await?;
        Ok(ProfilerEvents { rx, sizes: self.vm.id_sizes(), pending: Vec::new() })
    }

    /// Unsubscribes from `kinds` (empty: all); returns the kinds still subscribed.
    pub async fn unsubscribe(&self, kinds: &[ProfilerEventKind]) -> Result<Vec<ProfilerEventKind>> {
        self.require(feature::EVENTS)?;
        Ok(self.vm.send(&p::Unsubscribe { kinds: kinds.to_vec() }).await?.subscribed)
    }
}

fn feature_message(feature: &'static str) -> &'static str {
    match feature {
        feature::CPU => "profile CPU use (the agent has no 'cpu' profiler feature)",
        feature::HEAP_HISTOGRAM => "make a heap histogram (the agent has no 'heap-histogram' feature)",
        feature::GC => "report GC statistics (the agent has no 'gc' feature)",
        feature::DEADLOCKS => "find deadlocks in one command (the agent has no 'deadlocks' feature)",
        feature::EVENTS => "send profiler events (the agent has no 'events' feature)",
        _ => "do that (the agent lacks the profiler feature)",
    }
}

/// Live profiler events, in the order the agent sent them.
pub struct ProfilerEvents {
    rx: mpsc::UnboundedReceiver<jdwp_transports::Packet>,
    sizes: jdwp_protocol::IdSizes,
    pending: Vec<ProfilerEvent>,
}

impl ProfilerEvents {
    /// The next event; `None` once the connection has closed.
    pub async fn next(&mut self) -> Option<Result<ProfilerEvent>> {
        loop {
            if !self.pending.is_empty() {
                return Some(Ok(self.pending.remove(0)));
            }
            let packet = self.rx.recv().await?;
            if packet.kind
                != (jdwp_transports::PacketKind::Command {
                    set: p::SET,
                    cmd: <p::Events as jdwp_protocol::Command>::CMD,
                })
            {
                continue;
            }
            match codec::decode_body::<p::Events>(&packet.body, self.sizes) {
                Ok(events) => self.pending = events.events,
                Err(source) => return Some(Err(JdiError::Decode { command: "Profiler.Event", source })),
            }
        }
    }

    /// The next event within `timeout`.
    pub async fn next_within(&mut self, timeout: Duration) -> Result<ProfilerEvent> {
        match tokio::time::timeout(timeout, self.next()).await {
            Ok(Some(event)) => event,
            Ok(None) => Err(JdiError::Disconnected { reason: Some("the profiler event stream ended".into()) }),
            Err(_) => Err(JdiError::Timeout(format!("waiting {timeout:?} for a profiler event"))),
        }
    }
}

/// The frames of a trace as one line of "folded stacks" (outermost first, `;`-separated), the
/// input of flame graph tools.
pub fn folded(frames: &[FrameInfo]) -> String {
    frames.iter().rev().map(frame_name).collect::<Vec<_>>().join(";")
}

/// `pkg.Class.method` of a frame.
pub fn frame_name(frame: &FrameInfo) -> String {
    format!("{}.{}", crate::names::type_name_of_signature(&frame.class_signature), frame.method_name)
}
