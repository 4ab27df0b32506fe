//! TODO: layout table not written yet.

pub const COMMANDS: &[crate::CommandInfo] = &[];
