//! Refusals that must cost the host nothing: bodies that never arrive and
//! absurd lengths, answered without pinning a worker or ending the process.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use toolhost::{HostConfig, StaticSurface, Tool, ToolHost, ToolOutcome};
use toolhost_tests::McpClient;

fn echo_host(workers: usize) -> (ToolHost, toolhost::ToolSession, Arc<AtomicUsize>) {
    let host = ToolHost::bind(HostConfig::default().workers(workers)).unwrap();
    let hits = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&hits);
    let surface = StaticSurface::new()
        .tool(Tool::new("echo", "Echo."), move |args, _| {
            counter.fetch_add(1, Ordering::SeqCst);
            ToolOutcome::text(args.to_string())
        })
        .unwrap();
    let session = host.open_session(surface);
    (host, session, hits)
}

/// Sends only the head of a request and returns the status line of the answer.
fn head_only(host: &ToolHost, headers: &str) -> (TcpStream, String) {
    let stream = TcpStream::connect(host.local_addr()).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut writer = stream.try_clone().unwrap();
    write!(
        writer,
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n{headers}\r\n",
        host.local_addr()
    )
    .unwrap();
    let mut status = String::new();
    BufReader::new(stream.try_clone().unwrap())
        .read_line(&mut status)
        .expect("the refusal arrives although the body never does");
    (stream, status)
}

#[test]
fn a_refused_client_whose_body_never_arrives_pins_no_worker() {
    let (host, session, hits) = echo_host(2);
    let mut held = Vec::new();
    for _ in 0..4 {
        let (stream, status) = head_only(&host, "Content-Length: 100000\r\n");
        assert!(status.starts_with("HTTP/1.1 401"), "{status}");
        held.push(stream);
    }
    // The one worker is free for the bearer holder.
    let mut client = McpClient::for_session(&host, &session);
    client.initialize("2025-11-25");
    client.call("echo", json!({"x": 1}));
    assert_eq!(hits.load(Ordering::SeqCst), 1);
    drop(held);
}

#[test]
fn an_absurd_content_length_gets_413_or_401_and_the_process_lives_on() {
    let (host, session, hits) = echo_host(2);
    let auth = session.authorization();
    let (_a, status) = head_only(
        &host,
        &format!("Authorization: {auth}\r\nContent-Length: 1000000000000000\r\n"),
    );
    assert!(status.starts_with("HTTP/1.1 413"), "{status}");
    let (_b, status) = head_only(&host, "Content-Length: 1000000000000000\r\n");
    assert!(status.starts_with("HTTP/1.1 401"), "{status}");
    let (_c, status) = head_only(
        &host,
        &format!("Authorization: {auth}\r\nContent-Length: 10000000\r\n"),
    );
    assert!(status.starts_with("HTTP/1.1 413"), "{status}");

    let mut client = McpClient::for_session(&host, &session);
    client.initialize("2025-11-25");
    client.call("echo", json!({}));
    assert_eq!(hits.load(Ordering::SeqCst), 1);
}

#[test]
fn a_chunked_body_is_read_and_bounded() {
    let host = ToolHost::bind(HostConfig::default().max_body_bytes(4096)).unwrap();
    let session = host.open_session(StaticSurface::new());
    let mut client = McpClient::for_session(&host, &session);
    let init = br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}"#;
    let mut chunked = format!("{:x}\r\n", init.len()).into_bytes();
    chunked.extend_from_slice(init);
    chunked.extend_from_slice(b"\r\n0\r\n\r\n");
    let reply = client.post_raw(&chunked, &[("Transfer-Encoding", "chunked")]);
    assert_eq!(
        reply.status,
        200,
        "{:?}",
        String::from_utf8_lossy(&reply.body)
    );

    let mut big = Vec::new();
    for _ in 0..8 {
        big.extend_from_slice(format!("{:x}\r\n", 1000).as_bytes());
        big.extend_from_slice(&[b' '; 1000]);
        big.extend_from_slice(b"\r\n");
    }
    big.extend_from_slice(b"0\r\n\r\n");
    let mut fresh = McpClient::for_session(&host, &session);
    let reply = fresh.post_raw(&big, &[("Transfer-Encoding", "chunked")]);
    assert_eq!(reply.status, 413);
}

fn post_with(host: &ToolHost, headers: &[(&str, &str)]) -> u16 {
    let mut conn = toolhost_tests::Conn::open(host.local_addr()).unwrap();
    let body = br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}"#;
    conn.request("POST", "/mcp", headers, body).unwrap().status
}

#[test]
fn media_types_are_checked_after_the_bearer_with_precise_statuses() {
    let (host, session, _) = echo_host(2);
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
    let (host, session, hits) = echo_host(2);
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
    let mut client = McpClient::for_session(&host, &session);
    client.initialize("2025-11-25");
    client.call("echo", json!({}));
    assert_eq!(hits.load(Ordering::SeqCst), 1);
}
