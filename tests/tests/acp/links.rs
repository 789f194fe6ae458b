//! The stand-in agent's MCP clients, one per `mcpServers` transport: over
//! Streamable HTTP with the entry's headers ([`HttpLink`]), and over the
//! stdio of the process a stdio entry names ([`StdioLink`]) — the way a
//! real agent reaches each kind.

use std::io::{BufRead, BufReader, Write};
use std::net::SocketAddr;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use toolhost_tests::Conn;

/// How long the stand-in waits for one MCP answer.
const PATIENCE: Duration = Duration::from_secs(20);

/// What the stand-in answers when a tool asks it something.
pub const ELICITED_ANSWER: &str = "from the stand-in";

/// An MCP connection the stand-in's script uses.
pub trait McpLink {
    /// `initialize`, `notifications/initialized`, `tools/list`.
    fn start(&mut self) -> Result<Vec<Value>, String>;
    /// One request; its result, or what went wrong.
    fn request(&mut self, method: &str, params: Value) -> Result<Value, String>;
    /// Whether to decline the elicitations of the next requests.
    fn decline_questions(&mut self, _decline: bool) {}
    /// For a link with a process: waits up to `wait` for it to exit and
    /// says how it ended.
    fn exit_status(&mut self, _wait: Duration) -> Option<String> {
        None
    }
}

/// MCP over Streamable HTTP, sending the entry's headers as given.
pub struct HttpLink {
    conn: Conn,
    path: String,
    headers: Vec<(String, String)>,
    session: Option<String>,
    revision: String,
    next_id: u64,
}

impl HttpLink {
    pub fn connect(url: &str, headers: Vec<(String, String)>) -> Result<HttpLink, String> {
        let rest = url
            .strip_prefix("http://")
            .ok_or(format!("{url:?} is not an http:// URL"))?;
        let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        let addr: SocketAddr = authority
            .parse()
            .map_err(|e| format!("{authority:?} is not an address: {e}"))?;
        Ok(HttpLink {
            conn: Conn::open(addr).map_err(|e| format!("connect {addr}: {e}"))?,
            path: if path.is_empty() { "/" } else { path }.to_owned(),
            headers,
            session: None,
            revision: "2025-06-18".to_owned(),
            next_id: 0,
        })
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

impl McpLink for HttpLink {
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
}

/// MCP over the stdio of the process a stdio entry names, started with the
/// entry's arguments and environment, as a real agent starts it.
pub struct StdioLink {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    next_id: u64,
    decline: bool,
}

impl StdioLink {
    pub fn spawn(
        command: &str,
        args: &[String],
        env: &[(String, String)],
    ) -> Result<StdioLink, String> {
        let mut child = Command::new(command)
            .args(args)
            .envs(env.iter().map(|(n, v)| (n, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start {command:?}: {e}"))?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let (sender, lines) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if sender.send(line).is_err() {
                    return;
                }
            }
        });
        Ok(StdioLink {
            stdin: child.stdin.take(),
            child,
            lines,
            next_id: 0,
            decline: false,
        })
    }

    fn send(&mut self, message: &Value) -> Result<(), String> {
        let stdin = self.stdin.as_mut().ok_or("the server's stdin is closed")?;
        writeln!(stdin, "{message}")
            .and_then(|()| stdin.flush())
            .map_err(|e| format!("writing to the stdio server: {e}"))
    }

    /// Answers what the server asks: an elicitation with the stand-in's
    /// answer (or a decline), roots with one root, the rest not at all.
    fn answer(&mut self, request: &Value) -> Result<(), String> {
        let id = request["id"].clone();
        let reply = match request["method"].as_str() {
            Some("elicitation/create") if self.decline => {
                json!({"jsonrpc": "2.0", "id": id, "result": {"action": "decline"}})
            }
            Some("elicitation/create") => json!({"jsonrpc": "2.0", "id": id,
                "result": {"action": "accept", "content": {"answer": ELICITED_ANSWER}}}),
            Some("roots/list") => json!({"jsonrpc": "2.0", "id": id,
                "result": {"roots": [{"uri": "file:///standin", "name": "standin"}]}}),
            _ => json!({"jsonrpc": "2.0", "id": id,
                "error": {"code": -32601, "message": "the stand-in answers no such request"}}),
        };
        self.send(&reply)
    }
}

impl McpLink for StdioLink {
    fn start(&mut self) -> Result<Vec<Value>, String> {
        self.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18",
                "capabilities": {"elicitation": {}, "roots": {}},
                "clientInfo": {"name": "toolhost-standin", "version": "0"}}),
        )?;
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))?;
        let list = self.request("tools/list", json!({}))?;
        Ok(list["tools"].as_array().cloned().unwrap_or_default())
    }

    fn request(&mut self, method: &str, params: Value) -> Result<Value, String> {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))?;
        let deadline = Instant::now() + PATIENCE;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self
                .lines
                .recv_timeout(left)
                .map_err(|_| format!("{method}: the stdio server said nothing more"))?;
            let message: Value = serde_json::from_str(&line).map_err(|e| {
                format!("the stdio server wrote a line that is not JSON ({e}): {line}")
            })?;
            if message.get("method").is_some() {
                if message.get("id").is_some() {
                    self.answer(&message)?;
                }
                continue;
            }
            if message["id"] == id {
                return match message.get("error") {
                    Some(error) => Err(format!("{method}: JSON-RPC error {error}")),
                    None => Ok(message["result"].clone()),
                };
            }
        }
    }

    fn decline_questions(&mut self, decline: bool) {
        self.decline = decline;
    }

    fn exit_status(&mut self, wait: Duration) -> Option<String> {
        let deadline = Instant::now() + wait;
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) => {
                    return Some(status.code().map_or_else(
                        || "by a signal".to_owned(),
                        |code| format!("with status {code}"),
                    ))
                }
                Ok(None) if Instant::now() < deadline => thread::sleep(Duration::from_millis(10)),
                _ => return None,
            }
        }
    }
}

impl Drop for StdioLink {
    fn drop(&mut self) {
        // End of input is how a stdio server is told to leave.
        drop(self.stdin.take());
        if self.exit_status(Duration::from_secs(2)).is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
