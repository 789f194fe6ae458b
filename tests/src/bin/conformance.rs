//! The server the official MCP conformance suite tests: the fixture tools its
//! server scenarios call, by their fixed names, with the outputs they check
//! (see CONFORMANCE.md in the shared folder, and the suite's scenario
//! sources).
//!
//! The suite's runner cannot send an `Authorization` header, so this program
//! enables capability URLs and prints the session's `/cap/<token>/mcp` URL.
//! Its first stdout line is `{"url", "authorization"}`; it serves until stdin
//! closes or Ctrl-C.
//!
//! Every fixture of the scored scenarios is registered; the unscored
//! `test_reconnection` (SSE resumption with an event store) is not.

use std::io::{self, Read, Write};
use std::thread;
use std::time::Duration;

use serde_json::{json, Value};
use toolhost::{
    AskError, CallContext, Content, HostConfig, InputRequest, LogLevel, StaticSurface, Tool,
    ToolHost, ToolOutcome,
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
                "test_reconnection",
                "Closes its response stream mid-call; the result arrives when the client resumes.",
            ),
            |_, ctx| {
                // The client reconnects with Last-Event-ID (2025-11-25
                // polling); the result waits for it on the host.
                ctx.close_stream(Duration::from_millis(500));
                thread::sleep(Duration::from_millis(100));
                ToolOutcome::text("Reconnected and received the result")
            },
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

/// Asks the client's model about `prompt` and reports its answer.
fn sample_text(
    ctx: &CallContext,
    key: &str,
    prompt: &str,
    max_tokens: u32,
) -> Result<String, AskError> {
    let params = json!({"messages": [{"role": "user", "content": {"type": "text", "text": prompt}}],
                        "maxTokens": max_tokens});
    let answer = ctx.ask(vec![InputRequest::sample(params).key(key)])?;
    Ok(answer[0]["content"]["text"]
        .as_str()
        .unwrap_or("")
        .to_owned())
}

/// A one-field form.
fn form(field: &str, kind: &str) -> Value {
    json!({"type": "object", "properties": {field: {"type": kind}}, "required": [field]})
}

/// The ask-back fixtures of 2025-11-25 (sampling and elicitation on the
/// call's stream) and of 2026-07-28 (input_required rounds). The same code
/// serves both: the host decides how the question travels.
fn ask_back(surface: StaticSurface) -> Result<StaticSurface, toolhost::Error> {
    surface
        .tool(
            Tool::new("test_sampling", "Asks the client's model about the prompt.")
                .input_schema(json!({"type": "object",
                    "properties": {"prompt": {"type": "string"}}, "required": ["prompt"]})),
            |args, ctx| {
                let prompt = args["prompt"].as_str().unwrap_or_default();
                match sample_text(ctx, "sample", prompt, 100) {
                    Ok(text) => ToolOutcome::text(format!("LLM response: {text}")),
                    Err(err) => err.into(),
                }
            },
        )?
        .tool(
            Tool::new("test_elicitation", "Asks the user for a username and email.")
                .input_schema(json!({"type": "object",
                    "properties": {"message": {"type": "string"}}, "required": ["message"]})),
            |args, ctx| {
                let schema = json!({"type": "object", "properties": {
                    "username": {"type": "string", "description": "User's response"},
                    "email": {"type": "string", "description": "User's email address"}},
                    "required": ["username", "email"]});
                let message = args["message"].as_str().unwrap_or_default();
                match ctx.ask(vec![InputRequest::elicit(message, schema)]) {
                    Ok(answer) => ToolOutcome::text(format!(
                        "User response: action={}, content={}",
                        answer[0]["action"], answer[0]["content"]
                    )),
                    Err(err) => err.into(),
                }
            },
        )?
        .tool(
            Tool::new("test_elicitation_sep1034_defaults", "Asks with defaults for every field."),
            |_, ctx| {
                let schema = json!({"type": "object", "properties": {
                    "name": {"type": "string", "default": "John Doe"},
                    "age": {"type": "integer", "default": 30},
                    "score": {"type": "number", "default": 95.5},
                    "status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
                    "verified": {"type": "boolean", "default": true}},
                    "required": []});
                completed(ctx.ask(vec![InputRequest::elicit("Please review your profile", schema)]))
            },
        )?
        .tool(
            Tool::new("test_elicitation_sep1330_enums", "Asks with every enum variant."),
            |_, ctx| {
                let schema = json!({"type": "object", "properties": {
                    "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
                    "titledSingle": {"type": "string", "oneOf": [
                        {"const": "value1", "title": "First Option"},
                        {"const": "value2", "title": "Second Option"},
                        {"const": "value3", "title": "Third Option"}]},
                    "legacyEnum": {"type": "string", "enum": ["opt1", "opt2", "opt3"],
                        "enumNames": ["Option One", "Option Two", "Option Three"]},
                    "untitledMulti": {"type": "array", "minItems": 1, "maxItems": 3,
                        "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
                    "titledMulti": {"type": "array", "minItems": 1, "maxItems": 3,
                        "items": {"anyOf": [
                            {"const": "value1", "title": "First Choice"},
                            {"const": "value2", "title": "Second Choice"},
                            {"const": "value3", "title": "Third Choice"}]}}},
                    "required": []});
                completed(ctx.ask(vec![InputRequest::elicit("Pick your options", schema)]))
            },
        )?
        .tool(
            Tool::new("test_input_required_result_elicitation", "Asks the user's name."),
            |_, ctx| {
                let ask = InputRequest::elicit("What is your name?", form("name", "string")).key("user_name");
                match ctx.ask(vec![ask]) {
                    Ok(answer) => ToolOutcome::text(format!(
                        "Hello, {}!",
                        answer[0]["content"]["name"].as_str().unwrap_or("stranger")
                    )),
                    Err(err) => err.into(),
                }
            },
        )?
        .tool(
            Tool::new("test_input_required_result_sampling", "Asks the model a question."),
            |_, ctx| match sample_text(ctx, "capital_question", "What is the capital of France?", 100) {
                Ok(text) => ToolOutcome::text(format!("The model said: {text}")),
                Err(err) => err.into(),
            },
        )?
        .tool(
            Tool::new("test_input_required_result_list_roots", "Asks for the client's roots."),
            |_, ctx| match ctx.ask(vec![InputRequest::list_roots().key("client_roots")]) {
                Ok(answer) => {
                    let uris: Vec<&str> = answer[0]["roots"]
                        .as_array()
                        .map(|roots| roots.iter().filter_map(|r| r["uri"].as_str()).collect())
                        .unwrap_or_default();
                    ToolOutcome::text(format!("Roots: {}", uris.join(", ")))
                }
                Err(err) => err.into(),
            },
        )?
        .tool(
            Tool::new("test_input_required_result_request_state", "Asks for a confirmation."),
            |_, ctx| {
                let ask = InputRequest::elicit("Please confirm", form("ok", "boolean")).key("confirm");
                match ctx.ask(vec![ask]) {
                    // The host only hands over answers whose signed state
                    // came back intact, so reaching here means it did.
                    Ok(_) => ToolOutcome::text("state-ok: the request state came back intact"),
                    Err(err) => err.into(),
                }
            },
        )?
        .tool(
            Tool::new("test_input_required_result_multiple_inputs", "Asks three things at once."),
            |_, ctx| {
                let asks = vec![
                    InputRequest::elicit("What is your name?", form("name", "string")).key("user_name"),
                    InputRequest::sample(json!({"messages": [{"role": "user",
                        "content": {"type": "text", "text": "Generate a greeting"}}], "maxTokens": 50}))
                    .key("greeting"),
                    InputRequest::list_roots().key("client_roots"),
                ];
                match ctx.ask(asks) {
                    Ok(answers) => ToolOutcome::text(format!("received {} answers", answers.len())),
                    Err(err) => err.into(),
                }
            },
        )?
        .tool(
            Tool::new("test_input_required_result_multi_round", "Asks twice, one after the other."),
            |_, ctx| {
                let step1 = InputRequest::elicit("Step 1: What is your name?", form("name", "string")).key("step1");
                let name = match ctx.ask(vec![step1]) {
                    Ok(answer) => answer[0]["content"]["name"].clone(),
                    Err(err) => return err.into(),
                };
                let step2 = InputRequest::elicit("Step 2: What is your favorite color?", form("color", "string")).key("step2");
                match ctx.ask(vec![step2]) {
                    Ok(answer) => ToolOutcome::text(format!(
                        "{name} likes {}",
                        answer[0]["content"]["color"]
                    )),
                    Err(err) => err.into(),
                }
            },
        )?
        .tool(
            Tool::new("test_input_required_result_tampered_state", "Asks once, with a signed state."),
            |_, ctx| {
                let ask = InputRequest::elicit("Please confirm", form("ok", "boolean")).key("confirm");
                match ctx.ask(vec![ask]) {
                    Ok(_) => ToolOutcome::text("state verified"),
                    Err(err) => err.into(),
                }
            },
        )?
        .tool(
            Tool::new("test_input_required_result_capabilities", "Asks only what the client can answer."),
            |_, ctx| {
                let mut asks = Vec::new();
                if ctx.can_elicit() {
                    asks.push(InputRequest::elicit("What is your name?", form("name", "string")).key("elicit_input"));
                }
                if ctx.can_sample() {
                    asks.push(InputRequest::sample(json!({"messages": [{"role": "user",
                        "content": {"type": "text", "text": "Sample request"}}], "maxTokens": 50}))
                    .key("sample_input"));
                }
                let keys: Vec<String> = asks.iter().map(|a| a.method().to_owned()).collect();
                match ctx.ask(asks) {
                    Ok(_) => ToolOutcome::text(format!("capabilities-ok: received {}", keys.join(", "))),
                    Err(err) => err.into(),
                }
            },
        )
}

/// The text the elicitation fixtures answer with.
fn completed(answer: Result<Vec<Value>, AskError>) -> ToolOutcome {
    match answer {
        Ok(answer) => ToolOutcome::text(format!(
            "Elicitation completed: action={}, content={}",
            answer[0]["action"], answer[0]["content"]
        )),
        Err(err) => err.into(),
    }
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
    let session = host.open_session(ask_back(fixtures()?)?);
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
