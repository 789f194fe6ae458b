//! Where each message of a stdio MCP server goes. One reader thread hears
//! everything the server writes; the requests waiting for it are many.
//!
//! - A response goes to the request of its id, and ends it.
//! - `notifications/progress` goes to the request whose id is its token
//!   (each call uses its own id as its progress token).
//! - A request of the server (`elicitation/create`, `sampling/createMessage`,
//!   `roots/list`) and a `notifications/message` go to the tool call in
//!   flight — when exactly one is. Over stdio nothing on the wire says which
//!   call a question or a log message belongs to, and a guess could hand one
//!   agent's question, or log, to another agent's call; so with no call or
//!   several in flight a question is refused with a JSON-RPC error and a
//!   log message goes to [`StdioServer::on_log`](super::StdioServer::on_log)
//!   (dropped without one). `ping` is answered here, at once.
//! - `notifications/cancelled` naming a question handed to a call
//!   withdraws it ([`ServerRequest::withdrawn`]): the call's handler may
//!   stop waiting, and its answer is not sent.
//! - `notifications/tools/list_changed` calls the client's callback.
//! - A line too long to read ([`Incoming::Oversize`]) is known by its
//!   two ends (`oversized_line.rs`): when they name the id of a waiting request,
//!   that request fails ([`Delivery::TooLarge`]); when they show a request
//!   or notification of the server, or an id that is none of ours, no
//!   request does, and a warning goes to
//!   [`StdioServer::on_log`](super::StdioServer::on_log) (an
//!   `Event::ServerLog` in a gateway); when they say nothing, every waiting request fails —
//!   one of them waits for the line, and leaving it to its timeout is
//!   worse than failing the others with it.
//! - The end of the server's output, or the exit of its process (which a
//!   launcher's orphaned child may outlive, holding the output open), fails
//!   every waiting request.

use std::collections::HashMap;
use std::sync::mpsc::Sender;
use std::sync::Mutex;

use serde_json::{json, Map, Value};

use crate::child::{Incoming, Input};
use crate::client::answer::{cancelled_request, response_body, Refusal, ServerRequest, Withdrawal};
use crate::client::call::{LogMessage, Progress};
use crate::model::jsonrpc::{Invalid, Message, RpcError, INTERNAL_ERROR, METHOD_NOT_FOUND};
use crate::model::method::Method;
use crate::model::LogLevel;
use crate::sync::lock;

use super::oversized_line::{read_ends, Skipped};
use super::server::LogCallback;

/// The warning [`StdioServer::on_log`](super::StdioServer::on_log) hears
/// when a request or notification of the server was skipped for its size.
fn skipped_notice(size: u64, limit: usize) -> LogMessage {
    LogMessage {
        level: LogLevel::Warning,
        logger: Some("toolhost".into()),
        data: json!(format!(
            "a message of {size} bytes from the server (a request or notification of its own) was skipped unread, past the limit of {limit} bytes (StdioServer::max_message_bytes)"
        )),
    }
}

/// What reaches a waiting request.
#[derive(Debug)]
pub(super) enum Delivery {
    /// Its response: the result, or the server's error.
    Reply(Result<Value, RpcError>),
    /// A progress report for it.
    Progress(Progress),
    /// A log message, while it is the only call in flight.
    Log(LogMessage),
    /// A question of the server, while it is the only call in flight; to
    /// be answered with `id` as sent.
    Ask { id: Value, request: ServerRequest },
    /// Its cancel handle fired.
    Cancelled,
    /// The server is gone.
    Closed(String),
    /// The server wrote a message past the limit, which may have been the
    /// answer (see the module docs).
    TooLarge { size: u64, limit: usize },
}

/// One request waiting for its response.
struct Waiting {
    deliver: Sender<Delivery>,
    /// A `tools/call`, to which questions and log messages may go.
    call: bool,
}

#[derive(Default)]
struct State {
    next_id: u64,
    waiting: HashMap<u64, Waiting>,
    /// The questions handed to a call and not yet answered, by their id as
    /// JSON text: the call's id, and the flag a withdrawal raises.
    questions: HashMap<String, (u64, Withdrawal)>,
    /// Why the server is gone, once it is.
    closed: Option<String>,
}

/// Where the router writes to the server: its stdin (`Input`), or in the
/// unit tests below a record.
pub(super) trait Output: Send {
    /// Queues one serialized message (without its newline).
    fn send(&mut self, line: Vec<u8>) -> Result<(), String>;
    /// Closes the server's input.
    fn close(&mut self);
}

impl Output for Input {
    fn send(&mut self, line: Vec<u8>) -> Result<(), String> {
        self.send_bytes(line)
    }

    fn close(&mut self) {
        Input::close(self);
    }
}

/// The shared side of a stdio client: the server's input and the requests
/// waiting on its output.
pub(super) struct Router {
    input: Mutex<Box<dyn Output>>,
    state: Mutex<State>,
    on_tools_changed: Option<super::Callback>,
    /// Where a log message that belongs to no one call goes.
    on_log: Option<LogCallback>,
}

impl Router {
    pub(super) fn new(
        input: Box<dyn Output>,
        on_tools_changed: Option<super::Callback>,
        on_log: Option<LogCallback>,
    ) -> Router {
        Router {
            input: Mutex::new(input),
            state: Mutex::new(State::default()),
            on_tools_changed,
            on_log,
        }
    }

    /// Takes a fresh id for a request whose deliveries go to `deliver`;
    /// `Err` with the reason when the server is gone.
    pub(super) fn register(&self, deliver: Sender<Delivery>, call: bool) -> Result<u64, String> {
        let mut state = lock(&self.state);
        if let Some(reason) = &state.closed {
            return Err(reason.clone());
        }
        state.next_id += 1;
        let id = state.next_id;
        state.waiting.insert(id, Waiting { deliver, call });
        Ok(id)
    }

    /// Stops delivering to request `id` (answered, cancelled or given up),
    /// and forgets the questions it was handed.
    pub(super) fn unregister(&self, id: u64) {
        let mut state = lock(&self.state);
        state.waiting.remove(&id);
        state.questions.retain(|_, (call, _)| *call != id);
    }

    /// Forgets question `asked` once its call's handler has returned.
    pub(super) fn question_done(&self, asked: &Value) {
        lock(&self.state).questions.remove(&asked.to_string());
    }

    /// Queues one serialized message for the server.
    pub(super) fn send(&self, line: Vec<u8>) -> Result<(), String> {
        lock(&self.input).send(line)
    }

    /// Closes the server's input: MCP's stdio goodbye.
    pub(super) fn close_input(&self) {
        lock(&self.input).close();
    }

    /// Why the server is gone, once it is.
    pub(super) fn closed(&self) -> Option<String> {
        lock(&self.state).closed.clone()
    }

    /// Takes one item of the reader; `false` once the server is gone.
    pub(super) fn receive(&self, item: Incoming) -> bool {
        match item {
            Incoming::Message(message) => self.route(message),
            Incoming::Oversize {
                size,
                limit,
                head,
                tail,
            } => {
                let ends = read_ends(&head, &tail);
                if matches!(ends, Skipped::NotOurs) {
                    // No request hears of it: the client's log is the one
                    // place left to say that something was skipped.
                    if let Some(callback) = &self.on_log {
                        callback(&skipped_notice(size, limit));
                    }
                }
                let state = lock(&self.state);
                let failed: Vec<&Waiting> = match ends {
                    Skipped::Answer(id) => state.waiting.get(&id).into_iter().collect(),
                    Skipped::NotOurs => Vec::new(),
                    Skipped::Unknown => state.waiting.values().collect(),
                };
                for waiting in failed {
                    let _ = waiting.deliver.send(Delivery::TooLarge { size, limit });
                }
            }
            Incoming::Gone(reason) => {
                self.close(reason);
                // Whatever it started may still read: say goodbye.
                self.close_input();
                return false;
            }
        }
        true
    }

    /// Fails every waiting request, and every later one, with `reason`
    /// (which carries the exit status and the last lines of stderr). The
    /// first reason stays.
    pub(super) fn close(&self, reason: String) {
        let mut state = lock(&self.state);
        if state.closed.is_some() {
            return;
        }
        state.closed = Some(reason.clone());
        for (_, waiting) in state.waiting.drain() {
            let _ = waiting.deliver.send(Delivery::Closed(reason.clone()));
        }
    }

    fn route(&self, message: Value) {
        let params = |params: Option<Value>| match params {
            None | Some(Value::Null) => Value::Object(Map::new()),
            Some(params) => params,
        };
        match Message::of(message) {
            Message::Request {
                id,
                method,
                params: asked,
                ..
            } => self.ask(id, method, params(asked)),
            Message::Notification {
                method,
                params: told,
            } => self.notified(&method, params(told)),
            Message::Result { id, result } => self.respond(&id, Ok(result)),
            Message::Error {
                id: Some(id),
                error,
            } => {
                let fault = RpcError::read(&error).unwrap_or_else(|| {
                    RpcError::new(
                        INTERNAL_ERROR,
                        format!("the server sent an error without a code and a message: {error}"),
                    )
                });
                self.respond(&id, Err(fault));
            }
            // Not about one request: nothing to deliver.
            Message::Error { id: None, .. } | Message::Invalid(Invalid { id: None, .. }) => {}
            Message::Invalid(Invalid {
                id: Some(id),
                error,
            }) => {
                let fault = RpcError::new(
                    INTERNAL_ERROR,
                    format!("the server's answer is not JSON-RPC: {}", error.message),
                );
                self.respond(&id, Err(fault));
            }
        }
    }

    /// A response: to the request of its id. One with no id of ours (an
    /// id long given up) has no one to go to.
    fn respond(&self, id: &Value, reply: Result<Value, RpcError>) {
        let Some(id) = id.as_u64() else {
            return;
        };
        let Some(waiting) = lock(&self.state).waiting.remove(&id) else {
            return;
        };
        let _ = waiting.deliver.send(Delivery::Reply(reply));
    }

    fn notified(&self, method: &str, params: Value) {
        match Method::parse(method) {
            Some(Method::Progress) => {
                let Some(token) = params.get("progressToken") else {
                    return;
                };
                let state = lock(&self.state);
                let waiting = token.as_u64().and_then(|id| state.waiting.get(&id));
                if let (Some(waiting), Some(progress)) =
                    (waiting, Progress::for_token(&params, token))
                {
                    let _ = waiting.deliver.send(Delivery::Progress(progress));
                }
            }
            Some(Method::LogMessage) => {
                if let Some(message) = LogMessage::from_params(&params) {
                    match (self.only_call(), &self.on_log) {
                        (Some((_, call)), _) => {
                            let _ = call.send(Delivery::Log(message));
                        }
                        (None, Some(callback)) => callback(&message),
                        (None, None) => {}
                    }
                }
            }
            Some(Method::Cancelled) => {
                let Some((asked, reason)) = cancelled_request(&params) else {
                    return;
                };
                let question = lock(&self.state).questions.remove(&asked.to_string());
                if let Some((_, withdrawal)) = question {
                    withdrawal.withdraw(reason);
                }
            }
            Some(Method::ToolsListChanged) => {
                if let Some(callback) = &self.on_tools_changed {
                    callback();
                }
            }
            // Resource and prompt changes, …: nothing waits for them here.
            _ => {}
        }
    }

    /// A request of the server: `ping` answered, a question relayed to the
    /// only call in flight, anything else refused.
    fn ask(&self, id: Value, method: String, params: Value) {
        let refusal = match Method::parse(&method) {
            Some(Method::Ping) => {
                let _ = self.send(response_body(&id, Ok(json!({}))));
                return;
            }
            Some(question) if question.is_question() => {
                match self.only_call() {
                    Some((call_id, call)) => {
                        let request = ServerRequest::new(method, params);
                        let withdrawal = request.withdrawal().clone();
                        lock(&self.state)
                            .questions
                            .insert(id.to_string(), (call_id, withdrawal));
                        if call.send(Delivery::Ask { id: id.clone(), request }).is_ok() {
                            return;
                        }
                        lock(&self.state).questions.remove(&id.to_string());
                        Refusal::new("the call it was meant for has ended")
                    }
                    None => Refusal::new(format!(
                        "{method} can be relayed only while exactly one tool call is in flight, so that it reaches the agent whose call asked; {} are",
                        lock(&self.state).waiting.values().filter(|w| w.call).count()
                    )),
                }
            }
            _ => Refusal {
                code: METHOD_NOT_FOUND,
                message: format!("this client does not handle {method}"),
            },
        };
        let _ = self.send(response_body(&id, Err(refusal)));
    }

    /// The id of the only tool call in flight and where it takes
    /// deliveries, if exactly one is in flight.
    fn only_call(&self) -> Option<(u64, Sender<Delivery>)> {
        let state = lock(&self.state);
        let mut calls = state.waiting.iter().filter(|(_, w)| w.call);
        match (calls.next(), calls.next()) {
            (Some((id, only)), None) => Some((*id, only.deliver.clone())),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc::{self, Receiver};
    use std::sync::Arc;

    use super::*;

    /// What the router wrote to the server, shared with the test.
    #[derive(Clone, Default)]
    struct Record(Arc<Mutex<Vec<Value>>>);

    impl Output for Record {
        fn send(&mut self, line: Vec<u8>) -> Result<(), String> {
            lock(&self.0).push(serde_json::from_slice(&line).unwrap());
            Ok(())
        }
        fn close(&mut self) {}
    }

    fn router() -> (Router, Record) {
        let record = Record::default();
        let router = Router::new(Box::new(record.clone()), None, None);
        (router, record)
    }

    fn waiting(router: &Router, call: bool) -> (u64, Receiver<Delivery>) {
        let (deliver, deliveries) = mpsc::channel();
        (router.register(deliver, call).unwrap(), deliveries)
    }

    #[test]
    fn answers_go_by_id_and_progress_by_token_to_their_own_request_only() {
        let (router, _) = router();
        let (first, to_first) = waiting(&router, true);
        let (second, to_second) = waiting(&router, false);
        router.receive(Incoming::Message(
            json!({"jsonrpc": "2.0", "method": "notifications/progress",
            "params": {"progressToken": first, "progress": 1}}),
        ));
        router.receive(Incoming::Message(
            json!({"jsonrpc": "2.0", "id": second, "error": {"code": METHOD_NOT_FOUND, "message": "no"}}),
        ));
        router.receive(Incoming::Message(
            json!({"jsonrpc": "2.0", "id": 99, "result": {}}),
        ));
        router.receive(Incoming::Message(
            json!({"jsonrpc": "2.0", "id": first, "result": {"ok": true}}),
        ));
        assert!(matches!(to_first.try_recv(), Ok(Delivery::Progress(p)) if p.progress == 1.0));
        assert!(
            matches!(to_first.try_recv(), Ok(Delivery::Reply(Ok(r))) if r == json!({"ok": true}))
        );
        assert!(
            matches!(to_second.try_recv(), Ok(Delivery::Reply(Err(e))) if e.code == METHOD_NOT_FOUND)
        );
        assert!(to_first.try_recv().is_err() && to_second.try_recv().is_err());
        // An answer ends its request: a second one goes nowhere.
        router.receive(Incoming::Message(
            json!({"jsonrpc": "2.0", "id": first, "result": {}}),
        ));
        assert!(to_first.try_recv().is_err());
    }

    #[test]
    fn questions_and_logs_reach_the_only_call_in_flight_and_no_one_when_there_are_two() {
        let (router, written) = router();
        let question =
            json!({"jsonrpc": "2.0", "id": "q", "method": "elicitation/create", "params": {}});
        let log = json!({"jsonrpc": "2.0", "method": "notifications/message",
            "params": {"level": "info", "data": "x"}});
        // A request that is not a call (a listing) takes neither.
        let (_, listing) = waiting(&router, false);
        let (_, to_one) = waiting(&router, true);
        router.receive(Incoming::Message(question.clone()));
        router.receive(Incoming::Message(log.clone()));
        assert!(matches!(to_one.try_recv(), Ok(Delivery::Ask { id, .. }) if id == "q"));
        assert!(matches!(to_one.try_recv(), Ok(Delivery::Log(m)) if m.data == "x"));
        assert!(listing.try_recv().is_err());
        assert!(lock(&written.0).is_empty(), "nothing refused");

        let (_, to_two) = waiting(&router, true);
        router.receive(Incoming::Message(question));
        router.receive(Incoming::Message(log));
        assert!(to_one.try_recv().is_err() && to_two.try_recv().is_err());
        let refused = lock(&written.0).clone();
        assert_eq!(refused.len(), 1);
        assert_eq!(refused[0]["id"], "q");
        assert!(refused[0]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("2 are"));
    }

    #[test]
    fn a_cancellation_withdraws_the_question_it_names_and_no_other() {
        let (router, written) = router();
        let (call, to_call) = waiting(&router, true);
        let ask = |id: &str| json!({"jsonrpc": "2.0", "id": id, "method": "roots/list"});
        let cancel = |id: Value| {
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": id, "reason": "too late"}})
        };
        router.receive(Incoming::Message(ask("q1")));
        router.receive(Incoming::Message(ask("q2")));
        let mut questions = Vec::new();
        while let Ok(Delivery::Ask { request, .. }) = to_call.try_recv() {
            questions.push(request);
        }
        assert_eq!(questions.len(), 2);
        // Not a question (the call's own id), an unknown one, and a
        // number where the question's id is a string: none is withdrawn.
        router.receive(Incoming::Message(cancel(json!(call))));
        router.receive(Incoming::Message(cancel(json!("q9"))));
        router.receive(Incoming::Message(cancel(json!(1))));
        assert!(questions.iter().all(|q| q.withdrawn().is_none()));
        router.receive(Incoming::Message(cancel(json!("q1"))));
        assert_eq!(questions[0].withdrawn().as_deref(), Some("too late"));
        assert_eq!(questions[1].withdrawn(), None);
        // An answered question is forgotten: a late cancellation of it
        // changes nothing.
        router.question_done(&json!("q2"));
        router.receive(Incoming::Message(cancel(json!("q2"))));
        assert_eq!(questions[1].withdrawn(), None);
        assert!(
            lock(&written.0).is_empty(),
            "a cancellation is not answered"
        );
        // The end of a call forgets its questions.
        router.receive(Incoming::Message(ask("q3")));
        assert!(matches!(to_call.try_recv(), Ok(Delivery::Ask { .. })));
        router.unregister(call);
        assert!(lock(&router.state).questions.is_empty());
    }

    #[test]
    fn ping_is_answered_an_unknown_request_refused_and_the_end_fails_every_request() {
        let (router, written) = router();
        let (_, to_call) = waiting(&router, true);
        router.receive(Incoming::Message(
            json!({"jsonrpc": "2.0", "id": 7, "method": "ping"}),
        ));
        router.receive(Incoming::Message(
            json!({"jsonrpc": "2.0", "id": 8, "method": "tasks/get"}),
        ));
        assert_eq!(
            lock(&written.0).clone(),
            [
                json!({"jsonrpc": "2.0", "id": 7, "result": {}}),
                json!({"jsonrpc": "2.0", "id": 8, "error": {"code": METHOD_NOT_FOUND,
                    "message": "this client does not handle tasks/get"}}),
            ]
        );
        assert!(to_call.try_recv().is_err(), "neither reached the call");

        let reason = "the MCP server's process 9 exited (exit status: 3); the last line it wrote to stderr: fatal: no config";
        assert!(!router.receive(Incoming::Gone(reason.into())));
        match to_call.try_recv() {
            Ok(Delivery::Closed(got)) => assert_eq!(got, reason),
            other => panic!("{other:?}"),
        }
        let (later, _) = mpsc::channel();
        assert!(router.register(later, true).is_err());
        // The first reason stays.
        router.close("its output ended".into());
        assert_eq!(router.closed().unwrap(), reason);
    }

    #[test]
    fn a_line_too_long_to_read_fails_the_request_it_names_or_else_every_one_and_later_ones_go_on() {
        let (router, _) = router();
        let too_large = |head: &str, tail: &str| Incoming::Oversize {
            size: 100,
            limit: 10,
            head: head.into(),
            tail: tail.into(),
        };
        let failed = |to: &Receiver<Delivery>| {
            matches!(
                to.try_recv(),
                Ok(Delivery::TooLarge {
                    size: 100,
                    limit: 10
                })
            )
        };
        let (first, to_first) = waiting(&router, true);
        let (_, to_second) = waiting(&router, false);
        // The answer names its request: that one alone fails.
        let head = format!(r#"{{"jsonrpc":"2.0","id":{first},"result":{{"x":"#);
        assert!(
            router.receive(too_large(&head, "xx\"}}")),
            "the server runs on"
        );
        assert!(failed(&to_first));
        assert!(to_second.try_recv().is_err(), "the other goes on");
        // A notification of the server is no one's answer.
        let note = r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"#;
        assert!(router.receive(too_large(note, "}}")));
        assert!(to_second.try_recv().is_err());
        // Ends that say nothing fail every request waiting.
        let (_, to_third) = waiting(&router, true);
        assert!(router.receive(too_large("xxxx", "xxxx")));
        assert!(failed(&to_second) && failed(&to_third));
        // Not the end of the server: a new request is taken.
        let (later, _) = mpsc::channel();
        assert!(router.register(later, true).is_ok());
        assert!(router.closed().is_none());
    }
}
