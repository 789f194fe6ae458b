//! The shapes other programs need to reach a session: the ACP `session/new`
//! `mcpServers` entry.
//!
//! ACP's `McpServer` HTTP variant is `{"type":"http","name","url","headers":
//! [{"name","value"}]}` (Agent Client Protocol schema, `McpServerHttp`); the
//! agent then speaks MCP over Streamable HTTP to `url` with those headers.

use serde_json::{json, Value};

/// The `mcpServers` array for ACP `session/new`, with one HTTP entry.
pub(crate) fn mcp_servers(name: &str, url: &str, authorization: &str) -> Value {
    json!([{
        "type": "http",
        "name": name,
        "url": url,
        "headers": [{"name": "Authorization", "value": authorization}],
    }])
}
