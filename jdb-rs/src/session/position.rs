//! Where the user is looking: the current thread, the frame selected in it (0 is the top) and
//! the current thread group. jdb forgets all three when the VM resumes (`invalidateAll`) and makes
//! the event's thread current at every stop.

use jdi::{ThreadGroupReference, ThreadReference};

/// The current thread, frame and thread group.
#[derive(Default)]
pub struct Position {
    thread: Option<ThreadReference>,
    frame: i32,
    group: Option<ThreadGroupReference>,
}

impl Position {
    /// The current thread, if any.
    pub fn thread(&self) -> Option<&ThreadReference> {
        self.thread.as_ref()
    }

    /// The selected frame (0: the top one).
    pub fn frame_index(&self) -> i32 {
        self.frame
    }

    /// The current thread group, once one was chosen or looked up.
    pub fn group(&self) -> Option<&ThreadGroupReference> {
        self.group.as_ref()
    }

    pub fn set_group(&mut self, group: Option<ThreadGroupReference>) {
        self.group = group;
    }

    /// `thread N` (and the commands naming a thread): it becomes current, at its top frame.
    pub fn select(&mut self, thread: ThreadReference) {
        self.thread = Some(thread);
        self.frame = 0;
    }

    /// A stop: the event's thread becomes current at its top frame, the group is forgotten.
    pub fn stopped(&mut self, thread: Option<ThreadReference>) {
        self.thread = thread;
        self.frame = 0;
        self.group = None;
    }

    /// Makes `thread` current for a moment (the frame index stays); returns the previous one, for
    /// [`Position::restore`].
    pub fn swap_thread(&mut self, thread: ThreadReference) -> Option<ThreadReference> {
        self.thread.replace(thread)
    }

    /// Puts back the thread [`Position::swap_thread`] replaced.
    pub fn restore(&mut self, previous: Option<ThreadReference>) {
        self.thread = previous;
    }

    /// The current thread died or the VM went away: no current thread.
    pub fn clear_thread(&mut self) {
        self.thread = None;
        self.frame = 0;
    }

    /// The VM resumed: nothing is current (jdb's `invalidateAll`).
    pub fn invalidate(&mut self) {
        self.thread = None;
        self.frame = 0;
        self.group = None;
    }

    /// Back to the top frame (after `pop`).
    pub fn top_frame(&mut self) {
        self.frame = 0;
    }

    /// The frame to show in a stack of `count` frames: the selected one, or the bottom one when
    /// the stack got shallower. `None` for an empty stack.
    pub fn frame_in(&self, count: i32) -> Option<i32> {
        (count > 0).then(|| self.frame.min(count - 1))
    }

    /// `up n` (`up == true`: towards callers) or `down n` in a stack of `count` frames. The
    /// selection stays where it was when it would leave the stack.
    pub fn move_frame(&mut self, up: bool, n: i32, count: i32) -> Result<(), &'static str> {
        let target = if up { self.frame + n } else { self.frame - n };
        if target < 0 || target >= count {
            return Err("End of stack.");
        }
        self.frame = target;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_move_within_the_stack_only() {
        let mut p = Position::default();
        assert_eq!(p.move_frame(false, 1, 3), Err("End of stack."));
        assert_eq!(p.move_frame(true, 2, 3), Ok(()));
        assert_eq!(p.frame_index(), 2);
        assert_eq!(p.move_frame(true, 1, 3), Err("End of stack."));
        assert_eq!(p.frame_index(), 2, "a failed move keeps the selection");
        assert_eq!(p.move_frame(false, 1, 3), Ok(()));
        assert_eq!(p.frame_index(), 1);
        p.top_frame();
        assert_eq!(p.frame_index(), 0);
    }

    #[test]
    fn the_selected_frame_is_clamped_to_the_stack() {
        let mut p = Position::default();
        assert_eq!(p.frame_in(0), None);
        p.move_frame(true, 4, 5).unwrap();
        assert_eq!(p.frame_in(5), Some(4));
        assert_eq!(p.frame_in(2), Some(1));
        p.invalidate();
        assert_eq!(p.frame_index(), 0);
        assert!(p.thread().is_none() && p.group().is_none());
    }
}
