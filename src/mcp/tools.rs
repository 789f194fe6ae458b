//! `tools/list` and `tools/call`: asking the surface, running the handler,
//! and spelling the result for the client's revision.
//!
//! Both ask the surface afresh. A handler runs outside every lock of the
//! host, under `catch_unwind`: a panic costs its own call and nothing else.

use std::collections::HashSet;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use serde_json::{json, Map, Value};

use super::jsonrpc::success;
use super::jsonrpc::{RpcError, INTERNAL_ERROR, MISSING_CLIENT_CAPABILITY};
use super::lifecycle::Caller;
use super::params::check_headers;
use super::state::fingerprint;
use super::stateless::complete;
use super::version::Revision;
use super::{Halt, Headers, Outlet, Service};
use crate::ask::{Asking, Round};
use crate::context::{CallContext, Talk};
use crate::event::{emit, heard, CallResult, Event};
use crate::schema::describe;
use crate::session::{CallKey, CallTicket, SessionEntry};
use crate::timer::JobId;
use crate::tool::{OutcomeState, Tool, ToolOutcome};

/// What the model reads when a handler failed; the details go to the hook.
const FAILED_TEXT: &str =
    "The tool failed with an internal error and produced no result. The application has the details.";

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a non-string panic payload".to_owned())
}

/// The surface's tools now, with any that break the rules left out (and
/// reported), or `Err` when `list_tools` panicked.
fn current_tools(service: &Service, entry: &SessionEntry) -> Result<Vec<Tool>, RpcError> {
    let listed =
        catch_unwind(AssertUnwindSafe(|| entry.surface.list_tools())).map_err(|payload| {
            service.emit(|| Event::SurfaceFault {
                message: format!("list_tools panicked: {}", panic_message(&*payload)),
            });
            RpcError::new(INTERNAL_ERROR, "the application could not list its tools")
        })?;
    let mut seen = HashSet::with_capacity(listed.len());
    let mut tools = Vec::with_capacity(listed.len());
    for tool in listed {
        if let Err(err) = tool.validate() {
            service.emit(|| Event::SurfaceFault {
                message: format!("tool left out of tools/list: {err}"),
            });
        } else if !seen.insert(tool.name().to_owned()) {
            service.emit(|| Event::SurfaceFault {
                message: format!("tool {:?} listed twice; the first is kept", tool.name()),
            });
        } else {
            tools.push(tool);
        }
    }
    Ok(tools)
}

/// `tools/list`. The host never issues cursors, so any cursor is unknown.
pub(crate) fn list(
    service: &Service,
    entry: &SessionEntry,
    revision: Revision,
    params: Option<&Value>,
) -> Result<Value, RpcError> {
    if let Some(cursor) = params.and_then(|p| p.get("cursor")) {
        if !cursor.is_null() {
            return Err(RpcError::invalid_params(
                "unknown cursor: this server returns every tool in one page and issues no cursors",
            ));
        }
    }
    let tools = current_tools(service, entry)?;
    let tools: Vec<Value> = tools.iter().map(|tool| tool.to_json(revision)).collect();
    Ok(json!({ "tools": tools }))
}

/// The arguments of a call: absent and `null` mean `{}`.
fn read_call(params: Option<&Value>) -> Result<(String, Value), RpcError> {
    let name = params
        .and_then(|p| p.get("name"))
        .and_then(Value::as_str)
        .ok_or_else(|| RpcError::invalid_params("tools/call needs params.name, a string"))?;
    let arguments = match params.and_then(|p| p.get("arguments")) {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(args @ Value::Object(_)) => args.clone(),
        Some(other) => {
            return Err(RpcError::invalid_params(format!(
                "params.arguments must be a JSON object, got {}",
                describe(other)
            )))
        }
    };
    Ok((name.to_owned(), arguments))
}

/// `tools/call`: find the tool now, admit the call, run the handler.
pub(crate) fn call(
    service: &Service,
    entry: &Arc<SessionEntry>,
    caller: &Caller,
    request_id: &Value,
    params: Option<&Value>,
    outlet: &Arc<dyn Outlet>,
    param_headers: Option<&Headers>,
) -> Result<Result<Value, RpcError>, Halt> {
    let revision = caller.revision;
    let (name, arguments) = match read_call(params) {
        Ok(call) => call,
        Err(err) => return Ok(Err(err)),
    };
    let found = catch_unwind(AssertUnwindSafe(|| entry.surface.find_tool(&name)));
    let unknown = || {
        let text = format!("Unknown tool: {name:?} is not available on this server right now. Call tools/list for the current tools.");
        Ok(Ok(json!({
            "content": [{"type": "text", "text": text}],
            "isError": true,
        })))
    };
    let tool = match found {
        // A tool that breaks the rules is left out of tools/list (see
        // `current_tools`), so a call for it is refused the same way.
        Ok(Some(tool)) => match tool.validate() {
            Ok(()) => tool,
            Err(err) => {
                service.emit(|| Event::SurfaceFault {
                    message: format!("call refused for a tool left out of tools/list: {err}"),
                });
                return unknown();
            }
        },
        Ok(None) => {
            service.emit(|| Event::UnknownTool { tool: name.clone() });
            return unknown();
        }
        Err(payload) => {
            service.emit(|| Event::SurfaceFault {
                message: format!("find_tool panicked: {}", panic_message(&*payload)),
            });
            return Ok(Err(RpcError::new(
                INTERNAL_ERROR,
                "the application could not look up its tools",
            )));
        }
    };
    if let Some(headers) = param_headers {
        if let Err(mismatch) = check_headers(tool.header_params(), &arguments, headers) {
            return Ok(Err(mismatch));
        }
    }
    if let Some(missing) = missing_capabilities(&tool, &caller.capabilities) {
        return Ok(Err(missing));
    }
    // Arguments that break the schema never reach the handler: the model
    // gets every violation as a tool error (2025-11-25 says input validation
    // failures are tool errors, so the model can correct itself).
    if let Err(violations) = tool.check_arguments(&arguments) {
        service.emit(|| Event::InvalidArguments {
            tool: tool.name().to_owned(),
            violations: violations.clone(),
        });
        return Ok(Ok(json!({
            "content": [{"type": "text", "text": violations}],
            "isError": true,
        })));
    }
    let asking = match ask_channel(service, entry, caller, &tool, &arguments, params) {
        Ok(asking) => asking,
        Err(error) => return Ok(Err(error)),
    };
    let _slot = service.slots.take()?;
    let key = caller.session_id.as_ref().map(|session| CallKey {
        mcp_session: session.clone(),
        request_id: request_id.clone(),
    });
    let ticket = entry.admit(key).ok_or(Halt::Revoked)?;
    let progress_token = params
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get("progressToken"))
        .filter(|t| t.is_string() || t.is_i64() || t.is_u64())
        .cloned();
    let talk = Talk::new(
        Arc::clone(outlet),
        progress_token,
        caller.log_level,
        (Arc::clone(&service.hub), Arc::clone(entry)),
    );
    let started = Instant::now();
    let deadline = service.call_timeout.map(|limit| started + limit);
    let ctx = CallContext {
        request_id: request_id.clone(),
        revision,
        client: caller.client.clone(),
        cancel: Arc::clone(&ticket.cancel),
        talk: Some(talk),
        deadline,
        capabilities: caller.capabilities.clone(),
        asking: Some(asking),
    };
    service.emit(|| Event::CallStarted {
        tool: tool.name().to_owned(),
    });
    let watches = watch(
        service, &tool, request_id, revision, outlet, &ticket, started,
    );
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        entry.surface.call(tool.name(), &arguments, &ctx)
    }))
    .unwrap_or_else(|payload| {
        ToolOutcome::failed(format!(
            "the handler panicked: {}",
            panic_message(&*payload)
        ))
    });
    // A result that breaks the tool's own output schema is a host bug: the
    // model must not see it, the application must.
    let outcome = match &outcome.state {
        OutcomeState::Success { structured, .. } => {
            match tool.check_structured_output(structured.as_ref()) {
                Ok(()) => outcome,
                Err(detail) => ToolOutcome::failed(detail),
            }
        }
        _ => outcome,
    };
    let duration = started.elapsed();
    for job in watches {
        service.timer.cancel(job);
    }
    let cancelled_by_client = ticket.cancel.by_client();
    drop(ticket);
    service.emit(|| Event::CallFinished {
        tool: tool.name().to_owned(),
        duration,
        outcome: match &outcome.state {
            OutcomeState::Success { .. } => CallResult::Success,
            OutcomeState::Declined { reason, .. } => CallResult::Declined {
                reason: reason.clone(),
            },
            OutcomeState::Failed { detail } => CallResult::Failed {
                detail: detail.clone(),
            },
        },
    });
    if cancelled_by_client {
        return Err(Halt::Cancelled);
    }
    if let Some(round) = ctx.into_round().filter(|round| !round.needed.is_empty()) {
        return Ok(Ok(input_required(service, entry, &tool, &arguments, round)));
    }
    Ok(Ok(render(&outcome, revision)))
}

/// The bound on handlers running at once, host-wide. Calls past it are
/// refused at once with a retryable error, so that the workers left over
/// keep answering `ping`, `tools/list` and cancellations however long the
/// handlers run.
#[derive(Debug)]
pub(crate) struct CallSlots {
    running: AtomicUsize,
    max: usize,
}

impl CallSlots {
    pub(crate) fn new(max: usize) -> CallSlots {
        CallSlots {
            running: AtomicUsize::new(0),
            max,
        }
    }

    fn take(&self) -> Result<SlotGuard<'_>, Halt> {
        let taken = self
            .running
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                (n < self.max).then_some(n + 1)
            });
        match taken {
            Ok(_) => Ok(SlotGuard(self)),
            Err(running) => Err(Halt::Busy { running }),
        }
    }
}

/// A taken call slot; dropping it frees the slot.
struct SlotGuard<'a>(&'a CallSlots);

impl Drop for SlotGuard<'_> {
    fn drop(&mut self) {
        self.0.running.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Schedules what happens while a call runs long: at the deadline (when the
/// host sets one) the call is cancelled and the client answered with a tool
/// error, although the handler runs on until it returns, holding its worker
/// and call slot; and, with or without a deadline, a report to the event
/// hook (or the log) once the call has run for the reporting threshold.
fn watch(
    service: &Service,
    tool: &Tool,
    request_id: &Value,
    revision: Revision,
    outlet: &Arc<dyn Outlet>,
    ticket: &CallTicket,
    started: Instant,
) -> Vec<JobId> {
    let mut jobs = Vec::new();
    if let Some(limit) = service.call_timeout {
        let text = format!(
            "The tool did not finish within its deadline of {} ms and was cancelled.",
            limit.as_millis()
        );
        let mut result = json!({"content": [{"type": "text", "text": text}], "isError": true});
        if revision.is_stateless() {
            result = complete(service, result);
        }
        let message = success(request_id, result);
        let outlet = Arc::downgrade(outlet);
        let cancel = Arc::clone(&ticket.cancel);
        let hook = service.hook.clone();
        let name = tool.name().to_owned();
        jobs.push(service.timer.schedule(started + limit, move || {
            let Some(outlet) = outlet.upgrade() else {
                return;
            };
            cancel.cancel("the call's deadline passed", false);
            outlet.answer(&message);
            emit(hook.as_ref(), || Event::CallTimedOut {
                tool: name,
                after: limit,
            });
        }));
    }
    let long_call_report = service
        .long_call_report
        .filter(|_| heard(service.hook.as_ref(), log::Level::Warn));
    if let Some(after) = long_call_report {
        let hook = service.hook.clone();
        let name = tool.name().to_owned();
        jobs.push(service.timer.schedule(started + after, move || {
            emit(hook.as_ref(), || Event::CallRunningLong {
                tool: name,
                elapsed: started.elapsed(),
            });
        }));
    }
    jobs
}

/// How the call will reach its client with questions: on its stream
/// (stateful), or through rounds whose answers so far arrive in the signed
/// `requestState` and the retry's `inputResponses` (2026-07-28).
fn ask_channel(
    service: &Service,
    entry: &Arc<SessionEntry>,
    caller: &Caller,
    tool: &Tool,
    arguments: &Value,
    params: Option<&Value>,
) -> Result<Asking, RpcError> {
    if !caller.revision.is_stateless() {
        return Ok(Asking::Stream {
            entry: Arc::clone(entry),
            mcp_session: caller.session_id.clone(),
        });
    }
    let mut answers = match params.and_then(|p| p.get("requestState")) {
        None | Some(Value::Null) => Map::new(),
        Some(Value::String(state)) => service
            .states
            .open(state, &fingerprint(entry, tool.name(), arguments))
            .map_err(|why| RpcError::invalid_params(format!("invalid requestState: {why}")))?,
        Some(_) => return Err(RpcError::invalid_params("requestState must be a string")),
    };
    match params.and_then(|p| p.get("inputResponses")) {
        None | Some(Value::Null) => {}
        Some(Value::Object(responses)) => {
            answers.extend(responses.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
        Some(_) => {
            return Err(RpcError::invalid_params(
                "inputResponses must be an object mapping each input request's key to the client's result",
            ))
        }
    }
    Ok(Asking::Rounds {
        answers,
        round: std::sync::Mutex::default(),
    })
}

/// The 2026-07-28 answer to a run that asked what the client has not
/// answered yet: the questions, and a signed state with the answers so far.
fn input_required(
    service: &Service,
    entry: &SessionEntry,
    tool: &Tool,
    arguments: &Value,
    round: Round,
) -> Value {
    let requests: Map<String, Value> = round.needed.into_iter().collect();
    let state = service
        .states
        .sign(&fingerprint(entry, tool.name(), arguments), &round.used);
    json!({"resultType": "input_required", "inputRequests": requests, "requestState": state})
}

/// The `-32021` error when the client lacks a capability the tool requires.
fn missing_capabilities(tool: &Tool, declared: &Value) -> Option<RpcError> {
    let required = tool.required_capabilities()?;
    let missing: Vec<&str> = required
        .keys()
        .filter(|name| declared.get(name.as_str()).is_none())
        .map(String::as_str)
        .collect();
    if missing.is_empty() {
        return None;
    }
    let mut error = RpcError::new(
        MISSING_CLIENT_CAPABILITY,
        format!(
            "tool {:?} needs the client capabilities {}, which this request did not declare",
            tool.name(),
            missing.join(", ")
        ),
    );
    error.data = Some(json!({ "requiredCapabilities": required }));
    Some(error)
}

/// A `CallToolResult` for the revision.
pub(crate) fn render(outcome: &ToolOutcome, revision: Revision) -> Value {
    let mut result = Map::new();
    match &outcome.state {
        OutcomeState::Success {
            content,
            structured,
        } => {
            let content: Vec<Value> = content.iter().map(|c| c.to_json(revision)).collect();
            result.insert("content".into(), content.into());
            if let Some(structured) = structured
                .as_ref()
                .filter(|_| revision.has_structured_content())
            {
                result.insert("structuredContent".into(), structured.clone());
            }
            result.insert("isError".into(), false.into());
        }
        OutcomeState::Declined { reason, code } => {
            let text = match code {
                Some(code) if !revision.has_structured_content() => {
                    format!("{reason} (code: {code})")
                }
                _ => reason.clone(),
            };
            result.insert("content".into(), json!([{"type": "text", "text": text}]));
            if let Some(code) = code.as_ref().filter(|_| revision.has_structured_content()) {
                result.insert("structuredContent".into(), json!({ "code": code }));
            }
            result.insert("isError".into(), true.into());
        }
        OutcomeState::Failed { .. } => {
            result.insert(
                "content".into(),
                json!([{"type": "text", "text": FAILED_TEXT}]),
            );
            result.insert("isError".into(), true.into());
        }
    }
    Value::Object(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absent_and_null_arguments_mean_an_empty_object() {
        for params in [
            json!({"name": "t"}),
            json!({"name": "t", "arguments": null}),
        ] {
            assert_eq!(read_call(Some(&params)).unwrap().1, json!({}));
        }
    }

    #[test]
    fn non_object_arguments_are_invalid_params_naming_the_type() {
        let err = read_call(Some(&json!({"name": "t", "arguments": [1]}))).unwrap_err();
        assert!(err.message.contains("an array"), "{}", err.message);
        assert!(read_call(Some(&json!({"arguments": {}}))).is_err());
    }

    #[test]
    fn a_declined_code_is_structured_from_2025_06_18_and_textual_before() {
        let outcome = ToolOutcome::declined("no").with_code(json!("quota"));
        let new = render(&outcome, Revision::V2025_06_18);
        assert_eq!(new["structuredContent"], json!({"code": "quota"}));
        assert_eq!(new["isError"], true);
        let old = render(&outcome, Revision::V2025_03_26);
        assert!(old.get("structuredContent").is_none());
        assert_eq!(old["content"][0]["text"], "no (code: \"quota\")");
    }

    #[test]
    fn a_failed_outcome_hides_its_detail_from_the_model() {
        let rendered = render(
            &ToolOutcome::failed("db password wrong"),
            Revision::V2025_11_25,
        );
        assert!(!rendered.to_string().contains("password"));
        assert_eq!(rendered["isError"], true);
    }
}
