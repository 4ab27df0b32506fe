//! The step table: every thread's JDWP step, as [`crate::step`] (its one user) keeps it, and the
//! data types of its decisions. Plain data, no VM calls; owned by the agent's engine state.

use std::collections::HashMap;
use std::sync::Arc;

use jdwp_protocol::{StepDepth, StepSize, ThreadId};

use crate::agent::GlobalRef;
use crate::events::filter::Request;
use crate::id_hash::IdMap;
use crate::jvmti::sys;

/// A method's line table as (first code index, line) pairs, sorted by code index.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Lines(Vec<(i64, i32)>);

impl Lines {
    pub fn new(mut entries: Vec<(i64, i32)>) -> Lines {
        // Class files need not list them in code order.
        entries.sort_by_key(|&(start, _)| start);
        Lines(entries)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The line of code index `index`: that of the last entry starting at or before it (code
    /// before the first entry belongs to the first line). `None` without a table or in native
    /// code (index -1).
    pub fn line_at(&self, index: i64) -> Option<i32> {
        if index < 0 {
            return None;
        }
        let after = self.0.partition_point(|&(start, _)| start <= index);
        self.0.get(after.saturating_sub(1)).map(|&(_, line)| line)
    }
}

/// Where a step began.
#[derive(Debug, Clone, Default)]
pub struct Origin {
    /// Frames on the stack (0: the thread had none, as in native code before its first Java frame).
    pub depth: i32,
    pub method: usize,
    /// The line it began on (`None`: no line numbers, native code, or a min step).
    pub line: Option<i32>,
    pub lines: Arc<Lines>,
    /// The origin frame was seen to pop (a frame pop at or below its depth).
    pub exited: bool,
    /// The step goes on from where an earlier step of the same request completed (a request
    /// without a count reports step after step), single-stepping as that one was (see
    /// [`crate::step::judge_step`]).
    pub continued: bool,
    /// A frame pop of the origin frame was asked for (a step out's), so one will say when it goes.
    pub pop_watched: bool,
}

/// Where a step stands between single steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Single-stepping.
    Stepping,
    /// Waiting, single-stepping off, for a frame pop; a step into also watches method entries.
    AwaitingReturn { watch_entries: bool },
}

/// The thread-level JVMTI events a thread's step needs. Frame pops and exception catches are
/// watched for as long as the step exists: they tell when a frame it waits for is gone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Needs {
    pub single_step: bool,
    pub frame_pop: bool,
    pub exception_catch: bool,
    pub method_entry: bool,
}

impl Needs {
    /// The thread-level events to set to go from `before` (`None`: not known) to `self`: each
    /// event with its new mode and its old one (`None`: not known).
    pub fn changes(self, before: Option<Needs>) -> impl Iterator<Item = (sys::jvmtiEvent, bool, Option<bool>)> {
        let modes = |n: Needs| {
            [
                (sys::JVMTI_EVENT_SINGLE_STEP, n.single_step),
                (sys::JVMTI_EVENT_FRAME_POP, n.frame_pop),
                (sys::JVMTI_EVENT_EXCEPTION_CATCH, n.exception_catch),
                (sys::JVMTI_EVENT_METHOD_ENTRY, n.method_entry),
            ]
        };
        let was = before.map(modes);
        modes(self).into_iter().enumerate().filter_map(move |(i, (event, on))| {
            let old = was.map(|w| w[i].1);
            (old != Some(on)).then_some((event, on, old))
        })
    }

    pub fn of(phase: Option<Phase>) -> Needs {
        let (single_step, method_entry) = match phase {
            None => return Needs::default(),
            Some(Phase::Stepping) => (true, false),
            Some(Phase::AwaitingReturn { watch_entries }) => (false, watch_entries),
        };
        Needs { single_step, frame_pop: true, exception_catch: true, method_entry }
    }
}

/// Where a step waits, at a breakpoint, for its thread to come back to a frame: the code index of
/// the frame's method after the call it is in, and the thread's frame count once it is back there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReturnPoint {
    pub method: usize,
    pub index: i64,
    pub depth: i32,
}

/// One thread's step.
pub struct StepState {
    /// Distinguishes this step from an earlier one of the same thread.
    pub serial: u64,
    pub request: Arc<Request>,
    /// Owned global reference to the stepping thread.
    pub thread: GlobalRef,
    pub size: StepSize,
    pub depth: StepDepth,
    pub origin: Origin,
    pub phase: Phase,
    /// The return breakpoint it waits at (only while awaiting a return).
    pub returning: Option<ReturnPoint>,
}

impl StepState {
    /// A new phase; any return breakpoint is left (the caller sets the next one, if any).
    pub fn set_phase(&mut self, phase: Phase) {
        self.phase = phase;
        self.returning = None;
    }
}

/// Every thread's step. Never locked across a JVMTI or JNI call.
#[derive(Default)]
pub struct Steps {
    pub by_thread: HashMap<ThreadId, StepState>,
    /// The thread-level events `step::resync` last set for each thread (`None`: not known, set them
    /// all next time); a thread missing here has none on.
    pub applied: IdMap<ThreadId, Option<Needs>>,
    /// How many `step::resync`s of each thread are setting modes right now.
    pub applying: IdMap<ThreadId, u32>,
    /// Bumped by every change, so that `step::resync` knows when to apply again.
    pub version: u64,
    pub next_serial: u64,
}
