//! The agent's layers, checked: every module of `src/` sits in one layer of [`LAYERS`], and no
//! module refers to one in a higher layer (`use crate::…`, `use super::…` and inline
//! `crate::…`/`super::…` paths all count; unit-test modules at the end of a file do not). Modules
//! of one layer may refer to each other, but import cycles stay inside one top-level module (a
//! folder such as `events/`, or `agent.rs` with `agent/`).
//!
//! The table is the invariant ARCHITECTURE.md describes; a new file must be placed in it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Layers from the bottom up: each entry is a path under `src/` (a file, or a folder ending in
/// `/`); the longest matching entry places a file.
const LAYERS: &[(&str, &[&str])] = &[
    (
        "foundation: FFI, protocol plumbing, options, transports (no agent state)",
        &[
            "jvmti/",
            "jni.rs",
            "id_hash.rs",
            "id_kinds.rs",
            "options.rs",
            "runtime.rs",
            "logging.rs",
            "dispatch.rs",
            "allow.rs",
            "agent_properties.rs",
            "transport.rs",
            "transport/",
            "session.rs",
        ],
    ),
    (
        "pure decisions and state the agent owns (no VM calls)",
        &[
            "thread_control.rs",
            "tid_index.rs",
            "virtual_threads.rs",
            "events/filter.rs",
            "events/requests.rs",
            "events/breakpoint_table.rs",
            "step/switch_state.rs",
            "gate.rs",
            "backpressure.rs",
            "outbox.rs",
        ],
    ),
    ("agent: the one owner of the agent's state", &["agent.rs", "agent/"]),
    (
        "shared VM helpers and the event vocabulary",
        &["agent_thread.rs", "heap_walk.rs", "values.rs", "sde.rs", "raw.rs", "events/"],
    ),
    (
        "engine: steps, frame pops, invocations, request setup, profiling",
        &["step.rs", "step/", "frame_pop.rs", "invoke.rs", "app_resume.rs", "events/install.rs", "profiling/"],
    ),
    ("commands: parse, call the engine, reply", &["commands/"]),
    ("event delivery and the session", &["callbacks.rs", "event_helper.rs", "backend.rs"]),
    ("loader: Agent_OnLoad, threads, wiring", &["loader.rs", "lib.rs"]),
];

/// Upward references allowed while other work lands: (from, to, why). Each must still occur (the
/// test fails on a stale entry), so the list only shrinks. None is left: keep it so.
const ALLOWED: &[(&str, &str, &str)] = &[];

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read src") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `events/install.rs` → `["events", "install"]`; `events/mod.rs` → `["events"]`; `lib.rs` → `[]`.
fn module_path(rel: &str) -> Vec<String> {
    let mut segs: Vec<String> = rel.trim_end_matches(".rs").split('/').map(str::to_owned).collect();
    if matches!(segs.last().map(String::as_str), Some("mod" | "lib")) {
        segs.pop();
    }
    segs
}

fn layer_of(rel: &str) -> Option<usize> {
    let mut best: Option<(usize, usize)> = None;
    for (layer, (_, entries)) in LAYERS.iter().enumerate() {
        for entry in entries.iter() {
            let hit = if entry.ends_with('/') { rel.starts_with(entry) } else { rel == *entry };
            if hit && best.is_none_or(|(len, _)| entry.len() > len) {
                best = Some((entry.len(), layer));
            }
        }
    }
    best.map(|(_, layer)| layer)
}

/// The source without comments, string contents and unit-test modules.
fn code_of(text: &str) -> String {
    let text = match text.find("#[cfg(test)]\nmod ") {
        Some(at) => &text[..at],
        None => text,
    };
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '/' if chars.peek() == Some(&'/') => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            '/' if chars.peek() == Some(&'*') => {
                chars.next();
                let mut prev = ' ';
                for c in chars.by_ref() {
                    if prev == '*' && c == '/' {
                        break;
                    }
                    prev = c;
                }
            }
            '"' => {
                out.push('"');
                let mut escaped = false;
                for c in chars.by_ref() {
                    if escaped {
                        escaped = false;
                    } else if c == '\\' {
                        escaped = true;
                    } else if c == '"' {
                        break;
                    }
                }
                out.push('"');
            }
            // A char literal such as '"' must not open a string; lifetimes pass through.
            '\'' => {
                out.push('\'');
                let rest: String = chars.clone().take(3).collect();
                if rest.starts_with('\\') {
                    for c in chars.by_ref() {
                        if c == '\'' {
                            break;
                        }
                    }
                } else if rest.chars().nth(1) == Some('\'') {
                    chars.next();
                    chars.next();
                }
            }
            _ => out.push(c),
        }
    }
    out
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Expands a use tree (`a::{b, c::{d, e}}`) into its paths.
fn expand_use(prefix: &[String], tree: &str, out: &mut Vec<Vec<String>>) {
    let tree = tree.trim();
    if let Some(open) = tree.find('{') {
        let head = &tree[..open];
        let body = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
        let mut base = prefix.to_vec();
        base.extend(head.split("::").map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned));
        let (mut depth, mut start) = (0, 0);
        for (i, c) in body.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    expand_use(&base, &body[start..i], out);
                    start = i + 1;
                }
                _ => {}
            }
        }
        expand_use(&base, &body[start..], out);
    } else if !tree.is_empty() {
        let path = tree.split(" as ").next().unwrap_or(tree);
        let mut full = prefix.to_vec();
        full.extend(path.split("::").map(str::trim).filter(|s| !s.is_empty() && *s != "self").map(str::to_owned));
        out.push(full);
    }
}

/// Every path the code refers to, as written (`crate::…`, `super::…`, `self::…`).
fn referenced_paths(code: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    // Use statements (including groups).
    let mut rest = code;
    while let Some(at) = rest.find("use ") {
        let before = rest[..at].chars().next_back();
        let after = &rest[at + 4..];
        rest = after;
        if before.is_some_and(is_ident) {
            continue;
        }
        let Some(end) = after.find(';') else { break };
        let tree = after[..end].trim();
        if tree.starts_with("crate::") || tree.starts_with("super::") || tree.starts_with("self::") {
            expand_use(&[], tree, &mut out);
        }
    }
    // Inline paths.
    for root in ["crate::", "super::"] {
        let mut from = 0;
        while let Some(found) = code[from..].find(root) {
            let at = from + found;
            from = at + root.len();
            if code[..at].chars().next_back().is_some_and(|c| is_ident(c) || c == ':') {
                continue;
            }
            let mut path = vec![root.trim_end_matches("::").to_owned()];
            let mut tail = &code[at + root.len()..];
            loop {
                let len = tail.find(|c: char| !is_ident(c)).unwrap_or(tail.len());
                if len == 0 {
                    break;
                }
                path.push(tail[..len].to_owned());
                tail = &tail[len..];
                match tail.strip_prefix("::") {
                    Some(next) => tail = next,
                    None => break,
                }
            }
            out.push(path);
        }
    }
    out
}

/// The file a path refers to: its longest prefix that names a module (relative paths resolved from
/// `module`, the referring file's module). `None` for the crate root (`crate::guard`).
fn resolve(
    path: &[String],
    module: &[String],
    is_mod_file: bool,
    modules: &BTreeMap<Vec<String>, String>,
) -> Option<String> {
    let mut segs: Vec<String> = match path.first().map(String::as_str) {
        Some("crate") => Vec::new(),
        Some("self") => module.to_vec(),
        Some("super") => {
            let _ = is_mod_file;
            module[..module.len().saturating_sub(1)].to_vec()
        }
        _ => return None,
    };
    segs.extend(path[1..].iter().cloned());
    (1..=segs.len()).rev().find_map(|n| modules.get(&segs[..n]).cloned())
}

/// Per file (relative to `src/`): the files it refers to.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = src_dir();
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let rel = |p: &Path| p.strip_prefix(&src).expect("under src").to_string_lossy().replace('\\', "/");
    let modules: BTreeMap<Vec<String>, String> = files.iter().map(|f| (module_path(&rel(f)), rel(f))).collect();
    let mut graph = BTreeMap::new();
    for file in &files {
        let me = rel(file);
        let code = code_of(&std::fs::read_to_string(file).expect("read source"));
        let module = module_path(&me);
        let is_mod = me.ends_with("mod.rs");
        let targets: BTreeSet<String> = referenced_paths(&code)
            .iter()
            .filter_map(|p| resolve(p, &module, is_mod, &modules))
            .filter(|t| *t != me && t != "lib.rs")
            .collect();
        graph.insert(me, targets);
    }
    graph
}

/// The top-level module a file belongs to (`events/entry.rs` → `events`, `agent/engine.rs` → `agent`).
fn unit(file: &str) -> &str {
    file.split('/').next().unwrap_or(file).trim_end_matches(".rs")
}

#[test]
fn every_file_has_a_layer() {
    let unplaced: Vec<String> = graph().into_keys().filter(|f| layer_of(f).is_none()).collect();
    assert!(unplaced.is_empty(), "files missing from the layer table in tests/layers.rs: {unplaced:?}");
}

#[test]
fn no_module_imports_a_higher_layer() {
    let graph = graph();
    let mut offenders = Vec::new();
    let mut used = BTreeSet::new();
    for (from, targets) in &graph {
        let Some(low) = layer_of(from) else { continue };
        for to in targets {
            let Some(high) = layer_of(to) else { continue };
            if high <= low {
                continue;
            }
            if let Some(i) = ALLOWED.iter().position(|(f, t, _)| f == from && t == to) {
                used.insert(i);
                continue;
            }
            offenders.push(format!("{from} ({}) -> {to} ({})", LAYERS[low].0, LAYERS[high].0));
        }
    }
    assert!(offenders.is_empty(), "imports from a lower layer to a higher one:\n  {}", offenders.join("\n  "));
    let stale: Vec<_> = ALLOWED.iter().enumerate().filter(|(i, _)| !used.contains(i)).map(|(_, a)| a).collect();
    assert!(stale.is_empty(), "allowances in tests/layers.rs no longer needed (remove them): {stale:?}");
}

#[test]
fn import_cycles_stay_inside_one_module() {
    // The allowed upward references are reported by their own test; here they would hide the rest.
    let mut graph = graph();
    for (from, to, _) in ALLOWED {
        if let Some(targets) = graph.get_mut(*from) {
            targets.remove(*to);
        }
    }
    // Tarjan's strongly connected components.
    struct State<'a> {
        graph: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        sccs: Vec<Vec<&'a str>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a str) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on_stack.insert(v);
        for w in s.graph.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !s.index.contains_key(w) {
                visit(s, w);
                let lw = s.low[w];
                let lv = s.low.get_mut(v).expect("visited");
                *lv = (*lv).min(lw);
            } else if s.on_stack.contains(w) {
                let iw = s.index[w];
                let lv = s.low.get_mut(v).expect("visited");
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut scc = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                scc.push(w);
                if w == v {
                    break;
                }
            }
            s.sccs.push(scc);
        }
    }
    let mut state = State {
        graph: &graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        sccs: Vec::new(),
    };
    for v in graph.keys() {
        if !state.index.contains_key(v.as_str()) {
            visit(&mut state, v);
        }
    }
    let bad: Vec<Vec<&str>> = state
        .sccs
        .into_iter()
        .filter(|scc| scc.iter().any(|f| unit(f) != unit(scc[0])))
        .map(|mut scc| {
            scc.sort_unstable();
            scc
        })
        .collect();
    assert!(bad.is_empty(), "import cycles across modules: {bad:?}");
}

#[test]
fn the_checker_reads_paths() {
    let code = code_of(
        "use crate::a::{b, c::{d as e, self}};\n// crate::commented::out\nfn f() { crate::x::y(); super::z(); \"crate::s\"; }",
    );
    let paths = referenced_paths(&code);
    let has = |p: &[&str]| paths.iter().any(|q| q.iter().map(String::as_str).eq(p.iter().copied()));
    assert!(has(&["crate", "a", "b"]), "{paths:?}");
    assert!(has(&["crate", "a", "c", "d"]), "{paths:?}");
    assert!(has(&["crate", "a", "c"]), "{paths:?}");
    assert!(has(&["crate", "x", "y"]), "{paths:?}");
    assert!(has(&["super", "z"]), "{paths:?}");
    assert!(!paths.iter().flatten().any(|s| s == "commented" || s == "s"), "{paths:?}");
    assert_eq!(module_path("events/mod.rs"), ["events"]);
    assert_eq!(layer_of("events/install.rs"), layer_of("step.rs"));
    assert!(layer_of("events/entry.rs") < layer_of("step.rs"));
}
