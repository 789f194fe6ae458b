//! A keep-alive connection to the server ([`Connection`]: `TCP_NODELAY`,
//! timeouts, noticing an idle connection the server closed) and the
//! [`Link`] that writes each request on it in one buffer and reads its
//! answer, with the error for an answer that is not a success.

use std::borrow::Cow;
use std::io::{self, BufReader, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::client::call::CancelHandle;
use crate::client::error::ClientError;
use crate::client::http1::{self, Body, Head};
use crate::client::rpc;
use crate::client::Settings;
use crate::model::jsonrpc::{Message, RpcError};

use super::{Reader, MAX_RESPONSE_BYTES};

/// How long a connection may sit idle before it is checked for a close by
/// the server before reuse. Servers close idle keep-alive connections after a
/// few seconds (uvicorn after 5); a check costs three system calls.
const IDLE_CHECK_AFTER: Duration = Duration::from_secs(1);
/// How much of an error body goes into [`ClientError::Http`].
const ERROR_BODY_PREVIEW: usize = 512;

/// A keep-alive connection to the server, opened when first needed, and
/// the buffer its requests are written in.
#[derive(Default)]
pub(crate) struct Link {
    pub(crate) conn: Option<Connection>,
    /// The request being written, kept to reuse its allocation.
    out: Vec<u8>,
}

/// The request buffer holds the last request's head, credentials and all:
/// only its length is shown.
impl std::fmt::Debug for Link {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Link")
            .field("conn", &self.conn)
            .field("out_bytes", &self.out.len())
            .finish()
    }
}

impl Link {
    /// A link that starts on `conn`.
    pub(crate) fn new(conn: Connection) -> Link {
        Link {
            conn: Some(conn),
            out: Vec::with_capacity(1024),
        }
    }

    /// One HTTP exchange on the keep-alive connection, opening a new one
    /// when there is none or the old one went stale. The connection is
    /// reused only when the answer was read to its end and the server keeps
    /// it open.
    #[allow(clippy::too_many_arguments)] // reason: one exchange's whole description; a struct would only rename them
    pub(crate) fn exchange<T>(
        &mut self,
        settings: &Settings,
        verb: &str,
        mcp_headers: &[(&str, Cow<'_, str>)],
        body: &[u8],
        timeout: Option<Duration>,
        cancel: Option<&CancelHandle>,
        read: impl FnOnce(&Head, &mut Body<'_, Reader>, Duration) -> Result<T, ClientError>,
    ) -> Result<T, ClientError> {
        if self.conn.as_mut().is_some_and(Connection::went_stale) {
            self.conn = None;
        }
        let conn = match &mut self.conn {
            Some(conn) => conn,
            None => self.conn.insert(Connection::open(
                &settings.target.addrs,
                settings.connect_timeout,
                settings.timeout,
            )?),
        };
        let wait = timeout.unwrap_or(settings.timeout);
        conn.set_read_timeout(wait)?;
        let mut headers: Vec<(&str, &str)> = Vec::with_capacity(mcp_headers.len() + 2);
        if verb == "POST" {
            headers.push(("Content-Type", "application/json"));
            headers.push(("Accept", "application/json, text/event-stream"));
        }
        headers.extend(mcp_headers.iter().map(|(n, v)| (*n, v.as_ref())));
        self.out.clear();
        http1::write_request(
            &mut self.out,
            verb,
            &settings.target.path,
            &settings.fixed_headers,
            &headers,
            body,
        );
        if let Some(cancel) = cancel {
            cancel.attach(conn.stream())?;
        }
        let outcome = (|| {
            conn.send(&self.out)?;
            let head = http1::read_head(&mut conn.reader)?;
            let framing = head.framing()?;
            let mut body = Body::new(&mut conn.reader, framing);
            let value = read(&head, &mut body, wait);
            let reusable = head.keep_alive() && body.is_done();
            Ok::<_, ClientError>((value, reusable))
        })();
        let cancelled = cancel.is_some_and(|cancel| {
            cancel.detach();
            cancel.is_cancelled()
        });
        match outcome {
            Ok((value, reusable)) => {
                if reusable && !cancelled {
                    conn.touch();
                } else {
                    self.conn = None;
                }
                value.map_err(|err| {
                    if cancelled {
                        ClientError::Cancelled
                    } else {
                        err
                    }
                })
            }
            Err(_) if cancelled => {
                self.conn = None;
                Err(ClientError::Cancelled)
            }
            Err(err) => {
                self.conn = None;
                Err(match err {
                    ClientError::Io(io)
                        if matches!(
                            io.kind(),
                            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                        ) =>
                    {
                        ClientError::Timeout { waited: wait }
                    }
                    other => other,
                })
            }
        }
    }
}

/// The answer to a request carrying no JSON-RPC result (a notification or a
/// `DELETE`): any 2xx, or one of `also_ok`.
pub(crate) fn drain_for_status(
    head: &Head,
    body: &mut Body<'_, Reader>,
    also_ok: &[u16],
) -> Result<(), ClientError> {
    let bytes = body.read_all(MAX_RESPONSE_BYTES)?;
    if (200..300).contains(&head.status) || also_ok.contains(&head.status) {
        return Ok(());
    }
    Err(refusal(head, &bytes))
}

/// The error for a non-2xx answer: 401 with its challenge, a JSON-RPC
/// error, or the status and the start of the body.
pub(super) fn refusal(head: &Head, bytes: &[u8]) -> ClientError {
    let message: Option<Value> = serde_json::from_slice(bytes).ok();
    let error = match message.as_ref().map(Message::of) {
        Some(Message::Error { error, .. }) => Some(error),
        _ => None,
    };
    if head.status == 401 {
        return ClientError::Unauthorized {
            www_authenticate: head.header("www-authenticate").map(str::to_owned),
            message: error
                .and_then(|e| e.get("message"))
                .and_then(Value::as_str)
                .map(str::to_owned),
        };
    }
    // Whatever id it carries: an error status makes it the answer.
    if let Some(fault) = error.and_then(RpcError::read) {
        return rpc::rpc_error(fault, head.status);
    }
    let text = String::from_utf8_lossy(bytes);
    let mut preview: String = text.chars().take(ERROR_BODY_PREVIEW).collect();
    if preview.len() < text.len() {
        preview.push('…');
    }
    ClientError::Http {
        status: head.status,
        body: preview.trim().to_owned(),
    }
}

/// One keep-alive TCP connection.
#[derive(Debug)]
pub(crate) struct Connection {
    pub(crate) reader: BufReader<TcpStream>,
    /// The read timeout currently set on the socket.
    read_timeout: Duration,
    last_used: Instant,
}

impl Connection {
    /// Connects to the first of `addrs` that accepts, with `TCP_NODELAY`.
    pub(crate) fn open(
        addrs: &[SocketAddr],
        connect_timeout: Duration,
        timeout: Duration,
    ) -> Result<Connection, ClientError> {
        let mut last = None;
        for addr in addrs {
            match TcpStream::connect_timeout(addr, connect_timeout) {
                Ok(stream) => {
                    let setup = |stream: &TcpStream| {
                        stream.set_nodelay(true)?;
                        stream.set_read_timeout(Some(timeout))?;
                        stream.set_write_timeout(Some(timeout))
                    };
                    setup(&stream).map_err(|source| ClientError::Connect {
                        addr: addr.to_string(),
                        source,
                    })?;
                    return Ok(Connection {
                        reader: BufReader::with_capacity(16 << 10, stream),
                        read_timeout: timeout,
                        last_used: Instant::now(),
                    });
                }
                Err(source) => last = Some((addr, source)),
            }
        }
        Err(match last {
            Some((addr, source)) => ClientError::Connect {
                addr: addr.to_string(),
                source,
            },
            None => ClientError::InvalidConfig {
                problem: "the URL resolved to no address".into(),
            },
        })
    }

    pub(crate) fn stream(&self) -> &TcpStream {
        self.reader.get_ref()
    }

    /// Whether the server has closed (or written unasked to) a connection
    /// that sat idle; such a connection must not carry the next request.
    pub(crate) fn went_stale(&mut self) -> bool {
        if self.last_used.elapsed() < IDLE_CHECK_AFTER {
            return false;
        }
        if !self.reader.buffer().is_empty() {
            return true;
        }
        let stream = self.reader.get_ref();
        if stream.set_nonblocking(true).is_err() {
            return true;
        }
        let mut probe = [0u8; 1];
        let stale =
            !matches!(stream.peek(&mut probe), Err(e) if e.kind() == io::ErrorKind::WouldBlock);
        stale || stream.set_nonblocking(false).is_err()
    }

    /// Sets the socket's read timeout unless it already is `timeout`.
    pub(crate) fn set_read_timeout(&mut self, timeout: Duration) -> Result<(), ClientError> {
        if self.read_timeout != timeout {
            self.stream()
                .set_read_timeout(Some(timeout))
                .map_err(ClientError::Io)?;
            self.read_timeout = timeout;
        }
        Ok(())
    }

    /// Sends bytes that hold a whole request.
    pub(crate) fn send(&mut self, bytes: &[u8]) -> Result<(), ClientError> {
        self.reader
            .get_mut()
            .write_all(bytes)
            .map_err(ClientError::Io)?;
        self.last_used = Instant::now();
        Ok(())
    }

    /// Marks the end of an exchange.
    pub(crate) fn touch(&mut self) {
        self.last_used = Instant::now();
    }
}
