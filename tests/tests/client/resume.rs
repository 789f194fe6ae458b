//! Resuming a stream that ended before its response: from a real host that
//! closes it, and from a scripted server that drops it, refuses the resume
//! or brings nothing new.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::json;
use toolhost::client::{CallOptions, CancelHandle, ClientError, Era, ToolResult};
use toolhost::{HostConfig, Revision, StaticSurface, Tool, ToolHost, ToolOutcome};

use crate::scripted::{
    accepted, event, handshake, json_reply, ok, progress_message, result, scripted, sse_stream,
    stateful, stateless, Reply, Seen, HANG_UP,
};

/// A host whose `poll` tool reports step 1, closes its response stream
/// (asking the client to come back after 20 ms), reports steps 2 and 3 and
/// returns; with `early` it closes before step 1, when only the priming
/// event of 2025-11-25 gave the client an id. Counts the handler's runs and
/// the closes that took.
fn polling_host() -> (
    ToolHost,
    toolhost::ToolSession,
    Arc<AtomicUsize>,
    Arc<AtomicUsize>,
) {
    let host = ToolHost::bind(HostConfig::default()).unwrap();
    let runs = Arc::new(AtomicUsize::new(0));
    let closes = Arc::new(AtomicUsize::new(0));
    let (ran, closed) = (Arc::clone(&runs), Arc::clone(&closes));
    let surface = StaticSurface::new()
        .tool(
            Tool::new("poll", "Reports three steps, letting the stream go once."),
            move |args, ctx| {
                ran.fetch_add(1, Ordering::SeqCst);
                let early = args["early"] == true;
                let close = || {
                    if ctx.close_stream(Duration::from_millis(20)) {
                        closed.fetch_add(1, Ordering::SeqCst);
                    }
                };
                if early {
                    close();
                }
                for step in 1..=3 {
                    ctx.progress(f64::from(step), Some(3.0), Some(&format!("step {step}")));
                    if step == 1 && !early {
                        close();
                    }
                    if step == 2 {
                        // Step 2 waits for the resume; step 3 and the result
                        // most likely go out on the resumed connection itself.
                        thread::sleep(Duration::from_millis(100));
                    }
                }
                ToolOutcome::text("polled")
            },
        )
        .unwrap()
        .tool(Tool::new("echo", "Echoes text."), |args, _| {
            ToolOutcome::text(args["text"].as_str().unwrap_or_default())
        })
        .unwrap();
    let session = host.open_session(surface);
    (host, session, runs, closes)
}

#[test]
fn a_stream_the_host_closes_is_resumed_and_every_progress_step_arrives_once() {
    let (_host, session, runs, closes) = polling_host();
    // Before 2025-11-25 no priming event gives an id, so the stream can only
    // be closed after a progress event.
    let cases = [
        (Revision::V2025_11_25, false),
        (Revision::V2025_11_25, true),
        (Revision::V2025_06_18, false),
    ];
    for (n, (revision, early)) in cases.into_iter().enumerate() {
        let mut client = session
            .client_builder()
            .era(Era::Stateful)
            .revision(revision)
            .connect()
            .unwrap();
        assert_eq!(client.revision(), revision);
        let mut reports = Vec::new();
        let result = client
            .call_tool_with(
                "poll",
                json!({"early": early}),
                CallOptions::new().on_progress(|p| reports.push((p.progress, p.message.clone()))),
            )
            .unwrap_or_else(|err| panic!("{revision} early={early}: {err}"));
        assert_eq!(result.text(), "polled");
        assert_eq!(
            closes.load(Ordering::SeqCst),
            n + 1,
            "{revision} early={early}: the host closed the stream"
        );
        assert_eq!(
            reports,
            [1.0, 2.0, 3.0].map(|n| (n, Some(format!("step {n}")))),
            "{revision} early={early}"
        );
        assert_eq!(
            runs.load(Ordering::SeqCst),
            n + 1,
            "resumed, not sent again"
        );
        // The client goes on as usual.
        assert_eq!(
            client
                .call_tool("echo", json!({"text": "after"}))
                .unwrap()
                .text(),
            "after"
        );
        client.close().unwrap();
    }
    assert_eq!(session.calls_served(), 6);
}

/// Calls tool `x` of a stateful server asking for progress: the outcome,
/// and the progress reported.
fn call_reporting_progress(url: &str) -> (Result<ToolResult, ClientError>, Vec<f64>) {
    let mut reports = Vec::new();
    let outcome = stateful(url).call_tool_with(
        "x",
        json!({}),
        CallOptions::new().on_progress(|p| reports.push(p.progress)),
    );
    (outcome, reports)
}

#[test]
fn a_dropped_stream_is_resumed_on_a_new_connection_after_the_last_complete_event() {
    let mut script = handshake("2025-06-18");
    script.push(Box::new(|seen: &Seen| {
        let token = seen.body["params"]["_meta"]["progressToken"].clone();
        let mut bytes = sse_stream(&[event("9-1", &progress_message(&token, 1))], false);
        // Event 9-2 is cut off mid-way by the connection dropping.
        let whole = event("9-2", &progress_message(&token, 2));
        let half = &whole[..whole.len() / 2];
        bytes.extend_from_slice(format!("{:x}\r\n{half}", whole.len()).as_bytes());
        [bytes, HANG_UP.to_vec()].concat()
    }));
    script.push(Box::new(|_: &Seen| {
        // What the call sent after 9-1 (the token and id of the POST).
        sse_stream(
            &[
                event("9-2", &progress_message(&json!(2), 2)),
                event("9-3", &progress_message(&json!(2), 3)),
                event(
                    "9-4",
                    &json!({"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": "resumed"}]}}),
                ),
            ],
            true,
        )
    }));
    let server = scripted(script);
    let (result, reports) = call_reporting_progress(&server.url);
    assert_eq!(result.unwrap().text(), "resumed");
    assert_eq!(reports, [1.0, 2.0, 3.0]);
    let (seen, connections) = server.done.join().unwrap();
    assert_eq!(connections, 2, "the dropped connection was replaced");
    assert_eq!(seen[2].id(), json!(2));
    let get = &seen[3];
    assert_eq!(get.method, "GET");
    assert_eq!(
        get.header("Last-Event-ID"),
        Some("9-1"),
        "the half-read event does not count"
    );
    assert_eq!(get.header("Mcp-Session-Id"), Some("s-1"));
    assert_eq!(get.header("MCP-Protocol-Version"), Some("2025-06-18"));
    assert_eq!(get.header("Accept"), Some("text/event-stream"));
    assert_eq!(get.header("Authorization"), Some("Bearer secret"));
    assert_eq!(get.header("Content-Length"), None);
}

/// A `tools/call` stream that ends after a priming event and progress 1,
/// asking for a reconnect after `retry_ms`.
fn cut_stream(retry_ms: u64) -> Reply {
    Box::new(move |seen: &Seen| {
        let token = seen.body["params"]["_meta"]["progressToken"].clone();
        sse_stream(
            &[
                "id: 7-0\ndata:\n\n".into(),
                event("7-1", &progress_message(&token, 1)),
                format!("retry: {retry_ms}\n\n"),
            ],
            true,
        )
    })
}

#[test]
fn a_refused_resume_fails_the_call_with_the_status_instead_of_trying_again() {
    let mut script = handshake("2025-11-25");
    script.push(cut_stream(5));
    script.push(Box::new(|_: &Seen| {
        let error = json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32600,
            "message": "Bad Request: Last-Event-ID names no stream this MCP session can resume"}});
        json_reply(400, "", &error)
    }));
    let server = scripted(script);
    let (result, reports) = call_reporting_progress(&server.url);
    let err = result.unwrap_err();
    assert_eq!(reports, [1.0]);
    assert!(
        matches!(&err, ClientError::ResumeFailed { last_event_id, attempts: 1, cause }
            if last_event_id == "7-1" && matches!(**cause, ClientError::Rpc { status: 400, code: -32600, .. })),
        "{err:?}"
    );
    let text = err.to_string();
    assert!(
        text.contains("ended before the response")
            && text.contains("resuming it")
            && text.contains("HTTP 400"),
        "{text}"
    );
    // One GET, and the script (which ends after it) saw nothing more.
    let (seen, _) = server.done.join().unwrap();
    let methods: Vec<&str> = seen.iter().map(|s| s.method.as_str()).collect();
    assert_eq!(methods, ["POST", "POST", "POST", "GET"]);
    assert_eq!(seen[3].header("Last-Event-ID"), Some("7-1"));
}

#[test]
fn resumes_that_bring_nothing_new_give_up_after_three_tries() {
    let mut script = handshake("2025-11-25");
    script.push(cut_stream(5));
    for _ in 0..3 {
        script.push(Box::new(|_: &Seen| sse_stream(&[], true)));
    }
    let server = scripted(script);
    let (result, reports) = call_reporting_progress(&server.url);
    let err = result.unwrap_err();
    assert_eq!(reports, [1.0], "each report once, however often resumed");
    assert!(
        matches!(&err, ClientError::ResumeFailed { attempts: 3, cause, .. }
            if cause.to_string().contains("ended before the response")),
        "{err:?}"
    );
    let (seen, _) = server.done.join().unwrap();
    let gets: Vec<Option<&str>> = seen
        .iter()
        .filter(|s| s.method == "GET")
        .map(|s| s.header("Last-Event-ID"))
        .collect();
    assert_eq!(gets, [Some("7-1"); 3]);
}

#[test]
fn a_cancel_while_waiting_to_resume_ends_the_call_without_the_resume() {
    let mut script = handshake("2025-11-25");
    // A minute, which the client caps at ten seconds.
    script.push(cut_stream(60_000));
    script.push(accepted());
    let server = scripted(script);
    let mut client = stateful(&server.url);
    let cancel = CancelHandle::new();
    let remote = cancel.clone();
    let canceller = thread::spawn(move || {
        thread::sleep(Duration::from_millis(50));
        remote.cancel();
    });
    let started = Instant::now();
    let err = client
        .call_tool_with(
            "x",
            json!({}),
            CallOptions::new().cancel_with(&cancel).on_progress(|_| {}),
        )
        .unwrap_err();
    canceller.join().unwrap();
    assert!(matches!(err, ClientError::Cancelled), "{err:?}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "the wait was cut short"
    );
    let (seen, _) = server.done.join().unwrap();
    let methods: Vec<&str> = seen
        .iter()
        .map(|s| s.body["method"].as_str().unwrap_or(&s.method))
        .collect();
    assert_eq!(
        methods,
        [
            "initialize",
            "notifications/initialized",
            "tools/call",
            "notifications/cancelled"
        ]
    );
    assert_eq!(seen[3].body["params"]["requestId"], seen[2].id());
}

#[test]
fn in_the_stateless_era_a_stream_that_ends_early_is_not_resumed() {
    // The stream carries ids and a retry, as a resumable one would.
    let server = scripted(vec![
        cut_stream(5),
        ok(|seen| result(seen, json!({"content": [{"type": "text", "text": "next"}]}))),
    ]);
    let mut client = stateless(&server.url);
    let err = client
        .call_tool_with("x", json!({}), CallOptions::new().on_progress(|_| {}))
        .unwrap_err();
    assert!(
        matches!(&err, ClientError::Malformed { problem } if problem.contains("ended before the response")),
        "{err:?}"
    );
    // The next request is the next call, not a resume.
    assert_eq!(client.call_tool("x", json!({})).unwrap().text(), "next");
    let (seen, _) = server.done.join().unwrap();
    let methods: Vec<&str> = seen.iter().map(|s| s.method.as_str()).collect();
    assert_eq!(methods, ["POST", "POST"]);
    assert!(seen.iter().all(|s| s.header("Last-Event-ID").is_none()));
}
