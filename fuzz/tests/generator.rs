//! The generator without a JVM: deterministic per seed, every command of the table reachable and
//! buildable, frames well formed unless a header mutation says otherwise, pool IDs recorded by slot.

use std::collections::BTreeSet;
use std::rc::Rc;

use jdwp_fuzz::generate::{Expect, Generator, HEADER, Options, every_command, packet_id};
use jdwp_fuzz::pool::{Cat, Pool};
use jdwp_protocol::IdSizes;
use jdwp_transports::{Packet, PacketKind};

/// A pool with a few IDs of every category, distinct across categories.
fn fake_pool(sizes: IdSizes) -> Rc<Pool> {
    let mut pool = Pool::new(sizes);
    for (i, cat) in Cat::ALL.into_iter().enumerate() {
        for k in 0..3u64 {
            let owner = if matches!(cat, Cat::Method | Cat::Field) { 0x900 + k % 2 } else { 0 };
            pool.push(cat, 0x1000 * (i as u64 + 1) + k, owner);
        }
    }
    pool.push(Cat::Class, 0x900, 0);
    pool.push(Cat::Class, 0x901, 0);
    pool.frame_thread = Some(0x1000);
    Rc::new(pool)
}

const SIZES: &[IdSizes] = &[
    IdSizes { field_id: 8, method_id: 8, object_id: 8, reference_type_id: 8, frame_id: 8 },
    IdSizes { field_id: 4, method_id: 4, object_id: 4, reference_type_id: 4, frame_id: 4 },
];

#[test]
fn packets_are_deterministic_per_seed_and_index() {
    let pool = fake_pool(SIZES[0]);
    let a = Generator::new(7, Options { vendor: true });
    let b = Generator::new(7, Options { vendor: true });
    let c = Generator::new(8, Options { vendor: true });
    let mut differ = 0;
    for i in 0..500 {
        let (pa, pb, pc) = (a.packet(i, &pool), b.packet(i, &pool), c.packet(i, &pool));
        assert_eq!(pa.bytes, pb.bytes, "packet {i}");
        assert_eq!(pa.patches, pb.patches, "packet {i}");
        assert_eq!(pa.mutations, pb.mutations, "packet {i}");
        if pa.bytes != pc.bytes {
            differ += 1;
        }
    }
    assert!(differ > 450, "another seed gave the same packets {} times of 500", 500 - differ);
    // Order does not matter: packet 123 alone is packet 123 of the sequence.
    assert_eq!(a.packet(123, &pool).bytes, b.packet(123, &pool).bytes);
}

#[test]
fn every_command_of_the_table_is_picked_and_builds() {
    let pool = fake_pool(SIZES[0]);
    let g = Generator::new(1, Options { vendor: true });
    let table: BTreeSet<(u8, u8)> = every_command().map(|c| (c.set, c.cmd)).collect();
    let generated: BTreeSet<(u8, u8)> = g.commands().map(|c| (c.set, c.cmd)).collect();
    assert_eq!(generated, table, "the generator's table is the protocol crate's, vendor set included");
    assert!(table.iter().any(|(s, _)| *s == 128), "the vendor set is in the table");

    let mut seen = BTreeSet::new();
    for i in 0..60_000 {
        let p = g.packet(i, &pool);
        seen.insert((p.command.set, p.command.cmd));
    }
    let missing: Vec<_> = table.difference(&seen).collect();
    assert!(missing.is_empty(), "never picked in 60000 packets: {missing:?}");

    for sizes in SIZES {
        let pool = fake_pool(*sizes);
        for info in every_command() {
            for i in 0..50 {
                let p = g.packet_of(i, info, &pool);
                assert_eq!(p.command.qualified_name, info.qualified_name);
                assert!(p.bytes.len() >= HEADER);
            }
        }
    }

    let no_vendor = Generator::new(1, Options { vendor: false });
    assert!(no_vendor.commands().all(|c| c.set < 128));
}

#[test]
fn frames_are_well_formed_unless_the_header_is_the_mutation() {
    let g = Generator::new(3, Options { vendor: true });
    for sizes in SIZES {
        let pool = fake_pool(*sizes);
        let (mut header_mutations, mut body_mutations) = (0, 0);
        for i in 0..20_000 {
            let p = g.packet(i, &pool);
            let length = u32::from_be_bytes(p.bytes[..4].try_into().unwrap());
            if p.expect == Expect::Desync {
                header_mutations += 1;
                assert_ne!(length as usize, p.bytes.len(), "packet {i}: a length lie that tells the truth");
                continue;
            }
            assert_eq!(length as usize, p.bytes.len(), "packet {i}");
            assert_eq!(p.id(), packet_id(i));
            let decoded = Packet::decode_frame(&p.bytes).unwrap_or_else(|e| panic!("packet {i}: {e}"));
            assert_eq!(decoded.id, packet_id(i));
            assert_eq!(decoded.body, p.body());
            let flags = p.bytes[8];
            if flags & 0x80 != 0 {
                assert_eq!(p.expect, Expect::NoReply);
                assert!(decoded.is_reply());
                continue;
            }
            let PacketKind::Command { set, cmd } = decoded.kind else { panic!("packet {i} is not a command") };
            if p.mutations.iter().any(|m| m.starts_with("unknown-command")) {
                header_mutations += 1;
                assert!(jdwp_protocol::command_info(set, cmd).is_none(), "packet {i}: {set}/{cmd} is known");
            } else {
                assert_eq!((set, cmd), (p.command.set, p.command.cmd), "packet {i}");
            }
            if !p.mutations.is_empty() {
                body_mutations += 1;
            }
        }
        assert!(header_mutations > 100, "{header_mutations} header mutations in 20000 packets");
        assert!(body_mutations > 5000, "{body_mutations} mutated packets in 20000");
    }
}

#[test]
fn pool_ids_are_recorded_by_slot_and_wrong_kinds_occur() {
    let sizes = SIZES[0];
    let pool = fake_pool(sizes);
    let g = Generator::new(5, Options { vendor: true });
    let (mut patches, mut wrong) = (0, 0);
    for i in 0..5_000 {
        let p = g.packet(i, &pool);
        for patch in &p.patches {
            let want = pool.slot(patch.cat, patch.slot).expect("slot exists");
            let at = HEADER + patch.offset;
            let got = &p.bytes[at..at + patch.len as usize];
            assert_eq!(got, &want.to_be_bytes()[8 - patch.len as usize..], "packet {i}: {patch:?}");
            patches += 1;
        }
        // The first ID of ThreadReference commands is a thread: count other kinds there.
        if p.command.set == 11
            && p.mutations.is_empty()
            && let Some(first) = p.patches.iter().find(|x| x.offset == 0)
            && first.cat != Cat::Thread
        {
            wrong += 1;
        }
    }
    assert!(patches > 3_000, "{patches} pool IDs in 5000 packets");
    assert!(wrong > 5, "wrong-kind IDs where a thread belongs: {wrong}");
}

#[test]
fn a_finding_file_round_trips() {
    use jdwp_fuzz::finding::{Finding, Recorded, parse};
    let pool = fake_pool(SIZES[0]);
    let g = Generator::new(9, Options { vendor: true });
    let p = g.packet(42, &pool);
    let c = g.packet(41, &pool);
    let f = Finding {
        kind: "crash".into(),
        seed: 9,
        agent: "ours".into(),
        command: p.command.qualified_name.into(),
        mutations: p.mutations.join(" "),
        detail: "signal 11".into(),
        packet: Recorded::of(&p),
        context: vec![Recorded::of(&c)],
        output: "line one\nline two".into(),
    };
    let (packet, context) = parse(&f.to_text()).unwrap();
    assert_eq!(packet.bytes, p.bytes);
    assert_eq!(packet.patches, p.patches);
    assert_eq!(packet.expect, p.expect);
    assert_eq!(context.len(), 1);
    assert_eq!(context[0].bytes, c.bytes);
    assert_eq!(packet.resolved(&pool), p.bytes, "the same pool resolves to the same bytes");
}
