//! Tools that ask the client back (elicitation, sampling, roots): the
//! client's handlers answer in both eras, over input-required rounds in
//! 2026-07-28 and as JSON-RPC responses on a stateful stream.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use toolhost::client::{CallOptions, Client, ClientError, Era, Refusal};
use toolhost::{
    AskError, Elicitation, HostConfig, InputRequest, StaticSurface, Tool, ToolHost, ToolOutcome,
};
use toolhost_tests::schema;

use crate::scripted::{
    event, handshake, ok, result, scripted, sse_stream, stateful, Reply, Seen, HANG_UP,
};
use crate::ERAS;

fn name_form() -> Value {
    json!({"type": "object", "properties": {"name": {"type": "string", "minLength": 1}}, "required": ["name"]})
}

/// Runs `f` on an ask's outcome, recording every error other than the
/// `InputRequired` of a 2026-07-28 round, so tests see what the tool saw.
type Faults = Arc<Mutex<Vec<AskError>>>;

fn recorded<T>(faults: &Faults, outcome: Result<T, AskError>) -> Result<T, ToolOutcome> {
    outcome.map_err(|err| {
        if err != AskError::InputRequired {
            faults.lock().unwrap().push(err.clone());
        }
        err.into()
    })
}

/// A host whose tools ask the client back: `greet` elicits a name,
/// `profile` a name and then an age (two rounds in 2026-07-28), `context`
/// samples and lists roots in one ask, `insist` asks something new every
/// run. Also returns the ask errors the tools saw.
fn asking_host() -> (ToolHost, toolhost::ToolSession, Faults) {
    let host = ToolHost::bind(HostConfig::default()).unwrap();
    let faults: Faults = Arc::default();
    let (greet, profile, context, insist) = (
        Arc::clone(&faults),
        Arc::clone(&faults),
        Arc::clone(&faults),
        Arc::clone(&faults),
    );
    let runs = AtomicUsize::new(0);
    let surface = StaticSurface::new()
        .tool(Tool::new("greet", "Greets the user by name."), move |_, ctx| {
            match recorded(&greet, ctx.elicit("What is your name?", name_form())) {
                Ok(Elicitation::Accept(form)) => {
                    ToolOutcome::text(format!("Hello, {}!", form["name"].as_str().unwrap_or("?")))
                }
                Ok(other) => ToolOutcome::declined(format!("no name: {other:?}")),
                Err(outcome) => outcome,
            }
        })
        .unwrap()
        .tool(Tool::new("profile", "Asks a name, then an age."), move |_, ctx| {
            let name = match recorded(&profile, ctx.elicit("Name?", name_form())) {
                Ok(Elicitation::Accept(form)) => form["name"].as_str().unwrap_or("?").to_owned(),
                Ok(_) => return ToolOutcome::declined("no name"),
                Err(outcome) => return outcome,
            };
            let age_form = json!({"type": "object", "properties": {"age": {"type": "integer"}}, "required": ["age"]});
            match recorded(&profile, ctx.elicit(&format!("How old is {name}?"), age_form)) {
                Ok(Elicitation::Accept(form)) => ToolOutcome::text(format!("{name} is {}", form["age"])),
                Ok(_) => ToolOutcome::declined("no age"),
                Err(outcome) => outcome,
            }
        })
        .unwrap()
        .tool(Tool::new("context", "Samples and lists roots at once."), move |_, ctx| {
            let asks = vec![
                InputRequest::sample(json!({"messages": [{"role": "user", "content": {"type": "text", "text": "2+2?"}}], "maxTokens": 5})),
                InputRequest::list_roots(),
            ];
            match recorded(&context, ctx.ask(asks)) {
                Ok(answers) => ToolOutcome::text(format!(
                    "{} in {}",
                    answers[0]["content"]["text"].as_str().unwrap_or("?"),
                    answers[1]["roots"][0]["uri"].as_str().unwrap_or("?")
                )),
                Err(outcome) => outcome,
            }
        })
        .unwrap()
        .tool(Tool::new("insist", "Never satisfied."), move |_, ctx| {
            // A new key every run: no answer ever fits.
            let key = format!("q{}", runs.fetch_add(1, Ordering::SeqCst));
            match recorded(&insist, ctx.ask(vec![InputRequest::elicit("Again?", name_form()).key(key)])) {
                Ok(_) => ToolOutcome::text("satisfied"),
                Err(outcome) => outcome,
            }
        })
        .unwrap();
    let session = host.open_session(surface);
    (host, session, faults)
}

/// A client of `era` declaring `capabilities`. A short timeout: a question
/// left unanswered would otherwise hold the call for a minute.
fn asking_client(session: &toolhost::ToolSession, era: Era, capabilities: Value) -> Client {
    session
        .client_builder()
        .era(era)
        .capabilities(capabilities)
        .timeout(Duration::from_secs(10))
        .connect()
        .unwrap()
}

fn accept(content: Value) -> Result<Value, Refusal> {
    Ok(json!({"action": "accept", "content": content}))
}

#[test]
fn a_tool_that_elicits_a_name_gets_the_handlers_answer_in_both_eras() {
    let (_host, session, faults) = asking_host();
    for (era, runs) in [(Era::Stateful, 1), (Era::Stateless, 2)] {
        let served = session.calls_served();
        let mut client = asking_client(&session, era, json!({"elicitation": {}}));
        let mut asked = Vec::new();
        let result = client
            .call_tool_with(
                "greet",
                json!({}),
                CallOptions::new().on_request(|request| {
                    asked.push(request.clone());
                    accept(json!({"name": "Ada"}))
                }),
            )
            .unwrap();
        assert_eq!(
            (result.text().as_str(), result.is_error),
            ("Hello, Ada!", false),
            "{era:?}"
        );
        assert_eq!(asked.len(), 1, "{era:?}: one question, asked once");
        assert_eq!(asked[0].method, "elicitation/create");
        assert_eq!(asked[0].params["message"], "What is your name?");
        assert_eq!(asked[0].params["requestedSchema"], name_form());
        assert_eq!(
            session.calls_served() - served,
            runs,
            "{era:?}: 2026-07-28 runs the tool again with the answer"
        );
        // The client stays usable for the next call.
        assert_eq!(client.list_tools().unwrap().len(), 4);
    }
    assert!(faults.lock().unwrap().is_empty());

    // Without the capability declared, the host never asks: the handler is
    // not called and the tool sees why.
    for era in ERAS {
        let mut client = asking_client(&session, era, json!({}));
        let mut called = false;
        let result = client
            .call_tool_with(
                "greet",
                json!({}),
                CallOptions::new().on_request(|_| {
                    called = true;
                    accept(json!({"name": "Ada"}))
                }),
            )
            .unwrap();
        assert!(result.is_error && !called, "{era:?}: {result:?}");
        assert!(result
            .text()
            .contains("did not declare the elicitation capability"));
    }
}

#[test]
fn a_tool_that_asks_twice_is_answered_twice_in_both_eras_over_two_rounds_in_2026_07_28() {
    let (_host, session, faults) = asking_host();
    for (era, runs) in [(Era::Stateful, 1), (Era::Stateless, 3)] {
        let served = session.calls_served();
        let mut client = asking_client(&session, era, json!({"elicitation": {}}));
        let mut messages = Vec::new();
        let result = client
            .call_tool_with(
                "profile",
                json!({}),
                CallOptions::new().on_request(|request| {
                    let message = request.params["message"].as_str().unwrap().to_owned();
                    let answer = if message == "Name?" {
                        accept(json!({"name": "Ada"}))
                    } else {
                        accept(json!({"age": 36}))
                    };
                    messages.push(message);
                    answer
                }),
            )
            .unwrap();
        assert_eq!(result.text(), "Ada is 36", "{era:?}: {result:?}");
        assert_eq!(messages, ["Name?", "How old is Ada?"], "{era:?}");
        assert_eq!(session.calls_served() - served, runs, "{era:?}");
    }
    assert!(faults.lock().unwrap().is_empty());
}

#[test]
fn sampling_and_roots_asked_together_are_both_answered_in_both_eras() {
    let (_host, session, faults) = asking_host();
    for era in ERAS {
        let mut client = asking_client(&session, era, json!({"sampling": {}, "roots": {}}));
        let mut methods = Vec::new();
        let result = client
            .call_tool_with(
                "context",
                json!({}),
                CallOptions::new().on_request(|request| {
                    methods.push(request.method.clone());
                    Ok(match request.method.as_str() {
                        "sampling/createMessage" => json!({"role": "assistant", "model": "rig",
                            "content": {"type": "text", "text": "4"}}),
                        _ => json!({"roots": [{"uri": "file:///work", "name": "work"}]}),
                    })
                }),
            )
            .unwrap();
        assert_eq!(result.text(), "4 in file:///work", "{era:?}: {result:?}");
        methods.sort();
        assert_eq!(methods, ["roots/list", "sampling/createMessage"], "{era:?}");
    }
    assert!(faults.lock().unwrap().is_empty());
}

#[test]
fn a_refusal_reaches_a_stateful_tool_as_refused_and_ends_a_stateless_call_before_a_retry() {
    let (_host, session, faults) = asking_host();
    let refuse =
        || CallOptions::new().on_request(|_| Err(Refusal::new("the user closed the dialog")));

    let mut client = asking_client(&session, Era::Stateful, json!({"elicitation": {}}));
    let result = client.call_tool_with("greet", json!({}), refuse()).unwrap();
    assert!(result.is_error, "{result:?}");
    assert!(
        result.text().contains("the user closed the dialog"),
        "{result:?}"
    );
    assert_eq!(
        faults.lock().unwrap().drain(..).collect::<Vec<_>>(),
        [AskError::Refused {
            code: -1,
            message: "the user closed the dialog".into()
        }]
    );

    let served = session.calls_served();
    let mut client = asking_client(&session, Era::Stateless, json!({"elicitation": {}}));
    let err = client
        .call_tool_with("greet", json!({}), refuse())
        .unwrap_err();
    assert!(
        matches!(&err, ClientError::Unanswered { method, cause: None, .. } if method == "elicitation/create"),
        "{err:?}"
    );
    let text = err.to_string();
    assert!(
        text.contains("the user closed the dialog") && text.contains("decline"),
        "{text}"
    );
    assert_eq!(session.calls_served() - served, 1, "no retry was sent");
    assert!(faults.lock().unwrap().is_empty());
}

#[test]
fn a_call_without_a_handler_is_answered_method_not_found_or_fails_saying_so() {
    let (_host, session, faults) = asking_host();
    // Stateful: the question is answered with -32601 at once, and the tool
    // reports it; the call does not wait for a deadline.
    let mut client = asking_client(&session, Era::Stateful, json!({"elicitation": {}}));
    let result = client.call_tool("greet", json!({})).unwrap();
    assert!(result.is_error, "{result:?}");
    let seen = faults.lock().unwrap().drain(..).collect::<Vec<_>>();
    assert!(
        matches!(&seen[..], [AskError::Refused { code: -32601, message }] if message.contains("on_request")),
        "{seen:?}"
    );
    assert!(
        client.call_tool("greet", json!({})).unwrap().is_error,
        "still usable"
    );
    faults.lock().unwrap().clear();

    // 2026-07-28: nothing can carry "no answer", so the call fails, once.
    let served = session.calls_served();
    let mut client = asking_client(&session, Era::Stateless, json!({"elicitation": {}}));
    let err = client.call_tool("greet", json!({})).unwrap_err();
    let text = err.to_string();
    assert!(
        matches!(&err, ClientError::Unanswered { method, .. } if method == "elicitation/create")
            && text.contains("CallOptions::on_request"),
        "{text}"
    );
    assert_eq!(session.calls_served() - served, 1);
    assert!(faults.lock().unwrap().is_empty());
}

#[test]
fn a_tool_that_keeps_asking_is_given_up_after_eight_rounds() {
    let (_host, session, _) = asking_host();
    let served = session.calls_served();
    let mut client = asking_client(&session, Era::Stateless, json!({"elicitation": {}}));
    let mut answered = 0;
    let err = client
        .call_tool_with(
            "insist",
            json!({}),
            CallOptions::new().on_request(|_| {
                answered += 1;
                accept(json!({"name": "Ada"}))
            }),
        )
        .unwrap_err();
    assert!(
        matches!(&err, ClientError::Unanswered { .. }) && err.to_string().contains("8 rounds"),
        "{err}"
    );
    assert_eq!(answered, 8);
    assert_eq!(
        session.calls_served() - served,
        9,
        "the first call and eight retries"
    );
}

#[test]
fn an_input_required_round_is_retried_as_the_same_call_with_the_answers_and_the_state() {
    let question = json!({"method": "elicitation/create", "params": {"message": "Name?",
        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}}});
    let round = json!({"resultType": "input_required", "requestState": "state-1",
        "inputRequests": {"who": question.clone()}});
    schema::assert_valid("2026-07-28", "InputRequiredResult", &round);
    let server = scripted(vec![
        ok(move |seen| result(seen, round.clone())),
        ok(|seen| {
            result(
                seen,
                json!({"resultType": "complete", "content": [{"type": "text", "text": "done"}]}),
            )
        }),
    ]);
    let mut asked = Vec::new();
    let outcome = Client::builder(&server.url)
        .era(Era::Stateless)
        .capabilities(json!({"elicitation": {}}))
        .connect()
        .unwrap()
        .call_tool_with(
            "form",
            json!({"n": 1}),
            CallOptions::new().on_request(|request| {
                asked.push(request.clone());
                Ok(json!({"action": "accept", "content": {"name": "Ada"}}))
            }),
        );
    assert_eq!(outcome.unwrap().text(), "done");
    assert_eq!(asked.len(), 1);
    assert_eq!(
        (asked[0].method.as_str(), &asked[0].params),
        ("elicitation/create", &question["params"])
    );

    let (seen, _) = server.done.join().unwrap();
    let (first, retry) = (&seen[0].body, &seen[1].body);
    schema::assert_valid("2026-07-28", "CallToolRequest", retry);
    assert_ne!(first["id"], retry["id"], "a retry is a new request");
    assert_eq!(retry["params"]["name"], "form");
    assert_eq!(retry["params"]["arguments"], json!({"n": 1}));
    assert_eq!(retry["params"]["requestState"], "state-1");
    assert_eq!(
        retry["params"]["inputResponses"],
        json!({"who": {"action": "accept", "content": {"name": "Ada"}}})
    );
    assert_eq!(
        retry["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"],
        json!({"elicitation": {}})
    );
    assert!(first["params"].get("inputResponses").is_none());
    assert_eq!(seen[1].header("Mcp-Method"), Some("tools/call"));
    assert_eq!(seen[1].header("Mcp-Name"), Some("form"));
}

/// A stateful `tools/call` stream that asks `question` as request
/// `ask-1`, then drops; the call's result comes when the client resumes
/// after event `5-1`.
fn asking_stream(question: Value) -> Vec<Reply> {
    let mut script = handshake("2025-11-25");
    script.push(Box::new(move |_: &Seen| {
        let mut request = question.clone();
        request["jsonrpc"] = json!("2.0");
        request["id"] = json!("ask-1");
        let bytes = sse_stream(
            &[
                "id: 5-0\nretry: 0\ndata:\n\n".into(),
                event("5-1", &request),
            ],
            false,
        );
        [bytes, HANG_UP.to_vec()].concat()
    }));
    // The answer, on a connection of its own, which this one-connection
    // server then closes to be free for the resume.
    script.push(Box::new(|_: &Seen| {
        let accepted = b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
        [&accepted[..], HANG_UP].concat()
    }));
    script.push(Box::new(|_: &Seen| {
        sse_stream(
            &[event(
                "5-2",
                &json!({"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": "answered"}]}}),
            )],
            true,
        )
    }));
    script
}

#[test]
fn a_question_on_a_stateful_stream_is_answered_in_the_session_as_a_valid_response() {
    let question = json!({"method": "roots/list", "params": {}});
    let server = scripted(asking_stream(question));
    let mut asked = Vec::new();
    let outcome = stateful(&server.url).call_tool_with(
        "x",
        json!({}),
        CallOptions::new().on_request(|request| {
            asked.push(request.method.clone());
            Ok(json!({"roots": [{"uri": "file:///work"}]}))
        }),
    );
    assert_eq!(outcome.unwrap().text(), "answered");
    assert_eq!(asked, ["roots/list"]);

    let (seen, connections) = server.done.join().unwrap();
    assert_eq!(connections, 3, "the call, the answer, the resume");
    let answer = &seen[3];
    assert_eq!(answer.method, "POST");
    schema::assert_valid("2025-11-25", "JSONRPCResponse", &answer.body);
    schema::assert_valid("2025-11-25", "ListRootsResult", &answer.body["result"]);
    assert_eq!(answer.body["id"], "ask-1", "the server's id, as sent");
    assert_eq!(answer.header("Mcp-Session-Id"), Some("s-1"));
    assert_eq!(answer.header("MCP-Protocol-Version"), Some("2025-11-25"));
    assert_eq!(answer.header("Authorization"), Some("Bearer secret"));
    assert_eq!(seen[4].header("Last-Event-ID"), Some("5-1"));
}

#[test]
fn a_refused_or_unhandled_stateful_question_is_answered_with_a_json_rpc_error() {
    for (options, code) in [
        (
            CallOptions::new().on_request(|_| Err(Refusal::new("no sampling here"))),
            -1,
        ),
        (CallOptions::new(), -32601),
    ] {
        let question =
            json!({"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 1}});
        let server = scripted(asking_stream(question));
        let outcome = stateful(&server.url).call_tool_with("x", json!({}), options);
        assert_eq!(outcome.unwrap().text(), "answered");
        let (seen, _) = server.done.join().unwrap();
        let answer = &seen[3].body;
        schema::assert_valid("2025-11-25", schema::error_definition("2025-11-25"), answer);
        assert_eq!(
            (&answer["id"], &answer["error"]["code"]),
            (&json!("ask-1"), &json!(code))
        );
    }
}

#[test]
fn a_ping_on_a_calls_stream_is_answered_with_an_empty_result_whatever_handler_the_call_has() {
    let handled = AtomicUsize::new(0);
    for options in [
        CallOptions::new(),
        CallOptions::new().on_request(|_| {
            handled.fetch_add(1, Ordering::SeqCst);
            Err(Refusal::new("only questions here"))
        }),
    ] {
        let server = scripted(asking_stream(json!({"method": "ping"})));
        let outcome = stateful(&server.url).call_tool_with("x", json!({}), options);
        assert_eq!(outcome.unwrap().text(), "answered");
        let (seen, _) = server.done.join().unwrap();
        let answer = &seen[3].body;
        schema::assert_valid("2025-11-25", "JSONRPCResponse", answer);
        // MCP: every peer answers ping; no handler is asked.
        assert_eq!(answer["id"], "ask-1");
        assert_eq!(answer["result"], json!({}));
    }
    assert_eq!(handled.load(Ordering::SeqCst), 0);
}
