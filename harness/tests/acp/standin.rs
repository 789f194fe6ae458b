//! A stand-in ACP agent: it speaks ACP on stdin/stdout the way
//! `gemini --experimental-acp` or `copilot --acp` do, and MCP over HTTP to
//! the server it is given, as a real agent would — but its "model" is a
//! fixed script, so a test can check each step.
//!
//! It takes the `mcpServers` entry of `session/new` only in the shape the
//! ACP schema defines (`McpServer`'s `"type": "http"` variant over
//! `McpServerHttp`: `name`, `url`, `headers` as `HttpHeader` `{name,
//! value}`, nothing else), refusing any other with `-32602`, and sends the
//! entry's headers verbatim with every MCP request. What it saw goes into
//! its `agent_message_chunk`s, which the client prints.
//!
//! The script of `session/prompt`: say what the entry held; MCP
//! `initialize`, `notifications/initialized`, `tools/list`; report a
//! `tool_call` for `echo` (or the first tool listed) with arguments made
//! from its input schema; ask `session/request_permission` once; if allowed,
//! `tools/call` it and report the result; answer `stopReason: "end_turn"`.
//! The mode (the argument after `--standin-agent`) bends the script:
//!
//! - `honest`: as above;
//! - `no-headers`: sends no headers, as an agent that dropped them would;
//! - `claim-only`: reports the tool call and a made-up result without any
//!   MCP traffic, as a confused agent would;
//! - `hang`: never answers `initialize` and ignores the end of its input,
//!   so only a kill stops it.

use std::io::{self, BufRead, Write};
use std::net::SocketAddr;
use std::process::ExitCode;
use std::thread;
use std::time::Duration;

use serde_json::{json, Value};
use toolhost_tests::Conn;

/// The string a stand-in passes to `echo`.
pub const ECHO_TEXT: &str = "hello from the stand-in";

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Honest,
    NoHeaders,
    ClaimOnly,
    Hang,
}

/// The stand-in's main: serves ACP on stdin/stdout until stdin ends.
pub fn main(mode: &str) -> ExitCode {
    let mode = match mode {
        "honest" => Mode::Honest,
        "no-headers" => Mode::NoHeaders,
        "claim-only" => Mode::ClaimOnly,
        "hang" => Mode::Hang,
        other => {
            eprintln!("stand-in: unknown mode {other:?}");
            return ExitCode::from(64);
        }
    };
    let mut agent = Agent {
        mode,
        server: None,
        next_id: 0,
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

/// Reads one `mcpServers` item as the HTTP variant of the ACP schema's
/// `McpServer`, refusing fields the schema does not define.
pub fn parse_http_entry(entry: &Value) -> Result<HttpServer, String> {
    let object = entry.as_object().ok_or("an entry must be an object")?;
    if let Some(key) = object
        .keys()
        .find(|k| !["type", "name", "url", "headers", "_meta"].contains(&k.as_str()))
    {
        return Err(format!("McpServerHttp has no field {key:?}"));
    }
    if object.get("type") != Some(&json!("http")) {
        return Err(format!(
            "the HTTP variant needs \"type\": \"http\", not {:?}",
            object.get("type")
        ));
    }
    let text = |key: &str| {
        object
            .get(key)
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or(format!("McpServerHttp.{key} must be a string"))
    };
    let (name, url) = (text("name")?, text("url")?);
    let headers = object
        .get("headers")
        .and_then(Value::as_array)
        .ok_or("McpServerHttp.headers must be an array of HttpHeader")?
        .iter()
        .map(|header| {
            let header = header
                .as_object()
                .ok_or("an HttpHeader must be an object")?;
            if let Some(key) = header
                .keys()
                .find(|k| !["name", "value", "_meta"].contains(&k.as_str()))
            {
                return Err(format!("HttpHeader has no field {key:?}"));
            }
            match (header.get("name"), header.get("value")) {
                (Some(Value::String(name)), Some(Value::String(value))) => {
                    Ok((name.clone(), value.clone()))
                }
                _ => Err("HttpHeader.name and .value must be strings".to_owned()),
            }
        })
        .collect::<Result<_, String>>()?;
    Ok(HttpServer { name, url, headers })
}

type Reply = Result<Value, (i64, String)>;

fn invalid(text: impl Into<String>) -> (i64, String) {
    (-32602, text.into())
}

struct Agent {
    mode: Mode,
    server: Option<HttpServer>,
    next_id: u64,
}

impl Agent {
    fn handle(&mut self, method: &str, params: &Value) -> Reply {
        match method {
            "initialize" => self.initialize(params),
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
        if !params["clientCapabilities"].is_object() {
            return Err(invalid("this stand-in wants clientCapabilities"));
        }
        Ok(json!({
            "protocolVersion": 1,
            "agentCapabilities": {
                "loadSession": false,
                "mcpCapabilities": {"http": true, "sse": false},
                "promptCapabilities": {"image": false, "audio": false, "embeddedContext": false},
            },
            "authMethods": [],
            "agentInfo": {"name": "toolhost-standin", "version": "0"},
        }))
    }

    /// `NewSessionRequest` (`cwd`, `mcpServers`) → `NewSessionResponse`.
    fn new_session(&mut self, params: &Value) -> Reply {
        let cwd = params["cwd"].as_str().unwrap_or_default();
        if !std::path::Path::new(cwd).is_absolute() {
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
        self.server = Some(parse_http_entry(entry).map_err(invalid)?);
        Ok(json!({"sessionId": "standin-session"}))
    }

    /// `PromptRequest` → the script → `PromptResponse`.
    fn prompt(&mut self, params: &Value) -> Reply {
        if params["sessionId"] != "standin-session" {
            return Err(invalid("unknown sessionId"));
        }
        if params["prompt"][0]["type"] != "text" {
            return Err(invalid("the prompt must start with a text block"));
        }
        let server = self.server.clone().ok_or_else(|| invalid("no session"))?;
        let names: Vec<&str> = server.headers.iter().map(|(n, _)| n.as_str()).collect();
        self.say(&format!(
            "stand-in: mcpServers[0] is an McpServerHttp named {:?} at {} with header(s) {}\n",
            server.name,
            server.url,
            names.join(", ")
        ));
        match self.mode {
            Mode::ClaimOnly => self.claim_without_calling(&server),
            _ => self.call_a_tool(&server),
        }
        Ok(json!({"stopReason": "end_turn"}))
    }

    fn claim_without_calling(&mut self, server: &HttpServer) {
        let args = json!({"text": ECHO_TEXT});
        let title = format!("{}: echo", server.name);
        self.update(json!({"sessionUpdate": "tool_call", "toolCallId": "call-1",
            "title": title, "kind": "other", "status": "pending", "rawInput": args}));
        if self.permission("call-1", &title, &args) {
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

    fn call_a_tool(&mut self, server: &HttpServer) {
        let headers = match self.mode {
            Mode::NoHeaders => Vec::new(),
            _ => server.headers.clone(),
        };
        let mut mcp = match Mcp::connect(&server.url, headers) {
            Ok(mcp) => mcp,
            Err(why) => return self.say(&format!("stand-in: cannot reach the server: {why}\n")),
        };
        let tools = match mcp.start() {
            Ok(tools) => tools,
            Err(why) => return self.say(&format!("stand-in: the MCP server refused: {why}\n")),
        };
        let Some(tool) = tools
            .iter()
            .find(|t| t["name"] == "echo")
            .or_else(|| tools.first())
        else {
            return self.say("stand-in: the server lists no tools\n");
        };
        let name = tool["name"].as_str().unwrap_or_default().to_owned();
        let args = arguments_for(&tool["inputSchema"]);
        let title = format!("{}: {name}", server.name);
        self.update(json!({"sessionUpdate": "tool_call", "toolCallId": "call-1",
            "title": title, "kind": "other", "status": "pending", "rawInput": args}));
        if !self.permission("call-1", &title, &args) {
            self.update(
                json!({"sessionUpdate": "tool_call_update", "toolCallId": "call-1",
                "status": "failed"}),
            );
            return;
        }
        self.update(
            json!({"sessionUpdate": "tool_call_update", "toolCallId": "call-1",
            "status": "in_progress"}),
        );
        match mcp.request("tools/call", json!({"name": name, "arguments": args})) {
            Ok(result) => {
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
                    json!({"sessionUpdate": "tool_call_update", "toolCallId": "call-1",
                    "status": status, "rawOutput": result,
                    "content": [{"type": "content", "content": {"type": "text", "text": text}}]}),
                );
                self.say(&format!("stand-in: {name} returned {text:?}\n"));
            }
            Err(why) => {
                self.update(
                    json!({"sessionUpdate": "tool_call_update", "toolCallId": "call-1",
                    "status": "failed"}),
                );
                self.say(&format!("stand-in: tools/call failed: {why}\n"));
            }
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

    /// Asks `session/request_permission` and waits for the answer; true
    /// when an allow option was selected.
    fn permission(&mut self, call_id: &str, title: &str, args: &Value) -> bool {
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
                None => return false,
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
        kind.starts_with("allow")
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

/// An MCP client over Streamable HTTP, sending the entry's headers as
/// given.
struct Mcp {
    conn: Conn,
    path: String,
    headers: Vec<(String, String)>,
    session: Option<String>,
    revision: String,
    next_id: u64,
}

impl Mcp {
    fn connect(url: &str, headers: Vec<(String, String)>) -> Result<Mcp, String> {
        let rest = url
            .strip_prefix("http://")
            .ok_or(format!("{url:?} is not an http:// URL"))?;
        let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        let addr: SocketAddr = authority
            .parse()
            .map_err(|e| format!("{authority:?} is not an address: {e}"))?;
        Ok(Mcp {
            conn: Conn::open(addr).map_err(|e| format!("connect {addr}: {e}"))?,
            path: if path.is_empty() { "/" } else { path }.to_owned(),
            headers,
            session: None,
            revision: "2025-06-18".to_owned(),
            next_id: 0,
        })
    }

    /// `initialize`, `notifications/initialized`, `tools/list`.
    fn start(&mut self) -> Result<Vec<Value>, String> {
        let init = self.request(
            "initialize",
            json!({"protocolVersion": self.revision, "capabilities": {},
                "clientInfo": {"name": "toolhost-standin", "version": "0"}}),
        )?;
        if let Some(revision) = init["protocolVersion"].as_str() {
            revision.clone_into(&mut self.revision);
        }
        self.post(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))?;
        let list = self.request("tools/list", json!({}))?;
        Ok(list["tools"].as_array().cloned().unwrap_or_default())
    }

    fn request(&mut self, method: &str, params: Value) -> Result<Value, String> {
        self.next_id += 1;
        let message =
            json!({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params});
        let answer = self
            .post(&message)?
            .ok_or(format!("{method}: no response"))?;
        match answer.get("error") {
            Some(error) => Err(format!("{method}: JSON-RPC error {error}")),
            None => Ok(answer["result"].clone()),
        }
    }

    /// POSTs one message; returns the JSON-RPC response, if one came.
    fn post(&mut self, message: &Value) -> Result<Option<Value>, String> {
        let mut headers: Vec<(&str, &str)> = vec![
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
        ];
        headers.extend(self.headers.iter().map(|(n, v)| (n.as_str(), v.as_str())));
        if let Some(session) = &self.session {
            headers.push(("Mcp-Session-Id", session));
            headers.push(("MCP-Protocol-Version", &self.revision));
        }
        let reply = self
            .conn
            .request("POST", &self.path, &headers, message.to_string().as_bytes())
            .map_err(|e| format!("POST {}: {e}", self.path))?;
        if reply.status == 202 {
            return Ok(None);
        }
        if reply.status != 200 {
            return Err(format!(
                "HTTP {} {}",
                reply.status,
                String::from_utf8_lossy(&reply.body)
            ));
        }
        if let Some(session) = reply.header("mcp-session-id") {
            self.session = Some(session.to_owned());
        }
        let body = String::from_utf8_lossy(&reply.body);
        let is_stream = reply
            .header("content-type")
            .is_some_and(|t| t.starts_with("text/event-stream"));
        if !is_stream {
            return serde_json::from_str(&body)
                .map(Some)
                .map_err(|e| format!("the answer is not JSON ({e}): {body}"));
        }
        // An event stream: notifications first, the response last.
        for event in body.split("\n\n") {
            let data: Vec<&str> = event
                .lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .map(str::trim_start)
                .collect();
            if data.is_empty() {
                continue;
            }
            let parsed: Value = serde_json::from_str(&data.join("\n"))
                .map_err(|e| format!("an event is not JSON ({e})"))?;
            if parsed.get("id") == message.get("id") {
                return Ok(Some(parsed));
            }
        }
        Err("the event stream ended without the response".to_owned())
    }
}
