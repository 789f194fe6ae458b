//! A fuzz harness over the whole request path: raw bytes over a real socket
//! to a really bound host, and every byte that comes back checked.
//!
//! Each case starts from a real MCP message of one of the five revisions
//! (initialize, tools/list, tools/call, batches, notifications, responses,
//! 2026-07-28 requests with `_meta` and their `Mcp-*` headers,
//! `server/discover`, `subscriptions/listen`, GET streams, DELETE), then
//! mutates it: JSON type swaps, huge numbers, deep nesting, odd unicode,
//! byte flips and truncation, duplicate, missing and garbage headers,
//! floods, a `Content-Length` that lies, chunked bodies (good and broken),
//! pipelined requests, other methods and paths, and no bearer or a dead one.
//!
//! Properties, per case: every answer is well-formed HTTP with a status from
//! [`STATUSES`] (never 500); a JSON body is one line and a JSON-RPC response
//! or error (or a batch of them); refusals carry their headers
//! (`WWW-Authenticate`, `Allow`, `Retry-After`); no answer or event carries
//! the bearer; nothing hangs (every read has a timeout); a case without the
//! bearer never reaches a handler. After the run an ordinary client is
//! served in both eras, and `calls_served` equals the handlers' own count.
//!
//! `TOOLHOST_FUZZ_CASES=N` runs longer, `TOOLHOST_FUZZ_SEED=S` picks another
//! seed, and `TOOLHOST_FUZZ_CASE=I` replays one case of a seed. A failure
//! prints all three.

use std::io::{self, BufRead, BufReader, ErrorKind, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use toolhost::{HostConfig, StaticSurface, Tool, ToolHost, ToolOutcome, ToolSession};
use toolhost_tests::{Conn, McpClient, JSON_HEADERS};

/// Every status the host (or tiny_http in front of it) may answer with.
const STATUSES: [u16; 13] = [
    200, 202, 204, 400, 401, 403, 404, 405, 406, 413, 415, 431, 503,
];
const DEFAULT_CASES: u64 = 3_000;
const DEFAULT_SEED: u64 = 0x7001_4057_f022_2026;
const READ_TIMEOUT: Duration = Duration::from_secs(10);
const MAX_BODY: usize = 32 << 10;
const REVISIONS: [&str; 5] = [
    "2024-11-05",
    "2025-03-26",
    "2025-06-18",
    "2025-11-25",
    "2026-07-28",
];
const STATELESS: usize = 4;

/// xorshift64*, seeded through splitmix64 so that neighbouring seeds differ.
/// A gentle generator spoils nothing on its dials: its requests are the
/// well-formed ones that reach deep into the protocol.
struct Rng(u64, bool);

impl Rng {
    fn new(seed: u64) -> Rng {
        let mut z = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        Rng((z ^ (z >> 31)) | 1, false)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    /// One of `n` choices, the last being the well-behaved one.
    fn dial(&mut self, n: usize) -> usize {
        if self.1 {
            n - 1
        } else {
            self.below(n)
        }
    }

    /// Whether to spoil something, `percent` of the time unless gentle.
    fn spoil(&mut self, percent: usize) -> bool {
        !self.1 && self.chance(percent)
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

fn env_u64(name: &str) -> Option<u64> {
    let text = std::env::var(name).ok()?;
    let text = text.trim();
    match text.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => text.parse().ok(),
    }
}

/// The host under fuzz and what a case may borrow from it.
struct Fixture {
    host: ToolHost,
    session: ToolSession,
    token: String,
    revoked: String,
    handled: Arc<AtomicUsize>,
    leaked: Arc<AtomicBool>,
    /// MCP sessions by revision index, topped up from `initialize` answers.
    mcp_sessions: Vec<(usize, String)>,
}

fn fixture() -> Fixture {
    let token_slot = Arc::new(std::sync::OnceLock::<String>::new());
    let leaked = Arc::new(AtomicBool::new(false));
    let (watch, flag) = (Arc::clone(&token_slot), Arc::clone(&leaked));
    let host = ToolHost::bind(
        HostConfig::default()
            .workers(6)
            .max_body_bytes(MAX_BODY)
            .keep_alive(Duration::from_millis(20))
            .capability_urls(true)
            .on_event(move |event| {
                if let Some(token) = watch.get() {
                    if format!("{event:?}").contains(&token[3..]) {
                        flag.store(true, Ordering::SeqCst);
                    }
                }
            }),
    )
    .unwrap();
    let handled = Arc::new(AtomicUsize::new(0));
    let session = host.open_session(fuzz_surface(&handled));
    let token = session.authorization()["Bearer ".len()..].to_owned();
    token_slot.set(token.clone()).unwrap();
    let dead = host.open_session(StaticSurface::new());
    let revoked = dead.authorization()["Bearer ".len()..].to_owned();
    drop(dead);
    let mcp_sessions = (0..STATELESS)
        .map(|rev| {
            let mut client = McpClient::for_session(&host, &session);
            client.initialize(REVISIONS[rev]);
            (rev, client.session_id.unwrap())
        })
        .collect();
    Fixture {
        host,
        session,
        token,
        revoked,
        handled,
        leaked,
        mcp_sessions,
    }
}

/// Tools that answer, stream progress, decline, fail, panic, and route on
/// a header; every run is counted.
fn fuzz_surface(handled: &Arc<AtomicUsize>) -> StaticSurface {
    let count = |handled: &Arc<AtomicUsize>| {
        let handled = Arc::clone(handled);
        move || handled.fetch_add(1, Ordering::SeqCst)
    };
    let (echo, add, progress, decline, boom, route) = (
        count(handled),
        count(handled),
        count(handled),
        count(handled),
        count(handled),
        count(handled),
    );
    StaticSurface::new()
        .tool(
            Tool::new("echo", "Echoes text.").input_schema(json!({"type": "object",
                "properties": {"text": {"type": "string"}}, "required": ["text"]})),
            move |args, _| {
                echo();
                ToolOutcome::text(args["text"].as_str().unwrap_or_default())
            },
        )
        .unwrap()
        .tool(
            Tool::new("add", "Adds.").input_schema(json!({"type": "object",
                "properties": {"a": {"type": "number"}, "b": {"type": "number"}}})),
            move |args, _| {
                add();
                let sum = args["a"].as_f64().unwrap_or(0.0) + args["b"].as_f64().unwrap_or(0.0);
                ToolOutcome::json(json!({ "sum": sum }))
            },
        )
        .unwrap()
        .tool(Tool::new("progress", "Reports progress."), move |_, ctx| {
            progress();
            for step in 1..=3 {
                ctx.progress(f64::from(step), Some(3.0), Some("step"));
            }
            ToolOutcome::text("done")
        })
        .unwrap()
        .tool(Tool::new("decline", "Declines."), move |_, _| {
            decline();
            ToolOutcome::declined("not today")
        })
        .unwrap()
        .tool(Tool::new("boom", "Panics."), move |_, _| -> ToolOutcome {
            boom();
            std::panic::panic_any(FuzzPanic)
        })
        .unwrap()
        .tool(
            Tool::new("route", "Routes on a header.").input_schema(json!({"type": "object",
                "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}})),
            move |_, _| {
                route();
                ToolOutcome::text("routed")
            },
        )
        .unwrap()
}

/// The payload of the `boom` tool's panic, which the panic hook keeps quiet.
struct FuzzPanic;

/// One generated request and what its answer may look like.
struct Case {
    bytes: Vec<u8>,
    /// The head carries the live bearer (header or capability path).
    authorized: bool,
    /// A HEAD request: answers have no body.
    head: bool,
    /// A GET or `subscriptions/listen`: an event-stream answer stays open,
    /// so only its head is read.
    may_stream: bool,
    /// tiny_http may close without answering: a non-ASCII head, or a small
    /// `Content-Length` the body never reaches.
    may_close_silently: bool,
    /// A `Content-Length` past what the host drains: it answers and then
    /// leaves the connection open for good.
    abandoned: bool,
}

/// A JSON value to be replaced by raw text after serialization.
fn fragment(frags: &mut Vec<String>, text: String) -> Value {
    frags.push(text);
    Value::String(format!("\u{1}frag{}\u{1}", frags.len() - 1))
}

fn render(value: &Value, frags: &[String]) -> Vec<u8> {
    let mut text = value.to_string();
    for (n, frag) in frags.iter().enumerate() {
        text = text.replace(&format!("\"\\u0001frag{n}\\u0001\""), frag);
    }
    text.into_bytes()
}

fn meta(rng: &mut Rng) -> Value {
    let mut meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "fuzz", "version": "1"},
    });
    if rng.chance(20) {
        meta["io.modelcontextprotocol/logLevel"] = json!(rng.pick(&["debug", "error", "loud"]));
    }
    if rng.chance(20) {
        meta["progressToken"] = json!(rng.below(100));
    }
    meta
}

/// A real message of revision `rev`: its method, tool name and JSON.
fn template(rng: &mut Rng, rev: usize) -> (String, String, Value) {
    let id = json!(rng.below(1000));
    let tool = (*rng.pick(&[
        "echo", "add", "progress", "decline", "boom", "route", "nope",
    ]))
    .to_owned();
    let args = match tool.as_str() {
        "echo" => json!({"text": "hello"}),
        "add" => json!({"a": 1, "b": 2.5}),
        "route" => json!({"region": "eu-west"}),
        _ => json!({}),
    };
    let mut call_params = json!({"name": tool, "arguments": args});
    if rng.chance(20) {
        call_params["_meta"] = json!({"progressToken": "p1"});
    }
    let request = |method: &str, params: Value| json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    let notification =
        |method: &str, params: Value| json!({"jsonrpc": "2.0", "method": method, "params": params});
    let (method, message) = if rev == STATELESS {
        let method = *rng.pick(&[
            "server/discover",
            "tools/list",
            "tools/call",
            "tools/call",
            "subscriptions/listen",
            "prompts/list",
            "resources/read",
            "initialize",
            "notifications/cancelled",
        ]);
        let mut params = match method {
            "tools/call" => call_params,
            "subscriptions/listen" => json!({"notifications": {"toolsListChanged": true}}),
            "resources/read" => json!({"uri": "file:///x"}),
            "notifications/cancelled" => json!({"requestId": 1}),
            _ => json!({}),
        };
        params["_meta"] = meta(rng);
        if method.starts_with("notifications/") {
            (method, notification(method, params))
        } else {
            (method, request(method, params))
        }
    } else {
        match rng.below(12) {
            0 => (
                "initialize",
                request(
                    "initialize",
                    json!({"protocolVersion": REVISIONS[rev], "capabilities": {},
                        "clientInfo": {"name": "fuzz", "version": "1"}}),
                ),
            ),
            1 => (
                "notifications/initialized",
                notification("notifications/initialized", json!({})),
            ),
            2 => ("ping", request("ping", json!({}))),
            3 => ("tools/list", request("tools/list", json!({"cursor": null}))),
            4..=6 => ("tools/call", request("tools/call", call_params)),
            7 => (
                "logging/setLevel",
                request("logging/setLevel", json!({"level": "info"})),
            ),
            8 => (
                "notifications/cancelled",
                notification(
                    "notifications/cancelled",
                    json!({"requestId": id, "reason": "fuzz"}),
                ),
            ),
            9 => (
                "response",
                json!({"jsonrpc": "2.0", "id": id, "result": {}}),
            ),
            _ => (
                "batch",
                json!([
                    request("ping", json!({})),
                    request("tools/call", call_params),
                    notification("notifications/initialized", json!({})),
                ]),
            ),
        }
    };
    (method.to_owned(), tool, message)
}

/// A random node of `value`, to mutate in place.
fn random_node<'a>(rng: &mut Rng, value: &'a mut Value) -> &'a mut Value {
    let children = match value {
        Value::Object(map) => map.len(),
        Value::Array(items) => items.len(),
        _ => 0,
    };
    if children == 0 || rng.chance(30) {
        return value;
    }
    let n = rng.below(children);
    match value {
        Value::Object(map) => match map.values_mut().nth(n) {
            Some(child) => random_node(rng, child),
            None => unreachable!("n is below the length"),
        },
        Value::Array(items) => random_node(rng, &mut items[n]),
        _ => unreachable!("only containers have children"),
    }
}

const HUGE_NUMBERS: [&str; 9] = [
    "1e400",
    "-1e400",
    "18446744073709551616",
    "-9223372036854775809",
    "123456789012345678901234567890123456789",
    "4.9e-324",
    "-0",
    "1E+2",
    "0.30000000000000004",
];
const BROKEN_JSON: [&str; 10] = [
    "NaN",
    "Infinity",
    "'x'",
    "01",
    "\"\\ud800\"",
    "\"\\udc00\\ud800\"",
    "\"\\u00\"",
    "tru",
    "[1,]",
    "\"\u{1}\"",
];
const UNICODE: [&str; 9] = [
    "grüße",
    "𝕏🙂",
    "\u{202e}evil",
    "\u{0}",
    "\u{feff}bom",
    "名前",
    "\u{10ffff}",
    "a\u{300}\u{300}",
    "\\\"",
];

fn random_value(rng: &mut Rng) -> Value {
    match rng.below(7) {
        0 => Value::Null,
        1 => json!(rng.chance(50)),
        2 => json!(rng.next() as i64),
        3 => json!(f64::from(rng.below(1000) as u32) / 7.0),
        4 => json!(rng.pick(&UNICODE)),
        5 => json!([1, "two", null]),
        _ => json!({"k": "v"}),
    }
}

fn mutate_json(rng: &mut Rng, message: &mut Value, frags: &mut Vec<String>) {
    let node = random_node(rng, message);
    match rng.below(9) {
        0 => *node = random_value(rng),
        1 => match node {
            Value::Object(map) if !map.is_empty() => {
                let key = map.keys().nth(rng.below(map.len())).cloned().unwrap();
                map.remove(&key);
            }
            other => *other = Value::Null,
        },
        2 => match node {
            Value::Object(map) => {
                map.insert((*rng.pick(&UNICODE)).to_owned(), random_value(rng));
            }
            other => *other = json!({"wrapped": other.take()}),
        },
        3 => *node = fragment(frags, (*rng.pick(&HUGE_NUMBERS)).to_owned()),
        4 => {
            let depth = *rng.pick(&[64, 127, 128, 129, 500, 5_000]);
            let nested = if rng.chance(50) {
                format!("{}{}", "[".repeat(depth), "]".repeat(depth))
            } else {
                format!("{}1{}", "{\"a\":".repeat(depth), "}".repeat(depth))
            };
            *node = fragment(frags, nested);
        }
        5 => *node = json!(rng.pick(&UNICODE).repeat(1 + rng.below(50))),
        6 => *node = fragment(frags, (*rng.pick(&BROKEN_JSON)).to_owned()),
        7 => *node = json!([node.take()]),
        _ => *node = json!("x".repeat(rng.below(2 * MAX_BODY))),
    }
}

fn mutate_bytes(rng: &mut Rng, bytes: &mut Vec<u8>) {
    for _ in 0..=rng.below(3) {
        if bytes.is_empty() {
            bytes.push(rng.next() as u8);
            continue;
        }
        let at = rng.below(bytes.len());
        match rng.below(6) {
            0 => bytes[at] ^= 1 << rng.below(8),
            1 => bytes.truncate(at),
            2 => bytes.insert(at, rng.next() as u8),
            3 => {
                let end = (at + 1 + rng.below(16)).min(bytes.len());
                bytes.drain(at..end);
            }
            4 => {
                let end = (at + 1 + rng.below(64)).min(bytes.len());
                let span = bytes[at..end].to_vec();
                bytes.splice(at..at, span);
            }
            _ => bytes[at] = *rng.pick(b"{}[]\",:\\\0\xff\r\n"),
        }
    }
}

/// The headers of a well-behaved client of revision `rev`, each sometimes
/// left out or spoiled.
fn headers(
    rng: &mut Rng,
    fx: &Fixture,
    rev: usize,
    method: &str,
    tool: &str,
) -> Vec<(String, String)> {
    let port = fx.host.local_addr().port();
    let mut headers: Vec<(String, String)> = Vec::new();
    let mut add = |name: &str, value: String| headers.push((name.to_owned(), value));
    let host = match rng.dial(20) {
        0 => format!("localhost:{port}"),
        1 => format!("[::1]:{port}"),
        2 => format!("evil.test:{port}"),
        3 => "127.0.0.1".to_owned(),
        4 => String::new(),
        _ => format!("127.0.0.1:{port}"),
    };
    if !host.is_empty() {
        add("Host", host);
    }
    let bearer = match rng.dial(16) {
        0 => None,
        1 => Some(format!("Bearer th_{}", "0".repeat(80))),
        2 => Some(format!("Bearer {}", fx.revoked)),
        3 => Some("Basic dXNlcjpwYXNz".to_owned()),
        4 => Some("Bearer ".to_owned()),
        5 => Some(format!("bearer   {}  ", fx.token)),
        6 => Some(format!("Bearer {}x", fx.token)),
        _ => Some(format!("Bearer {}", fx.token)),
    };
    if let Some(bearer) = bearer {
        add("Authorization", bearer);
    }
    match rng.dial(14) {
        0 => {}
        1 => add("Content-Type", "text/plain".into()),
        2 => add("Content-Type", "application/json; charset=utf-8".into()),
        3 => add("Content-Type", "application/x-www-form-urlencoded".into()),
        _ => add("Content-Type", "application/json".into()),
    }
    match rng.dial(12) {
        0 => {}
        1 => add("Accept", "text/html".into()),
        2 => add("Accept", "*/*".into()),
        3 => add("Accept", "application/json".into()),
        _ => add("Accept", "application/json, text/event-stream".into()),
    }
    if rev == STATELESS {
        if !rng.spoil(8) {
            let version = if !rng.spoil(10) {
                REVISIONS[STATELESS]
            } else {
                rng.pick(&REVISIONS)
            };
            add("MCP-Protocol-Version", version.to_owned());
        }
        if !rng.spoil(8) {
            let header = match rng.dial(12) {
                0 => "tools/list".to_owned(),
                1 => "=?base64?dG9vbHMvbGlzdA==?=".to_owned(),
                2 => "=?base64?!!?=".to_owned(),
                _ => method.to_owned(),
            };
            add("Mcp-Method", header);
        }
        if method == "tools/call" && !rng.spoil(8) {
            add("Mcp-Name", tool.to_owned());
        }
        if tool == "route" && !rng.spoil(30) {
            let region = *rng.pick(&["eu-west", "us-east", "=?base64?ZXUtd2VzdA==?="]);
            add("Mcp-Param-Region", region.to_owned());
        }
    } else {
        let known: Vec<&String> = fx
            .mcp_sessions
            .iter()
            .filter(|(r, _)| *r == rev)
            .map(|(_, id)| id)
            .collect();
        match rng.dial(10) {
            0 => {}
            1 => add("Mcp-Session-Id", "not-a-session".into()),
            2 => add(
                "Mcp-Session-Id",
                fx.mcp_sessions[rng.below(STATELESS)].1.clone(),
            ),
            _ => add("Mcp-Session-Id", (*rng.pick(&known)).clone()),
        }
        if rev >= 2 && !rng.spoil(10) {
            let version = if !rng.spoil(15) {
                REVISIONS[rev]
            } else {
                *rng.pick(&["1999-01-01", "2026-07-28", "2025-03-26", ""])
            };
            add("MCP-Protocol-Version", version.to_owned());
        }
        if rng.spoil(6) {
            // Resumption ids: real-looking, foreign, absurd and malformed.
            let id = match rng.dial(8) {
                0 => format!("{}-{}", rng.below(4), rng.below(4)),
                1 => "18446744073709551616-0".to_owned(),
                2 => format!("1-{}", "9".repeat(40)),
                3 => "-".to_owned(),
                4 => " 1-1 ".to_owned(),
                5 => "1-1-1".to_owned(),
                6 => "é-1".to_owned(),
                _ => String::new(),
            };
            add("Last-Event-ID", id);
        }
    }
    if rng.spoil(5) {
        let origin = *rng.pick(&["http://localhost:3000", "http://evil.test", "null"]);
        add("Origin", origin.to_owned());
    }
    if rng.spoil(5) {
        add(
            "Connection",
            (*rng.pick(&["close", "keep-alive", "upgrade"])).to_owned(),
        );
    }
    headers
}

/// Spoils the header lines: duplicates, losses, garbage, floods, odd bytes.
fn mutate_header_lines(rng: &mut Rng, lines: &mut Vec<Vec<u8>>) {
    for _ in 0..=rng.below(2) {
        let at = rng.below(lines.len() + 1);
        match rng.below(9) {
            0 if !lines.is_empty() => {
                let line = lines[rng.below(lines.len())].clone();
                lines.insert(at, line);
            }
            1 if at < lines.len() => {
                lines.remove(at);
            }
            2 => lines.insert(at, b"this line has no colon".to_vec()),
            3 => {
                let flood =
                    (0..1 + rng.below(300)).map(|i| format!("X-Fuzz-{i}: {i}").into_bytes());
                lines.splice(at..at, flood);
            }
            4 => {
                let big = format!("X-Big: {}", "b".repeat(1 + rng.below(48 << 10)));
                lines.insert(at, big.into_bytes());
            }
            5 if at < lines.len() => lines[at].make_ascii_lowercase(),
            6 if at < lines.len() => lines[at].extend_from_slice(b" \t "),
            7 if rng.chance(30) => lines.insert(at, "X-Name: gr\u{fc}\u{df}e".as_bytes().to_vec()),
            _ => lines.insert(at, b"X-Empty:".to_vec()),
        }
    }
}

/// Encodes `body` in random chunks, sometimes broken.
fn chunked(rng: &mut Rng, body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut rest = body;
    while !rest.is_empty() {
        let size = (1 + rng.below(64)).min(rest.len());
        let (chunk, tail) = rest.split_at(size);
        if rng.chance(3) {
            out.extend_from_slice(b"zz\r\n");
        } else if rng.chance(3) {
            out.extend_from_slice(format!("{size:x};ext=1\r\n").as_bytes());
        } else {
            out.extend_from_slice(format!("{size:x}\r\n").as_bytes());
        }
        out.extend_from_slice(chunk);
        out.extend_from_slice(b"\r\n");
        rest = tail;
    }
    if !rng.chance(5) {
        out.extend_from_slice(b"0\r\n\r\n");
    }
    out
}

fn generate(rng: &mut Rng, fx: &Fixture) -> Case {
    rng.1 = rng.chance(35);
    let rev = rng.below(REVISIONS.len());
    let (method, tool, mut message) = template(rng, rev);
    let mut frags = Vec::new();
    if rng.spoil(60) {
        for _ in 0..=rng.below(3) {
            mutate_json(rng, &mut message, &mut frags);
        }
    }
    let mut body = render(&message, &frags);
    if rng.spoil(20) {
        mutate_bytes(rng, &mut body);
    }
    let verb = match rng.dial(40) {
        0..=1 => "GET",
        2..=3 => "DELETE",
        4 => "PUT",
        5 => "HEAD",
        6 => "OPTIONS",
        7 => "P\u{d6}ST",
        _ => "POST",
    };
    let path = match rng.dial(40) {
        0 => "/mcp?x=1".to_owned(),
        1 => "/MCP".to_owned(),
        2 => "/".to_owned(),
        3 => format!("/cap/{}/mcp", fx.token),
        4 => format!("/cap/{}/mcp", fx.revoked),
        5 => format!("/{}", "a".repeat(rng.below(10_000))),
        _ => "/mcp".to_owned(),
    };
    let version = if rng.spoil(5) { "HTTP/1.0" } else { "HTTP/1.1" };
    let mut lines: Vec<Vec<u8>> = headers(rng, fx, rev, &method, &tool)
        .into_iter()
        .map(|(name, value)| format!("{name}: {value}").into_bytes())
        .collect();
    if rng.spoil(30) {
        mutate_header_lines(rng, &mut lines);
    }
    let mut abandoned = false;
    let framed = match rng.dial(40) {
        0..=4 => {
            lines.push(b"Transfer-Encoding: chunked".to_vec());
            chunked(rng, &body)
        }
        5 => {
            let declared = rng.below(body.len() + 1);
            lines.push(format!("Content-Length: {declared}").into_bytes());
            body
        }
        6 => {
            let declared = body.len() + 1 + rng.below(2_000);
            lines.push(format!("Content-Length: {declared}").into_bytes());
            body
        }
        7 => {
            let garbage = *rng.pick(&["abc", "-1", "1e3", " 12", "0x10", ""]);
            lines.push(format!("Content-Length: {garbage}").into_bytes());
            body
        }
        8 if rng.chance(10) => {
            abandoned = true;
            lines.push(b"Content-Length: 1000000000000000".to_vec());
            body
        }
        9 => {
            lines.push(format!("Content-Length: {}", body.len()).into_bytes());
            lines.push(b"Expect: 100-continue".to_vec());
            body
        }
        10 => body,
        _ => {
            lines.push(format!("Content-Length: {}", body.len()).into_bytes());
            body
        }
    };
    let may_close_silently = short_body(&lines, framed.len());
    let mut bytes = format!("{verb} {path} {version}\r\n").into_bytes();
    for line in &lines {
        bytes.extend_from_slice(line);
        bytes.extend_from_slice(b"\r\n");
    }
    bytes.extend_from_slice(b"\r\n");
    let head_len = bytes.len();
    bytes.extend_from_slice(&framed);
    if rng.chance(4) {
        // A second, well-formed request on the same connection.
        let ping = br#"{"jsonrpc":"2.0","id":"second","method":"ping"}"#;
        bytes.extend_from_slice(
            format!(
                "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
                fx.host.local_addr().port(),
                fx.token,
                ping.len()
            )
            .as_bytes(),
        );
        bytes.extend_from_slice(ping);
    }
    let head = &bytes[..head_len];
    let authorized = head
        .windows(fx.token.len())
        .any(|w| w == fx.token.as_bytes());
    Case {
        may_close_silently: may_close_silently || !head.is_ascii(),
        authorized,
        head: verb == "HEAD",
        may_stream: verb == "GET" || method == "subscriptions/listen",
        abandoned,
        bytes,
    }
}

/// Whether tiny_http waits for a body of at most 1 KiB that never fully
/// comes (it buffers such bodies itself, and closes without an answer at
/// their early end): the first `Content-Length` counts, unless a
/// `Transfer-Encoding` is there.
fn short_body(lines: &[Vec<u8>], sent: usize) -> bool {
    let header = |name: &str| {
        lines.iter().find_map(|line| {
            let line = String::from_utf8_lossy(line);
            let (n, v) = line.split_once(':')?;
            n.eq_ignore_ascii_case(name).then(|| v.trim().to_owned())
        })
    };
    if header("transfer-encoding").is_some() {
        return false;
    }
    header("content-length")
        .and_then(|v| v.parse::<usize>().ok())
        .is_some_and(|declared| declared > sent && declared <= 1024)
}

/// One answer as it came off the wire.
#[derive(Debug)]
struct Answer {
    status_line: String,
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
    /// An event stream left open (only its head was read).
    open_stream: bool,
    /// The answer to a HEAD request, which has no body.
    bodiless: bool,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

fn read_line(reader: &mut impl BufRead) -> io::Result<Option<String>> {
    let mut line = Vec::new();
    if reader.read_until(b'\n', &mut line)? == 0 {
        return Ok(None);
    }
    if !line.ends_with(b"\r\n") {
        return Err(io::Error::other(format!("line without CRLF: {line:?}")));
    }
    line.truncate(line.len() - 2);
    String::from_utf8(line)
        .map(Some)
        .map_err(|err| io::Error::other(format!("a non-UTF-8 line: {err}")))
}

/// Reads the next answer; `None` at a clean end of the connection. `head`:
/// it answers a HEAD request; `may_stream`: an event stream stays open.
fn read_answer(
    reader: &mut impl BufRead,
    head: bool,
    may_stream: bool,
) -> io::Result<Option<Answer>> {
    let Some(status_line) = read_line(reader)? else {
        return Ok(None);
    };
    let status = status_line
        .strip_prefix("HTTP/1.1 ")
        .or_else(|| status_line.strip_prefix("HTTP/1.0 "))
        .and_then(|rest| rest.get(..3))
        .and_then(|code| code.parse().ok())
        .ok_or_else(|| io::Error::other(format!("a bad status line {status_line:?}")))?;
    let mut headers = Vec::new();
    loop {
        let line = read_line(reader)?
            .ok_or_else(|| io::Error::other("the connection ended inside a head"))?;
        if line.is_empty() {
            break;
        }
        let (name, value) = line
            .split_once(':')
            .ok_or_else(|| io::Error::other(format!("a header line without a colon: {line:?}")))?;
        headers.push((name.trim().to_owned(), value.trim().to_owned()));
    }
    let mut answer = Answer {
        status_line,
        status,
        headers,
        body: Vec::new(),
        open_stream: false,
        bodiless: head,
    };
    let chunked = answer
        .header("transfer-encoding")
        .is_some_and(|te| te.eq_ignore_ascii_case("chunked"));
    let event_stream = answer.header("content-type") == Some("text/event-stream");
    // An absurd Content-Length is refused by handing tiny_http's
    // connection over (`Upgrade: toolhost-refused`) and forgetting it: the
    // head arrives, no body and no end (see src/http.rs `abandon`).
    answer.bodiless |= answer.header("upgrade") == Some("toolhost-refused");
    if answer.bodiless || status == 100 || status == 204 {
        return Ok(Some(answer));
    }
    if event_stream && chunked && may_stream {
        answer.open_stream = true;
        return Ok(Some(answer));
    }
    if let Some(length) = answer.header("content-length") {
        let length: usize = length.parse().map_err(io::Error::other)?;
        answer.body = vec![0; length];
        reader.read_exact(&mut answer.body)?;
    } else if chunked {
        loop {
            let size = read_line(reader)?.ok_or_else(|| io::Error::other("eof in a chunk size"))?;
            let size = usize::from_str_radix(size.trim(), 16).map_err(io::Error::other)?;
            if size == 0 {
                while !read_line(reader)?.unwrap_or_default().is_empty() {}
                break;
            }
            let mut chunk = vec![0; size + 2];
            reader.read_exact(&mut chunk)?;
            if !chunk.ends_with(b"\r\n") {
                return Err(io::Error::other("a chunk without its CRLF"));
            }
            answer.body.extend_from_slice(&chunk[..size]);
        }
    } else {
        return Err(io::Error::other("an answer with neither length nor chunks"));
    }
    Ok(Some(answer))
}

/// A JSON-RPC response or error, as one message.
fn check_rpc(message: &Value) -> Result<(), String> {
    let object = message
        .as_object()
        .ok_or_else(|| format!("not an object: {message}"))?;
    if object.get("jsonrpc") != Some(&json!("2.0")) {
        return Err(format!("no jsonrpc 2.0: {message}"));
    }
    match object.get("id") {
        None | Some(Value::String(_)) => {}
        Some(Value::Number(n)) if n.is_i64() || n.is_u64() => {}
        Some(other) => return Err(format!("an id that is neither string nor integer: {other}")),
    }
    match (object.get("result"), object.get("error")) {
        (Some(Value::Object(_)), None) => Ok(()),
        (None, Some(error)) => {
            let code = error["code"].as_i64();
            let text = error["message"].as_str().unwrap_or("");
            if code.is_none() || text.is_empty() {
                return Err(format!("an error without code or message: {message}"));
            }
            Ok(())
        }
        _ => Err(format!("neither a result nor an error: {message}")),
    }
}

fn check_answer(answer: &Answer, token: &str) -> Result<(), String> {
    if !STATUSES.contains(&answer.status) && answer.status != 100 {
        return Err(format!(
            "status {} is not among {STATUSES:?}",
            answer.status
        ));
    }
    if !answer
        .status_line
        .ends_with(|c: char| c.is_ascii_alphabetic())
    {
        return Err(format!(
            "a status line without reason: {:?}",
            answer.status_line
        ));
    }
    let required = match answer.status {
        401 => Some("www-authenticate"),
        405 => Some("allow"),
        503 => Some("retry-after"),
        _ => None,
    };
    if let Some(name) = required {
        if answer.header(name).is_none() {
            return Err(format!("{} without {name}", answer.status));
        }
    }
    if String::from_utf8_lossy(&answer.body).contains(&token[3..])
        || answer.headers.iter().any(|(_, v)| v.contains(&token[3..]))
    {
        return Err("the answer carries the bearer".into());
    }
    if answer.bodiless || answer.open_stream {
        return Ok(());
    }
    match answer.header("content-type") {
        Some("application/json") => {
            if answer.body.contains(&b'\n') {
                return Err("a JSON body of more than one line".into());
            }
            let message: Value = serde_json::from_slice(&answer.body)
                .map_err(|err| format!("a JSON body that does not parse: {err}"))?;
            match &message {
                Value::Array(items) if answer.status == 200 && !items.is_empty() => {
                    items.iter().try_for_each(check_rpc)
                }
                single => check_rpc(single),
            }?;
            let is_error = message.get("error").is_some();
            if answer.status >= 400 && !is_error {
                return Err(format!("status {} with a non-error body", answer.status));
            }
            Ok(())
        }
        Some("text/event-stream") => {
            let text = String::from_utf8_lossy(&answer.body);
            for data in text.lines().filter_map(|l| l.strip_prefix("data: ")) {
                let message: Value = serde_json::from_str(data)
                    .map_err(|err| format!("an event that is not JSON: {err}"))?;
                match &message {
                    // A 2025-03-26 batch's answers, as the stream's last event.
                    Value::Array(items) => items.iter().try_for_each(check_rpc)?,
                    single if single.get("method").is_none() => check_rpc(single)?,
                    _ => {}
                }
            }
            Ok(())
        }
        None if answer.body.is_empty() => match answer.status {
            // tiny_http's own answer to a request it could not parse.
            400 | 200 | 202 | 204 | 100 => Ok(()),
            other => Err(format!("status {other} without a JSON body")),
        },
        other => Err(format!("an unexpected content type {other:?}")),
    }
}

/// Sends one case and checks everything that comes back.
fn run_case(fx: &Fixture, case: &Case) -> Result<Vec<Answer>, String> {
    let stream = TcpStream::connect(fx.host.local_addr()).map_err(|e| e.to_string())?;
    stream.set_read_timeout(Some(READ_TIMEOUT)).unwrap();
    stream.set_write_timeout(Some(READ_TIMEOUT)).unwrap();
    // The host may refuse and close before taking every byte: a failed
    // write is fine, what it answered is still checked.
    let _ = (&stream).write_all(&case.bytes);
    let _ = stream.shutdown(Shutdown::Write);
    let mut reader = BufReader::new(&stream);
    let mut answers = Vec::new();
    loop {
        // Only the first request can be a HEAD or open a stream: what follows
        // is the pipelined ping.
        let first = answers.iter().all(|a: &Answer| a.status == 100);
        match read_answer(&mut reader, case.head && first, case.may_stream && first) {
            Ok(Some(answer)) => {
                check_answer(&answer, &fx.token)?;
                let last = answer.open_stream
                    || (case.abandoned && answer.status != 100)
                    || answer.header("upgrade").is_some();
                answers.push(answer);
                if last {
                    break;
                }
            }
            Ok(None) => break,
            Err(err) if err.kind() == ErrorKind::ConnectionReset => break,
            Err(err) if matches!(err.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                return Err(format!("no answer within {READ_TIMEOUT:?}: a hang"));
            }
            Err(err) => return Err(format!("a malformed answer: {err}")),
        }
    }
    if answers.iter().all(|a| a.status == 100) && !case.may_close_silently {
        return Err("the connection closed without an answer".into());
    }
    Ok(answers)
}

fn show(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(1_500)]).into_owned();
    format!("{text:?}{}", if bytes.len() > 1_500 { " …" } else { "" })
}

#[test]
fn every_fuzzed_request_gets_a_well_formed_answer_and_the_host_stays_whole() {
    let cases = env_u64("TOOLHOST_FUZZ_CASES").unwrap_or(DEFAULT_CASES);
    let seed = env_u64("TOOLHOST_FUZZ_SEED").unwrap_or(DEFAULT_SEED);
    let only = env_u64("TOOLHOST_FUZZ_CASE");
    let quiet_default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !info.payload().is::<FuzzPanic>() {
            quiet_default(info);
        }
    }));
    let mut fx = fixture();
    let started = Instant::now();
    let mut statuses = std::collections::BTreeMap::<u16, usize>::new();
    let mut silent = 0;
    for index in 0..cases {
        if only.is_some_and(|one| one != index) {
            continue;
        }
        let mut rng = Rng::new(seed ^ index.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let case = generate(&mut rng, &fx);
        let handled_before = fx.handled.load(Ordering::SeqCst);
        let replay = format!(
            "TOOLHOST_FUZZ_SEED={seed:#x} TOOLHOST_FUZZ_CASE={index} (of TOOLHOST_FUZZ_CASES={cases})"
        );
        let answers = run_case(&fx, &case).unwrap_or_else(|why| {
            panic!(
                "{why}\n  replay: {replay}\n  request: {}",
                show(&case.bytes)
            )
        });
        if !case.authorized {
            assert_eq!(
                fx.handled.load(Ordering::SeqCst),
                handled_before,
                "a request without the bearer reached a handler\n  replay: {replay}\n  request: {}",
                show(&case.bytes)
            );
        }
        if answers.is_empty() {
            silent += 1;
        }
        for answer in &answers {
            *statuses.entry(answer.status).or_default() += 1;
            // New MCP sessions join the pool the next cases draw from.
            if let Some(id) = answer.header("mcp-session-id") {
                let text = String::from_utf8_lossy(&answer.body);
                if let Some(rev) = REVISIONS[..STATELESS]
                    .iter()
                    .position(|r| text.contains(&format!("\"protocolVersion\":\"{r}\"")))
                {
                    fx.mcp_sessions.push((rev, id.to_owned()));
                    if fx.mcp_sessions.len() > 32 {
                        fx.mcp_sessions.remove(STATELESS);
                    }
                }
            }
        }
    }
    let elapsed = started.elapsed();
    eprintln!(
        "fuzz: {cases} cases from seed {seed:#x} in {elapsed:.2?}; answers by status {statuses:?}; {silent} closed without an answer; {} handler runs",
        fx.handled.load(Ordering::SeqCst)
    );
    assert!(
        !fx.leaked.load(Ordering::SeqCst),
        "an event carried the bearer"
    );

    // An ordinary client of either era is still served, and the count of
    // calls the host admitted is the count the handlers saw.
    let mut client = McpClient::for_session(&fx.host, &fx.session);
    client.initialize("2025-11-25");
    assert_eq!(
        client.tool_names(),
        ["echo", "add", "progress", "decline", "boom", "route"]
    );
    assert_eq!(
        client.call("echo", json!({"text": "after"}))["content"][0]["text"],
        "after"
    );
    let mut conn = Conn::open(fx.host.local_addr()).unwrap();
    let auth = fx.session.authorization();
    let mut headers: Vec<(&str, &str)> = JSON_HEADERS.to_vec();
    headers.extend([
        ("Authorization", auth.as_str()),
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "echo"),
    ]);
    let mut rng = Rng::new(seed);
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "echo", "arguments": {"text": "stateless"}, "_meta": meta(&mut rng)}});
    let reply = conn
        .request("POST", "/mcp", &headers, body.to_string().as_bytes())
        .unwrap();
    assert_eq!(
        reply.status,
        200,
        "{}",
        String::from_utf8_lossy(&reply.body)
    );
    assert_eq!(
        fx.session.calls_served(),
        fx.handled.load(Ordering::SeqCst) as u64,
        "calls_served counts exactly the handler runs"
    );
    let _ = std::panic::take_hook();
}

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
