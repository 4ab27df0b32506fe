//! Which JDWP agent a launched VM gets. jdb-rs launches with this project's agent
//! (`libjdwp_agent.so`) unless told otherwise (`--jdk-agent`), because that is the agent the
//! rest of the stack is built to be faster with; when the library cannot be found it says so and
//! falls back to the JDK's own agent rather than refusing to debug.

use std::path::{Path, PathBuf};

/// The library's file name, as cargo builds it.
pub const LIBRARY: &str = "libjdwp_agent.so";

/// The environment variable that names the library explicitly.
pub const ENV: &str = "JDB_RS_AGENT";

/// Our agent library: `$JDB_RS_AGENT`, else next to the executable (`target/<profile>/`, where
/// cargo puts both), else `../lib/` of the executable's folder (an installed layout).
pub fn locate() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os(ENV).filter(|v| !v.is_empty()) {
        return Some(PathBuf::from(path));
    }
    let exe = std::env::current_exe().ok()?;
    candidates(exe.parent()?).into_iter().find(|p| p.is_file())
}

fn candidates(exe_dir: &Path) -> Vec<PathBuf> {
    let mut out = vec![exe_dir.join(LIBRARY)];
    if let Some(prefix) = exe_dir.parent() {
        out.push(prefix.join("lib").join(LIBRARY));
    }
    out
}

/// The one-line note printed when our library is missing and the JDK's agent is used instead.
pub fn fallback_note() -> String {
    format!(
        "jdb-rs: note: {LIBRARY} not found next to jdb-rs (or in ${ENV}); launching with the JDK's agent \
         (build ours with `cargo build -p jdwp-agent`, or pass --agent PATH or --jdk-agent)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn looks_next_to_the_executable_then_in_lib() {
        let c = candidates(Path::new("/opt/jdbg/bin"));
        assert_eq!(
            c,
            [PathBuf::from("/opt/jdbg/bin/libjdwp_agent.so"), PathBuf::from("/opt/jdbg/lib/libjdwp_agent.so")]
        );
    }
}
