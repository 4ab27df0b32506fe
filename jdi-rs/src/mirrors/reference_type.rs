//! Reference types (classes, interfaces, arrays) and their members.

use std::sync::{Arc, OnceLock};

use jdwp_protocol::commands::{class_type as ct, method as mc, reference_type as rt};
use jdwp_protocol::{ClassId, FieldId, Location, MethodId, ReferenceTypeId, TypeTag, Value, modifiers};
use tokio::sync::OnceCell;

use crate::error::{JdiError, Result};
use crate::names;
use crate::vm::VirtualMachine;

/// What is cached about one reference type.
pub struct TypeInfo {
    tag: TypeTag,
    signature: OnceLock<String>,
    methods: OnceCell<Vec<Method>>,
    fields: OnceCell<Vec<Field>>,
}

impl TypeInfo {
    pub(crate) fn new(tag: TypeTag) -> TypeInfo {
        TypeInfo { tag, signature: OnceLock::new(), methods: OnceCell::new(), fields: OnceCell::new() }
    }

    pub(crate) fn set_signature(&self, sig: String) {
        let _ = self.signature.set(sig);
    }
}

/// A class, interface or array type in the target VM.
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

impl std::fmt::Debug for ReferenceType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({:?})", self.name(), self.id)
    }
}

impl ReferenceType {
    pub(crate) fn new(vm: VirtualMachine, id: ReferenceTypeId, info: Arc<TypeInfo>) -> ReferenceType {
        ReferenceType { vm, id, info }
    }

    pub fn vm(&self) -> &VirtualMachine {
        &self.vm
    }

    pub fn id(&self) -> ReferenceTypeId {
        self.id
    }

    pub fn tag(&self) -> TypeTag {
        self.info.tag
    }

    /// The JNI signature; every way of obtaining a mirror records it, so this is never a round trip.
    pub fn signature(&self) -> &str {
        self.info.signature.get().map(String::as_str).unwrap_or("")
    }

    /// The Java name: `java.lang.String`, `int[]`.
    pub fn name(&self) -> String {
        names::type_name_of_signature(self.signature())
    }

    pub async fn modifiers(&self) -> Result<i32> {
        Ok(self.vm.send(&rt::Modifiers { ref_type: self.id }).await?.mod_bits)
    }

    pub async fn status(&self) -> Result<i32> {
        Ok(self.vm.send(&rt::Status { ref_type: self.id }).await?.status)
    }

    pub async fn source_name(&self) -> Result<String> {
        Ok(self.vm.send(&rt::SourceFile { ref_type: self.id }).await?.source_file)
    }

    pub async fn generic_signature(&self) -> Result<Option<String>> {
        let g = self.vm.send(&rt::SignatureWithGeneric { ref_type: self.id }).await?.generic_signature;
        Ok(if g.is_empty() { None } else { Some(g) })
    }

    /// Methods declared by this type (not inherited), in class-file order.
    pub async fn methods(&self) -> Result<&[Method]> {
        let methods = self
            .info
            .methods
            .get_or_try_init(|| async {
                let r = self.vm.send(&rt::MethodsWithGeneric { ref_type: self.id }).await?;
                Ok::<_, JdiError>(
                    r.declared
                        .into_iter()
                        .map(|m| Method {
                            inner: Arc::new(MethodInner {
                                declaring_type: self.id,
                                type_tag: self.info.tag,
                                vm: self.vm.clone(),
                                id: m.method_id,
                                name: m.name,
                                signature: m.signature,
                                generic_signature: Some(m.generic_signature).filter(|g| !g.is_empty()),
                                modifiers: m.mod_bits,
                                lines: OnceCell::new(),
                                variables: OnceCell::new(),
                            }),
                        })
                        .collect(),
                )
            })
            .await?;
        Ok(methods)
    }

    /// Declared methods with this name.
    pub async fn methods_by_name(&self, name: &str) -> Result<Vec<Method>> {
        Ok(self.methods().await?.iter().filter(|m| m.name() == name).cloned().collect())
    }

    pub async fn method_by_id(&self, id: MethodId) -> Result<Method> {
        self.methods().await?.iter().find(|m| m.id() == id).cloned().ok_or(JdiError::Jdwp {
            command: "ReferenceType.Methods",
            code: jdwp_protocol::ErrorCode::INVALID_METHODID,
        })
    }

    /// Fields declared by this type, in class-file order.
    pub async fn fields(&self) -> Result<&[Field]> {
        let fields = self
            .info
            .fields
            .get_or_try_init(|| async {
                let r = self.vm.send(&rt::FieldsWithGeneric { ref_type: self.id }).await?;
                Ok::<_, JdiError>(
                    r.declared
                        .into_iter()
                        .map(|f| Field {
                            declaring_type: self.id,
                            id: f.field_id,
                            name: f.name,
                            signature: f.signature,
                            generic_signature: Some(f.generic_signature).filter(|g| !g.is_empty()),
                            modifiers: f.mod_bits,
                        })
                        .collect(),
                )
            })
            .await?;
        Ok(fields)
    }

    pub async fn field_by_name(&self, name: &str) -> Result<Option<Field>> {
        Ok(self.fields().await?.iter().find(|f| f.name == name).cloned())
    }

    /// Values of static fields of this type.
    pub async fn get_values(&self, fields: &[Field]) -> Result<Vec<Value>> {
        let fields = fields.iter().map(|f| f.id).collect();
        Ok(self.vm.send(&rt::GetValues { ref_type: self.id, fields }).await?.values)
    }

    /// The superclass of a class (`None` for `java.lang.Object` and interfaces).
    pub async fn superclass(&self) -> Result<Option<ReferenceType>> {
        if self.tag() != TypeTag::Class {
            return Ok(None);
        }
        let sup = self.vm.send(&ct::Superclass { clazz: ClassId(self.id.0) }).await?.superclass;
        if sup.is_null() { Ok(None) } else { self.vm.reference_type(sup.into()).await.map(Some) }
    }

    /// Every location that starts line `line` in this type's methods.
    pub async fn locations_of_line(&self, line: i32) -> Result<Vec<Location>> {
        let mut out = Vec::new();
        for m in self.methods().await? {
            out.extend(m.locations_of_line(line).await?);
        }
        Ok(out)
    }
}

/// A field of a reference type.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    pub declaring_type: ReferenceTypeId,
    pub id: FieldId,
    pub name: String,
    pub signature: String,
    pub generic_signature: Option<String>,
    pub modifiers: i32,
}

impl Field {
    pub fn is_static(&self) -> bool {
        self.modifiers & modifiers::STATIC != 0
    }

    /// The Java name of the field's type.
    pub fn type_name(&self) -> String {
        names::type_name_of_signature(&self.signature)
    }
}

/// A method of a reference type.
#[derive(Clone)]
pub struct Method {
    inner: Arc<MethodInner>,
}

struct MethodInner {
    vm: VirtualMachine,
    declaring_type: ReferenceTypeId,
    type_tag: TypeTag,
    id: MethodId,
    name: String,
    signature: String,
    generic_signature: Option<String>,
    modifiers: i32,
    lines: OnceCell<Option<LineTable>>,
    variables: OnceCell<Option<Vec<Variable>>>,
}

struct LineTable {
    start: i64,
    end: i64,
    /// (code index, line), in code-index order.
    lines: Vec<(u64, i32)>,
}

/// A line table entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineLocation {
    pub code_index: u64,
    pub line: i32,
}

/// A local variable or argument, as the method's variable table describes it.
#[derive(Debug, Clone, PartialEq)]
pub struct Variable {
    pub name: String,
    pub signature: String,
    pub generic_signature: Option<String>,
    pub slot: i32,
    /// First code index where the variable is live.
    pub start: u64,
    /// How many code units it stays live.
    pub length: u32,
    pub is_argument: bool,
}

impl Variable {
    pub fn is_visible_at(&self, code_index: u64) -> bool {
        code_index >= self.start && code_index < self.start + u64::from(self.length)
    }

    pub fn type_name(&self) -> String {
        names::type_name_of_signature(&self.signature)
    }
}

impl std::fmt::Debug for Method {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}{}", self.inner.name, self.inner.signature)
    }
}

impl PartialEq for Method {
    fn eq(&self, other: &Self) -> bool {
        self.inner.declaring_type == other.inner.declaring_type && self.inner.id == other.inner.id
    }
}

impl Method {
    pub fn id(&self) -> MethodId {
        self.inner.id
    }
    pub fn name(&self) -> &str {
        &self.inner.name
    }
    pub fn signature(&self) -> &str {
        &self.inner.signature
    }
    pub fn generic_signature(&self) -> Option<&str> {
        self.inner.generic_signature.as_deref()
    }
    pub fn modifiers(&self) -> i32 {
        self.inner.modifiers
    }
    pub fn declaring_type_id(&self) -> ReferenceTypeId {
        self.inner.declaring_type
    }
    pub fn is_static(&self) -> bool {
        self.inner.modifiers & modifiers::STATIC != 0
    }
    pub fn is_native(&self) -> bool {
        self.inner.modifiers & modifiers::NATIVE != 0
    }
    pub fn is_abstract(&self) -> bool {
        self.inner.modifiers & modifiers::ABSTRACT != 0
    }
    pub fn is_constructor(&self) -> bool {
        self.inner.name == "<init>"
    }

    /// Argument type signatures and the return type signature.
    pub fn argument_and_return_signatures(&self) -> (Vec<String>, String) {
        names::split_method_signature(&self.inner.signature).unwrap_or_default()
    }

    /// The location of code index `index` in this method.
    pub fn location(&self, index: u64) -> Location {
        Location {
            type_tag: self.inner.type_tag,
            class_id: ClassId(self.inner.declaring_type.0),
            method_id: self.inner.id,
            index,
        }
    }

    async fn line_table(&self) -> Result<Option<&LineTable>> {
        let table = self
            .inner
            .lines
            .get_or_try_init(|| async {
                let cmd = mc::LineTable { ref_type: self.inner.declaring_type, method_id: self.inner.id };
                match self.inner.vm.send(&cmd).await {
                    Ok(r) => {
                        let mut lines: Vec<(u64, i32)> =
                            r.lines.iter().map(|l| (l.line_code_index as u64, l.line_number)).collect();
                        lines.sort_by_key(|(i, _)| *i);
                        Ok(Some(LineTable { start: r.start, end: r.end, lines }))
                    }
                    // Native and abstract methods have no code, hence no line table.
                    Err(e) if e.code() == Some(jdwp_protocol::ErrorCode::NATIVE_METHOD) => Ok(None),
                    Err(e) if e.code() == Some(jdwp_protocol::ErrorCode::ABSENT_INFORMATION) => Ok(None),
                    Err(e) => Err(e),
                }
            })
            .await?;
        Ok(table.as_ref())
    }

    /// The line table, sorted by code index (empty when absent).
    pub async fn all_line_locations(&self) -> Result<Vec<LineLocation>> {
        Ok(self
            .line_table()
            .await?
            .map(|t| t.lines.iter().map(|&(code_index, line)| LineLocation { code_index, line }).collect())
            .unwrap_or_default())
    }

    /// The first and last code index (`None` for methods without code).
    pub async fn code_range(&self) -> Result<Option<(i64, i64)>> {
        Ok(self.line_table().await?.map(|t| (t.start, t.end)))
    }

    /// Locations where line `line` starts.
    pub async fn locations_of_line(&self, line: i32) -> Result<Vec<Location>> {
        Ok(self
            .line_table()
            .await?
            .map(|t| t.lines.iter().filter(|(_, l)| *l == line).map(|(i, _)| self.location(*i)).collect())
            .unwrap_or_default())
    }

    /// The line of code index `index` (-1 without a line table).
    pub async fn line_of(&self, index: u64) -> Result<i32> {
        Ok(self
            .line_table()
            .await?
            .and_then(|t| t.lines.iter().take_while(|(i, _)| *i <= index).last().map(|(_, l)| *l))
            .unwrap_or(-1))
    }

    /// Arguments and locals (`ABSENT_INFORMATION` when compiled without `-g`).
    pub async fn variables(&self) -> Result<&[Variable]> {
        let vars = self
            .inner
            .variables
            .get_or_try_init(|| async {
                let cmd =
                    mc::VariableTableWithGeneric { ref_type: self.inner.declaring_type, method_id: self.inner.id };
                match self.inner.vm.send(&cmd).await {
                    Ok(r) => {
                        let args_slots = r.arg_cnt;
                        Ok(Some(
                            r.slots
                                .into_iter()
                                .map(|s| Variable {
                                    is_argument: s.slot < args_slots,
                                    name: s.name,
                                    signature: s.signature,
                                    generic_signature: Some(s.generic_signature).filter(|g| !g.is_empty()),
                                    slot: s.slot,
                                    start: s.code_index as u64,
                                    length: s.length as u32,
                                })
                                .collect(),
                        ))
                    }
                    Err(e) if e.code() == Some(jdwp_protocol::ErrorCode::ABSENT_INFORMATION) => Ok(None),
                    Err(e) => Err(e),
                }
            })
            .await?;
        vars.as_deref().ok_or(JdiError::Jdwp {
            command: "Method.VariableTableWithGeneric",
            code: jdwp_protocol::ErrorCode::ABSENT_INFORMATION,
        })
    }

    /// Variables with this name.
    pub async fn variables_by_name(&self, name: &str) -> Result<Vec<Variable>> {
        Ok(self.variables().await?.iter().filter(|v| v.name == name).cloned().collect())
    }

    pub async fn bytecodes(&self) -> Result<Vec<u8>> {
        let cmd = mc::Bytecodes { ref_type: self.inner.declaring_type, method_id: self.inner.id };
        Ok(self.inner.vm.send(&cmd).await?.bytes)
    }

    pub async fn is_obsolete(&self) -> Result<bool> {
        let cmd = mc::IsObsolete { ref_type: self.inner.declaring_type, method_id: self.inner.id };
        Ok(self.inner.vm.send(&cmd).await?.is_obsolete)
    }
}
