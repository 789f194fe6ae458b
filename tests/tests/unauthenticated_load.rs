//! What a local process without the bearer can do to a host, and what a
//! legitimate client sees meanwhile: the host runs in a process of its own
//! (the `probe_host` program), so that its descriptor limit can be lowered
//! and its threads and memory read without the test's own.
//!
//! Each test prints what it measured (`cargo test --test
//! unauthenticated_load -- --nocapture`); the numbers before and after the
//! change that added these tests are in its note.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;
use toolhost::client::{Client, Era};
use toolhost_tests::process::{resident_bytes, thread_count};
use toolhost_tests::wait_for;

/// A host in a child process.
struct Probe {
    child: Child,
    stdin: Option<ChildStdin>,
    addr: SocketAddr,
    url: String,
    auth: String,
    /// Its event lines, as they came.
    events: Arc<Mutex<Vec<String>>>,
}

impl Probe {
    /// Starts `probe_host` under `sh -c`, with `limit` (e.g. `ulimit -n
    /// 64`) run first when given; `args` go to the program.
    fn start(limit: Option<&str>, args: &[&str]) -> Probe {
        let program = env!("CARGO_BIN_EXE_probe_host");
        let script = format!(
            "{}exec \"$0\" \"$@\"",
            limit.map(|l| format!("{l} && ")).unwrap_or_default()
        );
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(script)
            .arg(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let said: Value = serde_json::from_str(&line).unwrap();
        let url = said["url"].as_str().unwrap().to_owned();
        let addr = url
            .trim_start_matches("http://")
            .trim_end_matches("/mcp")
            .parse()
            .unwrap();
        let events = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&events);
        let stderr = child.stderr.take().unwrap();
        thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                sink.lock().unwrap().push(line);
            }
        });
        Probe {
            stdin: child.stdin.take(),
            child,
            addr,
            url,
            auth: said["auth"].as_str().unwrap().to_owned(),
            events,
        }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    fn threads(&self) -> usize {
        thread_count(self.pid()).unwrap()
    }

    fn resident_mib(&self) -> u64 {
        resident_bytes(self.pid()).unwrap() >> 20
    }

    /// How many of its events so far contain `text`.
    fn events_with(&self, text: &str) -> usize {
        let events = self.events.lock().unwrap();
        events.iter().filter(|line| line.contains(text)).count()
    }

    /// How long a legitimate client took to connect and be answered a
    /// `tools/list` on a fresh connection; `None` when it was not answered within
    /// `bound`.
    fn legit_ping(&self, bound: Duration) -> Option<Duration> {
        let started = Instant::now();
        let mut client = Client::builder(&self.url)
            .header("Authorization", &self.auth)
            .era(Era::Stateless)
            .timeout(bound)
            .connect_timeout(bound)
            .connect()
            .map_err(|err| eprintln!("legitimate client: {err}"))
            .ok()?;
        client
            .list_tools()
            .map_err(|err| eprintln!("legitimate tools/list: {err}"))
            .ok()?;
        Some(started.elapsed())
    }

    /// A connection of the attacker's, with a read timeout so that a test
    /// never hangs on it.
    fn connect(&self) -> TcpStream {
        let stream = TcpStream::connect(self.addr).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        stream
    }
}

impl Drop for Probe {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Reads one response head off `stream`: the status and the head's text.
fn read_head(stream: &mut TcpStream) -> Option<(u16, String)> {
    let mut head = Vec::new();
    let mut byte = [0; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match stream.read(&mut byte) {
            Ok(1) => head.push(byte[0]),
            _ => return None,
        }
    }
    let head = String::from_utf8_lossy(&head).into_owned();
    let status = head.split(' ').nth(1)?.parse().ok()?;
    Some((status, head))
}

/// The `Content-Length` of a response head.
fn content_length(head: &str) -> usize {
    head.lines()
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("content-length")
                .then(|| value.trim().parse().ok())?
        })
        .unwrap_or(0)
}

/// Reads one whole response (head and body) off `stream`.
fn read_response(stream: &mut TcpStream) -> Option<(u16, String)> {
    let (status, head) = read_head(stream)?;
    let mut body = vec![0; content_length(&head)];
    stream.read_exact(&mut body).ok()?;
    Some((status, head))
}

/// Bytes that arrive on `stream` within `wait`, up to `max`.
fn bytes_within(stream: &mut TcpStream, wait: Duration, max: usize) -> usize {
    stream.set_read_timeout(Some(wait)).unwrap();
    let mut seen = 0;
    let mut buf = [0; 4096];
    let until = Instant::now() + wait;
    while seen < max && Instant::now() < until {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => seen += n,
        }
    }
    seen
}

/// Generous: a legitimate request on a loopback host that works takes
/// milliseconds, even on a loaded machine.
const ANSWERED: Duration = Duration::from_secs(5);

#[test]
#[cfg_attr(
    windows,
    ignore = "Unix only: the host runs under sh (ulimit) and is measured in /proc"
)]
fn one_connection_pipelining_refused_requests_it_never_reads_holds_no_worker() {
    let probe = Probe::start(None, &[]);
    assert!(probe.legit_ping(ANSWERED).is_some());
    let before_mib = probe.resident_mib();
    let requests = 50_000;
    let mut attacker = probe.connect();
    let get = format!("GET /mcp HTTP/1.1\r\nHost: {}\r\n\r\n", probe.addr);
    let mut writer = attacker.try_clone().unwrap();
    let pipeline = thread::spawn(move || {
        let batch = get.repeat(1000);
        for _ in 0..requests / 1000 {
            if writer.write_all(batch.as_bytes()).is_err() {
                break;
            }
        }
    });
    // While the pipeline is read (and after), a legitimate client is
    // answered, again and again.
    let mut slowest = Duration::ZERO;
    for _ in 0..10 {
        let took = probe.legit_ping(ANSWERED);
        assert!(took.is_some(), "a legitimate ping went unanswered");
        slowest = slowest.max(took.unwrap_or_default());
    }
    pipeline.join().unwrap();
    assert!(
        probe.legit_ping(ANSWERED).is_some(),
        "unanswered after the pipeline was sent"
    );
    let grew = probe.resident_mib().saturating_sub(before_mib);
    println!(
        "pipelined {requests} unauthenticated GETs: slowest legitimate ping {slowest:?}, host RSS +{grew} MiB, {} threads",
        probe.threads()
    );
    assert!(grew < 64, "the host grew by {grew} MiB");
    // The attacker got its refusal, saying the connection is closed...
    let (status, head) = read_response(&mut attacker).unwrap();
    assert_eq!(status, 401);
    assert!(head.contains("Connection: close"), "{head}");
    // ...and not the other 49,999 answers: at most the few refused in the
    // same instant by other workers.
    let more = bytes_within(&mut attacker, Duration::from_millis(500), 1 << 20);
    assert!(more < 16 * head.len().max(512), "{more} more bytes came");
}

#[test]
#[cfg_attr(
    windows,
    ignore = "Unix only: the host runs under sh (ulimit) and is measured in /proc"
)]
fn running_out_of_descriptors_costs_connections_not_the_listener() {
    let probe = Probe::start(Some("ulimit -n 64"), &[]);
    assert!(probe.legit_ping(ANSWERED).is_some());
    // Idle connections, each two descriptors in the host, until it has
    // none left (and more, which wait in the listen queue).
    let idle: Vec<TcpStream> = (0..80).map(|_| probe.connect()).collect();
    thread::sleep(Duration::from_millis(500));
    for stream in &idle {
        let _ = stream.shutdown(Shutdown::Both);
    }
    drop(idle);
    let freed = Instant::now();
    // Once the attacker let go, the host answers again, on the same port.
    let mut answered = None;
    while answered.is_none() && freed.elapsed() < 3 * ANSWERED {
        answered = probe.legit_ping(ANSWERED);
    }
    let recovered = freed.elapsed();
    println!(
        "80 idle connections under ulimit -n 64: answered again: {}, {recovered:?} after they closed; {} restarts reported",
        answered.is_some(),
        probe.events_with("ListenerRestarted")
    );
    assert!(answered.is_some(), "the host stopped answering for good");
    assert!(
        probe.events_with("ListenerRestarted") >= 1,
        "the restart was not reported"
    );
    // And it keeps answering.
    for _ in 0..5 {
        assert!(probe.legit_ping(ANSWERED).is_some());
    }
}

#[test]
#[cfg_attr(
    windows,
    ignore = "Unix only: the host runs under sh (ulimit) and is measured in /proc"
)]
fn idle_connections_are_closed_after_the_read_timeout_and_their_threads_end() {
    let probe = Probe::start(None, &["1000"]);
    assert!(probe.legit_ping(ANSWERED).is_some());
    let baseline = probe.threads();
    let mut idle: Vec<TcpStream> = (0..200).map(|_| probe.connect()).collect();
    // tiny_http gives each a thread as one comes free (see the pool's
    // nudges), so the count climbs for a while.
    thread::sleep(Duration::from_secs(2));
    let held = probe.threads();
    assert!(held > baseline + 50, "{held} threads from {baseline}");
    // Each is closed by the host once its read waited the timeout (at
    // least 10 s, whatever shorter read timeout the host has)...
    let started = Instant::now();
    for stream in &mut idle {
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        let mut byte = [0; 1];
        assert!(matches!(stream.read(&mut byte), Ok(0) | Err(_)));
    }
    let closed_after = started.elapsed();
    // ...and the threads they held end with them.
    wait_for("the idle threads to end", || {
        probe.threads() <= baseline + 16
    });
    println!(
        "200 idle connections: {held} threads while held (from {baseline}), all closed by the host within {closed_after:?}, {} threads after",
        probe.threads()
    );
    assert!(probe.legit_ping(ANSWERED).is_some());
}

#[test]
#[cfg_attr(
    windows,
    ignore = "Unix only: the host runs under sh (ulimit) and is measured in /proc"
)]
fn refused_bodies_that_never_come_cost_no_thread_each() {
    let probe = Probe::start(None, &[]);
    assert!(probe.legit_ping(ANSWERED).is_some());
    let baseline = probe.threads();
    let mut refused = Vec::new();
    for _ in 0..100 {
        let mut stream = probe.connect();
        write!(
            stream,
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n",
            probe.addr
        )
        .unwrap();
        // Each is refused at once, told the connection is closing...
        let (status, head) = read_response(&mut stream).unwrap();
        assert_eq!(status, 401);
        assert!(head.contains("Connection: close"), "{head}");
        refused.push(stream);
    }
    // ...and holds its connection's own tiny_http thread, no more: the
    // bodies wait for a few drain threads.
    let held = probe.threads() - baseline;
    println!("100 refused POSTs whose bodies never come: +{held} threads");
    assert!(held <= 100 + 12, "{held} more threads");
    assert!(probe.legit_ping(ANSWERED).is_some());
    drop(refused);
    wait_for("the refused connections' threads to end", || {
        probe.threads() <= baseline + 16
    });
}
