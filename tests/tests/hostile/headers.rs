//! Headers: media types, identity headers sent twice, floods, origins, and
//! the strict parsing of hosts, ports and origins.

use std::sync::atomic::Ordering;
use std::time::Instant;

use serde_json::Value;
use toolhost::HostConfig;
use toolhost_tests::{Conn, JSON_HEADERS};

use crate::{
    counted, first_status, only_a_fresh_call_reaches_the_handler, post_with, raw_exchange,
};

#[test]
fn media_types_are_checked_after_the_bearer_with_precise_statuses() {
    let (host, session, _) = counted(HostConfig::default().workers(2));
    let auth = session.authorization();
    let a = ("Authorization", auth.as_str());
    assert_eq!(post_with(&host, &[a, ("Content-Type", "text/plain")]), 415);
    assert_eq!(
        post_with(
            &host,
            &[a, ("Content-Type", "application/x-www-form-urlencoded")]
        ),
        415
    );
    assert_eq!(post_with(&host, &[a, ("Accept", "text/html")]), 406);
    assert_eq!(
        post_with(&host, &[("Content-Type", "text/plain")]),
        401,
        "no bearer: nothing else is told"
    );
    for fine in [
        vec![
            a,
            ("Content-Type", "application/json; charset=utf-8"),
            ("Accept", "application/json"),
        ],
        vec![a, ("Accept", "text/event-stream")],
        vec![a, ("Accept", "*/*")],
        vec![a, ("Accept", "application/*")],
        vec![a],
    ] {
        assert_eq!(post_with(&host, &fine), 200, "{fine:?}");
    }
}

#[test]
fn duplicate_identity_headers_and_header_floods_are_refused() {
    let (host, session, hits) = counted(HostConfig::default().workers(2));
    let auth = session.authorization();
    let a = ("Authorization", auth.as_str());
    assert_eq!(post_with(&host, &[a, a]), 400);
    let port = host.local_addr().port();
    let host_header = format!("127.0.0.1:{port}");
    assert_eq!(
        post_with(
            &host,
            &[a, ("Host", &host_header), ("Host", "evil.example")]
        ),
        400
    );
    let many: Vec<(String, String)> = (0..150)
        .map(|i| (format!("X-Filler-{i}"), "x".into()))
        .collect();
    let mut flood: Vec<(&str, &str)> = many.iter().map(|(n, v)| (n.as_str(), v.as_str())).collect();
    flood.push(a);
    assert_eq!(post_with(&host, &flood), 431);
    let big = "y".repeat(40 << 10);
    assert_eq!(post_with(&host, &[a, ("X-Big", &big)]), 431);
    // The host is unharmed.
    only_a_fresh_call_reaches_the_handler(&host, &session, &hits);
}

#[test]
fn a_host_or_authorization_header_sent_twice_is_refused_in_any_order_and_spelling() {
    let (host, session, hits) = counted(HostConfig::default().workers(2));
    let auth = session.authorization();
    let port = host.local_addr().port();
    let good = format!("127.0.0.1:{port}");
    let evil = format!("evil.test:{port}");
    let unknown = format!("Bearer th_{}", "0".repeat(80));
    let body = br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}"#;
    let cases: [[(&str, &str); 2]; 6] = [
        [("Host", &evil), ("Host", &good)],
        [("Host", &good), ("host", &good)],
        [("Authorization", &unknown), ("Authorization", &auth)],
        [("Authorization", &auth), ("AUTHORIZATION", &auth)],
        [("Authorization", &auth), ("Authorization", "")],
        [("Mcp-Session-Id", "a"), ("mcp-session-id", "b")],
    ];
    for pair in cases {
        let mut headers: Vec<(&str, &str)> = JSON_HEADERS.to_vec();
        if !pair
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case("authorization"))
        {
            headers.push(("Authorization", &auth));
        }
        headers.extend(pair);
        let mut conn = Conn::open(host.local_addr()).unwrap();
        let reply = conn.request("POST", "/mcp", &headers, body).unwrap();
        assert_eq!(reply.status, 400, "{pair:?}");
        let message = reply.json();
        assert!(message.get("id").is_none(), "{message}");
        assert!(
            message["error"]["message"]
                .as_str()
                .unwrap()
                .contains("more than once"),
            "{message}"
        );
    }
    // One credential, even a comma-joined pair, is one (malformed) bearer.
    let joined = format!("{auth}, {auth}");
    let mut headers: Vec<(&str, &str)> = JSON_HEADERS.to_vec();
    headers.push(("Authorization", &joined));
    let mut conn = Conn::open(host.local_addr()).unwrap();
    assert_eq!(
        conn.request("POST", "/mcp", &headers, body).unwrap().status,
        401
    );
    assert_eq!(hits.load(Ordering::SeqCst), 0);
    only_a_fresh_call_reaches_the_handler(&host, &session, &hits);
}

#[test]
fn a_foreign_origin_behind_a_loopback_one_is_refused() {
    let (host, session, hits) = counted(HostConfig::default().workers(2));
    let auth = session.authorization();
    let call = br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}"#;
    for pair in [
        [
            ("Origin", "http://evil.test"),
            ("Origin", "http://127.0.0.1"),
        ],
        [
            ("Origin", "http://127.0.0.1"),
            ("Origin", "http://evil.test"),
        ],
    ] {
        let mut headers: Vec<(&str, &str)> = JSON_HEADERS.to_vec();
        headers.push(("Authorization", &auth));
        headers.extend(pair);
        let mut conn = Conn::open(host.local_addr()).unwrap();
        let reply = conn.request("POST", "/mcp", &headers, call).unwrap();
        assert!(
            reply.status == 400 || reply.status == 403,
            "{pair:?} got {}",
            reply.status
        );
        assert!(reply.json().get("id").is_none());
    }
    assert_eq!(hits.load(Ordering::SeqCst), 0);
}

#[test]
fn ten_thousand_headers_or_a_megabyte_header_get_431_and_leave_the_host_serving() {
    let (host, session, hits) = counted(HostConfig::default().workers(2));
    let addr = host.local_addr();
    let auth = session.authorization();
    let call = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{}}}"#;
    let many: String = (0..10_000).map(|i| format!("X-Flood-{i}: v\r\n")).collect();
    let big = format!("X-Big: {}\r\n", "y".repeat(1 << 20));
    for (what, extra) in [("10,000 headers", &many), ("a 1 MiB header", &big)] {
        for bearer in [Some(auth.as_str()), None] {
            let credential = bearer.map_or(String::new(), |a| format!("Authorization: {a}\r\n"));
            let mut request = format!(
                "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n{credential}{extra}Content-Length: {}\r\n\r\n",
                call.len()
            )
            .into_bytes();
            request.extend_from_slice(call);
            let started = Instant::now();
            let answer = raw_exchange(addr, &request);
            let took = started.elapsed();
            let text = String::from_utf8_lossy(&answer);
            // Counted before authentication: a stranger learns nothing by it.
            assert_eq!(
                first_status(&answer),
                Some(431),
                "{what} (bearer: {}): {text}",
                bearer.is_some()
            );
            let body = text.split("\r\n\r\n").nth(1).unwrap_or("");
            let message: Value = serde_json::from_str(body).unwrap();
            assert!(message.get("id").is_none());
            eprintln!(
                "{what}, bearer {}: 431 after {took:?} ({} request bytes)",
                bearer.is_some(),
                request.len()
            );
        }
    }
    assert_eq!(hits.load(Ordering::SeqCst), 0);
    only_a_fresh_call_reaches_the_handler(&host, &session, &hits);
}

#[test]
fn host_ports_and_origins_are_parsed_strictly() {
    let (host, session, hits) = counted(HostConfig::default().workers(2));
    let auth = session.authorization();
    let port = host.local_addr().port();
    let a = ("Authorization", auth.as_str());
    for loose in [
        format!("127.0.0.1:+{port}"),
        format!("127.0.0.1:0{port}"),
        format!("localhost:{port}:{port}"),
    ] {
        assert_eq!(post_with(&host, &[a, ("Host", &loose)]), 403, "{loose}");
    }
    for loose in [
        "http://localhost:evil",
        "http://127.0.0.1:+80",
        "http://localhost:3000/page",
    ] {
        assert_eq!(post_with(&host, &[a, ("Origin", loose)]), 403, "{loose}");
    }
    assert_eq!(hits.load(Ordering::SeqCst), 0);
    // The strict forms still pass.
    let exact = format!("127.0.0.1:{port}");
    assert_eq!(
        post_with(
            &host,
            &[a, ("Host", &exact), ("Origin", "http://localhost:3000")]
        ),
        200
    );
}
