//! `ThreadGroupReference` (command set 12): a thread group's name, parent and direct children.

use super::prelude::*;

command_set! {
    ThreadGroupReference = 12 {
        /// The group's name.
        Name = 1 {
            out Name { group: ThreadGroupId }
            reply NameReply { group_name: String }
        }
        /// The group containing this one; null for a top-level group.
        Parent = 2 {
            out Parent { group: ThreadGroupId }
            reply ParentReply { parent_group: ThreadGroupId }
        }
        /// The live threads and active groups directly inside this group (not their descendants).
        Children = 3 {
            out Children { group: ThreadGroupId }
            reply ChildrenReply { child_threads: Vec<ThreadId>, child_groups: Vec<ThreadGroupId> }
        }
    }
}
