//! What an event is about, as request filters see it ([`Subject`], answered lazily from JVMTI),
//! and [`matches`]: an event offered to the request table. The vocabulary every event source shares
//! (the callbacks, method entry breakpoints, class unloads, steps); it calls JVMTI and JNI only to
//! answer a filter's question, on the thread of the event.

use std::cell::OnceCell;
use std::sync::Arc;

use jdwp_protocol::{EventKind, FieldId, Location, ObjectId, ReferenceTypeId, ThreadId};
use jni_sys::{jclass, jfieldID, jmethodID, jobject};

use crate::agent::{Agent, lock};
use crate::events::filter::{EventSubject, Request, Verdict};
use crate::events::requests::{Matches, Snapshot, match_event};
use crate::jni::Jni;
use crate::jvmti::sys::{jlocation, jthread};

/// How to find the event's class (the one class filters test).
enum ClassSource {
    None,
    Given(jclass),
    /// The declaring class of the event's method (the location's class).
    OfMethod,
    /// The class of an object (the monitor, for monitor waits).
    OfObject(jobject),
    /// Only a signature is left (class unloads).
    Signature(String),
}

/// How to find the event's instance (the one instance filters test).
enum InstanceSource {
    None,
    /// `this` of the current frame, if not static.
    Frame,
    /// A given object (the field's object for watchpoints); null for static fields.
    Object(jobject),
}

/// What filters may ask about one event, answered lazily from JVMTI and cached.
pub struct Subject<'a> {
    agent: &'a Agent,
    jni: Jni,
    pub(crate) thread: jthread,
    pub(crate) method: Option<jmethodID>,
    pub(crate) index: jlocation,
    class_source: ClassSource,
    class: OnceCell<Option<jclass>>,
    signature: OnceCell<Option<String>>,
    instance: InstanceSource,
    exception: Option<(jobject, bool)>,
    field: Option<(jclass, jfieldID)>,
    /// Whether the event's thread is virtual, when the event's source knows (else asked once).
    virtual_thread: OnceCell<bool>,
}

impl<'a> Subject<'a> {
    pub fn new(agent: &'a Agent, jni: Jni, thread: jthread) -> Subject<'a> {
        Subject {
            agent,
            jni,
            thread,
            method: None,
            index: -1,
            class_source: ClassSource::None,
            class: OnceCell::new(),
            signature: OnceCell::new(),
            instance: InstanceSource::None,
            exception: None,
            field: None,
            virtual_thread: OnceCell::new(),
        }
    }

    /// The event's source knows whether its thread is virtual (thread starts and ends, which JVMTI
    /// reports by a different event for each kind of thread).
    pub fn virtual_thread(self, is_virtual: bool) -> Self {
        let _ = self.virtual_thread.set(is_virtual);
        self
    }

    /// An event at code index `index` of `method` in `thread` (class: the declaring class;
    /// instance: `this` of the current frame).
    pub fn of_method(agent: &'a Agent, jni: Jni, thread: jthread, method: jmethodID, index: jlocation) -> Self {
        let mut s = Subject::new(agent, jni, thread);
        s.method = Some(method);
        s.index = index;
        s.class_source = ClassSource::OfMethod;
        s.instance = InstanceSource::Frame;
        s
    }

    /// An event about `class` (class prepare; what a method entry tracker asks of a class).
    pub fn of_class(agent: &'a Agent, jni: Jni, class: jclass) -> Self {
        let mut s = Subject::new(agent, jni, std::ptr::null_mut());
        s.class_source = ClassSource::Given(class);
        s
    }

    /// An event about a class known by its signature only.
    pub fn of_signature(agent: &'a Agent, jni: Jni, signature: &str) -> Self {
        let mut s = Subject::new(agent, jni, std::ptr::null_mut());
        s.class_source = ClassSource::Signature(signature.to_string());
        s
    }

    pub fn with_class_of(mut self, object: jobject) -> Self {
        self.class_source = ClassSource::OfObject(object);
        self
    }

    pub fn with_instance(mut self, object: jobject) -> Self {
        self.instance = InstanceSource::Object(object);
        self
    }

    pub fn with_exception(mut self, exception: jobject, caught: bool) -> Self {
        self.exception = Some((exception, caught));
        self
    }

    pub fn with_field(mut self, class: jclass, field: jfieldID) -> Self {
        self.field = Some((class, field));
        self
    }

    fn tag_of(&self, obj: jobject) -> Option<u64> {
        self.agent.jvmti.get_tag(obj).ok().map(|t| t as u64)
    }

    /// The event's class (a local reference this subject owns unless given).
    fn class(&self) -> Option<jclass> {
        *self.class.get_or_init(|| match &self.class_source {
            ClassSource::Given(c) => Some(*c),
            ClassSource::OfMethod => self.method.and_then(|m| self.agent.jvmti.get_method_declaring_class(m).ok()),
            ClassSource::OfObject(o) if !o.is_null() => self.jni.get_object_class(*o).ok(),
            _ => None,
        })
    }

    fn signature(&self) -> Option<&str> {
        self.signature
            .get_or_init(|| match &self.class_source {
                ClassSource::Signature(s) => Some(s.clone()),
                _ => self.class().and_then(|c| self.agent.jvmti.get_class_signature(c).ok()).map(|(s, _)| s),
            })
            .as_deref()
    }

    /// The event's instance: a local reference (to delete if `owned`), or null.
    fn instance(&self) -> (jobject, bool) {
        match self.instance {
            InstanceSource::None => (std::ptr::null_mut(), false),
            InstanceSource::Object(o) => (o, false),
            InstanceSource::Frame => {
                let (Some(method), false) = (self.method, self.thread.is_null()) else {
                    return (std::ptr::null_mut(), false);
                };
                let is_static = self
                    .agent
                    .jvmti
                    .get_method_modifiers(method)
                    .map_or(true, |m| m & jdwp_protocol::modifiers::STATIC != 0);
                if is_static {
                    return (std::ptr::null_mut(), false);
                }
                match self.agent.jvmti.get_local_instance(self.thread, 0) {
                    Ok(this) => (this, true),
                    // Native frames have no `this` to show.
                    Err(_) => (std::ptr::null_mut(), false),
                }
            }
        }
    }
}

impl Drop for Subject<'_> {
    fn drop(&mut self) {
        let owned = matches!(self.class_source, ClassSource::OfMethod | ClassSource::OfObject(_));
        if owned && let Some(Some(class)) = self.class.get() {
            self.jni.delete_local_ref(*class);
        }
    }
}

/// `Lpkg/Name;` → `pkg.Name`; arrays and primitives keep their signature form.
fn dotted(signature: &str) -> String {
    match signature.strip_prefix('L').and_then(|s| s.strip_suffix(';')) {
        Some(name) => name.replace('/', "."),
        None => signature.to_string(),
    }
}

/// The source names a `SourceDebugExtension` (SMAP, JSR-45) lists in its file sections.
pub fn smap_source_names(smap: &str) -> Vec<&str> {
    let mut names = Vec::new();
    let mut in_files = false;
    let mut lines = smap.lines().map(str::trim);
    while let Some(line) = lines.next() {
        if line.starts_with('*') {
            in_files = line == "*F";
            continue;
        }
        if !in_files {
            continue;
        }
        // "+ id name" is followed by a path line; "id name" stands alone.
        let (with_path, rest) = match line.strip_prefix('+') {
            Some(rest) => (true, rest.trim_start()),
            None => (false, line),
        };
        if let Some((_id, name)) = rest.split_once(char::is_whitespace) {
            names.push(name.trim());
        }
        if with_path {
            lines.next();
        }
    }
    names
}

impl EventSubject for Subject<'_> {
    fn in_thread(&self, thread: ThreadId) -> bool {
        // A platform thread's ID is its JVMTI tag: comparing tags needs neither a lock nor an
        // allocation (a virtual thread's takes a short lock: see `Agent::known_id`).
        !self.thread.is_null() && self.agent.known_id(self.thread) == Some(thread.0)
    }

    fn class_is_subtype_of(&self, class: ReferenceTypeId) -> bool {
        let Some(ours) = self.class() else { return false };
        match self.agent.object(self.jni, ObjectId(class.0)) {
            Ok(target) if !target.is_null() => {
                let result = self.jni.is_assignable_from(ours, target);
                self.jni.delete_local_ref(target);
                result
            }
            _ => false,
        }
    }

    fn class_name_matches(&self, pred: &dyn Fn(&str) -> bool) -> bool {
        self.signature().is_some_and(|s| pred(&dotted(s)))
    }

    fn at_location(&self, location: &Location) -> bool {
        self.method.is_some_and(|m| location.method_id.0 == m as u64) && location.index == self.index as u64
    }

    fn this_is(&self, instance: ObjectId) -> bool {
        let (this, owned) = self.instance();
        if this.is_null() {
            // Like the JDK's agent: an event without an instance passes.
            return true;
        }
        let same = !instance.is_null() && self.agent.known_id(this) == Some(instance.0);
        if owned {
            self.jni.delete_local_ref(this);
        }
        same
    }

    fn exception_matches(&self, class: ReferenceTypeId, caught: bool, uncaught: bool) -> bool {
        let Some((exception, is_caught)) = self.exception else { return false };
        if !(if is_caught { caught } else { uncaught }) {
            return false;
        }
        if class.is_null() {
            return true;
        }
        match self.agent.object(self.jni, ObjectId(class.0)) {
            Ok(target) if !target.is_null() => {
                let result = self.jni.is_instance_of(exception, target);
                self.jni.delete_local_ref(target);
                result
            }
            _ => false,
        }
    }

    fn field_is(&self, declaring: ReferenceTypeId, field: FieldId) -> bool {
        let Some((class, jfield)) = self.field else { return false };
        self.tag_of(class) == Some(declaring.0)
            && super::breakpoints::watched_field(self.agent, field) == Some(jfield as usize)
    }

    fn source_name_matches(&self, pred: &dyn Fn(&str) -> bool) -> bool {
        let Some(class) = self.class() else { return false };
        if let Ok(smap) = self.agent.jvmti.get_source_debug_extension(class)
            && smap_source_names(&smap).into_iter().any(pred)
        {
            return true;
        }
        self.agent.jvmti.get_source_file_name(class).is_ok_and(|s| pred(&s))
    }

    fn in_virtual_thread(&self) -> bool {
        !self.thread.is_null() && *self.virtual_thread.get_or_init(|| self.jni.is_virtual_thread(self.thread))
    }
}

// ---- matching and reporting ------------------------------------------------------------------------

/// Filters an event of `kind` and returns what it matched. Requests a count used up leave the
/// table at once; the event helper undoes their JVMTI state.
pub fn matches(agent: &Agent, kind: EventKind, subject: &dyn EventSubject) -> Option<Matches> {
    let snapshot = lock(&agent.requests).snapshot(kind)?;
    matches_in(agent, &snapshot, subject)
}

/// [`matches`] against requests the caller took from the table already.
pub fn matches_in(agent: &Agent, snapshot: &Snapshot, subject: &dyn EventSubject) -> Option<Matches> {
    let mut expired: Vec<Arc<Request>> = Vec::new();
    let found = match_event(snapshot, subject, &mut expired);
    if !expired.is_empty() {
        expire(agent, expired);
    }
    found
}

/// Offers an event to one request (a step's); true if it is to be reported.
pub fn offer_one(agent: &Agent, request: &Arc<Request>, subject: &dyn EventSubject) -> bool {
    let report = request.offer(subject) == Verdict::Report;
    if request.is_expired() {
        expire(agent, vec![request.clone()]);
    }
    report
}

fn expire(agent: &Agent, expired: Vec<Arc<Request>>) {
    {
        let mut table = lock(&agent.requests);
        for r in &expired {
            table.remove(r.kind, r.id);
        }
    }
    if let Some(helper) = agent.helper.get() {
        helper.cleanup(expired);
    }
}

#[cfg(test)]
mod tests {
    use super::{dotted, smap_source_names};

    #[test]
    fn signatures_read_as_dotted_names() {
        assert_eq!(dotted("Ljava/lang/String;"), "java.lang.String");
        assert_eq!(dotted("LEvents$Late;"), "Events$Late");
        assert_eq!(dotted("[I"), "[I");
    }

    #[test]
    fn smap_file_sections_name_the_sources() {
        let smap = "SMAP\nHello.java\nJSP\n*S JSP\n*F\n+ 0 Hello.jsp\npages/Hello.jsp\n1 Footer.jsp\n*L\n1#0:5\n*E\n";
        assert_eq!(smap_source_names(smap), ["Hello.jsp", "Footer.jsp"]);
        assert!(smap_source_names("SMAP\nA.java\nJava\n*E\n").is_empty());
    }
}
