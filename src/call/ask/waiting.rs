//! Asking from a running call and waiting for the answers: on the call's
//! event stream in the stateful revisions, in rounds in 2026-07-28.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Map, Value};

use crate::call::call_link::{Answer, CallLink, Cancellation, Gone};
use crate::model::cancelled;
use crate::model::jsonrpc;
use crate::model::method::Method;
use crate::sync::lock;

use super::{AskError, InputRequest};

/// How a running call reaches its client with questions.
pub(crate) enum Asking {
    /// Stateful revisions: on the call's event stream, answers routed back
    /// by id through the call's link.
    Stream,
    /// 2026-07-28: answers come with the retried call; the missing ones are
    /// collected for the `input_required` result.
    Rounds {
        answers: Map<String, Value>,
        round: Mutex<Round>,
    },
}

/// What one run of a handler asked, in 2026-07-28.
#[derive(Default)]
pub(crate) struct Round {
    next_auto: usize,
    /// Answers the handler used, carried to the next round's state.
    pub(crate) used: Map<String, Value>,
    /// Questions with no answer yet: key, then `{method, params}`.
    pub(crate) needed: Vec<(String, Value)>,
}

static NEXT_ASK: AtomicU64 = AtomicU64::new(1);

/// A fresh id for a request to a client; unique for the process.
pub(crate) fn next_ask_id() -> String {
    format!("toolhost-ask-{}", NEXT_ASK.fetch_add(1, Ordering::SeqCst))
}

/// Why the questions of a call whose deadline passed are abandoned.
pub(crate) const DEADLINE_PASSED: &str = "the tool call's deadline passed";

/// The notification that tells the client question `id` is abandoned:
/// MCP's `notifications/cancelled`, which the sender of a request may send
/// for it while it is in flight (every stateful revision has it).
pub(crate) fn abandoned_notice(id: &str, reason: &str) -> Value {
    jsonrpc::notification(
        Method::Cancelled.name(),
        Some(cancelled::params(id, reason)),
    )
}

/// What the client is told when a question is given up because of `err`.
fn abandon_reason(err: &AskError) -> String {
    match err {
        AskError::Cancelled(reason) if reason.is_empty() => "the tool call was cancelled".into(),
        AskError::Cancelled(reason) => format!("the tool call was cancelled: {reason}"),
        AskError::TimedOut => DEADLINE_PASSED.into(),
        AskError::Withdrawn(reason) if reason.is_empty() => {
            "the question was withdrawn by the MCP server that asked it".into()
        }
        AskError::Withdrawn(reason) => {
            format!("the question was withdrawn by the MCP server that asked it: {reason}")
        }
        other => format!("the tool stopped waiting for the answer: {other}"),
    }
}

/// Says, when polled, whether a relayed question was withdrawn by whoever
/// it was asked for, and why (possibly empty).
pub(crate) type Withdrawn<'a> = &'a dyn Fn() -> Option<String>;

impl Asking {
    /// 2026-07-28: answers for the questions, from this round's responses
    /// and earlier rounds'; `InputRequired` when any is missing (all the
    /// missing ones are recorded, so that the client gets them together).
    pub(crate) fn from_rounds(
        answers: &Map<String, Value>,
        round: &Mutex<Round>,
        requests: &[InputRequest],
    ) -> Result<Vec<Value>, AskError> {
        let mut round = lock(round);
        let mut found = Vec::with_capacity(requests.len());
        let mut missing = false;
        for request in requests {
            let key = match request.explicit_key() {
                Some(key) => key.to_owned(),
                None => {
                    round.next_auto += 1;
                    format!("input-{}", round.next_auto)
                }
            };
            match answers.get(&key) {
                Some(answer) if request.check_answer(answer).is_ok() => {
                    round.used.insert(key, answer.clone());
                    found.push(answer.clone());
                }
                _ => {
                    missing = true;
                    round.needed.push((
                        key,
                        json!({"method": request.method(), "params": request.params()}),
                    ));
                }
            }
        }
        if missing {
            Err(AskError::InputRequired)
        } else {
            Ok(found)
        }
    }
}

/// How often a handler waiting for a client's answer looks at its
/// cancellation flag and deadline.
const ASK_POLL: Duration = Duration::from_millis(20);

/// Stateful revisions: sends the questions on the call's stream and waits
/// for every answer, waking for cancellation, the deadline and (for a
/// relayed question) its withdrawal. A question given up before its answer
/// — however the wait ended — is cancelled on the stream (see
/// [`CallLink::abandon`]), so the client stops asking its user or model.
pub(crate) fn on_stream(
    link: &dyn CallLink,
    cancel: &Cancellation,
    deadline: Option<Instant>,
    requests: Vec<InputRequest>,
    withdrawn: Option<Withdrawn<'_>>,
) -> Result<Vec<Value>, AskError> {
    let mut waiting = Vec::with_capacity(requests.len());
    let give_up = |waiting: &[(String, mpsc::Receiver<Answer>, InputRequest)], err: &AskError| {
        let reason = abandon_reason(err);
        for (id, _, _) in waiting {
            link.abandon(id, &reason);
        }
    };
    for request in requests {
        let id = next_ask_id();
        let answer = link.expect_answer(&id);
        let message = jsonrpc::request(id.as_str(), request.method(), request.params().clone());
        waiting.push((id.clone(), answer, request));
        let sent = if cancel.is_cancelled() {
            Err(Gone::CLOSED)
        } else {
            link.ask(&id, &message)
        };
        if let Err(Gone(reason)) = sent {
            give_up(&waiting, &AskError::Disconnected);
            cancel.cancel(reason, true);
            return Err(AskError::Disconnected);
        }
    }
    let mut answers = Vec::with_capacity(waiting.len());
    for at in 0..waiting.len() {
        let (id, answer, request) = &waiting[at];
        match await_answer(cancel, deadline, answer, request, withdrawn) {
            Ok(value) => answers.push(value),
            Err(err) => {
                // This one and the ones after it; those before were answered.
                give_up(&waiting[at..], &err);
                return Err(err);
            }
        }
        link.forget_answer(id);
    }
    Ok(answers)
}

/// Waits for one answer, waking for cancellation, the deadline and the
/// question's withdrawal.
fn await_answer(
    cancel: &Cancellation,
    deadline: Option<Instant>,
    answer: &mpsc::Receiver<Answer>,
    request: &InputRequest,
    withdrawn: Option<Withdrawn<'_>>,
) -> Result<Value, AskError> {
    loop {
        if cancel.is_cancelled() {
            return Err(AskError::Cancelled(cancel.reason().unwrap_or_default()));
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            return Err(AskError::TimedOut);
        }
        if let Some(reason) = withdrawn.and_then(|withdrawn| withdrawn()) {
            return Err(AskError::Withdrawn(reason));
        }
        match answer.recv_timeout(ASK_POLL) {
            Ok(Ok(value)) => {
                request.check_answer(&value)?;
                return Ok(value);
            }
            Ok(Err(error)) => {
                return Err(AskError::Refused {
                    code: error["code"].as_i64().unwrap_or(0),
                    message: error["message"].as_str().unwrap_or("").to_owned(),
                })
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            // The deadline gives the question up before it cancels the
            // call: that is a timeout, not a lost stream.
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err(if deadline.is_some_and(|d| Instant::now() >= d) {
                    AskError::TimedOut
                } else {
                    AskError::Disconnected
                })
            }
        }
    }
}
