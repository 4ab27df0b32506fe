//! Deadlocks in one round trip: every cycle of threads each waiting for a lock the next one owns,
//! over object monitors and `java.util.concurrent` ownable synchronizers alike.
//!
//! For each waiting thread, what it waits for and who owns it:
//! * blocked entering a monitor: the monitor (`GetCurrentContendedMonitor`); its owner is the
//!   waiting thread whose `GetOwnedMonitorInfo` lists it (only a waiting thread can be in a
//!   cycle), found through tags set in a throw-away environment rather than one
//!   `GetObjectMonitorUsage` per monitor, which is a safepoint each in HotSpot 17;
//! * parked (`LockSupport.park`): the blocker it parked with (`Thread.parkBlocker`, read by JNI);
//!   when that is an `AbstractOwnableSynchronizer` (the `Sync` of a `ReentrantLock`, of a
//!   `ReentrantReadWriteLock`'s write lock...), its `exclusiveOwnerThread`.
//!
//! Each thread waits for at most one lock, so the waits-for graph has at most one edge out of a
//! node and its cycles are found by following edges. Threads are not suspended; a cycle found is
//! checked once more (each thread still waits for the same lock) before it is reported, so that
//! a lock handed over during the scan does not make a false report. A real deadlock does not
//! move. The stacks of all cycles come from one `GetThreadListStackTraces`.
//!
//! Virtual threads (JVMTI 21+): JVMTI lists platform threads only, and a waiting virtual thread is
//! unmounted (JDK 24+ also when blocked on a monitor), so the blocked or parked ones come from a
//! heap walk ([`super::virtuals`]). They are suspended for the scan (JVMTI answers an unmounted
//! virtual thread's monitors and stack when it is suspended) and always resumed after it; one
//! already suspended by someone else is left as it was.

use std::collections::HashMap;

use jdwp_protocol::ErrorCode;
use jdwp_protocol::commands::profiler::{DeadlockCycle, DeadlockedThread, DeadlocksReply, FrameInfo, LockKind};

use jni_sys::{jfieldID, jobject};

use super::stacks::FrameResolver;
use crate::agent::Agent;
use crate::heap_walk::WalkEnv;
use crate::jni::{JavaType, Jni};
use crate::jvmti::sys::{self, jint, jlong, jthread};

/// Stack depth when the debugger asks for the default (0).
const DEFAULT_DEPTH: i32 = 64;
/// The depth used for "all frames" (-1).
const ALL_DEPTH: i32 = 4096;

/// What a thread waits for.
#[derive(Clone, Copy)]
struct Wait {
    kind: LockKind,
    lock: jobject,
    owner: jthread,
}

/// The JNI handles the scan needs, looked up once per command.
struct Fields {
    tid: jfieldID,
    park_blocker: jfieldID,
    /// `AbstractOwnableSynchronizer` and its `exclusiveOwnerThread`; absent only in a VM without
    /// `java.util.concurrent`.
    ownable: Option<(jni_sys::jclass, jfieldID)>,
}

impl Fields {
    fn new(agent: &Agent, jni: Jni) -> Result<Fields, ErrorCode> {
        let thread = agent.known()?.thread.0;
        let tid = jni.get_field_id(thread, "tid", "J")?;
        let park_blocker = jni.get_field_id(thread, "parkBlocker", "Ljava/lang/Object;")?;
        let ownable = jni.find_class("java/util/concurrent/locks/AbstractOwnableSynchronizer").ok().and_then(|class| {
            jni.get_field_id(class, "exclusiveOwnerThread", "Ljava/lang/Thread;").ok().map(|f| (class, f))
        });
        if ownable.is_none() {
            jni.exception_clear();
        }
        Ok(Fields { tid, park_blocker, ownable })
    }

    fn tid(&self, jni: Jni, thread: jthread) -> i64 {
        // SAFETY: `tid` is `Thread.tid` (a long) and `thread` is a Thread.
        unsafe { jni.get_field(thread, self.tid, JavaType::Long).j }
    }
}

/// Which kind of lock a thread in `state` may be waiting for.
fn waiting_kind(state: jint) -> Option<LockKind> {
    if state & sys::JVMTI_THREAD_STATE_BLOCKED_ON_MONITOR_ENTER != 0 {
        Some(LockKind::Monitor)
    } else if state & sys::JVMTI_THREAD_STATE_PARKED != 0 {
        Some(LockKind::OwnableSynchronizer)
    } else {
        None
    }
}

/// The monitor a blocked thread waits to enter.
fn contended_monitor(agent: &Agent, thread: jthread) -> Option<jobject> {
    agent.jvmti.get_current_contended_monitor(thread).ok()?
}

/// The ownable synchronizer a parked thread waits for, and its exclusive owner.
fn parked_on(jni: Jni, fields: &Fields, thread: jthread) -> Option<(jobject, jthread)> {
    let (ownable_class, owner_field) = fields.ownable?;
    // SAFETY: `park_blocker` is `Thread.parkBlocker`, an object field of a Thread.
    let blocker = unsafe { jni.get_field(thread, fields.park_blocker, JavaType::Object).l };
    if blocker.is_null() || !jni.is_instance_of(blocker, ownable_class) {
        return None;
    }
    // SAFETY: `owner_field` is `exclusiveOwnerThread` of `AbstractOwnableSynchronizer`, which
    // `blocker` is an instance of.
    let owner = unsafe { jni.get_field(blocker, owner_field, JavaType::Object).l };
    (!owner.is_null()).then_some((blocker, owner))
}

/// The cycles of a graph where each node has at most one successor, each listed once, starting
/// from its lowest node.
pub fn cycles_of(next: &[Option<usize>]) -> Vec<Vec<usize>> {
    // 0: unvisited, 1: on the current path, 2: done.
    let mut state = vec![0u8; next.len()];
    let mut cycles = Vec::new();
    for start in 0..next.len() {
        let mut path = Vec::new();
        let mut node = Some(start);
        while let Some(n) = node {
            if n >= next.len() || state[n] == 2 {
                break;
            }
            if state[n] == 1 {
                let from = path.iter().position(|&p| p == n).unwrap_or(0);
                let mut cycle: Vec<usize> = path[from..].to_vec();
                let lowest = cycle.iter().enumerate().min_by_key(|&(_, v)| *v).map(|(i, _)| i).unwrap_or(0);
                cycle.rotate_left(lowest);
                cycles.push(cycle);
                break;
            }
            state[n] = 1;
            path.push(n);
            node = next[n];
        }
        for p in path {
            state[p] = 2;
        }
    }
    cycles
}

pub fn find(agent: &Agent, jni: Jni, max_depth: i32) -> Result<DeadlocksReply, ErrorCode> {
    let depth = match max_depth {
        0 => DEFAULT_DEPTH,
        d if d < 0 => ALL_DEPTH,
        d => d.min(ALL_DEPTH),
    };
    let fields = Fields::new(agent, jni)?;
    let all = agent.jvmti.get_all_threads()?;
    let mut threads: Vec<jthread> = all.iter().copied().filter(|&t| !agent.is_agent_thread(jni, t)).collect();
    // Virtual threads (JVMTI 21+): the waiting ones (a virtual thread that waits is unmounted,
    // JDK 24+ for monitors), held suspended while they are looked at.
    let virtuals = super::virtuals::virtual_threads(agent, jni, false, |state| waiting_kind(state).is_some())?;
    threads.extend_from_slice(&virtuals);
    let reply = super::virtuals::while_suspended(agent, &virtuals, || scan(agent, jni, &fields, &threads, depth));
    for &v in &virtuals {
        jni.delete_local_ref(v);
    }
    reply?
}

/// The cycles among `threads`.
fn scan(
    agent: &Agent,
    jni: Jni,
    fields: &Fields,
    threads: &[jthread],
    depth: i32,
) -> Result<DeadlocksReply, ErrorCode> {
    let by_tid: HashMap<i64, usize> = threads.iter().enumerate().map(|(i, &t)| (fields.tid(jni, t), i)).collect();
    let kinds: Vec<Option<LockKind>> =
        threads.iter().map(|&t| agent.jvmti.get_thread_state(t).ok().and_then(waiting_kind)).collect();

    // Only a waiting thread can be in a cycle, so only their monitors can close one. Each owned
    // monitor is tagged (in a throw-away environment) with its owner's index + 1: the owner of
    // a contended monitor is then one tag read away, with no VM operation per monitor.
    let owners = WalkEnv::new(agent)?;
    for (i, &t) in threads.iter().enumerate() {
        if kinds[i].is_some() {
            for &monitor in agent.jvmti.get_owned_monitor_info(t)?.iter() {
                owners.0.set_tag(monitor, i as jlong + 1)?;
            }
        }
    }
    let mut waits: Vec<Option<Wait>> = vec![None; threads.len()];
    let mut next: Vec<Option<usize>> = vec![None; threads.len()];
    for (i, &t) in threads.iter().enumerate() {
        match kinds[i] {
            Some(LockKind::Monitor) => {
                let Some(monitor) = contended_monitor(agent, t) else { continue };
                let owner = usize::try_from(owners.0.get_tag(monitor)?).ok().and_then(|tag| tag.checked_sub(1));
                if let Some(owner) = owner.filter(|&o| o < threads.len()) {
                    waits[i] = Some(Wait { kind: LockKind::Monitor, lock: monitor, owner: threads[owner] });
                    next[i] = Some(owner);
                }
            }
            Some(LockKind::OwnableSynchronizer) => {
                let Some((blocker, owner)) = parked_on(jni, fields, t) else { continue };
                if let Some(&o) = by_tid.get(&fields.tid(jni, owner)) {
                    waits[i] = Some(Wait { kind: LockKind::OwnableSynchronizer, lock: blocker, owner });
                    next[i] = Some(o);
                }
            }
            None => {}
        }
    }
    drop(owners);

    // Threads ran during the scan: keep the cycles whose threads still wait for the same locks.
    // (A monitor's owner in a cycle is itself still blocked, so it still owns the monitor.)
    let still_waits = |i: usize| -> bool {
        let Some(before) = waits[i] else { return false };
        let now = agent.jvmti.get_thread_state(threads[i]).ok().and_then(waiting_kind);
        now == Some(before.kind)
            && match before.kind {
                LockKind::Monitor => {
                    contended_monitor(agent, threads[i]).is_some_and(|m| jni.is_same_object(m, before.lock))
                }
                LockKind::OwnableSynchronizer => parked_on(jni, fields, threads[i])
                    .is_some_and(|(b, o)| jni.is_same_object(b, before.lock) && jni.is_same_object(o, before.owner)),
            }
    };
    let cycles: Vec<Vec<usize>> = cycles_of(&next).into_iter().filter(|c| c.iter().all(|&i| still_waits(i))).collect();

    // Every stack in one call.
    let members: Vec<usize> = cycles.iter().flatten().copied().collect();
    let list: Vec<jthread> = members.iter().map(|&i| threads[i]).collect();
    let mut resolver = FrameResolver::new(agent.jvmti);
    let mut stacks: HashMap<usize, Vec<FrameInfo>> = HashMap::new();
    if !list.is_empty() {
        let traces = agent.jvmti.get_thread_list_stack_traces(&list, depth)?;
        for (&i, trace) in members.iter().zip(traces.iter()) {
            stacks.insert(i, trace.frames.iter().map(|f| resolver.frame(f.method, f.location)).collect());
        }
    }
    let mut reply = Vec::with_capacity(cycles.len());
    for cycle in cycles {
        let mut members = Vec::with_capacity(cycle.len());
        for &i in &cycle {
            let Some(wait) = waits[i] else { continue };
            let thread = threads[i];
            let lock_class = jni.get_object_class(wait.lock)?;
            let lock_class_signature = agent.jvmti.get_class_signature(lock_class)?.0;
            jni.delete_local_ref(lock_class);
            members.push(DeadlockedThread {
                thread: agent.thread_id(jni, thread)?,
                name: agent.jvmti.get_thread_info(thread).map(|i| i.name).unwrap_or_default(),
                frames: stacks.remove(&i).unwrap_or_default(),
                kind: wait.kind,
                lock: agent.tagged_object(jni, wait.lock)?,
                lock_class_signature,
                owner: agent.thread_id(jni, wait.owner)?,
            });
        }
        reply.push(DeadlockCycle { threads: members });
    }
    Ok(DeadlocksReply { cycles: reply })
}

#[cfg(test)]
mod tests {
    use super::cycles_of;

    #[test]
    fn cycles_are_found_once_each_from_their_lowest_node() {
        // 0 → 1 → 2 → 0, 3 → 4 → 3, 5 → 0 (waits on a cycle, not in it), 6 waits for nobody.
        let next = [Some(1), Some(2), Some(0), Some(4), Some(3), Some(0), None];
        assert_eq!(cycles_of(&next), vec![vec![0, 1, 2], vec![3, 4]]);
        // Entered from a tail: 0 → 1 → 2 → 1.
        assert_eq!(cycles_of(&[Some(1), Some(2), Some(1)]), vec![vec![1, 2]]);
        // A thread owning the lock it waits for is a cycle of one (a self-deadlock).
        assert_eq!(cycles_of(&[Some(0)]), vec![vec![0]]);
        assert!(cycles_of(&[None, Some(0)]).is_empty());
    }
}
