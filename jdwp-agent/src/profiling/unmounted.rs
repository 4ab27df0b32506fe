//! Owners of contended monitors that hold them unmounted (JDK 24+ lets a virtual thread block,
//! wait or sleep inside `synchronized` without pinning its carrier, JEP 491). Neither
//! `GetObjectMonitorUsage` (platform owners only from JDK 23 on) nor the look among mounted
//! virtual threads names such an owner, and a walk of every virtual thread is too slow for an
//! application thread's contended-enter callback. So that callback queues the monitor
//! ([`OwnerLooks::queue`]) and goes on blocking; the profiler thread takes every monitor queued by
//! then in one look (`find_owners`: the heap walk for virtual threads, all alive ones suspended
//! in one call, `GetOwnedMonitorInfo` and a stack each, resumed in one call) and files the owners
//! it found ([`OwnerLooks::file`]), which the contended-entered callback picks up
//! ([`OwnerLooks::pick`]). Owners are then named for contentions that outlast a look, with the
//! owner's stack at the look. Looks are spaced by their own cost ([`LOOK_SPACING`] times the last
//! one's duration), so that a program of many contending virtual threads is not walked all the
//! time. The decisions are plain data here, unit-tested; `find_owners` is the JVMTI shell.

use std::collections::HashMap;
use std::time::Instant;

use jni_sys::jobject;

use super::alloc::RawStack;
use crate::agent::Agent;
use crate::jni::Jni;
use crate::jvmti::sys::jthread;

/// Names one contention waiting for (or answered by) a look.
pub type Ticket = u64;

/// Contentions queued at most: beyond it, contentions go without an owner until a look drains the
/// queue (each queued one pins its monitor with a global reference).
pub const QUEUE_MAX: usize = 4096;

/// The next look comes no sooner than this many times the last one's duration after it ended.
pub const LOOK_SPACING: u32 = 10;

enum Slot<O> {
    Queued,
    Looking,
    Found(O),
}

/// What [`OwnerLooks::pick`] hands the contended-entered callback.
#[derive(Debug, PartialEq)]
pub enum Picked<M, O> {
    /// A look found the owner.
    Owner(O),
    /// No look took the monitor yet: the caller releases it.
    Unlooked(M),
    /// A look is under way (its owner, if any, is handed back by [`OwnerLooks::file`]), or found
    /// none, or the queue was cleared.
    Nothing,
}

/// The queue of contentions waiting for a look, the owners looks found, and when the next look
/// may start. `M` is a monitor (a JNI global reference in the agent), `O` an owner.
pub struct OwnerLooks<M, O> {
    queued: Vec<(Ticket, M)>,
    slots: HashMap<Ticket, Slot<O>>,
    next_ticket: Ticket,
    /// No look before this (set by the last look's cost).
    not_before: Option<Instant>,
}

impl<M, O> Default for OwnerLooks<M, O> {
    fn default() -> Self {
        OwnerLooks { queued: Vec::new(), slots: HashMap::new(), next_ticket: 1, not_before: None }
    }
}

impl<M, O> OwnerLooks<M, O> {
    /// Queues a contention on `monitor` for the next look; hands the monitor back when the queue
    /// is full.
    pub fn queue(&mut self, monitor: M) -> Result<Ticket, M> {
        if self.queued.len() >= QUEUE_MAX {
            return Err(monitor);
        }
        let ticket = self.next_ticket;
        self.next_ticket += 1;
        self.queued.push((ticket, monitor));
        self.slots.insert(ticket, Slot::Queued);
        Ok(ticket)
    }

    /// When the next look may start: `None` when nothing is queued, else no sooner than `now`.
    pub fn next_look(&self, now: Instant) -> Option<Instant> {
        if self.queued.is_empty() {
            return None;
        }
        Some(self.not_before.map_or(now, |t| t.max(now)))
    }

    /// Everything queued, for a look starting at `now`; nothing when none is queued or it is too
    /// early.
    pub fn take(&mut self, now: Instant) -> Vec<(Ticket, M)> {
        if self.next_look(now).is_none_or(|t| t > now) {
            return Vec::new();
        }
        let batch = std::mem::take(&mut self.queued);
        for (ticket, _) in &batch {
            if let Some(slot) = self.slots.get_mut(ticket) {
                *slot = Slot::Looking;
            }
        }
        batch
    }

    /// Files what a look that ran from `started` to `ended` found for the tickets it took, and
    /// spaces the next look by its cost. Returns the owners no contention waits for any more
    /// (it ended during the look, or the queue was cleared), for the caller to release.
    pub fn file(&mut self, found: Vec<(Ticket, Option<O>)>, started: Instant, ended: Instant) -> Vec<O> {
        let cost = ended.saturating_duration_since(started);
        self.not_before = Some(ended + cost.saturating_mul(LOOK_SPACING));
        let mut unclaimed = Vec::new();
        for (ticket, owner) in found {
            match (self.slots.get_mut(&ticket), owner) {
                (Some(slot @ Slot::Looking), Some(owner)) => *slot = Slot::Found(owner),
                (Some(Slot::Looking), None) => {
                    self.slots.remove(&ticket);
                }
                (_, Some(owner)) => unclaimed.push(owner),
                (_, None) => {}
            }
        }
        unclaimed
    }

    /// The contention `ticket` ended: what the looks made of it (forgotten from here on).
    pub fn pick(&mut self, ticket: Ticket) -> Picked<M, O> {
        match self.slots.remove(&ticket) {
            Some(Slot::Found(owner)) => Picked::Owner(owner),
            Some(Slot::Queued) => match self.queued.iter().position(|(t, _)| *t == ticket) {
                Some(i) => Picked::Unlooked(self.queued.remove(i).1),
                None => Picked::Nothing,
            },
            Some(Slot::Looking) | None => Picked::Nothing,
        }
    }

    /// Forgets every contention (recording stopped): the monitors and owners held, to release.
    /// A look under way files into nothing (its owners come back from [`OwnerLooks::file`]).
    pub fn clear(&mut self) -> (Vec<M>, Vec<O>) {
        let monitors = std::mem::take(&mut self.queued).into_iter().map(|(_, m)| m).collect();
        let owners = std::mem::take(&mut self.slots)
            .into_values()
            .filter_map(|s| match s {
                Slot::Found(o) => Some(o),
                _ => None,
            })
            .collect();
        (monitors, owners)
    }
}

/// For each monitor, the index in `owned` (each thread's owned monitors) of the thread that owns
/// it, if one does.
pub fn owners_of<M>(monitors: &[M], owned: &[Vec<M>], same: impl Fn(&M, &M) -> bool) -> Vec<Option<usize>> {
    monitors.iter().map(|m| owned.iter().position(|list| list.iter().any(|o| same(o, m)))).collect()
}

/// An owner found by a look: its thread (a JNI weak global reference, as an address), name and
/// stack at the look.
pub type FoundOwner = (usize, String, RawStack);

/// Looks for the owners of `monitors` among every alive virtual thread, on an agent thread (the
/// profiler's, which runs no Java code: `java.lang.VirtualThread` is the one the contended-enter
/// callback's look among mounted virtual threads found): one heap walk, one `SuspendThreadList` of those not suspended yet, per thread one
/// `GetOwnedMonitorInfo` (and a stack of `depth` frames for an owner), one `ResumeThreadList` of
/// exactly those it suspended. The debugger's suspensions are kept still meanwhile
/// (`agent.threads` held), so none is undone by the resume. All `None` when the look fails.
pub(crate) fn find_owners(agent: &Agent, jni: Jni, monitors: &[jobject], depth: i32) -> Vec<Option<FoundOwner>> {
    let none = || monitors.iter().map(|_| None).collect();
    let Ok(_frame) = jni.push_local_frame(64) else { return none() };
    let threads = match super::virtuals::virtual_threads(agent, jni, true, |_| true) {
        Ok(threads) => threads,
        Err(e) => {
            tracing::debug!(?e, "monitor owners: the walk for virtual threads failed");
            return none();
        }
    };
    if threads.is_empty() {
        return none();
    }
    let look = || -> Vec<Option<FoundOwner>> {
        let owned: Vec<Vec<jobject>> = threads
            .iter()
            .map(|&t| agent.jvmti.get_owned_monitor_info(t).map(|list| list.to_vec()).unwrap_or_default())
            .collect();
        let owner_index = owners_of(monitors, &owned, |&a, &b| jni.is_same_object(a, b));
        let mut described: HashMap<usize, (String, RawStack)> = HashMap::new();
        owner_index
            .into_iter()
            .map(|i| {
                let i = i?;
                let thread: jthread = threads[i];
                let (name, stack) = described.entry(i).or_insert_with(|| describe(agent, thread, depth)).clone();
                let weak = jni.new_weak_global_ref(thread).map(|w| w as usize).ok().filter(|&w| w != 0)?;
                Some((weak, name, stack))
            })
            .collect()
    };
    let control = agent.threads.lock();
    let found = super::virtuals::while_suspended(agent, &threads, look);
    drop(control);
    found.unwrap_or_else(|e| {
        tracing::debug!(?e, "monitor owners: suspending the virtual threads failed");
        none()
    })
}

/// A thread's name and stack (the agent's environment, which answers for virtual threads).
fn describe(agent: &Agent, thread: jthread, depth: i32) -> (String, RawStack) {
    let name = agent.jvmti.get_thread_info(thread).map(|i| i.name).unwrap_or_default();
    let stack = match agent.jvmti.get_stack_trace(thread, 0, depth) {
        Ok(frames) => frames.iter().map(|f| (f.method as usize, f.location)).collect(),
        Err(_) => Vec::new(),
    };
    (name, stack)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    type Looks = OwnerLooks<&'static str, &'static str>;
    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn a_look_takes_every_queued_monitor_and_files_owners_for_their_entered_callbacks() {
        let t0 = Instant::now();
        let mut looks = Looks::default();
        assert_eq!(looks.next_look(t0), None, "nothing queued, no look");
        assert!(looks.take(t0).is_empty());
        let a = looks.queue("lock-a").unwrap();
        let b = looks.queue("lock-b").unwrap();
        let c = looks.queue("lock-c").unwrap();
        assert_eq!(looks.next_look(t0), Some(t0), "the first look may start at once");
        assert_eq!(looks.take(t0), vec![(a, "lock-a"), (b, "lock-b"), (c, "lock-c")]);
        assert_eq!(looks.next_look(t0), None, "all taken");
        // c's contention ends during the look: nothing yet.
        assert_eq!(looks.pick(c), Picked::Nothing);
        let unclaimed = looks.file(vec![(a, Some("vt-1")), (b, None), (c, Some("vt-2"))], t0, t0 + 2 * MS);
        assert_eq!(unclaimed, vec!["vt-2"], "c's owner has nobody to go to: released");
        assert_eq!(looks.pick(a), Picked::Owner("vt-1"));
        assert_eq!(looks.pick(a), Picked::Nothing, "picked once");
        assert_eq!(looks.pick(b), Picked::Nothing, "no owner found");
    }

    #[test]
    fn a_contention_that_ends_before_any_look_hands_its_monitor_back() {
        let t0 = Instant::now();
        let mut looks = Looks::default();
        let a = looks.queue("lock-a").unwrap();
        let b = looks.queue("lock-b").unwrap();
        assert_eq!(looks.pick(a), Picked::Unlooked("lock-a"));
        assert_eq!(looks.take(t0), vec![(b, "lock-b")], "the ended one is not looked for");
    }

    #[test]
    fn looks_are_spaced_by_ten_times_their_cost() {
        let t0 = Instant::now();
        let mut looks = Looks::default();
        let a = looks.queue("lock-a").unwrap();
        looks.take(t0);
        let ended = t0 + 3 * MS;
        looks.file(vec![(a, None)], t0, ended);
        let b = looks.queue("lock-b").unwrap();
        let due = ended + 30 * MS;
        assert_eq!(looks.next_look(ended), Some(due));
        assert!(looks.take(ended + 29 * MS).is_empty(), "too early");
        let c = looks.queue("lock-c").unwrap();
        assert_eq!(looks.take(due), vec![(b, "lock-b"), (c, "lock-c")], "one look for both");
        // A cheaper look makes the next one sooner.
        looks.file(vec![(b, None), (c, None)], due, due + MS);
        looks.queue("lock-d").unwrap();
        assert_eq!(looks.next_look(due + MS), Some(due + 11 * MS));
        // Asked later than it was due: now.
        assert_eq!(looks.next_look(due + 50 * MS), Some(due + 50 * MS));
    }

    #[test]
    fn the_queue_is_bounded() {
        let mut looks = Looks::default();
        for _ in 0..QUEUE_MAX {
            looks.queue("lock").unwrap();
        }
        assert_eq!(looks.queue("one-too-many"), Err("one-too-many"));
    }

    #[test]
    fn clearing_releases_queued_monitors_and_unclaimed_owners_and_a_look_under_way_files_into_nothing() {
        let t0 = Instant::now();
        let mut looks = Looks::default();
        let a = looks.queue("lock-a").unwrap();
        looks.take(t0);
        looks.file(vec![(a, Some("vt-1"))], t0, t0 + MS);
        let b = looks.queue("lock-b").unwrap();
        let later = t0 + 100 * MS;
        assert_eq!(looks.take(later), vec![(b, "lock-b")]);
        let c = looks.queue("lock-c").unwrap();
        assert_eq!(looks.clear(), (vec!["lock-c"], vec!["vt-1"]));
        assert_eq!(looks.file(vec![(b, Some("vt-2"))], later, later + MS), vec!["vt-2"]);
        for t in [a, b, c] {
            assert_eq!(looks.pick(t), Picked::Nothing);
        }
        // Tickets are never reused.
        assert!(looks.queue("lock-d").unwrap() > c);
    }

    #[test]
    fn each_monitor_goes_to_the_thread_that_owns_it() {
        let owned = vec![vec![], vec![3, 1], vec![2]];
        assert_eq!(owners_of(&[1, 2, 4, 3], &owned, |a, b| a == b), vec![Some(1), Some(2), None, Some(1)]);
        assert_eq!(owners_of(&[1], &[], |a: &i32, b| a == b), vec![None]);
    }
}
