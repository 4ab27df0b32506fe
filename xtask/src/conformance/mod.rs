//! `cargo xtask conformance`: the JDK's JDWP/JDI/jdb conformance suites (jtreg) against our agent.
//!
//! Steps, each cached under `target/conformance/` where that is safe:
//! 1. [`setup`]: install `jtreg7`, a JDK 17 and `g++` if missing; fetch OpenJDK 17's source package
//!    with apt and unpack only the test directories the suites need.
//! 2. [`native`]: compile the suites' JNI/JVMTI helper libraries (`lib*.c*`) with `g++`.
//! 3. [`jdk`]: build a JDK copy whose `lib/libjdwp.so` is our agent (or the JDK's own, for comparison
//!    runs) and check that a debuggee started from it really maps that library.
//! 4. [`jtreg`]: run jtreg the way the JDK's `make test` does and read the results.
//! 5. [`expected`]: compare the failures with `conformance/expected-failures/<suite>.txt`.

mod expected;
mod jdk;
mod jtreg;
mod native;
mod setup;

use std::{
    path::{Path, PathBuf},
    process::ExitCode,
    time::Instant,
};

use crate::process::{Context, Result};

pub const USAGE: &str = "\
usage: cargo xtask conformance [options]

Runs one of the JDK's conformance suites with jtreg against a JDK copy whose lib/libjdwp.so is our
agent (target/release/libjdwp_agent.so, built first), and compares the failures with
conformance/expected-failures/<suite>.txt. Exits 1 on any failure not listed there (and warns about
listed tests that now pass), 2 if the harness itself fails.

options:
  --suite nsk-jdwp|com-sun-jdi|nsk-jdb|nsk-jdi
                                          which suite (default nsk-jdwp)
  --agent ours|jdk|PATH                   the libjdwp.so under test: ours (default), the JDK's own
                                          (comparison run: no failure is expected), or a library
  --jdk HOME                              the JDK the copy is made from and the tests run on
                                          (default the JDK 17 the sources belong to; e.g.
                                          /usr/lib/jvm/temurin-25-jdk-amd64): native libraries
                                          are built with its headers, runs go to their own
                                          directories, and conformance/expected-failures/
                                          <suite>-jdk<N>.txt is used when it exists
  --tests PATTERN...                      only tests whose name (path under the suite's test root,
                                          e.g. vmTestbase/nsk/jdwp/.../TestDescription.java)
                                          contains one of the patterns (`*` matches anything)
  --skip PATTERN...                       leave out the tests matching a pattern (same matching)
  --share K                               every Kth test of each directory one level under the
                                          suite's (each JDI interface or JDWP command set keeps at
                                          least its first), plus the tests --tests names
  --timeout-factor N                      jtreg -timeoutFactor (default 4)
  --conc N                                jtreg -conc, tests run at once (default 2)
  --max-minutes N                         stop jtreg and fail if the run takes longer (for CI)
  --no-install                            fail instead of running apt-get when something is missing
  --results-only                          run nothing: report the last run of this suite and agent

Everything (sources, JDK copy, native libraries, jtreg work and report dirs) lives under
target/conformance/. See conformance/README.md.";

/// One of the JDK's test suites that exercise the JDWP agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Suite {
    /// Our name for it (`--suite`, expected-failures file name).
    pub name: &'static str,
    /// The jtreg test root inside the OpenJDK source tree (has `TEST.ROOT`, `ProblemList.txt`).
    pub root: &'static str,
    /// The suite's tests, relative to `root`.
    pub dir: &'static str,
}

pub const SUITES: &[Suite] = &[
    Suite { name: "nsk-jdwp", root: "test/hotspot/jtreg", dir: "vmTestbase/nsk/jdwp" },
    Suite { name: "com-sun-jdi", root: "test/jdk", dir: "com/sun/jdi" },
    Suite { name: "nsk-jdb", root: "test/hotspot/jtreg", dir: "vmTestbase/nsk/jdb" },
    Suite { name: "nsk-jdi", root: "test/hotspot/jtreg", dir: "vmTestbase/nsk/jdi" },
];

/// Which `libjdwp.so` the JDK copy gets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AgentChoice {
    /// `target/release/libjdwp_agent.so`, built with `cargo build --release -p jdwp-agent`.
    Ours,
    /// The JDK's own agent (comparison runs).
    Jdk,
    /// Any agent library.
    Path(PathBuf),
}

impl AgentChoice {
    /// Short name used in directory names under `target/conformance/`.
    fn tag(&self) -> &'static str {
        match self {
            AgentChoice::Ours => "ours",
            AgentChoice::Jdk => "jdk",
            AgentChoice::Path(_) => "custom",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    pub suite: Suite,
    pub agent: AgentChoice,
    pub tests: Vec<String>,
    pub skip: Vec<String>,
    pub timeout_factor: f64,
    pub conc: u32,
    pub install: bool,
    pub max_minutes: Option<f64>,
    pub results_only: bool,
    /// Every `k`th test of each directory (see [`jtreg::share`]), plus the `--tests` ones.
    pub share: Option<usize>,
    /// The JDK to test on instead of the JDK 17 the sources belong to.
    pub jdk: Option<PathBuf>,
}

impl Options {
    /// Parses the arguments after `conformance`; `Ok(None)` for `--help`.
    pub fn parse(args: &[String]) -> Result<Option<Options>> {
        let mut options = Options {
            suite: SUITES[0],
            agent: AgentChoice::Ours,
            tests: Vec::new(),
            skip: Vec::new(),
            timeout_factor: 4.0,
            conc: 2,
            install: true,
            max_minutes: None,
            results_only: false,
            share: None,
            jdk: None,
        };
        let mut i = 0;
        while i < args.len() {
            let (flag, inline) = match args[i].split_once('=') {
                Some((f, v)) if f.starts_with("--") => (f, Some(v.to_owned())),
                _ => (args[i].as_str(), None),
            };
            i += 1;
            let mut value = |name: &str| -> Result<String> {
                if let Some(v) = inline.clone() {
                    return Ok(v);
                }
                let v = args.get(i).filter(|v| !v.starts_with("--")).ok_or(format!("{name} needs a value"))?;
                i += 1;
                Ok(v.clone())
            };
            match flag {
                "--help" | "-h" => return Ok(None),
                "--suite" => {
                    let v = value(flag)?;
                    options.suite = *SUITES.iter().find(|s| s.name == v).ok_or_else(|| {
                        let names: Vec<_> = SUITES.iter().map(|s| s.name).collect();
                        format!("unknown suite {v:?} (one of {})", names.join(", "))
                    })?;
                }
                "--agent" => {
                    options.agent = match value(flag)?.as_str() {
                        "ours" => AgentChoice::Ours,
                        "jdk" => AgentChoice::Jdk,
                        p if p.contains('/') => AgentChoice::Path(PathBuf::from(p)),
                        other => return Err(format!("--agent: expected ours, jdk or a path, not {other:?}")),
                    }
                }
                "--tests" | "--skip" => {
                    let list = if flag == "--tests" { &mut options.tests } else { &mut options.skip };
                    list.extend(inline);
                    while let Some(v) = args.get(i).filter(|v| !v.starts_with("--")) {
                        list.push(v.clone());
                        i += 1;
                    }
                    if list.is_empty() {
                        return Err(format!("{flag} needs at least one pattern"));
                    }
                }
                "--max-minutes" => {
                    let v = value(flag)?;
                    options.max_minutes = Some(
                        v.parse()
                            .ok()
                            .filter(|f: &f64| f.is_finite() && *f > 0.0)
                            .ok_or(format!("--max-minutes: not a positive number: {v:?}"))?,
                    );
                }
                "--results-only" => options.results_only = true,
                "--timeout-factor" => {
                    let v = value(flag)?;
                    options.timeout_factor = v
                        .parse()
                        .ok()
                        .filter(|f: &f64| f.is_finite() && *f > 0.0)
                        .ok_or(format!("--timeout-factor: not a positive number: {v:?}"))?;
                }
                "--conc" => {
                    let v = value(flag)?;
                    options.conc =
                        v.parse().ok().filter(|&n| n > 0).ok_or(format!("--conc: not a positive integer: {v:?}"))?;
                }
                "--share" => {
                    let v = value(flag)?;
                    options.share = Some(
                        v.parse().ok().filter(|&n| n > 0).ok_or(format!("--share: not a positive integer: {v:?}"))?,
                    );
                }
                "--jdk" => options.jdk = Some(PathBuf::from(value(flag)?)),
                "--no-install" => options.install = false,
                other => return Err(format!("unknown option {other:?}")),
            }
        }
        Ok(Some(options))
    }
}

/// What the run found, decides the exit code.
#[derive(Debug)]
pub struct Outcome {
    pub unexpected_failures: usize,
}

impl Outcome {
    pub fn exit_code(&self) -> ExitCode {
        if self.unexpected_failures == 0 { ExitCode::SUCCESS } else { ExitCode::from(1) }
    }
}

/// The workspace root (this crate lives in `<root>/xtask`).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("xtask lives inside the workspace").to_path_buf()
}

/// Cargo's target directory: `$CARGO_TARGET_DIR` (relative to the workspace) or `<root>/target`.
pub fn target_dir() -> PathBuf {
    let root = workspace_root();
    match std::env::var_os("CARGO_TARGET_DIR").filter(|d| !d.is_empty()) {
        Some(dir) => root.join(dir),
        None => root.join("target"),
    }
}

pub fn run(options: &Options) -> Result<Outcome> {
    let started = Instant::now();
    let suite = options.suite;
    let cache = target_dir().join("conformance");
    std::fs::create_dir_all(&cache).ctx(|| format!("creating {}", cache.display()))?;
    // A JDK other than the sources' 17 gets its own run directory (and native libraries).
    let other_jdk = match &options.jdk {
        Some(home) => {
            let (home, feature) = setup::check_jdk(home)?;
            (feature != 17).then_some((home, feature))
        }
        None => None,
    };
    let jdk_suffix = other_jdk.as_ref().map(|(_, f)| format!("-jdk{f}")).unwrap_or_default();
    let run_dir = cache.join("runs").join(format!("{}-{}{jdk_suffix}", suite.name, options.agent.tag()));
    println!("== conformance: suite {} with agent {}{jdk_suffix}", suite.name, options.agent.tag());

    let (test_root, all_tests, selected, skipped_by_option, results) = if options.results_only {
        let sources = setup::ensure_test_sources(&cache, false)?;
        let test_root = sources.dir.join(suite.root);
        let all_tests = jtreg::discover(&test_root, suite.dir)?;
        let selected = jtreg::recorded_selection(&run_dir)?;
        println!("results of the last run in {}", run_dir.display());
        let results = jtreg::read_results(&run_dir)?;
        (test_root, all_tests, selected, 0, results)
    } else {
        // 1. Tools and test sources.
        let mut tools = setup::ensure_tools(options.install)?;
        if let Some((home, feature)) = &other_jdk {
            println!("testing on JDK {feature}: {}", home.display());
            tools.jdk = home.clone();
        }
        let sources = setup::ensure_test_sources(&cache, options.install)?;
        let test_root = sources.dir.join(suite.root);

        // 2. The agent under test.
        let agent_lib = match &options.agent {
            AgentChoice::Ours => Some(jdk::build_our_agent()?),
            AgentChoice::Jdk => None,
            AgentChoice::Path(p) => Some(std::fs::canonicalize(p).ctx(|| format!("agent library {}", p.display()))?),
        };

        // 3. The JDK copy, verified. One per run directory, so runs of different suites can overlap.
        let copy = run_dir.join("jdk");
        jdk::make_copy(&tools.jdk, &copy, agent_lib.as_deref())?;
        jdk::verify_copy(&tools.jdk, &copy, agent_lib.as_deref())?;

        // 4. Native helper libraries.
        let native = native::build(&sources, &tools.jdk, &cache)?;

        // 5. Which tests, then jtreg.
        let all_tests = jtreg::discover(&test_root, suite.dir)?;
        let mut picked = match options.share {
            // The share, and the tests named besides it, in the suite's order.
            Some(k) => {
                let mut picked = jtreg::share(&all_tests, suite.dir, k);
                picked.extend(jtreg::select(&all_tests, &options.tests));
                picked.sort();
                picked.dedup();
                println!("--share {k}: {} of {} tests", picked.len(), all_tests.len());
                picked
            }
            None if options.tests.is_empty() => all_tests.clone(),
            None => jtreg::select(&all_tests, &options.tests),
        };
        let before_skip = picked.len();
        if !options.skip.is_empty() {
            let skip = jtreg::select(&picked, &options.skip);
            if skip.is_empty() {
                return Err(format!("no {} test matches --skip {:?}", suite.name, options.skip));
            }
            picked.retain(|t| !skip.contains(t));
            println!("skipping {} test(s) (--skip): {}", skip.len(), skip.join(" "));
        }
        if picked.is_empty() {
            return Err(format!(
                "no {} test left to run (--tests {:?}, --skip {:?})",
                suite.name, options.tests, options.skip
            ));
        }
        let selected = (picked.len() != all_tests.len()).then_some(picked);
        let skipped_by_option = before_skip - selected.as_ref().map_or(before_skip, Vec::len);
        let results = jtreg::run(&jtreg::Run {
            jtreg: &tools.jtreg,
            jdk: &copy,
            test_root: &test_root,
            suite_dir: suite.dir,
            tests: selected.as_deref(),
            native: &native,
            run_dir: &run_dir,
            conc: options.conc,
            timeout_factor: options.timeout_factor,
            host_jdk: &tools.jdk,
            max_minutes: options.max_minutes,
        });
        let leftovers = jdk::kill_leftovers(&copy);
        if !leftovers.is_empty() {
            println!("killed {} JVM(s) left running from the copy by timed-out tests: {leftovers:?}", leftovers.len());
        }
        let results = results?;
        (test_root, all_tests, selected, skipped_by_option, results)
    };

    // 6. Results against the expected failures.
    let problem_listed = jtreg::problem_listed(&test_root, suite.dir, selected.as_deref())?;
    let expected_dir = workspace_root().join("conformance").join("expected-failures");
    let expected_file = Some(expected_dir.join(format!("{}{jdk_suffix}.txt", suite.name)))
        .filter(|f| f.is_file())
        .unwrap_or_else(|| expected_dir.join(format!("{}.txt", suite.name)));
    let expected = match options.agent {
        // A comparison run: the JDK's agent is the reference, every failure is a finding.
        AgentChoice::Jdk => expected::Expected::default(),
        _ => expected::Expected::load(&expected_file)?,
    };
    let report = expected::compare(&results, &expected, &all_tests);

    let minutes = started.elapsed().as_secs_f64() / 60.0;
    println!();
    println!("== {} with agent {}: results ({minutes:.1} min in all)", suite.name, options.agent.tag());
    if !results.failed.is_empty() {
        println!("failing tests ({}):", results.failed.len());
        for f in &results.failed {
            let mark = if expected.contains(&f.name) { "expected" } else { "NEW" };
            println!("  [{mark}] {} ({}) {}", f.name, f.status, f.hint);
        }
    }
    for name in &report.now_passing {
        println!(
            "warning: {name} is listed in {} but passed: remove it from the list",
            expected_file.strip_prefix(workspace_root()).unwrap_or(&expected_file).display()
        );
    }
    for name in &report.unknown_entries {
        println!("warning: {name} is listed in {} but is not a test of this suite", expected_file.display());
    }
    if !results.failed.is_empty() {
        println!("details: the .jtr files under {}", run_dir.join("work").display());
    }
    let skipped = results.skipped + problem_listed.len() + skipped_by_option;
    println!(
        "skipped: {} on the suite's ProblemList.txt, {} by --skip, {} by themselves",
        problem_listed.len(),
        skipped_by_option,
        results.skipped
    );
    println!("{} passed, {} failed, {} skipped", results.passed.len(), results.failed.len(), skipped);
    if report.unexpected.is_empty() {
        if results.failed.is_empty() {
            println!("conformance: OK, no failures");
        } else {
            println!("conformance: OK, every failure is listed in {}", expected_file.display());
        }
    } else {
        println!(
            "conformance: FAILED, {} failure(s) not listed in {}:",
            report.unexpected.len(),
            expected_file.display()
        );
        for name in &report.unexpected {
            println!("  {name}");
        }
    }
    Ok(Outcome { unexpected_failures: report.unexpected.len() })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Option<Options>> {
        Options::parse(&args.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn defaults() {
        let o = parse(&[]).unwrap().unwrap();
        assert_eq!(o.suite.name, "nsk-jdwp");
        assert_eq!(o.agent, AgentChoice::Ours);
        assert!(o.tests.is_empty());
        assert_eq!((o.timeout_factor, o.conc, o.install), (4.0, 2, true));
    }

    #[test]
    fn all_options() {
        let o = parse(&[
            "--suite",
            "com-sun-jdi",
            "--agent=jdk",
            "--tests",
            "a",
            "b/c",
            "--timeout-factor",
            "2.5",
            "--conc=3",
            "--no-install",
            "--skip",
            "x",
            "--max-minutes",
            "30",
            "--results-only",
            "--share",
            "4",
            "--jdk",
            "/usr/lib/jvm/some-jdk",
        ])
        .unwrap()
        .unwrap();
        assert_eq!(o.suite.name, "com-sun-jdi");
        assert_eq!(o.agent, AgentChoice::Jdk);
        assert_eq!(o.tests, ["a", "b/c"]);
        assert_eq!((o.timeout_factor, o.conc, o.install), (2.5, 3, false));
        assert_eq!(o.skip, ["x"]);
        assert_eq!((o.max_minutes, o.results_only, o.share), (Some(30.0), true, Some(4)));
        assert_eq!(o.jdk, Some(PathBuf::from("/usr/lib/jvm/some-jdk")));
        let o = parse(&["--agent", "/x/libfoo.so"]).unwrap().unwrap();
        assert_eq!(o.agent, AgentChoice::Path("/x/libfoo.so".into()));
    }

    #[test]
    fn errors_and_help() {
        assert!(parse(&["--help"]).unwrap().is_none());
        for bad in [
            &["--suite", "nope"][..],
            &["--agent", "other"],
            &["--tests"],
            &["--conc", "0"],
            &["--timeout-factor", "x"],
            &["--skip"],
            &["--max-minutes", "-1"],
            &["--share", "0"],
            &["--share"],
            &["--suite"],
            &["--frobnicate"],
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
    }
}
