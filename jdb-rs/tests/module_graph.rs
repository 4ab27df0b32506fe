//! jdb-rs's top-level modules form no cycle: a module names (through `crate::` paths) only
//! modules below it, so each can be read and tested with what it builds on. The crate root
//! (`lib.rs`, `main.rs`) wires everything together and is left out.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Top-level module → the top-level modules its code names.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut files = Vec::new();
    collect(&src, &mut files);
    for file in files {
        let rel = file.strip_prefix(&src).unwrap();
        let first = rel.components().next().unwrap().as_os_str().to_string_lossy().into_owned();
        let module = first.strip_suffix(".rs").unwrap_or(&first).to_string();
        if module == "lib" || module == "main" {
            continue;
        }
        let deps = graph.entry(module.clone()).or_default();
        let text = std::fs::read_to_string(&file).unwrap();
        for line in text.lines() {
            let code = line.split("//").next().unwrap_or("");
            for name in named_modules(code) {
                if name != module {
                    deps.insert(name);
                }
            }
        }
    }
    // Macros and items of the root (`crate::record!`) are not modules.
    let modules: BTreeSet<String> = graph.keys().cloned().collect();
    for deps in graph.values_mut() {
        deps.retain(|d| modules.contains(d));
    }
    graph
}

fn collect(dir: &Path, files: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            collect(&path, files);
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
}

/// The top-level modules a line of code names: `crate::a::..`, `crate::{a, b::c}`.
fn named_modules(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find("crate::") {
        let after = &rest[i + "crate::".len()..];
        if let Some(group) = after.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for item in group[..end].split(',') {
                let name: String = item.trim().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                if !name.is_empty() {
                    out.push(name);
                }
            }
        } else {
            let name: String = after.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            // `crate::Name` (an item of the root) is not a module.
            if name.starts_with(|c: char| c.is_ascii_lowercase()) {
                out.push(name);
            }
        }
        rest = after;
    }
    out
}

/// A cycle of the graph, if there is one (as the path around it).
fn cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        graph: &BTreeMap<String, BTreeSet<String>>,
        node: &str,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = path.iter().position(|n| n == node) {
            let mut c = path[i..].to_vec();
            c.push(node.to_string());
            return Some(c);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(c) = visit(graph, next, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(node.to_string());
        None
    }
    let mut done = BTreeSet::new();
    graph.keys().find_map(|n| visit(graph, n, &mut Vec::new(), &mut done))
}

#[test]
fn top_level_modules_form_no_cycle() {
    let graph = graph();
    assert!(graph.contains_key("session") && graph.contains_key("commands"), "the sources were found");
    assert!(graph["commands"].contains("session"), "crate:: paths are seen");
    if let Some(c) = cycle(&graph) {
        panic!("module cycle: {}\nthe graph: {graph:#?}", c.join(" -> "));
    }
}

#[test]
fn the_session_does_not_know_the_command_line() {
    let graph = graph();
    assert!(!graph["session"].contains("cli"), "session imports cli: {:?}", graph["session"]);
    assert!(!graph["cli"].contains("commands"), "cli imports commands: {:?}", graph["cli"]);
}

#[test]
fn module_names_are_read_from_paths_and_groups() {
    assert_eq!(named_modules("use crate::session::{Flow, Session};"), ["session"]);
    assert_eq!(named_modules("use crate::{format, out::Out};"), ["format", "out"]);
    assert_eq!(named_modules("let x = crate::format::f(crate::EXIT_USAGE);"), ["format"]);
    let mut g = BTreeMap::new();
    g.insert("a".to_string(), BTreeSet::from(["b".to_string()]));
    g.insert("b".to_string(), BTreeSet::from(["a".to_string()]));
    assert_eq!(cycle(&g), Some(vec!["a".to_string(), "b".to_string(), "a".to_string()]));
    g.insert("b".to_string(), BTreeSet::new());
    assert_eq!(cycle(&g), None);
}
