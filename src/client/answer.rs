//! Answering what the server asks during a call: an elicitation (the
//! user), a sampling request (the model) or `roots/list`, decided by the
//! caller's [`CallOptions::on_request`](super::CallOptions::on_request)
//! handler.
//!
//! The eras ask differently, and the handler does not need to know:
//!
//! - **Stateful revisions**: the question is a JSON-RPC request on the
//!   call's event stream; the answer is a JSON-RPC response POSTed back in
//!   the same MCP session ([`response_body`]; `wire.rs` sends it on a
//!   connection of its own). Every question gets an answer — without a
//!   handler a `METHOD_NOT_FOUND` error — because a server left without one would
//!   hold the call until its deadline.
//! - **2026-07-28**: the call's result is `input_required`, with the
//!   questions keyed in `inputRequests` and a signed `requestState`; the
//!   client calls the tool again with `inputResponses` and that state
//!   ([`InputRound::retry`]). That revision has no way to carry a refusal
//!   or a missing answer, so those end the call with
//!   [`ClientError::Unanswered`] instead.
//!
//! This file holds the shapes and decisions, with no I/O.

use std::sync::{Arc, Mutex};

use serde_json::{Map, Value};

use super::error::ClientError;
use crate::model::cancelled;
use crate::model::jsonrpc::{self, RpcError, METHOD_NOT_FOUND};
use crate::sync::lock;

/// Rounds of `input_required` answered for one call before giving up: a
/// tool that still asks after that is most likely asking in a loop.
pub(crate) const MAX_INPUT_ROUNDS: u32 = 8;

/// A question the server asked the client during a call, as the
/// [`CallOptions::on_request`](super::CallOptions::on_request) handler sees
/// it.
///
/// ```
/// use serde_json::json;
/// use toolhost::client::{Refusal, ServerRequest};
///
/// fn answer(request: &ServerRequest) -> Result<serde_json::Value, Refusal> {
///     match request.method.as_str() {
///         "elicitation/create" => Ok(json!({"action": "accept", "content": {"name": "Ada"}})),
///         "roots/list" => Ok(json!({"roots": [{"uri": "file:///work", "name": "work"}]})),
///         other => Err(Refusal::new(format!("this rig does not answer {other}"))),
///     }
/// }
/// # let _ = answer;
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ServerRequest {
    /// The JSON-RPC method: `elicitation/create`, `sampling/createMessage`
    /// or `roots/list` (a server may send others).
    pub method: String,
    /// The request's params as sent (`{}` when it sent none): for an
    /// elicitation `message` and `requestedSchema`, for sampling `messages`
    /// and `maxTokens`, ….
    pub params: Value,
    withdrawal: Withdrawal,
}

impl ServerRequest {
    pub(crate) fn new(method: String, params: Value) -> ServerRequest {
        ServerRequest {
            method,
            params,
            withdrawal: Withdrawal::default(),
        }
    }

    /// `Some(reason)` once the server has withdrawn the question — sent
    /// `notifications/cancelled` naming it, with its reason or none (then
    /// empty) — while the handler was still working on the answer. The
    /// answer is then no longer wanted and is not sent, so a handler that
    /// waits on someone (a user, a model, another client) may stop
    /// waiting and return at once.
    ///
    /// A stdio server's withdrawal is seen at once, since the client reads
    /// the server's output on a thread of its own. Over Streamable HTTP the
    /// call's event stream is not read while an
    /// [`on_request`](super::CallOptions::on_request) handler runs, so
    /// there this stays `None` (toolhost's own bridge answers beside the
    /// stream, and sees it).
    ///
    /// ```
    /// use std::time::Duration;
    /// use serde_json::json;
    /// use toolhost::client::{Refusal, ServerRequest};
    ///
    /// /// Waits for a person's answer from `inbox`, unless the server gives up first.
    /// fn answer(request: &ServerRequest, inbox: &std::sync::mpsc::Receiver<String>) -> Result<serde_json::Value, Refusal> {
    ///     loop {
    ///         if let Some(reason) = request.withdrawn() {
    ///             return Err(Refusal::new(format!("withdrawn: {reason}")));
    ///         }
    ///         if let Ok(name) = inbox.recv_timeout(Duration::from_millis(50)) {
    ///             return Ok(json!({"action": "accept", "content": {"name": name}}));
    ///         }
    ///     }
    /// }
    /// # let _ = answer;
    /// ```
    pub fn withdrawn(&self) -> Option<String> {
        self.withdrawal.reason()
    }

    /// The flag the transport raises when the server withdraws this
    /// question.
    pub(crate) fn withdrawal(&self) -> &Withdrawal {
        &self.withdrawal
    }
}

/// Two questions are equal by what they ask; whether one was withdrawn is
/// its state, not what it is.
impl PartialEq for ServerRequest {
    fn eq(&self, other: &ServerRequest) -> bool {
        self.method == other.method && self.params == other.params
    }
}

/// Whether the server withdrew a question, and why: raised by the transport
/// that reads the server's `notifications/cancelled`, read by the handler.
#[derive(Clone, Debug, Default)]
pub(crate) struct Withdrawal(Arc<Mutex<Option<String>>>);

impl Withdrawal {
    /// Marks the question withdrawn; the first reason stays.
    pub(crate) fn withdraw(&self, reason: String) {
        lock(&self.0).get_or_insert(reason);
    }

    pub(crate) fn reason(&self) -> Option<String> {
        lock(&self.0).clone()
    }
}

/// The reason a `notifications/cancelled` gives (empty when none) and the
/// request id it names, if it names one.
pub(crate) fn cancelled_request(params: &Value) -> Option<(&Value, String)> {
    let (id, reason) = cancelled::read(Some(params))?;
    Some((id, reason.unwrap_or("").to_owned()))
}

/// A handler's "no" to a [`ServerRequest`].
///
/// In the stateful revisions it goes back as the JSON-RPC error of the
/// answer; toolhost hands it to the tool as `AskError::Refused`. 2026-07-28
/// has no way to send one: there the call ends with
/// [`ClientError::Unanswered`]. A user who *declines* an elicitation is not
/// a refusal: answer `{"action": "decline"}`, which every revision carries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// The JSON-RPC error code; [`Refusal::new`] uses `-1`, as the MCP
    /// specification's own example of a user rejecting sampling does.
    pub code: i64,
    /// Why, for the server (and through it, the model).
    pub message: String,
}

impl Refusal {
    /// A refusal with code `-1` and `message`.
    pub fn new(message: impl Into<String>) -> Refusal {
        Refusal {
            code: -1,
            message: message.into(),
        }
    }

    /// The answer to a question the call has no handler for.
    pub(crate) fn unhandled(method: &str) -> Refusal {
        Refusal {
            code: METHOD_NOT_FOUND,
            message: format!(
                "the client has no handler for {method} (toolhost::client::CallOptions::on_request)"
            ),
        }
    }
}

/// The answering function of a call.
pub(crate) type Answerer<'a> = dyn FnMut(&ServerRequest) -> Result<Value, Refusal> + 'a;

/// The answering function a call's options own.
pub(crate) type RequestHandler<'a> = Box<Answerer<'a>>;

/// An answering function that may run on a thread of its own, one per
/// question, while the call's event stream keeps being read (`wire.rs`):
/// how a handler over HTTP sees [`ServerRequest::withdrawn`].
pub(crate) type SharedHandler<'a> =
    Arc<dyn Fn(&ServerRequest) -> Result<Value, Refusal> + Send + Sync + 'a>;

/// The JSON-RPC response to the server's request `id` (stateful revisions).
pub(crate) fn response_body(id: &Value, answer: Result<Value, Refusal>) -> Vec<u8> {
    let message = match answer {
        Ok(result) => jsonrpc::success(id, result),
        Err(refusal) => jsonrpc::failure(Some(id), &RpcError::new(refusal.code, refusal.message)),
    };
    let mut out = Vec::with_capacity(128);
    // Writing a Value into a Vec cannot fail.
    let _ = serde_json::to_writer(&mut out, &message);
    out
}

/// What a `tools/call` result asks of the client.
#[derive(Debug, PartialEq)]
pub(crate) enum CallResult {
    /// The tool's result (any `resultType` but `input_required`; the tool
    /// result reader judges it).
    Complete(Value),
    /// 2026-07-28: answer these questions and call again.
    InputRequired(InputRound),
}

/// One `input_required` result: the questions, by key, and the state to
/// send back with the answers.
#[derive(Debug, PartialEq)]
pub(crate) struct InputRound {
    pub(crate) requests: Vec<(String, ServerRequest)>,
    pub(crate) state: Option<String>,
}

/// Reads a `tools/call` result: complete, or a round of questions.
pub(crate) fn read_call_result(result: Value) -> Result<CallResult, ClientError> {
    if result.get("resultType").and_then(Value::as_str) != Some("input_required") {
        return Ok(CallResult::Complete(result));
    }
    let Value::Object(mut result) = result else {
        return Ok(CallResult::Complete(result));
    };
    let requests = match result.remove("inputRequests") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Object(requests)) => requests
            .into_iter()
            .map(|(key, request)| read_input_request(&key, request).map(|read| (key, read)))
            .collect::<Result<_, _>>()?,
        Some(other) => {
            return Err(ClientError::malformed(format!(
                "inputRequests must be an object of requests by key, got {other}"
            )))
        }
    };
    let state = match result.remove("requestState") {
        None | Some(Value::Null) => None,
        Some(Value::String(state)) => Some(state),
        Some(other) => {
            return Err(ClientError::malformed(format!(
                "requestState must be a string, got {other}"
            )))
        }
    };
    if requests.is_empty() && state.is_none() {
        return Err(ClientError::malformed(
            "an input_required result carries neither inputRequests nor requestState",
        ));
    }
    Ok(CallResult::InputRequired(InputRound { requests, state }))
}

fn read_input_request(key: &str, request: Value) -> Result<ServerRequest, ClientError> {
    let Value::Object(mut request) = request else {
        return Err(ClientError::malformed(format!(
            "input request {key:?} is not an object"
        )));
    };
    let Some(Value::String(method)) = request.remove("method") else {
        return Err(ClientError::malformed(format!(
            "input request {key:?} has no method"
        )));
    };
    let params = match request.remove("params") {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(params) => params,
    };
    Ok(ServerRequest::new(method, params))
}

impl InputRound {
    /// The method of the first question, for errors about the round.
    fn first_method(&self) -> String {
        self.requests
            .first()
            .map_or_else(|| "input".to_owned(), |(_, r)| r.method.clone())
    }

    /// The error for a round the client cannot answer: `problem` says why.
    pub(crate) fn unanswered(&self, problem: impl Into<String>) -> ClientError {
        ClientError::Unanswered {
            method: self.first_method(),
            problem: problem.into(),
            cause: None,
        }
    }

    /// Asks `handler` every question and adds the answers
    /// (`inputResponses`) and the state to `params`, the params of the
    /// call as first sent: the retry is the same call, answered.
    pub(crate) fn retry(
        self,
        handler: &mut Answerer<'_>,
        params: &mut Map<String, Value>,
    ) -> Result<(), ClientError> {
        let mut responses = Map::new();
        for (key, request) in &self.requests {
            match handler(request) {
                Ok(answer) => {
                    responses.insert(key.clone(), answer);
                }
                Err(refusal) => {
                    return Err(ClientError::Unanswered {
                        method: request.method.clone(),
                        problem: format!(
                            "the handler refused it ({}: {}), and 2026-07-28 cannot carry a refusal to the server; for an elicitation, answer {{\"action\": \"decline\"}} instead",
                            refusal.code, refusal.message
                        ),
                        cause: None,
                    })
                }
            }
        }
        if !responses.is_empty() {
            params.insert("inputResponses".into(), Value::Object(responses));
        }
        if let Some(state) = self.state {
            params.insert("requestState".into(), state.into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn round(result: Value) -> InputRound {
        match read_call_result(result).unwrap() {
            CallResult::InputRequired(round) => round,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn only_an_input_required_result_is_a_round_of_questions() {
        for complete in [
            json!({"content": []}),
            json!({"content": [], "resultType": "complete"}),
            json!({"resultType": "incomplete"}),
            json!([]),
        ] {
            assert_eq!(
                read_call_result(complete.clone()).unwrap(),
                CallResult::Complete(complete)
            );
        }
        let read = round(json!({"resultType": "input_required", "requestState": "s",
            "inputRequests": {"who": {"method": "elicitation/create", "params": {"message": "?"}},
                              "where": {"method": "roots/list"}}}));
        assert_eq!(read.state.as_deref(), Some("s"));
        assert_eq!(
            read.requests,
            [
                (
                    "where".to_owned(),
                    ServerRequest::new("roots/list".into(), json!({}))
                ),
                (
                    "who".to_owned(),
                    ServerRequest::new("elicitation/create".into(), json!({"message": "?"}))
                ),
            ]
        );
        // A state alone asks for a plain retry.
        assert!(
            round(json!({"resultType": "input_required", "requestState": "s"}))
                .requests
                .is_empty()
        );
    }

    #[test]
    fn a_round_that_cannot_be_answered_is_malformed() {
        for bad in [
            json!({"resultType": "input_required"}),
            json!({"resultType": "input_required", "inputRequests": []}),
            json!({"resultType": "input_required", "inputRequests": {"k": 1}}),
            json!({"resultType": "input_required", "inputRequests": {"k": {"params": {}}}}),
            json!({"resultType": "input_required", "requestState": 7}),
        ] {
            assert!(
                matches!(
                    read_call_result(bad.clone()),
                    Err(ClientError::Malformed { .. })
                ),
                "{bad}"
            );
        }
    }

    #[test]
    fn the_retry_carries_every_answer_by_key_and_the_state() {
        let questions = round(json!({"resultType": "input_required", "requestState": "s1",
            "inputRequests": {"a": {"method": "roots/list"}, "b": {"method": "roots/list"}}}));
        let mut asked = 0;
        let mut params = Map::new();
        params.insert("name".into(), "t".into());
        questions
            .retry(
                &mut |request| {
                    asked += 1;
                    Ok(json!({"roots": [], "n": asked, "method": request.method}))
                },
                &mut params,
            )
            .unwrap();
        assert_eq!(
            Value::Object(params),
            json!({"name": "t", "requestState": "s1", "inputResponses": {
                "a": {"roots": [], "n": 1, "method": "roots/list"},
                "b": {"roots": [], "n": 2, "method": "roots/list"}}})
        );
    }

    #[test]
    fn a_refused_question_ends_the_round_with_an_error_that_says_what_to_do() {
        let questions = round(json!({"resultType": "input_required", "requestState": "s",
            "inputRequests": {"k": {"method": "elicitation/create"}}}));
        let mut params = Map::new();
        let err = questions
            .retry(&mut |_| Err(Refusal::new("not now")), &mut params)
            .unwrap_err();
        let text = err.to_string();
        assert!(
            matches!(&err, ClientError::Unanswered { method, .. } if method == "elicitation/create")
                && text.contains("not now")
                && text.contains("decline"),
            "{text}"
        );
        assert!(params.is_empty(), "nothing to retry with");
    }

    #[test]
    fn answers_and_refusals_are_json_rpc_responses_to_the_servers_id() {
        let parse = |bytes: Vec<u8>| serde_json::from_slice::<Value>(&bytes).unwrap();
        assert_eq!(
            parse(response_body(
                &json!("ask-1"),
                Ok(json!({"action": "cancel"}))
            )),
            json!({"jsonrpc": "2.0", "id": "ask-1", "result": {"action": "cancel"}})
        );
        assert_eq!(
            parse(response_body(&json!(4), Err(Refusal::new("no")))),
            json!({"jsonrpc": "2.0", "id": 4, "error": {"code": -1, "message": "no"}})
        );
        let unhandled = Refusal::unhandled("sampling/createMessage");
        assert_eq!(unhandled.code, METHOD_NOT_FOUND);
        assert!(unhandled.message.contains("sampling/createMessage"));
    }
}
