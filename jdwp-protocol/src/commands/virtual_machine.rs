//! `VirtualMachine` (command set 1): questions and orders about the target VM as a whole.

use super::prelude::*;

jdwp_struct! {
    /// A loaded reference type found by signature.
    ClassBySignature { ref_type_tag: TypeTag, type_id: ReferenceTypeId, status: i32 }
}

jdwp_struct! {
    /// A loaded reference type with its signature.
    ClassInfo { ref_type_tag: TypeTag, type_id: ReferenceTypeId, signature: String, status: i32 }
}

jdwp_struct! {
    /// A loaded reference type with its signature and generic signature (empty when it has none).
    GenericClassInfo {
        ref_type_tag: TypeTag,
        type_id: ReferenceTypeId,
        signature: String,
        generic_signature: String,
        status: i32,
    }
}

jdwp_struct! {
    /// One object whose references the debugger gives back, and how many.
    DisposeRequest { object: ObjectId, ref_cnt: i32 }
}

jdwp_struct! {
    /// A type to redefine and its new class file bytes.
    ClassDef { ref_type: ReferenceTypeId, classfile: Vec<u8> }
}

command_set! {
    VirtualMachine = 1 {
        /// The JDWP version and the VM's version and name.
        Version = 1 {
            out Version {}
            reply VersionReply { description: String, jdwp_major: i32, jdwp_minor: i32, vm_version: String, vm_name: String }
        }
        /// Loaded reference types with a given JNI signature (several when loaders differ).
        ClassesBySignature = 2 {
            out ClassesBySignature { signature: String }
            reply ClassesBySignatureReply { classes: Vec<ClassBySignature> }
        }
        /// Every loaded reference type.
        AllClasses = 3 {
            out AllClasses {}
            reply AllClassesReply { classes: Vec<ClassInfo> }
        }
        /// Every live thread (agent threads excluded).
        AllThreads = 4 {
            out AllThreads {}
            reply AllThreadsReply { threads: Vec<ThreadId> }
        }
        /// Thread groups without a parent.
        TopLevelThreadGroups = 5 {
            out TopLevelThreadGroups {}
            reply TopLevelThreadGroupsReply { groups: Vec<ThreadGroupId> }
        }
        /// Ends the session: requests cleared, threads resumed, the connection closed.
        Dispose = 6 {
            out Dispose {}
            reply DisposeReply {}
        }
        /// The widths of the variable-sized IDs.
        IdSizes = 7 {
            out IdSizesCmd {}
            reply IdSizesReply {
                field_id_size: i32,
                method_id_size: i32,
                object_id_size: i32,
                reference_type_id_size: i32,
                frame_id_size: i32,
            }
        }
        /// Suspends every application thread (counted: each call needs one `Resume`).
        Suspend = 8 {
            out Suspend {}
            reply SuspendReply {}
        }
        /// Undoes one `Suspend` of every application thread.
        Resume = 9 {
            out Resume {}
            reply ResumeReply {}
        }
        /// Terminates the target VM with an exit code.
        Exit = 10 {
            out Exit { exit_code: i32 }
            reply ExitReply {}
        }
        /// Creates a string in the target VM.
        CreateString = 11 {
            out CreateString { utf: String }
            reply CreateStringReply { string_object: StringId }
        }
        /// The JDK 1.2 capabilities.
        Capabilities = 12 {
            out Capabilities {}
            reply CapabilitiesReply {
                can_watch_field_modification: bool,
                can_watch_field_access: bool,
                can_get_bytecodes: bool,
                can_get_synthetic_attribute: bool,
                can_get_owned_monitor_info: bool,
                can_get_current_contended_monitor: bool,
                can_get_monitor_info: bool,
            }
        }
        /// The class path and boot class path of the VM.
        ClassPaths = 13 {
            out ClassPaths {}
            reply ClassPathsReply { base_dir: String, classpaths: Vec<String>, bootclasspaths: Vec<String> }
        }
        /// Releases object IDs the debugger no longer holds.
        DisposeObjects = 14 {
            out DisposeObjects { requests: Vec<DisposeRequest> }
            reply DisposeObjectsReply {}
        }
        /// Holds events: they are queued, not sent, until `ReleaseEvents`.
        HoldEvents = 15 {
            out HoldEvents {}
            reply HoldEventsReply {}
        }
        /// Sends the events held since `HoldEvents`.
        ReleaseEvents = 16 {
            out ReleaseEvents {}
            reply ReleaseEventsReply {}
        }
        /// All capabilities (32 flags, the last 11 reserved).
        CapabilitiesNew = 17 {
            out CapabilitiesNew {}
            reply CapabilitiesNewReply {
                can_watch_field_modification: bool,
                can_watch_field_access: bool,
                can_get_bytecodes: bool,
                can_get_synthetic_attribute: bool,
                can_get_owned_monitor_info: bool,
                can_get_current_contended_monitor: bool,
                can_get_monitor_info: bool,
                can_redefine_classes: bool,
                can_add_method: bool,
                can_unrestrictedly_redefine_classes: bool,
                can_pop_frames: bool,
                can_use_instance_filters: bool,
                can_get_source_debug_extension: bool,
                can_request_vm_death_event: bool,
                can_set_default_stratum: bool,
                can_get_instance_info: bool,
                can_request_monitor_events: bool,
                can_get_monitor_frame_info: bool,
                can_use_source_name_filters: bool,
                can_get_constant_pool: bool,
                can_force_early_return: bool,
                reserved22: bool,
                reserved23: bool,
                reserved24: bool,
                reserved25: bool,
                reserved26: bool,
                reserved27: bool,
                reserved28: bool,
                reserved29: bool,
                reserved30: bool,
                reserved31: bool,
                reserved32: bool,
            }
        }
        /// Installs new class files for loaded types.
        RedefineClasses = 18 {
            out RedefineClasses { classes: Vec<ClassDef> }
            reply RedefineClassesReply {}
        }
        /// Sets the stratum used when none is given (SMAP source mapping).
        SetDefaultStratum = 19 {
            out SetDefaultStratum { stratum_id: String }
            reply SetDefaultStratumReply {}
        }
        /// Every loaded reference type, with generic signatures.
        AllClassesWithGeneric = 20 {
            out AllClassesWithGeneric {}
            reply AllClassesWithGenericReply { classes: Vec<GenericClassInfo> }
        }
        /// Live instance counts of the given types.
        InstanceCounts = 21 {
            out InstanceCounts { ref_types: Vec<ReferenceTypeId> }
            reply InstanceCountsReply { counts: Vec<i64> }
        }
        /// Every module of the VM.
        AllModules = 22 {
            out AllModules {}
            reply AllModulesReply { modules: Vec<ModuleId> }
        }
    }
}
