//! Drives an ACP agent through one prompt turn that uses this program's own
//! tools, served by toolhost on loopback.
//!
//! ```text
//! cargo run --example acp_turn -- [OPTIONS] -- AGENT [ARGS...]
//! cargo run --example acp_turn -- -- gemini --experimental-acp
//! cargo run --example acp_turn -- --permission reject -- copilot --acp
//! ```
//!
//! Options: `--prompt TEXT` (by default one that asks for the demo tools),
//! `--permission allow|reject` (how to answer the agent's permission
//! requests; `allow`), `--cwd DIR` (the session's working directory; the
//! current one), `--startup-timeout SECS` (for `initialize` and
//! `session/new`; 120, since `npx` may first download the agent) and
//! `--turn-timeout SECS` (for the prompt turn; 600).
//!
//! The turn: bind a host and publish two demo tools (`echo`, `add`) whose
//! handlers record their arguments; spawn the agent with piped stdio; send
//! `initialize`, `session/new` with the session's `mcpServers` entry, and
//! `session/prompt`; print the agent's `session/update` notifications as
//! they stream; answer `session/request_permission`; stop at the prompt's
//! `stopReason`. Then report what the host served — ACP's tool-call updates
//! never say which tool ran or with what arguments, so that comes from the
//! handlers — drop the session, and stop the agent.
//!
//! Exit status: 0 when the turn ended; 1 when it failed (the agent could not
//! start, broke the protocol, or did not answer in time); 2 when the agent
//! reported a completed tool call but no call reached the host, which means
//! it did not use the entry (or used only tools of its own). The last line
//! on stdout is a JSON summary for scripts: `{"stopReason", "error",
//! "callsServed", "toolCalls", "toolCallsCompleted", "calls": [{"tool",
//! "arguments"}]}`.
//!
//! Every message follows the Agent Client Protocol schema, v1
//! (agentclientprotocol/agent-client-protocol, `schema/v1/schema.json`); the
//! definition each one follows is named where it is built or read. The
//! client needs nothing beyond std and serde_json: JSON-RPC is one message
//! per line on the agent's stdin and stdout, and a reader thread feeds the
//! lines to a channel so that every wait has a deadline.

use std::collections::BTreeMap;
use std::fmt;
use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitCode, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use toolhost::{CallResult, Event, HostConfig, StaticSurface, Tool, ToolHost, ToolOutcome};

/// The ACP version spoken (`ProtocolVersion`, an integer; 1 is current).
const ACP_VERSION: u64 = 1;
const EXIT_FAILED: u8 = 1;
const EXIT_UNSERVED_CLAIM: u8 = 2;
/// How long the agent gets to exit on its own once its stdin is closed.
const EXIT_GRACE: Duration = Duration::from_secs(2);
/// How long a cancelled turn gets to report `stopReason: "cancelled"`.
const CANCEL_GRACE: Duration = Duration::from_secs(5);
const DEFAULT_PROMPT: &str = "Use the echo tool of the toolhost-demo MCP server to echo \
    'hello from toolhost', then use its add tool to add 2 and 40. Report both results.";
const USAGE: &str = "usage: acp_turn [--prompt TEXT] [--permission allow|reject] [--cwd DIR] \
    [--startup-timeout SECS] [--turn-timeout SECS] -- AGENT [ARGS...]";

fn main() -> ExitCode {
    run_cli(std::env::args().skip(1))
}

/// The whole program, from its arguments (without the program name) to its
/// exit status.
pub(crate) fn run_cli(args: impl IntoIterator<Item = String>) -> ExitCode {
    let options = match Options::parse(args) {
        Ok(options) => options,
        Err(why) => {
            eprintln!("acp_turn: {why}\n{USAGE}");
            return ExitCode::from(EXIT_FAILED);
        }
    };
    match run(&options) {
        Ok(code) => code,
        Err(why) => {
            eprintln!("acp_turn: {why}");
            ExitCode::from(EXIT_FAILED)
        }
    }
}

struct Options {
    prompt: String,
    permission: Permission,
    cwd: PathBuf,
    startup_timeout: Duration,
    turn_timeout: Duration,
    agent: Vec<String>,
}

#[derive(Clone, Copy)]
enum Permission {
    Allow,
    Reject,
}

impl Permission {
    /// The `PermissionOptionKind`s to pick, best first: "once" before
    /// "always", so that the choice is not remembered beyond this call.
    fn kinds(self) -> [&'static str; 2] {
        match self {
            Permission::Allow => ["allow_once", "allow_always"],
            Permission::Reject => ["reject_once", "reject_always"],
        }
    }
}

impl Options {
    fn parse(args: impl IntoIterator<Item = String>) -> Result<Options, String> {
        let mut args = args.into_iter();
        let mut options = Options {
            prompt: DEFAULT_PROMPT.to_owned(),
            permission: Permission::Allow,
            cwd: std::env::current_dir().map_err(|e| format!("no current directory: {e}"))?,
            startup_timeout: Duration::from_secs(120),
            turn_timeout: Duration::from_secs(600),
            agent: Vec::new(),
        };
        while let Some(arg) = args.next() {
            let mut value = || args.next().ok_or_else(|| format!("{arg} needs a value"));
            match arg.as_str() {
                "--" => {
                    options.agent = args.collect();
                    break;
                }
                "--prompt" => options.prompt = value()?,
                "--permission" => {
                    options.permission = match value()?.as_str() {
                        "allow" => Permission::Allow,
                        "reject" => Permission::Reject,
                        other => {
                            return Err(format!(
                                "--permission takes allow or reject, not {other:?}"
                            ))
                        }
                    }
                }
                "--cwd" => options.cwd = PathBuf::from(value()?),
                "--startup-timeout" => options.startup_timeout = seconds(&arg, &value()?)?,
                "--turn-timeout" => options.turn_timeout = seconds(&arg, &value()?)?,
                other => return Err(format!("unknown option {other:?}")),
            }
        }
        if options.agent.is_empty() {
            return Err("give the agent's command after --".to_owned());
        }
        // ACP's `NewSessionRequest.cwd` must be an absolute path.
        options.cwd = std::path::absolute(&options.cwd)
            .map_err(|e| format!("--cwd {}: {e}", options.cwd.display()))?;
        Ok(options)
    }
}

fn seconds(flag: &str, text: &str) -> Result<Duration, String> {
    text.parse::<f64>()
        .ok()
        .and_then(|secs| Duration::try_from_secs_f64(secs).ok())
        .ok_or_else(|| format!("{flag} takes a number of seconds, not {text:?}"))
}

/// The tool calls that reached a handler, with their arguments.
type CallLog = Arc<Mutex<Vec<(String, Value)>>>;

fn record(log: &CallLog, tool: &str, args: &Value) {
    log.lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push((tool.to_owned(), args.clone()));
}

fn demo_tools(log: &CallLog) -> Result<StaticSurface, toolhost::Error> {
    let (echo_log, add_log) = (Arc::clone(log), Arc::clone(log));
    StaticSurface::new()
        .tool(
            Tool::new("echo", "Returns the given text unchanged.").input_schema(json!({
                "type": "object",
                "properties": {"text": {"type": "string", "description": "Text to echo."}},
                "required": ["text"],
            })),
            move |args, _ctx| {
                record(&echo_log, "echo", args);
                match args["text"].as_str() {
                    Some(text) => ToolOutcome::text(text),
                    None => ToolOutcome::declined("`text` must be a string"),
                }
            },
        )?
        .tool(
            Tool::new("add", "Adds two numbers.").input_schema(json!({
                "type": "object",
                "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                "required": ["a", "b"],
            })),
            move |args, _ctx| {
                record(&add_log, "add", args);
                match (args["a"].as_f64(), args["b"].as_f64()) {
                    (Some(a), Some(b)) => ToolOutcome::json(json!({"sum": a + b})),
                    _ => ToolOutcome::declined("`a` and `b` must both be numbers"),
                }
            },
        )
}

fn on_event(event: &Event) {
    match event {
        Event::CallFinished { tool, outcome, .. } => {
            let outcome = match outcome {
                CallResult::Success => "success".to_owned(),
                CallResult::Declined { reason } => format!("declined: {reason}"),
                CallResult::Failed { detail } => format!("failed: {detail}"),
                other => format!("{other:?}"),
            };
            eprintln!("[toolhost] {tool} → {outcome}");
        }
        Event::CallStarted { .. } => {}
        other => eprintln!("[toolhost] {other:?}"),
    }
}

fn run(options: &Options) -> Result<ExitCode, String> {
    let log = CallLog::default();
    let host = ToolHost::bind(
        HostConfig::default()
            .server_name("toolhost-demo")
            .on_event(on_event),
    )
    .map_err(|e| e.to_string())?;
    let session = host.open_session(demo_tools(&log).map_err(|e| e.to_string())?);

    let mut agent = Agent::spawn(&options.agent, &options.cwd)?;
    eprintln!(
        "[acp_turn] started {} (pid {})",
        options.agent.join(" "),
        agent.child.id()
    );
    let mut turn = Turn::new(options.permission);
    let outcome = turn.drive(&mut agent, options, &session.acp_mcp_servers());
    turn.end_line();

    let served = session.calls_served();
    let calls = log.lock().unwrap_or_else(PoisonError::into_inner).clone();
    let completed = turn.completed();
    match &outcome {
        Ok(stop_reason) => println!("turn ended: {stop_reason}"),
        Err(why) => println!("turn failed: {why}"),
    }
    println!("host served {served} tool call(s)");
    for (tool, args) in &calls {
        println!("  {tool} {args}");
    }
    println!(
        "agent reported {} tool call(s), {completed} completed",
        turn.tool_calls.len()
    );
    let summary = json!({
        "stopReason": outcome.as_ref().ok(),
        "error": outcome.as_ref().err(),
        "callsServed": served,
        "toolCalls": turn.tool_calls.len(),
        "toolCallsCompleted": completed,
        "calls": calls.iter()
            .map(|(tool, args)| json!({"tool": tool, "arguments": args}))
            .collect::<Vec<_>>(),
    });
    println!("{summary}");
    // The bearer dies here; the agent, if still connected, gets 401 from now on.
    drop(session);
    drop(agent);

    if completed > 0 && served == 0 {
        eprintln!(
            "acp_turn: the agent reported {completed} completed tool call(s), but none reached \
             the host: it did not use the mcpServers entry, or used only tools of its own"
        );
        return Ok(ExitCode::from(EXIT_UNSERVED_CLAIM));
    }
    Ok(match outcome {
        Ok(_) => ExitCode::SUCCESS,
        Err(_) => ExitCode::from(EXIT_FAILED),
    })
}

/// Why a wait for the agent ended without an answer.
enum RpcError {
    /// The deadline passed.
    Timeout,
    /// The agent's stdout ended or its stdin broke.
    Closed(String),
    /// The agent answered with a JSON-RPC error.
    Agent(Value),
}

impl fmt::Display for RpcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RpcError::Timeout => f.write_str("no answer in time"),
            RpcError::Closed(why) => f.write_str(why),
            RpcError::Agent(error) => write!(f, "the agent answered with error {error}"),
        }
    }
}

/// What the agent said about one tool call (`ToolCall`, `ToolCallUpdate`).
#[derive(Default)]
struct ToolCallSeen {
    title: String,
    status: String,
}

/// One prompt turn's state: how to answer permission requests, and the
/// tool calls the agent reported.
struct Turn {
    permission: Permission,
    cancelled: bool,
    tool_calls: BTreeMap<String, ToolCallSeen>,
    /// Whether agent text left the cursor mid-line.
    mid_line: bool,
}

impl Turn {
    fn new(permission: Permission) -> Turn {
        Turn {
            permission,
            cancelled: false,
            tool_calls: BTreeMap::new(),
            mid_line: false,
        }
    }

    /// `initialize` → `session/new` → `session/prompt`; returns the
    /// `stopReason`.
    fn drive(
        &mut self,
        agent: &mut Agent,
        options: &Options,
        mcp_servers: &Value,
    ) -> Result<String, String> {
        let startup = Instant::now() + options.startup_timeout;
        // `InitializeRequest`: `protocolVersion` (required),
        // `clientCapabilities` (no file system, no terminal: the agent must
        // not ask for them), `clientInfo`.
        let init = self
            .request(
                agent,
                "initialize",
                json!({
                    "protocolVersion": ACP_VERSION,
                    "clientCapabilities": {
                        "fs": {"readTextFile": false, "writeTextFile": false},
                        "terminal": false,
                    },
                    "clientInfo": {"name": "toolhost-acp-turn", "version": env!("CARGO_PKG_VERSION")},
                }),
                startup,
            )
            .map_err(|e| format!("initialize: {e}"))?;
        // `InitializeResponse.protocolVersion`: the client's, if the agent
        // supports it, else the agent's latest.
        if init["protocolVersion"] != ACP_VERSION {
            return Err(format!(
                "the agent speaks ACP version {}, this client {ACP_VERSION}",
                init["protocolVersion"]
            ));
        }
        // `AgentCapabilities.mcpCapabilities.http`: HTTP entries are only
        // for agents that announce them.
        if init["agentCapabilities"]["mcpCapabilities"]["http"] != true {
            eprintln!(
                "[acp_turn] warning: the agent does not announce mcpCapabilities.http; \
                 it may ignore the HTTP mcpServers entry"
            );
        }

        // `NewSessionRequest`: `cwd` (absolute) and `mcpServers`, both
        // required; `NewSessionResponse.sessionId`.
        let new = self
            .request(
                agent,
                "session/new",
                json!({"cwd": options.cwd, "mcpServers": mcp_servers}),
                startup,
            )
            .map_err(|e| match e {
                // ACP's `auth_required` error.
                RpcError::Agent(error) if error["code"] == -32000 => format!(
                    "session/new: the agent wants you to log in first (run it once on its own): {error}"
                ),
                e => format!("session/new: {e}"),
            })?;
        let session_id = new["sessionId"]
            .as_str()
            .ok_or_else(|| format!("session/new answered without a sessionId: {new}"))?
            .to_owned();

        // `PromptRequest`: `sessionId`, `prompt` (content blocks; text is
        // the baseline every agent takes); `PromptResponse.stopReason`.
        let deadline = Instant::now() + options.turn_timeout;
        let id = agent.next_id();
        agent
            .send(
                &json!({"jsonrpc": "2.0", "id": id, "method": "session/prompt", "params": {
                    "sessionId": session_id,
                    "prompt": [{"type": "text", "text": options.prompt}],
                }}),
            )
            .map_err(|e| format!("session/prompt: {e}"))?;
        match self.wait_for(agent, id, deadline) {
            Ok(result) => result["stopReason"]
                .as_str()
                .map(str::to_owned)
                .ok_or_else(|| format!("session/prompt answered without a stopReason: {result}")),
            Err(RpcError::Timeout) => {
                // `CancelNotification`; the agent then answers the prompt
                // with `stopReason: "cancelled"`, and pending permission
                // requests get the `cancelled` outcome.
                self.cancelled = true;
                let _ = agent.send(&json!({"jsonrpc": "2.0", "method": "session/cancel",
                    "params": {"sessionId": session_id}}));
                let _ = self.wait_for(agent, id, Instant::now() + CANCEL_GRACE);
                Err(format!(
                    "the turn did not end within {:?}; sent session/cancel",
                    options.turn_timeout
                ))
            }
            Err(e) => Err(format!("session/prompt: {e}")),
        }
    }

    fn request(
        &mut self,
        agent: &mut Agent,
        method: &str,
        params: Value,
        deadline: Instant,
    ) -> Result<Value, RpcError> {
        let id = agent.next_id();
        agent.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))?;
        self.wait_for(agent, id, deadline)
    }

    /// Serves the agent's notifications and requests until the response to
    /// request `id` arrives.
    fn wait_for(
        &mut self,
        agent: &mut Agent,
        id: u64,
        deadline: Instant,
    ) -> Result<Value, RpcError> {
        loop {
            let message = agent.recv(deadline)?;
            if let Some(method) = message["method"].as_str() {
                match message.get("id") {
                    Some(request_id) => {
                        let reply = self.answer(request_id.clone(), method, &message["params"]);
                        agent.send(&reply)?;
                    }
                    None => self.notice(method, &message["params"]),
                }
            } else if message["id"] == id {
                return match message.get("error") {
                    Some(error) => Err(RpcError::Agent(error.clone())),
                    None => Ok(message["result"].clone()),
                };
            }
        }
    }

    /// The reply to a request from the agent.
    fn answer(&mut self, id: Value, method: &str, params: &Value) -> Value {
        if method == "session/request_permission" {
            let outcome = self.permission_outcome(params);
            // `RequestPermissionResponse.outcome`.
            return json!({"jsonrpc": "2.0", "id": id, "result": {"outcome": outcome}});
        }
        // The capabilities sent in `initialize` offer nothing else.
        json!({"jsonrpc": "2.0", "id": id, "error": {
            "code": -32601,
            "message": format!("acp_turn does not offer {method}"),
        }})
    }

    /// `RequestPermissionRequest` has `toolCall` (a `ToolCallUpdate`) and
    /// `options` (`PermissionOption`: `optionId`, `name`, `kind`); the
    /// answer is a `RequestPermissionOutcome`: `{"outcome": "selected",
    /// "optionId"}` or `{"outcome": "cancelled"}`.
    fn permission_outcome(&mut self, params: &Value) -> Value {
        let call = &params["toolCall"];
        self.seen(call);
        let title = call["title"]
            .as_str()
            .or_else(|| call["toolCallId"].as_str())
            .unwrap_or("a tool call")
            .to_owned();
        if self.cancelled {
            return json!({"outcome": "cancelled"});
        }
        let options = params["options"].as_array().map_or(&[][..], Vec::as_slice);
        let chosen = self
            .permission
            .kinds()
            .iter()
            .find_map(|kind| options.iter().find(|option| option["kind"] == *kind));
        match chosen {
            Some(option) => {
                self.line(&format!(
                    "[permission] {title}: {} ({})",
                    option["kind"].as_str().unwrap_or_default(),
                    option["name"].as_str().unwrap_or_default()
                ));
                json!({"outcome": "selected", "optionId": option["optionId"]})
            }
            None => {
                self.line(&format!(
                    "[permission] {title}: no matching option; cancelled"
                ));
                json!({"outcome": "cancelled"})
            }
        }
    }

    /// Shows a notification; only `session/update` (`SessionNotification`)
    /// is expected.
    fn notice(&mut self, method: &str, params: &Value) {
        if method != "session/update" {
            return;
        }
        // `SessionUpdate`, tagged by `sessionUpdate`.
        let update = &params["update"];
        match update["sessionUpdate"].as_str() {
            // `ContentChunk.content`, a `ContentBlock`.
            Some("agent_message_chunk") => match update["content"]["text"].as_str() {
                Some(text) => {
                    print!("{text}");
                    let _ = io::stdout().flush();
                    self.mid_line = !text.ends_with('\n');
                }
                None => self.line(&format!("[{}]", update["content"]["type"])),
            },
            // `ToolCall` (`toolCallId`, `title`, `status`, …) and
            // `ToolCallUpdate` (the same, all but the id optional).
            Some("tool_call" | "tool_call_update") => {
                if let Some((title, status)) = self.seen(update) {
                    self.line(&format!("[tool] {title}: {status}"));
                }
            }
            // `Plan.entries`: `PlanEntry` with `content` and `status`.
            Some("plan") => {
                let entries = update["entries"].as_array().map_or(&[][..], Vec::as_slice);
                for entry in entries {
                    self.line(&format!(
                        "[plan] {} ({})",
                        entry["content"].as_str().unwrap_or_default(),
                        entry["status"].as_str().unwrap_or_default()
                    ));
                }
            }
            // Thoughts, mode and command updates are not part of the answer.
            _ => {}
        }
    }

    /// Records a `ToolCall` or `ToolCallUpdate`; returns the call's title
    /// and status when the status changed.
    fn seen(&mut self, update: &Value) -> Option<(String, String)> {
        let id = update["toolCallId"].as_str()?;
        let call = self.tool_calls.entry(id.to_owned()).or_default();
        if let Some(title) = update["title"].as_str() {
            title.clone_into(&mut call.title);
        }
        let status = match update["status"].as_str() {
            Some(status) => status,
            // A new `ToolCall` without a status is pending (the default).
            None if call.status.is_empty() => "pending",
            None => return None,
        };
        if call.status == status {
            return None;
        }
        status.clone_into(&mut call.status);
        let title = if call.title.is_empty() {
            id
        } else {
            &call.title
        };
        Some((title.to_owned(), status.to_owned()))
    }

    /// How many tool calls the agent reported as completed
    /// (`ToolCallStatus`).
    fn completed(&self) -> usize {
        self.tool_calls
            .values()
            .filter(|call| call.status == "completed")
            .count()
    }

    fn line(&mut self, text: &str) {
        self.end_line();
        println!("{text}");
    }

    fn end_line(&mut self) {
        if std::mem::take(&mut self.mid_line) {
            println!();
        }
    }
}

/// One line of the agent's stdout.
enum Line {
    Message(Value),
    /// Not a JSON object: agents should not print such lines, but some log
    /// to stdout.
    Text(String),
    Closed(String),
}

/// The agent process, its stdin, and the lines of its stdout. Dropping it
/// stops and reaps the process, on every path out of [`run`].
struct Agent {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<Line>,
    next_id: u64,
}

impl Agent {
    fn spawn(argv: &[String], cwd: &Path) -> Result<Agent, String> {
        let (program, args) = argv.split_first().ok_or("no agent command")?;
        let mut child = Command::new(program)
            .args(args)
            .current_dir(cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            // The agent's own logs go straight to ours.
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("could not start {program:?}: {e}"))?;
        let stdin = child.stdin.take();
        let stdout = child.stdout.take();
        let (sender, lines) = mpsc::channel();
        // From here on, the guard owns the process.
        let agent = Agent {
            child,
            stdin,
            lines,
            next_id: 0,
        };
        let stdout = stdout.ok_or("the agent's stdout was not piped")?;
        thread::Builder::new()
            .name("acp-reader".into())
            .spawn(move || read_lines(stdout, &sender))
            .map_err(|e| format!("could not start the reader thread: {e}"))?;
        Ok(agent)
    }

    fn next_id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    fn send(&mut self, message: &Value) -> Result<(), RpcError> {
        let stdin = self
            .stdin
            .as_mut()
            .ok_or_else(|| RpcError::Closed("the agent's stdin is closed".into()))?;
        writeln!(stdin, "{message}")
            .and_then(|()| stdin.flush())
            .map_err(|e| RpcError::Closed(format!("could not write to the agent: {e}")))
    }

    /// The next JSON-RPC message, waiting at most until `deadline`.
    fn recv(&self, deadline: Instant) -> Result<Value, RpcError> {
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(Line::Message(message)) => return Ok(message),
                Ok(Line::Text(text)) => eprintln!("[agent stdout] {text}"),
                Ok(Line::Closed(why)) => return Err(RpcError::Closed(why)),
                Err(RecvTimeoutError::Timeout) => return Err(RpcError::Timeout),
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(RpcError::Closed("the agent's output ended".into()))
                }
            }
        }
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        // End of input is how an ACP client says goodbye; it also reaches
        // grandchildren (an `npx` launcher's node process) that share the
        // pipe, which a kill of the direct child would not.
        drop(self.stdin.take());
        let deadline = Instant::now() + EXIT_GRACE;
        while Instant::now() < deadline {
            match self.child.try_wait() {
                Ok(Some(_)) => return,
                Ok(None) => thread::sleep(Duration::from_millis(20)),
                Err(_) => break,
            }
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn read_lines(stdout: ChildStdout, sender: &Sender<Line>) {
    let mut reader = BufReader::new(stdout);
    let mut buf = String::new();
    loop {
        buf.clear();
        let line = match reader.read_line(&mut buf) {
            Ok(0) => Line::Closed("the agent closed its output (did it exit?)".into()),
            Ok(_) => match serde_json::from_str::<Value>(buf.trim()) {
                Ok(message) if message.is_object() => Line::Message(message),
                _ if buf.trim().is_empty() => continue,
                _ => Line::Text(buf.trim_end().to_owned()),
            },
            Err(e) => Line::Closed(format!("could not read the agent's output: {e}")),
        };
        let last = matches!(line, Line::Closed(_));
        if sender.send(line).is_err() || last {
            return;
        }
    }
}
