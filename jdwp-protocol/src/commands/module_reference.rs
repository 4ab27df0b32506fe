//! `ModuleReference` (command set 18, JDWP 9): a module's name and class loader.

use super::prelude::*;

command_set! {
    ModuleReference = 18 {
        /// The module's name (the spec does not say what an unnamed module reports).
        Name = 1 {
            out Name { module: ModuleId }
            reply NameReply { name: String }
        }
        /// The loader of the module's classes; null for the bootstrap loader.
        ClassLoader = 2 {
            out ClassLoader { module: ModuleId }
            reply ClassLoaderReply { class_loader: ClassLoaderId }
        }
    }
}
