//! Installing the tools and fetching OpenJDK 17's test sources.

use std::{
    fs,
    io::{BufRead, BufReader},
    path::{Path, PathBuf},
    process::{Command, Stdio},
};

use crate::process::{self, Context, Result};

/// The tools a run needs.
#[derive(Debug)]
pub struct Tools {
    /// jtreg's launcher script.
    pub jtreg: PathBuf,
    /// The JDK 17 the tests belong to (canonical path): the copy is made from it.
    pub jdk: PathBuf,
}

/// The unpacked test directories of OpenJDK 17's source package.
#[derive(Debug)]
pub struct Sources {
    /// Holds `test/` (`target/conformance/openjdk-src/openjdk-17-<version>`).
    pub dir: PathBuf,
    /// The source tree's name, e.g. `openjdk-17-17.0.19+10`.
    pub name: String,
}

/// Debian packages providing what a run needs.
const JTREG_PACKAGE: &str = "jtreg7";
const JDK_PACKAGE: &str = "openjdk-17-jdk-headless";
const GXX_PACKAGE: &str = "g++";
const SOURCE_PACKAGE: &str = "openjdk-17";

/// The apt source list entry we add when no `deb-src` line offers OpenJDK 17's sources.
const DEB_SRC_FILE: &str = "/etc/apt/sources.list.d/jdbg-conformance-deb-src.sources";
const DEB_SRC_ENTRY: &str = "\
# Added by `cargo xtask conformance` (jdbg-rs): OpenJDK 17's test sources via `apt-get source`.
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
";

/// What is unpacked from the source package (paths under its top directory).
const TEST_PATHS: &[&str] = &[
    "test/hotspot/jtreg/TEST.ROOT",
    "test/hotspot/jtreg/TEST.groups",
    // TEST.ROOT names it next to TEST.groups; jtreg refuses to run without it.
    "test/hotspot/jtreg/TEST.quick-groups",
    "test/hotspot/jtreg/ProblemList.txt",
    "test/hotspot/jtreg/vmTestbase",
    // com/sun/jdi/EATests.java builds with `@library /test/hotspot/jtreg`: it imports these.
    "test/hotspot/jtreg/compiler/testlibrary",
    "test/hotspot/jtreg/compiler/whitebox",
    "test/jdk/TEST.ROOT",
    "test/jdk/TEST.groups",
    "test/jdk/ProblemList.txt",
    "test/jdk/com/sun/jdi",
    "test/lib",
    "test/jtreg-ext",
];

/// jtreg (7.5) checks every group of a test root's group files and refuses to run when one names a
/// missing directory, which the unpacked subset guarantees. No suite uses groups, so these files are
/// replaced by empty ones (the originals are kept as `<name>.orig`).
const GROUP_FILES: &[&str] =
    &["test/hotspot/jtreg/TEST.groups", "test/hotspot/jtreg/TEST.quick-groups", "test/jdk/TEST.groups"];

/// Marks a completely unpacked source tree. Holds [`unpack_key`], so a tree unpacked differently
/// (another list of paths) is unpacked anew.
const COMPLETE: &str = ".complete";

fn unpack_key() -> String {
    format!("paths: {}\nempty group files: {}\n", TEST_PATHS.join(" "), GROUP_FILES.join(" "))
}

/// Finds jtreg, a JDK 17 and g++, installing the missing ones with apt-get (unless `install` is false).
pub fn ensure_tools(install: bool) -> Result<Tools> {
    let mut missing = Vec::new();
    if find_jtreg().is_none() {
        missing.push(JTREG_PACKAGE);
    }
    if find_jdk17().is_none() {
        missing.push(JDK_PACKAGE);
    }
    if process::find_on_path("g++").is_none() {
        missing.push(GXX_PACKAGE);
    }
    if !missing.is_empty() {
        if !install {
            return Err(format!("missing packages {missing:?} (and --no-install was given)"));
        }
        println!("== installing {}", missing.join(" "));
        apt_get(&["update", "-q"])?;
        let mut args = vec!["install", "-y", "-q"];
        args.extend(&missing);
        apt_get(&args)?;
    }
    let jtreg = find_jtreg().ok_or("jtreg not found after installing jtreg7")?;
    let jdk = find_jdk17().ok_or("no JDK 17 found after installing openjdk-17-jdk-headless")?;
    println!("jtreg: {}\nJDK:   {}", jtreg.display(), jdk.display());
    Ok(Tools { jtreg, jdk })
}

fn find_jtreg() -> Option<PathBuf> {
    process::find_on_path("jtreg")
        .or_else(|| Some(PathBuf::from("/usr/share/jtreg/bin/jtreg")).filter(|p| process::is_executable(p)))
}

/// A JDK 17 (the test sources are JDK 17's): `$JAVA_HOME`, the JDK owning `javac` on `PATH`, or
/// Debian's `/usr/lib/jvm/java-17-openjdk-*`, whichever is a JDK 17 first.
pub fn find_jdk17() -> Option<PathBuf> {
    let mut candidates: Vec<PathBuf> = Vec::new();
    candidates.extend(std::env::var_os("JAVA_HOME").filter(|h| !h.is_empty()).map(PathBuf::from));
    if let Some(javac) = process::find_on_path("javac").and_then(|j| fs::canonicalize(j).ok()) {
        candidates.extend(javac.parent().and_then(Path::parent).map(Path::to_path_buf));
    }
    if let Ok(entries) = fs::read_dir("/usr/lib/jvm") {
        let mut debian: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("java-17-openjdk-")))
            .collect();
        debian.sort();
        candidates.extend(debian);
    }
    candidates.into_iter().filter_map(|c| fs::canonicalize(c).ok()).find(|home| is_jdk17(home))
}

/// Checks that `home` is a JDK the harness can test on (a `release` file, `javac`, the JNI headers
/// and a server VM) and returns its canonical path and feature version.
pub fn check_jdk(home: &Path) -> Result<(PathBuf, u32)> {
    let home = fs::canonicalize(home).ctx(|| format!("--jdk {}", home.display()))?;
    let release = fs::read_to_string(home.join("release")).unwrap_or_default();
    let feature = release
        .lines()
        .find_map(|l| l.strip_prefix("JAVA_VERSION=\""))
        .and_then(|v| v.split(['.', '"']).next())
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| format!("{} has no JAVA_VERSION in its release file", home.display()))?;
    for needed in ["bin/javac", "include/jni.h", "include/jvmti.h", "lib/server/libjvm.so", "lib/libjdwp.so"] {
        if !home.join(needed).exists() {
            return Err(format!("{} is not a full JDK: {needed} is missing", home.display()));
        }
    }
    Ok((home, feature))
}

fn is_jdk17(home: &Path) -> bool {
    let release = fs::read_to_string(home.join("release")).unwrap_or_default();
    release.lines().any(|l| l.starts_with("JAVA_VERSION=\"17"))
        && process::is_executable(&home.join("bin/javac"))
        && home.join("include/jni.h").is_file()
        && home.join("lib/server/libjvm.so").is_file()
}

/// `apt-get ARGS` non-interactively, through sudo when not root.
fn apt_get(args: &[&str]) -> Result<()> {
    let mut cmd = if process::is_root() {
        Command::new("apt-get")
    } else {
        let mut c = Command::new("sudo");
        c.args(["--preserve-env=DEBIAN_FRONTEND", "apt-get"]);
        c
    };
    cmd.args(args).env("DEBIAN_FRONTEND", "noninteractive").stdin(Stdio::null());
    process::run(&mut cmd)
}

/// The test directories of OpenJDK 17's Debian source package, unpacked under
/// `<cache>/openjdk-src/` (downloaded once into `<cache>/apt-src/`).
pub fn ensure_test_sources(cache: &Path, install: bool) -> Result<Sources> {
    let src_root = cache.join("openjdk-src");
    if let Some(found) = unpacked(&src_root) {
        return Ok(found);
    }
    let apt_src = cache.join("apt-src");
    fs::create_dir_all(&apt_src).ctx(|| format!("creating {}", apt_src.display()))?;
    let tarball = match orig_tarball(&apt_src) {
        Some(t) => t,
        None => {
            if !install {
                return Err("OpenJDK 17's source package is not downloaded (and --no-install was given)".into());
            }
            download_source(&apt_src)?;
            orig_tarball(&apt_src).ok_or_else(|| format!("no openjdk-17_*.orig.tar.xz in {}", apt_src.display()))?
        }
    };
    let top = tarball_top_dir(&tarball)?;
    println!("== unpacking the test directories of {top} from {}", tarball.display());
    fs::create_dir_all(&src_root).ctx(|| format!("creating {}", src_root.display()))?;
    let tmp = src_root.join(format!(".tmp-{}", std::process::id()));
    let _ = fs::remove_dir_all(&tmp);
    fs::create_dir_all(&tmp).ctx(|| format!("creating {}", tmp.display()))?;
    let mut tar = Command::new("tar");
    tar.arg("-xJf").arg(&tarball).arg("-C").arg(&tmp);
    tar.args(TEST_PATHS.iter().map(|p| format!("{top}/{p}")));
    process::output(&mut tar)?;
    for group_file in GROUP_FILES {
        let path = tmp.join(&top).join(group_file);
        let mut orig = path.clone().into_os_string();
        orig.push(".orig");
        fs::rename(&path, &orig).ctx(|| format!("renaming {}", path.display()))?;
        let stub = "# Emptied by `cargo xtask conformance`: only part of the test tree is unpacked (see *.orig).\n";
        fs::write(&path, stub).ctx(|| format!("writing {}", path.display()))?;
    }
    let dest = src_root.join(&top);
    let _ = fs::remove_dir_all(&dest);
    fs::rename(tmp.join(&top), &dest).ctx(|| format!("moving the unpacked tree to {}", dest.display()))?;
    let _ = fs::remove_dir_all(&tmp);
    fs::write(dest.join(COMPLETE), unpack_key()).ctx(|| format!("marking {} complete", dest.display()))?;
    Ok(Sources { dir: dest, name: top })
}

/// A completely unpacked tree under `src_root`, if any (the newest name if several).
fn unpacked(src_root: &Path) -> Option<Sources> {
    let mut found: Vec<(String, PathBuf)> = fs::read_dir(src_root)
        .ok()?
        .flatten()
        .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
        .filter(|(name, path)| {
            !name.starts_with('.') && fs::read_to_string(path.join(COMPLETE)).is_ok_and(|c| c == unpack_key())
        })
        .collect();
    found.sort();
    found.pop().map(|(name, dir)| Sources { dir, name })
}

/// `openjdk-17_<version>.orig.tar.xz` in `dir` (not the `-googletest` component tarball).
fn orig_tarball(dir: &Path) -> Option<PathBuf> {
    let mut found: Vec<PathBuf> = fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .is_some_and(|n| n.starts_with("openjdk-17_") && n.ends_with(".orig.tar.xz") && !n.contains(".orig-"))
        })
        .collect();
    found.sort();
    found.pop()
}

/// The versions of `openjdk-17` that the apt sources offer as source packages (none without a
/// `deb-src` entry).
fn source_versions() -> Vec<String> {
    let out = Command::new("apt-cache").args(["showsrc", "--only-source", SOURCE_PACKAGE]).output();
    let Ok(out) = out else { return Vec::new() };
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.strip_prefix("Version: "))
        .map(|v| v.trim().to_owned())
        .collect()
}

/// `apt-get source --download-only openjdk-17` into `dir`, adding a `deb-src` entry for bookworm
/// main first if apt knows no source package. Tries the candidate version first, then every other
/// offered version (a security update's source may be listed but not downloadable from a mirror).
fn download_source(dir: &Path) -> Result<()> {
    let mut versions = source_versions();
    if versions.is_empty() {
        println!("== adding a deb-src entry ({DEB_SRC_FILE}) for OpenJDK's sources");
        write_root_file(Path::new(DEB_SRC_FILE), DEB_SRC_ENTRY)?;
        apt_get(&["update", "-q"])?;
        versions = source_versions();
        if versions.is_empty() {
            return Err(format!("apt offers no source package {SOURCE_PACKAGE} even with {DEB_SRC_FILE}"));
        }
    }
    println!("== downloading the {SOURCE_PACKAGE} source package (offered: {})", versions.join(", "));
    let attempts =
        std::iter::once(SOURCE_PACKAGE.to_owned()).chain(versions.iter().map(|v| format!("{SOURCE_PACKAGE}={v}")));
    let mut errors = Vec::new();
    for what in attempts {
        let mut cmd = Command::new("apt-get");
        cmd.args(["source", "--download-only", "-q", &what]).current_dir(dir).stdin(Stdio::null());
        match process::run(&mut cmd) {
            Ok(()) if orig_tarball(dir).is_some() => return Ok(()),
            Ok(()) => errors.push(format!("{what}: no orig tarball downloaded")),
            Err(e) => errors.push(e),
        }
    }
    Err(format!("could not download {SOURCE_PACKAGE}'s source:\n{}", errors.join("\n")))
}

/// Writes a file that only root may write, through `sudo tee` when not root.
fn write_root_file(path: &Path, contents: &str) -> Result<()> {
    if process::is_root() {
        return fs::write(path, contents).ctx(|| format!("writing {}", path.display()));
    }
    let mut child = Command::new("sudo")
        .arg("tee")
        .arg(path)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .ctx(|| format!("running sudo tee {}", path.display()))?;
    use std::io::Write;
    child.stdin.take().expect("piped").write_all(contents.as_bytes()).ctx(|| "writing to sudo tee".into())?;
    let status = child.wait().ctx(|| "waiting for sudo tee".into())?;
    if status.success() { Ok(()) } else { Err(format!("sudo tee {} failed ({status})", path.display())) }
}

/// The top directory of a tarball: the first component of its first member.
fn tarball_top_dir(tarball: &Path) -> Result<String> {
    let mut child = Command::new("tar")
        .arg("-tJf")
        .arg(tarball)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ctx(|| format!("listing {}", tarball.display()))?;
    let mut first = String::new();
    let read = BufReader::new(child.stdout.take().expect("piped")).read_line(&mut first);
    // Only the first line is needed; stop tar instead of decompressing the whole archive.
    let _ = child.kill();
    let _ = child.wait();
    read.ctx(|| format!("listing {}", tarball.display()))?;
    let top = first.trim().split('/').next().unwrap_or_default().to_owned();
    if top.is_empty() || top.starts_with('.') {
        return Err(format!("cannot tell the top directory of {} from {first:?}", tarball.display()));
    }
    Ok(top)
}
