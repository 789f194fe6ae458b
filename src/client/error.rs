//! The one error type of the client: what went wrong, and what to do next.

use std::fmt;
use std::io;
use std::time::Duration;

use serde_json::Value;

/// Why a client operation failed. Each `Display` says what happened and
/// what to try.
///
/// A tool that ran and reported a failure is **not** an error here: that is
/// a [`ToolResult`](super::ToolResult) with `is_error == true`, because the
/// model is meant to read it.
///
/// ```
/// use toolhost::client::{Client, ClientError};
///
/// // A port nobody listens on (bind one, then let it go).
/// let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
/// match Client::connect(&format!("http://127.0.0.1:{port}/mcp")) {
///     Err(ClientError::Connect { .. }) => {}
///     other => panic!("expected a refused connection, got {other:?}"),
/// }
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum ClientError {
    /// The URL is not plain `http://` to a loopback address, or cannot be read.
    InvalidUrl {
        /// The URL as given.
        url: String,
        /// What is wrong with it.
        problem: String,
    },
    /// A builder setting cannot be used (a header with a line break, …).
    InvalidConfig {
        /// What is wrong.
        problem: String,
    },
    /// No connection could be made: nothing listens there, or connecting
    /// took longer than the connect timeout.
    Connect {
        /// The address tried (the last one, when there were several).
        addr: String,
        /// What the operating system said.
        source: io::Error,
    },
    /// The server refused the credentials (HTTP 401).
    Unauthorized {
        /// The server's `WWW-Authenticate` header, which names the scheme it wants.
        www_authenticate: Option<String>,
        /// The message of the JSON-RPC error in the body, when there was one.
        message: Option<String>,
    },
    /// The server answered the request with a JSON-RPC error.
    Rpc {
        /// The HTTP status it came with (200 in the stateful revisions, a
        /// 4xx or 5xx in 2026-07-28).
        status: u16,
        /// The JSON-RPC error code: one of JSON-RPC's standard codes (such as
        /// "invalid params"), one of MCP's, or the server's own.
        code: i64,
        /// The server's message.
        message: String,
        /// The error's `data`, when present.
        data: Option<Value>,
    },
    /// The server answered with an HTTP error status and no JSON-RPC error.
    Http {
        /// The HTTP status.
        status: u16,
        /// The start of the body, as text.
        body: String,
    },
    /// The server sent nothing for the configured timeout.
    Timeout {
        /// How long the client waited.
        waited: Duration,
    },
    /// The call was cancelled through its [`CancelHandle`](super::CancelHandle).
    Cancelled,
    /// The response's event stream ended before the response, and resuming
    /// it — a `GET` with `Last-Event-ID`, which the stateful revisions allow
    /// — failed. The call may still have run on the server.
    ResumeFailed {
        /// The id of the last event received, which the resumes named.
        last_event_id: String,
        /// How many resumes were tried from that event.
        attempts: u32,
        /// Why the last one failed: the server's refusal (with its HTTP
        /// status), a fault of the connection, or the stream ending again
        /// with nothing new.
        cause: Box<ClientError>,
    },
    /// The server's answer breaks HTTP, SSE, JSON-RPC or MCP rules.
    Malformed {
        /// What was wrong with it.
        problem: String,
    },
    /// The server sent a message larger than the client reads, over HTTP
    /// ([`ClientBuilder::max_message_bytes`](super::ClientBuilder::max_message_bytes))
    /// or stdio
    /// ([`StdioServer::max_message_bytes`](super::StdioServer::max_message_bytes)):
    /// nothing past the limit was kept.
    ///
    /// Over HTTP, reading stopped at the limit and the connection was
    /// dropped. Over stdio the line was skipped while it was read and the
    /// server runs on; only its two ends are read: when they name the id
    /// of a request in flight, that request fails with this; when they say
    /// nothing, every request in flight does (one of them waits for the
    /// line, and a timeout would be worse); a request or notification of
    /// the server fails none.
    TooLarge {
        /// What was too large and, for a stdio server, who sent it, e.g.
        /// `an SSE event`, `a message from the stdio MCP server "npx"`.
        what: String,
        /// Its size when known (declared by `Content-Length`, or counted
        /// while a stdio line was skipped), else `None`: it was cut off at
        /// the limit.
        size: Option<u64>,
        /// The limit, in bytes.
        limit: usize,
        /// The setting that raises the limit, e.g.
        /// `ClientBuilder::max_message_bytes`.
        setting: &'static str,
    },
    /// A server's tool listing ran past the client's bound on one
    /// listing, counted across all its pages (`tools/list` and each
    /// `nextCursor`): the most tools
    /// ([`ClientBuilder::max_listed_tools`](super::ClientBuilder::max_listed_tools),
    /// [`StdioServer::max_listed_tools`](super::StdioServer::max_listed_tools))
    /// or the most bytes of their definitions
    /// ([`ClientBuilder::max_listing_bytes`](super::ClientBuilder::max_listing_bytes),
    /// [`StdioServer::max_listing_bytes`](super::StdioServer::max_listing_bytes)).
    /// Nothing of the listing was kept, and no page past the one that
    /// crossed the bound was asked for.
    ListingTooLarge {
        /// Which server, e.g. `the stdio MCP server "npx"`, `the MCP
        /// server at 127.0.0.1:8931`.
        server: String,
        /// The tools listed up to the page that crossed the bound,
        /// that page included.
        tools: usize,
        /// The bytes of their definitions, as JSON.
        bytes: u64,
        /// The pages read.
        pages: usize,
        /// The bound that was crossed, in `unit`.
        limit: usize,
        /// `tools` or `bytes`.
        unit: &'static str,
        /// The setting that raises it, e.g. `StdioServer::max_listed_tools`.
        setting: &'static str,
    },
    /// The connection failed in the middle of an exchange.
    Io(io::Error),
    /// The server asked the client something during a call (an
    /// elicitation, a sampling request, `roots/list`) and the client could
    /// not answer, so the call was given up: in 2026-07-28 the call has no
    /// [`CallOptions::on_request`](super::CallOptions::on_request) handler,
    /// the handler refused (that revision cannot carry a refusal), or the
    /// tool kept asking for more rounds than the client answers; in the
    /// stateful revisions the answer could not be delivered (`cause`).
    Unanswered {
        /// The method asked, e.g. `elicitation/create`.
        method: String,
        /// Why it went unanswered.
        problem: String,
        /// The fault that stopped the answer, when sending it failed.
        cause: Option<Box<ClientError>>,
    },
    /// A stdio MCP server's program could not be started
    /// ([`StdioServer::connect`](super::StdioServer::connect)).
    Spawn {
        /// The program, as given.
        program: String,
        /// What the operating system said.
        source: io::Error,
    },
    /// A stdio MCP server is gone: its output ended (it exited or closed
    /// stdout), or its input broke. Every call waiting on it fails with
    /// this; a call in flight may have run.
    Closed {
        /// What the client saw — the exit status or signal when the
        /// process exited — with the last lines (up to five) the server
        /// wrote to stderr.
        reason: String,
    },
    /// The operation does not exist in the protocol era this client speaks.
    NotInEra {
        /// The operation, e.g. `ping`.
        operation: &'static str,
        /// What to do instead.
        hint: &'static str,
    },
}

impl ClientError {
    pub(crate) fn malformed(problem: impl Into<String>) -> ClientError {
        ClientError::Malformed {
            problem: problem.into(),
        }
    }

    /// The JSON-RPC error code, when the server answered with one.
    ///
    /// ```
    /// use toolhost::client::ClientError;
    ///
    /// let err = ClientError::Cancelled;
    /// assert_eq!(err.rpc_code(), None);
    /// ```
    pub fn rpc_code(&self) -> Option<i64> {
        match self {
            ClientError::Rpc { code, .. } => Some(*code),
            _ => None,
        }
    }
}

impl fmt::Display for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClientError::InvalidUrl { url, problem } => {
                write!(f, "cannot use the URL {url:?}: {problem}")
            }
            ClientError::InvalidConfig { problem } => write!(f, "invalid client setting: {problem}"),
            ClientError::Connect { addr, source } if source.kind() == io::ErrorKind::ConnectionRefused => write!(
                f,
                "nothing is listening at {addr} (connection refused): is the server running, and is the port in the URL the one it printed?"
            ),
            ClientError::Connect { addr, source } => write!(
                f,
                "could not connect to {addr}: {source}; check the server is running, or raise ClientBuilder::connect_timeout"
            ),
            ClientError::Unauthorized {
                www_authenticate,
                message,
            } => {
                f.write_str("the server refused the credentials (HTTP 401")?;
                if let Some(challenge) = www_authenticate {
                    write!(f, ", WWW-Authenticate: {challenge}")?;
                }
                f.write_str(")")?;
                if let Some(message) = message {
                    write!(f, ": {message}")?;
                }
                f.write_str("; send the session's authorization with ClientBuilder::header(\"Authorization\", …) or ClientBuilder::bearer, and check the session was not dropped")
            }
            ClientError::Rpc {
                status,
                code,
                message,
                data,
            } => {
                write!(f, "the server answered with JSON-RPC error {code}: {message}")?;
                if let Some(data) = data {
                    write!(f, " (data: {data})")?;
                }
                if *status != 200 {
                    write!(f, " [HTTP {status}]")?;
                }
                Ok(())
            }
            ClientError::Http { status, body } => {
                write!(f, "the server answered HTTP {status} without a JSON-RPC error")?;
                if !body.is_empty() {
                    write!(f, ": {body}")?;
                }
                if *status == 404 {
                    f.write_str("; check the path of the URL (toolhost serves /mcp)")?;
                }
                Ok(())
            }
            ClientError::Timeout { waited } => write!(
                f,
                "the server sent nothing for {waited:?}; raise ClientBuilder::timeout or StdioServer::timeout (or CallOptions::timeout) for slow tools"
            ),
            ClientError::Cancelled => f.write_str("the call was cancelled through its CancelHandle"),
            ClientError::ResumeFailed {
                last_event_id,
                attempts,
                cause,
            } => {
                let plural = if *attempts == 1 { "" } else { "s" };
                write!(
                    f,
                    "the event stream ended before the response, and resuming it after event {last_event_id:?} failed ({attempts} attempt{plural}): {cause}; the tool may have run on the server, so call it again only if that is safe"
                )
            }
            ClientError::Malformed { problem } => {
                write!(f, "the server's answer is not valid MCP: {problem}")
            }
            ClientError::TooLarge {
                what,
                size,
                limit,
                setting,
            } => {
                match size {
                    Some(size) => write!(f, "{what} of {size} bytes")?,
                    None => write!(f, "{what} of more than {limit} bytes")?,
                }
                write!(
                    f,
                    " came from the server, past the limit of {limit} bytes, and was not kept; raise {setting} if its messages are really that large"
                )
            }
            ClientError::ListingTooLarge {
                server,
                tools,
                bytes,
                pages,
                limit,
                unit,
                setting,
            } => {
                let plural = if *pages == 1 { "" } else { "s" };
                write!(
                    f,
                    "{server} listed {tools} tools ({bytes} bytes) in {pages} page{plural} of tools/list, past the limit of {limit} {unit} on one listing, so none of it was kept; raise {setting} if it really lists that many"
                )
            }
            ClientError::Io(source) => write!(
                f,
                "the connection failed mid-exchange: {source}; the server may have stopped or closed the connection"
            ),
            ClientError::Unanswered {
                method,
                problem,
                cause,
            } => {
                write!(
                    f,
                    "the server asked {method} during the call and the client did not answer: {problem}"
                )?;
                if let Some(cause) = cause {
                    write!(f, ": {cause}")?;
                }
                Ok(())
            }
            ClientError::Spawn { program, source } if source.kind() == io::ErrorKind::NotFound => write!(
                f,
                "could not start the MCP server {program:?}: no such program ({source}); check the command, and that it is on PATH"
            ),
            ClientError::Spawn { program, source } => write!(
                f,
                "could not start the MCP server {program:?}: {source}"
            ),
            ClientError::Closed { reason } => write!(
                f,
                "the stdio MCP server is gone: {reason}; start it again to go on"
            ),
            ClientError::NotInEra { operation, hint } => write!(
                f,
                "{operation} does not exist in the stateless revision 2026-07-28 this client speaks; {hint}"
            ),
        }
    }
}

impl std::error::Error for ClientError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ClientError::Connect { source, .. }
            | ClientError::Io(source)
            | ClientError::Spawn { source, .. } => Some(source),
            ClientError::ResumeFailed { cause, .. } => Some(&**cause),
            ClientError::Unanswered {
                cause: Some(cause), ..
            } => Some(&**cause),
            _ => None,
        }
    }
}
