//! The server the official MCP conformance suite tests: the fixture tools its
//! server scenarios call, by their fixed names, with the outputs they check
//! (see CONFORMANCE.md in the shared folder, and the suite's scenario
//! sources).
//!
//! The suite's runner cannot send an `Authorization` header, so this example
//! enables capability URLs and prints the session's `/cap/<token>/mcp` URL.
//! Its first stdout line is `{"url", "authorization"}`; it serves until stdin
//! closes or Ctrl-C.
//!
//! Fixtures that need features still being built (sampling, elicitation)
//! are not registered yet: their scenarios are listed in
//! `tests/interop/expected-failures.txt`.

use std::io::{self, Read, Write};
use std::thread;
use std::time::Duration;

use serde_json::json;
use toolhost::{
    CallContext, Content, HostConfig, LogLevel, StaticSurface, Tool, ToolHost, ToolOutcome,
};

/// A 1x1 PNG.
const PNG_BASE64: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC";
/// A WAV file of eight silent samples.
const WAV_BASE64: &str =
    "UklGRjQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YRAAAAAAAAAAAAAAAAAAAAAAAAAA";

fn fixtures() -> Result<StaticSurface, toolhost::Error> {
    StaticSurface::new()
        .tool(
            Tool::new("test_simple_text", "Returns a simple text response."),
            |_, _| ToolOutcome::text("This is a simple text response for testing."),
        )?
        .tool(
            Tool::new("test_image_content", "Returns a 1x1 PNG image."),
            |_, _| ToolOutcome::content([Content::image_base64(PNG_BASE64, "image/png")]),
        )?
        .tool(
            Tool::new("test_audio_content", "Returns a short WAV clip."),
            |_, _| ToolOutcome::content([Content::audio_base64(WAV_BASE64, "audio/wav")]),
        )?
        .tool(
            Tool::new("test_embedded_resource", "Returns an embedded text resource."),
            |_, _| {
                ToolOutcome::content([Content::resource_text(
                    "test://embedded-resource",
                    "text/plain",
                    "This is an embedded resource content.",
                )])
            },
        )?
        .tool(
            Tool::new(
                "test_multiple_content_types",
                "Returns text, an image and an embedded resource.",
            ),
            |_, _| {
                ToolOutcome::content([
                    Content::text("Multiple content types test:"),
                    Content::image_base64(PNG_BASE64, "image/png"),
                    Content::resource_text(
                        "test://mixed-content-resource",
                        "application/json",
                        r#"{"test":"data","value":123}"#,
                    ),
                ])
            },
        )?
        .tool(
            Tool::new("test_error_handling", "Always returns a tool error."),
            |_, _| ToolOutcome::declined("This tool intentionally returns an error for testing"),
        )?
        .tool(
            Tool::new(
                "json_schema_2020_12_tool",
                "Publishes a JSON Schema 2020-12 input schema verbatim.",
            )
            .input_schema(json!({
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "type": "object",
                "$defs": {"address": {"$anchor": "addressDef", "type": "object",
                    "properties": {"street": {"type": "string"}, "city": {"type": "string"}}}},
                "properties": {
                    "name": {"type": "string"},
                    "address": {"$ref": "#/$defs/address"},
                    "contactMethod": {"type": "string", "enum": ["phone", "email"]},
                    "phone": {"type": "string"},
                    "email": {"type": "string"},
                },
                "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
                "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
                "then": {"required": ["phone"]},
                "else": {"required": ["email"]},
                "additionalProperties": false,
            })),
            |args, _| ToolOutcome::text(format!("received {args}")),
        )?
        .tool(
            Tool::new(
                "test_missing_capability",
                "Needs the client's sampling capability.",
            )
            .requires_client_capabilities(sampling()),
            |_, _| ToolOutcome::text("Success"),
        )?
        .tool(
            Tool::new(
                "test_tool_with_progress",
                "Reports progress three times, 50 ms apart.",
            ),
            with_progress,
        )?
        .tool(
            Tool::new(
                "test_tool_with_logging",
                "Logs three info messages, 50 ms apart.",
            ),
            with_logging,
        )?
        .tool(
            Tool::new(
                "test_logging_tool",
                "Logs only when the request asks for a log level.",
            ),
            |_, ctx| {
                ctx.log(LogLevel::Info, json!("logging tool ran"));
                ToolOutcome::text("Logging evaluated")
            },
        )?
        .tool(
            Tool::new(
                "test_custom_headers",
                "Takes arguments that clients repeat in Mcp-Param-* headers.",
            )
            .input_schema(json!({
                "type": "object",
                "properties": {
                    "region": {"type": "string", "x-mcp-header": "Region"},
                    "priority": {"type": "integer", "x-mcp-header": "Priority"},
                },
                "required": ["region"],
            })),
            |args, _| ToolOutcome::text(format!("routed to {}", args["region"])),
        )?
        .tool(
            Tool::new(
                "test_trigger_tool_change",
                "Announces a change of the tool list to listeners.",
            ),
            |_, ctx| {
                ctx.notify_tools_changed();
                ToolOutcome::text("Mutation triggered")
            },
        )?
        .tool(
            Tool::new(
                "test_streaming_elicitation",
                "Streams a notification (when asked for progress), then completes.",
            ),
            |_, ctx| {
                ctx.progress(1.0, Some(1.0), Some("streaming"));
                ToolOutcome::text("Streaming complete")
            },
        )
}

/// Three progress steps 50 ms apart (sent only when the request carries a
/// progress token), then a text result.
fn with_progress(_: &serde_json::Value, ctx: &CallContext) -> ToolOutcome {
    for (step, done) in [0.0, 50.0, 100.0].into_iter().enumerate() {
        if step > 0 {
            thread::sleep(Duration::from_millis(50));
        }
        ctx.progress(done, Some(100.0), Some(&format!("step {}", step + 1)));
    }
    ToolOutcome::text("Progress tool completed")
}

/// Three info log messages 50 ms apart (sent only when the client asked for
/// that level), then a text result.
fn with_logging(_: &serde_json::Value, ctx: &CallContext) -> ToolOutcome {
    let steps = [
        "Tool execution started",
        "Tool processing data",
        "Tool execution completed",
    ];
    for (step, text) in steps.into_iter().enumerate() {
        if step > 0 {
            thread::sleep(Duration::from_millis(50));
        }
        ctx.log(LogLevel::Info, json!(text));
    }
    ToolOutcome::text("Tool with logging executed successfully")
}

fn sampling() -> serde_json::Map<String, serde_json::Value> {
    let mut capabilities = serde_json::Map::new();
    capabilities.insert("sampling".into(), json!({}));
    capabilities
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let host = ToolHost::bind(
        HostConfig::default()
            .server_name("toolhost-conformance")
            .capability_urls(true)
            .on_event(|event| eprintln!("[toolhost] {event:?}")),
    )?;
    let session = host.open_session(fixtures()?);
    let url = session
        .capability_url()
        .ok_or("capability URLs were enabled but the session has none")?;
    let mut stdout = io::stdout().lock();
    writeln!(
        stdout,
        "{}",
        json!({"url": url, "authorization": session.authorization()})
    )?;
    writeln!(stdout, "conformance fixtures served; stop by closing stdin")?;
    stdout.flush()?;
    drop(stdout);
    let _ = io::stdin().lock().read_to_end(&mut Vec::new());
    drop(session);
    host.shutdown();
    Ok(())
}
