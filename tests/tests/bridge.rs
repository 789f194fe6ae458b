//! Another MCP server bridged into a session: a second toolhost host plays
//! the remote server (a real MCP server over real HTTP), and the local
//! host serves its tools beside its own through an `McpServerLayer`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use serde_json::json;
use toolhost::client::{CallOptions, Client, Era};
use toolhost::{
    surface_fn, Event, HostConfig, LogLevel, McpServerLayer, StaticSurface, Tool, ToolHost,
    ToolOutcome, ToolRegistry, ToolSession,
};
use toolhost_tests::bridged::{
    asking_remote, check_cancellation_relayed, check_list_change_relayed, check_python_sdk_bridged,
    check_python_sdk_speaks_bridged, check_withdrawal_relayed, gateway, tool_names,
};
use toolhost_tests::{EventLog, McpClient};

fn host() -> ToolHost {
    ToolHost::bind(HostConfig::default().keep_alive(Duration::from_secs(60))).unwrap()
}

/// The layer for the MCP server that `remote` serves, named `remote`.
fn layer_of(remote: &ToolSession) -> toolhost::McpServerBuilder {
    McpServerLayer::builder(
        "remote",
        Client::builder(&remote.url()).header("Authorization", &remote.authorization()),
    )
}

/// [`layer_of`], speaking a stateful revision to the server.
fn stateful_layer_of(remote: &ToolSession) -> toolhost::McpServerBuilder {
    McpServerLayer::builder(
        "remote",
        Client::builder(&remote.url())
            .header("Authorization", &remote.authorization())
            .era(Era::Stateful),
    )
}

/// A remote tool that reports progress three times and returns a sum.
fn counting() -> StaticSurface {
    StaticSurface::new()
        .tool(
            Tool::new("count", "Counts to three.").input_schema(json!({
                "type": "object", "properties": {"from": {"type": "integer"}}, "required": ["from"],
            })),
            |args, ctx| {
                for step in 1..=3 {
                    ctx.progress(f64::from(step), Some(3.0), Some("counting"));
                }
                ToolOutcome::json(json!({"from": args["from"], "to": 3}))
            },
        )
        .unwrap()
}

#[test]
fn a_relayed_result_reaches_the_client_unchanged_and_loses_structured_content_before_2025_06_18() {
    let raw = json!({
        "content": [{"type": "hologram", "frames": 3}, {"type": "text", "text": "why", "annotations": {"priority": 1}}],
        "structuredContent": {"frames": 3},
        "_meta": {"trace": "t1"},
        "isError": true,
    });
    let sent = raw.clone();
    let surface = surface_fn(
        || vec![Tool::new("relay", "Relays.")],
        move |_, _, _| ToolOutcome::relayed(sent.clone()),
    );
    let host = host();
    let session = host.open_session(surface);
    for (revision, expected) in [
        ("2025-11-25", raw.clone()),
        ("2025-03-26", {
            let mut old = raw.clone();
            old.as_object_mut().unwrap().remove("structuredContent");
            old
        }),
    ] {
        let mut client = McpClient::for_session(&host, &session);
        client.initialize(revision);
        let reply = client.post(&json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
            "params": {"name": "relay", "arguments": {}}}));
        assert_eq!(reply.json()["result"], expected, "{revision}");
    }
    // A value that is no CallToolResult is never sent on.
    let broken = surface_fn(
        || vec![Tool::new("relay", "Relays.")],
        |_, _, _| ToolOutcome::relayed(json!({"text": "no content array"})),
    );
    let session = host.open_session(broken);
    let result = session
        .client()
        .unwrap()
        .call_tool("relay", json!({}))
        .unwrap();
    assert!(result.is_error);
    assert!(!result.raw.to_string().contains("no content array"));
}

#[test]
fn the_remote_tools_are_listed_qualified_and_a_call_is_forwarded_with_its_progress() {
    let remote_host = host();
    let remote = remote_host.open_session(counting());
    let local_host = host();
    let session = local_host.open_session(gateway(layer_of(&remote).connect().unwrap()));
    let mut client = session.client().unwrap();
    assert_eq!(tool_names(&mut client), ["echo", "remote_count"]);

    let mut reports = Vec::new();
    let result = client
        .call_tool_with(
            "remote_count",
            json!({"from": 1}),
            CallOptions::new().on_progress(|p| reports.push((p.progress, p.total))),
        )
        .unwrap();
    assert_eq!(result.structured_content, Some(json!({"from": 1, "to": 3})));
    assert_eq!(
        reports,
        [(1.0, Some(3.0)), (2.0, Some(3.0)), (3.0, Some(3.0))]
    );
    assert_eq!(remote.calls_served(), 1);

    // Only names in the snapshot are forwarded: the server's own name is
    // not one of them, and the remote schema is checked here first.
    assert!(
        client
            .call_tool("count", json!({"from": 1}))
            .unwrap()
            .is_error
    );
    assert!(
        client
            .call_tool("remote_count", json!({}))
            .unwrap()
            .is_error
    );
    assert_eq!(remote.calls_served(), 1);
}

#[test]
fn an_unqualified_layer_lists_the_servers_own_names() {
    let remote_host = host();
    let remote = remote_host.open_session(counting());
    let layer = layer_of(&remote).unqualified().connect().unwrap();
    assert_eq!(layer.count(), 1);
    let local_host = host();
    let session = local_host.open_session(gateway(layer));
    let mut client = session.client().unwrap();
    assert_eq!(tool_names(&mut client), ["echo", "count"]);
    let result = client.call_tool("count", json!({"from": 2})).unwrap();
    assert_eq!(result.structured_content, Some(json!({"from": 2, "to": 3})));
    assert!(
        client
            .call_tool("remote_count", json!({"from": 2}))
            .unwrap()
            .is_error
    );
}

#[test]
fn names_that_cannot_be_qualified_are_left_out_and_reported() {
    let long = "x".repeat(60);
    let remote_host = host();
    let remote = remote_host.open_session(
        StaticSurface::new()
            .tool(Tool::new("files.read", "Dotted."), |_, _| {
                ToolOutcome::text("r")
            })
            .unwrap()
            .tool(Tool::new(long.clone(), "Long."), |_, _| {
                ToolOutcome::text("l")
            })
            .unwrap()
            .tool(Tool::new("files_write", "Fine."), |_, _| {
                ToolOutcome::text("w")
            })
            .unwrap(),
    );
    let log = EventLog::new();
    let local_host = ToolHost::bind(log.hook(HostConfig::default())).unwrap();
    let session = local_host.open_session(layer_of(&remote).connect().unwrap());
    let mut client = session.client().unwrap();
    assert_eq!(tool_names(&mut client), ["remote_files_write"]);
    let faults = log.pick(|event| match event {
        Event::SurfaceFault { message } => Some(message.clone()),
        _ => None,
    });
    assert_eq!(faults.len(), 1, "{faults:?}");
    assert!(
        faults[0].contains("files.read") && faults[0].contains(&long),
        "{faults:?}"
    );
    assert!(!faults[0].contains("files_write"), "{faults:?}");
}

#[test]
fn the_agents_cancellation_reaches_the_remote_handler() {
    let saw_cancel = Arc::new(AtomicBool::new(false));
    let started = Arc::new(AtomicBool::new(false));
    let (saw, began) = (Arc::clone(&saw_cancel), Arc::clone(&started));
    let remote_host = host();
    let remote = remote_host.open_session(
        StaticSurface::new()
            .tool(
                Tool::new("wait", "Waits until cancelled."),
                move |_, ctx| {
                    began.store(true, Ordering::SeqCst);
                    for _ in 0..1000 {
                        if ctx.is_cancelled() {
                            saw.store(true, Ordering::SeqCst);
                            return ToolOutcome::text("stopped");
                        }
                        thread::sleep(Duration::from_millis(5));
                    }
                    ToolOutcome::text("never cancelled")
                },
            )
            .unwrap(),
    );
    let local_host = host();
    let session = local_host.open_session(gateway(layer_of(&remote).connect().unwrap()));
    check_cancellation_relayed(
        &mut session.client().unwrap(),
        &|| started.load(Ordering::SeqCst),
        &|| saw_cancel.load(Ordering::SeqCst),
    );
}

#[test]
#[cfg_attr(
    not(target_os = "linux"),
    ignore = "off Linux a host that shut down says no farewell on a kept connection, so the call ends at its deadline, not at once (ToolHost::shutdown)"
)]
fn a_remote_server_shut_down_mid_session_is_a_clear_tool_error_and_the_local_tools_still_serve() {
    let remote_host = host();
    let remote = remote_host.open_session(counting());
    let log = EventLog::new();
    let local_host = ToolHost::bind(log.hook(HostConfig::default())).unwrap();
    let session = local_host.open_session(gateway(layer_of(&remote).connect().unwrap()));
    let mut client = session.client().unwrap();
    assert!(
        !client
            .call_tool("remote_count", json!({"from": 1}))
            .unwrap()
            .is_error
    );

    drop(remote);
    drop(remote_host);
    let result = client
        .call_tool("remote_count", json!({"from": 1}))
        .unwrap();
    assert!(result.is_error);
    assert!(
        result.text().contains("\"remote\"") && result.text().contains("unavailable"),
        "{}",
        result.text()
    );
    assert_eq!(
        client
            .call_tool("echo", json!({"text": "still here"}))
            .unwrap()
            .text(),
        "still here"
    );
    let faults = log.pick(|event| match event {
        Event::SurfaceFault { message } => Some(message.clone()),
        _ => None,
    });
    assert!(
        faults
            .iter()
            .any(|m| m.contains("tools/call of \"count\" failed")),
        "{faults:?}"
    );
}

#[test]
fn a_list_change_on_the_remote_reaches_the_local_get_stream() {
    let registry = ToolRegistry::new();
    let remote_host = host();
    let remote = remote_host.open_session(registry.clone());
    let layer = layer_of(&remote)
        .refresh_every(Some(Duration::from_millis(50)))
        .connect()
        .unwrap();
    check_list_change_relayed(&registry, layer.clone(), Duration::ZERO);
    // A refresh that finds the same list changes nothing.
    assert!(!layer.refresh().unwrap());
}

#[test]
fn the_servers_questions_reach_an_agent_that_declared_the_capability_and_are_refused_otherwise() {
    let remote_host = host();
    let remote = remote_host.open_session(
        StaticSurface::new()
            .tool(Tool::new("greet", "Asks a name."), |_, ctx| {
                let form = json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]});
                match ctx.elicit("Your name?", form) {
                    Ok(toolhost::Elicitation::Accept(answer)) => {
                        ToolOutcome::text(format!("Hello, {}!", answer["name"]))
                    }
                    Ok(_) => ToolOutcome::declined("no name"),
                    Err(err) => ToolOutcome::declined(format!("could not ask: {err}")),
                }
            })
            .unwrap(),
    );
    let local_host = host();
    // A stateful link to the server, so a refusal reaches its handler
    // (2026-07-28 cannot carry one).
    let layer = stateful_layer_of(&remote).connect().unwrap();
    let session = local_host.open_session(gateway(layer));
    let mut asking = session
        .client_builder()
        .era(Era::Stateful)
        .capabilities(json!({"elicitation": {}}))
        .connect()
        .unwrap();
    let result = asking
        .call_tool_with(
            "remote_greet",
            json!({}),
            CallOptions::new().on_request(|request| {
                assert_eq!(request.method, "elicitation/create");
                assert_eq!(request.params["message"], "Your name?");
                Ok(json!({"action": "accept", "content": {"name": "Ada"}}))
            }),
        )
        .unwrap();
    assert_eq!(result.text(), "Hello, \"Ada\"!");

    // Without the capability the remote handler hears a refusal.
    let mut plain = session
        .client_builder()
        .era(Era::Stateful)
        .connect()
        .unwrap();
    let refused = plain.call_tool("remote_greet", json!({})).unwrap();
    assert!(refused.is_error);
    assert!(
        refused.text().starts_with("could not ask"),
        "{}",
        refused.text()
    );
    // A 2026-07-28 agent is never asked: it would answer by calling again,
    // which would forward the call a second time.
    let mut stateless = session
        .client_builder()
        .capabilities(json!({"elicitation": {}}))
        .connect()
        .unwrap();
    let unasked = stateless
        .call_tool_with(
            "remote_greet",
            json!({}),
            CallOptions::new().on_request(|_| panic!("a 2026-07-28 agent was asked")),
        )
        .unwrap();
    assert!(unasked.is_error);
    assert!(
        unasked.text().starts_with("could not ask") && unasked.text().contains("2026-07-28"),
        "{}",
        unasked.text()
    );
}

#[test]
fn a_stateful_servers_list_change_is_heard_on_its_stream_without_any_polling() {
    let registry = ToolRegistry::new();
    let remote_host = host();
    let remote = remote_host.open_session(registry.clone());
    let layer = stateful_layer_of(&remote)
        .refresh_every(None)
        .connect()
        .unwrap();
    // Time for the layer's watch thread to open the remote stream (a change
    // made before that is found by the refresh it makes first; one made
    // in between would wait for the next list change).
    check_list_change_relayed(&registry, layer.clone(), Duration::from_millis(300));
    assert_eq!(layer.count(), 1);
}

#[test]
fn the_servers_log_messages_reach_the_agent_at_the_agents_own_level() {
    let remote_host = host();
    let remote = remote_host.open_session(
        StaticSurface::new()
            .tool(Tool::new("chatty", "Logs as it works."), |_, ctx| {
                ctx.log(LogLevel::Debug, json!("detail nobody asked for"));
                ctx.log(LogLevel::Warning, json!({"disk": "almost full"}));
                ToolOutcome::text("done")
            })
            .unwrap(),
    );
    let local_host = host();
    let session = local_host.open_session(gateway(layer_of(&remote).connect().unwrap()));
    for era in [Era::Stateful, Era::Stateless] {
        let mut client = session
            .client_builder()
            .era(era)
            .log_level(LogLevel::Info)
            .connect()
            .unwrap();
        let mut heard = Vec::new();
        let result = client
            .call_tool_with(
                "remote_chatty",
                json!({}),
                CallOptions::new().on_log(|m| heard.push((m.level, m.data.clone()))),
            )
            .unwrap();
        assert_eq!(result.text(), "done");
        assert_eq!(
            heard,
            [(LogLevel::Warning, json!({"disk": "almost full"}))],
            "{era:?}"
        );
    }
    // An agent that asked for no messages gets none.
    let mut quiet = session
        .client_builder()
        .era(Era::Stateful)
        .connect()
        .unwrap();
    let mut heard = 0;
    quiet
        .call_tool_with(
            "remote_chatty",
            json!({}),
            CallOptions::new().on_log(|_| heard += 1),
        )
        .unwrap();
    assert_eq!(heard, 0);
}

#[test]
#[ignore = "needs the Python SDK server: bash tests/interop/python_server/run.sh"]
fn the_python_sdk_server_is_bridged_beside_the_local_tools_in_both_eras() {
    let (url, auth) = toolhost_tests::python_sdk_server();
    for era in [Era::Stateful, Era::Stateless] {
        let layer = McpServerLayer::builder(
            "py",
            Client::builder(&url)
                .header("Authorization", &auth)
                .era(era),
        )
        .connect()
        .unwrap_or_else(|err| panic!("{era:?}: {err}"));
        let local_host = host();
        let session = local_host.open_session(gateway(layer));
        check_python_sdk_bridged(&mut session.client().unwrap(), &format!("{era:?}"));
        // 2026-07-28 has no requests of the server, nor list changes on a call.
        if era == Era::Stateful {
            check_python_sdk_speaks_bridged(&session, "Stateful", false);
        }
    }
}

#[test]
fn a_question_the_http_server_withdraws_is_withdrawn_from_the_agent_and_an_answered_one_is_not() {
    // The remote's deadline passes while its question waits: its host
    // cancels the question on the call's event stream, which the layer's
    // client keeps reading while the agent is asked, and the layer
    // withdraws the question it relayed.
    let (_remote_host, remote, asked) = asking_remote(Duration::from_millis(1500));
    let layer = stateful_layer_of(&remote).connect().unwrap();
    check_withdrawal_relayed(layer, &asked);
}
