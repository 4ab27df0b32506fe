//! Method invocation in a thread stopped at an event: `ObjectReference.InvokeMethod`,
//! `ClassType.InvokeMethod`, `ClassType.NewInstance` and `InterfaceType.InvokeMethod`.
//!
//! # How an invoke runs
//!
//! The method must run on the target thread, and that thread is inside our event callback: the
//! event suspended it, so it stops at its first call into the VM once the event is sent (a
//! suspended thread runs native code until its next VM transition). Three threads take part:
//!
//! * **The session thread** checks the command, queues the invoke in the target thread's slot,
//!   resumes what the invoke needs (the target only with `INVOKE_SINGLE_THREADED`, otherwise one
//!   count off every thread, as `VirtualMachine.Resume` does) and takes the reply over
//!   ([`Session::defer_reply`]), so it goes on serving commands: the method may hit a breakpoint,
//!   and handling that needs the debugger's commands.
//! * **The target thread**, parked in [`after_event`], wakes up, finds the invoke, runs it through
//!   JNI, hands the outcome (global references) to the completer and waits until the completer is
//!   done with it. Then it parks again, for another invoke or for the resume that lets it go.
//! * **The completer**, an agent thread, suspends again what the invoke resumed (so every count is
//!   what it was, as the spec says), turns the outcome into IDs and sends the reply. The target
//!   thread cannot: an application thread never holds agent locks across VM calls (see
//!   [`crate::agent`]), and it cannot suspend itself and still reply.
//!
//! # What the JDK's agent answers, and we with it
//!
//! A thread can invoke only while stopped at an event with a suspending policy: [`before_event`]
//! marks it available before the event goes out (so the debugger can never be quicker), and it
//! stays so until it runs again. Any other thread, suspended or not, is `INVALID_THREAD`. A thread
//! whose invoke has not completed answers `ALREADY_INVOKING` if it stopped at an event inside the
//! invoked method (no nested invokes on one thread), else `INVALID_THREAD`.
//!
//! Unlike the JDK's agent, which hands anything to JNI, every method and argument is checked first:
//! an instance method of the object's class, a static method of the class or a superclass, a
//! constructor of the class itself (`INVALID_METHODID`); as many arguments as parameters
//! (`ILLEGAL_ARGUMENT`), each of its parameter's exact primitive type or an instance of its
//! reference type (`TYPE_MISMATCH`). Otherwise JNI would read garbage or crash the VM.
//!
//! A debugger that leaves mid-invoke does not stop it: the session's end resumes every thread, the
//! method returns, and the completer, seeing the session gone, suspends nothing and sends nothing.

use std::cell::RefCell;
use std::sync::{Arc, Condvar, Mutex, OnceLock, mpsc};

use jdwp_protocol::codec::encode_body;
use jdwp_protocol::commands::{class_type as ct, interface_type as it, object_reference as or};
use jdwp_protocol::{
    ErrorCode, MethodId, ObjectId, SuspendPolicy, TaggedObjectId, ThreadId, Value, invoke_options, modifiers,
};
use jni_sys::{JNIEnv, jclass, jmethodID, jobject, jvalue};

use crate::agent::lock_order::Ranked;
use crate::agent::{Agent, GlobalRef, ID_SIZES, JvmtiSuspend, lock};
use crate::jni::{JavaType, Jni, JniError};
use crate::jvmti::sys::{jthread, jvmtiEnv};
use crate::session::Session;

/// What an invoke handler returns once the reply is deferred: the session loop sends nothing for
/// it (the completer answers when the method returns).
pub const DEFERRED: ErrorCode = ErrorCode::NONE;

// ---- arguments (pure) --------------------------------------------------------------------------

/// The parameter descriptors of a method descriptor (`(I[JLjava/lang/String;)V` → `I`, `[J`,
/// `Ljava/lang/String;`); `None` if it is malformed.
pub fn parameter_descriptors(descriptor: &str) -> Option<Vec<&str>> {
    let (params, ret) = descriptor.strip_prefix('(')?.split_once(')')?;
    JavaType::from_descriptor(ret)?;
    let mut out = Vec::new();
    let mut rest = params;
    while !rest.is_empty() {
        let dims = rest.bytes().take_while(|b| *b == b'[').count();
        let len = match rest.as_bytes().get(dims)? {
            b'L' => rest.find(';')? + 1,
            b'Z' | b'B' | b'C' | b'S' | b'I' | b'J' | b'F' | b'D' => dims + 1,
            _ => return None,
        };
        out.push(&rest[..len]);
        rest = &rest[len..];
    }
    Some(out)
}

/// Checks the debugger's arguments against a method descriptor as far as no VM is needed: one per
/// parameter (`ILLEGAL_ARGUMENT`), each of its parameter's exact primitive type, or an object for
/// a reference parameter (`TYPE_MISMATCH`; JDWP leaves widening to the debugger). Returns the
/// parameter descriptors.
pub fn check_arguments<'a>(descriptor: &'a str, args: &[Value]) -> Result<Vec<&'a str>, ErrorCode> {
    let params = parameter_descriptors(descriptor).ok_or(ErrorCode::INVALID_METHODID)?;
    if params.len() != args.len() {
        return Err(ErrorCode::ILLEGAL_ARGUMENT);
    }
    for (param, arg) in params.iter().zip(args) {
        let ty = JavaType::from_descriptor(param).ok_or(ErrorCode::INVALID_METHODID)?;
        if !crate::values::value_fits(ty, arg) || ty == JavaType::Void {
            return Err(ErrorCode::TYPE_MISMATCH);
        }
    }
    Ok(params)
}

// ---- per-thread state (pure) -------------------------------------------------------------------

/// One thread's invoke state, generic over the queued invoke so the rules are tested alone.
#[derive(Debug)]
struct SlotState<I> {
    /// Stopped (or about to stop) at an event with a suspending policy: an invoke may be queued.
    available: bool,
    /// Queued, not yet picked up by the thread.
    queued: Option<I>,
    /// An invoke was queued and has not completed (its reply is not sent).
    busy: bool,
    /// How many invokes completed. The thread waits for this to change, not for `busy` to clear:
    /// once the reply is out the debugger may queue the next invoke (making the slot busy again)
    /// before the thread has even woken up, and that invoke is the thread's to run.
    completions: u64,
}

impl<I> Default for SlotState<I> {
    fn default() -> Self {
        SlotState { available: false, queued: None, busy: false, completions: 0 }
    }
}

impl<I> SlotState<I> {
    /// Queues an invoke, or says why the thread cannot take one (giving it back).
    fn queue(&mut self, invoke: I) -> Result<(), (ErrorCode, I)> {
        if !self.available {
            return Err((ErrorCode::INVALID_THREAD, invoke));
        }
        if self.busy {
            // Stopped at an event inside the method an earlier invoke is running.
            return Err((ErrorCode::ALREADY_INVOKING, invoke));
        }
        self.queued = Some(invoke);
        self.busy = true;
        self.available = false;
        Ok(())
    }

    /// The thread runs again: the queued invoke if there is one, else it leaves the event.
    fn next(&mut self) -> Option<I> {
        let next = self.queued.take();
        if next.is_none() {
            self.available = false;
        }
        next
    }

    /// The invoke completed; the thread is stopped at its event again.
    fn completed(&mut self) {
        self.busy = false;
        self.available = true;
        self.completions += 1;
    }
}

/// A thread's invoke state, shared by the thread and the agent threads (generic over the queued
/// invoke so the waiting is tested alone).
struct Slot<I = Box<Invoke>> {
    state: Mutex<SlotState<I>>,
    /// Signalled when an invoke completes (the thread waits for it before parking again).
    completed: Condvar,
}

impl<I> Slot<I> {
    fn new() -> Slot<I> {
        Slot { state: Mutex::new(SlotState::default()), completed: Condvar::new() }
    }

    fn complete(&self) {
        lock(&self.state).completed();
        self.completed.notify_all();
    }

    /// A ticket for [`Slot::wait_completed`], taken before the invoke is handed over (the
    /// completer may finish before the thread would look).
    fn ticket(&self) -> u64 {
        lock(&self.state).completions
    }

    /// Blocks until an invoke completed after `ticket` was taken.
    fn wait_completed(&self, ticket: u64) {
        let mut state = lock(&self.state);
        while state.completions == ticket {
            state = self.completed.wait(state).unwrap_or_else(|e| e.into_inner());
        }
    }
}

thread_local! {
    // Thread-local: the invoking thread's own slot, found without a lock.
    /// The slot of this thread, with the `Thread` it was made for (a native thread attached twice
    /// is two `Thread`s).
    static MINE: RefCell<Option<(GlobalRef, Arc<Slot>)>> = const { RefCell::new(None) };
}

/// The invocation state the agent keeps for this module (`agent.invocations`).
#[derive(Default)]
struct Invocations {
    /// Every thread's slot, for the session thread to find by `Thread`, with a *weak* global
    /// reference to the thread: the registry must not keep an ended thread alive (on JDK 19+ an
    /// ended `Thread` still holds its `Runnable`, and the debugger would see that object and what
    /// it references among `ReferenceType.Instances`). An entry is pruned, and its reference
    /// deleted, once only the registry holds its slot (see [`prune_dead`]). A leaf lock.
    slots: Ranked<Vec<(GlobalRef, Arc<Slot>)>>,
    /// Where event threads hand finished invokes (set once the completer runs).
    completer: OnceLock<mpsc::Sender<Finished>>,
}

fn invocations(agent: &Agent) -> Option<&Invocations> {
    agent.invocations.get_or_init(Invocations::default)
}

/// The calling thread's slot, made on first use. Makes VM calls: before the event only.
fn own_slot(jni: Jni, thread: jthread) -> Option<Arc<Slot>> {
    let mine = MINE.try_with(|m| m.borrow().clone()).ok()?;
    if let Some((t, slot)) = mine
        && jni.is_same_object(t.0, thread)
    {
        return Some(slot);
    }
    let weak = GlobalRef(jni.new_weak_global_ref(thread).ok()?);
    let slot = Arc::new(Slot::new());
    let Some(registry) = crate::agent::agent().and_then(invocations) else {
        jni.delete_weak_global_ref(weak.0);
        return None;
    };
    // The registry owns the reference; the copy here is only compared. The slot replaced here
    // (another thread's, on this native thread: a carrier mounts many virtual threads) is now
    // the registry's alone, so pruned below.
    let _ = MINE.try_with(|m| *m.borrow_mut() = Some((weak, slot.clone())));
    let dead = {
        let mut slots = lock(&registry.slots);
        slots.push((weak, slot.clone()));
        prune_dead(&mut slots)
    };
    for t in dead {
        jni.delete_weak_global_ref(t.0);
    }
    Some(slot)
}

/// Takes the dead entries out of `slots`: those whose slot only the registry holds (the
/// thread-local copy went with its native thread, or another thread on the same native thread
/// took its place). Such an entry's reference is copied nowhere else, so the caller may delete
/// it. An entry whose thread was collected while a thread-local still holds it stays until the
/// thread-local lets go: the copy there is compared with later threads.
fn prune_dead<T: Copy, I>(slots: &mut Vec<(T, Arc<Slot<I>>)>) -> Vec<T> {
    let mut dead = Vec::new();
    slots.retain(|(t, s)| {
        let alone = Arc::strong_count(s) == 1;
        if alone {
            dead.push(*t);
        }
        !alone
    });
    dead
}

/// The slot of `thread`, if it ever stopped at an event (session thread). Prunes dead entries.
fn slot_of(agent: &Agent, jni: Jni, thread: jthread) -> Option<Arc<Slot>> {
    let (entries, dead) = {
        let mut slots = lock(&invocations(agent)?.slots);
        let dead = prune_dead(&mut slots);
        (slots.clone(), dead)
    };
    for t in dead {
        jni.delete_weak_global_ref(t.0);
    }
    // A cleared weak reference is the same as null only, never as a live thread.
    entries.into_iter().find(|(t, _)| jni.is_same_object(t.0, thread)).map(|(_, s)| s)
}

// ---- the event thread --------------------------------------------------------------------------

/// Called by an event thread just before its event goes to the debugger: with a suspending
/// policy, it may invoke from now on.
pub fn before_event(jni: Jni, thread: jthread, policy: SuspendPolicy) {
    if policy == SuspendPolicy::None || thread.is_null() {
        return;
    }
    if let Some(slot) = own_slot(jni, thread) {
        lock(&slot.state).available = true;
    }
}

/// Called by an event thread after its event was delivered, before it returns to the VM: runs
/// the invokes queued for it, for as long as the debugger keeps it at the event.
pub fn after_event(agent: &Agent, jni: Jni, thread: jthread) {
    let Some(slot) = MINE.try_with(|m| m.borrow().as_ref().map(|(_, s)| s.clone())).ok().flatten() else { return };
    // An exception pending at the event is set aside while Java runs, and put back after.
    let mut set_aside: Option<GlobalRef> = None;
    loop {
        park(jni);
        let Some(invoke) = lock(&slot.state).next() else { break };
        if set_aside.is_none()
            && let Some(pending) = jni.exception_occurred()
        {
            jni.exception_clear();
            set_aside = jni.new_global_ref(pending).ok().map(GlobalRef);
            jni.delete_local_ref(pending);
        }
        // Not with the modes of a step that ended at the event (it would run interpreted).
        crate::step::settle(agent, thread);
        let outcome = run(jni, &invoke);
        let ticket = slot.ticket();
        hand_over(agent, jni, slot.clone(), invoke, outcome);
        slot.wait_completed(ticket);
    }
    if let Some(exception) = set_aside {
        let _ = jni.throw(exception.0);
        jni.delete_global_ref(exception.0);
    }
}

/// Stops here while the thread is suspended: a suspended thread blocks at its next transition into
/// the VM, which any JNI call is (`ExceptionCheck` changes nothing, even with an exception pending).
fn park(jni: Jni) {
    let _ = jni.exception_check();
}

/// What became of a call: global references, for the completer.
enum Outcome {
    /// The return value (for an object, a global reference or null; a constructor's is the object).
    Returned(jvalue),
    Threw(GlobalRef),
}

/// Runs the invoke on this (the target) thread.
fn run(jni: Jni, invoke: &Invoke) -> Result<Outcome, ErrorCode> {
    let _frame = jni.push_local_frame(8)?;
    let (object, class, method) =
        (invoke.object.map_or(std::ptr::null_mut(), |o| o.0), invoke.class.0, invoke.method());
    let ret = invoke.ret;
    // SAFETY: the session thread checked (the command entry points, then `request` and `fill`)
    // that the method is of the kind called and belongs to the object's class or to `class`, that
    // `ret` is its return type, and that `args` holds one value per parameter in the member of the
    // parameter's type, references being global references to instances of the parameter types.
    let result = unsafe {
        match invoke.kind {
            Kind::Virtual => jni.call_method(object, method, ret, &invoke.args),
            Kind::Nonvirtual => jni.call_nonvirtual_method(object, class, method, ret, &invoke.args),
            Kind::Static => jni.call_static_method(class, method, ret, &invoke.args),
            Kind::Constructor => jni.new_object(class, method, &invoke.args).map(|l| jvalue { l }),
        }
    };
    match result {
        Ok(value) if ret == JavaType::Object => {
            // SAFETY: an object-returning call fills `l`.
            let local = unsafe { value.l };
            Ok(Outcome::Returned(jvalue { l: jni.new_global_ref(local)? }))
        }
        Ok(value) => Ok(Outcome::Returned(value)),
        Err(JniError::Exception(throwable)) => Ok(Outcome::Threw(GlobalRef(jni.new_global_ref(throwable)?))),
        Err(e) => Err(e.into()),
    }
}

/// Gives the outcome to the completer (or, should it be missing, frees the slot: the debugger then
/// gets no reply, but the thread does not hang).
fn hand_over(agent: &Agent, jni: Jni, slot: Arc<Slot>, invoke: Box<Invoke>, outcome: Result<Outcome, ErrorCode>) {
    let finished = Finished { slot, invoke, outcome };
    let unsent = match invocations(agent).and_then(|i| i.completer.get()) {
        Some(tx) => tx.send(finished).err().map(|e| e.0),
        None => Some(finished),
    };
    if let Some(finished) = unsent {
        tracing::error!("no invoke completer; the invoke's reply is lost");
        finished.slot.complete();
        release(jni, &finished.invoke, finished.outcome.as_ref().ok());
    }
}

// ---- the command side --------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Virtual,
    Nonvirtual,
    Static,
    Constructor,
}

/// Which command asked, for the reply's layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ReplyKind {
    Object,
    Class,
    Interface,
    NewInstance,
}

/// A checked invoke, queued for its thread. References are global: three threads use them.
struct Invoke {
    kind: Kind,
    reply: ReplyKind,
    object: Option<GlobalRef>,
    class: GlobalRef,
    method: usize,
    ret: JavaType,
    args: Vec<jvalue>,
    /// The global references among `args`.
    arg_refs: Vec<GlobalRef>,
    single_threaded: bool,
    thread: ThreadId,
    session: Arc<Session>,
    packet_id: u32,
}

// SAFETY: the raw pointers in an `Invoke` are JNI global references (valid on every thread until
// deleted, which only the completer does, once) and a method ID (valid while its class lives, and
// the class is held by `class` or the object). Nothing else in it is thread-bound.
unsafe impl Send for Invoke {}

impl Invoke {
    fn method(&self) -> jmethodID {
        self.method as jmethodID
    }
}

/// A method, as the checks need it (the declaring class is a local reference).
struct MethodInfo {
    method: jmethodID,
    name: String,
    signature: String,
    modifiers: i32,
    declaring: jclass,
}

fn method_info(agent: &Agent, id: MethodId) -> Result<MethodInfo, ErrorCode> {
    let method = agent.method(id)?;
    let name = agent.jvmti.get_method_name(method)?;
    Ok(MethodInfo {
        method,
        name: name.name,
        signature: name.signature,
        modifiers: agent.jvmti.get_method_modifiers(method)?,
        declaring: agent.jvmti.get_method_declaring_class(method)?,
    })
}

impl MethodInfo {
    fn is_static(&self) -> bool {
        self.modifiers & modifiers::STATIC != 0
    }
}

/// `ObjectReference.InvokeMethod`: an instance method, virtually or not.
pub fn invoke_instance(agent: &Agent, cmd: &or::InvokeMethod) -> Result<(), ErrorCode> {
    let jni = agent.jni()?;
    let object = agent.non_null_object(jni, cmd.object)?;
    let thread = agent.thread(jni, cmd.thread)?;
    // Any reference type: JDI names the method's declaring type, an interface for a default method.
    agent.class(jni, cmd.clazz.into())?;
    let m = method_info(agent, cmd.method_id)?;
    // Constructors and initializers are not methods to call on an object; a method of another
    // class would be looked up in the wrong vtable.
    if m.is_static() || m.name.starts_with('<') || !jni.is_instance_of(object, m.declaring) {
        return Err(ErrorCode::INVALID_METHODID);
    }
    let nonvirtual = cmd.options & invoke_options::INVOKE_NONVIRTUAL != 0;
    let kind = if nonvirtual { Kind::Nonvirtual } else { Kind::Virtual };
    let call = Call { kind, reply: ReplyKind::Object, object: Some(object), class: m.declaring, method: &m };
    request(agent, jni, thread, cmd.thread, call, &cmd.arguments, cmd.options)
}

/// `ClassType.InvokeMethod`: a static method of the class or a superclass.
pub fn invoke_class_static(agent: &Agent, cmd: &ct::InvokeMethod) -> Result<(), ErrorCode> {
    let jni = agent.jni()?;
    let class = agent.class_type(jni, cmd.clazz)?;
    let thread = agent.thread(jni, cmd.thread)?;
    let m = method_info(agent, cmd.method_id)?;
    let member = jni.is_same_object(class, m.declaring)
        || (jni.is_assignable_from(class, m.declaring) && !agent.jvmti.is_interface(m.declaring)?);
    if !m.is_static() || !member {
        return Err(ErrorCode::INVALID_METHODID);
    }
    let call = Call { kind: Kind::Static, reply: ReplyKind::Class, object: None, class, method: &m };
    request(agent, jni, thread, cmd.thread, call, &cmd.arguments, cmd.options)
}

/// `ClassType.NewInstance`: a constructor of the class itself.
pub fn new_instance(agent: &Agent, cmd: &ct::NewInstance) -> Result<(), ErrorCode> {
    let jni = agent.jni()?;
    let class = agent.class_type(jni, cmd.clazz)?;
    let thread = agent.thread(jni, cmd.thread)?;
    let m = method_info(agent, cmd.method_id)?;
    // A superclass's constructor would leave the subclass's fields unset.
    if m.name != "<init>" || !jni.is_same_object(class, m.declaring) {
        return Err(ErrorCode::INVALID_METHODID);
    }
    let call = Call { kind: Kind::Constructor, reply: ReplyKind::NewInstance, object: None, class, method: &m };
    request(agent, jni, thread, cmd.thread, call, &cmd.arguments, cmd.options)
}

/// `InterfaceType.InvokeMethod`: a static method the interface declares (not its initializer).
pub fn invoke_interface_static(agent: &Agent, cmd: &it::InvokeMethod) -> Result<(), ErrorCode> {
    let jni = agent.jni()?;
    let class = agent.interface_type(jni, cmd.clazz)?;
    let thread = agent.thread(jni, cmd.thread)?;
    let m = method_info(agent, cmd.method_id)?;
    if !m.is_static() || m.name == "<clinit>" || !jni.is_same_object(class, m.declaring) {
        return Err(ErrorCode::INVALID_METHODID);
    }
    let call = Call { kind: Kind::Static, reply: ReplyKind::Interface, object: None, class, method: &m };
    request(agent, jni, thread, cmd.thread, call, &cmd.arguments, cmd.options)
}

/// What a command asks to call, checked as far as its kind goes (local references).
struct Call<'a> {
    kind: Kind,
    reply: ReplyKind,
    object: Option<jobject>,
    class: jclass,
    method: &'a MethodInfo,
}

/// Checks the arguments, queues the invoke for `thread`, resumes what it needs and takes the
/// reply over.
fn request(
    agent: &Agent,
    jni: Jni,
    thread: jthread,
    thread_id: ThreadId,
    call: Call<'_>,
    args: &[Value],
    options: i32,
) -> Result<(), ErrorCode> {
    let m = call.method;
    let params = check_arguments(&m.signature, args)?;
    let ret = if call.kind == Kind::Constructor {
        JavaType::Object
    } else {
        JavaType::from_method_descriptor(&m.signature).ok_or(ErrorCode::INVALID_METHODID)?
    };
    let session = agent.session().ok_or(ErrorCode::VM_DEAD)?;
    let slot = slot_of(agent, jni, thread).ok_or(ErrorCode::INVALID_THREAD)?;
    start_completer(agent, jni)?;

    let mut invoke = Box::new(Invoke {
        kind: call.kind,
        reply: call.reply,
        object: None,
        class: GlobalRef(jni.new_global_ref(call.class)?),
        method: m.method as usize,
        ret,
        args: Vec::with_capacity(args.len()),
        arg_refs: Vec::new(),
        single_threaded: options & invoke_options::INVOKE_SINGLE_THREADED != 0,
        thread: thread_id,
        session: session.clone(),
        packet_id: 0,
    });
    if let Err(e) = fill(agent, jni, &mut invoke, call.object, m.declaring, &params, args) {
        release(jni, &invoke, None);
        return Err(e);
    }

    // From here on the reply is ours to send, error or not.
    let id = session.defer_reply().ok_or(ErrorCode::INTERNAL);
    let queued = match id {
        Ok(id) => {
            invoke.packet_id = id;
            lock(&slot.state).queue(invoke)
        }
        Err(e) => Err((e, invoke)),
    };
    if let Err((e, invoke)) = queued {
        release(jni, &invoke, None);
        if let Ok(id) = id {
            let _ = session.send_reply(id, Err(e));
        }
        return Err(e);
    }

    // As `ThreadReference.Resume` or `VirtualMachine.Resume` would: a thread suspended more than
    // once stays suspended (the spec says so), and the invoke waits for it.
    let ops = JvmtiSuspend { agent, jni };
    if options & invoke_options::INVOKE_SINGLE_THREADED == 0 {
        agent.threads.lock().resume_all(&ops);
    } else if let Err(e) = agent.threads.lock().resume_thread(&ops, thread_id) {
        tracing::debug!(?e, "resuming the thread for an invoke");
    }
    Ok(())
}

/// Fills in the object and the arguments, each checked against its parameter (as the loader of
/// the method's class sees the parameter's type) and held by a global reference.
fn fill(
    agent: &Agent,
    jni: Jni,
    invoke: &mut Invoke,
    object: Option<jobject>,
    declaring: jclass,
    params: &[&str],
    args: &[Value],
) -> Result<(), ErrorCode> {
    if let Some(obj) = object {
        invoke.object = Some(GlobalRef(jni.new_global_ref(obj)?));
    }
    for (param, arg) in params.iter().zip(args) {
        let mut value = crate::values::checked_jvalue(agent, jni, param, declaring, arg)?;
        if arg.tag().is_object() {
            // SAFETY: an object value is a local reference in `l`.
            let local = unsafe { value.l };
            let global = jni.new_global_ref(local)?;
            if !global.is_null() {
                invoke.arg_refs.push(GlobalRef(global));
            }
            value = jvalue { l: global };
        }
        invoke.args.push(value);
    }
    Ok(())
}

/// Deletes an invoke's global references, and the outcome's.
fn release(jni: Jni, invoke: &Invoke, outcome: Option<&Outcome>) {
    for r in invoke.object.iter().chain([&invoke.class]).chain(&invoke.arg_refs) {
        jni.delete_global_ref(r.0);
    }
    match outcome {
        Some(Outcome::Returned(value)) if invoke.ret == JavaType::Object => {
            // SAFETY: object outcomes hold a global reference (or null) in `l`.
            let global = unsafe { value.l };
            if !global.is_null() {
                jni.delete_global_ref(global);
            }
        }
        Some(Outcome::Threw(exception)) => jni.delete_global_ref(exception.0),
        _ => {}
    }
}

// ---- the completer -----------------------------------------------------------------------------

/// An invoke that ran, for the completer.
struct Finished {
    slot: Arc<Slot>,
    invoke: Box<Invoke>,
    outcome: Result<Outcome, ErrorCode>,
}

// SAFETY: as for `Invoke`: the outcome holds only global references.
unsafe impl Send for Finished {}

/// Starts the completer thread on the first invoke (session thread).
fn start_completer(agent: &Agent, jni: Jni) -> Result<(), ErrorCode> {
    let completer = &invocations(agent).ok_or(ErrorCode::INTERNAL)?.completer;
    if completer.get().is_some() {
        return Ok(());
    }
    let (tx, rx) = mpsc::channel::<Finished>();
    let rx = Box::into_raw(Box::new(rx));
    if let Err(e) =
        crate::agent_thread::start_agent_thread(agent, jni, "JDWP Invoke Completer", completer_main, rx.cast())
    {
        tracing::error!(error = %e, "cannot start the invoke completer");
        // SAFETY: the thread did not start, so the box is still ours.
        drop(unsafe { Box::from_raw(rx) });
        return Err(ErrorCode::INTERNAL);
    }
    let _ = completer.set(tx);
    Ok(())
}

unsafe extern "system" fn completer_main(_: *mut jvmtiEnv, jni_env: *mut JNIEnv, arg: *mut std::ffi::c_void) {
    // SAFETY: `arg` is the receiver boxed by `start_completer`, handed to exactly this thread.
    let rx = unsafe { Box::from_raw(arg.cast::<mpsc::Receiver<Finished>>()) };
    // SAFETY: the VM passes this agent thread's JNI environment.
    let (Some(agent), Some(jni)) = (crate::agent::agent(), unsafe { Jni::from_raw(jni_env) }) else { return };
    for finished in *rx {
        let slot = finished.slot.clone();
        let done = crate::guard(
            false,
            std::panic::AssertUnwindSafe(|| {
                let _frame = jni.push_local_frame(16);
                complete(agent, jni, finished);
                true
            }),
        );
        if !done {
            // Whatever went wrong, the event thread must not wait forever.
            slot.complete();
        }
    }
}

/// Suspends again what the invoke resumed, frees the thread's slot and replies; or, if the
/// debugger left meanwhile, only frees the slot (everything keeps running).
fn complete(agent: &Agent, jni: Jni, finished: Finished) {
    let Finished { slot, invoke, outcome } = finished;
    let session = invoke.session.clone();
    {
        // Events are sent under `order`: the reply goes out after those the invoke caused.
        let _order = session.order();
        let attached = {
            // Under `threads`, a detaching session either already resumed everything (and we see
            // it gone) or does so after we suspend.
            let mut threads = agent.threads.lock();
            let attached = agent.session().is_some_and(|s| Arc::ptr_eq(&s, &session));
            if attached {
                let ops = JvmtiSuspend { agent, jni };
                let suspended = if invoke.single_threaded {
                    threads.suspend_thread(&ops, invoke.thread)
                } else {
                    threads.suspend_all(&ops)
                };
                if let Err(e) = suspended {
                    tracing::debug!(?e, "suspending threads after an invoke");
                }
            }
            attached
        };
        let reply = attached.then(|| reply_body(agent, jni, &invoke, &outcome));
        // Free before replying: the debugger may invoke again as soon as it has the reply.
        slot.complete();
        if let Some(reply) = reply
            && let Err(e) = session.send_reply(invoke.packet_id, reply)
        {
            tracing::debug!(error = %e, "invoke reply not sent");
        }
    }
    release(jni, &invoke, outcome.as_ref().ok());
}

/// The reply's body: the return value (or the new object) and the exception.
fn reply_body(
    agent: &Agent,
    jni: Jni,
    invoke: &Invoke,
    outcome: &Result<Outcome, ErrorCode>,
) -> Result<Vec<u8>, ErrorCode> {
    let (value, exception) = match outcome.as_ref().map_err(|e| *e)? {
        Outcome::Returned(value) => (returned_value(agent, jni, invoke.ret, *value)?, null_object()),
        Outcome::Threw(e) => (zero(invoke.ret), agent.tagged_object(jni, e.0)?),
    };
    let body = match invoke.reply {
        ReplyKind::Object => encode_body(&or::InvokeMethodReply { return_value: value, exception }, ID_SIZES),
        ReplyKind::Class => encode_body(&ct::InvokeMethodReply { return_value: value, exception }, ID_SIZES),
        ReplyKind::Interface => encode_body(&it::InvokeMethodReply { return_value: value, exception }, ID_SIZES),
        ReplyKind::NewInstance => {
            let new_object = match value {
                Value::Object(tag, id) => TaggedObjectId { tag, id },
                _ => null_object(),
            };
            encode_body(&ct::NewInstanceReply { new_object, exception }, ID_SIZES)
        }
    };
    Ok(body)
}

fn null_object() -> TaggedObjectId {
    TaggedObjectId { tag: jdwp_protocol::Tag::Object, id: ObjectId::NULL }
}

/// A returned value, objects tagged with their runtime kind.
fn returned_value(agent: &Agent, jni: Jni, ret: JavaType, value: jvalue) -> Result<Value, ErrorCode> {
    if ret == JavaType::Object {
        // SAFETY: object outcomes hold a global reference (or null) in `l`.
        return crate::values::object_value(agent, jni, unsafe { value.l });
    }
    // SAFETY: the call that produced `value` returned `ret`, filling that member.
    unsafe { crate::values::from_jvalue(agent, jni, ret, value) }
}

/// What a method that threw "returns": the zero of its return type, as the JDK's agent sends.
fn zero(ret: JavaType) -> Value {
    match ret {
        JavaType::Void => Value::Void,
        JavaType::Boolean => Value::Boolean(false),
        JavaType::Byte => Value::Byte(0),
        JavaType::Char => Value::Char(0),
        JavaType::Short => Value::Short(0),
        JavaType::Int => Value::Int(0),
        JavaType::Long => Value::Long(0),
        JavaType::Float => Value::Float(0.0),
        JavaType::Double => Value::Double(0.0),
        JavaType::Object => Value::NULL,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jdwp_protocol::Tag;

    #[test]
    fn slots_only_the_registry_holds_are_pruned() {
        let held: Arc<Slot<()>> = Arc::new(Slot::new());
        let replaced: Arc<Slot<()>> = Arc::new(Slot::new());
        let mut slots = vec![(1, held.clone()), (2, replaced.clone()), (3, Arc::new(Slot::new()))];
        // Thread 2's thread-local copy was replaced (another virtual thread on its carrier),
        // thread 3's native thread exited; thread 1 still holds its slot.
        drop(replaced);
        assert_eq!(prune_dead(&mut slots), vec![2, 3]);
        assert_eq!(slots.iter().map(|(t, _)| *t).collect::<Vec<_>>(), vec![1]);
        assert_eq!(prune_dead(&mut slots), Vec::<i32>::new());
        drop(held);
        assert_eq!(prune_dead(&mut slots), vec![1]);
        assert!(slots.is_empty());
    }

    #[test]
    fn descriptors_split_into_parameters() {
        assert_eq!(parameter_descriptors("()V"), Some(vec![]));
        assert_eq!(
            parameter_descriptors("(IJ[[Ljava/lang/String;Z[D)Ljava/lang/Object;"),
            Some(vec!["I", "J", "[[Ljava/lang/String;", "Z", "[D"])
        );
        assert_eq!(parameter_descriptors("(LShapes$Shape;)[I"), Some(vec!["LShapes$Shape;"]));
        for bad in ["", "V", "(I", "(Q)V", "(Ljava/lang/String)V", "([)V", "(I)", "(I)Q"] {
            assert_eq!(parameter_descriptors(bad), None, "{bad}");
        }
    }

    #[test]
    fn arguments_must_match_parameters_exactly() {
        let object = Value::Object(Tag::String, ObjectId(5));
        assert_eq!(check_arguments("(II)I", &[Value::Int(1), Value::Int(2)]), Ok(vec!["I", "I"]));
        assert_eq!(check_arguments("(II)I", &[Value::Int(1)]), Err(ErrorCode::ILLEGAL_ARGUMENT));
        assert_eq!(check_arguments("()V", &[Value::Int(1)]), Err(ErrorCode::ILLEGAL_ARGUMENT));
        // No widening: JDWP leaves conversions to the debugger.
        assert_eq!(check_arguments("(J)J", &[Value::Int(1)]), Err(ErrorCode::TYPE_MISMATCH));
        assert_eq!(check_arguments("(I)V", &[Value::Boolean(true)]), Err(ErrorCode::TYPE_MISMATCH));
        assert_eq!(check_arguments("(I)V", &[object]), Err(ErrorCode::TYPE_MISMATCH));
        assert_eq!(check_arguments("(Ljava/lang/String;)V", &[Value::Int(1)]), Err(ErrorCode::TYPE_MISMATCH));
        assert_eq!(check_arguments("(Ljava/lang/String;)V", &[Value::Void]), Err(ErrorCode::TYPE_MISMATCH));
        // References take any object kind, and null; their classes are checked with the VM.
        assert!(check_arguments("(Ljava/lang/Object;[I)V", &[object, Value::NULL]).is_ok());
        assert_eq!(check_arguments("(I", &[]), Err(ErrorCode::INVALID_METHODID));
    }

    #[test]
    fn a_thread_takes_one_invoke_at_a_time_and_only_at_an_event() {
        let mut slot = SlotState::<u32>::default();
        assert_eq!(slot.queue(1), Err((ErrorCode::INVALID_THREAD, 1)), "not at an event");
        slot.available = true;
        assert_eq!(slot.queue(1), Ok(()));
        // Queued: another request finds the thread busy and no longer at its event.
        assert_eq!(slot.queue(2), Err((ErrorCode::INVALID_THREAD, 2)));
        assert_eq!(slot.next(), Some(1));
        // An event inside the invoked method stops the thread again: no nested invoke.
        slot.available = true;
        assert_eq!(slot.queue(3), Err((ErrorCode::ALREADY_INVOKING, 3)));
        assert_eq!(slot.next(), None, "resumed from the inner event");
        assert!(!slot.available);
        slot.completed();
        assert_eq!(slot.queue(4), Ok(()), "back at the event, ready for the next invoke");
        assert_eq!(slot.next(), Some(4));
        slot.completed();
        assert_eq!(slot.next(), None, "resumed: the thread leaves its event");
        assert_eq!(slot.queue(5), Err((ErrorCode::INVALID_THREAD, 5)));
    }

    /// The hang once seen in `static_methods_are_invoked_with_checked_arguments` through our agent:
    /// the debugger got the reply and queued its next invoke before the thread woke up from
    /// waiting for the completion; waiting on `busy` then slept forever, the thread being the one
    /// that had to run that next invoke.
    #[test]
    fn a_thread_sees_its_invoke_complete_even_when_the_next_one_is_already_queued() {
        let slot = Arc::new(Slot::<u32>::new());
        {
            let mut state = lock(&slot.state);
            state.available = true;
            state.queue(1).unwrap();
            assert_eq!(state.next(), Some(1));
        }
        let ticket = slot.ticket();
        let (tx, rx) = mpsc::channel();
        let waiter = {
            let slot = slot.clone();
            std::thread::spawn(move || {
                slot.wait_completed(ticket);
                let next = lock(&slot.state).next();
                tx.send(next).unwrap();
            })
        };
        // Completion and the next request in one critical section: the waiter cannot look between.
        {
            let mut state = lock(&slot.state);
            state.completed();
            state.queue(2).unwrap();
            assert!(state.busy);
        }
        slot.completed.notify_all();
        let next = rx.recv_timeout(std::time::Duration::from_secs(60)).expect("the thread went on to the next invoke");
        assert_eq!(next, Some(2));
        waiter.join().unwrap();
    }
}
