//! Allocation sites and monitor contention (`Profiler` vendor set 128, commands 5–10, and the live
//! `MonitorContended` event) through our agent, against real JVMs with known workloads:
//! `AllocSites` (a hot allocation site of a known class and count) and `Contention` (a monitor a
//! known thread holds while others block on it).

use std::time::Duration;

use jdwp_protocol::commands::event::{Composite, Event};
use jdwp_protocol::commands::profiler::{self as p, ProfilerEvent, ProfilerEventKind};
use jdwp_protocol::commands::{thread_reference as tr, virtual_machine as vm};
use jdwp_protocol::{Command, codec};
use jdwp_transports::PacketKind;
use test_rig::wire::RawSession;
use test_rig::{Agent, Debuggee};

const TIMEOUT: Duration = Duration::from_secs(60);

/// Starts `main_class` suspended under our agent and attaches, past the VM start event.
fn start_suspended(main_class: &str) -> (Debuggee, RawSession) {
    let ours = test_rig::our_agent_library().expect("our agent (cargo build -p jdwp-agent)");
    let jvm = Debuggee::builder(main_class)
        .agent(Agent::path(ours, test_rig::DEFAULT_JDK_AGENT_OPTIONS))
        .spawn()
        .unwrap_or_else(|e| panic!("{main_class} starts: {e}"));
    let mut s = RawSession::attach(&jvm.address().to_string(), TIMEOUT).expect("attach");
    let packet = s.next_event().expect("VM start");
    let start: Composite = codec::decode_body(&packet.body, s.id_sizes()).expect("a composite");
    assert!(matches!(start.events.as_slice(), [Event::VmStart { .. }]));
    (jvm, s)
}

fn top_frame(traces: &[p::Trace], id: i32) -> &p::FrameInfo {
    let trace = traces.iter().find(|t| t.trace_id == id).expect("the site's trace is in the table");
    trace.frames.first().expect("a frame")
}

#[test]
fn the_hot_allocation_site_tops_the_sites_with_its_class_and_count() {
    let (jvm, mut s) = start_suspended("AllocSites");
    let interval = 1024;
    s.send(&p::AllocStart { sampling_interval_bytes: interval, max_depth: 0, flags: 0 }).expect("AllocStart");
    s.send(&vm::Resume {}).unwrap();
    jvm.wait_for_line("alloc done", TIMEOUT).expect("the fixture allocates");
    s.send(&p::AllocStop {}).expect("AllocStop");
    let report = s.send(&p::AllocReport { reset: false }).expect("AllocReport");
    assert!(!report.running);
    assert_eq!(report.sampling_interval_bytes, interval);
    assert!(report.samples > 1000, "samples: {}", report.samples);

    let top = &report.sites[0];
    assert_eq!(top.class_signature, "LAllocSites$Blob;", "top site: {top:?}");
    let frame = top_frame(&report.traces, top.trace_id);
    assert_eq!((frame.class_signature.as_str(), frame.method_name.as_str()), ("LAllocSites;", "makeBlobs"));
    assert_eq!(frame.line, test_rig::fixture_line("AllocSites.java", "blob-alloc").unwrap() as i32);
    // 300,000 Blobs were made: the estimate from about 13,000 samples is within a few percent.
    assert!((240_000..=360_000).contains(&top.allocated_count), "estimated Blobs: {}", top.allocated_count);
    assert!(top.allocated_bytes >= top.allocated_count * 32, "{top:?}");
    // One Blob in ten is kept; the rest were collected (a GC ran before "alloc done").
    let live = top.live_count as f64 / top.allocated_count as f64;
    assert!((0.05..=0.2).contains(&live), "live share of Blobs: {live} ({top:?})");

    // The smaller site is there too, with its own class and method, below the Blobs.
    let small = report.sites.iter().find(|s| s.class_signature == "LAllocSites$Small;").expect("the Small site");
    assert_eq!(top_frame(&report.traces, small.trace_id).method_name, "makeSmall");
    assert!(small.allocated_bytes < top.allocated_bytes);
    assert_eq!(small.live_count, 0, "no Small is kept: {small:?}");

    // Sites are sorted by allocated bytes; a reset empties the table.
    assert!(report.sites.windows(2).all(|w| w[0].allocated_bytes >= w[1].allocated_bytes));
    s.send(&p::AllocReport { reset: true }).unwrap();
    let after = s.send(&p::AllocReport { reset: false }).unwrap();
    assert!(after.sites.is_empty() && after.samples == 0);
    drop(jvm);
}

#[test]
fn a_contended_monitor_shows_its_owner_thread_and_stacks() {
    let (jvm, mut s) = start_suspended("Contention");
    s.send(&p::MonitorStart { max_depth: 0, flags: 0 }).expect("MonitorStart");
    s.send(&vm::Resume {}).unwrap();
    jvm.wait_for_line("contention done", TIMEOUT).expect("the fixture contends");
    let report = s.send(&p::MonitorReport { reset: false }).expect("MonitorReport");
    assert!(report.running);
    let site = report
        .monitors
        .iter()
        .find(|m| {
            m.class_signature == "LContention$Guard;"
                && top_frame(&report.traces, m.trace_id).method_name == "waitForLock"
        })
        .unwrap_or_else(|| panic!("no Guard site waiting in waitForLock: {:#?}", report.monitors));
    assert!(site.contended_count >= 3, "{site:?}");
    assert!(site.total_blocked_nanos > 0 && site.max_blocked_nanos <= site.total_blocked_nanos, "{site:?}");
    // The holder owned it each time, at a stack in holdLock (polling the waiter's state, so
    // several distinct stacks may appear, each with its count).
    let holders: Vec<&p::MonitorOwner> = site.owners.iter().filter(|o| o.thread_name == "holder").collect();
    assert!(holders.iter().map(|o| o.times).sum::<i64>() >= 3, "{:?}", site.owners);
    for holder in &holders {
        let trace = report.traces.iter().find(|t| t.trace_id == holder.trace_id).expect("the owner's trace");
        assert!(trace.frames.iter().any(|f| f.method_name == "holdLock"), "the owner's stack: {trace:?}");
        // The owner's ID names the holder thread (it may have ended by now: then it is null).
        if holder.thread.0 != 0
            && let Ok(name) = s.send(&tr::Name { thread: holder.thread })
        {
            assert_eq!(name.thread_name, "holder");
        }
    }
    s.send(&p::MonitorStop {}).unwrap();
    let stopped = s.send(&p::MonitorReport { reset: true }).unwrap();
    assert!(!stopped.running);
    assert!(s.send(&p::MonitorReport { reset: false }).unwrap().monitors.is_empty());
    drop(jvm);
}

#[test]
fn subscribers_get_live_contended_monitor_events() {
    let (jvm, mut s) = start_suspended("Contention");
    let reply = s.send(&p::Subscribe { kinds: vec![ProfilerEventKind::MonitorContended] }).expect("Subscribe");
    assert!(reply.subscribed.contains(&ProfilerEventKind::MonitorContended));
    s.send(&vm::Resume {}).unwrap();
    // Read events until a contention on the Guard arrives from a waiter, owned by the holder.
    let found = loop {
        let packet = s.next_event().expect("an event");
        let events_cmd = PacketKind::Command { set: p::SET, cmd: <p::Events as Command>::CMD };
        if packet.kind != events_cmd {
            continue;
        }
        let events: p::Events = codec::decode_body(&packet.body, s.id_sizes()).expect("profiler events");
        let hit = events.events.into_iter().find_map(|e| match e {
            ProfilerEvent::MonitorContended { thread, class_signature, owner, blocked_nanos, .. }
                if class_signature == "LContention$Guard;" =>
            {
                Some((thread, owner, blocked_nanos))
            }
            _ => None,
        });
        if let Some(hit) = hit {
            break hit;
        }
    };
    let (thread, owner, blocked_nanos) = found;
    assert!(blocked_nanos > 0);
    let mut name = |t| s.send(&tr::Name { thread: t }).map(|n| n.thread_name);
    let blocked = name(thread).expect("the blocked thread is named");
    assert!(blocked.starts_with("waiter-") || blocked == "holder" || blocked == "main", "{blocked}");
    let owner = name(owner).expect("the owner is named");
    assert_ne!(owner, blocked);
    let _ = s.send(&p::Unsubscribe { kinds: vec![] });
    drop(jvm);
}

#[test]
fn capabilities_list_these_features_and_bad_arguments_get_error_replies() {
    use jdwp_protocol::ErrorCode;
    use test_rig::wire::WireError;
    let (jvm, mut s) = start_suspended("Contention");
    let caps = s.send(&p::Capabilities {}).expect("Capabilities");
    for f in [p::feature::ALLOC, p::feature::MONITOR, p::feature::HEAP_DUMP, "event:MonitorContended"] {
        assert!(caps.features.iter().any(|x| x == f), "{f} missing from {:?}", caps.features);
    }
    let code = |r: Result<(), WireError>| match r {
        Err(WireError::Jdwp { code, .. }) => Some(code),
        _ => None,
    };
    let alloc = |sampling_interval_bytes, max_depth, flags| p::AllocStart { sampling_interval_bytes, max_depth, flags };
    assert_eq!(code(s.send(&alloc(-1, 0, 0)).map(drop)), Some(ErrorCode::ILLEGAL_ARGUMENT));
    assert_eq!(code(s.send(&alloc(1024, -1, 0)).map(drop)), Some(ErrorCode::ILLEGAL_ARGUMENT));
    assert_eq!(code(s.send(&alloc(1024, 0, 1)).map(drop)), Some(ErrorCode::ILLEGAL_ARGUMENT));
    assert_eq!(code(s.send(&p::MonitorStart { max_depth: -1, flags: 0 }).map(drop)), Some(ErrorCode::ILLEGAL_ARGUMENT));
    assert_eq!(code(s.send(&p::MonitorStart { max_depth: 0, flags: 4 }).map(drop)), Some(ErrorCode::ILLEGAL_ARGUMENT));
    for path in ["", "/nonexistent-dir-of-jdwp-rs/x.hprof"] {
        let dump = p::HeapDump { path: path.into(), live_only: false };
        assert_eq!(code(s.send(&dump).map(drop)), Some(ErrorCode::ILLEGAL_ARGUMENT), "{path:?}");
    }
    // Nothing was started by the failed commands, and stopping what never started is fine.
    assert!(!s.send(&p::AllocReport { reset: false }).unwrap().running);
    assert!(!s.send(&p::MonitorReport { reset: false }).unwrap().running);
    s.send(&p::AllocStop {}).expect("AllocStop when not sampling");
    s.send(&p::MonitorStop {}).expect("MonitorStop when not recording");
    drop(jvm);
}
