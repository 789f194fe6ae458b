//! A blocking MCP client for loopback endpoints: test rigs, scripts, and
//! toolhost's own tests.
//!
//! [`Client`] speaks MCP over Streamable HTTP — both the stateful revisions
//! (`initialize`, `Mcp-Session-Id`) and the stateless 2026-07-28 — over a
//! keep-alive `std::net::TcpStream` with `TCP_NODELAY`, reading
//! `application/json` and `text/event-stream` answers. No async runtime and
//! no dependency beyond the crate's own. It only talks plain `http://` to
//! this machine: a bearer never crosses the network in clear text.
//!
//! The quickest way to test the tools an application hosts is to ask the
//! session for a client and call through the real endpoint:
//!
//! ```
//! use serde_json::json;
//! use toolhost::{HostConfig, StaticSurface, Tool, ToolHost, ToolOutcome};
//!
//! let host = ToolHost::bind(HostConfig::default())?;
//! let session = host.open_session(StaticSurface::new().tool(
//!     Tool::new("shout", "Uppercases text."),
//!     |args, _ctx| ToolOutcome::text(args["text"].as_str().unwrap_or("").to_uppercase()),
//! )?);
//!
//! let mut client = session.client()?;
//! let names: Vec<String> = client.list_tools()?.iter().map(|t| t.name().to_owned()).collect();
//! assert_eq!(names, ["shout"]);
//! let result = client.call_tool("shout", json!({"text": "hi"}))?;
//! assert_eq!(result.text(), "HI");
//! assert_eq!(session.calls_served(), 1);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Any other MCP server on loopback works the same way through
//! [`Client::builder`], with its credentials and the [`Era`] to speak.
//!
//! A tool may ask the client something mid-call — the user to fill in a
//! form (elicitation), the model for a completion (sampling), or the
//! client's roots. The client answers through a per-call handler,
//! [`CallOptions::on_request`], given each [`ServerRequest`]; it returns the
//! answer's result or a [`Refusal`]. The server asks only what the client
//! declared ([`ClientBuilder::capabilities`]). In the stateful revisions the
//! question arrives on the call's event stream and the answer is POSTed in
//! the MCP session on a second connection (a question with no handler gets
//! JSON-RPC's "method not found", so the server never waits in vain); in 2026-07-28 the
//! call returns `input_required` and the client calls again with the
//! answers and the server's `requestState`, round after round (at most
//! eight), until the result is complete. Where an answer cannot be given —
//! no handler, or a refusal, which 2026-07-28 cannot carry — the call ends
//! with [`ClientError::Unanswered`].
//!
//! ```
//! use serde_json::json;
//! use toolhost::client::CallOptions;
//! use toolhost::{HostConfig, StaticSurface, Tool, ToolHost, ToolOutcome};
//!
//! let host = ToolHost::bind(HostConfig::default())?;
//! let session = host.open_session(StaticSurface::new().tool(
//!     Tool::new("where", "Names the client's first root."),
//!     |_, ctx| match ctx.list_roots() {
//!         Ok(roots) => ToolOutcome::text(roots[0]["uri"].as_str().unwrap_or("")),
//!         Err(err) => err.into(),
//!     },
//! )?);
//! let mut client = session.client_builder().capabilities(json!({"roots": {}})).connect()?;
//! let result = client.call_tool_with(
//!     "where",
//!     json!({}),
//!     CallOptions::new().on_request(|_| Ok(json!({"roots": [{"uri": "file:///work"}]}))),
//! )?;
//! assert_eq!(result.text(), "file:///work");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! An event stream that ends before its response — a server freeing the
//! connection during long work (`CallContext::close_stream` in toolhost), or
//! a dropped connection — is resumed as the official SDKs do: within an MCP
//! session of 2025-03-26 … 2025-11-25, the client waits the server's
//! `retry` (1 s if it named none, at most 10 s and never longer than the
//! call's timeout), sends `GET` with the `Last-Event-ID` of the last event
//! it received and reads on until the response; progress callbacks see each
//! report once, and a [`CancelHandle`] still cancels. A refused resume, or
//! three in a row that bring nothing new, end the call with
//! [`ClientError::ResumeFailed`]. In 2026-07-28 a closed stream cancels the
//! call, so nothing is resumed there.

mod answer;
mod builder;
mod call;
mod error;
mod http1;
mod mcp_client;
pub(crate) mod passthrough;
mod resume;
mod rpc;
mod sse;
mod stdio;
mod tools;
mod url;
mod watch;
mod wire;

use std::fmt;
use std::time::Duration;

use serde_json::{json, Map, Value};

pub use crate::child::DEFAULT_MAX_MESSAGE_BYTES;
pub use crate::model::ToolResult;
pub use answer::{Refusal, ServerRequest};
pub use builder::{ClientBuilder, Era};
#[cfg(test)]
pub(crate) use builder::{DEFAULT_CONNECT_TIMEOUT, DEFAULT_SILENCE_TIMEOUT};
pub use call::{CallOptions, CancelHandle, LogMessage, Progress};
pub use error::ClientError;
pub use mcp_client::McpClient;
pub use stdio::{StdioClient, StdioServer};
#[cfg(test)]
pub(crate) use tools::{DEFAULT_MAX_LISTED_TOOLS, DEFAULT_MAX_LISTING_BYTES};

use answer::{CallResult, MAX_INPUT_ROUNDS};
use rpc::{Identity, Mode, Probe};
use watch::Held;
use wire::{Connection, Link, Wire};

use crate::model::cancelled;
use crate::model::method::Method;
use crate::model::{Revision, Tool};

/// The server's self-description: `serverInfo` from `initialize`, or the
/// `io.modelcontextprotocol/serverInfo` stamp of 2026-07-28.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ServerInfo {
    /// The server's name.
    pub name: String,
    /// The server's version.
    pub version: String,
}

impl ServerInfo {
    fn from_json(value: Option<&Value>) -> Option<ServerInfo> {
        let value = value?;
        Some(ServerInfo {
            name: value.get("name")?.as_str()?.to_owned(),
            version: value
                .get("version")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned(),
        })
    }
}

/// What a built client needs to reach its server.
#[derive(Clone)]
pub(crate) struct Settings {
    target: url::Target,
    /// `Host` and the user's headers, already `Name: value\r\n` lines.
    fixed_headers: Vec<u8>,
    timeout: Duration,
    connect_timeout: Duration,
    identity: Identity,
    /// The largest message read from the server.
    max_message_bytes: usize,
    /// The bound on one listing of tools.
    listing: tools::ListingBound,
    /// Who hears of list changes, wherever they arrive.
    on_tools_changed: Option<stdio::Callback>,
    /// Whether the client holds its MCP session's standalone stream.
    standalone_stream: bool,
}

/// The fixed headers carry credentials: only their names are shown (and
/// the target's path with any capability token redacted).
impl fmt::Debug for Settings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = String::from_utf8_lossy(&self.fixed_headers);
        let names: Vec<&str> = text
            .split("\r\n")
            .filter_map(|line| line.split_once(':').map(|(name, _)| name))
            .collect();
        f.debug_struct("Settings")
            .field("target", &self.target)
            .field("headers", &names)
            .field("timeout", &self.timeout)
            .field("connect_timeout", &self.connect_timeout)
            .field("identity", &self.identity)
            .finish()
    }
}

/// A connected MCP client. One request at a time; create one per thread for
/// parallel calls.
///
/// ```
/// use serde_json::json;
/// use toolhost::client::{Client, Era};
/// use toolhost::{HostConfig, StaticSurface, Tool, ToolHost, ToolOutcome};
///
/// let host = ToolHost::bind(HostConfig::default().server_name("demo"))?;
/// let session = host.open_session(StaticSurface::new().tool(
///     Tool::new("add", "Adds a and b."),
///     |args, _| ToolOutcome::json(json!({"sum": args["a"].as_i64().unwrap_or(0) + args["b"].as_i64().unwrap_or(0)})),
/// )?);
/// let mut client = Client::builder(&session.url())
///     .header("Authorization", &session.authorization())
///     .era(Era::Stateful)
///     .connect()?;
/// assert_eq!(client.server_info().map(|s| s.name.as_str()), Some("demo"));
/// client.ping()?;
/// let result = client.call_tool("add", json!({"a": 2, "b": 3}))?;
/// assert_eq!(result.structured_content, Some(json!({"sum": 5})));
/// client.close()?; // DELETE ends the MCP session
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Client {
    wire: Wire,
    mode: Mode,
    server: Option<ServerInfo>,
    instructions: Option<String>,
    /// The standalone stream the client holds
    /// ([`ClientBuilder::standalone_stream`]), once opened; `Err` once
    /// the server refused it, which is not asked again.
    standalone: Option<Result<Held, ClientError>>,
}

impl Client {
    /// Connects to `url` with the default settings ([`Era::Auto`], no
    /// credentials). Use [`Client::builder`] for headers, timeouts or the era.
    ///
    /// # Errors
    /// As [`ClientBuilder::connect`].
    pub fn connect(url: &str) -> Result<Client, ClientError> {
        ClientBuilder::new(url).connect()
    }

    /// Settings for a client of `url`, e.g. `http://127.0.0.1:PORT/mcp`.
    pub fn builder(url: &str) -> ClientBuilder {
        ClientBuilder::new(url)
    }

    fn start(settings: Settings, era: Era) -> Result<Client, ClientError> {
        let conn = Connection::open(
            &settings.target.addrs,
            settings.connect_timeout,
            settings.timeout,
        )?;
        let mut client = Client {
            wire: Wire {
                settings,
                link: Link::new(conn),
                next_id: 1,
            },
            mode: Mode::Stateless,
            server: None,
            instructions: None,
            standalone: None,
        };
        match era {
            Era::Stateless => {}
            Era::Stateful => client.initialize()?,
            Era::Auto => client.probe()?,
        }
        client.hold_standalone();
        Ok(client)
    }

    /// Opens the MCP session's standalone stream when the client is to
    /// hold it and does not (it ended, or was never opened), unless the
    /// server refused it before. Never fails the caller: without the
    /// stream the client works as one that never asked for it.
    fn hold_standalone(&mut self) {
        if !self.wire.settings.standalone_stream
            || !matches!(
                self.mode,
                Mode::Stateful {
                    session_id: Some(_),
                    ..
                }
            )
        {
            return;
        }
        match &self.standalone {
            Some(Ok(held)) if held.is_open() => return,
            Some(Err(_)) => return,
            _ => {}
        }
        self.standalone = Some(Held::open(&self.wire.settings, &self.mode));
    }

    /// Whether the client holds its MCP session's standalone stream open
    /// right now ([`ClientBuilder::standalone_stream`]): `false` for a
    /// client that did not ask for it, in 2026-07-28, without an MCP
    /// session, or when the server refused it or ended it (until the
    /// next tool call opens it again).
    pub fn holds_standalone_stream(&self) -> bool {
        matches!(&self.standalone, Some(Ok(held)) if held.is_open())
    }

    /// `server/discover` in the stateless shape; its verdict decides the era.
    fn probe(&mut self) -> Result<(), ClientError> {
        let outcome = self
            .wire
            .request(
                Some(&Mode::Stateless),
                Method::Discover,
                Map::new(),
                None,
                None,
            )
            .map(|answer| answer.result);
        match rpc::probe_verdict(outcome)? {
            Probe::Stateless(result) => {
                self.server = ServerInfo::from_json(
                    result.get("_meta").and_then(|m| m.get(rpc::META_SERVER)),
                );
                self.instructions = text_field(&result, "instructions");
                Ok(())
            }
            Probe::Handshake => self.initialize(),
        }
    }

    /// `initialize` then `notifications/initialized`.
    fn initialize(&mut self) -> Result<(), ClientError> {
        let params = rpc::initialize_params(&self.wire.settings.identity);
        let answer = self
            .wire
            .request(None, Method::Initialize, params, None, None)?;
        let revision =
            rpc::negotiated_revision(&answer.result, self.wire.settings.identity.offered)?;
        self.server = ServerInfo::from_json(answer.result.get("serverInfo"));
        self.instructions = text_field(&answer.result, "instructions");
        self.mode = Mode::Stateful {
            revision,
            session_id: answer.session_id,
        };
        self.wire
            .notify(&self.mode, Method::Initialized, json!({}))?;
        if let Some(level) = self.wire.settings.identity.log_level {
            let mut params = Map::new();
            params.insert("level".into(), level.as_str().into());
            // A server without logging refuses; the client works on
            // without its messages, as it would without asking.
            match self
                .wire
                .request(Some(&self.mode), Method::SetLogLevel, params, None, None)
            {
                Ok(_) | Err(ClientError::Rpc { .. }) => {}
                Err(other) => return Err(other),
            }
        }
        Ok(())
    }

    /// The era the client speaks: [`Era::Stateful`] or [`Era::Stateless`]
    /// (an [`Era::Auto`] client has settled on one while connecting).
    pub fn era(&self) -> Era {
        match self.mode {
            Mode::Stateful { .. } => Era::Stateful,
            Mode::Stateless => Era::Stateless,
        }
    }

    /// The protocol revision in use: the one `initialize` settled on, or
    /// 2026-07-28.
    pub fn revision(&self) -> Revision {
        match &self.mode {
            Mode::Stateful { revision, .. } => *revision,
            Mode::Stateless => rpc::STATELESS,
        }
    }

    /// The `Mcp-Session-Id` the server issued at `initialize`, if any.
    pub fn session_id(&self) -> Option<&str> {
        match &self.mode {
            Mode::Stateful { session_id, .. } => session_id.as_deref(),
            Mode::Stateless => None,
        }
    }

    /// Who the server says it is, when it said (an explicit
    /// [`Era::Stateless`] client asks nothing before its first request).
    pub fn server_info(&self) -> Option<&ServerInfo> {
        self.server.as_ref()
    }

    /// The server's instructions for the model, when it sent any.
    pub fn instructions(&self) -> Option<&str> {
        self.instructions.as_deref()
    }

    /// Every tool the server lists, following `nextCursor` page by page,
    /// up to [`ClientBuilder::max_listed_tools`] and
    /// [`ClientBuilder::max_listing_bytes`] across all the pages.
    ///
    /// # Errors
    /// Whatever the server refuses ([`ClientError::Rpc`],
    /// [`ClientError::Unauthorized`], …), a fault of the connection,
    /// [`ClientError::Malformed`] for a page that is not a tool list or a
    /// cursor that repeats, or [`ClientError::ListingTooLarge`] for a
    /// listing past the client's bound.
    pub fn list_tools(&mut self) -> Result<Vec<Tool>, ClientError> {
        let bound = self.wire.settings.listing;
        let host = self.wire.settings.target.host_header.clone();
        tools::list_pages(
            |params| {
                self.wire
                    .request(Some(&self.mode), Method::ListTools, params, None, None)
                    .map(|answer| answer.result)
            },
            bound,
            || format!("the MCP server at {host}"),
        )
    }

    /// Calls tool `name` with `arguments` (a JSON object; `null` sends none).
    ///
    /// `Ok` whenever the tool was reached — check
    /// [`is_error`](ToolResult::is_error) for its verdict. `Err` when the call
    /// never got that far (unknown method, invalid params, a refused bearer, …).
    ///
    /// # Errors
    /// [`ClientError::Rpc`] when the server refuses the call itself (its
    /// JSON-RPC error inside), [`ClientError::Unauthorized`],
    /// [`ClientError::Timeout`], a fault of the connection,
    /// [`ClientError::ResumeFailed`] when its event stream ended early and
    /// could not be resumed, or [`ClientError::Malformed`] for an answer
    /// that is not a tool result.
    pub fn call_tool(&mut self, name: &str, arguments: Value) -> Result<ToolResult, ClientError> {
        self.call_tool_with(name, arguments, CallOptions::new())
    }

    /// [`call_tool`](Client::call_tool) with a progress callback, a handler
    /// for what the server asks ([`CallOptions::on_request`]), a cancel
    /// handle or a timeout of its own.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolhost::client::CallOptions;
    /// use toolhost::{HostConfig, StaticSurface, Tool, ToolHost, ToolOutcome};
    ///
    /// let host = ToolHost::bind(HostConfig::default())?;
    /// let session = host.open_session(StaticSurface::new().tool(
    ///     Tool::new("work", "Works."),
    ///     |_, _| ToolOutcome::text("done"),
    /// )?);
    /// let mut reports = Vec::new();
    /// let result = session.client()?.call_tool_with(
    ///     "work",
    ///     json!({}),
    ///     CallOptions::new().on_progress(|p| reports.push(p.progress)),
    /// )?;
    /// assert_eq!(result.text(), "done");
    /// // `reports` holds whatever progress the server streamed (none here).
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// As [`call_tool`](Client::call_tool), [`ClientError::Cancelled`]
    /// once the cancel handle fired, and [`ClientError::Unanswered`] when
    /// the tool asked the client something it could not answer (see
    /// [`CallOptions::on_request`]).
    pub fn call_tool_with(
        &mut self,
        name: &str,
        arguments: Value,
        mut options: CallOptions<'_>,
    ) -> Result<ToolResult, ClientError> {
        if options
            .cancel
            .as_ref()
            .is_some_and(CancelHandle::is_cancelled)
        {
            return Err(ClientError::Cancelled);
        }
        // A 2026-07-28 retry is the same call with the answers added, so
        // the arguments are kept — only when a handler can answer, as
        // without one there is no retry.
        let kept = options.on_request.is_some().then(|| arguments.clone());
        let mut params = call_params(name, arguments);
        let mut rounds = 0;
        loop {
            let result = self.send_call(name, params, &mut options)?;
            let round = match answer::read_call_result(result)? {
                CallResult::Complete(result) => return tools::read_result(result),
                CallResult::InputRequired(round) => round,
            };
            let (Some(handler), Some(arguments)) = (options.on_request.as_mut(), &kept) else {
                return Err(round.unanswered(
                    "the call has no handler for it; pass one with CallOptions::on_request",
                ));
            };
            rounds += 1;
            if rounds > MAX_INPUT_ROUNDS {
                return Err(round.unanswered(format!(
                    "the tool still asked for input after {MAX_INPUT_ROUNDS} rounds of answers, so the client gave up; is it asking in a loop?"
                )));
            }
            params = call_params(name, arguments.clone());
            round.retry(&mut **handler, &mut params)?;
        }
    }

    /// Sends one `tools/call` and returns its result; a cancelled call is
    /// also cancelled on the server where the revision has a message for it.
    fn send_call(
        &mut self,
        name: &str,
        params: Map<String, Value>,
        options: &mut CallOptions<'_>,
    ) -> Result<Value, ClientError> {
        // What the tool sends about no request goes to the standalone
        // stream: it must be open before the tool runs.
        self.hold_standalone();
        let id = self.wire.next_id;
        let outcome = self.wire.request(
            Some(&self.mode),
            Method::CallTool,
            params,
            Some(name),
            Some(options),
        );
        match outcome {
            Ok(answer) => Ok(answer.result),
            Err(ClientError::Cancelled) => {
                if matches!(self.mode, Mode::Stateful { .. }) {
                    // The stateful revisions cancel by notification; the
                    // stateless one by the closed stream alone. Best effort:
                    // the call is cancelled on this side either way.
                    let params = cancelled::params(id, "cancelled by the client");
                    let _ = self.wire.notify(&self.mode, Method::Cancelled, params);
                }
                Err(ClientError::Cancelled)
            }
            Err(other) => Err(other),
        }
    }

    /// Checks the server answers `ping`. Stateful era only: 2026-07-28 has no
    /// `ping` (a [`ClientError::NotInEra`] says so without a request).
    ///
    /// # Errors
    /// [`ClientError::NotInEra`] in the stateless era; otherwise whatever
    /// stopped the server from answering.
    pub fn ping(&mut self) -> Result<(), ClientError> {
        if self.mode == Mode::Stateless {
            return Err(ClientError::NotInEra {
                operation: Method::Ping.name(),
                hint: "check the server with list_tools() instead, or connect with Era::Stateful",
            });
        }
        self.wire
            .request(Some(&self.mode), Method::Ping, Map::new(), None, None)
            .map(drop)
    }

    /// Ends the client. In the stateful era with a session id, sends
    /// `DELETE` so the server can drop the MCP session (a server that
    /// answers 404 or 405 — already gone, or no explicit end — is fine).
    /// Dropping a client only closes its connection.
    ///
    /// # Errors
    /// Whatever the server answered to `DELETE` other than success, 404 or 405.
    pub fn close(mut self) -> Result<(), ClientError> {
        let Mode::Stateful {
            session_id: Some(_),
            ..
        } = &self.mode
        else {
            return Ok(());
        };
        let headers = rpc::mcp_headers(Some(&self.mode), "", None);
        self.wire
            .exchange("DELETE", &headers, b"", |head, body, _| {
                wire::drain_for_status(head, body, &[404, 405])
            })
    }
}

/// The params of `tools/call`: the tool's name and its arguments (`null`
/// sends none).
pub(crate) fn call_params(name: &str, arguments: Value) -> Map<String, Value> {
    let mut params = Map::new();
    params.insert("name".into(), name.into());
    if !arguments.is_null() {
        params.insert("arguments".into(), arguments);
    }
    params
}

/// A string field of a result.
fn text_field(value: &Value, key: &str) -> Option<String> {
    value.get(key).and_then(Value::as_str).map(str::to_owned)
}
