//! Writing answers back through tiny_http: plain responses, event streams
//! that start with a handler's first notification, long-lived streams handed
//! to the hub, and refusals whose unread body must not cost a worker (read
//! off on a drain thread first, see `drain`), each a well-formed response
//! that says `Connection: close` once, and nothing more on its connection.

use std::io::{Cursor, Write};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use serde_json::Value;

use crate::call::call_link::Gone;
use crate::event::Event;
use crate::mcp::{self, StreamOpen};
use crate::model::http::{Headers, HttpResponse};
use crate::model::jsonrpc::{failure, RpcError, SERVER_ERROR};
use crate::runtime::hub::{self, Script};
use crate::runtime::resume::CallStream;
use crate::runtime::table::SessionEntry;
use crate::runtime::{Outlet, Runtime};
use crate::sse;
use crate::sync::lock;

use super::drain::MAX_DRAINED_BYTES;
use super::refused::Claim;
use super::{raw_response, Transport};

/// Writes a long-lived stream's head and first events, then hands the
/// connection to the hub, so that no worker stays with it.
pub(super) fn open_stream(
    runtime: &Runtime,
    request: tiny_http::Request,
    owner: &Arc<SessionEntry>,
    open: StreamOpen,
) {
    if !runtime.hub.has_room() {
        let response = mcp::too_many_streams(&runtime.server, hub::MAX_STREAMS);
        return respond(request, response);
    }
    let mut opening = sse::head(&[]);
    for message in &open.first {
        opening.extend(sse::event_chunk(&message.to_string()));
    }
    let mut ending = open
        .kind
        .ending()
        .map_or_else(Vec::new, |message| sse::event_chunk(&message.to_string()));
    ending.extend_from_slice(sse::LAST_CHUNK);
    let script = Script {
        on_change: open
            .kind
            .list_changed()
            .map(|message| sse::event_chunk(&message.to_string())),
        ending,
    };
    let weak: Weak<dyn Send + Sync> = Arc::downgrade(owner) as Weak<dyn Send + Sync>;
    runtime
        .hub
        .adopt(request.into_writer(), owner.locator, weak, script, &opening);
}

/// Answers a request whose body was not read, without letting tiny_http's
/// drain of that body pin this worker: the body is read off on a drain
/// thread, which then writes the answer (see `drain`).
pub(super) fn reply_leaving_body(
    transport: &Arc<Transport>,
    request: tiny_http::Request,
    headers: &Headers,
    response: HttpResponse,
) {
    let unread = unread_body_bytes(&request, headers);
    if unread == 0 {
        respond(request, response);
    } else if unread <= max_drained(transport) {
        transport
            .drainer
            .answer_after_body(request, unread, Some(response), || {});
    } else {
        abandon(transport, request, unread);
    }
}

/// Answers a refused request with `Connection: close` and remembers its
/// connection as closing: the client was told, and nothing more on that
/// connection is answered (see `refused`). A body still on its way is read
/// off first, on a drain thread, and the answer follows it.
pub(super) fn refuse_and_close(
    transport: &Arc<Transport>,
    request: tiny_http::Request,
    headers: &Headers,
    response: HttpResponse,
) {
    close_with(transport, request, headers, Some(response));
}

/// Drops a request on a closing connection without a byte written: its
/// writer goes at once, so the connection's next writer never waits for
/// it, and a body still on its way is read off on a drain thread.
pub(super) fn discard(transport: &Arc<Transport>, request: tiny_http::Request, headers: &Headers) {
    close_with(transport, request, headers, None);
}

/// The refusal of `request`, or nothing (`answer` `None`, a connection
/// already refused, or too many refused to remember one more), after its
/// body is read off when it has one.
fn close_with(
    transport: &Arc<Transport>,
    request: tiny_http::Request,
    headers: &Headers,
    answer: Option<HttpResponse>,
) {
    let unread = unread_body_bytes(&request, headers);
    if unread > max_drained(transport) {
        return abandon(transport, request, unread);
    }
    let peer = request.remote_addr().copied();
    let claim = transport.refused.claim(peer.as_ref(), unread > 0);
    let answer = answer.filter(|_| claim == Claim::Answer).map(|mut answer| {
        answer.headers.push(("Connection", "close".into()));
        answer
    });
    if unread == 0 {
        return match answer {
            Some(answer) => raw_response::write(request, &answer),
            None => drop(request.into_writer()),
        };
    }
    let owner = Arc::clone(transport);
    transport
        .drainer
        .answer_after_body(request, unread, answer, move || {
            owner.refused.release(peer.as_ref());
        });
}

/// The longest unread body a host drains: [`MAX_DRAINED_BYTES`], or its
/// `max_body_bytes` when that is larger (a host that reads bodies that
/// large reserves as much for one anyway).
fn max_drained(transport: &Transport) -> usize {
    MAX_DRAINED_BYTES.max(transport.config.max_body_bytes)
}

/// Leaves a request whose declared body is too large to drain unanswered,
/// and its connection open and unread for good: dropping the request, or
/// reading its body to an early end, would make tiny_http reserve the
/// declared length in one piece, and a reservation that fails aborts the
/// process. No answer can be written either: tiny_http writes one only
/// once the body is read, or as a protocol upgrade. Each costs two
/// descriptors and one parked tiny_http thread for the life of the
/// process; each is counted ([`ToolHost::abandoned_connections`]) and
/// reported ([`Event::ConnectionAbandoned`]).
///
/// [`ToolHost::abandoned_connections`]: crate::ToolHost::abandoned_connections
fn abandon(transport: &Transport, request: tiny_http::Request, declared: usize) {
    let total = transport.abandoned.fetch_add(1, Ordering::Relaxed) + 1;
    std::mem::forget(request);
    transport
        .runtime
        .server
        .emit(|| Event::ConnectionAbandoned {
            declared_body_bytes: declared as u64,
            total,
        });
}

/// The answer to one POST: a plain response, or an event stream from the
/// first notification a handler sends. Shared between the worker (which
/// writes the final response) and the handler's context (which writes
/// notifications, possibly from threads of its own).
pub(super) struct Responder {
    stage: Mutex<Stage>,
    /// Whether the client accepts an event stream (else keep-alives, which
    /// would turn the response into one, are not sent).
    accepts_stream: bool,
    /// How long a detached resumable stream waits for its client; zero
    /// turns resumption off.
    window: Duration,
    /// Set when the stream may be resumed: where it is kept, for whom.
    resume: Mutex<Option<ResumePlan>>,
}

enum Stage {
    /// Nothing written yet.
    Pending(tiny_http::Request),
    /// The event-stream head is out; the raw connection is ours.
    Streaming(Box<dyn Write + Send>),
    /// The event stream is resumable: its connection may come and go.
    Resumable(Arc<CallStream>),
    /// Answered, or the client is gone.
    Done,
}

struct ResumePlan {
    entry: Arc<SessionEntry>,
    mcp_session: String,
    priming: bool,
}

impl Responder {
    pub(super) fn new(
        request: tiny_http::Request,
        window: Duration,
        accepts_stream: bool,
    ) -> Responder {
        Responder {
            stage: Mutex::new(Stage::Pending(request)),
            accepts_stream,
            window,
            resume: Mutex::new(None),
        }
    }

    /// The request, if nothing was written yet: for a reply that is a
    /// long-lived stream of its own.
    pub(super) fn take_pending(&self) -> Option<tiny_http::Request> {
        match std::mem::replace(&mut *lock(&self.stage), Stage::Done) {
            Stage::Pending(request) => Some(request),
            other => {
                *lock(&self.stage) = other;
                None
            }
        }
    }

    /// Writes the final response: as it is when nothing was streamed, else
    /// as the stream's last event.
    fn write_final(&self, response: HttpResponse) {
        let stage = std::mem::replace(&mut *lock(&self.stage), Stage::Done);
        // Only an event's data is text; a plain response goes as it is (a
        // tool list is 170 KB that need no second look).
        let body = || (!response.body.is_empty()).then(|| String::from_utf8_lossy(&response.body));
        match stage {
            // A POST's response is written once its body has been read.
            Stage::Pending(request) => respond_after_body(request, response, true),
            Stage::Streaming(mut writer) => {
                let mut bytes = body().map_or_else(Vec::new, |body| sse::event_chunk(&body));
                bytes.extend_from_slice(sse::LAST_CHUNK);
                let _ = sse::send(&mut *writer, &bytes);
            }
            Stage::Resumable(stream) => stream.finish(body().as_deref()),
            Stage::Done => {}
        }
    }

    /// Turns a pending request into an event stream — resumable when the
    /// plan says so, plain otherwise; any other stage is left as it is.
    fn start_stream(&self, stage: &mut Stage) {
        if !matches!(stage, Stage::Pending(_)) {
            return;
        }
        let Stage::Pending(request) = std::mem::replace(stage, Stage::Done) else {
            return;
        };
        let plan = lock(&self.resume);
        let mut writer = request.into_writer();
        *stage = match plan.as_ref() {
            Some(plan) => {
                let stream = plan.entry.streams.open(&plan.mcp_session, self.window);
                stream.begin(writer, plan.priming);
                Stage::Resumable(stream)
            }
            None => {
                if sse::send(&mut *writer, &sse::head(&[])).is_ok() {
                    Stage::Streaming(writer)
                } else {
                    Stage::Done
                }
            }
        };
    }
}

impl Outlet for Responder {
    fn answer(&self, message: &Value) {
        self.write_final(HttpResponse::json(200, message));
    }

    fn finish(&self, response: HttpResponse) {
        self.write_final(response);
    }

    fn keep_alive(&self) -> Result<(), Gone> {
        // A write under way proves the stream alive; never wait behind it.
        let Ok(mut stage) = self.stage.try_lock() else {
            return Ok(());
        };
        if matches!(*stage, Stage::Pending(_)) && !self.accepts_stream {
            return Ok(());
        }
        self.start_stream(&mut stage);
        match &mut *stage {
            Stage::Resumable(stream) => stream.keep_alive(),
            Stage::Streaming(writer) => {
                if sse::send(&mut **writer, &sse::keep_alive_chunk()).is_ok() {
                    Ok(())
                } else {
                    *stage = Stage::Done;
                    Err(Gone::CLOSED)
                }
            }
            Stage::Pending(_) | Stage::Done => Ok(()),
        }
    }

    fn notify(&self, message: &Value) -> Result<(), Gone> {
        let mut stage = lock(&self.stage);
        self.start_stream(&mut stage);
        match &mut *stage {
            Stage::Resumable(stream) => stream.send(&message.to_string()),
            Stage::Streaming(writer) => {
                let event = sse::event_chunk(&message.to_string());
                if sse::send(&mut **writer, &event).is_ok() {
                    Ok(())
                } else {
                    *stage = Stage::Done;
                    Err(Gone::CLOSED)
                }
            }
            Stage::Pending(_) | Stage::Done => Err(Gone::CLOSED),
        }
    }

    fn resumable(&self, entry: &Arc<SessionEntry>, mcp_session: &str, priming: bool) {
        if !self.window.is_zero() {
            *lock(&self.resume) = Some(ResumePlan {
                entry: Arc::clone(entry),
                mcp_session: mcp_session.to_owned(),
                priming,
            });
        }
    }

    fn close_connection(&self, retry: Duration) -> bool {
        let mut stage = lock(&self.stage);
        // Before any event, only a priming event would give the client an
        // id to resume from.
        let primes = lock(&self.resume).as_ref().is_some_and(|plan| plan.priming);
        if matches!(*stage, Stage::Pending(_)) && !primes {
            return false;
        }
        self.start_stream(&mut stage);
        match &*stage {
            Stage::Resumable(stream) => stream.close_connection(retry),
            _ => false,
        }
    }
}

/// How many bytes of body tiny_http will read from the socket when the
/// request is dropped: a `Content-Length` body it did not already buffer
/// (it buffers up to 1024 bytes unless the client sent `Expect`).
pub(super) fn unread_body_bytes(request: &tiny_http::Request, headers: &Headers) -> usize {
    match request.body_length() {
        Some(len) if len > 1024 || headers.get("expect").is_some() => len,
        _ => 0,
    }
}

/// The answer to a request that arrives after the host shut down, on a
/// connection its client kept open: 503 with `Connection: close`, so the
/// client closes the connection and its next request finds the port closed
/// instead of waiting for an answer that would never come.
pub(super) fn farewell(transport: &Arc<Transport>, request: tiny_http::Request) {
    let error = RpcError::new(
        SERVER_ERROR,
        "Service Unavailable: this MCP host has shut down, and its sessions with it",
    );
    let mut response = HttpResponse::json(503, &failure(None, &error));
    response.headers.push(("Connection", "close".into()));
    let headers = Headers::new(
        request
            .headers()
            .iter()
            .map(|h| (h.field.as_str().as_str(), h.value.as_str())),
    );
    reply_leaving_body(transport, request, &headers, response);
}

fn tiny_response(response: HttpResponse) -> tiny_http::Response<Cursor<Vec<u8>>> {
    let headers = response
        .headers
        .iter()
        .filter_map(|(name, value)| {
            tiny_http::Header::from_bytes(name.as_bytes(), value.as_bytes()).ok()
        })
        .collect();
    let length = response.body.len();
    // A complete body goes with its Content-Length, whatever its size:
    // tiny_http would chunk one of 32 KiB or more (a long tool list),
    // which costs both sides a copy and the client a parse of the framing.
    tiny_http::Response::new(
        tiny_http::StatusCode(response.status),
        headers,
        Cursor::new(response.body),
        Some(length),
        None,
    )
    .with_chunked_threshold(usize::MAX)
}

/// Answers at once, on this thread.
pub(super) fn respond_now(request: tiny_http::Request, response: HttpResponse) {
    respond(request, response);
}

fn respond(request: tiny_http::Request, response: HttpResponse) {
    respond_after_body(request, response, false);
}

/// Answers at once; `body_read`: the request's body was read to its end.
fn respond_after_body(request: tiny_http::Request, response: HttpResponse, body_read: bool) {
    // Most answers are written in one piece, past tiny_http's response
    // machinery; the rest as tiny_http frames them.
    if raw_response::fits(&request, &response, body_read) {
        raw_response::write(request, &response);
    } else {
        // A client that hung up is no fault of ours; there is no one to tell.
        let _ = request.respond(tiny_response(response));
    }
}
