//! Stdio MCP servers for the tests of toolhost's stdio client and bridge.
//!
//! - With the stdio relay's two variables set (`toolhost::relay`):
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
//!   and serves three tools: `ask_back`, which logs `asked back` (`info`),
//!   pings the client and asks its roots before it answers with what it
//!   heard; `hang`, which never answers; and `speak`, which sends what an
//!   HTTP server would send on its call's stream and on its standalone
//!   stream — `ping` (id `on-call`), a list change, a list change, `ping`
//!   (id `alone`) — and answers with the two answers it heard, by id (as
//!   `Speaker` does in `tests/tests/client/alike.rs`).
//!
//! - With `--misbehave MODE [FILE]`: a server that misbehaves as the
//!   gateway's isolation tests need (`tests/tests/gateway_isolation.rs`):
//!   - `silent`: reads everything and never answers, not even `initialize`;
//!   - `names`: lists tools named `""`, `ok` (twice: the second collides),
//!     `has space` and `meta` (whose `_meta` carries a reserved
//!     `io.modelcontextprotocol/serverInfo` beside an ordinary key);
//!   - `hang FILE`: lists `wait`, which answers only once the file `FILE`
//!     exists (every call held until then answered at once), and `ping`,
//!     which answers at once; each `notifications/cancelled` it reads adds
//!     a line to `FILE.cancelled`;
//!   - `slow MS`: answers `initialize` only after `MS` milliseconds, then
//!     lists `ping`;
//!   - `crash`: lists `crash`, which makes it exit mid-call, and `ping`;
//!   - `huge`: lists `huge`, whose result is 2 MiB of text, `noisy`,
//!     which sends a 2 MiB progress message before it answers `ok`, and
//!     `small`, which answers `small`;
//!   - `chatty N`: lists `ping`; after it answers its second
//!     `tools/list`, writes `N` lines to stderr (`chatter K`, the only
//!     lines it writes there) and sends `N` log messages (`notice`), no
//!     call in flight;
//!   - `pages N`: lists its tools in `N` pages of 1,000 (`t<page>_<n>`),
//!     following the cursor it gave, and says `stdio_server: tools/list
//!     page K` on stderr as it answers page `K` (from 1).
//!
//! Otherwise it says what it needs on stderr and exits with status 2.

use std::fs::File;
use std::io::{self, BufRead, Write};
use std::process::ExitCode;

use serde_json::{json, Value};
use toolhost::relay::{AUTHORIZATION_VAR, URL_VAR};

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
    if let Some(("--misbehave", rest)) = args.split_first().map(|(f, r)| (f.as_str(), r)) {
        let mode = rest.first().map(String::as_str).unwrap_or("");
        return match misbehave(mode, rest.get(1).map(String::as_str)) {
            Ok(()) => ExitCode::SUCCESS,
            Err(err) => {
                eprintln!("stdio_server: {err}");
                ExitCode::FAILURE
            }
        };
    }
    if std::env::var_os(URL_VAR).is_some() {
        eprintln!("stdio_server: relaying as process {}", std::process::id());
    }
    // With the variables set, this relays and exits.
    toolhost::relay::run_if_requested();
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
                    {"name": "hang", "inputSchema": {"type": "object"}},
                    {"name": "speak", "inputSchema": {"type": "object"}}]}}))?;
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
            Some("tools/call") if message["params"]["name"] == "speak" => {
                let changed =
                    json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"});
                send(json!({"jsonrpc": "2.0", "id": "on-call", "method": "ping"}))?;
                send(changed.clone())?;
                send(changed)?;
                send(json!({"jsonrpc": "2.0", "id": "alone", "method": "ping"}))?;
                let mut heard = Vec::new();
                while heard.len() < 2 {
                    let Some(line) = lines.next() else {
                        return Ok(());
                    };
                    let line = line?;
                    writeln!(log, "{line}")?;
                    log.flush()?;
                    let answer: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
                    // Only its own: the answer to `early-roots` may come late.
                    if answer["id"] == "on-call" || answer["id"] == "alone" {
                        heard.push(answer);
                    }
                }
                heard.sort_by_key(|answer| answer["id"].to_string());
                send(json!({"jsonrpc": "2.0", "id": id, "result": {"content": [
                    {"type": "text", "text": Value::Array(heard).to_string()}]}}))?;
            }
            // `hang` never answers; notifications are only logged.
            _ => {}
        }
    }
    Ok(())
}

/// The tools each misbehaving mode lists.
fn misbehaving_tools(mode: &str) -> Value {
    let tool = |name: &str| json!({"name": name, "inputSchema": {"type": "object"}});
    match mode {
        "names" => json!([
            tool(""),
            tool("ok"),
            tool("ok"),
            tool("has space"),
            {"name": "meta", "inputSchema": {"type": "object"}, "_meta": {
                "io.modelcontextprotocol/serverInfo": {"name": "app-impersonation"},
                "com.example/owner": "tests"}},
        ]),
        "hang" => json!([tool("wait"), tool("ping")]),
        "crash" => json!([tool("crash"), tool("ping")]),
        "slow" | "chatty" => json!([tool("ping")]),
        "huge" => json!([tool("huge"), tool("noisy"), tool("small")]),
        _ => json!([]),
    }
}

fn misbehave(mode: &str, file: Option<&str>) -> io::Result<()> {
    use std::sync::{Arc, Mutex};
    let out = Arc::new(Mutex::new(io::stdout()));
    let send = {
        let out = Arc::clone(&out);
        move |message: Value| -> io::Result<()> {
            let mut out = out.lock().unwrap();
            writeln!(out, "{message}")?;
            out.flush()
        }
    };
    let answer = |id: &Value, text: &str| json!({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": text}]}});
    // `hang`: the calls of `wait` held until the file exists, answered by
    // a thread that watches for it.
    let held: Arc<Mutex<Option<Vec<Value>>>> = Arc::new(Mutex::new(Some(Vec::new())));
    if let (Some(file), "hang") = (file, mode) {
        let (held, send) = (Arc::clone(&held), send.clone());
        let file = file.to_owned();
        std::thread::spawn(move || loop {
            if std::path::Path::new(&file).exists() {
                let ids = held.lock().unwrap().take().unwrap_or_default();
                for id in ids {
                    let _ = send(answer(&id, "done"));
                }
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        });
    }
    let mut listed = 0;
    for line in io::stdin().lock().lines() {
        let line = line?;
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        if mode == "silent" {
            continue;
        }
        let id = message.get("id").cloned().unwrap_or(Value::Null);
        match message.get("method").and_then(Value::as_str) {
            Some("initialize") if mode == "slow" => {
                let ms = file.and_then(|ms| ms.parse().ok()).unwrap_or(1000);
                std::thread::sleep(std::time::Duration::from_millis(ms));
                send(json!({"jsonrpc": "2.0", "id": id, "result": {
                    "protocolVersion": message["params"]["protocolVersion"],
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "misbehaving-slow", "version": "1"}}}))?;
            }
            Some("initialize") => send(json!({"jsonrpc": "2.0", "id": id, "result": {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": format!("misbehaving-{mode}"), "version": "1"}}}))?,
            Some("tools/list") if mode == "pages" => {
                let pages: usize = file.and_then(|n| n.parse().ok()).unwrap_or(1);
                let page: usize = message["params"]["cursor"]
                    .as_str()
                    .and_then(|cursor| cursor.parse().ok())
                    .unwrap_or(0);
                eprintln!("stdio_server: tools/list page {}", page + 1);
                let tools: Vec<Value> = (0..1000)
                    .map(|n| json!({"name": format!("t{page}_{n}"), "inputSchema": {"type": "object"}}))
                    .collect();
                let mut result = json!({"tools": tools});
                if page + 1 < pages {
                    result["nextCursor"] = (page + 1).to_string().into();
                }
                send(json!({"jsonrpc": "2.0", "id": id, "result": result}))?;
            }
            Some("tools/list") if mode == "chatty" => {
                send(json!({"jsonrpc": "2.0", "id": id, "result": {
                    "tools": misbehaving_tools(mode)}}))?;
                listed += 1;
                if listed == 2 {
                    let lines: usize = file.and_then(|n| n.parse().ok()).unwrap_or(1);
                    let mut err = io::stderr().lock();
                    for n in 0..lines {
                        writeln!(err, "chatter {n}")?;
                        send(json!({"jsonrpc": "2.0", "method": "notifications/message",
                            "params": {"level": "notice", "data": format!("chatter {n}")}}))?;
                    }
                }
            }
            Some("tools/list") => send(json!({"jsonrpc": "2.0", "id": id, "result": {
                "tools": misbehaving_tools(mode)}}))?,
            Some("tools/call") => match message["params"]["name"].as_str() {
                Some("wait") => {
                    let mut held = held.lock().unwrap();
                    match held.as_mut() {
                        Some(ids) => ids.push(id),
                        None => send(answer(&id, "done"))?,
                    }
                }
                Some("crash") => std::process::exit(1),
                Some("huge") => send(answer(&id, &"x".repeat(2 << 20)))?,
                Some("noisy") => {
                    let token = message["params"]["_meta"]["progressToken"].clone();
                    send(
                        json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {
                        "progressToken": token, "progress": 1, "message": "y".repeat(2 << 20)}}),
                    )?;
                    send(answer(&id, "ok"))?;
                }
                Some(other) => send(answer(&id, other))?,
                None => {}
            },
            Some("ping") => send(json!({"jsonrpc": "2.0", "id": id, "result": {}}))?,
            Some("notifications/cancelled") => {
                if let Some(file) = file {
                    let mut log = std::fs::OpenOptions::new()
                        .create(true)
                        .append(true)
                        .open(format!("{file}.cancelled"))?;
                    writeln!(log, "{}", message["params"]["requestId"])?;
                }
            }
            _ => {}
        }
    }
    Ok(())
}
