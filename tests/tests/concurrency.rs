//! Calls made at once: every one is served (waiting its turn past the call
//! bound), the protocol is answered meanwhile, waiting calls that are
//! cancelled never run, slow bodies hold no worker, quiet handlers learn
//! their client left, and a burst's threads go away again.

use std::io::{BufRead, BufReader, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::json;
use toolhost::client::{CallOptions, CancelHandle, ClientError, Era};
use toolhost::{Event, HostConfig, StaticSurface, Tool, ToolHost, ToolOutcome, ToolSession};
use toolhost_tests::wait_for;

/// A host whose `work` tool takes `work_ms`, whose `gate` tool runs until
/// released, which records the most handlers of either seen running at
/// once, and whose events are kept.
struct Rig {
    host: ToolHost,
    session: ToolSession,
    running: Arc<AtomicUsize>,
    peak: Arc<AtomicUsize>,
    started: Arc<Mutex<Vec<String>>>,
    release: Arc<AtomicUsize>,
    events: Arc<Mutex<Vec<Event>>>,
}

/// A call made on a thread of its own; joining it gives the result's text.
type Caller = thread::JoinHandle<Result<String, ClientError>>;

fn rig(config: HostConfig, work_ms: u64) -> Rig {
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&events);
    let host =
        ToolHost::bind(config.on_event(move |event| sink.lock().unwrap().push(event.clone())))
            .unwrap();
    let running = Arc::new(AtomicUsize::new(0));
    let peak = Arc::new(AtomicUsize::new(0));
    let started = Arc::new(Mutex::new(Vec::new()));
    let release = Arc::new(AtomicUsize::new(0));
    let (now, most) = (Arc::clone(&running), Arc::clone(&peak));
    let (now_gated, most_gated) = (Arc::clone(&running), Arc::clone(&peak));
    let (order, gate) = (Arc::clone(&started), Arc::clone(&release));
    let surface = StaticSurface::new()
        .tool(Tool::new("work", "Works a while."), move |_, _| {
            let at_once = now.fetch_add(1, Ordering::SeqCst) + 1;
            most.fetch_max(at_once, Ordering::SeqCst);
            thread::sleep(Duration::from_millis(work_ms));
            now.fetch_sub(1, Ordering::SeqCst);
            ToolOutcome::text("done")
        })
        .unwrap()
        .tool(
            Tool::new("gate", "Runs until released or cancelled.").input_schema(json!({
                "type": "object", "properties": {"tag": {"type": "string"}}})),
            move |args, ctx| {
                let at_once = now_gated.fetch_add(1, Ordering::SeqCst) + 1;
                most_gated.fetch_max(at_once, Ordering::SeqCst);
                order
                    .lock()
                    .unwrap()
                    .push(args["tag"].as_str().unwrap_or("").to_owned());
                while gate.load(Ordering::SeqCst) == 0 && !ctx.is_cancelled() {
                    thread::sleep(Duration::from_millis(5));
                }
                now_gated.fetch_sub(1, Ordering::SeqCst);
                ToolOutcome::text("released")
            },
        )
        .unwrap();
    let session = host.open_session(surface);
    Rig {
        host,
        session,
        running,
        peak,
        started,
        release,
        events,
    }
}

impl Rig {
    /// With one call slot: a `gate` call that runs, and one that waits.
    fn one_running_one_waiting(&self, era: Era) -> (Caller, Caller) {
        let first = self.gate(era, "first");
        wait_for("the first call to run", || {
            self.started.lock().unwrap().len() == 1
        });
        let second = self.gate(era, "second");
        wait_for("the second call to queue", || self.queued() == 1);
        (first, second)
    }

    fn count(&self, matches: impl Fn(&Event) -> bool) -> usize {
        self.events
            .lock()
            .unwrap()
            .iter()
            .filter(|e| matches(e))
            .count()
    }

    fn queued(&self) -> usize {
        self.count(|e| matches!(e, Event::CallQueued { .. }))
    }

    /// Calls `gate` with `tag` on a thread of its own, in `era`.
    fn gate(&self, era: Era, tag: &str) -> Caller {
        let mut client = self.session.client_builder().era(era).connect().unwrap();
        let tag = tag.to_owned();
        thread::spawn(move || {
            client
                .call_tool("gate", json!({"tag": tag}))
                .map(|result| result.text())
        })
    }
}

fn burst(era: Era) {
    let rig = rig(HostConfig::default().max_concurrent_calls(8), 0);
    let callers: Vec<_> = (0..64).map(|n| rig.gate(era, &n.to_string())).collect();
    // Held until every call has arrived, so that the counts below do not
    // depend on how fast 64 clients connect on a loaded machine.
    wait_for("eight calls to run and the rest to wait", || {
        rig.started.lock().unwrap().len() == 8 && rig.queued() == 56
    });
    // The protocol is answered during the burst.
    let mut watcher = rig
        .session
        .client_builder()
        .era(Era::Stateful)
        .connect()
        .unwrap();
    for _ in 0..5 {
        watcher.ping().unwrap();
        assert_eq!(watcher.list_tools().unwrap().len(), 2);
    }
    assert_eq!(rig.started.lock().unwrap().len(), 8, "the bound held");
    rig.release.store(1, Ordering::SeqCst);
    for caller in callers {
        assert_eq!(
            caller.join().unwrap().expect("every call is answered"),
            "released"
        );
    }
    assert_eq!(rig.session.calls_served(), 64);
    assert_eq!(
        rig.peak.load(Ordering::SeqCst),
        8,
        "the bound held throughout"
    );
    assert_eq!(rig.count(|e| matches!(e, Event::CallRefused { .. })), 0);
    assert_eq!(
        rig.count(|e| matches!(e, Event::CallWaited { .. })),
        56,
        "every waiting call started"
    );
}

#[test]
fn sixty_four_parallel_stateful_calls_are_all_answered_and_the_bound_holds() {
    burst(Era::Stateful);
}

#[test]
fn sixty_four_parallel_stateless_calls_are_all_answered_and_the_bound_holds() {
    burst(Era::Stateless);
}

#[test]
fn waiting_calls_start_in_the_order_they_arrived() {
    let rig = rig(HostConfig::default().max_concurrent_calls(1), 0);
    let first = rig.gate(Era::Stateless, "first");
    wait_for("the first call to run", || {
        rig.started.lock().unwrap().len() == 1
    });
    let mut waiting = Vec::new();
    for (n, tag) in ["b", "c", "d"].into_iter().enumerate() {
        waiting.push(rig.gate(Era::Stateless, tag));
        wait_for("the call to queue", || rig.queued() == n + 1);
    }
    assert_eq!(rig.started.lock().unwrap().len(), 1, "they wait");
    rig.release.store(1, Ordering::SeqCst);
    first.join().unwrap().unwrap();
    for call in waiting {
        assert_eq!(call.join().unwrap().unwrap(), "released");
    }
    assert_eq!(*rig.started.lock().unwrap(), ["first", "b", "c", "d"]);
}

#[test]
fn a_waiting_call_the_client_cancels_never_runs_and_the_others_go_on() {
    for era in [Era::Stateful, Era::Stateless] {
        let rig = rig(
            HostConfig::default()
                .max_concurrent_calls(1)
                .call_keep_alive(Duration::from_millis(50)),
            0,
        );
        let first = rig.gate(era, "first");
        wait_for("the first call to run", || {
            rig.started.lock().unwrap().len() == 1
        });
        let mut client = rig.session.client_builder().era(era).connect().unwrap();
        let cancel = CancelHandle::new();
        let handle = cancel.clone();
        let queued_before = rig.queued();
        let cancelled = thread::spawn(move || {
            client.call_tool_with(
                "gate",
                json!({"tag": "cancelled"}),
                CallOptions::new().cancel_with(&handle),
            )
        });
        wait_for("the second call to queue", || {
            rig.queued() == queued_before + 1
        });
        cancel.cancel();
        assert!(matches!(
            cancelled.join().unwrap(),
            Err(ClientError::Cancelled)
        ));
        // The stateful client sends notifications/cancelled; the stateless
        // one closes its stream, which the waiting call notices at its next
        // keep-alive. Either way it leaves the line.
        wait_for("the cancelled call to leave the line", || {
            rig.count(|e| matches!(e, Event::CallAbandoned { .. })) == 1
        });
        let last = rig.gate(era, "last");
        wait_for("the third call to queue", || {
            rig.queued() == queued_before + 2
        });
        rig.release.store(1, Ordering::SeqCst);
        first.join().unwrap().unwrap();
        assert_eq!(last.join().unwrap().unwrap(), "released");
        assert_eq!(
            *rig.started.lock().unwrap(),
            ["first", "last"],
            "{era:?}: the cancelled call never ran"
        );
        assert_eq!(rig.session.calls_served(), 2);
    }
}

#[test]
fn waiting_calls_are_answered_without_running_when_the_session_is_dropped() {
    let rig = rig(HostConfig::default().max_concurrent_calls(1), 0);
    let (first, second) = rig.one_running_one_waiting(Era::Stateful);
    let Rig {
        session,
        started,
        host,
        ..
    } = rig;
    drop(session);
    let text = second.join().unwrap().unwrap();
    assert!(
        text.contains("before it started") && text.contains("session was closed"),
        "{text}"
    );
    first.join().unwrap().unwrap();
    assert_eq!(*started.lock().unwrap(), ["first"]);
    drop(host);
}

#[test]
fn a_waiting_call_past_its_deadline_gets_the_deadline_error_and_never_runs() {
    // `work` ignores cancellation: it holds the only slot for 1 s, past
    // both calls' 300 ms deadlines.
    let rig = rig(
        HostConfig::default()
            .max_concurrent_calls(1)
            .call_timeout(Duration::from_millis(300)),
        1000,
    );
    let mut client = rig.session.client().unwrap();
    let stubborn = thread::spawn(move || client.call_tool("work", json!({})).unwrap());
    wait_for("the first call to run", || {
        rig.running.load(Ordering::SeqCst) == 1
    });
    let second = rig.gate(Era::Stateless, "second");
    let text = second.join().unwrap().unwrap();
    assert!(
        text.contains("did not finish within its deadline"),
        "{text}"
    );
    assert!(stubborn.join().unwrap().text().contains("deadline"));
    assert!(
        rig.started.lock().unwrap().is_empty(),
        "the waiting call never ran"
    );
    assert_eq!(rig.count(|e| matches!(e, Event::CallTimedOut { .. })), 2);
    // The waiting call leaves the line right after its answer went out.
    wait_for("the waiting call to leave the line", || {
        rig.count(
            |e| matches!(e, Event::CallAbandoned { reason, .. } if reason.contains("deadline")),
        ) == 1
    });
}

#[test]
fn shutdown_answers_waiting_calls_without_running_them() {
    let rig = rig(HostConfig::default().max_concurrent_calls(1), 0);
    let (first, second) = rig.one_running_one_waiting(Era::Stateful);
    rig.host.shutdown();
    let text = second.join().unwrap().unwrap();
    assert!(text.contains("shutting down"), "{text}");
    first.join().unwrap().ok();
    assert_eq!(*rig.started.lock().unwrap(), ["first"]);
}

#[test]
fn sixteen_stalled_bodies_hold_no_worker_and_each_gets_its_408() {
    let rig = rig(
        HostConfig::default()
            .workers(2)
            .read_timeout(Duration::from_millis(200)),
        0,
    );
    let addr = rig.host.local_addr();
    let auth = rig.session.authorization();
    let expired = || rig.count(|e| matches!(e, Event::BadRequest { status: 408, .. }));
    let mut stalled = Vec::new();
    for n in 1..=16 {
        let mut stream = TcpStream::connect(addr).unwrap();
        write!(
            stream,
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nAuthorization: {auth}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{{\"jsonrpc\""
        )
        .unwrap();
        stalled.push(stream);
        // Its read deadline passing proves it reached the host (and the
        // next connection then meets tiny_http's pool with no race).
        wait_for("the stalled body's read deadline", || expired() == n);
    }
    // All 16 bodies stall at once, each holding its reader thread (and a
    // thread of tiny_http's pool), and both workers are free: a client that
    // connects now is answered and its call runs.
    let mut client = rig
        .session
        .client_builder()
        .era(Era::Stateful)
        .connect()
        .unwrap();
    for _ in 0..20 {
        client.ping().unwrap();
    }
    assert_eq!(client.call_tool("work", json!({})).unwrap().text(), "done");
    assert_eq!(expired(), 16);
    for stream in &stalled {
        stream.shutdown(Shutdown::Write).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        let mut line = String::new();
        BufReader::new(stream).read_line(&mut line).unwrap();
        assert!(line.starts_with("HTTP/1.1 408"), "{line}");
    }
}

/// A host whose `quiet` tool sends nothing and polls its cancellation, and
/// reports what it saw.
fn quiet_host(config: HostConfig) -> (ToolHost, ToolSession, mpsc::Receiver<Option<String>>) {
    let host = ToolHost::bind(config).unwrap();
    let (tx, seen) = mpsc::channel();
    let tx = Mutex::new(tx);
    let session = host.open_session(
        StaticSurface::new()
            .tool(Tool::new("quiet", "Sends nothing."), move |_, ctx| {
                let deadline = Instant::now() + Duration::from_secs(20);
                while !ctx.is_cancelled() && Instant::now() < deadline {
                    thread::sleep(Duration::from_millis(10));
                }
                let _ = tx.lock().unwrap().send(ctx.cancelled_reason());
                ToolOutcome::text("quiet")
            })
            .unwrap(),
    );
    (host, session, seen)
}

#[test]
fn a_quiet_stateless_handler_learns_its_client_left_from_the_keep_alives() {
    let (host, session, seen) =
        quiet_host(HostConfig::default().call_keep_alive(Duration::from_millis(100)));
    let mut client = session.client().unwrap();
    let cancel = CancelHandle::new();
    let handle = cancel.clone();
    let caller = thread::spawn(move || {
        client.call_tool_with("quiet", json!({}), CallOptions::new().cancel_with(&handle))
    });
    thread::sleep(Duration::from_millis(150));
    cancel.cancel();
    assert!(matches!(
        caller.join().unwrap(),
        Err(ClientError::Cancelled)
    ));
    // Seen within a few keep-alives, not at the handler's own 20 s end.
    let reason = seen
        .recv_timeout(Duration::from_secs(10))
        .expect("the quiet handler was told its client left");
    assert_eq!(
        reason.as_deref(),
        Some("the client closed the response stream")
    );
    drop(host);
}

#[test]
fn a_quiet_stateful_handler_is_cancelled_only_after_the_resume_window() {
    let (host, session, seen) = quiet_host(
        HostConfig::default()
            .call_keep_alive(Duration::from_millis(100))
            .resume_window(Duration::from_millis(300)),
    );
    let client = session
        .client_builder()
        .era(Era::Stateful)
        .connect()
        .unwrap();
    let addr = host.local_addr();
    let id = client.session_id().unwrap().to_owned();
    // A raw request that the client abandons mid-stream (a dropped
    // connection, not a cancellation).
    let mut stream = TcpStream::connect(addr).unwrap();
    let body = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
                      "params": {"name": "quiet", "arguments": {}}})
    .to_string();
    write!(
        stream,
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nAuthorization: {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMcp-Session-Id: {id}\r\nMCP-Protocol-Version: 2025-11-25\r\nContent-Length: {}\r\n\r\n{body}",
        session.authorization(),
        body.len()
    )
    .unwrap();
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut line = String::new();
    reader.read_line(&mut line).unwrap();
    assert!(line.starts_with("HTTP/1.1 200"), "{line}");
    drop(reader);
    stream.shutdown(Shutdown::Both).unwrap();
    drop(stream);
    let reason = seen
        .recv_timeout(Duration::from_secs(10))
        .expect("the quiet handler was told its client left for good");
    assert!(
        reason.as_deref().unwrap_or("").contains("resume window"),
        "{reason:?}"
    );
    drop(host);
}

#[test]
fn a_quiet_call_stays_json_for_a_client_that_accepts_only_json() {
    let host =
        ToolHost::bind(HostConfig::default().call_keep_alive(Duration::from_millis(50))).unwrap();
    let session = host.open_session(
        StaticSurface::new()
            .tool(Tool::new("slow", "Sleeps."), |_, _| {
                thread::sleep(Duration::from_millis(300));
                ToolOutcome::text("slept")
            })
            .unwrap(),
    );
    let addr = host.local_addr();
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "slow", "arguments": {},
                   "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                             "io.modelcontextprotocol/clientCapabilities": {}}}})
    .to_string();
    let head = |accept: &str| {
        format!(
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nAuthorization: {}\r\nContent-Type: application/json\r\nAccept: {accept}\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: slow\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
            session.authorization(),
            body.len()
        )
    };
    let answer = |accept: &str| {
        let mut stream = TcpStream::connect(addr).unwrap();
        stream.write_all(head(accept).as_bytes()).unwrap();
        let mut text = String::new();
        std::io::Read::read_to_string(&mut stream, &mut text).unwrap();
        text
    };
    let json_only = answer("application/json");
    assert!(
        json_only.contains("Content-Type: application/json"),
        "{json_only}"
    );
    assert!(!json_only.contains("keep-alive"), "{json_only}");
    let both = answer("application/json, text/event-stream");
    assert!(both.contains("text/event-stream"), "{both}");
    assert!(both.contains(": keep-alive"), "{both}");
    assert!(both.contains("slept"), "{both}");
}

#[test]
fn a_burst_s_extra_threads_leave_once_idle() {
    let rig = rig(
        HostConfig::default().workers(2).max_concurrent_calls(6),
        200,
    );
    assert_eq!(rig.host.worker_threads(), 2);
    let callers: Vec<_> = (0..6)
        .map(|_| {
            let mut client = rig.session.client().unwrap();
            thread::spawn(move || client.call_tool("work", json!({})).unwrap())
        })
        .collect();
    wait_for("the handlers to run", || {
        rig.running.load(Ordering::SeqCst) >= 2
    });
    assert!(
        rig.host.worker_threads() > 2,
        "workers lent to handlers were replaced"
    );
    for caller in callers {
        caller.join().unwrap();
    }
    wait_for("the extra threads to leave", || {
        rig.host.worker_threads() == 2
    });
    // And the host still serves.
    let mut client = rig.session.client().unwrap();
    assert_eq!(client.call_tool("work", json!({})).unwrap().text(), "done");
}

#[test]
fn connections_that_arrive_together_are_all_served() {
    // tiny_http hands each connection to a thread of its pool and loses the
    // wake-up of a connection that arrives in the same instant as another
    // while fewer threads are idle than connections arrive: that one waits
    // until some other connection closes (see BENCHMARKS.md). Agents open
    // several connections at once for parallel calls.
    let host = ToolHost::bind(HostConfig::default()).unwrap();
    let session = host.open_session(StaticSurface::new());
    let addr = host.local_addr();
    let request = {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}}}})
        .to_string();
        format!(
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nAuthorization: {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/list\r\nContent-Length: {}\r\n\r\n{body}",
            session.authorization(),
            body.len()
        )
    };
    let answered = |stream: &mut TcpStream| {
        stream.write_all(request.as_bytes()).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let mut line = String::new();
        BufReader::new(stream).read_line(&mut line).is_ok() && line.starts_with("HTTP/1.1 200")
    };
    // Idle keep-alive connections that hold pool threads, as an agent's do.
    let mut idle = Vec::new();
    for _ in 0..3 {
        let mut stream = TcpStream::connect(addr).unwrap();
        assert!(answered(&mut stream));
        idle.push(stream);
    }
    for round in 0..10 {
        let mut together: Vec<TcpStream> =
            (0..4).map(|_| TcpStream::connect(addr).unwrap()).collect();
        for (n, stream) in together.iter_mut().enumerate() {
            assert!(
                answered(stream),
                "round {round}: connection {n} got no answer"
            );
        }
        idle.extend(together);
    }
}
