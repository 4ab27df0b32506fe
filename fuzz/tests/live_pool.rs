//! The live pool against a real JVM under our agent (`cargo build -p jdwp-agent` first): the harvest
//! finds IDs of every kind, and two sessions of two JVMs give the same slots, so a recorded packet
//! replays with the new session's IDs in its slots.

use std::time::Duration;

use jdwp_fuzz::conn::Conn;
use jdwp_fuzz::harvest::harvest;
use jdwp_fuzz::pool::{Cat, Pool};
use jdwp_fuzz::target::{AgentKind, Target, TargetConfig, fixture_classes};

const TIMEOUT: Duration = Duration::from_secs(60);

fn session_pool(scratch: &str) -> (Pool, Vec<String>) {
    let lib = test_rig::our_agent_library().expect("our agent: cargo build -p jdwp-agent");
    let config = TargetConfig {
        agent: AgentKind::Ours(lib),
        classes: fixture_classes().expect("fixture compiles"),
        scratch: std::env::temp_dir().join(format!("jdwp-fuzz-test-{}-{scratch}", std::process::id())),
        heap_mb: 128,
    };
    let target = Target::start(&config).expect("debuggee starts");
    let mut conn = Conn::attach(target.addr, TIMEOUT).expect("attach");
    let pool = harvest(&mut conn, TIMEOUT).expect("harvest");
    // Names of the threads in slot order, to compare sessions by meaning, not by ID values.
    let mut names = Vec::new();
    for e in pool.get(Cat::Thread) {
        let r = conn
            .request(
                &jdwp_protocol::commands::thread_reference::Name { thread: jdwp_protocol::ThreadId(e.id) },
                TIMEOUT,
            )
            .expect("thread name");
        names.push(r.thread_name);
    }
    conn.close();
    drop(target);
    let _ = std::fs::remove_dir_all(&config.scratch);
    (pool, names)
}

#[test]
fn the_harvest_finds_every_kind_and_slots_are_stable_across_sessions() {
    let (a, names_a) = session_pool("a");
    for cat in Cat::ALL {
        assert!(!a.get(cat).is_empty(), "no live {} IDs: {}", cat.name(), a.summary());
    }
    assert!(a.frame_thread.is_some(), "the frame thread was found");
    assert!(a.get(Cat::Frame).len() >= 7, "fuzz-frames is suspended deep in depth(): {}", a.summary());
    assert!(names_a.iter().any(|n| n == "fuzz-frames"), "{names_a:?}");

    let (b, names_b) = session_pool("b");
    assert_eq!(names_a, names_b, "threads in the same slots");
    // Types beyond the fixture's and the listed ones depend on what the JVM happened to load (they
    // come after them); the members (of the fixture's and the listed types) do not.
    for cat in [Cat::Thread, Cat::Method, Cat::Field, Cat::Frame] {
        assert_eq!(
            a.get(cat).len(),
            b.get(cat).len(),
            "{} slots differ: {} vs {}",
            cat.name(),
            a.summary(),
            b.summary()
        );
    }
}
