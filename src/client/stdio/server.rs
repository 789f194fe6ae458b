//! How to start a stdio MCP server: its command line, environment and
//! working directory, and what the client says and asks of it.

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};

use super::{Callback, StdioClient};
use crate::child::{DEFAULT_MAX_MESSAGE_BYTES, EXIT_GRACE};
use crate::client::builder::DEFAULT_SILENCE_TIMEOUT;
use crate::client::call::LogMessage;
use crate::client::error::ClientError;
use crate::client::rpc::Identity;
use crate::client::tools::ListingBound;
use crate::model::{LogLevel, Revision};

/// A line the server wrote to stderr, handed to the application.
pub(super) type StderrCallback = Arc<dyn Fn(&str) + Send + Sync>;

/// A log message of the server's that belongs to no one call.
pub(super) type LogCallback = Arc<dyn Fn(&LogMessage) + Send + Sync>;

/// A stdio MCP server to start: a program that speaks newline-delimited
/// JSON-RPC on its stdin and stdout, as most MCP servers in the wild do.
/// [`StdioServer::connect`] starts it and returns the [`StdioClient`];
/// [`McpServerLayer::stdio`](crate::McpServerLayer::stdio) bridges it into
/// a host's surface. Cheap to clone: the callbacks are shared.
///
/// ```no_run
/// use serde_json::json;
/// use toolhost::client::StdioServer;
///
/// let client = StdioServer::new("npx")
///     .args(["-y", "@modelcontextprotocol/server-everything"])
///     .env("NODE_NO_WARNINGS", "1")
///     .on_stderr(|line| eprintln!("[everything] {line}"))
///     .connect()?;
/// println!("{} tools", client.list_tools()?.len());
/// let result = client.call_tool("echo", json!({"message": "hi"}))?;
/// println!("{}", result.text());
/// drop(client); // closes its stdin, waits 2 s, then ends it and reaps it
/// # Ok::<(), toolhost::client::ClientError>(())
/// ```
#[derive(Clone)]
pub struct StdioServer {
    pub(super) program: OsString,
    pub(super) args: Vec<OsString>,
    pub(super) env: Vec<(OsString, OsString)>,
    pub(super) current_dir: Option<PathBuf>,
    pub(super) timeout: Duration,
    pub(super) exit_grace: Duration,
    pub(super) max_message_bytes: usize,
    pub(super) listing: ListingBound,
    pub(super) identity: Identity,
    pub(super) on_stderr: Option<StderrCallback>,
    pub(super) on_tools_changed: Option<Callback>,
    pub(super) on_log: Option<LogCallback>,
}

impl StdioServer {
    /// The server started as `program` (looked up on `PATH` as
    /// [`std::process::Command`] does), with no arguments, this process's
    /// environment and working directory.
    pub fn new(program: impl AsRef<OsStr>) -> StdioServer {
        StdioServer {
            program: program.as_ref().to_owned(),
            args: Vec::new(),
            env: Vec::new(),
            current_dir: None,
            timeout: DEFAULT_SILENCE_TIMEOUT,
            exit_grace: EXIT_GRACE,
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            listing: ListingBound::STDIO,
            identity: Identity {
                name: "toolhost-client".into(),
                version: env!("CARGO_PKG_VERSION").into(),
                capabilities: json!({}),
                offered: Revision::LATEST_STATEFUL,
                log_level: None,
            },
            on_stderr: None,
            on_tools_changed: None,
            on_log: None,
        }
    }

    /// Adds one argument.
    #[must_use]
    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> StdioServer {
        self.args.push(arg.as_ref().to_owned());
        self
    }

    /// Adds arguments, in order.
    #[must_use]
    pub fn args<I, S>(mut self, args: I) -> StdioServer
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.args
            .extend(args.into_iter().map(|arg| arg.as_ref().to_owned()));
        self
    }

    /// Sets an environment variable for the server (beside this process's
    /// own, which it inherits). `Debug` shows the name, never the value:
    /// servers take their tokens this way.
    #[must_use]
    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> StdioServer {
        self.env
            .push((key.as_ref().to_owned(), value.as_ref().to_owned()));
        self
    }

    /// Starts the server in `dir` instead of this process's working
    /// directory.
    #[must_use]
    pub fn current_dir(mut self, dir: impl Into<PathBuf>) -> StdioServer {
        self.current_dir = Some(dir.into());
        self
    }

    /// How long the server may stay silent while the client waits for an
    /// answer, the `initialize` handshake included (60 s by default: a
    /// first `npx` run downloads the server). Every message from the server for a call — a
    /// progress report, a log message — starts the wait again. Zero is
    /// refused by [`connect`](StdioServer::connect).
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> StdioServer {
        self.timeout = timeout;
        self
    }

    /// How long the server gets to exit on its own once its stdin is
    /// closed, when the client is dropped, before it (and everything it
    /// started) is sent `SIGTERM`, a second later `SIGKILL`, and reaped
    /// (2 s by default).
    #[must_use]
    pub fn exit_grace(mut self, grace: Duration) -> StdioServer {
        self.exit_grace = grace;
        self
    }

    /// The longest message the server may write, in bytes, one line of
    /// JSON-RPC (16 MiB by default,
    /// [`DEFAULT_MAX_MESSAGE_BYTES`]). A longer line is skipped while it is read, never buffered
    /// whole, so a runaway server costs this process at most about the
    /// limit; the request it answered fails with
    /// [`ClientError::TooLarge`] (told by the id at either end of
    /// the line; see there when that is unknown), and the server runs on.
    #[must_use]
    pub fn max_message_bytes(mut self, bytes: usize) -> StdioServer {
        self.max_message_bytes = bytes;
        self
    }

    /// The most tools one listing may hold (4096 by default), all its
    /// pages together
    /// ([`StdioClient::list_tools`](super::StdioClient::list_tools)):
    /// many times what any server in use lists, and what a model takes
    /// in one request. Past it the listing fails with
    /// [`ClientError::ListingTooLarge`], nothing of it kept and no
    /// further page asked for, so a server cannot fill the client's
    /// memory one page at a time.
    #[must_use]
    pub fn max_listed_tools(mut self, tools: usize) -> StdioServer {
        self.listing.tools = tools;
        self
    }

    /// The most bytes of tool definitions (as JSON) one listing may hold,
    /// all its pages together (16 MiB by default, as much as one message
    /// may carry: [`max_message_bytes`](StdioServer::max_message_bytes)). Past
    /// it the listing fails as past
    /// [`max_listed_tools`](StdioServer::max_listed_tools).
    #[must_use]
    pub fn max_listing_bytes(mut self, bytes: usize) -> StdioServer {
        self.listing.bytes = bytes;
        self
    }

    /// The `clientInfo` sent at `initialize` (default `toolhost-client`
    /// and the crate's version).
    #[must_use]
    pub fn client_info(mut self, name: &str, version: &str) -> StdioServer {
        name.clone_into(&mut self.identity.name);
        version.clone_into(&mut self.identity.version);
        self
    }

    /// The client capabilities declared at `initialize` (default `{}`:
    /// none). Declare `{"elicitation": {}}`, `{"sampling": {}}` or
    /// `{"roots": {}}` for the questions a call's
    /// [`CallOptions::on_request`](super::super::CallOptions::on_request)
    /// answers.
    #[must_use]
    pub fn capabilities(mut self, capabilities: Value) -> StdioServer {
        self.identity.capabilities = capabilities;
        self
    }

    /// Asks the server for log messages at `level` and above
    /// (`logging/setLevel` after `initialize`, when the server declares
    /// logging); a call hands them to
    /// [`CallOptions::on_log`](super::super::CallOptions::on_log) while it
    /// is the only call in flight. Default: none asked for.
    #[must_use]
    pub fn log_level(mut self, level: LogLevel) -> StdioServer {
        self.identity.log_level = Some(level);
        self
    }

    /// The newest revision `initialize` offers (default
    /// [`Revision::LATEST_STATEFUL`]). A server that speaks an older one
    /// answers with it; one that refuses the offer outright is offered the
    /// older revisions in turn, down to 2024-11-05. 2026-07-28 has no
    /// handshake, and no stdio servers speak it yet: it is never offered.
    #[must_use]
    pub fn revision(mut self, revision: Revision) -> StdioServer {
        self.identity.offered = revision;
        self
    }

    /// Hands each line the server writes to stderr to `callback`, on a
    /// thread of the client's. Without it, the lines go on to this
    /// process's stderr, as if the server shared it. Either way the last
    /// five lines are kept for the error that says the server is gone.
    #[must_use]
    pub fn on_stderr(mut self, callback: impl Fn(&str) + Send + Sync + 'static) -> StdioServer {
        self.on_stderr = Some(Arc::new(callback));
        self
    }

    /// Hands `callback` each log message (`notifications/message`) the
    /// server sends while no call, or more than one, is in flight, on the
    /// client's reader thread. Nothing on stdio says which call a message
    /// belongs to, so only while exactly one call is in flight does a
    /// message go to that call's [`CallOptions::on_log`](crate::client::CallOptions::on_log);
    /// without this callback, the others are dropped. Like
    /// [`StdioServer::on_tools_changed`], it must not call the client.
    #[must_use]
    pub fn on_log(mut self, callback: impl Fn(&LogMessage) + Send + Sync + 'static) -> StdioServer {
        self.on_log = Some(Arc::new(callback));
        self
    }

    /// Calls `callback` at each `notifications/tools/list_changed` of the
    /// server, on the client's reader thread: it must not call the client
    /// itself (the answer would wait for that very thread), but may wake
    /// one that does.
    #[must_use]
    pub fn on_tools_changed(mut self, callback: impl Fn() + Send + Sync + 'static) -> StdioServer {
        self.on_tools_changed = Some(Arc::new(callback));
        self
    }

    /// Starts the server and runs the `initialize` handshake.
    ///
    /// # Errors
    /// [`ClientError::Spawn`] when the program cannot be started (naming
    /// it), [`ClientError::Closed`] when it exits before it has answered
    /// (with the last lines it wrote to stderr), [`ClientError::Timeout`],
    /// [`ClientError::Rpc`] when it refuses every revision offered, and
    /// [`ClientError::Malformed`] for an answer that is not MCP;
    /// [`ClientError::InvalidConfig`], before anything is started, for a
    /// zero [`timeout`](StdioServer::timeout).
    pub fn connect(&self) -> Result<StdioClient, ClientError> {
        StdioClient::start(self)
    }

    /// The command to spawn.
    pub(super) fn command(&self) -> Command {
        let mut command = Command::new(&self.program);
        command.args(&self.args);
        command.envs(self.env.iter().map(|(k, v)| (k, v)));
        if let Some(dir) = &self.current_dir {
            command.current_dir(dir);
        }
        command
    }

    /// The program, for messages.
    pub(super) fn program(&self) -> String {
        self.program.to_string_lossy().into_owned()
    }
}

impl fmt::Debug for StdioServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let env: Vec<_> = self.env.iter().map(|(name, _)| name).collect();
        f.debug_struct("StdioServer")
            .field("program", &self.program)
            .field("args", &self.args)
            .field("env", &env)
            .field("current_dir", &self.current_dir)
            .field("timeout", &self.timeout)
            .field("exit_grace", &self.exit_grace)
            .field("max_message_bytes", &self.max_message_bytes)
            .field("max_listed_tools", &self.listing.tools)
            .field("max_listing_bytes", &self.listing.bytes)
            .finish_non_exhaustive()
    }
}
