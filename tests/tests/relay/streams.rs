//! The host's streams behind the relay: a stream closed mid-call is
//! resumed, and list changes arrive on the session's own stream.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::pipes::Bridge;
use crate::{host, tools, PATIENCE};

#[test]
fn a_stream_the_host_closes_mid_call_is_resumed() {
    let host = host();
    let session = host.open_session(tools(&Arc::default()));
    let mut bridge = Bridge::start(&session);
    bridge.initialize("2025-11-25", json!({}));
    let answer = bridge.request(
        1,
        "tools/call",
        json!({"name": "count", "arguments": {}, "_meta": {"progressToken": 1}}),
    );
    assert_eq!(
        answer["result"]["content"][0]["text"], "resumed",
        "{answer}"
    );
    let steps: Vec<f64> = bridge
        .skipped
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .filter_map(|m| m["params"]["progress"].as_f64())
        .collect();
    assert_eq!(steps, [1.0, 2.0, 3.0], "each report exactly once");
}

#[test]
fn list_changes_reach_the_client_on_the_sessions_own_stream() {
    let host = host();
    let session = host.open_session(tools(&Arc::default()));
    let mut bridge = Bridge::start(&session);
    // Before any MCP session there is no stream to hear on.
    session.notify_tools_changed();
    assert_eq!(bridge.quiet_for(Duration::from_millis(100)), None);
    bridge.initialize("2025-06-18", json!({}));
    bridge.request(1, "ping", json!({}));
    // The relay opens the stream on its own time; tell until it hears.
    let deadline = Instant::now() + PATIENCE;
    let heard = loop {
        session.notify_tools_changed();
        if let Some(line) = bridge.quiet_for(Duration::from_millis(50)) {
            break line;
        }
        assert!(Instant::now() < deadline, "no list change relayed");
    };
    let message: Value = serde_json::from_str(&heard).unwrap();
    assert_eq!(message["method"], "notifications/tools/list_changed");
}
