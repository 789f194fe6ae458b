//! `toolhost::acp::Agent` in this process, driving the stand-in: the stdio
//! bridge end to end (a tool that asks back, a session dropped under a
//! running relay), ACP v2's typed entries, the process group, timeouts and
//! cancellation, and logins.

use std::env;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use toolhost::acp::{
    AcpError, Agent, AuthMethod, McpTransport, PermissionChoice, TurnCancel, TurnSummary, Update,
};
use toolhost::{Elicitation, HostConfig, StaticSurface, Tool, ToolHost, ToolOutcome, ToolSession};

use crate::links::ELICITED_ANSWER;
use crate::STANDIN;

/// The stand-in in `mode`, started by the driver.
fn standin(mode: &str) -> Agent {
    let exe = env::current_exe().expect("own path");
    let mut agent = Agent::spawn(Command::new(exe).args([STANDIN, mode])).expect("spawn");
    agent.set_timeout(Duration::from_secs(30));
    agent
}

fn cwd() -> std::path::PathBuf {
    env::current_dir().expect("cwd")
}

/// What the tools heard: the answers `ask` got.
type Answers = Arc<Mutex<Vec<String>>>;

/// `echo`, and `ask`, which asks the user for an answer (an elicitation)
/// and records it.
fn tools(answers: &Answers) -> StaticSurface {
    let heard = Arc::clone(answers);
    StaticSurface::new()
        .tool(
            Tool::new("echo", "Returns the given text.").input_schema(json!({"type": "object",
                "properties": {"text": {"type": "string"}}, "required": ["text"]})),
            |args, _| ToolOutcome::text(args["text"].as_str().unwrap_or("")),
        )
        .expect("echo")
        .tool(
            Tool::new("ask", "Asks the user for an answer."),
            move |_, ctx| {
                let form = json!({"type": "object",
                "properties": {"answer": {"type": "string"}}, "required": ["answer"]});
                match ctx.elicit("What is the answer?", form) {
                    Ok(Elicitation::Accept(content)) => {
                        let answer = content["answer"].as_str().unwrap_or("").to_owned();
                        heard.lock().expect("lock").push(answer.clone());
                        ToolOutcome::text(answer)
                    }
                    Ok(other) => ToolOutcome::declined(format!("no answer: {other:?}")),
                    Err(err) => ToolOutcome::declined(format!("asking failed: {err}")),
                }
            },
        )
        .expect("ask")
}

/// Appends the text of the agent's message chunks to `said`.
fn collect_text(said: &mut String, update: &Update) {
    if let Update::AgentMessage {
        text: Some(text), ..
    } = update
    {
        said.push_str(text);
    }
}

/// Runs a turn, collecting what the agent said; allows every tool call.
fn turn(
    agent: &mut Agent,
    session_id: &str,
    text: &str,
    tools: Option<&ToolSession>,
) -> (Result<TurnSummary, AcpError>, String) {
    let mut said = String::new();
    let mut prompt = agent
        .prompt(session_id, text)
        .timeout(Duration::from_secs(60))
        .on_update(|update| collect_text(&mut said, update))
        .on_permission(PermissionChoice::allow);
    if let Some(tools) = tools {
        prompt = prompt.tools(tools);
    }
    let summary = prompt.run();
    (summary, said)
}

pub fn a_tool_that_asks_back_is_answered_by_the_agent_through_the_relay() {
    let host = ToolHost::bind(HostConfig::default().server_name("asker")).expect("bind");
    let answers = Answers::default();
    let session = host.open_session(tools(&answers));
    let mut agent = standin("stdio-only");
    agent.initialize().expect("initialize");
    let support = agent.mcp_support().expect("initialized");
    assert_eq!(support.transport(), McpTransport::Stdio);
    let id = agent.new_session(&cwd(), &session).expect("session/new");

    let (summary, said) = turn(&mut agent, &id, "use the tools", Some(&session));
    let summary = summary.expect("turn");
    assert_eq!(summary.stop_reason, "end_turn", "{said}");
    assert!(said.contains("McpServerStdio named \"asker\""), "{said}");
    assert!(
        said.contains(&format!("ask returned {ELICITED_ANSWER:?}")),
        "{said}"
    );
    assert_eq!(*answers.lock().expect("lock"), [ELICITED_ANSWER]);
    assert_eq!(summary.calls_served, Some(2), "{said}");
    assert_eq!(summary.completed_tool_calls(), 2, "{summary:?}");
    assert!(!summary.unserved_claims());

    // Declined by the agent, the question reaches the tool as a decline:
    // both calls still reach the host, and ask reports no answer.
    let (summary, said) = turn(&mut agent, &id, "decline what they ask", Some(&session));
    let summary = summary.expect("turn");
    assert!(
        said.contains("ask returned \"no answer: Decline\""),
        "{said}"
    );
    assert_eq!(summary.calls_served, Some(2), "{said}");
    assert_eq!(summary.completed_tool_calls(), 1, "{summary:?}");
    assert_eq!(answers.lock().expect("lock").len(), 1, "nothing new heard");
}

pub fn a_dropped_session_ends_the_relay_with_an_error_that_says_so() {
    let host = ToolHost::bind(HostConfig::default().server_name("dropped")).expect("bind");
    let session = host.open_session(tools(&Answers::default()));
    let mut agent = standin("stdio-only");
    agent.initialize().expect("initialize");
    let id = agent.new_session(&cwd(), &session).expect("session/new");
    let (summary, said) = turn(&mut agent, &id, "echo", Some(&session));
    assert_eq!(summary.expect("turn").calls_served, Some(2), "{said}");

    // The application drops the session; the agent's relay runs on.
    drop(session);
    let (summary, said) = turn(&mut agent, &id, "echo again", None);
    assert_eq!(summary.expect("turn").stop_reason, "end_turn");
    let (_, failure) = said
        .split_once("stand-in: tools/list failed: ")
        .unwrap_or_else(|| panic!("the relay answered the next request: {said}"));
    assert!(failure.contains("\"code\":-32000"), "{failure}");
    assert!(failure.contains("session has ended"), "{failure}");
    let lower = failure.to_ascii_lowercase();
    for word in ["auth", "token", "bearer", "401", "login", "credential"] {
        assert!(!lower.contains(word), "{word} in {failure}");
    }
    assert!(
        said.contains("the stdio server exited with status 3"),
        "the relay exited on its own: {said}"
    );
}

/// An agent spoken to line by line, for what the driver does not speak.
struct RawAgent {
    child: Child,
    stdin: ChildStdin,
    lines: std::io::Lines<BufReader<std::process::ChildStdout>>,
}

impl RawAgent {
    fn spawn(mode: &str) -> RawAgent {
        let mut child = Command::new(env::current_exe().expect("own path"))
            .args([STANDIN, mode])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("spawn");
        let stdin = child.stdin.take().expect("stdin");
        let lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
        RawAgent {
            child,
            stdin,
            lines,
        }
    }

    /// The whole response to request `id`.
    fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(self.stdin, "{message}").expect("write");
        loop {
            let line = self.lines.next().expect("a line").expect("read");
            let message: Value = serde_json::from_str(&line).expect("JSON");
            if message["id"] == id && message.get("method").is_none() {
                return message;
            }
        }
    }
}

impl Drop for RawAgent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn a_v2_agent_gets_a_typed_stdio_entry_and_refuses_an_untyped_one() {
    let host = ToolHost::bind(HostConfig::default().server_name("typed")).expect("bind");
    let session = host.open_session(tools(&Answers::default()));

    // The driver speaks v1, and says so to an agent that speaks only v2.
    let mut agent = standin("v2");
    let refused = agent.initialize().expect_err("a v2-only agent");
    assert!(
        matches!(refused, AcpError::Protocol { .. })
            && refused.to_string().contains("ACP version 2"),
        "{refused}"
    );
    drop(agent);

    // A v2 client gets the entry its answer calls for.
    let mut raw = RawAgent::spawn("v2");
    let init = raw.request(
        1,
        "initialize",
        json!({"protocolVersion": 2, "capabilities": {},
            "info": {"name": "raw", "version": "0"}}),
    );
    let servers = session
        .acp_mcp_servers_for(&init["result"])
        .expect("entries");
    assert_eq!(servers[0]["type"], "stdio", "{servers}");
    let untyped = json!([session.stdio_relay_entry().expect("entry")]);
    let refusal = raw.request(
        2,
        "session/new",
        json!({"cwd": cwd(), "mcpServers": untyped}),
    );
    assert_eq!(refusal["error"]["code"], -32602, "{refusal}");
    let created = raw.request(
        3,
        "session/new",
        json!({"cwd": cwd(), "mcpServers": servers}),
    );
    assert_eq!(
        created["result"]["sessionId"], "standin-session",
        "{created}"
    );
    // The agent reached the tools through the typed entry's relay.
    assert_eq!(
        created["result"]["_meta"]["tools"],
        json!(["echo", "ask"]),
        "{created}"
    );
}

/// The process group of a live process (not a zombie), from `/proc`.
#[cfg(target_os = "linux")]
fn live_group_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    let state = fields.next()?;
    let _ppid = fields.next()?;
    let group = fields.next()?.parse().ok()?;
    (state != "Z" && state != "X").then_some(group)
}

/// The live processes of `group`.
#[cfg(target_os = "linux")]
fn live_members(group: u32) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .expect("/proc")
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| live_group_of(pid) == Some(group))
        .collect()
}

#[cfg(target_os = "linux")]
pub fn nothing_the_agent_started_outlives_the_driver() {
    let mut agent = standin("grandchild");
    let init = agent.initialize().expect("initialize").clone();
    let grandchild = init["_meta"]["grandchild"]
        .as_u64()
        .and_then(|pid| u32::try_from(pid).ok())
        .unwrap_or_else(|| panic!("no grandchild named: {init}"));
    let group = agent.id();
    // Before: the grandchild runs, in the agent's group.
    assert_eq!(live_group_of(grandchild), Some(group));
    let before = live_members(group);
    assert!(
        before.contains(&group) && before.contains(&grandchild),
        "{before:?}"
    );
    drop(agent);
    // After: nothing of the group runs. (A survivor is ended here, so that
    // a failure does not leave it holding pipes.)
    let survived = live_group_of(grandchild).is_some();
    if survived {
        let _ = Command::new("kill")
            .args(["-KILL", &grandchild.to_string()])
            .status();
    }
    assert!(!survived, "the grandchild survived");
    assert_eq!(live_members(group), Vec::<u32>::new());

    // The example ends the same way: its output ends, so a caller that
    // waits for it returns (were the grandchild alive, holding the pipe,
    // this would wait until the suite's watchdog fires).
    let turn = crate::Turn::run(&["--permission", "allow"], "grandchild");
    let show = turn.show();
    assert_eq!(turn.code, Some(0), "{show}");
    assert_eq!(turn.summary["callsServed"], 1, "{show}");
}

#[cfg(not(target_os = "linux"))]
pub fn nothing_the_agent_started_outlives_the_driver() {
    // The check reads /proc; elsewhere only the example's run is checked.
    let turn = crate::Turn::run(&["--permission", "allow"], "grandchild");
    assert_eq!(turn.code, Some(0), "{}", turn.show());
}

/// A host with the test tools, and the stand-in in `mode`, initialized,
/// with an ACP session open on them.
fn session_with(mode: &str) -> (ToolHost, ToolSession, Agent, String) {
    let host = ToolHost::bind(HostConfig::default()).expect("bind");
    let session = host.open_session(tools(&Answers::default()));
    let mut agent = standin(mode);
    agent.initialize().expect("initialize");
    let id = agent.new_session(&cwd(), &session).expect("session/new");
    (host, session, agent, id)
}

pub fn a_turn_past_its_timeout_is_cancelled_and_later_permissions_are_cancelled() {
    let (_host, session, mut agent, id) = session_with("slow-turn");
    let mut said = String::new();
    let mut asked = 0;
    let summary = agent
        .prompt(&id, "take your time")
        .tools(&session)
        .timeout(Duration::from_millis(300))
        .on_update(|update| collect_text(&mut said, update))
        .on_permission(|request| {
            asked += 1;
            PermissionChoice::allow(request)
        })
        .run()
        .expect("the agent answered the cancel");
    assert!(summary.timed_out);
    assert_eq!(summary.stop_reason, "cancelled");
    assert!(
        said.contains("after the cancel, permission answered cancelled"),
        "{said}"
    );
    assert_eq!(
        asked, 0,
        "the policy is not asked once the turn is cancelled"
    );
    assert_eq!(summary.calls_served, Some(0));
}

pub fn a_turn_cancelled_from_its_own_callback_ends_cancelled_without_a_timeout() {
    let (_host, _session, mut agent, id) = session_with("slow-turn");
    let cancel = TurnCancel::new();
    let from_callback = cancel.clone();
    let summary = agent
        .prompt(&id, "take your time")
        .timeout(Duration::from_secs(120))
        .cancel_with(&cancel)
        .on_update(move |update| {
            if matches!(update, Update::AgentMessage { .. }) {
                from_callback.cancel();
            }
        })
        .run()
        .expect("the agent answered the cancel");
    assert!(cancel.is_cancelled());
    assert!(!summary.timed_out);
    assert_eq!(summary.stop_reason, "cancelled");
    assert_eq!(summary.calls_served, None, "no tools were named");
}

pub fn an_agent_that_wants_a_login_gets_the_method_the_caller_picked() {
    let host = ToolHost::bind(HostConfig::default()).expect("bind");
    let session = host.open_session(tools(&Answers::default()));
    let mut agent = standin("needs-login");
    agent.initialize().expect("initialize");
    let methods = agent.auth_methods();
    assert_eq!(methods.len(), 1, "{methods:?}");
    let AuthMethod { id, name, .. } = &methods[0];
    assert_eq!((id.as_str(), name.as_str()), ("standin-login", "Log in"));

    let refused = agent
        .new_session(&cwd(), &session)
        .expect_err("no login yet");
    assert_eq!(refused.agent_code(), Some(-32000));
    assert!(refused.to_string().contains("login first"), "{refused}");
    let wrong = agent.authenticate("elsewhere").expect_err("not offered");
    assert_eq!(wrong.agent_code(), Some(-32602));
    agent.authenticate("standin-login").expect("login");
    let id = agent.new_session(&cwd(), &session).expect("after login");
    assert_eq!(id, "standin-session");
}
