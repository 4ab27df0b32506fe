//! Monitor deadlock detection with standard JDWP commands only.
//!
//! With every thread suspended: each thread blocked entering a monitor (status `MONITOR`) waits
//! for that monitor's owner, which gives a graph where every thread has at most one outgoing edge;
//! a deadlock is a cycle in it. `java.util.concurrent` locks are not monitors (their owners park),
//! so JDWP cannot see them and they are not reported.
//!
//! Virtual threads (JDK 21+) are not in `AllThreads` (unless the agent runs with
//! `includevirtualthreads=y`, and then only those it has met), and from JDK 24 on one blocked on a
//! monitor is unmounted, so it can be part of a cycle no thread list shows. With
//! `can_get_instance_info` the scan also takes `java.lang.VirtualThread`'s instances from the
//! heap: every virtual thread, whichever agent answers. JDK 25 names no owner for a monitor an
//! unmounted virtual thread holds; the owners then come from each thread's `OwnedMonitors`.

use std::collections::HashMap;
use std::fmt;
use std::hash::Hash;

use jdwp_protocol::{ObjectId, ThreadId, ThreadStatus};

use crate::error::{JdiError, Result};
use crate::mirrors::{ObjectReference, ThreadReference};
use crate::vm::VirtualMachine;

/// A cycle of threads, each waiting for a monitor held by the next (the last by the first).
#[derive(Debug, Clone)]
pub struct Deadlock {
    pub threads: Vec<DeadlockedThread>,
}

/// One thread of a deadlock.
#[derive(Debug, Clone)]
pub struct DeadlockedThread {
    pub thread: ThreadReference,
    pub name: String,
    /// The monitor it is blocked on (held by the next thread of the cycle).
    pub waiting_for: Lock,
    /// The monitors it owns.
    pub holds: Vec<HeldLock>,
    /// Its stack, top frame first.
    pub stack: Vec<FrameInfo>,
}

/// A monitor: the object and its type name.
#[derive(Debug, Clone)]
pub struct Lock {
    pub object: ObjectReference,
    pub type_name: String,
}

/// A monitor a thread owns, and the frame that locked it (`None` when the VM cannot tell).
#[derive(Debug, Clone)]
pub struct HeldLock {
    pub lock: Lock,
    /// Index into [`DeadlockedThread::stack`].
    pub frame: Option<usize>,
}

/// A frame, described for printing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrameInfo {
    pub class_name: String,
    pub method: String,
    /// The source file name, when the class has one.
    pub source: Option<String>,
    /// The line, or -1 when unknown.
    pub line: i32,
    pub native: bool,
}

/// Finds every monitor deadlock: suspends the VM, inspects it, and resumes it (also on failure).
/// Needs the owned-monitor, contended-monitor and monitor-info capabilities.
pub async fn find_deadlocks(vm: &VirtualMachine) -> Result<Vec<Deadlock>> {
    let caps = vm.capabilities().await?;
    if !caps.can_get_owned_monitor_info {
        return Err(JdiError::Unsupported("report the monitors a thread owns"));
    }
    if !caps.can_get_current_contended_monitor {
        return Err(JdiError::Unsupported("report the monitor a thread is blocked on"));
    }
    if !caps.can_get_monitor_info {
        return Err(JdiError::Unsupported("report a monitor's owner"));
    }
    vm.suspend().await?;
    let found = scan(vm, caps.can_get_monitor_frame_info, caps.can_get_instance_info).await;
    let resumed = vm.resume().await;
    let found = found?;
    resumed?;
    Ok(found)
}

/// A thread blocked entering `monitor`, which `owner` holds (`None`: the VM did not say).
struct Wait {
    thread: ThreadReference,
    monitor: ObjectReference,
    owner: Option<ThreadReference>,
}

async fn scan(vm: &VirtualMachine, frame_depths: bool, instances: bool) -> Result<Vec<Deadlock>> {
    let mut threads = vm.all_threads().await?;
    if instances {
        for thread in virtual_threads(vm).await? {
            if !threads.contains(&thread) {
                threads.push(thread);
            }
        }
    }
    let mut queries = tokio::task::JoinSet::new();
    for thread in threads.iter().cloned() {
        queries.spawn(blocked_on(thread));
    }
    let mut waits: HashMap<ThreadId, Wait> = HashMap::new();
    while let Some(joined) = queries.join_next().await {
        let joined = joined.map_err(|e| JdiError::InvalidArgument(format!("a thread query failed: {e}")))?;
        if let Some(wait) = joined? {
            waits.insert(wait.thread.id(), wait);
        }
    }
    // JDK 25's `MonitorInfo` (JVMTI `GetObjectMonitorUsage`) names no owner for a monitor held by
    // an unmounted virtual thread; the owner's own `OwnedMonitors` still lists it.
    if waits.values().any(|w| w.owner.is_none()) {
        let owners = owners_of_monitors(&threads).await?;
        for w in waits.values_mut().filter(|w| w.owner.is_none()) {
            w.owner = owners.get(&w.monitor.id()).cloned();
        }
    }
    let edges: Vec<(ThreadId, ThreadId)> =
        waits.values().filter_map(|w| Some((w.thread.id(), w.owner.as_ref()?.id()))).collect();
    let mut deadlocks = Vec::new();
    for cycle in find_cycles(&edges) {
        let mut threads = Vec::with_capacity(cycle.len());
        for id in cycle {
            let wait = &waits[&id];
            threads.push(describe(wait, frame_depths).await?);
        }
        // Start each cycle at its smallest name, so output does not depend on thread ids.
        if let Some(first) = threads.iter().enumerate().min_by(|a, b| a.1.name.cmp(&b.1.name)).map(|(i, _)| i) {
            threads.rotate_left(first);
        }
        deadlocks.push(Deadlock { threads });
    }
    deadlocks.sort_by(|a, b| a.threads[0].name.cmp(&b.threads[0].name));
    Ok(deadlocks)
}

/// Every `java.lang.VirtualThread` in the heap (none where the class is not loaded: JDK 17, or a
/// program that never made one; `ClassesBySignature` loads nothing).
async fn virtual_threads(vm: &VirtualMachine) -> Result<Vec<ThreadReference>> {
    let mut threads = Vec::new();
    for class in vm.classes_by_signature("Ljava/lang/VirtualThread;").await? {
        for object in class.instances(0).await? {
            threads.push(ThreadReference::new(vm.clone(), ThreadId::from(object.id())));
        }
    }
    Ok(threads)
}

/// Each monitor some thread of `threads` owns, and its owner.
async fn owners_of_monitors(threads: &[ThreadReference]) -> Result<HashMap<ObjectId, ThreadReference>> {
    let mut queries = tokio::task::JoinSet::new();
    for thread in threads.iter().cloned() {
        queries.spawn(async move {
            match thread.owned_monitors().await {
                Ok(owned) => Ok((thread, owned)),
                // A thread that ended or cannot answer owns nothing we can use.
                Err(JdiError::Jdwp { .. }) => Ok((thread, Vec::new())),
                Err(e) => Err(e),
            }
        });
    }
    let mut owners = HashMap::new();
    while let Some(joined) = queries.join_next().await {
        let joined = joined.map_err(|e| JdiError::InvalidArgument(format!("a thread query failed: {e}")))?;
        let (thread, owned) = joined?;
        for monitor in owned {
            owners.insert(monitor.id(), thread.clone());
        }
    }
    Ok(owners)
}

/// Whom `thread` waits for, if it is blocked entering a monitor. A thread that vanished or is
/// not in a state to answer is not waiting for anyone.
async fn blocked_on(thread: ThreadReference) -> Result<Option<Wait>> {
    let query = async {
        let (status, _) = thread.status().await?;
        // `wait()`ing threads also report a contended monitor, but they wait for a notify.
        if status != ThreadStatus::Monitor {
            return Ok(None);
        }
        let Some(monitor) = thread.current_contended_monitor().await? else { return Ok(None) };
        let owner = monitor.monitor_info().await?.owner;
        Ok(Some(Wait { thread: thread.clone(), monitor, owner }))
    };
    match query.await {
        Err(JdiError::Jdwp { .. }) => Ok(None),
        other => other,
    }
}

async fn describe(wait: &Wait, frame_depths: bool) -> Result<DeadlockedThread> {
    let owned: Vec<(ObjectReference, i32)> = if frame_depths {
        wait.thread.owned_monitors_and_frames().await?.into_iter().map(|m| (m.monitor, m.stack_depth)).collect()
    } else {
        wait.thread.owned_monitors().await?.into_iter().map(|m| (m, -1)).collect()
    };
    let mut holds = Vec::new();
    for (object, depth) in owned {
        holds.push(HeldLock { lock: lock(object).await?, frame: usize::try_from(depth).ok() });
    }
    let mut stack = Vec::new();
    for frame in wait.thread.frames().await? {
        stack.push(frame_info(wait.thread.vm(), frame.location()).await?);
    }
    Ok(DeadlockedThread {
        thread: wait.thread.clone(),
        name: wait.thread.name().await?,
        waiting_for: lock(wait.monitor.clone()).await?,
        holds,
        stack,
    })
}

async fn lock(object: ObjectReference) -> Result<Lock> {
    let type_name = object.reference_type().await?.name();
    Ok(Lock { object, type_name })
}

/// Describes a code location: class, method, source file and line.
pub async fn frame_info(vm: &VirtualMachine, location: jdwp_protocol::Location) -> Result<FrameInfo> {
    let loc = vm.resolve_location(location).await?;
    // Classes compiled without debug information have no source name or line table.
    let source = loc.declaring_type.source_name().await.ok();
    let line = loc.line_number().await.unwrap_or(-1);
    Ok(FrameInfo {
        class_name: loc.declaring_type.name(),
        method: loc.method.name().to_string(),
        source,
        line,
        native: loc.method.is_native(),
    })
}

/// The cycles of a graph where each node has at most one outgoing edge (`(from, to)`), each
/// listed from the node reached first, in edge order. Nodes leading into a cycle are not in it.
pub fn find_cycles<K: Copy + Eq + Hash>(edges: &[(K, K)]) -> Vec<Vec<K>> {
    let next: HashMap<K, K> = edges.iter().copied().collect();
    // The walk that first reached each node; a walk meeting itself closed a cycle.
    let mut seen_by: HashMap<K, usize> = HashMap::new();
    let mut cycles = Vec::new();
    for (walk, &(start, _)) in edges.iter().enumerate() {
        let mut path = Vec::new();
        let mut node = start;
        loop {
            if let Some(&by) = seen_by.get(&node) {
                if by == walk {
                    let from = path.iter().position(|&n| n == node).unwrap_or(0);
                    cycles.push(path[from..].to_vec());
                }
                break;
            }
            seen_by.insert(node, walk);
            path.push(node);
            match next.get(&node) {
                Some(&to) => node = to,
                None => break,
            }
        }
    }
    cycles
}

impl fmt::Display for Lock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "<{:#x}> (a {})", self.object.id().0, self.type_name)
    }
}

impl fmt::Display for FrameInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}(", self.class_name, self.method)?;
        match (&self.source, self.line) {
            _ if self.native => write!(f, "Native Method)"),
            (Some(source), line) if line >= 0 => write!(f, "{source}:{line})"),
            (Some(source), _) => write!(f, "{source})"),
            (None, _) => write!(f, "Unknown Source)"),
        }
    }
}

impl fmt::Display for Deadlock {
    /// A jstack-like report: each thread's stack with the lock it waits for (and who holds it)
    /// under its top frame and the locks it holds under the frames that took them.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.threads.len();
        writeln!(f, "Found a Java-level deadlock of {n} threads:")?;
        for (i, t) in self.threads.iter().enumerate() {
            let holder = &self.threads[(i + 1) % n];
            writeln!(f)?;
            writeln!(f, "\"{}\":", t.name)?;
            let held_at = |frame: Option<usize>| t.holds.iter().filter(move |h| h.frame == frame);
            for (depth, frame) in t.stack.iter().enumerate() {
                writeln!(f, "\tat {frame}")?;
                if depth == 0 {
                    writeln!(f, "\t- waiting to lock {} held by \"{}\"", t.waiting_for, holder.name)?;
                }
                for held in held_at(Some(depth)) {
                    writeln!(f, "\t- locked {}", held.lock)?;
                }
            }
            let known = |h: &&HeldLock| h.frame.is_some_and(|d| d < t.stack.len());
            for held in t.holds.iter().filter(|h| !known(h)) {
                writeln!(f, "\t- holds {}", held.lock)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::find_cycles;

    #[test]
    fn cycles_in_a_wait_for_graph() {
        assert!(find_cycles::<u32>(&[]).is_empty());
        // A chain is no deadlock.
        assert!(find_cycles(&[(1, 2), (2, 3)]).is_empty());
        assert_eq!(find_cycles(&[(1, 2), (2, 3), (3, 1)]), vec![vec![1, 2, 3]]);
        // A thread waiting on a cycle is not part of it; two separate cycles are both found.
        assert_eq!(find_cycles(&[(9, 2), (2, 3), (3, 2), (5, 6), (6, 5), (7, 5)]), vec![vec![2, 3], vec![5, 6]]);
        // Walks that end in a node seen earlier by another walk find nothing new.
        assert_eq!(find_cycles(&[(1, 1), (2, 1)]), vec![vec![1]]);
    }
}
