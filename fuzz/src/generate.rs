//! Packet generation: one JDWP command packet per index, deterministic from the seed, the index
//! and the pool's shape.
//!
//! A command is picked (weighted across every command of the protocol crate's table, vendor sets
//! included unless turned off), its body is sampled from the layout by the protocol crate's own
//! samplers (`sample` feature) with IDs from the live pool ([`crate::pool::Chooser`]) and hostile
//! numbers, then often mutated knowing where the IDs and counts are (the writer's marks): a lying
//! count, a bad ID, a truncation, trailing bytes, a flipped byte, a random body. A few packets get
//! header mutations instead: an unknown command, flags, or a length field that lies.

use std::cell::RefCell;
use std::rc::Rc;

use jdwp_protocol::codec::{MarkKind, Writer};
use jdwp_protocol::sample::Gen;
use jdwp_protocol::{CommandInfo, IdSizes, all_commands, vendor_commands};

use crate::pool::{Chooser, Patch, Pool, patches_for};

/// Header length: length (4), id (4), flags (1), command set (1), command (1).
pub const HEADER: usize = 11;

/// What the run may accept as the answer to a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// A reply with the packet's id.
    Reply,
    /// A reply, or none at all within the (shorter) wait: the spec lets the command block (a
    /// method invocation that does not return).
    ReplyOrBlock,
    /// The connection may end: the command ends the session (Dispose, Exit).
    ReplyOrEnd,
    /// Flags other than the reply bit: a reply, or the connection closed (the JDK's agent closes).
    ReplyOrClose,
    /// The reply flag on a command: nothing answers; the agent ignores it (ours) or drops the
    /// connection (the JDK's); either is allowed, and then the next command must be answered.
    NoReply,
    /// The length field lies: the stream is out of step; anything but a dead JVM is allowed, and
    /// the run reconnects afterwards.
    Desync,
}

/// One generated packet.
#[derive(Debug, Clone)]
pub struct FuzzPacket {
    pub index: u64,
    /// The command whose layout the body came from.
    pub command: &'static CommandInfo,
    /// The whole frame, header included (the id field is [`FuzzPacket::id`]).
    pub bytes: Vec<u8>,
    pub expect: Expect,
    /// What was done to it, for the report (`lying-count@4=2147483647`...).
    pub mutations: Vec<String>,
    /// Pool IDs in the body, by slot.
    pub patches: Vec<Patch>,
}

impl FuzzPacket {
    pub fn id(&self) -> u32 {
        u32::from_be_bytes(self.bytes[4..8].try_into().expect("header"))
    }
    pub fn set(&self) -> u8 {
        self.bytes[9]
    }
    pub fn cmd(&self) -> u8 {
        self.bytes[10]
    }
    pub fn body(&self) -> &[u8] {
        &self.bytes[HEADER..]
    }
}

/// Generator options.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Include the vendor sets (128...). The JDK's agent crashes on any of them.
    pub vendor: bool,
}

/// Picks commands and builds packets.
pub struct Generator {
    seed: u64,
    table: Vec<(&'static CommandInfo, u64)>,
    total: u64,
}

/// A command's relative weight: every command alike, small sets a little more often, event
/// requests more (few survive their hostile modifiers), and the commands that end the session or
/// cost seconds rarely.
pub fn weight(info: &CommandInfo, set_len: usize) -> u64 {
    match (info.set, info.cmd) {
        (1, 10) => 2,   // VirtualMachine.Exit: the JVM is restarted afterwards.
        (1, 6) => 5,    // VirtualMachine.Dispose: reconnect and harvest again.
        (128, 12) => 5, // Profiler.HeapDump: writes a file, seconds.
        (128, 11) => 20,
        (1, 3) | (1, 20) => 40, // AllClasses: large replies.
        (15, 1) => 400,         // EventRequest.Set: most die on hostile modifiers; events need some to live.
        _ => 100 + 200 / set_len.max(1) as u64,
    }
}

/// The per-packet seed: packets are independent of each other's random draws.
pub fn packet_seed(seed: u64, index: u64) -> u64 {
    let mut z = seed ^ index.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x5851_f42d_4c95_7f2d;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Counts a lying count may claim.
const HUGE_COUNTS: &[i32] = &[i32::MAX, 0x7fff_fff0, 0x4000_0000, 0x0100_0000, 1 << 20, 65_536, -1, i32::MIN];

impl Generator {
    pub fn new(seed: u64, options: Options) -> Generator {
        let mut table = Vec::new();
        let sets = jdwp_protocol::commands::ALL.iter().chain(if options.vendor {
            jdwp_protocol::commands::VENDOR.iter()
        } else {
            [].iter()
        });
        for set in sets {
            for info in set.iter() {
                table.push((info, weight(info, set.len())));
            }
        }
        let total = table.iter().map(|(_, w)| w).sum();
        Generator { seed, table, total }
    }

    /// The commands this generator picks from.
    pub fn commands(&self) -> impl Iterator<Item = &'static CommandInfo> + '_ {
        self.table.iter().map(|(c, _)| *c)
    }

    fn pick(&self, r: u64) -> &'static CommandInfo {
        let mut x = r % self.total;
        for (info, w) in &self.table {
            if x < *w {
                return info;
            }
            x -= w;
        }
        self.table.last().expect("the table is not empty").0
    }

    /// Packet `index` of this run, with IDs from `pool`.
    pub fn packet(&self, index: u64, pool: &Rc<Pool>) -> FuzzPacket {
        self.generate(index, pool, None)
    }

    /// Packet `index` as if `command` had been picked (tests: every command builds).
    pub fn packet_of(&self, index: u64, command: &'static CommandInfo, pool: &Rc<Pool>) -> FuzzPacket {
        self.generate(index, pool, Some(command))
    }

    fn generate(&self, index: u64, pool: &Rc<Pool>, forced: Option<&'static CommandInfo>) -> FuzzPacket {
        let sizes: IdSizes = pool.sizes.unwrap_or_default();
        let choices = Rc::new(RefCell::new(Vec::new()));
        let mut g = Gen::new(packet_seed(self.seed, index), sizes)
            .hostile(true)
            .with_id_source(Box::new(Chooser::new(Rc::clone(pool), Rc::clone(&choices))));
        let picked = self.pick(g.next_u64());
        let command = forced.unwrap_or(picked);
        let mut w = Writer::with_marks(sizes);
        (command.check.sample_command)(&mut g, &mut w);
        // The chooser recorded its picks while sampling; it picks nothing after this.
        let choices = choices.borrow().clone();
        finish(&mut g, index, command, w, &choices)
    }
}

fn finish(
    g: &mut Gen,
    index: u64,
    command: &'static CommandInfo,
    w: Writer,
    choices: &[crate::pool::Choice],
) -> FuzzPacket {
    let marks = w.marks().to_vec();
    let mut patches = patches_for(&marks, choices);
    let mut body = w.into_bytes();
    let mut mutations = Vec::new();

    // Body mutations, knowing the layout's IDs and counts.
    if g.below(100) >= 55 {
        let rounds = 1 + g.below(2);
        for _ in 0..rounds {
            match g.below(8) {
                0 | 1 => {
                    let counts: Vec<_> =
                        marks.iter().filter(|m| m.kind == MarkKind::Count && m.offset + 4 <= body.len()).collect();
                    if let Some(m) = counts.get(g.pick(counts.len().max(1))).filter(|_| !counts.is_empty()) {
                        let v = if g.bool() {
                            HUGE_COUNTS[g.pick(HUGE_COUNTS.len())]
                        } else {
                            (m.value as i32).wrapping_add(1 + g.below(3) as i32)
                        };
                        body[m.offset..m.offset + 4].copy_from_slice(&v.to_be_bytes());
                        mutations.push(format!("count@{}={v}", m.offset));
                    } else {
                        let cut = g.pick(body.len() + 1);
                        body.truncate(cut);
                        mutations.push(format!("truncate@{cut}"));
                    }
                }
                2 => {
                    let ids: Vec<_> = marks
                        .iter()
                        .filter(|m| m.kind == MarkKind::Id && m.offset + m.len as usize <= body.len())
                        .collect();
                    if !ids.is_empty() {
                        let m = ids[g.pick(ids.len())];
                        let v: u64 = match g.below(4) {
                            0 => 0,
                            1 => u64::MAX,
                            2 => g.below(64),
                            _ => g.next_u64(),
                        };
                        let len = m.len as usize;
                        body[m.offset..m.offset + len].copy_from_slice(&v.to_be_bytes()[8 - len..]);
                        patches.retain(|p| p.offset != m.offset);
                        mutations.push(format!("id@{}={v:#x}", m.offset));
                    }
                }
                3 | 4 => {
                    let cut = g.pick(body.len().max(1));
                    body.truncate(cut);
                    mutations.push(format!("truncate@{cut}"));
                }
                5 => {
                    let n = 1 + g.pick(16);
                    body.extend((0..n).map(|_| g.next_u64() as u8));
                    mutations.push(format!("trailing+{n}"));
                }
                6 => {
                    if !body.is_empty() {
                        let at = g.pick(body.len());
                        body[at] ^= 1 + g.below(255) as u8;
                        patches.retain(|p| !(p.offset..p.offset + p.len as usize).contains(&at));
                        mutations.push(format!("flip@{at}"));
                    }
                }
                _ => {
                    let n = g.pick(64);
                    body = (0..n).map(|_| g.next_u64() as u8).collect();
                    patches.clear();
                    mutations.push(format!("random-body:{n}"));
                }
            }
            // A patch cut off (and perhaps refilled by trailing bytes) no longer names its ID.
            patches.retain(|p| p.offset + p.len as usize <= body.len());
        }
    }

    let mut set = command.set;
    let mut cmd = command.cmd;
    let mut flags = 0u8;
    let mut expect = match (set, cmd) {
        (3, 3) | (3, 4) | (5, 1) | (9, 6) => Expect::ReplyOrBlock,
        (1, 6) | (1, 10) => Expect::ReplyOrEnd,
        _ => Expect::Reply,
    };
    let mut length = (HEADER + body.len()) as u32;
    match g.below(1000) {
        0..10 => {
            // An unknown command in a known set, or an unknown set (never a vendor set: the JDK's
            // agent crashes on those, which the vendor commands already show).
            if g.bool() {
                cmd = [0u8, 99, 100, 200, 255][g.pick(5)];
                if jdwp_protocol::command_info(set, cmd).is_some() {
                    cmd = 0;
                }
            } else {
                set = [0u8, 19, 20, 63, 65, 100, 127][g.pick(7)];
            }
            expect = Expect::Reply;
            mutations.push(format!("unknown-command:{set}/{cmd}"));
        }
        10..15 => {
            flags = 0x80;
            expect = Expect::NoReply;
            mutations.push("flags=0x80".into());
        }
        15..20 => {
            flags = 1 + g.below(0x7f) as u8;
            expect = Expect::ReplyOrClose;
            mutations.push(format!("flags={flags:#04x}"));
        }
        20..25 => {
            let lie = match g.below(5) {
                0 => g.below(HEADER as u64) as u32,
                1 => length.saturating_sub(1 + g.below(length as u64 - HEADER as u64 + 1) as u32).max(HEADER as u32),
                2 => length + 1 + g.below(64) as u32,
                3 => 0x7fff_ffff,
                _ => 0xffff_ffff,
            };
            length = if lie == length { length + 1 } else { lie };
            expect = Expect::Desync;
            mutations.push(format!("length={length}"));
        }
        _ => {}
    }

    let mut bytes = Vec::with_capacity(HEADER + body.len());
    bytes.extend_from_slice(&length.to_be_bytes());
    bytes.extend_from_slice(&packet_id(index).to_be_bytes());
    bytes.push(flags);
    bytes.push(set);
    bytes.push(cmd);
    bytes.extend_from_slice(&body);
    FuzzPacket { index, command, bytes, expect, mutations, patches }
}

/// The id of fuzz packet `index` (housekeeping commands use ids from 0x8000_0000 on).
pub fn packet_id(index: u64) -> u32 {
    (index as u32 & 0x7fff_ffff).wrapping_add(1) & 0x7fff_ffff
}

/// Every command of the protocol crate's table, vendor sets included.
pub fn every_command() -> impl Iterator<Item = &'static CommandInfo> {
    all_commands().chain(vendor_commands())
}
