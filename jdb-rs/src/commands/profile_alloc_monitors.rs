//! Profiling commands for allocation sites, monitor contention, heap dumps and flame graphs (the
//! CPU, histogram, GC and deadlock commands are in `profile.rs`):
//! `profile alloc start [INTERVAL_BYTES] | stop`, `profile monitors start | stop`, the `SITES` and
//! `MONITOR TIME` sections of `profile report` (HPROF's formats), `profile flame FILE.svg [cpu|alloc]`
//! and `heap dump FILE [live]`.
//!
//! As in `profile.rs`, formatting is pure (report in, text, JSON or folded stacks out), shared by
//! the session and the one-shot `jdb-rs profile`.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use jdi::profiler::{AllocReportReply, CpuReportReply, MonitorReportReply, Profiler, Trace, feature, frame_name};
use serde_json::{Value as Json, json};

use super::profile::frame_text;
use crate::flame::{FlameOptions, FoldedStack, render_svg};
use crate::profiling::DEFAULT_ALLOC_INTERVAL;
use crate::session::Session;

const MORE_USAGE: &str = "Usage: profile alloc start [interval-bytes] | profile alloc stop | profile monitors start | \
     profile monitors stop | profile flame <file.svg> [cpu|alloc]";

/// The `TRACE n:` blocks of `ids`, in ID order.
fn trace_blocks(out: &mut String, traces: &[Trace], ids: impl IntoIterator<Item = i32>) {
    let ids: BTreeSet<i32> = ids.into_iter().collect();
    for id in ids {
        let Some(trace) = traces.iter().find(|t| t.trace_id == id) else { continue };
        let _ = writeln!(out, "TRACE {id}:");
        if trace.frames.is_empty() {
            let _ = writeln!(out, "\t<empty>");
        }
        for frame in &trace.frames {
            let _ = writeln!(out, "\t{}", frame_text(frame));
        }
    }
}

fn percent(part: i64, total: i64) -> f64 {
    if total > 0 { part as f64 * 100.0 / total as f64 } else { 0.0 }
}

/// HPROF's `heap=sites` report: the traces of the top `top` sites, then the ranked table.
pub fn sites_text(report: &AllocReportReply, top: usize) -> String {
    let mut out = String::new();
    let shown = &report.sites[..report.sites.len().min(top)];
    trace_blocks(&mut out, &report.traces, shown.iter().map(|s| s.trace_id));
    let total: i64 = report.sites.iter().map(|s| s.allocated_bytes).sum();
    let _ = writeln!(out, "SITES BEGIN (ordered by allocated bytes)");
    let _ = writeln!(out, "          percent          live          alloc'ed  stack class");
    let _ = writeln!(out, " rank   self  accum     bytes objs     bytes  objs trace name");
    let mut accum = 0;
    for (rank, site) in shown.iter().enumerate() {
        accum += site.allocated_bytes;
        let _ = writeln!(
            out,
            "{:5} {:5.2}% {:5.2}% {:9} {:4} {:9} {:5} {:5} {}",
            rank + 1,
            percent(site.allocated_bytes, total),
            percent(accum, total),
            site.live_bytes,
            site.live_count,
            site.allocated_bytes,
            site.allocated_count,
            site.trace_id,
            jdi::names::type_name_of_signature(&site.class_signature),
        );
    }
    let _ = writeln!(out, "SITES END");
    let _ = writeln!(
        out,
        "{} samples, about one per {} bytes allocated ({}); counts are estimates",
        report.samples,
        report.sampling_interval_bytes,
        if report.running { "running" } else { "stopped" }
    );
    out
}

fn trace_json(traces: &[Trace], id: i32) -> Json {
    let frames = traces.iter().find(|t| t.trace_id == id).map(|t| t.frames.as_slice()).unwrap_or(&[]);
    Json::Array(frames.iter().map(|f| json!(frame_text(f))).collect())
}

pub fn sites_json(report: &AllocReportReply) -> Json {
    json!({
        "running": report.running,
        "sampling_interval_bytes": report.sampling_interval_bytes,
        "samples": report.samples,
        "sites": report.sites.iter().map(|s| json!({
            "class": jdi::names::type_name_of_signature(&s.class_signature),
            "allocated_count": s.allocated_count,
            "allocated_bytes": s.allocated_bytes,
            "live_count": s.live_count,
            "live_bytes": s.live_bytes,
            "trace": s.trace_id,
            "stack": trace_json(&report.traces, s.trace_id),
        })).collect::<Vec<_>>(),
    })
}

/// HPROF's `monitor=y` report (`MONITOR TIME`), with the owners seen under each site.
pub fn monitors_text(report: &MonitorReportReply, top: usize) -> String {
    let mut out = String::new();
    let shown = &report.monitors[..report.monitors.len().min(top)];
    trace_blocks(
        &mut out,
        &report.traces,
        shown.iter().flat_map(|m| std::iter::once(m.trace_id).chain(m.owners.iter().map(|o| o.trace_id))),
    );
    let total: i64 = report.monitors.iter().map(|m| m.total_blocked_nanos).sum();
    let ms = |nanos: i64| nanos as f64 / 1e6;
    let _ = writeln!(out, "MONITOR TIME BEGIN (total = {:.3} ms)", ms(total));
    let _ = writeln!(out, "rank   self  accum   count     max ms trace monitor");
    let mut accum = 0;
    for (rank, m) in shown.iter().enumerate() {
        accum += m.total_blocked_nanos;
        let _ = writeln!(
            out,
            "{:4} {:5.2}% {:5.2}% {:7} {:10.3} {:5} {}",
            rank + 1,
            percent(m.total_blocked_nanos, total),
            percent(accum, total),
            m.contended_count,
            ms(m.max_blocked_nanos),
            m.trace_id,
            jdi::names::type_name_of_signature(&m.class_signature),
        );
        for o in &m.owners {
            let times = if o.times == 1 { "once".to_string() } else { format!("{} times", o.times) };
            let _ = writeln!(out, "         held by \"{}\" {times}, at trace {}", o.thread_name, o.trace_id);
        }
    }
    let _ = writeln!(out, "MONITOR TIME END");
    out
}

pub fn monitors_json(report: &MonitorReportReply) -> Json {
    json!({
        "running": report.running,
        "monitors": report.monitors.iter().map(|m| json!({
            "class": jdi::names::type_name_of_signature(&m.class_signature),
            "contended_count": m.contended_count,
            "total_blocked_nanos": m.total_blocked_nanos,
            "max_blocked_nanos": m.max_blocked_nanos,
            "trace": m.trace_id,
            "stack": trace_json(&report.traces, m.trace_id),
            "owners": m.owners.iter().map(|o| json!({
                "name": o.thread_name,
                "id": o.thread.0,
                "times": o.times,
                "stack": trace_json(&report.traces, o.trace_id),
            })).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    })
}

/// CPU samples as folded stacks (outermost frame first), one per trace, weighted by samples.
pub fn cpu_folded(report: &CpuReportReply) -> Vec<FoldedStack> {
    report
        .traces
        .iter()
        .map(|t| FoldedStack {
            frames: t.frames.iter().rev().map(frame_name).collect(),
            count: u64::try_from(t.samples).unwrap_or(0),
        })
        .collect()
}

/// Allocation sites as folded stacks weighted by allocated bytes, the allocated class as the
/// innermost frame (so one site's classes sit side by side above it).
pub fn alloc_folded(report: &AllocReportReply) -> Vec<FoldedStack> {
    report
        .sites
        .iter()
        .map(|s| {
            let mut frames: Vec<String> = report
                .traces
                .iter()
                .find(|t| t.trace_id == s.trace_id)
                .map(|t| t.frames.iter().rev().map(frame_name).collect())
                .unwrap_or_default();
            frames.push(format!("[{}]", jdi::names::type_name_of_signature(&s.class_signature)));
            FoldedStack { frames, count: u64::try_from(s.allocated_bytes).unwrap_or(0) }
        })
        .collect()
}

/// Writes a flame graph of `stacks` to `path`.
pub fn write_flame(path: &str, stacks: &[FoldedStack], title: &str, unit: &str) -> std::io::Result<()> {
    let options = FlameOptions { title: title.into(), unit: unit.into(), ..FlameOptions::default() };
    std::fs::write(path, render_svg(stacks, &options))
}

impl Session {
    /// The `profile` sub-commands of this module; `false` when `words` is none of them.
    pub(crate) async fn cmd_profile_alloc_monitors(&mut self, words: &[&str]) -> bool {
        match words {
            ["alloc", "start", rest @ ..] if rest.len() <= 1 => {
                let interval = match rest.first() {
                    None => DEFAULT_ALLOC_INTERVAL,
                    Some(text) => match text.parse::<i32>() {
                        Ok(n) if n >= 0 => n,
                        _ => {
                            self.out.error(format!("Not a byte interval: '{text}'"));
                            return true;
                        }
                    },
                };
                let Some(p) = self.profiler().await else { return true };
                match p.alloc_start(interval, 0).await {
                    Ok(()) => self.out.line(format!("Allocation sampling started, about every {interval} bytes.")),
                    Err(e) => self.out.error(format!("Unable to start allocation sampling: {e}")),
                }
            }
            ["alloc", "stop"] => {
                let Some(p) = self.profiler().await else { return true };
                match p.alloc_stop().await {
                    Ok(()) => self.out.line("Allocation sampling stopped."),
                    Err(e) => self.out.error(format!("Unable to stop allocation sampling: {e}")),
                }
            }
            ["monitors", "start"] => {
                let Some(p) = self.profiler().await else { return true };
                match p.monitor_start(0).await {
                    Ok(()) => self.out.line("Monitor contention recording started."),
                    Err(e) => self.out.error(format!("Unable to record monitor contention: {e}")),
                }
            }
            ["monitors", "stop"] => {
                let Some(p) = self.profiler().await else { return true };
                match p.monitor_stop().await {
                    Ok(()) => self.out.line("Monitor contention recording stopped."),
                    Err(e) => self.out.error(format!("Unable to stop recording monitor contention: {e}")),
                }
            }
            ["flame", path, rest @ ..] if rest.len() <= 1 => {
                let kind = rest.first().copied().unwrap_or("cpu");
                let Some(p) = self.profiler().await else { return true };
                let stacks = match kind {
                    "cpu" => p.cpu_report(false).await.map(|r| (cpu_folded(&r), "CPU samples", "samples")),
                    "alloc" => p.alloc_report(false).await.map(|r| (alloc_folded(&r), "Allocated bytes", "bytes")),
                    _ => {
                        self.out.error(MORE_USAGE);
                        return true;
                    }
                };
                match stacks {
                    Ok((stacks, title, unit)) => match write_flame(path, &stacks, title, unit) {
                        Ok(()) => self.out.line(format!("Flame graph of {} stacks written to {path}", stacks.len())),
                        Err(e) => self.out.error(format!("Unable to write {path}: {e}")),
                    },
                    Err(e) => self.out.error(format!("Unable to get the {kind} report: {e}")),
                }
            }
            ["alloc" | "monitors" | "flame", ..] => self.out.error(MORE_USAGE),
            _ => return false,
        }
        true
    }

    /// The `SITES` and `MONITOR TIME` sections of `profile report`, for the features that have
    /// something to show.
    pub(crate) async fn report_alloc_monitors(&mut self, p: &Profiler, top: usize) {
        if p.has(feature::ALLOC) {
            match p.alloc_report(false).await {
                Ok(r) if r.running || r.samples > 0 => {
                    self.out.lines(&sites_text(&r, top));
                    self.out.data("sites", sites_json(&r));
                }
                Ok(_) => {}
                Err(e) => self.out.error(format!("Unable to get the allocation sites: {e}")),
            }
        }
        if p.has(feature::MONITOR) {
            match p.monitor_report(false).await {
                Ok(r) if r.running || !r.monitors.is_empty() => {
                    self.out.lines(&monitors_text(&r, top));
                    self.out.data("monitors", monitors_json(&r));
                }
                Ok(_) => {}
                Err(e) => self.out.error(format!("Unable to get the monitor contention: {e}")),
            }
        }
    }

    /// `heap dump <file> [live]`: an HPROF file written by the target VM.
    pub(crate) async fn cmd_heap_dump(&mut self, args: &[&str]) {
        let (path, live) = match args {
            [path] => (*path, false),
            [path, "live"] => (*path, true),
            _ => return self.out.error("Usage: heap dump <file> [live]"),
        };
        let Some(p) = self.profiler().await else { return };
        match p.heap_dump(path, live).await {
            Ok(bytes) => {
                self.out.line(format!("Heap dump of {bytes} bytes written to {path} (on the target's machine)"));
                self.out.data("heap_dump", json!({"path": path, "bytes": bytes, "live": live}));
            }
            Err(e) => self.out.error(format!("Unable to dump the heap to {path}: {e}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jdi::profiler::{AllocSite, FrameInfo, MonitorOwner, MonitorSite};

    fn frame(class: &str, method: &str, line: i32) -> FrameInfo {
        FrameInfo {
            class_signature: format!("L{class};"),
            method_name: method.into(),
            method_signature: "()V".into(),
            source_file: format!("{class}.java"),
            line,
        }
    }

    fn alloc_report() -> AllocReportReply {
        let site = |trace_id, class: &str, bytes, live| AllocSite {
            trace_id,
            class_signature: class.into(),
            allocated_count: bytes / 16,
            allocated_bytes: bytes,
            live_count: live / 16,
            live_bytes: live,
        };
        AllocReportReply {
            running: false,
            sampling_interval_bytes: 1024,
            samples: 99,
            traces: vec![
                Trace { trace_id: 1, frames: vec![frame("A", "make", 7), frame("A", "main", 3)] },
                Trace { trace_id: 2, frames: vec![frame("B", "small", 9)] },
            ],
            sites: vec![site(1, "[I", 3000, 1600), site(2, "LB;", 1000, 0)],
        }
    }

    #[test]
    fn sites_print_like_hprof() {
        let text = sites_text(&alloc_report(), 10);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "TRACE 1:");
        assert_eq!(lines[1], "\tA.make(A.java:7)");
        assert!(lines.contains(&"SITES BEGIN (ordered by allocated bytes)"));
        let first = lines.iter().find(|l| l.trim_start().starts_with("1 ")).unwrap();
        let cols: Vec<&str> = first.split_whitespace().collect();
        assert_eq!(cols, ["1", "75.00%", "75.00%", "1600", "100", "3000", "187", "1", "int[]"]);
        let second = lines.iter().find(|l| l.trim_start().starts_with("2 ")).unwrap();
        assert!(second.contains("25.00% 100.00%") && second.ends_with(" B"), "{second}");
        assert!(lines.contains(&"SITES END"));
        // Only the shown sites' traces are printed.
        assert!(!sites_text(&alloc_report(), 1).contains("TRACE 2:"));
    }

    #[test]
    fn monitors_print_with_owners() {
        let report = MonitorReportReply {
            running: true,
            traces: vec![
                Trace { trace_id: 1, frames: vec![frame("C", "waitForLock", 12)] },
                Trace { trace_id: 2, frames: vec![frame("C", "holdLock", 20)] },
            ],
            monitors: vec![MonitorSite {
                class_signature: "LC$Guard;".into(),
                trace_id: 1,
                contended_count: 3,
                total_blocked_nanos: 6_000_000,
                max_blocked_nanos: 4_000_000,
                owners: vec![MonitorOwner {
                    thread: jdi::protocol::ThreadId(9),
                    thread_name: "holder".into(),
                    trace_id: 2,
                    times: 3,
                }],
            }],
        };
        let text = monitors_text(&report, 10);
        assert!(text.contains("TRACE 1:\n\tC.waitForLock(C.java:12)\nTRACE 2:\n\tC.holdLock(C.java:20)\n"), "{text}");
        assert!(text.contains("MONITOR TIME BEGIN (total = 6.000 ms)"));
        assert!(text.contains("   1 100.00% 100.00%       3      4.000     1 C$Guard\n"), "{text}");
        assert!(text.contains("held by \"holder\" 3 times, at trace 2"));
        let json = monitors_json(&report);
        assert_eq!(json["monitors"][0]["owners"][0]["name"], "holder");
        assert_eq!(json["monitors"][0]["stack"][0], "C.waitForLock(C.java:12)");
    }

    #[test]
    fn folded_stacks_are_outermost_first_with_the_class_on_top() {
        let stacks = alloc_folded(&alloc_report());
        assert_eq!(stacks[0].frames, ["A.main", "A.make", "[int[]]"]);
        assert_eq!(stacks[0].count, 3000);
        let json = sites_json(&alloc_report());
        assert_eq!(json["sites"][0]["class"], "int[]");
        assert_eq!(json["sites"][1]["live_bytes"], 0);
    }
}
