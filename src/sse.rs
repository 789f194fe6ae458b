//! Server-sent events over HTTP/1.1 chunked transfer, written by hand.
//!
//! tiny_http buffers a streamed body until a chunk fills, which would hold a
//! progress event back until the call ends; so a streaming response takes the
//! raw connection (`Request::into_writer`) and writes the head and every
//! event itself. Each event is one chunk, built in one buffer and written in
//! one `write` + `flush`, so that with `TCP_NODELAY` it leaves at once in one
//! segment and never waits on the client's delayed ACK.

use std::io::{self, Write};

/// The response head of an event stream; the body follows as chunks.
pub(crate) fn head(extra_headers: &[(&str, &str)]) -> Vec<u8> {
    let mut head = String::from(
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n\
         X-Accel-Buffering: no\r\nTransfer-Encoding: chunked\r\n",
    );
    for (name, value) in extra_headers {
        head.push_str(name);
        head.push_str(": ");
        head.push_str(value);
        head.push_str("\r\n");
    }
    head.push_str("\r\n");
    head.into_bytes()
}

/// One SSE event carrying `data` (split on newlines into `data:` lines, as
/// the format requires), framed as one HTTP chunk.
pub(crate) fn event_chunk(data: &str) -> Vec<u8> {
    event_chunk_with_id(None, data)
}

/// [`event_chunk`] with an event id, which a client that loses the stream
/// sends back as `Last-Event-ID` to resume after it.
pub(crate) fn event_chunk_with_id(id: Option<&str>, data: &str) -> Vec<u8> {
    let mut event = String::with_capacity(data.len() + 32);
    if let Some(id) = id {
        event.push_str("id: ");
        event.push_str(id);
        event.push('\n');
    }
    event.push_str("event: message\n");
    for line in data.split('\n') {
        event.push_str("data: ");
        event.push_str(line.strip_suffix('\r').unwrap_or(line));
        event.push('\n');
    }
    event.push('\n');
    chunk(event.as_bytes())
}

/// A comment line, which clients ignore: keeps idle streams and proxies
/// alive, and shows the writer whether the client is still there.
pub(crate) fn keep_alive_chunk() -> Vec<u8> {
    chunk(b": keep-alive\n\n")
}

/// The event that opens a resumable stream: an id and empty data, so the
/// client holds an id to resume from before any message was sent (clients
/// skip events with empty data).
pub(crate) fn priming_chunk(id: &str) -> Vec<u8> {
    chunk(format!("id: {id}\ndata:\n\n").as_bytes())
}

/// Sets how long the client waits before reconnecting, in milliseconds: sent
/// right before the server closes a stream it expects the client to resume.
pub(crate) fn retry_chunk(millis: u128) -> Vec<u8> {
    chunk(format!("retry: {millis}\n\n").as_bytes())
}

/// The end of a chunked body.
pub(crate) const LAST_CHUNK: &[u8] = b"0\r\n\r\n";

fn chunk(payload: &[u8]) -> Vec<u8> {
    let mut out = format!("{:x}\r\n", payload.len()).into_bytes();
    out.extend_from_slice(payload);
    out.extend_from_slice(b"\r\n");
    out
}

/// Writes `bytes` and pushes them to the socket.
pub(crate) fn send(writer: &mut dyn Write, bytes: &[u8]) -> io::Result<()> {
    writer.write_all(bytes)?;
    writer.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_is_one_chunk_of_data_lines_ending_in_a_blank_line() {
        let chunk = event_chunk("{\"a\":1}");
        let text = String::from_utf8(chunk).unwrap();
        let body = "event: message\ndata: {\"a\":1}\n\n";
        assert_eq!(text, format!("{:x}\r\n{body}\r\n", body.len()));
    }

    #[test]
    fn multi_line_data_becomes_several_data_lines() {
        let text = String::from_utf8(event_chunk("a\r\nb\nc")).unwrap();
        assert!(text.contains("data: a\ndata: b\ndata: c\n\n"), "{text:?}");
    }

    #[test]
    fn ids_priming_and_retry_are_their_own_fields() {
        let text = String::from_utf8(event_chunk_with_id(Some("4-2"), "{}")).unwrap();
        assert!(
            text.contains("\r\nid: 4-2\nevent: message\ndata: {}\n\n"),
            "{text:?}"
        );
        assert_eq!(priming_chunk("4-0"), b"f\r\nid: 4-0\ndata:\n\n\r\n");
        assert_eq!(retry_chunk(1500), b"d\r\nretry: 1500\n\n\r\n");
    }

    #[test]
    fn the_head_asks_intermediaries_not_to_buffer() {
        let head = String::from_utf8(head(&[("Mcp-Session-Id", "x")])).unwrap();
        assert!(head.starts_with("HTTP/1.1 200 OK\r\n"));
        assert!(head.contains("X-Accel-Buffering: no\r\n"));
        assert!(head.contains("Transfer-Encoding: chunked\r\n"));
        assert!(head.ends_with("Mcp-Session-Id: x\r\n\r\n"));
    }
}
