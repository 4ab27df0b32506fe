//! jdb-rs: a jdb-compatible Java debugger (REPL, scripts, `--json`, exit codes).
//!
//! Status: not built yet; the binary says so and exits with status 2 so no script mistakes it for a
//! working debugger.

fn main() {
    eprintln!("jdb-rs: not implemented yet (see the README's status section)");
    std::process::exit(2);
}
