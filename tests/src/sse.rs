//! Event streams (`text/event-stream`) as tests read them: a whole body's
//! events at once, or a live stream event by event over a raw connection,
//! for tests that must act between events.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use serde_json::{json, Value};
use toolhost::{ToolHost, ToolSession};

/// What arrives on a stream.
#[derive(Debug, PartialEq)]
pub enum Item {
    /// An event carrying a JSON message.
    Message(Value),
    /// A keep-alive comment, or an event without data (a priming event).
    Comment,
    /// The end of the stream (its last chunk).
    End,
}

/// Reads an event stream as it arrives, chunk by chunk.
pub struct EventStream {
    reader: BufReader<TcpStream>,
    pending: String,
    /// The id of the last event that carried one (what a client sends back
    /// as `Last-Event-ID`).
    pub last_event_id: Option<String>,
    /// The last `retry:` value received.
    pub retry: Option<String>,
    /// How many events carried an id but no data (priming events).
    pub primed: usize,
}

impl EventStream {
    /// Sends `request` (head and body) and reads the response head, which must open
    /// an event stream.
    pub fn open(addr: std::net::SocketAddr, request: &str) -> EventStream {
        let mut stream = TcpStream::connect(addr).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        stream.write_all(request.as_bytes()).unwrap();
        let mut reader = BufReader::new(stream);
        let mut status = String::new();
        reader.read_line(&mut status).unwrap();
        assert!(status.starts_with("HTTP/1.1 200"), "{status}");
        let mut content_type = None;
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            if line.trim().is_empty() {
                break;
            }
            if let Some((name, value)) = line.split_once(':') {
                if name.eq_ignore_ascii_case("content-type") {
                    content_type = Some(value.trim().to_owned());
                }
            }
        }
        assert_eq!(content_type.as_deref(), Some("text/event-stream"));
        EventStream {
            reader,
            pending: String::new(),
            last_event_id: None,
            retry: None,
            primed: 0,
        }
    }

    /// Reads the next message, which must be the schema-valid
    /// `notifications/cancelled` (2025-11-25) of request `id`; returns its
    /// reason.
    pub fn cancellation_of(&mut self, id: &Value) -> String {
        let notice = self.next_message().expect("the request's cancellation");
        crate::schema::assert_valid("2025-11-25", "JSONRPCNotification", &notice);
        crate::schema::assert_valid("2025-11-25", "CancelledNotification", &notice);
        assert_eq!(notice["method"], "notifications/cancelled", "{notice}");
        assert_eq!(&notice["params"]["requestId"], id, "{notice}");
        notice["params"]["reason"].as_str().unwrap_or("").to_owned()
    }

    /// The next event, comment or end of stream (bounded by the read timeout).
    pub fn next_item(&mut self) -> Item {
        loop {
            if let Some(at) = self.pending.find("\n\n") {
                let event: String = self.pending.drain(..at + 2).collect();
                let mut data: Vec<&str> = Vec::new();
                let mut id = None;
                for line in event.lines() {
                    if let Some(value) = line.strip_prefix("id: ") {
                        id = Some(value.to_owned());
                    } else if let Some(value) = line.strip_prefix("retry: ") {
                        self.retry = Some(value.to_owned());
                    } else if let Some(value) = line.strip_prefix("data:") {
                        data.push(value.strip_prefix(' ').unwrap_or(value));
                    }
                }
                let primed = id.is_some() && data.concat().trim().is_empty();
                if id.is_some() {
                    self.last_event_id = id;
                }
                if primed {
                    self.primed += 1;
                }
                if data.concat().trim().is_empty() {
                    return Item::Comment;
                }
                return Item::Message(serde_json::from_str(&data.join("\n")).unwrap());
            }
            let mut size = String::new();
            self.reader
                .read_line(&mut size)
                .expect("the stream stays readable");
            let size = usize::from_str_radix(size.trim(), 16).expect("a chunk size");
            if size == 0 {
                return Item::End;
            }
            let mut chunk = vec![0; size + 2];
            self.reader.read_exact(&mut chunk).unwrap();
            self.pending
                .push_str(std::str::from_utf8(&chunk[..size]).unwrap());
        }
    }

    /// The next message, skipping keep-alive comments.
    pub fn next_message(&mut self) -> Option<Value> {
        loop {
            match self.next_item() {
                Item::Message(message) => return Some(message),
                Item::Comment => continue,
                Item::End => return None,
            }
        }
    }
}

/// One event of an event-stream body: its fields as sent.
#[derive(Debug, Default)]
pub struct SseEvent {
    /// The `id:` field.
    pub id: Option<String>,
    /// The `retry:` field.
    pub retry: Option<String>,
    /// The `data:` lines joined with newlines; `None` without any.
    pub data: Option<String>,
}

/// The events of an event-stream body (a de-chunked body), in order;
/// comments are skipped.
pub fn sse_events(body: &[u8]) -> Vec<SseEvent> {
    let text = String::from_utf8_lossy(body);
    text.split("\n\n")
        .filter_map(|block| {
            let mut event = SseEvent::default();
            let mut data: Vec<&str> = Vec::new();
            for line in block.lines().filter(|l| !l.starts_with(':')) {
                let (field, value) = line.split_once(':').unwrap_or((line, ""));
                let value = value.strip_prefix(' ').unwrap_or(value);
                match field {
                    "id" => event.id = Some(value.to_owned()),
                    "retry" => event.retry = Some(value.to_owned()),
                    "data" => data.push(value),
                    _ => {}
                }
            }
            if !data.is_empty() {
                event.data = Some(data.join("\n"));
            }
            (event.id.is_some() || event.retry.is_some() || event.data.is_some()).then_some(event)
        })
        .collect()
}

/// The JSON messages of an event-stream body, in order (events with empty
/// data, such as a resumable stream's priming event, carry none).
pub fn sse_messages(body: &[u8]) -> Vec<Value> {
    sse_events(body)
        .into_iter()
        .filter_map(|event| event.data.filter(|d| !d.trim().is_empty()))
        .map(|data| serde_json::from_str(&data).expect("event data is JSON"))
        .collect()
}

/// Opens the standalone `GET` event stream of MCP session `mcp_session`
/// (stateful revisions).
pub fn get_stream(host: &ToolHost, session: &ToolSession, mcp_session: &str) -> EventStream {
    EventStream::open(
        host.local_addr(),
        &format!(
            "GET /mcp HTTP/1.1\r\nHost: {}\r\nAuthorization: {}\r\nMcp-Session-Id: {mcp_session}\r\nAccept: text/event-stream\r\n\r\n",
            host.local_addr(),
            session.authorization()
        ),
    )
}

/// Calls `tool` as request `id` in MCP session `mcp_session` (revision
/// 2025-11-25) on a connection of its own and returns the call's event
/// stream, for tests that act while the call runs (answer its questions,
/// cancel it).
pub fn call_stream(
    host: &ToolHost,
    session: &ToolSession,
    mcp_session: &str,
    id: i64,
    tool: &str,
) -> EventStream {
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                      "params": {"name": tool, "arguments": {}}})
    .to_string();
    EventStream::open(
        host.local_addr(),
        &format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nAuthorization: {}\r\nMcp-Session-Id: {mcp_session}\r\nMCP-Protocol-Version: 2025-11-25\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n{body}",
            host.local_addr(),
            session.authorization(),
            body.len()
        ),
    )
}

/// Opens a 2026-07-28 `subscriptions/listen` stream asking for
/// `notifications` (e.g. `{"toolsListChanged": true}`), as request `id`.
pub fn listen(
    host: &ToolHost,
    session: &ToolSession,
    id: i64,
    notifications: Value,
) -> EventStream {
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen", "params": {
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {}},
        "notifications": notifications}})
    .to_string();
    EventStream::open(
        host.local_addr(),
        &format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nAuthorization: {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: subscriptions/listen\r\nContent-Length: {}\r\n\r\n{body}",
            host.local_addr(),
            session.authorization(),
            body.len()
        ),
    )
}
