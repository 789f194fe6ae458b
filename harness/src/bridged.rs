//! What the tests of bridged MCP servers share, over HTTP (`tests/bridge.rs`)
//! and stdio (`tests/bridge_stdio.rs`): the application's own tool, the
//! gateway surface of it and one server's layer, and the check of the
//! official Python SDK server's tools seen through such a gateway.

use serde_json::json;
use toolhost::client::{CallOptions, Client};
use toolhost::{LayeredSurface, McpServerLayer, StaticSurface, Tool, ToolOutcome};

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
/// Python SDK server (`harness/interop/python_server/server.py`) named
/// `py`: its tools listed beside `echo`, a structured result, progress
/// relayed, a tool error passed through, and the local tool still
/// serving. `context` names the case in failures.
pub fn check_python_sdk_bridged(client: &mut Client, context: &str) {
    let mut listed: Vec<String> = client
        .list_tools()
        .unwrap()
        .into_iter()
        .map(|t| t.name)
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
