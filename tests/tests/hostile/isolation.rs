//! Requests that must not reach another session: a bystander's MCP
//! session, connection and calls stay its own through every hostile
//! request.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use serde_json::json;
use toolhost::{HostConfig, ToolSession};
use toolhost_tests::{Conn, McpClient};

use crate::{counted, echo_surface, first_status, raw_exchange, stateless_post};

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
