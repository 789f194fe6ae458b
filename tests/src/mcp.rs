//! An MCP client over one keep-alive connection that checks every message
//! the host sends against the schema of the revision in use, and the
//! requests of the stateless revision.

use std::net::SocketAddr;

use serde_json::{json, Value};
use toolhost::{ToolHost, ToolSession};

use crate::schema;
use crate::wire::{Conn, Reply};

/// The headers a well-behaved client sends with a POST.
pub const JSON_HEADERS: [(&str, &str); 2] = [
    ("Content-Type", "application/json"),
    ("Accept", "application/json, text/event-stream"),
];

/// An MCP client over one keep-alive connection, checking every message the
/// host sends against the schema of the revision in use.
pub struct McpClient {
    /// The connection every request goes out on.
    pub conn: Conn,
    /// The `Authorization` header value sent, if any.
    pub authorization: Option<String>,
    /// The `Mcp-Session-Id` sent, once `initialize` issued one.
    pub session_id: Option<String>,
    /// The revision the schema checks use: the negotiated one after
    /// `initialize`.
    pub revision: String,
    next_id: i64,
}

impl McpClient {
    /// A client of the host at `addr` that sends `authorization` (none when
    /// `None`), speaking 2025-11-25 until `initialize` negotiates.
    pub fn new(addr: SocketAddr, authorization: Option<String>) -> McpClient {
        McpClient {
            conn: Conn::open(addr).expect("connect"),
            authorization,
            session_id: None,
            revision: "2025-11-25".into(),
            next_id: 1,
        }
    }

    /// A client with `session`'s bearer.
    pub fn for_session(host: &ToolHost, session: &ToolSession) -> McpClient {
        McpClient::new(host.local_addr(), Some(session.authorization()))
    }

    /// POSTs `body` with the client's credentials and session headers.
    pub fn post(&mut self, body: &Value) -> Reply {
        self.post_raw(body.to_string().as_bytes(), &[])
    }

    /// POSTs raw `body` bytes with the client's credentials and session
    /// headers, and `extra` headers after them.
    pub fn post_raw(&mut self, body: &[u8], extra: &[(&str, &str)]) -> Reply {
        let mut headers: Vec<(&str, &str)> = JSON_HEADERS.to_vec();
        if let Some(auth) = &self.authorization {
            headers.push(("Authorization", auth));
        }
        if let Some(id) = &self.session_id {
            headers.push(("Mcp-Session-Id", id));
        }
        if self.revision.as_str() >= "2025-06-18" && self.session_id.is_some() {
            headers.push(("MCP-Protocol-Version", &self.revision));
        }
        headers.extend_from_slice(extra);
        self.conn
            .request("POST", "/mcp", &headers, body)
            .expect("request")
    }

    fn id(&mut self) -> i64 {
        self.next_id += 1;
        self.next_id
    }

    /// `initialize` + `notifications/initialized`; returns the result.
    pub fn initialize(&mut self, revision: &str) -> Value {
        self.initialize_with(revision, json!({}))
    }

    /// [`initialize`](McpClient::initialize) declaring `capabilities`
    /// (e.g. `{"elicitation": {}}`).
    pub fn initialize_with(&mut self, revision: &str, capabilities: Value) -> Value {
        let id = self.id();
        let reply = self.post(
            &json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
            "protocolVersion": revision, "capabilities": capabilities,
            "clientInfo": {"name": "toolhost-tests", "version": "1.0"}}}),
        );
        assert_eq!(
            reply.status,
            200,
            "initialize: {:?}",
            String::from_utf8_lossy(&reply.body)
        );
        let message = reply.json();
        let negotiated = message["result"]["protocolVersion"]
            .as_str()
            .expect("protocolVersion")
            .to_owned();
        schema::assert_valid(&negotiated, "JSONRPCResponse", &message);
        schema::assert_valid(&negotiated, "InitializeResult", &message["result"]);
        self.revision = negotiated;
        self.session_id = Some(
            reply
                .header("mcp-session-id")
                .expect("Mcp-Session-Id")
                .to_owned(),
        );
        let note = self.post(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        assert_eq!(note.status, 202);
        message["result"].clone()
    }

    /// A request whose answer must be a schema-valid success; returns the result.
    pub fn request(&mut self, method: &str, params: Value, result_definition: &str) -> Value {
        let id = self.id();
        let reply =
            self.post(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        assert_eq!(
            reply.status,
            200,
            "{method}: {:?}",
            String::from_utf8_lossy(&reply.body)
        );
        let message = reply.json();
        assert_eq!(message["id"], id);
        assert!(message.get("error").is_none(), "{method} failed: {message}");
        schema::assert_valid(&self.revision, "JSONRPCResponse", &message);
        schema::assert_valid(&self.revision, result_definition, &message["result"]);
        message["result"].clone()
    }

    /// A request whose answer must be a JSON-RPC error; returns the error object.
    pub fn request_error(&mut self, method: &str, params: Value) -> Value {
        let id = self.id();
        let reply =
            self.post(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let message = reply.json();
        assert_eq!(message["id"], id, "{message}");
        schema::assert_valid(
            &self.revision,
            schema::error_definition(&self.revision),
            &message,
        );
        message["error"].clone()
    }

    /// The names `tools/list` answers with, in order.
    pub fn tool_names(&mut self) -> Vec<String> {
        let result = self.request("tools/list", json!({}), "ListToolsResult");
        result["tools"]
            .as_array()
            .expect("tools")
            .iter()
            .map(|t| t["name"].as_str().expect("name").to_owned())
            .collect()
    }

    /// The schema-valid result of a `tools/call` of `name`.
    pub fn call(&mut self, name: &str, arguments: Value) -> Value {
        self.request(
            "tools/call",
            json!({"name": name, "arguments": arguments}),
            "CallToolResult",
        )
    }
}

/// The stateless revision, as the tests send it.
pub const STATELESS: &str = "2026-07-28";

/// The revisions negotiated at `initialize`.
pub const STATEFUL: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

/// Every revision the host serves.
pub const REVISIONS: [&str; 5] = [
    "2024-11-05",
    "2025-03-26",
    "2025-06-18",
    "2025-11-25",
    STATELESS,
];

/// POSTs a 2026-07-28 request with the `_meta` and every header the
/// revision requires (`Mcp-Name` for `tools/call`); `capabilities` are the
/// client's declared ones.
pub fn stateless_post(
    conn: &mut Conn,
    authorization: &str,
    id: i64,
    method: &str,
    mut params: Value,
    capabilities: Value,
) -> Reply {
    let mut meta = json!({
        "io.modelcontextprotocol/protocolVersion": STATELESS,
        "io.modelcontextprotocol/clientCapabilities": capabilities,
        "io.modelcontextprotocol/clientInfo": {"name": "toolhost-tests", "version": "1.0"},
    });
    // Keys the caller put in `_meta` (a progress token, say) stay.
    if let Some(given) = params["_meta"].as_object() {
        for (key, value) in given {
            meta[key] = value.clone();
        }
    }
    params["_meta"] = meta;
    let name = params["name"].as_str().unwrap_or("").to_owned();
    let mut headers: Vec<(&str, &str)> = JSON_HEADERS.to_vec();
    headers.extend([
        ("Authorization", authorization),
        ("MCP-Protocol-Version", STATELESS),
        ("Mcp-Method", method),
    ]);
    if method == "tools/call" {
        headers.push(("Mcp-Name", &name));
    }
    let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    conn.request("POST", "/mcp", &headers, body.to_string().as_bytes())
        .expect("request")
}

/// One request in the stateless revision, its result checked against
/// `definition`.
fn stateless_result(
    host: &ToolHost,
    session: &ToolSession,
    method: &str,
    params: Value,
    definition: &str,
) -> Value {
    let mut conn = Conn::open(host.local_addr()).unwrap();
    let reply = stateless_post(
        &mut conn,
        &session.authorization(),
        1,
        method,
        params,
        json!({}),
    );
    assert_eq!(
        reply.status,
        200,
        "{}",
        String::from_utf8_lossy(&reply.body)
    );
    let message = reply.json();
    schema::assert_valid(STATELESS, "JSONRPCResponse", &message);
    schema::assert_valid(STATELESS, definition, &message["result"]);
    message["result"].clone()
}

/// The result of `method` in `revision`, schema-checked.
pub fn ask(
    host: &ToolHost,
    session: &ToolSession,
    revision: &str,
    method: &str,
    params: Value,
    definition: &str,
) -> Value {
    if revision == STATELESS {
        return stateless_result(host, session, method, params, definition);
    }
    let mut client = McpClient::for_session(host, session);
    client.initialize(revision);
    client.request(method, params, definition)
}

/// The result of calling tool `name` in `revision`, schema-checked.
pub fn call_in(
    host: &ToolHost,
    session: &ToolSession,
    revision: &str,
    name: &str,
    arguments: Value,
) -> Value {
    let params = json!({"name": name, "arguments": arguments});
    ask(
        host,
        session,
        revision,
        "tools/call",
        params,
        "CallToolResult",
    )
}
