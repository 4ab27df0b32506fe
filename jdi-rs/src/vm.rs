//! [`VirtualMachine`]: the mirror of the target VM, owner of the connection and of the caches.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use jdwp_protocol::commands::{reference_type as rt, virtual_machine as vmc};
use jdwp_protocol::{Command, IdSizes, ReferenceTypeId, ThreadGroupId, ThreadId, TypeTag};
use tokio::sync::mpsc;

use crate::connection::Connection;
use crate::error::{JdiError, Result};
use crate::event::{EventQueue, EventRequestManager};
use crate::mirrors::{ReferenceType, ThreadGroupReference, ThreadReference, TypeInfo};

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
    /// The child process when this VM was launched by us (killed when the last handle goes).
    pub(crate) process: Mutex<Option<tokio::process::Child>>,
}

/// `VirtualMachine.Version`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Version {
    pub description: String,
    pub jdwp_major: i32,
    pub jdwp_minor: i32,
    pub vm_version: String,
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
                process: Mutex::new(None),
            }),
        })
    }

    pub(crate) fn set_process(&self, child: tokio::process::Child) {
        *self.inner.process.lock().unwrap_or_else(|e| e.into_inner()) = Some(child);
    }

    /// The low-level connection, for commands no mirror wraps.
    pub fn connection(&self) -> &Connection {
        &self.inner.conn
    }

    /// Sends one command and returns its reply.
    pub async fn send<C: Command>(&self, command: &C) -> Result<C::Reply> {
        self.inner.conn.send(command).await
    }

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

    pub async fn version(&self) -> Result<Version> {
        let r = self.send(&vmc::Version {}).await?;
        Ok(Version {
            description: r.description,
            jdwp_major: r.jdwp_major,
            jdwp_minor: r.jdwp_minor,
            vm_version: r.vm_version,
            vm_name: r.vm_name,
        })
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

    /// Every loaded reference type.
    pub async fn all_classes(&self) -> Result<Vec<ReferenceType>> {
        let r = self.send(&vmc::AllClassesWithGeneric {}).await?;
        Ok(r.classes.into_iter().map(|c| self.type_mirror(c.ref_type_tag, c.type_id, Some(c.signature))).collect())
    }

    /// Loaded types with a binary name (`java.lang.String`, `int[]`, `Demo$Inner`).
    pub async fn classes_by_name(&self, name: &str) -> Result<Vec<ReferenceType>> {
        let signature = crate::names::signature_of_type_name(name);
        self.classes_by_signature(&signature).await
    }

    /// Loaded types with a JNI signature (`Ljava/lang/String;`).
    pub async fn classes_by_signature(&self, signature: &str) -> Result<Vec<ReferenceType>> {
        let r = self.send(&vmc::ClassesBySignature { signature: signature.to_string() }).await?;
        Ok(r.classes
            .into_iter()
            .map(|c| self.type_mirror(c.ref_type_tag, c.type_id, Some(signature.to_string())))
            .collect())
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

    pub async fn all_threads(&self) -> Result<Vec<ThreadReference>> {
        let r = self.send(&vmc::AllThreads {}).await?;
        Ok(r.threads.into_iter().map(|t| self.thread(t)).collect())
    }

    pub fn thread(&self, id: ThreadId) -> ThreadReference {
        ThreadReference::new(self.clone(), id)
    }

    pub async fn top_level_thread_groups(&self) -> Result<Vec<ThreadGroupReference>> {
        let r = self.send(&vmc::TopLevelThreadGroups {}).await?;
        Ok(r.groups.into_iter().map(|g| self.thread_group(g)).collect())
    }

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

    pub async fn create_string(&self, value: &str) -> Result<crate::mirrors::StringReference> {
        let r = self.send(&vmc::CreateString { utf: value.to_string() }).await?;
        Ok(crate::mirrors::StringReference::new(self.clone(), r.string_object.into()))
    }

    pub async fn capabilities(&self) -> Result<vmc::CapabilitiesNewReply> {
        self.send(&vmc::CapabilitiesNew {}).await
    }

    pub async fn class_paths(&self) -> Result<vmc::ClassPathsReply> {
        self.send(&vmc::ClassPaths {}).await
    }

    pub async fn hold_events(&self) -> Result<()> {
        self.send(&vmc::HoldEvents {}).await.map(drop)
    }

    pub async fn release_events(&self) -> Result<()> {
        self.send(&vmc::ReleaseEvents {}).await.map(drop)
    }

    pub async fn instance_counts(&self, types: &[ReferenceType]) -> Result<Vec<i64>> {
        let ref_types = types.iter().map(|t| t.id()).collect();
        Ok(self.send(&vmc::InstanceCounts { ref_types }).await?.counts)
    }

    pub async fn set_default_stratum(&self, stratum: &str) -> Result<()> {
        self.send(&vmc::SetDefaultStratum { stratum_id: stratum.to_string() }).await.map(drop)
    }

    pub async fn redefine_classes(&self, classes: Vec<(ReferenceType, Vec<u8>)>) -> Result<()> {
        let classes = classes.into_iter().map(|(t, classfile)| vmc::ClassDef { ref_type: t.id(), classfile }).collect();
        self.send(&vmc::RedefineClasses { classes }).await.map(drop)
    }
}

impl Drop for VmInner {
    fn drop(&mut self) {
        if let Some(child) = self.process.get_mut().unwrap_or_else(|e| e.into_inner()).as_mut() {
            let _ = child.start_kill();
        }
    }
}
