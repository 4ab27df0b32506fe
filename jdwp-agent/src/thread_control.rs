//! Thread control: the debugger's suspend counts, kept separate from how threads are suspended.
//!
//! JDWP counts suspensions: a thread suspended n times (by `ThreadReference.Suspend`, by
//! `VirtualMachine.Suspend`, or by events with a suspending policy) runs again only after n resumes.
//! JVMTI does not count, so the agent does: a thread is suspended in the VM exactly when its count is
//! above zero. `VirtualMachine.Resume` takes one count off every thread that has one. Threads that
//! start while the VM is suspended are suspended as many times as the VM is. When a debugger leaves,
//! every count is cleared and every thread runs.
//!
//! How a thread is actually suspended is behind [`SuspendOps`], so these rules are unit-tested with a
//! fake and used with JVMTI in the agent.
//!
//! Virtual threads (JVMTI 21+ with `can_support_virtual_threads`) are threads with IDs like any
//! other, suspended and resumed one by one with the same JVMTI calls, mounted or not. But JVMTI
//! cannot list them, so a VM-wide suspension also calls `SuspendAllVirtualThreads` (and its resume
//! `ResumeAllVirtualThreads`), which reaches every virtual thread, including ones the agent has
//! never seen and ones that start meanwhile. A virtual thread with no count of its own therefore
//! has the VM-wide count; only virtual threads whose count differs (suspended or resumed alone,
//! an event's thread) are kept, and they are the exception lists of those calls, so every
//! per-thread count stays exact. On JDK 17 nothing of this happens: every thread is a platform
//! thread.
//!
//! [`Threads`] shares the counts between threads and lets an application thread wait until the
//! debugger has resumed a thread (see [`Threads::wait_while_suspended`], used by
//! [`crate::app_resume`]).

use std::ops::{Deref, DerefMut};
use std::sync::{Condvar, Mutex, MutexGuard};

use jdwp_protocol::{ErrorCode, ThreadId};

use crate::id_hash::{IdMap, IdSet};

/// How to really suspend and resume threads (JVMTI in the agent, a fake in tests).
pub trait SuspendOps {
    /// Suspends these threads (none of which is suspended by us yet).
    fn suspend(&self, threads: &[ThreadId]) -> Vec<Result<(), ErrorCode>>;
    /// Resumes these threads (each suspended by us).
    fn resume(&self, threads: &[ThreadId]) -> Vec<Result<(), ErrorCode>>;
    /// The live application threads (agent threads excluded).
    fn live_threads(&self) -> Result<Vec<ThreadId>, ErrorCode>;
    /// Whether `thread` is a virtual thread the VM can suspend (false where the runtime has no
    /// virtual threads or the agent lacks the capability).
    fn is_virtual(&self, _thread: ThreadId) -> bool {
        false
    }
    /// Whether the VM suspends virtual threads (JVMTI 21+ with `can_support_virtual_threads`):
    /// then [`SuspendOps::suspend_all_virtual`] and [`SuspendOps::resume_all_virtual`] work.
    fn supports_virtual_threads(&self) -> bool {
        false
    }
    /// Suspends every virtual thread except these (virtual threads only), mounted or not, and
    /// every one that starts until the matching resume.
    fn suspend_all_virtual(&self, _except: &[ThreadId]) -> Result<(), ErrorCode> {
        Ok(())
    }
    /// Resumes every suspended virtual thread except these (virtual threads only).
    fn resume_all_virtual(&self, _except: &[ThreadId]) -> Result<(), ErrorCode> {
        Ok(())
    }
    /// Every thread but these ran (or may have run): their frames are stale. Called when
    /// `ResumeAllVirtualThreads` ran virtual threads the agent cannot list.
    fn frames_stale_except(&self, _keep: &[ThreadId]) {}
    /// The whole VM went from running to suspended (the first outstanding VM-wide suspension).
    fn vm_suspended(&self) {}
    /// The last VM-wide suspension was undone.
    fn vm_resumed(&self) {}
}

/// The first error of a batch of suspends or resumes; a thread that died meanwhile is gone either
/// way, so that is no error.
fn first_error(results: Vec<Result<(), ErrorCode>>) -> Result<(), ErrorCode> {
    results.into_iter().find_map(|r| r.err().filter(|e| *e != ErrorCode::THREAD_NOT_ALIVE)).map_or(Ok(()), Err)
}

/// Suspend counts of every thread the debugger has suspended, and of the VM as a whole.
#[derive(Debug, Default)]
pub struct ThreadControl {
    /// Platform threads' counts (every thread's where the VM has no virtual threads).
    counts: IdMap<ThreadId, u32>,
    /// Virtual threads whose count is not the VM-wide one (see the module doc), and the virtual
    /// threads suspending themselves or suspended by someone else, whatever their count.
    vcounts: IdMap<ThreadId, u32>,
    /// The outstanding VM-wide suspension includes every virtual thread (`SuspendAllVirtualThreads`).
    vm_virtual: bool,
    /// How many `VirtualMachine.Suspend`s (and suspend-all events) are outstanding.
    vm_count: u32,
    /// Threads counted as suspended that were already suspended by someone else when we asked
    /// (the application, with `Thread.suspend`): never resumed by us, as the JDK's agent does,
    /// so the application's own resume still decides.
    foreign: IdSet<ThreadId>,
    /// Some count went to zero since [`ThreadControl::take_lowered`] last looked: whoever waits in
    /// [`Threads::wait_while_suspended`] must look again.
    lowered: bool,
    /// Event threads suspending themselves for an event the helper has not delivered yet (see
    /// [`ThreadControl::begin_self_suspend`]): their suspension in the VM belongs to the event until
    /// then, so the debugger's suspends and resumes only count for them.
    self_suspending: IdSet<ThreadId>,
    /// Internal IDs given to threads that a VM-wide suspension counted before the debugger had
    /// heard of them, and the IDs the debugger got for them since (see [`ThreadControl::rename`]).
    renamed: IdMap<ThreadId, ThreadId>,
}

impl ThreadControl {
    /// A thread counted under an internal ID (`from`: a VM-wide suspension numbered it without
    /// the debugger hearing of it, as the JDK's agent hands out no ID there) got its ID for the
    /// debugger (`to`): its counts go with it.
    pub fn rename(&mut self, from: ThreadId, to: ThreadId) {
        if let Some(count) = self.counts.remove(&from) {
            self.counts.insert(to, count);
        }
        if let Some(count) = self.vcounts.remove(&from) {
            self.vcounts.insert(to, count);
        }
        if self.foreign.remove(&from) {
            self.foreign.insert(to);
        }
        if self.self_suspending.remove(&from) {
            self.self_suspending.insert(to);
        }
        self.renamed.insert(from, to);
    }

    /// The ID a thread is counted under now (`thread` itself unless it was renamed).
    pub fn current_id(&self, thread: ThreadId) -> ThreadId {
        self.renamed.get(&thread).copied().unwrap_or(thread)
    }

    /// The debugger-visible suspend count of a thread counted on its own: a platform thread, or a
    /// virtual thread whose count is not the VM-wide one. See [`ThreadControl::suspend_count_of`].
    pub fn suspend_count(&self, thread: ThreadId) -> u32 {
        self.counts.get(&thread).or_else(|| self.vcounts.get(&thread)).copied().unwrap_or(0)
    }

    /// The debugger-visible suspend count of any thread: a virtual thread with no count of its
    /// own has the VM-wide one.
    pub fn suspend_count_of(&self, thread: ThreadId, is_virtual: bool) -> u32 {
        match self.counts.get(&thread).or_else(|| self.vcounts.get(&thread)) {
            Some(count) => *count,
            None if is_virtual => self.implicit_virtual_count(),
            None => 0,
        }
    }

    /// The count of every virtual thread that has none of its own.
    fn implicit_virtual_count(&self) -> u32 {
        if self.vm_virtual { self.vm_count } else { 0 }
    }

    /// Whether a thread's count is the virtual threads' count of its own (kept in `vcounts`).
    fn counts_as_virtual(&self, ops: &dyn SuspendOps, thread: ThreadId) -> bool {
        self.vcounts.contains_key(&thread) || (!self.counts.contains_key(&thread) && ops.is_virtual(thread))
    }

    /// Sets a virtual thread's own count, or drops it where it is the VM-wide one (and the VM
    /// state is what that count says: not foreign, not suspending itself).
    fn set_virtual_count(&mut self, thread: ThreadId, count: u32) {
        if count == self.implicit_virtual_count()
            && !self.foreign.contains(&thread)
            && !self.self_suspending.contains(&thread)
        {
            self.vcounts.remove(&thread);
        } else {
            self.vcounts.insert(thread, count);
        }
    }

    /// Drops every virtual thread's own count that is the VM-wide one.
    fn normalize_virtual_counts(&mut self) {
        let implicit = self.implicit_virtual_count();
        let (foreign, selfs) = (&self.foreign, &self.self_suspending);
        self.vcounts.retain(|t, c| *c != implicit || foreign.contains(t) || selfs.contains(t));
    }

    /// `ThreadReference.Suspend` of a virtual thread: JVMTI suspends it mounted or not.
    fn suspend_virtual(&mut self, ops: &dyn SuspendOps, thread: ThreadId) -> Result<(), ErrorCode> {
        let count = self.suspend_count_of(thread, true);
        if count == 0 && !self.self_suspending.contains(&thread) {
            match ops.suspend(&[thread]).pop().unwrap_or(Ok(())) {
                Ok(()) | Err(ErrorCode::THREAD_NOT_ALIVE) => {}
                Err(ErrorCode::THREAD_SUSPENDED) => {
                    self.foreign.insert(thread);
                }
                Err(e) => return Err(e),
            }
        }
        self.set_virtual_count(thread, count + 1);
        Ok(())
    }

    /// `ThreadReference.Resume` of a virtual thread.
    fn resume_virtual(&mut self, ops: &dyn SuspendOps, thread: ThreadId) -> Result<(), ErrorCode> {
        let count = self.suspend_count_of(thread, true);
        if count == 0 {
            return Ok(());
        }
        let mut result = Ok(());
        if count == 1 {
            self.lowered = true;
            if !self.foreign.remove(&thread) && !self.self_suspending.contains(&thread) {
                result = first_error(ops.resume(&[thread]));
            }
        }
        self.set_virtual_count(thread, count - 1);
        result
    }

    /// How many times the whole VM is suspended.
    pub fn vm_suspend_count(&self) -> u32 {
        self.vm_count
    }

    /// `ThreadReference.Suspend` (or an event suspending its thread).
    pub fn suspend_thread(&mut self, ops: &dyn SuspendOps, thread: ThreadId) -> Result<(), ErrorCode> {
        if self.counts_as_virtual(ops, thread) {
            return self.suspend_virtual(ops, thread);
        }
        self.suspend_threads(ops, &[thread])
    }

    fn suspend_threads(&mut self, ops: &dyn SuspendOps, threads: &[ThreadId]) -> Result<(), ErrorCode> {
        // Only threads going from 0 to 1 need the VM; the others just count. One batched call keeps
        // suspending many threads cheap. (One pass: this runs over every thread of the VM at each
        // suspend-all event.)
        let mut fresh: Vec<ThreadId> = Vec::with_capacity(threads.len());
        for thread in threads {
            match self.counts.get_mut(thread) {
                Some(count) => *count += 1,
                None if self.self_suspending.contains(thread) => {
                    self.counts.insert(*thread, 1);
                }
                None => fresh.push(*thread),
            }
        }
        let results = if fresh.is_empty() { Vec::new() } else { ops.suspend(&fresh) };
        let mut first_error = None;
        for (thread, result) in fresh.iter().zip(results) {
            match result {
                Ok(()) => {
                    self.counts.insert(*thread, 1);
                }
                // A thread that has ended (or not started) cannot run anyway: the suspension is
                // counted, not refused, as the JDK's agent does, so resumes stay balanced.
                Err(ErrorCode::THREAD_NOT_ALIVE) => {
                    self.counts.insert(*thread, 1);
                }
                // Suspended already, not by us: it counts (an event must still go out, and
                // resumes stay balanced), but it is not ours to resume.
                Err(ErrorCode::THREAD_SUSPENDED) => {
                    self.counts.insert(*thread, 1);
                    self.foreign.insert(*thread);
                }
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    /// Whether `ThreadReference.Resume` of `thread` should answer before the VM lets the thread
    /// run: it will let it run (its last count goes, and its suspension in the VM is the
    /// debugger's to lift), and other threads are stopped for the debugger or on their way to it,
    /// so that it has more to do than wait for this thread's next event. (Alone, the thread would
    /// only start later by the time the answer takes to write.)
    pub fn answers_resume_early(&self, thread: ThreadId) -> bool {
        let runs = self.suspend_count(thread) == 1
            && !self.foreign.contains(&thread)
            && !self.self_suspending.contains(&thread);
        let others = self.counts.keys().any(|t| *t != thread) || self.self_suspending.iter().any(|t| *t != thread);
        runs && others
    }

    /// `ThreadReference.Resume`: takes one count off; resuming an unsuspended thread does nothing.
    pub fn resume_thread(&mut self, ops: &dyn SuspendOps, thread: ThreadId) -> Result<(), ErrorCode> {
        if self.counts_as_virtual(ops, thread) {
            return self.resume_virtual(ops, thread);
        }
        self.resume_threads(ops, &[thread])
    }

    fn resume_threads(&mut self, ops: &dyn SuspendOps, threads: &[ThreadId]) -> Result<(), ErrorCode> {
        let mut to_resume = Vec::new();
        for thread in threads {
            if let Some(count) = self.counts.get_mut(thread) {
                *count -= 1;
                if *count == 0 {
                    self.counts.remove(thread);
                    self.lowered = true;
                    if !self.foreign.remove(thread) && !self.self_suspending.contains(thread) {
                        to_resume.push(*thread);
                    }
                }
            }
        }
        if to_resume.is_empty() {
            return Ok(());
        }
        first_error(ops.resume(&to_resume))
    }

    /// `VirtualMachine.Suspend` (or a suspend-all event): one more count on every live thread.
    pub fn suspend_all(&mut self, ops: &dyn SuspendOps) -> Result<(), ErrorCode> {
        let threads = ops.live_threads()?;
        self.vm_count += 1;
        let first = self.vm_count == 1;
        if first {
            ops.vm_suspended();
        }
        let platform = self.suspend_threads(ops, &threads);
        let virtual_threads = if first && ops.supports_virtual_threads() {
            self.vm_virtual = true;
            self.suspend_all_virtual(ops, 0)
        } else if self.vm_virtual {
            self.suspend_all_virtual(ops, self.vm_count - 1)
        } else {
            Ok(())
        };
        platform.and(virtual_threads)
    }

    /// The virtual threads' part of a VM-wide suspension: every virtual thread one count more.
    /// `before`: the VM-wide virtual count before it. Those already suspended in the VM, those
    /// suspending themselves and those suspended by someone else are the exceptions.
    fn suspend_all_virtual(&mut self, ops: &dyn SuspendOps, before: u32) -> Result<(), ErrorCode> {
        // Event threads suspending themselves that have no count of their own get one: they are
        // the exceptions (their own suspension is their event's).
        let selfs: Vec<ThreadId> = self
            .self_suspending
            .iter()
            .copied()
            .filter(|t| !self.counts.contains_key(t) && !self.vcounts.contains_key(t) && ops.is_virtual(*t))
            .collect();
        for t in selfs {
            self.vcounts.insert(t, before);
        }
        let mut except = Vec::with_capacity(self.vcounts.len());
        let mut any_running = before == 0;
        for (t, count) in self.vcounts.iter_mut() {
            if *count > 0 || self.self_suspending.contains(t) || self.foreign.contains(t) {
                except.push(*t);
            } else {
                any_running = true;
            }
            *count += 1;
        }
        let result = if any_running { ops.suspend_all_virtual(&except) } else { Ok(()) };
        self.normalize_virtual_counts();
        result
    }

    /// `VirtualMachine.Resume`: one count off every thread that has one.
    ///
    /// A thread the VM will not resume (one found not suspended: it ended, or something let it
    /// go behind the debugger's back) fails no VM-wide resume: its count is off all the same and
    /// the others run, as with the JDK's agent, which ignores the per-thread results of its
    /// resume. (A debugger cannot act on such an error anyway: JDI's `VirtualMachine.resume`
    /// throws it as an internal error, after the fact.)
    pub fn resume_all(&mut self, ops: &dyn SuspendOps) {
        let before = self.vm_count;
        if before == 1 {
            ops.vm_resumed();
        }
        self.vm_count = before.saturating_sub(1);
        let threads: Vec<ThreadId> = self.counts.keys().copied().collect();
        if let Err(e) = self.resume_threads(ops, &threads) {
            tracing::debug!(%e, "a thread counted suspended was not resumed by the VM");
        }
        if let Err(e) = self.resume_all_virtual(ops, before) {
            tracing::debug!(%e, "a virtual thread counted suspended was not resumed by the VM");
        }
    }

    /// The virtual threads' part of `VirtualMachine.Resume`: one count off each that has one.
    /// Where the VM-wide count goes to zero, one `ResumeAllVirtualThreads` runs every virtual
    /// thread but those that keep a count (and those not ours to resume).
    fn resume_all_virtual(&mut self, ops: &dyn SuspendOps, before: u32) -> Result<(), ErrorCode> {
        let all = self.vm_virtual && before == 1;
        if !all && self.vcounts.is_empty() {
            return Ok(());
        }
        let mut except = Vec::new();
        let mut alone = Vec::new();
        for (t, count) in self.vcounts.iter_mut() {
            let stays = *count != 1 || self.foreign.contains(t) || self.self_suspending.contains(t);
            if *count == 1 {
                self.lowered = true;
                self.foreign.remove(t);
            }
            *count = count.saturating_sub(1);
            if stays {
                except.push(*t);
            } else if !all {
                alone.push(*t);
            }
        }
        let result = if all {
            self.vm_virtual = false;
            self.lowered = true;
            let still = except.iter().filter(|t| self.vcounts.get(t).is_some_and(|c| *c > 0));
            let keep: Vec<ThreadId> = still.chain(self.counts.keys()).copied().collect();
            ops.frames_stale_except(&keep);
            ops.resume_all_virtual(&except)
        } else if alone.is_empty() {
            Ok(())
        } else {
            first_error(ops.resume(&alone))
        };
        if self.vm_count == 0 {
            self.vm_virtual = false;
        }
        self.normalize_virtual_counts();
        result
    }

    /// A thread started: if the VM is suspended, so is the newcomer, as many times.
    /// (A virtual thread needs nothing: the VM-wide suspension of virtual threads covers it, and
    /// its count is the VM-wide one.)
    pub fn thread_started(&mut self, ops: &dyn SuspendOps, thread: ThreadId) -> Result<(), ErrorCode> {
        if self.vm_count == 0 || (self.vm_virtual && ops.is_virtual(thread)) {
            return Ok(());
        }
        self.suspend_thread(ops, thread)?;
        if let Some(count) = self.counts.get_mut(&thread) {
            *count = self.vm_count;
        }
        Ok(())
    }

    /// A thread ended: forget it.
    pub fn thread_ended(&mut self, thread: ThreadId) {
        self.lowered |= self.counts.remove(&thread).is_some();
        self.lowered |= self.vcounts.remove(&thread).is_some();
        self.foreign.remove(&thread);
    }

    /// The debugger left: every thread it suspended runs again and all counts are cleared.
    pub fn reset(&mut self, ops: &dyn SuspendOps) {
        if self.vm_count > 0 {
            ops.vm_resumed();
        }
        let all_virtual = self.vm_virtual && self.vm_count > 0;
        self.vm_count = 0;
        self.vm_virtual = false;
        self.lowered |= !self.counts.is_empty() || !self.vcounts.is_empty() || all_virtual;
        let vcounts = std::mem::take(&mut self.vcounts);
        let foreign = std::mem::take(&mut self.foreign);
        if all_virtual {
            let except: Vec<ThreadId> = vcounts
                .keys()
                .copied()
                .filter(|t| foreign.contains(t) || self.self_suspending.contains(t))
                .chain(self.self_suspending.iter().copied().filter(|t| !vcounts.contains_key(t) && ops.is_virtual(*t)))
                .collect();
            let _ = ops.resume_all_virtual(&except);
        } else {
            let alone: Vec<ThreadId> = vcounts
                .iter()
                .filter(|(t, c)| **c > 0 && !foreign.contains(t) && !self.self_suspending.contains(t))
                .map(|(t, _)| *t)
                .collect();
            if !alone.is_empty() {
                let _ = ops.resume(&alone);
            }
        }
        // A self-suspending thread is let go by the helper, which then drops its event.
        let threads: Vec<ThreadId> = self
            .counts
            .drain()
            .map(|(t, _)| t)
            .filter(|t| !foreign.contains(t) && !self.self_suspending.contains(t))
            .collect();
        if !threads.is_empty() {
            let _ = ops.resume(&threads);
        }
    }

    /// An event thread is about to suspend itself in the VM for an event with a suspending policy
    /// that the helper will deliver: it saves waking the thread twice (once when the event is out,
    /// once at the resume). Until [`ThreadControl::end_self_suspend`], the thread's suspension in
    /// the VM is the event's: the debugger's suspends and resumes of it only count.
    ///
    /// Returns whether the thread is suspended already: then its suspension in the VM is pending
    /// (it takes hold at the thread's next VM call, which any JVMTI call is) and the thread must
    /// not suspend itself: the resume that lets it through that call would leave it suspending
    /// itself afterwards, with no one left to resume it.
    pub fn begin_self_suspend(&mut self, thread: ThreadId) -> bool {
        self.self_suspending.insert(thread);
        self.suspend_count(thread) > 0
    }

    /// The helper is done with a self-suspending thread's event: if the event went out, its policy
    /// has counted the thread (with [`ThreadControl::suspend_all`] or
    /// [`ThreadControl::suspend_thread`], after `begin_self_suspend`). `suspended_in_vm`: the
    /// thread is suspended in the VM (by itself, or by a suspend that came before
    /// `begin_self_suspend`); false if its own suspend failed. Afterwards the VM state matches the
    /// count again: a thread left with no count is resumed, a counted one not suspended is.
    pub fn end_self_suspend(
        &mut self,
        ops: &dyn SuspendOps,
        thread: ThreadId,
        suspended_in_vm: bool,
    ) -> Result<(), ErrorCode> {
        if !self.self_suspending.remove(&thread) {
            return Ok(());
        }
        // A virtual thread with no count of its own has the VM-wide one.
        let counted = self.suspend_count_of(thread, self.counts_as_virtual(ops, thread)) > 0;
        if let Some(count) = self.vcounts.get(&thread).copied() {
            self.set_virtual_count(thread, count);
        }
        first_error(match (counted, suspended_in_vm) {
            (false, true) => ops.resume(&[thread]),
            (true, false) => ops.suspend(&[thread]),
            _ => return Ok(()),
        })
    }

    /// A self-suspension that never happened (its event could not be handed over).
    pub fn cancel_self_suspend(&mut self, thread: ThreadId) {
        self.self_suspending.remove(&thread);
        if let Some(count) = self.vcounts.get(&thread).copied() {
            self.set_virtual_count(thread, count);
        }
    }

    /// Threads with a suspend count of their own (virtual threads with only the VM-wide one are
    /// not listed).
    pub fn suspended_threads(&self) -> impl Iterator<Item = ThreadId> + '_ {
        self.counts.keys().copied().chain(self.vcounts.iter().filter(|(_, c)| **c > 0).map(|(t, _)| *t))
    }

    /// Whether some count went to zero since the last call (and forgets it).
    pub fn take_lowered(&mut self) -> bool {
        std::mem::take(&mut self.lowered)
    }
}

/// The agent's [`ThreadControl`], shared: a mutex, and a condition variable notified whenever a
/// count goes to zero (a debugger resume, a departing debugger, a thread's end).
#[derive(Debug, Default)]
pub struct Threads {
    control: Mutex<ThreadControl>,
    /// Renames not yet applied to the counts (see [`Threads::rename`]): a leaf lock.
    renames: Mutex<Vec<(ThreadId, ThreadId)>>,
    lowered: Condvar,
}

/// The locked counts; on unlock, wakes the waiters if a count went to zero meanwhile. Doing it here
/// rather than at each resume site means no path that lowers a count can forget to.
pub struct ThreadsGuard<'a> {
    guard: MutexGuard<'a, ThreadControl>,
    lowered: &'a Condvar,
}

impl Deref for ThreadsGuard<'_> {
    type Target = ThreadControl;
    fn deref(&self) -> &ThreadControl {
        &self.guard
    }
}

impl DerefMut for ThreadsGuard<'_> {
    fn deref_mut(&mut self) -> &mut ThreadControl {
        &mut self.guard
    }
}

impl Drop for ThreadsGuard<'_> {
    fn drop(&mut self) {
        if self.guard.take_lowered() {
            self.lowered.notify_all();
        }
    }
}

impl Threads {
    /// Locks the counts (carrying on after a panic elsewhere, as [`crate::agent::lock`] does).
    pub fn lock(&self) -> ThreadsGuard<'_> {
        let mut guard = self.control.lock().unwrap_or_else(|e| e.into_inner());
        self.apply_renames(&mut guard);
        ThreadsGuard { guard, lowered: &self.lowered }
    }

    /// Records that a thread counted under `from` is `to` from now on (see
    /// [`ThreadControl::rename`]). Takes only a leaf lock, so that whoever gives the thread its
    /// new ID can call it holding anything but the ID table's lock; the counts follow the next
    /// time anyone locks them, before they are read.
    pub fn rename(&self, from: ThreadId, to: ThreadId) {
        self.renames.lock().unwrap_or_else(|e| e.into_inner()).push((from, to));
    }

    fn apply_renames(&self, control: &mut ThreadControl) {
        let renames = std::mem::take(&mut *self.renames.lock().unwrap_or_else(|e| e.into_inner()));
        for (from, to) in renames {
            control.rename(from, to);
        }
    }

    /// Blocks the calling thread while the debugger keeps `thread` suspended, or until `give_up`
    /// says to stop waiting (the VM is dying). Returns whether it waited at all.
    ///
    /// For an application thread this is safe under the locking rules of [`crate::agent`]: no VM
    /// call happens here, and the mutex is held only for the plain Rust of checking a count — the
    /// condition variable releases it while waiting. So the command thread can take it to resume
    /// `thread` (or to suspend or resume this very thread: JVMTI suspends a thread that is outside
    /// the VM without its cooperation, and the suspension takes hold when it next enters the VM,
    /// after it has left here). Whoever makes `give_up` true must then call
    /// [`Threads::wake_waiters`].
    pub fn wait_while_suspended(&self, thread: ThreadId, give_up: &dyn Fn() -> bool) -> bool {
        let mut guard = self.control.lock().unwrap_or_else(|e| e.into_inner());
        self.apply_renames(&mut guard);
        let mut waited = false;
        while guard.suspend_count(guard.current_id(thread)) > 0 && !give_up() {
            waited = true;
            guard = self.lowered.wait(guard).unwrap_or_else(|e| e.into_inner());
            self.apply_renames(&mut guard);
        }
        waited
    }

    /// Wakes every [`Threads::wait_while_suspended`] to look at its condition again.
    pub fn wake_waiters(&self) {
        // Under the lock: a waiter between checking `give_up` and waiting cannot miss this.
        let _guard = self.control.lock().unwrap_or_else(|e| e.into_inner());
        self.lowered.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;
    use std::collections::HashSet;

    /// Records real suspensions; refuses to suspend twice or resume what is not suspended, as JVMTI does.
    /// Virtual threads (`virtuals`, never listed by `live_threads`) are suspended one by one or
    /// all at once, as JVMTI 21 does: `all_virtual` is its "suspend all" mode, in which every
    /// virtual thread is suspended but the exceptions (`not_suspended`), new ones included.
    #[derive(Default)]
    struct FakeVm {
        live: RefCell<Vec<ThreadId>>,
        suspended: RefCell<HashSet<ThreadId>>,
        calls: RefCell<u32>,
        virtuals: RefCell<HashSet<ThreadId>>,
        supports_virtual: bool,
        all_virtual: RefCell<bool>,
        not_suspended: RefCell<HashSet<ThreadId>>,
        stale_kept: RefCell<Vec<Vec<ThreadId>>>,
    }

    impl FakeVm {
        /// Whether the VM has this thread suspended (a virtual one under "suspend all" too).
        fn is_suspended(&self, t: ThreadId) -> bool {
            if self.virtuals.borrow().contains(&t) && *self.all_virtual.borrow() {
                !self.not_suspended.borrow().contains(&t)
            } else {
                self.suspended.borrow().contains(&t)
            }
        }

        fn set_suspended(&self, t: ThreadId, on: bool) {
            if self.virtuals.borrow().contains(&t) && *self.all_virtual.borrow() {
                if on {
                    self.not_suspended.borrow_mut().remove(&t);
                } else {
                    self.not_suspended.borrow_mut().insert(t);
                }
            } else if on {
                self.suspended.borrow_mut().insert(t);
            } else {
                self.suspended.borrow_mut().remove(&t);
            }
        }

        fn alive(&self, t: ThreadId) -> bool {
            self.live.borrow().contains(&t) || self.virtuals.borrow().contains(&t)
        }
    }

    impl SuspendOps for FakeVm {
        fn suspend(&self, threads: &[ThreadId]) -> Vec<Result<(), ErrorCode>> {
            *self.calls.borrow_mut() += 1;
            threads
                .iter()
                .map(|t| {
                    if !self.alive(*t) {
                        Err(ErrorCode::THREAD_NOT_ALIVE)
                    } else if !self.is_suspended(*t) {
                        self.set_suspended(*t, true);
                        Ok(())
                    } else {
                        Err(ErrorCode::THREAD_SUSPENDED)
                    }
                })
                .collect()
        }
        fn resume(&self, threads: &[ThreadId]) -> Vec<Result<(), ErrorCode>> {
            *self.calls.borrow_mut() += 1;
            threads
                .iter()
                .map(|t| {
                    if !self.alive(*t) {
                        Err(ErrorCode::THREAD_NOT_ALIVE)
                    } else if self.is_suspended(*t) {
                        self.set_suspended(*t, false);
                        Ok(())
                    } else {
                        Err(ErrorCode::THREAD_NOT_SUSPENDED)
                    }
                })
                .collect()
        }
        fn live_threads(&self) -> Result<Vec<ThreadId>, ErrorCode> {
            Ok(self.live.borrow().clone())
        }
        fn is_virtual(&self, t: ThreadId) -> bool {
            self.supports_virtual && self.virtuals.borrow().contains(&t)
        }
        fn supports_virtual_threads(&self) -> bool {
            self.supports_virtual
        }
        fn frames_stale_except(&self, keep: &[ThreadId]) {
            let mut keep = keep.to_vec();
            keep.sort_by_key(|t| t.0);
            self.stale_kept.borrow_mut().push(keep);
        }
        fn suspend_all_virtual(&self, except: &[ThreadId]) -> Result<(), ErrorCode> {
            assert!(self.supports_virtual, "no such function before JVMTI 21");
            assert!(except.iter().all(|t| self.virtuals.borrow().contains(t)), "virtual threads only");
            *self.calls.borrow_mut() += 1;
            // Every virtual thread suspended but the exceptions, whose state does not change.
            let was: HashSet<ThreadId> =
                self.virtuals.borrow().iter().copied().filter(|t| self.is_suspended(*t)).collect();
            *self.all_virtual.borrow_mut() = true;
            let not: HashSet<ThreadId> = except.iter().copied().filter(|t| !was.contains(t)).collect();
            *self.not_suspended.borrow_mut() = not;
            self.suspended.borrow_mut().retain(|t| !self.virtuals.borrow().contains(t));
            Ok(())
        }
        fn resume_all_virtual(&self, except: &[ThreadId]) -> Result<(), ErrorCode> {
            assert!(self.supports_virtual, "no such function before JVMTI 21");
            assert!(except.iter().all(|t| self.virtuals.borrow().contains(t)), "virtual threads only");
            *self.calls.borrow_mut() += 1;
            let stay: Vec<ThreadId> = except.iter().copied().filter(|t| self.is_suspended(*t)).collect();
            *self.all_virtual.borrow_mut() = false;
            self.not_suspended.borrow_mut().clear();
            self.suspended.borrow_mut().retain(|t| !self.virtuals.borrow().contains(t));
            self.suspended.borrow_mut().extend(stay);
            Ok(())
        }
    }

    /// A JVMTI 21 VM with `platform` platform threads (IDs 1..) and `virtuals` virtual ones
    /// (IDs 101..).
    fn vt_vm(platform: u64, virtuals: u64) -> FakeVm {
        let vm = FakeVm { supports_virtual: true, ..FakeVm::default() };
        *vm.live.borrow_mut() = (1..=platform).map(ThreadId).collect();
        *vm.virtuals.borrow_mut() = (101..=100 + virtuals).map(ThreadId).collect();
        vm
    }

    /// Every thread's count matches the VM: suspended exactly when counted.
    fn assert_in_step(vm: &FakeVm, tc: &ThreadControl) {
        for t in vm.live.borrow().iter().chain(vm.virtuals.borrow().iter()) {
            let count = tc.suspend_count_of(*t, vm.virtuals.borrow().contains(t));
            assert_eq!(vm.is_suspended(*t), count > 0, "thread {t:?} with count {count}");
        }
    }

    #[test]
    fn a_virtual_thread_is_suspended_and_resumed_alone_like_any_thread() {
        let (vm, mut tc) = (vt_vm(1, 2), ThreadControl::default());
        let v = ThreadId(101);
        tc.suspend_thread(&vm, v).unwrap();
        tc.suspend_thread(&vm, v).unwrap();
        assert_eq!(tc.suspend_count_of(v, true), 2);
        assert_eq!(tc.suspend_count_of(ThreadId(102), true), 0);
        assert_in_step(&vm, &tc);
        tc.resume_thread(&vm, v).unwrap();
        assert!(vm.is_suspended(v));
        tc.resume_thread(&vm, v).unwrap();
        tc.resume_thread(&vm, v).unwrap();
        assert_eq!(tc.suspend_count_of(v, true), 0);
        assert_in_step(&vm, &tc);
        assert!(tc.vcounts.is_empty(), "nothing kept for a thread back at the VM-wide count");
    }

    #[test]
    fn a_vm_suspend_reaches_every_virtual_thread_even_unseen_ones() {
        let (vm, mut tc) = (vt_vm(2, 3), ThreadControl::default());
        tc.suspend_all(&vm).unwrap();
        // Platform threads one batch, virtual threads one SuspendAllVirtualThreads.
        assert_eq!(*vm.calls.borrow(), 2);
        for v in 101..=103 {
            assert_eq!(tc.suspend_count_of(ThreadId(v), true), 1);
        }
        // One started meanwhile is suspended too, with the VM-wide count.
        vm.virtuals.borrow_mut().insert(ThreadId(104));
        tc.thread_started(&vm, ThreadId(104)).unwrap();
        assert_eq!(tc.suspend_count_of(ThreadId(104), true), 1);
        assert_in_step(&vm, &tc);
        tc.suspend_all(&vm).unwrap();
        assert_eq!(tc.suspend_count_of(ThreadId(102), true), 2);
        tc.resume_all(&vm);
        assert_in_step(&vm, &tc);
        tc.resume_all(&vm);
        assert_in_step(&vm, &tc);
        assert_eq!(tc.suspend_count_of(ThreadId(104), true), 0);
        assert!(tc.vcounts.is_empty());
    }

    #[test]
    fn virtual_threads_suspended_or_resumed_alone_keep_exact_counts_across_vm_suspends() {
        let (vm, mut tc) = (vt_vm(1, 3), ThreadControl::default());
        let (a, b, c) = (ThreadId(101), ThreadId(102), ThreadId(103));
        // a suspended alone first: VM-wide suspension leaves it out and counts it twice.
        tc.suspend_thread(&vm, a).unwrap();
        tc.suspend_all(&vm).unwrap();
        assert_eq!(tc.suspend_count_of(a, true), 2);
        // b resumed alone while the VM is suspended: it runs, count 0.
        tc.resume_thread(&vm, b).unwrap();
        assert_eq!(tc.suspend_count_of(b, true), 0);
        assert!(!vm.is_suspended(b));
        assert_in_step(&vm, &tc);
        // A second VM suspension reaches b again (once), the others twice.
        tc.suspend_all(&vm).unwrap();
        assert_eq!((tc.suspend_count_of(a, true), tc.suspend_count_of(b, true)), (3, 1));
        assert_eq!(tc.suspend_count_of(c, true), 2);
        assert_in_step(&vm, &tc);
        // VM resumes: b runs after the first, c after the second, a still held once.
        tc.resume_all(&vm);
        assert_eq!((tc.suspend_count_of(a, true), tc.suspend_count_of(b, true)), (2, 0));
        assert_in_step(&vm, &tc);
        assert!(vm.stale_kept.borrow().is_empty(), "no virtual thread it cannot list ran yet");
        tc.resume_all(&vm);
        // The unlisted virtual threads ran: every frame is stale but those of a, still suspended.
        assert_eq!(*vm.stale_kept.borrow(), [vec![a]]);
        assert_eq!((tc.suspend_count_of(a, true), tc.suspend_count_of(c, true)), (1, 0));
        assert!(vm.is_suspended(a));
        assert_in_step(&vm, &tc);
        // VirtualMachine.Resume also takes a's own count.
        tc.resume_all(&vm);
        assert_eq!(tc.suspend_count_of(a, true), 0);
        assert_in_step(&vm, &tc);
        assert!(tc.vcounts.is_empty());
    }

    #[test]
    fn a_virtual_event_thread_suspending_itself_is_left_out_of_the_vm_suspend() {
        let (vm, mut tc) = (vt_vm(1, 2), ThreadControl::default());
        let me = ThreadId(101);
        assert!(!tc.begin_self_suspend(me));
        // The suspend-all event: the others in the VM, the event thread by count.
        tc.suspend_all(&vm).unwrap();
        assert!(!vm.is_suspended(me));
        assert_eq!(tc.suspend_count_of(me, true), 1);
        // It suspends itself; the event is done.
        vm.set_suspended(me, true);
        tc.end_self_suspend(&vm, me, true).unwrap();
        assert_in_step(&vm, &tc);
        tc.resume_all(&vm);
        assert_in_step(&vm, &tc);
        assert!(!vm.is_suspended(me));
        // An event-thread policy: counted alone.
        assert!(!tc.begin_self_suspend(me));
        tc.suspend_thread(&vm, me).unwrap();
        vm.set_suspended(me, true);
        tc.end_self_suspend(&vm, me, true).unwrap();
        assert_eq!(tc.suspend_count_of(me, true), 1);
        assert_in_step(&vm, &tc);
        tc.resume_thread(&vm, me).unwrap();
        assert_in_step(&vm, &tc);
        // An event not delivered while the VM is suspended: the thread keeps the VM-wide count.
        tc.suspend_all(&vm).unwrap();
        let other = ThreadId(102);
        assert!(!tc.begin_self_suspend(other), "not counted alone: the VM-wide suspension is pending");
        tc.end_self_suspend(&vm, other, true).unwrap();
        assert_eq!(tc.suspend_count_of(other, true), 1);
        assert_in_step(&vm, &tc);
        tc.resume_all(&vm);
        assert_in_step(&vm, &tc);
    }

    #[test]
    fn a_departing_debugger_runs_every_virtual_thread() {
        let (vm, mut tc) = (vt_vm(2, 3), ThreadControl::default());
        tc.suspend_thread(&vm, ThreadId(101)).unwrap();
        tc.suspend_all(&vm).unwrap();
        tc.resume_thread(&vm, ThreadId(102)).unwrap();
        tc.reset(&vm);
        assert!(vm.virtuals.borrow().iter().all(|t| !vm.is_suspended(*t)));
        assert!(vm.suspended.borrow().is_empty());
        assert_in_step(&vm, &tc);
        // Suspended alone only: resumed alone.
        tc.suspend_thread(&vm, ThreadId(103)).unwrap();
        tc.reset(&vm);
        assert_in_step(&vm, &tc);
        assert!(!vm.is_suspended(ThreadId(103)));
    }

    #[test]
    fn without_virtual_thread_support_nothing_changes() {
        // JDK 17: no SuspendAllVirtualThreads (the fake asserts it is never called).
        let (vm, mut tc) = (vm(3), ThreadControl::default());
        tc.suspend_all(&vm).unwrap();
        tc.suspend_thread(&vm, ThreadId(1)).unwrap();
        assert_eq!(tc.suspend_count_of(ThreadId(50), true), 0, "no virtual thread is counted VM-wide");
        tc.resume_all(&vm);
        tc.reset(&vm);
        assert!(vm.suspended.borrow().is_empty());
        assert_eq!(*vm.calls.borrow(), 3);
    }

    fn vm(n: u64) -> FakeVm {
        let vm = FakeVm::default();
        *vm.live.borrow_mut() = (1..=n).map(ThreadId).collect();
        vm
    }

    #[test]
    fn counts_nest_and_only_the_last_resume_runs_the_thread() {
        let (vm, mut tc) = (vm(1), ThreadControl::default());
        let t = ThreadId(1);
        tc.suspend_thread(&vm, t).unwrap();
        tc.suspend_thread(&vm, t).unwrap();
        assert_eq!(tc.suspend_count(t), 2);
        tc.resume_thread(&vm, t).unwrap();
        assert!(vm.suspended.borrow().contains(&t));
        tc.resume_thread(&vm, t).unwrap();
        assert!(!vm.suspended.borrow().contains(&t));
        // Resuming a running thread is a no-op, not an error.
        tc.resume_thread(&vm, t).unwrap();
        assert_eq!(tc.suspend_count(t), 0);
    }

    #[test]
    fn vm_suspend_and_thread_suspend_combine() {
        let (vm, mut tc) = (vm(3), ThreadControl::default());
        tc.suspend_thread(&vm, ThreadId(2)).unwrap();
        tc.suspend_all(&vm).unwrap();
        assert_eq!((tc.suspend_count(ThreadId(1)), tc.suspend_count(ThreadId(2))), (1, 2));
        tc.resume_all(&vm);
        assert_eq!(*vm.suspended.borrow(), HashSet::from([ThreadId(2)]));
        assert_eq!(tc.vm_suspend_count(), 0);
    }

    #[test]
    fn a_vm_resume_lets_the_others_run_when_one_was_not_suspended_in_the_vm() {
        let (vm, mut tc) = (vm(3), ThreadControl::default());
        tc.suspend_all(&vm).unwrap();
        // Thread 2 is let go behind the debugger's back.
        vm.suspended.borrow_mut().remove(&ThreadId(2));
        tc.resume_all(&vm);
        assert!(vm.suspended.borrow().is_empty());
        assert_eq!((0..=3).map(|t| tc.suspend_count(ThreadId(t))).sum::<u32>(), 0);
        // A single thread's resume still says so.
        tc.suspend_thread(&vm, ThreadId(1)).unwrap();
        vm.suspended.borrow_mut().remove(&ThreadId(1));
        assert_eq!(tc.resume_thread(&vm, ThreadId(1)), Err(ErrorCode::THREAD_NOT_SUSPENDED));
    }

    #[test]
    fn a_resume_answers_early_only_when_it_lets_a_thread_run_and_others_wait() {
        let (vm, mut tc) = (vm(3), ThreadControl::default());
        let (a, b) = (ThreadId(1), ThreadId(2));
        tc.suspend_thread(&vm, a).unwrap();
        assert!(!tc.answers_resume_early(a), "alone: the thread's next event is all there is");
        tc.suspend_thread(&vm, b).unwrap();
        assert!(tc.answers_resume_early(a));
        tc.suspend_thread(&vm, a).unwrap();
        assert!(!tc.answers_resume_early(a), "a resume that leaves a count lets nothing run");
        assert!(!tc.answers_resume_early(ThreadId(3)), "not suspended");
        // A thread on its way to suspending itself for an event counts as waiting.
        let (vm, mut tc) = (self::vm(3), ThreadControl::default());
        tc.suspend_thread(&vm, a).unwrap();
        tc.begin_self_suspend(b);
        assert!(tc.answers_resume_early(a));
        assert!(!tc.answers_resume_early(b), "its suspension in the VM is its event's");
    }

    #[test]
    fn a_self_suspending_thread_is_only_counted_until_its_event_is_done() {
        let (vm, mut tc) = (vm(2), ThreadControl::default());
        let me = ThreadId(1);
        assert!(!tc.begin_self_suspend(me), "not suspended by the debugger: it suspends itself");
        // The debugger suspends and resumes it meanwhile: counts only, the VM is not asked.
        tc.suspend_thread(&vm, me).unwrap();
        tc.resume_thread(&vm, me).unwrap();
        assert!(vm.suspended.borrow().is_empty());
        // The event suspends all: the others in the VM, the event thread by count.
        tc.suspend_all(&vm).unwrap();
        assert!(!vm.suspended.borrow().contains(&me));
        assert_eq!(tc.suspend_count(me), 1);
        tc.end_self_suspend(&vm, me, true).unwrap();
        assert!(!vm.suspended.borrow().contains(&me), "it suspended itself; nothing to do");
        // From now on it is an ordinary suspended thread: the resume reaches the VM.
        vm.suspended.borrow_mut().insert(me);
        tc.resume_all(&vm);
        assert!(vm.suspended.borrow().is_empty());
    }

    #[test]
    fn a_dropped_self_suspension_is_undone_unless_the_debugger_holds_the_thread() {
        let (vm, mut tc) = (vm(2), ThreadControl::default());
        let me = ThreadId(1);
        // Nobody counts it: the self-suspension is undone.
        assert!(!tc.begin_self_suspend(me));
        vm.suspended.borrow_mut().insert(me);
        tc.end_self_suspend(&vm, me, true).unwrap();
        assert!(vm.suspended.borrow().is_empty());
        // The debugger suspended it meanwhile: it stays suspended, counted once.
        assert!(!tc.begin_self_suspend(me));
        vm.suspended.borrow_mut().insert(me);
        tc.suspend_thread(&vm, me).unwrap();
        tc.end_self_suspend(&vm, me, true).unwrap();
        assert!(vm.suspended.borrow().contains(&me));
        assert_eq!(tc.suspend_count(me), 1);
        // Its own suspend failed but the event counts it: the VM is asked now.
        tc.resume_thread(&vm, me).unwrap();
        assert!(!tc.begin_self_suspend(me));
        tc.suspend_thread(&vm, me).unwrap();
        tc.end_self_suspend(&vm, me, false).unwrap();
        assert!(vm.suspended.borrow().contains(&me));
    }

    #[test]
    fn a_thread_the_debugger_suspended_first_does_not_suspend_itself() {
        let (vm, mut tc) = (vm(2), ThreadControl::default());
        let me = ThreadId(1);
        tc.suspend_all(&vm).unwrap();
        // Its suspension is pending in the VM: suspending itself would outlive the resume.
        assert!(tc.begin_self_suspend(me));
        // The resume only counts while the event is out...
        tc.resume_all(&vm);
        assert!(vm.suspended.borrow().contains(&me));
        // ...and the event's own suspension keeps it.
        tc.suspend_thread(&vm, me).unwrap();
        tc.end_self_suspend(&vm, me, true).unwrap();
        assert!(vm.suspended.borrow().contains(&me));
        tc.resume_thread(&vm, me).unwrap();
        assert!(!vm.suspended.borrow().contains(&me));
    }

    #[test]
    fn suspend_all_is_one_batched_call() {
        let (vm, mut tc) = (vm(100), ThreadControl::default());
        tc.suspend_all(&vm).unwrap();
        tc.resume_all(&vm);
        assert_eq!(*vm.calls.borrow(), 2);
    }

    #[test]
    fn threads_started_during_a_vm_suspend_are_suspended_as_often() {
        let (vm, mut tc) = (vm(1), ThreadControl::default());
        tc.suspend_all(&vm).unwrap();
        tc.suspend_all(&vm).unwrap();
        vm.live.borrow_mut().push(ThreadId(9));
        tc.thread_started(&vm, ThreadId(9)).unwrap();
        assert_eq!(tc.suspend_count(ThreadId(9)), 2);
        tc.resume_all(&vm);
        tc.resume_all(&vm);
        assert!(vm.suspended.borrow().is_empty());
    }

    #[test]
    fn vm_wide_suspension_is_announced_once_each_way() {
        #[derive(Default)]
        struct Counting {
            vm: FakeVm,
            events: RefCell<Vec<&'static str>>,
        }
        impl SuspendOps for Counting {
            fn suspend(&self, t: &[ThreadId]) -> Vec<Result<(), ErrorCode>> {
                self.vm.suspend(t)
            }
            fn resume(&self, t: &[ThreadId]) -> Vec<Result<(), ErrorCode>> {
                self.vm.resume(t)
            }
            fn live_threads(&self) -> Result<Vec<ThreadId>, ErrorCode> {
                self.vm.live_threads()
            }
            fn vm_suspended(&self) {
                self.events.borrow_mut().push("suspended");
            }
            fn vm_resumed(&self) {
                self.events.borrow_mut().push("resumed");
            }
        }
        let ops = Counting { vm: vm(2), events: RefCell::default() };
        let mut tc = ThreadControl::default();
        tc.suspend_all(&ops).unwrap();
        tc.suspend_all(&ops).unwrap();
        tc.resume_all(&ops);
        tc.resume_all(&ops);
        tc.resume_all(&ops);
        tc.suspend_all(&ops).unwrap();
        tc.reset(&ops);
        assert_eq!(*ops.events.borrow(), ["suspended", "resumed", "suspended", "resumed"]);
    }

    #[test]
    fn reset_runs_everything() {
        let (vm, mut tc) = (vm(2), ThreadControl::default());
        tc.suspend_all(&vm).unwrap();
        tc.suspend_thread(&vm, ThreadId(1)).unwrap();
        tc.reset(&vm);
        assert!(vm.suspended.borrow().is_empty());
        assert_eq!(tc.suspend_count(ThreadId(1)), 0);
        assert_eq!(tc.vm_suspend_count(), 0);
    }

    /// MixedSuspendTest: a thread the application suspended (`Thread.suspend`) must not make a
    /// suspend-all fail (the breakpoint event would never be sent), and the debugger's resume must
    /// leave it suspended, as the application wants.
    #[test]
    fn a_thread_suspended_by_the_application_is_counted_but_never_resumed_by_us() {
        let (vm, mut tc) = (vm(2), ThreadControl::default());
        vm.suspended.borrow_mut().insert(ThreadId(2)); // the application's suspension
        assert_eq!(tc.suspend_all(&vm), Ok(()));
        assert_eq!((tc.suspend_count(ThreadId(1)), tc.suspend_count(ThreadId(2))), (1, 1));
        tc.suspend_thread(&vm, ThreadId(2)).unwrap();
        assert_eq!(tc.suspend_count(ThreadId(2)), 2);
        tc.resume_all(&vm);
        tc.resume_thread(&vm, ThreadId(2)).unwrap();
        assert_eq!(tc.suspend_count(ThreadId(2)), 0);
        assert_eq!(*vm.suspended.borrow(), HashSet::from([ThreadId(2)]), "still the application's to resume");
        // The application resumes it; the debugger's next suspension is a real one again.
        vm.suspended.borrow_mut().remove(&ThreadId(2));
        tc.suspend_thread(&vm, ThreadId(2)).unwrap();
        tc.resume_thread(&vm, ThreadId(2)).unwrap();
        assert!(vm.suspended.borrow().is_empty());
        // Nor does a departing debugger resume it.
        vm.suspended.borrow_mut().insert(ThreadId(2));
        tc.suspend_all(&vm).unwrap();
        tc.reset(&vm);
        assert_eq!(*vm.suspended.borrow(), HashSet::from([ThreadId(2)]));
    }

    #[test]
    fn a_dead_thread_does_not_break_suspend_all() {
        let (vm, mut tc) = (vm(2), ThreadControl::default());
        tc.thread_ended(ThreadId(2));
        vm.live.borrow_mut().retain(|t| *t != ThreadId(2));
        tc.suspend_all(&vm).unwrap();
        assert_eq!(tc.suspend_count(ThreadId(1)), 1);
        // Suspending a dead thread is counted, not refused, and resuming it is harmless.
        assert_eq!(tc.suspend_thread(&vm, ThreadId(2)), Ok(()));
        assert_eq!(tc.suspend_count(ThreadId(2)), 1);
        assert_eq!(tc.resume_thread(&vm, ThreadId(2)), Ok(()));
    }

    #[test]
    fn only_counts_reaching_zero_are_reported_as_lowered() {
        let (vm, mut tc) = (vm(3), ThreadControl::default());
        tc.suspend_thread(&vm, ThreadId(1)).unwrap();
        tc.suspend_thread(&vm, ThreadId(1)).unwrap();
        assert!(!tc.take_lowered());
        tc.resume_thread(&vm, ThreadId(1)).unwrap();
        assert!(!tc.take_lowered(), "still suspended once");
        tc.resume_thread(&vm, ThreadId(1)).unwrap();
        assert!(tc.take_lowered());
        assert!(!tc.take_lowered(), "reported once");
        // Resuming a running thread lowers nothing.
        tc.resume_thread(&vm, ThreadId(1)).unwrap();
        assert!(!tc.take_lowered());
        tc.suspend_all(&vm).unwrap();
        tc.resume_all(&vm);
        assert!(tc.take_lowered());
        // A thread ending, or the debugger leaving, clears counts too.
        tc.suspend_thread(&vm, ThreadId(2)).unwrap();
        tc.thread_ended(ThreadId(2));
        assert!(tc.take_lowered());
        tc.thread_ended(ThreadId(2));
        assert!(!tc.take_lowered());
        tc.reset(&vm);
        assert!(!tc.take_lowered(), "nothing was suspended");
        tc.suspend_thread(&vm, ThreadId(3)).unwrap();
        tc.reset(&vm);
        assert!(tc.take_lowered());
    }

    /// A `Threads` shared with a waiter on another thread; the fake VM lives on the test thread.
    fn spawn_waiter(
        threads: &std::sync::Arc<Threads>,
        thread: ThreadId,
        give_up: std::sync::Arc<std::sync::atomic::AtomicBool>,
    ) -> std::sync::mpsc::Receiver<bool> {
        let (tx, rx) = std::sync::mpsc::channel();
        let threads = threads.clone();
        std::thread::spawn(move || {
            let waited = threads.wait_while_suspended(thread, &|| give_up.load(std::sync::atomic::Ordering::SeqCst));
            let _ = tx.send(waited);
        });
        rx
    }

    const WAIT: std::time::Duration = std::time::Duration::from_secs(30);

    /// A thread a VM-wide suspension counted under an internal ID, which the debugger then hears
    /// of under another: its count, its waiter and its resume go with it.
    #[test]
    fn a_renamed_thread_keeps_its_count_and_its_waiter() {
        use std::sync::{Arc, atomic::AtomicBool};
        let (vm, threads) = (vm(2), Arc::new(Threads::default()));
        let never = Arc::new(AtomicBool::new(false));
        threads.lock().suspend_all(&vm).unwrap();
        let (internal, public) = (ThreadId(1), ThreadId(7));
        let waiter = spawn_waiter(&threads, internal, never.clone());
        threads.rename(internal, public);
        // In the VM both IDs name one thread.
        vm.suspended.borrow_mut().remove(&internal);
        vm.suspended.borrow_mut().insert(public);
        vm.live.borrow_mut()[0] = public;
        {
            let tc = threads.lock();
            assert_eq!((tc.suspend_count(public), tc.suspend_count(internal)), (1, 0));
            assert_eq!(tc.current_id(internal), public);
        }
        threads.lock().suspend_thread(&vm, public).unwrap();
        threads.lock().resume_all(&vm);
        assert_eq!(threads.lock().suspend_count(public), 1);
        assert!(waiter.recv_timeout(std::time::Duration::from_millis(50)).is_err(), "went on while suspended");
        threads.lock().resume_thread(&vm, public).unwrap();
        assert_eq!(waiter.recv_timeout(WAIT), Ok(true));
        assert!(vm.suspended.borrow().is_empty(), "{:?}", vm.suspended.borrow());
    }

    #[test]
    fn a_waiter_goes_on_only_when_the_count_reaches_zero() {
        use std::sync::{Arc, atomic::AtomicBool};
        let (vm, threads) = (vm(2), Arc::new(Threads::default()));
        let never = Arc::new(AtomicBool::new(false));
        // Not suspended: no wait at all.
        assert_eq!(spawn_waiter(&threads, ThreadId(1), never.clone()).recv_timeout(WAIT), Ok(false));

        threads.lock().suspend_thread(&vm, ThreadId(1)).unwrap();
        threads.lock().suspend_thread(&vm, ThreadId(1)).unwrap();
        let waiter = spawn_waiter(&threads, ThreadId(1), never.clone());
        // Other threads' resumes, a nested resume, and a spurious wake-up leave it waiting. (The
        // waiter may not be waiting yet: either way it must not have returned.)
        threads.lock().suspend_thread(&vm, ThreadId(2)).unwrap();
        threads.lock().resume_thread(&vm, ThreadId(2)).unwrap();
        threads.lock().resume_thread(&vm, ThreadId(1)).unwrap();
        threads.wake_waiters();
        assert!(waiter.try_recv().is_err(), "went on while still suspended");
        threads.lock().resume_thread(&vm, ThreadId(1)).unwrap();
        // (Whether it got to wait depends on how the threads ran.)
        assert!(waiter.recv_timeout(WAIT).is_ok(), "still waiting after the last resume");
        assert!(vm.suspended.borrow().is_empty());
    }

    #[test]
    fn a_departing_debugger_or_a_dying_vm_releases_waiters() {
        use std::sync::{Arc, atomic::AtomicBool, atomic::Ordering};
        let (vm, threads) = (vm(2), Arc::new(Threads::default()));
        let never = Arc::new(AtomicBool::new(false));
        threads.lock().suspend_all(&vm).unwrap();
        threads.lock().suspend_thread(&vm, ThreadId(1)).unwrap();
        let waiter = spawn_waiter(&threads, ThreadId(1), never);
        threads.lock().reset(&vm);
        assert_eq!(waiter.recv_timeout(WAIT).map(|_| ()), Ok(()));

        let dying = Arc::new(AtomicBool::new(false));
        threads.lock().suspend_thread(&vm, ThreadId(2)).unwrap();
        let waiter = spawn_waiter(&threads, ThreadId(2), dying.clone());
        dying.store(true, Ordering::SeqCst);
        threads.wake_waiters();
        assert_eq!(waiter.recv_timeout(WAIT).map(|_| ()), Ok(()));
        assert_eq!(threads.lock().suspend_count(ThreadId(2)), 1, "giving up changes no count");
    }
}
