//! Tests of the test rig itself, against real JVMs.
//!
//! Timeouts are generous (CI runs on small, busy machines) and every wait is
//! on an event (output line, exit, socket read), never a sleep.

use std::{
    fs,
    io::{Read, Write},
    net::{TcpListener, TcpStream},
    path::{Path, PathBuf},
    sync::{Arc, Barrier, mpsc},
    time::Duration,
};

use test_rig::{
    Agent, Debuggee, Error, Stream, compile_java_sources, fixture_line, fixture_source_dir, fixtures,
    fixtures_cache_root,
};

const TIMEOUT: Duration = Duration::from_secs(60);
const HANDSHAKE: &[u8; 14] = b"JDWP-Handshake";

/// A fresh, empty scratch directory under cargo's per-target tmp dir.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("rig-tests").join(format!("{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

/// Whether a process with this pid exists (a zombie counts as existing).
fn process_exists(pid: u32) -> bool {
    // SAFETY: signal 0 only checks for existence and permission.
    let rc = unsafe { libc::kill(pid as libc::pid_t, 0) };
    rc == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

fn connect(jvm: &Debuggee) -> TcpStream {
    let stream = TcpStream::connect_timeout(&jvm.address(), TIMEOUT).unwrap();
    stream.set_read_timeout(Some(TIMEOUT)).unwrap();
    stream
}

/// Reads one JDWP packet; returns its id and everything after the length.
fn read_packet(stream: &mut TcpStream) -> (u32, Vec<u8>) {
    let mut len = [0u8; 4];
    stream.read_exact(&mut len).unwrap();
    let mut rest = vec![0u8; u32::from_be_bytes(len) as usize - 4];
    stream.read_exact(&mut rest).unwrap();
    (u32::from_be_bytes(rest[..4].try_into().unwrap()), rest)
}

#[test]
fn fixtures_compile_and_are_cached() {
    let dir = fixtures().unwrap();
    for class in
        ["Hello.class", "Demo.class", "Threads.class", "Deadlock.class", "Deadlock$Monitor.class", "LockDeadlock.class"]
    {
        assert!(dir.join(class).is_file(), "{class} missing in {}", dir.display());
    }
    assert!(dir.starts_with(fixtures_cache_root()));
    let mtime = fs::metadata(dir.join("Demo.class")).unwrap().modified().unwrap();

    // Same process: the same path, at once.
    assert_eq!(fixtures().unwrap(), dir);
    // As another test binary would see it: the cache is reused, not rebuilt.
    let again = compile_java_sources(fixture_source_dir(), &fixtures_cache_root()).unwrap();
    assert_eq!(again.classes_dir, dir);
    assert!(!again.compiled, "second compile should reuse the cache");
    let mtime_again = fs::metadata(dir.join("Demo.class")).unwrap().modified().unwrap();
    assert_eq!(mtime, mtime_again);
}

#[test]
fn compile_cache_is_keyed_by_sources_and_safe_under_concurrency() {
    let root = scratch("cache");
    let src = root.join("src");
    let cache = root.join("cache");
    fs::create_dir_all(src.join("pkg")).unwrap();
    fs::write(src.join("Top.java"), "public class Top { int x = 1; }\n").unwrap();
    let nested = src.join("pkg").join("Inner.java");
    fs::write(&nested, "package pkg; public class Inner { }\n").unwrap();

    // Several threads race for the same cold cache: one compiles, the others
    // wait on the lock and reuse its output.
    let threads = 4;
    let barrier = Arc::new(Barrier::new(threads));
    let results: Vec<_> = (0..threads)
        .map(|_| {
            let (barrier, src, cache) = (barrier.clone(), src.clone(), cache.clone());
            std::thread::spawn(move || {
                barrier.wait();
                compile_java_sources(&src, &cache).unwrap()
            })
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|h| h.join().unwrap())
        .collect();
    assert_eq!(results.iter().filter(|r| r.compiled).count(), 1, "{results:?}");
    let first = results[0].classes_dir.clone();
    assert!(results.iter().all(|r| r.classes_dir == first));
    assert!(first.join("Top.class").is_file());
    assert!(first.join("pkg").join("Inner.class").is_file());

    // Editing a source gives a new cache entry...
    fs::write(&nested, "package pkg; public class Inner { int y; }\n").unwrap();
    let edited = compile_java_sources(&src, &cache).unwrap();
    assert!(edited.compiled);
    assert_ne!(edited.classes_dir, first);
    // ...and reverting it finds the old one again.
    fs::write(&nested, "package pkg; public class Inner { }\n").unwrap();
    let reverted = compile_java_sources(&src, &cache).unwrap();
    assert!(!reverted.compiled);
    assert_eq!(reverted.classes_dir, first);

    // No temporary directories are left behind.
    let leftovers: Vec<_> = fs::read_dir(&cache)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".tmp-"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    fs::remove_dir_all(&root).unwrap();
}

#[test]
fn compile_errors_are_reported_with_diagnostics() {
    let root = scratch("broken");
    fs::write(root.join("Broken.java"), "public class Broken { int x = ; }\n").unwrap();
    let err = compile_java_sources(&root, &root.join("cache")).unwrap_err();
    assert!(matches!(err, Error::Compile { .. }), "{err}");
    let msg = err.to_string();
    assert!(msg.contains("Broken.java") && msg.contains("error"), "{msg}");
    fs::remove_dir_all(&root).unwrap();
}

#[test]
fn hello_runs_to_exit_zero_with_output_captured() {
    let jvm = Debuggee::builder("Hello").agent(Agent::None).args(["one", "two words"]).spawn().unwrap();
    assert!(jvm.listen_address().is_none());
    let status = jvm.wait_for_exit(TIMEOUT).expect("Hello did not exit");
    assert!(status.success(), "{status}\n{}", jvm.output_text());
    assert_eq!(jvm.stdout_text(), "Hello, world!\narg: one\narg: two words\n");
    assert_eq!(jvm.stderr_text(), "");
    // Lines printed before the wait still match.
    let line = jvm.wait_for_line_in(Stream::Stdout, "two", TIMEOUT).unwrap();
    assert_eq!(line, "arg: two words");
    // Exit status is sticky.
    assert_eq!(jvm.exit_status(), Some(status));
}

#[test]
fn waiting_for_a_line_fails_clearly_when_the_jvm_exits() {
    let jvm = Debuggee::builder("Hello").agent(Agent::None).spawn().unwrap();
    let err = jvm.wait_for_line("never printed", TIMEOUT).unwrap_err();
    assert!(matches!(err, Error::Exited { .. }), "{err}");
    let msg = err.to_string();
    assert!(msg.contains("never printed") && msg.contains("Hello, world!"), "{msg}");
}

#[test]
fn waiting_for_a_line_times_out_with_the_output_so_far() {
    let jvm = Debuggee::builder("Deadlock").agent(Agent::None).spawn().unwrap();
    jvm.wait_for_line("deadlocked", TIMEOUT).unwrap();
    let err = jvm.wait_for_line("never printed", Duration::from_millis(300)).unwrap_err();
    assert!(matches!(err, Error::Timeout { .. }), "{err}");
    assert!(err.to_string().contains("deadlocked"), "{err}");
    assert_eq!(jvm.wait_for_exit(Duration::ZERO), None);
}

#[test]
fn jdk_agent_reports_port_and_completes_handshake() {
    // Default: JDK agent, server=y, suspend=y, port 0.
    let jvm = Debuggee::builder("Demo").spawn().unwrap();
    assert_ne!(jvm.port(), 0);
    assert!(jvm.address().ip().is_loopback());

    let mut stream = connect(&jvm);
    stream.write_all(HANDSHAKE).unwrap();
    let mut reply = [0u8; 14];
    stream.read_exact(&mut reply).unwrap();
    assert_eq!(&reply, HANDSHAKE);

    // With suspend=y the VM suspends itself, then sends the unrequested
    // VMStart event. A Resume sent before that event can be handled before
    // the suspension and be lost, so wait for it first (as JDI does).
    let (_, event) = read_packet(&mut stream);
    assert_eq!((event[4], event[5], event[6]), (0, 64, 100), "not an Event.Composite: {event:?}");
    assert_eq!(event[12], 90, "not VM_START: {event:?}"); // after suspendPolicy, count

    // VirtualMachine.Resume (command set 1, command 9): header only.
    let id: u32 = 1;
    let mut packet = Vec::new();
    packet.extend_from_slice(&11u32.to_be_bytes());
    packet.extend_from_slice(&id.to_be_bytes());
    packet.extend_from_slice(&[0, 1, 9]); // flags, command set, command
    stream.write_all(&packet).unwrap();
    let (reply_id, reply) = read_packet(&mut stream);
    assert_eq!((reply_id, reply[4]), (id, 0x80), "not our reply: {reply:?}");
    assert_eq!(&reply[5..7], &[0, 0], "Resume failed: {reply:?}");

    jvm.wait_for_line_in(Stream::Stdout, "Demo done", TIMEOUT).unwrap();
    let status = jvm.wait_for_exit(TIMEOUT).expect("Demo did not exit");
    assert!(status.success(), "{status}\n{}", jvm.output_text());
    assert!(jvm.stdout_text().contains("Demo total=584 "));
}

#[test]
fn server_n_agent_connects_to_a_listening_debugger() {
    // The debugger listens (on a port of its own: no window for another process to take it) and the
    // VM dials in.
    let listener = TcpListener::bind(("127.0.0.1", 0)).unwrap();
    let port = listener.local_addr().unwrap().port();
    let jvm = Debuggee::builder("Hello")
        .agent(Agent::jdk(format!("transport=dt_socket,server=n,suspend=y,address=127.0.0.1:{port}")))
        .spawn()
        .unwrap();
    assert!(jvm.listen_address().is_none());

    // accept() cannot time out, so it runs on a thread and we wait on a
    // channel; if the VM never connects the test fails instead of hanging.
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(listener.accept());
    });
    let (mut stream, _) =
        rx.recv_timeout(TIMEOUT).unwrap_or_else(|_| panic!("VM never connected\n{}", jvm.output_text())).unwrap();
    stream.set_read_timeout(Some(TIMEOUT)).unwrap();
    // The debugger sends the handshake first, also when the VM dialled in.
    stream.write_all(HANDSHAKE).unwrap();
    let mut reply = [0u8; 14];
    stream.read_exact(&mut reply).unwrap();
    assert_eq!(&reply, HANDSHAKE);
}

#[test]
fn dropping_a_debuggee_kills_the_jvm() {
    // A suspended VM with the agent, and a running one that never ends.
    let suspended = Debuggee::builder("Demo").spawn().unwrap();
    let running = Debuggee::builder("Deadlock").agent(Agent::None).spawn().unwrap();
    running.wait_for_line("deadlocked", TIMEOUT).unwrap();
    let pids = [suspended.pid(), running.pid()];
    assert!(pids.iter().all(|&p| process_exists(p)));

    drop(suspended);
    drop(running);
    for pid in pids {
        assert!(!process_exists(pid), "JVM {pid} still exists after drop");
    }
}

#[test]
fn explicit_kill_reports_sigkill() {
    use std::os::unix::process::ExitStatusExt;
    let mut jvm = Debuggee::builder("LockDeadlock").agent(Agent::None).spawn().unwrap();
    jvm.wait_for_line("deadlocked", TIMEOUT).unwrap();
    let status = jvm.kill().expect("JVM did not die");
    assert_eq!(status.signal(), Some(libc::SIGKILL));
    // Idempotent.
    assert_eq!(jvm.kill(), Some(status));
}

#[test]
fn debuggee_outlives_the_thread_that_spawned_it() {
    // PR_SET_PDEATHSIG fires when the forking *thread* exits; the rig forks
    // from a process-lifetime thread, so handing a Debuggee across threads
    // is safe.
    let jvm = std::thread::spawn(|| Debuggee::builder("Deadlock").agent(Agent::None).spawn()).join().unwrap().unwrap();
    jvm.wait_for_line("deadlocked", TIMEOUT).unwrap();
    assert_eq!(jvm.exit_status(), None);
}

#[test]
fn bad_agent_option_fails_with_a_clear_error() {
    let err = Debuggee::builder("Hello")
        .agent(Agent::jdk("transport=dt_socket,server=y,suspend=y,address=127.0.0.1:0,bogus=1"))
        .spawn()
        .unwrap_err();
    assert!(matches!(err, Error::Exited { .. }), "{err}");
    let msg = err.to_string();
    // The message names what was expected, carries the JVM's complaint and
    // the command line.
    assert!(msg.contains("Listening for transport"), "{msg}");
    assert!(msg.contains("JDWP option syntax error"), "{msg}");
    assert!(msg.contains("-agentlib:jdwp="), "{msg}");
}

#[test]
fn other_fixtures_behave_as_documented() {
    let threads = Debuggee::builder("Threads").agent(Agent::None).spawn().unwrap();
    let deadlock = Debuggee::builder("LockDeadlock").agent(Agent::None).spawn().unwrap();
    let status = threads.wait_for_exit(TIMEOUT).expect("Threads did not exit");
    assert!(status.success(), "{}", threads.output_text());
    let out = threads.stdout_text();
    for line in ["Threads started", "worker-1 finished", "worker-2 finished", "worker-3 finished"] {
        assert!(out.contains(line), "{out}");
    }
    assert!(out.ends_with("Threads done\n"), "{out}");
    deadlock.wait_for_line("deadlocked", TIMEOUT).unwrap();
    assert_eq!(deadlock.exit_status(), None);
}

#[test]
fn fixture_lines_are_found_by_marker() {
    let line = fixture_line("Demo.java", "@loop-tick").unwrap();
    let text = fs::read_to_string(fixture_source_dir().join("Demo.java")).unwrap();
    let found = text.lines().nth(line as usize - 1).unwrap();
    assert!(found.contains("demo.tick(i)"), "{found}");
    // "@tick" is only a prefix of other markers, never a marker itself.
    let err = fixture_line("Demo.java", "@tick").unwrap_err();
    assert!(matches!(err, Error::Fixture { .. }) && err.to_string().contains("not found"), "{err}");
    assert!(fixture_line("NoSuch.java", "@x").is_err());
}
