//! `ClassType` (command set 3): operations on classes — the superclass, static field writes,
//! static method calls and object creation.

use super::object_reference::FieldValue;
use super::prelude::*;

command_set! {
    ClassType = 3 {
        /// The direct superclass; null for `java.lang.Object`.
        Superclass = 1 {
            out Superclass { clazz: ClassId }
            reply SuperclassReply { superclass: ClassId }
        }
        /// Writes static fields of the class or its supertypes. Values travel untagged: the
        /// decoder needs an [`crate::codec::UntaggedTypes`] context (see [`FieldValue`]).
        SetValues = 2 {
            out SetValues { clazz: ClassId, values: Vec<FieldValue> }
            reply SetValuesReply {}
        }
        /// Calls a static method in `thread`, which must be suspended by an event
        /// (`invoke_options` bits in `options`).
        InvokeMethod = 3 {
            out InvokeMethod { clazz: ClassId, thread: ThreadId, method_id: MethodId, arguments: Vec<Value>, options: i32 }
            reply InvokeMethodReply { return_value: Value, exception: TaggedObjectId }
        }
        /// Creates an instance by running a constructor in `thread` (`invoke_options` bits in
        /// `options`); `new_object` is null when the constructor threw.
        NewInstance = 4 {
            out NewInstance { clazz: ClassId, thread: ThreadId, method_id: MethodId, arguments: Vec<Value>, options: i32 }
            reply NewInstanceReply { new_object: TaggedObjectId, exception: TaggedObjectId }
        }
    }
}
