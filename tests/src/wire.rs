//! A minimal HTTP/1.1 client over `std::net::TcpStream`, enough to speak to
//! a toolhost endpoint from tests and examples: one request at a time on a
//! keep-alive connection, `Content-Length` and chunked responses.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// One HTTP response.
#[derive(Debug)]
pub struct Reply {
    /// The status code.
    pub status: u16,
    /// The headers in the order received, names as sent.
    pub headers: Vec<(String, String)>,
    /// The body, de-chunked.
    pub body: Vec<u8>,
}

impl Reply {
    /// The first value of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The body parsed as JSON; panics with the body text if it is not.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|err| {
            panic!(
                "status {} body is not JSON ({err}): {:?}",
                self.status,
                String::from_utf8_lossy(&self.body)
            )
        })
    }
}

/// A keep-alive connection.
pub struct Conn {
    addr: SocketAddr,
    reader: BufReader<TcpStream>,
    /// The last answer said `Connection: close`: the next request goes on
    /// a new connection, as an HTTP client's would.
    closed: bool,
}

impl Conn {
    /// Connects to `addr` with `TCP_NODELAY` and a 30 s read timeout (so a
    /// host that never answers fails the test instead of hanging it).
    pub fn open(addr: SocketAddr) -> io::Result<Conn> {
        let stream = TcpStream::connect(addr)?;
        stream.set_nodelay(true)?;
        stream.set_read_timeout(Some(Duration::from_secs(30)))?;
        Ok(Conn {
            addr,
            reader: BufReader::new(stream),
            closed: false,
        })
    }

    /// Sends a request with the given extra headers (a `Host` header for the
    /// connected address is added unless one is given).
    pub fn request(
        &mut self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> io::Result<Reply> {
        let mut head = format!("{method} {path} HTTP/1.1\r\n");
        if !headers.iter().any(|(n, _)| n.eq_ignore_ascii_case("host")) {
            head.push_str(&format!("Host: {}\r\n", self.addr));
        }
        for (name, value) in headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        if !headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case("transfer-encoding"))
        {
            head.push_str(&format!("Content-Length: {}\r\n", body.len()));
        }
        head.push_str("\r\n");
        let mut bytes = head.into_bytes();
        bytes.extend_from_slice(body);
        if self.closed {
            *self = Conn::open(self.addr)?;
        }
        self.reader.get_mut().write_all(&bytes)?;
        let reply = self.read_reply()?;
        self.closed = reply.headers.iter().any(|(name, value)| {
            name.eq_ignore_ascii_case("connection") && value.eq_ignore_ascii_case("close")
        });
        Ok(reply)
    }

    fn read_line(&mut self) -> io::Result<String> {
        let mut line = String::new();
        if self.reader.read_line(&mut line)? == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "connection closed",
            ));
        }
        Ok(line.trim_end_matches(['\r', '\n']).to_owned())
    }

    fn read_reply(&mut self) -> io::Result<Reply> {
        let status_line = self.read_line()?;
        let status = status_line
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| io::Error::other(format!("bad status line {status_line:?}")))?;
        let mut headers = Vec::new();
        loop {
            let line = self.read_line()?;
            if line.is_empty() {
                break;
            }
            if let Some((name, value)) = line.split_once(':') {
                headers.push((name.trim().to_owned(), value.trim().to_owned()));
            }
        }
        let mut reply = Reply {
            status,
            headers,
            body: Vec::new(),
        };
        if let Some(len) = reply.header("content-length") {
            let len: usize = len.parse().map_err(io::Error::other)?;
            let mut body = vec![0; len];
            self.reader.read_exact(&mut body)?;
            reply.body = body;
        } else if reply
            .header("transfer-encoding")
            .is_some_and(|te| te.eq_ignore_ascii_case("chunked"))
        {
            loop {
                let size_line = self.read_line()?;
                let size =
                    usize::from_str_radix(size_line.split(';').next().unwrap_or("").trim(), 16)
                        .map_err(io::Error::other)?;
                if size == 0 {
                    // Trailers, then the blank line.
                    while !self.read_line()?.is_empty() {}
                    break;
                }
                let mut chunk = vec![0; size];
                self.reader.read_exact(&mut chunk)?;
                reply.body.extend_from_slice(&chunk);
                self.read_line()?;
            }
        }
        Ok(reply)
    }
}
