//! List changes on long-lived event streams: the standalone `GET` stream
//! (stateful) and `subscriptions/listen` (2026-07-28) deliver them at once,
//! keep idle connections alive, end with their session, and never take
//! workers away from ordinary calls.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use toolhost::{surface_fn, HostConfig, StaticSurface, Tool, ToolHost, ToolOutcome, ToolSession};
use toolhost_tests::{get_stream, listen, schema, EventStream, Item, McpClient};

fn toggled_host(keep_alive: Duration) -> (ToolHost, ToolSession, Arc<AtomicBool>) {
    let host = ToolHost::bind(HostConfig::default().workers(4).keep_alive(keep_alive)).unwrap();
    let extra = Arc::new(AtomicBool::new(false));
    let (listed, flipped) = (Arc::clone(&extra), Arc::clone(&extra));
    let session = host.open_session(surface_fn(
        move || {
            let mut tools = vec![Tool::new("unlock", "Adds the `secret` tool.")];
            if listed.load(Ordering::SeqCst) {
                tools.push(Tool::new("secret", "Only after unlock."));
            }
            tools
        },
        move |name, _, ctx| {
            if name == "unlock" {
                flipped.store(true, Ordering::SeqCst);
                ctx.notify_tools_changed();
            }
            ToolOutcome::text(format!("{name} ran"))
        },
    ));
    (host, session, extra)
}

#[test]
fn a_list_change_reaches_the_get_stream_at_once_not_at_the_next_keep_alive() {
    let (host, session, extra) = toggled_host(Duration::from_secs(60));
    let mut client = McpClient::for_session(&host, &session);
    let init = client.initialize("2025-11-25");
    assert_eq!(init["capabilities"]["tools"]["listChanged"], true);
    let mut events = get_stream(&host, &session, client.session_id.as_deref().unwrap());

    extra.store(true, Ordering::SeqCst);
    session.notify_tools_changed();
    let message = events.next_message().expect("a notification");
    schema::assert_valid("2025-11-25", "ToolListChangedNotification", &message);
    assert_eq!(client.tool_names(), ["unlock", "secret"]);
}

#[test]
fn a_handler_that_changes_the_tools_notifies_listeners() {
    let (host, session, _) = toggled_host(Duration::from_secs(60));
    let mut events = listen(&host, &session, 77, json!({"toolsListChanged": true}));
    let ack = events.next_message().unwrap();
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(
        ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        77
    );
    assert_eq!(
        ack["params"]["notifications"],
        json!({"toolsListChanged": true})
    );
    schema::assert_valid("2026-07-28", "SubscriptionsAcknowledgedNotification", &ack);

    let mut client = McpClient::for_session(&host, &session);
    client.initialize("2025-11-25");
    client.call("unlock", json!({}));
    let change = events.next_message().unwrap();
    assert_eq!(change["method"], "notifications/tools/list_changed");
    assert_eq!(
        change["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        77
    );
    schema::assert_valid("2026-07-28", "ToolListChangedNotification", &change);
}

#[test]
fn a_listener_that_did_not_ask_for_tool_changes_gets_none() {
    let (host, session, _) = toggled_host(Duration::from_millis(50));
    let mut events = listen(&host, &session, 5, json!({"promptsListChanged": true}));
    let ack = events.next_message().unwrap();
    assert_eq!(
        ack["params"]["notifications"],
        json!({}),
        "nothing asked for is honoured"
    );
    session.notify_tools_changed();
    // Two keep-alive beats pass with nothing but comments.
    assert_eq!(events.next_item(), Item::Comment);
    assert_eq!(events.next_item(), Item::Comment);
}

#[test]
fn idle_streams_get_keep_alive_comments() {
    let (host, session, _) = toggled_host(Duration::from_millis(30));
    let mut client = McpClient::for_session(&host, &session);
    client.initialize("2025-11-25");
    let mut events = get_stream(&host, &session, client.session_id.as_deref().unwrap());
    for _ in 0..3 {
        assert_eq!(events.next_item(), Item::Comment);
    }
}

#[test]
fn dropping_the_session_ends_its_streams_cleanly() {
    let (host, session, _) = toggled_host(Duration::from_secs(60));
    let mut client = McpClient::for_session(&host, &session);
    client.initialize("2025-11-25");
    let mut standalone = get_stream(&host, &session, client.session_id.as_deref().unwrap());
    let mut listener = listen(&host, &session, 9, json!({"toolsListChanged": true}));
    listener.next_message().unwrap();
    drop(session);
    assert_eq!(standalone.next_item(), Item::End);
    let last = listener
        .next_message()
        .expect("the listen request is answered");
    assert_eq!(last["id"], 9);
    assert_eq!(last["result"]["resultType"], "complete");
    assert_eq!(listener.next_item(), Item::End);
}

#[test]
fn shutdown_ends_open_streams() {
    let (host, session, _) = toggled_host(Duration::from_secs(60));
    let mut listener = listen(&host, &session, 1, json!({"toolsListChanged": true}));
    listener.next_message().unwrap();
    host.shutdown();
    assert!(listener.next_message().is_some_and(|m| m["id"] == 1));
    assert_eq!(listener.next_item(), Item::End);
}

#[test]
fn eight_open_streams_with_four_workers_leave_every_worker_to_calls() {
    let (host, session, _) = toggled_host(Duration::from_secs(60));
    let mut client = McpClient::for_session(&host, &session);
    client.initialize("2025-11-25");
    let mut streams: Vec<EventStream> = (0..4)
        .map(|_| get_stream(&host, &session, client.session_id.as_deref().unwrap()))
        .collect();
    for id in 0..4 {
        let mut listener = listen(&host, &session, id, json!({"toolsListChanged": true}));
        listener.next_message().unwrap();
        streams.push(listener);
    }
    // Three callers: the call slots of four workers (one stays for the
    // protocol). Were the eight streams holding workers, none would be served.
    std::thread::scope(|scope| {
        for _ in 0..3 {
            scope.spawn(|| {
                let mut caller = McpClient::for_session(&host, &session);
                caller.initialize("2025-11-25");
                for _ in 0..25 {
                    assert_eq!(caller.call("unlock", json!({}))["isError"], false);
                }
            });
        }
    });
    // Every listener saw the hundred changes coalesced into at least one.
    for stream in &mut streams {
        assert_eq!(
            stream.next_message().unwrap()["method"],
            "notifications/tools/list_changed"
        );
    }
}

#[test]
fn a_get_stream_needs_a_known_session_and_an_event_stream_accept() {
    let host = ToolHost::bind(HostConfig::default()).unwrap();
    let session = host.open_session(StaticSurface::new());
    let mut client = McpClient::for_session(&host, &session);
    client.initialize("2025-11-25");
    let auth = session.authorization();
    let id = client.session_id.clone().unwrap();
    let json_only = client
        .conn
        .request(
            "GET",
            "/mcp",
            &[
                ("Authorization", &auth),
                ("Mcp-Session-Id", &id),
                ("Accept", "application/json"),
            ],
            b"",
        )
        .unwrap();
    assert_eq!(json_only.status, 406);
    let unknown = client
        .conn
        .request(
            "GET",
            "/mcp",
            &[
                ("Authorization", &auth),
                ("Mcp-Session-Id", "nope"),
                ("Accept", "text/event-stream"),
            ],
            b"",
        )
        .unwrap();
    assert_eq!(unknown.status, 404);
}
