//! Zed extension for jdbg: Zed reaches debug adapters only through extensions, so this one
//! tells it how to start `jdb-rs dap` (found on the PATH, or at the user's adapter path) and
//! whether a configuration launches or attaches. All the debugging is in `jdb-rs dap`.

use std::net::Ipv4Addr;

use zed_extension_api::{
    self as zed, DebugAdapterBinary, DebugConfig, DebugRequest, DebugScenario, DebugTaskDefinition,
    StartDebuggingRequestArguments, StartDebuggingRequestArgumentsRequest, Worktree, serde_json,
};

const ADAPTER: &str = "jdbg";
const BINARY: &str = "jdb-rs";

struct Jdbg;

/// Launch or attach, from the configuration's `request`.
fn request_kind(config: &serde_json::Value) -> Result<StartDebuggingRequestArgumentsRequest, String> {
    match config.get("request").and_then(|r| r.as_str()) {
        Some("launch") => Ok(StartDebuggingRequestArgumentsRequest::Launch),
        Some("attach") => Ok(StartDebuggingRequestArgumentsRequest::Attach),
        Some(other) => Err(format!("jdbg: request must be \"launch\" or \"attach\", not {other:?}")),
        None => Err("jdbg: the configuration needs \"request\": \"launch\" or \"attach\"".into()),
    }
}

fn check_adapter(name: &str) -> Result<(), String> {
    if name == ADAPTER { Ok(()) } else { Err(format!("this extension provides the {ADAPTER} adapter, not {name:?}")) }
}

impl zed::Extension for Jdbg {
    fn new() -> Self {
        Jdbg
    }

    fn get_dap_binary(
        &mut self,
        adapter_name: String,
        config: DebugTaskDefinition,
        user_provided_debug_adapter_path: Option<String>,
        worktree: &Worktree,
    ) -> Result<DebugAdapterBinary, String> {
        check_adapter(&adapter_name)?;
        let command = user_provided_debug_adapter_path.or_else(|| worktree.which(BINARY)).ok_or_else(|| {
            format!("{BINARY} is not on the PATH: install it (cargo install --path jdb-rs) or set the adapter's path")
        })?;
        let json: serde_json::Value =
            serde_json::from_str(&config.config).map_err(|e| format!("jdbg: the configuration is not JSON: {e}"))?;
        let request = request_kind(&json)?;
        let mut arguments = vec!["dap".to_string()];
        // With a TCP connection asked for, the adapter listens there and Zed connects to it;
        // else they talk over the adapter's stdin/stdout.
        let connection = match config.tcp_connection {
            Some(template) => {
                let tcp = zed::resolve_tcp_template(template)?;
                arguments.push("--listen".into());
                arguments.push(format!("{}:{}", Ipv4Addr::from(tcp.host), tcp.port));
                Some(tcp)
            }
            None => None,
        };
        Ok(DebugAdapterBinary {
            command: Some(command),
            arguments,
            envs: Vec::new(),
            // Relative classPaths and sourcePaths are read from the project's root.
            cwd: Some(worktree.root_path()),
            connection,
            request_args: StartDebuggingRequestArguments { configuration: config.config, request },
        })
    }

    fn dap_request_kind(
        &mut self,
        adapter_name: String,
        config: serde_json::Value,
    ) -> Result<StartDebuggingRequestArgumentsRequest, String> {
        check_adapter(&adapter_name)?;
        request_kind(&config)
    }

    /// From Zed's "new session" form: the program is the main class.
    fn dap_config_to_scenario(&mut self, config: DebugConfig) -> Result<DebugScenario, String> {
        check_adapter(&config.adapter)?;
        let json = match config.request {
            DebugRequest::Launch(l) => {
                let mut c = serde_json::json!({
                    "request": "launch",
                    "mainClass": l.program,
                    "args": l.args,
                    "env": l.envs.into_iter().collect::<std::collections::BTreeMap<_, _>>(),
                    "classPaths": ["."],
                    "sourcePaths": ["."],
                    "stopOnEntry": config.stop_on_entry.unwrap_or(false),
                });
                if let Some(cwd) = l.cwd {
                    c["cwd"] = cwd.into();
                }
                c
            }
            DebugRequest::Attach(_) => {
                return Err(
                    "jdbg attaches to a JDWP port, not a process id: write hostName and port in debug.json".into()
                );
            }
        };
        Ok(DebugScenario {
            label: config.label,
            adapter: config.adapter,
            build: None,
            config: json.to_string(),
            tcp_connection: None,
        })
    }
}

zed::register_extension!(Jdbg);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_kinds() {
        let kind = |v: serde_json::Value| request_kind(&v);
        assert!(matches!(
            kind(serde_json::json!({"request": "launch"})),
            Ok(StartDebuggingRequestArgumentsRequest::Launch)
        ));
        assert!(matches!(
            kind(serde_json::json!({"request": "attach"})),
            Ok(StartDebuggingRequestArgumentsRequest::Attach)
        ));
        assert!(kind(serde_json::json!({"request": "run"})).unwrap_err().contains("\"run\""));
        assert!(kind(serde_json::json!({})).is_err());
        assert!(check_adapter("jdbg").is_ok());
        assert!(check_adapter("codelldb").is_err());
    }
}
