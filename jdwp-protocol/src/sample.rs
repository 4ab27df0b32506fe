//! Random sample values of every protocol type, for round-trip and fuzz tests.
//!
//! Built only for tests or with the `sample` feature. A tiny deterministic generator (SplitMix64)
//! keeps failures reproducible from the seed alone and the crate free of dependencies.

use crate::codec::UntaggedTypes;
use crate::ids::{ArrayId, FieldId, IdSizes, IdWidth};
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
}

impl Gen {
    pub fn new(seed: u64, sizes: IdSizes) -> Self {
        Gen { state: seed, sizes, field_tags: Vec::new(), array_tags: Vec::new() }
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
        self.below(4) as usize
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
            fn sample(g: &mut Gen) -> Self { g.next_u64() as $ty }
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
        (g.next_u64() as i32) as f32 / 7.0
    }
}

impl Sample for f64 {
    fn sample(g: &mut Gen) -> Self {
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
