//! Event streams opened and abandoned by the hundred.

use std::io::{BufReader, Write};
use std::net::TcpStream;
use std::thread;
use std::time::Duration;

use serde_json::json;
use toolhost_tests::McpClient;

use crate::answers::{check_answer, read_answer};
use crate::fixture::{fixture, Fixture};
use crate::rng::Rng;
use crate::{env_u64, DEFAULT_SEED, READ_TIMEOUT};

/// Opens an event stream (GET or `subscriptions/listen`) and returns the
/// status of its answer and whether that was an event stream.
fn open_and_abandon(fx: &Fixture, listen: bool, extra: &str) -> (u16, bool) {
    let addr = fx.host.local_addr();
    let auth = fx.session.authorization();
    let request = if listen {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen", "params": {
            "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientCapabilities": {}},
            "notifications": {"toolsListChanged": true}}})
        .to_string();
        format!(
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nAuthorization: {auth}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: subscriptions/listen\r\n{extra}Content-Length: {}\r\n\r\n{body}",
            body.len()
        )
    } else {
        format!(
            "GET /mcp HTTP/1.1\r\nHost: {addr}\r\nAuthorization: {auth}\r\nAccept: text/event-stream\r\nMcp-Session-Id: {}\r\n{extra}\r\n",
            fx.mcp_sessions[3].1
        )
    };
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(READ_TIMEOUT)).unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let answer = read_answer(&mut BufReader::new(&stream), false, true)
        .unwrap()
        .expect("an answer");
    check_answer(&answer, &fx.token).unwrap();
    (answer.status, answer.open_stream)
}

#[test]
fn event_streams_opened_and_abandoned_by_the_hundred_are_reaped() {
    let fx = fixture();
    let mut rng = Rng::new(env_u64("TOOLHOST_FUZZ_SEED").unwrap_or(DEFAULT_SEED));
    let mut opened = 0;
    let mut refused = 0;
    // More than the host's 256 streams, each abandoned after its head: the
    // keep-alive (20 ms here) finds each gone, so none is ever refused.
    for _ in 0..400 {
        let extra = match rng.below(6) {
            0 => "X-Pad: x\r\n".to_owned(),
            1 => "Origin: http://localhost:5173\r\n".to_owned(),
            2 => "Accept: text/html\r\n".to_owned(),
            _ => String::new(),
        };
        let listen = rng.chance(50);
        let (status, stream) = open_and_abandon(&fx, listen, &extra);
        if stream {
            opened += 1;
        } else {
            assert!(
                [400, 405, 406].contains(&status),
                "listen {listen}, {extra:?}: {status}"
            );
            refused += 1;
        }
        // Pace the openings a little, so that the reaper keeps up.
        thread::sleep(Duration::from_micros(500));
    }
    eprintln!("{opened} streams opened and abandoned, {refused} refused by their headers");
    assert!(
        opened > 256,
        "the run opened more streams than the host keeps"
    );
    let mut client = McpClient::for_session(&fx.host, &fx.session);
    client.initialize("2025-11-25");
    client.call("echo", json!({"text": "fine"}));
}
