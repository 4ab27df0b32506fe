//! The suites' native helper libraries (JNI/JVMTI code loaded by some tests), built with `g++`.
//!
//! Each `lib<Name>.c`/`lib<Name>.cpp` is a unity file that `#include`s the shared `.cpp` sources it
//! needs, so it compiles alone into `lib<Name>.so` with the JDK's include directories and every
//! directory of the nsk shared code on the include path. The result is jtreg's `-nativepath`.

use std::{
    fs,
    path::{Path, PathBuf},
    process::Command,
    sync::Mutex,
};

use super::setup::Sources;
use crate::process::{self, Context, Result};

/// Where the libraries' sources are, under `test/hotspot/jtreg/vmTestbase`.
const LIB_DIRS: &[&str] = &["nsk/share", "nsk/jdwp", "nsk/jdi", "nsk/jdb", "vm/share"];
/// Whose every directory goes on the include path.
const INCLUDE_TREES: &[&str] = &["nsk/share", "vm/share"];
/// Part of the output directory's name: bump when the flags change so old builds are not reused.
const BUILD_VERSION: &str = "v1";
const CXXFLAGS: &[&str] = &["-shared", "-fPIC", "-O2", "-w"];

/// Builds every library (reusing ones already built for these sources) and returns the directory.
pub fn build(sources: &Sources, jdk: &Path, cache: &Path) -> Result<PathBuf> {
    let vm_testbase = sources.dir.join("test/hotspot/jtreg/vmTestbase");
    // Built against the headers of the JDK under test: one directory per JDK other than 17.
    let jdk_tag = match super::setup::check_jdk(jdk) {
        Ok((_, feature)) if feature != 17 => format!("-jdk{feature}"),
        _ => String::new(),
    };
    let out_dir = cache.join("native").join(format!("{}{jdk_tag}-{BUILD_VERSION}", sources.name));
    fs::create_dir_all(&out_dir).ctx(|| format!("creating {}", out_dir.display()))?;

    let mut libs = Vec::new();
    for dir in LIB_DIRS {
        walk(&vm_testbase.join(dir), &mut |p| {
            let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            if name.starts_with("lib") && (name.ends_with(".c") || name.ends_with(".cpp")) {
                libs.push(p.to_path_buf());
            }
        })?;
    }
    libs.sort();
    let mut includes = vec![jdk.join("include"), jdk.join("include/linux")];
    for tree in INCLUDE_TREES {
        let root = vm_testbase.join(tree);
        let mut dirs = vec![root.clone()];
        walk_dirs(&root, &mut |d| dirs.push(d.to_path_buf()))?;
        dirs.sort();
        includes.extend(dirs);
    }

    let todo: Vec<(PathBuf, PathBuf)> = libs
        .into_iter()
        .map(|src| {
            let stem = src.file_stem().expect("named").to_string_lossy().into_owned();
            let so = out_dir.join(format!("{stem}.so"));
            (src, so)
        })
        .filter(|(_, so)| !so.is_file())
        .collect();
    if todo.is_empty() {
        println!("native libraries: {} (up to date)", out_dir.display());
        return Ok(out_dir);
    }
    println!("== compiling {} native libraries into {}", todo.len(), out_dir.display());
    let queue = Mutex::new(todo);
    let errors = Mutex::new(Vec::new());
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get());
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                loop {
                    let Some((src, so)) = queue.lock().expect("queue").pop() else { break };
                    if let Err(e) = compile(&src, &so, &includes) {
                        errors.lock().expect("errors").push(e);
                    }
                }
            });
        }
    });
    let errors = errors.into_inner().expect("errors");
    if errors.is_empty() { Ok(out_dir) } else { Err(errors.join("\n")) }
}

fn compile(src: &Path, so: &Path, includes: &[PathBuf]) -> Result<()> {
    let tmp = so.with_extension(format!("so.tmp-{}", std::process::id()));
    let mut cmd = Command::new("g++");
    cmd.args(CXXFLAGS);
    cmd.arg(format!("-I{}", src.parent().expect("in a directory").display()));
    cmd.args(includes.iter().map(|d| format!("-I{}", d.display())));
    cmd.arg("-o").arg(&tmp).arg(src);
    let result =
        process::output(&mut cmd).and_then(|_| fs::rename(&tmp, so).ctx(|| format!("renaming to {}", so.display())));
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Calls `f` for every file under `dir` (recursively).
fn walk(dir: &Path, f: &mut dyn FnMut(&Path)) -> Result<()> {
    for entry in fs::read_dir(dir).ctx(|| format!("reading {}", dir.display()))? {
        let path = entry.ctx(|| format!("reading {}", dir.display()))?.path();
        if path.is_dir() { walk(&path, f)? } else { f(&path) }
    }
    Ok(())
}

/// Calls `f` for every directory under `dir` (recursively, not `dir` itself).
fn walk_dirs(dir: &Path, f: &mut dyn FnMut(&Path)) -> Result<()> {
    for entry in fs::read_dir(dir).ctx(|| format!("reading {}", dir.display()))? {
        let path = entry.ctx(|| format!("reading {}", dir.display()))?.path();
        if path.is_dir() {
            f(&path);
            walk_dirs(&path, f)?;
        }
    }
    Ok(())
}
