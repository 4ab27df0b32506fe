//! `Profiler` (vendor command set 128): profiling and deadlock detection over the debug connection.
//!
//! JDWP reserves sets 128–255 for vendors. The JDK 17 agent must never receive one: it indexes
//! its dispatch table with the set number as a signed byte, unchecked, and the VM crashes. So a
//! client first checks that `VirtualMachine.Version`'s description contains [`AGENT_MARKER`] (our
//! agent's name), and only then sends [`Capabilities`]; an agent that names itself so but lacks
//! the set answers `NOT_IMPLEMENTED`. This set is not part of the JDWP table
//! ([`crate::commands::ALL`]); it is listed in [`crate::commands::VENDOR`].
//!
//! Versioning: [`CapabilitiesReply::version`] is [`VERSION`]. A layout published under a version
//! never changes; a later version adds commands (new numbers) or feature names, never reshapes an
//! existing body. Every start command carries a `flags` word: undefined bits are `ILLEGAL_ARGUMENT`, so
//! options can be added without new commands ([`CPU_FLAG_JVMTI_STACKS`] is the one defined).
//!
//! Stacks travel as strings (class signature, method name and signature, source file, line), not
//! as IDs: the reports outlive the classes and threads they mention, and a client prints them
//! without further round trips. Lines: -1 when the method has no line table, -2 for a native method (as
//! `StackTraceElement` does). Reports share stacks through a trace table ([`Trace`]): sites and
//! samples refer to a `trace_id` of that table.
//!
//! Live events ([`Event`], command 100) travel from the agent to the debugger like
//! `Event.Composite`, but in this set, and only after [`Subscribe`], so a debugger that never
//! subscribes never sees one. Full description: `spec-notes/profiler.md`.

use super::prelude::*;

/// The version of this command set this crate speaks.
pub const VERSION: i32 = 1;

/// What our agent's `VirtualMachine.Version` description contains: the only safe test before
/// sending a vendor command (see the module's documentation).
pub const AGENT_MARKER: &str = "jdbg-rs agent";

/// [`CpuStart`] flag: take stacks with JVMTI stack traces (a short safepoint or handshake per tick)
/// even where the agent can sample with signals (`AsyncGetCallTrace`), for comparison.
pub const CPU_FLAG_JVMTI_STACKS: i32 = 1;

/// Feature names a [`CapabilitiesReply`] may list; each names the commands it makes available.
pub mod feature {
    /// `CpuStart`, `CpuStop`, `CpuReport`.
    pub const CPU: &str = "cpu";
    /// `AllocStart`, `AllocStop`, `AllocReport`.
    pub const ALLOC: &str = "alloc";
    /// `MonitorStart`, `MonitorStop`, `MonitorReport`.
    pub const MONITOR: &str = "monitor";
    /// `HeapHistogram`.
    pub const HEAP_HISTOGRAM: &str = "heap-histogram";
    /// `HeapDump`.
    pub const HEAP_DUMP: &str = "heap-dump";
    /// `GcStats`.
    pub const GC: &str = "gc";
    /// `Deadlocks`.
    pub const DEADLOCKS: &str = "deadlocks";
    /// `Subscribe`, `Unsubscribe` and the `Event` command; which event kinds are available is
    /// named separately (`event:` + the kind's name, e.g. `event:GcFinished`).
    pub const EVENTS: &str = "events";
}

wire_enum! {
    /// What kind of lock a deadlocked thread waits for.
    LockKind: u8 as "lock kind" {
        /// An object's monitor (`synchronized`, `Object.wait` re-entry).
        Monitor = 1,
        /// A `java.util.concurrent` ownable synchronizer (an `AbstractOwnableSynchronizer` such as
        /// `ReentrantLock`'s or `ReentrantReadWriteLock`'s write lock) the thread is parked on.
        OwnableSynchronizer = 2,
    }
}

wire_enum! {
    /// The kinds of live profiling event a debugger can subscribe to.
    ProfilerEventKind: u8 as "profiler event kind" {
        /// A garbage collection finished.
        GcFinished = 1,
        /// A thread blocked on a monitor another thread held, and has now entered it.
        MonitorContended = 2,
    }
}

jdwp_struct! {
    /// One frame of a reported stack, innermost first: where it executes, by name. `source_file`
    /// is the class's `SourceFile` attribute, empty when it has none.
    FrameInfo { class_signature: String, method_name: String, method_signature: String, source_file: String, line: i32 }
}

jdwp_struct! {
    /// One stack of a report's trace table; sites and samples refer to it by `trace_id`.
    Trace { trace_id: i32, frames: Vec<FrameInfo> }
}

jdwp_struct! {
    /// A thread that appears in a CPU report. `thread` is null when the thread has since been
    /// collected; `index` is what [`ThreadSamples::thread_index`] refers to.
    ProfiledThread { index: i32, thread: ThreadId, name: String, samples: i64 }
}

jdwp_struct! {
    /// How many samples of one trace were taken in one thread.
    ThreadSamples { thread_index: i32, samples: i64 }
}

jdwp_struct! {
    /// One distinct stack seen by the CPU sampler, with how often, in total and per thread.
    CpuTrace { trace_id: i32, frames: Vec<FrameInfo>, samples: i64, per_thread: Vec<ThreadSamples> }
}

jdwp_struct! {
    /// An allocation site: a stack and the class allocated there, with what was allocated while
    /// sampling (sampled objects scaled by the sampling interval, as JVMTI samples) and what of it
    /// is still alive.
    AllocSite {
        trace_id: i32,
        class_signature: String,
        allocated_count: i64,
        allocated_bytes: i64,
        live_count: i64,
        live_bytes: i64,
    }
}

jdwp_struct! {
    /// A thread that owned a contended monitor while others waited, at the stack it held it from.
    MonitorOwner { thread: ThreadId, thread_name: String, trace_id: i32, times: i64 }
}

jdwp_struct! {
    /// Contention on monitors of one class at one waiting site (the stack that blocked).
    MonitorSite {
        class_signature: String,
        trace_id: i32,
        contended_count: i64,
        total_blocked_nanos: i64,
        max_blocked_nanos: i64,
        owners: Vec<MonitorOwner>,
    }
}

jdwp_struct! {
    /// One row of a heap histogram: a loaded class and its instances on the heap.
    HistogramEntry { type_id: ReferenceTypeId, class_signature: String, instances: i64, bytes: i64 }
}

jdwp_struct! {
    /// One thread of a deadlock cycle: the lock it waits for and the thread owning that lock (the
    /// next thread of the cycle).
    DeadlockedThread {
        thread: ThreadId,
        name: String,
        frames: Vec<FrameInfo>,
        kind: LockKind,
        lock: TaggedObjectId,
        lock_class_signature: String,
        owner: ThreadId,
    }
}

jdwp_struct! {
    /// Threads each waiting for a lock the next one owns, the last waiting for the first's.
    DeadlockCycle { threads: Vec<DeadlockedThread> }
}

jdwp_select! {
    /// One live profiling event, selected by its [`ProfilerEventKind`].
    ProfilerEvent by ProfilerEventKind {
        /// A collection finished: its number (1 for the first the agent saw), when it started
        /// (nanoseconds since the agent's clock origin, JVMTI `GetTime`), how long the VM was
        /// paused, and heap use around it (-1 when unknown).
        GcFinished { collection: i64, start_nanos: i64, pause_nanos: i64, heap_used_before: i64, heap_used_after: i64 },
        /// `thread` blocked `blocked_nanos` on `monitor` (of class `class_signature`) held by
        /// `owner` (null when unknown), and has now entered it.
        MonitorContended {
            thread: ThreadId,
            monitor: TaggedObjectId,
            class_signature: String,
            owner: ThreadId,
            blocked_nanos: i64,
        },
    }
}

command_set! {
    Profiler = 128 {
        /// Discovery: the version of this set the agent speaks and the features it implements
        /// (names from [`feature`]). An agent without this set answers `NOT_IMPLEMENTED`.
        Capabilities = 1 {
            out Capabilities {}
            reply CapabilitiesReply { version: i32, features: Vec<String> }
        }
        /// Starts CPU sampling (discarding earlier samples): every `interval_micros`, the stacks
        /// (at most `max_depth` frames, 0 for the agent's default) of the threads that ran since
        /// the previous tick. `threads` limits sampling to those threads; empty means all.
        /// Already sampling: restarts with the new settings.
        CpuStart = 2 {
            out CpuStart { interval_micros: i32, max_depth: i32, threads: Vec<ThreadId>, flags: i32 }
            reply CpuStartReply {}
        }
        /// Stops CPU sampling; the samples are kept for `CpuReport`.
        CpuStop = 3 {
            out CpuStop {}
            reply CpuStopReply {}
        }
        /// The samples taken since `CpuStart` (sampling may still be running): `ticks` sampler
        /// ticks over `elapsed_nanos`, `samples` stacks recorded in all, `idle_skipped` thread
        /// visits skipped because the thread had not run since the previous tick. What sampling
        /// cost: `sampler_cpu_nanos`, the CPU time the sampler's thread used in its ticks, and
        /// `stack_walk_nanos`, the wall time spent taking stacks (in HotSpot, time in which the
        /// sampled threads were stopped). Traces by decreasing samples. `reset` discards the
        /// samples after answering.
        CpuReport = 4 {
            out CpuReport { reset: bool }
            reply CpuReportReply {
                running: bool,
                interval_micros: i32,
                elapsed_nanos: i64,
                ticks: i64,
                samples: i64,
                idle_skipped: i64,
                sampler_cpu_nanos: i64,
                stack_walk_nanos: i64,
                threads: Vec<ProfiledThread>,
                traces: Vec<CpuTrace>,
            }
        }
        /// Starts sampling allocations, about one every `sampling_interval_bytes` allocated
        /// bytes, recording stacks of at most `max_depth` frames (0: the agent's default).
        AllocStart = 5 {
            out AllocStart { sampling_interval_bytes: i32, max_depth: i32, flags: i32 }
            reply AllocStartReply {}
        }
        /// Stops sampling allocations; the sites are kept for `AllocReport` (live counts keep
        /// falling as sampled objects are collected).
        AllocStop = 6 {
            out AllocStop {}
            reply AllocStopReply {}
        }
        /// The allocation sites, by decreasing allocated bytes. `reset` discards them after
        /// answering.
        AllocReport = 7 {
            out AllocReport { reset: bool }
            reply AllocReportReply {
                running: bool,
                sampling_interval_bytes: i32,
                samples: i64,
                traces: Vec<Trace>,
                sites: Vec<AllocSite>,
            }
        }
        /// Starts recording monitor contention, with stacks of at most `max_depth` frames.
        MonitorStart = 8 {
            out MonitorStart { max_depth: i32, flags: i32 }
            reply MonitorStartReply {}
        }
        /// Stops recording monitor contention; what was recorded is kept for `MonitorReport`.
        MonitorStop = 9 {
            out MonitorStop {}
            reply MonitorStopReply {}
        }
        /// Contention per monitor class and waiting site, by decreasing total blocked time.
        /// `reset` discards it after answering.
        MonitorReport = 10 {
            out MonitorReport { reset: bool }
            reply MonitorReportReply { running: bool, traces: Vec<Trace>, monitors: Vec<MonitorSite> }
        }
        /// Instances and bytes per loaded class on the heap now, by decreasing bytes, at most
        /// `max_entries` rows (0: all). `live_only` forces a full collection first, so only
        /// reachable objects count (like `jmap -histo:live`).
        HeapHistogram = 11 {
            out HeapHistogram { live_only: bool, max_entries: i32 }
            reply HeapHistogramReply { total_instances: i64, total_bytes: i64, entries: Vec<HistogramEntry> }
        }
        /// Writes an HPROF binary heap dump to `path` on the target's machine (which must not
        /// exist yet); `live_only` dumps only reachable objects.
        HeapDump = 12 {
            out HeapDump { path: String, live_only: bool }
            reply HeapDumpReply { bytes_written: i64 }
        }
        /// Garbage collection statistics. The agent watches collections from the first
        /// `GcStats` (or `GcFinished` subscription) of the session until it ends:
        /// `watching_nanos` is how long that has been (0 on the first call). Heap use is -1
        /// when unknown. `reset` zeroes the counters after answering.
        GcStats = 13 {
            out GcStats { reset: bool }
            reply GcStatsReply {
                watching_nanos: i64,
                collections: i64,
                total_pause_nanos: i64,
                max_pause_nanos: i64,
                last_pause_nanos: i64,
                heap_used_before: i64,
                heap_used_after: i64,
            }
        }
        /// Every deadlock among the VM's threads now, over monitors and ownable synchronizers
        /// alike, with stacks of at most `max_depth` frames (0: the agent's default, -1: all).
        Deadlocks = 14 {
            out Deadlocks { max_depth: i32 }
            reply DeadlocksReply { cycles: Vec<DeadlockCycle> }
        }
        /// Adds event kinds to this session's subscription; the reply lists all subscribed now.
        /// A kind the agent cannot report is `INVALID_EVENT_TYPE`.
        Subscribe = 15 {
            out Subscribe { kinds: Vec<ProfilerEventKind> }
            reply SubscribeReply { subscribed: Vec<ProfilerEventKind> }
        }
        /// Removes event kinds from the subscription (empty: all); the reply lists those left.
        Unsubscribe = 16 {
            out Unsubscribe { kinds: Vec<ProfilerEventKind> }
            reply UnsubscribeReply { subscribed: Vec<ProfilerEventKind> }
        }
        /// Live events, sent by the agent to a subscribed debugger; never answered
        /// (`EventsReply` only fills the table). The agent answers this command with
        /// `NOT_IMPLEMENTED` when a debugger sends it.
        Event = 100 {
            out Events { events: Vec<ProfilerEvent> }
            reply EventsReply {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::{decode_body, encode_body};

    #[test]
    fn capabilities_reply_layout() {
        let reply = CapabilitiesReply { version: VERSION, features: vec![feature::CPU.into()] };
        let bytes = encode_body(&reply, IdSizes::default());
        assert_eq!(bytes, [0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 3, b'c', b'p', b'u']);
        assert_eq!(decode_body::<CapabilitiesReply>(&bytes, IdSizes::default()).unwrap(), reply);
    }

    #[test]
    fn event_composite_layout() {
        let events = Events {
            events: vec![ProfilerEvent::GcFinished {
                collection: 1,
                start_nanos: 2,
                pause_nanos: 3,
                heap_used_before: -1,
                heap_used_after: -1,
            }],
        };
        let bytes = encode_body(&events, IdSizes::default());
        assert_eq!(bytes[..5], [0, 0, 0, 1, ProfilerEventKind::GcFinished as u8]);
        assert_eq!(bytes.len(), 4 + 1 + 5 * 8);
        assert_eq!(decode_body::<Events>(&bytes, IdSizes::default()).unwrap(), events);
        // An unknown kind is a decoding error, not a panic.
        assert!(decode_body::<Events>(&[0, 0, 0, 1, 77], IdSizes::default()).is_err());
    }
}
