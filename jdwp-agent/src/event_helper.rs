//! The event helper: an agent thread that turns matched events into composites, suspends what their
//! policy says, and sends them.
//!
//! Event callbacks run on application threads, which the debugger may suspend at any call into the
//! VM; they must not hold agent locks across such calls (see [`crate::agent`]). So a callback only
//! filters and collects global references, then hands the event here and waits until it is sent and
//! the suspension is requested. When the callback then returns into the VM, a suspended thread stops
//! there — after the debugger has been told, never before.

use std::sync::mpsc;

use jdwp_protocol::commands::event::{Composite, Event};
use jdwp_protocol::{ErrorCode, Location, SuspendPolicy, TypeTag, codec};
use jni_sys::jmethodID;

use crate::agent::{Agent, GlobalRef, ID_SIZES, JvmtiSuspend, lock};
use crate::jni::Jni;

/// An event as a callback captured it: global references, raw JVMTI values.
#[derive(Debug)]
pub enum RawEvent {
    VmStart { request_id: i32, thread: GlobalRef },
    VmDeath { request_id: i32 },
    ThreadStart { request_id: i32, thread: GlobalRef },
    ThreadDeath { request_id: i32, thread: GlobalRef },
    ClassPrepare { request_id: i32, thread: GlobalRef, class: GlobalRef },
    Breakpoint { request_id: i32, thread: GlobalRef, method: usize, index: i64 },
    SingleStep { request_id: i32, thread: GlobalRef, method: usize, index: i64 },
}

impl RawEvent {
    fn refs(&self) -> impl Iterator<Item = GlobalRef> {
        let (a, b) = match self {
            RawEvent::VmDeath { .. } => (None, None),
            RawEvent::VmStart { thread, .. }
            | RawEvent::ThreadStart { thread, .. }
            | RawEvent::ThreadDeath { thread, .. }
            | RawEvent::Breakpoint { thread, .. }
            | RawEvent::SingleStep { thread, .. } => (Some(*thread), None),
            RawEvent::ClassPrepare { thread, class, .. } => (Some(*thread), Some(*class)),
        };
        a.into_iter().chain(b)
    }
}

/// One composite to deliver.
pub struct Job {
    pub policy: SuspendPolicy,
    /// The event thread (suspended by `SuspendPolicy::EventThread`).
    pub thread: Option<GlobalRef>,
    pub events: Vec<RawEvent>,
    /// Signalled once the composite is sent and the suspension requested.
    pub done: Option<mpsc::SyncSender<()>>,
}

/// The handle callbacks use to reach the helper thread.
pub struct EventHelper {
    tx: std::sync::Mutex<mpsc::Sender<Job>>,
}

impl EventHelper {
    pub fn new() -> (EventHelper, mpsc::Receiver<Job>) {
        let (tx, rx) = mpsc::channel();
        (EventHelper { tx: std::sync::Mutex::new(tx) }, rx)
    }

    /// Hands a job over and waits until it is delivered (or dropped because nobody listens).
    pub fn deliver(&self, mut job: Job) {
        let (done_tx, done_rx) = mpsc::sync_channel(1);
        job.done = Some(done_tx);
        if lock(&self.tx).send(job).is_ok() {
            // The helper always answers, even when it drops the job; an error means it is gone.
            let _ = done_rx.recv();
        }
    }
}

/// The helper thread's loop (runs until the VM dies).
pub fn run(agent: &Agent, jni: Jni, jobs: mpsc::Receiver<Job>) {
    for job in jobs {
        let frame = jni.push_local_frame(64);
        if let Err(e) = deliver(agent, jni, &job) {
            tracing::debug!(?e, "event not delivered");
        }
        drop(frame);
        for event in &job.events {
            for r in event.refs() {
                jni.delete_global_ref(r.0);
            }
        }
        if let Some(t) = job.thread {
            jni.delete_global_ref(t.0);
        }
        if let Some(done) = job.done {
            let _ = done.send(());
        }
    }
}

fn deliver(agent: &Agent, jni: Jni, job: &Job) -> Result<(), ErrorCode> {
    let Some(session) = agent.session() else { return Ok(()) };
    let mut events = Vec::with_capacity(job.events.len());
    for raw in &job.events {
        events.push(convert(agent, jni, raw)?);
    }
    let body = codec::encode_body(&Composite { suspend_policy: job.policy, events }, ID_SIZES);
    let _order = session.order();
    let ops = JvmtiSuspend { agent, jni };
    match job.policy {
        SuspendPolicy::All => lock(&agent.threads).suspend_all(&ops)?,
        SuspendPolicy::EventThread => {
            if let Some(t) = job.thread {
                let id = agent.thread_id(jni, t.0)?;
                lock(&agent.threads).suspend_thread(&ops, id)?;
            }
        }
        SuspendPolicy::None => {}
    }
    session.send_event(body).map_err(|_| ErrorCode::VM_DEAD)
}

/// The location of code index `index` in `method`.
pub fn location(agent: &Agent, jni: Jni, method: jmethodID, index: i64) -> Result<Location, ErrorCode> {
    let class = agent.jvmti.get_method_declaring_class(method)?;
    let type_tag = if agent.jvmti.is_interface(class)? { TypeTag::Interface } else { TypeTag::Class };
    let class_id = agent.class_id(jni, class)?;
    jni.delete_local_ref(class);
    Ok(Location { type_tag, class_id: class_id.into(), method_id: agent.method_id(method), index: index as u64 })
}

fn convert(agent: &Agent, jni: Jni, raw: &RawEvent) -> Result<Event, ErrorCode> {
    let thread = |t: &GlobalRef| agent.thread_id(jni, t.0);
    Ok(match raw {
        RawEvent::VmStart { request_id, thread: t } => Event::VmStart { request_id: *request_id, thread: thread(t)? },
        RawEvent::VmDeath { request_id } => Event::VmDeath { request_id: *request_id },
        RawEvent::ThreadStart { request_id, thread: t } => {
            Event::ThreadStart { request_id: *request_id, thread: thread(t)? }
        }
        RawEvent::ThreadDeath { request_id, thread: t } => {
            Event::ThreadDeath { request_id: *request_id, thread: thread(t)? }
        }
        RawEvent::ClassPrepare { request_id, thread: t, class } => {
            let (signature, _) = agent.jvmti.get_class_signature(class.0)?;
            let status = agent.jvmti.get_class_status(class.0)?;
            let ref_type_tag = crate::commands::type_tag(agent, class.0)?;
            Event::ClassPrepare {
                request_id: *request_id,
                thread: thread(t)?,
                ref_type_tag,
                type_id: agent.class_id(jni, class.0)?,
                signature,
                status: crate::commands::jdwp_class_status(status),
            }
        }
        RawEvent::Breakpoint { request_id, thread: t, method, index } => Event::Breakpoint {
            request_id: *request_id,
            thread: thread(t)?,
            location: location(agent, jni, *method as jmethodID, *index)?,
        },
        RawEvent::SingleStep { request_id, thread: t, method, index } => Event::SingleStep {
            request_id: *request_id,
            thread: thread(t)?,
            location: location(agent, jni, *method as jmethodID, *index)?,
        },
    })
}
