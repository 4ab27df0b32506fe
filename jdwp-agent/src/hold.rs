//! `VirtualMachine.HoldEvents` / `ReleaseEvents`: while held, events are queued, not sent.
//!
//! The session thread flips the flag; the event helper keeps composites back while it is set (see
//! `event_helper::run`), so held events wait in its queue in order and none is lost, and a release
//! wakes it. Suspension policies still apply when an event is finally handled, as with the JDK's
//! agent, where the helper thread stops taking work from its queue while events are held.
//!
//! A debugger that leaves while holding events must not leave them held for the next one (nor
//! keep the VM from exiting): detaching and VM death call [`release`].
//!
//! Held events count against the helper's bound ([`crate::backpressure`]): once it is reached,
//! application threads posting events wait until the release, so a hold costs the program time,
//! not memory (as with the JDK's agent, whose threads wait for room in its queue).

use std::sync::atomic::{AtomicBool, Ordering};

/// The hold flag.
pub struct Hold {
    held: AtomicBool,
}

/// The agent's one hold state.
pub static HOLD_EVENTS: Hold = Hold::new();

impl Hold {
    pub const fn new() -> Hold {
        Hold { held: AtomicBool::new(false) }
    }

    /// Events are queued from now on (holding twice is one hold, as with the JDK's agent).
    pub fn hold(&self) {
        self.held.store(true, Ordering::SeqCst);
    }

    /// Queued events flow again.
    pub fn release(&self) {
        self.held.store(false, Ordering::SeqCst);
    }

    pub fn is_held(&self) -> bool {
        self.held.load(Ordering::SeqCst)
    }
}

impl Default for Hold {
    fn default() -> Hold {
        Hold::new()
    }
}

/// `HoldEvents`.
pub fn hold() {
    HOLD_EVENTS.hold();
}

/// `ReleaseEvents`; also called when the debugger detaches and when the VM dies. Wakes the event
/// helper, which holds the queued composites.
pub fn release() {
    HOLD_EVENTS.release();
    crate::event_helper::wake();
}

/// Whether events are held now.
pub fn is_held() -> bool {
    HOLD_EVENTS.is_held()
}

#[cfg(test)]
mod tests {
    use super::Hold;

    #[test]
    fn one_release_lifts_any_number_of_holds() {
        let hold = Hold::new();
        assert!(!hold.is_held());
        hold.hold();
        hold.hold();
        assert!(hold.is_held());
        hold.release();
        assert!(!hold.is_held());
    }
}
