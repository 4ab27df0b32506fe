//! Reference types (classes, interfaces, arrays): what all kinds share. Their members are
//! mirrored in `method` and `field`, the kind-specific operations in `class_type` and
//! `array_type`.
//!
//! What never changes about a type (signatures, modifiers, members, superclass, interfaces, loader,
//! module, line and variable tables) is fetched once and kept in the type's [`TypeInfo`], which the
//! [`VirtualMachine`] shares between every mirror of that type. Derived lists (visible and
//! inherited members) are recomputed from those caches without a round trip. A redefinition
//! replaces what it can change (methods and their tables, source information, the class file
//! version and constant pool).
//!
//! Cached data holds no [`VirtualMachine`] (the VM owns the caches, so that would be a cycle);
//! mirrors are built around it when asked for.

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, OnceLock};

use jdwp_protocol::commands::{class_type as ct, reference_type as rt};
use jdwp_protocol::{
    ClassLoaderId, ClassObjectId, ErrorCode, Location, MethodId, ModuleId, ReferenceTypeId, TypeTag, Value,
    class_status, modifiers,
};
use tokio::sync::OnceCell;

use super::field::{Field, FieldData};
use super::method::{Lines, Method, MethodData};
use crate::error::{JdiError, Result};
use crate::mirrors::{
    ArrayType, ClassLoaderReference, ClassObjectReference, ClassType, InterfaceType, ModuleReference, ObjectReference,
    PrimitiveType, Type,
};
use crate::names;
use crate::vm::VirtualMachine;

/// JDWP's marker for synthetic members (the class file's `ACC_SYNTHETIC` is honoured as well).
pub(super) const SYNTHETIC_BITS: i32 = modifiers::SYNTHETIC | modifiers::SYNTHETIC_JDWP;
/// How many commands helpers keep in flight at once when they ask about many types.
const CONCURRENCY: usize = 64;

/// What is cached about one reference type (shared by all its mirrors).
pub struct TypeInfo {
    tag: TypeTag,
    signature: OnceLock<String>,
    generic_signature: OnceCell<Option<String>>,
    modifiers: OnceCell<i32>,
    fields: OnceCell<Vec<Arc<FieldData>>>,
    superclass: OnceCell<Option<ReferenceTypeId>>,
    interfaces: OnceCell<Vec<ReferenceTypeId>>,
    class_loader: OnceCell<ClassLoaderId>,
    module: OnceCell<ModuleId>,
    class_object: OnceCell<ClassObjectId>,
    /// What a redefinition can change; swapped for an empty one when the type is redefined.
    code: Mutex<Arc<CodeInfo>>,
}

#[derive(Default)]
struct CodeInfo {
    methods: OnceCell<Vec<Arc<MethodData>>>,
    /// `None`: the class file has no `SourceFile` attribute.
    source_name: OnceCell<Option<String>>,
    /// `None`: no `SourceDebugExtension` attribute.
    source_debug_extension: OnceCell<Option<String>>,
    class_file_version: OnceCell<ClassFileVersion>,
    constant_pool: OnceCell<ConstantPool>,
}

impl TypeInfo {
    pub(crate) fn new(tag: TypeTag) -> TypeInfo {
        TypeInfo {
            tag,
            signature: OnceLock::new(),
            generic_signature: OnceCell::new(),
            modifiers: OnceCell::new(),
            fields: OnceCell::new(),
            superclass: OnceCell::new(),
            interfaces: OnceCell::new(),
            class_loader: OnceCell::new(),
            module: OnceCell::new(),
            class_object: OnceCell::new(),
            code: Mutex::new(Arc::default()),
        }
    }

    pub(crate) fn set_signature(&self, sig: String) {
        let _ = self.signature.set(sig);
    }

    /// Records a generic signature a reply carried (empty: the type has none).
    pub(crate) fn set_generic_signature(&self, generic: String) {
        let _ = self.generic_signature.set(Some(generic).filter(|g| !g.is_empty()));
    }

    /// Forgets what a redefinition may have changed.
    pub(crate) fn reset_code(&self) {
        *self.code.lock().unwrap_or_else(|e| e.into_inner()) = Arc::default();
    }

    fn code(&self) -> Arc<CodeInfo> {
        self.code.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

/// The major and minor version of a class file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct ClassFileVersion {
    /// `major_version` of the class file (61 for Java 17).
    pub major: i32,
    /// `minor_version` of the class file.
    pub minor: i32,
}

/// A class file's constant pool: `constant_pool_count` and the raw entries, as in the class file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConstantPool {
    /// The class file's `constant_pool_count` (one more than the number of entries).
    pub count: i32,
    /// The entries in class file format, without the count.
    pub bytes: Vec<u8>,
}

/// A class, interface or array type in the target VM. The kind-specific operations live on
/// [`ClassType`], [`InterfaceType`] and [`ArrayType`] (see [`ReferenceType::as_class`]...), which
/// dereference to this.
#[derive(Clone)]
pub struct ReferenceType {
    vm: VirtualMachine,
    id: ReferenceTypeId,
    info: Arc<TypeInfo>,
}

impl PartialEq for ReferenceType {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
    }
}

impl Eq for ReferenceType {}

/// By name, then by ID (as JDI compares types).
impl PartialOrd for ReferenceType {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for ReferenceType {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.name().cmp(&other.name()).then(self.id.cmp(&other.id))
    }
}

impl AsRef<ReferenceType> for ReferenceType {
    fn as_ref(&self) -> &ReferenceType {
        self
    }
}

impl std::hash::Hash for ReferenceType {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.id.hash(state)
    }
}

impl std::fmt::Debug for ReferenceType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({:?})", self.name(), self.id)
    }
}

pub(super) fn absent(command: &'static str) -> JdiError {
    JdiError::Jdwp { command, code: ErrorCode::ABSENT_INFORMATION }
}

pub(super) fn is_absent(e: &JdiError) -> bool {
    e.code() == Some(ErrorCode::ABSENT_INFORMATION)
}

/// A future of a batch and its result once ready.
type Slot<F> = (Pin<Box<F>>, Option<<F as Future>::Output>);

/// Runs `futures` with at most [`CONCURRENCY`] in flight, keeping their order.
pub(crate) async fn join_all<F: Future>(futures: impl IntoIterator<Item = F>) -> Vec<F::Output> {
    let mut out = Vec::new();
    let mut futures = futures.into_iter().peekable();
    while futures.peek().is_some() {
        let mut batch: Vec<Slot<F>> = futures.by_ref().take(CONCURRENCY).map(|f| (Box::pin(f), None)).collect();
        std::future::poll_fn(|cx| {
            let mut pending = false;
            for (future, result) in batch.iter_mut().filter(|(_, r)| r.is_none()) {
                match future.as_mut().poll(cx) {
                    std::task::Poll::Ready(v) => *result = Some(v),
                    std::task::Poll::Pending => pending = true,
                }
            }
            if pending { std::task::Poll::Pending } else { std::task::Poll::Ready(()) }
        })
        .await;
        out.extend(batch.into_iter().filter_map(|(_, r)| r));
    }
    out
}

impl ReferenceType {
    pub(crate) fn new(vm: VirtualMachine, id: ReferenceTypeId, info: Arc<TypeInfo>) -> ReferenceType {
        ReferenceType { vm, id, info }
    }

    /// The VM the type belongs to.
    pub fn vm(&self) -> &VirtualMachine {
        &self.vm
    }

    /// The type's ID.
    pub fn id(&self) -> ReferenceTypeId {
        self.id
    }

    pub(crate) fn info(&self) -> &TypeInfo {
        &self.info
    }

    /// The kind: class, interface or array.
    pub fn tag(&self) -> TypeTag {
        self.info.tag
    }

    /// Whether this is a class (enums and primitive classes included).
    pub fn is_class(&self) -> bool {
        self.info.tag == TypeTag::Class
    }

    /// Whether this is an interface.
    pub fn is_interface(&self) -> bool {
        self.info.tag == TypeTag::Interface
    }

    /// Whether this is an array type.
    pub fn is_array(&self) -> bool {
        self.info.tag == TypeTag::Array
    }

    /// This type as a class, when it is one.
    pub fn as_class(&self) -> Option<ClassType> {
        self.is_class().then(|| ClassType::new(self.clone()))
    }

    /// This type as an interface, when it is one.
    pub fn as_interface(&self) -> Option<InterfaceType> {
        self.is_interface().then(|| InterfaceType::new(self.clone()))
    }

    /// This type as an array type, when it is one.
    pub fn as_array(&self) -> Option<ArrayType> {
        self.is_array().then(|| ArrayType::new(self.clone()))
    }

    /// The JNI signature; every way of obtaining a mirror records it, so this is never a round trip.
    pub fn signature(&self) -> &str {
        self.info.signature.get().map(String::as_str).unwrap_or("")
    }

    /// The Java name: `java.lang.String`, `int[]`, `Outer$Nested`.
    pub fn name(&self) -> String {
        names::type_name_of_signature(self.signature())
    }

    /// The generic signature (`<T:Ljava/lang/Object;>Ljava/lang/Object;`), `None` when the type
    /// is not generic. Cached.
    pub async fn generic_signature(&self) -> Result<Option<String>> {
        let g = self
            .info
            .generic_signature
            .get_or_try_init(|| async {
                let g = self.vm.send(&rt::SignatureWithGeneric { ref_type: self.id }).await?.generic_signature;
                Ok::<_, JdiError>(Some(g).filter(|g| !g.is_empty()))
            })
            .await?;
        Ok(g.clone())
    }

    /// The access flags (`jdwp_protocol::modifiers` bits). Cached.
    pub async fn modifiers(&self) -> Result<i32> {
        let m = self
            .info
            .modifiers
            .get_or_try_init(|| async {
                Ok::<_, JdiError>(self.vm.send(&rt::Modifiers { ref_type: self.id }).await?.mod_bits)
            })
            .await?;
        Ok(*m)
    }

    async fn has_modifier(&self, bit: i32) -> Result<bool> {
        Ok(self.modifiers().await? & bit != 0)
    }

    /// Declared `public`. Cached, like every modifier query.
    pub async fn is_public(&self) -> Result<bool> {
        self.has_modifier(modifiers::PUBLIC).await
    }
    /// Declared `private` (member types only).
    pub async fn is_private(&self) -> Result<bool> {
        self.has_modifier(modifiers::PRIVATE).await
    }
    /// Declared `protected` (member types only).
    pub async fn is_protected(&self) -> Result<bool> {
        self.has_modifier(modifiers::PROTECTED).await
    }
    /// Neither public, private nor protected.
    pub async fn is_package_private(&self) -> Result<bool> {
        Ok(self.modifiers().await? & (modifiers::PUBLIC | modifiers::PRIVATE | modifiers::PROTECTED) == 0)
    }
    /// Declared `abstract` (interfaces always are).
    pub async fn is_abstract(&self) -> Result<bool> {
        self.has_modifier(modifiers::ABSTRACT).await
    }
    /// Declared `final`.
    pub async fn is_final(&self) -> Result<bool> {
        self.has_modifier(modifiers::FINAL).await
    }
    /// Static nested types (the VM reports the `InnerClasses` flags of member types).
    pub async fn is_static(&self) -> Result<bool> {
        self.has_modifier(modifiers::STATIC).await
    }

    /// The `jdwp_protocol::class_status` bits (not cached: they change as the type initializes).
    /// Arrays report 0 over JDWP; the `is_*` helpers treat them as always ready, as JDI does.
    pub async fn status(&self) -> Result<i32> {
        Ok(self.vm.send(&rt::Status { ref_type: self.id }).await?.status)
    }

    async fn has_status(&self, bit: i32) -> Result<bool> {
        if self.is_array() {
            return Ok(bit != class_status::ERROR);
        }
        Ok(self.status().await? & bit != 0)
    }

    /// Whether the class file has been verified.
    pub async fn is_verified(&self) -> Result<bool> {
        self.has_status(class_status::VERIFIED).await
    }
    /// Prepared types have their members and static storage laid out; most queries need it.
    pub async fn is_prepared(&self) -> Result<bool> {
        self.has_status(class_status::PREPARED).await
    }
    /// Whether static initialization has completed.
    pub async fn is_initialized(&self) -> Result<bool> {
        self.has_status(class_status::INITIALIZED).await
    }
    /// Whether static initialization failed (the type is unusable).
    pub async fn failed_to_initialize(&self) -> Result<bool> {
        self.has_status(class_status::ERROR).await
    }

    // ---- fields ----

    async fn field_data(&self) -> Result<&Vec<Arc<FieldData>>> {
        self.info
            .fields
            .get_or_try_init(|| async {
                if self.is_array() {
                    return Ok(Vec::new());
                }
                let r = match self.vm.send(&rt::FieldsWithGeneric { ref_type: self.id }).await {
                    // An agent older than JDWP 1.5 only has the plain form.
                    Err(e) if e.code() == Some(ErrorCode::NOT_IMPLEMENTED) => {
                        let plain = self.vm.send(&rt::Fields { ref_type: self.id }).await?;
                        rt::FieldsWithGenericReply {
                            declared: plain
                                .declared
                                .into_iter()
                                .map(|f| rt::GenericFieldInfo {
                                    field_id: f.field_id,
                                    name: f.name,
                                    signature: f.signature,
                                    generic_signature: String::new(),
                                    mod_bits: f.mod_bits,
                                })
                                .collect(),
                        }
                    }
                    r => r?,
                };
                Ok::<_, JdiError>(
                    r.declared
                        .into_iter()
                        .map(|f| {
                            Arc::new(FieldData {
                                declaring_type: self.id,
                                id: f.field_id,
                                name: f.name,
                                signature: f.signature,
                                generic_signature: Some(f.generic_signature).filter(|g| !g.is_empty()),
                                modifiers: f.mod_bits,
                                resolved_type: OnceLock::new(),
                            })
                        })
                        .collect(),
                )
            })
            .await
    }

    fn field_mirror(&self, data: &Arc<FieldData>) -> Field {
        Field { vm: self.vm.clone(), data: data.clone() }
    }

    /// Fields declared by this type, in class-file order, synthetic ones included (none for
    /// arrays). Cached.
    pub async fn fields(&self) -> Result<Vec<Field>> {
        Ok(self.field_data().await?.iter().map(|d| self.field_mirror(d)).collect())
    }

    /// Every field declared by this type and its supertypes, hidden and ambiguous ones included.
    /// Order: this type's, then each supertype's once, depth first with interfaces before the
    /// superclass.
    pub async fn all_fields(&self) -> Result<Vec<Field>> {
        let mut out = Vec::new();
        for t in self.supertypes_depth_first().await? {
            out.extend(t.fields().await?);
        }
        Ok(out)
    }

    /// The fields reachable by simple name from this type: its own, then inherited ones that
    /// are neither hidden (a closer field has the name) nor ambiguous (two different fields with
    /// the name come from different supertypes). Inherited ones follow the direct supertypes'
    /// order: interfaces as declared, then the superclass.
    pub async fn visible_fields(&self) -> Result<Vec<Field>> {
        self.visible_fields_boxed().await
    }

    fn visible_fields_boxed(&self) -> Pin<Box<dyn Future<Output = Result<Vec<Field>>> + Send + '_>> {
        Box::pin(async move {
            let declared = self.fields().await?;
            let mut inherited: Vec<Option<Field>> = Vec::new();
            let mut by_name: HashMap<String, usize> = HashMap::new();
            let mut ambiguous: HashSet<String> = HashSet::new();
            for sup in self.direct_supertypes().await? {
                for f in sup.visible_fields_boxed().await? {
                    if ambiguous.contains(&f.name) {
                        continue;
                    }
                    match by_name.get(&f.name) {
                        None => {
                            by_name.insert(f.name.clone(), inherited.len());
                            inherited.push(Some(f));
                        }
                        // The same field reached along two paths (an interface inherited twice).
                        Some(&i) if inherited[i].as_ref() == Some(&f) => {}
                        Some(&i) => {
                            ambiguous.insert(f.name.clone());
                            inherited[i] = None;
                        }
                    }
                }
            }
            let declared_names: HashSet<&str> = declared.iter().map(|f| f.name.as_str()).collect();
            let inherited: Vec<Field> =
                inherited.into_iter().flatten().filter(|f| !declared_names.contains(f.name.as_str())).collect();
            Ok(declared.into_iter().chain(inherited).collect())
        })
    }

    /// The visible field with this name (see [`ReferenceType::visible_fields`]).
    pub async fn field_by_name(&self, name: &str) -> Result<Option<Field>> {
        if let Some(f) = self.field_data().await?.iter().find(|f| f.name == name) {
            return Ok(Some(self.field_mirror(f)));
        }
        Ok(self.visible_fields().await?.into_iter().find(|f| f.name == name))
    }

    // ---- methods ----

    /// Methods declared by this type (not inherited), in class-file order: constructors,
    /// `<clinit>` and synthetic methods included; none for arrays. Cached until redefined.
    pub async fn methods(&self) -> Result<Vec<Method>> {
        let code = self.info.code();
        let data = code
            .methods
            .get_or_try_init(|| async {
                if self.is_array() {
                    return Ok(Vec::new());
                }
                let r = match self.vm.send(&rt::MethodsWithGeneric { ref_type: self.id }).await {
                    // An agent older than JDWP 1.5 only has the plain form.
                    Err(e) if e.code() == Some(ErrorCode::NOT_IMPLEMENTED) => {
                        let plain = self.vm.send(&rt::Methods { ref_type: self.id }).await?;
                        rt::MethodsWithGenericReply {
                            declared: plain
                                .declared
                                .into_iter()
                                .map(|m| rt::GenericMethodInfo {
                                    method_id: m.method_id,
                                    name: m.name,
                                    signature: m.signature,
                                    generic_signature: String::new(),
                                    mod_bits: m.mod_bits,
                                })
                                .collect(),
                        }
                    }
                    r => r?,
                };
                Ok::<_, JdiError>(
                    r.declared
                        .into_iter()
                        .map(|m| {
                            Arc::new(MethodData {
                                declaring_type: self.id,
                                type_tag: self.info.tag,
                                id: m.method_id,
                                name: m.name,
                                signature: m.signature,
                                generic_signature: Some(m.generic_signature).filter(|g| !g.is_empty()),
                                modifiers: m.mod_bits,
                                lines: OnceCell::new(),
                                variables: OnceCell::new(),
                            })
                        })
                        .collect(),
                )
            })
            .await?;
        Ok(data.iter().map(|data| Method { vm: self.vm.clone(), data: data.clone() }).collect())
    }

    /// Every method declared by this type and its supertypes, overridden and hidden ones included.
    /// Order: this type's, then each supertype's once, depth first with interfaces before the
    /// superclass.
    pub async fn all_methods(&self) -> Result<Vec<Method>> {
        let mut out = Vec::new();
        for t in self.supertypes_depth_first().await? {
            out.extend(t.methods().await?);
        }
        Ok(out)
    }

    /// The methods that can be called on this type: its own plus the inherited ones no closer
    /// method overrides or hides (same name and signature). A superclass's method wins over an
    /// interface's; methods of unrelated interfaces with the same signature are all kept.
    /// Constructors, static initializers and static interface methods are not inherited (Java
    /// rules); access modifiers are not considered. Ordered as [`ReferenceType::all_methods`].
    pub async fn visible_methods(&self) -> Result<Vec<Method>> {
        let visible: HashSet<(ReferenceTypeId, MethodId)> =
            self.visible_methods_boxed().await?.iter().map(|m| (m.declaring_type_id(), m.id())).collect();
        Ok(self
            .all_methods()
            .await?
            .into_iter()
            .filter(|m| visible.contains(&(m.declaring_type_id(), m.id())))
            .collect())
    }

    fn visible_methods_boxed(&self) -> Pin<Box<dyn Future<Output = Result<Vec<Method>>> + Send + '_>> {
        Box::pin(async move {
            let declared = self.methods().await?;
            let key = |m: &Method| format!("{}{}", m.name(), m.signature());
            let taken: HashSet<String> = declared.iter().map(key).collect();
            let inheritable = |m: &Method, from_interface: bool| {
                !(m.is_constructor() || m.is_static_initializer() || (from_interface && m.is_static()))
            };
            let mut from_class: Vec<Method> = Vec::new();
            if let Some(sup) = self.superclass().await? {
                from_class = sup
                    .visible_methods_boxed()
                    .await?
                    .into_iter()
                    .filter(|m| inheritable(m, false) && !taken.contains(&key(m)))
                    .collect();
            }
            let class_keys: HashSet<String> = from_class.iter().map(key).collect();
            // Interface candidates by key; of two with one key, the one from a subinterface wins.
            let mut candidates: Vec<Method> = Vec::new();
            for iface in self.interfaces().await? {
                for m in iface.visible_methods_boxed().await? {
                    let k = key(&m);
                    if inheritable(&m, true)
                        && !taken.contains(&k)
                        && !class_keys.contains(&k)
                        && !candidates.contains(&m)
                    {
                        candidates.push(m);
                    }
                }
            }
            let mut from_interfaces = Vec::new();
            for m in &candidates {
                let mut overridden = false;
                for other in candidates.iter().filter(|o| *o != m && key(o) == key(m)) {
                    let other_type = other.declaring_type().await?;
                    if other_type.all_interfaces().await?.iter().any(|i| i.id == m.declaring_type_id()) {
                        overridden = true;
                        break;
                    }
                }
                if !overridden {
                    from_interfaces.push(m.clone());
                }
            }
            Ok(declared.into_iter().chain(from_class).chain(from_interfaces).collect())
        })
    }

    /// Visible methods with this name (overloads; overridden ones excluded).
    pub async fn methods_by_name(&self, name: &str) -> Result<Vec<Method>> {
        Ok(self.visible_methods().await?.into_iter().filter(|m| m.name() == name).collect())
    }

    /// Visible methods with this name and JNI signature (`(ILjava/lang/String;)V`).
    pub async fn methods_by_name_and_signature(&self, name: &str, signature: &str) -> Result<Vec<Method>> {
        Ok(self
            .visible_methods()
            .await?
            .into_iter()
            .filter(|m| m.name() == name && m.signature() == signature)
            .collect())
    }

    /// A method declared by this type, by ID (`INVALID_METHODID` when it declares no such method).
    pub async fn method_by_id(&self, id: MethodId) -> Result<Method> {
        self.methods()
            .await?
            .into_iter()
            .find(|m| m.id() == id)
            .ok_or(JdiError::Jdwp { command: "ReferenceType.Methods", code: ErrorCode::INVALID_METHODID })
    }

    // ---- supertypes and related types ----

    /// The superclass's ID (see [`ReferenceType::superclass`]). Cached.
    pub(crate) async fn superclass_id(&self) -> Result<Option<ReferenceTypeId>> {
        let sup = self
            .info
            .superclass
            .get_or_try_init(|| async {
                if !self.is_class() {
                    return Ok(None);
                }
                let sup = self.vm.send(&ct::Superclass { clazz: self.id.into() }).await?.superclass;
                Ok::<_, JdiError>(if sup.is_null() { None } else { Some(ReferenceTypeId::from(sup)) })
            })
            .await?;
        Ok(*sup)
    }

    /// The superclass of a class (`None` for `java.lang.Object`, interfaces and arrays). Cached.
    pub async fn superclass(&self) -> Result<Option<ReferenceType>> {
        match self.superclass_id().await? {
            Some(id) => Ok(Some(self.vm.reference_type_of_kind(TypeTag::Class, id).await?)),
            None => Ok(None),
        }
    }

    /// The interfaces a class implements or an interface extends, as declared (not inherited
    /// ones); none for arrays. Cached.
    pub async fn interfaces(&self) -> Result<Vec<ReferenceType>> {
        let ids = self.interface_ids().await?;
        self.vm.reference_types_of_kinds(ids.into_iter().map(|id| (TypeTag::Interface, id)).collect()).await
    }

    /// The IDs of [`ReferenceType::interfaces`]. Cached.
    pub(crate) async fn interface_ids(&self) -> Result<Vec<ReferenceTypeId>> {
        let ids = self
            .info
            .interfaces
            .get_or_try_init(|| async {
                if self.is_array() {
                    return Ok(Vec::new());
                }
                let r = self.vm.send(&rt::Interfaces { ref_type: self.id }).await?;
                Ok::<_, JdiError>(r.interfaces.into_iter().map(ReferenceTypeId::from).collect())
            })
            .await?;
        Ok(ids.clone())
    }

    /// Forgets what a redefinition may have changed (methods, tables, source information).
    pub(crate) fn reset_code(&self) {
        self.info.reset_code();
    }

    /// Every interface this type implements or extends, directly or through its supertypes, each
    /// once, depth first (a class's own interfaces before its superclass's).
    pub async fn all_interfaces(&self) -> Result<Vec<ReferenceType>> {
        let all = self.supertypes_depth_first().await?;
        Ok(all.into_iter().skip(1).filter(ReferenceType::is_interface).collect())
    }

    /// Interfaces in declaration order, then the superclass.
    async fn direct_supertypes(&self) -> Result<Vec<ReferenceType>> {
        let mut out = self.interfaces().await?;
        out.extend(self.superclass().await?);
        Ok(out)
    }

    /// This type, then every supertype once: depth first, interfaces before the superclass.
    async fn supertypes_depth_first(&self) -> Result<Vec<ReferenceType>> {
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        let mut stack = vec![self.clone()];
        while let Some(t) = stack.pop() {
            if !seen.insert(t.id) {
                continue;
            }
            let mut next = t.direct_supertypes().await?;
            next.reverse();
            stack.extend(next);
            out.push(t);
        }
        Ok(out)
    }

    /// Whether a value of this type can be stored where `target` is expected (same type, a
    /// superclass, an implemented interface; arrays by component). Compares by signature, so
    /// like-named types of different loaders are not told apart.
    pub async fn is_assignable_to(&self, target_signature: &str) -> Result<bool> {
        if self.signature() == target_signature || target_signature == "Ljava/lang/Object;" {
            return Ok(true);
        }
        if self.is_array() {
            if matches!(target_signature, "Ljava/lang/Cloneable;" | "Ljava/io/Serializable;") {
                return Ok(true);
            }
            let (Some(mine), Some(theirs)) =
                (names::component_signature(self.signature()), names::component_signature(target_signature))
            else {
                return Ok(false);
            };
            if names::is_primitive_signature(mine) || names::is_primitive_signature(theirs) {
                return Ok(mine == theirs);
            }
            return match self.find_type(mine).await {
                Ok(Type::Reference(component)) => Box::pin(component.is_assignable_to(theirs)).await,
                Ok(_) => Ok(false),
                Err(JdiError::ClassNotLoaded(_)) => Ok(false),
                Err(e) => Err(e),
            };
        }
        Ok(self.supertypes_depth_first().await?.iter().any(|t| t.signature() == target_signature))
    }

    /// The loaded type a signature names, as this type's class loader sees it (which is how
    /// field, argument and result types are resolved): a primitive type, `void`, or a reference
    /// type loaded by or visible to the loader. [`JdiError::ClassNotLoaded`] when there is none.
    pub async fn find_type(&self, signature: &str) -> Result<Type> {
        if signature == "V" {
            return Ok(Type::Void);
        }
        if let Some(p) = PrimitiveType::from_signature(signature) {
            return Ok(Type::Primitive(p));
        }
        let candidates = self.vm.classes_by_signature(signature).await?;
        // Arrays of primitives belong to the bootstrap loader and every loader sees them.
        let element = signature.trim_start_matches('[');
        let loader =
            if names::is_primitive_signature(element) { ClassLoaderId::NULL } else { self.class_loader_id().await? };
        let loaders = join_all(candidates.iter().map(|c| c.class_loader_id())).await;
        for (c, l) in candidates.iter().zip(loaders) {
            if l? == loader {
                return Ok(Type::Reference(c.clone()));
            }
        }
        // Loaded by another loader: fine if this type's loader delegated to it.
        if !loader.is_null() && !candidates.is_empty() {
            let visible = ClassLoaderReference::new(self.vm.clone(), loader).visible_classes().await?;
            if let Some(c) = candidates.into_iter().find(|c| visible.contains(c)) {
                return Ok(Type::Reference(c));
            }
        }
        Err(JdiError::ClassNotLoaded(names::type_name_of_signature(signature)))
    }

    /// Classes and interfaces declared directly inside this one (loaded ones only).
    pub async fn nested_types(&self) -> Result<Vec<ReferenceType>> {
        let r = self.vm.send(&rt::NestedTypes { ref_type: self.id }).await?;
        self.vm.reference_types_of_kinds(r.classes.into_iter().map(|c| (c.ref_type_tag, c.type_id)).collect()).await
    }

    // ---- loader, module, class object, instances ----

    pub(crate) async fn class_loader_id(&self) -> Result<ClassLoaderId> {
        let l = self
            .info
            .class_loader
            .get_or_try_init(|| async {
                Ok::<_, JdiError>(self.vm.send(&rt::ClassLoader { ref_type: self.id }).await?.class_loader)
            })
            .await?;
        Ok(*l)
    }

    /// The loader that defined this type; `None` for the bootstrap loader. Cached.
    pub async fn class_loader(&self) -> Result<Option<ClassLoaderReference>> {
        let id = self.class_loader_id().await?;
        Ok((!id.is_null()).then(|| ClassLoaderReference::new(self.vm.clone(), id)))
    }

    /// The module this type belongs to (JDWP 9+). Cached.
    pub async fn module(&self) -> Result<ModuleReference> {
        let m = self
            .info
            .module
            .get_or_try_init(|| async {
                Ok::<_, JdiError>(self.vm.send(&rt::Module { ref_type: self.id }).await?.module)
            })
            .await?;
        Ok(ModuleReference::new(self.vm.clone(), *m))
    }

    /// The `java.lang.Class` object for this type. Cached.
    pub async fn class_object(&self) -> Result<ClassObjectReference> {
        let c = self
            .info
            .class_object
            .get_or_try_init(|| async {
                Ok::<_, JdiError>(self.vm.send(&rt::ClassObject { ref_type: self.id }).await?.class_object)
            })
            .await?;
        Ok(ClassObjectReference::new(self.vm.clone(), *c))
    }

    /// Reachable instances of exactly this type, at most `max` (0: all). Needs
    /// `can_get_instance_info`.
    pub async fn instances(&self, max: i32) -> Result<Vec<ObjectReference>> {
        if max < 0 {
            return Err(JdiError::InvalidArgument(format!("instances: max must not be negative, got {max}")));
        }
        let r = self.vm.send(&rt::Instances { ref_type: self.id, max_instances: max }).await?;
        Ok(r.instances.into_iter().map(|o| ObjectReference::new(self.vm.clone(), o.id)).collect())
    }

    // ---- class file ----

    /// The class file's version; (0, 0) for arrays, which have no class file. Cached.
    pub async fn class_file_version(&self) -> Result<ClassFileVersion> {
        if self.is_array() {
            return Ok(ClassFileVersion { major: 0, minor: 0 });
        }
        let code = self.info.code();
        let v = code
            .class_file_version
            .get_or_try_init(|| async {
                let r = self.vm.send(&rt::ClassFileVersion { ref_type: self.id }).await?;
                Ok::<_, JdiError>(ClassFileVersion { major: r.major_version, minor: r.minor_version })
            })
            .await?;
        Ok(*v)
    }

    /// The class file's constant pool (needs `can_get_constant_pool`). Cached until redefined.
    pub async fn constant_pool(&self) -> Result<ConstantPool> {
        let code = self.info.code();
        let cp = code
            .constant_pool
            .get_or_try_init(|| async {
                let r = self.vm.send(&rt::ConstantPool { ref_type: self.id }).await?;
                Ok::<_, JdiError>(ConstantPool { count: r.count, bytes: r.bytes })
            })
            .await?;
        Ok(cp.clone())
    }

    // ---- source information ----

    /// The source file name (`Demo.java`). `ABSENT_INFORMATION` when the class file does not
    /// say. Cached.
    pub async fn source_name(&self) -> Result<String> {
        let code = self.info.code();
        let name = code
            .source_name
            .get_or_try_init(|| async {
                match self.vm.send(&rt::SourceFile { ref_type: self.id }).await {
                    Ok(r) => Ok(Some(r.source_file)),
                    Err(e) if is_absent(&e) => Ok(None),
                    Err(e) => Err(e),
                }
            })
            .await?;
        name.clone().ok_or_else(|| absent("ReferenceType.SourceFile"))
    }

    /// The source file's path relative to a source root (`java/lang/String.java`), for the
    /// Java stratum (the only one supported). `ABSENT_INFORMATION` like
    /// [`ReferenceType::source_name`].
    pub async fn source_paths(&self) -> Result<Vec<String>> {
        Ok(vec![names::source_path(self.signature(), &self.source_name().await?)])
    }

    /// The `SourceDebugExtension` attribute (SMAP text, JSR-045); `ABSENT_INFORMATION` when the
    /// class has none. Cached.
    pub async fn source_debug_extension(&self) -> Result<String> {
        let code = self.info.code();
        let sde = code
            .source_debug_extension
            .get_or_try_init(|| async {
                match self.vm.send(&rt::SourceDebugExtension { ref_type: self.id }).await {
                    Ok(r) => Ok(Some(r.extension)),
                    Err(e) if is_absent(&e) => Ok(None),
                    Err(e) => Err(e),
                }
            })
            .await?;
        sde.clone().ok_or_else(|| absent("ReferenceType.SourceDebugExtension"))
    }

    /// Every location that starts a line, in all declared methods (by method, then code index).
    /// `ABSENT_INFORMATION` only when no method has a line table and some method has code.
    pub async fn all_line_locations(&self) -> Result<Vec<Location>> {
        self.collect_lines(None).await
    }

    /// Every location where line `line` starts, in all declared methods. An empty list when no
    /// code is on that line; `ABSENT_INFORMATION` as for [`ReferenceType::all_line_locations`].
    pub async fn locations_of_line(&self, line: i32) -> Result<Vec<Location>> {
        self.collect_lines(Some(line)).await
    }

    async fn collect_lines(&self, line: Option<i32>) -> Result<Vec<Location>> {
        let methods = self.methods().await?;
        let tables = join_all(methods.iter().map(|m| m.lines())).await;
        let mut out = Vec::new();
        let mut some_absent = false;
        for (m, lines) in methods.iter().zip(tables) {
            match lines? {
                Lines::NoCode => {}
                Lines::Absent { .. } => some_absent = true,
                Lines::Table { lines, .. } => out.extend(
                    lines.iter().filter(|(_, l)| line.is_none_or(|want| *l == want)).map(|(i, _)| m.location(*i)),
                ),
            }
        }
        if out.is_empty() && some_absent { Err(absent("Method.LineTable")) } else { Ok(out) }
    }

    // ---- static values ----

    /// Checks that `field` is a static field of this type or one of its supertypes.
    pub(crate) async fn check_static_member(&self, field: &Field) -> Result<()> {
        if !field.is_static() {
            return Err(JdiError::InvalidArgument(format!("field {} is not static", field.name)));
        }
        if field.declaring_type == self.id {
            return Ok(());
        }
        if self.supertypes_depth_first().await?.iter().any(|t| t.id == field.declaring_type) {
            Ok(())
        } else {
            Err(JdiError::InvalidArgument(format!("field {} is not a member of {}", field.name, self.name())))
        }
    }

    /// The value of a static field of this type or a supertype.
    pub async fn get_value(&self, field: &Field) -> Result<Value> {
        let mut values = self.get_values(std::slice::from_ref(field)).await?;
        values.pop().ok_or_else(|| JdiError::InvalidArgument("ReferenceType.GetValues returned no value".into()))
    }

    /// Values of static fields of this type or its supertypes, in the order asked (one round trip).
    pub async fn get_values(&self, fields: &[Field]) -> Result<Vec<Value>> {
        for f in fields {
            self.check_static_member(f).await?;
        }
        let ids = fields.iter().map(|f| f.id).collect();
        let values = self.vm.send(&rt::GetValues { ref_type: self.id, fields: ids }).await?.values;
        if values.len() != fields.len() {
            return Err(JdiError::InvalidArgument(format!(
                "ReferenceType.GetValues returned {} values for {} fields",
                values.len(),
                fields.len()
            )));
        }
        Ok(values)
    }
}
