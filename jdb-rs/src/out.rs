//! Where everything jdb-rs says goes: text as jdb prints it (optionally colored), or one JSON
//! object per command result and per event (`--json`). Cheap to clone and shared with the tasks
//! that forward the debuggee's output, so lines never interleave mid-line.
//!
//! The sink is a plain [`Write`], so sessions run in tests against a buffer; while the REPL reads
//! a line, text goes through rustyline's external printer so it lands above the prompt.

use std::io::Write;
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::{Map, Value as Json, json};

/// Text styles; only used when colors are on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// Event headers (`Breakpoint hit:`...).
    Event,
    /// Error messages.
    Error,
    /// The current line marker and current-line source.
    Current,
    /// Source line numbers, secondary text.
    Dim,
    /// Prompts.
    Prompt,
}

impl Style {
    fn code(self) -> &'static str {
        match self {
            Style::Event => "1;33",
            Style::Error => "31",
            Style::Current => "1;32",
            Style::Dim => "2",
            Style::Prompt => "1;34",
        }
    }
}

/// A line printer for the REPL's external printer (rustyline's `ExternalPrinter`).
pub trait LinePrinter: Send {
    fn print(&mut self, text: String);
}

#[derive(Clone)]
pub struct Out {
    inner: Arc<Mutex<Inner>>,
}

struct Inner {
    json: bool,
    color: bool,
    prompts: bool,
    writer: Box<dyn Write + Send>,
    printer: Option<Box<dyn LinePrinter>>,
    use_printer: bool,
    /// Lines of the command being run (JSON mode).
    lines: Vec<String>,
    errors: Vec<String>,
    /// Whether the current command printed an error (text mode).
    failed: bool,
    data: Map<String, Json>,
    /// Whether the last text written ended a line (prompts do not).
    at_line_start: bool,
}

impl Out {
    pub fn new(writer: Box<dyn Write + Send>, json: bool, color: bool, prompts: bool) -> Out {
        Out {
            inner: Arc::new(Mutex::new(Inner {
                json,
                color: color && !json,
                prompts: prompts && !json,
                writer,
                printer: None,
                use_printer: false,
                lines: Vec::new(),
                errors: Vec::new(),
                failed: false,
                data: Map::new(),
                at_line_start: true,
            })),
        }
    }

    /// Standard output.
    pub fn stdout(json: bool, color: bool, prompts: bool) -> Out {
        Out::new(Box::new(std::io::stdout()), json, color, prompts)
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn json(&self) -> bool {
        self.lock().json
    }

    pub fn color(&self) -> bool {
        self.lock().color
    }

    pub fn prompts(&self) -> bool {
        self.lock().prompts
    }

    pub fn set_prompts(&self, on: bool) {
        let mut g = self.lock();
        g.prompts = on && !g.json;
    }

    /// Installs the REPL's external printer (used while [`Out::reading`] is on).
    pub fn set_printer(&self, printer: Box<dyn LinePrinter>) {
        self.lock().printer = Some(printer);
    }

    /// While on, text goes through the external printer (the REPL is reading a line).
    pub fn reading(&self, on: bool) {
        let mut g = self.lock();
        g.use_printer = on && g.printer.is_some();
        if on {
            g.at_line_start = true;
        }
    }

    /// `text` in `style`, if colors are on.
    pub fn paint(&self, style: Style, text: &str) -> String {
        if self.color() && !text.is_empty() { format!("\x1b[{}m{text}\x1b[0m", style.code()) } else { text.to_string() }
    }

    /// One line of a command's output.
    pub fn line(&self, text: impl Into<String>) {
        let text = text.into();
        let mut g = self.lock();
        if g.json {
            g.lines.extend(strip_ansi(&text).split('\n').map(String::from));
        } else {
            g.write_text(&format!("{text}\n"));
        }
    }

    /// Several lines (a block ending in a newline, or not).
    pub fn lines(&self, text: &str) {
        for l in text.strip_suffix('\n').unwrap_or(text).split('\n') {
            self.line(l);
        }
    }

    /// A line saying the command failed (it also makes the run's exit status 1).
    pub fn error(&self, text: impl Into<String>) {
        let text = text.into();
        let mut g = self.lock();
        g.failed = true;
        if g.json {
            g.errors.push(text);
        } else {
            let shown = if g.color { format!("\x1b[{}m{text}\x1b[0m", Style::Error.code()) } else { text };
            g.write_text(&format!("{shown}\n"));
        }
        drop(g);
    }

    /// Structured data for the current command's JSON object.
    pub fn data(&self, key: &str, value: Json) {
        let mut g = self.lock();
        if g.json {
            g.data.insert(key.to_string(), value);
        }
    }

    /// Text with no newline added (prompts, jdb's `lnprint` fragments). Text mode only.
    pub fn raw(&self, text: &str) {
        let mut g = self.lock();
        if !g.json {
            g.write_text(text);
        }
    }

    /// The prompt, when prompts are on.
    pub fn prompt(&self, prompt: &str) {
        let mut g = self.lock();
        if g.prompts && !g.use_printer {
            let shown = if g.color { format!("\x1b[{}m{prompt}\x1b[0m", Style::Prompt.code()) } else { prompt.into() };
            g.write_text(&shown);
        }
    }

    /// Starts a new line if a prompt or fragment is pending (text mode).
    pub fn newline_if_needed(&self) {
        let mut g = self.lock();
        if !g.json && !g.at_line_start && !g.use_printer {
            g.write_text("\n");
        }
    }

    /// Ends the current command: in JSON mode prints its object. Returns whether it failed.
    pub fn finish_command(&self, input: &str, name: &str) -> bool {
        let mut g = self.lock();
        let failed = std::mem::take(&mut g.failed);
        if g.json {
            let mut obj = Map::new();
            obj.insert("type".into(), json!("command"));
            obj.insert("command".into(), json!(name));
            obj.insert("input".into(), json!(input));
            obj.insert("ok".into(), json!(!failed));
            obj.insert("output".into(), json!(std::mem::take(&mut g.lines)));
            let errors = std::mem::take(&mut g.errors);
            if !errors.is_empty() {
                obj.insert("error".into(), json!(errors.join("\n")));
            }
            for (k, v) in std::mem::take(&mut g.data) {
                obj.insert(k, v);
            }
            let text = Json::Object(obj).to_string();
            g.write_text(&format!("{text}\n"));
        } else {
            g.errors.clear();
        }
        failed
    }

    /// Takes the failure flag of output printed outside a command (startup).
    pub fn finish_command_failed_silently(&self) -> bool {
        std::mem::take(&mut self.lock().failed)
    }

    /// Emits what was printed outside any command (startup lines) as a record of `kind`.
    pub fn finish_record(&self, kind: &str) {
        let mut g = self.lock();
        if g.json && (!g.lines.is_empty() || !g.errors.is_empty()) {
            let lines = std::mem::take(&mut g.lines);
            let errors = std::mem::take(&mut g.errors);
            let mut obj = Map::new();
            obj.insert("type".into(), json!(kind));
            obj.insert("output".into(), json!(lines));
            if !errors.is_empty() {
                obj.insert("error".into(), json!(errors.join("\n")));
            }
            let text = Json::Object(obj).to_string();
            g.write_text(&format!("{text}\n"));
        }
    }

    /// An event (or any other record outside a command): text as given, or `record` as its own
    /// JSON object (with `text` added).
    pub fn event(&self, text: &str, mut record: Map<String, Json>) {
        let mut g = self.lock();
        if g.json {
            if !text.is_empty() {
                record.insert("text".into(), json!(strip_ansi(text.trim_matches('\n'))));
            }
            let line = Json::Object(record).to_string();
            g.write_text(&format!("{line}\n"));
        } else {
            g.write_text(text);
        }
    }

    /// Output of the debuggee.
    pub fn program_output(&self, stream: &str, text: &str) {
        let mut g = self.lock();
        if g.json {
            let line = json!({"type": "output", "stream": stream, "text": text}).to_string();
            g.write_text(&format!("{line}\n"));
        } else {
            g.write_text(text);
        }
    }

    pub fn flush(&self) {
        let _ = self.lock().writer.flush();
    }
}

impl Inner {
    fn write_text(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        if self.use_printer
            && let Some(p) = self.printer.as_mut()
        {
            p.print(text.strip_suffix('\n').unwrap_or(text).to_string());
            return;
        }
        let _ = self.writer.write_all(text.as_bytes());
        let _ = self.writer.flush();
        self.at_line_start = text.ends_with('\n');
    }
}

/// Removes ANSI color sequences.
pub fn strip_ansi(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\x1b' && chars.peek() == Some(&'[') {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// A JSON object from pairs.
#[macro_export]
macro_rules! record {
    ($($k:literal : $v:expr),* $(,)?) => {{
        let mut m = serde_json::Map::new();
        $( m.insert($k.to_string(), serde_json::json!($v)); )*
        m
    }};
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Default)]
    struct Buf(Arc<Mutex<Vec<u8>>>);
    impl Write for Buf {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn json_mode_gathers_a_command_into_one_object() {
        let buf = Buf::default();
        let out = Out::new(Box::new(buf.clone()), true, true, true);
        out.line("  [1] Demo.tick (Demo.java:50)");
        out.data("frames", json!([1]));
        out.prompt("main[1] ");
        assert!(!out.finish_command("where", "where"));
        out.error("bad");
        assert!(out.finish_command("x", "x"));
        let text = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
        let lines: Vec<Json> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(lines[0]["output"][0], "  [1] Demo.tick (Demo.java:50)");
        assert_eq!(lines[0]["frames"], json!([1]));
        assert_eq!(lines[1]["ok"], false);
        assert_eq!(lines[1]["error"], "bad");
    }

    #[test]
    fn ansi_is_stripped() {
        assert_eq!(strip_ansi("\x1b[1;33mBreakpoint hit:\x1b[0m x"), "Breakpoint hit: x");
    }
}
