//! Small helpers for running tools and reporting errors with context.

use std::{
    ffi::OsStr,
    fmt::Display,
    path::{Path, PathBuf},
    process::{Command, Output},
};

/// Errors are messages for a human: what was being done and why it failed.
pub type Result<T, E = String> = std::result::Result<T, E>;

/// `.ctx(|| "what")` turns any displayable error into a message with context.
pub trait Context<T> {
    fn ctx(self, what: impl FnOnce() -> String) -> Result<T>;
}

impl<T, E: Display> Context<T> for std::result::Result<T, E> {
    fn ctx(self, what: impl FnOnce() -> String) -> Result<T> {
        self.map_err(|e| format!("{}: {e}", what()))
    }
}

/// The command line of `cmd`, for messages.
pub fn shown(cmd: &Command) -> String {
    std::iter::once(cmd.get_program())
        .chain(cmd.get_args())
        .map(|a| {
            let s = a.to_string_lossy();
            if s.is_empty() || s.contains(|c: char| c.is_whitespace() || c == '"' || c == '\'') {
                format!("'{}'", s.replace('\'', r"'\''"))
            } else {
                s.into_owned()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Runs `cmd` with inherited stdio (the user sees its output) and fails unless it exits 0.
pub fn run(cmd: &mut Command) -> Result<()> {
    let line = shown(cmd);
    println!("$ {line}");
    let status = cmd.status().ctx(|| format!("running `{line}`"))?;
    if status.success() { Ok(()) } else { Err(format!("`{line}` failed ({status})")) }
}

/// Runs `cmd` capturing its output; fails (with the output) unless it exits 0.
pub fn output(cmd: &mut Command) -> Result<Output> {
    let line = shown(cmd);
    let out = cmd.output().ctx(|| format!("running `{line}`"))?;
    if out.status.success() {
        Ok(out)
    } else {
        Err(format!(
            "`{line}` failed ({}):\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

/// `name` found as an executable file in one of `$PATH`'s directories.
pub fn find_on_path(name: impl AsRef<OsStr>) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|d| d.join(name.as_ref())).find(|p| is_executable(p))
}

pub fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Whether this process runs as root (so `apt-get` works without `sudo`).
pub fn is_root() -> bool {
    Command::new("id").arg("-u").output().is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}
