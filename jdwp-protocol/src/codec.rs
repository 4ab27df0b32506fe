//! The byte-level codec: a bounds-checked [`Reader`], a growable [`Writer`], and the [`JdwpCodec`]
//! trait every protocol type implements.
//!
//! Both carry the session's [`IdSizes`], because JDWP IDs have no fixed width: the target VM says how
//! wide each kind is (`VirtualMachine.IDSizes`), and everything after that handshake depends on it.

use crate::ids::IdSizes;
use crate::mutf8;
use crate::value::Tag;

/// Why a byte string could not be decoded. Decoding never panics; every malformed input ends here.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// The input ended before a value of `needed` bytes at `offset`.
    #[error("truncated: needed {needed} bytes at offset {offset}, {available} available")]
    Truncated { offset: usize, needed: usize, available: usize },
    /// A count or length field was negative.
    #[error("negative length {0}")]
    NegativeLength(i32),
    /// A tag byte (value tag, event kind, modifier kind...) that the protocol does not define.
    #[error("invalid {what} tag {tag} (0x{tag:02x})")]
    InvalidTag { what: &'static str, tag: u8 },
    /// Bytes were left over after the body was decoded.
    #[error("{0} trailing bytes after the body")]
    TrailingBytes(usize),
    /// An untagged value whose type only the target VM knows (`SetValues` of fields or array
    /// elements) was decoded without a [`UntaggedTypes`] context, or the context did not know it.
    #[error("cannot tell the type of an untagged value for {0}")]
    UnknownUntaggedType(&'static str),
    /// An ID size outside 1..=8 was configured.
    #[error("unsupported ID size {0}")]
    BadIdSize(u8),
}

/// Tells the decoder the JVM type of untagged values, which the wire does not carry.
///
/// Only the side that owns the objects (the agent) can answer; a client never decodes these commands.
pub trait UntaggedTypes {
    /// The tag of a field's type, from its declared signature.
    fn field_tag(&self, field: crate::ids::FieldId) -> Option<Tag>;
    /// The tag of an array's component type.
    fn array_component_tag(&self, array: crate::ids::ArrayId) -> Option<Tag>;
}

/// A bounds-checked cursor over a packet body.
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    sizes: IdSizes,
    untagged: Option<&'a dyn UntaggedTypes>,
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8], sizes: IdSizes) -> Self {
        Reader { buf, pos: 0, sizes, untagged: None }
    }

    /// A reader that can decode untagged field and array values by asking `types`.
    pub fn with_untagged_types(buf: &'a [u8], sizes: IdSizes, types: &'a dyn UntaggedTypes) -> Self {
        Reader { buf, pos: 0, sizes, untagged: Some(types) }
    }

    pub fn sizes(&self) -> IdSizes {
        self.sizes
    }

    pub fn untagged_types(&self) -> Option<&'a dyn UntaggedTypes> {
        self.untagged
    }

    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    pub fn position(&self) -> usize {
        self.pos
    }

    /// Fails unless every byte was consumed: a body with junk after it is malformed.
    pub fn finish(&self) -> Result<(), DecodeError> {
        match self.remaining() {
            0 => Ok(()),
            n => Err(DecodeError::TrailingBytes(n)),
        }
    }

    pub fn bytes(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        if self.remaining() < n {
            return Err(DecodeError::Truncated { offset: self.pos, needed: n, available: self.remaining() });
        }
        let out = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(out)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.bytes(N)?);
        Ok(out)
    }

    pub fn u8(&mut self) -> Result<u8, DecodeError> {
        Ok(self.array::<1>()?[0])
    }
    pub fn i8(&mut self) -> Result<i8, DecodeError> {
        Ok(self.u8()? as i8)
    }
    pub fn bool(&mut self) -> Result<bool, DecodeError> {
        Ok(self.u8()? != 0)
    }
    pub fn u16(&mut self) -> Result<u16, DecodeError> {
        Ok(u16::from_be_bytes(self.array()?))
    }
    pub fn i16(&mut self) -> Result<i16, DecodeError> {
        Ok(i16::from_be_bytes(self.array()?))
    }
    pub fn i32(&mut self) -> Result<i32, DecodeError> {
        Ok(i32::from_be_bytes(self.array()?))
    }
    pub fn u32(&mut self) -> Result<u32, DecodeError> {
        Ok(u32::from_be_bytes(self.array()?))
    }
    pub fn i64(&mut self) -> Result<i64, DecodeError> {
        Ok(i64::from_be_bytes(self.array()?))
    }
    pub fn u64(&mut self) -> Result<u64, DecodeError> {
        Ok(u64::from_be_bytes(self.array()?))
    }
    pub fn f32(&mut self) -> Result<f32, DecodeError> {
        Ok(f32::from_bits(self.u32()?))
    }
    pub fn f64(&mut self) -> Result<f64, DecodeError> {
        Ok(f64::from_bits(self.u64()?))
    }

    /// An unsigned big-endian integer of `size` bytes (an ID).
    pub fn id(&mut self, size: u8) -> Result<u64, DecodeError> {
        if !(1..=8).contains(&size) {
            return Err(DecodeError::BadIdSize(size));
        }
        let raw = self.bytes(size as usize)?;
        Ok(raw.iter().fold(0u64, |acc, b| (acc << 8) | u64::from(*b)))
    }

    /// A non-negative `int` count of items, each at least `min_item_size` bytes long. A count the
    /// remaining bytes cannot hold is rejected before anything is allocated for it.
    pub fn count(&mut self, min_item_size: usize) -> Result<usize, DecodeError> {
        let n = self.i32()?;
        if n < 0 {
            return Err(DecodeError::NegativeLength(n));
        }
        let n = n as usize;
        let needed = n.saturating_mul(min_item_size.max(1));
        if needed > self.remaining() {
            return Err(DecodeError::Truncated { offset: self.pos, needed, available: self.remaining() });
        }
        Ok(n)
    }

    /// A JDWP string: an `int` byte length, then UTF-8 (modified UTF-8 accepted too).
    pub fn string(&mut self) -> Result<String, DecodeError> {
        let len = self.count(1)?;
        Ok(mutf8::decode(self.bytes(len)?))
    }
}

/// Builds a packet body.
pub struct Writer {
    buf: Vec<u8>,
    sizes: IdSizes,
    /// Where IDs and counts went (fuzzing only; see [`Writer::with_marks`]).
    #[cfg(any(test, feature = "sample"))]
    marks: Option<Vec<Mark>>,
}

/// What a [`Mark`] points at.
#[cfg(any(test, feature = "sample"))]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MarkKind {
    /// An ID of `len` bytes.
    Id,
    /// An `int` count or string length.
    Count,
}

/// The place of one ID or count in an encoded body, so a fuzzer can rewrite it (a lying count, a
/// stale ID) knowing the layout, without a second description of the protocol.
#[cfg(any(test, feature = "sample"))]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mark {
    pub offset: usize,
    pub len: u8,
    pub kind: MarkKind,
    /// The value written.
    pub value: u64,
}

impl Writer {
    pub fn new(sizes: IdSizes) -> Self {
        Writer {
            // Most bodies are small (an event, an ID, a status): room for them without regrowing.
            buf: Vec::with_capacity(64),
            sizes,
            #[cfg(any(test, feature = "sample"))]
            marks: None,
        }
    }

    /// A writer that records a [`Mark`] for every ID and count it writes.
    #[cfg(any(test, feature = "sample"))]
    pub fn with_marks(sizes: IdSizes) -> Self {
        Writer { buf: Vec::new(), sizes, marks: Some(Vec::new()) }
    }

    /// The marks recorded so far (empty unless made by [`Writer::with_marks`]).
    #[cfg(any(test, feature = "sample"))]
    pub fn marks(&self) -> &[Mark] {
        self.marks.as_deref().unwrap_or(&[])
    }

    #[cfg(any(test, feature = "sample"))]
    fn mark(&mut self, kind: MarkKind, len: usize, value: u64) {
        if let Some(marks) = self.marks.as_mut() {
            marks.push(Mark { offset: self.buf.len(), len: len as u8, kind, value });
        }
    }

    pub fn sizes(&self) -> IdSizes {
        self.sizes
    }

    pub fn into_bytes(self) -> Vec<u8> {
        self.buf
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.buf
    }

    pub fn bytes(&mut self, b: &[u8]) {
        self.buf.extend_from_slice(b);
    }
    pub fn u8(&mut self, v: u8) {
        self.buf.push(v);
    }
    pub fn i8(&mut self, v: i8) {
        self.buf.push(v as u8);
    }
    pub fn bool(&mut self, v: bool) {
        self.buf.push(v as u8);
    }
    pub fn u16(&mut self, v: u16) {
        self.bytes(&v.to_be_bytes());
    }
    pub fn i16(&mut self, v: i16) {
        self.bytes(&v.to_be_bytes());
    }
    pub fn i32(&mut self, v: i32) {
        self.bytes(&v.to_be_bytes());
    }
    pub fn u32(&mut self, v: u32) {
        self.bytes(&v.to_be_bytes());
    }
    pub fn i64(&mut self, v: i64) {
        self.bytes(&v.to_be_bytes());
    }
    pub fn u64(&mut self, v: u64) {
        self.bytes(&v.to_be_bytes());
    }
    pub fn f32(&mut self, v: f32) {
        self.u32(v.to_bits());
    }
    pub fn f64(&mut self, v: f64) {
        self.u64(v.to_bits());
    }

    /// An ID of `size` bytes; the high bytes of `v` beyond that size are dropped (an ID that does
    /// not fit its negotiated size was never handed out by the VM).
    pub fn id(&mut self, v: u64, size: u8) {
        let size = size.clamp(1, 8) as usize;
        #[cfg(any(test, feature = "sample"))]
        self.mark(MarkKind::Id, size, v);
        self.bytes(&v.to_be_bytes()[8 - size..]);
    }

    /// A count prefix. Counts above `i32::MAX` cannot be expressed in JDWP; they are clamped so the
    /// peer sees a short, self-consistent list rather than garbage (callers never build such lists).
    pub fn count(&mut self, n: usize) {
        #[cfg(any(test, feature = "sample"))]
        self.mark(MarkKind::Count, 4, n as u64);
        self.i32(i32::try_from(n).unwrap_or(i32::MAX));
    }

    /// A JDWP string: an `int` byte length, then standard UTF-8, as the JDK's agent and JDI write
    /// them (U+0000 as one zero byte, characters beyond the BMP as four bytes; JDI decodes with
    /// Java's UTF-8 decoder, which turns modified UTF-8's `C0 80` and surrogate halves into
    /// U+FFFD: OpenJDK's UTF8Test). Reading accepts both forms.
    pub fn string(&mut self, s: &str) {
        self.count(s.len());
        self.bytes(s.as_bytes());
    }
}

/// A type with a JDWP wire layout. One implementation serves both directions of both sides.
pub trait JdwpCodec: Sized {
    fn encode(&self, w: &mut Writer);
    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError>;
    /// The fewest bytes one value can take, used to reject impossible counts before allocating.
    const MIN_SIZE: usize = 1;
}

/// Encodes a whole body.
pub fn encode_body<T: JdwpCodec>(value: &T, sizes: IdSizes) -> Vec<u8> {
    let mut w = Writer::new(sizes);
    value.encode(&mut w);
    w.into_bytes()
}

/// Decodes a whole body, rejecting trailing bytes.
pub fn decode_body<T: JdwpCodec>(body: &[u8], sizes: IdSizes) -> Result<T, DecodeError> {
    let mut r = Reader::new(body, sizes);
    let v = T::decode(&mut r)?;
    r.finish()?;
    Ok(v)
}

macro_rules! primitive_codec {
    ($($ty:ty => $method:ident, $size:expr;)*) => {$(
        impl JdwpCodec for $ty {
            fn encode(&self, w: &mut Writer) { w.$method(*self) }
            fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> { r.$method() }
            const MIN_SIZE: usize = $size;
        }
    )*};
}

primitive_codec! {
    u8 => u8, 1;
    i8 => i8, 1;
    bool => bool, 1;
    u16 => u16, 2;
    i16 => i16, 2;
    i32 => i32, 4;
    u32 => u32, 4;
    i64 => i64, 8;
    u64 => u64, 8;
    f32 => f32, 4;
    f64 => f64, 8;
}

impl JdwpCodec for String {
    fn encode(&self, w: &mut Writer) {
        w.string(self)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        r.string()
    }
    const MIN_SIZE: usize = 4;
}

/// `repeated`: an `int` count, then the items.
impl<T: JdwpCodec> JdwpCodec for Vec<T> {
    fn encode(&self, w: &mut Writer) {
        w.count(self.len());
        for item in self {
            item.encode(w);
        }
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let n = r.count(T::MIN_SIZE)?;
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            out.push(T::decode(r)?);
        }
        Ok(out)
    }
    const MIN_SIZE: usize = 4;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_of_every_size_round_trip() {
        for size in 1..=8u8 {
            let max = if size == 8 { u64::MAX } else { (1u64 << (8 * size)) - 1 };
            let mut w = Writer::new(IdSizes::default());
            w.id(max, size);
            assert_eq!(w.as_bytes().len(), size as usize);
            let mut r = Reader::new(w.as_bytes(), IdSizes::default());
            assert_eq!(r.id(size).unwrap(), max);
        }
    }

    #[test]
    fn strings_are_written_as_standard_utf8_and_read_in_either_form() {
        let s = "xx\u{0}yy\u{10000}";
        let mut w = Writer::new(IdSizes::default());
        w.string(s);
        let mut expected = 9i32.to_be_bytes().to_vec();
        expected.extend_from_slice(b"xx\0yy\xf0\x90\x80\x80");
        assert_eq!(w.as_bytes(), expected);
        assert_eq!(Reader::new(w.as_bytes(), IdSizes::default()).string().unwrap(), s);
        // Modified UTF-8 (C0 80, a surrogate pair as two three-byte sequences) still reads.
        let mut m = 12i32.to_be_bytes().to_vec();
        m.extend_from_slice(b"xx\xc0\x80yy\xed\xa0\x80\xed\xb0\x80");
        assert_eq!(Reader::new(&m, IdSizes::default()).string().unwrap(), s);
    }

    #[test]
    fn lying_count_is_rejected_before_allocation() {
        let mut w = Writer::new(IdSizes::default());
        w.i32(i32::MAX);
        w.i32(1);
        let err = decode_body::<Vec<i32>>(w.as_bytes(), IdSizes::default()).unwrap_err();
        assert!(matches!(err, DecodeError::Truncated { .. }), "{err:?}");
        let mut w = Writer::new(IdSizes::default());
        w.i32(-1);
        assert_eq!(decode_body::<Vec<i32>>(w.as_bytes(), IdSizes::default()), Err(DecodeError::NegativeLength(-1)));
    }

    #[test]
    fn marks_locate_ids_and_counts() {
        use crate::commands::reference_type::GetValues;
        use crate::ids::{FieldId, ReferenceTypeId};
        let sizes = IdSizes { reference_type_id: 4, field_id: 2, ..IdSizes::default() };
        let cmd = GetValues { ref_type: ReferenceTypeId(9), fields: vec![FieldId(1), FieldId(2)] };
        let mut w = Writer::with_marks(sizes);
        cmd.encode(&mut w);
        let marks: Vec<(usize, u8, MarkKind, u64)> =
            w.marks().iter().map(|m| (m.offset, m.len, m.kind, m.value)).collect();
        assert_eq!(
            marks,
            [(0, 4, MarkKind::Id, 9), (4, 4, MarkKind::Count, 2), (8, 2, MarkKind::Id, 1), (10, 2, MarkKind::Id, 2)]
        );
        assert!(Writer::new(sizes).marks().is_empty());
    }

    #[test]
    fn an_id_source_chooses_ids_by_kind() {
        use crate::ids::{IdKind, ThreadId};
        use crate::sample::{Gen, IdSource, Sample};
        struct Threads;
        impl IdSource for Threads {
            fn id(&mut self, kind: IdKind, _: u64) -> Option<u64> {
                (kind == IdKind::ThreadId).then_some(77)
            }
        }
        let mut g = Gen::new(1, IdSizes::default()).with_id_source(Box::new(Threads));
        assert_eq!(ThreadId::sample(&mut g), ThreadId(77));
        assert_ne!(crate::ids::ClassId::sample(&mut g).0, 77);
    }

    #[test]
    fn trailing_bytes_are_an_error() {
        assert_eq!(decode_body::<u8>(&[1, 2], IdSizes::default()), Err(DecodeError::TrailingBytes(1)));
    }
}
