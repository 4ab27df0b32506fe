//! [`VirtualMachine`]: the mirror of the target VM, owner of the connection and of the caches.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use jdwp_protocol::commands::{reference_type as rt, virtual_machine as vmc};
use jdwp_protocol::{
    ClassObjectId, Command, IdSizes, ModuleId, ReferenceTypeId, ThreadGroupId, ThreadId, TypeTag, class_status,
};
use tokio::sync::{OnceCell, mpsc};

use crate::connection::Connection;
use crate::error::{JdiError, Result};
use crate::event::{EventQueue, EventRequestManager};
use crate::mirrors::{ModuleInfo, ModuleReference, ReferenceType, ThreadGroupReference, ThreadReference, TypeInfo};

/// The target VM. Cheap to clone; every mirror holds one.
#[derive(Clone)]
pub struct VirtualMachine {
    pub(crate) inner: Arc<VmInner>,
}

pub(crate) struct VmInner {
    pub(crate) conn: Connection,
    pub(crate) events: Mutex<Option<mpsc::UnboundedReceiver<jdwp_transports::Packet>>>,
    /// What is known of each reference type; types never change identity, so entries are kept.
    pub(crate) types: Mutex<HashMap<ReferenceTypeId, Arc<TypeInfo>>>,
    pub(crate) requests: EventRequestManager,
    /// Commands sent through [`VirtualMachine::send`], for tests and diagnostics.
    commands_sent: AtomicU64,
    /// Never change during a session, so asked once.
    capabilities: OnceCell<vmc::CapabilitiesNewReply>,
    version: OnceCell<Version>,
    /// Module names and loaders (fixed once a module exists).
    modules: Mutex<HashMap<ModuleId, Arc<ModuleInfo>>>,
    /// The type each class object stands for (fixed).
    pub(crate) reflected_types: Mutex<HashMap<ClassObjectId, (TypeTag, ReferenceTypeId)>>,
    /// Whether a thread is virtual (fixed for the thread's life; asked once per thread, as JDI).
    pub(crate) virtual_threads: Mutex<HashMap<ThreadId, bool>>,
}

/// `VirtualMachine.Version`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Version {
    /// Free text about the VM and the agent.
    pub description: String,
    /// JDWP major version (the JDK's feature version: 17).
    pub jdwp_major: i32,
    /// JDWP minor version.
    pub jdwp_minor: i32,
    /// The target VM's `java.version`.
    pub vm_version: String,
    /// The target VM's `java.vm.name`.
    pub vm_name: String,
}

impl VirtualMachine {
    /// Wraps a connection whose handshake is done: fetches the ID sizes and starts event routing.
    pub(crate) async fn start(
        conn: Connection,
        events: mpsc::UnboundedReceiver<jdwp_transports::Packet>,
    ) -> Result<VirtualMachine> {
        let reply = conn.send(&vmc::IdSizesCmd {}).await?;
        let to_u8 = |v: i32| u8::try_from(v).ok().filter(|s| (1..=8).contains(s));
        let sizes = match (
            to_u8(reply.field_id_size),
            to_u8(reply.method_id_size),
            to_u8(reply.object_id_size),
            to_u8(reply.reference_type_id_size),
            to_u8(reply.frame_id_size),
        ) {
            (Some(field_id), Some(method_id), Some(object_id), Some(reference_type_id), Some(frame_id)) => {
                IdSizes { field_id, method_id, object_id, reference_type_id, frame_id }
            }
            _ => return Err(JdiError::InvalidArgument(format!("the VM reported unsupported ID sizes: {reply:?}"))),
        };
        conn.set_id_sizes(sizes);
        Ok(VirtualMachine {
            inner: Arc::new(VmInner {
                conn,
                events: Mutex::new(Some(events)),
                types: Mutex::new(HashMap::new()),
                requests: EventRequestManager::default(),
                commands_sent: AtomicU64::new(0),
                capabilities: OnceCell::new(),
                version: OnceCell::new(),
                modules: Mutex::new(HashMap::new()),
                reflected_types: Mutex::new(HashMap::new()),
                virtual_threads: Mutex::new(HashMap::new()),
            }),
        })
    }

    /// The low-level connection, for commands no mirror wraps.
    pub fn connection(&self) -> &Connection {
        &self.inner.conn
    }

    /// The JVM process, when this VM was launched by [`crate::launch`].
    pub fn process(&self) -> Option<crate::Process> {
        self.inner.conn.process()
    }

    /// Sends one command and returns its reply.
    pub async fn send<C: Command>(&self, command: &C) -> Result<C::Reply> {
        self.inner.commands_sent.fetch_add(1, Ordering::Relaxed);
        self.inner.conn.send(command).await
    }

    /// How many commands went through [`VirtualMachine::send`] (every mirror's questions; not
    /// those sent on [`VirtualMachine::connection`] directly). Lets tests see what is cached.
    pub fn commands_sent(&self) -> u64 {
        self.inner.commands_sent.load(Ordering::Relaxed)
    }

    /// The widths of the VM's IDs.
    pub fn id_sizes(&self) -> IdSizes {
        self.inner.conn.id_sizes()
    }

    /// The event queue. There is one per VM; the first caller takes it.
    pub fn event_queue(&self) -> Option<EventQueue> {
        let rx = self.inner.events.lock().unwrap_or_else(|e| e.into_inner()).take()?;
        Some(EventQueue::new(self.clone(), rx))
    }

    /// The manager of this VM's event requests.
    pub fn event_request_manager(&self) -> &EventRequestManager {
        &self.inner.requests
    }

    /// The JDWP and VM versions. Cached.
    pub async fn version(&self) -> Result<Version> {
        let v = self
            .inner
            .version
            .get_or_try_init(|| async {
                let r = self.send(&vmc::Version {}).await?;
                Ok::<_, JdiError>(Version {
                    description: r.description,
                    jdwp_major: r.jdwp_major,
                    jdwp_minor: r.jdwp_minor,
                    vm_version: r.vm_version,
                    vm_name: r.vm_name,
                })
            })
            .await?;
        Ok(v.clone())
    }

    /// Whether the JDWP version is at least `major.minor`.
    async fn jdwp_at_least(&self, major: i32, minor: i32) -> Result<bool> {
        let v = self.version().await?;
        Ok((v.jdwp_major, v.jdwp_minor) >= (major, minor))
    }

    /// Records what a reply told us of a type and returns its mirror.
    pub(crate) fn type_mirror(&self, tag: TypeTag, id: ReferenceTypeId, signature: Option<String>) -> ReferenceType {
        let mut types = self.inner.types.lock().unwrap_or_else(|e| e.into_inner());
        let info = types.entry(id).or_insert_with(|| Arc::new(TypeInfo::new(tag)));
        if let Some(sig) = signature {
            info.set_signature(sig);
        }
        ReferenceType::new(self.clone(), id, info.clone())
    }

    /// Every loaded reference type that is prepared (arrays always are), as JDI lists them:
    /// types still being loaded are left out. One round trip; also records generic signatures.
    pub async fn all_classes(&self) -> Result<Vec<ReferenceType>> {
        let classes = match self.send(&vmc::AllClassesWithGeneric {}).await {
            // An agent older than JDWP 1.5 only has the plain form.
            Err(e) if e.code() == Some(jdwp_protocol::ErrorCode::NOT_IMPLEMENTED) => self
                .send(&vmc::AllClasses {})
                .await?
                .classes
                .into_iter()
                .map(|c| vmc::GenericClassInfo {
                    ref_type_tag: c.ref_type_tag,
                    type_id: c.type_id,
                    signature: c.signature,
                    generic_signature: String::new(),
                    status: c.status,
                })
                .collect(),
            r => r?.classes,
        };
        Ok(classes
            .into_iter()
            .filter(|c| is_prepared(c.ref_type_tag, c.status))
            .map(|c| {
                let t = self.type_mirror(c.ref_type_tag, c.type_id, Some(c.signature));
                t.info().set_generic_signature(c.generic_signature);
                t
            })
            .collect())
    }

    /// Loaded, prepared types with this name (`java.lang.String`, `int[]`, `Demo$Inner`): one
    /// per defining loader. Primitive types are not reference types, so `"int"` finds nothing
    /// (see [`crate::PrimitiveType::from_name`]).
    pub async fn classes_by_name(&self, name: &str) -> Result<Vec<ReferenceType>> {
        let signature = crate::names::signature_of_type_name(name);
        if crate::names::is_primitive_signature(&signature) || signature == "V" {
            return Ok(Vec::new());
        }
        self.classes_by_signature(&signature).await
    }

    /// Loaded, prepared types with a JNI signature (`Ljava/lang/String;`, `[I`).
    pub async fn classes_by_signature(&self, signature: &str) -> Result<Vec<ReferenceType>> {
        let r = self.send(&vmc::ClassesBySignature { signature: signature.to_string() }).await?;
        Ok(r.classes
            .into_iter()
            .filter(|c| is_prepared(c.ref_type_tag, c.status))
            .map(|c| self.type_mirror(c.ref_type_tag, c.type_id, Some(signature.to_string())))
            .collect())
    }

    /// Mirrors for types a reply named by kind and ID. Unknown ones need their signatures: a
    /// few are asked one by one (concurrently), many at once through `AllClasses`.
    pub(crate) async fn reference_types_of_kinds(
        &self,
        items: Vec<(TypeTag, ReferenceTypeId)>,
    ) -> Result<Vec<ReferenceType>> {
        let unknown = {
            let types = self.inner.types.lock().unwrap_or_else(|e| e.into_inner());
            items.iter().filter(|(_, id)| !types.contains_key(id)).count()
        };
        if unknown > 16 {
            self.all_classes().await?;
        }
        let mirrors =
            crate::mirrors::join_all(items.into_iter().map(|(tag, id)| self.reference_type_of_kind(tag, id))).await;
        mirrors.into_iter().collect()
    }

    /// A mirror for a type ID the caller got elsewhere; its kind is asked lazily.
    pub async fn reference_type(&self, id: ReferenceTypeId) -> Result<ReferenceType> {
        if let Some(info) = self.inner.types.lock().unwrap_or_else(|e| e.into_inner()).get(&id) {
            return Ok(ReferenceType::new(self.clone(), id, info.clone()));
        }
        // The signature tells the kind: arrays start with '[', the rest need the modifiers.
        let sig = self.send(&rt::Signature { ref_type: id }).await?.signature;
        let tag = if sig.starts_with('[') {
            TypeTag::Array
        } else {
            let bits = self.send(&rt::Modifiers { ref_type: id }).await?.mod_bits;
            if bits & jdwp_protocol::modifiers::INTERFACE != 0 { TypeTag::Interface } else { TypeTag::Class }
        };
        Ok(self.type_mirror(tag, id, Some(sig)))
    }

    /// A mirror for a type whose kind is known; costs one round trip the first time (the signature).
    pub async fn reference_type_of_kind(&self, tag: TypeTag, id: ReferenceTypeId) -> Result<ReferenceType> {
        if let Some(info) = self.inner.types.lock().unwrap_or_else(|e| e.into_inner()).get(&id) {
            return Ok(ReferenceType::new(self.clone(), id, info.clone()));
        }
        let sig = self.send(&rt::Signature { ref_type: id }).await?.signature;
        Ok(self.type_mirror(tag, id, Some(sig)))
    }

    /// Every live thread (the agent's own excluded).
    pub async fn all_threads(&self) -> Result<Vec<ThreadReference>> {
        let r = self.send(&vmc::AllThreads {}).await?;
        Ok(r.threads.into_iter().map(|t| self.thread(t)).collect())
    }

    /// A mirror for the thread with this ID (no round trip).
    pub fn thread(&self, id: ThreadId) -> ThreadReference {
        ThreadReference::new(self.clone(), id)
    }

    /// Thread groups without a parent.
    pub async fn top_level_thread_groups(&self) -> Result<Vec<ThreadGroupReference>> {
        let r = self.send(&vmc::TopLevelThreadGroups {}).await?;
        Ok(r.groups.into_iter().map(|g| self.thread_group(g)).collect())
    }

    /// A mirror for the thread group with this ID (no round trip).
    pub fn thread_group(&self, id: ThreadGroupId) -> ThreadGroupReference {
        ThreadGroupReference::new(self.clone(), id)
    }

    /// Suspends every application thread (counted).
    pub async fn suspend(&self) -> Result<()> {
        self.send(&vmc::Suspend {}).await.map(drop)
    }

    /// Undoes one [`VirtualMachine::suspend`].
    pub async fn resume(&self) -> Result<()> {
        self.send(&vmc::Resume {}).await.map(drop)
    }

    /// Ends the session; the VM goes on running.
    pub async fn dispose(&self) -> Result<()> {
        let r = self.send(&vmc::Dispose {}).await.map(drop);
        self.inner.conn.shutdown().await;
        r
    }

    /// Terminates the target VM.
    pub async fn exit(&self, code: i32) -> Result<()> {
        self.send(&vmc::Exit { exit_code: code }).await.map(drop)
    }

    /// A new `java.lang.String` in the target VM.
    pub async fn create_string(&self, value: &str) -> Result<crate::mirrors::StringReference> {
        let r = self.send(&vmc::CreateString { utf: value.to_string() }).await?;
        Ok(crate::mirrors::StringReference::new(self.clone(), r.string_object.into()))
    }

    /// `CapabilitiesNew`, or for an agent that lacks it the old `Capabilities` (the rest `false`).
    async fn fetch_capabilities(&self) -> Result<vmc::CapabilitiesNewReply> {
        match self.send(&vmc::CapabilitiesNew {}).await {
            Err(e) if e.code() == Some(jdwp_protocol::ErrorCode::NOT_IMPLEMENTED) => {
                let old = self.send(&vmc::Capabilities {}).await?;
                // All 32 flags false (32 zero bytes decode to exactly that), then the old seven.
                let mut all: vmc::CapabilitiesNewReply =
                    jdwp_protocol::codec::decode_body(&[0u8; 32], jdwp_protocol::IdSizes::default())
                        .map_err(|source| JdiError::Decode { command: "VirtualMachine.Capabilities", source })?;
                all.can_watch_field_modification = old.can_watch_field_modification;
                all.can_watch_field_access = old.can_watch_field_access;
                all.can_get_bytecodes = old.can_get_bytecodes;
                all.can_get_synthetic_attribute = old.can_get_synthetic_attribute;
                all.can_get_owned_monitor_info = old.can_get_owned_monitor_info;
                all.can_get_current_contended_monitor = old.can_get_current_contended_monitor;
                all.can_get_monitor_info = old.can_get_monitor_info;
                Ok(all)
            }
            r => r,
        }
    }

    /// Tells the VM the debugger no longer holds these object IDs (`VirtualMachine.DisposeObjects`),
    /// each with how many times it was received; the VM may then free or reuse them.
    pub async fn dispose_objects(&self, objects: &[(jdwp_protocol::ObjectId, i32)]) -> Result<()> {
        let requests = objects.iter().map(|&(object, ref_cnt)| vmc::DisposeRequest { object, ref_cnt }).collect();
        self.send(&vmc::DisposeObjects { requests }).await.map(drop)
    }

    /// What the VM can do (`VirtualMachine.CapabilitiesNew`). Cached; see also the `can_*`
    /// methods.
    pub async fn capabilities(&self) -> Result<vmc::CapabilitiesNewReply> {
        let c = self.inner.capabilities.get_or_try_init(|| self.fetch_capabilities()).await?;
        Ok(c.clone())
    }

    /// The VM's class path and boot class path.
    pub async fn class_paths(&self) -> Result<vmc::ClassPathsReply> {
        self.send(&vmc::ClassPaths {}).await
    }

    /// Holds events in the VM until [`VirtualMachine::release_events`].
    pub async fn hold_events(&self) -> Result<()> {
        self.send(&vmc::HoldEvents {}).await.map(drop)
    }

    /// Sends the events held since [`VirtualMachine::hold_events`].
    pub async fn release_events(&self) -> Result<()> {
        self.send(&vmc::ReleaseEvents {}).await.map(drop)
    }

    /// How many reachable instances each type has (exact type, not subtypes), in order. Needs
    /// `can_get_instance_info`.
    pub async fn instance_counts(&self, types: &[ReferenceType]) -> Result<Vec<i64>> {
        let ref_types = types.iter().map(|t| t.id()).collect();
        let counts = self.send(&vmc::InstanceCounts { ref_types }).await?.counts;
        if counts.len() != types.len() {
            return Err(JdiError::InvalidArgument(format!(
                "VirtualMachine.InstanceCounts returned {} counts for {} types",
                counts.len(),
                types.len()
            )));
        }
        Ok(counts)
    }

    /// The cache entry of a module.
    pub(crate) fn module_info(&self, id: ModuleId) -> Arc<ModuleInfo> {
        self.inner.modules.lock().unwrap_or_else(|e| e.into_inner()).entry(id).or_default().clone()
    }

    /// Every module in the VM (JDWP 9+).
    pub async fn all_modules(&self) -> Result<Vec<ModuleReference>> {
        let r = self.send(&vmc::AllModules {}).await?;
        Ok(r.modules.into_iter().map(|m| ModuleReference::new(self.clone(), m)).collect())
    }

    /// Sets the stratum used for source information when none is asked for.
    pub async fn set_default_stratum(&self, stratum: &str) -> Result<()> {
        self.send(&vmc::SetDefaultStratum { stratum_id: stratum.to_string() }).await.map(drop)
    }

    /// Replaces the class files of loaded types (needs `can_redefine_classes`). Methods running
    /// the old code go on with it (they become obsolete). The mirrors' cached methods, line and
    /// variable tables and source information are dropped, to be asked again.
    pub async fn redefine_classes(&self, classes: Vec<(ReferenceType, Vec<u8>)>) -> Result<()> {
        let types: Vec<ReferenceType> = classes.iter().map(|(t, _)| t.clone()).collect();
        let classes = classes.into_iter().map(|(t, classfile)| vmc::ClassDef { ref_type: t.id(), classfile }).collect();
        let result = self.send(&vmc::RedefineClasses { classes }).await.map(drop);
        // Even a failed redefinition may have replaced some of the classes.
        for t in types {
            t.reset_code();
        }
        result
    }
}

/// JDI lists only prepared types; arrays have no preparation step (they report no status).
fn is_prepared(tag: TypeTag, status: i32) -> bool {
    tag == TypeTag::Array || status & class_status::PREPARED != 0
}

/// `can_*` methods, one per capability flag of `CapabilitiesNew`.
macro_rules! capability_queries {
    ($($(#[$meta:meta])* $name:ident;)*) => {
        impl VirtualMachine {
            $(
                $(#[$meta])*
                pub async fn $name(&self) -> Result<bool> {
                    Ok(self.capabilities().await?.$name)
                }
            )*
        }
    };
}

capability_queries! {
    /// Whether field modification watchpoints can be requested.
    can_watch_field_modification;
    /// Whether field access watchpoints can be requested.
    can_watch_field_access;
    /// Whether [`crate::Method::bytecodes`] works.
    can_get_bytecodes;
    /// Whether the VM tells synthetic members apart.
    can_get_synthetic_attribute;
    /// Whether a thread's owned monitors can be asked for.
    can_get_owned_monitor_info;
    /// Whether the monitor a thread waits for can be asked for.
    can_get_current_contended_monitor;
    /// Whether an object's monitor information can be asked for.
    can_get_monitor_info;
    /// Whether [`VirtualMachine::redefine_classes`] works.
    can_redefine_classes;
    /// Whether a redefinition may add methods.
    can_add_method;
    /// Whether a redefinition may change a class's shape.
    can_unrestrictedly_redefine_classes;
    /// Whether frames can be popped.
    can_pop_frames;
    /// Whether event requests can be filtered by instance.
    can_use_instance_filters;
    /// Whether [`crate::ReferenceType::source_debug_extension`] works.
    can_get_source_debug_extension;
    /// Whether VM death events can be requested.
    can_request_vm_death_event;
    /// Whether the default stratum can be set.
    can_set_default_stratum;
    /// Whether instances, instance counts and referring objects can be asked for.
    can_get_instance_info;
    /// Whether monitor events can be requested.
    can_request_monitor_events;
    /// Whether owned monitors come with the frames that locked them.
    can_get_monitor_frame_info;
    /// Whether class prepare requests can filter by source name.
    can_use_source_name_filters;
    /// Whether [`crate::ReferenceType::constant_pool`] works.
    can_get_constant_pool;
    /// Whether a method can be forced to return early.
    can_force_early_return;
}

impl VirtualMachine {
    /// Whether [`crate::ReferenceType::class_file_version`] works (JDWP 1.6+).
    pub async fn can_get_class_file_version(&self) -> Result<bool> {
        self.jdwp_at_least(1, 6).await
    }

    /// Whether method exit events carry the return value (JDWP 1.6+).
    pub async fn can_get_method_return_values(&self) -> Result<bool> {
        self.jdwp_at_least(1, 6).await
    }

    /// Whether modules can be asked about (JDWP 9+).
    pub async fn can_get_module_info(&self) -> Result<bool> {
        self.jdwp_at_least(9, 0).await
    }

    /// Whether the debugger may change the VM's state (always: read-only connections are not
    /// supported).
    pub fn can_be_modified(&self) -> bool {
        true
    }
}
