//! Threads and stacks: threads, thread, threadgroups, threadgroup, where, wherei, up, down,
//! locals, threadlocks, list.

use jdi::{ThreadGroupReference, ThreadReference, VirtualMachine};
use serde_json::json;

use crate::format::{loc_info, thread_status};
use crate::session::Session;

/// Every thread group, depth first from the top-level ones (jdb's `ThreadGroupIterator`).
pub(crate) async fn all_groups(
    vm: &VirtualMachine,
    from: Option<ThreadGroupReference>,
) -> jdi::Result<Vec<ThreadGroupReference>> {
    let mut out = Vec::new();
    let mut stack: Vec<ThreadGroupReference> = match from {
        Some(g) => vec![g],
        None => vm.top_level_thread_groups().await?.into_iter().rev().collect(),
    };
    while let Some(g) = stack.pop() {
        let (_, children) = g.children().await?;
        out.push(g);
        stack.extend(children.into_iter().rev());
    }
    Ok(out)
}

impl Session {
    /// The current thread group (default: the first top-level one).
    async fn thread_group(&mut self) -> jdi::Result<Option<ThreadGroupReference>> {
        if self.position.group().is_none()
            && let Some(vm) = self.vm()
        {
            self.position.set_group(vm.top_level_thread_groups().await?.into_iter().next());
        }
        Ok(self.position.group().cloned())
    }

    async fn find_group(&self, name: &str) -> Option<ThreadGroupReference> {
        let vm = self.vm()?;
        for g in all_groups(vm, None).await.ok()? {
            if g.name().await.ok()? == name {
                return Some(g);
            }
        }
        None
    }

    pub(crate) async fn cmd_threads(&mut self, args: &str) {
        let group = if args.is_empty() {
            match self.thread_group().await {
                Ok(Some(g)) => g,
                Ok(None) => return,
                Err(e) => return self.out.error(e.to_string()),
            }
        } else {
            match self.find_group(args).await {
                Some(g) => g,
                None => return self.out.error(format!("\"{args}\" is not a valid threadgroup name.")),
            }
        };
        if let Err(e) = self.print_thread_group(group).await {
            self.out.error(e.to_string());
        }
    }

    async fn print_thread_group(&mut self, group: ThreadGroupReference) -> jdi::Result<()> {
        let Some(vm) = self.vm().cloned() else { return Ok(()) };
        let mut listed = Vec::new();
        for g in all_groups(&vm, Some(group.clone())).await? {
            let gname = g.name().await?;
            for t in g.threads().await? {
                listed.push((gname.clone(), t));
            }
        }
        // Groups list platform threads only. Listing every group (from the first top-level one),
        // jdb adds the virtual threads it knows, under their own group.
        if vm.top_level_thread_groups().await?.first() == Some(&group) {
            for t in self.known_virtual_threads().await? {
                let gname = match t.thread_group().await {
                    Ok(Some(g)) => g.name().await?,
                    _ => continue,
                };
                listed.push((gname, t));
            }
        }
        let mut rows = Vec::new();
        for (gname, t) in listed {
            let ty = t.as_object().reference_type().await?.name();
            let desc = format!("({ty}){}", t.id().0);
            let name = t.name().await?;
            let (status, _) = t.status().await?;
            let bp = t.is_at_breakpoint().await.unwrap_or(false);
            rows.push((gname, desc, name, status, bp, t.id().0));
        }
        let id_width = rows.iter().map(|r| r.1.chars().count()).max().unwrap_or(0);
        let name_width = rows.iter().map(|r| r.2.chars().count()).max().unwrap_or(0);
        self.out.line(format!("Group {}:", group.name().await?));
        let mut current_group = group.name().await?;
        let mut data = Vec::new();
        for (g, desc, name, status, bp, id) in rows {
            if g != current_group {
                self.out.line(format!("Group {g}:"));
                current_group = g.clone();
            }
            let bp_text = if bp { " (at breakpoint)" } else { "" };
            let status_text = thread_status(status);
            self.out.line(format!("  {desc:<id_width$} {name:<name_width$} {status_text}{bp_text}"));
            data.push(json!({"group": g, "id": id, "name": name, "status": status_text, "at_breakpoint": bp}));
        }
        self.out.data("threads", json!(data));
        Ok(())
    }

    pub(crate) async fn cmd_thread(&mut self, args: &str) {
        if args.is_empty() {
            return self.out.error("Thread number not specified.");
        }
        match self.thread_by_token(args).await {
            Ok(t) => {
                self.position.select(t);
            }
            Err(e) => self.out.error(e),
        }
    }

    pub(crate) async fn cmd_threadgroups(&mut self) {
        let Some(vm) = self.vm().cloned() else { return };
        match all_groups(&vm, None).await {
            Ok(groups) => {
                for (i, g) in groups.iter().enumerate() {
                    let ty = g.as_object().reference_type().await.map(|t| t.name()).unwrap_or_default();
                    let name = g.name().await.unwrap_or_default();
                    self.out.line(format!("{}. ({ty}){} {name}", i + 1, g.id().0));
                }
            }
            Err(e) => self.out.error(e.to_string()),
        }
    }

    pub(crate) async fn cmd_threadgroup(&mut self, args: &str) {
        if args.is_empty() {
            self.position.set_group(None);
            return;
        }
        match self.find_group(args).await {
            Some(g) => self.position.set_group(Some(g)),
            None => self.out.error(format!("\"{args}\" is not a valid threadgroup name.")),
        }
    }

    /// `where [id|all]`, `wherei`: the stack from the current frame down.
    pub(crate) async fn cmd_where(&mut self, args: &str, pc: bool) {
        if args.is_empty() {
            let Some(thread) = self.position.thread().cloned() else {
                return self.out.error("No thread specified.");
            };
            let from = self.position.frame_index();
            self.dump_stack(&thread, from, pc).await;
        } else if args.eq_ignore_ascii_case("all") {
            let threads = match self.known_threads().await {
                Ok(t) => t,
                Err(e) => return self.out.error(e.to_string()),
            };
            for t in threads {
                let name = t.name().await.unwrap_or_default();
                self.out.line(format!("{name}:"));
                self.dump_stack(&t, 0, pc).await;
            }
        } else {
            match self.thread_by_token(args).await {
                Ok(t) => {
                    self.position.select(t.clone());
                    self.dump_stack(&t, 0, pc).await;
                }
                Err(e) => self.out.error(e),
            }
        }
    }

    async fn dump_stack(&mut self, thread: &ThreadReference, from: i32, pc: bool) {
        let Some(vm) = self.vm().cloned() else { return };
        match thread.is_suspended().await {
            Ok(true) => {}
            Ok(false) => return self.out.error("Current thread isn't suspended."),
            Err(e) => return self.out.error(e.to_string()),
        }
        let frames = match thread.frames().await {
            Ok(f) => f,
            Err(e) => return self.out.error(format!("Thread is not running (no stack): {e}")),
        };
        let mut data = Vec::new();
        for (i, f) in frames.iter().enumerate().skip(from.max(0) as usize) {
            match loc_info(&vm, f.location()).await {
                Ok(info) => {
                    self.out.line(info.frame_line(i + 1, pc));
                    data.push(info.to_json());
                }
                Err(e) => self.out.line(format!("  [{}] <unknown location: {e}>", i + 1)),
            }
        }
        self.out.data("frames", json!(data));
    }

    /// `up [n]` (`up == true`) and `down [n]`.
    pub(crate) async fn cmd_up_down(&mut self, args: &str, up: bool) {
        let Some(thread) = self.position.thread().cloned() else {
            return self.out.error("Current thread not set.");
        };
        let n: i32 = if args.is_empty() { 1 } else { args.parse().unwrap_or(0) };
        if n <= 0 {
            return self.out.error(if up { "Usage: up [n frames]" } else { "Usage: down [n frames]" });
        }
        if !thread.is_suspended().await.unwrap_or(false) {
            return self.out.error("Current thread isn't suspended.");
        }
        let count = thread.frame_count().await.unwrap_or(0);
        if let Err(e) = self.position.move_frame(up, n, count) {
            return self.out.error(e);
        }
        self.refresh_completions().await;
    }

    pub(crate) async fn cmd_locals(&mut self) {
        if self.position.thread().is_none() {
            return self.out.error("No default thread specified: use the \"thread\" command first.");
        }
        let frame = match self.current_frame().await {
            Ok(Some(f)) => f,
            Ok(None) => {
                return self.out.error(
                    "Local variable information not available.  Compile with -g to generate variable information",
                );
            }
            Err(e) => return self.out.error(e),
        };
        let vars = match frame.visible_variables().await {
            Ok(mut v) => {
                // JDI's order: by scope start, then slot.
                v.sort_by_key(|v| (v.start, v.slot));
                v
            }
            Err(e) if e.code() == Some(jdi::protocol::ErrorCode::ABSENT_INFORMATION) => {
                return self.out.error(
                    "Local variable information not available.  Compile with -g to generate variable information",
                );
            }
            Err(e) => return self.out.error(e.to_string()),
        };
        if vars.is_empty() {
            self.out.line("No local variables");
            return;
        }
        let values = match frame.get_values(&vars).await {
            Ok(v) => v,
            Err(e) => return self.out.error(e.to_string()),
        };
        let Some(vm) = self.vm().cloned() else { return };
        let mut shown = Vec::new();
        for (var, v) in vars.iter().zip(&values) {
            let text = vm.value_mirror(*v).display().await.unwrap_or_else(|e| e.to_string());
            shown.push((var.is_argument, var.name.clone(), text));
        }
        let mut args_json = serde_json::Map::new();
        let mut locals_json = serde_json::Map::new();
        self.out.line("Method arguments:");
        for (_, name, text) in shown.iter().filter(|s| s.0) {
            self.out.line(format!("{name} = {text}"));
            args_json.insert(name.clone(), json!(text));
        }
        self.out.line("Local variables:");
        for (_, name, text) in shown.iter().filter(|s| !s.0) {
            self.out.line(format!("{name} = {text}"));
            locals_json.insert(name.clone(), json!(text));
        }
        self.out.data("arguments", serde_json::Value::Object(args_json));
        self.out.data("locals", serde_json::Value::Object(locals_json));
    }

    pub(crate) async fn cmd_threadlocks(&mut self, args: &str) {
        if args.is_empty() {
            let Some(t) = self.position.thread().cloned() else {
                return self.out.error("Current thread not set.");
            };
            self.print_thread_locks(&t).await;
        } else if args.eq_ignore_ascii_case("all") {
            for t in self.known_threads().await.unwrap_or_default() {
                self.print_thread_locks(&t).await;
            }
        } else {
            match self.thread_by_token(args).await {
                Ok(t) => {
                    self.position.select(t.clone());
                    self.print_thread_locks(&t).await;
                }
                Err(e) => self.out.error(e),
            }
        }
    }

    async fn print_thread_locks(&mut self, t: &ThreadReference) {
        let Some(vm) = self.vm().cloned() else { return };
        let name = t.name().await.unwrap_or_default();
        self.out.line(format!("Monitor information for thread {name}:"));
        let owned = match t.owned_monitors().await {
            Ok(o) => o,
            Err(_) => return self.out.error("Threads must be suspended"),
        };
        if owned.is_empty() {
            self.out.line("  No monitors owned");
        }
        for m in owned {
            let shown =
                vm.value_mirror(jdi::Value::Object(jdi::Tag::Object, m.id())).display().await.unwrap_or_default();
            self.out.line(format!("  Owned monitor: {shown}"));
        }
        match t.current_contended_monitor().await {
            Ok(None) => self.out.line("  Not waiting for a monitor"),
            Ok(Some(m)) => {
                let shown =
                    vm.value_mirror(jdi::Value::Object(jdi::Tag::Object, m.id())).display().await.unwrap_or_default();
                self.out.line(format!("   Waiting for monitor: {shown}"));
            }
            Err(_) => self.out.error("Threads must be suspended"),
        }
    }

    /// `list [line|method]`: ten lines around the current line (or the one given).
    pub(crate) async fn cmd_list(&mut self, args: &str) {
        if self.position.thread().is_none() {
            return self.out.error("No thread specified.");
        }
        let frame = match self.current_frame().await {
            Ok(Some(f)) => f,
            Ok(None) => return self.out.error("No frames on the current call stack"),
            Err(e) => return self.out.error(e),
        };
        let Some(vm) = self.vm().cloned() else { return };
        let info = match loc_info(&vm, frame.location()).await {
            Ok(i) => i,
            Err(e) => return self.out.error(e.to_string()),
        };
        if info.native {
            return self.out.error("Current method is native");
        }
        let Some(source_name) = info.source_name.clone() else {
            return self.out.error(format!("No source information available for: {}", info.location_string()));
        };
        let line = if args.is_empty() {
            info.line
        } else if let Ok(n) = args.replace(',', "").parse::<i32>() {
            n
        } else {
            let ty = match frame.source_location().await {
                Ok(l) => l.declaring_type,
                Err(e) => return self.out.error(e.to_string()),
            };
            let methods = ty.methods_by_name(args).await.unwrap_or_default();
            match methods.as_slice() {
                [] => {
                    return self.out.error(format!(
                        "\"{args}\" is not a valid line number or method name for class \"{}\"",
                        ty.name()
                    ));
                }
                [m] => {
                    let loc = m.line_locations().await.ok().and_then(|l| l.first().copied());
                    match loc {
                        Some(l) => m.line_of(l.index).await.unwrap_or(-1),
                        None => -1,
                    }
                }
                _ => return self.out.error(format!("\"{args}\" is an ambiguous method name in \"{}\"", ty.name())),
            }
        };
        if line < 0 {
            return self.out.error("Source line numbers not available for this location.");
        }
        let Some(lines) = self.sources.lines(&info.class_signature, &source_name) else {
            return self.out.error(format!("Source file not found: {source_name}"));
        };
        if !args.is_empty() && (line < 1 || line as usize > lines.len()) {
            return self.out.error(format!(
                "{} is an invalid line number for {}",
                crate::format::group_int(line.into()),
                info.class_name
            ));
        }
        let start = (line - 4).max(1);
        for n in start..start + 10 {
            let Some(text) = lines.get(n as usize - 1) else { break };
            // jdb 17 marks the line asked for (the current one by default).
            let shown = self.source_line_text(n, text, n == line);
            self.out.line(shown);
        }
    }
}
