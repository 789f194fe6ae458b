//! Writing answers back through tiny_http: plain responses, event streams
//! that start with a handler's first notification, long-lived streams handed
//! to the hub, and refusals whose unread body must not cost a worker.

use std::io::{Cursor, Write};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use serde_json::Value;

use crate::call::call_link::Gone;
use crate::mcp::{self, StreamOpen};
use crate::model::http::{Headers, HttpResponse};
use crate::model::jsonrpc::{failure, RpcError, SERVER_ERROR};
use crate::runtime::hub::{self, Script};
use crate::runtime::resume::CallStream;
use crate::runtime::table::SessionEntry;
use crate::runtime::{Outlet, Runtime};
use crate::sse;
use crate::sync::lock;

use super::{written, Transport};

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
/// drain of that body pin this worker (or, for an absurd length, abort the
/// process): the answer is written at once, and the body drained by the
/// transport's bounded drainer.
pub(super) fn reply_leaving_body(
    transport: &Transport,
    request: tiny_http::Request,
    headers: &Headers,
    response: HttpResponse,
) {
    reply_unread(transport, request, headers, response, "body-unread");
}

/// [`reply_leaving_body`], with `why` for the `X-Toolhost-Refused` header
/// of an answer written past tiny_http (and the lines that ride on it).
fn reply_unread(
    transport: &Transport,
    request: tiny_http::Request,
    headers: &Headers,
    response: HttpResponse,
    why: &str,
) {
    let unread = unread_body_bytes(&request, headers);
    if unread == 0 {
        respond(request, response);
    } else if unread <= MAX_DRAINED_BYTES {
        // Written now, past tiny_http (whose own `respond` would drain
        // first); the body goes with the stream to the drainer.
        let stream = write_past_tiny_http(request, response, why);
        transport.drainer.drop_later(stream);
    } else {
        abandon(request, response, why);
    }
}

/// Answers a refused request with `Connection: close` and remembers its
/// connection as closing: the client was told, and nothing more on that
/// connection is answered (see `refused`). A request read ahead on a
/// connection already refused is dropped instead. A body still on its way
/// is left to the drainer; the connection is not remembered then, as
/// tiny_http reads nothing more from it until the body is drained.
pub(super) fn refuse_and_close(
    transport: &Transport,
    request: tiny_http::Request,
    headers: &Headers,
    mut response: HttpResponse,
) {
    if unread_body_bytes(&request, headers) != 0 {
        // Past tiny_http, which drops a `Connection` header of ours, the
        // line rides on the refusal's own header.
        let why = "body-unread\r\nConnection: close";
        return reply_unread(transport, request, headers, response, why);
    }
    if !transport.refused.claim(request.remote_addr()) {
        return discard(transport, request, headers);
    }
    response.headers.push(("Connection", "close".into()));
    respond(request, response);
}

/// Drops a request on a closing connection without a byte written: its
/// writer goes at once, so the connection's next writer never waits for
/// it, and a body still on its way goes to the drainer.
pub(super) fn discard(transport: &Transport, request: tiny_http::Request, headers: &Headers) {
    if unread_body_bytes(&request, headers) == 0 {
        drop(request.into_writer());
    } else {
        transport.drainer.drop_later(Unanswered(Some(request)));
    }
}

/// A request to drop without an answer (tiny_http answers a request
/// dropped whole with 500, which would wait for the connection's writer).
struct Unanswered(Option<tiny_http::Request>);

impl Drop for Unanswered {
    fn drop(&mut self) {
        if let Some(request) = self.0.take() {
            drop(request.into_writer());
        }
    }
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

/// The largest unread body that is drained after a refusal. tiny_http drains
/// by allocating a buffer of the whole remaining length; past this the
/// connection is abandoned instead (see [`abandon`]).
const MAX_DRAINED_BYTES: usize = 64 << 20;

/// How many bytes of body tiny_http will read from the socket when the
/// request is dropped: a `Content-Length` body it did not already buffer
/// (it buffers up to 1024 bytes unless the client sent `Expect`).
pub(super) fn unread_body_bytes(request: &tiny_http::Request, headers: &Headers) -> usize {
    match request.body_length() {
        Some(len) if len > 1024 || headers.get("expect").is_some() => len,
        _ => 0,
    }
}

/// Answers a request whose declared body is too large to drain, and leaves
/// its connection open and unread for good. Dropping the request would make
/// tiny_http allocate the declared length in one piece, which for an absurd
/// `Content-Length` aborts the process; the price is one idle socket and one
/// parked tiny_http thread per such request, no more than the client itself
/// holds open.
fn abandon(request: tiny_http::Request, response: HttpResponse, why: &str) {
    let stream = write_past_tiny_http(request, response, why);
    std::mem::forget(stream);
}

/// The answer to a request that arrives after the host shut down, on a
/// connection its client kept open: 503 with `Connection: close`, so the
/// client closes the connection and its next request finds the port closed
/// instead of waiting for an answer that would never come.
pub(super) fn farewell(request: tiny_http::Request) {
    let error = RpcError::new(
        SERVER_ERROR,
        "Service Unavailable: this MCP host has shut down, and its sessions with it",
    );
    let response = HttpResponse::json(503, &failure(None, &error));
    drop(write_past_tiny_http(
        request,
        response,
        "host-shut-down\r\nConnection: close",
    ));
}

/// Writes a complete response on the request's raw connection, which
/// tiny_http then no longer reads from; returns the connection. `why`
/// starts the value of the `X-Toolhost-Refused` header that carries the
/// lines tiny_http will not write itself.
fn write_past_tiny_http(
    request: tiny_http::Request,
    response: HttpResponse,
    why: &str,
) -> Box<dyn tiny_http::ReadWrite + Send> {
    let HttpResponse {
        status,
        headers,
        body,
    } = response;
    let mut headers: Vec<tiny_http::Header> = headers
        .iter()
        .filter_map(|(name, value)| {
            tiny_http::Header::from_bytes(name.as_bytes(), value.as_bytes()).ok()
        })
        .collect();
    // `upgrade` writes no Content-Length and no body, and tiny_http refuses
    // a Content-Length header it did not compute; without one the client
    // would wait for a body that never ends. So the length rides on a line
    // of its own after a header of ours, and the body follows the head.
    if let Ok(length) = tiny_http::Header::from_bytes(
        &b"X-Toolhost-Refused"[..],
        format!("{why}\r\nContent-Length: {}", body.len()).as_bytes(),
    ) {
        headers.push(length);
    }
    let head = tiny_http::Response::new(
        tiny_http::StatusCode(status),
        headers,
        Cursor::new(Vec::new()),
        Some(0),
        None,
    );
    let mut stream = request.upgrade("toolhost-refused", head);
    let _ = stream.write_all(&body).and_then(|()| stream.flush());
    stream
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
    if written::fits(&request, &response, body_read) {
        written::write(request, &response);
    } else {
        // A client that hung up is no fault of ours; there is no one to tell.
        let _ = request.respond(tiny_response(response));
    }
}
