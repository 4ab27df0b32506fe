//! Profiling commands, on our agent's `Profiler` command set (see jdi-rs's `profiler` module):
//! `profile cpu start [INTERVAL] [jvmti] | stop`, `profile report [N]`, `heap histo [live] [N]`, `gc`, and
//! `deadlocks` in one round trip (the standard-commands search stays the fallback for other
//! agents). The report formats are HPROF's, as far as they apply: `TRACE n:` blocks, then
//! `CPU SAMPLES BEGIN (total = N)` with rank/self/accum/count/trace/method lines.
//!
//! The formatting functions are pure (report in, text or JSON out), shared by the session
//! commands and the one-shot `jdb-rs profile` (see `lib.rs`).

use std::fmt::Write as _;
use std::time::Duration;

use jdi::profiler::{
    CpuReportReply, DeadlockCycle, FrameInfo, GcStatsReply, HeapHistogramReply, LockKind, Profiler, feature, frame_name,
};
use jdi::{JdiError, VirtualMachine};
use serde_json::{Value as Json, json};

use crate::profiling::{DEFAULT_INTERVAL, DEFAULT_TOP, parse_duration};
use crate::session::Session;

/// The arguments of `profile cpu start`: an interval (default [`DEFAULT_INTERVAL`]) and the word
/// `jvmti`, in either order, which asks the agent to sample with JVMTI stack traces (per tick, of
/// the threads that ran since the last one) rather than with its default, timer signals and
/// `AsyncGetCallTrace` (see spec-notes/profiler.md). The `CpuStart` flags to send come back with
/// the interval.
pub fn parse_cpu_start(words: &[&str]) -> Result<(Duration, i32), String> {
    let mut interval = None;
    let mut flags = 0;
    for word in words {
        if word.eq_ignore_ascii_case("jvmti") && flags == 0 {
            flags = jdi::profiler::CPU_FLAG_JVMTI_STACKS;
        } else if interval.is_none() {
            interval = Some(
                parse_duration(word)
                    .ok_or_else(|| format!("Not an interval: '{word}' (examples: 10ms, 1ms, 500us)"))?,
            );
        } else {
            return Err(PROFILE_USAGE.to_string());
        }
    }
    Ok((interval.unwrap_or(DEFAULT_INTERVAL), flags))
}

const PROFILE_USAGE: &str = "Usage: profile cpu start [interval] [jvmti] | profile cpu stop | profile report [count] | \
     profile alloc start [interval-bytes] | profile alloc stop | profile monitors start | profile monitors stop | \
     profile flame <file.svg> [cpu|alloc]";
const HEAP_USAGE: &str = "Usage: heap histo [live] [count] | heap dump <file> [live]";

/// `pkg.Class.method(File.java:12)`, as HPROF and stack traces print a frame.
pub fn frame_text(frame: &FrameInfo) -> String {
    let place = match frame.line {
        -2 => "Native method".to_string(),
        line if frame.source_file.is_empty() => {
            if line > 0 {
                format!("Unknown Source:{line}")
            } else {
                "Unknown Source".to_string()
            }
        }
        -1 => format!("{}:Unknown line", frame.source_file),
        line => format!("{}:{line}", frame.source_file),
    };
    format!("{}({place})", frame_name(frame))
}

fn frame_json(frame: &FrameInfo) -> Json {
    json!({
        "class": jdi::names::type_name_of_signature(&frame.class_signature),
        "method": frame.method_name,
        "signature": frame.method_signature,
        "source": frame.source_file,
        "line": frame.line,
        "text": frame_text(frame),
    })
}

/// HPROF's `cpu=samples` report: the top `top` traces, then the ranked table.
pub fn cpu_report_text(report: &CpuReportReply, top: usize) -> String {
    let mut out = String::new();
    let shown = &report.traces[..report.traces.len().min(top)];
    for trace in shown {
        let _ = writeln!(out, "TRACE {}:", trace.trace_id);
        for frame in &trace.frames {
            let _ = writeln!(out, "\t{}", frame_text(frame));
        }
    }
    let total = report.samples;
    let _ = writeln!(out, "CPU SAMPLES BEGIN (total = {total})");
    let _ = writeln!(out, "rank   self  accum   count trace method");
    let mut accum = 0i64;
    for (rank, trace) in shown.iter().enumerate() {
        accum += trace.samples;
        let pct = |n: i64| if total > 0 { n as f64 * 100.0 / total as f64 } else { 0.0 };
        let method = trace.frames.first().map(frame_name).unwrap_or_else(|| "<no frames>".into());
        let _ = writeln!(
            out,
            "{:4} {:5.2}% {:5.2}% {:7} {:5} {method}",
            rank + 1,
            pct(trace.samples),
            pct(accum),
            trace.samples,
            trace.trace_id
        );
    }
    let _ = writeln!(out, "CPU SAMPLES END");
    let _ = writeln!(
        out,
        "{} samples from {} ticks in {:.3} s every {} us ({}); {} idle thread visits skipped; \
         sampler CPU {:.1} ms, taking stacks {:.1} ms",
        report.samples,
        report.ticks,
        report.elapsed_nanos as f64 / 1e9,
        report.interval_micros,
        if report.running { "running" } else { "stopped" },
        report.idle_skipped,
        report.sampler_cpu_nanos as f64 / 1e6,
        report.stack_walk_nanos as f64 / 1e6,
    );
    out
}

/// The same report as JSON: every trace, with per-thread counts by thread name.
pub fn cpu_report_json(report: &CpuReportReply) -> Json {
    let thread_name =
        |index: i32| report.threads.iter().find(|t| t.index == index).map(|t| t.name.clone()).unwrap_or_default();
    json!({
        "running": report.running,
        "interval_micros": report.interval_micros,
        "elapsed_nanos": report.elapsed_nanos,
        "ticks": report.ticks,
        "samples": report.samples,
        "idle_skipped": report.idle_skipped,
        "sampler_cpu_nanos": report.sampler_cpu_nanos,
        "stack_walk_nanos": report.stack_walk_nanos,
        "threads": report.threads.iter().map(|t| json!({"name": t.name, "id": t.thread.0, "samples": t.samples})).collect::<Vec<_>>(),
        "traces": report.traces.iter().map(|t| json!({
            "id": t.trace_id,
            "samples": t.samples,
            "frames": t.frames.iter().map(frame_json).collect::<Vec<_>>(),
            "threads": t.per_thread.iter().map(|s| json!({"name": thread_name(s.thread_index), "samples": s.samples})).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    })
}

/// `jmap -histo`'s table.
pub fn histogram_text(histogram: &HeapHistogramReply) -> String {
    let mut out = String::new();
    let _ = writeln!(out, " num     #instances         #bytes  class name");
    let _ = writeln!(out, "----------------------------------------------");
    for (i, e) in histogram.entries.iter().enumerate() {
        let name = jdi::names::type_name_of_signature(&e.class_signature);
        let _ = writeln!(out, "{:4}: {:>14} {:>14}  {name}", i + 1, e.instances, e.bytes);
    }
    let _ = writeln!(out, "Total {:>14} {:>14}", histogram.total_instances, histogram.total_bytes);
    out
}

pub fn histogram_json(histogram: &HeapHistogramReply) -> Json {
    json!({
        "total_instances": histogram.total_instances,
        "total_bytes": histogram.total_bytes,
        "classes": histogram.entries.iter().map(|e| json!({
            "class": jdi::names::type_name_of_signature(&e.class_signature),
            "instances": e.instances,
            "bytes": e.bytes,
        })).collect::<Vec<_>>(),
    })
}

pub fn gc_text(stats: &GcStatsReply) -> String {
    let ms = |nanos: i64| nanos as f64 / 1e6;
    let heap = |bytes: i64| if bytes < 0 { "unknown".to_string() } else { format!("{bytes} bytes") };
    format!(
        "{} collections in {:.3} s watched: {:.3} ms paused in all, longest {:.3} ms, last {:.3} ms\nheap used before/after the last: {} / {}\n",
        stats.collections,
        stats.watching_nanos as f64 / 1e9,
        ms(stats.total_pause_nanos),
        ms(stats.max_pause_nanos),
        ms(stats.last_pause_nanos),
        heap(stats.heap_used_before),
        heap(stats.heap_used_after),
    )
}

pub fn gc_json(stats: &GcStatsReply) -> Json {
    json!({
        "watching_nanos": stats.watching_nanos,
        "collections": stats.collections,
        "total_pause_nanos": stats.total_pause_nanos,
        "max_pause_nanos": stats.max_pause_nanos,
        "last_pause_nanos": stats.last_pause_nanos,
        "heap_used_before": stats.heap_used_before,
        "heap_used_after": stats.heap_used_after,
    })
}

/// jstack's deadlock report, for the one-trip command's cycles.
pub fn deadlock_text(cycle: &DeadlockCycle) -> String {
    let mut out = String::new();
    let n = cycle.threads.len();
    let _ = writeln!(out, "Found a Java-level deadlock of {n} threads:");
    for (i, t) in cycle.threads.iter().enumerate() {
        let owner = &cycle.threads[(i + 1) % n];
        let lock_class = jdi::names::type_name_of_signature(&t.lock_class_signature);
        let _ = writeln!(out);
        let _ = writeln!(out, "\"{}\":", t.name);
        let wait = match t.kind {
            LockKind::Monitor => "waiting to lock",
            LockKind::OwnableSynchronizer => "parking to wait for",
        };
        for (depth, frame) in t.frames.iter().enumerate() {
            let _ = writeln!(out, "\tat {}", frame_text(frame));
            if depth == 0 {
                let _ = writeln!(out, "\t- {wait} <{}> (a {lock_class}) held by \"{}\"", t.lock.id.0, owner.name);
            }
        }
        if t.frames.is_empty() {
            let _ = writeln!(out, "\t- {wait} <{}> (a {lock_class}) held by \"{}\"", t.lock.id.0, owner.name);
        }
    }
    out
}

pub fn deadlocks_json(cycles: &[DeadlockCycle]) -> Json {
    Json::Array(
        cycles
            .iter()
            .map(|c| {
                let n = c.threads.len();
                json!({"threads": c.threads.iter().enumerate().map(|(i, t)| json!({
                    "name": t.name,
                    "id": t.thread.0,
                    "kind": match t.kind { LockKind::Monitor => "monitor", LockKind::OwnableSynchronizer => "ownable synchronizer" },
                    "waiting_for": {"type": jdi::names::type_name_of_signature(&t.lock_class_signature), "id": t.lock.id.0},
                    "held_by": c.threads[(i + 1) % n].name,
                    // In a cycle each thread holds what the one before it waits for; the frame
                    // that took it is not part of the one-trip reply (null), which keeps the
                    // shape of the standard-commands report.
                    "holds": [{"lock": {
                        "type": jdi::names::type_name_of_signature(&c.threads[(i + n - 1) % n].lock_class_signature),
                        "id": c.threads[(i + n - 1) % n].lock.id.0,
                    }, "frame": null}],
                    "stack": t.frames.iter().map(frame_json).collect::<Vec<_>>(),
                })).collect::<Vec<_>>()})
            })
            .collect(),
    )
}

/// The one-trip deadlock search when the agent has it; `None` when it has not (then the caller
/// falls back to the standard commands).
pub async fn one_trip_deadlocks(vm: &VirtualMachine) -> Option<jdi::Result<Vec<DeadlockCycle>>> {
    match Profiler::detect(vm).await {
        Ok(p) if p.has(feature::DEADLOCKS) => Some(p.deadlocks(0).await),
        Ok(_) | Err(JdiError::Unsupported(_)) => None,
        Err(e) => Some(Err(e)),
    }
}

impl Session {
    pub(crate) async fn profiler(&mut self) -> Option<Profiler> {
        let vm = self.vm()?.clone();
        match Profiler::detect(&vm).await {
            Ok(p) => Some(p),
            Err(e) => {
                self.out.error(format!("Profiling is not available: {e}"));
                None
            }
        }
    }

    /// `profile cpu start [interval] [jvmti] | profile cpu stop | profile report [count]`.
    pub(crate) async fn cmd_profile(&mut self, args: &str) {
        let words: Vec<&str> = args.split_whitespace().collect();
        match words.as_slice() {
            ["cpu", "start", rest @ ..] => {
                let (interval, flags) = match parse_cpu_start(rest) {
                    Ok(parsed) => parsed,
                    Err(message) => return self.out.error(message),
                };
                let Some(p) = self.profiler().await else { return };
                match p.cpu_start_with_flags(interval, 0, &[], flags).await {
                    Ok(()) if flags != 0 => {
                        self.out.line(format!("CPU sampling started, every {interval:?}, with JVMTI stack traces."))
                    }
                    Ok(()) => self.out.line(format!("CPU sampling started, every {interval:?}.")),
                    Err(e) => self.out.error(format!("Unable to start CPU sampling: {e}")),
                }
            }
            ["cpu", "stop"] => {
                let Some(p) = self.profiler().await else { return };
                match p.cpu_stop().await {
                    Ok(()) => self.out.line("CPU sampling stopped."),
                    Err(e) => self.out.error(format!("Unable to stop CPU sampling: {e}")),
                }
            }
            ["report", rest @ ..] if rest.len() <= 1 => {
                let top = match rest.first() {
                    None => DEFAULT_TOP,
                    Some(text) => match text.parse::<usize>() {
                        Ok(n) if n > 0 => n,
                        _ => return self.out.error(format!("Not a trace count: '{text}'")),
                    },
                };
                let Some(p) = self.profiler().await else { return };
                match p.cpu_report(false).await {
                    Ok(report) => {
                        self.out.lines(&cpu_report_text(&report, top));
                        self.out.data("profile", cpu_report_json(&report));
                    }
                    Err(e) => self.out.error(format!("Unable to get the CPU report: {e}")),
                }
                self.report_alloc_monitors(&p, top).await;
            }
            _ => {
                if !self.cmd_profile_alloc_monitors(&words).await {
                    self.out.error(PROFILE_USAGE)
                }
            }
        }
    }

    /// `heap histo [live] [count]`.
    pub(crate) async fn cmd_heap(&mut self, args: &str) {
        let mut words = args.split_whitespace();
        match words.next() {
            Some("histo") => {}
            Some("dump") => return self.cmd_heap_dump(&words.collect::<Vec<_>>()).await,
            _ => return self.out.error(HEAP_USAGE),
        }
        let (mut live, mut max) = (false, 0i32);
        for word in words {
            match (word, word.parse::<i32>()) {
                ("live", _) => live = true,
                (_, Ok(n)) if n > 0 => max = n,
                _ => return self.out.error(HEAP_USAGE),
            }
        }
        let Some(p) = self.profiler().await else { return };
        match p.heap_histogram(live, max).await {
            Ok(h) => {
                self.out.lines(&histogram_text(&h));
                self.out.data("histogram", histogram_json(&h));
            }
            Err(e) => self.out.error(format!("Unable to make a heap histogram: {e}")),
        }
    }

    /// `gc`: collection statistics with our agent; jdb's note otherwise.
    pub(crate) async fn cmd_gc_stats(&mut self) {
        let Some(vm) = self.vm().cloned() else { return };
        let profiler = match Profiler::detect(&vm).await {
            Ok(p) if p.has(feature::GC) => p,
            _ => {
                return self.out.line(
                    "The 'gc' command is no longer necessary.\nAll objects are garbage collected as usual. Use 'enablegc' and 'disablegc'\ncommands to control garbage collection of individual objects.",
                );
            }
        };
        match profiler.gc_stats(false).await {
            Ok(stats) => {
                self.out.lines(&gc_text(&stats));
                self.out.data("gc", gc_json(&stats));
            }
            Err(e) => self.out.error(format!("Unable to get GC statistics: {e}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jdi::profiler::{CpuTrace, ProfiledThread, ThreadSamples};

    #[test]
    fn cpu_start_takes_an_interval_and_the_mechanism_in_either_order() {
        let flag = jdi::profiler::CPU_FLAG_JVMTI_STACKS;
        assert_eq!(parse_cpu_start(&[]), Ok((DEFAULT_INTERVAL, 0)));
        assert_eq!(parse_cpu_start(&["1ms"]), Ok((Duration::from_millis(1), 0)));
        assert_eq!(parse_cpu_start(&["jvmti"]), Ok((DEFAULT_INTERVAL, flag)));
        assert_eq!(parse_cpu_start(&["500us", "jvmti"]), Ok((Duration::from_micros(500), flag)));
        assert_eq!(parse_cpu_start(&["JVMTI", "2ms"]), Ok((Duration::from_millis(2), flag)));
        assert!(parse_cpu_start(&["often"]).unwrap_err().starts_with("Not an interval: 'often'"));
        assert!(parse_cpu_start(&["1ms", "2ms"]).unwrap_err().starts_with("Usage: profile cpu start"));
        assert!(parse_cpu_start(&["jvmti", "jvmti"]).is_err());
    }

    fn frame(class: &str, method: &str, line: i32) -> FrameInfo {
        FrameInfo {
            class_signature: format!("L{class};"),
            method_name: method.into(),
            method_signature: "()V".into(),
            source_file: format!("{}.java", class.rsplit('/').next().unwrap()),
            line,
        }
    }

    #[test]
    fn frames_print_like_stack_traces() {
        assert_eq!(frame_text(&frame("a/B", "run", 12)), "a.B.run(B.java:12)");
        assert_eq!(frame_text(&frame("a/B", "run", -1)), "a.B.run(B.java:Unknown line)");
        assert_eq!(frame_text(&frame("a/B", "park", -2)), "a.B.park(Native method)");
    }

    #[test]
    fn the_cpu_report_has_hprof_blocks() {
        let report = CpuReportReply {
            running: false,
            interval_micros: 1000,
            elapsed_nanos: 2_000_000_000,
            ticks: 2000,
            samples: 4,
            idle_skipped: 10,
            sampler_cpu_nanos: 1_000_000,
            stack_walk_nanos: 2_000_000,
            threads: vec![ProfiledThread {
                index: 0,
                thread: jdi::protocol::ThreadId(5),
                name: "hot".into(),
                samples: 4,
            }],
            traces: vec![
                CpuTrace {
                    trace_id: 1,
                    frames: vec![frame("P", "hot", 40), frame("P", "run", 30)],
                    samples: 3,
                    per_thread: vec![ThreadSamples { thread_index: 0, samples: 3 }],
                },
                CpuTrace {
                    trace_id: 2,
                    frames: vec![frame("P", "cold", 50)],
                    samples: 1,
                    per_thread: vec![ThreadSamples { thread_index: 0, samples: 1 }],
                },
            ],
        };
        let text = cpu_report_text(&report, 20);
        let expected = "TRACE 1:\n\tP.hot(P.java:40)\n\tP.run(P.java:30)\nTRACE 2:\n\tP.cold(P.java:50)\n\
            CPU SAMPLES BEGIN (total = 4)\nrank   self  accum   count trace method\n\
            \x20  1 75.00% 75.00%       3     1 P.hot\n\
            \x20  2 25.00% 100.00%       1     2 P.cold\nCPU SAMPLES END\n";
        assert!(text.starts_with(expected), "{text}");
        let json = cpu_report_json(&report);
        assert_eq!(json["traces"][0]["threads"][0]["name"], "hot");
        assert_eq!(json["traces"][0]["frames"][0]["text"], "P.hot(P.java:40)");
        // A shorter report keeps the top traces.
        assert!(!cpu_report_text(&report, 1).contains("TRACE 2:"));
    }
}
