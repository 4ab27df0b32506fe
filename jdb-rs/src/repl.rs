//! The interactive REPL: rustyline line editing, persistent history (`~/.jdb_rs_history`) and
//! tab completion of commands, class names, method names, locals and fields. Events that arrive
//! while a line is being edited are printed above the prompt.

use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rustyline::completion::Completer;
use rustyline::error::ReadlineError;
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::history::FileHistory;
use rustyline::validate::Validator;
use rustyline::{CompletionType, Config, Context, Editor, ExternalPrinter};

use crate::commands::COMMANDS;
use crate::out::LinePrinter;
use crate::session::{Completions, Flow, Session};

/// `~/.jdb_rs_history` (override with `JDB_RS_HISTORY`).
pub fn history_path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("JDB_RS_HISTORY") {
        return Some(PathBuf::from(p));
    }
    std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".jdb_rs_history"))
}

struct Helper {
    completions: Arc<Mutex<Completions>>,
    handle: tokio::runtime::Handle,
}

impl Helper {
    fn snapshot(&self) -> Completions {
        self.completions.lock().map(|c| c.clone()).unwrap_or_default()
    }

    /// Methods of a loaded class, asked of the VM (this runs on the editor's thread).
    fn methods_of(&self, vm: &jdi::VirtualMachine, class: &str) -> Vec<String> {
        let vm = vm.clone();
        let class = class.to_string();
        self.handle
            .block_on(async move {
                tokio::time::timeout(Duration::from_secs(3), async {
                    let ty = vm.classes_by_name(&class).await.ok()?.into_iter().next()?;
                    let methods = ty.methods().await.ok()?;
                    let fields = ty.fields().await.ok()?;
                    let mut names: Vec<String> = methods.iter().map(|m| m.name().to_string()).collect();
                    names.extend(fields.iter().filter(|f| f.is_static()).map(|f| f.name.clone()));
                    Some(names)
                })
                .await
                .ok()
                .flatten()
            })
            .unwrap_or_default()
    }
}

/// Candidates for the word ending at `pos` of `line`: `(start of the word, candidates)`.
pub fn complete_line(
    line: &str,
    pos: usize,
    c: &Completions,
    methods_of: &dyn Fn(&str) -> Vec<String>,
) -> (usize, Vec<String>) {
    let before = &line[..pos];
    let start = before.rfind(|ch: char| ch.is_whitespace() || "(),+-*/=<>![]&|".contains(ch)).map_or(0, |i| i + 1);
    let word = &before[start..];
    let mut out: Vec<String> = Vec::new();
    if before[..start].trim().is_empty() {
        out.extend(COMMANDS.iter().map(|(n, _)| n.to_string()).filter(|n| n.starts_with(word) && n != "!!"));
        out.sort();
        return (start, out);
    }
    let cmd = before.split_whitespace().next().unwrap_or("").to_lowercase();
    let classes = || c.classes.iter().filter(|n| n.starts_with(word)).cloned().collect::<Vec<_>>();
    match cmd.as_str() {
        "help" | "?" | "monitor" => {
            out.extend(COMMANDS.iter().map(|(n, _)| n.to_string()).filter(|n| n.starts_with(word)))
        }
        "stop" | "clear" | "class" | "methods" | "fields" | "redefine" | "watch" | "unwatch" | "catch" | "ignore" => {
            if let Some((class, member)) = word.rsplit_once('.')
                && c.classes.iter().any(|n| n == class)
            {
                let mut names = methods_of(class);
                names.sort();
                names.dedup();
                out.extend(names.into_iter().filter(|m| m.starts_with(member)).map(|m| format!("{class}.{m}")));
            }
            out.extend(classes());
            if matches!(cmd.as_str(), "stop" | "clear")
                && !word.contains('.')
                && "in".starts_with(word)
                && !before.contains(" in ")
                && !before.contains(" at ")
            {
                out.push("in".into());
                out.push("at".into());
                out.retain(|w| w.starts_with(word));
            }
        }
        _ => {
            if let Some((base, member)) = word.rsplit_once('.') {
                if c.classes.iter().any(|n| n == base) {
                    let mut names = methods_of(base);
                    names.sort();
                    names.dedup();
                    out.extend(names.into_iter().filter(|m| m.starts_with(member)).map(|m| format!("{base}.{m}")));
                } else if base == "this" {
                    out.extend(c.members.iter().filter(|m| m.starts_with(member)).map(|m| format!("this.{m}")));
                }
                out.extend(classes());
            } else {
                out.extend(c.locals.iter().filter(|n| n.starts_with(word)).cloned());
                out.extend(c.members.iter().filter(|n| n.starts_with(word)).cloned());
                if !word.is_empty() {
                    out.extend(classes());
                }
            }
        }
    }
    let mut seen = std::collections::HashSet::new();
    out.retain(|w| seen.insert(w.clone()));
    (start, out)
}

impl Completer for Helper {
    type Candidate = String;

    fn complete(&self, line: &str, pos: usize, _ctx: &Context<'_>) -> rustyline::Result<(usize, Vec<String>)> {
        let c = self.snapshot();
        let vm = c.vm.clone();
        let methods = |class: &str| match &vm {
            Some(vm) => self.methods_of(vm, class),
            None => Vec::new(),
        };
        Ok(complete_line(line, pos, &c, &methods))
    }
}

impl Hinter for Helper {
    type Hint = String;
}

impl Highlighter for Helper {
    fn highlight_prompt<'b, 's: 'b, 'p: 'b>(&'s self, prompt: &'p str, _default: bool) -> Cow<'b, str> {
        Cow::Borrowed(prompt)
    }
}

impl Validator for Helper {}

impl rustyline::Helper for Helper {}

struct Printer<P: ExternalPrinter + Send>(P);

impl<P: ExternalPrinter + Send> LinePrinter for Printer<P> {
    fn print(&mut self, text: String) {
        let _ = self.0.print(text);
    }
}

/// The terminal settings before the editor changed them, to restore on a sudden exit.
fn save_terminal() -> Option<libc::termios> {
    // SAFETY: tcgetattr writes into the zeroed struct we own; fd 0 is our stdin.
    unsafe {
        let mut t: libc::termios = std::mem::zeroed();
        (libc::tcgetattr(0, &mut t) == 0).then_some(t)
    }
}

fn restore_terminal(t: &libc::termios) {
    // SAFETY: plain syscall with a valid termios.
    unsafe {
        libc::tcsetattr(0, libc::TCSANOW, t);
    }
}

/// Runs the interactive session until `exit`, end of input, or the VM's end. Returns false if the
/// editor could not be set up.
pub async fn run(session: &mut Session) -> bool {
    let config = Config::builder().completion_type(CompletionType::List).auto_add_history(false).build();
    let Ok(mut editor) = Editor::<Helper, FileHistory>::with_config(config) else { return false };
    editor.set_helper(Some(Helper {
        completions: session.completions.clone(),
        handle: tokio::runtime::Handle::current(),
    }));
    let history = history_path();
    if let Some(h) = &history {
        let _ = editor.load_history(h);
    }
    if let Ok(p) = editor.create_external_printer() {
        session.out.set_printer(Box::new(Printer(p)));
    }
    let terminal = save_terminal();
    session.refresh_completions().await;
    let mut editor = Some(editor);
    loop {
        let prompt = session.prompt_string().await;
        let shown = if session.out.color() {
            (prompt.clone(), format!("\x1b[1;34m{prompt}\x1b[0m"))
        } else {
            (prompt.clone(), prompt.clone())
        };
        let Some(mut ed) = editor.take() else { return true };
        session.out.reading(true);
        let mut task = tokio::task::spawn_blocking(move || {
            let r = ed.readline(&shown);
            (ed, r)
        });
        let (ed, result) = loop {
            tokio::select! {
                done = &mut task => match done {
                    Ok(v) => break v,
                    Err(_) => return true,
                },
                set = session.next_event_set() => {
                    session.handle_async(set).await;
                    if session.status.ended() {
                        // The editor thread still owns the terminal; put it back and go.
                        session.out.flush();
                        if let Some(t) = &terminal {
                            restore_terminal(t);
                        }
                        say!();
                        std::process::exit(session.exit_code());
                    }
                }
            }
        };
        session.out.reading(false);
        editor = Some(ed);
        match result {
            Ok(line) => {
                if let Some(ed) = editor.as_mut()
                    && !line.trim().is_empty()
                {
                    let _ = ed.add_history_entry(line.as_str());
                    if let Some(h) = &history {
                        let _ = ed.save_history(h);
                    }
                }
                if session.execute_line(&line).await == Flow::Quit || session.status.ended() {
                    return true;
                }
            }
            Err(ReadlineError::Interrupted) => continue,
            Err(_) => return true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn completes_commands_classes_methods_and_locals() {
        let c = Completions {
            classes: vec!["Demo".into(), "java.lang.String".into()],
            locals: vec!["demo".into(), "total".into()],
            members: vec!["counter".into()],
            vm: None,
        };
        let methods = |class: &str| if class == "Demo" { vec!["tick".into(), "main".into()] } else { vec![] };
        assert_eq!(
            complete_line("thr", 3, &c, &methods),
            (
                0,
                vec![
                    "thread".into(),
                    "threadgroup".into(),
                    "threadgroups".into(),
                    "threadlocks".into(),
                    "threads".into()
                ]
            )
        );
        assert_eq!(complete_line("stop in De", 10, &c, &methods), (8, vec!["Demo".into()]));
        assert_eq!(complete_line("stop in Demo.t", 14, &c, &methods), (8, vec!["Demo.tick".into()]));
        assert_eq!(complete_line("print to", 8, &c, &methods), (6, vec!["total".into()]));
        assert_eq!(complete_line("print this.co", 13, &c, &methods), (6, vec!["this.counter".into()]));
        assert_eq!(complete_line("methods java.lang.S", 19, &c, &methods), (8, vec!["java.lang.String".into()]));
    }
}
