//! `--sample`: the bundled sample program (`tests/fixtures/Demo.java`), compiled with `javac -g`
//! into `target/jdb-rs-sample/` when missing or older than its source.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Where the sample's classes and source are.
pub struct Sample {
    pub classpath: String,
    pub sourcepath: String,
}

fn javac() -> PathBuf {
    match std::env::var_os("JAVA_HOME").filter(|h| !h.is_empty()) {
        Some(home) => Path::new(&home).join("bin").join("javac"),
        None => "javac".into(),
    }
}

/// Compiles the sample if needed.
pub fn prepare() -> Result<Sample, String> {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().ok_or("no workspace directory")?;
    let sources = workspace.join("tests").join("fixtures");
    let source = sources.join("Demo.java");
    if !source.is_file() {
        return Err(format!("the sample program {} is missing", source.display()));
    }
    let target = std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| workspace.join("target"));
    let out = target.join("jdb-rs-sample");
    let class = out.join("Demo.class");
    let stale = match (
        std::fs::metadata(&class).and_then(|m| m.modified()),
        std::fs::metadata(&source).and_then(|m| m.modified()),
    ) {
        (Ok(c), Ok(s)) => c < s,
        _ => true,
    };
    if stale {
        std::fs::create_dir_all(&out).map_err(|e| format!("creating {}: {e}", out.display()))?;
        let status = Command::new(javac())
            .args(["-g", "-d"])
            .arg(&out)
            .arg(&source)
            .status()
            .map_err(|e| format!("running javac (install a JDK, or set JAVA_HOME): {e}"))?;
        if !status.success() {
            return Err(format!("javac failed on {} ({status})", source.display()));
        }
    }
    Ok(Sample { classpath: out.display().to_string(), sourcepath: sources.display().to_string() })
}
