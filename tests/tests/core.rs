//! The core promises, over real HTTP against a really bound host.

use std::net::TcpListener;
use std::panic;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use toolhost::{
    surface_fn, AuthRefusal, Event, HostConfig, Revision, StaticSurface, Tool, ToolHost,
    ToolOutcome,
};
use toolhost_tests::{schema, Conn, EventLog, McpClient, JSON_HEADERS};

const REVISIONS: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

fn counting_surface(hits: &Arc<AtomicUsize>) -> StaticSurface {
    let echo_hits = Arc::clone(hits);
    let boom_hits = Arc::clone(hits);
    let quota_hits = Arc::clone(hits);
    StaticSurface::new()
        .tool(
            Tool::new("echo", "Echoes text.").input_schema(json!({
                "type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]})),
            move |args, _| {
                echo_hits.fetch_add(1, Ordering::SeqCst);
                ToolOutcome::text(args["text"].as_str().unwrap_or_default())
            },
        )
        .unwrap()
        .tool(Tool::new("boom", "Panics."), move |_, _| -> ToolOutcome {
            boom_hits.fetch_add(1, Ordering::SeqCst);
            panic!("handler exploded on purpose")
        })
        .unwrap()
        .tool(Tool::new("quota", "Always over quota."), move |_, _| {
            quota_hits.fetch_add(1, Ordering::SeqCst);
            ToolOutcome::declined("daily quota of 3 calls used up; try tomorrow")
                .with_code(json!("quota_exceeded"))
        })
        .unwrap()
}

fn host() -> ToolHost {
    ToolHost::bind(HostConfig::default().workers(4)).unwrap()
}

#[test]
fn the_host_lists_and_runs_the_callers_tools_in_every_stateful_revision() {
    let host = host();
    let hits = Arc::new(AtomicUsize::new(0));
    let session = host.open_session(counting_surface(&hits));
    for revision in REVISIONS {
        let mut client = McpClient::for_session(&host, &session);
        let init = client.initialize(revision);
        assert_eq!(init["protocolVersion"], revision);
        assert!(init["capabilities"]["tools"].is_object());
        assert_eq!(client.tool_names(), ["echo", "boom", "quota"]);
        let result = client.call("echo", json!({"text": "hi"}));
        assert_eq!(result["content"], json!([{"type": "text", "text": "hi"}]));
        assert_eq!(result["isError"], false);
        let pong = client.request("ping", json!({}), "EmptyResult");
        assert_eq!(pong, json!({}));
    }
    assert_eq!(hits.load(Ordering::SeqCst), 4);
    assert_eq!(session.calls_served(), 4);
}

#[test]
fn initialize_offers_the_newest_revision_to_a_client_asking_for_an_unknown_one() {
    let host = ToolHost::bind(
        HostConfig::default()
            .server_name("myapp")
            .server_version("9.9.9")
            .instructions("Use echo."),
    )
    .unwrap();
    let session = host.open_session(StaticSurface::new());
    let mut client = McpClient::for_session(&host, &session);
    let init = client.initialize("2099-01-01");
    assert_eq!(init["protocolVersion"], Revision::LATEST_STATEFUL.as_str());
    assert_eq!(
        init["serverInfo"],
        json!({"name": "myapp", "version": "9.9.9"})
    );
    assert_eq!(init["instructions"], "Use echo.");
}

#[test]
fn dropping_the_session_revokes_the_bearer() {
    let host = host();
    let hits = Arc::new(AtomicUsize::new(0));
    let session = host.open_session(counting_surface(&hits));
    let mut client = McpClient::for_session(&host, &session);
    client.initialize("2025-11-25");
    client.call("echo", json!({"text": "before"}));
    assert_eq!(hits.load(Ordering::SeqCst), 1);

    drop(session);
    assert_eq!(host.open_sessions(), 0);
    let reply = client.post(&json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "after"}}}));
    assert_eq!(reply.status, 401);
    assert!(reply
        .header("www-authenticate")
        .is_some_and(|v| v.starts_with("Bearer")));
    assert_eq!(
        hits.load(Ordering::SeqCst),
        1,
        "the handler must not run after the drop"
    );
}

#[test]
fn absent_malformed_unknown_and_revoked_bearers_get_the_same_401() {
    let events = EventLog::new();
    let host = ToolHost::bind(events.hook(HostConfig::default())).unwrap();
    let hits = Arc::new(AtomicUsize::new(0));
    let live = host.open_session(counting_surface(&hits));
    let revoked = host.open_session(StaticSurface::new());
    let revoked_auth = revoked.authorization();
    drop(revoked);
    let unknown = format!("Bearer th_{}", "0".repeat(80));

    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "x"}}});
    let mut bodies = Vec::new();
    for auth in [
        None,
        Some("Bearer nope".to_owned()),
        Some("Basic abc".to_owned()),
        Some(unknown),
        Some(revoked_auth),
    ] {
        let mut client = McpClient::new(host.local_addr(), auth.clone());
        let reply = client.post(&call);
        assert_eq!(reply.status, 401, "{auth:?}");
        assert_eq!(
            reply.header("www-authenticate"),
            Some("Bearer realm=\"toolhost\"")
        );
        let body = reply.json();
        assert!(body.get("id").is_none());
        schema::assert_valid("2025-11-25", "JSONRPCErrorResponse", &body);
        bodies.push(body);
    }
    assert!(
        bodies.windows(2).all(|w| w[0] == w[1]),
        "every refusal reads the same"
    );
    assert_eq!(hits.load(Ordering::SeqCst), 0);

    // The live session is unaffected.
    let mut client = McpClient::for_session(&host, &live);
    client.initialize("2025-11-25");
    client.call("echo", json!({"text": "fine"}));
    assert_eq!(hits.load(Ordering::SeqCst), 1);

    let reasons = events.pick(|e| match e {
        Event::AuthRefused { reason } => Some(*reason),
        _ => None,
    });
    assert_eq!(
        reasons,
        [
            AuthRefusal::Missing,
            AuthRefusal::Malformed,
            AuthRefusal::Malformed,
            AuthRefusal::Unknown,
            AuthRefusal::Unknown
        ]
    );
}

#[test]
fn a_withdrawn_tool_vanishes_from_the_list_and_is_refused_without_reaching_the_handler() {
    let host = host();
    let armed = Arc::new(AtomicBool::new(true));
    let hits = Arc::new(AtomicUsize::new(0));
    let (flag, counter) = (Arc::clone(&armed), Arc::clone(&hits));
    let session = host.open_session(surface_fn(
        move || {
            let mut tools = vec![Tool::new("status", "Status.")];
            if flag.load(Ordering::SeqCst) {
                tools.push(Tool::new("launch", "Launches."));
            }
            tools
        },
        move |name, _, _| {
            counter.fetch_add(1, Ordering::SeqCst);
            ToolOutcome::text(format!("{name} ran"))
        },
    ));
    let mut client = McpClient::for_session(&host, &session);
    client.initialize("2025-11-25");
    assert_eq!(client.tool_names(), ["status", "launch"]);
    assert_eq!(
        client.call("launch", json!({}))["content"][0]["text"],
        "launch ran"
    );

    armed.store(false, Ordering::SeqCst);
    assert_eq!(client.tool_names(), ["status"]);
    let refused = client.call("launch", json!({}));
    assert_eq!(refused["isError"], true);
    let text = refused["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("Unknown tool") && text.contains("launch"),
        "{text}"
    );
    assert_eq!(hits.load(Ordering::SeqCst), 1);
    assert_eq!(session.calls_served(), 1);

    armed.store(true, Ordering::SeqCst);
    assert_eq!(
        client.call("launch", json!({}))["isError"],
        false,
        "back without reopening"
    );
}

#[test]
fn a_declined_call_carries_its_reason_and_structured_code() {
    let host = host();
    let hits = Arc::new(AtomicUsize::new(0));
    let session = host.open_session(counting_surface(&hits));
    let mut client = McpClient::for_session(&host, &session);
    client.initialize("2025-11-25");
    let result = client.call("quota", json!({}));
    assert_eq!(result["isError"], true);
    assert_eq!(
        result["content"][0]["text"],
        "daily quota of 3 calls used up; try tomorrow"
    );
    assert_eq!(
        result["structuredContent"],
        json!({"code": "quota_exceeded"})
    );

    let mut old = McpClient::for_session(&host, &session);
    old.initialize("2025-03-26");
    let result = old.call("quota", json!({}));
    assert!(
        result.get("structuredContent").is_none(),
        "2025-03-26 has no structuredContent"
    );
    assert!(result["content"][0]["text"]
        .as_str()
        .unwrap()
        .contains("quota_exceeded"));
}

#[test]
fn concurrent_sessions_never_see_each_others_tools_or_handlers() {
    let host = host();
    let mut sessions = Vec::new();
    for n in 0..4 {
        let name = format!("tool_{n}");
        let surface = StaticSurface::new()
            .tool(Tool::new(name.clone(), "Says its owner."), move |_, _| {
                ToolOutcome::text(format!("owner {n}"))
            })
            .unwrap();
        sessions.push((n, host.open_session(surface)));
    }
    std::thread::scope(|scope| {
        for (n, session) in &sessions {
            let host = &host;
            scope.spawn(move || {
                let mut client = McpClient::for_session(host, session);
                client.initialize("2025-11-25");
                for _ in 0..20 {
                    assert_eq!(client.tool_names(), [format!("tool_{n}")]);
                    let mine = client.call(&format!("tool_{n}"), json!({}));
                    assert_eq!(mine["content"][0]["text"], format!("owner {n}"));
                    let other = client.call(&format!("tool_{}", (n + 1) % 4), json!({}));
                    assert_eq!(
                        other["isError"], true,
                        "another session's tool is unknown here"
                    );
                }
            });
        }
    });
    for (_, session) in &sessions {
        assert_eq!(session.calls_served(), 20);
    }
}

#[test]
fn a_panicking_handler_costs_one_call_and_the_next_call_works() {
    let events = EventLog::new();
    let host = ToolHost::bind(events.hook(HostConfig::default().workers(2))).unwrap();
    let hits = Arc::new(AtomicUsize::new(0));
    let session = host.open_session(counting_surface(&hits));
    let mut client = McpClient::for_session(&host, &session);
    client.initialize("2025-11-25");
    for _ in 0..3 {
        let failed = client.call("boom", json!({}));
        assert_eq!(failed["isError"], true);
        let text = failed["content"][0]["text"].as_str().unwrap();
        assert!(
            !text.contains("exploded"),
            "the panic message stays with the host: {text}"
        );
        let ok = client.call("echo", json!({"text": "still here"}));
        assert_eq!(ok["content"][0]["text"], "still here");
    }
    let details = events.failures();
    assert_eq!(details.len(), 3);
    assert!(
        details[0].contains("handler exploded on purpose"),
        "{details:?}"
    );
}

#[test]
fn requests_after_initialize_need_a_known_mcp_session_id() {
    let host = host();
    let session = host.open_session(StaticSurface::new());
    let mut client = McpClient::for_session(&host, &session);
    let list = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/list"});

    let missing = client.post(&list);
    assert_eq!(missing.status, 400);
    assert_eq!(missing.json()["id"], 5);
    assert!(String::from_utf8_lossy(&missing.body).contains("Mcp-Session-Id"));

    client.session_id = Some("0123456789abcdef0123456789abcdef".into());
    let unknown = client.post(&list);
    assert_eq!(unknown.status, 404);
    assert_eq!(unknown.json()["error"]["code"], -32001);
    assert_eq!(unknown.json()["id"], 5);

    client.session_id = None;
    client.initialize("2025-11-25");
    assert_eq!(client.post(&list).status, 200);

    // DELETE ends it; the id is then unknown.
    let id = client.session_id.clone().unwrap();
    let auth = session.authorization();
    let deleted = client
        .conn
        .request(
            "DELETE",
            "/mcp",
            &[("Authorization", &auth), ("Mcp-Session-Id", &id)],
            b"",
        )
        .unwrap();
    assert_eq!(deleted.status, 204);
    assert_eq!(client.post(&list).status, 404);
}

#[test]
fn an_mcp_session_of_one_bearer_is_unknown_to_another() {
    let host = host();
    let first = host.open_session(StaticSurface::new());
    let second = host.open_session(StaticSurface::new());
    let mut a = McpClient::for_session(&host, &first);
    a.initialize("2025-11-25");
    let mut b = McpClient::for_session(&host, &second);
    b.session_id = a.session_id.clone();
    let reply = b.post(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}));
    assert_eq!(reply.status, 404);
}

#[test]
fn an_unsupported_protocol_version_header_is_refused_with_400() {
    let host = host();
    let session = host.open_session(StaticSurface::new());
    let mut client = McpClient::for_session(&host, &session);
    // 2025-03-26 clients send no header of their own, so the test's is alone.
    client.initialize("2025-03-26");
    let list = br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
    let bad = client.post_raw(list, &[("MCP-Protocol-Version", "1999-01-01")]);
    assert_eq!(bad.status, 400);
    let message = bad.json();
    assert_eq!(message["error"]["code"], -32600);
    assert_eq!(message["id"], 1, "the refusal answers the request's id");
    let text = message["error"]["message"].as_str().unwrap();
    assert!(
        text.contains("1999-01-01") && text.contains("2025-11-25"),
        "{text}"
    );
    let good = client.post_raw(list, &[("MCP-Protocol-Version", "2025-03-26")]);
    assert_eq!(good.status, 200);
}

#[test]
fn the_schema_check_catches_a_result_that_breaks_the_schema() {
    if !schema::available() {
        // Nothing to prove without the schemas; toolhost_tests::schema has said on
        // stderr that validation is skipped and how to turn it on.
        return;
    }
    let broken = json!({"content": "not an array"});
    let caught =
        panic::catch_unwind(|| schema::assert_valid("2025-11-25", "CallToolResult", &broken))
            .expect_err("a result whose content is not an array fails the check");
    let message = caught
        .downcast_ref::<String>()
        .expect("the check panics with its message");
    assert!(message.contains("not a valid CallToolResult"), "{message}");
    // And the check passes what the schema allows.
    schema::assert_valid("2025-11-25", "CallToolResult", &json!({"content": []}));
}

#[test]
fn malformed_json_and_invalid_messages_get_precise_errors() {
    let host = host();
    let session = host.open_session(StaticSurface::new());
    let mut client = McpClient::for_session(&host, &session);
    client.initialize("2025-11-25");

    let parse = client.post_raw(b"{\"jsonrpc\": \"2.0\", \"id\": 1, ", &[]);
    assert_eq!(parse.status, 400);
    let body = parse.json();
    assert_eq!(body["error"]["code"], -32700);
    assert!(body.get("id").is_none());
    schema::assert_valid("2025-11-25", "JSONRPCErrorResponse", &body);

    let no_version = client.post(&json!({"id": 3, "method": "ping"}));
    assert_eq!(no_version.status, 400);
    assert_eq!(no_version.json()["error"]["code"], -32600);
    assert_eq!(no_version.json()["id"], 3);

    let error = client.request_error("no/such/method", json!({}));
    assert_eq!(error["code"], -32601);

    let error = client.request_error("tools/call", json!({"arguments": {}}));
    assert_eq!(error["code"], -32602);
    let error = client.request_error("tools/call", json!({"name": "x", "arguments": "text"}));
    assert_eq!(error["code"], -32602);

    // The session survives all of it.
    assert_eq!(client.request("ping", json!({}), "EmptyResult"), json!({}));
}

#[test]
fn batches_are_served_in_2025_03_26_and_refused_in_later_revisions() {
    let host = host();
    let hits = Arc::new(AtomicUsize::new(0));
    let session = host.open_session(counting_surface(&hits));
    let batch = json!([
        {"jsonrpc": "2.0", "id": 1, "method": "ping"},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "b"}}},
        {"jsonrpc": "2.0", "id": 3, "method": "initialize", "params": {"protocolVersion": "2025-03-26"}},
    ]);

    let mut old = McpClient::for_session(&host, &session);
    old.initialize("2025-03-26");
    let reply = old.post(&batch);
    assert_eq!(reply.status, 200);
    let replies = reply.json();
    schema::assert_valid("2025-03-26", "JSONRPCBatchResponse", &replies);
    let replies = replies.as_array().unwrap();
    assert_eq!(replies.len(), 3, "the notification gets no reply");
    assert_eq!(replies[0]["result"], json!({}));
    assert_eq!(replies[1]["result"]["content"][0]["text"], "b");
    assert_eq!(
        replies[2]["error"]["code"], -32600,
        "initialize must not be batched"
    );

    let mut new = McpClient::for_session(&host, &session);
    new.initialize("2025-06-18");
    let refused = new.post(&batch);
    assert_eq!(refused.status, 400);
    assert!(String::from_utf8_lossy(&refused.body).contains("2025-03-26"));
    assert_eq!(
        hits.load(Ordering::SeqCst),
        1,
        "the refused batch ran nothing"
    );
}

#[test]
fn hostile_host_and_origin_headers_get_403_before_authentication() {
    let host = host();
    let hits = Arc::new(AtomicUsize::new(0));
    let session = host.open_session(counting_surface(&hits));
    let auth = session.authorization();
    let body = br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}"#;
    let mut conn = Conn::open(host.local_addr()).unwrap();
    let port = host.local_addr().port();
    let evil_host = format!("evil.example:{port}");
    let cases: [(&str, &str); 3] = [
        ("Host", &evil_host),
        ("Origin", "http://evil.example"),
        ("Origin", "null"),
    ];
    for (name, value) in cases {
        let mut headers: Vec<(&str, &str)> = JSON_HEADERS.to_vec();
        headers.push(("Authorization", &auth));
        headers.push((name, value));
        let reply = conn.request("POST", "/mcp", &headers, body).unwrap();
        assert_eq!(reply.status, 403, "{name}: {value}");
        assert!(reply.json().get("id").is_none());
    }
    let localhost = format!("localhost:{port}");
    let mut headers: Vec<(&str, &str)> = JSON_HEADERS.to_vec();
    headers.extend([
        ("Authorization", auth.as_str()),
        ("Host", localhost.as_str()),
        ("Origin", "http://localhost:5173"),
    ]);
    assert_eq!(
        conn.request("POST", "/mcp", &headers, body).unwrap().status,
        200
    );
}

#[test]
fn other_paths_and_methods_are_refused_precisely() {
    let host = host();
    let session = host.open_session(StaticSurface::new());
    let auth = session.authorization();
    let mut conn = Conn::open(host.local_addr()).unwrap();
    let with_auth = [("Authorization", auth.as_str())];
    assert_eq!(
        conn.request("POST", "/other", &with_auth, b"{}")
            .unwrap()
            .status,
        404
    );
    let put = conn.request("PUT", "/mcp", &with_auth, b"{}").unwrap();
    assert_eq!(put.status, 405);
    assert_eq!(put.header("allow"), Some("GET, POST, DELETE"));
    let get = conn.request("GET", "/mcp", &with_auth, b"").unwrap();
    assert_eq!(
        get.status, 400,
        "the standalone stream needs an Mcp-Session-Id"
    );
    // Capability URLs are off unless asked for.
    let token = auth.trim_start_matches("Bearer ");
    let cap = conn
        .request("POST", &format!("/cap/{token}/mcp"), &JSON_HEADERS, b"{}")
        .unwrap();
    assert_eq!(cap.status, 404);
    assert!(session.capability_url().is_none());
}

#[test]
fn a_capability_url_authenticates_without_a_header_when_enabled() {
    let host = ToolHost::bind(HostConfig::default().capability_urls(true)).unwrap();
    let hits = Arc::new(AtomicUsize::new(0));
    let session = host.open_session(counting_surface(&hits));
    let url = session.capability_url().unwrap();
    let path = &url[url.find("/cap/").unwrap()..];
    let mut conn = Conn::open(host.local_addr()).unwrap();
    let init = br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}"#;
    let reply = conn.request("POST", path, &JSON_HEADERS, init).unwrap();
    assert_eq!(reply.status, 200);

    let wrong = path.replace("/cap/th_", "/cap/th_0");
    assert_eq!(
        conn.request("POST", &wrong, &JSON_HEADERS, init)
            .unwrap()
            .status,
        401
    );
    let port = host.local_addr().port();
    let evil = format!("evil.example:{port}");
    let mut headers = JSON_HEADERS.to_vec();
    headers.push(("Host", &evil));
    assert_eq!(
        conn.request("POST", path, &headers, init).unwrap().status,
        403
    );

    drop(session);
    assert_eq!(
        conn.request("POST", path, &JSON_HEADERS, init)
            .unwrap()
            .status,
        401
    );
}

#[test]
fn oversized_bodies_get_413_and_the_host_keeps_serving() {
    let host = ToolHost::bind(HostConfig::default().max_body_bytes(1024)).unwrap();
    let session = host.open_session(StaticSurface::new());
    let mut client = McpClient::for_session(&host, &session);
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"pad":"{}"}}}}"#,
        "x".repeat(2000)
    );
    let reply = client.post_raw(big.as_bytes(), &[]);
    assert_eq!(reply.status, 413);
    let mut fresh = McpClient::for_session(&host, &session);
    fresh.initialize("2025-11-25");
}

#[test]
fn events_never_carry_the_bearer() {
    let events = EventLog::new();
    let host = ToolHost::bind(events.hook(HostConfig::default())).unwrap();
    let hits = Arc::new(AtomicUsize::new(0));
    let session = host.open_session(counting_surface(&hits));
    let token = session
        .authorization()
        .trim_start_matches("Bearer ")
        .to_owned();
    let mut client = McpClient::for_session(&host, &session);
    client.initialize("2025-11-25");
    client.call("echo", json!({"text": "x"}));
    client.call("boom", json!({}));
    let mut wrong = McpClient::new(host.local_addr(), Some(format!("Bearer {token}0")));
    wrong.post(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}));
    let session_id = client.session_id.clone().unwrap();
    let text = format!("{:?} {:?} {:?}", events.all(), session, host);
    assert!(!text.contains(&token) && !text.contains(&token[3..40]));
    assert!(!text.contains(&session_id));
    assert!(
        text.contains("CallFinished"),
        "events were recorded: {text}"
    );
}

#[test]
fn binding_a_non_loopback_address_needs_explicit_permission() {
    let err = ToolHost::bind(HostConfig::default().bind_addr("0.0.0.0:0")).unwrap_err();
    assert!(err.to_string().contains("allow_non_loopback"), "{err}");
    let zero = ToolHost::bind(HostConfig::default().workers(0)).unwrap_err();
    assert!(zero.to_string().contains("worker"), "{zero}");
}

#[test]
fn settings_that_would_mean_no_limit_or_a_spin_are_refused_by_name() {
    use std::time::Duration;
    for (config, setting) in [
        (
            HostConfig::default().read_timeout(Duration::ZERO),
            "read_timeout",
        ),
        (
            HostConfig::default().write_timeout(Duration::ZERO),
            "write_timeout",
        ),
        (
            HostConfig::default().keep_alive(Duration::ZERO),
            "keep_alive",
        ),
        (
            HostConfig::default().max_concurrent_calls(0),
            "max_concurrent_calls",
        ),
        (
            HostConfig::default().call_keep_alive(Duration::ZERO),
            "call_keep_alive",
        ),
        (HostConfig::default().workers(0), "workers"),
        (
            HostConfig::default().call_timeout(Duration::ZERO),
            "call_timeout",
        ),
    ] {
        let err = ToolHost::bind(config).unwrap_err();
        assert!(err.to_string().contains(setting), "{setting}: {err}");
    }
    // Handlers run off the workers, so the call bound is not tied to them.
    assert!(ToolHost::bind(HostConfig::default().workers(1).max_concurrent_calls(64)).is_ok());
    // A zero resume window is allowed: it turns resumption off.
    assert!(ToolHost::bind(HostConfig::default().resume_window(Duration::ZERO)).is_ok());
}

#[test]
fn shutdown_joins_the_workers_and_frees_the_port() {
    let host = host();
    let addr = host.local_addr();
    let session = host.open_session(StaticSurface::new());
    let mut client = McpClient::for_session(&host, &session);
    client.initialize("2025-11-25");
    host.shutdown();
    host.shutdown(); // idempotent
    assert!(
        std::net::TcpStream::connect(addr).is_err(),
        "nothing listens any more"
    );
    let rebound = TcpListener::bind(addr).expect("the port is free again");
    drop(rebound);
    drop(session); // a guard outliving its host is harmless
}

#[test]
fn handlers_see_the_revision_and_client_of_their_session() {
    let host = host();
    let seen: Arc<Mutex<Vec<Value>>> = Arc::default();
    let sink = Arc::clone(&seen);
    let surface = StaticSurface::new()
        .tool(Tool::new("who", "Who called."), move |_, ctx| {
            sink.lock().unwrap().push(json!({
                "revision": ctx.revision().as_str(),
                "client": ctx.client().map(|c| c.name.clone()),
                "id": ctx.request_id().clone(),
                "cancelled": ctx.is_cancelled(),
            }));
            ToolOutcome::text("ok")
        })
        .unwrap();
    let session = host.open_session(surface);
    let mut client = McpClient::for_session(&host, &session);
    client.initialize("2025-06-18");
    client.call("who", json!({}));
    let seen = seen.lock().unwrap();
    assert_eq!(seen[0]["revision"], "2025-06-18");
    assert_eq!(seen[0]["client"], "toolhost-tests");
    assert!(seen[0]["id"].is_i64());
    assert_eq!(seen[0]["cancelled"], false);
}
