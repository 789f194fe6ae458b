//! Requests carried through the relay: initialize, list and call; progress
//! and log messages; tools that ask back; requests side by side; a
//! cancelled request.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use toolhost::relay::Ending;
use toolhost_tests::schema::assert_valid;
use toolhost_tests::wait_for;

use crate::pipes::Bridge;
use crate::{host, stateless_meta, tools, Seen};

#[test]
fn a_stateful_client_initializes_lists_and_calls_through_the_relay() {
    let host = host();
    let seen = Arc::new(Seen::default());
    let session = host.open_session(tools(&seen));
    let mut bridge = Bridge::start(&session);

    let init = bridge.initialize("2025-06-18", json!({}));
    assert_valid("2025-06-18", "JSONRPCResponse", &init);
    assert_eq!(init["result"]["serverInfo"]["name"], "bridged");

    let list = bridge.request(1, "tools/list", json!({}));
    assert_valid("2025-06-18", "ListToolsResult", &list["result"]);
    let names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(names.contains(&"echo"), "{names:?}");

    let call = bridge.request(
        2,
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "über the bridge"}}),
    );
    assert_valid("2025-06-18", "CallToolResult", &call["result"]);
    assert_eq!(call["result"]["content"][0]["text"], "über the bridge");
    assert_eq!(seen.calls.load(Ordering::SeqCst), 1);

    // A request the host refuses comes back as the host's own error, with
    // the client's id.
    let unknown = bridge.request(3, "completion/complete", json!({}));
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");
    assert_eq!(seen.calls.load(Ordering::SeqCst), 1, "nothing else ran");
    assert!(bridge.skipped.is_empty(), "{:?}", bridge.skipped);

    bridge.close_input();
    assert_eq!(bridge.ending(), Ending::InputClosed);
}

#[test]
fn progress_and_log_messages_arrive_before_the_response() {
    let host = host();
    let session = host.open_session(tools(&Arc::default()));
    let mut bridge = Bridge::start(&session);
    bridge.initialize("2025-06-18", json!({}));
    bridge.request(1, "logging/setLevel", json!({"level": "info"}));

    let answer = bridge.request(
        2,
        "tools/call",
        json!({"name": "chatty", "arguments": {}, "_meta": {"progressToken": "p-2"}}),
    );
    assert_eq!(answer["result"]["content"][0]["text"], "done");
    let progress: Vec<&Value> = bridge
        .skipped
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .collect();
    assert_eq!(progress.len(), 3, "{:?}", bridge.skipped);
    for (step, report) in progress.iter().enumerate() {
        assert_eq!(report["params"]["progressToken"], "p-2");
        assert_eq!(report["params"]["progress"], step as f64 + 1.0);
        assert_valid("2025-06-18", "ProgressNotification", report);
    }
    let logs: Vec<&Value> = bridge
        .skipped
        .iter()
        .filter(|m| m["method"] == "notifications/message")
        .collect();
    assert_eq!(logs.len(), 1, "{:?}", bridge.skipped);
    assert_eq!(logs[0]["params"]["data"], "halfway");

    // Without a progress token and a log level, the same call brings
    // nothing but its answer.
    bridge.skipped.clear();
    bridge.request(3, "logging/setLevel", json!({"level": "error"}));
    let quiet = bridge.request(4, "tools/call", json!({"name": "chatty", "arguments": {}}));
    assert_eq!(quiet["result"]["content"][0]["text"], "done");
    assert!(bridge.skipped.is_empty(), "{:?}", bridge.skipped);
}

#[test]
fn a_tool_that_asks_back_gets_the_clients_answers_through_the_relay() {
    let host = host();
    let session = host.open_session(tools(&Arc::default()));
    let mut bridge = Bridge::start(&session);
    bridge.initialize(
        "2025-06-18",
        json!({"elicitation": {}, "roots": {}, "sampling": {}}),
    );

    bridge.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "ask", "arguments": {}}}));
    let question = bridge.next();
    assert_eq!(question["method"], "elicitation/create", "{question}");
    assert_valid("2025-06-18", "ElicitRequest", &question);
    bridge.send(&json!({"jsonrpc": "2.0", "id": question["id"],
        "result": {"action": "accept", "content": {"answer": "forty-two"}}}));
    let answer = bridge.response(&json!(1));
    assert_eq!(answer["result"]["content"][0]["text"], "forty-two");
    assert_eq!(answer["result"]["isError"], false);

    // Roots, then sampling: two questions in one call, answered in turn.
    bridge.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "where", "arguments": {}}}));
    let roots = bridge.next();
    assert_eq!(roots["method"], "roots/list", "{roots}");
    bridge.send(&json!({"jsonrpc": "2.0", "id": roots["id"],
        "result": {"roots": [{"uri": "file:///work", "name": "work"}]}}));
    let sampling = bridge.next();
    assert_eq!(sampling["method"], "sampling/createMessage", "{sampling}");
    bridge.send(&json!({"jsonrpc": "2.0", "id": sampling["id"], "result": {
        "role": "assistant", "content": {"type": "text", "text": "hello"}, "model": "m"}}));
    let answer = bridge.response(&json!(2));
    assert_eq!(
        answer["result"]["content"][0]["text"],
        "\"file:///work\" \"hello\""
    );

    // A refusal goes back as the client's error, and the tool sees it.
    bridge.send(&json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "ask", "arguments": {}}}));
    let question = bridge.next();
    bridge.send(&json!({"jsonrpc": "2.0", "id": question["id"],
        "error": {"code": -1, "message": "not now"}}));
    let refused = bridge.response(&json!(3));
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    let text = refused["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("not now"), "{text}");
}

#[test]
fn requests_run_side_by_side_so_a_long_call_holds_up_nothing() {
    let host = host();
    let seen = Arc::new(Seen::default());
    let session = host.open_session(tools(&seen));
    let mut bridge = Bridge::start(&session);
    bridge.initialize("2025-06-18", json!({}));

    bridge.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "slow", "arguments": {}}}));
    wait_for("the slow call started", || {
        seen.slow_started.load(Ordering::SeqCst)
    });
    let list = bridge.request(2, "tools/list", json!({}));
    assert!(list["result"]["tools"].is_array());
    let echo = bridge.request(
        3,
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "meanwhile"}}),
    );
    assert_eq!(echo["result"]["content"][0]["text"], "meanwhile");
    assert!(
        bridge.skipped.is_empty(),
        "the slow call answered early: {:?}",
        bridge.skipped
    );

    seen.release.store(true, Ordering::SeqCst);
    let slow = bridge.response(&json!(1));
    assert_eq!(slow["result"]["content"][0]["text"], "released");
}

#[test]
fn a_cancelled_request_stops_its_call_and_gets_no_answer() {
    for stateless in [false, true] {
        let host = host();
        let seen = Arc::new(Seen::default());
        let session = host.open_session(tools(&seen));
        let mut bridge = Bridge::start(&session);
        let mut params = json!({"name": "slow", "arguments": {}, "_meta": {"progressToken": 1}});
        if stateless {
            params["_meta"] = stateless_meta();
            params["_meta"]["progressToken"] = json!(1);
        } else {
            bridge.initialize("2025-06-18", json!({}));
        }
        bridge.send(
            &json!({"jsonrpc": "2.0", "id": "slow-1", "method": "tools/call", "params": params}),
        );
        wait_for("the slow call started", || {
            seen.slow_started.load(Ordering::SeqCst)
        });
        // Its first progress through the relay before the cancel: in
        // 2026-07-28 the cancel closes the stream, and a slower loopback
        // (Wine's) could otherwise close it before any progress came.
        let first = bridge.next();
        assert_eq!(first["method"], "notifications/progress", "{first}");
        bridge.skipped.push(first);
        assert!(!seen.slow_cancelled.load(Ordering::SeqCst));
        bridge.send(
            &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": "slow-1", "reason": "the user gave up"}}),
        );
        wait_for(
            &format!("stateless {stateless}: the call saw its cancel"),
            || seen.slow_cancelled.load(Ordering::SeqCst),
        );
        // The relay goes on with the next request, and no answer ever
        // came for the cancelled one.
        let mut list = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/list", "params": {}});
        if stateless {
            list["params"]["_meta"] = stateless_meta();
        }
        bridge.send(&list);
        assert!(bridge.response(&json!(9))["result"].is_object());
        assert_eq!(bridge.quiet_for(Duration::from_millis(100)), None);
        let answered = bridge
            .skipped
            .iter()
            .filter(|m| m.get("method").is_none())
            .count();
        assert_eq!(answered, 0, "stateless {stateless}: {:?}", bridge.skipped);
        // Progress came while it ran: the call was carried until the cancel.
        assert!(!bridge.skipped.is_empty(), "stateless {stateless}");
    }
}
