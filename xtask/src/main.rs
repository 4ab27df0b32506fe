//! Project commands, run as `cargo xtask <command>` (alias in `.cargo/config.toml`).
//!
//! * `conformance`: runs the JDK's own JDWP/JDI/jdb test suites (jtreg) against a JDK whose
//!   `lib/libjdwp.so` is our agent, and compares the failures with `conformance/expected-failures/`.
//!   See `conformance/README.md`.

mod conformance;
mod process;

use std::process::ExitCode;

const USAGE: &str = "\
usage: cargo xtask <command> [options]

commands:
  conformance   run the JDK's JDWP conformance tests (jtreg) against our agent
                (`cargo xtask conformance --help` for options)
  help          this text";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((command, rest)) = args.split_first() else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    match command.as_str() {
        "conformance" => match conformance::Options::parse(rest) {
            Ok(Some(options)) => match conformance::run(&options) {
                Ok(outcome) => outcome.exit_code(),
                Err(e) => {
                    eprintln!("xtask conformance: error: {e}");
                    ExitCode::from(2)
                }
            },
            Ok(None) => {
                println!("{}", conformance::USAGE);
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("xtask conformance: {e}\n\n{}", conformance::USAGE);
                ExitCode::from(2)
            }
        },
        "help" | "--help" | "-h" => {
            println!("{USAGE}");
            ExitCode::SUCCESS
        }
        other => {
            eprintln!("unknown command {other:?}\n\n{USAGE}");
            ExitCode::from(2)
        }
    }
}
