//! The gateway's isolation, measured (issue 27's numbers), one mode a run:
//!
//! ```text
//! cargo run --release -p toolhost-tests --bin gateway_measure -- latency
//! cargo build --release --example gateway &&
//!   cargo run --release -p toolhost-tests --bin gateway_measure -- first-line target/release/examples/gateway
//! cargo run --release -p toolhost-tests --bin gateway_measure -- rss [MAX_MESSAGE_BYTES]
//! cargo run --release -p toolhost-tests --bin gateway_measure -- rss-listing [unbounded]
//! ```
//!
//! - `latency`: the application's own `echo` through two gateways in this
//!   process (default settings: 16 host slots; the layer's 8 running, 64
//!   waiting), one idle and one with 32 calls stalled on an upstream whose
//!   handler blocks (8 running on it, 24 waiting in its line): 2,000 calls
//!   on each, one after another, by turns of 100 so that both see the same
//!   load; p50, p99 and their ratio.
//! - `first-line PATH`: how long the gateway example at `PATH` takes to
//!   print its first line beside a stdio server that never answers (five
//!   runs).
//! - `rss [BYTES]`: the gateway process's peak RSS over idle when an
//!   upstream (a child process of this program) returns a 48 MiB result;
//!   `BYTES` sets the layer's `max_message_bytes` (default: the layer's
//!   default, 4 MiB).
//! - `rss-sse [BYTES]`: the same, the result coming as the last event of
//!   an event stream (the upstream reports progress first).
//! - `rss-stdio [BYTES]`: the same with a stdio upstream (this program
//!   again, as `stdio-huge`), whose 48 MiB result is one line.
//! - `rss-listing [unbounded]`: the gateway process's peak RSS over idle
//!   while a stdio upstream (this program again, as `stdio-pages`) lists
//!   60 pages of 3,000 tools of about 1.3 KiB each (each page within the
//!   layer's 4 MiB): with the client's default bound on one listing, or
//!   with `unbounded`, none (as before there was one).
//! - `remote-huge`: the upstream of `rss` (prints its URL and
//!   authorization, serves until stdin closes).
//! - `stdio-huge`: the upstream of `rss-stdio`, a stdio MCP server.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, ExitCode, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::json;
use toolhost::client::{Client, Era};
use toolhost::{
    HostConfig, LayeredSurface, McpServerLayer, ServerStatus, StaticSurface, Tool, ToolHost,
    ToolOutcome,
};
use toolhost_tests::bridged::app;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("latency") => latency(),
        Some("first-line") => first_line(
            args.get(1)
                .map_or("target/release/examples/gateway", String::as_str),
        ),
        Some("rss") => rss(args.get(1).and_then(|b| b.parse().ok()), false),
        Some("rss-sse") => rss(args.get(1).and_then(|b| b.parse().ok()), true),
        Some("rss-stdio") => rss_stdio(args.get(1).and_then(|b| b.parse().ok())),
        Some("remote-huge") => remote_huge(args.get(1).is_some_and(|a| a == "sse")),
        Some("stdio-huge") => stdio_huge(),
        Some("rss-listing") => rss_listing(args.get(1).is_some_and(|a| a == "unbounded")),
        Some("stdio-pages") => stdio_pages(),
        _ => {
            eprintln!(
                "usage: gateway_measure latency | first-line PATH | rss [BYTES] | remote-huge"
            );
            return ExitCode::from(2);
        }
    }
    ExitCode::SUCCESS
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let at = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[at]
}

/// `n` `echo` calls on `client`, one after another: how long each took.
fn echo_latency(client: &mut Client, n: usize) -> Vec<Duration> {
    let mut took = Vec::with_capacity(n);
    for _ in 0..n {
        let at = Instant::now();
        let result = client.call_tool("echo", json!({"text": "x"})).unwrap();
        took.push(at.elapsed());
        assert_eq!(result.text(), "x");
    }
    took
}

/// A gateway (`echo` above a layer named `up`) whose upstream's `hang`
/// blocks until `gate` opens.
fn gateway_with_hanging_upstream(
    gate: &Arc<(Mutex<bool>, Condvar)>,
) -> (ToolHost, ToolHost, toolhost::ToolSession, McpServerLayer) {
    let held = Arc::clone(gate);
    let remote_host = ToolHost::bind(HostConfig::default().max_concurrent_calls(64)).unwrap();
    let remote = remote_host.open_session(
        StaticSurface::new()
            .tool(Tool::new("hang", "Blocks."), move |_, _| {
                let (open, cv) = &*held;
                let mut open = open.lock().unwrap();
                while !*open {
                    open = cv.wait(open).unwrap();
                }
                ToolOutcome::text("done")
            })
            .unwrap(),
    );
    let layer = McpServerLayer::builder(
        "up",
        Client::builder(&remote.url())
            .header("Authorization", &remote.authorization())
            .era(Era::Stateful),
    )
    .start()
    .unwrap();
    let host = ToolHost::bind(HostConfig::default()).unwrap();
    let session = host.open_session(
        LayeredSurface::builder()
            .layer("app", app())
            .layer("up", layer.clone())
            .build(),
    );
    while !matches!(layer.status(), ServerStatus::Ready { .. }) {
        thread::sleep(Duration::from_millis(5));
    }
    // The remote session lives as long as its host: kept by the caller.
    std::mem::forget(remote);
    (remote_host, host, session, layer)
}

fn latency() {
    // Two gateways in one process, measured by turns so that both see the
    // same machine: one idle, one with 32 calls stalled on its upstream.
    let idle_gate = Arc::new((Mutex::new(false), Condvar::new()));
    let busy_gate = Arc::new((Mutex::new(false), Condvar::new()));
    let (_r1, _h1, idle_session, _l1) = gateway_with_hanging_upstream(&idle_gate);
    let (_r2, _h2, busy_session, _l2) = gateway_with_hanging_upstream(&busy_gate);
    let mut idle = idle_session.client().unwrap();
    let mut busy = busy_session.client().unwrap();
    let _ = echo_latency(&mut idle, 500); // warm-up
    let _ = echo_latency(&mut busy, 500);
    // Both idle first: how far apart two equal gateways measure here.
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for _ in 0..20 {
        a.extend(echo_latency(&mut idle, 100));
        b.extend(echo_latency(&mut busy, 100));
    }
    a.sort_unstable();
    b.sort_unstable();
    println!(
        "both gateways idle (the noise floor): p50 {:?} vs {:?}, p99 {:?} vs {:?}",
        percentile(&a, 0.5),
        percentile(&b, 0.5),
        percentile(&a, 0.99),
        percentile(&b, 0.99)
    );
    let stalled: Vec<_> = (0..32)
        .map(|_| {
            let mut client = busy_session.client().unwrap();
            thread::spawn(move || client.call_tool("up_hang", json!({})).unwrap())
        })
        .collect();
    // Every one of them sent and held (8 running, 24 in the line).
    thread::sleep(Duration::from_millis(500));
    let (mut idle_took, mut busy_took) = (Vec::new(), Vec::new());
    for _ in 0..20 {
        idle_took.extend(echo_latency(&mut idle, 100));
        busy_took.extend(echo_latency(&mut busy, 100));
    }
    {
        let (open, cv) = &*busy_gate;
        *open.lock().unwrap() = true;
        cv.notify_all();
    }
    for call in stalled {
        assert_eq!(call.join().unwrap().text(), "done");
    }
    idle_took.sort_unstable();
    busy_took.sort_unstable();
    let (idle50, idle99) = (percentile(&idle_took, 0.5), percentile(&idle_took, 0.99));
    let (busy50, busy99) = (percentile(&busy_took, 0.5), percentile(&busy_took, 0.99));
    println!("own-tool echo, 2000 sequential calls on each gateway, by turns of 100:");
    println!("  idle gateway:                  p50 {idle50:?}  p99 {idle99:?}");
    println!("  32 calls stalled on upstream:  p50 {busy50:?}  p99 {busy99:?}");
    println!(
        "  ratio stalled/idle:            p50 {:.2}x  p99 {:.2}x",
        busy50.as_secs_f64() / idle50.as_secs_f64(),
        busy99.as_secs_f64() / idle99.as_secs_f64()
    );
}

fn first_line(gateway: &str) {
    let mut took = Vec::new();
    for _ in 0..5 {
        let at = Instant::now();
        let mut child = Command::new(gateway)
            .args(["--stdio", "mute=sh -c cat>/dev/null"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        took.push(at.elapsed());
        assert!(line.contains("\"url\""), "{line}");
        drop(child.stdin.take());
        let _ = child.wait();
    }
    took.sort_unstable();
    println!(
        "time to the gateway's first line beside a silent stdio server (5 runs): median {:?}, max {:?}",
        took[2], took[4]
    );
}

/// The gateway process's memory when idle and after, as [`memory`] reads it.
fn print_memory((idle_peak, idle_now): (u64, u64), (peak, now): (u64, u64)) {
    println!(
        "  gateway process: idle RSS {} MiB (peak {} MiB); after: peak {} MiB, RSS {} MiB; peak over idle {} MiB",
        idle_now / 1024,
        idle_peak / 1024,
        peak / 1024,
        now / 1024,
        peak.saturating_sub(idle_now) / 1024
    );
}

/// `VmHWM` and `VmRSS` of this process, in KiB.
fn memory() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|n| n.parse().ok())
            .unwrap_or(0)
    };
    (field("VmHWM:"), field("VmRSS:"))
}

fn rss_stdio(max_message: Option<usize>) {
    let server =
        toolhost::client::StdioServer::new(std::env::current_exe().unwrap()).arg("stdio-huge");
    let mut builder = McpServerLayer::stdio("up", server);
    if let Some(bytes) = max_message {
        builder = builder.max_message_bytes(bytes);
    }
    measure_huge(builder.connect().unwrap(), max_message, "stdio");
}

fn stdio_huge() {
    serve_stdio("huge", |method, _| match method {
        "tools/list" => {
            Some(json!({"tools": [{"name": "huge", "inputSchema": {"type": "object"}}]}))
        }
        "tools/call" => Some(json!({"content": [{"type": "text", "text": "x".repeat(48 << 20)}]})),
        _ => None,
    });
}

/// A stdio MCP server named `name`: it answers `initialize` and `ping`,
/// and each other request with what `answer` gives for its method and
/// params (nothing for `None`).
fn serve_stdio(name: &str, answer: impl Fn(&str, &serde_json::Value) -> Option<serde_json::Value>) {
    let mut out = std::io::stdout().lock();
    for line in std::io::stdin().lock().lines() {
        let Ok(message) = serde_json::from_str::<serde_json::Value>(&line.unwrap()) else {
            continue;
        };
        let id = message["id"].clone();
        let result = match message["method"].as_str() {
            Some("initialize") => json!({"protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}}, "serverInfo": {"name": name, "version": "1"}}),
            Some("ping") => json!({}),
            Some(method) => match answer(method, &message["params"]) {
                Some(result) => result,
                None => continue,
            },
            None => continue,
        };
        writeln!(
            out,
            "{}",
            json!({"jsonrpc": "2.0", "id": id, "result": result})
        )
        .unwrap();
        out.flush().unwrap();
    }
}

/// The pages and tools per page of `stdio-pages`: the issue's 60 pages of
/// 3,000 tools.
const LISTING: (usize, usize) = (60, 3000);

fn rss_listing(unbounded: bool) {
    let mut server =
        toolhost::client::StdioServer::new(std::env::current_exe().unwrap()).arg("stdio-pages");
    if unbounded {
        server = server
            .max_listed_tools(usize::MAX)
            .max_listing_bytes(usize::MAX);
    }
    let host = ToolHost::bind(HostConfig::default()).unwrap();
    let layer = McpServerLayer::stdio("paged", server)
        .refresh_every(None)
        .start()
        .unwrap();
    let session = host.open_session(
        LayeredSurface::builder()
            .layer("app", app())
            .layer("paged", layer.clone())
            .build(),
    );
    let mut client = session.client().unwrap();
    client.call_tool("echo", json!({"text": "warm"})).unwrap();
    let (idle_peak, idle_now) = memory();
    let deadline = Instant::now() + Duration::from_secs(300);
    while matches!(layer.status(), ServerStatus::Connecting) && Instant::now() < deadline {
        thread::sleep(Duration::from_millis(20));
    }
    let status = layer.status();
    let (peak, now) = memory();
    let echo = client.call_tool("echo", json!({"text": "still"})).unwrap();
    println!(
        "{} pages of {} tools from a stdio upstream, {}: {status}; echo answers {:?}",
        LISTING.0,
        LISTING.1,
        if unbounded {
            "no bound on one listing"
        } else {
            "the client's default bound"
        },
        echo.text()
    );
    print_memory((idle_peak, idle_now), (peak, now));
}

/// A stdio MCP server listing [`LISTING`]'s pages, each tool about 1.3 KiB.
fn stdio_pages() {
    let description = "d".repeat(1200);
    serve_stdio("pages", |method, params| {
        if method != "tools/list" {
            return None;
        }
        let page: usize = params["cursor"]
            .as_str()
            .and_then(|c| c.parse().ok())
            .unwrap_or(0);
        let tools: Vec<serde_json::Value> = (0..LISTING.1)
            .map(|n| {
                json!({"name": format!("t{page}_{n}"), "description": description,
                "inputSchema": {"type": "object", "properties": {"x": {"type": "string"}}}})
            })
            .collect();
        let mut result = json!({"tools": tools});
        if page + 1 < LISTING.0 {
            result["nextCursor"] = (page + 1).to_string().into();
        }
        Some(result)
    });
}

fn rss(max_message: Option<usize>, sse: bool) {
    let mut remote = Command::new(std::env::current_exe().unwrap())
        .arg("remote-huge")
        .arg(if sse { "sse" } else { "json" })
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(remote.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let (url, auth) = line.trim().split_once(' ').unwrap();
    let mut builder = McpServerLayer::builder(
        "up",
        Client::builder(url)
            .header("Authorization", auth)
            .era(Era::Stateful),
    );
    if let Some(bytes) = max_message {
        builder = builder.max_message_bytes(bytes);
    }
    let transport = if sse {
        "HTTP (event stream)"
    } else {
        "HTTP (JSON body)"
    };
    measure_huge(builder.connect().unwrap(), max_message, transport);
    drop(remote.stdin.take());
    let _ = remote.wait();
}

/// Calls the 48 MiB tool of `layer` through a gateway and prints the
/// process's memory before and after.
fn measure_huge(layer: McpServerLayer, max_message: Option<usize>, transport: &str) {
    let host = ToolHost::bind(HostConfig::default()).unwrap();
    let session = host.open_session(
        LayeredSurface::builder()
            .layer("app", app())
            .layer("up", layer)
            .build(),
    );
    // The agent reads anything: what the gateway lets through is measured.
    let mut client = session
        .client_builder()
        .max_message_bytes(1 << 30)
        .connect()
        .unwrap();
    client.call_tool("echo", json!({"text": "warm"})).unwrap();
    let (idle_peak, idle_now) = memory();
    let result = client.call_tool("up_huge", json!({})).unwrap();
    let summary = format!(
        "isError {} and {} bytes of text",
        result.is_error,
        result.text().len()
    );
    drop(result);
    let (peak, now) = memory();
    println!(
        "48 MiB {transport} upstream result, max_message_bytes {}: {summary}",
        max_message.map_or("default (4 MiB)".to_owned(), |b| b.to_string())
    );
    print_memory((idle_peak, idle_now), (peak, now));
}

fn remote_huge(sse: bool) {
    let host = ToolHost::bind(HostConfig::default()).unwrap();
    let session = host.open_session(
        StaticSurface::new()
            .tool(Tool::new("huge", "A 48 MiB result."), move |_, ctx| {
                if sse {
                    // A progress report first turns the answer into an
                    // event stream, whose last event is the result.
                    ctx.progress(1.0, None, Some("starting"));
                }
                ToolOutcome::text("x".repeat(48 << 20))
            })
            .unwrap(),
    );
    let mut out = std::io::stdout().lock();
    writeln!(out, "{} {}", session.url(), session.authorization()).unwrap();
    out.flush().unwrap();
    drop(out);
    let _ = std::io::stdin().read_to_end(&mut Vec::new());
}
