//! Random sample values of every protocol type, for round-trip and fuzz tests.
//!
//! Built only for tests or with the `sample` feature. A tiny deterministic generator (SplitMix64)
//! keeps failures reproducible from the seed alone and the crate free of dependencies.
//!
//! A fuzzer (`jdwp-fuzz`) drives the same samplers: it plugs in an [`IdSource`] that hands out
//! real IDs of a live session (and wrong-kind ones on purpose), and turns on [`Gen::hostile`]
//! numbers (zero, -1, extremes, small indexes), so bodies come from the layout tables alone.

use crate::codec::UntaggedTypes;
use crate::ids::{ArrayId, FieldId, IdKind, IdSizes, IdWidth};
use crate::value::Tag;

/// A seeded random generator that also knows the session's ID sizes, so sampled IDs fit them.
///
/// It remembers the type it chose for each sampled untagged field or array value, and answers
/// for them as the [`UntaggedTypes`] oracle when the sample is decoded again.
pub struct Gen {
    state: u64,
    sizes: IdSizes,
    field_tags: Vec<(FieldId, Tag)>,
    array_tags: Vec<(ArrayId, Tag)>,
    ids: Option<Box<dyn IdSource>>,
    hostile: bool,
}

/// Chooses the IDs a [`Gen`] samples, by kind (a fuzzer's pool of live IDs).
pub trait IdSource {
    /// The ID to use where the layout wants one of `kind`; `random` is fresh randomness from the
    /// generator (so choices follow its seed). `None`: a random ID of the kind's width.
    fn id(&mut self, kind: IdKind, random: u64) -> Option<u64>;
}

impl Gen {
    pub fn new(seed: u64, sizes: IdSizes) -> Self {
        Gen { state: seed, sizes, field_tags: Vec::new(), array_tags: Vec::new(), ids: None, hostile: false }
    }

    /// Takes IDs from `source` instead of drawing them at random.
    pub fn with_id_source(mut self, source: Box<dyn IdSource>) -> Self {
        self.ids = Some(source);
        self
    }

    /// Gives the [`IdSource`] back (to read what it recorded).
    pub fn take_id_source(&mut self) -> Option<Box<dyn IdSource>> {
        self.ids.take()
    }

    /// Hostile numbers: integers are often 0, -1, the type's extremes or small indexes, and lists
    /// a little longer. Off by default, so plain samples keep their stream.
    pub fn hostile(mut self, on: bool) -> Self {
        self.hostile = on;
        self
    }

    /// An ID of `kind`: from the [`IdSource`] if there is one and it answers, else random.
    pub fn id_of(&mut self, kind: IdKind) -> u64 {
        if self.ids.is_some() {
            let random = self.next_u64();
            if let Some(id) = self.ids.as_mut().and_then(|s| s.id(kind, random)) {
                return id;
            }
        }
        self.id(kind.width())
    }

    /// The bits of a sampled integer (truncated to the integer's width by the caller).
    pub fn int_bits(&mut self) -> u64 {
        if !self.hostile {
            return self.next_u64();
        }
        const EXTREMES: &[u64] = &[
            0,
            u64::MAX,
            i64::MAX as u64,
            i64::MIN as u64,
            0xffff_ffff,
            0x7fff_ffff,
            0x8000_0000,
            0xffff,
            0x7fff,
            0x8000,
            0xff,
            0x7f,
            0x80,
            1,
        ];
        match self.below(10) {
            0..=2 => self.below(8),
            3 | 4 => EXTREMES[self.pick(EXTREMES.len())],
            _ => self.next_u64(),
        }
    }

    /// The tag of an untagged value for `field`: the one chosen before for the same ID, else `tag`.
    pub fn field_tag_for(&mut self, field: FieldId, tag: Tag) -> Tag {
        match self.field_tags.iter().find(|(f, _)| *f == field) {
            Some((_, t)) => *t,
            None => {
                self.field_tags.push((field, tag));
                tag
            }
        }
    }

    /// Like [`Gen::field_tag_for`], for an array's component type.
    pub fn array_tag_for(&mut self, array: ArrayId, tag: Tag) -> Tag {
        match self.array_tags.iter().find(|(a, _)| *a == array) {
            Some((_, t)) => *t,
            None => {
                self.array_tags.push((array, tag));
                tag
            }
        }
    }

    pub fn sizes(&self) -> IdSizes {
        self.sizes
    }

    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }

    pub fn bool(&mut self) -> bool {
        self.next_u64() & 1 == 1
    }

    /// An ID that fits the width of its kind.
    pub fn id(&mut self, width: IdWidth) -> u64 {
        let bytes = width.of(self.sizes);
        let v = self.next_u64();
        if bytes >= 8 { v } else { v & ((1u64 << (8 * bytes)) - 1) }
    }

    /// A short length for sampled lists and strings.
    #[allow(clippy::len_without_is_empty)]
    pub fn len(&mut self) -> usize {
        self.below(if self.hostile { 7 } else { 4 }) as usize
    }

    /// Picks one of `n` alternatives.
    pub fn pick(&mut self, n: usize) -> usize {
        self.below(n as u64) as usize
    }
}

/// A type that can produce a random valid value of itself.
pub trait Sample {
    fn sample(g: &mut Gen) -> Self;
}

macro_rules! int_sample {
    ($($ty:ty),*) => {$(
        impl Sample for $ty {
            fn sample(g: &mut Gen) -> Self { g.int_bits() as $ty }
        }
    )*};
}
int_sample!(u8, i8, u16, i16, u32, i32, u64, i64);

impl Sample for bool {
    fn sample(g: &mut Gen) -> Self {
        g.bool()
    }
}

impl Sample for f32 {
    /// Finite values only: NaN never compares equal, which would make round trips look broken.
    fn sample(g: &mut Gen) -> Self {
        if g.hostile && g.bool() {
            return f32::from_bits(g.int_bits() as u32);
        }
        (g.next_u64() as i32) as f32 / 7.0
    }
}

impl Sample for f64 {
    fn sample(g: &mut Gen) -> Self {
        if g.hostile && g.bool() {
            return f64::from_bits(g.int_bits());
        }
        (g.next_u64() as i64) as f64 / 13.0
    }
}

impl Sample for String {
    fn sample(g: &mut Gen) -> Self {
        const PIECES: &[&str] = &["Ljava/lang/Object;", "main", "\0", "é", "€", "😀", "x", "<init>", "[I"];
        (0..g.len()).map(|_| PIECES[g.pick(PIECES.len())]).collect()
    }
}

impl<T: Sample> Sample for Vec<T> {
    fn sample(g: &mut Gen) -> Self {
        (0..g.len()).map(|_| T::sample(g)).collect()
    }
}

impl UntaggedTypes for Gen {
    fn field_tag(&self, field: FieldId) -> Option<Tag> {
        self.field_tags.iter().find(|(f, _)| *f == field).map(|(_, t)| *t)
    }
    fn array_component_tag(&self, array: ArrayId) -> Option<Tag> {
        self.array_tags.iter().find(|(a, _)| *a == array).map(|(_, t)| *t)
    }
}
