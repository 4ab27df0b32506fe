//! `Profiler.HeapDump` (vendor set 128, command 12) through our agent, against a real JVM: the
//! dump of `HeapDumpTarget` parses with the strict HPROF reader (`test_rig::hprof`), holds the
//! fixture's objects with their field values, arrays and strings, and agrees with the dump the JDK
//! itself writes (`jcmd GC.heap_dump`) of the same VM, read by the same reader.

use std::path::PathBuf;
use std::time::Duration;

use jdwp_protocol::ErrorCode;
use jdwp_protocol::commands::profiler::HeapDump;
use test_rig::hprof::{Hprof, Value};
use test_rig::wire::{RawSession, WireError};
use test_rig::{Agent, Debuggee};

const TIMEOUT: Duration = Duration::from_secs(60);
const NODE: &str = "HeapDumpTarget$Node";

fn temp_path(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("jdwp-rs-hprof-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    let _ = std::fs::remove_file(&path);
    path
}

fn start() -> (Debuggee, RawSession) {
    let ours = test_rig::our_agent_library().expect("our agent (cargo build -p jdwp-agent)");
    let jvm = Debuggee::builder("HeapDumpTarget")
        .agent(Agent::path(ours, "transport=dt_socket,server=y,suspend=n,address=127.0.0.1:0"))
        .spawn()
        .expect("HeapDumpTarget starts");
    jvm.wait_for_line("heap ready", TIMEOUT).expect("the fixture builds its graph");
    let session = RawSession::attach(&jvm.address().to_string(), TIMEOUT).expect("attach");
    (jvm, session)
}

/// The fixture's nodes by their `id` field.
fn nodes(dump: &Hprof) -> Vec<u64> {
    let mut nodes = dump.instances_of(NODE);
    nodes.sort_by_key(|&n| match dump.field(n, "id") {
        Some(Value::Int(i)) => i,
        other => panic!("node {n:#x} has id {other:?}"),
    });
    nodes
}

/// Checks every value the fixture stored, in a dump (ours or the JDK's).
fn check_fixture_objects(dump: &Hprof, who: &str) {
    let nodes = nodes(dump);
    assert_eq!(nodes.len(), 5, "{who}: five nodes");
    for (i, &n) in nodes.iter().enumerate() {
        let i32i = i as i32;
        let field = |name: &str| dump.field(n, name).unwrap_or_else(|| panic!("{who}: node {i} has no {name}"));
        assert_eq!(field("id"), Value::Int(i32i), "{who}");
        assert_eq!(field("baseId"), Value::Int(100 + i32i), "{who}: superclass field");
        assert_eq!(field("flag"), Value::Boolean(i % 2 == 0), "{who}");
        assert_eq!(field("b"), Value::Byte(-(i as i8)), "{who}");
        assert_eq!(field("c"), Value::Char(u16::from(b'a') + i as u16), "{who}");
        assert_eq!(field("s"), Value::Short(1000 * i as i16), "{who}");
        assert_eq!(field("big"), Value::Long((1 << 40) + i as i64), "{who}");
        assert_eq!(field("f"), Value::Float(i as f32 + 0.5), "{who}");
        assert_eq!(field("d"), Value::Double(i as f64 * 1.25), "{who}");
        let Value::Object(name) = field("baseName") else { panic!("{who}: baseName") };
        assert_eq!(dump.string(name).as_deref(), Some(format!("base{i}").as_str()), "{who}");
        // The chain: node i's next is node i + 1, the last one's is null.
        let expected_next = nodes.get(i + 1).copied().unwrap_or(0);
        assert_eq!(field("next"), Value::Object(expected_next), "{who}: next of node {i}");
        let Value::Object(numbers) = field("numbers") else { panic!("{who}: numbers") };
        let expected: Vec<i32> = (0..i32i).map(|k| i32i * 10 + k).collect();
        assert_eq!(dump.primitive_arrays.get(&numbers), Some(&Value::IntArray(expected)), "{who}: numbers of {i}");
        let Value::Object(things) = field("things") else { panic!("{who}: things") };
        let things = &dump.object_arrays[&things];
        assert_eq!(things.elements.len(), 3, "{who}");
        assert_eq!(dump.string(things.elements[0]).as_deref(), Some(format!("t{i}").as_str()), "{who}");
        assert_eq!(things.elements[1], 0, "{who}: a null element");
        assert_eq!(dump.class_name_of(things.elements[2]), Some("java/lang/Integer"), "{who}");
        assert_eq!(dump.field(things.elements[2], "value"), Some(Value::Int(i32i)), "{who}");
    }
    let target = "HeapDumpTarget";
    assert_eq!(dump.static_field(target, "answer"), Some(Value::Long(42)), "{who}");
    assert_eq!(dump.static_field(NODE, "created"), Some(Value::Int(5)), "{who}");
    let Some(Value::Object(primes)) = dump.static_field(target, "primes") else { panic!("{who}: primes") };
    assert_eq!(dump.primitive_arrays.get(&primes), Some(&Value::IntArray(vec![2, 3, 5, 7, 11, 13])), "{who}");
    let Some(Value::Object(greeting)) = dump.static_field(target, "greeting") else { panic!("{who}: greeting") };
    assert_eq!(dump.string(greeting).as_deref(), Some("h\u{e9}llo dump"), "{who}: a Latin-1 string");
    let Some(Value::Object(wide)) = dump.static_field(target, "wide") else { panic!("{who}: wide") };
    assert_eq!(dump.string(wide).as_deref(), Some("snow \u{2603}"), "{who}: a UTF-16 string");
    let Some(Value::Object(array)) = dump.static_field(target, "nodes") else { panic!("{who}: nodes") };
    assert_eq!(dump.object_arrays[&array].elements, nodes, "{who}: the nodes array");
    assert_eq!(dump.classes[&dump.object_arrays[&array].class_id].name, "[LHeapDumpTarget$Node;", "{who}");
    // Class structure: Node's superclass is Base, whose superclass is Object.
    let node_class = &dump.class_dumps[&dump.class_id(NODE).unwrap()];
    let base = dump.class_id("HeapDumpTarget$Base").unwrap();
    assert_eq!(node_class.super_id, base, "{who}");
    assert_eq!(dump.class_dumps[&base].super_id, dump.class_id("java/lang/Object").unwrap(), "{who}");
}

#[test]
fn heap_dump_holds_the_fixture_objects_and_agrees_with_the_jdk() {
    let (jvm, mut s) = start();
    let path = temp_path("ours.hprof");
    let reply = s.send(&HeapDump { path: path.to_string_lossy().into_owned(), live_only: true }).expect("HeapDump");
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(reply.bytes_written, bytes.len() as i64);
    let ours = Hprof::parse(&bytes).unwrap_or_else(|e| panic!("our dump: {e}"));
    check_fixture_objects(&ours, "ours");
    assert!(ours.dangling.is_empty(), "our dump refers to {} objects it lacks", ours.dangling.len());
    assert_eq!(ours.repeated_class_loads, 0);

    // Roots and threads: the main thread is a root with its stack, which is in main.
    let main_trace = ours
        .traces
        .values()
        .find(|t| {
            t.frames
                .iter()
                .any(|f| ours.frames[f].method == "main" && ours.frames[f].signature == "([Ljava/lang/String;)V")
        })
        .expect("a trace with HeapDumpTarget.main");
    assert!(main_trace.thread_serial > 0);
    assert!(ours.roots.iter().any(|&(kind, _)| kind == 0x08), "thread roots");
    assert!(ours.roots.iter().any(|&(kind, _)| kind == 0x05), "system class roots");
    let main_frame = main_trace.frames.iter().map(|f| &ours.frames[f]).find(|f| f.method == "main").unwrap();
    assert_eq!(main_frame.source_file.as_deref(), Some("HeapDumpTarget.java"));
    assert!(main_frame.line > 0);

    // The same VM dumped by the JDK itself, read by the same reader, says the same.
    let jdk_path = temp_path("jdk.hprof");
    let jcmd = test_rig::java_tool("jcmd").expect("jcmd");
    let status = std::process::Command::new(jcmd)
        .arg(jvm.pid().to_string())
        .arg("GC.heap_dump")
        .arg(&jdk_path)
        .output()
        .expect("jcmd runs");
    assert!(status.status.success(), "{}", String::from_utf8_lossy(&status.stderr));
    let jdk = Hprof::parse(&std::fs::read(&jdk_path).unwrap()).unwrap_or_else(|e| panic!("the JDK's dump: {e}"));
    check_fixture_objects(&jdk, "jdk");
    // Every class the JDK dumped with instances, we dumped with the same field names.
    for name in [NODE, "HeapDumpTarget$Base", "java/lang/String", "java/lang/Integer"] {
        let fields = |d: &Hprof| {
            let mut f: Vec<String> =
                d.class_dumps[&d.class_id(name).unwrap()].instance_fields.iter().map(|f| f.0.clone()).collect();
            f.sort();
            f
        };
        assert_eq!(fields(&ours), fields(&jdk), "instance fields of {name}");
    }

    // An existing file is refused, and left alone.
    let again = s.send(&HeapDump { path: path.to_string_lossy().into_owned(), live_only: false });
    assert!(
        matches!(again, Err(WireError::Jdwp { code: ErrorCode::ILLEGAL_ARGUMENT, .. })),
        "dumping over an existing file: {again:?}"
    );
    assert_eq!(std::fs::read(&path).unwrap().len(), bytes.len());
    let _ = std::fs::remove_file(&path);
    let _ = std::fs::remove_file(&jdk_path);
    drop(jvm);
}
