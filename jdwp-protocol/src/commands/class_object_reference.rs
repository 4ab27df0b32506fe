//! `ClassObjectReference` (command set 17): from a `java.lang.Class` instance to the type it
//! stands for.

use super::prelude::*;

command_set! {
    ClassObjectReference = 17 {
        /// The reference type a class object reflects, with its kind.
        ReflectedType = 1 {
            out ReflectedType { class_object: ClassObjectId }
            reply ReflectedTypeReply { ref_type_tag: TypeTag, type_id: ReferenceTypeId }
        }
    }
}
