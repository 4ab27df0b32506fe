//! Whole-protocol checks: the command table is complete, every command and reply round-trips at
//! every ID width, and no decoder panics on garbage.

use crate::check::round_trip;
use crate::codec::decode_body;
use crate::ids::IdSizes;
use crate::sample::Gen;
use crate::{CommandInfo, all_commands, command_info, vendor_commands};

/// The JDK 25 protocol (JDK 17's and JDK 19's `IsVirtual`), command set by command set: (set number,
/// set name, [command names by number]).
/// Written out independently of the layout tables so that a missing or misnumbered definition fails.
type SetSpec = (u8, &'static str, &'static [(u8, &'static str)]);

const SPEC: &[SetSpec] = &[
    (
        1,
        "VirtualMachine",
        &[
            (1, "Version"),
            (2, "ClassesBySignature"),
            (3, "AllClasses"),
            (4, "AllThreads"),
            (5, "TopLevelThreadGroups"),
            (6, "Dispose"),
            (7, "IdSizes"),
            (8, "Suspend"),
            (9, "Resume"),
            (10, "Exit"),
            (11, "CreateString"),
            (12, "Capabilities"),
            (13, "ClassPaths"),
            (14, "DisposeObjects"),
            (15, "HoldEvents"),
            (16, "ReleaseEvents"),
            (17, "CapabilitiesNew"),
            (18, "RedefineClasses"),
            (19, "SetDefaultStratum"),
            (20, "AllClassesWithGeneric"),
            (21, "InstanceCounts"),
            (22, "AllModules"),
        ],
    ),
    (
        2,
        "ReferenceType",
        &[
            (1, "Signature"),
            (2, "ClassLoader"),
            (3, "Modifiers"),
            (4, "Fields"),
            (5, "Methods"),
            (6, "GetValues"),
            (7, "SourceFile"),
            (8, "NestedTypes"),
            (9, "Status"),
            (10, "Interfaces"),
            (11, "ClassObject"),
            (12, "SourceDebugExtension"),
            (13, "SignatureWithGeneric"),
            (14, "FieldsWithGeneric"),
            (15, "MethodsWithGeneric"),
            (16, "Instances"),
            (17, "ClassFileVersion"),
            (18, "ConstantPool"),
            (19, "Module"),
        ],
    ),
    (3, "ClassType", &[(1, "Superclass"), (2, "SetValues"), (3, "InvokeMethod"), (4, "NewInstance")]),
    (4, "ArrayType", &[(1, "NewInstance")]),
    (5, "InterfaceType", &[(1, "InvokeMethod")]),
    (
        6,
        "Method",
        &[(1, "LineTable"), (2, "VariableTable"), (3, "Bytecodes"), (4, "IsObsolete"), (5, "VariableTableWithGeneric")],
    ),
    (8, "Field", &[]),
    (
        9,
        "ObjectReference",
        &[
            (1, "ReferenceType"),
            (2, "GetValues"),
            (3, "SetValues"),
            (5, "MonitorInfo"),
            (6, "InvokeMethod"),
            (7, "DisableCollection"),
            (8, "EnableCollection"),
            (9, "IsCollected"),
            (10, "ReferringObjects"),
        ],
    ),
    (10, "StringReference", &[(1, "Value")]),
    (
        11,
        "ThreadReference",
        &[
            (1, "Name"),
            (2, "Suspend"),
            (3, "Resume"),
            (4, "Status"),
            (5, "ThreadGroup"),
            (6, "Frames"),
            (7, "FrameCount"),
            (8, "OwnedMonitors"),
            (9, "CurrentContendedMonitor"),
            (10, "Stop"),
            (11, "Interrupt"),
            (12, "SuspendCount"),
            (13, "OwnedMonitorsStackDepthInfo"),
            (14, "ForceEarlyReturn"),
            (15, "IsVirtual"),
        ],
    ),
    (12, "ThreadGroupReference", &[(1, "Name"), (2, "Parent"), (3, "Children")]),
    (13, "ArrayReference", &[(1, "Length"), (2, "GetValues"), (3, "SetValues")]),
    (14, "ClassLoaderReference", &[(1, "VisibleClasses")]),
    (15, "EventRequest", &[(1, "Set"), (2, "Clear"), (3, "ClearAllBreakpoints")]),
    (16, "StackFrame", &[(1, "GetValues"), (2, "SetValues"), (3, "ThisObject"), (4, "PopFrames")]),
    (17, "ClassObjectReference", &[(1, "ReflectedType")]),
    (18, "ModuleReference", &[(1, "Name"), (2, "ClassLoader")]),
    (64, "Event", &[(100, "Composite")]),
];

/// ID widths to exercise: HotSpot's, a narrower uniform one, and a mixed set with the extremes.
const SIZES: &[IdSizes] = &[
    IdSizes { field_id: 8, method_id: 8, object_id: 8, reference_type_id: 8, frame_id: 8 },
    IdSizes { field_id: 4, method_id: 4, object_id: 4, reference_type_id: 4, frame_id: 4 },
    IdSizes { field_id: 1, method_id: 2, object_id: 3, reference_type_id: 5, frame_id: 7 },
];

#[test]
fn command_table_has_all_95_commands_of_18_sets() {
    assert_eq!(SPEC.len(), 18, "JDK 25 has 18 command sets");
    let spec_total: usize = SPEC.iter().map(|(_, _, cmds)| cmds.len()).sum();
    assert_eq!(spec_total, 95, "JDK 17's 94 and JDK 19's ThreadReference.IsVirtual");

    for (set, set_name, cmds) in SPEC {
        for (cmd, name) in *cmds {
            let info =
                command_info(*set, *cmd).unwrap_or_else(|| panic!("no definition for {set_name}.{name} ({set}/{cmd})"));
            assert_eq!((info.set_name, info.name), (*set_name, *name), "{set}/{cmd} is misnamed");
        }
    }
    let table: Vec<&CommandInfo> = all_commands().collect();
    assert_eq!(table.len(), 95, "the table has commands the spec does not: {table:?}");
    let mut keys: Vec<(u8, u8)> = table.iter().map(|c| (c.set, c.cmd)).collect();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), 95, "duplicate (set, command) numbers");
}

#[test]
fn every_command_and_reply_round_trips_at_every_id_width() {
    for info in all_commands().chain(vendor_commands()) {
        for (i, sizes) in SIZES.iter().enumerate() {
            for seed in 0..200u64 {
                let mut g = Gen::new(seed * 31 + i as u64, *sizes);
                if let Err(e) = (info.check.round_trip)(&mut g) {
                    panic!("{info:?} with {sizes:?}, seed {seed}: {e}");
                }
            }
        }
    }
}

/// An oracle that claims every untagged value is of one type, so garbage reaches the value decoders.
struct EverythingIs(crate::Tag);

impl crate::UntaggedTypes for EverythingIs {
    fn field_tag(&self, _: crate::FieldId) -> Option<crate::Tag> {
        Some(self.0)
    }
    fn array_component_tag(&self, _: crate::ArrayId) -> Option<crate::Tag> {
        Some(self.0)
    }
}

#[test]
fn random_bytes_never_panic_any_decoder() {
    let mut rng = Gen::new(0xdead_beef, IdSizes::default());
    let oracles = [EverythingIs(crate::Tag::Int), EverythingIs(crate::Tag::Object), EverythingIs(crate::Tag::Void)];
    for info in all_commands().chain(vendor_commands()) {
        for sizes in SIZES {
            for i in 0..300 {
                let len = rng.below(48) as usize;
                let mut bytes: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
                // Plausible small counts reach deeper into nested layouts than random ones.
                if i % 2 == 0 && bytes.len() >= 4 {
                    bytes[..4].copy_from_slice(&(rng.below(3) as i32).to_be_bytes());
                }
                // Only the absence of a panic matters here; a result either way is fine.
                let _ = (info.check.decode_garbage)(&bytes, *sizes, &oracles[i % oracles.len()]);
            }
            // A huge claimed count must be refused, not allocated.
            let _ = (info.check.decode_garbage)(&[0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0], *sizes, &oracles[0]);
        }
    }
}

#[test]
fn every_strict_prefix_of_a_valid_body_is_an_error() {
    for info in all_commands().chain(vendor_commands()) {
        for sizes in SIZES {
            for seed in 0..20u64 {
                let mut g = Gen::new(seed, *sizes);
                let (command, reply) = (info.check.sample_bodies)(&mut g);
                for cut in 0..command.len() {
                    let (c, _) = (info.check.decode_garbage)(&command[..cut], *sizes, &g);
                    assert!(c.is_err(), "{info:?}: command prefix {cut} of {command:02x?} decoded");
                }
                for cut in 0..reply.len() {
                    let (_, r) = (info.check.decode_garbage)(&reply[..cut], *sizes, &g);
                    assert!(r.is_err(), "{info:?}: reply prefix {cut} of {reply:02x?} decoded");
                }
            }
        }
    }
}

#[test]
fn tagged_values_and_regions_round_trip() {
    for sizes in SIZES {
        for seed in 0..500 {
            let mut g = Gen::new(seed, *sizes);
            round_trip::<crate::Value>(&mut g).unwrap();
            round_trip::<crate::ArrayRegion>(&mut g).unwrap();
            round_trip::<crate::Location>(&mut g).unwrap();
            round_trip::<crate::TaggedObjectId>(&mut g).unwrap();
        }
    }
}

#[test]
fn id_sizes_reply_decodes_from_hotspot_bytes() {
    let body = [0, 0, 0, 8, 0, 0, 0, 8, 0, 0, 0, 8, 0, 0, 0, 8, 0, 0, 0, 8];
    let reply: crate::commands::virtual_machine::IdSizesReply = decode_body(&body, IdSizes::default()).unwrap();
    assert_eq!(reply.object_id_size, 8);
}

#[test]
fn every_event_kind_and_modifier_kind_round_trips() {
    use crate::commands::event::Event;
    use crate::commands::event_request::Modifier;
    use crate::constants::{EventKind, ModKind};
    use crate::sample::Sample;
    use std::collections::BTreeSet;

    let mut events = BTreeSet::new();
    let mut modifiers = BTreeSet::new();
    for sizes in SIZES {
        let mut g = Gen::new(7, *sizes);
        for _ in 0..3000 {
            events.insert(Event::sample(&mut g).kind());
            modifiers.insert(Modifier::sample(&mut g).kind());
            round_trip::<Event>(&mut g).unwrap();
            round_trip::<Modifier>(&mut g).unwrap();
        }
    }
    // Every kind a composite can carry: all but those JDWP never reports (and JDI's internal one).
    let never_reported = [
        EventKind::FramePop,
        EventKind::UserDefined,
        EventKind::ClassLoad,
        EventKind::ExceptionCatch,
        EventKind::VmDisconnected,
    ];
    let expected: BTreeSet<EventKind> =
        EventKind::ALL.iter().copied().filter(|k| !never_reported.contains(k)).collect();
    assert_eq!(events, expected);
    assert_eq!(expected.len(), 18);
    assert_eq!(modifiers, ModKind::ALL.iter().copied().collect::<BTreeSet<_>>());
}

#[test]
fn the_coverage_table_lists_every_command() {
    let table = include_str!("../../spec-notes/coverage.md");
    for info in all_commands().chain(vendor_commands()) {
        let row = format!("| {} | {} | {} |", info.set, info.cmd, info.qualified_name);
        assert!(table.contains(&row), "spec-notes/coverage.md has no row for {info:?}: regenerate it");
    }
}

#[test]
fn vendor_sets_stay_out_of_the_jdwp_table() {
    let vendor: Vec<&CommandInfo> = vendor_commands().collect();
    assert!(!vendor.is_empty());
    for info in &vendor {
        assert!(info.set >= 128, "{info:?}: vendor sets are numbered from 128");
        assert!(all_commands().all(|c| c.set != info.set), "{info:?} is also in the JDWP table");
        assert_eq!(command_info(info.set, info.cmd).map(|c| c.qualified_name), Some(info.qualified_name));
    }
    let mut keys: Vec<(u8, u8)> = vendor.iter().map(|c| (c.set, c.cmd)).collect();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), vendor.len(), "duplicate vendor (set, command) numbers");
}
