//! `conformance/expected-failures/<suite>.txt`: the failures we know about, each with a reason.
//!
//! Format: one test per line, as jtreg names it (path under the suite's test root, optionally with
//! `#id`), then `# reason`. Blank lines and lines starting with `#` are comments. A name without
//! `#id` covers every test of that file. The list may only shrink: a listed test that passes is
//! reported so it can be removed, unless its reason starts with `intermittent` (a test that fails only
//! sometimes may pass or fail without a word).

use std::{collections::BTreeMap, fs, path::Path};

use super::jtreg::{Results, file_of};
use crate::process::{Context, Result};

#[derive(Debug, Default)]
pub struct Expected {
    /// Test name → reason.
    entries: BTreeMap<String, String>,
}

impl Expected {
    /// Reads the list; a missing file is an empty list.
    pub fn load(path: &Path) -> Result<Expected> {
        match fs::read_to_string(path) {
            Ok(text) => Expected::parse(&text).map_err(|e| format!("{}: {e}", path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Expected::default()),
            Err(e) => Err(e).ctx(|| format!("reading {}", path.display())),
        }
    }

    pub fn parse(text: &str) -> Result<Expected> {
        let mut entries = BTreeMap::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let (name, reason) = match line.split_once(" #").or_else(|| line.split_once("\t#")) {
                Some((name, reason)) => (name.trim(), reason.trim()),
                None => (line, ""),
            };
            if reason.is_empty() {
                return Err(format!("line {}: {name} has no `# reason`", n + 1));
            }
            if name.contains(char::is_whitespace) {
                return Err(format!("line {}: a test name has no spaces: {name:?}", n + 1));
            }
            if entries.insert(name.to_owned(), reason.to_owned()).is_some() {
                return Err(format!("line {}: {name} is listed twice", n + 1));
            }
        }
        Ok(Expected { entries })
    }

    /// Whether test `name` (possibly `file#id`) is expected to fail.
    pub fn contains(&self, name: &str) -> bool {
        self.entries.contains_key(name) || self.entries.contains_key(file_of(name))
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.keys().map(String::as_str)
    }

    /// Whether the entry `name` is for a test that fails only sometimes (reason `intermittent...`).
    fn is_intermittent(&self, name: &str) -> bool {
        self.entries.get(name).is_some_and(|reason| reason.to_ascii_lowercase().starts_with("intermittent"))
    }
}

/// How a run compares with the list.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// Failures not on the list: these fail the run.
    pub unexpected: Vec<String>,
    /// Listed tests that ran and passed: the list should lose them.
    pub now_passing: Vec<String>,
    /// Listed names that are no test of the suite (typos, renamed tests).
    pub unknown_entries: Vec<String>,
}

pub fn compare(results: &Results, expected: &Expected, all_tests: &[String]) -> Report {
    let unexpected = results.failed.iter().filter(|f| !expected.contains(&f.name)).map(|f| f.name.clone()).collect();
    let now_passing = expected
        .names()
        .filter(|listed| {
            !expected.is_intermittent(listed)
                && results.passed.iter().any(|p| p == listed || file_of(p) == *listed)
                && !results.failed.iter().any(|f| f.name == *listed || file_of(&f.name) == *listed)
        })
        .map(str::to_owned)
        .collect();
    let unknown_entries =
        expected.names().filter(|listed| !all_tests.iter().any(|t| t == file_of(listed))).map(str::to_owned).collect();
    Report { unexpected, now_passing, unknown_entries }
}

#[cfg(test)]
mod tests {
    use super::super::jtreg::Failure;
    use super::*;

    fn failure(name: &str) -> Failure {
        Failure { name: name.into(), status: "Failed".into(), hint: String::new() }
    }

    #[test]
    fn parse_entries_and_comments() {
        let e = Expected::parse("# header\n\na/one.java  # NOT_IMPLEMENTED\na/two.java#id1\t# hangs\n").unwrap();
        assert!(e.contains("a/one.java"));
        assert!(e.contains("a/one.java#id3"), "a file entry covers its ids");
        assert!(e.contains("a/two.java#id1"));
        assert!(!e.contains("a/two.java#id0"));
        assert!(!e.contains("a/three.java"));
    }

    #[test]
    fn parse_errors() {
        assert!(Expected::parse("a/one.java\n").unwrap_err().contains("no `# reason`"));
        assert!(Expected::parse("a/one.java # x\na/one.java # y\n").unwrap_err().contains("twice"));
        assert!(Expected::parse("a/one.java b # x\n").unwrap_err().contains("no spaces"));
    }

    #[test]
    fn comparison() {
        let expected = Expected::parse(
            "t/a.java # x\nt/b.java # y\nt/gone.java # z\nt/c.java # w\nt/f.java # Intermittent: hangs\n",
        )
        .unwrap();
        let results = Results {
            passed: vec!["t/b.java".into(), "t/d.java".into(), "t/f.java".into()],
            failed: vec![failure("t/a.java"), failure("t/e.java")],
            skipped: 0,
        };
        let all: Vec<String> =
            ["t/a.java", "t/b.java", "t/c.java", "t/d.java", "t/e.java", "t/f.java"].map(String::from).to_vec();
        let report = compare(&results, &expected, &all);
        assert_eq!(report.unexpected, ["t/e.java"]);
        assert_eq!(report.now_passing, ["t/b.java"], "t/c.java did not run, t/f.java is intermittent");
        assert_eq!(report.unknown_entries, ["t/gone.java"]);
    }
}
