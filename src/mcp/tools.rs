//! `tools/list` and `tools/call`: asking the surface, every check a call
//! passes before its handler may run, and spelling the result for the
//! client's revision.
//!
//! Both ask the surface afresh, under `catch_unwind`: a surface that panics
//! costs the request, never the host. Running the handler is the
//! runtime's; what it came to is spelled by [`call_reply`].

use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};
use std::panic::{catch_unwind, AssertUnwindSafe};

use serde_core::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{json, Map, Value};

use super::lifecycle::Caller;
use super::plan::{CallKey, CallPlan, Rounds};
use super::result::{self, tool_error};
use super::result_meta::complete;
use super::{BearerState, Server};
use crate::call::panic_message;
use crate::call::surface::{self, visible_tools};
use crate::event::Event;
use crate::model::http::Headers;
use crate::model::jsonrpc::{
    success, success_serialized, Reply, RpcError, INTERNAL_ERROR, MISSING_CLIENT_CAPABILITY,
};
use crate::model::meta::Meta;
use crate::model::params::check_headers;
use crate::model::{CallResult, Revision, Tool, ToolOutcome};
use crate::schema::describe;

/// The surface's tools now, with any that break the rules left out (and
/// reported), or `Err` when `list_tools` panicked.
fn current_tools(server: &Server, session: &dyn BearerState) -> Result<Vec<Tool>, RpcError> {
    // The host asks each tool's predicate itself (inside the catch: a
    // predicate is the application's code), whatever the surface did.
    let listed =
        catch_unwind(AssertUnwindSafe(|| visible_tools(session.surface()))).map_err(|payload| {
            server.emit(|| Event::SurfaceFault {
                message: format!("list_tools panicked: {}", panic_message(&*payload)),
            });
            RpcError::new(INTERNAL_ERROR, "the application could not list its tools")
        })?;
    // Which to keep is decided first, so that the names need no copies.
    let mut seen: HashSet<&str, BuildHasherDefault<NameHasher>> =
        HashSet::with_capacity_and_hasher(listed.len(), BuildHasherDefault::default());
    let keep: Vec<bool> = listed
        .iter()
        .map(|tool| {
            if let Err(err) = tool.validate() {
                server.emit(|| Event::SurfaceFault {
                    message: format!("tool left out of tools/list: {err}"),
                });
                false
            } else if !seen.insert(tool.name()) {
                server.emit(|| Event::SurfaceFault {
                    message: format!("tool {:?} listed twice; the first is kept", tool.name()),
                });
                false
            } else {
                true
            }
        })
        .collect();
    drop(seen);
    Ok(listed
        .into_iter()
        .zip(keep)
        .filter_map(|(tool, keep)| keep.then_some(tool))
        .collect())
}

/// A `tools/list` result. Each tool goes in as the text it rendered to
/// once (see `Tool::rendered`): a list of a thousand tools may be asked
/// for on every request, and building it as a tree of copies each time
/// would repeat work whose result does not change.
pub(crate) struct ToolList {
    tools: Vec<Tool>,
    revision: Revision,
    /// The result's other fields (2026-07-28's cache hints, `resultType`
    /// and `_meta`), after `tools`.
    pub(crate) more: Map<String, Value>,
}

impl ToolList {
    /// The response to request `id`, serialized.
    pub(crate) fn reply(&self, id: &Value) -> Reply {
        let tools: usize = self
            .tools
            .iter()
            .map(|tool| tool.rendered(self.revision).get().len() + 1)
            .sum();
        success_serialized(id, self, tools + 256)
    }
}

impl Serialize for ToolList {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        struct Tools<'a>(&'a [Tool], Revision);
        impl Serialize for Tools<'_> {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.collect_seq(self.0.iter().map(|tool| tool.rendered(self.1)))
            }
        }
        let mut map = serializer.serialize_map(Some(1 + self.more.len()))?;
        map.serialize_entry("tools", &Tools(&self.tools, self.revision))?;
        for (key, value) in &self.more {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

/// FNV-1a, for the names in one tool list: they come from the application,
/// not from a client, so they need no defence against chosen collisions,
/// and SipHash's defence is a large share of a thousand-tool list.
struct NameHasher(u64);

impl Default for NameHasher {
    fn default() -> NameHasher {
        NameHasher(0xcbf2_9ce4_8422_2325)
    }
}

impl Hasher for NameHasher {
    fn write(&mut self, bytes: &[u8]) {
        for byte in bytes {
            self.0 = (self.0 ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3);
        }
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// `tools/list`. The host never issues cursors, so any cursor is unknown.
pub(crate) fn list(
    server: &Server,
    session: &dyn BearerState,
    revision: Revision,
    params: Option<&Value>,
) -> Result<ToolList, RpcError> {
    if let Some(cursor) = params.and_then(|p| p.get("cursor")) {
        if !cursor.is_null() {
            return Err(RpcError::invalid_params(
                "unknown cursor: this server returns every tool in one page and issues no cursors",
            ));
        }
    }
    Ok(ToolList {
        tools: current_tools(server, session)?,
        revision,
        more: Map::new(),
    })
}

/// The name and arguments of a call: absent and `null` arguments mean
/// `{}`. The arguments are taken out of `params`, not copied (the rest of
/// `params` is still read).
fn read_call(params: Option<&mut Value>) -> Result<(String, Value), RpcError> {
    let params = params.and_then(Value::as_object_mut);
    let name = params
        .as_ref()
        .and_then(|p| p.get("name"))
        .and_then(Value::as_str)
        .ok_or_else(|| RpcError::invalid_params("tools/call needs params.name, a string"))?
        .to_owned();
    let arguments = match params.and_then(|p| p.get_mut("arguments")) {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(args @ Value::Object(_)) => args.take(),
        Some(other) => {
            return Err(RpcError::invalid_params(format!(
                "params.arguments must be a JSON object, got {}",
                describe(other)
            )))
        }
    };
    Ok((name, arguments))
}

/// A refused call: a result the model reads (a tool error) or a JSON-RPC
/// error.
pub(crate) type Refusal = Result<Value, RpcError>;

/// `tools/call`: the tool as listed now, and every check before its handler
/// may run. `param_headers`: the request's headers, in 2026-07-28, where
/// the tool's header parameters must match its arguments.
pub(crate) fn plan(
    server: &Server,
    session: &dyn BearerState,
    caller: &Caller,
    request_id: &Value,
    mut params: Option<Value>,
    meta: Meta,
    param_headers: Option<&Headers>,
) -> Result<CallPlan, Refusal> {
    let (name, arguments) = read_call(params.as_mut()).map_err(Err)?;
    let params = params.as_ref();
    let tool = find_tool(server, session, &name)?;
    if let Some(headers) = param_headers {
        check_headers(tool.header_params(), &arguments, headers).map_err(Err)?;
    }
    if let Some(missing) = missing_capabilities(&tool, &caller.capabilities) {
        return Err(Err(missing));
    }
    // Arguments that break the schema never reach the handler: the model
    // gets every violation as a tool error (2025-11-25 says input validation
    // failures are tool errors, so the model can correct itself).
    if let Err(violations) = tool.check_arguments(&arguments) {
        server.emit(|| Event::InvalidArguments {
            tool: tool.name().to_owned(),
            violations: violations.clone(),
        });
        return Err(Ok(tool_error(&violations)));
    }
    let rounds = if caller.revision.is_stateless() {
        Some(read_rounds(params).map_err(Err)?)
    } else {
        None
    };
    let progress_token = meta
        .and_then(|meta| meta.progress_token)
        .filter(|t| t.is_string() || t.is_i64() || t.is_u64());
    let key = caller.session_id.as_ref().map(|session| CallKey {
        mcp_session: session.clone(),
        request_id: request_id.clone(),
    });
    Ok(CallPlan {
        request_id: request_id.clone(),
        tool,
        arguments,
        progress_token,
        key,
        rounds,
    })
}

/// The tool named `name` as the surface lists it now, visible: a hidden
/// tool is unknown. The host asks the list (or a crate surface's lookup,
/// which cannot disagree with it) and the tool's predicate itself, so no
/// surface method can make an unlisted tool callable. A surface's tool
/// that breaks the naming rules is refused here exactly as it is left out
/// of `tools/list`.
fn find_tool(server: &Server, session: &dyn BearerState, name: &str) -> Result<Tool, Refusal> {
    let found = catch_unwind(AssertUnwindSafe(|| {
        surface::find_tool(session.surface(), name)
    }));
    let unknown = || {
        Err(Ok(tool_error(&format!("Unknown tool: {name:?} is not available on this server right now. Call tools/list for the current tools."))))
    };
    match found {
        Ok(Some(tool)) => match tool.validate() {
            Ok(()) => Ok(tool),
            Err(err) => {
                server.emit(|| Event::SurfaceFault {
                    message: format!("call refused for a tool left out of tools/list: {err}"),
                });
                unknown()
            }
        },
        Ok(None) => {
            server.emit(|| Event::UnknownTool {
                tool: name.to_owned(),
            });
            unknown()
        }
        Err(payload) => {
            server.emit(|| Event::SurfaceFault {
                message: format!("find_tool panicked: {}", panic_message(&*payload)),
            });
            Err(Err(RpcError::new(
                INTERNAL_ERROR,
                "the application could not look up its tools",
            )))
        }
    }
}

/// What a 2026-07-28 retry carries: the previous round's `requestState` and
/// this round's `inputResponses`.
fn read_rounds(params: Option<&Value>) -> Result<Rounds, RpcError> {
    let state = match params.and_then(|p| p.get("requestState")) {
        None | Some(Value::Null) => None,
        Some(Value::String(state)) => Some(state.clone()),
        Some(_) => return Err(RpcError::invalid_params("requestState must be a string")),
    };
    let responses = match params.and_then(|p| p.get("inputResponses")) {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(responses)) => responses.clone(),
        Some(_) => {
            return Err(RpcError::invalid_params(
                "inputResponses must be an object mapping each input request's key to the client's result",
            ))
        }
    };
    Ok(Rounds { state, responses })
}

/// The outcome as it may be sent: a success whose structured content
/// breaks the tool's own output schema is a fault of the application — the
/// model must not see it, the application must.
pub(crate) fn checked_outcome(tool: &Tool, outcome: ToolOutcome) -> ToolOutcome {
    if outcome.result != CallResult::Success {
        return outcome;
    }
    match tool.check_structured_output(outcome.structured.as_ref()) {
        Ok(()) => outcome,
        Err(detail) => ToolOutcome::failed(detail),
    }
}

/// The JSON-RPC response to a call whose handler came to `outcome`:
/// written straight to text, but for a relayed result, which is a tree
/// already.
pub(crate) fn call_reply(
    server: &Server,
    caller: &Caller,
    request_id: &Value,
    outcome: &ToolOutcome,
) -> Reply {
    match &outcome.relayed {
        None => result::written(server, caller.revision, request_id, outcome),
        Some(relayed) => finish_result(
            server,
            caller.revision,
            request_id,
            relayed_result(relayed, caller.revision),
        )
        .into(),
    }
}

/// The response sent when a call passes its deadline while its handler
/// still runs.
pub(crate) fn timeout_reply(
    server: &Server,
    revision: Revision,
    request_id: &Value,
    limit_ms: u128,
) -> Value {
    let text =
        format!("The tool did not finish within its deadline of {limit_ms} ms and was cancelled.");
    finish_result(server, revision, request_id, tool_error(&text))
}

/// A tool error with `text`, as the response to a call: what the runtime
/// answers for a call its own bound refused or ended.
pub(crate) fn tool_error_reply(
    server: &Server,
    revision: Revision,
    request_id: &Value,
    text: &str,
) -> Value {
    finish_result(server, revision, request_id, tool_error(text))
}

/// The response to a call that was cancelled before its handler ran (it
/// waited for a slot): a tool error that says why.
pub(crate) fn not_run_reply(
    server: &Server,
    revision: Revision,
    request_id: &Value,
    reason: &str,
) -> Value {
    let text = format!("The tool call was cancelled before it started ({reason}); it did not run.");
    finish_result(server, revision, request_id, tool_error(&text))
}

/// The 2026-07-28 answer to a run that asked what the client has not
/// answered yet: the questions (key, then `{method, params}`), and a
/// signed `state` holding the answers so far.
pub(crate) fn input_required(
    server: &Server,
    request_id: &Value,
    needed: Vec<(String, Value)>,
    state: String,
) -> Value {
    let requests: Map<String, Value> = needed.into_iter().collect();
    let result =
        json!({"resultType": "input_required", "inputRequests": requests, "requestState": state});
    finish_result(server, Revision::V2026_07_28, request_id, result)
}

/// A call's result as the response to its request, completed as
/// 2026-07-28 requires.
pub(super) fn finish_result(
    server: &Server,
    revision: Revision,
    request_id: &Value,
    result: Value,
) -> Value {
    let result = if revision.is_stateless() {
        complete(server, result)
    } else {
        result
    };
    success(request_id, result)
}

/// The [`MISSING_CLIENT_CAPABILITY`] error when the client lacks a capability the tool requires.
fn missing_capabilities(tool: &Tool, declared: &Value) -> Option<RpcError> {
    let required = tool.required_client_capabilities()?;
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

/// Another server's `CallToolResult`, as it came, less what the revision
/// cannot carry.
fn relayed_result(relayed: &Map<String, Value>, revision: Revision) -> Value {
    let mut result = relayed.clone();
    if !revision.has_structured_content() {
        result.remove("structuredContent");
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
            assert_eq!(read_call(Some(&mut params.clone())).unwrap().1, json!({}));
        }
    }

    #[test]
    fn non_object_arguments_are_invalid_params_naming_the_type() {
        let err = read_call(Some(&mut json!({"name": "t", "arguments": [1]}))).unwrap_err();
        assert!(err.message.contains("an array"), "{}", err.message);
        assert!(read_call(Some(&mut json!({"arguments": {}}))).is_err());
    }

    /// The result of a call that came to `outcome`, as sent.
    fn sent(outcome: &ToolOutcome, revision: Revision) -> Value {
        let server = Server::for_tests(None);
        result::written(&server, revision, &json!(1), outcome).to_value()["result"].take()
    }

    #[test]
    fn a_declined_code_is_structured_from_2025_06_18_and_textual_before() {
        let outcome = ToolOutcome::declined("no").with_code(json!("quota"));
        let new = sent(&outcome, Revision::V2025_06_18);
        assert_eq!(new["structuredContent"], json!({"code": "quota"}));
        assert_eq!(new["isError"], true);
        let old = sent(&outcome, Revision::V2025_03_26);
        assert!(old.get("structuredContent").is_none());
        assert_eq!(old["content"][0]["text"], "no (code: \"quota\")");
    }

    #[test]
    fn a_relayed_result_is_sent_as_it_came_less_what_the_revision_cannot_carry() {
        let raw = json!({
            "content": [{"type": "hologram", "frames": 3}],
            "structuredContent": {"frames": 3},
            "_meta": {"trace": "t1"},
            "isError": true,
        });
        let outcome = ToolOutcome::relayed(raw.clone());
        let relayed = outcome.relayed.as_ref().unwrap();
        assert_eq!(relayed_result(relayed, Revision::V2025_06_18), raw);
        let mut old = raw.clone();
        old.as_object_mut().unwrap().remove("structuredContent");
        assert_eq!(relayed_result(relayed, Revision::V2025_03_26), old);
    }

    #[test]
    fn a_failed_outcome_hides_its_detail_from_the_model() {
        let sent = sent(
            &ToolOutcome::failed("db password wrong"),
            Revision::V2025_11_25,
        );
        assert!(!sent.to_string().contains("password"));
        assert_eq!(sent["isError"], true);
    }
}
