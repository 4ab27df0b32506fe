//! The heap histogram: instances and bytes per loaded class, like `jmap -histo`.
//!
//! Every loaded class is tagged with its index in a walk environment of its own (see
//! `commands/heap.rs`: the main environment's tags are object IDs), then one `IterateThroughHeap`
//! adds each object's size to its class's row: the callback gets the class tag and the size, so
//! it runs no JNI and allocates nothing. Objects nothing refers to any more count until collected;
//! `live_only` forces a full collection first, as `jmap -histo:live` does.

use std::ffi::c_void;

use jdwp_protocol::ErrorCode;
use jdwp_protocol::commands::profiler::{HeapHistogramReply, HistogramEntry};

use crate::agent::Agent;
use crate::heap_walk::{WalkEnv, guarded};
use crate::jni::Jni;
use crate::jvmti::sys::{jint, jlong};

/// Instances and bytes of one class, filled in by the walk.
#[derive(Clone, Copy, Default)]
struct Row {
    instances: i64,
    bytes: i64,
}

pub fn histogram(agent: &Agent, jni: Jni, live_only: bool, max_entries: i32) -> Result<HeapHistogramReply, ErrorCode> {
    if max_entries < 0 {
        return Err(ErrorCode::ILLEGAL_ARGUMENT);
    }
    if live_only {
        agent.jvmti.force_garbage_collection()?;
    }
    let env = WalkEnv::new(agent)?;
    let classes = agent.jvmti.get_loaded_classes()?;
    for (i, &class) in classes.iter().enumerate() {
        env.0.set_tag(class, i as jlong + 1)?;
    }
    let mut rows = vec![Row::default(); classes.len()];
    env.iterate(std::ptr::null_mut(), Some(add_to_row), &mut rows)?;
    drop(env);

    let (mut total_instances, mut total_bytes) = (0i64, 0i64);
    let mut used: Vec<(usize, Row)> = rows.into_iter().enumerate().filter(|(_, r)| r.instances > 0).collect();
    for (_, row) in &used {
        total_instances += row.instances;
        total_bytes += row.bytes;
    }
    used.sort_by(|a, b| b.1.bytes.cmp(&a.1.bytes).then(b.1.instances.cmp(&a.1.instances)));
    if max_entries > 0 {
        used.truncate(max_entries as usize);
    }
    let mut entries = Vec::with_capacity(used.len());
    for (i, row) in used {
        let class = classes[i];
        let class_signature = agent.jvmti.get_class_signature(class)?.0;
        let type_id = agent.class_id(jni, class)?;
        entries.push(HistogramEntry { type_id, class_signature, instances: row.instances, bytes: row.bytes });
    }
    for &class in classes.iter() {
        jni.delete_local_ref(class);
    }
    Ok(HeapHistogramReply { total_instances, total_bytes, entries })
}

/// Heap walk callback (inside the walk: no JNI, no allocation): one object of class `class_tag`.
unsafe extern "system" fn add_to_row(
    class_tag: jlong,
    size: jlong,
    _tag_ptr: *mut jlong,
    _length: jint,
    user_data: *mut c_void,
) -> jint {
    guarded(|| {
        // SAFETY: the user data is our `Vec<Row>`, valid for the walk (`WalkEnv::iterate`).
        let rows = unsafe { &mut *user_data.cast::<Vec<Row>>() };
        if let Some(row) = usize::try_from(class_tag).ok().and_then(|i| i.checked_sub(1)).and_then(|i| rows.get_mut(i))
        {
            row.instances += 1;
            row.bytes += size;
        }
        0
    })
}
