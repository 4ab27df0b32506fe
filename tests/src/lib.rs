//! Test rig for the workspace's integration tests: real JVMs as debuggees.
//!
//! Every crate in the workspace (protocol, transports, agent, client) is
//! ultimately tested against a real HotSpot VM. This crate keeps the plumbing
//! for that in one place:
//!
//! * [`fixtures()`] compiles the Java programs in `tests/fixtures/` with
//!   `javac -g` once per test run and caches the classes under the workspace's
//!   `target/java-fixtures/<hash>/`, keyed by a hash of the sources, so edits
//!   recompile and unchanged sources are reused across test binaries. It is
//!   safe to call from many threads and processes at once.
//! * [`Debuggee`] launches `java` with a JDWP agent (the JDK's own
//!   `-agentlib:jdwp` by default, or ours via [`Agent::Path`]), waits for the
//!   agent's `Listening for transport dt_socket at address: N` line and
//!   reports the port, captures stdout/stderr, and never leaves a JVM behind:
//!   it is killed on drop (also when the test panics) and dies with the test
//!   process.
//! * The JDK is `$JDBG_TEST_JDK` (else `$JAVA_HOME`, else the one on `PATH`, JDK 17 here), and
//!   with `JDBG_TEST_VIRTUAL_MAIN=1` (JDK 21+) every fixture's `main` runs in a virtual thread
//!   named `main` ([`virtual_main_wrapper`]), as OpenJDK's test library can.
//! * [`fixture_line`] finds the line number of a `@marker` comment in a
//!   fixture, so tests can set breakpoints without hard-coding line numbers.
//!
//! Typical use from another crate's integration test (add
//! `jdwp-test-rig = { path = "../tests" }` to its `[dev-dependencies]`):
//!
//! ```no_run
//! use std::{net::TcpStream, time::Duration};
//! use test_rig::Debuggee;
//!
//! // JDK agent, server=y, suspend=y, ephemeral port on 127.0.0.1.
//! let jvm = Debuggee::builder("Demo").spawn().unwrap();
//! let stream = TcpStream::connect(jvm.address()).unwrap();
//! // ... handshake, send commands, resume the VM ...
//! jvm.wait_for_line("Demo done", Duration::from_secs(60)).unwrap();
//! ```

mod debuggee;
mod error;
pub mod hprof;
mod java;
mod spawn;
pub mod wire;

pub use debuggee::{
    Agent, DEFAULT_JDK_AGENT_OPTIONS, DEFAULT_TIMEOUT, Debuggee, DebuggeeBuilder, FREE_PORT, Stream, free_port,
};
pub use error::{Error, Result};
pub use java::{
    CompiledClasses, TEST_JDK_VAR, VIRTUAL_MAIN_VAR, compile_java_sources, fixture_line, fixture_source_dir, fixtures,
    fixtures_cache_root, java_home, java_tool, jdk_feature_version, test_jdk_has_virtual_threads, try_java_home,
    virtual_main_requested, virtual_main_wrapper,
};

/// Our agent library, `target/<profile>/libjdwp_agent.so`, next to the running test binary's profile
/// directory (build it first: `cargo build -p jdwp-agent`).
pub fn our_agent_library() -> Result<std::path::PathBuf> {
    let exe = std::env::current_exe().map_err(|e| Error::io("finding the test binary", e))?;
    let lib =
        exe.parent().and_then(std::path::Path::parent).unwrap_or(std::path::Path::new(".")).join("libjdwp_agent.so");
    if lib.exists() { Ok(lib) } else { Err(Error::AgentNotBuilt(lib)) }
}
