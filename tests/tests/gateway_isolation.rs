//! A gate that holds: servers behind the gateway that misbehave — hung,
//! silent or slow at `initialize`, gone and back, huge answers, names no
//! model accepts — over HTTP (a toolhost host behind a switchable relay,
//! [`Switch`]) and over stdio (the `stdio_server` program's misbehaving
//! modes), and what the application's own tools and the other servers see
//! meanwhile.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::json;
use serde_json::Value;
use toolhost::client::{Client, ClientBuilder, Era, StdioServer, ToolResult};
use toolhost::{
    CallContext, Event, HostConfig, LayeredSurface, McpServerBuilder, McpServerLayer, ServerStatus,
    StaticSurface, Tool, ToolHost, ToolOutcome, ToolSession, ToolSurface,
};
use toolhost_tests::bridged::{app, echo_answers, tool_names};
use toolhost_tests::{get_stream, wait_for, EventLog, McpClient, Switch};

/// A remote host serving `surface`, with room for many calls at once (the
/// remote is never the bound under test).
fn remote(surface: StaticSurface) -> (ToolHost, ToolSession) {
    let host = ToolHost::bind(
        HostConfig::default()
            .max_concurrent_calls(64)
            .keep_alive(Duration::from_secs(60)),
    )
    .unwrap();
    let session = host.open_session(surface);
    (host, session)
}

/// The client of `session`, reached at `url` (a relay's, or its own).
fn client_at(url: &str, session: &ToolSession) -> ClientBuilder {
    Client::builder(url)
        .header("Authorization", &session.authorization())
        .era(Era::Stateful)
}

/// A remote whose only tool, `ping`, answers `pong`.
fn pinging() -> (ToolHost, ToolSession) {
    remote(
        StaticSurface::new()
            .tool(Tool::new("ping", "Pings."), |_, _| {
                ToolOutcome::text("pong")
            })
            .unwrap(),
    )
}

/// A gateway's host with `slots` call slots of its own and 4 waiting, few
/// enough that calls that held them would show at once; its events go to
/// `log`.
fn gateway_host(log: &EventLog, slots: usize) -> ToolHost {
    ToolHost::bind(
        log.hook(
            HostConfig::default()
                .max_concurrent_calls(slots)
                .max_queued_calls(4)
                .keep_alive(Duration::from_secs(60)),
        ),
    )
    .unwrap()
}

/// The gateway: a [`gateway_host`] with 4 slots serving the application's
/// `echo` above `layers`.
fn gateway(log: &EventLog, layers: Vec<(&str, McpServerLayer)>) -> (ToolHost, ToolSession) {
    let host = gateway_host(log, 4);
    let mut surface = LayeredSurface::builder().layer("app", app());
    for (name, layer) in layers {
        surface = surface.layer(name, layer);
    }
    let session = host.open_session(surface.build());
    (host, session)
}

fn ready(layer: &McpServerLayer) -> bool {
    matches!(layer.status(), ServerStatus::Ready { .. })
}

/// The session lists the application's own tool alone, and it answers at
/// once: no server behind the gateway is waited for.
fn only_the_application_serves(client: &mut Client) {
    assert_eq!(tool_names(client), ["echo"]);
    echo_answers(client, "now");
}

/// Calls `tool` on a client of its own, on a thread of its own; the result
/// comes on the receiver.
fn call_aside(session: &ToolSession, tool: &str) -> mpsc::Receiver<ToolResult> {
    let (tx, rx) = mpsc::channel();
    let mut client = session.client().unwrap();
    let tool = tool.to_owned();
    thread::spawn(move || {
        let _ = tx.send(client.call_tool(&tool, json!({})).unwrap());
    });
    rx
}

fn queued(log: &EventLog, tool: &str) -> usize {
    log.pick(|event| match event {
        Event::CallQueued { tool: queued, .. } if queued == tool => Some(()),
        _ => None,
    })
    .len()
}

#[test]
fn calls_piled_on_a_hung_http_server_leave_the_apps_tools_and_other_servers_serving_and_drain_when_it_recovers(
) {
    let served = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&served);
    let (_slow_host, slow) = remote(
        StaticSurface::new()
            .tool(Tool::new("wait", "Answers."), move |_, _| {
                counted.fetch_add(1, Ordering::SeqCst);
                ToolOutcome::text("done")
            })
            .unwrap(),
    );
    let switch = Switch::to(slow_addr(&slow));
    let (_other_host, other) = pinging();
    let slow_layer =
        McpServerLayer::builder("slow", client_at(&switch.url_for(&slow.url()), &slow))
            .max_concurrent_calls(2)
            .start()
            .unwrap();
    let other_layer = McpServerLayer::builder("other", client_at(&other.url(), &other))
        .start()
        .unwrap();
    let log = EventLog::new();
    let (_host, session) = gateway(
        &log,
        vec![("slow", slow_layer.clone()), ("other", other_layer.clone())],
    );
    wait_for("both servers ready", || {
        ready(&slow_layer) && ready(&other_layer)
    });

    // The server stops answering, and 24 calls pile on it: six times the
    // host's own 4 slots, more than its slots and queue together.
    switch.stall();
    let piled: Vec<_> = (0..24).map(|_| call_aside(&session, "slow_wait")).collect();
    wait_for("22 calls waiting in the server's own line", || {
        queued(&log, "slow_wait") == 22
    });

    // Meanwhile the application's tool and the other server answer, while
    // not one piled call has; the list is answered from what the layers
    // hold, without asking the hung server.
    let mut client = session.client().unwrap();
    assert_eq!(tool_names(&mut client), ["echo", "slow_wait", "other_ping"]);
    let echoed = client
        .call_tool("echo", json!({"text": "still here"}))
        .unwrap();
    assert_eq!(echoed.text(), "still here");
    let pinged = client.call_tool("other_ping", json!({})).unwrap();
    assert_eq!((pinged.text(), pinged.is_error), ("pong".to_owned(), false));
    assert!(
        piled.iter().all(|rx| rx.try_recv().is_err()),
        "a piled call was answered while the server hung"
    );
    assert_eq!(
        served.load(Ordering::SeqCst),
        0,
        "the stalled server ran a call"
    );
    assert_eq!(
        queued(&log, "echo") + queued(&log, "other_ping"),
        0,
        "the app's tools waited in line"
    );

    // It recovers: every piled call is answered, none lost.
    switch.up();
    for rx in piled {
        let result = rx
            .recv_timeout(Duration::from_secs(30))
            .expect("a piled call drained");
        assert_eq!((result.text(), result.is_error), ("done".to_owned(), false));
    }
    assert_eq!(served.load(Ordering::SeqCst), 24);
}

/// The address `session`'s URL names.
fn slow_addr(session: &ToolSession) -> std::net::SocketAddr {
    let url = session.url();
    let rest = url.trim_start_matches("http://");
    rest[..rest.find('/').unwrap()].parse().unwrap()
}

#[test]
fn a_call_to_a_hung_server_ends_at_its_deadline_naming_the_server_and_setting_and_the_server_is_told_to_stop(
) {
    let started = Arc::new(AtomicUsize::new(0));
    let cancelled = Arc::new(AtomicUsize::new(0));
    let (begun, seen) = (Arc::clone(&started), Arc::clone(&cancelled));
    let (_remote_host, slow) = remote(
        StaticSurface::new()
            .tool(Tool::new("hang", "Never answers."), move |_, ctx| {
                begun.fetch_add(1, Ordering::SeqCst);
                while !ctx.is_cancelled() {
                    thread::sleep(Duration::from_millis(5));
                }
                seen.fetch_add(1, Ordering::SeqCst);
                ToolOutcome::text("too late")
            })
            .unwrap()
            .tool(Tool::new("ping", "Pings."), |_, _| {
                ToolOutcome::text("pong")
            })
            .unwrap(),
    );
    let layer = McpServerLayer::builder("slow", client_at(&slow.url(), &slow))
        .max_concurrent_calls(1)
        .call_timeout(Duration::from_secs(1))
        .connect()
        .unwrap();
    let log = EventLog::new();
    let (_host, session) = gateway(&log, vec![("slow", layer)]);

    // One call runs, the other waits in the server's line: both end at
    // their deadline, with the server and the setting named.
    let running = call_aside(&session, "slow_hang");
    let waiting = call_aside(&session, "slow_hang");
    for rx in [running, waiting] {
        let result = rx.recv_timeout(Duration::from_secs(20)).unwrap();
        assert!(result.is_error, "{}", result.text());
        assert!(
            result.text().contains("\"slow\"")
                && result.text().contains("McpServerBuilder::call_timeout"),
            "{}",
            result.text()
        );
    }
    // The server was told to stop every call it ran. That is the first
    // call, and may be the second too: when the first one's slot frees a
    // moment before the second's own deadline, the second is forwarded and
    // then cancelled at that deadline.
    wait_for("the remote handlers cancelled", || {
        let ran = started.load(Ordering::SeqCst);
        (1..=2).contains(&ran) && cancelled.load(Ordering::SeqCst) == ran
    });
    // And the line is free again: a quick call answers normally.
    let mut client = session.client().unwrap();
    let pinged = client.call_tool("slow_ping", json!({})).unwrap();
    assert_eq!((pinged.text(), pinged.is_error), ("pong".to_owned(), false));
}

#[test]
fn a_full_server_line_refuses_at_once_naming_the_server_and_the_setting() {
    let (_remote_host, slow) = pinging();
    let switch = Switch::to(slow_addr(&slow));
    let layer = McpServerLayer::builder("slow", client_at(&switch.url_for(&slow.url()), &slow))
        .max_concurrent_calls(1)
        .max_queued_calls(1)
        .connect()
        .unwrap();
    let log = EventLog::new();
    let (_host, session) = gateway(&log, vec![("slow", layer)]);
    switch.stall();
    let first = call_aside(&session, "slow_ping");
    let second = call_aside(&session, "slow_ping");
    wait_for("one call waiting", || queued(&log, "slow_ping") == 1);
    let mut client = session.client().unwrap();
    let refused = client.call_tool("slow_ping", json!({})).unwrap();
    assert!(refused.is_error);
    assert!(
        refused.text().contains("\"slow\"")
            && refused
                .text()
                .contains("McpServerBuilder::max_queued_calls"),
        "{}",
        refused.text()
    );
    switch.up();
    for rx in [first, second] {
        let result = rx.recv_timeout(Duration::from_secs(20)).unwrap();
        assert_eq!((result.text(), result.is_error), ("pong".to_owned(), false));
    }
}

#[test]
fn a_silent_http_server_is_not_waited_for_and_its_tools_join_when_it_answers() {
    let (_remote_host, slow) = pinging();
    let switch = Switch::to(slow_addr(&slow));
    switch.stall();
    let started = Instant::now();
    let layer = McpServerLayer::builder(
        "slow",
        client_at(&switch.url_for(&slow.url()), &slow).timeout(Duration::from_secs(2)),
    )
    .reconnect_backoff(Duration::from_millis(50), Duration::from_millis(200))
    .start()
    .unwrap();
    let log = EventLog::new();
    let (host, session) = gateway(&log, vec![("slow", layer.clone())]);
    // Served from the first instant: the application's tools, no one else's.
    let mut client = session.client().unwrap();
    only_the_application_serves(&mut client);
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "the gateway waited on the server"
    );
    assert_eq!(layer.count(), 0);

    wait_for("the silent server reported failed", || {
        matches!(layer.status(), ServerStatus::Failed { .. })
    });
    assert!(
        layer.last_error().unwrap().contains("sent nothing"),
        "{:?}",
        layer.last_error()
    );

    // It answers at last: its tools join, and the session hears of it.
    let mut agent = McpClient::for_session(&host, &session);
    agent.initialize("2025-11-25");
    let mut events = get_stream(&host, &session, agent.session_id.as_deref().unwrap());
    switch.up();
    let changed = events.next_message().expect("a list change");
    assert_eq!(changed["method"], "notifications/tools/list_changed");
    wait_for("ready", || ready(&layer));
    assert_eq!(tool_names(&mut client), ["echo", "slow_ping"]);
    assert_eq!(layer.status(), ServerStatus::Ready { tools: 1 });
    let seen = log.server_statuses("slow");
    assert!(
        matches!(seen.first(), Some(ServerStatus::Connecting)),
        "{seen:?}"
    );
    assert!(
        seen.iter()
            .any(|s| matches!(s, ServerStatus::Failed { .. })),
        "{seen:?}"
    );
    assert_eq!(seen.last(), Some(&ServerStatus::Ready { tools: 1 }));
}

#[test]
fn an_http_server_that_goes_away_takes_its_tools_and_brings_them_back_when_it_returns() {
    let (_remote_host, slow) = pinging();
    let switch = Switch::to(slow_addr(&slow));
    let layer = McpServerLayer::builder(
        "slow",
        client_at(&switch.url_for(&slow.url()), &slow).timeout(Duration::from_secs(2)),
    )
    .refresh_every(Some(Duration::from_millis(100)))
    .reconnect_backoff(Duration::from_millis(50), Duration::from_millis(200))
    .start()
    .unwrap();
    let log = EventLog::new();
    let (_host, session) = gateway(&log, vec![("slow", layer.clone())]);
    wait_for("ready", || ready(&layer));
    let mut client = session.client().unwrap();
    assert_eq!(tool_names(&mut client), ["echo", "slow_ping"]);

    switch.down();
    wait_for("the tools left", || layer.count() == 0);
    assert_eq!(tool_names(&mut client), ["echo"]);
    assert!(!ready(&layer));
    assert_eq!(
        client
            .call_tool("echo", json!({"text": "on"}))
            .unwrap()
            .text(),
        "on"
    );

    switch.up();
    wait_for("back", || ready(&layer));
    assert_eq!(tool_names(&mut client), ["echo", "slow_ping"]);
    assert_eq!(
        client.call_tool("slow_ping", json!({})).unwrap().text(),
        "pong"
    );
    // Found gone, tried at once and failed (its tools left then), tried
    // again until it was back: each step reported, in order.
    let seen = log.server_statuses("slow");
    let gone = seen
        .iter()
        .position(|s| matches!(s, ServerStatus::Gone { .. }))
        .unwrap_or_else(|| panic!("{seen:?}"));
    assert_eq!(seen[gone - 1], ServerStatus::Ready { tools: 1 }, "{seen:?}");
    assert!(
        matches!(seen[gone + 1], ServerStatus::Failed { .. }),
        "{seen:?}"
    );
    assert!(
        seen[gone..]
            .iter()
            .any(|s| matches!(s, ServerStatus::Reconnecting { .. })),
        "{seen:?}"
    );
    assert_eq!(seen.last(), Some(&ServerStatus::Ready { tools: 1 }));
    assert!(layer.last_error().is_some());
}

#[test]
fn oversized_http_results_and_notifications_are_refused_unread_naming_server_size_and_setting() {
    let big = "x".repeat(2 << 20);
    let noisy = big.clone();
    let (_remote_host, remote_session) = remote(
        StaticSurface::new()
            .tool(Tool::new("huge", "A 2 MiB result."), move |_, _| {
                ToolOutcome::text(big.clone())
            })
            .unwrap()
            .tool(
                Tool::new("noisy", "A 2 MiB progress message."),
                move |_, ctx| {
                    ctx.progress(1.0, None, Some(&noisy));
                    ToolOutcome::text("ok")
                },
            )
            .unwrap()
            .tool(Tool::new("small", "A small result."), |_, _| {
                ToolOutcome::text("fine")
            })
            .unwrap(),
    );
    let layer = McpServerLayer::builder("big", client_at(&remote_session.url(), &remote_session))
        .max_message_bytes(256 << 10)
        .connect()
        .unwrap();
    let log = EventLog::new();
    let (_host, session) = gateway(&log, vec![("big", layer.clone())]);
    let mut client = session.client().unwrap();
    for tool in ["big_huge", "big_noisy"] {
        let refused = client.call_tool(tool, json!({})).unwrap();
        assert!(refused.is_error, "{tool}");
        let text = refused.text();
        assert!(
            text.contains("\"big\"")
                && text.contains("262144")
                && text.contains("McpServerBuilder::max_message_bytes"),
            "{tool}: {text}"
        );
    }
    // What fits passes, on the same layer, which stays ready.
    let fine = client.call_tool("big_small", json!({})).unwrap();
    assert_eq!((fine.text(), fine.is_error), ("fine".to_owned(), false));
    assert!(ready(&layer));
}

/// The `stdio_server` program in misbehaving `mode`.
fn misbehaving(mode: &str, file: Option<&PathBuf>) -> StdioServer {
    let mut args = vec!["--misbehave".to_owned(), mode.to_owned()];
    args.extend(file.map(|file| file.display().to_string()));
    StdioServer::new(env!("CARGO_BIN_EXE_stdio_server")).args(args)
}

#[test]
fn empty_and_colliding_names_are_left_out_with_an_event_and_reserved_meta_is_not_relayed() {
    let layer = McpServerLayer::stdio("names", misbehaving("names", None))
        .connect()
        .unwrap();
    let log = EventLog::new();
    let (_host, session) = gateway(&log, vec![("names", layer)]);
    let mut client = session.client().unwrap();
    let tools = client.list_tools().unwrap();
    let listed: Vec<&str> = tools.iter().map(|t| t.name()).collect();
    assert_eq!(listed, ["echo", "names_ok", "names_meta"]);
    assert!(
        !listed.contains(&"names_"),
        "an empty name exposed as the bare prefix"
    );
    let faults = log.pick(|event| match event {
        Event::SurfaceFault { message } if message.contains("left out") => Some(message.clone()),
        _ => None,
    });
    assert_eq!(faults.len(), 1, "{faults:?}");
    assert!(
        faults[0].contains(r#""", "ok", "has space""#),
        "{}",
        faults[0]
    );
    let meta = tools[2].meta_json().unwrap();
    assert_eq!(meta.get("com.example/owner"), Some(&json!("tests")));
    assert_eq!(
        meta.get("io.modelcontextprotocol/serverInfo"),
        None,
        "{meta:?}"
    );
}

#[test]
fn a_silent_stdio_server_is_not_waited_for_and_fails_with_its_reason() {
    let layer = McpServerLayer::stdio(
        "mute",
        misbehaving("silent", None).timeout(Duration::from_millis(500)),
    )
    .reconnect_backoff(Duration::from_millis(100), Duration::from_secs(1))
    .start()
    .unwrap();
    let log = EventLog::new();
    let (_host, session) = gateway(&log, vec![("mute", layer.clone())]);
    let mut client = session.client().unwrap();
    only_the_application_serves(&mut client);
    wait_for("failed", || {
        matches!(layer.status(), ServerStatus::Failed { .. })
    });
    assert!(layer.last_error().is_some());
    assert_eq!(tool_names(&mut client), ["echo"]);
}

#[test]
fn calls_piled_on_a_hung_stdio_server_leave_the_apps_tools_serving_and_drain_when_it_recovers() {
    let dir = std::env::temp_dir().join(format!("toolhost-hang-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let release = dir.join("release");
    let _ = std::fs::remove_file(&release);
    let layer = McpServerLayer::stdio("stuck", misbehaving("hang", Some(&release)))
        .max_concurrent_calls(8)
        .connect()
        .unwrap();
    let log = EventLog::new();
    let (_host, session) = gateway(&log, vec![("stuck", layer)]);
    let piled: Vec<_> = (0..24)
        .map(|_| call_aside(&session, "stuck_wait"))
        .collect();
    wait_for("16 calls waiting in the server's own line", || {
        queued(&log, "stuck_wait") == 16
    });
    let mut client = session.client().unwrap();
    assert_eq!(
        client
            .call_tool("echo", json!({"text": "here"}))
            .unwrap()
            .text(),
        "here"
    );
    assert!(piled.iter().all(|rx| rx.try_recv().is_err()));
    std::fs::write(&release, b"").unwrap();
    for rx in piled {
        let result = rx.recv_timeout(Duration::from_secs(30)).expect("drained");
        assert_eq!((result.text(), result.is_error), ("done".to_owned(), false));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_stdio_server_that_crashes_is_started_again_and_its_tools_stay() {
    let layer = McpServerLayer::stdio("fragile", misbehaving("crash", None))
        .connect()
        .unwrap();
    let first = layer.process_id().unwrap();
    let log = EventLog::new();
    let (_host, session) = gateway(&log, vec![("fragile", layer.clone())]);
    let mut client = session.client().unwrap();
    let crashed = client.call_tool("fragile_crash", json!({})).unwrap();
    assert!(crashed.is_error, "{}", crashed.text());
    wait_for("a new child", || {
        layer.process_id().is_some_and(|pid| pid != first)
    });
    assert_eq!(
        tool_names(&mut client),
        ["echo", "fragile_crash", "fragile_ping"]
    );
    let pinged = client.call_tool("fragile_ping", json!({})).unwrap();
    assert_eq!((pinged.text(), pinged.is_error), ("ping".to_owned(), false));
    echo_answers(&mut client, "x");
}

#[test]
fn a_builders_debug_shows_neither_the_url_nor_its_credentials() {
    let builder: McpServerBuilder = McpServerLayer::builder(
        "secret",
        Client::builder("http://127.0.0.1:9/mcp/cap-abcdef")
            .header("Authorization", "Bearer th_topsecret"),
    );
    let shown = format!("{builder:?}");
    assert!(
        shown.contains("secret") && shown.contains("http"),
        "{shown}"
    );
    assert!(
        !shown.contains("topsecret") && !shown.contains("cap-abcdef"),
        "{shown}"
    );
}

#[test]
fn oversized_stdio_results_and_notifications_are_skipped_unread_and_the_server_runs_on() {
    let layer = McpServerLayer::stdio("big", misbehaving("huge", None))
        .max_message_bytes(256 << 10)
        .connect()
        .unwrap();
    let pid = layer.process_id().unwrap();
    let log = EventLog::new();
    let (_host, session) = gateway(&log, vec![("big", layer.clone())]);
    let mut client = session.client().unwrap();
    let refused = client.call_tool("big_huge", json!({})).unwrap();
    assert!(refused.is_error);
    let text = refused.text();
    assert!(
        text.contains("\"big\"")
            && text.contains("262144")
            && text.contains("McpServerBuilder::max_message_bytes"),
        "{text}"
    );
    // A notification past the limit is the server's, not an answer: it is
    // skipped unread, and the call it came with goes on to its answer.
    let mut reports = Vec::new();
    let noisy = client
        .call_tool_with(
            "big_noisy",
            json!({}),
            toolhost::client::CallOptions::new().on_progress(|p| reports.push(p.progress)),
        )
        .unwrap();
    assert_eq!((noisy.text(), noisy.is_error), ("ok".to_owned(), false));
    assert!(
        reports.is_empty(),
        "the oversized progress reached the agent"
    );
    // The application hears that something was skipped, and how big it was.
    let skipped = log.pick(|event| match event {
        Event::ServerLog { server, data, .. } if server == "big" => Some(data.to_string()),
        _ => None,
    });
    assert!(
        skipped.iter().any(|text| text.contains("skipped unread")
            && text.contains("262144")
            && text.contains("StdioServer::max_message_bytes")),
        "{skipped:?}"
    );
    // The same process answers what fits: it was never restarted.
    let fine = client.call_tool("big_small", json!({})).unwrap();
    assert_eq!((fine.text(), fine.is_error), ("small".to_owned(), false));
    assert_eq!(layer.process_id(), Some(pid));
    assert!(ready(&layer));
}

#[test]
fn a_call_to_a_hung_stdio_server_ends_at_its_deadline_and_the_server_is_told_to_stop() {
    let dir = std::env::temp_dir().join(format!("toolhost-deadline-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let release = dir.join("release");
    let cancelled = dir.join("release.cancelled");
    let layer = McpServerLayer::stdio("stuck", misbehaving("hang", Some(&release)))
        .call_timeout(Duration::from_secs(1))
        .connect()
        .unwrap();
    let log = EventLog::new();
    let (_host, session) = gateway(&log, vec![("stuck", layer)]);
    let mut client = session.client().unwrap();
    assert!(!cancelled.exists());
    let ended = client.call_tool("stuck_wait", json!({})).unwrap();
    assert!(ended.is_error);
    assert!(
        ended.text().contains("\"stuck\"")
            && ended.text().contains("McpServerBuilder::call_timeout"),
        "{}",
        ended.text()
    );
    wait_for("the server told to stop", || cancelled.exists());
    // A call within its deadline is answered as usual.
    let pinged = client.call_tool("stuck_ping", json!({})).unwrap();
    assert_eq!((pinged.text(), pinged.is_error), ("ping".to_owned(), false));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_tool_list_past_the_limit_keeps_the_server_out_saying_why_and_the_app_serving() {
    let long = "d".repeat(1 << 20);
    let (_remote_host, remote_session) = remote(
        StaticSurface::new()
            .tool(Tool::new("wordy", long), |_, _| ToolOutcome::text("never"))
            .unwrap(),
    );
    let layer = McpServerLayer::builder("wordy", client_at(&remote_session.url(), &remote_session))
        .max_message_bytes(256 << 10)
        .reconnect_backoff(Duration::from_millis(50), Duration::from_millis(200))
        .start()
        .unwrap();
    let log = EventLog::new();
    let (_host, session) = gateway(&log, vec![("wordy", layer.clone())]);
    wait_for("failed", || {
        matches!(layer.status(), ServerStatus::Failed { .. })
    });
    let reason = layer.last_error().unwrap();
    assert!(
        reason.contains("262144") && reason.contains("McpServerBuilder::max_message_bytes"),
        "{reason}"
    );
    let mut client = session.client().unwrap();
    assert_eq!(tool_names(&mut client), ["echo"]);
    echo_answers(&mut client, "x");
}

/// The reasons the layer `server` failed with, as its events told them.
fn failures(log: &EventLog, server: &str) -> Vec<String> {
    log.server_statuses(server)
        .into_iter()
        .filter_map(|status| match status {
            ServerStatus::Failed { reason, .. } => Some(reason),
            _ => None,
        })
        .collect()
}

/// Starts the layer `name` of `builder` behind a gateway and checks that
/// its listing is refused, again on each attempt, with events whose
/// reason says each of `says`, while the application's own tool serves.
fn listing_refused(name: &str, builder: McpServerBuilder, says: &[&str]) {
    let layer = builder
        .reconnect_backoff(Duration::from_millis(50), Duration::from_millis(200))
        .start()
        .unwrap();
    let log = EventLog::new();
    let (_host, session) = gateway(&log, vec![(name, layer.clone())]);
    let mut client = session.client().unwrap();
    only_the_application_serves(&mut client);
    wait_for("failed", || !failures(&log, name).is_empty());
    let reason = &failures(&log, name)[0];
    for phrase in says {
        assert!(reason.contains(phrase), "{phrase:?} in {reason}");
    }
    assert_eq!(layer.last_error().as_ref(), Some(reason));
    wait_for("refused again", || failures(&log, name).len() >= 2);
    assert_eq!(layer.count(), 0);
    only_the_application_serves(&mut client);
}

#[test]
fn a_stdio_listing_past_the_clients_bound_across_pages_keeps_the_server_out_naming_it_and_the_setting(
) {
    // Six pages of 1,000 tools, past the client's default of 4,096.
    let paged = || misbehaving("pages", None).arg("6");
    listing_refused(
        "paged",
        McpServerLayer::stdio("paged", paged()),
        &[
            "listed 5000 tools",
            "past the limit of 4096 tools",
            "StdioServer::max_listed_tools",
        ],
    );
    // With the bound raised on the client, the same server joins whole.
    let layer = McpServerLayer::stdio("paged", paged().max_listed_tools(6000))
        .connect()
        .unwrap();
    assert_eq!(layer.status(), ServerStatus::Ready { tools: 6000 });
}

#[test]
fn an_http_listing_past_the_clients_bound_keeps_the_server_out_naming_it_and_the_setting() {
    let (_remote_host, remote_session) = remote(
        StaticSurface::new()
            .tool(Tool::new("a", "A."), |_, _| ToolOutcome::text("a"))
            .unwrap()
            .tool(Tool::new("b", "B."), |_, _| ToolOutcome::text("b"))
            .unwrap()
            .tool(Tool::new("c", "C."), |_, _| ToolOutcome::text("c"))
            .unwrap(),
    );
    let client = client_at(&remote_session.url(), &remote_session);
    listing_refused(
        "many",
        McpServerLayer::builder("many", client.clone().max_listed_tools(2)),
        &[
            "listed 3 tools",
            "past the limit of 2 tools",
            "ClientBuilder::max_listed_tools",
        ],
    );
    assert_eq!(remote_session.calls_served(), 0);
    // Within the bound, its tools join.
    let layer = McpServerLayer::builder("many", client.max_listed_tools(3))
        .connect()
        .unwrap();
    assert_eq!(layer.status(), ServerStatus::Ready { tools: 3 });
}

/// What the layer `server` reported of its stderr and log messages: one
/// by one, and counted in `ServerOutputSuppressed` (stderr, log each),
/// and how many such counts came.
fn chatter(log: &EventLog, server: &str) -> ((u64, u64), (u64, u64), usize) {
    let mut told = ((0, 0), (0, 0), 0);
    for event in log.all() {
        match event {
            Event::ServerStderr { server: named, .. } if named == server => told.0 .0 += 1,
            Event::ServerLog { server: named, .. } if named == server => told.0 .1 += 1,
            Event::ServerOutputSuppressed {
                server: named,
                stderr_lines,
                log_messages,
                ..
            } if named == server => {
                told.1 .0 += stderr_lines;
                told.1 .1 += log_messages;
                told.2 += 1;
            }
            _ => {}
        }
    }
    told
}

#[test]
fn a_stdio_servers_flood_of_stderr_and_log_messages_is_reported_at_a_bounded_rate_and_counted() {
    // Within the rate, every line is reported one by one, and no count.
    let layer = McpServerLayer::stdio("quiet", misbehaving("chatty", None).arg("10"))
        .refresh_every(None)
        .connect()
        .unwrap();
    let log = EventLog::new();
    let (_host, session) = gateway(&log, vec![("quiet", layer.clone())]);
    layer.refresh().unwrap();
    wait_for("twenty reports", || chatter(&log, "quiet").0 == (10, 10));
    // A count would come when the second ends.
    thread::sleep(Duration::from_millis(1500));
    assert_eq!(chatter(&log, "quiet"), ((10, 10), (0, 0), 0));
    drop((session, layer));

    // 20,000 lines of stderr and as many log messages.
    const LINES: u64 = 20_000;
    let layer = McpServerLayer::stdio("chatty", misbehaving("chatty", None).arg(LINES.to_string()))
        .refresh_every(None)
        .connect()
        .unwrap();
    let log = EventLog::new();
    let (_host, session) = gateway(&log, vec![("chatty", layer.clone())]);
    let mut client = session.client().unwrap();
    let started = Instant::now();
    layer.refresh().unwrap();
    echo_answers(&mut client, "during the flood");
    wait_for("every line reported or counted", || {
        let (reported, counted, _) = chatter(&log, "chatty");
        (reported.0 + counted.0, reported.1 + counted.1) == (LINES, LINES)
    });
    let seconds = started.elapsed().as_secs();
    let (reported, counted, counts) = chatter(&log, "chatty");
    // At most 50 a second, in the seconds the flood and its count took.
    assert!(
        reported.0 + reported.1 <= 50 * (seconds + 2),
        "{reported:?} reported one by one in {seconds} s"
    );
    assert!(counted.0 > 0 && counted.1 > 0, "{counted:?}");
    assert!(
        counts >= 1 && counts as u64 <= seconds + 2,
        "{counts} counts"
    );
    assert_eq!(tool_names(&mut client), ["echo", "chatty_ping"]);
    echo_answers(&mut client, "after");
}

#[test]
fn a_slow_stdio_server_is_not_waited_for_and_its_tools_join_when_it_answers() {
    let slow =
        StdioServer::new(env!("CARGO_BIN_EXE_stdio_server")).args(["--misbehave", "slow", "3000"]);
    let layer = McpServerLayer::stdio("late", slow).start().unwrap();
    let log = EventLog::new();
    let (_host, session) = gateway(&log, vec![("late", layer.clone())]);
    // Served at once, while the server still holds its `initialize`.
    let mut client = session.client().unwrap();
    only_the_application_serves(&mut client);
    assert_eq!(layer.status(), ServerStatus::Connecting);
    wait_for("ready", || ready(&layer));
    assert_eq!(tool_names(&mut client), ["echo", "late_ping"]);
    assert_eq!(
        client.call_tool("late_ping", json!({})).unwrap().text(),
        "ping"
    );
    assert_eq!(
        log.server_statuses("late"),
        [ServerStatus::Connecting, ServerStatus::Ready { tools: 1 }]
    );
}

#[test]
fn a_server_its_settings_can_never_reach_fails_once_while_one_out_of_reach_is_tried_again() {
    // Nothing listens on a port just let go: out of reach for now, maybe
    // not for ever.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let quick = |layer: McpServerBuilder| {
        layer
            .reconnect_backoff(Duration::from_millis(10), Duration::from_millis(20))
            .start()
            .unwrap()
    };
    // A URL the client refuses (not loopback), and a stdio timeout of zero:
    // no attempt can ever get further.
    let far = quick(McpServerLayer::builder(
        "far",
        Client::builder("http://192.0.2.1:8000/mcp/cap-secret"),
    ));
    let timeless = quick(McpServerLayer::stdio(
        "timeless",
        StdioServer::new(env!("CARGO_BIN_EXE_stdio_server")).timeout(Duration::ZERO),
    ));
    let absent = quick(McpServerLayer::builder(
        "absent",
        Client::builder(&format!("http://{closed}/mcp")),
    ));
    let log = EventLog::new();
    let (_host, session) = gateway(
        &log,
        vec![
            ("far", far.clone()),
            ("timeless", timeless.clone()),
            ("absent", absent.clone()),
        ],
    );

    // The one out of reach is tried again and again meanwhile …
    wait_for("the closed port tried a third time", || {
        log.server_statuses("absent")
            .contains(&ServerStatus::Reconnecting { attempt: 3 })
    });
    // … while each misconfigured one failed once, saying what to fix.
    for (layer, names) in [
        (&far, "not a loopback address"),
        (&timeless, "StdioServer::timeout"),
    ] {
        let seen = log.server_statuses(layer.name());
        assert_eq!(seen.len(), 2, "{seen:?}");
        assert_eq!(seen[0], ServerStatus::Connecting);
        let ServerStatus::Misconfigured { reason } = &seen[1] else {
            panic!("{seen:?}");
        };
        assert!(reason.contains(names), "{reason}");
        assert!(!reason.contains("cap-secret"), "the URL is shown: {reason}");
        assert_eq!(layer.status(), seen[1]);
        assert_eq!(layer.last_error().as_ref(), Some(reason));
        assert_eq!(layer.count(), 0);
    }
    let misconfigured = log.pick(|event| match event {
        Event::ServerStatus {
            status: ServerStatus::Misconfigured { .. },
            ..
        } => Some(event.level()),
        _ => None,
    });
    assert_eq!(misconfigured, [log::Level::Error, log::Level::Error]);
    let mut client = session.client().unwrap();
    only_the_application_serves(&mut client);
}

/// The wrapper the `ToolSurface` docs describe: it lists what it wants
/// listed and forwards calls, and nothing else.
struct Natural(LayeredSurface);

impl ToolSurface for Natural {
    fn list_tools(&self) -> Vec<Tool> {
        self.0.list_tools()
    }
    fn call(&self, name: &str, args: &Value, ctx: &CallContext) -> ToolOutcome {
        self.0.call(name, args, ctx)
    }
}

/// How many calls of a [`holding`] tool run now, the most that ever ran
/// at once, and what lets them go.
#[derive(Default)]
struct Held {
    running: AtomicUsize,
    most: AtomicUsize,
    release: AtomicBool,
}

/// Lets every call held by each of its [`Held`] go when dropped: a test
/// that fails midway must not leave handlers that hold its hosts' drop.
struct LetGo(Vec<Arc<Held>>);

impl Drop for LetGo {
    fn drop(&mut self) {
        for held in &self.0 {
            held.release.store(true, Ordering::SeqCst);
        }
    }
}

/// A `hold` tool that runs until `held` lets it go, counting in `held`.
fn holding(surface: StaticSurface, held: &Arc<Held>) -> StaticSurface {
    let held = Arc::clone(held);
    surface
        .tool(Tool::new("hold", "Runs until let go."), move |_, _| {
            let now = held.running.fetch_add(1, Ordering::SeqCst) + 1;
            held.most.fetch_max(now, Ordering::SeqCst);
            while !held.release.load(Ordering::SeqCst) {
                thread::sleep(Duration::from_millis(5));
            }
            held.running.fetch_sub(1, Ordering::SeqCst);
            ToolOutcome::text("let go")
        })
        .unwrap()
}

#[test]
fn a_wrapper_that_only_lists_and_forwards_keeps_bridged_calls_in_their_servers_own_line() {
    let remote_held = Arc::new(Held::default());
    let (_remote_host, remote_session) = remote(holding(StaticSurface::new(), &remote_held));
    let layer = McpServerLayer::builder("slow", client_at(&remote_session.url(), &remote_session))
        .max_concurrent_calls(2)
        .connect()
        .unwrap();
    // The host has one call slot; the application has a `hold` of its own.
    let local_held = Arc::new(Held::default());
    let log = EventLog::new();
    let host = gateway_host(&log, 1);
    let surface = LayeredSurface::builder()
        .layer("app", holding(app(), &local_held))
        .layer("slow", layer)
        .build();
    let session = host.open_session(Natural(surface));
    let let_go = LetGo(vec![Arc::clone(&remote_held), Arc::clone(&local_held)]);

    // Three bridged calls: two run at once on the server, though the host
    // has one slot, and the third waits in the server's line.
    let bridged: Vec<_> = (0..3).map(|_| call_aside(&session, "slow_hold")).collect();
    wait_for("two running on the server and one waiting", || {
        remote_held.running.load(Ordering::SeqCst) == 2 && queued(&log, "slow_hold") == 1
    });
    // Meanwhile the host's one slot is free: the application's own tool
    // answers at once, never queued.
    let mut client = session.client().unwrap();
    echo_answers(&mut client, "free");
    assert_eq!(queued(&log, "echo"), 0);

    // The negative: the application's own `hold`, through the same
    // wrapper, takes the host's one slot, so a second call waits for it.
    let local: Vec<_> = (0..2).map(|_| call_aside(&session, "hold")).collect();
    wait_for("one local call waiting in the host's queue", || {
        queued(&log, "hold") == 1
    });
    assert_eq!(local_held.running.load(Ordering::SeqCst), 1);

    drop(let_go);
    for rx in bridged.into_iter().chain(local) {
        let result = rx.recv_timeout(Duration::from_secs(20)).unwrap();
        assert_eq!(
            (result.text(), result.is_error),
            ("let go".to_owned(), false)
        );
    }
    // Bounded by the server's own limit: never more than 2 at once.
    assert_eq!(remote_held.most.load(Ordering::SeqCst), 2);
    assert_eq!(local_held.most.load(Ordering::SeqCst), 1);
    assert_eq!(queued(&log, "slow_hold"), 1);
}
