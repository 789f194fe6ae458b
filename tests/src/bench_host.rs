//! What the round-trip bench measures: the host's tools, the floor (a bare
//! tiny_http responder), and each server alone, whose memory is read in a
//! child of the bench (`--serve-alone`) and in the `host_alone` and
//! `floor_alone` programs.

use std::io::{self, Cursor, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use serde_json::{json, Value};
use toolhost::{HostConfig, StaticSurface, Tool, ToolHost, ToolOutcome, DEFAULT_WORKERS};

/// Holds a host with the default settings and one session of
/// [`echo_tools`], and nothing else: prints `{"url": URL, "auth":
/// AUTHORIZATION}` on one line and serves until stdin closes.
pub fn serve_alone() -> Result<(), Box<dyn std::error::Error>> {
    let host = ToolHost::bind(HostConfig::default().server_name("roundtrip"))?;
    let echo = host.open_session(echo_tools()?);
    said_and_served(&echo.url(), &echo.authorization())
}

/// Holds [`floor`] with as many workers as a host has by default, and
/// nothing else, as [`serve_alone`] holds a host: the baseline of a host's
/// memory.
pub fn floor_alone() -> Result<(), Box<dyn std::error::Error>> {
    let url = floor(DEFAULT_WORKERS)?;
    // The floor reads no bearer; the load sends one all the same.
    said_and_served(&url, "Bearer floor")
}

fn said_and_served(url: &str, auth: &str) -> Result<(), Box<dyn std::error::Error>> {
    println!("{}", json!({"url": url, "auth": auth}));
    io::stdout().flush()?;
    io::copy(&mut io::stdin(), &mut io::sink())?;
    Ok(())
}

/// `echo` (returns its `text`), `progress3` (three progress notifications,
/// then an answer) and `progress3_spaced` (the same with 1 ms of work
/// before each).
pub fn echo_tools() -> Result<StaticSurface, toolhost::Error> {
    echo_only()?
        .tool(
            Tool::new("progress3", "Reports three steps, then answers."),
            |_, ctx| {
                for step in 1..=3 {
                    ctx.progress(f64::from(step), Some(3.0), None);
                }
                ToolOutcome::text("hello")
            },
        )?
        .tool(
            Tool::new(
                "progress3_spaced",
                "Works 1 ms before each of three steps and the answer.",
            ),
            |_, ctx| {
                for step in 1..=3 {
                    thread::sleep(Duration::from_millis(1));
                    ctx.progress(f64::from(step), Some(3.0), None);
                }
                thread::sleep(Duration::from_millis(1));
                ToolOutcome::text("hello")
            },
        )
}

/// `echo` alone: the one tool the floor lists, so that a first call's
/// `tools/list` carries the same tool from both servers.
pub fn echo_only() -> Result<StaticSurface, toolhost::Error> {
    StaticSurface::new().tool(
        Tool::new("echo", "Echoes text.").input_schema(json!({
            "type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]})),
        |args, _| ToolOutcome::text(args["text"].as_str().unwrap_or_default()),
    )
}

/// Sets `TCP_NODELAY` on a listening socket, for the accepted sockets to
/// copy (Linux, macOS, the BSDs and Windows do), as toolhost does for its
/// own listener.
fn nodelay_listener(listener: TcpListener) -> io::Result<TcpListener> {
    #[cfg(unix)]
    use std::os::fd::OwnedFd as OwnedSocket;
    #[cfg(windows)]
    use std::os::windows::io::OwnedSocket;
    let socket = TcpStream::from(OwnedSocket::from(listener));
    socket.set_nodelay(true)?;
    Ok(TcpListener::from(OwnedSocket::from(socket)))
}

/// As long as toolhost's session ids, so both servers read as many bytes.
const FLOOR_SESSION: &str = "f100f100f100f100f100f100f100f100";
const FLOOR_INIT: &str = r#"{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":false}},"serverInfo":{"name":"floor","version":"1"}}"#;
const FLOOR_LIST: &str = r#"{"tools":[{"name":"echo","description":"Echoes text.","inputSchema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}}]}"#;
const FLOOR_CALL: &str = r#"{"content":[{"type":"text","text":"hello"}],"isError":false}"#;

/// The floor: a bare tiny_http responder with `workers` threads that reads
/// each body, parses it with serde_json and answers a fixed result for its
/// method — what any server must do at least.
pub fn floor(workers: usize) -> Result<String, Box<dyn std::error::Error>> {
    let listener = nodelay_listener(TcpListener::bind("127.0.0.1:0")?)?;
    let url = format!("http://{}/mcp", listener.local_addr()?);
    let server = tiny_http::Server::from_listener(listener, None).map_err(|e| e.to_string())?;
    let server = Arc::new(server);
    for _ in 0..workers {
        let server = Arc::clone(&server);
        // Named, so a profile tells the floor's workers from toolhost's.
        let worker = thread::Builder::new().name("floor-worker".into());
        worker.spawn(move || loop {
            let Ok(mut request) = server.recv() else {
                return;
            };
            let mut body = Vec::new();
            let _ = request.as_reader().read_to_end(&mut body);
            let message: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            let (status, extra, reply) = match message["method"].as_str() {
                _ if message.get("id").is_none() => (202, None, String::new()),
                Some("initialize") => (
                    200,
                    Some(("Mcp-Session-Id", FLOOR_SESSION)),
                    FLOOR_INIT.to_owned(),
                ),
                Some("tools/list") => (200, None, FLOOR_LIST.to_owned()),
                _ => (200, None, FLOOR_CALL.to_owned()),
            };
            let body = if reply.is_empty() {
                Vec::new()
            } else {
                format!(
                    r#"{{"jsonrpc":"2.0","id":{},"result":{reply}}}"#,
                    message["id"]
                )
                .into_bytes()
            };
            let mut headers = Vec::new();
            if !body.is_empty() {
                headers.extend(tiny_http::Header::from_bytes(
                    "Content-Type",
                    "application/json",
                ));
            }
            if let Some((name, value)) = extra {
                headers.extend(tiny_http::Header::from_bytes(name, value));
            }
            let length = body.len();
            let response = tiny_http::Response::new(
                tiny_http::StatusCode(status),
                headers,
                Cursor::new(body),
                Some(length),
                None,
            );
            let _ = request.respond(response);
        })?;
    }
    // The server lives as long as the process.
    std::mem::forget(server);
    Ok(url)
}
