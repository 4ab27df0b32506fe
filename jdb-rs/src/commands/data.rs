//! Values: print, eval, dump, set, lock, disablegc, enablegc.

use jdi::{ArrayReference, ObjectReference, ReferenceType, Tag, Value};
use serde_json::json;

use crate::session::Session;

impl Session {
    /// `print`/`eval`/`dump <expr>`: ` expr = value`, dump listing an object's fields.
    pub(crate) async fn cmd_print(&mut self, rest: &str, dump: bool) {
        if rest.trim().is_empty() {
            return self.out.error("No objects specified.");
        }
        let expr = rest.to_string();
        let (val, ctx) = match self.evaluate(expr.trim()).await {
            Ok(v) => v,
            Err(e) => return self.out.error(e),
        };
        let v = val.value;
        if dump
            && let Value::Object(tag, id) = v
            && !id.is_null()
            && tag != Tag::String
        {
            self.out.line(format!("{expr} = {{"));
            let obj = ObjectReference::new(ctx.vm.clone(), id);
            match obj.reference_type().await {
                Ok(ty) => self.dump_fields(&obj, &ty, &ty).await,
                Err(e) => self.out.error(e.to_string()),
            }
            self.out.line("}");
            return;
        }
        match self.massaged(&ctx, &v).await {
            Ok(s) => {
                self.out.line(format!("{expr} = {s}"));
                self.out.data("value", json!(s));
            }
            Err(e) => self.out.error(e),
        }
    }

    /// jdb's `dump`: the fields of `ty` and its supertypes (`    name: value`), or an array's
    /// elements.
    async fn dump_fields(&mut self, obj: &ObjectReference, ty: &ReferenceType, base: &ReferenceType) {
        let vm = obj.vm().clone();
        if ty.is_array() {
            let arr = ArrayReference::new(vm.clone(), obj.id());
            let values = arr.get_values().await.unwrap_or_default();
            let mut shown = Vec::new();
            for v in values {
                shown.push(vm.value_mirror(v).display().await.unwrap_or_default());
            }
            self.out.line(shown.join(", "));
            return;
        }
        let fields = ty.fields().await.unwrap_or_default();
        for f in &fields {
            let value = match obj.get_value(f).await {
                Ok(v) => vm.value_mirror(v).display().await.unwrap_or_else(|e| e.to_string()),
                Err(e) => format!("<{e}>"),
            };
            let prefix = if ty == base { String::new() } else { format!("{}.", ty.name()) };
            self.out.line(format!("    {prefix}{}: {value}", f.name));
        }
        if ty.is_class() {
            if let Ok(Some(sup)) = ty.superclass().await {
                Box::pin(self.dump_fields(obj, &sup, base)).await;
            }
        } else if ty.is_interface() {
            for sup in ty.interfaces().await.unwrap_or_default() {
                Box::pin(self.dump_fields(obj, &sup, base)).await;
            }
        }
    }

    /// `set <lvalue> = <expr>`.
    pub(crate) async fn cmd_set(&mut self, rest: &str) {
        if !rest.contains('=') {
            return self.out.error("Invalid assignment syntax");
        }
        self.cmd_print(rest, false).await;
    }

    /// `lock <expr>`: who owns the object's monitor and who waits for it.
    pub(crate) async fn cmd_lock(&mut self, rest: &str) {
        let expr = rest.trim();
        if expr.is_empty() {
            return self.out.error("No object specified.");
        }
        let (val, ctx) = match self.evaluate(expr).await {
            Ok(v) => v,
            Err(e) => return self.out.error(e),
        };
        let Value::Object(_, id) = val.value else {
            return self.out.error("Expression must evaluate to an object");
        };
        if id.is_null() {
            return self.out.error("Expression must evaluate to an object");
        }
        let shown = match self.massaged(&ctx, &val.value).await {
            Ok(s) => s,
            Err(e) => return self.out.error(e),
        };
        self.out.line(format!("Monitor information for {expr} ({shown}):"));
        let obj = ObjectReference::new(ctx.vm.clone(), id);
        match obj.monitor_info().await {
            Ok(info) => {
                match info.owner {
                    Some(owner) => {
                        let name = owner.name().await.unwrap_or_default();
                        self.out.line(format!("  Owned by: {name}, entry count: {}", info.entry_count));
                    }
                    None => self.out.line("  Not owned"),
                }
                if info.waiters.is_empty() {
                    self.out.line("  No waiters");
                }
                for w in info.waiters {
                    let name = w.name().await.unwrap_or_default();
                    self.out.line(format!(" Waiting thread: {name}"));
                }
            }
            Err(_) => self.out.error("Threads must be suspended"),
        }
    }

    /// `disablegc <expr>` / `enablegc <expr>`.
    pub(crate) async fn cmd_gc(&mut self, rest: &str, enable: bool) {
        let expr = rest.trim();
        if expr.is_empty() {
            return self.out.error("No object specified.");
        }
        let (val, ctx) = match self.evaluate(expr).await {
            Ok(v) => v,
            Err(e) => return self.out.error(e),
        };
        let Value::Object(_, id) = val.value else {
            return self.out.error("Expression must evaluate to an object");
        };
        if id.is_null() {
            return self.out.error("Expression must evaluate to an object");
        }
        let obj = ObjectReference::new(ctx.vm.clone(), id);
        let r = if enable { obj.enable_collection().await } else { obj.disable_collection().await };
        if let Err(e) = r {
            return self.out.error(e.to_string());
        }
        let shown = self.massaged(&ctx, &val.value).await.unwrap_or_default();
        self.out.line(format!("GC {} for {shown}:", if enable { "Enabled" } else { "Disabled" }));
    }
}
