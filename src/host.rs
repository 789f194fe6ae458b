//! The host: the listener, the worker pool and shutdown.
//!
//! `bind` opens the listener before it returns, so a URL handed out right
//! after is already connectable. Each worker thread loops on tiny_http's
//! `recv`; a request is handled start to end on the worker that took it.
//! Shutdown cancels running calls, wakes every worker, joins them, and waits
//! until the port refuses connections, so a caller can rebind it at once.

use std::fmt;
use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use crate::call::ToolSurface;
use crate::config::HostConfig;
use crate::error::Error;
use crate::event::{report, Event, EventHook};
use crate::http::{self, Transport};
use crate::mcp::Server;
use crate::runtime::table::SessionTable;
use crate::runtime::Runtime;
use crate::runtime::RuntimeConfig;
use crate::session::{Endpoint, ToolSession};
use crate::sync::lock;

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
    transport: Arc<Transport>,
    hook: Option<EventHook>,
}

impl ToolHost {
    /// Starts listening and spawns the workers. Returns once the listener
    /// accepts connections.
    pub fn bind(config: HostConfig) -> Result<ToolHost, Error> {
        if !config.addr.ip().is_loopback() && !config.allow_non_loopback {
            return Err(Error::NonLoopback { addr: config.addr });
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
        let bind_error = |source| Error::Bind {
            addr: config.addr,
            source,
        };
        let listener = TcpListener::bind(config.addr).map_err(bind_error)?;
        let listener = tune_listener(listener, config.write_timeout).map_err(bind_error)?;
        let addr = listener.local_addr().map_err(bind_error)?;
        let server = tiny_http::Server::from_listener(listener, None)
            .map_err(|err| bind_error(io::Error::other(err.to_string())))?;
        let server = Arc::new(server);

        let table = Arc::new(SessionTable::new());
        let runtime = Runtime::start(
            Server {
                name: config.name.clone(),
                version: config.version,
                title: config.title,
                instructions: config.instructions,
                hook: config.hook.clone(),
                cache: config.cache,
            },
            &RuntimeConfig {
                max_concurrent_calls: slots,
                keep_alive: config.keep_alive,
                call_timeout: config.call_timeout,
                long_call_report: config.long_call_report,
            },
        )
        .map_err(Error::Spawn)?;
        let url_ip = if addr.ip().is_unspecified() {
            IpAddr::V4(Ipv4Addr::LOCALHOST)
        } else {
            addr.ip()
        };
        let endpoint = Arc::new(Endpoint {
            origin: format!("http://{}", SocketAddr::new(url_ip, addr.port())),
            server_name: config.name,
            capability_urls: config.capability_urls,
            hub: Arc::clone(&runtime.hub),
        });
        let transport = Arc::new(Transport {
            table: Arc::clone(&table),
            runtime,
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
            transport: Arc::clone(&transport),
            hook: config.hook,
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
        if let Some(hook) = &self.hook {
            report_schema_warnings(hook, &surface);
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
        self.transport.runtime.stop();
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

/// Tells the event hook, once per session, which schema keywords of its
/// tools go unchecked (see [`Tool::schema_warnings`](crate::Tool::schema_warnings)).
fn report_schema_warnings(hook: &EventHook, surface: &dyn ToolSurface) {
    let Ok(tools) = catch_unwind(AssertUnwindSafe(|| surface.list_tools())) else {
        return; // the first tools/list reports the panic
    };
    for tool in tools {
        let warnings = tool.schema_warnings();
        if !warnings.is_empty() {
            report(
                hook,
                &Event::SchemaWarnings {
                    tool: tool.name().to_owned(),
                    warnings,
                },
            );
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
