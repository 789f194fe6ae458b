//! Another MCP server's tools as a layer of this host's surface: a
//! snapshot of what the server lists, and calls forwarded to it with
//! [`crate::client`] — over Streamable HTTP (`http.rs`: a pool of clients
//! and the watch of the server's standalone stream) or to a child process
//! over stdio (`stdio.rs`: one child, started again after it dies), both
//! used through [`McpClient`]. The server's tools are the [`Tool`]s the
//! client read, served under their exposed names, and its results the
//! [`ToolResult`]s the client read, passed on as they came
//! ([`ToolOutcome::from`]): nothing is converted on the way.
//!
//! The snapshot is the only thing the agent sees or reaches: `tools/list`
//! answers from it, and a call is forwarded only for a name in it. It is
//! refreshed on demand ([`McpServerLayer::refresh`]), at each
//! `notifications/tools/list_changed` the server sends (on its standalone
//! stream, which a thread of the layer keeps open with
//! [`Client::watch_tools_changed`](crate::client::Client::watch_tools_changed) when an HTTP server issued an MCP
//! session, and which each pooled client holds too, so that a `ping` a tool
//! sends about no call is answered; on a call's stream; on its stdout for
//! a stdio server; each wakes the refresh thread), after the server was
//! started again, and on an interval by the refresh thread, for HTTP
//! servers of 2026-07-28 (whose list changes come on
//! `subscriptions/listen`, which the client does not speak) and for
//! changes made while the stream was being reopened. A refresh that finds
//! a different list tells every session serving the layer (through the
//! [`SessionLink`]s of `on_open`), exactly as a
//! [`ToolRegistry`](crate::ToolRegistry) does.
//!
//! A gateway fronts servers its author did not write, so no server is on
//! the host's critical path (`supervise.rs`, which tells the whole story
//! of a layer's life and alone changes its state): a layer connects in the
//! background ([`McpServerBuilder::start`]) and its tools join when the
//! server answers. A server found gone is started (connected) again at
//! once, its tools listed for at most 1 s meanwhile; when it is not
//! back by then they leave, and come back when it is, after pauses that
//! double with each failure in a row. A layer whose settings can never
//! work stops at its first attempt. Every change is a [`ServerStatus`]
//! event. Its calls wait and
//! run in a [`CallLine`] of their own, never in the host's call slots
//! (`model/call_line.rs` says why), each with a deadline. What the server sends
//! is read only up to [`McpServerBuilder::max_message_bytes`] (over HTTP
//! the client stops reading there).
//!
//! The host's own handlers get no such cap (no `max_result_bytes` on the
//! host), on purpose: their result is the application's own, already in
//! its memory when the host gets it, and the host writes it out without
//! copying it again, so a cap would save nothing and only hide a bug the
//! application can fix where it builds the result (paging, a filter). A
//! server behind the gateway is another matter: its bytes cost the
//! application memory before anyone knows how many will come, which is
//! what the relay's cap bounds.

mod builder;
mod chatter;
mod forward;
mod http;
mod signal;
mod snapshot;
mod stdio;
mod supervise;

use std::fmt;
use std::sync::{Arc, Mutex, RwLock, Weak};
use std::thread;
use std::time::Duration;

use serde_json::{json, Value};

use crate::call::context::CallContext;
use crate::call::session_link::{Links, SessionLink};
use crate::call::surface::sealed::Token;
use crate::call::surface::ToolSurface;
use crate::client::{
    CallOptions, CancelHandle, ClientBuilder, ClientError, McpClient, StdioServer, ToolResult,
};
use crate::event::{Event, ServerStatus, LOG_TARGET};
use crate::model::CallLine;
use crate::model::{Tool, ToolOutcome};
use crate::sync::lock;

use builder::Settings;
pub use builder::DEFAULT_MAX_SERVER_MESSAGE_BYTES;
#[cfg(test)]
pub(crate) use builder::{
    DEFAULT_RECONNECT_FIRST, DEFAULT_RECONNECT_MAX, DEFAULT_SERVER_CALLS,
    DEFAULT_SERVER_CALL_TIMEOUT, DEFAULT_SERVER_QUEUE,
};
use http::Pool;
use signal::Signal;
use snapshot::{read, Snapshot, MAX_NAME};
use stdio::Respawning;
use supervise::Backoff;
#[cfg(test)]
pub(crate) use supervise::RESTART_GRACE;

/// The default of [`McpServerBuilder::refresh_every`].
pub(crate) const DEFAULT_SERVER_REFRESH: Duration = Duration::from_secs(30);

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
///
/// Start a layer with [`McpServerBuilder::start`]: it connects in the
/// background, and its tools join the list once the server answers (see
/// [`McpServerLayer::status`]); the application's own tools are served
/// meanwhile. A server found gone is started (or connected) again at
/// once, and its tools stay listed for at most 1 s meanwhile; if it
/// is not back by then, they leave the list until it is
/// ([`ServerStatus`] tells each step). Calls to the server are bounded apart from
/// the host's call slots ([`McpServerBuilder::max_concurrent_calls`],
/// [`McpServerBuilder::call_timeout`]), so a hung server costs only its
/// own calls their deadline.
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
/// .start()?; // returns at once; the server joins when it answers
/// let surface = LayeredSurface::builder()
///     .layer("app", StaticSurface::new().tool(Tool::new("ping", "Pings."), |_, _| ToolOutcome::text("pong"))?)
///     .layer("github", github.clone())
///     .build();
///
/// let host = ToolHost::bind(HostConfig::default())?;
/// let session = host.open_session(surface);
/// let mut client = session.client()?;
/// # // Here the server's tools are awaited, for the assertion below.
/// while github.count() == 0 {
///     std::thread::sleep(std::time::Duration::from_millis(5));
/// }
/// let names: Vec<String> = client.list_tools()?.iter().map(|t| t.name().to_owned()).collect();
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
/// [`McpServerLayer::builder`] or [`McpServerLayer::stdio`]. Its `Debug`
/// shows no URL, header or environment: they may hold credentials.
pub struct McpServerBuilder {
    name: String,
    remote: Remote,
    qualified: bool,
    refresh_every: Option<Duration>,
    max_concurrent_calls: usize,
    max_queued_calls: usize,
    call_timeout: Duration,
    max_message_bytes: usize,
    reconnect_backoff: Backoff,
}

/// Where the server is.
enum Remote {
    Http(ClientBuilder),
    Stdio(StdioServer),
}

struct Inner {
    name: String,
    transport: Transport,
    qualified: bool,
    /// The line every call to the server waits in, apart from the host's
    /// slots.
    line: CallLine,
    reconnect_backoff: Backoff,
    /// Where the layer stands, and the last error it met.
    status: Mutex<(ServerStatus, Option<String>)>,
    /// Whether the watch of the standalone stream has been started.
    watch_started: std::sync::atomic::AtomicBool,
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
    /// The rate at which a stdio server's stderr lines and log messages
    /// are reported.
    chatter: chatter::Chatter,
}

/// The most events kept for the first session; later ones go to the log.
const MAX_EARLY_EVENTS: usize = 64;

/// How calls reach the server.
enum Transport {
    Http(Pool),
    Stdio(Respawning),
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
    /// to 64), and each log message that belongs to no call
    /// ([`Event::ServerLog`], see below) — together at most 50 a second,
    /// the rest counted in one [`Event::ServerOutputSuppressed`] when
    /// their second ends — and follows its
    /// `notifications/tools/list_changed`; it sets
    /// [`StdioServer::on_stderr`], [`StdioServer::on_log`] and
    /// [`StdioServer::on_tools_changed`] for that, replacing any set before. All calls share the one process;
    /// since nothing on a stdio wire says which call a question or a log
    /// message belongs to, the server's questions and log messages reach
    /// the agent only while exactly one call to that server is in flight
    /// (with none or several, a question is refused and a log message goes
    /// to the hook, rather than to another agent's call; progress always reaches
    /// its own call). A
    /// server that dies fails the calls in flight with a tool error (the
    /// hook gets the detail, with the last line of its stderr); the layer
    /// sees it at once when a call did, else within a quarter of a second,
    /// and starts it again at once ([`ServerStatus::Gone`]): its tools stay
    /// listed for at most 1 s meanwhile, and a call that comes
    /// meanwhile waits for the new process. When it is not back by then,
    /// its tools leave until it is; when it cannot start, it
    /// is tried again after a pause that doubles with each failure in a
    /// row (1 s, 2 s, … 30 s by default: see
    /// [`McpServerBuilder::reconnect_backoff`]), so a server that cannot
    /// start is never restarted in a tight loop. Dropping the last handle of the layer ends the server
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
    /// .start()?; // started in the background; its tools join when it answers
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

    /// Where the layer stands: connecting, ready with its tool count, gone
    /// and being started again (its tools still listed), failed (with the
    /// reason and the pause before the next attempt), reconnecting, or
    /// misconfigured (no attempt will follow). Each change is also an
    /// [`Event::ServerStatus`], in the same order.
    pub fn status(&self) -> ServerStatus {
        lock(&self.inner.status).0.clone()
    }

    /// The last error that kept the layer from its server or its tools —
    /// the reason of the last [`ServerStatus::Gone`], `Failed` or
    /// `Misconfigured`, or of a refresh the server answered wrong — kept
    /// also once it is ready again; `None` when it never failed.
    pub fn last_error(&self) -> Option<String> {
        lock(&self.inner.status).1.clone()
    }

    /// The line the layer's calls wait in: their bound, apart from the
    /// host's slots, and their deadline.
    pub fn call_line(&self) -> &CallLine {
        &self.inner.line
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

impl Drop for Inner {
    fn drop(&mut self) {
        self.watching.cancel();
        self.signal.stop();
    }
}

impl Inner {
    fn new(settings: Settings, transport: Transport, signal: Arc<Signal>) -> Inner {
        Inner {
            name: settings.name,
            transport,
            qualified: settings.qualified,
            line: settings.line,
            reconnect_backoff: settings.reconnect_backoff,
            status: Mutex::new((ServerStatus::Connecting, None)),
            watch_started: std::sync::atomic::AtomicBool::new(false),
            snapshot: RwLock::new(Snapshot::default()),
            links: Links::default(),
            signal,
            watching: CancelHandle::new(),
            skipped: Mutex::new((Vec::new(), false)),
            early: Mutex::new(Some(Vec::new())),
            chatter: chatter::Chatter::default(),
        }
    }

    /// The HTTP server's pool, for an HTTP layer.
    fn http(&self) -> Option<&Pool> {
        match &self.transport {
            Transport::Http(pool) => Some(pool),
            Transport::Stdio(_) => None,
        }
    }

    /// Connects and lists the tools, which then join.
    fn establish(&self, me: &Weak<Inner>) -> Result<(), ClientError> {
        let listed = self.reach()?;
        self.join(listed, me)
    }

    /// Reaches the server — an HTTP server: a first client in the pool; a
    /// stdio server: its child, started unless it runs — and lists its
    /// tools, leaving the snapshot as it is.
    fn reach(&self) -> Result<Vec<Tool>, ClientError> {
        match &self.transport {
            Transport::Http(pool) => pool.fill()?,
            Transport::Stdio(child) => child.start()?,
        }
        self.list()
    }

    /// The server answered with `listed`: its tools join, the watch of an
    /// HTTP server's standalone stream starts, and the layer is ready.
    fn join(&self, listed: Vec<Tool>, me: &Weak<Inner>) -> Result<(), ClientError> {
        self.apply(listed);
        if let Transport::Http(pool) = &self.transport {
            let first = !self
                .watch_started
                .swap(true, std::sync::atomic::Ordering::SeqCst);
            if first && pool.has_session() {
                let weak = me.clone();
                let (signal, cancel) = (Arc::clone(&self.signal), self.watching.clone());
                thread::Builder::new()
                    .name(format!("toolhost-watch-{}", self.name))
                    .spawn(move || http::watch(&weak, &signal, &cancel))
                    .map_err(ClientError::Io)?;
            }
        }
        self.set_status(ServerStatus::Ready {
            tools: read(&self.snapshot).tools.len(),
        });
        Ok(())
    }

    /// The server's tools leave the list, and every session serving the
    /// layer is told.
    fn withdraw(&self) {
        let had = {
            let mut snapshot = self
                .snapshot
                .write()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            std::mem::take(&mut *snapshot).tools.len()
        };
        if had > 0 {
            self.links.tools_changed();
        }
    }

    /// Lets go of the connections to a server found gone: an HTTP pool's
    /// idle clients belong to the sessions of the server that went away.
    /// (A stdio child gone is replaced by the next start.)
    fn forget_connections(&self) {
        if let Transport::Http(pool) = &self.transport {
            pool.clear();
        }
    }

    /// Why a stdio server's child is gone, when it is.
    fn child_gone(&self) -> Option<String> {
        match &self.transport {
            Transport::Stdio(child) => child.gone(),
            Transport::Http(_) => None,
        }
    }

    /// Records and reports a new state (a repeated one is not reported),
    /// and its reason as the last error.
    fn set_status(&self, status: ServerStatus) {
        {
            let mut current = lock(&self.status);
            if current.0 == status {
                return;
            }
            if let ServerStatus::Gone { reason }
            | ServerStatus::Failed { reason, .. }
            | ServerStatus::Misconfigured { reason } = &status
            {
                current.1 = Some(reason.clone());
            }
            current.0 = status.clone();
        }
        self.report_event(Event::ServerStatus {
            server: self.name.clone(),
            status,
        });
    }

    /// Records a fault that is no change of state (a refresh the server
    /// answered wrong) as the last error, and reports it to the hook.
    fn note(&self, message: String) {
        lock(&self.status).1 = Some(message.clone());
        self.report(message);
    }

    /// Refreshes, noting a failure (`when` says on what occasion, e.g.
    /// "after a list change").
    fn refresh_reporting(&self, when: &str) {
        if let Err(err) = self.refresh() {
            self.note(format!(
                "MCP server {:?}: could not refresh its tools {when}: {}",
                self.name,
                supervise::describe(&err)
            ));
        }
    }

    /// Runs `work` with a client of the server: one of the HTTP pool, or
    /// the stdio child's (waiting for a restart under way, as long as the
    /// tools stay listed for one).
    fn with_client<T>(
        &self,
        work: impl FnOnce(&mut dyn McpClient) -> Result<T, ClientError>,
    ) -> Result<T, ClientError> {
        match &self.transport {
            Transport::Http(pool) => pool.with_client(|client| work(client)),
            Transport::Stdio(child) => {
                child.run(supervise::RESTART_GRACE, |client| work(&mut &*client))
            }
        }
    }

    /// Lists the server's tools.
    fn list(&self) -> Result<Vec<Tool>, ClientError> {
        self.with_client(|client| client.list_tools())
    }

    /// Calls the server's tool `remote`.
    fn call_remote(
        &self,
        remote: &str,
        args: &Value,
        options: CallOptions<'_>,
    ) -> Result<ToolResult, ClientError> {
        let outcome =
            self.with_client(|client| client.call_tool_with(remote, args.clone(), options));
        if let Err(ClientError::Closed { .. } | ClientError::Connect { .. } | ClientError::Io(_)) =
            &outcome
        {
            // The server may be gone: the supervisor looks now rather than
            // at its next check.
            self.signal.want_refresh();
        }
        outcome
    }

    fn refresh(&self) -> Result<bool, ClientError> {
        let listed = self.list()?;
        Ok(self.apply(listed))
    }

    /// Makes `listed` the snapshot, telling every session serving the
    /// layer when it differs; `true` when it did.
    fn apply(&self, listed: Vec<Tool>) -> bool {
        if read(&self.snapshot).listed == listed {
            return false;
        }
        let prefix = self.qualified.then_some(self.name.as_str());
        let (snapshot, skipped) = Snapshot::of(listed, prefix, &self.line);
        *self
            .snapshot
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = snapshot;
        *lock(&self.skipped) = (skipped, false);
        self.report_skipped();
        self.links.tools_changed();
        let ready = matches!(lock(&self.status).0, ServerStatus::Ready { .. });
        if ready {
            self.set_status(ServerStatus::Ready {
                tools: read(&self.snapshot).tools.len(),
            });
        }
        true
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
                skipped
                    .0
                    .iter()
                    .map(|name| format!("{name:?}"))
                    .collect::<Vec<_>>()
                    .join(", ")
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
}

impl ToolSurface for McpServerLayer {
    fn list_tools(&self) -> Vec<Tool> {
        self.inner.links.adopt_serving();
        read(&self.inner.snapshot).tools.clone()
    }

    fn lookup(&self, name: &str, _: Token) -> Option<Tool> {
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
            .field("status", &self.status())
            .field("sessions", &self.inner.links.len())
            .finish()
    }
}
