//! Another MCP server's tools as a layer of this host's surface: a
//! snapshot of what the server lists, and calls forwarded to it with
//! [`crate::client`] — over Streamable HTTP (`http.rs`: a pool of clients
//! and the watch of the server's standalone stream) or to a child process
//! over stdio (`stdio.rs`: one child, started again after it dies).
//!
//! The snapshot is the only thing the agent sees or reaches: `tools/list`
//! answers from it, and a call is forwarded only for a name in it. It is
//! refreshed on demand ([`McpServerLayer::refresh`]), at each
//! `notifications/tools/list_changed` the server sends (on its standalone
//! stream, which a thread of the layer keeps open with
//! [`Client::watch_tools_changed`] when an HTTP server issued an MCP
//! session; on its stdout for a stdio server, which wakes the refresh
//! thread), after a stdio server was started again, and on an interval by
//! the refresh thread, for HTTP servers of 2026-07-28 (whose list changes
//! come on `subscriptions/listen`, which the client does not speak) and for
//! changes made while the stream was being reopened. A refresh that finds
//! a different list tells every session serving the layer (through the
//! [`SessionLink`]s of `on_open`), exactly as a
//! [`ToolRegistry`](crate::ToolRegistry) does.

mod http;
mod stdio;

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Condvar, Mutex, RwLock, Weak};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::call::ask::InputRequest;
use crate::call::context::CallContext;
use crate::call::link::{Links, SessionLink};
use crate::call::surface::ToolSurface;
use crate::client::{
    CallOptions, CancelHandle, Client, ClientBuilder, ClientError, Refusal, ServerRequest,
    StdioServer, ToolInfo, ToolResult,
};
use crate::event::{Event, LOG_TARGET};
use crate::model::{Icon, LogLevel, Tool, ToolAnnotations, ToolOutcome};
use crate::sync::lock;

use http::Pool;
use stdio::Respawning;

/// How often a layer asks its server for the tool list, unless
/// [`McpServerBuilder::refresh_every`] says otherwise.
pub const DEFAULT_SERVER_REFRESH: Duration = Duration::from_secs(30);

/// The longest name every major model API accepts for a function.
const MAX_NAME: usize = 64;

/// How long the watch of the server's stream waits before opening it again.
const RETRY: Duration = Duration::from_secs(1);

/// Another MCP server — reached over Streamable HTTP
/// ([`McpServerLayer::builder`]) or started as a child process that speaks
/// MCP on its stdin and stdout ([`McpServerLayer::stdio`]) — whose tools
/// this host serves as its own: put it in a
/// [`LayeredSurface`](crate::LayeredSurface) beside the application's tools
/// (or open a session on it alone).
///
/// Its tools are listed under server-qualified names by default —
/// `<server>_<tool>`, so `github` and `create_issue` give
/// `github_create_issue` — or under their own names with
/// [`McpServerBuilder::unqualified`]. Every exposed name satisfies MCP's
/// tool-name rules and the function-name rules of the major model APIs
/// (`A-Za-z0-9_-`, at most 64); a tool whose name cannot be exposed that
/// way is left out and reported through the event hook.
///
/// A call forwards the arguments verbatim; relays the server's progress
/// reports and log messages to the agent ([`CallContext::progress`],
/// [`CallContext::log`], which applies the agent's own level); relays the agent's
/// cancellation to the server; relays the server's questions
/// (elicitation, sampling, roots) to the agent when the agent declared the
/// capability and speaks a stateful revision, and refuses them otherwise;
/// relays the server's withdrawal of such a question (its
/// `notifications/cancelled`) to the agent as the cancellation of the
/// relayed one, and the host's own abandonment of it (the agent's call
/// cancelled, its deadline passed) as well;
/// and passes the result through unchanged ([`ToolOutcome::relayed`]). A
/// server that fails or is gone gives the agent a tool error that says so,
/// and the event hook the detail; the session's other tools keep serving.
/// An HTTP server is reconnected at the next call; a stdio server that
/// died is started again at the next call or refresh (with a growing pause
/// when it keeps dying before it serves: see [`McpServerLayer::stdio`]).
///
/// ```
/// use serde_json::json;
/// use toolhost::client::Client;
/// use toolhost::{HostConfig, LayeredSurface, McpServerLayer, StaticSurface, Tool, ToolHost, ToolOutcome};
///
/// // Another MCP server — here a second toolhost host.
/// let remote_host = ToolHost::bind(HostConfig::default())?;
/// let remote = remote_host.open_session(StaticSurface::new().tool(
///     Tool::new("create_issue", "Files an issue."),
///     |_, _| ToolOutcome::json(json!({"number": 7})),
/// )?);
///
/// let github = McpServerLayer::builder(
///     "github",
///     Client::builder(&remote.url()).header("Authorization", &remote.authorization()),
/// )
/// .connect()?;
/// let surface = LayeredSurface::builder()
///     .layer("app", StaticSurface::new().tool(Tool::new("ping", "Pings."), |_, _| ToolOutcome::text("pong"))?)
///     .layer("github", github)
///     .build();
///
/// let host = ToolHost::bind(HostConfig::default())?;
/// let session = host.open_session(surface);
/// let mut client = session.client()?;
/// let names: Vec<String> = client.list_tools()?.into_iter().map(|t| t.name).collect();
/// assert_eq!(names, ["ping", "github_create_issue"]);
/// let result = client.call_tool("github_create_issue", json!({}))?;
/// assert_eq!(result.structured_content, Some(json!({"number": 7})));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct McpServerLayer {
    inner: Arc<Inner>,
}

/// How to reach a server and expose its tools; made by
/// [`McpServerLayer::builder`] or [`McpServerLayer::stdio`].
#[derive(Debug)]
pub struct McpServerBuilder {
    name: String,
    remote: Remote,
    qualified: bool,
    refresh: Option<Duration>,
}

/// Where the server is.
#[derive(Debug)]
enum Remote {
    Http(ClientBuilder),
    Stdio(StdioServer),
}

struct Inner {
    name: String,
    transport: Transport,
    qualified: bool,
    snapshot: RwLock<Snapshot>,
    links: Links,
    /// Wakes the refresh thread: to refresh now, or to stop.
    signal: Arc<Signal>,
    /// Ends the watch of an HTTP server's standalone stream.
    watching: CancelHandle,
    /// The names left out at the last refresh, and whether a session's
    /// hook has heard of them.
    skipped: Mutex<(Vec<String>, bool)>,
    /// Events of the time before the first session opened (a stdio
    /// server's startup lines on stderr), for that session's hook; `None`
    /// once it has them.
    early: Mutex<Option<Vec<Event>>>,
}

/// The most events kept for the first session; later ones go to the log.
const MAX_EARLY_EVENTS: usize = 64;

/// How calls reach the server.
enum Transport {
    Http(Pool),
    Stdio(Respawning),
}

/// The server's tools as last listed: each exposed tool with the name the
/// server knows it by.
#[derive(Default)]
struct Snapshot {
    tools: Vec<Tool>,
    remote: HashMap<String, (Tool, String)>,
    /// The definitions as listed, to tell whether a refresh changed them.
    definitions: Vec<Value>,
}

/// What the layer's threads wait on: set when the last handle is dropped
/// (stop), or when the tools should be listed again now (a stdio server's
/// list change, a restart).
#[derive(Default)]
struct Signal {
    flags: Mutex<Flags>,
    woken: Condvar,
}

#[derive(Default)]
struct Flags {
    stopped: bool,
    refresh: bool,
}

impl Signal {
    fn stop(&self) {
        lock(&self.flags).stopped = true;
        self.woken.notify_all();
    }

    fn want_refresh(&self) {
        lock(&self.flags).refresh = true;
        self.woken.notify_all();
    }

    /// Waits up to `delay`, cut short by a stop; `true` when stopped.
    fn pause(&self, delay: Duration) -> bool {
        let flags = lock(&self.flags);
        let (flags, _) = self
            .woken
            .wait_timeout_while(flags, delay, |flags| !flags.stopped)
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        flags.stopped
    }

    /// Waits until the next refresh is due — `interval` passed, or a
    /// refresh wanted — `false` when stopped instead.
    fn next_refresh(&self, interval: Option<Duration>) -> bool {
        let deadline = interval.map(|interval| Instant::now() + interval);
        let mut flags = lock(&self.flags);
        loop {
            if flags.stopped {
                return false;
            }
            if std::mem::take(&mut flags.refresh) {
                return true;
            }
            flags = match deadline {
                None => self
                    .woken
                    .wait(flags)
                    .unwrap_or_else(std::sync::PoisonError::into_inner),
                Some(deadline) => {
                    let left = deadline.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return true;
                    }
                    self.woken
                        .wait_timeout(flags, left)
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .0
                }
            };
        }
    }
}

impl McpServerLayer {
    /// A layer for the Streamable HTTP server `name` (the prefix of its
    /// tools' qualified names: see [`McpServerBuilder::connect`]), reached
    /// with `client` — its URL, credentials, era and timeouts.
    pub fn builder(name: impl Into<String>, client: ClientBuilder) -> McpServerBuilder {
        McpServerBuilder::new(name.into(), Remote::Http(client))
    }

    /// A layer for the stdio server `name`, started as `server` says (its
    /// command, arguments, environment, working directory and timeouts),
    /// when the layer connects.
    ///
    /// The layer hands each line the server writes to stderr to the event
    /// hook ([`Event::ServerStderr`]: the lines of its startup, written
    /// before any session opened, are kept for the first session's hook, up
    /// to 64), and follows its `notifications/tools/list_changed`; it sets
    /// [`StdioServer::on_stderr`] and [`StdioServer::on_tools_changed`] for
    /// that, replacing any set before. All calls share the one process;
    /// since nothing on a stdio wire says which call a question or a log
    /// message belongs to, the server's questions and log messages reach
    /// the agent only while exactly one call to that server is in flight
    /// (with several, a question is refused and a log message dropped,
    /// rather than handed to another agent's call; progress always reaches
    /// its own call). A
    /// server that dies fails the calls in flight with a tool error (the
    /// hook gets the detail, with the last line of its stderr), and the
    /// next call or refresh starts it again — at once if it had served,
    /// else after a pause that doubles with each failure in a row (1 s,
    /// 2 s, … 30 s), so a server that cannot start is never restarted in a
    /// tight loop. Dropping the last handle of the layer ends the server
    /// as [`StdioClient`](crate::client::StdioClient) does: stdin closed, a
    /// grace period, then the process group ended and reaped.
    ///
    /// ```no_run
    /// use toolhost::client::StdioServer;
    /// use toolhost::{HostConfig, LayeredSurface, McpServerLayer, StaticSurface, ToolHost};
    ///
    /// let everything = McpServerLayer::stdio(
    ///     "everything",
    ///     StdioServer::new("npx").args(["-y", "@modelcontextprotocol/server-everything"]),
    /// )
    /// .connect()?;
    /// let surface = LayeredSurface::builder()
    ///     .layer("app", StaticSurface::new())
    ///     .layer("everything", everything) // everything_echo, everything_add, …
    ///     .build();
    /// let host = ToolHost::bind(HostConfig::default())?;
    /// let session = host.open_session(surface);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn stdio(name: impl Into<String>, server: StdioServer) -> McpServerBuilder {
        McpServerBuilder::new(name.into(), Remote::Stdio(server))
    }

    /// The server's name, as given to [`builder`](McpServerLayer::builder)
    /// or [`stdio`](McpServerLayer::stdio).
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// Asks the server for its tools now and replaces the snapshot; when
    /// the list differs, every session serving the layer is told
    /// (`notifications/tools/list_changed`). `Ok(true)` when it changed.
    ///
    /// # Errors
    /// Whatever kept the server from answering `tools/list`; the snapshot
    /// is then kept as it was.
    pub fn refresh(&self) -> Result<bool, ClientError> {
        self.inner.refresh()
    }

    /// How many of the server's tools the layer exposes now.
    pub fn count(&self) -> usize {
        read(&self.inner.snapshot).tools.len()
    }

    /// The process id of a stdio server while it runs; `None` for an HTTP
    /// server, or while a stdio server is down.
    pub fn process_id(&self) -> Option<u32> {
        match &self.inner.transport {
            Transport::Stdio(child) => child.id(),
            Transport::Http(_) => None,
        }
    }
}

impl McpServerBuilder {
    fn new(name: String, remote: Remote) -> McpServerBuilder {
        McpServerBuilder {
            name,
            remote,
            qualified: true,
            refresh: Some(DEFAULT_SERVER_REFRESH),
        }
    }

    /// Exposes the server's tools under their own names instead of
    /// `<server>_<tool>`; a collision with another layer is then settled by
    /// the [`LayeredSurface`](crate::LayeredSurface)'s order.
    #[must_use]
    pub fn unqualified(mut self) -> McpServerBuilder {
        self.qualified = false;
        self
    }

    /// How often to ask the server for its tools ([`DEFAULT_SERVER_REFRESH`]
    /// unless set); `None` asks only on [`McpServerLayer::refresh`] and
    /// when the server reports a change.
    #[must_use]
    pub fn refresh_every(mut self, interval: Option<Duration>) -> McpServerBuilder {
        self.refresh = interval;
        self
    }

    /// Connects to the server (starts it, for stdio) and lists its tools.
    ///
    /// # Errors
    /// [`ClientError::InvalidConfig`] for a server name that breaks the
    /// rule a host's own name follows (1 to 32 of `A-Za-z0-9-_`, starting
    /// with a letter, no `__`, no trailing `_`: the prefix lands inside the
    /// `mcp__<host>__<server>_<tool>` names agents make, and a `__` in it
    /// would split them wrong); otherwise whatever kept the server from
    /// connecting or listing ([`ClientError::Spawn`] for a stdio command
    /// that cannot start).
    pub fn connect(self) -> Result<McpServerLayer, ClientError> {
        crate::acp::validate_server_name(&self.name).map_err(|err| ClientError::InvalidConfig {
            problem: err.to_string(),
        })?;
        // Declared so the server may ask; each question is put to the agent
        // only if the agent declared the same (see `ask_agent`).
        let asks = json!({"elicitation": {}, "sampling": {}, "roots": {}});
        let signal = Arc::new(Signal::default());
        // Every message is asked for; the agent's own threshold filters
        // them in `CallContext::log`.
        let inner = match self.remote {
            Remote::Http(builder) => {
                let builder = builder.capabilities(asks).log_level(LogLevel::Debug);
                let pool = Pool::new(builder.clone(), builder.connect()?);
                Arc::new(Inner::new(
                    self.name,
                    self.qualified,
                    Transport::Http(pool),
                    signal,
                ))
            }
            Remote::Stdio(server) => Arc::new_cyclic(|layer: &Weak<Inner>| {
                let (lines, changes) = (layer.clone(), Arc::clone(&signal));
                let server = server
                    .capabilities(asks)
                    .log_level(LogLevel::Debug)
                    .on_stderr(move |line| {
                        if let Some(layer) = lines.upgrade() {
                            layer.report_event(Event::ServerStderr {
                                server: layer.name.clone(),
                                line: line.to_owned(),
                            });
                        }
                    })
                    .on_tools_changed(move || changes.want_refresh());
                let transport = Transport::Stdio(Respawning::new(server));
                Inner::new(self.name, self.qualified, transport, signal)
            }),
        };
        inner.refresh()?;
        if let Transport::Http(pool) = &inner.transport {
            if pool.has_session() {
                let weak = Arc::downgrade(&inner);
                let (signal, cancel) = (Arc::clone(&inner.signal), inner.watching.clone());
                thread::Builder::new()
                    .name(format!("toolhost-watch-{}", inner.name))
                    .spawn(move || http::watch(&weak, &signal, &cancel))
                    .map_err(ClientError::Io)?;
            }
        }
        // A stdio server's changes come through the signal, so its thread
        // runs even with no interval.
        if self.refresh.is_some() || matches!(inner.transport, Transport::Stdio(_)) {
            let weak = Arc::downgrade(&inner);
            let signal = Arc::clone(&inner.signal);
            let interval = self.refresh;
            thread::Builder::new()
                .name(format!("toolhost-refresh-{}", inner.name))
                .spawn(move || keep_fresh(&weak, &signal, interval))
                .map_err(ClientError::Io)?;
        }
        Ok(McpServerLayer { inner })
    }
}

/// The refresh thread: lists the server's tools every `interval` (if any)
/// and whenever a refresh is wanted, until the layer is dropped.
fn keep_fresh(layer: &Weak<Inner>, signal: &Signal, interval: Option<Duration>) {
    while signal.next_refresh(interval) {
        let Some(layer) = layer.upgrade() else { return };
        layer.refresh_reporting("");
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.watching.cancel();
        self.signal.stop();
    }
}

impl Inner {
    fn new(name: String, qualified: bool, transport: Transport, signal: Arc<Signal>) -> Inner {
        Inner {
            name,
            transport,
            qualified,
            snapshot: RwLock::new(Snapshot::default()),
            links: Links::default(),
            signal,
            watching: CancelHandle::new(),
            skipped: Mutex::new((Vec::new(), false)),
            early: Mutex::new(Some(Vec::new())),
        }
    }

    /// The HTTP server's pool, for an HTTP layer.
    fn http(&self) -> Option<&Pool> {
        match &self.transport {
            Transport::Http(pool) => Some(pool),
            Transport::Stdio(_) => None,
        }
    }

    /// Refreshes, reporting a failure to the hook (`when` says on what
    /// occasion, e.g. "after a list change").
    fn refresh_reporting(&self, when: &str) {
        if let Err(err) = self.refresh() {
            let when = if when.is_empty() {
                String::new()
            } else {
                format!(" {when}")
            };
            self.report(format!(
                "MCP server {:?}: could not refresh its tools{when}: {err}",
                self.name
            ));
        }
    }

    /// Lists the server's tools.
    fn list(&self) -> Result<Vec<ToolInfo>, ClientError> {
        match &self.transport {
            Transport::Http(pool) => pool.with_client(Client::list_tools),
            Transport::Stdio(child) => child.run(crate::client::StdioClient::list_tools).0,
        }
    }

    /// Calls the server's tool `remote`.
    fn call_remote(
        &self,
        remote: &str,
        args: &Value,
        options: CallOptions<'_>,
    ) -> Result<ToolResult, ClientError> {
        match &self.transport {
            Transport::Http(pool) => {
                pool.with_client(|client| client.call_tool_with(remote, args.clone(), options))
            }
            Transport::Stdio(child) => {
                let (outcome, restarted) =
                    child.run(|client| client.call_tool_with(remote, args.clone(), options));
                if restarted {
                    // A new process may list other tools.
                    self.signal.want_refresh();
                }
                outcome
            }
        }
    }

    fn refresh(&self) -> Result<bool, ClientError> {
        let listed = self.list()?;
        let definitions: Vec<Value> = listed.iter().map(|t| t.definition.clone()).collect();
        if read(&self.snapshot).definitions == definitions {
            return Ok(false);
        }
        let mut snapshot = Snapshot {
            definitions,
            ..Snapshot::default()
        };
        let mut skipped = Vec::new();
        for info in listed {
            let exposed = if self.qualified {
                format!("{}_{}", self.name, info.name)
            } else {
                info.name.clone()
            };
            if !valid_name(&exposed)
                || exposed.len() > MAX_NAME
                || snapshot.remote.contains_key(&exposed)
            {
                skipped.push(info.name);
                continue;
            }
            let tool = exposed_tool(&exposed, &info);
            snapshot.tools.push(tool.clone());
            snapshot.remote.insert(exposed, (tool, info.name));
        }
        *self
            .snapshot
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = snapshot;
        *lock(&self.skipped) = (skipped, false);
        self.report_skipped();
        self.links.tools_changed();
        Ok(true)
    }

    /// Tells a session's hook which of the server's tools were left out,
    /// once per refresh that changed the list.
    fn report_skipped(&self) {
        let mut skipped = lock(&self.skipped);
        if skipped.1 || skipped.0.is_empty() {
            return;
        }
        let Some(link) = self.links.first_open() else {
            return;
        };
        skipped.1 = true;
        link.report(Event::SurfaceFault {
            message: format!(
                "MCP server {:?}: tools left out because their names cannot be exposed as A-Za-z0-9_- of at most {MAX_NAME} characters (or repeat): {}",
                self.name,
                skipped.0.join(", ")
            ),
        });
    }

    /// Reports `message` as a [`Event::SurfaceFault`] (see
    /// [`Inner::report_event`]).
    fn report(&self, message: String) {
        self.report_event(Event::SurfaceFault { message });
    }

    /// Reports `event` to a session's hook; before the first session
    /// opens, keeps it for that session (up to a bound), and once every
    /// session has closed, logs it at its level.
    fn report_event(&self, event: Event) {
        if let Some(link) = self.links.first_open() {
            return link.report(event);
        }
        let mut early = lock(&self.early);
        match early.as_mut() {
            Some(kept) if kept.len() < MAX_EARLY_EVENTS => kept.push(event),
            _ => log::log!(target: LOG_TARGET, event.level(), "{event}"),
        }
    }

    fn forward(&self, remote: &str, args: &Value, ctx: &CallContext) -> ToolOutcome {
        let cancel = CancelHandle::new();
        // The host's cancellation wakes the client's call, which blocks on
        // its socket (a handle cancelled after the call ended touches
        // nothing: the call has let go of its socket).
        let canceller = cancel.clone();
        ctx.cancel.on_cancel(Box::new(move || canceller.cancel()));
        let mut options = CallOptions::new()
            .cancel_with(&cancel)
            .on_progress(|p| ctx.progress(p.progress, p.total, p.message.as_deref()))
            .on_log(|message| match &message.logger {
                Some(logger) => ctx.log_as(message.level, logger, message.data.clone()),
                None => ctx.log(message.level, message.data.clone()),
            })
            // Beside the stream, so that the server's withdrawal of a
            // question is seen while the agent is still being asked.
            .on_request_beside_stream(|request| ask_agent(ctx, request));
        if let Some(deadline) = ctx.deadline() {
            options = options.timeout(deadline.saturating_duration_since(Instant::now()));
        }
        match self.call_remote(remote, args, options) {
            Ok(result) => ToolOutcome::relayed(result.raw),
            Err(ClientError::Cancelled) => {
                ToolOutcome::declined("The call was cancelled; the server was told to stop.")
            }
            // The standard JSON-RPC errors are the server's verdict on the
            // call itself (invalid params, an unknown tool): the model may
            // correct the call. Other codes say the server cannot serve.
            Err(ClientError::Rpc { code, message, .. }) if (-32700..=-32600).contains(&code) => {
                ToolOutcome::declined(format!(
                    "The MCP server {:?} refused the call (error {code}): {message}",
                    self.name
                ))
            }
            // In 2026-07-28 the server's question ends the call when it
            // cannot be answered: the agent could not be asked.
            Err(ClientError::Unanswered {
                method,
                problem,
                cause: None,
            }) => ToolOutcome::declined(format!(
                "The MCP server {:?} needed an answer to {method} from the agent, which could not be asked: {problem}",
                self.name
            )),
            Err(err) => {
                self.report(format!(
                    "MCP server {:?}: tools/call of {remote:?} failed: {err}",
                    self.name
                ));
                ToolOutcome::declined(format!(
                    "The MCP server {:?} that provides this tool is unavailable or failed, so the call did not complete. The other tools still work; try this one again later.",
                    self.name
                ))
            }
        }
    }
}

/// Puts the server's question to the agent when the agent can answer it,
/// until the server withdraws it; refuses it otherwise.
fn ask_agent(ctx: &CallContext, request: &ServerRequest) -> Result<Value, Refusal> {
    if ctx.revision().is_stateless() {
        // A 2026-07-28 agent answers by calling again, which would forward
        // the call to the server a second time.
        return Err(Refusal::new(
            "the agent speaks 2026-07-28, whose answers would repeat the call; it is not asked",
        ));
    }
    let Some(question) = InputRequest::relayed(&request.method, request.params.clone()) else {
        return Err(Refusal::new(format!(
            "{} is not relayed to the agent",
            request.method
        )));
    };
    // The server may withdraw its question while the agent thinks: the
    // wait then ends, the agent is told, and the refusal is not sent.
    ctx.ask_relayed(question, &|| request.withdrawn())
        .map_err(|err| Refusal::new(err.to_string()))
}

/// The server's tool as this host lists it: the exposed name, with the
/// server's description, title, schemas, annotations, icons and `_meta`
/// (each sent on to the agent where its revision has them).
fn exposed_tool(exposed: &str, info: &ToolInfo) -> Tool {
    let mut tool = Tool::new(exposed, info.description.clone().unwrap_or_default())
        .input_schema(info.input_schema().clone());
    if let Some(title) = &info.title {
        tool = tool.title(title.clone());
    }
    if let Some(schema) = info.output_schema() {
        tool = tool.output_schema(schema.clone());
    }
    if let Some(annotations) = info.definition.get("annotations").filter(|a| a.is_object()) {
        tool = tool.annotations(ToolAnnotations::from_json(annotations));
    }
    let icons = info.definition.get("icons").and_then(Value::as_array);
    for icon in icons.into_iter().flatten().filter_map(Icon::from_json) {
        tool = tool.icon(icon);
    }
    if let Some(Value::Object(meta)) = info.definition.get("_meta") {
        tool = tool.meta(meta.clone());
    }
    tool
}

/// Letters, digits, `_` and `-`: what every major model API accepts in a
/// function name, and a subset of MCP's tool-name characters.
fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

fn read(snapshot: &RwLock<Snapshot>) -> std::sync::RwLockReadGuard<'_, Snapshot> {
    snapshot
        .read()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl ToolSurface for McpServerLayer {
    fn list_tools(&self) -> Vec<Tool> {
        read(&self.inner.snapshot).tools.clone()
    }

    fn find_tool(&self, name: &str) -> Option<Tool> {
        read(&self.inner.snapshot)
            .remote
            .get(name)
            .map(|(tool, _)| tool.clone())
    }

    fn call(&self, name: &str, args: &Value, ctx: &CallContext) -> ToolOutcome {
        let remote = read(&self.inner.snapshot)
            .remote
            .get(name)
            .map(|(_, remote)| remote.clone());
        match remote {
            Some(remote) => self.inner.forward(&remote, args, ctx),
            None => ToolOutcome::declined(format!(
                "Unknown tool: {name:?} is not among the tools the MCP server {:?} lists now.",
                self.inner.name
            ))
            .with_code(json!("unknown_tool")),
        }
    }

    fn on_open(&self, link: SessionLink) {
        // Added first, so that nothing reported meanwhile is logged.
        self.inner.links.add(link.clone());
        let early = lock(&self.inner.early).take();
        for event in early.into_iter().flatten() {
            link.report(event);
        }
        self.inner.report_skipped();
    }
}

impl fmt::Debug for McpServerLayer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpServerLayer")
            .field("name", &self.inner.name)
            .field("qualified", &self.inner.qualified)
            .field("tools", &self.count())
            .field("sessions", &self.inner.links.len())
            .finish()
    }
}
