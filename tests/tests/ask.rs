//! Tools that ask back: a blocking handler asks the user (elicitation), the
//! model (sampling) or the client (roots) and gets the answer, in both eras.

use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use toolhost::{
    AskError, Elicitation, HostConfig, InputRequest, StaticSurface, Tool, ToolHost, ToolOutcome,
    ToolSession,
};
use toolhost_tests::{call_stream, schema, Conn, EventStream, Item, McpClient};

fn name_form() -> Value {
    json!({"type": "object", "properties": {"name": {"type": "string", "minLength": 1}}, "required": ["name"]})
}

/// A host whose `greet` tool elicits a name and reports what it got
/// (including the error, as text, so tests can see it).
fn host(
    config: HostConfig,
) -> (
    ToolHost,
    ToolSession,
    mpsc::Receiver<Result<Elicitation, AskError>>,
) {
    let host = ToolHost::bind(config).unwrap();
    let (tx, seen) = mpsc::channel();
    let tx = Mutex::new(tx);
    let surface = StaticSurface::new()
        .tool(Tool::new("greet", "Greets the user by name."), move |_, ctx| {
            let answer = ctx.elicit("What is your name?", name_form());
            let _ = tx.lock().unwrap().send(answer.clone());
            match answer {
                Ok(Elicitation::Accept(form)) => ToolOutcome::text(format!("Hello, {}!", form["name"].as_str().unwrap_or("?"))),
                Ok(other) => ToolOutcome::declined(format!("no name: {other:?}")),
                Err(err) => err.into(),
            }
        })
        .unwrap()
        .tool(Tool::new("ask_model", "Asks the model."), |_, ctx| {
            let params = json!({"messages": [{"role": "user", "content": {"type": "text", "text": "2+2?"}}], "maxTokens": 10});
            match ctx.sample(params) {
                Ok(answer) => ToolOutcome::text(answer["content"]["text"].as_str().unwrap_or("").to_owned()),
                Err(err) => err.into(),
            }
        })
        .unwrap();
    let session = host.open_session(surface);
    (host, session, seen)
}

/// Initializes a stateful client that declares `capabilities`.
fn stateful(host: &ToolHost, session: &ToolSession, capabilities: Value) -> McpClient {
    let mut client = McpClient::for_session(host, session);
    let reply = client.post(
        &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": capabilities,
        "clientInfo": {"name": "ask-tests", "version": "1"}}}),
    );
    assert_eq!(reply.status, 200);
    client.session_id = reply.header("mcp-session-id").map(str::to_owned);
    client.revision = "2025-11-25".into();
    client
}

/// Starts `tool` as request 50 on a raw connection and returns its event
/// stream.
fn start_call(
    host: &ToolHost,
    session: &ToolSession,
    client: &McpClient,
    tool: &str,
) -> EventStream {
    call_stream(
        host,
        session,
        client.session_id.as_deref().unwrap(),
        50,
        tool,
    )
}

fn answer(client: &mut McpClient, id: &Value, result: Value) -> u16 {
    client
        .post(&json!({"jsonrpc": "2.0", "id": id, "result": result}))
        .status
}

#[test]
fn an_elicitation_goes_out_on_the_call_stream_and_the_posted_answer_wakes_the_handler() {
    let (host, session, seen) = host(HostConfig::default());
    let mut client = stateful(&host, &session, json!({"elicitation": {}}));
    let mut events = start_call(&host, &session, &client, "greet");
    let request = events.next_message().expect("the elicitation request");
    schema::assert_valid("2025-11-25", "ElicitRequest", &request);
    assert_eq!(request["method"], "elicitation/create");
    assert_eq!(request["params"]["message"], "What is your name?");
    let id = request["id"].clone();

    assert_eq!(
        answer(
            &mut client,
            &json!("not-an-id"),
            json!({"action": "decline"})
        ),
        400,
        "a wrong id is refused"
    );
    assert_eq!(
        answer(
            &mut client,
            &id,
            json!({"action": "accept", "content": {"name": "Ada"}})
        ),
        202
    );
    assert_eq!(
        answer(
            &mut client,
            &id,
            json!({"action": "accept", "content": {"name": "Ada"}})
        ),
        400,
        "a repeated answer is refused"
    );

    let last = events.next_message().expect("the call's result");
    assert_eq!(last["id"], 50);
    assert_eq!(last["result"]["content"][0]["text"], "Hello, Ada!");
    assert_eq!(events.next_item(), Item::End);
    assert!(matches!(seen.recv().unwrap(), Ok(Elicitation::Accept(_))));
}

#[test]
fn an_answer_that_breaks_the_requested_schema_never_reaches_the_handler_as_valid() {
    let (host, session, seen) = host(HostConfig::default());
    let mut client = stateful(&host, &session, json!({"elicitation": {}}));
    let mut events = start_call(&host, &session, &client, "greet");
    let id = events.next_message().unwrap()["id"].clone();
    assert_eq!(
        answer(
            &mut client,
            &id,
            json!({"action": "accept", "content": {"name": ""}})
        ),
        202
    );
    let last = events.next_message().unwrap();
    assert_eq!(last["result"]["isError"], true);
    assert!(matches!(
        seen.recv().unwrap(),
        Err(AskError::InvalidResponse(_))
    ));
}

#[test]
fn sampling_round_trips_and_a_client_error_is_reported_to_the_handler() {
    let (host, session, _) = host(HostConfig::default());
    let mut client = stateful(&host, &session, json!({"sampling": {}}));
    let mut events = start_call(&host, &session, &client, "ask_model");
    let request = events.next_message().unwrap();
    schema::assert_valid("2025-11-25", "CreateMessageRequest", &request);
    let reply = json!({"role": "assistant", "content": {"type": "text", "text": "4"}, "model": "m", "stopReason": "endTurn"});
    assert_eq!(answer(&mut client, &request["id"], reply), 202);
    assert_eq!(
        events.next_message().unwrap()["result"]["content"][0]["text"],
        "4"
    );

    let mut events = start_call(&host, &session, &client, "ask_model");
    let id = events.next_message().unwrap()["id"].clone();
    let refusal = client.post(&json!({"jsonrpc": "2.0", "id": id, "error": {"code": -1, "message": "user rejected sampling"}}));
    assert_eq!(refusal.status, 202);
    let last = events.next_message().unwrap();
    assert!(last["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .contains("user rejected sampling"));
}

#[test]
fn a_client_without_the_capability_is_not_asked() {
    let (host, session, seen) = host(HostConfig::default());
    let mut client = stateful(&host, &session, json!({}));
    let reply = client.post(
        &json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "greet"}}),
    );
    assert_eq!(
        reply.header("content-type"),
        Some("application/json"),
        "no stream: nothing was sent"
    );
    assert_eq!(reply.json()["result"]["isError"], true);
    assert_eq!(
        seen.recv().unwrap(),
        Err(AskError::NotSupported {
            capability: "elicitation"
        })
    );
}

#[test]
fn cancellation_and_session_drop_wake_a_waiting_handler_and_withdraw_its_question() {
    let (host, session, seen) = host(HostConfig::default());
    let mut client = stateful(&host, &session, json!({"elicitation": {}}));
    let mut events = start_call(&host, &session, &client, "greet");
    let id = events.next_message().unwrap()["id"].clone();
    client.post(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 50, "reason": "stop"}}));
    assert_eq!(
        seen.recv_timeout(Duration::from_secs(10)).unwrap(),
        Err(AskError::Cancelled("stop".into()))
    );
    let reason = events.cancellation_of(&id);
    assert_eq!(reason, "the tool call was cancelled: stop");
    assert_eq!(
        events.next_item(),
        Item::End,
        "a call its client cancelled gets no result"
    );
    assert_eq!(
        answer(&mut client, &id, json!({"action": "decline"})),
        400,
        "a late answer to the withdrawn question is refused like an unknown id"
    );

    let mut events = start_call(&host, &session, &client, "greet");
    let id = events.next_message().unwrap()["id"].clone();
    drop(session);
    assert_eq!(
        seen.recv_timeout(Duration::from_secs(10)).unwrap(),
        Err(AskError::Cancelled("the session was closed".into()))
    );
    assert_eq!(
        events.cancellation_of(&id),
        "the tool call was cancelled: the session was closed"
    );
    assert_eq!(
        answer(&mut client, &id, json!({"action": "decline"})),
        401,
        "late answers meet a dead bearer"
    );
}

#[test]
fn the_call_deadline_withdraws_the_open_question_before_the_timeout_answer() {
    let (host, session, seen) =
        host(HostConfig::default().call_timeout(Duration::from_millis(300)));
    let mut client = stateful(&host, &session, json!({"elicitation": {}}));
    let mut events = start_call(&host, &session, &client, "greet");
    let id = events.next_message().unwrap()["id"].clone();
    assert_eq!(
        events.cancellation_of(&id),
        "the tool call's deadline passed"
    );
    let last = events.next_message().unwrap();
    assert_eq!(last["id"], 50);
    assert_eq!(
        last["result"]["isError"], true,
        "the client got the timeout after the cancellation"
    );
    let waited = seen.recv_timeout(Duration::from_secs(10)).unwrap();
    assert!(
        matches!(&waited, Err(AskError::TimedOut))
            || waited == Err(AskError::Cancelled("the call's deadline passed".into())),
        "the handler hears of the deadline, not of a lost stream: {waited:?}"
    );
    assert_eq!(
        answer(&mut client, &id, json!({"action": "decline"})),
        400,
        "a late answer is refused like an unknown id"
    );
}

#[test]
fn an_answered_question_is_never_cancelled_even_when_the_deadline_follows() {
    let host =
        ToolHost::bind(HostConfig::default().call_timeout(Duration::from_millis(400))).unwrap();
    let surface = StaticSurface::new()
        .tool(
            Tool::new("greet_then_wait", "Asks, then works past the deadline."),
            |_, ctx| {
                let answer = ctx.elicit("What is your name?", name_form());
                while !ctx.is_cancelled() {
                    std::thread::sleep(Duration::from_millis(5));
                }
                ToolOutcome::text(format!("{answer:?}"))
            },
        )
        .unwrap();
    let session = host.open_session(surface);
    let mut client = stateful(&host, &session, json!({"elicitation": {}}));
    let mut events = start_call(&host, &session, &client, "greet_then_wait");
    let id = events.next_message().unwrap()["id"].clone();
    assert_eq!(
        answer(
            &mut client,
            &id,
            json!({"action": "accept", "content": {"name": "Ada"}})
        ),
        202
    );
    let last = events.next_message().unwrap();
    assert_eq!(
        last["id"], 50,
        "the timeout answer comes with no cancellation of the answered question: {last}"
    );
    assert_eq!(last["result"]["isError"], true);
}

fn stateless_call(
    conn: &mut Conn,
    session: &ToolSession,
    params: Value,
    capabilities: Value,
) -> (u16, Value) {
    let reply = toolhost_tests::stateless_post(
        conn,
        &session.authorization(),
        9,
        "tools/call",
        params,
        capabilities,
    );
    let message = reply.json();
    schema::assert_valid("2026-07-28", "JSONRPCMessage", &message);
    (reply.status, message)
}

#[test]
fn in_2026_07_28_a_question_becomes_an_input_required_round_and_the_retry_completes() {
    let (host, session, seen) = host(HostConfig::default());
    let mut conn = Conn::open(host.local_addr()).unwrap();
    let caps = json!({"elicitation": {}});
    let (status, first) =
        stateless_call(&mut conn, &session, json!({"name": "greet"}), caps.clone());
    assert_eq!(status, 200);
    let result = &first["result"];
    schema::assert_valid("2026-07-28", "InputRequiredResult", result);
    assert_eq!(result["resultType"], "input_required");
    let (key, request) = result["inputRequests"]
        .as_object()
        .unwrap()
        .iter()
        .next()
        .unwrap();
    assert_eq!(request["method"], "elicitation/create");
    assert_eq!(seen.recv().unwrap(), Err(AskError::InputRequired));
    let state = result["requestState"].as_str().unwrap().to_owned();

    let retry = json!({"name": "greet", "requestState": state,
        "inputResponses": {key: {"action": "accept", "content": {"name": "Ada"}}}});
    let (_, done) = stateless_call(&mut conn, &session, retry.clone(), caps.clone());
    assert_eq!(done["result"]["resultType"], "complete");
    assert_eq!(done["result"]["content"][0]["text"], "Hello, Ada!");
    assert_eq!(session.calls_served(), 2, "the handler ran once per round");

    let (status, replayed) = stateless_call(&mut conn, &session, retry, caps.clone());
    assert_eq!(
        (status, replayed["error"]["code"].as_i64()),
        (400, Some(-32602)),
        "a state answers one retry"
    );
    assert!(replayed["error"]["message"]
        .as_str()
        .unwrap()
        .contains("already used"));
}

#[test]
fn a_tampered_or_foreign_request_state_is_refused_before_the_handler() {
    let (host, session, _) = host(HostConfig::default());
    let mut conn = Conn::open(host.local_addr()).unwrap();
    let caps = json!({"elicitation": {}});
    let (_, first) = stateless_call(&mut conn, &session, json!({"name": "greet"}), caps.clone());
    let state = first["result"]["requestState"].as_str().unwrap().to_owned();
    let served = session.calls_served();
    for bad in [
        format!("{state}-TAMPERED"),
        "garbage".into(),
        state.replacen('e', "f", 1),
    ] {
        let (status, refused) = stateless_call(
            &mut conn,
            &session,
            json!({"name": "greet", "requestState": bad}),
            caps.clone(),
        );
        assert_eq!(
            (status, refused["error"]["code"].as_i64()),
            (400, Some(-32602))
        );
    }
    let (_, foreign) = stateless_call(
        &mut conn,
        &session,
        json!({"name": "ask_model", "requestState": state}),
        json!({"sampling": {}}),
    );
    assert!(foreign["error"]["message"]
        .as_str()
        .unwrap()
        .contains("another tool call"));
    assert_eq!(
        session.calls_served(),
        served,
        "no refused retry ran the handler"
    );
    let (_, bad_responses) = stateless_call(
        &mut conn,
        &session,
        json!({"name": "greet", "inputResponses": 7}),
        caps,
    );
    assert_eq!(bad_responses["error"]["code"], -32602);
}

#[test]
fn input_requests_name_their_keys_and_only_ask_what_the_client_declared() {
    let host = ToolHost::bind(HostConfig::default()).unwrap();
    let surface = StaticSurface::new()
        .tool(Tool::new("both", "Asks what it may."), |_, ctx| {
            let mut asks = Vec::new();
            if ctx.can_elicit() {
                asks.push(InputRequest::elicit("name?", name_form()).key("who"));
            }
            if ctx.can_sample() {
                asks.push(
                    InputRequest::sample(json!({"messages": [], "maxTokens": 5})).key("think"),
                );
            }
            match ctx.ask(asks) {
                Ok(answers) => ToolOutcome::text(format!("{} answers", answers.len())),
                Err(err) => err.into(),
            }
        })
        .unwrap();
    let session = host.open_session(surface);
    let mut conn = Conn::open(host.local_addr()).unwrap();
    let (_, first) = stateless_call(
        &mut conn,
        &session,
        json!({"name": "both"}),
        json!({"sampling": {}}),
    );
    let keys: Vec<&String> = first["result"]["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(keys, ["think"]);
}

#[test]
fn a_schema_mcp_does_not_allow_for_elicitation_is_never_sent() {
    let host = ToolHost::bind(HostConfig::default()).unwrap();
    let seen = Arc::new(Mutex::new(None));
    let sink = Arc::clone(&seen);
    let surface = StaticSurface::new()
        .tool(
            Tool::new("nested", "Asks for a nested object."),
            move |_, ctx| {
                let schema =
                    json!({"type": "object", "properties": {"address": {"type": "object"}}});
                let answer = ctx.elicit("address?", schema);
                *sink.lock().unwrap() = Some(answer.clone());
                answer.map_or_else(Into::into, |_| ToolOutcome::text("?"))
            },
        )
        .unwrap();
    let session = host.open_session(surface);
    let mut client = stateful(&host, &session, json!({"elicitation": {}}));
    let reply = client.post(
        &json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "nested"}}),
    );
    assert_eq!(reply.header("content-type"), Some("application/json"));
    assert!(matches!(
        seen.lock().unwrap().take(),
        Some(Err(AskError::InvalidRequest(_)))
    ));
}

#[test]
fn when_one_question_of_an_ask_fails_the_others_are_withdrawn_and_it_is_not() {
    let host = ToolHost::bind(HostConfig::default()).unwrap();
    let surface = StaticSurface::new()
        .tool(Tool::new("two", "Asks two questions at once."), |_, ctx| {
            let sample = json!({"messages": [{"role": "user", "content": {"type": "text", "text": "?"}}], "maxTokens": 5});
            match ctx.ask(vec![InputRequest::elicit("Name?", name_form()), InputRequest::sample(sample)]) {
                Ok(answers) => ToolOutcome::text(format!("{answers:?}")),
                Err(err) => err.into(),
            }
        })
        .unwrap();
    let session = host.open_session(surface);
    let mut client = stateful(&host, &session, json!({"elicitation": {}, "sampling": {}}));
    let mut events = start_call(&host, &session, &client, "two");
    let first = events.next_message().unwrap()["id"].clone();
    let second = events.next_message().unwrap()["id"].clone();
    let refusal = client
        .post(&json!({"jsonrpc": "2.0", "id": first, "error": {"code": -1, "message": "no"}}));
    assert_eq!(refusal.status, 202);
    let reason = events.cancellation_of(&second);
    assert!(
        reason.contains("refused") && reason.contains("no"),
        "{reason}"
    );
    let last = events.next_message().unwrap();
    assert_eq!(
        last["id"], 50,
        "the refused question itself is not cancelled: {last}"
    );
    assert_eq!(last["result"]["isError"], true);
    assert_eq!(
        answer(
            &mut client,
            &second,
            json!({"role": "assistant", "content": {"type": "text", "text": "x"}, "model": "m"})
        ),
        400,
        "the withdrawn question takes no answer"
    );
}

#[test]
fn answers_count_only_under_the_state_of_the_round_that_asked_them() {
    let (host, session, _seen) = host(HostConfig::default());
    let mut conn = Conn::open(host.local_addr()).unwrap();
    let caps = json!({"elicitation": {}});
    let (_, first) = stateless_call(&mut conn, &session, json!({"name": "greet"}), caps.clone());
    let result = &first["result"];
    let key = result["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .next()
        .unwrap()
        .clone();
    let state = result["requestState"].as_str().unwrap().to_owned();
    let answer = json!({"action": "accept", "content": {"name": "Mallory"}});

    // An answer with no state at all is ignored, not refused (SEP-2322:
    // what a server does not recognise it ignores): the handler runs
    // without it and asks its question afresh.
    let (status, stateless) = stateless_call(
        &mut conn,
        &session,
        json!({"name": "greet", "inputResponses": {key.clone(): answer.clone()}}),
        caps.clone(),
    );
    assert_eq!(status, 200, "{stateless}");
    assert!(stateless.get("error").is_none(), "{stateless}");
    assert_eq!(stateless["result"]["resultType"], "input_required");
    assert!(stateless["result"]["inputRequests"]
        .as_object()
        .unwrap()
        .contains_key(&key));
    assert_ne!(stateless["result"]["content"][0]["text"], "Hello, Mallory!");
    // ...as is an answer to a question the signed round did not ask: only
    // the asked key counts.
    let (status, unasked) = stateless_call(
        &mut conn,
        &session,
        json!({"name": "greet", "requestState": state,
               "inputResponses": {"confirm": answer.clone()}}),
        caps.clone(),
    );
    assert_eq!(status, 200, "{unasked}");
    assert_eq!(
        unasked["result"]["resultType"], "input_required",
        "{unasked}"
    );

    // The asked key under its own state is answered as before, an extra
    // key beside it changing nothing.
    let (_, again) = stateless_call(&mut conn, &session, json!({"name": "greet"}), caps.clone());
    let state = again["result"]["requestState"].as_str().unwrap().to_owned();
    let (_, done) = stateless_call(
        &mut conn,
        &session,
        json!({"name": "greet", "requestState": state,
               "inputResponses": {key: answer, "confirm": {"action": "accept"}}}),
        caps,
    );
    assert_eq!(done["result"]["content"][0]["text"], "Hello, Mallory!");
}

#[test]
fn one_session_spending_its_request_states_cannot_refuse_another_sessions_rounds() {
    let host = ToolHost::bind(HostConfig::default()).unwrap();
    let greeter = || {
        StaticSurface::new()
            .tool(
                Tool::new("greet", "Greets the user by name."),
                |_, ctx| match ctx.elicit("What is your name?", name_form()) {
                    Ok(Elicitation::Accept(form)) => ToolOutcome::text(format!(
                        "Hello, {}!",
                        form["name"].as_str().unwrap_or("?")
                    )),
                    Ok(other) => ToolOutcome::declined(format!("no name: {other:?}")),
                    Err(err) => err.into(),
                },
            )
            .unwrap()
    };
    let (spender, other) = (host.open_session(greeter()), host.open_session(greeter()));
    let caps = json!({"elicitation": {}});
    let mut conn = Conn::open(host.local_addr()).unwrap();
    let call = |conn: &mut Conn, session: &ToolSession, params: Value| {
        toolhost_tests::stateless_post(
            conn,
            &session.authorization(),
            9,
            "tools/call",
            params,
            caps.clone(),
        )
        .json()
    };

    // One bearer holder retries without answering, round after round:
    // each retry spends a state and is asked again with a fresh one.
    let first = call(&mut conn, &spender, json!({"name": "greet"}));
    let mut state = first["result"]["requestState"].as_str().unwrap().to_owned();
    let mut spent = 0;
    let refusal = loop {
        let retry = call(
            &mut conn,
            &spender,
            json!({"name": "greet", "requestState": state}),
        );
        match retry["result"]["requestState"].as_str() {
            Some(next) => state = next.to_owned(),
            None => break retry,
        }
        spent += 1;
        assert!(spent <= 20_000, "never refused");
    };
    assert_eq!(spent, 4096, "its own set holds 4096");
    let message = refusal["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("too many multi-round tool calls are under way in this session"),
        "{refusal}"
    );
    // Its next round is refused as well…
    let again = call(&mut conn, &spender, json!({"name": "greet"}));
    let state = again["result"]["requestState"].as_str().unwrap();
    let refused = call(
        &mut conn,
        &spender,
        json!({"name": "greet", "requestState": state}),
    );
    assert_eq!(refused["error"]["code"], -32602, "{refused}");

    // …while the other session's multi-round call completes.
    let first = call(&mut conn, &other, json!({"name": "greet"}));
    let result = &first["result"];
    assert_eq!(result["resultType"], "input_required");
    let key = result["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .next()
        .unwrap();
    let done = call(
        &mut conn,
        &other,
        json!({"name": "greet", "requestState": result["requestState"],
            "inputResponses": {key: {"action": "accept", "content": {"name": "Ada"}}}}),
    );
    schema::assert_valid("2026-07-28", "JSONRPCMessage", &done);
    assert_eq!(
        done["result"]["content"][0]["text"], "Hello, Ada!",
        "{done}"
    );
}
