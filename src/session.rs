//! The guard an application holds for each published surface: what an
//! agent needs to connect (URL, bearer, ready-made configurations), the
//! session's counters, and revocation on drop.

use std::fmt;
use std::fs::OpenOptions;
use std::io::{self, Write};
use std::path::Path;
use std::sync::{Arc, Weak};

use serde_json::Value;

use crate::acp;
use crate::call::session_link::SessionPort;
use crate::call::surface::Adopting;
use crate::call::{SessionLink, ToolSurface};
#[cfg(feature = "client")]
use crate::client::{Client, ClientBuilder, ClientError, Era};
use crate::crypto::hex;
use crate::error::Error;
use crate::event::{emit, Event, EventHook};
use crate::http::HttpConfig;
use crate::mcp::Server;
use crate::runtime::hub::Hub;
use crate::runtime::table::{SessionEntry, SessionTable};

/// Where sessions of one host are reached, shared by its guards: the
/// host's parts a guard uses, and the configuration groups it reads, held
/// as the host holds them (never copied field by field).
pub(crate) struct Endpoint {
    /// `http://HOST:PORT`, no trailing slash.
    pub(crate) origin: String,
    pub(crate) table: Arc<SessionTable>,
    pub(crate) hub: Arc<Hub>,
    /// Who the server says it is (its name, in every client
    /// configuration) and where its events go.
    pub(crate) server: Arc<Server>,
    /// Whether capability URLs are served.
    pub(crate) http: Arc<HttpConfig>,
}

/// One published tool surface and its bearer. Dropping the guard revokes the
/// bearer at once: the next request with it gets 401, and calls still
/// running see [`CallContext::is_cancelled`](crate::CallContext::is_cancelled).
///
/// ```
/// use toolhost::{HostConfig, StaticSurface, ToolHost};
///
/// let host = ToolHost::bind(HostConfig::default())?;
/// let session = host.open_session(StaticSurface::new());
/// assert!(session.authorization().starts_with("Bearer "));
/// assert_eq!(host.open_sessions(), 1);
/// drop(session);
/// assert_eq!(host.open_sessions(), 0);
/// # Ok::<(), toolhost::Error>(())
/// ```
pub struct ToolSession {
    table: Arc<SessionTable>,
    entry: Arc<SessionEntry>,
    endpoint: Arc<Endpoint>,
    token: String,
}

impl ToolSession {
    pub(crate) fn open(endpoint: Arc<Endpoint>, surface: Box<dyn ToolSurface>) -> ToolSession {
        let table = Arc::clone(&endpoint.table);
        // Wrapped so that every question about its tools names this
        // session (see `call::link`).
        let (entry, token) = table.insert(Box::new(Adopting::new(surface)));
        entry.surface.on_open(SessionLink::new(Arc::new(Served {
            hub: Arc::downgrade(&endpoint.hub),
            entry: Arc::downgrade(&entry),
            on_event: endpoint.server.on_event.clone(),
        })));
        ToolSession {
            table,
            entry,
            endpoint,
            token,
        }
    }

    /// The MCP endpoint, e.g. `http://127.0.0.1:40123/mcp`.
    pub fn url(&self) -> String {
        format!("{}/mcp", self.endpoint.origin)
    }

    /// The `Authorization` header value every request must carry:
    /// `Bearer th_…`. A secret: do not log it.
    pub fn authorization(&self) -> String {
        format!("Bearer {}", self.token)
    }

    /// The bare bearer token, `th_…`, for clients configured with the token
    /// rather than the header (`Client::builder(url).bearer(token)`, an
    /// environment variable). A secret: do not log it; `Debug` never shows
    /// it.
    ///
    /// ```
    /// use toolhost::{HostConfig, StaticSurface, ToolHost};
    ///
    /// let host = ToolHost::bind(HostConfig::default())?;
    /// let session = host.open_session(StaticSurface::new());
    /// assert!(session.bearer_token().starts_with("th_"));
    /// assert_eq!(session.authorization(), format!("Bearer {}", session.bearer_token()));
    /// assert!(!format!("{session:?}").contains(session.bearer_token()));
    /// # Ok::<(), toolhost::Error>(())
    /// ```
    pub fn bearer_token(&self) -> &str {
        &self.token
    }

    /// A URL that carries the secret in its path, for clients that cannot
    /// set headers; `None` unless
    /// [`HostConfig::capability_urls`](crate::HostConfig::capability_urls)
    /// enabled them. A secret: do not log it.
    pub fn capability_url(&self) -> Option<String> {
        self.endpoint
            .http
            .capability_urls
            .then(|| format!("{}/cap/{}/mcp", self.endpoint.origin, self.token))
    }

    /// A non-secret identifier of this session, for the application's own
    /// bookkeeping.
    pub fn session_id(&self) -> String {
        hex(&self.entry.locator.to_be_bytes())
    }

    /// How many tool calls reached a handler of this session.
    pub fn calls_served(&self) -> u64 {
        self.entry.calls_served()
    }

    /// How many of the [served](ToolSession::calls_served) calls ended
    /// cancelled ([`OutcomeKind::Cancelled`](crate::OutcomeKind::Cancelled)):
    /// their handler ran but stopped, by the client's cancellation, the
    /// session's end, the deadline or its own choice, with no result.
    /// Calls cancelled while they waited for a slot never reached a
    /// handler and count in neither number.
    pub fn calls_cancelled(&self) -> u64 {
        self.entry.calls_cancelled()
    }

    /// Tells the session's clients that its tool list changed: a
    /// `notifications/tools/list_changed` on every open `GET` stream and
    /// `subscriptions/listen` stream of this session, delivered at once.
    /// Call it after changing what the surface lists.
    pub fn notify_tools_changed(&self) {
        self.endpoint.hub.tools_changed(self.entry.locator);
    }

    /// The `mcpServers` list for an ACP `session/new` request: one HTTP
    /// server entry with this session's URL and bearer header.
    ///
    /// ```
    /// use toolhost::{HostConfig, StaticSurface, ToolHost};
    ///
    /// let host = ToolHost::bind(HostConfig::default().server_name("myapp"))?;
    /// let session = host.open_session(StaticSurface::new());
    /// let servers = session.acp_mcp_servers();
    /// assert_eq!(servers[0]["type"], "http");
    /// assert_eq!(servers[0]["name"], "myapp");
    /// assert_eq!(servers[0]["headers"][0]["name"], "Authorization");
    /// # Ok::<(), toolhost::Error>(())
    /// ```
    pub fn acp_mcp_servers(&self) -> Value {
        acp::mcp_servers(
            &self.endpoint.server.server_name,
            &self.url(),
            &self.authorization(),
        )
    }

    /// The host's server name, which every client configuration names the
    /// server by (see `acp.rs`).
    pub(crate) fn server_name(&self) -> &str {
        &self.endpoint.server.server_name
    }
}

/// The `mcpServers` entry an ACP agent can use, chosen from its
/// `initialize` answer (see [`crate::acp`]).
impl ToolSession {
    /// The `mcpServers` list for the agent whose `initialize` answered
    /// `initialize_result` (the result object, not the whole response): one
    /// entry, HTTP where the agent announced it, stdio otherwise, never
    /// SSE, with `type` on it where the agent speaks ACP v2 (see
    /// [`AgentMcpSupport`](acp::AgentMcpSupport) and the table in
    /// [`crate::acp`]).
    ///
    /// ```
    /// # #[cfg(feature = "client")] {
    /// use serde_json::json;
    /// use toolhost::{HostConfig, StaticSurface, ToolHost};
    ///
    /// toolhost::relay::run_if_requested(); // first thing in main
    /// let host = ToolHost::bind(HostConfig::default().server_name("myapp"))?;
    /// let session = host.open_session(StaticSurface::new());
    ///
    /// let with_http = json!({"protocolVersion": 1,
    ///     "agentCapabilities": {"mcpCapabilities": {"http": true}}});
    /// assert_eq!(session.acp_mcp_servers_for(&with_http)?[0]["type"], "http");
    ///
    /// let stdio_only = json!({"protocolVersion": 1, "agentCapabilities": {}});
    /// let servers = session.acp_mcp_servers_for(&stdio_only)?;
    /// assert!(servers[0].get("type").is_none()); // v1 stdio entries have none
    /// assert_eq!(servers[0]["args"], json!([]));
    /// # }
    /// # Ok::<(), toolhost::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`ToolSession::stdio_relay_entry`], when stdio is the choice.
    pub fn acp_mcp_servers_for(&self, initialize_result: &Value) -> Result<Value, Error> {
        let support = acp::AgentMcpSupport::from_initialize(initialize_result);
        self.acp_mcp_servers_using(support.transport(), initialize_result)
    }

    /// The `mcpServers` list with an entry of the `transport` the
    /// application chose, for an agent that announces less than it takes
    /// or more than it wires up; `initialize_result` still decides whether
    /// the entry carries `type` (pass `&Value::Null` for ACP v1).
    ///
    /// ```
    /// # #[cfg(feature = "client")] {
    /// use serde_json::{json, Value};
    /// use toolhost::acp::McpTransport;
    /// use toolhost::{HostConfig, StaticSurface, ToolHost};
    ///
    /// toolhost::relay::run_if_requested();
    /// let host = ToolHost::bind(HostConfig::default())?;
    /// let session = host.open_session(StaticSurface::new());
    /// let v2 = json!({"protocolVersion": 2, "capabilities": {"session": {"mcp": {"http": {}}}}});
    /// let servers = session.acp_mcp_servers_using(McpTransport::Stdio, &v2)?;
    /// assert_eq!(servers[0]["type"], "stdio");
    /// let servers = session.acp_mcp_servers_using(McpTransport::Http, &Value::Null)?;
    /// assert_eq!(servers, session.acp_mcp_servers());
    /// # }
    /// # Ok::<(), toolhost::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`ToolSession::stdio_relay_entry`], for
    /// [`McpTransport::Stdio`](acp::McpTransport::Stdio).
    pub fn acp_mcp_servers_using(
        &self,
        transport: acp::McpTransport,
        initialize_result: &Value,
    ) -> Result<Value, Error> {
        acp::mcp_servers_using(
            transport,
            &acp::AgentMcpSupport::from_initialize(initialize_result),
            self.server_name(),
            &self.url(),
            &self.authorization(),
        )
    }

    /// The ACP stdio entry (v1 shape, no `type`) that reaches this session
    /// through the stdio relay: `{"name", "command", "args": [], "env":
    /// [{"name", "value"}, …]}`, where `command` is the absolute path of
    /// the running program and `env` carries the session's URL and bearer
    /// ([`URL_VAR`](crate::relay::URL_VAR),
    /// [`AUTHORIZATION_VAR`](crate::relay::AUTHORIZATION_VAR)) —
    /// never the arguments, which `ps` shows to every user. Any MCP stdio
    /// client can start it. The bearer is a secret: do not log the entry.
    ///
    /// ```
    /// # #[cfg(feature = "client")] {
    /// use toolhost::{HostConfig, StaticSurface, ToolHost};
    ///
    /// toolhost::relay::run_if_requested();
    /// let host = ToolHost::bind(HostConfig::default().server_name("myapp"))?;
    /// let session = host.open_session(StaticSurface::new());
    /// let entry = session.stdio_relay_entry()?;
    /// assert_eq!(entry["name"], "myapp");
    /// assert_eq!(entry["command"], std::env::current_exe().unwrap().to_str().unwrap());
    /// assert_eq!(entry["env"][0]["value"], session.url());
    /// # }
    /// # Ok::<(), toolhost::Error>(())
    /// ```
    ///
    /// In a program that never called `run_if_requested`, the entry is
    /// refused, since the copy would run the whole program again:
    ///
    /// ```
    /// # #[cfg(feature = "client")] {
    /// # use toolhost::{HostConfig, StaticSurface, ToolHost};
    /// let host = ToolHost::bind(HostConfig::default())?;
    /// let session = host.open_session(StaticSurface::new());
    /// let refused = session.stdio_relay_entry().unwrap_err();
    /// assert!(refused.to_string().contains("run_if_requested"));
    /// # }
    /// # Ok::<(), toolhost::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::StdioEntry`] when the program has not called
    /// [`run_if_requested`](crate::relay::run_if_requested) (the
    /// copy the agent starts would run the whole program again), when its
    /// path is unknown or not UTF-8, or when toolhost was built without its
    /// `client` feature, which the bridge runs on.
    pub fn stdio_relay_entry(&self) -> Result<Value, Error> {
        acp::stdio_relay_entry(self.server_name(), &self.url(), &self.authorization())
    }
}

/// Client configurations for agents that are not driven over ACP.
impl ToolSession {
    /// Claude Code's MCP configuration: `{"mcpServers": {NAME: {"type":
    /// "http", "url", "headers": {"Authorization"}}}}`, with the bearer in
    /// it. Write it to a file only you can read
    /// ([`write_private_file`]) and start
    /// `claude --mcp-config <that file>`. Never pass the JSON text itself as
    /// the argument, which `--mcp-config` also takes: a command line is in
    /// `/proc/PID/cmdline`, which every user of the machine can read.
    ///
    /// ```
    /// use toolhost::{HostConfig, StaticSurface, ToolHost};
    ///
    /// let host = ToolHost::bind(HostConfig::default().server_name("myapp"))?;
    /// let session = host.open_session(StaticSurface::new());
    /// let config = session.claude_code_config();
    /// let server = &config["mcpServers"]["myapp"];
    /// assert_eq!(server["type"], "http");
    /// assert_eq!(server["url"], session.url());
    /// assert_eq!(server["headers"]["Authorization"], session.authorization());
    ///
    /// let dir = std::env::temp_dir().join(format!("myapp-{}", session.session_id()));
    /// std::fs::create_dir(&dir)?;
    /// let file = dir.join("claude.mcp.json");
    /// toolhost::write_private_file(&file, config.to_string().as_bytes())?; // 0600
    /// // then: Command::new("claude").arg("--mcp-config").arg(&file)
    /// # std::fs::remove_dir_all(&dir)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn claude_code_config(&self) -> Value {
        acp::claude_code_config(self.server_name(), &self.url(), &self.authorization())
    }

    /// Copilot CLI's MCP configuration: `{"mcpServers": {NAME: {"type":
    /// "http", "url", "headers": {"Authorization"}, "tools": ["*"]}}}`,
    /// with the bearer in it. Write it to a file only you can read
    /// ([`write_private_file`]) and start
    /// `copilot --additional-mcp-config @<that file>`: the `@` makes Copilot
    /// CLI read the file, adding its servers to the user's for that run
    /// only. Never pass the JSON text itself, which the flag also takes: a
    /// command line is in `/proc/PID/cmdline`, which every user of the
    /// machine can read.
    ///
    /// ```
    /// use toolhost::{HostConfig, StaticSurface, ToolHost};
    ///
    /// let host = ToolHost::bind(HostConfig::default().server_name("myapp"))?;
    /// let session = host.open_session(StaticSurface::new());
    /// let config = session.copilot_cli_config();
    /// let server = &config["mcpServers"]["myapp"];
    /// assert_eq!(server["type"], "http");
    /// assert_eq!(server["url"], session.url());
    /// assert_eq!(server["headers"]["Authorization"], session.authorization());
    /// # Ok::<(), toolhost::Error>(())
    /// ```
    pub fn copilot_cli_config(&self) -> Value {
        acp::copilot_cli_config(self.server_name(), &self.url(), &self.authorization())
    }

    /// Gemini CLI's MCP configuration: `{"mcpServers": {NAME: {"httpUrl",
    /// "headers": {"Authorization"}}}}`, with the bearer in it. Write it to
    /// a file only you can read
    /// ([`write_private_file`]) and start
    /// `gemini` with `GEMINI_CLI_SYSTEM_SETTINGS_PATH` naming that file:
    /// Gemini CLI merges its `mcpServers` over the user's and the
    /// project's, server by server, for that run only. (Merged into a
    /// `settings.json` of your own, the file holds the bearer too: keep it
    /// `0600`.)
    ///
    /// ```
    /// use toolhost::{HostConfig, StaticSurface, ToolHost};
    ///
    /// let host = ToolHost::bind(HostConfig::default().server_name("myapp"))?;
    /// let session = host.open_session(StaticSurface::new());
    /// let config = session.gemini_cli_config();
    /// let server = &config["mcpServers"]["myapp"];
    /// assert_eq!(server["httpUrl"], session.url());
    /// assert_eq!(server["headers"]["Authorization"], session.authorization());
    /// # Ok::<(), toolhost::Error>(())
    /// ```
    pub fn gemini_cli_config(&self) -> Value {
        acp::gemini_cli_config(self.server_name(), &self.url(), &self.authorization())
    }

    /// VS Code's MCP configuration: the content of a workspace's
    /// `.vscode/mcp.json` (or of the user profile's `mcp.json`), with the
    /// bearer in it, so the file must be readable by you alone
    /// ([`write_private_file`]).
    ///
    /// ```
    /// use toolhost::{HostConfig, StaticSurface, ToolHost};
    ///
    /// let host = ToolHost::bind(HostConfig::default().server_name("myapp"))?;
    /// let session = host.open_session(StaticSurface::new());
    /// let config = session.vscode_config();
    /// let server = &config["servers"]["myapp"];
    /// assert_eq!(server["type"], "http");
    /// assert_eq!(server["url"], session.url());
    /// assert_eq!(server["headers"]["Authorization"], session.authorization());
    /// # Ok::<(), toolhost::Error>(())
    /// ```
    pub fn vscode_config(&self) -> Value {
        acp::vscode_config(self.server_name(), &self.url(), &self.authorization())
    }

    /// Codex's MCP configuration: a `[mcp_servers.NAME]` TOML table with
    /// `url` and the bearer as a literal `http_headers` value, for a
    /// `config.toml` only you can read (`~/.codex/config.toml` is often
    /// readable by others: check its mode before appending). To keep the
    /// bearer out of every file, start Codex with the token in an
    /// environment variable and name the variable instead, as
    /// `examples/serve.rs` prints it: `-c mcp_servers.NAME.url="URL" -c
    /// mcp_servers.NAME.bearer_token_env_var="VAR"`, with `VAR` set to
    /// [`ToolSession::bearer_token`] in the environment Codex starts with
    /// (`Command::env`, never an argument: a command line is readable by
    /// every user in `/proc/PID/cmdline`, an environment only by its owner).
    ///
    /// ```
    /// use toolhost::{HostConfig, StaticSurface, ToolHost};
    ///
    /// let host = ToolHost::bind(HostConfig::default().server_name("myapp"))?;
    /// let session = host.open_session(StaticSurface::new());
    /// let toml = session.codex_config_toml();
    /// assert!(toml.starts_with("[mcp_servers.myapp]\n"));
    /// assert!(toml.contains(&format!("url = \"{}\"\n", session.url())));
    /// # Ok::<(), toolhost::Error>(())
    /// ```
    pub fn codex_config_toml(&self) -> String {
        acp::codex_config_toml(self.server_name(), &self.url(), &self.authorization())
    }
}

/// Writes `contents` to a new file at `path` that only the current user
/// can read or write: the way to hand an agent a configuration that holds
/// a bearer ([`ToolSession::claude_code_config`] and its siblings).
///
/// A bearer never belongs on a command line: `/proc/PID/cmdline` (and so
/// `ps`) shows every process's arguments to every user of the machine,
/// whereas a file of mode `0600`, or a process's environment, only its
/// owner can read. On Unix the file is created with mode `0600`; elsewhere
/// with the platform's defaults (on Windows, the permissions of the folder
/// it is created in: the user's own profile or temporary folder keeps it
/// private). The file must not exist yet — an existing path is refused
/// rather than followed, since it could be a link planted by another user
/// — so write into a directory of your own, or remove the old file first.
///
/// ```
/// let dir = std::env::temp_dir().join(format!("write-private-{}", std::process::id()));
/// std::fs::create_dir(&dir)?;
/// let file = dir.join("secret.json");
/// toolhost::write_private_file(&file, b"{}")?;
/// #[cfg(unix)]
/// {
///     use std::os::unix::fs::PermissionsExt;
///     assert_eq!(std::fs::metadata(&file)?.permissions().mode() & 0o777, 0o600);
/// }
/// assert!(toolhost::write_private_file(&file, b"{}").is_err()); // never overwritten
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), std::io::Error>(())
/// ```
///
/// # Errors
/// Whatever creating or writing the file fails with; `AlreadyExists` when
/// `path` exists.
pub fn write_private_file(path: impl AsRef<Path>, contents: &[u8]) -> io::Result<()> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(path)?.write_all(contents)
}

/// The crate's own client, connected to this session: for tests and
/// scripts.
#[cfg(feature = "client")]
impl ToolSession {
    /// A client connected to this session, speaking 2026-07-28 (which the
    /// host always serves, so no probe is needed). For the stateful era or
    /// other settings, start from [`ToolSession::client_builder`].
    ///
    /// ```
    /// use serde_json::json;
    /// use toolhost::{HostConfig, StaticSurface, Tool, ToolHost, ToolOutcome};
    ///
    /// let host = ToolHost::bind(HostConfig::default())?;
    /// let session = host.open_session(StaticSurface::new().tool(
    ///     Tool::new("echo", "Echoes text."),
    ///     |args, _| ToolOutcome::text(args["text"].as_str().unwrap_or("")),
    /// )?);
    /// let mut client = session.client()?;
    /// assert_eq!(client.call_tool("echo", json!({"text": "hi"}))?.text(), "hi");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// As [`ClientBuilder::connect`]: the host shut down, most likely.
    pub fn client(&self) -> Result<Client, ClientError> {
        self.client_builder().connect()
    }

    /// A [`ClientBuilder`] with this session's URL and authorization, set to
    /// [`Era::Stateless`]; change what the test needs.
    ///
    /// ```
    /// use toolhost::client::Era;
    /// use toolhost::{HostConfig, StaticSurface, ToolHost};
    ///
    /// let host = ToolHost::bind(HostConfig::default())?;
    /// let session = host.open_session(StaticSurface::new());
    /// let mut client = session.client_builder().era(Era::Stateful).connect()?;
    /// client.ping()?;
    /// assert!(client.session_id().is_some());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn client_builder(&self) -> ClientBuilder {
        ClientBuilder::new(&self.url())
            .header("Authorization", &self.authorization())
            .era(Era::Stateless)
    }
}

impl fmt::Debug for ToolSession {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolSession")
            .field("url", &self.url())
            .field("calls_served", &self.calls_served())
            .finish_non_exhaustive()
    }
}

/// What a surface holds of a session that serves it: weak handles, so
/// that a surface kept alive elsewhere never keeps the session (and the
/// session's entry, which owns the surface, never forms a cycle with it).
struct Served {
    hub: Weak<Hub>,
    entry: Weak<SessionEntry>,
    on_event: Option<EventHook>,
}

impl Served {
    fn open_entry(&self) -> Option<Arc<SessionEntry>> {
        self.entry.upgrade().filter(|entry| !entry.is_revoked())
    }
}

impl SessionPort for Served {
    fn tools_changed(&self) -> bool {
        match (self.open_entry(), self.hub.upgrade()) {
            (Some(entry), Some(hub)) => {
                hub.tools_changed(entry.locator);
                true
            }
            _ => false,
        }
    }

    fn is_open(&self) -> bool {
        self.open_entry().is_some() && self.hub.strong_count() > 0
    }

    fn report(&self, event: Event) {
        emit(self.on_event.as_ref(), || event);
    }
}

impl Drop for ToolSession {
    fn drop(&mut self) {
        self.table.revoke(self.entry.locator);
        self.endpoint.hub.session_closed(self.entry.locator);
    }
}
