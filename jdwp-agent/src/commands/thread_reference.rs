//! `ThreadReference` (command set 11) and `ThreadGroupReference` (12).

use jdwp_protocol::commands::thread_group_reference as tg;
use jdwp_protocol::commands::thread_reference::*;
use jdwp_protocol::{ErrorCode, ThreadGroupId, ThreadId, ThreadStatus, Value, suspend_status};

use crate::agent::{Agent, JvmtiSuspend};
use crate::dispatch::Entry;
use crate::jni::Jni;
use crate::jvmti::sys::*;
use jdwp_protocol::commands as c;

/// The thread (never one of the agent's own, which do not exist for the debugger).
fn thread(agent: &Agent, id: ThreadId) -> Result<(Jni, jthread), ErrorCode> {
    let jni = agent.jni()?;
    Ok((jni, agent.thread(jni, id)?))
}

pub fn name(agent: &Agent, cmd: Name) -> Result<NameReply, ErrorCode> {
    let (_, t) = thread(agent, cmd.thread)?;
    Ok(NameReply { thread_name: agent.jvmti.get_thread_info(t)?.name })
}

pub fn suspend(agent: &Agent, cmd: Suspend) -> Result<SuspendReply, ErrorCode> {
    let (jni, _) = thread(agent, cmd.thread)?;
    agent.threads.lock().suspend_thread(&JvmtiSuspend { agent, jni }, cmd.thread)?;
    Ok(SuspendReply {})
}

pub fn resume(agent: &Agent, cmd: Resume) -> Result<ResumeReply, ErrorCode> {
    let (jni, t) = thread(agent, cmd.thread)?;
    // A resume that lets a thread suspended in the VM run cannot fail any more. When other threads
    // wait for the debugger (many stopped at a breakpoint, say), it has its answer first, while
    // the VM wakes the thread: a debugger resuming event after event waits for that answer before
    // it takes the next event. The thread's own events still come after the answer, and the next
    // command after the resume.
    let suspended = JVMTI_THREAD_STATE_ALIVE | JVMTI_THREAD_STATE_SUSPENDED;
    if agent.threads.lock().answers_resume_early(cmd.thread)
        && agent.jvmti.get_thread_state(t).is_ok_and(|state| state & suspended == suspended)
        && let Some(session) = agent.session()
    {
        session.answer_now(jdwp_protocol::codec::encode_body(&ResumeReply {}, crate::agent::ID_SIZES));
    }
    crate::step::switch::threads_resuming(agent);
    agent.threads.lock().resume_thread(&JvmtiSuspend { agent, jni }, cmd.thread)?;
    Ok(ResumeReply {})
}

/// The debugger-visible suspend count of a thread (`t`, the thread of `id`): a virtual thread
/// with no count of its own has the VM-wide one.
pub fn suspend_count_of(agent: &Agent, jni: Jni, id: ThreadId, t: jthread) -> u32 {
    let (own, vm) = {
        let threads = agent.threads.lock();
        (threads.suspend_count(id), threads.vm_suspend_count())
    };
    // Only a thread without a count of its own while the VM is suspended needs the JNI call.
    if own > 0 || vm == 0 {
        return own;
    }
    let is_virtual = jni.is_virtual_thread(t);
    agent.threads.lock().suspend_count_of(id, is_virtual)
}

/// JVMTI's thread state as JDWP's status.
pub fn jdwp_status(state: i32) -> ThreadStatus {
    if state & JVMTI_THREAD_STATE_ALIVE == 0 {
        if state & JVMTI_THREAD_STATE_TERMINATED != 0 { ThreadStatus::Zombie } else { ThreadStatus::NotStarted }
    } else if state & JVMTI_THREAD_STATE_BLOCKED_ON_MONITOR_ENTER != 0 {
        ThreadStatus::Monitor
    } else if state & JVMTI_THREAD_STATE_SLEEPING != 0 {
        ThreadStatus::Sleeping
    } else if state & JVMTI_THREAD_STATE_WAITING != 0 {
        ThreadStatus::Wait
    } else {
        ThreadStatus::Running
    }
}

pub fn status(agent: &Agent, cmd: Status) -> Result<StatusReply, ErrorCode> {
    let (jni, t) = thread(agent, cmd.thread)?;
    let state = agent.jvmti.get_thread_state(t)?;
    let suspended = suspend_count_of(agent, jni, cmd.thread, t) > 0;
    Ok(StatusReply {
        thread_status: jdwp_status(state),
        suspend_status: if suspended { suspend_status::SUSPENDED } else { 0 },
    })
}

pub fn thread_group(agent: &Agent, cmd: ThreadGroup) -> Result<ThreadGroupReply, ErrorCode> {
    let (jni, t) = thread(agent, cmd.thread)?;
    let group = agent.jvmti.get_thread_info(t)?.thread_group;
    Ok(ThreadGroupReply { group: ThreadGroupId(agent.object_id(jni, group)?.0) })
}

pub fn suspend_count(agent: &Agent, cmd: SuspendCount) -> Result<SuspendCountReply, ErrorCode> {
    let (jni, t) = thread(agent, cmd.thread)?;
    let count = suspend_count_of(agent, jni, cmd.thread, t);
    Ok(SuspendCountReply { suspend_count: count as i32 })
}

/// The thread, which must be suspended by the debugger for its frames to mean anything.
fn suspended(agent: &Agent, id: ThreadId) -> Result<(Jni, jthread), ErrorCode> {
    let (jni, t) = thread(agent, id)?;
    // A thread that has ended has no frames: the JDK's agent calls it an invalid thread.
    if agent.jvmti.get_thread_state(t)? & JVMTI_THREAD_STATE_ALIVE == 0 {
        return Err(ErrorCode::INVALID_THREAD);
    }
    if suspend_count_of(agent, jni, id, t) == 0 {
        return Err(ErrorCode::THREAD_NOT_SUSPENDED);
    }
    Ok((jni, t))
}

pub fn frame_count(agent: &Agent, cmd: FrameCount) -> Result<FrameCountReply, ErrorCode> {
    let (_, t) = suspended(agent, cmd.thread)?;
    Ok(FrameCountReply { frame_count: agent.jvmti.get_frame_count(t)? })
}

pub fn frames(agent: &Agent, cmd: Frames) -> Result<FramesReply, ErrorCode> {
    let (jni, t) = suspended(agent, cmd.thread)?;
    let count = agent.jvmti.get_frame_count(t)?;
    if cmd.start_frame < 0 || cmd.start_frame > count {
        return Err(ErrorCode::INVALID_INDEX);
    }
    let available = count - cmd.start_frame;
    let length = if cmd.length == -1 { available } else { cmd.length };
    if length < 0 || length > available {
        return Err(ErrorCode::INVALID_LENGTH);
    }
    let trace = agent.jvmti.get_stack_trace(t, cmd.start_frame, length)?;
    let mut frames = Vec::with_capacity(trace.len());
    for (i, f) in trace.iter().enumerate() {
        frames.push(FrameInfo {
            frame_id: agent.frame_id(cmd.thread, cmd.start_frame + i as i32),
            location: crate::raw::location(agent, jni, f.method, f.location)?,
        });
    }
    Ok(FramesReply { frames })
}

pub fn owned_monitors(agent: &Agent, cmd: OwnedMonitors) -> Result<OwnedMonitorsReply, ErrorCode> {
    let (jni, t) = suspended(agent, cmd.thread)?;
    let monitors = agent.jvmti.get_owned_monitor_info(t)?;
    let mut owned = Vec::with_capacity(monitors.len());
    for &m in monitors.iter() {
        owned.push(agent.tagged_object(jni, m)?);
    }
    Ok(OwnedMonitorsReply { owned })
}

/// The monitor the thread waits to enter, or (in `Object.wait`) to be notified on.
pub fn current_contended_monitor(
    agent: &Agent,
    cmd: CurrentContendedMonitor,
) -> Result<CurrentContendedMonitorReply, ErrorCode> {
    let (jni, t) = suspended(agent, cmd.thread)?;
    let monitor = agent.jvmti.get_current_contended_monitor(t)?.unwrap_or(std::ptr::null_mut());
    Ok(CurrentContendedMonitorReply { monitor: agent.tagged_object(jni, monitor)? })
}

pub fn owned_monitors_stack_depth_info(
    agent: &Agent,
    cmd: OwnedMonitorsStackDepthInfo,
) -> Result<OwnedMonitorsStackDepthInfoReply, ErrorCode> {
    let (jni, t) = suspended(agent, cmd.thread)?;
    let infos = agent.jvmti.get_owned_monitor_stack_depth_info(t)?;
    let mut owned = Vec::with_capacity(infos.len());
    for info in infos.iter() {
        owned.push(MonitorStackDepth {
            monitor: agent.tagged_object(jni, info.monitor)?,
            stack_depth: info.stack_depth,
        });
    }
    Ok(OwnedMonitorsStackDepthInfoReply { owned })
}

/// Throws `throwable` in the thread. It must be a `Throwable`: the VM would take anything and
/// later fail to handle it.
pub fn stop(agent: &Agent, cmd: Stop) -> Result<StopReply, ErrorCode> {
    let (jni, t) = thread(agent, cmd.thread)?;
    let throwable = agent.throwable(jni, cmd.throwable)?;
    agent.jvmti.stop_thread(t, throwable)?;
    Ok(StopReply {})
}

pub fn interrupt(agent: &Agent, cmd: Interrupt) -> Result<InterruptReply, ErrorCode> {
    let (_, t) = thread(agent, cmd.thread)?;
    agent.jvmti.interrupt_thread(t)?;
    Ok(InterruptReply {})
}

/// Makes the current frame return `value` as soon as the thread runs, without running the rest of
/// the method. The value must have the method's return type exactly (`TYPE_MISMATCH` otherwise:
/// unlike the JDK's agent, which leaves a mismatch to chance, JDK-7199837).
pub fn force_early_return(agent: &Agent, cmd: ForceEarlyReturn) -> Result<ForceEarlyReturnReply, ErrorCode> {
    let (jni, t) = suspended(agent, cmd.thread)?;
    if !agent.jvmti.get_capabilities()?.can_force_early_return() {
        return Err(ErrorCode::NOT_IMPLEMENTED);
    }
    let (method, _) = agent.jvmti.get_frame_location(t, 0)?;
    if agent.jvmti.is_method_native(method)? {
        return Err(ErrorCode::OPAQUE_FRAME);
    }
    // A virtual thread not running on a carrier (parked, sleeping, waiting: unmounted) has no
    // frame JVMTI can force: `OPAQUE_FRAME` before any type check, as JDK 25's agent answers.
    if jni.is_virtual_thread(t) && agent.jvmti.get_thread_state(t)? & JVMTI_THREAD_STATE_RUNNABLE == 0 {
        return Err(ErrorCode::OPAQUE_FRAME);
    }
    let signature = agent.jvmti.get_method_name(method)?.signature;
    let returns = signature.rsplit_once(')').map(|(_, r)| r).ok_or(ErrorCode::INVALID_METHODID)?;
    let declaring = agent.jvmti.get_method_declaring_class(method)?;
    let value = crate::values::checked_jvalue(agent, jni, returns, declaring, &cmd.value)?;
    let jvmti = agent.jvmti;
    // SAFETY (all arms): `checked_jvalue` filled the member that the value's own type names.
    unsafe {
        match cmd.value {
            Value::Void => jvmti.force_early_return_void(t),
            Value::Boolean(_) => jvmti.force_early_return_int(t, i32::from(value.z)),
            Value::Byte(_) => jvmti.force_early_return_int(t, i32::from(value.b)),
            Value::Char(_) => jvmti.force_early_return_int(t, i32::from(value.c)),
            Value::Short(_) => jvmti.force_early_return_int(t, i32::from(value.s)),
            Value::Int(_) => jvmti.force_early_return_int(t, value.i),
            Value::Long(_) => jvmti.force_early_return_long(t, value.j),
            Value::Float(_) => jvmti.force_early_return_float(t, value.f),
            Value::Double(_) => jvmti.force_early_return_double(t, value.d),
            Value::Object(..) => jvmti.force_early_return_object(t, value.l),
        }
    }?;
    Ok(ForceEarlyReturnReply {})
}

/// The group's name. Every `ThreadGroupReference` command checks its group really is one: JVMTI
/// takes any object for a thread group and crashes the VM on one that is not.
pub fn group_name(agent: &Agent, cmd: tg::Name) -> Result<tg::NameReply, ErrorCode> {
    let jni = agent.jni()?;
    let g = agent.thread_group(jni, cmd.group)?;
    Ok(tg::NameReply { group_name: agent.jvmti.get_thread_group_info(g)?.name })
}

pub fn group_parent(agent: &Agent, cmd: tg::Parent) -> Result<tg::ParentReply, ErrorCode> {
    let jni = agent.jni()?;
    let g = agent.thread_group(jni, cmd.group)?;
    let parent = agent.jvmti.get_thread_group_info(g)?.parent;
    Ok(tg::ParentReply { parent_group: ThreadGroupId(agent.object_id(jni, parent)?.0) })
}

pub fn group_children(agent: &Agent, cmd: tg::Children) -> Result<tg::ChildrenReply, ErrorCode> {
    let jni = agent.jni()?;
    let g = agent.thread_group(jni, cmd.group)?;
    let (threads, groups) = agent.jvmti.get_thread_group_children(g)?;
    let mut child_threads = Vec::with_capacity(threads.len());
    for &t in threads.iter() {
        if !agent.is_agent_thread(jni, t) {
            child_threads.push(agent.thread_id(jni, t)?);
        }
        jni.delete_local_ref(t);
    }
    let mut child_groups = Vec::with_capacity(groups.len());
    for &c in groups.iter() {
        child_groups.push(ThreadGroupId(agent.object_id(jni, c)?.0));
        jni.delete_local_ref(c);
    }
    Ok(tg::ChildrenReply { child_threads, child_groups })
}

/// This module's commands.
/// JDWP 19. Answered on every VM: on a VM without final virtual threads (JNI below 21) every
/// thread is a platform thread. The null thread is not virtual, as JDK 25's agent answers
/// (rather than the `INVALID_THREAD` other commands give for it).
pub fn is_virtual(agent: &Agent, cmd: IsVirtual) -> Result<IsVirtualReply, ErrorCode> {
    if cmd.thread.is_null() {
        return Ok(IsVirtualReply { is_virtual: false });
    }
    let (jni, t) = thread(agent, cmd.thread)?;
    Ok(IsVirtualReply { is_virtual: jni.is_virtual_thread(t) })
}

pub(super) static TABLE: &[Entry<Agent>] = crate::dispatch_table!(Agent;
    c::thread_reference::Name => name,
    c::thread_reference::Suspend => suspend,
    c::thread_reference::Resume => resume,
    c::thread_reference::Status => status,
    c::thread_reference::ThreadGroup => thread_group,
    c::thread_reference::Frames => frames,
    c::thread_reference::FrameCount => frame_count,
    c::thread_reference::OwnedMonitors => owned_monitors,
    c::thread_reference::CurrentContendedMonitor => current_contended_monitor,
    c::thread_reference::Stop => stop,
    c::thread_reference::Interrupt => interrupt,
    c::thread_reference::SuspendCount => suspend_count,
    c::thread_reference::OwnedMonitorsStackDepthInfo => owned_monitors_stack_depth_info,
    c::thread_reference::ForceEarlyReturn => force_early_return,
    c::thread_reference::IsVirtual => is_virtual,
    c::thread_group_reference::Name => group_name,
    c::thread_group_reference::Parent => group_parent,
    c::thread_group_reference::Children => group_children,
);
