//! Where toolhost stands: its `tools/call` round trip next to a bare
//! tiny_http responder (the floor), in one run, with the CPU each process
//! spent; the memory of a host alone, idle and under 16 connections; the
//! first call of a fresh client, a 1,000-tool `tools/list`, a call streamed
//! as SSE with three progress events, session churn and memory per idle
//! session.
//!
//! ```text
//! cargo bench -p toolhost-tests --bench roundtrip
//! ROUNDTRIP_ROUNDS=9 ROUNDTRIP_SECS=2 cargo bench -p toolhost-tests --bench roundtrip
//! cargo bench -p toolhost-tests --bench roundtrip -- --calls    # the call rounds alone
//! ROUNDTRIP_CONNS=16 ROUNDTRIP_ROUNDS=15 cargo bench -p toolhost-tests --bench roundtrip -- --calls
//! cargo bench -p toolhost-tests --bench roundtrip -- --memory   # host_alone and floor_alone alone
//! cargo bench -p toolhost-tests --bench roundtrip -- --list     # tools/list of 1,000 tools alone
//! ```
//!
//! The servers run in a child process (this binary with `--serve`), the load
//! generator in this one, so they can sit on different cores: with
//! `taskset` installed and two or more CPUs, the load generator is pinned to
//! CPU 0 and the child to CPU 1 (`ROUNDTRIP_PIN=0` turns that off). The
//! calls are sent by the test package's light load generator
//! (`toolhost_tests::load`), one keep-alive connection per thread, the same
//! request bytes to both servers (the floor is sent the bearer too, and
//! issues session ids of toolhost's length); each row shows the CPU both
//! processes spent, as a share of one core, so a saturated server core is
//! seen as such. Both servers have the same worker count and `TCP_NODELAY`;
//! the floor parses each body with serde_json and answers a fixed result for
//! the method, authenticating nothing. The memory is that of a second child
//! (`--serve-alone`): a host with one session and nothing else; and again
//! of the harness program `host_alone`, the same host in a program that
//! carries nothing but it (most of a resident set is pages of the program
//! file, and this binary carries the load generator and the client too),
//! next to the harness program `floor_alone`, the floor measured the same way.
//!
//! Any failed call (a 503 included) fails the bench, after the report.
//! The last line is `bench: call/floor c1=… c4=… c16=… first_call_ms=…
//! first_call_3_tools_ms=… list_1000_ms=… sse_call_ms=… churn_per_s=… bytes_per_session=…
//! idle_rss_kib=… load_rss_kib=… idle_anon_kib=… load_anon_kib=…
//! own_program_idle_rss_kib=… own_program_load_rss_kib=…
//! floor_program_idle_rss_kib=… floor_program_load_rss_kib=… errors=…`. See BENCHMARKS.md, which also
//! shows how `--profile` counts instructions per call.

use std::io::{self, BufRead, BufReader, Write};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use toolhost::client::{CallOptions, Client, ClientError, Era};
use toolhost::{HostConfig, StaticSurface, Tool, ToolHost, ToolOutcome, DEFAULT_WORKERS};
use toolhost_tests::bench_host::{echo_only, echo_tools, floor, serve_alone};
use toolhost_tests::load::{Answer, Histogram, LoadConn, LoadSession};
use toolhost_tests::process;

/// Concurrencies (keep-alive connections) of the call rounds.
const CONCURRENCY: [usize; 3] = [1, 4, 16];
/// First calls timed per server.
const FIRST_CALLS: usize = 250;
/// SSE calls timed (each next to a JSON call).
const SSE_CALLS: usize = 300;
/// Sessions held open for the memory measurement.
const IDLE_SESSIONS: usize = 10_000;
/// Tools in the big `tools/list`.
const BIG_LIST: usize = 1_000;
/// Lists of [`BIG_LIST`] tools timed.
const BIG_LISTS: usize = 50;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let outcome = if args.iter().any(|a| a == "--serve") {
        serve()
    } else if args.iter().any(|a| a == "--serve-alone") {
        serve_alone()
    } else if let Some(at) = args.iter().position(|a| a == "--profile") {
        profile(&args[at + 1..])
    } else if args.iter().any(|a| a == "--memory") {
        memory_only()
    } else if let Some(at) = args.iter().position(|a| a == "--first-call") {
        first_calls_only(&args[at + 1..])
    } else if let Some(at) = args.iter().position(|a| a == "--list") {
        list_only(&args[at + 1..])
    } else {
        drive(args.iter().any(|a| a == "--calls"))
    };
    if let Err(err) = outcome {
        eprintln!("roundtrip: {err}");
        std::process::exit(1);
    }
}

/// `--profile toolhost|floor [stateful|stateless] [N] [fresh|cK]`: both
/// servers and N echo calls in this one process, nothing timed — for
/// counting instructions per call with `valgrind --tool=callgrind` (see
/// BENCHMARKS.md). With `fresh`, N first calls instead: a fresh client
/// each, which lists the tools, calls `echo` and closes. With `cK` (`c16`),
/// the N calls are made by K clients at once, one connection each — for
/// counts that need concurrency, such as `perf stat -e context-switches`.
fn profile(args: &[String]) -> Fallible<()> {
    let target = match args.first().map(String::as_str) {
        Some("floor") => Target::Floor,
        Some("toolhost") | None => Target::Toolhost,
        Some(other) => {
            return Err(format!("--profile takes toolhost or floor, not {other:?}").into())
        }
    };
    let era = match args.get(1).map(String::as_str) {
        Some("stateless") => Era::Stateless,
        _ => Era::Stateful,
    };
    let calls = count_arg(args, 2, 2000);
    let args_fresh = args.get(3).is_some_and(|a| a == "fresh");
    let args_conns = args
        .get(3)
        .and_then(|a| a.strip_prefix('c'))
        .and_then(|n| n.parse().ok());
    let host = ToolHost::bind(HostConfig::default().server_name("roundtrip"))?;
    let session = host.open_session(echo_tools()?);
    let auth = session.authorization();
    let servers = Servers {
        toolhost: Endpoint::new(&session.url(), &auth, std::process::id())?,
        floor: Endpoint::new(&floor(DEFAULT_WORKERS)?, &auth, std::process::id())?,
        many_auth: String::new(),
        echo_only: Endpoint::new(&session.url(), &auth, std::process::id())?,
        workers: DEFAULT_WORKERS as u64,
        bytes_per_session: None,
        bytes_per_session_own_surface: None,
        churn_per_s: f64::NAN,
    };
    let args = json!({"text": "hello"});
    if args_fresh {
        for _ in 0..calls {
            let mut client = servers.client(target, era)?;
            client.list_tools()?;
            client.call_tool("echo", args.clone())?;
            client.close()?;
        }
        eprintln!("{calls} first calls of fresh clients to {}", target.name());
        return Ok(());
    }
    let Some(conns) = args_conns else {
        // On this thread: `start_thread` in callgrind's report is then the
        // servers' threads alone.
        let mut client = servers.client(target, era)?;
        for _ in 0..calls {
            client.call_tool("echo", args.clone())?;
        }
        eprintln!("{calls} calls to {}", target.name());
        return Ok(());
    };
    let failed = thread::scope(|scope| {
        let runs: Vec<_> = (0..conns)
            .map(|_| {
                scope.spawn(|| -> Result<(), String> {
                    let mut client = servers.client(target, era).map_err(|e| e.to_string())?;
                    for _ in 0..calls / conns {
                        client
                            .call_tool("echo", args.clone())
                            .map_err(|e| e.to_string())?;
                    }
                    Ok(())
                })
            })
            .collect();
        runs.into_iter()
            .filter_map(|run| run.join().unwrap().err())
            .next()
    });
    if let Some(err) = failed {
        return Err(err.into());
    }
    eprintln!("{calls} calls to {} on {conns} connections", target.name());
    Ok(())
}

type Fallible<T> = Result<T, Box<dyn std::error::Error>>;

// --- the server process --------------------------------------------------

fn many_tools() -> Fallible<StaticSurface> {
    let mut surface = StaticSurface::new();
    for n in 0..BIG_LIST {
        surface = surface.tool(
            Tool::new(format!("tool_{n:04}"), "One of many tools, with a small schema.").input_schema(
                json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
            ),
            |_, _| ToolOutcome::text("ok"),
        )?;
    }
    Ok(surface)
}

/// Opens [`IDLE_SESSIONS`] sessions made by `surface` and returns them
/// with the growth of RSS they caused, in bytes per session. Fresh memory
/// only: what earlier sessions freed would be reused and hide the cost, so
/// call it before anything else allocates and frees much.
fn open_idle<S: toolhost::ToolSurface + 'static>(
    host: &ToolHost,
    mut surface: impl FnMut() -> S,
) -> (Vec<toolhost::ToolSession>, Option<u64>) {
    let rss = || process::resident_bytes(std::process::id());
    let before = rss();
    let sessions: Vec<_> = (0..IDLE_SESSIONS)
        .map(|_| host.open_session(surface()))
        .collect();
    let per_session = rss()
        .zip(before)
        .map(|(after, before)| after.saturating_sub(before) / IDLE_SESSIONS as u64);
    (sessions, per_session)
}

/// Sessions opened and dropped per second, on one thread.
fn churn(host: &ToolHost, surface: &Arc<StaticSurface>) -> f64 {
    let run = Duration::from_millis(1000);
    let started = Instant::now();
    let mut n = 0u64;
    while started.elapsed() < run {
        for _ in 0..100 {
            drop(host.open_session(Arc::clone(surface)));
        }
        n += 100;
    }
    n as f64 / started.elapsed().as_secs_f64()
}

/// The child: measures memory and churn on a quiet host, starts both
/// servers, prints one JSON line, and serves until stdin closes.
fn serve() -> Fallible<()> {
    let host = ToolHost::bind(HostConfig::default().server_name("roundtrip"))?;
    let shared = Arc::new(echo_tools()?);
    // Both batches stay open while measuring, so neither reuses the other's memory.
    let (shared_batch, bytes_shared) = open_idle(&host, || Arc::clone(&shared));
    let (own_batch, bytes_own) = open_idle(&host, StaticSurface::new);
    drop((shared_batch, own_batch));
    let churn_per_s = churn(&host, &shared);
    let echo = host.open_session(Arc::clone(&shared));
    let many = host.open_session(many_tools()?);
    let lone = host.open_session(echo_only()?);
    let floor_url = floor(DEFAULT_WORKERS)?;
    println!(
        "{}",
        json!({
            "toolhost": echo.url(),
            "auth": echo.authorization(),
            "many_auth": many.authorization(),
            "echo_only_auth": lone.authorization(),
            "floor": floor_url,
            "workers": DEFAULT_WORKERS,
            "bytes_per_session": bytes_shared,
            "bytes_per_session_own_surface": bytes_own,
            "churn_per_s": churn_per_s,
        })
    );
    io::stdout().flush()?;
    // Serve until the driver closes our stdin.
    io::copy(&mut io::stdin(), &mut io::sink())?;
    Ok(())
}

// --- the load generator --------------------------------------------------

/// A server to call: its URL and address, the bearer to send, and the
/// process it runs in.
struct Endpoint {
    url: String,
    addr: SocketAddr,
    auth: String,
    pid: u32,
}

impl Endpoint {
    fn new(url: &str, auth: &str, pid: u32) -> Fallible<Endpoint> {
        let authority = url
            .strip_prefix("http://")
            .and_then(|rest| rest.split('/').next())
            .ok_or_else(|| format!("not an http URL: {url}"))?;
        Ok(Endpoint {
            url: url.to_owned(),
            addr: authority.parse()?,
            auth: auth.to_owned(),
            pid,
        })
    }

    /// A client of the crate's own, in `era`. The floor gets the same
    /// `Authorization` header (and ignores it), so both servers parse
    /// requests of the same size.
    fn client(&self, era: Era) -> Result<Client, ClientError> {
        Client::builder(&self.url)
            .header("Authorization", &self.auth)
            .era(era)
            .connect()
    }
}

/// What the child printed.
struct Servers {
    toolhost: Endpoint,
    floor: Endpoint,
    many_auth: String,
    /// Toolhost with a session that lists `echo` alone, as the floor does:
    /// the first call's `tools/list` then brings both clients the same tool.
    echo_only: Endpoint,
    workers: u64,
    bytes_per_session: Option<u64>,
    bytes_per_session_own_surface: Option<u64>,
    churn_per_s: f64,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Target {
    Toolhost,
    Floor,
}

impl Target {
    fn name(self) -> &'static str {
        match self {
            Target::Toolhost => "toolhost",
            Target::Floor => "floor",
        }
    }
}

impl Servers {
    fn endpoint(&self, target: Target) -> &Endpoint {
        match target {
            Target::Toolhost => &self.toolhost,
            Target::Floor => &self.floor,
        }
    }

    /// A client of `target`, of the crate's own.
    fn client(&self, target: Target, era: Era) -> Result<Client, ClientError> {
        self.endpoint(target).client(era)
    }
}

/// Calls that did not succeed, by kind.
#[derive(Clone, Copy, Default)]
struct Errors {
    /// 503: every call slot and the line of waiting calls were full.
    busy: u64,
    /// A tool error result.
    tool: u64,
    /// Anything else.
    other: u64,
}

impl Errors {
    fn add(&mut self, other: Errors) {
        self.busy += other.busy;
        self.tool += other.tool;
        self.other += other.other;
    }

    fn total(self) -> u64 {
        self.busy + self.tool + self.other
    }

    /// Fails the bench, after its report, if any call failed.
    fn check(self) -> Fallible<()> {
        match self.total() {
            0 => Ok(()),
            n => Err(format!("{n} calls failed: {}", self.describe()).into()),
        }
    }

    fn describe(self) -> String {
        match (self.busy, self.tool, self.other) {
            (0, 0, 0) => "0".into(),
            (busy, 0, 0) => format!("{busy} (503 busy)"),
            (busy, tool, other) => format!("{busy} busy, {tool} tool, {other} other"),
        }
    }
}

/// One cell: `conns` load connections calling `echo` for `run`, after a
/// warm-up; the CPU both processes spent, and the server's largest
/// resident set seen.
struct Cell {
    calls_per_s: f64,
    histogram: Histogram,
    errors: Errors,
    wall: Duration,
    server_cpu: Duration,
    client_cpu: Duration,
    /// The largest resident set and anonymous part seen.
    peak_rss: Option<u64>,
    peak_anon: Option<u64>,
}

/// The MCP session of one load connection: a stateful one is opened by the
/// crate's client, whose connection then closes (the session stays).
fn load_session(server: &Endpoint, era: Era) -> Fallible<LoadSession> {
    if era == Era::Stateless {
        return Ok(LoadSession::Stateless);
    }
    let client = server.client(era)?;
    Ok(LoadSession::Stateful {
        session_id: client.session_id().unwrap_or_default().to_owned(),
        revision: client.revision().to_string(),
    })
}

fn run_cell(server: &Endpoint, era: Era, conns: usize, run: Duration) -> Fallible<Cell> {
    let mut connections = Vec::with_capacity(conns);
    for _ in 0..conns {
        let session = load_session(server, era)?;
        let arguments = json!({"text": "hello"});
        let mut conn = LoadConn::open(server.addr, &server.auth, &session, "echo", &arguments)?;
        // One call before the next connection opens: tiny_http can queue two
        // connections that arrive together for one of its threads, and the
        // second then waits for the host's next nudge (up to 200 ms) — a
        // wait the warm-up would absorb but a handshake would not (see
        // "Slow clients and tiny_http's connection pool" in BENCHMARKS.md).
        conn.call()?;
        connections.push(conn);
    }
    let barrier = Arc::new(Barrier::new(conns + 1));
    let stop = Arc::new(AtomicBool::new(false));
    let workers: Vec<_> = connections
        .into_iter()
        .map(|mut conn| {
            let barrier = Arc::clone(&barrier);
            let stop = Arc::clone(&stop);
            thread::spawn(move || {
                let mut histogram = Histogram::default();
                let mut errors = Errors::default();
                let mut alive = true;
                // Warm-up: connections, caches and the allocator settle.
                let warm = Instant::now();
                while alive && warm.elapsed() < Duration::from_millis(200) {
                    alive = conn.call().is_ok();
                }
                barrier.wait();
                while alive && !stop.load(Ordering::Relaxed) {
                    let started = Instant::now();
                    match conn.call() {
                        Ok(Answer::Success) => histogram.record(started.elapsed()),
                        Ok(Answer::ToolError) => errors.tool += 1,
                        Ok(Answer::Busy) => errors.busy += 1,
                        Ok(Answer::Status(_)) => errors.other += 1,
                        Err(_) => {
                            errors.other += 1;
                            alive = false;
                        }
                    }
                }
                (histogram, errors)
            })
        })
        .collect();
    let cpu = || {
        (
            process::cpu_time(server.pid),
            process::cpu_time(std::process::id()),
        )
    };
    barrier.wait();
    let (server_before, client_before) = cpu();
    let started = Instant::now();
    let mut peak_rss = process::resident_bytes(server.pid);
    let mut peak_anon = process::anonymous_bytes(server.pid);
    while started.elapsed() < run {
        thread::sleep(Duration::from_millis(50).min(run));
        peak_rss = peak_rss.max(process::resident_bytes(server.pid));
        peak_anon = peak_anon.max(process::anonymous_bytes(server.pid));
    }
    stop.store(true, Ordering::Relaxed);
    let mut histogram = Histogram::default();
    let mut errors = Errors::default();
    for worker in workers {
        let (h, e) = worker.join().map_err(|_| "a load thread panicked")?;
        histogram.merge(&h);
        errors.add(e);
    }
    let wall = started.elapsed();
    let (server_after, client_after) = cpu();
    let spent = |before: Option<Duration>, after: Option<Duration>| {
        after
            .zip(before)
            .map_or(Duration::ZERO, |(a, b)| a.saturating_sub(b))
    };
    Ok(Cell {
        calls_per_s: histogram.total() as f64 / wall.as_secs_f64(),
        histogram,
        errors,
        wall,
        server_cpu: spent(server_before, server_after),
        client_cpu: spent(client_before, client_after),
        peak_rss,
        peak_anon,
    })
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    match values.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => values[n / 2],
        n => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
}

/// A fresh client's first call: connect, initialize, initialized,
/// tools/list, tools/call. Milliseconds. Toolhost's session lists `echo`
/// alone, as the floor does: with the bench's three tools, the client's
/// parse of the longer list alone made toolhost's first call ~4 µs slower
/// (`--first-call` shows both).
fn first_call(servers: &Servers, target: Target) -> Fallible<f64> {
    first_call_of(match target {
        Target::Toolhost => &servers.echo_only,
        Target::Floor => &servers.floor,
    })
}

/// [`first_call`] of the session `endpoint` names.
fn first_call_of(endpoint: &Endpoint) -> Fallible<f64> {
    let started = Instant::now();
    let mut client = endpoint.client(Era::Stateful)?;
    client.list_tools()?;
    client.call_tool("echo", json!({"text": "hello"}))?;
    let elapsed = started.elapsed();
    client.close()?;
    Ok(elapsed.as_secs_f64() * 1000.0)
}

/// `--first-call [N]`: only the first calls, N per server (default
/// [`FIRST_CALLS`]), alternating, each step timed on its own: connecting
/// with the handshake (`initialize`, `initialized`), `tools/list`,
/// `tools/call`, and after them (the bench leaves both out) a second
/// `tools/call` and the `DELETE`. Toolhost is timed twice: with the session the bench
/// uses (three tools) and with one that lists `echo` alone, as the floor
/// does. Medians, µs.
fn first_calls_only(args: &[String]) -> Fallible<()> {
    const STEPS: [&str; 6] = [
        "connect, initialize, initialized",
        "tools/list",
        "tools/call",
        "first call (the bench's)",
        "a second tools/call",
        "DELETE",
    ];
    let calls = count_arg(args, 0, FIRST_CALLS);
    let (pinned, pinning) = pin_self();
    let (mut child, said) = start_child("--serve", pinned)?;
    let servers = read_servers(&child, &said)?;
    if args.get(1).is_some_and(|a| a == "after-load") {
        for era in [Era::Stateful, Era::Stateless] {
            for conns in CONCURRENCY {
                for target in [Target::Toolhost, Target::Floor] {
                    run_cell(servers.endpoint(target), era, conns, Duration::from_secs(1))?;
                }
            }
        }
        println!("after one round of load cells");
    }
    let endpoints = [
        ("toolhost, 3 tools", &servers.toolhost),
        ("toolhost, echo alone", &servers.echo_only),
        ("floor, echo alone", &servers.floor),
    ];
    println!("placement: {pinning}; load average {}", load_average());
    let mut times = endpoints.map(|_| STEPS.map(|_| Vec::with_capacity(calls)));
    for _ in 0..calls {
        for (slot, (_, endpoint)) in endpoints.iter().enumerate() {
            let started = Instant::now();
            let mut client = endpoint.client(Era::Stateful)?;
            let connected = Instant::now();
            client.list_tools()?;
            let listed = Instant::now();
            client.call_tool("echo", json!({"text": "hello"}))?;
            let called = Instant::now();
            client.call_tool("echo", json!({"text": "hello"}))?;
            let again = Instant::now();
            client.close()?;
            let closed = Instant::now();
            let marks = [
                connected - started,
                listed - connected,
                called - listed,
                called - started,
                again - called,
                closed - again,
            ];
            for (step, mark) in marks.into_iter().enumerate() {
                times[slot][step].push(mark.as_secs_f64() * 1e6);
            }
        }
    }
    println!(
        "first call by step, median of {calls} per server, µs: {}",
        endpoints.map(|(name, _)| name).join(" | ")
    );
    for (step, name) in STEPS.into_iter().enumerate() {
        let cells = times.each_mut().map(|server| median(&mut server[step]));
        let [three, alone, floor] = cells;
        println!(
            "  {name:33} {three:6.1} | {alone:6.1} | {floor:6.1}   ratio {:.3} | {:.3}",
            three / floor,
            alone / floor
        );
    }
    drop(child.stdin.take());
    child.wait()?;
    Ok(())
}

/// Calls `tool` asking for progress; the time to the result and the gaps
/// between events (and from the last event to the result), in ms.
fn progress_call(client: &mut Client, tool: &str) -> Fallible<(f64, Vec<f64>)> {
    let mut marks = Vec::with_capacity(4);
    let started = Instant::now();
    let result = client.call_tool_with(
        tool,
        Value::Null,
        CallOptions::new().on_progress(|_| marks.push(started.elapsed())),
    )?;
    let total = started.elapsed();
    if marks.len() != 3 || result.is_error {
        return Err(format!("{tool} sent {} progress events", marks.len()).into());
    }
    marks.push(total);
    let gaps = marks
        .windows(2)
        .map(|w| (w[1] - w[0]).as_secs_f64() * 1000.0)
        .collect();
    Ok((total.as_secs_f64() * 1000.0, gaps))
}

fn machine_line() -> String {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split(':').nth(1))
        .map_or("unknown CPU", str::trim)
        .to_owned();
    let cpus = thread::available_parallelism().map_or(0, |n| n.get());
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    format!("{model}, {cpus} CPUs, Linux {}", kernel.trim())
}

/// Pins this process to CPU 0, once, when it can; returns whether it did
/// (then the children go on CPU 1) and a note saying so.
fn pin_self() -> (bool, String) {
    let cpus = thread::available_parallelism().map_or(1, |n| n.get());
    let want_pin = std::env::var("ROUNDTRIP_PIN").map_or(true, |v| v != "0");
    let pinned = want_pin
        && cpus >= 2
        && Command::new("taskset")
            .args(["-p", "-c", "0", &std::process::id().to_string()])
            .stdout(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
    let note = if pinned {
        "load generator on CPU 0, servers on CPU 1 (taskset)".to_owned()
    } else if !want_pin {
        "unpinned (ROUNDTRIP_PIN=0)".to_owned()
    } else {
        format!("unpinned (taskset missing or failed, or {cpus} CPU)")
    };
    (pinned, note)
}

/// Starts this binary with `mode` (`--serve`, `--serve-alone`), on CPU 1
/// when `pinned`, and reads the JSON line it prints first.
fn start_child(mode: &str, pinned: bool) -> Fallible<(Child, Value)> {
    start_program(&std::env::current_exe()?, &[mode], pinned)
}

/// Starts program `exe` with `args`, on CPU 1 when `pinned`, and reads the
/// JSON line it prints first.
fn start_program(exe: &Path, args: &[&str], pinned: bool) -> Fallible<(Child, Value)> {
    let mut command = if pinned {
        let mut c = Command::new("taskset");
        c.args(["-c", "1"]).arg(exe);
        c
    } else {
        Command::new(exe)
    };
    let mut child = command
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()?;
    let stdout = child.stdout.take().ok_or("no child stdout")?;
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line)?;
    let said = serde_json::from_str(&line).map_err(|e| format!("child said {line:?}: {e}"))?;
    Ok((child, said))
}

/// The text field `key` of a child's line.
fn text(said: &Value, key: &str) -> Fallible<String> {
    Ok(said[key]
        .as_str()
        .ok_or(format!("the child's line lacks {key}"))?
        .to_owned())
}

fn read_servers(child: &Child, v: &Value) -> Fallible<Servers> {
    let auth = text(v, "auth")?;
    Ok(Servers {
        toolhost: Endpoint::new(&text(v, "toolhost")?, &auth, child.id())?,
        floor: Endpoint::new(&text(v, "floor")?, &auth, child.id())?,
        many_auth: text(v, "many_auth")?,
        echo_only: Endpoint::new(
            &text(v, "toolhost")?,
            &text(v, "echo_only_auth")?,
            child.id(),
        )?,
        workers: v["workers"].as_u64().unwrap_or(0),
        bytes_per_session: v["bytes_per_session"].as_u64(),
        bytes_per_session_own_surface: v["bytes_per_session_own_surface"].as_u64(),
        churn_per_s: v["churn_per_s"].as_f64().unwrap_or(f64::NAN),
    })
}

fn env_number(name: &str, default: f64) -> f64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .unwrap_or_default()
        .split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
}

fn kib(bytes: Option<u64>) -> String {
    bytes.map_or("n/a".to_owned(), |b| format!("{}", b / 1024))
}

/// What one row of the table adds up: its cells' rates, latencies,
/// errors and CPU.
#[derive(Default)]
struct Row {
    rates: Vec<f64>,
    histogram: Histogram,
    errors: Errors,
    wall: Duration,
    server_cpu: Duration,
    client_cpu: Duration,
}

impl Row {
    fn add(&mut self, cell: &Cell) {
        self.rates.push(cell.calls_per_s);
        self.histogram.merge(&cell.histogram);
        self.errors.add(cell.errors);
        self.wall += cell.wall;
        self.server_cpu += cell.server_cpu;
        self.client_cpu += cell.client_cpu;
    }

    /// CPU as a share of one core over the row's cells.
    fn share(&self, cpu: Duration) -> f64 {
        cpu.as_secs_f64() / self.wall.as_secs_f64()
    }
}

const TABLE_HEAD: &str =
    "era        conns server     calls/s   p50 µs   p99 µs p99.9 µs errors srv CPU cli CPU";

fn print_row(era: &str, conns: usize, server: &str, row: &mut Row) {
    let h = &row.histogram;
    println!(
        "{:<9} {:>6} {:<8} {:>9.0} {:>8.1} {:>8.1} {:>8.1} {:>6} {:>7.2} {:>7.2}",
        era,
        conns,
        server,
        median(&mut row.rates),
        h.quantile_us(0.5),
        h.quantile_us(0.99),
        h.quantile_us(0.999),
        row.errors.describe(),
        row.share(row.server_cpu),
        row.share(row.client_cpu),
    );
}

/// The memory of one host alone: resident and anonymous bytes, idle, at
/// most under 16 connections, and idle again; and its threads.
struct Memory {
    idle: (Option<u64>, Option<u64>),
    idle_threads: Option<usize>,
    load_rss: Option<u64>,
    load_anon: Option<u64>,
    load_threads: Option<usize>,
    /// The resident pages of the program's own code, after the load.
    code: Option<u64>,
    after: (Option<u64>, Option<u64>),
}

impl Memory {
    fn describe(&self, run: Duration) -> String {
        let threads = |n: Option<usize>| n.map_or("?".to_owned(), |n| n.to_string());
        format!(
            "idle {} ({}), {} threads; under 16 connections (each era, {:.1}s) at most {} ({}), {} threads; idle again {} ({}); its own code {}",
            kib(self.idle.0),
            kib(self.idle.1),
            threads(self.idle_threads),
            run.as_secs_f64(),
            kib(self.load_rss),
            kib(self.load_anon),
            threads(self.load_threads),
            kib(self.after.0),
            kib(self.after.1),
            kib(self.code)
        )
    }

    /// Where `self`'s resident set under load exceeds `floor`'s: in all,
    /// in the program's own code, in anonymous memory, and in threads.
    fn beyond(&self, floor: &Memory) -> String {
        let more = |a: Option<u64>, b: Option<u64>| match (a, b) {
            (Some(a), Some(b)) => format!("{:+}", (a as i64 - b as i64) / 1024),
            _ => "?".to_owned(),
        };
        let threads = match (self.load_threads, floor.load_threads) {
            (Some(a), Some(b)) => format!("{:+}", a as i64 - b as i64),
            _ => "?".to_owned(),
        };
        format!(
            "{} KiB under 16 connections: {} in its own code, {} anonymous, {threads} threads",
            more(self.load_rss, floor.load_rss),
            more(self.code, floor.code),
            more(self.load_anon, floor.load_anon),
        )
    }
}

/// Measures the server of child `alone` (which said its URL and bearer in
/// `said`): idle, under 16 connections in each era, idle again; then
/// ends it.
fn host_memory(
    mut alone: Child,
    said: &Value,
    run: Duration,
    errors: &mut Errors,
) -> Fallible<Memory> {
    let lone = Endpoint::new(&text(said, "url")?, &text(said, "auth")?, alone.id())?;
    thread::sleep(Duration::from_millis(500));
    let idle = (
        process::resident_bytes(lone.pid),
        process::anonymous_bytes(lone.pid),
    );
    let idle_threads = process::thread_count(lone.pid);
    let (mut load_rss, mut load_anon, mut load_threads) = (None, None, None);
    for era in [Era::Stateful, Era::Stateless] {
        let cell = run_cell(&lone, era, 16, run)?;
        errors.add(cell.errors);
        load_rss = load_rss.max(cell.peak_rss);
        load_anon = load_anon.max(cell.peak_anon);
        load_threads = load_threads.max(process::thread_count(lone.pid));
    }
    let code = process::own_code_bytes(lone.pid);
    thread::sleep(Duration::from_millis(500));
    let after = (
        process::resident_bytes(lone.pid),
        process::anonymous_bytes(lone.pid),
    );
    drop(alone.stdin.take());
    let _ = alone.wait();
    Ok(Memory {
        idle,
        idle_threads,
        load_rss,
        load_anon,
        load_threads,
        code,
        after,
    })
}

/// `tools/list` of the session with 1,000 tools, `lists` times each way,
/// alternating: by the crate's client, which parses the whole list
/// (dropped before the clock stops), and by a [`LoadConn`], which reads
/// the response's bytes and parses nothing — the host's own share of the
/// time, with the socket's. How many tools were listed, and the two median
/// times in ms.
fn big_list(servers: &Servers, lists: usize) -> Fallible<BigList> {
    let many = Endpoint::new(
        &servers.toolhost.url,
        &servers.many_auth,
        servers.toolhost.pid,
    )?;
    let mut big = many.client(Era::Stateful)?;
    let session = load_session(&many, Era::Stateful)?;
    let mut raw = LoadConn::request(
        many.addr,
        &many.auth,
        &session,
        "tools/list",
        None,
        json!({}),
    )?;
    let (mut parsed, mut read) = (Vec::with_capacity(lists), Vec::with_capacity(lists));
    let mut listed = 0;
    for _ in 0..lists {
        let started = Instant::now();
        listed = big.list_tools()?.len();
        parsed.push(started.elapsed().as_secs_f64() * 1000.0);
        let started = Instant::now();
        let status = raw.exchange()?;
        read.push(started.elapsed().as_secs_f64() * 1000.0);
        if status != 200 {
            return Err(format!("tools/list answered {status}").into());
        }
    }
    let bytes = raw.body().len();
    Ok(BigList {
        listed,
        bytes,
        parsed_ms: median(&mut parsed),
        read_ms: median(&mut read),
    })
}

/// What [`big_list`] measured.
struct BigList {
    listed: usize,
    /// The body's length.
    bytes: usize,
    parsed_ms: f64,
    read_ms: f64,
}

impl BigList {
    fn describe(&self, lists: usize) -> String {
        format!(
            "tools/list with {} tools ({} KB, stateful, median of {lists} each): {:.2} ms by toolhost::client, which parses it; {:.2} ms read as bytes ({:.2} µs a tool)",
            self.listed,
            self.bytes / 1000,
            self.parsed_ms,
            self.read_ms,
            self.read_ms * 1000.0 / self.listed.max(1) as f64
        )
    }
}

/// The count a mode's argument `at` gives, or `default` when it gives none.
fn count_arg(args: &[String], at: usize, default: usize) -> usize {
    args.get(at).and_then(|n| n.parse().ok()).unwrap_or(default)
}

/// `--list [N]`: the `tools/list` of 1,000 tools alone, as the full run
/// measures it, `N` times (the full run's count by default).
fn list_only(args: &[String]) -> Fallible<()> {
    let lists = count_arg(args, 0, BIG_LISTS);
    let (pinned, pinning) = pin_self();
    let (mut child, said) = start_child("--serve", pinned)?;
    let servers = read_servers(&child, &said)?;
    println!("placement: {pinning}; load average {}", load_average());
    let measured = big_list(&servers, lists);
    drop(child.stdin.take());
    child.wait()?;
    println!("{}", measured?.describe(lists));
    Ok(())
}

/// Where harness program `name` is: in `ROUNDTRIP_PROGRAMS` when that names
/// a folder (to measure the programs built with another profile, such as
/// `size`), else where this build put it (`built`).
fn program(name: &str, built: &str) -> PathBuf {
    match std::env::var_os("ROUNDTRIP_PROGRAMS") {
        Some(folder) => PathBuf::from(folder).join(name),
        None => PathBuf::from(built),
    }
}

/// `--memory`: the memory of `host_alone` and `floor_alone` alone, as the
/// full run measures it (idle, under 16 connections in each era, idle
/// again), in a few seconds: for working on memory.
fn memory_only() -> Fallible<()> {
    let run = Duration::from_secs_f64(env_number("ROUNDTRIP_SECS", 1.0).max(0.05));
    let (pinned, pinning) = pin_self();
    println!("placement: {pinning}");
    let mut errors = Errors::default();
    let mut measured = Vec::new();
    for (name, exe) in [
        ("host_alone", env!("CARGO_BIN_EXE_host_alone")),
        ("floor_alone", env!("CARGO_BIN_EXE_floor_alone")),
    ] {
        let exe = program(name, exe);
        println!("{name}: {}", exe.display());
        let (alone, said) = start_program(&exe, &[], pinned)?;
        let memory = host_memory(alone, &said, run, &mut errors)?;
        println!("{name}: {}", memory.describe(run));
        measured.push(memory);
    }
    println!(
        "host_alone beyond floor_alone: {}",
        measured[0].beyond(&measured[1])
    );
    errors.check()
}

fn era_name(era: Era) -> &'static str {
    if era == Era::Stateful {
        "stateful"
    } else {
        "stateless"
    }
}

/// The whole bench; with `calls_only` (`--calls`), the call rounds alone:
/// for comparing builds round against round.
fn drive(calls_only: bool) -> Fallible<()> {
    let rounds = env_number("ROUNDTRIP_ROUNDS", 5.0).max(1.0) as usize;
    let run = Duration::from_secs_f64(env_number("ROUNDTRIP_SECS", 1.0).max(0.05));
    let machine = machine_line();
    let load_before = load_average();
    let (pinned, pinning) = pin_self();
    let (mut child, said) = start_child("--serve", pinned)?;
    let servers = read_servers(&child, &said)?;
    println!("machine: {machine}; load average {load_before} before");
    println!("placement: {pinning}");
    println!(
        "servers: toolhost ({}) and the floor ({}), {} workers each; load: toolhost_tests::load, one keep-alive connection per thread",
        servers.toolhost.url, servers.floor.url, servers.workers
    );
    println!(
        "calls: tools/call echo, {rounds} rounds of {:.1}s per server and concurrency, alternating toolhost, floor, toolhost, …, 200 ms warm-up per connection; CPU as a share of one core",
        run.as_secs_f64()
    );
    println!();
    println!("{TABLE_HEAD}");
    let mut headline = Vec::new();
    let mut errors = Errors::default();
    // `ROUNDTRIP_CONNS=16` (or `1,16`) measures those concurrencies alone,
    // with `--calls` for more rounds of one cell in the same time.
    let concurrencies: Vec<usize> = match std::env::var("ROUNDTRIP_CONNS") {
        Ok(list) => list
            .split(',')
            .map(|n| {
                n.trim()
                    .parse()
                    .map_err(|_| format!("ROUNDTRIP_CONNS: {n:?} is not a number"))
            })
            .collect::<Result<_, _>>()?,
        Err(_) => CONCURRENCY.to_vec(),
    };
    for era in [Era::Stateful, Era::Stateless] {
        let mut ratios_line = Vec::new();
        for &conns in &concurrencies {
            let mut ratios = Vec::new();
            let mut rows = [Row::default(), Row::default()];
            for _ in 0..rounds {
                let mut round = [0.0; 2];
                for (slot, target) in [Target::Toolhost, Target::Floor].into_iter().enumerate() {
                    let cell = run_cell(servers.endpoint(target), era, conns, run)?;
                    round[slot] = cell.calls_per_s;
                    rows[slot].add(&cell);
                }
                ratios.push(round[0] / round[1]);
            }
            for (slot, target) in [Target::Toolhost, Target::Floor].into_iter().enumerate() {
                print_row(era_name(era), conns, target.name(), &mut rows[slot]);
                errors.add(rows[slot].errors);
            }
            let ratio = median(&mut ratios);
            ratios_line.push(format!("c{conns}={ratio:.3}"));
            if era == Era::Stateful {
                headline.push(format!("c{conns}={ratio:.3}"));
            }
        }
        println!(
            "{} call/floor (median of {rounds} round ratios): {}",
            era_name(era),
            ratios_line.join(" ")
        );
    }
    if calls_only {
        drop(child.stdin.take());
        let _ = child.wait();
        return errors.check();
    }

    // The memory of a host alone: idle, then under 16 connections in each
    // era, then idle again; in a child of this binary, and in a program
    // that holds the host and nothing else, next to such a program of the
    // floor.
    let (alone, said) = start_child("--serve-alone", pinned)?;
    let memory = host_memory(alone, &said, run, &mut errors)?;
    let host_alone = program("host_alone", env!("CARGO_BIN_EXE_host_alone"));
    let (alone, said) = start_program(&host_alone, &[], pinned)?;
    let own_program = host_memory(alone, &said, run, &mut errors)?;
    let floor_alone = program("floor_alone", env!("CARGO_BIN_EXE_floor_alone"));
    let (alone, said) = start_program(&floor_alone, &[], pinned)?;
    let floor_program = host_memory(alone, &said, run, &mut errors)?;
    println!();
    println!("memory of a host alone (default settings, one session), resident KiB (of which anonymous: heap and stacks, not mapped from files):");
    println!(
        "  in this bench's binary (--serve-alone): {}",
        memory.describe(run)
    );
    println!(
        "  in a program of its own (host_alone):   {}",
        own_program.describe(run)
    );
    println!(
        "  the floor so, for comparison (floor_alone): {}",
        floor_program.describe(run)
    );
    println!(
        "  host_alone beyond floor_alone: {}",
        own_program.beyond(&floor_program)
    );
    let (idle, load_rss, load_anon) = (memory.idle, memory.load_rss, memory.load_anon);

    // First call on a fresh connection, alternating servers; toolhost also
    // with the three tools of the calls' session, for the record.
    let mut firsts = [Vec::new(), Vec::new(), Vec::new()];
    for _ in 0..FIRST_CALLS {
        for (slot, target) in [Target::Toolhost, Target::Floor].into_iter().enumerate() {
            firsts[slot].push(first_call(&servers, target)?);
        }
        firsts[2].push(first_call_of(&servers.toolhost)?);
    }
    let first_toolhost = median(&mut firsts[0]);
    let first_floor = median(&mut firsts[1]);
    let first_three = median(&mut firsts[2]);
    println!();
    println!(
        "first call (connect, initialize, initialized, tools/list of echo alone, tools/call; median of {FIRST_CALLS}): toolhost {first_toolhost:.3} ms, floor {first_floor:.3} ms, ratio {:.2}; toolhost listing three tools {first_three:.3} ms, ratio {:.2}",
        first_toolhost / first_floor,
        first_three / first_floor
    );

    let list = big_list(&servers, BIG_LISTS)?;
    println!("{}", list.describe(BIG_LISTS));

    // A call streamed as SSE with three progress events, next to a JSON
    // call on the same connection (alternating), then the same with 1 ms of
    // work between events, for the gaps: each event then travels alone, and
    // a small write stuck behind a delayed ACK would show as ~40 ms.
    let mut sse = servers.client(Target::Toolhost, Era::Stateful)?;
    let mut streamed = Vec::new();
    let mut plain = Vec::new();
    let mut gaps = Vec::new();
    for _ in 0..SSE_CALLS {
        let started = Instant::now();
        sse.call_tool("echo", json!({"text": "hello"}))?;
        plain.push(started.elapsed().as_secs_f64() * 1000.0);
        let (total, _) = progress_call(&mut sse, "progress3")?;
        streamed.push(total);
        let (_, spaced) = progress_call(&mut sse, "progress3_spaced")?;
        gaps.extend(spaced);
    }
    let sse_ms = median(&mut streamed);
    let json_ms = median(&mut plain);
    let max_gap = gaps.iter().copied().fold(0.0, f64::max);
    let gap_p50 = median(&mut gaps);
    println!(
        "SSE call with 3 progress events (stateful, median of {SSE_CALLS}): {sse_ms:.3} ms to the result, {:.2}x a JSON echo call on the same connection ({json_ms:.3} ms)",
        sse_ms / json_ms
    );
    println!(
        "gaps between events with 1 ms of work between them: p50 {gap_p50:.3} ms, max {max_gap:.3} ms"
    );

    println!(
        "session churn (open + drop, one thread, quiet host): {:.0} sessions/s",
        servers.churn_per_s
    );
    let show = |b: Option<u64>| b.map_or("n/a".to_owned(), |b| b.to_string());
    println!(
        "memory with {IDLE_SESSIONS} open sessions: {} bytes/session sharing one surface (Arc), {} bytes/session with an empty StaticSurface each",
        show(servers.bytes_per_session),
        show(servers.bytes_per_session_own_surface)
    );

    drop(child.stdin.take());
    let _ = child.wait();
    println!("load average {} after", load_average());
    println!(
        "bench: call/floor {} first_call_ms={first_toolhost:.3} first_call_3_tools_ms={first_three:.3} list_1000_ms={:.2} list_1000_read_ms={:.2} sse_call_ms={sse_ms:.3} churn_per_s={:.0} bytes_per_session={} idle_rss_kib={} load_rss_kib={} idle_anon_kib={} load_anon_kib={} own_program_idle_rss_kib={} own_program_load_rss_kib={} floor_program_idle_rss_kib={} floor_program_load_rss_kib={} errors={}",
        headline.join(" "),
        list.parsed_ms,
        list.read_ms,
        servers.churn_per_s,
        show(servers.bytes_per_session),
        kib(idle.0),
        kib(load_rss),
        kib(idle.1),
        kib(load_anon),
        kib(own_program.idle.0),
        kib(own_program.load_rss),
        kib(floor_program.idle.0),
        kib(floor_program.load_rss),
        errors.total()
    );
    errors.check()
}
