//! What comes back: each answer read off the wire, and checked (status,
//! headers, JSON-RPC shape, no bearer).

use std::io::{self, BufRead};

use serde_json::{json, Value};

use crate::STATUSES;

/// One answer as it came off the wire.
#[derive(Debug)]
pub(crate) struct Answer {
    pub(crate) status_line: String,
    pub(crate) status: u16,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: Vec<u8>,
    /// An event stream left open (only its head was read).
    pub(crate) open_stream: bool,
    /// The answer to a HEAD request, which has no body.
    pub(crate) bodiless: bool,
}

impl Answer {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
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
pub(crate) fn read_answer(
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
    // Well formed: an `Upgrade` only on a 101, one `Connection` at most.
    if answer.header("upgrade").is_some() && status != 101 {
        return Err(io::Error::other(format!("an Upgrade header on a {status}")));
    }
    let connections = answer
        .headers
        .iter()
        .filter(|(name, _)| name.eq_ignore_ascii_case("connection"))
        .count();
    if connections > 1 {
        return Err(io::Error::other(format!(
            "{connections} Connection headers"
        )));
    }
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

pub(crate) fn check_answer(answer: &Answer, token: &str) -> Result<(), String> {
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
