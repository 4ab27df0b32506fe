//! Deadlocks in one round trip: every cycle of threads each waiting for a lock the next one owns,
//! over object monitors and `java.util.concurrent` ownable synchronizers alike.
//!
//! For each thread, what it waits for and who owns it:
//! * blocked entering a monitor: the monitor (`GetCurrentContendedMonitor`) and its owner
//!   (`GetObjectMonitorUsage`);
//! * parked (`LockSupport.park`): the blocker it parked with (`Thread.parkBlocker`, read by JNI);
//!   when that is an `AbstractOwnableSynchronizer` (the `Sync` of a `ReentrantLock`, of a
//!   `ReentrantReadWriteLock`'s write lock...), its `exclusiveOwnerThread`.
//!
//! Each thread waits for at most one lock, so the waits-for graph has at most one edge out of a
//! node and its cycles are found by following edges. Threads are not suspended; a cycle found is
//! checked once more (same locks, same owners) before it is reported, so that a lock handed over
//! during the scan does not make a false report. A real deadlock does not move.

use std::collections::HashMap;

use jdwp_protocol::ErrorCode;
use jdwp_protocol::commands::profiler::{DeadlockCycle, DeadlockedThread, DeadlocksReply, LockKind};
use jni_sys::{jfieldID, jobject};

use super::stacks::FrameResolver;
use crate::agent::Agent;
use crate::jni::{JavaType, Jni};
use crate::jvmti::sys::{self, jthread};

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

/// What `thread` waits for now, if it waits for a lock someone owns.
fn wait_of(agent: &Agent, jni: Jni, fields: &Fields, thread: jthread) -> Option<Wait> {
    let state = agent.jvmti.get_thread_state(thread).ok()?;
    if state & sys::JVMTI_THREAD_STATE_BLOCKED_ON_MONITOR_ENTER != 0 {
        let monitor = agent.jvmti.get_current_contended_monitor(thread).ok()??;
        let usage = agent.jvmti.get_object_monitor_usage(monitor).ok()?;
        if usage.owner.is_null() {
            return None;
        }
        return Some(Wait { kind: LockKind::Monitor, lock: monitor, owner: usage.owner });
    }
    if state & sys::JVMTI_THREAD_STATE_PARKED != 0 {
        let (ownable_class, owner_field) = fields.ownable?;
        // SAFETY: `park_blocker` is `Thread.parkBlocker`, an object field of a Thread.
        let blocker = unsafe { jni.get_field(thread, fields.park_blocker, JavaType::Object).l };
        if blocker.is_null() || !jni.is_instance_of(blocker, ownable_class) {
            return None;
        }
        // SAFETY: `owner_field` is `exclusiveOwnerThread` of `AbstractOwnableSynchronizer`, which
        // `blocker` is an instance of.
        let owner = unsafe { jni.get_field(blocker, owner_field, JavaType::Object).l };
        if owner.is_null() {
            return None;
        }
        return Some(Wait { kind: LockKind::OwnableSynchronizer, lock: blocker, owner });
    }
    None
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
    let threads: Vec<jthread> = all.iter().copied().filter(|&t| !agent.is_agent_thread(jni, t)).collect();
    let by_tid: HashMap<i64, usize> = threads.iter().enumerate().map(|(i, &t)| (fields.tid(jni, t), i)).collect();

    let waits: Vec<Option<Wait>> = threads.iter().map(|&t| wait_of(agent, jni, &fields, t)).collect();
    let next: Vec<Option<usize>> =
        waits.iter().map(|w| w.and_then(|w| by_tid.get(&fields.tid(jni, w.owner)).copied())).collect();

    let mut cycles = Vec::new();
    let mut resolver = FrameResolver::new(agent.jvmti);
    for cycle in cycles_of(&next) {
        // Still the same waits? (Threads ran during the scan.)
        let stable = cycle.iter().all(|&i| {
            let (Some(before), Some(now)) = (waits[i], wait_of(agent, jni, &fields, threads[i])) else { return false };
            before.kind == now.kind
                && jni.is_same_object(before.lock, now.lock)
                && jni.is_same_object(before.owner, now.owner)
        });
        if !stable {
            continue;
        }
        let list: Vec<jthread> = cycle.iter().map(|&i| threads[i]).collect();
        let stacks = agent.jvmti.get_thread_list_stack_traces(&list, depth)?;
        let stacks: Vec<Vec<_>> = stacks.iter().map(|s| s.frames.to_vec()).collect();
        let mut members = Vec::with_capacity(cycle.len());
        for (k, &i) in cycle.iter().enumerate() {
            let Some(wait) = waits[i] else { continue };
            let thread = threads[i];
            let lock_class = jni.get_object_class(wait.lock)?;
            let lock_class_signature = agent.jvmti.get_class_signature(lock_class)?.0;
            jni.delete_local_ref(lock_class);
            let frames = stacks.get(k).map(|f| f.iter().map(|f| resolver.frame(f.method, f.location)).collect());
            members.push(DeadlockedThread {
                thread: agent.thread_id(jni, thread)?,
                name: agent.jvmti.get_thread_info(thread).map(|i| i.name).unwrap_or_default(),
                frames: frames.unwrap_or_default(),
                kind: wait.kind,
                lock: agent.tagged_object(jni, wait.lock)?,
                lock_class_signature,
                owner: agent.thread_id(jni, wait.owner)?,
            });
        }
        cycles.push(DeadlockCycle { threads: members });
    }
    Ok(DeadlocksReply { cycles })
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
