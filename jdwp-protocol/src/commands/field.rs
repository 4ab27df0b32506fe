//! `Field` (command set 8): reserved by the spec, which defines no commands in it. Fields are
//! examined through `ReferenceType` (declarations, static values) and `ObjectReference`
//! (instance values) instead.

/// This command set's number.
pub const SET: u8 = 8;
/// This command set's name in the spec.
pub const SET_NAME: &str = "Field";
/// This set's entries of the protocol's command table: none.
pub const COMMANDS: &[crate::CommandInfo] = &[];
