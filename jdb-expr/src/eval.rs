//! Evaluating expressions against the current frame, as jdb's `ExpressionParser`/`LValue` do:
//! names resolve to a local, then a field of `this` (or a static of the current class), then a
//! class; method calls run in the current thread (which must be suspended by an event).

use std::future::Future;
use std::pin::Pin;

use jdi::names;
use jdi::{
    ArrayReference, ClassType, Field, InvokeResult, Method, ObjectReference, ReferenceType, StackFrame, Tag,
    ThreadReference, Value, Variable, VirtualMachine,
};

use crate::parser::{Expr, Lit, parse};

/// Where a value lives, so `set` can write it.
#[derive(Clone)]
pub enum Place {
    Local(StackFrame, Variable),
    Field(ObjectReference, Field),
    Static(ReferenceType, Field),
    Elem(ArrayReference, i32),
}

/// A value, and where it came from.
#[derive(Clone)]
pub struct Val {
    pub value: Value,
    pub place: Option<Place>,
}

impl Val {
    fn of(value: Value) -> Val {
        Val { value, place: None }
    }
}

enum Operand {
    Val(Val),
    Type(ReferenceType),
    Package(String),
}

/// What an expression is evaluated against.
#[derive(Clone)]
pub struct Ctx {
    pub vm: VirtualMachine,
    pub thread: Option<ThreadReference>,
    pub frame: Option<StackFrame>,
}

type EvalFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, String>> + 'a>>;

const PRIMITIVES: &[&str] = &["boolean", "byte", "char", "short", "int", "long", "float", "double"];

fn err<T>(msg: impl Into<String>) -> Result<T, String> {
    Err(msg.into())
}

/// A JDI error as the evaluator reports it (jdb's wording for threads that cannot run code).
pub fn jdi_err(e: jdi::JdiError) -> String {
    match e.code() {
        Some(jdi::protocol::ErrorCode::THREAD_NOT_SUSPENDED) => "Thread not suspended".into(),
        Some(jdi::protocol::ErrorCode::INVALID_THREAD) => "Thread not suspended".into(),
        _ => e.to_string(),
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Num {
    I(i32),
    J(i64),
    F(f32),
    D(f64),
}

fn num(v: &Value) -> Option<Num> {
    Some(match *v {
        Value::Byte(x) => Num::I(x.into()),
        Value::Short(x) => Num::I(x.into()),
        Value::Char(x) => Num::I(x.into()),
        Value::Int(x) => Num::I(x),
        Value::Long(x) => Num::J(x),
        Value::Float(x) => Num::F(x),
        Value::Double(x) => Num::D(x),
        _ => return None,
    })
}

fn as_f64(n: Num) -> f64 {
    match n {
        Num::I(x) => x.into(),
        Num::J(x) => x as f64,
        Num::F(x) => x.into(),
        Num::D(x) => x,
    }
}

fn as_i64(n: Num) -> i64 {
    match n {
        Num::I(x) => x.into(),
        Num::J(x) => x,
        Num::F(x) => x as i64,
        Num::D(x) => x as i64,
    }
}

/// Java's binary numeric promotion: the wider kind of the two.
fn rank(n: Num) -> u8 {
    match n {
        Num::I(_) => 0,
        Num::J(_) => 1,
        Num::F(_) => 2,
        Num::D(_) => 3,
    }
}

fn arith(op: &str, a: Num, b: Num) -> Result<Value, String> {
    let r = rank(a).max(rank(b));
    let div0 = || err("java.lang.ArithmeticException: / by zero");
    match r {
        0 | 1 => {
            let (x, y) = (as_i64(a), as_i64(b));
            let v: i64 = match op {
                "+" => x.wrapping_add(y),
                "-" => x.wrapping_sub(y),
                "*" => x.wrapping_mul(y),
                "/" if y == 0 => return div0(),
                "/" => x.wrapping_div(y),
                "%" if y == 0 => return div0(),
                "%" => x.wrapping_rem(y),
                "&" => x & y,
                "|" => x | y,
                "^" => x ^ y,
                _ => return err(format!("Unknown operation: {op}")),
            };
            if r == 0 {
                // int arithmetic wraps at 32 bits
                let (x, y) = (x as i32, y as i32);
                let v: i32 = match op {
                    "+" => x.wrapping_add(y),
                    "-" => x.wrapping_sub(y),
                    "*" => x.wrapping_mul(y),
                    "/" => x.wrapping_div(y),
                    "%" => x.wrapping_rem(y),
                    _ => v as i32,
                };
                Ok(Value::Int(v))
            } else {
                Ok(Value::Long(v))
            }
        }
        _ => {
            if matches!(op, "&" | "|" | "^") {
                return err(format!("Invalid operation '{op}' on floating point values"));
            }
            let (x, y) = (as_f64(a), as_f64(b));
            let v = match op {
                "+" => x + y,
                "-" => x - y,
                "*" => x * y,
                "/" => x / y,
                "%" => x % y,
                _ => return err(format!("Unknown operation: {op}")),
            };
            Ok(if r == 2 { Value::Float(v as f32) } else { Value::Double(v) })
        }
    }
}

fn compare(op: &str, a: Num, b: Num) -> bool {
    let r = rank(a).max(rank(b));
    let ord = if r <= 1 { as_i64(a).partial_cmp(&as_i64(b)) } else { as_f64(a).partial_cmp(&as_f64(b)) };
    use std::cmp::Ordering::*;
    match (op, ord) {
        (_, None) => op == "!=",
        ("<", Some(o)) => o == Less,
        (">", Some(o)) => o == Greater,
        ("<=", Some(o)) => o != Greater,
        (">=", Some(o)) => o != Less,
        ("==", Some(o)) => o == Equal,
        ("!=", Some(o)) => o != Equal,
        _ => false,
    }
}

/// A primitive cast, with Java's conversions (narrowing wraps, floats truncate toward zero).
fn cast_primitive(ty: &str, v: &Value) -> Result<Value, String> {
    if ty == "boolean" {
        return match v {
            Value::Boolean(_) => Ok(*v),
            _ => err("Cannot cast to boolean"),
        };
    }
    let n = num(v).ok_or_else(|| format!("Cannot cast to {ty}"))?;
    let i = match n {
        Num::F(f) => f64::from(f) as i64,
        Num::D(d) => d as i64,
        n => as_i64(n),
    };
    Ok(match ty {
        "byte" => Value::Byte(i as i8),
        "short" => Value::Short(i as i16),
        "char" => Value::Char(i as u16),
        "int" => Value::Int(match n {
            Num::F(_) | Num::D(_) => as_f64(n) as i32,
            _ => i as i32,
        }),
        "long" => Value::Long(i),
        "float" => Value::Float(as_f64(n) as f32),
        "double" => Value::Double(match n {
            Num::F(f) => f.into(),
            n => as_f64(n),
        }),
        _ => return err(format!("Cannot cast to {ty}")),
    })
}

fn truthy(v: &Value) -> Result<bool, String> {
    match v {
        Value::Boolean(b) => Ok(*b),
        _ => err("Condition must be boolean"),
    }
}

/// What the evaluator needs from the debugger it runs in: a way to wait for a method invocation
/// while handling the events that arrive meanwhile (a breakpoint hit by the invoked code must be
/// resumed, or the call never returns). jdb-rs's session and the DAP adapter each implement it.
pub trait Host {
    /// Runs `fut` (an invocation in the target VM) to its end, handling events meanwhile.
    fn while_invoking<T>(
        &mut self,
        fut: impl Future<Output = jdi::Result<T>>,
    ) -> impl Future<Output = Result<T, String>>;
}

/// Parses `src` and evaluates it in `ctx`.
pub async fn evaluate<H: Host>(host: &mut H, ctx: &Ctx, src: &str) -> Result<Val, String> {
    let expr = parse(src)?;
    Evaluator::new(host).eval(ctx, &expr).await
}

/// Evaluates parsed expressions for a [`Host`].
pub struct Evaluator<'h, H: Host> {
    host: &'h mut H,
}

impl<'h, H: Host> Evaluator<'h, H> {
    pub fn new(host: &'h mut H) -> Self {
        Evaluator { host }
    }

    async fn while_invoking<T>(&mut self, fut: impl Future<Output = jdi::Result<T>>) -> Result<T, String> {
        self.host.while_invoking(fut).await
    }

    /// The value as `print` shows it: objects by their `toString()` (quoted), others as JDI's
    /// `toString` (`42`, `x`, `"text"`, `instance of int[3] (id=12)`, `null`).
    pub async fn massaged(&mut self, ctx: &Ctx, v: &Value) -> Result<String, String> {
        if let Value::Object(tag, id) = v
            && !id.is_null()
            && !matches!(tag, Tag::String | Tag::Array)
        {
            let obj = ObjectReference::new(ctx.vm.clone(), *id);
            let s = self.call_method(ctx, Some(&obj), None, "toString", Vec::new()).await?;
            return self.display(&ctx.vm, &s).await;
        }
        self.display(&ctx.vm, v).await
    }

    pub async fn display(&self, vm: &VirtualMachine, v: &Value) -> Result<String, String> {
        vm.value_mirror(*v).display().await.map_err(jdi_err)
    }

    /// A value as string concatenation sees it.
    async fn concat_string(&mut self, ctx: &Ctx, v: &Value) -> Result<String, String> {
        match v {
            Value::Object(Tag::String, id) if !id.is_null() => {
                jdi::StringReference::new(ctx.vm.clone(), *id).value().await.map_err(jdi_err)
            }
            Value::Object(_, id) if id.is_null() => Ok("null".into()),
            Value::Object(..) => {
                let s = self.massaged(ctx, v).await?;
                Ok(s.strip_prefix('"').and_then(|s| s.strip_suffix('"')).map(String::from).unwrap_or(s))
            }
            other => self.display(&ctx.vm, other).await,
        }
    }

    pub fn eval<'a>(&'a mut self, ctx: &'a Ctx, e: &'a Expr) -> EvalFuture<'a, Val> {
        Box::pin(async move {
            match e {
                Expr::Lit(l) => Ok(Val::of(match l {
                    Lit::Int(v) => Value::Int(*v),
                    Lit::Long(v) => Value::Long(*v),
                    Lit::Float(v) => Value::Float(*v),
                    Lit::Double(v) => Value::Double(*v),
                    Lit::Char(v) => Value::Char(*v),
                    Lit::Bool(v) => Value::Boolean(*v),
                    Lit::Null => Value::NULL,
                    Lit::Str(s) => {
                        let r = ctx.vm.create_string(s).await.map_err(jdi_err)?;
                        Value::Object(Tag::String, r.0.id())
                    }
                })),
                Expr::Name(_) | Expr::Field(..) => match self.operand(ctx, e).await? {
                    Operand::Val(v) => Ok(v),
                    Operand::Type(t) => {
                        let c = t.class_object().await.map_err(jdi_err)?;
                        Ok(Val::of(Value::Object(Tag::ClassObject, c.0.id())))
                    }
                    Operand::Package(p) => err(format!("Name unknown: {p}")),
                },
                Expr::Index(a, i) => {
                    let av = self.eval(ctx, a).await?.value;
                    let iv = self.eval(ctx, i).await?.value;
                    let index = match num(&iv) {
                        Some(Num::I(x)) => x,
                        _ => return err("Array index must be a integer type"),
                    };
                    let Value::Object(Tag::Array, id) = av else {
                        return if av.is_null_object() { err("null array reference") } else { err("Not an array") };
                    };
                    let arr = ArrayReference::new(ctx.vm.clone(), id);
                    let len = arr.length().await.map_err(jdi_err)?;
                    if index < 0 || index >= len {
                        return err(format!("Array index {index} out of bounds for length {len}"));
                    }
                    let v = arr.get_value(index).await.map_err(jdi_err)?;
                    Ok(Val { value: v, place: Some(Place::Elem(arr, index)) })
                }
                Expr::Call(target, name, args) => {
                    let mut values = Vec::new();
                    for a in args {
                        values.push(self.eval(ctx, a).await?.value);
                    }
                    let v = match target {
                        None => self.call_method(ctx, None, None, name, values).await?,
                        Some(t) => match self.operand(ctx, t).await? {
                            Operand::Val(v) => match v.value {
                                Value::Object(_, id) if !id.is_null() => {
                                    let obj = ObjectReference::new(ctx.vm.clone(), id);
                                    self.call_method(ctx, Some(&obj), None, name, values).await?
                                }
                                Value::Object(..) => return err(format!("null reference: cannot invoke {name}")),
                                _ => return err(format!("Cannot invoke {name} on a primitive value")),
                            },
                            Operand::Type(ty) => self.call_method(ctx, None, Some(&ty), name, values).await?,
                            Operand::Package(p) => return err(format!("Name unknown: {p}")),
                        },
                    };
                    Ok(Val::of(v))
                }
                Expr::Unary(op, x) => {
                    let v = self.eval(ctx, x).await?.value;
                    Ok(Val::of(match (*op, num(&v)) {
                        ("!", _) => Value::Boolean(!truthy(&v)?),
                        ("-", Some(Num::I(x))) => Value::Int(x.wrapping_neg()),
                        ("-", Some(Num::J(x))) => Value::Long(x.wrapping_neg()),
                        ("-", Some(Num::F(x))) => Value::Float(-x),
                        ("-", Some(Num::D(x))) => Value::Double(-x),
                        ("+", Some(Num::I(x))) => Value::Int(x),
                        ("+", Some(_)) => v,
                        ("~", Some(Num::I(x))) => Value::Int(!x),
                        ("~", Some(Num::J(x))) => Value::Long(!x),
                        _ => return err(format!("Invalid operation '{op}' on this operand")),
                    }))
                }
                Expr::Binary(op, a, b) => self.binary(ctx, op, a, b).await,
                Expr::Cond(c, a, b) => {
                    let cv = self.eval(ctx, c).await?.value;
                    if truthy(&cv)? { self.eval(ctx, a).await } else { self.eval(ctx, b).await }
                }
                Expr::Cast(ty, x) => {
                    let v = self.eval(ctx, x).await?;
                    if PRIMITIVES.contains(&ty.as_str()) {
                        return Ok(Val::of(cast_primitive(ty, &v.value)?));
                    }
                    let Value::Object(_, id) = v.value else {
                        return err(format!("Cannot cast a primitive value to {ty}"));
                    };
                    if id.is_null() {
                        return Ok(v);
                    }
                    let sig = self.type_signature(ctx, ty).await?;
                    let runtime = ObjectReference::new(ctx.vm.clone(), id).reference_type().await.map_err(jdi_err)?;
                    if runtime.is_assignable_to(&sig).await.map_err(jdi_err)? {
                        Ok(v)
                    } else {
                        err(format!("java.lang.ClassCastException: {} cannot be cast to {ty}", runtime.name()))
                    }
                }
                Expr::Assign(lhs, rhs) => {
                    let target = self.eval(ctx, lhs).await?;
                    let v = self.eval(ctx, rhs).await?.value;
                    let place = target.place.ok_or("Invalid assignment syntax: the left side is not a variable")?;
                    let result = match place {
                        Place::Local(frame, var) => frame.set_value(&var, v).await,
                        Place::Field(obj, field) => obj.set_value(&field, v).await,
                        Place::Static(ty, field) => match ty.as_class() {
                            Some(c) => c.set_value(&field, v).await,
                            None => return err("Cannot set a field of an interface"),
                        },
                        Place::Elem(arr, i) => arr.set_value(i, v).await,
                    };
                    result.map_err(|e| match e {
                        jdi::JdiError::InvalidArgument(m) => format!("Attempt to set value of incorrect type: {m}"),
                        e => jdi_err(e),
                    })?;
                    Ok(Val::of(v))
                }
                Expr::New(ty, args) => {
                    let mut values = Vec::new();
                    for a in args {
                        values.push(self.eval(ctx, a).await?.value);
                    }
                    let class = self.find_class(ctx, ty).await?.ok_or_else(|| format!("No class named: {ty}"))?;
                    let class = class.as_class().ok_or_else(|| format!("Cannot create instance of interface {ty}"))?;
                    let thread = ctx.thread.clone().ok_or("No current thread")?;
                    let ctors: Vec<Method> =
                        class.methods().await.map_err(jdi_err)?.into_iter().filter(|m| m.is_constructor()).collect();
                    let ctor = self.choose_method(ctx, ctors, &values).await?;
                    let fut = async move { class.new_instance(&thread, &ctor, values, 0).await };
                    let r = self.while_invoking(fut).await?;
                    self.invoke_result(ctx, r).await.map(Val::of)
                }
            }
        })
    }

    async fn binary(&mut self, ctx: &Ctx, op: &str, a: &Expr, b: &Expr) -> Result<Val, String> {
        if op == "&&" || op == "||" {
            let l = truthy(&self.eval(ctx, a).await?.value)?;
            if (op == "&&" && !l) || (op == "||" && l) {
                return Ok(Val::of(Value::Boolean(l)));
            }
            let r = truthy(&self.eval(ctx, b).await?.value)?;
            return Ok(Val::of(Value::Boolean(r)));
        }
        if op == "instanceof" {
            let v = self.eval(ctx, a).await?.value;
            let Expr::Name(ty) = b else { return err("instanceof needs a type") };
            let Value::Object(_, id) = v else { return err("instanceof needs an object") };
            if id.is_null() {
                return Ok(Val::of(Value::Boolean(false)));
            }
            let sig = self.type_signature(ctx, ty).await?;
            let rt = ObjectReference::new(ctx.vm.clone(), id).reference_type().await.map_err(jdi_err)?;
            return Ok(Val::of(Value::Boolean(rt.is_assignable_to(&sig).await.map_err(jdi_err)?)));
        }
        let l = self.eval(ctx, a).await?.value;
        let r = self.eval(ctx, b).await?.value;
        let is_str = |v: &Value| matches!(v, Value::Object(Tag::String, id) if !id.is_null());
        if op == "+" && (is_str(&l) || is_str(&r)) {
            let s = self.concat_string(ctx, &l).await? + &self.concat_string(ctx, &r).await?;
            let sr = ctx.vm.create_string(&s).await.map_err(jdi_err)?;
            return Ok(Val::of(Value::Object(Tag::String, sr.0.id())));
        }
        let v = match (num(&l), num(&r)) {
            (Some(x), Some(y)) => match op {
                "+" | "-" | "*" | "/" | "%" | "&" | "|" | "^" => arith(op, x, y)?,
                "<" | ">" | "<=" | ">=" | "==" | "!=" => Value::Boolean(compare(op, x, y)),
                "<<" | ">>" | ">>>" => {
                    let s = as_i64(y);
                    match x {
                        Num::I(v) => Value::Int(match op {
                            "<<" => v.wrapping_shl(s as u32),
                            ">>" => v.wrapping_shr(s as u32),
                            _ => ((v as u32).wrapping_shr(s as u32)) as i32,
                        }),
                        Num::J(v) => Value::Long(match op {
                            "<<" => v.wrapping_shl(s as u32),
                            ">>" => v.wrapping_shr(s as u32),
                            _ => ((v as u64).wrapping_shr(s as u32)) as i64,
                        }),
                        _ => return err(format!("Invalid operation '{op}' on floating point values")),
                    }
                }
                _ => return err(format!("Unknown operation: {op}")),
            },
            _ => match (op, &l, &r) {
                ("==" | "!=", Value::Boolean(x), Value::Boolean(y)) => Value::Boolean((x == y) == (op == "==")),
                ("&" | "|" | "^", Value::Boolean(x), Value::Boolean(y)) => Value::Boolean(match op {
                    "&" => *x & *y,
                    "|" => *x | *y,
                    _ => *x ^ *y,
                }),
                ("==" | "!=", Value::Object(_, x), Value::Object(_, y)) => Value::Boolean((x == y) == (op == "==")),
                _ => return err(format!("Operands or '{op}' must be primitive or compatible")),
            },
        };
        Ok(Val::of(v))
    }

    /// A name, a field access or a class/package prefix.
    fn operand<'a>(&'a mut self, ctx: &'a Ctx, e: &'a Expr) -> EvalFuture<'a, Operand> {
        Box::pin(async move {
            match e {
                Expr::Name(name) => self.resolve_name(ctx, name).await,
                Expr::Field(base, name) => {
                    let base_op = self.operand(ctx, base).await?;
                    match base_op {
                        Operand::Package(p) => {
                            let full = format!("{p}.{name}");
                            match self.find_class(ctx, &full).await? {
                                Some(t) => Ok(Operand::Type(t)),
                                None => Ok(Operand::Package(full)),
                            }
                        }
                        Operand::Type(t) => {
                            if let Some(f) = t.field_by_name(name).await.map_err(jdi_err)?.filter(|f| f.is_static()) {
                                let v = t.get_value(&f).await.map_err(jdi_err)?;
                                return Ok(Operand::Val(Val { value: v, place: Some(Place::Static(t, f)) }));
                            }
                            let nested = format!("{}${name}", t.name());
                            if let Some(n) = self.find_class(ctx, &nested).await? {
                                return Ok(Operand::Type(n));
                            }
                            err(format!("No static field or method with the name {name} in {}", t.name()))
                        }
                        Operand::Val(v) => self.member(ctx, v.value, name).await.map(Operand::Val),
                    }
                }
                other => Ok(Operand::Val(self.eval(ctx, other).await?)),
            }
        })
    }

    /// `value.name`: an array's length, or a field.
    async fn member(&mut self, ctx: &Ctx, value: Value, name: &str) -> Result<Val, String> {
        let Value::Object(tag, id) = value else {
            return err(format!("Cannot access {name} of a primitive value"));
        };
        if id.is_null() {
            return err(format!("null reference: cannot access {name}"));
        }
        if tag == Tag::Array && name == "length" {
            let n = ArrayReference::new(ctx.vm.clone(), id).length().await.map_err(jdi_err)?;
            return Ok(Val::of(Value::Int(n)));
        }
        let obj = ObjectReference::new(ctx.vm.clone(), id);
        let ty = obj.reference_type().await.map_err(jdi_err)?;
        let Some(f) = ty.field_by_name(name).await.map_err(jdi_err)? else {
            return err(format!("No instance field or method with the name {name} in {}", ty.name()));
        };
        let v = obj.get_value(&f).await.map_err(jdi_err)?;
        let place = if f.is_static() {
            let declaring = f.declaring_type().await.map_err(jdi_err)?;
            Place::Static(declaring, f)
        } else {
            Place::Field(obj, f)
        };
        Ok(Val { value: v, place: Some(place) })
    }

    async fn resolve_name(&mut self, ctx: &Ctx, name: &str) -> Result<Operand, String> {
        if let Some(frame) = &ctx.frame {
            if name == "this" {
                let this = frame.this_object().await.map_err(jdi_err)?;
                return Ok(Operand::Val(Val::of(match this {
                    Some(o) => Value::Object(Tag::Object, o.id()),
                    None => Value::NULL,
                })));
            }
            if let Ok(Some(var)) = frame.visible_variable_by_name(name).await {
                let v = frame.get_value(&var).await.map_err(jdi_err)?;
                return Ok(Operand::Val(Val { value: v, place: Some(Place::Local(frame.clone(), var)) }));
            }
            if let Some(this) = frame.this_object().await.map_err(jdi_err)? {
                let ty = this.reference_type().await.map_err(jdi_err)?;
                if ty.field_by_name(name).await.map_err(jdi_err)?.is_some() {
                    let v = Value::Object(Tag::Object, this.id());
                    return self.member(ctx, v, name).await.map(Operand::Val);
                }
            } else if let Ok(method) = frame.method().await {
                let ty = method.declaring_type().await.map_err(jdi_err)?;
                if let Some(f) = ty.field_by_name(name).await.map_err(jdi_err)?.filter(|f| f.is_static()) {
                    let v = ty.get_value(&f).await.map_err(jdi_err)?;
                    return Ok(Operand::Val(Val { value: v, place: Some(Place::Static(ty, f)) }));
                }
            }
        }
        match self.find_class(ctx, name).await? {
            Some(t) => Ok(Operand::Type(t)),
            None => Ok(Operand::Package(name.to_string())),
        }
    }

    /// A loaded class by name; unqualified names also try `java.lang` and the current class's
    /// package.
    pub async fn find_class(&self, ctx: &Ctx, name: &str) -> Result<Option<ReferenceType>, String> {
        let mut candidates = vec![name.to_string()];
        if !name.contains('.') {
            candidates.push(format!("java.lang.{name}"));
            if let Some(frame) = &ctx.frame
                && let Ok(m) = frame.method().await
                && let Ok(t) = m.declaring_type().await
            {
                let n = t.name();
                if let Some((pkg, _)) = n.rsplit_once('.') {
                    candidates.push(format!("{pkg}.{name}"));
                }
            }
        }
        for c in candidates {
            if let Some(t) = ctx.vm.classes_by_name(&c).await.map_err(jdi_err)?.into_iter().next() {
                return Ok(Some(t));
            }
        }
        Ok(None)
    }

    async fn type_signature(&self, ctx: &Ctx, ty: &str) -> Result<String, String> {
        let base = ty.trim_end_matches("[]");
        let dims = (ty.len() - base.len()) / 2;
        if PRIMITIVES.contains(&base) {
            return Ok(names::signature_of_type_name(ty));
        }
        let class = self.find_class(ctx, base).await?.ok_or_else(|| format!("No class named: {base}"))?;
        Ok("[".repeat(dims) + class.signature())
    }

    /// Calls `name` on `target` (an object), on `class` (static), or on `this`/the current class.
    pub async fn call_method(
        &mut self,
        ctx: &Ctx,
        target: Option<&ObjectReference>,
        class: Option<&ReferenceType>,
        name: &str,
        args: Vec<Value>,
    ) -> Result<Value, String> {
        let thread = ctx.thread.clone().ok_or("No current thread")?;
        let (object, ty) = match (target, class) {
            (Some(o), _) => (Some(o.clone()), o.reference_type().await.map_err(jdi_err)?),
            (None, Some(t)) => (None, t.clone()),
            (None, None) => {
                let frame = ctx.frame.as_ref().ok_or("No current frame")?;
                let this = frame.this_object().await.map_err(jdi_err)?;
                let ty = frame.method().await.map_err(jdi_err)?.declaring_type().await.map_err(jdi_err)?;
                (this, ty)
            }
        };
        let methods: Vec<Method> =
            ty.visible_methods().await.map_err(jdi_err)?.into_iter().filter(|m| m.name() == name).collect();
        if methods.is_empty() {
            return err(format!("No instance field or method with the name {name} in {}", ty.name()));
        }
        let method = self.choose_method(ctx, methods, &args).await?;
        let r = if method.is_static() {
            let class = ReferenceType::clone(&ty);
            let declaring = method.declaring_type().await.map_err(jdi_err)?;
            let fut = async move {
                match (declaring.as_class(), declaring.as_interface(), class.as_class()) {
                    (Some(c), _, _) => c.invoke_method(&thread, &method, args, 0).await,
                    (None, Some(i), _) => i.invoke_method(&thread, &method, args, 0).await,
                    (None, None, Some(c)) => c.invoke_method(&thread, &method, args, 0).await,
                    _ => Err(jdi::JdiError::InvalidArgument("not a class".into())),
                }
            };
            self.while_invoking(fut).await?
        } else {
            let obj = object.ok_or_else(|| format!("{name} is an instance method; there is no 'this' here"))?;
            let fut = async move { obj.invoke_method(&thread, &method, args, 0).await };
            self.while_invoking(fut).await?
        };
        self.invoke_result(ctx, r).await
    }

    async fn invoke_result(&self, ctx: &Ctx, r: InvokeResult) -> Result<Value, String> {
        match r {
            InvokeResult::Returned(v) => Ok(v),
            InvokeResult::Threw(ex) => {
                let name = ex.reference_type().await.map(|t| t.name()).unwrap_or_default();
                let _ = ctx;
                err(format!("Exception in expression: {name}"))
            }
        }
    }

    /// Picks the overload whose parameters fit `args` best.
    async fn choose_method(&self, ctx: &Ctx, methods: Vec<Method>, args: &[Value]) -> Result<Method, String> {
        let mut best: Option<(i32, Method)> = None;
        let mut methods = methods;
        methods.sort_by_key(|m| m.is_bridge() || m.is_synthetic());
        for m in methods {
            let (params, _) = m.argument_and_return_signatures();
            let varargs = m.is_varargs();
            if params.len() != args.len() && !(varargs && args.len() + 1 >= params.len()) {
                continue;
            }
            let mut score = 0;
            let mut ok = true;
            for (i, a) in args.iter().enumerate() {
                let sig = if i < params.len() {
                    if varargs && i == params.len() - 1 && params.len() != args.len() {
                        params[i][1..].to_string()
                    } else {
                        params[i].clone()
                    }
                } else if varargs {
                    params[params.len() - 1][1..].to_string()
                } else {
                    ok = false;
                    break;
                };
                match fit(ctx, &sig, a).await {
                    Some(s) => score += s,
                    None => {
                        ok = false;
                        break;
                    }
                }
            }
            if !ok {
                continue;
            }
            // Ties go to the first candidate: the most derived type's, non-bridge methods first
            // (covariant overrides leave a bridge with the same arguments behind).
            match &best {
                Some((s, _)) if *s >= score => {}
                _ => best = Some((score, m)),
            }
        }
        match best {
            Some((_, m)) => Ok(m),
            None => err("Arguments match no method"),
        }
    }
}

/// How well a value fits a parameter type: higher is better; `None` if it cannot.
async fn fit(ctx: &Ctx, sig: &str, v: &Value) -> Option<i32> {
    let _ = ctx;
    match (sig, v) {
        ("Z", Value::Boolean(_)) => Some(3),
        ("I", Value::Int(_)) | ("J", Value::Long(_)) | ("D", Value::Double(_)) | ("F", Value::Float(_)) => Some(3),
        ("C", Value::Char(_)) | ("B", Value::Byte(_)) | ("S", Value::Short(_)) => Some(3),
        ("J" | "F" | "D", Value::Int(_) | Value::Short(_) | Value::Byte(_) | Value::Char(_)) => Some(1),
        ("D", Value::Float(_) | Value::Long(_)) | ("F", Value::Long(_)) => Some(1),
        ("I", Value::Short(_) | Value::Byte(_) | Value::Char(_)) => Some(2),
        (s, Value::Object(_, id)) if s.starts_with('L') || s.starts_with('[') => {
            if id.is_null() {
                return Some(1);
            }
            if s == "Ljava/lang/Object;" {
                return Some(1);
            }
            let rt = ObjectReference::new(ctx.vm.clone(), *id).reference_type().await.ok()?;
            if rt.signature() == s {
                Some(3)
            } else if rt.is_assignable_to(s).await.ok()? {
                Some(2)
            } else {
                None
            }
        }
        // Boxing of primitives into Object parameters is not done by the VM.
        _ => None,
    }
}

trait NullCheck {
    fn is_null_object(&self) -> bool;
}

impl NullCheck for Value {
    fn is_null_object(&self) -> bool {
        matches!(self, Value::Object(_, id) if id.is_null())
    }
}

/// The class of a `Place::Static` for writing.
pub fn class_of(t: &ReferenceType) -> Option<ClassType> {
    t.as_class()
}
