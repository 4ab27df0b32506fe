//! Source files ↔ classes. A breakpoint names a file and a line; the VM knows classes, each
//! with a `SourceFile` attribute (`Outer.java`) and a package. Every class compiled from a file
//! (top-level, nested, anonymous, local; lambdas' bodies are synthetic methods of these) shares
//! the file's package and source name, which is how we match them; classes not yet loaded are
//! awaited with class-prepare requests on the file's top-level name and its nested names.
//! Going back, a class's package and source name give a path relative to the source roots.
//! Pure functions, except the two that look at the file system (named so).

use std::path::{Path, PathBuf};

/// What a source file holds, as far as matching classes goes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SourceFile {
    /// `com.example`, or empty for the default package.
    pub package: String,
    /// `Outer.java`.
    pub file_name: String,
}

impl SourceFile {
    /// `com.example.Outer`: the top-level class named after the file.
    pub fn main_class(&self) -> String {
        let stem = self.file_name.strip_suffix(".java").unwrap_or(&self.file_name);
        qualify(&self.package, stem)
    }

    /// Class-prepare patterns that cover the file's classes: the main class and its nested ones.
    pub fn prepare_patterns(&self) -> Vec<String> {
        let main = self.main_class();
        vec![main.clone(), format!("{main}$*")]
    }

    /// Whether a class (by binary name and `SourceFile` attribute) was compiled from this file.
    pub fn contains(&self, class_name: &str, source_name: &str) -> bool {
        source_name == self.file_name && package_of(class_name) == self.package
    }
}

fn qualify(package: &str, name: &str) -> String {
    if package.is_empty() { name.to_string() } else { format!("{package}.{name}") }
}

/// `a.b` of `a.b.C$D`.
pub fn package_of(class_name: &str) -> &str {
    class_name.rsplit_once('.').map(|(p, _)| p).unwrap_or("")
}

/// The package a Java source declares (`package a.b;`), skipping comments; empty if none.
pub fn declared_package(text: &str) -> String {
    let mut rest = text;
    loop {
        rest = rest.trim_start();
        if let Some(r) = rest.strip_prefix("//") {
            rest = r.split_once('\n').map(|(_, r)| r).unwrap_or("");
        } else if let Some(r) = rest.strip_prefix("/*") {
            rest = r.split_once("*/").map(|(_, r)| r).unwrap_or("");
        } else if rest.starts_with('@') && !rest.starts_with("@interface") {
            // Package annotations (package-info.java): skip the annotation's name and arguments.
            let end = rest.find(|c: char| c.is_whitespace() || c == '(').unwrap_or(rest.len());
            rest = &rest[end..];
            if rest.trim_start().starts_with('(') {
                rest = rest.split_once(')').map(|(_, r)| r).unwrap_or("");
            }
        } else {
            break;
        }
    }
    match rest.strip_prefix("package") {
        Some(r) if r.starts_with(|c: char| c.is_whitespace() || c == '/') => {
            let decl = r.split(';').next().unwrap_or("");
            decl.split_whitespace().collect::<String>()
        }
        _ => String::new(),
    }
}

/// The package of a file under one of `roots` (from its folder), if it is under one.
pub fn package_from_roots(path: &Path, roots: &[PathBuf]) -> Option<String> {
    let dir = path.parent()?;
    roots
        .iter()
        .filter_map(|r| dir.strip_prefix(r).ok())
        .min_by_key(|rel| rel.components().count())
        .map(|rel| rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect::<Vec<_>>().join("."))
}

/// What file `path` is: its package from its `package` declaration (reads the file), else from
/// the source roots, else the default package.
pub fn source_file_of_path(path: &Path, roots: &[PathBuf]) -> SourceFile {
    let file_name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let package = match std::fs::read_to_string(path) {
        Ok(text) => declared_package(&text),
        Err(_) => package_from_roots(path, roots).unwrap_or_default(),
    };
    SourceFile { package, file_name }
}

/// `a/b/C.java` for class `a.b.C$1` with source name `C.java`.
pub fn relative_path(class_name: &str, source_name: &str) -> PathBuf {
    let package = package_of(class_name);
    let mut p = PathBuf::new();
    for part in package.split('.').filter(|s| !s.is_empty()) {
        p.push(part);
    }
    p.push(source_name);
    p
}

/// The first root holding `rel` (looks at the file system).
pub fn find_in_roots(roots: &[PathBuf], rel: &Path) -> Option<PathBuf> {
    roots.iter().map(|r| r.join(rel)).find(|p| p.is_file())
}

/// Where a breakpoint at `line` lands, given a class's line table as `(method, line)` pairs:
/// the requested line if code starts there, else the next line with code in a method whose lines
/// span the requested one (javac gives no line to a declaration or a blank line; a breakpoint
/// there stops at the next statement, as in other Java debuggers). `None` if no method spans it.
pub fn resolve_line(table: &[(usize, i64)], line: i64) -> Option<i64> {
    use std::collections::BTreeMap;
    let mut spans: BTreeMap<usize, (i64, i64)> = BTreeMap::new();
    for &(m, l) in table {
        let e = spans.entry(m).or_insert((l, l));
        e.0 = e.0.min(l);
        e.1 = e.1.max(l);
    }
    if table.iter().any(|&(_, l)| l == line) {
        return Some(line);
    }
    table
        .iter()
        .filter(|&&(m, l)| l > line && spans.get(&m).is_some_and(|&(lo, hi)| lo <= line && line <= hi))
        .map(|&(_, l)| l)
        .min()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_of_a_file() {
        let f = SourceFile { package: "com.ex".into(), file_name: "Outer.java".into() };
        assert_eq!(f.main_class(), "com.ex.Outer");
        assert_eq!(f.prepare_patterns(), vec!["com.ex.Outer", "com.ex.Outer$*"]);
        assert!(f.contains("com.ex.Outer", "Outer.java"));
        assert!(f.contains("com.ex.Outer$Inner$1", "Outer.java"));
        assert!(f.contains("com.ex.Helper", "Outer.java"), "a second top-level class of the file");
        assert!(!f.contains("com.other.Outer", "Outer.java"));
        assert!(!f.contains("com.ex.sub.Outer", "Outer.java"));
        assert!(!f.contains("com.ex.Outer2", "Outer2.java"));
        let d = SourceFile { package: String::new(), file_name: "Main.java".into() };
        assert_eq!(d.main_class(), "Main");
        assert!(d.contains("Main$Nested", "Main.java"));
        assert!(!d.contains("p.Main", "Main.java"));
    }

    #[test]
    fn package_declarations() {
        assert_eq!(declared_package("package a.b;\nclass X {}"), "a.b");
        assert_eq!(declared_package("// c\n/* multi\n line */ package  a . b ; "), "a.b");
        assert_eq!(declared_package("@Deprecated package a;"), "a");
        assert_eq!(declared_package("@Ann(x = 1) package a;"), "a");
        assert_eq!(declared_package("class packaged {}"), "");
        assert_eq!(declared_package("packagex;"), "");
        assert_eq!(declared_package(""), "");
    }

    #[test]
    fn packages_from_roots_and_back() {
        let roots = vec![PathBuf::from("/w/src"), PathBuf::from("/w/src/main/java")];
        assert_eq!(package_from_roots(Path::new("/w/src/main/java/a/b/C.java"), &roots).as_deref(), Some("a.b"));
        assert_eq!(package_from_roots(Path::new("/w/src/C.java"), &roots).as_deref(), Some(""));
        assert_eq!(package_from_roots(Path::new("/elsewhere/C.java"), &roots), None);
        assert_eq!(relative_path("a.b.C$1", "C.java"), PathBuf::from("a/b/C.java"));
        assert_eq!(relative_path("C", "C.java"), PathBuf::from("C.java"));
    }

    #[test]
    fn lines_resolve_to_code() {
        // Method 0 spans lines 10..=14 (no code on 12), method 1 (a lambda) is on line 11 too.
        let table = [(0, 10), (0, 11), (0, 13), (0, 14), (1, 11)];
        assert_eq!(resolve_line(&table, 11), Some(11));
        assert_eq!(resolve_line(&table, 12), Some(13));
        assert_eq!(resolve_line(&table, 9), None, "before any method");
        assert_eq!(resolve_line(&table, 15), None, "after every method");
        assert_eq!(resolve_line(&[], 1), None);
    }
}
