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
//! `--help` (or `-h`) prints the flags and exits; a command line the
//! program cannot use is refused with them on stderr and exit status 2
//! (1 is a failure once running, such as a credential it cannot read).
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

/// Where an HTTP server's `Authorization` value is read from.
enum Secret {
    /// `--auth-env NAME=VAR`.
    Env(String),
    /// `--auth-file NAME=PATH`.
    File(String),
}

/// The servers named on the command line, in order, and where the
/// `Authorization` value of each HTTP server that has one is read from.
struct Args {
    servers: Vec<(String, Server)>,
    auth: HashMap<String, Secret>,
}

/// What `--help` prints.
const USAGE: &str = "\
usage: gateway [--stdio NAME=COMMAND | --http NAME=URL]... [--auth-env NAME=VAR]...
               [--auth-file NAME=PATH]...

Serves two demo tools (echo, add) and every tool of the MCP servers named,
listed as <server>_<tool>, on one loopback MCP endpoint, until stdin
closes or Ctrl-C. Servers join in the background; each change of their
state is a line on stderr. The first stdout line is one JSON object,
{\"url\", \"authorization\", \"acp\", \"tools\"}: it holds the session's
bearer, so keep stdout out of any log others can read.

  --stdio NAME=COMMAND   start COMMAND (split on spaces: quote the value as
                         one word) as the stdio MCP server NAME
  --http NAME=URL        bridge the Streamable HTTP server at URL (loopback
                         only) as NAME
  --auth-env NAME=VAR    send server NAME the Authorization value held in
                         the environment variable VAR
  --auth-file NAME=PATH  send server NAME the Authorization value in the
                         file PATH, which only its owner may read (0600)
  -h, --help             print this and exit

Flags may repeat and mix; the servers' layers come in the order given. A
credential is never taken from the command line, which every user of the
machine can read.
";

/// The command line (without the program's name): `None` when it asks
/// for help, an error naming what is wrong when it cannot be used.
fn parse_args(words: impl IntoIterator<Item = String>) -> Result<Option<Args>, String> {
    let mut args = Args {
        servers: Vec::new(),
        auth: HashMap::new(),
    };
    let mut words = words.into_iter();
    while let Some(flag) = words.next() {
        match flag.as_str() {
            "-h" | "--help" => return Ok(None),
            "--http" | "--stdio" | "--auth-env" | "--auth-file" | "--auth" => {}
            other => return Err(format!("unknown option {other:?}")),
        }
        let value = words
            .next()
            .ok_or_else(|| format!("{flag} needs a value NAME=…"))?;
        let (name, rest) = value
            .split_once('=')
            .ok_or_else(|| format!("{flag} {value:?}: expected NAME=…"))?;
        let name = name.to_owned();
        match flag.as_str() {
            "--http" => args.servers.push((name, Server::Http(rest.to_owned()))),
            "--stdio" => {
                let words: Vec<String> = rest.split_whitespace().map(str::to_owned).collect();
                if words.is_empty() {
                    return Err(format!("--stdio {value:?}: expected NAME=COMMAND [ARGS…]"));
                }
                args.servers.push((name, Server::Stdio(words)));
            }
            "--auth-env" => {
                args.auth.insert(name, Secret::Env(rest.to_owned()));
            }
            "--auth-file" => {
                args.auth.insert(name, Secret::File(rest.to_owned()));
            }
            _ => {
                return Err(format!(
                    "--auth is gone: a credential on the command line is readable by every user of the machine (ps, /proc/PID/cmdline); put it in a variable and pass --auth-env {name}=VAR, or in a file of mode 0600 and pass --auth-file {name}=PATH"
                ))
            }
        }
    }
    Ok(Some(args))
}

/// The `Authorization` value `secret` holds, for server `name`.
fn read_auth(name: &str, secret: &Secret) -> Result<String, String> {
    match secret {
        Secret::Env(var) => std::env::var(var)
            .map(|value| value.trim().to_owned())
            .map_err(|err| {
                format!("--auth-env {name}={var}: cannot read the variable {var}: {err}")
            }),
        Secret::File(path) => read_secret(path),
    }
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

fn run(args: &Args) -> Result<(), Box<dyn std::error::Error>> {
    let mut layers = LayeredSurface::builder().layer("app", demo_tools()?);
    for (name, server) in &args.servers {
        let (builder, source) = match server {
            Server::Http(url) => {
                let mut client = Client::builder(url);
                if let Some(secret) = args.auth.get(name) {
                    client = client.header("Authorization", &read_auth(name, secret)?);
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

pub(crate) fn main() -> ExitCode {
    let args = match parse_args(std::env::args().skip(1)) {
        Ok(Some(args)) => args,
        Ok(None) => {
            print!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(why) => {
            eprint!("gateway: {why}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("gateway: {err}");
            ExitCode::FAILURE
        }
    }
}
