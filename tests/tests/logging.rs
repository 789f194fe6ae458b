//! Nothing silent: without an event hook, what goes wrong reaches the `log`
//! facade (failure details, surface faults, tools dropped for their names,
//! refused registrations, unchecked schema keywords); with a hook, the
//! application decides and the log hears nothing. A tool dropped from the
//! list for its name is also refused when called, and its handler never
//! runs.
//!
//! The logger is process-wide, so each test looks only at the records that
//! name its own tools.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Once};

use log::{Level, LevelFilter, Log, Metadata, Record};
use serde_json::json;
use toolhost::{
    surface_fn, CallResult, Event, HostConfig, StaticSurface, Tool, ToolError, ToolHost,
    ToolOutcome,
};
use toolhost_tests::McpClient;

/// Every record logged by the process: level, target, message.
static RECORDS: Mutex<Vec<(Level, String, String)>> = Mutex::new(Vec::new());

struct Capture;

impl Log for Capture {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn log(&self, record: &Record<'_>) {
        RECORDS.lock().unwrap().push((
            record.level(),
            record.target().to_owned(),
            record.args().to_string(),
        ));
    }
    fn flush(&self) {}
}

/// The records whose message contains `needle`, once the logger is in.
fn logged(needle: &str) -> Vec<(Level, String)> {
    install();
    RECORDS
        .lock()
        .unwrap()
        .iter()
        .filter(|(_, _, message)| message.contains(needle))
        .map(|(level, target, message)| {
            assert_eq!(target, "toolhost", "{message}");
            (*level, message.clone())
        })
        .collect()
}

fn install() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        log::set_logger(&Capture).unwrap();
        log::set_max_level(LevelFilter::Trace);
    });
}

fn failing_surface(name: &str) -> StaticSurface {
    StaticSurface::new()
        .typed(
            Tool::new(name, "Looks a note up."),
            |_args: serde_json::Value, _ctx| {
                Err::<String, _>(ToolError::failed("database connection lost"))
            },
        )
        .unwrap()
}

#[test]
fn without_a_hook_a_failed_calls_detail_reaches_the_log_at_error() {
    install();
    let host = ToolHost::bind(HostConfig::default()).unwrap();
    let session = host.open_session(failing_surface("lookup_unhooked"));
    let mut client = session.client().unwrap();
    let result = client.call_tool("lookup_unhooked", json!({})).unwrap();
    assert!(result.is_error);
    assert!(!result.text().contains("database"), "{}", result.text());
    let records = logged("\"lookup_unhooked\"");
    assert!(
        records.iter().any(|(level, message)| *level == Level::Error
            && message.starts_with("call to tool \"lookup_unhooked\" failed in ")
            && message.ends_with(": database connection lost")),
        "{records:?}"
    );
    assert!(
        records
            .iter()
            .any(|(level, message)| *level == Level::Debug && message.ends_with("started")),
        "{records:?}"
    );
}

#[test]
fn with_a_hook_the_application_decides_and_the_log_hears_nothing() {
    install();
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&events);
    let host = ToolHost::bind(
        HostConfig::default().on_event(move |event| sink.lock().unwrap().push(event.clone())),
    )
    .unwrap();
    let session = host.open_session(failing_surface("lookup_hooked"));
    let mut client = session.client().unwrap();
    assert!(
        client
            .call_tool("lookup_hooked", json!({}))
            .unwrap()
            .is_error
    );
    assert!(events.lock().unwrap().iter().any(|event| matches!(
        event,
        Event::CallFinished { outcome: CallResult::Failed { detail }, .. }
            if detail == "database connection lost"
    )));
    assert_eq!(logged("\"lookup_hooked\""), []);
}

#[test]
fn a_listed_tool_that_breaks_the_name_rules_is_dropped_refused_on_call_and_logged() {
    install();
    let host = ToolHost::bind(HostConfig::default()).unwrap();
    let ran = Arc::new(AtomicUsize::new(0));
    let runs = Arc::clone(&ran);
    let surface = surface_fn(
        || {
            vec![
                Tool::new("bad name", "Breaks the name rules."),
                Tool::new("named_well", "Follows them."),
            ]
        },
        move |name, _args, _ctx| {
            runs.fetch_add(1, Ordering::SeqCst);
            ToolOutcome::text(format!("{name} ran"))
        },
    );
    let session = host.open_session(surface);
    let mut client = McpClient::for_session(&host, &session);
    client.initialize("2025-11-25");
    assert_eq!(client.tool_names(), ["named_well"]);

    let refused = client.call("bad name", json!({}));
    assert_eq!(refused["isError"], true);
    assert_eq!(
        refused["content"][0]["text"],
        "Unknown tool: \"bad name\" is not available on this server right now. Call tools/list for the current tools."
    );
    assert_eq!(ran.load(Ordering::SeqCst), 0, "the handler never ran");
    assert_eq!(session.calls_served(), 0);

    let fine = client.call("named_well", json!({}));
    assert_eq!(fine["content"][0]["text"], "named_well ran");
    assert_eq!(ran.load(Ordering::SeqCst), 1);

    let records = logged("tool name \"bad name\" is invalid");
    let dropped = records
        .iter()
        .filter(|(_, m)| m.contains("misbehaved: tool left out of tools/list"))
        .count();
    let refused_on_call = records
        .iter()
        .filter(|(_, m)| m.contains("call refused for a tool left out of tools/list"))
        .count();
    assert_eq!((dropped, refused_on_call), (1, 1), "{records:?}");
    assert!(records.iter().all(|(level, _)| *level == Level::Error));
}

#[test]
fn a_refused_registration_is_logged_even_when_its_result_is_dropped() {
    install();
    let _ignored = StaticSurface::new().tool(Tool::new("unheard of", "Space."), |_args, _ctx| "x");
    let refused = StaticSurface::builder()
        .tool(Tool::new("twice_logged", "First."), |_args, _ctx| "x")
        .tool(Tool::new("twice_logged", "Second."), |_args, _ctx| "x")
        .tool(Tool::new("also refused", "Space."), |_args, _ctx| "x")
        .build();
    assert!(refused.is_err());
    for needle in [
        "tool name \"unheard of\" is invalid",
        "a tool named \"twice_logged\" is already registered",
        "tool name \"also refused\" is invalid",
    ] {
        let records = logged(needle);
        assert_eq!(records.len(), 1, "{needle}: {records:?}");
        assert_eq!(records[0].0, Level::Warn);
        assert!(records[0].1.starts_with("tool registration refused: "));
    }
    assert_eq!(logged("\"twice_logged\" is invalid"), []);
}

#[test]
fn without_a_hook_unchecked_schema_keywords_are_logged_when_a_session_opens() {
    install();
    let host = ToolHost::bind(HostConfig::default()).unwrap();
    let surface = StaticSurface::new()
        .tool(
            Tool::new("typo_logged", "A misspelled keyword.").input_schema(json!({
                "type": "object", "properties": {"a": {"type": "string"}}, "requried": ["a"]})),
            |_args, _ctx| "ok",
        )
        .unwrap();
    assert_eq!(logged("\"typo_logged\""), []);
    let _session = host.open_session(surface);
    let records = logged("\"typo_logged\"");
    assert_eq!(records.len(), 1, "{records:?}");
    assert_eq!(records[0].0, Level::Warn);
    assert!(records[0].1.contains("requried"), "{records:?}");
}
