//! The decisions of the single-stepping switch ([`super::switch`]), apart from JVMTI: when the
//! keeper switches single-stepping on, and when a release is due. Pure; the [`Switch`] itself is
//! owned by the agent (`agent.engine.step_switch`).

/// The decisions, apart from JVMTI.
#[derive(Debug, Default)]
pub struct Switch {
    /// The keeper has single-stepping enabled.
    pub held: bool,
    /// Bumped whenever a thread is about to single-step, so that a release decided before knows
    /// it is stale.
    pub generation: u64,
    /// A timed release is queued on the event helper (one at a time).
    pub release_queued: bool,
}

/// What a queued release finds when it is due.
#[derive(Debug, PartialEq, Eq)]
pub enum Due {
    /// Let go of the switch now.
    Release,
    /// A thread single-stepped since it was queued: queue it again for this generation.
    Again(u64),
    /// Nothing to do (not held, or a thread single-steps now and will queue a release when it stops).
    Nothing,
}

impl Switch {
    /// A thread is about to single-step: whether the keeper must switch single-stepping on first.
    pub fn stepping_starts(&mut self) -> bool {
        self.generation += 1;
        !self.held
    }

    /// A thread stopped single-stepping; `anyone_steps` says whether any still does (asked only
    /// while held with no release queued): the generation a release to queue must find, if one
    /// is to be queued.
    pub fn stepping_stopped(&mut self, anyone_steps: impl FnOnce() -> bool) -> Option<u64> {
        if !self.held || self.release_queued || anyone_steps() {
            return None;
        }
        self.release_queued = true;
        Some(self.generation)
    }

    /// The release queued at `generation` is due.
    pub fn due(&mut self, generation: u64, anyone_steps: bool) -> Due {
        self.release_queued = false;
        if !self.held || anyone_steps {
            Due::Nothing
        } else if generation == self.generation {
            Due::Release
        } else {
            self.release_queued = true;
            Due::Again(self.generation)
        }
    }

    /// The debugger is about to let threads run; `any_step` says whether a thread has a step:
    /// whether to let go now.
    pub fn threads_resuming(&self, any_step: bool) -> bool {
        self.held && !any_step
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn held() -> Switch {
        let mut s = Switch::default();
        assert!(s.stepping_starts(), "the first step switches the keeper on");
        s.held = true;
        s
    }

    #[test]
    fn steps_in_a_row_switch_the_keeper_on_once() {
        let mut s = held();
        let g = s.stepping_stopped(|| false).expect("a release is queued when the last thread stops");
        assert!(!s.stepping_starts(), "the next step finds the switch on");
        assert_eq!(s.stepping_stopped(|| false), None, "one queued release at a time");
        // The release queued before that step finds it stale and queues itself again.
        let again = s.due(g, false);
        assert_eq!(again, Due::Again(s.generation));
        let Due::Again(g2) = again else { unreachable!() };
        assert_eq!(s.due(g2, false), Due::Release);
    }

    #[test]
    fn a_release_waits_while_a_thread_single_steps() {
        let mut s = held();
        let g = s.stepping_stopped(|| false).unwrap();
        s.stepping_starts();
        assert_eq!(s.due(g, true), Due::Nothing, "the stepping thread queues a release when it stops");
        assert_eq!(s.stepping_stopped(|| true), None, "not while another thread single-steps");
        assert_eq!(s.stepping_stopped(|| false), Some(s.generation));
    }

    #[test]
    fn nothing_is_released_that_is_not_held() {
        let mut s = Switch::default();
        assert_eq!(s.stepping_stopped(|| false), None);
        assert_eq!(s.due(0, false), Due::Nothing);
        assert!(!s.threads_resuming(false));
    }

    #[test]
    fn resuming_with_no_step_left_lets_go_at_once() {
        let s = held();
        assert!(s.threads_resuming(false));
        assert!(!s.threads_resuming(true), "a step still under way keeps it");
    }
}
