//! What checking a call's arguments costs, next to what the call costs.
//!
//! Validates arguments against a realistic 10-property tool schema (valid
//! and invalid, the latter with its message text), compiles the schema,
//! decodes the arguments into a Rust type as a typed tool does (twice per
//! call: once before the call is admitted, once for the handler), and — for
//! scale — times a whole `tools/call` round trip over loopback HTTP to a
//! host serving the same tool. Prints nanoseconds per operation and the
//! ratio.
//!
//! ```text
//! cargo bench --bench schema
//! ```

use std::hint::black_box;
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::{json, Value};
use toolhost::{HostConfig, Schema, StaticSurface, Tool, ToolHost, ToolOutcome};
use toolhost_tests::Conn;

/// The arguments of the tool, as a typed tool's handler takes them.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // only decoded
struct CreateEvent {
    title: String,
    start: String,
    duration_minutes: u32,
    #[serde(default)]
    attendees: Vec<String>,
    location: Option<String>,
    reminder: Option<String>,
    priority: Option<u8>,
    #[serde(default)]
    tags: Vec<String>,
    visibility: Option<String>,
    notes: Option<String>,
}

/// How long each measurement runs.
const RUN: Duration = Duration::from_millis(1500);

fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "title": {"type": "string", "minLength": 1, "maxLength": 200},
            "start": {"type": "string", "format": "date-time"},
            "duration_minutes": {"type": "integer", "minimum": 1, "maximum": 1440},
            "attendees": {
                "type": "array", "maxItems": 50, "uniqueItems": true,
                "items": {"type": "string", "format": "email"},
            },
            "location": {"type": ["string", "null"], "maxLength": 500},
            "reminder": {"enum": ["none", "5m", "15m", "1h", "1d"]},
            "priority": {"type": "integer", "minimum": 1, "maximum": 5},
            "tags": {"type": "array", "items": {"type": "string", "pattern": "^[a-z0-9-]{1,32}$"}},
            "visibility": {"type": "string", "enum": ["public", "private", "team"]},
            "notes": {"type": "string", "maxLength": 2000},
        },
        "required": ["title", "start", "duration_minutes"],
        "additionalProperties": false,
    })
}

fn valid_arguments() -> Value {
    json!({
        "title": "Design review: schema validation",
        "start": "2025-11-25T14:00:00Z",
        "duration_minutes": 45,
        "attendees": ["ada@example.com", "grace@example.com", "linus@example.com"],
        "location": "Room 4.12",
        "reminder": "15m",
        "priority": 2,
        "tags": ["design", "mcp", "q4-review"],
        "visibility": "team",
        "notes": "Bring the benchmark numbers.",
    })
}

fn invalid_arguments() -> Value {
    json!({
        "title": "",
        "start": "2025-11-25T14:00:00Z",
        "duration_minutes": 0,
        "attendees": ["ada@example.com", "ada@example.com"],
        "priority": 9,
        "tags": ["Design"],
        "visibility": "everyone",
        "colour": "red",
    })
}

/// Runs `op` for about [`RUN`] and returns nanoseconds per call.
fn measure(mut op: impl FnMut()) -> f64 {
    for _ in 0..1_000 {
        op();
    }
    let started = Instant::now();
    let mut rounds: u64 = 0;
    while started.elapsed() < RUN {
        for _ in 0..100 {
            op();
        }
        rounds += 100;
    }
    started.elapsed().as_secs_f64() * 1e9 / rounds as f64
}

/// Nanoseconds per `tools/call` of the same tool over one keep-alive
/// loopback connection.
fn round_trip() -> Result<f64, Box<dyn std::error::Error>> {
    let host = ToolHost::bind(HostConfig::default())?;
    let tool = Tool::new("create_event", "Creates a calendar event.").input_schema(schema());
    let surface = StaticSurface::new().tool(tool, |_, _| ToolOutcome::text("created"))?;
    let session = host.open_session(surface);
    let authorization = session.authorization();
    let mut conn = Conn::open(host.local_addr())?;
    let mut headers = vec![
        ("Authorization", authorization.as_str()),
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
    ];
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "schema-bench", "version": "0"}}});
    let reply = conn.request("POST", "/mcp", &headers, init.to_string().as_bytes())?;
    let mcp_session = reply
        .header("mcp-session-id")
        .ok_or("initialize returned no Mcp-Session-Id")?
        .to_owned();
    headers.push(("Mcp-Session-Id", &mcp_session));
    headers.push(("MCP-Protocol-Version", "2025-11-25"));
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    conn.request("POST", "/mcp", &headers, note.to_string().as_bytes())?;
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "create_event", "arguments": valid_arguments()}})
    .to_string();
    let mut failure = None;
    let ns = measure(
        || match conn.request("POST", "/mcp", &headers, call.as_bytes()) {
            Ok(reply) if reply.status == 200 => {}
            Ok(reply) => failure = Some(format!("status {}", reply.status)),
            Err(err) => failure = Some(err.to_string()),
        },
    );
    match failure {
        Some(why) => Err(why.into()),
        None => Ok(ns),
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let source = schema();
    let compiled = Schema::compile(&source)?;
    let (valid, invalid) = (valid_arguments(), invalid_arguments());
    assert!(compiled.validate(&valid).is_ok());
    let violations = compiled
        .validate(&invalid)
        .err()
        .ok_or("the invalid arguments passed")?;

    let compile_ns = measure(|| {
        black_box(Schema::compile(black_box(&source)).is_ok());
    });
    let valid_ns = measure(|| {
        black_box(compiled.validate(black_box(&valid)).is_ok());
    });
    let invalid_ns = measure(|| {
        black_box(
            compiled
                .validate(black_box(&invalid))
                .map_err(|v| v.to_string())
                .is_err(),
        );
    });
    let decode_ns = measure(|| {
        black_box(CreateEvent::deserialize(black_box(&valid)).is_ok());
    });
    let call_ns = round_trip()?;

    println!(
        "schema: 10 properties, {} violations in the invalid case:",
        violations.len()
    );
    for line in violations.to_string().lines() {
        println!("    {line}");
    }
    println!("compile the schema (once per tool):   {compile_ns:>10.0} ns");
    println!("validate valid arguments:             {valid_ns:>10.0} ns");
    println!("validate invalid arguments + message: {invalid_ns:>10.0} ns");
    println!("decode into a type (typed tools, x2): {decode_ns:>10.0} ns");
    println!("tools/call round trip over loopback:  {call_ns:>10.0} ns");
    println!(
        "validation / round trip:              {:>10.2} % (valid), {:.2} % (invalid)",
        100.0 * valid_ns / call_ns,
        100.0 * invalid_ns / call_ns
    );
    println!(
        "two decodes / round trip:             {:>10.2} %",
        200.0 * decode_ns / call_ns
    );
    Ok(())
}
