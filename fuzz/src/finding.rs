//! Findings on disk: one text file each, with everything needed to replay the packet (its exact
//! bytes, its pool IDs by slot, the packets before it) and what the JVM said.
//!
//! ```text
//! kind: crash
//! seed: 1
//! index: 1234
//! command: ThreadReference.Frames (11/6)
//! expect: Reply
//! mutations: count@8=2147483647
//! detail: signal 11 (SIGSEGV)
//! packet: 0000001b000004d3000b06...
//! patches: 0:8:thread:3
//! context: 1233 0000001b... 0:8:class:12
//! ```

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::generate::{Expect, FuzzPacket, HEADER};
use crate::pool::Patch;

/// A packet as recorded: bytes, expectation and slots.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub index: u64,
    pub bytes: Vec<u8>,
    pub expect: Expect,
    pub patches: Vec<Patch>,
}

impl Recorded {
    pub fn of(p: &FuzzPacket) -> Recorded {
        Recorded { index: p.index, bytes: p.bytes.clone(), expect: p.expect, patches: p.patches.clone() }
    }

    fn patches_text(&self) -> String {
        if self.patches.is_empty() {
            "-".into()
        } else {
            self.patches.iter().map(|p| p.to_text()).collect::<Vec<_>>().join(",")
        }
    }

    fn parse_patches(text: &str) -> Vec<Patch> {
        text.split(',').filter_map(Patch::parse).collect()
    }

    /// The bytes with this session's IDs in the recorded slots.
    pub fn resolved(&self, pool: &crate::pool::Pool) -> Vec<u8> {
        let mut bytes = self.bytes.clone();
        if bytes.len() > HEADER {
            let body = &mut bytes[HEADER..];
            for p in &self.patches {
                p.apply(body, pool);
            }
        }
        bytes
    }
}

/// One finding.
#[derive(Debug, Clone)]
pub struct Finding {
    pub kind: String,
    pub seed: u64,
    pub agent: String,
    pub command: String,
    pub mutations: String,
    pub detail: String,
    pub packet: Recorded,
    pub context: Vec<Recorded>,
    pub output: String,
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

pub fn unhex(text: &str) -> Result<Vec<u8>, String> {
    let t: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    if !t.len().is_multiple_of(2) {
        return Err("odd number of hex digits".into());
    }
    (0..t.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&t[i..i + 2], 16).map_err(|e| format!("bad hex at {i}: {e}")))
        .collect()
}

fn expect_name(e: Expect) -> &'static str {
    match e {
        Expect::Reply => "Reply",
        Expect::ReplyOrBlock => "ReplyOrBlock",
        Expect::ReplyOrEnd => "ReplyOrEnd",
        Expect::ReplyOrClose => "ReplyOrClose",
        Expect::NoReply => "NoReply",
        Expect::Desync => "Desync",
    }
}

fn parse_expect(s: &str) -> Option<Expect> {
    Some(match s {
        "Reply" => Expect::Reply,
        "ReplyOrBlock" => Expect::ReplyOrBlock,
        "ReplyOrEnd" => Expect::ReplyOrEnd,
        "ReplyOrClose" => Expect::ReplyOrClose,
        "NoReply" => Expect::NoReply,
        "Desync" => Expect::Desync,
        _ => return None,
    })
}

impl Finding {
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "kind: {}", self.kind);
        let _ = writeln!(s, "seed: {}", self.seed);
        let _ = writeln!(s, "index: {}", self.packet.index);
        let _ = writeln!(s, "agent: {}", self.agent);
        let _ = writeln!(s, "command: {}", self.command);
        let _ = writeln!(s, "expect: {}", expect_name(self.packet.expect));
        let _ = writeln!(s, "mutations: {}", if self.mutations.is_empty() { "-" } else { &self.mutations });
        let _ = writeln!(s, "detail: {}", self.detail.replace('\n', " | "));
        let _ = writeln!(s, "packet: {}", hex(&self.packet.bytes));
        let _ = writeln!(s, "patches: {}", self.packet.patches_text());
        for c in &self.context {
            let _ =
                writeln!(s, "context: {} {} {} {}", c.index, expect_name(c.expect), hex(&c.bytes), c.patches_text());
        }
        if !self.output.is_empty() {
            let _ = writeln!(s, "jvm-output:");
            for line in self.output.lines() {
                let _ = writeln!(s, "  {line}");
            }
        }
        s
    }

    /// Writes `<dir>/<index>-<kind>.txt`.
    pub fn write(&self, dir: &Path) -> std::io::Result<PathBuf> {
        std::fs::create_dir_all(dir)?;
        let path = dir.join(format!("{:08}-{}.txt", self.packet.index, self.kind));
        std::fs::write(&path, self.to_text())?;
        Ok(path)
    }
}

/// The packet (and context) of a finding file (or a corpus entry in the same format).
pub fn parse(text: &str) -> Result<(Recorded, Vec<Recorded>), String> {
    let mut index = 0;
    let mut bytes = None;
    let mut expect = None;
    let mut patches = Vec::new();
    let mut context = Vec::new();
    for line in text.lines() {
        let Some((key, value)) = line.split_once(": ") else { continue };
        match key {
            "index" => index = value.trim().parse().map_err(|e| format!("index: {e}"))?,
            "expect" => expect = parse_expect(value.trim()),
            "packet" => bytes = Some(unhex(value)?),
            "patches" => patches = Recorded::parse_patches(value.trim()),
            "context" => {
                let parts: Vec<&str> = value.split_whitespace().collect();
                if parts.len() >= 3 {
                    context.push(Recorded {
                        index: parts[0].parse().map_err(|e| format!("context index: {e}"))?,
                        expect: parse_expect(parts[1]).unwrap_or(Expect::Reply),
                        bytes: unhex(parts[2])?,
                        patches: parts.get(3).map(|p| Recorded::parse_patches(p)).unwrap_or_default(),
                    });
                }
            }
            _ => {}
        }
    }
    let bytes = bytes.ok_or("no `packet:` line")?;
    if bytes.len() < HEADER {
        return Err(format!("a packet of {} bytes has no header", bytes.len()));
    }
    Ok((Recorded { index, bytes, expect: expect.unwrap_or(Expect::Reply), patches }, context))
}
