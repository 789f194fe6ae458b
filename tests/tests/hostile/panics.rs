//! Faults that cost one request: a `list_tools` or an event hook that
//! panics.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use serde_json::json;
use toolhost::{surface_fn, Event, HostConfig, Tool, ToolHost, ToolOutcome};
use toolhost_tests::{schema, Conn, EventLog, McpClient, JSON_HEADERS, STATELESS};

use crate::{echo_surface, stateless_post};

#[test]
fn a_panicking_list_tools_fails_that_request_in_both_eras_and_the_next_one_works() {
    let events = EventLog::new();
    let host = ToolHost::bind(events.hook(HostConfig::default().workers(2))).unwrap();
    let explode = Arc::new(AtomicBool::new(false));
    let hits = Arc::new(AtomicUsize::new(0));
    let (flag, counter) = (Arc::clone(&explode), Arc::clone(&hits));
    let session = host.open_session(surface_fn(
        move || {
            assert!(
                !flag.load(Ordering::SeqCst),
                "list_tools exploded on purpose"
            );
            vec![Tool::new("echo", "Echo.")]
        },
        move |_, _, _| {
            counter.fetch_add(1, Ordering::SeqCst);
            ToolOutcome::text("ran")
        },
    ));
    let mut client = McpClient::for_session(&host, &session);
    client.initialize("2025-11-25");
    explode.store(true, Ordering::SeqCst);

    // tools/list, and tools/call (whose lookup lists the tools), each fail
    // alone: a JSON-RPC error for that request id, the panic text kept back.
    for (id, method, params) in [
        (71, "tools/list", json!({})),
        (72, "tools/call", json!({"name": "echo", "arguments": {}})),
    ] {
        let reply =
            client.post(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        assert_eq!(reply.status, 200, "{method}");
        let message = reply.json();
        schema::assert_valid("2025-11-25", "JSONRPCErrorResponse", &message);
        assert_eq!(message["id"], id);
        assert_eq!(message["error"]["code"], -32603, "{method}: {message}");
        assert!(!message.to_string().contains("exploded"), "{message}");
    }
    // In 2026-07-28 the same fault travels as HTTP 500 with the JSON-RPC
    // error (src/mcp/stateless.rs maps -32603 to 500).
    let mut conn = Conn::open(host.local_addr()).unwrap();
    let auth = session.authorization();
    let reply = stateless_post(&mut conn, &auth, 73, "tools/list", json!({}));
    let message = reply.json();
    assert_eq!(reply.status, 500, "{message}");
    schema::assert_valid(STATELESS, "JSONRPCErrorResponse", &message);
    assert_eq!(message["id"], 73);
    assert_eq!(message["error"]["code"], -32603);
    assert_eq!(hits.load(Ordering::SeqCst), 0, "no handler ran");
    assert_eq!(session.calls_served(), 0);

    // The next requests, on the same connections, work.
    explode.store(false, Ordering::SeqCst);
    assert_eq!(client.tool_names(), ["echo"]);
    assert_eq!(client.call("echo", json!({}))["content"][0]["text"], "ran");
    let reply = stateless_post(&mut conn, &auth, 74, "tools/list", json!({}));
    assert_eq!(reply.status, 200);
    assert_eq!(hits.load(Ordering::SeqCst), 1);

    let faults = events.pick(|e| match e {
        Event::SurfaceFault { message } => Some(message.clone()),
        _ => None,
    });
    assert_eq!(faults.len(), 3, "{faults:?}");
    assert!(faults
        .iter()
        .all(|f| f.contains("list_tools exploded on purpose")));
}

#[test]
fn a_panicking_event_hook_is_contained_and_leaks_no_call_slot_or_lock() {
    let armed = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&armed);
    let host = ToolHost::bind(
        HostConfig::default()
            .workers(2)
            .max_concurrent_calls(1)
            .on_event(move |event| {
                if flag.load(Ordering::SeqCst) && !matches!(event, Event::CallFinished { .. }) {
                    panic!("event hook exploded on purpose: {event:?}");
                }
            }),
    )
    .unwrap();
    let hits = Arc::new(AtomicUsize::new(0));
    let session = host.open_session(echo_surface(&hits));
    let mut client = McpClient::for_session(&host, &session);
    client.initialize("2025-11-25");
    let call = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
        "params": {"name": "echo", "arguments": {}}});

    armed.store(true, Ordering::SeqCst);
    // The hook panics at a call's start, at an unknown tool and at an auth
    // refusal: the host contains each panic and answers as it would anyway.
    let auth = session.authorization();
    let mcp_session = client.session_id.clone().unwrap();
    let unknown_tool = json!({"jsonrpc": "2.0", "id": 6, "method": "tools/call",
        "params": {"name": "nope"}});
    let mut statuses = Vec::new();
    for (credential, body) in [
        (Some(auth.as_str()), call),
        (Some(auth.as_str()), unknown_tool),
        (None, json!({})),
    ] {
        let mut headers: Vec<(&str, &str)> = JSON_HEADERS.to_vec();
        headers.extend([
            ("Mcp-Session-Id", mcp_session.as_str()),
            ("MCP-Protocol-Version", "2025-11-25"),
        ]);
        if let Some(credential) = credential {
            headers.push(("Authorization", credential));
        }
        let mut conn = Conn::open(host.local_addr()).unwrap();
        let reply = conn.request("POST", "/mcp", &headers, body.to_string().as_bytes());
        statuses.push(reply.map(|r| r.status).ok());
    }
    assert_eq!(statuses, [Some(200), Some(200), Some(401)]);
    armed.store(false, Ordering::SeqCst);

    // With one call slot, a slot leaked by the panic would make this a 503.
    for n in 0..3 {
        let result = client.call("echo", json!({"n": n}));
        assert_eq!(result["isError"], false);
    }
    assert_eq!(client.tool_names(), ["echo"]);
    assert_eq!(
        hits.load(Ordering::SeqCst),
        4,
        "the call whose start event panicked ran all the same"
    );
    assert_eq!(
        session.calls_served(),
        4,
        "served calls and handler runs agree"
    );
    assert_eq!(host.open_sessions(), 1);
    drop(session);
    assert_eq!(host.open_sessions(), 0);
}
