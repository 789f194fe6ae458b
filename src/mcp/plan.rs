//! What the core tells the runtime to do with a request, and how the
//! runtime's results become the response.
//!
//! A request either gets its answer at once ([`Plan::Respond`]), opens a
//! long-lived stream, resumes one, or needs work the core cannot do itself
//! ([`Plan::Work`]): run a handler, cancel a running call, hand a client's
//! answer to a waiting handler. The runtime carries out each [`Step`] in
//! order, reports a [`StepResult`] for each, and [`finish`] spells the
//! response — so every protocol decision, including how a batch, a
//! cancelled call or an undeliverable answer is answered, is made here.

use serde_json::{Map, Value};

use super::lifecycle::Caller;
use super::streams::StreamOpen;
use super::Server;
use crate::event::AuthRefusal;
use crate::model::http::HttpResponse;
use crate::model::jsonrpc::{
    failure, Reply, RpcError, INTERNAL_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND,
};
use crate::model::Tool;

/// What to do with a request.
#[derive(Debug)]
pub(crate) enum Plan {
    /// Answer now with this.
    Respond(HttpResponse),
    /// Carry out the work, then answer with [`finish`].
    Work(Work),
    /// Open a long-lived event stream.
    Stream(StreamOpen),
    /// Carry on a dropped response stream of `mcp_session` after
    /// `last_event_id`; when it cannot be resumed, answer
    /// [`resume_refused`](super::resume_refused).
    Resume {
        mcp_session: String,
        last_event_id: String,
    },
}

/// Steps to carry out for one POST, in order.
#[derive(Debug)]
pub(crate) struct Work {
    /// Who asked.
    pub(crate) caller: Caller,
    pub(crate) steps: Vec<Step>,
    /// Whether the body was a batch: the replies are answered as an array.
    pub(crate) batch: bool,
    /// The MCP session whose response streams may be resumed after a
    /// dropped connection, and whether they open with a priming event.
    pub(crate) resumable: Option<(String, bool)>,
}

/// One thing to do.
#[derive(Debug)]
pub(crate) enum Step {
    /// A reply decided already.
    Reply(Reply),
    /// Run a tool's handler; [`call_reply`](super::call_reply) spells its
    /// outcome.
    Call(CallPlan),
    /// `notifications/cancelled`: flag the call answering `key`.
    Cancel { key: CallKey, reason: String },
    /// A client's answer to a request the host sent it.
    Deliver {
        id: Value,
        outcome: Result<Value, Value>,
    },
}

/// An MCP session id and a request id within it: which call a
/// `notifications/cancelled` names.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct CallKey {
    pub(crate) mcp_session: String,
    pub(crate) request_id: Value,
}

/// A tool call that passed every check the protocol makes before a handler
/// runs: the tool is listed, the arguments fit its schema, the client has
/// what it requires.
#[derive(Debug)]
pub(crate) struct CallPlan {
    pub(crate) request_id: Value,
    pub(crate) tool: Tool,
    pub(crate) arguments: Value,
    pub(crate) progress_token: Option<Value>,
    /// For `notifications/cancelled` (stateful revisions).
    pub(crate) key: Option<CallKey>,
    /// 2026-07-28: what the retry of a multi round-trip call carries.
    pub(crate) rounds: Option<Rounds>,
}

/// The answers a 2026-07-28 retry brings: the signed `requestState` of the
/// previous round (opened by the runtime, which holds the key) and this
/// round's `inputResponses`.
#[derive(Debug, Default)]
pub(crate) struct Rounds {
    pub(crate) state: Option<String>,
    pub(crate) responses: Map<String, Value>,
}

/// How one step went.
#[derive(Debug)]
pub(crate) enum StepResult {
    /// A JSON-RPC response to send.
    Reply(Reply),
    /// A JSON-RPC error for request `id`, found by the runtime (a
    /// `requestState` it could not open).
    Error { id: Value, error: RpcError },
    /// Done, and nothing to answer (a cancellation, a delivered answer).
    Done,
    /// The client cancelled the call: it gets no response.
    Cancelled,
    /// The session was revoked while the request was handled.
    Revoked,
    /// Every call slot is taken and the line of waiting calls is full.
    QueueFull {
        id: Value,
        running: usize,
        waiting: usize,
    },
    /// No handler awaits an answer with this id from this MCP session.
    Undelivered(Value),
}

/// The response to a POST whose work is done.
pub(crate) fn finish(server: &Server, work: &Work, results: Vec<StepResult>) -> HttpResponse {
    let stateless = work.caller.revision.is_stateless();
    let mut replies = Vec::new();
    for result in results {
        match result {
            StepResult::Reply(reply) => replies.push(reply),
            StepResult::Error { id, error } => {
                if stateless {
                    return server.refuse(status_of(&error), Some(&id), &error);
                }
                replies.push(failure(Some(&id), &error).into());
            }
            StepResult::Done => {}
            StepResult::Cancelled if work.batch => {}
            StepResult::Cancelled => return HttpResponse::end_of_stream(),
            StepResult::Revoked => return server.unauthorized(AuthRefusal::Unknown),
            StepResult::QueueFull {
                id,
                running,
                waiting,
            } => return queue_full(server, (!work.batch).then_some(&id), running, waiting),
            StepResult::Undelivered(_) if work.batch => {}
            StepResult::Undelivered(id) => {
                let error = RpcError::new(
                    INVALID_REQUEST,
                    format!("no request of this server awaits a response with id {id} in this session; it was answered, cancelled or never sent"),
                );
                return server.refuse(400, None, &error);
            }
        }
    }
    match (replies.len(), work.batch) {
        (0, _) => HttpResponse::empty(202),
        (_, true) => HttpResponse::json_text(200, Reply::batch_text(&replies)),
        (_, false) => HttpResponse::json_text(200, replies.swap_remove(0).into_text()),
    }
}

/// The answer when every call slot is taken and the line is full.
fn queue_full(server: &Server, id: Option<&Value>, running: usize, waiting: usize) -> HttpResponse {
    let mut error = RpcError::new(
        crate::model::jsonrpc::SERVER_ERROR,
        format!("Server busy: {running} tool calls are running and {waiting} are waiting, the most this host queues; the application can raise HostConfig::max_queued_calls or max_concurrent_calls"),
    );
    error.data =
        Some(serde_json::json!({"retryable": true, "running": running, "waiting": waiting}));
    let mut response = server.refuse(503, id, &error);
    response.headers.push(("Retry-After", "1".into()));
    response
}

/// The HTTP status a stateless-era JSON-RPC error travels with.
pub(super) fn status_of(error: &RpcError) -> u16 {
    match error.code {
        METHOD_NOT_FOUND => 404,
        INTERNAL_ERROR => 500,
        _ => 400,
    }
}
