//! `ClassType` (command set 3): static method calls and object creation (see [`crate::invoke`]).

use jdwp_protocol::ErrorCode;
use jdwp_protocol::commands::class_type::*;

use crate::agent::Agent;
use crate::dispatch::Entry;
use crate::invoke::DEFERRED;

/// Queues the call; the reply comes once the method returns.
pub fn invoke_method(agent: &Agent, cmd: InvokeMethod) -> Result<InvokeMethodReply, ErrorCode> {
    crate::invoke::invoke_class_static(agent, &cmd)?;
    Err(DEFERRED)
}

/// Queues the constructor call; the reply comes once it returns.
pub fn new_instance(agent: &Agent, cmd: NewInstance) -> Result<NewInstanceReply, ErrorCode> {
    crate::invoke::new_instance(agent, &cmd)?;
    Err(DEFERRED)
}

/// This module's commands.
pub(super) static TABLE: &[Entry<Agent>] = crate::dispatch_table!(Agent;
    InvokeMethod => invoke_method,
    NewInstance => new_instance,
);
