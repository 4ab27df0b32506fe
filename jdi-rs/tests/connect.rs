//! Connecting (attach, listen, launch) and the connection itself (many calls in flight, command
//! counting, timeouts, a dying VM, typed JDWP errors), against the agent under test.

mod common;

use std::io::ErrorKind;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use jdi::protocol::commands::thread_reference::Name;
use jdi::protocol::commands::virtual_machine::{AllThreads, Version};
use jdi::protocol::{ErrorCode, ObjectId};
use jdi::{Event, JdiError, LaunchOptions, Listener, ObjectReference, VirtualMachine};
use jdwp_transports::{HandshakeError, TransportError};
use test_rig::{Agent, Debuggee};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// How long a dead connection may take to fail its pending calls.
const PROMPTLY: Duration = Duration::from_secs(5);

/// Launch options for a fixture under the agent under test.
fn launch_options(main_class: &str) -> LaunchOptions {
    // The test JDK's `java` (`JDBG_TEST_JDK`), not whichever `JAVA_HOME` or `PATH` name.
    let opts = LaunchOptions::new(main_class)
        .java(test_rig::java_tool("java").unwrap())
        .classpath(test_rig::fixtures().unwrap().to_str().unwrap())
        .timeout(common::TIMEOUT);
    match common::agent() {
        Agent::Path(lib, _) => opts.agent_path(lib),
        _ => opts,
    }
}

fn proc_exists(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

fn signal(pid: u32, sig: i32) {
    // SAFETY: kill has no memory-safety preconditions; the pid is our live debuggee's.
    assert_eq!(unsafe { libc::kill(pid as libc::pid_t, sig) }, 0, "kill({pid}, {sig})");
}

/// Freezes a process and waits until every one of its threads has stopped (`kill` only queues
/// the signal; a thread can still answer a command before it takes it).
async fn freeze(pid: u32) {
    signal(pid, libc::SIGSTOP);
    let all_stopped = || {
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return false };
        tasks.flatten().all(|task| {
            // The state follows the command name, which is in parentheses and may hold spaces.
            std::fs::read_to_string(task.path().join("stat"))
                .is_ok_and(|stat| stat.rsplit_once(") ").is_some_and(|(_, rest)| rest.starts_with('T')))
        })
    };
    until("the JVM has stopped", all_stopped).await;
}

/// Waits (yielding, bounded) until `cond` holds.
async fn until(what: &str, mut cond: impl FnMut() -> bool) {
    tokio::time::timeout(common::TIMEOUT, async {
        while !cond() {
            tokio::task::yield_now().await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("timed out waiting until {what}"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attach_failures_are_typed_and_clear() {
    // Refused: a port bound but not listening (held, so that no one else can listen on it meanwhile).
    let held = tokio::net::TcpSocket::new_v4().unwrap();
    held.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let port = held.local_addr().unwrap().port();
    let err = jdi::attach(&format!("127.0.0.1:{port}"), Some(common::TIMEOUT)).await.err().unwrap();
    match &err {
        JdiError::Transport(TransportError::Io { source, .. }) => {
            assert_eq!(source.kind(), ErrorKind::ConnectionRefused)
        }
        other => panic!("{other:?}"),
    }
    assert!(err.to_string().contains(&format!("127.0.0.1:{port}")), "{err}");

    // A peer that answers with something else than the handshake.
    let fake = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = fake.local_addr().unwrap();
    let server = tokio::spawn(async move {
        let (mut s, _) = fake.accept().await.unwrap();
        let mut got = [0u8; 14];
        s.read_exact(&mut got).await.unwrap();
        s.write_all(b"HTTP/1.1 400 Bad Request\r\n").await.unwrap();
        s
    });
    let err = jdi::attach(&addr.to_string(), Some(common::TIMEOUT)).await.err().unwrap();
    assert!(matches!(err, JdiError::Transport(TransportError::Handshake(HandshakeError::Mismatch { .. }))), "{err:?}");
    drop(server.await.unwrap());

    // A peer that accepts and stays silent.
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let started = Instant::now();
    let err = jdi::attach(&silent.local_addr().unwrap().to_string(), Some(Duration::from_millis(300))).await.err();
    let err = err.unwrap();
    assert!(err.is_timeout(), "{err:?}");
    assert!(started.elapsed() < PROMPTLY, "the timeout was not honoured: {:?}", started.elapsed());

    // Bad addresses are refused before any I/O.
    let err = jdi::attach("no-port-here:", Some(common::TIMEOUT)).await.err().unwrap();
    assert!(matches!(err, JdiError::Transport(TransportError::Address(_))), "{err:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listener_accepts_an_agent_that_connects_to_us() {
    let listener = Listener::bind("127.0.0.1:0").await.unwrap();
    let options = format!("transport=dt_socket,server=n,suspend=y,address={}", listener.local_addr());
    let agent = match common::agent() {
        Agent::Path(lib, _) => Agent::path(lib, options),
        _ => Agent::jdk(options),
    };
    let jvm = Debuggee::builder("Hello").arg("listened").agent(agent).expect_listening(false).spawn().unwrap();
    let vm = listener.accept(Some(common::TIMEOUT)).await.unwrap();
    assert_eq!(vm.version().await.unwrap().jdwp_major, test_rig::jdk_feature_version().unwrap() as i32);
    let mut events = vm.event_queue().unwrap();
    let set = events.next_within(common::TIMEOUT).await.unwrap();
    assert!(matches!(set.events.as_slice(), [Event::VmStart { .. }]), "{set:?}");
    vm.resume().await.unwrap();
    // The program runs to its end; the event stream ends with the connection.
    let line = tokio::task::spawn_blocking(move || {
        let line = jvm.wait_for_line("arg: listened", common::TIMEOUT).unwrap();
        assert!(jvm.wait_for_exit(common::TIMEOUT).is_some_and(|s| s.success()), "{}", jvm.output_text());
        line
    })
    .await
    .unwrap();
    assert_eq!(line, "arg: listened");
    while let Some(set) = tokio::time::timeout(common::TIMEOUT, events.next()).await.unwrap() {
        set.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listener_accept_times_out() {
    let listener = Listener::bind("0").await.unwrap();
    assert_ne!(listener.port(), 0);
    let started = Instant::now();
    let err = listener.accept(Some(Duration::from_millis(200))).await.err().unwrap();
    assert!(err.is_timeout(), "{err:?}");
    assert!(err.to_string().contains(&listener.local_addr().to_string()), "{err}");
    assert!(started.elapsed() < PROMPTLY);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn launch_passes_options_and_hands_back_the_output() {
    let opts = launch_options("LaunchEcho")
        .args(["one", "two words"])
        .jvm_option("-Djdi.echo=from a property")
        .env("JDI_ECHO", "from the environment");
    let mut launched = jdi::launch(&opts).await.unwrap();
    let mut events = launched.vm.event_queue().unwrap();
    let set = events.next_within(common::TIMEOUT).await.unwrap();
    assert!(matches!(set.events.as_slice(), [Event::VmStart { .. }]), "{set:?}");
    assert!(!launched.process.has_exited(), "suspended at start");
    launched.vm.resume().await.unwrap();

    let mut out = String::new();
    let mut err = String::new();
    tokio::time::timeout(common::TIMEOUT, async {
        launched.stdout.read_to_string(&mut out).await.unwrap();
        launched.stderr.read_to_string(&mut err).await.unwrap();
    })
    .await
    .unwrap();
    assert_eq!(
        out.lines().collect::<Vec<_>>(),
        ["arg: one", "arg: two words", "prop: from a property", "env: from the environment", "LaunchEcho done"]
    );
    assert_eq!(err.trim(), "LaunchEcho stderr");
    let status = tokio::time::timeout(common::TIMEOUT, launched.process.wait()).await.unwrap().unwrap();
    assert!(status.success(), "{status}");
    assert_eq!(launched.vm.connection().process().map(|p| p.pid()), Some(launched.process.pid()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_last_vm_handle_kills_and_reaps_the_jvm() {
    let launched = jdi::launch(&launch_options("Demo")).await.unwrap();
    let process = launched.process.clone();
    let pid = process.pid();
    assert!(proc_exists(pid));
    // A clone keeps it alive.
    let clone: VirtualMachine = launched.vm.clone();
    drop(launched);
    assert!(!process.has_exited());
    assert_eq!(
        clone.connection().send(&Version {}).await.unwrap().jdwp_major,
        test_rig::jdk_feature_version().unwrap() as i32
    );
    drop(clone);
    let status = tokio::time::timeout(common::TIMEOUT, process.wait()).await.unwrap().unwrap();
    assert_eq!(status.signal(), Some(libc::SIGKILL), "{status}");
    // Reaped, not a zombie: the pid is gone.
    assert!(!proc_exists(pid), "process {pid} is still there");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn launch_failures_say_why() {
    // No such java.
    let err = jdi::launch(&launch_options("Demo").java("/nonexistent/bin/java")).await.err().unwrap();
    assert!(matches!(&err, JdiError::Launch(m) if m.contains("/nonexistent/bin/java")), "{err:?}");

    // The JVM refuses an option: it exits before connecting, and its output says why.
    let err = jdi::launch(&launch_options("Demo").jvm_option("-XX:+NoSuchJdiTestOption")).await.err().unwrap();
    match &err {
        JdiError::ExitedBeforeConnecting { output, command, .. } => {
            assert!(output.contains("NoSuchJdiTestOption"), "{output}");
            assert!(command.contains("-XX:+NoSuchJdiTestOption"), "{command}");
        }
        other => panic!("{other:?}"),
    }
    assert!(err.to_string().contains("NoSuchJdiTestOption"), "{err}");

    // A missing agent library.
    let err = jdi::launch(&launch_options("Demo").agent_path("/nonexistent/libnoagent.so")).await.err().unwrap();
    match &err {
        JdiError::ExitedBeforeConnecting { output, .. } => assert!(output.contains("libnoagent"), "{output}"),
        other => panic!("{other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_launch_that_never_connects_times_out_and_is_killed() {
    // A "java" that ignores its arguments and never connects, and tells us its pid.
    let dir = std::env::temp_dir().join(format!("jdi-connect-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let pid_file = dir.join("pid");
    let fake_java = dir.join("silent-java");
    std::fs::write(&fake_java, format!("#!/bin/sh\necho $$ > {}\nexec sleep 600\n", pid_file.display())).unwrap();
    std::fs::set_permissions(&fake_java, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();

    let started = Instant::now();
    let err = jdi::launch(&launch_options("Demo").java(&fake_java).timeout(Duration::from_millis(1500))).await.err();
    let err = err.unwrap();
    assert!(err.is_timeout(), "{err:?}");
    assert!(err.to_string().contains("silent-java"), "{err}");
    assert!(started.elapsed() < PROMPTLY + Duration::from_millis(1500));
    // launch() kills and reaps what it started before returning the error.
    let pid: u32 = std::fs::read_to_string(&pid_file).unwrap().trim().parse().unwrap();
    assert!(!proc_exists(pid), "the fake JVM {pid} survived a failed launch");
    let _ = std::fs::remove_dir_all(PathBuf::from(&dir));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commands_are_counted_and_many_fly_at_once() {
    let s = common::start("Threads", &[]).await;
    let conn = s.vm.connection().clone();
    let before = conn.commands_sent();
    let threads = conn.send(&AllThreads {}).await.unwrap().threads;
    assert_eq!(conn.commands_sent(), before + 1);

    // 50 calls in flight at once, over a few threads; each gets its own reply. (Raw commands:
    // mirrors may cache names.)
    let name = |&thread: &jdi::protocol::ThreadId| Name { thread };
    let mut sequential = Vec::new();
    for t in &threads {
        sequential.push(conn.send(&name(t)).await.unwrap().thread_name);
    }
    let before = conn.commands_sent();
    let mut calls = tokio::task::JoinSet::new();
    for i in 0..50 {
        let (conn, cmd) = (conn.clone(), name(&threads[i % threads.len()]));
        calls.spawn(async move { (i, conn.send(&cmd).await) });
    }
    let mut got = 0;
    while let Some(joined) = calls.join_next().await {
        let (i, reply) = joined.unwrap();
        assert_eq!(reply.unwrap().thread_name, sequential[i % threads.len()]);
        got += 1;
    }
    assert_eq!(got, 50);
    assert_eq!(conn.commands_sent(), before + 50);
    assert_eq!(conn.pending_calls(), 0);
    s.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jdwp_errors_name_the_failed_command() {
    let s = common::start("Demo", &[]).await;
    let bogus = ObjectReference::new(s.vm.clone(), ObjectId(0x7fff_dead_beef));
    let err = bogus.reference_type().await.err().unwrap();
    assert!(
        matches!(err, JdiError::Jdwp { command: "ObjectReference.ReferenceType", code: ErrorCode::INVALID_OBJECT }),
        "{err:?}"
    );
    assert_eq!(err.code(), Some(ErrorCode::INVALID_OBJECT));
    assert_eq!(err.command(), Some("ObjectReference.ReferenceType"));
    assert!(err.to_string().starts_with("ObjectReference.ReferenceType failed: INVALID_OBJECT"), "{err}");
    // The connection is fine afterwards.
    assert_eq!(s.vm.version().await.unwrap().jdwp_major, test_rig::jdk_feature_version().unwrap() as i32);
    s.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_vm_fails_every_pending_call_promptly() {
    let mut s = common::start("Demo", &[]).await;
    let pid = s.jvm.pid();
    let threads = s.vm.all_threads().await.unwrap();
    // Freeze the JVM so that nothing gets answered: then all 50 calls are surely in flight.
    freeze(pid).await;
    let conn = s.vm.connection().clone();
    let mut calls = tokio::task::JoinSet::new();
    for i in 0..50 {
        // Raw commands: mirrors may answer from their caches.
        let (conn, thread) = (conn.clone(), threads[i % threads.len()].id());
        calls.spawn(async move {
            if i % 2 == 0 {
                conn.send(&Version {}).await.map(drop)
            } else {
                conn.send(&Name { thread }).await.map(drop)
            }
        });
    }
    until("50 calls are in flight", || conn.pending_calls() == 50).await;

    signal(pid, libc::SIGKILL);
    let killed = Instant::now();
    let results = tokio::time::timeout(PROMPTLY, async {
        let mut results = Vec::new();
        while let Some(joined) = calls.join_next().await {
            results.push(joined.unwrap());
        }
        results
    })
    .await
    .expect("pending calls failed promptly");
    assert_eq!(results.len(), 50);
    for r in results {
        assert!(matches!(r, Err(JdiError::Disconnected { .. })), "{r:?}");
    }
    assert!(killed.elapsed() < PROMPTLY);
    assert!(conn.is_closed());
    assert_eq!(conn.pending_calls(), 0);
    // Later calls fail at once, and the event stream ends.
    let err = conn.send(&Version {}).await.err().unwrap();
    assert!(err.is_disconnected(), "{err:?}");
    assert!(tokio::time::timeout(PROMPTLY, s.events.next()).await.unwrap().is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_timeout_gives_up_and_the_connection_survives() {
    let s = common::start("Demo", &[]).await;
    let pid = s.jvm.pid();
    let conn = s.vm.connection().clone();
    assert_eq!(conn.call_timeout(), None);
    freeze(pid).await;
    conn.set_call_timeout(Some(Duration::from_millis(200)));
    let started = Instant::now();
    let err = conn.send(&Version {}).await.err().unwrap();
    assert!(err.is_timeout(), "{err:?}");
    assert!(err.to_string().contains("VirtualMachine.Version"), "{err}");
    assert!(started.elapsed() < PROMPTLY);
    let err = conn.send_with_timeout(&AllThreads {}, Duration::from_millis(100)).await.err().unwrap();
    assert!(err.is_timeout(), "{err:?}");
    assert_eq!(conn.pending_calls(), 0, "timed-out calls are unregistered");

    // Thawed, the VM answers the abandoned calls (their replies are dropped) and the new one.
    signal(pid, libc::SIGCONT);
    conn.set_call_timeout(None);
    assert_eq!(conn.send(&Version {}).await.unwrap().jdwp_major, test_rig::jdk_feature_version().unwrap() as i32);
    assert!(!conn.is_closed());
    s.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dispose_closes_the_connection() {
    let mut s = common::start("Demo", &[]).await;
    s.vm.dispose().await.unwrap();
    // The agent resumes the VM and hangs up; the program runs to its end on its own.
    assert!(tokio::time::timeout(common::TIMEOUT, s.events.next()).await.unwrap().is_none());
    let err = s.vm.connection().send(&Version {}).await.err().unwrap();
    assert!(err.is_disconnected(), "{err:?}");
    let jvm = s.jvm;
    let status = tokio::task::spawn_blocking(move || jvm.wait_for_exit(common::TIMEOUT)).await.unwrap();
    assert!(status.is_some_and(|s| s.success()), "{status:?}");
}
