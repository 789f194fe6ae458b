//! What a handler knows about the call it is serving, and how it talks back.
//!
//! A [`CallContext`] is handed to every handler. Through it a blocking
//! handler learns who called and in which revision, reports progress and log
//! messages (which turn the response into an event stream the moment the
//! first one is sent), and learns when the caller has gone away, so that
//! long work can stop early.

use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Map, Value};

use super::ask::{AskError, Asking, Elicitation, InputRequest, Round};
use super::call_link::{CallLink, Cancellation, Gone};
use super::tool_error::ToolError;
use crate::model::jsonrpc;
use crate::model::method::Method;
use crate::model::{ClientInfo, LogLevel, Revision};
use crate::sync::lock;

/// The context of one tool call.
///
/// ```
/// use toolhost::{CallContext, LogLevel, ToolOutcome};
///
/// fn slow(_args: &serde_json::Value, ctx: &CallContext) -> ToolOutcome {
///     for step in 0..100u32 {
///         if ctx.is_cancelled() {
///             return ToolOutcome::cancelled(); // not a decline: the model reads no reason
///         }
///         ctx.progress(f64::from(step), Some(100.0), None);
///         // … one step of work …
///     }
///     ctx.log(LogLevel::Info, serde_json::json!("all steps done"));
///     ToolOutcome::text("done")
/// }
/// # let _ = slow;
/// ```
pub struct CallContext {
    pub(crate) request_id: Value,
    pub(crate) revision: Revision,
    pub(crate) client: Option<Arc<ClientInfo>>,
    pub(crate) cancel: Arc<Cancellation>,
    pub(crate) talk: Option<Talk>,
    pub(crate) deadline: Option<Instant>,
    /// The client's declared capabilities.
    pub(crate) capabilities: Arc<Value>,
    pub(crate) asking: Option<Asking>,
}

/// How a call talks back: its link to the runtime, and what the client
/// asked to hear.
pub(crate) struct Talk {
    pub(crate) link: Arc<dyn CallLink>,
    pub(crate) progress_token: Option<Value>,
    pub(crate) log_level: Option<LogLevel>,
    last_progress: Mutex<Option<f64>>,
}

impl Talk {
    pub(crate) fn new(
        link: Arc<dyn CallLink>,
        progress_token: Option<Value>,
        log_level: Option<LogLevel>,
    ) -> Talk {
        Talk {
            link,
            progress_token,
            log_level,
            last_progress: Mutex::new(None),
        }
    }
}

impl fmt::Debug for CallContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallContext")
            .field("request_id", &self.request_id)
            .field("revision", &self.revision)
            .field("client", &self.client)
            .field("cancelled", &self.is_cancelled())
            .finish_non_exhaustive()
    }
}

impl CallContext {
    /// A context for a call made in-process, outside any session (a
    /// registry's direct call in a test): no client to talk back to or
    /// ask, never cancelled, no deadline.
    pub(crate) fn detached() -> CallContext {
        CallContext {
            request_id: Value::Null,
            revision: Revision::LATEST_STATEFUL,
            client: None,
            cancel: Arc::default(),
            talk: None,
            deadline: None,
            capabilities: Arc::new(Value::Object(Map::new())),
            asking: None,
        }
    }

    /// What this run asked that had no answer yet (2026-07-28), for the
    /// host's `input_required` result; `None` in the stateful revisions.
    pub(crate) fn into_round(self) -> Option<Round> {
        match self.asking {
            Some(Asking::Rounds { round, .. }) => Some(
                round
                    .into_inner()
                    .unwrap_or_else(std::sync::PoisonError::into_inner),
            ),
            _ => None,
        }
    }

    fn declared(&self, capability: &str) -> bool {
        self.capabilities.get(capability).is_some()
    }

    /// Whether the client can be asked to fill in a form
    /// ([`CallContext::elicit`]): it declared `elicitation`, in a revision
    /// that has it (2025-06-18 on).
    pub fn can_elicit(&self) -> bool {
        self.declared("elicitation") && self.revision >= Revision::V2025_06_18
    }

    /// Whether the client can be asked for a completion
    /// ([`CallContext::sample`]): it declared `sampling`.
    pub fn can_sample(&self) -> bool {
        self.declared("sampling")
    }

    /// Whether the client can be asked for its roots
    /// ([`CallContext::list_roots`]): it declared `roots`.
    pub fn can_list_roots(&self) -> bool {
        self.declared("roots")
    }

    /// Asks the user to fill in a form and blocks until the answer comes
    /// (see [`InputRequest::elicit`] for the schemas allowed). The content of
    /// an accepted form has been checked against `requested_schema`.
    ///
    /// In 2026-07-28 the first run gets [`AskError::InputRequired`]: return
    /// it (`return err.into()`), and the host runs the handler again once the
    /// client has answered — so ask before doing anything irreversible, as
    /// the handler runs once per round.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolhost::{CallContext, Elicitation, ToolOutcome};
    ///
    /// fn pay(_args: &serde_json::Value, ctx: &CallContext) -> ToolOutcome {
    ///     let form = json!({"type": "object",
    ///         "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]});
    ///     match ctx.elicit("Pay 20 credits?", form) {
    ///         Ok(Elicitation::Accept(answer)) if answer["ok"] == true => ToolOutcome::text("paid"),
    ///         Ok(_) => ToolOutcome::declined("the user said no"),
    ///         Err(err) => err.into(),
    ///     }
    /// }
    /// # let _ = pay;
    /// ```
    pub fn elicit(&self, message: &str, requested_schema: Value) -> Result<Elicitation, AskError> {
        let mut answers = self.ask(vec![InputRequest::elicit(message, requested_schema)])?;
        Ok(Elicitation::from_answer(&answers.remove(0)))
    }

    /// Asks the client's model for a completion (`sampling/createMessage`
    /// with `params`) and blocks until it answers; returns the client's
    /// `CreateMessageResult` (`role`, `content`, `model`, …).
    pub fn sample(&self, params: Value) -> Result<Value, AskError> {
        let mut answers = self.ask(vec![InputRequest::sample(params)])?;
        Ok(answers.remove(0))
    }

    /// Asks for the client's roots; returns its `roots` array.
    pub fn list_roots(&self) -> Result<Vec<Value>, AskError> {
        let mut answers = self.ask(vec![InputRequest::list_roots()])?;
        Ok(answers.remove(0)["roots"]
            .as_array()
            .cloned()
            .unwrap_or_default())
    }

    /// Asks several questions at once and returns the answers in order (raw
    /// results: an elicitation's `{action, content}`, a `CreateMessageResult`,
    /// a `ListRootsResult`). In 2026-07-28 the client gets all the
    /// unanswered ones in one `input_required` round.
    ///
    /// In the stateful revisions a question the handler stops waiting for
    /// before its answer — the call was cancelled, its deadline passed, or
    /// another question of the same `ask` failed — is cancelled on the
    /// call's stream (`notifications/cancelled` naming it, with the
    /// reason), so the client stops asking its user or model; an answer
    /// that comes after that is refused like one to an unknown id.
    pub fn ask(&self, requests: Vec<InputRequest>) -> Result<Vec<Value>, AskError> {
        self.ask_until(requests, None)
    }

    /// Puts a question asked by another MCP server to this call's client
    /// and waits for the answer, as [`ask`](CallContext::ask) does, until
    /// `withdrawn` says the server withdrew it: the wait then ends with
    /// [`AskError::Withdrawn`], and the client is told the question is
    /// cancelled.
    #[cfg(feature = "client")]
    pub(crate) fn ask_relayed(
        &self,
        question: InputRequest,
        withdrawn: super::ask::Withdrawn<'_>,
    ) -> Result<Value, AskError> {
        let mut answers = self.ask_until(vec![question], Some(withdrawn))?;
        answers.pop().ok_or(AskError::Disconnected)
    }

    fn ask_until(
        &self,
        requests: Vec<InputRequest>,
        withdrawn: Option<super::ask::Withdrawn<'_>>,
    ) -> Result<Vec<Value>, AskError> {
        for request in &requests {
            let capability = request.capability();
            if !self.declared(capability) {
                return Err(AskError::NotSupported { capability });
            }
            request.check(self.revision)?;
        }
        match &self.asking {
            Some(Asking::Rounds { answers, round }) => {
                Asking::from_rounds(answers, round, &requests)
            }
            Some(Asking::Stream) => {
                let talk = self.talk.as_ref().ok_or(AskError::Disconnected)?;
                super::ask::on_stream(
                    &*talk.link,
                    &self.cancel,
                    self.deadline,
                    requests,
                    withdrawn,
                )
            }
            None => Err(AskError::Disconnected),
        }
    }

    /// When the host stops waiting for this call, if
    /// [`HostConfig::call_timeout`](crate::HostConfig::call_timeout) set a
    /// limit. At the deadline the client is answered with a tool error and
    /// [`CallContext::is_cancelled`] turns true; the handler is not stopped
    /// (a thread cannot be), so it should check and return.
    pub fn deadline(&self) -> Option<Instant> {
        self.deadline
    }

    /// The JSON-RPC id of the `tools/call` request.
    pub fn request_id(&self) -> &Value {
        &self.request_id
    }

    /// The protocol revision the client speaks.
    pub fn revision(&self) -> Revision {
        self.revision
    }

    /// The client's name and version, when it sent them.
    pub fn client(&self) -> Option<&ClientInfo> {
        self.client.as_deref()
    }

    /// Whether the call's result is no longer wanted: the client cancelled
    /// it (`notifications/cancelled`; in 2026-07-28 also by closing the
    /// response stream, and in the stateful revisions by staying away past
    /// [`HostConfig::resume_window`](crate::HostConfig::resume_window) —
    /// either seen at the next progress or log message), the session guard
    /// was dropped, or the host is shutting down. Long work should check
    /// this between steps and return early.
    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    /// `Err(`[`ToolError::cancelled`]`)` once the call is cancelled, so that
    /// a handler stops between steps with `ctx.check_cancelled()?`. The call
    /// then ends as [`OutcomeKind::Cancelled`](crate::OutcomeKind::Cancelled),
    /// told apart from a decline by the event hook and
    /// [`ToolSession::calls_cancelled`](crate::ToolSession::calls_cancelled).
    ///
    /// ```
    /// use toolhost::{CallContext, ToolError};
    ///
    /// fn reindex(_args: serde_json::Value, ctx: &CallContext) -> Result<String, ToolError> {
    ///     for step in 0..100u32 {
    ///         ctx.check_cancelled()?; // a cancelled call, not a declined one
    ///         ctx.progress(f64::from(step), Some(100.0), None);
    ///     }
    ///     Ok("reindexed".into())
    /// }
    /// # let _ = reindex;
    /// ```
    pub fn check_cancelled(&self) -> Result<(), ToolError> {
        if self.is_cancelled() {
            Err(ToolError::cancelled())
        } else {
            Ok(())
        }
    }

    /// Why the call was cancelled, once it is.
    pub fn cancelled_reason(&self) -> Option<String> {
        self.cancel.reason()
    }

    /// Closes the connection carrying this call's response stream, telling
    /// the client to reconnect after `reconnect_after`; the call goes on,
    /// and what it sends meanwhile — progress, log messages, its result —
    /// reaches the client when it resumes (`GET` with `Last-Event-ID`). For
    /// work that outlasts what a proxy lets a connection idle, or to free
    /// the connection during a long wait (MCP 2025-11-25 calls this
    /// polling).
    ///
    /// Returns `false`, doing nothing, where the stream cannot be resumed:
    /// in 2026-07-28 (where closing it would cancel the call), before
    /// 2025-11-25 until an event has been sent (the client holds no id to
    /// resume from), once the call was answered, when the connection is
    /// already closed, or when
    /// [`HostConfig::resume_window`](crate::HostConfig::resume_window) is
    /// zero.
    pub fn close_stream(&self, reconnect_after: Duration) -> bool {
        self.talk
            .as_ref()
            .is_some_and(|talk| talk.link.close_connection(reconnect_after))
    }

    /// Whether the client asked for progress (its request carried a
    /// `progressToken`); [`CallContext::progress`] sends nothing otherwise.
    pub fn wants_progress(&self) -> bool {
        self.talk
            .as_ref()
            .is_some_and(|t| t.progress_token.is_some())
    }

    /// Reports progress: `done` out of `total` (when known), with an optional
    /// message for the user. Sent only when the client asked for progress,
    /// and only when `done` exceeds the last value sent, since MCP requires
    /// progress to increase. The first notification turns the response into
    /// an event stream. A client that has gone away for good cancels the
    /// call (see [`CallContext::is_cancelled`]).
    pub fn progress(&self, done: f64, total: Option<f64>, message: Option<&str>) {
        let Some(talk) = &self.talk else { return };
        let Some(token) = &talk.progress_token else {
            return;
        };
        {
            let mut last = lock(&talk.last_progress);
            if last.is_some_and(|last| done <= last) || !done.is_finite() {
                return;
            }
            *last = Some(done);
        }
        let mut params = Map::new();
        params.insert("progressToken".into(), token.clone());
        params.insert("progress".into(), json!(done));
        if let Some(total) = total.filter(|t| t.is_finite()) {
            params.insert("total".into(), json!(total));
        }
        if let Some(message) = message.filter(|_| self.revision >= Revision::V2025_03_26) {
            params.insert("message".into(), message.into());
        }
        self.send(Method::Progress, Value::Object(params));
    }

    /// Sends a log message at `level`, if the client asked for messages at
    /// that level or above (`logging/setLevel` in the stateful revisions, the
    /// request's `io.modelcontextprotocol/logLevel` in 2026-07-28). Nothing
    /// is sent when it did not ask.
    pub fn log(&self, level: LogLevel, data: Value) {
        self.log_message(level, None, data);
    }

    /// [`log`](CallContext::log) with the name of the logger that wrote
    /// the message (MCP's `logger`), for a handler with parts of its own
    /// to tell apart, or one that relays another server's messages.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolhost::{LogLevel, Tool, ToolOutcome, StaticSurface};
    ///
    /// let surface = StaticSurface::new().tool(Tool::new("sync", "Syncs."), |_, ctx| {
    ///     ctx.log_as(LogLevel::Info, "sync.db", json!("3 rows written"));
    ///     ToolOutcome::text("synced")
    /// })?;
    /// # let _ = surface;
    /// # Ok::<(), toolhost::Error>(())
    /// ```
    pub fn log_as(&self, level: LogLevel, logger: &str, data: Value) {
        self.log_message(level, Some(logger), data);
    }

    fn log_message(&self, level: LogLevel, logger: Option<&str>, data: Value) {
        let Some(talk) = &self.talk else { return };
        if talk.log_level.is_none_or(|threshold| level < threshold) {
            return;
        }
        let mut params = Map::new();
        params.insert("level".into(), level.as_str().into());
        if let Some(logger) = logger {
            params.insert("logger".into(), logger.into());
        }
        params.insert("data".into(), data);
        self.send(Method::LogMessage, Value::Object(params));
    }

    /// Tells the session's clients that its tool list changed, as
    /// [`ToolSession::notify_tools_changed`](crate::ToolSession::notify_tools_changed)
    /// does: for a handler that adds or withdraws tools.
    pub fn notify_tools_changed(&self) {
        if let Some(talk) = &self.talk {
            talk.link.tools_changed();
        }
    }

    fn send(&self, method: Method, params: Value) {
        let Some(talk) = &self.talk else { return };
        if self.cancel.is_cancelled() {
            return;
        }
        let message = jsonrpc::notification(method.name(), Some(params));
        if let Err(Gone(reason)) = talk.link.send(&message) {
            self.cancel.cancel(reason, true);
        }
    }
}
