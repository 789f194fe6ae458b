//! A stand-in ACP agent: it speaks ACP on stdin/stdout the way
//! `gemini --acp` or `copilot --acp` do, and MCP to the server
//! it is given, as a real agent would — over HTTP with the entry's headers,
//! or by starting the command of a stdio entry — but its "model" is a
//! fixed script, so a test can check each step.
//!
//! It takes `mcpServers` entries only in the shapes the ACP schema defines
//! (v1: `McpServerHttp` tagged `"type": "http"`, or the untagged
//! `McpServerStdio`; v2: every entry tagged), refusing any other with
//! `-32602`. What it saw goes into its `agent_message_chunk`s.
//!
//! The script of `session/prompt`: say what the entry held; reach the MCP
//! server (once per session: the connection is kept across prompts, as
//! agents keep theirs); for `echo` (or the first tool listed), and then
//! `ask` if listed: report a `tool_call` with arguments made from its input
//! schema, ask `session/request_permission`, and if allowed `tools/call` it
//! and report the result; answer `stopReason: "end_turn"`. A stdio server
//! whose call fails is watched for its exit, which is reported too. The mode
//! (the argument after `--standin-agent`) bends the script:
//!
//! - `honest`: announces HTTP entries and takes only those;
//! - `no-headers`: as `honest`, but sends no headers, as an agent that
//!   dropped them would;
//! - `claim-only`: reports the tool call and a made-up result without any
//!   MCP traffic, as a confused agent would;
//! - `hang`: never answers `initialize` and ignores the end of its input,
//!   so only a signal stops it;
//! - `stdio-only`: announces no HTTP entries and drops one it is given
//!   without a word (as early codex-acp builds did); takes stdio entries;
//! - `grandchild`: as `honest`, but first starts a sleeping grandchild that
//!   holds its stdout, and names it in `initialize`'s `_meta.grandchild`,
//!   as a launcher whose child is the real agent would;
//! - `slow-turn`: the prompt waits for `session/cancel`, then asks a
//!   permission (which must come back `cancelled`) and ends `cancelled`;
//! - `needs-login`: offers the auth method `standin-login` and refuses
//!   `session/new` (`-32000`) until `authenticate` used it;
//! - `v2`: speaks ACP v2 only (`capabilities.session.mcp.stdio`), wants a
//!   `type` on every entry, and on `session/new` lists the tools of its
//!   stdio server into the answer's `_meta.tools`.
//!
//! A prompt whose text holds "decline" makes it decline what the tools ask.

use std::io::{self, BufRead, Write};
use std::path::Path;
use std::process::{Command, ExitCode, Stdio};
use std::thread;
use std::time::Duration;

use serde_json::{json, Value};

use crate::links::{HttpLink, McpLink, StdioLink};

/// The string a stand-in passes to `echo`.
pub const ECHO_TEXT: &str = "hello from the stand-in";

/// The argument that makes this binary the grandchild of `grandchild` mode.
pub const SLEEPER: &str = "--sleeper";

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Honest,
    NoHeaders,
    ClaimOnly,
    Hang,
    StdioOnly,
    Grandchild,
    SlowTurn,
    NeedsLogin,
    V2,
}

/// The grandchild's main: sleeps, reading nothing, until a signal — or,
/// should a broken driver leave it behind, for two minutes.
pub fn sleeper() -> ExitCode {
    thread::sleep(Duration::from_secs(120));
    ExitCode::SUCCESS
}

/// The stand-in's main: serves ACP on stdin/stdout until stdin ends.
pub fn main(mode: &str) -> ExitCode {
    let mode = match mode {
        "honest" => Mode::Honest,
        "no-headers" => Mode::NoHeaders,
        "claim-only" => Mode::ClaimOnly,
        "hang" => Mode::Hang,
        "stdio-only" => Mode::StdioOnly,
        "grandchild" => Mode::Grandchild,
        "slow-turn" => Mode::SlowTurn,
        "needs-login" => Mode::NeedsLogin,
        "v2" => Mode::V2,
        other => {
            eprintln!("stand-in: unknown mode {other:?}");
            return ExitCode::from(64);
        }
    };
    let mut agent = Agent {
        mode,
        server: None,
        link: None,
        next_id: 0,
        logged_in: false,
    };
    while let Some(message) = read() {
        let (Some(method), Some(id)) = (message["method"].as_str(), message.get("id")) else {
            // Notifications (`session/cancel`) and stray responses.
            continue;
        };
        let reply = match agent.handle(method, &message["params"]) {
            Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
            Err((code, text)) => {
                json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": text}})
            }
        };
        write(&reply);
    }
    ExitCode::SUCCESS
}

/// The next JSON message on stdin; `None` at its end.
fn read() -> Option<Value> {
    let mut line = String::new();
    loop {
        line.clear();
        if io::stdin().lock().read_line(&mut line).ok()? == 0 {
            return None;
        }
        match serde_json::from_str(line.trim()) {
            Ok(message) => return Some(message),
            Err(err) => eprintln!("stand-in: ignoring a line that is not JSON ({err})"),
        }
    }
}

fn write(message: &Value) {
    let mut stdout = io::stdout().lock();
    // A client that went away is not the stand-in's problem.
    let _ = writeln!(stdout, "{message}").and_then(|()| stdout.flush());
}

/// An ACP `McpServerHttp` entry.
#[derive(Clone, Debug)]
pub struct HttpServer {
    pub name: String,
    pub url: String,
    pub headers: Vec<(String, String)>,
}

/// An ACP `McpServerStdio` entry.
#[derive(Clone, Debug)]
pub struct StdioServer {
    pub name: String,
    pub command: String,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
}

#[derive(Clone, Debug)]
enum Server {
    Http(HttpServer),
    Stdio(StdioServer),
}

/// The fields of `entry`, refusing any the schema does not define.
fn fields<'a>(
    entry: &'a Value,
    allowed: &[&str],
    what: &str,
) -> Result<&'a serde_json::Map<String, Value>, String> {
    let object = entry.as_object().ok_or("an entry must be an object")?;
    if let Some(key) = object.keys().find(|k| !allowed.contains(&k.as_str())) {
        return Err(format!("{what} has no field {key:?}"));
    }
    Ok(object)
}

fn text(object: &serde_json::Map<String, Value>, key: &str, what: &str) -> Result<String, String> {
    object
        .get(key)
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or(format!("{what}.{key} must be a string"))
}

/// `[{name, value}]` pairs, as `HttpHeader` and `EnvVariable` are.
fn pairs(value: Option<&Value>, what: &str) -> Result<Vec<(String, String)>, String> {
    value
        .and_then(Value::as_array)
        .ok_or(format!("{what} must be an array"))?
        .iter()
        .map(|pair| {
            let pair = fields(pair, &["name", "value", "_meta"], what)?;
            match (pair.get("name"), pair.get("value")) {
                (Some(Value::String(name)), Some(Value::String(value))) => {
                    Ok((name.clone(), value.clone()))
                }
                _ => Err(format!("{what} items need string name and value")),
            }
        })
        .collect()
}

/// Reads one `mcpServers` item as the HTTP variant of the ACP schema's
/// `McpServer`, refusing fields the schema does not define.
pub fn parse_http_entry(entry: &Value) -> Result<HttpServer, String> {
    let what = "McpServerHttp";
    let object = fields(entry, &["type", "name", "url", "headers", "_meta"], what)?;
    if object.get("type") != Some(&json!("http")) {
        return Err(format!(
            "the HTTP variant needs \"type\": \"http\", not {:?}",
            object.get("type")
        ));
    }
    Ok(HttpServer {
        name: text(object, "name", what)?,
        url: text(object, "url", what)?,
        headers: pairs(object.get("headers"), "McpServerHttp.headers")?,
    })
}

/// Reads one `mcpServers` item as the stdio variant: untagged in v1,
/// `"type": "stdio"` in v2 (`typed`).
pub fn parse_stdio_entry(entry: &Value, typed: bool) -> Result<StdioServer, String> {
    let what = "McpServerStdio";
    let mut allowed = vec!["name", "command", "args", "env", "_meta"];
    if typed {
        allowed.push("type");
    }
    let object = fields(entry, &allowed, what)?;
    if typed && object.get("type") != Some(&json!("stdio")) {
        return Err(format!(
            "ACP v2 wants \"type\" on every entry; a stdio one needs \"type\": \"stdio\", not {:?}",
            object.get("type")
        ));
    }
    let command = text(object, "command", what)?;
    if !Path::new(&command).is_absolute() {
        return Err(format!(
            "McpServerStdio.command must be absolute, not {command:?}"
        ));
    }
    let args = object
        .get("args")
        .and_then(Value::as_array)
        .ok_or("McpServerStdio.args must be an array")?
        .iter()
        .map(|a| a.as_str().map(str::to_owned).ok_or("args must be strings"))
        .collect::<Result<_, _>>()?;
    Ok(StdioServer {
        name: text(object, "name", what)?,
        command,
        args,
        env: pairs(object.get("env"), "McpServerStdio.env")?,
    })
}

type Reply = Result<Value, (i64, String)>;

fn invalid(text: impl Into<String>) -> (i64, String) {
    (-32602, text.into())
}

struct Agent {
    mode: Mode,
    server: Option<Server>,
    /// The MCP connection, made at the first prompt and kept.
    link: Option<Box<dyn McpLink>>,
    next_id: u64,
    logged_in: bool,
}

impl Agent {
    fn handle(&mut self, method: &str, params: &Value) -> Reply {
        match method {
            "initialize" => self.initialize(params),
            "authenticate" => self.authenticate(params),
            "session/new" => self.new_session(params),
            "session/prompt" => self.prompt(params),
            other => Err((-32601, format!("the stand-in has no method {other}"))),
        }
    }

    /// `InitializeRequest` → `InitializeResponse`.
    fn initialize(&mut self, params: &Value) -> Reply {
        if self.mode == Mode::Hang {
            loop {
                thread::sleep(Duration::from_secs(3600));
            }
        }
        if !params["protocolVersion"].is_u64() {
            return Err(invalid("protocolVersion must be an integer"));
        }
        if self.mode == Mode::V2 {
            // A v2-only agent answers 2 whatever was offered.
            return Ok(json!({
                "protocolVersion": 2,
                "capabilities": {"session": {"mcp": {"stdio": {}}}},
                "info": {"name": "toolhost-standin", "version": "0"},
                "authMethods": [],
            }));
        }
        if !params["clientCapabilities"].is_object() {
            return Err(invalid("this stand-in wants clientCapabilities"));
        }
        let mut result = json!({
            "protocolVersion": 1,
            "agentCapabilities": {
                "loadSession": false,
                "mcpCapabilities": {"http": self.mode != Mode::StdioOnly, "sse": false},
                "promptCapabilities": {"image": false, "audio": false, "embeddedContext": false},
            },
            "authMethods": [],
            "agentInfo": {"name": "toolhost-standin", "version": "0"},
        });
        if self.mode == Mode::NeedsLogin {
            result["authMethods"] = json!([{"id": "standin-login", "name": "Log in",
                "description": "A login the stand-in pretends to need"}]);
        }
        if self.mode == Mode::Grandchild {
            let exe = std::env::current_exe().map_err(|e| invalid(e.to_string()))?;
            // It inherits stdout: it holds the driver's pipe, as the real
            // agent under a launcher does.
            let child = Command::new(exe)
                .arg(SLEEPER)
                .stdin(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .map_err(|e| invalid(format!("cannot start the grandchild: {e}")))?;
            result["_meta"] = json!({"grandchild": child.id()});
        }
        Ok(result)
    }

    /// `AuthenticateRequest` → `AuthenticateResponse`.
    fn authenticate(&mut self, params: &Value) -> Reply {
        match params["methodId"].as_str() {
            Some("standin-login") if self.mode == Mode::NeedsLogin => {
                self.logged_in = true;
                Ok(json!({}))
            }
            other => Err(invalid(format!("no auth method {other:?} here"))),
        }
    }

    /// `NewSessionRequest` (`cwd`, `mcpServers`) → `NewSessionResponse`.
    fn new_session(&mut self, params: &Value) -> Reply {
        if self.mode == Mode::NeedsLogin && !self.logged_in {
            return Err((-32000, "Authentication required".into()));
        }
        let cwd = params["cwd"].as_str().unwrap_or_default();
        if !Path::new(cwd).is_absolute() {
            return Err(invalid(format!(
                "cwd must be an absolute path, not {cwd:?}"
            )));
        }
        let servers = params["mcpServers"]
            .as_array()
            .ok_or_else(|| invalid("mcpServers must be an array"))?;
        let [entry] = servers.as_slice() else {
            return Err(invalid(format!(
                "the stand-in wants exactly one server, got {}",
                servers.len()
            )));
        };
        self.server = match self.mode {
            Mode::V2 => Some(Server::Stdio(
                parse_stdio_entry(entry, true).map_err(invalid)?,
            )),
            // Takes stdio entries, and drops an HTTP one without a word.
            Mode::StdioOnly if entry["type"] == "http" => None,
            Mode::StdioOnly => Some(Server::Stdio(
                parse_stdio_entry(entry, false).map_err(invalid)?,
            )),
            _ => Some(Server::Http(parse_http_entry(entry).map_err(invalid)?)),
        };
        let mut result = json!({"sessionId": "standin-session"});
        if self.mode == Mode::V2 {
            let tools = self.connect().map_err(invalid)?;
            let names: Vec<&Value> = tools.iter().map(|t| &t["name"]).collect();
            result["_meta"] = json!({"tools": names});
        }
        Ok(result)
    }

    /// Reaches the session's server, once; the tools it lists.
    fn connect(&mut self) -> Result<Vec<Value>, String> {
        let mut link: Box<dyn McpLink> = match &self.server {
            None => return Err("no MCP server it can use".into()),
            Some(Server::Http(server)) => {
                let headers = match self.mode {
                    Mode::NoHeaders => Vec::new(),
                    _ => server.headers.clone(),
                };
                Box::new(HttpLink::connect(&server.url, headers)?)
            }
            Some(Server::Stdio(server)) => Box::new(StdioLink::spawn(
                &server.command,
                &server.args,
                &server.env,
            )?),
        };
        let tools = link.start()?;
        self.link = Some(link);
        Ok(tools)
    }

    /// `PromptRequest` → the script → `PromptResponse`.
    fn prompt(&mut self, params: &Value) -> Reply {
        if params["sessionId"] != "standin-session" {
            return Err(invalid("unknown sessionId"));
        }
        let Some(prompt) = params["prompt"][0]["text"].as_str() else {
            return Err(invalid("the prompt must start with a text block"));
        };
        let decline = prompt.contains("decline");
        match self.server.clone() {
            Some(Server::Http(server)) => {
                let names: Vec<&str> = server.headers.iter().map(|(n, _)| n.as_str()).collect();
                self.say(&format!(
                    "stand-in: mcpServers[0] is an McpServerHttp named {:?} at {} with header(s) {}\n",
                    server.name,
                    server.url,
                    names.join(", ")
                ));
            }
            Some(Server::Stdio(server)) => {
                let names: Vec<&str> = server.env.iter().map(|(n, _)| n.as_str()).collect();
                self.say(&format!(
                    "stand-in: mcpServers[0] is an McpServerStdio named {:?} running {} with {} arg(s) and env {}\n",
                    server.name,
                    server.command,
                    server.args.len(),
                    names.join(", ")
                ));
            }
            None => self.say("stand-in: no MCP server it can use (an http entry was dropped)\n"),
        }
        match self.mode {
            Mode::ClaimOnly => self.claim_without_calling(),
            Mode::SlowTurn => return Ok(self.wait_for_cancel()),
            _ => self.call_tools(decline),
        }
        Ok(json!({"stopReason": "end_turn"}))
    }

    /// Works until `session/cancel`, then asks a permission anyway.
    fn wait_for_cancel(&mut self) -> Value {
        self.say("stand-in: working on it\n");
        while let Some(message) = read() {
            if message["method"] == "session/cancel" {
                break;
            }
        }
        let args = json!({"text": ECHO_TEXT});
        let kind = self.permission("call-late", "late call", &args);
        self.say(&format!(
            "stand-in: after the cancel, permission answered {kind}\n"
        ));
        json!({"stopReason": "cancelled"})
    }

    fn claim_without_calling(&mut self) {
        let args = json!({"text": ECHO_TEXT});
        let title = "toolhost-demo: echo";
        self.update(json!({"sessionUpdate": "tool_call", "toolCallId": "call-1",
            "title": title, "kind": "other", "status": "pending", "rawInput": args}));
        if self.permission("call-1", title, &args).starts_with("allow") {
            self.update(
                json!({"sessionUpdate": "tool_call_update", "toolCallId": "call-1",
                "status": "completed",
                "content": [{"type": "content", "content": {"type": "text", "text": ECHO_TEXT}}]}),
            );
            self.say(&format!(
                "stand-in: echo returned {ECHO_TEXT:?} (made up)\n"
            ));
        }
    }

    fn call_tools(&mut self, decline: bool) {
        let tools = if self.link.is_some() {
            // The connection of an earlier prompt: list again through it.
            match self
                .link
                .as_mut()
                .map(|l| l.request("tools/list", json!({})))
            {
                Some(Ok(list)) => list["tools"].as_array().cloned().unwrap_or_default(),
                Some(Err(why)) => return self.failed_link(&format!("tools/list failed: {why}")),
                None => Vec::new(),
            }
        } else {
            match self.connect() {
                Ok(tools) => tools,
                Err(why) => return self.say(&format!("stand-in: the MCP server refused: {why}\n")),
            }
        };
        if let Some(link) = self.link.as_mut() {
            link.decline_questions(decline);
        }
        let mut chosen: Vec<&Value> = tools
            .iter()
            .filter(|t| t["name"] == "echo" || t["name"] == "ask")
            .collect();
        if chosen.is_empty() {
            chosen.extend(tools.first());
        }
        if chosen.is_empty() {
            return self.say("stand-in: the server lists no tools\n");
        }
        let chosen: Vec<Value> = chosen.into_iter().cloned().collect();
        for (n, tool) in chosen.iter().enumerate() {
            if !self.call_tool(&format!("call-{}", n + 1), tool) {
                return;
            }
        }
    }

    /// One tool call, as the script does it; `false` when the connection
    /// failed.
    fn call_tool(&mut self, call_id: &str, tool: &Value) -> bool {
        let name = tool["name"].as_str().unwrap_or_default().to_owned();
        let args = arguments_for(&tool["inputSchema"]);
        let server_name = match &self.server {
            Some(Server::Http(s)) => s.name.clone(),
            Some(Server::Stdio(s)) => s.name.clone(),
            None => String::new(),
        };
        let title = format!("{server_name}: {name}");
        self.update(json!({"sessionUpdate": "tool_call", "toolCallId": call_id,
            "title": title, "kind": "other", "status": "pending", "rawInput": args}));
        if !self.permission(call_id, &title, &args).starts_with("allow") {
            self.update(
                json!({"sessionUpdate": "tool_call_update", "toolCallId": call_id,
                "status": "failed"}),
            );
            return true;
        }
        self.update(
            json!({"sessionUpdate": "tool_call_update", "toolCallId": call_id,
            "status": "in_progress"}),
        );
        let outcome = self
            .link
            .as_mut()
            .map(|link| link.request("tools/call", json!({"name": name, "arguments": args})));
        match outcome {
            Some(Ok(result)) => {
                let text = result["content"][0]["text"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned();
                let status = if result["isError"] == true {
                    "failed"
                } else {
                    "completed"
                };
                self.update(
                    json!({"sessionUpdate": "tool_call_update", "toolCallId": call_id,
                    "status": status, "rawOutput": result,
                    "content": [{"type": "content", "content": {"type": "text", "text": text}}]}),
                );
                self.say(&format!("stand-in: {name} returned {text:?}\n"));
                true
            }
            Some(Err(why)) => {
                self.update(
                    json!({"sessionUpdate": "tool_call_update", "toolCallId": call_id,
                    "status": "failed"}),
                );
                self.failed_link(&format!("tools/call failed: {why}"));
                false
            }
            None => false,
        }
    }

    /// Reports a failed exchange, and how the server's process (if any)
    /// ended after it.
    fn failed_link(&mut self, what: &str) {
        self.say(&format!("stand-in: {what}\n"));
        let exited = self
            .link
            .as_mut()
            .and_then(|link| link.exit_status(Duration::from_secs(5)));
        if let Some(how) = exited {
            self.say(&format!("stand-in: the stdio server exited {how}\n"));
        }
    }

    /// `session/update` with a `SessionUpdate`.
    fn update(&mut self, update: Value) {
        write(&json!({"jsonrpc": "2.0", "method": "session/update",
            "params": {"sessionId": "standin-session", "update": update}}));
    }

    fn say(&mut self, text: &str) {
        self.update(json!({"sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": text}}));
    }

    /// Asks `session/request_permission` and waits for the answer; the
    /// kind of option selected, `cancelled`, or `malformed`.
    fn permission(&mut self, call_id: &str, title: &str, args: &Value) -> &'static str {
        self.next_id += 1;
        let id = format!("standin-{}", self.next_id);
        write(
            &json!({"jsonrpc": "2.0", "id": id, "method": "session/request_permission",
            "params": {
                "sessionId": "standin-session",
                "toolCall": {"toolCallId": call_id, "title": title, "kind": "other",
                    "status": "pending", "rawInput": args},
                "options": [
                    {"optionId": "yes-once", "name": "Allow", "kind": "allow_once"},
                    {"optionId": "yes-always", "name": "Always allow", "kind": "allow_always"},
                    {"optionId": "no-once", "name": "Reject", "kind": "reject_once"},
                    {"optionId": "no-always", "name": "Always reject", "kind": "reject_always"},
                ],
            }}),
        );
        let answer = loop {
            match read() {
                Some(message) if message["id"] == id.as_str() => break message,
                Some(_) => continue,
                None => return "cancelled",
            }
        };
        let outcome = &answer["result"]["outcome"];
        let kind = match (outcome["outcome"].as_str(), outcome["optionId"].as_str()) {
            (Some("selected"), Some("yes-once")) => "allow_once",
            (Some("selected"), Some("yes-always")) => "allow_always",
            (Some("selected"), Some("no-once")) => "reject_once",
            (Some("selected"), Some("no-always")) => "reject_always",
            (Some("cancelled"), None) => "cancelled",
            _ => "malformed",
        };
        self.say(&format!("stand-in: permission answered {kind}\n"));
        kind
    }
}

/// Arguments that satisfy a simple input schema: each required property
/// gets a value of its type.
fn arguments_for(schema: &Value) -> Value {
    let mut args = serde_json::Map::new();
    for name in schema["required"].as_array().into_iter().flatten() {
        let Some(name) = name.as_str() else { continue };
        let value = match schema["properties"][name]["type"].as_str() {
            Some("string") => json!(ECHO_TEXT),
            Some("number" | "integer") => json!(2),
            Some("boolean") => json!(true),
            _ => Value::Null,
        };
        args.insert(name.to_owned(), value);
    }
    Value::Object(args)
}
