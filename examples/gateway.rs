//! One endpoint for an application's own tools and every tool of the MCP
//! servers named on the command line: each server is a layer of the
//! session's surface, its tools listed as `<server>_<tool>` after the
//! application's.
//!
//! The first stdout line is one JSON object, `{"url", "authorization",
//! "acp", "tools"}`, so scripts can spawn this and connect. It comes at
//! once: no server is waited for. Each server connects in the background
//! ([`McpServerBuilder::start`](toolhost::McpServerBuilder::start)) and its
//! tools join the list when it answers (the session's clients get
//! `notifications/tools/list_changed`), so `tools` names the tools ready
//! then — the application's own at least — and a server that is slow,
//! silent or absent never holds the application's tools up. Every change
//! of a server's state is a line on stderr (`MCP server "docs" is ready
//! with 3 tools`, `… is failed (…); trying again in 2.0s`). It serves until
//! stdin closes or Ctrl-C.
//!
//! ```text
//! cargo run --example gateway -- --stdio 'everything=npx -y @modelcontextprotocol/server-everything'
//! cargo run --example gateway -- --http docs=http://127.0.0.1:8000/mcp
//! DOCS_AUTH='Bearer abc' cargo run --example gateway -- --http docs=http://127.0.0.1:8000/mcp --auth-env docs=DOCS_AUTH
//! cargo run --example gateway -- --http docs=http://127.0.0.1:8000/mcp --auth-file docs=$HOME/.config/docs.auth
//! ```
//!
//! `--stdio NAME=COMMAND [ARGS…]` starts `COMMAND` with its arguments (the
//! value is split on spaces, so quote it as one word) as a stdio MCP server
//! named `NAME`; its stderr lines go to this program's stderr as events, and
//! it is started again if it dies. `--http NAME=URL` bridges the
//! Streamable HTTP server at `URL` (on this machine: the crate's client
//! speaks plain HTTP to loopback only) as `NAME`. Flags may repeat and mix;
//! the servers' layers come in the order given.
//!
//! An HTTP server's credential — sent as `Authorization` — comes from an
//! environment variable (`--auth-env NAME=VAR`) or from a file only its
//! owner can read (`--auth-file NAME=PATH`, mode 0600; a file others can
//! read is refused), never from the command line: every user of the
//! machine can read a process's command line (`ps`, `/proc/PID/cmdline`),
//! while its environment and a 0600 file are its owner's alone.

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::process::ExitCode;

use serde_json::json;
use toolhost::client::{Client, StdioServer};
use toolhost::{
    Event, HostConfig, LayeredSurface, McpServerLayer, StaticSurface, Tool, ToolHost, ToolOutcome,
    ToolSurface,
};

/// The application's own tools, first in precedence.
fn demo_tools() -> Result<StaticSurface, toolhost::Error> {
    StaticSurface::new()
        .tool(
            Tool::new("echo", "Returns the given text unchanged.").input_schema(json!({
                "type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"],
            })),
            |args, _| ToolOutcome::text(args["text"].as_str().unwrap_or("")),
        )?
        .tool(
            Tool::new("add", "Adds two integers and returns {\"sum\": a + b}.").input_schema(
                json!({
                    "type": "object",
                    "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                    "required": ["a", "b"],
                }),
            ),
            |args, _| {
                let (a, b) = (args["a"].as_i64(), args["b"].as_i64());
                match a.zip(b).and_then(|(a, b)| a.checked_add(b)) {
                    Some(sum) => ToolOutcome::json(json!({ "sum": sum })),
                    None => {
                        ToolOutcome::declined("a and b must be integers whose sum fits in 64 bits")
                    }
                }
            },
        )
}

/// Where a server named on the command line is.
enum Server {
    /// `--http NAME=URL`.
    Http(String),
    /// `--stdio NAME=COMMAND [ARGS…]`: the command and its arguments.
    Stdio(Vec<String>),
}

/// The servers named on the command line, in order, and the
/// `Authorization` value of each HTTP server that has one (read from the
/// variable or file named).
struct Args {
    servers: Vec<(String, Server)>,
    auth: HashMap<String, String>,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        servers: Vec::new(),
        auth: HashMap::new(),
    };
    let mut words = std::env::args().skip(1);
    while let Some(flag) = words.next() {
        let value = words
            .next()
            .ok_or_else(|| format!("{flag} needs a value NAME=…"))?;
        let (name, rest) = value
            .split_once('=')
            .ok_or_else(|| format!("{flag} {value:?}: expected NAME=…"))?;
        match flag.as_str() {
            "--http" => args
                .servers
                .push((name.to_owned(), Server::Http(rest.to_owned()))),
            "--stdio" => {
                let words: Vec<String> = rest.split_whitespace().map(str::to_owned).collect();
                if words.is_empty() {
                    return Err(format!("--stdio {value:?}: expected NAME=COMMAND [ARGS…]"));
                }
                args.servers.push((name.to_owned(), Server::Stdio(words)));
            }
            "--auth-env" => {
                let value = std::env::var(rest).map_err(|err| {
                    format!("--auth-env {name}={rest}: cannot read the variable {rest}: {err}")
                })?;
                args.auth.insert(name.to_owned(), value.trim().to_owned());
            }
            "--auth-file" => {
                args.auth.insert(name.to_owned(), read_secret(rest)?);
            }
            "--auth" => {
                return Err(format!(
                    "--auth is gone: a credential on the command line is readable by every user of the machine (ps, /proc/PID/cmdline); put it in a variable and pass --auth-env {name}=VAR, or in a file of mode 0600 and pass --auth-file {name}=PATH"
                ))
            }
            other => {
                return Err(format!(
                    "unknown flag {other:?}; use --stdio NAME=COMMAND [ARGS…], --http NAME=URL, --auth-env NAME=VAR and --auth-file NAME=PATH"
                ))
            }
        }
    }
    Ok(args)
}

/// The credential in the file at `path`, which only its owner may read.
fn read_secret(path: &str) -> Result<String, String> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(path)
            .map_err(|err| format!("--auth-file {path}: {err}"))?
            .permissions()
            .mode();
        if mode & 0o077 != 0 {
            return Err(format!(
                "--auth-file {path}: the file is readable by others (mode {:o}); chmod 600 it",
                mode & 0o777
            ));
        }
    }
    let text = std::fs::read_to_string(path).map_err(|err| format!("--auth-file {path}: {err}"))?;
    Ok(text.trim().to_owned())
}

fn on_event(event: &Event) {
    eprintln!("[gateway] {event}");
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let args = parse_args()?;
    let mut layers = LayeredSurface::builder().layer("app", demo_tools()?);
    for (name, server) in &args.servers {
        let (builder, source) = match server {
            Server::Http(url) => {
                let mut client = Client::builder(url);
                if let Some(auth) = args.auth.get(name) {
                    client = client.header("Authorization", auth);
                }
                (McpServerLayer::builder(name.as_str(), client), url.clone())
            }
            Server::Stdio(words) => {
                let command = StdioServer::new(&words[0]).args(&words[1..]);
                (
                    McpServerLayer::stdio(name.as_str(), command),
                    words.join(" "),
                )
            }
        };
        // Started, not connected: the server joins when it answers.
        let layer = builder
            .start()
            .map_err(|err| format!("cannot bridge {name} ({source}): {err}"))?;
        eprintln!("[gateway] {name}: connecting to {source}");
        layers = layers.layer(name.as_str(), layer);
    }
    let surface = layers.build();
    let tools: Vec<String> = surface
        .list_tools()
        .iter()
        .map(|tool| tool.name().to_owned())
        .collect();

    let host = ToolHost::bind(
        HostConfig::default()
            .server_name("gateway")
            .on_event(on_event),
    )?;
    let session = host.open_session(surface);
    let first_line = json!({
        "url": session.url(),
        "authorization": session.authorization(),
        "acp": session.acp_mcp_servers(),
        "tools": tools,
    });
    let mut stdout = io::stdout().lock();
    writeln!(stdout, "{first_line}")?;
    stdout.flush()?;
    drop(stdout);

    // Blocks until stdin reaches end of file (or fails): the parent's signal
    // to stop.
    let _ = io::stdin().lock().read_to_end(&mut Vec::new());
    eprintln!(
        "[gateway] stdin closed after {} tool calls; shutting down",
        session.calls_served()
    );
    drop(session);
    host.shutdown();
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("gateway: {err}");
            ExitCode::FAILURE
        }
    }
}
