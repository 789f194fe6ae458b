//! A scripted server for what the host does not do: each request is
//! answered with the next scripted reply, and what the client sent is
//! reported for the tests to check.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::thread::{self, JoinHandle};

use serde_json::{json, Value};
use toolhost::client::{Client, Era};

/// One request as the scripted server saw it.
#[derive(Debug)]
pub(crate) struct Seen {
    pub(crate) method: String,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: Value,
}

impl Seen {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub(crate) fn id(&self) -> Value {
        self.body["id"].clone()
    }
}

pub(crate) type Reply = Box<dyn FnOnce(&Seen) -> Vec<u8> + Send>;

/// Appended to a reply's bytes: the server hangs up after writing the rest.
pub(crate) const HANG_UP: &[u8] = b"<hang up>";

/// A server that answers each request with the next scripted reply, one
/// connection at a time, and reports what it saw and how many connections
/// carried a request. (A connection that sends nothing is not counted: on
/// a machine running other tests, something retrying a port that was
/// closed can reach this one once it is reused.)
pub(crate) struct Scripted {
    pub(crate) url: String,
    pub(crate) done: JoinHandle<(Vec<Seen>, usize)>,
}

pub(crate) fn scripted(replies: Vec<Reply>) -> Scripted {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let done = thread::spawn(move || {
        let mut replies = replies.into_iter();
        let mut seen = Vec::new();
        let mut connections = 0;
        'accept: while replies.len() > 0 {
            let (stream, _) = listener.accept().unwrap();
            let mut reader = BufReader::new(stream);
            let mut first = true;
            loop {
                let Some(request) = read_request(&mut reader) else {
                    continue 'accept;
                };
                if first {
                    connections += 1;
                    first = false;
                }
                let Some(reply) = replies.next() else {
                    break 'accept;
                };
                let bytes = reply(&request);
                seen.push(request);
                if bytes.is_empty() {
                    continue 'accept; // hang up without answering
                }
                let (bytes, hang_up) = match bytes.strip_suffix(HANG_UP) {
                    Some(rest) => (rest, true),
                    None => (&bytes[..], false),
                };
                reader.get_mut().write_all(bytes).unwrap();
                if replies.len() == 0 {
                    break 'accept;
                }
                if hang_up {
                    continue 'accept;
                }
            }
        }
        (seen, connections)
    });
    Scripted { url, done }
}

pub(crate) fn read_request(reader: &mut BufReader<TcpStream>) -> Option<Seen> {
    let mut line = String::new();
    if reader.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let method = line.split(' ').next()?.to_owned();
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).ok()?;
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        let (name, value) = line.split_once(':')?;
        headers.push((name.trim().to_owned(), value.trim().to_owned()));
    }
    let length: usize = headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
        .map_or(0, |(_, v)| v.parse().unwrap());
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some(Seen {
        method,
        headers,
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
    })
}

pub(crate) fn json_reply(status: u16, headers: &str, body: &Value) -> Vec<u8> {
    let body = body.to_string();
    format!(
        "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\n{headers}Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// A chunked event stream, one chunk per event.
pub(crate) fn sse_reply(events: &[Value]) -> Vec<u8> {
    let mut chunks: Vec<String> = vec![
        "id: prime-1\r\ndata: \r\n\r\n".into(),
        ": keepalive\r\n\r\n".into(),
    ];
    chunks.extend(
        events
            .iter()
            .map(|e| format!("event: message\r\ndata: {e}\r\n\r\n")),
    );
    sse_stream(&chunks, true)
}

/// A chunked event stream of raw SSE text, one chunk per item; `ended`
/// writes the last chunk, else the stream stops where the items do.
pub(crate) fn sse_stream(chunks: &[String], ended: bool) -> Vec<u8> {
    let mut out =
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
            .to_vec();
    for chunk in chunks {
        out.extend_from_slice(format!("{:x}\r\n{chunk}\r\n", chunk.len()).as_bytes());
    }
    if ended {
        out.extend_from_slice(b"0\r\n\r\n");
    }
    out
}

/// One SSE event with an id, carrying `message`.
pub(crate) fn event(id: &str, message: &Value) -> String {
    format!("id: {id}\nevent: message\ndata: {message}\n\n")
}

pub(crate) fn progress_message(token: &Value, n: u32) -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/progress",
        "params": {"progressToken": token, "progress": n, "total": 3}})
}

pub(crate) fn result(seen: &Seen, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": seen.id(), "result": result})
}

pub(crate) fn ok(body: impl Fn(&Seen) -> Value + Send + 'static) -> Reply {
    Box::new(move |seen| json_reply(200, "", &body(seen)))
}

pub(crate) fn accepted() -> Reply {
    Box::new(|_| b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n".to_vec())
}

pub(crate) fn page(tools: &[&str], next: Option<&str>) -> Reply {
    let tools: Vec<Value> = tools
        .iter()
        .map(|name| json!({"name": name, "inputSchema": {"type": "object"}}))
        .collect();
    let next = next.map(str::to_owned);
    ok(move |seen| {
        let mut page = json!({"tools": tools});
        if let Some(next) = &next {
            page["nextCursor"] = next.clone().into();
        }
        result(seen, page)
    })
}

pub(crate) fn stateless(url: &str) -> Client {
    Client::builder(url).era(Era::Stateless).connect().unwrap()
}

/// The `initialize` answer (session id `s-1`) and the acknowledgement of
/// `notifications/initialized` of a stateful server at `revision`.
pub(crate) fn handshake(revision: &'static str) -> Vec<Reply> {
    vec![
        Box::new(move |seen: &Seen| {
            let init = result(
                seen,
                json!({"protocolVersion": revision, "capabilities": {"tools": {}},
                    "serverInfo": {"name": "scripted", "version": "1"}}),
            );
            json_reply(200, "Mcp-Session-Id: s-1\r\n", &init)
        }),
        accepted(),
    ]
}

pub(crate) fn stateful(url: &str) -> Client {
    Client::builder(url)
        .era(Era::Stateful)
        .bearer("secret")
        .connect()
        .unwrap()
}
