//! `InterfaceType` (command set 5): calling static methods declared by interfaces (JDWP 1.8+).

use super::prelude::*;

command_set! {
    InterfaceType = 5 {
        /// Calls a static method of the interface (never its `<clinit>`) in `thread`, which must be
        /// suspended by an event (`invoke_options` bits in `options`).
        InvokeMethod = 1 {
            out InvokeMethod { clazz: InterfaceId, thread: ThreadId, method_id: MethodId, arguments: Vec<Value>, options: i32 }
            reply InvokeMethodReply { return_value: Value, exception: TaggedObjectId }
        }
    }
}
