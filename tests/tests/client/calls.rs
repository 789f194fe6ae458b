//! Listing and calling tools through a real host in both eras: results and
//! errors, the stateful lifecycle, the bearer and the declared capabilities.

use std::sync::atomic::Ordering;

use serde_json::json;
use toolhost::client::{Client, ClientError, Era};
use toolhost::{Content, HostConfig, Revision, StaticSurface, ToolHost};
use toolhost_tests::{Conn, EventLog, JSON_HEADERS};

use crate::{client, host_with_tools, ERAS};

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
