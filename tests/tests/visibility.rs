//! Visibility: a tool gated by a predicate is listed and callable only
//! while the predicate holds, in every kind of surface and whatever wraps
//! it, and a flip is announced to the sessions serving it. A wrapper the
//! application writes itself cannot make a hidden tool callable, nor lose
//! its inner surface's list changes.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use serde_json::{json, Value};
use toolhost::{
    CallContext, Event, HostConfig, LayeredSurface, StaticSurface, Tool, ToolError, ToolHost,
    ToolOutcome, ToolRegistry, ToolSession, ToolSurface,
};
use toolhost_tests::{call_in, get_stream, listen, schema, EventLog, Item, McpClient, STATELESS};

/// A flag the tests flip, and a predicate reading it.
fn flag() -> (Arc<AtomicBool>, impl Fn() -> bool + Send + Sync + 'static) {
    let flag = Arc::new(AtomicBool::new(false));
    let read = Arc::clone(&flag);
    (flag, move || read.load(Ordering::SeqCst))
}

#[derive(Deserialize)]
struct DeleteNote {
    id: u64,
}

fn delete_tool() -> Tool {
    Tool::new("delete_note", "Deletes a note by id.").input_schema(json!({
        "type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"],
    }))
}

/// What a direct call of a hidden tool must come to: the unknown-tool
/// error, as for a name never registered.
fn assert_unknown(result: &Value) {
    assert_eq!(result["isError"], true, "{result}");
    let text = result["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.starts_with("Unknown tool: \"delete_note\""), "{text}");
}

fn host(log: &EventLog) -> ToolHost {
    ToolHost::bind(log.hook(HostConfig::default().keep_alive(Duration::from_millis(40)))).unwrap()
}

fn unknown_tool_events(log: &EventLog) -> usize {
    log.pick(|event| {
        matches!(event, Event::UnknownTool { tool } if tool == "delete_note").then_some(())
    })
    .len()
}

#[test]
fn a_gated_typed_tool_of_a_static_surface_is_unlisted_and_uncallable_until_its_predicate_holds_and_refresh_announces_it(
) {
    let log = EventLog::new();
    let host = host(&log);
    let (admin, is_admin) = flag();
    let ran = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&ran);
    let notes = StaticSurface::builder()
        .tool(Tool::new("list_notes", "Lists the notes."), |_, _| {
            "no notes"
        })
        .typed(
            delete_tool().visible_when(is_admin),
            move |args: DeleteNote, _ctx| {
                counted.fetch_add(1, Ordering::SeqCst);
                Ok::<_, ToolError>(format!("deleted {}", args.id))
            },
        )
        .build()
        .unwrap();
    let session = host.open_session(notes.clone());
    let mut client = McpClient::for_session(&host, &session);
    client.initialize("2025-11-25");
    let mut events = get_stream(&host, &session, client.session_id.as_deref().unwrap());

    assert_eq!(client.tool_names(), ["list_notes"]);
    assert_unknown(&client.call("delete_note", json!({"id": 1})));
    assert_eq!(ran.load(Ordering::SeqCst), 0, "the handler never ran");
    assert_eq!(unknown_tool_events(&log), 1);
    // Nothing was announced while nothing changed: a keep-alive comes first.
    assert_eq!(events.next_item(), Item::Comment);

    admin.store(true, Ordering::SeqCst);
    notes.refresh();
    let change = events.next_message().expect("a list change");
    schema::assert_valid("2025-11-25", "ToolListChangedNotification", &change);
    assert_eq!(client.tool_names(), ["list_notes", "delete_note"]);
    assert_eq!(
        client.call("delete_note", json!({"id": 7}))["content"][0]["text"],
        "deleted 7"
    );
    assert_eq!(ran.load(Ordering::SeqCst), 1);

    // And hidden again at once, before any announcement.
    admin.store(false, Ordering::SeqCst);
    assert_unknown(&client.call("delete_note", json!({"id": 7})));
    assert_eq!(ran.load(Ordering::SeqCst), 1);
}

#[test]
fn a_gated_tool_of_a_registry_is_hidden_from_stateless_clients_and_its_flip_reaches_subscriptions_listen(
) {
    let log = EventLog::new();
    let host = host(&log);
    let (admin, is_admin) = flag();
    let ran = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&ran);
    let registry = ToolRegistry::new();
    registry
        .tool(Tool::new("list_notes", "Lists the notes."), |_, _| {
            "no notes"
        })
        .unwrap();
    registry
        .tool(delete_tool().visible_when(is_admin), move |args, _ctx| {
            counted.fetch_add(1, Ordering::SeqCst);
            format!("deleted {}", args["id"])
        })
        .unwrap();
    let session = host.open_session(registry.clone());
    let mut listener = listen(&host, &session, 3, json!({"toolsListChanged": true}));
    listener.next_message().expect("the acknowledgement");

    let listed = toolhost_tests::ask(
        &host,
        &session,
        STATELESS,
        "tools/list",
        json!({}),
        "ListToolsResult",
    );
    assert_eq!(listed["tools"].as_array().unwrap().len(), 1);
    assert_unknown(&call_in(
        &host,
        &session,
        STATELESS,
        "delete_note",
        json!({"id": 1}),
    ));
    assert_eq!(ran.load(Ordering::SeqCst), 0, "the handler never ran");
    assert_eq!(
        registry
            .call_detached("delete_note", &json!({"id": 1}))
            .kind(),
        toolhost::OutcomeKind::Declined,
        "hidden in-process too"
    );
    assert_eq!(ran.load(Ordering::SeqCst), 0);
    assert_eq!(listener.next_item(), Item::Comment, "nothing announced yet");

    admin.store(true, Ordering::SeqCst);
    registry.refresh();
    let change = listener.next_message().expect("a list change");
    assert_eq!(change["method"], "notifications/tools/list_changed");
    schema::assert_valid(STATELESS, "ToolListChangedNotification", &change);
    let result = call_in(&host, &session, STATELESS, "delete_note", json!({"id": 2}));
    assert_eq!(result["isError"], false, "{result}");
    assert_eq!(ran.load(Ordering::SeqCst), 1);
}

#[test]
fn a_hidden_tool_of_an_upper_layer_owns_no_name_and_a_whole_surface_filter_gates_every_tool() {
    let log = EventLog::new();
    let host = host(&log);
    let (admin, is_admin) = flag();
    let (plugins_on, plugins_enabled) = flag();
    let app = StaticSurface::new()
        .tool(delete_tool().visible_when(is_admin), |_, _| {
            "the app deleted"
        })
        .unwrap();
    let plugin = StaticSurface::new()
        .tool(delete_tool(), |_, _| "the plugin deleted")
        .unwrap()
        .tool(Tool::new("weather", "Tells the weather."), |_, _| "sunny")
        .unwrap()
        .visible_when(move |_| plugins_enabled());
    let surface = LayeredSurface::builder()
        .layer("app", app)
        .layer("plugin", plugin)
        .build();
    let session = host.open_session(surface);
    let mut client = McpClient::for_session(&host, &session);
    client.initialize("2025-11-25");

    // Neither layer shows anything: the app's tool is hidden, the plugin off.
    assert!(client.tool_names().is_empty());
    assert_unknown(&client.call("delete_note", json!({"id": 1})));
    plugins_on.store(true, Ordering::SeqCst);
    assert_eq!(client.tool_names(), ["delete_note", "weather"]);
    let text = |result: Value| result["content"][0]["text"].as_str().unwrap().to_owned();
    assert_eq!(
        text(client.call("delete_note", json!({"id": 1}))),
        "the plugin deleted"
    );
    // The app's tool shown again owns its name, in the list and in dispatch.
    admin.store(true, Ordering::SeqCst);
    assert_eq!(client.tool_names(), ["delete_note", "weather"]);
    assert_eq!(
        text(client.call("delete_note", json!({"id": 1}))),
        "the app deleted"
    );
}

/// The wrapper a user writes around a registry to hide a tool, as the
/// issue found it written: it filters `list_tools`, forwards `call`, keeps
/// a lookup of its own that forwards to the registry (which the host never
/// asks), and does not forward `on_open`.
struct AdminOnly {
    inner: ToolRegistry,
    admin: Arc<AtomicBool>,
}

impl AdminOnly {
    /// The natural forwarding lookup: it sees the hidden tool. The host
    /// does not ask it.
    #[allow(
        dead_code,
        reason = "written as users write it; the host never calls it"
    )]
    fn find_tool(&self, name: &str) -> Option<Tool> {
        self.inner
            .list_tools()
            .into_iter()
            .find(|tool| tool.name() == name)
    }
}

impl ToolSurface for AdminOnly {
    fn list_tools(&self) -> Vec<Tool> {
        let admin = self.admin.load(Ordering::SeqCst);
        let mut tools = self.inner.list_tools();
        tools.retain(|tool| admin || tool.name() != "delete_note");
        tools
    }

    fn call(&self, name: &str, args: &Value, ctx: &CallContext) -> ToolOutcome {
        // The trait's `call`: the registry has no inherent method that
        // would take this and drop the context.
        self.inner.call(name, args, ctx)
    }
}

fn wrapped_registry(ran: &Arc<AtomicUsize>) -> (ToolRegistry, Arc<AtomicBool>, AdminOnly) {
    let registry = ToolRegistry::new();
    let counted = Arc::clone(ran);
    registry
        .tool(delete_tool(), move |_, _| {
            counted.fetch_add(1, Ordering::SeqCst);
            "deleted"
        })
        .unwrap();
    let admin = Arc::new(AtomicBool::new(false));
    let wrapper = AdminOnly {
        inner: registry.clone(),
        admin: Arc::clone(&admin),
    };
    (registry, admin, wrapper)
}

#[test]
fn the_natural_wrapper_cannot_make_a_tool_it_does_not_list_callable() {
    let log = EventLog::new();
    let host = host(&log);
    let ran = Arc::new(AtomicUsize::new(0));
    let (_registry, admin, wrapper) = wrapped_registry(&ran);
    assert!(
        wrapper.find_tool("delete_note").is_some(),
        "its own lookup would have found it"
    );
    let session = host.open_session(wrapper);
    for revision in ["2025-11-25", STATELESS] {
        assert_unknown(&call_in(
            &host,
            &session,
            revision,
            "delete_note",
            json!({"id": 1}),
        ));
    }
    assert_eq!(ran.load(Ordering::SeqCst), 0, "the handler never ran");
    assert_eq!(unknown_tool_events(&log), 2);

    admin.store(true, Ordering::SeqCst);
    let result = call_in(
        &host,
        &session,
        "2025-11-25",
        "delete_note",
        json!({"id": 1}),
    );
    assert_eq!(result["isError"], false, "{result}");
    assert_eq!(ran.load(Ordering::SeqCst), 1);
}

#[test]
fn a_registry_wrapped_without_on_open_still_announces_its_changes_to_a_session_that_listed() {
    let host = ToolHost::bind(HostConfig::default()).unwrap();
    let ran = Arc::new(AtomicUsize::new(0));
    let (registry, _admin, wrapper) = wrapped_registry(&ran);
    let session: ToolSession = host.open_session(wrapper);
    assert_eq!(registry.sessions(), 0, "on_open never reached the registry");
    let mut client = McpClient::for_session(&host, &session);
    client.initialize("2025-11-25");
    let mut events = get_stream(&host, &session, client.session_id.as_deref().unwrap());
    assert!(client.tool_names().is_empty());
    assert_eq!(registry.sessions(), 1, "the listing named the session");

    registry
        .tool(Tool::new("search_notes", "Searches the notes."), |_, _| {
            "found"
        })
        .unwrap();
    let change = events.next_message().expect("a list change");
    assert_eq!(change["method"], "notifications/tools/list_changed");
    assert_eq!(client.tool_names(), ["search_notes"]);
    // Listing again does not count the session twice.
    assert_eq!(registry.sessions(), 1);
    drop(session);
    assert_eq!(registry.sessions(), 0);
}
