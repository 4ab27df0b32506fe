//! `ClassLoaderReference` (command set 14): the types a class loader can see.

use super::prelude::*;

jdwp_struct! {
    /// A reference type a loader initiated the loading of (it defined it or delegated to another).
    VisibleClass { ref_type_tag: TypeTag, type_id: ReferenceTypeId }
}

command_set! {
    ClassLoaderReference = 14 {
        /// Every type for which this loader is recorded as an initiating loader, in no
        /// particular order; each name appears at most once.
        VisibleClasses = 1 {
            out VisibleClasses { class_loader_object: ClassLoaderId }
            reply VisibleClassesReply { classes: Vec<VisibleClass> }
        }
    }
}
