//! How a host is set up: [`HostConfig`] and its defaults, with the checks
//! that refuse a configuration that cannot work, each naming the fix.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, SocketAddr, ToSocketAddrs};
use std::sync::Arc;
use std::time::Duration;

use crate::error::Error;
use crate::event::Event;
use crate::http::HttpConfig;
use crate::mcp::{CacheHint, CacheScope, Server};
use crate::runtime::RuntimeConfig;

// The defaults. Each setter's doc states its default and unit (and a
// test in `readme.rs` pins that number to the constant here); only the
// bounds a user compares against are public, the rest are the crate's.

/// The default of [`HostConfig::workers`]: 8 worker threads. Public for
/// whoever measures the host against another server given as many threads.
pub const DEFAULT_WORKERS: usize = 8;

/// The default of [`HostConfig::max_concurrent_calls`]: 16 handlers at
/// once, enough for the ten calls an agent may make in one turn. Public
/// because past it calls wait, which a load test sizes its bursts by.
pub const DEFAULT_MAX_CONCURRENT_CALLS: usize = 16;

/// The default of [`HostConfig::max_queued_calls`]: 256 waiting calls.
/// Public because past it calls are refused with HTTP 503.
pub const DEFAULT_MAX_QUEUED_CALLS: usize = 256;

/// The default of [`HostConfig::call_keep_alive`].
pub(crate) const DEFAULT_CALL_KEEP_ALIVE: Duration = Duration::from_secs(1);

/// The default of [`HostConfig::keep_alive`].
pub(crate) const DEFAULT_KEEP_ALIVE: Duration = Duration::from_secs(15);

/// The default of [`HostConfig::report_long_calls`].
pub(crate) const DEFAULT_REPORT_LONG_CALLS: Duration = Duration::from_secs(60);

/// The default of [`HostConfig::read_timeout`].
pub(crate) const DEFAULT_READ_TIMEOUT: Duration = Duration::from_secs(30);

/// The default of [`HostConfig::write_timeout`].
pub(crate) const DEFAULT_WRITE_TIMEOUT: Duration = Duration::from_secs(30);

/// The default of [`HostConfig::resume_window`].
pub(crate) const DEFAULT_RESUME_WINDOW: Duration = Duration::from_secs(60);

/// The default of [`HostConfig::max_body_bytes`]: 4 MiB. Public because a
/// request body past it gets 413, so an application with large arguments
/// compares against it.
pub const DEFAULT_MAX_BODY_BYTES: usize = 4 << 20;

/// How a [`ToolHost`](crate::ToolHost) is set up. Every setting has a working default.
///
/// ```
/// use toolhost::HostConfig;
///
/// let config = HostConfig::default()
///     .server_name("myapp")
///     .server_version("1.2.0")
///     .instructions("Tools of the myapp editor. Prefer `search` before `open`.")
///     .workers(4)
///     .on_event(|event| eprintln!("toolhost: {event:?}"));
/// # let _ = config;
/// ```
#[derive(Clone)]
pub struct HostConfig {
    // Each setting is one field, named as its setter, in the group of the
    // layer that reads it; `ToolHost::bind` checks them all in
    // `HostConfig::validate` and hands each group over whole.
    /// What [`HostConfig::bind_addr`] resolved to, or why it could not.
    pub(crate) bind_addr: Result<Vec<SocketAddr>, String>,
    /// [`HostConfig::allow_non_loopback`].
    pub(crate) allow_non_loopback: bool,
    /// Who the server says it is, its cache hint and its event hook: what
    /// the protocol core reads.
    pub(crate) server: Server,
    /// Call slots, the queue, deadlines and keep-alives: what the runtime
    /// reads.
    pub(crate) runtime: RuntimeConfig,
    /// Workers, origins, capability URLs, body and socket bounds, the
    /// resume window: what the HTTP shell reads.
    pub(crate) http: HttpConfig,
}

impl Default for HostConfig {
    fn default() -> HostConfig {
        HostConfig {
            bind_addr: Ok(vec![SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 0)]),
            allow_non_loopback: false,
            server: Server {
                server_name: "toolhost".into(),
                server_version: env!("CARGO_PKG_VERSION").into(),
                server_title: None,
                instructions: None,
                on_event: None,
                tools_cache: CacheHint {
                    ttl_ms: 0,
                    scope: CacheScope::Private,
                },
            },
            runtime: RuntimeConfig {
                max_concurrent_calls: DEFAULT_MAX_CONCURRENT_CALLS,
                max_queued_calls: DEFAULT_MAX_QUEUED_CALLS,
                call_keep_alive: DEFAULT_CALL_KEEP_ALIVE,
                keep_alive: DEFAULT_KEEP_ALIVE,
                call_timeout: None,
                report_long_calls: Some(DEFAULT_REPORT_LONG_CALLS),
            },
            http: HttpConfig {
                workers: DEFAULT_WORKERS,
                allow_origin: Vec::new(),
                capability_urls: false,
                max_body_bytes: DEFAULT_MAX_BODY_BYTES,
                read_timeout: DEFAULT_READ_TIMEOUT,
                write_timeout: DEFAULT_WRITE_TIMEOUT,
                resume_window: DEFAULT_RESUME_WINDOW,
            },
        }
    }
}

impl HostConfig {
    /// The address to listen on; `127.0.0.1:0` (a free loopback port) by
    /// default. Anything [`ToSocketAddrs`] takes: a `SocketAddr`,
    /// `"127.0.0.1:8765"`, `("localhost", 0)`. A name is resolved here, once;
    /// [`ToolHost::bind`](crate::ToolHost::bind) then tries each address it
    /// resolved to in turn, and fails with [`Error::InvalidConfig`] when it
    /// resolved to none or could not be resolved. A non-loopback address
    /// also needs [`HostConfig::allow_non_loopback`].
    ///
    /// ```
    /// use toolhost::{Error, HostConfig, ToolHost};
    ///
    /// let host = ToolHost::bind(HostConfig::default().bind_addr("127.0.0.1:0"))?;
    /// assert!(host.local_addr().ip().is_loopback());
    ///
    /// let err = ToolHost::bind(HostConfig::default().bind_addr("127.0.0.1:http")).unwrap_err();
    /// assert!(matches!(err, Error::InvalidConfig { setting: "bind_addr", .. }), "{err}");
    /// # Ok::<(), toolhost::Error>(())
    /// ```
    #[must_use]
    pub fn bind_addr(mut self, addr: impl ToSocketAddrs + fmt::Debug) -> HostConfig {
        self.bind_addr = match addr.to_socket_addrs() {
            Ok(resolved) => {
                let resolved: Vec<SocketAddr> = resolved.collect();
                if resolved.is_empty() {
                    Err(format!("{addr:?} resolves to no address"))
                } else {
                    Ok(resolved)
                }
            }
            Err(err) => Err(format!(
                "{addr:?} is not an address to listen on ({err}); give an IP and a port, such as \"127.0.0.1:0\""
            )),
        };
        self
    }

    /// Permits a non-loopback [`HostConfig::bind_addr`] (off by default).
    /// Bearers still guard every request, but anyone who can reach the
    /// address can try them, and traffic is plain HTTP.
    #[must_use]
    pub fn allow_non_loopback(mut self) -> HostConfig {
        self.allow_non_loopback = true;
        self
    }

    /// The server's name in `initialize` and in the ACP entry (`toolhost` by
    /// default). Agents often prefix tool names with it, so it must be 1 to
    /// 32 of `A-Za-z0-9-_`, starting with a letter, with no `__` and no
    /// trailing `_` ([`Error::InvalidServerName`] otherwise, from
    /// [`ToolHost::bind`](crate::ToolHost::bind)): Claude Code and Codex
    /// split `mcp__<server>__<tool>` at `__`. Prefer `-` to `_` where Gemini
    /// CLI is the agent: it names tools `mcp_<server>_<tool>`, and its
    /// policy rules take the server's name to end at its first `_`.
    #[must_use]
    pub fn server_name(mut self, name: impl Into<String>) -> HostConfig {
        self.server.server_name = name.into();
        self
    }

    /// The server's version in `initialize` (this crate's version by default).
    #[must_use]
    pub fn server_version(mut self, version: impl Into<String>) -> HostConfig {
        self.server.server_version = version.into();
        self
    }

    /// A display title for the server, sent from revision 2025-06-18 on
    /// (none by default).
    #[must_use]
    pub fn server_title(mut self, title: impl Into<String>) -> HostConfig {
        self.server.server_title = Some(title.into());
        self
    }

    /// Instructions for the model, sent in the `initialize` result (and in
    /// 2026-07-28's `server/discover`); none by default.
    #[must_use]
    pub fn instructions(mut self, instructions: impl Into<String>) -> HostConfig {
        self.server.instructions = Some(instructions.into());
        self
    }

    /// How many worker threads speak the protocol (8 by default,
    /// [`DEFAULT_WORKERS`]; at least 1): they read headers, check them, and answer everything but a
    /// tool call's handler. A worker that takes a call with a free slot runs
    /// its handler itself only after another thread has taken its place, so
    /// this many always answer `ping`, `tools/list` and cancellations;
    /// those extra threads leave again within seconds once idle.
    #[must_use]
    pub fn workers(mut self, workers: usize) -> HostConfig {
        self.http.workers = workers;
        self
    }

    /// Calls `hook` for every [`Event`], and nothing else hears of them.
    /// Without a hook (the default), events go to the `log` facade (target `toolhost`, at
    /// [`Event::level`]), where they stay silent until the application
    /// installs a logger. The hook runs on the thread where the event
    /// happens — the worker handling the request, or the host's timer
    /// thread for [`Event::CallTimedOut`] and [`Event::CallRunningLong`] —
    /// so it should be quick and must not block. A panic in the hook is
    /// contained.
    #[must_use]
    pub fn on_event(mut self, hook: impl Fn(&Event) + Send + Sync + 'static) -> HostConfig {
        self.server.on_event = Some(Arc::new(hook));
        self
    }

    /// Accepts requests whose `Origin` header is exactly `origin` (for
    /// example `https://app.example`); each call adds one, and none is added
    /// by default. Loopback origins are always accepted; any other origin
    /// gets 403, which is what stops DNS rebinding.
    #[must_use]
    pub fn allow_origin(mut self, origin: impl Into<String>) -> HostConfig {
        self.http.allow_origin.push(origin.into());
        self
    }

    /// Also serves each session at `/cap/<token>/mcp`, a URL that carries the
    /// secret itself, for clients that cannot send an `Authorization` header
    /// (see [`ToolSession::capability_url`](crate::ToolSession::capability_url)). Off by default: a URL leaks
    /// more easily than a header (shell history, process lists, logs of the
    /// client), so enable it only for clients that need it.
    #[must_use]
    pub fn capability_urls(mut self, enabled: bool) -> HostConfig {
        self.http.capability_urls = enabled;
        self
    }

    /// The largest request body accepted, in bytes (4 MiB by default,
    /// [`DEFAULT_MAX_BODY_BYTES`]); a larger one is read off and thrown
    /// away, off the workers, and then answered 413 with
    /// `Connection: close`. One declared longer than 1 GiB (or than this,
    /// when larger) is never read, so never answered: see
    /// [`ToolHost::abandoned_connections`](crate::ToolHost::abandoned_connections).
    #[must_use]
    pub fn max_body_bytes(mut self, bytes: usize) -> HostConfig {
        self.http.max_body_bytes = bytes;
        self
    }

    /// The caching hint of `tools/list` and `server/discover` in 2026-07-28:
    /// how long a client may reuse the answer, and who may share it. By
    /// default `0` ms (tool lists can change at any moment, since the surface
    /// is asked on every request) and [`CacheScope::Private`] (a tool list
    /// belongs to one bearer).
    #[must_use]
    pub fn tools_cache(mut self, ttl: Duration, scope: CacheScope) -> HostConfig {
        self.server.tools_cache = CacheHint {
            ttl_ms: u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX),
            scope,
        };
        self
    }
    /// How many tool handlers may run at once, host-wide (16 by default,
    /// [`DEFAULT_MAX_CONCURRENT_CALLS`]; at least 1). A call past the bound
    /// waits in line for a slot, first in, first out (see
    /// [`HostConfig::max_queued_calls`]); its wait counts towards
    /// [`HostConfig::call_timeout`]. Handlers run on threads of their own,
    /// never on the workers, so `ping`, `tools/list`, cancellations and
    /// answers to a handler's questions are served however many handlers
    /// run. [`Event::CallWaited`] says how long calls waited, which is what
    /// to size this by. Calls of a tool with a [`CallLine`](crate::CallLine)
    /// of its own — every bridged server's — neither take these slots nor
    /// wait in this line, so a server that stopped answering cannot fill
    /// them.
    #[must_use]
    pub fn max_concurrent_calls(mut self, calls: usize) -> HostConfig {
        self.runtime.max_concurrent_calls = calls;
        self
    }

    /// How many calls may wait for a slot at once, host-wide (256 by
    /// default, [`DEFAULT_MAX_QUEUED_CALLS`]). Past it a call is refused
    /// with HTTP 503 and a JSON-RPC error that names this setting. A waiting
    /// call costs its request's buffers, not a thread. A waiting call that
    /// is cancelled (by the client, its deadline, its session's drop or
    /// [`ToolHost::shutdown`](crate::ToolHost::shutdown)) leaves the line
    /// at once without running.
    #[must_use]
    pub fn max_queued_calls(mut self, calls: usize) -> HostConfig {
        self.runtime.max_queued_calls = calls;
        self
    }

    /// How long a call may be quiet before the host turns its response into
    /// an event stream and writes a `:` keep-alive comment, then one every
    /// `interval` while the call runs or waits (1 s by default; more than
    /// zero). This is how a client that left is noticed while its
    /// handler sends nothing: in 2026-07-28 [`CallContext::is_cancelled`](crate::CallContext::is_cancelled)
    /// turns true within one interval of the connection closing (and a
    /// sixteenth of one: a session's keep-alives are written in rounds at
    /// least that far apart, however many calls it has); in the
    /// stateful revisions a dropped connection is not a cancellation until
    /// the [resume window](HostConfig::resume_window) has passed. Only a
    /// client that accepts `text/event-stream` is switched to a stream; one
    /// that accepts only JSON gets its JSON answer.
    #[must_use]
    pub fn call_keep_alive(mut self, interval: Duration) -> HostConfig {
        self.runtime.call_keep_alive = interval;
        self
    }

    /// How often idle event streams (the `GET` stream, `subscriptions/listen`)
    /// get a `:` keep-alive comment (15 s by default; more than zero). A
    /// client that has gone away is noticed at the next one.
    #[must_use]
    pub fn keep_alive(mut self, interval: Duration) -> HostConfig {
        self.runtime.keep_alive = interval;
        self
    }

    /// Gives every tool call a deadline. At the deadline the client is
    /// answered with a tool error (`isError: true`, saying the deadline
    /// passed), the call is flagged cancelled
    /// ([`CallContext::is_cancelled`](crate::CallContext::is_cancelled)), and
    /// [`Event::CallTimedOut`] is reported. The handler itself is not stopped
    /// — no thread can be — and keeps its worker and call slot until it
    /// returns; its late result is dropped. No deadline by default; zero
    /// is refused.
    #[must_use]
    pub fn call_timeout(mut self, limit: Duration) -> HostConfig {
        self.runtime.call_timeout = Some(limit);
        self
    }

    /// How long a request body may take to arrive (30 s by default; more
    /// than zero): past it the worker stops
    /// waiting and the client gets 408 once it sends the rest or hangs up.
    /// It bounds how long a client holding a bearer can keep a worker by
    /// sending a body slowly.
    ///
    /// It is also, at least 10 s, the read timeout of every connection
    /// (set on the listening socket; copied where the write timeout is,
    /// see [`HostConfig::write_timeout`]): a connection that sends nothing
    /// for that long is closed, so that idle connections cannot hold the
    /// host's threads and file descriptors for good.
    #[must_use]
    pub fn read_timeout(mut self, timeout: Duration) -> HostConfig {
        self.http.read_timeout = timeout;
        self
    }

    /// How long one write to a client may block (30 s by default; more
    /// than zero): a client that stops reading
    /// while its socket buffer is full is given up on after it, so that it
    /// cannot hold a worker, a handler (blocked in a progress write) or the
    /// stream hub. A response stream it drops is then treated as the
    /// connection dropping: resumable in the stateful revisions, a
    /// cancellation in 2026-07-28.
    ///
    /// tiny_http never hands the host an accepted connection, so the timeout
    /// is set once, on the listening socket, and holds where the operating
    /// system copies it to every accepted socket: Linux, the BSDs, and
    /// Windows (by Microsoft's documentation of `accept`). **macOS does not
    /// copy it.** There, a client that keeps its connection open but stops
    /// reading blocks the write to it until it reads again or disconnects:
    /// the worker writing to it (and so [`ToolHost::shutdown`], which joins
    /// the workers), a handler blocked in a progress write, or the stream
    /// hub. Only a client holding a session's bearer gets that far; on macOS,
    /// hand bearers only to clients that read what they ask for.
    /// `TCP_NODELAY` is copied on all of these platforms.
    ///
    /// [`ToolHost::shutdown`]: crate::ToolHost::shutdown
    #[must_use]
    pub fn write_timeout(mut self, timeout: Duration) -> HostConfig {
        self.http.write_timeout = timeout;
        self
    }

    /// How long a call's response stream waits for its client to come back
    /// (60 s by default), in the stateful revisions
    /// from 2025-03-26 on, where a dropped connection is not a cancellation.
    ///
    /// Every event of a streamed `tools/call` response carries an id (and at
    /// 2025-11-25 the stream opens with an id-only priming event). When the
    /// connection drops — or the handler closes it with
    /// [`CallContext::close_stream`](crate::CallContext::close_stream) — the
    /// call keeps running and its events are kept; the client resumes with
    /// a `GET` carrying `Last-Event-ID` and receives what it missed, then
    /// the rest. A call whose client stays away longer than the window is
    /// cancelled at its next write, and a result nobody came back for is
    /// dropped after it. `Duration::ZERO` turns resumption off: events carry
    /// no ids and a dropped connection cancels the call at its next write.
    /// 2026-07-28 streams are never resumable (closing one cancels it).
    #[must_use]
    pub fn resume_window(mut self, window: Duration) -> HostConfig {
        self.http.resume_window = window;
        self
    }

    /// Reports [`Event::CallRunningLong`] for every call still running after
    /// `after` (60 s by default); `None` turns the report off.
    #[must_use]
    pub fn report_long_calls(mut self, after: Option<Duration>) -> HostConfig {
        self.runtime.report_long_calls = after;
        self
    }

    /// Every check of the settings, in one place: the addresses to listen
    /// on (tried in turn), or the first setting that cannot work, with an
    /// error that names it and the fix.
    pub(crate) fn validate(&self) -> Result<&[SocketAddr], Error> {
        let addrs = self
            .bind_addr
            .as_deref()
            .map_err(|problem| Error::InvalidConfig {
                setting: "bind_addr",
                problem: problem.clone(),
            })?;
        if let Some(&addr) = addrs
            .iter()
            .find(|addr| !addr.ip().is_loopback() && !self.allow_non_loopback)
        {
            return Err(Error::NonLoopback { addr });
        }
        if self.http.workers == 0 {
            return Err(Error::InvalidConfig {
                setting: "workers",
                problem: "0 workers would answer no request; use at least 1".into(),
            });
        }
        // The rule is shared with the prefix of a bridged server's tools.
        crate::acp::validate_server_name(&self.server.server_name)?;
        if self.runtime.max_concurrent_calls == 0 {
            return Err(Error::InvalidConfig {
                setting: "max_concurrent_calls",
                problem: "0 call slots would run no tool; use at least 1".into(),
            });
        }
        let not_zero = [
            (
                "call_keep_alive",
                self.runtime.call_keep_alive,
                ZERO_INTERVAL,
            ),
            ("write_timeout", self.http.write_timeout, ZERO_TIMEOUT),
            ("read_timeout", self.http.read_timeout, ZERO_TIMEOUT),
            ("keep_alive", self.runtime.keep_alive, ZERO_INTERVAL),
        ];
        for (setting, value, problem) in not_zero {
            if value.is_zero() {
                return Err(Error::InvalidConfig {
                    setting,
                    problem: problem.into(),
                });
            }
        }
        if self
            .runtime
            .call_timeout
            .is_some_and(|limit| limit.is_zero())
        {
            return Err(Error::InvalidConfig {
                setting: "call_timeout",
                problem: ZERO_DEADLINE.into(),
            });
        }
        Ok(addrs)
    }
}

/// Why a zero keep-alive interval is refused.
const ZERO_INTERVAL: &str = "a zero keep-alive interval would spin; use at least a millisecond";

/// Why a zero call deadline is refused.
pub(crate) const ZERO_DEADLINE: &str =
    "a zero deadline would end every call as it arrives; use at least a millisecond";

/// Why a zero timeout is refused.
const ZERO_TIMEOUT: &str = "a zero timeout would mean none; use at least a millisecond";

impl fmt::Debug for HostConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HostConfig")
            .field("bind_addr", &self.bind_addr)
            .field("server_name", &self.server.server_name)
            .field("workers", &self.http.workers)
            .field("capability_urls", &self.http.capability_urls)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_server_name_is_valid() {
        let config = HostConfig::default();
        assert_eq!(config.server.server_name, "toolhost");
        assert!(crate::acp::validate_server_name(&config.server.server_name).is_ok());
    }
}
