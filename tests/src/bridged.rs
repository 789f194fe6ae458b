//! What the tests of bridged MCP servers share, over HTTP (`tests/tests/bridge.rs`)
//! and stdio (`tests/tests/bridge_stdio.rs`): the application's own tool, the
//! gateway surface of it and one server's layer, the check of the
//! official Python SDK server's tools seen through such a gateway, the
//! check that the agent's cancellation reaches the server's handler, and
//! the check that a server's withdrawn question is withdrawn from the agent,
//! the check that a server's list change reaches the agent's stream, and
//! the count of the list changes an agent hears while a server comes and
//! goes.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::thread;
use std::time::Duration;

use serde_json::json;
use toolhost::client::{CallOptions, CancelHandle, Client, ClientError};
use toolhost::{
    AskError, Elicitation, HostConfig, LayeredSurface, McpServerLayer, StaticSurface, Tool,
    ToolHost, ToolOutcome, ToolRegistry, ToolSession,
};

use crate::{call_stream, get_stream, wait_for, Item, McpClient};

/// The `notifications/tools/list_changed` an agent of `session` (on
/// `host`, whose keep-alive must come more often than every 10 s, the
/// stream's read timeout) hears on its standalone stream, counted from the
/// moment this returns — the stream is open by then — until the session
/// closes. The host sends one for several changes that come together, so
/// a count says that the agent heard of a change, not how many there were.
pub fn count_list_changes(host: &ToolHost, session: &ToolSession) -> Arc<AtomicUsize> {
    let mut agent = McpClient::for_session(host, session);
    agent.initialize("2025-11-25");
    let mut events = get_stream(host, session, agent.session_id.as_deref().unwrap());
    let heard = Arc::new(AtomicUsize::new(0));
    let count = Arc::clone(&heard);
    thread::spawn(move || loop {
        match events.next_item() {
            Item::Message(message) if message["method"] == "notifications/tools/list_changed" => {
                count.fetch_add(1, Ordering::SeqCst);
            }
            Item::End => return,
            _ => {}
        }
    });
    heard
}

/// The names of the tools `client` is offered now, in order.
pub fn tool_names(client: &mut Client) -> Vec<String> {
    client
        .list_tools()
        .unwrap()
        .into_iter()
        .map(|t| t.name().to_owned())
        .collect()
}

/// The application's own `echo` (of [`app`]) answers `text` at once.
pub fn echo_answers(client: &mut Client, text: &str) {
    assert_eq!(
        client
            .call_tool("echo", json!({"text": text}))
            .unwrap()
            .text(),
        text
    );
}

/// The application's own tool: `echo`, which returns its `text`.
pub fn app() -> StaticSurface {
    StaticSurface::new()
        .tool(Tool::new("echo", "Echoes text."), |args, _| {
            ToolOutcome::text(args["text"].as_str().unwrap_or(""))
        })
        .unwrap()
}

/// The application's tools first, then `layer` (named `remote`).
pub fn gateway(layer: McpServerLayer) -> LayeredSurface {
    LayeredSurface::builder()
        .layer("app", app())
        .layer("remote", layer)
        .build()
}

/// Checks, through `client` of a gateway whose layer is the official
/// Python SDK server (`tests/interop/python_server/server.py`) named
/// `py`: its tools listed beside `echo`, a structured result, progress
/// relayed, a tool error passed through, and the local tool still
/// serving. `context` names the case in failures.
pub fn check_python_sdk_bridged(client: &mut Client, context: &str) {
    let mut listed: Vec<String> = client
        .list_tools()
        .unwrap()
        .into_iter()
        .map(|t| t.name().to_owned())
        .collect();
    listed.sort_unstable();
    assert_eq!(
        listed,
        [
            "echo",
            "py_add",
            "py_cancelled_waits",
            "py_count",
            "py_count_reconnect",
            "py_echo",
            "py_fail",
            "py_ping_alone",
            "py_ping_on_call",
            "py_toggle_tool",
            "py_wait"
        ],
        "{context}"
    );
    let added = client.call_tool("py_add", json!({"a": 2, "b": 3})).unwrap();
    assert_eq!(
        added.structured_content,
        Some(json!({"sum": 5.0})),
        "{context}"
    );
    let mut reports = Vec::new();
    let counted = client
        .call_tool_with(
            "py_count",
            json!({"steps": 3}),
            CallOptions::new().on_progress(|p| reports.push(p.progress)),
        )
        .unwrap();
    assert_eq!(counted.text(), "counted 3", "{context}");
    assert_eq!(reports, [1.0, 2.0, 3.0], "{context}");
    let failed = client
        .call_tool("py_fail", json!({"why": "on purpose"}))
        .unwrap();
    assert!(
        failed.is_error && failed.text().contains("on purpose"),
        "{context}: {}",
        failed.text()
    );
    assert_eq!(
        client
            .call_tool("echo", json!({"text": "local"}))
            .unwrap()
            .text(),
        "local",
        "{context}"
    );
}

/// Checks, through clients of `session`, a gateway's whose layer `py` is
/// the Python SDK server in an MCP session (2025-11-25, where a server may
/// ask the client): its tools that ping their client on the call's stream
/// and about no call both succeed — the layer's client answers both pings
/// — and a list change the server announces on the call's stream, or
/// alone, reaches the agent's listing well before the layer's own 30 s
/// refresh would. `context` names the case.
///
/// `alone`: whether the layer's client hears what the server sends about
/// no call (a stdio server's does; the gateway's HTTP clients do not hold
/// the standalone stream, so there only the call's own stream is checked).
pub fn check_python_sdk_speaks_bridged(session: &ToolSession, context: &str, alone: bool) {
    let mut client = session.client().unwrap();
    let on_call = client.call_tool("py_ping_on_call", json!({})).unwrap();
    assert_eq!(on_call.text(), "pinged on the call's stream", "{context}");
    if alone {
        let alone = client
            .call_tool("py_ping_alone", json!({"seconds": 10}))
            .unwrap();
        assert!(!alone.is_error, "{context}: {}", alone.text());
        assert_eq!(alone.text(), "pinged alone", "{context}");
    }
    let listed = || {
        let tools = session.client().unwrap().list_tools().unwrap();
        tools.iter().any(|t| t.name() == "py_toggled")
    };
    assert!(!listed(), "{context}");
    // The tool is taken away again either way: the server is shared by
    // the cases that follow.
    let toggles: &[(bool, &str)] = if alone {
        &[(true, "added"), (false, "removed")]
    } else {
        &[(true, "added"), (true, "removed")]
    };
    for &(on_call, done) in toggles {
        let toggled = client
            .call_tool("py_toggle_tool", json!({"on_call": on_call}))
            .unwrap();
        assert_eq!(toggled.text(), done, "{context}");
        wait_for(&format!("{context}: py_toggled {done}"), || {
            listed() == (done == "added")
        });
    }
}

/// What the remote `greet` tool's question came to, as its handler saw it.
pub type Asked = mpsc::Receiver<Result<Elicitation, AskError>>;

/// A remote host whose calls end at `deadline` and whose `greet` tool asks
/// for a name and greets with it; what each ask came to goes to the
/// receiver.
pub fn asking_remote(deadline: Duration) -> (ToolHost, ToolSession, Asked) {
    let host = ToolHost::bind(
        HostConfig::default()
            .keep_alive(Duration::from_secs(60))
            .call_timeout(deadline),
    )
    .unwrap();
    let (tx, asked) = mpsc::channel();
    let tx = Mutex::new(tx);
    let surface = StaticSurface::new()
        .tool(Tool::new("greet", "Asks a name."), move |_, ctx| {
            let form = json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]});
            let answer = ctx.elicit("Your name?", form);
            let _ = tx.lock().unwrap().send(answer.clone());
            match answer {
                Ok(Elicitation::Accept(form)) => ToolOutcome::text(format!("Hello, {}!", form["name"])),
                Ok(_) => ToolOutcome::declined("no name"),
                Err(err) => err.into(),
            }
        })
        .unwrap();
    let session = host.open_session(surface);
    (host, session, asked)
}

/// Checks, as an agent that declared elicitation, of a gateway whose layer
/// (`layer`, named `remote`) bridges an [`asking_remote`] host, that the
/// server's withdrawal of its question reaches the agent: the question
/// relayed, the remote deadline passing while nobody answers, the relayed
/// question cancelled (`notifications/cancelled` naming its id, with the
/// server's reason) before the call's result, and a late answer refused.
/// And its negative: a question answered in time is never cancelled, and
/// the answer reaches the remote handler.
pub fn check_withdrawal_relayed(layer: McpServerLayer, asked: &Asked) {
    // A deadline of its own, so that a withdrawal lost on the way fails
    // the check (a cancellation for the wrong reason) instead of hanging.
    let local_host = ToolHost::bind(
        HostConfig::default()
            .keep_alive(Duration::from_secs(60))
            .call_timeout(Duration::from_secs(20)),
    )
    .unwrap();
    let session = local_host.open_session(gateway(layer));
    let (host, session) = (&local_host, &session);
    let mut agent = McpClient::for_session(host, session);
    agent.initialize_with("2025-11-25", json!({"elicitation": {}}));
    let mcp_session = agent.session_id.clone().unwrap();

    let mut events = call_stream(host, session, &mcp_session, 70, "remote_greet");
    let question = events.next_message().expect("the relayed question");
    crate::schema::assert_valid("2025-11-25", "ElicitRequest", &question);
    assert_eq!(question["params"]["message"], "Your name?");
    let reason = events.cancellation_of(&question["id"]);
    assert!(
        reason.contains("withdrawn by the MCP server") && reason.contains("deadline passed"),
        "the server's own reason is passed on: {reason}"
    );
    let last = events.next_message().expect("the call's result");
    assert_eq!(last["id"], 70, "{last}");
    assert_eq!(last["result"]["isError"], true, "{last}");
    assert_eq!(events.next_item(), Item::End);
    let first = asked.recv_timeout(Duration::from_secs(10)).unwrap();
    assert!(
        matches!(first, Err(AskError::Cancelled(_) | AskError::TimedOut)),
        "the remote handler stopped waiting at its deadline, unanswered: {first:?}"
    );
    let late = agent
        .post(&json!({"jsonrpc": "2.0", "id": question["id"], "result": {"action": "decline"}}));
    assert_eq!(late.status, 400, "the withdrawn question takes no answer");

    let mut events = call_stream(host, session, &mcp_session, 71, "remote_greet");
    let question = events.next_message().expect("the relayed question");
    let answered = agent.post(&json!({"jsonrpc": "2.0", "id": question["id"],
        "result": {"action": "accept", "content": {"name": "Ada"}}}));
    assert_eq!(answered.status, 202);
    let last = events.next_message().expect("the call's result");
    assert_eq!(
        last["id"], 71,
        "no cancellation comes before the result of an answered question: {last}"
    );
    assert_eq!(last["result"]["content"][0]["text"], "Hello, \"Ada\"!");
    assert!(matches!(
        asked.recv_timeout(Duration::from_secs(10)).unwrap(),
        Ok(Elicitation::Accept(_))
    ));
}

/// Calls the bridged `remote_wait` through `client` and cancels the call
/// once the server's handler runs (`started`): the handler must not have
/// seen a cancellation before the agent's (`saw_cancel`), the agent's call
/// ends cancelled, and then the handler sees it.
pub fn check_cancellation_relayed(
    client: &mut Client,
    started: &(dyn Fn() -> bool + Sync),
    saw_cancel: &(dyn Fn() -> bool + Sync),
) {
    let cancel = CancelHandle::new();
    thread::scope(|scope| {
        let stopper = scope.spawn(|| {
            wait_for("the remote handler to start", started);
            thread::sleep(Duration::from_millis(50));
            assert!(!saw_cancel(), "cancelled before the agent cancelled");
            cancel.cancel();
        });
        let outcome = client.call_tool_with(
            "remote_wait",
            json!({}),
            CallOptions::new().cancel_with(&cancel),
        );
        assert!(
            matches!(outcome, Err(ClientError::Cancelled)),
            "{outcome:?}"
        );
        stopper.join().unwrap();
    });
    wait_for("the remote handler to see the cancellation", saw_cancel);
}

/// Serves [`gateway`] of `layer`, whose server serves `registry`, to an
/// agent speaking 2025-11-25 with its GET stream open; waits `settle` (for
/// a layer that must first open its own stream to the server), registers
/// `late` on the server and checks that the agent hears the list change and
/// then lists `remote_late` beside `echo`.
pub fn check_list_change_relayed(registry: &ToolRegistry, layer: McpServerLayer, settle: Duration) {
    let local_host =
        ToolHost::bind(HostConfig::default().keep_alive(Duration::from_secs(60))).unwrap();
    let session = local_host.open_session(gateway(layer));
    let mut agent = McpClient::for_session(&local_host, &session);
    agent.initialize("2025-11-25");
    let mut events = get_stream(&local_host, &session, agent.session_id.as_deref().unwrap());
    assert_eq!(agent.tool_names(), ["echo"]);
    thread::sleep(settle);
    registry
        .tool(Tool::new("late", "Arrives late."), |_, _| {
            Ok::<_, String>(json!({"ok": true}))
        })
        .unwrap();
    let message = events.next_message().expect("a list change");
    assert_eq!(message["method"], "notifications/tools/list_changed");
    assert_eq!(agent.tool_names(), ["echo", "remote_late"]);
}
