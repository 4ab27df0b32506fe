//! Turning JVMTI frames (method ID, bytecode index) into the protocol's `FrameInfo` (names and a
//! line), once per method: reports name thousands of frames from a few hundred methods.

use std::collections::HashMap;

use jdwp_protocol::commands::profiler::FrameInfo;
use jni_sys::jmethodID;

use crate::jvmti::Jvmti;
use crate::jvmti::sys::jlocation;

/// What a method contributes to every frame of it.
struct MethodNames {
    class_signature: String,
    name: String,
    signature: String,
    source_file: String,
    native: bool,
    /// `(start bytecode index, line)`, sorted by index; empty without a line table.
    lines: Vec<(jlocation, i32)>,
}

/// Resolves frames, remembering each method it has seen. Lives for one report.
pub struct FrameResolver {
    jvmti: Jvmti,
    methods: HashMap<usize, Option<MethodNames>>,
}

impl FrameResolver {
    pub fn new(jvmti: Jvmti) -> FrameResolver {
        FrameResolver { jvmti, methods: HashMap::new() }
    }

    /// The frame at `location` of `method`. A method whose class has been unloaded since the
    /// frame was recorded (its ID no longer resolves) is reported by placeholder names, so one
    /// stale frame does not spoil a report.
    pub fn frame(&mut self, method: jmethodID, location: jlocation) -> FrameInfo {
        let jvmti = self.jvmti;
        let names = self.methods.entry(method as usize).or_insert_with(|| method_names(jvmti, method));
        match names {
            Some(m) => FrameInfo {
                class_signature: m.class_signature.clone(),
                method_name: m.name.clone(),
                method_signature: m.signature.clone(),
                source_file: m.source_file.clone(),
                line: if m.native { -2 } else { line_at(&m.lines, location) },
            },
            None => FrameInfo {
                class_signature: "L<unloaded>;".into(),
                method_name: "<unknown>".into(),
                method_signature: "()V".into(),
                source_file: String::new(),
                line: -1,
            },
        }
    }
}

fn method_names(jvmti: Jvmti, method: jmethodID) -> Option<MethodNames> {
    let names = jvmti.get_method_name(method).ok()?;
    let class = jvmti.get_method_declaring_class(method).ok()?;
    let class_signature = jvmti.get_class_signature(class).ok()?.0;
    let source_file = jvmti.get_source_file_name(class).unwrap_or_default();
    let native = jvmti.is_method_native(method).unwrap_or(false);
    let mut lines: Vec<(jlocation, i32)> = match jvmti.get_line_number_table(method) {
        Ok(table) => table.iter().map(|e| (e.start_location, e.line_number)).collect(),
        Err(_) => Vec::new(),
    };
    lines.sort_unstable();
    Some(MethodNames { class_signature, name: names.name, signature: names.signature, source_file, native, lines })
}

/// The line of the last entry starting at or before `location`; -1 when none does.
fn line_at(lines: &[(jlocation, i32)], location: jlocation) -> i32 {
    let after = lines.partition_point(|&(start, _)| start <= location);
    if after == 0 { -1 } else { lines[after - 1].1 }
}

#[cfg(test)]
mod tests {
    use super::line_at;

    #[test]
    fn lines_are_found_by_the_entry_covering_the_index() {
        let lines = [(0, 10), (4, 11), (9, 13)];
        assert_eq!(line_at(&lines, 0), 10);
        assert_eq!(line_at(&lines, 3), 10);
        assert_eq!(line_at(&lines, 4), 11);
        assert_eq!(line_at(&lines, 100), 13);
        assert_eq!(line_at(&[], 5), -1);
        assert_eq!(line_at(&[(2, 7)], 1), -1);
    }
}
