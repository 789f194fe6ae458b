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
//!
//! `link.rs` holds the connection and one exchange on it; `stream.rs`
//! reads a POST's answer, JSON or event stream, into an [`Inbox`];
//! `side_answers.rs` answers questions on threads of their own while the stream
//! is read, for a call that asks for it.

mod link;
mod side_answers;
mod stream;

use std::borrow::Cow;
use std::io::BufReader;
use std::net::TcpStream;
use std::thread;
use std::time::Duration;

use serde_json::{Map, Value};

use crate::client::answer::{self, Answerer, Refusal, ServerRequest};
use crate::client::call::{CallOptions, LogMessage, Progress};
use crate::client::error::ClientError;
use crate::client::http1::{Body, Head};
use crate::client::rpc::{self, Incoming, Mode};
use crate::client::Settings;
use crate::model::method::Method;

pub(crate) use link::{drain_for_status, Connection, Link};
use side_answers::Beside;
pub(crate) use stream::{deliver, listen, Inbox, Outgoing};

/// The largest body read from the answer to a notification or a `DELETE`,
/// which carries no message the caller asked for.
const MAX_RESPONSE_BYTES: usize = 64 << 20;

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
        method: Method,
        params: Map<String, Value>,
        tool: Option<&str>,
        options: Option<&mut CallOptions<'_>>,
    ) -> Result<Answer, ClientError> {
        let id = self.next_id;
        self.next_id += 1;
        let Wire { settings, link, .. } = self;
        let settings: &Settings = settings;
        // A handler that answers beside the stream needs a session to
        // answer in: the stateful era's.
        let shared = match (&options, mode) {
            (Some(options), Some(mode @ Mode::Stateful { .. })) => options
                .on_request_shared
                .clone()
                .map(|handler| (handler, mode)),
            _ => None,
        };
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
            method.name(),
            params,
            listener.progress.as_ref().map(|sink| &sink.token),
        );
        let headers = rpc::mcp_headers(mode, method.name(), tool);
        let outgoing = Outgoing {
            mode,
            headers: &headers,
            body: &body,
            timeout,
            cancel: cancel.as_ref(),
        };
        let delivered = match &shared {
            None => deliver_call(link, settings, &outgoing, id, listener, None),
            // The scope joins the threads of the questions, each withdrawn
            // by then (the inbox, and its `Beside`, drop first).
            Some((handler, mode)) => thread::scope(|scope| {
                let beside = Beside::new(scope, handler, settings, mode);
                deliver_call(link, settings, &outgoing, id, listener, Some(beside))
            }),
        }?;
        Ok(Answer {
            result: delivered.answer?,
            session_id: delivered.session_id,
        })
    }

    /// Sends a JSON-RPC notification; the server acknowledges it with 202.
    pub(crate) fn notify(
        &mut self,
        mode: &Mode,
        method: Method,
        params: Value,
    ) -> Result<(), ClientError> {
        let body = rpc::notification_body(method.name(), params);
        let headers = rpc::mcp_headers(Some(mode), method.name(), None);
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

/// Sends the client's request `id` and reads its answer, with what comes
/// before it handed to `listener` — or the server's questions to `beside`,
/// when the call answers them there.
fn deliver_call(
    link: &mut Link,
    settings: &Settings,
    outgoing: &Outgoing<'_>,
    id: u64,
    listener: Listener<'_, '_>,
    beside: Option<Beside<'_, '_>>,
) -> Result<stream::Delivered<Result<Value, ClientError>>, ClientError> {
    let mut inbox = CallInbox {
        id,
        listener,
        beside,
    };
    deliver(link, settings, outgoing, &mut inbox)
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

    /// Answers the server's request `id` in the MCP session: `ping` at
    /// once, anything else with the handler's answer, or "method not
    /// found" without one, so the server is never left waiting.
    /// A server of 2026-07-28 sends no requests (it asks through
    /// `input_required`), nor does one answering `initialize`: there is no
    /// session to answer in, so those are let pass.
    fn answer(&mut self, id: &Value, request: ServerRequest) -> Result<(), ClientError> {
        let Some(mode @ Mode::Stateful { .. }) = self.mode else {
            return Ok(());
        };
        // Every peer answers `ping` (MCP's lifecycle), handler or none.
        let answer = match self.handler.as_mut() {
            _ if request.method == Method::Ping.name() => Ok(Value::Object(serde_json::Map::new())),
            Some(handler) => handler(&request),
            None => Err(Refusal::unhandled(&request.method)),
        };
        post_answer(&mut self.answers, self.settings, mode, id, answer).map_err(|cause| {
            ClientError::Unanswered {
                method: request.method,
                problem: "sending the answer failed".into(),
                cause: Some(Box::new(cause)),
            }
        })
    }
}

/// POSTs the answer to the server's request `id` in the MCP session of
/// `mode`, on `link` (not the one whose stream carried the request).
pub(crate) fn post_answer(
    link: &mut Link,
    settings: &Settings,
    mode: &Mode,
    id: &Value,
    answer: Result<Value, Refusal>,
) -> Result<(), ClientError> {
    let body = answer::response_body(id, answer);
    let headers = rpc::mcp_headers(Some(mode), "", None);
    link.exchange(
        settings,
        "POST",
        &headers,
        &body,
        None,
        None,
        |head, body, _| drain_for_status(head, body, &[]),
    )
}

/// The answer to the client's own request `id`: its result or error, with
/// progress reports and the server's requests handed to `listener` on the
/// way — or the requests to `beside`, when the call answers them there.
struct CallInbox<'a, 'b, 'scope, 'env> {
    id: u64,
    listener: Listener<'a, 'b>,
    beside: Option<Beside<'scope, 'env>>,
}

impl Inbox for CallInbox<'_, '_, '_, '_> {
    type Answer = Result<Value, ClientError>;

    fn take(&mut self, message: Value, status: u16) -> Result<Option<Self::Answer>, ClientError> {
        match rpc::classify(message, self.id)? {
            Incoming::Reply(Ok(result)) => Ok(Some(Ok(result))),
            Incoming::Reply(Err(fault)) => Ok(Some(Err(rpc::rpc_error(fault, status)))),
            Incoming::Notification { method, params } if method == Method::Progress.name() => {
                self.listener.progress(&params);
                Ok(None)
            }
            Incoming::Request { id, method, params } => {
                let request = ServerRequest::new(method, params);
                match self.beside.as_mut() {
                    Some(beside) if request.method != Method::Ping.name() => {
                        beside.answer(id, request)
                    }
                    _ => self.listener.answer(&id, request)?,
                }
                Ok(None)
            }
            Incoming::Notification { method, params } if method == Method::Cancelled.name() => {
                if let Some(beside) = self.beside.as_mut() {
                    beside.cancelled(&params);
                }
                Ok(None)
            }
            Incoming::Notification { method, params } if method == Method::LogMessage.name() => {
                self.listener.log(&params);
                Ok(None)
            }
            // Heard where a stdio client hears it, whatever stream it came on.
            Incoming::Notification { method, .. } if method == Method::ToolsListChanged.name() => {
                if let Some(callback) = &self.listener.settings.on_tools_changed {
                    callback();
                }
                Ok(None)
            }
            Incoming::Notification { .. } | Incoming::Unrelated => Ok(None),
        }
    }

    fn name(&self) -> String {
        format!("request {}", self.id)
    }
}
