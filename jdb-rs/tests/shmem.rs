//! jdb-rs over the shared-memory transport against our agent: `-attach shmem:NAME` works, a
//! debugger killed with SIGKILL leaves nothing in `/dev/shm` and the agent takes the next one, and the
//! VM's end removes its segment.

mod common;

use common::{Driver, TIMEOUT, jdb_rs};
use test_rig::{Agent, Debuggee};

/// Files in `/dev/shm` belonging to the transport name `name`.
fn shm_leftovers(name: &str) -> Vec<String> {
    let prefix = format!("jdwp-shmem-{name}");
    std::fs::read_dir("/dev/shm")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str().map(str::to_owned))
        .filter(|f| f == &prefix || f.starts_with(&format!("{prefix}~")))
        .collect()
}

/// `target/<profile>/libjdwp_agent.so`, next to the test binary's profile directory.
fn our_agent() -> std::path::PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.parent().and_then(|deps| deps.parent()).unwrap().join("libjdwp_agent.so")
}

#[test]
fn a_killed_debugger_leaves_nothing_and_the_next_one_attaches() {
    let name = format!("jdb-killed-{}", std::process::id());
    let stop_dir = std::env::temp_dir().join(format!("jdb-rs-{name}"));
    std::fs::create_dir_all(&stop_dir).unwrap();
    let stop = stop_dir.join("stop");
    let options = format!("transport=dt_shmem,server=y,suspend=y,address={name}");
    let jvm = Debuggee::builder("ReattachLoop")
        .arg(stop.as_os_str())
        .agent(Agent::path(our_agent(), options))
        .expect_listening(false)
        .spawn()
        .unwrap();
    jvm.wait_for_line(&format!("Listening for transport dt_shmem at address: {name}"), TIMEOUT).unwrap();

    let attach = vec!["-attach".to_string(), format!("shmem:{name}")];
    let mut first = Driver::spawn(&jdb_rs(), &attach);
    first.ready();
    let threads = first.command("threads");
    assert!(threads.contains("main"), "{threads}");
    first.kill_hard();

    // The agent notices the dead debugger and takes the next one; the killed one's connection
    // segment is gone (only the agent's rendezvous remains, as it keeps listening).
    let mut second = Driver::spawn(&jdb_rs(), &attach);
    second.ready();
    let threads = second.command("threads");
    assert!(threads.contains("main"), "{threads}\n{}", second.err.text());
    assert_eq!(shm_leftovers(&name), vec![format!("jdwp-shmem-{name}")]);
    // End of input: jdb-rs leaves, disposing, so the VM runs on.
    let (status, _, err) = second.wait();
    assert!(status.success(), "{err}");

    // The program ends by itself; its segment goes with it.
    std::fs::write(&stop, b"").unwrap();
    let status = jvm.wait_for_exit(TIMEOUT);
    assert!(status.is_some_and(|s| s.success()), "{status:?}\n{}", jvm.output_text());
    assert!(shm_leftovers(&name).is_empty(), "{:?}", shm_leftovers(&name));
    let _ = std::fs::remove_dir_all(&stop_dir);
}
