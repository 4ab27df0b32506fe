//! jdb-rs at a terminal (a pseudo-terminal): tab completion of commands, classes, methods and
//! locals, colors, line editing history within a session, and history kept across sessions.

mod common;

use std::fs::File;
use std::io::Write;
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;

use common::{Collected, fixtures, jdb_rs, line_of, sources};

/// jdb-rs on the slave side of a new pseudo-terminal; we hold the master.
struct Pty {
    child: Child,
    master: File,
    out: Arc<Collected>,
}

impl Pty {
    fn spawn(args: &[String], history: &std::path::Path) -> Pty {
        let (mut master_fd, mut slave_fd) = (0, 0);
        let size = libc::winsize { ws_row: 40, ws_col: 160, ws_xpixel: 0, ws_ypixel: 0 };
        // SAFETY: openpty fills in two descriptors we then own; the winsize pointer is valid.
        let r =
            unsafe { libc::openpty(&mut master_fd, &mut slave_fd, std::ptr::null_mut(), std::ptr::null_mut(), &size) };
        assert_eq!(r, 0, "openpty: {}", std::io::Error::last_os_error());
        // SAFETY: both descriptors are fresh and owned by us from here on.
        let (master, slave) = unsafe { (OwnedFd::from_raw_fd(master_fd), OwnedFd::from_raw_fd(slave_fd)) };
        let mut cmd = Command::new(jdb_rs());
        cmd.args(common::with_agent_args(args))
            .env("JDB_RS_HISTORY", history)
            .env("TERM", "xterm")
            .env_remove("NO_COLOR")
            .stdin(Stdio::from(slave.try_clone().unwrap()))
            .stdout(Stdio::from(slave.try_clone().unwrap()))
            .stderr(Stdio::from(slave));
        // SAFETY: between fork and exec we only call async-signal-safe setsid and ioctl.
        unsafe {
            cmd.pre_exec(|| {
                if libc::setsid() < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                if libc::ioctl(0, libc::TIOCSCTTY as _, 0) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = cmd.spawn().expect("start jdb-rs on a pty");
        let master = File::from(master);
        let out = Collected::start(master.try_clone().unwrap());
        Pty { child, master, out }
    }

    fn send(&mut self, keys: &str) {
        self.master.write_all(keys.as_bytes()).unwrap();
        self.master.flush().unwrap();
    }

    /// Waits until the screen text (colors removed) after `from` contains `needle`.
    fn expect_from(&self, from: usize, needle: &str) -> String {
        self.out.wait_from(from, needle, |t| jdb_rs::out::strip_ansi(t).contains(needle))
    }

    fn mark(&self) -> usize {
        self.out.len()
    }
}

impl Drop for Pty {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn completion_colors_and_history() {
    let dir = std::env::temp_dir().join(format!("jdb-rs-pty-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let history = dir.join("history");
    let _ = std::fs::remove_file(&history);
    let tick = line_of("Demo.java", "@tick-first");
    let args = vec!["-classpath".into(), fixtures(), "-sourcepath".into(), sources(), "Demo".into()];

    let mut t = Pty::spawn(&args, &history);
    t.expect_from(0, "> ");
    let m = t.mark();
    t.send(&format!("stop at Demo:{tick}\r"));
    t.expect_from(m, "It will be set after the class is loaded.");
    let m = t.mark();
    t.send("run\r");
    t.expect_from(m, "main[1] ");
    let raw = t.out.text();
    assert!(raw.contains("\x1b[1;33mBreakpoint hit: \x1b[0m"), "event headers are colored at a terminal:\n{raw:?}");
    assert!(jdb_rs::out::strip_ansi(&raw).contains(&format!("{tick}    ")), "the source line is shown");

    // A command name: `loca` + Tab completes to `locals`.
    let m = t.mark();
    t.send("loca\t\r");
    t.expect_from(m, "Method arguments:");
    // A class name and a method name.
    let m = t.mark();
    t.send("class De\t\r");
    t.expect_from(m, "Class: Demo");
    let m = t.mark();
    t.send("stop in Demo.squ\t\r");
    t.expect_from(m, "Set breakpoint Demo.square");
    // A field of `this`, offered with the locals: `print cou` + Tab → `print counter`.
    let m = t.mark();
    t.send("print cou\t\r");
    t.expect_from(m, " counter = 0");
    // History: Up three times is `class Demo` again.
    let m = t.mark();
    t.send("\x1b[A\x1b[A\x1b[A\r");
    t.expect_from(m, "Class: Demo");
    t.send("exit\r");
    let status = t.child.wait().unwrap();
    assert!(status.success(), "exit status {status:?}");
    drop(t);

    let saved = std::fs::read_to_string(&history).expect("history saved");
    for line in ["run", "locals", "class Demo", "stop in Demo.square", "print counter"] {
        assert!(saved.lines().any(|l| l == line), "history lacks {line:?}:\n{saved}");
    }

    // A new session remembers: Up recalls `exit`, then `class Demo`.
    let mut t = Pty::spawn(&args, &history);
    t.expect_from(0, "> ");
    let m = t.mark();
    t.send("\x1b[A\x1b[A\r");
    t.expect_from(m, "Command 'class' is not valid until the VM is started with the 'run' command");
    t.send("exit\r");
    let status = t.child.wait().unwrap();
    assert!(!status.success(), "the failed command makes the exit status 1: {status:?}");
    let _ = std::fs::remove_dir_all(&dir);
}
