//! The host the round-trip bench measures: the tools it calls, and the
//! host alone that its memory is read from — in a child of the bench
//! (`--serve-alone`) and in the `host_alone` program.

use std::io::{self, Write};
use std::thread;
use std::time::Duration;

use serde_json::json;
use toolhost::{HostConfig, StaticSurface, Tool, ToolHost, ToolOutcome};

/// Holds a host with the default settings and one session of
/// [`echo_tools`], and nothing else: prints `{"toolhost": URL, "auth":
/// BEARER}` on one line and serves until stdin closes.
pub fn serve_alone() -> Result<(), Box<dyn std::error::Error>> {
    let host = ToolHost::bind(HostConfig::default().server_name("roundtrip"))?;
    let echo = host.open_session(echo_tools()?);
    println!(
        "{}",
        json!({"toolhost": echo.url(), "auth": echo.authorization()})
    );
    io::stdout().flush()?;
    io::copy(&mut io::stdin(), &mut io::sink())?;
    Ok(())
}

/// `echo` (returns its `text`), `progress3` (three progress notifications,
/// then an answer) and `progress3_spaced` (the same with 1 ms of work
/// before each).
pub fn echo_tools() -> Result<StaticSurface, toolhost::Error> {
    StaticSurface::new()
        .tool(
            Tool::new("echo", "Echoes text.").input_schema(json!({
                "type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]})),
            |args, _| ToolOutcome::text(args["text"].as_str().unwrap_or_default()),
        )?
        .tool(Tool::new("progress3", "Reports three steps, then answers."), |_, ctx| {
            for step in 1..=3 {
                ctx.progress(f64::from(step), Some(3.0), None);
            }
            ToolOutcome::text("hello")
        })?
        .tool(
            Tool::new("progress3_spaced", "Works 1 ms before each of three steps and the answer."),
            |_, ctx| {
                for step in 1..=3 {
                    thread::sleep(Duration::from_millis(1));
                    ctx.progress(f64::from(step), Some(3.0), None);
                }
                thread::sleep(Duration::from_millis(1));
                ToolOutcome::text("hello")
            },
        )
}
