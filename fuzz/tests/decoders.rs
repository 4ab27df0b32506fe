//! Property tests for the decoders, with malformed input generated from the layout tables: every
//! command's and reply's decoder, and the transport's frame decoder, must return (a value or an
//! error) for whatever the fuzzer's generator makes (lying counts, wrong IDs, truncations,
//! trailing bytes, flipped bytes, random bodies, lying lengths), never panic.

use std::rc::Rc;

use bytes::BytesMut;
use jdwp_fuzz::generate::{Generator, HEADER, Options, every_command};
use jdwp_fuzz::pool::{Cat, Pool};
use jdwp_protocol::sample::Gen;
use jdwp_protocol::{ArrayId, FieldId, IdSizes, Tag, UntaggedTypes};
use jdwp_transports::FrameDecoder;

struct EverythingIs(Tag);

impl UntaggedTypes for EverythingIs {
    fn field_tag(&self, _: FieldId) -> Option<Tag> {
        Some(self.0)
    }
    fn array_component_tag(&self, _: ArrayId) -> Option<Tag> {
        Some(self.0)
    }
}

fn pool(sizes: IdSizes) -> Rc<Pool> {
    let mut pool = Pool::new(sizes);
    for (i, cat) in Cat::ALL.into_iter().enumerate() {
        pool.push(cat, 0x100 + i as u64, 0);
    }
    Rc::new(pool)
}

#[test]
fn generated_bodies_never_panic_a_command_or_reply_decoder() {
    let oracles =
        [EverythingIs(Tag::Int), EverythingIs(Tag::Object), EverythingIs(Tag::Double), EverythingIs(Tag::Void)];
    for sizes in
        [IdSizes::default(), IdSizes { field_id: 4, method_id: 4, object_id: 4, reference_type_id: 4, frame_id: 4 }]
    {
        let pool = pool(sizes);
        let g = Generator::new(11, Options { vendor: true });
        let mut decoded = 0;
        for info in every_command() {
            for i in 0..300u64 {
                let p = g.packet_of(i, info, &pool);
                let body = p.body();
                let (c, r) = (info.check.decode_garbage)(body, sizes, &oracles[i as usize % oracles.len()]);
                let _ = (info.check.decode_reply)(body, sizes);
                // Bodies of a reply's layout, mutated the same way, against the reply decoder.
                let mut rg = Gen::new(i, sizes).hostile(true);
                let (_, mut reply) = (info.check.sample_bodies)(&mut rg);
                if i % 3 == 0 && reply.len() > 4 {
                    let at = rg.pick(reply.len() - 3);
                    reply[at..at + 4].copy_from_slice(&i32::MAX.to_be_bytes());
                }
                reply.truncate(reply.len() - rg.pick(reply.len().min(3) + 1));
                let _ = (info.check.decode_reply)(&reply, sizes);
                decoded += usize::from(c.is_ok()) + usize::from(r.is_ok());
            }
        }
        assert!(decoded > 1000, "too few generated bodies decoded at all ({decoded}): the generator drifted");
    }
}

#[test]
fn generated_frames_never_panic_the_frame_decoder() {
    let pool = pool(IdSizes::default());
    let g = Generator::new(12, Options { vendor: true });
    let mut split = Gen::new(1, IdSizes::default());
    for strict in [false, true] {
        for i in 0..20_000u64 {
            let p = g.packet(i, &pool);
            let mut decoder = FrameDecoder::new(1 << 20).with_strict_flags(strict);
            let mut buf = BytesMut::new();
            // Arrives in pieces, then a second packet right behind it.
            let mut stream = p.bytes.clone();
            stream.extend_from_slice(&g.packet(i + 1, &pool).bytes);
            let mut rest = &stream[..];
            let mut frames = 0;
            while !rest.is_empty() {
                let n = 1 + split.pick(rest.len().min(HEADER * 2));
                buf.extend_from_slice(&rest[..n]);
                rest = &rest[n..];
                match decoder.decode(&mut buf) {
                    Ok(Some(_)) => frames += 1,
                    Ok(None) => {}
                    Err(_) => break, // a broken frame ends the stream; fine
                }
            }
            assert!(frames <= 2 + stream.len() / HEADER);
        }
    }
}
