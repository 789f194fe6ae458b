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
use toolhost_tests::process::{descriptor_count, resident_bytes, thread_count};
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

    fn descriptors(&self) -> usize {
        descriptor_count(self.pid()).unwrap()
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

/// What a bearer holder is promised while a stranger attacks: an answer
/// within this, on a fresh connection.
const WITHIN: Duration = Duration::from_secs(2);

/// The head of an unauthenticated POST declaring a `length`-byte body.
fn refused_head(addr: SocketAddr, length: usize) -> String {
    format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {length}\r\n\r\n"
    )
}

/// Waits until the host is back to (near) `baseline` threads and
/// descriptors; returns how long that took.
fn settles(probe: &Probe, baseline: (usize, usize)) -> Duration {
    let started = Instant::now();
    wait_for("the host's threads and descriptors to come back", || {
        probe.threads() <= baseline.0 + 16 && probe.descriptors() <= baseline.1 + 8
    });
    started.elapsed()
}

#[test]
#[cfg_attr(
    windows,
    ignore = "Unix only: the host runs under sh (ulimit) and is measured in /proc"
)]
fn refused_bodies_a_client_could_really_send_give_back_their_descriptors_once_it_leaves() {
    // 300 such connections held two descriptors each for good before: more
    // than this host has.
    let probe = Probe::start(Some("ulimit -n 256"), &[]);
    assert!(probe.legit_ping(WITHIN).is_some());
    let baseline = (probe.threads(), probe.descriptors());
    let mut most = baseline;
    for round in 0..300 {
        let mut stream = probe.connect();
        stream
            .write_all(refused_head(probe.addr, 100_000_000).as_bytes())
            .unwrap();
        // The start of the body, then the client goes away.
        stream.write_all(&[b' '; 4096]).unwrap();
        drop(stream);
        if round % 50 == 49 {
            most = (most.0.max(probe.threads()), most.1.max(probe.descriptors()));
            assert!(
                probe.legit_ping(WITHIN).is_some(),
                "a bearer holder went unanswered after {} refused bodies",
                round + 1
            );
        }
    }
    let settled = settles(&probe, baseline);
    println!(
        "300 refused 100 MB bodies, each client leaving: at most {} threads and {} descriptors (from {} and {}), back within {settled:?}; {} abandoned",
        most.0,
        most.1,
        baseline.0,
        baseline.1,
        probe.events_with("ConnectionAbandoned")
    );
    assert_eq!(probe.events_with("ConnectionAbandoned"), 0);
    assert!(probe.legit_ping(WITHIN).is_some());
}

#[test]
#[cfg_attr(
    windows,
    ignore = "Unix only: the host runs under sh (ulimit) and is measured in /proc"
)]
fn never_reading_connections_pipelining_refused_bodies_get_one_answer_each_and_hold_no_worker() {
    let probe = Probe::start(None, &[]);
    assert!(probe.legit_ping(WITHIN).is_some());
    let request = refused_head(probe.addr, 1100) + &" ".repeat(1100);
    let pipeline = request.repeat(500);
    let mut attackers = Vec::new();
    let mut writers = Vec::new();
    for _ in 0..12 {
        let stream = probe.connect();
        let mut writer = stream.try_clone().unwrap();
        let bytes = pipeline.clone();
        writers.push(thread::spawn(move || {
            let _ = writer.write_all(bytes.as_bytes());
        }));
        attackers.push(stream);
    }
    // While the pipelines are read, and after, a bearer holder is answered.
    let mut slowest = Duration::ZERO;
    for _ in 0..5 {
        let took = probe.legit_ping(WITHIN);
        assert!(took.is_some(), "a bearer holder went unanswered");
        slowest = slowest.max(took.unwrap_or_default());
    }
    for writer in writers {
        writer.join().unwrap();
    }
    assert!(probe.legit_ping(WITHIN).is_some());
    // Each connection got its one refusal and nothing for the 499 after it.
    for stream in &mut attackers {
        let (status, head) = read_response(stream).unwrap();
        assert_eq!(status, 401);
        assert!(head.contains("Connection: close"), "{head}");
        let more = bytes_within(stream, Duration::from_millis(300), 1 << 20);
        assert_eq!(more, 0, "{more} more bytes came after the refusal");
    }
    println!(
        "12 never-reading connections pipelining 500 refused 1,100-byte POSTs each: slowest bearer holder {slowest:?}, one answer per connection"
    );
}

#[test]
#[cfg_attr(
    windows,
    ignore = "Unix only: the host runs under sh (ulimit) and is measured in /proc"
)]
fn trickled_refused_bodies_hold_only_their_own_threads_and_let_go_when_their_clients_leave() {
    let probe = Probe::start(None, &[]);
    assert!(probe.legit_ping(WITHIN).is_some());
    let baseline = (probe.threads(), probe.descriptors());
    // Eight clients trickle a refused body, a byte every 100 ms...
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut tricklers = Vec::new();
    for _ in 0..8 {
        let mut stream = probe.connect();
        stream
            .write_all(refused_head(probe.addr, 1_000_000).as_bytes())
            .unwrap();
        let stop = Arc::clone(&stop);
        tricklers.push(thread::spawn(move || {
            while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                if stream.write_all(b" ").is_err() {
                    break;
                }
                thread::sleep(Duration::from_millis(100));
            }
        }));
    }
    // ...and 200 more refused POSTs, whose bodies come whole, are each
    // answered at once: no one waits behind a trickle.
    let mut slowest = Duration::ZERO;
    let mut refused = Vec::new();
    for _ in 0..200 {
        let started = Instant::now();
        let mut stream = probe.connect();
        stream
            .write_all((refused_head(probe.addr, 2000) + &" ".repeat(2000)).as_bytes())
            .unwrap();
        stream.set_read_timeout(Some(WITHIN)).unwrap();
        let (status, _) = read_response(&mut stream).expect("a refusal within 2 s");
        assert_eq!(status, 401);
        slowest = slowest.max(started.elapsed());
        refused.push(stream);
    }
    assert!(probe.legit_ping(WITHIN).is_some());
    let held = (probe.threads(), probe.descriptors());
    // The 200 leave while the trickles go on: what they held goes with
    // them, and only the tricklers' own threads and descriptors stay
    // (tiny_http's and a drain thread each, two descriptors).
    drop(refused);
    let tricklers_only = (baseline.0 + 2 * 8, baseline.1 + 2 * 8);
    let left_after = settles(&probe, tricklers_only);
    let during = (probe.threads(), probe.descriptors());
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    for trickler in tricklers {
        trickler.join().unwrap();
    }
    let settled = settles(&probe, baseline);
    println!(
        "8 trickled refused bodies and 200 refused POSTs: slowest refusal {slowest:?}; {} threads and {} descriptors while held (from {} and {}); {} and {} within {left_after:?} after the 200 left, the trickles going on; back within {settled:?} after the tricklers left",
        held.0, held.1, baseline.0, baseline.1, during.0, during.1
    );
    assert!(probe.legit_ping(WITHIN).is_some());
}

#[test]
#[cfg_attr(
    windows,
    ignore = "Unix only: the host runs under sh (ulimit) and is measured in /proc"
)]
fn a_trickled_head_costs_one_thread_and_two_descriptors_while_it_trickles_and_nothing_after() {
    // tiny_http reads a head itself, a read at a time, each bounded by the
    // read timeout (at least 10 s) and none in total: this measures the
    // bound the README states.
    let probe = Probe::start(None, &["1000"]);
    assert!(probe.legit_ping(WITHIN).is_some());
    let baseline = (probe.threads(), probe.descriptors());
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut tricklers = Vec::new();
    let opened = Instant::now();
    for _ in 0..50 {
        let mut stream = probe.connect();
        let stop = Arc::clone(&stop);
        tricklers.push(thread::spawn(move || {
            let mut sent = 0;
            while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                // A header line that never ends.
                let byte: &[u8] = if sent < 5 { b"POST " } else { b"x" };
                if stream.write_all(&byte[..1.min(byte.len())]).is_err() {
                    return false;
                }
                sent += 1;
                thread::sleep(Duration::from_millis(500));
            }
            // Still open: the host has not closed it.
            stream.set_read_timeout(Some(Duration::from_millis(50))).unwrap();
            let mut byte = [0; 1];
            matches!(stream.read(&mut byte), Err(ref err) if matches!(err.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut))
        }));
    }
    // Past the idle deadline (10 s), every trickling connection is open.
    thread::sleep(Duration::from_secs(12));
    let held = (probe.threads(), probe.descriptors());
    assert!(probe.legit_ping(WITHIN).is_some());
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    let open = tricklers
        .into_iter()
        .map(|trickler| trickler.join().unwrap())
        .filter(|open| *open)
        .count();
    let trickled = opened.elapsed();
    let settled = settles(&probe, baseline);
    println!(
        "50 heads trickled a byte per 500 ms for {trickled:?}: {open} still open; {} threads and {} descriptors (from {} and {}); back within {settled:?} after they closed",
        held.0, held.1, baseline.0, baseline.1
    );
    assert_eq!(open, 50);
    // One thread and two descriptors each, no more.
    assert!(held.0 <= baseline.0 + 50 + 16, "{held:?}");
    assert!(held.1 <= baseline.1 + 2 * 50 + 8, "{held:?}");
}
