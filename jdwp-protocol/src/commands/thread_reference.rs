//! `ThreadReference` (command set 11): questions and orders about one thread (name, status,
//! suspension, stack, monitors, early return).

use super::prelude::*;

jdwp_struct! {
    /// One stack frame of a suspended thread: its ID (valid while the thread stays suspended) and
    /// where it is executing.
    FrameInfo { frame_id: FrameId, location: Location }
}

jdwp_struct! {
    /// A monitor a thread holds, with the stack depth of the frame that took it (-1 when the VM
    /// cannot tell, e.g. a JNI `MonitorEnter`).
    MonitorStackDepth { monitor: TaggedObjectId, stack_depth: i32 }
}

command_set! {
    ThreadReference = 11 {
        /// The thread's name.
        Name = 1 {
            out Name { thread: ThreadId }
            reply NameReply { thread_name: String }
        }
        /// Suspends one thread (counted, like the VM-wide suspend: each call needs one `Resume`).
        /// The thread's reported status does not change.
        Suspend = 2 {
            out Suspend { thread: ThreadId }
            reply SuspendReply {}
        }
        /// Undoes one `Suspend` of the thread; it runs again when its count reaches zero.
        Resume = 3 {
            out Resume { thread: ThreadId }
            reply ResumeReply {}
        }
        /// The thread's state when it last ran, and its suspension bits
        /// ([`crate::constants::suspend_status`]). HotSpot reports -1, a value outside the spec's
        /// set, for a thread that has not started: [`ThreadStatus::NotStarted`].
        Status = 4 {
            out Status { thread: ThreadId }
            reply StatusReply { thread_status: ThreadStatus, suspend_status: i32 }
        }
        /// The thread group the thread belongs to.
        ThreadGroup = 5 {
            out ThreadGroup { thread: ThreadId }
            reply ThreadGroupReply { group: ThreadGroupId }
        }
        /// A slice of a suspended thread's stack, innermost frame first; `length` -1 means every
        /// frame from `start_frame` on.
        Frames = 6 {
            out Frames { thread: ThreadId, start_frame: i32, length: i32 }
            reply FramesReply { frames: Vec<FrameInfo> }
        }
        /// How deep a suspended thread's stack is.
        FrameCount = 7 {
            out FrameCount { thread: ThreadId }
            reply FrameCountReply { frame_count: i32 }
        }
        /// The monitors a suspended thread holds (needs `canGetOwnedMonitorInfo`).
        OwnedMonitors = 8 {
            out OwnedMonitors { thread: ThreadId }
            reply OwnedMonitorsReply { owned: Vec<TaggedObjectId> }
        }
        /// The monitor a suspended thread is blocked on or waiting in, or null (needs
        /// `canGetCurrentContendedMonitor`).
        CurrentContendedMonitor = 9 {
            out CurrentContendedMonitor { thread: ThreadId }
            reply CurrentContendedMonitorReply { monitor: TaggedObjectId }
        }
        /// Makes the thread throw the given `Throwable` asynchronously.
        Stop = 10 {
            out Stop { thread: ThreadId, throwable: ObjectId }
            reply StopReply {}
        }
        /// Interrupts the thread as `Thread.interrupt` would.
        Interrupt = 11 {
            out Interrupt { thread: ThreadId }
            reply InterruptReply {}
        }
        /// How many suspends (thread or VM level) of the thread are not yet resumed.
        SuspendCount = 12 {
            out SuspendCount { thread: ThreadId }
            reply SuspendCountReply { suspend_count: i32 }
        }
        /// The monitors a suspended thread holds, each with the depth it was taken at (JDWP 1.6,
        /// needs `canGetMonitorFrameInfo`).
        OwnedMonitorsStackDepthInfo = 13 {
            out OwnedMonitorsStackDepthInfo { thread: ThreadId }
            reply OwnedMonitorsStackDepthInfoReply { owned: Vec<MonitorStackDepth> }
        }
        /// Makes the current method of a suspended thread return `value` when the thread resumes,
        /// skipping the rest of its code, `finally` blocks included (JDWP 1.6, needs
        /// `canForceEarlyReturn`). A `void` method takes [`Value::Void`].
        ForceEarlyReturn = 14 {
            out ForceEarlyReturn { thread: ThreadId, value: Value }
            reply ForceEarlyReturnReply {}
        }
        /// Whether the thread is a virtual thread (JDWP 19; a preview API in 19 and 20, final
        /// since 21). VMs before 19 answer `NOT_IMPLEMENTED`: ask only when `Version` reports a
        /// JDWP major of 19 or more.
        IsVirtual = 15 {
            out IsVirtual { thread: ThreadId }
            reply IsVirtualReply { is_virtual: bool }
        }
    }
}
