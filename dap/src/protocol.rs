//! The subset of the Debug Adapter Protocol this adapter speaks, defined once with serde.
//!
//! We define our own types rather than use the `dap` crate (0.4.1-alpha, 2023, unmaintained, with
//! forks no better kept): the subset is small, and the node tests validate every message we send
//! against the protocol's JSON schema, which is the check that these definitions are right.
//! Arguments are read leniently (unknown fields ignored, absent ones defaulted) because editors
//! send extra attributes; bodies are written with the schema's field names (camelCase) and
//! optional fields left out when absent.

use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

/// Any incoming message: only requests are expected from a client.
#[derive(Debug, Deserialize)]
pub struct Incoming {
    #[serde(default)]
    pub seq: i64,
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub command: Option<String>,
    #[serde(default)]
    pub arguments: Option<Json>,
}

/// Parses `arguments` into `T`, with a message that names the command on failure.
pub fn args<T: for<'de> Deserialize<'de>>(command: &str, arguments: &Option<Json>) -> Result<T, String> {
    let v = arguments.clone().unwrap_or(Json::Object(Default::default()));
    serde_json::from_value(v).map_err(|e| format!("{command}: bad arguments: {e}"))
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Response {
    pub seq: i64,
    #[serde(rename = "type")]
    pub kind: &'static str,
    #[serde(rename = "request_seq")]
    pub request_seq: i64,
    pub success: bool,
    pub command: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub body: Option<Json>,
}

#[derive(Debug, Serialize)]
pub struct EventMsg {
    pub seq: i64,
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub event: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub body: Option<Json>,
}

// ---- arguments ----

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct InitializeArgs {
    #[serde(rename = "clientID")]
    pub client_id: Option<String>,
    pub lines_start_at1: Option<bool>,
    pub columns_start_at1: Option<bool>,
    pub path_format: Option<String>,
}

/// A string, or an array of strings (vscode-java-debug accepts both for `vmArgs` and `args`).
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum StrOrList {
    Str(String),
    List(Vec<String>),
}

impl StrOrList {
    /// As words: a string is split on white space (quotes group words).
    pub fn words(&self) -> Vec<String> {
        match self {
            StrOrList::List(v) => v.clone(),
            StrOrList::Str(s) => split_words(s),
        }
    }
}

/// Splits a command-line string into words: white space separates, double or single quotes
/// group.
pub fn split_words(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut any = false;
    for c in s.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => cur.push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                any = true;
            }
            (None, c) if c.is_whitespace() => {
                if any || !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
                any = false;
            }
            (None, c) => cur.push(c),
        }
    }
    if any || !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// `launch`, with vscode-java-debug's attribute names.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct LaunchArgs {
    pub main_class: Option<String>,
    pub class_paths: Vec<String>,
    pub module_paths: Vec<String>,
    pub source_paths: Vec<String>,
    pub vm_args: Option<StrOrList>,
    pub args: Option<StrOrList>,
    pub cwd: Option<String>,
    pub env: std::collections::BTreeMap<String, String>,
    pub java_exec: Option<String>,
    pub stop_on_entry: bool,
    pub no_debug: bool,
    /// Use the JDK's own agent (`-agentlib:jdwp`) instead of ours.
    pub jdk_agent: bool,
}

/// `attach`: `hostName` + `port`, or `address` (`host:port`, or `shmem:NAME`).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct AttachArgs {
    pub host_name: Option<String>,
    pub port: Option<Json>,
    pub address: Option<String>,
    pub source_paths: Vec<String>,
    pub timeout: Option<u64>,
}

#[derive(Debug, Default, Clone, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Source {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source_reference: Option<i64>,
}

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SourceBreakpoint {
    pub line: i64,
    pub column: Option<i64>,
    pub condition: Option<String>,
    pub hit_condition: Option<String>,
    pub log_message: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SetBreakpointsArgs {
    pub source: Source,
    pub breakpoints: Option<Vec<SourceBreakpoint>>,
    /// Deprecated by the protocol, still sent by some clients.
    pub lines: Option<Vec<i64>>,
}

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct FunctionBreakpoint {
    pub name: String,
    pub condition: Option<String>,
    pub hit_condition: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SetFunctionBreakpointsArgs {
    pub breakpoints: Vec<FunctionBreakpoint>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ExceptionFilterOptions {
    pub filter_id: String,
    pub condition: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SetExceptionBreakpointsArgs {
    pub filters: Vec<String>,
    pub filter_options: Option<Vec<ExceptionFilterOptions>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct BreakpointLocationsArgs {
    pub source: Source,
    pub line: i64,
    pub end_line: Option<i64>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ThreadArgs {
    pub thread_id: i64,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StackTraceArgs {
    pub thread_id: i64,
    #[serde(default)]
    pub start_frame: Option<i64>,
    #[serde(default)]
    pub levels: Option<i64>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FrameArgs {
    pub frame_id: i64,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VariablesArgs {
    pub variables_reference: i64,
    #[serde(default)]
    pub filter: Option<String>,
    #[serde(default)]
    pub start: Option<i64>,
    #[serde(default)]
    pub count: Option<i64>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SetVariableArgs {
    pub variables_reference: i64,
    pub name: String,
    pub value: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EvaluateArgs {
    pub expression: String,
    #[serde(default)]
    pub frame_id: Option<i64>,
    #[serde(default)]
    pub context: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct DisconnectArgs {
    pub terminate_debuggee: Option<bool>,
    pub restart: Option<bool>,
}

// ---- bodies ----

#[derive(Debug, Default, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Breakpoint {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<i64>,
    pub verified: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<Source>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<&'static str>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StackFrame {
    pub id: i64,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<Source>,
    pub line: i64,
    pub column: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub presentation_hint: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub can_restart: Option<bool>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Scope {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub presentation_hint: Option<&'static str>,
    pub variables_reference: i64,
    pub expensive: bool,
}

#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Variable {
    pub name: String,
    pub value: String,
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_name: Option<String>,
    pub variables_reference: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub named_variables: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub indexed_variables: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub evaluate_name: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct Thread {
    pub id: i64,
    pub name: String,
}

/// The adapter's capabilities, as `initialize` reports them.
pub fn capabilities() -> Json {
    serde_json::json!({
        "supportsConfigurationDoneRequest": true,
        "supportsFunctionBreakpoints": true,
        "supportsConditionalBreakpoints": true,
        "supportsHitConditionalBreakpoints": true,
        "supportsLogPoints": true,
        "supportsEvaluateForHovers": true,
        "supportsSetVariable": true,
        "supportsRestartFrame": true,
        "supportsExceptionInfoRequest": true,
        "supportsExceptionFilterOptions": true,
        "supportsExceptionOptions": false,
        "supportsLoadedSourcesRequest": true,
        "supportsTerminateRequest": true,
        "supportsBreakpointLocationsRequest": true,
        "supportsDelayedStackTraceLoading": true,
        "supportsSingleThreadExecutionRequests": false,
        "supportTerminateDebuggee": true,
        "exceptionBreakpointFilters": [
            {"filter": "caught", "label": "Caught Exceptions", "default": false, "supportsCondition": true,
             "conditionDescription": "exception class names, comma-separated (java.io.IOException, MyError)"},
            {"filter": "uncaught", "label": "Uncaught Exceptions", "default": false, "supportsCondition": true,
             "conditionDescription": "exception class names, comma-separated (java.io.IOException, MyError)"}
        ]
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_like_a_shell_would() {
        assert_eq!(split_words("  -Xmx1g  -Da=\"b c\" 'd e'  "), vec!["-Xmx1g", "-Da=b c", "d e"]);
        assert_eq!(split_words(""), Vec::<String>::new());
        assert_eq!(split_words("\"\""), vec![""]);
    }

    #[test]
    fn launch_arguments_take_java_debug_names_and_ignore_others() {
        let a: LaunchArgs = args(
            "launch",
            &Some(serde_json::json!({"type": "jdbg", "request": "launch", "mainClass": "a.B", "classPaths": ["x"],
                "vmArgs": "-Xint", "args": ["1", "2"], "env": {"K": "V"}, "stopOnEntry": true, "jdkAgent": true})),
        )
        .unwrap();
        assert_eq!(a.main_class.as_deref(), Some("a.B"));
        assert_eq!(a.vm_args.unwrap().words(), vec!["-Xint"]);
        assert_eq!(a.args.unwrap().words(), vec!["1", "2"]);
        assert!(a.stop_on_entry && a.jdk_agent);
        assert_eq!(a.env.get("K").map(String::as_str), Some("V"));
    }

    #[test]
    fn missing_required_arguments_are_errors_with_the_command() {
        let e = args::<StackTraceArgs>("stackTrace", &None).unwrap_err();
        assert!(e.starts_with("stackTrace: bad arguments"), "{e}");
        let e = args::<VariablesArgs>("variables", &Some(serde_json::json!({"variablesReference": "x"}))).unwrap_err();
        assert!(e.contains("variables"), "{e}");
    }
}
