//! jdb's output formats: locations, stack frames, thread listings, method and field lists. Kept
//! byte-for-byte where jdb-rs keeps jdb's format (jdb formats numbers with `MessageFormat`, so
//! line numbers of 1000 and more get grouping commas: `line=1,234`).

use jdi::{Location, Method, ThreadStatus, VirtualMachine};
use serde_json::{Value as Json, json};

/// `1234` → `1,234`, as `MessageFormat`'s `{0,number,integer}` prints it.
pub fn group_int(n: i64) -> String {
    let digits = n.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if n < 0 { format!("-{out}") } else { out }
}

/// A code location, described.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocInfo {
    pub class_name: String,
    pub method_name: String,
    /// -1 when unknown.
    pub line: i32,
    pub bci: u64,
    pub source_name: Option<String>,
    pub native: bool,
    /// The class's JNI signature (for finding its source file).
    pub class_signature: String,
}

impl LocInfo {
    /// jdb's `locationString`: `Demo.tick(), line=50 bci=0`.
    pub fn location_string(&self) -> String {
        format!(
            "{}.{}(), line={} bci={}",
            self.class_name,
            self.method_name,
            group_int(self.line.into()),
            group_int(self.bci as i64)
        )
    }

    /// The `(Demo.java:50)` part of a stack frame line (`native method`, or `null` without a
    /// line number, as jdb prints).
    pub fn frame_source(&self) -> String {
        if self.native {
            "native method".into()
        } else if self.line != -1 {
            match &self.source_name {
                Some(s) => format!("{s}:{}", group_int(self.line.into())),
                None => "unknown".into(),
            }
        } else {
            "null".into()
        }
    }

    /// `  [1] Demo.tick (Demo.java:50)` (with `, pc = 0` for `wherei`).
    pub fn frame_line(&self, number: usize, pc: bool) -> String {
        let mut s = format!(
            "  [{}] {}.{} ({})",
            group_int(number as i64),
            self.class_name,
            self.method_name,
            self.frame_source()
        );
        if pc {
            s.push_str(&format!(", pc = {}", group_int(self.bci as i64)));
        }
        s
    }

    pub fn to_json(&self) -> Json {
        json!({
            "class": self.class_name,
            "method": self.method_name,
            "line": self.line,
            "bci": self.bci,
            "source": self.source_name,
            "native": self.native,
        })
    }
}

/// Describes a location (class, method, line, source).
pub async fn loc_info(vm: &VirtualMachine, location: Location) -> jdi::Result<LocInfo> {
    let loc = vm.resolve_location(location).await?;
    let line = loc.line_number().await.unwrap_or(-1);
    let source_name = loc.declaring_type.source_name().await.ok();
    Ok(LocInfo {
        class_name: loc.declaring_type.name(),
        method_name: loc.method.name().to_string(),
        line,
        bci: location.index,
        source_name,
        native: loc.method.is_native(),
        class_signature: loc.declaring_type.signature().to_string(),
    })
}

/// jdb's `typedName`: `tick(int)`, `format(java.lang.String, java.lang.Object...)`.
pub fn typed_name(method: &Method) -> String {
    let mut args = method.argument_type_names();
    if method.is_varargs()
        && let Some(last) = args.last_mut()
        && let Some(stripped) = last.strip_suffix("[]")
    {
        *last = format!("{stripped}...");
    }
    format!("{}({})", method.name(), args.join(", "))
}

/// The status word of a `threads` line.
pub fn thread_status(status: ThreadStatus) -> &'static str {
    match status {
        ThreadStatus::Zombie => "zombie",
        ThreadStatus::Running => "running",
        ThreadStatus::Sleeping => "sleeping",
        ThreadStatus::Monitor => "waiting in a monitor",
        ThreadStatus::Wait => "cond. waiting",
        _ => "unknown",
    }
}

/// Java's `Long.decode`: decimal, `0x`/`#` hex, leading-`0` octal, optional sign.
pub fn java_decode(s: &str) -> Option<i64> {
    let (neg, body) = match s.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let v = if let Some(h) =
        body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")).or_else(|| body.strip_prefix('#'))
    {
        i64::from_str_radix(h, 16).ok()?
    } else if body.len() > 1 && body.starts_with('0') {
        i64::from_str_radix(&body[1..], 8).ok()?
    } else {
        body.parse().ok()?
    };
    Some(if neg { -v } else { v })
}

/// Whether `s` is a Java identifier (ASCII-and-Unicode letters, digits, `_`, `$`).
pub fn is_java_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) if c.is_alphabetic() || c == '_' || c == '$' => {}
        _ => return false,
    }
    chars.all(|c| c.is_alphanumeric() || c == '_' || c == '$')
}

/// Whether `name` is a plausible class name or pattern stem: dot-separated identifiers.
pub fn is_valid_class_name(name: &str) -> bool {
    !name.is_empty() && name.split('.').all(is_java_identifier)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_group_like_message_format() {
        assert_eq!(group_int(0), "0");
        assert_eq!(group_int(999), "999");
        assert_eq!(group_int(9999), "9,999");
        assert_eq!(group_int(1234567), "1,234,567");
        assert_eq!(group_int(-1), "-1");
        assert_eq!(group_int(-1234), "-1,234");
    }

    #[test]
    fn locations_and_frames_print_like_jdb() {
        let info = LocInfo {
            class_name: "Demo".into(),
            method_name: "tick".into(),
            line: 50,
            bci: 0,
            source_name: Some("Demo.java".into()),
            native: false,
            class_signature: "LDemo;".into(),
        };
        assert_eq!(info.location_string(), "Demo.tick(), line=50 bci=0");
        assert_eq!(info.frame_line(1, false), "  [1] Demo.tick (Demo.java:50)");
        assert_eq!(info.frame_line(2, true), "  [2] Demo.tick (Demo.java:50), pc = 0");
        let native = LocInfo { native: true, line: -1, ..info.clone() };
        assert_eq!(native.frame_line(1, false), "  [1] Demo.tick (native method)");
    }

    #[test]
    fn decode_and_names() {
        assert_eq!(java_decode("12"), Some(12));
        assert_eq!(java_decode("0x1f"), Some(31));
        assert_eq!(java_decode("010"), Some(8));
        assert_eq!(java_decode("-5"), Some(-5));
        assert_eq!(java_decode("x"), None);
        assert!(is_valid_class_name("java.lang.String"));
        assert!(is_valid_class_name("Demo$Inner"));
        assert!(!is_valid_class_name("1abc"));
        assert!(!is_valid_class_name("a..b"));
    }
}
