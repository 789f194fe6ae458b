//! Hostile input, rule by rule: bodies that never arrive, trickle in or
//! claim absurd lengths; identity headers sent twice, header floods and
//! foreign origins; bearers the host must not tell apart; a hostile
//! request's reach into another session; and a `list_tools` or an event hook
//! that panics. Each costs the one request, never a worker, another session
//! or the process.
//!
//! One module per kind of hostility; the hosts and raw exchanges they
//! share are here.

mod bearers;
mod bodies;
mod headers;
mod isolation;
mod panics;

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use toolhost::{HostConfig, StaticSurface, Tool, ToolHost, ToolOutcome, ToolSession};
use toolhost_tests::{Conn, McpClient, Reply, STATELESS};

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
