//! Hostile input, rule by rule: bodies that never arrive, trickle in or
//! claim absurd lengths; identity headers sent twice, header floods and
//! foreign origins; bearers the host must not tell apart; a hostile
//! request's reach into another session; and a `list_tools` or an event hook
//! that panics. Each costs the one request, never a worker, another session
//! or the process.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use toolhost::{
    surface_fn, Event, HostConfig, StaticSurface, Tool, ToolHost, ToolOutcome, ToolSession,
};
use toolhost_tests::{schema, Conn, EventLog, McpClient, Reply, JSON_HEADERS, STATELESS};

/// A 2026-07-28 request body: `params` with the `_meta` the revision needs.
fn stateless_body(id: i64, method: &str, mut params: Value) -> Vec<u8> {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": STATELESS,
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
        .to_string()
        .into_bytes()
}

/// POSTs a 2026-07-28 request with every header the revision requires.
fn stateless_post(conn: &mut Conn, auth: &str, id: i64, method: &str, params: Value) -> Reply {
    toolhost_tests::stateless_post(conn, auth, id, method, params, json!({}))
}

/// A host whose one session counts the calls that reach its `echo`.
fn counted(config: HostConfig) -> (ToolHost, ToolSession, Arc<AtomicUsize>) {
    let host = ToolHost::bind(config).unwrap();
    let hits = Arc::new(AtomicUsize::new(0));
    let session = host.open_session(echo_surface(&hits));
    (host, session, hits)
}

fn echo_surface(hits: &Arc<AtomicUsize>) -> StaticSurface {
    let counter = Arc::clone(hits);
    StaticSurface::new()
        .tool(
            Tool::new("echo", "Echoes its arguments."),
            move |args, _| {
                counter.fetch_add(1, Ordering::SeqCst);
                ToolOutcome::text(args.to_string())
            },
        )
        .unwrap()
}

/// Nothing has reached `echo` yet, and a fresh client's call does: the host
/// still serves after what the test did to it.
fn only_a_fresh_call_reaches_the_handler(
    host: &ToolHost,
    session: &ToolSession,
    hits: &AtomicUsize,
) {
    assert_eq!(
        hits.load(Ordering::SeqCst),
        0,
        "a refused request reached the handler"
    );
    let mut client = McpClient::for_session(host, session);
    client.initialize("2025-11-25");
    client.call("echo", json!({}));
    assert_eq!(hits.load(Ordering::SeqCst), 1);
}

/// Sends raw bytes on a fresh connection, closes the sending half, and
/// returns everything the host wrote until it closed (bounded by a read
/// timeout, so a hang fails the test instead of stalling it).
fn raw_exchange(addr: SocketAddr, request: &[u8]) -> Vec<u8> {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    // The host may answer and close before taking every byte; that is its
    // right, so a failed write is not the test's business.
    let _ = stream.write_all(request);
    let _ = stream.shutdown(Shutdown::Write);
    let mut answer = Vec::new();
    match stream.read_to_end(&mut answer) {
        Ok(_) => {}
        Err(err) if err.kind() == std::io::ErrorKind::ConnectionReset => {}
        Err(err) => panic!(
            "no end to the answer of {:?}: {err}",
            String::from_utf8_lossy(&request[..request.len().min(200)])
        ),
    }
    answer
}

/// The status of the first response in `answer`, if there is one.
fn first_status(answer: &[u8]) -> Option<u16> {
    let text = String::from_utf8_lossy(answer);
    text.strip_prefix("HTTP/1.")
        .and_then(|rest| rest.get(2..))
        .and_then(|rest| rest.get(..3))
        .and_then(|code| code.parse().ok())
}

/// Sends only the head of a request whose body never comes, and returns the
/// open stream and the status line of the answer.
fn head_only(addr: SocketAddr, head: &str) -> (TcpStream, String) {
    let stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut writer = stream.try_clone().unwrap();
    writer.write_all(head.as_bytes()).unwrap();
    let mut status = String::new();
    BufReader::new(stream.try_clone().unwrap())
        .read_line(&mut status)
        .unwrap_or_else(|err| panic!("no answer before the body to {head:?}: {err}"));
    (stream, status)
}

/// The head of a POST to `/mcp` with `headers` (each line ending in CRLF)
/// after `Host` and `Content-Type`.
fn post_head(host: &ToolHost, headers: &str) -> String {
    format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n{headers}\r\n",
        host.local_addr()
    )
}

/// The status of an `initialize` POSTed with exactly `headers`.
fn post_with(host: &ToolHost, headers: &[(&str, &str)]) -> u16 {
    let mut conn = Conn::open(host.local_addr()).unwrap();
    let body = br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}"#;
    conn.request("POST", "/mcp", headers, body).unwrap().status
}

/// Everything of a reply a client can see, but the `Date`.
fn visible(reply: &Reply) -> (u16, Vec<(String, String)>, Vec<u8>) {
    let headers = reply
        .headers
        .iter()
        .filter(|(n, _)| !n.eq_ignore_ascii_case("date"))
        .cloned()
        .collect();
    (reply.status, headers, reply.body.clone())
}

// Bodies that never come, trickle in or claim too much.

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

// Headers: media types, identity headers sent twice, floods, origins.

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

// Bearers the host must not tell apart.

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

// Faults that cost one request, and requests that must not reach another session.

#[test]
fn a_panicking_list_tools_fails_that_request_in_both_eras_and_the_next_one_works() {
    let events = EventLog::new();
    let host = ToolHost::bind(events.hook(HostConfig::default().workers(2))).unwrap();
    let explode = Arc::new(AtomicBool::new(false));
    let hits = Arc::new(AtomicUsize::new(0));
    let (flag, counter) = (Arc::clone(&explode), Arc::clone(&hits));
    let session = host.open_session(surface_fn(
        move || {
            assert!(
                !flag.load(Ordering::SeqCst),
                "list_tools exploded on purpose"
            );
            vec![Tool::new("echo", "Echo.")]
        },
        move |_, _, _| {
            counter.fetch_add(1, Ordering::SeqCst);
            ToolOutcome::text("ran")
        },
    ));
    let mut client = McpClient::for_session(&host, &session);
    client.initialize("2025-11-25");
    explode.store(true, Ordering::SeqCst);

    // tools/list, and tools/call (whose lookup lists the tools), each fail
    // alone: a JSON-RPC error for that request id, the panic text kept back.
    for (id, method, params) in [
        (71, "tools/list", json!({})),
        (72, "tools/call", json!({"name": "echo", "arguments": {}})),
    ] {
        let reply =
            client.post(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        assert_eq!(reply.status, 200, "{method}");
        let message = reply.json();
        schema::assert_valid("2025-11-25", "JSONRPCErrorResponse", &message);
        assert_eq!(message["id"], id);
        assert_eq!(message["error"]["code"], -32603, "{method}: {message}");
        assert!(!message.to_string().contains("exploded"), "{message}");
    }
    // In 2026-07-28 the same fault travels as HTTP 500 with the JSON-RPC
    // error (src/mcp/stateless.rs maps -32603 to 500).
    let mut conn = Conn::open(host.local_addr()).unwrap();
    let auth = session.authorization();
    let reply = stateless_post(&mut conn, &auth, 73, "tools/list", json!({}));
    let message = reply.json();
    assert_eq!(reply.status, 500, "{message}");
    schema::assert_valid(STATELESS, "JSONRPCErrorResponse", &message);
    assert_eq!(message["id"], 73);
    assert_eq!(message["error"]["code"], -32603);
    assert_eq!(hits.load(Ordering::SeqCst), 0, "no handler ran");
    assert_eq!(session.calls_served(), 0);

    // The next requests, on the same connections, work.
    explode.store(false, Ordering::SeqCst);
    assert_eq!(client.tool_names(), ["echo"]);
    assert_eq!(client.call("echo", json!({}))["content"][0]["text"], "ran");
    let reply = stateless_post(&mut conn, &auth, 74, "tools/list", json!({}));
    assert_eq!(reply.status, 200);
    assert_eq!(hits.load(Ordering::SeqCst), 1);

    let faults = events.pick(|e| match e {
        Event::SurfaceFault { message } => Some(message.clone()),
        _ => None,
    });
    assert_eq!(faults.len(), 3, "{faults:?}");
    assert!(faults
        .iter()
        .all(|f| f.contains("list_tools exploded on purpose")));
}

#[test]
fn a_panicking_event_hook_is_contained_and_leaks_no_call_slot_or_lock() {
    let armed = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&armed);
    let host = ToolHost::bind(
        HostConfig::default()
            .workers(2)
            .max_concurrent_calls(1)
            .on_event(move |event| {
                if flag.load(Ordering::SeqCst) && !matches!(event, Event::CallFinished { .. }) {
                    panic!("event hook exploded on purpose: {event:?}");
                }
            }),
    )
    .unwrap();
    let hits = Arc::new(AtomicUsize::new(0));
    let session = host.open_session(echo_surface(&hits));
    let mut client = McpClient::for_session(&host, &session);
    client.initialize("2025-11-25");
    let call = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
        "params": {"name": "echo", "arguments": {}}});

    armed.store(true, Ordering::SeqCst);
    // The hook panics at a call's start, at an unknown tool and at an auth
    // refusal: the host contains each panic and answers as it would anyway.
    let auth = session.authorization();
    let mcp_session = client.session_id.clone().unwrap();
    let unknown_tool = json!({"jsonrpc": "2.0", "id": 6, "method": "tools/call",
        "params": {"name": "nope"}});
    let mut statuses = Vec::new();
    for (credential, body) in [
        (Some(auth.as_str()), call),
        (Some(auth.as_str()), unknown_tool),
        (None, json!({})),
    ] {
        let mut headers: Vec<(&str, &str)> = JSON_HEADERS.to_vec();
        headers.extend([
            ("Mcp-Session-Id", mcp_session.as_str()),
            ("MCP-Protocol-Version", "2025-11-25"),
        ]);
        if let Some(credential) = credential {
            headers.push(("Authorization", credential));
        }
        let mut conn = Conn::open(host.local_addr()).unwrap();
        let reply = conn.request("POST", "/mcp", &headers, body.to_string().as_bytes());
        statuses.push(reply.map(|r| r.status).ok());
    }
    assert_eq!(statuses, [Some(200), Some(200), Some(401)]);
    armed.store(false, Ordering::SeqCst);

    // With one call slot, a slot leaked by the panic would make this a 503.
    for n in 0..3 {
        let result = client.call("echo", json!({"n": n}));
        assert_eq!(result["isError"], false);
    }
    assert_eq!(client.tool_names(), ["echo"]);
    assert_eq!(
        hits.load(Ordering::SeqCst),
        4,
        "the call whose start event panicked ran all the same"
    );
    assert_eq!(
        session.calls_served(),
        4,
        "served calls and handler runs agree"
    );
    assert_eq!(host.open_sessions(), 1);
    drop(session);
    assert_eq!(host.open_sessions(), 0);
}

/// A bystander's view of its own state: an MCP session that must stay
/// valid, a connection that must stay usable, and calls that must be
/// counted exactly.
struct Bystander {
    client: McpClient,
    session: ToolSession,
    hits: Arc<AtomicUsize>,
    calls: usize,
}

impl Bystander {
    fn check(&mut self, after: &str) {
        let result = self.client.call("echo", json!({"n": self.calls}));
        assert_eq!(result["isError"], false, "after {after}");
        self.calls += 1;
        assert_eq!(
            self.hits.load(Ordering::SeqCst),
            self.calls,
            "after {after}"
        );
        assert_eq!(
            self.session.calls_served(),
            self.calls as u64,
            "after {after}"
        );
        assert_eq!(self.client.tool_names(), ["echo"], "after {after}");
    }
}

#[test]
fn no_hostile_request_reaches_another_sessions_state_or_calls() {
    let (host, attacker, attacker_hits) = counted(HostConfig::default().workers(4));
    let addr = host.local_addr();
    let hits = Arc::new(AtomicUsize::new(0));
    let session = host.open_session(echo_surface(&hits));
    let mut client = McpClient::for_session(&host, &session);
    client.initialize("2025-11-25");
    let victim_mcp = client.session_id.clone().unwrap();
    let victim_auth = session.authorization();
    let mut bystander = Bystander {
        client,
        session,
        hits,
        calls: 0,
    };
    bystander.check("setting up");

    let auth = attacker.authorization();
    let mut attacker_client = McpClient::for_session(&host, &attacker);
    attacker_client.initialize("2025-11-25");
    let attacker_mcp = attacker_client.session_id.clone().unwrap();
    let origin = format!("127.0.0.1:{}", addr.port());
    let post = |headers: &str, body: &[u8]| {
        let mut bytes = format!(
            "POST /mcp HTTP/1.1\r\nHost: {origin}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n{headers}Content-Length: {}\r\n\r\n",
            body.len()
        )
        .into_bytes();
        bytes.extend_from_slice(body);
        bytes
    };
    let with = |name: &str, value: &str| format!("Authorization: {auth}\r\n{name}: {value}\r\n");
    let mine = format!("Authorization: {auth}\r\nMcp-Session-Id: {attacker_mcp}\r\n");
    let call = br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{}}}"#;
    let mut altered = victim_auth.clone();
    altered.pop();
    altered.push('x');
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let huge = vec![b' '; (4 << 20) + 10];
    let flood: String = (0..500).map(|i| format!("X-Flood-{i}: {i}\r\n")).collect();
    let foreign_host = {
        let mut bytes = post(&mine, call);
        let at = bytes.windows(4).position(|w| w == b"127.").unwrap();
        bytes.splice(at..at + 9, *b"evil.test");
        bytes
    };
    // What each is answered; `None`: tiny_http closes without an answer.
    let cases: Vec<(&str, Option<u16>, Vec<u8>)> = vec![
        ("no bearer", Some(401), post("", call)),
        (
            "an altered copy of the victim's bearer",
            Some(401),
            post(&format!("Authorization: {altered}\r\n"), call),
        ),
        (
            "the victim's MCP session id with another bearer",
            Some(404),
            post(&with("Mcp-Session-Id", &victim_mcp), call),
        ),
        (
            "a cancellation of the victim's request ids",
            Some(404),
            post(
                &with("Mcp-Session-Id", &victim_mcp),
                br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}"#,
            ),
        ),
        (
            "a DELETE of the victim's MCP session",
            Some(404),
            format!(
                "DELETE /mcp HTTP/1.1\r\nHost: {origin}\r\nAuthorization: {auth}\r\nMcp-Session-Id: {victim_mcp}\r\n\r\n"
            )
            .into_bytes(),
        ),
        (
            "a GET stream on the victim's MCP session",
            Some(404),
            format!(
                "GET /mcp HTTP/1.1\r\nHost: {origin}\r\nAuthorization: {auth}\r\nAccept: text/event-stream\r\nMcp-Session-Id: {victim_mcp}\r\n\r\n"
            )
            .into_bytes(),
        ),
        (
            "the two bearers at once",
            Some(400),
            post(
                &format!("Authorization: {auth}\r\nAuthorization: {victim_auth}\r\n"),
                call,
            ),
        ),
        (
            "malformed JSON",
            Some(400),
            post(&mine, b"{\"jsonrpc\": \"2.0\", \"id\": "),
        ),
        ("100,000-deep nesting", Some(400), post(&mine, deep.as_bytes())),
        (
            "a lone surrogate",
            Some(400),
            post(
                &mine,
                br#"{"jsonrpc":"2.0","id":"\ud800","method":"tools/call","params":{"name":"echo"}}"#,
            ),
        ),
        (
            "a batch outside 2025-03-26",
            Some(400),
            post(&mine, format!("[{}]", String::from_utf8_lossy(call)).as_bytes()),
        ),
        ("a body past the limit", Some(413), post(&mine, &huge)),
        ("500 headers", Some(431), post(&format!("{mine}{flood}"), call)),
        (
            "a header line without a colon",
            Some(400),
            post(&format!("{mine}this is no header\r\n"), call),
        ),
        (
            "a non-ASCII header",
            None,
            post(&format!("{mine}X-Name: gr\u{fc}\u{df}e\r\n"), call),
        ),
        (
            "a broken chunked body",
            Some(400),
            format!(
                "POST /mcp HTTP/1.1\r\nHost: {origin}\r\n{mine}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{{}}\r\n0\r\n\r\n"
            )
            .into_bytes(),
        ),
        ("a foreign Host", Some(403), foreign_host),
        (
            "a foreign Origin",
            Some(403),
            post(&with("Origin", "http://evil.test"), call),
        ),
        (
            "an HTTP/1.0 request without Host",
            Some(400),
            b"POST /mcp HTTP/1.0\r\nContent-Length: 2\r\n\r\n{}".to_vec(),
        ),
        (
            "a request line of garbage",
            Some(400),
            b"\x00\x01\x02 / HTTP/9.9\r\n\r\n".to_vec(),
        ),
    ];
    for (what, expected, request) in &cases {
        let answer = raw_exchange(addr, request);
        assert_eq!(
            first_status(&answer),
            *expected,
            "{what}: {:?}",
            String::from_utf8_lossy(&answer)
        );
        bystander.check(what);
    }
    // Far more MCP sessions than one bearer may keep: the oldest of the
    // attacker's own are forgotten, never the bystander's.
    for _ in 0..100 {
        let mut flood = McpClient::for_session(&host, &attacker);
        flood.initialize("2025-06-18");
    }
    bystander.check("100 initializes by another bearer");
    assert_eq!(bystander.client.session_id.as_deref(), Some(&*victim_mcp));
    assert_eq!(
        attacker_hits.load(Ordering::SeqCst),
        0,
        "no hostile request ran a handler"
    );
    assert_eq!(attacker.calls_served(), 0);
    // And a 2026-07-28 client of the bystander's bearer is served too.
    let mut conn = Conn::open(addr).unwrap();
    let reply = stateless_post(
        &mut conn,
        &victim_auth,
        5,
        "tools/call",
        json!({"name": "echo", "arguments": {}}),
    );
    assert_eq!(reply.status, 200);
    assert_eq!(bystander.hits.load(Ordering::SeqCst), bystander.calls + 1);
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
