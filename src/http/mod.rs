//! The transport: from a tiny_http request to the MCP core and back.
//!
//! Everything that can be decided from the request line and headers is
//! decided here, before a byte of the body is read: Host and Origin (DNS
//! rebinding), the route, the method, and the bearer. Only a request from a
//! live session's holder gets its body read, and only up to the size limit.
//! The checks are pure functions of [`Head`], so they are tested without a
//! socket; [`serve`] is the thin shell that does the I/O.
//!
//! # What a client without the bearer can cost
//!
//! A refused request ends its connection: one answer with
//! `Connection: close`, and nothing more answered on it (see `refused`). A
//! body nobody reads is read off and thrown away on a drain thread of its
//! own, never a worker's and never behind another client's, and the
//! answer follows it (see `drain`); every connection reads with a timeout,
//! so idle ones close (see `socket`); a dead accept thread is replaced (see
//! `pool`). What tiny_http 0.12 does before the host sees a request, or
//! after it lets go of one, cannot be bounded without replacing it, and
//! stays as it is (measured in `tests/tests/unauthenticated_load.rs`):
//!
//! - a header line, and the head as a whole, is read into memory whole
//!   (the 431 for more than 100 headers or 32 KiB comes after): a client
//!   that sends a 64 MiB header line costs that much until it is refused;
//! - each connection has a thread of tiny_http's and two descriptors while
//!   it is open, and tiny_http closes it only when its client does or a
//!   read of it waits out the read timeout: a client that trickles a head,
//!   or a refused body, a byte per read timeout keeps it for as long as it
//!   goes on (there is no total deadline to set, and no way to close a
//!   connection tiny_http holds); a refused body's drain thread goes with
//!   it;
//! - a connection's pipelined requests are read ahead into one queue,
//!   unbounded; once one is refused the rest are dropped as fast as
//!   tiny_http parses them, so the queue stays short, but requests the
//!   host answers (a bearer holder's) are not limited per connection;
//! - a body declared longer than any the host drains (1 GiB, or
//!   `max_body_bytes`) leaves its connection open and unread for good,
//!   counted and reported (see `reply::abandon`).

pub(crate) mod drain;
pub(crate) mod pool;
mod raw_response;
mod refused;
mod reply;
pub(crate) mod socket;

pub(crate) use drain::Drainer;
pub(crate) use pool::{Pool, StartError};
pub(crate) use refused::Refused;

use std::io::{self, Read};
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use crate::event::{AuthRefusal, Event};
use crate::mcp::{self, Plan, Server};
use crate::model::http::{Headers, HttpResponse};
use crate::model::jsonrpc::{failure, RpcError, INVALID_REQUEST, SERVER_ERROR};
use crate::runtime::table::{SessionEntry, SessionTable};
use crate::runtime::{Lane, Outlet, OwnThread, Runtime};

use reply::{
    discard, open_stream, refuse_and_close, reply_leaving_body, respond_now, unread_body_bytes,
    Responder,
};

/// Everything a worker needs to answer requests; shared by all workers.
pub(crate) struct Transport {
    pub(crate) table: Arc<SessionTable>,
    pub(crate) runtime: Arc<Runtime>,
    /// The bound address: its port must appear in `Host`, and a non-loopback
    /// bind also accepts its own literal as the host name.
    pub(crate) ip: IpAddr,
    pub(crate) port: u16,
    /// Shared with the session guards, which hand out capability URLs only
    /// where they are served.
    pub(crate) config: Arc<HttpConfig>,
    /// The connections requests were refused on, and the rate of
    /// refused-bearer reports.
    pub(crate) refused: Refused,
    /// Where bodies nobody reads are drained.
    pub(crate) drainer: Arc<Drainer>,
    /// How many connections were left open for good (see `reply::abandon`).
    pub(crate) abandoned: AtomicU64,
}

/// How the HTTP shell is set up: the group of
/// [`HostConfig`](crate::HostConfig) that the listener, the workers and the
/// transport read, held by the config and handed over whole. Each field is
/// named after its setter, where its default and unit are documented.
#[derive(Clone, Debug)]
pub(crate) struct HttpConfig {
    /// [`HostConfig::workers`](crate::HostConfig::workers).
    pub(crate) workers: usize,
    /// Every origin given to [`HostConfig::allow_origin`](crate::HostConfig::allow_origin).
    pub(crate) allow_origin: Vec<String>,
    /// [`HostConfig::capability_urls`](crate::HostConfig::capability_urls).
    pub(crate) capability_urls: bool,
    /// [`HostConfig::max_body_bytes`](crate::HostConfig::max_body_bytes).
    pub(crate) max_body_bytes: usize,
    /// [`HostConfig::read_timeout`](crate::HostConfig::read_timeout).
    pub(crate) read_timeout: Duration,
    /// [`HostConfig::write_timeout`](crate::HostConfig::write_timeout).
    pub(crate) write_timeout: Duration,
    /// [`HostConfig::resume_window`](crate::HostConfig::resume_window).
    pub(crate) resume_window: Duration,
}

/// The request line and headers: all the checks look at.
#[derive(Debug)]
pub(crate) struct Head {
    pub(crate) method: String,
    pub(crate) url: String,
    pub(crate) headers: Headers,
}

/// The HTTP methods the endpoint serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Verb {
    Post,
    Get,
    Delete,
}

/// A request that passed every header check.
pub(crate) struct Admitted {
    pub(crate) verb: Verb,
    pub(crate) entry: Arc<SessionEntry>,
    /// Whether the client takes an event stream for an answer (a POST's;
    /// decided once with the 406 check).
    pub(crate) accepts_stream: bool,
}

/// Where the credential of a request is.
enum Credential<'a> {
    /// In the `Authorization` header (the `/mcp` route).
    Header,
    /// In the path (the `/cap/<token>/mcp` route).
    Path(&'a str),
}

const ALLOW: &str = "GET, POST, DELETE";

fn forbidden(server: &Server, why: &str) -> HttpResponse {
    server.refuse(
        403,
        None,
        &RpcError::new(SERVER_ERROR, format!("Forbidden: {why}")),
    )
}

/// Whether `host` (a `Host` header) names this server on loopback (or on its
/// explicitly allowed bind address) with the bound port.
pub(crate) fn host_allowed(host: &str, ip: IpAddr, port: u16) -> bool {
    let (name, host_port) = if let Some(rest) = host.strip_prefix('[') {
        match rest.split_once(']') {
            Some((name, tail)) => (name, tail.strip_prefix(':')),
            None => return false,
        }
    } else {
        match host.rsplit_once(':') {
            Some((name, tail)) => (name, Some(tail)),
            None => (host, None),
        }
    };
    if host_port.and_then(strict_port) != Some(port) {
        return false;
    }
    name.eq_ignore_ascii_case("localhost")
        || name == "127.0.0.1"
        || name == "::1"
        || name
            .parse::<IpAddr>()
            .is_ok_and(|named| named == ip && !ip.is_unspecified())
}

/// A port as a URL spells it: 1 to 5 ASCII digits, no sign, no leading
/// zero (`u16::from_str` alone would take `+8080` and `08080`).
fn strict_port(text: &str) -> Option<u16> {
    let canonical = !text.is_empty()
        && text.len() <= 5
        && text.bytes().all(|b| b.is_ascii_digit())
        && (text == "0" || !text.starts_with('0'));
    canonical.then(|| text.parse().ok()).flatten()
}

/// Whether an `Origin` header is a loopback page (on any port: another
/// program's page on this machine is as trusted as the program), or one
/// the application allowed by name. An origin is
/// `scheme "://" host [":" port]` and nothing else; anything looser is
/// refused.
pub(crate) fn origin_allowed(origin: &str, allowed: &[String]) -> bool {
    if allowed.iter().any(|a| a.eq_ignore_ascii_case(origin)) {
        return true;
    }
    let Some(rest) = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"))
    else {
        return false;
    };
    let (name, tail) = if let Some(bracketed) = rest.strip_prefix('[') {
        match bracketed.split_once(']') {
            Some((name, tail)) => (name, tail),
            None => return false,
        }
    } else {
        match rest.find(':') {
            Some(at) => (&rest[..at], &rest[at..]),
            None => (rest, ""),
        }
    };
    let port_ok = tail.is_empty()
        || tail
            .strip_prefix(':')
            .is_some_and(|port| strict_port(port).is_some_and(|port| port != 0));
    port_ok && (name.eq_ignore_ascii_case("localhost") || name == "127.0.0.1" || name == "::1")
}

/// Decides everything the headers can decide, reading no body.
pub(crate) fn admit(transport: &Arc<Transport>, head: &Head) -> Result<Admitted, HttpResponse> {
    let server = &transport.runtime.server;
    // One pass: the total size, and any header that may appear only once
    // appearing again (names are in lower case).
    let mut header_bytes = 0;
    let mut seen = [false; SINGLE_HEADERS.len()];
    let mut repeated = None;
    for (name, value) in head.headers.iter() {
        header_bytes += name.len() + value.len() + 4;
        if let Some(i) = SINGLE_HEADERS.iter().position(|single| *single == name) {
            if std::mem::replace(&mut seen[i], true) {
                repeated = repeated.or(Some(SINGLE_HEADERS[i]));
            }
        }
    }
    if head.headers.len() > MAX_HEADERS || header_bytes > MAX_HEADER_BYTES {
        let error = RpcError::new(
            INVALID_REQUEST,
            format!("Request Header Fields Too Large: at most {MAX_HEADERS} headers and {MAX_HEADER_BYTES} bytes of them"),
        );
        return Err(server.refuse(431, None, &error));
    }
    if let Some(name) = repeated {
        let error = RpcError::new(
            INVALID_REQUEST,
            format!("Bad Request: the {name} header appears more than once"),
        );
        return Err(server.refuse(400, None, &error));
    }
    match head.headers.get("host") {
        None => {
            let error = RpcError::new(INVALID_REQUEST, "Bad Request: the Host header is missing");
            return Err(server.refuse(400, None, &error));
        }
        Some(host) if !host_allowed(host, transport.ip, transport.port) => {
            return Err(forbidden(
                server,
                "the Host header does not name this loopback server",
            ))
        }
        Some(_) => {}
    }
    if let Some(origin) = head.headers.get("origin") {
        if !origin_allowed(origin, &transport.config.allow_origin) {
            return Err(forbidden(
                server,
                "requests from this Origin are not allowed",
            ));
        }
    }
    let path = head.url.split(['?', '#']).next().unwrap_or("");
    let credential = if path == "/mcp" {
        Credential::Header
    } else {
        match path
            .strip_prefix("/cap/")
            .and_then(|rest| rest.strip_suffix("/mcp"))
        {
            Some(token) if transport.config.capability_urls => Credential::Path(token),
            _ => {
                let error = RpcError::new(
                    INVALID_REQUEST,
                    "Not Found: the MCP endpoint of this server is /mcp",
                );
                return Err(server.refuse(404, None, &error));
            }
        }
    };
    let verb = match head.method.as_str() {
        "POST" => Verb::Post,
        "GET" => Verb::Get,
        "DELETE" => Verb::Delete,
        other => {
            let error = RpcError::new(
                INVALID_REQUEST,
                format!("Method Not Allowed: {other} is not served; use {ALLOW}"),
            );
            let mut response = server.refuse(405, None, &error);
            response.headers.push(("Allow", ALLOW.into()));
            return Err(response);
        }
    };
    let unauthorized = |reason| {
        Refused::report(transport, reason);
        Server::unauthorized_response()
    };
    let token = match credential {
        Credential::Path(token) => {
            // Two credentials that disagree: which one counts is a guess,
            // and a silent guess hides a misconfigured client.
            if let Some(header) = head.headers.get("authorization") {
                if bearer_token(header) != Some(token) {
                    let error = RpcError::new(
                        INVALID_REQUEST,
                        "Bad Request: a capability URL carries its own credential; send no Authorization header with it, or the same bearer",
                    );
                    return Err(server.refuse(400, None, &error));
                }
            }
            token
        }
        Credential::Header => match head.headers.get("authorization") {
            None => return Err(unauthorized(AuthRefusal::Missing)),
            Some(value) => match bearer_token(value) {
                Some(token) => token,
                None => return Err(unauthorized(AuthRefusal::Malformed)),
            },
        },
    };
    let entry = transport.table.authenticate(token).map_err(unauthorized)?;
    let accepts_stream = if verb == Verb::Post {
        check_media_types(server, &head.headers)?
    } else {
        false
    };
    Ok(Admitted {
        verb,
        entry,
        accepts_stream,
    })
}

/// The most headers a request may carry, and their most bytes. tiny_http
/// has read them by then (it bounds neither); past these the request is
/// refused with 431 rather than handled.
const MAX_HEADERS: usize = 100;
const MAX_HEADER_BYTES: usize = 32 << 10;

/// Headers whose meaning breaks if sent twice (which value would count?).
const SINGLE_HEADERS: [&str; 7] = [
    "host",
    "origin",
    "authorization",
    "content-type",
    "content-length",
    "mcp-session-id",
    "mcp-protocol-version",
];

/// A POST body must be JSON (415 otherwise, when a type is given), and the
/// client must accept one of the two answers a POST can get (406). Returns
/// whether it accepts an event stream.
fn check_media_types(server: &Server, headers: &Headers) -> Result<bool, HttpResponse> {
    if let Some(content_type) = headers.get("content-type") {
        let media = content_type.split(';').next().unwrap_or("").trim();
        if !media.eq_ignore_ascii_case("application/json") {
            let error = RpcError::new(
                INVALID_REQUEST,
                format!("Unsupported Media Type: {media:?}; send the JSON-RPC message as Content-Type: application/json"),
            );
            return Err(server.refuse(415, None, &error));
        }
    }
    let Some(accept) = headers.get("accept") else {
        return Ok(true);
    };
    let stream = mcp::accepts(accept, "text/event-stream");
    if !stream && !mcp::accepts(accept, "application/json") {
        let error = RpcError::new(
            INVALID_REQUEST,
            "Not Acceptable: answers are application/json or text/event-stream; accept both",
        );
        return Err(server.refuse(406, None, &error));
    }
    Ok(stream)
}

/// The token of an `Authorization: Bearer <token>` value (scheme
/// case-insensitive, as RFC 9110 says).
fn bearer_token(value: &str) -> Option<&str> {
    let (scheme, token) = value.trim().split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim())
        .filter(|token| !token.is_empty())
}

/// Why a body could not be taken.
enum BodyError {
    TooLarge,
    Unreadable(io::Error),
}

/// Reads a whole body, refusing it past `max` bytes.
fn read_all(
    reader: &mut dyn Read,
    max: usize,
    declared: Option<usize>,
) -> Result<Vec<u8>, BodyError> {
    let mut body = Vec::with_capacity(declared.unwrap_or(0).min(max));
    let limit = u64::try_from(max).unwrap_or(u64::MAX).saturating_add(1);
    reader
        .take(limit)
        .read_to_end(&mut body)
        .map_err(BodyError::Unreadable)?;
    if body.len() > max {
        return Err(BodyError::TooLarge);
    }
    Ok(body)
}

/// Reads a body tiny_http has already buffered whole (its declared length,
/// at most 1 KiB and within `max_body_bytes`; none without a length) in one
/// copy: `read_to_end` would probe and grow the buffer, more instructions
/// spread over more lines of code for a body whose length is known.
fn read_buffered(reader: &mut dyn Read, declared: Option<usize>) -> Result<Vec<u8>, BodyError> {
    let mut body = vec![0; declared.unwrap_or(0)];
    reader
        .read_exact(&mut body)
        .map_err(BodyError::Unreadable)?;
    Ok(body)
}

/// Reads the body of an admitted POST, of at most `max_body_bytes` (413
/// past it), arriving within `read_timeout` (408 past it), then hands the
/// request on to [`post`]. tiny_http has already buffered a small body
/// (1 KiB or less, the usual tool call) on its connection thread, so that
/// one is read at once, here. A larger one is read on a thread of its own,
/// which then carries the request on, and the worker goes back to serving
/// at once: the sockets' own read timeout is at least 10 s (see `socket`),
/// so a client that sends slowly must hold a thread until this deadline,
/// and that thread is never a worker. At the deadline the hook hears of
/// the 408; the client is told once it sends the rest, hangs up, or the
/// socket's read times out — one thread per stalled body of a bearer
/// holder, no more than tiny_http's own thread per connection.
fn take_body(
    transport: &Arc<Transport>,
    admitted: Admitted,
    head: Head,
    mut request: tiny_http::Request,
    lane: &dyn Lane,
) {
    let server = &transport.runtime.server;
    let max = transport.config.max_body_bytes;
    let refusal = move |server: &Server, error: BodyError| match error {
        BodyError::TooLarge => server.refuse(
            413,
            None,
            &RpcError::new(
                INVALID_REQUEST,
                format!("Payload Too Large: a request body may have at most {max} bytes"),
            ),
        ),
        BodyError::Unreadable(err) => server.refuse(
            400,
            None,
            &RpcError::new(
                INVALID_REQUEST,
                format!("Bad Request: the body could not be read: {err}"),
            ),
        ),
    };
    let declared = request.body_length();
    if declared.is_some_and(|len| len > max) {
        let refusal = refusal(server, BodyError::TooLarge);
        return refuse_and_close(transport, request, &head.headers, refusal);
    }
    if unread_body_bytes(&request, &head.headers) == 0
        && head.headers.get("transfer-encoding").is_none()
    {
        return match read_buffered(request.as_reader(), declared) {
            Ok(body) => post(transport, &admitted, &head, request, &body, lane),
            Err(error) => {
                refuse_and_close(transport, request, &head.headers, refusal(server, error));
            }
        };
    }
    let deadline = transport.config.read_timeout;
    let timeout = RpcError::new(
        INVALID_REQUEST,
        format!(
            "Request Timeout: the body did not arrive within {} ms",
            deadline.as_millis()
        ),
    );
    let expired = Arc::new(AtomicBool::new(false));
    let watch = {
        let expired = Arc::clone(&expired);
        let runtime = Arc::clone(&transport.runtime);
        let message = timeout.message.clone();
        transport
            .runtime
            .schedule(Instant::now() + deadline, move || {
                expired.store(true, Ordering::SeqCst);
                runtime.server.emit(|| Event::BadRequest {
                    status: 408,
                    message,
                });
            })
    };
    let runtime = Arc::clone(&transport.runtime);
    let transport = Arc::clone(transport);
    let reader = thread::Builder::new()
        .name("toolhost-body".into())
        .spawn(move || {
            let body = read_all(request.as_reader(), max, declared);
            let server = &transport.runtime.server;
            // A read that waited out the sockets' read timeout is the same
            // deadline, seen from the socket.
            let timed_out = matches!(&body, Err(BodyError::Unreadable(err))
                if matches!(err.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut));
            if expired.load(Ordering::SeqCst) || timed_out {
                // The deadline passed: the client hears why, late.
                let response = HttpResponse::json(408, &failure(None, &timeout));
                return refuse_and_close(&transport, request, &head.headers, response);
            }
            transport.runtime.unschedule(watch);
            // The session may have been dropped while the body came: its
            // bearer is dead from that instant, for this request too.
            if admitted.entry.is_revoked() {
                Refused::report(&transport, AuthRefusal::Unknown);
                let response = Server::unauthorized_response();
                return refuse_and_close(&transport, request, &head.headers, response);
            }
            match body {
                Ok(body) => post(&transport, &admitted, &head, request, &body, &OwnThread),
                Err(error) => {
                    let refusal = refusal(server, error);
                    refuse_and_close(&transport, request, &head.headers, refusal);
                }
            }
        });
    if reader.is_err() {
        // No thread to spare: the request went with the failed spawn, and
        // tiny_http answers a dropped request with 500.
        runtime.unschedule(watch);
    }
}

/// Plans a POST whose body has arrived, and carries the plan out: the
/// answer, a stream, or work for the runtime — which writes the response
/// itself, possibly later, on the thread that runs the request's call.
fn post(
    transport: &Arc<Transport>,
    admitted: &Admitted,
    head: &Head,
    request: tiny_http::Request,
    body: &[u8],
    lane: &dyn Lane,
) {
    let server = &transport.runtime.server;
    let entry = &admitted.entry;
    let responder = Arc::new(Responder::new(
        request,
        transport.config.resume_window,
        admitted.accepts_stream,
    ));
    match mcp::post(server, &**entry, &head.headers, body) {
        Plan::Respond(response) => responder.finish(response),
        Plan::Work(work) => {
            let outlet: Arc<dyn Outlet> = responder;
            transport.runtime.execute(entry, work, outlet, lane);
        }
        Plan::Stream(open) => {
            if let Some(request) = responder.take_pending() {
                open_stream(&transport.runtime, request, entry, open);
            }
        }
        // A POST never resumes a stream.
        Plan::Resume { .. } => {}
    }
}

/// Answers one request, start to end.
pub(crate) fn serve(transport: &Arc<Transport>, request: tiny_http::Request, lane: &dyn Lane) {
    let head = Head {
        method: request.method().as_str().to_owned(),
        url: request.url().to_owned(),
        headers: Headers::new(
            request
                .headers()
                .iter()
                .map(|h| (h.field.as_str().as_str(), h.value.as_str())),
        ),
    };
    // A request on a connection that was refused one is not answered:
    // that client was told the connection is closed.
    if transport.refused.is_closing(request.remote_addr()) {
        return discard(transport, request, &head.headers);
    }
    let server = &transport.runtime.server;
    let admitted = match admit(transport, &head) {
        Ok(admitted) => admitted,
        Err(refusal) => return refuse_and_close(transport, request, &head.headers, refusal),
    };
    let entry = &admitted.entry;
    match admitted.verb {
        Verb::Post => take_body(transport, admitted, head, request, lane),
        Verb::Delete => {
            let response = mcp::delete(server, &**entry, &head.headers);
            reply_leaving_body(transport, request, &head.headers, response);
        }
        Verb::Get => {
            let plan = mcp::get(server, &**entry, &head.headers);
            if unread_body_bytes(&request, &head.headers) != 0 && !matches!(plan, Plan::Respond(_))
            {
                let error = RpcError::new(INVALID_REQUEST, "Bad Request: a GET has no body");
                let refusal = server.refuse(400, None, &error);
                return refuse_and_close(transport, request, &head.headers, refusal);
            }
            match plan {
                Plan::Respond(response) => {
                    reply_leaving_body(transport, request, &head.headers, response);
                }
                Plan::Stream(open) => open_stream(&transport.runtime, request, entry, open),
                Plan::Resume {
                    mcp_session,
                    last_event_id,
                } => {
                    let Some((stream, after)) = entry.streams.find(&mcp_session, &last_event_id)
                    else {
                        return respond_now(request, mcp::resume_refused(server));
                    };
                    // Refused when the stream was spent between the lookup and now.
                    if let Err(request) =
                        stream.resume(after, request, tiny_http::Request::into_writer)
                    {
                        respond_now(request, mcp::resume_refused(server));
                    }
                }
                // A GET does no work.
                Plan::Work(_) => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    const LOOPBACK: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);

    #[test]
    fn loopback_hosts_with_the_bound_port_are_allowed() {
        for host in [
            "127.0.0.1:8080",
            "localhost:8080",
            "LOCALHOST:8080",
            "[::1]:8080",
        ] {
            assert!(host_allowed(host, LOOPBACK, 8080), "{host}");
        }
    }

    #[test]
    fn foreign_hosts_and_wrong_ports_are_refused() {
        for host in [
            "evil.example:8080",
            "127.0.0.1:8081",
            "127.0.0.1",
            "localhost",
            "[::1]",
            "127.0.0.1.evil.example:8080",
            "[::1:8080",
            "",
            "127.0.0.1:+8080",
            "127.0.0.1:08080",
            "127.0.0.1:8080 ",
            "localhost:0x1f90",
            "[::1]:+8080",
        ] {
            assert!(!host_allowed(host, LOOPBACK, 8080), "{host}");
        }
    }

    #[test]
    fn a_non_loopback_bind_also_accepts_its_own_address() {
        let lan: IpAddr = "192.0.2.7".parse().unwrap();
        assert!(host_allowed("192.0.2.7:9000", lan, 9000));
        assert!(!host_allowed("192.0.2.8:9000", lan, 9000));
        let any: IpAddr = "0.0.0.0".parse().unwrap();
        assert!(!host_allowed("0.0.0.0:9000", any, 9000));
    }

    #[test]
    fn loopback_origins_and_listed_origins_are_allowed() {
        let listed = vec!["https://app.example".to_owned()];
        for origin in [
            "http://localhost:3000",
            "http://127.0.0.1",
            "https://[::1]:8443",
            "https://app.example",
        ] {
            assert!(origin_allowed(origin, &listed), "{origin}");
        }
        for origin in [
            "null",
            "http://evil.example",
            "http://localhost.evil.example",
            "file://",
            "http://[::1]evil",
            "http://localhost:evil",
            "http://127.0.0.1:+3000",
            "http://127.0.0.1:03000",
            "http://localhost:3000/path",
            "http://localhost:",
            "http://[::1]:x",
            "http://127.0.0.1:0",
        ] {
            assert!(!origin_allowed(origin, &listed), "{origin}");
        }
    }

    #[test]
    fn bearer_scheme_is_case_insensitive_and_the_token_required() {
        assert_eq!(bearer_token("Bearer abc"), Some("abc"));
        assert_eq!(bearer_token("bearer  abc "), Some("abc"));
        assert_eq!(bearer_token("Basic abc"), None);
        assert_eq!(bearer_token("Bearer"), None);
        assert_eq!(bearer_token("Bearer "), None);
    }
}
