//! Threads, thread groups and stack frames.
//!
//! A [`StackFrame`] is a snapshot, valid only while its thread stays suspended: resuming the
//! thread (resuming an event set or the VM, [`ThreadReference::resume`], a method invocation in
//! that thread) makes every frame fetched before stale. Nothing here caches frames; ask the thread
//! again after a resume. A stale frame's ID still goes to the VM, which refuses it with
//! `INVALID_FRAMEID` once the thread is suspended again (`THREAD_NOT_SUSPENDED` while it runs).

use jdwp_protocol::commands::event_request::Modifier;
use jdwp_protocol::commands::{stack_frame as sf, thread_group_reference as tg, thread_reference as tr};
use jdwp_protocol::{
    ErrorCode, EventKind, FrameId, Location, Tag, TaggedObjectId, ThreadGroupId, ThreadId, ThreadStatus, Value,
    suspend_status,
};

use super::arguments::prepare_value;
use crate::error::{JdiError, Result};
use crate::mirrors::{Method, ObjectReference, SourceLocation, Variable};
use crate::vm::VirtualMachine;

/// How many threads' `IsVirtual` answers the VM handle keeps (see `is_virtual`).
const IS_VIRTUAL_CACHE_MAX: usize = 1 << 16;

/// A thread of the target VM. Equal mirrors name the same thread.
#[derive(Clone)]
pub struct ThreadReference {
    vm: VirtualMachine,
    id: ThreadId,
}

impl PartialEq for ThreadReference {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
    }
}

impl Eq for ThreadReference {}

impl std::hash::Hash for ThreadReference {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.id.hash(state);
    }
}

impl std::fmt::Debug for ThreadReference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "thread {:#x}", self.id.0)
    }
}

/// A monitor a thread owns and the depth of the frame that entered it (JDI's `MonitorInfo`).
#[derive(Debug, Clone, PartialEq)]
pub struct OwnedMonitor {
    pub monitor: ObjectReference,
    /// 0 for the top frame; -1 when the VM cannot tell (e.g. entered through JNI).
    pub stack_depth: i32,
}

impl ThreadReference {
    pub(crate) fn new(vm: VirtualMachine, id: ThreadId) -> ThreadReference {
        ThreadReference { vm, id }
    }

    /// The thread's JDWP ID.
    pub fn id(&self) -> ThreadId {
        self.id
    }

    /// The VM the thread runs in.
    pub fn vm(&self) -> &VirtualMachine {
        &self.vm
    }

    /// The thread as a plain object.
    pub fn as_object(&self) -> ObjectReference {
        ObjectReference::new(self.vm.clone(), self.id.into())
    }

    /// The thread's name (`Thread.getName()`).
    pub async fn name(&self) -> Result<String> {
        Ok(self.vm.send(&tr::Name { thread: self.id }).await?.thread_name)
    }

    /// Whether the thread is a virtual thread (`Thread.isVirtual()`). Like JDI, asks only a VM
    /// whose JDWP version is 19 or more (`ThreadReference.IsVirtual`); before that no thread is
    /// virtual, and the JDK's agent would not know the command. Asked once per thread (it cannot
    /// change), as JDI does.
    pub async fn is_virtual(&self) -> Result<bool> {
        if self.vm.version().await?.jdwp_major < 19 {
            return Ok(false);
        }
        let known = self.vm.inner.virtual_threads.lock().unwrap_or_else(|e| e.into_inner()).get(&self.id).copied();
        if let Some(is_virtual) = known {
            return Ok(is_virtual);
        }
        let is_virtual = self.vm.send(&tr::IsVirtual { thread: self.id }).await?.is_virtual;
        let mut known = self.vm.inner.virtual_threads.lock().unwrap_or_else(|e| e.into_inner());
        // Only a cache: a program that runs millions of virtual threads must not grow it without
        // bound, so it starts over when full (a thread forgotten is asked again).
        if known.len() >= IS_VIRTUAL_CACHE_MAX {
            known.clear();
        }
        known.insert(self.id, is_virtual);
        Ok(is_virtual)
    }

    /// What the thread is doing (running, sleeping, waiting, blocked on a monitor, not started,
    /// finished) and whether the debugger has it suspended, in one round trip. Suspension does
    /// not change the first: a suspended thread reports the state it was in.
    pub async fn status(&self) -> Result<(ThreadStatus, bool)> {
        let r = self.vm.send(&tr::Status { thread: self.id }).await?;
        Ok((r.thread_status, r.suspend_status & suspend_status::SUSPENDED != 0))
    }

    /// Whether the debugger has the thread suspended (by an event, or a thread or VM suspend).
    pub async fn is_suspended(&self) -> Result<bool> {
        Ok(self.status().await?.1)
    }

    /// Suspends the thread. Counted: it runs again only after as many resumes (thread or VM
    /// level) as suspends.
    pub async fn suspend(&self) -> Result<()> {
        self.vm.send(&tr::Suspend { thread: self.id }).await.map(drop)
    }

    /// Undoes one suspend (a no-op on a thread that is not suspended).
    pub async fn resume(&self) -> Result<()> {
        self.vm.send(&tr::Resume { thread: self.id }).await.map(drop)
    }

    /// Suspends not yet resumed, from this thread's and the VM's suspends and from events.
    pub async fn suspend_count(&self) -> Result<i32> {
        Ok(self.vm.send(&tr::SuspendCount { thread: self.id }).await?.suspend_count)
    }

    /// Whether the thread is suspended where an enabled breakpoint request of this client is.
    pub async fn is_at_breakpoint(&self) -> Result<bool> {
        if !self.is_suspended().await? {
            return Ok(false);
        }
        let location = match self.frames_range(0, 1).await {
            Ok(frames) => match frames.first() {
                Some(f) => f.location,
                None => return Ok(false),
            },
            // No Java frames (not started, finished): not at any breakpoint.
            Err(e) if e.code().is_some() => return Ok(false),
            Err(e) => return Err(e),
        };
        Ok(self.vm.event_request_manager().requests().iter().any(|(id, request)| {
            id.kind == EventKind::Breakpoint
                && request.modifiers.iter().any(|m| matches!(m, Modifier::LocationOnly { loc } if *loc == location))
        }))
    }

    /// The thread's group (`None` once a thread has finished, for which the VM reports none).
    pub async fn thread_group(&self) -> Result<Option<ThreadGroupReference>> {
        let g = self.vm.send(&tr::ThreadGroup { thread: self.id }).await?.group;
        Ok(if g.is_null() { None } else { Some(self.vm.thread_group(g)) })
    }

    /// How many frames a suspended thread has.
    pub async fn frame_count(&self) -> Result<i32> {
        Ok(self.vm.send(&tr::FrameCount { thread: self.id }).await?.frame_count)
    }

    /// Frames `start..start+length` of a suspended thread, top first (`length` -1: to the
    /// bottom). One round trip however deep the stack.
    pub async fn frames_range(&self, start: i32, length: i32) -> Result<Vec<StackFrame>> {
        let r = self.vm.send(&tr::Frames { thread: self.id, start_frame: start, length }).await?;
        Ok(r.frames
            .into_iter()
            .zip(start..)
            .map(|(f, depth)| StackFrame { thread: self.clone(), id: f.frame_id, location: f.location, depth })
            .collect())
    }

    /// All frames of a suspended thread, top first.
    pub async fn frames(&self) -> Result<Vec<StackFrame>> {
        self.frames_range(0, -1).await
    }

    /// Frame `index` (0 is the top) of a suspended thread.
    pub async fn frame(&self, index: i32) -> Result<StackFrame> {
        let mut frames = self.frames_range(index, 1).await?;
        frames.pop().ok_or(JdiError::Jdwp { command: "ThreadReference.Frames", code: ErrorCode::INVALID_INDEX })
    }

    /// Monitors the suspended thread owns, each once however often it entered it.
    pub async fn owned_monitors(&self) -> Result<Vec<ObjectReference>> {
        let r = self.vm.send(&tr::OwnedMonitors { thread: self.id }).await?;
        Ok(r.owned.into_iter().map(|o| ObjectReference::new(self.vm.clone(), o.id)).collect())
    }

    /// Owned monitors with the depth of the frame that entered each.
    pub async fn owned_monitors_and_frames(&self) -> Result<Vec<OwnedMonitor>> {
        let r = self.vm.send(&tr::OwnedMonitorsStackDepthInfo { thread: self.id }).await?;
        Ok(r.owned
            .into_iter()
            .map(|o| OwnedMonitor {
                monitor: ObjectReference::new(self.vm.clone(), o.monitor.id),
                stack_depth: o.stack_depth,
            })
            .collect())
    }

    /// The monitor the suspended thread is blocked entering, or waits in with `Object.wait()`.
    pub async fn current_contended_monitor(&self) -> Result<Option<ObjectReference>> {
        let TaggedObjectId { id, .. } = self.vm.send(&tr::CurrentContendedMonitor { thread: self.id }).await?.monitor;
        Ok(if id.is_null() { None } else { Some(ObjectReference::new(self.vm.clone(), id)) })
    }

    /// Interrupts the thread as `Thread.interrupt()` does: a sleep or wait ends with
    /// `InterruptedException` once the thread runs.
    pub async fn interrupt(&self) -> Result<()> {
        self.vm.send(&tr::Interrupt { thread: self.id }).await.map(drop)
    }

    /// Makes the thread throw `throwable` (which must be a `java.lang.Throwable`) as
    /// `Thread.stop` did; a sleeping or waiting thread throws it when it wakes.
    pub async fn stop(&self, throwable: &ObjectReference) -> Result<()> {
        let ty = throwable.reference_type().await?;
        if !ty.is_assignable_to("Ljava/lang/Throwable;").await? {
            return Err(JdiError::InvalidArgument(format!(
                "cannot stop a thread with a {}: it is not a java.lang.Throwable",
                ty.name()
            )));
        }
        self.vm.send(&tr::Stop { thread: self.id, throwable: throwable.id() }).await.map(drop)
    }

    /// Pops every frame from the top down to and including `frame`: when the thread resumes, the
    /// caller of `frame`'s method executes its call again (side effects already done stay done).
    /// The thread must be suspended; every frame fetched before is stale afterwards.
    pub async fn pop_frames(&self, frame: &StackFrame) -> Result<()> {
        if frame.thread != *self {
            return Err(JdiError::InvalidArgument(format!("{frame:?} belongs to {:?}, not {self:?}", frame.thread)));
        }
        self.vm.send(&sf::PopFrames { thread: self.id, frame: frame.id }).await.map(drop)
    }

    /// Makes the top frame's method return `value` as soon as the thread resumes, skipping the
    /// rest of its code. `value` must fit the method's return type ([`Value::Void`] for `void`,
    /// primitives converted where exact, objects assignable): a mismatch is refused here with an
    /// [`JdiError::InvalidArgument`] naming both types, before the VM is asked.
    pub async fn force_early_return(&self, value: Value) -> Result<()> {
        let top = self.frame(0).await?;
        let method = top.method().await?;
        let (_, return_signature) = method.argument_and_return_signatures();
        let declaring = method.declaring_type().await?;
        let what = format!("the return value of {}.{}{}", declaring.name(), method.name(), method.signature());
        // `void` goes with `void` only; prepare_value knows every other type.
        let value = match (return_signature == "V", value == Value::Void) {
            (true, true) => value,
            (false, false) => prepare_value(&declaring, value, &return_signature, &what).await?,
            _ => {
                let given = if value == Value::Void { "void".to_string() } else { format!("{value:?}") };
                return Err(JdiError::InvalidArgument(format!(
                    "{given} cannot be assigned to {what} of type {}",
                    crate::names::type_name_of_signature(&return_signature)
                )));
            }
        };
        self.vm.send(&tr::ForceEarlyReturn { thread: self.id, value }).await.map(drop)
    }
}

/// A frame of a suspended thread; stale once the thread resumes (see the module docs).
#[derive(Clone)]
pub struct StackFrame {
    thread: ThreadReference,
    id: FrameId,
    location: Location,
    depth: i32,
}

impl std::fmt::Debug for StackFrame {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "frame #{} of {:?} at {:?}", self.depth, self.thread, self.location)
    }
}

impl StackFrame {
    /// The frame's JDWP ID, valid while its thread stays suspended.
    pub fn id(&self) -> FrameId {
        self.id
    }

    /// Where the frame was executing when it was fetched.
    pub fn location(&self) -> Location {
        self.location
    }

    /// The thread whose stack holds the frame.
    pub fn thread(&self) -> &ThreadReference {
        &self.thread
    }

    /// 0 for the top frame.
    pub fn depth(&self) -> i32 {
        self.depth
    }

    /// The location with its type and method mirrors.
    pub async fn source_location(&self) -> Result<SourceLocation> {
        self.thread.vm.resolve_location(self.location).await
    }

    /// The method the frame executes.
    pub async fn method(&self) -> Result<Method> {
        Ok(self.source_location().await?.method)
    }

    /// `this`, or `None` in static and native methods.
    pub async fn this_object(&self) -> Result<Option<ObjectReference>> {
        let r = self.thread.vm.send(&sf::ThisObject { thread: self.thread.id, frame: self.id }).await?;
        Ok(if r.object_this.id.is_null() {
            None
        } else {
            Some(ObjectReference::new(self.thread.vm.clone(), r.object_this.id))
        })
    }

    /// Arguments and locals in scope at the frame's location. Needs the method's variable table
    /// (`javac -g`): without one this is `ABSENT_INFORMATION`, and only slots
    /// ([`StackFrame::get_slot_values`], [`StackFrame::argument_values`]) work.
    pub async fn visible_variables(&self) -> Result<Vec<Variable>> {
        let method = self.method().await?;
        let index = self.location.index;
        Ok(method.variables().await?.iter().filter(|v| v.is_visible_at(index)).cloned().collect())
    }

    /// The visible variable called `name` (the innermost, if several scopes declare one).
    pub async fn visible_variable_by_name(&self, name: &str) -> Result<Option<Variable>> {
        Ok(self.visible_variables().await?.into_iter().rfind(|v| v.name == name))
    }

    /// The value of one visible variable.
    pub async fn get_value(&self, var: &Variable) -> Result<Value> {
        let mut values = self.get_values(std::slice::from_ref(var)).await?;
        values.pop().ok_or_else(|| crate::mirrors::object::short_reply("StackFrame.GetValues"))
    }

    /// Values of visible variables, in one round trip. A variable out of scope at this location
    /// is refused: its slot may hold another variable, or garbage.
    pub async fn get_values(&self, vars: &[Variable]) -> Result<Vec<Value>> {
        let mut slots = Vec::with_capacity(vars.len());
        for v in vars {
            self.check_visible(v)?;
            slots.push((v.slot, Tag::of_signature(&v.signature).unwrap_or(Tag::Object)));
        }
        self.get_slot_values(&slots).await
    }

    /// A visible variable's value by name (`None`: no such variable here).
    pub async fn get_value_by_name(&self, name: &str) -> Result<Option<Value>> {
        match self.visible_variable_by_name(name).await? {
            Some(var) => self.get_value(&var).await.map(Some),
            None => Ok(None),
        }
    }

    /// Sets a visible variable after checking `value` against its declared type (converting
    /// primitives where exact); a mismatch is an [`JdiError::InvalidArgument`].
    pub async fn set_value(&self, var: &Variable, value: Value) -> Result<()> {
        self.check_visible(var)?;
        let method = self.method().await?;
        let declaring = method.declaring_type().await?;
        let what = format!("local variable {}", var.name);
        let value = prepare_value(&declaring, value, &var.signature, &what).await?;
        self.set_slot_values(&[(var.slot, value)]).await
    }

    /// Sets the visible variable called `name`.
    pub async fn set_value_by_name(&self, name: &str, value: Value) -> Result<()> {
        match self.visible_variable_by_name(name).await? {
            Some(var) => self.set_value(&var, value).await,
            None => Err(JdiError::InvalidArgument(format!("no variable {name} is visible in {self:?}"))),
        }
    }

    /// The arguments the method is running with, read by slot from the method's signature, so
    /// this works without a variable table (unlike [`StackFrame::visible_variables`]). Values
    /// are the slots' current contents: an argument the method reassigned shows its new value.
    pub async fn argument_values(&self) -> Result<Vec<Value>> {
        let method = self.method().await?;
        let (params, _) = method.argument_and_return_signatures();
        // Slot 0 holds `this` in instance methods; long and double take two slots.
        let mut slot = if method.is_static() { 0 } else { 1 };
        let mut slots = Vec::with_capacity(params.len());
        for p in &params {
            let tag = Tag::of_signature(p).unwrap_or(Tag::Object);
            slots.push((slot, tag));
            slot += if matches!(tag, Tag::Long | Tag::Double) { 2 } else { 1 };
        }
        self.get_slot_values(&slots).await
    }

    /// Values of local variable slots, each read as the type its tag says. For frames without a
    /// variable table; nothing checks that a slot holds a value of that type.
    pub async fn get_slot_values(&self, slots: &[(i32, Tag)]) -> Result<Vec<Value>> {
        let slots = slots.iter().map(|&(slot, sig_byte)| sf::SlotRequest { slot, sig_byte }).collect();
        let cmd = sf::GetValues { thread: self.thread.id, frame: self.id, slots };
        Ok(self.thread.vm.send(&cmd).await?.values)
    }

    /// Writes local variable slots, unchecked (the VM refuses some mismatches, not all).
    pub async fn set_slot_values(&self, values: &[(i32, Value)]) -> Result<()> {
        let slot_values = values.iter().map(|&(slot, slot_value)| sf::SlotValue { slot, slot_value }).collect();
        let cmd = sf::SetValues { thread: self.thread.id, frame: self.id, slot_values };
        self.thread.vm.send(&cmd).await.map(drop)
    }

    fn check_visible(&self, var: &Variable) -> Result<()> {
        if var.is_visible_at(self.location.index) {
            Ok(())
        } else {
            Err(JdiError::InvalidArgument(format!("variable {} is not visible in {self:?}", var.name)))
        }
    }
}

/// A thread group. Equal mirrors name the same group.
#[derive(Clone)]
pub struct ThreadGroupReference {
    vm: VirtualMachine,
    id: ThreadGroupId,
}

impl PartialEq for ThreadGroupReference {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
    }
}

impl Eq for ThreadGroupReference {}

impl std::hash::Hash for ThreadGroupReference {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.id.hash(state);
    }
}

impl std::fmt::Debug for ThreadGroupReference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "thread group {:#x}", self.id.0)
    }
}

impl ThreadGroupReference {
    pub(crate) fn new(vm: VirtualMachine, id: ThreadGroupId) -> ThreadGroupReference {
        ThreadGroupReference { vm, id }
    }

    /// The group's JDWP ID.
    pub fn id(&self) -> ThreadGroupId {
        self.id
    }

    /// The VM the group lives in.
    pub fn vm(&self) -> &VirtualMachine {
        &self.vm
    }

    /// The group as a plain object.
    pub fn as_object(&self) -> ObjectReference {
        ObjectReference::new(self.vm.clone(), self.id.into())
    }

    /// The group's name.
    pub async fn name(&self) -> Result<String> {
        Ok(self.vm.send(&tg::Name { group: self.id }).await?.group_name)
    }

    /// The enclosing group; `None` for a top-level group (`system`).
    pub async fn parent(&self) -> Result<Option<ThreadGroupReference>> {
        let p = self.vm.send(&tg::Parent { group: self.id }).await?.parent_group;
        Ok(if p.is_null() { None } else { Some(self.vm.thread_group(p)) })
    }

    /// Live threads and child groups directly in this group, in one round trip.
    pub async fn children(&self) -> Result<(Vec<ThreadReference>, Vec<ThreadGroupReference>)> {
        let r = self.vm.send(&tg::Children { group: self.id }).await?;
        Ok((
            r.child_threads.into_iter().map(|t| self.vm.thread(t)).collect(),
            r.child_groups.into_iter().map(|g| self.vm.thread_group(g)).collect(),
        ))
    }

    /// Live threads directly in this group (not in subgroups).
    pub async fn threads(&self) -> Result<Vec<ThreadReference>> {
        Ok(self.children().await?.0)
    }

    /// Groups directly in this group.
    pub async fn thread_groups(&self) -> Result<Vec<ThreadGroupReference>> {
        Ok(self.children().await?.1)
    }

    /// Live threads of this group and all its subgroups.
    pub async fn all_threads(&self) -> Result<Vec<ThreadReference>> {
        let mut threads = Vec::new();
        let mut groups = vec![self.clone()];
        while let Some(g) = groups.pop() {
            let (t, sub) = g.children().await?;
            threads.extend(t);
            groups.extend(sub);
        }
        Ok(threads)
    }

    /// Suspends every thread of this group and its subgroups, one by one (not atomic: threads
    /// started meanwhile are missed), each as [`ThreadReference::suspend`] does.
    pub async fn suspend(&self) -> Result<()> {
        for t in self.all_threads().await? {
            t.suspend().await?;
        }
        Ok(())
    }

    /// Resumes every thread of this group and its subgroups once.
    pub async fn resume(&self) -> Result<()> {
        for t in self.all_threads().await? {
            t.resume().await?;
        }
        Ok(())
    }
}
