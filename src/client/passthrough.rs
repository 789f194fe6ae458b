//! Forwarding JSON-RPC messages the client did not write: the HTTP half of
//! the stdio relay (`crate::relay`), which carries a stdio MCP
//! client's messages to a Streamable HTTP endpoint and everything the
//! endpoint answers back, unchanged.
//!
//! The messages are not rebuilt, only routed: [`Passthrough`] decides each
//! message's headers the way the client that wrote it would have, had it
//! spoken HTTP itself — `Mcp-Session-Id` and `MCP-Protocol-Version` of the
//! MCP session once an `initialize` has opened one, or for a message of
//! 2026-07-28 (its `_meta` names that revision) the version, method and name
//! headers of that revision. Answers are read by the client's own wire code
//! ([`deliver`]), so an event stream that ends before its response is
//! resumed exactly as a [`Client`](super::Client)'s is.
//!
//! Each call is blocking and uses the [`Link`] it is given, so a relay can
//! carry several requests at once, one link (and thread) per request.

use std::borrow::Cow;
use std::io;
use std::net::TcpStream;
use std::sync::Mutex;
use std::time::Duration;

use serde_json::Value;

use super::builder::ClientBuilder;
use super::call::CancelHandle;
use super::error::ClientError;
use super::rpc::{self, Mode, STATELESS};
pub(crate) use super::wire::Link;
use super::wire::{self, deliver, Inbox, Outgoing};
use super::Settings;
use crate::model::jsonrpc::{Invalid, Message};
use crate::model::method::Method;
use crate::model::Revision;
use crate::sync::lock;

/// The `_meta` key that names a 2026-07-28 request's revision.
const META_VERSION: &str = rpc::META_VERSION;

/// How long closing the MCP session (`DELETE`) may take: the relay is on
/// its way out and should not hang there.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(5);

/// The endpoint a relay forwards to, and the MCP session its client opened
/// there.
#[derive(Debug)]
pub(crate) struct Passthrough {
    settings: Settings,
    /// Set by the answer to `initialize`: the negotiated revision and the
    /// `Mcp-Session-Id`, sent with every later message of the stateful era.
    session: Mutex<Option<Mode>>,
}

/// A request (or batch) that did not get all its answers: the ids left
/// unanswered, and why.
#[derive(Debug)]
pub(crate) struct Unanswered {
    pub(crate) ids: Vec<Value>,
    pub(crate) error: ClientError,
}

/// How one message travels: in the client's MCP session (if any yet), or
/// on its own as 2026-07-28.
enum Route {
    Session(Option<Mode>),
    Stateless { version: String },
}

impl Passthrough {
    /// The endpoint `url`, reached with `authorization` as the
    /// `Authorization` header, waiting at most `timeout` for the server to
    /// say anything. Connects nowhere yet.
    pub(crate) fn new(
        url: &str,
        authorization: &str,
        timeout: Duration,
    ) -> Result<Passthrough, ClientError> {
        let settings = ClientBuilder::new(url)
            .header("Authorization", authorization)
            .timeout(timeout)
            .settings()?;
        Ok(Passthrough {
            settings,
            session: Mutex::new(None),
        })
    }

    /// Whether nothing listens at the endpoint any more: a fresh
    /// connection to each of its addresses is refused. An exchange that
    /// failed on a kept connection says only that the connection broke
    /// (the host closes its connections as it exits); this says whether
    /// the host went with it. A host that is alive but slow still accepts.
    pub(crate) fn host_gone(&self) -> bool {
        let settings = &self.settings;
        settings.target.addrs.iter().all(|addr| {
            matches!(
                TcpStream::connect_timeout(addr, settings.connect_timeout),
                Err(err) if err.kind() == io::ErrorKind::ConnectionRefused
            )
        })
    }

    /// Whether an `initialize` opened an MCP session with an id, so that a
    /// standalone stream can be opened and the session closed.
    pub(crate) fn in_session(&self) -> bool {
        matches!(
            *lock(&self.session),
            Some(Mode::Stateful {
                session_id: Some(_),
                ..
            })
        )
    }

    /// Whether `message` travels as 2026-07-28, on its own rather than in
    /// the MCP session.
    pub(crate) fn travels_stateless(&self, message: &Value) -> bool {
        matches!(self.route(message), Route::Stateless { .. })
    }

    /// Forwards a request, or a batch holding requests, and hands every
    /// message of its answer to `out` as it arrives: notifications (progress,
    /// log messages), requests of the server (elicitation, sampling, roots)
    /// and the responses. `cancel` cuts the exchange short.
    ///
    /// The answer to `initialize` is handed on only after its MCP session
    /// is recorded, so that whatever the client sends next already travels
    /// in it.
    pub(crate) fn request(
        &self,
        link: &mut Link,
        message: &Value,
        cancel: &CancelHandle,
        out: &mut dyn FnMut(Value),
    ) -> Result<(), Unanswered> {
        let route = self.route(message);
        let headers = headers(&route, message);
        let mode = match &route {
            Route::Session(mode) => mode.clone(),
            Route::Stateless { .. } => Some(Mode::Stateless),
        };
        let initialize = Message::of(message).method() == Some(Method::Initialize.name());
        let mut inbox = Relayed {
            awaiting: request_ids(message),
            initialize,
            held: None,
            out,
        };
        let body = serde_json::to_vec(message).unwrap_or_default();
        let outgoing = Outgoing {
            mode: mode.as_ref(),
            headers: &headers,
            body: &body,
            timeout: None,
            cancel: Some(cancel),
        };
        match deliver(link, &self.settings, &outgoing, &mut inbox) {
            Ok(delivered) => {
                if let Some(held) = inbox.held.take() {
                    self.begin_session(&held, delivered.session_id);
                    (inbox.out)(held);
                }
                Ok(())
            }
            Err(error) => Err(Unanswered {
                ids: inbox.awaiting,
                error,
            }),
        }
    }

    /// Forwards a message that gets no JSON-RPC answer — a notification,
    /// the client's response to a request of the server, or a batch of
    /// those — which the server acknowledges with 202.
    pub(crate) fn notify(&self, link: &mut Link, message: &Value) -> Result<(), ClientError> {
        let route = self.route(message);
        let headers = headers(&route, message);
        let body = serde_json::to_vec(message).unwrap_or_default();
        link.exchange(
            &self.settings,
            "POST",
            &headers,
            &body,
            None,
            None,
            |head, body, _| wire::drain_for_status(head, body, &[]),
        )
    }

    /// Reads the MCP session's standalone stream (`GET`), handing every
    /// message on it to `out` (such as `notifications/tools/list_changed`),
    /// until the server ends it. `Ok` when it ended; the server's refusal
    /// otherwise. Only within a session ([`Passthrough::in_session`]).
    pub(crate) fn listen(
        &self,
        link: &mut Link,
        cancel: &CancelHandle,
        out: &mut dyn FnMut(Value),
    ) -> Result<(), ClientError> {
        let Some(mode) = lock(&self.session).clone() else {
            return Ok(());
        };
        let mut headers = rpc::mcp_headers(Some(&mode), "", None);
        headers.push(("Accept", Cow::Borrowed("text/event-stream")));
        let mut inbox = Relayed {
            awaiting: Vec::new(),
            initialize: false,
            held: None,
            out,
        };
        wire::listen(link, &self.settings, &headers, Some(cancel), &mut inbox).map(drop)
    }

    /// Ends the MCP session with `DELETE`, if one is open; best effort, as
    /// the relay is on its way out.
    pub(crate) fn close(&self, link: &mut Link) {
        let Some(mode) = lock(&self.session).take() else {
            return;
        };
        if let Mode::Stateful {
            session_id: Some(_),
            ..
        } = &mode
        {
            let headers = rpc::mcp_headers(Some(&mode), "", None);
            let _ = link.exchange(
                &self.settings,
                "DELETE",
                &headers,
                b"",
                Some(CLOSE_TIMEOUT),
                None,
                |head, body, _| wire::drain_for_status(head, body, &[404, 405]),
            );
        }
    }

    /// How `message` travels: 2026-07-28 when its `_meta` names a revision
    /// that has no handshake, else in the MCP session.
    fn route(&self, message: &Value) -> Route {
        let version = message
            .get("params")
            .and_then(|params| params.get("_meta"))
            .and_then(|meta| meta.get(META_VERSION))
            .and_then(Value::as_str);
        match version {
            Some(version) if Revision::parse(version).is_none_or(Revision::is_stateless) => {
                Route::Stateless {
                    version: version.to_owned(),
                }
            }
            _ => Route::Session(lock(&self.session).clone()),
        }
    }

    /// Records the MCP session an `initialize` answer opened.
    fn begin_session(&self, answer: &Value, session_id: Option<String>) {
        let revision = answer
            .get("result")
            .and_then(|result| result.get("protocolVersion"))
            .and_then(Value::as_str)
            .and_then(Revision::parse)
            .filter(|revision| !revision.is_stateless());
        if let Some(revision) = revision {
            *lock(&self.session) = Some(Mode::Stateful {
                revision,
                session_id,
            });
        }
    }
}

/// The MCP headers of `message` on `route`. For 2026-07-28 they repeat the
/// body: the version, the method, and for the methods that name a target
/// (`tools/call`, `prompts/get`, `resources/read`) its name.
fn headers<'a>(route: &'a Route, message: &'a Value) -> Vec<(&'static str, Cow<'a, str>)> {
    match route {
        Route::Session(mode) => rpc::mcp_headers(mode.as_ref(), "", None),
        Route::Stateless { version } => {
            let (method, params) = match Message::of(message) {
                Message::Request { method, params, .. }
                | Message::Notification { method, params } => (method, params),
                _ => ("", None),
            };
            let target = match Method::parse(method) {
                Some(Method::CallTool | Method::GetPrompt) => params.and_then(|p| p.get("name")),
                Some(Method::ReadResource) => params.and_then(|p| p.get("uri")),
                _ => None,
            };
            let mut headers = rpc::mcp_headers(
                Some(&Mode::Stateless),
                method,
                target.and_then(Value::as_str),
            );
            if version != STATELESS.as_str() {
                // A revision this code does not know: say what the body
                // says, so that the server can name the mismatch itself.
                headers[0].1 = Cow::Borrowed(version.as_str());
            }
            headers
        }
    }
}

/// The ids of the requests in `message` (one object, or a batch): what
/// the answer must bring responses for.
pub(crate) fn request_ids(message: &Value) -> Vec<Value> {
    let request_id = |message: &Value| match Message::of(message) {
        Message::Request { id, .. } => Some(id.clone()),
        _ => None,
    };
    match message {
        Value::Array(items) => items.iter().filter_map(request_id).collect(),
        single => request_id(single).into_iter().collect(),
    }
}

/// An answer read for a relay: every message goes to `out` unchanged,
/// until a response has arrived for each awaited id.
struct Relayed<'a> {
    awaiting: Vec<Value>,
    /// The request is `initialize`: hold its response back (see
    /// [`Passthrough::request`]).
    initialize: bool,
    held: Option<Value>,
    out: &'a mut dyn FnMut(Value),
}

impl Relayed<'_> {
    /// Takes one response off the awaited list. An error the server could
    /// not tie to a request (`id: null`, as for a body it could not parse)
    /// answers the only request awaited, so that the client is not left
    /// waiting for it.
    fn answered(&mut self, message: &mut Value) {
        let id = match Message::of(&*message) {
            Message::Error { id: None, .. } if self.awaiting.len() == 1 => {
                message["id"] = self.awaiting.remove(0);
                return;
            }
            Message::Result { id, .. } | Message::Error { id: Some(id), .. } => id.clone(),
            Message::Invalid(Invalid { id: Some(id), .. }) => id,
            _ => return,
        };
        if let Some(at) = self.awaiting.iter().position(|awaited| *awaited == id) {
            self.awaiting.remove(at);
        }
    }
}

impl Inbox for Relayed<'_> {
    type Answer = ();

    fn take(&mut self, mut message: Value, _status: u16) -> Result<Option<()>, ClientError> {
        if let Value::Array(items) = &mut message {
            // A batch's answer is one array, handed on as one line.
            for item in items.iter_mut() {
                self.answered(item);
            }
            (self.out)(message);
            return Ok(Some(()));
        }
        let is_response = Message::of(&message).method().is_none();
        if is_response {
            self.answered(&mut message);
            if self.initialize {
                self.held = Some(message);
                return Ok(self.awaiting.is_empty().then_some(()));
            }
        }
        (self.out)(message);
        Ok((is_response && self.awaiting.is_empty()).then_some(()))
    }

    fn name(&self) -> String {
        let ids: Vec<String> = self.awaiting.iter().map(Value::to_string).collect();
        format!("the request(s) with id {}", ids.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::jsonrpc::{INVALID_PARAMS, PARSE_ERROR};
    use serde_json::json;

    fn upstream() -> Passthrough {
        Passthrough::new("http://127.0.0.1:9/mcp", "Bearer x", Duration::from_secs(1)).unwrap()
    }

    #[test]
    fn requests_in_a_batch_are_awaited_and_notifications_and_answers_are_not() {
        assert_eq!(
            request_ids(&json!({"jsonrpc": "2.0", "id": 4, "method": "ping"})),
            [json!(4)]
        );
        assert!(
            request_ids(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
                .is_empty()
        );
        assert!(request_ids(&json!({"jsonrpc": "2.0", "id": 4, "result": {}})).is_empty());
        assert_eq!(
            request_ids(&json!([
                {"jsonrpc": "2.0", "id": "a", "method": "tools/list"},
                {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {}},
                {"jsonrpc": "2.0", "id": 9, "result": {}},
                {"jsonrpc": "2.0", "id": 2, "method": "ping"},
            ])),
            [json!("a"), json!(2)]
        );
    }

    #[test]
    fn a_message_naming_2026_07_28_travels_with_that_revisions_headers() {
        let upstream = upstream();
        let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "grüße", "_meta": {META_VERSION: "2026-07-28"}}});
        let route = upstream.route(&call);
        assert_eq!(
            headers(&route, &call),
            [
                ("MCP-Protocol-Version", Cow::Borrowed("2026-07-28")),
                ("Mcp-Method", Cow::Borrowed("tools/call")),
                ("Mcp-Name", Cow::Borrowed("=?base64?Z3LDvMOfZQ==?=")),
            ]
        );
        let read = json!({"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {
            "uri": "file:///a", "_meta": {META_VERSION: "2027-01-01"}}});
        let route = upstream.route(&read);
        let sent = headers(&route, &read);
        assert_eq!(
            sent[0],
            ("MCP-Protocol-Version", Cow::Borrowed("2027-01-01"))
        );
        assert_eq!(
            sent[2],
            ("Mcp-Name", Cow::Borrowed("=?base64?ZmlsZTovLy9h?="))
        );
    }

    #[test]
    fn other_messages_travel_in_the_session_once_initialize_opened_one() {
        let upstream = upstream();
        let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
        // Before initialize (and for initialize itself): no MCP headers.
        assert!(headers(&upstream.route(&list), &list).is_empty());
        assert!(!upstream.in_session());
        upstream.begin_session(
            &json!({"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "2025-06-18"}}),
            Some("s-1".into()),
        );
        assert!(upstream.in_session());
        assert_eq!(
            headers(&upstream.route(&list), &list),
            [
                ("MCP-Protocol-Version", Cow::Borrowed("2025-06-18")),
                ("Mcp-Session-Id", Cow::Borrowed("s-1")),
            ]
        );
        // A handshake revision in _meta is still the session's business.
        let legacy_meta = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list",
            "params": {"_meta": {META_VERSION: "2025-06-18"}}});
        assert_eq!(
            headers(&upstream.route(&legacy_meta), &legacy_meta).len(),
            2
        );
    }

    #[test]
    fn an_initialize_that_failed_opens_no_session() {
        let upstream = upstream();
        upstream.begin_session(
            &json!({"jsonrpc": "2.0", "id": 1, "error": {"code": INVALID_PARAMS, "message": "no"}}),
            None,
        );
        assert!(lock(&upstream.session).is_none());
        upstream.begin_session(
            &json!({"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "2026-07-28"}}),
            Some("x".into()),
        );
        assert!(lock(&upstream.session).is_none());
    }

    #[test]
    fn the_relayed_answer_is_complete_once_every_awaited_id_is_answered() {
        let mut seen = Vec::new();
        let mut out = |message: Value| seen.push(message);
        let mut inbox = Relayed {
            awaiting: vec![json!(1), json!("b")],
            initialize: false,
            held: None,
            out: &mut out,
        };
        let progress = json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {}});
        assert_eq!(inbox.take(progress, 200).unwrap(), None);
        let ask = json!({"jsonrpc": "2.0", "id": 1, "method": "roots/list"});
        assert_eq!(
            inbox.take(ask, 200).unwrap(),
            None,
            "a server request with a clashing id"
        );
        let one = json!({"jsonrpc": "2.0", "id": 1, "result": {}});
        assert_eq!(inbox.take(one, 200).unwrap(), None);
        let other = json!({"jsonrpc": "2.0", "id": 2, "result": {}});
        assert_eq!(inbox.take(other, 200).unwrap(), None);
        let b = json!({"jsonrpc": "2.0", "id": "b", "result": {}});
        assert_eq!(inbox.take(b, 200).unwrap(), Some(()));
        assert_eq!(seen.len(), 5, "everything is handed on unchanged");
    }

    #[test]
    fn an_unattributed_error_answers_the_one_request_awaited() {
        let mut seen = Vec::new();
        let mut out = |message: Value| seen.push(message);
        let mut inbox = Relayed {
            awaiting: vec![json!(7)],
            initialize: false,
            held: None,
            out: &mut out,
        };
        let error = json!({"jsonrpc": "2.0", "id": null,
            "error": {"code": PARSE_ERROR, "message": "parse error"}});
        assert_eq!(inbox.take(error, 400).unwrap(), Some(()));
        assert_eq!(seen[0]["id"], 7);
    }

    #[test]
    fn a_batch_answer_is_handed_on_as_one_array() {
        let mut seen = Vec::new();
        let mut out = |message: Value| seen.push(message);
        let mut inbox = Relayed {
            awaiting: vec![json!(1), json!(2)],
            initialize: false,
            held: None,
            out: &mut out,
        };
        let answers = json!([{"jsonrpc": "2.0", "id": 1, "result": {}},
                             {"jsonrpc": "2.0", "id": 2, "result": {}}]);
        assert_eq!(inbox.take(answers.clone(), 200).unwrap(), Some(()));
        assert!(inbox.awaiting.is_empty());
        assert_eq!(seen, [answers]);
    }
}
