//! Command handlers, one module per command set, and the dispatch table that routes to them.
//! Commands not in the table answer `NOT_IMPLEMENTED` (see spec-notes' coverage table).

pub mod event_request;
pub mod method;
pub mod object_reference;
pub mod reference_type;
pub mod stack_frame;
pub mod thread_reference;
pub mod virtual_machine;

use jdwp_protocol::commands as c;
use jdwp_protocol::{ErrorCode, TypeTag, class_status};
use jni_sys::jclass;

use crate::agent::Agent;
use crate::dispatch::Entry;

/// Every implemented command.
pub static TABLE: &[Entry<Agent>] = crate::dispatch_table!(Agent;
    c::virtual_machine::Version => virtual_machine::version,
    c::virtual_machine::ClassesBySignature => virtual_machine::classes_by_signature,
    c::virtual_machine::AllClasses => virtual_machine::all_classes,
    c::virtual_machine::AllThreads => virtual_machine::all_threads,
    c::virtual_machine::TopLevelThreadGroups => virtual_machine::top_level_thread_groups,
    c::virtual_machine::Dispose => virtual_machine::dispose,
    c::virtual_machine::IdSizesCmd => virtual_machine::id_sizes,
    c::virtual_machine::Suspend => virtual_machine::suspend,
    c::virtual_machine::Resume => virtual_machine::resume,
    c::virtual_machine::Exit => virtual_machine::exit,
    c::virtual_machine::CreateString => virtual_machine::create_string,
    c::virtual_machine::Capabilities => virtual_machine::capabilities,
    c::virtual_machine::ClassPaths => virtual_machine::class_paths,
    c::virtual_machine::DisposeObjects => virtual_machine::dispose_objects,
    c::virtual_machine::CapabilitiesNew => virtual_machine::capabilities_new,
    c::virtual_machine::AllClassesWithGeneric => virtual_machine::all_classes_with_generic,
    c::reference_type::Signature => reference_type::signature,
    c::reference_type::ClassLoader => reference_type::class_loader,
    c::reference_type::Modifiers => reference_type::modifiers,
    c::reference_type::Fields => reference_type::fields,
    c::reference_type::Methods => reference_type::methods,
    c::reference_type::GetValues => reference_type::get_values,
    c::reference_type::SourceFile => reference_type::source_file,
    c::reference_type::Status => reference_type::status,
    c::reference_type::Interfaces => reference_type::interfaces,
    c::reference_type::SignatureWithGeneric => reference_type::signature_with_generic,
    c::reference_type::FieldsWithGeneric => reference_type::fields_with_generic,
    c::reference_type::MethodsWithGeneric => reference_type::methods_with_generic,
    c::class_type::Superclass => reference_type::superclass,
    c::method::LineTable => method::line_table,
    c::method::VariableTable => method::variable_table,
    c::method::VariableTableWithGeneric => method::variable_table_with_generic,
    c::method::Bytecodes => method::bytecodes,
    c::method::IsObsolete => method::is_obsolete,
    c::object_reference::ReferenceType => object_reference::reference_type,
    c::object_reference::GetValues => object_reference::get_values,
    c::object_reference::DisableCollection => object_reference::disable_collection,
    c::object_reference::EnableCollection => object_reference::enable_collection,
    c::object_reference::IsCollected => object_reference::is_collected,
    c::string_reference::ValueCmd => object_reference::string_value,
    c::thread_reference::Name => thread_reference::name,
    c::thread_reference::Suspend => thread_reference::suspend,
    c::thread_reference::Resume => thread_reference::resume,
    c::thread_reference::Status => thread_reference::status,
    c::thread_reference::ThreadGroup => thread_reference::thread_group,
    c::thread_reference::Frames => thread_reference::frames,
    c::thread_reference::FrameCount => thread_reference::frame_count,
    c::thread_reference::SuspendCount => thread_reference::suspend_count,
    c::thread_group_reference::Name => thread_reference::group_name,
    c::thread_group_reference::Parent => thread_reference::group_parent,
    c::thread_group_reference::Children => thread_reference::group_children,
    c::stack_frame::GetValues => stack_frame::get_values,
    c::stack_frame::ThisObject => stack_frame::this_object,
    c::event_request::Set => event_request::set,
    c::event_request::Clear => event_request::clear,
    c::event_request::ClearAllBreakpoints => event_request::clear_all_breakpoints,
);

/// The JDWP type tag of a class.
pub fn type_tag(agent: &Agent, class: jclass) -> Result<TypeTag, ErrorCode> {
    Ok(if agent.jvmti.is_array_class(class)? {
        TypeTag::Array
    } else if agent.jvmti.is_interface(class)? {
        TypeTag::Interface
    } else {
        TypeTag::Class
    })
}

/// JVMTI class status bits → JDWP's (the same bit values for the four JDWP defines).
pub fn jdwp_class_status(jvmti_status: i32) -> i32 {
    jvmti_status
        & (class_status::VERIFIED | class_status::PREPARED | class_status::INITIALIZED | class_status::ERROR)
}
