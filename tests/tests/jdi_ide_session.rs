//! An IDE-style JDI session on virtual threads (issue #18: "IntelliJ/Eclipse-style JDI sessions on
//! virtual threads work"): `tests/jdi-client/IdeSession.java`, run on the test JDK with the JDK's
//! own JDI (what IntelliJ and Eclipse sit on), debugs VirtualWork through JDK 25's agent and
//! through ours, and the two transcripts must be the same line for line: the VM's version,
//! platform-only thread starts, breakpoints in a named and an unnamed virtual thread, each
//! thread's view (virtual, status, group, suspend count, listed or not), its frames and locals, a
//! method invoked in it, a step over and a step out, a suspend and resume of it alone.
//!
//! Needs a JDK 21+ test JDK (`JDBG_TEST_JDK`, e.g. Temurin 25); on an older one it says so and
//! checks nothing.

use std::path::Path;
use std::process::Command;

use test_rig::wire::both_agents;
use test_rig::{Debuggee, fixture_line};

fn transcript(agent: test_rig::Agent, client: &Path) -> String {
    let jvm = Debuggee::builder("VirtualWork").agent(agent).virtual_main(false).spawn().expect("VirtualWork starts");
    let java = test_rig::java_tool("java").expect("java");
    let out = Command::new(java)
        .arg("-cp")
        .arg(client)
        .arg("IdeSession")
        .arg(jvm.address().to_string())
        .arg(fixture_line("VirtualWork.java", "@vt-parked").unwrap().to_string())
        .arg(fixture_line("VirtualWork.java", "@vt-work").unwrap().to_string())
        .output()
        .expect("the JDI client runs");
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(out.status.success(), "IdeSession failed:\n{text}\n{}", String::from_utf8_lossy(&out.stderr));
    text
}

#[test]
fn an_ide_session_on_virtual_threads_sees_what_it_sees_through_the_jdks_agent() {
    let feature = test_rig::jdk_feature_version().expect("the test JDK's version");
    if feature < 21 {
        eprintln!(
            "NOTE an_ide_session_on_virtual_threads: the test JDK is {feature}, without virtual threads \
             (set JDBG_TEST_JDK to a JDK 21+): nothing checked"
        );
        return;
    }
    let sources = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/jdi-client"));
    let cache = test_rig::fixtures_cache_root().with_file_name("jdi-client");
    let client = test_rig::compile_java_sources(sources, &cache).expect("IdeSession compiles").classes_dir;

    let mut transcripts = Vec::new();
    for (name, agent) in both_agents() {
        transcripts.push((name, transcript(agent, &client)));
    }
    let (jdk, ours) = (&transcripts[0].1, &transcripts[1].1);
    assert_eq!(
        ours.lines().collect::<Vec<_>>(),
        jdk.lines().collect::<Vec<_>>(),
        "--- JDK's agent:\n{jdk}\n--- ours:\n{ours}"
    );

    // What the JDK's agent shows, which ours now matches, is what an IDE needs.
    for expected in [
        "breakpoint at VirtualWork.parked:",
        "  thread: name=\"vt-parked\" virtual=true status=RUNNING suspended=true atBreakpoint=true suspendCount=1 group=VirtualThreads inAllThreads=false",
        "  invoke getName() = \"vt-parked\"",
        "  invoke isVirtual() = true",
        "breakpoint at VirtualWork.work:",
        "  thread: name=\"\" virtual=true",
        "  local n = 6",
        "  local square = 36",
        "  step out ended at VirtualWork.lambda$main$0:",
        "virtual thread starts reported with platformThreadsOnly: 0",
        "end",
    ] {
        assert!(ours.lines().any(|l| l.starts_with(expected)), "no line starting {expected:?}:\n{ours}");
    }
}
