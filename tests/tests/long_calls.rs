//! Long calls: progress and log notifications on the call's event stream,
//! cancellation from every direction, deadlines, and a protocol that stays
//! responsive while handlers hold every call slot.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use toolhost::{
    Event, HostConfig, LogLevel, StaticSurface, Tool, ToolHost, ToolOutcome, ToolSession,
};
use toolhost_tests::{schema, sse_messages, wait_for, EventLog, McpClient, Reply};

struct Rig {
    host: ToolHost,
    session: ToolSession,
    started: Arc<AtomicUsize>,
    outcomes: mpsc::Receiver<(bool, Option<String>)>,
}

/// A host whose `wait` tool runs until cancelled (reporting what it saw),
/// whose `steps` tool reports progress and logs, and `echo`.
fn rig(config: HostConfig) -> Rig {
    let host = ToolHost::bind(config).unwrap();
    let started = Arc::new(AtomicUsize::new(0));
    let (tx, outcomes) = mpsc::channel();
    let tx = Mutex::new(tx);
    let counter = Arc::clone(&started);
    let surface = StaticSurface::new()
        .tool(Tool::new("wait", "Runs until cancelled."), move |_, ctx| {
            counter.fetch_add(1, Ordering::SeqCst);
            let deadline = Instant::now() + Duration::from_secs(10);
            let mut tick = 0.0;
            while !ctx.is_cancelled() && Instant::now() < deadline {
                tick += 1.0;
                ctx.progress(tick, None, None);
                thread::sleep(Duration::from_millis(10));
            }
            let _ = tx
                .lock()
                .unwrap()
                .send((ctx.is_cancelled(), ctx.cancelled_reason()));
            ToolOutcome::text("finished")
        })
        .unwrap()
        .tool(Tool::new("steps", "Progress and logs."), |_, ctx| {
            for done in [1.0, 2.0, 2.0, 1.0, 3.0] {
                ctx.progress(done, Some(3.0), Some("working"));
            }
            ctx.log(LogLevel::Debug, json!("debug detail"));
            ctx.log(LogLevel::Info, json!("info note"));
            ctx.log(LogLevel::Error, json!({"error": "disk nearly full"}));
            ToolOutcome::text("done")
        })
        .unwrap()
        .tool(Tool::new("echo", "Echo."), |args, _| {
            ToolOutcome::text(args.to_string())
        })
        .unwrap();
    let session = host.open_session(surface);
    Rig {
        host,
        session,
        started,
        outcomes,
    }
}

fn call_body(id: i64, tool: &str, meta: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": tool, "arguments": {}, "_meta": meta}})
}

fn notifications(reply: &Reply, revision: &str) -> (Vec<Value>, Value) {
    assert_eq!(reply.status, 200);
    assert_eq!(reply.header("content-type"), Some("text/event-stream"));
    assert_eq!(reply.header("x-accel-buffering"), Some("no"));
    let mut messages = sse_messages(&reply.body);
    let last = messages.pop().expect("the stream ends with the response");
    schema::assert_valid(revision, "JSONRPCResponse", &last);
    for message in &messages {
        schema::assert_valid(revision, "JSONRPCNotification", message);
        let definition = match message["method"].as_str() {
            Some("notifications/progress") => "ProgressNotification",
            Some("notifications/message") => "LoggingMessageNotification",
            other => panic!("unexpected notification {other:?}"),
        };
        schema::assert_valid(revision, definition, message);
    }
    (messages, last)
}

#[test]
fn progress_events_arrive_in_order_before_the_result_and_never_go_backwards() {
    let rig = rig(HostConfig::default());
    let mut client = McpClient::for_session(&rig.host, &rig.session);
    client.initialize("2025-11-25");
    let reply = client.post(&call_body(7, "steps", json!({"progressToken": "tok-1"})));
    let (events, last) = notifications(&reply, "2025-11-25");
    let progress: Vec<f64> = events
        .iter()
        .filter(|e| e["method"] == "notifications/progress")
        .map(|e| {
            assert_eq!(e["params"]["progressToken"], "tok-1");
            assert_eq!(e["params"]["total"], 3.0);
            e["params"]["progress"].as_f64().unwrap()
        })
        .collect();
    assert_eq!(
        progress,
        [1.0, 2.0, 3.0],
        "repeats and decreases are not sent"
    );
    assert_eq!(last["id"], 7);
    assert_eq!(last["result"]["content"][0]["text"], "done");
    assert!(
        events
            .iter()
            .all(|e| e["method"] != "notifications/message"),
        "no log messages without logging/setLevel"
    );
}

#[test]
fn a_call_that_asks_for_nothing_gets_plain_json() {
    let rig = rig(HostConfig::default());
    let mut client = McpClient::for_session(&rig.host, &rig.session);
    client.initialize("2025-11-25");
    let reply = client.post(&call_body(3, "steps", json!({})));
    assert_eq!(reply.status, 200);
    assert_eq!(reply.header("content-type"), Some("application/json"));
    assert_eq!(reply.json()["result"]["content"][0]["text"], "done");
}

#[test]
fn log_messages_follow_set_level_in_the_stateful_era() {
    let rig = rig(HostConfig::default());
    let mut client = McpClient::for_session(&rig.host, &rig.session);
    let init = client.initialize("2025-11-25");
    assert!(init["capabilities"]["logging"].is_object());
    assert_eq!(
        client.request("logging/setLevel", json!({"level": "info"}), "EmptyResult"),
        json!({})
    );
    let reply = client.post(&call_body(4, "steps", json!({})));
    let (events, _) = notifications(&reply, "2025-11-25");
    let levels: Vec<&str> = events
        .iter()
        .map(|e| e["params"]["level"].as_str().unwrap())
        .collect();
    assert_eq!(
        levels,
        ["info", "error"],
        "debug is below the level asked for"
    );
    assert_eq!(
        events[1]["params"]["data"],
        json!({"error": "disk nearly full"})
    );

    let error = client.request_error("logging/setLevel", json!({"level": "loud"}));
    assert_eq!(error["code"], -32602);
}

#[test]
fn log_messages_follow_the_request_log_level_in_the_stateless_era() {
    let rig = rig(HostConfig::default());
    let auth = rig.session.authorization();
    let mut conn = toolhost_tests::Conn::open(rig.host.local_addr()).unwrap();
    let send = |conn: &mut toolhost_tests::Conn, level: Option<&str>| {
        let mut meta = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
        });
        if let Some(level) = level {
            meta["io.modelcontextprotocol/logLevel"] = json!(level);
        }
        let mut headers = toolhost_tests::JSON_HEADERS.to_vec();
        headers.extend([
            ("Authorization", auth.as_str()),
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "steps"),
        ]);
        conn.request(
            "POST",
            "/mcp",
            &headers,
            call_body(1, "steps", meta).to_string().as_bytes(),
        )
        .unwrap()
    };
    let quiet = send(&mut conn, None);
    assert_eq!(
        quiet.header("content-type"),
        Some("application/json"),
        "no logLevel: nothing sent"
    );
    let loud = send(&mut conn, Some("debug"));
    let (events, last) = notifications(&loud, "2026-07-28");
    assert_eq!(events.len(), 3);
    assert_eq!(last["result"]["resultType"], "complete");
    let bad = send(&mut conn, Some("shouting"));
    assert_eq!(bad.status, 400);
    assert_eq!(bad.json()["error"]["code"], -32602);
}

/// Starts `wait` on its own connection; returns the thread that collects
/// its reply.
fn start_wait(rig: &Rig, client: &McpClient, id: i64, meta: Value) -> thread::JoinHandle<Reply> {
    let addr = rig.host.local_addr();
    let auth = client.authorization.clone();
    let session_id = client.session_id.clone();
    let revision = client.revision.clone();
    thread::spawn(move || {
        let mut caller = McpClient::new(addr, auth);
        caller.session_id = session_id;
        caller.revision = revision;
        caller.post(&call_body(id, "wait", meta))
    })
}

#[test]
fn notifications_cancelled_flips_is_cancelled_and_suppresses_the_response() {
    let rig = rig(HostConfig::default());
    let mut client = McpClient::for_session(&rig.host, &rig.session);
    client.initialize("2025-11-25");
    let running = start_wait(&rig, &client, 41, json!({}));
    wait_for("the handler to start", || {
        rig.started.load(Ordering::SeqCst) == 1
    });
    let ack = client.post(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 41, "reason": "user pressed stop"}}),
    );
    assert_eq!(ack.status, 202);
    let (cancelled, reason) = rig.outcomes.recv_timeout(Duration::from_secs(10)).unwrap();
    assert!(cancelled);
    assert_eq!(reason.as_deref(), Some("user pressed stop"));
    let reply = running.join().unwrap();
    assert_eq!(reply.status, 200);
    assert!(
        sse_messages(&reply.body)
            .iter()
            .all(|m| m.get("id").is_none()),
        "no response for a cancelled request"
    );
    // The session goes on.
    assert_eq!(client.call("echo", json!({}))["isError"], false);
}

#[test]
fn cancelling_another_request_id_or_another_session_touches_nothing() {
    let rig = rig(HostConfig::default());
    let mut owner = McpClient::for_session(&rig.host, &rig.session);
    owner.initialize("2025-11-25");
    let mut stranger = McpClient::for_session(&rig.host, &rig.session);
    stranger.initialize("2025-11-25");
    let running = start_wait(&rig, &owner, 5, json!({"progressToken": 1}));
    wait_for("the handler to start", || {
        rig.started.load(Ordering::SeqCst) == 1
    });
    for (client, id) in [(&mut owner, 6), (&mut stranger, 5)] {
        let ack = client.post(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": id}}));
        assert_eq!(ack.status, 202);
    }
    thread::sleep(Duration::from_millis(50));
    assert!(
        rig.outcomes.try_recv().is_err(),
        "the call is still running"
    );
    owner.post(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 5}}),
    );
    assert!(
        rig.outcomes
            .recv_timeout(Duration::from_secs(10))
            .unwrap()
            .0
    );
    running.join().unwrap();
}

#[test]
fn dropping_the_session_mid_call_cancels_it_and_the_bearer_is_dead() {
    let rig = rig(HostConfig::default());
    let mut client = McpClient::for_session(&rig.host, &rig.session);
    client.initialize("2025-11-25");
    let running = start_wait(&rig, &client, 9, json!({}));
    wait_for("the handler to start", || {
        rig.started.load(Ordering::SeqCst) == 1
    });
    let Rig {
        host,
        session,
        outcomes,
        ..
    } = rig;
    drop(session);
    let (cancelled, reason) = outcomes.recv_timeout(Duration::from_secs(10)).unwrap();
    assert!(cancelled);
    assert_eq!(reason.as_deref(), Some("the session was closed"));
    running.join().unwrap();
    assert_eq!(
        client
            .post(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
            .status,
        401
    );
    drop(host);
}

#[test]
fn with_resumption_off_a_client_that_disconnects_mid_stream_cancels_the_handler() {
    // By default a stateful stream survives its connection (tests/tests/resume.rs).
    let rig = rig(HostConfig::default().resume_window(Duration::ZERO));
    let mut client = McpClient::for_session(&rig.host, &rig.session);
    client.initialize("2025-11-25");
    let mut raw = TcpStream::connect(rig.host.local_addr()).unwrap();
    raw.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let body = call_body(2, "wait", json!({"progressToken": "p"})).to_string();
    write!(
        raw,
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nAuthorization: {}\r\nMcp-Session-Id: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        rig.host.local_addr(),
        rig.session.authorization(),
        client.session_id.as_deref().unwrap(),
        body.len()
    )
    .unwrap();
    let mut status = String::new();
    BufReader::new(raw.try_clone().unwrap())
        .read_line(&mut status)
        .unwrap();
    assert!(status.starts_with("HTTP/1.1 200"), "{status}");
    drop(raw);
    let (cancelled, reason) = rig.outcomes.recv_timeout(Duration::from_secs(10)).unwrap();
    assert!(cancelled);
    assert_eq!(
        reason.as_deref(),
        Some("the client closed the response stream")
    );
}

#[test]
fn shutdown_cancels_running_calls() {
    let rig = rig(HostConfig::default());
    let mut client = McpClient::for_session(&rig.host, &rig.session);
    client.initialize("2025-11-25");
    let running = start_wait(&rig, &client, 3, json!({}));
    wait_for("the handler to start", || {
        rig.started.load(Ordering::SeqCst) == 1
    });
    rig.host.shutdown();
    let (cancelled, reason) = rig.outcomes.recv_timeout(Duration::from_secs(10)).unwrap();
    assert!(cancelled);
    assert_eq!(reason.as_deref(), Some("the host is shutting down"));
    running.join().unwrap();
}

#[test]
fn with_every_call_slot_busy_ping_list_and_cancel_are_served_and_calls_wait_their_turn() {
    let queued = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&queued);
    let rig = rig(HostConfig::default()
        .workers(2)
        .max_concurrent_calls(2)
        .max_queued_calls(1)
        .on_event(move |event| {
            if matches!(event, Event::CallQueued { .. }) {
                seen.fetch_add(1, Ordering::SeqCst);
            }
        }));
    let mut client = McpClient::for_session(&rig.host, &rig.session);
    client.initialize("2025-11-25");
    let first = start_wait(&rig, &client, 100, json!({}));
    let second = start_wait(&rig, &client, 101, json!({}));
    wait_for("both handlers to start", || {
        rig.started.load(Ordering::SeqCst) == 2
    });
    // A third call waits for a slot instead of being refused.
    let third = start_wait(&rig, &client, 102, json!({}));
    wait_for("the third call to queue", || {
        queued.load(Ordering::SeqCst) == 1
    });
    assert_eq!(rig.started.load(Ordering::SeqCst), 2, "it waits, not runs");

    // Past the line's bound, a call is refused, naming the setting.
    let full = client.post(&call_body(103, "echo", json!({})));
    assert_eq!(full.status, 503);
    assert_eq!(full.header("retry-after"), Some("1"));
    let error = full.json();
    assert_eq!(error["id"], 103);
    assert_eq!(error["error"]["data"]["retryable"], true);
    assert!(error["error"]["message"]
        .as_str()
        .unwrap()
        .contains("max_queued_calls"));

    // The workers are free for the protocol meanwhile.
    assert_eq!(client.request("ping", json!({}), "EmptyResult"), json!({}));
    assert_eq!(client.tool_names(), ["wait", "steps", "echo"]);

    // A freed slot goes to the waiting call.
    client.post(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 100}}));
    wait_for("the waiting call to start", || {
        rig.started.load(Ordering::SeqCst) == 3
    });
    for id in [101, 102] {
        client.post(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": id}}));
    }
    for running in [first, second, third] {
        running.join().unwrap();
    }
    assert_eq!(
        client.call("echo", json!({}))["isError"],
        false,
        "slots are free again"
    );
}

#[test]
fn at_the_deadline_the_client_gets_a_tool_error_and_the_handler_is_cancelled() {
    let events = EventLog::new();
    let rig = rig(events.hook(
        HostConfig::default()
            .call_timeout(Duration::from_millis(100))
            .report_long_calls(Some(Duration::from_millis(40))),
    ));
    let mut client = McpClient::for_session(&rig.host, &rig.session);
    client.initialize("2025-11-25");
    let result = client.call("wait", json!({}));
    assert_eq!(result["isError"], true);
    assert!(result["content"][0]["text"]
        .as_str()
        .unwrap()
        .contains("deadline of 100 ms"));
    let (cancelled, reason) = rig.outcomes.recv_timeout(Duration::from_secs(10)).unwrap();
    assert!(cancelled);
    assert_eq!(reason.as_deref(), Some("the call's deadline passed"));
    wait_for("the events", || {
        events
            .all()
            .iter()
            .any(|e| matches!(e, toolhost::Event::CallFinished { .. }))
    });
    let seen = events.all();
    assert!(seen
        .iter()
        .any(|e| matches!(e, toolhost::Event::CallTimedOut { tool, .. } if tool == "wait")));
    assert!(seen
        .iter()
        .any(|e| matches!(e, toolhost::Event::CallRunningLong { tool, .. } if tool == "wait")));
    // A quick call is neither timed out nor reported.
    assert_eq!(client.call("echo", json!({}))["isError"], false);
}

#[test]
fn a_streamed_call_that_passes_its_deadline_ends_its_stream_with_the_timeout() {
    let rig = rig(HostConfig::default().call_timeout(Duration::from_millis(80)));
    let mut client = McpClient::for_session(&rig.host, &rig.session);
    client.initialize("2025-11-25");
    let reply = client.post(&call_body(12, "wait", json!({"progressToken": "d"})));
    let (events, last) = notifications(&reply, "2025-11-25");
    assert!(!events.is_empty(), "progress streamed before the deadline");
    assert_eq!(last["id"], 12);
    assert_eq!(last["result"]["isError"], true);
    assert!(
        rig.outcomes
            .recv_timeout(Duration::from_secs(10))
            .unwrap()
            .0
    );
}

#[test]
fn handlers_see_their_deadline() {
    let host = ToolHost::bind(HostConfig::default().call_timeout(Duration::from_secs(30))).unwrap();
    let surface = StaticSurface::new()
        .tool(Tool::new("when", "Deadline."), |_, ctx| {
            let left = ctx
                .deadline()
                .map(|d| d.saturating_duration_since(Instant::now()));
            ToolOutcome::text(format!(
                "{}",
                left.is_some_and(|l| l > Duration::from_secs(20))
            ))
        })
        .unwrap();
    let session = host.open_session(surface);
    let mut client = McpClient::for_session(&host, &session);
    client.initialize("2025-11-25");
    assert_eq!(client.call("when", json!({}))["content"][0]["text"], "true");
}
