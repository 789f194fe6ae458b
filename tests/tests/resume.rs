//! Resumable response streams (stateful revisions, 2025-03-26 onwards): a
//! call whose connection drops, or whose handler closes it on purpose, keeps
//! running; the client picks up what it missed with `GET` + `Last-Event-ID`,
//! on a fresh connection, and nothing else is disturbed.

use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use toolhost::{HostConfig, StaticSurface, Tool, ToolHost, ToolOutcome, ToolSession};
use toolhost_tests::{
    schema, sse_events, stateless_post, Conn, EventStream, Item, McpClient, Reply,
};

/// How many 64 KiB progress messages `flood` sends: far more than the
/// socket buffers of both ends hold.
const FLOOD_STEPS: u32 = 300;

/// What a handler reports to the test.
#[derive(Debug, PartialEq)]
enum Seen {
    /// `close_stream` returned this.
    Closed(bool),
    /// The handler returned; was it cancelled, and why.
    Ended(bool, Option<String>),
}

struct Rig {
    host: ToolHost,
    session: ToolSession,
    seen: mpsc::Receiver<Seen>,
    /// Each send lets one held handler go on.
    release: mpsc::Sender<()>,
}

/// A host with three tools:
/// - `poll` sends progress 1, closes its stream (250 ms retry), sends
///   progress 2, waits for a release if `hold`, sends progress 3, returns;
/// - `tick` sends progress every 10 ms until released or cancelled;
/// - `echo`.
fn rig(config: HostConfig) -> Rig {
    let host = ToolHost::bind(config).unwrap();
    let (seen_tx, seen) = mpsc::channel();
    let (release, released) = mpsc::channel::<()>();
    let released = Arc::new(Mutex::new(released));
    let (poll_seen, poll_released) = (Mutex::new(seen_tx.clone()), Arc::clone(&released));
    let tick_seen = Mutex::new(seen_tx.clone());
    let flood_seen = Mutex::new(seen_tx);
    let surface = StaticSurface::new()
        .tool(
            Tool::new("poll", "Closes its stream mid-call.").input_schema(json!({
                "type": "object", "properties": {"hold": {"type": "boolean"}}})),
            move |args, ctx| {
                ctx.progress(1.0, Some(3.0), None);
                let closed = ctx.close_stream(Duration::from_millis(250));
                poll_seen
                    .lock()
                    .unwrap()
                    .send(Seen::Closed(closed))
                    .unwrap();
                ctx.progress(2.0, Some(3.0), None);
                if args["hold"] == true {
                    let _ = poll_released
                        .lock()
                        .unwrap()
                        .recv_timeout(Duration::from_secs(20));
                }
                ctx.progress(3.0, Some(3.0), None);
                let _ = poll_seen
                    .lock()
                    .unwrap()
                    .send(Seen::Ended(ctx.is_cancelled(), ctx.cancelled_reason()));
                ToolOutcome::text("polled")
            },
        )
        .unwrap()
        .tool(Tool::new("tick", "Ticks until released."), move |_, ctx| {
            let deadline = Instant::now() + Duration::from_secs(20);
            let mut step = 0.0;
            while !ctx.is_cancelled() && Instant::now() < deadline {
                step += 1.0;
                ctx.progress(step, None, None);
                if released
                    .lock()
                    .unwrap()
                    .recv_timeout(Duration::from_millis(10))
                    .is_ok()
                {
                    break;
                }
            }
            let _ = tick_seen
                .lock()
                .unwrap()
                .send(Seen::Ended(ctx.is_cancelled(), ctx.cancelled_reason()));
            ToolOutcome::text("ticked")
        })
        .unwrap()
        .tool(Tool::new("echo", "Echo."), |args, _| {
            ToolOutcome::text(args.to_string())
        })
        .unwrap()
        .tool(
            Tool::new("flood", "Sends ~19 MB of progress."),
            move |_, ctx| {
                let words = "x".repeat(64 << 10);
                for step in 1..=FLOOD_STEPS {
                    ctx.progress(f64::from(step), Some(f64::from(FLOOD_STEPS)), Some(&words));
                }
                let _ = flood_seen
                    .lock()
                    .unwrap()
                    .send(Seen::Ended(ctx.is_cancelled(), ctx.cancelled_reason()));
                ToolOutcome::text("flooded")
            },
        )
        .unwrap();
    let session = host.open_session(surface);
    Rig {
        host,
        session,
        seen,
        release,
    }
}

impl Rig {
    fn next_seen(&self) -> Seen {
        self.seen.recv_timeout(Duration::from_secs(20)).unwrap()
    }

    fn client(&self, revision: &str) -> McpClient {
        let mut client = McpClient::for_session(&self.host, &self.session);
        client.initialize(revision);
        client
    }

    /// Opens a `tools/call` on a raw connection, returning its stream.
    fn call(&self, client: &McpClient, id: i64, tool: &str, arguments: Value) -> EventStream {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments,
                       "_meta": {"progressToken": format!("p{id}")}}})
        .to_string();
        let request = format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nAuthorization: {}\r\nMcp-Session-Id: {}\r\nMCP-Protocol-Version: {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n{body}",
            self.host.local_addr(),
            self.session.authorization(),
            client.session_id.as_deref().unwrap(),
            client.revision,
            body.len()
        );
        EventStream::open(self.host.local_addr(), &request)
    }

    /// Opens a 2026-07-28 `tools/call` (with a progress token) on a raw
    /// connection, returning its stream.
    fn call_stateless(&self, id: i64, tool: &str) -> EventStream {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": {}, "_meta": {
                "progressToken": format!("p{id}"),
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {}}}})
        .to_string();
        let request = format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nAuthorization: {}\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: {tool}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n{body}",
            self.host.local_addr(),
            self.session.authorization(),
            body.len()
        );
        EventStream::open(self.host.local_addr(), &request)
    }

    /// Resumes a stream after `last_event_id` on a fresh connection.
    fn resume(&self, client: &McpClient, last_event_id: &str) -> EventStream {
        EventStream::open(
            self.host.local_addr(),
            &self.get_request(client, last_event_id),
        )
    }

    fn get_request(&self, client: &McpClient, last_event_id: &str) -> String {
        format!(
            "GET /mcp HTTP/1.1\r\nHost: {}\r\nAuthorization: {}\r\nMcp-Session-Id: {}\r\nMCP-Protocol-Version: {}\r\nAccept: text/event-stream\r\nLast-Event-ID: {last_event_id}\r\n\r\n",
            self.host.local_addr(),
            self.session.authorization(),
            client.session_id.as_deref().unwrap(),
            client.revision,
        )
    }
}

/// Reads messages until the stream ends, checking each against the schema.
fn drain(events: &mut EventStream, revision: &str) -> Vec<Value> {
    let mut messages = Vec::new();
    loop {
        match events.next_item() {
            Item::Message(message) => {
                let definition = if message.get("method").is_some() {
                    "ProgressNotification"
                } else {
                    "JSONRPCResponse"
                };
                schema::assert_valid(revision, definition, &message);
                messages.push(message);
            }
            Item::Comment => {}
            Item::End => return messages,
        }
    }
}

fn progress_of(messages: &[Value]) -> Vec<f64> {
    messages
        .iter()
        .filter_map(|m| m["params"]["progress"].as_f64())
        .collect()
}

fn assert_result(message: &Value, id: i64, text: &str, revision: &str) {
    assert_eq!(message["id"], id, "{message}");
    schema::assert_valid(revision, "CallToolResult", &message["result"]);
    assert_eq!(message["result"]["content"][0]["text"], text, "{message}");
}

#[test]
fn a_2025_11_25_stream_opens_with_a_priming_event_and_every_event_has_an_id() {
    let rig = rig(HostConfig::default());
    let mut client = rig.client("2025-11-25");
    rig.release.send(()).unwrap();
    let reply = client.post(&json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "tick", "arguments": {}, "_meta": {"progressToken": "t"}}}));
    let events = sse_events(&reply.body);
    let first = &events[0];
    assert_eq!(first.data.as_deref(), Some(""), "{events:?}");
    let stream = first.id.as_deref().unwrap().strip_suffix("-0").unwrap();
    for (seq, event) in events.iter().enumerate() {
        assert_eq!(event.id, Some(format!("{stream}-{seq}")), "{events:?}");
    }
    assert_eq!(
        events
            .last()
            .unwrap()
            .data
            .as_deref()
            .map(|d| d.contains("ticked")),
        Some(true)
    );
}

#[test]
fn before_2025_11_25_events_carry_ids_but_the_stream_is_not_primed() {
    let rig = rig(HostConfig::default());
    for revision in ["2025-03-26", "2025-06-18"] {
        let mut client = rig.client(revision);
        rig.release.send(()).unwrap();
        let reply = client.post(&json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": {"name": "tick", "arguments": {}, "_meta": {"progressToken": "t"}}}));
        let events = sse_events(&reply.body);
        assert!(events.len() >= 2, "{events:?}");
        for event in &events {
            assert!(event.id.is_some(), "{revision}: {events:?}");
            assert!(
                !event.data.as_deref().unwrap_or("").is_empty(),
                "{events:?}"
            );
        }
        assert_eq!(rig.next_seen(), Seen::Ended(false, None));
    }
}

#[test]
fn a_stream_the_handler_closes_is_resumed_and_carries_the_rest_of_the_call() {
    let rig = rig(HostConfig::default());
    let client = rig.client("2025-11-25");
    let mut posted = rig.call(&client, 5, "poll", json!({"hold": true}));
    let before = drain(&mut posted, "2025-11-25");
    assert_eq!(rig.next_seen(), Seen::Closed(true));
    // The POST stream: primed, progress 1, a retry hint, then closed with
    // no response.
    assert_eq!(posted.primed, 1);
    assert_eq!(progress_of(&before), [1.0]);
    assert_eq!(before.len(), 1);
    assert_eq!(posted.retry.as_deref(), Some("250"));

    // Resumed while the handler still runs: what it sent meanwhile, then
    // the rest as it happens, then the response, then the end.
    let last = posted.last_event_id.clone().unwrap();
    let mut resumed = rig.resume(&client, &last);
    assert_eq!(resumed.next_message().unwrap()["params"]["progress"], 2.0);
    rig.release.send(()).unwrap();
    let after = drain(&mut resumed, "2025-11-25");
    assert_eq!(progress_of(&after), [3.0]);
    assert_result(after.last().unwrap(), 5, "polled", "2025-11-25");
    assert_eq!(rig.next_seen(), Seen::Ended(false, None));

    // Delivered to its end: nothing is left to resume.
    let again = resume_get(&rig, &client, &last, None);
    assert_eq!(again.status, 400);
    let error = again.json();
    schema::assert_valid("2025-11-25", "JSONRPCErrorResponse", &error);
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .contains("Last-Event-ID"),
        "{error}"
    );
}

#[test]
fn a_result_that_is_ready_before_the_client_returns_is_replayed_and_ends_the_stream() {
    let rig = rig(HostConfig::default());
    let client = rig.client("2025-11-25");
    let mut posted = rig.call(&client, 6, "poll", json!({}));
    assert!(drain(&mut posted, "2025-11-25").len() <= 3);
    assert_eq!(rig.next_seen(), Seen::Closed(true));
    assert_eq!(rig.next_seen(), Seen::Ended(false, None));
    let mut resumed = rig.resume(&client, posted.last_event_id.as_deref().unwrap());
    let after = drain(&mut resumed, "2025-11-25");
    assert_eq!(progress_of(&after), [2.0, 3.0]);
    assert_result(after.last().unwrap(), 6, "polled", "2025-11-25");
}

#[test]
fn a_dropped_connection_does_not_cancel_a_stateful_call_and_the_client_resumes() {
    let rig = rig(HostConfig::default());
    let client = rig.client("2025-06-18");
    let mut posted = rig.call(&client, 7, "tick", json!({}));
    let first = posted.next_message().unwrap();
    let second = posted.next_message().unwrap();
    assert_eq!(progress_of(&[first, second]), [1.0, 2.0]);
    let last = posted.last_event_id.clone().unwrap();
    drop(posted);

    // Meanwhile another client of the same bearer is served as usual.
    let mut other = rig.client("2025-11-25");
    let echoed = other.call("echo", json!({"x": 1}));
    assert_eq!(echoed["isError"], false);

    let mut resumed = rig.resume(&client, &last);
    let next = resumed.next_message().unwrap();
    // Every step after the last one seen, none missing, none repeated.
    assert_eq!(next["params"]["progress"], 3.0, "{next}");
    rig.release.send(()).unwrap();
    let rest = drain(&mut resumed, "2025-06-18");
    let steps = progress_of(&rest);
    assert!(steps.windows(2).all(|w| w[1] == w[0] + 1.0), "{steps:?}");
    assert_result(rest.last().unwrap(), 7, "ticked", "2025-06-18");
    assert_eq!(rig.next_seen(), Seen::Ended(false, None));
}

#[test]
fn a_resume_while_the_host_still_writes_to_the_old_connection_takes_the_stream_over() {
    let rig = rig(HostConfig::default());
    let client = rig.client("2025-11-25");
    let mut posted = rig.call(&client, 8, "tick", json!({}));
    posted.next_message().unwrap();
    let last = posted.last_event_id.clone().unwrap();
    // The old connection is still open: the host has not seen it drop.
    let mut resumed = rig.resume(&client, &last);
    assert_eq!(resumed.next_message().unwrap()["params"]["progress"], 2.0);
    // The old one was ended, the new one carries the call to its end.
    while let Item::Message(_) | Item::Comment = posted.next_item() {}
    rig.release.send(()).unwrap();
    let rest = drain(&mut resumed, "2025-11-25");
    assert_result(rest.last().unwrap(), 8, "ticked", "2025-11-25");
    assert_eq!(rig.next_seen(), Seen::Ended(false, None));
}

/// A resume `GET` on a fresh connection, with the headers a client sends
/// (less `without`), answered in full: for refusals.
fn resume_get(rig: &Rig, client: &McpClient, id: &str, without: Option<&str>) -> Reply {
    let auth = rig.session.authorization();
    let session = client.session_id.clone().unwrap_or_default();
    let headers: Vec<(&str, &str)> = [
        ("Authorization", auth.as_str()),
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", client.revision.as_str()),
        ("Accept", "text/event-stream"),
        ("Last-Event-ID", id),
    ]
    .into_iter()
    .filter(|(name, _)| Some(*name) != without)
    .collect();
    let mut conn = Conn::open(rig.host.local_addr()).unwrap();
    conn.request("GET", "/mcp", &headers, b"").unwrap()
}

#[test]
fn ids_that_are_foreign_malformed_or_unknown_are_refused_and_the_stream_survives() {
    let rig = rig(HostConfig::default());
    let client = rig.client("2025-11-25");
    let stranger = rig.client("2025-11-25");
    let mut posted = rig.call(&client, 9, "poll", json!({"hold": true}));
    drain(&mut posted, "2025-11-25");
    assert_eq!(rig.next_seen(), Seen::Closed(true));
    let last = posted.last_event_id.clone().unwrap();
    let (stream, _) = last.split_once('-').unwrap();
    // Another MCP session of the same bearer, and ids never issued.
    for (who, id) in [
        (&stranger, last.clone()),
        (&client, format!("{stream}-x")),
        (&client, "12345-0".to_owned()),
        (&client, "garbage".to_owned()),
        (&client, String::new()),
    ] {
        let reply = resume_get(&rig, who, &id, None);
        assert_eq!(reply.status, 400, "{id:?}");
        schema::assert_valid("2025-11-25", "JSONRPCErrorResponse", &reply.json());
    }
    // An unknown MCP session is 404 (re-initialize), a missing one 400,
    // whatever the id.
    let mut ended = rig.client("2025-11-25");
    let mut delete_headers: Vec<(&str, &str)> = vec![];
    let auth = rig.session.authorization();
    let ended_id = ended.session_id.clone().unwrap();
    delete_headers.push(("Authorization", &auth));
    delete_headers.push(("Mcp-Session-Id", &ended_id));
    let deleted = ended
        .conn
        .request("DELETE", "/mcp", &delete_headers, b"")
        .unwrap();
    assert_eq!(deleted.status, 204);
    assert_eq!(resume_get(&rig, &ended, &last, None).status, 404);
    assert_eq!(
        resume_get(&rig, &client, &last, Some("Mcp-Session-Id")).status,
        400
    );

    // The stream itself was untouched by all of that.
    let mut resumed = rig.resume(&client, &last);
    rig.release.send(()).unwrap();
    let rest = drain(&mut resumed, "2025-11-25");
    assert_eq!(progress_of(&rest), [2.0, 3.0]);
    assert_result(rest.last().unwrap(), 9, "polled", "2025-11-25");
    assert_eq!(rig.next_seen(), Seen::Ended(false, None));
}

#[test]
fn a_client_that_stays_away_past_the_window_has_its_call_cancelled() {
    let rig = rig(HostConfig::default().resume_window(Duration::from_millis(50)));
    let client = rig.client("2025-11-25");
    let mut posted = rig.call(&client, 10, "poll", json!({"hold": true}));
    drain(&mut posted, "2025-11-25");
    assert_eq!(rig.next_seen(), Seen::Closed(true));
    thread::sleep(Duration::from_millis(150));
    rig.release.send(()).unwrap();
    match rig.next_seen() {
        Seen::Ended(true, Some(reason)) => assert!(reason.contains("reconnect"), "{reason}"),
        other => panic!("{other:?}"),
    }
    // And nothing is kept for it.
    let last = posted.last_event_id.clone().unwrap();
    assert_eq!(resume_get(&rig, &client, &last, None).status, 400);
}

#[test]
fn close_stream_is_refused_where_no_resume_is_possible() {
    // Resumption off: no ids, and a handler cannot close its stream.
    let off = rig(HostConfig::default().resume_window(Duration::ZERO));
    let client = off.client("2025-11-25");
    let mut posted = off.call(&client, 11, "poll", json!({}));
    let messages = drain(&mut posted, "2025-11-25");
    assert_eq!(off.next_seen(), Seen::Closed(false));
    assert_eq!(posted.last_event_id, None);
    assert_eq!(progress_of(&messages), [1.0, 2.0, 3.0]);
    assert_result(messages.last().unwrap(), 11, "polled", "2025-11-25");

    // 2026-07-28: streams are never resumable.
    let rig = rig(HostConfig::default());
    let mut conn = Conn::open(rig.host.local_addr()).unwrap();
    let reply = stateless_post(
        &mut conn,
        &rig.session.authorization(),
        12,
        "tools/call",
        json!({"name": "poll", "arguments": {}, "_meta": {"progressToken": "s"}}),
        json!({}),
    );
    assert_eq!(rig.next_seen(), Seen::Closed(false));
    assert!(sse_events(&reply.body).iter().all(|e| e.id.is_none()));
    assert_eq!(toolhost_tests::sse_messages(&reply.body).len(), 4);
}

#[test]
fn before_2025_11_25_a_stream_can_be_closed_only_once_an_event_gave_the_client_an_id() {
    let rig = rig(HostConfig::default());
    let client = rig.client("2025-06-18");
    // `poll` sends progress 1 first, so the client holds an id: closable.
    let mut posted = rig.call(&client, 13, "poll", json!({}));
    drain(&mut posted, "2025-06-18");
    assert_eq!(rig.next_seen(), Seen::Closed(true));
    assert_eq!(posted.primed, 0);
    assert!(posted.last_event_id.is_some());
    assert_eq!(rig.next_seen(), Seen::Ended(false, None));

    // Without a progress token nothing was sent before the close: refused,
    // and the call answers as plain JSON.
    let mut plain = rig.client("2025-06-18");
    let result = plain.call("poll", json!({}));
    assert_eq!(rig.next_seen(), Seen::Closed(false));
    assert_eq!(result["content"][0]["text"], "polled");
}

#[test]
fn in_2026_07_28_a_dropped_stream_cancels_the_call_and_cannot_be_resumed() {
    let rig = rig(HostConfig::default());
    let mut posted = rig.call_stateless(14, "tick");
    posted.next_message().unwrap();
    assert_eq!(posted.last_event_id, None);
    drop(posted);
    match rig.next_seen() {
        Seen::Ended(true, Some(reason)) => {
            assert_eq!(reason, "the client closed the response stream");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_client_that_stops_reading_is_given_up_on_after_the_write_timeout_and_can_resume() {
    let rig = rig(HostConfig::default().write_timeout(Duration::from_millis(300)));
    let client = rig.client("2025-11-25");
    let mut posted = rig.call(&client, 15, "flood", json!({}));
    // Only the priming event is read; then the client stops reading.
    assert_eq!(posted.next_item(), Item::Comment);
    let primed = posted.last_event_id.clone().unwrap();
    // The handler is not stuck in a write: it finishes, and since the
    // stream is resumable, it is not cancelled either.
    assert_eq!(rig.next_seen(), Seen::Ended(false, None));
    // Meanwhile everyone else is served.
    let mut other = rig.client("2025-11-25");
    assert_eq!(other.call("echo", json!({}))["isError"], false);
    // A resume gets the newest events the host kept (a bounded tail, not
    // all 19 MB) and the result.
    let mut resumed = rig.resume(&client, &primed);
    let rest = drain(&mut resumed, "2025-11-25");
    let steps = progress_of(&rest);
    assert_eq!(steps.last(), Some(&f64::from(FLOOD_STEPS)));
    assert!(steps.len() < 20, "{} events kept", steps.len());
    assert!(steps.windows(2).all(|w| w[1] == w[0] + 1.0), "{steps:?}");
    assert_result(rest.last().unwrap(), 15, "flooded", "2025-11-25");
    drop(posted);
}

#[test]
fn in_2026_07_28_a_client_that_stops_reading_has_its_call_cancelled() {
    let rig = rig(HostConfig::default().write_timeout(Duration::from_millis(300)));
    let posted = rig.call_stateless(16, "flood");
    match rig.next_seen() {
        Seen::Ended(true, Some(reason)) => {
            assert_eq!(reason, "the client closed the response stream");
        }
        other => panic!("{other:?}"),
    }
    drop(posted);
}
