//! The Java Debug Wire Protocol (JDWP) of JDK 17, defined once.
//!
//! Every command set, command, reply and event of the protocol is declared in [`commands`] as a
//! table of fields in wire order; macros turn each declaration into a Rust type with one codec
//! that serves both directions. The agent decodes commands and encodes replies and events, the
//! client does the reverse, and both use the very same types, so the two cannot disagree.
//!
//! This crate does no I/O: it turns bodies into values and back. Packet framing and transports
//! live in `jdwp-transports`.
//!
//! ```
//! use jdwp_protocol::{commands::virtual_machine, codec, IdSizes};
//! let body = codec::encode_body(&virtual_machine::ClassesBySignature { signature: "LDemo;".into() }, IdSizes::default());
//! let back: virtual_machine::ClassesBySignature = codec::decode_body(&body, IdSizes::default()).unwrap();
//! assert_eq!(back.signature, "LDemo;");
//! ```

#[macro_use]
mod macros;

pub mod codec;
pub mod commands;
pub mod constants;
pub mod error_code;
pub mod ids;
pub mod mutf8;
pub mod value;

#[cfg(any(test, feature = "sample"))]
pub mod check;
#[cfg(any(test, feature = "sample"))]
pub mod sample;
#[cfg(test)]
mod tests;

pub use codec::{DecodeError, JdwpCodec, Reader, UntaggedTypes, Writer};
pub use constants::*;
pub use error_code::ErrorCode;
pub use ids::*;
pub use value::{ArrayRegion, Location, Tag, TaggedObjectId, UntaggedValue, Value};

/// A JDWP command: its place in the command table and the type of its reply.
pub trait Command: JdwpCodec {
    const SET: u8;
    const CMD: u8;
    /// The command set's name in the spec (`VirtualMachine`).
    const SET_NAME: &'static str;
    /// The command's name in the spec (`Version`).
    const NAME: &'static str;
    /// `Set.Command`, as logs and error messages show it.
    const QUALIFIED_NAME: &'static str;
    type Reply: JdwpCodec;
}

/// One entry of the protocol's command table.
#[derive(Clone, Copy)]
pub struct CommandInfo {
    pub set: u8,
    pub cmd: u8,
    pub set_name: &'static str,
    pub name: &'static str,
    /// `Set.Command`.
    pub qualified_name: &'static str,
    #[cfg(any(test, feature = "sample"))]
    pub check: check::CommandCheck,
}

impl std::fmt::Debug for CommandInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{} ({}/{})", self.set_name, self.name, self.set, self.cmd)
    }
}

/// Looks a command up by its numbers, in the JDWP table and the vendor sets.
pub fn command_info(set: u8, cmd: u8) -> Option<&'static CommandInfo> {
    all_commands().chain(vendor_commands()).find(|c| c.set == set && c.cmd == cmd)
}

/// Every command of the protocol, in spec order.
pub fn all_commands() -> impl Iterator<Item = &'static CommandInfo> {
    commands::ALL.iter().flat_map(|s| s.iter())
}

/// Every command of our vendor sets ([`commands::VENDOR`]), which are not part of JDWP.
pub fn vendor_commands() -> impl Iterator<Item = &'static CommandInfo> {
    commands::VENDOR.iter().flat_map(|s| s.iter())
}
