//! Heap walks for `VirtualMachine.InstanceCounts`, `ReferenceType.Instances` and
//! `ObjectReference.ReferringObjects`.
//!
//! All three count only objects reachable for the purposes of garbage collection, as the JDWP
//! spec says and the JDK's agent answers: each walk follows references from the heap roots
//! (`FollowReferences`), so an object the program has dropped is not counted even before the
//! collector reclaims it. (A walk from the roots also makes HotSpot first re-materialize objects
//! that escape analysis replaced by scalars in compiled frames, which a plain heap iteration would
//! miss.) Such a walk reports every reference, so an object reached twice is reported twice: each
//! walk marks what it has counted.
//!
//! Walks mark objects with JVMTI tags, but the agent's own environment uses tags as object IDs; so
//! each walk runs in a JVMTI environment of its own, whose tags all vanish when it is disposed of at
//! the end.
//!
//! What the debugger's counts cost is bounded: the classes of `InstanceCounts` are looked up and
//! tagged one at a time, each walk is one pass over the live heap whatever the count, and found
//! objects come back from the walk's environment in batches of [`BATCH`](crate::heap_walk::BATCH)
//! (one tag per batch), each batch's local references deleted before the next is fetched. The
//! walk environment itself is [`crate::heap_walk`]'s.
//!
//! The callbacks run inside the VM's heap walk (on a VM thread, at a safepoint), where JNI and most
//! of JVMTI are forbidden: they only read and write tags and the walk's own counters.

use std::ffi::c_void;

use jdwp_protocol::ErrorCode;
use jni_sys::{jclass, jobject};

use crate::agent::Agent;
use crate::heap_walk::{WalkEnv, batch_tag, guarded};
use crate::jni::Jni;
use crate::jvmti::sys::{self, jint, jlong, jvmtiHeapReferenceInfo, jvmtiHeapReferenceKind};

// ---- instance counts --------------------------------------------------------------------------

/// `VirtualMachine.InstanceCounts`: the reachable instances of exactly each class (not of its
/// subclasses). Classes are added one at a time ([`InstanceCounts::add`]), so the caller needs only
/// one local reference at a time, whatever the number of classes asked for.
///
/// Tags in the walk environment: a class asked for carries `slot + 1`. An object counted carries a
/// negative tag: a class object asked for flips its own tag to `-(slot + 1)`, any other object gets
/// [`Counter::mark`], whose absolute value names no slot. Read through its absolute value, an
/// object's class tag thus still names its slot after its class object was counted itself.
pub struct InstanceCounts {
    env: WalkEnv,
    /// For each class asked for, in order: its slot (a class asked for twice shares one), or
    /// `None` for an ID that is no class now (it has no instances).
    asked: Vec<Option<usize>>,
    slots: usize,
}

impl InstanceCounts {
    pub fn new(agent: &Agent) -> Result<InstanceCounts, ErrorCode> {
        Ok(InstanceCounts { env: WalkEnv::new(agent)?, asked: Vec::new(), slots: 0 })
    }

    /// The next class asked for (`None`: not a class, answered 0). The caller may delete its
    /// reference afterwards: the tag stays on the class.
    pub fn add(&mut self, class: Option<jclass>) -> Result<(), ErrorCode> {
        let Some(class) = class else {
            self.asked.push(None);
            return Ok(());
        };
        let slot = match self.env.0.get_tag(class)? {
            0 => {
                let slot = self.slots;
                self.env.0.set_tag(class, slot as jlong + 1)?;
                self.slots += 1;
                slot
            }
            tag => usize::try_from(tag - 1).map_err(|_| ErrorCode::INTERNAL)?,
        };
        self.asked.push(Some(slot));
        Ok(())
    }

    /// Walks the reachable heap once and answers a count for each class asked for, in order.
    pub fn count(self) -> Result<Vec<i64>, ErrorCode> {
        let mut counter = Counter { counts: vec![0; self.slots], mark: -(self.slots as jlong + 1) };
        if self.slots > 0 {
            // Only objects whose class carries a tag (a class asked for, or a counted class
            // object: see above) are reported.
            self.env.follow(
                sys::JVMTI_HEAP_FILTER_CLASS_UNTAGGED,
                std::ptr::null_mut(),
                Some(count_reached),
                &mut counter,
            )?;
        }
        Ok(self.asked.iter().map(|slot| slot.and_then(|s| counter.counts.get(s).copied()).unwrap_or(0)).collect())
    }
}

/// The walk's state while counting instances.
struct Counter {
    counts: Vec<i64>,
    /// The tag of a counted object that is not a class asked for.
    mark: jlong,
}

impl Counter {
    /// Counts an object reached with tag `*tag`, whose class has tag `class_tag`, unless it was
    /// counted already; marks it counted.
    fn reached(&mut self, class_tag: jlong, tag: &mut jlong) {
        if *tag < 0 {
            return;
        }
        let slot = usize::try_from(class_tag.unsigned_abs()).ok().and_then(|t| t.checked_sub(1));
        if let Some(count) = slot.and_then(|s| self.counts.get_mut(s)) {
            *count += 1;
        }
        *tag = if *tag > 0 { -*tag } else { self.mark };
    }
}

unsafe extern "system" fn count_reached(
    _kind: jvmtiHeapReferenceKind,
    _info: *const jvmtiHeapReferenceInfo,
    class_tag: jlong,
    _referrer_class_tag: jlong,
    _size: jlong,
    tag_ptr: *mut jlong,
    _referrer_tag_ptr: *mut jlong,
    _length: jint,
    user_data: *mut c_void,
) -> jint {
    guarded(|| {
        // SAFETY: the VM passes the referree's tag, and our `Counter` is the user data, both valid
        // for this call (`WalkEnv::follow`).
        let (tag, counter) = unsafe { (&mut *tag_ptr, &mut *user_data.cast::<Counter>()) };
        counter.reached(class_tag, tag);
        sys::JVMTI_VISIT_OBJECTS
    })
}

// ---- instances --------------------------------------------------------------------------------

/// What a walk found so far, and where it stops.
struct Limit {
    max: usize,
    found: usize,
    self_reference: bool,
}

impl Limit {
    fn new(max: i32) -> Limit {
        Limit { max: usize::try_from(max).unwrap_or(0), found: 0, self_reference: false }
    }

    /// Counts one more; whether the walk should stop.
    fn one_more(&mut self) -> bool {
        self.found += 1;
        self.full()
    }

    /// Whether `max` were found. A callback asked to go on after it said stop (HotSpot does not
    /// stop a `FollowReferences` walk at every `JVMTI_VISIT_ABORT`) must tag nothing more.
    fn full(&self) -> bool {
        self.max != 0 && self.found >= self.max
    }
}

/// The tags of found instances start here (0 is "not found").
const FIRST_INSTANCE_TAG: jlong = 1;

/// Up to `max` (0: all) reachable instances of exactly `class`, each handed to `each` as a local
/// reference that is deleted when `each` returns.
pub fn instances(
    agent: &Agent,
    jni: Jni,
    class: jclass,
    max: i32,
    each: impl FnMut(jobject) -> Result<(), ErrorCode>,
) -> Result<(), ErrorCode> {
    let env = WalkEnv::new(agent)?;
    let mut limit = Limit::new(max);
    env.follow(0, class, Some(tag_reached_instance), &mut limit)?;
    env.each_found(jni, FIRST_INSTANCE_TAG, limit.found, each)
}

unsafe extern "system" fn tag_reached_instance(
    _kind: jvmtiHeapReferenceKind,
    _info: *const jvmtiHeapReferenceInfo,
    _class_tag: jlong,
    _referrer_class_tag: jlong,
    _size: jlong,
    tag_ptr: *mut jlong,
    _referrer_tag_ptr: *mut jlong,
    _length: jint,
    user_data: *mut c_void,
) -> jint {
    guarded(|| {
        // SAFETY: the VM passes the referree's tag (an instance of the class: the walk filters by
        // it), and our `Limit` is the user data, both valid for this call (`WalkEnv::follow`).
        let (tag, limit) = unsafe { (&mut *tag_ptr, &mut *user_data.cast::<Limit>()) };
        if limit.full() {
            return sys::JVMTI_VISIT_ABORT;
        }
        // Reached again through another reference: counted already.
        if *tag != 0 {
            return sys::JVMTI_VISIT_OBJECTS;
        }
        *tag = batch_tag(FIRST_INSTANCE_TAG, limit.found);
        if limit.one_more() { sys::JVMTI_VISIT_ABORT } else { sys::JVMTI_VISIT_OBJECTS }
    })
}

// ---- referrers --------------------------------------------------------------------------------

const TARGET: jlong = 1;
/// The tags of found referrers (the target itself aside) start here.
const FIRST_REFERRER_TAG: jlong = 2;

/// Up to `max` (0: all) live objects holding a reference to `target` (itself included if it
/// refers to itself), each handed to `each` as a local reference that is deleted when `each`
/// returns.
pub fn referrers(
    agent: &Agent,
    jni: Jni,
    target: jobject,
    max: i32,
    mut each: impl FnMut(jobject) -> Result<(), ErrorCode>,
) -> Result<(), ErrorCode> {
    let env = WalkEnv::new(agent)?;
    env.0.set_tag(target, TARGET)?;
    let mut limit = Limit::new(max);
    // Only references to tagged objects (the target, and the referrers found so far) are reported.
    env.follow(sys::JVMTI_HEAP_FILTER_UNTAGGED, std::ptr::null_mut(), Some(tag_referrer), &mut limit)?;
    let others = limit.found - usize::from(limit.self_reference);
    env.each_found(jni, FIRST_REFERRER_TAG, others, &mut each)?;
    if limit.self_reference {
        let me = jni.new_local_ref(target);
        let result = each(me);
        jni.delete_local_ref(me);
        result?;
    }
    Ok(())
}

unsafe extern "system" fn tag_referrer(
    _kind: jvmtiHeapReferenceKind,
    _info: *const jvmtiHeapReferenceInfo,
    _class_tag: jlong,
    _referrer_class_tag: jlong,
    _size: jlong,
    tag_ptr: *mut jlong,
    referrer_tag_ptr: *mut jlong,
    _length: jint,
    user_data: *mut c_void,
) -> jint {
    guarded(|| {
        // Roots have no referrer object.
        if referrer_tag_ptr.is_null() {
            return sys::JVMTI_VISIT_OBJECTS;
        }
        // SAFETY: the VM passes the referree's tag, and our `Limit` is the user data, both valid
        // for this call (`WalkEnv::follow`); the referrer's tag is valid too (it is the referree's
        // own when an object refers to itself).
        let (tag, limit) = unsafe { (*tag_ptr, &mut *user_data.cast::<Limit>()) };
        if limit.full() {
            return sys::JVMTI_VISIT_ABORT;
        }
        if tag != TARGET {
            return sys::JVMTI_VISIT_OBJECTS;
        }
        let stop = if referrer_tag_ptr == tag_ptr {
            !limit.self_reference && {
                limit.self_reference = true;
                limit.one_more()
            }
        } else {
            // SAFETY: see above.
            let referrer_tag = unsafe { &mut *referrer_tag_ptr };
            *referrer_tag == 0 && {
                // Numbered among the referrers other than the target itself.
                let n = limit.found - usize::from(limit.self_reference);
                *referrer_tag = batch_tag(FIRST_REFERRER_TAG, n);
                limit.one_more()
            }
        };
        if stop { sys::JVMTI_VISIT_ABORT } else { sys::JVMTI_VISIT_OBJECTS }
    })
}

#[cfg(test)]
mod tests {
    use super::{Counter, Limit};
    use crate::heap_walk::{BATCH, batch_tag};

    #[test]
    fn a_full_limit_stays_full() {
        let mut limit = Limit::new(1);
        assert!(!limit.full());
        assert!(limit.one_more());
        assert!(limit.full(), "a callback called again after the stop must not tag more");
        assert!(!Limit::new(0).full());
    }

    #[test]
    fn limits_stop_at_max_unless_zero() {
        let mut all = Limit::new(0);
        assert!((0..1000).all(|_| !all.one_more()));
        let mut two = Limit::new(2);
        assert!(!two.one_more());
        assert!(two.one_more());
        assert_eq!(Limit::new(-5).max, 0);
    }

    #[test]
    fn found_objects_come_back_in_batches() {
        assert_eq!(batch_tag(1, 0), 1);
        assert_eq!(batch_tag(1, BATCH - 1), 1);
        assert_eq!(batch_tag(1, BATCH), 2);
        assert_eq!(batch_tag(2, 3 * BATCH + 5), 5);
    }

    /// Two classes asked for (slots 0 and 1); `java.lang.Class` is slot 1, so class objects count.
    #[test]
    fn an_object_reached_twice_counts_once() {
        let mut c = Counter { counts: vec![0, 0], mark: -3 };
        let mut object = 0;
        c.reached(1, &mut object);
        c.reached(1, &mut object);
        assert_eq!((c.counts.as_slice(), object), (&[1, 0][..], -3));
    }

    #[test]
    fn a_class_asked_for_counts_as_an_object_and_keeps_naming_its_slot() {
        let mut c = Counter { counts: vec![0, 0], mark: -3 };
        // Slot 0's class object (tag 1), an instance of java.lang.Class (slot 1, tag 2).
        let mut class0 = 1;
        c.reached(2, &mut class0);
        assert_eq!(class0, -1);
        c.reached(2, &mut class0);
        // Its instances now see their class tag as -1: still slot 0.
        let (mut a, mut b) = (0, 0);
        c.reached(-1, &mut a);
        c.reached(-1, &mut b);
        c.reached(-1, &mut a);
        assert_eq!(c.counts, [2, 1]);
        // An object whose class is another counted class object (tag `mark`) counts nowhere.
        let mut other = 0;
        c.reached(-3, &mut other);
        assert_eq!((c.counts.as_slice(), other), (&[2, 1][..], -3));
    }
}
