//! Breakpoint, catch and watch specs, as jdb keeps them: a spec names a class (or a pattern with
//! one leading or trailing `*`) and is resolved into event requests once a matching class is
//! prepared. Until then it is deferred, with a class-prepare request standing by.

use jdi::{EventRequest, Location, ReferenceType, RequestHandle, SuspendPolicy, VirtualMachine};

use crate::format::{group_int, is_java_identifier, is_valid_class_name};
use jdi::protocol::ThreadId;

#[derive(Debug, Clone, PartialEq)]
pub enum SpecKind {
    Line(i32),
    Method { name: String, args: Option<Vec<String>> },
    Exception { caught: bool, uncaught: bool },
    Watch { field: String, access: bool },
}

#[derive(Debug, Clone)]
pub struct Spec {
    pub pattern: String,
    pub kind: SpecKind,
    pub suspend: SuspendPolicy,
    pub thread: Option<ThreadId>,
    pub resolved: Vec<RequestHandle>,
    pub prepare: Option<RequestHandle>,
}

impl Spec {
    fn new(pattern: &str, kind: SpecKind) -> Spec {
        Spec {
            pattern: pattern.to_string(),
            kind,
            suspend: SuspendPolicy::All,
            thread: None,
            resolved: Vec::new(),
            prepare: None,
        }
    }

    pub fn line(pattern: &str, line: i32) -> Spec {
        Spec::new(pattern, SpecKind::Line(line))
    }

    pub fn method(pattern: &str, name: &str, args: Option<Vec<String>>) -> Spec {
        Spec::new(pattern, SpecKind::Method { name: name.to_string(), args })
    }

    pub fn exception(pattern: &str, caught: bool, uncaught: bool) -> Spec {
        Spec::new(pattern, SpecKind::Exception { caught, uncaught })
    }

    pub fn watch(pattern: &str, field: &str, access: bool) -> Spec {
        Spec::new(pattern, SpecKind::Watch { field: field.to_string(), access })
    }

    /// Checks the class pattern as jdb does (`"x" is not a valid class name.`).
    pub fn check_pattern(pattern: &str) -> Result<(), String> {
        let stem = pattern.strip_prefix('*').or_else(|| pattern.strip_suffix('*')).unwrap_or(pattern);
        let stem = stem.strip_prefix('.').unwrap_or(stem);
        let stem = stem.strip_suffix('.').unwrap_or(stem);
        if is_valid_class_name(stem) || (pattern == "*") {
            Ok(())
        } else {
            Err(format!("\"{pattern}\" is not a valid class name."))
        }
    }

    pub fn is_breakpoint(&self) -> bool {
        matches!(self.kind, SpecKind::Line(_) | SpecKind::Method { .. })
    }

    pub fn is_exception(&self) -> bool {
        matches!(self.kind, SpecKind::Exception { .. })
    }

    /// Whether the pattern names exactly one class.
    pub fn is_unique(&self) -> bool {
        !self.pattern.starts_with('*') && !self.pattern.ends_with('*')
    }

    pub fn matches(&self, class_name: &str) -> bool {
        if let Some(stem) = self.pattern.strip_prefix('*') {
            class_name.ends_with(stem)
        } else if let Some(stem) = self.pattern.strip_suffix('*') {
            class_name.starts_with(stem)
        } else {
            class_name == self.pattern
        }
    }

    pub fn is_resolved(&self) -> bool {
        !self.resolved.is_empty()
    }

    /// Same spec as jdb's `equals`: kind, class pattern and thread filter.
    pub fn same(&self, other: &Spec) -> bool {
        self.pattern == other.pattern && self.kind == other.kind && self.thread == other.thread
    }

    /// `breakpoint Demo:50`, `breakpoint Demo.tick(int)`, `all java.io.IOException`,
    /// `watch modification of Demo.counter`.
    pub fn describe(&self) -> String {
        match &self.kind {
            SpecKind::Line(line) => format!("breakpoint {}:{line}", self.pattern),
            SpecKind::Method { name, args: None } => format!("breakpoint {}.{name}", self.pattern),
            SpecKind::Method { name, args: Some(args) } => {
                format!("breakpoint {}.{name}({})", self.pattern, args.join(","))
            }
            SpecKind::Exception { caught: true, uncaught: false } => format!("caught {}", self.pattern),
            SpecKind::Exception { caught: false, uncaught: true } => format!("uncaught {}", self.pattern),
            SpecKind::Exception { .. } => format!("all {}", self.pattern),
            SpecKind::Watch { field, access: true } => format!("watch accesses of {}.{field}", self.pattern),
            SpecKind::Watch { field, access: false } => format!("watch modification of {}.{field}", self.pattern),
        }
    }

    /// The event request this spec makes for `ty`, installed; or jdb's reason why not.
    pub async fn resolve_in(&self, vm: &VirtualMachine, ty: &ReferenceType) -> Result<RequestHandle, String> {
        let request = match &self.kind {
            SpecKind::Line(_) | SpecKind::Method { .. } => {
                let location = self.location(ty).await?;
                let mut r = EventRequest::breakpoint(location).suspend(self.suspend);
                if let Some(t) = self.thread {
                    r = r.thread(t);
                }
                r
            }
            SpecKind::Exception { caught, uncaught } => {
                EventRequest::exception(Some(ty.id()), *caught, *uncaught).suspend(self.suspend)
            }
            SpecKind::Watch { field, access } => {
                let f = ty
                    .field_by_name(field)
                    .await
                    .map_err(|e| e.to_string())?
                    .ok_or_else(|| format!("No field {field} in {}", self.pattern))?;
                let r = if *access {
                    EventRequest::field_access(f.declaring_type, f.id)
                } else {
                    EventRequest::field_modification(f.declaring_type, f.id)
                };
                r.suspend(self.suspend)
            }
        };
        let handle = vm.create_event_request(request);
        match handle.enable().await {
            Ok(_) => Ok(handle),
            Err(e) => {
                let _ = handle.delete().await;
                Err(match e {
                    jdi::JdiError::Jdwp { code, .. } if code == jdi::protocol::ErrorCode::NOT_IMPLEMENTED => {
                        "Command is not supported on the target VM".into()
                    }
                    e => format!("Internal error; unable to set {}: {e}", self.pattern),
                })
            }
        }
    }

    /// Where a breakpoint spec goes in `ty`.
    async fn location(&self, ty: &ReferenceType) -> Result<Location, String> {
        if !ty.is_class() {
            return Err(format!(
                "Breakpoints can be located only in classes.  {} is an interface or array.",
                self.pattern
            ));
        }
        match &self.kind {
            SpecKind::Line(line) => {
                let locs = ty.locations_of_line(*line).await.map_err(|e| match e.code() {
                    Some(jdi::protocol::ErrorCode::ABSENT_INFORMATION) => {
                        format!("No linenumber information for {}.  Try compiling with debugging on.", self.pattern)
                    }
                    _ => e.to_string(),
                })?;
                locs.first()
                    .copied()
                    .ok_or_else(|| format!("No code at line {} in {}", group_int((*line).into()), self.pattern))
            }
            SpecKind::Method { name, args } => {
                let methods = ty.methods().await.map_err(|e| e.to_string())?;
                let named: Vec<_> = methods.iter().filter(|m| m.name() == name).collect();
                let chosen = match args {
                    Some(args) => named.iter().find(|m| args_match(m, args)).copied(),
                    None if named.len() == 1 => Some(named[0]),
                    None if named.len() > 1 => {
                        return Err(format!("Method {name} is overloaded; specify arguments"));
                    }
                    None => None,
                };
                let method = chosen.ok_or_else(|| format!("No method {name} in {}", self.pattern))?;
                let loc = method.line_locations().await.ok().and_then(|l| l.first().copied());
                match loc {
                    Some(l) => Ok(l),
                    None => method
                        .code_location()
                        .await
                        .map_err(|e| e.to_string())?
                        .ok_or_else(|| format!("No code in {}.{name} (native or abstract)", self.pattern)),
                }
            }
            _ => Err("not a breakpoint".into()),
        }
    }
}

/// Whether a method's argument types are the ones written (`int`, `String`, `java.lang.String`,
/// `String...`); unqualified class names match any package.
fn args_match(method: &jdi::Method, written: &[String]) -> bool {
    let actual = method.argument_type_names();
    if actual.len() != written.len() {
        return false;
    }
    actual.iter().zip(written).enumerate().all(|(i, (a, w))| {
        let w = w.trim();
        let w = if i + 1 == actual.len() && method.is_varargs() {
            w.strip_suffix("...").map(|s| format!("{s}[]")).unwrap_or_else(|| w.to_string())
        } else {
            w.to_string()
        };
        let w: String = w.chars().filter(|c| !c.is_whitespace()).collect();
        *a == w || a.ends_with(&format!(".{w}")) || a.ends_with(&format!("${w}"))
    })
}

/// Parses jdb's `Class.method(args)` / `Class:line` location (after `stop in/at` or `clear`).
pub fn parse_location(text: &str) -> Result<Spec, String> {
    let text = text.trim();
    if let Some((class, line)) = text.split_once(':') {
        let class = class.trim();
        let line_text = line.trim();
        let mut parts = line_text.split_whitespace();
        let first = parts.next().unwrap_or("");
        if parts.next().is_some() {
            return Err("Extra tokens after breakpoint location".into());
        }
        let digits: String =
            first.chars().take_while(|c| c.is_ascii_digit() || *c == ',').filter(|c| *c != ',').collect();
        let line: i32 = digits.parse().map_err(|_| "Invalid line number specified".to_string())?;
        Spec::check_pattern(class)?;
        return Ok(Spec::line(class, line));
    }
    let (head, args) = match text.find('(') {
        Some(open) => {
            let rest = &text[open..];
            if !rest.ends_with(')') {
                return Err(format!(
                    "Invalid <method_name> specification: {}",
                    text.rsplit('.').next().unwrap_or(text)
                ));
            }
            let inner = &rest[1..rest.len() - 1];
            let args: Vec<String> = inner.split(',').map(|a| a.trim().to_string()).filter(|a| !a.is_empty()).collect();
            (&text[..open], Some(args))
        }
        None => (text, None),
    };
    let head = head.trim();
    let dot = head.rfind('.').filter(|&d| d > 0 && d < head.len() - 1);
    let Some(dot) = dot else {
        return Err("Invalid <class>.<method_name> specification".into());
    };
    let (class, method) = (&head[..dot], &head[dot + 1..]);
    if !(is_java_identifier(method) || method == "<init>" || method == "<clinit>") {
        return Err(format!("\"{method}\" is not a valid method name."));
    }
    Spec::check_pattern(class)?;
    Ok(Spec::method(class, method, args))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_parse_as_jdb_reads_them() {
        let s = parse_location("Demo:50").unwrap();
        assert_eq!(s.describe(), "breakpoint Demo:50");
        let s = parse_location("Demo.tick(int)").unwrap();
        assert_eq!(s.kind, SpecKind::Method { name: "tick".into(), args: Some(vec!["int".into()]) });
        assert_eq!(s.describe(), "breakpoint Demo.tick(int)");
        assert_eq!(parse_location("a.b.C.<init>").unwrap().describe(), "breakpoint a.b.C.<init>");
        assert_eq!(
            parse_location("Demo.f(java.lang.String, int[])").unwrap().describe(),
            "breakpoint Demo.f(java.lang.String,int[])"
        );
        assert_eq!(parse_location("Demo:x").unwrap_err(), "Invalid line number specified");
        assert_eq!(parse_location("Demo:5 6").unwrap_err(), "Extra tokens after breakpoint location");
        assert_eq!(parse_location("Demo").unwrap_err(), "Invalid <class>.<method_name> specification");
        assert_eq!(parse_location("1Demo.x").unwrap_err(), "\"1Demo\" is not a valid class name.");
        assert_eq!(parse_location("Demo.9x").unwrap_err(), "\"9x\" is not a valid method name.");
    }

    #[test]
    fn patterns_match() {
        let s = Spec::exception("java.io.*", true, true);
        assert!(s.matches("java.io.IOException") && !s.is_unique());
        assert!(Spec::line("*Demo", 1).matches("x.Demo"));
        assert_eq!(s.describe(), "all java.io.*");
        assert_eq!(Spec::exception("X", false, true).describe(), "uncaught X");
        assert_eq!(Spec::watch("Demo", "counter", false).describe(), "watch modification of Demo.counter");
    }
}
