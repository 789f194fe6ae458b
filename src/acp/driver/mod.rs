//! A blocking ACP client (feature `acp-driver`): [`Agent`] and the turns
//! it runs. `crate::child` keeps the agent's process group and runs the
//! threads on its pipes, `pipes.rs` the JSON-RPC lines, `turn.rs` a prompt
//! turn, `updates.rs` what the agent reports and asks.

mod error;
mod pipes;
mod turn;
mod updates;

use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

pub use error::AcpError;
pub use turn::{Prompt, TurnCancel, TurnSummary};
pub use updates::{
    PermissionChoice, PermissionOption, PermissionRequest, PlanEntry, ToolCallReport, Update,
};

use crate::child::Group;
pub use crate::child::DEFAULT_MAX_MESSAGE_BYTES;
use crate::model::jsonrpc::{Invalid, Message, RpcError, METHOD_NOT_FOUND};
use crate::sync::lock;
use pipes::{Pipes, Silence, StderrHook};

use super::AgentMcpSupport;
use crate::session::ToolSession;

/// The ACP version the driver speaks.
pub const ACP_VERSION: u64 = 1;

/// The default of [`Agent::set_timeout`].
pub(crate) const DEFAULT_SETUP_TIMEOUT: Duration = Duration::from_secs(120);
// For the README's tests (`readme.rs`), which need both features.
#[cfg(all(test, feature = "client"))]
pub(crate) use turn::DEFAULT_TURN_TIMEOUT;

/// An ACP agent process, driven over its stdin and stdout: start it,
/// open a session that carries a [`ToolSession`]'s tools, and drive it
/// through prompt turns — with no async runtime. (Feature `acp-driver`.)
///
/// ```no_run
/// use std::process::Command;
/// use toolhost::acp::{Agent, PermissionChoice};
/// use toolhost::{HostConfig, StaticSurface, Tool, ToolHost, ToolOutcome};
///
/// # #[cfg(feature = "client")]
/// toolhost::relay::run_if_requested(); // for agents that need a stdio entry
/// let host = ToolHost::bind(HostConfig::default().server_name("myapp"))?;
/// let tools = host.open_session(StaticSurface::new().tool(
///     Tool::new("echo", "Echoes text."),
///     |args, _| ToolOutcome::text(args["text"].as_str().unwrap_or("")),
/// )?);
///
/// let mut agent = Agent::spawn(Command::new("gemini").arg("--acp"))?;
/// agent.initialize()?;
/// let session = agent.new_session(&std::env::current_dir()?, &tools)?;
/// let summary = agent
///     .prompt(&session, "Echo 'hello' with the myapp tools.")
///     .tools(&tools)
///     .on_update(|update| println!("{update:?}"))
///     .on_permission(PermissionChoice::allow)
///     .run()?;
/// println!("{}: the host served {:?} call(s)", summary.stop_reason, summary.calls_served);
/// drop(agent); // ends the agent and everything it started
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// The agent runs in a process group of its own, and dropping the
/// `Agent` ends the whole group: its input is closed, it gets two
/// seconds to leave, then the group is sent `SIGTERM`, then `SIGKILL`, and
/// the agent is reaped — nothing it started outlives the driver, even when
/// it is a launcher (`npx`, a wrapper script) whose child is the real
/// agent. (On Windows the tree is ended with `taskkill /T` while the agent
/// still runs; std alone cannot find what an agent that already exited
/// left behind there.)
///
/// An agent that dies is noticed at once, not at a timeout: when its
/// process exits (or it closes its output) the request waiting on it —
/// `initialize`, `authenticate`, `session/new`, a turn — fails with
/// [`AcpError::Closed`], which names the exit status or signal and the last
/// lines the agent wrote to stderr. Its stderr is piped through the driver
/// for that: each line still reaches this program's stderr as it comes.
/// A message (one line of ACP) longer than
/// [`Agent::set_max_message_bytes`] (16 MiB by default) is skipped while it
/// is read, never buffered whole, and fails the request or turn with
/// [`AcpError::Protocol`] naming its size and the setting: a runaway agent
/// cannot grow this program's memory without bound. Nor can one that
/// writes many: what the agent says between turns (late updates,
/// questions) waits for the next request or turn, but only a few messages
/// are held at a time; past them the driver stops reading, and the agent
/// blocks on its pipe until the driver reads again. Nothing it wrote is
/// dropped: the next request or turn reads it first (a turn's
/// [`on_update`](Prompt::on_update) hears those updates).
///
/// The driver speaks ACP v1 (`protocolVersion: 1`), which every agent
/// speaks today. It offers the agent no file system and no terminal, so
/// the agent works with its own tools and the session's. Every wait has a
/// deadline: [`Agent::set_timeout`] for `initialize`, `authenticate` and
/// `session/new` (120 s by default, since a first `npx` run downloads the
/// agent), [`Prompt::timeout`] for a turn (600 s), after which the turn is
/// cancelled with `session/cancel`.
///
pub struct Agent {
    pipes: Pipes,
    /// Shared with the watch on the agent's process.
    group: Arc<Mutex<Group>>,
    pid: u32,
    max_message_bytes: Arc<AtomicUsize>,
    stderr_hook: StderrHook,
    initialized: Option<Value>,
    timeout: Duration,
}

/// One way the agent offers to log in (`AuthMethod`).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct AuthMethod {
    /// The id to pass to [`Agent::authenticate`].
    pub id: String,
    /// What the agent calls it.
    pub name: String,
    /// The agent's description, when it gave one.
    pub description: Option<String>,
}

impl Agent {
    /// Starts `command` as an ACP agent: its stdin and stdout become the
    /// ACP channel, its stderr is copied line by line to this program's
    /// (whatever the command said: the driver keeps the last lines for the
    /// error that says the agent died; [`Agent::on_stderr`] sends them
    /// elsewhere), and it leads a new process group.
    ///
    /// # Errors
    /// [`AcpError::Spawn`] when the program cannot be started.
    pub fn spawn(command: &mut Command) -> Result<Agent, AcpError> {
        let program = command.get_program().to_string_lossy().into_owned();
        let spawn_error = |source| AcpError::Spawn {
            program: program.clone(),
            source,
        };
        let (group, stdin, stdout, stderr) = Group::spawn(command).map_err(spawn_error)?;
        let pid = group.id();
        // Should the threads not start, `group` is dropped, which ends it.
        let group = Arc::new(Mutex::new(group));
        let max_message_bytes = Arc::new(AtomicUsize::new(DEFAULT_MAX_MESSAGE_BYTES));
        let stderr_hook = StderrHook::default();
        let pipes = Pipes::start(
            &group,
            (stdin, stdout, stderr),
            Arc::clone(&max_message_bytes),
            Arc::clone(&stderr_hook),
        )
        .map_err(spawn_error)?;
        Ok(Agent {
            pipes,
            group,
            pid,
            max_message_bytes,
            stderr_hook,
            initialized: None,
            timeout: DEFAULT_SETUP_TIMEOUT,
        })
    }

    /// The agent's process id, which is also the id of its process group.
    pub fn id(&self) -> u32 {
        self.pid
    }

    /// How long `initialize`, `authenticate` and `session/new` may take
    /// (120 s by default).
    pub fn set_timeout(&mut self, timeout: Duration) -> &mut Agent {
        self.timeout = timeout;
        self
    }

    /// The longest message the agent may send, in bytes: one line of ACP
    /// (default [`DEFAULT_MAX_MESSAGE_BYTES`], 16 MiB). A longer line is
    /// skipped while it is read, never buffered whole, and fails the
    /// request or turn waiting with [`AcpError::Protocol`] (a turn is
    /// cancelled with `session/cancel` on its way out); the agent runs on.
    pub fn set_max_message_bytes(&mut self, bytes: usize) -> &mut Agent {
        self.max_message_bytes.store(bytes, Ordering::Relaxed);
        self
    }

    /// Hands each line the agent writes to stderr (without its line break,
    /// cut at 4 KiB) to `callback`, on a thread of the driver's, instead of
    /// this program's stderr; `|_| {}` silences the agent. The last lines
    /// still go into the error that says the agent died. Lines written
    /// before the call went to this program's stderr.
    ///
    /// ```no_run
    /// # use std::process::Command;
    /// # use toolhost::acp::Agent;
    /// let mut agent = Agent::spawn(Command::new("gemini").arg("--acp"))?;
    /// agent.on_stderr(|line| eprintln!("[gemini] {line}"));
    /// # Ok::<(), toolhost::acp::AcpError>(())
    /// ```
    pub fn on_stderr(&mut self, callback: impl FnMut(&str) + Send + 'static) -> &mut Agent {
        *lock(&self.stderr_hook) = Some(Box::new(callback));
        self
    }

    /// `initialize`: offers ACP v1 and no client capabilities (no file
    /// system, no terminal), and keeps the agent's answer, whose
    /// capabilities choose the `mcpServers` entry later.
    ///
    /// # Errors
    /// [`AcpError::Timeout`], [`AcpError::Closed`] (at once, when the agent
    /// exits) or [`AcpError::Agent`] as the agent fails to answer;
    /// [`AcpError::Protocol`] when it speaks another ACP version or sends
    /// a message past [`Agent::set_max_message_bytes`].
    pub fn initialize(&mut self) -> Result<&Value, AcpError> {
        let params = json!({
            "protocolVersion": ACP_VERSION,
            "clientCapabilities": {
                "fs": {"readTextFile": false, "writeTextFile": false},
                "terminal": false,
            },
            "clientInfo": {"name": "toolhost", "version": env!("CARGO_PKG_VERSION")},
        });
        let result = self.call("initialize", params)?;
        // The agent answers with the client's version if it speaks it,
        // else with its own latest.
        if result.get("protocolVersion").and_then(Value::as_u64) != Some(ACP_VERSION) {
            return Err(AcpError::protocol(
                "initialize",
                format!(
                    "the agent speaks ACP version {}, this driver {ACP_VERSION}",
                    result.get("protocolVersion").unwrap_or(&Value::Null)
                ),
            ));
        }
        Ok(self.initialized.insert(result))
    }

    /// The agent's answer to `initialize`, once it gave one.
    pub fn initialize_result(&self) -> Option<&Value> {
        self.initialized.as_ref()
    }

    /// What the agent said about `mcpServers` entries, once initialized.
    pub fn mcp_support(&self) -> Option<AgentMcpSupport> {
        self.initialized
            .as_ref()
            .map(AgentMcpSupport::from_initialize)
    }

    /// The ways the agent offers to log in (`authMethods`), once
    /// initialized.
    pub fn auth_methods(&self) -> Vec<AuthMethod> {
        let methods = self
            .initialized
            .as_ref()
            .and_then(|init| init.get("authMethods"))
            .and_then(Value::as_array);
        methods
            .into_iter()
            .flatten()
            .filter_map(|method| {
                let text = |key: &str| method.get(key).and_then(Value::as_str).map(str::to_owned);
                Some(AuthMethod {
                    id: text("id")?,
                    name: text("name").unwrap_or_default(),
                    description: text("description"),
                })
            })
            .collect()
    }

    /// `authenticate` with the method `method_id` (one of
    /// [`auth_methods`](Agent::auth_methods)), for an agent that refuses
    /// sessions until logged in.
    ///
    /// # Errors
    /// As [`Agent::initialize`].
    pub fn authenticate(&mut self, method_id: &str) -> Result<(), AcpError> {
        self.call("authenticate", json!({"methodId": method_id}))
            .map(drop)
    }

    /// `session/new` in `cwd` with the `mcpServers` entry this agent can
    /// use for `tools` (chosen by
    /// [`ToolSession::acp_mcp_servers_for`] from its `initialize` answer);
    /// returns the session id.
    ///
    /// # Errors
    /// [`AcpError::Protocol`] before [`initialize`](Agent::initialize) or
    /// for an answer without a session id, [`AcpError::Entry`] when the
    /// entry cannot be made, and as [`Agent::initialize`].
    pub fn new_session(&mut self, cwd: &Path, tools: &ToolSession) -> Result<String, AcpError> {
        let init = self.initialized.as_ref().ok_or_else(|| {
            AcpError::protocol(
                "session/new",
                "call initialize first: the entry depends on its answer",
            )
        })?;
        let servers = tools.acp_mcp_servers_for(init).map_err(AcpError::Entry)?;
        self.new_session_with_servers(cwd, servers)
    }

    /// `session/new` in `cwd` with `mcp_servers` as given (for entries the
    /// application chose itself, such as
    /// [`ToolSession::acp_mcp_servers_using`]); returns the session id.
    ///
    /// # Errors
    /// As [`Agent::new_session`].
    pub fn new_session_with_servers(
        &mut self,
        cwd: &Path,
        mcp_servers: Value,
    ) -> Result<String, AcpError> {
        // ACP wants an absolute working directory.
        let cwd = std::path::absolute(cwd).map_err(|err| {
            AcpError::protocol("session/new", format!("cwd {}: {err}", cwd.display()))
        })?;
        let result = self.call(
            "session/new",
            json!({"cwd": cwd, "mcpServers": mcp_servers}),
        )?;
        result
            .get("sessionId")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| {
                AcpError::protocol(
                    "session/new",
                    format!("the answer has no sessionId: {result}"),
                )
            })
    }

    /// A prompt turn in session `session_id` with `text`; set it up and
    /// [`run`](Prompt::run) it.
    pub fn prompt<'a>(&'a mut self, session_id: &str, text: &str) -> Prompt<'a> {
        Prompt::new(self, session_id, text)
    }

    /// Sends request `method` and waits (up to the agent's timeout) for
    /// its result, answering what the agent asks meanwhile as an idle
    /// client does. For ACP methods the driver has no call of its own for
    /// (`session/set_mode`, `session/load`, …).
    ///
    /// # Errors
    /// As [`Agent::initialize`].
    pub fn call(&mut self, method: &str, params: Value) -> Result<Value, AcpError> {
        let id = self.pipes.next_id();
        self.pipes
            .request(id, method, params)
            .map_err(|silence| lost(method, silence, self.timeout))?;
        let deadline = Instant::now() + self.timeout;
        match self.wait(id, method, deadline, &mut Idle)? {
            Some(result) => Ok(result),
            None => Err(AcpError::Timeout {
                method: method.to_owned(),
                waited: self.timeout,
            }),
        }
    }

    /// Serves the agent's notifications and requests with `serve` until
    /// the response to request `id` arrives (`Some`) or `until` passes
    /// (`None`).
    fn wait(
        &mut self,
        id: u64,
        method: &str,
        until: Instant,
        serve: &mut dyn Serve,
    ) -> Result<Option<Value>, AcpError> {
        loop {
            let message = match self.pipes.recv(until) {
                Ok(message) => message,
                Err(Silence::Timeout) => return Ok(None),
                Err(closed) => return Err(lost(method, closed, Duration::ZERO)),
            };
            match Message::of(&message) {
                Message::Request {
                    id: request_id,
                    method: asked,
                    params,
                    ..
                } => {
                    let answer = serve.request(asked, params.unwrap_or(&Value::Null));
                    self.pipes.answer(request_id, answer);
                }
                Message::Notification {
                    method: asked,
                    params,
                } => serve.notification(asked, params.unwrap_or(&Value::Null)),
                Message::Result {
                    id: answered,
                    result,
                } if answered.as_u64() == Some(id) => {
                    return Ok(Some(result.clone()));
                }
                Message::Error {
                    id: Some(answered),
                    error,
                } if answered.as_u64() == Some(id) => {
                    return Err(match RpcError::read(error) {
                        Some(fault) => AcpError::Agent {
                            method: method.to_owned(),
                            code: fault.code,
                            message: fault.message,
                            data: fault.data,
                        },
                        None => AcpError::protocol(
                            method,
                            format!("the agent answered with an error object without an integer code and a message: {error}"),
                        ),
                    });
                }
                Message::Invalid(Invalid {
                    id: Some(answered),
                    error,
                }) if answered.as_u64() == Some(id) => {
                    return Err(AcpError::protocol(
                        method,
                        format!("the agent's answer is not JSON-RPC: {}", error.message),
                    ));
                }
                // The answer to a request given up on, or noise.
                _ => {}
            }
        }
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        self.pipes.close();
        lock(&self.group).end();
    }
}

impl std::fmt::Debug for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Agent")
            .field("id", &self.id())
            .field("initialized", &self.initialized.is_some())
            .finish_non_exhaustive()
    }
}

/// The error for a wait that ended without an answer.
fn lost(method: &str, silence: Silence, waited: Duration) -> AcpError {
    match silence {
        Silence::Timeout => AcpError::Timeout {
            method: method.to_owned(),
            waited,
        },
        Silence::Closed(reason) => AcpError::Closed {
            method: method.to_owned(),
            reason,
        },
        Silence::TooLarge { size, limit } => AcpError::protocol(
            method,
            format!(
                "the agent sent a message of {size} bytes, past the limit of {limit} bytes, so it was skipped unread; raise Agent::set_max_message_bytes if its messages are really that large"
            ),
        ),
    }
}

/// Who answers the agent while the driver waits.
trait Serve {
    /// A notification of the agent (`session/update`).
    fn notification(&mut self, method: &str, params: &Value);
    /// A request of the agent; its result, or a JSON-RPC error.
    fn request(&mut self, method: &str, params: &Value) -> Result<Value, RpcError>;
}

/// Outside a turn: notifications are let pass, a permission is refused
/// (nothing is being asked of the agent), and the rest is not offered.
struct Idle;

impl Serve for Idle {
    fn notification(&mut self, _method: &str, _params: &Value) {}

    fn request(&mut self, method: &str, params: &Value) -> Result<Value, RpcError> {
        if method == "session/request_permission" {
            let request = PermissionRequest::read(params);
            return Ok(PermissionChoice::reject(&request).to_result());
        }
        Err(not_offered(method))
    }
}

/// The error for a request the driver's capabilities did not offer.
fn not_offered(method: &str) -> RpcError {
    RpcError::new(
        METHOD_NOT_FOUND,
        format!("this client (toolhost's ACP driver) does not offer {method}"),
    )
}
