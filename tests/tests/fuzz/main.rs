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
//!
//! The run is here; the host under fuzz is in [`fixture`], the cases are
//! made in [`messages`] and [`requests`] from [`rng`]'s numbers, and
//! [`answers`] reads and checks what comes back.

mod answers;
mod fixture;
mod messages;
mod requests;
mod rng;
mod streams;

use std::io::{BufReader, ErrorKind, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use serde_json::json;
use toolhost_tests::{Conn, McpClient, JSON_HEADERS};

use crate::answers::{check_answer, read_answer, Answer};
use crate::fixture::{fixture, Fixture, FuzzPanic};
use crate::messages::meta;
use crate::requests::{generate, Case};
use crate::rng::Rng;

/// Every status the host (or tiny_http in front of it) may answer with.
const STATUSES: [u16; 13] = [
    200, 202, 204, 400, 401, 403, 404, 405, 406, 413, 415, 431, 503,
];
const DEFAULT_CASES: u64 = 3_000;
const DEFAULT_SEED: u64 = 0x7001_4057_f022_2026;
const READ_TIMEOUT: Duration = Duration::from_secs(10);
/// How long an abandoned request (a body past what the host drains) is
/// watched for an answer that must not come.
const ABANDONED_SILENCE: Duration = Duration::from_millis(300);
const MAX_BODY: usize = 32 << 10;
const REVISIONS: [&str; 5] = [
    "2024-11-05",
    "2025-03-26",
    "2025-06-18",
    "2025-11-25",
    "2026-07-28",
];
const STATELESS: usize = 4;

fn env_u64(name: &str) -> Option<u64> {
    let text = std::env::var(name).ok()?;
    let text = text.trim();
    match text.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => text.parse().ok(),
    }
}

/// Sends one case and checks everything that comes back.
fn run_case(fx: &Fixture, case: &Case) -> Result<Vec<Answer>, String> {
    let stream = TcpStream::connect(fx.host.local_addr()).map_err(|e| e.to_string())?;
    // An abandoned request gets no answer: its silence is what is checked.
    let wait = if case.abandoned {
        ABANDONED_SILENCE
    } else {
        READ_TIMEOUT
    };
    stream.set_read_timeout(Some(wait)).unwrap();
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
                let last = answer.open_stream || (case.abandoned && answer.status != 100);
                answers.push(answer);
                if last {
                    break;
                }
            }
            Ok(None) => break,
            Err(err) if err.kind() == ErrorKind::ConnectionReset => break,
            Err(err) if matches!(err.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                if case.abandoned {
                    return Ok(answers);
                }
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
