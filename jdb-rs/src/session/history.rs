//! What a typed line runs: `!!` repeats the last line (with what follows appended), an empty
//! line repeats the last repeatable command when `repeat on` (GDB style, as jdb), anything else
//! runs as typed and becomes the last line.

/// Commands that `repeat on` repeats on an empty line (jdb's `REPEATABLE`).
const REPEATABLE: &[&str] = &["up", "down", "step", "stepi", "next", "cont", "list", "pop", "reenter"];

/// The last line and whether empty lines repeat it.
#[derive(Default)]
pub struct History {
    last: Option<String>,
    repeat: bool,
}

/// What to do with a typed line.
#[derive(Debug, PartialEq, Eq)]
pub enum Next {
    /// Run `line`; `echo`: show it first (it was expanded from `!!`).
    Run { line: String, echo: bool },
    /// Nothing to run (an empty line).
    Nothing,
    /// `!!` with no previous line.
    NoPrevious,
}

impl History {
    /// `repeat on|off`.
    pub fn set_repeat(&mut self, on: bool) {
        self.repeat = on;
    }

    pub fn repeat(&self) -> bool {
        self.repeat
    }

    /// Decides what `typed` runs, remembering it as the last line when it is one.
    pub fn next(&mut self, typed: &str) -> Next {
        let mut line = typed.trim_end_matches(['\n', '\r']).to_string();
        let mut echo = false;
        if line.trim_start().starts_with("!!") {
            let Some(last) = &self.last else { return Next::NoPrevious };
            line = format!("{last}{}", &line.trim_start()[2..]);
            echo = true;
        }
        if line.trim().is_empty() {
            if self.repeat
                && let Some(last) = &self.last
                && let Some(cmd) = last.split_whitespace().next()
                && REPEATABLE.contains(&cmd.to_lowercase().as_str())
            {
                return Next::Run { line: last.clone(), echo: false };
            }
            return Next::Nothing;
        }
        self.last = Some(line.clone());
        Next::Run { line, echo }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(line: &str, echo: bool) -> Next {
        Next::Run { line: line.into(), echo }
    }

    #[test]
    fn bang_bang_repeats_the_last_line_with_what_follows() {
        let mut h = History::default();
        assert_eq!(h.next("!!"), Next::NoPrevious);
        assert_eq!(h.next("print x\n"), run("print x", false));
        assert_eq!(h.next("!! + 1"), run("print x + 1", true));
        assert_eq!(h.next("!!"), run("print x + 1", true), "the expanded line becomes the last one");
    }

    #[test]
    fn empty_lines_repeat_only_repeatable_commands_and_only_when_on() {
        let mut h = History::default();
        assert_eq!(h.next("step"), run("step", false));
        assert_eq!(h.next(""), Next::Nothing, "repeat is off by default");
        h.set_repeat(true);
        assert_eq!(h.next("  "), run("step", false));
        assert_eq!(h.next("print x"), run("print x", false));
        assert_eq!(h.next(""), Next::Nothing, "print is not repeatable");
        assert_eq!(h.next("UP 2"), run("UP 2", false));
        assert_eq!(h.next(""), run("UP 2", false));
    }
}
