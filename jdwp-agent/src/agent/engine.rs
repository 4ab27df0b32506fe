//! State the [`Agent`](super::Agent) keeps for the event and step engine: plain data behind its
//! own locks, no VM calls. Each field names the module that owns its logic; only that module
//! reads or writes it (the agent is the one owner of the value, the module the one user).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU8, AtomicUsize};

use std::sync::{Arc, Condvar, Mutex, OnceLock};

use jni_sys::jlong;

pub mod steps;

use super::GlobalRef;
use super::lock_order::{Ranked, STEP_SWITCH};
use crate::events::breakpoint_table::BreakpointTable;
use crate::events::filter::Request;
use crate::jvmti::Jvmti;
use crate::jvmti::sys::jvmtiEvent;
use crate::step::switch_state::Switch;

/// Which of the two field watches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Watch {
    Access,
    Modification,
}

/// One set field watch ([`crate::events::breakpoints`]).
pub struct WatchEntry {
    pub count: u32,
    /// The class the watch was set through (a global reference, for clearing it).
    pub class: GlobalRef,
}

/// A watch: its kind, the ID of the class it was set through, the field.
pub type WatchKey = (Watch, u64, usize);

/// What a request set up in JVMTI, to be undone exactly when it goes ([`crate::events::install`]).
#[derive(Debug, Clone, Copy)]
pub enum Installed {
    Breakpoint(usize, i64),
    Watch(Watch, u64, usize),
    Step,
}

/// A JVMTI environment of the agent's own, for completing frame pops ([`crate::frame_pop`]): its
/// only event is single step, enabled for one thread while it runs to the end of a pop. Being
/// separate, it neither sees nor disturbs the debugger's step requests.
pub struct Popper {
    pub jvmti: Jvmti,
    pub state: Mutex<PopState>,
    pub changed: Condvar,
}

#[derive(Default)]
pub struct PopState {
    /// The ID (agent tag) of the thread being popped.
    pub target: Option<u64>,
    /// Counts pops; the step callback waits for the end of its own.
    pub started: u64,
    /// The last pop after which the thread was suspended: its callback may return to the VM (and
    /// stop there).
    pub finished: u64,
    /// The thread reached its caller in the current pop.
    pub arrived: bool,
}

/// Whether the `Thread.resume` guard's internal breakpoint is set, and where ([`crate::app_resume`];
/// read lock-free by breakpoint callbacks, changed under `setup`).
#[derive(Default)]
pub struct ResumeGuard {
    pub active: AtomicBool,
    pub method: AtomicUsize,
    pub index: AtomicI64,
}

/// The class unload tracker's environment: its tags mark classes ([`crate::events::unload`]).
pub struct Tracker {
    pub env: Jvmti,
    /// Tag → signature of the class it marks.
    pub names: Mutex<HashMap<jlong, String>>,
    pub next: AtomicI64,
}

/// Class unload tracking ([`crate::events::unload`]).
#[derive(Default)]
pub struct Unloads {
    /// Made when the first class unload request comes.
    pub tracker: OnceLock<Tracker>,
    /// Whether classes are being tracked (class prepare events are then needed).
    pub tracking: AtomicBool,
    /// Whether the event helper has been nudged and not yet looked.
    pub nudged: AtomicBool,
}

/// The methods of `java.lang.Module` the agent calls (bootstrap classes are never unloaded, so
/// the IDs stay valid; `commands::module_reference`).
pub struct ModuleMethods {
    pub class_get_module: usize,
    pub get_name: usize,
    pub get_class_loader: usize,
}

/// How method entries are caught ([`crate::events::entry`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EntryMode {
    /// No method entry request.
    #[default]
    Off = 0,
    /// The JVMTI `MethodEntry` event, for all threads.
    Global = 1,
    /// Breakpoints at the first bytecode of the methods of matching classes.
    Breakpoints = 2,
}

/// Method entry tracking ([`crate::events::entry`]).
#[derive(Default)]
pub struct EntryState {
    pub mode: EntryMode,
    /// Methods with an entry breakpoint → its code index (each holds one use of the breakpoint).
    pub methods: HashMap<usize, i64>,
    /// The requests whose classes get entry breakpoints.
    pub requests: Vec<Arc<Request>>,
}

/// The engine's state. Lock order: `setup` before any other of these; the others are leaves
/// (never held while taking another lock).
#[derive(Default)]
pub struct EngineState {
    /// Serializes every change to the JVMTI state behind requests ([`crate::events::setup`]).
    pub setup: Mutex<()>,
    /// The global mode last applied to each event ([`crate::events::modes`]).
    pub applied_modes: Ranked<HashMap<jvmtiEvent, bool>>,
    /// Set breakpoints: (method, code index) → their users and held events
    /// ([`crate::events::breakpoints`]).
    pub breakpoints: Ranked<BreakpointTable>,
    /// Set field watches → users ([`crate::events::breakpoints`]).
    pub watches: Ranked<HashMap<WatchKey, WatchEntry>>,
    /// Request ID → what it installed ([`crate::events::install`]); changed under `setup`.
    pub installed: Ranked<HashMap<i32, Installed>>,
    /// Field IDs named by watchpoint requests → their `jfieldID`s, for the `FieldOnly` filter
    /// (read by event threads; [`crate::events::install`]). Entries stay: field IDs are never reused.
    pub watched_fields: Ranked<HashMap<u64, usize>>,
    /// Whether a method has line numbers ([`crate::step`]; methods keep their IDs for the VM's life).
    pub has_lines: Ranked<HashMap<usize, bool>>,
    /// The stratum set by `VirtualMachine.SetDefaultStratum` ([`crate::sde`]; `None`: each
    /// class's own default).
    pub default_stratum: Ranked<Option<String>>,
    /// Tags of freed classes, queued by `ObjectFree` ([`crate::events::unload`]).
    pub freed: Ranked<Vec<jlong>>,
    /// Class unload tracking ([`crate::events::unload`]).
    pub unloads: Unloads,
    /// Method entry tracking ([`crate::events::entry`]).
    pub entry: Ranked<EntryState>,
    /// [`EntryState::mode`] as a number, read without the lock by every method entry callback.
    pub entry_mode: AtomicU8,
    /// The frame popper, made on the first `PopFrames` ([`crate::frame_pop`]).
    pub popper: OnceLock<Popper>,
    /// The `Thread.resume` guard ([`crate::app_resume`]).
    pub resume_guard: ResumeGuard,
    /// HotSpot's single-stepping switch ([`crate::step::switch`]); held across the JVMTI call that
    /// flips the keeper, never taken under another engine lock.
    pub step_switch: Ranked<Switch, STEP_SWITCH>,
    /// The thread that keeps single-stepping on between steps ([`crate::step::switch`]).
    pub step_keeper: OnceLock<GlobalRef>,
    /// Looked up on first use (`commands::module_reference`).
    pub module_methods: OnceLock<ModuleMethods>,
    /// Every thread's step ([`crate::step`]); a leaf, never held across a VM call.
    pub steps: Ranked<steps::Steps>,
    /// How many threads step: callbacks skip the step table when none does ([`crate::step`]).
    pub steps_active: AtomicUsize,
}
