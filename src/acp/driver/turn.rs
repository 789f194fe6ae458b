//! One prompt turn: `session/prompt`, the agent's updates and questions
//! while it works, and what the turn came to.
//!
//! The turn ends with the prompt's answer (its `stopReason`). A turn that
//! runs past its timeout, or whose [`TurnCancel`] fires, is cancelled as
//! ACP says: `session/cancel`, permission requests answered `cancelled`
//! from then on, and the agent's answer (`stopReason: "cancelled"`)
//! awaited a few seconds more.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::updates::{PermissionChoice, PermissionRequest, PlanEntry, ToolCallReport, Update};
use super::{lost, not_offered, AcpError, Agent, Serve};
use crate::model::jsonrpc::RpcError;
use crate::session::ToolSession;

/// The default of [`Prompt::timeout`].
pub(crate) const DEFAULT_TURN_TIMEOUT: Duration = Duration::from_secs(600);

/// How long a cancelled turn gets to report `stopReason: "cancelled"`.
const CANCEL_GRACE: Duration = Duration::from_secs(5);

/// How often a waiting turn looks at its [`TurnCancel`].
const CANCEL_POLL: Duration = Duration::from_millis(50);

type UpdateCallback<'a> = Box<dyn FnMut(&Update) + 'a>;
type PermissionPolicy<'a> = Box<dyn FnMut(&PermissionRequest) -> PermissionChoice + 'a>;

/// A prompt turn being set up; [`run`](Prompt::run) sends it. Made by
/// [`Agent::prompt`].
#[must_use = "a prompt does nothing until it is run"]
pub struct Prompt<'a> {
    agent: &'a mut Agent,
    session_id: String,
    text: String,
    tools: Option<&'a ToolSession>,
    on_update: Option<UpdateCallback<'a>>,
    on_permission: Option<PermissionPolicy<'a>>,
    timeout: Duration,
    cancel: Option<TurnCancel>,
}

/// What a turn came to.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct TurnSummary {
    /// The agent's `stopReason`: `end_turn`, `max_tokens`,
    /// `max_turn_requests`, `refusal` or `cancelled`.
    pub stop_reason: String,
    /// Every tool call the agent reported, in the order first reported,
    /// as it last described it.
    pub tool_calls: Vec<ToolCallReport>,
    /// How many tool calls reached a handler of the
    /// [`tools`](Prompt::tools) session during the turn; `None` when none
    /// was named.
    pub calls_served: Option<u64>,
    /// The turn ran past its [`timeout`](Prompt::timeout) and was
    /// cancelled.
    pub timed_out: bool,
}

impl TurnSummary {
    /// How many tool calls the agent reported as completed.
    pub fn completed_tool_calls(&self) -> usize {
        self.tool_calls
            .iter()
            .filter(|call| call.is_completed())
            .count()
    }

    /// The agent reported completed tool calls, yet none reached the
    /// host: it did not use the `mcpServers` entry (or used only tools of
    /// its own) while its answer may claim otherwise. `false` when the
    /// turn named no [`tools`](Prompt::tools).
    pub fn unserved_claims(&self) -> bool {
        self.calls_served == Some(0) && self.completed_tool_calls() > 0
    }
}

/// Cancels a running turn from anywhere: another thread, or the turn's own
/// callbacks. Cheap to clone; every clone cancels the same turns, and a
/// cancelled handle stays cancelled.
///
/// ```
/// use toolhost::acp::TurnCancel;
///
/// let cancel = TurnCancel::new();
/// let from_a_callback = cancel.clone();
/// from_a_callback.cancel();
/// assert!(cancel.is_cancelled());
/// ```
#[derive(Clone, Debug, Default)]
pub struct TurnCancel {
    cancelled: Arc<AtomicBool>,
}

impl TurnCancel {
    /// A handle that has not been cancelled.
    pub fn new() -> TurnCancel {
        TurnCancel::default()
    }

    /// Cancels every turn run with this handle (`session/cancel`).
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::SeqCst);
    }

    /// Whether [`cancel`](TurnCancel::cancel) was called.
    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::SeqCst)
    }
}

impl<'a> Prompt<'a> {
    pub(super) fn new(agent: &'a mut Agent, session_id: &str, text: &str) -> Prompt<'a> {
        Prompt {
            agent,
            session_id: session_id.to_owned(),
            text: text.to_owned(),
            tools: None,
            on_update: None,
            on_permission: None,
            timeout: DEFAULT_TURN_TIMEOUT,
            cancel: None,
        }
    }

    /// Counts the calls `session` serves during the turn, for
    /// [`TurnSummary::calls_served`]: what the host saw, beside what the
    /// agent says.
    pub fn tools(mut self, session: &'a ToolSession) -> Prompt<'a> {
        self.tools = Some(session);
        self
    }

    /// Calls `callback` with each update of the agent as it arrives: its
    /// message and thoughts in pieces, its tool calls as they change, its
    /// plan.
    pub fn on_update(mut self, callback: impl FnMut(&Update) + 'a) -> Prompt<'a> {
        self.on_update = Some(Box::new(callback));
        self
    }

    /// Answers the agent's permission requests with `policy` (for
    /// instance [`PermissionChoice::allow`]). Without one, every request is
    /// rejected ([`PermissionChoice::reject`]); once the turn is being
    /// cancelled, every request is answered `cancelled`, as ACP asks.
    pub fn on_permission(
        mut self,
        policy: impl FnMut(&PermissionRequest) -> PermissionChoice + 'a,
    ) -> Prompt<'a> {
        self.on_permission = Some(Box::new(policy));
        self
    }

    /// How long the turn may run before it is cancelled (600 s by
    /// default).
    pub fn timeout(mut self, timeout: Duration) -> Prompt<'a> {
        self.timeout = timeout;
        self
    }

    /// Lets `handle` (or any clone of it) cancel the turn.
    pub fn cancel_with(mut self, handle: &TurnCancel) -> Prompt<'a> {
        self.cancel = Some(handle.clone());
        self
    }

    /// Sends `session/prompt` and serves the agent until it answers.
    ///
    /// A turn cancelled by its timeout or its [`TurnCancel`] still ends in
    /// `Ok` once the agent answers the cancel (usually with `stopReason:
    /// "cancelled"`, and [`TurnSummary::timed_out`] set for a timeout).
    ///
    /// # Errors
    /// [`AcpError::Timeout`] when the agent did not answer the cancel
    /// either; [`AcpError::Closed`] at once when it went away (naming its
    /// exit status and last stderr lines); [`AcpError::Agent`] when it
    /// refused the prompt; [`AcpError::Protocol`] for an answer without a
    /// `stopReason`, or a message past
    /// [`Agent::set_max_message_bytes`](super::Agent::set_max_message_bytes)
    /// (the turn is cancelled with `session/cancel` on its way out).
    pub fn run(self) -> Result<TurnSummary, AcpError> {
        const METHOD: &str = "session/prompt";
        let Prompt {
            agent,
            session_id,
            text,
            tools,
            on_update,
            on_permission,
            timeout,
            cancel,
        } = self;
        let served_before = tools.map(ToolSession::calls_served);
        let id = agent.pipes.next_id();
        agent
            .pipes
            .request(
                id,
                METHOD,
                json!({"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}),
            )
            .map_err(|silence| lost(METHOD, silence, timeout))?;
        let mut turn = Turn {
            on_update,
            on_permission,
            calls: Vec::new(),
            cancelling: false,
        };
        let started = Instant::now();
        let deadline = started + timeout;
        let mut cancelled_until: Option<Instant> = None;
        let mut timed_out = false;
        let result = loop {
            let until = cancelled_until
                .unwrap_or(deadline)
                .min(Instant::now() + CANCEL_POLL);
            match agent.wait(id, METHOD, until, &mut turn) {
                Ok(Some(result)) => break result,
                Ok(None) => {}
                Err(err @ AcpError::Protocol { .. }) => {
                    // A message too large to read: the agent runs on, so
                    // it is told the turn is over.
                    let _ = agent
                        .pipes
                        .notify("session/cancel", json!({"sessionId": session_id}));
                    return Err(err);
                }
                Err(err) => return Err(err),
            }
            let now = Instant::now();
            match cancelled_until {
                Some(grace_end) if now >= grace_end => {
                    return Err(AcpError::Timeout {
                        method: METHOD.to_owned(),
                        waited: started.elapsed(),
                    })
                }
                Some(_) => {}
                None => {
                    let asked = cancel.as_ref().is_some_and(TurnCancel::is_cancelled);
                    if asked || now >= deadline {
                        timed_out = !asked;
                        turn.cancelling = true;
                        // `CancelNotification`; a broken input shows as the
                        // end of the output at the next wait.
                        let _ = agent
                            .pipes
                            .notify("session/cancel", json!({"sessionId": session_id}));
                        cancelled_until = Some(now + CANCEL_GRACE);
                    }
                }
            }
        };
        let stop_reason = result
            .get("stopReason")
            .and_then(Value::as_str)
            .ok_or_else(|| {
                AcpError::protocol(METHOD, format!("the answer has no stopReason: {result}"))
            })?
            .to_owned();
        Ok(TurnSummary {
            stop_reason,
            tool_calls: turn.calls,
            calls_served: tools
                .zip(served_before)
                .map(|(tools, before)| tools.calls_served().saturating_sub(before)),
            timed_out,
        })
    }
}

/// What a running turn keeps: the callbacks, and the tool calls reported.
struct Turn<'a> {
    on_update: Option<UpdateCallback<'a>>,
    on_permission: Option<PermissionPolicy<'a>>,
    calls: Vec<ToolCallReport>,
    /// `session/cancel` was sent.
    cancelling: bool,
}

impl Turn<'_> {
    fn emit(&mut self, update: &Update) {
        if let Some(callback) = self.on_update.as_mut() {
            callback(update);
        }
    }

    /// Merges a tool call's news into the calls seen; the call when it
    /// changed.
    fn tool_call(&mut self, update: &Value) -> Option<ToolCallReport> {
        let id = update.get("toolCallId").and_then(Value::as_str)?;
        let at = match self.calls.iter().position(|call| call.id == id) {
            Some(at) => at,
            None => {
                self.calls.push(ToolCallReport {
                    id: id.to_owned(),
                    ..ToolCallReport::default()
                });
                self.calls.len() - 1
            }
        };
        let call = &mut self.calls[at];
        call.merge(update).then(|| call.clone())
    }
}

impl Serve for Turn<'_> {
    fn notification(&mut self, method: &str, params: &Value) {
        if method != "session/update" {
            return;
        }
        let Some(update) = params.get("update") else {
            return;
        };
        let Some(kind) = update.get("sessionUpdate").and_then(Value::as_str) else {
            return;
        };
        let chunk = || {
            let content = update.get("content").cloned().unwrap_or(Value::Null);
            let text = content
                .get("text")
                .and_then(Value::as_str)
                .map(str::to_owned);
            (text, content)
        };
        let read = match kind {
            "agent_message_chunk" => {
                let (text, content) = chunk();
                Some(Update::AgentMessage { text, content })
            }
            "agent_thought_chunk" => {
                let (text, content) = chunk();
                Some(Update::AgentThought { text, content })
            }
            "tool_call" | "tool_call_update" => self.tool_call(update).map(Update::ToolCall),
            "plan" => Some(Update::Plan(
                update
                    .get("entries")
                    .and_then(Value::as_array)
                    .map(|entries| entries.iter().map(PlanEntry::read).collect())
                    .unwrap_or_default(),
            )),
            other => Some(Update::Other {
                kind: other.to_owned(),
                update: update.clone(),
            }),
        };
        if let Some(read) = read {
            self.emit(&read);
        }
    }

    fn request(&mut self, method: &str, params: &Value) -> Result<Value, RpcError> {
        if method != "session/request_permission" {
            return Err(not_offered(method));
        }
        let request = PermissionRequest::read(params);
        // The request describes the call too; keep what it says.
        if let Some(call) = params.get("toolCall") {
            if let Some(changed) = self.tool_call(call) {
                self.emit(&Update::ToolCall(changed));
            }
        }
        let choice = if self.cancelling {
            PermissionChoice::Cancel
        } else {
            match self.on_permission.as_mut() {
                Some(policy) => policy(&request),
                None => PermissionChoice::reject(&request),
            }
        };
        Ok(choice.to_result())
    }
}
