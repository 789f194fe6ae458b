//! `toolhost::client` against a really bound host in both eras, and against
//! a scripted server for what the host does not do (pages, event streams,
//! fallbacks), checking every request the client writes against the
//! official schemas.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use serde_json::{json, Map, Value};
use toolhost::client::{CallOptions, CancelHandle, Client, ClientError, Era, Refusal, ToolResult};
use toolhost::{
    AskError, Content, Elicitation, HostConfig, InputRequest, Revision, StaticSurface, Tool,
    ToolHost, ToolOutcome,
};
use toolhost_tests::{schema, Conn, EventLog, JSON_HEADERS};

const ERAS: [Era; 2] = [Era::Stateful, Era::Stateless];

/// A host with tools for every kind of answer, and a count of handler runs.
/// Also returns how many `wait` handlers saw their call cancelled.
fn host_with_tools() -> (
    ToolHost,
    toolhost::ToolSession,
    Arc<AtomicUsize>,
    Arc<AtomicUsize>,
) {
    // The default 8 workers and 6 call slots: some tests leave `wait`
    // handlers running until the session drops.
    let host = ToolHost::bind(HostConfig::default().server_name("client-tests")).unwrap();
    let hits = Arc::new(AtomicUsize::new(0));
    let stopped = Arc::new(AtomicUsize::new(0));
    let saw_cancel = Arc::clone(&stopped);
    let counted = |hits: &Arc<AtomicUsize>| {
        let hits = Arc::clone(hits);
        move || {
            hits.fetch_add(1, Ordering::SeqCst);
        }
    };
    let (echo, add, quota, boom, wait, sample, count) = (
        counted(&hits),
        counted(&hits),
        counted(&hits),
        counted(&hits),
        counted(&hits),
        counted(&hits),
        counted(&hits),
    );
    let mut sampling = Map::new();
    sampling.insert("sampling".into(), json!({}));
    let surface = StaticSurface::new()
        .tool(
            Tool::new("echo", "Echoes text.").input_schema(json!({
                "type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]})),
            move |args, _| {
                echo();
                ToolOutcome::text(args["text"].as_str().unwrap_or_default())
            },
        )
        .unwrap()
        .tool(Tool::new("add", "Adds.").title("Add"), move |args, _| {
            add();
            let sum = args["a"].as_i64().unwrap_or(0) + args["b"].as_i64().unwrap_or(0);
            ToolOutcome::content([Content::text(sum.to_string()), Content::image(b"png", "image/png")])
                .with_structured(json!({"sum": sum}))
        })
        .unwrap()
        .tool(Tool::new("quota", "Declines."), move |_, _| {
            quota();
            ToolOutcome::declined("quota used up").with_code(json!("quota"))
        })
        .unwrap()
        .tool(Tool::new("boom", "Panics."), move |_, _| -> ToolOutcome {
            boom();
            panic!("on purpose")
        })
        .unwrap()
        .tool(Tool::new("wait", "Waits until cancelled."), move |_, ctx| {
            wait();
            let mut step = 0.0;
            while !ctx.is_cancelled() {
                // Sent only when the client asked for progress; a write is
                // how the host notices a closed stream.
                step += 1.0;
                ctx.progress(step, None, None);
                thread::sleep(Duration::from_millis(5));
            }
            saw_cancel.fetch_add(1, Ordering::SeqCst);
            ToolOutcome::text("stopped")
        })
        .unwrap()
        .tool(Tool::new("count", "Reports three steps."), move |_, ctx| {
            count();
            for step in 1..=3 {
                ctx.progress(f64::from(step), Some(3.0), Some(&format!("step {step}")));
            }
            ToolOutcome::text("counted")
        })
        .unwrap()
        .tool(
            Tool::new("summarize", "Needs sampling.").requires_client_capabilities(sampling),
            move |_, _| {
                sample();
                ToolOutcome::text("summary")
            },
        )
        .unwrap();
    let session = host.open_session(surface);
    (host, session, hits, stopped)
}

fn client(session: &toolhost::ToolSession, era: Era) -> Client {
    session.client_builder().era(era).connect().unwrap()
}

#[test]
fn the_client_lists_and_calls_tools_in_both_eras_through_the_real_endpoint() {
    let (_host, session, hits, _) = host_with_tools();
    for era in ERAS {
        let mut client = client(&session, era);
        assert_eq!(client.era(), era);
        let tools = client.list_tools().unwrap();
        let names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
        assert_eq!(
            names,
            ["echo", "add", "quota", "boom", "wait", "count", "summarize"]
        );
        assert_eq!(tools[0].input_schema_json()["required"], json!(["text"]));
        assert_eq!(tools[1].title_text(), Some("Add"));

        let echoed = client.call_tool("echo", json!({"text": "hi"})).unwrap();
        assert_eq!(echoed.content, [Content::text("hi")]);
        assert!(!echoed.is_error);
        let added = client.call_tool("add", json!({"a": 2, "b": 3})).unwrap();
        assert_eq!(added.text(), "5");
        assert_eq!(added.structured_content, Some(json!({"sum": 5})));
        let image = serde_json::to_value(&added.content[1]).unwrap();
        assert_eq!(
            (&image["type"], &image["mimeType"]),
            (&json!("image"), &json!("image/png"))
        );
    }
    assert_eq!(hits.load(Ordering::SeqCst), 4);
    assert_eq!(session.calls_served(), 4);
}

#[test]
fn the_session_client_is_ready_to_call_without_a_probe() {
    let (_host, session, hits, _) = host_with_tools();
    let mut client = session.client().unwrap();
    assert_eq!(client.era(), Era::Stateless);
    assert_eq!(client.revision(), Revision::V2026_07_28);
    assert!(
        client.server_info().is_none(),
        "no request was needed to connect"
    );
    assert_eq!(
        client
            .call_tool("echo", json!({"text": "x"}))
            .unwrap()
            .text(),
        "x"
    );
    assert_eq!(hits.load(Ordering::SeqCst), 1);
}

#[test]
fn auto_settles_on_the_stateless_era_against_toolhost() {
    let (_host, session, _, _) = host_with_tools();
    let client = Client::builder(&session.url())
        .header("Authorization", &session.authorization())
        .connect()
        .unwrap();
    assert_eq!(client.era(), Era::Stateless);
    assert_eq!(client.server_info().unwrap().name, "client-tests");
    assert_eq!(client.session_id(), None);
}

#[test]
fn tool_errors_are_results_and_protocol_errors_are_errors_in_both_eras() {
    let (_host, session, hits, _) = host_with_tools();
    for era in ERAS {
        let mut client = client(&session, era);
        let declined = client.call_tool("quota", json!({})).unwrap();
        assert!(declined.is_error);
        assert_eq!(declined.text(), "quota used up");
        assert_eq!(declined.structured_content, Some(json!({"code": "quota"})));
        let failed = client.call_tool("boom", json!({})).unwrap();
        assert!(failed.is_error);
        assert!(!failed.text().contains("on purpose"));
        let unknown = client.call_tool("nope", json!({})).unwrap();
        assert!(unknown.is_error && unknown.text().contains("Unknown tool"));

        let before = hits.load(Ordering::SeqCst);
        let err = client.call_tool("echo", json!([1, 2])).unwrap_err();
        let status = if era == Era::Stateful { 200 } else { 400 };
        assert!(
            matches!(&err, ClientError::Rpc { status: s, code: -32602, message, .. } if *s == status && message.contains("an array")),
            "{era:?}: {err:?}"
        );
        assert!(err.to_string().contains("-32602"), "{err}");
        assert_eq!(
            hits.load(Ordering::SeqCst),
            before,
            "invalid params never reach a handler"
        );
        // The connection survives a JSON-RPC error.
        assert_eq!(
            client
                .call_tool("echo", json!({"text": "ok"}))
                .unwrap()
                .text(),
            "ok"
        );
    }
}

#[test]
fn the_stateful_era_initializes_pings_and_deletes_its_mcp_session() {
    let (host, session, _, _) = host_with_tools();
    let mut client = client(&session, Era::Stateful);
    assert_eq!(client.revision(), Revision::LATEST_STATEFUL);
    assert_eq!(client.server_info().unwrap().name, "client-tests");
    let mcp_session = client
        .session_id()
        .expect("toolhost issues a session id")
        .to_owned();
    client.ping().unwrap();
    client.close().unwrap();

    // The server forgot the MCP session: the id now gets 404.
    let mut raw = Conn::open(host.local_addr()).unwrap();
    let auth = session.authorization();
    let mut headers = JSON_HEADERS.to_vec();
    headers.extend([
        ("Authorization", auth.as_str()),
        ("Mcp-Session-Id", mcp_session.as_str()),
        ("MCP-Protocol-Version", "2025-11-25"),
    ]);
    let reply = raw
        .request(
            "POST",
            "/mcp",
            &headers,
            br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
        )
        .unwrap();
    assert_eq!(reply.status, 404);
}

#[test]
fn ping_in_the_stateless_era_is_refused_without_a_request() {
    let events = EventLog::new();
    let host = ToolHost::bind(events.hook(HostConfig::default())).unwrap();
    let session = host.open_session(StaticSurface::new());
    let mut client = client(&session, Era::Stateless);
    let err = client.ping().unwrap_err();
    assert!(matches!(
        err,
        ClientError::NotInEra {
            operation: "ping",
            ..
        }
    ));
    assert!(err.to_string().contains("2026-07-28"), "{err}");
    assert!(events.all().is_empty(), "nothing reached the host");
    // A stateless close sends nothing either, and succeeds.
    client.close().unwrap();
    assert!(events.all().is_empty());
}

#[test]
fn a_wrong_or_revoked_bearer_is_unauthorized_with_the_challenge_and_never_reaches_the_handler() {
    let (host, session, hits, _) = host_with_tools();
    for era in [Era::Stateful, Era::Stateless, Era::Auto] {
        let err = Client::builder(&host.url())
            .bearer("th_wrong")
            .era(era)
            .connect()
            .and_then(|mut c| c.call_tool("echo", json!({"text": "x"})))
            .unwrap_err();
        match &err {
            ClientError::Unauthorized {
                www_authenticate,
                message,
            } => {
                assert_eq!(
                    www_authenticate.as_deref(),
                    Some("Bearer realm=\"toolhost\"")
                );
                assert!(message
                    .as_deref()
                    .is_some_and(|m| m.contains("Unauthorized")));
            }
            other => panic!("{era:?}: {other:?}"),
        }
        assert!(
            err.to_string().contains("WWW-Authenticate: Bearer"),
            "{err}"
        );
    }
    let mut client = client(&session, Era::Stateful);
    client.call_tool("echo", json!({"text": "before"})).unwrap();
    drop(session);
    let err = client
        .call_tool("echo", json!({"text": "after"}))
        .unwrap_err();
    assert!(matches!(err, ClientError::Unauthorized { .. }), "{err:?}");
    assert_eq!(hits.load(Ordering::SeqCst), 1);
}

#[test]
fn declared_capabilities_reach_the_server_in_both_eras() {
    let (_host, session, hits, _) = host_with_tools();
    for era in ERAS {
        let mut bare = client(&session, era);
        let err = bare.call_tool("summarize", json!({})).unwrap_err();
        assert_eq!(err.rpc_code(), Some(-32021), "{era:?}: {err}");
        let mut sampling = session
            .client_builder()
            .era(era)
            .capabilities(json!({"sampling": {}}))
            .connect()
            .unwrap();
        assert_eq!(
            sampling.call_tool("summarize", json!({})).unwrap().text(),
            "summary"
        );
    }
    assert_eq!(hits.load(Ordering::SeqCst), 2);
}

#[test]
fn a_silent_server_times_out_and_the_client_recovers_on_a_new_connection() {
    let (_host, session, _, _) = host_with_tools();
    for era in ERAS {
        let mut client = session
            .client_builder()
            .era(era)
            .timeout(Duration::from_millis(200))
            .connect()
            .unwrap();
        let err = client.call_tool("wait", json!({})).unwrap_err();
        assert!(
            matches!(err, ClientError::Timeout { waited } if waited == Duration::from_millis(200)),
            "{err:?}"
        );
        assert!(err.to_string().contains("ClientBuilder::timeout"), "{err}");
        let err = client
            .call_tool_with(
                "wait",
                json!({}),
                CallOptions::new().timeout(Duration::from_millis(50)),
            )
            .unwrap_err();
        assert!(
            matches!(err, ClientError::Timeout { waited } if waited == Duration::from_millis(50)),
            "{err:?}"
        );
        assert_eq!(
            client
                .call_tool("echo", json!({"text": "again"}))
                .unwrap()
                .text(),
            "again"
        );
    }
    // The waiting handlers stop when the session goes.
    drop(session);
}

#[test]
fn a_cancelled_call_returns_at_once_reaches_the_handler_and_leaves_the_client_usable() {
    let (_host, session, _, stopped) = host_with_tools();
    for (n, era) in ERAS.into_iter().enumerate() {
        let mut client = client(&session, era);
        let cancel = CancelHandle::new();
        let remote = cancel.clone();
        let canceller = thread::spawn(move || {
            thread::sleep(Duration::from_millis(100));
            remote.cancel();
        });
        let started = Instant::now();
        // Stateful cancels by notifications/cancelled; 2026-07-28 by closing
        // the stream, which the host notices when it next writes to it — so
        // that call asks for progress.
        let mut options = CallOptions::new().cancel_with(&cancel);
        if era == Era::Stateless {
            options = options.on_progress(|_| {});
        }
        let err = client
            .call_tool_with("wait", json!({}), options)
            .unwrap_err();
        canceller.join().unwrap();
        assert!(matches!(err, ClientError::Cancelled), "{era:?}: {err:?}");
        assert!(started.elapsed() < Duration::from_secs(20));
        let deadline = Instant::now() + Duration::from_secs(10);
        while stopped.load(Ordering::SeqCst) <= n && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(
            stopped.load(Ordering::SeqCst),
            n + 1,
            "{era:?}: the handler saw the cancel"
        );
        assert_eq!(
            client
                .call_tool("echo", json!({"text": "next"}))
                .unwrap()
                .text(),
            "next"
        );
    }
    drop(session);
}

#[test]
fn progress_streams_as_events_before_the_result_in_both_eras() {
    let (_host, session, hits, _) = host_with_tools();
    for era in ERAS {
        let mut client = client(&session, era);
        let mut reports = Vec::new();
        let result = client
            .call_tool_with(
                "count",
                json!({}),
                CallOptions::new().on_progress(|p| {
                    reports.push((p.progress, p.total, p.message.clone()));
                }),
            )
            .unwrap();
        assert_eq!(result.text(), "counted");
        assert_eq!(
            reports,
            [1.0, 2.0, 3.0].map(|n| (n, Some(3.0), Some(format!("step {n}")))),
            "{era:?}"
        );
        // Without a callback no progress is asked for, and none arrives.
        assert_eq!(
            client.call_tool("count", json!({})).unwrap().text(),
            "counted"
        );
        // The stream ended cleanly, so the same client goes on.
        assert_eq!(
            client
                .call_tool("echo", json!({"text": "after"}))
                .unwrap()
                .text(),
            "after"
        );
    }
    assert_eq!(hits.load(Ordering::SeqCst), 6);
}

#[test]
fn a_call_with_a_cancelled_handle_never_reaches_the_server() {
    let (_host, session, hits, _) = host_with_tools();
    let mut client = client(&session, Era::Stateless);
    let cancel = CancelHandle::new();
    cancel.cancel();
    let err = client
        .call_tool_with(
            "echo",
            json!({"text": "x"}),
            CallOptions::new().cancel_with(&cancel),
        )
        .unwrap_err();
    assert!(matches!(err, ClientError::Cancelled));
    assert_eq!(hits.load(Ordering::SeqCst), 0);
    assert_eq!(session.calls_served(), 0);
}

#[test]
fn a_progress_callback_does_not_disturb_a_call_the_server_answers_with_json() {
    let (_host, session, _, _) = host_with_tools();
    for era in ERAS {
        let mut reports = 0;
        let result = client(&session, era)
            .call_tool_with(
                "echo",
                json!({"text": "p"}),
                CallOptions::new().on_progress(|_| reports += 1),
            )
            .unwrap();
        assert_eq!(result.text(), "p");
        assert_eq!(reports, 0, "the host sends no progress for an instant tool");
    }
}

#[test]
fn connecting_to_a_closed_port_says_nothing_is_listening() {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let err = Client::connect(&format!("http://127.0.0.1:{port}/mcp")).unwrap_err();
    assert!(matches!(err, ClientError::Connect { .. }), "{err:?}");
    assert!(err.to_string().contains("nothing is listening"), "{err}");
}

#[test]
fn a_non_loopback_or_https_url_is_refused_before_any_connection() {
    for url in [
        "http://192.0.2.1:80/mcp",
        "https://127.0.0.1:1/mcp",
        "http://example.com/mcp",
    ] {
        let err = Client::connect(url).unwrap_err();
        assert!(
            matches!(err, ClientError::InvalidUrl { .. }),
            "{url}: {err:?}"
        );
    }
}

#[test]
#[cfg_attr(
    not(target_os = "linux"),
    ignore = "the farewell is Linux only (see ToolHost::shutdown)"
)]
fn a_host_that_shut_down_fails_the_next_call_with_a_connection_error() {
    let (host, session, _, _) = host_with_tools();
    let mut client = session
        .client_builder()
        .timeout(Duration::from_secs(1))
        .connect()
        .unwrap();
    client.call_tool("echo", json!({"text": "x"})).unwrap();
    host.shutdown();
    // The request on the connection the client kept open is answered (not
    // left to the client's 1 s timeout): the host says it is gone.
    let err = client.call_tool("echo", json!({"text": "y"})).unwrap_err();
    match &err {
        ClientError::Rpc {
            status, message, ..
        } => {
            assert_eq!(*status, 503);
            assert!(message.contains("shut down"), "{message}");
        }
        other => panic!("expected the host's farewell, got {other:?}"),
    }
    // That connection was closed with the answer: the next call finds
    // nobody listening instead of waiting.
    let err = client.call_tool("echo", json!({"text": "z"})).unwrap_err();
    assert!(
        matches!(err, ClientError::Connect { .. } | ClientError::Io(_)),
        "{err:?}"
    );
    // A fresh connection finds nobody listening.
    let err = session.client().unwrap_err();
    assert!(matches!(err, ClientError::Connect { .. }), "{err:?}");
}

// --- tools that ask the client back -----------------------------------------

fn name_form() -> Value {
    json!({"type": "object", "properties": {"name": {"type": "string", "minLength": 1}}, "required": ["name"]})
}

/// Runs `f` on an ask's outcome, recording every error other than the
/// `InputRequired` of a 2026-07-28 round, so tests see what the tool saw.
type Faults = Arc<Mutex<Vec<AskError>>>;

fn recorded<T>(faults: &Faults, outcome: Result<T, AskError>) -> Result<T, ToolOutcome> {
    outcome.map_err(|err| {
        if err != AskError::InputRequired {
            faults.lock().unwrap().push(err.clone());
        }
        err.into()
    })
}

/// A host whose tools ask the client back: `greet` elicits a name,
/// `profile` a name and then an age (two rounds in 2026-07-28), `context`
/// samples and lists roots in one ask, `insist` asks something new every
/// run. Also returns the ask errors the tools saw.
fn asking_host() -> (ToolHost, toolhost::ToolSession, Faults) {
    let host = ToolHost::bind(HostConfig::default()).unwrap();
    let faults: Faults = Arc::default();
    let (greet, profile, context, insist) = (
        Arc::clone(&faults),
        Arc::clone(&faults),
        Arc::clone(&faults),
        Arc::clone(&faults),
    );
    let runs = AtomicUsize::new(0);
    let surface = StaticSurface::new()
        .tool(Tool::new("greet", "Greets the user by name."), move |_, ctx| {
            match recorded(&greet, ctx.elicit("What is your name?", name_form())) {
                Ok(Elicitation::Accept(form)) => {
                    ToolOutcome::text(format!("Hello, {}!", form["name"].as_str().unwrap_or("?")))
                }
                Ok(other) => ToolOutcome::declined(format!("no name: {other:?}")),
                Err(outcome) => outcome,
            }
        })
        .unwrap()
        .tool(Tool::new("profile", "Asks a name, then an age."), move |_, ctx| {
            let name = match recorded(&profile, ctx.elicit("Name?", name_form())) {
                Ok(Elicitation::Accept(form)) => form["name"].as_str().unwrap_or("?").to_owned(),
                Ok(_) => return ToolOutcome::declined("no name"),
                Err(outcome) => return outcome,
            };
            let age_form = json!({"type": "object", "properties": {"age": {"type": "integer"}}, "required": ["age"]});
            match recorded(&profile, ctx.elicit(&format!("How old is {name}?"), age_form)) {
                Ok(Elicitation::Accept(form)) => ToolOutcome::text(format!("{name} is {}", form["age"])),
                Ok(_) => ToolOutcome::declined("no age"),
                Err(outcome) => outcome,
            }
        })
        .unwrap()
        .tool(Tool::new("context", "Samples and lists roots at once."), move |_, ctx| {
            let asks = vec![
                InputRequest::sample(json!({"messages": [{"role": "user", "content": {"type": "text", "text": "2+2?"}}], "maxTokens": 5})),
                InputRequest::list_roots(),
            ];
            match recorded(&context, ctx.ask(asks)) {
                Ok(answers) => ToolOutcome::text(format!(
                    "{} in {}",
                    answers[0]["content"]["text"].as_str().unwrap_or("?"),
                    answers[1]["roots"][0]["uri"].as_str().unwrap_or("?")
                )),
                Err(outcome) => outcome,
            }
        })
        .unwrap()
        .tool(Tool::new("insist", "Never satisfied."), move |_, ctx| {
            // A new key every run: no answer ever fits.
            let key = format!("q{}", runs.fetch_add(1, Ordering::SeqCst));
            match recorded(&insist, ctx.ask(vec![InputRequest::elicit("Again?", name_form()).key(key)])) {
                Ok(_) => ToolOutcome::text("satisfied"),
                Err(outcome) => outcome,
            }
        })
        .unwrap();
    let session = host.open_session(surface);
    (host, session, faults)
}

/// A client of `era` declaring `capabilities`. A short timeout: a question
/// left unanswered would otherwise hold the call for a minute.
fn asking_client(session: &toolhost::ToolSession, era: Era, capabilities: Value) -> Client {
    session
        .client_builder()
        .era(era)
        .capabilities(capabilities)
        .timeout(Duration::from_secs(10))
        .connect()
        .unwrap()
}

fn accept(content: Value) -> Result<Value, Refusal> {
    Ok(json!({"action": "accept", "content": content}))
}

#[test]
fn a_tool_that_elicits_a_name_gets_the_handlers_answer_in_both_eras() {
    let (_host, session, faults) = asking_host();
    for (era, runs) in [(Era::Stateful, 1), (Era::Stateless, 2)] {
        let served = session.calls_served();
        let mut client = asking_client(&session, era, json!({"elicitation": {}}));
        let mut asked = Vec::new();
        let result = client
            .call_tool_with(
                "greet",
                json!({}),
                CallOptions::new().on_request(|request| {
                    asked.push(request.clone());
                    accept(json!({"name": "Ada"}))
                }),
            )
            .unwrap();
        assert_eq!(
            (result.text().as_str(), result.is_error),
            ("Hello, Ada!", false),
            "{era:?}"
        );
        assert_eq!(asked.len(), 1, "{era:?}: one question, asked once");
        assert_eq!(asked[0].method, "elicitation/create");
        assert_eq!(asked[0].params["message"], "What is your name?");
        assert_eq!(asked[0].params["requestedSchema"], name_form());
        assert_eq!(
            session.calls_served() - served,
            runs,
            "{era:?}: 2026-07-28 runs the tool again with the answer"
        );
        // The client stays usable for the next call.
        assert_eq!(client.list_tools().unwrap().len(), 4);
    }
    assert!(faults.lock().unwrap().is_empty());

    // Without the capability declared, the host never asks: the handler is
    // not called and the tool sees why.
    for era in ERAS {
        let mut client = asking_client(&session, era, json!({}));
        let mut called = false;
        let result = client
            .call_tool_with(
                "greet",
                json!({}),
                CallOptions::new().on_request(|_| {
                    called = true;
                    accept(json!({"name": "Ada"}))
                }),
            )
            .unwrap();
        assert!(result.is_error && !called, "{era:?}: {result:?}");
        assert!(result
            .text()
            .contains("did not declare the elicitation capability"));
    }
}

#[test]
fn a_tool_that_asks_twice_is_answered_twice_in_both_eras_over_two_rounds_in_2026_07_28() {
    let (_host, session, faults) = asking_host();
    for (era, runs) in [(Era::Stateful, 1), (Era::Stateless, 3)] {
        let served = session.calls_served();
        let mut client = asking_client(&session, era, json!({"elicitation": {}}));
        let mut messages = Vec::new();
        let result = client
            .call_tool_with(
                "profile",
                json!({}),
                CallOptions::new().on_request(|request| {
                    let message = request.params["message"].as_str().unwrap().to_owned();
                    let answer = if message == "Name?" {
                        accept(json!({"name": "Ada"}))
                    } else {
                        accept(json!({"age": 36}))
                    };
                    messages.push(message);
                    answer
                }),
            )
            .unwrap();
        assert_eq!(result.text(), "Ada is 36", "{era:?}: {result:?}");
        assert_eq!(messages, ["Name?", "How old is Ada?"], "{era:?}");
        assert_eq!(session.calls_served() - served, runs, "{era:?}");
    }
    assert!(faults.lock().unwrap().is_empty());
}

#[test]
fn sampling_and_roots_asked_together_are_both_answered_in_both_eras() {
    let (_host, session, faults) = asking_host();
    for era in ERAS {
        let mut client = asking_client(&session, era, json!({"sampling": {}, "roots": {}}));
        let mut methods = Vec::new();
        let result = client
            .call_tool_with(
                "context",
                json!({}),
                CallOptions::new().on_request(|request| {
                    methods.push(request.method.clone());
                    Ok(match request.method.as_str() {
                        "sampling/createMessage" => json!({"role": "assistant", "model": "rig",
                            "content": {"type": "text", "text": "4"}}),
                        _ => json!({"roots": [{"uri": "file:///work", "name": "work"}]}),
                    })
                }),
            )
            .unwrap();
        assert_eq!(result.text(), "4 in file:///work", "{era:?}: {result:?}");
        methods.sort();
        assert_eq!(methods, ["roots/list", "sampling/createMessage"], "{era:?}");
    }
    assert!(faults.lock().unwrap().is_empty());
}

#[test]
fn a_refusal_reaches_a_stateful_tool_as_refused_and_ends_a_stateless_call_before_a_retry() {
    let (_host, session, faults) = asking_host();
    let refuse =
        || CallOptions::new().on_request(|_| Err(Refusal::new("the user closed the dialog")));

    let mut client = asking_client(&session, Era::Stateful, json!({"elicitation": {}}));
    let result = client.call_tool_with("greet", json!({}), refuse()).unwrap();
    assert!(result.is_error, "{result:?}");
    assert!(
        result.text().contains("the user closed the dialog"),
        "{result:?}"
    );
    assert_eq!(
        faults.lock().unwrap().drain(..).collect::<Vec<_>>(),
        [AskError::Refused {
            code: -1,
            message: "the user closed the dialog".into()
        }]
    );

    let served = session.calls_served();
    let mut client = asking_client(&session, Era::Stateless, json!({"elicitation": {}}));
    let err = client
        .call_tool_with("greet", json!({}), refuse())
        .unwrap_err();
    assert!(
        matches!(&err, ClientError::Unanswered { method, cause: None, .. } if method == "elicitation/create"),
        "{err:?}"
    );
    let text = err.to_string();
    assert!(
        text.contains("the user closed the dialog") && text.contains("decline"),
        "{text}"
    );
    assert_eq!(session.calls_served() - served, 1, "no retry was sent");
    assert!(faults.lock().unwrap().is_empty());
}

#[test]
fn a_call_without_a_handler_is_answered_method_not_found_or_fails_saying_so() {
    let (_host, session, faults) = asking_host();
    // Stateful: the question is answered with -32601 at once, and the tool
    // reports it; the call does not wait for a deadline.
    let mut client = asking_client(&session, Era::Stateful, json!({"elicitation": {}}));
    let result = client.call_tool("greet", json!({})).unwrap();
    assert!(result.is_error, "{result:?}");
    let seen = faults.lock().unwrap().drain(..).collect::<Vec<_>>();
    assert!(
        matches!(&seen[..], [AskError::Refused { code: -32601, message }] if message.contains("on_request")),
        "{seen:?}"
    );
    assert!(
        client.call_tool("greet", json!({})).unwrap().is_error,
        "still usable"
    );
    faults.lock().unwrap().clear();

    // 2026-07-28: nothing can carry "no answer", so the call fails, once.
    let served = session.calls_served();
    let mut client = asking_client(&session, Era::Stateless, json!({"elicitation": {}}));
    let err = client.call_tool("greet", json!({})).unwrap_err();
    let text = err.to_string();
    assert!(
        matches!(&err, ClientError::Unanswered { method, .. } if method == "elicitation/create")
            && text.contains("CallOptions::on_request"),
        "{text}"
    );
    assert_eq!(session.calls_served() - served, 1);
    assert!(faults.lock().unwrap().is_empty());
}

#[test]
fn a_tool_that_keeps_asking_is_given_up_after_eight_rounds() {
    let (_host, session, _) = asking_host();
    let served = session.calls_served();
    let mut client = asking_client(&session, Era::Stateless, json!({"elicitation": {}}));
    let mut answered = 0;
    let err = client
        .call_tool_with(
            "insist",
            json!({}),
            CallOptions::new().on_request(|_| {
                answered += 1;
                accept(json!({"name": "Ada"}))
            }),
        )
        .unwrap_err();
    assert!(
        matches!(&err, ClientError::Unanswered { .. }) && err.to_string().contains("8 rounds"),
        "{err}"
    );
    assert_eq!(answered, 8);
    assert_eq!(
        session.calls_served() - served,
        9,
        "the first call and eight retries"
    );
}

// --- a scripted server -------------------------------------------------------

/// One request as the scripted server saw it.
#[derive(Debug)]
struct Seen {
    method: String,
    headers: Vec<(String, String)>,
    body: Value,
}

impl Seen {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    fn id(&self) -> Value {
        self.body["id"].clone()
    }
}

type Reply = Box<dyn FnOnce(&Seen) -> Vec<u8> + Send>;

/// Appended to a reply's bytes: the server hangs up after writing the rest.
const HANG_UP: &[u8] = b"<hang up>";

/// A server that answers each request with the next scripted reply, one
/// connection at a time, and reports what it saw and how many connections
/// it accepted.
struct Scripted {
    url: String,
    done: JoinHandle<(Vec<Seen>, usize)>,
}

fn scripted(replies: Vec<Reply>) -> Scripted {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let done = thread::spawn(move || {
        let mut replies = replies.into_iter();
        let mut seen = Vec::new();
        let mut connections = 0;
        'accept: while replies.len() > 0 {
            let (stream, _) = listener.accept().unwrap();
            connections += 1;
            let mut reader = BufReader::new(stream);
            loop {
                let Some(request) = read_request(&mut reader) else {
                    continue 'accept;
                };
                let Some(reply) = replies.next() else {
                    break 'accept;
                };
                let bytes = reply(&request);
                seen.push(request);
                if bytes.is_empty() {
                    continue 'accept; // hang up without answering
                }
                let (bytes, hang_up) = match bytes.strip_suffix(HANG_UP) {
                    Some(rest) => (rest, true),
                    None => (&bytes[..], false),
                };
                reader.get_mut().write_all(bytes).unwrap();
                if replies.len() == 0 {
                    break 'accept;
                }
                if hang_up {
                    continue 'accept;
                }
            }
        }
        (seen, connections)
    });
    Scripted { url, done }
}

fn read_request(reader: &mut BufReader<TcpStream>) -> Option<Seen> {
    let mut line = String::new();
    if reader.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let method = line.split(' ').next()?.to_owned();
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).ok()?;
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        let (name, value) = line.split_once(':')?;
        headers.push((name.trim().to_owned(), value.trim().to_owned()));
    }
    let length: usize = headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
        .map_or(0, |(_, v)| v.parse().unwrap());
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some(Seen {
        method,
        headers,
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
    })
}

fn json_reply(status: u16, headers: &str, body: &Value) -> Vec<u8> {
    let body = body.to_string();
    format!(
        "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\n{headers}Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// A chunked event stream, one chunk per event.
fn sse_reply(events: &[Value]) -> Vec<u8> {
    let mut chunks: Vec<String> = vec![
        "id: prime-1\r\ndata: \r\n\r\n".into(),
        ": keepalive\r\n\r\n".into(),
    ];
    chunks.extend(
        events
            .iter()
            .map(|e| format!("event: message\r\ndata: {e}\r\n\r\n")),
    );
    sse_stream(&chunks, true)
}

/// A chunked event stream of raw SSE text, one chunk per item; `ended`
/// writes the last chunk, else the stream stops where the items do.
fn sse_stream(chunks: &[String], ended: bool) -> Vec<u8> {
    let mut out =
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
            .to_vec();
    for chunk in chunks {
        out.extend_from_slice(format!("{:x}\r\n{chunk}\r\n", chunk.len()).as_bytes());
    }
    if ended {
        out.extend_from_slice(b"0\r\n\r\n");
    }
    out
}

/// One SSE event with an id, carrying `message`.
fn event(id: &str, message: &Value) -> String {
    format!("id: {id}\nevent: message\ndata: {message}\n\n")
}

fn progress_message(token: &Value, n: u32) -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/progress",
        "params": {"progressToken": token, "progress": n, "total": 3}})
}

fn result(seen: &Seen, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": seen.id(), "result": result})
}

fn ok(body: impl Fn(&Seen) -> Value + Send + 'static) -> Reply {
    Box::new(move |seen| json_reply(200, "", &body(seen)))
}

fn accepted() -> Reply {
    Box::new(|_| b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n".to_vec())
}

fn page(tools: &[&str], next: Option<&str>) -> Reply {
    let tools: Vec<Value> = tools
        .iter()
        .map(|name| json!({"name": name, "inputSchema": {"type": "object"}}))
        .collect();
    let next = next.map(str::to_owned);
    ok(move |seen| {
        let mut page = json!({"tools": tools});
        if let Some(next) = &next {
            page["nextCursor"] = next.clone().into();
        }
        result(seen, page)
    })
}

fn stateless(url: &str) -> Client {
    Client::builder(url).era(Era::Stateless).connect().unwrap()
}

#[test]
fn list_tools_follows_next_cursor_until_the_last_page() {
    let server = scripted(vec![
        page(&["a", "b"], Some("p2")),
        page(&["c"], Some("p3")),
        page(&["d"], None),
    ]);
    let tools = stateless(&server.url).list_tools().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
    assert_eq!(names, ["a", "b", "c", "d"]);
    let (seen, connections) = server.done.join().unwrap();
    assert_eq!(connections, 1, "one keep-alive connection for every page");
    let cursors: Vec<&Value> = seen.iter().map(|s| &s.body["params"]["cursor"]).collect();
    assert_eq!(cursors, [&Value::Null, &json!("p2"), &json!("p3")]);
    for request in &seen {
        schema::assert_valid("2026-07-28", "ListToolsRequest", &request.body);
    }
}

#[test]
fn a_repeated_cursor_is_malformed_instead_of_looping() {
    let server = scripted(vec![page(&["a"], Some("same")), page(&["b"], Some("same"))]);
    let err = stateless(&server.url).list_tools().unwrap_err();
    assert!(
        matches!(err, ClientError::Malformed { .. }) && err.to_string().contains("twice"),
        "{err}"
    );
    server.done.join().unwrap();
}

#[test]
fn stateless_requests_carry_the_headers_and_meta_the_revision_requires() {
    let server = scripted(vec![ok(|seen| result(seen, json!({"content": []})))]);
    let mut client = Client::builder(&server.url)
        .era(Era::Stateless)
        .bearer("secret")
        .header("X-Trace", "t1")
        .client_info("rig", "9")
        .connect()
        .unwrap();
    client.call_tool("grüße", json!({"n": 1})).unwrap();
    let (seen, _) = server.done.join().unwrap();
    let call = &seen[0];
    schema::assert_valid("2026-07-28", "CallToolRequest", &call.body);
    assert_eq!(call.method, "POST");
    assert_eq!(call.header("MCP-Protocol-Version"), Some("2026-07-28"));
    assert_eq!(call.header("Mcp-Method"), Some("tools/call"));
    assert_eq!(call.header("Mcp-Name"), Some("=?base64?Z3LDvMOfZQ==?="));
    assert_eq!(call.header("Authorization"), Some("Bearer secret"));
    assert_eq!(call.header("X-Trace"), Some("t1"));
    assert_eq!(
        call.header("Accept"),
        Some("application/json, text/event-stream")
    );
    assert_eq!(call.header("Mcp-Session-Id"), None);
    let meta = &call.body["params"]["_meta"];
    assert_eq!(
        meta["io.modelcontextprotocol/clientInfo"],
        json!({"name": "rig", "version": "9"})
    );
    assert_eq!(
        meta["io.modelcontextprotocol/clientCapabilities"],
        json!({})
    );
    assert_eq!(call.body["params"]["arguments"], json!({"n": 1}));
}

#[test]
fn auto_falls_back_to_initialize_when_discover_is_refused_and_then_speaks_stateful() {
    let server = scripted(vec![
        Box::new(|seen: &Seen| {
            let error = json!({"jsonrpc": "2.0", "id": seen.id(), "error": {"code": -32601, "message": "Method not found"}});
            json_reply(404, "", &error)
        }),
        Box::new(|seen: &Seen| {
            let init = result(
                seen,
                json!({
                    "protocolVersion": "2025-06-18",
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "legacy", "version": "1"},
                    "instructions": "Be kind.",
                }),
            );
            json_reply(200, "Mcp-Session-Id: s-42\r\n", &init)
        }),
        accepted(),
        ok(|seen| result(seen, json!({}))),
        Box::new(|seen: &Seen| {
            sse_reply(&[result(
                seen,
                json!({"content": [{"type": "text", "text": "done"}]}),
            )])
        }),
        accepted(),
    ]);
    let mut client = Client::connect(&server.url).unwrap();
    assert_eq!(client.era(), Era::Stateful);
    assert_eq!(client.revision(), Revision::V2025_06_18);
    assert_eq!(client.session_id(), Some("s-42"));
    assert_eq!(client.instructions(), Some("Be kind."));
    assert_eq!(client.server_info().unwrap().name, "legacy");
    client.ping().unwrap();
    assert_eq!(client.call_tool("x", Value::Null).unwrap().text(), "done");
    client.close().unwrap();

    let (seen, _) = server.done.join().unwrap();
    let methods: Vec<&str> = seen
        .iter()
        .map(|s| s.body["method"].as_str().unwrap_or(&s.method))
        .collect();
    assert_eq!(
        methods,
        [
            "server/discover",
            "initialize",
            "notifications/initialized",
            "ping",
            "tools/call",
            "DELETE"
        ]
    );
    schema::assert_valid("2026-07-28", "DiscoverRequest", &seen[0].body);
    schema::assert_valid("2025-11-25", "InitializeRequest", &seen[1].body);
    assert_eq!(seen[1].body["params"]["protocolVersion"], "2025-11-25");
    assert_eq!(seen[1].header("Mcp-Session-Id"), None);
    schema::assert_valid("2025-06-18", "InitializedNotification", &seen[2].body);
    schema::assert_valid("2025-06-18", "PingRequest", &seen[3].body);
    schema::assert_valid("2025-06-18", "CallToolRequest", &seen[4].body);
    assert!(seen[4].body["params"].get("arguments").is_none());
    for later in &seen[2..] {
        assert_eq!(
            later.header("Mcp-Session-Id"),
            Some("s-42"),
            "{}",
            later.method
        );
        assert_eq!(later.header("MCP-Protocol-Version"), Some("2025-06-18"));
        assert_eq!(later.header("Mcp-Method"), None);
    }
}

#[test]
fn an_event_stream_delivers_progress_then_the_result_and_keeps_the_connection() {
    let server = scripted(vec![
        Box::new(|seen: &Seen| {
            let token = seen.body["params"]["_meta"]["progressToken"].clone();
            let progress = |n: u32, token: &Value| {
                json!({"jsonrpc": "2.0", "method": "notifications/progress",
                "params": {"progressToken": token, "progress": n, "total": 3, "message": format!("step {n}")}})
            };
            sse_reply(&[
                progress(1, &token),
                json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": "other", "progress": 9}}),
                json!({"jsonrpc": "2.0", "id": 99, "method": "ping"}),
                json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "x"}}),
                progress(2, &token),
                progress(3, &token),
                result(
                    seen,
                    json!({"content": [{"type": "text", "text": "counted"}], "resultType": "complete"}),
                ),
            ])
        }),
        ok(|seen| {
            result(
                seen,
                json!({"content": [{"type": "text", "text": "second"}]}),
            )
        }),
    ]);
    let mut client = stateless(&server.url);
    let mut reports = Vec::new();
    let counted = client
        .call_tool_with(
            "count",
            json!({}),
            CallOptions::new()
                .on_progress(|p| reports.push((p.progress, p.total, p.message.clone()))),
        )
        .unwrap();
    assert_eq!(counted.text(), "counted");
    assert_eq!(
        reports,
        [1.0, 2.0, 3.0].map(|n| (n, Some(3.0), Some(format!("step {n}"))))
    );
    assert_eq!(
        client.call_tool("again", json!({})).unwrap().text(),
        "second"
    );
    let (seen, connections) = server.done.join().unwrap();
    assert_eq!(
        connections, 1,
        "the stream ended cleanly, so the connection was reused"
    );
    assert_eq!(
        seen[0].body["params"]["_meta"]["progressToken"],
        seen[0].id()
    );
    assert!(seen[1].body["params"]["_meta"]
        .get("progressToken")
        .is_none());
}

#[test]
fn a_stream_that_ends_without_the_response_is_malformed() {
    let server = scripted(vec![Box::new(|_: &Seen| {
        sse_reply(&[json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {}})])
    })]);
    let err = stateless(&server.url)
        .call_tool("x", json!({}))
        .unwrap_err();
    assert!(
        err.to_string().contains("ended before the response"),
        "{err}"
    );
    server.done.join().unwrap();
}

#[test]
fn an_http_error_without_json_rpc_reports_status_and_body() {
    let server = scripted(vec![Box::new(|_: &Seen| {
        b"HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain\r\nContent-Length: 11\r\n\r\nupstream down".to_vec()
    })]);
    let err = stateless(&server.url)
        .call_tool("x", json!({}))
        .unwrap_err();
    assert!(
        matches!(&err, ClientError::Http { status: 502, body } if body == "upstream do"),
        "{err:?}"
    );
    server.done.join().unwrap();
}

#[test]
fn a_server_hanging_up_mid_answer_is_an_io_error_and_the_next_call_reconnects() {
    let server = scripted(vec![
        Box::new(|_: &Seen| {
            [
                &b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{\"jsonrpc\""[..],
                HANG_UP,
            ]
            .concat()
        }),
        Box::new(|_: &Seen| Vec::new()),
        ok(|seen| result(seen, json!({"content": []}))),
    ]);
    let mut client = stateless(&server.url);
    let first = client.call_tool("x", json!({}));
    assert!(matches!(first, Err(ClientError::Io(_))), "{first:?}");
    let second = client.call_tool("x", json!({}));
    assert!(matches!(second, Err(ClientError::Io(_))), "{second:?}");
    assert!(client.call_tool("x", json!({})).is_ok());
    let (_, connections) = server.done.join().unwrap();
    assert_eq!(connections, 3);
}

#[test]
fn a_connection_the_server_closed_while_idle_is_replaced_before_the_next_request() {
    let server = scripted(vec![
        Box::new(|seen: &Seen| {
            // No `Connection: close`: the server just hangs up afterwards.
            let body = result(seen, json!({"content": []}));
            [json_reply(200, "", &body), HANG_UP.to_vec()].concat()
        }),
        ok(|seen| {
            result(
                seen,
                json!({"content": [{"type": "text", "text": "fresh"}]}),
            )
        }),
    ]);
    let mut client = stateless(&server.url);
    client.call_tool("x", json!({})).unwrap();
    // Idle past the client's check threshold (1 s): the closed connection is
    // noticed before a request is written to it.
    thread::sleep(Duration::from_millis(1100));
    assert_eq!(client.call_tool("x", json!({})).unwrap().text(), "fresh");
    let (seen, connections) = server.done.join().unwrap();
    assert_eq!((seen.len(), connections), (2, 2));
}

#[test]
fn a_chunked_json_answer_and_a_close_delimited_one_are_both_read() {
    let server = scripted(vec![
        Box::new(|seen: &Seen| {
            let body = result(
                seen,
                json!({"content": [{"type": "text", "text": "chunked"}]}),
            )
            .to_string();
            let (a, b) = body.split_at(body.len() / 2);
            format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n{a}\r\n{:x}\r\n{b}\r\n0\r\n\r\n",
                a.len(),
                b.len()
            )
            .into_bytes()
        }),
        Box::new(|seen: &Seen| {
            let body = result(
                seen,
                json!({"content": [{"type": "text", "text": "closed"}]}),
            );
            format!("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n{body}").into_bytes()
        }),
    ]);
    let mut client = stateless(&server.url);
    assert_eq!(client.call_tool("x", json!({})).unwrap().text(), "chunked");
    // The scripted server closes the connection after its last reply.
    assert_eq!(client.call_tool("x", json!({})).unwrap().text(), "closed");
    server.done.join().unwrap();
}

// --- resuming a stream that ended before its response ------------------------

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

/// The `initialize` answer (session id `s-1`) and the acknowledgement of
/// `notifications/initialized` of a stateful server at `revision`.
fn handshake(revision: &'static str) -> Vec<Reply> {
    vec![
        Box::new(move |seen: &Seen| {
            let init = result(
                seen,
                json!({"protocolVersion": revision, "capabilities": {"tools": {}},
                    "serverInfo": {"name": "scripted", "version": "1"}}),
            );
            json_reply(200, "Mcp-Session-Id: s-1\r\n", &init)
        }),
        accepted(),
    ]
}

fn stateful(url: &str) -> Client {
    Client::builder(url)
        .era(Era::Stateful)
        .bearer("secret")
        .connect()
        .unwrap()
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

// --- answering a scripted server's questions --------------------------------

#[test]
fn an_input_required_round_is_retried_as_the_same_call_with_the_answers_and_the_state() {
    let question = json!({"method": "elicitation/create", "params": {"message": "Name?",
        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}}});
    let round = json!({"resultType": "input_required", "requestState": "state-1",
        "inputRequests": {"who": question.clone()}});
    schema::assert_valid("2026-07-28", "InputRequiredResult", &round);
    let server = scripted(vec![
        ok(move |seen| result(seen, round.clone())),
        ok(|seen| {
            result(
                seen,
                json!({"resultType": "complete", "content": [{"type": "text", "text": "done"}]}),
            )
        }),
    ]);
    let mut asked = Vec::new();
    let outcome = Client::builder(&server.url)
        .era(Era::Stateless)
        .capabilities(json!({"elicitation": {}}))
        .connect()
        .unwrap()
        .call_tool_with(
            "form",
            json!({"n": 1}),
            CallOptions::new().on_request(|request| {
                asked.push(request.clone());
                Ok(json!({"action": "accept", "content": {"name": "Ada"}}))
            }),
        );
    assert_eq!(outcome.unwrap().text(), "done");
    assert_eq!(asked.len(), 1);
    assert_eq!(
        (asked[0].method.as_str(), &asked[0].params),
        ("elicitation/create", &question["params"])
    );

    let (seen, _) = server.done.join().unwrap();
    let (first, retry) = (&seen[0].body, &seen[1].body);
    schema::assert_valid("2026-07-28", "CallToolRequest", retry);
    assert_ne!(first["id"], retry["id"], "a retry is a new request");
    assert_eq!(retry["params"]["name"], "form");
    assert_eq!(retry["params"]["arguments"], json!({"n": 1}));
    assert_eq!(retry["params"]["requestState"], "state-1");
    assert_eq!(
        retry["params"]["inputResponses"],
        json!({"who": {"action": "accept", "content": {"name": "Ada"}}})
    );
    assert_eq!(
        retry["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"],
        json!({"elicitation": {}})
    );
    assert!(first["params"].get("inputResponses").is_none());
    assert_eq!(seen[1].header("Mcp-Method"), Some("tools/call"));
    assert_eq!(seen[1].header("Mcp-Name"), Some("form"));
}

/// A stateful `tools/call` stream that asks `question` as request
/// `ask-1`, then drops; the call's result comes when the client resumes
/// after event `5-1`.
fn asking_stream(question: Value) -> Vec<Reply> {
    let mut script = handshake("2025-11-25");
    script.push(Box::new(move |_: &Seen| {
        let mut request = question.clone();
        request["jsonrpc"] = json!("2.0");
        request["id"] = json!("ask-1");
        let bytes = sse_stream(
            &[
                "id: 5-0\nretry: 0\ndata:\n\n".into(),
                event("5-1", &request),
            ],
            false,
        );
        [bytes, HANG_UP.to_vec()].concat()
    }));
    // The answer, on a connection of its own, which this one-connection
    // server then closes to be free for the resume.
    script.push(Box::new(|_: &Seen| {
        let accepted = b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
        [&accepted[..], HANG_UP].concat()
    }));
    script.push(Box::new(|_: &Seen| {
        sse_stream(
            &[event(
                "5-2",
                &json!({"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": "answered"}]}}),
            )],
            true,
        )
    }));
    script
}

#[test]
fn a_question_on_a_stateful_stream_is_answered_in_the_session_as_a_valid_response() {
    let question = json!({"method": "roots/list", "params": {}});
    let server = scripted(asking_stream(question));
    let mut asked = Vec::new();
    let outcome = stateful(&server.url).call_tool_with(
        "x",
        json!({}),
        CallOptions::new().on_request(|request| {
            asked.push(request.method.clone());
            Ok(json!({"roots": [{"uri": "file:///work"}]}))
        }),
    );
    assert_eq!(outcome.unwrap().text(), "answered");
    assert_eq!(asked, ["roots/list"]);

    let (seen, connections) = server.done.join().unwrap();
    assert_eq!(connections, 3, "the call, the answer, the resume");
    let answer = &seen[3];
    assert_eq!(answer.method, "POST");
    schema::assert_valid("2025-11-25", "JSONRPCResponse", &answer.body);
    schema::assert_valid("2025-11-25", "ListRootsResult", &answer.body["result"]);
    assert_eq!(answer.body["id"], "ask-1", "the server's id, as sent");
    assert_eq!(answer.header("Mcp-Session-Id"), Some("s-1"));
    assert_eq!(answer.header("MCP-Protocol-Version"), Some("2025-11-25"));
    assert_eq!(answer.header("Authorization"), Some("Bearer secret"));
    assert_eq!(seen[4].header("Last-Event-ID"), Some("5-1"));
}

#[test]
fn a_refused_or_unhandled_stateful_question_is_answered_with_a_json_rpc_error() {
    for (options, code) in [
        (
            CallOptions::new().on_request(|_| Err(Refusal::new("no sampling here"))),
            -1,
        ),
        (CallOptions::new(), -32601),
    ] {
        let question =
            json!({"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 1}});
        let server = scripted(asking_stream(question));
        let outcome = stateful(&server.url).call_tool_with("x", json!({}), options);
        assert_eq!(outcome.unwrap().text(), "answered");
        let (seen, _) = server.done.join().unwrap();
        let answer = &seen[3].body;
        schema::assert_valid("2025-11-25", schema::error_definition("2025-11-25"), answer);
        assert_eq!(
            (&answer["id"], &answer["error"]["code"]),
            (&json!("ask-1"), &json!(code))
        );
    }
}

// --- the official Python SDK's server ----------------------------------------
//
// Run by `bash harness/interop/python_server/run.sh`, which starts
// harness/interop/python_server/server.py (mcp==2.3.0) and exports its URL and
// authorization; ignored in a plain `cargo test`.

fn python_client(era: Era) -> Client {
    let (url, auth) = toolhost_tests::python_sdk_server();
    Client::builder(&url)
        .header("Authorization", &auth)
        .era(era)
        .client_info("toolhost-client-interop", "1")
        .connect()
        .unwrap_or_else(|err| panic!("{era:?}: {err}"))
}

#[test]
#[ignore = "needs the Python SDK server: bash harness/interop/python_server/run.sh"]
fn the_client_lists_and_calls_the_python_sdk_server_tools_in_both_eras() {
    for era in ERAS {
        let mut client = python_client(era);
        assert_eq!(client.era(), era);
        let tools = client.list_tools().unwrap();
        let mut names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
        names.sort_unstable();
        assert_eq!(
            names,
            [
                "add",
                "cancelled_waits",
                "count",
                "count_reconnect",
                "echo",
                "fail",
                "wait"
            ],
            "{era:?}"
        );
        let add = tools.iter().find(|t| t.name() == "add").unwrap();
        assert_eq!(add.input_schema_json()["required"], json!(["a", "b"]));
        assert!(add.output_schema_json().is_some());

        let echoed = client.call_tool("echo", json!({"text": "hi"})).unwrap();
        assert_eq!(echoed.text(), "hi", "{era:?}");
        assert!(!echoed.is_error);
        let added = client.call_tool("add", json!({"a": 2, "b": 3})).unwrap();
        assert_eq!(
            added.structured_content,
            Some(json!({"sum": 5.0})),
            "{era:?}"
        );

        let mut reports = Vec::new();
        let counted = client
            .call_tool_with(
                "count",
                json!({"steps": 3}),
                CallOptions::new().on_progress(|p| reports.push((p.progress, p.total))),
            )
            .unwrap();
        assert_eq!(counted.text(), "counted 3");
        assert_eq!(
            reports,
            [(1.0, Some(3.0)), (2.0, Some(3.0)), (3.0, Some(3.0))],
            "{era:?}"
        );

        let failed = client
            .call_tool("fail", json!({"why": "on purpose"}))
            .unwrap();
        assert!(failed.is_error, "{era:?}");
        assert!(
            failed.text().contains("on purpose"),
            "{era:?}: {}",
            failed.text()
        );

        if era == Era::Stateful {
            assert!(client.session_id().is_some());
            assert_eq!(client.server_info().unwrap().name, "python-sdk-server");
            client.ping().unwrap();
        }
        client.close().unwrap();
    }
}

#[test]
#[ignore = "needs the Python SDK server: bash harness/interop/python_server/run.sh"]
fn python_sdk_server_closes_a_stream_mid_call_and_the_client_resumes_it() {
    let mut client = python_client(Era::Stateful);
    assert_eq!(client.revision(), Revision::V2025_11_25);
    let mut steps = Vec::new();
    let counted = client
        .call_tool_with(
            "count_reconnect",
            json!({"steps": 3}),
            CallOptions::new().on_progress(|p| steps.push(p.progress)),
        )
        .unwrap();
    // The server says it closed the stream; every step still arrived once.
    assert_eq!(counted.text(), "counted 3 after closing the stream");
    assert_eq!(steps, [1.0, 2.0, 3.0]);
    client.ping().unwrap();
    client.close().unwrap();
}

#[test]
#[ignore = "needs the Python SDK server: bash harness/interop/python_server/run.sh"]
fn auto_settles_on_the_stateless_era_against_the_python_sdk_server() {
    let mut client = python_client(Era::Auto);
    assert_eq!(client.era(), Era::Stateless);
    assert_eq!(client.server_info().unwrap().name, "python-sdk-server");
    assert_eq!(
        client
            .call_tool("echo", json!({"text": "auto"}))
            .unwrap()
            .text(),
        "auto"
    );
}

#[test]
#[ignore = "needs the Python SDK server: bash harness/interop/python_server/run.sh"]
fn python_sdk_server_refuses_a_wrong_bearer_with_its_challenge() {
    let (url, _) = toolhost_tests::python_sdk_server();
    for era in [Era::Stateful, Era::Stateless, Era::Auto] {
        let err = Client::builder(&url)
            .bearer("wrong")
            .era(era)
            .connect()
            .and_then(|mut c| c.list_tools())
            .unwrap_err();
        assert!(
            matches!(&err, ClientError::Unauthorized { www_authenticate: Some(c), .. } if c.starts_with("Bearer")),
            "{era:?}: {err:?}"
        );
    }
}
