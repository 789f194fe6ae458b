//! Stdio MCP servers for the tests of toolhost's stdio client and bridge.
//!
//! - With the stdio relay's two variables set (`toolhost::stdio_bridge`):
//!   the crate's relay in front of a session the test opened, so that the
//!   test decides the server's tools and sees their calls. Before relaying
//!   it writes one line to stderr, `stdio_server: relaying as process PID`,
//!   so that a test can see stderr reach an event hook.
//! - With `--scripted LOG`: a small server of fixed behaviour that writes
//!   every line it receives to the file `LOG`, for the protocol details a
//!   relay in front of toolhost would never show: it refuses `initialize`
//!   offers newer than 2025-06-18 with an error (as strict servers do),
//!   asks the client `roots/list` and sends a log message (`notice`,
//!   logger `scripted`) as soon as it is initialized (no call in flight),
//!   and serves two tools: `ask_back`, which logs `asked back` (`info`),
//!   pings the client and asks its roots before it answers with what it
//!   heard, and `hang`, which never answers.
//!
//! Otherwise it says what it needs on stderr and exits with status 2.

use std::fs::File;
use std::io::{self, BufRead, Write};
use std::process::ExitCode;

use serde_json::{json, Value};
use toolhost::stdio_bridge::{AUTHORIZATION_VAR, URL_VAR};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [flag, log] = args.as_slice() {
        if flag == "--scripted" {
            return match scripted(log) {
                Ok(()) => ExitCode::SUCCESS,
                Err(err) => {
                    eprintln!("stdio_server: {err}");
                    ExitCode::FAILURE
                }
            };
        }
    }
    if std::env::var_os(URL_VAR).is_some() {
        eprintln!("stdio_server: relaying as process {}", std::process::id());
    }
    // With the variables set, this relays and exits.
    toolhost::stdio_bridge::run_if_requested();
    eprintln!(
        "stdio_server: set {URL_VAR} and {AUTHORIZATION_VAR} to a session's URL and authorization, or pass --scripted LOG"
    );
    ExitCode::from(2)
}

/// The revisions the scripted server accepts, newest first.
const ACCEPTED: [&str; 3] = ["2025-06-18", "2025-03-26", "2024-11-05"];

fn scripted(log: &str) -> io::Result<()> {
    let mut log = File::create(log)?;
    let mut out = io::stdout().lock();
    let mut send = |message: Value| -> io::Result<()> {
        writeln!(out, "{message}")?;
        out.flush()
    };
    let mut lines = io::stdin().lock().lines();
    while let Some(line) = lines.next() {
        let line = line?;
        writeln!(log, "{line}")?;
        log.flush()?;
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let id = message.get("id").cloned();
        match message.get("method").and_then(Value::as_str) {
            Some("initialize") => {
                let offered = message["params"]["protocolVersion"].as_str().unwrap_or("");
                if ACCEPTED.contains(&offered) {
                    send(json!({"jsonrpc": "2.0", "id": id, "result": {
                        "protocolVersion": offered,
                        "capabilities": {"tools": {"listChanged": true}},
                        "serverInfo": {"name": "scripted", "version": "1"}}}))?;
                } else {
                    send(json!({"jsonrpc": "2.0", "id": id, "error": {
                        "code": -32602, "message": format!("unsupported protocol version {offered}")}}))?;
                }
            }
            Some("notifications/initialized") => {
                send(json!({"jsonrpc": "2.0", "id": "early-roots", "method": "roots/list"}))?;
                send(
                    json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {
                    "level": "notice", "logger": "scripted", "data": "initialized; no call in flight"}}),
                )?;
            }
            Some("tools/list") => {
                send(json!({"jsonrpc": "2.0", "id": id, "result": {"tools": [
                    {"name": "ask_back", "inputSchema": {"type": "object"}},
                    {"name": "hang", "inputSchema": {"type": "object"}}]}}))?;
            }
            Some("tools/call") if message["params"]["name"] == "ask_back" => {
                send(
                    json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {
                    "level": "info", "logger": "scripted", "data": "asked back"}}),
                )?;
                send(json!({"jsonrpc": "2.0", "id": "ping-1", "method": "ping"}))?;
                send(json!({"jsonrpc": "2.0", "id": "roots-1", "method": "roots/list"}))?;
                let mut heard = Vec::new();
                while heard.len() < 2 {
                    let Some(line) = lines.next() else {
                        return Ok(());
                    };
                    let line = line?;
                    writeln!(log, "{line}")?;
                    log.flush()?;
                    let answer: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
                    if answer.get("method").is_none() {
                        heard.push(answer);
                    }
                }
                send(json!({"jsonrpc": "2.0", "id": id, "result": {"content": [
                    {"type": "text", "text": Value::Array(heard).to_string()}]}}))?;
            }
            // `hang` never answers; notifications are only logged.
            _ => {}
        }
    }
    Ok(())
}
