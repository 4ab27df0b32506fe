//! The source path: where `list` and the source line shown at every stop come from. As jdb's
//! `SourceMapper`: a class's source is `<dir>/<package dirs>/<SourceFile>` for the first
//! directory of the path that has it; `.jar` and `.zip` entries are skipped.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

#[derive(Default)]
pub struct SourcePath {
    dirs: Vec<String>,
    cache: HashMap<PathBuf, Arc<Vec<String>>>,
}

impl SourcePath {
    pub fn new(path: &str) -> SourcePath {
        let dirs = path
            .split(':')
            .filter(|d| !d.is_empty() && !d.ends_with(".jar") && !d.ends_with(".zip"))
            .map(String::from)
            .collect();
        SourcePath { dirs, cache: HashMap::new() }
    }

    pub fn is_empty(&self) -> bool {
        self.dirs.is_empty()
    }

    /// The path as jdb's `use` prints it.
    pub fn display(&self) -> String {
        self.dirs.join(":")
    }

    pub fn dirs(&self) -> &[String] {
        &self.dirs
    }

    /// The file holding a class's source, if the path has it.
    pub fn find(&self, class_signature: &str, source_name: &str) -> Option<PathBuf> {
        let rel = jdi::names::source_path(class_signature, source_name);
        self.dirs.iter().map(|d| PathBuf::from(d).join(&rel)).find(|p| p.is_file())
    }

    /// The lines of a class's source file (cached).
    pub fn lines(&mut self, class_signature: &str, source_name: &str) -> Option<Arc<Vec<String>>> {
        let path = self.find(class_signature, source_name)?;
        if let Some(lines) = self.cache.get(&path) {
            return Some(lines.clone());
        }
        let bytes = std::fs::read(&path).ok()?;
        let text = String::from_utf8_lossy(&bytes);
        let lines: Arc<Vec<String>> =
            Arc::new(text.lines().map(|l| l.strip_suffix('\r').unwrap_or(l).to_string()).collect());
        self.cache.insert(path, lines.clone());
        Some(lines)
    }

    /// Line `line` (1-based) of a class's source.
    pub fn line(&mut self, class_signature: &str, source_name: &str, line: i32) -> Option<String> {
        if line < 1 {
            return None;
        }
        self.lines(class_signature, source_name)?.get(line as usize - 1).cloned()
    }
}
