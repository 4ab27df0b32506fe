//! The command line: jdb's option names plus jdb-rs's own (`--json`, `-c`, `--script`,
//! `--agent`, `--sample`, `--timeout`) and the one-shot `deadlocks` and `profile` subcommands.

use std::path::PathBuf;
use std::time::Duration;

pub use crate::target::Connect;

/// `shmem:NAME` addresses select the shared-memory transport; the name is checked here so a bad
/// one is a usage error.
fn shmem_address(address: &str) -> Result<Option<String>, String> {
    match address.strip_prefix("shmem:") {
        None => Ok(None),
        Some(name) => {
            jdwp_transports::shmem::check_name(name).map(|()| Some(name.to_owned())).map_err(|e| e.to_string())
        }
    }
}

/// Everything a debugging session is started with.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    pub connect: Connect,
    pub classpath: Option<String>,
    pub sourcepath: Option<String>,
    /// Options for the launched JVM (`-J<opt>`, `-R<opt>`, `-D..`, `-X..`, `-verbose..`).
    pub jvm_options: Vec<String>,
    /// The agent library to launch with (`--agent PATH`); when absent, ours is looked for
    /// next to the jdb-rs executable (see [`crate::agent_lib`]).
    pub agent: Option<PathBuf>,
    /// `--jdk-agent`: launch with the JDK's own `-agentlib:jdwp` instead of ours.
    pub jdk_agent: bool,
    /// `-launch`: start the VM at once rather than at `run`.
    pub launch_now: bool,
    /// `-c "cmd; cmd"`.
    pub commands: Option<Vec<String>>,
    /// `--script FILE`.
    pub script: Option<PathBuf>,
    /// `--json`: one JSON object per command result and per event.
    pub json: bool,
    /// `--no-color` (colors are also off when stdout is not a terminal, or with `NO_COLOR`).
    pub no_color: bool,
    /// `--timeout SECS`: how long a scripted `run`/`cont`/step may wait for the next stop.
    pub timeout: Option<Duration>,
    /// `--sample`: debug the bundled sample program (compiled on demand).
    pub sample: bool,
    /// `-trackallthreads`: as jdb, track virtual threads too (thread starts and deaths of every
    /// thread; a launched VM's agent gets `includevirtualthreads=y`).
    pub track_all_threads: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            connect: Connect::Launch { main: None, args: Vec::new() },
            classpath: None,
            sourcepath: None,
            jvm_options: Vec::new(),
            agent: None,
            jdk_agent: false,
            launch_now: false,
            commands: None,
            script: None,
            json: false,
            no_color: false,
            timeout: None,
            sample: false,
            track_all_threads: false,
        }
    }
}

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum Cli {
    Help,
    Version,
    Debug(Box<Options>),
    /// `jdb-rs deadlocks --attach ADDR [--json]`.
    Deadlocks {
        attach: String,
        json: bool,
    },
    /// `jdb-rs profile --attach ADDR --cpu [--duration D] [--interval I] [--json]`.
    Profile(ProfileOptions),
    /// `jdb-rs dap [--listen HOST:PORT]`: a Debug Adapter Protocol server (stdin/stdout, or TCP).
    Dap {
        listen: Option<String>,
    },
}

/// What the one-shot `profile` does.
#[derive(Debug, Clone, PartialEq)]
pub struct ProfileOptions {
    pub attach: String,
    /// `--cpu`: CPU samples.
    pub cpu: bool,
    /// `--alloc`: allocation sites, sampled about every `alloc_interval` bytes
    /// (`--alloc-interval`, default 512 KiB).
    pub alloc: bool,
    pub alloc_interval: i32,
    /// `--monitors`: monitor contention.
    pub monitors: bool,
    /// `--flame FILE.svg`: a flame graph of the CPU samples (or, without `--cpu`, of the
    /// allocated bytes).
    pub flame: Option<String>,
    /// How long to profile (`--duration`, default 10 s).
    pub duration: Duration,
    /// The sampling interval (`--interval`, default 10 ms).
    pub interval: Duration,
    /// `--jvmti-stacks`: sample with JVMTI stack traces instead of the agent's default, timer
    /// signals and `AsyncGetCallTrace` (see `profile cpu start ... jvmti`).
    pub jvmti_stacks: bool,
    /// How many traces the text report lists (`--top`, default 20).
    pub top: usize,
    pub json: bool,
}

/// A command-line mistake (exit status 2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

pub const USAGE: &str = "\
Usage: jdb-rs <options> <class> <arguments>
       jdb-rs deadlocks --attach [host:]port [--json]
       jdb-rs profile --attach [host:]port [--cpu [--jvmti-stacks]] [--alloc] [--monitors] [--duration 10s] [--interval 10ms] [--alloc-interval 524288] [--top 20] [--flame out.svg] [--json]
       jdb-rs dap [--listen host:port]   (a Debug Adapter Protocol server for editors: stdin/stdout, or TCP)

where options include:
    -? -h --help -help print this help message and exit
    -version          print the version and exit
    -sourcepath <directories separated by \":\">
                      directories in which to look for source files
    -attach <address>
                      attach to a running VM at [host:]port, or shmem:<name> (shared memory)
    -listen <address>
                      wait for a running VM to connect at [host:]port, or shmem:<name>
    -listenany
                      wait for a running VM to connect at any available address
    -launch
                      launch VM immediately instead of waiting for 'run' command
    -classpath <directories separated by \":\"> (or -cp)
                      list directories in which to look for classes
    -J<option> -R<option>
                      forward <option> to the debuggee JVM if launched by jdb-rs
    -D<name>=<value>  -X<option>  -verbose[:class|gc|jni]
                      forwarded to the debuggee JVM
    --agent <path>    launch with this JDWP agent library (default: ours, libjdwp_agent.so,
                      looked for next to jdb-rs, in ../lib, or in $JDB_RS_AGENT)
    --jdk-agent       launch with the JDK's own agent (-agentlib:jdwp) instead of ours
    --sample          debug the bundled sample program (tests/fixtures/Demo.java)

jdb-rs options for scripted use:
    -c \"cmd; cmd\"     run these commands in order, then detach and exit
    --script <file>   run the commands in <file>, then detach and exit
    --json            print one JSON object per command result and per event
    --timeout <secs>  in scripts, how long run/cont/step may wait for the next stop
    --no-color        never color the output (also: NO_COLOR, or stdout not a terminal)

Exit status: 0 success, 1 a command failed, 2 usage, 3 'deadlocks' found one.

<class> is the name of the class to begin debugging
<arguments> are the arguments passed to the main() method of <class>

For command help type 'help' at jdb-rs prompt
";

fn usage(msg: impl Into<String>) -> UsageError {
    UsageError(msg.into())
}

/// Parses the arguments (without the program name).
pub fn parse(args: &[String]) -> Result<Cli, UsageError> {
    if args.first().map(String::as_str) == Some("deadlocks") {
        return parse_deadlocks(&args[1..]);
    }
    if args.first().map(String::as_str) == Some("profile") {
        return parse_profile(&args[1..]);
    }
    if args.first().map(String::as_str) == Some("dap") {
        return parse_dap(&args[1..]);
    }
    let mut o = Options::default();
    let mut connect: Option<Connect> = None;
    let mut i = 0;
    let value = |i: &mut usize, what: &str| -> Result<String, UsageError> {
        *i += 1;
        args.get(*i).cloned().ok_or_else(|| usage(what.to_string()))
    };
    while i < args.len() {
        let a = args[i].as_str();
        match a {
            "-?" | "-h" | "--help" | "-help" => return Ok(Cli::Help),
            "-version" | "--version" => return Ok(Cli::Version),
            "-sourcepath" => o.sourcepath = Some(value(&mut i, "No sourcepath specified.")?),
            "-classpath" | "-cp" | "--classpath" => o.classpath = Some(value(&mut i, "No classpath specified.")?),
            "-attach" | "--attach" => {
                if connect.is_some() {
                    return Err(usage(format!("{a} cannot redefine existing connection")));
                }
                let address = value(&mut i, "No attach address specified.")?;
                connect = Some(match shmem_address(&address).map_err(usage)? {
                    Some(name) => Connect::AttachShmem(name),
                    None => Connect::Attach(address),
                });
            }
            "-listen" | "--listen" => {
                if connect.is_some() {
                    return Err(usage(format!("{a} cannot redefine existing connection")));
                }
                let address = value(&mut i, "No attach address specified.")?;
                connect = Some(match shmem_address(&address).map_err(usage)? {
                    Some(name) => Connect::ListenShmem(name),
                    None => Connect::Listen(address),
                });
            }
            "-listenany" => {
                if connect.is_some() {
                    return Err(usage(format!("{a} cannot redefine existing connection")));
                }
                connect = Some(Connect::Listen("127.0.0.1:0".into()));
            }
            "-launch" => o.launch_now = true,
            "--agent" => o.agent = Some(PathBuf::from(value(&mut i, "--agent needs a library path")?)),
            "--jdk-agent" => o.jdk_agent = true,
            "-c" => {
                let cmds = value(&mut i, "-c needs commands")?;
                o.commands.get_or_insert_with(Vec::new).extend(split_commands(&cmds));
            }
            "--script" => o.script = Some(PathBuf::from(value(&mut i, "--script needs a file")?)),
            "--json" => o.json = true,
            "--no-color" => o.no_color = true,
            "--sample" => o.sample = true,
            "--timeout" => {
                let v = value(&mut i, "--timeout needs seconds")?;
                let secs: f64 = v.parse().map_err(|_| usage(format!("--timeout wants seconds, not {v:?}")))?;
                o.timeout = Some(Duration::try_from_secs_f64(secs).map_err(|_| usage("--timeout wants seconds >= 0"))?);
            }
            "-trackallthreads" => o.track_all_threads = true,
            "-tclient" | "-tserver" => {}
            "-dbgtrace" => {
                if args.get(i + 1).is_some_and(|n| n.starts_with(|c: char| c.is_ascii_digit())) {
                    i += 1;
                }
            }
            "-X" => return Err(usage("Use 'java -X' to see the available non-standard options")),
            _ if a.starts_with("-J") && a.len() > 2 => o.jvm_options.push(a[2..].to_string()),
            _ if a.starts_with("-R") && a.len() > 2 => o.jvm_options.push(a[2..].to_string()),
            _ if a.starts_with("-D") || a.starts_with("-X") || a.starts_with("-verbose") => {
                o.jvm_options.push(a.to_string())
            }
            _ if a.starts_with('-') => return Err(usage(format!("invalid option: {a}"))),
            _ => {
                let main = a.to_string();
                let rest = args[i + 1..].to_vec();
                if matches!(
                    connect,
                    Some(Connect::Attach(_) | Connect::Listen(_) | Connect::AttachShmem(_) | Connect::ListenShmem(_))
                ) {
                    return Err(usage(format!(
                        "Cannot specify command line with connector: {}",
                        if matches!(connect, Some(Connect::Attach(_) | Connect::AttachShmem(_))) {
                            "attach"
                        } else {
                            "listen"
                        }
                    )));
                }
                connect = Some(Connect::Launch { main: Some(main), args: rest });
                break;
            }
        }
        i += 1;
    }
    o.connect = connect.unwrap_or(Connect::Launch { main: None, args: Vec::new() });
    if o.sample {
        match &o.connect {
            Connect::Launch { main: None, .. } => {}
            _ => return Err(usage("--sample starts the sample program; give no class or connection")),
        }
    }
    if o.commands.is_some() && o.script.is_some() {
        return Err(usage("give either -c or --script, not both"));
    }
    if o.jdk_agent && o.agent.is_some() {
        return Err(usage("give either --agent or --jdk-agent, not both"));
    }
    Ok(Cli::Debug(Box::new(o)))
}

const DAP_USAGE: &str = "usage: jdb-rs dap [--listen HOST:PORT]";

fn parse_dap(args: &[String]) -> Result<Cli, UsageError> {
    match args {
        [] => Ok(Cli::Dap { listen: None }),
        [flag, addr] if flag == "--listen" => Ok(Cli::Dap { listen: Some(addr.clone()) }),
        _ => Err(usage(format!("dap: unexpected arguments {args:?}\n{DAP_USAGE}"))),
    }
}

fn parse_deadlocks(args: &[String]) -> Result<Cli, UsageError> {
    let mut attach = None;
    let mut json = false;
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--attach" | "-attach" => {
                i += 1;
                attach = Some(args.get(i).cloned().ok_or_else(|| usage("No attach address specified."))?);
            }
            "--json" => json = true,
            "-h" | "--help" | "-help" | "-?" => return Ok(Cli::Help),
            other => return Err(usage(format!("deadlocks: unexpected argument {other:?}"))),
        }
        i += 1;
    }
    let attach = attach.ok_or_else(|| usage("usage: jdb-rs deadlocks --attach [host:]port [--json]"))?;
    Ok(Cli::Deadlocks { attach, json })
}

const PROFILE_USAGE: &str = "usage: jdb-rs profile --attach [host:]port [--cpu [--jvmti-stacks]] [--alloc] [--monitors] [--duration 10s] [--interval 10ms] [--alloc-interval 524288] [--top 20] [--flame out.svg] [--json]";

fn parse_profile(args: &[String]) -> Result<Cli, UsageError> {
    let mut o = ProfileOptions {
        attach: String::new(),
        cpu: false,
        alloc: false,
        alloc_interval: crate::profiling::DEFAULT_ALLOC_INTERVAL,
        monitors: false,
        flame: None,
        duration: Duration::from_secs(10),
        interval: crate::profiling::DEFAULT_INTERVAL,
        jvmti_stacks: false,
        top: crate::profiling::DEFAULT_TOP,
        json: false,
    };
    let mut attach = None;
    let mut i = 0;
    let value =
        |i: usize, what: &str| args.get(i).cloned().ok_or_else(|| usage(format!("profile: {what} needs a value")));
    let duration = |text: String, what: &str| {
        crate::profiling::parse_duration(&text)
            .ok_or_else(|| usage(format!("profile: {what} {text:?} is not a duration (examples: 10s, 500ms, 1ms)")))
    };
    while i < args.len() {
        match args[i].as_str() {
            "--attach" | "-attach" => {
                i += 1;
                attach = Some(value(i, "--attach")?);
            }
            "--cpu" => o.cpu = true,
            "--jvmti-stacks" => o.jvmti_stacks = true,
            "--alloc" => o.alloc = true,
            "--monitors" => o.monitors = true,
            "--alloc-interval" => {
                i += 1;
                let text = value(i, "--alloc-interval")?;
                o.alloc_interval = text
                    .parse()
                    .ok()
                    .filter(|&n: &i32| n >= 0)
                    .ok_or_else(|| usage(format!("profile: --alloc-interval {text:?} is not a byte count")))?;
            }
            "--flame" => {
                i += 1;
                o.flame = Some(value(i, "--flame")?);
            }
            "--duration" => {
                i += 1;
                o.duration = duration(value(i, "--duration")?, "--duration")?;
            }
            "--interval" => {
                i += 1;
                o.interval = duration(value(i, "--interval")?, "--interval")?;
            }
            "--top" => {
                i += 1;
                let text = value(i, "--top")?;
                o.top = text
                    .parse()
                    .ok()
                    .filter(|&n| n > 0)
                    .ok_or_else(|| usage(format!("profile: --top {text:?} is not a count")))?;
            }
            "--json" => o.json = true,
            "-h" | "--help" | "-help" | "-?" => return Ok(Cli::Help),
            other => return Err(usage(format!("profile: unexpected argument {other:?}"))),
        }
        i += 1;
    }
    o.attach = attach.ok_or_else(|| usage(PROFILE_USAGE))?;
    if !(o.cpu || o.alloc || o.monitors) {
        return Err(usage(format!("profile: say what to profile (--cpu, --alloc, --monitors)\n{PROFILE_USAGE}")));
    }
    if o.jvmti_stacks && !o.cpu {
        return Err(usage("profile: --jvmti-stacks is how CPU samples are taken: add --cpu"));
    }
    if o.flame.is_some() && !(o.cpu || o.alloc) {
        return Err(usage("profile: --flame draws CPU samples or allocations: add --cpu or --alloc"));
    }
    Ok(Cli::Profile(o))
}

/// Splits `-c` text into commands at `;` (a `;` inside double quotes stays: `print "a;b"`).
pub fn split_commands(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for c in text.chars() {
        match quote {
            Some(q) => {
                cur.push(c);
                if escaped {
                    escaped = false;
                } else if c == '\\' {
                    escaped = true;
                } else if c == q {
                    quote = None;
                }
            }
            None if c == '"' || c == '\'' => {
                quote = Some(c);
                cur.push(c);
            }
            None if c == ';' || c == '\n' => {
                if !cur.trim().is_empty() {
                    out.push(cur.trim().to_string());
                }
                cur.clear();
            }
            None => cur.push(c),
        }
    }
    if !cur.trim().is_empty() {
        out.push(cur.trim().to_string());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn launch_options_and_program_arguments() {
        let Cli::Debug(o) = parse(&args("-classpath /cp -sourcepath /src -J-Xint -Dx=y Demo a -b")).unwrap() else {
            panic!()
        };
        assert_eq!(o.classpath.as_deref(), Some("/cp"));
        assert_eq!(o.sourcepath.as_deref(), Some("/src"));
        assert_eq!(o.jvm_options, ["-Xint", "-Dx=y"]);
        assert_eq!(o.connect, Connect::Launch { main: Some("Demo".into()), args: vec!["a".into(), "-b".into()] });
    }

    #[test]
    fn attach_listen_and_errors() {
        let Cli::Debug(o) = parse(&args("-attach 127.0.0.1:5005")).unwrap() else { panic!() };
        assert_eq!(o.connect, Connect::Attach("127.0.0.1:5005".into()));
        assert!(parse(&args("-attach 1 -listen 2")).is_err());
        assert!(parse(&args("-attach")).is_err());
        assert!(parse(&args("-bogus")).is_err());
        assert!(parse(&args("-attach 5 Demo")).is_err());
        assert_eq!(
            parse(&args("deadlocks --attach 5 --json")).unwrap(),
            Cli::Deadlocks { attach: "5".into(), json: true }
        );
        assert!(parse(&args("deadlocks")).is_err());
    }

    #[test]
    fn shmem_addresses() {
        let Cli::Debug(o) = parse(&args("-attach shmem:javadebug")).unwrap() else { panic!() };
        assert_eq!(o.connect, Connect::AttachShmem("javadebug".into()));
        let Cli::Debug(o) = parse(&args("-listen shmem:my-vm.1")).unwrap() else { panic!() };
        assert_eq!(o.connect, Connect::ListenShmem("my-vm.1".into()));
        let err = parse(&args("-attach shmem:a/b")).unwrap_err();
        assert!(err.0.contains("invalid shared memory transport name"), "{}", err.0);
        assert!(parse(&args("-attach shmem:")).is_err());
    }

    #[test]
    fn dap_subcommand() {
        assert_eq!(parse(&args("dap")).unwrap(), Cli::Dap { listen: None });
        assert_eq!(
            parse(&args("dap --listen 127.0.0.1:4711")).unwrap(),
            Cli::Dap { listen: Some("127.0.0.1:4711".into()) }
        );
        assert!(parse(&args("dap --listen")).is_err());
        assert!(parse(&args("dap --port 3")).is_err());
    }

    #[test]
    fn profile_one_shot() {
        let Cli::Profile(o) = parse(&args("profile --attach h:5 --cpu --duration 2s --interval 1ms --json")).unwrap()
        else {
            panic!()
        };
        assert_eq!((o.attach.as_str(), o.cpu, o.json), ("h:5", true, true));
        assert_eq!((o.duration, o.interval), (Duration::from_secs(2), Duration::from_millis(1)));
        assert!(!o.jvmti_stacks);
        let Cli::Profile(o) = parse(&args("profile --attach h:5 --cpu --jvmti-stacks")).unwrap() else {
            panic!("not a profile")
        };
        assert!(o.jvmti_stacks && o.cpu);
        assert!(parse(&args("profile --attach h:5 --alloc --jvmti-stacks")).is_err());
        assert!(parse(&args("profile --attach h:5")).is_err(), "nothing to profile");
        assert!(parse(&args("profile --cpu")).is_err(), "no address");
        assert!(parse(&args("profile --attach h:5 --cpu --duration soon")).is_err());
        let Cli::Profile(o) =
            parse(&args("profile --attach h:5 --alloc --monitors --alloc-interval 4096 --flame a.svg")).unwrap()
        else {
            panic!()
        };
        assert!(o.alloc && o.monitors && !o.cpu);
        assert_eq!((o.alloc_interval, o.flame.as_deref()), (4096, Some("a.svg")));
        assert!(parse(&args("profile --attach h:5 --monitors --flame a.svg")).is_err(), "nothing to draw");
        assert!(parse(&args("profile --attach h:5 --alloc --alloc-interval lots")).is_err());
    }

    #[test]
    fn commands_split_at_semicolons_outside_quotes() {
        assert_eq!(split_commands("stop at A:1; run ;print \"a;b\"; ;"), ["stop at A:1", "run", "print \"a;b\""]);
        assert_eq!(split_commands("print ';'"), ["print ';'"]);
    }
}
