//! The agent as the session's [`Backend`]: commands go through the dispatch table inside a JNI
//! local frame; a debugger leaving undoes everything it set up.

use std::sync::Arc;

use jdwp_protocol::commands::virtual_machine as vm;
use jdwp_protocol::{Command, ErrorCode};

use crate::agent::{Agent, JvmtiSuspend, lock};
use crate::session::{Backend, Session};

pub struct AgentBackend {
    pub agent: &'static Agent,
}

/// With `JDWP_AGENT_TRACE_COMMANDS=<file>` in the debuggee's environment, the name of every command
/// handled is appended to that file: how spec-notes' coverage table learns which commands the test
/// suites really exercise against this agent.
fn trace_command(agent: &Agent, name: &'static str) {
    use std::io::Write;
    let trace = agent.memo.trace.get_or_init(|| {
        let path = std::env::var_os("JDWP_AGENT_TRACE_COMMANDS")?;
        std::fs::OpenOptions::new().create(true).append(true).open(path).ok().map(std::sync::Mutex::new)
    });
    if let Some(file) = trace {
        let _ = writeln!(lock(file), "{name}");
    }
}

impl Backend for AgentBackend {
    fn handle_command(&self, set: u8, cmd: u8, body: &[u8], _session: &Session) -> Result<Vec<u8>, ErrorCode> {
        let agent = self.agent;
        let Some(entry) = crate::commands::lookup(set, cmd) else {
            return Err(ErrorCode::NOT_IMPLEMENTED);
        };
        trace_command(agent, entry.name);
        let jni = agent.jni()?;
        // Every local reference a handler makes dies with this frame.
        let frame = jni.push_local_frame(64)?;
        let result = (entry.handler)(agent, body);
        drop(frame);
        result
    }

    fn attached(&self, session: &Arc<Session>) {
        tracing::info!("debugger attached");
        // Composites still queued for an earlier debugger are not this one's.
        self.agent.gate.session_changed();
        self.agent.set_session(Some(session.clone()));
        if let Ok(jni) = self.agent.jni() {
            crate::app_resume::session_started(self.agent, jni);
        }
    }

    fn detached(&self, session: &Session) {
        tracing::info!("debugger detached");
        let agent = self.agent;
        {
            // Under the event order lock: an event being delivered either suspended its threads
            // before this point (the reset below resumes them) or sees no session and suspends
            // nothing.
            let _order = session.order();
            agent.set_session(None);
            // What is still queued for this debugger is dropped (references freed), not sent to
            // the next one.
            agent.gate.session_changed();
        }
        // Events held by the debugger that left are not held for the next one, nor are those
        // after its last suspend-all composite.
        agent.gate.ended();
        let Ok(jni) = agent.jni() else { return };
        let Ok(frame) = jni.push_local_frame(64) else { return };
        let requests = lock(&agent.requests).clear();
        crate::commands::event_request::forget_requests(agent, jni, &requests);
        crate::app_resume::session_ended(agent);
        crate::step_switch::threads_resuming(agent);
        // Also wakes any thread waiting in `Thread.resume` for a thread this debugger suspended.
        agent.threads.lock().reset(&JvmtiSuspend { agent, jni });
        agent.unpin_all(jni);
        crate::profiling::session_ended(agent, jni);
        drop(frame);
    }

    fn after_reply(&self, set: u8, cmd: u8) {
        if (set, cmd) == (vm::SET, <vm::Exit as Command>::CMD)
            && let Some(code) = self.agent.pending_exit.take()
        {
            std::process::exit(code);
        }
    }
}
