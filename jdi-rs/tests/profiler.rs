//! The profiler (vendor command set 128) against real JVMs with fixtures whose answers are known:
//! our agent for every feature, the JDK's agent for discovery (it must read as "not supported").
//!
//! Our agent is `target/<profile>/libjdwp_agent.so` (build it first: `cargo build -p jdwp-agent`).

mod common;

use std::time::{Duration, Instant};

use common::{TIMEOUT, our_agent_path};
use jdi::profiler::{CPU_FLAG_JVMTI_STACKS, LockKind, Profiler, ProfilerEvent, ProfilerEventKind, feature, frame_name};
use jdi::{Event, EventQueue, JdiError, Value, VirtualMachine};
use test_rig::{Agent, DEFAULT_JDK_AGENT_OPTIONS, Debuggee};

/// A fixture running under `agent` (ours: a virtual main only as `common::ours_virtual_main` says),
/// attached and resumed past VM start, once it printed `ready`.
async fn run(main_class: &str, agent: Agent, ready: &str) -> (Debuggee, VirtualMachine, EventQueue) {
    let virtual_main =
        if matches!(agent, Agent::Jdk(_)) { common::virtual_main() } else { common::ours_virtual_main() };
    let jvm = Debuggee::builder(main_class).agent(agent).virtual_main(virtual_main).spawn().expect("debuggee starts");
    let vm = jdi::attach(&jvm.address().to_string(), Some(TIMEOUT)).await.expect("attach");
    let mut events = vm.event_queue().expect("the event queue");
    let set = events.next_within(TIMEOUT).await.expect("VM start event");
    assert!(matches!(set.events.as_slice(), [Event::VmStart { .. }]), "{set:?}");
    vm.resume().await.unwrap();
    let ready = ready.to_string();
    let jvm = tokio::task::spawn_blocking(move || {
        let ready = ready.as_str();
        jvm.wait_for_line(ready, TIMEOUT).unwrap_or_else(|e| panic!("no {ready:?}: {e}\n{}", jvm.output_text()));
        jvm
    })
    .await
    .unwrap();
    (jvm, vm, events)
}

fn ours() -> Agent {
    Agent::path(our_agent_path(), DEFAULT_JDK_AGENT_OPTIONS)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discovery_lists_our_features_and_the_jdk_agent_reads_as_unsupported() {
    let (_jvm, vm, _events) = run("Profiled", ours(), "ready").await;
    let profiler = Profiler::detect(&vm).await.expect("our agent has the profiler");
    assert_eq!(profiler.version(), jdwp_protocol::commands::profiler::VERSION);
    for f in [feature::CPU, feature::HEAP_HISTOGRAM, feature::GC, feature::DEADLOCKS, feature::EVENTS] {
        assert!(profiler.has(f), "feature {f} missing from {:?}", profiler.features());
    }
    assert!(profiler.has("event:GcFinished"), "{:?}", profiler.features());

    let (_jdk, vm, _events) = run("Profiled", Agent::jdk_default(), "ready").await;
    match Profiler::detect(&vm).await {
        Err(JdiError::Unsupported(why)) => assert!(why.contains("no Profiler command set"), "{why}"),
        Err(e) => panic!("expected Unsupported from the JDK's agent, got {e}"),
        Ok(p) => panic!("the JDK's agent claims a profiler: {:?}", p.features()),
    }
    // Nothing but standard commands reached the JDK's agent (a vendor set crashes it), so the VM
    // is still fine.
    assert!(!vm.all_threads().await.unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hot_method_dominates_the_cpu_report_sampled_with_signals() {
    a_hot_method_dominates_the_cpu_report(0).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hot_method_dominates_the_cpu_report_sampled_with_jvmti_stacks() {
    a_hot_method_dominates_the_cpu_report(CPU_FLAG_JVMTI_STACKS).await;
}

async fn a_hot_method_dominates_the_cpu_report(flags: i32) {
    let (_jvm, vm, _events) = run("Profiled", ours(), "ready").await;
    let profiler = Profiler::detect(&vm).await.unwrap();
    profiler.cpu_start_with_flags(Duration::from_millis(1), 0, &[], flags).await.unwrap();
    // Wait (bounded) until enough samples are in to judge.
    let deadline = Instant::now() + TIMEOUT;
    let report = loop {
        let report = profiler.cpu_report(false).await.unwrap();
        if report.samples >= 300 {
            break report;
        }
        assert!(Instant::now() < deadline, "only {} samples in {:?}: {report:?}", report.samples, TIMEOUT);
        tokio::task::yield_now().await;
    };
    profiler.cpu_stop().await.unwrap();
    assert!(report.running);
    assert!(report.ticks > 0 && report.samples > 0);
    // What it cost is measured: the sampler's CPU time and the time spent taking stacks.
    assert!(report.sampler_cpu_nanos > 0 && report.stack_walk_nanos > 0, "{report:?}");
    assert_eq!(report.samples, report.traces.iter().map(|t| t.samples).sum::<i64>());

    // Traces come by decreasing count, numbered from 1.
    assert!(report.traces.windows(2).all(|w| w[0].samples >= w[1].samples));
    assert_eq!(report.traces[0].trace_id, 1);
    let in_hot: i64 = report
        .traces
        .iter()
        .filter(|t| t.frames.first().is_some_and(|f| f.class_signature == "LProfiled;" && f.method_name == "hot"))
        .map(|t| t.samples)
        .sum();
    assert!(
        in_hot * 10 >= report.samples * 8,
        "hot() has {in_hot} of {} samples; top traces: {:#?}",
        report.samples,
        &report.traces[..report.traces.len().min(3)]
    );
    let top = &report.traces[0];
    assert_eq!(frame_name(&top.frames[0]), "Profiled.hot");
    assert_eq!(top.frames[0].method_signature, "(I)J");
    assert!(top.frames[0].line > 0, "{top:?}");
    // Its samples all come from the thread named "hot".
    let hot_thread = report.threads.iter().find(|t| t.name == "hot").expect("the hot thread is listed");
    assert!(!hot_thread.thread.is_null());
    assert!(top.per_thread.iter().all(|s| s.thread_index == hot_thread.index), "{top:?}");
    if flags == CPU_FLAG_JVMTI_STACKS {
        // The sleeping main thread never ran long enough to be sampled much: idle visits are skipped.
        assert!(report.idle_skipped > 0, "{report:?}");
    } else {
        // Signals only ever interrupt a running thread: there are no idle visits to skip.
        assert_eq!(report.idle_skipped, 0, "{report:?}");
    }

    // Stopped: no more samples; a reset empties the report.
    let stopped = profiler.cpu_report(true).await.unwrap();
    assert!(!stopped.running);
    let after = profiler.cpu_report(false).await.unwrap();
    assert_eq!((after.samples, after.traces.len()), (0, 0));

    // Limited to the (mostly sleeping) main thread: the busy "hot" thread is never sampled.
    let mut main = None;
    for t in vm.all_threads().await.unwrap() {
        if t.name().await.unwrap() == "main" {
            main = Some(t);
        }
    }
    let main = main.expect("the main thread");
    profiler.cpu_start_with_flags(Duration::from_millis(1), 0, std::slice::from_ref(&main), flags).await.unwrap();
    let deadline = Instant::now() + TIMEOUT;
    let report = loop {
        let report = profiler.cpu_report(false).await.unwrap();
        if report.ticks >= 200 {
            break report;
        }
        assert!(Instant::now() < deadline, "only {} ticks: {report:?}", report.ticks);
        tokio::task::yield_now().await;
    };
    profiler.cpu_stop().await.unwrap();
    assert!(report.threads.iter().all(|t| t.name == "main"), "{report:?}");
    assert!(report.traces.iter().all(|t| t.frames.first().is_none_or(|f| f.method_name != "hot")), "{report:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_command_finds_a_monitor_cycle_and_a_reentrant_lock_cycle() {
    let (_jvm, vm, _events) = run("BothDeadlocks", ours(), "deadlocked").await;
    let profiler = Profiler::detect(&vm).await.unwrap();
    let sent = vm.commands_sent();
    let cycles = profiler.deadlocks(0).await.unwrap();
    assert_eq!(vm.commands_sent() - sent, 1, "one round trip");
    assert_eq!(cycles.len(), 2, "{cycles:#?}");

    let monitor = cycles.iter().find(|c| c.threads.len() == 3).expect("the 3-thread monitor cycle");
    let names: Vec<&str> = monitor.threads.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["mon-A", "mon-B", "mon-C"]);
    for (i, t) in monitor.threads.iter().enumerate() {
        let next = &monitor.threads[(i + 1) % 3];
        assert_eq!(t.kind, LockKind::Monitor);
        assert_eq!(t.lock_class_signature, "LBothDeadlocks$Monitor;");
        assert_eq!(t.owner, next.thread, "{} waits for {}", t.name, next.name);
        assert_eq!(frame_name(&t.frames[0]), "BothDeadlocks.enterSecond");
        // HotSpot reports a thread blocked entering a monitor at the `synchronized` line or at the
        // first line of the block (the bytecode index past `monitorenter`).
        let line = test_rig::fixture_line("BothDeadlocks.java", "monitor-second").unwrap() as i32;
        assert!([line, line + 1].contains(&t.frames[0].line), "{:?}", t.frames[0]);
    }

    let juc = cycles.iter().find(|c| c.threads.len() == 2).expect("the 2-thread ReentrantLock cycle");
    let names: Vec<&str> = juc.threads.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["juc-1", "juc-2"]);
    for (i, t) in juc.threads.iter().enumerate() {
        let next = &juc.threads[(i + 1) % 2];
        assert_eq!(t.kind, LockKind::OwnableSynchronizer);
        assert_eq!(t.lock_class_signature, "Ljava/util/concurrent/locks/ReentrantLock$NonfairSync;");
        assert_eq!(t.owner, next.thread);
        // Parked inside LockSupport, called from the fixture's lockSecond.
        assert!(t.frames.iter().any(|f| f.method_name == "park"), "{:?}", t.frames);
        let fixture = t.frames.iter().find(|f| f.class_signature == "LBothDeadlocks;").expect("a fixture frame");
        assert_eq!(fixture.method_name, "lockSecond");
        assert_eq!(fixture.line as u32, test_rig::fixture_line("BothDeadlocks.java", "lock-second").unwrap());
    }

    // The standard-commands method sees the monitor cycle only (JDWP has no view of j.u.c locks).
    // It agrees on the monitors each thread waits for.
    let standard = jdi::deadlock::find_deadlocks(&vm).await.unwrap();
    assert_eq!(standard.len(), 1);
    assert_eq!(standard[0].threads.len(), 3);
    for t in &standard[0].threads {
        let ours = monitor.threads.iter().find(|o| o.name == t.name).expect("same threads");
        assert_eq!(ours.lock.id, t.waiting_for.object.id(), "{}", t.name);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_histogram_counts_the_fixture_instances_exactly() {
    let (_jvm, vm, _events) = run("Profiled", ours(), "ready").await;
    let profiler = Profiler::detect(&vm).await.unwrap();
    let histogram = profiler.heap_histogram(true, 0).await.unwrap();
    let marker = histogram
        .entries
        .iter()
        .find(|e| e.class_signature == "LProfiled$Marker;")
        .unwrap_or_else(|| panic!("no Marker row in {} rows", histogram.entries.len()));
    assert_eq!(marker.instances, 1234);
    assert!(marker.bytes >= 1234 * 16, "{marker:?}");
    assert_eq!(marker.bytes % marker.instances, 0, "all markers have one size: {marker:?}");
    // The array holding them is there too, and the type ID names the class.
    assert!(histogram.entries.iter().any(|e| e.class_signature == "[LProfiled$Marker;" && e.instances == 1));
    let ty = vm.reference_type(marker.type_id).await.unwrap();
    assert_eq!(ty.name(), "Profiled$Marker");
    // Rows by decreasing bytes, and the totals add up.
    assert!(histogram.entries.windows(2).all(|w| w[0].bytes >= w[1].bytes));
    assert_eq!(histogram.total_instances, histogram.entries.iter().map(|e| e.instances).sum::<i64>());
    assert_eq!(histogram.total_bytes, histogram.entries.iter().map(|e| e.bytes).sum::<i64>());
    // A limited histogram keeps the biggest rows.
    let top = profiler.heap_histogram(false, 5).await.unwrap();
    assert_eq!(top.entries.len(), 5);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gc_stats_and_the_event_stream_count_a_system_gc() {
    let (jvm, vm, _events) = run("Profiled", ours(), "ready").await;
    let profiler = Profiler::detect(&vm).await.unwrap();
    let mut stream = profiler.subscribe(&[ProfilerEventKind::GcFinished]).await.unwrap();
    let before = profiler.gc_stats(false).await.unwrap();

    // Ask the fixture for one System.gc().
    let class = vm.classes_by_name("Profiled").await.unwrap().remove(0).as_class().unwrap();
    let field = class.field_by_name("gcRequests").await.unwrap().unwrap();
    class.set_value(&field, Value::Int(1)).await.unwrap();
    let jvm = tokio::task::spawn_blocking(move || {
        jvm.wait_for_line("gc done 1", TIMEOUT).unwrap();
        jvm
    })
    .await
    .unwrap();

    let after = profiler.gc_stats(false).await.unwrap();
    assert!(after.collections > before.collections, "{before:?} then {after:?}");
    assert!(after.total_pause_nanos > 0 && after.max_pause_nanos > 0 && after.last_pause_nanos > 0, "{after:?}");
    assert!(after.max_pause_nanos <= after.total_pause_nanos);
    assert!(after.watching_nanos > before.watching_nanos);

    // The collection was also sent live.
    let event = stream.next_within(TIMEOUT).await.unwrap();
    let ProfilerEvent::GcFinished { collection, pause_nanos, .. } = event else { panic!("{event:?}") };
    assert!(collection >= 1 && pause_nanos > 0, "{event:?}");

    // Unsubscribed: the list is empty; a reset zeroes the counters.
    assert!(profiler.unsubscribe(&[]).await.unwrap().is_empty());
    profiler.gc_stats(true).await.unwrap();
    assert_eq!(profiler.gc_stats(false).await.unwrap().collections, 0);
    drop(jvm);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_arguments_and_missing_features_get_error_replies() {
    use jdwp_protocol::ErrorCode;
    use jdwp_protocol::commands::profiler as p;
    let (_jvm, vm, _events) = run("Profiled", ours(), "ready").await;
    let profiler = Profiler::detect(&vm).await.unwrap();
    let code = |r: Result<(), JdiError>| r.err().and_then(|e| e.code());
    let cpu = |interval_micros, max_depth, flags| p::CpuStart { interval_micros, max_depth, threads: vec![], flags };
    // Too short an interval, a negative depth, flags this version does not define.
    assert_eq!(code(vm.send(&cpu(10, 0, 0)).await.map(drop)), Some(ErrorCode::ILLEGAL_ARGUMENT));
    assert_eq!(code(vm.send(&cpu(1000, -1, 0)).await.map(drop)), Some(ErrorCode::ILLEGAL_ARGUMENT));
    assert_eq!(code(vm.send(&cpu(1000, 0, 2)).await.map(drop)), Some(ErrorCode::ILLEGAL_ARGUMENT));
    // A thread filter naming something that is no thread.
    let not_a_thread = p::CpuStart {
        interval_micros: 1000,
        max_depth: 0,
        threads: vec![jdwp_protocol::ThreadId(0x7fff_ffff)],
        flags: 0,
    };
    assert_eq!(code(vm.send(&not_a_thread).await.map(drop)), Some(ErrorCode::INVALID_OBJECT));
    assert_eq!(
        code(vm.send(&p::HeapHistogram { live_only: false, max_entries: -1 }).await.map(drop)),
        Some(ErrorCode::ILLEGAL_ARGUMENT)
    );
    // A feature the agent does not announce answers NOT_IMPLEMENTED; so does the event command,
    // which only the agent sends.
    if !profiler.has(feature::ALLOC) {
        let alloc = p::AllocStart { sampling_interval_bytes: 1024, max_depth: 0, flags: 0 };
        assert_eq!(code(vm.send(&alloc).await.map(drop)), Some(ErrorCode::NOT_IMPLEMENTED));
    }
    if !profiler.has(feature::HEAP_DUMP) {
        let dump = p::HeapDump { path: "/nonexistent/x.hprof".into(), live_only: false };
        assert_eq!(code(vm.send(&dump).await.map(drop)), Some(ErrorCode::NOT_IMPLEMENTED));
    }
    assert_eq!(code(vm.send(&p::Events { events: vec![] }).await.map(drop)), Some(ErrorCode::NOT_IMPLEMENTED));
    // Nothing was started by the failed commands, and the agent still answers.
    let report = Profiler::detect(&vm).await.unwrap().cpu_report(false).await.unwrap();
    assert!(!report.running);
    assert_eq!(report.samples, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allocation_sites_estimate_counts_and_see_garbage_freed() {
    // AllocSites warms the sampler up with 8 MB of byte arrays, allocates 300,000 Blobs keeping
    // every tenth, and 30,000 Smalls keeping none, then collects garbage and prints "alloc done".
    // Sampling starts before it runs.
    let jvm = Debuggee::builder("AllocSites").agent(ours()).spawn().expect("debuggee starts");
    let vm = jdi::attach(&jvm.address().to_string(), Some(TIMEOUT)).await.expect("attach");
    let mut events = vm.event_queue().expect("the event queue");
    let set = events.next_within(TIMEOUT).await.expect("VM start event");
    assert!(matches!(set.events.as_slice(), [Event::VmStart { .. }]), "{set:?}");
    let profiler = Profiler::detect(&vm).await.unwrap();
    profiler.alloc_start(4096, 0).await.unwrap();
    vm.resume().await.unwrap();
    let jvm = tokio::task::spawn_blocking(move || {
        jvm.wait_for_line("alloc done", TIMEOUT).unwrap_or_else(|e| panic!("{e}\n{}", jvm.output_text()));
        jvm
    })
    .await
    .unwrap();
    profiler.alloc_stop().await.unwrap();

    // HotSpot's service thread reports the freed objects shortly after the collection: wait for
    // the Smalls, all garbage, to be gone from the live counts.
    let site = |r: &jdwp_protocol::commands::profiler::AllocReportReply, class: &str| {
        r.sites.iter().find(|s| s.class_signature == class).cloned().unwrap_or_else(|| panic!("no {class} in {r:?}"))
    };
    let deadline = Instant::now() + TIMEOUT;
    let report = loop {
        let report = profiler.alloc_report(false).await.unwrap();
        if site(&report, "LAllocSites$Small;").live_count == 0 {
            break report;
        }
        assert!(Instant::now() < deadline, "the Smalls never read as freed: {:?}", site(&report, "LAllocSites$Small;"));
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert!(!report.running && report.sampling_interval_bytes == 4096);
    // The warm-up was sampled, so the main thread had taken its first sample, and with it a
    // sampling point at our interval, before the first Blob (see AllocSites.java).
    let warm_up = report.sites.iter().find(|s| {
        s.class_signature == "[B"
            && report
                .traces
                .iter()
                .any(|t| t.trace_id == s.trace_id && t.frames.first().is_some_and(|f| f.method_name == "warmUp"))
    });
    assert!(warm_up.is_some_and(|s| s.allocated_count > 0), "no sample in warmUp(): {report:?}");
    let blobs = site(&report, "LAllocSites$Blob;");
    // About 3,500 samples stand for the 300,000 Blobs; a tenth of them is alive.
    assert!((255_000..=345_000).contains(&blobs.allocated_count), "{blobs:?}");
    let live = blobs.live_count as f64 / blobs.allocated_count as f64;
    assert!((0.07..=0.13).contains(&live), "live fraction {live}: {blobs:?}");
    let live_bytes = blobs.live_bytes as f64 / blobs.allocated_bytes as f64;
    assert!((live - live_bytes).abs() < 0.001, "one size, so bytes and counts agree: {blobs:?}");

    // A reset report empties the table; a new run starts from nothing.
    assert!(!profiler.alloc_report(true).await.unwrap().sites.is_empty());
    let after = profiler.alloc_report(false).await.unwrap();
    assert!(after.sites.is_empty() && after.samples == 0, "{after:?}");
    drop(jvm);
}

/// Signal sampling puts a fault handler in front of HotSpot's (so that a fault inside
/// `AsyncGetCallTrace` ends the walk instead of the JVM). HotSpot takes faults on purpose all the
/// time: safepoint polls, implicit null checks. With sampling on, a program that makes many of them
/// must run exactly as without it, and the handler must have handed those faults on (the agent logs
/// how many when sampling stops).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn signal_sampling_hands_the_vms_own_faults_on_and_the_program_runs_exactly() {
    let options = format!("{DEFAULT_JDK_AGENT_OPTIONS},loglevel=info");
    let (jvm, vm, _events) = run("Trapping", Agent::path(our_agent_path(), &options), "ready").await;
    let profiler = Profiler::detect(&vm).await.unwrap();
    profiler.cpu_start_with_flags(Duration::from_millis(1), 0, &[], 0).await.unwrap();

    let class = vm.classes_by_name("Trapping").await.unwrap().remove(0).as_class().unwrap();
    let go = class.field_by_name("go").await.unwrap().unwrap();
    class.set_value(&go, Value::Boolean(true)).await.unwrap();
    let jvm = tokio::task::spawn_blocking(move || {
        let done = jvm.wait_for_line("done ", TIMEOUT).unwrap_or_else(|e| panic!("{e}\n{}", jvm.output_text()));
        assert!(done.contains("done gcs=100 npes=1000000 spun=true"), "{done}\n{}", jvm.output_text());
        jvm
    })
    .await
    .unwrap();
    let report = profiler.cpu_report(false).await.unwrap();
    profiler.cpu_stop().await.unwrap();
    assert!(report.samples > 0 && report.stack_walk_nanos > 0, "{report:?}");
    // Signals, not JVMTI stack traces (which would have skipped idle visits).
    assert_eq!(report.idle_skipped, 0, "{report:?}");

    let jvm = tokio::task::spawn_blocking(move || {
        let line = jvm
            .wait_for_line("fault guard:", TIMEOUT)
            .unwrap_or_else(|e| panic!("no fault guard log: {e}\n{}", jvm.output_text()));
        let passed_on: i64 = line
            .split("handed ")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no count in {line:?}"));
        eprintln!("{line}");
        // 100 collections, each a safepoint the spinning thread reaches through a fault.
        assert!(passed_on >= 100, "{line}");
        jvm
    })
    .await
    .unwrap();
    drop(jvm);
}
