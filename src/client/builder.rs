//! Setting a client up: the URL, credentials, timeouts, who it says it is,
//! and which protocol era it speaks. Every setting has a working default, so
//! `Client::connect(url)` is the whole setup for an open endpoint.

use std::fmt::{self, Write};
use std::time::Duration;

use serde_json::{json, Value};

use super::error::ClientError;
use super::rpc::Identity;
use super::stdio::Callback;
use super::tools::ListingBound;
use super::{url, Client, Settings};
use crate::child::DEFAULT_MAX_MESSAGE_BYTES;
use crate::model::{LogLevel, Revision};

/// The default of [`ClientBuilder::timeout`] and
/// [`StdioServer::timeout`](super::StdioServer::timeout): how long a server
/// may stay silent while the client waits for its answer.
pub(crate) const DEFAULT_SILENCE_TIMEOUT: Duration = Duration::from_secs(60);
/// The default of [`ClientBuilder::connect_timeout`].
pub(crate) const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Which generation of MCP the client speaks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Era {
    /// The `initialize` handshake (offering 2025-11-25, or what
    /// [`ClientBuilder::revision`] says), then
    /// `Mcp-Session-Id` and `MCP-Protocol-Version` on every request, and
    /// `DELETE` on [`Client::close`]. What today's agents speak.
    Stateful,
    /// 2026-07-28: no handshake; every request carries the version and the
    /// client's capabilities in `_meta` and repeats its method in headers.
    Stateless,
    /// Probe `server/discover` once and go stateless when the server
    /// answers it with 2026-07-28, else fall back to the handshake — what the
    /// official SDKs do by default.
    #[default]
    Auto,
}

/// Settings for a [`Client`]; [`ClientBuilder::connect`] makes the client.
///
/// ```
/// use std::time::Duration;
/// use toolhost::client::{Client, Era};
/// use toolhost::{HostConfig, StaticSurface, ToolHost};
///
/// let host = ToolHost::bind(HostConfig::default())?;
/// let session = host.open_session(StaticSurface::new());
/// let client = Client::builder(&session.url())
///     .header("Authorization", &session.authorization())
///     .era(Era::Stateful)
///     .timeout(Duration::from_secs(10))
///     .client_info("my-test-rig", "0.1.0")
///     .connect()?;
/// assert_eq!(client.era(), Era::Stateful);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// Its `Debug` shows header names, never their values, and a capability
/// URL's token redacted: both are credentials.
#[derive(Clone)]
pub struct ClientBuilder {
    url: String,
    headers: Vec<(String, String)>,
    timeout: Duration,
    connect_timeout: Duration,
    era: Era,
    identity: Identity,
    max_message_bytes: usize,
    listing: ListingBound,
    on_tools_changed: Option<Callback>,
    standalone_stream: bool,
}

impl fmt::Debug for ClientBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.headers.iter().map(|(name, _)| name.as_str()).collect();
        f.debug_struct("ClientBuilder")
            .field("url", &url::redact_capability(&self.url))
            .field("headers", &names)
            .field("timeout", &self.timeout)
            .field("connect_timeout", &self.connect_timeout)
            .field("era", &self.era)
            .field("identity", &self.identity)
            .field("on_tools_changed", &self.on_tools_changed.is_some())
            .field("standalone_stream", &self.standalone_stream)
            .finish()
    }
}

/// Headers the client writes itself; setting them by hand would break the
/// exchange or the protocol.
const MANAGED: [&str; 10] = [
    "host",
    "content-length",
    "content-type",
    "accept",
    "transfer-encoding",
    "connection",
    "mcp-session-id",
    "mcp-protocol-version",
    "mcp-method",
    "mcp-name",
];

impl ClientBuilder {
    pub(crate) fn new(url: &str) -> ClientBuilder {
        ClientBuilder {
            url: url.to_owned(),
            headers: Vec::new(),
            timeout: DEFAULT_SILENCE_TIMEOUT,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            era: Era::Auto,
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            listing: ListingBound::HTTP,
            on_tools_changed: None,
            standalone_stream: false,
            identity: Identity {
                name: "toolhost-client".into(),
                version: env!("CARGO_PKG_VERSION").into(),
                capabilities: json!({}),
                offered: Revision::LATEST_STATEFUL,
                log_level: None,
            },
        }
    }

    /// Sends `Authorization: Bearer <token>` with every request. `token` may
    /// be the bare token or a whole header value that already starts with
    /// `Bearer ` (as [`ToolSession::authorization`](crate::ToolSession::authorization)
    /// returns): the scheme is never sent twice.
    #[must_use]
    pub fn bearer(self, token: &str) -> ClientBuilder {
        let token = token.trim();
        let bare = match token.split_once(' ') {
            Some((scheme, rest)) if scheme.eq_ignore_ascii_case("bearer") => rest.trim_start(),
            _ => token,
        };
        self.header("Authorization", &format!("Bearer {bare}"))
    }

    /// Sends a header with every request, replacing an earlier one of the
    /// same name. For a toolhost session: `.header("Authorization",
    /// &session.authorization())`. The client's own headers (`Host`,
    /// `Content-Type`, `Accept`, the `Mcp-*` headers, …) cannot be set.
    #[must_use]
    pub fn header(mut self, name: &str, value: &str) -> ClientBuilder {
        self.headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    /// How long the server may stay silent while the client waits for an
    /// answer (60 s by default; more than zero). Any bytes from the server —
    /// such as a progress report — start the wait again.
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> ClientBuilder {
        self.timeout = timeout;
        self
    }

    /// The largest message the client reads from the server, in bytes
    /// (16 MiB by default,
    /// [`DEFAULT_MAX_MESSAGE_BYTES`],
    /// the same as a stdio server's; 0 counts as 1): a JSON response body, or one event of
    /// an event stream (a notification, a question, the response). Reading
    /// stops at the limit — nothing past it is buffered — and the request
    /// fails with [`ClientError::TooLarge`]; the connection is dropped and
    /// the next request opens a fresh one.
    #[must_use]
    pub fn max_message_bytes(mut self, bytes: usize) -> ClientBuilder {
        self.max_message_bytes = bytes;
        self
    }

    /// The most tools one listing may hold (4096 by default), all its
    /// pages together ([`Client::list_tools`]): many times what any
    /// server in use lists, and what a model takes in one request. Past
    /// it the listing fails with [`ClientError::ListingTooLarge`],
    /// nothing of it kept and no further page asked for, so a server
    /// cannot fill the client's memory one page at a time.
    #[must_use]
    pub fn max_listed_tools(mut self, tools: usize) -> ClientBuilder {
        self.listing.tools = tools;
        self
    }

    /// The most bytes of tool definitions (as JSON) one listing may hold,
    /// all its pages together (16 MiB by default, as much as one message
    /// may carry: [`max_message_bytes`](ClientBuilder::max_message_bytes)). Past
    /// it the listing fails as past
    /// [`max_listed_tools`](ClientBuilder::max_listed_tools).
    #[must_use]
    pub fn max_listing_bytes(mut self, bytes: usize) -> ClientBuilder {
        self.listing.bytes = bytes;
        self
    }

    /// How long a TCP connect may take (5 s by default; more than zero).
    #[must_use]
    pub fn connect_timeout(mut self, timeout: Duration) -> ClientBuilder {
        self.connect_timeout = timeout;
        self
    }

    /// The protocol era (default [`Era::Auto`]).
    #[must_use]
    pub fn era(mut self, era: Era) -> ClientBuilder {
        self.era = era;
        self
    }

    /// The `clientInfo` the client sends (default `toolhost-client` and the
    /// crate's version).
    #[must_use]
    pub fn client_info(mut self, name: &str, version: &str) -> ClientBuilder {
        name.clone_into(&mut self.identity.name);
        version.clone_into(&mut self.identity.version);
        self
    }

    /// The client capabilities to declare (default `{}`: none), sent at
    /// `initialize` or, in 2026-07-28, with every request. A server asks
    /// the client only what it declared: declare `{"elicitation": {}}`,
    /// `{"sampling": {}}` or `{"roots": {}}` for the questions a call's
    /// [`CallOptions::on_request`](super::CallOptions::on_request) handler
    /// answers. Nothing is declared on its own, so a test also sees how a
    /// server treats a client that cannot be asked.
    #[must_use]
    pub fn capabilities(mut self, capabilities: Value) -> ClientBuilder {
        self.identity.capabilities = capabilities;
        self
    }

    /// Asks the server for log messages at `level` and above: with
    /// `logging/setLevel` after `initialize` (a server without logging may
    /// refuse; that is let pass), or, in 2026-07-28, in every request's
    /// `_meta`. A call hands them to
    /// [`CallOptions::on_log`](super::CallOptions::on_log). Default: none asked for.
    #[must_use]
    pub fn log_level(mut self, level: LogLevel) -> ClientBuilder {
        self.identity.log_level = Some(level);
        self
    }

    /// The revision the stateful era's `initialize` offers (default
    /// [`Revision::LATEST_STATEFUL`]); the server may settle on an older
    /// one. For seeing how a server treats clients of an older revision.
    /// 2026-07-28 has no handshake: speak it with [`Era::Stateless`].
    ///
    /// ```
    /// use toolhost::client::Era;
    /// use toolhost::{HostConfig, Revision, StaticSurface, ToolHost};
    ///
    /// let host = ToolHost::bind(HostConfig::default())?;
    /// let session = host.open_session(StaticSurface::new());
    /// let client = session
    ///     .client_builder()
    ///     .era(Era::Stateful)
    ///     .revision(Revision::V2025_06_18)
    ///     .connect()?;
    /// assert_eq!(client.revision(), Revision::V2025_06_18);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn revision(mut self, revision: Revision) -> ClientBuilder {
        self.identity.offered = revision;
        self
    }

    /// Calls `callback` at each `notifications/tools/list_changed` the
    /// server sends on a tool call's event stream, or on the MCP session's
    /// standalone stream while the client holds it
    /// ([`standalone_stream`](ClientBuilder::standalone_stream)) — as
    /// [`StdioServer::on_tools_changed`](super::StdioServer::on_tools_changed)
    /// hears every one a stdio server writes, whatever the call. It runs on
    /// the thread that read the notification, which waits for it (the
    /// caller's, mid-call): keep it short, and list the tools again
    /// elsewhere or after the call. Clones of the builder share it.
    /// [`Client::watch_tools_changed`] hears the standalone stream with a
    /// callback of its own.
    #[must_use]
    pub fn on_tools_changed(
        mut self,
        callback: impl Fn() + Send + Sync + 'static,
    ) -> ClientBuilder {
        self.on_tools_changed = Some(std::sync::Arc::new(callback));
        self
    }

    /// Holds the MCP session's standalone stream (`GET`) open while the
    /// client lives (off by default), on a connection and a thread of its
    /// own, as the official SDKs' clients do. A server sends there what
    /// belongs to no request: a `ping` a tool sends without naming its
    /// call (the Python SDK's `ctx.session.send_ping()`), which the client
    /// answers with `{}` — its call would otherwise wait for an answer
    /// that never comes — and list changes, which go to
    /// [`on_tools_changed`](ClientBuilder::on_tools_changed); any other
    /// request there is refused ("method not found": no call is there to
    /// answer it). Over stdio every message arrives on the one pipe, so a
    /// [`StdioClient`](super::StdioClient) needs no such setting.
    ///
    /// The stream is opened once `initialize` is done, and again before a
    /// tool call when it ended (a server that ends silent streams, or a
    /// dropped connection); once the server refused it (405: it has none)
    /// or it could not be opened, it is not asked for again, and
    /// [`Client::holds_standalone_stream`] says so. Only in an MCP session of the stateful era: 2026-07-28 has no
    /// standalone stream. It costs one of the server's streams per client
    /// (a toolhost host serves 256), so it is asked for, not given; a
    /// client that holds it needs no [`Client::watch_tools_changed`] (a
    /// server may allow one standalone stream per session).
    ///
    /// ```
    /// use toolhost::client::Era;
    /// use toolhost::{HostConfig, ToolHost, ToolRegistry};
    ///
    /// let host = ToolHost::bind(HostConfig::default())?;
    /// let session = host.open_session(ToolRegistry::new());
    /// let client = session
    ///     .client_builder()
    ///     .era(Era::Stateful)
    ///     .standalone_stream(true)
    ///     .on_tools_changed(|| eprintln!("the tools changed: list them again"))
    ///     .connect()?;
    /// assert!(client.holds_standalone_stream());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn standalone_stream(mut self, hold: bool) -> ClientBuilder {
        self.standalone_stream = hold;
        self
    }

    /// Checks the settings, connects, and (per the era) performs the
    /// handshake or the `server/discover` probe.
    ///
    /// # Errors
    /// [`ClientError::InvalidUrl`] or [`ClientError::InvalidConfig`] for
    /// settings that cannot work, [`ClientError::Connect`] when nothing
    /// accepts the connection, and any error of the handshake (a refused
    /// bearer is [`ClientError::Unauthorized`]).
    pub fn connect(self) -> Result<Client, ClientError> {
        let era = self.era;
        Client::start(self.settings()?, era)
    }

    /// Checks the settings and resolves the URL, connecting nowhere yet.
    pub(crate) fn settings(self) -> Result<Settings, ClientError> {
        let target = url::parse(&self.url)?;
        let mut fixed = format!("Host: {}\r\n", target.host_header);
        for (name, value) in &self.headers {
            check_header(name, value)?;
            let _ = write!(fixed, "{name}: {value}\r\n");
        }
        if !self.identity.capabilities.is_object() {
            return Err(ClientError::InvalidConfig {
                problem: format!(
                    "capabilities must be a JSON object, got {}",
                    self.identity.capabilities
                ),
            });
        }
        if self.identity.offered.is_stateless() {
            return Err(ClientError::InvalidConfig {
                problem: format!(
                    "{} has no initialize to offer it in; speak it with .era(Era::Stateless)",
                    self.identity.offered
                ),
            });
        }
        for (setting, value) in [
            ("ClientBuilder::timeout", self.timeout),
            ("ClientBuilder::connect_timeout", self.connect_timeout),
        ] {
            if value.is_zero() {
                return Err(ClientError::InvalidConfig {
                    problem: format!("{setting} must be longer than zero"),
                });
            }
        }
        Ok(Settings {
            target,
            fixed_headers: fixed.into_bytes(),
            timeout: self.timeout,
            connect_timeout: self.connect_timeout,
            identity: self.identity,
            max_message_bytes: self.max_message_bytes.max(1),
            listing: self.listing,
            on_tools_changed: self.on_tools_changed,
            standalone_stream: self.standalone_stream,
        })
    }
}

fn check_header(name: &str, value: &str) -> Result<(), ClientError> {
    let token = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b));
    if !token {
        return Err(ClientError::InvalidConfig {
            problem: format!("{name:?} is not a valid header name"),
        });
    }
    if MANAGED.iter().any(|m| m.eq_ignore_ascii_case(name)) {
        return Err(ClientError::InvalidConfig {
            problem: format!("the {name} header is written by the client itself and cannot be set"),
        });
    }
    if value.bytes().any(|b| b == b'\r' || b == b'\n' || b == 0) {
        return Err(ClientError::InvalidConfig {
            problem: format!("the value of header {name} holds a line break or NUL"),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_that_would_break_the_request_are_refused_before_connecting() {
        for (name, value, why) in [
            ("X-Bad", "a\r\nInjected: 1", "line break"),
            ("Bad Name", "v", "not a valid header name"),
            ("", "v", "not a valid header name"),
            ("content-length", "3", "written by the client"),
            ("MCP-Session-Id", "x", "written by the client"),
        ] {
            let err = ClientBuilder::new("http://127.0.0.1:1/mcp")
                .header(name, value)
                .connect()
                .unwrap_err();
            assert!(
                matches!(err, ClientError::InvalidConfig { .. }) && err.to_string().contains(why),
                "{name}: {err}"
            );
        }
    }

    #[test]
    fn a_later_header_replaces_an_earlier_one_of_the_same_name() {
        let builder = ClientBuilder::new("http://127.0.0.1:1/")
            .bearer("a")
            .header("authorization", "Bearer b");
        assert_eq!(
            builder.headers,
            [("authorization".to_owned(), "Bearer b".to_owned())]
        );
    }

    #[test]
    fn bearer_takes_the_token_with_or_without_its_scheme() {
        for given in [
            "th_abc",
            "Bearer th_abc",
            "bearer  th_abc",
            " BEARER th_abc ",
        ] {
            let builder = ClientBuilder::new("http://127.0.0.1:1/").bearer(given);
            assert_eq!(
                builder.headers,
                [("Authorization".to_owned(), "Bearer th_abc".to_owned())],
                "{given:?}"
            );
        }
        let other = ClientBuilder::new("http://127.0.0.1:1/").bearer("Bearerth_abc");
        assert_eq!(other.headers[0].1, "Bearer Bearerth_abc");
    }

    #[test]
    fn capabilities_must_be_an_object_and_timeouts_positive() {
        let err = ClientBuilder::new("http://127.0.0.1:1/")
            .capabilities(json!([]))
            .connect()
            .unwrap_err();
        assert!(err.to_string().contains("capabilities"), "{err}");
        for (builder, setting) in [
            (
                ClientBuilder::new("http://127.0.0.1:1/").timeout(Duration::ZERO),
                "ClientBuilder::timeout must be longer than zero",
            ),
            (
                ClientBuilder::new("http://127.0.0.1:1/").connect_timeout(Duration::ZERO),
                "ClientBuilder::connect_timeout must be longer than zero",
            ),
        ] {
            let err = builder.connect().unwrap_err();
            assert!(
                matches!(err, ClientError::InvalidConfig { .. })
                    && err.to_string().contains(setting),
                "{err}"
            );
        }
    }

    #[test]
    fn the_stateless_revision_cannot_be_offered_at_initialize() {
        let err = ClientBuilder::new("http://127.0.0.1:1/")
            .revision(Revision::V2026_07_28)
            .connect()
            .unwrap_err();
        assert!(
            matches!(err, ClientError::InvalidConfig { .. })
                && err.to_string().contains("Era::Stateless"),
            "{err}"
        );
    }
}
