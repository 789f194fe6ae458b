//! A bounded soak on loopback: sessions open and close while clients of
//! both eras call, list and cancel, and at the end every call is accounted
//! for, no session is left open and no thread is left behind.
//!
//! Three session slots each rotate their session (open, serve for 0.2 to
//! 1.5 s, drop) and open and drop 50 unused ones besides; eight clients
//! (four stateful, cycling through the four handshake revisions, four of
//! 2026-07-28) call `echo`, `decline` and `boom` (which panics), list the
//! tools, and start a long call which they cancel — by
//! `notifications/cancelled` in the stateful era, by closing the stream in
//! the stateless one. Beside them, bursts of 32 to 64 parallel calls of
//! `work` (5 ms) on one session, in each era by turns, fill every call slot
//! and the line of waiting calls behind them. A call that meets a dropped
//! session is refused (401, "revoked"); one that was waiting for a slot
//! when its session was dropped is answered without running ("not run").
//! No call is refused for want of a slot (503): the line holds 256, more
//! than the soak ever sends at once.
//!
//! Beside them all, a gateway of its own (a second host: the application's
//! `echo` above a bridged upstream behind a switchable relay) goes through
//! outage after outage: the upstream stops answering, 24 calls pile on it,
//! the application's `echo` is called meanwhile, the upstream recovers and
//! the pile drains. Every echo must be answered during the outage, every
//! piled call must end with the upstream's answer once it recovers.
//!
//! At the end it checks, and prints:
//! - `open_sessions() == 0` once every guard is dropped;
//! - the thread count (`/proc/self/task`) is back to what it was before the
//!   host was bound, waiting (at most 15 s) for tiny_http's connection
//!   threads to end after their clients closed;
//! - every call is accounted for: on the clients' side served + declined +
//!   failed + cancelled + not run + revoked + refused = sent, with refused
//!   (503) zero; the calls that reached a handler by the clients' count, by
//!   the handlers' own count and by the host's `CallStarted` events are the
//!   same number, and each started call finished; every call that waited
//!   for a slot (`CallQueued`) got one (`CallWaited`) or was answered
//!   without running (`CallAbandoned`, as many as the clients saw "not
//!   run"); the bursts made calls wait; every 401 a client saw is an
//!   `AuthRefused` event.
//!
//! ```text
//! cargo run --release --bin soak [-- --seconds 60]
//! ```

use std::error::Error;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use toolhost::{
    CallResult, Event, HostConfig, StaticSurface, Tool, ToolHost, ToolOutcome, ToolSession,
};
use toolhost_tests::{Conn, Reply};

type Result<T> = std::result::Result<T, Box<dyn Error + Send + Sync>>;

const SLOTS: usize = 3;
/// The host's workers and call slots (the default number of slots).
const WORKERS: usize = 12;
const CALL_SLOTS: usize = toolhost::DEFAULT_MAX_CONCURRENT_CALLS;
const CLIENTS: usize = 8;
/// The fewest and most parallel calls of one burst.
const BURST: (u64, u64) = (32, 64);
const REVISIONS: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];
const STATELESS: &str = "2026-07-28";

/// The payload of `boom`'s panic, kept off stderr by the panic hook.
struct SoakPanic;

/// Counters shared by every handler, every client and the event hook.
#[derive(Default)]
struct Ledger {
    // Handlers.
    ran_echo: AtomicU64,
    ran_decline: AtomicU64,
    ran_boom: AtomicU64,
    ran_work: AtomicU64,
    /// Per era: stateful, stateless.
    ran_long: [AtomicU64; 2],
    long_saw_cancel: [AtomicU64; 2],
    long_micros: [AtomicU64; 2],
    // Clients, per tools/call.
    sent: AtomicU64,
    served: AtomicU64,
    declined: AtomicU64,
    failed: AtomicU64,
    cancelled: AtomicU64,
    not_run: AtomicU64,
    revoked: AtomicU64,
    refused: AtomicU64,
    /// Bursts and their calls, per era.
    bursts: [AtomicU64; 2],
    burst_calls: [AtomicU64; 2],
    // Clients, other requests.
    lists: AtomicU64,
    lists_refused: AtomicU64,
    initializes: AtomicU64,
    statuses_401: AtomicU64,
    statuses_503: AtomicU64,
    // The host's events.
    call_started: AtomicU64,
    call_finished: AtomicU64,
    finished_failed: AtomicU64,
    call_queued: AtomicU64,
    most_waiting: AtomicU64,
    call_waited: AtomicU64,
    call_abandoned: AtomicU64,
    call_refused: AtomicU64,
    auth_refused: AtomicU64,
    bad_requests: Mutex<Vec<(u16, String)>>,
    // Sessions.
    sessions_opened: AtomicU64,
    // The gateway: outages, calls piled and drained, echoes answered
    // during an outage.
    outages: AtomicU64,
    piled: AtomicU64,
    drained: AtomicU64,
    echoes_in_outage: AtomicU64,
}

/// The gateway's outages, until `stop` (see the module's docs).
fn run_gateway(stop: &AtomicBool, ledger: &Ledger) -> Result<()> {
    use toolhost::client::{Client, Era};
    use toolhost::{LayeredSurface, McpServerLayer, ServerStatus};
    let remote_host = ToolHost::bind(HostConfig::default().max_concurrent_calls(64))?;
    let remote = remote_host
        .open_session(StaticSurface::new().tool(Tool::new("wait", "Answers."), |_, _| "done")?);
    let upstream = remote_host.local_addr();
    let switch = toolhost_tests::Switch::to(upstream);
    let layer = McpServerLayer::builder(
        "up",
        Client::builder(&switch.url_for(&remote.url()))
            .header("Authorization", &remote.authorization())
            .era(Era::Stateful),
    )
    .start()?;
    let host = ToolHost::bind(HostConfig::default())?;
    let app = StaticSurface::new().tool(Tool::new("echo", "Echoes."), |args, _| {
        ToolOutcome::text(args["text"].as_str().unwrap_or(""))
    })?;
    let session = host.open_session(
        LayeredSurface::builder()
            .layer("app", app)
            .layer("up", layer.clone())
            .build(),
    );
    let began = Instant::now();
    while !matches!(layer.status(), ServerStatus::Ready { .. }) {
        if began.elapsed() > Duration::from_secs(20) {
            return Err(format!("the gateway's upstream never joined: {}", layer.status()).into());
        }
        thread::sleep(Duration::from_millis(5));
    }
    let mut own = session.client()?;
    while !stop.load(Ordering::SeqCst) {
        switch.stall();
        add(&ledger.outages);
        let piled: Vec<_> = (0..24)
            .map(|_| {
                let mut client = session.client()?;
                add(&ledger.piled);
                Ok(thread::spawn(move || {
                    client.call_tool("up_wait", json!({}))
                }))
            })
            .collect::<Result<_>>()?;
        for n in 0..20 {
            let text = format!("outage {n}");
            let echoed = own.call_tool("echo", json!({ "text": text }))?;
            if echoed.text() != text {
                return Err(format!("echo during an outage answered {:?}", echoed.text()).into());
            }
            add(&ledger.echoes_in_outage);
            thread::sleep(Duration::from_millis(10));
        }
        switch.up();
        for call in piled {
            let result = call.join().map_err(|_| "a piled call panicked")??;
            if result.is_error || result.text() != "done" {
                return Err(format!("a piled call ended with {:?}", result.text()).into());
            }
            add(&ledger.drained);
        }
    }
    drop(own);
    drop(session);
    host.shutdown();
    drop(layer);
    drop(switch);
    Ok(())
}

fn add(counter: &AtomicU64) {
    counter.fetch_add(1, Ordering::SeqCst);
}

fn get(counter: &AtomicU64) -> u64 {
    counter.load(Ordering::SeqCst)
}

fn thread_count() -> usize {
    std::fs::read_dir("/proc/self/task").map_or(0, Iterator::count)
}

fn surface(ledger: &Arc<Ledger>) -> std::result::Result<StaticSurface, toolhost::Error> {
    let (a, b, c, d, e) = (
        Arc::clone(ledger),
        Arc::clone(ledger),
        Arc::clone(ledger),
        Arc::clone(ledger),
        Arc::clone(ledger),
    );
    StaticSurface::new()
        .tool(Tool::new("echo", "Echoes text."), move |args, _| {
            add(&a.ran_echo);
            ToolOutcome::text(args["text"].as_str().unwrap_or_default())
        })?
        .tool(Tool::new("decline", "Always declines."), move |_, _| {
            add(&b.ran_decline);
            ToolOutcome::declined("not now")
        })?
        .tool(Tool::new("boom", "Panics."), move |_, _| -> ToolOutcome {
            add(&c.ran_boom);
            std::panic::panic_any(SoakPanic)
        })?
        .tool(Tool::new("work", "Works 5 ms."), move |_, _| {
            add(&e.ran_work);
            thread::sleep(Duration::from_millis(5));
            ToolOutcome::text("worked")
        })?
        .tool(
            Tool::new("long", "Runs until cancelled, at most 2 s."),
            move |_, ctx| {
                let era = usize::from(ctx.revision().is_stateless());
                add(&d.ran_long[era]);
                let started = Instant::now();
                let until = started + Duration::from_secs(2);
                let mut step = 0.0;
                while !ctx.is_cancelled() && Instant::now() < until {
                    step += 1.0;
                    ctx.progress(step, None, None);
                    thread::sleep(Duration::from_millis(5));
                }
                if ctx.is_cancelled() {
                    add(&d.long_saw_cancel[era]);
                }
                let micros = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
                d.long_micros[era].fetch_add(micros, Ordering::SeqCst);
                ToolOutcome::text("long done")
            },
        )
}

/// The session a slot currently serves: its bearer and a generation, so
/// that clients notice a new session.
#[derive(Clone)]
struct Published {
    auth: String,
    generation: u64,
}

/// A tiny xorshift generator for the clients' choices.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n.max(1)
    }
}

/// One client: a keep-alive connection and, in the stateful era, the MCP
/// session it initialized under the slot's current bearer.
struct Client {
    addr: SocketAddr,
    conn: Conn,
    revision: &'static str,
    auth: String,
    generation: u64,
    mcp_session: Option<String>,
    next_id: u64,
}

impl Client {
    fn new(addr: SocketAddr, revision: &'static str) -> Result<Client> {
        Ok(Client {
            addr,
            conn: Conn::open(addr)?,
            revision,
            auth: String::new(),
            generation: u64::MAX,
            mcp_session: None,
            next_id: 0,
        })
    }

    /// Another client of the same MCP session, on a connection of its own.
    fn member(&self) -> Result<Client> {
        Ok(Client {
            conn: Conn::open(self.addr)?,
            auth: self.auth.clone(),
            mcp_session: self.mcp_session.clone(),
            ..Client::new(self.addr, self.revision)?
        })
    }

    fn stateless(&self) -> bool {
        self.revision == STATELESS
    }

    fn headers(&self, method: &str, tool: &str) -> Vec<(String, String)> {
        let mut headers = vec![
            ("Authorization", self.auth.clone()),
            ("Content-Type", "application/json".to_owned()),
            ("Accept", "application/json, text/event-stream".to_owned()),
        ];
        if self.stateless() {
            headers.extend([
                ("MCP-Protocol-Version", STATELESS.to_owned()),
                ("Mcp-Method", method.to_owned()),
            ]);
            if method == "tools/call" {
                headers.push(("Mcp-Name", tool.to_owned()));
            }
        } else if let Some(session) = &self.mcp_session {
            headers.push(("Mcp-Session-Id", session.clone()));
            if self.revision >= "2025-06-18" {
                headers.push(("MCP-Protocol-Version", self.revision.to_owned()));
            }
        }
        headers
            .into_iter()
            .map(|(n, v)| (n.to_owned(), v))
            .collect()
    }

    /// POSTs `body` with the headers of `method` (and `tool`).
    fn post(&mut self, method: &str, tool: &str, body: &[u8]) -> Result<Reply> {
        let owned = self.headers(method, tool);
        let headers: Vec<(&str, &str)> = owned
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_str()))
            .collect();
        Ok(self.conn.request("POST", "/mcp", &headers, body)?)
    }

    fn body(&mut self, method: &str, mut params: Value) -> (u64, Vec<u8>) {
        self.next_id += 1;
        if self.stateless() {
            params["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!(STATELESS);
            params["_meta"]["io.modelcontextprotocol/clientCapabilities"] = json!({});
        }
        let body =
            json!({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params});
        (self.next_id, body.to_string().into_bytes())
    }

    /// Follows the slot to its current session, initializing if stateful.
    fn follow(&mut self, published: &Published, ledger: &Ledger) -> Result<()> {
        if self.generation == published.generation
            && (self.stateless() || self.mcp_session.is_some())
        {
            return Ok(());
        }
        self.auth.clone_from(&published.auth);
        self.generation = published.generation;
        self.mcp_session = None;
        if self.stateless() {
            return Ok(());
        }
        add(&ledger.initializes);
        let (_, body) = self.body(
            "initialize",
            json!({"protocolVersion": self.revision, "capabilities": {},
                "clientInfo": {"name": "soak", "version": "1"}}),
        );
        let reply = self.post("initialize", "", &body)?;
        count_status(reply.status, ledger);
        if reply.status == 200 {
            self.mcp_session = reply.header("mcp-session-id").map(str::to_owned);
        }
        Ok(())
    }

    fn list(&mut self, ledger: &Ledger) -> Result<()> {
        let (_, body) = self.body("tools/list", json!({}));
        let reply = self.post("tools/list", "", &body)?;
        count_status(reply.status, ledger);
        match reply.status {
            200 => add(&ledger.lists),
            401 | 503 => add(&ledger.lists_refused),
            other => return Err(format!("tools/list got {other}").into()),
        }
        Ok(())
    }

    fn call(&mut self, tool: &str, ledger: &Ledger) -> Result<()> {
        add(&ledger.sent);
        let (id, body) = self.body(
            "tools/call",
            json!({"name": tool, "arguments": {"text": "hi"}}),
        );
        let reply = self.post("tools/call", tool, &body)?;
        count_status(reply.status, ledger);
        if reply.status != 200 {
            return refusal(reply.status, tool, ledger);
        }
        let message: Value = serde_json::from_slice(&reply.body)?;
        if message["id"] != id {
            return Err(format!("{tool}: an answer to another request: {message}").into());
        }
        answered(tool, &message, ledger)
    }

    /// Starts `long` with a progress token on a connection of its own, waits
    /// for its first progress event (so it surely runs), then cancels it.
    fn long_and_cancel(&mut self, ledger: &Ledger) -> Result<()> {
        add(&ledger.sent);
        let (id, body) = self.body(
            "tools/call",
            json!({"name": "long", "arguments": {}, "_meta": {"progressToken": 1}}),
        );
        let mut stream = TcpStream::connect(self.addr)?;
        stream.set_read_timeout(Some(Duration::from_secs(30)))?;
        let mut request = format!("POST /mcp HTTP/1.1\r\nHost: {}\r\n", self.addr);
        for (name, value) in self.headers("tools/call", "long") {
            request.push_str(&format!("{name}: {value}\r\n"));
        }
        request.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
        stream.write_all(request.as_bytes())?;
        stream.write_all(&body)?;
        let mut reader = BufReader::new(stream.try_clone()?);
        let mut line = String::new();
        reader.read_line(&mut line)?;
        let status: u16 = line.get(9..12).unwrap_or("0").parse()?;
        count_status(status, ledger);
        if status != 200 {
            return refusal(status, "long", ledger);
        }
        let mut event_stream = false;
        let mut length = 0;
        loop {
            line.clear();
            reader.read_line(&mut line)?;
            if line.trim().is_empty() {
                break;
            }
            let lower = line.to_ascii_lowercase();
            event_stream |= lower.starts_with("content-type: text/event-stream");
            if let Some(value) = lower.strip_prefix("content-length:") {
                length = value.trim().parse()?;
            }
        }
        if !event_stream {
            // Its session was dropped before the first progress message:
            // the handler saw the cancellation at once and its plain answer
            // came back — or, waiting for a slot, it never ran.
            let mut body = vec![0; length];
            reader.read_exact(&mut body)?;
            let message: Value = serde_json::from_slice(&body)?;
            if message["id"] != id {
                return Err(format!("long: unexpected answer {message}").into());
            }
            return answered("long", &message, ledger);
        }
        let first = loop {
            let chunk = next_chunk(&mut reader)?.ok_or("long: the stream ended at once")?;
            // A 2025-11-25 stream opens with a priming event: an id, no data.
            let has_data = chunk.lines().any(|line| {
                line.strip_prefix("data:")
                    .is_some_and(|data| !data.trim().is_empty())
            });
            if has_data {
                break chunk;
            }
        };
        if let Some(message) = response_in(&first, id) {
            // It waited for a slot (the stream carried keep-alives) and its
            // session was dropped: it never ran.
            return answered("long", &message, ledger);
        }
        if !first.contains("notifications/progress") {
            return Err(format!("long: first event {first:?}").into());
        }
        if self.stateless() {
            // Closing the stream is the cancellation: the handler hears of it
            // at its next progress message.
            drop(reader);
            drop(stream);
            add(&ledger.cancelled);
            return Ok(());
        }
        // A notification: no id.
        let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": id, "reason": "soak"}});
        let ack = self.post("notifications/cancelled", "", cancel.to_string().as_bytes())?;
        count_status(ack.status, ledger);
        if ack.status != 202 && ack.status != 401 {
            return Err(format!("notifications/cancelled got {}", ack.status).into());
        }
        // The rest of the stream: progress, then its end with no response
        // (cancelled), or the response (finished first, or the cancel came
        // after a revocation and found a 401).
        let mut answered = false;
        while let Some(event) = next_chunk(&mut reader)? {
            answered |= event.contains(&format!("\"id\":{id}"));
        }
        if answered {
            add(&ledger.served);
        } else {
            add(&ledger.cancelled);
        }
        Ok(())
    }
}

/// Counts the answer to a call of `tool`: what each tool answers, or, for
/// a call that waited for a slot when its session was dropped, the tool
/// error that says it never ran.
fn answered(tool: &str, message: &Value, ledger: &Ledger) -> Result<()> {
    let is_error = message["result"]["isError"] == true;
    let text = message["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    match (tool, is_error) {
        (_, true) if text.contains("cancelled before it started") => add(&ledger.not_run),
        ("echo" | "work" | "long", false) => add(&ledger.served),
        ("decline", true) => add(&ledger.declined),
        ("boom", true) => add(&ledger.failed),
        _ => return Err(format!("{tool}: unexpected answer {message}").into()),
    }
    Ok(())
}

/// The response to request `id` in an event chunk, if it carries it.
fn response_in(chunk: &str, id: u64) -> Option<Value> {
    chunk
        .lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
        .find(|message| message["id"] == id && message.get("method").is_none())
}

/// One chunk of a chunked body as text; `None` at the last chunk.
fn next_chunk(reader: &mut BufReader<TcpStream>) -> Result<Option<String>> {
    let mut size = String::new();
    reader.read_line(&mut size)?;
    let size = usize::from_str_radix(size.trim(), 16)?;
    if size == 0 {
        let mut end = String::new();
        reader.read_line(&mut end)?;
        return Ok(None);
    }
    let mut chunk = vec![0; size + 2];
    reader.read_exact(&mut chunk)?;
    chunk.truncate(size);
    Ok(Some(String::from_utf8(chunk)?))
}

fn count_status(status: u16, ledger: &Ledger) {
    match status {
        401 => add(&ledger.statuses_401),
        503 => add(&ledger.statuses_503),
        _ => {}
    }
}

fn refusal(status: u16, tool: &str, ledger: &Ledger) -> Result<()> {
    match status {
        401 => add(&ledger.revoked),
        503 => add(&ledger.refused),
        other => return Err(format!("{tool}: status {other}").into()),
    }
    Ok(())
}

fn run_client(
    n: usize,
    addr: SocketAddr,
    slots: &RwLock<Vec<Option<Published>>>,
    stop: &AtomicBool,
    ledger: &Ledger,
) -> Result<()> {
    let revision = if n % 2 == 0 {
        REVISIONS[(n / 2) % REVISIONS.len()]
    } else {
        STATELESS
    };
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ (n as u64 + 1));
    let mut client: Option<Client> = None;
    let mut slot = n % SLOTS;
    while !stop.load(Ordering::SeqCst) {
        // A client keeps to one slot for a while (one agent, one session),
        // then moves to another.
        if rng.below(30) == 0 {
            slot = rng.below(SLOTS as u64) as usize;
        }
        let Some(published) = slots.read().map_err(|_| "slots poisoned")?[slot].clone() else {
            thread::sleep(Duration::from_millis(1));
            continue;
        };
        let current = match &mut client {
            Some(current) => current,
            None => client.insert(Client::new(addr, revision)?),
        };
        current.follow(&published, ledger)?;
        if !current.stateless() && current.mcp_session.is_none() {
            // The session went away before initialize: try the next one.
            current.generation = u64::MAX;
            continue;
        }
        match rng.below(100) {
            0..=54 => current.call("echo", ledger)?,
            55..=79 => current.list(ledger)?,
            80..=87 => current.call("decline", ledger)?,
            88..=91 => current.call("boom", ledger)?,
            _ => current.long_and_cancel(ledger)?,
        }
        // Now and then a fresh connection, as agents reconnect.
        if rng.below(50) == 0 {
            client = None;
        }
    }
    Ok(())
}

/// Sends bursts of parallel calls until told to stop: each of 32 to 64
/// calls of `work` on one session (one MCP session in the stateful era),
/// each call on a connection of its own, the eras by turns, a pause of 50
/// to 250 ms between bursts.
fn run_bursts(
    addr: SocketAddr,
    slots: &RwLock<Vec<Option<Published>>>,
    stop: &AtomicBool,
    ledger: &Ledger,
) -> Result<()> {
    let mut rng = Rng(0x6a09_e667_f3bc_c909);
    let mut era = 0;
    while !stop.load(Ordering::SeqCst) {
        let slot = rng.below(SLOTS as u64) as usize;
        let Some(published) = slots.read().map_err(|_| "slots poisoned")?[slot].clone() else {
            thread::sleep(Duration::from_millis(1));
            continue;
        };
        era = 1 - era;
        let revision = if era == 1 {
            STATELESS
        } else {
            REVISIONS[rng.below(REVISIONS.len() as u64) as usize]
        };
        let mut leader = Client::new(addr, revision)?;
        leader.follow(&published, ledger)?;
        if !leader.stateless() && leader.mcp_session.is_none() {
            // The session went away before initialize.
            continue;
        }
        let size = BURST.0 + rng.below(BURST.1 - BURST.0 + 1);
        add(&ledger.bursts[era]);
        ledger.burst_calls[era].fetch_add(size, Ordering::SeqCst);
        let members = (0..size)
            .map(|_| leader.member())
            .collect::<Result<Vec<_>>>()?;
        thread::scope(|scope| {
            let calls: Vec<_> = members
                .into_iter()
                .map(|mut member| scope.spawn(move || member.call("work", ledger)))
                .collect();
            calls
                .into_iter()
                .try_for_each(|call| call.join().map_err(|_| "a burst call panicked")?)
        })?;
        thread::sleep(Duration::from_millis(50 + rng.below(200)));
    }
    Ok(())
}

/// Rotates one slot's session until told to stop; returns the last guard.
fn run_slot(
    slot: usize,
    host: &ToolHost,
    slots: &RwLock<Vec<Option<Published>>>,
    stop: &AtomicBool,
    ledger: &Arc<Ledger>,
) -> Result<Option<ToolSession>> {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d ^ (slot as u64 + 1));
    let mut generation = slot as u64 * 1_000_000;
    let mut current: Option<ToolSession> = None;
    while !stop.load(Ordering::SeqCst) {
        let session = host.open_session(surface(ledger)?);
        add(&ledger.sessions_opened);
        generation += 1;
        slots.write().map_err(|_| "slots poisoned")?[slot] = Some(Published {
            auth: session.authorization(),
            generation,
        });
        // Dropping the previous guard now revokes it under the clients' feet.
        drop(current.replace(session));
        for _ in 0..50 {
            drop(host.open_session(StaticSurface::new()));
            add(&ledger.sessions_opened);
        }
        let serve_for = Duration::from_millis(200 + rng.below(1_300));
        let until = Instant::now() + serve_for;
        while Instant::now() < until && !stop.load(Ordering::SeqCst) {
            thread::sleep(Duration::from_millis(10));
        }
    }
    Ok(current)
}

/// How many of `slots` calls run at once on a fresh session: each waits
/// (at most 5 s) until all have arrived, so a slot leaked by the soak shows
/// as calls that never met the others (the last one waits in line). Also returns how many of
/// them reached the handler.
fn call_slots_free(host: &ToolHost, slots: usize) -> Result<(usize, u64)> {
    let arrived = Arc::new((Mutex::new(0usize), std::sync::Condvar::new()));
    let gate = Arc::clone(&arrived);
    let surface =
        StaticSurface::new().tool(Tool::new("gather", "Waits for the others."), move |_, _| {
            let (count, all_here) = &*gate;
            let Ok(mut count) = count.lock() else {
                return ToolOutcome::failed("poisoned");
            };
            *count += 1;
            all_here.notify_all();
            let deadline = Instant::now() + Duration::from_secs(5);
            while *count < slots && Instant::now() < deadline {
                match all_here.wait_timeout(count, Duration::from_millis(50)) {
                    Ok((next, _)) => count = next,
                    Err(_) => return ToolOutcome::failed("poisoned"),
                }
            }
            ToolOutcome::text(if *count >= slots { "met" } else { "alone" })
        })?;
    let session = host.open_session(surface);
    let auth = session.authorization();
    let addr = host.local_addr();
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "gather", "arguments": {},
        "_meta": {"io.modelcontextprotocol/protocolVersion": STATELESS,
                  "io.modelcontextprotocol/clientCapabilities": {}}}})
    .to_string();
    let met = thread::scope(|scope| {
        let calls: Vec<_> = (0..slots)
            .map(|_| {
                let (auth, body) = (&auth, &body);
                scope.spawn(move || -> Result<bool> {
                    let reply = Conn::open(addr)?.request(
                        "POST",
                        "/mcp",
                        &[
                            ("Authorization", auth),
                            ("Content-Type", "application/json"),
                            ("MCP-Protocol-Version", STATELESS),
                            ("Mcp-Method", "tools/call"),
                            ("Mcp-Name", "gather"),
                        ],
                        body.as_bytes(),
                    )?;
                    Ok(reply.status == 200 && String::from_utf8_lossy(&reply.body).contains("met"))
                })
            })
            .collect();
        calls
            .into_iter()
            .map(|call| matches!(call.join(), Ok(Ok(true))))
            .filter(|met| *met)
            .count()
    });
    drop(session);
    let ran = arrived.0.lock().map_or(0, |count| *count);
    Ok((met, ran as u64))
}

fn seconds() -> Result<u64> {
    let mut args = std::env::args().skip(1);
    let mut seconds = 60;
    while let Some(flag) = args.next() {
        match flag.as_str() {
            "--seconds" => seconds = args.next().ok_or("--seconds needs a number")?.parse()?,
            other => return Err(format!("unknown option {other}; use --seconds N").into()),
        }
    }
    Ok(seconds)
}

fn main() -> Result<()> {
    let seconds = seconds()?;
    let quiet = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !info.payload().is::<SoakPanic>() {
            quiet(info);
        }
    }));
    let threads_before = thread_count();
    let ledger = Arc::new(Ledger::default());
    let sink = Arc::clone(&ledger);
    // The default call slots and line of waiting calls: a burst and the
    // eight clients fill the slots, and never the line.
    let config = HostConfig::default()
        .workers(WORKERS)
        .max_concurrent_calls(CALL_SLOTS)
        .max_queued_calls(toolhost::DEFAULT_MAX_QUEUED_CALLS);
    let host = ToolHost::bind(config.on_event(move |event| match event {
        Event::CallStarted { .. } => add(&sink.call_started),
        Event::CallQueued { waiting, .. } => {
            add(&sink.call_queued);
            sink.most_waiting
                .fetch_max(*waiting as u64, Ordering::SeqCst);
        }
        Event::CallWaited { .. } => add(&sink.call_waited),
        Event::CallAbandoned { .. } => add(&sink.call_abandoned),
        Event::CallRefused { .. } => add(&sink.call_refused),
        Event::CallFinished { outcome, .. } => {
            add(&sink.call_finished);
            if matches!(outcome, CallResult::Failed { .. }) {
                add(&sink.finished_failed);
            }
        }
        Event::AuthRefused { .. } => add(&sink.auth_refused),
        // Past ten a second, refusals are counted, not reported one by one.
        Event::AuthRefusalsSuppressed { count } => {
            sink.auth_refused.fetch_add(*count, Ordering::SeqCst);
        }
        Event::BadRequest { status, message } => {
            if let Ok(mut bad) = sink.bad_requests.lock() {
                bad.push((*status, message.clone()));
            }
        }
        _ => {}
    }))?;
    let addr = host.local_addr();
    println!(
        "soak: {seconds} s on {addr}, {SLOTS} session slots, {CLIENTS} clients, bursts of {} to {} parallel calls, {CALL_SLOTS} call slots",
        BURST.0, BURST.1
    );
    let slots = RwLock::new(vec![None; SLOTS]);
    let stop = AtomicBool::new(false);
    let started = Instant::now();
    let mut peak_threads = 0;
    let (guards, client_errors) = thread::scope(|scope| {
        let rotating: Vec<_> = (0..SLOTS)
            .map(|slot| {
                let (host, slots, stop, ledger) = (&host, &slots, &stop, &ledger);
                scope.spawn(move || run_slot(slot, host, slots, stop, ledger))
            })
            .collect();
        let mut clients: Vec<_> = (0..CLIENTS)
            .map(|n| {
                let (slots, stop, ledger) = (&slots, &stop, &ledger);
                scope.spawn(move || run_client(n, addr, slots, stop, ledger))
            })
            .collect();
        clients.push(scope.spawn(|| run_bursts(addr, &slots, &stop, &ledger)));
        clients.push(scope.spawn(|| run_gateway(&stop, &ledger)));
        while started.elapsed() < Duration::from_secs(seconds) {
            thread::sleep(Duration::from_millis(250));
            peak_threads = peak_threads.max(thread_count());
            if clients.iter().any(thread::ScopedJoinHandle::is_finished) {
                break;
            }
        }
        stop.store(true, Ordering::SeqCst);
        let client_errors: Vec<String> = clients
            .into_iter()
            .filter_map(|c| match c.join() {
                Ok(Ok(())) => None,
                Ok(Err(err)) => Some(err.to_string()),
                Err(_) => Some("a client panicked".to_owned()),
            })
            .collect();
        let guards: Vec<ToolSession> = rotating
            .into_iter()
            .filter_map(|r| r.join().ok().and_then(Result::ok).flatten())
            .collect();
        (guards, client_errors)
    });
    let ran_for = started.elapsed();
    // Handlers whose client went away end at their next progress message;
    // wait (at most 5 s) for the last of them before counting free slots.
    let quiet_from = Instant::now();
    while get(&ledger.call_finished) < get(&ledger.call_started)
        && quiet_from.elapsed() < Duration::from_secs(5)
    {
        thread::sleep(Duration::from_millis(5));
    }
    let (free_slots, gathered) = call_slots_free(&host, CALL_SLOTS)?;
    let open_before_drop = host.open_sessions();
    drop(guards);
    let open_after_drop = host.open_sessions();
    host.shutdown();
    drop(host);
    // tiny_http's connection threads end about 5 s after their clients left.
    let waiting = Instant::now();
    let mut threads_after = thread_count();
    while threads_after > threads_before && waiting.elapsed() < Duration::from_secs(15) {
        thread::sleep(Duration::from_millis(100));
        threads_after = thread_count();
    }

    let l = &*ledger;
    let sent = get(&l.sent);
    let outcomes = get(&l.served)
        + get(&l.declined)
        + get(&l.failed)
        + get(&l.cancelled)
        + get(&l.not_run)
        + get(&l.revoked)
        + get(&l.refused);
    let reached_by_clients = get(&l.served) + get(&l.declined) + get(&l.failed) + get(&l.cancelled);
    let ran_long = [get(&l.ran_long[0]), get(&l.ran_long[1])];
    // The slot check's calls are the host's, not the soak's.
    let call_started = get(&l.call_started) - gathered;
    let ran = get(&l.ran_echo)
        + get(&l.ran_decline)
        + get(&l.ran_boom)
        + get(&l.ran_work)
        + ran_long[0]
        + ran_long[1];
    println!(
        "ran for {ran_for:.1?}; sessions opened and dropped: {}",
        get(&l.sessions_opened)
    );
    println!(
        "tools/call sent {sent}: served {} + declined {} + failed {} + cancelled {} + not run {} + revoked {} + refused {} = {outcomes}",
        get(&l.served),
        get(&l.declined),
        get(&l.failed),
        get(&l.cancelled),
        get(&l.not_run),
        get(&l.revoked),
        get(&l.refused)
    );
    println!(
        "bursts: stateful {} ({} calls), 2026-07-28 {} ({} calls); calls that waited for a slot {} (most waiting at once {}), got one {}, never ran {}, refused for a full line {}",
        get(&l.bursts[0]),
        get(&l.burst_calls[0]),
        get(&l.bursts[1]),
        get(&l.burst_calls[1]),
        get(&l.call_queued),
        get(&l.most_waiting),
        get(&l.call_waited),
        get(&l.call_abandoned),
        get(&l.call_refused)
    );
    println!(
        "calls that reached a handler: clients {reached_by_clients}, handlers {ran} (echo {}, decline {}, boom {}, work {}, long {}), CallStarted {}, CallFinished {} ({} failed)",
        get(&l.ran_echo),
        get(&l.ran_decline),
        get(&l.ran_boom),
        get(&l.ran_work),
        ran_long[0] + ran_long[1],
        call_started,
        get(&l.call_finished) - gathered,
        get(&l.finished_failed)
    );
    println!(
        "tools/list served {}, refused {}; initialize {}; 401s seen {} vs AuthRefused events {}; 503s seen {}",
        get(&l.lists),
        get(&l.lists_refused),
        get(&l.initializes),
        get(&l.statuses_401),
        get(&l.auth_refused),
        get(&l.statuses_503)
    );
    let bad: Vec<(u16, String)> = l.bad_requests.lock().map(|b| b.clone()).unwrap_or_default();
    for (era, name) in ["stateful", "2026-07-28"].iter().enumerate() {
        let runs = ran_long[era];
        println!(
            "long calls, {name}: {runs}, {} saw the cancellation, {:.1} ms from start to return on average",
            get(&l.long_saw_cancel[era]),
            get(&l.long_micros[era]) as f64 / 1000.0 / runs.max(1) as f64
        );
    }
    println!(
        "gateway: {} outages of its upstream, {} calls piled on it and {} drained, {} own-tool echoes answered during outages",
        get(&l.outages),
        get(&l.piled),
        get(&l.drained),
        get(&l.echoes_in_outage)
    );
    println!("call slots free after the soak: {free_slots} of {CALL_SLOTS}");
    println!("open sessions: {open_before_drop} before the last drops, {open_after_drop} after");
    println!("threads: {threads_before} before bind, peak {peak_threads}, {threads_after} after shutdown");

    let mut broken = client_errors;
    let mut check = |ok: bool, what: String| {
        if !ok {
            broken.push(what);
        }
    };
    check(
        outcomes == sent,
        format!("outcomes {outcomes} != sent {sent}"),
    );
    check(
        get(&l.refused) == 0 && get(&l.statuses_503) == 0 && get(&l.call_refused) == 0,
        format!(
            "{} calls and {} requests refused with 503 below the queue bound",
            get(&l.refused),
            get(&l.statuses_503)
        ),
    );
    check(
        get(&l.call_queued) > 0 && get(&l.bursts[0]) > 0 && get(&l.bursts[1]) > 0,
        "the bursts never made a call wait, or one era had none".into(),
    );
    check(
        get(&l.call_queued) == get(&l.call_waited) + get(&l.call_abandoned),
        "a call that waited neither got a slot nor left the line".into(),
    );
    check(
        get(&l.not_run) == get(&l.call_abandoned),
        format!(
            "clients saw {} calls not run, the host abandoned {}",
            get(&l.not_run),
            get(&l.call_abandoned)
        ),
    );
    check(
        reached_by_clients == ran,
        format!("clients counted {reached_by_clients} handler runs, handlers {ran}"),
    );
    check(
        ran == call_started,
        "handler runs != CallStarted events".into(),
    );
    check(
        get(&l.call_started) == get(&l.call_finished),
        "a started call never finished".into(),
    );
    check(
        get(&l.finished_failed) == get(&l.ran_boom),
        "failed calls != boom runs".into(),
    );
    check(
        get(&l.statuses_401) == get(&l.auth_refused),
        "401s != AuthRefused events".into(),
    );
    check(bad.is_empty(), format!("bad requests: {bad:?}"));
    check(
        free_slots == CALL_SLOTS,
        format!("only {free_slots} of {CALL_SLOTS} call slots free after the soak"),
    );
    check(
        open_after_drop == 0,
        format!("{open_after_drop} sessions left open"),
    );
    check(
        threads_after <= threads_before,
        format!("{threads_after} threads after, {threads_before} before"),
    );
    check(sent > 0 && ran > 0, "nothing ran".into());
    check(
        get(&l.outages) > 0 && get(&l.piled) == get(&l.drained),
        format!(
            "gateway: {} outages, {} calls piled, {} drained",
            get(&l.outages),
            get(&l.piled),
            get(&l.drained)
        ),
    );
    if broken.is_empty() {
        println!("soak: every call accounted for, no session and no thread left");
        Ok(())
    } else {
        Err(format!("soak failed:\n  {}", broken.join("\n  ")).into())
    }
}
