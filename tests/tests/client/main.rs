//! `toolhost::client` against a really bound host in both eras, and against
//! a scripted server for what the host does not do (pages, event streams,
//! fallbacks), checking every request the client writes against the
//! official schemas.
//!
//! One module per feature of the client; the host with every kind of
//! tool the real-host tests share is here, the scripted server in
//! [`scripted`].

mod alike;
mod asks;
mod calls;
mod connections;
mod long_calls;
mod python_sdk;
mod resume;
mod scripted;
mod wire;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use serde_json::{json, Map};
use toolhost::client::{Client, Era};
use toolhost::{Content, HostConfig, StaticSurface, Tool, ToolHost, ToolOutcome};

const ERAS: [Era; 2] = [Era::Stateful, Era::Stateless];

/// A host with tools for every kind of answer, and a count of handler runs.
/// Also returns how many `wait` handlers saw their call cancelled.
fn host_with_tools() -> (
    ToolHost,
    toolhost::ToolSession,
    Arc<AtomicUsize>,
    Arc<AtomicUsize>,
) {
    // The default 8 workers and 6 call slots: some tests leave `wait`
    // handlers running until the session drops.
    let host = ToolHost::bind(HostConfig::default().server_name("client-tests")).unwrap();
    let hits = Arc::new(AtomicUsize::new(0));
    let stopped = Arc::new(AtomicUsize::new(0));
    let saw_cancel = Arc::clone(&stopped);
    let counted = |hits: &Arc<AtomicUsize>| {
        let hits = Arc::clone(hits);
        move || {
            hits.fetch_add(1, Ordering::SeqCst);
        }
    };
    let (echo, add, quota, boom, wait, sample, count) = (
        counted(&hits),
        counted(&hits),
        counted(&hits),
        counted(&hits),
        counted(&hits),
        counted(&hits),
        counted(&hits),
    );
    let mut sampling = Map::new();
    sampling.insert("sampling".into(), json!({}));
    let surface = StaticSurface::new()
        .tool(
            Tool::new("echo", "Echoes text.").input_schema(json!({
                "type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]})),
            move |args, _| {
                echo();
                ToolOutcome::text(args["text"].as_str().unwrap_or_default())
            },
        )
        .unwrap()
        .tool(Tool::new("add", "Adds.").title("Add"), move |args, _| {
            add();
            let sum = args["a"].as_i64().unwrap_or(0) + args["b"].as_i64().unwrap_or(0);
            ToolOutcome::content([Content::text(sum.to_string()), Content::image(b"png", "image/png")])
                .with_structured(json!({"sum": sum}))
        })
        .unwrap()
        .tool(Tool::new("quota", "Declines."), move |_, _| {
            quota();
            ToolOutcome::declined("quota used up").with_code(json!("quota"))
        })
        .unwrap()
        .tool(Tool::new("boom", "Panics."), move |_, _| -> ToolOutcome {
            boom();
            panic!("on purpose")
        })
        .unwrap()
        .tool(Tool::new("wait", "Waits until cancelled."), move |_, ctx| {
            wait();
            let mut step = 0.0;
            while !ctx.is_cancelled() {
                // Sent only when the client asked for progress; a write is
                // how the host notices a closed stream.
                step += 1.0;
                ctx.progress(step, None, None);
                thread::sleep(Duration::from_millis(5));
            }
            saw_cancel.fetch_add(1, Ordering::SeqCst);
            ToolOutcome::text("stopped")
        })
        .unwrap()
        .tool(Tool::new("count", "Reports three steps."), move |_, ctx| {
            count();
            for step in 1..=3 {
                ctx.progress(f64::from(step), Some(3.0), Some(&format!("step {step}")));
            }
            ToolOutcome::text("counted")
        })
        .unwrap()
        .tool(
            Tool::new("summarize", "Needs sampling.").requires_client_capabilities(sampling),
            move |_, _| {
                sample();
                ToolOutcome::text("summary")
            },
        )
        .unwrap();
    let session = host.open_session(surface);
    (host, session, hits, stopped)
}

fn client(session: &toolhost::ToolSession, era: Era) -> Client {
    session.client_builder().era(era).connect().unwrap()
}
