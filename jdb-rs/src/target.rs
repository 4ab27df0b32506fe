//! Where the debuggee comes from: how to reach its VM ([`Connect`]) and, when jdb-rs launches
//! it, what to launch ([`LaunchSpec`]). The command line fills them in; `run MAIN ARGS` may
//! name the main class later.

use std::path::PathBuf;

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

/// What to launch at `run`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LaunchSpec {
    pub main: Option<String>,
    pub args: Vec<String>,
    pub classpath: Option<String>,
    pub jvm_options: Vec<String>,
    pub agent: Option<PathBuf>,
}

/// How a session gets its VM.
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    pub connect: Connect,
    /// Used when `connect` is [`Connect::Launch`] (its main class and arguments are here).
    pub launch: LaunchSpec,
}

impl Target {
    /// A target for `connect`; a launch takes its main class and arguments from it.
    pub fn new(
        connect: Connect,
        classpath: Option<String>,
        jvm_options: Vec<String>,
        agent: Option<PathBuf>,
    ) -> Target {
        let (main, args) = match &connect {
            Connect::Launch { main, args } => (main.clone(), args.clone()),
            _ => (None, Vec::new()),
        };
        Target { connect, launch: LaunchSpec { main, args, classpath, jvm_options, agent } }
    }

    /// Whether jdb-rs launches the VM (rather than attaching or listening).
    pub fn launches(&self) -> bool {
        matches!(self.connect, Connect::Launch { .. })
    }

    /// `run [MAIN ARGS]`: takes the main class and arguments when given; returns the command
    /// line to show (`Demo a b`), or jdb's message when there is no main class.
    pub fn run_line(&mut self, args: &str) -> Result<String, &'static str> {
        if !args.is_empty() {
            let mut words = args.split_whitespace().map(String::from);
            self.launch.main = words.next();
            self.launch.args = words.collect();
        }
        let main = self.launch.main.as_deref().ok_or("Main class and arguments must be specified")?;
        Ok(std::iter::once(main).chain(self.launch.args.iter().map(String::as_str)).collect::<Vec<_>>().join(" "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_launch_takes_its_main_class_from_the_command_line_or_from_run() {
        let mut t = Target::new(Connect::Launch { main: None, args: Vec::new() }, None, Vec::new(), None);
        assert!(t.launches());
        assert_eq!(t.run_line(""), Err("Main class and arguments must be specified"));
        assert_eq!(t.run_line("Demo a  b").as_deref(), Ok("Demo a b"));
        assert_eq!(t.run_line("").as_deref(), Ok("Demo a b"), "run again keeps them");

        let launch = Connect::Launch { main: Some("Main".into()), args: vec!["x".into()] };
        let mut t = Target::new(launch, Some("cp".into()), vec!["-Xmx1g".into()], None);
        assert_eq!(t.run_line("").as_deref(), Ok("Main x"));
        assert_eq!(t.launch.classpath.as_deref(), Some("cp"));

        let t = Target::new(Connect::Attach("8000".into()), None, Vec::new(), None);
        assert!(!t.launches() && t.launch.main.is_none());
    }
}
