//! Hosts a few demo tools and prints what an agent needs to connect.
//!
//! The first stdout line is one JSON object, `{"url", "authorization",
//! "acp"}`, so scripts and test rigs can spawn this and connect. Then it
//! proves a round trip through its own endpoint (including a call refused
//! for its arguments before any handler runs), prints how to connect, and
//! serves until stdin closes or Ctrl-C.
//!
//! Every tool declares typed, required arguments: try calling `transfer`
//! with `{"amount": 0}` or `convert_temperature` with `{"value": "hot"}` and
//! the model gets back exactly what to fix.
//!
//! ```text
//! cargo run --example serve
//! ```

#[path = "../tests/support/wire.rs"]
mod wire;

use std::io::{self, Read, Write};
use std::time::Instant;

use serde_json::{json, Value};
use toolhost::{
    CallResult, Event, HostConfig, StaticSurface, Tool, ToolAnnotations, ToolHost, ToolOutcome,
    ToolSurface,
};

fn demo_tools() -> Result<StaticSurface, toolhost::Error> {
    StaticSurface::new()
        .tool(
            Tool::new("echo", "Returns the given text unchanged.")
                .title("Echo")
                .input_schema(json!({
                    "type": "object",
                    "properties": {"text": {"type": "string", "description": "Text to echo."}},
                    "required": ["text"],
                }))
                .annotations(ToolAnnotations::new().read_only(true).open_world(false)),
            |args, _ctx| match args["text"].as_str() {
                Some(text) => ToolOutcome::text(text),
                None => ToolOutcome::declined("`text` must be a string"),
            },
        )?
        .tool(
            Tool::new("add", "Adds two numbers and returns {\"sum\": a + b}.")
                .title("Add")
                .input_schema(json!({
                    "type": "object",
                    "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                    "required": ["a", "b"],
                }))
                .output_schema(json!({
                    "type": "object",
                    "properties": {"sum": {"type": "number"}},
                    "required": ["sum"],
                }))
                .annotations(ToolAnnotations::new().read_only(true).open_world(false)),
            |args, _ctx| {
                let sum = match (&args["a"], &args["b"]) {
                    (a, b) if a.is_i64() && b.is_i64() => a
                        .as_i64()
                        .zip(b.as_i64())
                        .and_then(|(a, b)| a.checked_add(b))
                        .map(Value::from),
                    (a, b) => a.as_f64().zip(b.as_f64()).map(|(a, b)| Value::from(a + b)),
                };
                match sum {
                    Some(sum) => ToolOutcome::json(json!({ "sum": sum })),
                    None => ToolOutcome::declined("`a` and `b` must both be numbers"),
                }
            },
        )?
        .tool(
            Tool::new(
                "transfer",
                "Transfers an amount of credits; amounts over 100 are declined.",
            )
            .title("Transfer credits")
            .input_schema(json!({
                "type": "object",
                "properties": {"amount": {"type": "integer", "minimum": 1}},
                "required": ["amount"],
            }))
            .annotations(
                ToolAnnotations::new()
                    .read_only(false)
                    .destructive(false)
                    .idempotent(false)
                    .open_world(false),
            ),
            |args, _ctx| match args["amount"].as_i64() {
                Some(amount) if amount > 100 => ToolOutcome::declined(format!(
                    "amount {amount} exceeds the limit of 100 credits per transfer"
                ))
                .with_code(json!("over_limit")),
                Some(amount) if amount >= 1 => ToolOutcome::text(format!("transferred {amount}")),
                _ => ToolOutcome::declined("`amount` must be a positive integer"),
            },
        )?
        .tool(
            Tool::new(
                "convert_temperature",
                "Converts a temperature between Celsius (C), Fahrenheit (F) and Kelvin (K).",
            )
            .title("Convert temperature")
            .input_schema(json!({
                "type": "object",
                "properties": {
                    "value": {"type": "number", "description": "The temperature to convert."},
                    "from": {"enum": ["C", "F", "K"]},
                    "to": {"enum": ["C", "F", "K"]},
                },
                "required": ["value", "from", "to"],
                "additionalProperties": false,
            }))
            .output_schema(json!({
                "type": "object",
                "properties": {"value": {"type": "number"}, "unit": {"enum": ["C", "F", "K"]}},
                "required": ["value", "unit"],
            }))
            .annotations(
                ToolAnnotations::new()
                    .read_only(true)
                    .idempotent(true)
                    .open_world(false),
            ),
            // The input schema was checked before this runs: `value` is a
            // number and both units are one of C, F, K.
            |args, _ctx| {
                let value = args["value"].as_f64().unwrap_or_default();
                let kelvin = match args["from"].as_str() {
                    Some("C") => value + 273.15,
                    Some("F") => (value - 32.0) * 5.0 / 9.0 + 273.15,
                    _ => value,
                };
                if kelvin < 0.0 {
                    return ToolOutcome::declined(format!(
                        "{value} {} is below absolute zero",
                        args["from"].as_str().unwrap_or("K")
                    ));
                }
                let (converted, unit) = match args["to"].as_str() {
                    Some("C") => (kelvin - 273.15, "C"),
                    Some("F") => ((kelvin - 273.15) * 9.0 / 5.0 + 32.0, "F"),
                    _ => (kelvin, "K"),
                };
                let rounded = (converted * 100.0).round() / 100.0;
                ToolOutcome::json(json!({ "value": rounded, "unit": unit }))
            },
        )
}

fn on_event(event: &Event) {
    match event {
        Event::CallFinished {
            tool,
            duration,
            outcome,
        } => {
            let outcome = match outcome {
                CallResult::Success => "success".to_owned(),
                CallResult::Declined { reason } => format!("declined: {reason}"),
                CallResult::Failed { detail } => format!("failed: {detail}"),
                _ => format!("{outcome:?}"),
            };
            eprintln!("[toolhost] {tool} → {outcome} in {duration:?}");
        }
        Event::CallStarted { .. } => {}
        other => eprintln!("[toolhost] {other:?}"),
    }
}

/// initialize → tools/list → tools/call through the real endpoint.
fn round_trip(addr: std::net::SocketAddr, authorization: &str) -> Result<String, String> {
    let started = Instant::now();
    let mut conn = wire::Conn::open(addr).map_err(|e| e.to_string())?;
    let post = |conn: &mut wire::Conn, session: Option<&str>, body: Value| {
        let mut headers = vec![
            ("Authorization", authorization),
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
        ];
        if let Some(session) = session {
            headers.push(("Mcp-Session-Id", session));
        }
        conn.request("POST", "/mcp", &headers, body.to_string().as_bytes())
            .map_err(|e| e.to_string())
    };
    let init = post(
        &mut conn,
        None,
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "serve-self-check", "version": "0"}}}),
    )?;
    let session = init
        .header("mcp-session-id")
        .ok_or("initialize returned no Mcp-Session-Id")?
        .to_owned();
    post(
        &mut conn,
        Some(&session),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )?;
    let list = post(
        &mut conn,
        Some(&session),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    )?;
    let tools = list.json()["result"]["tools"]
        .as_array()
        .map_or(0, Vec::len);
    let call = post(
        &mut conn,
        Some(&session),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
               "params": {"name": "echo", "arguments": {"text": "round trip ok"}}}),
    )?;
    let text = call.json()["result"]["content"][0]["text"].clone();
    if text != "round trip ok" {
        return Err(format!("echo answered {text}"));
    }
    let bad = post(
        &mut conn,
        Some(&session),
        json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
               "params": {"name": "transfer", "arguments": {"amount": 0}}}),
    )?;
    let refused = bad.json()["result"].clone();
    let reason = refused["content"][0]["text"].as_str().unwrap_or_default();
    if refused["isError"] != true || !reason.contains("/amount: expected integer ≥ 1, got 0") {
        return Err(format!(
            "transfer {{\"amount\": 0}} was not refused: {refused}"
        ));
    }
    conn.request(
        "DELETE",
        "/mcp",
        &[
            ("Authorization", authorization),
            ("Mcp-Session-Id", &session),
        ],
        b"",
    )
    .map_err(|e| e.to_string())?;
    Ok(format!(
        "initialize → tools/list ({tools} tools) → tools/call echo → ok, and transfer \
         {{\"amount\": 0}} refused before its handler ({}) in {:.1} ms",
        reason.lines().last().unwrap_or_default(),
        started.elapsed().as_secs_f64() * 1000.0
    ))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let host = ToolHost::bind(
        HostConfig::default()
            .server_name("toolhost-demo")
            .server_title("toolhost demo tools")
            .instructions(
                "Demo tools: echo text, add numbers, transfer credits (at most 100), \
                 convert temperatures.",
            )
            .on_event(on_event),
    )?;
    let tools = demo_tools()?;
    // Schema keywords toolhost cannot check are reported, never ignored
    // silently: an application shows them once, at startup.
    let listed = tools.list_tools();
    for tool in &listed {
        for warning in tool.schema_warnings() {
            eprintln!("[toolhost] tool {:?}: {warning}", tool.name());
        }
    }
    let names: Vec<&str> = listed.iter().map(Tool::name).collect();
    let session = host.open_session(tools);
    let authorization = session.authorization();

    let first_line = json!({
        "url": session.url(),
        "authorization": authorization,
        "acp": session.acp_mcp_servers(),
    });
    let mut stdout = io::stdout().lock();
    writeln!(stdout, "{first_line}")?;
    stdout.flush()?;

    let check = round_trip(host.local_addr(), &authorization);
    writeln!(
        stdout,
        "\ntoolhost demo serving {} tools ({}) at {}",
        names.len(),
        names.join(", "),
        session.url()
    )?;
    match &check {
        Ok(report) => writeln!(stdout, "self-check: {report}")?,
        Err(why) => writeln!(stdout, "self-check FAILED: {why}")?,
    }
    writeln!(
        stdout,
        "\nACP session/new \"mcpServers\":\n{}",
        serde_json::to_string_pretty(&session.acp_mcp_servers())?
    )?;
    writeln!(
        stdout,
        "\nTry it with curl:\n  curl -si {url} -H 'Authorization: {authorization}' \\\n    -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \\\n    -d '{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{{}},\"clientInfo\":{{\"name\":\"curl\",\"version\":\"0\"}}}}}}'",
        url = session.url()
    )?;
    writeln!(stdout, "\nServing until stdin closes or Ctrl-C.")?;
    stdout.flush()?;
    drop(stdout);

    // Blocks until stdin reaches end of file (or fails): the parent's signal
    // to stop.
    let _ = io::stdin().lock().read_to_end(&mut Vec::new());
    eprintln!(
        "[toolhost] stdin closed after {} tool calls; shutting down",
        session.calls_served()
    );
    drop(session);
    host.shutdown();
    check.map(|_| ()).map_err(Into::into)
}
