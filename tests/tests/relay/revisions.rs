//! Each revision carried as it is: a 2026-07-28 client with its headers, a
//! batch of 2025-03-26 answered as one array.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use serde_json::{json, Value};

use crate::pipes::Bridge;
use crate::{host, stateless_meta, tools, Seen, PATIENCE};

#[test]
fn a_2026_07_28_client_is_carried_with_the_headers_of_its_revision() {
    let host = host();
    let seen = Arc::new(Seen::default());
    let session = host.open_session(tools(&seen));
    let mut bridge = Bridge::start(&session);
    let discover = bridge.request(1, "server/discover", json!({"_meta": stateless_meta()}));
    assert!(
        discover["result"]["supportedVersions"]
            .as_array()
            .unwrap()
            .contains(&json!("2026-07-28")),
        "{discover}"
    );
    let call = bridge.request(
        2,
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "modern"}, "_meta": stateless_meta()}),
    );
    assert_eq!(call["result"]["content"][0]["text"], "modern", "{call}");
    assert_eq!(call["result"]["resultType"], "complete");
    assert_eq!(seen.calls.load(Ordering::SeqCst), 1);

    // A request of that revision missing its _meta is the host's to
    // refuse, and its refusal (an HTTP error status) still answers it.
    let mut meta = stateless_meta();
    meta.as_object_mut()
        .unwrap()
        .remove("io.modelcontextprotocol/clientCapabilities");
    let refused = bridge.request(
        3,
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "x"}, "_meta": meta}),
    );
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    assert_eq!(
        seen.calls.load(Ordering::SeqCst),
        1,
        "the refused call never ran"
    );
}

#[test]
fn a_batch_of_2025_03_26_is_answered_as_one_array() {
    let host = host();
    let seen = Arc::new(Seen::default());
    let session = host.open_session(tools(&seen));
    let mut bridge = Bridge::start(&session);
    bridge.initialize("2025-03-26", json!({}));
    bridge.send(&json!([
        {"jsonrpc": "2.0", "id": "a", "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": "one"}}},
        {"jsonrpc": "2.0", "method": "notifications/progress",
            "params": {"progressToken": "x", "progress": 1}},
        {"jsonrpc": "2.0", "id": "b", "method": "ping"},
    ]));
    let line = bridge
        .output
        .recv_timeout(PATIENCE)
        .expect("the batch's answer");
    let answers: Value = serde_json::from_str(&line).expect("JSON");
    let answers = answers.as_array().expect("one array for one batch");
    assert_eq!(answers.len(), 2, "{line}");
    assert_eq!(answers[0]["id"], "a");
    assert_eq!(answers[0]["result"]["content"][0]["text"], "one");
    assert_eq!(answers[1]["id"], "b");
    assert_eq!(seen.calls.load(Ordering::SeqCst), 1);

    // In a later revision the host refuses batches, and says so to each
    // request of it. (A host of its own: the first relay's connections
    // stay open, and tiny_http 0.12 can leave a new connection unserved
    // while all but one of a host's connection threads are taken.)
    let host = self::host();
    let session = host.open_session(tools(&seen));
    let mut bridge = Bridge::start(&session);
    bridge.initialize("2025-06-18", json!({}));
    bridge.send(&json!([
        {"jsonrpc": "2.0", "id": "c", "method": "ping"},
        {"jsonrpc": "2.0", "id": "d", "method": "ping"},
    ]));
    let first = bridge.next();
    let second = bridge.next();
    let mut ids = [first["id"].clone(), second["id"].clone()];
    ids.sort_by_key(Value::to_string);
    assert_eq!(ids, [json!("c"), json!("d")]);
    for refusal in [first, second] {
        let message = refusal["error"]["message"].as_str().unwrap();
        assert!(message.contains("batches"), "{message}");
    }
}
