//! MCP over a child process's stdin and stdout: newline-delimited
//! JSON-RPC, the transport most MCP servers in the wild speak.
//!
//! [`StdioServer`] says how to start the server; [`StdioClient`] is the
//! running server and the client of it. The child leads a process group of
//! its own (`crate::child`), so that a launcher such as `npx` and the server
//! it starts end together. One reader thread takes every line the server
//! writes and routes it (`route.rs`): responses by id, progress by token,
//! questions and log messages to the one call in flight. Calls therefore
//! run side by side from any number of threads, over the one process; each
//! waits on a channel of its own, and runs its callbacks on its own thread.
//!
//! There is no MCP session id and no HTTP: the conversation is the process.
//! The `initialize` handshake offers the newest stateful revision the
//! client speaks; the server answers with the one it will speak, and a
//! server that refuses the offer outright is offered the older ones in turn.

mod oversized_line;
mod route;
mod server;

use std::fmt;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Map, Value};

pub use server::StdioServer;

use route::{Delivery, Router};

use super::answer::{response_body, Refusal};
use super::call::CallOptions;
use super::error::ClientError;
use super::rpc::{self, Identity, Mode};
use super::tools;
use super::ToolResult;
use super::{call_params, ServerInfo};
use crate::child::{Group, Input, Watch};
use crate::model::cancelled;
use crate::model::jsonrpc::RpcError;
use crate::model::method::Method;
use crate::model::{Revision, Tool};
use crate::sync::lock;

/// A callback of the reader thread.
pub(super) type Callback = Arc<dyn Fn() + Send + Sync>;

/// Who the child is, in the messages of a broken pipe.
const WHO: &str = "the MCP server";

/// Keys of the cancel handles' wakers, unique in the process: one handle
/// may serve calls of several clients.
static NEXT_WAKER: AtomicU64 = AtomicU64::new(1);

/// A running stdio MCP server and the client of it, made by
/// [`StdioServer::connect`]. Its methods take `&self`: calls from several
/// threads run side by side over the one process.
///
/// Dropping it closes the server's stdin (how MCP's stdio transport says
/// goodbye), gives the server [`StdioServer::exit_grace`] to exit, then
/// ends it and everything it started (`SIGTERM`, then `SIGKILL`) and reaps
/// it: nothing is left running.
///
/// When the server closes its output, or its process exits, every call
/// waiting on it fails with [`ClientError::Closed`] — carrying the exit
/// status (or signal) and the last lines the server wrote to stderr — and so does every
/// later one; connect again to start a new server
/// ([`McpServerLayer`](crate::McpServerLayer) does so by itself). The exit
/// is noticed at once when the output ends with it, and within a tenth of
/// a second when it does not — a launcher such as `npx` killed on its own
/// leaves the real server holding the pipes: the output never ends, but
/// the process the client started is gone, and the rest of its group is
/// then ended too. A message longer than
/// [`StdioServer::max_message_bytes`] is skipped unread and fails the
/// request it answered ([`ClientError::TooLarge`]).
///
/// ```no_run
/// use std::time::Duration;
/// use serde_json::json;
/// use toolhost::client::{CallOptions, CancelHandle, StdioServer};
///
/// let server = StdioServer::new("my-mcp-server").arg("--stdio").connect()?;
/// println!("{:?} speaks {}", server.server_info(), server.revision());
/// let cancel = CancelHandle::new();
/// let result = server.call_tool_with(
///     "build",
///     json!({"target": "all"}),
///     CallOptions::new()
///         .on_progress(|p| println!("{} of {:?}", p.progress, p.total))
///         .cancel_with(&cancel) // cancel() sends notifications/cancelled and returns at once
///         .timeout(Duration::from_secs(600)),
/// )?;
/// println!("{}", result.text());
/// # Ok::<(), toolhost::client::ClientError>(())
/// ```
pub struct StdioClient {
    router: Arc<Router>,
    /// Shared with the thread that watches for the process's exit.
    group: Arc<Mutex<Group>>,
    pid: u32,
    program: String,
    identity: Identity,
    revision: Revision,
    server: Option<ServerInfo>,
    instructions: Option<String>,
    capabilities: Value,
    timeout: Duration,
    listing: tools::ListingBound,
}

impl StdioClient {
    fn start(config: &StdioServer) -> Result<StdioClient, ClientError> {
        if config.timeout.is_zero() {
            // Checked before anything is started: every wait would end at
            // once, so the handshake could only fail.
            return Err(ClientError::InvalidConfig {
                problem: "StdioServer::timeout must be longer than zero".into(),
            });
        }
        let program = config.program();
        let spawn_error = |source| ClientError::Spawn {
            program: program.clone(),
            source,
        };
        let mut command = config.command();
        let (mut group, stdin, stdout, stderr) = Group::spawn(&mut command).map_err(spawn_error)?;
        group.set_exit_grace(config.exit_grace);
        let pid = group.id();
        // From here on, an early return drops `group`, which ends the child.
        let group = Arc::new(Mutex::new(group));
        let input =
            Input::start(stdin, format!("mcp-stdio-input-{pid}"), WHO).map_err(spawn_error)?;
        let router = Arc::new(Router::new(
            Box::new(input),
            config.on_tools_changed.clone(),
            config.on_log.clone(),
        ));
        let on_stderr = config.on_stderr.clone();
        let watch = Watch {
            who: WHO,
            name: format!("mcp-stdio-{pid}"),
            max_line: Arc::new(AtomicUsize::new(config.max_message_bytes)),
            on_stderr: Box::new(move |line| match &on_stderr {
                Some(callback) => callback(line),
                // As if the server shared this process's stderr.
                None => eprintln!("{line}"),
            }),
        };
        let reader = Arc::clone(&router);
        watch
            .start(&group, stdout, stderr, move |item| reader.receive(item))
            .map_err(spawn_error)?;
        let mut client = StdioClient {
            router,
            group,
            pid,
            program,
            identity: config.identity.clone(),
            revision: config.identity.offered,
            server: None,
            instructions: None,
            capabilities: Value::Null,
            timeout: config.timeout,
            listing: config.listing,
        };
        client.initialize()?;
        Ok(client)
    }

    /// `initialize` (offering the newest revision first, then older ones
    /// to a server that refuses), `notifications/initialized`, and
    /// `logging/setLevel` when a level is asked for and the server logs.
    fn initialize(&mut self) -> Result<(), ClientError> {
        let offers = Revision::ALL
            .iter()
            .rev()
            .copied()
            .filter(|r| !r.is_stateless() && *r <= self.identity.offered);
        let mut refused = None;
        for offered in offers {
            let mut identity = self.identity.clone();
            identity.offered = offered;
            let params = rpc::initialize_params(&identity);
            match self.request(Method::Initialize, params, None, self.timeout) {
                Ok(result) => {
                    self.revision = rpc::negotiated_revision(&result, offered)?;
                    self.server = ServerInfo::from_json(result.get("serverInfo"));
                    self.instructions = result
                        .get("instructions")
                        .and_then(Value::as_str)
                        .map(str::to_owned);
                    self.capabilities = result.get("capabilities").cloned().unwrap_or(Value::Null);
                    refused = None;
                    break;
                }
                Err(err @ ClientError::Rpc { .. }) => refused = Some(err),
                Err(other) => return Err(other),
            }
        }
        if let Some(err) = refused {
            return Err(err);
        }
        self.notify(Method::Initialized, json!({}))?;
        if let Some(level) = self.identity.log_level {
            if self.capabilities.get("logging").is_some() {
                let mut params = Map::new();
                params.insert("level".into(), level.as_str().into());
                // A refusal leaves the client working on without messages.
                match self.request(Method::SetLogLevel, params, None, self.timeout) {
                    Ok(_) | Err(ClientError::Rpc { .. }) => {}
                    Err(other) => return Err(other),
                }
            }
        }
        Ok(())
    }

    /// The server's process id, which is also the id of its process group.
    pub fn id(&self) -> u32 {
        self.pid
    }

    /// The revision `initialize` settled on.
    pub fn revision(&self) -> Revision {
        self.revision
    }

    /// Who the server says it is (`serverInfo`).
    pub fn server_info(&self) -> Option<&ServerInfo> {
        self.server.as_ref()
    }

    /// The server's instructions for the model, when it sent any.
    pub fn instructions(&self) -> Option<&str> {
        self.instructions.as_deref()
    }

    /// The capabilities the server declared at `initialize`.
    pub fn server_capabilities(&self) -> &Value {
        &self.capabilities
    }

    /// Why the server is gone — it exited, closed its output or stopped
    /// reading — once it is; `None` while it runs.
    pub fn closed(&self) -> Option<String> {
        self.router.closed()
    }

    /// Every tool the server lists, following `nextCursor` page by page,
    /// up to [`StdioServer::max_listed_tools`] and
    /// [`StdioServer::max_listing_bytes`] across all the pages.
    ///
    /// # Errors
    /// [`ClientError::Rpc`] when the server refuses, [`ClientError::Closed`]
    /// when it is gone, [`ClientError::Timeout`],
    /// [`ClientError::Malformed`] for a page that is not a tool list, or
    /// [`ClientError::ListingTooLarge`] for a listing past the client's
    /// bound.
    pub fn list_tools(&self) -> Result<Vec<Tool>, ClientError> {
        tools::list_pages(
            |params| self.request(Method::ListTools, params, None, self.timeout),
            self.listing,
            || format!("the stdio MCP server {:?}", self.program),
        )
    }

    /// Calls tool `name` with `arguments` (a JSON object; `null` sends
    /// none). `Ok` whenever the tool was reached — check
    /// [`is_error`](ToolResult::is_error) for its verdict.
    ///
    /// # Errors
    /// As [`call_tool_with`](StdioClient::call_tool_with).
    pub fn call_tool(&self, name: &str, arguments: Value) -> Result<ToolResult, ClientError> {
        self.call_tool_with(name, arguments, CallOptions::new())
    }

    /// [`call_tool`](StdioClient::call_tool) with a progress callback, log
    /// callback, a handler for the server's questions, a cancel handle or
    /// a timeout of its own; every callback runs on the calling thread.
    ///
    /// Progress reports come with the call's own token. A log message or a
    /// question of the server reaches the call only while it is the only
    /// call in flight: nothing on a stdio wire says which call a question
    /// belongs to, so with several in flight a question is refused with a
    /// JSON-RPC error and a log message dropped, rather than handed to the
    /// wrong caller. A cancelled call, or one that passes its timeout,
    /// sends `notifications/cancelled` and returns at once.
    ///
    /// # Errors
    /// [`ClientError::Rpc`] when the server refuses the call itself,
    /// [`ClientError::Cancelled`], [`ClientError::Timeout`],
    /// [`ClientError::Closed`] when the server is gone, or
    /// [`ClientError::Malformed`] for an answer that is not a tool result.
    pub fn call_tool_with(
        &self,
        name: &str,
        arguments: Value,
        mut options: CallOptions<'_>,
    ) -> Result<ToolResult, ClientError> {
        let timeout = options.timeout.unwrap_or(self.timeout);
        let result = self.request(
            Method::CallTool,
            call_params(name, arguments),
            Some(&mut options),
            timeout,
        )?;
        tools::read_result(result)
    }

    /// Checks the server answers `ping`.
    ///
    /// # Errors
    /// Whatever stopped the server from answering.
    pub fn ping(&self) -> Result<(), ClientError> {
        self.request(Method::Ping, Map::new(), None, self.timeout)
            .map(drop)
    }

    fn notify(&self, method: Method, params: Value) -> Result<(), ClientError> {
        self.router
            .send(rpc::notification_body(method.name(), params))
            .map_err(|reason| ClientError::Closed { reason })
    }

    /// Sends request `method` and waits for its result, serving what comes
    /// for it meanwhile. `options` makes it a tool call: progress, log
    /// messages, questions and cancellation reach it.
    fn request(
        &self,
        method: Method,
        params: Map<String, Value>,
        options: Option<&mut CallOptions<'_>>,
        timeout: Duration,
    ) -> Result<Value, ClientError> {
        let (deliver, deliveries) = mpsc::channel();
        let call = options.is_some();
        let id = self
            .router
            .register(deliver.clone(), call)
            .map_err(|reason| ClientError::Closed { reason })?;
        let mut waiter = Waiter {
            router: &self.router,
            id,
            cancel: None,
        };
        let mut empty = CallOptions::new();
        let options = options.unwrap_or(&mut empty);
        if let Some(cancel) = &options.cancel {
            let key = NEXT_WAKER.fetch_add(1, Ordering::Relaxed);
            cancel.on_cancel(
                key,
                Box::new(move || {
                    let _ = deliver.send(Delivery::Cancelled);
                }),
            )?;
            waiter.cancel = Some((cancel.clone(), key));
        }
        let token = (call && options.on_progress.is_some()).then(|| json!(id));
        let mode = Mode::Stateful {
            revision: self.revision,
            session_id: None,
        };
        let body = rpc::request_body(
            Some(&mode),
            &self.identity,
            id,
            method.name(),
            params,
            token.as_ref(),
        );
        self.router
            .send(body)
            .map_err(|reason| ClientError::Closed { reason })?;
        loop {
            let delivery = match deliveries.recv_timeout(timeout) {
                Ok(delivery) => delivery,
                Err(RecvTimeoutError::Timeout) => {
                    // `initialize` is the one request MCP forbids to cancel.
                    if method != Method::Initialize {
                        self.cancelled(id, "the client's timeout passed");
                    }
                    return Err(ClientError::Timeout { waited: timeout });
                }
                Err(RecvTimeoutError::Disconnected) => {
                    // Not expected: a sender lives while this waits (the
                    // `deliver` of this function, or the one moved into
                    // the cancel waker, which is forgotten only on return).
                    return Err(ClientError::Closed {
                        reason: "the client's reader stopped".into(),
                    });
                }
            };
            match delivery {
                Delivery::Reply(Ok(result)) => return Ok(result),
                Delivery::Reply(Err(error)) => return Err(rpc_error(error)),
                Delivery::Progress(progress) => {
                    if let Some(callback) = options.on_progress.as_mut() {
                        callback(&progress);
                    }
                }
                Delivery::Log(message) => {
                    if let Some(callback) = options.on_log.as_mut() {
                        callback(&message);
                    }
                }
                Delivery::Ask { id: asked, request } => {
                    let answer = match options.on_request.as_mut() {
                        Some(handler) => handler(&request),
                        None => Err(Refusal::unhandled(&request.method)),
                    };
                    self.router.question_done(&asked);
                    // A withdrawn question's answer is not wanted (MCP: no
                    // response to a cancelled request); a server gone shows
                    // as the end of its output.
                    if request.withdrawn().is_none() {
                        let _ = self.router.send(response_body(&asked, answer));
                    }
                }
                Delivery::Cancelled => {
                    self.cancelled(id, "cancelled by the client");
                    return Err(ClientError::Cancelled);
                }
                Delivery::Closed(reason) => return Err(ClientError::Closed { reason }),
                Delivery::TooLarge { size, limit } => {
                    return Err(ClientError::TooLarge {
                        what: format!("a message from the stdio MCP server {:?}", self.program),
                        size: Some(size),
                        limit,
                        setting: "StdioServer::max_message_bytes",
                    })
                }
            }
        }
    }

    /// Tells the server to stop request `id` (best effort: the call ends
    /// on this side either way).
    fn cancelled(&self, id: u64, reason: &str) {
        self.router.unregister(id);
        let _ = self.notify(Method::Cancelled, cancelled::params(id, reason));
    }
}

/// A request in flight: unregistered, and its cancel waker forgotten, when
/// it ends however it ends.
struct Waiter<'a> {
    router: &'a Router,
    id: u64,
    cancel: Option<(super::CancelHandle, u64)>,
}

impl Drop for Waiter<'_> {
    fn drop(&mut self) {
        self.router.unregister(self.id);
        if let Some((cancel, key)) = &self.cancel {
            cancel.forget(*key);
        }
    }
}

/// The client's error for the server's JSON-RPC error (no HTTP here).
fn rpc_error(error: RpcError) -> ClientError {
    rpc::rpc_error(error, 200)
}

impl Drop for StdioClient {
    fn drop(&mut self) {
        self.router.close_input();
        lock(&self.group).end();
    }
}

impl fmt::Debug for StdioClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StdioClient")
            .field("program", &self.program)
            .field("id", &self.pid)
            .field("revision", &self.revision)
            .field("server", &self.server)
            .field("closed", &self.closed())
            .finish_non_exhaustive()
    }
}
