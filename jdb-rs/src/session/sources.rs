//! Where source lines come from: the source path given (`-sourcepath`, `use`), else the VM's
//! class path once connected (as jdb), with the lines of each file read once.

use std::sync::Arc;

use crate::source::SourcePath;

pub struct Sources {
    path: SourcePath,
    /// Whether the path was given (else it becomes the VM's class path on connect).
    given: bool,
}

impl Sources {
    /// The path from the command line, if one was given.
    pub fn new(sourcepath: Option<&str>) -> Sources {
        Sources { path: SourcePath::new(sourcepath.unwrap_or("")), given: sourcepath.is_some() }
    }

    /// `use PATH`.
    pub fn set(&mut self, path: &str) {
        self.path = SourcePath::new(path);
        self.given = true;
    }

    /// Whether the VM's class path is to serve as the source path (none was given).
    pub fn wants_class_path(&self) -> bool {
        !self.given && self.path.is_empty()
    }

    /// On connecting: without a path of its own, the session reads sources from the VM's class
    /// path (`None`: the VM did not say; `.` then).
    pub fn adopt_class_path(&mut self, class_paths: Option<&[String]>) {
        if !self.wants_class_path() {
            return;
        }
        let path = match class_paths {
            Some(cp) if !cp.is_empty() => cp.join(":"),
            _ => ".".into(),
        };
        self.path = SourcePath::new(&path);
    }

    /// The path as `use` prints it.
    pub fn display(&self) -> String {
        self.path.display()
    }

    /// The lines of a class's source file.
    pub fn lines(&mut self, class_signature: &str, source_name: &str) -> Option<Arc<Vec<String>>> {
        self.path.lines(class_signature, source_name)
    }

    /// Line `line` (1-based) of a class's source.
    pub fn line(&mut self, class_signature: &str, source_name: &str, line: i32) -> Option<String> {
        self.path.line(class_signature, source_name, line)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_class_path_serves_only_without_a_path_of_its_own() {
        let mut s = Sources::new(None);
        s.adopt_class_path(Some(&["/a".into(), "/b.jar".into(), "/c".into()]));
        assert_eq!(s.display(), "/a:/c", "jars are skipped");
        s.adopt_class_path(Some(&["/other".into()]));
        assert_eq!(s.display(), "/a:/c", "only the first connection sets it");

        let mut s = Sources::new(None);
        s.adopt_class_path(None);
        assert_eq!(s.display(), ".");

        let mut s = Sources::new(Some(""));
        s.adopt_class_path(Some(&["/a".into()]));
        assert_eq!(s.display(), "", "an empty path given stays empty");

        let mut s = Sources::new(Some("/src"));
        s.set("/x:/y");
        s.adopt_class_path(Some(&["/a".into()]));
        assert_eq!(s.display(), "/x:/y");
    }
}
