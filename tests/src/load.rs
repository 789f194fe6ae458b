//! A load generator light enough to saturate a server core from one client
//! core: one keep-alive connection per thread, the request built once as
//! bytes (only its id changes, in place), each response read by its
//! `Content-Length` into a reused buffer and judged by its status and one
//! marker in the body — no JSON parsed, nothing allocated per call.
//!
//! A heavy client makes every server look like the floor: the round-trip
//! bench compares toolhost with a bare tiny_http responder, and the
//! comparison says something only while the client spends less per call
//! than either server (see BENCHMARKS.md, which reports both processes'
//! CPU next to each row).
//!
//! The MCP session of a stateful connection is opened beforehand by the
//! crate's own client (`initialize`, `notifications/initialized`), outside
//! anything timed.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::ops::Range;
use std::time::Duration;

use serde_json::{json, Value};

/// Stands for the request id in the template, replaced before each call:
/// a string id of fixed width, so the request's length never changes.
const ID_PLACEHOLDER: &str = "id-00000000";

/// What the body of a successful call holds.
const SUCCESS_MARKER: &[u8] = br#""isError":false"#;

/// The era and MCP headers of a load connection.
#[derive(Clone, Debug)]
pub enum LoadSession {
    /// An MCP session opened by `initialize`: its id and revision.
    Stateful {
        /// The `Mcp-Session-Id`.
        session_id: String,
        /// The negotiated revision, for `MCP-Protocol-Version`.
        revision: String,
    },
    /// 2026-07-28: no session, `_meta` and the method headers in every
    /// request.
    Stateless,
}

/// How one call went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Answer {
    /// 200 and a result with `"isError":false`.
    Success,
    /// 200 and anything else (a tool error).
    ToolError,
    /// 503: every call slot and the line of waiting calls were full.
    Busy,
    /// Any other status.
    Status(u16),
}

/// One keep-alive connection sending one request again and again: a
/// `tools/call` of one tool, or any other method (see [`LoadConn::request`]).
pub struct LoadConn {
    stream: TcpStream,
    request: Vec<u8>,
    /// Where the placeholder's digits are in `request`.
    digits_at: usize,
    next_id: u32,
    buffer: Vec<u8>,
    /// Where the last response's body is in `buffer`.
    body: Range<usize>,
}

impl LoadConn {
    /// Connects to `addr` (path `/mcp`) and builds the request that calls
    /// `tool` with `arguments`, with the `Authorization` value `auth`.
    pub fn open(
        addr: SocketAddr,
        auth: &str,
        session: &LoadSession,
        tool: &str,
        arguments: &Value,
    ) -> io::Result<LoadConn> {
        let params = json!({"name": tool, "arguments": arguments});
        LoadConn::request(addr, auth, session, "tools/call", Some(tool), params)
    }

    /// Connects to `addr` (path `/mcp`) and builds the request of `method`
    /// with `params` (an object) and the `Authorization` value `auth`;
    /// `name` is the tool or prompt it names, for the 2026-07-28 headers.
    pub fn request(
        addr: SocketAddr,
        auth: &str,
        session: &LoadSession,
        method: &str,
        name: Option<&str>,
        mut params: Value,
    ) -> io::Result<LoadConn> {
        let stream = TcpStream::connect(addr)?;
        stream.set_nodelay(true)?;
        stream.set_read_timeout(Some(Duration::from_secs(30)))?;
        let mut head = format!(
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nAuthorization: {auth}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
        );
        match session {
            LoadSession::Stateful {
                session_id,
                revision,
            } => head.push_str(&format!(
                "MCP-Protocol-Version: {revision}\r\nMcp-Session-Id: {session_id}\r\n"
            )),
            LoadSession::Stateless => {
                head.push_str(&format!(
                    "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: {method}\r\n"
                ));
                if let Some(name) = name {
                    head.push_str(&format!("Mcp-Name: {name}\r\n"));
                }
                params["_meta"] = json!({
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientCapabilities": {},
                    "io.modelcontextprotocol/clientInfo": {"name": "load", "version": "1"},
                });
            }
        }
        let body =
            json!({"jsonrpc": "2.0", "id": ID_PLACEHOLDER, "method": method, "params": params})
                .to_string();
        head.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
        let mut request = head.into_bytes();
        let body_at = request.len();
        request.extend_from_slice(body.as_bytes());
        let placeholder = body
            .find(ID_PLACEHOLDER)
            .ok_or_else(|| io::Error::other("the request id is missing from the body"))?;
        Ok(LoadConn {
            stream,
            request,
            digits_at: body_at + placeholder + "id-".len(),
            next_id: 0,
            buffer: Vec::with_capacity(4096),
            body: 0..0,
        })
    }

    /// Sends the call and reads its answer. `Err` when the connection
    /// failed or the response was not a complete `Content-Length` one (an
    /// event stream, say): the connection is then of no further use.
    pub fn call(&mut self) -> io::Result<Answer> {
        Ok(match self.exchange()? {
            200 if find(self.body(), SUCCESS_MARKER).is_some() => Answer::Success,
            200 => Answer::ToolError,
            503 => Answer::Busy,
            other => Answer::Status(other),
        })
    }

    /// Sends the request and reads the whole response, nothing parsed:
    /// its status (0 when the status line is not one). The body is then
    /// [`LoadConn::body`]. `Err` as for [`LoadConn::call`].
    pub fn exchange(&mut self) -> io::Result<u16> {
        self.next_id = self.next_id.wrapping_add(1);
        let mut id = self.next_id;
        for digit in self.request[self.digits_at..self.digits_at + 8]
            .iter_mut()
            .rev()
        {
            *digit = b'0' + (id % 10) as u8;
            id /= 10;
        }
        self.stream.write_all(&self.request)?;
        self.buffer.clear();
        let mut searched = 0;
        let (head_end, length) = loop {
            if let Some(end) = find(&self.buffer[searched..], b"\r\n\r\n") {
                let end = searched + end;
                let length = content_length(&self.buffer[..end]).ok_or_else(|| {
                    io::Error::other("a response without Content-Length (an event stream?)")
                })?;
                break (end + 4, length);
            }
            searched = self.buffer.len().saturating_sub(3);
            self.fill(4096)?;
        };
        while self.buffer.len() < head_end + length {
            self.fill(head_end + length - self.buffer.len())?;
        }
        self.body = head_end..head_end + length;
        Ok(
            std::str::from_utf8(self.buffer.get(9..12).unwrap_or_default())
                .ok()
                .and_then(|s| s.parse().ok())
                .unwrap_or(0),
        )
    }

    /// The body of the last response [`LoadConn::exchange`] read.
    pub fn body(&self) -> &[u8] {
        &self.buffer[self.body.clone()]
    }

    /// Reads what the socket has, up to `want` bytes, into the buffer.
    fn fill(&mut self, want: usize) -> io::Result<()> {
        let start = self.buffer.len();
        self.buffer.resize(start + want, 0);
        let read = self.stream.read(&mut self.buffer[start..])?;
        self.buffer.truncate(start + read);
        if read == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        Ok(())
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}

/// The `Content-Length` of a response head.
fn content_length(head: &[u8]) -> Option<usize> {
    head.split(|b| *b == b'\n').find_map(|line| {
        let (name, value) = line.split_at(line.iter().position(|b| *b == b':')?);
        if !name.eq_ignore_ascii_case(b"content-length") {
            return None;
        }
        std::str::from_utf8(&value[1..]).ok()?.trim().parse().ok()
    })
}

/// A log-linear latency histogram in nanoseconds: 128 buckets per power of
/// two, so a reported percentile is within 1% of the true value.
#[derive(Clone)]
pub struct Histogram {
    counts: Vec<u64>,
    total: u64,
}

const SUB: u64 = 128;

impl Default for Histogram {
    fn default() -> Histogram {
        Histogram {
            counts: vec![0; (SUB as usize) * 58],
            total: 0,
        }
    }
}

impl Histogram {
    fn index(ns: u64) -> usize {
        if ns < SUB {
            return ns as usize;
        }
        let exp = 63 - u64::from(ns.leading_zeros()); // >= 7
        let shift = exp - 7;
        let mantissa = (ns >> shift) - SUB;
        (SUB + shift * SUB + mantissa) as usize
    }

    fn value(index: usize) -> u64 {
        let index = index as u64;
        if index < SUB {
            return index;
        }
        let shift = (index - SUB) / SUB;
        let mantissa = (index - SUB) % SUB;
        // The middle of the bucket.
        ((SUB + mantissa) << shift) + ((1u64 << shift) >> 1)
    }

    /// Records one latency.
    pub fn record(&mut self, elapsed: Duration) {
        let ns = u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX);
        let index = Histogram::index(ns).min(self.counts.len() - 1);
        self.counts[index] += 1;
        self.total += 1;
    }

    /// How many latencies were recorded.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// Adds `other`'s latencies.
    pub fn merge(&mut self, other: &Histogram) {
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
        self.total += other.total;
    }

    /// The `q` quantile (0..=1) in microseconds.
    pub fn quantile_us(&self, q: f64) -> f64 {
        if self.total == 0 {
            return f64::NAN;
        }
        let rank = ((q * self.total as f64).ceil() as u64).clamp(1, self.total);
        let mut seen = 0;
        for (index, count) in self.counts.iter().enumerate() {
            seen += count;
            if seen >= rank {
                return Histogram::value(index) as f64 / 1000.0;
            }
        }
        f64::NAN
    }
}
