//! JSON shapes that are more than a command's output lines: deadlock reports.

use jdi::deadlock::{Deadlock, FrameInfo, Lock};
use serde_json::{Value as Json, json};

fn lock(l: &Lock) -> Json {
    json!({"type": l.type_name, "id": l.object.id().0})
}

fn frame(f: &FrameInfo) -> Json {
    json!({"class": f.class_name, "method": f.method, "source": f.source, "line": f.line, "native": f.native, "text": f.to_string()})
}

/// Every deadlock: its threads, what each waits for and holds (and which frame took it), and
/// its stack.
pub fn deadlocks(found: &[Deadlock]) -> Json {
    Json::Array(
        found
            .iter()
            .map(|d| {
                let n = d.threads.len();
                json!({
                    "threads": d.threads.iter().enumerate().map(|(i, t)| json!({
                        "name": t.name,
                        "id": t.thread.id().0,
                        // The standard commands see monitors only.
                        "kind": "monitor",
                        "waiting_for": lock(&t.waiting_for),
                        "held_by": d.threads[(i + 1) % n].name,
                        "holds": t.holds.iter().map(|h| json!({"lock": lock(&h.lock), "frame": h.frame})).collect::<Vec<_>>(),
                        "stack": t.stack.iter().map(frame).collect::<Vec<_>>(),
                    })).collect::<Vec<_>>(),
                })
            })
            .collect(),
    )
}
