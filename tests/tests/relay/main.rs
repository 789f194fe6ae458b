//! The stdio relay's relay, driven as a stdio MCP client drives it: JSON-RPC
//! lines in, lines out, against a really bound host. The relay runs in this
//! process over in-memory pipes (`tests/tests/acp/` runs it as the process
//! an agent starts).
//!
//! One module per feature of the relay; the tools and the host they share
//! are here, the in-memory pipes in [`pipes`].

mod calls;
mod endings;
mod pipes;
mod revisions;
mod streams;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use serde_json::{json, Value};
use toolhost::{Elicitation, HostConfig, LogLevel, StaticSurface, Tool, ToolHost, ToolOutcome};

/// How long a test waits for a line before it fails.
const PATIENCE: Duration = Duration::from_secs(10);

/// What the tools saw.
#[derive(Default)]
struct Seen {
    /// The slow tool is running.
    slow_started: AtomicBool,
    /// The slow tool saw its call cancelled.
    slow_cancelled: AtomicBool,
    /// Let the slow tool finish.
    release: AtomicBool,
    calls: AtomicU64,
}

fn tools(seen: &Arc<Seen>) -> StaticSurface {
    let (slow, echo) = (Arc::clone(seen), Arc::clone(seen));
    StaticSurface::new()
        .tool(Tool::new("echo", "Echoes text."), move |args, _| {
            echo.calls.fetch_add(1, Ordering::SeqCst);
            ToolOutcome::text(args["text"].as_str().unwrap_or(""))
        })
        .unwrap()
        .tool(
            Tool::new(
                "slow",
                "Runs until released or cancelled, reporting progress (when asked) as it waits.",
            ),
            move |_, ctx| {
                slow.slow_started.store(true, Ordering::SeqCst);
                let mut beats = 0.0;
                while !slow.release.load(Ordering::SeqCst) {
                    if ctx.is_cancelled() {
                        slow.slow_cancelled.store(true, Ordering::SeqCst);
                        return ToolOutcome::cancelled();
                    }
                    // Progress shows the test the call was carried
                    // until it was cancelled.
                    beats += 1.0;
                    ctx.progress(beats, None, None);
                    thread::sleep(Duration::from_millis(5));
                }
                ToolOutcome::text("released")
            },
        )
        .unwrap()
        .tool(
            Tool::new("ask", "Asks the user for an answer."),
            |_, ctx| {
                let form = json!({"type": "object",
                "properties": {"answer": {"type": "string"}}, "required": ["answer"]});
                match ctx.elicit("What is the answer?", form) {
                    Ok(Elicitation::Accept(content)) => {
                        ToolOutcome::text(content["answer"].as_str().unwrap_or(""))
                    }
                    Ok(other) => ToolOutcome::declined(format!("no answer: {other:?}")),
                    Err(err) => ToolOutcome::declined(format!("asking failed: {err}")),
                }
            },
        )
        .unwrap()
        .tool(
            Tool::new("where", "Names the client's roots and model."),
            |_, ctx| {
                let roots = match ctx.list_roots() {
                    Ok(roots) => roots,
                    Err(err) => return ToolOutcome::declined(format!("roots: {err}")),
                };
                let sampled = match ctx.sample(json!({"messages": [{"role": "user",
                "content": {"type": "text", "text": "hi"}}], "maxTokens": 5}))
                {
                    Ok(sampled) => sampled,
                    Err(err) => return ToolOutcome::declined(format!("sampling: {err}")),
                };
                ToolOutcome::text(format!(
                    "{} {}",
                    roots[0]["uri"], sampled["content"]["text"]
                ))
            },
        )
        .unwrap()
        .tool(
            Tool::new("chatty", "Reports progress and logs, then answers."),
            |_, ctx| {
                for step in 1..=3 {
                    ctx.progress(f64::from(step), Some(3.0), None);
                }
                ctx.log(LogLevel::Info, json!("halfway"));
                ToolOutcome::text("done")
            },
        )
        .unwrap()
        .tool(
            Tool::new("count", "Counts to 3, closing its stream after step 1."),
            |_, ctx| {
                let mut closed = false;
                for step in 1..=3 {
                    ctx.progress(f64::from(step), Some(3.0), None);
                    if step == 1 {
                        closed = ctx.close_stream(Duration::from_millis(20));
                    }
                    thread::sleep(Duration::from_millis(5));
                }
                ToolOutcome::text(if closed { "resumed" } else { "not closed" })
            },
        )
        .unwrap()
}

fn host() -> ToolHost {
    ToolHost::bind(HostConfig::default().server_name("bridged")).expect("bind")
}

fn stateless_meta() -> Value {
    json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "bridge-test", "version": "1"}})
}
