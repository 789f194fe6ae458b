//! The threads that take requests from tiny_http, and what answers a client
//! after the host has shut down.
//!
//! `workers` threads speak the protocol: each loops on tiny_http's queue of
//! requests, checks headers, reads small bodies and answers everything but
//! a tool call's handler. A worker that takes a call with a free slot runs
//! the handler itself, without a hand-off, but first makes sure `workers`
//! others still take requests, starting a thread when none is spare; such
//! a thread, once it has had nothing to do for [`IDLE`], leaves if more
//! than `workers` are left (the first `workers` stay). So `ping`,
//! `tools/list`, cancellations and answers to a handler's questions always
//! find a free worker, a steady load keeps its threads, and a burst's extra
//! threads are gone within seconds.
//!
//! tiny_http accepts connections on a thread of its own that ends for good
//! on the first failed `accept` (and panics when it cannot duplicate an
//! accepted socket): out of file descriptors for a moment, a host stopped
//! answering forever, and since the pool keeps a handle on the listening
//! socket, clients hung in its listen queue instead of being refused. So
//! the pool watches that thread — a worker hears of the failed `accept`,
//! and on Linux every tick of [`nudge`] checks that tiny_http's handle on
//! the socket is still open — and starts a new tiny_http server on the
//! same socket when it is gone, retrying every tick while descriptors are
//! short. The old server's connections are served by a thread of their own
//! until none has sent a request for the sockets' read timeout (by then
//! tiny_http has closed them).

use std::io::{self, Read};
use std::net::{IpAddr, Ipv4Addr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use super::reply::farewell;
use super::{serve, socket, Transport};
use crate::event::Event;
use crate::runtime::{Lane, OwnThread};
use crate::sync::lock;

/// How long a surplus thread waits for a request before it leaves.
pub(crate) const IDLE: Duration = Duration::from_secs(2);

/// The least time between two restarts of tiny_http's server (each costs
/// a thread that serves the old one's connections for a while).
const REVIVE_EVERY: Duration = Duration::from_millis(500);

/// How long a retired server's thread waits after handing back a wake-up
/// meant for a worker.
const HAND_BACK: Duration = Duration::from_millis(20);

/// How long the host keeps telling clients it has shut down, after the last
/// request that arrived on a connection they kept open.
pub(crate) const FAREWELL_IDLE: Duration = Duration::from_secs(2);

/// How often the host connects to itself to un-stick tiny_http's pool of
/// connection threads (see [`nudge`]).
const NUDGE: Duration = Duration::from_millis(200);

/// How many connections a nudge opens, one after another, when requests
/// arrived since the last one (see [`nudge`]).
const NUDGES_WHEN_BUSY: usize = 8;

/// How long one tick's nudges may take in all (each waits for tiny_http to
/// close its connection), after which the tick's burst ends.
const NUDGE_WAIT: Duration = Duration::from_millis(25);

/// While no request arrives, nudges come at the 1st, 2nd, 4th, … tick of
/// the quiet spell, then every this many ticks (6.4 s): longer than
/// tiny_http's 5 s, after which a connection thread with nothing to do
/// leaves (see [`nudge`]).
const QUIET_NUDGE_TICKS: u32 = 32;

/// Why a pool could not start.
pub(crate) enum StartError {
    /// The listening socket could not be handed to tiny_http.
    Listen(io::Error),
    /// A thread could not be started.
    Spawn(io::Error),
}

/// The worker threads of one host.
pub(crate) struct Pool {
    /// The server the workers take requests from: replaced when its
    /// accept thread ends, taken by [`Pool::stop`].
    server: Mutex<Option<Arc<tiny_http::Server>>>,
    /// The pool's own handle on the listening socket: cloned for a new
    /// server; shut down and let go at [`Pool::stop`] (where a listener
    /// cannot be shut down, all but Linux, letting every handle go is
    /// what frees the port).
    listener: Mutex<Option<TcpListener>>,
    /// How to tell that the current server's accept thread is gone.
    watch: Mutex<AcceptWatch>,
    /// Servers whose accept thread ended, still serving the connections
    /// they had accepted.
    retired: Mutex<Vec<Arc<tiny_http::Server>>>,
    /// A restart that could not be made yet (no descriptor, no thread, or
    /// too soon after the last).
    revive_pending: AtomicBool,
    /// When the last restart was made.
    last_revive: Mutex<Option<Instant>>,
    transport: Arc<Transport>,
    workers: usize,
    /// Threads alive in the pool.
    live: AtomicUsize,
    /// Of those, how many run a handler now.
    lent: AtomicUsize,
    stopping: AtomicBool,
    /// Whether a request arrived since the last nudge.
    busy: AtomicBool,
    threads: Mutex<Vec<JoinHandle<()>>>,
}

/// Whether a worker is one of the `workers` the pool starts with, which
/// wait for requests without a timeout and stay, or one started while
/// others ran handlers, which leaves after [`IDLE`] without a request once
/// the pool has `workers` spare without it. The standing ones wait untimed
/// because a timed wait costs each request two clock reads and a kernel
/// timer armed and cancelled; `stop` wakes them with one unblock each.
#[derive(Clone, Copy)]
enum Role {
    Standing,
    Surplus,
}

/// A worker's side of lending itself to a handler.
struct Worker<'a>(&'a Arc<Pool>);

impl Lane for Worker<'_> {
    fn lend(&self) {
        let pool = self.0;
        let lent = pool.lent.fetch_add(1, Ordering::SeqCst) + 1;
        if pool.live.load(Ordering::SeqCst).saturating_sub(lent) < pool.workers {
            // Without a thread to spare, this one keeps speaking the
            // protocol while it runs the handler; the others still do.
            let _ = pool.spawn(Role::Surplus);
        }
    }

    fn reclaim(&self) {
        self.0.lent.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Pool {
    /// Serves `listener` with tiny_http and starts the configured `workers`
    /// threads on it.
    /// `addr` is where the listener takes connections (see [`nudge`]).
    pub(crate) fn start(
        listener: TcpListener,
        transport: Arc<Transport>,
        addr: SocketAddr,
    ) -> Result<Arc<Pool>, StartError> {
        let workers = transport.config.workers;
        let (server, watch) = serve_on(&listener).map_err(StartError::Listen)?;
        let pool = Arc::new(Pool {
            server: Mutex::new(Some(Arc::new(server))),
            listener: Mutex::new(Some(listener)),
            watch: Mutex::new(watch),
            retired: Mutex::default(),
            revive_pending: AtomicBool::new(false),
            last_revive: Mutex::new(None),
            transport,
            workers,
            live: AtomicUsize::new(0),
            lent: AtomicUsize::new(0),
            stopping: AtomicBool::new(false),
            busy: AtomicBool::new(false),
            threads: Mutex::new(Vec::with_capacity(workers)),
        });
        for _ in 0..workers {
            pool.spawn(Role::Standing).map_err(StartError::Spawn)?;
        }
        nudge(&pool, addr);
        Ok(pool)
    }

    fn spawn(self: &Arc<Self>, role: Role) -> io::Result<()> {
        // Once stopped, no worker starts: there is nothing left to serve.
        if self.stopping.load(Ordering::SeqCst) {
            return Ok(());
        }
        self.live.fetch_add(1, Ordering::SeqCst);
        let pool = Arc::clone(self);
        let spawned = thread::Builder::new()
            .name("toolhost-worker".into())
            .spawn(move || pool.run(role));
        match spawned {
            Ok(handle) => {
                let mut threads = lock(&self.threads);
                threads.retain(|thread| !thread.is_finished());
                threads.push(handle);
                Ok(())
            }
            Err(err) => {
                self.live.fetch_sub(1, Ordering::SeqCst);
                Err(err)
            }
        }
    }

    /// The server workers take requests from now; `None` once stopped.
    fn current(&self) -> Option<Arc<tiny_http::Server>> {
        lock(&self.server).clone()
    }

    fn run(self: &Arc<Self>, role: Role) {
        let lane = Worker(self);
        // Kept across requests (no lock per request); looked up again
        // whenever a wait ends without one, as after a restart.
        let mut server = self.current();
        while let Some(current) = server.as_ref() {
            if self.stopping.load(Ordering::SeqCst) {
                break;
            }
            let next = match role {
                Role::Standing => current.recv().map(Some),
                Role::Surplus => current.recv_timeout(IDLE),
            };
            match next {
                Ok(Some(request)) => {
                    // Read first: a store on every request would pass the
                    // flag's cache line between the workers' cores.
                    if !self.busy.load(Ordering::Relaxed) {
                        self.busy.store(true, Ordering::Relaxed);
                    }
                    // Handlers are already isolated; this guards against a
                    // bug in the host itself costing more than the one
                    // request (tiny_http answers a dropped request with 500).
                    let _ = catch_unwind(AssertUnwindSafe(|| {
                        serve(&self.transport, request, &lane);
                    }));
                }
                Ok(None) => {
                    if self.retire() {
                        return;
                    }
                    server = self.current();
                }
                Err(err) => {
                    // tiny_http passes on the error its accept thread
                    // ended with; a wake-up carries no OS error.
                    if err.raw_os_error().is_some() {
                        self.revive(current, &format!("accept failed: {err}"));
                    }
                    server = self.current();
                }
            }
        }
        self.live.fetch_sub(1, Ordering::SeqCst);
    }

    /// Starts a new server on the listening socket in place of `dead`,
    /// unless that was done already; when it cannot be done now, the next
    /// tick tries again.
    fn revive(self: &Arc<Self>, dead: &Arc<tiny_http::Server>, reason: &str) {
        if self.stopping.load(Ordering::SeqCst) {
            return;
        }
        let mut current = lock(&self.server);
        if !current.as_ref().is_some_and(|now| Arc::ptr_eq(now, dead)) {
            return;
        }
        // A server that cannot accept either (descriptors still short)
        // ends at once: new ones are started no faster than this, and the
        // next tick tries again.
        let mut last = lock(&self.last_revive);
        if last.is_some_and(|at| at.elapsed() < REVIVE_EVERY) {
            self.revive_pending.store(true, Ordering::SeqCst);
            return;
        }
        *last = Some(Instant::now());
        drop(last);
        // tiny_http starts its accept thread with `thread::spawn`, which
        // panics when no thread can be started.
        let started = catch_unwind(AssertUnwindSafe(|| {
            lock(&self.listener)
                .as_ref()
                .map(serve_on)
                .unwrap_or_else(|| Err(io::ErrorKind::NotConnected.into()))
        }));
        let Ok(Ok((fresh, watch))) = started else {
            self.revive_pending.store(true, Ordering::SeqCst);
            return;
        };
        let Some(old) = current.replace(Arc::new(fresh)) else {
            return;
        };
        *lock(&self.watch) = watch;
        drop(current);
        self.revive_pending.store(false, Ordering::SeqCst);
        let reason = reason.to_owned();
        self.transport
            .runtime
            .server
            .emit(|| Event::ListenerRestarted { reason });
        // Every worker waiting on the old queue wakes and moves over.
        for _ in 0..self.live.load(Ordering::SeqCst) {
            old.unblock();
        }
        self.serve_retired(old);
    }

    /// Serves the requests of `old`'s connections on a thread of its own
    /// until none has come for longer than the sockets' read timeout.
    fn serve_retired(self: &Arc<Self>, old: Arc<tiny_http::Server>) {
        lock(&self.retired).push(Arc::clone(&old));
        let pool = Arc::clone(self);
        let quiet = socket::idle_deadline(self.transport.config.read_timeout) + IDLE;
        let spawned = thread::Builder::new()
            .name("toolhost-retired".into())
            .spawn(move || {
                let mut since = Instant::now();
                while !pool.stopping.load(Ordering::SeqCst) && since.elapsed() < quiet {
                    let waited = Instant::now();
                    match old.recv_timeout(quiet) {
                        Ok(Some(request)) => {
                            let _ = catch_unwind(AssertUnwindSafe(|| {
                                serve(&pool.transport, request, &OwnThread);
                            }));
                            since = Instant::now();
                        }
                        // A wake-up meant for a worker still on the old
                        // queue (one busy when the server was replaced):
                        // handed back, and a moment left for it.
                        Ok(None) if waited.elapsed() < quiet => {
                            old.unblock();
                            thread::sleep(HAND_BACK);
                        }
                        _ => {}
                    }
                }
                lock(&pool.retired).retain(|server| !Arc::ptr_eq(server, &old));
                // No one takes the old queue's wake-ups any more: enough
                // for every worker that may still come to it.
                for _ in 0..pool.live.load(Ordering::SeqCst) {
                    old.unblock();
                }
            });
        if let Ok(handle) = spawned {
            lock(&self.threads).push(handle);
        }
    }

    /// Restarts the server when its accept thread is gone, or when an
    /// earlier restart could not be made; called every tick.
    fn check_accept(self: &Arc<Self>) {
        let Some(current) = self.current() else {
            return;
        };
        if self.revive_pending.load(Ordering::SeqCst) {
            self.revive(
                &current,
                "accept failed earlier, and no new server could start until now",
            );
        } else if !lock(&self.watch).alive() {
            self.revive(&current, "tiny_http's accept thread is gone");
        }
    }

    /// Leaves the pool if it keeps `workers` threads for the protocol
    /// without this one.
    fn retire(&self) -> bool {
        let mut live = self.live.load(Ordering::SeqCst);
        loop {
            let spare = live.saturating_sub(self.lent.load(Ordering::SeqCst));
            if spare <= self.workers {
                return false;
            }
            match self
                .live
                .compare_exchange(live, live - 1, Ordering::SeqCst, Ordering::SeqCst)
            {
                Ok(_) => return true,
                Err(now) => live = now,
            }
        }
    }

    /// How many threads the pool has now.
    pub(crate) fn threads(&self) -> usize {
        self.live.load(Ordering::SeqCst)
    }

    /// Stops every worker and waits for it (a handler still running is
    /// waited for: it was cancelled and should return). Then the listener
    /// closes, and requests that still arrive on connections clients kept
    /// open are told the host is gone and their connections closed, until
    /// none has come for a while.
    pub(crate) fn stop(&self) {
        self.stopping.store(true, Ordering::SeqCst);
        // A handler's lend may start a thread meanwhile: it sees `stopping`
        // and ends at once, and is joined in the next round.
        loop {
            let threads = std::mem::take(&mut *lock(&self.threads));
            if threads.is_empty() {
                break;
            }
            if let Some(server) = self.current() {
                for _ in 0..threads.len() {
                    server.unblock();
                }
            }
            for retired in lock(&self.retired).iter() {
                for _ in 0..threads.len() {
                    retired.unblock();
                }
            }
            for thread in threads {
                // A worker that panicked has nothing left to clean up.
                let _ = thread.join();
            }
        }
        // The workers and the retired servers' threads are gone, with
        // their handles: these are the last ones.
        lock(&self.retired).clear();
        let server = lock(&self.server).take();
        let listener = lock(&self.listener).take();
        let (Some(server), Some(listener)) = (server, listener) else {
            return;
        };
        if close_listener(&listener).is_ok() {
            let transport = Arc::clone(&self.transport);
            let _ = thread::Builder::new()
                .name("toolhost-farewell".into())
                .spawn(move || {
                    let mut quiet_since = Instant::now();
                    // Wake-ups left over from stopping the workers also
                    // return no request; only quiet time ends the farewell.
                    while quiet_since.elapsed() < FAREWELL_IDLE {
                        if let Ok(Some(request)) = server.recv_timeout(FAREWELL_IDLE) {
                            farewell(&transport, request);
                            quiet_since = Instant::now();
                        }
                    }
                });
        }
        // Otherwise `server` and `listener` drop here, the last handles:
        // tiny_http's drop wakes its accept thread, which ends and closes
        // its own, and the port is free.
    }
}

/// A tiny_http server on a new handle of `listener`, and how to tell that
/// its accept thread is gone.
fn serve_on(listener: &TcpListener) -> io::Result<(tiny_http::Server, AcceptWatch)> {
    let handle = listener.try_clone()?;
    let watch = AcceptWatch::of(&handle);
    let server = tiny_http::Server::from_listener(handle, None)
        .map_err(|err| io::Error::other(err.to_string()))?;
    Ok((server, watch))
}

/// Whether tiny_http's accept thread still runs, told by whether its
/// handle on the listening socket is still open: the thread owns that
/// handle, and closes it whichever way it ends. On Linux the handle is
/// looked up in `/proc/self/fd` (a descriptor number names the same socket
/// until it is closed); elsewhere the pool hears only of a failed `accept`,
/// through the workers, and not of a panic.
struct AcceptWatch {
    /// The descriptor's entry and what it names while it is open.
    #[cfg(target_os = "linux")]
    entry: Option<(std::path::PathBuf, std::path::PathBuf)>,
}

impl AcceptWatch {
    #[cfg(target_os = "linux")]
    fn of(handle: &TcpListener) -> AcceptWatch {
        use std::os::fd::AsRawFd;
        let path = std::path::PathBuf::from(format!("/proc/self/fd/{}", handle.as_raw_fd()));
        let entry = std::fs::read_link(&path).ok().map(|target| (path, target));
        AcceptWatch { entry }
    }

    #[cfg(not(target_os = "linux"))]
    fn of(_handle: &TcpListener) -> AcceptWatch {
        AcceptWatch {}
    }

    /// `false` once the handle is known to be closed.
    #[cfg(target_os = "linux")]
    fn alive(&self) -> bool {
        self.entry
            .as_ref()
            .is_none_or(|(path, target)| std::fs::read_link(path).ok().as_ref() == Some(target))
    }

    #[cfg(not(target_os = "linux"))]
    fn alive(&self) -> bool {
        true
    }
}

/// Stops the listening socket accepting: tiny_http's accept thread wakes
/// with an error, ends, and closes its handle. Where the platform cannot
/// do this to a listener, [`Pool::stop`] drops the last handle on
/// tiny_http's server instead, which closes it, and no farewell is said.
#[cfg(target_os = "linux")]
fn close_listener(listener: &TcpListener) -> io::Result<()> {
    use std::os::fd::OwnedFd;
    // std exposes shutdown only on streams; on the socket it is the same.
    let socket = std::net::TcpStream::from(OwnedFd::from(listener.try_clone()?));
    socket.shutdown(Shutdown::Both)
}

#[cfg(not(target_os = "linux"))]
fn close_listener(_listener: &TcpListener) -> io::Result<()> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "shutting down a listening socket wakes accept only on Linux",
    ))
}

/// Every [`NUDGE`] while requests arrive, opens a connection to the host
/// and closes it ([`NUDGES_WHEN_BUSY`] of them, one after another); while
/// none arrives, one at ever longer intervals, up to every
/// [`QUIET_NUDGE_TICKS`] ticks; until the host stops.
///
/// Why: tiny_http 0.12 gives each accepted connection to a thread of its
/// pool (`util/task_pool.rs`), queueing it for an idle thread when its
/// count of idle threads is above zero and notifying one of them. That
/// count drops only once a notified thread has woken, so when connections
/// arrive together — as an agent's do when it makes calls in parallel —
/// several are queued against one idle thread, the other notifications are
/// lost, and the connections past the idle threads wait in the queue until
/// some thread's connection closes, which for kept-alive connections may be
/// never. A connection opened here then finds no idle thread, so tiny_http
/// starts one for it; it ends at once (no request), and that thread then
/// takes the queue's next connection. One connection so frees one stuck
/// connection: `k` that came together wait about `k / NUDGES_WHEN_BUSY`
/// ticks, since those that are not stuck send requests.
///
/// Each connection is half-closed and waited for until tiny_http has closed
/// it too, before the next is opened. With nothing stuck, the thread that
/// took the first is idle again by then and takes the rest, so a busy host
/// keeps one spare connection thread, not one per connection of the burst
/// (each of which would hold a stack). A tick's nudges end when
/// [`NUDGE_WAIT`] has passed: they run on the timer thread, and hold up the
/// deadlines and keep-alive rounds due meanwhile by that much at most.
///
/// Quiet, the nudges back off because each wakes one of tiny_http's idle
/// threads, which then waits another 5 s before it leaves: at a nudge every
/// tick, the twenty threads a burst of connections started stayed for good.
/// The cost of the back-off: a connection stuck with no request arriving at
/// all (it came in the same instant as one that sends nothing) waits up to
/// 6.4 s after a long quiet spell; any request brings the next tick's nudges.
fn nudge(pool: &Arc<Pool>, addr: SocketAddr) {
    let target = if addr.ip().is_unspecified() {
        SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), addr.port())
    } else {
        addr
    };
    tick(pool, target, 0);
}

/// Schedules the next tick of [`nudge`]; `quiet` is how many ticks have
/// passed without a request.
fn tick(pool: &Arc<Pool>, target: SocketAddr, quiet: u32) {
    let weak = Arc::downgrade(pool);
    pool.transport
        .runtime
        .schedule(Instant::now() + NUDGE, move || {
            let Some(pool) = weak.upgrade() else { return };
            if pool.stopping.load(Ordering::SeqCst) {
                return;
            }
            pool.check_accept();
            pool.transport.refused.purge();
            let quiet = if pool.busy.swap(false, Ordering::Relaxed) {
                0
            } else if quiet >= 2 * QUIET_NUDGE_TICKS {
                // Past the back-off the count only marks the period.
                QUIET_NUDGE_TICKS + 1
            } else {
                quiet + 1
            };
            let times = match quiet {
                0 => NUDGES_WHEN_BUSY,
                n if n % QUIET_NUDGE_TICKS == 0 || n.is_power_of_two() => 1,
                _ => 0,
            };
            let until = Instant::now() + NUDGE_WAIT;
            for _ in 0..times {
                if !nudge_once(target, until) {
                    break;
                }
            }
            tick(&pool, target, quiet);
        });
}

/// Opens a connection to `target`, half-closes it and waits for the host to
/// close it too; `false` when that did not happen by `until`.
fn nudge_once(target: SocketAddr, until: Instant) -> bool {
    let left = until.saturating_duration_since(Instant::now());
    if left.is_zero() {
        return false;
    }
    let Ok(mut stream) = TcpStream::connect_timeout(&target, left) else {
        return false;
    };
    let left = until.saturating_duration_since(Instant::now());
    if left.is_zero()
        || stream.set_read_timeout(Some(left)).is_err()
        || stream.shutdown(Shutdown::Write).is_err()
    {
        return false;
    }
    let mut byte = [0; 1];
    // Closed either way: tiny_http shut its side, or reset a connection
    // that had unread data (Windows also says aborted).
    match stream.read(&mut byte) {
        Ok(0) => true,
        Ok(_) => false,
        Err(err) => matches!(
            err.kind(),
            io::ErrorKind::ConnectionReset | io::ErrorKind::ConnectionAborted
        ),
    }
}
