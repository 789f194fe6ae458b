//! The stateless revision 2026-07-28 on the same endpoint as the stateful
//! ones: no `initialize`, everything per request.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use serde_json::{json, Map, Value};
use toolhost::{HostConfig, StaticSurface, Tool, ToolHost, ToolOutcome, ToolSession};
use toolhost_tests::{schema, Conn, McpClient, Reply, JSON_HEADERS};

const REV: &str = "2026-07-28";

fn meta(capabilities: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": REV,
        "io.modelcontextprotocol/clientCapabilities": capabilities,
        "io.modelcontextprotocol/clientInfo": {"name": "stateless-test", "version": "1"},
    })
}

struct Stateless {
    conn: Conn,
    auth: String,
}

impl Stateless {
    fn new(host: &ToolHost, session: &ToolSession) -> Stateless {
        Stateless {
            conn: Conn::open(host.local_addr()).unwrap(),
            auth: session.authorization(),
        }
    }

    /// A request with the headers the revision requires, overridable.
    fn send(&mut self, id: i64, method: &str, params: Value, headers: &[(&str, &str)]) -> Reply {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let name = params
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        let mut all: Vec<(&str, &str)> = JSON_HEADERS.to_vec();
        all.push(("Authorization", &self.auth));
        for (n, v) in [
            ("MCP-Protocol-Version", REV),
            ("Mcp-Method", method),
            ("Mcp-Name", name.as_str()),
        ] {
            if n == "Mcp-Name" && method != "tools/call" {
                continue;
            }
            if !headers.iter().any(|(h, _)| h.eq_ignore_ascii_case(n)) {
                all.push((n, v));
            }
        }
        all.extend(headers.iter().filter(|(_, v)| !v.is_empty()));
        self.conn
            .request("POST", "/mcp", &all, body.to_string().as_bytes())
            .unwrap()
    }

    fn ok(&mut self, id: i64, method: &str, mut params: Value, definition: &str) -> Value {
        params["_meta"] = meta(json!({}));
        let reply = self.send(id, method, params, &[]);
        assert_eq!(
            reply.status,
            200,
            "{method}: {}",
            String::from_utf8_lossy(&reply.body)
        );
        let message = reply.json();
        schema::assert_valid(REV, "JSONRPCResponse", &message);
        schema::assert_valid(REV, definition, &message["result"]);
        let result = &message["result"];
        assert_eq!(result["resultType"], "complete");
        assert_eq!(
            result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
            "stateless-host"
        );
        result.clone()
    }

    fn refused(&mut self, params: Value, headers: &[(&str, &str)], method: &str) -> (u16, Value) {
        let reply = self.send(77, method, params, headers);
        let message = reply.json();
        assert_eq!(
            message["id"], 77,
            "every error carries the request id: {message}"
        );
        schema::assert_valid(REV, "JSONRPCErrorResponse", &message);
        (reply.status, message["error"].clone())
    }
}

fn setup() -> (ToolHost, ToolSession, Arc<AtomicUsize>) {
    let host = ToolHost::bind(HostConfig::default().server_name("stateless-host")).unwrap();
    let hits = Arc::new(AtomicUsize::new(0));
    let (echo_hits, sample_hits) = (Arc::clone(&hits), Arc::clone(&hits));
    let mut sampling = Map::new();
    sampling.insert("sampling".into(), json!({}));
    let surface = StaticSurface::new()
        .tool(Tool::new("echo", "Echo."), move |args, ctx| {
            echo_hits.fetch_add(1, Ordering::SeqCst);
            let who = format!(
                "{} {}",
                ctx.revision(),
                ctx.client().map_or("?", |c| c.name.as_str())
            );
            ToolOutcome::text(args["text"].as_str().unwrap_or("").to_owned())
                .with_structured(json!({ "who": who }))
        })
        .unwrap()
        .tool(
            Tool::new("route", "Routes by region.").input_schema(json!({
                "type": "object",
                "properties": {
                    "region": {"type": "string", "x-mcp-header": "Region"},
                    "shard": {"type": "integer", "x-mcp-header": "Shard"},
                },
                "required": ["region"],
            })),
            |args, _| ToolOutcome::text(format!("routed {}", args["region"])),
        )
        .unwrap()
        .tool(
            Tool::new("summarize", "Needs sampling.").requires_client_capabilities(sampling),
            move |_, _| {
                sample_hits.fetch_add(1, Ordering::SeqCst);
                ToolOutcome::text("Success")
            },
        )
        .unwrap();
    let session = host.open_session(surface);
    (host, session, hits)
}

#[test]
fn a_full_stateless_flow_needs_no_initialize() {
    let (host, session, hits) = setup();
    let mut client = Stateless::new(&host, &session);
    let discover = client.ok(1, "server/discover", json!({}), "DiscoverResult");
    assert!(discover["supportedVersions"]
        .as_array()
        .unwrap()
        .contains(&json!(REV)));
    assert!(discover["supportedVersions"]
        .as_array()
        .unwrap()
        .contains(&json!("2025-11-25")));
    assert!(discover["capabilities"]["tools"].is_object());
    assert!(discover["capabilities"]["tools"]["listChanged"] == true);
    for (method, field, definition) in [
        ("prompts/list", "prompts", "ListPromptsResult"),
        ("resources/list", "resources", "ListResourcesResult"),
        (
            "resources/templates/list",
            "resourceTemplates",
            "ListResourceTemplatesResult",
        ),
    ] {
        let empty = client.ok(9, method, json!({}), definition);
        assert_eq!(
            empty[field],
            json!([]),
            "a tools-only host lists no {field}"
        );
        assert_eq!(empty["cacheScope"], "private");
    }
    let list = client.ok(2, "tools/list", json!({}), "ListToolsResult");
    assert_eq!(list["ttlMs"], 0);
    assert_eq!(list["cacheScope"], "private");
    let names: Vec<&str> = list["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["echo", "route", "summarize"]);
    let call = client.ok(
        3,
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "hi"}}),
        "CallToolResult",
    );
    assert_eq!(call["content"][0]["text"], "hi");
    assert_eq!(
        call["structuredContent"]["who"], "2026-07-28 stateless-test",
        "the handler sees the request's _meta"
    );
    assert_eq!(hits.load(Ordering::SeqCst), 1);
    assert_eq!(session.calls_served(), 1);
}

#[test]
fn each_header_and_meta_rule_is_refused_with_its_code_before_any_handler() {
    let (host, session, hits) = setup();
    let mut client = Stateless::new(&host, &session);
    let call = |meta_value: Value| json!({"name": "echo", "arguments": {}, "_meta": meta_value});

    let (status, error) = client.refused(json!({"name": "echo"}), &[], "tools/call");
    assert_eq!(
        (status, error["code"].as_i64()),
        (400, Some(-32602)),
        "no _meta"
    );
    let no_caps = json!({"io.modelcontextprotocol/protocolVersion": REV});
    let (status, error) = client.refused(call(no_caps), &[], "tools/call");
    assert_eq!(
        (status, error["code"].as_i64()),
        (400, Some(-32602)),
        "no clientCapabilities"
    );

    let (status, error) = client.refused(
        call(meta(json!({}))),
        &[("MCP-Protocol-Version", "2025-11-25")],
        "tools/call",
    );
    assert_eq!(
        (status, error["code"].as_i64()),
        (400, Some(-32020)),
        "header differs from _meta"
    );

    let mut v999 = meta(json!({}));
    v999["io.modelcontextprotocol/protocolVersion"] = json!("v999");
    let (status, error) = client.refused(
        call(v999),
        &[("MCP-Protocol-Version", "v999")],
        "tools/call",
    );
    assert_eq!(
        (status, error["code"].as_i64()),
        (400, Some(-32022)),
        "unknown version"
    );
    assert_eq!(error["data"]["requested"], "v999");
    assert!(error["data"]["supported"]
        .as_array()
        .unwrap()
        .contains(&json!(REV)));

    let (status, error) = client.refused(
        call(meta(json!({}))),
        &[("Mcp-Method", "tools/list")],
        "tools/call",
    );
    assert_eq!(
        (status, error["code"].as_i64()),
        (400, Some(-32020)),
        "Mcp-Method differs"
    );
    let (status, error) = client.refused(
        call(meta(json!({}))),
        &[("Mcp-Method", "TOOLS/CALL")],
        "tools/call",
    );
    assert_eq!(
        (status, error["code"].as_i64()),
        (400, Some(-32020)),
        "values are case-sensitive"
    );
    let (status, error) = client.refused(
        call(meta(json!({}))),
        &[("Mcp-Name", "other")],
        "tools/call",
    );
    assert_eq!(
        (status, error["code"].as_i64()),
        (400, Some(-32020)),
        "Mcp-Name differs"
    );
    let (status, error) = client.refused(
        call(meta(json!({}))),
        &[("Mcp-Name", "=?base64?ZWNobw?=")],
        "tools/call",
    );
    assert_eq!(
        (status, error["code"].as_i64()),
        (400, Some(-32020)),
        "unpadded base64"
    );
    assert_eq!(
        hits.load(Ordering::SeqCst),
        0,
        "no refused request reached a handler"
    );

    // The padded sentinel and surrounding whitespace are accepted.
    let reply = client.send(
        5,
        "tools/call",
        call(meta(json!({}))),
        &[("Mcp-Name", "=?base64?ZWNobw==?=")],
    );
    assert_eq!(
        reply.status,
        200,
        "{}",
        String::from_utf8_lossy(&reply.body)
    );
    let reply = client.send(
        6,
        "tools/call",
        call(meta(json!({}))),
        &[("mcp-name", "  echo\t")],
    );
    assert_eq!(reply.status, 200);
    assert_eq!(hits.load(Ordering::SeqCst), 2);
}

#[test]
fn removed_and_unknown_methods_get_404_and_method_not_found() {
    let (host, session, _) = setup();
    let mut client = Stateless::new(&host, &session);
    for method in [
        "initialize",
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "unknown/method",
    ] {
        let (status, error) = client.refused(json!({"_meta": meta(json!({}))}), &[], method);
        assert_eq!(
            (status, error["code"].as_i64()),
            (404, Some(-32601)),
            "{method}"
        );
    }
}

#[test]
fn a_tool_needing_an_undeclared_capability_is_refused_with_32021() {
    let (host, session, hits) = setup();
    let mut client = Stateless::new(&host, &session);
    let (status, error) = client.refused(
        json!({"name": "summarize", "_meta": meta(json!({}))}),
        &[],
        "tools/call",
    );
    assert_eq!((status, error["code"].as_i64()), (400, Some(-32021)));
    assert_eq!(
        error["data"]["requiredCapabilities"],
        json!({"sampling": {}})
    );
    assert_eq!(hits.load(Ordering::SeqCst), 0);
    let reply = client.send(
        8,
        "tools/call",
        json!({"name": "summarize", "_meta": meta(json!({"sampling": {}}))}),
        &[],
    );
    assert_eq!(reply.status, 200);
    assert_eq!(reply.json()["result"]["content"][0]["text"], "Success");
}

#[test]
fn one_bearer_serves_a_stateful_and_a_stateless_client_at_once() {
    let (host, session, hits) = setup();
    let mut old = McpClient::for_session(&host, &session);
    old.initialize("2025-11-25");
    let mut new = Stateless::new(&host, &session);
    for round in 0..3 {
        assert_eq!(
            old.call("echo", json!({"text": "old"}))["content"][0]["text"],
            "old",
            "{round}"
        );
        let result = new.ok(
            round,
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "new"}}),
            "CallToolResult",
        );
        assert_eq!(result["content"][0]["text"], "new");
    }
    // The stateful client's results carry no 2026-07-28 fields.
    let legacy = old.call("echo", json!({"text": "x"}));
    assert!(legacy.get("resultType").is_none());
    assert_eq!(hits.load(Ordering::SeqCst), 7);
}

#[test]
fn a_stray_session_id_is_ignored_and_get_or_delete_get_405() {
    let (host, session, _) = setup();
    let mut client = Stateless::new(&host, &session);
    let reply = client.send(
        1,
        "tools/list",
        json!({"_meta": meta(json!({}))}),
        &[("Mcp-Session-Id", "not-a-session")],
    );
    assert_eq!(reply.status, 200);
    let auth = session.authorization();
    for method in ["GET", "DELETE"] {
        let reply = client
            .conn
            .request(
                method,
                "/mcp",
                &[("Authorization", &auth), ("MCP-Protocol-Version", REV)],
                b"",
            )
            .unwrap();
        assert_eq!(reply.status, 405, "{method}");
        assert_eq!(reply.header("allow"), Some("POST"));
    }
}

#[test]
fn notifications_in_the_stateless_era_are_accepted_with_202() {
    let (host, session, _) = setup();
    let mut client = Stateless::new(&host, &session);
    let body = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 1, "_meta": meta(json!({}))}});
    let auth = session.authorization();
    let mut headers = JSON_HEADERS.to_vec();
    headers.extend([
        ("Authorization", auth.as_str()),
        ("MCP-Protocol-Version", REV),
        ("Mcp-Method", "notifications/cancelled"),
    ]);
    let reply = client
        .conn
        .request("POST", "/mcp", &headers, body.to_string().as_bytes())
        .unwrap();
    assert_eq!(reply.status, 202);
    assert!(reply.body.is_empty());
}

#[test]
fn mcp_param_headers_must_repeat_annotated_arguments() {
    let (host, session, _) = setup();
    let mut client = Stateless::new(&host, &session);
    let call = |args: Value| json!({"name": "route", "arguments": args, "_meta": meta(json!({}))});

    let ok = client.send(
        1,
        "tools/call",
        call(json!({"region": "eu-west", "shard": 7})),
        &[("Mcp-Param-Region", "eu-west"), ("Mcp-Param-Shard", "7.0")],
    );
    assert_eq!(ok.status, 200, "{}", String::from_utf8_lossy(&ok.body));
    assert_eq!(
        ok.json()["result"]["content"][0]["text"],
        "routed \"eu-west\""
    );

    let encoded = client.send(
        2,
        "tools/call",
        call(json!({"region": "zürich"})),
        &[("Mcp-Param-Region", "=?base64?esO8cmljaA==?=")],
    );
    assert_eq!(
        encoded.status,
        200,
        "{}",
        String::from_utf8_lossy(&encoded.body)
    );

    for (args, headers) in [
        (json!({"region": "eu-west"}), vec![]),
        (
            json!({"region": "eu-west"}),
            vec![("Mcp-Param-Region", "us-east")],
        ),
        (
            json!({"region": "eu-west", "shard": 7}),
            vec![("Mcp-Param-Region", "eu-west"), ("Mcp-Param-Shard", "8")],
        ),
        (
            json!({"region": "eu-west"}),
            vec![("Mcp-Param-Region", "eu-west"), ("Mcp-Param-Shard", "1")],
        ),
    ] {
        let (status, error) = client.refused(call(args.clone()), &headers, "tools/call");
        assert_eq!(
            (status, error["code"].as_i64()),
            (400, Some(-32020)),
            "{args} {headers:?}"
        );
    }
}

#[test]
fn a_tool_whose_x_mcp_header_breaks_the_rules_is_refused_at_registration() {
    let cases = [
        (
            json!({"type": "object", "properties": {"n": {"type": "number", "x-mcp-header": "N"}}}),
            "string, integer or boolean",
        ),
        (
            json!({"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": "bad name"}}}),
            "HTTP token",
        ),
        (
            json!({"type": "object", "properties": {
            "a": {"type": "string", "x-mcp-header": "Same"},
            "b": {"type": "string", "x-mcp-header": "same"}}}),
            "unique",
        ),
        (
            json!({"type": "object", "properties": {"list": {"type": "array",
            "items": {"type": "string", "x-mcp-header": "Item"}}}}),
            "\"properties\" alone",
        ),
    ];
    for (schema, rule) in cases {
        let err = StaticSurface::new()
            .tool(Tool::new("t", "d").input_schema(schema.clone()), |_, _| {
                ToolOutcome::text("")
            })
            .unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("x-mcp-header") && text.contains(rule),
            "{schema}: {text}"
        );
    }
}
