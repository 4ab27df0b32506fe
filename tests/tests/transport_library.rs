//! Our agent with a transport library (`transport=NAME` for a name that is not built in loads
//! `libNAME.so`): the JDK's own `libdt_socket.so` under another name, found on `LD_LIBRARY_PATH`,
//! carries a whole session (as OpenJDK's PrivateTransportTest sets it up); a name with no library
//! stops the VM in the JDK's agent's words. (Our `libdt_shmem.so` as a library: jdi-rs's
//! `tests/shmem.rs`.)

use std::path::{Path, PathBuf};
use std::time::Duration;

use jdwp_protocol::commands::event::{Composite, Event};
use jdwp_protocol::commands::event_request::{self as er, Modifier};
use jdwp_protocol::commands::{thread_reference as tr, virtual_machine as vm};
use jdwp_protocol::{EventKind, SuspendPolicy, codec};
use test_rig::wire::RawSession;
use test_rig::{Agent, Debuggee, Stream};

const TIMEOUT: Duration = Duration::from_secs(60);

fn ours(options: &str) -> Agent {
    Agent::path(test_rig::our_agent_library().expect("our agent"), options)
}

/// A directory of its own holding `lib<name>.so`, a copy of `library`; removed on drop.
struct LibraryDir(PathBuf);

impl LibraryDir {
    fn with_copy(library: &Path, name: &str) -> LibraryDir {
        let dir = std::env::temp_dir().join(format!("jdwp-transport-library-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::copy(library, dir.join(format!("lib{name}.so")))
            .unwrap_or_else(|e| panic!("copying {}: {e}", library.display()));
        LibraryDir(dir)
    }
}

impl Drop for LibraryDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn next_composite(s: &mut RawSession) -> Composite {
    let packet = s.next_event().expect("an event from the VM");
    codec::decode_body(&packet.body, s.id_sizes()).expect("a well-formed composite event")
}

#[test]
fn the_jdks_dt_socket_as_a_private_library_carries_a_session() {
    let jdk_library = test_rig::java_home().join("lib/libdt_socket.so");
    let dir = LibraryDir::with_copy(&jdk_library, "private_dt_socket");
    let jvm = Debuggee::builder("Hello")
        .agent(ours("transport=private_dt_socket,server=y,suspend=y"))
        .env("LD_LIBRARY_PATH", &dir.0)
        .expect_listening(true)
        .spawn()
        .unwrap();
    // The JDK's line, naming the library's transport and the port it picked.
    let line = jvm.wait_for_line_in(Stream::Stdout, "Listening for transport", TIMEOUT).unwrap();
    let port = line.trim().strip_prefix("Listening for transport private_dt_socket at address: ");
    assert!(port.is_some_and(|p| p.parse::<u16>().is_ok_and(|p| p != 0)), "{line:?}");

    let mut s = RawSession::attach(&jvm.address().to_string(), TIMEOUT).expect("attach over the library");
    let start = next_composite(&mut s);
    assert!(matches!(start.events.as_slice(), [Event::VmStart { .. }]), "{start:?}");
    let version = s.send(&vm::Version {}).unwrap();
    assert_eq!(version.jdwp_major, test_rig::jdk_feature_version().unwrap() as i32, "{version:?}");

    // Stop when Hello is prepared, to find it by signature.
    let prepare = er::Set {
        event_kind: EventKind::ClassPrepare,
        suspend_policy: SuspendPolicy::All,
        modifiers: vec![Modifier::ClassMatch { class_pattern: "Hello".into() }],
    };
    let request = s.send(&prepare).unwrap().request_id;
    s.send(&vm::Resume {}).unwrap();
    let prepared = next_composite(&mut s);
    assert!(
        matches!(prepared.events.as_slice(), [Event::ClassPrepare { request_id, .. }] if *request_id == request),
        "{prepared:?}"
    );
    let classes = s.send(&vm::ClassesBySignature { signature: "LHello;".into() }).unwrap().classes;
    assert_eq!(classes.len(), 1, "{classes:?}");
    let threads = s.send(&vm::AllThreads {}).unwrap().threads;
    let names: Vec<String> = threads.iter().map(|&thread| s.send(&tr::Name { thread }).unwrap().thread_name).collect();
    assert!(names.iter().any(|n| n == "main"), "{names:?}");

    s.send(&er::Clear { event_kind: EventKind::ClassPrepare, request_id: request }).unwrap();
    // Answered before anything runs; then Hello may end at once, taking the connection with it.
    s.send(&vm::Resume {}).unwrap();
    let status = jvm.wait_for_exit(TIMEOUT).expect("Hello runs to its end");
    assert!(status.success(), "{status:?}\n{}", jvm.output_text());
    assert!(jvm.stdout_text().contains("Hello, world!"), "{}", jvm.stdout_text());
}

/// `allow=` reaches the library (`SetTransportConfiguration`), which judges peers itself; a value
/// it refuses stops the VM as a failed transport start.
#[test]
fn allow_goes_to_the_library() {
    let jdk_library = test_rig::java_home().join("lib/libdt_socket.so");
    let dir = LibraryDir::with_copy(&jdk_library, "allow_dt_socket");
    let refusing = Debuggee::builder("Hello")
        .agent(ours("transport=allow_dt_socket,server=y,suspend=y,allow=10.0.0.1"))
        .env("LD_LIBRARY_PATH", &dir.0)
        .expect_listening(true)
        .spawn()
        .unwrap();
    assert!(RawSession::attach(&refusing.address().to_string(), TIMEOUT).is_err(), "a peer outside allow= got in");
    // The JDK's dt_socket's own words.
    refusing.wait_for_line_in(Stream::Stderr, "Peer not allowed to connect: 127.0.0.1", TIMEOUT).unwrap();

    let admitting = Debuggee::builder("Hello")
        .agent(ours("transport=allow_dt_socket,server=y,suspend=y,allow=127.0.0.1"))
        .env("LD_LIBRARY_PATH", &dir.0)
        .expect_listening(true)
        .spawn()
        .unwrap();
    let mut s = RawSession::attach(&admitting.address().to_string(), TIMEOUT).unwrap();
    assert_eq!(s.send(&vm::Version {}).unwrap().jdwp_major, test_rig::jdk_feature_version().unwrap() as i32);
    s.send(&vm::Dispose {}).unwrap();
    assert!(admitting.wait_for_exit(TIMEOUT).is_some_and(|s| s.success()), "{}", admitting.output_text());

    let bad = Debuggee::builder("Hello")
        .agent(ours("transport=allow_dt_socket,server=y,suspend=n,allow=not-an-address"))
        .env("LD_LIBRARY_PATH", &dir.0)
        .expect_listening(false)
        .spawn()
        .unwrap();
    let status = bad.wait_for_exit(TIMEOUT).expect("the VM stops");
    assert!(!status.success(), "{status:?}");
    let stderr = bad.stderr_text();
    assert!(stderr.lines().any(|l| l.starts_with("ERROR: transport error 103: ")), "{stderr}");
    assert!(
        stderr.lines().any(|l| l == "ERROR: JDWP Transport allow_dt_socket failed to initialize, TRANSPORT_INIT(510)"),
        "{stderr}"
    );
}

#[test]
fn a_transport_without_a_library_stops_the_vm_in_the_jdk_agents_words() {
    let jvm = Debuggee::builder("Hello")
        .agent(ours("transport=dt_no_such_transport,server=y,suspend=n"))
        .expect_listening(false)
        .spawn()
        .unwrap();
    let status = jvm.wait_for_exit(TIMEOUT).expect("the VM stops");
    assert!(!status.success(), "{status:?}");
    let stderr = jvm.stderr_text();
    for line in [
        "ERROR: transport library not found: dt_no_such_transport",
        "ERROR: JDWP Transport dt_no_such_transport failed to initialize, TRANSPORT_LOAD(509)",
        "JDWP exit error AGENT_ERROR_TRANSPORT_LOAD(196): No transports initialized",
    ] {
        assert!(stderr.lines().any(|l| l == line), "missing {line:?} in:\n{stderr}");
    }
    assert!(!jvm.stdout_text().contains("Hello, world!"), "the program must not run: {}", jvm.output_text());
}
