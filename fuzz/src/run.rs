//! The run: one debuggee at a time, packets one by one, every answer judged by the oracles.
//!
//! Oracles: the JVM is alive (no exit, no signal, no hs_err file); every command is answered
//! within the reply timeout (except what the spec lets block: method invocations); a successful
//! reply decodes by the command's reply layout; events decode; the debuggee's RSS stays under the
//! bound. A finding is written with its seed, index and exact bytes, and the run goes on (on a
//! fresh JVM when the old one died, hung or grew too big).
//!
//! Session policy, so the run does not stall itself: a successful `VirtualMachine.Suspend` or
//! `ThreadReference.Suspend` is followed by the matching resume, `HoldEvents` by `ReleaseEvents`;
//! events that suspend are resumed (all threads, or the event's thread); at most four fuzzed event
//! requests stay set (the oldest is cleared); after a resume the frame thread is suspended again
//! and its frames harvested anew; `Dispose`, a lying length and a closed connection lead to a new
//! connection (and a new harvest: IDs do not outlive a session), `Exit` to a new JVM.

use std::collections::{BTreeMap, VecDeque};
use std::path::PathBuf;
use std::rc::Rc;
use std::time::{Duration, Instant};

use jdwp_protocol::commands::event::Composite;
use jdwp_protocol::commands::virtual_machine as vm;
use jdwp_protocol::{ErrorCode, SuspendPolicy, codec};
use jdwp_transports::{Packet, PacketKind};

use crate::conn::{Conn, ConnError, Outcome};
use crate::finding::{Finding, Recorded};
use crate::generate::{Expect, FuzzPacket, Generator, HEADER, Options};
use crate::harvest::{harvest, refresh_frames};
use crate::pool::Pool;
use crate::target::{Target, TargetConfig, describe_status};

/// Settings of a run.
#[derive(Debug, Clone)]
pub struct RunConfig {
    pub seed: u64,
    pub first: u64,
    pub packets: u64,
    pub target: TargetConfig,
    pub out: PathBuf,
    pub reply_timeout: Duration,
    /// How long a command the spec lets block (an invocation) may go unanswered.
    pub block_timeout: Duration,
    pub rss_limit_mb: u64,
    pub vendor: bool,
    /// Print progress every this many packets (0: never).
    pub progress: u64,
}

/// What a run counted.
#[derive(Debug, Default)]
pub struct Stats {
    pub packets: u64,
    pub replies: u64,
    pub ok_replies: u64,
    pub error_replies: BTreeMap<u16, u64>,
    /// Per header command: (sent, ok replies, error replies).
    pub per_command: BTreeMap<(u8, u8), (u64, u64, u64)>,
    /// Per header command, the error codes answered.
    pub per_command_errors: BTreeMap<(u8, u8), BTreeMap<u16, u64>>,
    pub allowed_blocks: u64,
    pub allowed_closes: u64,
    pub jvm_starts: u64,
    pub connections: u64,
    pub events: u64,
    pub findings: Vec<(String, String, PathBuf)>,
    pub max_rss_mb: u64,
    pub elapsed: Duration,
    /// Time spent starting JVMs, connecting and harvesting.
    pub setup: Duration,
    /// Time spent on fuzz packets and their follow-ups.
    pub fuzzing: Duration,
}

impl Stats {
    pub fn findings_by_kind(&self) -> BTreeMap<String, u64> {
        let mut m = BTreeMap::new();
        for (k, _, _) in &self.findings {
            *m.entry(k.clone()).or_default() += 1;
        }
        m
    }

    /// One line per command that was answered: `VirtualMachine.Version 1/1 sent 12 ok 12 error 0`.
    pub fn per_command_table(&self) -> String {
        let mut s = String::new();
        for ((set, cmd), (n, ok, err)) in &self.per_command {
            let name = jdwp_protocol::command_info(*set, *cmd).map_or("(unknown)", |c| c.qualified_name);
            let codes: Vec<String> = self
                .per_command_errors
                .get(&(*set, *cmd))
                .map(|m| m.iter().map(|(c, n)| format!("{}={n}", ErrorCode(*c).name().unwrap_or("?"))).collect())
                .unwrap_or_default();
            s += &format!(
                "{name:<40} {set:>3}/{cmd:<3} answered {n:>6} ok {ok:>6} error {err:>6}  {}\n",
                codes.join(" ")
            );
        }
        s
    }

    pub fn summary(&self) -> String {
        let secs = self.elapsed.as_secs_f64().max(0.001);
        let mut s = format!(
            "packets {} in {:.1}s ({:.0}/s; setup {:.1}s, packets {:.1}s); replies {} (ok {}); allowed blocks {}, allowed closes {}; JVM starts {}, connections {}, events {}; max RSS {} MiB\n",
            self.packets,
            secs,
            self.packets as f64 / secs,
            self.setup.as_secs_f64(),
            self.fuzzing.as_secs_f64(),
            self.replies,
            self.ok_replies,
            self.allowed_blocks,
            self.allowed_closes,
            self.jvm_starts,
            self.connections,
            self.events,
            self.max_rss_mb,
        );
        let errors: Vec<String> =
            self.error_replies.iter().map(|(c, n)| format!("{}={n}", ErrorCode(*c).name().unwrap_or("?"))).collect();
        s += &format!("error replies: {}\n", errors.join(" "));
        let by_kind = self.findings_by_kind();
        if by_kind.is_empty() {
            s += "findings: none\n";
        } else {
            s += &format!(
                "findings: {} ({})\n",
                self.findings.len(),
                by_kind.iter().map(|(k, n)| format!("{k}={n}")).collect::<Vec<_>>().join(" ")
            );
            let mut by_cmd: BTreeMap<(String, String), u64> = BTreeMap::new();
            for (k, c, _) in &self.findings {
                *by_cmd.entry((k.clone(), c.clone())).or_default() += 1;
            }
            for ((k, c), n) in by_cmd {
                s += &format!("  {k:<16} {c:<48} {n}\n");
            }
        }
        s
    }
}

/// What became of one packet.
#[derive(Debug, Default)]
pub struct Verdict {
    /// A finding: kind and detail.
    pub finding: Option<(String, String)>,
    /// The JVM must be replaced (dead, hung, too big).
    pub restart: bool,
    /// The connection must be replaced.
    pub reconnect: bool,
    /// The reply, if one came.
    pub reply: Option<Packet>,
    /// What happened, in a few words.
    pub note: String,
}

/// How long a JVM whose connection closed may take to exit, when a close was allowed / was not.
const SHORT_WAIT: Duration = Duration::from_millis(500);
const LONG_WAIT: Duration = Duration::from_secs(3);

/// A debuggee with its connection and pool.
pub struct Session {
    pub config: RunConfig,
    pub target: Option<Target>,
    pub conn: Option<Conn>,
    pub pool: Rc<Pool>,
    frames_dirty: bool,
    requests: VecDeque<(u8, i32)>,
    /// Events that did not decode, since last taken.
    pub malformed_events: Vec<String>,
    pub stats: Stats,
}

fn is_timeout(e: &ConnError) -> bool {
    matches!(e, ConnError::Timeout(_))
}

impl Session {
    pub fn new(config: RunConfig) -> Session {
        Session {
            config,
            target: None,
            conn: None,
            pool: Rc::new(Pool::default()),
            frames_dirty: false,
            requests: VecDeque::new(),
            malformed_events: Vec::new(),
            stats: Stats::default(),
        }
    }

    fn timeout(&self) -> Duration {
        self.config.reply_timeout
    }

    /// Kills the JVM (if any) and forgets the connection.
    pub fn stop(&mut self) {
        if let Some(c) = self.conn.take() {
            c.close();
        }
        self.target = None;
    }

    /// A live JVM, connected, with a fresh pool.
    pub fn ensure(&mut self) -> Result<(), String> {
        if let Some(status) = self.target.as_ref().and_then(|t| t.exited(Duration::ZERO)) {
            return Err(format!("the JVM exited: {}", describe_status(status)));
        }
        if self.target.is_none() {
            self.conn = None;
            self.target = Some(Target::start(&self.config.target)?);
            self.stats.jvm_starts += 1;
        }
        if self.conn.is_none() {
            let addr = self.target.as_ref().expect("started above").addr;
            let deadline = Instant::now() + self.timeout().max(Duration::from_secs(10));
            let conn = loop {
                match Conn::attach(addr, self.timeout()) {
                    Ok(c) => break c,
                    // After Dispose or a dropped connection the agent listens again; give it time.
                    Err(e) if Instant::now() < deadline => {
                        if let Some(status) = self.target.as_ref().and_then(|t| t.exited(Duration::ZERO)) {
                            return Err(format!("the JVM exited: {} ({e})", describe_status(status)));
                        }
                        std::thread::sleep(Duration::from_millis(50));
                    }
                    Err(e) => return Err(format!("attaching: {e}")),
                }
            };
            self.stats.connections += 1;
            self.conn = Some(conn);
            self.requests.clear();
            let conn = self.conn.as_mut().expect("just set");
            let pool = harvest(conn, self.config.reply_timeout).map_err(|e| format!("harvesting IDs: {e}"))?;
            self.pool = Rc::new(pool);
            self.frames_dirty = false;
        }
        if self.frames_dirty {
            let mut pool = (*self.pool).clone();
            let conn = self.conn.as_mut().expect("connected above");
            refresh_frames(conn, &mut pool, self.config.reply_timeout)
                .map_err(|e| format!("refreshing frames: {e}"))?;
            self.pool = Rc::new(pool);
            self.frames_dirty = false;
        }
        Ok(())
    }

    /// Why the JVM is gone, as a finding (None: it exited as a packet asked, or still runs).
    pub fn death(&self, last: &[u8], wait: Duration) -> Option<(String, String)> {
        let target = self.target.as_ref()?;
        let status = target.exited(wait)?;
        let hs_err = target.hs_err();
        let asked_exit = last.len() >= HEADER && last[9] == 1 && last[10] == 10;
        let mut detail = describe_status(status);
        if let Some(p) = &hs_err {
            detail += &format!("; hs_err: {}", p.display());
        }
        use std::os::unix::process::ExitStatusExt;
        if hs_err.is_some() || status.signal().is_some_and(|s| s != libc::SIGKILL) {
            Some(("crash".into(), detail))
        } else if asked_exit {
            None
        } else {
            Some(("exit".into(), detail))
        }
    }

    /// Sends one packet and judges what comes back.
    pub fn fire(&mut self, bytes: &[u8], expect: Expect) -> Verdict {
        let mut v = Verdict::default();
        let id = u32::from_be_bytes(bytes[4..8].try_into().expect("header"));
        let (set, cmd) = (bytes[9], bytes[10]);
        let timeout = self.timeout();
        let Some(conn) = self.conn.as_mut() else {
            v.reconnect = true;
            return v;
        };
        let sent = conn.send_bytes(bytes);
        let outcome = match (sent, expect) {
            (Err(e), _) => Outcome::Closed(e),
            (Ok(()), Expect::Desync) => {
                let o = conn.wait_reply(id, Duration::from_millis(300));
                v.reconnect = true;
                // A dying JVM closes the connection; then give it time to finish (hs_err).
                let wait = if matches!(o, Outcome::Closed(_)) { SHORT_WAIT } else { Duration::ZERO };
                v.note = format!("desync: {o:?}");
                if let Some(f) = self.death(bytes, wait) {
                    v.finding = Some(f);
                    v.restart = true;
                }
                return v;
            }
            (Ok(()), Expect::NoReply) => {
                // Nothing answers a reply packet; the next command must still be answered.
                match conn.request(&vm::Version {}, timeout) {
                    Ok(_) => {
                        v.note = "ignored, as it should be".into();
                        return v;
                    }
                    Err(e) if is_timeout(&e) => Outcome::Timeout,
                    Err(e) => Outcome::Closed(e.to_string()),
                }
            }
            (Ok(()), Expect::ReplyOrBlock) => conn.wait_reply(id, self.config.block_timeout),
            (Ok(()), _) => conn.wait_reply(id, timeout),
        };
        match outcome {
            Outcome::Reply(p) => {
                self.stats.replies += 1;
                if let PacketKind::Reply { error } = p.kind {
                    let entry = self.stats.per_command.entry((set, cmd)).or_default();
                    entry.0 += 1;
                    if error == ErrorCode::NONE {
                        entry.1 += 1;
                        self.stats.ok_replies += 1;
                        if let Some(info) = jdwp_protocol::command_info(set, cmd)
                            && let Err(e) = (info.check.decode_reply)(&p.body, conn.sizes)
                        {
                            v.finding = Some(("malformed-reply".into(), format!("{}: {e}", info.qualified_name)));
                        }
                    } else {
                        entry.2 += 1;
                        *self.stats.per_command_errors.entry((set, cmd)).or_default().entry(error.0).or_default() += 1;
                        *self.stats.error_replies.entry(error.0).or_default() += 1;
                    }
                    v.note = format!("reply {}", error.name().unwrap_or("?"));
                    // Dispose ends the session: the agent closes after replying. Exit ends the JVM.
                    if (set, cmd) == (1, 6) {
                        if error == ErrorCode::NONE {
                            v.reconnect = true;
                        } else if let Err(e) = conn.request(&vm::Version {}, timeout) {
                            // Refused, yet the session ended: say so here, not at the next packet.
                            v.reconnect = true;
                            v.finding = Some((
                                "closed".into(),
                                format!(
                                    "Dispose answered {} and the session ended anyway ({e})",
                                    error.name().unwrap_or("?")
                                ),
                            ));
                        }
                    }
                    if error == ErrorCode::NONE && (set, cmd) == (1, 10) {
                        v.restart = true;
                        if self.target.as_ref().and_then(|t| t.exited(Duration::from_secs(10))).is_none() {
                            v.finding = Some((
                                "exit-ignored".into(),
                                "VirtualMachine.Exit answered, the JVM still runs after 10 s".into(),
                            ));
                        }
                    }
                }
                v.reply = Some(p);
            }
            Outcome::Closed(why) => {
                v.reconnect = true;
                v.note = format!("closed: {why}");
                let wait = match expect {
                    Expect::ReplyOrEnd | Expect::ReplyOrClose | Expect::NoReply => SHORT_WAIT,
                    _ => LONG_WAIT,
                };
                if let Some(f) = self.death(bytes, wait) {
                    v.finding = Some(f);
                    v.restart = true;
                } else if self.target.as_ref().and_then(|t| t.exited(Duration::ZERO)).is_some() {
                    v.restart = true; // Exit, as asked
                    self.stats.allowed_closes += 1;
                } else if matches!(expect, Expect::ReplyOrEnd | Expect::ReplyOrClose | Expect::NoReply) {
                    self.stats.allowed_closes += 1;
                } else {
                    v.finding = Some(("closed".into(), format!("the agent closed the connection: {why}")));
                }
            }
            Outcome::Timeout => {
                if let Some(f) = self.death(bytes, Duration::ZERO) {
                    v.finding = Some(f);
                    v.restart = true;
                } else if expect == Expect::ReplyOrBlock {
                    // The spec lets an invocation block; the agent must still answer others.
                    let conn = self.conn.as_mut().expect("checked above");
                    match conn.request(&vm::Version {}, timeout) {
                        Ok(_) => {
                            self.stats.allowed_blocks += 1;
                            v.note = "blocked (allowed), others answered".into();
                        }
                        Err(e) => {
                            v.finding = Some(("hang".into(), format!("an invocation blocked and then {e}")));
                            v.restart = true;
                        }
                    }
                } else if expect == Expect::ReplyOrEnd
                    && self.target.as_ref().and_then(|t| t.exited(Duration::from_secs(5))).is_some()
                {
                    v.restart = true;
                } else {
                    v.finding = Some(("hang".into(), format!("no reply within {timeout:?}")));
                    v.restart = true;
                }
            }
        }
        v
    }

    /// Keeps the session from stalling after `p` (see the module's documentation).
    pub fn follow_up(&mut self, bytes: &[u8], v: &Verdict) -> Result<(), ConnError> {
        let timeout = self.timeout();
        let Some(conn) = self.conn.as_mut() else { return Ok(()) };
        let ok =
            v.reply.as_ref().is_some_and(|r| matches!(r.kind, PacketKind::Reply { error } if error == ErrorCode::NONE));
        let (set, cmd) = (bytes[9], bytes[10]);
        let body = &bytes[HEADER.min(bytes.len())..];
        if ok {
            match (set, cmd) {
                (1, 8) => {
                    conn.raw(1, 9, Vec::new(), timeout)?;
                }
                (11, 2) => {
                    let n = conn.sizes.object_id as usize;
                    if body.len() >= n {
                        conn.raw(11, 3, body[..n].to_vec(), timeout)?;
                    }
                }
                (1, 15) => {
                    conn.raw(1, 16, Vec::new(), timeout)?;
                }
                (15, 1) if !body.is_empty() => {
                    let reply = v.reply.as_ref().expect("ok means a reply");
                    if reply.body.len() >= 4 {
                        let rid = i32::from_be_bytes(reply.body[..4].try_into().expect("4 bytes"));
                        self.requests.push_back((body[0], rid));
                        while self.requests.len() > 4 {
                            let (kind, rid) = self.requests.pop_front().expect("not empty");
                            let mut b = vec![kind];
                            b.extend_from_slice(&rid.to_be_bytes());
                            conn.raw(15, 2, b, timeout)?;
                        }
                    }
                }
                _ => {}
            }
        }
        // Anything that may have resumed the frame thread, or popped its frames.
        if matches!(
            (set, cmd),
            (1, 9) | (1, 18) | (11, 3) | (11, 10) | (11, 11) | (11, 14) | (16, 4) | (3, 3) | (3, 4) | (5, 1) | (9, 6)
        ) {
            self.frames_dirty = true;
        }
        self.handle_events()
    }

    /// Resumes what events suspended; a malformed event is a finding.
    fn handle_events(&mut self) -> Result<(), ConnError> {
        let timeout = self.timeout();
        let Some(conn) = self.conn.as_mut() else { return Ok(()) };
        let mut handled = 0;
        while let Some(p) = conn.events.pop_front() {
            handled += 1;
            self.stats.events += 1;
            if handled > 500 {
                conn.events.clear();
                break;
            }
            let PacketKind::Command { set: 64, cmd: 100 } = p.kind else { continue };
            let composite: Composite = match codec::decode_body(&p.body, conn.sizes) {
                Ok(c) => c,
                Err(e) => {
                    // Reported by the caller through `malformed_events`.
                    self.malformed_events.push(format!("{e}: {}", crate::finding::hex(&p.body)));
                    conn.raw(1, 9, Vec::new(), timeout)?;
                    continue;
                }
            };
            match composite.suspend_policy {
                SuspendPolicy::None => {}
                SuspendPolicy::All => {
                    conn.raw(1, 9, Vec::new(), timeout)?;
                    self.frames_dirty = true;
                }
                SuspendPolicy::EventThread => {
                    // kind(1) request(4) thread(object size), after policy(1) count(4).
                    let n = conn.sizes.object_id as usize;
                    if p.body.len() >= 10 + n && !matches!(p.body[5], 99 | 9) {
                        let t = p.body[10..10 + n].to_vec();
                        conn.raw(11, 3, t, timeout)?;
                    } else {
                        conn.raw(1, 9, Vec::new(), timeout)?;
                        self.frames_dirty = true;
                    }
                }
            }
        }
        Ok(())
    }
}

/// How many packets before a finding are kept with it.
const CONTEXT: usize = 16;

/// Runs `config.packets` packets from `config.first` on; findings go to `config.out`.
pub fn run(config: RunConfig) -> Result<Stats, String> {
    let started = Instant::now();
    let generator = Generator::new(config.seed, Options { vendor: config.vendor });
    let agent_name = config.target.agent.name().to_owned();
    let out = config.out.clone();
    let mut s = Session::new(config);
    let mut context: VecDeque<Recorded> = VecDeque::new();
    let mut setup_failures = 0;
    let mut last: Option<FuzzPacket> = None;
    let end = s.config.first + s.config.packets;
    let mut index = s.config.first;
    while index < end {
        let t0 = Instant::now();
        let ready = s.ensure();
        s.stats.setup += t0.elapsed();
        let t0 = Instant::now();
        if let Err(e) = ready {
            // The JVM died after the previous packet (a lie in the stream, found on reconnecting).
            if let Some(prev) = &last
                && let Some(f) = s.death(&prev.bytes, LONG_WAIT)
            {
                let prev = prev.clone();
                record(&mut s, &out, &agent_name, &prev, &context, f);
                s.stop();
                last = None;
                continue;
            }
            setup_failures += 1;
            eprintln!("jdwp-fuzz: setting up the debuggee failed: {e}");
            if setup_failures > 5 {
                s.stop();
                return Err(format!("giving up after repeated setup failures: {e}"));
            }
            s.stop();
            continue;
        }
        setup_failures = 0;
        let packet = generator.packet(index, &s.pool);
        let verdict = s.fire(&packet.bytes, packet.expect);
        s.stats.packets += 1;
        let mut finding = verdict.finding.clone();
        if finding.is_none() && !verdict.restart && !verdict.reconnect {
            match s.follow_up(&packet.bytes, &verdict) {
                Ok(()) => {}
                Err(e) => {
                    // The housekeeping after this packet failed: judge as if the packet had.
                    let dead = s.death(&packet.bytes, LONG_WAIT);
                    if let Some(f) = dead {
                        finding = Some(f);
                    } else if matches!(e, ConnError::Timeout(_)) {
                        finding = Some(("hang".into(), format!("after this packet: {e}")));
                    } else {
                        finding = Some(("closed".into(), format!("after this packet: {e}")));
                    }
                }
            }
        }
        for m in std::mem::take(&mut s.malformed_events) {
            record(&mut s, &out, &agent_name, &packet, &context, ("malformed-event".into(), m));
        }
        let needs_restart =
            verdict.restart || finding.as_ref().is_some_and(|(k, _)| k == "hang" || k == "crash" || k == "exit");
        if let Some(f) = finding.clone() {
            record(&mut s, &out, &agent_name, &packet, &context, f);
        }
        if needs_restart {
            s.stop();
        } else if (verdict.reconnect || finding.as_ref().is_some_and(|(k, _)| k == "closed"))
            && let Some(c) = s.conn.take()
        {
            c.close();
        }
        s.stats.fuzzing += t0.elapsed();
        last = Some(packet.clone());
        context.push_back(Recorded::of(&packet));
        if context.len() > CONTEXT {
            context.pop_front();
        }
        index += 1;
        let n = index - s.config.first;
        if n.is_multiple_of(100) {
            check_memory(&mut s, &out, &agent_name, &packet, &context);
            if let Some(t) = &s.target {
                t.clean_scratch();
            }
        }
        if s.config.progress > 0 && n.is_multiple_of(s.config.progress) {
            eprintln!(
                "jdwp-fuzz: {n}/{} packets, {:.0}/s, {} findings, JVM starts {}",
                s.config.packets,
                n as f64 / started.elapsed().as_secs_f64().max(0.001),
                s.stats.findings.len(),
                s.stats.jvm_starts
            );
        }
    }
    s.stats.elapsed = started.elapsed();
    if let Some(t) = &s.target {
        t.clean_scratch();
    }
    s.stop();
    let mut stats = std::mem::take(&mut s.stats);
    stats.findings.sort_by(|a, b| a.2.cmp(&b.2));
    Ok(stats)
}

fn check_memory(
    s: &mut Session,
    out: &std::path::Path,
    agent: &str,
    packet: &FuzzPacket,
    context: &VecDeque<Recorded>,
) {
    let Some(rss) = s.target.as_ref().and_then(Target::rss_mb) else { return };
    s.stats.max_rss_mb = s.stats.max_rss_mb.max(rss);
    if rss > s.config.rss_limit_mb {
        let detail = format!("debuggee RSS {rss} MiB over the bound of {} MiB", s.config.rss_limit_mb);
        record(s, out, agent, packet, context, ("memory".into(), detail));
        s.stop();
    }
}

fn record(
    s: &mut Session,
    out: &std::path::Path,
    agent: &str,
    packet: &FuzzPacket,
    context: &VecDeque<Recorded>,
    (kind, detail): (String, String),
) {
    let command = format!(
        "{} ({}/{}){}",
        packet.command.qualified_name,
        packet.set(),
        packet.cmd(),
        if (packet.set(), packet.cmd()) == (packet.command.set, packet.command.cmd) { "" } else { " [header changed]" }
    );
    let finding = Finding {
        kind: kind.clone(),
        seed: s.config.seed,
        agent: agent.to_owned(),
        command: command.clone(),
        mutations: packet.mutations.join(" "),
        detail,
        packet: Recorded::of(packet),
        context: context.iter().cloned().collect(),
        output: s.target.as_ref().map(|t| t.output_tail(4000)).unwrap_or_default(),
    };
    if let Some(hs) = s.target.as_ref().and_then(Target::hs_err) {
        let _ = std::fs::create_dir_all(out);
        let _ = std::fs::copy(&hs, out.join(format!("{:08}-hs_err.log", packet.index)));
        let _ = std::fs::remove_file(&hs);
    }
    match finding.write(out) {
        Ok(path) => {
            eprintln!("jdwp-fuzz: finding {kind} at packet {}: {command} -> {}", packet.index, path.display());
            s.stats.findings.push((kind, command, path));
        }
        Err(e) => eprintln!("jdwp-fuzz: cannot write finding {kind} at packet {}: {e}", packet.index),
    }
}
