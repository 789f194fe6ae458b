//! The stdio relay's relay, driven as a stdio MCP client drives it: JSON-RPC
//! lines in, lines out, against a really bound host. The relay runs in this
//! process over in-memory pipes (`tests/acp/` runs it as the process an agent
//! starts).

use std::io::{self, BufRead, Read, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use toolhost::relay::{Ending, Relay};
use toolhost::{
    Elicitation, HostConfig, LogLevel, StaticSurface, Tool, ToolHost, ToolOutcome, ToolSession,
};
use toolhost_tests::schema::assert_valid;
use toolhost_tests::wait_for;

/// How long a test waits for a line before it fails.
const PATIENCE: Duration = Duration::from_secs(10);

/// What the tools saw.
#[derive(Default)]
struct Seen {
    /// The slow tool is running.
    slow_started: AtomicBool,
    /// The slow tool saw its call cancelled.
    slow_cancelled: AtomicBool,
    /// Let the slow tool finish.
    release: AtomicBool,
    calls: AtomicU64,
}

fn tools(seen: &Arc<Seen>) -> StaticSurface {
    let (slow, echo) = (Arc::clone(seen), Arc::clone(seen));
    StaticSurface::new()
        .tool(Tool::new("echo", "Echoes text."), move |args, _| {
            echo.calls.fetch_add(1, Ordering::SeqCst);
            ToolOutcome::text(args["text"].as_str().unwrap_or(""))
        })
        .unwrap()
        .tool(
            Tool::new(
                "slow",
                "Runs until released or cancelled, reporting progress (when asked) as it waits.",
            ),
            move |_, ctx| {
                slow.slow_started.store(true, Ordering::SeqCst);
                let mut beats = 0.0;
                while !slow.release.load(Ordering::SeqCst) {
                    if ctx.is_cancelled() {
                        slow.slow_cancelled.store(true, Ordering::SeqCst);
                        return ToolOutcome::cancelled();
                    }
                    // Progress shows the test the call was carried
                    // until it was cancelled.
                    beats += 1.0;
                    ctx.progress(beats, None, None);
                    thread::sleep(Duration::from_millis(5));
                }
                ToolOutcome::text("released")
            },
        )
        .unwrap()
        .tool(
            Tool::new("ask", "Asks the user for an answer."),
            |_, ctx| {
                let form = json!({"type": "object",
                "properties": {"answer": {"type": "string"}}, "required": ["answer"]});
                match ctx.elicit("What is the answer?", form) {
                    Ok(Elicitation::Accept(content)) => {
                        ToolOutcome::text(content["answer"].as_str().unwrap_or(""))
                    }
                    Ok(other) => ToolOutcome::declined(format!("no answer: {other:?}")),
                    Err(err) => ToolOutcome::declined(format!("asking failed: {err}")),
                }
            },
        )
        .unwrap()
        .tool(
            Tool::new("where", "Names the client's roots and model."),
            |_, ctx| {
                let roots = match ctx.list_roots() {
                    Ok(roots) => roots,
                    Err(err) => return ToolOutcome::declined(format!("roots: {err}")),
                };
                let sampled = match ctx.sample(json!({"messages": [{"role": "user",
                "content": {"type": "text", "text": "hi"}}], "maxTokens": 5}))
                {
                    Ok(sampled) => sampled,
                    Err(err) => return ToolOutcome::declined(format!("sampling: {err}")),
                };
                ToolOutcome::text(format!(
                    "{} {}",
                    roots[0]["uri"], sampled["content"]["text"]
                ))
            },
        )
        .unwrap()
        .tool(
            Tool::new("chatty", "Reports progress and logs, then answers."),
            |_, ctx| {
                for step in 1..=3 {
                    ctx.progress(f64::from(step), Some(3.0), None);
                }
                ctx.log(LogLevel::Info, json!("halfway"));
                ToolOutcome::text("done")
            },
        )
        .unwrap()
        .tool(
            Tool::new("count", "Counts to 3, closing its stream after step 1."),
            |_, ctx| {
                let mut closed = false;
                for step in 1..=3 {
                    ctx.progress(f64::from(step), Some(3.0), None);
                    if step == 1 {
                        closed = ctx.close_stream(Duration::from_millis(20));
                    }
                    thread::sleep(Duration::from_millis(5));
                }
                ToolOutcome::text(if closed { "resumed" } else { "not closed" })
            },
        )
        .unwrap()
}

/// An input the test writes lines into; ends when dropped.
struct PipeReader {
    chunks: Receiver<Vec<u8>>,
    buf: Vec<u8>,
    at: usize,
}

impl Read for PipeReader {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let available = self.fill_buf()?;
        let n = available.len().min(out.len());
        out[..n].copy_from_slice(&available[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for PipeReader {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.at == self.buf.len() {
            match self.chunks.recv() {
                Ok(chunk) => {
                    self.buf = chunk;
                    self.at = 0;
                }
                Err(_) => return Ok(&[]),
            }
        }
        Ok(&self.buf[self.at..])
    }

    fn consume(&mut self, n: usize) {
        self.at += n;
    }
}

/// An output that hands each line written to the test.
struct LineWriter {
    lines: Sender<String>,
    partial: Vec<u8>,
}

impl Write for LineWriter {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.partial.extend_from_slice(bytes);
        while let Some(end) = self.partial.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = self.partial.drain(..=end).collect();
            let _ = self
                .lines
                .send(String::from_utf8_lossy(&line[..end]).into_owned());
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A relay running on its own thread, and the test's ends of its pipes.
struct Bridge {
    input: Option<Sender<Vec<u8>>>,
    output: Receiver<String>,
    ending: Receiver<Ending>,
    /// Messages read while looking for something else.
    skipped: Vec<Value>,
}

impl Bridge {
    fn start(session: &ToolSession) -> Bridge {
        let relay = Relay::new(&session.url(), &session.authorization()).expect("relay");
        let (input, chunks) = mpsc::channel();
        let (lines, output) = mpsc::channel();
        let (ended, ending) = mpsc::channel();
        let reader = PipeReader {
            chunks,
            buf: Vec::new(),
            at: 0,
        };
        let writer = LineWriter {
            lines,
            partial: Vec::new(),
        };
        thread::spawn(move || {
            let _ = ended.send(relay.run(reader, writer));
        });
        Bridge {
            input: Some(input),
            output,
            ending,
            skipped: Vec::new(),
        }
    }

    fn send(&self, message: &Value) {
        self.send_raw(format!("{message}\n").as_bytes());
    }

    fn send_raw(&self, bytes: &[u8]) {
        self.input
            .as_ref()
            .expect("input open")
            .send(bytes.to_vec())
            .expect("relay reading");
    }

    /// The next line, which must be one JSON-RPC message.
    fn next(&self) -> Value {
        let line = self
            .output
            .recv_timeout(PATIENCE)
            .unwrap_or_else(|e| panic!("no line from the relay ({e:?})"));
        let message: Value =
            serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
        assert_eq!(message["jsonrpc"], "2.0", "{line}");
        message
    }

    /// The response to `id`; what came before it is kept in `skipped`.
    fn response(&mut self, id: &Value) -> Value {
        loop {
            let message = self.next();
            if message.get("method").is_none() && message["id"] == *id {
                return message;
            }
            self.skipped.push(message);
        }
    }

    fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.response(&json!(id))
    }

    /// `initialize` in `revision` declaring `capabilities`, then
    /// `notifications/initialized`.
    fn initialize(&mut self, revision: &str, capabilities: Value) -> Value {
        let answer = self.request(
            0,
            "initialize",
            json!({"protocolVersion": revision, "capabilities": capabilities,
                "clientInfo": {"name": "bridge-test", "version": "1"}}),
        );
        assert_eq!(answer["result"]["protocolVersion"], revision, "{answer}");
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        answer
    }

    fn close_input(&mut self) {
        self.input.take();
    }

    fn ending(&self) -> Ending {
        self.ending.recv_timeout(PATIENCE).expect("the relay ended")
    }

    /// The next line, if one arrives within `window`.
    fn quiet_for(&self, window: Duration) -> Option<String> {
        self.output.recv_timeout(window).ok()
    }
}

fn host() -> ToolHost {
    ToolHost::bind(HostConfig::default().server_name("bridged")).expect("bind")
}

fn stateless_meta() -> Value {
    json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "bridge-test", "version": "1"}})
}

#[test]
fn a_stateful_client_initializes_lists_and_calls_through_the_relay() {
    let host = host();
    let seen = Arc::new(Seen::default());
    let session = host.open_session(tools(&seen));
    let mut bridge = Bridge::start(&session);

    let init = bridge.initialize("2025-06-18", json!({}));
    assert_valid("2025-06-18", "JSONRPCResponse", &init);
    assert_eq!(init["result"]["serverInfo"]["name"], "bridged");

    let list = bridge.request(1, "tools/list", json!({}));
    assert_valid("2025-06-18", "ListToolsResult", &list["result"]);
    let names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(names.contains(&"echo"), "{names:?}");

    let call = bridge.request(
        2,
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "über the bridge"}}),
    );
    assert_valid("2025-06-18", "CallToolResult", &call["result"]);
    assert_eq!(call["result"]["content"][0]["text"], "über the bridge");
    assert_eq!(seen.calls.load(Ordering::SeqCst), 1);

    // A request the host refuses comes back as the host's own error, with
    // the client's id.
    let unknown = bridge.request(3, "resources/list", json!({}));
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");
    assert_eq!(seen.calls.load(Ordering::SeqCst), 1, "nothing else ran");
    assert!(bridge.skipped.is_empty(), "{:?}", bridge.skipped);

    bridge.close_input();
    assert_eq!(bridge.ending(), Ending::InputClosed);
}

#[test]
fn progress_and_log_messages_arrive_before_the_response() {
    let host = host();
    let session = host.open_session(tools(&Arc::default()));
    let mut bridge = Bridge::start(&session);
    bridge.initialize("2025-06-18", json!({}));
    bridge.request(1, "logging/setLevel", json!({"level": "info"}));

    let answer = bridge.request(
        2,
        "tools/call",
        json!({"name": "chatty", "arguments": {}, "_meta": {"progressToken": "p-2"}}),
    );
    assert_eq!(answer["result"]["content"][0]["text"], "done");
    let progress: Vec<&Value> = bridge
        .skipped
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .collect();
    assert_eq!(progress.len(), 3, "{:?}", bridge.skipped);
    for (step, report) in progress.iter().enumerate() {
        assert_eq!(report["params"]["progressToken"], "p-2");
        assert_eq!(report["params"]["progress"], step as f64 + 1.0);
        assert_valid("2025-06-18", "ProgressNotification", report);
    }
    let logs: Vec<&Value> = bridge
        .skipped
        .iter()
        .filter(|m| m["method"] == "notifications/message")
        .collect();
    assert_eq!(logs.len(), 1, "{:?}", bridge.skipped);
    assert_eq!(logs[0]["params"]["data"], "halfway");

    // Without a progress token and a log level, the same call brings
    // nothing but its answer.
    bridge.skipped.clear();
    bridge.request(3, "logging/setLevel", json!({"level": "error"}));
    let quiet = bridge.request(4, "tools/call", json!({"name": "chatty", "arguments": {}}));
    assert_eq!(quiet["result"]["content"][0]["text"], "done");
    assert!(bridge.skipped.is_empty(), "{:?}", bridge.skipped);
}

#[test]
fn a_tool_that_asks_back_gets_the_clients_answers_through_the_relay() {
    let host = host();
    let session = host.open_session(tools(&Arc::default()));
    let mut bridge = Bridge::start(&session);
    bridge.initialize(
        "2025-06-18",
        json!({"elicitation": {}, "roots": {}, "sampling": {}}),
    );

    bridge.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "ask", "arguments": {}}}));
    let question = bridge.next();
    assert_eq!(question["method"], "elicitation/create", "{question}");
    assert_valid("2025-06-18", "ElicitRequest", &question);
    bridge.send(&json!({"jsonrpc": "2.0", "id": question["id"],
        "result": {"action": "accept", "content": {"answer": "forty-two"}}}));
    let answer = bridge.response(&json!(1));
    assert_eq!(answer["result"]["content"][0]["text"], "forty-two");
    assert_eq!(answer["result"]["isError"], false);

    // Roots, then sampling: two questions in one call, answered in turn.
    bridge.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "where", "arguments": {}}}));
    let roots = bridge.next();
    assert_eq!(roots["method"], "roots/list", "{roots}");
    bridge.send(&json!({"jsonrpc": "2.0", "id": roots["id"],
        "result": {"roots": [{"uri": "file:///work", "name": "work"}]}}));
    let sampling = bridge.next();
    assert_eq!(sampling["method"], "sampling/createMessage", "{sampling}");
    bridge.send(&json!({"jsonrpc": "2.0", "id": sampling["id"], "result": {
        "role": "assistant", "content": {"type": "text", "text": "hello"}, "model": "m"}}));
    let answer = bridge.response(&json!(2));
    assert_eq!(
        answer["result"]["content"][0]["text"],
        "\"file:///work\" \"hello\""
    );

    // A refusal goes back as the client's error, and the tool sees it.
    bridge.send(&json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "ask", "arguments": {}}}));
    let question = bridge.next();
    bridge.send(&json!({"jsonrpc": "2.0", "id": question["id"],
        "error": {"code": -1, "message": "not now"}}));
    let refused = bridge.response(&json!(3));
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    let text = refused["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("not now"), "{text}");
}

#[test]
fn requests_run_side_by_side_so_a_long_call_holds_up_nothing() {
    let host = host();
    let seen = Arc::new(Seen::default());
    let session = host.open_session(tools(&seen));
    let mut bridge = Bridge::start(&session);
    bridge.initialize("2025-06-18", json!({}));

    bridge.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "slow", "arguments": {}}}));
    wait_for("the slow call started", || {
        seen.slow_started.load(Ordering::SeqCst)
    });
    let list = bridge.request(2, "tools/list", json!({}));
    assert!(list["result"]["tools"].is_array());
    let echo = bridge.request(
        3,
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "meanwhile"}}),
    );
    assert_eq!(echo["result"]["content"][0]["text"], "meanwhile");
    assert!(
        bridge.skipped.is_empty(),
        "the slow call answered early: {:?}",
        bridge.skipped
    );

    seen.release.store(true, Ordering::SeqCst);
    let slow = bridge.response(&json!(1));
    assert_eq!(slow["result"]["content"][0]["text"], "released");
}

#[test]
fn a_cancelled_request_stops_its_call_and_gets_no_answer() {
    for stateless in [false, true] {
        let host = host();
        let seen = Arc::new(Seen::default());
        let session = host.open_session(tools(&seen));
        let mut bridge = Bridge::start(&session);
        let mut params = json!({"name": "slow", "arguments": {}, "_meta": {"progressToken": 1}});
        if stateless {
            params["_meta"] = stateless_meta();
            params["_meta"]["progressToken"] = json!(1);
        } else {
            bridge.initialize("2025-06-18", json!({}));
        }
        bridge.send(
            &json!({"jsonrpc": "2.0", "id": "slow-1", "method": "tools/call", "params": params}),
        );
        wait_for("the slow call started", || {
            seen.slow_started.load(Ordering::SeqCst)
        });
        // Its first progress through the relay before the cancel: in
        // 2026-07-28 the cancel closes the stream, and a slower loopback
        // (Wine's) could otherwise close it before any progress came.
        let first = bridge.next();
        assert_eq!(first["method"], "notifications/progress", "{first}");
        bridge.skipped.push(first);
        assert!(!seen.slow_cancelled.load(Ordering::SeqCst));
        bridge.send(
            &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": "slow-1", "reason": "the user gave up"}}),
        );
        wait_for(
            &format!("stateless {stateless}: the call saw its cancel"),
            || seen.slow_cancelled.load(Ordering::SeqCst),
        );
        // The relay goes on with the next request, and no answer ever
        // came for the cancelled one.
        let mut list = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/list", "params": {}});
        if stateless {
            list["params"]["_meta"] = stateless_meta();
        }
        bridge.send(&list);
        assert!(bridge.response(&json!(9))["result"].is_object());
        assert_eq!(bridge.quiet_for(Duration::from_millis(100)), None);
        let answered = bridge
            .skipped
            .iter()
            .filter(|m| m.get("method").is_none())
            .count();
        assert_eq!(answered, 0, "stateless {stateless}: {:?}", bridge.skipped);
        // Progress came while it ran: the call was carried until the cancel.
        assert!(!bridge.skipped.is_empty(), "stateless {stateless}");
    }
}

#[test]
fn a_2026_07_28_client_is_carried_with_the_headers_of_its_revision() {
    let host = host();
    let seen = Arc::new(Seen::default());
    let session = host.open_session(tools(&seen));
    let mut bridge = Bridge::start(&session);
    let discover = bridge.request(1, "server/discover", json!({"_meta": stateless_meta()}));
    assert!(
        discover["result"]["supportedVersions"]
            .as_array()
            .unwrap()
            .contains(&json!("2026-07-28")),
        "{discover}"
    );
    let call = bridge.request(
        2,
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "modern"}, "_meta": stateless_meta()}),
    );
    assert_eq!(call["result"]["content"][0]["text"], "modern", "{call}");
    assert_eq!(call["result"]["resultType"], "complete");
    assert_eq!(seen.calls.load(Ordering::SeqCst), 1);

    // A request of that revision missing its _meta is the host's to
    // refuse, and its refusal (an HTTP error status) still answers it.
    let mut meta = stateless_meta();
    meta.as_object_mut()
        .unwrap()
        .remove("io.modelcontextprotocol/clientCapabilities");
    let refused = bridge.request(
        3,
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "x"}, "_meta": meta}),
    );
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    assert_eq!(
        seen.calls.load(Ordering::SeqCst),
        1,
        "the refused call never ran"
    );
}

#[test]
fn a_batch_of_2025_03_26_is_answered_as_one_array() {
    let host = host();
    let seen = Arc::new(Seen::default());
    let session = host.open_session(tools(&seen));
    let mut bridge = Bridge::start(&session);
    bridge.initialize("2025-03-26", json!({}));
    bridge.send(&json!([
        {"jsonrpc": "2.0", "id": "a", "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": "one"}}},
        {"jsonrpc": "2.0", "method": "notifications/progress",
            "params": {"progressToken": "x", "progress": 1}},
        {"jsonrpc": "2.0", "id": "b", "method": "ping"},
    ]));
    let line = bridge
        .output
        .recv_timeout(PATIENCE)
        .expect("the batch's answer");
    let answers: Value = serde_json::from_str(&line).expect("JSON");
    let answers = answers.as_array().expect("one array for one batch");
    assert_eq!(answers.len(), 2, "{line}");
    assert_eq!(answers[0]["id"], "a");
    assert_eq!(answers[0]["result"]["content"][0]["text"], "one");
    assert_eq!(answers[1]["id"], "b");
    assert_eq!(seen.calls.load(Ordering::SeqCst), 1);

    // In a later revision the host refuses batches, and says so to each
    // request of it. (A host of its own: the first relay's connections
    // stay open, and tiny_http 0.12 can leave a new connection unserved
    // while all but one of a host's connection threads are taken.)
    let host = self::host();
    let session = host.open_session(tools(&seen));
    let mut bridge = Bridge::start(&session);
    bridge.initialize("2025-06-18", json!({}));
    bridge.send(&json!([
        {"jsonrpc": "2.0", "id": "c", "method": "ping"},
        {"jsonrpc": "2.0", "id": "d", "method": "ping"},
    ]));
    let first = bridge.next();
    let second = bridge.next();
    let mut ids = [first["id"].clone(), second["id"].clone()];
    ids.sort_by_key(Value::to_string);
    assert_eq!(ids, [json!("c"), json!("d")]);
    for refusal in [first, second] {
        let message = refusal["error"]["message"].as_str().unwrap();
        assert!(message.contains("batches"), "{message}");
    }
}

#[test]
fn a_stream_the_host_closes_mid_call_is_resumed() {
    let host = host();
    let session = host.open_session(tools(&Arc::default()));
    let mut bridge = Bridge::start(&session);
    bridge.initialize("2025-11-25", json!({}));
    let answer = bridge.request(
        1,
        "tools/call",
        json!({"name": "count", "arguments": {}, "_meta": {"progressToken": 1}}),
    );
    assert_eq!(
        answer["result"]["content"][0]["text"], "resumed",
        "{answer}"
    );
    let steps: Vec<f64> = bridge
        .skipped
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .filter_map(|m| m["params"]["progress"].as_f64())
        .collect();
    assert_eq!(steps, [1.0, 2.0, 3.0], "each report exactly once");
}

#[test]
fn list_changes_reach_the_client_on_the_sessions_own_stream() {
    let host = host();
    let session = host.open_session(tools(&Arc::default()));
    let mut bridge = Bridge::start(&session);
    // Before any MCP session there is no stream to hear on.
    session.notify_tools_changed();
    assert_eq!(bridge.quiet_for(Duration::from_millis(100)), None);
    bridge.initialize("2025-06-18", json!({}));
    bridge.request(1, "ping", json!({}));
    // The relay opens the stream on its own time; tell until it hears.
    let deadline = Instant::now() + PATIENCE;
    let heard = loop {
        session.notify_tools_changed();
        if let Some(line) = bridge.quiet_for(Duration::from_millis(50)) {
            break line;
        }
        assert!(Instant::now() < deadline, "no list change relayed");
    };
    let message: Value = serde_json::from_str(&heard).unwrap();
    assert_eq!(message["method"], "notifications/tools/list_changed");
}

#[test]
fn after_the_session_is_dropped_the_next_request_is_told_and_the_relay_ends() {
    let host = host();
    let session = host.open_session(tools(&Arc::default()));
    let mut bridge = Bridge::start(&session);
    bridge.initialize("2025-06-18", json!({}));
    let before = bridge.request(1, "tools/list", json!({}));
    assert!(before["result"].is_object(), "{before}");

    drop(session);
    bridge.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
    let told = bridge.response(&json!(2));
    assert_eq!(told["error"]["code"], -32000, "{told}");
    let message = told["error"]["message"]
        .as_str()
        .unwrap()
        .to_ascii_lowercase();
    assert!(message.contains("session has ended"), "{message}");
    for word in ["auth", "token", "bearer", "401", "login", "credential"] {
        assert!(!message.contains(word), "{word} in {message}");
    }
    assert_valid("2025-06-18", "JSONRPCError", &told);
    assert_eq!(bridge.ending(), Ending::SessionEnded);
    // It ended without waiting for its input to close.
    assert!(bridge.input.is_some());
}

#[test]
fn lines_that_are_not_messages_get_errors_and_the_relay_goes_on() {
    let host = host();
    let session = host.open_session(tools(&Arc::default()));
    let mut bridge = Bridge::start(&session);
    bridge.send_raw(b"this is not json\n");
    let error = bridge.next();
    assert_eq!(error["error"]["code"], -32700, "{error}");
    assert_eq!(error["id"], Value::Null);
    bridge.send_raw(b"\n  \n42\n");
    let error = bridge.next();
    assert_eq!(error["error"]["code"], -32600, "{error}");
    // And then it carries the next message as ever.
    let init = bridge.initialize("2025-06-18", json!({}));
    assert!(init["result"].is_object());
    bridge.close_input();
    assert_eq!(bridge.ending(), Ending::InputClosed);
}

#[test]
fn a_client_that_writes_everything_at_once_and_leaves_still_gets_its_answers() {
    let host = host();
    let seen = Arc::new(Seen::default());
    let session = host.open_session(tools(&seen));
    let mut bridge = Bridge::start(&session);
    let script = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "script", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": "scripted"}}}),
    ];
    let text: String = script.iter().map(|m| format!("{m}\n")).collect();
    bridge.send_raw(text.as_bytes());
    bridge.close_input();
    let init = bridge.response(&json!(1));
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18");
    // The call went in the session initialize opened, though it was
    // written before that answer came.
    let call = bridge.response(&json!(2));
    assert_eq!(call["result"]["content"][0]["text"], "scripted", "{call}");
    assert_eq!(seen.calls.load(Ordering::SeqCst), 1);
    assert_eq!(bridge.ending(), Ending::InputClosed);
}

/// A relay process (`stdio_server` with the relay's variables) in front of
/// a host process (`host_alone`): both real programs, so that the host can
/// die as an application does.
struct RelayProcess {
    relay: std::process::Child,
    to_relay: std::process::ChildStdin,
    lines: Receiver<String>,
}

impl RelayProcess {
    fn start(url: &str, authorization: &str) -> RelayProcess {
        use std::process::{Command, Stdio};
        use toolhost::relay::{AUTHORIZATION_VAR, URL_VAR};
        let mut relay = Command::new(env!("CARGO_BIN_EXE_stdio_server"))
            .env(URL_VAR, url)
            .env(AUTHORIZATION_VAR, authorization)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the relay");
        let to_relay = relay.stdin.take().expect("piped");
        let from_relay = relay.stdout.take().expect("piped");
        let (sender, lines) = mpsc::channel();
        thread::spawn(move || {
            for line in io::BufReader::new(from_relay).lines() {
                let Ok(line) = line else { return };
                if sender.send(line).is_err() {
                    return;
                }
            }
        });
        RelayProcess {
            relay,
            to_relay,
            lines,
        }
    }

    fn request(&mut self, message: &Value) -> Value {
        writeln!(self.to_relay, "{message}").expect("the relay reads");
        self.to_relay.flush().expect("flush");
        loop {
            let line = self.lines.recv_timeout(PATIENCE).expect("an answer");
            let answer: Value = serde_json::from_str(&line).expect("JSON");
            if answer.get("id") == message.get("id") {
                return answer;
            }
        }
    }

    /// The relay's exit status, once it has exited on its own.
    fn exit_code(&mut self) -> Option<i32> {
        let deadline = Instant::now() + PATIENCE;
        loop {
            if let Some(status) = self.relay.try_wait().expect("wait") {
                return status.code();
            }
            if Instant::now() > deadline {
                return None;
            }
            thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for RelayProcess {
    fn drop(&mut self) {
        let _ = self.relay.kill();
        let _ = self.relay.wait();
    }
}

#[test]
fn when_the_host_process_dies_or_exits_the_first_request_after_is_told_and_the_relay_exits_3() {
    use std::process::{Command, Stdio};
    for killed in [true, false] {
        let mut host = Command::new(env!("CARGO_BIN_EXE_host_alone"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the host");
        let mut said = String::new();
        io::BufReader::new(host.stdout.take().expect("piped"))
            .read_line(&mut said)
            .expect("the host's first line");
        let said: Value = serde_json::from_str(&said).expect("JSON");
        let mut relay = RelayProcess::start(
            said["url"].as_str().unwrap(),
            said["auth"].as_str().unwrap(),
        );
        let init = relay.request(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "bridge-test", "version": "1"}}}));
        assert!(init["result"].is_object(), "{init}");
        writeln!(
            relay.to_relay,
            "{}",
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
        )
        .unwrap();
        // While the host runs, a request is answered (over a kept
        // connection, which the host's death then breaks).
        let listed = relay.request(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
        assert!(listed["result"]["tools"].is_array(), "{listed}");
        assert_eq!(relay.relay.try_wait().unwrap(), None, "the relay runs");

        if killed {
            host.kill().expect("kill the host");
        } else {
            // host_alone serves until its stdin closes, then exits.
            drop(host.stdin.take());
        }
        host.wait().expect("the host ends");

        let told = relay.request(&json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}));
        assert_eq!(told["error"]["code"], -32000, "killed={killed}: {told}");
        let message = told["error"]["message"].as_str().unwrap();
        assert!(message.contains("session has ended"), "{message}");
        assert_eq!(relay.exit_code(), Some(3), "killed={killed}: exits at once");
    }
}
