//! `ModuleReference` (command set 18), and the module of a type for `ReferenceType.Module`.
//!
//! Modules are `java.lang.Module` objects; their name and loader come from the object's own
//! accessors (plain getters: no debuggee code runs).

use jdwp_protocol::commands::module_reference::*;
use jdwp_protocol::{ClassLoaderId, ErrorCode, ModuleId};
use jni_sys::{jclass, jmethodID, jobject};

use crate::agent::Agent;
use crate::agent::engine::ModuleMethods;
use crate::dispatch::Entry;
use crate::jni::{JavaType, Jni};
use jdwp_protocol::commands as c;

fn methods(agent: &Agent, jni: Jni) -> Result<&ModuleMethods, ErrorCode> {
    if let Some(m) = agent.engine.module_methods.get() {
        return Ok(m);
    }
    let class = agent.known()?.class.0;
    let class_get_module = jni.get_method_id(class, "getModule", "()Ljava/lang/Module;")? as usize;
    let module = jni.find_class("java/lang/Module")?;
    let get_name = jni.get_method_id(module, "getName", "()Ljava/lang/String;")? as usize;
    let get_class_loader = jni.get_method_id(module, "getClassLoader", "()Ljava/lang/ClassLoader;")? as usize;
    jni.delete_local_ref(module);
    Ok(agent.engine.module_methods.get_or_init(|| ModuleMethods { class_get_module, get_name, get_class_loader }))
}

/// Calls an accessor returning an object on `obj` (a local reference, or null).
fn call_getter(jni: Jni, obj: jobject, method: usize) -> Result<jobject, ErrorCode> {
    // SAFETY: every `method` passed here is a no-argument instance method of `obj`'s class
    // returning an object (looked up in `methods`).
    let value = unsafe { jni.call_method(obj, method as jmethodID, JavaType::Object, &[]) }?;
    // SAFETY: the method returns an object.
    Ok(unsafe { value.l })
}

/// The module of a class (`Class.getModule`): a local reference.
pub(crate) fn class_module(agent: &Agent, jni: Jni, class: jclass) -> Result<jobject, ErrorCode> {
    let module = call_getter(jni, class, methods(agent, jni)?.class_get_module)?;
    if module.is_null() { Err(ErrorCode::INTERNAL) } else { Ok(module) }
}

/// A module by ID, checked to be a `java.lang.Module`, and the methods to ask it with.
fn module(agent: &Agent, jni: Jni, id: ModuleId) -> Result<(jobject, &ModuleMethods), ErrorCode> {
    let m = methods(agent, jni)?;
    Ok((agent.module(jni, id)?, m))
}

/// The module's name; empty for an unnamed module, as the JDK's agent answers.
pub fn name(agent: &Agent, cmd: Name) -> Result<NameReply, ErrorCode> {
    let jni = agent.jni()?;
    let (obj, m) = module(agent, jni, cmd.module)?;
    let name = call_getter(jni, obj, m.get_name)?;
    let name = if name.is_null() { String::new() } else { jni.get_string_utf(name)? };
    Ok(NameReply { name })
}

/// The loader of the module's classes (null for the bootstrap loader).
pub fn class_loader(agent: &Agent, cmd: ClassLoader) -> Result<ClassLoaderReply, ErrorCode> {
    let jni = agent.jni()?;
    let (obj, m) = module(agent, jni, cmd.module)?;
    let loader = call_getter(jni, obj, m.get_class_loader)?;
    Ok(ClassLoaderReply { class_loader: ClassLoaderId(agent.object_id(jni, loader)?.0) })
}

/// This module's commands.
pub(super) static TABLE: &[Entry<Agent>] = crate::dispatch_table!(Agent;
    c::module_reference::Name => name,
    c::module_reference::ClassLoader => class_loader,
);
