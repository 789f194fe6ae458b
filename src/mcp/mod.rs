//! The MCP core, free of I/O: a plain description of an HTTP request in, a
//! plain description of the response out.
//!
//! The transport (`http.rs`) has already checked Host/Origin, routed the
//! path, authenticated the bearer and read the body; what is left here is the
//! protocol: JSON-RPC framing, the `initialize` lifecycle and its
//! `Mcp-Session-Id`, revision rules (batches only in 2025-03-26, the
//! `MCP-Protocol-Version` header), and dispatch to the surface. Keeping it
//! sans-IO makes every protocol rule testable and fuzzable without a socket.

mod jsonrpc;
mod lifecycle;
mod params;
mod state;
mod stateless;
mod tools;
mod version;

use std::sync::Arc;

use serde_json::Value;

pub(crate) use jsonrpc::{failure, RpcError, INVALID_REQUEST, SERVER_ERROR};
pub(crate) use lifecycle::McpSessions;
pub(crate) use params::{header_params, HeaderParam};
pub(crate) use state::StateSigner;
pub(crate) use tools::CallSlots;
pub use version::Revision;

use jsonrpc::{classify, success, Message, METHOD_NOT_FOUND, PARSE_ERROR};
use lifecycle::Caller;

use crate::context::LogLevel;
use crate::event::{emit, AuthRefusal, Event, EventHook};
use crate::hub::{Hub, StreamKind};
use crate::resume::CallStream;
use crate::session::{lock, CallKey, SessionEntry};
use crate::timer::Timer;

/// JSON-RPC code for an `Mcp-Session-Id` the server does not know.
const SESSION_NOT_FOUND: i64 = -32001;

/// Host-wide protocol settings: who the server says it is, and where events go.
pub(crate) struct Service {
    pub(crate) name: String,
    pub(crate) version: String,
    pub(crate) title: Option<String>,
    pub(crate) instructions: Option<String>,
    pub(crate) hook: Option<EventHook>,
    pub(crate) cache: CacheHint,
    pub(crate) slots: tools::CallSlots,
    pub(crate) hub: Arc<Hub>,
    pub(crate) timer: Arc<Timer>,
    pub(crate) states: state::StateSigner,
    pub(crate) call_timeout: Option<std::time::Duration>,
    pub(crate) long_call_report: Option<std::time::Duration>,
}

/// Who may reuse a cached `tools/list` (2026-07-28 `cacheScope`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CacheScope {
    /// Only the same authorization context: the same bearer. Right for
    /// toolhost, whose tool lists belong to one session.
    Private,
    /// Anyone, across authorization contexts.
    Public,
}

impl CacheScope {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            CacheScope::Private => "private",
            CacheScope::Public => "public",
        }
    }
}

/// The caching hint sent with `tools/list` and `server/discover` in
/// 2026-07-28.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CacheHint {
    pub(crate) ttl_ms: u64,
    pub(crate) scope: CacheScope,
}

impl Service {
    /// Reports an event to the hook, or to the `log` facade without one;
    /// the event is only built when someone may listen.
    pub(crate) fn emit(&self, event: impl FnOnce() -> Event) {
        emit(self.hook.as_ref(), event);
    }

    /// A refusal: reported to the hook, then answered with a JSON-RPC error.
    pub(crate) fn refuse(&self, status: u16, id: Option<&Value>, error: &RpcError) -> HttpResponse {
        self.emit(|| Event::BadRequest {
            status,
            message: error.message.clone(),
        });
        HttpResponse::json(status, &failure(id, error))
    }

    /// The answer to a missing, malformed, unknown or revoked bearer: one
    /// body for all of them, so none can be told from another.
    pub(crate) fn unauthorized(&self, reason: AuthRefusal) -> HttpResponse {
        self.emit(|| Event::AuthRefused { reason });
        let error = RpcError::new(
            SERVER_ERROR,
            "Unauthorized: send the session's bearer token as \"Authorization: Bearer <token>\"",
        );
        let mut response = HttpResponse::json(401, &failure(None, &error));
        response
            .headers
            .push(("WWW-Authenticate", "Bearer realm=\"toolhost\"".into()));
        response
    }
}

/// Request headers, looked up case-insensitively. Names and values share
/// one buffer (two allocations per request, not two per header: this runs
/// for every request).
#[derive(Debug, Default)]
pub(crate) struct Headers {
    text: String,
    /// Per header, where its name ends and its value ends in `text`; each
    /// name starts where the previous value ended.
    spans: Vec<(usize, usize)>,
}

impl Headers {
    /// The headers `pairs` (name, value), in order, copied once.
    pub(crate) fn new<'a, I>(pairs: I) -> Headers
    where
        I: IntoIterator<Item = (&'a str, &'a str)>,
        I::IntoIter: Clone,
    {
        let pairs = pairs.into_iter();
        let size = pairs.clone().map(|(n, v)| n.len() + v.len()).sum();
        let mut headers = Headers {
            text: String::with_capacity(size),
            spans: Vec::with_capacity(pairs.size_hint().0),
        };
        for (name, value) in pairs {
            headers.text.push_str(name);
            let name_end = headers.text.len();
            headers.text.push_str(value);
            headers.spans.push((name_end, headers.text.len()));
        }
        headers
    }

    /// Every header, in the order received.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        let mut start = 0;
        self.spans.iter().map(move |&(name_end, value_end)| {
            let pair = (&self.text[start..name_end], &self.text[name_end..value_end]);
            start = value_end;
            pair
        })
    }

    /// How many headers there are.
    pub(crate) fn len(&self) -> usize {
        self.spans.len()
    }

    /// The first value of header `name`.
    pub(crate) fn get(&self, name: &str) -> Option<&str> {
        self.iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v)
    }
}

/// A response to write: status, headers and a complete body.
#[derive(Debug, PartialEq)]
pub(crate) struct HttpResponse {
    pub(crate) status: u16,
    pub(crate) headers: Vec<(&'static str, String)>,
    pub(crate) body: Vec<u8>,
}

impl HttpResponse {
    pub(crate) fn json(status: u16, body: &Value) -> HttpResponse {
        HttpResponse {
            status,
            headers: vec![("Content-Type", "application/json".into())],
            // Straight into bytes: `to_string` would go through `fmt`.
            // Serializing a `Value` cannot fail (its keys are strings).
            body: serde_json::to_vec(body).unwrap_or_default(),
        }
    }

    pub(crate) fn empty(status: u16) -> HttpResponse {
        HttpResponse {
            status,
            headers: Vec::new(),
            body: Vec::new(),
        }
    }

    /// An event stream that ends without a response: what a client that
    /// cancelled its request gets.
    pub(crate) fn end_of_stream() -> HttpResponse {
        HttpResponse {
            status: 200,
            headers: vec![("Content-Type", "text/event-stream".into())],
            body: Vec::new(),
        }
    }
}

/// Where the notifications of a running request go. The transport turns
/// the response into an event stream when the first one is sent.
pub(crate) trait Outlet: Send + Sync {
    /// Sends one JSON-RPC message on the request's response stream;
    /// `Err(Gone)` when the client has gone away.
    fn notify(&self, message: &Value) -> Result<(), Gone>;

    /// Answers the request now with `message` (as the response, or as the
    /// stream's last event) and closes it: what a call's deadline does while
    /// its handler still runs. Whatever is answered later is dropped.
    fn answer(&self, message: &Value);

    /// Makes the response stream resumable (stateful revisions): its events
    /// carry ids, it is kept in `entry` for a `GET` with `Last-Event-ID`
    /// from `mcp_session`, and a dropped connection detaches it instead of
    /// cancelling the call. `priming`: open it with an id-only event.
    fn resumable(&self, entry: &Arc<SessionEntry>, mcp_session: &str, priming: bool);

    /// Closes the connection carrying the response stream, asking the
    /// client to reconnect after `retry` and resume; `false` when the stream
    /// is not resumable, has ended, or no connection carries it.
    fn close_connection(&self, retry: std::time::Duration) -> bool;
}

/// The client has gone: why, as the call's cancellation reason.
#[derive(Debug)]
pub(crate) struct Gone(pub(crate) &'static str);

impl Gone {
    /// A stream that cannot be resumed lost its connection.
    pub(crate) const CLOSED: Gone = Gone("the client closed the response stream");
    /// A resumable stream's client stayed away past the resume window.
    pub(crate) const AWAY: Gone =
        Gone("the client lost the response stream and did not reconnect within the resume window");
}

/// What the transport should do with a request: answer it, or open a
/// long-lived event stream and hand it to the hub.
pub(crate) enum Reply {
    Http(HttpResponse),
    Stream(StreamOpen),
    /// Carry on a dropped response stream, after event `after`.
    Resume {
        stream: Arc<CallStream>,
        after: u64,
    },
}

/// A long-lived stream to open: its owner, its kind, and the messages to
/// send first.
pub(crate) struct StreamOpen {
    pub(crate) entry: Arc<SessionEntry>,
    pub(crate) kind: StreamKind,
    pub(crate) first: Vec<Value>,
}

/// A reason to stop handling a request and answer at the HTTP level.
#[derive(Debug)]
pub(crate) enum Halt {
    /// The session was revoked while the request was being handled.
    Revoked,
    /// Every call slot is taken: the client should retry shortly.
    Busy { running: usize },
    /// The client cancelled the request: it gets no response.
    Cancelled,
}

impl Service {
    /// The HTTP answer to a halted request.
    fn halted(&self, halt: Halt, id: Option<&Value>) -> HttpResponse {
        match halt {
            Halt::Revoked => self.unauthorized(AuthRefusal::Unknown),
            Halt::Busy { running } => {
                let mut error = RpcError::new(
                    SERVER_ERROR,
                    format!(
                        "Server busy: all {running} tool-call slots are running handlers; retry in a moment"
                    ),
                );
                error.data = Some(serde_json::json!({"retryable": true}));
                let mut response = self.refuse(503, id, &error);
                response.headers.push(("Retry-After", "1".into()));
                response
            }
            Halt::Cancelled => HttpResponse::end_of_stream(),
        }
    }
}

/// What a request runs in: its bearer's entry, its caller and its outlet.
struct Turn<'a> {
    service: &'a Service,
    entry: &'a Arc<SessionEntry>,
    caller: Caller,
    outlet: &'a Arc<dyn Outlet>,
}

/// Handles a POST to the MCP endpoint.
pub(crate) fn post(
    service: &Service,
    entry: &Arc<SessionEntry>,
    headers: &Headers,
    body: &[u8],
    outlet: &Arc<dyn Outlet>,
) -> Reply {
    let value: Value = match serde_json::from_slice(body) {
        Ok(value) => value,
        Err(err) => {
            let error = RpcError::new(PARSE_ERROR, format!("the body is not valid JSON: {err}"));
            return Reply::Http(service.refuse(400, None, &error));
        }
    };
    let id = jsonrpc::request_id(&value).cloned();
    if stateless::is_stateless(&value, headers) {
        return stateless::post(service, entry, headers, value, outlet)
            .unwrap_or_else(|halt| Reply::Http(service.halted(halt, id.as_ref())));
    }
    if let Some(version) = headers.get("mcp-protocol-version") {
        if Revision::parse(version).is_none() {
            let error = RpcError::new(
                INVALID_REQUEST,
                format!(
                    "unsupported MCP-Protocol-Version {version:?}; this server supports {}",
                    version::supported_list()
                ),
            );
            return Reply::Http(service.refuse(400, jsonrpc::request_id(&value), &error));
        }
    }
    let outcome = match value {
        Value::Array(items) => batch(service, entry, headers, items, outlet),
        single => one(service, entry, headers, single, outlet),
    };
    Reply::Http(outcome.unwrap_or_else(|halt| service.halted(halt, id.as_ref())))
}

/// Whether a GET or DELETE speaks 2026-07-28, by its version header.
fn stateless_header(headers: &Headers) -> bool {
    headers
        .get("mcp-protocol-version")
        .and_then(Revision::parse)
        .is_some_and(Revision::is_stateless)
}

/// Handles a GET: opens the standalone event stream of an MCP session, on
/// which the host sends `notifications/tools/list_changed`, or with
/// `Last-Event-ID` resumes a response stream whose connection dropped.
pub(crate) fn get(service: &Service, entry: &Arc<SessionEntry>, headers: &Headers) -> Reply {
    if stateless_header(headers) {
        return Reply::Http(stateless::method_not_allowed(service));
    }
    if let Some(accept) = headers.get("accept") {
        if !accepts(accept, "text/event-stream") {
            let error = RpcError::new(
                INVALID_REQUEST,
                "Not Acceptable: the standalone stream is text/event-stream; send Accept: text/event-stream",
            );
            return Reply::Http(service.refuse(406, None, &error));
        }
    }
    let caller = match find_session(service, entry, headers, None) {
        Ok(caller) => caller,
        Err(refusal) => return Reply::Http(refusal),
    };
    if let Some(last_event_id) = headers.get("last-event-id") {
        let mcp_session = caller.session_id.as_deref().unwrap_or_default();
        return match entry.streams.find(mcp_session, last_event_id) {
            Some((stream, after)) => Reply::Resume { stream, after },
            None => Reply::Http(resume_refused(service)),
        };
    }
    Reply::Stream(StreamOpen {
        entry: Arc::clone(entry),
        kind: StreamKind::Standalone,
        first: Vec::new(),
    })
}

/// The answer to a `Last-Event-ID` that cannot be resumed.
pub(crate) fn resume_refused(service: &Service) -> HttpResponse {
    service.refuse(
        400,
        None,
        &RpcError::new(
            INVALID_REQUEST,
            "Bad Request: Last-Event-ID names no stream this MCP session can resume (unknown, delivered to its end, or expired); send the request again",
        ),
    )
}

/// Whether an `Accept` header admits `media` (exactly, by its type's
/// wildcard, or by `*/*`).
pub(crate) fn accepts(accept: &str, media: &str) -> bool {
    let family = media.split('/').next().unwrap_or("");
    accept.split(',').any(|range| {
        let range = range.split(';').next().unwrap_or("").trim();
        range == "*/*"
            || range.eq_ignore_ascii_case(media)
            || range
                .strip_suffix("/*")
                .is_some_and(|t| t.eq_ignore_ascii_case(family))
    })
}

/// Handles a DELETE: ends the MCP session named by `Mcp-Session-Id`.
pub(crate) fn delete(service: &Service, entry: &SessionEntry, headers: &Headers) -> HttpResponse {
    if stateless_header(headers) {
        return stateless::method_not_allowed(service);
    }
    let Some(id) = headers.get("mcp-session-id") else {
        return service.refuse(400, None, &missing_session_id());
    };
    if lock(&entry.mcp).close(id) {
        HttpResponse::empty(204)
    } else {
        service.refuse(404, None, &unknown_session())
    }
}

fn missing_session_id() -> RpcError {
    RpcError::new(
        SERVER_ERROR,
        "Bad Request: this request needs the Mcp-Session-Id header that the initialize response carried",
    )
}

fn unknown_session() -> RpcError {
    RpcError::new(
        SESSION_NOT_FOUND,
        "Session not found: this Mcp-Session-Id has ended or never existed; send initialize to start a new session",
    )
}

/// The MCP session a non-`initialize` message belongs to, or the refusal.
fn find_session(
    service: &Service,
    entry: &SessionEntry,
    headers: &Headers,
    request_id: Option<&Value>,
) -> Result<Caller, HttpResponse> {
    let Some(id) = headers.get("mcp-session-id") else {
        return Err(service.refuse(400, request_id, &missing_session_id()));
    };
    lock(&entry.mcp)
        .touch(id)
        .ok_or_else(|| service.refuse(404, request_id, &unknown_session()))
}

fn one(
    service: &Service,
    entry: &Arc<SessionEntry>,
    headers: &Headers,
    value: Value,
    outlet: &Arc<dyn Outlet>,
) -> Result<HttpResponse, Halt> {
    let message = match classify(value) {
        Ok(message) => message,
        Err(invalid) => return Ok(service.refuse(400, invalid.id.as_ref(), &invalid.error)),
    };
    if let Message::Request { id, method, params } = &message {
        if method == "initialize" {
            return Ok(initialize(service, entry, id, params.as_ref()));
        }
    }
    let request_id = match &message {
        Message::Request { id, .. } => Some(id),
        _ => None,
    };
    let caller = match find_session(service, entry, headers, request_id) {
        Ok(caller) => caller,
        Err(refusal) => return Ok(refusal),
    };
    offer_resume(entry, &caller, outlet);
    let turn = Turn {
        service,
        entry,
        caller,
        outlet,
    };
    Ok(match message {
        Message::Request { id, method, params } => {
            let reply = turn.request(&id, &method, params.as_ref())?;
            HttpResponse::json(200, &reply)
        }
        Message::Notification { method, params } => {
            turn.notification(&method, params.as_ref());
            HttpResponse::empty(202)
        }
        Message::Response { id, outcome } => turn.response(&id, outcome),
    })
}

/// Lets the response stream of a request in a stateful MCP session be
/// resumed after a dropped connection, where the revision provides for it.
fn offer_resume(entry: &Arc<SessionEntry>, caller: &Caller, outlet: &Arc<dyn Outlet>) {
    if let Some(mcp_session) = &caller.session_id {
        if caller.revision.resumes_streams() {
            outlet.resumable(entry, mcp_session, caller.revision.primes_streams());
        }
    }
}

fn initialize(
    service: &Service,
    entry: &SessionEntry,
    id: &Value,
    params: Option<&Value>,
) -> HttpResponse {
    let caller = match lifecycle::read_initialize(params) {
        Ok(caller) => caller,
        Err(error) => return HttpResponse::json(200, &failure(Some(id), &error)),
    };
    let result = lifecycle::initialize_result(service, caller.revision);
    let session_id = lock(&entry.mcp).open(caller);
    let mut response = HttpResponse::json(200, &success(id, result));
    response.headers.push(("Mcp-Session-Id", session_id));
    response
}

fn batch(
    service: &Service,
    entry: &Arc<SessionEntry>,
    headers: &Headers,
    items: Vec<Value>,
    outlet: &Arc<dyn Outlet>,
) -> Result<HttpResponse, Halt> {
    if items.is_empty() {
        let error = RpcError::new(INVALID_REQUEST, "an empty JSON-RPC batch is not a request");
        return Ok(service.refuse(400, None, &error));
    }
    let caller = match find_session(service, entry, headers, None) {
        Ok(caller) => caller,
        Err(refusal) => return Ok(refusal),
    };
    if !caller.revision.allows_batches() {
        let error = RpcError::new(
            INVALID_REQUEST,
            format!(
                "JSON-RPC batches belong to revision 2025-03-26 only; this MCP session speaks {}: send one message per request",
                caller.revision
            ),
        );
        return Ok(service.refuse(400, None, &error));
    }
    offer_resume(entry, &caller, outlet);
    let turn = Turn {
        service,
        entry,
        caller,
        outlet,
    };
    let mut replies = Vec::new();
    for item in items {
        match classify(item) {
            Ok(Message::Request { id, method, .. }) if method == "initialize" => {
                let error =
                    RpcError::new(INVALID_REQUEST, "initialize must not be part of a batch");
                replies.push(failure(Some(&id), &error));
            }
            Ok(Message::Request { id, method, params }) => {
                match turn.request(&id, &method, params.as_ref()) {
                    Ok(reply) => replies.push(reply),
                    Err(Halt::Cancelled) => {}
                    Err(halt) => return Err(halt),
                }
            }
            Ok(Message::Notification { method, params }) => {
                turn.notification(&method, params.as_ref());
            }
            Ok(Message::Response { id, outcome }) => {
                turn.response(&id, outcome);
            }
            Err(invalid) => replies.push(failure(invalid.id.as_ref(), &invalid.error)),
        }
    }
    Ok(if replies.is_empty() {
        HttpResponse::empty(202)
    } else {
        HttpResponse::json(200, &Value::Array(replies))
    })
}

impl Turn<'_> {
    /// Answers one request inside an MCP session.
    fn request(&self, id: &Value, method: &str, params: Option<&Value>) -> Result<Value, Halt> {
        let result = match method {
            "ping" => Ok(Value::Object(serde_json::Map::new())),
            "tools/list" => tools::list(self.service, self.entry, self.caller.revision, params),
            "tools/call" => tools::call(
                self.service,
                self.entry,
                &self.caller,
                id,
                params,
                self.outlet,
                None,
            )?,
            "logging/setLevel" => self.set_log_level(params),
            other => Err(RpcError::new(
                METHOD_NOT_FOUND,
                format!("method {other:?} is not offered by this server, which serves tools only"),
            )),
        };
        Ok(match result {
            Ok(result) => success(id, result),
            Err(error) => failure(Some(id), &error),
        })
    }

    /// `logging/setLevel`: from now on, log messages at `level` or above.
    fn set_log_level(&self, params: Option<&Value>) -> Result<Value, RpcError> {
        let level = params
            .and_then(|p| p.get("level"))
            .and_then(Value::as_str)
            .and_then(LogLevel::parse)
            .ok_or_else(|| {
                RpcError::invalid_params(
                    "logging/setLevel needs params.level, one of debug, info, notice, warning, error, critical, alert, emergency",
                )
            })?;
        if let Some(id) = &self.caller.session_id {
            lock(&self.entry.mcp).set_log_level(id, level);
        }
        Ok(Value::Object(serde_json::Map::new()))
    }

    /// Hands a client's answer to the handler awaiting it: 202, or 400 for
    /// an id no handler awaits from this MCP session (wrong, late, repeated).
    fn response(&self, id: &Value, outcome: Result<Value, Value>) -> HttpResponse {
        if self
            .entry
            .deliver_answer(id, self.caller.session_id.as_deref(), outcome)
        {
            return HttpResponse::empty(202);
        }
        let error = RpcError::new(
            INVALID_REQUEST,
            format!("no request of this server awaits a response with id {id} in this session; it was answered, cancelled or never sent"),
        );
        self.service.refuse(400, None, &error)
    }

    /// Acts on a notification; unknown ones are ignored, as JSON-RPC asks.
    fn notification(&self, method: &str, params: Option<&Value>) {
        if method != "notifications/cancelled" {
            return;
        }
        let (Some(session), Some(request_id)) = (
            &self.caller.session_id,
            params.and_then(|p| p.get("requestId")),
        ) else {
            return;
        };
        let reason = params
            .and_then(|p| p.get("reason"))
            .and_then(Value::as_str)
            .unwrap_or("cancelled by the client");
        let key = CallKey {
            mcp_session: session.clone(),
            request_id: request_id.clone(),
        };
        self.entry.cancel_request(&key, reason);
    }
}
