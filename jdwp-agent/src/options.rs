//! The agent's option string (`-agentpath:libjdwp_agent.so=<options>`), accepted as the JDK 17
//! agent (`-agentlib:jdwp=<options>`) accepts it, plus our own `logfile`/`loglevel`.
//!
//! The grammar is the JDK's: `help` alone, or `name=value` pairs separated by commas, one trailing
//! comma allowed. Names are case-sensitive, values may not be empty, booleans are exactly `y` or
//! `n`, and a repeated option overrides the earlier one (except `transport`, which may appear only
//! once). Numbers are read the way C's `strtol` reads them, so that, like the JDK's agent, we
//! accept `timeout=12abc` (12) and `timeout=abc` (0), adding a warning to [`Options::warnings`].

use std::fmt;
use std::time::Duration;

use jdwp_transports::{AddressError, SocketAddress};

use crate::runtime::JvmtiVersion;

/// The environment variable whose options the JDK's agent appends to its own
/// (see [`with_env_options`]).
pub const ENV_VAR: &str = "_JAVA_JDWP_OPTIONS";

/// The transport named by `transport=`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Transport {
    /// `dt_socket`: TCP.
    Socket,
    /// `dt_shmem`: shared memory (Windows in the JDK; ours is a Linux design, see spec-notes/shmem.md).
    SharedMemory,
    /// Any other name: the transport library `lib<name>.so`, loaded when debugging starts (as the
    /// JDK's agent loads it; see `transport::library`).
    Library(String),
}

impl Transport {
    /// The name as written in options and in the `launch=` command line.
    pub fn name(&self) -> &str {
        match self {
            Transport::Socket => "dt_socket",
            Transport::SharedMemory => "dt_shmem",
            Transport::Library(name) => name,
        }
    }
}

/// How much the agent logs (our option; the JDK's `logflags` is accepted but not interpreted).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum LogLevel {
    Off,
    Error,
    Warn,
    Info,
    Debug,
    Trace,
}

impl LogLevel {
    fn parse(value: &str) -> Option<LogLevel> {
        Some(match value.to_ascii_lowercase().as_str() {
            "off" => LogLevel::Off,
            "error" => LogLevel::Error,
            "warn" => LogLevel::Warn,
            "info" => LogLevel::Info,
            "debug" => LogLevel::Debug,
            "trace" => LogLevel::Trace,
            _ => return None,
        })
    }
}

/// Parsed agent options. Field docs give the option, its values and its default.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// `help`: print the options and do nothing else. When set, no other field is meaningful.
    pub help: bool,
    /// `transport=dt_socket|dt_shmem|<library name>`: required.
    pub transport: Transport,
    /// `address=`: where to listen (`server=y`; none: any free port on the loopback, a generated
    /// name, or the library's choice) or what to attach to (`server=n`, required). Kept as
    /// written; for `dt_socket` its syntax is checked.
    pub address: Option<String>,
    /// `server=y|n` (n): listen for a debugger instead of attaching to one.
    pub server: bool,
    /// `suspend=y|n` (y): suspend the VM at startup until a debugger connects. With `onjcmd=y`
    /// the JDK never suspends at startup.
    pub suspend: bool,
    /// `timeout=<ms>` (none): how long to wait for the debugger to attach, or to attach to it.
    /// `0` and negative values mean no timeout.
    pub timeout: Option<Duration>,
    /// `onthrow=<exception class>` (none): start debugging only when this exception is thrown
    /// (needs `launch`).
    pub onthrow: Option<String>,
    /// `onuncaught=y|n` (n): start debugging only when an exception goes uncaught (needs `launch`).
    pub onuncaught: bool,
    /// `launch=<command>` (none): run this command, with the transport name and address appended,
    /// when debugging starts (at startup, or at `onthrow`/`onuncaught`).
    pub launch: Option<String>,
    /// `onjcmd=y|n` (n): start debugging only when asked with `jcmd <pid> VM.start_java_debugging`
    /// (needs `server=y`, excludes `launch`).
    pub onjcmd: bool,
    /// `allow=<ip[/bits]>[+<ip[/bits]>...]|*` (any): peers a listening agent accepts. Kept as
    /// written; the transport parses it.
    pub allow: Option<String>,
    /// `quiet=y|n` (n): do not print the "Listening for transport ..." line.
    pub quiet: bool,
    /// `mutf8=y|n` (n): send strings to the debugger in modified UTF-8 rather than standard UTF-8.
    pub mutf8: bool,
    /// `includevirtualthreads=y|n` (n): from JDK 19 on; accepted here so that a command line for a
    /// newer JDK still works (JDK 17 has no virtual threads to include).
    pub include_virtual_threads: bool,
    /// `errorexit=y|n` (n): exit the VM when the agent hits an internal error.
    pub errorexit: bool,
    /// `pause=y|n` (n): the JDK's agent-debugging aid (wait for a native debugger at startup).
    pub pause: bool,
    /// `assert=y|n` (n): the JDK's internal agent assertions.
    pub assert: bool,
    /// `coredump=y|n` (n): the JDK's "dump core on a fatal agent error".
    pub coredump: bool,
    /// `logfile=<path>` (none): write the agent's log there (the JDK also has this option).
    pub logfile: Option<String>,
    /// `loglevel=off|error|warn|info|debug|trace` (ours; none: the agent's default).
    pub loglevel: Option<LogLevel>,
    /// `logflags=<int>` (0): the JDK's log categories; accepted, not interpreted.
    pub logflags: u32,
    /// `debugflags=<int>` (0): the JDK's debugging flags; accepted, not interpreted.
    pub debugflags: u32,
    /// Options accepted the way the JDK accepts them but probably not meant so (`timeout=abc`),
    /// or obsolete; for the loader to print or log.
    pub warnings: Vec<String>,
}

impl Default for Options {
    /// The JDK's defaults, with `dt_socket` (which has no default: `parse` requires it).
    fn default() -> Options {
        Options {
            help: false,
            transport: Transport::Socket,
            address: None,
            server: false,
            suspend: true,
            timeout: None,
            onthrow: None,
            onuncaught: false,
            launch: None,
            onjcmd: false,
            allow: None,
            quiet: false,
            mutf8: false,
            include_virtual_threads: false,
            errorexit: false,
            pause: false,
            assert: false,
            coredump: false,
            logfile: None,
            loglevel: None,
            logflags: 0,
            debugflags: 0,
            warnings: Vec::new(),
        }
    }
}

/// Why an option string was refused. Messages follow the JDK's wording, naming the option at fault
/// (the JDK prints them after `ERROR: ` and before `: <the whole option string>`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum OptionError {
    #[error("JDWP option syntax error: empty option (leading comma, or two commas in a row)")]
    EmptyOption,
    #[error("JDWP option syntax error: `{name}` needs a value (`{name}=...`)")]
    MissingValue { name: String },
    #[error("JDWP option syntax error: unknown option `{name}` (in `{name}={value}`)")]
    UnknownOption { name: String, value: String },
    #[error("JDWP option syntax error: `{name}={value}`: the value must be y or n")]
    NotYesOrNo { name: &'static str, value: String },
    #[error("JDWP option syntax error: `{name}={value}`: the value must be {expected}")]
    InvalidValue { name: &'static str, value: String, expected: &'static str },
    #[error("JDWP option syntax error: `help` must be the only option")]
    HelpNotAlone,
    #[error("JDWP no transport specified")]
    NoTransport,
    #[error("JDWP multiple transports are not supported in this release")]
    MultipleTransports,
    #[error("JDWP The {name} option removed, use -XX:OnError")]
    Removed { name: &'static str },
    #[error("JDWP Specify launch=<command line> when using onthrow or onuncaught suboption")]
    LaunchRequired,
    #[error("JDWP Cannot combine onjcmd and launch suboptions")]
    OnjcmdWithLaunch,
    #[error("JDWP Can only use onjcmd with server=y")]
    OnjcmdNeedsServer,
    #[error(
        "JDWP Non-server transport {transport} must have a connection address specified through the 'address=' option"
    )]
    AddressRequired { transport: String },
    #[error("JDWP invalid address `{address}`: {reason}")]
    InvalidAddress { address: String, reason: AddressError },
}

impl OptionError {
    /// What the agent prints before refusing to start, in the JDK's agent's words: `ERROR: ` and
    /// the message, except for a bad address, which the JDK's agent finds when its transport
    /// starts and reports as a transport error (`ERROR: transport error 103: ...`, 103 being
    /// `JDWPTRANSPORT_ERROR_ILLEGAL_ARGUMENT`; OpenJDK's OptionTest looks for that line).
    pub fn startup_message(&self) -> String {
        match self {
            OptionError::InvalidAddress { address, reason } => format!(
                "ERROR: transport error 103: invalid address `{address}`: {reason}\n\
                 ERROR: JDWP Transport dt_socket failed to initialize, TRANSPORT_INIT(510)"
            ),
            other => format!("ERROR: {other}"),
        }
    }

    /// The option at fault, if one is.
    pub fn option(&self) -> Option<&str> {
        match self {
            OptionError::MissingValue { name } | OptionError::UnknownOption { name, .. } => Some(name),
            OptionError::NotYesOrNo { name, .. }
            | OptionError::InvalidValue { name, .. }
            | OptionError::Removed { name } => Some(name),
            OptionError::HelpNotAlone => Some("help"),
            OptionError::NoTransport | OptionError::MultipleTransports => Some("transport"),
            OptionError::LaunchRequired => Some("launch"),
            OptionError::OnjcmdWithLaunch | OptionError::OnjcmdNeedsServer => Some("onjcmd"),
            OptionError::AddressRequired { .. } | OptionError::InvalidAddress { .. } => Some("address"),
            OptionError::EmptyOption => None,
        }
    }
}

impl Options {
    /// Parses an option string (what follows `=` in `-agentpath:...=`; empty if there was none),
    /// as on the oldest JDK the agent supports: see [`Options::parse_on`].
    pub fn parse(options: &str) -> Result<Options, OptionError> {
        Options::parse_on(options, JvmtiVersion::FALLBACK)
    }

    /// [`Options::parse`] for the VM the agent runs in: on a VM without
    /// `VM.start_java_debugging` (JDK 24+, see [`JvmtiVersion::has_jcmd_start`]) `onjcmd` is an
    /// unknown option, as the JDK's agent has it there.
    pub fn parse_on(options: &str, runtime: JvmtiVersion) -> Result<Options, OptionError> {
        if options == "help" {
            return Ok(Options { help: true, ..Options::default() });
        }
        let mut o = Options::default();
        let mut transport = None;
        // One trailing comma is allowed; any other empty item is a syntax error.
        let body = options.strip_suffix(',').unwrap_or(options);
        for item in body.split(',').filter(|_| !body.is_empty()) {
            if item.is_empty() {
                return Err(OptionError::EmptyOption);
            }
            let (name, value) = item.split_once('=').unwrap_or((item, ""));
            match (name, value) {
                ("", _) => return Err(OptionError::EmptyOption),
                ("help", "") => return Err(OptionError::HelpNotAlone),
                (_, "") => return Err(OptionError::MissingValue { name: name.to_owned() }),
                _ => {}
            }
            match name {
                "transport" => {
                    if transport.is_some() {
                        return Err(OptionError::MultipleTransports);
                    }
                    transport = Some(match value {
                        "dt_socket" => Transport::Socket,
                        "dt_shmem" => Transport::SharedMemory,
                        // Whether the library exists is found out when it is loaded, as with the
                        // JDK's agent (which reports it then, not here).
                        _ => Transport::Library(value.to_owned()),
                    });
                }
                "address" => o.address = Some(value.to_owned()),
                "allow" => o.allow = Some(value.to_owned()),
                "timeout" => {
                    let (millis, clean) = c_long(value, 10);
                    if !clean {
                        o.warnings.push(format!("timeout={value} is not a number; taken as {millis}"));
                    }
                    o.timeout = u64::try_from(millis).ok().filter(|&ms| ms > 0).map(Duration::from_millis);
                }
                "launch" => o.launch = Some(value.to_owned()),
                "onthrow" => o.onthrow = Some(value.to_owned()),
                "onuncaught" => o.onuncaught = yes_no("onuncaught", value)?,
                "onjcmd" if runtime.has_jcmd_start() => o.onjcmd = yes_no("onjcmd", value)?,
                "suspend" => o.suspend = yes_no("suspend", value)?,
                "server" => o.server = yes_no("server", value)?,
                "quiet" => o.quiet = yes_no("quiet", value)?,
                "mutf8" => o.mutf8 = yes_no("mutf8", value)?,
                "includevirtualthreads" => o.include_virtual_threads = yes_no("includevirtualthreads", value)?,
                "errorexit" => o.errorexit = yes_no("errorexit", value)?,
                "pause" => o.pause = yes_no("pause", value)?,
                "assert" => o.assert = yes_no("assert", value)?,
                "coredump" => o.coredump = yes_no("coredump", value)?,
                "strict" | "stdalloc" => {
                    let name = if name == "strict" { "strict" } else { "stdalloc" };
                    yes_no(name, value)?;
                    o.warnings.push(format!("{name} is obsolete and ignored"));
                }
                "exitpause" => return Err(OptionError::Removed { name: "exitpause" }),
                "precrash" => return Err(OptionError::Removed { name: "precrash" }),
                "logfile" => o.logfile = Some(value.to_owned()),
                "loglevel" => {
                    o.loglevel = Some(LogLevel::parse(value).ok_or_else(|| OptionError::InvalidValue {
                        name: "loglevel",
                        value: value.to_owned(),
                        expected: "off, error, warn, info, debug or trace",
                    })?)
                }
                "logflags" | "debugflags" => {
                    let (flags, clean) = c_long(value, 0);
                    if !clean {
                        o.warnings.push(format!("{name}={value} is not a number; taken as {flags}"));
                    }
                    // Flag words are 32 bits wide; wider values keep their low bits.
                    let flags = flags as u32;
                    if name == "logflags" { o.logflags = flags } else { o.debugflags = flags }
                }
                _ => return Err(OptionError::UnknownOption { name: name.to_owned(), value: value.to_owned() }),
            }
        }
        o.transport = transport.ok_or(OptionError::NoTransport)?;
        o.check()?;
        Ok(o)
    }

    /// The checks the JDK makes once all options are read.
    fn check(&mut self) -> Result<(), OptionError> {
        if (self.onthrow.is_some() || self.onuncaught) && self.launch.is_none() {
            return Err(OptionError::LaunchRequired);
        }
        if self.onjcmd && self.launch.is_some() {
            return Err(OptionError::OnjcmdWithLaunch);
        }
        if self.onjcmd && !self.server {
            return Err(OptionError::OnjcmdNeedsServer);
        }
        if self.onjcmd {
            // As the JDK: the VM runs until jcmd starts debugging, whatever `suspend` says.
            self.suspend = false;
        }
        if !self.server && self.address.is_none() {
            return Err(OptionError::AddressRequired { transport: self.transport.name().to_owned() });
        }
        if let (Transport::Socket, Some(address)) = (&self.transport, &self.address) {
            SocketAddress::parse(address)
                .map_err(|reason| OptionError::InvalidAddress { address: address.clone(), reason })?;
        }
        if self.allow.is_some() && !self.server {
            self.warnings.push("allow has no effect when attaching (server=n)".to_owned());
        }
        Ok(())
    }
}

fn yes_no(name: &'static str, value: &str) -> Result<bool, OptionError> {
    match value {
        "y" => Ok(true),
        "n" => Ok(false),
        _ => Err(OptionError::NotYesOrNo { name, value: value.to_owned() }),
    }
}

/// C's `strtol(value, NULL, base)` for base 10 or 0 (0: `0x` hexadecimal, leading `0` octal, else
/// decimal), saturating like glibc: the number read from the longest valid prefix after leading
/// white space (0 if none), and whether that prefix was all the rest.
fn c_long(value: &str, base: u32) -> (i64, bool) {
    let trimmed = value.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
    let (negative, rest) = match trimmed.as_bytes().first() {
        Some(b'-') => (true, &trimmed[1..]),
        Some(b'+') => (false, &trimmed[1..]),
        _ => (false, trimmed),
    };
    let (radix, digits) = match base {
        0 if rest.len() > 2 && (rest.starts_with("0x") || rest.starts_with("0X")) => (16, &rest[2..]),
        0 if rest.starts_with('0') => (8, rest),
        0 => (10, rest),
        _ => (base, rest),
    };
    let len = digits.find(|c: char| !c.is_digit(radix)).unwrap_or(digits.len());
    let magnitude = digits[..len]
        .chars()
        .fold(0i128, |acc, c| (acc * i128::from(radix) + i128::from(c.to_digit(radix).unwrap_or(0))).min(1 << 64));
    let signed = if negative { -magnitude } else { magnitude };
    let number = signed.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64;
    (number, len > 0 && len == digits.len())
}

/// The option string the JDK's agent would parse given `_JAVA_JDWP_OPTIONS` (see [`ENV_VAR`]): the
/// command-line options, a comma, then the variable's. (The JDK joins them even when the command
/// line has no options, so that `-agentlib:jdwp` alone fails on the leading comma; we do not.)
pub fn with_env_options(options: &str, env: Option<&str>) -> String {
    match env.filter(|e| !e.is_empty()) {
        Some(env) if !options.is_empty() => format!("{options},{env}"),
        Some(env) => env.to_owned(),
        None => options.to_owned(),
    }
}

/// The text `help` prints.
pub fn help_text() -> String {
    HelpText.to_string()
}

struct HelpText;

impl fmt::Display for HelpText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(
            "\
JDWP agent (Rust), a drop-in for the JDK's -agentlib:jdwp

usage: -agentpath:<path>/libjdwp_agent.so=help
       -agentpath:<path>/libjdwp_agent.so=<name>=<value>[,<name>=<value>...]

option                      what it does                                       default
transport=dt_socket         how to talk to the debugger (required; or dt_shmem -
                            for shared memory, Linux; any other <name> loads
                            the transport library lib<name>.so from the JDK's
                            lib directory or the loader's path, e.g.
                            LD_LIBRARY_PATH)
address=<address>           listen here (server=y) or attach here (server=n);  listen: any free
                            [host:]port, *:port, [ipv6]:port; for dt_shmem a   loopback port
                            name (A-Z a-z 0-9 _ - .); for a library, what it   (dt_shmem: a new name;
                            takes                                              a library: its choice)
server=y|n                  listen for a debugger rather than attach to one    n
suspend=y|n                 hold the VM at startup until a debugger is there   y
timeout=<ms>                give up waiting to attach or be attached after     0 (wait forever)
                            this long
allow=<ip>[/<bits>]+...|*   with server=y, accept only these peers             * (anyone)
launch=<command>            when debugging starts, run <command> <transport>   none
                            <address>
onthrow=<class>             start debugging when this exception is thrown      none
                            (needs launch)
onuncaught=y|n              start debugging at an uncaught exception           n
                            (needs launch)
onjcmd=y|n                  start debugging on `jcmd <pid>                     n
                            VM.start_java_debugging` (needs server=y; JDK 23
                            and older: JDK 24 removed that command)
quiet=y|n                   do not print the address we listen on              n
mutf8=y|n                   send modified UTF-8 rather than standard UTF-8     n
includevirtualthreads=y|n   accepted for newer JDKs' command lines             n
logfile=<path>              write the agent's log to this file                 none
loglevel=<level>            how much to log: off, error, warn, info, debug     -
                            or trace

Accepted for compatibility, without effect: errorexit, pause, assert, coredump, logflags,
debugflags; obsolete: strict, stdalloc.

Examples:
  listen on port 5005 of every interface, without waiting:
    -agentpath:libjdwp_agent.so=transport=dt_socket,server=y,suspend=n,address=*:5005
  attach to a debugger listening on localhost:8000:
    -agentpath:libjdwp_agent.so=transport=dt_socket,address=localhost:8000

Options in the environment variable _JAVA_JDWP_OPTIONS are added after these.
",
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = "transport=dt_socket,server=y";

    fn parse(extra: &str) -> Result<Options, OptionError> {
        Options::parse(&format!("{BASE},{extra}"))
    }

    #[test]
    fn defaults() {
        let o = Options::parse(BASE).unwrap();
        assert_eq!(o, Options { server: true, ..Options::default() });
        assert!(o.suspend && !o.quiet && !o.mutf8 && !o.onuncaught && !o.onjcmd);
        assert_eq!((o.address, o.timeout, o.launch, o.onthrow, o.allow), (None, None, None, None, None));
        assert!(o.warnings.is_empty());
        // Attaching needs an address; with one, server defaults to n.
        let o = Options::parse("transport=dt_socket,address=8000").unwrap();
        assert!(!o.server);
        assert_eq!(o.address.as_deref(), Some("8000"));
    }

    #[test]
    fn the_usual_command_line() {
        let o = Options::parse("transport=dt_socket,server=y,suspend=n,address=5005").unwrap();
        assert_eq!(o.transport, Transport::Socket);
        assert!(o.server && !o.suspend);
        assert_eq!(o.address.as_deref(), Some("5005"));
    }

    #[test]
    fn help_alone() {
        assert!(Options::parse("help").unwrap().help);
        assert_eq!(parse("help"), Err(OptionError::HelpNotAlone));
        assert_eq!(Options::parse("help,transport=dt_socket"), Err(OptionError::HelpNotAlone));
        assert_eq!(
            Options::parse("help=y"),
            Err(OptionError::UnknownOption { name: "help".into(), value: "y".into() })
        );
        let text = help_text();
        for option in [
            "transport",
            "address",
            "server",
            "suspend",
            "timeout",
            "allow",
            "launch",
            "onthrow",
            "onuncaught",
            "onjcmd",
            "quiet",
            "mutf8",
            "includevirtualthreads",
            "logfile",
            "loglevel",
            "strict",
            "stdalloc",
        ] {
            assert!(text.contains(option), "{option} missing from help");
        }
    }

    #[test]
    fn onjcmd_is_unknown_where_jcmd_cannot_start_debugging() {
        const JDK_25: JvmtiVersion = JvmtiVersion { major: 25, minor: 0, micro: 0 };
        for value in ["y", "n"] {
            let text = format!("transport=dt_socket,server=y,onjcmd={value}");
            assert!(Options::parse_on(&text, JvmtiVersion::FALLBACK).is_ok());
            assert_eq!(
                Options::parse_on(&text, JDK_25),
                Err(OptionError::UnknownOption { name: "onjcmd".into(), value: value.into() })
            );
        }
        // Before the checks that name onjcmd, as with JDK 25's agent.
        assert!(matches!(
            Options::parse_on("transport=dt_socket,server=n,onjcmd=y,launch=x", JDK_25),
            Err(OptionError::UnknownOption { .. })
        ));
    }

    #[test]
    fn onjcmd_never_suspends_at_startup() {
        let o = Options::parse("transport=dt_socket,server=y,suspend=y,onjcmd=y").unwrap();
        assert!(o.onjcmd && !o.suspend);
    }

    #[test]
    fn every_boolean_option() {
        type Get = fn(&Options) -> bool;
        let cases: [(&str, Get); 11] = [
            ("suspend", |o| o.suspend),
            ("server", |o| o.server),
            ("quiet", |o| o.quiet),
            ("mutf8", |o| o.mutf8),
            ("onuncaught", |o| o.onuncaught),
            ("includevirtualthreads", |o| o.include_virtual_threads),
            ("errorexit", |o| o.errorexit),
            ("pause", |o| o.pause),
            ("assert", |o| o.assert),
            ("coredump", |o| o.coredump),
            ("onjcmd", |o| o.onjcmd),
        ];
        for (name, get) in cases {
            // onuncaught needs launch; server must stay y for onjcmd.
            let extra = if name == "onuncaught" { ",launch=echo" } else { "" };
            let y = Options::parse(&format!("transport=dt_socket,address=1,server=y,{name}=y{extra}")).unwrap();
            assert!(get(&y), "{name}=y");
            if name != "server" {
                let n = Options::parse(&format!("transport=dt_socket,server=y,{name}=n{extra}")).unwrap();
                assert!(!get(&n), "{name}=n");
            }
            for bad in ["Y", "yes", "1", "true", " y"] {
                let err = Options::parse(&format!("{BASE},{name}={bad}")).unwrap_err();
                assert!(matches!(&err, OptionError::NotYesOrNo { value, .. } if value == bad), "{name}={bad}: {err:?}");
                assert_eq!(err.option(), Some(name));
            }
        }
    }

    #[test]
    fn strings_are_kept_as_written() {
        let o = parse("launch=/usr/bin/jdb -attach,onthrow=java.io.IOException").unwrap();
        assert_eq!(o.launch.as_deref(), Some("/usr/bin/jdb -attach"));
        assert_eq!(o.onthrow.as_deref(), Some("java.io.IOException"));
        let o = parse("allow=10.0.0.0/8+127.0.0.1,logfile=/tmp/agent log.txt,loglevel=DEBUG").unwrap();
        assert_eq!(o.allow.as_deref(), Some("10.0.0.0/8+127.0.0.1"));
        assert_eq!(o.logfile.as_deref(), Some("/tmp/agent log.txt"));
        assert_eq!(o.loglevel, Some(LogLevel::Debug));
        assert_eq!(
            parse("loglevel=loud"),
            Err(OptionError::InvalidValue {
                name: "loglevel",
                value: "loud".into(),
                expected: "off, error, warn, info, debug or trace"
            })
        );
    }

    #[test]
    fn address_forms() {
        for address in ["5005", ":5005", "*:5005", "localhost:5005", "127.0.0.1:0", "[::1]:5005", "::1:5005", "0"] {
            let o = parse(&format!("address={address}")).unwrap();
            assert_eq!(o.address.as_deref(), Some(address));
        }
        for address in ["localhost", "host:", "host:port", "a=b", "*:70000", "[nothost]:1"] {
            let err = parse(&format!("address={address}")).unwrap_err();
            assert!(
                matches!(&err, OptionError::InvalidAddress { address: a, .. } if a == address),
                "{address}: {err:?}"
            );
            assert_eq!(err.option(), Some("address"));
        }
        // dt_shmem names are not socket addresses.
        let o = Options::parse("transport=dt_shmem,address=javadebug").unwrap();
        assert_eq!((o.transport, o.address.as_deref()), (Transport::SharedMemory, Some("javadebug")));
    }

    #[test]
    fn timeouts_parse_like_the_jdk() {
        assert_eq!(parse("timeout=2500").unwrap().timeout, Some(Duration::from_millis(2500)));
        assert_eq!(parse("timeout=0").unwrap().timeout, None);
        assert_eq!(parse("timeout=-5").unwrap().timeout, None);
        assert_eq!(parse("timeout=+7").unwrap().timeout, Some(Duration::from_millis(7)));
        // The JDK reads a number prefix and ignores the rest; we warn.
        let o = parse("timeout=12abc").unwrap();
        assert_eq!(o.timeout, Some(Duration::from_millis(12)));
        assert_eq!(o.warnings.len(), 1);
        assert!(o.warnings[0].contains("timeout=12abc"));
        let o = parse("timeout=abc").unwrap();
        assert_eq!(o.timeout, None);
        assert_eq!(o.warnings.len(), 1);
        assert_eq!(parse("timeout=0x10").unwrap().timeout, None, "decimal only: 0, then junk");
        assert_eq!(
            parse("timeout=99999999999999999999999").unwrap().timeout,
            Some(Duration::from_millis(i64::MAX as u64))
        );
        assert_eq!(parse("timeout="), Err(OptionError::MissingValue { name: "timeout".into() }));
    }

    #[test]
    fn flags_parse_like_strtol() {
        let o = parse("logflags=0x10,debugflags=010").unwrap();
        assert_eq!((o.logflags, o.debugflags), (16, 8));
        assert!(o.warnings.is_empty());
        let o = parse("logflags=255,debugflags=junk").unwrap();
        assert_eq!((o.logflags, o.debugflags), (255, 0));
        assert_eq!(o.warnings.len(), 1);
        assert_eq!(c_long("  -42", 10), (-42, true));
        assert_eq!(c_long("0x", 0), (0, false));
        assert_eq!(c_long("", 10), (0, false));
        assert_eq!(c_long("-99999999999999999999", 10), (i64::MIN, true));
    }

    #[test]
    fn obsolete_and_removed_options() {
        let o = parse("strict=y,stdalloc=n").unwrap();
        assert_eq!(o.warnings, ["strict is obsolete and ignored", "stdalloc is obsolete and ignored"]);
        assert!(matches!(parse("strict=x"), Err(OptionError::NotYesOrNo { name: "strict", .. })));
        for name in ["exitpause", "precrash"] {
            let err = parse(&format!("{name}=y")).unwrap_err();
            assert_eq!(err.option(), Some(name));
            assert_eq!(err.to_string(), format!("JDWP The {name} option removed, use -XX:OnError"));
        }
    }

    #[test]
    fn syntax_errors() {
        let unknown = parse("bogus=1").unwrap_err();
        assert_eq!(unknown, OptionError::UnknownOption { name: "bogus".into(), value: "1".into() });
        assert_eq!(unknown.option(), Some("bogus"));
        assert_eq!(unknown.to_string(), "JDWP option syntax error: unknown option `bogus` (in `bogus=1`)");
        // Names are case-sensitive and not trimmed.
        assert!(matches!(parse("Suspend=n"), Err(OptionError::UnknownOption { .. })));
        assert!(matches!(parse("suspend =n"), Err(OptionError::UnknownOption { .. })));
        assert_eq!(parse("suspend"), Err(OptionError::MissingValue { name: "suspend".into() }));
        assert_eq!(parse("suspend="), Err(OptionError::MissingValue { name: "suspend".into() }));
        assert_eq!(parse("=y"), Err(OptionError::EmptyOption));
        assert_eq!(parse(",quiet=y"), Err(OptionError::EmptyOption));
        assert_eq!(Options::parse(",transport=dt_socket,server=y"), Err(OptionError::EmptyOption));
        assert_eq!(Options::parse("transport=dt_socket,server=y,,"), Err(OptionError::EmptyOption));
        // A comma inside a value splits it: the rest is an option without a value.
        assert_eq!(parse("address=a,b"), Err(OptionError::MissingValue { name: "b".into() }));
        // One trailing comma is fine.
        assert!(Options::parse("transport=dt_socket,server=y,").is_ok());
    }

    #[test]
    fn transport_rules() {
        assert_eq!(Options::parse(""), Err(OptionError::NoTransport));
        assert_eq!(Options::parse("server=y,suspend=n"), Err(OptionError::NoTransport));
        assert_eq!(Options::parse("server=y,suspend=n").unwrap_err().to_string(), "JDWP no transport specified");
        assert_eq!(parse("transport=dt_socket"), Err(OptionError::MultipleTransports));
        // Any other name is a transport library, looked for when debugging starts.
        let o = Options::parse("transport=dt_foo,server=y").unwrap();
        assert_eq!((&o.transport, o.transport.name()), (&Transport::Library("dt_foo".into()), "dt_foo"));
        // Its addresses are the library's business.
        let o = Options::parse("transport=private_dt_socket,address=localhost:abc").unwrap();
        assert_eq!(o.address.as_deref(), Some("localhost:abc"));
        assert_eq!(
            Options::parse("transport=dt_foo,server=n"),
            Err(OptionError::AddressRequired { transport: "dt_foo".into() })
        );
        assert_eq!(Options::parse("transport=,server=y"), Err(OptionError::MissingValue { name: "transport".into() }));
        assert_eq!(Options::parse("transport=dt_shmem,server=y").unwrap().transport, Transport::SharedMemory);
    }

    #[test]
    fn cross_option_rules() {
        assert_eq!(parse("onthrow=java.lang.Error"), Err(OptionError::LaunchRequired));
        assert_eq!(parse("onuncaught=y"), Err(OptionError::LaunchRequired));
        assert!(parse("onuncaught=n").is_ok());
        assert_eq!(parse("onjcmd=y,launch=echo"), Err(OptionError::OnjcmdWithLaunch));
        assert_eq!(
            Options::parse("transport=dt_socket,address=127.0.0.1:1,onjcmd=y"),
            Err(OptionError::OnjcmdNeedsServer)
        );
        let err = Options::parse("transport=dt_socket,server=n").unwrap_err();
        assert_eq!(err, OptionError::AddressRequired { transport: "dt_socket".into() });
        assert_eq!(
            err.to_string(),
            "JDWP Non-server transport dt_socket must have a connection address specified through the 'address=' option"
        );
        let o = Options::parse("transport=dt_socket,address=1,allow=*").unwrap();
        assert_eq!(o.warnings, ["allow has no effect when attaching (server=n)"]);
    }

    #[test]
    fn startup_messages_use_the_jdk_agents_words() {
        // OpenJDK's NoLaunchOptionTest and OptionTest look for these lines.
        assert_eq!(
            parse("onthrow=java.lang.Error").unwrap_err().startup_message(),
            "ERROR: JDWP Specify launch=<command line> when using onthrow or onuncaught suboption"
        );
        for bad in [":", "localhost:", "localhost:abc", "localhost:65536", "localhost:65F"] {
            let err = Options::parse(&format!("transport=dt_socket,server=y,suspend=n,address={bad}")).unwrap_err();
            let message = err.startup_message();
            assert!(message.starts_with("ERROR: transport error 103: "), "{bad}: {message}");
            assert!(message.contains(bad), "{bad}: {message}");
        }
    }

    #[test]
    fn later_options_override_earlier_ones() {
        let o = parse("address=5005,address=6006,suspend=y,suspend=n").unwrap();
        assert_eq!(o.address.as_deref(), Some("6006"));
        assert!(!o.suspend);
    }

    #[test]
    fn environment_options_are_appended() {
        assert_eq!(with_env_options("transport=dt_socket", Some("suspend=n")), "transport=dt_socket,suspend=n");
        assert_eq!(with_env_options("", Some("transport=dt_socket")), "transport=dt_socket");
        assert_eq!(with_env_options("transport=dt_socket", Some("")), "transport=dt_socket");
        assert_eq!(with_env_options("transport=dt_socket", None), "transport=dt_socket");
    }
}
