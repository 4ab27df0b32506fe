//! `bench shmem`: the shared-memory transport against the socket one, same agent (ours, release
//! build) and same client (jdi-rs, tokio multi-thread runtime), side by side in one run.
//!
//! ```text
//! cargo run --release -p bench -- shmem [--round-trips 20000] [--hits 5000] [--runs 3]
//! ```
//!
//! Each run starts `tests/fixtures/Bench.java` twice under our agent, once per transport (the
//! order alternates between runs), attaches with jdi-rs, and measures:
//! - breakpoint hits per second (break at `@hot`, resume, next hit: one event and one resume
//!   command per hit);
//! - round trips: `ThreadReference.Name` one at a time while the VM runs (checked not to be answered
//!   from a cache), as mean microseconds per call.
//!
//! The table shows medians over the runs and the ratio shmem / socket.

use std::time::{Duration, Instant};

use jdi::event::EventExt;
use jdi::{Event, EventQueue, EventRequest, EventSet, VirtualMachine};
use test_rig::{Agent, Debuggee};

const T: Duration = Duration::from_secs(60);
const USAGE: &str = "usage: bench shmem [--round-trips N] [--hits N] [--runs N]";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Transport {
    Socket,
    Shmem,
}

impl Transport {
    fn name(self) -> &'static str {
        match self {
            Transport::Socket => "dt_socket",
            Transport::Shmem => "dt_shmem",
        }
    }
}

struct Measured {
    bp_per_s: f64,
    rt_us: f64,
}

pub fn main(argv: &[String]) -> Result<(), String> {
    let (mut round_trips, mut hits, mut runs) = (20_000u32, 5_000u32, 3u32);
    let mut args = argv.iter();
    while let Some(flag) = args.next() {
        let mut number = || -> Result<u32, String> {
            let v = args.next().ok_or_else(|| format!("{flag} needs a value\n{USAGE}"))?;
            v.parse().ok().filter(|&n| n >= 1).ok_or_else(|| format!("{flag}: {v} is not a positive number\n{USAGE}"))
        };
        match flag.as_str() {
            // At least 20 so that the warm-up tenth and the measured rest are both non-empty.
            "--round-trips" => round_trips = number()?.max(20),
            "--hits" => hits = number()?.max(20),
            "--runs" => runs = number()?,
            _ => return Err(format!("unknown option {flag}\n{USAGE}")),
        }
    }
    let agent = crate::agent::build_agent()?;
    let hot = test_rig::fixture_line("Bench.java", "@hot").map_err(|e| e.to_string())?;
    let idle = test_rig::fixture_line("Bench.java", "@idle").map_err(|e| e.to_string())?;
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().map_err(|e| e.to_string())?;
    let mut results: Vec<(Transport, Measured)> = Vec::new();
    for run in 0..runs {
        let order =
            if run % 2 == 0 { [Transport::Socket, Transport::Shmem] } else { [Transport::Shmem, Transport::Socket] };
        for transport in order {
            eprintln!("bench shmem: run {}/{runs}, {}", run + 1, transport.name());
            let m = rt.block_on(one_run(&agent, transport, hits, round_trips, hot, idle))?;
            eprintln!("  bp/s {:.0}, round trip {:.1} us", m.bp_per_s, m.rt_us);
            results.push((transport, m));
        }
    }
    let median_of = |t: Transport, f: fn(&Measured) -> f64| {
        let mut v: Vec<f64> = results.iter().filter(|(x, _)| *x == t).map(|(_, m)| f(m)).collect();
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (rt_sock, rt_shm) = (median_of(Transport::Socket, |m| m.rt_us), median_of(Transport::Shmem, |m| m.rt_us));
    let (bp_sock, bp_shm) = (median_of(Transport::Socket, |m| m.bp_per_s), median_of(Transport::Shmem, |m| m.bp_per_s));
    println!("bench shmem: our agent, jdi-rs client; medians of {runs} run(s); load {}", crate::agent::load_average());
    println!("{:<34} {:>12} {:>12} {:>16}", "metric", "dt_socket", "dt_shmem", "shmem / socket");
    println!(
        "{:<34} {:>12.1} {:>12.1} {:>15.2}x",
        "round trip, ThreadReference.Name (us)",
        rt_sock,
        rt_shm,
        rt_shm / rt_sock
    );
    println!("{:<34} {:>12.0} {:>12.0} {:>15.2}x", "breakpoint hits per second", bp_sock, bp_shm, bp_shm / bp_sock);
    Ok(())
}

async fn one_run(
    agent: &std::path::Path,
    transport: Transport,
    hits: u32,
    round_trips: u32,
    hot: u32,
    idle: u32,
) -> Result<Measured, String> {
    let name = format!("bench-{}-{}", std::process::id(), Instant::now().elapsed().as_nanos());
    let options = match transport {
        Transport::Socket => "transport=dt_socket,server=y,suspend=y,address=127.0.0.1:0".to_owned(),
        Transport::Shmem => format!("transport=dt_shmem,server=y,suspend=y,address={name}"),
    };
    let jvm = Debuggee::builder("Bench")
        .args([hits.to_string(), "10".into(), "1".into()])
        .agent(Agent::path(agent, options))
        .expect_listening(transport == Transport::Socket)
        .spawn()
        .map_err(|e| format!("starting Bench: {e}"))?;
    let vm = match transport {
        Transport::Socket => jdi::attach(&jvm.address().to_string(), Some(T)).await,
        Transport::Shmem => {
            jvm.wait_for_line(&format!("Listening for transport dt_shmem at address: {name}"), T)
                .map_err(|e| e.to_string())?;
            jdi::attach_shmem(&name, Some(T)).await
        }
    }
    .map_err(|e| format!("attaching over {}: {e}", transport.name()))?;
    let measured = measure(&vm, hits, round_trips, hot, idle).await.map_err(|e| e.to_string())?;
    let _ = vm.dispose().await;
    drop(vm);
    let status = tokio::task::spawn_blocking(move || jvm.wait_for_exit(T)).await.map_err(|e| e.to_string())?;
    if !status.is_some_and(|s| s.success()) {
        return Err(format!("Bench did not end normally over {}: {status:?}", transport.name()));
    }
    Ok(measured)
}

async fn expect(events: &mut EventQueue, pred: impl Fn(&Event) -> bool) -> jdi::Result<EventSet> {
    events.wait_for(T, pred).await
}

async fn measure(vm: &VirtualMachine, hits: u32, round_trips: u32, hot: u32, idle: u32) -> jdi::Result<Measured> {
    let mut events =
        vm.event_queue().ok_or_else(|| jdi::JdiError::InvalidArgument("the event queue is taken".into()))?;
    let set = expect(&mut events, |e| matches!(e, Event::VmStart { .. })).await?;
    let prepare = vm.enable_request(&EventRequest::class_prepare("Bench")).await?;
    set.resume().await?;
    let set = expect(&mut events, |e| matches!(e, Event::ClassPrepare { .. })).await?;
    vm.disable_request(prepare).await?;
    let Some(Event::ClassPrepare { ref_type_tag, type_id, .. }) = set.events.first().cloned() else {
        return Err(jdi::JdiError::InvalidArgument("no class prepare event".into()));
    };
    let bench = vm.reference_type_of_kind(ref_type_tag, type_id).await?;
    let at = |line: u32| {
        let bench = bench.clone();
        async move {
            bench
                .locations_of_line(line as i32)
                .await?
                .first()
                .copied()
                .ok_or_else(|| jdi::JdiError::InvalidArgument(format!("no code at Bench:{line}")))
        }
    };

    // Breakpoint hits, each resumed; the first tenth warms up.
    let bp = vm.enable_request(&EventRequest::breakpoint(at(hot).await?)).await?;
    set.resume().await?;
    let warm = hits / 10;
    let mut start = Instant::now();
    let mut last = None;
    for i in 0..hits {
        let hit = expect(&mut events, |e| matches!(e, Event::Breakpoint { .. })).await?;
        if i == warm {
            start = Instant::now();
        }
        if i + 1 < hits {
            hit.resume().await?;
        }
        last = Some(hit);
    }
    let bp_per_s = f64::from(hits - 1 - warm) / start.elapsed().as_secs_f64();
    vm.disable_request(bp).await?;

    // Round trips while the VM runs (main sleeps in idle()).
    let idle_bp = vm.enable_request(&EventRequest::breakpoint(at(idle).await?)).await?;
    last.expect("hits >= 20").resume().await?;
    let hit = events.wait_for(T, |e| e.request() == Some(idle_bp)).await?;
    vm.disable_request(idle_bp).await?;
    let main = hit.thread().expect("breakpoints have threads");
    hit.resume().await?;
    for _ in 0..round_trips / 10 {
        main.name().await?;
    }
    let sent = vm.connection().commands_sent();
    let start = Instant::now();
    for _ in 0..round_trips {
        main.name().await?;
    }
    let rt_us = start.elapsed().as_secs_f64() * 1e6 / f64::from(round_trips);
    if vm.connection().commands_sent() - sent != u64::from(round_trips) {
        return Err(jdi::JdiError::InvalidArgument("ThreadReference.name() was answered from a cache".into()));
    }
    // Let the program finish.
    let released = bench
        .field_by_name("released")
        .await?
        .ok_or_else(|| jdi::JdiError::InvalidArgument("Bench.released is missing".into()))?;
    bench.as_class().expect("Bench is a class").set_value(&released, jdi::Value::Boolean(true)).await?;
    Ok(Measured { bp_per_s, rt_us })
}
