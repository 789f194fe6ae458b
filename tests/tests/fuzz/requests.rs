//! Whole requests: the headers of each revision, spoiled (duplicates,
//! losses, garbage, floods), chunked bodies good and broken, and the
//! generator of a case.

use crate::fixture::Fixture;
use crate::messages::{mutate_bytes, mutate_json, render, template};
use crate::rng::Rng;
use crate::{REVISIONS, STATELESS};

/// One generated request and what its answer may look like.
pub(crate) struct Case {
    pub(crate) bytes: Vec<u8>,
    /// The head carries the live bearer (header or capability path).
    pub(crate) authorized: bool,
    /// A HEAD request: answers have no body.
    pub(crate) head: bool,
    /// A GET or `subscriptions/listen`: an event-stream answer stays open,
    /// so only its head is read.
    pub(crate) may_stream: bool,
    /// tiny_http may close without answering: a non-ASCII head, or a small
    /// `Content-Length` the body never reaches.
    pub(crate) may_close_silently: bool,
    /// A `Content-Length` past what the host drains: it cannot answer
    /// without reading the body, and leaves the connection open for good.
    pub(crate) abandoned: bool,
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

pub(crate) fn generate(rng: &mut Rng, fx: &Fixture) -> Case {
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
