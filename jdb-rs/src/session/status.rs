//! How the session is doing, for its exit status: whether a command failed, whether
//! `deadlocks` found one, and whether the VM is gone (which ends the session).

/// Exit status when `deadlocks` found one.
pub const EXIT_DEADLOCK: i32 = 3;

#[derive(Default)]
pub struct Status {
    failed: bool,
    deadlocks_found: bool,
    ended: bool,
}

impl Status {
    /// Some command failed.
    pub fn fail(&mut self) {
        self.failed = true;
    }

    pub fn failed(&self) -> bool {
        self.failed
    }

    /// `deadlocks` found one.
    pub fn found_deadlock(&mut self) {
        self.deadlocks_found = true;
    }

    /// The VM exited or disconnected: the session is over.
    pub fn end(&mut self) {
        self.ended = true;
    }

    pub fn ended(&self) -> bool {
        self.ended
    }

    /// 3 if a deadlock was found, else 1 if a command failed, else 0.
    pub fn exit_code(&self) -> i32 {
        if self.deadlocks_found {
            EXIT_DEADLOCK
        } else if self.failed {
            1
        } else {
            0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deadlock_outranks_a_failure() {
        let mut s = Status::default();
        assert_eq!(s.exit_code(), 0);
        s.end();
        assert_eq!(s.exit_code(), 0, "the VM's end is no failure");
        s.fail();
        assert_eq!(s.exit_code(), 1);
        s.found_deadlock();
        assert_eq!(s.exit_code(), EXIT_DEADLOCK);
    }
}
