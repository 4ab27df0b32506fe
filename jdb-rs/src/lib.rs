//! jdb-rs: a jdb-compatible Java debugger on [`jdi`] (jdi-rs).
//!
//! It starts the way jdb does (launch `MainClass` at `run`, `-attach [host:]port`,
//! `-listen port`), speaks jdb's commands with jdb's output formats (prompt `main[1] `, event
//! lines such as `Breakpoint hit: "thread=main", Demo.tick(), line=50 bci=0`), and adds line
//! editing with history and completion, colors, source lines at every stop, a `deadlocks`
//! command, and scripted use (`-c`, `--script`, piped input, `--json`) with meaningful exit
//! codes: 0 success, 1 a command failed, 2 usage, 3 a deadlock was found.
//!
//! Layout: [`cli`] parses the command line into a [`target`] and options; [`session`] holds a
//! debugging session (the connection and parts with one job each: position, requests, sources,
//! monitors, history, status) and runs command lines; [`events`] turns VM events into
//! jdb's messages; [`commands`] has one module per command family; [`expr`] lexes, parses and
//! evaluates jdb's expressions; [`mod@format`] has jdb's output formats and [`out`] the text/JSON
//! sink; [`repl`] is the rustyline front end, [`script`] the scripted ones. Nothing below
//! [`repl`] needs a terminal, so sessions run the same in tests.

/// `println!` to standard output, ignoring write errors: a one-shot command whose reader went away
/// (`jdb-rs deadlocks ... | head -1`) still finishes and exits with its code, instead of panicking
/// on the broken pipe. (The session's own output, [`out`], does the same.)
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

/// `print!` to standard output, ignoring write errors, as [`say!`].
macro_rules! say_raw {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stdout(), $($arg)*);
    }};
}

pub mod agent_lib;
pub mod cli;
pub mod commands;
pub mod events;
pub use jdb_expr as expr;
mod expr_host;
pub mod flame;
pub mod format;
pub mod json;
pub mod out;
pub mod profiling;
pub mod repl;
pub mod sample;
pub mod script;
pub mod session;
pub mod source;
pub mod specs;
pub mod target;

use std::io::IsTerminal;

use cli::{Cli, Options};
use out::Out;
use session::{Config, Session, SessionConfig};
use target::Target;

/// Exit status for a command-line mistake.
pub const EXIT_USAGE: i32 = 2;
/// Exit status when `deadlocks` found one.
pub use session::EXIT_DEADLOCK;

/// Runs jdb-rs with these arguments (without the program name); returns the exit status.
pub async fn run(args: Vec<String>) -> i32 {
    let cli = match cli::parse(&args) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{e}");
            eprintln!();
            eprint!("{}", cli::USAGE);
            return EXIT_USAGE;
        }
    };
    match cli {
        Cli::Help => {
            say_raw!("{}", cli::USAGE);
            0
        }
        Cli::Version => {
            say!("This is jdb-rs version {} (a jdb-compatible debugger on jdi-rs)", env!("CARGO_PKG_VERSION"));
            0
        }
        Cli::Deadlocks { attach, json } => deadlocks_once(&attach, json).await,
        Cli::Profile(opts) => profile_once(&opts).await,
        Cli::Debug(opts) => debug(*opts).await,
        Cli::Dap { listen } => dap(listen).await,
    }
}

/// Draws a flame graph for the DAP adapter's `jdbg/profile`.
fn dap_flame(path: &str, folded: &str, title: &str, unit: &str) -> Result<(), String> {
    let stacks = flame::parse_folded(folded).map_err(|e| format!("folded stacks: {e}"))?;
    commands::profile_alloc_monitors::write_flame(path, &stacks, title, unit)
        .map_err(|e| format!("writing {path}: {e}"))
}

/// `jdb-rs dap`: serves the Debug Adapter Protocol (`jdbg-dap`) on stdin/stdout, or on one TCP
/// connection at a time at `listen`. Launches use our agent when it is found next to jdb-rs.
async fn dap(listen: Option<String>) -> i32 {
    let config = jdbg_dap::Config { agent: agent_lib::locate(), flame: Some(dap_flame) };
    match listen {
        None => match jdbg_dap::serve(tokio::io::stdin(), tokio::io::stdout(), config).await {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("jdb-rs dap: {e}");
                1
            }
        },
        Some(addr) => {
            let listener = match tokio::net::TcpListener::bind(&addr).await {
                Ok(l) => l,
                Err(e) => {
                    eprintln!("jdb-rs dap: cannot listen on {addr}: {e}");
                    return 1;
                }
            };
            if let Ok(a) = listener.local_addr() {
                eprintln!("jdb-rs dap: listening on {a}");
            }
            loop {
                match listener.accept().await {
                    Ok((stream, _)) => {
                        let _ = stream.set_nodelay(true);
                        let (r, w) = stream.into_split();
                        if let Err(e) = jdbg_dap::serve(r, w, config.clone()).await {
                            eprintln!("jdb-rs dap: {e}");
                        }
                    }
                    Err(e) => {
                        eprintln!("jdb-rs dap: accept failed: {e}");
                        return 1;
                    }
                }
            }
        }
    }
}

async fn debug(mut opts: Options) -> i32 {
    if opts.sample {
        match sample::prepare() {
            Ok(s) => {
                opts.classpath = Some(s.classpath);
                opts.sourcepath = opts.sourcepath.or(Some(s.sourcepath));
                opts.connect = cli::Connect::Launch { main: Some("Demo".into()), args: Vec::new() };
            }
            Err(e) => {
                eprintln!("jdb-rs: {e}");
                return 1;
            }
        }
    }
    if matches!(opts.connect, cli::Connect::Launch { .. }) && !opts.jdk_agent && opts.agent.is_none() {
        opts.agent = agent_lib::locate();
        if opts.agent.is_none() {
            eprintln!("{}", agent_lib::fallback_note());
        }
    }
    let scripted = opts.commands.is_some() || opts.script.is_some();
    let stdin_tty = std::io::stdin().is_terminal();
    let stdout_tty = std::io::stdout().is_terminal();
    let interactive = !scripted && stdin_tty;
    let color = stdout_tty && !opts.no_color && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let out = Out::stdout(opts.json, color, !scripted);
    let script_lines = match &opts.script {
        Some(path) => match std::fs::read_to_string(path) {
            Ok(text) => Some(text.lines().map(String::from).collect::<Vec<_>>()),
            Err(e) => {
                eprintln!("jdb-rs: cannot read {}: {e}", path.display());
                return EXIT_USAGE;
            }
        },
        None => opts.commands.clone(),
    };
    let mut session = Session::new(session_config(&opts, interactive), out.clone());
    if let Err(e) = session.startup().await {
        out.error(e);
        out.finish_record("startup");
        out.flush();
        return 1;
    }
    session.settle_after_connect().await;
    if opts.launch_now && session.target.launches() {
        session.run_command("").await;
    }
    if out.finish_command_failed_silently() {
        session.status.fail();
    }
    out.finish_record("startup");
    match script_lines {
        Some(lines) => script::run_commands(&mut session, &lines).await,
        None if interactive => {
            if !repl::run(&mut session).await {
                script::run_stdin(&mut session).await;
            }
        }
        None => script::run_stdin(&mut session).await,
    }
    session.detach().await;
    out.flush();
    session.exit_code()
}

/// What the session takes from the command line.
fn session_config(opts: &Options, interactive: bool) -> SessionConfig {
    SessionConfig {
        target: Target::new(opts.connect.clone(), opts.classpath.clone(), opts.jvm_options.clone(), opts.agent.clone()),
        sourcepath: opts.sourcepath.clone(),
        config: Config { interactive, timeout: opts.timeout, track_all_threads: opts.track_all_threads },
    }
}

/// `jdb-rs deadlocks --attach ADDR [--json]`.
async fn deadlocks_once(address: &str, json: bool) -> i32 {
    let vm = match jdi::attach(address, Some(session::CONNECT_TIMEOUT)).await {
        Ok(vm) => vm,
        Err(e) => {
            if json {
                say!(
                    "{}",
                    serde_json::json!({"type": "error", "error": format!("Unable to attach to {address}: {e}")})
                );
            } else {
                eprintln!("jdb-rs: Unable to attach to {address}: {e}");
            }
            return 1;
        }
    };
    // One round trip over monitors and j.u.c locks with our agent; standard commands otherwise.
    if let Some(one_trip) = commands::profile::one_trip_deadlocks(&vm).await {
        let _ = vm.dispose().await;
        return match one_trip {
            Ok(cycles) => {
                if json {
                    say!(
                        "{}",
                        serde_json::json!({"type": "deadlocks", "count": cycles.len(), "deadlocks": commands::profile::deadlocks_json(&cycles)})
                    );
                } else {
                    for c in &cycles {
                        say!("{}", commands::profile::deadlock_text(c));
                    }
                    if cycles.is_empty() {
                        say!("No deadlock found.");
                    } else {
                        say!("Found {} deadlock(s).", cycles.len());
                    }
                }
                if cycles.is_empty() { 0 } else { EXIT_DEADLOCK }
            }
            Err(e) => one_shot_error(json, &e.to_string()),
        };
    }
    let found = jdi::deadlock::find_deadlocks(&vm).await;
    let _ = vm.dispose().await;
    match found {
        Ok(found) => {
            if json {
                say!(
                    "{}",
                    serde_json::json!({"type": "deadlocks", "count": found.len(), "deadlocks": json::deadlocks(&found)})
                );
            } else {
                for d in &found {
                    say!("{d}");
                }
                if found.is_empty() {
                    say!("No deadlock found.");
                } else {
                    say!("Found {} deadlock(s).", found.len());
                }
            }
            if found.is_empty() { 0 } else { EXIT_DEADLOCK }
        }
        Err(e) => {
            if json {
                say!("{}", serde_json::json!({"type": "error", "error": e.to_string()}));
            } else {
                eprintln!("jdb-rs: {e}");
            }
            1
        }
    }
}

/// A one-shot command failed: one line (or one JSON object), exit status 1.
fn one_shot_error(json: bool, message: &str) -> i32 {
    if json {
        say!("{}", serde_json::json!({"type": "error", "error": message}));
    } else {
        eprintln!("jdb-rs: {message}");
    }
    1
}

/// `jdb-rs profile --attach ADDR --cpu|--alloc|--monitors ...`: records for the duration, prints
/// the reports (and writes the flame graph), and detaches (the VM runs on).
async fn profile_once(opts: &cli::ProfileOptions) -> i32 {
    use commands::profile_alloc_monitors as more;
    use jdi::profiler::Profiler;
    let vm = match jdi::attach(&opts.attach, Some(session::CONNECT_TIMEOUT)).await {
        Ok(vm) => vm,
        Err(e) => return one_shot_error(opts.json, &format!("Unable to attach to {}: {e}", opts.attach)),
    };
    let result = async {
        let profiler = Profiler::detect(&vm).await?;
        if opts.cpu {
            let flags = if opts.jvmti_stacks { jdi::profiler::CPU_FLAG_JVMTI_STACKS } else { 0 };
            profiler.cpu_start_with_flags(opts.interval, 0, &[], flags).await?;
        }
        if opts.alloc {
            profiler.alloc_start(opts.alloc_interval, 0).await?;
        }
        if opts.monitors {
            profiler.monitor_start(0).await?;
        }
        tokio::time::sleep(opts.duration).await;
        let cpu = if opts.cpu {
            profiler.cpu_stop().await?;
            Some(profiler.cpu_report(true).await?)
        } else {
            None
        };
        let alloc = if opts.alloc {
            profiler.alloc_stop().await?;
            Some(profiler.alloc_report(true).await?)
        } else {
            None
        };
        let monitors = if opts.monitors {
            profiler.monitor_stop().await?;
            Some(profiler.monitor_report(true).await?)
        } else {
            None
        };
        Ok::<_, jdi::JdiError>((cpu, alloc, monitors))
    }
    .await;
    let _ = vm.dispose().await;
    let (cpu, alloc, monitors) = match result {
        Ok(reports) => reports,
        Err(e) => return one_shot_error(opts.json, &e.to_string()),
    };
    if let Some(path) = &opts.flame {
        let written = match (&cpu, &alloc) {
            (Some(report), _) => more::write_flame(path, &more::cpu_folded(report), "CPU samples", "samples"),
            (None, Some(report)) => more::write_flame(path, &more::alloc_folded(report), "Allocated bytes", "bytes"),
            (None, None) => Ok(()),
        };
        if let Err(e) = written {
            return one_shot_error(opts.json, &format!("Unable to write {path}: {e}"));
        }
    }
    if opts.json {
        let mut object = match &cpu {
            Some(report) => commands::profile::cpu_report_json(report),
            None => serde_json::json!({}),
        };
        object["type"] = serde_json::json!("profile");
        if let Some(report) = &alloc {
            object["sites"] = more::sites_json(report);
        }
        if let Some(report) = &monitors {
            object["monitors"] = more::monitors_json(report);
        }
        if let Some(path) = &opts.flame {
            object["flame"] = serde_json::json!(path);
        }
        say!("{object}");
    } else {
        if let Some(report) = &cpu {
            say_raw!("{}", commands::profile::cpu_report_text(report, opts.top));
        }
        if let Some(report) = &alloc {
            say_raw!("{}", more::sites_text(report, opts.top));
        }
        if let Some(report) = &monitors {
            say_raw!("{}", more::monitors_text(report, opts.top));
        }
        if let Some(path) = &opts.flame {
            say!("Flame graph written to {path}");
        }
    }
    0
}
