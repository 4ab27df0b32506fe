//! The command line: jdb's option names plus jdb-rs's own (`--json`, `-c`, `--script`,
//! `--agent`, `--sample`, `--timeout`) and the one-shot `deadlocks` subcommand.

use std::path::PathBuf;
use std::time::Duration;

/// How to get a VM.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Connect {
    /// Launch `main` (with `args`) at `run`, or at once with `-launch`. `main` may be given later
    /// with `run MAIN ARGS`.
    Launch { main: Option<String>, args: Vec<String> },
    /// Attach to an agent listening at `[host:]port`.
    Attach(String),
    /// Listen at `[host:]port` (`-listenany`: port 0) for an agent to connect.
    Listen(String),
    /// `-attach shmem:NAME`: attach over shared memory (`dt_shmem`) to an agent listening as NAME.
    AttachShmem(String),
    /// `-listen shmem:NAME`: wait over shared memory for an agent started with `server=n`.
    ListenShmem(String),
}

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
    /// Our agent library instead of the JDK's (`--agent PATH`).
    pub agent: Option<PathBuf>,
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
}

impl Default for Options {
    fn default() -> Self {
        Options {
            connect: Connect::Launch { main: None, args: Vec::new() },
            classpath: None,
            sourcepath: None,
            jvm_options: Vec::new(),
            agent: None,
            launch_now: false,
            commands: None,
            script: None,
            json: false,
            no_color: false,
            timeout: None,
            sample: false,
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
    --agent <path>    launch with this JDWP agent library instead of the JDK's
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
            "-tclient" | "-tserver" | "-trackallthreads" => {}
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
    Ok(Cli::Debug(Box::new(o)))
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
    fn commands_split_at_semicolons_outside_quotes() {
        assert_eq!(split_commands("stop at A:1; run ;print \"a;b\"; ;"), ["stop at A:1", "run", "print \"a;b\""]);
        assert_eq!(split_commands("print ';'"), ["print ';'"]);
    }
}
