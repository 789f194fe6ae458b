//! One gate for all of an application's tools: a live registry announced
//! to every session that serves it, and layered surfaces whose first layer
//! owns a name in `tools/list` and in dispatch.

use std::sync::{Arc, Barrier};
use std::thread;
use std::time::Duration;

use serde_json::{json, Value};
use toolhost::{
    CallContext, Error, Event, HostConfig, LayeredSurface, StaticSurface, Tool, ToolError,
    ToolHost, ToolRegistry, ToolSurface,
};
use toolhost_tests::{get_stream, listen, schema, EventLog, Item, McpClient};

fn host() -> ToolHost {
    ToolHost::bind(HostConfig::default().keep_alive(Duration::from_secs(60))).unwrap()
}

/// agentd's handler shape, written as agentd writes it (plus the context
/// every handler kind gets).
fn word_count(args: &Value, _ctx: &CallContext) -> Result<Value, String> {
    let text = args["text"]
        .as_str()
        .ok_or_else(|| "text must be a string".to_owned())?;
    if text.is_empty() {
        return Err("there is nothing to count".to_owned());
    }
    Ok(json!({"words": text.split_whitespace().count()}))
}

fn word_count_tool() -> Tool {
    Tool::new("word_count", "Counts words.").input_schema(json!({
        "type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"],
    }))
}

fn shadowed(log: &EventLog) -> Vec<(String, String, String)> {
    log.pick(|event| match event {
        Event::ToolShadowed { layer, tool, owner } => {
            Some((layer.clone(), tool.clone(), owner.clone()))
        }
        _ => None,
    })
}

#[test]
fn registering_a_tool_reaches_the_get_stream_without_a_manual_notify() {
    let host = host();
    let registry = ToolRegistry::new();
    let session = host.open_session(registry.clone());
    let mut client = McpClient::for_session(&host, &session);
    client.initialize("2025-11-25");
    let mut events = get_stream(&host, &session, client.session_id.as_deref().unwrap());
    assert!(client.tool_names().is_empty());

    registry.tool(word_count_tool(), word_count).unwrap();
    let message = events.next_message().expect("a list change");
    schema::assert_valid("2025-11-25", "ToolListChangedNotification", &message);
    assert_eq!(client.tool_names(), ["word_count"]);
}

#[test]
fn removing_a_tool_reaches_subscriptions_listen_and_the_tool_is_refused_from_then_on() {
    let host = host();
    let registry = ToolRegistry::new();
    registry.tool(word_count_tool(), word_count).unwrap();
    let session = host.open_session(registry.clone());
    let mut listener = listen(&host, &session, 1, json!({"toolsListChanged": true}));
    listener.next_message().expect("the acknowledgement");

    assert!(registry.remove("word_count"));
    let message = listener.next_message().expect("a list change");
    assert_eq!(message["method"], "notifications/tools/list_changed");
    assert!(!registry.remove("word_count"), "nothing left to withdraw");
    let mut client = McpClient::for_session(&host, &session);
    client.initialize("2025-11-25");
    let refused = client.call("word_count", json!({"text": "a"}));
    assert_eq!(refused["isError"], true);
    assert!(refused.to_string().contains("word_count"), "{refused}");
}

#[test]
fn a_failed_registration_announces_nothing() {
    let host = ToolHost::bind(HostConfig::default().keep_alive(Duration::from_millis(30))).unwrap();
    let registry = ToolRegistry::new();
    registry.tool(word_count_tool(), word_count).unwrap();
    let session = host.open_session(registry.clone());
    let mut client = McpClient::for_session(&host, &session);
    client.initialize("2025-11-25");
    let mut events = get_stream(&host, &session, client.session_id.as_deref().unwrap());
    registry.tool(word_count_tool(), word_count).unwrap_err();
    assert!(!registry.remove("never_registered"));
    // A change would be written at once; a keep-alive comes first instead.
    assert_eq!(events.next_item(), Item::Comment);
    registry
        .tool(Tool::new("second", "d"), |_, _| Ok::<_, String>("2"))
        .unwrap();
    let message = events.next_message().expect("the real change");
    assert_eq!(message["method"], "notifications/tools/list_changed");
    assert_eq!(client.tool_names(), ["word_count", "second"]);
}

#[test]
fn every_open_session_hears_of_a_change_and_a_dropped_one_is_forgotten() {
    let host = host();
    let registry = ToolRegistry::new();
    let first = host.open_session(registry.clone());
    let second = host.open_session(registry.clone());
    assert_eq!(registry.sessions(), 2);
    let mut a = listen(&host, &first, 1, json!({"toolsListChanged": true}));
    let mut b = listen(&host, &second, 1, json!({"toolsListChanged": true}));
    a.next_message().unwrap();
    b.next_message().unwrap();

    registry.tool(word_count_tool(), word_count).unwrap();
    assert_eq!(
        a.next_message().unwrap()["method"],
        "notifications/tools/list_changed"
    );
    assert_eq!(
        b.next_message().unwrap()["method"],
        "notifications/tools/list_changed"
    );

    drop(first);
    assert_eq!(registry.sessions(), 1);
    assert_eq!(
        a.next_message().unwrap()["result"]["resultType"],
        "complete"
    );
    assert_eq!(a.next_item(), Item::End);
}

#[test]
fn registration_refuses_invalid_duplicate_and_reserved_names_naming_the_rule() {
    let registry = ToolRegistry::new();
    registry.reserve("shell");
    registry.tool(word_count_tool(), word_count).unwrap();

    let invalid = registry
        .tool(Tool::new("has space", "d"), word_count)
        .unwrap_err();
    assert!(
        matches!(invalid, Error::InvalidToolName { .. }),
        "{invalid}"
    );
    assert!(invalid.to_string().contains("A-Z, a-z, 0-9"), "{invalid}");
    let duplicate = registry.tool(word_count_tool(), word_count).unwrap_err();
    assert!(
        duplicate.to_string().contains("already registered"),
        "{duplicate}"
    );
    let reserved = registry
        .tool(Tool::new("shell", "d"), word_count)
        .unwrap_err();
    assert!(matches!(reserved, Error::ReservedToolName { ref name } if name == "shell"));
    assert!(reserved.to_string().contains("reserved"), "{reserved}");
    assert_eq!(registry.count(), 1, "nothing refused was registered");
}

#[test]
fn agentd_handlers_succeed_with_structured_content_and_their_errors_decline() {
    let host = host();
    let registry = ToolRegistry::new();
    registry.tool(word_count_tool(), word_count).unwrap();
    registry
        .tool(Tool::new("db", "Fails."), |_, _| {
            Err::<Value, _>(ToolError::failed("connection refused at 10.0.0.7"))
        })
        .unwrap();
    let session = host.open_session(registry.clone());
    let mut client = McpClient::for_session(&host, &session);
    client.initialize("2025-11-25");

    let ok = client.call("word_count", json!({"text": "one two three"}));
    assert_eq!(ok["structuredContent"], json!({"words": 3}));
    assert_eq!(ok["isError"], false);
    let declined = client.call("word_count", json!({"text": ""}));
    assert_eq!(declined["isError"], true);
    assert_eq!(declined["content"][0]["text"], "there is nothing to count");
    let failed = client.call("db", json!({}));
    assert_eq!(failed["isError"], true);
    assert!(
        !failed.to_string().contains("10.0.0.7"),
        "the detail stays home"
    );

    // The same, in-process.
    let direct = registry.call_detached("word_count", &json!({"text": "a b"}));
    assert_eq!(direct.structured_content(), Some(&json!({"words": 2})));
    let refused = registry.call_detached("word_count", &json!({"text": 7}));
    assert_eq!(refused.kind(), toolhost::OutcomeKind::Declined);
    assert_eq!(
        registry.call_detached("nope", &json!({})).kind(),
        toolhost::OutcomeKind::Declined
    );
}

#[test]
fn handlers_run_outside_the_lock_so_one_may_change_the_registry_and_others_run_meanwhile() {
    let registry = ToolRegistry::new();
    let gate = Arc::new(Barrier::new(2));
    {
        let registry_inside = registry.clone();
        registry
            .tool(Tool::new("grow", "Registers another tool."), move |_, _| {
                registry_inside
                    .tool(Tool::new("grown", "d"), |_, _| Ok::<_, String>("g"))
                    .map(|()| "grew")
            })
            .unwrap();
        let gate = Arc::clone(&gate);
        registry
            .tool(Tool::new("wait", "Waits for a partner."), move |_, _| {
                gate.wait();
                Ok::<_, String>("met")
            })
            .unwrap();
    }
    assert_eq!(
        registry.call_detached("grow", &json!({})).kind(),
        toolhost::OutcomeKind::Success
    );
    assert!(registry
        .list_tools()
        .iter()
        .any(|tool| tool.name() == "grown"));
    // Two handlers that only finish together: they run at once.
    let other = registry.clone();
    let waiter = thread::spawn(move || other.call_detached("wait", &json!({})));
    assert_eq!(
        registry.call_detached("wait", &json!({})).kind(),
        toolhost::OutcomeKind::Success
    );
    assert_eq!(
        waiter.join().unwrap().kind(),
        toolhost::OutcomeKind::Success
    );
}

#[test]
fn registrations_from_many_threads_all_land() {
    let registry = ToolRegistry::new();
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let registry = registry.clone();
            thread::spawn(move || {
                for i in 0..25 {
                    registry
                        .tool(Tool::new(format!("t{t}_{i}"), "d"), |_, _| {
                            Ok::<_, String>("ok")
                        })
                        .unwrap();
                }
                for i in 0..5 {
                    assert!(registry.remove(&format!("t{t}_{i}")));
                }
            })
        })
        .collect();
    for thread in threads {
        thread.join().unwrap();
    }
    assert_eq!(registry.count(), 8 * 20);
}

fn layered(app: &ToolRegistry, hits: &Arc<std::sync::atomic::AtomicUsize>) -> LayeredSurface {
    let plugin_hits = Arc::clone(hits);
    let plugin = StaticSurface::builder()
        .tool(Tool::new("search", "The plugin's search."), move |_, _| {
            plugin_hits.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            "plugin"
        })
        .tool(Tool::new("deploy", "The plugin's deploy."), |_, _| {
            "plugin deployed"
        })
        .tool(Tool::new("weather", "Sunny."), |_, _| "sunny")
        .build()
        .unwrap();
    LayeredSurface::builder()
        .layer("app", app.clone())
        .reserve(["deploy"])
        .layer("plugin", plugin)
        .build()
}

#[test]
fn the_first_layer_owns_a_name_in_the_list_and_in_dispatch_and_shadows_are_reported_once() {
    let log = EventLog::new();
    let host = ToolHost::bind(log.hook(HostConfig::default())).unwrap();
    let app = ToolRegistry::new();
    app.tool(Tool::new("search", "The app's search."), |_, _| {
        Ok::<_, String>("app")
    })
    .unwrap();
    let hits = Arc::default();
    let session = host.open_session(layered(&app, &hits));
    let mut client = McpClient::for_session(&host, &session);
    client.initialize("2025-11-25");

    assert_eq!(client.tool_names(), ["search", "weather"]);
    assert_eq!(
        client.call("search", json!({}))["content"][0]["text"],
        "app"
    );
    assert_eq!(
        hits.load(std::sync::atomic::Ordering::SeqCst),
        0,
        "never reached the plugin"
    );
    assert_eq!(
        client.call("weather", json!({}))["content"][0]["text"],
        "sunny"
    );
    // A reserved name is not supplied by the lower layer, listed or called.
    let refused = client.call("deploy", json!({}));
    assert_eq!(refused["isError"], true);
    assert!(
        !refused.to_string().contains("plugin deployed"),
        "{refused}"
    );

    client.tool_names();
    let mut reported = shadowed(&log);
    reported.sort();
    assert_eq!(
        reported,
        [
            ("plugin".into(), "deploy".into(), "app".into()),
            ("plugin".into(), "search".into(), "app".into()),
        ],
        "each hidden tool once, however often the list is asked for"
    );

    // When the app withdraws its search, the plugin's is reachable and
    // nothing new is reported; when the app adds weather, that is.
    app.remove("search");
    assert_eq!(
        client.call("search", json!({}))["content"][0]["text"],
        "plugin"
    );
    app.tool(Tool::new("weather", "The app's weather."), |_, _| {
        Ok::<_, String>("rain")
    })
    .unwrap();
    assert_eq!(client.tool_names(), ["weather", "search"]);
    assert_eq!(
        client.call("weather", json!({}))["content"][0]["text"],
        "rain"
    );
    let reported = shadowed(&log);
    assert_eq!(reported.len(), 3, "{reported:?}");
    assert_eq!(
        reported[2],
        ("plugin".into(), "weather".into(), "app".into())
    );
    let line = Event::ToolShadowed {
        layer: "plugin".into(),
        tool: "weather".into(),
        owner: "app".into(),
    };
    assert_eq!(line.level(), log::Level::Warn);
    assert!(
        line.to_string().contains("\"weather\" of layer \"plugin\""),
        "{line}"
    );
}

#[test]
fn a_registry_inside_layers_still_announces_its_changes() {
    let host = host();
    let app = ToolRegistry::new();
    let session = host.open_session(layered(&app, &Arc::default()));
    let mut listener = listen(&host, &session, 1, json!({"toolsListChanged": true}));
    listener.next_message().unwrap();
    app.tool(word_count_tool(), word_count).unwrap();
    assert_eq!(
        listener.next_message().unwrap()["method"],
        "notifications/tools/list_changed"
    );
    assert_eq!(app.sessions(), 1);
}
