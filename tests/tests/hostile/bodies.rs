//! Bodies that never come, trickle in or claim too much.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::sync::atomic::Ordering;
use std::thread;
use std::time::Duration;

use serde_json::{json, Value};
use toolhost::{HostConfig, StaticSurface, ToolHost};
use toolhost_tests::McpClient;

use crate::{counted, head_only, only_a_fresh_call_reaches_the_handler, post_head};

#[test]
fn a_refused_client_whose_body_never_arrives_pins_no_worker() {
    let (host, session, hits) = counted(HostConfig::default().workers(2));
    let mut held = Vec::new();
    for _ in 0..4 {
        let (stream, status) = head_only(
            host.local_addr(),
            &post_head(&host, "Content-Length: 100000\r\n"),
        );
        assert!(status.starts_with("HTTP/1.1 401"), "{status}");
        held.push(stream);
    }
    // The one worker is free for the bearer holder.
    only_a_fresh_call_reaches_the_handler(&host, &session, &hits);
    drop(held);
}

#[test]
fn every_refusal_the_headers_decide_arrives_before_a_body_that_never_does() {
    let (host, session, hits) = counted(HostConfig::default().workers(2));
    let addr = host.local_addr();
    let port = addr.port();
    let bearer = format!("Authorization: {}\r\n", session.authorization());
    let json = "Content-Type: application/json\r\n";
    let flood: String = (0..200).map(|i| format!("X-Flood-{i}: v\r\n")).collect();
    // Each with the bearer: a holder refused for another reason does not get
    // its body read either.
    let cases = [
        (
            403,
            format!("POST /mcp HTTP/1.1\r\nHost: evil.test:{port}\r\n{json}"),
        ),
        (
            403,
            format!("POST /mcp HTTP/1.1\r\nHost: {addr}\r\nOrigin: http://evil.test\r\n{json}"),
        ),
        (
            404,
            format!("POST /elsewhere HTTP/1.1\r\nHost: {addr}\r\n{json}"),
        ),
        (405, format!("PUT /mcp HTTP/1.1\r\nHost: {addr}\r\n{json}")),
        (
            400,
            format!("POST /mcp HTTP/1.1\r\nHost: {addr}\r\nHost: {addr}\r\n{json}"),
        ),
        (
            431,
            format!("POST /mcp HTTP/1.1\r\nHost: {addr}\r\n{json}{flood}"),
        ),
        (
            415,
            format!("POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: text/plain\r\n"),
        ),
        (
            406,
            format!("POST /mcp HTTP/1.1\r\nHost: {addr}\r\n{json}Accept: text/html\r\n"),
        ),
    ];
    let mut held = Vec::new();
    for (status, head) in &cases {
        let (stream, line) = head_only(
            addr,
            &format!("{head}{bearer}Content-Length: 100000\r\n\r\n"),
        );
        assert!(
            line.starts_with(&format!("HTTP/1.1 {status} ")),
            "{head:?}: {line}"
        );
        held.push(stream);
    }
    // Eight refused clients still sending nothing, and both workers are free.
    only_a_fresh_call_reaches_the_handler(&host, &session, &hits);
    drop(held);
}

#[test]
fn an_absurd_content_length_gets_413_or_401_and_the_process_lives_on() {
    let (host, session, hits) = counted(HostConfig::default().workers(2));
    let auth = session.authorization();
    let (_a, status) = head_only(
        host.local_addr(),
        &post_head(
            &host,
            &format!("Authorization: {auth}\r\nContent-Length: 1000000000000000\r\n"),
        ),
    );
    assert!(status.starts_with("HTTP/1.1 413"), "{status}");
    let (_b, status) = head_only(
        host.local_addr(),
        &post_head(&host, "Content-Length: 1000000000000000\r\n"),
    );
    assert!(status.starts_with("HTTP/1.1 401"), "{status}");
    let (_c, status) = head_only(
        host.local_addr(),
        &post_head(
            &host,
            &format!("Authorization: {auth}\r\nContent-Length: 10000000\r\n"),
        ),
    );
    assert!(status.starts_with("HTTP/1.1 413"), "{status}");

    only_a_fresh_call_reaches_the_handler(&host, &session, &hits);
}

#[test]
fn an_absurd_content_length_is_answered_with_a_complete_json_rpc_error() {
    let (host, session, hits) = counted(HostConfig::default().workers(2));
    let addr = host.local_addr();
    let auth = session.authorization();
    for (credential, status) in [
        (format!("Authorization: {auth}\r\n"), 413),
        (String::new(), 401),
    ] {
        let mut stream = TcpStream::connect(addr).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        write!(
            stream,
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\n{credential}Content-Type: application/json\r\nContent-Length: 1000000000000000\r\n\r\n"
        )
        .unwrap();
        let mut reader = BufReader::new(stream);
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        assert!(line.starts_with(&format!("HTTP/1.1 {status} ")), "{line}");
        let mut length = None;
        loop {
            line.clear();
            reader.read_line(&mut line).unwrap();
            if line.trim().is_empty() {
                break;
            }
            // tiny_http's only way to keep the socket from draining an
            // endless body adds an `Upgrade` header; on a non-101 status
            // clients ignore it (RFC 9110 §7.8), so it is allowed here.
            let (name, value) = line.split_once(':').unwrap();
            if name.eq_ignore_ascii_case("content-length") {
                length = value.trim().parse::<usize>().ok();
            }
        }
        let length = length.expect("the refusal says how long its body is");
        let mut body = vec![0; length];
        reader.read_exact(&mut body).unwrap();
        let message: Value = serde_json::from_slice(&body).unwrap();
        assert!(message["error"]["message"].is_string(), "{message}");
        assert!(message.get("id").is_none());
    }
    assert_eq!(hits.load(Ordering::SeqCst), 0);
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

#[test]
fn the_host_keeps_accepting_connections_long_after_its_read_timeout() {
    // A read timeout set on the listener would also time out accept() and
    // stop tiny_http's accept thread for good; this guards against that.
    let (host, session, hits) = counted(
        HostConfig::default()
            .workers(2)
            .read_timeout(Duration::from_millis(100)),
    );
    thread::sleep(Duration::from_millis(400));
    for _ in 0..2 {
        let mut client = McpClient::for_session(&host, &session);
        client.initialize("2025-11-25");
        client.call("echo", json!({}));
        thread::sleep(Duration::from_millis(250));
    }
    assert_eq!(hits.load(Ordering::SeqCst), 2);
}
