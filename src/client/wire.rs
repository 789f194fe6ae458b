//! One exchange on the wire: a request out, its answer in.
//!
//! [`Connection`] is the socket shell: `TCP_NODELAY`, timeouts, and noticing
//! that an idle keep-alive connection was closed by the server. A [`Link`]
//! holds one and writes each request in one buffer — one `write`, so with
//! `TCP_NODELAY` it leaves at once and never waits on a delayed ACK.
//! [`Wire`] sends the client's requests on its link and reads the answer
//! whichever way the server chose — a JSON body, or an event stream whose
//! progress notifications go to the caller's callback, and whose server
//! requests go to the caller's handler and are answered on a second link,
//! before the response arrives; a stream that ends before the response is
//! resumed with a `GET` where `resume.rs` says so. A connection is reused
//! only when its answer was read to the end and the server keeps it open;
//! any fault drops it, and the next request opens a fresh one.

use std::borrow::Cow;
use std::io::{self, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use serde_json::{Map, Value};

use super::answer::{self, Answerer, Refusal, ServerRequest};
use super::call::{self, CallOptions, CancelHandle, LogMessage, Progress};
use super::error::ClientError;
use super::http1::{self, Body, Head};
use super::resume::{self, Resumption};
use super::rpc::{self, Incoming, Mode};
use super::sse::SseParser;
use super::Settings;

/// How long a connection may sit idle before it is checked for a close by
/// the server before reuse. Servers close idle keep-alive connections after a
/// few seconds (uvicorn after 5); a check costs three system calls.
const IDLE_CHECK_AFTER: Duration = Duration::from_secs(1);
/// The largest response body (or SSE event) the client reads.
const MAX_RESPONSE_BYTES: usize = 64 << 20;
/// How much of an error body goes into [`ClientError::Http`].
const ERROR_BODY_PREVIEW: usize = 512;
/// How long the rest of an event stream may take to end once the response
/// arrived, before the connection is given up instead of reused.
const STREAM_END_GRACE: Duration = Duration::from_millis(100);

/// A request's answer: its result, and the `Mcp-Session-Id` header it came with.
pub(crate) struct Answer {
    pub(crate) result: Value,
    pub(crate) session_id: Option<String>,
}

type Reader = BufReader<TcpStream>;

/// The settings, the connection, and the request counter.
#[derive(Debug)]
pub(crate) struct Wire {
    pub(crate) settings: Settings,
    pub(crate) link: Link,
    pub(crate) next_id: u64,
}

impl Wire {
    /// Sends a JSON-RPC request and reads its answer (JSON or event stream),
    /// resuming the event stream when it ends before the response and the
    /// session allows it (see `resume.rs`), and answering the server's
    /// requests on the stream (see `answer.rs`).
    pub(crate) fn request(
        &mut self,
        mode: Option<&Mode>,
        method: &str,
        params: Map<String, Value>,
        tool: Option<&str>,
        options: Option<&mut CallOptions<'_>>,
    ) -> Result<Answer, ClientError> {
        let id = self.next_id;
        self.next_id += 1;
        let Wire { settings, link, .. } = self;
        let mut listener = Listener {
            progress: None,
            log: None,
            handler: None,
            settings,
            mode,
            answers: Link::default(),
        };
        let (timeout, cancel) = match options {
            Some(options) => {
                listener.progress = options.on_progress.as_mut().map(|callback| ProgressSink {
                    token: Value::from(id),
                    callback: &mut **callback,
                });
                listener.handler = options.on_request.as_deref_mut();
                listener.log = options.on_log.as_deref_mut();
                (options.timeout, options.cancel.clone())
            }
            None => (None, None),
        };
        let body = rpc::request_body(
            mode,
            &settings.identity,
            id,
            method,
            params,
            listener.progress.as_ref().map(|sink| &sink.token),
        );
        let headers = rpc::mcp_headers(mode, method, tool);
        let outgoing = Outgoing {
            mode,
            headers: &headers,
            body: &body,
            timeout,
            cancel: cancel.as_ref(),
        };
        let delivered = deliver(link, settings, &outgoing, &mut CallInbox { id, listener })?;
        Ok(Answer {
            result: delivered.answer?,
            session_id: delivered.session_id,
        })
    }

    /// Sends a JSON-RPC notification; the server acknowledges it with 202.
    pub(crate) fn notify(
        &mut self,
        mode: &Mode,
        method: &str,
        params: Value,
    ) -> Result<(), ClientError> {
        let body = rpc::notification_body(method, params);
        let headers = rpc::mcp_headers(Some(mode), method, None);
        self.exchange("POST", &headers, &body, |head, body, _| {
            drain_for_status(head, body, &[])
        })
    }

    /// One exchange on the client's connection, with its timeout and no
    /// cancel handle (see [`Link::exchange`]).
    pub(crate) fn exchange<T>(
        &mut self,
        verb: &str,
        mcp_headers: &[(&str, Cow<'_, str>)],
        body: &[u8],
        read: impl FnOnce(&Head, &mut Body<'_, Reader>, Duration) -> Result<T, ClientError>,
    ) -> Result<T, ClientError> {
        self.link
            .exchange(&self.settings, verb, mcp_headers, body, None, None, read)
    }
}

/// A keep-alive connection to the server, opened when first needed, and
/// the buffer its requests are written in.
#[derive(Debug, Default)]
pub(crate) struct Link {
    pub(crate) conn: Option<Connection>,
    /// The request being written, kept to reuse its allocation.
    out: Vec<u8>,
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
fn refusal(head: &Head, bytes: &[u8]) -> ClientError {
    let message: Option<Value> = serde_json::from_slice(bytes).ok();
    let error = message.as_ref().and_then(|m| m.get("error"));
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
    if let Some(fault) = error.and_then(rpc::read_error) {
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

/// A progress callback and the token it listens for.
struct ProgressSink<'a, 'b> {
    token: Value,
    callback: &'a mut (dyn FnMut(&Progress) + 'b),
}

/// Who hears what the server sends on a request's stream before the
/// response: the progress callback, and the handler of the server's
/// requests, whose answers go out on a connection of their own (`answers`)
/// because the request's connection is busy carrying the stream.
struct Listener<'a, 'b> {
    progress: Option<ProgressSink<'a, 'b>>,
    log: Option<&'a mut (dyn FnMut(&LogMessage) + 'b)>,
    handler: Option<&'a mut Answerer<'b>>,
    settings: &'a Settings,
    mode: Option<&'a Mode>,
    answers: Link,
}

impl Listener<'_, '_> {
    fn log(&mut self, params: &Value) {
        if let (Some(callback), Some(message)) =
            (self.log.as_mut(), LogMessage::from_params(params))
        {
            callback(&message);
        }
    }

    fn progress(&mut self, params: &Value) {
        if let Some(sink) = self.progress.as_mut() {
            if let Some(report) = Progress::for_token(params, &sink.token) {
                (sink.callback)(&report);
            }
        }
    }

    /// Answers the server's request `id` in the MCP session: the handler's
    /// answer, or `-32601` without one, so the server is never left waiting.
    /// A server of 2026-07-28 sends no requests (it asks through
    /// `input_required`), nor does one answering `initialize`: there is no
    /// session to answer in, so those are let pass.
    fn answer(&mut self, id: &Value, request: ServerRequest) -> Result<(), ClientError> {
        let Some(mode @ Mode::Stateful { .. }) = self.mode else {
            return Ok(());
        };
        let answer = match self.handler.as_mut() {
            Some(handler) => handler(&request),
            None => Err(Refusal::unhandled(&request.method)),
        };
        let body = answer::response_body(id, answer);
        let headers = rpc::mcp_headers(Some(mode), "", None);
        self.answers
            .exchange(
                self.settings,
                "POST",
                &headers,
                &body,
                None,
                None,
                |head, body, _| drain_for_status(head, body, &[]),
            )
            .map_err(|cause| ClientError::Unanswered {
                method: request.method,
                problem: "sending the answer failed".into(),
                cause: Some(Box::new(cause)),
            })
    }
}

/// Who takes the JSON-RPC messages of one request's answer, and says when
/// the answer is complete: the client's own calls ([`CallInbox`]), or a
/// relay that forwards every message as it is (`forward.rs`).
pub(crate) trait Inbox {
    /// What a complete answer comes to.
    type Answer;

    /// Takes one message of the answer — its JSON body (sent with HTTP
    /// `status`), or one event of its stream (`status` 200) — and returns
    /// the answer once this message completes it.
    fn take(&mut self, message: Value, status: u16) -> Result<Option<Self::Answer>, ClientError>;

    /// What the errors call the request, e.g. `request 7`.
    fn name(&self) -> String;
}

/// The answer of a POST read to its end, and the `Mcp-Session-Id` header
/// its response came with.
pub(crate) struct Delivered<A> {
    pub(crate) answer: A,
    pub(crate) session_id: Option<String>,
}

/// One POST, as [`deliver`] sends it.
pub(crate) struct Outgoing<'a> {
    /// The session it belongs to, which decides whether its stream resumes.
    pub(crate) mode: Option<&'a Mode>,
    /// The MCP headers (the session's, or 2026-07-28's).
    pub(crate) headers: &'a [(&'a str, Cow<'a, str>)],
    pub(crate) body: &'a [u8],
    pub(crate) timeout: Option<Duration>,
    pub(crate) cancel: Option<&'a CancelHandle>,
}

/// POSTs `outgoing` on `link` and reads its answer into `inbox`, whichever
/// way the server sends it; an event stream that ends before the answer is
/// complete is resumed with a `GET` where the session allows it (see
/// `resume.rs`).
pub(crate) fn deliver<I: Inbox>(
    link: &mut Link,
    settings: &Settings,
    outgoing: &Outgoing<'_>,
    inbox: &mut I,
) -> Result<Delivered<I::Answer>, ClientError> {
    let Outgoing {
        mode,
        headers,
        body,
        timeout,
        cancel,
    } = *outgoing;
    // One parser for every connection of the request: it holds the last
    // event id and the server's `retry`.
    let mut events = SseParser::new(MAX_RESPONSE_BYTES);
    let mut session_id = None;
    let mut outcome = link.exchange(
        settings,
        "POST",
        headers,
        body,
        timeout,
        cancel,
        |head, body, wait| {
            session_id = head.header("mcp-session-id").map(str::to_owned);
            read_reply(head, body, wait, &mut events, inbox)
        },
    );
    let mut resumption = Resumption::new(mode);
    loop {
        let ended = match outcome {
            Ok(Reply::Answered(answer)) => return Ok(Delivered { answer, session_id }),
            Ok(Reply::Cut) => ClientError::malformed(format!(
                "the event stream ended before the response to {}",
                inbox.name()
            )),
            // The connection dropped mid-stream, or a resume found none:
            // worth another try, if an event id was seen.
            Err(err @ (ClientError::Io(_) | ClientError::Connect { .. })) => err,
            Err(err) => return Err(err),
        };
        let wait = timeout.unwrap_or(settings.timeout);
        let resume = resumption.next(events.last_event_id(), events.retry(), wait, ended)?;
        call::pause(resume.delay, cancel)?;
        let headers = resume::headers(mode, &resume.last_event_id);
        outcome = link.exchange(
            settings,
            "GET",
            &headers,
            b"",
            timeout,
            cancel,
            |head, body, wait| read_resumed(head, body, wait, &mut events, inbox, &resumption),
        );
    }
}

/// Opens an event stream with a `GET` (the standalone stream of an MCP
/// session) and reads it into `inbox` until it ends (`None`) or completes
/// the inbox's answer. A refusal is the server's error.
pub(crate) fn listen<I: Inbox>(
    link: &mut Link,
    settings: &Settings,
    headers: &[(&str, Cow<'_, str>)],
    cancel: Option<&CancelHandle>,
    inbox: &mut I,
) -> Result<Option<I::Answer>, ClientError> {
    let mut events = SseParser::new(MAX_RESPONSE_BYTES);
    link.exchange(
        settings,
        "GET",
        headers,
        b"",
        None,
        cancel,
        |head, body, wait| {
            if head.status == 200 && head.media_type() == "text/event-stream" {
                return Ok(match read_stream(body, wait, &mut events, inbox)? {
                    Reply::Answered(answer) => Some(answer),
                    Reply::Cut => None,
                });
            }
            let bytes = body.read_all(MAX_RESPONSE_BYTES)?;
            Err(refusal(head, &bytes))
        },
    )
}

/// The answer to the client's own request `id`: its result or error, with
/// progress reports and the server's requests handed to `listener` on the way.
struct CallInbox<'a, 'b> {
    id: u64,
    listener: Listener<'a, 'b>,
}

impl Inbox for CallInbox<'_, '_> {
    type Answer = Result<Value, ClientError>;

    fn take(&mut self, message: Value, status: u16) -> Result<Option<Self::Answer>, ClientError> {
        match rpc::classify(message, self.id)? {
            Incoming::Reply(Ok(result)) => Ok(Some(Ok(result))),
            Incoming::Reply(Err(fault)) => Ok(Some(Err(rpc::rpc_error(fault, status)))),
            Incoming::Notification { method, params } if method == "notifications/progress" => {
                self.listener.progress(&params);
                Ok(None)
            }
            Incoming::Request { id, method, params } => {
                self.listener
                    .answer(&id, ServerRequest { method, params })?;
                Ok(None)
            }
            Incoming::Notification { method, params } if method == "notifications/message" => {
                self.listener.log(&params);
                Ok(None)
            }
            Incoming::Notification { .. } | Incoming::Unrelated => Ok(None),
        }
    }

    fn name(&self) -> String {
        format!("request {}", self.id)
    }
}

/// What reading an answer came to.
enum Reply<A> {
    /// The complete answer.
    Answered(A),
    /// The event stream ended before the answer was complete.
    Cut,
}

/// Reads the answer to a POST, whichever way the server sent it.
fn read_reply<I: Inbox>(
    head: &Head,
    body: &mut Body<'_, Reader>,
    wait: Duration,
    events: &mut SseParser,
    inbox: &mut I,
) -> Result<Reply<I::Answer>, ClientError> {
    if head.status == 200 && head.media_type() == "text/event-stream" {
        return read_stream(body, wait, events, inbox);
    }
    let bytes = body.read_all(MAX_RESPONSE_BYTES)?;
    if !(200..300).contains(&head.status) {
        return Err(refusal(head, &bytes));
    }
    if bytes.is_empty() {
        return Err(ClientError::malformed(format!(
            "HTTP {} with no body for {}, which needs a JSON-RPC response",
            head.status,
            inbox.name()
        )));
    }
    let message: Value = serde_json::from_slice(&bytes).map_err(|err| {
        ClientError::malformed(format!(
            "the response to {} is not JSON ({err}); Content-Type {:?}",
            inbox.name(),
            head.header("content-type").unwrap_or("")
        ))
    })?;
    match inbox.take(message, head.status)? {
        Some(answer) => Ok(Reply::Answered(answer)),
        None => Err(ClientError::malformed(format!(
            "the JSON response does not answer {}",
            inbox.name()
        ))),
    }
}

/// Reads the answer to a resume `GET`: the rest of the stream, read as
/// [`read_stream`] does, or the server's refusal, which ends `resumption`
/// (asking again would be refused again).
fn read_resumed<I: Inbox>(
    head: &Head,
    body: &mut Body<'_, Reader>,
    wait: Duration,
    events: &mut SseParser,
    inbox: &mut I,
    resumption: &Resumption,
) -> Result<Reply<I::Answer>, ClientError> {
    if head.status == 200 && head.media_type() == "text/event-stream" {
        events.restart();
        return read_stream(body, wait, events, inbox);
    }
    let bytes = body.read_all(MAX_RESPONSE_BYTES)?;
    let refused = if (200..300).contains(&head.status) {
        ClientError::malformed(format!(
            "the resume GET was answered with HTTP {} and {:?} instead of an event stream",
            head.status,
            head.header("content-type").unwrap_or("")
        ))
    } else {
        refusal(head, &bytes)
    };
    Err(resumption.failed(refused))
}

/// Reads an event stream, handing each message to `inbox`, until the
/// answer is complete; then lets the stream end.
/// [`Reply::Cut`] when it ends first: `events` then holds the id of the
/// last event handled, every one before it delivered exactly once.
fn read_stream<I: Inbox>(
    body: &mut Body<'_, Reader>,
    wait: Duration,
    events: &mut SseParser,
    inbox: &mut I,
) -> Result<Reply<I::Answer>, ClientError> {
    let mut arrived = Vec::new();
    let mut buf = vec![0u8; 16 << 10];
    let answer = 'stream: loop {
        let n = body.read(&mut buf).map_err(http1::unwrap_io)?;
        if n == 0 {
            return Ok(Reply::Cut);
        }
        events.push(&buf[..n], &mut arrived).map_err(|too| {
            ClientError::malformed(format!("an SSE event is larger than {} bytes", too.limit))
        })?;
        for event in arrived.drain(..) {
            // Priming events (an id and empty data) carry no message.
            if event.event != "message" || event.data.trim().is_empty() {
                continue;
            }
            let message: Value = serde_json::from_str(&event.data).map_err(|err| {
                ClientError::malformed(format!("an SSE message is not JSON ({err})"))
            })?;
            if let Some(answer) = inbox.take(message, 200)? {
                break 'stream answer;
            }
        }
    };
    // The server should end the stream after the response; give it a moment
    // so the connection can be reused, and give up on reuse otherwise.
    if !body.is_done()
        && body
            .reader()
            .get_ref()
            .set_read_timeout(Some(STREAM_END_GRACE.min(wait)))
            .is_ok()
    {
        let _ = body.drain();
        let _ = body.reader().get_ref().set_read_timeout(Some(wait));
    }
    Ok(Reply::Answered(answer))
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
