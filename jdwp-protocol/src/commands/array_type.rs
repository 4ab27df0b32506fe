//! `ArrayType` (command set 4): creating arrays of a loaded array type.

use super::prelude::*;

command_set! {
    ArrayType = 4 {
        /// Allocates an array of the type with `length` elements, all zero or null.
        NewInstance = 1 {
            out NewInstance { arr_type: ArrayTypeId, length: i32 }
            reply NewInstanceReply { new_array: TaggedObjectId }
        }
    }
}
