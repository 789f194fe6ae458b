//! The client's connections: URLs it refuses, a port nobody listens on, a
//! host that shut down, and a server that hangs up, closes an idle
//! connection or frames its answer in chunks or by closing.

use std::net::TcpListener;
use std::thread;
use std::time::Duration;

use serde_json::json;
use toolhost::client::{Client, ClientError};

use crate::host_with_tools;
use crate::scripted::{json_reply, ok, result, scripted, stateless, Seen, HANG_UP};

#[test]
fn connecting_to_a_closed_port_says_nothing_is_listening() {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let err = Client::connect(&format!("http://127.0.0.1:{port}/mcp")).unwrap_err();
    assert!(matches!(err, ClientError::Connect { .. }), "{err:?}");
    assert!(err.to_string().contains("nothing is listening"), "{err}");
}

#[test]
fn a_non_loopback_or_https_url_is_refused_before_any_connection() {
    for url in [
        "http://192.0.2.1:80/mcp",
        "https://127.0.0.1:1/mcp",
        "http://example.com/mcp",
    ] {
        let err = Client::connect(url).unwrap_err();
        assert!(
            matches!(err, ClientError::InvalidUrl { .. }),
            "{url}: {err:?}"
        );
    }
}

#[test]
#[cfg_attr(
    not(target_os = "linux"),
    ignore = "the farewell is Linux only (see ToolHost::shutdown)"
)]
fn a_host_that_shut_down_fails_the_next_call_with_a_connection_error() {
    let (host, session, _, _) = host_with_tools();
    let mut client = session
        .client_builder()
        .timeout(Duration::from_secs(1))
        .connect()
        .unwrap();
    client.call_tool("echo", json!({"text": "x"})).unwrap();
    host.shutdown();
    // The request on the connection the client kept open is answered (not
    // left to the client's 1 s timeout): the host says it is gone.
    let err = client.call_tool("echo", json!({"text": "y"})).unwrap_err();
    match &err {
        ClientError::Rpc {
            status, message, ..
        } => {
            assert_eq!(*status, 503);
            assert!(message.contains("shut down"), "{message}");
        }
        other => panic!("expected the host's farewell, got {other:?}"),
    }
    // That connection was closed with the answer: the next call finds
    // nobody listening instead of waiting.
    let err = client.call_tool("echo", json!({"text": "z"})).unwrap_err();
    assert!(
        matches!(err, ClientError::Connect { .. } | ClientError::Io(_)),
        "{err:?}"
    );
    // A fresh connection finds nobody listening.
    let err = session.client().unwrap_err();
    assert!(matches!(err, ClientError::Connect { .. }), "{err:?}");
}

#[test]
fn a_server_hanging_up_mid_answer_is_an_io_error_and_the_next_call_reconnects() {
    let server = scripted(vec![
        Box::new(|_: &Seen| {
            [
                &b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{\"jsonrpc\""[..],
                HANG_UP,
            ]
            .concat()
        }),
        Box::new(|_: &Seen| Vec::new()),
        ok(|seen| result(seen, json!({"content": []}))),
    ]);
    let mut client = stateless(&server.url);
    let first = client.call_tool("x", json!({}));
    assert!(matches!(first, Err(ClientError::Io(_))), "{first:?}");
    let second = client.call_tool("x", json!({}));
    assert!(matches!(second, Err(ClientError::Io(_))), "{second:?}");
    assert!(client.call_tool("x", json!({})).is_ok());
    let (_, connections) = server.done.join().unwrap();
    assert_eq!(connections, 3);
}

#[test]
fn a_connection_the_server_closed_while_idle_is_replaced_before_the_next_request() {
    let server = scripted(vec![
        Box::new(|seen: &Seen| {
            // No `Connection: close`: the server just hangs up afterwards.
            let body = result(seen, json!({"content": []}));
            [json_reply(200, "", &body), HANG_UP.to_vec()].concat()
        }),
        ok(|seen| {
            result(
                seen,
                json!({"content": [{"type": "text", "text": "fresh"}]}),
            )
        }),
    ]);
    let mut client = stateless(&server.url);
    client.call_tool("x", json!({})).unwrap();
    // Idle past the client's check threshold (1 s): the closed connection is
    // noticed before a request is written to it.
    thread::sleep(Duration::from_millis(1100));
    assert_eq!(client.call_tool("x", json!({})).unwrap().text(), "fresh");
    let (seen, connections) = server.done.join().unwrap();
    assert_eq!((seen.len(), connections), (2, 2));
}

#[test]
fn a_chunked_json_answer_and_a_close_delimited_one_are_both_read() {
    let server = scripted(vec![
        Box::new(|seen: &Seen| {
            let body = result(
                seen,
                json!({"content": [{"type": "text", "text": "chunked"}]}),
            )
            .to_string();
            let (a, b) = body.split_at(body.len() / 2);
            format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n{a}\r\n{:x}\r\n{b}\r\n0\r\n\r\n",
                a.len(),
                b.len()
            )
            .into_bytes()
        }),
        Box::new(|seen: &Seen| {
            let body = result(
                seen,
                json!({"content": [{"type": "text", "text": "closed"}]}),
            );
            format!("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n{body}").into_bytes()
        }),
    ]);
    let mut client = stateless(&server.url);
    assert_eq!(client.call_tool("x", json!({})).unwrap().text(), "chunked");
    // The scripted server closes the connection after its last reply.
    assert_eq!(client.call_tool("x", json!({})).unwrap().text(), "closed");
    server.done.join().unwrap();
}
