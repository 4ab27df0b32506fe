//! The event requests the user asked for: breakpoint/catch/watch specs (set where their class
//! is loaded, deferred until it is), the class patterns steps and traces skip (`exclude`), and
//! the method trace in effect.
//!
//! A spec is resolved as jdb's `resolveNow`/`resolveAll` do: set in every loaded matching class,
//! with a class-prepare request standing by for classes still to come (always, for patterns).

use jdi::{EventRequest, Method, ReferenceType, RequestHandle, SuspendPolicy, VirtualMachine};

use crate::out::Out;
use crate::specs::Spec;

/// Specs, excludes and the trace.
pub struct Requests {
    specs: Vec<Spec>,
    excludes: Vec<String>,
    trace: Trace,
}

/// `trace methods` / `trace method exit(s)`: what to say it is, its requests, and for
/// `method exit` the one method whose exit is reported.
#[derive(Default)]
struct Trace {
    command: Option<String>,
    requests: Vec<RequestHandle>,
    exit_of: Option<Method>,
}

impl Default for Requests {
    fn default() -> Self {
        Requests {
            specs: Vec::new(),
            excludes: ["java.*", "javax.*", "sun.*", "com.sun.*", "jdk.*"].map(String::from).to_vec(),
            trace: Trace::default(),
        }
    }
}

impl Requests {
    pub fn specs(&self) -> &[Spec] {
        &self.specs
    }

    /// Whether a spec equal to `spec` is set or deferred already.
    pub fn has_spec(&self, spec: &Spec) -> bool {
        self.specs.iter().any(|s| s.same(spec))
    }

    /// jdb's `resolveNow`: adds the spec and sets it if a matching class is loaded, or defers it
    /// (always, without a VM). Returns false when it could not be set.
    pub async fn add_spec(&mut self, vm: Option<&VirtualMachine>, out: &Out, mut spec: Spec) -> bool {
        let Some(vm) = vm else {
            out.line(format!("Deferring {}.\nIt will be set after the class is loaded.", spec.describe()));
            self.specs.push(spec);
            return true;
        };
        match resolve_eagerly(vm, &mut spec).await {
            Ok(true) => {
                out.line(format!("Set {}", spec.describe()));
                self.specs.push(spec);
                true
            }
            Ok(false) => {
                out.line(format!("Deferring {}.\nIt will be set after the class is loaded.", spec.describe()));
                self.specs.push(spec);
                true
            }
            Err(e) => {
                out.error(format!("Unable to set {} : {e}", spec.describe()));
                if let Some(p) = spec.prepare.take() {
                    let _ = p.delete().await;
                }
                false
            }
        }
    }

    /// On connecting: tries every deferred spec (jdb's `resolveAll`).
    pub async fn resolve_all(&mut self, vm: &VirtualMachine, out: &Out) {
        for spec in &mut self.specs {
            if spec.is_resolved() && spec.is_unique() {
                // jdb says so again for specs set already (`Set deferred uncaught java.lang.Throwable`).
                out.line(format!("Set deferred {}", spec.describe()));
                continue;
            }
            if let Ok(true) = resolve_eagerly(vm, spec).await {
                out.line(format!("Set deferred {}", spec.describe()));
            }
        }
    }

    /// A class was prepared: sets the specs waiting for it. Returns false if one could not be set
    /// (jdb then stops).
    pub async fn resolve_on_prepare(&mut self, vm: &VirtualMachine, out: &Out, ty: &ReferenceType) -> bool {
        let name = ty.name();
        let mut ok = true;
        for spec in &mut self.specs {
            if !spec.matches(&name) || (spec.is_unique() && spec.is_resolved()) {
                continue;
            }
            match spec.resolve_in(vm, ty).await {
                Ok(handle) => {
                    spec.resolved.push(handle);
                    out.line(format!("Set deferred {}", spec.describe()));
                    if spec.is_unique()
                        && let Some(p) = spec.prepare.take()
                    {
                        let _ = p.delete().await;
                    }
                }
                Err(e) => {
                    out.error(format!("Unable to set deferred {} : {e}", spec.describe()));
                    ok = false;
                }
            }
        }
        ok
    }

    /// Deletes the spec equal to `proto` (its requests too). Returns whether there was one.
    pub async fn delete_spec(&mut self, proto: &Spec) -> bool {
        let Some(i) = self.specs.iter().position(|s| s.same(proto)) else { return false };
        let spec = self.specs.remove(i);
        for h in spec.resolved {
            let _ = h.delete().await;
        }
        if let Some(p) = spec.prepare {
            let _ = p.delete().await;
        }
        true
    }

    /// The class patterns steps into/over and method traces skip.
    pub fn excludes(&self) -> &[String] {
        &self.excludes
    }

    /// The excludes as `exclude` lists them: each followed by a comma.
    pub fn excludes_shown(&self) -> String {
        self.excludes.iter().map(|p| format!("{p},")).collect()
    }

    /// `exclude none` or `exclude p1,p2 p3;p4`.
    pub fn set_excludes(&mut self, text: &str) {
        if text == "none" {
            self.excludes.clear();
        } else {
            self.excludes = text.split([' ', ',', ';']).filter(|p| !p.is_empty()).map(String::from).collect();
        }
    }

    /// `request` with the excludes and `policy`.
    pub fn excluding(&self, mut request: EventRequest, policy: SuspendPolicy) -> EventRequest {
        for p in &self.excludes {
            request = request.class_exclude(p);
        }
        request.suspend(policy)
    }

    /// What `trace` says is in effect.
    pub fn trace_command(&self) -> Option<&str> {
        self.trace.command.as_deref()
    }

    /// With `trace method exit`: the one method whose exits are reported.
    pub fn trace_exit_of(&self) -> Option<&Method> {
        self.trace.exit_of.as_ref()
    }

    /// Ends the trace in effect: deletes its requests.
    pub async fn untrace(&mut self) {
        for h in std::mem::take(&mut self.trace.requests) {
            let _ = h.delete().await;
        }
        self.trace.exit_of = None;
        self.trace.command = None;
    }

    /// Records the trace in effect (`command` is what `trace` shows).
    pub fn set_trace_command(&mut self, command: String) {
        self.trace.command = Some(command);
    }

    /// `trace method exit`: reports the exits of `method` only.
    pub fn set_trace_exit_of(&mut self, method: Option<Method>) {
        self.trace.exit_of = method;
    }

    /// A request of the trace in effect (deleted by [`Requests::untrace`]).
    pub fn add_trace_request(&mut self, handle: RequestHandle) {
        self.trace.requests.push(handle);
    }
}

/// Sets the spec in every loaded matching class; stands a class-prepare request by for
/// classes still to come (always, for patterns). Ok(true) when set somewhere.
async fn resolve_eagerly(vm: &VirtualMachine, spec: &mut Spec) -> Result<bool, String> {
    let types: Vec<ReferenceType> = if spec.is_unique() {
        vm.classes_by_name(&spec.pattern).await.map_err(|e| e.to_string())?
    } else {
        vm.all_classes().await.map_err(|e| e.to_string())?.into_iter().filter(|t| spec.matches(&t.name())).collect()
    };
    for ty in &types {
        let handle = spec.resolve_in(vm, ty).await?;
        spec.resolved.push(handle);
        if spec.is_unique() {
            break;
        }
    }
    if (!spec.is_resolved() || !spec.is_unique()) && spec.prepare.is_none() {
        let prepare = EventRequest::class_prepare(&spec.pattern).suspend(SuspendPolicy::All);
        let handle = vm.create_event_request(prepare);
        handle.enable().await.map_err(|e| e.to_string())?;
        spec.prepare = Some(handle);
    }
    Ok(spec.is_resolved())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quiet() -> Out {
        Out::new(Box::new(std::io::sink()), false, false, false)
    }

    #[test]
    fn excludes_start_as_jdbs_and_parse_as_jdb_reads_them() {
        let mut r = Requests::default();
        assert_eq!(r.excludes_shown(), "java.*,javax.*,sun.*,com.sun.*,jdk.*,");
        r.set_excludes("a.*, b.*;c.* d");
        assert_eq!(r.excludes(), ["a.*", "b.*", "c.*", "d"]);
        r.set_excludes("none");
        assert!(r.excludes().is_empty());
        assert_eq!(r.excludes_shown(), "");
    }

    #[tokio::test]
    async fn without_a_vm_specs_are_deferred_once() {
        let mut r = Requests::default();
        let spec = Spec::line("Demo", 50);
        assert!(r.add_spec(None, &quiet(), spec.clone()).await);
        assert!(r.has_spec(&spec));
        assert!(!r.has_spec(&Spec::line("Demo", 51)));
        assert!(r.delete_spec(&spec).await);
        assert!(!r.delete_spec(&spec).await);
        assert!(r.specs().is_empty());
    }
}
