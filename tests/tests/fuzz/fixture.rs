//! The host under fuzz: a live bearer and a revoked one, tools of every
//! kind that count their runs, and the MCP sessions cases may use.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use toolhost::{HostConfig, StaticSurface, Tool, ToolHost, ToolOutcome, ToolSession};
use toolhost_tests::McpClient;

use crate::{MAX_BODY, REVISIONS, STATELESS};

/// The host under fuzz and what a case may borrow from it.
pub(crate) struct Fixture {
    pub(crate) host: ToolHost,
    pub(crate) session: ToolSession,
    pub(crate) token: String,
    pub(crate) revoked: String,
    pub(crate) handled: Arc<AtomicUsize>,
    pub(crate) leaked: Arc<AtomicBool>,
    /// MCP sessions by revision index, topped up from `initialize` answers.
    pub(crate) mcp_sessions: Vec<(usize, String)>,
}

pub(crate) fn fixture() -> Fixture {
    let token_slot = Arc::new(std::sync::OnceLock::<String>::new());
    let leaked = Arc::new(AtomicBool::new(false));
    let (watch, flag) = (Arc::clone(&token_slot), Arc::clone(&leaked));
    let host = ToolHost::bind(
        HostConfig::default()
            .workers(6)
            .max_body_bytes(MAX_BODY)
            .keep_alive(Duration::from_millis(20))
            .capability_urls(true)
            .on_event(move |event| {
                if let Some(token) = watch.get() {
                    if format!("{event:?}").contains(&token[3..]) {
                        flag.store(true, Ordering::SeqCst);
                    }
                }
            }),
    )
    .unwrap();
    let handled = Arc::new(AtomicUsize::new(0));
    let session = host.open_session(fuzz_surface(&handled));
    let token = session.authorization()["Bearer ".len()..].to_owned();
    token_slot.set(token.clone()).unwrap();
    let dead = host.open_session(StaticSurface::new());
    let revoked = dead.authorization()["Bearer ".len()..].to_owned();
    drop(dead);
    let mcp_sessions = (0..STATELESS)
        .map(|rev| {
            let mut client = McpClient::for_session(&host, &session);
            client.initialize(REVISIONS[rev]);
            (rev, client.session_id.unwrap())
        })
        .collect();
    Fixture {
        host,
        session,
        token,
        revoked,
        handled,
        leaked,
        mcp_sessions,
    }
}

/// Tools that answer, stream progress, decline, fail, panic, and route on
/// a header; every run is counted.
fn fuzz_surface(handled: &Arc<AtomicUsize>) -> StaticSurface {
    let count = |handled: &Arc<AtomicUsize>| {
        let handled = Arc::clone(handled);
        move || handled.fetch_add(1, Ordering::SeqCst)
    };
    let (echo, add, progress, decline, boom, route) = (
        count(handled),
        count(handled),
        count(handled),
        count(handled),
        count(handled),
        count(handled),
    );
    StaticSurface::new()
        .tool(
            Tool::new("echo", "Echoes text.").input_schema(json!({"type": "object",
                "properties": {"text": {"type": "string"}}, "required": ["text"]})),
            move |args, _| {
                echo();
                ToolOutcome::text(args["text"].as_str().unwrap_or_default())
            },
        )
        .unwrap()
        .tool(
            Tool::new("add", "Adds.").input_schema(json!({"type": "object",
                "properties": {"a": {"type": "number"}, "b": {"type": "number"}}})),
            move |args, _| {
                add();
                let sum = args["a"].as_f64().unwrap_or(0.0) + args["b"].as_f64().unwrap_or(0.0);
                ToolOutcome::json(json!({ "sum": sum }))
            },
        )
        .unwrap()
        .tool(Tool::new("progress", "Reports progress."), move |_, ctx| {
            progress();
            for step in 1..=3 {
                ctx.progress(f64::from(step), Some(3.0), Some("step"));
            }
            ToolOutcome::text("done")
        })
        .unwrap()
        .tool(Tool::new("decline", "Declines."), move |_, _| {
            decline();
            ToolOutcome::declined("not today")
        })
        .unwrap()
        .tool(Tool::new("boom", "Panics."), move |_, _| -> ToolOutcome {
            boom();
            std::panic::panic_any(FuzzPanic)
        })
        .unwrap()
        .tool(
            Tool::new("route", "Routes on a header.").input_schema(json!({"type": "object",
                "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}})),
            move |_, _| {
                route();
                ToolOutcome::text("routed")
            },
        )
        .unwrap()
}

/// The payload of the `boom` tool's panic, which the panic hook keeps quiet.
pub(crate) struct FuzzPanic;
