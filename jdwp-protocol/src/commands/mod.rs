//! Every JDWP command set, one module each, in spec order.
//!
//! Each module is a layout table (see `command_set!`): the command's fields, then the reply's, in
//! wire order, with spec names turned into snake case. Types shared by several commands (a class
//! description, a line table entry...) are declared with `jdwp_struct!` next to their first use.

/// What the layout tables need in scope.
#[allow(unused_imports)]
mod prelude {
    pub use crate::codec::{DecodeError, JdwpCodec, Reader, Writer};
    pub use crate::constants::*;
    pub use crate::ids::*;
    pub use crate::value::{ArrayRegion, Location, Tag, TaggedObjectId, UntaggedValue, Value};
    pub use crate::{command_set, jdwp_select, jdwp_struct};
}

pub mod array_reference;
pub mod array_type;
pub mod class_loader_reference;
pub mod class_object_reference;
pub mod class_type;
pub mod event;
pub mod event_request;
pub mod field;
pub mod interface_type;
pub mod method;
pub mod module_reference;
pub mod object_reference;
pub mod profiler;
pub mod reference_type;
pub mod stack_frame;
pub mod string_reference;
pub mod thread_group_reference;
pub mod thread_reference;
pub mod virtual_machine;

/// The command table: every set's commands, in spec order.
pub const ALL: &[&[crate::CommandInfo]] = &[
    virtual_machine::COMMANDS,
    reference_type::COMMANDS,
    class_type::COMMANDS,
    array_type::COMMANDS,
    interface_type::COMMANDS,
    method::COMMANDS,
    field::COMMANDS,
    object_reference::COMMANDS,
    string_reference::COMMANDS,
    thread_reference::COMMANDS,
    thread_group_reference::COMMANDS,
    array_reference::COMMANDS,
    class_loader_reference::COMMANDS,
    event_request::COMMANDS,
    stack_frame::COMMANDS,
    class_object_reference::COMMANDS,
    module_reference::COMMANDS,
    event::COMMANDS,
];

/// Vendor command sets (numbers 128 and up), kept out of [`ALL`] so the JDWP table stays the
/// spec's: agents without them answer `NOT_IMPLEMENTED`, and clients discover them first.
pub const VENDOR: &[&[crate::CommandInfo]] = &[profiler::COMMANDS];
