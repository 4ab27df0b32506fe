//! Classes: classes, class, methods, fields, classpath, redefine.

use jdi::ReferenceType;

use crate::format::typed_name;
use crate::session::Session;

impl Session {
    /// jdb's `getReferenceTypeFromToken`: a loaded class by name, or `*.Name` for the first one
    /// whose name ends so.
    pub(crate) async fn class_from_token(&self, token: &str) -> Option<ReferenceType> {
        let vm = self.vm()?;
        if token.starts_with(|c: char| c.is_ascii_digit()) {
            return None;
        }
        if let Some(suffix) = token.strip_prefix('*') {
            return vm.all_classes().await.ok()?.into_iter().find(|t| t.name().ends_with(suffix));
        }
        vm.classes_by_name(token).await.ok()?.into_iter().next()
    }

    pub(crate) async fn cmd_classes(&mut self) {
        let Some(vm) = self.vm().cloned() else { return };
        match vm.all_classes().await {
            Ok(all) => {
                self.out.line("** classes list **");
                for t in &all {
                    self.out.line(t.name());
                }
            }
            Err(e) => self.out.error(e.to_string()),
        }
    }

    pub(crate) async fn cmd_class(&mut self, args: &str) {
        let mut words = args.split_whitespace();
        let Some(name) = words.next() else { return self.out.error("No class specified.") };
        let all = match words.next() {
            None => false,
            Some(w) if w.eq_ignore_ascii_case("all") => true,
            Some(_) => return self.out.error("Invalid option on class command"),
        };
        let Some(ty) = self.class_from_token(name).await else {
            return self.out.error(format!("\"{name}\" is not a valid id or class name."));
        };
        if let Some(class) = ty.as_class() {
            self.out.line(format!("Class: {}", ty.name()));
            let mut sup = class.superclass().await.ok().flatten();
            while let Some(s) = sup {
                self.out.line(format!("extends: {}", s.name()));
                sup = if all { s.superclass().await.ok().flatten() } else { None };
            }
            let interfaces = if all { class.all_interfaces().await } else { class.interfaces().await };
            for i in interfaces.unwrap_or_default() {
                self.out.line(format!("implements: {}", i.name()));
            }
            for s in class.subclasses().await.unwrap_or_default() {
                self.out.line(format!("subclass: {}", s.name()));
            }
            for n in ty.nested_types().await.unwrap_or_default() {
                self.out.line(format!("nested: {}", n.name()));
            }
        } else if let Some(iface) = ty.as_interface() {
            self.out.line(format!("Interface: {}", ty.name()));
            for s in iface.superinterfaces().await.unwrap_or_default() {
                self.out.line(format!("extends: {}", s.name()));
            }
            for s in iface.subinterfaces().await.unwrap_or_default() {
                self.out.line(format!("subinterface: {}", s.name()));
            }
            for s in iface.implementors().await.unwrap_or_default() {
                self.out.line(format!("implementor: {}", s.name()));
            }
            for n in ty.nested_types().await.unwrap_or_default() {
                self.out.line(format!("nested: {}", n.name()));
            }
        } else {
            self.out.line(format!("Array: {}", ty.name()));
        }
    }

    pub(crate) async fn cmd_methods(&mut self, args: &str) {
        let Some(name) = args.split_whitespace().next() else { return self.out.error("No class specified.") };
        let Some(ty) = self.class_from_token(name).await else {
            return self.out.error(format!("\"{name}\" is not a valid id or class name."));
        };
        match ty.all_methods().await {
            Ok(methods) => {
                self.out.line("** methods list **");
                for m in methods {
                    let declaring = m.declaring_type().await.map(|t| t.name()).unwrap_or_default();
                    self.out.line(format!("{declaring} {}", typed_name(&m)));
                }
            }
            Err(e) => self.out.error(e.to_string()),
        }
    }

    pub(crate) async fn cmd_fields(&mut self, args: &str) {
        let Some(name) = args.split_whitespace().next() else { return self.out.error("No class specified.") };
        let Some(ty) = self.class_from_token(name).await else {
            return self.out.error(format!("\"{name}\" is not a valid id or class name."));
        };
        let (all, visible) = match (ty.all_fields().await, ty.visible_fields().await) {
            (Ok(a), Ok(v)) => (a, v),
            (Err(e), _) | (_, Err(e)) => return self.out.error(e.to_string()),
        };
        self.out.line("** fields list **");
        for f in all {
            let type_name = f.type_name();
            if !visible.contains(&f) {
                self.out.line(format!("{type_name} {} (hidden)", f.name));
            } else if f.declaring_type != ty.id() {
                let declaring = f.declaring_type().await.map(|t| t.name()).unwrap_or_default();
                self.out.line(format!("{type_name} {} (inherited from {declaring})", f.name));
            } else {
                self.out.line(format!("{type_name} {}", f.name));
            }
        }
    }

    pub(crate) async fn cmd_classpath(&mut self) {
        let Some(vm) = self.vm().cloned() else { return };
        match vm.class_paths().await {
            Ok(cp) => {
                self.out.line(format!("base directory: {}", cp.base_dir));
                self.out.line(format!("classpath: [{}]", cp.classpaths.join(", ")));
            }
            Err(_) => self.out.line("The VM does not use paths"),
        }
    }

    /// `redefine <class> <class file>`.
    pub(crate) async fn cmd_redefine(&mut self, args: &str) {
        let mut words = args.split_whitespace();
        let Some(name) = words.next() else { return self.out.error("Specify classes to redefine") };
        let Some(vm) = self.vm().cloned() else { return };
        let classes = vm.classes_by_name(name).await.unwrap_or_default();
        let ty = match classes.as_slice() {
            [] => return self.out.error(format!("No class named '{name}'")),
            [t] => t.clone(),
            _ => return self.out.error(format!("More than one class named: '{name}'")),
        };
        let Some(file) = words.next() else { return self.out.error(format!("Specify file name for class {name}")) };
        let bytes = match std::fs::read(file) {
            Ok(b) => b,
            Err(e) => return self.out.error(format!("Error reading '{file}' - {e}")),
        };
        if let Err(e) = vm.redefine_classes(vec![(ty, bytes)]).await {
            self.out.error(format!("Error redefining {name} to {file} - {e}"));
        }
    }
}
