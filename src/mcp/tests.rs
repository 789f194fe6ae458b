//! The core's entry points, fed bytes and headers with no host bound: each
//! test asserts the plan (or response) a request gets, in both eras.

use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use serde_json::{json, Value};

use super::*;
use crate::call::StaticSurface;
use crate::event::{Event, EventHook};
use crate::model::jsonrpc::{HEADER_MISMATCH, INVALID_PARAMS, METHOD_NOT_FOUND};
use crate::model::{CallResult, Tool, ToolOutcome};

/// A bearer's session as plain data: a surface and its MCP sessions.
struct Fake {
    surface: StaticSurface,
    sessions: RefCell<McpSessions>,
    next: Cell<u32>,
}

impl BearerState for Fake {
    fn surface(&self) -> &dyn ToolSurface {
        &self.surface
    }
    fn open(&self, caller: Caller) -> String {
        self.next.set(self.next.get() + 1);
        let id = format!("mcp-{}", self.next.get());
        self.sessions.borrow_mut().open(id.clone(), caller);
        id
    }
    fn find(&self, id: &str) -> Option<Caller> {
        self.sessions.borrow_mut().touch(id)
    }
    fn set_log_level(&self, id: &str, level: LogLevel) -> bool {
        self.sessions.borrow_mut().set_log_level(id, level)
    }
    fn close(&self, id: &str) -> bool {
        self.sessions.borrow_mut().close(id)
    }
}

/// A core with one tool, `add`, and counts of the events it reported (the
/// hook must be `Sync`, and the core's tests use no locks).
struct Rig {
    server: Server,
    session: Fake,
    bad_requests: Arc<AtomicUsize>,
    unknown_ghosts: Arc<AtomicUsize>,
}

fn rig() -> Rig {
    let bad_requests = Arc::new(AtomicUsize::new(0));
    let unknown_ghosts = Arc::new(AtomicUsize::new(0));
    let (bad, ghosts) = (Arc::clone(&bad_requests), Arc::clone(&unknown_ghosts));
    let hook: EventHook = Arc::new(move |event: &Event| match event {
        Event::BadRequest { .. } => {
            bad.fetch_add(1, Ordering::SeqCst);
        }
        Event::UnknownTool { tool } if tool == "ghost" => {
            ghosts.fetch_add(1, Ordering::SeqCst);
        }
        _ => {}
    });
    let add = Tool::new("add", "Adds two integers.").input_schema(json!({
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    }));
    let surface = StaticSurface::new()
        .tool(add, |args, _| {
            ToolOutcome::json(
                json!({"sum": args["a"].as_i64().unwrap() + args["b"].as_i64().unwrap()}),
            )
        })
        .unwrap();
    Rig {
        server: Server::for_tests(Some(hook)),
        session: Fake {
            surface,
            sessions: RefCell::default(),
            next: Cell::new(0),
        },
        bad_requests,
        unknown_ghosts,
    }
}

fn headers(pairs: &[(&str, &str)]) -> Headers {
    Headers::new(pairs.iter().copied())
}

fn body(response: &HttpResponse) -> Value {
    serde_json::from_slice(&response.body).unwrap()
}

fn responded(plan: Plan) -> HttpResponse {
    match plan {
        Plan::Respond(response) => response,
        other => panic!("expected an answer now, got {other:?}"),
    }
}

fn worked(plan: Plan) -> Work {
    match plan {
        Plan::Work(work) => work,
        other => panic!("expected work, got {other:?}"),
    }
}

impl Rig {
    fn post(&self, headers: &[(&str, &str)], message: &Value) -> Plan {
        post(
            &self.server,
            &self.session,
            &self::headers(headers),
            message.to_string().as_bytes(),
        )
    }

    /// Initializes an MCP session in `revision`; returns its id.
    fn initialize(&self, revision: &str) -> String {
        let response = responded(self.post(
            &[],
            &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                    "params": {"protocolVersion": revision, "capabilities": {},
                               "clientInfo": {"name": "t", "version": "1"}}}),
        ));
        assert_eq!(response.status, 200);
        let id = response
            .headers
            .iter()
            .find(|(name, _)| *name == "Mcp-Session-Id")
            .map(|(_, value)| value.clone())
            .expect("initialize answers with Mcp-Session-Id");
        assert_eq!(body(&response)["result"]["protocolVersion"], revision);
        id
    }

    fn in_session(&self, id: &str, message: &Value) -> Plan {
        self.post(&[("Mcp-Session-Id", id)], message)
    }

    fn bad_requests(&self) -> usize {
        self.bad_requests.load(Ordering::SeqCst)
    }
}

fn call(id: u64, name: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": name, "arguments": arguments}})
}

const STATELESS_LIST: [(&str, &str); 2] = [
    ("MCP-Protocol-Version", "2026-07-28"),
    ("Mcp-Method", "tools/list"),
];

fn meta() -> Value {
    json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
           "io.modelcontextprotocol/clientCapabilities": {}})
}

#[test]
fn initialize_opens_an_mcp_session_and_later_requests_find_it() {
    let rig = rig();
    let id = rig.initialize("2025-06-18");
    assert!(rig.session.find(&id).is_some());
    let work = worked(rig.in_session(&id, &json!({"jsonrpc": "2.0", "id": 1, "method": "ping"})));
    assert_eq!(work.caller.revision, Revision::V2025_06_18);
    assert!(
        matches!(&work.steps[..], [Step::Reply(reply)] if reply.to_value()["result"] == json!({}))
    );
    let response = finish(
        &rig.server,
        &work,
        vec![StepResult::Reply(json!({"id": 1}).into())],
    );
    assert_eq!(response.status, 200);
}

#[test]
fn an_unknown_revision_is_negotiated_down_to_the_newest_stateful_one() {
    let rig = rig();
    let response = responded(rig.post(
        &[],
        &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {"protocolVersion": "1999-01-01"}}),
    ));
    assert_eq!(body(&response)["result"]["protocolVersion"], "2025-11-25");
}

#[test]
fn requests_without_or_with_an_unknown_session_id_are_refused_and_plan_nothing() {
    let rig = rig();
    let ping = json!({"jsonrpc": "2.0", "id": 7, "method": "ping"});
    let missing = responded(rig.post(&[], &ping));
    assert_eq!(missing.status, 400);
    assert_eq!(body(&missing)["id"], 7);
    let unknown = responded(rig.in_session("nope", &ping));
    assert_eq!(unknown.status, 404);
    assert_eq!(body(&unknown)["error"]["code"], super::SESSION_NOT_FOUND);
    assert_eq!(rig.bad_requests(), 2);
}

#[test]
fn malformed_json_and_an_unsupported_version_header_are_400s() {
    let rig = rig();
    let parse = responded(post(&rig.server, &rig.session, &headers(&[]), b"{nope"));
    assert_eq!(parse.status, 400);
    assert_eq!(body(&parse)["error"]["code"], PARSE_ERROR);
    let id = rig.initialize("2025-11-25");
    let version = responded(rig.post(
        &[
            ("Mcp-Session-Id", &id),
            ("MCP-Protocol-Version", "1999-01-01"),
        ],
        &json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}),
    ));
    assert_eq!(version.status, 400);
    assert!(body(&version)["error"]["message"]
        .as_str()
        .unwrap()
        .contains("2025-11-25"));
}

#[test]
fn a_body_is_read_member_by_member_and_one_that_is_no_message_is_refused() {
    let rig = rig();
    let id = rig.initialize("2025-03-26");
    let in_session = headers(&[("Mcp-Session-Id", &id)]);
    let raw = |bytes: &[u8]| post(&rig.server, &rig.session, &in_session, bytes);
    // Members nobody reads are read past; a member sent twice keeps its
    // last value, as a JSON object's map does.
    let work = worked(raw(
        br#"{"extra": {"deep": [1, {"x": null}]}, "jsonrpc": "2.0", "id": 1, "id": 2, "method": "ping"}"#,
    ));
    assert!(
        matches!(&work.steps[..], [Step::Reply(reply)] if reply.to_value()["id"] == 2),
        "{:?}",
        work.steps
    );
    // A member nobody reads must still be JSON, but only JSON: a number no
    // f64 holds is refused in `params`, which is read, and not elsewhere.
    let broken = responded(raw(
        br#"{"extra": [1,], "jsonrpc": "2.0", "id": 3, "method": "ping"}"#,
    ));
    assert_eq!(body(&broken)["error"]["code"], PARSE_ERROR);
    let huge = worked(raw(
        br#"{"extra": 1e400, "jsonrpc": "2.0", "id": 5, "method": "ping"}"#,
    ));
    assert!(matches!(&huge.steps[..], [Step::Reply(reply)] if reply.to_value()["id"] == 5));
    let huge_params = responded(raw(
        br#"{"jsonrpc": "2.0", "id": 6, "method": "ping", "params": {"x": 1e400}}"#,
    ));
    assert_eq!(body(&huge_params)["error"]["code"], PARSE_ERROR);
    for not_a_message in [&b"\"ping\""[..], b"42", b"-1.5", b"true", b"null"] {
        let refused = responded(raw(not_a_message));
        assert_eq!(refused.status, 400);
        assert_eq!(body(&refused)["error"]["code"], INVALID_REQUEST);
        assert!(body(&refused).get("id").is_none());
    }
    // A batch is never 2026-07-28 traffic, whatever its items' `_meta`
    // says: without an MCP session it is refused for the missing id.
    let batch =
        json!([{"jsonrpc": "2.0", "id": 4, "method": "tools/list", "params": {"_meta": meta()}}]);
    let stateful = responded(rig.post(&[], &batch));
    assert_eq!(stateful.status, 400);
    assert_eq!(body(&stateful)["error"]["code"], SERVER_ERROR);
}

#[test]
fn tools_list_is_answered_at_once_with_the_surface_s_tools() {
    let rig = rig();
    let id = rig.initialize("2025-11-25");
    let work = worked(rig.in_session(
        &id,
        &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    ));
    let [Step::Reply(reply)] = &work.steps[..] else {
        panic!("{:?}", work.steps)
    };
    let reply = reply.to_value();
    assert_eq!(reply["result"]["tools"][0]["name"], "add");
    let cursor = worked(rig.in_session(
        &id,
        &json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {"cursor": "x"}}),
    ));
    let [Step::Reply(reply)] = &cursor.steps[..] else {
        panic!()
    };
    let reply = reply.to_value();
    assert_eq!(reply["error"]["code"], INVALID_PARAMS);
}

#[test]
fn a_call_to_a_listed_tool_is_planned_and_an_unlisted_one_never_is() {
    let rig = rig();
    let id = rig.initialize("2025-11-25");
    let work = worked(rig.in_session(&id, &call(4, "add", json!({"a": 1, "b": 2}))));
    let [Step::Call(plan)] = &work.steps[..] else {
        panic!("{:?}", work.steps)
    };
    assert_eq!(plan.tool.name(), "add");
    assert_eq!(plan.arguments, json!({"a": 1, "b": 2}));
    assert_eq!(
        plan.key,
        Some(CallKey {
            mcp_session: id.clone(),
            request_id: json!(4)
        })
    );
    assert!(plan.rounds.is_none());
    assert_eq!(work.resumable, Some((id.clone(), true)));

    let unknown = worked(rig.in_session(&id, &call(5, "ghost", json!({}))));
    let [Step::Reply(reply)] = &unknown.steps[..] else {
        panic!("{:?}", unknown.steps)
    };
    let reply = reply.to_value();
    assert_eq!(reply["result"]["isError"], true);
    assert_eq!(rig.unknown_ghosts.load(Ordering::SeqCst), 1);
}

#[test]
fn arguments_that_break_the_schema_are_a_tool_error_and_no_call_is_planned() {
    let rig = rig();
    let id = rig.initialize("2025-11-25");
    let work = worked(rig.in_session(&id, &call(6, "add", json!({"a": "one"}))));
    let [Step::Reply(reply)] = &work.steps[..] else {
        panic!("{:?}", work.steps)
    };
    let reply = reply.to_value();
    assert_eq!(reply["result"]["isError"], true);
    let text = reply["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("/a") && text.contains("b"), "{text}");
    let bad_args = work_of(
        &rig,
        &id,
        &json!({"jsonrpc": "2.0", "id": 8, "method": "tools/call",
        "params": {"name": "add", "arguments": [1]}}),
    );
    assert!(
        matches!(&bad_args[..], [Step::Reply(r)] if r.to_value()["error"]["code"] == INVALID_PARAMS)
    );
}

fn work_of(rig: &Rig, id: &str, message: &Value) -> Vec<Step> {
    worked(rig.in_session(id, message)).steps
}

#[test]
fn a_batch_is_planned_in_order_in_2025_03_26_and_refused_in_later_revisions() {
    let rig = rig();
    let old = rig.initialize("2025-03-26");
    let batch = json!([
        {"jsonrpc": "2.0", "id": 1, "method": "ping"},
        call(2, "add", json!({"a": 1, "b": 1})),
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}},
        {"jsonrpc": "2.0", "id": 3, "method": "initialize", "params": {}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    ]);
    let planned = worked(rig.in_session(&old, &batch));
    assert!(planned.batch);
    let kinds: Vec<&str> = planned
        .steps
        .iter()
        .map(|step| match step {
            Step::Reply(_) => "reply",
            Step::Call(_) => "call",
            Step::Cancel { .. } => "cancel",
            Step::Deliver { .. } => "deliver",
        })
        .collect();
    assert_eq!(kinds, ["reply", "call", "cancel", "reply"]);
    let response = finish(
        &rig.server,
        &planned,
        vec![
            StepResult::Reply(json!({"id": 1}).into()),
            StepResult::Cancelled,
            StepResult::Done,
            StepResult::Reply(json!({"id": 3}).into()),
        ],
    );
    assert_eq!(body(&response), json!([{"id": 1}, {"id": 3}]));

    let new = rig.initialize("2025-06-18");
    let refused = responded(rig.in_session(&new, &batch));
    assert_eq!(refused.status, 400);
    assert!(body(&refused)["error"]["message"]
        .as_str()
        .unwrap()
        .contains("2025-03-26 only"));
    let empty = responded(rig.in_session(&old, &json!([])));
    assert_eq!(empty.status, 400);
}

#[test]
fn a_cancellation_and_an_answer_are_planned_and_an_undeliverable_answer_is_a_400() {
    let rig = rig();
    let id = rig.initialize("2025-11-25");
    let cancel = worked(rig.in_session(
        &id,
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": {"requestId": 9, "reason": "enough"}}),
    ));
    assert!(matches!(&cancel.steps[..],
        [Step::Cancel { key, reason }] if key.request_id == 9 && reason == "enough"));
    assert_eq!(
        finish(&rig.server, &cancel, vec![StepResult::Done]).status,
        202
    );
    let other = worked(rig.in_session(
        &id,
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    ));
    assert!(other.steps.is_empty());
    let answer = worked(rig.in_session(
        &id,
        &json!({"jsonrpc": "2.0", "id": "toolhost-ask-1", "result": {"roots": []}}),
    ));
    assert!(matches!(&answer.steps[..],
        [Step::Deliver { id, outcome: Ok(_) }] if id == "toolhost-ask-1"));
    assert_eq!(
        finish(&rig.server, &answer, vec![StepResult::Done]).status,
        202
    );
    let late = finish(
        &rig.server,
        &answer,
        vec![StepResult::Undelivered(json!("toolhost-ask-1"))],
    );
    assert_eq!(late.status, 400);
}

#[test]
fn a_halted_call_is_answered_as_the_halt_says() {
    let rig = rig();
    let id = rig.initialize("2025-11-25");
    let planned = worked(rig.in_session(&id, &call(4, "add", json!({"a": 1, "b": 2}))));
    let cancelled = finish(&rig.server, &planned, vec![StepResult::Cancelled]);
    assert_eq!((cancelled.status, cancelled.body.len()), (200, 0));
    assert!(cancelled
        .headers
        .iter()
        .any(|(_, v)| v == "text/event-stream"));
    let revoked = finish(&rig.server, &planned, vec![StepResult::Revoked]);
    assert_eq!(revoked.status, 401);
    let busy = finish(
        &rig.server,
        &planned,
        vec![StepResult::QueueFull {
            id: json!(4),
            running: 6,
            waiting: 256,
        }],
    );
    assert_eq!(busy.status, 503);
    assert_eq!(body(&busy)["id"], 4);
    let message = body(&busy)["error"]["message"].as_str().unwrap().to_owned();
    assert!(
        message.contains("max_queued_calls") && message.contains("256"),
        "{message}"
    );
    assert!(busy.headers.iter().any(|(name, _)| *name == "Retry-After"));
}

#[test]
fn set_level_changes_the_session_s_log_level_and_a_bad_level_names_the_choices() {
    let rig = rig();
    let id = rig.initialize("2025-11-25");
    let set = work_of(
        &rig,
        &id,
        &json!({"jsonrpc": "2.0", "id": 1, "method": "logging/setLevel", "params": {"level": "warning"}}),
    );
    assert!(matches!(&set[..], [Step::Reply(r)] if r.to_value()["result"] == json!({})));
    assert_eq!(
        rig.session.find(&id).unwrap().log_level,
        Some(LogLevel::Warning)
    );
    let bad = work_of(
        &rig,
        &id,
        &json!({"jsonrpc": "2.0", "id": 2, "method": "logging/setLevel", "params": {"level": "loud"}}),
    );
    let [Step::Reply(reply)] = &bad[..] else {
        panic!()
    };
    let reply = reply.to_value();
    assert!(reply["error"]["message"]
        .as_str()
        .unwrap()
        .contains("debug, info, notice"));
    let unknown = work_of(
        &rig,
        &id,
        &json!({"jsonrpc": "2.0", "id": 3, "method": "completion/complete"}),
    );
    assert!(
        matches!(&unknown[..], [Step::Reply(r)] if r.to_value()["error"]["code"] == METHOD_NOT_FOUND)
    );
}

#[test]
fn get_opens_the_standalone_stream_or_plans_a_resume_and_delete_ends_the_session() {
    let rig = rig();
    let id = rig.initialize("2025-11-25");
    let session = headers(&[("Mcp-Session-Id", &id), ("Accept", "text/event-stream")]);
    assert!(matches!(
        get(&rig.server, &rig.session, &session),
        Plan::Stream(StreamOpen {
            kind: StreamKind::Standalone,
            ..
        })
    ));
    let resume = headers(&[("Mcp-Session-Id", &id), ("Last-Event-ID", "3-1")]);
    assert!(matches!(
        get(&rig.server, &rig.session, &resume),
        Plan::Resume { mcp_session, last_event_id } if mcp_session == id && last_event_id == "3-1"
    ));
    let json_only = headers(&[("Mcp-Session-Id", &id), ("Accept", "application/json")]);
    assert_eq!(
        responded(get(&rig.server, &rig.session, &json_only)).status,
        406
    );
    let end = headers(&[("Mcp-Session-Id", &id)]);
    assert_eq!(delete(&rig.server, &rig.session, &end).status, 204);
    assert_eq!(delete(&rig.server, &rig.session, &end).status, 404);
    assert_eq!(responded(get(&rig.server, &rig.session, &end)).status, 404);
}

#[test]
fn a_stateless_list_is_complete_with_cache_hints_and_the_server_s_identity() {
    let rig = rig();
    let response = responded(rig.post(
        &STATELESS_LIST,
        &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": meta()}}),
    ));
    assert_eq!(response.status, 200);
    let result = &body(&response)["result"];
    assert_eq!(result["resultType"], "complete");
    assert_eq!(result["ttlMs"], 60_000);
    assert_eq!(result["cacheScope"], "private");
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "test"
    );
    assert_eq!(result["tools"][0]["name"], "add");
    assert!(rig.session.sessions.borrow_mut().touch("mcp-1").is_none());
}

#[test]
fn a_stateless_call_is_planned_with_its_rounds_and_headers_that_disagree_are_32020() {
    let rig = rig();
    let mut message = call(2, "add", json!({"a": 1, "b": 2}));
    message["params"]["_meta"] = meta();
    message["params"]["inputResponses"] = json!({"k": {"action": "decline"}});
    let good = [
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "add"),
    ];
    let planned = worked(rig.post(&good, &message));
    assert!(!planned.batch && planned.resumable.is_none());
    let [Step::Call(plan)] = &planned.steps[..] else {
        panic!("{:?}", planned.steps)
    };
    let rounds = plan.rounds.as_ref().unwrap();
    assert_eq!(rounds.state, None);
    assert!(rounds.responses.contains_key("k"));
    assert_eq!(plan.key, None);

    let wrong_name = [
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "other"),
    ];
    let refused = responded(rig.post(&wrong_name, &message));
    assert_eq!(refused.status, 400);
    assert_eq!(body(&refused)["error"]["code"], HEADER_MISMATCH);

    message["params"]["requestState"] = json!(5);
    let bad_state = responded(rig.post(&good, &message));
    assert_eq!(body(&bad_state)["error"]["code"], INVALID_PARAMS);
}

#[test]
fn a_stateless_error_found_at_run_time_is_refused_with_its_status() {
    let rig = rig();
    let mut message = call(2, "add", json!({"a": 1, "b": 2}));
    message["params"]["_meta"] = meta();
    let headers = [
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "add"),
    ];
    let planned = worked(rig.post(&headers, &message));
    let response = finish(
        &rig.server,
        &planned,
        vec![StepResult::Error {
            id: json!(2),
            error: RpcError::invalid_params("invalid requestState: expired"),
        }],
    );
    assert_eq!(response.status, 400);
    assert_eq!(body(&response)["id"], 2);
}

#[test]
fn stateless_listen_opens_a_stream_and_stateless_get_and_delete_are_405() {
    let rig = rig();
    let listen = rig.post(
        &[
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "subscriptions/listen"),
        ],
        &json!({"jsonrpc": "2.0", "id": 9, "method": "subscriptions/listen",
                "params": {"_meta": meta(), "notifications": {"toolsListChanged": true}}}),
    );
    assert!(matches!(
        listen,
        Plan::Stream(StreamOpen {
            kind: StreamKind::Listen { tools: true, .. },
            ..
        })
    ));
    let version = headers(&[("MCP-Protocol-Version", "2026-07-28")]);
    let get = responded(get(&rig.server, &rig.session, &version));
    assert_eq!(get.status, 405);
    assert_eq!(delete(&rig.server, &rig.session, &version).status, 405);
}

#[test]
fn stateless_methods_of_the_handshake_era_are_not_found() {
    let rig = rig();
    let response = responded(rig.post(
        &[
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "ping"),
        ],
        &json!({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"_meta": meta()}}),
    ));
    assert_eq!(response.status, 404);
    assert_eq!(body(&response)["error"]["code"], METHOD_NOT_FOUND);
}

#[test]
fn a_call_s_outcome_is_spelled_for_its_revision() {
    let rig = rig();
    let id = rig.initialize("2025-03-26");
    let old = rig.session.find(&id).unwrap();
    let outcome = ToolOutcome::json(json!({"sum": 3}));
    let reply = call_reply(&rig.server, &old, &json!(1), &outcome).to_value();
    assert!(reply["result"].get("structuredContent").is_none());
    let new_id = rig.initialize("2025-11-25");
    let new = rig.session.find(&new_id).unwrap();
    let reply = call_reply(&rig.server, &new, &json!(1), &outcome).to_value();
    assert_eq!(reply["result"]["structuredContent"], json!({"sum": 3}));
    let timeout = timeout_reply(&rig.server, Revision::V2026_07_28, &json!(2), 1500);
    assert_eq!(timeout["result"]["isError"], true);
    assert_eq!(timeout["result"]["resultType"], "complete");
    let asked = input_required(
        &rig.server,
        &json!(3),
        vec![("k".into(), json!({"method": "roots/list"}))],
        "state".into(),
    );
    assert_eq!(asked["result"]["resultType"], "input_required");
    assert_eq!(asked["result"]["requestState"], "state");
}

#[test]
fn a_result_that_breaks_its_output_schema_fails_and_others_pass_unchanged() {
    let tool = Tool::new("t", "d").output_schema(json!({
        "type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}));
    let good = checked_outcome(&tool, ToolOutcome::json(json!({"n": 1})));
    assert_eq!(good.result, CallResult::Success);
    let bad = checked_outcome(&tool, ToolOutcome::json(json!({"n": "x"})));
    assert!(matches!(bad.result, CallResult::Failed { .. }));
    let declined = checked_outcome(&tool, ToolOutcome::declined("no"));
    assert_eq!(declined, ToolOutcome::declined("no"));
}

#[test]
fn accept_ranges_match_exactly_by_family_or_by_any_and_nothing_else() {
    let stream = "text/event-stream";
    for accept in [
        "text/event-stream",
        "application/json, text/event-stream",
        "application/json,TEXT/Event-Stream;q=0.5",
        " \t text/*\x0b ; q=1",
        "*/*",
        "image/png, */*;q=0.1",
    ] {
        assert!(accepts(accept, stream), "{accept:?}");
    }
    for accept in [
        "",
        "application/json",
        "text/event-streams",
        "text/event",
        "application/*",
        "text/event-stream-x, image/*",
        "*/json",
        "text/*x",
    ] {
        assert!(!accepts(accept, stream), "{accept:?}");
    }
    assert!(accepts("application/*", "application/json"));
    assert!(!accepts("text/*", "application/json"));
}
