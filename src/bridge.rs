//! Another MCP server's tools as a layer of this host's surface: a
//! snapshot of what the server lists, and calls forwarded to it over
//! Streamable HTTP with [`crate::client`].
//!
//! The snapshot is the only thing the agent sees or reaches: `tools/list`
//! answers from it, and a call is forwarded only for a name in it. It is
//! refreshed on demand ([`McpServerLayer::refresh`]), at each
//! `notifications/tools/list_changed` the server sends on its standalone
//! stream (a thread of the layer keeps that `GET` open with
//! [`Client::watch_tools_changed`], when the server issued an MCP session),
//! and on an interval by another thread, for servers of 2026-07-28 (whose
//! list changes come on `subscriptions/listen`, which the client does not
//! speak) and for changes made while the stream was being reopened. A
//! refresh that finds a different list tells every session serving the
//! layer (through the [`SessionLink`]s of `on_open`), exactly as a
//! [`ToolRegistry`](crate::ToolRegistry) does.
//!
//! Calls take a connected client from a small pool (each [`Client`] does
//! one request at a time), or connect a new one, so calls run in parallel
//! and a server that went away is reconnected on the next call. A client
//! that failed is dropped, never pooled again.

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
    CallOptions, CancelHandle, Client, ClientBuilder, ClientError, Refusal, ServerRequest, ToolInfo,
};
use crate::event::{Event, LOG_TARGET};
use crate::model::{LogLevel, Tool, ToolOutcome};
use crate::sync::lock;

/// How often a layer asks its server for the tool list, unless
/// [`McpServerBuilder::refresh_every`] says otherwise.
pub const DEFAULT_SERVER_REFRESH: Duration = Duration::from_secs(30);

/// The longest name every major model API accepts for a function.
const MAX_NAME: usize = 64;

/// How long the watch of the server's stream waits before opening it again.
const WATCH_RETRY: Duration = Duration::from_secs(1);

/// The most idle clients a layer keeps connected.
const MAX_IDLE: usize = 8;

/// Another MCP server, reached over Streamable HTTP, whose tools this
/// host serves as its own: put it in a [`LayeredSurface`](crate::LayeredSurface)
/// beside the application's tools (or open a session on it alone).
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
/// and passes the result through unchanged ([`ToolOutcome::relayed`]). A
/// server that fails or is gone gives the agent a tool error that says so,
/// and the event hook the detail; the session's other tools keep serving.
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
/// [`McpServerLayer::builder`].
#[derive(Debug)]
pub struct McpServerBuilder {
    name: String,
    client: ClientBuilder,
    qualified: bool,
    refresh: Option<Duration>,
}

struct Inner {
    name: String,
    client: ClientBuilder,
    qualified: bool,
    snapshot: RwLock<Snapshot>,
    idle: Mutex<Vec<Client>>,
    links: Links,
    /// Set when the last handle is dropped; wakes the refresh thread.
    stop: Arc<(Mutex<bool>, Condvar)>,
    /// Ends the watch of the server's standalone stream.
    watching: CancelHandle,
    /// The names left out at the last refresh, and whether a session's
    /// hook has heard of them.
    skipped: Mutex<(Vec<String>, bool)>,
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

impl McpServerLayer {
    /// A layer for the server `name` (the prefix of its tools' qualified
    /// names: letters, digits, `_` and `-`), reached with `client` — its
    /// URL, credentials, era and timeouts.
    pub fn builder(name: impl Into<String>, client: ClientBuilder) -> McpServerBuilder {
        McpServerBuilder {
            name: name.into(),
            client,
            qualified: true,
            refresh: Some(DEFAULT_SERVER_REFRESH),
        }
    }

    /// The server's name, as given to [`builder`](McpServerLayer::builder).
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
}

impl McpServerBuilder {
    /// Exposes the server's tools under their own names instead of
    /// `<server>_<tool>`; a collision with another layer is then settled by
    /// the [`LayeredSurface`](crate::LayeredSurface)'s order.
    #[must_use]
    pub fn unqualified(mut self) -> McpServerBuilder {
        self.qualified = false;
        self
    }

    /// How often to ask the server for its tools ([`DEFAULT_SERVER_REFRESH`]
    /// unless set); `None` asks only on [`McpServerLayer::refresh`].
    #[must_use]
    pub fn refresh_every(mut self, interval: Option<Duration>) -> McpServerBuilder {
        self.refresh = interval;
        self
    }

    /// Connects to the server and lists its tools.
    ///
    /// # Errors
    /// [`ClientError::Malformed`] for a server name that is empty, longer
    /// than 63 characters or has a character other than `A-Za-z0-9_-`;
    /// otherwise whatever kept the server from connecting or listing.
    pub fn connect(self) -> Result<McpServerLayer, ClientError> {
        if !valid_name(&self.name) || self.name.len() >= MAX_NAME {
            return Err(ClientError::malformed(format!(
                "the server name {:?} must be 1 to 63 of A-Za-z0-9_- so that its tools' qualified names are valid",
                self.name
            )));
        }
        // Declared so the server may ask; each question is put to the agent
        // only if the agent declared the same (see `ask_agent`).
        let builder = self
            .client
            .capabilities(json!({"elicitation": {}, "sampling": {}, "roots": {}}))
            // Every message is asked for; the agent's own threshold filters
            // them in `CallContext::log`.
            .log_level(LogLevel::Debug);
        let client = builder.clone().connect()?;
        let inner = Arc::new(Inner {
            name: self.name,
            client: builder,
            qualified: self.qualified,
            snapshot: RwLock::new(Snapshot::default()),
            idle: Mutex::new(vec![client]),
            links: Links::default(),
            stop: Arc::new((Mutex::new(false), Condvar::new())),
            watching: CancelHandle::new(),
            skipped: Mutex::new((Vec::new(), false)),
        });
        inner.refresh()?;
        if matches!(
            lock(&inner.idle).first(),
            Some(client) if client.session_id().is_some()
        ) {
            let weak = Arc::downgrade(&inner);
            let (stop, cancel) = (Arc::clone(&inner.stop), inner.watching.clone());
            thread::Builder::new()
                .name(format!("toolhost-watch-{}", inner.name))
                .spawn(move || watch(&weak, &stop, &cancel))
                .map_err(ClientError::Io)?;
        }
        if let Some(interval) = self.refresh {
            let weak = Arc::downgrade(&inner);
            let stop = Arc::clone(&inner.stop);
            thread::Builder::new()
                .name(format!("toolhost-refresh-{}", inner.name))
                .spawn(move || keep_fresh(&weak, &stop, interval))
                .map_err(ClientError::Io)?;
        }
        Ok(McpServerLayer { inner })
    }
}

/// The refresh thread: lists the server's tools every `interval` until the
/// layer is dropped.
fn keep_fresh(layer: &Weak<Inner>, stop: &(Mutex<bool>, Condvar), interval: Duration) {
    let (stopped, woken) = stop;
    let mut guard = lock(stopped);
    loop {
        let deadline = Instant::now() + interval;
        while !*guard {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            guard = woken
                .wait_timeout(guard, left)
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .0;
        }
        if *guard {
            return;
        }
        drop(guard);
        let Some(layer) = layer.upgrade() else { return };
        if let Err(err) = layer.refresh() {
            layer.report(format!(
                "MCP server {:?}: could not refresh its tools: {err}",
                layer.name
            ));
        }
        drop(layer);
        guard = lock(stopped);
    }
}

/// The watch thread: reads the server's standalone stream on a client of
/// its own and refreshes at each `notifications/tools/list_changed`, opening
/// the stream again (with a new client) when it ends, until the layer is
/// dropped or the server turns out to have no stream.
fn watch(layer: &Weak<Inner>, stop: &(Mutex<bool>, Condvar), cancel: &CancelHandle) {
    let refresh = || {
        if let Some(layer) = layer.upgrade() {
            if let Err(err) = layer.refresh() {
                layer.report(format!(
                    "MCP server {:?}: could not refresh its tools after a list change: {err}",
                    layer.name
                ));
            }
        }
    };
    loop {
        let Some(builder) = layer.upgrade().map(|l| l.client.clone()) else {
            return;
        };
        if let Ok(client) = builder.connect() {
            // What changed while no stream was open.
            refresh();
            match client.watch_tools_changed(cancel, refresh) {
                Err(ClientError::Cancelled | ClientError::NotInEra { .. }) => return,
                Err(ClientError::Http { status: 405, .. }) => return,
                _ => {}
            }
        }
        // A pause before trying again, cut short by the layer's drop.
        let (stopped, woken) = stop;
        let guard = lock(stopped);
        let (guard, _) = woken
            .wait_timeout_while(guard, WATCH_RETRY, |stopped| !*stopped)
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if *guard {
            return;
        }
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.watching.cancel();
        let (stopped, woken) = &*self.stop;
        *lock(stopped) = true;
        woken.notify_all();
    }
}

impl Inner {
    fn refresh(&self) -> Result<bool, ClientError> {
        let listed = self.with_client(Client::list_tools)?;
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

    /// Reports `message` to a session's hook, or to the log when no session
    /// is open.
    fn report(&self, message: String) {
        match self.links.first_open() {
            Some(link) => link.report(Event::SurfaceFault { message }),
            None => log::warn!(target: LOG_TARGET, "{message}"),
        }
    }

    /// Runs `work` with an idle client (or a new one) and pools it again
    /// unless the work failed.
    fn with_client<T>(
        &self,
        work: impl FnOnce(&mut Client) -> Result<T, ClientError>,
    ) -> Result<T, ClientError> {
        let pooled = lock(&self.idle).pop();
        let mut client = match pooled {
            Some(client) => client,
            None => self.client.clone().connect()?,
        };
        let outcome = work(&mut client);
        if outcome.is_ok() {
            let mut idle = lock(&self.idle);
            if idle.len() < MAX_IDLE {
                idle.push(client);
            }
        }
        outcome
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
            .on_log(|message| ctx.log(message.level, message.data.clone()))
            .on_request(|request| ask_agent(ctx, request));
        if let Some(deadline) = ctx.deadline() {
            options = options.timeout(deadline.saturating_duration_since(Instant::now()));
        }
        match self.with_client(|client| client.call_tool_with(remote, args.clone(), options)) {
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

/// Puts the server's question to the agent when the agent can answer it;
/// refuses it otherwise.
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
    match ctx.ask(vec![question]) {
        Ok(mut answers) if !answers.is_empty() => Ok(answers.remove(0)),
        Ok(_) => Err(Refusal::new("the agent gave no answer")),
        Err(err) => Err(Refusal::new(err.to_string())),
    }
}

/// The server's tool as this host lists it: the exposed name, with the
/// server's description, title, schemas and `_meta`.
fn exposed_tool(exposed: &str, info: &ToolInfo) -> Tool {
    let mut tool = Tool::new(exposed, info.description.clone().unwrap_or_default())
        .input_schema(info.input_schema().clone());
    if let Some(title) = &info.title {
        tool = tool.title(title.clone());
    }
    if let Some(schema) = info.output_schema() {
        tool = tool.output_schema(schema.clone());
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
        self.inner.links.add(link);
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
