//! Command handlers, one module per command set, and the dispatch table that routes to them.
//! Commands not in the table answer `NOT_IMPLEMENTED` (see spec-notes' coverage table).

pub mod array_reference;
pub mod array_type;
pub mod class_loader_reference;
pub mod class_object_reference;
pub mod class_type;
pub mod event_request;
pub(crate) mod heap;
pub mod interface_type;
pub mod method;
pub mod module_reference;
pub mod object_reference;
pub mod profiler;
pub mod profiler_alloc_monitor_dump;
pub mod reference_type;
pub mod stack_frame;
pub mod thread_reference;
pub mod virtual_machine;

use jdwp_protocol::ErrorCode;

use crate::agent::Agent;
use crate::dispatch::Entry;

/// Every implemented command.
/// Every implemented command, one table per command-set module (each module owns its entries).
pub static TABLES: &[&[Entry<Agent>]] = &[
    virtual_machine::TABLE,
    reference_type::TABLE,
    method::TABLE,
    object_reference::TABLE,
    thread_reference::TABLE,
    stack_frame::TABLE,
    event_request::TABLE,
    array_type::TABLE,
    array_reference::TABLE,
    class_loader_reference::TABLE,
    class_object_reference::TABLE,
    module_reference::TABLE,
    class_type::TABLE,
    interface_type::TABLE,
    profiler::TABLE,
    profiler_alloc_monitor_dump::TABLE,
];

/// The handler of a command, if this agent implements it.
pub fn lookup(set: u8, cmd: u8) -> Option<&'static Entry<Agent>> {
    TABLES.iter().find_map(|table| crate::dispatch::lookup(table, set, cmd))
}

/// Checks every write of a `SetValues` before any is made, then makes them, holding one JNI local
/// reference at a time whatever the count: `check` resolves and checks one value (a `jvalue`, an
/// object as a local reference, and whether it is one), `write` writes it. An object value is
/// resolved twice; one collected in between (nothing else holding it) fails the second pass with
/// `INVALID_OBJECT`.
pub fn check_then_write<T>(
    jni: crate::jni::Jni,
    items: &[T],
    check: impl Fn(&T) -> Result<(jni_sys::jvalue, bool), ErrorCode>,
    write: impl Fn(&T, jni_sys::jvalue) -> Result<(), ErrorCode>,
) -> Result<(), ErrorCode> {
    let release = |(value, is_object): (jni_sys::jvalue, bool)| {
        // SAFETY: `is_object` says the object member is the one `check` filled.
        let obj = if is_object { unsafe { value.l } } else { std::ptr::null_mut() };
        if !obj.is_null() {
            jni.delete_local_ref(obj);
        }
    };
    for item in items {
        release(check(item)?);
    }
    for item in items {
        let checked = check(item)?;
        let written = write(item, checked.0);
        release(checked);
        written?;
    }
    Ok(())
}

pub use crate::values::jdwp_class_status;
