//! The agent's state: one [`Agent`] per VM, created in `Agent_OnLoad`, reached from callbacks and
//! agent threads through [`agent()`].
//!
//! # Locking rules
//!
//! A thread the debugger suspends stops at its next call into the VM (any JNI or JVMTI call). If it
//! held an agent lock at that moment, the debugger's next command needing that lock would hang the
//! session: the classic deadlock of debugger agents. Hence:
//!
//! * **Application threads** (event callbacks) take agent locks only around plain Rust code, never
//!   across a JNI or JVMTI call. They filter events on snapshots of the request table and hand
//!   matched events to the event helper thread, which does the rest.
//! * **Agent threads** (the session thread, the event helper) are never suspended, so they may
//!   hold locks across VM calls. Lock order: `Session::order` → `threads` → `ids`/`fields`/`methods`.
//! * An application thread may **wait** only where no agent lock is held and nothing an agent thread
//!   needs stays taken. There are two such waits: in `java.lang.Thread.resume`
//!   ([`crate::app_resume`]), on `threads`' condition variable, which releases that lock while
//!   waiting; and in an event callback when the event helper's queue is at its bound
//!   ([`crate::backpressure`]), on the bound's own lock, which no agent thread holds across
//!   anything.
//!
//! # Lock order
//!
//! Every lock the agent has, outermost first. A thread holding one may take only locks further
//! down the list; locks in the last group are leaves (nothing is taken while holding one, and,
//! but for `setup`'s users, no VM call is made under them). The rank in brackets is the lock's in
//! [`lock_order`]; locks marked "checked" are [`lock_order::Ranked`], and debug builds check, on
//! every acquire through [`lock`], that the thread holds no checked lock of the same or a higher
//! rank. The others keep their place by reading (each module's doc says which locks it holds
//! across what).
//!
//! 1. `Session::order` \[10\] (keeps replies and events in order; agent threads).
//! 2. `agent.engine.setup` \[20\] (every change to the JVMTI state behind requests; agent threads,
//!    held across JVMTI calls; see [`crate::events::setup`]).
//! 3. `agent.engine.step_switch` \[30, checked\] (held across the JVMTI call that flips the
//!    keeper; takes the step table under it).
//! 4. `agent.threads` \[40\] (thread control, with its condition variable), then
//!    `Session::handling`.
//! 5. `agent.requests` \[50, checked\] (the request table; snapshots are copied out of it).
//! 6. The profiler's `cpu` (the CPU sampler) and `thread_started` \[55, checked\] (agent
//!    threads, held across VM calls; never one under the other).
//! 7. Leaves \[60\]. Checked: `agent.ids`, `agent.fields`, `agent.methods`, `agent.frame_epochs`,
//!    `agent.agent_threads`, `agent.tracked_virtual_threads` (under which agent threads make
//!    JNI `NewLocalRef` calls, which never wait; see [`vthreads`]); the engine's tables (`applied_modes`, `breakpoints`, `watches`,
//!    `installed`, `watched_fields`, `has_lines`, `default_stratum`, `freed`, `entry`, `steps`);
//!    the invocation registry (`invoke.rs`'s `slots`), the allocation and monitor profilers'
//!    state. By reading: `agent.threads`' queue of renames (taken under `threads` when it is locked,
//!    and alone after the ID table's lock is released; see [`Threads::rename`]),
//!    `agent.session` (with its condition variable), the unload tracker's
//!    `names`, the popper's `state`, each invocation slot's `state`, the GC watch's and the live
//!    event stream's locks, the event gate's locks (`gate.rs`: its state and the bound), the
//!    transport's write lock.
//!
//! Outside this order: the memos in [`owned::Memo`] are `OnceLock`s (no lock is held while one
//! is made but what its user holds), and the command trace file's lock is a leaf of its own.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};

use crate::jvmti::sys::jthread;
use jdwp_protocol::{
    ArrayId, ArrayTypeId, ClassId, ClassLoaderId, ClassObjectId, ErrorCode, FieldId, FrameId, IdSizes, InterfaceId,
    MethodId, ModuleId, ObjectId, ReferenceTypeId, Tag, ThreadGroupId, ThreadId, TypeTag,
};
use jni_sys::{jclass, jfieldID, jmethodID, jobject};

pub mod collectable;
pub mod engine;
pub mod helper;
pub mod lock_order;
pub mod owned;
pub mod raw_event;
pub mod vthreads;

use crate::events::requests::RequestTable;
use crate::id_hash::{IdMap, IdVec};
use crate::id_kinds::{Kind, Named, TypeKind};
use crate::jni::{JavaVm, Jni};
use crate::jvmti::Jvmti;
use crate::options::Options;
use crate::session::Session;
use crate::thread_control::Threads;
use crate::tid_index::TidIndex;
use crate::virtual_threads::Tracked;
use lock_order::{REQUESTS, Ranked};

/// A JNI global (or weak global) reference: valid on every thread until deleted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct GlobalRef(pub jobject);

// SAFETY: global references are valid on any attached thread (JNI spec); the wrapper only carries
// the pointer, every use goes through JNI on an attached thread.
unsafe impl Send for GlobalRef {}
// SAFETY: as above; sharing the pointer value is harmless.
unsafe impl Sync for GlobalRef {}

/// Classes the agent tests objects against, pinned for the VM's life.
pub struct KnownClasses {
    pub object: GlobalRef,
    pub class: GlobalRef,
    pub string: GlobalRef,
    pub thread: GlobalRef,
    pub thread_group: GlobalRef,
    pub class_loader: GlobalRef,
    pub throwable: GlobalRef,
    pub module: GlobalRef,
}

/// Everything the agent knows, for the life of the VM.
pub struct Agent {
    pub jvmti: Jvmti,
    pub vm: JavaVm,
    pub options: Options,
    pub ids: Ranked<ObjectTable>,
    /// The threads resolving a reference copied out of `ids` (see [`collectable`]).
    id_readers: collectable::Readers,
    pub fields: Ranked<FieldTable>,
    pub methods: Ranked<HashSet<usize>>,
    pub threads: Threads,
    /// Per thread, how many times it was resumed: part of every frame ID, so frames go stale.
    pub frame_epochs: Ranked<IdMap<ThreadId, u32>>,
    pub requests: Ranked<RequestTable, REQUESTS>,
    pub known: OnceLock<KnownClasses>,
    /// The agent's own threads, hidden from the debugger and never suspended (a fixed array, so
    /// event threads can copy it out without allocating and compare outside the lock).
    pub agent_threads: Ranked<[Option<GlobalRef>; 6]>,
    session: Mutex<Option<Arc<Session>>>,
    session_changed: Condvar,
    /// Set when the first debugger attaches (see [`Agent::wait_for_first_debugger`]).
    debugger_came: AtomicBool,
    pub vm_dead: AtomicBool,
    /// The exit code `VirtualMachine.Exit` asked for, applied by the session once its reply is
    /// written.
    pub pending_exit: PendingExit,
    pub helper: OnceLock<helper::EventHelper>,
    /// What the event helper may send when, and its inbox (see [`crate::gate`]).
    pub gate: crate::gate::Gate<helper::Job>,
    /// The event and step engine's state (see [`engine`]).
    pub engine: engine::EngineState,
    /// Invocation slots and the completer ([`crate::invoke`]'s, kept as [`owned::Owned`]).
    pub invocations: owned::Owned,
    /// The profilers' state.
    pub profilers: owned::Profilers,
    /// How debugging starts ([`crate::loader`]).
    pub startup: owned::Startup,
    /// Facts about the VM looked up once.
    pub memo: owned::Memo,
    /// The virtual threads started since tracking began (`includevirtualthreads=y`; see
    /// [`vthreads`]), as weak global references.
    pub tracked_virtual_threads: Ranked<Tracked<GlobalRef>>,
}

// The one root static: JVMTI and JNI callbacks carry no context pointer, so they reach the agent
// here; everything else the agent has hangs off it.
static AGENT: OnceLock<Agent> = OnceLock::new();

/// An exit code waiting for its reply to be written: any `i32` (`i32::MIN` included, which a
/// fuzzer found once meant "none"), or none.
pub struct PendingExit(std::sync::atomic::AtomicI64);

impl PendingExit {
    /// No `i32` widens to this.
    const NONE: i64 = i64::MIN;

    pub const fn new() -> PendingExit {
        PendingExit(std::sync::atomic::AtomicI64::new(Self::NONE))
    }

    pub fn set(&self, code: i32) {
        self.0.store(i64::from(code), Ordering::SeqCst);
    }

    /// The code asked for, if any (and none after this).
    pub fn take(&self) -> Option<i32> {
        i32::try_from(self.0.swap(Self::NONE, Ordering::SeqCst)).ok()
    }
}

impl Default for PendingExit {
    fn default() -> Self {
        Self::new()
    }
}

/// The agent, once `Agent_OnLoad` has created it.
pub fn agent() -> Option<&'static Agent> {
    AGENT.get()
}

pub(crate) fn install(agent: Agent) -> Result<&'static Agent, ErrorCode> {
    AGENT.set(agent).map_err(|_| ErrorCode::INTERNAL)?;
    AGENT.get().ok_or(ErrorCode::INTERNAL)
}

/// The ID widths this agent announces: 8 bytes for everything.
pub const ID_SIZES: IdSizes = IdSizes { field_id: 8, method_id: 8, object_id: 8, reference_type_id: 8, frame_id: 8 };

impl Agent {
    pub fn new(jvmti: Jvmti, vm: JavaVm, options: Options) -> Agent {
        Agent {
            jvmti,
            vm,
            options,
            ids: Ranked::new(ObjectTable::default()),
            id_readers: collectable::Readers::default(),
            fields: Ranked::new(FieldTable::default()),
            methods: Ranked::new(HashSet::new()),
            threads: Threads::default(),
            frame_epochs: Ranked::new(IdMap::default()),
            requests: Ranked::new(RequestTable::default()),
            known: OnceLock::new(),
            agent_threads: Ranked::new([None; 6]),
            session: Mutex::new(None),
            session_changed: Condvar::new(),
            debugger_came: AtomicBool::new(false),
            vm_dead: AtomicBool::new(false),
            pending_exit: PendingExit::new(),
            helper: OnceLock::new(),
            gate: crate::gate::Gate::new(),
            engine: engine::EngineState::default(),
            invocations: owned::Owned::new(),
            profilers: owned::Profilers::default(),
            startup: owned::Startup::default(),
            memo: owned::Memo::default(),
            tracked_virtual_threads: Ranked::new(Tracked::default()),
        }
    }

    /// The JNI environment of the calling thread (attached: a callback or an agent thread).
    pub fn jni(&self) -> Result<Jni, ErrorCode> {
        self.vm.get_jni(jni_sys::JNI_VERSION_1_8).map_err(|_| ErrorCode::UNATTACHED_THREAD)
    }

    pub fn known(&self) -> Result<&KnownClasses, ErrorCode> {
        self.known.get().ok_or(ErrorCode::VM_DEAD)
    }

    pub fn session(&self) -> Option<Arc<Session>> {
        lock(&self.session).clone()
    }

    pub(crate) fn set_session(&self, session: Option<Arc<Session>>) {
        let mut guard = lock(&self.session);
        if session.is_some() {
            self.debugger_came.store(true, Ordering::Release);
        }
        *guard = session;
        self.session_changed.notify_all();
    }

    /// Blocks until a debugger has attached (`suspend=y` at startup). Returns even if that
    /// debugger has left again meanwhile: a quick attach-and-dispose must let the VM run, not
    /// leave it waiting for a second debugger.
    pub(crate) fn wait_for_first_debugger(&self) {
        let mut guard = lock(&self.session);
        while !self.debugger_came.load(Ordering::Acquire) {
            guard = self.session_changed.wait(guard).unwrap_or_else(|e| e.into_inner());
        }
    }

    pub fn is_agent_thread(&self, jni: Jni, thread: jthread) -> bool {
        let threads = *lock(&self.agent_threads);
        threads.iter().flatten().any(|t| jni.is_same_object(t.0, thread))
    }

    pub(crate) fn add_agent_thread(&self, thread: GlobalRef) -> Result<(), ErrorCode> {
        let mut threads = lock(&self.agent_threads);
        let slot = threads.iter_mut().find(|t| t.is_none()).ok_or(ErrorCode::INTERNAL)?;
        *slot = Some(thread);
        Ok(())
    }

    // ---- objects ------------------------------------------------------------------------------

    /// The ID of an object (0 for null), assigning one if it has none. Agent threads only.
    pub fn object_id(&self, jni: Jni, obj: jobject) -> Result<ObjectId, ErrorCode> {
        self.object_id_of(jni, obj, Known::Object)
    }

    /// [`Agent::object_id`], for an object whose kind the caller knows (see `ObjectEntry`).
    fn object_id_of(&self, jni: Jni, obj: jobject, kind: Known) -> Result<ObjectId, ErrorCode> {
        self.object_id_signed(jni, obj, kind, None)
    }

    /// [`Agent::object_id_of`], with a class's signature when the caller has it already (so that
    /// a new class ID does not ask JVMTI for it again).
    fn object_id_signed(
        &self,
        jni: Jni,
        obj: jobject,
        kind: Known,
        signature: Option<&str>,
    ) -> Result<ObjectId, ErrorCode> {
        if obj.is_null() {
            return Ok(ObjectId::NULL);
        }
        // A virtual thread's ID is found by its `tid`, never by a tag (see `ObjectTable::by_tid`):
        // a thread the caller knows is one is checked first, with no `GetTag`.
        let tid = if kind == Known::Thread { self.virtual_tid(jni, obj) } else { None };
        let mut table = lock(&self.ids);
        if let Some(tid) = tid {
            return self.virtual_thread_id(jni, &mut table, obj, tid);
        }
        let tag = self.jvmti.get_tag(obj)?;
        if let Some(entry) = (tag > 0).then(|| table.get_mut(tag as u64)).flatten() {
            entry.thread |= kind == Known::Thread;
            if entry.hidden {
                let (from, to) = self.expose_hidden_thread(jni, &mut table, obj, tag as u64)?;
                drop(table);
                self.threads.rename(from, to);
                return Ok(ObjectId(to.0));
            }
            return Ok(ObjectId(tag as u64));
        }
        let tid = if kind == Known::Object { self.virtual_tid(jni, obj) } else { None };
        if let Some(tid) = tid {
            return self.virtual_thread_id(jni, &mut table, obj, tid);
        }
        self.new_object_id_signed(jni, &mut table, obj, kind, signature)
    }

    /// The `tid` of a virtual thread (`java.lang.Thread.tid`, unique for the life of the VM), or
    /// `None` for anything else, on any VM without virtual threads (no JNI call there) and on a
    /// VM whose `Thread` has no such field (IDs then go by tags, as for every other object).
    /// Any thread: JNI calls only, no lock.
    fn virtual_tid(&self, jni: Jni, obj: jobject) -> Option<i64> {
        if !self.supports_virtual_threads() || !jni.is_virtual_thread(obj) {
            return None;
        }
        self.tid(jni, obj)
    }

    /// `java.lang.Thread.tid` of the thread `obj`, if `Thread` has that field.
    fn tid(&self, jni: Jni, obj: jobject) -> Option<i64> {
        // Looked up from the thread's own class (`GetFieldID` finds `Thread`'s field through it):
        // this may run first in an application thread's callback, where `FindClass` would load
        // through the application's class loader, running Java code.
        let field = *self.memo.thread_tid.get_or_init(|| {
            let class = jni.get_object_class(obj).ok()?;
            let field = jni.get_field_id(class, "tid", "J").ok();
            jni.delete_local_ref(class);
            field.map(|f| f as usize)
        });
        // SAFETY: `field` is `java.lang.Thread.tid`, a `long`, and `obj` is a live reference to a
        // thread.
        field.map(|f| unsafe { jni.get_field(obj, f as jfieldID, crate::jni::JavaType::Long).j })
    }

    /// The ID of the virtual thread `obj` whose `tid` is `tid`, assigning one if it has none.
    fn virtual_thread_id(
        &self,
        jni: Jni,
        table: &mut ObjectTable,
        obj: jobject,
        tid: i64,
    ) -> Result<ObjectId, ErrorCode> {
        // One search for both the lookup and the insertion (a thread start's thread is new).
        let id = table.entries.next_id();
        if let Err(known) = table.by_tid.get_or_insert(tid, id) {
            return Ok(ObjectId(known));
        }
        let added = self.add_entry(jni, table, obj, NewEntry::VirtualThread { tid });
        if added.is_err() {
            table.by_tid.remove(tid);
        }
        added.map(ObjectId)
    }

    /// Gives `obj`, which has no ID yet, the next one.
    fn new_object_id(
        &self,
        jni: Jni,
        table: &mut ObjectTable,
        obj: jobject,
        kind: Known,
    ) -> Result<ObjectId, ErrorCode> {
        self.new_object_id_signed(jni, table, obj, kind, None)
    }

    /// [`Agent::new_object_id`], with the class's signature if the caller has it.
    fn new_object_id_signed(
        &self,
        jni: Jni,
        table: &mut ObjectTable,
        obj: jobject,
        kind: Known,
        signature: Option<&str>,
    ) -> Result<ObjectId, ErrorCode> {
        let lasting = kind == Known::Class && self.class_lasts_with_vm(jni, table, obj, signature);
        self.add_entry(jni, table, obj, NewEntry::Object { thread: kind == Known::Thread, lasting }).map(ObjectId)
    }

    /// Gives a live thread that has no ID an internal one (see `ObjectEntry::hidden`).
    fn new_hidden_thread_id(&self, jni: Jni, table: &mut ObjectTable, thread: jthread) -> Result<ThreadId, ErrorCode> {
        self.add_entry(jni, table, thread, NewEntry::HiddenThread).map(ThreadId)
    }

    /// The debugger hears of a thread that has an internal ID (`hidden`): it gets the next ID of
    /// the ordinary sequence, which becomes its tag; the internal ID's entry stays, naming the same
    /// thread (each entry with its own reference, forgotten on its own once the thread is gone).
    /// The caller tells thread control once the ID table's lock is released.
    fn expose_hidden_thread(
        &self,
        jni: Jni,
        table: &mut ObjectTable,
        thread: jthread,
        hidden: u64,
    ) -> Result<(ThreadId, ThreadId), ErrorCode> {
        if table.get(hidden).is_none() {
            return Err(ErrorCode::INTERNAL);
        }
        let id = self.add_entry(jni, table, thread, NewEntry::ExposedThread)?;
        Ok((ThreadId(hidden), ThreadId(id)))
    }

    /// Makes the entry of a new ID for `obj` and returns the ID: its weak reference, its tag
    /// (every object but a virtual thread, see `ObjectTable::by_tid`), its place in the
    /// collectable list and, while the VM is suspended, its hold, as `new` says.
    fn add_entry(&self, jni: Jni, table: &mut ObjectTable, obj: jobject, new: NewEntry) -> Result<u64, ErrorCode> {
        let weak = GlobalRef(jni.new_weak_global_ref(obj)?);
        let hidden = new == NewEntry::HiddenThread;
        let id = if hidden { HIDDEN_IDS + table.hidden.next_id() } else { table.entries.next_id() };
        let tid = match new {
            NewEntry::VirtualThread { tid } => tid,
            _ => {
                if let Err(e) = self.jvmti.set_tag(obj, id as i64) {
                    jni.delete_weak_global_ref(weak.0);
                    return Err(e.into());
                }
                0
            }
        };
        if !matches!(new, NewEntry::Object { lasting: true, .. }) {
            table.list_collectable(jni, &self.id_readers, weak, id);
        }
        // While the VM is suspended, new IDs are held like the others (see `ObjectTable`). A
        // hidden or exposed thread is alive, so never collectable meanwhile.
        let held = matches!(new, NewEntry::Object { lasting: false, .. } | NewEntry::VirtualThread { .. });
        if held && table.suspend_pinned {
            table.suspend_pins.extend(jni.new_global_ref(obj).ok().map(GlobalRef));
        }
        let thread = !matches!(new, NewEntry::Object { thread: false, .. });
        let entry = ObjectEntry { weak, pinned: None, thread, hidden, tid };
        let pushed = if hidden { HIDDEN_IDS + table.hidden.push(entry) } else { table.entries.push(entry) };
        debug_assert_eq!(pushed, id);
        Ok(id)
    }

    /// Whether a class can never be unloaded, so that holding it while the VM is suspended would
    /// change nothing: see [`class_lasts_with_vm`]. Agent threads only (under the ID table's lock).
    fn class_lasts_with_vm(&self, jni: Jni, table: &mut ObjectTable, class: jclass, signature: Option<&str>) -> bool {
        let Ok(loader) = self.jvmti.get_class_loader(class) else { return false };
        let loader_kind = if loader.is_null() {
            LoaderKind::Boot
        } else {
            let kind = self.loader_kind(jni, table, loader);
            jni.delete_local_ref(loader);
            kind
        };
        if loader_kind == LoaderKind::Other {
            return false;
        }
        if let Some(signature) = signature {
            return class_lasts_with_vm(loader_kind, signature);
        }
        match self.jvmti.get_class_signature(class) {
            Ok((signature, _)) => class_lasts_with_vm(loader_kind, &signature),
            Err(_) => false,
        }
    }

    /// Whether `loader` is one of the JDK's two built-in loaders above the boot loader. Each is a
    /// single instance of its own JDK-internal class; once seen, it is remembered, so later classes
    /// cost one `IsSameObject` each.
    fn loader_kind(&self, jni: Jni, table: &mut ObjectTable, loader: jobject) -> LoaderKind {
        if table.builtin_loaders.iter().any(|l| jni.is_same_object(l.0, loader)) {
            return LoaderKind::BuiltIn;
        }
        let Ok(loader_class) = jni.get_object_class(loader) else { return LoaderKind::Other };
        let signature = self.jvmti.get_class_signature(loader_class).map(|(s, _)| s);
        jni.delete_local_ref(loader_class);
        let builtin = matches!(
            signature.as_deref(),
            Ok("Ljdk/internal/loader/ClassLoaders$AppClassLoader;"
                | "Ljdk/internal/loader/ClassLoaders$PlatformClassLoader;")
        );
        if !builtin {
            return LoaderKind::Other;
        }
        if let Ok(global) = jni.new_global_ref(loader) {
            table.builtin_loaders.push(GlobalRef(global));
        }
        LoaderKind::BuiltIn
    }

    /// A local reference to the object with this ID (null for ID 0); `INVALID_OBJECT` if it was
    /// never handed out or has been collected.
    pub fn object(&self, jni: Jni, id: ObjectId) -> Result<jobject, ErrorCode> {
        if id.is_null() {
            return Ok(std::ptr::null_mut());
        }
        // Copy the weak reference out, then call JNI without the lock (see the locking rules),
        // counted as a reader meanwhile so that the reference is not deleted under us (see
        // [`collectable`]). A pinned object is strongly reachable, so the weak reference resolves
        // exactly while the object lives; a forgotten one (null) names an object that is gone.
        let (weak, _reading) = {
            let table = lock(&self.ids);
            let weak = table.get(id.0).map(|e| e.weak).ok_or(ErrorCode::INVALID_OBJECT)?;
            (weak, self.id_readers.enter())
        };
        if weak.0.is_null() {
            return Err(ErrorCode::INVALID_OBJECT);
        }
        let local = jni.new_local_ref(weak.0);
        if local.is_null() { Err(ErrorCode::INVALID_OBJECT) } else { Ok(local) }
    }

    // ---- checked lookups: one per kind of parameter the spec types ------------------------------
    //
    // Every ID a command takes from the debugger is resolved by one of these, which check it names
    // what the spec says it must before JNI or JVMTI see it (see `crate::id_kinds`). Each returns a
    // local reference (dying with the command's local frame).

    /// The object `id` names, checked to be of `kind`: a local reference, null only for the
    /// bootstrap class loader.
    pub fn checked(&self, jni: Jni, id: ObjectId, kind: Kind) -> Result<jobject, ErrorCode> {
        let obj = match self.object(jni, id) {
            Ok(obj) => obj,
            Err(_) => return crate::id_kinds::check(kind, Named::Nothing).map(|()| std::ptr::null_mut()),
        };
        let named = if obj.is_null() { Named::Null } else { self.classify(jni, obj, kind)? };
        match crate::id_kinds::check(kind, named) {
            Ok(()) => Ok(obj),
            Err(e) => {
                if !obj.is_null() {
                    jni.delete_local_ref(obj);
                }
                Err(e)
            }
        }
    }

    /// What a live object is, as far as the check for `kind` needs to know.
    fn classify(&self, jni: Jni, obj: jobject, kind: Kind) -> Result<Named, ErrorCode> {
        let known = self.known()?;
        let class = match kind {
            Kind::Object => return Ok(Named::Instance),
            Kind::Thread => known.thread.0,
            Kind::ThreadGroup => known.thread_group.0,
            Kind::ClassLoader => known.class_loader.0,
            Kind::String => known.string.0,
            Kind::Module => known.module.0,
            Kind::Throwable => known.throwable.0,
            Kind::Array => {
                let class = jni.get_object_class(obj)?;
                let is_array = self.jvmti.is_array_class(class);
                jni.delete_local_ref(class);
                return Ok(if is_array? { Named::Instance } else { Named::Other });
            }
            Kind::ClassObject | Kind::ReferenceType => known.class.0,
            Kind::ClassType | Kind::InterfaceType | Kind::ArrayType => {
                if !jni.is_instance_of(obj, known.class.0) {
                    return Ok(Named::Other);
                }
                use crate::jvmti::sys::{JVMTI_CLASS_STATUS_ARRAY, JVMTI_CLASS_STATUS_PRIMITIVE};
                let status = self.jvmti.get_class_status(obj)?;
                let plain = status & (JVMTI_CLASS_STATUS_ARRAY | JVMTI_CLASS_STATUS_PRIMITIVE) == 0;
                let is_interface = plain && self.jvmti.is_interface(obj)?;
                return Ok(Named::Type(TypeKind::from_status(status, is_interface)));
            }
        };
        Ok(if jni.is_instance_of(obj, class) { Named::Instance } else { Named::Other })
    }

    /// An object that must exist (null is `INVALID_OBJECT`).
    pub fn non_null_object(&self, jni: Jni, id: ObjectId) -> Result<jobject, ErrorCode> {
        self.checked(jni, id, Kind::Object)
    }

    /// Any reference type (class, interface, array type; primitive types pass too, as with the
    /// JDK's agent). As with the JDK's agent, an ID that names no object is `INVALID_OBJECT`, and
    /// null or another kind of object is `INVALID_CLASS`.
    pub fn class(&self, jni: Jni, id: ReferenceTypeId) -> Result<jclass, ErrorCode> {
        self.checked(jni, ObjectId(id.0), Kind::ReferenceType)
    }

    /// A class type: not an interface, an array type or a primitive type (`INVALID_CLASS`).
    pub fn class_type(&self, jni: Jni, id: ClassId) -> Result<jclass, ErrorCode> {
        self.checked(jni, ObjectId(id.0), Kind::ClassType)
    }

    /// An interface type (`INVALID_CLASS` otherwise).
    pub fn interface_type(&self, jni: Jni, id: InterfaceId) -> Result<jclass, ErrorCode> {
        self.checked(jni, ObjectId(id.0), Kind::InterfaceType)
    }

    /// An array type: `INVALID_CLASS` for an object that is no class, `INVALID_ARRAY` for another
    /// type.
    pub fn array_type(&self, jni: Jni, id: ArrayTypeId) -> Result<jclass, ErrorCode> {
        self.checked(jni, ObjectId(id.0), Kind::ArrayType)
    }

    /// A `java.lang.Class` object, whatever it reflects (`INVALID_CLASS` otherwise, as the JDK's
    /// agent answers).
    pub fn class_object(&self, jni: Jni, id: ClassObjectId) -> Result<jclass, ErrorCode> {
        self.checked(jni, ObjectId(id.0), Kind::ClassObject)
    }

    /// A thread by ID, checked to really be a thread the debugger may see: `INVALID_OBJECT` for an
    /// ID that names no object, `INVALID_THREAD` for null, another kind of object (as the JDK's
    /// agent answers) or one of the agent's own threads.
    pub fn thread(&self, jni: Jni, id: ThreadId) -> Result<jthread, ErrorCode> {
        let t = self.checked(jni, ObjectId(id.0), Kind::Thread)?;
        if self.is_agent_thread(jni, t) {
            jni.delete_local_ref(t);
            return Err(ErrorCode::INVALID_THREAD);
        }
        Ok(t)
    }

    /// A thread group (`INVALID_THREAD_GROUP` for null or another kind of object).
    pub fn thread_group(&self, jni: Jni, id: ThreadGroupId) -> Result<jobject, ErrorCode> {
        self.checked(jni, ObjectId(id.0), Kind::ThreadGroup)
    }

    /// A class loader; null is the bootstrap loader (`INVALID_CLASS_LOADER` for another object).
    pub fn class_loader(&self, jni: Jni, id: ClassLoaderId) -> Result<jobject, ErrorCode> {
        self.checked(jni, ObjectId(id.0), Kind::ClassLoader)
    }

    /// A `java.lang.String` (`INVALID_STRING` for null or another kind of object).
    pub fn string(&self, jni: Jni, id: ObjectId) -> Result<jobject, ErrorCode> {
        self.checked(jni, id, Kind::String)
    }

    /// An array (`INVALID_ARRAY` for null or another kind of object).
    pub fn array(&self, jni: Jni, id: ArrayId) -> Result<jobject, ErrorCode> {
        self.checked(jni, ObjectId(id.0), Kind::Array)
    }

    /// A `java.lang.Module` (`INVALID_MODULE` for anything else, an unknown ID included).
    pub fn module(&self, jni: Jni, id: ModuleId) -> Result<jobject, ErrorCode> {
        self.checked(jni, ObjectId(id.0), Kind::Module)
    }

    /// A `java.lang.Throwable` (`INVALID_OBJECT` for null or another kind of object).
    pub fn throwable(&self, jni: Jni, id: ObjectId) -> Result<jobject, ErrorCode> {
        self.checked(jni, id, Kind::Throwable)
    }

    /// The ID a thread already has, if any: safe on any thread (the VM calls come before the
    /// lock, which guards plain data only; see the locking rules).
    pub fn existing_thread_id(&self, thread: jthread) -> Option<ThreadId> {
        let key = self.id_key(thread)?;
        let table = lock(&self.ids);
        // An internal ID is none: the debugger must hear of the thread under its own.
        key.find(&table).filter(|&id| table.entries.contains(id)).map(ThreadId)
    }

    /// The ID an object already has (ordinary or internal), if any: its tag, or for a virtual
    /// thread its entry by `tid` (see `ObjectTable::by_tid`). This replaces comparing tags in
    /// the callbacks (event filters, steps, frame pops). Any thread: the VM calls come before the
    /// lock, which is taken only for a virtual thread.
    pub fn known_id(&self, obj: jobject) -> Option<u64> {
        match self.id_key(obj)? {
            IdKey::Tag(id) => Some(id),
            key => key.find(&lock(&self.ids)),
        }
    }

    /// What finds an object's ID, if it may have one (VM calls only, no lock).
    fn id_key(&self, obj: jobject) -> Option<IdKey> {
        match self.jvmti.get_tag(obj) {
            Ok(tag) if tag > 0 => Some(IdKey::Tag(tag as u64)),
            Ok(_) => self.virtual_tid(self.jni().ok()?, obj).map(IdKey::Tid),
            Err(_) => None,
        }
    }

    /// The thread ID of a thread object (agent threads included; callers filter).
    pub fn thread_id(&self, jni: Jni, thread: jthread) -> Result<ThreadId, ErrorCode> {
        self.object_id_of(jni, thread, Known::Thread).map(|id| ThreadId(id.0))
    }

    /// [`Agent::thread_id`] of a thread a JVMTI event reported as virtual: no JNI call asks
    /// whether it is one (the event helper's path for each virtual thread's start and end).
    pub fn virtual_thread_id_of(&self, jni: Jni, thread: jthread) -> Result<ThreadId, ErrorCode> {
        match self.supports_virtual_threads().then(|| self.tid(jni, thread)).flatten() {
            Some(tid) => self.virtual_thread_id(jni, &mut lock(&self.ids), thread, tid).map(|id| ThreadId(id.0)),
            None => self.thread_id(jni, thread),
        }
    }

    /// The IDs of every live thread but the agent's own, for suspending them all (`for_debugger`
    /// false) or for the debugger (`AllThreads`). Agent threads only.
    ///
    /// A thread the debugger has not heard of gets an internal ID only, to be counted by (see
    /// `ObjectEntry::hidden`): the JDK's agent numbers objects as they first reach the debugger,
    /// and debuggers show these numbers (jdb's thread IDs), so suspending threads must not use up
    /// the next ones. The debugger gets them with the next ID of the ordinary sequence the first
    /// time it hears of them.
    ///
    /// This runs at every suspend-all event, over every thread of the VM: it takes the ID table's
    /// lock once, not once per thread, and threads that have IDs already cost one JVMTI call each.
    pub fn live_thread_ids(&self, jni: Jni, for_debugger: bool) -> Result<Vec<ThreadId>, ErrorCode> {
        let all = self.jvmti.get_all_threads()?;
        // The agent's threads (copied out: `agent_threads` is a leaf, not taken under `ids`), and
        // by tag (0: none), to leave them out without a JNI call per thread.
        let agent_threads = *lock(&self.agent_threads);
        let agent_tags: Vec<i64> =
            agent_threads.iter().flatten().map(|a| self.jvmti.get_tag(a.0).unwrap_or(0)).collect();
        let mut out = Vec::with_capacity(all.len());
        let mut renames = Vec::new();
        let result = (|| {
            let tags: Vec<i64> = all.iter().map(|&t| self.jvmti.get_tag(t).unwrap_or(0)).collect();
            let mut table = lock(&self.ids);
            for (&t, tag) in all.iter().zip(tags) {
                if tag > 0 && agent_tags.contains(&tag) {
                    continue;
                }
                if let Some(entry) = (tag > 0).then(|| table.get_mut(tag as u64)).flatten() {
                    entry.thread = true;
                    if entry.hidden && for_debugger {
                        let (from, to) = self.expose_hidden_thread(jni, &mut table, t, tag as u64)?;
                        renames.push((from, to));
                        out.push(to);
                    } else {
                        out.push(ThreadId(tag as u64));
                    }
                } else if !agent_threads.iter().flatten().any(|a| jni.is_same_object(a.0, t)) {
                    out.push(if for_debugger {
                        ThreadId(self.new_object_id(jni, &mut table, t, Known::Thread)?.0)
                    } else {
                        self.new_hidden_thread_id(jni, &mut table, t)?
                    });
                }
            }
            Ok(())
        })();
        // After the ID table's lock (a leaf) is released.
        for (from, to) in renames {
            self.threads.rename(from, to);
        }
        for &t in all.iter() {
            jni.delete_local_ref(t);
        }
        result.map(|()| out)
    }

    /// JNI references to threads by ID, for one suspend or resume call over all of them: the ID
    /// table's weak reference for a thread known to be one (the thread is alive or suspended, so
    /// the reference resolves; JVMTI takes any kind of JNI reference), a checked local reference
    /// otherwise (`owned`: the caller deletes it). Agent threads only. The references stay
    /// valid while the returned reader is kept (see [`collectable`]).
    pub fn thread_refs(
        &self,
        jni: Jni,
        threads: &[ThreadId],
    ) -> (Vec<Result<ThreadRef, ErrorCode>>, collectable::Reading<'_>) {
        let (known, reading): (Vec<Option<jobject>>, _) = {
            let table = lock(&self.ids);
            let known = threads
                .iter()
                .map(|t| table.get(t.0).filter(|e| e.thread && !e.weak.0.is_null()).map(|e| e.weak.0))
                .collect();
            (known, self.id_readers.enter())
        };
        let refs = threads
            .iter()
            .zip(known)
            .map(|(t, weak)| match weak {
                Some(weak) => Ok((weak, false)),
                None => self.thread(jni, *t).map(|local| (local, true)),
            })
            .collect();
        (refs, reading)
    }

    pub fn class_id(&self, jni: Jni, class: jclass) -> Result<ReferenceTypeId, ErrorCode> {
        self.object_id_of(jni, class, Known::Class).map(|id| ReferenceTypeId(id.0))
    }

    /// The JDWP type tag of a class.
    pub fn type_tag(&self, class: jclass) -> Result<TypeTag, ErrorCode> {
        Ok(if self.jvmti.is_array_class(class)? {
            TypeTag::Array
        } else if self.jvmti.is_interface(class)? {
            TypeTag::Interface
        } else {
            TypeTag::Class
        })
    }

    /// A class as replies and events name a reference type: its type tag and ID.
    pub fn tagged_type(&self, jni: Jni, class: jclass) -> Result<(TypeTag, ReferenceTypeId), ErrorCode> {
        Ok((self.type_tag(class)?, self.class_id(jni, class)?))
    }

    /// [`Agent::class_id`] of a class whose JNI signature the caller has just read (listing the
    /// loaded classes): a new ID then costs one JVMTI call less.
    pub fn class_id_signed(&self, jni: Jni, class: jclass, signature: &str) -> Result<ReferenceTypeId, ErrorCode> {
        self.object_id_signed(jni, class, Known::Class, Some(signature)).map(|id| ReferenceTypeId(id.0))
    }

    /// Keeps an object from being collected (`DisableCollection`); counted.
    pub fn pin(&self, jni: Jni, id: ObjectId) -> Result<(), ErrorCode> {
        let obj = self.non_null_object(jni, id)?;
        let mut table = lock(&self.ids);
        let entry = table.entries.get_mut(id.0).ok_or(ErrorCode::INVALID_OBJECT)?;
        if entry.pinned.is_none() {
            entry.pinned = Some(GlobalRef(jni.new_global_ref(obj)?));
        }
        Ok(())
    }

    /// Lets an object be collected again (`EnableCollection`).
    pub fn unpin(&self, jni: Jni, id: ObjectId) -> Result<(), ErrorCode> {
        let mut table = lock(&self.ids);
        if let Some(strong) = table.entries.get_mut(id.0).and_then(|e| e.pinned.take()) {
            jni.delete_global_ref(strong.0);
        }
        Ok(())
    }

    /// Whether the object is gone (`IsCollected`). Null is no object at all: `INVALID_OBJECT`, as
    /// the JDK's agent answers.
    pub fn is_collected(&self, jni: Jni, id: ObjectId) -> Result<bool, ErrorCode> {
        if id.is_null() {
            return Err(ErrorCode::INVALID_OBJECT);
        }
        match self.object(jni, id) {
            Ok(obj) => {
                jni.delete_local_ref(obj);
                Ok(false)
            }
            Err(_) if lock(&self.ids).entries.contains(id.0) => Ok(true),
            Err(e) => Err(e),
        }
    }

    /// The VM is suspended: hold every object the debugger has an ID for. Agent threads only.
    pub fn pin_all_while_suspended(&self, jni: Jni) {
        let table = &mut *lock(&self.ids);
        if std::mem::replace(&mut table.suspend_pinned, true) {
            return;
        }
        // From the weak references directly: null (an error) if the object is gone, and then
        // its reference leaves the list.
        let ObjectTable { entries, hidden, collectable, by_tid, .. } = table;
        let pins = collectable.hold_all(
            |weak| jni.new_global_ref(weak.0).ok().filter(|g| !g.is_null()).map(GlobalRef),
            |weak| jni.is_cleared(weak.0),
            |id| forget(entries, hidden, by_tid, id),
        );
        table.suspend_pins.extend(pins);
        table.reclaim(jni, &self.id_readers);
    }

    /// The VM runs again: objects nobody else holds may be collected.
    pub fn unpin_all_after_suspend(&self, jni: Jni) {
        let mut table = lock(&self.ids);
        table.suspend_pinned = false;
        for strong in table.suspend_pins.drain(..) {
            jni.delete_global_ref(strong.0);
        }
    }

    /// The debugger left: release every pin (IDs stay valid; they are never reused).
    pub fn unpin_all(&self, jni: Jni) {
        let mut table = lock(&self.ids);
        for entry in table.entries.values_mut() {
            if let Some(strong) = entry.pinned.take() {
                jni.delete_global_ref(strong.0);
            }
        }
    }

    /// The JDWP tag of an object's runtime kind (`Tag::Object` for null).
    pub fn object_tag(&self, jni: Jni, obj: jobject) -> Result<Tag, ErrorCode> {
        if obj.is_null() {
            return Ok(Tag::Object);
        }
        let known = self.known()?;
        let class = jni.get_object_class(obj)?;
        let is_array = self.jvmti.is_array_class(class)?;
        jni.delete_local_ref(class);
        Ok(if is_array {
            Tag::Array
        } else if jni.is_instance_of(obj, known.string.0) {
            Tag::String
        } else if jni.is_instance_of(obj, known.thread.0) {
            Tag::Thread
        } else if jni.is_instance_of(obj, known.thread_group.0) {
            Tag::ThreadGroup
        } else if jni.is_instance_of(obj, known.class_loader.0) {
            Tag::ClassLoader
        } else if jni.is_instance_of(obj, known.class.0) {
            Tag::ClassObject
        } else {
            Tag::Object
        })
    }

    pub fn tagged_object(&self, jni: Jni, obj: jobject) -> Result<jdwp_protocol::TaggedObjectId, ErrorCode> {
        Ok(jdwp_protocol::TaggedObjectId { tag: self.object_tag(jni, obj)?, id: self.object_id(jni, obj)? })
    }

    // ---- methods, fields, frames ----------------------------------------------------------------

    /// The ID of a method: its `jmethodID`, remembered so that IDs from the debugger can be checked.
    pub fn method_id(&self, method: jmethodID) -> MethodId {
        lock(&self.methods).insert(method as usize);
        MethodId(method as u64)
    }

    /// A method the agent handed out (a forged ID would crash the VM if passed to JVMTI).
    pub fn method(&self, id: MethodId) -> Result<jmethodID, ErrorCode> {
        if lock(&self.methods).contains(&(id.0 as usize)) {
            Ok(id.0 as usize as jmethodID)
        } else {
            Err(ErrorCode::INVALID_METHODID)
        }
    }

    /// A method `class` declares: `INVALID_METHODID` for an ID the agent never handed out (a forged
    /// one would crash the VM) or a method of another type.
    pub fn method_of(&self, jni: Jni, class: jclass, id: MethodId) -> Result<jmethodID, ErrorCode> {
        let method = self.method(id)?;
        let declaring = self.jvmti.get_method_declaring_class(method)?;
        let same = jni.is_same_object(class, declaring);
        jni.delete_local_ref(declaring);
        if same { Ok(method) } else { Err(ErrorCode::INVALID_METHODID) }
    }

    /// A field of `class`: one it declares ([`FieldScope::Declared`]), or one it has, declared by it
    /// or a supertype ([`FieldScope::Member`]); `INVALID_FIELDID` otherwise. Static or instance as
    /// `is_static` says, if it says.
    pub fn field_of(
        &self,
        jni: Jni,
        class: jclass,
        id: FieldId,
        scope: FieldScope,
        is_static: Option<bool>,
    ) -> Result<FieldEntry, ErrorCode> {
        let field = self.field(id)?;
        let member = match scope {
            FieldScope::Declared => jni.is_same_object(class, field.class.0),
            FieldScope::Member => jni.is_assignable_from(class, field.class.0),
        };
        if !member || is_static.is_some_and(|s| s != field.is_static) {
            return Err(ErrorCode::INVALID_FIELDID);
        }
        Ok(field)
    }

    /// The ID of a field of `class` (agent-assigned; each also knows its type and owner).
    pub fn field_id(&self, jni: Jni, class: jclass, field: jfieldID) -> Result<FieldId, ErrorCode> {
        let class_id = self.class_id(jni, class)?;
        if let Some(id) = lock(&self.fields).by_key.get(&(class_id.0, field as usize)) {
            return Ok(FieldId(*id));
        }
        let sig = self.jvmti.get_field_name(class, field)?;
        let modifiers = self.jvmti.get_field_modifiers(class, field)?;
        let global = GlobalRef(jni.new_global_ref(class)?);
        let tag = Tag::of_signature(&sig.signature).unwrap_or(Tag::Object);
        let mut fields = lock(&self.fields);
        let id = fields.entries.len() as u64 + 1;
        fields.entries.push(FieldEntry {
            class: global,
            class_id,
            field: field as usize,
            tag,
            signature: sig.signature,
            is_static: modifiers & jdwp_protocol::modifiers::STATIC != 0,
        });
        fields.by_key.insert((class_id.0, field as usize), id);
        Ok(FieldId(id))
    }

    /// What the agent knows of a field it handed out.
    pub fn field(&self, id: FieldId) -> Result<FieldEntry, ErrorCode> {
        let fields = lock(&self.fields);
        id.0.checked_sub(1).and_then(|i| fields.entries.get(i as usize)).cloned().ok_or(ErrorCode::INVALID_FIELDID)
    }

    /// A frame ID: the thread's resume epoch and the depth, so a frame goes stale when its thread runs.
    pub fn frame_id(&self, thread: ThreadId, depth: i32) -> FrameId {
        // An entry for every thread with frame IDs out, so a resume of all virtual threads (which
        // cannot be listed) can make theirs stale.
        let epoch = *lock(&self.frame_epochs).entry(thread).or_insert(0);
        FrameId((u64::from(epoch) << 32) | depth as u32 as u64)
    }

    /// The depth of a frame of `thread`, or `INVALID_FRAMEID` if the thread ran since.
    pub fn frame_depth(&self, thread: ThreadId, frame: FrameId) -> Result<i32, ErrorCode> {
        let epoch = lock(&self.frame_epochs).get(&thread).copied().unwrap_or(0);
        if (frame.0 >> 32) as u32 != epoch {
            return Err(ErrorCode::INVALID_FRAMEID);
        }
        i32::try_from(frame.0 & 0xffff_ffff).map_err(|_| ErrorCode::INVALID_FRAMEID)
    }

    /// Threads resumed: their frames are stale.
    pub fn threads_resumed(&self, threads: &[ThreadId]) {
        let mut epochs = lock(&self.frame_epochs);
        for t in threads {
            let e = epochs.entry(*t).or_insert(0);
            *e = e.wrapping_add(1);
        }
    }

    pub fn is_vm_dead(&self) -> bool {
        self.vm_dead.load(Ordering::Acquire)
    }
}

/// Locks a mutex, carrying on after a panic elsewhere (the data is still consistent: every critical
/// section here leaves it so before doing anything that could panic).
/// A [`Ranked`] lock's order is checked in debug builds.
#[inline]
#[cfg_attr(debug_assertions, track_caller)]
pub fn lock<L: lock_order::Lockable>(m: &L) -> L::Guard<'_> {
    m.acquire()
}

/// A thread's JNI reference for a suspend or resume call, and whether the caller owns it (a local
/// reference to delete) rather than the ID table (see [`Agent::thread_refs`]).
pub type ThreadRef = (jthread, bool);

#[derive(Debug, Clone, Copy)]
pub struct ObjectEntry {
    /// Null once the object is gone and the reference forgotten (see [`collectable`]).
    weak: GlobalRef,
    /// Held by `DisableCollection`.
    pinned: Option<GlobalRef>,
    /// The object is a `java.lang.Thread` (known from where its ID came from: an object's class
    /// never changes), so suspending and resuming it need no check.
    thread: bool,
    /// An internal ID (from [`HIDDEN_IDS`] on) of a thread a VM-wide suspension counted before the
    /// debugger heard of it: never handed to the debugger, which gets the thread a new ID of the
    /// ordinary sequence when it first hears of it (see [`Agent::live_thread_ids`]). The entry
    /// stays, so that the internal ID still names the thread.
    hidden: bool,
    /// A virtual thread's `tid`, by which its ID is found (see `ObjectTable::by_tid`); 0 for an
    /// object found by its tag.
    tid: i64,
}

/// Where the internal thread IDs start (see `ObjectEntry::hidden`): far above any ID the
/// ordinary sequence reaches.
pub const HIDDEN_IDS: u64 = 1 << 62;

/// What the caller of [`Agent::object_id_of`] knows about the object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Known {
    Object,
    Thread,
    Class,
}

/// What finds an object's ID in the ID table ([`Agent::id_key`]).
#[derive(Debug, Clone, Copy)]
enum IdKey {
    /// Its JVMTI tag, which is the ID.
    Tag(u64),
    /// A virtual thread's `tid` (see `ObjectTable::by_tid`).
    Tid(i64),
}

impl IdKey {
    fn find(self, table: &ObjectTable) -> Option<u64> {
        match self {
            IdKey::Tag(id) => Some(id),
            IdKey::Tid(tid) => table.by_tid.get(tid),
        }
    }
}

/// What a new ID table entry names, which decides how [`Agent::add_entry`] keeps it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NewEntry {
    /// An object the debugger hears of (`thread`: it is a thread). `lasting`: a class no loader
    /// can unload, never collectable, so neither listed nor held while the VM is suspended.
    Object { thread: bool, lasting: bool },
    /// A virtual thread: found by its `tid` (which the caller has indexed), never by a tag.
    VirtualThread { tid: i64 },
    /// A live thread the debugger has not heard of: an internal ID (`ObjectEntry::hidden`).
    HiddenThread,
    /// A thread with an internal ID that the debugger now hears of: the next ordinary ID.
    ExposedThread,
}

/// Which loader defined a class, as far as unloading goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LoaderKind {
    /// The boot loader (null).
    Boot,
    /// The JDK's platform or application loader, which live as long as the VM.
    BuiltIn,
    /// Any other loader, which can become unreachable and take its classes with it.
    Other,
}

/// Whether a class with this defining loader and JVMTI signature can never be unloaded. Classes
/// of the boot, platform and application loaders live as long as their loader, which lives as long
/// as the VM, except hidden classes (lambda forms, `Lookup.defineHiddenClass`): those can be
/// unloaded whatever their loader. JVMTI names a hidden class with a `.` before its suffix
/// (`Lpkg/Host$$Lambda$14.0x0000000800c01234;`), a character no other signature contains; an
/// array of a hidden class carries its element's name. (Before JDK 17, VM-anonymous classes could
/// be unloaded too, and their names have no `.`: on such a VM one of them could go while the VM is
/// suspended, and the debugger would find its ID invalid.)
fn class_lasts_with_vm(loader: LoaderKind, signature: &str) -> bool {
    loader != LoaderKind::Other && !signature.contains('.')
}

/// Object IDs ↔ objects. IDs are JVMTI tags, so an object keeps its ID; they are never reused.
#[derive(Default)]
pub struct ObjectTable {
    /// By ID: IDs are handed out in order and never reused.
    entries: IdVec<ObjectEntry>,
    /// The internal thread IDs (see `ObjectEntry::hidden`), by ID less [`HIDDEN_IDS`].
    hidden: IdVec<ObjectEntry>,
    /// The weak references of every object that can be collected: all but the classes no loader
    /// can unload (see [`class_lasts_with_vm`]). While the whole VM is suspended, these are held,
    /// as the JDK's agent holds every ID: an object the debugger just got (a `NewInstance` result,
    /// a string it created) must not vanish before it can use it. A debugger that listed the loaded
    /// classes has thousands of IDs that need no hold; going over them at every suspend-all event
    /// would cost more than the rest of the event. Cleared references leave the list from time to
    /// time (see [`collectable`]).
    collectable: collectable::Collectable,
    /// The holds while the VM is suspended (empty otherwise).
    suspend_pins: Vec<GlobalRef>,
    /// Whether the VM is suspended (`suspend_pins` holds every collectable ID).
    suspend_pinned: bool,
    /// The platform and application loaders, once seen (see `Agent::loader_kind`).
    builtin_loaders: Vec<GlobalRef>,
    /// The IDs of virtual threads, by `java.lang.Thread.tid` (never reused). A virtual thread
    /// gets no JVMTI tag: a program under a `ThreadStart` request may start a million of them,
    /// and `SetTag` (an insertion into the VM's tag map under its lock, plus a weak handle that
    /// every collection goes over) was the largest part of the event helper's work per start.
    /// Invariant: a virtual thread never has a tag in the agent's environment, so its ID is
    /// looked up here, and only here.
    by_tid: TidIndex,
}

impl ObjectTable {
    /// The entry of an ID, ordinary or internal.
    fn get(&self, id: u64) -> Option<&ObjectEntry> {
        match id.checked_sub(HIDDEN_IDS) {
            Some(internal) => self.hidden.get(internal),
            None => self.entries.get(id),
        }
    }

    fn get_mut(&mut self, id: u64) -> Option<&mut ObjectEntry> {
        match id.checked_sub(HIDDEN_IDS) {
            Some(internal) => self.hidden.get_mut(internal),
            None => self.entries.get_mut(id),
        }
    }

    /// Lists the reference of a collectable object, held by entry `id`: entries of objects
    /// found gone meanwhile forget theirs, and what no reader can hold any more is deleted.
    fn list_collectable(&mut self, jni: Jni, readers: &collectable::Readers, weak: GlobalRef, id: u64) {
        let ObjectTable { entries, hidden, collectable, by_tid, .. } = self;
        collectable.push(weak, id, |w| jni.is_cleared(w.0), |gone| forget(entries, hidden, by_tid, gone));
        self.reclaim(jni, readers);
    }

    /// Deletes the forgotten references no reader can still resolve.
    fn reclaim(&mut self, jni: Jni, readers: &collectable::Readers) {
        for weak in self.collectable.reclaimable(readers) {
            jni.delete_weak_global_ref(weak.0);
        }
    }
}

/// Entry `id`'s object is gone: its reference is forgotten (the collectable list retires it).
/// The entry stays, so that the ID is known to have named an object (`IsCollected`); a virtual
/// thread's `tid` no longer leads to it.
fn forget(entries: &mut IdVec<ObjectEntry>, hidden: &mut IdVec<ObjectEntry>, by_tid: &mut TidIndex, id: u64) {
    let entry = match id.checked_sub(HIDDEN_IDS) {
        Some(internal) => hidden.get_mut(internal),
        None => entries.get_mut(id),
    };
    if let Some(entry) = entry {
        entry.weak = GlobalRef(std::ptr::null_mut());
        if entry.tid != 0 {
            by_tid.remove(std::mem::take(&mut entry.tid));
        }
    }
}

/// Which fields of a type [`Agent::field_of`] accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldScope {
    /// Declared by the type itself.
    Declared,
    /// Declared by the type or one of its supertypes.
    Member,
}

/// A field as the agent hands it out.
#[derive(Debug, Clone)]
pub struct FieldEntry {
    pub class: GlobalRef,
    pub class_id: ReferenceTypeId,
    pub field: usize,
    pub tag: Tag,
    pub signature: String,
    pub is_static: bool,
}

impl FieldEntry {
    pub fn jfield(&self) -> jfieldID {
        self.field as jfieldID
    }
}

#[derive(Default)]
pub struct FieldTable {
    entries: Vec<FieldEntry>,
    by_key: IdMap<(u64, usize), u64>,
}

/// The untagged-value oracle: field types and array component types, from what the agent knows.
impl jdwp_protocol::UntaggedTypes for Agent {
    fn field_tag(&self, field: FieldId) -> Option<Tag> {
        self.field(field).ok().map(|f| f.tag)
    }

    fn array_component_tag(&self, array: jdwp_protocol::ArrayId) -> Option<Tag> {
        let jni = self.jni().ok()?;
        let obj = self.object(jni, ObjectId(array.0)).ok()?;
        if obj.is_null() {
            return None;
        }
        let class = jni.get_object_class(obj).ok()?;
        let sig = self.jvmti.get_class_signature(class).ok()?.0;
        jni.delete_local_ref(class);
        jni.delete_local_ref(obj);
        sig.strip_prefix('[').and_then(Tag::of_signature)
    }
}

impl crate::dispatch::DecodeContext for Agent {
    fn id_sizes(&self) -> IdSizes {
        ID_SIZES
    }
    fn untagged_types(&self) -> &dyn jdwp_protocol::UntaggedTypes {
        self
    }
}

impl From<crate::jni::JniError> for ErrorCode {
    fn from(e: crate::jni::JniError) -> ErrorCode {
        e.to_jdwp()
    }
}

/// Suspension through JVMTI, for [`ThreadControl`](crate::thread_control::ThreadControl). Agent threads only.
pub struct JvmtiSuspend<'a> {
    pub agent: &'a Agent,
    pub jni: Jni,
}

impl crate::thread_control::SuspendOps for JvmtiSuspend<'_> {
    fn suspend(&self, threads: &[ThreadId]) -> Vec<Result<(), ErrorCode>> {
        self.batch(threads, true)
    }

    fn resume(&self, threads: &[ThreadId]) -> Vec<Result<(), ErrorCode>> {
        self.agent.threads_resumed(threads);
        self.agent.gate.resumed();
        self.batch(threads, false)
    }

    fn frames_stale_except(&self, keep: &[ThreadId]) {
        // Every thread that was handed a frame has an epoch (see `frame_id`).
        let mut epochs = lock(&self.agent.frame_epochs);
        for (t, e) in epochs.iter_mut() {
            if !keep.contains(t) {
                *e = e.wrapping_add(1);
            }
        }
    }

    fn vm_suspended(&self) {
        self.agent.pin_all_while_suspended(self.jni);
    }

    fn vm_resumed(&self) {
        self.agent.unpin_all_after_suspend(self.jni);
    }

    fn live_threads(&self) -> Result<Vec<ThreadId>, ErrorCode> {
        self.agent.live_thread_ids(self.jni, false)
    }

    fn is_virtual(&self, thread: ThreadId) -> bool {
        self.supports_virtual_threads() && self.virtual_thread(thread)
    }

    fn supports_virtual_threads(&self) -> bool {
        self.agent.supports_virtual_threads()
    }

    fn suspend_all_virtual(&self, except: &[ThreadId]) -> Result<(), ErrorCode> {
        self.with_refs(except, |refs| self.agent.jvmti.suspend_all_virtual_threads(refs).map_err(ErrorCode::from))
    }

    fn resume_all_virtual(&self, except: &[ThreadId]) -> Result<(), ErrorCode> {
        self.agent.gate.resumed();
        self.with_refs(except, |refs| self.agent.jvmti.resume_all_virtual_threads(refs).map_err(ErrorCode::from))
    }
}

impl JvmtiSuspend<'_> {
    /// Whether the thread is virtual (JNI `IsVirtualThread`).
    fn virtual_thread(&self, thread: ThreadId) -> bool {
        self.with_refs(&[thread], |refs| Ok(self.jni.is_virtual_thread(refs[0]))).unwrap_or(false)
    }

    /// Calls `f` with the threads' references (those still alive; `INVALID_THREAD` if none of a
    /// non-empty list is).
    fn with_refs<T>(
        &self,
        threads: &[ThreadId],
        f: impl FnOnce(&[jthread]) -> Result<T, ErrorCode>,
    ) -> Result<T, ErrorCode> {
        let mut refs = Vec::with_capacity(threads.len());
        let mut owned = Vec::new();
        let (thread_refs, _reading) = self.agent.thread_refs(self.jni, threads);
        for (r, is_owned) in thread_refs.into_iter().flatten() {
            refs.push(r);
            if is_owned {
                owned.push(r);
            }
        }
        let result = if refs.is_empty() && !threads.is_empty() { Err(ErrorCode::INVALID_THREAD) } else { f(&refs) };
        for r in owned {
            self.jni.delete_local_ref(r);
        }
        result
    }

    fn batch(&self, threads: &[ThreadId], suspend: bool) -> Vec<Result<(), ErrorCode>> {
        let mut refs = Vec::with_capacity(threads.len());
        let mut owned = Vec::new();
        let mut results: Vec<Result<(), ErrorCode>> = Vec::with_capacity(threads.len());
        let (thread_refs, _reading) = self.agent.thread_refs(self.jni, threads);
        for r in thread_refs {
            match r {
                Ok((r, is_owned)) => {
                    refs.push(r);
                    if is_owned {
                        owned.push(r);
                    }
                    results.push(Ok(()));
                }
                Err(e) => results.push(Err(e)),
            }
        }
        let outcome = if suspend {
            self.agent.jvmti.suspend_thread_list(&refs)
        } else {
            self.agent.jvmti.resume_thread_list(&refs)
        };
        match outcome {
            Ok(each) => {
                let mut each = each.into_iter();
                for r in results.iter_mut().filter(|r| r.is_ok()) {
                    *r = each.next().unwrap_or(Ok(())).map_err(|e| {
                        // Thread control tolerates threads that died meanwhile; tell it so.
                        if e == crate::jvmti::JvmtiError::THREAD_NOT_ALIVE {
                            ErrorCode::THREAD_NOT_ALIVE
                        } else {
                            e.into()
                        }
                    });
                }
            }
            Err(e) => {
                for r in results.iter_mut().filter(|r| r.is_ok()) {
                    *r = Err(e.into());
                }
            }
        }
        for r in owned {
            self.jni.delete_local_ref(r);
        }
        results
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gone_virtual_thread_leaves_the_tid_map_and_keeps_its_entry() {
        let mut entries = IdVec::default();
        let mut hidden = IdVec::default();
        let mut by_tid = TidIndex::default();
        let weak = GlobalRef(std::ptr::dangling_mut());
        let platform = entries.push(ObjectEntry { weak, pinned: None, thread: true, hidden: false, tid: 0 });
        let virtual_thread = entries.push(ObjectEntry { weak, pinned: None, thread: true, hidden: false, tid: 77 });
        by_tid.get_or_insert(77, virtual_thread).unwrap();
        by_tid.get_or_insert(78, 99).unwrap();

        forget(&mut entries, &mut hidden, &mut by_tid, platform);
        assert_eq!(by_tid.len(), 2, "a tagged object's entry touches no tid");
        forget(&mut entries, &mut hidden, &mut by_tid, virtual_thread);
        assert_eq!(by_tid.get(77), None, "the gone thread's tid leads nowhere");
        assert_eq!(by_tid.get(78), Some(99), "other threads stay");
        let entry = entries.get(virtual_thread).expect("the entry stays (IsCollected)");
        assert!(entry.weak.0.is_null() && entry.tid == 0);
        forget(&mut entries, &mut hidden, &mut by_tid, virtual_thread);
        assert_eq!(by_tid.get(78), Some(99), "forgetting twice removes nothing else");
    }

    #[test]
    fn classes_of_the_jdks_own_loaders_last_with_the_vm_unless_hidden() {
        assert!(class_lasts_with_vm(LoaderKind::Boot, "Ljava/lang/String;"));
        assert!(class_lasts_with_vm(LoaderKind::Boot, "[I"));
        assert!(class_lasts_with_vm(LoaderKind::BuiltIn, "LBench$Inner;"));
        assert!(class_lasts_with_vm(LoaderKind::BuiltIn, "[[Lcom/example/App;"));
    }

    #[test]
    fn hidden_classes_and_classes_of_other_loaders_can_be_unloaded() {
        assert!(!class_lasts_with_vm(LoaderKind::Boot, "Ljava/lang/invoke/LambdaForm$MH.0x0000000800c01234;"));
        assert!(!class_lasts_with_vm(LoaderKind::BuiltIn, "LBench$$Lambda$14.0x0000000800c0a000;"));
        assert!(!class_lasts_with_vm(LoaderKind::BuiltIn, "[LBench$$Lambda$14.0x0000000800c0a000;"));
        assert!(!class_lasts_with_vm(LoaderKind::Other, "Lcom/example/Plugin;"));
    }
}

#[cfg(test)]
mod pending_exit_tests {
    use super::PendingExit;

    #[test]
    fn every_i32_is_an_exit_code_and_is_taken_once() {
        let p = PendingExit::new();
        assert_eq!(p.take(), None);
        for code in [0, 42, -1, i32::MIN, i32::MAX] {
            p.set(code);
            assert_eq!(p.take(), Some(code));
            assert_eq!(p.take(), None);
        }
    }
}
