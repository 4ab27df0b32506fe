//! `ClassLoaderReference` (command set 14).

use jdwp_protocol::ErrorCode;
use jdwp_protocol::commands::class_loader_reference::*;

use crate::agent::Agent;
use crate::dispatch::Entry;
use jdwp_protocol::commands as c;

/// The types this loader initiated the loading of: those it defined and those it resolved by
/// delegating. The null loader is the bootstrap loader.
pub fn visible_classes(agent: &Agent, cmd: VisibleClasses) -> Result<VisibleClassesReply, ErrorCode> {
    let jni = agent.jni()?;
    let loader = agent.class_loader(jni, cmd.class_loader_object)?;
    let list = agent.jvmti.get_class_loader_classes(loader)?;
    let mut classes = Vec::with_capacity(list.len());
    for &class in list.iter() {
        let (ref_type_tag, type_id) = agent.tagged_type(jni, class)?;
        classes.push(VisibleClass { ref_type_tag, type_id });
        jni.delete_local_ref(class);
    }
    Ok(VisibleClassesReply { classes })
}

/// This module's commands.
pub(super) static TABLE: &[Entry<Agent>] = crate::dispatch_table!(Agent;
    c::class_loader_reference::VisibleClasses => visible_classes,
);
