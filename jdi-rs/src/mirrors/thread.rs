//! Threads, thread groups and stack frames.

use jdwp_protocol::commands::{stack_frame as sf, thread_group_reference as tg, thread_reference as tr};
use jdwp_protocol::{FrameId, Location, Tag, TaggedObjectId, ThreadGroupId, ThreadId, ThreadStatus, Value};

use crate::error::Result;
use crate::mirrors::{ObjectReference, Variable};
use crate::vm::VirtualMachine;

/// A thread of the target VM.
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

impl std::fmt::Debug for ThreadReference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "thread {:#x}", self.id.0)
    }
}

impl ThreadReference {
    pub(crate) fn new(vm: VirtualMachine, id: ThreadId) -> ThreadReference {
        ThreadReference { vm, id }
    }

    pub fn id(&self) -> ThreadId {
        self.id
    }

    pub fn vm(&self) -> &VirtualMachine {
        &self.vm
    }

    /// The thread as a plain object.
    pub fn as_object(&self) -> ObjectReference {
        ObjectReference::new(self.vm.clone(), self.id.into())
    }

    pub async fn name(&self) -> Result<String> {
        Ok(self.vm.send(&tr::Name { thread: self.id }).await?.thread_name)
    }

    /// The thread's status and whether the debugger has it suspended.
    pub async fn status(&self) -> Result<(ThreadStatus, bool)> {
        let r = self.vm.send(&tr::Status { thread: self.id }).await?;
        Ok((r.thread_status, r.suspend_status & jdwp_protocol::suspend_status::SUSPENDED != 0))
    }

    pub async fn suspend(&self) -> Result<()> {
        self.vm.send(&tr::Suspend { thread: self.id }).await.map(drop)
    }

    pub async fn resume(&self) -> Result<()> {
        self.vm.send(&tr::Resume { thread: self.id }).await.map(drop)
    }

    pub async fn suspend_count(&self) -> Result<i32> {
        Ok(self.vm.send(&tr::SuspendCount { thread: self.id }).await?.suspend_count)
    }

    pub async fn thread_group(&self) -> Result<ThreadGroupReference> {
        let g = self.vm.send(&tr::ThreadGroup { thread: self.id }).await?.group;
        Ok(self.vm.thread_group(g))
    }

    pub async fn frame_count(&self) -> Result<i32> {
        Ok(self.vm.send(&tr::FrameCount { thread: self.id }).await?.frame_count)
    }

    /// Frames `start..start+length` (`length` -1: to the bottom); the thread must be suspended.
    pub async fn frames_range(&self, start: i32, length: i32) -> Result<Vec<StackFrame>> {
        let r = self.vm.send(&tr::Frames { thread: self.id, start_frame: start, length }).await?;
        Ok(r.frames
            .into_iter()
            .enumerate()
            .map(|(i, f)| StackFrame {
                thread: self.clone(),
                id: f.frame_id,
                location: f.location,
                depth: start + i as i32,
            })
            .collect())
    }

    /// All frames, top first.
    pub async fn frames(&self) -> Result<Vec<StackFrame>> {
        self.frames_range(0, -1).await
    }

    /// Frame `index` (0 is the top).
    pub async fn frame(&self, index: i32) -> Result<StackFrame> {
        let mut frames = self.frames_range(index, 1).await?;
        frames.pop().ok_or(crate::JdiError::Jdwp {
            command: "ThreadReference.Frames",
            code: jdwp_protocol::ErrorCode::INVALID_INDEX,
        })
    }

    pub async fn owned_monitors(&self) -> Result<Vec<ObjectReference>> {
        let r = self.vm.send(&tr::OwnedMonitors { thread: self.id }).await?;
        Ok(r.owned.into_iter().map(|o| ObjectReference::new(self.vm.clone(), o.id)).collect())
    }

    /// Owned monitors with the depth of the frame that locked each (-1 when unknown).
    pub async fn owned_monitors_and_frames(&self) -> Result<Vec<(ObjectReference, i32)>> {
        let r = self.vm.send(&tr::OwnedMonitorsStackDepthInfo { thread: self.id }).await?;
        Ok(r.owned.into_iter().map(|o| (ObjectReference::new(self.vm.clone(), o.monitor.id), o.stack_depth)).collect())
    }

    /// The monitor the thread waits to enter (or `wait()`s on), if any.
    pub async fn current_contended_monitor(&self) -> Result<Option<ObjectReference>> {
        let TaggedObjectId { id, .. } = self.vm.send(&tr::CurrentContendedMonitor { thread: self.id }).await?.monitor;
        Ok(if id.is_null() { None } else { Some(ObjectReference::new(self.vm.clone(), id)) })
    }

    pub async fn interrupt(&self) -> Result<()> {
        self.vm.send(&tr::Interrupt { thread: self.id }).await.map(drop)
    }

    /// Throws `throwable` in the thread, as `Thread.stop` did.
    pub async fn stop(&self, throwable: &ObjectReference) -> Result<()> {
        self.vm.send(&tr::Stop { thread: self.id, throwable: throwable.id() }).await.map(drop)
    }

    /// Pops frames down to and including `frame`.
    pub async fn pop_frames(&self, frame: &StackFrame) -> Result<()> {
        self.vm.send(&sf::PopFrames { thread: self.id, frame: frame.id }).await.map(drop)
    }

    pub async fn force_early_return(&self, value: Value) -> Result<()> {
        self.vm.send(&tr::ForceEarlyReturn { thread: self.id, value }).await.map(drop)
    }
}

/// A frame of a suspended thread; valid until the thread resumes.
#[derive(Clone)]
pub struct StackFrame {
    thread: ThreadReference,
    id: FrameId,
    location: Location,
    depth: i32,
}

impl std::fmt::Debug for StackFrame {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "frame #{} at {:?}", self.depth, self.location)
    }
}

impl StackFrame {
    pub fn id(&self) -> FrameId {
        self.id
    }
    pub fn location(&self) -> Location {
        self.location
    }
    pub fn thread(&self) -> &ThreadReference {
        &self.thread
    }
    /// 0 for the top frame.
    pub fn depth(&self) -> i32 {
        self.depth
    }

    /// Values of local variable slots, each read as the type its tag says.
    pub async fn get_slot_values(&self, slots: &[(i32, Tag)]) -> Result<Vec<Value>> {
        let slots = slots.iter().map(|&(slot, sig_byte)| sf::SlotRequest { slot, sig_byte }).collect();
        let cmd = sf::GetValues { thread: self.thread.id, frame: self.id, slots };
        Ok(self.thread.vm.send(&cmd).await?.values)
    }

    /// Values of variables of this frame's method.
    pub async fn get_values(&self, vars: &[Variable]) -> Result<Vec<Value>> {
        let slots: Vec<(i32, Tag)> =
            vars.iter().map(|v| (v.slot, Tag::of_signature(&v.signature).unwrap_or(Tag::Object))).collect();
        self.get_slot_values(&slots).await
    }

    /// Writes local variable slots.
    pub async fn set_slot_values(&self, values: &[(i32, Value)]) -> Result<()> {
        let slot_values = values.iter().map(|&(slot, slot_value)| sf::SlotValue { slot, slot_value }).collect();
        let cmd = sf::SetValues { thread: self.thread.id, frame: self.id, slot_values };
        self.thread.vm.send(&cmd).await.map(drop)
    }

    /// The variables visible at this frame's location (needs `-g`).
    pub async fn visible_variables(&self) -> Result<Vec<Variable>> {
        let loc = self.thread.vm.resolve_location(self.location).await?;
        let index = self.location.index;
        Ok(loc.method.variables().await?.iter().filter(|v| v.is_visible_at(index)).cloned().collect())
    }

    /// A visible variable's value by name.
    pub async fn get_value_by_name(&self, name: &str) -> Result<Option<Value>> {
        let vars = self.visible_variables().await?;
        let Some(var) = vars.into_iter().rfind(|v| v.name == name) else { return Ok(None) };
        Ok(self.get_values(std::slice::from_ref(&var)).await?.pop())
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
}

/// A thread group.
#[derive(Clone)]
pub struct ThreadGroupReference {
    vm: VirtualMachine,
    id: ThreadGroupId,
}

impl ThreadGroupReference {
    pub(crate) fn new(vm: VirtualMachine, id: ThreadGroupId) -> ThreadGroupReference {
        ThreadGroupReference { vm, id }
    }

    pub fn id(&self) -> ThreadGroupId {
        self.id
    }

    pub async fn name(&self) -> Result<String> {
        Ok(self.vm.send(&tg::Name { group: self.id }).await?.group_name)
    }

    pub async fn parent(&self) -> Result<Option<ThreadGroupReference>> {
        let p = self.vm.send(&tg::Parent { group: self.id }).await?.parent_group;
        Ok(if p.is_null() { None } else { Some(self.vm.thread_group(p)) })
    }

    /// Live threads and child groups directly in this group.
    pub async fn children(&self) -> Result<(Vec<ThreadReference>, Vec<ThreadGroupReference>)> {
        let r = self.vm.send(&tg::Children { group: self.id }).await?;
        Ok((
            r.child_threads.into_iter().map(|t| self.vm.thread(t)).collect(),
            r.child_groups.into_iter().map(|g| self.vm.thread_group(g)).collect(),
        ))
    }
}
