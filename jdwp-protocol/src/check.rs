//! Generic checks every command-table entry carries in test builds: sample round trips and
//! garbage decoding. They live here, not in each test, so no command can be forgotten.

use crate::codec::{DecodeError, JdwpCodec, Reader, UntaggedTypes, Writer, decode_body, encode_body};
use crate::ids::IdSizes;
use crate::sample::{Gen, Sample};

/// Whether a byte string decoded as the command and as its reply.
pub type DecodeOutcome = (Result<(), DecodeError>, Result<(), DecodeError>);

/// The checks of one command-table entry.
#[derive(Clone, Copy)]
pub struct CommandCheck {
    /// Samples the command and its reply, encodes, decodes, and compares.
    pub round_trip: fn(&mut Gen) -> Result<(), String>,
    /// Decodes arbitrary bytes as the command and as its reply; must return, never panic.
    pub decode_garbage: fn(&[u8], IdSizes, &dyn UntaggedTypes) -> DecodeOutcome,
    /// Encodes a sample command and a sample reply.
    pub sample_bodies: fn(&mut Gen) -> (Vec<u8>, Vec<u8>),
    /// Samples a command and encodes it into the given writer (which may record marks).
    pub sample_command: fn(&mut Gen, &mut Writer),
    /// Decodes a whole reply body (trailing bytes are an error), as a debugger would.
    pub decode_reply: fn(&[u8], IdSizes) -> Result<(), DecodeError>,
}

/// Encodes a sample of `T` and decodes it back with `g` as the untagged-type oracle.
pub fn round_trip<T: JdwpCodec + Sample + PartialEq + std::fmt::Debug>(g: &mut Gen) -> Result<(), String> {
    let value = T::sample(g);
    let sizes = g.sizes();
    let bytes = encode_body(&value, sizes);
    let mut r = Reader::with_untagged_types(&bytes, sizes, g);
    let decoded = T::decode(&mut r).map_err(|e| format!("decode failed: {e} for {value:?} ({bytes:02x?})"))?;
    r.finish().map_err(|e| format!("{e} for {value:?}"))?;
    if decoded != value {
        return Err(format!("round trip changed the value: {value:?} became {decoded:?}"));
    }
    if encode_body(&decoded, sizes) != bytes {
        return Err(format!("re-encoding {decoded:?} gave different bytes"));
    }
    Ok(())
}

pub fn round_trip_command<C>(g: &mut Gen) -> Result<(), String>
where
    C: crate::Command + Sample + PartialEq + std::fmt::Debug,
    C::Reply: Sample + PartialEq + std::fmt::Debug,
{
    round_trip::<C>(g).map_err(|e| format!("command: {e}"))?;
    round_trip::<C::Reply>(g).map_err(|e| format!("reply: {e}"))
}

/// Decodes `bytes` as a `T` (trailing bytes allowed: the point is how far the decoder gets).
pub fn decode_garbage<T: JdwpCodec>(
    bytes: &[u8],
    sizes: IdSizes,
    oracle: &dyn UntaggedTypes,
) -> Result<(), DecodeError> {
    let mut r = Reader::with_untagged_types(bytes, sizes, oracle);
    T::decode(&mut r).map(drop)
}

pub fn decode_garbage_command<C: crate::Command>(
    bytes: &[u8],
    sizes: IdSizes,
    oracle: &dyn UntaggedTypes,
) -> DecodeOutcome {
    (decode_garbage::<C>(bytes, sizes, oracle), decode_garbage::<C::Reply>(bytes, sizes, oracle))
}

pub fn sample_bodies<C>(g: &mut Gen) -> (Vec<u8>, Vec<u8>)
where
    C: crate::Command + Sample,
    C::Reply: Sample,
{
    let command = encode_body(&C::sample(g), g.sizes());
    let reply = encode_body(&C::Reply::sample(g), g.sizes());
    (command, reply)
}

pub fn sample_command<C: crate::Command + Sample>(g: &mut Gen, w: &mut Writer) {
    C::sample(g).encode(w)
}

pub fn decode_reply<C: crate::Command>(bytes: &[u8], sizes: IdSizes) -> Result<(), DecodeError> {
    decode_body::<C::Reply>(bytes, sizes).map(drop)
}
