//! Both transports toward a server that speaks to the client mid-call, as
//! the official Python SDK's does (its interop run shows the real one,
//! `python_sdk.rs`): a `ping` naming the call, which rides the call's own
//! stream, a `ping` about no call, which a Streamable HTTP server sends on
//! the MCP session's standalone `GET` stream, and a list change on each.
//! Over stdio the one pipe carries all four; over HTTP the client hears
//! the second two only while it holds the standalone stream
//! (`ClientBuilder::standalone_stream`).
//!
//! The HTTP server here is `Speaker`: a thread per connection, so that the
//! standalone stream, the call's stream and the answers can all be open
//! at once (the one-connection [`scripted`](crate::scripted) server cannot).
//! The stdio one is `stdio_server --scripted` (its `speak` tool).

use std::io::{BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use toolhost::client::{
    CancelHandle, Client, ClientBuilder, ClientError, Era, McpClient, StdioServer,
};
use toolhost_tests::wait_for;

use crate::scripted::{json_reply, read_request, Seen};

const SSE_HEAD: &[u8] =
    b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n";

/// Writes one message as one SSE event in one chunk.
fn send_event(stream: &mut TcpStream, message: &Value) {
    let event = format!("event: message\ndata: {message}\n\n");
    let _ = stream.write_all(format!("{:x}\r\n{event}\r\n", event.len()).as_bytes());
}

/// What the speaker's connections share.
#[derive(Default)]
struct Shared {
    /// The standalone stream, while one is open.
    standalone: Mutex<Option<TcpStream>>,
    /// How many `GET`s opened it.
    gets: AtomicUsize,
    /// The answers the client POSTed, and a wake-up for the tool waiting on them.
    answers: Mutex<Vec<Value>>,
    answered: Condvar,
    stopping: AtomicBool,
    /// Answer a `GET` with 405, as a server without the stream does.
    refuse_get: AtomicBool,
}

/// An MCP server of 2025-11-25 with one tool, `speak(wait_ms)`: on its
/// call's stream it sends `ping` (id `on-call`) and a list change; on the
/// standalone stream, when one is open, a list change and `ping` (id
/// `alone`) — with none open those are lost, as the SDK's are. It waits
/// up to `wait_ms` for both answers, then returns the ones that came,
/// by id, as JSON text.
struct Speaker {
    url: String,
    shared: Arc<Shared>,
    addr: std::net::SocketAddr,
}

impl Speaker {
    fn start() -> Speaker {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let shared = Arc::new(Shared::default());
        let serving = Arc::clone(&shared);
        thread::spawn(move || {
            for stream in listener.incoming() {
                if serving.stopping.load(Ordering::SeqCst) {
                    return;
                }
                let Ok(stream) = stream else { continue };
                let shared = Arc::clone(&serving);
                thread::spawn(move || serve(stream, &shared));
            }
        });
        Speaker {
            url: format!("http://{addr}/mcp"),
            shared,
            addr,
        }
    }

    fn gets(&self) -> usize {
        self.shared.gets.load(Ordering::SeqCst)
    }

    fn standalone_open(&self) -> bool {
        self.shared.standalone.lock().unwrap().is_some()
    }
}

/// Stops accepting: the acceptor wakes for one last connection and leaves.
impl Drop for Speaker {
    fn drop(&mut self) {
        self.shared.stopping.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(self.addr);
    }
}

fn serve(stream: TcpStream, shared: &Shared) {
    let mut reader = BufReader::new(stream);
    while let Some(seen) = read_request(&mut reader) {
        let stream = reader.get_mut();
        match (seen.method.as_str(), seen.body["method"].as_str()) {
            ("GET", _) if shared.refuse_get.load(Ordering::SeqCst) => {
                shared.gets.fetch_add(1, Ordering::SeqCst);
                let _ = stream
                    .write_all(b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n");
            }
            ("GET", _) => {
                shared.gets.fetch_add(1, Ordering::SeqCst);
                // Known before its head is sent, as the SDK's is.
                *shared.standalone.lock().unwrap() = Some(stream.try_clone().unwrap());
                let _ = stream.write_all(SSE_HEAD);
                // Held until the client hangs up.
                while read_request(&mut reader).is_some() {}
                *shared.standalone.lock().unwrap() = None;
                return;
            }
            ("DELETE", _) => {
                let _ = stream.write_all(b"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n");
            }
            (_, Some("initialize")) => {
                let init = json!({"jsonrpc": "2.0", "id": seen.id(), "result": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"tools": {"listChanged": true}},
                    "serverInfo": {"name": "speaker", "version": "1"}}});
                let _ = stream.write_all(&json_reply(200, "Mcp-Session-Id: s-1\r\n", &init));
            }
            (_, Some("tools/call")) => speak(stream, &seen, shared),
            // Notifications, and the client's answers (no method).
            (_, method) => {
                if method.is_none() {
                    shared.answers.lock().unwrap().push(seen.body.clone());
                    shared.answered.notify_all();
                }
                let _ = stream.write_all(b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n");
            }
        }
    }
}

fn speak(stream: &mut TcpStream, seen: &Seen, shared: &Shared) {
    let wait = Duration::from_millis(
        seen.body["params"]["arguments"]["wait_ms"]
            .as_u64()
            .unwrap(),
    );
    let changed = json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"});
    let _ = stream.write_all(SSE_HEAD);
    send_event(
        stream,
        &json!({"jsonrpc": "2.0", "id": "on-call", "method": "ping"}),
    );
    send_event(stream, &changed);
    if let Some(standalone) = shared.standalone.lock().unwrap().as_mut() {
        send_event(standalone, &changed);
        send_event(
            standalone,
            &json!({"jsonrpc": "2.0", "id": "alone", "method": "ping"}),
        );
    }
    let deadline = Instant::now() + wait;
    let mut answers = shared.answers.lock().unwrap();
    while answers.len() < 2 && Instant::now() < deadline {
        let left = deadline.saturating_duration_since(Instant::now());
        answers = shared.answered.wait_timeout(answers, left).unwrap().0;
    }
    let mut heard: Vec<Value> = answers.drain(..).collect();
    drop(answers);
    heard.sort_by_key(|answer| answer["id"].to_string());
    let text = Value::Array(heard).to_string();
    send_event(
        stream,
        &json!({"jsonrpc": "2.0", "id": seen.id(), "result": {"content": [{"type": "text", "text": text}]}}),
    );
    let _ = stream.write_all(b"0\r\n\r\n");
}

/// A count of the list changes a client heard, and the callback that counts.
fn heard() -> (Arc<AtomicUsize>, impl Fn() + Send + Sync + 'static) {
    let changes = Arc::new(AtomicUsize::new(0));
    let count = Arc::clone(&changes);
    (changes, move || {
        count.fetch_add(1, Ordering::SeqCst);
    })
}

/// The answers `speak` heard from `client`, as JSON.
fn speak_through(client: &mut impl McpClient, wait_ms: u64) -> Value {
    let result = client
        .call_tool("speak", json!({"wait_ms": wait_ms}))
        .unwrap();
    assert!(!result.is_error, "{}", result.text());
    serde_json::from_str(&result.text()).unwrap()
}

/// Both pings answered with an empty result, each once.
fn both_answered() -> Value {
    json!([
        {"jsonrpc": "2.0", "id": "alone", "result": {}},
        {"jsonrpc": "2.0", "id": "on-call", "result": {}},
    ])
}

fn http(url: &str) -> ClientBuilder {
    Client::builder(url).era(Era::Stateful)
}

#[test]
fn a_ping_about_no_call_and_both_list_changes_reach_an_http_client_holding_the_standalone_stream_as_they_reach_a_stdio_client(
) {
    // Over stdio: the one pipe.
    let log = std::env::temp_dir().join(format!("toolhost-alike-{}.log", std::process::id()));
    let (changes, count) = heard();
    let mut stdio = StdioServer::new(env!("CARGO_BIN_EXE_stdio_server"))
        .arg("--scripted")
        .arg(&log)
        .on_tools_changed(count)
        .connect()
        .unwrap();
    assert_eq!(speak_through(&mut stdio, 20_000), both_answered());
    assert_eq!(changes.load(Ordering::SeqCst), 2, "stdio");
    drop(stdio);
    let _ = std::fs::remove_file(&log);

    // Over HTTP, holding the standalone stream: alike. The list change
    // sent alone comes before the ping whose answer the tool waits for,
    // so both were heard when the call returns.
    let speaker = Speaker::start();
    let (changes, count) = heard();
    let mut client = http(&speaker.url)
        .standalone_stream(true)
        .on_tools_changed(count)
        .connect()
        .unwrap();
    assert!(client.holds_standalone_stream());
    assert_eq!(speak_through(&mut client, 20_000), both_answered());
    assert_eq!(changes.load(Ordering::SeqCst), 2, "HTTP");
    // One stream for the client's life, not one per call.
    assert_eq!(speak_through(&mut client, 20_000), both_answered());
    assert_eq!(changes.load(Ordering::SeqCst), 4);
    assert_eq!(speaker.gets(), 1);
    // Dropping the client ends its stream.
    drop(client);
    wait_for("the standalone stream to end with its client", || {
        !speaker.standalone_open()
    });
}

#[test]
fn an_http_client_without_the_standalone_stream_hears_only_what_rides_the_calls_stream() {
    let speaker = Speaker::start();
    let (changes, count) = heard();
    let mut client = http(&speaker.url)
        .on_tools_changed(count)
        .connect()
        .unwrap();
    assert!(!client.holds_standalone_stream());
    // The tool waits its short while for the ping sent alone, in vain.
    assert_eq!(
        speak_through(&mut client, 300),
        json!([{"jsonrpc": "2.0", "id": "on-call", "result": {}}])
    );
    assert_eq!(changes.load(Ordering::SeqCst), 1, "the call's own");
    assert_eq!(speaker.gets(), 0, "no stream was opened");
    // Without a callback a list change is let pass, as over stdio.
    let mut silent = http(&speaker.url)
        .standalone_stream(true)
        .connect()
        .unwrap();
    assert_eq!(speak_through(&mut silent, 20_000), both_answered());
}

#[test]
fn a_server_refusing_the_standalone_stream_is_not_asked_again_and_the_client_works_on() {
    // A server with no standalone stream answers its GET with 405.
    let speaker = Speaker::start();
    speaker.shared.refuse_get.store(true, Ordering::SeqCst);
    let mut client = http(&speaker.url)
        .standalone_stream(true)
        .connect()
        .unwrap();
    assert!(!client.holds_standalone_stream());
    for _ in 0..2 {
        assert_eq!(
            speak_through(&mut client, 300),
            json!([{"jsonrpc": "2.0", "id": "on-call", "result": {}}])
        );
    }
    assert!(!client.holds_standalone_stream());
    assert_eq!(speaker.gets(), 1, "asked once, at connect");
}

#[test]
fn watch_tools_changed_answers_a_ping_on_its_stream_and_hears_the_change() {
    let speaker = Speaker::start();
    let watcher = http(&speaker.url).connect().unwrap();
    let cancel = CancelHandle::new();
    let changes = AtomicUsize::new(0);
    thread::scope(|scope| {
        let watch = scope.spawn(|| {
            watcher.watch_tools_changed(&cancel, || {
                changes.fetch_add(1, Ordering::SeqCst);
            })
        });
        wait_for("the watch to open the stream", || speaker.standalone_open());
        // Another client's call: the speaker's standalone stream is the watch's.
        let mut caller = http(&speaker.url).connect().unwrap();
        assert_eq!(speak_through(&mut caller, 20_000), both_answered());
        assert_eq!(changes.load(Ordering::SeqCst), 1);
        cancel.cancel();
        assert!(matches!(watch.join().unwrap(), Err(ClientError::Cancelled)));
    });
}
