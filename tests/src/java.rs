//! Locating the JDK and compiling (and caching) the Java fixtures.

use std::{
    env,
    ffi::OsString,
    fs,
    io::{self, ErrorKind},
    os::{fd::AsRawFd, unix::fs::PermissionsExt},
    path::{Path, PathBuf},
    process::Command,
    sync::OnceLock,
};

use crate::error::{Error, IoContext, Result};

/// Bumped when the cache layout or javac flags change, so stale caches are
/// not reused (it is part of the hash).
const CACHE_FORMAT: &str = "test-rig-fixtures-v1";

/// Flags for every fixture compile. `-g` keeps line numbers, local variable
/// tables and source file names, which the debugger tests inspect;
/// `--release 17` keeps class files at version 61 even with a newer JDK.
const JAVAC_FLAGS: &[&str] = &["-g", "--release", "17", "-encoding", "UTF-8"];

/// The environment variable naming the JDK the tests run (e.g.
/// `/usr/lib/jvm/temurin-25-jdk-amd64`): its `java` runs the debuggees and the JDK's agent is
/// its `libjdwp.so`.
pub const TEST_JDK_VAR: &str = "JDBG_TEST_JDK";

/// The environment variable that runs each fixture's `main` in a virtual thread (`1`, on JDK 21
/// and later), as OpenJDK's test library does with its virtual "main wrapper".
pub const VIRTUAL_MAIN_VAR: &str = "JDBG_TEST_VIRTUAL_MAIN";

/// The JDK to use: `$JDBG_TEST_JDK` if set, else `$JAVA_HOME` if set, else the JDK owning
/// `javac` (or `java`) on `PATH` (the JDK 17 of this project's machines), with symlinks such as
/// `/usr/bin/javac` resolved.
pub fn try_java_home() -> Result<PathBuf> {
    for var in [TEST_JDK_VAR, "JAVA_HOME"] {
        if let Some(home) = env::var_os(var).filter(|h| !h.is_empty()) {
            let home = PathBuf::from(home);
            if !home.join("bin").join("java").is_file() {
                return Err(Error::JavaNotFound(format!("{var}={} has no bin/java", home.display())));
            }
            return Ok(home);
        }
    }
    for tool in ["javac", "java"] {
        if let Some(found) = find_on_path(tool) {
            let real = fs::canonicalize(&found).context(|| format!("resolving {}", found.display()))?;
            // <home>/bin/<tool> -> <home>
            if let Some(home) = real.parent().and_then(Path::parent) {
                return Ok(home.to_path_buf());
            }
        }
    }
    Err(Error::JavaNotFound("JAVA_HOME is not set and neither javac nor java is on PATH".into()))
}

/// The feature version of the test JDK (17, 21, 25), from the `JAVA_VERSION` line of its
/// `release` file.
pub fn jdk_feature_version() -> Result<u32> {
    let home = try_java_home()?;
    let release = home.join("release");
    let text = fs::read_to_string(&release).context(|| format!("reading {}", release.display()))?;
    parse_feature_version(&text)
        .ok_or_else(|| Error::JavaNotFound(format!("{} has no JAVA_VERSION line", release.display())))
}

/// Whether the test JDK has virtual threads (21+). If not, says loudly that the calling test is
/// skipped, and how to run it, for the test to return.
pub fn test_jdk_has_virtual_threads() -> bool {
    let feature = jdk_feature_version().unwrap();
    if feature < 21 {
        eprintln!("SKIPPED: the test JDK is {feature}; virtual threads need JDBG_TEST_JDK=<JDK 21+> (Temurin 25)");
    }
    feature >= 21
}

fn parse_feature_version(release: &str) -> Option<u32> {
    let line = release.lines().find_map(|l| l.strip_prefix("JAVA_VERSION="))?;
    let version = line.trim().trim_matches('"');
    // "17.0.15", "25", "1.8.0_402" (never a JDK this project runs, but read right anyway).
    let mut parts = version.split(['.', '_', '-', '+']);
    let first: u32 = parts.next()?.parse().ok()?;
    if first == 1 { parts.next()?.parse().ok() } else { Some(first) }
}

/// Whether fixtures' `main`s run in a virtual thread ([`VIRTUAL_MAIN_VAR`] set to anything but
/// empty or `0`).
pub fn virtual_main_requested() -> bool {
    env::var_os(VIRTUAL_MAIN_VAR).is_some_and(|v| !v.is_empty() && v != "0")
}

/// The wrapper's main class and the classpath directory holding it, compiled on first use like the
/// fixtures. Fails on a JDK without virtual threads (before 21).
pub fn virtual_main_wrapper() -> Result<(&'static str, &'static Path)> {
    static WRAPPER: OnceLock<Result<PathBuf>> = OnceLock::new();
    let dir = WRAPPER
        .get_or_init(|| {
            let feature = jdk_feature_version()?;
            if feature < 21 {
                return Err(Error::JavaNotFound(format!(
                    "{VIRTUAL_MAIN_VAR} needs a JDK 21 or later for virtual threads; the test JDK is {feature}"
                )));
            }
            let sources = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/src/virtual_main"));
            compile_java_sources(sources, &target_dir().join("virtual-main")).map(|c| c.classes_dir)
        })
        .as_deref()
        .map_err(Clone::clone)?;
    Ok(("VirtualMainWrapper", dir))
}

/// Like [`try_java_home`], but panics with a clear message: tests cannot do
/// anything useful without a JDK.
pub fn java_home() -> PathBuf {
    try_java_home().unwrap_or_else(|e| panic!("{e}"))
}

/// Path of a JDK tool (`"java"`, `"javac"`, `"jcmd"`, ...) in [`try_java_home`]'s
/// `bin/`, checked to exist.
pub fn java_tool(name: &str) -> Result<PathBuf> {
    let home = try_java_home()?;
    let tool = home.join("bin").join(name);
    if is_executable(&tool) {
        Ok(tool)
    } else {
        Err(Error::JavaNotFound(format!(
            "{} does not exist (is {} a JDK rather than a JRE?)",
            tool.display(),
            home.display()
        )))
    }
}

fn find_on_path(tool: &str) -> Option<PathBuf> {
    let path = env::var_os("PATH")?;
    env::split_paths(&path).map(|dir| dir.join(tool)).find(|p| is_executable(p))
}

fn is_executable(path: &Path) -> bool {
    fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The directory holding the fixture sources (`tests/fixtures/`).
pub fn fixture_source_dir() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures"))
}

/// Where compiled fixtures are cached: `<target>/java-fixtures/`.
///
/// The target directory is found from the running test binary (cargo puts it
/// under `<target>/<profile>/deps/`, and `<target>` has cargo's
/// `CACHEDIR.TAG`), which honours `CARGO_TARGET_DIR` and `--target` without
/// having to interpret them; otherwise `$CARGO_TARGET_DIR`, else
/// `<workspace>/target`.
pub fn fixtures_cache_root() -> PathBuf {
    target_dir().join("java-fixtures")
}

fn target_dir() -> PathBuf {
    let exe = env::current_exe().unwrap_or_default();
    if let Some(dir) = exe.ancestors().skip(1).find(|d| d.join("CACHEDIR.TAG").is_file()) {
        return dir.to_path_buf();
    }
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the rig crate lives inside the workspace");
    match env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => workspace.join(dir), // join keeps an absolute path as is
        None => workspace.join("target"),
    }
}

/// The classpath directory holding the compiled fixtures.
///
/// Compiles `tests/fixtures/**/*.java` on first use in a process (or reuses
/// the cache another test binary already filled); later calls return the same
/// path at once. A compile failure is cached too and returned to every caller.
pub fn fixtures() -> Result<&'static Path> {
    static FIXTURES: OnceLock<Result<PathBuf>> = OnceLock::new();
    FIXTURES
        .get_or_init(|| compile_java_sources(fixture_source_dir(), &fixtures_cache_root()).map(|c| c.classes_dir))
        .as_deref()
        .map_err(Clone::clone)
}

/// Outcome of [`compile_java_sources`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompiledClasses {
    /// Classpath directory with the `.class` files (`<cache_root>/<hash>`).
    pub classes_dir: PathBuf,
    /// `true` if this call ran javac, `false` if the cache was reused.
    pub compiled: bool,
}

/// Compiles every `.java` file under `sources` (recursively) with
/// `javac -g` into `<cache_root>/<hash>/`, where the hash covers the sources'
/// paths and contents, the javac used and the flags.
///
/// Safe against concurrent callers in any number of threads and processes:
/// compiles are serialized by an exclusive `flock` on `<cache_root>/.lock`,
/// and each compile writes into a temporary directory that is renamed into
/// place only when javac succeeded, so `<hash>/` either does not exist or is
/// complete (also if a compiling process is killed).
pub fn compile_java_sources(sources: &Path, cache_root: &Path) -> Result<CompiledClasses> {
    let files = java_files(sources)?;
    if files.is_empty() {
        return Err(Error::io(
            format!("no .java files under {}", sources.display()),
            io::Error::from(ErrorKind::NotFound),
        ));
    }
    let javac = java_tool("javac")?;
    let hash = hash_sources(sources, &files, &javac)?;
    let classes_dir = cache_root.join(&hash);

    // Fast path without the lock: the directory only ever appears complete.
    if classes_dir.is_dir() {
        return Ok(CompiledClasses { classes_dir, compiled: false });
    }

    fs::create_dir_all(cache_root).context(|| format!("creating {}", cache_root.display()))?;
    let _lock = lock_exclusive(&cache_root.join(".lock"))?;
    // Someone may have finished compiling while we waited for the lock.
    if classes_dir.is_dir() {
        return Ok(CompiledClasses { classes_dir, compiled: false });
    }
    remove_stale_temp_dirs(cache_root);

    let tmp = cache_root.join(format!(".tmp-{hash}-{}", std::process::id()));
    fs::create_dir_all(&tmp).context(|| format!("creating {}", tmp.display()))?;
    tracing::info!(sources = %sources.display(), out = %classes_dir.display(), "compiling Java fixtures");
    let output = Command::new(&javac)
        .args(JAVAC_FLAGS)
        .arg("-d")
        .arg(&tmp)
        .args(&files)
        .output()
        .context(|| format!("running {}", javac.display()))?;
    if !output.status.success() {
        let _ = fs::remove_dir_all(&tmp);
        return Err(Error::Compile {
            status: output.status.to_string(),
            sources: sources.to_path_buf(),
            diagnostics: format!(
                "{}{}",
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            ),
        });
    }
    fs::rename(&tmp, &classes_dir).context(|| format!("renaming {} to {}", tmp.display(), classes_dir.display()))?;
    Ok(CompiledClasses { classes_dir, compiled: true })
}

/// All `.java` files under `dir`, sorted so the hash is stable.
fn java_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(d) = pending.pop() {
        let entries = fs::read_dir(&d).context(|| format!("reading {}", d.display()))?;
        for entry in entries {
            let path = entry.context(|| format!("reading {}", d.display()))?.path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "java") {
                out.push(path);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// FNV-1a (64 bit) over everything that affects the compiled output. Not
/// cryptographic, just a stable cache key; std's `DefaultHasher` is not
/// guaranteed stable across Rust releases.
fn hash_sources(root: &Path, files: &[PathBuf], javac: &Path) -> Result<String> {
    struct Fnv(u64);
    impl Fnv {
        fn write(&mut self, bytes: &[u8]) {
            for &b in bytes {
                self.0 ^= u64::from(b);
                self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
            }
            // Length-delimit so ("ab","c") and ("a","bc") differ.
            for &b in &(bytes.len() as u64).to_le_bytes() {
                self.0 ^= u64::from(b);
                self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
            }
        }
    }
    let mut h = Fnv(0xcbf2_9ce4_8422_2325);
    h.write(CACHE_FORMAT.as_bytes());
    h.write(javac.as_os_str().as_encoded_bytes());
    for flag in JAVAC_FLAGS {
        h.write(flag.as_bytes());
    }
    for file in files {
        let rel = file.strip_prefix(root).unwrap_or(file);
        h.write(rel.as_os_str().as_encoded_bytes());
        h.write(&fs::read(file).context(|| format!("reading {}", file.display()))?);
    }
    Ok(format!("{:016x}", h.0))
}

/// An exclusive `flock` held until the returned file is dropped (closing the
/// descriptor releases it, also if the process dies).
fn lock_exclusive(path: &Path) -> Result<fs::File> {
    let file = fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .open(path)
        .context(|| format!("opening lock file {}", path.display()))?;
    loop {
        // SAFETY: flock on a descriptor we own; no memory is involved.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } == 0 {
            return Ok(file);
        }
        let err = io::Error::last_os_error();
        if err.kind() != ErrorKind::Interrupted {
            return Err(Error::io(format!("locking {}", path.display()), err));
        }
    }
}

/// Removes `.tmp-*` directories left by compiles that were killed. Only
/// called with the lock held, when no compile can be in progress.
fn remove_stale_temp_dirs(cache_root: &Path) {
    let Ok(entries) = fs::read_dir(cache_root) else {
        return;
    };
    for entry in entries.flatten() {
        let name: OsString = entry.file_name();
        if name.to_string_lossy().starts_with(".tmp-") {
            let _ = fs::remove_dir_all(entry.path());
        }
    }
}

/// The 1-based line number of the line in fixture `file` (e.g. `"Demo.java"`)
/// that contains `marker` (e.g. `"@loop-tick"`), for setting breakpoints
/// without hard-coding line numbers. The marker must appear on exactly one
/// line, not as a prefix of a longer marker (`"@tick"` does not match
/// `"@tick-first"`); otherwise an [`Error::Fixture`] says why.
pub fn fixture_line(file: &str, marker: &str) -> Result<u32> {
    let path = fixture_source_dir().join(file);
    let text = fs::read_to_string(&path).context(|| format!("reading fixture {}", path.display()))?;
    let hits: Vec<usize> =
        text.lines().enumerate().filter(|(_, line)| contains_marker(line, marker)).map(|(i, _)| i + 1).collect();
    let problem = match hits.as_slice() {
        [line] => return Ok(u32::try_from(*line).expect("fixture shorter than 4G lines")),
        [] => format!("marker {marker:?} not found"),
        _ => format!("marker {marker:?} found on several lines: {hits:?}"),
    };
    Err(Error::Fixture { file: path, problem })
}

fn contains_marker(line: &str, marker: &str) -> bool {
    line.match_indices(marker).any(|(at, _)| {
        !line[at + marker.len()..].chars().next().is_some_and(|c| c.is_alphanumeric() || c == '-' || c == '_')
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn feature_versions_from_release_files() {
        assert_eq!(parse_feature_version("IMPLEMENTOR=\"Eclipse Adoptium\"\nJAVA_VERSION=\"25.0.1\"\n"), Some(25));
        assert_eq!(parse_feature_version("JAVA_VERSION=\"17.0.15\""), Some(17));
        assert_eq!(parse_feature_version("JAVA_VERSION=\"21\""), Some(21));
        assert_eq!(parse_feature_version("JAVA_VERSION=\"1.8.0_402\""), Some(8));
        assert_eq!(parse_feature_version("JAVA_RUNTIME_VERSION=\"25\""), None);
    }
}
