//! What the examples share: choosing the target VM from the command line (`--attach host:port`
//! or `--launch MainClass [--classpath CP] [--agentpath LIB] [-- ARGS...]`), running it to a
//! breakpoint, and reporting errors as one line with an exit code instead of a panic.
#![allow(dead_code)]

use std::collections::HashMap;
use std::process::ExitCode;
use std::time::Duration;

use jdi::event::EventExt;
use jdi::{Event, EventQueue, EventRequest, EventSet, LaunchOptions, Process, SuspendPolicy, VirtualMachine};

/// Exit code for bad command lines.
pub const USAGE: u8 = 2;

/// How long connecting, and waiting for an awaited event, may take.
pub const TIMEOUT: Duration = Duration::from_secs(30);

/// A failure: the one-line message and the exit code.
pub struct Failure {
    pub message: String,
    pub code: u8,
}

impl Failure {
    pub fn usage(message: impl Into<String>) -> Failure {
        Failure { message: message.into(), code: USAGE }
    }
}

impl From<jdi::JdiError> for Failure {
    fn from(e: jdi::JdiError) -> Failure {
        Failure { message: e.to_string(), code: 1 }
    }
}

/// Ends the program: prints a failure as one line on stderr (multi-line details joined).
pub fn finish(program: &str, result: Result<ExitCode, Failure>) -> ExitCode {
    match result {
        Ok(code) => code,
        Err(f) => {
            let line = f.message.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join(" | ");
            eprintln!("{program}: {line}");
            ExitCode::from(f.code)
        }
    }
}

/// The parsed command line: `--flag value` pairs, bare switches and the arguments after `--`.
pub struct Args {
    values: HashMap<&'static str, String>,
    switches: Vec<&'static str>,
    /// Everything after `--` (the launched program's arguments).
    pub rest: Vec<String>,
}

/// Flags every example takes (each followed by a value).
pub const TARGET_FLAGS: &[&str] = &["--attach", "--launch", "--classpath", "--agentpath", "--break"];

impl Args {
    /// Parses `argv` (without the program name); `with_value` and `switches` list the flags.
    pub fn parse(
        argv: impl IntoIterator<Item = String>,
        with_value: &[&'static str],
        switches: &[&'static str],
    ) -> Result<Args, Failure> {
        let mut args = Args { values: HashMap::new(), switches: Vec::new(), rest: Vec::new() };
        let mut argv = argv.into_iter();
        while let Some(arg) = argv.next() {
            if arg == "--" {
                args.rest.extend(argv);
                break;
            }
            let (name, inline) = match arg.split_once('=') {
                Some((name, value)) if name.starts_with("--") => (name.to_string(), Some(value.to_string())),
                _ => (arg.clone(), None),
            };
            if let Some(&flag) = with_value.iter().chain(TARGET_FLAGS).find(|&&f| f == name) {
                let value = match inline {
                    Some(v) => v,
                    None => argv.next().ok_or_else(|| Failure::usage(format!("{flag} needs a value")))?,
                };
                if args.values.insert(flag, value).is_some() {
                    return Err(Failure::usage(format!("{flag} given twice")));
                }
            } else if let Some(&switch) = switches.iter().find(|&&s| s == name && inline.is_none()) {
                args.switches.push(switch);
            } else if arg.starts_with('-') {
                return Err(Failure::usage(format!("unknown option {arg} (try --help)")));
            } else {
                return Err(Failure::usage(format!("unexpected argument {arg:?} (program arguments go after --)")));
            }
        }
        Ok(args)
    }

    pub fn value(&self, flag: &str) -> Option<&str> {
        self.values.get(flag).map(String::as_str)
    }

    pub fn has(&self, switch: &str) -> bool {
        self.switches.contains(&switch)
    }

    /// A numeric flag's value, or `default`.
    pub fn number<T: std::str::FromStr>(&self, flag: &str, default: T) -> Result<T, Failure> {
        match self.value(flag) {
            None => Ok(default),
            Some(v) => v.parse().map_err(|_| Failure::usage(format!("{flag}: not a number: {v:?}"))),
        }
    }
}

/// The target VM, as the command line asked for it.
pub enum Target {
    Attach(String),
    Launch(Box<LaunchOptions>),
}

impl Target {
    pub fn from_args(args: &Args) -> Result<Target, Failure> {
        match (args.value("--attach"), args.value("--launch")) {
            (Some(_), Some(_)) => Err(Failure::usage("give either --attach or --launch, not both")),
            (None, None) => Err(Failure::usage("say which VM: --attach host:port or --launch MainClass (try --help)")),
            (Some(address), None) => {
                for flag in ["--classpath", "--agentpath"] {
                    if args.value(flag).is_some() {
                        return Err(Failure::usage(format!("{flag} only goes with --launch")));
                    }
                }
                if !args.rest.is_empty() {
                    return Err(Failure::usage("program arguments only go with --launch"));
                }
                Ok(Target::Attach(address.to_string()))
            }
            (None, Some(main)) => {
                let mut opts = LaunchOptions::new(main).args(args.rest.iter().cloned()).timeout(TIMEOUT);
                if let Some(cp) = args.value("--classpath") {
                    opts = opts.classpath(cp);
                }
                if let Some(lib) = args.value("--agentpath") {
                    opts = opts.agent_path(lib);
                }
                Ok(Target::Launch(Box::new(opts)))
            }
        }
    }

    /// The launched main class, if launching.
    pub fn main_class(&self) -> Option<&str> {
        match self {
            Target::Launch(opts) => Some(&opts.main_class),
            Target::Attach(_) => None,
        }
    }
}

/// A connected VM with its event queue. A launched VM is suspended at its start (its start
/// event consumed) and forwards its output to ours.
pub struct Session {
    pub vm: VirtualMachine,
    pub events: EventQueue,
    pub process: Option<Process>,
}

pub async fn connect(target: &Target) -> Result<Session, Failure> {
    match target {
        Target::Attach(address) => {
            let vm = jdi::attach(address, Some(TIMEOUT)).await?;
            let events = vm.event_queue().ok_or_else(|| Failure::usage("the event queue is taken"))?;
            Ok(Session { vm, events, process: None })
        }
        Target::Launch(opts) => {
            let launched = jdi::launch(opts).await?;
            let (mut out, mut err) = (launched.stdout, launched.stderr);
            tokio::spawn(async move { tokio::io::copy(&mut out, &mut tokio::io::stdout()).await });
            tokio::spawn(async move { tokio::io::copy(&mut err, &mut tokio::io::stderr()).await });
            let vm = launched.vm;
            let mut events = vm.event_queue().ok_or_else(|| Failure::usage("the event queue is taken"))?;
            events.wait_for(TIMEOUT, |e| matches!(e, Event::VmStart { .. })).await?;
            Ok(Session { vm, events, process: Some(launched.process) })
        }
    }
}

/// Parses `Class:line`.
pub fn parse_break(spec: &str) -> Result<(String, i32), Failure> {
    let bad = || Failure::usage(format!("--break wants Class:line, not {spec:?}"));
    let (class, line) = spec.rsplit_once(':').ok_or_else(bad)?;
    let line: i32 = line.parse().map_err(|_| bad())?;
    if class.is_empty() || line <= 0 {
        return Err(bad());
    }
    Ok((class.to_string(), line))
}

impl Session {
    /// Resumes the VM until a thread reaches `class:line` (loading the class first if needed)
    /// and returns that event set, with every thread suspended.
    pub async fn run_to_line(&mut self, class: &str, line: i32) -> Result<EventSet, Failure> {
        let ty = match self.vm.classes_by_name(class).await?.into_iter().next() {
            Some(ty) => ty,
            None => {
                let req = self.vm.enable_request(&EventRequest::class_prepare(class)).await?;
                self.vm.resume().await?;
                let set =
                    self.wait_for(|e| matches!(e, Event::ClassPrepare { .. }) && e.request() == Some(req)).await?;
                self.vm.disable_request(req).await?;
                let Some(Event::ClassPrepare { ref_type_tag, type_id, .. }) =
                    set.events.iter().find(|e| e.request() == Some(req)).cloned()
                else {
                    unreachable!("wait_for returned a set with the class prepare event")
                };
                self.vm.reference_type_of_kind(ref_type_tag, type_id).await?
            }
        };
        let location = *ty
            .locations_of_line(line)
            .await?
            .first()
            .ok_or_else(|| Failure::usage(format!("{class}:{line} has no code")))?;
        let req = self.vm.enable_request(&EventRequest::breakpoint(location).suspend(SuspendPolicy::All)).await?;
        self.vm.resume().await?;
        let set = self.wait_for(|e| e.request() == Some(req)).await?;
        self.vm.disable_request(req).await?;
        Ok(set)
    }

    /// Waits for an event that `pred` accepts, resuming the sets in between; fails if the VM
    /// dies first.
    async fn wait_for(&mut self, mut pred: impl FnMut(&Event) -> bool) -> Result<EventSet, Failure> {
        let set = self.events.wait_for(TIMEOUT, |e| pred(e) || matches!(e, Event::VmDeath { .. })).await?;
        if set.events.iter().any(&mut pred) {
            Ok(set)
        } else {
            Err(Failure { message: "the VM exited before getting there".into(), code: 1 })
        }
    }
}
