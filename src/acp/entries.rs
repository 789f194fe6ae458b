//! The `mcpServers` entry an agent can use, chosen from what its ACP
//! `initialize` answered (the rule and the agents behind it are in the
//! documentation of [`crate::acp`]).
//!
//! Choosing is a pure function of the answer ([`AgentMcpSupport`]); the
//! stdio entry also needs the path of the running program and proof that
//! the program will relay when started again
//! ([`run_if_requested`](crate::relay::run_if_requested)), and the
//! `client` feature the bridge runs on.

use serde_json::{json, Value};

use crate::error::Error;

/// The transport of an `mcpServers` entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum McpTransport {
    /// `{"type": "http", "name", "url", "headers"}`: the agent speaks MCP
    /// to the session's URL with its bearer header.
    Http,
    /// `{"name", "command", "args", "env"}` (with `"type": "stdio"` in ACP
    /// v2): the agent starts this program again, which relays to the
    /// session ([`crate::relay`]).
    Stdio,
}

/// What an agent's `initialize` result says about the `mcpServers` entries
/// it takes, in either ACP version.
///
/// ```
/// use serde_json::json;
/// use toolhost::acp::{AgentMcpSupport, McpTransport};
///
/// let v1 = AgentMcpSupport::from_initialize(&json!({
///     "protocolVersion": 1,
///     "agentCapabilities": {"mcpCapabilities": {"http": true, "sse": false}},
/// }));
/// assert!(v1.http && v1.stdio && !v1.typed_entries());
/// assert_eq!(v1.transport(), McpTransport::Http);
///
/// let v2 = AgentMcpSupport::from_initialize(&json!({
///     "protocolVersion": 2,
///     "capabilities": {"session": {"mcp": {"stdio": {}}}},
/// }));
/// assert!(!v2.http && v2.typed_entries());
/// assert_eq!(v2.transport(), McpTransport::Stdio);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct AgentMcpSupport {
    /// The ACP version the agent answered with (`protocolVersion`; 1 when
    /// absent).
    pub protocol_version: u64,
    /// The agent announced HTTP entries.
    pub http: bool,
    /// The agent takes stdio entries: always in v1, which requires it; in
    /// v2 when announced.
    pub stdio: bool,
    /// The agent announced SSE entries (v1 only). Never used here.
    pub sse: bool,
}

impl AgentMcpSupport {
    /// Reads the `result` of an agent's `initialize` (the object with
    /// `protocolVersion`, not the whole JSON-RPC response). A result that
    /// announces nothing reads as a v1 agent that takes stdio only.
    pub fn from_initialize(result: &Value) -> AgentMcpSupport {
        let protocol_version = result
            .get("protocolVersion")
            .and_then(Value::as_u64)
            .unwrap_or(1);
        // v1 markers are booleans and v2 markers objects; either is taken
        // in either version, since agents do not all follow the letter.
        let marked = |marker: Option<&Value>| marker.is_some_and(|m| *m == true || m.is_object());
        if protocol_version >= 2 {
            let mcp = result
                .get("capabilities")
                .and_then(|c| c.get("session"))
                .and_then(|s| s.get("mcp"));
            AgentMcpSupport {
                protocol_version,
                http: marked(mcp.and_then(|m| m.get("http"))),
                stdio: marked(mcp.and_then(|m| m.get("stdio"))),
                sse: false,
            }
        } else {
            let mcp = result
                .get("agentCapabilities")
                .and_then(|c| c.get("mcpCapabilities"));
            AgentMcpSupport {
                protocol_version,
                http: marked(mcp.and_then(|m| m.get("http"))),
                stdio: true,
                sse: marked(mcp.and_then(|m| m.get("sse"))),
            }
        }
    }

    /// The entry to offer: HTTP where announced, else stdio (what ACP v1
    /// requires of every agent, and the one chance left with a v2 agent
    /// that announced neither).
    pub fn transport(&self) -> McpTransport {
        if self.http {
            McpTransport::Http
        } else {
            McpTransport::Stdio
        }
    }

    /// Whether every entry must carry `type` (ACP v2).
    pub fn typed_entries(&self) -> bool {
        self.protocol_version >= 2
    }
}

/// The `mcpServers` list with one entry of `transport` for an agent of
/// `support` (typed where it speaks v2), reaching the session `name` at
/// `url` with `authorization`.
pub(crate) fn mcp_servers_using(
    transport: McpTransport,
    support: &AgentMcpSupport,
    name: &str,
    url: &str,
    authorization: &str,
) -> Result<Value, Error> {
    match transport {
        McpTransport::Http => Ok(super::mcp_servers(name, url, authorization)),
        McpTransport::Stdio => {
            let mut entry = stdio_relay_entry(name, url, authorization)?;
            if support.typed_entries() {
                entry["type"] = "stdio".into();
            }
            Ok(json!([entry]))
        }
    }
}

/// The ACP v1 stdio entry that starts the running program as a relay to
/// the session `name` at `url`.
///
/// Source: the ACP schema (`schema/v1/schema.json`): `McpServer`'s stdio
/// variant is `McpServerStdio`, untagged in v1, which requires `name`,
/// `command` (an absolute path), `args` and `env`, an array of
/// `EnvVariable` `{name, value}`; v2 adds `"type": "stdio"`
/// (`docs/protocol/v2/migration.mdx`, "MCP server configuration").
pub(crate) fn stdio_relay_entry(
    name: &str,
    url: &str,
    authorization: &str,
) -> Result<Value, Error> {
    let command = bridge_command()?;
    Ok(json!({
        "name": name,
        "command": command,
        "args": [],
        "env": bridge_env(url, authorization),
    }))
}

/// The `env` of a stdio entry: the session's URL and `Authorization` value
/// for the relay.
#[cfg(feature = "client")]
fn bridge_env(url: &str, authorization: &str) -> Value {
    use crate::relay::{AUTHORIZATION_VAR, URL_VAR};
    json!([
        {"name": URL_VAR, "value": url},
        {"name": AUTHORIZATION_VAR, "value": authorization},
    ])
}

#[cfg(not(feature = "client"))]
fn bridge_env(_url: &str, _authorization: &str) -> Value {
    Value::Null
}

/// The absolute path of the running program, once it has shown that a
/// copy of it started with the bridge's variables will relay.
#[cfg(feature = "client")]
fn bridge_command() -> Result<String, Error> {
    let problem = |problem: String| Error::StdioEntry { problem };
    if !crate::relay::was_checked() {
        return Err(problem(
            "this program has not called toolhost::relay::run_if_requested(); call it first \
             thing in main, since the entry starts this program again and only that call makes the \
             copy relay instead of running the whole program (or offer McpTransport::Http)"
                .into(),
        ));
    }
    let path: std::path::PathBuf = std::env::current_exe()
        .and_then(std::path::absolute)
        .map_err(|err| {
            problem(format!(
                "the path of the running program is unknown ({err}); offer McpTransport::Http instead"
            ))
        })?;
    path.into_os_string().into_string().map_err(|path| {
        problem(format!(
            "the path of the running program, {path:?}, is not valid UTF-8, which a JSON entry cannot carry; offer McpTransport::Http instead"
        ))
    })
}

#[cfg(not(feature = "client"))]
fn bridge_command() -> Result<String, Error> {
    Err(Error::StdioEntry {
        problem:
            "toolhost was built without its \"client\" feature, which the stdio relay runs on; \
                  enable it, or offer McpTransport::Http"
                .into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{HostConfig, StaticSurface, ToolHost};

    fn v1(mcp: Value) -> Value {
        json!({"protocolVersion": 1, "agentCapabilities": {"mcpCapabilities": mcp}})
    }

    fn v2(mcp: Value) -> Value {
        json!({"protocolVersion": 2, "capabilities": {"session": {"mcp": mcp}}})
    }

    #[test]
    fn http_is_chosen_only_where_announced_and_sse_never() {
        let cases = [
            (v1(json!({"http": true, "sse": false})), McpTransport::Http),
            (v1(json!({"http": false, "sse": true})), McpTransport::Stdio),
            (v1(json!({})), McpTransport::Stdio),
            (json!({"protocolVersion": 1}), McpTransport::Stdio),
            (json!({}), McpTransport::Stdio),
            (v2(json!({"http": {}, "stdio": {}})), McpTransport::Http),
            (v2(json!({"stdio": {}})), McpTransport::Stdio),
            (v2(json!({"http": null, "stdio": {}})), McpTransport::Stdio),
            // A v2 agent's booleans and a v1 agent's objects count too.
            (v2(json!({"http": true})), McpTransport::Http),
            (v1(json!({"http": {}})), McpTransport::Http),
            // v1 markers in a v2 answer (or the reverse) are not read.
            (
                json!({"protocolVersion": 2, "agentCapabilities": {"mcpCapabilities": {"http": true}}}),
                McpTransport::Stdio,
            ),
            (
                json!({"protocolVersion": 1, "capabilities": {"session": {"mcp": {"http": {}}}}}),
                McpTransport::Stdio,
            ),
        ];
        for (result, transport) in cases {
            let support = AgentMcpSupport::from_initialize(&result);
            assert_eq!(support.transport(), transport, "{result}");
        }
        assert!(AgentMcpSupport::from_initialize(&v1(json!({"sse": true}))).sse);
        assert!(!AgentMcpSupport::from_initialize(&v2(json!({"sse": {}}))).sse);
    }

    #[test]
    fn v1_agents_always_take_stdio_and_v2_agents_only_when_announced() {
        assert!(AgentMcpSupport::from_initialize(&v1(json!({}))).stdio);
        assert!(AgentMcpSupport::from_initialize(&v2(json!({"stdio": {}}))).stdio);
        assert!(!AgentMcpSupport::from_initialize(&v2(json!({"http": {}}))).stdio);
    }

    #[test]
    #[cfg(feature = "client")]
    fn the_chosen_entries_follow_the_agents_version() {
        crate::relay::run_if_requested();
        let host = ToolHost::bind(HostConfig::default().server_name("myapp")).unwrap();
        let session = host.open_session(StaticSurface::new());

        let http = session
            .acp_mcp_servers_for(&v1(json!({"http": true})))
            .unwrap();
        assert_eq!(http, session.acp_mcp_servers());
        let http2 = session
            .acp_mcp_servers_for(&v2(json!({"http": {}})))
            .unwrap();
        assert_eq!(
            http2,
            session.acp_mcp_servers(),
            "HTTP entries are typed in both"
        );

        let stdio = session.acp_mcp_servers_for(&v1(json!({}))).unwrap();
        let entry = stdio[0].as_object().unwrap();
        let mut keys: Vec<&str> = entry.keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(keys, ["args", "command", "env", "name"]);
        assert_eq!(entry["name"], "myapp");
        assert_eq!(entry["args"], json!([]));
        let command = std::path::PathBuf::from(entry["command"].as_str().unwrap());
        assert!(command.is_absolute());
        assert_eq!(command, std::env::current_exe().unwrap());
        assert_eq!(
            entry["env"],
            json!([
                {"name": "TOOLHOST_RELAY_URL", "value": session.url()},
                {"name": "TOOLHOST_RELAY_AUTHORIZATION", "value": session.authorization()},
            ])
        );
        // The bearer travels in env, never in the command line.
        assert!(!entry["command"].to_string().contains("th_"));
        assert!(!entry["args"].to_string().contains("th_"));

        let stdio2 = session
            .acp_mcp_servers_for(&v2(json!({"stdio": {}})))
            .unwrap();
        assert_eq!(stdio2[0]["type"], "stdio");
        let mut untyped = stdio2[0].clone();
        untyped.as_object_mut().unwrap().remove("type");
        assert_eq!(untyped, stdio[0]);
    }

    #[test]
    #[cfg(not(feature = "client"))]
    fn without_the_client_feature_the_stdio_entry_is_refused_and_http_still_offered() {
        let host = ToolHost::bind(HostConfig::default()).unwrap();
        let session = host.open_session(StaticSurface::new());
        let refused = session.acp_mcp_servers_for(&v1(json!({}))).unwrap_err();
        assert!(
            refused.to_string().contains("\"client\" feature"),
            "{refused}"
        );
        let http = session
            .acp_mcp_servers_for(&v1(json!({"http": true})))
            .unwrap();
        assert_eq!(http, session.acp_mcp_servers());
    }

    #[test]
    #[cfg(feature = "client")]
    fn the_application_can_force_either_kind() {
        crate::relay::run_if_requested();
        let host = ToolHost::bind(HostConfig::default()).unwrap();
        let session = host.open_session(StaticSurface::new());
        let announces_http = v1(json!({"http": true}));
        let forced = session
            .acp_mcp_servers_using(McpTransport::Stdio, &announces_http)
            .unwrap();
        assert!(forced[0].get("command").is_some());
        assert!(forced[0].get("url").is_none());
        let no_http = v2(json!({"stdio": {}}));
        let forced = session
            .acp_mcp_servers_using(McpTransport::Http, &no_http)
            .unwrap();
        assert_eq!(forced[0]["type"], "http");
        assert!(forced[0].get("command").is_none());
    }
}
