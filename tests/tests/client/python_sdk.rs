//! The client against the official Python SDK's server.
//!
//! Run by `bash tests/interop/python_server/run.sh`, which starts
//! tests/interop/python_server/server.py (mcp==2.3.0) and exports its URL and
//! authorization, and the command line that serves the same tools over
//! stdio; ignored in a plain `cargo test`.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use serde_json::json;
use toolhost::client::{CallOptions, Client, ClientError, Era, McpClient, StdioServer};
use toolhost::Revision;
use toolhost_tests::wait_for;

use crate::ERAS;

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
#[ignore = "needs the Python SDK server: bash tests/interop/python_server/run.sh"]
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
                "ping_alone",
                "ping_on_call",
                "toggle_tool",
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
#[ignore = "needs the Python SDK server: bash tests/interop/python_server/run.sh"]
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
#[ignore = "needs the Python SDK server: bash tests/interop/python_server/run.sh"]
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
#[ignore = "needs the Python SDK server: bash tests/interop/python_server/run.sh"]
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

/// A count of the list changes a client heard, and the callback that counts.
fn heard() -> (Arc<AtomicUsize>, impl Fn() + Send + Sync + 'static) {
    let changes = Arc::new(AtomicUsize::new(0));
    let count = Arc::clone(&changes);
    (changes, move || {
        count.fetch_add(1, Ordering::SeqCst);
    })
}

/// What both transports must do alike against the Python SDK server: a
/// ping on the call's stream and one about no call are answered and both
/// calls succeed; a list change sent on the call's stream and one sent
/// alone both reach `changes` (the client's `on_tools_changed`), and the
/// listing follows them.
fn check_alike(client: &mut impl McpClient, changes: &AtomicUsize, context: &str) {
    let on_call = client.call_tool("ping_on_call", json!({})).unwrap();
    assert!(!on_call.is_error, "{context}: {}", on_call.text());
    assert_eq!(on_call.text(), "pinged on the call's stream", "{context}");
    let alone = client
        .call_tool("ping_alone", json!({"seconds": 10}))
        .unwrap();
    assert!(!alone.is_error, "{context}: {}", alone.text());
    assert_eq!(alone.text(), "pinged alone", "{context}");

    let toggled = |client: &mut dyn McpClient| {
        let tools = client.list_tools().unwrap();
        tools.iter().any(|t| t.name() == "toggled")
    };
    assert!(!toggled(client), "{context}");
    assert_eq!(changes.load(Ordering::SeqCst), 0, "{context}");
    let added = client.call_tool("toggle_tool", json!({"on_call": true}));
    assert_eq!(added.unwrap().text(), "added", "{context}");
    assert!(toggled(client), "{context}");
    // Sent on the call's stream before its result: heard by the time it returns.
    assert_eq!(changes.load(Ordering::SeqCst), 1, "{context}");
    let removed = client.call_tool("toggle_tool", json!({"on_call": false}));
    assert_eq!(removed.unwrap().text(), "removed", "{context}");
    wait_for(&format!("{context}: the list change sent alone"), || {
        changes.load(Ordering::SeqCst) == 2
    });
    assert!(!toggled(client), "{context}");
}

#[test]
#[ignore = "needs the Python SDK server: bash tests/interop/python_server/run.sh"]
fn python_sdk_server_pings_and_changes_its_list_mid_call_and_http_and_stdio_clients_behave_alike() {
    let (url, auth) = toolhost_tests::python_sdk_server();
    let (changes, count) = heard();
    let mut http = Client::builder(&url)
        .header("Authorization", &auth)
        .era(Era::Stateful)
        .standalone_stream(true)
        .on_tools_changed(count)
        .connect()
        .unwrap();
    assert_eq!(http.revision(), Revision::V2025_11_25);
    assert!(http.holds_standalone_stream());
    check_alike(&mut http, &changes, "HTTP");
    assert!(http.holds_standalone_stream());
    http.close().unwrap();

    let command = toolhost_tests::python_sdk_stdio_server();
    let (changes, count) = heard();
    let mut stdio = StdioServer::new(&command[0])
        .args(&command[1..])
        .on_tools_changed(count)
        .connect()
        .unwrap_or_else(|err| panic!("{command:?}: {err}"));
    assert_eq!(stdio.revision(), Revision::V2025_11_25);
    check_alike(&mut stdio, &changes, "stdio");
}

#[test]
#[ignore = "needs the Python SDK server: bash tests/interop/python_server/run.sh"]
fn python_sdk_server_pings_alone_into_the_void_and_announces_alone_unheard_without_the_standalone_stream(
) {
    let (url, auth) = toolhost_tests::python_sdk_server();
    let (changes, count) = heard();
    let mut client = Client::builder(&url)
        .header("Authorization", &auth)
        .era(Era::Stateful)
        .on_tools_changed(count)
        .connect()
        .unwrap();
    assert!(!client.holds_standalone_stream());
    // On the call's stream all is heard …
    let on_call = client.call_tool("ping_on_call", json!({})).unwrap();
    assert_eq!(on_call.text(), "pinged on the call's stream");
    // … and nothing carries a ping sent alone: the tool waits in vain,
    // and the SDK fails the call with the ping's timeout.
    let alone = client
        .call_tool("ping_alone", json!({"seconds": 0.5}))
        .unwrap_err();
    assert!(
        matches!(&alone, ClientError::Rpc { message, .. } if message.contains("timed out")),
        "{alone:?}"
    );
    let added = client.call_tool("toggle_tool", json!({"on_call": false}));
    assert_eq!(added.unwrap().text(), "added");
    let removed = client.call_tool("toggle_tool", json!({"on_call": true}));
    assert_eq!(removed.unwrap().text(), "removed");
    assert_eq!(changes.load(Ordering::SeqCst), 1, "only the call's own");
    client.close().unwrap();
}
