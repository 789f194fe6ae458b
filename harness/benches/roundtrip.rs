//! Where toolhost stands: its `tools/call` round trip next to a bare
//! tiny_http responder (the floor), in one run, plus the first call of a
//! fresh client, a 1,000-tool `tools/list`, a call streamed as SSE with three
//! progress events, session churn and memory per idle session.
//!
//! ```text
//! cargo bench --bench roundtrip
//! ROUNDTRIP_ROUNDS=9 ROUNDTRIP_SECS=2 cargo bench --bench roundtrip
//! ```
//!
//! The servers run in a child process (this binary with `--serve`), the load
//! generator in this one, so they can sit on different cores: with
//! `taskset` installed and two or more CPUs, the load generator is pinned to
//! CPU 0 and the child to CPU 1 (`ROUNDTRIP_PIN=0` turns that off). The load
//! generator is `toolhost::client` itself, one keep-alive connection per
//! thread, the same code and the same request bytes against both servers
//! (the floor is sent the bearer too, and issues session ids of toolhost's
//! length). Both servers have the same worker count and `TCP_NODELAY`; the
//! floor parses each body with serde_json and answers a fixed result for the
//! method, authenticating nothing.
//!
//! The last line is `bench: call/floor c1=… c4=… c16=… first_call_ms=…
//! sse_call_ms=… churn_per_s=… bytes_per_session=…`. See BENCHMARKS.md,
//! which also shows how `--profile` counts instructions per call.

use std::io::{self, BufRead, BufReader, Cursor, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use toolhost::client::{CallOptions, Client, ClientError, Era};
use toolhost::{HostConfig, StaticSurface, Tool, ToolHost, ToolOutcome, DEFAULT_WORKERS};

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

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let outcome = if args.iter().any(|a| a == "--serve") {
        serve()
    } else if let Some(at) = args.iter().position(|a| a == "--profile") {
        profile(&args[at + 1..])
    } else {
        drive()
    };
    if let Err(err) = outcome {
        eprintln!("roundtrip: {err}");
        std::process::exit(1);
    }
}

/// `--profile toolhost|floor [stateful|stateless] [N]`: both servers and N
/// echo calls in this one process, nothing timed — for counting
/// instructions per call with `valgrind --tool=callgrind` (see
/// BENCHMARKS.md).
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
    let calls: usize = args.get(2).and_then(|n| n.parse().ok()).unwrap_or(2000);
    let host = ToolHost::bind(HostConfig::default().server_name("roundtrip"))?;
    let session = host.open_session(echo_tools()?);
    let servers = Servers {
        toolhost: session.url(),
        auth: session.authorization(),
        many_auth: String::new(),
        floor: floor(DEFAULT_WORKERS)?,
        workers: DEFAULT_WORKERS as u64,
        bytes_per_session: None,
        bytes_per_session_own_surface: None,
        churn_per_s: f64::NAN,
    };
    let mut client = servers.client(target, era)?;
    let args = json!({"text": "hello"});
    for _ in 0..calls {
        client.call_tool("echo", args.clone())?;
    }
    eprintln!("{calls} calls to {}", target.name());
    Ok(())
}

type Fallible<T> = Result<T, Box<dyn std::error::Error>>;

// --- the server process --------------------------------------------------

fn echo_tools() -> Fallible<StaticSurface> {
    Ok(StaticSurface::new()
        .tool(
            Tool::new("echo", "Echoes text.").input_schema(json!({
                "type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]})),
            |args, _| ToolOutcome::text(args["text"].as_str().unwrap_or_default()),
        )?
        .tool(Tool::new("progress3", "Reports three steps, then answers."), |_, ctx| {
            for step in 1..=3 {
                ctx.progress(f64::from(step), Some(3.0), None);
            }
            ToolOutcome::text("hello")
        })?
        .tool(
            Tool::new("progress3_spaced", "Works 1 ms before each of three steps and the answer."),
            |_, ctx| {
                for step in 1..=3 {
                    thread::sleep(Duration::from_millis(1));
                    ctx.progress(f64::from(step), Some(3.0), None);
                }
                thread::sleep(Duration::from_millis(1));
                ToolOutcome::text("hello")
            },
        )?)
}

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

/// Resident set size of this process, from /proc/self/status.
fn rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Opens [`IDLE_SESSIONS`] sessions made by `surface` and returns them
/// with the growth of RSS they caused, in bytes per session. Fresh memory
/// only: what earlier sessions freed would be reused and hide the cost, so
/// call it before anything else allocates and frees much.
fn open_idle<S: toolhost::ToolSurface + 'static>(
    host: &ToolHost,
    mut surface: impl FnMut() -> S,
) -> (Vec<toolhost::ToolSession>, Option<u64>) {
    let before = rss_bytes();
    let sessions: Vec<_> = (0..IDLE_SESSIONS)
        .map(|_| host.open_session(surface()))
        .collect();
    let per_session = rss_bytes()
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

/// Sets `TCP_NODELAY` on a listening socket, for the accepted sockets to
/// copy (Linux, macOS, the BSDs and Windows do), as toolhost does for its
/// own listener.
fn nodelay_listener(listener: TcpListener) -> io::Result<TcpListener> {
    #[cfg(unix)]
    use std::os::fd::OwnedFd as OwnedSocket;
    #[cfg(windows)]
    use std::os::windows::io::OwnedSocket;
    let socket = TcpStream::from(OwnedSocket::from(listener));
    socket.set_nodelay(true)?;
    Ok(TcpListener::from(OwnedSocket::from(socket)))
}

/// As long as toolhost's session ids, so both servers read as many bytes.
const FLOOR_SESSION: &str = "f100f100f100f100f100f100f100f100";
const FLOOR_INIT: &str = r#"{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":false}},"serverInfo":{"name":"floor","version":"1"}}"#;
const FLOOR_LIST: &str = r#"{"tools":[{"name":"echo","description":"Echoes text.","inputSchema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}}]}"#;
const FLOOR_CALL: &str = r#"{"content":[{"type":"text","text":"hello"}],"isError":false}"#;

/// The floor: a bare tiny_http responder with `workers` threads that reads
/// each body, parses it with serde_json and answers a fixed result for its
/// method — what any server must do at least.
fn floor(workers: usize) -> Fallible<String> {
    let listener = nodelay_listener(TcpListener::bind("127.0.0.1:0")?)?;
    let url = format!("http://{}/mcp", listener.local_addr()?);
    let server = tiny_http::Server::from_listener(listener, None).map_err(|e| e.to_string())?;
    let server = Arc::new(server);
    for _ in 0..workers {
        let server = Arc::clone(&server);
        thread::spawn(move || loop {
            let Ok(mut request) = server.recv() else {
                return;
            };
            let mut body = Vec::new();
            let _ = request.as_reader().read_to_end(&mut body);
            let message: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            let (status, extra, reply) = match message["method"].as_str() {
                _ if message.get("id").is_none() => (202, None, String::new()),
                Some("initialize") => (
                    200,
                    Some(("Mcp-Session-Id", FLOOR_SESSION)),
                    FLOOR_INIT.to_owned(),
                ),
                Some("tools/list") => (200, None, FLOOR_LIST.to_owned()),
                _ => (200, None, FLOOR_CALL.to_owned()),
            };
            let body = if reply.is_empty() {
                Vec::new()
            } else {
                format!(
                    r#"{{"jsonrpc":"2.0","id":{},"result":{reply}}}"#,
                    message["id"]
                )
                .into_bytes()
            };
            let mut headers = Vec::new();
            if !body.is_empty() {
                headers.extend(tiny_http::Header::from_bytes(
                    "Content-Type",
                    "application/json",
                ));
            }
            if let Some((name, value)) = extra {
                headers.extend(tiny_http::Header::from_bytes(name, value));
            }
            let length = body.len();
            let response = tiny_http::Response::new(
                tiny_http::StatusCode(status),
                headers,
                Cursor::new(body),
                Some(length),
                None,
            );
            let _ = request.respond(response);
        });
    }
    // The server lives as long as the process.
    std::mem::forget(server);
    Ok(url)
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
    let floor_url = floor(DEFAULT_WORKERS)?;
    println!(
        "{}",
        json!({
            "toolhost": echo.url(),
            "auth": echo.authorization(),
            "many_auth": many.authorization(),
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

/// A log-linear latency histogram in nanoseconds: 128 buckets per power of
/// two, so a reported percentile is within 1% of the true value.
#[derive(Clone)]
struct Histogram {
    counts: Vec<u64>,
    total: u64,
}

const SUB: u64 = 128;

impl Histogram {
    fn new() -> Histogram {
        Histogram {
            counts: vec![0; (SUB as usize) * 58],
            total: 0,
        }
    }

    fn index(ns: u64) -> usize {
        if ns < SUB {
            return ns as usize;
        }
        let exp = 63 - u64::from(ns.leading_zeros()); // >= 7
        let shift = exp - 7;
        let mantissa = (ns >> shift) - SUB;
        (SUB + shift * SUB + mantissa) as usize
    }

    fn value(index: usize) -> u64 {
        let index = index as u64;
        if index < SUB {
            return index;
        }
        let shift = (index - SUB) / SUB;
        let mantissa = (index - SUB) % SUB;
        // The middle of the bucket.
        ((SUB + mantissa) << shift) + ((1u64 << shift) >> 1)
    }

    fn record(&mut self, elapsed: Duration) {
        let ns = u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX);
        let index = Histogram::index(ns).min(self.counts.len() - 1);
        self.counts[index] += 1;
        self.total += 1;
    }

    fn merge(&mut self, other: &Histogram) {
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
        self.total += other.total;
    }

    /// The `q` quantile (0..=1) in microseconds.
    fn quantile_us(&self, q: f64) -> f64 {
        if self.total == 0 {
            return f64::NAN;
        }
        let rank = ((q * self.total as f64).ceil() as u64).clamp(1, self.total);
        let mut seen = 0;
        for (index, count) in self.counts.iter().enumerate() {
            seen += count;
            if seen >= rank {
                return Histogram::value(index) as f64 / 1000.0;
            }
        }
        f64::NAN
    }
}

/// What the child printed.
struct Servers {
    toolhost: String,
    auth: String,
    many_auth: String,
    floor: String,
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
    /// A client of `target`. The floor gets the same `Authorization` header
    /// (and ignores it), so both servers parse requests of the same size.
    fn client(&self, target: Target, era: Era) -> Result<Client, ClientError> {
        let url = match target {
            Target::Toolhost => &self.toolhost,
            Target::Floor => &self.floor,
        };
        Client::builder(url)
            .header("Authorization", &self.auth)
            .era(era)
            .connect()
    }
}

/// Calls that did not succeed, by kind.
#[derive(Clone, Copy, Default)]
struct Errors {
    /// 503: every call slot was taken.
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

    fn describe(self) -> String {
        match (self.busy, self.tool, self.other) {
            (0, 0, 0) => "0".into(),
            (busy, 0, 0) => format!("{busy} (503 busy)"),
            (busy, tool, other) => format!("{busy} busy, {tool} tool, {other} other"),
        }
    }
}

/// One cell: `conns` clients calling `echo` for `run`, after a warm-up.
struct Cell {
    calls_per_s: f64,
    histogram: Histogram,
    errors: Errors,
}

fn run_cell(
    servers: &Servers,
    target: Target,
    era: Era,
    conns: usize,
    run: Duration,
) -> Fallible<Cell> {
    let clients = (0..conns)
        .map(|_| servers.client(target, era))
        .collect::<Result<Vec<_>, _>>()?;
    let barrier = Arc::new(Barrier::new(conns + 1));
    let stop = Arc::new(AtomicBool::new(false));
    let workers: Vec<_> = clients
        .into_iter()
        .map(|mut client| {
            let barrier = Arc::clone(&barrier);
            let stop = Arc::clone(&stop);
            thread::spawn(move || {
                let args = json!({"text": "hello"});
                let mut histogram = Histogram::new();
                let mut errors = Errors::default();
                // Warm-up: connections, caches and the allocator settle.
                let warm = Instant::now();
                while warm.elapsed() < Duration::from_millis(200) {
                    let _ = client.call_tool("echo", args.clone());
                }
                barrier.wait();
                while !stop.load(Ordering::Relaxed) {
                    let started = Instant::now();
                    match client.call_tool("echo", args.clone()) {
                        Ok(result) if !result.is_error => histogram.record(started.elapsed()),
                        Ok(_) => errors.tool += 1,
                        Err(ClientError::Rpc { status: 503, .. }) => errors.busy += 1,
                        Err(_) => errors.other += 1,
                    }
                }
                (histogram, errors)
            })
        })
        .collect();
    barrier.wait();
    let started = Instant::now();
    thread::sleep(run);
    stop.store(true, Ordering::Relaxed);
    let elapsed = started.elapsed();
    let mut histogram = Histogram::new();
    let mut errors = Errors::default();
    for worker in workers {
        let (h, e) = worker.join().map_err(|_| "a load thread panicked")?;
        histogram.merge(&h);
        errors.add(e);
    }
    Ok(Cell {
        calls_per_s: histogram.total as f64 / elapsed.as_secs_f64(),
        histogram,
        errors,
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
/// tools/list, tools/call. Milliseconds.
fn first_call(servers: &Servers, target: Target) -> Fallible<f64> {
    let started = Instant::now();
    let mut client = servers.client(target, Era::Stateful)?;
    client.list_tools()?;
    client.call_tool("echo", json!({"text": "hello"}))?;
    let elapsed = started.elapsed();
    client.close()?;
    Ok(elapsed.as_secs_f64() * 1000.0)
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

/// Pins this process to CPU 0 and starts the child on CPU 1, when possible.
fn start_child() -> Fallible<(Child, String)> {
    let exe = std::env::current_exe()?;
    let cpus = thread::available_parallelism().map_or(1, |n| n.get());
    let want_pin = std::env::var("ROUNDTRIP_PIN").map_or(true, |v| v != "0");
    let pinned = want_pin
        && cpus >= 2
        && Command::new("taskset")
            .args(["-p", "-c", "0", &std::process::id().to_string()])
            .stdout(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
    let mut command = if pinned {
        let mut c = Command::new("taskset");
        c.args(["-c", "1"]).arg(&exe);
        c
    } else {
        Command::new(&exe)
    };
    let child = command
        .arg("--serve")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()?;
    let note = if pinned {
        "load generator on CPU 0, servers on CPU 1 (taskset)".to_owned()
    } else if !want_pin {
        "unpinned (ROUNDTRIP_PIN=0)".to_owned()
    } else {
        format!("unpinned (taskset missing or failed, or {cpus} CPU)")
    };
    Ok((child, note))
}

fn read_servers(child: &mut Child) -> Fallible<Servers> {
    let stdout = child.stdout.take().ok_or("no child stdout")?;
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line)?;
    let v: Value = serde_json::from_str(&line).map_err(|e| format!("child said {line:?}: {e}"))?;
    let text = |k: &str| {
        v[k].as_str()
            .map(str::to_owned)
            .ok_or(format!("child line lacks {k}"))
    };
    Ok(Servers {
        toolhost: text("toolhost")?,
        auth: text("auth")?,
        many_auth: text("many_auth")?,
        floor: text("floor")?,
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

fn drive() -> Fallible<()> {
    let rounds = env_number("ROUNDTRIP_ROUNDS", 5.0).max(1.0) as usize;
    let run = Duration::from_secs_f64(env_number("ROUNDTRIP_SECS", 1.0).max(0.05));
    let machine = machine_line();
    let (mut child, pinning) = start_child()?;
    let servers = read_servers(&mut child)?;
    println!("machine: {machine}");
    println!("placement: {pinning}");
    println!(
        "servers: toolhost ({}) and the floor ({}), {} workers each; load: toolhost::client, one keep-alive connection per thread",
        servers.toolhost, servers.floor, servers.workers
    );
    println!(
        "calls: tools/call echo, {rounds} rounds of {:.1}s per server and concurrency, alternating toolhost, floor, toolhost, …, 200 ms warm-up per connection",
        run.as_secs_f64()
    );
    println!();
    println!(
        "{:<9} {:>5} {:<8} {:>9} {:>8} {:>8} {:>9} {:>6}",
        "era", "conns", "server", "calls/s", "p50 µs", "p99 µs", "p99.9 µs", "errors"
    );
    let mut headline = Vec::new();
    for era in [Era::Stateful, Era::Stateless] {
        let era_name = if era == Era::Stateful {
            "stateful"
        } else {
            "stateless"
        };
        let mut ratios_line = Vec::new();
        for conns in CONCURRENCY {
            let mut ratios = Vec::new();
            let mut rates = [Vec::new(), Vec::new()];
            let mut histograms = [Histogram::new(), Histogram::new()];
            let mut errors = [Errors::default(); 2];
            for _ in 0..rounds {
                let mut round = [0.0; 2];
                for (slot, target) in [Target::Toolhost, Target::Floor].into_iter().enumerate() {
                    let cell = run_cell(&servers, target, era, conns, run)?;
                    round[slot] = cell.calls_per_s;
                    rates[slot].push(cell.calls_per_s);
                    histograms[slot].merge(&cell.histogram);
                    errors[slot].add(cell.errors);
                }
                ratios.push(round[0] / round[1]);
            }
            for (slot, target) in [Target::Toolhost, Target::Floor].into_iter().enumerate() {
                let h = &histograms[slot];
                println!(
                    "{:<9} {:>5} {:<8} {:>9.0} {:>8.1} {:>8.1} {:>9.1} {:>6}",
                    era_name,
                    conns,
                    target.name(),
                    median(&mut rates[slot]),
                    h.quantile_us(0.5),
                    h.quantile_us(0.99),
                    h.quantile_us(0.999),
                    errors[slot].describe()
                );
            }
            let ratio = median(&mut ratios);
            ratios_line.push(format!("c{conns}={ratio:.3}"));
            if era == Era::Stateful {
                headline.push(format!("c{conns}={ratio:.3}"));
            }
        }
        println!(
            "{era_name} call/floor (median of {rounds} round ratios): {}",
            ratios_line.join(" ")
        );
    }

    // First call on a fresh connection, alternating servers.
    let mut firsts = [Vec::new(), Vec::new()];
    for _ in 0..FIRST_CALLS {
        for (slot, target) in [Target::Toolhost, Target::Floor].into_iter().enumerate() {
            firsts[slot].push(first_call(&servers, target)?);
        }
    }
    let first_toolhost = median(&mut firsts[0]);
    let first_floor = median(&mut firsts[1]);
    println!();
    println!(
        "first call (connect, initialize, initialized, tools/list, tools/call; median of {FIRST_CALLS}): toolhost {first_toolhost:.3} ms, floor {first_floor:.3} ms, ratio {:.2}",
        first_toolhost / first_floor
    );

    // tools/list with 1,000 tools.
    let mut big = Client::builder(&servers.toolhost)
        .header("Authorization", &servers.many_auth)
        .era(Era::Stateful)
        .connect()?;
    let mut lists = Vec::new();
    let mut listed = 0;
    for _ in 0..50 {
        let started = Instant::now();
        listed = big.list_tools()?.len();
        lists.push(started.elapsed().as_secs_f64() * 1000.0);
    }
    println!(
        "tools/list with {listed} tools (stateful, median of 50): {:.2} ms",
        median(&mut lists)
    );

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
    println!(
        "bench: call/floor {} first_call_ms={first_toolhost:.3} sse_call_ms={sse_ms:.3} churn_per_s={:.0} bytes_per_session={}",
        headline.join(" "),
        servers.churn_per_s,
        show(servers.bytes_per_session)
    );
    Ok(())
}
