//! The client against the official Python SDK's server.
//!
//! Run by `bash tests/interop/python_server/run.sh`, which starts
//! tests/interop/python_server/server.py (mcp==2.3.0) and exports its URL and
//! authorization; ignored in a plain `cargo test`.

use serde_json::json;
use toolhost::client::{CallOptions, Client, ClientError, Era};
use toolhost::Revision;

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
