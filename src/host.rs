//! The host: the listener, the worker pool and shutdown.
//!
//! `bind` opens the listener before it returns, so a URL handed out right
//! after is already connectable. Each worker thread loops on tiny_http's
//! `recv`; a request is handled start to end on the worker that took it.
//! Shutdown cancels running calls, wakes every worker, joins them, and waits
//! until the port refuses connections, so a caller can rebind it at once.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use crate::call::ToolSurface;
use crate::config::HostConfig;
use crate::error::Error;
use crate::event::{emit, heard, Event, EventHook};
use crate::http::{Pool, Refused, Transport};
use crate::runtime::table::SessionTable;
use crate::runtime::Runtime;
use crate::session::{Endpoint, ToolSession};

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
    /// What the session guards share: the table, the hub, the settings.
    endpoint: Arc<Endpoint>,
    pool: Arc<Pool>,
    stopping: AtomicBool,
    transport: Arc<Transport>,
}

impl ToolHost {
    /// Starts listening and spawns the workers. Returns once the listener
    /// accepts connections.
    pub fn bind(config: HostConfig) -> Result<ToolHost, Error> {
        let (listener, addr) = listen(config.validate()?)?;
        let bind_error = |source| Error::Bind { addr, source };
        let listener = crate::http::socket::tune_listener(
            listener,
            config.http.write_timeout,
            crate::http::socket::idle_deadline(config.http.read_timeout),
        )
        .map_err(bind_error)?;
        let addr = listener.local_addr().map_err(bind_error)?;

        // Each group goes whole to the layer that reads it; the session
        // guards share the server's and the shell's with them.
        let table = Arc::new(SessionTable::new());
        let runtime =
            Runtime::start(Arc::new(config.server), config.runtime).map_err(Error::Spawn)?;
        let http = Arc::new(config.http);
        let url_ip = if addr.ip().is_unspecified() {
            IpAddr::V4(Ipv4Addr::LOCALHOST)
        } else {
            addr.ip()
        };
        let endpoint = Arc::new(Endpoint {
            origin: format!("http://{}", SocketAddr::new(url_ip, addr.port())),
            table: Arc::clone(&table),
            hub: Arc::clone(&runtime.hub),
            server: Arc::clone(&runtime.server),
            http: Arc::clone(&http),
        });
        let transport = Arc::new(Transport {
            table,
            runtime,
            ip: addr.ip(),
            port: addr.port(),
            config: http,
            refused: Refused::new(),
            drainer: Arc::default(),
            abandoned: AtomicU64::new(0),
        });
        let pool =
            Pool::start(listener, Arc::clone(&transport), addr).map_err(|err| match err {
                crate::http::StartError::Listen(source) => bind_error(source),
                crate::http::StartError::Spawn(source) => Error::Spawn(source),
            })?;
        Ok(ToolHost {
            addr,
            endpoint,
            pool,
            stopping: AtomicBool::new(false),
            transport,
        })
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
        let on_event = self.endpoint.server.on_event.as_ref();
        if heard(on_event, log::Level::Warn) {
            report_schema_warnings(on_event, &surface);
        }
        ToolSession::open(Arc::clone(&self.endpoint), Box::new(surface))
    }

    /// How many sessions are live (opened and not yet dropped).
    pub fn open_sessions(&self) -> usize {
        self.endpoint.table.len()
    }

    /// Stops serving: cancels every call (running ones see
    /// [`CallContext::is_cancelled`](crate::CallContext::is_cancelled);
    /// waiting ones are answered without running), ends every event
    /// stream, waits for the workers and running handlers, and closes the
    /// listener. Calling it again does nothing.
    ///
    /// A client that kept a connection open and sends on it within a few
    /// seconds is answered 503 with `Connection: close`, so it learns the
    /// host is gone instead of waiting (on Linux; elsewhere its request gets
    /// no answer, as tiny_http gives no way to close such a connection).
    pub fn shutdown(&self) {
        if self.stopping.swap(true, Ordering::SeqCst) {
            return;
        }
        self.endpoint.table.cancel_all("the host is shutting down");
        self.transport.refused.flush(&self.transport.runtime.server);
        self.transport.runtime.stop();
        self.pool.stop();
        wait_until_closed(self.addr);
    }

    /// How many connections the host has left open and unread for good,
    /// each because its request declared a body longer than any the host
    /// drains (see [`Event::ConnectionAbandoned`]): each holds two file
    /// descriptors and a thread until the process ends. Zero unless
    /// something sent such a request.
    pub fn abandoned_connections(&self) -> u64 {
        self.transport.abandoned.load(Ordering::Relaxed)
    }

    /// How many worker threads the host has now: the configured workers,
    /// and one more for each handler running on a worker's thread.
    pub fn worker_threads(&self) -> usize {
        self.pool.threads()
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
