//! The host: configuration, the listener, the worker pool and shutdown.
//!
//! `bind` opens the listener before it returns, so a URL handed out right
//! after is already connectable. Each worker thread loops on tiny_http's
//! `recv`; a request is handled start to end on the worker that took it.
//! Shutdown cancels running calls, wakes every worker, joins them, and waits
//! until the port refuses connections, so a caller can rebind it at once.

use std::fmt;
use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use crate::error::Error;
use crate::event::{emit, heard, Event, EventHook};
use crate::http::{self, Transport};
use crate::hub::Hub;
use crate::mcp::{CacheHint, CacheScope, CallSlots, Service, StateSigner};
use crate::session::{lock, Endpoint, SessionTable, ToolSession};
use crate::surface::ToolSurface;
use crate::timer::Timer;

/// The default number of worker threads: calls are blocking, so a few spare
/// workers keep `ping` and `tools/list` answered while handlers run.
pub const DEFAULT_WORKERS: usize = 8;

/// The default interval of keep-alive comments on idle event streams.
pub const DEFAULT_KEEP_ALIVE: Duration = Duration::from_secs(15);

/// How long a call runs before the event hook hears of it by default.
pub const DEFAULT_LONG_CALL_REPORT: Duration = Duration::from_secs(60);

/// How long a request body may take to arrive, by default.
pub const DEFAULT_READ_TIMEOUT: Duration = Duration::from_secs(30);

/// How long one write to a client may block, by default.
pub const DEFAULT_WRITE_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a detached response stream waits for its client to resume, by
/// default.
pub const DEFAULT_RESUME_WINDOW: Duration = Duration::from_secs(60);

/// The default largest request body (4 MiB).
pub const DEFAULT_MAX_BODY_BYTES: usize = 4 << 20;

/// How a [`ToolHost`] is set up. Every setting has a working default.
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
    /// What [`HostConfig::bind_addr`] resolved to, or why it could not.
    addr: Result<Vec<SocketAddr>, String>,
    allow_non_loopback: bool,
    name: String,
    version: String,
    title: Option<String>,
    instructions: Option<String>,
    workers: usize,
    hook: Option<EventHook>,
    allowed_origins: Vec<String>,
    capability_urls: bool,
    max_body_bytes: usize,
    cache: CacheHint,
    max_calls: Option<usize>,
    keep_alive: Duration,
    call_timeout: Option<Duration>,
    long_call_report: Option<Duration>,
    read_timeout: Duration,
    write_timeout: Duration,
    resume_window: Duration,
}

impl Default for HostConfig {
    fn default() -> HostConfig {
        HostConfig {
            addr: Ok(vec![SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 0)]),
            allow_non_loopback: false,
            name: "toolhost".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            title: None,
            instructions: None,
            workers: DEFAULT_WORKERS,
            hook: None,
            allowed_origins: Vec::new(),
            capability_urls: false,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            cache: CacheHint {
                ttl_ms: 0,
                scope: CacheScope::Private,
            },
            max_calls: None,
            keep_alive: DEFAULT_KEEP_ALIVE,
            call_timeout: None,
            long_call_report: Some(DEFAULT_LONG_CALL_REPORT),
            read_timeout: DEFAULT_READ_TIMEOUT,
            write_timeout: DEFAULT_WRITE_TIMEOUT,
            resume_window: DEFAULT_RESUME_WINDOW,
        }
    }
}

impl HostConfig {
    /// The address to listen on; `127.0.0.1:0` (a free loopback port) by
    /// default. Anything [`ToSocketAddrs`] takes: a `SocketAddr`,
    /// `"127.0.0.1:8765"`, `("localhost", 0)`. A name is resolved here, once;
    /// [`ToolHost::bind`] then tries each address it resolved to in turn,
    /// and fails with [`Error::InvalidConfig`] when it resolved to none or
    /// could not be resolved. A non-loopback address also needs
    /// [`HostConfig::allow_non_loopback`].
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
        self.addr = match addr.to_socket_addrs() {
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

    /// Permits a non-loopback [`HostConfig::bind_addr`]. Bearers still guard
    /// every request, but anyone who can reach the address can try them, and
    /// traffic is plain HTTP.
    #[must_use]
    pub fn allow_non_loopback(mut self) -> HostConfig {
        self.allow_non_loopback = true;
        self
    }

    /// The server's name in `initialize` and in the ACP entry (`toolhost` by
    /// default). Agents often prefix tool names with it.
    #[must_use]
    pub fn server_name(mut self, name: impl Into<String>) -> HostConfig {
        self.name = name.into();
        self
    }

    /// The server's version in `initialize` (this crate's version by default).
    #[must_use]
    pub fn server_version(mut self, version: impl Into<String>) -> HostConfig {
        self.version = version.into();
        self
    }

    /// A display title for the server (sent from revision 2025-06-18 on).
    #[must_use]
    pub fn server_title(mut self, title: impl Into<String>) -> HostConfig {
        self.title = Some(title.into());
        self
    }

    /// Instructions for the model, sent in the `initialize` result.
    #[must_use]
    pub fn instructions(mut self, instructions: impl Into<String>) -> HostConfig {
        self.instructions = Some(instructions.into());
        self
    }

    /// How many worker threads serve requests ([`DEFAULT_WORKERS`] by
    /// default). Each running handler holds one.
    #[must_use]
    pub fn workers(mut self, workers: usize) -> HostConfig {
        self.workers = workers;
        self
    }

    /// Calls `hook` for every [`Event`], and nothing else hears of them.
    /// Without a hook, events go to the `log` facade (target `toolhost`, at
    /// [`Event::level`]), where they stay silent until the application
    /// installs a logger. The hook runs on the worker that handles the
    /// request, so it should be quick.
    #[must_use]
    pub fn on_event(mut self, hook: impl Fn(&Event) + Send + Sync + 'static) -> HostConfig {
        self.hook = Some(Arc::new(hook));
        self
    }

    /// Accepts requests whose `Origin` header is exactly `origin` (for
    /// example `https://app.example`). Loopback origins are always accepted;
    /// any other origin gets 403, which is what stops DNS rebinding.
    #[must_use]
    pub fn allow_origin(mut self, origin: impl Into<String>) -> HostConfig {
        self.allowed_origins.push(origin.into());
        self
    }

    /// Also serves each session at `/cap/<token>/mcp`, a URL that carries the
    /// secret itself, for clients that cannot send an `Authorization` header
    /// (see [`ToolSession::capability_url`]). Off by default: a URL leaks
    /// more easily than a header (shell history, process lists, logs of the
    /// client), so enable it only for clients that need it.
    #[must_use]
    pub fn capability_urls(mut self, enabled: bool) -> HostConfig {
        self.capability_urls = enabled;
        self
    }

    /// The largest request body accepted, in bytes ([`DEFAULT_MAX_BODY_BYTES`]
    /// by default); larger ones get 413.
    #[must_use]
    pub fn max_body_bytes(mut self, bytes: usize) -> HostConfig {
        self.max_body_bytes = bytes;
        self
    }
}

impl HostConfig {
    /// The caching hint of `tools/list` and `server/discover` in 2026-07-28:
    /// how long a client may reuse the answer, and who may share it. By
    /// default `0` ms (tool lists can change at any moment, since the surface
    /// is asked on every request) and [`CacheScope::Private`] (a tool list
    /// belongs to one bearer).
    #[must_use]
    pub fn tools_cache(mut self, ttl: Duration, scope: CacheScope) -> HostConfig {
        self.cache = CacheHint {
            ttl_ms: u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX),
            scope,
        };
        self
    }
}

impl HostConfig {
    /// How many tool handlers may run at once, host-wide. A call past the
    /// bound is refused at once with HTTP 503, `Retry-After: 1` and a
    /// retryable JSON-RPC error, instead of waiting; the workers it leaves
    /// free keep answering `ping`, `tools/list` and cancellations while
    /// handlers run. It must be below [`HostConfig::workers`]; by default it
    /// is three quarters of them (6 of the default 8).
    #[must_use]
    pub fn max_concurrent_calls(mut self, calls: usize) -> HostConfig {
        self.max_calls = Some(calls);
        self
    }

    /// How often idle event streams (the `GET` stream, `subscriptions/listen`)
    /// get a `:` keep-alive comment ([`DEFAULT_KEEP_ALIVE`] by default). A
    /// client that has gone away is noticed at the next one.
    #[must_use]
    pub fn keep_alive(mut self, interval: Duration) -> HostConfig {
        self.keep_alive = interval;
        self
    }

    /// Gives every tool call a deadline. At the deadline the client is
    /// answered with a tool error (`isError: true`, saying the deadline
    /// passed), the call is flagged cancelled
    /// ([`CallContext::is_cancelled`](crate::CallContext::is_cancelled)), and
    /// [`Event::CallTimedOut`] is reported. The handler itself is not stopped
    /// — no thread can be — and keeps its worker and call slot until it
    /// returns; its late result is dropped. No deadline by default.
    #[must_use]
    pub fn call_timeout(mut self, limit: Duration) -> HostConfig {
        self.call_timeout = Some(limit);
        self
    }

    /// How long a request body may take to arrive
    /// ([`DEFAULT_READ_TIMEOUT`] by default): past it the worker stops
    /// waiting and the client gets 408 once it sends the rest or hangs up.
    /// It bounds how long a client holding a bearer can keep a worker by
    /// sending a body slowly.
    #[must_use]
    pub fn read_timeout(mut self, timeout: Duration) -> HostConfig {
        self.read_timeout = timeout;
        self
    }

    /// How long one write to a client may block
    /// ([`DEFAULT_WRITE_TIMEOUT`] by default): a client that stops reading
    /// while its socket buffer is full is given up on after it, so that it
    /// cannot hold a worker, a handler (blocked in a progress write) or the
    /// stream hub. A response stream it drops is then treated as the
    /// connection dropping: resumable in the stateful revisions, a
    /// cancellation in 2026-07-28. On Unix only (the socket option is set
    /// once on the listener, and accepted connections inherit it).
    #[must_use]
    pub fn write_timeout(mut self, timeout: Duration) -> HostConfig {
        self.write_timeout = timeout;
        self
    }

    /// How long a call's response stream waits for its client to come back
    /// ([`DEFAULT_RESUME_WINDOW`] by default), in the stateful revisions
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
        self.resume_window = window;
        self
    }

    /// Reports [`Event::CallRunningLong`] for every call still running after
    /// `after` ([`DEFAULT_LONG_CALL_REPORT`] by default); `None` turns the
    /// report off.
    #[must_use]
    pub fn report_long_calls(mut self, after: Option<Duration>) -> HostConfig {
        self.long_call_report = after;
        self
    }

    fn call_slots(&self) -> Result<usize, Error> {
        let slots = self.max_calls.unwrap_or_else(|| {
            (self.workers - self.workers / 4)
                .min(self.workers - 1)
                .max(1)
        });
        if slots == 0 || slots >= self.workers {
            return Err(Error::InvalidConfig {
                setting: "max_concurrent_calls",
                problem: format!(
                    "{slots} call slots with {} workers: it must be at least 1 and below the worker count, so that a worker stays free for ping, tools/list and cancellations (raise workers)",
                    self.workers
                ),
            });
        }
        Ok(slots)
    }
}

impl fmt::Debug for HostConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HostConfig")
            .field("addr", &self.addr)
            .field("name", &self.name)
            .field("workers", &self.workers)
            .field("capability_urls", &self.capability_urls)
            .finish_non_exhaustive()
    }
}

/// A running MCP endpoint on loopback, serving the surfaces of its sessions.
///
/// ```
/// use serde_json::json;
/// use toolhost::{HostConfig, StaticSurface, Tool, ToolHost, ToolOutcome};
///
/// let host = ToolHost::bind(HostConfig::default().server_name("myapp"))?;
/// let surface = StaticSurface::new().tool(
///     Tool::new("shout", "Uppercase the input text.").input_schema(json!({
///         "type": "object",
///         "properties": {"text": {"type": "string"}},
///         "required": ["text"],
///     })),
///     |args, _ctx| ToolOutcome::text(args["text"].as_str().unwrap_or("").to_uppercase()),
/// )?;
/// let session = host.open_session(surface);
/// println!("connect to {} with {}", session.url(), "the session's authorization()");
/// drop(session); // the bearer is dead from here on
/// host.shutdown();
/// # Ok::<(), toolhost::Error>(())
/// ```
pub struct ToolHost {
    addr: SocketAddr,
    table: Arc<SessionTable>,
    endpoint: Arc<Endpoint>,
    server: Mutex<Option<Arc<tiny_http::Server>>>,
    workers: Mutex<Vec<JoinHandle<()>>>,
    stopping: Arc<AtomicBool>,
    hub: Arc<Hub>,
    timer: Arc<Timer>,
    hook: Option<EventHook>,
}

impl ToolHost {
    /// Starts listening and spawns the workers. Returns once the listener
    /// accepts connections.
    pub fn bind(config: HostConfig) -> Result<ToolHost, Error> {
        let addrs = config
            .addr
            .clone()
            .map_err(|problem| Error::InvalidConfig {
                setting: "bind_addr",
                problem,
            })?;
        if let Some(&addr) = addrs
            .iter()
            .find(|addr| !addr.ip().is_loopback() && !config.allow_non_loopback)
        {
            return Err(Error::NonLoopback { addr });
        }
        if config.workers < 2 {
            return Err(Error::InvalidConfig {
                setting: "workers",
                problem: format!(
                    "{} workers: a host needs at least 2, one to run a handler and one to keep answering the protocol meanwhile",
                    config.workers
                ),
            });
        }
        crate::acp::validate_server_name(&config.name)?;
        let slots = config.call_slots()?;
        if config.write_timeout.is_zero() {
            return Err(Error::InvalidConfig {
                setting: "write_timeout",
                problem: "a zero timeout would mean none; use at least a millisecond".into(),
            });
        }
        if config.read_timeout.is_zero() {
            return Err(Error::InvalidConfig {
                setting: "read_timeout",
                problem: "a zero timeout would mean none; use at least a millisecond".into(),
            });
        }
        if config.keep_alive.is_zero() {
            return Err(Error::InvalidConfig {
                setting: "keep_alive",
                problem: "a zero keep-alive interval would spin; use at least a millisecond".into(),
            });
        }
        let (listener, addr) = listen(&addrs)?;
        let bind_error = |source| Error::Bind { addr, source };
        let listener = tune_listener(listener, config.write_timeout).map_err(bind_error)?;
        let addr = listener.local_addr().map_err(bind_error)?;
        let server = tiny_http::Server::from_listener(listener, None)
            .map_err(|err| bind_error(io::Error::other(err.to_string())))?;
        let server = Arc::new(server);

        let table = Arc::new(SessionTable::new());
        let hub = Hub::start(config.keep_alive).map_err(Error::Spawn)?;
        let timer = Timer::start().map_err(Error::Spawn)?;
        let url_ip = if addr.ip().is_unspecified() {
            IpAddr::V4(Ipv4Addr::LOCALHOST)
        } else {
            addr.ip()
        };
        let endpoint = Arc::new(Endpoint {
            origin: format!("http://{}", SocketAddr::new(url_ip, addr.port())),
            server_name: config.name.clone(),
            capability_urls: config.capability_urls,
            hub: Arc::clone(&hub),
        });
        let hook = config.hook.clone();
        let transport = Arc::new(Transport {
            table: Arc::clone(&table),
            service: Service {
                name: config.name,
                version: config.version,
                title: config.title,
                instructions: config.instructions,
                hook: config.hook,
                cache: config.cache,
                slots: CallSlots::new(slots),
                hub: Arc::clone(&hub),
                timer: Arc::clone(&timer),
                states: StateSigner::new(),
                call_timeout: config.call_timeout,
                long_call_report: config.long_call_report,
            },
            ip: addr.ip(),
            port: addr.port(),
            allowed_origins: config.allowed_origins,
            capability_urls: config.capability_urls,
            max_body_bytes: config.max_body_bytes,
            read_timeout: config.read_timeout,
            resume_window: config.resume_window,
        });
        let stopping = Arc::new(AtomicBool::new(false));
        let host = ToolHost {
            addr,
            table,
            endpoint,
            server: Mutex::new(Some(Arc::clone(&server))),
            workers: Mutex::new(Vec::with_capacity(config.workers)),
            stopping: Arc::clone(&stopping),
            hub,
            timer,
            hook,
        };
        for n in 0..config.workers {
            let server = Arc::clone(&server);
            let transport = Arc::clone(&transport);
            let stopping = Arc::clone(&stopping);
            let worker = thread::Builder::new()
                .name(format!("toolhost-worker-{n}"))
                .spawn(move || work(&server, &transport, &stopping))
                .map_err(Error::Spawn)?;
            lock(&host.workers).push(worker);
        }
        Ok(host)
    }

    /// The address the host listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The MCP endpoint URL, e.g. `http://127.0.0.1:40123/mcp`.
    pub fn url(&self) -> String {
        format!("{}/mcp", self.endpoint.origin)
    }

    /// Publishes `surface` behind a fresh 256-bit bearer. The returned guard
    /// is the session: drop it to revoke the bearer.
    ///
    /// # Panics
    /// When the operating system's random source fails (see
    /// [`ToolSession`]); no bearer can be minted safely then.
    pub fn open_session(&self, surface: impl ToolSurface + 'static) -> ToolSession {
        if heard(self.hook.as_ref(), log::Level::Warn) {
            report_schema_warnings(self.hook.as_ref(), &surface);
        }
        ToolSession::open(
            Arc::clone(&self.table),
            Arc::clone(&self.endpoint),
            Box::new(surface),
        )
    }

    /// How many sessions are live (opened and not yet dropped).
    pub fn open_sessions(&self) -> usize {
        self.table.len()
    }

    /// Stops serving: flags running calls as cancelled, wakes and joins every
    /// worker, and closes the listener. Calling it again does nothing.
    ///
    /// Requests already queued are answered first; a connection kept alive
    /// by a client gets no further answers and should be closed by it.
    pub fn shutdown(&self) {
        if self.stopping.swap(true, Ordering::SeqCst) {
            return;
        }
        self.table.cancel_all("the host is shutting down");
        self.hub.stop();
        self.timer.stop();
        let workers = std::mem::take(&mut *lock(&self.workers));
        if let Some(server) = lock(&self.server).as_ref() {
            for _ in 0..workers.len() {
                server.unblock();
            }
        }
        for worker in workers {
            // A worker that panicked has nothing left to clean up.
            let _ = worker.join();
        }
        // The last reference: dropping it stops tiny_http's accept thread,
        // which then closes the listening socket.
        lock(&self.server).take();
        wait_until_closed(self.addr);
    }
}

impl fmt::Debug for ToolHost {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolHost")
            .field("addr", &self.addr)
            .field("open_sessions", &self.open_sessions())
            .finish_non_exhaustive()
    }
}

impl Drop for ToolHost {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// Listens on the first of `addrs` that can be bound (as
/// [`TcpListener::bind`] does), or fails with the last one's error.
fn listen(addrs: &[SocketAddr]) -> Result<(TcpListener, SocketAddr), Error> {
    let mut last = None;
    for &addr in addrs {
        match TcpListener::bind(addr) {
            Ok(listener) => return Ok((listener, addr)),
            Err(source) => last = Some(Error::Bind { addr, source }),
        }
    }
    Err(last.unwrap_or_else(|| Error::InvalidConfig {
        setting: "bind_addr",
        problem: "no address to listen on".into(),
    }))
}

/// Tells the event hook (or the log), once per session, which schema
/// keywords of its tools go unchecked (see
/// [`Tool::schema_warnings`](crate::Tool::schema_warnings)).
fn report_schema_warnings(hook: Option<&EventHook>, surface: &dyn ToolSurface) {
    let Ok(tools) = catch_unwind(AssertUnwindSafe(|| surface.list_tools())) else {
        return; // the first tools/list reports the panic
    };
    for tool in tools {
        let warnings = tool.schema_warnings();
        if !warnings.is_empty() {
            emit(hook, || Event::SchemaWarnings {
                tool: tool.name().to_owned(),
                warnings,
            });
        }
    }
}

fn work(server: &tiny_http::Server, transport: &Transport, stopping: &AtomicBool) {
    loop {
        match server.recv() {
            Ok(request) => {
                // Handlers are already isolated; this guards against a bug in
                // the host itself costing more than the one request (tiny_http
                // answers a dropped request with 500).
                let _ = catch_unwind(AssertUnwindSafe(|| http::serve(transport, request)));
            }
            Err(_) if stopping.load(Ordering::SeqCst) => return,
            Err(_) => {}
        }
    }
}

/// Sets `TCP_NODELAY` and the write timeout on the listening socket; Linux
/// and the BSDs copy both to every accepted socket, and tiny_http gives no
/// access to those. Without `TCP_NODELAY`, a response written in more than
/// one piece meets the client's delayed ACK and waits ~40 ms. (A read
/// timeout must not be set here: on a listener it also times out `accept`,
/// which ends tiny_http's accept thread for good. `accept` ignores the
/// write timeout.)
#[cfg(unix)]
fn tune_listener(listener: TcpListener, write_timeout: Duration) -> io::Result<TcpListener> {
    use std::os::fd::OwnedFd;
    // std exposes these options only on streams; on a socket descriptor
    // they are the same either way.
    let socket = TcpStream::from(OwnedFd::from(listener));
    socket.set_nodelay(true)?;
    socket.set_write_timeout(Some(write_timeout))?;
    Ok(TcpListener::from(OwnedFd::from(socket)))
}

#[cfg(not(unix))]
fn tune_listener(listener: TcpListener, _write_timeout: Duration) -> io::Result<TcpListener> {
    Ok(listener)
}

/// Waits (at most a second) until connecting to `addr` is refused, which
/// means tiny_http's accept thread has dropped the listener.
fn wait_until_closed(addr: SocketAddr) {
    let deadline = Instant::now() + Duration::from_secs(1);
    let target = if addr.ip().is_unspecified() {
        SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), addr.port())
    } else {
        addr
    };
    while Instant::now() < deadline {
        match TcpStream::connect_timeout(&target, Duration::from_millis(100)) {
            Ok(_) => thread::sleep(Duration::from_millis(2)),
            Err(_) => return,
        }
    }
}
