//! `Profiler.HeapDump`: an HPROF binary heap dump written by the agent, through JVMTI only.
//!
//! How: in a JVMTI environment of its own (its tags are the dump's object IDs and vanish with it;
//! the debugger's environment uses tags as JDWP object IDs), the agent
//! 1. tags every loaded class (tags `1..=n`), class loader and thread, and reads what the dump says
//!    about classes (names, superclass, loader, interfaces, declared fields) and threads (stacks),
//!    under a JNI local frame it pops before the walk, so its own references do not show up as
//!    roots;
//! 2. walks the heap once with `FollowReferences` (one VM operation at a safepoint: a consistent
//!    snapshot), tagging each object the first time it is reached and recording its class, its
//!    reference fields and array elements (reference callbacks), its primitive fields (primitive
//!    field callback) and its primitive array contents (array callback), and the roots;
//! 3. writes the file with [`hprof`](super::hprof).
//!
//! Field values arrive from JVMTI by *field index*, whose numbering the spec defines over the
//! class, its superclasses and its superinterfaces: the fields of all superinterfaces (transitively)
//! first, then those of `java.lang.Object`, then each subclass down to the object's class, each in
//! `GetClassFields` order, static and instance fields alike. [`FieldLayout`] computes that numbering
//! from the declared fields (HotSpot leaves two internal reflection fields out of it, and so do we).
//!
//! The walk follows references, so both modes dump the objects reachable from the roots (weakly
//! reachable ones included); `live_only` first forces a full collection, which clears what only
//! weak and soft references held, as `jmap -dump:live` does. Unreachable garbage is never dumped.
//! The callbacks run inside the VM's heap walk, where JNI and most of JVMTI are forbidden: they
//! only read and write tags and our own tables.

use std::collections::{HashMap, HashSet};
use std::ffi::c_void;
use std::fs::File;
use std::io::BufWriter;
use std::panic::AssertUnwindSafe;

use jdwp_protocol::ErrorCode;
use jni_sys::{jclass, jobject, jvalue};

use super::hprof::{self, BasicType, ClassDump, HprofWriter, sub};
use crate::agent::Agent;
use crate::jni::Jni;
use crate::jvmti::Jvmti;
use crate::jvmti::sys::{
    self, jint, jlong, jvmtiCapabilities, jvmtiHeapCallbacks, jvmtiHeapReferenceInfo, jvmtiHeapReferenceKind,
    jvmtiPrimitiveType,
};

/// Frames recorded per thread stack in the dump.
const MAX_FRAMES: jint = 1024;

/// Writes a heap dump of the VM to `path` (which must not exist); returns the bytes written.
pub fn dump(agent: &Agent, path: &str, live_only: bool) -> Result<i64, ErrorCode> {
    let file = std::fs::OpenOptions::new().write(true).create_new(true).open(path).map_err(|e| {
        tracing::warn!(path, error = %e, "cannot create the heap dump file");
        ErrorCode::ILLEGAL_ARGUMENT
    })?;
    let result = dump_to(agent, file, live_only);
    if result.is_err() {
        let _ = std::fs::remove_file(path);
    }
    result
}

fn dump_to(agent: &Agent, file: File, live_only: bool) -> Result<i64, ErrorCode> {
    if live_only {
        agent.jvmti.force_garbage_collection()?;
    }
    let env = DumpEnv::new(agent)?;
    let jni = agent.jni()?;
    let before = collect(env.0, jni)?;
    let walk = walk(env.0, before.next_tag)?;
    let mut snapshot = before;
    resolve_unknown_classes(env.0, jni, &mut snapshot, &walk)?;
    let millis =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0);
    let written = write(&snapshot, &walk, BufWriter::with_capacity(1 << 20, file), millis).map_err(|e| {
        tracing::warn!(error = %e, "cannot write the heap dump");
        ErrorCode::INTERNAL
    })?;
    i64::try_from(written).map_err(|_| ErrorCode::INTERNAL)
}

/// A JVMTI environment for one dump, disposed of (with all its tags) when dropped.
struct DumpEnv(Jvmti);

impl DumpEnv {
    fn new(agent: &Agent) -> Result<DumpEnv, ErrorCode> {
        let env = DumpEnv(agent.vm.get_jvmti(sys::JVMTI_VERSION_11)?);
        let mut caps = jvmtiCapabilities::default();
        caps.set_can_tag_objects(true);
        env.0.add_capabilities(&caps).map_err(|_| ErrorCode::NOT_IMPLEMENTED)?;
        // For the threads' frames; a VM without them gets frames without file or line.
        let mut names = jvmtiCapabilities::default();
        names.set_can_get_source_file_name(true);
        names.set_can_get_line_numbers(true);
        let _ = env.0.add_capabilities(&names);
        Ok(env)
    }
}

impl Drop for DumpEnv {
    fn drop(&mut self) {
        // SAFETY: the handle never leaves this value; nothing it allocated outlives the dump.
        let _ = unsafe { self.0.dispose_environment() };
    }
}

// ---- before the walk: classes and threads ----------------------------------------------------

/// A declared field.
#[derive(Debug, Clone)]
struct Field {
    name: String,
    ty: BasicType,
    is_static: bool,
    /// Left out of JVMTI's field numbering (see [`is_filtered`]).
    filtered: bool,
}

/// What the dump needs of a class.
#[derive(Debug, Clone)]
struct ClassInfo {
    tag: i64,
    signature: String,
    super_tag: i64,
    loader_tag: i64,
    interfaces: Vec<i64>,
    fields: Vec<Field>,
}

impl ClassInfo {
    fn is_array(&self) -> bool {
        self.signature.starts_with('[')
    }

    /// The name as the VM spells it internally, as dumps carry it: `java/lang/String`, `[I`.
    fn internal_name(&self) -> String {
        match self.signature.strip_prefix('L').and_then(|s| s.strip_suffix(';')) {
            Some(name) => name.to_owned(),
            None => self.signature.clone(),
        }
    }

    /// Fields that count in JVMTI's numbering.
    fn indexed_count(&self) -> usize {
        self.fields.iter().filter(|f| !f.filtered).count()
    }
}

/// Fields HotSpot hides from reflection and from JVMTI's field numbering (its
/// `FilteredFieldsMap`): their values are VM internals.
fn is_filtered(class_signature: &str, field: &str) -> bool {
    matches!(
        (class_signature, field),
        ("Ljdk/internal/reflect/ConstantPool;", "constantPoolOop")
            | ("Ljdk/internal/reflect/UnsafeStaticFieldAccessorImpl;", "base")
    )
}

/// A frame of a thread's stack, resolved to names.
struct FrameInfo {
    method: String,
    signature: String,
    source_file: Option<String>,
    class_tag: i64,
    line: i32,
}

struct ThreadInfo {
    tag: i64,
    frames: Vec<FrameInfo>,
}

/// Everything known before the walk.
struct Snapshot {
    classes: Vec<ClassInfo>,
    /// Class tag → index in `classes`.
    class_index: HashMap<i64, usize>,
    threads: Vec<ThreadInfo>,
    next_tag: i64,
}

/// Tags and describes classes, loaders and threads, under a local frame popped before returning.
fn collect(env: Jvmti, jni: Jni) -> Result<Snapshot, ErrorCode> {
    let _frame = jni.push_local_frame(64)?;
    let loaded = env.get_loaded_classes()?;
    let mut next_tag: i64 = 1;
    let mut tags = Vec::with_capacity(loaded.len());
    for &class in loaded.iter() {
        let tag = next_tag;
        next_tag += 1;
        env.set_tag(class, tag)?;
        tags.push(tag);
    }
    let mut snapshot = Snapshot {
        classes: Vec::with_capacity(loaded.len()),
        class_index: HashMap::new(),
        threads: Vec::new(),
        next_tag,
    };
    for (&class, &tag) in loaded.iter().zip(&tags) {
        let info = class_info(env, jni, class, tag, &mut snapshot.next_tag)?;
        snapshot.class_index.insert(tag, snapshot.classes.len());
        snapshot.classes.push(info);
    }
    let stacks = env.get_all_stack_traces(MAX_FRAMES)?;
    for stack in stacks.iter() {
        let tag = tag_of(env, stack.thread, &mut snapshot.next_tag)?;
        let mut frames = Vec::with_capacity(stack.frames.len());
        for frame in stack.frames {
            frames.push(frame_info(env, frame.method, frame.location));
        }
        snapshot.threads.push(ThreadInfo { tag, frames });
    }
    Ok(snapshot)
}

/// The object's tag, giving it the next free one if it has none (0 for null).
fn tag_of(env: Jvmti, object: jobject, next_tag: &mut i64) -> Result<i64, ErrorCode> {
    if object.is_null() {
        return Ok(0);
    }
    match env.get_tag(object)? {
        0 => {
            let tag = *next_tag;
            *next_tag += 1;
            env.set_tag(object, tag)?;
            Ok(tag)
        }
        tag => Ok(tag),
    }
}

fn class_info(env: Jvmti, jni: Jni, class: jclass, tag: i64, next_tag: &mut i64) -> Result<ClassInfo, ErrorCode> {
    let signature = env.get_class_signature(class)?.0;
    let super_tag = match jni.get_superclass(class) {
        Some(superclass) => {
            let t = tag_of(env, superclass, next_tag)?;
            jni.delete_local_ref(superclass);
            t
        }
        None => 0,
    };
    let loader = env.get_class_loader(class)?;
    let loader_tag = tag_of(env, loader, next_tag)?;
    if !loader.is_null() {
        jni.delete_local_ref(loader);
    }
    let mut interfaces = Vec::new();
    if let Ok(list) = env.get_implemented_interfaces(class) {
        for &interface in list.iter() {
            interfaces.push(tag_of(env, interface, next_tag)?);
            jni.delete_local_ref(interface);
        }
    }
    let mut fields = Vec::new();
    // A class not yet prepared has no fields to report, and no instances either.
    if let Ok(ids) = env.get_class_fields(class) {
        for &field in ids.iter() {
            let names = env.get_field_name(class, field)?;
            let is_static = env.get_field_modifiers(class, field)? & 0x0008 != 0;
            let ty = BasicType::from_descriptor(&names.signature).ok_or(ErrorCode::INTERNAL)?;
            let filtered = is_filtered(&signature, &names.name);
            fields.push(Field { name: names.name, ty, is_static, filtered });
        }
    }
    Ok(ClassInfo { tag, signature, super_tag, loader_tag, interfaces, fields })
}

fn frame_info(env: Jvmti, method: jni_sys::jmethodID, location: sys::jlocation) -> FrameInfo {
    let names = env.get_method_name(method).ok();
    let class = env.get_method_declaring_class(method).ok();
    let class_tag = class.and_then(|c| env.get_tag(c).ok()).unwrap_or(0);
    let source_file = class.and_then(|c| env.get_source_file_name(c).ok());
    let line = if env.is_method_native(method).unwrap_or(false) {
        -3
    } else {
        let mut line = -1;
        if let Ok(table) = env.get_line_number_table(method) {
            let mut best = -1;
            for entry in table.iter() {
                if entry.start_location <= location && entry.start_location >= best {
                    best = entry.start_location;
                    line = entry.line_number;
                }
            }
        }
        line
    };
    let (method, signature) = match names {
        Some(n) => (n.name, n.signature),
        None => ("<unknown>".to_owned(), "()V".to_owned()),
    };
    FrameInfo { method, signature, source_file, class_tag, line }
}

/// Classes first met in the walk (defined while the agent was collecting, or not reported by
/// `GetLoadedClasses`): described now, through their tags.
fn resolve_unknown_classes(env: Jvmti, jni: Jni, snapshot: &mut Snapshot, walk: &Walk) -> Result<(), ErrorCode> {
    let mut next_tag = walk.next_tag;
    let mut pending: Vec<i64> = walk
        .objects
        .iter()
        .map(|(_, o)| o.class_tag)
        .filter(|t| *t != 0 && !snapshot.class_index.contains_key(t))
        .collect::<HashSet<_>>()
        .into_iter()
        .collect();
    let mut rounds = 0;
    while !pending.is_empty() && rounds < 8 {
        rounds += 1;
        let _frame = jni.push_local_frame(64)?;
        let (objects, tags) = env.get_objects_with_tags(&pending)?;
        pending.clear();
        for (&class, &tag) in objects.iter().zip(tags.iter()) {
            if snapshot.class_index.contains_key(&tag) {
                continue;
            }
            let info = class_info(env, jni, class, tag, &mut next_tag)?;
            for t in std::iter::once(info.super_tag).chain(info.interfaces.iter().copied()) {
                if t != 0 && !snapshot.class_index.contains_key(&t) {
                    pending.push(t);
                }
            }
            snapshot.class_index.insert(tag, snapshot.classes.len());
            snapshot.classes.push(info);
        }
    }
    Ok(())
}

// ---- the walk ----------------------------------------------------------------------------------

/// One object as the walk saw it.
#[derive(Default)]
struct Obj {
    /// Reached by the walk (tags handed out before it may belong to unreachable objects).
    seen: bool,
    class_tag: i64,
    /// Array length, -1 for other objects.
    length: i32,
    /// Reference fields (instance or, for classes, static) and array elements: (index, tag).
    refs: Vec<(i32, i64)>,
    /// Primitive fields (instance or static): (index, value bits).
    prims: Vec<(i32, u64)>,
    /// A primitive array's elements, big-endian.
    elements: Option<Vec<u8>>,
}

enum Root {
    /// A root that is only an object: sub-record tag and object.
    Simple(u8, i64),
    /// A local or JNI local of a thread's frame: sub-record tag, object, thread tag, depth.
    Frame(u8, i64, i64, i32),
    /// A thread object.
    Thread(i64),
}

/// The walk's objects, indexed by tag: tags are handed out in sequence, so a vector is the map.
#[derive(Default)]
struct Objects(Vec<Obj>);

impl Objects {
    /// The record of `tag`, which must be below `next_tag` (every tag this dump handed out is).
    fn slot(&mut self, tag: i64, next_tag: i64) -> Option<&mut Obj> {
        if tag <= 0 || tag >= next_tag {
            return None;
        }
        let i = usize::try_from(tag).ok()?;
        if i >= self.0.len() {
            self.0.resize_with(i + 1, Obj::default);
        }
        self.0.get_mut(i)
    }

    fn get(&self, tag: i64) -> Option<&Obj> {
        usize::try_from(tag).ok().and_then(|i| self.0.get(i)).filter(|o| o.seen)
    }

    fn get_mut(&mut self, tag: i64) -> Option<&mut Obj> {
        usize::try_from(tag).ok().and_then(|i| self.0.get_mut(i)).filter(|o| o.seen)
    }

    /// The objects reached, by increasing tag.
    fn iter(&self) -> impl Iterator<Item = (i64, &Obj)> {
        self.0.iter().enumerate().filter(|(_, o)| o.seen).map(|(i, o)| (i as i64, o))
    }
}

struct Walk {
    next_tag: i64,
    objects: Objects,
    roots: Vec<Root>,
}

impl Walk {
    /// The tag behind `tag_ptr`, given the next free one first if it has none, and its record.
    fn object(&mut self, tag_ptr: *mut jlong, class_tag: jlong, length: jint) -> i64 {
        // SAFETY: the VM passes a valid tag pointer for the object being reported.
        let tag = unsafe { &mut *tag_ptr };
        if *tag == 0 {
            *tag = self.next_tag;
            self.next_tag += 1;
        }
        if let Some(obj) = self.objects.slot(*tag, self.next_tag) {
            if !obj.seen {
                *obj = Obj { seen: true, class_tag, length, ..Default::default() };
            } else if obj.class_tag == 0 {
                obj.class_tag = class_tag;
            }
        }
        *tag
    }
}

fn walk(env: Jvmti, next_tag: i64) -> Result<Walk, ErrorCode> {
    let mut walk = Walk { next_tag, objects: Objects::default(), roots: Vec::new() };
    walk.objects.0.reserve(1 << 16);
    let callbacks = jvmtiHeapCallbacks {
        heap_reference_callback: Some(on_reference),
        primitive_field_callback: Some(on_primitive_field),
        array_primitive_value_callback: Some(on_primitive_array),
        ..Default::default()
    };
    let user_data: *mut Walk = &mut walk;
    // SAFETY: the callbacks are this module's, written for the `Walk` behind `user_data`, which
    // outlives the call; they neither unwind (guarded) nor call JNI/JVMTI.
    unsafe { env.follow_references(0, std::ptr::null_mut(), std::ptr::null_mut(), &callbacks, user_data.cast()) }?;
    Ok(walk)
}

/// Runs a heap callback's body, aborting the walk instead of unwinding into the VM.
fn guarded(f: impl FnOnce() -> jint) -> jint {
    crate::guard(sys::JVMTI_VISIT_ABORT, AssertUnwindSafe(f))
}

unsafe extern "system" fn on_reference(
    kind: jvmtiHeapReferenceKind,
    info: *const jvmtiHeapReferenceInfo,
    class_tag: jlong,
    _referrer_class_tag: jlong,
    _size: jlong,
    tag_ptr: *mut jlong,
    referrer_tag_ptr: *mut jlong,
    length: jint,
    user_data: *mut c_void,
) -> jint {
    guarded(|| {
        // SAFETY: the user data is our `Walk`, valid for the walk (see `walk`).
        let walk = unsafe { &mut *user_data.cast::<Walk>() };
        let tag = walk.object(tag_ptr, class_tag, length);
        if referrer_tag_ptr.is_null() {
            // SAFETY: the VM passes the reference's info for the kinds that have one.
            let info = unsafe { info.as_ref() };
            let root = match kind {
                sys::JVMTI_HEAP_REFERENCE_JNI_GLOBAL => Root::Simple(sub::ROOT_JNI_GLOBAL, tag),
                sys::JVMTI_HEAP_REFERENCE_SYSTEM_CLASS => Root::Simple(sub::ROOT_STICKY_CLASS, tag),
                sys::JVMTI_HEAP_REFERENCE_MONITOR => Root::Simple(sub::ROOT_MONITOR_USED, tag),
                sys::JVMTI_HEAP_REFERENCE_THREAD => Root::Thread(tag),
                // SAFETY (both): the union member the kind says is meaningful.
                sys::JVMTI_HEAP_REFERENCE_STACK_LOCAL => match info {
                    Some(i) => unsafe {
                        Root::Frame(sub::ROOT_JAVA_FRAME, tag, i.stack_local.thread_tag, i.stack_local.depth)
                    },
                    None => Root::Simple(sub::ROOT_UNKNOWN, tag),
                },
                sys::JVMTI_HEAP_REFERENCE_JNI_LOCAL => match info {
                    Some(i) => unsafe {
                        Root::Frame(sub::ROOT_JNI_LOCAL, tag, i.jni_local.thread_tag, i.jni_local.depth)
                    },
                    None => Root::Simple(sub::ROOT_UNKNOWN, tag),
                },
                _ => Root::Simple(sub::ROOT_UNKNOWN, tag),
            };
            walk.roots.push(root);
            return sys::JVMTI_VISIT_OBJECTS;
        }
        // SAFETY: a valid tag pointer for the referrer (the referee's own for a self-reference).
        let referrer = unsafe { *referrer_tag_ptr };
        if referrer == 0 {
            return sys::JVMTI_VISIT_OBJECTS;
        }
        // SAFETY: field and array kinds come with their info; the union member is the kind's.
        let index = match (kind, unsafe { info.as_ref() }) {
            (sys::JVMTI_HEAP_REFERENCE_FIELD | sys::JVMTI_HEAP_REFERENCE_STATIC_FIELD, Some(i)) => unsafe {
                Some(i.field.index)
            },
            (sys::JVMTI_HEAP_REFERENCE_ARRAY_ELEMENT, Some(i)) => unsafe { Some(i.array.index) },
            _ => None,
        };
        let Some(obj) = walk.objects.get_mut(referrer) else { return sys::JVMTI_VISIT_OBJECTS };
        match (kind, index) {
            (sys::JVMTI_HEAP_REFERENCE_CLASS, _) => obj.class_tag = tag,
            (_, Some(index)) => obj.refs.push((index, tag)),
            _ => {}
        }
        sys::JVMTI_VISIT_OBJECTS
    })
}

unsafe extern "system" fn on_primitive_field(
    kind: jvmtiHeapReferenceKind,
    info: *const jvmtiHeapReferenceInfo,
    object_class_tag: jlong,
    object_tag_ptr: *mut jlong,
    value: jvalue,
    value_type: jvmtiPrimitiveType,
    user_data: *mut c_void,
) -> jint {
    guarded(|| {
        // SAFETY: the user data is our `Walk`; the info of a field kind is its field member.
        let (walk, info) = unsafe { (&mut *user_data.cast::<Walk>(), info.as_ref()) };
        let Some(info) = info else { return sys::JVMTI_VISIT_OBJECTS };
        if kind != sys::JVMTI_HEAP_REFERENCE_FIELD && kind != sys::JVMTI_HEAP_REFERENCE_STATIC_FIELD {
            return sys::JVMTI_VISIT_OBJECTS;
        }
        // SAFETY: see above.
        let index = unsafe { info.field.index };
        // SAFETY: the member read is the one `value_type` says the VM wrote.
        let bits = unsafe {
            match value_type {
                sys::JVMTI_PRIMITIVE_TYPE_BOOLEAN => u64::from(value.z),
                sys::JVMTI_PRIMITIVE_TYPE_BYTE => u64::from(value.b as u8),
                sys::JVMTI_PRIMITIVE_TYPE_CHAR => u64::from(value.c),
                sys::JVMTI_PRIMITIVE_TYPE_SHORT => u64::from(value.s as u16),
                sys::JVMTI_PRIMITIVE_TYPE_INT => u64::from(value.i as u32),
                sys::JVMTI_PRIMITIVE_TYPE_LONG => value.j as u64,
                sys::JVMTI_PRIMITIVE_TYPE_FLOAT => u64::from(value.f.to_bits()),
                sys::JVMTI_PRIMITIVE_TYPE_DOUBLE => value.d.to_bits(),
                _ => return sys::JVMTI_VISIT_OBJECTS,
            }
        };
        let tag = walk.object(object_tag_ptr, object_class_tag, -1);
        if let Some(obj) = walk.objects.get_mut(tag) {
            obj.prims.push((index, bits));
        }
        sys::JVMTI_VISIT_OBJECTS
    })
}

/// Bytes of one element of a JVMTI primitive type.
fn primitive_size(ty: jvmtiPrimitiveType) -> Option<usize> {
    Some(match ty {
        sys::JVMTI_PRIMITIVE_TYPE_BOOLEAN | sys::JVMTI_PRIMITIVE_TYPE_BYTE => 1,
        sys::JVMTI_PRIMITIVE_TYPE_CHAR | sys::JVMTI_PRIMITIVE_TYPE_SHORT => 2,
        sys::JVMTI_PRIMITIVE_TYPE_INT | sys::JVMTI_PRIMITIVE_TYPE_FLOAT => 4,
        sys::JVMTI_PRIMITIVE_TYPE_LONG | sys::JVMTI_PRIMITIVE_TYPE_DOUBLE => 8,
        _ => return None,
    })
}

unsafe extern "system" fn on_primitive_array(
    class_tag: jlong,
    _size: jlong,
    tag_ptr: *mut jlong,
    element_count: jint,
    element_type: jvmtiPrimitiveType,
    elements: *const c_void,
    user_data: *mut c_void,
) -> jint {
    guarded(|| {
        // SAFETY: the user data is our `Walk`.
        let walk = unsafe { &mut *user_data.cast::<Walk>() };
        let (Some(size), Ok(count)) = (primitive_size(element_type), usize::try_from(element_count)) else {
            return sys::JVMTI_VISIT_OBJECTS;
        };
        let bytes = if count == 0 || elements.is_null() {
            &[][..]
        } else {
            // SAFETY: the VM passes `element_count` elements of `element_type` at `elements`.
            unsafe { std::slice::from_raw_parts(elements.cast::<u8>(), count * size) }
        };
        // Native order to the dump's big-endian order, element by element.
        let mut big_endian = Vec::with_capacity(bytes.len());
        for element in bytes.chunks_exact(size) {
            let mut e = [0u8; 8];
            e[..size].copy_from_slice(element);
            if cfg!(target_endian = "little") {
                e[..size].reverse();
            }
            big_endian.extend_from_slice(&e[..size]);
        }
        let tag = walk.object(tag_ptr, class_tag, element_count);
        if let Some(obj) = walk.objects.get_mut(tag) {
            obj.length = element_count;
            obj.elements = Some(big_endian);
        }
        sys::JVMTI_VISIT_OBJECTS
    })
}

// ---- field numbering ---------------------------------------------------------------------------

/// JVMTI's field numbering for objects of one class: where each class of its chain starts.
struct FieldLayout {
    /// (class index, first field index) from the object's class up to `java.lang.Object`.
    chain: Vec<(usize, i32)>,
}

impl FieldLayout {
    fn of(snapshot: &Snapshot, class: usize) -> FieldLayout {
        // The class and its superclasses, most derived first.
        let mut chain_classes = vec![class];
        let mut current = &snapshot.classes[class];
        while let Some(&s) = snapshot.class_index.get(&current.super_tag) {
            if chain_classes.contains(&s) || chain_classes.len() > 512 {
                break;
            }
            chain_classes.push(s);
            current = &snapshot.classes[s];
        }
        // Every superinterface, transitively, of any class of the chain.
        let mut interfaces = HashSet::new();
        let mut pending: Vec<i64> =
            chain_classes.iter().flat_map(|&c| snapshot.classes[c].interfaces.iter().copied()).collect();
        while let Some(tag) = pending.pop() {
            if let Some(&i) = snapshot.class_index.get(&tag)
                && interfaces.insert(i)
            {
                pending.extend(snapshot.classes[i].interfaces.iter().copied());
            }
        }
        let mut start: usize = interfaces.iter().map(|&i| snapshot.classes[i].indexed_count()).sum();
        let mut chain = Vec::with_capacity(chain_classes.len());
        for &c in chain_classes.iter().rev() {
            chain.push((c, start as i32));
            start += snapshot.classes[c].indexed_count();
        }
        chain.reverse();
        FieldLayout { chain }
    }

    /// The JVMTI index of each field of class `class` of the chain, `None` for filtered fields.
    fn indices(snapshot: &Snapshot, class: usize, start: i32) -> Vec<Option<i32>> {
        let mut next = start;
        snapshot.classes[class]
            .fields
            .iter()
            .map(|f| {
                if f.filtered {
                    None
                } else {
                    next += 1;
                    Some(next - 1)
                }
            })
            .collect()
    }
}

// ---- writing -----------------------------------------------------------------------------------

fn write<W: std::io::Write>(snapshot: &Snapshot, walk: &Walk, out: W, millis: u64) -> std::io::Result<u64> {
    let mut w = HprofWriter::new(out, millis)?;
    let class_serial = |tag: i64| snapshot.class_index.get(&tag).map(|&i| i as u32 + 1).unwrap_or(0);
    for (i, class) in snapshot.classes.iter().enumerate() {
        w.load_class(i as u32 + 1, class.tag as u64, &class.internal_name())?;
    }
    w.trace(hprof::EMPTY_TRACE, 0, &[])?;
    // Thread serials from 1; thread n's stack is trace 1 + n.
    let mut thread_serials = HashMap::new();
    for (n, thread) in snapshot.threads.iter().enumerate() {
        let serial = n as u32 + 1;
        thread_serials.insert(thread.tag, serial);
        let mut frame_ids = Vec::with_capacity(thread.frames.len());
        for f in &thread.frames {
            let class = class_serial(f.class_tag);
            if class == 0 {
                continue;
            }
            frame_ids.push(w.frame(&f.method, &f.signature, f.source_file.as_deref(), class, f.line)?);
        }
        w.trace(hprof::EMPTY_TRACE + serial, serial, &frame_ids)?;
    }
    let mut dumped_threads = HashSet::new();
    for root in &walk.roots {
        match *root {
            Root::Simple(sub::ROOT_JNI_GLOBAL, tag) => w.root_jni_global(tag as u64)?,
            Root::Simple(kind, tag) => w.root(kind, tag as u64)?,
            Root::Frame(kind, tag, thread, depth) => {
                let serial = thread_serials.get(&thread).copied().unwrap_or(0);
                w.root_frame(kind, tag as u64, serial, depth)?;
            }
            Root::Thread(tag) => {
                if let Some(&serial) = thread_serials.get(&tag) {
                    if dumped_threads.insert(tag) {
                        w.root_thread(tag as u64, serial, hprof::EMPTY_TRACE + serial)?;
                    }
                } else {
                    w.root(sub::ROOT_UNKNOWN, tag as u64)?;
                }
            }
        }
    }
    // Classes, with their static fields.
    let mut layouts: HashMap<usize, FieldLayout> = HashMap::new();
    for (i, class) in snapshot.classes.iter().enumerate() {
        let layout = layouts.entry(i).or_insert_with(|| FieldLayout::of(snapshot, i));
        let own_start = layout.chain.first().map(|c| c.1).unwrap_or(0);
        let indices = FieldLayout::indices(snapshot, i, own_start);
        let values = walk.objects.get(class.tag);
        let mut static_fields = Vec::new();
        let mut instance_fields = Vec::new();
        for (field, index) in class.fields.iter().zip(&indices) {
            if field.is_static {
                let value = index.and_then(|ix| values.and_then(|o| value_at(o, ix, field.ty))).unwrap_or(0);
                static_fields.push((field.name.clone(), field.ty, value));
            } else {
                instance_fields.push((field.name.clone(), field.ty));
            }
        }
        let instance_size = if class.is_array() {
            0
        } else {
            layout
                .chain
                .iter()
                .flat_map(|&(c, _)| snapshot.classes[c].fields.iter())
                .filter(|f| !f.is_static)
                .map(|f| f.ty.size() as u32)
                .sum()
        };
        w.class_dump(&ClassDump {
            id: class.tag as u64,
            super_id: if class.is_array() {
                snapshot.classes.iter().find(|c| c.signature == "Ljava/lang/Object;").map_or(0, |c| c.tag as u64)
            } else {
                class.super_tag as u64
            },
            loader_id: class.loader_tag as u64,
            instance_size,
            static_fields,
            instance_fields,
        })?;
    }
    // Objects, in tag order (the order they were first reached).
    let mut values = Vec::new();
    let mut plans: HashMap<usize, Vec<(Option<i32>, BasicType)>> = HashMap::new();
    for (tag, obj) in walk.objects.iter() {
        if snapshot.class_index.contains_key(&tag) {
            continue; // a class: its CLASS DUMP stands for it
        }
        let Some(&class) = snapshot.class_index.get(&obj.class_tag) else { continue };
        let info = &snapshot.classes[class];
        if info.is_array() {
            let length = u32::try_from(obj.length.max(0)).unwrap_or(0);
            match BasicType::from_descriptor(&info.signature[1..]) {
                Some(BasicType::Object) => {
                    let mut elements = vec![0u64; length as usize];
                    for &(index, target) in &obj.refs {
                        if let Some(e) = usize::try_from(index).ok().and_then(|i| elements.get_mut(i)) {
                            *e = target as u64;
                        }
                    }
                    w.object_array_dump(tag as u64, info.tag as u64, &elements)?;
                }
                Some(ty) => {
                    let size = length as usize * ty.size();
                    let zeros;
                    let elements = match &obj.elements {
                        Some(e) if e.len() == size => e.as_slice(),
                        _ => {
                            zeros = vec![0u8; size];
                            zeros.as_slice()
                        }
                    };
                    w.primitive_array_dump(tag as u64, ty, length, elements)?;
                }
                None => {}
            }
            continue;
        }
        let plan = plans.entry(class).or_insert_with(|| {
            let layout = layouts.entry(class).or_insert_with(|| FieldLayout::of(snapshot, class));
            let mut plan = Vec::new();
            for &(c, start) in &layout.chain {
                let indices = FieldLayout::indices(snapshot, c, start);
                for (field, index) in snapshot.classes[c].fields.iter().zip(indices) {
                    if !field.is_static {
                        plan.push((index, field.ty));
                    }
                }
            }
            plan
        });
        values.clear();
        for &(index, ty) in plan.iter() {
            let value = index.and_then(|ix| value_at(obj, ix, ty)).unwrap_or(0);
            hprof::put_value(&mut values, ty, value);
        }
        w.instance_dump(tag as u64, info.tag as u64, &values)?;
    }
    Ok(w.finish()?.1)
}

/// The value the walk recorded for field `index` of `obj`, as dump bits.
fn value_at(obj: &Obj, index: i32, ty: BasicType) -> Option<u64> {
    if ty == BasicType::Object {
        obj.refs.iter().find(|r| r.0 == index).map(|r| r.1 as u64)
    } else {
        obj.prims.iter().find(|p| p.0 == index).map(|p| p.1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(name: &str, ty: BasicType, is_static: bool) -> Field {
        Field { name: name.into(), ty, is_static, filtered: false }
    }

    fn class(tag: i64, signature: &str, super_tag: i64, interfaces: Vec<i64>, fields: Vec<Field>) -> ClassInfo {
        ClassInfo { tag, signature: signature.into(), super_tag, loader_tag: 0, interfaces, fields }
    }

    /// `Node extends Base implements Weighted`, `Weighted extends Marker`, each with fields.
    fn snapshot() -> Snapshot {
        let classes = vec![
            class(1, "Ljava/lang/Object;", 0, vec![], vec![]),
            class(2, "LMarker;", 0, vec![], vec![field("M", BasicType::Int, true)]),
            class(
                3,
                "LWeighted;",
                0,
                vec![2],
                vec![field("UNIT", BasicType::Int, true), field("KIND", BasicType::Object, true)],
            ),
            class(
                4,
                "LBase;",
                1,
                vec![],
                vec![field("baseId", BasicType::Int, false), field("COUNT", BasicType::Int, true)],
            ),
            class(
                5,
                "LNode;",
                4,
                vec![3],
                vec![
                    field("created", BasicType::Int, true),
                    field("id", BasicType::Int, false),
                    field("next", BasicType::Object, false),
                ],
            ),
        ];
        let class_index = classes.iter().enumerate().map(|(i, c)| (c.tag, i)).collect();
        Snapshot { classes, class_index, threads: Vec::new(), next_tag: 6 }
    }

    #[test]
    fn field_indices_put_all_superinterface_fields_first_then_classes_from_the_top() {
        let s = snapshot();
        // Node: Marker's and Weighted's 3 fields (any order), then Object (0), Base (2), Node (3).
        let layout = FieldLayout::of(&s, 4);
        assert_eq!(layout.chain, vec![(4, 5), (3, 3), (0, 3)]);
        assert_eq!(FieldLayout::indices(&s, 4, 5), vec![Some(5), Some(6), Some(7)]);
        assert_eq!(FieldLayout::indices(&s, 3, 3), vec![Some(3), Some(4)]);
        // Base alone implements nothing: its fields start at 0.
        assert_eq!(FieldLayout::of(&s, 3).chain, vec![(3, 0), (0, 0)]);
        // An interface's own statics come after its superinterfaces'.
        assert_eq!(FieldLayout::of(&s, 2).chain, vec![(2, 1)]);
    }

    #[test]
    fn filtered_fields_take_no_index() {
        let mut s = snapshot();
        s.classes[3].fields.insert(0, Field { filtered: true, ..field("hidden", BasicType::Object, false) });
        assert_eq!(FieldLayout::indices(&s, 3, 3), vec![None, Some(3), Some(4)]);
        assert!(is_filtered("Ljdk/internal/reflect/ConstantPool;", "constantPoolOop"));
        assert!(!is_filtered("Ljdk/internal/reflect/ConstantPool;", "other"));
    }

    #[test]
    fn objects_are_indexed_by_the_tags_handed_out() {
        let mut objects = Objects::default();
        assert!(objects.slot(0, 10).is_none());
        assert!(objects.slot(10, 10).is_none(), "a tag not handed out yet");
        objects.slot(7, 10).unwrap().seen = true;
        objects.slot(3, 10).unwrap().seen = true;
        assert!(objects.get(5).is_none(), "a slot never reached");
        assert_eq!(objects.iter().map(|(t, _)| t).collect::<Vec<_>>(), vec![3, 7]);
    }
}
