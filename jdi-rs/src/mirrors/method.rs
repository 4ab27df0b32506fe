//! [`Method`] mirrors: what a method is (cached once per declaring type and dropped when the type
//! is redefined), its line table ([`LineLocation`]) and variable table ([`Variable`]), both
//! fetched once.

use std::sync::Arc;

use jdwp_protocol::commands::method as mc;
use jdwp_protocol::{ErrorCode, Location, MethodId, ReferenceTypeId, TypeTag, modifiers};
use tokio::sync::OnceCell;

use super::reference_type::{SYNTHETIC_BITS, absent, is_absent};
use crate::error::Result;
use crate::mirrors::{ReferenceType, Type};
use crate::names;
use crate::vm::VirtualMachine;

pub(super) struct MethodData {
    pub(super) declaring_type: ReferenceTypeId,
    pub(super) type_tag: TypeTag,
    pub(super) id: MethodId,
    pub(super) name: String,
    pub(super) signature: String,
    pub(super) generic_signature: Option<String>,
    pub(super) modifiers: i32,
    pub(super) lines: OnceCell<Lines>,
    pub(super) variables: OnceCell<Option<Vec<Variable>>>,
}

/// A method's line information.
pub(super) enum Lines {
    /// Native or abstract: no code at all.
    NoCode,
    /// Code, but no line table (compiled without `-g:lines`).
    Absent { start: i64, end: i64 },
    /// `(code index, line)` sorted by code index.
    Table { start: i64, end: i64, lines: Vec<(u64, i32)> },
}

/// A method of a reference type.
#[derive(Clone)]
pub struct Method {
    pub(super) vm: VirtualMachine,
    pub(super) data: Arc<MethodData>,
}

/// A line table entry: the first code index of a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineLocation {
    /// The first code index of the line.
    pub code_index: u64,
    /// The source line.
    pub line: i32,
}

/// A local variable or argument, as the method's variable table describes it.
#[derive(Debug, Clone, PartialEq)]
pub struct Variable {
    /// The variable's name (`this` is never listed).
    pub name: String,
    /// The JNI signature of the variable's type.
    pub signature: String,
    /// The generic signature of its type (`Ljava/util/List<Ljava/lang/String;>;`), if any.
    pub generic_signature: Option<String>,
    /// The frame slot holding it.
    pub slot: i32,
    /// First code index where the variable is live.
    pub start: u64,
    /// How many code units it stays live.
    pub length: u32,
    /// Whether it is one of the method's parameters.
    pub is_argument: bool,
}

impl Variable {
    /// Whether the variable is live at `code_index`.
    pub fn is_visible_at(&self, code_index: u64) -> bool {
        code_index >= self.start && code_index < self.start + u64::from(self.length)
    }

    /// The Java name of the variable's type.
    pub fn type_name(&self) -> String {
        names::type_name_of_signature(&self.signature)
    }
}

impl std::fmt::Debug for Method {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}{}", self.data.name, self.data.signature)
    }
}

impl PartialEq for Method {
    fn eq(&self, other: &Self) -> bool {
        self.data.declaring_type == other.data.declaring_type && self.data.id == other.data.id
    }
}

impl Eq for Method {}

impl std::hash::Hash for Method {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        (self.data.declaring_type, self.data.id).hash(state)
    }
}

impl Method {
    /// The VM the method belongs to.
    pub fn vm(&self) -> &VirtualMachine {
        &self.vm
    }
    /// The method's ID (unique within its declaring type).
    pub fn id(&self) -> MethodId {
        self.data.id
    }
    /// The simple name (`<init>` for constructors, `<clinit>` for the class initializer).
    pub fn name(&self) -> &str {
        &self.data.name
    }
    /// The JNI signature: `(ILjava/lang/String;)V`.
    pub fn signature(&self) -> &str {
        &self.data.signature
    }
    /// The generic signature (`()TT;`), when the method has one.
    pub fn generic_signature(&self) -> Option<&str> {
        self.data.generic_signature.as_deref()
    }
    /// The access flags (`jdwp_protocol::modifiers` bits).
    pub fn modifiers(&self) -> i32 {
        self.data.modifiers
    }
    /// The ID of the declaring type.
    pub fn declaring_type_id(&self) -> ReferenceTypeId {
        self.data.declaring_type
    }

    /// The declaring type (known to the VM already: no round trip).
    pub async fn declaring_type(&self) -> Result<ReferenceType> {
        self.vm.reference_type_of_kind(self.data.type_tag, self.data.declaring_type).await
    }

    fn has(&self, bits: i32) -> bool {
        self.data.modifiers & bits != 0
    }
    /// A class (static) method.
    pub fn is_static(&self) -> bool {
        self.has(modifiers::STATIC)
    }
    /// Declared `native` (no bytecode, no line table).
    pub fn is_native(&self) -> bool {
        self.has(modifiers::NATIVE)
    }
    /// Declared `abstract` (no code).
    pub fn is_abstract(&self) -> bool {
        self.has(modifiers::ABSTRACT)
    }
    /// Declared `final`.
    pub fn is_final(&self) -> bool {
        self.has(modifiers::FINAL)
    }
    /// Declared `public`.
    pub fn is_public(&self) -> bool {
        self.has(modifiers::PUBLIC)
    }
    /// Declared `private`.
    pub fn is_private(&self) -> bool {
        self.has(modifiers::PRIVATE)
    }
    /// Declared `protected`.
    pub fn is_protected(&self) -> bool {
        self.has(modifiers::PROTECTED)
    }
    /// Neither public, private nor protected.
    pub fn is_package_private(&self) -> bool {
        !self.has(modifiers::PUBLIC | modifiers::PRIVATE | modifiers::PROTECTED)
    }
    /// Declared `synchronized`.
    pub fn is_synchronized(&self) -> bool {
        self.has(modifiers::SYNCHRONIZED)
    }
    /// A bridge the compiler made for generics or covariant returns.
    pub fn is_bridge(&self) -> bool {
        self.has(modifiers::BRIDGE)
    }
    /// Declared with `...` as its last parameter.
    pub fn is_varargs(&self) -> bool {
        self.has(modifiers::VARARGS)
    }
    /// Made by the compiler (bridges, lambdas' bodies, accessors...).
    pub fn is_synthetic(&self) -> bool {
        self.has(SYNTHETIC_BITS)
    }
    /// A constructor (`<init>`).
    pub fn is_constructor(&self) -> bool {
        self.data.name == "<init>"
    }
    /// The class initializer, `<clinit>`.
    pub fn is_static_initializer(&self) -> bool {
        self.data.name == "<clinit>"
    }
    /// A non-abstract, non-static instance method of an interface.
    pub fn is_default(&self) -> bool {
        self.data.type_tag == TypeTag::Interface
            && !self.has(modifiers::ABSTRACT | modifiers::STATIC | modifiers::PRIVATE)
            && !self.is_static_initializer()
    }

    /// Argument type signatures and the return type signature.
    pub fn argument_and_return_signatures(&self) -> (Vec<String>, String) {
        names::split_method_signature(&self.data.signature).unwrap_or_default()
    }

    /// Java names of the argument types, in order.
    pub fn argument_type_names(&self) -> Vec<String> {
        self.argument_and_return_signatures().0.iter().map(|s| names::type_name_of_signature(s)).collect()
    }

    /// The Java name of the return type (`void` included).
    pub fn return_type_name(&self) -> String {
        names::type_name_of_signature(&self.argument_and_return_signatures().1)
    }

    /// The argument types; [`JdiError::ClassNotLoaded`] when one is not loaded.
    pub async fn argument_types(&self) -> Result<Vec<Type>> {
        let declaring = self.declaring_type().await?;
        let mut out = Vec::new();
        for sig in self.argument_and_return_signatures().0 {
            out.push(declaring.find_type(&sig).await?);
        }
        Ok(out)
    }

    /// The return type ([`Type::Void`] included); [`JdiError::ClassNotLoaded`] when not loaded.
    pub async fn return_type(&self) -> Result<Type> {
        self.declaring_type().await?.find_type(&self.argument_and_return_signatures().1).await
    }

    /// The location of code index `index` in this method (unchecked).
    pub fn location(&self, index: u64) -> Location {
        Location {
            type_tag: self.data.type_tag,
            class_id: self.data.declaring_type.into(),
            method_id: self.data.id,
            index,
        }
    }

    /// Where the method's code starts; `None` for native and abstract methods.
    pub async fn code_location(&self) -> Result<Option<Location>> {
        Ok(self.code_range().await?.map(|(start, _)| self.location(start.max(0) as u64)))
    }

    /// The location of `index` when it lies in the method's code; `None` otherwise and for
    /// methods without code.
    pub async fn location_of_code_index(&self, index: u64) -> Result<Option<Location>> {
        Ok(self
            .code_range()
            .await?
            .filter(|&(start, end)| start >= 0 && index >= start as u64 && index <= end as u64)
            .map(|_| self.location(index)))
    }

    pub(super) async fn lines(&self) -> Result<&Lines> {
        self.data
            .lines
            .get_or_try_init(|| async {
                // Methods without code need no question (JDI does the same).
                if self.is_native() || self.is_abstract() {
                    return Ok(Lines::NoCode);
                }
                let cmd = mc::LineTable { ref_type: self.data.declaring_type, method_id: self.data.id };
                match self.vm.send(&cmd).await {
                    Ok(r) if r.lines.is_empty() => Ok(Lines::Absent { start: r.start, end: r.end }),
                    Ok(r) => {
                        let mut lines: Vec<(u64, i32)> =
                            r.lines.iter().map(|l| (l.line_code_index as u64, l.line_number)).collect();
                        lines.sort_by_key(|(i, _)| *i);
                        Ok(Lines::Table { start: r.start, end: r.end, lines })
                    }
                    Err(e) if e.code() == Some(ErrorCode::NATIVE_METHOD) => Ok(Lines::NoCode),
                    Err(e) if is_absent(&e) => Ok(Lines::Absent { start: -1, end: -1 }),
                    Err(e) => Err(e),
                }
            })
            .await
    }

    /// The line table, `(code index, line)` sorted by code index. Empty for native and abstract
    /// methods; `ABSENT_INFORMATION` for code without a line table. Cached.
    pub async fn all_line_locations(&self) -> Result<Vec<LineLocation>> {
        match self.lines().await? {
            Lines::NoCode => Ok(Vec::new()),
            Lines::Absent { .. } => Err(absent("Method.LineTable")),
            Lines::Table { lines, .. } => {
                Ok(lines.iter().map(|&(code_index, line)| LineLocation { code_index, line }).collect())
            }
        }
    }

    /// The line table as [`Location`]s (see [`Method::all_line_locations`]).
    pub async fn line_locations(&self) -> Result<Vec<Location>> {
        Ok(self.all_line_locations().await?.into_iter().map(|l| self.location(l.code_index)).collect())
    }

    /// The first and last code index (`None` for methods without code or when the VM did not say).
    pub async fn code_range(&self) -> Result<Option<(i64, i64)>> {
        Ok(match self.lines().await? {
            Lines::NoCode => None,
            Lines::Absent { start, end } | Lines::Table { start, end, .. } => (*start >= 0).then_some((*start, *end)),
        })
    }

    /// Locations where line `line` starts (several when the line's code is split, as in loops).
    /// Empty for methods without code; `ABSENT_INFORMATION` without a line table.
    pub async fn locations_of_line(&self, line: i32) -> Result<Vec<Location>> {
        match self.lines().await? {
            Lines::NoCode => Ok(Vec::new()),
            Lines::Absent { .. } => Err(absent("Method.LineTable")),
            Lines::Table { lines, .. } => {
                Ok(lines.iter().filter(|(_, l)| *l == line).map(|(i, _)| self.location(*i)).collect())
            }
        }
    }

    /// The line of code index `index` (-1 without a line table).
    pub async fn line_of(&self, index: u64) -> Result<i32> {
        Ok(match self.lines().await? {
            Lines::Table { lines, .. } => {
                lines.iter().take_while(|(i, _)| *i <= index).last().map(|(_, l)| *l).unwrap_or(-1)
            }
            _ => -1,
        })
    }

    /// Arguments and locals, generic signatures included; `this` and the compiler's `this$n`
    /// are left out, as JDI does (use the frame's `this_object`). `ABSENT_INFORMATION` when
    /// compiled without `-g` and for methods without code. Cached.
    pub async fn variables(&self) -> Result<&[Variable]> {
        let vars = self
            .data
            .variables
            .get_or_try_init(|| async {
                if self.is_native() || self.is_abstract() {
                    return Ok(None);
                }
                let cmd = mc::VariableTableWithGeneric { ref_type: self.data.declaring_type, method_id: self.data.id };
                let reply = match self.vm.send(&cmd).await {
                    // An agent older than JDWP 1.5 only has the plain form.
                    Err(e) if e.code() == Some(ErrorCode::NOT_IMPLEMENTED) => {
                        let plain = mc::VariableTable { ref_type: cmd.ref_type, method_id: cmd.method_id };
                        self.vm.send(&plain).await.map(|r| mc::VariableTableWithGenericReply {
                            arg_cnt: r.arg_cnt,
                            slots: r
                                .slots
                                .into_iter()
                                .map(|v| mc::GenericVariableSlot {
                                    code_index: v.code_index,
                                    name: v.name,
                                    signature: v.signature,
                                    generic_signature: String::new(),
                                    length: v.length,
                                    slot: v.slot,
                                })
                                .collect(),
                        })
                    }
                    r => r,
                };
                match reply {
                    Ok(r) => {
                        let args_slots = r.arg_cnt;
                        Ok(Some(
                            r.slots
                                .into_iter()
                                .filter(|s| s.name != "this" && !s.name.starts_with("this$"))
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
                    Err(e) if is_absent(&e) || e.code() == Some(ErrorCode::NATIVE_METHOD) => Ok(None),
                    Err(e) => Err(e),
                }
            })
            .await?;
        vars.as_deref().ok_or_else(|| absent("Method.VariableTableWithGeneric"))
    }

    /// The arguments, in declaration order (see [`Method::variables`] for when it fails).
    pub async fn arguments(&self) -> Result<Vec<Variable>> {
        let mut args: Vec<Variable> = self.variables().await?.iter().filter(|v| v.is_argument).cloned().collect();
        args.sort_by_key(|v| v.slot);
        Ok(args)
    }

    /// Variables with this name (several when scopes reuse it).
    pub async fn variables_by_name(&self, name: &str) -> Result<Vec<Variable>> {
        Ok(self.variables().await?.iter().filter(|v| v.name == name).cloned().collect())
    }

    /// The bytecode (needs `can_get_bytecodes`).
    pub async fn bytecodes(&self) -> Result<Vec<u8>> {
        let cmd = mc::Bytecodes { ref_type: self.data.declaring_type, method_id: self.data.id };
        Ok(self.vm.send(&cmd).await?.bytes)
    }

    /// Whether a redefinition replaced this method with a different one (not cached).
    pub async fn is_obsolete(&self) -> Result<bool> {
        let cmd = mc::IsObsolete { ref_type: self.data.declaring_type, method_id: self.data.id };
        Ok(self.vm.send(&cmd).await?.is_obsolete)
    }
}
