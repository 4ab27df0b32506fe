//! Running jtreg the way the JDK's `make test` does, and reading its results.

use std::{
    fs,
    os::unix::process::CommandExt,
    path::{Path, PathBuf},
    process::Command,
    sync::mpsc,
    time::{Duration, Instant},
};

use crate::process::{self, Context, Result};

/// One jtreg invocation.
pub struct Run<'a> {
    pub jtreg: &'a Path,
    /// The JDK copy under test (`-jdk`).
    pub jdk: &'a Path,
    /// The jtreg test root (has `TEST.ROOT` and `ProblemList.txt`).
    pub test_root: &'a Path,
    /// The suite's directory under `test_root`, run whole when `tests` is `None`.
    pub suite_dir: &'a str,
    /// Selected tests (names relative to `test_root`).
    pub tests: Option<&'a [String]>,
    /// `-nativepath`.
    pub native: &'a Path,
    /// Holds `work/` and `report/` (both recreated).
    pub run_dir: &'a Path,
    pub conc: u32,
    pub timeout_factor: f64,
    /// The JDK that runs jtreg itself (`JTREG_JAVA`): the original, not the copy under test.
    pub host_jdk: &'a Path,
    /// Stop jtreg (and fail) after this long.
    pub max_minutes: Option<f64>,
}

/// A test that failed or could not run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// jtreg's name for it (path under the test root, `#id` for one of several tests in a file).
    pub name: String,
    /// `Failed` or `Error`.
    pub status: String,
    /// A short clue from its .jtr file (the first error or `NOT_IMPLEMENTED` line), may be empty.
    pub hint: String,
}

#[derive(Debug, Default)]
pub struct Results {
    pub passed: Vec<String>,
    pub failed: Vec<Failure>,
    /// Tests that ran but skipped themselves (jtreg.SkippedException), or were not run.
    pub skipped: usize,
}

/// Every test of the suite: `.java` files under `suite_dir` holding a `@test` tag, as names relative
/// to `test_root` (file level: jtreg adds `#id` for files with several tests).
pub fn discover(test_root: &Path, suite_dir: &str) -> Result<Vec<String>> {
    let mut out = Vec::new();
    let mut pending = vec![test_root.join(suite_dir)];
    while let Some(dir) = pending.pop() {
        for entry in fs::read_dir(&dir).ctx(|| format!("reading {}", dir.display()))? {
            let path = entry.ctx(|| format!("reading {}", dir.display()))?.path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "java")
                && fs::read_to_string(&path).is_ok_and(|t| t.contains("@test"))
            {
                out.push(relative(test_root, &path));
            }
        }
    }
    out.sort();
    Ok(out)
}

fn relative(root: &Path, path: &Path) -> String {
    path.strip_prefix(root).unwrap_or(path).to_string_lossy().into_owned()
}

/// The tests whose names match one of `patterns`: a substring, or with `*` a glob over the name.
pub fn select(all: &[String], patterns: &[String]) -> Vec<String> {
    all.iter().filter(|t| patterns.iter().any(|p| matches(t, p))).cloned().collect()
}

fn matches(name: &str, pattern: &str) -> bool {
    if !pattern.contains('*') {
        return name.contains(pattern);
    }
    // Unanchored glob: the pieces between `*`s appear in order.
    let mut rest = name;
    for piece in pattern.split('*').filter(|p| !p.is_empty()) {
        match rest.find(piece) {
            Some(at) => rest = &rest[at + piece.len()..],
            None => return false,
        }
    }
    true
}

/// A fixed share of the suite: every `k`th test (the 1st, the `k+1`th, ...) of each of its
/// directories one level down (a JDI interface or JDWP command set, e.g. `ObjectReference`), so
/// that each is covered however small its share. Deterministic: the same tests every run.
pub fn share(all: &[String], suite_dir: &str, k: usize) -> Vec<String> {
    let k = k.max(1);
    let group = |t: &str| {
        let rest = t.strip_prefix(suite_dir).unwrap_or(t).trim_start_matches('/');
        rest.split('/').next().unwrap_or("").to_owned()
    };
    let mut sorted: Vec<&String> = all.iter().collect();
    sorted.sort();
    let mut picked = Vec::new();
    let mut current: Option<String> = None;
    let mut index = 0;
    for t in sorted {
        let g = group(t);
        if current.as_deref() != Some(g.as_str()) {
            current = Some(g);
            index = 0;
        }
        if index % k == 0 {
            picked.push(t.clone());
        }
        index += 1;
    }
    picked
}

/// The name without jtreg's `#id` suffix (the test file).
pub fn file_of(name: &str) -> &str {
    name.split_once('#').map_or(name, |(f, _)| f)
}

/// Runs jtreg, then reads its results with [`read_results`].
pub fn run(r: &Run<'_>) -> Result<Results> {
    let work = r.run_dir.join("work");
    let report = r.run_dir.join("report");
    for dir in [&work, &report] {
        if dir.exists() {
            fs::remove_dir_all(dir).ctx(|| format!("removing {}", dir.display()))?;
        }
    }
    fs::create_dir_all(r.run_dir).ctx(|| format!("creating {}", r.run_dir.display()))?;
    // Remembered for `--results-only`, which must know what the run covered.
    let selection = r.tests.map_or_else(|| SELECTION_ALL.to_owned(), |t| t.join("\n"));
    fs::write(r.run_dir.join(SELECTION_FILE), selection).ctx(|| "writing the selection".into())?;
    // As make/RunTests.gmk: each of the concurrent VMs gets its share of a quarter of the memory.
    let max_ram = 25.0 / f64::from(r.conc);
    let mut cmd = Command::new(r.jtreg);
    cmd.arg("-agentvm")
        .arg("-a")
        .arg("-ignore:quiet")
        .arg(format!("-conc:{}", r.conc))
        .arg(format!("-timeoutFactor:{}", r.timeout_factor))
        .arg("-retain:fail,error")
        .arg("-verbose:summary")
        .arg(format!("-vmoption:-XX:MaxRAMPercentage={max_ram}"))
        .arg(format!("-exclude:{}", r.test_root.join("ProblemList.txt").display()))
        .arg(format!("-nativepath:{}", r.native.display()))
        .arg(format!("-jdk:{}", r.jdk.display()))
        .arg(format!("-w:{}", work.display()))
        .arg(format!("-r:{}", report.display()))
        .arg(format!("-dir:{}", r.test_root.display()));
    match r.tests {
        Some(tests) => cmd.args(tests),
        None => cmd.arg(r.suite_dir),
    };
    // Without JTREG_JAVA or JAVA_HOME, Debian's jtreg script looks for /usr/lib/jvm/default-java.
    cmd.env("JTREG_JAVA", r.host_jdk.join("bin/java"));
    // Options injected into every JVM would change what the tests see.
    for var in ["JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS"] {
        cmd.env_remove(var);
    }
    if r.max_minutes.is_some() {
        // Its own process group, so that the deadline can stop jtreg and every VM it started.
        cmd.process_group(0);
    }
    let count = r.tests.map_or_else(|| format!("all of {}", r.suite_dir), |t| format!("{} selected", t.len()));
    println!("== jtreg ({count} tests, -conc:{}, -timeoutFactor:{})", r.conc, r.timeout_factor);
    let line = process::shown(&cmd);
    println!("$ {line}");
    let started = Instant::now();
    let mut child = cmd.spawn().ctx(|| format!("running `{line}`"))?;
    let status = match r.max_minutes {
        None => child.wait().ctx(|| "waiting for jtreg".into())?,
        Some(minutes) => {
            let pid = child.id();
            let (tx, rx) = mpsc::channel();
            std::thread::spawn(move || {
                let _ = tx.send(child.wait());
            });
            match rx.recv_timeout(Duration::from_secs_f64(minutes * 60.0)) {
                Ok(status) => status.ctx(|| "waiting for jtreg".into())?,
                Err(_) => {
                    let _ = Command::new("kill").args(["-KILL", "--", &format!("-{pid}")]).status();
                    let _ = rx.recv();
                    return Err(format!(
                        "the jtreg run exceeded --max-minutes {minutes} and was stopped; the .jtr files of the \
                         tests that finished are under {}",
                        work.display()
                    ));
                }
            }
        }
    };
    println!("jtreg finished in {:.1} min ({status})", started.elapsed().as_secs_f64() / 60.0);
    // jtreg's exit codes: 0 all passed, 1 no tests selected, 2 some failed, 3 some had errors
    // (timeouts among them); from 4 on jtreg itself failed (bad arguments, a fault).
    match status.code() {
        Some(0..=3) => read_results(r.run_dir),
        _ => Err(format!("jtreg failed ({status})")),
    }
}

/// Where a run records its selection of tests.
const SELECTION_FILE: &str = "selection.txt";
const SELECTION_ALL: &str = "(the whole suite)";

/// The tests the run in `run_dir` selected (`None`: the whole suite).
pub fn recorded_selection(run_dir: &Path) -> Result<Option<Vec<String>>> {
    let path = run_dir.join(SELECTION_FILE);
    let text = fs::read_to_string(&path).ctx(|| format!("reading {} (no earlier run?)", path.display()))?;
    Ok((text != SELECTION_ALL).then(|| text.lines().map(str::to_owned).collect()))
}

/// The results of the jtreg run in `run_dir`, from its report and .jtr files.
pub fn read_results(run_dir: &Path) -> Result<Results> {
    let summary = run_dir.join("report").join("text").join("summary.txt");
    let text = match fs::read_to_string(&summary) {
        Ok(t) => t,
        // jtreg writes no summary when nothing was selected (e.g. all on the problem list).
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && run_dir.join(SELECTION_FILE).is_file() => String::new(),
        Err(e) => return Err(format!("reading {}: {e}", summary.display())),
    };
    let mut results = parse_summary(&text);
    for f in &mut results.failed {
        f.hint = hint(&run_dir.join("work"), &f.name);
    }
    Ok(results)
}

/// Parses jtreg's `report/text/summary.txt`: `<name> <Status>. <message>` per test.
pub fn parse_summary(text: &str) -> Results {
    let mut results = Results::default();
    for line in text.lines() {
        let Some((name, rest)) = line.split_once(char::is_whitespace) else { continue };
        let rest = rest.trim_start();
        if let Some(message) = rest.strip_prefix("Passed.") {
            if message.trim_start().starts_with("Skipped") {
                results.skipped += 1;
            } else {
                results.passed.push(name.to_owned());
            }
        } else if let Some(status) = ["Failed.", "Error."].iter().find(|s| rest.starts_with(**s)) {
            results.failed.push(Failure {
                name: name.to_owned(),
                status: status.trim_end_matches('.').to_owned(),
                hint: String::new(),
            });
        } else if rest.starts_with("Not run.") {
            results.skipped += 1;
        }
    }
    results
}

/// The .jtr file jtreg writes for test `name` under `work`.
fn jtr_path(work: &Path, name: &str) -> PathBuf {
    let (file, id) = match name.split_once('#') {
        Some((f, id)) => (f, Some(id)),
        None => (name, None),
    };
    let stem = file.strip_suffix(".java").unwrap_or(file);
    work.join(match id {
        Some(id) => format!("{stem}_{id}.jtr"),
        None => format!("{stem}.jtr"),
    })
}

/// A one-line clue to why `name` failed, from its .jtr file.
fn hint(work: &Path, name: &str) -> String {
    fs::read_to_string(jtr_path(work, name)).map(|t| hint_from_jtr(&t)).unwrap_or_default()
}

/// The most telling line of a failed test's log, shortened: for a JDWP error reply (most failures
/// against an incomplete agent are commands answered `NOT_IMPLEMENTED`) the command and the error's
/// name, else the first `# ERROR` line, else a timeout, else jtreg's own status line.
pub fn hint_from_jtr(text: &str) -> String {
    let lines: Vec<&str> = text.lines().map(strip_timestamp).collect();
    let first_error = lines.iter().position(|l| l.starts_with("# ERROR") || l.contains("TEST FAILED"));
    if let Some(at) = first_error {
        // nsk's negative tests: `Reply doesn't contain expected error 20, error code = 21`.
        if let Some((want, got)) = expected_vs_actual(lines[at]) {
            let name = |c: u16| jdwp_protocol::ErrorCode(c).name().unwrap_or("unknown error");
            let command = lines[..at].iter().rev().find_map(|l| l.strip_prefix("Command: ")).map(str::trim);
            let what = format!("expected {} ({want}), got {} ({got})", name(want), name(got));
            return command.map_or(what.clone(), |c| format!("{c}: {what}"));
        }
        // The error code may be on the `# ERROR` line or the one after it.
        let code = lines[at..lines.len().min(at + 3)].iter().find_map(|l| error_code(l));
        if let Some(code) = code {
            let command = lines[..at].iter().rev().find_map(|l| l.strip_prefix("Command: ")).map(str::trim);
            let name = jdwp_protocol::ErrorCode(code).name().unwrap_or("unknown error");
            return match command {
                Some(c) => format!("{c}: {name} ({code})"),
                None => format!("{name} ({code})"),
            };
        }
        return shorten(lines[at]);
    }
    if let Some(ms) = lines.iter().find_map(|l| l.split_once("timed out (timeout set to ")?.1.split("ms").next()) {
        let minutes = ms.trim().parse::<f64>().map_or(String::new(), |ms| format!(" after {:.0} min", ms / 60_000.0));
        return format!("timed out{minutes} (hangs)");
    }
    lines
        .iter()
        .find(|l| l.contains("timed out") || l.contains("Timeout refired"))
        .or_else(|| lines.iter().find(|l| l.starts_with("test result:")))
        .map_or_else(String::new, |l| shorten(l))
}

/// `[1:45:27.655] text` → `text` (nsk logs stamp every line).
fn strip_timestamp(line: &str) -> &str {
    let line = line.trim();
    match line.strip_prefix('[').and_then(|rest| rest.split_once("] ")) {
        Some((stamp, rest)) if stamp.chars().all(|c| c.is_ascii_digit() || c == ':' || c == '.') => rest.trim(),
        _ => line,
    }
}

/// `(20, 21)` from `... expected error 20, error code = 21`.
fn expected_vs_actual(line: &str) -> Option<(u16, u16)> {
    let number = |s: &str| s.trim_start().split(|c: char| !c.is_ascii_digit()).next()?.parse().ok();
    let want = number(line.split_once("expected error ")?.1)?;
    let got = number(line.split_once("error code = ")?.1)?;
    Some((want, got))
}

/// The number in `... error code ... (99)`, as nsk prints unexpected JDWP error replies.
fn error_code(line: &str) -> Option<u16> {
    let lower = line.to_ascii_lowercase();
    let after = &line[lower.find("error code")?..];
    let open = after.rfind('(')?;
    after[open + 1..].split(')').next()?.trim().parse().ok()
}

fn shorten(line: &str) -> String {
    let line = line.trim();
    line.char_indices().nth(160).map_or(line, |(i, _)| &line[..i]).to_owned()
}

/// The problem-listed tests of the suite this platform skips (within `selected`, if given).
pub fn problem_listed(test_root: &Path, suite_dir: &str, selected: Option<&[String]>) -> Result<Vec<String>> {
    let path = test_root.join("ProblemList.txt");
    let text = fs::read_to_string(&path).ctx(|| format!("reading {}", path.display()))?;
    Ok(parse_problem_list(&text, suite_dir)
        .into_iter()
        .filter(|t| selected.is_none_or(|s| s.iter().any(|x| file_of(x) == file_of(t))))
        .collect())
}

/// Entries under `suite_dir` that apply to Linux x64 (`generic-all`, `linux-all`, `linux-x64`, ...).
pub fn parse_problem_list(text: &str, suite_dir: &str) -> Vec<String> {
    const HERE: &[&str] = &["generic-all", "generic-x64", "linux-all", "linux-x64", "linux-amd64"];
    text.lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .filter_map(|l| {
            let mut fields = l.split_whitespace();
            let (test, _bugs, platforms) = (fields.next()?, fields.next()?, fields.next()?);
            let applies = platforms.split(',').any(|p| HERE.contains(&p));
            (test.starts_with(&format!("{suite_dir}/")) && applies).then(|| test.to_owned())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selection_by_substring_and_glob() {
        let all: Vec<String> = [
            "vmTestbase/nsk/jdwp/VirtualMachine/Version/version001/TestDescription.java",
            "vmTestbase/nsk/jdwp/VirtualMachine/Version/version002/TestDescription.java",
            "vmTestbase/nsk/jdwp/ClassType/SetValues/setvalues001/TestDescription.java",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(select(&all, &["version001".into()]).len(), 1);
        assert_eq!(select(&all, &["VirtualMachine/".into()]).len(), 2);
        assert_eq!(select(&all, &["nsk/*/setvalues*".into()]).len(), 1);
        assert_eq!(select(&all, &["Version".into(), "ClassType".into()]).len(), 3);
        assert!(select(&all, &["nothing".into()]).is_empty());
    }

    #[test]
    fn a_share_covers_every_directory() {
        let all: Vec<String> = [
            "s/A/x/a1/T.java",
            "s/A/x/a2/T.java",
            "s/A/y/a3/T.java",
            "s/A/y/a4/T.java",
            "s/A/y/a5/T.java",
            "s/B/b1/T.java",
            "s/C/c1/T.java",
            "s/C/c2/T.java",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(share(&all, "s", 3), ["s/A/x/a1/T.java", "s/A/y/a4/T.java", "s/B/b1/T.java", "s/C/c1/T.java"]);
        assert_eq!(share(&all, "s", 1), all);
        let mut shuffled = all.clone();
        shuffled.reverse();
        assert_eq!(share(&shuffled, "s", 2), share(&all, "s", 2), "the order given does not matter");
        assert_eq!(share(&all, "s", 2).len(), 5);
    }

    #[test]
    fn summary_parsing() {
        let text = "\
a/b/one/TestDescription.java                    Passed. Execution successful
a/b/two/TestDescription.java                    Failed. Execution failed: `main' threw exception: java.lang.Exception
a/b/three.java#id1                              Error. Agent communication error
a/b/four.java                                   Passed. Skipped: jtreg.SkippedException: no
a/b/five.java                                   Not run. Test running...
";
        let r = parse_summary(text);
        assert_eq!(r.passed, ["a/b/one/TestDescription.java"]);
        let failed: Vec<(&str, &str)> = r.failed.iter().map(|f| (f.name.as_str(), f.status.as_str())).collect();
        assert_eq!(failed, [("a/b/two/TestDescription.java", "Failed"), ("a/b/three.java#id1", "Error")]);
        assert_eq!(r.skipped, 2);
    }

    #[test]
    fn jtr_paths_and_files() {
        let w = Path::new("/w");
        assert_eq!(jtr_path(w, "a/b/T.java"), Path::new("/w/a/b/T.jtr"));
        assert_eq!(jtr_path(w, "a/b/T.java#id0"), Path::new("/w/a/b/T_id0.jtr"));
        assert_eq!(file_of("a/b/T.java#id0"), "a/b/T.java");
        assert_eq!(file_of("a/b/T.java"), "a/b/T.java");
    }

    #[test]
    fn hints() {
        let jtr = "\
[1:45:27.571] Command: VirtualMachine.Version
[1:45:27.571] Command: StackFrame.SetValues
[1:45:27.655] # ERROR: Bad header of reply packet:
[1:45:27.655] # ERROR: \tUnexpected error code in reply packet header: 0x0063 (99)
[1:45:27.655] # ERROR: later
test result: Failed. Execution failed
";
        assert_eq!(hint_from_jtr(jtr), "StackFrame.SetValues: NOT_IMPLEMENTED (99)");
        assert_eq!(
            hint_from_jtr("# ERROR: Unexpected error code in reply packet header: 0x0063 (99)"),
            "NOT_IMPLEMENTED (99)"
        );
        assert_eq!(hint_from_jtr("x\n[0:00:01.5] # ERROR: boom\ntest result: Failed. y\n"), "# ERROR: boom");
        assert_eq!(hint_from_jtr("x\ntest result: Failed. y\n"), "test result: Failed. y");
        assert_eq!(hint_from_jtr(""), "");
        let timeout = "execStatus=Error. Program `java' timed out (timeout set to 1680000ms, elapsed time 1680125ms)";
        assert_eq!(hint_from_jtr(timeout), "timed out after 28 min (hangs)");
        let negative = "Command: ReferenceType.Instances\n[1:58:57.704] # ERROR: Reply doesn't contain expected error 20, error code = 21\n";
        assert_eq!(
            hint_from_jtr(negative),
            "ReferenceType.Instances: expected INVALID_OBJECT (20), got INVALID_CLASS (21)"
        );
    }

    #[test]
    fn problem_list_entries_for_this_platform() {
        let text = "\
# comment
vmTestbase/nsk/jdwp/A/a001/a001.java 7199837 generic-all
vmTestbase/nsk/jdwp/B/b001/TestDescription.java 1 windows-all
vmTestbase/nsk/jdwp/C/c001/TestDescription.java 2 macosx-all,linux-x64
vmTestbase/nsk/jdi/D/d001/TestDescription.java 3 generic-all

";
        assert_eq!(
            parse_problem_list(text, "vmTestbase/nsk/jdwp"),
            ["vmTestbase/nsk/jdwp/A/a001/a001.java", "vmTestbase/nsk/jdwp/C/c001/TestDescription.java"]
        );
    }
}
