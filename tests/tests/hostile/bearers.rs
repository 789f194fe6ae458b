//! Bearers the host must not tell apart, a capability URL with another
//! bearer beside it, and a flood of refused bearers in the event hook.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use serde_json::json;
use toolhost::{Event, HostConfig, StaticSurface, ToolHost};
use toolhost_tests::{Conn, EventLog, JSON_HEADERS, STATELESS};

use crate::{counted, echo_surface, post_with, stateless_body, visible};

#[test]
fn unknown_revoked_and_wrong_secret_bearers_get_byte_identical_refusals_on_every_route() {
    let host = ToolHost::bind(HostConfig::default().capability_urls(true)).unwrap();
    let hits = Arc::new(AtomicUsize::new(0));
    let live = host.open_session(echo_surface(&hits));
    let gone = host.open_session(StaticSurface::new());
    let revoked = gone.authorization();
    drop(gone);
    let token = |auth: &str| auth.trim_start_matches("Bearer ").to_owned();
    let live_token = token(&live.authorization());
    // The live session's locator with another secret, and a locator no one holds.
    let wrong_secret = format!("{}{}", &live_token[..live_token.len() - 64], "0".repeat(64));
    let unknown = format!("th_{}", "7".repeat(80));
    let credentials = [token(&revoked), wrong_secret, unknown];

    let stateful = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{}}}"#;
    let stateless = stateless_body(1, "tools/call", json!({"name": "echo", "arguments": {}}));
    type Route<'a> = (&'a str, bool, Vec<(&'a str, &'a str)>, &'a [u8]);
    let routes: [Route; 5] = [
        ("POST", false, JSON_HEADERS.to_vec(), stateful),
        (
            "POST",
            false,
            [
                JSON_HEADERS.as_slice(),
                &[
                    ("MCP-Protocol-Version", STATELESS),
                    ("Mcp-Method", "tools/call"),
                    ("Mcp-Name", "echo"),
                ],
            ]
            .concat(),
            &stateless,
        ),
        (
            "GET",
            false,
            vec![("Accept", "text/event-stream"), ("Mcp-Session-Id", "x")],
            b"",
        ),
        ("DELETE", false, vec![("Mcp-Session-Id", "x")], b""),
        ("POST", true, JSON_HEADERS.to_vec(), stateful),
    ];
    for (method, in_path, headers, body) in &routes {
        let mut refusals = Vec::new();
        for credential in &credentials {
            let mut conn = Conn::open(host.local_addr()).unwrap();
            let bearer = format!("Bearer {credential}");
            let mut all = headers.clone();
            let path = if *in_path {
                format!("/cap/{credential}/mcp")
            } else {
                all.push(("Authorization", &bearer));
                "/mcp".to_owned()
            };
            let reply = conn.request(method, &path, &all, body).unwrap();
            assert_eq!(reply.status, 401, "{method} {path}");
            refusals.push(visible(&reply));
        }
        assert!(
            refusals.windows(2).all(|w| w[0] == w[1]),
            "{method} (capability path: {in_path}): {refusals:#?}"
        );
    }
    assert_eq!(hits.load(Ordering::SeqCst), 0);
}

#[test]
fn a_capability_url_with_another_bearer_in_its_header_is_refused() {
    let (host, session, hits) = counted(HostConfig::default().workers(2).capability_urls(true));
    let url = session.capability_url().unwrap();
    let path = &url[url.find("/cap/").unwrap()..];
    let other = host.open_session(StaticSurface::new());
    let mut conn = Conn::open(host.local_addr()).unwrap();
    let init = br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}"#;
    let mut headers = JSON_HEADERS.to_vec();
    let other_auth = other.authorization();
    headers.push(("Authorization", &other_auth));
    assert_eq!(
        conn.request("POST", path, &headers, init).unwrap().status,
        400
    );
    // The same bearer in both places is no conflict.
    let own = session.authorization();
    let mut headers = JSON_HEADERS.to_vec();
    headers.push(("Authorization", &own));
    assert_eq!(
        conn.request("POST", path, &headers, init).unwrap().status,
        200
    );
    assert_eq!(hits.load(Ordering::SeqCst), 0);
}

#[test]
fn a_flood_of_refused_bearers_is_reported_ten_a_second_and_the_rest_counted() {
    let events = EventLog::new();
    let (host, _session, _) = counted(events.hook(HostConfig::default().workers(2)));
    let floods = 200;
    for _ in 0..floods {
        assert_eq!(post_with(&host, &[]), 401);
    }
    let reported = || {
        events
            .pick(|e| matches!(e, Event::AuthRefused { .. }).then_some(()))
            .len()
    };
    let counted = || {
        events
            .pick(|e| match e {
                Event::AuthRefusalsSuppressed { count } => Some(*count),
                _ => None,
            })
            .iter()
            .sum::<u64>()
    };
    // Every refusal is accounted for, once the last second's count is out...
    toolhost_tests::wait_for("the suppressed count", || {
        reported() as u64 + counted() == floods
    });
    // ...and far fewer events than refusals were raised.
    assert!(reported() < floods as usize / 2, "{} reported", reported());
    assert!(counted() > 0);
}
