//! `InterfaceType` (command set 5): static methods of interfaces (see [`crate::invoke`]).

use jdwp_protocol::ErrorCode;
use jdwp_protocol::commands::interface_type::*;

use crate::agent::Agent;
use crate::dispatch::Entry;
use crate::invoke::DEFERRED;

/// Queues the call; the reply comes once the method returns.
pub fn invoke_method(agent: &Agent, cmd: InvokeMethod) -> Result<InvokeMethodReply, ErrorCode> {
    crate::invoke::invoke_interface_static(agent, &cmd)?;
    Err(DEFERRED)
}

/// This module's commands.
pub(super) static TABLE: &[Entry<Agent>] = crate::dispatch_table!(Agent;
    InvokeMethod => invoke_method,
);
