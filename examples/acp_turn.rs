//! Drives an ACP agent through one prompt turn that uses this program's own
//! tools, served by toolhost on loopback: a command line over
//! `toolhost::acp::Agent` (feature `acp-driver`).
//!
//! ```text
//! cargo run --features acp-driver --example acp_turn -- [OPTIONS] -- AGENT [ARGS...]
//! cargo run --features acp-driver --example acp_turn -- -- gemini --acp
//! cargo run --features acp-driver --example acp_turn -- --permission reject -- copilot --acp
//! ```
//!
//! Options: `--prompt TEXT` (by default one that asks for the demo tools),
//! `--permission allow|reject` (how to answer the agent's permission
//! requests; `allow`), `--transport auto|http|stdio` (the `mcpServers`
//! entry: chosen from the agent's capabilities, or forced; `auto`),
//! `--auth METHOD` (`authenticate` with this method before the session),
//! `--cwd DIR` (the session's working directory; the current one),
//! `--startup-timeout SECS` (for `initialize`, `authenticate` and
//! `session/new`; 120, since `npx` may first download the agent) and
//! `--turn-timeout SECS` (for the prompt turn; 600, then it is cancelled).
//!
//! The turn: bind a host and publish two demo tools (`echo`, `add`) whose
//! handlers record their arguments; start the agent; `initialize`;
//! `session/new` with the entry the agent can use (a stdio entry starts
//! this program again as a relay, which is why `main` begins with
//! `run_if_requested`); `session/prompt`, printing the agent's updates as
//! they stream and answering its permission requests. Then report what the
//! host served — ACP's tool-call updates never say which tool ran or with
//! what arguments, so that comes from the handlers — drop the session, and
//! end the agent with everything it started.
//!
//! `--help` (or `-h`) prints the options and exits.
//!
//! Exit status: 0 when the turn ended; 1 when it failed (the agent could not
//! start, broke the protocol, or did not answer in time) or the command
//! line could not be used (the options follow on stderr); 2 when the agent
//! reported a completed tool call but no call reached the host, which means
//! it did not use the entry (or used only tools of its own) — which is why
//! a bad command line is not the usual 2 here. The last line
//! on stdout is a JSON summary for scripts: `{"stopReason", "error",
//! "transport", "callsServed", "toolCalls", "toolCallsCompleted", "calls":
//! [{"tool", "arguments"}]}`.

use std::io::{self, Write};
use std::path::PathBuf;
use std::process::{Command, ExitCode};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde_json::{json, Value};
use toolhost::acp::{
    AcpError, Agent, McpTransport, PermissionChoice, PermissionRequest, TurnSummary, Update,
};
use toolhost::{CallResult, Event, HostConfig, StaticSurface, Tool, ToolHost, ToolOutcome};

const EXIT_FAILED: u8 = 1;
const EXIT_UNSERVED_CLAIM: u8 = 2;
const DEFAULT_PROMPT: &str = "Use the echo tool of the toolhost-demo MCP server to echo \
    'hello from toolhost', then use its add tool to add 2 and 40. Report both results.";
/// What `--help` prints.
const USAGE: &str = "\
usage: acp_turn [OPTIONS] -- AGENT [ARGS...]

Drives the ACP agent AGENT through one prompt turn with two demo tools
(echo, add) served on loopback, prints what the agent streams, then what
reached the host, and last a JSON summary line.

  --prompt TEXT            the prompt (by default one that asks for the
                           demo tools)
  --permission allow|reject
                           how to answer the agent's permission requests
                           (allow)
  --transport auto|http|stdio
                           the mcpServers entry: chosen from the agent's
                           capabilities, or forced (auto)
  --auth METHOD            authenticate with METHOD before the session
  --cwd DIR                the session's working directory (the current
                           one)
  --startup-timeout SECS   for initialize, authenticate and session/new
                           (120)
  --turn-timeout SECS      for the turn, then it is cancelled (600)
  -h, --help               print this and exit

Exit status: 0 when the turn ended; 1 when it failed or the command line
could not be used; 2 when the agent reported a completed tool call but no
call reached the host.
";

pub(crate) fn main() -> ExitCode {
    // A stdio entry starts this program again: that copy relays and exits.
    toolhost::relay::run_if_requested();
    run_cli(std::env::args().skip(1))
}

/// The whole program, from its arguments (without the program name) to its
/// exit status.
pub(crate) fn run_cli(args: impl IntoIterator<Item = String>) -> ExitCode {
    let options = match Options::parse(args) {
        Ok(Some(options)) => options,
        Ok(None) => {
            print!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        // Not 2, the usual status of a bad command line: that one already
        // tells scripts the agent claimed calls the host never served.
        Err(why) => {
            eprint!("acp_turn: {why}\n\n{USAGE}");
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
    allow: bool,
    transport: Option<McpTransport>,
    auth: Option<String>,
    cwd: PathBuf,
    startup_timeout: Duration,
    turn_timeout: Duration,
    agent: Vec<String>,
}

impl Options {
    /// The options `args` give: `None` when they ask for help, an error
    /// naming what is wrong when they cannot be used.
    fn parse(args: impl IntoIterator<Item = String>) -> Result<Option<Options>, String> {
        let mut args = args.into_iter();
        let mut options = Options {
            prompt: DEFAULT_PROMPT.to_owned(),
            allow: true,
            transport: None,
            auth: None,
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
                "-h" | "--help" => return Ok(None),
                "--prompt" => options.prompt = value()?,
                "--permission" => {
                    options.allow = match value()?.as_str() {
                        "allow" => true,
                        "reject" => false,
                        other => {
                            return Err(format!(
                                "--permission takes allow or reject, not {other:?}"
                            ))
                        }
                    }
                }
                "--transport" => {
                    options.transport = match value()?.as_str() {
                        "auto" => None,
                        "http" => Some(McpTransport::Http),
                        "stdio" => Some(McpTransport::Stdio),
                        other => {
                            return Err(format!(
                                "--transport takes auto, http or stdio, not {other:?}"
                            ))
                        }
                    }
                }
                "--auth" => options.auth = Some(value()?),
                "--cwd" => options.cwd = PathBuf::from(value()?),
                "--startup-timeout" => options.startup_timeout = seconds(&arg, &value()?)?,
                "--turn-timeout" => options.turn_timeout = seconds(&arg, &value()?)?,
                other => return Err(format!("unknown option {other:?}")),
            }
        }
        if options.agent.is_empty() {
            return Err("give the agent's command after --".to_owned());
        }
        Ok(Some(options))
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

/// Prints the agent's updates: its message as it streams, the rest one
/// line each.
#[derive(Default)]
struct Printer {
    /// Whether agent text left the cursor mid-line.
    mid_line: bool,
}

impl Printer {
    fn update(&mut self, update: &Update) {
        match update {
            Update::AgentMessage {
                text: Some(text), ..
            } => {
                print!("{text}");
                let _ = io::stdout().flush();
                self.mid_line = !text.ends_with('\n');
            }
            Update::AgentMessage { content, .. } => self.line(&format!("[{}]", content["type"])),
            Update::ToolCall(call) => {
                let title = if call.title.is_empty() {
                    &call.id
                } else {
                    &call.title
                };
                self.line(&format!("[tool] {title}: {}", call.status));
            }
            Update::Plan(entries) => {
                for entry in entries {
                    self.line(&format!("[plan] {} ({})", entry.content, entry.status));
                }
            }
            // Thoughts, mode and command updates are not part of the answer.
            _ => {}
        }
    }

    fn permission(&mut self, request: &PermissionRequest, allow: bool) -> PermissionChoice {
        let kinds: &[&str] = if allow {
            &["allow_once", "allow_always"]
        } else {
            &["reject_once", "reject_always"]
        };
        let title = &request.tool_call.title;
        match request.option(kinds) {
            Some(option) => {
                self.line(&format!(
                    "[permission] {title}: {} ({})",
                    option.kind, option.name
                ));
                PermissionChoice::Select(option.id.clone())
            }
            None => {
                self.line(&format!(
                    "[permission] {title}: no matching option; cancelled"
                ));
                PermissionChoice::Cancel
            }
        }
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

fn run(options: &Options) -> Result<ExitCode, String> {
    let log = CallLog::default();
    let host = ToolHost::bind(
        HostConfig::default()
            .server_name("toolhost-demo")
            .on_event(on_event),
    )
    .map_err(|e| e.to_string())?;
    let session = host.open_session(demo_tools(&log).map_err(|e| e.to_string())?);

    let (program, args) = options.agent.split_first().ok_or("no agent command")?;
    let mut command = Command::new(program);
    command.args(args).current_dir(&options.cwd);
    let mut agent = Agent::spawn(&mut command).map_err(|e| e.to_string())?;
    eprintln!(
        "[acp_turn] started {} (pid {})",
        options.agent.join(" "),
        agent.id()
    );
    agent.set_timeout(options.startup_timeout);
    let mut printer = Printer::default();
    let mut transport = None;
    let outcome = drive(&mut agent, &session, options, &mut printer, &mut transport);
    printer.end_line();

    let calls = log.lock().unwrap_or_else(PoisonError::into_inner).clone();
    let served = session.calls_served();
    let (stop_reason, error, reported, completed) = match &outcome {
        Ok(summary) => {
            println!("turn ended: {}", summary.stop_reason);
            let stop = Some(summary.stop_reason.clone());
            let error = summary.timed_out.then(|| {
                format!(
                    "the turn ran past {:?} and was cancelled",
                    options.turn_timeout
                )
            });
            (
                stop,
                error,
                summary.tool_calls.len(),
                summary.completed_tool_calls(),
            )
        }
        Err(why) => {
            println!("turn failed: {why}");
            (None, Some(why.to_string()), 0, 0)
        }
    };
    println!("host served {served} tool call(s)");
    for (tool, args) in &calls {
        println!("  {tool} {args}");
    }
    println!("agent reported {reported} tool call(s), {completed} completed");
    let summary = json!({
        "stopReason": stop_reason,
        "error": error,
        "transport": transport.map(|t| match t {
            McpTransport::Http => "http",
            _ => "stdio",
        }),
        "callsServed": served,
        "toolCalls": reported,
        "toolCallsCompleted": completed,
        "calls": calls.iter()
            .map(|(tool, args)| json!({"tool": tool, "arguments": args}))
            .collect::<Vec<_>>(),
    });
    println!("{summary}");
    // The bearer dies here; the agent, if still connected, is refused from
    // now on. Then the agent and everything it started are ended.
    drop(session);
    drop(agent);

    if outcome.as_ref().is_ok_and(TurnSummary::unserved_claims) {
        eprintln!(
            "acp_turn: the agent reported {completed} completed tool call(s), but none reached \
             the host: it did not use the mcpServers entry, or used only tools of its own"
        );
        return Ok(ExitCode::from(EXIT_UNSERVED_CLAIM));
    }
    Ok(match (&outcome, &error) {
        (Ok(_), None) => ExitCode::SUCCESS,
        _ => ExitCode::from(EXIT_FAILED),
    })
}

/// `initialize` → `authenticate` (if asked) → `session/new` → the turn.
fn drive(
    agent: &mut Agent,
    session: &toolhost::ToolSession,
    options: &Options,
    printer: &mut Printer,
    used: &mut Option<McpTransport>,
) -> Result<TurnSummary, AcpError> {
    let init = agent.initialize()?.clone();
    let support = toolhost::acp::AgentMcpSupport::from_initialize(&init);
    let transport = options.transport.unwrap_or(support.transport());
    if transport == McpTransport::Http && !support.http {
        eprintln!("[acp_turn] warning: the agent does not announce mcpCapabilities.http; it may ignore the HTTP entry");
    }
    *used = Some(transport);
    if let Some(method) = &options.auth {
        agent.authenticate(method)?;
    }
    let servers = session
        .acp_mcp_servers_using(transport, &init)
        .map_err(AcpError::Entry)?;
    let session_id = agent.new_session_with_servers(&options.cwd, servers)?;
    let allow = options.allow;
    let printer = std::cell::RefCell::new(printer);
    agent
        .prompt(&session_id, &options.prompt)
        .tools(session)
        .timeout(options.turn_timeout)
        .on_update(|update| printer.borrow_mut().update(update))
        .on_permission(|request| printer.borrow_mut().permission(request, allow))
        .run()
}
