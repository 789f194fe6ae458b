//! HTTP/1.1 over one `std::net::TcpStream`: requests out, responses in.
//!
//! The message rules are functions over `BufRead`, tested on byte strings:
//! the status line and headers ([`read_head`]), how the body is framed
//! (`Content-Length`, chunked, or until close) and reading it ([`Body`]),
//! and writing a request into one buffer. The socket is `wire.rs`'s.

use std::io::{self, BufRead, Read};

use super::error::ClientError;

/// The setting that raises the limit of a message read over HTTP.
pub(crate) const HTTP_LIMIT_SETTING: &str = "ClientBuilder::max_message_bytes";

/// The largest response head (status line and headers) accepted.
const MAX_HEAD_BYTES: u64 = 64 << 10;
/// The largest number of header lines accepted.
const MAX_HEADERS: usize = 128;
/// The largest chunk-size line accepted (size, extensions, CRLF).
const MAX_CHUNK_LINE: u64 = 4 << 10;

/// The status line and headers of a response.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Head {
    pub(crate) status: u16,
    /// `HTTP/1.0` rather than `HTTP/1.1`.
    http10: bool,
    pub(crate) headers: Vec<(String, String)>,
}

/// How a response body is delimited.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Framing {
    /// No body (1xx, 204, 304).
    Empty,
    /// Exactly this many bytes.
    Length(u64),
    /// Chunked transfer coding.
    Chunked,
    /// Everything until the server closes the connection.
    UntilClose,
}

impl Head {
    /// The first value of header `name` (case-insensitive).
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The media type of the body, lowercased, without parameters.
    pub(crate) fn media_type(&self) -> String {
        self.header("content-type")
            .and_then(|v| v.split(';').next())
            .map(|v| v.trim().to_ascii_lowercase())
            .unwrap_or_default()
    }

    /// How the body is delimited, or why it cannot be read.
    pub(crate) fn framing(&self) -> Result<Framing, ClientError> {
        if self.status < 200 || self.status == 204 || self.status == 304 {
            return Ok(Framing::Empty);
        }
        if let Some(coding) = self.header("transfer-encoding") {
            return if coding.trim().eq_ignore_ascii_case("chunked") {
                Ok(Framing::Chunked)
            } else {
                Err(ClientError::malformed(format!(
                    "unsupported Transfer-Encoding {coding:?}; this client reads only chunked and Content-Length bodies"
                )))
            };
        }
        let mut lengths = self
            .headers
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case("content-length"))
            .map(|(_, v)| v.trim());
        match lengths.next() {
            None => Ok(Framing::UntilClose),
            Some(first) => {
                let length = first.parse::<u64>().map_err(|_| {
                    ClientError::malformed(format!("Content-Length {first:?} is not a number"))
                })?;
                if lengths.any(|other| other != first) {
                    return Err(ClientError::malformed(
                        "the response carries conflicting Content-Length headers",
                    ));
                }
                Ok(Framing::Length(length))
            }
        }
    }

    /// Whether the connection may carry another request after this response.
    pub(crate) fn keep_alive(&self) -> bool {
        // Every Connection field counts: several are one comma-separated
        // list (RFC 9110, 5.3).
        let has = |token: &str| {
            self.headers
                .iter()
                .filter(|(name, _)| name.eq_ignore_ascii_case("connection"))
                .flat_map(|(_, value)| value.split(','))
                .any(|t| t.trim().eq_ignore_ascii_case(token))
        };
        let persistent = if self.http10 {
            has("keep-alive")
        } else {
            !has("close")
        };
        // Both framings set: the length is ignored, and the connection is
        // not trusted with another request (RFC 9112 section 6.3).
        let ambiguous =
            self.header("transfer-encoding").is_some() && self.header("content-length").is_some();
        persistent && !ambiguous && !matches!(self.framing(), Ok(Framing::UntilClose) | Err(_))
    }
}

/// Reads one line (through LF) of at most `limit` bytes, without the line end.
fn read_line<R: BufRead>(reader: &mut R, limit: u64, what: &str) -> Result<String, ClientError> {
    let mut line = Vec::new();
    let read = reader
        .by_ref()
        .take(limit)
        .read_until(b'\n', &mut line)
        .map_err(ClientError::Io)?;
    if read == 0 {
        return Err(ClientError::Io(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            format!("the server closed the connection before the {what}"),
        )));
    }
    if line.last() != Some(&b'\n') {
        return Err(if u64::try_from(line.len()).unwrap_or(u64::MAX) >= limit {
            ClientError::malformed(format!("the {what} is longer than {limit} bytes"))
        } else {
            ClientError::Io(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!("the server closed the connection inside the {what}"),
            ))
        });
    }
    line.pop();
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    String::from_utf8(line).map_err(|_| ClientError::malformed(format!("the {what} is not UTF-8")))
}

/// Reads a response head, skipping interim (1xx) responses.
pub(crate) fn read_head<R: BufRead>(reader: &mut R) -> Result<Head, ClientError> {
    loop {
        let head = read_one_head(reader)?;
        if head.status >= 200 || head.status == 101 {
            return Ok(head);
        }
    }
}

fn read_one_head<R: BufRead>(reader: &mut R) -> Result<Head, ClientError> {
    let mut budget = MAX_HEAD_BYTES;
    let status_line = read_line(reader, budget, "status line")?;
    budget = budget.saturating_sub(status_line.len() as u64 + 2);
    let mut parts = status_line.splitn(3, ' ');
    let version = parts.next().unwrap_or("");
    let status = parts
        .next()
        .filter(|code| code.len() == 3)
        .and_then(|code| code.parse::<u16>().ok());
    let (Some(status), true) = (status, version.starts_with("HTTP/1.")) else {
        return Err(ClientError::malformed(format!(
            "{status_line:?} is not an HTTP/1.x status line; is this an HTTP server?"
        )));
    };
    let mut headers = Vec::new();
    loop {
        if budget == 0 {
            return Err(ClientError::malformed(format!(
                "the response headers exceed {MAX_HEAD_BYTES} bytes"
            )));
        }
        let line = read_line(reader, budget, "response headers")?;
        budget = budget.saturating_sub(line.len() as u64 + 2);
        if line.is_empty() {
            break;
        }
        if line.starts_with([' ', '\t']) {
            return Err(ClientError::malformed(
                "folded header lines are not allowed",
            ));
        }
        let Some((name, value)) = line.split_once(':') else {
            return Err(ClientError::malformed(format!(
                "header line {line:?} has no colon"
            )));
        };
        if headers.len() == MAX_HEADERS {
            return Err(ClientError::malformed(format!(
                "the response has more than {MAX_HEADERS} headers"
            )));
        }
        headers.push((name.trim().to_owned(), value.trim().to_owned()));
    }
    Ok(Head {
        status,
        http10: version == "HTTP/1.0",
        headers,
    })
}

/// A response body, read through its framing. Reading past its end returns 0.
pub(crate) struct Body<'a, R: BufRead> {
    reader: &'a mut R,
    state: BodyState,
}

#[derive(Debug)]
enum BodyState {
    Done,
    Length(u64),
    /// Bytes left in the current chunk; `first` before the first size line.
    Chunk {
        left: u64,
        first: bool,
    },
    UntilClose,
}

impl<'a, R: BufRead> Body<'a, R> {
    pub(crate) fn new(reader: &'a mut R, framing: Framing) -> Body<'a, R> {
        let state = match framing {
            Framing::Empty | Framing::Length(0) => BodyState::Done,
            Framing::Length(n) => BodyState::Length(n),
            Framing::Chunked => BodyState::Chunk {
                left: 0,
                first: true,
            },
            Framing::UntilClose => BodyState::UntilClose,
        };
        Body { reader, state }
    }

    /// Whether the whole body has been read.
    pub(crate) fn is_done(&self) -> bool {
        matches!(self.state, BodyState::Done)
    }

    /// The connection under the body, for socket settings.
    pub(crate) fn reader(&mut self) -> &mut R {
        self.reader
    }

    /// Reads the whole body, refusing more than `limit` bytes.
    pub(crate) fn read_all(&mut self, limit: usize) -> Result<Vec<u8>, ClientError> {
        // A declared length (up to the limit) is read into one buffer of
        // its size rather than one grown by doubling.
        let declared = match self.state {
            BodyState::Length(n) if n > u64::try_from(limit).unwrap_or(u64::MAX) => {
                // Refused before a byte of it is read.
                return Err(ClientError::TooLarge {
                    what: "a response body".into(),
                    size: Some(n),
                    limit,
                    setting: HTTP_LIMIT_SETTING,
                });
            }
            BodyState::Length(n) => usize::try_from(n).unwrap_or(usize::MAX),
            _ => 0,
        };
        let mut out = Vec::with_capacity(declared);
        let cap = u64::try_from(limit).unwrap_or(u64::MAX).saturating_add(1);
        self.by_ref()
            .take(cap)
            .read_to_end(&mut out)
            .map_err(unwrap_io)?;
        if out.len() > limit {
            return Err(ClientError::TooLarge {
                what: "a response body".into(),
                size: None,
                limit,
                setting: HTTP_LIMIT_SETTING,
            });
        }
        Ok(out)
    }

    /// Reads and discards the rest of the body.
    pub(crate) fn drain(&mut self) -> Result<(), ClientError> {
        io::copy(self, &mut io::sink()).map_err(unwrap_io)?;
        Ok(())
    }

    fn next_chunk(&mut self, first: bool) -> Result<u64, ClientError> {
        if !first {
            let end = read_line(self.reader, 2 + 1, "chunk end")?;
            if !end.is_empty() {
                return Err(ClientError::malformed("a chunk is longer than its size"));
            }
        }
        let line = read_line(self.reader, MAX_CHUNK_LINE, "chunk size")?;
        let digits = line.split(';').next().unwrap_or("").trim();
        let size = u64::from_str_radix(digits, 16)
            .map_err(|_| ClientError::malformed(format!("chunk size {digits:?} is not hex")))?;
        if size == 0 {
            // Trailers, up to the blank line.
            let mut budget = MAX_HEAD_BYTES;
            loop {
                let trailer = read_line(self.reader, budget.max(1), "chunk trailers")?;
                if trailer.is_empty() {
                    break;
                }
                budget = budget.saturating_sub(trailer.len() as u64 + 2);
                if budget == 0 {
                    return Err(ClientError::malformed("the chunk trailers are too long"));
                }
            }
        }
        Ok(size)
    }
}

/// `Read` has to speak `io::Error`; a protocol fault travels inside one and
/// is unwrapped here.
pub(crate) fn unwrap_io(err: io::Error) -> ClientError {
    if err.get_ref().is_some_and(|inner| inner.is::<ClientError>()) {
        if let Some(inner) = err.into_inner() {
            if let Ok(client) = inner.downcast::<ClientError>() {
                return *client;
            }
        }
        return ClientError::malformed("a body framing fault");
    }
    ClientError::Io(err)
}

fn wrap(err: ClientError) -> io::Error {
    match err {
        ClientError::Io(inner) => inner,
        other => io::Error::other(other),
    }
}

impl<R: BufRead> Read for Body<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            let want = match self.state {
                BodyState::Done => return Ok(0),
                BodyState::Length(left) => left,
                BodyState::Chunk { left: 0, first } => {
                    let size = self.next_chunk(first).map_err(wrap)?;
                    self.state = if size == 0 {
                        BodyState::Done
                    } else {
                        BodyState::Chunk {
                            left: size,
                            first: false,
                        }
                    };
                    continue;
                }
                BodyState::Chunk { left, .. } => left,
                BodyState::UntilClose => u64::MAX,
            };
            let max = usize::try_from(want).unwrap_or(usize::MAX).min(buf.len());
            let n = self.reader.read(&mut buf[..max])?;
            let counted = n as u64;
            match &mut self.state {
                _ if max == 0 => return Ok(0),
                BodyState::UntilClose if n == 0 => self.state = BodyState::Done,
                _ if n == 0 => {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "the server closed the connection inside the response body",
                    ))
                }
                BodyState::Length(left) => {
                    *left -= counted;
                    if *left == 0 {
                        self.state = BodyState::Done;
                    }
                }
                BodyState::Chunk { left, .. } => *left -= counted,
                BodyState::Done | BodyState::UntilClose => {}
            }
            return Ok(n);
        }
    }
}

/// Appends a request head and body to `out`. `fixed` holds header lines
/// already rendered (`Name: value\r\n`); names and values must be free of CR
/// and LF (the builder checks the user's).
pub(crate) fn write_request(
    out: &mut Vec<u8>,
    method: &str,
    path: &str,
    fixed: &[u8],
    headers: &[(&str, &str)],
    body: &[u8],
) {
    out.extend_from_slice(method.as_bytes());
    out.push(b' ');
    out.extend_from_slice(path.as_bytes());
    out.extend_from_slice(b" HTTP/1.1\r\n");
    out.extend_from_slice(fixed);
    for (name, value) in headers {
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(value.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    if !body.is_empty() || method == "POST" {
        out.extend_from_slice(b"Content-Length: ");
        out.extend_from_slice(body.len().to_string().as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(body);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head_of(bytes: &[u8]) -> Result<Head, ClientError> {
        read_head(&mut &bytes[..])
    }

    fn body_of(response: &[u8]) -> Result<(Head, Vec<u8>, bool), ClientError> {
        let mut reader = response;
        let head = read_head(&mut reader)?;
        let mut body = Body::new(&mut reader, head.framing()?);
        let bytes = body.read_all(1 << 20)?;
        let done = body.is_done();
        Ok((head, bytes, done))
    }

    #[test]
    fn a_content_length_response_is_read_exactly_and_keeps_the_connection() {
        let mut wire: &[u8] =
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: 2\r\n\r\n{}NEXT";
        let head = read_head(&mut wire).unwrap();
        assert_eq!(head.status, 200);
        assert_eq!(head.media_type(), "application/json");
        assert_eq!(head.framing().unwrap(), Framing::Length(2));
        assert!(head.keep_alive());
        let mut body = Body::new(&mut wire, Framing::Length(2));
        assert_eq!(body.read_all(10).unwrap(), b"{}");
        assert!(body.is_done());
        assert_eq!(wire, b"NEXT");
    }

    #[test]
    fn a_chunked_body_with_extensions_and_trailers_is_reassembled() {
        let (head, body, done) = body_of(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\
              5;ext=1\r\nhello\r\n1\r\n \r\n5\r\nworld\r\n0\r\nX-Trailer: y\r\n\r\n",
        )
        .unwrap();
        assert_eq!(head.framing().unwrap(), Framing::Chunked);
        assert_eq!(body, b"hello world");
        assert!(done);
    }

    #[test]
    fn interim_responses_are_skipped_and_bodiless_statuses_have_no_body() {
        let (head, body, done) =
            body_of(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n").unwrap();
        assert_eq!(head.status, 204);
        assert!(body.is_empty() && done);
        let (head, body, _) =
            body_of(b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n").unwrap();
        assert_eq!(head.status, 202);
        assert!(body.is_empty());
    }

    #[test]
    fn a_body_without_length_runs_to_the_close_and_ends_keep_alive() {
        let (head, body, done) = body_of(b"HTTP/1.1 200 OK\r\n\r\nall of it").unwrap();
        assert_eq!(body, b"all of it");
        assert!(done);
        assert!(!head.keep_alive());
    }

    #[test]
    fn connection_close_and_http_1_0_end_keep_alive() {
        let close = head_of(b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
        assert!(!close.unwrap().keep_alive());
        let second =
            head_of(b"HTTP/1.1 503 X\r\nConnection: upgrade\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
        assert!(!second.unwrap().keep_alive());
        let old = head_of(b"HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n").unwrap();
        assert!(!old.keep_alive());
        let old_kept =
            head_of(b"HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 0\r\n\r\n");
        assert!(old_kept.unwrap().keep_alive());
        let both =
            head_of(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n")
                .unwrap();
        assert_eq!(both.framing().unwrap(), Framing::Chunked);
        assert!(!both.keep_alive());
    }

    #[test]
    fn truncated_bodies_are_io_errors_not_short_reads() {
        for wire in [
            &b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort"[..],
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel",
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n",
            b"HTTP/1.1 200 OK\r\nContent-",
            b"",
        ] {
            let err = body_of(wire).unwrap_err();
            assert!(matches!(err, ClientError::Io(_)), "{wire:?}: {err:?}");
        }
    }

    #[test]
    fn broken_framing_is_malformed_with_the_reason() {
        let cases: [(&[u8], &str); 8] = [
            (b"SSH-2.0-OpenSSH\r\n\r\n", "not an HTTP/1.x status line"),
            (b"HTTP/1.1 2000 OK\r\n\r\n", "not an HTTP/1.x status line"),
            (b"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n", "no colon"),
            (b"HTTP/1.1 200 OK\r\nA: b\r\n folded\r\n\r\n", "folded"),
            (
                b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
                "conflicting",
            ),
            (
                b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n",
                "not a number",
            ),
            (
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n",
                "Transfer-Encoding",
            ),
            (
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
                "not hex",
            ),
        ];
        for (wire, why) in cases {
            let err = body_of(wire).unwrap_err();
            assert!(
                matches!(err, ClientError::Malformed { .. }) && err.to_string().contains(why),
                "{:?}: {err}",
                String::from_utf8_lossy(wire)
            );
        }
    }

    #[test]
    fn oversized_heads_and_bodies_are_refused() {
        let mut huge = b"HTTP/1.1 200 OK\r\nX: ".to_vec();
        huge.extend(std::iter::repeat_n(b'a', 70 << 10));
        huge.extend_from_slice(b"\r\n\r\n");
        assert!(matches!(head_of(&huge), Err(ClientError::Malformed { .. })));

        let mut many = b"HTTP/1.1 200 OK\r\n".to_vec();
        for i in 0..200 {
            many.extend_from_slice(format!("X-{i}: 1\r\n").as_bytes());
        }
        many.extend_from_slice(b"\r\n");
        assert!(head_of(&many)
            .unwrap_err()
            .to_string()
            .contains("more than"));

        // A declared length past the limit is refused before any of it is
        // read; an undeclared one is cut off one byte past the limit.
        let mut reader: &[u8] = b"0123456789";
        let err = Body::new(&mut reader, Framing::Length(10))
            .read_all(4)
            .unwrap_err();
        assert!(err.to_string().contains("of 10 bytes"), "{err}");
        assert_eq!(reader.len(), 10, "nothing of the body was read");
        let mut reader: &[u8] = b"0123456789";
        let err = Body::new(&mut reader, Framing::UntilClose)
            .read_all(4)
            .unwrap_err();
        assert!(err.to_string().contains("more than 4 bytes"), "{err}");
        assert_eq!(reader.len(), 5, "reading stopped one byte past the limit");
        let mut reader: &[u8] = b"0123";
        let body = Body::new(&mut reader, Framing::Length(4)).read_all(4);
        assert_eq!(body.unwrap(), b"0123");
    }

    #[test]
    fn a_request_goes_out_as_one_buffer_with_its_length() {
        let mut out = Vec::new();
        write_request(
            &mut out,
            "POST",
            "/mcp",
            b"Host: 127.0.0.1:1\r\n",
            &[("Accept", "application/json")],
            b"{}",
        );
        assert_eq!(
            out,
            b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:1\r\nAccept: application/json\r\nContent-Length: 2\r\n\r\n{}"
        );
        let mut delete = Vec::new();
        write_request(&mut delete, "DELETE", "/", b"", &[], b"");
        assert_eq!(delete, b"DELETE / HTTP/1.1\r\n\r\n");
    }
}
