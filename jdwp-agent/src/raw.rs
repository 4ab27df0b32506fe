//! Events as callbacks capture them ([`RawEvent`]: owned JNI global references, `jmethodID`s,
//! `jlocation`s; the types live in `agent/raw_event.rs`, as the event helper's jobs carry them)
//! and their conversion to the protocol's events, which needs the agent's ID tables
//! and is done on an agent thread (the event helper). Also the conversion of a code position to a
//! JDWP [`Location`], shared with the commands that report frames.
//!
//! The raw form exists because a callback runs on an application thread, which may not do the ID
//! work (it takes agent locks across VM calls, see [`crate::agent`]); it only pins what the event
//! names. The protocol's own `Event` cannot carry this form: its IDs are what the conversion makes.

use jdwp_protocol::commands::event::Event;
use jdwp_protocol::{ErrorCode, Location, MethodId, ReferenceTypeId, TypeTag, Value};
use jni_sys::{jfieldID, jmethodID};

pub use crate::agent::raw_event::{RawEvent, RawEvents, RawValue};
use crate::agent::{Agent, GlobalRef};
use crate::jni::Jni;

/// The location of code index `index` in `method`.
pub fn location(agent: &Agent, jni: Jni, method: jmethodID, index: i64) -> Result<Location, ErrorCode> {
    let class = agent.jvmti.get_method_declaring_class(method)?;
    let type_tag = if agent.jvmti.is_interface(class)? { TypeTag::Interface } else { TypeTag::Class };
    let class_id = agent.class_id(jni, class)?;
    jni.delete_local_ref(class);
    // A method replaced by `RedefineClasses` while running here has no ID the debugger knows
    // (HotSpot gives the old version a new jmethodID): like the JDK's agent we send 0, which JDI
    // reads as an obsolete method.
    let method_id =
        if agent.jvmti.is_method_obsolete(method).unwrap_or(false) { MethodId::NULL } else { agent.method_id(method) };
    Ok(Location { type_tag, class_id: class_id.into(), method_id, index: index as u64 })
}

/// What HotSpot's agent sends as the catch location of an uncaught exception.
const NO_LOCATION: Location =
    Location { type_tag: TypeTag::Class, class_id: jdwp_protocol::ClassId::NULL, method_id: MethodId::NULL, index: 0 };

fn value(agent: &Agent, jni: Jni, v: &RawValue) -> Result<Value, ErrorCode> {
    match v {
        RawValue::Plain(v) => Ok(*v),
        RawValue::Object(None) => Ok(Value::NULL),
        RawValue::Object(Some(r)) => crate::values::object_value(agent, jni, r.0),
    }
}

fn tagged(agent: &Agent, jni: Jni, obj: Option<GlobalRef>) -> Result<jdwp_protocol::TaggedObjectId, ErrorCode> {
    agent.tagged_object(jni, obj.map_or(std::ptr::null_mut(), |r| r.0))
}

/// The type tag, type ID and field ID of a watched field.
fn field_ids(
    agent: &Agent,
    jni: Jni,
    class: GlobalRef,
    field: usize,
) -> Result<(TypeTag, ReferenceTypeId, jdwp_protocol::FieldId), ErrorCode> {
    let (tag, type_id) = agent.tagged_type(jni, class.0)?;
    let field_id = agent.field_id(jni, class.0, field as jfieldID)?;
    Ok((tag, type_id, field_id))
}

pub fn convert(agent: &Agent, jni: Jni, raw: &RawEvent) -> Result<Event, ErrorCode> {
    let thread = |t: &GlobalRef| agent.thread_id(jni, t.0);
    let any_thread = |t: &GlobalRef, virtual_thread: bool| {
        if virtual_thread { agent.virtual_thread_id_of(jni, t.0) } else { agent.thread_id(jni, t.0) }
    };
    let at = |method: &usize, index: &i64| location(agent, jni, *method as jmethodID, *index);
    Ok(match raw {
        RawEvent::VmStart { request_id, thread: t } => Event::VmStart { request_id: *request_id, thread: thread(t)? },
        RawEvent::VmDeath { request_id } => Event::VmDeath { request_id: *request_id },
        RawEvent::ThreadStart { request_id, thread: t, virtual_thread } => {
            Event::ThreadStart { request_id: *request_id, thread: any_thread(t, *virtual_thread)? }
        }
        RawEvent::ThreadDeath { request_id, thread: t, virtual_thread } => {
            Event::ThreadDeath { request_id: *request_id, thread: any_thread(t, *virtual_thread)? }
        }
        RawEvent::ClassPrepare { request_id, thread: t, class } => {
            let (signature, _) = agent.jvmti.get_class_signature(class.0)?;
            let status = agent.jvmti.get_class_status(class.0)?;
            let (ref_type_tag, type_id) = agent.tagged_type(jni, class.0)?;
            Event::ClassPrepare {
                request_id: *request_id,
                thread: thread(t)?,
                ref_type_tag,
                type_id,
                signature,
                status: crate::values::jdwp_class_status(status),
            }
        }
        RawEvent::ClassUnload { request_id, signature } => {
            Event::ClassUnload { request_id: *request_id, signature: signature.clone() }
        }
        RawEvent::Breakpoint { request_id, thread: t, method, index } => {
            Event::Breakpoint { request_id: *request_id, thread: thread(t)?, location: at(method, index)? }
        }
        RawEvent::SingleStep { request_id, thread: t, method, index } => {
            Event::SingleStep { request_id: *request_id, thread: thread(t)?, location: at(method, index)? }
        }
        RawEvent::MethodEntry { request_id, thread: t, method, index } => {
            Event::MethodEntry { request_id: *request_id, thread: thread(t)?, location: at(method, index)? }
        }
        RawEvent::MethodExit { request_id, thread: t, method, index } => {
            Event::MethodExit { request_id: *request_id, thread: thread(t)?, location: at(method, index)? }
        }
        RawEvent::MethodExitWithReturnValue { request_id, thread: t, method, index, value: v } => {
            Event::MethodExitWithReturnValue {
                request_id: *request_id,
                thread: thread(t)?,
                location: at(method, index)?,
                value: value(agent, jni, v)?,
            }
        }
        RawEvent::MonitorContendedEnter { request_id, thread: t, object, method, index } => {
            Event::MonitorContendedEnter {
                request_id: *request_id,
                thread: thread(t)?,
                object: agent.tagged_object(jni, object.0)?,
                location: at(method, index)?,
            }
        }
        RawEvent::MonitorContendedEntered { request_id, thread: t, object, method, index } => {
            Event::MonitorContendedEntered {
                request_id: *request_id,
                thread: thread(t)?,
                object: agent.tagged_object(jni, object.0)?,
                location: at(method, index)?,
            }
        }
        RawEvent::MonitorWait { request_id, thread: t, object, method, index, timeout } => Event::MonitorWait {
            request_id: *request_id,
            thread: thread(t)?,
            object: agent.tagged_object(jni, object.0)?,
            location: at(method, index)?,
            timeout: *timeout,
        },
        RawEvent::MonitorWaited { request_id, thread: t, object, method, index, timed_out } => Event::MonitorWaited {
            request_id: *request_id,
            thread: thread(t)?,
            object: agent.tagged_object(jni, object.0)?,
            location: at(method, index)?,
            timed_out: *timed_out,
        },
        RawEvent::Exception { request_id, thread: t, method, index, exception, catch } => Event::Exception {
            request_id: *request_id,
            thread: thread(t)?,
            location: at(method, index)?,
            exception: agent.tagged_object(jni, exception.0)?,
            catch_location: match catch {
                Some((m, i)) => at(m, i)?,
                None => NO_LOCATION,
            },
        },
        RawEvent::FieldAccess { request_id, thread: t, method, index, field_class, field, object } => {
            let (ref_type_tag, type_id, field_id) = field_ids(agent, jni, *field_class, *field)?;
            Event::FieldAccess {
                request_id: *request_id,
                thread: thread(t)?,
                location: at(method, index)?,
                ref_type_tag,
                type_id,
                field_id,
                object: tagged(agent, jni, *object)?,
            }
        }
        RawEvent::FieldModification { request_id, thread: t, method, index, field_class, field, object, value: v } => {
            let (ref_type_tag, type_id, field_id) = field_ids(agent, jni, *field_class, *field)?;
            Event::FieldModification {
                request_id: *request_id,
                thread: thread(t)?,
                location: at(method, index)?,
                ref_type_tag,
                type_id,
                field_id,
                object: tagged(agent, jni, *object)?,
                value_to_be: value(agent, jni, v)?,
            }
        }
    })
}
