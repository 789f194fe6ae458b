//! Events the host reports to the application's hook, for logs and metrics.
//!
//! An application that installs a hook decides what to do with every event.
//! Without one, events go to the `log` facade (target `toolhost`, at the
//! level [`Event::level`] gives), so that a failure's detail or a broken
//! surface is never silent; `log` does nothing until the application
//! installs a logger. No event ever carries a bearer, a capability URL or a
//! session id: an event may be written anywhere.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::model::{CallResult, LogLevel};

/// The `log` target of everything the crate logs.
pub(crate) const LOG_TARGET: &str = "toolhost";

/// Something that happened on the host.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Event {
    /// A tool call was admitted and its handler is about to run.
    CallStarted {
        /// The tool's name.
        tool: String,
    },
    /// A handler returned (or panicked).
    CallFinished {
        /// The tool's name.
        tool: String,
        /// How long the handler ran.
        duration: Duration,
        /// What it came to.
        outcome: CallResult,
    },
    /// Every call slot was taken, so the call waits in line for one (see
    /// [`HostConfig::max_concurrent_calls`](crate::HostConfig::max_concurrent_calls));
    /// for a tool with a [`CallLine`](crate::CallLine) of its own (a
    /// bridged server's), every slot of that line.
    CallQueued {
        /// The tool's name.
        tool: String,
        /// How many calls wait now in the same line, this one included.
        waiting: usize,
    },
    /// A call that waited in line got its slot; [`Event::CallStarted`]
    /// follows. How long calls wait is what to size
    /// [`HostConfig::max_concurrent_calls`](crate::HostConfig::max_concurrent_calls) by.
    CallWaited {
        /// The tool's name.
        tool: String,
        /// How long it waited.
        waited: Duration,
    },
    /// A call was cancelled while it waited for a slot — by the client, its
    /// deadline, its session's drop or the host's shutdown — and left the
    /// line without its handler running.
    CallAbandoned {
        /// The tool's name.
        tool: String,
        /// Why it was cancelled.
        reason: String,
    },
    /// Every call slot was taken and the line of waiting calls was full
    /// ([`HostConfig::max_queued_calls`](crate::HostConfig::max_queued_calls)):
    /// the call was refused, and no handler ran.
    CallRefused {
        /// The tool's name.
        tool: String,
    },
    /// A call passed its deadline
    /// ([`HostConfig::call_timeout`](crate::HostConfig::call_timeout)): the
    /// client got a tool error and the call was flagged cancelled, but a
    /// running handler still runs and holds its call slot until it returns
    /// (a call still waiting for a slot never runs).
    CallTimedOut {
        /// The tool's name.
        tool: String,
        /// The deadline it passed.
        after: Duration,
    },
    /// A call has been running for longer than
    /// [`HostConfig::report_long_calls`](crate::HostConfig::report_long_calls):
    /// a handler that never returns shows here instead of silently holding a
    /// call slot.
    CallRunningLong {
        /// The tool's name.
        tool: String,
        /// How long it has run.
        elapsed: Duration,
    },
    /// A call's arguments broke the tool's input schema, or did not decode
    /// into a typed tool's argument type; no handler ran, and the model got
    /// the violations as a tool error.
    InvalidArguments {
        /// The tool's name.
        tool: String,
        /// The violations, as the model read them.
        violations: String,
    },
    /// A call named a tool the surface does not list; no handler ran.
    UnknownTool {
        /// The name the client asked for.
        tool: String,
    },
    /// A request was refused for lack of a valid bearer.
    AuthRefused {
        /// Why, without the presented credential.
        reason: AuthRefusal,
    },
    /// More requests were refused for lack of a valid bearer than are
    /// reported one by one (ten a second): this many were refused without
    /// an [`Event::AuthRefused`] each, in the second that just ended.
    AuthRefusalsSuppressed {
        /// How many refusals went unreported.
        count: u64,
    },
    /// tiny_http's thread that accepts connections ended — it gives up on
    /// the first failed `accept` (out of file descriptors, say) and dies
    /// when it cannot duplicate a socket — and the host started a new one
    /// on the same listening socket. Connections made meanwhile waited in
    /// the listen queue; none was lost.
    ListenerRestarted {
        /// What the host saw.
        reason: String,
    },
    /// A request declared a body longer than the host ever drains (1 GiB,
    /// or `max_body_bytes` when larger) and was left unanswered, its
    /// connection open and unread for as long as the process lives:
    /// tiny_http reserves a dropped request's whole remaining body in one
    /// allocation, and one that large may fail and abort the process.
    /// Each costs two file descriptors and one parked thread; no client
    /// sends such a body by mistake. The figure is also
    /// [`ToolHost::abandoned_connections`](crate::ToolHost::abandoned_connections).
    ConnectionAbandoned {
        /// The body length the request declared.
        declared_body_bytes: u64,
        /// How many connections this host has left so, this one included.
        total: u64,
    },
    /// A request was refused before reaching the protocol, or the protocol
    /// refused it.
    BadRequest {
        /// The HTTP status sent.
        status: u16,
        /// What was wrong, as told to the client.
        message: String,
    },
    /// A tool's schemas use keywords the host does not check (reported once
    /// per session, when it opens): arguments are validated without them.
    SchemaWarnings {
        /// The tool's name.
        tool: String,
        /// One line per unchecked keyword.
        warnings: Vec<String>,
    },
    /// The application's surface misbehaved: `list_tools` or a tool's lookup
    /// panicked, or listed a tool that breaks the naming rules or repeats a
    /// name (left out of `tools/list`, and refused as unknown when called).
    /// A bridged server's layer reports here too what is not a change of
    /// its state ([`Event::ServerStatus`]): tools of the server left out
    /// for their names, a refresh the server answered wrong, a call that
    /// failed on the server's side (the agent got a tool error).
    SurfaceFault {
        /// What happened.
        message: String,
    },
    /// A layer of a [`LayeredSurface`](crate::LayeredSurface) lists a tool
    /// that a layer before it supplies or reserves: the agent never sees
    /// or reaches this one. Reported once each time the set of hidden
    /// tools changes.
    ToolShadowed {
        /// The layer whose tool is hidden.
        layer: String,
        /// The tool's name.
        tool: String,
        /// The layer that owns the name.
        owner: String,
    },
    /// A stdio MCP server bridged in with
    /// [`McpServerLayer::stdio`](crate::McpServerLayer::stdio) wrote a line
    /// to its stderr — where such servers log, and say why they fail.
    ServerStderr {
        /// The server's name, as given to the layer.
        server: String,
        /// The line, without its line break.
        line: String,
    },
    /// A stdio MCP server bridged in with
    /// [`McpServerLayer::stdio`](crate::McpServerLayer::stdio) sent a log
    /// message (`notifications/message`) that belongs to no one call: it
    /// came while none of the layer's calls, or more than one, was in
    /// flight, and nothing on stdio says which call it is about, so it
    /// goes to no agent. (While exactly one call is in flight, its agent
    /// gets the message.) Logged at the level the message gives.
    ServerLog {
        /// The server's name, as given to the layer.
        server: String,
        /// The message's severity.
        level: LogLevel,
        /// The logger's name, when the server gave one.
        logger: Option<String>,
        /// What was logged: any JSON.
        data: serde_json::Value,
    },
    /// A stdio MCP server bridged in with
    /// [`McpServerLayer::stdio`](crate::McpServerLayer::stdio) wrote more
    /// to stderr and sent more log messages that belong to no call than
    /// are reported one by one (50 a second per server, as
    /// [`Event::ServerStderr`] and [`Event::ServerLog`]): this many went
    /// unreported in the second that just ended. A server cannot flood the
    /// application's log.
    ServerOutputSuppressed {
        /// The server's name, as given to the layer.
        server: String,
        /// Lines of its stderr not reported.
        stderr_lines: u64,
        /// Log messages not reported.
        log_messages: u64,
    },
    /// A bridged MCP server's layer changed state
    /// ([`McpServerLayer::status`](crate::McpServerLayer::status)): it
    /// connected and its tools joined, was found gone and is being started
    /// again, failed and will try again, connects again, or cannot work
    /// as configured. Every change is reported, deaths and restarts
    /// included, in the order the layer went through them. Logged at
    /// `info` when connecting or ready, `error` when misconfigured, else
    /// `warn`.
    ServerStatus {
        /// The server's name, as given to the layer.
        server: String,
        /// Its new state.
        status: ServerStatus,
    },
}

/// The state of a bridged MCP server's layer
/// ([`McpServerLayer::status`](crate::McpServerLayer::status)).
///
/// Its tools are listed exactly while it is [`Ready`](ServerStatus::Ready)
/// or [`Gone`](ServerStatus::Gone): a layer found gone is started (or
/// connected) again at once, and keeps its tools listed for at most 1 s
/// meanwhile; past that, or when that restart fails, they leave until it
/// is back.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ServerStatus {
    /// Connecting for the first time; none of its tools are listed yet.
    Connecting,
    /// Connected: this many of its tools are listed.
    Ready {
        /// How many of its tools the layer exposes.
        tools: usize,
    },
    /// The server was found gone (a stdio server's process ended, a call
    /// or a refresh could not reach it) and is being started, or
    /// connected, again at once. Its tools stay listed meanwhile, for at
    /// most 1 s, and a call to one waits for the new process: a server
    /// that crashed after serving is usually back within that, and the
    /// agent's tool list (which a model's prompt cache holds) need not
    /// change twice for it. Past that, its tools leave
    /// ([`Reconnecting`](ServerStatus::Reconnecting)); if the restart
    /// fails, they leave at once ([`Failed`](ServerStatus::Failed)).
    Gone {
        /// What was seen: the exit status or signal, the error.
        reason: String,
    },
    /// The last attempt to connect failed, and its tools are not listed;
    /// the next attempt comes after `retry_in`.
    Failed {
        /// What went wrong.
        reason: String,
        /// The pause before the next attempt, which grows with each
        /// failure in a row.
        retry_in: std::time::Duration,
    },
    /// Connecting again, its tools not listed: after a failure, or when
    /// the restart made at once after it was found gone has not answered
    /// within the time its tools stay listed for it.
    Reconnecting {
        /// Which attempt since it was last ready this is, from 1 (the
        /// restart made at once when it was found gone is the first).
        attempt: u32,
    },
    /// The layer's own settings can never reach the server — its client
    /// refuses the URL (not `http://` to a loopback address), or a
    /// setting cannot work — so it stopped trying: none of its tools will
    /// be listed. Build the layer again with what `reason` names fixed.
    Misconfigured {
        /// What cannot work, and why.
        reason: String,
    },
}

impl fmt::Display for ServerStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ServerStatus::Connecting => f.write_str("connecting"),
            ServerStatus::Ready { tools } => write!(f, "ready with {tools} tools"),
            ServerStatus::Failed { reason, retry_in } => {
                write!(f, "failed ({reason}); trying again in {retry_in:.1?}")
            }
            ServerStatus::Gone { reason } => {
                write!(f, "gone ({reason}); starting it again now")
            }
            ServerStatus::Reconnecting { attempt } => write!(f, "reconnecting (attempt {attempt})"),
            ServerStatus::Misconfigured { reason } => {
                write!(f, "misconfigured ({reason}); not trying again")
            }
        }
    }
}

/// Why a request's credential was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum AuthRefusal {
    /// No `Authorization` header (and no capability URL).
    Missing,
    /// A credential that is not `Bearer <token>` in the host's format.
    Malformed,
    /// A well-formed bearer that no live session holds: unknown, or revoked.
    Unknown,
}

impl Event {
    /// The `log` level the event is logged at when no hook is installed:
    /// `error` for what the application must fix (a failed call, a
    /// misbehaving surface, a bridged server misconfigured), `warn` for
    /// what it should look at (a bridged server gone or failing, a refused
    /// bearer, a call refused for capacity, a deadline passed, a long call,
    /// schema keywords not checked), `info` for a model's mistakes and
    /// refusals (declined calls, invalid arguments, unknown tools, bad
    /// requests), calls waiting for a slot, a bridged server connecting or
    /// ready and what a bridged stdio server wrote to stderr, `debug` for
    /// calls starting and succeeding.
    ///
    /// ```
    /// use toolhost::Event;
    ///
    /// let event = Event::UnknownTool { tool: "launch".into() };
    /// assert_eq!(event.level(), log::Level::Info);
    /// assert_eq!(event.to_string(), "call to unknown tool \"launch\" refused");
    /// ```
    pub fn level(&self) -> log::Level {
        match self {
            Event::CallStarted { .. }
            | Event::CallFinished {
                outcome: CallResult::Success,
                ..
            } => log::Level::Debug,
            Event::CallFinished {
                outcome: CallResult::Declined { .. } | CallResult::Cancelled { .. },
                ..
            }
            | Event::CallQueued { .. }
            | Event::CallWaited { .. }
            | Event::CallAbandoned { .. }
            | Event::InvalidArguments { .. }
            | Event::UnknownTool { .. }
            | Event::BadRequest { .. }
            | Event::ServerStderr { .. }
            | Event::ServerStatus {
                status: ServerStatus::Ready { .. } | ServerStatus::Connecting,
                ..
            } => log::Level::Info,
            Event::ServerStatus {
                status: ServerStatus::Misconfigured { .. },
                ..
            } => log::Level::Error,
            Event::ServerStatus { .. } => log::Level::Warn,
            Event::CallRefused { .. }
            | Event::CallTimedOut { .. }
            | Event::CallRunningLong { .. }
            | Event::AuthRefused { .. }
            | Event::AuthRefusalsSuppressed { .. }
            | Event::ServerOutputSuppressed { .. }
            | Event::ListenerRestarted { .. }
            | Event::ConnectionAbandoned { .. }
            | Event::SchemaWarnings { .. }
            | Event::ToolShadowed { .. } => log::Level::Warn,
            Event::CallFinished {
                outcome: CallResult::Failed { .. },
                ..
            }
            | Event::SurfaceFault { .. } => log::Level::Error,
            Event::ServerLog { level, .. } => match level {
                LogLevel::Debug => log::Level::Debug,
                LogLevel::Info | LogLevel::Notice => log::Level::Info,
                LogLevel::Warning => log::Level::Warn,
                LogLevel::Error | LogLevel::Critical | LogLevel::Alert | LogLevel::Emergency => {
                    log::Level::Error
                }
            },
        }
    }
}

impl fmt::Display for Event {
    /// One line (more for a list of violations), for a log.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Event::CallStarted { tool } => write!(f, "call to tool {tool:?} started"),
            Event::CallFinished {
                tool,
                duration,
                outcome,
            } => match outcome {
                CallResult::Success => write!(f, "call to tool {tool:?} succeeded in {duration:?}"),
                CallResult::Declined { reason } => {
                    write!(f, "call to tool {tool:?} declined in {duration:?}: {reason}")
                }
                CallResult::Failed { detail } => {
                    write!(f, "call to tool {tool:?} failed in {duration:?}: {detail}")
                }
                CallResult::Cancelled { reason } => {
                    write!(f, "call to tool {tool:?} cancelled after {duration:?}: {reason}")
                }
            },
            Event::CallQueued { tool, waiting } => write!(
                f,
                "call to tool {tool:?} waits for a call slot ({waiting} waiting)"
            ),
            Event::CallWaited { tool, waited } => {
                write!(f, "call to tool {tool:?} got its call slot after {waited:?}")
            }
            Event::CallAbandoned { tool, reason } => write!(
                f,
                "call to tool {tool:?} cancelled while it waited for a call slot, never run: {reason}"
            ),
            Event::CallRefused { tool } => write!(
                f,
                "call to tool {tool:?} refused: every call slot is taken and the line of waiting calls is full"
            ),
            Event::CallTimedOut { tool, after } => write!(
                f,
                "call to tool {tool:?} passed its deadline of {after:?}: the client got a tool error, the handler runs on"
            ),
            Event::CallRunningLong { tool, elapsed } => {
                write!(f, "call to tool {tool:?} has been running for {elapsed:?}")
            }
            Event::InvalidArguments { tool, violations } => {
                write!(f, "call to tool {tool:?} refused for its arguments: {violations}")
            }
            Event::UnknownTool { tool } => write!(f, "call to unknown tool {tool:?} refused"),
            Event::AuthRefused { reason } => write!(f, "request refused: {reason}"),
            Event::AuthRefusalsSuppressed { count } => write!(
                f,
                "{count} more requests refused for lack of a valid bearer in the last second, not reported one by one"
            ),
            Event::ListenerRestarted { reason } => write!(
                f,
                "the thread accepting connections ended ({reason}); a new one accepts on the same socket"
            ),
            Event::ConnectionAbandoned {
                declared_body_bytes,
                total,
            } => write!(
                f,
                "a request declared a {declared_body_bytes}-byte body, more than the host drains: left unanswered, its connection open for good ({total} so far)"
            ),
            Event::BadRequest { status, message } => {
                write!(f, "request refused with HTTP {status}: {message}")
            }
            Event::SchemaWarnings { tool, warnings } => write!(
                f,
                "tool {tool:?} uses schema keywords that are not checked: {}",
                warnings.join("; ")
            ),
            Event::SurfaceFault { message } => write!(f, "the tool surface misbehaved: {message}"),
            Event::ToolShadowed { layer, tool, owner } => write!(
                f,
                "tool {tool:?} of layer {layer:?} is hidden: layer {owner:?} owns that name"
            ),
            Event::ServerStatus { server, status } => {
                write!(f, "MCP server {server:?} is {status}")
            }
            Event::ServerStderr { server, line } => {
                write!(f, "MCP server {server:?} wrote to stderr: {line}")
            }
            Event::ServerOutputSuppressed {
                server,
                stderr_lines,
                log_messages,
            } => write!(
                f,
                "MCP server {server:?} wrote {stderr_lines} more lines to stderr and sent {log_messages} more log messages in the last second, not reported one by one"
            ),
            Event::ServerLog {
                server,
                level,
                logger,
                data,
            } => {
                write!(f, "MCP server {server:?} logged at {}", level.as_str())?;
                if let Some(logger) = logger {
                    write!(f, " ({logger})")?;
                }
                match data {
                    serde_json::Value::String(text) => write!(f, ": {text}"),
                    other => write!(f, ": {other}"),
                }
            }
        }
    }
}

impl fmt::Display for AuthRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AuthRefusal::Missing => "no bearer",
            AuthRefusal::Malformed => "a malformed bearer",
            AuthRefusal::Unknown => "an unknown or revoked bearer",
        })
    }
}

/// The application's event hook, shared by every worker.
pub(crate) type EventHook = Arc<dyn Fn(&Event) + Send + Sync>;

/// Calls the hook, containing a panic in it: a broken logger must not
/// cost the request it reports on (nor a call's bookkeeping).
pub(crate) fn report(hook: &EventHook, event: &Event) {
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| hook(event)));
}

/// Reports an event to the hook, or without one to the `log` facade. The
/// event is only built when someone may listen.
pub(crate) fn emit(hook: Option<&EventHook>, event: impl FnOnce() -> Event) {
    match hook {
        Some(hook) => report(hook, &event()),
        None if log::max_level() != log::LevelFilter::Off => {
            let event = event();
            log::log!(target: LOG_TARGET, event.level(), "{event}");
        }
        None => {}
    }
}

/// Whether an event at `level` would be heard: there is a hook, or a
/// logger takes the level. For work done only to report (a timer, a walk
/// over the tools).
pub(crate) fn heard(hook: Option<&EventHook>, level: log::Level) -> bool {
    hook.is_some() || log::log_enabled!(target: LOG_TARGET, level)
}
