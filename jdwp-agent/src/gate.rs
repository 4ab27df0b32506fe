//! The event-delivery gate: which composites the event helper may send now, which wait, and who
//! wakes it. The helper ([`crate::event_helper`]) is the I/O shell around it.
//!
//! Composites wait here, in order, while the debugger holds events (`VirtualMachine.HoldEvents`,
//! until `ReleaseEvents`) and after a suspend-all composite until a thread runs again (the JDK's
//! agent blocks its helper the same way, so that events several threads hit at once, each
//! suspending all, reach the debugger one per resume; nsk/jdb's kill001 counts on it). Other work
//! for the helper (tasks, cleanups) is never held back, so a hold never stalls a thread that
//! reports nothing. Suspension policies apply when a composite is finally sent, as with the JDK's
//! agent. A debugger that leaves, or the VM's death, lifts both: held events must not stay held for
//! the next debugger, nor keep the VM from exiting; composites matched for a debugger that has left
//! are dropped by the helper ([`Gate::is_current`]), never sent to the next one.
//!
//! [`GateState`] makes the decisions (no threads, no I/O; unit-tested). [`Gate`] is owned by the
//! [`crate::agent::Agent`]: it puts that state under a lock of its own (a leaf: nothing is called
//! while it is held), owns the helper's inbox and wakes the helper through it when what it holds
//! may go, so the lower layers that lift a hold (a command, a resume, a detach) call the gate, not
//! the helper. It also counts the events the helper has waiting against their bound
//! ([`crate::backpressure`]) and numbers the sessions. See spec-notes/event-queue.md.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, mpsc};
use std::time::Instant;

use crate::backpressure::{Backlog, CondvarPark, Park};

/// The gate's decisions over the composites `J` waiting for it.
#[derive(Debug)]
pub struct GateState<J> {
    /// `HoldEvents` (holding twice is one hold, as with the JDK's agent).
    held: bool,
    /// A suspend-all composite went out and no thread has run since.
    after_suspend_all: bool,
    /// Composites held back, oldest first.
    waiting: VecDeque<J>,
}

impl<J> Default for GateState<J> {
    fn default() -> Self {
        GateState::new()
    }
}

impl<J> GateState<J> {
    pub const fn new() -> GateState<J> {
        GateState { held: false, after_suspend_all: false, waiting: VecDeque::new() }
    }

    /// Whether composites must wait now.
    pub fn closed(&self) -> bool {
        self.held || self.after_suspend_all
    }

    /// A composite comes to the helper: returned if it may be sent now, else kept (after any
    /// composite already waiting, whose order it keeps).
    pub fn offer(&mut self, composite: J) -> Option<J> {
        if self.closed() || !self.waiting.is_empty() {
            self.waiting.push_back(composite);
            None
        } else {
            Some(composite)
        }
    }

    /// The next waiting composite, if composites may go now.
    pub fn next(&mut self) -> Option<J> {
        if self.closed() { None } else { self.waiting.pop_front() }
    }

    /// `HoldEvents`.
    pub fn hold(&mut self) {
        self.held = true;
    }

    /// `ReleaseEvents`; returns whether the helper must look (something waits and may go now).
    pub fn release(&mut self) -> bool {
        self.held = false;
        self.must_wake()
    }

    /// A suspend-all composite is about to go out: the next wait until a thread runs again.
    pub fn suspended_all(&mut self) {
        self.after_suspend_all = true;
    }

    /// A thread the debugger had suspended runs again; returns whether the helper must look.
    pub fn resumed(&mut self) -> bool {
        // Only a resume that opens the gate wakes the helper: one after every event would
        // otherwise cost a wake-up for nothing.
        std::mem::replace(&mut self.after_suspend_all, false) && self.must_wake()
    }

    /// The debugger left, or the VM is dying: nothing stays held (the helper then drops what was
    /// matched for a debugger that has left). Returns whether the helper must look.
    pub fn ended(&mut self) -> bool {
        self.held = false;
        self.after_suspend_all = false;
        self.must_wake()
    }

    fn must_wake(&self) -> bool {
        !self.closed() && !self.waiting.is_empty()
    }

    /// Composites waiting now.
    #[cfg(test)]
    pub fn waiting(&self) -> usize {
        self.waiting.len()
    }
}

/// What the helper's inbox carries: work, or a look at what the gate holds.
pub enum Inbound<J> {
    Job(J),
    /// Composites held back may go now.
    Wake,
}

/// The receiving end of the helper's inbox.
pub struct Inbox<J>(mpsc::Receiver<Inbound<J>>);

/// Why [`Inbox::recv`] returned nothing.
pub enum Closed {
    /// `until` came.
    Timeout,
    /// Nothing can come any more.
    Disconnected,
}

impl<J> Inbox<J> {
    /// The next message if one is waiting now (`None`: none is, or none can come any more).
    pub fn try_recv(&self) -> Option<Inbound<J>> {
        self.0.try_recv().ok()
    }

    /// The next message, waiting for it until `until` (for ever with `None`).
    pub fn recv(&self, until: Option<Instant>) -> Result<Inbound<J>, Closed> {
        match until {
            None => self.0.recv().map_err(|_| Closed::Disconnected),
            Some(at) => self.0.recv_timeout(at.saturating_duration_since(Instant::now())).map_err(|e| match e {
                mpsc::RecvTimeoutError::Timeout => Closed::Timeout,
                mpsc::RecvTimeoutError::Disconnected => Closed::Disconnected,
            }),
        }
    }
}

/// The gate, shared: the state under its own lock, the helper's inbox, the bound, the session
/// number. `J`: the helper's jobs; `P`: how posting threads wait for room (a fake in tests).
pub struct Gate<J, P = CondvarPark> {
    state: Mutex<GateState<J>>,
    tx: mpsc::Sender<Inbound<J>>,
    /// Taken once, by the helper thread.
    rx: Mutex<Option<Inbox<J>>>,
    /// Events handed to the helper and not yet sent or dropped (queued, or held here).
    backlog: Backlog<P>,
    /// The current session's number, tagged on every composite when it is queued: bumped when a
    /// debugger attaches and when it leaves.
    session: AtomicU64,
}

impl<J> Gate<J> {
    pub fn new() -> Gate<J> {
        Gate::with_park(CondvarPark::new())
    }
}

impl<J> Default for Gate<J> {
    fn default() -> Self {
        Gate::new()
    }
}

impl<J, P: Park> Gate<J, P> {
    pub fn with_park(park: P) -> Gate<J, P> {
        let (tx, rx) = mpsc::channel();
        Gate {
            state: Mutex::new(GateState::new()),
            tx,
            rx: Mutex::new(Some(Inbox(rx))),
            backlog: Backlog::with_park(park),
            session: AtomicU64::new(0),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, GateState<J>> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The helper's inbox, for the helper thread (once).
    pub fn take_inbox(&self) -> Option<Inbox<J>> {
        self.rx.lock().unwrap_or_else(|e| e.into_inner()).take()
    }

    /// Queues a job for the helper; gives it back if the helper is gone.
    pub fn send(&self, job: J) -> Result<(), J> {
        self.tx.send(Inbound::Job(job)).map_err(|e| match e.0 {
            Inbound::Job(job) => job,
            Inbound::Wake => unreachable!("a job was sent"),
        })
    }

    /// Queues a job carrying `events` events, counted in the backlog; gives it back (counted out)
    /// if the helper is gone. Returns whether the backlog is past its bound (a thread that
    /// [`crate::backpressure::waits_for_room`] then calls [`Gate::wait_for_room`]).
    pub fn send_counted(&self, job: J, events: usize) -> Result<bool, J> {
        let over = self.backlog.add(events);
        self.send(job).map(|()| over).inspect_err(|_| self.backlog.take(events))
    }

    /// Waits until the helper has brought the backlog down (see [`crate::backpressure`]).
    pub fn wait_for_room(&self) {
        self.backlog.wait_for_room();
    }

    /// The helper is done with `events` events (sent or dropped).
    pub fn count_out(&self, events: usize) {
        self.backlog.take(events);
    }

    /// The helper got a composite: returned if it may be sent now, else held.
    pub fn offer(&self, composite: J) -> Option<J> {
        self.state().offer(composite)
    }

    /// The next held composite that may go now.
    pub fn next(&self) -> Option<J> {
        self.state().next()
    }

    /// `HoldEvents`.
    pub fn hold(&self) {
        self.state().hold();
    }

    /// `ReleaseEvents`.
    pub fn release(&self) {
        let wake = self.state().release();
        self.wake_if(wake);
    }

    /// A suspend-all composite is about to go out (under the session's order lock, before it is
    /// sent: the debugger's resume, under that lock too, comes after).
    pub fn suspended_all(&self) {
        self.state().suspended_all();
    }

    /// A thread the debugger had suspended runs again.
    pub fn resumed(&self) {
        let wake = self.state().resumed();
        self.wake_if(wake);
    }

    /// The debugger left (after [`Gate::session_changed`]), or the VM is dying.
    pub fn ended(&self) {
        let wake = self.state().ended();
        self.wake_if(wake);
    }

    fn wake_if(&self, wake: bool) {
        // Sent after the lock is dropped; the helper takes what may go under that lock, so a
        // wake-up is never lost: it either held the composite before the change (and is woken) or
        // sees the gate open when it offers it.
        if wake {
            let _ = self.tx.send(Inbound::Wake);
        }
    }

    /// The session number to tag a composite with.
    pub fn session(&self) -> u64 {
        self.session.load(Ordering::SeqCst)
    }

    /// A debugger attached or left (called before an attach is made known, and under the
    /// session's order lock when it leaves).
    pub fn session_changed(&self) {
        self.session.fetch_add(1, Ordering::SeqCst);
    }

    /// Whether a composite tagged `matched_for` (`None`: made for whoever listens) is still the
    /// current session's.
    pub fn is_current(&self, matched_for: Option<u64>) -> bool {
        matched_for.is_none_or(|s| s == self.session())
    }

    /// Events waiting for the helper now.
    #[cfg(test)]
    fn queued(&self) -> usize {
        self.backlog.queued()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backpressure::{CAP, RESUME_AT};

    /// What the helper would send from `gate` now, offering `incoming` first.
    fn drain(gate: &mut GateState<u32>, incoming: &[u32]) -> Vec<u32> {
        let mut sent = Vec::new();
        for &c in incoming {
            sent.extend(gate.offer(c));
            sent.extend(std::iter::from_fn(|| gate.next()));
        }
        sent.extend(std::iter::from_fn(|| gate.next()));
        sent
    }

    #[test]
    fn an_open_gate_passes_every_composite_at_once() {
        let mut gate = GateState::new();
        assert_eq!(drain(&mut gate, &[1, 2, 3]), [1, 2, 3]);
        assert_eq!(gate.waiting(), 0);
    }

    #[test]
    fn held_composites_wait_in_order_and_all_go_on_release() {
        let mut gate = GateState::new();
        assert_eq!(drain(&mut gate, &[1]), [1]);
        gate.hold();
        gate.hold();
        assert_eq!(drain(&mut gate, &[2, 3, 4]), [] as [u32; 0]);
        assert_eq!(gate.waiting(), 3);
        assert!(gate.release(), "one release lifts any number of holds and wakes the helper");
        // A composite arriving before the helper has looked goes after those held.
        assert_eq!(drain(&mut gate, &[5]), [2, 3, 4, 5]);
    }

    #[test]
    fn a_release_with_nothing_held_wakes_nobody() {
        let mut gate = GateState::<u32>::new();
        gate.hold();
        assert!(!gate.release());
        assert!(!gate.release(), "releasing twice is harmless");
    }

    #[test]
    fn after_a_suspend_all_composite_the_next_waits_for_a_resume() {
        let mut gate = GateState::new();
        // The helper sends 1, which suspends all; 2 and 3, hit meanwhile, wait.
        assert_eq!(gate.offer(1), Some(1));
        gate.suspended_all();
        assert_eq!(drain(&mut gate, &[2, 3]), [] as [u32; 0]);
        assert!(gate.resumed(), "the resume opens the gate and wakes the helper");
        // 2 suspends all again: 3 waits for the next resume.
        assert_eq!(gate.next(), Some(2));
        gate.suspended_all();
        assert_eq!(gate.next(), None);
        assert!(gate.resumed());
        assert_eq!(drain(&mut gate, &[]), [3]);
    }

    #[test]
    fn a_resume_wakes_the_helper_only_when_it_opens_the_gate_on_something() {
        let mut gate = GateState::new();
        assert!(!gate.resumed(), "no suspend-all composite went out");
        gate.suspended_all();
        assert!(!gate.resumed(), "nothing waits");
        assert!(!gate.resumed());
        gate.suspended_all();
        gate.hold();
        assert_eq!(gate.offer(7), None);
        assert!(!gate.resumed(), "still held: the release wakes it");
        assert!(gate.release());
        assert_eq!(gate.next(), Some(7));
    }

    #[test]
    fn hold_and_suspend_all_both_close_the_gate() {
        let mut gate = GateState::new();
        gate.hold();
        gate.suspended_all();
        assert_eq!(gate.offer(1), None);
        assert!(!gate.release(), "still after a suspend-all composite");
        assert_eq!(gate.next(), None);
        assert!(gate.resumed());
        assert_eq!(gate.next(), Some(1));
    }

    #[test]
    fn the_end_of_a_session_lets_everything_go() {
        let mut gate = GateState::new();
        gate.hold();
        gate.suspended_all();
        assert_eq!(drain(&mut gate, &[1, 2]), [] as [u32; 0]);
        assert!(gate.ended(), "nothing stays held for the next debugger");
        assert!(!gate.closed());
        assert_eq!(drain(&mut gate, &[3]), [1, 2, 3]);
        assert!(!gate.ended(), "nothing left to wake for");
    }

    fn wakes(inbox: &Inbox<u32>) -> usize {
        let mut n = 0;
        while let Ok(m) = inbox.0.try_recv() {
            assert!(matches!(m, Inbound::Wake), "only wake-ups were sent");
            n += 1;
        }
        n
    }

    #[test]
    fn the_gate_wakes_the_helper_through_its_inbox() {
        let gate = Gate::<u32>::new();
        let inbox = gate.take_inbox().expect("the inbox");
        assert!(gate.take_inbox().is_none(), "taken once");
        gate.hold();
        assert_eq!(gate.offer(1), None);
        gate.release();
        assert_eq!(wakes(&inbox), 1);
        assert_eq!(gate.next(), Some(1));
        gate.release();
        gate.suspended_all();
        gate.resumed();
        assert_eq!(wakes(&inbox), 0, "nothing waited");
        gate.suspended_all();
        assert_eq!(gate.offer(2), None);
        gate.ended();
        assert_eq!(wakes(&inbox), 1);
    }

    #[test]
    fn jobs_go_to_the_inbox_in_order_and_come_back_when_the_helper_is_gone() {
        let gate = Gate::<u32>::new();
        let inbox = gate.take_inbox().unwrap();
        assert_eq!(gate.send(1), Ok(()));
        assert_eq!(gate.send_counted(2, 3), Ok(false));
        assert_eq!(gate.queued(), 3);
        let got: Vec<u32> = std::iter::from_fn(|| match inbox.0.try_recv() {
            Ok(Inbound::Job(j)) => Some(j),
            _ => None,
        })
        .collect();
        assert_eq!(got, [1, 2]);
        gate.count_out(3);
        drop(inbox);
        assert_eq!(gate.send(4), Err(4));
        assert_eq!(gate.send_counted(5, 2), Err(5));
        assert_eq!(gate.queued(), 0, "a composite given back is counted out");
    }

    #[test]
    fn the_bound_counts_composites_by_their_events() {
        let gate = Gate::<u32>::new();
        let _inbox = gate.take_inbox();
        assert_eq!(gate.send_counted(1, CAP), Ok(false));
        assert_eq!(gate.send_counted(2, 1), Ok(true), "past the bound");
        gate.count_out(CAP + 1 - RESUME_AT);
        // At the low mark a poster waiting for room goes on at once.
        gate.wait_for_room();
        gate.count_out(RESUME_AT);
        assert_eq!(gate.queued(), 0);
    }

    #[test]
    fn holds_and_resumes_racing_the_helper_lose_no_composite_and_no_wake_up() {
        // A helper on its own thread, as `event_helper::run` reads the inbox, against a command
        // loop that holds, releases, suspends all and resumes while composites come: every one
        // must come out, in order (a lost wake-up would leave the helper asleep and the join
        // hanging).
        const N: u32 = 2000;
        for round in 0..20 {
            let gate = std::sync::Arc::new(Gate::<u32>::new());
            let inbox = gate.take_inbox().unwrap();
            let helper = {
                let gate = gate.clone();
                std::thread::spawn(move || {
                    let mut sent = Vec::new();
                    while sent.len() < N as usize {
                        match inbox.recv(None) {
                            Ok(Inbound::Job(c)) => sent.extend(gate.offer(c)),
                            Ok(Inbound::Wake) => {}
                            Err(_) => break,
                        }
                        sent.extend(std::iter::from_fn(|| gate.next()));
                    }
                    sent
                })
            };
            for i in 0..N {
                gate.send(i).unwrap();
                match (i + round) % 13 {
                    0 => gate.hold(),
                    3 => gate.suspended_all(),
                    5 => gate.release(),
                    8 => gate.resumed(),
                    _ => {}
                }
            }
            gate.release();
            gate.resumed();
            let sent = helper.join().unwrap();
            assert_eq!(sent, (0..N).collect::<Vec<_>>(), "round {round}");
        }
    }

    #[test]
    fn composites_of_a_session_that_ended_are_not_current() {
        let gate = Gate::<u32>::new();
        let tag = gate.session();
        assert!(gate.is_current(Some(tag)));
        assert!(gate.is_current(None), "made for whoever listens");
        gate.session_changed();
        assert!(!gate.is_current(Some(tag)));
        assert!(gate.is_current(Some(gate.session())));
    }
}
