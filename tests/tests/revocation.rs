//! The revocation race: a session guard dropped while calls stream in.
//!
//! `src/session.rs` promises that once `ToolSession`'s `drop` has returned,
//! no call of that session is admitted, and every call admitted before sees
//! `is_cancelled() == true`. One global sequence orders everything: each
//! handler takes a number at entry and only then reads `is_cancelled()`;
//! each client takes one before sending; the dropping thread takes one right
//! after `drop` returns. So a handler whose number is above the drop's
//! entered after the drop returned, and must have seen the cancellation; a
//! request whose number is above the drop's was sent after it, and must get
//! 401.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};
use toolhost::{HostConfig, StaticSurface, Tool, ToolHost, ToolOutcome};
use toolhost_tests::{Conn, McpClient, JSON_HEADERS};

const ROUNDS: usize = 50;
const CALLERS: usize = 6;
const LISTERS: usize = 2;
/// A client stops at its first 401 for a request sent after the drop, or at
/// these bounds.
const MAX_REQUESTS_PER_CLIENT: usize = 5_000;
const MAX_ROUND: Duration = Duration::from_secs(10);

/// A xorshift64* generator: the race's random moments, reproducible from
/// the printed seed as far as thread timing allows.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// What one handler run saw at its entry.
#[derive(Clone, Copy, Debug)]
struct Entry {
    at: u64,
    cancelled_at_entry: bool,
    cancelled_at_exit: bool,
}

/// What one request got.
#[derive(Debug)]
struct Sent {
    at: u64,
    era: &'static str,
    method: &'static str,
    status: u16,
    body: Value,
}

/// The sequence and the handlers' records of one round.
struct Ledger {
    seq: AtomicU64,
    entries: Mutex<Vec<Entry>>,
    /// The drop's number, once it has returned.
    dropped_at: AtomicU64,
}

impl Ledger {
    fn new() -> Ledger {
        Ledger {
            seq: AtomicU64::new(0),
            entries: Mutex::default(),
            dropped_at: AtomicU64::new(u64::MAX),
        }
    }
}

fn racing_surface(ledger: &Arc<Ledger>) -> StaticSurface {
    let ledger = Arc::clone(ledger);
    StaticSurface::new()
        .tool(
            Tool::new("work", "Records when it ran."),
            move |args, ctx| {
                let at = ledger.seq.fetch_add(1, Ordering::SeqCst);
                let cancelled_at_entry = ctx.is_cancelled();
                // Some calls stay in flight for a moment, so that drops also
                // land on running handlers.
                match args["linger"].as_u64().unwrap_or(0) {
                    0 => {}
                    1 => thread::yield_now(),
                    micros => thread::sleep(Duration::from_micros(micros)),
                }
                ledger.entries.lock().unwrap().push(Entry {
                    at,
                    cancelled_at_entry,
                    cancelled_at_exit: ctx.is_cancelled(),
                });
                ToolOutcome::text("done")
            },
        )
        .unwrap()
}

/// One client's stream of requests until its bearer is refused.
struct Client {
    conn: Conn,
    auth: String,
    /// `Some(mcp session id)` in the stateful era, `None` in 2026-07-28.
    mcp_session: Option<String>,
    method: &'static str,
}

impl Client {
    fn send(&mut self, id: u64, linger: u64) -> (u16, Value) {
        let mut params = if self.method == "tools/call" {
            json!({"name": "work", "arguments": {"linger": linger}})
        } else {
            json!({})
        };
        let mut headers: Vec<(&str, &str)> = JSON_HEADERS.to_vec();
        headers.push(("Authorization", &self.auth));
        match &self.mcp_session {
            Some(session) => headers.extend([
                ("Mcp-Session-Id", session.as_str()),
                ("MCP-Protocol-Version", "2025-11-25"),
            ]),
            None => {
                params["_meta"] = json!({
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientCapabilities": {},
                });
                headers.extend([
                    ("MCP-Protocol-Version", "2026-07-28"),
                    ("Mcp-Method", self.method),
                ]);
                if self.method == "tools/call" {
                    headers.push(("Mcp-Name", "work"));
                }
            }
        }
        let body = json!({"jsonrpc": "2.0", "id": id, "method": self.method, "params": params});
        let reply = self
            .conn
            .request("POST", "/mcp", &headers, body.to_string().as_bytes())
            .expect("the host answers every request of the race");
        (reply.status, reply.json())
    }

    fn run(mut self, ledger: &Ledger, seed: u64) -> Vec<Sent> {
        let mut rng = Rng(seed | 1);
        let started = Instant::now();
        let mut sent = Vec::new();
        let mut refused_after_drop = false;
        while !refused_after_drop
            && sent.len() < MAX_REQUESTS_PER_CLIENT
            && started.elapsed() < MAX_ROUND
        {
            let linger = [0, 0, 1, 50, 300][rng.below(5) as usize];
            let at = ledger.seq.fetch_add(1, Ordering::SeqCst);
            let (status, body) = self.send(at, linger);
            refused_after_drop = status == 401 && at > ledger.dropped_at.load(Ordering::SeqCst);
            sent.push(Sent {
                at,
                era: if self.mcp_session.is_some() {
                    "2025-11-25"
                } else {
                    "2026-07-28"
                },
                method: self.method,
                status,
                body,
            });
        }
        sent
    }
}

/// What the rounds add up to, printed at the end.
#[derive(Debug, Default)]
struct Tally {
    requests: usize,
    handler_runs: usize,
    cancelled_at_entry: usize,
    cancelled_while_running: usize,
    refused_after_drop: usize,
    refused_although_sent_before_drop: usize,
}

#[test]
fn no_call_starts_after_the_drop_returns_and_calls_admitted_before_see_cancellation() {
    let seed = std::env::var("TOOLHOST_RACE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(1, |d| d.as_nanos() as u64)
        });
    eprintln!("revocation race seed {seed} (TOOLHOST_RACE_SEED={seed} to reuse)");
    let mut rng = Rng(seed | 1);
    let host = ToolHost::bind(
        HostConfig::default()
            .workers(CALLERS + LISTERS + 4)
            .max_concurrent_calls(CALLERS + 2),
    )
    .unwrap();
    let bystander_hits = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&bystander_hits);
    let bystander = host.open_session(
        StaticSurface::new()
            .tool(Tool::new("echo", "Echo."), move |_, _| {
                counter.fetch_add(1, Ordering::SeqCst);
                ToolOutcome::text("still here")
            })
            .unwrap(),
    );
    let mut bystander_client = McpClient::for_session(&host, &bystander);
    bystander_client.initialize("2025-11-25");
    let mut tally = Tally::default();
    let mut refusal_body: Option<Value> = None;

    for round in 0..ROUNDS {
        let ledger = Arc::new(Ledger::new());
        let session = host.open_session(racing_surface(&ledger));
        let auth = session.authorization();
        let mut opener = McpClient::for_session(&host, &session);
        opener.initialize("2025-11-25");
        let mcp_session = opener.session_id.clone();
        let clients: Vec<Client> = (0..CALLERS + LISTERS)
            .map(|n| Client {
                conn: Conn::open(host.local_addr()).unwrap(),
                auth: auth.clone(),
                mcp_session: if n % 2 == 0 {
                    mcp_session.clone()
                } else {
                    None
                },
                method: if n < CALLERS {
                    "tools/call"
                } else {
                    "tools/list"
                },
            })
            .collect();
        // Drop after a random number of handler runs (0 to 40), then after a
        // random spin of up to ~100 µs.
        let runs_before_drop = rng.below(41) as usize;
        let spin = rng.below(100);
        let seeds: Vec<u64> = clients.iter().map(|_| rng.next()).collect();
        let (dropped_at, sent) = thread::scope(|scope| {
            let running: Vec<_> = clients
                .into_iter()
                .zip(seeds)
                .map(|(client, seed)| {
                    let ledger = &ledger;
                    scope.spawn(move || client.run(ledger, seed))
                })
                .collect();
            let waiting = Instant::now();
            while ledger.entries.lock().unwrap().len() < runs_before_drop
                && waiting.elapsed() < MAX_ROUND
            {
                thread::yield_now();
            }
            let spin_until = Instant::now() + Duration::from_micros(spin);
            while Instant::now() < spin_until {
                std::hint::spin_loop();
            }
            drop(session);
            let dropped_at = ledger.seq.fetch_add(1, Ordering::SeqCst);
            ledger.dropped_at.store(dropped_at, Ordering::SeqCst);
            let sent: Vec<Sent> = running
                .into_iter()
                .flat_map(|client| client.join().unwrap())
                .collect();
            (dropped_at, sent)
        });

        let context = format!("round {round}, seed {seed}, drop at {dropped_at}");
        let entries = ledger.entries.lock().unwrap().clone();
        for entry in &entries {
            if entry.at > dropped_at {
                assert!(
                    entry.cancelled_at_entry,
                    "{context}: a handler entered after the drop returned without seeing the cancellation: {entry:?}"
                );
            }
        }
        let mut completed_calls = 0;
        for request in &sent {
            match request.status {
                200 => {
                    assert!(
                        request.at < dropped_at,
                        "{context}: served although sent after the drop: {request:?}"
                    );
                    let result = &request.body["result"];
                    if request.method == "tools/call" {
                        assert_eq!(result["isError"], false, "{context}: {request:?}");
                        assert_eq!(result["content"][0]["text"], "done", "{context}");
                        completed_calls += 1;
                    } else {
                        assert_eq!(result["tools"][0]["name"], "work", "{context}");
                    }
                }
                401 => {
                    // Every refusal reads the same, however late it was decided.
                    let body = refusal_body.get_or_insert_with(|| request.body.clone());
                    assert_eq!(&request.body, body, "{context}: {request:?}");
                    if request.at > dropped_at {
                        tally.refused_after_drop += 1;
                    } else {
                        tally.refused_although_sent_before_drop += 1;
                    }
                }
                other => panic!(
                    "{context}: status {other}, neither 401 nor a completed call: {request:?}"
                ),
            }
        }
        assert_eq!(
            completed_calls,
            entries.len(),
            "{context}: every handler run was answered as a completed call, and only those"
        );
        for era in ["2025-11-25", "2026-07-28"] {
            assert!(
                sent.iter()
                    .any(|r| r.era == era && r.status == 401 && r.at > dropped_at),
                "{context}: the {era} clients saw the bearer refused"
            );
        }
        tally.requests += sent.len();
        tally.handler_runs += entries.len();
        tally.cancelled_at_entry += entries.iter().filter(|e| e.cancelled_at_entry).count();
        tally.cancelled_while_running += entries
            .iter()
            .filter(|e| !e.cancelled_at_entry && e.cancelled_at_exit)
            .count();

        // Another session is served throughout.
        let result = bystander_client.call("echo", json!({}));
        assert_eq!(result["content"][0]["text"], "still here", "{context}");
        assert_eq!(bystander_hits.load(Ordering::SeqCst), round + 1);
        assert_eq!(host.open_sessions(), 1, "{context}");
    }
    eprintln!("{ROUNDS} rounds: {tally:?}");
    assert!(tally.handler_runs > 0);
    assert_eq!(bystander.calls_served(), ROUNDS as u64);
    drop(bystander);
    assert_eq!(host.open_sessions(), 0);
}

/// Sends the head and the first half of a 2026-07-28 `tools/list` whose
/// body is too large for tiny_http to buffer with the head, runs `meanwhile`,
/// sends the rest, and returns the status.
fn tools_list_in_two_halves(host: &ToolHost, auth: &str, meanwhile: impl FnOnce()) -> u16 {
    use std::io::{Read, Write};
    let mut body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": toolhost_tests::STATELESS,
        "io.modelcontextprotocol/clientCapabilities": {},
    }}})
    .to_string();
    body.push_str(&" ".repeat(4000));
    let addr = host.local_addr();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nAuthorization: {auth}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: {}\r\nMcp-Method: tools/list\r\nContent-Length: {}\r\n\r\n",
        toolhost_tests::STATELESS,
        body.len()
    );
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let (first, rest) = body.split_at(body.len() / 2);
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(first.as_bytes()).unwrap();
    // The head is admitted (the bearer checked) before the body is in.
    thread::sleep(Duration::from_millis(300));
    meanwhile();
    stream.write_all(rest.as_bytes()).unwrap();
    let mut status = [0; 12];
    stream.read_exact(&mut status).unwrap();
    String::from_utf8_lossy(&status[9..12]).parse().unwrap()
}

#[test]
fn a_session_dropped_while_a_body_arrives_refuses_that_request() {
    let host = ToolHost::bind(HostConfig::default()).unwrap();
    let session = host.open_session(StaticSurface::new());
    let auth = session.authorization();
    // Not dropped: the slow body is answered.
    assert_eq!(tools_list_in_two_halves(&host, &auth, || {}), 200);
    // Dropped between the head and the end of the body: refused, as any
    // request with that bearer from that instant on.
    assert_eq!(
        tools_list_in_two_halves(&host, &auth, move || drop(session)),
        401
    );
}
