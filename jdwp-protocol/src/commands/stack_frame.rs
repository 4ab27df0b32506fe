//! `StackFrame` (command set 16): local variables, `this`, and popping frames of a suspended
//! thread. A frame is named by its thread and a frame ID from `ThreadReference.Frames`.

use super::prelude::*;

jdwp_struct! {
    /// A local variable to read: its slot, and the tag of its type (which decides how it is read).
    SlotRequest { slot: i32, sig_byte: Tag }
}

jdwp_struct! {
    /// A local variable to write: its slot and the (tagged) value.
    SlotValue { slot: i32, slot_value: Value }
}

command_set! {
    StackFrame = 16 {
        /// Reads local variables, which must be live at the frame's current code index. Works
        /// without debug info when the debugger can work out the slot (e.g. arguments). The reply
        /// has one value per requested slot, in order.
        GetValues = 1 {
            out GetValues { thread: ThreadId, frame: FrameId, slots: Vec<SlotRequest> }
            reply GetValuesReply { values: Vec<Value> }
        }
        /// Writes local variables: primitives must have exactly the variable's type, references
        /// must be assignable to it.
        SetValues = 2 {
            out SetValues { thread: ThreadId, frame: FrameId, slot_values: Vec<SlotValue> }
            reply SetValuesReply {}
        }
        /// The frame's `this`; null for static and native methods.
        ThisObject = 3 {
            out ThisObject { thread: ThreadId, frame: FrameId }
            reply ThisObjectReply { object_this: TaggedObjectId }
        }
        /// Discards the frames above and including `frame`; the caller re-executes its invoke
        /// instruction when resumed (JDWP 1.4, needs `canPopFrames`; the thread must be suspended).
        PopFrames = 4 {
            out PopFrames { thread: ThreadId, frame: FrameId }
            reply PopFramesReply {}
        }
    }
}
