//! How a layer is set up — where its server is, how its tools are named,
//! the bounds of its calls and of what it relays — and the two ways it
//! starts: [`McpServerBuilder::start`], which returns at once and connects
//! in the background, and [`McpServerBuilder::connect`], which waits.

use std::fmt;
use std::sync::{Arc, Weak};
use std::thread;
use std::time::Duration;

use serde_json::json;

use super::chatter::Said;
use super::signal::Signal;
use super::stdio::Respawning;
use super::supervise::{supervise, Backoff};
use super::{http::Pool, Inner, McpServerBuilder, McpServerLayer, Remote, Transport};
use crate::client::ClientError;
use crate::event::{Event, ServerStatus};
use crate::model::call_line::{self, CallLine};
use crate::model::LogLevel;

// The defaults. Each setter's doc states its default and unit (pinned to
// the constant by a test in `readme.rs`); only the relay bound, which a
// result is compared against, is public.

/// The default of [`McpServerBuilder::max_concurrent_calls`]: as many as
/// an agent sends in one burst (Claude Code: up to ten), which no server
/// that answers should make wait, and few enough that a hung server holds
/// only a handful of threads.
pub(crate) const DEFAULT_SERVER_CALLS: usize = 8;

/// The default of [`McpServerBuilder::max_queued_calls`]. A waiting call
/// costs its request's buffers, not a thread.
pub(crate) const DEFAULT_SERVER_QUEUE: usize = 64;

/// The default of [`McpServerBuilder::call_timeout`]: the time a client's
/// silent server is given by default
/// ([`ClientBuilder::timeout`](crate::client::ClientBuilder::timeout)),
/// counted from the call's arrival.
pub(crate) const DEFAULT_SERVER_CALL_TIMEOUT: Duration = Duration::from_secs(60);

/// The largest message relayed from a server, unless
/// [`McpServerBuilder::max_message_bytes`] says otherwise: 4 MiB. A tool
/// result is read by a model, whose tool-output budget is tens of
/// kilobytes of text (Claude Code cuts MCP output at about 25,000 tokens
/// by default) and whose image inputs are capped at a few megabytes; 4 MiB
/// holds the largest of those with room to spare, while a runaway result
/// — a whole database dump, a 48 MiB log — is refused before it costs the
/// application that embeds the host more than that. Public because a
/// result past it is a tool error, so a server's author compares against
/// it.
pub const DEFAULT_MAX_SERVER_MESSAGE_BYTES: usize = 4 << 20;

/// The default first pause of [`McpServerBuilder::reconnect_backoff`]; it
/// doubles with each failure in a row.
pub(crate) const DEFAULT_RECONNECT_FIRST: Duration = Duration::from_secs(1);

/// The default longest pause of [`McpServerBuilder::reconnect_backoff`].
pub(crate) const DEFAULT_RECONNECT_MAX: Duration = Duration::from_secs(30);

/// How the layer's line names its settings in the errors the agent reads.
const SETTINGS: call_line::Settings = call_line::Settings {
    running: "McpServerBuilder::max_concurrent_calls",
    waiting: "McpServerBuilder::max_queued_calls",
    timeout: "McpServerBuilder::call_timeout",
};

impl McpServerBuilder {
    pub(super) fn new(name: String, remote: Remote) -> McpServerBuilder {
        McpServerBuilder {
            name,
            remote,
            qualified: true,
            refresh_every: Some(super::DEFAULT_SERVER_REFRESH),
            max_concurrent_calls: DEFAULT_SERVER_CALLS,
            max_queued_calls: DEFAULT_SERVER_QUEUE,
            call_timeout: DEFAULT_SERVER_CALL_TIMEOUT,
            max_message_bytes: DEFAULT_MAX_SERVER_MESSAGE_BYTES,
            reconnect_backoff: Backoff {
                first: DEFAULT_RECONNECT_FIRST,
                max: DEFAULT_RECONNECT_MAX,
            },
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

    /// How often to ask the server for its tools (30 s by default);
    /// `None` asks only on [`McpServerLayer::refresh`] and when the
    /// server reports a change.
    #[must_use]
    pub fn refresh_every(mut self, interval: Option<Duration>) -> McpServerBuilder {
        self.refresh_every = interval;
        self
    }

    /// How many calls to this server may run at once (8 by default; 0
    /// counts as 1). These are the
    /// server's own slots, not the host's
    /// ([`HostConfig::max_concurrent_calls`](crate::HostConfig::max_concurrent_calls)):
    /// calls to a server that stopped answering hold only these, so the
    /// application's own tools and the other servers' keep running (see
    /// [`CallLine`]).
    #[must_use]
    pub fn max_concurrent_calls(mut self, calls: usize) -> McpServerBuilder {
        self.max_concurrent_calls = calls;
        self
    }

    /// How many calls to this server may wait for one of its slots (64 by
    /// default); past it a call gets a tool
    /// error naming the server and this setting at once.
    #[must_use]
    pub fn max_queued_calls(mut self, calls: usize) -> McpServerBuilder {
        self.max_queued_calls = calls;
        self
    }

    /// Each call's deadline, counted from its arrival, its wait for a slot
    /// included (60 s by default). At the
    /// deadline the agent gets a tool error naming the server and this
    /// setting, and the server is told to stop
    /// (`notifications/cancelled`). The host's own
    /// [`HostConfig::call_timeout`](crate::HostConfig::call_timeout), when
    /// shorter, applies instead. Zero is refused when the layer is built.
    #[must_use]
    pub fn call_timeout(mut self, limit: Duration) -> McpServerBuilder {
        self.call_timeout = limit;
        self
    }

    /// The largest message relayed from the server, in bytes (4 MiB by
    /// default, [`DEFAULT_MAX_SERVER_MESSAGE_BYTES`]): a result, a notification
    /// of a call (progress, log), a page of `tools/list`. Nothing past the
    /// limit is buffered: over HTTP the client stops reading there
    /// ([`ClientBuilder::max_message_bytes`](crate::client::ClientBuilder::max_message_bytes))
    /// and the next call opens a new connection; over stdio the rest of
    /// the line is skipped unread
    /// ([`StdioServer::max_message_bytes`](crate::client::StdioServer::max_message_bytes))
    /// and the server runs on. A result past it is a tool error naming the
    /// server, the size and this setting; so is, over HTTP, a notification
    /// of the call (the event stream it came on is given up), while over
    /// stdio such a notification is skipped and the call goes on to its
    /// answer. A `tools/list` past it keeps the tools listed before, and
    /// says so to the event hook and in [`McpServerLayer::last_error`]
    /// (at the first connect, when there were none, the layer is
    /// [`ServerStatus::Failed`] for it). So does a listing past the
    /// client's bound on all its pages together, which the layer leaves as
    /// the client it is given sets it
    /// ([`ClientBuilder::max_listed_tools`](crate::client::ClientBuilder::max_listed_tools)
    /// and [`max_listing_bytes`](crate::client::ClientBuilder::max_listing_bytes),
    /// the same on [`StdioServer`](crate::client::StdioServer): 4,096
    /// tools and 16 MiB by default).
    #[must_use]
    pub fn max_message_bytes(mut self, bytes: usize) -> McpServerBuilder {
        self.max_message_bytes = bytes;
        self
    }

    /// The pause before connecting again after a failure — `first`, then
    /// doubling with each failure in a row up to `max` (1 s and 30 s by
    /// default; `first` at least a millisecond, `max` at least `first`).
    /// A server found gone after it was ready is started again at once;
    /// only when that fails does the pause begin, so a server that dies at
    /// start is never restarted in a loop.
    #[must_use]
    pub fn reconnect_backoff(mut self, first: Duration, max: Duration) -> McpServerBuilder {
        self.reconnect_backoff = Backoff {
            first: first.max(Duration::from_millis(1)),
            max: max.max(first),
        };
        self
    }

    /// Returns the layer at once, and connects to the server (starts it,
    /// for stdio) in the background: the way to build a gateway, since no
    /// server is then on the host's critical path. The layer lists no
    /// tools until the server answers; then its tools join, and every
    /// session serving the layer is told
    /// (`notifications/tools/list_changed`). A server that cannot be
    /// reached is tried again with a growing pause
    /// ([`McpServerBuilder::reconnect_backoff`]). One found gone later is
    /// started (connected) again at once, its tools listed for at most 1 s
    /// meanwhile; if it is not back by then, its tools leave until
    /// it is. Settings that can never reach the server — a URL its client
    /// refuses (not `http://` to a loopback address), a setting that
    /// cannot work — fail once, as [`ServerStatus::Misconfigured`], and
    /// no attempt follows. [`McpServerLayer::status`] says where it
    /// stands, and every change is an [`Event::ServerStatus`].
    ///
    /// ```
    /// use toolhost::client::{Client, StdioServer};
    /// use toolhost::{McpServerLayer, ServerStatus};
    ///
    /// // Returns at once, whether or not the program exists.
    /// let layer = McpServerLayer::stdio("absent", StdioServer::new("no-such-program-here")).start()?;
    /// assert_eq!(layer.count(), 0);
    /// assert!(matches!(
    ///     layer.status(),
    ///     ServerStatus::Connecting | ServerStatus::Failed { .. } | ServerStatus::Reconnecting { .. }
    /// ));
    ///
    /// // A URL its client refuses is never reached: one attempt, then no more.
    /// let remote = McpServerLayer::builder("remote", Client::builder("http://192.0.2.1/mcp")).start()?;
    /// # while remote.status() == ServerStatus::Connecting { std::thread::sleep(std::time::Duration::from_millis(5)); }
    /// assert!(matches!(remote.status(), ServerStatus::Misconfigured { .. }));
    /// # Ok::<(), toolhost::client::ClientError>(())
    /// ```
    ///
    /// # Errors
    /// [`ClientError::InvalidConfig`] for a server name that breaks the
    /// rule [`McpServerBuilder::connect`] gives, or a zero
    /// [`call_timeout`](McpServerBuilder::call_timeout); nothing else is
    /// checked before the background connects (see
    /// [`ServerStatus::Misconfigured`] for what it may find).
    pub fn start(self) -> Result<McpServerLayer, ClientError> {
        let interval = self.refresh_every;
        let inner = self.build()?;
        spawn_supervisor(&inner, interval, false)?;
        Ok(McpServerLayer { inner })
    }

    /// Connects to the server (starts it, for stdio) and lists its tools,
    /// waiting for both: the server is on the caller's path until it
    /// answers (or its client's timeout passes). A gateway should use
    /// [`McpServerBuilder::start`] instead. Once connected, the layer
    /// behaves as a started one: it reconnects on its own.
    ///
    /// # Errors
    /// [`ClientError::InvalidConfig`] for a server name that breaks the
    /// rule a host's own name follows (1 to 32 of `A-Za-z0-9-_`, starting
    /// with a letter, no `__`, no trailing `_`: the prefix lands inside the
    /// `mcp__<host>__<server>_<tool>` names agents make, and a `__` in it
    /// would split them wrong) or a zero
    /// [`call_timeout`](McpServerBuilder::call_timeout); otherwise whatever
    /// kept the server from
    /// connecting or listing ([`ClientError::Spawn`] for a stdio command
    /// that cannot start).
    pub fn connect(self) -> Result<McpServerLayer, ClientError> {
        let interval = self.refresh_every;
        let inner = self.build()?;
        inner.establish(&Arc::downgrade(&inner))?;
        spawn_supervisor(&inner, interval, true)?;
        Ok(McpServerLayer { inner })
    }

    /// The layer, connected to nothing yet.
    fn build(self) -> Result<Arc<Inner>, ClientError> {
        crate::acp::validate_server_name(&self.name).map_err(|err| ClientError::InvalidConfig {
            problem: err.to_string(),
        })?;
        if self.call_timeout.is_zero() {
            return Err(ClientError::InvalidConfig {
                problem: format!(
                    "McpServerBuilder::call_timeout: {}",
                    crate::config::ZERO_DEADLINE
                ),
            });
        }
        // Declared so the server may ask; each question is put to the agent
        // only if the agent declared the same (see `ask_agent`).
        let asks = json!({"elicitation": {}, "sampling": {}, "roots": {}});
        let signal = Arc::new(Signal::default());
        let line = CallLine::named_settings(
            format!("The MCP server {:?}", self.name),
            self.max_concurrent_calls,
            self.max_queued_calls,
            Some(self.call_timeout),
            SETTINGS,
        );
        let settings = Settings {
            name: self.name,
            qualified: self.qualified,
            line,
            reconnect_backoff: self.reconnect_backoff,
        };
        // Every message is asked for; the agent's own threshold filters
        // them in `CallContext::log`.
        Ok(match self.remote {
            Remote::Http(builder) => {
                // Each client refreshes the layer at a list change heard on
                // a call's stream, as a stdio server's is. It does not hold
                // its session's standalone stream: under Wine, a gateway
                // whose pooled clients held one stalled its calls by the
                // read timeout (cause not found yet); the layer's watch
                // follows that stream instead, on a session of its own.
                let changes = Arc::clone(&signal);
                let builder = builder
                    .capabilities(asks)
                    .log_level(LogLevel::Debug)
                    .max_message_bytes(self.max_message_bytes)
                    .on_tools_changed(move || changes.want_refresh());
                Arc::new(Inner::new(
                    settings,
                    Transport::Http(Pool::new(builder)),
                    signal,
                ))
            }
            Remote::Stdio(server) => Arc::new_cyclic(|layer: &Weak<Inner>| {
                let (lines, changes) = (layer.clone(), Arc::clone(&signal));
                let server = server
                    .capabilities(asks)
                    .log_level(LogLevel::Debug)
                    .max_message_bytes(self.max_message_bytes)
                    .on_stderr(move |line| {
                        if let Some(layer) = lines.upgrade() {
                            let event = Event::ServerStderr {
                                server: layer.name.clone(),
                                line: line.to_owned(),
                            };
                            layer.report_chatter(&lines, Said::Stderr, event);
                        }
                    })
                    .on_log({
                        let weak = layer.clone();
                        move |message| {
                            if let Some(layer) = weak.upgrade() {
                                let event = Event::ServerLog {
                                    server: layer.name.clone(),
                                    level: message.level,
                                    logger: message.logger.clone(),
                                    data: message.data.clone(),
                                };
                                layer.report_chatter(&weak, Said::Log, event);
                            }
                        }
                    })
                    .on_tools_changed(move || changes.want_refresh());
                let transport = Transport::Stdio(Respawning::new(server, Arc::clone(&signal)));
                Inner::new(settings, transport, signal)
            }),
        })
    }
}

/// What a layer keeps of its builder.
pub(super) struct Settings {
    pub(super) name: String,
    pub(super) qualified: bool,
    pub(super) line: CallLine,
    pub(super) reconnect_backoff: Backoff,
}

/// Starts the thread that connects (unless `ready`), refreshes and
/// reconnects the layer until it is dropped.
fn spawn_supervisor(
    inner: &Arc<Inner>,
    interval: Option<Duration>,
    ready: bool,
) -> Result<(), ClientError> {
    if !ready {
        // The state it was made in, reported: every layer's story starts
        // with it.
        inner.report_event(Event::ServerStatus {
            server: inner.name.clone(),
            status: ServerStatus::Connecting,
        });
    }
    let weak = Arc::downgrade(inner);
    let signal = Arc::clone(&inner.signal);
    thread::Builder::new()
        .name(format!("toolhost-layer-{}", inner.name))
        .spawn(move || supervise(&weak, &signal, interval, ready))
        .map(drop)
        .map_err(ClientError::Io)
}

/// Names the server and its settings, never its URL or headers: an
/// upstream's URL may be a capability URL and its headers carry its
/// credentials.
impl fmt::Debug for McpServerBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let transport = match &self.remote {
            Remote::Http(_) => "http",
            Remote::Stdio(_) => "stdio",
        };
        f.debug_struct("McpServerBuilder")
            .field("name", &self.name)
            .field("transport", &transport)
            .field("qualified", &self.qualified)
            .field("refresh_every", &self.refresh_every)
            .field("max_concurrent_calls", &self.max_concurrent_calls)
            .field("max_queued_calls", &self.max_queued_calls)
            .field("call_timeout", &self.call_timeout)
            .field("max_message_bytes", &self.max_message_bytes)
            .finish_non_exhaustive()
    }
}
