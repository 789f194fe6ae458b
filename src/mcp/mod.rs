//! The MCP core, sans-IO: a request's headers and body in, a [`Plan`] out.
//!
//! The transport has already checked Host/Origin, routed the path,
//! authenticated the bearer and read the body; what is left here is the
//! protocol: JSON-RPC framing, the `initialize` lifecycle and its
//! `Mcp-Session-Id`, revision rules (batches only in 2025-03-26, the
//! `MCP-Protocol-Version` header, 2026-07-28's `_meta` and header checks),
//! `tools/list`, and every check a `tools/call` passes before a handler may
//! run. What the core cannot do itself — run a handler, cancel a call,
//! deliver an answer, open or resume a stream — it describes, and the
//! runtime carries out; the runtime's results come back through
//! [`finish`] and [`call_reply`], which spell the response.
//!
//! The core holds no locks, starts no threads, reads no clock and touches
//! no socket: the bearer's session state reaches it through the
//! [`BearerState`] port, which the runtime implements over its session table
//! and a unit test implements over plain data. So every protocol rule is
//! tested below without a socket.

mod lifecycle;
mod methods;
mod plan;
mod result;
mod result_meta;
mod server;
mod stateful;
mod stateless;
mod streams;
mod tools;

use serde_json::Value;

pub(crate) use lifecycle::{Caller, McpSessions};
pub(crate) use plan::{finish, CallKey, CallPlan, Plan, Step, StepResult, Work};
pub use server::CacheScope;
pub(crate) use server::{CacheHint, Server};
pub(crate) use streams::{StreamKind, StreamOpen};
pub(crate) use tools::{
    call_reply, checked_outcome, input_required, not_run_reply, timeout_reply, tool_error_reply,
};

use crate::call::ToolSurface;
use crate::model::http::{Headers, HttpResponse};
use crate::model::jsonrpc::{
    self, classify_envelope, not_an_object, Body, Message, RpcError, INVALID_REQUEST, PARSE_ERROR,
    SERVER_ERROR, SESSION_NOT_FOUND,
};
use crate::model::{LogLevel, Revision};

/// What the core needs of the bearer's session: its tool surface, and the
/// MCP sessions (`Mcp-Session-Id`) opened under it. The state lives with
/// the runtime; the core reads and changes it only through these calls.
pub(crate) trait BearerState {
    /// The surface, asked afresh on every request.
    fn surface(&self) -> &dyn ToolSurface;
    /// Opens an MCP session for `caller` under a fresh id, and returns it.
    fn open(&self, caller: Caller) -> String;
    /// The caller of MCP session `id`, marking it as used.
    fn find(&self, id: &str) -> Option<Caller>;
    /// Sets MCP session `id`'s log level; `false` when there is none.
    fn set_log_level(&self, id: &str, level: LogLevel) -> bool;
    /// Ends MCP session `id`; `false` when there was none.
    fn close(&self, id: &str) -> bool;
}

/// Plans a POST to the MCP endpoint.
pub(crate) fn post(
    server: &Server,
    session: &dyn BearerState,
    headers: &Headers,
    body: &[u8],
) -> Plan {
    let body = match jsonrpc::parse(body) {
        Ok(body) => body,
        Err(err) => {
            let error = RpcError::new(PARSE_ERROR, format!("the body is not valid JSON: {err}"));
            return Plan::Respond(server.refuse(400, None, &error));
        }
    };
    let stateless = match &body {
        Body::One(envelope) => stateless::is_stateless(envelope.meta(), headers),
        Body::Batch(_) | Body::NotAnObject => false,
    };
    if !stateless {
        if let Some(refusal) = unknown_version(server, headers, &body) {
            return refusal;
        }
    }
    match body {
        Body::One(envelope) if stateless => {
            stateless::post(server, session, headers, classify_envelope(envelope))
        }
        Body::One(envelope) => stateful::one(server, session, headers, classify_envelope(envelope)),
        Body::Batch(items) => stateful::batch(server, session, headers, items),
        Body::NotAnObject => {
            stateful::one(server, session, headers, Message::Invalid(not_an_object()))
        }
    }
}

/// The refusal of a handshake-era POST whose `MCP-Protocol-Version` names
/// no revision this server knows, answered to the message's id if it has one.
fn unknown_version(server: &Server, headers: &Headers, body: &Body) -> Option<Plan> {
    let version = headers.get("mcp-protocol-version")?;
    if Revision::parse(version).is_some() {
        return None;
    }
    let error = RpcError::new(
        INVALID_REQUEST,
        format!(
            "unsupported MCP-Protocol-Version {version:?}; this server supports {}",
            Revision::supported_list()
        ),
    );
    let id = match body {
        Body::One(envelope) => envelope.request_id(),
        Body::Batch(_) | Body::NotAnObject => None,
    };
    Some(Plan::Respond(server.refuse(400, id, &error)))
}

/// Whether a GET or DELETE speaks 2026-07-28, by its version header.
fn stateless_header(headers: &Headers) -> bool {
    headers
        .get("mcp-protocol-version")
        .and_then(Revision::parse)
        .is_some_and(Revision::is_stateless)
}

/// Plans a GET: the standalone event stream of an MCP session, on which
/// the host sends `notifications/tools/list_changed`, or with
/// `Last-Event-ID` the resumption of a response stream whose connection
/// dropped.
pub(crate) fn get(server: &Server, session: &dyn BearerState, headers: &Headers) -> Plan {
    if stateless_header(headers) {
        return Plan::Respond(stateless::method_not_allowed(server));
    }
    if let Some(accept) = headers.get("accept") {
        if !accepts(accept, "text/event-stream") {
            let error = RpcError::new(
                INVALID_REQUEST,
                "Not Acceptable: the standalone stream is text/event-stream; send Accept: text/event-stream",
            );
            return Plan::Respond(server.refuse(406, None, &error));
        }
    }
    let caller = match find_session(server, session, headers, None) {
        Ok(caller) => caller,
        Err(refusal) => return Plan::Respond(refusal),
    };
    if let Some(last_event_id) = headers.get("last-event-id") {
        return Plan::Resume {
            mcp_session: caller.session_id.unwrap_or_default(),
            last_event_id: last_event_id.to_owned(),
        };
    }
    Plan::Stream(StreamOpen {
        kind: StreamKind::Standalone,
        first: Vec::new(),
    })
}

/// Handles a DELETE: ends the MCP session named by `Mcp-Session-Id`.
pub(crate) fn delete(
    server: &Server,
    session: &dyn BearerState,
    headers: &Headers,
) -> HttpResponse {
    if stateless_header(headers) {
        return stateless::method_not_allowed(server);
    }
    let Some(id) = headers.get("mcp-session-id") else {
        return server.refuse(400, None, &missing_session_id());
    };
    if session.close(id) {
        HttpResponse::empty(204)
    } else {
        server.refuse(404, None, &unknown_session())
    }
}

/// The answer to a `Last-Event-ID` that cannot be resumed.
pub(crate) fn resume_refused(server: &Server) -> HttpResponse {
    server.refuse(
        400,
        None,
        &RpcError::new(
            INVALID_REQUEST,
            "Bad Request: Last-Event-ID names no stream this MCP session can resume (unknown, delivered to its end, or expired); send the request again",
        ),
    )
}

/// The answer when the host keeps as many event streams as it may.
pub(crate) fn too_many_streams(server: &Server, most: usize) -> HttpResponse {
    let mut error = RpcError::new(
        SERVER_ERROR,
        format!(
            "Server busy: {most} event streams are open, the most this host keeps; retry later"
        ),
    );
    error.data = Some(serde_json::json!({"retryable": true}));
    let mut response = server.refuse(503, None, &error);
    response.headers.push(("Retry-After", "5".into()));
    response
}

/// Whether an `Accept` header admits `media` (exactly, by its type's
/// wildcard, or by `*/*`). Read as bytes: every POST asks this, and
/// splitting a short header with `str` patterns (a `memchr` set up per
/// piece) cost more than the rest of the check; header values are ASCII.
pub(crate) fn accepts(accept: &str, media: &str) -> bool {
    let media = media.as_bytes();
    let family = media.split(|&b| b == b'/').next().unwrap_or_default();
    accept.as_bytes().split(|&b| b == b',').any(|range| {
        let range = trim(range.split(|&b| b == b';').next().unwrap_or_default());
        range == b"*/*"
            || range.eq_ignore_ascii_case(media)
            || range
                .strip_suffix(b"/*")
                .is_some_and(|t| t.eq_ignore_ascii_case(family))
    })
}

/// `bytes` without the whitespace `str::trim` takes off ASCII text.
fn trim(bytes: &[u8]) -> &[u8] {
    let space = |b: &u8| matches!(b, b' ' | b'\t' | b'\n' | 0x0B | 0x0C | b'\r');
    let start = bytes.iter().position(|b| !space(b)).unwrap_or(bytes.len());
    let end = bytes
        .iter()
        .rposition(|b| !space(b))
        .map_or(start, |last| last + 1);
    &bytes[start..end]
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
    server: &Server,
    session: &dyn BearerState,
    headers: &Headers,
    request_id: Option<&Value>,
) -> Result<Caller, HttpResponse> {
    let Some(id) = headers.get("mcp-session-id") else {
        return Err(server.refuse(400, request_id, &missing_session_id()));
    };
    session
        .find(id)
        .ok_or_else(|| server.refuse(404, request_id, &unknown_session()))
}

#[cfg(test)]
mod tests;
