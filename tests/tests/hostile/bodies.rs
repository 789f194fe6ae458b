//! Bodies that never come, trickle in or claim too much.
//!
//! A refusal's answer follows the body it refuses: tiny_http reads a
//! connection's next request only once the body before it is gone, and
//! writes an answer to a request whose body is still coming only as a
//! protocol upgrade (a malformed refusal). So the body is read off on a
//! thread of its own — never a worker — and the answer, with one
//! `Connection: close`, follows it.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::Ordering;
use std::thread;
use std::time::Duration;

use serde_json::{json, Value};
use toolhost::{HostConfig, StaticSurface, ToolHost};
use toolhost_tests::McpClient;

use crate::{counted, only_a_fresh_call_reaches_the_handler, post_head};

/// Sends only the head of a request whose body has not come yet.
fn head_sent(addr: SocketAddr, head: &str) -> TcpStream {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    stream.write_all(head.as_bytes()).unwrap();
    stream
}

/// Sends `len` bytes of body on `stream`, then reads the answer whole:
/// its head (status line first) and its body.
fn answer_after_body(stream: &mut TcpStream, len: usize) -> (String, Vec<u8>) {
    stream.write_all(&vec![b' '; len]).unwrap();
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut head = String::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        head.push_str(&line);
        if line.trim().is_empty() {
            break;
        }
    }
    let length = header_values(&head, "content-length")
        .first()
        .and_then(|value| value.parse().ok())
        .expect("the answer says how long its body is");
    let mut body = vec![0; length];
    reader.read_exact(&mut body).unwrap();
    (head, body)
}

/// The values of every `name` header in `head`.
fn header_values(head: &str, name: &str) -> Vec<String> {
    head.lines()
        .filter_map(|line| line.split_once(':'))
        .filter(|(field, _)| field.trim().eq_ignore_ascii_case(name))
        .map(|(_, value)| value.trim().to_owned())
        .collect()
}

/// A refusal's head is well formed: one `Connection: close`, no `Upgrade`,
/// no header line of tiny_http's workarounds.
fn assert_well_formed_refusal(head: &str) {
    assert_eq!(header_values(head, "connection"), ["close"], "{head}");
    assert!(header_values(head, "upgrade").is_empty(), "{head}");
    assert!(!head.to_ascii_lowercase().contains("x-toolhost"), "{head}");
}

#[test]
fn a_refused_client_whose_body_never_arrives_pins_no_worker() {
    let (host, session, hits) = counted(HostConfig::default().workers(2));
    let mut held: Vec<TcpStream> = (0..4)
        .map(|_| {
            head_sent(
                host.local_addr(),
                &post_head(&host, "Content-Length: 100000\r\n"),
            )
        })
        .collect();
    // Neither worker waits for those bodies: the bearer holder is served...
    only_a_fresh_call_reaches_the_handler(&host, &session, &hits);
    // ...and each refused client, once it has sent its body, is told.
    for stream in &mut held {
        let (head, _) = answer_after_body(stream, 100_000);
        assert!(head.starts_with("HTTP/1.1 401 "), "{head}");
        assert_well_formed_refusal(&head);
    }
}

#[test]
fn every_refusal_the_headers_decide_waits_for_no_worker_and_follows_its_body() {
    let (host, session, hits) = counted(HostConfig::default().workers(2));
    let addr = host.local_addr();
    let port = addr.port();
    let bearer = format!("Authorization: {}\r\n", session.authorization());
    let json = "Content-Type: application/json\r\n";
    let flood: String = (0..200).map(|i| format!("X-Flood-{i}: v\r\n")).collect();
    // Each with the bearer: a holder refused for another reason does not get
    // its body read by a worker either.
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
    let mut held: Vec<(u16, &String, TcpStream)> = cases
        .iter()
        .map(|(status, head)| {
            let stream = head_sent(
                addr,
                &format!("{head}{bearer}Content-Length: 100000\r\n\r\n"),
            );
            (*status, head, stream)
        })
        .collect();
    // Eight refused clients still sending nothing, and both workers are free.
    only_a_fresh_call_reaches_the_handler(&host, &session, &hits);
    for (status, head, stream) in &mut held {
        let (answer, body) = answer_after_body(stream, 100_000);
        assert!(
            answer.starts_with(&format!("HTTP/1.1 {status} ")),
            "{head:?}: {answer}"
        );
        assert_well_formed_refusal(&answer);
        let message: Value = serde_json::from_slice(&body).unwrap();
        assert!(message["error"]["message"].is_string(), "{message}");
    }
}

#[test]
fn a_body_declared_past_a_gibibyte_is_left_unanswered_counted_and_the_process_lives_on() {
    let (host, session, hits) = counted(HostConfig::default().workers(2));
    let auth = session.authorization();
    let absurd = [
        format!("Authorization: {auth}\r\nContent-Length: 1000000000000000\r\n"),
        "Content-Length: 1000000000000000\r\n".to_owned(),
        // Past isize::MAX, where reserving it would panic instead.
        "Content-Length: 18446744073709551615\r\n".to_owned(),
        // Just past the bound.
        format!("Content-Length: {}\r\n", (1u64 << 30) + 1),
    ];
    let mut held = Vec::new();
    for headers in &absurd {
        let mut stream = head_sent(host.local_addr(), &post_head(&host, headers));
        // No answer can be written without reading the body first...
        stream
            .set_read_timeout(Some(Duration::from_millis(300)))
            .unwrap();
        let mut byte = [0; 1];
        assert!(
            matches!(stream.read(&mut byte), Err(ref err) if matches!(err.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut)),
            "{headers:?} was answered"
        );
        held.push(stream);
    }
    // ...so none is, and each is counted.
    assert_eq!(host.abandoned_connections(), absurd.len() as u64);
    // A body past max_body_bytes that a client could really send is read
    // off and refused with 413.
    let mut big = head_sent(
        host.local_addr(),
        &post_head(
            &host,
            &format!("Authorization: {auth}\r\nContent-Length: 10000000\r\n"),
        ),
    );
    let (head, _) = answer_after_body(&mut big, 10_000_000);
    assert!(head.starts_with("HTTP/1.1 413 "), "{head}");
    assert_well_formed_refusal(&head);
    assert_eq!(host.abandoned_connections(), absurd.len() as u64);
    only_a_fresh_call_reaches_the_handler(&host, &session, &hits);
    drop(held);
}

#[test]
fn a_refused_connection_answers_nothing_after_its_refusal_and_closes_when_its_client_does() {
    let (host, _session, hits) = counted(HostConfig::default().workers(2));
    let request = post_head(&host, "Content-Length: 2000\r\n");
    let mut stream = head_sent(host.local_addr(), &request);
    let (head, _) = answer_after_body(&mut stream, 2000);
    assert!(head.starts_with("HTTP/1.1 401 "), "{head}");
    assert_well_formed_refusal(&head);
    // Requests pipelined behind it are read (tiny_http reads them) and
    // dropped unanswered...
    for _ in 0..3 {
        stream.write_all(request.as_bytes()).unwrap();
        stream.write_all(&[b' '; 2000]).unwrap();
    }
    stream
        .set_read_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    let mut more = [0; 64];
    assert!(
        stream.read(&mut more).is_err(),
        "a request after the refusal was answered"
    );
    // ...and once the client closes its side, so does the host.
    stream.shutdown(std::net::Shutdown::Write).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    assert_eq!(stream.read(&mut more).unwrap(), 0);
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
