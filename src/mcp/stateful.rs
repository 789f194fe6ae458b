//! The stateful revisions (2024-11-05 to 2025-11-25): `initialize` opens an
//! MCP session, and every later message names it with `Mcp-Session-Id`;
//! 2025-03-26 also takes JSON-RPC batches.

use serde_json::Value;

use super::lifecycle::{self, Caller};
use super::methods::{self, Op};
use super::plan::{CallKey, Plan, Step, Work};
use super::{find_session, tools, BearerState, Server};
use crate::model::cancelled;
use crate::model::http::{Headers, HttpResponse};
use crate::model::jsonrpc::{classify, failure, success, Message, RpcError, INVALID_REQUEST};
use crate::model::meta::Meta;
use crate::model::method::Method;
use crate::model::LogLevel;

/// Plans one JSON-RPC message, as classified.
pub(super) fn one(
    server: &Server,
    session: &dyn BearerState,
    headers: &Headers,
    message: Message,
) -> Plan {
    if let Message::Invalid(invalid) = &message {
        return Plan::Respond(server.refuse(400, invalid.id.as_ref(), &invalid.error));
    }
    if let Message::Request {
        id, method, params, ..
    } = &message
    {
        if method == Method::Initialize.name() {
            return Plan::Respond(initialize(server, session, id, params.as_ref()));
        }
    }
    let request_id = match &message {
        Message::Request { id, .. } => Some(id),
        _ => None,
    };
    let caller = match find_session(server, session, headers, request_id) {
        Ok(caller) => caller,
        Err(refusal) => return Plan::Respond(refusal),
    };
    let turn = Turn {
        server,
        session,
        caller,
    };
    let step = turn.step(message);
    Plan::Work(turn.work(step.into_iter().collect(), false))
}

/// Plans a batch (2025-03-26 only).
pub(super) fn batch(
    server: &Server,
    session: &dyn BearerState,
    headers: &Headers,
    items: Vec<Value>,
) -> Plan {
    if items.is_empty() {
        let error = RpcError::new(INVALID_REQUEST, "an empty JSON-RPC batch is not a request");
        return Plan::Respond(server.refuse(400, None, &error));
    }
    let caller = match find_session(server, session, headers, None) {
        Ok(caller) => caller,
        Err(refusal) => return Plan::Respond(refusal),
    };
    if !caller.revision.allows_batches() {
        let error = RpcError::new(
            INVALID_REQUEST,
            format!(
                "JSON-RPC batches belong to revision 2025-03-26 only; this MCP session speaks {}: send one message per request",
                caller.revision
            ),
        );
        return Plan::Respond(server.refuse(400, None, &error));
    }
    let turn = Turn {
        server,
        session,
        caller,
    };
    let mut steps = Vec::with_capacity(items.len());
    for item in items {
        match classify(item) {
            Message::Request { id, method, .. } if method == Method::Initialize.name() => {
                let error =
                    RpcError::new(INVALID_REQUEST, "initialize must not be part of a batch");
                steps.push(Step::Reply(failure(Some(&id), &error).into()));
            }
            message => steps.extend(turn.step(message)),
        }
    }
    Plan::Work(turn.work(steps, true))
}

fn initialize(
    server: &Server,
    session: &dyn BearerState,
    id: &Value,
    params: Option<&Value>,
) -> HttpResponse {
    let caller = match lifecycle::read_initialize(params) {
        Ok(caller) => caller,
        Err(error) => return HttpResponse::json(200, &failure(Some(id), &error)),
    };
    let result = lifecycle::initialize_result(server, caller.revision);
    let session_id = session.open(caller);
    let mut response = HttpResponse::json(200, &success(id, result));
    response.headers.push(("Mcp-Session-Id", session_id));
    response
}

/// One request's messages, inside a known MCP session.
struct Turn<'a> {
    server: &'a Server,
    session: &'a dyn BearerState,
    caller: Caller,
}

impl Turn<'_> {
    /// The work to carry out; the responses of an MCP session's calls may
    /// be resumed where the revision provides for it.
    fn work(self, steps: Vec<Step>, batch: bool) -> Work {
        let revision = self.caller.revision;
        let resumable = self
            .caller
            .session_id
            .clone()
            .filter(|_| revision.resumes_streams())
            .map(|id| (id, revision.primes_streams()));
        Work {
            caller: self.caller,
            steps,
            batch,
            resumable,
        }
    }

    /// What one message asks for; `None` for a notification that needs
    /// nothing.
    fn step(&self, message: Message) -> Option<Step> {
        match message {
            Message::Request {
                id,
                method,
                params,
                meta,
            } => Some(self.request(id, &method, params, meta)),
            Message::Notification { method, params } => self.notification(&method, params.as_ref()),
            Message::Result { id, result } => Some(Step::Deliver {
                id,
                outcome: Ok(result),
            }),
            Message::Error {
                id: Some(id),
                error,
            } => Some(Step::Deliver {
                id,
                outcome: Err(error),
            }),
            // `classify_envelope` lets through only errors with an id.
            Message::Error { id: None, .. } => None,
            Message::Invalid(invalid) => Some(Step::Reply(
                failure(invalid.id.as_ref(), &invalid.error).into(),
            )),
        }
    }

    /// Answers one request, or plans its call.
    fn request(&self, id: Value, method: &str, params: Option<Value>, meta: Meta) -> Step {
        let op = match methods::find(method, false) {
            Ok(op) => op,
            Err(error) => return Step::Reply(failure(Some(&id), &error).into()),
        };
        let result = match op {
            Op::Ping => Ok(Value::Object(serde_json::Map::new())),
            Op::ListTools => {
                return Step::Reply(
                    match tools::list(
                        self.server,
                        self.session,
                        self.caller.revision,
                        params.as_ref(),
                    ) {
                        Ok(list) => list.reply(&id),
                        Err(error) => failure(Some(&id), &error).into(),
                    },
                )
            }
            Op::CallTool => {
                return match tools::plan(
                    self.server,
                    self.session,
                    &self.caller,
                    &id,
                    params,
                    meta,
                    None,
                ) {
                    Ok(plan) => Step::Call(plan),
                    Err(Ok(result)) => Step::Reply(success(&id, result).into()),
                    Err(Err(error)) => Step::Reply(failure(Some(&id), &error).into()),
                }
            }
            Op::SetLogLevel => self.set_log_level(params.as_ref()),
            Op::ListPrompts | Op::ListResources | Op::ListResourceTemplates | Op::ReadResource => {
                methods::nothing_to_offer(op).unwrap_or_else(|| Err(methods::not_offered(method)))
            }
            // `one` answers `initialize` and a batch refuses it, so it
            // never reaches an open MCP session; the stateless-only
            // methods never pass `methods::find` here.
            Op::Initialize | Op::Discover | Op::Listen => Err(methods::not_offered(method)),
        };
        Step::Reply(
            match result {
                Ok(result) => success(&id, result),
                Err(error) => failure(Some(&id), &error),
            }
            .into(),
        )
    }

    /// `logging/setLevel`: from now on, log messages at `level` or above.
    fn set_log_level(&self, params: Option<&Value>) -> Result<Value, RpcError> {
        let level = params
            .and_then(|p| p.get("level"))
            .and_then(Value::as_str)
            .and_then(LogLevel::parse)
            .ok_or_else(|| {
                RpcError::invalid_params(format!(
                    "logging/setLevel needs params.level, one of {}",
                    LogLevel::names()
                ))
            })?;
        if let Some(id) = &self.caller.session_id {
            self.session.set_log_level(id, level);
        }
        Ok(Value::Object(serde_json::Map::new()))
    }

    /// Acts on a notification; unknown ones are ignored, as JSON-RPC asks.
    fn notification(&self, method: &str, params: Option<&Value>) -> Option<Step> {
        if method != Method::Cancelled.name() {
            return None;
        }
        let mcp_session = self.caller.session_id.clone()?;
        let (request_id, reason) = cancelled::read(params)?;
        let request_id = request_id.clone();
        let reason = reason.unwrap_or("cancelled by the client");
        Some(Step::Cancel {
            key: CallKey {
                mcp_session,
                request_id,
            },
            reason: reason.to_owned(),
        })
    }
}
