//! `VirtualMachine.HoldEvents` / `ReleaseEvents`: while held, events are queued, not sent.
//!
//! The session thread flips the flag; the event helper calls [`wait_while_held`] before sending a
//! composite, so held events wait in its queue in order and none is lost. Suspension policies
//! still apply when an event is finally handled, as with the JDK's agent, where the helper thread
//! stops taking work from its queue while events are held.
//!
//! A debugger that leaves while holding events must not leave them held for the next one (nor
//! keep the VM from exiting): detaching and VM death call [`release`].

use std::sync::{Condvar, Mutex};

/// The hold flag and the condition the event helper waits on.
pub struct Hold {
    held: Mutex<bool>,
    released: Condvar,
}

/// The agent's one hold state.
pub static HOLD_EVENTS: Hold = Hold::new();

impl Hold {
    pub const fn new() -> Hold {
        Hold { held: Mutex::new(false), released: Condvar::new() }
    }

    /// Events are queued from now on.
    pub fn hold(&self) {
        *crate::agent::lock(&self.held) = true;
    }

    /// Queued events flow again.
    pub fn release(&self) {
        *crate::agent::lock(&self.held) = false;
        self.released.notify_all();
    }

    pub fn is_held(&self) -> bool {
        *crate::agent::lock(&self.held)
    }

    /// Blocks while events are held. Only for the event helper (an agent thread): an application
    /// thread waiting here could be suspended by the debugger with nothing left to release it.
    pub fn wait_while_held(&self) {
        let mut held = crate::agent::lock(&self.held);
        while *held {
            held = self.released.wait(held).unwrap_or_else(|e| e.into_inner());
        }
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

/// `ReleaseEvents`; also called when the debugger detaches and when the VM dies.
pub fn release() {
    HOLD_EVENTS.release();
}

/// Whether events are held now.
pub fn is_held() -> bool {
    HOLD_EVENTS.is_held()
}

/// Blocks the event helper while events are held.
pub fn wait_while_held() {
    HOLD_EVENTS.wait_while_held();
}

#[cfg(test)]
mod tests {
    use super::Hold;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    #[test]
    fn waiting_ends_only_on_release() {
        let hold = Arc::new(Hold::new());
        hold.wait_while_held(); // not held: returns at once
        hold.hold();
        assert!(hold.is_held());
        let passed = Arc::new(AtomicBool::new(false));
        let waiter = {
            let (hold, passed) = (hold.clone(), passed.clone());
            std::thread::spawn(move || {
                hold.wait_while_held();
                passed.store(true, Ordering::SeqCst);
            })
        };
        // Holding twice is still one hold; the waiter stays put until the release.
        hold.hold();
        assert!(!passed.load(Ordering::SeqCst));
        hold.release();
        waiter.join().unwrap();
        assert!(passed.load(Ordering::SeqCst));
        assert!(!hold.is_held());
    }
}
