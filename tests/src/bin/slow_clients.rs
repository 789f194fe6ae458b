//! Measures what idle and slow clients cost a legitimate agent: a
//! measurement, not a test (timing is never asserted).
//!
//! One host in this process; a legitimate client makes `tools/call` after
//! `tools/call` on one keep-alive connection while, in turn:
//!
//! 1. nothing else happens (the baseline);
//! 2. 500 connections sit idle (connected, not a byte sent) and 50 more
//!    trickle a small body (headers with the bearer and `Content-Length:
//!    512`, then one byte now and then) — tiny_http reads heads and bodies
//!    of at most 1 KiB on its own per-connection threads;
//! 3. the same 50 trickle a large body (`Content-Length: 100000`) without
//!    the bearer: refused at once, the unread body drained on a thread each;
//! 4. the same 50 trickle a large body with the bearer, which a worker reads
//!    itself — with no read deadline in the host, each holds its worker until
//!    the client gives up;
//! 5. every slow and idle client has closed.
//!
//! For each phase it prints the legitimate calls' latency (p50, p99, max and
//! how many got no answer within the per-call limit), and this process's
//! thread count and resident memory from `/proc/self/status`. Then it times
//! refusals of an unknown, a revoked and a wrong-secret bearer, interleaved
//! in the same run, to show that they cannot be told apart.
//!
//! ```text
//! cargo run --release --bin slow_clients [-- --idle 500 --slow 50 --calls 2000 --refusals 20000]
//! ```

use std::error::Error;
use std::io::{self, BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::json;
use toolhost::{HostConfig, StaticSurface, Tool, ToolHost, ToolOutcome};
use toolhost_tests::Conn;

type Result<T> = std::result::Result<T, Box<dyn Error>>;

/// How long a legitimate call may take before it counts as unanswered.
const CALL_LIMIT: Duration = Duration::from_secs(2);

struct Options {
    idle: usize,
    slow: usize,
    calls: usize,
    refusals: usize,
}

fn options() -> Result<Options> {
    let mut options = Options {
        idle: 500,
        slow: 50,
        calls: 2_000,
        refusals: 20_000,
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value: usize = args
            .next()
            .ok_or_else(|| format!("{flag} needs a number"))?
            .parse()?;
        match flag.as_str() {
            "--idle" => options.idle = value,
            "--slow" => options.slow = value,
            "--calls" => options.calls = value,
            "--refusals" => options.refusals = value,
            other => return Err(format!("unknown option {other}; see the program's docs").into()),
        }
    }
    Ok(options)
}

/// This process's thread count and resident memory (KiB), from `/proc`.
fn process_status() -> (usize, usize) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|line| line.strip_prefix(name))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(0)
    };
    (field("Threads:"), field("VmRSS:"))
}

/// One `tools/call` per request on a keep-alive connection, with a
/// deadline per call.
struct Agent {
    stream: TcpStream,
    reader: BufReader<TcpStream>,
    head: String,
    next_id: u64,
}

impl Agent {
    fn connect(addr: SocketAddr, auth: &str, mcp_session: &str) -> Result<Agent> {
        let stream = TcpStream::connect(addr)?;
        stream.set_nodelay(true)?;
        stream.set_read_timeout(Some(CALL_LIMIT))?;
        let reader = BufReader::new(stream.try_clone()?);
        let head = format!(
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nAuthorization: {auth}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMcp-Session-Id: {mcp_session}\r\nMCP-Protocol-Version: 2025-11-25\r\n"
        );
        Ok(Agent {
            stream,
            reader,
            head,
            next_id: 1,
        })
    }

    /// One call's latency, or `None` when it got no answer in time.
    fn call(&mut self) -> Result<Option<Duration>> {
        self.next_id += 1;
        let body = json!({"jsonrpc": "2.0", "id": self.next_id, "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": "ping"}}})
        .to_string();
        let request = format!("{}Content-Length: {}\r\n\r\n{body}", self.head, body.len());
        let started = Instant::now();
        self.stream.write_all(request.as_bytes())?;
        let mut length = 0;
        let mut line = String::new();
        loop {
            line.clear();
            match self.reader.read_line(&mut line) {
                Ok(0) => return Err("the host closed the agent's connection".into()),
                Ok(_) => {}
                Err(err)
                    if matches!(
                        err.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) =>
                {
                    return Ok(None)
                }
                Err(err) => return Err(err.into()),
            }
            if line == "\r\n" {
                break;
            }
            if let Some((name, value)) = line.split_once(':') {
                if name.eq_ignore_ascii_case("content-length") {
                    length = value.trim().parse()?;
                }
            }
        }
        let mut body = vec![0; length];
        io::Read::read_exact(&mut self.reader, &mut body)?;
        Ok(Some(started.elapsed()))
    }
}

/// Latency figures of one phase.
struct Phase {
    name: String,
    latencies: Vec<Duration>,
    unanswered: usize,
    threads: usize,
    rss_kib: usize,
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

/// Makes `calls` calls (stopping after three unanswered ones: a pinned host
/// would otherwise cost minutes) and samples the process meanwhile.
fn measure(
    name: &str,
    agent: &mut Option<Agent>,
    connect: &dyn Fn() -> Result<Agent>,
    calls: usize,
) -> Result<Phase> {
    let (threads, rss_kib) = process_status();
    let mut latencies = Vec::with_capacity(calls);
    let mut unanswered = 0;
    for _ in 0..calls {
        let current = match agent {
            Some(current) => current,
            None => agent.insert(connect()?),
        };
        match current.call()? {
            Some(latency) => latencies.push(latency),
            None => {
                // The answer may still come later: a fresh connection keeps
                // answers and requests paired.
                unanswered += 1;
                *agent = None;
                if unanswered == 3 {
                    break;
                }
            }
        }
    }
    latencies.sort();
    Ok(Phase {
        name: name.to_owned(),
        latencies,
        unanswered,
        threads,
        rss_kib,
    })
}

/// Connections that send a head with the bearer and `Content-Length`, then
/// trickle the body a byte at a time, round robin, until told to stop.
struct Tricklers {
    stop: Arc<AtomicBool>,
    thread: Option<thread::JoinHandle<()>>,
}

impl Tricklers {
    fn start(
        addr: SocketAddr,
        auth: Option<&str>,
        count: usize,
        length: usize,
    ) -> Result<Tricklers> {
        let credential = auth.map_or(String::new(), |a| format!("Authorization: {a}\r\n"));
        let mut streams = Vec::with_capacity(count);
        for _ in 0..count {
            let mut stream = TcpStream::connect(addr)?;
            write!(
                stream,
                "POST /mcp HTTP/1.1\r\nHost: {addr}\r\n{credential}Content-Type: application/json\r\nContent-Length: {length}\r\n\r\n{{"
            )?;
            streams.push(stream);
        }
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = thread::Builder::new()
            .name("trickler".into())
            .spawn(move || {
                let mut sent = 1;
                while !flag.load(Ordering::SeqCst) && sent < length {
                    for stream in &mut streams {
                        let _ = stream.write_all(b" ");
                    }
                    sent += 1;
                    // One byte per connection every 100 ms.
                    for _ in 0..10 {
                        if flag.load(Ordering::SeqCst) {
                            break;
                        }
                        thread::sleep(Duration::from_millis(10));
                    }
                }
            })?;
        Ok(Tricklers {
            stop,
            thread: Some(thread),
        })
    }

    fn stop(mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Waits (at most `limit`) for the process's thread count to drop to `target`.
fn settle_threads(target: usize, limit: Duration) -> usize {
    let until = Instant::now() + limit;
    loop {
        let (threads, _) = process_status();
        if threads <= target || Instant::now() >= until {
            return threads;
        }
        thread::sleep(Duration::from_millis(20));
    }
}

fn median(mut values: Vec<Duration>) -> Duration {
    values.sort();
    values[values.len() / 2]
}

fn main() -> Result<()> {
    let options = options()?;
    let host = ToolHost::bind(HostConfig::default())?;
    let addr = host.local_addr();
    let surface = StaticSurface::new().tool(Tool::new("echo", "Echoes text."), |args, _| {
        ToolOutcome::text(args["text"].as_str().unwrap_or_default())
    })?;
    let session = host.open_session(surface);
    let auth = session.authorization();
    let mut init = Conn::open(addr)?;
    let reply = init.request(
        "POST",
        "/mcp",
        &[
            ("Authorization", &auth),
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
        ],
        br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"slow_clients","version":"1"}}}"#,
    )?;
    let mcp_session = reply
        .header("mcp-session-id")
        .ok_or("initialize gave no Mcp-Session-Id")?
        .to_owned();
    let connect = || Agent::connect(addr, &auth, &mcp_session);
    let mut agent = None;
    let mut phases = Vec::new();

    phases.push(measure("baseline", &mut agent, &connect, options.calls)?);

    let mut idle = Vec::with_capacity(options.idle);
    for _ in 0..options.idle {
        idle.push(TcpStream::connect(addr)?);
    }
    let small = Tricklers::start(addr, Some(&auth), options.slow, 512)?;
    thread::sleep(Duration::from_millis(300));
    phases.push(measure(
        &format!("{} idle + {} slow 512 B bodies", options.idle, options.slow),
        &mut agent,
        &connect,
        options.calls,
    )?);
    small.stop();

    let strangers = Tricklers::start(addr, None, options.slow, 100_000)?;
    thread::sleep(Duration::from_millis(300));
    phases.push(measure(
        &format!(
            "{} idle + {} slow 100 kB, no bearer",
            options.idle, options.slow
        ),
        &mut agent,
        &connect,
        options.calls,
    )?);
    strangers.stop();

    let large = Tricklers::start(addr, Some(&auth), options.slow, 100_000)?;
    thread::sleep(Duration::from_millis(300));
    phases.push(measure(
        &format!(
            "{} idle + {} slow 100 kB bodies",
            options.idle, options.slow
        ),
        &mut agent,
        &connect,
        options.calls,
    )?);
    large.stop();

    drop(idle);
    let baseline_threads = phases[0].threads;
    // tiny_http's idle connection threads end after 5 s.
    let settled = settle_threads(baseline_threads + 2, Duration::from_secs(15));
    // The slow clients' sockets are still open: closing them ends their
    // bodies early, and frees whatever they held.
    phases.push(measure(
        "after the slow clients",
        &mut agent,
        &connect,
        options.calls,
    )?);

    println!();
    println!(
        "{:<40} {:>7} {:>10} {:>10} {:>10} {:>11} {:>8} {:>10}",
        "phase", "calls", "p50", "p99", "max", "unanswered", "threads", "RSS"
    );
    for phase in &phases {
        println!(
            "{:<40} {:>7} {:>10.1?} {:>10.1?} {:>10.1?} {:>11} {:>8} {:>7} KiB",
            phase.name,
            phase.latencies.len(),
            percentile(&phase.latencies, 0.5),
            percentile(&phase.latencies, 0.99),
            phase.latencies.last().copied().unwrap_or_default(),
            phase.unanswered,
            phase.threads,
            phase.rss_kib
        );
    }
    println!("threads once every slow and idle client closed (waited at most 15 s): {settled}");

    // Bearer refusals: unknown locator, revoked session, and the live
    // session's locator with a wrong secret, interleaved on three
    // keep-alive connections so that drift hits all alike.
    let revoked = {
        let gone = host.open_session(StaticSurface::new());
        let auth = gone.authorization();
        drop(gone);
        auth
    };
    let live = auth.trim_start_matches("Bearer ");
    let wrong_secret = format!("Bearer {}{}", &live[..live.len() - 64], "0".repeat(64));
    let unknown = format!("Bearer th_{}", "5".repeat(80));
    let kinds = [
        ("unknown", unknown),
        ("revoked", revoked),
        ("wrong secret", wrong_secret),
    ];
    let mut conns = Vec::new();
    for _ in &kinds {
        conns.push(Conn::open(addr)?);
    }
    let body = br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
    let mut times: Vec<Vec<Duration>> = vec![Vec::new(); kinds.len()];
    let mut bodies: Vec<Option<Vec<u8>>> = vec![None; kinds.len()];
    for round in 0..options.refusals {
        for offset in 0..kinds.len() {
            // Rotate the order each round.
            let k = (round + offset) % kinds.len();
            let headers = [
                ("Authorization", kinds[k].1.as_str()),
                ("Content-Type", "application/json"),
            ];
            let started = Instant::now();
            let reply = conns[k].request("POST", "/mcp", &headers, body)?;
            times[k].push(started.elapsed());
            if reply.status != 401 {
                return Err(format!("{} bearer got {}", kinds[k].0, reply.status).into());
            }
            bodies[k].get_or_insert(reply.body);
        }
    }
    println!();
    println!(
        "{:<14} {:>9} {:>10} {:>10} {:>10}  (401 round trips, {} each, interleaved)",
        "bearer", "status", "p10", "median", "p90", options.refusals
    );
    for (k, (kind, _)) in kinds.iter().enumerate() {
        let mut sorted = times[k].clone();
        sorted.sort();
        println!(
            "{kind:<14} {:>9} {:>10.1?} {:>10.1?} {:>10.1?}",
            401,
            percentile(&sorted, 0.1),
            median(times[k].clone()),
            percentile(&sorted, 0.9)
        );
    }
    let same_body = bodies.windows(2).all(|w| w[0] == w[1]);
    println!("identical 401 bodies: {same_body}");
    drop(session);
    host.shutdown();
    Ok(())
}
