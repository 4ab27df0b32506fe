//! The jdi-rs side: `bench --side jdi-rs RUNTIME ADDRESS HITS STEPS ROUND_TRIPS CONCURRENCY REPS
//! HOT STEP_START IDLE DEEP_BOTTOM`. Mirrors `bench/java/JdiBench.java` step for step.

use std::time::{Duration, Instant};

use jdi::event::EventExt;
use jdi::{Event, EventQueue, EventRequest, EventSet, StepDepth, StepSize, Value, VirtualMachine};

use crate::{Config, Lines};

/// How long any one awaited event may take.
const T: Duration = Duration::from_secs(60);

pub fn main(argv: &[String]) -> Result<(), String> {
    let [which, runtime, address, rest @ ..] = argv else { return Err("--side: missing arguments".into()) };
    if which != "jdi-rs" {
        return Err(format!("--side: only jdi-rs runs here, not {which}"));
    }
    let n: Vec<u32> =
        rest.iter().map(|a| a.parse().map_err(|_| format!("--side: bad number {a}"))).collect::<Result<_, _>>()?;
    let [hits, steps, round_trips, concurrency, reps, hot, step_start, idle, deep_bottom] = n[..] else {
        return Err("--side: wrong number of arguments".into());
    };
    let config = Config { hits, steps, round_trips, concurrency, depth: 0, reps };
    let lines = Lines { hot, step_start, idle, deep_bottom };
    let rt = match runtime.as_str() {
        "multi" => tokio::runtime::Builder::new_multi_thread().enable_all().build(),
        _ => tokio::runtime::Builder::new_current_thread().enable_all().build(),
    }
    .map_err(|e| format!("starting tokio: {e}"))?;
    let result = rt.block_on(run(address, &config, lines)).map_err(|e| e.to_string())?;
    let rss = peak_rss_kb().ok_or("no VmHWM in /proc/self/status")?;
    println!("RESULT {result} rss_kb={rss}");
    Ok(())
}

/// Peak resident set size of this process, in KiB.
pub fn peak_rss_kb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Says on stderr which phase runs (shown if the side fails).
fn progress(phase: &str) {
    eprintln!("jdi-rs side: phase {phase}");
}

/// The index from which timing starts: the first tenth warms up.
fn warm_up(n: u32) -> u32 {
    n / 10
}

/// Waits for the next event set, which must hold an event of the expected kind.
async fn expect(events: &mut EventQueue, what: &str, pred: impl Fn(&Event) -> bool) -> jdi::Result<EventSet> {
    let set = events.next_within(T).await?;
    if set.events.iter().any(pred) {
        Ok(set)
    } else {
        Err(jdi::JdiError::InvalidArgument(format!("expected {what}, got {set:?}")))
    }
}

async fn run(address: &str, c: &Config, lines: Lines) -> jdi::Result<String> {
    let vm = jdi::attach(address, Some(T)).await?;
    let mut events = vm.event_queue().expect("a fresh VM has its queue");
    let set = expect(&mut events, "VM start", |e| matches!(e, Event::VmStart { .. })).await?;

    let prepare = vm.enable_request(&EventRequest::class_prepare("Bench")).await?;
    set.resume().await?;
    let set = expect(&mut events, "Bench prepared", |e| matches!(e, Event::ClassPrepare { .. })).await?;
    vm.disable_request(prepare).await?;
    let Some(Event::ClassPrepare { ref_type_tag, type_id, .. }) = set.events.first().cloned() else {
        unreachable!("checked by expect")
    };
    let bench = vm.reference_type_of_kind(ref_type_tag, type_id).await?;
    let line = |n: u32| {
        let bench = bench.clone();
        async move {
            let found = bench.locations_of_line(n as i32).await?;
            found.first().copied().ok_or_else(|| jdi::JdiError::InvalidArgument(format!("no code at Bench:{n}")))
        }
    };
    let is_breakpoint = |e: &Event| matches!(e, Event::Breakpoint { .. });

    // 1. Breakpoint hits, each resumed.
    progress("breakpoints");
    let bp = vm.enable_request(&EventRequest::breakpoint(line(lines.hot).await?)).await?;
    set.resume().await?;
    let (mut start, warm) = (Instant::now(), warm_up(c.hits));
    let mut set = None;
    for i in 0..c.hits {
        let hit = expect(&mut events, "a breakpoint", is_breakpoint).await?;
        if i == warm {
            start = Instant::now();
        }
        if i + 1 < c.hits {
            hit.resume().await?;
        }
        set = Some(hit);
    }
    let bp_per_s = f64::from(c.hits - 1 - warm) / start.elapsed().as_secs_f64();
    vm.disable_request(bp).await?;
    let set = set.expect("hits >= 2");

    // 2. Single steps (line, over) from the first line of stepLoop, as debuggers step: one
    // one-shot step request per step (jdi-rs steps are one-shot; the VM drops them once fired).
    progress("steps");
    let (mut set, thread) = run_to(&vm, &mut events, set, line(lines.step_start).await?).await?;
    let (mut start, warm) = (Instant::now(), warm_up(c.steps));
    for i in 0..c.steps {
        vm.enable_request(&EventRequest::step(thread.id(), StepSize::Line, StepDepth::Over)).await?;
        set.resume().await?;
        set = expect(&mut events, "a step", |e| matches!(e, Event::SingleStep { .. })).await?;
        if i == warm {
            start = Instant::now();
        }
    }
    let steps_per_s = f64::from(c.steps - 1 - warm) / start.elapsed().as_secs_f64();

    // 3. Round trips while the VM runs (main sleeps in idle()).
    progress("round trips");
    let (set, main) = run_to(&vm, &mut events, set, line(lines.idle).await?).await?;
    set.resume().await?;
    let sent = vm.connection().commands_sent();
    for _ in 0..warm_up(c.round_trips) {
        main.name().await?;
    }
    let start = Instant::now();
    for _ in 0..c.round_trips {
        main.name().await?;
    }
    let rt_per_s = f64::from(c.round_trips) / start.elapsed().as_secs_f64();
    let expected = u64::from(c.round_trips + warm_up(c.round_trips));
    if vm.connection().commands_sent() - sent != expected {
        return Err(jdi::JdiError::InvalidArgument("ThreadReference.name() was answered from a cache".into()));
    }
    let per_caller = c.round_trips / c.concurrency;
    let start = Instant::now();
    let mut callers = tokio::task::JoinSet::new();
    for _ in 0..c.concurrency {
        let main = main.clone();
        callers.spawn(async move {
            for _ in 0..per_caller {
                main.name().await?;
            }
            Ok::<_, jdi::JdiError>(())
        });
    }
    while let Some(done) = callers.join_next().await {
        done.map_err(|e| jdi::JdiError::InvalidArgument(e.to_string()))??;
    }
    let rt_conc_per_s = f64::from(per_caller * c.concurrency) / start.elapsed().as_secs_f64();

    // 4. All frames of a deep stack, with each frame's method and line.
    progress("frames");
    let deep = vm.enable_request(&EventRequest::breakpoint(line(lines.deep_bottom).await?)).await?;
    let released = bench
        .field_by_name("released")
        .await?
        .ok_or_else(|| jdi::JdiError::InvalidArgument("Bench.released is missing".into()))?;
    bench.as_class().expect("Bench is a class").set_value(&released, Value::Boolean(true)).await?;
    let mut times = Vec::new();
    let mut frame_count = 0;
    for _ in 0..c.reps {
        let hit = expect(&mut events, "the deep breakpoint", is_breakpoint).await?;
        let thread = hit.thread().expect("breakpoints have threads");
        let start = Instant::now();
        let frames = thread.frames().await?;
        let mut described = 0usize;
        for frame in &frames {
            let loc = vm.resolve_location(frame.location()).await?;
            let name = loc.method.name().len();
            let line = loc.line_number().await?;
            described += name + usize::from(line > 0);
        }
        times.push(start.elapsed().as_secs_f64() * 1000.0);
        std::hint::black_box(described);
        frame_count = frames.len();
        hit.resume().await?;
    }
    vm.disable_request(deep).await?;
    let frames_first_ms = times[0];
    times.sort_by(f64::total_cmp);
    let frames_ms = times[times.len() / 2];

    // The program ends by itself now.
    progress("end");
    while let Ok(Some(set)) = tokio::time::timeout(T, events.next()).await {
        if set?.is_vm_death() {
            break;
        }
    }
    Ok(format!(
        "bp_per_s={bp_per_s:.1} steps_per_s={steps_per_s:.1} rt_per_s={rt_per_s:.1} rt_conc_per_s={rt_conc_per_s:.1} \
         frames={frame_count} frames_ms={frames_ms:.3} frames_first_ms={frames_first_ms:.3}"
    ))
}

/// From a stopped event set: breaks at `location`, resumes, and returns the hit and its thread
/// (the breakpoint request is gone again).
async fn run_to(
    vm: &VirtualMachine,
    events: &mut EventQueue,
    set: EventSet,
    location: jdi::Location,
) -> jdi::Result<(EventSet, jdi::ThreadReference)> {
    let bp = vm.enable_request(&EventRequest::breakpoint(location)).await?;
    set.resume().await?;
    let hit = events.wait_for(T, |e| e.request() == Some(bp)).await?;
    vm.disable_request(bp).await?;
    let thread = hit.thread().expect("breakpoints have threads");
    Ok((hit, thread))
}
