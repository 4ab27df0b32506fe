//! Filling the pool with live IDs of every kind through ordinary commands: threads and groups,
//! classes, interfaces and array types (the fixture's and a fixed share of the JDK's), their
//! fields and methods, loaders, class objects, modules, the fixture's static values (strings,
//! arrays, plain objects), created strings, and the frames of the fixture's `fuzz-frames` thread,
//! which stays suspended for them: stopped by a one-shot breakpoint in `FuzzTarget.tick`, so that
//! it is suspended by an event and method invocations can run on it (`ThreadReference.Suspend` if
//! the breakpoint does not come). Each category is sorted by something stable (name, signature,
//! depth; the fixture's and the listed types first), so slots mean the same in every session.

use std::time::Duration;

use jdwp_protocol::commands::event_request::{self as er, Modifier};
use jdwp_protocol::commands::{
    object_reference as or, reference_type as rt, thread_group_reference as tg, thread_reference as tr,
    virtual_machine as vm,
};
use jdwp_protocol::{
    ClassId, EventKind, FieldId, Location, MethodId, ObjectId, ReferenceTypeId, SuspendPolicy, Tag, ThreadGroupId,
    ThreadId, TypeTag, Value,
};
use jdwp_transports::PacketKind;

use crate::conn::{Conn, ConnError};
use crate::pool::{Cat, Entry, Pool};
use test_rig::wire::ReplyError;

/// Types whose members always go into the pool (besides the fixture's).
const JDK_TYPES: &[&str] = &[
    "Ljava/lang/Object;",
    "Ljava/lang/String;",
    "Ljava/lang/Thread;",
    "Ljava/lang/Class;",
    "Ljava/lang/Runnable;",
    "Ljava/lang/Comparable;",
    "Ljava/util/ArrayList;",
    "Ljava/lang/Integer;",
    "[I",
    "[Ljava/lang/Object;",
];

/// One in this many further JDK types, chosen by a hash of the signature (so a class that loads in
/// one run and not in another moves no other class's slot, as an even spread would).
const SPREAD: u64 = 16;

fn fnv(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

/// The fixture's types and the listed JDK types: always in the pool, first, in stable slots.
fn always(signature: &str) -> bool {
    signature.contains("FuzzTarget") || JDK_TYPES.contains(&signature)
}

pub fn harvest(conn: &mut Conn, timeout: Duration) -> Result<Pool, ConnError> {
    let mut pool = Pool::new(conn.sizes);

    // Threads, by name.
    let threads = conn.request(&vm::AllThreads {}, timeout)?.threads;
    let mut named = Vec::new();
    for t in threads {
        if let Ok(n) = conn.request(&tr::Name { thread: t }, timeout) {
            named.push((n.thread_name, t.0));
        }
    }
    named.sort();
    pool.set(Cat::Thread, named.iter().map(|(_, id)| Entry { id: *id, owner: 0 }).collect());

    // Thread groups, top level and their children, by name.
    let mut groups: Vec<(String, u64)> = Vec::new();
    let mut todo: Vec<ThreadGroupId> = conn.request(&vm::TopLevelThreadGroups {}, timeout)?.groups;
    while let Some(g) = todo.pop() {
        if groups.iter().any(|(_, id)| *id == g.0) || groups.len() > 32 {
            continue;
        }
        let name = conn.request(&tg::Name { group: g }, timeout).map(|r| r.group_name).unwrap_or_default();
        groups.push((name, g.0));
        if let Ok(c) = conn.request(&tg::Children { group: g }, timeout) {
            todo.extend(c.child_groups);
        }
    }
    groups.sort();
    pool.set(Cat::ThreadGroup, groups.iter().map(|(_, id)| Entry { id: *id, owner: 0 }).collect());

    // Types: the fixture's, a fixed list, and an even spread of the rest, by signature.
    let mut classes = conn.request(&vm::AllClasses {}, timeout)?.classes;
    classes.sort_by(|a, b| a.signature.cmp(&b.signature));
    let mut chosen: Vec<_> =
        classes.into_iter().filter(|c| always(&c.signature) || fnv(&c.signature).is_multiple_of(SPREAD)).collect();
    chosen.sort_by(|a, b| (!always(&a.signature), &a.signature).cmp(&(!always(&b.signature), &b.signature)));
    for c in &chosen {
        let cat = match c.ref_type_tag {
            TypeTag::Class => Cat::Class,
            TypeTag::Interface => Cat::Interface,
            TypeTag::Array => Cat::ArrayType,
        };
        pool.push(cat, c.type_id.0, 0);
    }

    // Members, loaders, class objects and modules of the fixture's types and the fixed list.
    let mut fixture_class = None;
    let mut statics = Vec::new();
    for c in chosen.iter().filter(|c| always(&c.signature)) {
        let ty: ReferenceTypeId = c.type_id;
        if c.signature == "LFuzzTarget;" {
            fixture_class = Some(ty);
        }
        if let Ok(r) = conn.request(&rt::Fields { ref_type: ty }, timeout) {
            let mut fields = r.declared;
            fields.sort_by(|a, b| (&a.name, &a.signature).cmp(&(&b.name, &b.signature)));
            for f in fields.iter().take(40) {
                pool.push(Cat::Field, f.field_id.0, ty.0);
                if c.signature == "LFuzzTarget;" && f.mod_bits & 0x8 != 0 {
                    statics.push((f.name.clone(), f.field_id));
                }
            }
        }
        if let Ok(r) = conn.request(&rt::Methods { ref_type: ty }, timeout) {
            let mut methods = r.declared;
            methods.sort_by(|a, b| (&a.name, &a.signature).cmp(&(&b.name, &b.signature)));
            for m in methods.iter().take(40) {
                pool.push(Cat::Method, m.method_id.0, ty.0);
            }
            if c.signature == "LFuzzTarget;"
                && let Some(tick) = methods.iter().find(|m| m.name == "tick")
            {
                pool.tick = Some((ty.0, tick.method_id.0));
            }
        }
        if let Ok(r) = conn.request(&rt::ClassLoader { ref_type: ty }, timeout)
            && r.class_loader.0 != 0
        {
            pool.push(Cat::ClassLoader, r.class_loader.0, 0);
        }
        if let Ok(r) = conn.request(&rt::ClassObject { ref_type: ty }, timeout) {
            pool.push(Cat::ClassObject, r.class_object.0, 0);
        }
        if let Ok(r) = conn.request(&rt::Module { ref_type: ty }, timeout) {
            pool.push(Cat::Module, r.module.0, 0);
        }
    }

    // The fixture's static values, by field name.
    if let Some(ty) = fixture_class {
        statics.sort();
        let fields: Vec<FieldId> = statics.iter().map(|(_, f)| *f).collect();
        if let Ok(r) = conn.request(&rt::GetValues { ref_type: ty, fields }, timeout) {
            for v in r.values {
                if let Value::Object(tag, id) = v
                    && id.0 != 0
                {
                    let cat = match tag {
                        Tag::String => Cat::String,
                        Tag::Array => Cat::Array,
                        Tag::Thread => Cat::Thread,
                        Tag::ThreadGroup => Cat::ThreadGroup,
                        Tag::ClassLoader => Cat::ClassLoader,
                        Tag::ClassObject => Cat::ClassObject,
                        _ => Cat::Object,
                    };
                    pool.push(cat, id.0, 0);
                }
            }
        }
    }
    for s in ["", "fuzz", "\u{0}\u{10000}"] {
        if let Ok(r) = conn.request(&vm::CreateString { utf: s.into() }, timeout) {
            pool.push(Cat::String, r.string_object.0, 0);
        }
    }
    // Keep the pool's objects from being collected (a stale ID is still tried: by mutation).
    for cat in [Cat::String, Cat::Array, Cat::Object, Cat::ClassLoader, Cat::ClassObject, Cat::ThreadGroup] {
        for e in pool.get(cat).to_vec() {
            let _ = conn.request(&or::DisableCollection { object: ObjectId(e.id) }, timeout);
        }
    }

    // Frames of `fuzz-frames`, suspended for them.
    if let Some((_, t)) = named.iter().find(|(n, _)| n == "fuzz-frames") {
        pool.frame_thread = Some(*t);
        refresh_frames(conn, &mut pool, timeout)?;
    }
    Ok(pool)
}

/// Makes sure the frame thread is suspended and its frames are in the pool (after something
/// resumed it, the old frame IDs are stale).
pub fn refresh_frames(conn: &mut Conn, pool: &mut Pool, timeout: Duration) -> Result<(), ConnError> {
    let Some(t) = pool.frame_thread else { return Ok(()) };
    let thread = ThreadId(t);
    let count = match conn.request(&tr::SuspendCount { thread }, timeout) {
        Ok(r) => r.suspend_count,
        Err(ConnError::Reply(ReplyError::Jdwp { .. })) => {
            pool.set(Cat::Frame, Vec::new());
            return Ok(());
        }
        Err(e) => return Err(e),
    };
    if count > 0 && !pool.get(Cat::Frame).is_empty() {
        return Ok(());
    }
    if count == 0 && !stop_at_tick(conn, pool, thread, timeout)? {
        // The thread no longer passes tick() (stopped, popped, blocked in an invocation): suspend
        // it plainly, and do not wait for the breakpoint again in this session.
        pool.tick = None;
        conn.request(&tr::Suspend { thread }, timeout).map(drop).or_else(ignore_jdwp)?;
    }
    let frames = match conn.request(&tr::Frames { thread, start_frame: 0, length: -1 }, timeout) {
        Ok(r) => r.frames,
        Err(ConnError::Reply(ReplyError::Jdwp { .. })) => Vec::new(),
        Err(e) => return Err(e),
    };
    pool.set(Cat::Frame, frames.iter().map(|f| Entry { id: f.frame_id.0, owner: t }).collect());
    Ok(())
}

fn ignore_jdwp(e: ConnError) -> Result<(), ConnError> {
    match e {
        ConnError::Reply(ReplyError::Jdwp { .. }) => Ok(()),
        e => Err(e),
    }
}

/// Stops `thread` at a one-shot breakpoint in `FuzzTarget.tick` (suspending only it); false if the
/// breakpoint cannot be set or does not come within a second (then the request is cleared).
fn stop_at_tick(conn: &mut Conn, pool: &Pool, thread: ThreadId, timeout: Duration) -> Result<bool, ConnError> {
    let Some((class, method)) = pool.tick else { return Ok(false) };
    let loc = Location { type_tag: TypeTag::Class, class_id: ClassId(class), method_id: MethodId(method), index: 0 };
    let set = er::Set {
        event_kind: EventKind::Breakpoint,
        suspend_policy: SuspendPolicy::EventThread,
        modifiers: vec![Modifier::Count { count: 1 }, Modifier::ThreadOnly { thread }, Modifier::LocationOnly { loc }],
    };
    let request_id = match conn.request(&set, timeout) {
        Ok(r) => r.request_id,
        Err(ConnError::Reply(ReplyError::Jdwp { .. })) => return Ok(false),
        Err(e) => return Err(e),
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(1);
    while std::time::Instant::now() < deadline {
        let hit = conn.events.iter().position(|p| {
            matches!(p.kind, PacketKind::Command { set: 64, cmd: 100 }) && p.body.len() >= 10 && {
                let at = 6; // policy(1) count(4) kind(1), then the request ID
                i32::from_be_bytes(p.body[at..at + 4].try_into().expect("4 bytes")) == request_id
            }
        });
        if let Some(i) = hit {
            conn.events.remove(i);
            return Ok(true);
        }
        // Any command makes the connection read what arrived meanwhile.
        conn.request(&vm::Version {}, timeout)?;
        std::thread::sleep(Duration::from_millis(10));
    }
    let _ = conn.request(&er::Clear { event_kind: EventKind::Breakpoint, request_id }, timeout);
    Ok(false)
}
