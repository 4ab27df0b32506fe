//! `VirtualMachine` (command set 1).

use jdwp_protocol::commands::virtual_machine::*;
use jdwp_protocol::{ErrorCode, ModuleId, ThreadGroupId};

use crate::agent::{Agent, ID_SIZES, JvmtiSuspend};
use crate::dispatch::Entry;
use crate::runtime::JvmtiVersion;
use jdwp_protocol::commands as c;

/// `vmVersion` is the `java.version` property (`17.0.15`), as the JDK's agent answers. The JDWP
/// version and the description follow the running VM's JVMTI version ([`crate::runtime`]), laid
/// out as the JDK's agent lays them out; where it names itself "Reference Implementation" we name
/// our agent ([`AGENT_MARKER`](jdwp_protocol::commands::profiler::AGENT_MARKER), which clients look
/// for before sending vendor commands). JVMTI knows only the properties the VM defines, not
/// `java.version`, which the class library sets: that one is read as the program reads it, once.
pub fn version(agent: &Agent, _: Version) -> Result<VersionReply, ErrorCode> {
    // The VM's version, read once.
    let java_version = &agent.memo.java_version;
    let prop = |name: &str| agent.jvmti.get_system_property(name).unwrap_or_default();
    let vm_name = prop("java.vm.name");
    let vm_version = match java_version.get() {
        Some(v) => v.clone(),
        None => match live_property(agent, "java.version").filter(|v| !v.is_empty()) {
            Some(v) => java_version.get_or_init(|| v).clone(),
            None => prop("java.version"),
        },
    };
    let runtime = agent.jvmti.get_version_number().map_or(JvmtiVersion::FALLBACK, JvmtiVersion::from_number);
    let implementation = format!("{} {}", jdwp_protocol::commands::profiler::AGENT_MARKER, env!("CARGO_PKG_VERSION"));
    let description = runtime.description(&implementation, &vm_version, &vm_name, &prop("java.vm.info"));
    let (jdwp_major, jdwp_minor) = runtime.jdwp_version();
    Ok(VersionReply { description, jdwp_major, jdwp_minor, vm_version, vm_name })
}

/// Loaded classes: each with its signature, generic signature, kind and status; with `only`, just
/// the classes of that JNI signature (`ClassesBySignature`), so that the others get no ID.
///
/// Per class, the fewest JVMTI calls that answer: its status (which also says whether it is an
/// array), its signatures, whether it is an interface (not asked of arrays), and its ID (a new ID
/// reuses the signature just read). With `only`, the signature comes first: most classes are
/// then one call.
fn loaded(agent: &Agent, only: Option<&str>) -> Result<Vec<GenericClassInfo>, ErrorCode> {
    use crate::jvmti::sys::{JVMTI_CLASS_STATUS_ARRAY, JVMTI_CLASS_STATUS_PREPARED, JVMTI_CLASS_STATUS_PRIMITIVE};
    use jdwp_protocol::TypeTag;
    let jni = agent.jni()?;
    let classes = agent.jvmti.get_loaded_classes()?;
    let mut out = Vec::with_capacity(if only.is_some() { 1 } else { classes.len() });
    // Looking for one signature, that is the first question, on the VM's own bytes (one JVMTI
    // call and no allocation of ours for most classes).
    let wanted = only.map(jdwp_protocol::mutf8::encode);
    for &class in classes.iter() {
        if let Some(wanted) = &wanted
            && agent.jvmti.get_class_signature_raw(class)?.as_bytes() != wanted.as_slice()
        {
            jni.delete_local_ref(class);
            continue;
        }
        let status = agent.jvmti.get_class_status(class)?;
        // Primitive classes (int.class) are not reference types; a class loaded but not yet
        // prepared has no methods or fields to show, and the JDK's agent leaves it out (JDI's
        // UnpreparedClasses and UnpreparedByName tests check it). Arrays count as prepared.
        if status & JVMTI_CLASS_STATUS_PRIMITIVE != 0
            || status & (JVMTI_CLASS_STATUS_PREPARED | JVMTI_CLASS_STATUS_ARRAY) == 0
        {
            jni.delete_local_ref(class);
            continue;
        }
        let (signature, generic) = agent.jvmti.get_class_signature(class)?;
        let ref_type_tag = if status & JVMTI_CLASS_STATUS_ARRAY != 0 {
            TypeTag::Array
        } else if agent.jvmti.is_interface(class)? {
            TypeTag::Interface
        } else {
            TypeTag::Class
        };
        let type_id = agent.class_id_signed(jni, class, &signature)?;
        out.push(GenericClassInfo {
            ref_type_tag,
            type_id,
            signature,
            generic_signature: generic.unwrap_or_default(),
            status: super::jdwp_class_status(status),
        });
        jni.delete_local_ref(class);
    }
    Ok(out)
}

pub fn classes_by_signature(agent: &Agent, cmd: ClassesBySignature) -> Result<ClassesBySignatureReply, ErrorCode> {
    let classes = loaded(agent, Some(&cmd.signature))?
        .into_iter()
        .map(|c| ClassBySignature { ref_type_tag: c.ref_type_tag, type_id: c.type_id, status: c.status })
        .collect();
    Ok(ClassesBySignatureReply { classes })
}

pub fn all_classes(agent: &Agent, _: AllClasses) -> Result<AllClassesReply, ErrorCode> {
    let classes = loaded(agent, None)?
        .into_iter()
        .map(|c| ClassInfo {
            ref_type_tag: c.ref_type_tag,
            type_id: c.type_id,
            signature: c.signature,
            status: c.status,
        })
        .collect();
    Ok(AllClassesReply { classes })
}

pub fn all_classes_with_generic(
    agent: &Agent,
    _: AllClassesWithGeneric,
) -> Result<AllClassesWithGenericReply, ErrorCode> {
    Ok(AllClassesWithGenericReply { classes: loaded(agent, None)? })
}

pub fn all_threads(agent: &Agent, _: AllThreads) -> Result<AllThreadsReply, ErrorCode> {
    let jni = agent.jni()?;
    let mut threads = agent.live_thread_ids(jni, true)?;
    // JVMTI lists platform threads only; with `includevirtualthreads=y` the virtual threads started
    // since the agent began tracking them follow (as the JDK's agent lists them).
    if agent.options.include_virtual_threads && agent.supports_virtual_threads() {
        threads.extend(agent.tracked_virtual_thread_ids(jni)?);
    }
    Ok(AllThreadsReply { threads })
}

pub fn top_level_thread_groups(agent: &Agent, _: TopLevelThreadGroups) -> Result<TopLevelThreadGroupsReply, ErrorCode> {
    let jni = agent.jni()?;
    let groups = agent.jvmti.get_top_thread_groups()?;
    let mut out = Vec::with_capacity(groups.len());
    for &g in groups.iter() {
        out.push(ThreadGroupId(agent.object_id(jni, g)?.0));
    }
    Ok(TopLevelThreadGroupsReply { groups: out })
}

/// The session loop ends the session after replying; `detached` does the cleanup.
pub fn dispose(_: &Agent, _: Dispose) -> Result<DisposeReply, ErrorCode> {
    Ok(DisposeReply {})
}

pub fn id_sizes(_: &Agent, _: IdSizesCmd) -> Result<IdSizesReply, ErrorCode> {
    Ok(IdSizesReply {
        field_id_size: ID_SIZES.field_id.into(),
        method_id_size: ID_SIZES.method_id.into(),
        object_id_size: ID_SIZES.object_id.into(),
        reference_type_id_size: ID_SIZES.reference_type_id.into(),
        frame_id_size: ID_SIZES.frame_id.into(),
    })
}

pub fn suspend(agent: &Agent, _: Suspend) -> Result<SuspendReply, ErrorCode> {
    let jni = agent.jni()?;
    agent.threads.lock().suspend_all(&JvmtiSuspend { agent, jni })?;
    Ok(SuspendReply {})
}

pub fn resume(agent: &Agent, _: Resume) -> Result<ResumeReply, ErrorCode> {
    let jni = agent.jni()?;
    crate::step::switch::threads_resuming(agent);
    agent.threads.lock().resume_all(&JvmtiSuspend { agent, jni });
    Ok(ResumeReply {})
}

pub fn exit(agent: &Agent, cmd: Exit) -> Result<ExitReply, ErrorCode> {
    agent.pending_exit.set(cmd.exit_code);
    Ok(ExitReply {})
}

pub fn create_string(agent: &Agent, cmd: CreateString) -> Result<CreateStringReply, ErrorCode> {
    let jni = agent.jni()?;
    let s = jni.new_string_utf(&cmd.utf)?;
    Ok(CreateStringReply { string_object: agent.object_id(jni, s)?.into() })
}

pub fn capabilities(agent: &Agent, _: Capabilities) -> Result<CapabilitiesReply, ErrorCode> {
    let c = capabilities_new(agent, CapabilitiesNew {})?;
    Ok(CapabilitiesReply {
        can_watch_field_modification: c.can_watch_field_modification,
        can_watch_field_access: c.can_watch_field_access,
        can_get_bytecodes: c.can_get_bytecodes,
        can_get_synthetic_attribute: c.can_get_synthetic_attribute,
        can_get_owned_monitor_info: c.can_get_owned_monitor_info,
        can_get_current_contended_monitor: c.can_get_current_contended_monitor,
        can_get_monitor_info: c.can_get_monitor_info,
    })
}

/// What this agent can do today: a capability is claimed only when the command behind it exists.
pub fn capabilities_new(agent: &Agent, _: CapabilitiesNew) -> Result<CapabilitiesNewReply, ErrorCode> {
    let caps = agent.jvmti.get_capabilities()?;
    Ok(CapabilitiesNewReply {
        can_watch_field_modification: caps.can_generate_field_modification_events(),
        can_watch_field_access: caps.can_generate_field_access_events(),
        can_get_bytecodes: caps.can_get_bytecodes(),
        can_get_synthetic_attribute: caps.can_get_synthetic_attribute(),
        can_get_owned_monitor_info: caps.can_get_owned_monitor_info(),
        can_get_current_contended_monitor: caps.can_get_current_contended_monitor(),
        can_get_monitor_info: caps.can_get_monitor_info(),
        can_redefine_classes: caps.can_redefine_classes(),
        can_add_method: false,
        can_unrestrictedly_redefine_classes: false,
        can_pop_frames: crate::frame_pop::can_pop_frames(agent),
        can_use_instance_filters: true,
        can_get_source_debug_extension: caps.can_get_source_debug_extension(),
        can_request_vm_death_event: true,
        can_set_default_stratum: true,
        can_get_instance_info: caps.can_tag_objects(),
        can_request_monitor_events: caps.can_generate_monitor_events(),
        can_get_monitor_frame_info: caps.can_get_owned_monitor_stack_depth_info(),
        can_use_source_name_filters: true,
        can_get_constant_pool: caps.can_get_constant_pool(),
        can_force_early_return: caps.can_force_early_return(),
        reserved22: false,
        reserved23: false,
        reserved24: false,
        reserved25: false,
        reserved26: false,
        reserved27: false,
        reserved28: false,
        reserved29: false,
        reserved30: false,
        reserved31: false,
        reserved32: false,
    })
}

/// A system property as the program sees it (`System.getProperty`): JVMTI only knows the values the
/// VM started with, and some (`user.dir`) are set later by the class library.
fn live_property(agent: &Agent, name: &str) -> Option<String> {
    let jni = agent.jni().ok()?;
    let system = jni.find_class("java/lang/System").ok()?;
    let get = jni.get_static_method_id(system, "getProperty", "(Ljava/lang/String;)Ljava/lang/String;").ok()?;
    let key = jni.new_string_utf(name).ok()?;
    // SAFETY: `get` is System.getProperty(String) returning a String; one String argument.
    let value =
        unsafe { jni.call_static_method(system, get, crate::jni::JavaType::Object, &[jni_sys::jvalue { l: key }]) }
            .ok()?;
    // SAFETY: the method returns an object, so `l` is the member written.
    let string = unsafe { value.l };
    if string.is_null() {
        return None;
    }
    jni.get_string_utf(string).ok()
}

pub fn class_paths(agent: &Agent, _: ClassPaths) -> Result<ClassPathsReply, ErrorCode> {
    let prop = |name: &str| {
        live_property(agent, name).or_else(|| agent.jvmti.get_system_property(name).ok()).unwrap_or_default()
    };
    let sep = prop("path.separator");
    let sep = if sep.is_empty() { ":".to_string() } else { sep };
    let split = |s: String| -> Vec<String> {
        if s.is_empty() { Vec::new() } else { s.split(sep.as_str()).map(str::to_string).collect() }
    };
    // Since JDK 9 there is no boot class path to report; the JDK's agent sends an empty list.
    Ok(ClassPathsReply {
        base_dir: prop("user.dir"),
        classpaths: split(prop("java.class.path")),
        bootclasspaths: Vec::new(),
    })
}

/// IDs are never reused and objects stay collectable, so giving references back frees nothing;
/// the command is accepted as the spec allows.
pub fn dispose_objects(_: &Agent, _: DisposeObjects) -> Result<DisposeObjectsReply, ErrorCode> {
    Ok(DisposeObjectsReply {})
}

/// Events are queued, not sent, until `ReleaseEvents` (see [`crate::gate`]).
pub fn hold_events(agent: &Agent, _: HoldEvents) -> Result<HoldEventsReply, ErrorCode> {
    agent.gate.hold();
    Ok(HoldEventsReply {})
}

pub fn release_events(agent: &Agent, _: ReleaseEvents) -> Result<ReleaseEventsReply, ErrorCode> {
    agent.gate.release();
    Ok(ReleaseEventsReply {})
}

/// Replaces classes with new class file bytes. JVMTI's refusals map to the JDWP redefinition
/// errors (`INVALID_CLASS_FORMAT`, `SCHEMA_CHANGE_NOT_IMPLEMENTED`, ...).
pub fn redefine_classes(agent: &Agent, cmd: RedefineClasses) -> Result<RedefineClassesReply, ErrorCode> {
    if !agent.jvmti.get_capabilities()?.can_redefine_classes() {
        return Err(ErrorCode::NOT_IMPLEMENTED);
    }
    let jni = agent.jni()?;
    let mut definitions = Vec::with_capacity(cmd.classes.len());
    for def in &cmd.classes {
        definitions.push((agent.class(jni, def.ref_type)?, def.classfile.as_slice()));
    }
    agent.jvmti.redefine_classes(&definitions)?;
    // HotSpot drops every breakpoint in a redefined class: forget the requests located there and
    // set method-entry breakpoints again.
    let classes: Vec<jni_sys::jclass> = definitions.iter().map(|(c, _)| *c).collect();
    crate::events::install::classes_redefined(agent, jni, &classes);
    Ok(RedefineClassesReply {})
}

/// Line steps judge lines in this stratum from now on (see [`crate::sde`]).
pub fn set_default_stratum(agent: &Agent, cmd: SetDefaultStratum) -> Result<SetDefaultStratumReply, ErrorCode> {
    crate::sde::set_default_stratum(agent, &cmd.stratum_id);
    Ok(SetDefaultStratumReply {})
}

/// Instances of exactly each type, those reachable for garbage collection only (as the spec says
/// and the JDK's agent answers). A type that is gone (or was never one) has none, as the JDK's
/// agent answers. One local reference at a time, whatever the number of types asked for.
pub fn instance_counts(agent: &Agent, cmd: InstanceCounts) -> Result<InstanceCountsReply, ErrorCode> {
    let jni = agent.jni()?;
    let mut counts = super::heap::InstanceCounts::new(agent)?;
    for &t in &cmd.ref_types {
        // Whatever the lookup made dies with this frame, a class or not.
        let _frame = jni.push_local_frame(4)?;
        counts.add(agent.class(jni, t).ok())?;
    }
    Ok(InstanceCountsReply { counts: counts.count()? })
}

pub fn all_modules(agent: &Agent, _: AllModules) -> Result<AllModulesReply, ErrorCode> {
    let jni = agent.jni()?;
    let list = agent.jvmti.get_all_modules()?;
    let mut modules = Vec::with_capacity(list.len());
    for &m in list.iter() {
        modules.push(ModuleId(agent.object_id(jni, m)?.0));
        jni.delete_local_ref(m);
    }
    Ok(AllModulesReply { modules })
}

/// This module's commands.
pub(super) static TABLE: &[Entry<Agent>] = crate::dispatch_table!(Agent;
    c::virtual_machine::Version => version,
    c::virtual_machine::ClassesBySignature => classes_by_signature,
    c::virtual_machine::AllClasses => all_classes,
    c::virtual_machine::AllThreads => all_threads,
    c::virtual_machine::TopLevelThreadGroups => top_level_thread_groups,
    c::virtual_machine::Dispose => dispose,
    c::virtual_machine::IdSizesCmd => id_sizes,
    c::virtual_machine::Suspend => suspend,
    c::virtual_machine::Resume => resume,
    c::virtual_machine::Exit => exit,
    c::virtual_machine::CreateString => create_string,
    c::virtual_machine::Capabilities => capabilities,
    c::virtual_machine::ClassPaths => class_paths,
    c::virtual_machine::DisposeObjects => dispose_objects,
    c::virtual_machine::HoldEvents => hold_events,
    c::virtual_machine::ReleaseEvents => release_events,
    c::virtual_machine::CapabilitiesNew => capabilities_new,
    c::virtual_machine::RedefineClasses => redefine_classes,
    c::virtual_machine::SetDefaultStratum => set_default_stratum,
    c::virtual_machine::AllClassesWithGeneric => all_classes_with_generic,
    c::virtual_machine::InstanceCounts => instance_counts,
    c::virtual_machine::AllModules => all_modules,
);
