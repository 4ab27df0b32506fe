//! Objects that stand for parts of the type system: class loaders, `java.lang.Class` objects and
//! modules. Each wraps the [`ObjectReference`] it also is.

use jdwp_protocol::commands::{class_loader_reference as clr, class_object_reference as cor, module_reference as mr};
use jdwp_protocol::{ClassLoaderId, ClassObjectId, ModuleId};
use tokio::sync::OnceCell;

use super::reference_type::join_all;
use crate::error::{JdiError, Result};
use crate::mirrors::{ObjectReference, ReferenceType};
use crate::vm::VirtualMachine;

/// A `java.lang.ClassLoader`. The bootstrap loader has no object: APIs say `None` for it.
#[derive(Clone, Debug, PartialEq)]
pub struct ClassLoaderReference(pub ObjectReference);

impl ClassLoaderReference {
    /// A mirror for the loader with this ID.
    pub fn new(vm: VirtualMachine, id: ClassLoaderId) -> ClassLoaderReference {
        ClassLoaderReference(ObjectReference::new(vm, id.into()))
    }

    /// The loader's object ID.
    pub fn id(&self) -> ClassLoaderId {
        self.0.id().into()
    }

    /// The loader as a plain object.
    pub fn as_object(&self) -> &ObjectReference {
        &self.0
    }

    /// Every type this loader was asked for and answered, itself or by delegating (it is an
    /// *initiating* loader of each): the types code it defined can name.
    pub async fn visible_classes(&self) -> Result<Vec<ReferenceType>> {
        let vm = self.0.vm();
        let r = vm.send(&clr::VisibleClasses { class_loader_object: self.id() }).await?;
        vm.reference_types_of_kinds(r.classes.into_iter().map(|c| (c.ref_type_tag, c.type_id)).collect()).await
    }

    /// The loaded, prepared types this loader defined (not merely initiated), and arrays of
    /// them (an array's loader is its element type's, as JDI reports it). Asks every loaded type
    /// for its loader the first time; the answers are cached.
    pub async fn defined_classes(&self) -> Result<Vec<ReferenceType>> {
        let all = self.0.vm().all_classes().await?;
        let loaders = join_all(all.iter().map(|t| t.class_loader_id())).await;
        let mut out = Vec::new();
        for (t, loader) in all.into_iter().zip(loaders) {
            if loader? == self.id() {
                out.push(t);
            }
        }
        Ok(out)
    }
}

/// A `java.lang.Class` object.
#[derive(Clone, Debug, PartialEq)]
pub struct ClassObjectReference(pub ObjectReference);

impl ClassObjectReference {
    /// A mirror for the class object with this ID.
    pub fn new(vm: VirtualMachine, id: ClassObjectId) -> ClassObjectReference {
        ClassObjectReference(ObjectReference::new(vm, id.into()))
    }

    /// The class object's ID.
    pub fn id(&self) -> ClassObjectId {
        self.0.id().into()
    }

    /// The class object as a plain object.
    pub fn as_object(&self) -> &ObjectReference {
        &self.0
    }

    /// The type this object stands for. Primitive classes (`int.class`) come back as classes
    /// named like the primitive type. Cached.
    pub async fn reflected_type(&self) -> Result<ReferenceType> {
        let vm = self.0.vm();
        let known = vm.inner.reflected_types.lock().unwrap_or_else(|e| e.into_inner()).get(&self.id()).copied();
        let (tag, id) = match known {
            Some(known) => known,
            None => {
                let r = vm.send(&cor::ReflectedType { class_object: self.id() }).await?;
                let mut cache = vm.inner.reflected_types.lock().unwrap_or_else(|e| e.into_inner());
                cache.insert(self.id(), (r.ref_type_tag, r.type_id));
                (r.ref_type_tag, r.type_id)
            }
        };
        vm.reference_type_of_kind(tag, id).await
    }
}

/// A `java.lang.Module` (JDWP 9+).
#[derive(Clone, Debug, PartialEq)]
pub struct ModuleReference(pub ObjectReference);

impl ModuleReference {
    /// A mirror for the module with this ID.
    pub fn new(vm: VirtualMachine, id: ModuleId) -> ModuleReference {
        ModuleReference(ObjectReference::new(vm, id.into()))
    }

    /// The module's object ID.
    pub fn id(&self) -> ModuleId {
        self.0.id().into()
    }

    /// The module as a plain object.
    pub fn as_object(&self) -> &ObjectReference {
        &self.0
    }

    /// The module's name; `None` for an unnamed module (reported as an empty name). Cached.
    pub async fn name(&self) -> Result<Option<String>> {
        let vm = self.0.vm();
        let info = vm.module_info(self.id());
        let name = info
            .name
            .get_or_try_init(|| async {
                let name = vm.send(&mr::Name { module: self.id() }).await?.name;
                Ok::<_, JdiError>(Some(name).filter(|n| !n.is_empty()))
            })
            .await?;
        Ok(name.clone())
    }

    /// The loader of the module's classes; `None` for the bootstrap loader. Cached.
    pub async fn class_loader(&self) -> Result<Option<ClassLoaderReference>> {
        let vm = self.0.vm();
        let info = vm.module_info(self.id());
        let id = *info
            .class_loader
            .get_or_try_init(|| async {
                Ok::<_, JdiError>(vm.send(&mr::ClassLoader { module: self.id() }).await?.class_loader)
            })
            .await?;
        Ok((!id.is_null()).then(|| ClassLoaderReference::new(vm.clone(), id)))
    }
}

/// What is cached about a module: it never changes.
#[derive(Default)]
pub(crate) struct ModuleInfo {
    name: OnceCell<Option<String>>,
    class_loader: OnceCell<ClassLoaderId>,
}
