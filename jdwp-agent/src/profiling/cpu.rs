//! CPU sampling: every interval, the stacks of the threads that ran since the previous tick.
//!
//! Two mechanisms (see `spec-notes/profiler.md`). Where the VM has `AsyncGetCallTrace`, signals
//! ([`super::cpu_signal`]): a timer on the process's CPU time interrupts whichever thread runs,
//! which takes its own stack; the profiler thread only drains what the signals recorded, every
//! [`DRAIN_PERIOD`], and attributes each sample to its thread by the thread's `JNIEnv`.
//!
//! Otherwise, or when asked for ([`FLAG_JVMTI_STACKS`]), JVMTI stack traces: per tick, the profiler thread reads each sampled
//! thread's CPU time (`GetThreadCpuTime`, a clock read that stops nobody); threads whose time did
//! not move did not run, cost nothing more and count as `idle_skipped`. The stacks of the others
//! come from one `GetThreadListStackTraces` call (in JDK 17 a handshake for one thread, a short VM
//! operation for several); no thread is suspended. Stacks are stored as method IDs and bytecode
//! indexes; names and lines are looked up once per method, at report time.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use jdwp_protocol::commands::profiler::{CpuReportReply, CpuTrace, ProfiledThread, ThreadSamples};
use jdwp_protocol::{ErrorCode, ThreadId};
use jni_sys::jfieldID;

use super::mounted::{Mounts, own_frames};
use super::stacks::FrameResolver;
use crate::agent::{Agent, GlobalRef};
use crate::jni::{JavaType, Jni};
use crate::jvmti::sys::{self, jclass, jlocation, jthread};
use crate::jvmti::{Jvmti, JvmtiError};

/// Stack depth when the debugger asks for the default (0).
pub const DEFAULT_DEPTH: i32 = 64;
/// The deepest stack recorded, whatever is asked: bounds the memory one sample can take.
pub const MAX_DEPTH: i32 = 1024;
/// How often the list of threads is refreshed while sampling all threads.
const THREAD_REFRESH: Duration = Duration::from_millis(20);
/// How often the profiler thread drains the signal sampler's ring.
pub const DRAIN_PERIOD: Duration = Duration::from_millis(10);
/// `CpuStart` flag: take stacks with JVMTI (a short safepoint per tick) even where signal
/// sampling is available.
pub const FLAG_JVMTI_STACKS: i32 = jdwp_protocol::commands::profiler::CPU_FLAG_JVMTI_STACKS;

/// One thread seen by the sampler.
struct SampledThread {
    /// A global reference, kept until the samples are discarded (the report names the thread).
    thread: GlobalRef,
    name: String,
    /// CPU time at the previous tick, nanoseconds; -1 before the first reading.
    last_cpu: i64,
    samples: i64,
    alive: bool,
    /// A virtual thread, sampled through its carrier (JVMTI has no CPU time for it).
    is_virtual: bool,
}

/// One distinct stack and its counts.
#[derive(Default)]
struct TraceCounts {
    samples: i64,
    /// Per index into `CpuSampler::threads`.
    per_thread: HashMap<usize, i64>,
}

/// The sampler's settings and what it has gathered; behind the profiler's `cpu` lock.
#[derive(Default)]
pub struct CpuSampler {
    running: bool,
    /// Whether the running (or last) sampling used signals.
    signal: bool,
    interval: Duration,
    max_depth: i32,
    /// Sample only these threads (none: all threads, refreshed as they come and go).
    filter: Option<Vec<GlobalRef>>,
    started: Option<Instant>,
    stopped: Option<Instant>,
    next_tick: Option<Instant>,
    next_refresh: Option<Instant>,
    threads: Vec<SampledThread>,
    /// Java thread ID (`Thread.tid`) → index into `threads`.
    by_tid: HashMap<i64, usize>,
    /// `JNIEnv` address → index into `threads` (signal sampling).
    by_env: HashMap<usize, usize>,
    /// Stack as (method ID, bytecode index) pairs, innermost first → counts.
    traces: HashMap<Vec<(usize, jlocation)>, TraceCounts>,
    ticks: i64,
    samples: i64,
    idle_skipped: i64,
    /// CPU time of the profiler thread in ticks, and wall time in stack walks (nanoseconds).
    sampler_cpu: i64,
    stack_walk: i64,
    tid_field: Option<usize>,
    /// `Thread.eetop` and how far a thread's `JNIEnv` lies from it (signal sampling).
    env_of_thread: Option<(usize, isize)>,
    /// How to find the virtual thread a carrier has mounted, looked up on the first need of each
    /// sampling run (the inner `None`: no virtual threads in this VM).
    mounts: Option<Option<Mounts>>,
    /// When `mounts` was last looked up.
    mounts_looked: Option<Instant>,
}

/// The calling thread's CPU time in nanoseconds (0 if it cannot be read).
fn thread_cpu_nanos(agent: &Agent) -> i64 {
    // A null thread is the current one.
    agent.jvmti.get_thread_cpu_time(std::ptr::null_mut()).unwrap_or(0)
}

impl CpuSampler {
    /// When the profiler thread should take the next sample; `None` when not sampling.
    pub fn next_tick(&self) -> Option<Instant> {
        if self.running { self.next_tick } else { None }
    }

    /// Starts (or restarts) sampling, discarding earlier samples; with signals unless `flags`
    /// asks for JVMTI stacks or the VM cannot do it.
    pub fn start(
        &mut self,
        agent: &Agent,
        jni: Jni,
        interval: Duration,
        max_depth: i32,
        filter: Option<Vec<jthread>>,
        flags: i32,
    ) -> Result<(), ErrorCode> {
        let filter = match filter {
            Some(threads) => {
                let mut globals = Vec::with_capacity(threads.len());
                for thread in threads {
                    globals.push(GlobalRef(jni.new_global_ref(thread)?));
                }
                Some(globals)
            }
            None => None,
        };
        self.stop(agent, jni);
        self.discard(jni);
        if let Some(old) = self.filter.take() {
            old.iter().for_each(|g| jni.delete_global_ref(g.0));
        }
        let now = Instant::now();
        self.interval = interval;
        self.max_depth = max_depth;
        self.filter = filter;
        self.next_refresh = Some(now);
        self.mounts = None;
        self.signal = flags & FLAG_JVMTI_STACKS == 0 && self.start_signals(agent, jni, interval, max_depth);
        // The threads known before the first signal sample, so that it finds its thread.
        if self.signal {
            self.refresh_threads(agent, jni);
            self.next_refresh = Some(now + THREAD_REFRESH);
        }
        self.running = true;
        self.started = Some(now);
        self.stopped = None;
        self.next_tick = Some(now + if self.signal { DRAIN_PERIOD } else { interval });
        Ok(())
    }

    /// Sets up and starts signal sampling; false if this VM cannot.
    fn start_signals(&mut self, agent: &Agent, jni: Jni, interval: Duration, max_depth: i32) -> bool {
        let Ok(profiler) = super::profiler() else { return false };
        if max_depth > super::cpu_signal::MAX_DEPTH
            || !super::cpu_signal::available(agent.vm)
            || self.env_of_thread(agent, jni).is_none()
        {
            return false;
        }
        // Class load events on (AsyncGetCallTrace requires them) and method IDs for every class,
        // the ones loaded from now on through the profiling environment's ClassPrepare callback.
        profiler.class_events_wanted.store(true, std::sync::atomic::Ordering::Release);
        let events = [sys::JVMTI_EVENT_CLASS_LOAD, sys::JVMTI_EVENT_CLASS_PREPARE];
        if events.iter().any(|&e| profiler.env.set_event_notification_mode(true, e, std::ptr::null_mut()).is_err()) {
            stop_class_events();
            return false;
        }
        if let Ok(classes) = agent.jvmti.get_loaded_classes() {
            super::cpu_signal::prepare_methods(profiler.env, &classes);
            classes.iter().for_each(|&c| jni.delete_local_ref(c));
        }
        if super::cpu_signal::start(agent.vm, interval, max_depth) {
            true
        } else {
            stop_class_events();
            false
        }
    }

    /// Stops sampling; the samples stay for the report.
    pub fn stop(&mut self, agent: &Agent, jni: Jni) {
        if self.running {
            if self.signal {
                super::cpu_signal::stop();
                stop_class_events();
                self.drain(agent, jni);
            }
            self.running = false;
            self.stopped = Some(Instant::now());
        }
    }

    /// Forgets every sample and thread (releasing the threads).
    fn discard(&mut self, jni: Jni) {
        for t in self.threads.drain(..) {
            jni.delete_global_ref(t.thread.0);
        }
        self.by_tid.clear();
        self.by_env.clear();
        self.traces.clear();
        self.ticks = 0;
        self.samples = 0;
        self.idle_skipped = 0;
        self.sampler_cpu = 0;
        self.stack_walk = 0;
        let now = Instant::now();
        self.started = Some(now);
        if !self.running {
            self.stopped = Some(now);
        }
    }

    /// One tick (the profiler thread, inside a local frame).
    pub fn tick(&mut self, agent: &Agent, jni: Jni) {
        if !self.running {
            return;
        }
        let cpu_before = thread_cpu_nanos(agent);
        if self.signal {
            let now = Instant::now();
            self.next_tick = Some(now + DRAIN_PERIOD);
            if self.next_refresh.is_some_and(|r| now >= r) {
                self.refresh_threads(agent, jni);
                self.next_refresh = Some(now + THREAD_REFRESH);
            }
            self.drain(agent, jni);
        } else {
            self.sample(agent, jni);
        }
        self.sampler_cpu += thread_cpu_nanos(agent) - cpu_before;
    }

    /// Takes in what the signal handler recorded (signal sampling).
    fn drain(&mut self, agent: &Agent, jni: Jni) {
        let mut taken: Vec<(usize, Vec<(usize, jlocation)>)> = Vec::new();
        super::cpu_signal::drain(|(env, frames)| {
            if let Ok(frames) = frames {
                taken.push((env, frames.to_vec()));
            }
        });
        let mut unknown = Vec::new();
        for (env, frames) in taken {
            match self.by_env.get(&env) {
                Some(&index) => self.record_signal(agent, jni, index, frames),
                None => unknown.push((env, frames)),
            }
        }
        // A thread started since the last refresh: look again, once.
        if !unknown.is_empty() {
            self.refresh_threads(agent, jni);
            for (env, frames) in unknown {
                if let Some(&index) = self.by_env.get(&env) {
                    self.record_signal(agent, jni, index, frames);
                }
            }
        }
        (self.ticks, self.stack_walk) = super::cpu_signal::counters();
    }

    /// One signal sample in thread `index`: when the carrier runs a virtual thread (its frames
    /// include a continuation's entry), the virtual thread's own frames, counted for the virtual
    /// thread the carrier has mounted now (at most a drain period after the sample).
    fn record_signal(&mut self, agent: &Agent, jni: Jni, index: usize, frames: Vec<(usize, jlocation)>) {
        if let Some(mounts) = self.mounts(agent, jni)
            && let Some(own) = own_frames(&frames, mounts.enter_special as usize)
            && let Some(vthread) = mounts.virtual_on(jni, self.threads[index].thread.0)
        {
            let virtual_index = self.index_of_virtual(agent, jni, vthread);
            jni.delete_local_ref(vthread);
            if let Some(v) = virtual_index {
                self.record(v, frames[..own].to_vec());
                return;
            }
        }
        self.record(index, frames);
    }

    /// The virtual thread finder, looked up once per sampling run; while the VM has no virtual
    /// thread yet, looked up again at most every [`THREAD_REFRESH`].
    fn mounts(&mut self, agent: &Agent, jni: Jni) -> Option<Mounts> {
        let now = Instant::now();
        match self.mounts {
            Some(Some(mounts)) => return Some(mounts),
            Some(None) if self.mounts_looked.is_some_and(|at| now < at + THREAD_REFRESH) => return None,
            _ => {}
        }
        self.mounts_looked = Some(now);
        let found = Mounts::new(agent, jni);
        self.mounts = Some(found);
        found
    }

    /// The index of a virtual thread in `threads`, added if new.
    fn index_of_virtual(&mut self, agent: &Agent, jni: Jni, vthread: jthread) -> Option<usize> {
        let tid_field = self.tid_field(agent, jni)?;
        // SAFETY: `tid_field` is `Thread.tid`, a long, and `vthread` is a Thread.
        let tid = unsafe { jni.get_field(vthread, tid_field, JavaType::Long).j };
        if let Some(&index) = self.by_tid.get(&tid) {
            return Some(index);
        }
        let global = jni.new_global_ref(vthread).ok()?;
        let name = agent.jvmti.get_thread_info(vthread).map(|i| i.name).unwrap_or_default();
        let index = self.threads.len();
        self.by_tid.insert(tid, index);
        self.threads.push(SampledThread {
            thread: GlobalRef(global),
            name,
            last_cpu: -1,
            samples: 0,
            alive: true,
            is_virtual: true,
        });
        Some(index)
    }

    /// One stack of thread `index`.
    fn record(&mut self, index: usize, key: Vec<(usize, jlocation)>) {
        let counts = self.traces.entry(key).or_default();
        counts.samples += 1;
        *counts.per_thread.entry(index).or_default() += 1;
        if let Some(t) = self.threads.get_mut(index) {
            t.samples += 1;
        }
        self.samples += 1;
    }

    fn sample(&mut self, agent: &Agent, jni: Jni) {
        let now = Instant::now();
        // A tick that comes late (a long safepoint, an overloaded machine) is not made up for:
        // the next one is an interval from now, as a timer signal would behave.
        let next = self.next_tick.unwrap_or(now) + self.interval;
        self.next_tick = Some(if next < now { now + self.interval } else { next });
        self.ticks += 1;
        if self.next_refresh.is_some_and(|r| now >= r) {
            self.refresh_threads(agent, jni);
            self.next_refresh = Some(now + THREAD_REFRESH);
        }

        // Which threads ran since the last tick.
        let mut ran: Vec<usize> = Vec::new();
        for (i, t) in self.threads.iter_mut().enumerate() {
            if !t.alive || t.is_virtual {
                continue;
            }
            match agent.jvmti.get_thread_cpu_time(t.thread.0) {
                Ok(cpu) => {
                    if cpu != t.last_cpu && t.last_cpu >= 0 {
                        ran.push(i);
                    } else {
                        self.idle_skipped += 1;
                    }
                    t.last_cpu = cpu;
                }
                Err(JvmtiError::THREAD_NOT_ALIVE) => t.alive = false,
                Err(_) => {}
            }
        }
        if ran.is_empty() {
            return;
        }
        // A carrier that ran a virtual thread: the virtual thread's stack, counted for it (a
        // carrier's own JVMTI stack leaves the mounted virtual thread's frames out).
        let mut list: Vec<jthread> = Vec::with_capacity(ran.len());
        let mut locals: Vec<jthread> = Vec::new();
        if let Some(mounts) = self.mounts(agent, jni) {
            for index in ran.iter_mut() {
                let carrier = self.threads[*index].thread.0;
                match mounts.virtual_on(jni, carrier) {
                    Some(vthread) => match self.index_of_virtual(agent, jni, vthread) {
                        Some(v) => {
                            *index = v;
                            list.push(vthread);
                            locals.push(vthread);
                        }
                        None => {
                            jni.delete_local_ref(vthread);
                            list.push(carrier);
                        }
                    },
                    None => list.push(carrier),
                }
            }
        } else {
            list.extend(ran.iter().map(|&i| self.threads[i].thread.0));
        }
        let walk_start = Instant::now();
        let stacks = agent.jvmti.get_thread_list_stack_traces(&list, self.max_depth);
        self.stack_walk += i64::try_from(walk_start.elapsed().as_nanos()).unwrap_or(i64::MAX);
        locals.iter().for_each(|&l| jni.delete_local_ref(l));
        let Ok(stacks) = stacks else { return };
        // JVMTI answers in the order of the list.
        for (&index, stack) in ran.iter().zip(stacks.iter()) {
            // A thread that used CPU since the last tick but is now blocked or waiting is not
            // running code: its stack shows where it waits, which is not where time went.
            if stack.state & sys::JVMTI_THREAD_STATE_RUNNABLE == 0 || stack.frames.is_empty() {
                self.idle_skipped += 1;
                continue;
            }
            let key: Vec<(usize, jlocation)> = stack.frames.iter().map(|f| (f.method as usize, f.location)).collect();
            self.record(index, key);
        }
    }

    /// Picks up threads started since the last refresh (all-threads mode), or the filter's
    /// threads on the first tick.
    fn refresh_threads(&mut self, agent: &Agent, jni: Jni) {
        let candidates: Vec<jthread> = match &self.filter {
            Some(filter) => {
                if !self.threads.is_empty() {
                    return;
                }
                filter.iter().map(|g| g.0).collect()
            }
            None => match agent.jvmti.get_all_threads() {
                Ok(all) => all.iter().copied().collect(),
                Err(_) => return,
            },
        };
        let Some(tid_field) = self.tid_field(agent, jni) else { return };
        let env_of_thread = if self.signal { self.env_of_thread(agent, jni) } else { None };
        for thread in candidates {
            // SAFETY: `tid_field` is `Thread.tid`, a long, and `thread` is a Thread.
            let tid = unsafe { jni.get_field(thread, tid_field, JavaType::Long).j };
            if self.by_tid.contains_key(&tid) || agent.is_agent_thread(jni, thread) {
                continue;
            }
            let Ok(global) = jni.new_global_ref(thread) else { continue };
            let name = agent.jvmti.get_thread_info(thread).map(|i| i.name).unwrap_or_default();
            let last_cpu = agent.jvmti.get_thread_cpu_time(thread).unwrap_or(-1);
            let env = env_of_thread.map_or(0, |(eetop, offset)| thread_env(jni, thread, eetop, offset));
            let index = self.threads.len();
            self.by_tid.insert(tid, index);
            if env != 0 {
                // A later thread may reuse a dead one's address: the newest owner wins.
                self.by_env.insert(env, index);
            }
            self.threads.push(SampledThread {
                thread: GlobalRef(global),
                name,
                last_cpu,
                samples: 0,
                alive: true,
                is_virtual: false,
            });
        }
    }

    /// `Thread.eetop` (HotSpot's address of the thread's VM structure, which holds its `JNIEnv`)
    /// and the distance from it to the `JNIEnv`, learnt from the calling thread, whose `JNIEnv`
    /// is known. `None` if the field is missing (not HotSpot).
    fn env_of_thread(&mut self, agent: &Agent, jni: Jni) -> Option<(jfieldID, isize)> {
        if self.env_of_thread.is_none() {
            let thread_class = agent.known().ok()?.thread.0;
            let eetop = jni.get_field_id(thread_class, "eetop", "J").ok()?;
            let me = agent.jvmti.get_current_thread().ok()?;
            // SAFETY: `eetop` is `Thread.eetop`, a long, and `me` is a Thread.
            let address = unsafe { jni.get_field(me, eetop, JavaType::Long).j } as isize;
            jni.delete_local_ref(me);
            if address == 0 {
                return None;
            }
            self.env_of_thread = Some((eetop as usize, jni.as_raw() as isize - address));
        }
        self.env_of_thread.map(|(f, offset)| (f as jfieldID, offset))
    }

    fn tid_field(&mut self, agent: &Agent, jni: Jni) -> Option<jfieldID> {
        if self.tid_field.is_none() {
            let thread_class = agent.known().ok()?.thread.0;
            self.tid_field = jni.get_field_id(thread_class, "tid", "J").ok().map(|f| f as usize);
        }
        self.tid_field.map(|f| f as jfieldID)
    }

    /// The report: traces by decreasing samples, numbered from 1 in that order.
    pub fn report(&mut self, agent: &Agent, jni: Jni, reset: bool) -> Result<CpuReportReply, ErrorCode> {
        if self.running && self.signal {
            self.drain(agent, jni);
        }
        let mut resolver = FrameResolver::new(agent.jvmti);
        let mut threads = Vec::new();
        for (index, t) in self.threads.iter().enumerate() {
            if t.samples == 0 {
                continue;
            }
            // A thread that is gone is still named, by the name it had.
            let thread = agent.thread_id(jni, t.thread.0).unwrap_or(ThreadId::NULL);
            threads.push(ProfiledThread { index: index as i32, thread, name: t.name.clone(), samples: t.samples });
        }
        let mut traces: Vec<(&Vec<(usize, jlocation)>, &TraceCounts)> = self.traces.iter().collect();
        traces.sort_by(|a, b| b.1.samples.cmp(&a.1.samples).then_with(|| a.0.cmp(b.0)));
        let traces: Vec<CpuTrace> = traces
            .into_iter()
            .enumerate()
            .map(|(i, (frames, counts))| {
                let mut per_thread: Vec<ThreadSamples> = counts
                    .per_thread
                    .iter()
                    .map(|(&t, &samples)| ThreadSamples { thread_index: t as i32, samples })
                    .collect();
                per_thread.sort_by(|a, b| b.samples.cmp(&a.samples).then(a.thread_index.cmp(&b.thread_index)));
                CpuTrace {
                    trace_id: i as i32 + 1,
                    frames: frames.iter().map(|&(m, l)| resolver.frame(m as jni_sys::jmethodID, l)).collect(),
                    samples: counts.samples,
                    per_thread,
                }
            })
            .collect();
        let end = if self.running { Instant::now() } else { self.stopped.unwrap_or_else(Instant::now) };
        let elapsed = self.started.map(|s| end.saturating_duration_since(s)).unwrap_or_default();
        let reply = CpuReportReply {
            running: self.running,
            interval_micros: i32::try_from(self.interval.as_micros()).unwrap_or(i32::MAX),
            elapsed_nanos: i64::try_from(elapsed.as_nanos()).unwrap_or(i64::MAX),
            ticks: self.ticks,
            samples: self.samples,
            idle_skipped: self.idle_skipped,
            sampler_cpu_nanos: self.sampler_cpu,
            stack_walk_nanos: self.stack_walk,
            threads,
            traces,
        };
        if reset {
            self.discard(jni);
        }
        Ok(reply)
    }
}

/// The `JNIEnv` address of a live `thread` (0 if it has ended or not started).
fn thread_env(jni: Jni, thread: jthread, eetop: jfieldID, offset: isize) -> usize {
    // SAFETY: `eetop` is `Thread.eetop`, a long, and `thread` is a Thread.
    let address = unsafe { jni.get_field(thread, eetop, JavaType::Long).j } as isize;
    if address == 0 { 0 } else { (address + offset) as usize }
}

fn stop_class_events() {
    if let Ok(profiler) = super::profiler() {
        profiler.class_events_wanted.store(false, std::sync::atomic::Ordering::Release);
        for event in [sys::JVMTI_EVENT_CLASS_PREPARE, sys::JVMTI_EVENT_CLASS_LOAD] {
            let _ = profiler.env.set_event_notification_mode(false, event, std::ptr::null_mut());
        }
    }
}

/// The profiling environment's `ClassLoad` callback: nothing to do, but `AsyncGetCallTrace`
/// works only while class load events are enabled somewhere.
pub(super) unsafe extern "system" fn on_class_load(
    _: *mut sys::jvmtiEnv,
    _: *mut jni_sys::JNIEnv,
    _: jthread,
    _: jclass,
) {
}

/// The profiling environment's `ClassPrepare` callback: makes the class's method IDs for the
/// signal handler.
pub(super) unsafe extern "system" fn on_class_prepare(
    jvmti_env: *mut sys::jvmtiEnv,
    _: *mut jni_sys::JNIEnv,
    _: jthread,
    class: jclass,
) {
    crate::guard((), || {
        if super::profiler().is_ok_and(|p| p.class_events_wanted.load(std::sync::atomic::Ordering::Acquire))
            // SAFETY: the VM calls back with the environment the callbacks were set on.
            && let Some(env) = unsafe { Jvmti::from_raw(jvmti_env) }
        {
            super::cpu_signal::prepare_methods(env, &[class]);
        }
    });
}
