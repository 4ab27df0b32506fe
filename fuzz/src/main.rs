//! `jdwp-fuzz run` and `jdwp-fuzz replay`: see `spec-notes/fuzzing.md`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::rc::Rc;
use std::time::Duration;

use jdwp_fuzz::finding::{self, Recorded};
use jdwp_fuzz::generate::{Expect, Generator, Options};
use jdwp_fuzz::run::{RunConfig, Session, run};
use jdwp_fuzz::target::{AgentKind, TargetConfig, default_agent_library, fixture_classes};

const USAGE: &str = "\
usage:
  jdwp-fuzz run [--seed N] [--packets N] [--first N] [--agent ours|jdk] [--agent-lib PATH] [--jdk PATH]
                [--out DIR] [--no-vendor] [--timeout SECS] [--rss-limit-mb N] [--heap-mb N] [--progress N]
  jdwp-fuzz replay FILE [--context] [common options]
  jdwp-fuzz replay --hex HEX [common options]
  jdwp-fuzz replay --seed N --index N [--no-vendor] [common options]

run: sends packets one at a time to a FuzzTarget JVM under the agent and records findings (crash,
exit, hang, closed, malformed-reply, malformed-event, memory) as files in --out (default
target/fuzz/<agent>-seed<N>). Exit status 1 if there was any finding.
replay: sends one packet (from a finding file, hex, or regenerated from seed and index) to a
fresh JVM, with this session's IDs put in the recorded pool slots; --context first replays the
packets recorded before it. Exit status 1 if it is still a finding.";

struct Args {
    words: Vec<String>,
}

impl Args {
    fn flag(&mut self, name: &str) -> bool {
        if let Some(i) = self.words.iter().position(|w| w == name) {
            self.words.remove(i);
            true
        } else {
            false
        }
    }

    fn value(&mut self, name: &str) -> Result<Option<String>, String> {
        let Some(i) = self.words.iter().position(|w| w == name) else { return Ok(None) };
        if i + 1 >= self.words.len() {
            return Err(format!("{name} needs a value"));
        }
        let v = self.words.remove(i + 1);
        self.words.remove(i);
        Ok(Some(v))
    }

    fn number(&mut self, name: &str, default: u64) -> Result<u64, String> {
        match self.value(name)? {
            Some(v) => v.parse().map_err(|e| format!("{name} {v}: {e}")),
            None => Ok(default),
        }
    }
}

fn main() -> ExitCode {
    let mut args = Args { words: std::env::args().skip(1).collect() };
    if args.words.is_empty() || args.flag("--help") || args.flag("-h") {
        println!("{USAGE}");
        return ExitCode::SUCCESS;
    }
    let sub = args.words.remove(0);
    let result = match sub.as_str() {
        "run" => cmd_run(args),
        "replay" => cmd_replay(args),
        other => Err(format!("unknown subcommand `{other}`\n{USAGE}")),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("jdwp-fuzz: {e}");
            ExitCode::from(2)
        }
    }
}

struct Common {
    config: RunConfig,
}

fn common(args: &mut Args, seed: u64) -> Result<Common, String> {
    if let Some(jdk) = args.value("--jdk")? {
        if !PathBuf::from(&jdk).join("bin/java").is_file() {
            return Err(format!("--jdk {jdk}: no bin/java there"));
        }
        // SAFETY: set before any thread of ours starts; the rig reads it to find `java`.
        unsafe { std::env::set_var("JAVA_HOME", &jdk) };
    }
    let agent = match args.value("--agent")?.as_deref() {
        None | Some("ours") => {
            let lib = args.value("--agent-lib")?.map(PathBuf::from).unwrap_or_else(default_agent_library);
            if !lib.is_file() {
                return Err(format!(
                    "our agent is not at {}: build it (`cargo build --release -p jdwp-agent`) or pass --agent-lib",
                    lib.display()
                ));
            }
            AgentKind::Ours(lib)
        }
        Some("jdk") => AgentKind::Jdk,
        Some(other) => return Err(format!("--agent {other}: ours or jdk")),
    };
    let vendor = !args.flag("--no-vendor");
    let out = match args.value("--out")? {
        Some(o) => PathBuf::from(o),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../target/fuzz")
            .join(format!("{}-seed{seed}", agent.name())),
    };
    let timeout = args.number("--timeout", 20)?;
    let rss_limit_mb = args.number("--rss-limit-mb", 1024)?;
    let heap_mb = args.number("--heap-mb", 256)? as u32;
    let progress = args.number("--progress", 1000)?;
    let classes = fixture_classes()?;
    let scratch = std::env::temp_dir().join(format!("jdwp-fuzz-{}-{}", std::process::id(), agent.name()));
    Ok(Common {
        config: RunConfig {
            seed,
            first: 0,
            packets: 0,
            target: TargetConfig { agent, classes, scratch, heap_mb },
            out,
            reply_timeout: Duration::from_secs(timeout),
            block_timeout: Duration::from_secs(5),
            rss_limit_mb,
            vendor,
            progress,
        },
    })
}

fn leftover(args: &Args) -> Result<(), String> {
    match args.words.first() {
        Some(w) => Err(format!("unexpected argument `{w}`\n{USAGE}")),
        None => Ok(()),
    }
}

fn cmd_run(mut args: Args) -> Result<ExitCode, String> {
    let seed = args.number("--seed", 1)?;
    let packets = args.number("--packets", 5000)?;
    let first = args.number("--first", 0)?;
    let mut c = common(&mut args, seed)?;
    leftover(&args)?;
    c.config.packets = packets;
    c.config.first = first;
    let scratch = c.config.target.scratch.clone();
    let agent = c.config.target.agent.name();
    clear_old_findings(&c.config.out);
    let java = test_rig::java_tool("java").map(|p| p.display().to_string()).unwrap_or_else(|e| e.to_string());
    eprintln!("jdwp-fuzz: seed {seed}, packets {first}..{}, agent {agent}, {java}", first + packets);
    let stats = run(c.config.clone());
    let _ = std::fs::remove_dir_all(&scratch);
    let stats = stats?;
    let summary = stats.summary();
    print!("agent {agent}, seed {seed}: {summary}");
    let _ = std::fs::create_dir_all(&c.config.out);
    let _ = std::fs::write(
        c.config.out.join("summary.txt"),
        format!("agent {agent}, seed {seed}\n{summary}\n{}", stats.per_command_table()),
    );
    Ok(if stats.findings.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

fn cmd_replay(mut args: Args) -> Result<ExitCode, String> {
    let hex = args.value("--hex")?;
    let seed = args.value("--seed")?.map(|v| v.parse::<u64>().map_err(|e| format!("--seed: {e}"))).transpose()?;
    let index = args.value("--index")?.map(|v| v.parse::<u64>().map_err(|e| format!("--index: {e}"))).transpose()?;
    let with_context = args.flag("--context");
    let mut c = common(&mut args, seed.unwrap_or(0))?;
    let file = if hex.is_none() && seed.is_none() { args.words.pop() } else { None };
    leftover(&args)?;
    let scratch = c.config.target.scratch.clone();
    c.config.progress = 0;
    let vendor = c.config.vendor;
    let mut session = Session::new(c.config);
    let result = replay(&mut session, hex, seed.zip(index), file, with_context, vendor);
    session.stop();
    let _ = std::fs::remove_dir_all(&scratch);
    result
}

fn replay(
    session: &mut Session,
    hex: Option<String>,
    generated: Option<(u64, u64)>,
    file: Option<String>,
    with_context: bool,
    vendor: bool,
) -> Result<ExitCode, String> {
    session.ensure()?;
    let (packet, context) = if let Some(h) = hex {
        let bytes = finding::unhex(&h)?;
        if bytes.len() < 11 {
            return Err("a packet needs an 11-byte header".into());
        }
        (Recorded { index: 0, bytes, expect: Expect::Reply, patches: Vec::new() }, Vec::new())
    } else if let Some((seed, index)) = generated {
        let g = Generator::new(seed, Options { vendor });
        let p = g.packet(index, &Rc::clone(&session.pool));
        eprintln!("jdwp-fuzz: packet {index} of seed {seed}: {} {}", p.command.qualified_name, p.mutations.join(" "));
        (Recorded::of(&p), Vec::new())
    } else {
        let file = file.ok_or("replay needs a finding file, --hex, or --seed and --index")?;
        let text = std::fs::read_to_string(&file).map_err(|e| format!("{file}: {e}"))?;
        finding::parse(&text)?
    };
    if with_context {
        for c in &context {
            session.ensure()?;
            let bytes = c.resolved(&session.pool);
            let v = session.fire(&bytes, c.expect);
            eprintln!("jdwp-fuzz: context packet {}: {}", c.index, v.note);
            if v.finding.is_some() || v.restart || v.reconnect {
                if let Some((k, d)) = v.finding {
                    println!("finding in the context, at packet {}: {k}: {d}", c.index);
                    return Ok(ExitCode::from(1));
                }
                session.conn = None;
            } else {
                let _ = session.follow_up(&bytes, &v);
            }
        }
        session.ensure()?;
    }
    let bytes = packet.resolved(&session.pool);
    println!("packet: {}", finding::hex(&bytes));
    let v = session.fire(&bytes, packet.expect);
    match v.finding {
        Some((kind, detail)) => {
            println!("finding: {kind}: {detail}");
            if let Some(t) = &session.target {
                println!("jvm output (tail):\n{}", t.output_tail(3000));
            }
            Ok(ExitCode::from(1))
        }
        None => {
            println!("no finding: {}", v.note);
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Removes the finding files and summary a previous run left in `out`, so the directory shows this
/// run only.
fn clear_old_findings(out: &std::path::Path) {
    let Ok(dir) = std::fs::read_dir(out) else { return };
    for e in dir.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let numbered =
            name.len() > 9 && name.as_bytes()[..8].iter().all(u8::is_ascii_digit) && name.as_bytes()[8] == b'-';
        if numbered || name == "summary.txt" {
            let _ = std::fs::remove_file(e.path());
        }
    }
}
