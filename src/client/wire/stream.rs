//! A POST's answer read whichever way the server sent it — a JSON body, or
//! an event stream whose messages go to an [`Inbox`] until the answer is
//! complete — and resumed with a `GET` where `resume.rs` says so.

use std::borrow::Cow;
use std::io::Read;
use std::time::Duration;

use serde_json::Value;

use crate::client::call::{self, CancelHandle};
use crate::client::error::ClientError;
use crate::client::http1::{self, Body, Head};
use crate::client::resume::{self, Resumption};
use crate::client::rpc::Mode;
use crate::client::sse::SseParser;
use crate::client::Settings;

use super::link::refusal;
use super::{Link, Reader};

/// How long the rest of an event stream may take to end once the response
/// arrived, before the connection is given up instead of reused.
const STREAM_END_GRACE: Duration = Duration::from_millis(100);

/// Who takes the JSON-RPC messages of one request's answer, and says when
/// the answer is complete: the client's own calls ([`CallInbox`](super::CallInbox)), or a
/// relay that forwards every message as it is (`client/passthrough.rs`).
pub(crate) trait Inbox {
    /// What a complete answer comes to.
    type Answer;

    /// Takes one message of the answer — its JSON body (sent with HTTP
    /// `status`), or one event of its stream (`status` 200) — and returns
    /// the answer once this message completes it.
    fn take(&mut self, message: Value, status: u16) -> Result<Option<Self::Answer>, ClientError>;

    /// What the errors call the request, e.g. `request 7`.
    fn name(&self) -> String;

    /// The server accepted a [`listen`]ing `GET`: its stream is open.
    fn opened(&mut self) {}
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
    let mut events = SseParser::new(settings.max_message_bytes);
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
    let mut events = SseParser::new(settings.max_message_bytes);
    link.exchange(
        settings,
        "GET",
        headers,
        b"",
        None,
        cancel,
        |head, body, wait| {
            if head.status == 200 && head.media_type() == "text/event-stream" {
                inbox.opened();
                return Ok(match read_stream(body, wait, &mut events, inbox)? {
                    Reply::Answered(answer) => Some(answer),
                    Reply::Cut => None,
                });
            }
            let bytes = body.read_all(settings.max_message_bytes)?;
            Err(refusal(head, &bytes))
        },
    )
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
    let bytes = body.read_all(events.limit())?;
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
    let bytes = body.read_all(events.limit())?;
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
        events
            .push(&buf[..n], &mut arrived)
            .map_err(|too| ClientError::TooLarge {
                what: "an SSE event".into(),
                size: None,
                limit: too.limit,
                setting: http1::HTTP_LIMIT_SETTING,
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
