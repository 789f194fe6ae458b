//! A cancelled call is an outcome of its own: the event hook reports it as
//! cancelled (with the host's reason), `calls_cancelled` counts it apart
//! from declines, a client that cancelled gets no answer, and any other
//! reader gets a fixed text — never a reason written as if for the model —
//! in the stateful revisions and in 2026-07-28 alike.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use toolhost::{
    CallContext, CallResult, Event, HostConfig, StaticSurface, Tool, ToolError, ToolHost,
    ToolOutcome, ToolSession,
};
use toolhost_tests::{
    call_in, sse_messages, wait_for, EventLog, EventStream, McpClient, STATELESS,
};

const CANCELLED_TEXT: &str = "The tool call was cancelled before it finished and has no result.";

/// A `reindex` that reports progress until cancelled (and gives up after
/// ten seconds, which no test waits for), a `give_up` that stops itself,
/// and a `refuse` that declines.
fn rig() -> (ToolHost, ToolSession, EventLog, Arc<AtomicUsize>) {
    let log = EventLog::new();
    let host = ToolHost::bind(log.hook(HostConfig::default())).unwrap();
    let started = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&started);
    let surface = StaticSurface::builder()
        .typed(
            Tool::new("reindex", "Rebuilds the index; slow."),
            move |_: Value, ctx: &CallContext| {
                counter.fetch_add(1, Ordering::SeqCst);
                let give_up = Instant::now() + Duration::from_secs(10);
                let mut step = 0.0;
                while Instant::now() < give_up {
                    ctx.check_cancelled()?;
                    step += 1.0;
                    ctx.progress(step, None, Some("reindexing"));
                    thread::sleep(Duration::from_millis(10));
                }
                Ok::<_, ToolError>("reindexed")
            },
        )
        .tool(Tool::new("give_up", "Stops at once."), |_, _| {
            ToolOutcome::cancelled()
        })
        .tool(Tool::new("refuse", "Declines."), |_, _| {
            ToolOutcome::declined("no notes to refuse")
        })
        .build()
        .unwrap();
    let session = host.open_session(surface);
    (host, session, log, started)
}

/// Every finished call's tool and outcome, in order.
fn finished(log: &EventLog) -> Vec<(String, CallResult)> {
    log.pick(|event| match event {
        Event::CallFinished { tool, outcome, .. } => Some((tool.clone(), outcome.clone())),
        _ => None,
    })
}

fn wait_for_finished(log: &EventLog, count: usize) {
    wait_for("the handler to return", || finished(log).len() == count);
}

#[test]
fn a_call_the_client_cancels_ends_cancelled_not_declined_and_its_request_gets_no_response() {
    let (host, session, log, started) = rig();
    let mut client = McpClient::for_session(&host, &session);
    client.initialize("2025-11-25");
    let (addr, auth, mcp_session) = (
        host.local_addr(),
        client.authorization.clone(),
        client.session_id.clone(),
    );
    let running = thread::spawn(move || {
        let mut caller = McpClient::new(addr, auth);
        caller.session_id = mcp_session;
        caller.revision = "2025-11-25".into();
        caller.post(&json!({"jsonrpc": "2.0", "id": 41, "method": "tools/call",
            "params": {"name": "reindex", "arguments": {}, "_meta": {"progressToken": "p"}}}))
    });
    wait_for("the handler to start", || {
        started.load(Ordering::SeqCst) == 1
    });
    let ack = client.post(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 41, "reason": "user pressed stop"}}),
    );
    assert_eq!(ack.status, 202);
    let reply = running.join().unwrap();
    assert_eq!(reply.status, 200);
    assert!(
        sse_messages(&reply.body)
            .iter()
            .all(|m| m.get("id").is_none()),
        "no response for a request its client cancelled"
    );
    wait_for_finished(&log, 1);
    assert_eq!(
        finished(&log),
        [(
            "reindex".to_owned(),
            CallResult::Cancelled {
                reason: "user pressed stop".into()
            }
        )]
    );
    assert_eq!((session.calls_served(), session.calls_cancelled()), (1, 1));

    // A decline is a decline: counted as served, not as cancelled.
    assert_eq!(client.call("refuse", json!({}))["isError"], true);
    assert!(
        matches!(&finished(&log)[1].1, CallResult::Declined { reason } if reason == "no notes to refuse")
    );
    assert_eq!((session.calls_served(), session.calls_cancelled()), (2, 1));
}

#[test]
fn in_2026_07_28_a_call_whose_client_closes_its_stream_ends_cancelled_and_is_counted() {
    let (host, session, log, started) = rig();
    let body = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {
        "name": "reindex", "arguments": {},
        "_meta": {"io.modelcontextprotocol/protocolVersion": STATELESS,
                  "io.modelcontextprotocol/clientCapabilities": {},
                  "progressToken": 9}}})
    .to_string();
    let mut stream = EventStream::open(
        host.local_addr(),
        &format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nAuthorization: {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: {STATELESS}\r\nMcp-Method: tools/call\r\nMcp-Name: reindex\r\nContent-Length: {}\r\n\r\n{body}",
            host.local_addr(),
            session.authorization(),
            body.len()
        ),
    );
    let progress = stream.next_message().expect("progress");
    assert_eq!(progress["method"], "notifications/progress");
    assert_eq!(started.load(Ordering::SeqCst), 1);
    drop(stream);
    wait_for_finished(&log, 1);
    let (tool, outcome) = finished(&log).remove(0);
    assert_eq!(tool, "reindex");
    assert!(
        matches!(&outcome, CallResult::Cancelled { reason } if reason == "the client closed the response stream"),
        "{outcome:?}"
    );
    assert_eq!((session.calls_served(), session.calls_cancelled()), (1, 1));

    let declined = call_in(&host, &session, STATELESS, "refuse", json!({}));
    assert_eq!(declined["content"][0]["text"], "no notes to refuse");
    assert_eq!((session.calls_served(), session.calls_cancelled()), (2, 1));
}

#[test]
fn a_handler_that_stops_itself_answers_a_fixed_text_in_every_era_and_the_reason_stays_home() {
    let (host, session, log, _) = rig();
    for (calls, revision) in ["2025-03-26", "2025-11-25", STATELESS]
        .into_iter()
        .enumerate()
    {
        // call_in checks the result against the revision's schema.
        let result = call_in(&host, &session, revision, "give_up", json!({}));
        assert_eq!(result["isError"], true, "{revision}");
        assert_eq!(
            result["content"],
            json!([{"type": "text", "text": CANCELLED_TEXT}]),
            "{revision}"
        );
        assert!(
            !result.to_string().contains("handler"),
            "{revision}: {result}"
        );
        if revision == STATELESS {
            assert_eq!(result["resultType"], "complete");
        }
        assert_eq!(session.calls_cancelled(), calls as u64 + 1);
    }
    for (_, outcome) in finished(&log) {
        assert_eq!(
            outcome,
            CallResult::Cancelled {
                reason: "the handler stopped the call, which nothing had cancelled".into()
            }
        );
    }
    // The event's text names the state, unlike a decline's.
    let shown = log.pick(|event| match event {
        Event::CallFinished { .. } => Some(event.to_string()),
        _ => None,
    });
    assert!(shown[0].contains("cancelled after"), "{}", shown[0]);
    assert!(!shown[0].contains("declined"), "{}", shown[0]);
}
