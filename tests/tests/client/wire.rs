//! What the client writes and how it reads the answer, against a scripted
//! server: pages of tools, the headers of a 2026-07-28 request, the fallback
//! to the stateful era, event streams and answers that are not JSON-RPC.

use serde_json::{json, Value};
use toolhost::client::{CallOptions, Client, ClientError, Era};
use toolhost::Revision;
use toolhost_tests::schema;

use crate::scripted::{
    accepted, json_reply, ok, page, result, scripted, sse_reply, stateless, Seen,
};

#[test]
fn list_tools_follows_next_cursor_until_the_last_page() {
    let server = scripted(vec![
        page(&["a", "b"], Some("p2")),
        page(&["c"], Some("p3")),
        page(&["d"], None),
    ]);
    let tools = stateless(&server.url).list_tools().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
    assert_eq!(names, ["a", "b", "c", "d"]);
    let (seen, connections) = server.done.join().unwrap();
    assert_eq!(connections, 1, "one keep-alive connection for every page");
    let cursors: Vec<&Value> = seen.iter().map(|s| &s.body["params"]["cursor"]).collect();
    assert_eq!(cursors, [&Value::Null, &json!("p2"), &json!("p3")]);
    for request in &seen {
        schema::assert_valid("2026-07-28", "ListToolsRequest", &request.body);
    }
}

#[test]
fn a_repeated_cursor_is_malformed_instead_of_looping() {
    let server = scripted(vec![page(&["a"], Some("same")), page(&["b"], Some("same"))]);
    let err = stateless(&server.url).list_tools().unwrap_err();
    assert!(
        matches!(err, ClientError::Malformed { .. }) && err.to_string().contains("twice"),
        "{err}"
    );
    server.done.join().unwrap();
}

#[test]
fn a_listing_past_the_clients_bound_across_pages_is_refused_and_no_later_page_is_asked_for() {
    // The server has a third page, never asked for: it stops after two.
    let server = scripted(vec![
        page(&["a", "b"], Some("p2")),
        page(&["c", "d"], Some("p3")),
    ]);
    let mut client = Client::builder(&server.url)
        .era(Era::Stateless)
        .max_listed_tools(3)
        .connect()
        .unwrap();
    let err = client.list_tools().unwrap_err();
    let text = err.to_string();
    let ClientError::ListingTooLarge {
        server: named,
        tools,
        pages,
        limit,
        unit,
        setting,
        ..
    } = &err
    else {
        panic!("{err:?}")
    };
    assert_eq!(
        (*tools, *pages, *limit, *unit, *setting),
        (4, 2, 3, "tools", "ClientBuilder::max_listed_tools")
    );
    let authority = server
        .url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp");
    assert_eq!(named, &format!("the MCP server at {authority}"));
    assert!(
        text.contains("listed 4 tools")
            && text.contains("past the limit of 3 tools")
            && text.contains("raise ClientBuilder::max_listed_tools"),
        "{text}"
    );
    let (seen, _) = server.done.join().unwrap();
    assert_eq!(seen.len(), 2);

    // The byte bound, named by its own setting.
    let server = scripted(vec![
        page(&["a", "b"], Some("p2")),
        page(&["c", "d"], Some("p3")),
    ]);
    let err = Client::builder(&server.url)
        .era(Era::Stateless)
        .max_listing_bytes(150)
        .connect()
        .unwrap()
        .list_tools()
        .unwrap_err();
    assert!(
        matches!(
            err,
            ClientError::ListingTooLarge {
                pages: 2,
                unit: "bytes",
                setting: "ClientBuilder::max_listing_bytes",
                ..
            }
        ),
        "{err:?}"
    );
    server.done.join().unwrap();

    // Within the bound, every page is read.
    let server = scripted(vec![page(&["a", "b"], Some("p2")), page(&["c", "d"], None)]);
    let tools = Client::builder(&server.url)
        .era(Era::Stateless)
        .max_listed_tools(4)
        .connect()
        .unwrap()
        .list_tools()
        .unwrap();
    assert_eq!(tools.len(), 4);
    server.done.join().unwrap();
}

#[test]
fn stateless_requests_carry_the_headers_and_meta_the_revision_requires() {
    let server = scripted(vec![ok(|seen| result(seen, json!({"content": []})))]);
    let mut client = Client::builder(&server.url)
        .era(Era::Stateless)
        .bearer("secret")
        .header("X-Trace", "t1")
        .client_info("rig", "9")
        .connect()
        .unwrap();
    client.call_tool("grüße", json!({"n": 1})).unwrap();
    let (seen, _) = server.done.join().unwrap();
    let call = &seen[0];
    schema::assert_valid("2026-07-28", "CallToolRequest", &call.body);
    assert_eq!(call.method, "POST");
    assert_eq!(call.header("MCP-Protocol-Version"), Some("2026-07-28"));
    assert_eq!(call.header("Mcp-Method"), Some("tools/call"));
    assert_eq!(call.header("Mcp-Name"), Some("=?base64?Z3LDvMOfZQ==?="));
    assert_eq!(call.header("Authorization"), Some("Bearer secret"));
    assert_eq!(call.header("X-Trace"), Some("t1"));
    assert_eq!(
        call.header("Accept"),
        Some("application/json, text/event-stream")
    );
    assert_eq!(call.header("Mcp-Session-Id"), None);
    let meta = &call.body["params"]["_meta"];
    assert_eq!(
        meta["io.modelcontextprotocol/clientInfo"],
        json!({"name": "rig", "version": "9"})
    );
    assert_eq!(
        meta["io.modelcontextprotocol/clientCapabilities"],
        json!({})
    );
    assert_eq!(call.body["params"]["arguments"], json!({"n": 1}));
}

#[test]
fn auto_falls_back_to_initialize_when_discover_is_refused_and_then_speaks_stateful() {
    let server = scripted(vec![
        Box::new(|seen: &Seen| {
            let error = json!({"jsonrpc": "2.0", "id": seen.id(), "error": {"code": -32601, "message": "Method not found"}});
            json_reply(404, "", &error)
        }),
        Box::new(|seen: &Seen| {
            let init = result(
                seen,
                json!({
                    "protocolVersion": "2025-06-18",
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "legacy", "version": "1"},
                    "instructions": "Be kind.",
                }),
            );
            json_reply(200, "Mcp-Session-Id: s-42\r\n", &init)
        }),
        accepted(),
        ok(|seen| result(seen, json!({}))),
        Box::new(|seen: &Seen| {
            sse_reply(&[result(
                seen,
                json!({"content": [{"type": "text", "text": "done"}]}),
            )])
        }),
        accepted(),
    ]);
    let mut client = Client::connect(&server.url).unwrap();
    assert_eq!(client.era(), Era::Stateful);
    assert_eq!(client.revision(), Revision::V2025_06_18);
    assert_eq!(client.session_id(), Some("s-42"));
    assert_eq!(client.instructions(), Some("Be kind."));
    assert_eq!(client.server_info().unwrap().name, "legacy");
    client.ping().unwrap();
    assert_eq!(client.call_tool("x", Value::Null).unwrap().text(), "done");
    client.close().unwrap();

    let (seen, _) = server.done.join().unwrap();
    let methods: Vec<&str> = seen
        .iter()
        .map(|s| s.body["method"].as_str().unwrap_or(&s.method))
        .collect();
    assert_eq!(
        methods,
        [
            "server/discover",
            "initialize",
            "notifications/initialized",
            "ping",
            "tools/call",
            "DELETE"
        ]
    );
    schema::assert_valid("2026-07-28", "DiscoverRequest", &seen[0].body);
    schema::assert_valid("2025-11-25", "InitializeRequest", &seen[1].body);
    assert_eq!(seen[1].body["params"]["protocolVersion"], "2025-11-25");
    assert_eq!(seen[1].header("Mcp-Session-Id"), None);
    schema::assert_valid("2025-06-18", "InitializedNotification", &seen[2].body);
    schema::assert_valid("2025-06-18", "PingRequest", &seen[3].body);
    schema::assert_valid("2025-06-18", "CallToolRequest", &seen[4].body);
    assert!(seen[4].body["params"].get("arguments").is_none());
    for later in &seen[2..] {
        assert_eq!(
            later.header("Mcp-Session-Id"),
            Some("s-42"),
            "{}",
            later.method
        );
        assert_eq!(later.header("MCP-Protocol-Version"), Some("2025-06-18"));
        assert_eq!(later.header("Mcp-Method"), None);
    }
}

#[test]
fn an_event_stream_delivers_progress_then_the_result_and_keeps_the_connection() {
    let server = scripted(vec![
        Box::new(|seen: &Seen| {
            let token = seen.body["params"]["_meta"]["progressToken"].clone();
            let progress = |n: u32, token: &Value| {
                json!({"jsonrpc": "2.0", "method": "notifications/progress",
                "params": {"progressToken": token, "progress": n, "total": 3, "message": format!("step {n}")}})
            };
            sse_reply(&[
                progress(1, &token),
                json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": "other", "progress": 9}}),
                json!({"jsonrpc": "2.0", "id": 99, "method": "ping"}),
                json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "x"}}),
                progress(2, &token),
                progress(3, &token),
                result(
                    seen,
                    json!({"content": [{"type": "text", "text": "counted"}], "resultType": "complete"}),
                ),
            ])
        }),
        ok(|seen| {
            result(
                seen,
                json!({"content": [{"type": "text", "text": "second"}]}),
            )
        }),
    ]);
    let mut client = stateless(&server.url);
    let mut reports = Vec::new();
    let counted = client
        .call_tool_with(
            "count",
            json!({}),
            CallOptions::new()
                .on_progress(|p| reports.push((p.progress, p.total, p.message.clone()))),
        )
        .unwrap();
    assert_eq!(counted.text(), "counted");
    assert_eq!(
        reports,
        [1.0, 2.0, 3.0].map(|n| (n, Some(3.0), Some(format!("step {n}"))))
    );
    assert_eq!(
        client.call_tool("again", json!({})).unwrap().text(),
        "second"
    );
    let (seen, connections) = server.done.join().unwrap();
    assert_eq!(
        connections, 1,
        "the stream ended cleanly, so the connection was reused"
    );
    assert_eq!(
        seen[0].body["params"]["_meta"]["progressToken"],
        seen[0].id()
    );
    assert!(seen[1].body["params"]["_meta"]
        .get("progressToken")
        .is_none());
}

#[test]
fn a_stream_that_ends_without_the_response_is_malformed() {
    let server = scripted(vec![Box::new(|_: &Seen| {
        sse_reply(&[json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {}})])
    })]);
    let err = stateless(&server.url)
        .call_tool("x", json!({}))
        .unwrap_err();
    assert!(
        err.to_string().contains("ended before the response"),
        "{err}"
    );
    server.done.join().unwrap();
}

#[test]
fn an_http_error_without_json_rpc_reports_status_and_body() {
    let server = scripted(vec![Box::new(|_: &Seen| {
        b"HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain\r\nContent-Length: 11\r\n\r\nupstream down".to_vec()
    })]);
    let err = stateless(&server.url)
        .call_tool("x", json!({}))
        .unwrap_err();
    assert!(
        matches!(&err, ClientError::Http { status: 502, body } if body == "upstream do"),
        "{err:?}"
    );
    server.done.join().unwrap();
}
