//! The debugger session: accept (or attach to) a debugger, read its commands, hand each to the
//! back end, write the replies, and clean up when it leaves.
//!
//! This module knows packets and connections, not JVMTI: the rest of the agent is a [`Backend`].
//! That keeps the loop testable with a fake back end over a real socket, and keeps the rules of a
//! session in one place:
//!
//! * replies are written in the order commands complete, events whenever they occur, never
//!   interleaved (the transport writes whole packets under a lock);
//! * a reply to a command that resumes threads is written before any event those threads cause
//!   (the spec promises that order): such commands run under [`Session::order`], which event
//!   delivery also takes;
//! * a malformed frame ends the connection (framing can no longer be trusted); a malformed body gets
//!   an error reply and the session goes on;
//! * `VirtualMachine.Dispose` or a dropped connection ends the session: the back end is told, so it
//!   clears requests and resumes what the debugger suspended, and with `server=y` the next debugger
//!   can attach.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use jdwp_protocol::commands::{event, thread_reference as tr, virtual_machine as vm};
use jdwp_protocol::{Command, ErrorCode};
use jdwp_transports::{Packet, PacketKind, TransportError};

use crate::transport::{Connection, Listener, Writer};

/// What the session needs from the rest of the agent.
pub trait Backend: Send + Sync {
    /// Handles one command and returns the reply body, or the JDWP error to reply with.
    fn handle_command(&self, set: u8, cmd: u8, body: &[u8], session: &Session) -> Result<Vec<u8>, ErrorCode>;
    /// A debugger attached; events may be sent through `session` from now on.
    fn attached(&self, session: &Arc<Session>);
    /// The debugger left (disposed, or its connection dropped).
    fn detached(&self, session: &Session);
    /// Runs after a command's reply is written (`VirtualMachine.Exit` exits here, once the debugger
    /// has its answer).
    fn after_reply(&self, _set: u8, _cmd: u8) {}
}

/// One connected debugger.
pub struct Session {
    writer: Writer,
    /// IDs of packets the agent originates (events); the debugger never replies to them.
    next_event_id: AtomicU32,
    order: Mutex<()>,
    /// The packet ID of the command being handled, until its handler defers the reply.
    handling: Mutex<Option<u32>>,
}

impl Session {
    fn new(writer: Writer) -> Session {
        // Event IDs start high so they are easy to tell from the debugger's IDs in a capture.
        Session {
            writer,
            next_event_id: AtomicU32::new(0x4000_0000),
            order: Mutex::new(()),
            handling: Mutex::new(None),
        }
    }

    /// Held while suspending threads for an event and sending it, and while handling a command that
    /// resumes threads and writing its reply: this is what keeps replies and events in order.
    pub fn order(&self) -> MutexGuard<'_, ()> {
        self.order.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Sends an event composite (the caller holds [`Session::order`]).
    pub fn send_event(&self, body: Vec<u8>) -> Result<(), TransportError> {
        let id = self.next_event_id.fetch_add(1, Ordering::Relaxed);
        self.writer.write_packet(&Packet::command(id, event::SET, <event::Composite as Command>::CMD, body))
    }

    /// Sends event composites, in order, in one write where the transport allows (the caller
    /// holds [`Session::order`]).
    pub fn send_events(&self, bodies: Vec<Vec<u8>>) -> Result<(), TransportError> {
        let packets: Vec<Packet> = bodies
            .into_iter()
            .map(|body| {
                let id = self.next_event_id.fetch_add(1, Ordering::Relaxed);
                Packet::command(id, event::SET, <event::Composite as Command>::CMD, body)
            })
            .collect();
        self.writer.write_packets(&packets)
    }

    /// Sends a command packet of a vendor set (the profiler's live events), which the debugger
    /// never answers. Not ordered against replies like events are: these carry no suspension.
    pub fn send_command(&self, set: u8, cmd: u8, body: Vec<u8>) -> Result<(), TransportError> {
        let id = self.next_event_id.fetch_add(1, Ordering::Relaxed);
        self.writer.write_packet(&Packet::command(id, set, cmd, body))
    }

    /// Takes over the reply to the command being handled: the loop writes none and reads the next
    /// command, and the caller answers later, from any thread, with [`Session::send_reply`] (an
    /// invoke answers when its method returns, and meanwhile the debugger may need other commands
    /// to deal with events the method causes). Returns the command's packet ID; `None` outside a
    /// command handler or if already taken.
    pub fn defer_reply(&self) -> Option<u32> {
        self.handling.lock().unwrap_or_else(|e| e.into_inner()).take()
    }

    /// Answers the command being handled now, with `body`, before its handler has finished (a
    /// resume answers before it lets its threads run; see `commands::thread_reference::resume`).
    /// Returns whether it did (not outside a handler, or if the reply was taken over already).
    pub fn answer_now(&self, body: Vec<u8>) -> bool {
        match self.defer_reply() {
            Some(id) => {
                if let Err(e) = self.send_reply(id, Ok(body)) {
                    // The loop finds the connection broken at its next read.
                    tracing::debug!(%e, "could not write an early reply");
                }
                true
            }
            None => false,
        }
    }

    /// Answers a command whose reply was deferred (see [`Session::defer_reply`]).
    pub fn send_reply(&self, id: u32, result: Result<Vec<u8>, ErrorCode>) -> Result<(), TransportError> {
        let reply = match result {
            Ok(body) => Packet::reply(id, ErrorCode::NONE, body),
            Err(code) => Packet::reply(id, code, Vec::new()),
        };
        self.writer.write_packet(&reply)
    }

    /// Closes the connection (the reader then sees it end).
    pub fn close(&self) {
        let _ = self.writer.shutdown();
    }
}

/// Commands that let threads run: their reply must reach the debugger before any event they cause.
fn resumes_threads(set: u8, cmd: u8) -> bool {
    (set, cmd) == (vm::SET, <vm::Resume as Command>::CMD) || (set, cmd) == (tr::SET, <tr::Resume as Command>::CMD)
}

/// How the session ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Ended {
    /// The debugger sent `VirtualMachine.Dispose`.
    Disposed,
    /// The connection closed or broke.
    Disconnected,
}

/// Serves one connected debugger until it disposes or disconnects, then tells the back end.
pub fn serve(conn: impl Into<Connection>, backend: &dyn Backend) -> Result<Ended, TransportError> {
    let (mut reader, writer) = conn.into().into_split()?;
    // A command with undefined flag bits is a protocol violation: the connection ends (JDK wording).
    reader.set_strict_flags(true);
    let session = Arc::new(Session::new(writer));
    backend.attached(&session);
    let ended = loop {
        let packet = match reader.read_packet() {
            Ok(Some(packet)) => packet,
            Ok(None) => break Ended::Disconnected,
            Err(e) => {
                tracing::warn!(error = %e, "debugger connection failed; ending the session");
                break Ended::Disconnected;
            }
        };
        let PacketKind::Command { set, cmd } = packet.kind else {
            // The agent sends no commands that expect replies.
            tracing::debug!(id = packet.id, "ignoring a reply packet from the debugger");
            continue;
        };
        let guard = resumes_threads(set, cmd).then(|| session.order());
        *session.handling.lock().unwrap_or_else(|e| e.into_inner()) = Some(packet.id);
        let result = backend.handle_command(set, cmd, &packet.body, &session);
        if session.defer_reply().is_none() {
            // The handler took the reply over (see `defer_reply`); its result here means nothing.
            continue;
        }
        // Only a Dispose that was carried out ends the session: one refused (a body with trailing
        // bytes, say) got its error reply and changed nothing.
        let disposed = (set, cmd) == (vm::SET, <vm::Dispose as Command>::CMD) && result.is_ok();
        let reply = match result {
            Ok(body) => Packet::reply(packet.id, ErrorCode::NONE, body),
            Err(code) => {
                tracing::debug!(set, cmd, ?code, "command failed");
                Packet::reply(packet.id, code, Vec::new())
            }
        };
        let written = session.writer.write_packet(&reply);
        drop(guard);
        if let Err(e) = written {
            tracing::warn!(error = %e, "could not write a reply; ending the session");
            break Ended::Disconnected;
        }
        backend.after_reply(set, cmd);
        if disposed {
            break Ended::Disposed;
        }
    };
    session.close();
    backend.detached(&session);
    Ok(ended)
}

/// Accepts debuggers one after another (`server=y`), serving each, until `keep_going` says stop.
pub fn serve_forever(
    listener: &Listener,
    backend: &dyn Backend,
    accept_timeout: Option<Duration>,
    keep_going: &dyn Fn() -> bool,
) -> Result<(), TransportError> {
    while keep_going() {
        let conn = listener.accept_with_timeout(accept_timeout)?;
        serve(conn, backend)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use jdwp_protocol::{IdSizes, codec};
    use std::sync::atomic::AtomicUsize;

    /// Answers `Version`, refuses everything else; counts attaches and detaches.
    #[derive(Default)]
    struct FakeBackend {
        attached: AtomicUsize,
        detached: AtomicUsize,
    }

    impl Backend for FakeBackend {
        fn handle_command(&self, set: u8, cmd: u8, body: &[u8], _: &Session) -> Result<Vec<u8>, ErrorCode> {
            match (set, cmd) {
                (1, 1) => Ok(codec::encode_body(
                    &vm::VersionReply {
                        description: "fake".into(),
                        jdwp_major: 17,
                        jdwp_minor: 0,
                        vm_version: "0".into(),
                        vm_name: "fake".into(),
                    },
                    IdSizes::default(),
                )),
                (1, 6) => codec::decode_body::<vm::Dispose>(body, IdSizes::default())
                    .map(|_| Vec::new())
                    .map_err(|_| ErrorCode::ILLEGAL_ARGUMENT),
                (1, 9) => Ok(Vec::new()),
                (11, 1) => codec::decode_body::<tr::Name>(body, IdSizes::default())
                    .map(|_| Vec::new())
                    .map_err(|_| ErrorCode::ILLEGAL_ARGUMENT),
                _ => Err(ErrorCode::NOT_IMPLEMENTED),
            }
        }
        fn attached(&self, _: &Arc<Session>) {
            self.attached.fetch_add(1, Ordering::SeqCst);
        }
        fn detached(&self, _: &Session) {
            self.detached.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn debugger(port: u16) -> (jdwp_transports::SocketReader, jdwp_transports::SocketWriter) {
        let conn = jdwp_transports::attach(&format!("127.0.0.1:{port}"), Some(Duration::from_secs(30))).unwrap();
        conn.into_split().unwrap()
    }

    fn reply_to(
        reader: &mut jdwp_transports::SocketReader,
        writer: &jdwp_transports::SocketWriter,
        packet: Packet,
    ) -> Packet {
        writer.write_packet(&packet).unwrap();
        reader.read_packet().unwrap().expect("a reply")
    }

    #[test]
    fn commands_get_replies_and_bad_ones_get_errors_then_dispose_ends_the_session() {
        let listener = jdwp_transports::listen("127.0.0.1:0").unwrap();
        let port = listener.local_addr().port();
        let backend = Arc::new(FakeBackend::default());
        let server = {
            let backend = backend.clone();
            std::thread::spawn(move || serve(listener.accept().unwrap(), &*backend).unwrap())
        };
        let (mut r, w) = debugger(port);
        let version = reply_to(&mut r, &w, Packet::command(7, 1, 1, vec![]));
        assert_eq!((version.id, version.kind), (7, PacketKind::Reply { error: ErrorCode::NONE }));
        let unknown = reply_to(&mut r, &w, Packet::command(8, 200, 1, vec![]));
        assert_eq!(unknown.kind, PacketKind::Reply { error: ErrorCode::NOT_IMPLEMENTED });
        // A truncated body: an error reply, and the session carries on.
        let truncated = reply_to(&mut r, &w, Packet::command(9, 11, 1, vec![0, 0, 1]));
        assert_eq!(truncated.kind, PacketKind::Reply { error: ErrorCode::ILLEGAL_ARGUMENT });
        // A Dispose with trailing bytes is refused, and refused means not carried out.
        let bad_dispose = reply_to(&mut r, &w, Packet::command(11, 1, 6, vec![0xbc, 0xfb]));
        assert_eq!(bad_dispose.kind, PacketKind::Reply { error: ErrorCode::ILLEGAL_ARGUMENT });
        let still_there = reply_to(&mut r, &w, Packet::command(12, 1, 1, vec![]));
        assert_eq!(still_there.kind, PacketKind::Reply { error: ErrorCode::NONE });
        let dispose = reply_to(&mut r, &w, Packet::command(10, 1, 6, vec![]));
        assert_eq!(dispose.id, 10);
        assert_eq!(server.join().unwrap(), Ended::Disposed);
        assert_eq!(backend.detached.load(Ordering::SeqCst), 1);
        assert!(r.read_packet().unwrap().is_none(), "the agent closes the connection after Dispose");
    }

    #[test]
    fn a_broken_frame_or_a_vanished_debugger_ends_only_the_session() {
        let listener = jdwp_transports::listen("127.0.0.1:0").unwrap();
        let port = listener.local_addr().port();
        let backend = Arc::new(FakeBackend::default());
        let sessions = Arc::new(AtomicUsize::new(0));
        let server = {
            let (backend, sessions) = (backend.clone(), sessions.clone());
            std::thread::spawn(move || {
                let keep_going = || sessions.fetch_add(1, Ordering::SeqCst) < 3;
                serve_forever(&listener.into(), &*backend, Some(Duration::from_secs(60)), &keep_going).unwrap()
            })
        };
        // First debugger: a frame whose length is smaller than a header.
        {
            use std::io::{Read, Write};
            let conn = jdwp_transports::attach(&format!("127.0.0.1:{port}"), Some(Duration::from_secs(30))).unwrap();
            let mut stream = conn.into_stream();
            stream.write_all(&[0, 0, 0, 3, 0, 0, 0, 1, 0, 1, 1]).unwrap();
            let mut rest = Vec::new();
            // The agent hangs up: end of stream (or a reset), and no reply bytes.
            let _ = stream.read_to_end(&mut rest);
            assert!(rest.is_empty(), "no reply to a broken frame: {rest:?}");
        }
        // Second debugger: a command packet with undefined flag bits (0x21) is a transport error
        // for the JDK's agent, which drops the connection without replying; so do we.
        {
            use std::io::{Read, Write};
            let conn = jdwp_transports::attach(&format!("127.0.0.1:{port}"), Some(Duration::from_secs(30))).unwrap();
            let mut stream = conn.into_stream();
            stream.write_all(&[0, 0, 0, 11, 0, 0, 0, 1, 0x21, 1, 1]).unwrap();
            let mut rest = Vec::new();
            let _ = stream.read_to_end(&mut rest);
            assert!(rest.is_empty(), "no reply to a command with undefined flags: {rest:?}");
        }
        // Third debugger: works normally, then vanishes without Dispose.
        {
            let (mut r, w) = debugger(port);
            let version = reply_to(&mut r, &w, Packet::command(1, 1, 1, vec![]));
            assert_eq!(version.kind, PacketKind::Reply { error: ErrorCode::NONE });
        }
        server.join().unwrap();
        assert_eq!(backend.attached.load(Ordering::SeqCst), 3);
        assert_eq!(backend.detached.load(Ordering::SeqCst), 3);
    }
}
