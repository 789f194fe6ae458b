//! Hosts a few demo tools and prints what an agent needs to connect.
//!
//! The first stdout line is one JSON object, `{"url", "authorization",
//! "acp", "stdio"}`, so scripts and test rigs can spawn this and connect:
//! `acp` is the ACP `mcpServers` list with the HTTP entry, and `stdio` the
//! ACP stdio entry (`name`, `command`, `args`, `env` as `[{"name",
//! "value"}]`) for the same session, which any MCP stdio client can start:
//! it runs this program again as a relay to the session (which is why
//! `main` begins with `run_if_requested`). Then it
//! proves a round trip through its own endpoint (including a call refused
//! for its arguments before any handler runs, and a streamed call the
//! client resumes after the host closes its connection), prints how to
//! connect — the ACP entries, then one line to copy for each of Claude
//! Code, Codex, Copilot CLI, Gemini CLI and curl, which reach the bearer
//! through files of mode 0600 or the environment, never a command line —
//! and serves until stdin closes or Ctrl-C.
//!
//! Its stdout carries the bearer itself (the first line and the ACP and
//! stdio entries hold it), and says so: send it to a terminal or a pipe
//! you read, never to a log others can read.
//!
//! Each handler reads its arguments from the JSON the agent sent: the host
//! checks them against the tool's input schema before the handler runs, so
//! a handler can rely on what the schema requires. Try calling `transfer`
//! with `{"amount": 0}` or `convert_temperature` with `{"value": "hot"}` and
//! the model gets back exactly what to fix. With serde's derive a handler
//! takes a Rust type of its own instead (`StaticSurface::typed`, shown in
//! the README); this demo does without it so that it builds nothing but
//! toolhost's own dependencies.
//!
//! ```text
//! cargo run --example serve
//! ```
//!
//! It takes no options: `--help` (or `-h`) prints what it does and exits;
//! anything else on its command line is refused with that text on stderr
//! and exit status 2.

use std::fs;
use std::io::{self, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use toolhost::client::{CallOptions, Era};
use toolhost::{
    Event, HostConfig, StaticSurface, Tool, ToolAnnotations, ToolError, ToolHost, ToolOutcome,
    ToolSession, ToolSurface,
};

/// A temperature scale `convert_temperature` knows.
#[derive(Clone, Copy, Debug)]
enum Unit {
    C,
    F,
    K,
}

impl Unit {
    /// The unit named by `args[member]`, which the input schema limits to
    /// "C", "F" and "K".
    fn of(args: &Value, member: &str) -> Result<Unit, ToolError> {
        match args[member].as_str() {
            Some("C") => Ok(Unit::C),
            Some("F") => Ok(Unit::F),
            Some("K") => Ok(Unit::K),
            other => Err(ToolError::failed(format!(
                "the schema let through {member} = {other:?}"
            ))),
        }
    }

    fn name(self) -> &'static str {
        match self {
            Unit::C => "C",
            Unit::F => "F",
            Unit::K => "K",
        }
    }
}

fn demo_tools() -> Result<StaticSurface, toolhost::Error> {
    StaticSurface::builder()
        .tool(
            Tool::new("echo", "Returns the given text unchanged.")
                .title("Echo")
                .input_schema(json!({
                    "type": "object",
                    "properties": {"text": {"type": "string", "description": "Text to echo."}},
                    "required": ["text"],
                }))
                .annotations(ToolAnnotations::new().read_only(true).open_world(false)),
            |args, _ctx| args["text"].as_str().unwrap_or_default().to_owned(),
        )
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
            |args, _ctx| -> Result<ToolOutcome, ToolError> {
                // Two integers add exactly; anything else as floats.
                let (a, b) = (&args["a"], &args["b"]);
                let sum = match (a.as_i64(), b.as_i64()) {
                    (Some(a), Some(b)) => a.checked_add(b).map(Value::from),
                    _ => a.as_f64().zip(b.as_f64()).map(|(a, b)| Value::from(a + b)),
                };
                let sum = sum.ok_or("the sum does not fit in a number")?;
                Ok(ToolOutcome::json(json!({ "sum": sum })))
            },
        )
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
            |args, _ctx| {
                let amount = &args["amount"];
                if amount.as_i64().is_none_or(|amount| amount > 100) {
                    return Err(ToolError::declined(format!(
                        "amount {amount} exceeds the limit of 100 credits per transfer"
                    ))
                    .with_code(json!("over_limit")));
                }
                Ok(format!("transferred {amount}"))
            },
        )
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
            |args, _ctx| -> Result<ToolOutcome, ToolError> {
                let value = args["value"].as_f64().unwrap_or_default();
                let (from, to) = (Unit::of(args, "from")?, Unit::of(args, "to")?);
                let kelvin = match from {
                    Unit::C => value + 273.15,
                    Unit::F => (value - 32.0) * 5.0 / 9.0 + 273.15,
                    Unit::K => value,
                };
                if kelvin < 0.0 {
                    return Err(ToolError::declined(format!(
                        "{value} {from:?} is below absolute zero"
                    )));
                }
                let converted = match to {
                    Unit::C => kelvin - 273.15,
                    Unit::F => (kelvin - 273.15) * 9.0 / 5.0 + 32.0,
                    Unit::K => kelvin,
                };
                Ok(ToolOutcome::json(json!({
                    "value": (converted * 100.0).round() / 100.0,
                    "unit": to.name(),
                })))
            },
        )
        .tool(
            Tool::new(
                "count",
                "Counts from 1 to `to`, reporting each step as progress. With `reconnect`, \
                 closes the connection after the first step; the client resumes and gets the rest.",
            )
            .title("Count with progress")
            .input_schema(json!({
                "type": "object",
                "properties": {
                    "to": {"type": "integer", "minimum": 1, "maximum": 20},
                    "reconnect": {"type": "boolean", "default": false},
                },
                "required": ["to"],
                "additionalProperties": false,
            }))
            .annotations(ToolAnnotations::new().read_only(true).open_world(false)),
            |args, ctx| {
                let to = args["to"].as_u64().unwrap_or_default();
                let reconnect = args["reconnect"].as_bool().unwrap_or(false);
                let mut closed = false;
                for step in 1..=to {
                    let message = format!("step {step}");
                    ctx.progress(step as f64, Some(to as f64), Some(&message));
                    if step == 1 && reconnect {
                        // Only possible where streams resume (2025-03-26 to
                        // 2025-11-25); elsewhere the count goes on as is.
                        closed = ctx.close_stream(Duration::from_millis(50));
                    }
                    thread::sleep(Duration::from_millis(2));
                }
                if closed {
                    format!("counted to {to}; the stream was closed after step 1")
                } else {
                    format!("counted to {to}")
                }
            },
        )
        .build()
}

/// Every event but calls starting, worded as the `log` facade would get it
/// without a hook.
fn on_event(event: &Event) {
    if !matches!(event, Event::CallStarted { .. }) {
        eprintln!("[toolhost] {event}");
    }
}

/// initialize → tools/list → tools/call through the real endpoint, with the
/// crate's own blocking client, then a call that breaks its schema.
fn round_trip(session: &ToolSession) -> Result<String, String> {
    let started = Instant::now();
    let mut client = session
        .client_builder()
        .era(Era::Stateful)
        .client_info("serve-self-check", env!("CARGO_PKG_VERSION"))
        .connect()
        .map_err(|e| e.to_string())?;
    let tools = client.list_tools().map_err(|e| e.to_string())?.len();
    let echoed = client
        .call_tool("echo", json!({"text": "round trip ok"}))
        .map_err(|e| e.to_string())?;
    if echoed.text() != "round trip ok" || echoed.is_error {
        return Err(format!("echo answered {:?}", echoed.text()));
    }
    let refused = client
        .call_tool("transfer", json!({"amount": 0}))
        .map_err(|e| e.to_string())?;
    let reason = refused.text();
    if !refused.is_error || !reason.contains("/amount: expected integer ≥ 1, got 0") {
        return Err(format!(
            "transfer {{\"amount\": 0}} was not refused: {reason}"
        ));
    }
    // A streamed call whose connection the host closes mid-call: the
    // client resumes it and still sees every step and the result.
    let mut steps = Vec::new();
    let counted = client
        .call_tool_with(
            "count",
            json!({"to": 3, "reconnect": true}),
            CallOptions::new().on_progress(|p| steps.push(p.progress)),
        )
        .map_err(|e| e.to_string())?;
    if steps != [1.0, 2.0, 3.0] || !counted.text().contains("closed after step 1") {
        return Err(format!(
            "count with a reconnect answered {:?} after progress {steps:?}",
            counted.text()
        ));
    }
    client.close().map_err(|e| e.to_string())?;
    Ok(format!(
        "initialize → tools/list ({tools} tools) → tools/call echo → ok, transfer \
         {{\"amount\": 0}} refused before its handler ({}), and count resumed after the \
         host closed its stream (progress 1, 2, 3) in {:.1} ms",
        reason.lines().last().unwrap_or_default(),
        started.elapsed().as_secs_f64() * 1000.0
    ))
}

/// The variable the Codex line passes the bearer in.
const CODEX_BEARER_VAR: &str = "TOOLHOST_DEMO_BEARER";

/// The files other agents read this session from, in a directory of their
/// own that only this user can enter, removed when the demo ends (after
/// Ctrl-C they stay behind, holding a bearer that died with the host).
///
/// Why files: a bearer on a command line is in `/proc/PID/cmdline`, which
/// every user of the machine can read (`ps` shows it); a file of mode 0600
/// and a process's environment are its owner's alone.
struct AgentFiles {
    dir: PathBuf,
}

impl AgentFiles {
    fn write(session: &ToolSession) -> io::Result<AgentFiles> {
        let dir = std::env::temp_dir().join(format!("toolhost-demo-{}", session.session_id()));
        #[cfg(unix)]
        let builder = {
            let mut builder = fs::DirBuilder::new();
            std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
            builder
        };
        // Elsewhere the temporary folder is the user's own.
        #[cfg(not(unix))]
        let builder = fs::DirBuilder::new();
        // Refuses a directory that already exists: it is not ours.
        builder.create(&dir)?;
        let files = AgentFiles { dir };
        let pretty = |config: &Value| serde_json::to_string_pretty(config).unwrap_or_default();
        for (name, contents) in [
            ("claude.mcp.json", pretty(&session.claude_code_config())),
            ("copilot.mcp.json", pretty(&session.copilot_cli_config())),
            ("gemini-settings.json", pretty(&session.gemini_cli_config())),
            ("bearer", session.bearer_token().to_owned()),
            (
                "authorization.header",
                format!("Authorization: {}\n", session.authorization()),
            ),
        ] {
            toolhost::write_private_file(files.dir.join(name), contents.as_bytes())?;
        }
        Ok(files)
    }

    /// `name` in the directory, as one word of a POSIX shell line.
    fn path(&self, name: &str) -> String {
        shell_word(&self.dir.join(name).to_string_lossy())
    }

    /// One line for each agent, each of which reaches this session as it is
    /// now: the port and the bearer change on every run.
    fn how_to_connect(&self, session: &ToolSession) -> String {
        let name = "toolhost-demo";
        let url = session.url();
        let codex_url = shell_word(&format!("mcp_servers.{name}.url=\"{url}\""));
        let codex_var = shell_word(&format!(
            "mcp_servers.{name}.bearer_token_env_var=\"{CODEX_BEARER_VAR}\""
        ));
        format!(
            "Connect an agent to this session. Each line below hands it the bearer through a file \
             only you can read, under {dir}, or the environment: never a command line, which \
             every user can read.\n\
             \x20 Claude Code: claude --mcp-config {claude}\n\
             \x20 Codex:       {CODEX_BEARER_VAR}=\"$(cat {bearer})\" codex -c {codex_url} -c {codex_var}\n\
             \x20 Copilot CLI: copilot --additional-mcp-config @{copilot}\n\
             \x20 Gemini CLI:  GEMINI_CLI_SYSTEM_SETTINGS_PATH={gemini} gemini\n\
             \x20 ACP client:  the \"mcpServers\" above, in its session/new\n\
             \x20 curl:        curl -si {url} -H @{header} \\\n\
             \x20   -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \\\n\
             \x20   -d '{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{{}},\"clientInfo\":{{\"name\":\"curl\",\"version\":\"0\"}}}}}}'",
            dir = shell_word(&self.dir.to_string_lossy()),
            claude = self.path("claude.mcp.json"),
            copilot = self.path("copilot.mcp.json"),
            bearer = self.path("bearer"),
            gemini = self.path("gemini-settings.json"),
            header = self.path("authorization.header"),
        )
    }
}

impl Drop for AgentFiles {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.dir);
    }
}

/// `text` as one word of a POSIX shell line: as it is when it holds
/// nothing a shell would read specially, else in single quotes.
fn shell_word(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-:@%+=,".contains(c));
    if plain {
        text.to_owned()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

/// What `--help` prints.
const USAGE: &str = "\
usage: serve [-h | --help]

Hosts demo tools (echo, add, transfer, convert_temperature, count) on a
loopback MCP endpoint, checks a round trip through it, prints how to
connect an agent, and serves until stdin closes or Ctrl-C. It takes no
options: the port and the bearer are new on every run.

The first stdout line is one JSON object, {\"url\", \"authorization\",
\"acp\", \"stdio\"}, for scripts; then come the self-check, the ACP
entries and one line to copy for each of Claude Code, Codex, Copilot CLI,
Gemini CLI and curl. stdout carries the session's bearer (the JSON line
and both entries): keep it out of any log others can read. The lines to
copy reach it through files only you can read, never a command line.

  -h, --help  print this and exit
";

pub(crate) fn main() -> ExitCode {
    // The "stdio" entry starts this program again: that copy relays to the
    // session and exits here.
    toolhost::relay::run_if_requested();
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|arg| arg == "-h" || arg == "--help") {
        print!("{USAGE}");
        return ExitCode::SUCCESS;
    }
    if let Some(other) = args.first() {
        eprint!("serve: unknown option {other:?}\n\n{USAGE}");
        return ExitCode::from(2);
    }
    match serve() {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("serve: {err}");
            ExitCode::FAILURE
        }
    }
}

/// The demo itself, once the command line asked for it.
pub(crate) fn serve() -> Result<(), Box<dyn std::error::Error>> {
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

    let first_line = json!({
        "url": session.url(),
        "authorization": session.authorization(),
        "acp": session.acp_mcp_servers(),
        "stdio": session.stdio_relay_entry()?,
    });
    let mut stdout = io::stdout().lock();
    writeln!(stdout, "{first_line}")?;
    stdout.flush()?;

    let check = round_trip(&session);
    writeln!(
        stdout,
        "\ntoolhost demo serving {} tools ({}) at {}\n\
         This output carries the session's bearer (in the JSON line above and the ACP and stdio \
         entries below): keep it out of any log that others can read.",
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
        "\nFor an agent without HTTP entries, the stdio entry (it starts this program as a relay):\n{}",
        serde_json::to_string_pretty(&session.stdio_relay_entry()?)?
    )?;
    // Each agent's one line; the bearer reaches it through a file only this
    // user can read, or the environment the line starts it with.
    let files = AgentFiles::write(&session);
    match &files {
        Ok(files) => writeln!(stdout, "\n{}", files.how_to_connect(&session))?,
        Err(why) => writeln!(
            stdout,
            "\nNo files for other agents ({why}); the entries above are all there is."
        )?,
    }
    writeln!(stdout, "\nServing until stdin closes or Ctrl-C.")?;
    stdout.flush()?;
    drop(stdout);

    // Blocks until stdin reaches end of file (or fails): the parent's signal
    // to stop.
    let _ = io::stdin().lock().read_to_end(&mut Vec::new());
    // `calls_served` counts the calls that reached a handler: the
    // self-check's transfer, refused for its arguments, is not one.
    eprintln!(
        "[toolhost] stdin closed after {} tool calls reached a handler (not counting calls \
         refused before one, such as the self-check's transfer); shutting down",
        session.calls_served()
    );
    drop(files);
    drop(session);
    host.shutdown();
    check.map(|_| ()).map_err(Into::into)
}
