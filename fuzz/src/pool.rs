//! The pool of live IDs a run draws from, and the [`IdSource`] that hands them to the protocol
//! crate's samplers: mostly an ID of the kind the layout asks for, on purpose often one of another
//! kind, 0, all ones or random bits.
//!
//! Every pick from the pool is recorded as a [`Choice`] (category and slot), so a finding can name
//! its IDs by slot and a replay against a fresh JVM can put that session's IDs in their place
//! ([`Patch`]). Slots are stable across sessions because the harvest sorts each category by
//! something the JVM does not renumber (names, signatures, depth).

use std::cell::RefCell;
use std::rc::Rc;

use jdwp_protocol::sample::IdSource;
use jdwp_protocol::{IdKind, IdSizes};

/// A category of live IDs in the pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Cat {
    Thread,
    ThreadGroup,
    String,
    ClassLoader,
    ClassObject,
    Array,
    Module,
    /// Plain objects (none of the kinds above).
    Object,
    Class,
    Interface,
    ArrayType,
    Method,
    Field,
    Frame,
}

impl Cat {
    pub const ALL: [Cat; 14] = [
        Cat::Thread,
        Cat::ThreadGroup,
        Cat::String,
        Cat::ClassLoader,
        Cat::ClassObject,
        Cat::Array,
        Cat::Module,
        Cat::Object,
        Cat::Class,
        Cat::Interface,
        Cat::ArrayType,
        Cat::Method,
        Cat::Field,
        Cat::Frame,
    ];

    const OBJECTS: &'static [Cat] = &[
        Cat::Thread,
        Cat::ThreadGroup,
        Cat::String,
        Cat::ClassLoader,
        Cat::ClassObject,
        Cat::Array,
        Cat::Module,
        Cat::Object,
    ];
    const TYPES: &'static [Cat] = &[Cat::Class, Cat::Interface, Cat::ArrayType];

    pub fn name(self) -> &'static str {
        match self {
            Cat::Thread => "thread",
            Cat::ThreadGroup => "group",
            Cat::String => "string",
            Cat::ClassLoader => "loader",
            Cat::ClassObject => "classobject",
            Cat::Array => "array",
            Cat::Module => "module",
            Cat::Object => "object",
            Cat::Class => "class",
            Cat::Interface => "interface",
            Cat::ArrayType => "arraytype",
            Cat::Method => "method",
            Cat::Field => "field",
            Cat::Frame => "frame",
        }
    }

    pub fn from_name(name: &str) -> Option<Cat> {
        Cat::ALL.into_iter().find(|c| c.name() == name)
    }

    fn index(self) -> usize {
        Cat::ALL.iter().position(|c| *c == self).expect("every category is listed")
    }

    /// The categories whose IDs are of `kind` (the right kind for a layout field).
    pub fn right_for(kind: IdKind) -> &'static [Cat] {
        match kind {
            IdKind::ObjectId => Cat::OBJECTS,
            IdKind::ThreadId => &[Cat::Thread],
            IdKind::ThreadGroupId => &[Cat::ThreadGroup],
            IdKind::StringId => &[Cat::String],
            IdKind::ClassLoaderId => &[Cat::ClassLoader],
            IdKind::ClassObjectId => &[Cat::ClassObject],
            IdKind::ArrayId => &[Cat::Array],
            IdKind::ModuleId => &[Cat::Module],
            IdKind::ReferenceTypeId => Cat::TYPES,
            IdKind::ClassId => &[Cat::Class],
            IdKind::InterfaceId => &[Cat::Interface],
            IdKind::ArrayTypeId => &[Cat::ArrayType],
            IdKind::MethodId => &[Cat::Method],
            IdKind::FieldId => &[Cat::Field],
            IdKind::FrameId => &[Cat::Frame],
        }
    }
}

/// One live ID; members (methods, fields) and frames know their owner (type or thread).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    pub id: u64,
    pub owner: u64,
}

/// The live IDs of one session, by category, each in a stable order.
#[derive(Debug, Clone, Default)]
pub struct Pool {
    pub sizes: Option<IdSizes>,
    entries: [Vec<Entry>; 14],
    /// The thread whose frames are in [`Cat::Frame`].
    pub frame_thread: Option<u64>,
    /// `FuzzTarget.tick` (type, method), where the frame thread is stopped by a breakpoint.
    pub tick: Option<(u64, u64)>,
}

impl Pool {
    pub fn new(sizes: IdSizes) -> Pool {
        Pool { sizes: Some(sizes), ..Pool::default() }
    }

    pub fn get(&self, cat: Cat) -> &[Entry] {
        &self.entries[cat.index()]
    }

    pub fn set(&mut self, cat: Cat, entries: Vec<Entry>) {
        self.entries[cat.index()] = entries;
    }

    pub fn push(&mut self, cat: Cat, id: u64, owner: u64) {
        let list = &mut self.entries[cat.index()];
        if !list.iter().any(|e| e.id == id && e.owner == owner) {
            list.push(Entry { id, owner });
        }
    }

    /// The ID in `slot` of `cat`, if this pool has that many.
    pub fn slot(&self, cat: Cat, slot: usize) -> Option<u64> {
        self.get(cat).get(slot).map(|e| e.id)
    }

    /// How many IDs of each category, for logs: `thread=9 group=3 ...`.
    pub fn summary(&self) -> String {
        Cat::ALL.iter().map(|c| format!("{}={}", c.name(), self.get(*c).len())).collect::<Vec<_>>().join(" ")
    }
}

/// A pick from the pool, as the sampler got it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Choice {
    pub value: u64,
    pub cat: Cat,
    pub slot: usize,
}

/// Where a pool ID sits in a packet's body, to re-resolve it in another session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Patch {
    /// Offset in the body (after the 11-byte header).
    pub offset: usize,
    pub len: u8,
    pub cat: Cat,
    pub slot: usize,
}

impl Patch {
    /// `offset:len:cat:slot`.
    pub fn to_text(self) -> String {
        format!("{}:{}:{}:{}", self.offset, self.len, self.cat.name(), self.slot)
    }

    pub fn parse(text: &str) -> Option<Patch> {
        let mut it = text.split(':');
        let offset = it.next()?.parse().ok()?;
        let len = it.next()?.parse().ok()?;
        let cat = Cat::from_name(it.next()?)?;
        let slot = it.next()?.parse().ok()?;
        Some(Patch { offset, len, cat, slot })
    }

    /// Writes this session's ID for the slot into `body`; false if the pool lacks the slot or the
    /// body is too short (then the recorded bytes stay).
    pub fn apply(self, body: &mut [u8], pool: &Pool) -> bool {
        let Some(id) = pool.slot(self.cat, self.slot) else { return false };
        let len = self.len as usize;
        let Some(dst) = body.get_mut(self.offset..self.offset + len) else { return false };
        dst.copy_from_slice(&id.to_be_bytes()[8 - len..]);
        true
    }
}

/// Hands out IDs from a [`Pool`] by kind, deliberately wrong some of the time, and records its
/// picks. Members follow the type picked last (a method of that class), most of the time.
pub struct Chooser {
    pool: Rc<Pool>,
    last_type: Option<u64>,
    choices: Rc<RefCell<Vec<Choice>>>,
}

impl Chooser {
    pub fn new(pool: Rc<Pool>, choices: Rc<RefCell<Vec<Choice>>>) -> Chooser {
        Chooser { pool, last_type: None, choices }
    }

    fn pick(&mut self, cat: Cat, r: u64) -> Option<u64> {
        let list = self.pool.get(cat);
        if list.is_empty() {
            return None;
        }
        let mut slot = (r % list.len() as u64) as usize;
        // Members of the type picked last, three times in four.
        if matches!(cat, Cat::Method | Cat::Field)
            && let Some(owner) = self.last_type
            && !(r >> 40).is_multiple_of(4)
        {
            let members: Vec<usize> = (0..list.len()).filter(|i| list[*i].owner == owner).collect();
            if !members.is_empty() {
                slot = members[((r >> 20) % members.len() as u64) as usize];
            }
        }
        // The thread with frames, a third of the time, so frame commands meet their thread.
        if cat == Cat::Thread
            && let Some(t) = self.pool.frame_thread
            && (r >> 40).is_multiple_of(3)
            && let Some(i) = list.iter().position(|e| e.id == t)
        {
            slot = i;
        }
        let value = list[slot].id;
        if matches!(cat, Cat::Class | Cat::Interface | Cat::ArrayType) {
            self.last_type = Some(value);
        }
        self.choices.borrow_mut().push(Choice { value, cat, slot });
        Some(value)
    }
}

impl IdSource for Chooser {
    fn id(&mut self, kind: IdKind, random: u64) -> Option<u64> {
        let right = Cat::right_for(kind);
        let r = random >> 8;
        match random % 100 {
            // The right kind.
            0..70 => {
                let cat = right[(r % right.len() as u64) as usize];
                self.pick(cat, r >> 4).or(Some(0))
            }
            // A live ID of another kind.
            70..84 => {
                let wrong: Vec<Cat> = Cat::ALL.into_iter().filter(|c| !right.contains(c)).collect();
                let cat = wrong[(r % wrong.len() as u64) as usize];
                self.pick(cat, r >> 4)
            }
            84..90 => Some(0),
            90..94 => Some(u64::MAX),
            // Random bits (the sampler's own).
            _ => None,
        }
    }
}

/// Lines up the IDs a body was written with (the writer's marks, in order) with the pool picks
/// (in order), giving the patches that name each picked ID by its slot.
pub fn patches_for(marks: &[jdwp_protocol::codec::Mark], choices: &[Choice]) -> Vec<Patch> {
    let mut out = Vec::new();
    let mut next = 0;
    for m in marks.iter().filter(|m| m.kind == jdwp_protocol::codec::MarkKind::Id) {
        let mask = if m.len >= 8 { u64::MAX } else { (1u64 << (8 * m.len)) - 1 };
        if let Some(k) = choices[next..].iter().position(|c| c.value & mask == m.value & mask) {
            let c = choices[next + k];
            out.push(Patch { offset: m.offset, len: m.len, cat: c.cat, slot: c.slot });
            next += k + 1;
        }
    }
    out
}
