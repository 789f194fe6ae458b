//! Measures a burst of parallel calls as an agent makes them: a
//! measurement, not a test (timing is never asserted).
//!
//! One host in this process, with the default settings, serves a `work`
//! tool that takes `--work-ms` (300 by default). In each era, `--calls`
//! clients (64 by default) start together behind a barrier, each on a
//! connection of its own opened at that moment — as an agent opens one per
//! parallel call — and call `work` once. Meanwhile a watcher on its own
//! keep-alive connection, opened beforehand, sends `ping` and `tools/list`
//! in turn until the last call is answered.
//!
//! For each era it prints how many calls were answered with a result, the
//! burst's wall time next to ⌈calls / max_concurrent_calls⌉ × work (what
//! the call bound allows), the slowest call, the watcher's latency (p50,
//! p99, max over its requests), and this process's thread count during
//! the burst (its 64 callers included) and 3 and 6 s after it.
//!
//! ```text
//! cargo run --release -p toolhost-tests --bin burst [-- --calls 64 --work-ms 300]
//! ```

use std::error::Error;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::json;
use toolhost::client::Era;
use toolhost::{
    HostConfig, StaticSurface, Tool, ToolAnnotations, ToolHost, ToolOutcome,
    DEFAULT_MAX_CONCURRENT_CALLS,
};

type Result<T> = std::result::Result<T, Box<dyn Error>>;

struct Options {
    calls: usize,
    work: Duration,
}

fn options() -> Result<Options> {
    let mut options = Options {
        calls: 64,
        work: Duration::from_millis(300),
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value: u64 = args
            .next()
            .ok_or_else(|| format!("{flag} needs a number"))?
            .parse()?;
        match flag.as_str() {
            "--calls" => options.calls = usize::try_from(value)?,
            "--work-ms" => options.work = Duration::from_millis(value),
            other => return Err(format!("unknown option {other}; see the program's docs").into()),
        }
    }
    Ok(options)
}

/// This process's thread count, from `/proc` (0 where there is none).
fn threads() -> usize {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|line| line.strip_prefix("Threads:"))
        .and_then(|rest| rest.trim().parse().ok())
        .unwrap_or(0)
}

fn millis(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

/// The `q` quantile of `sorted` (ascending), or zero when it is empty.
fn quantile(sorted: &[Duration], q: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    // Nearest rank: small counts need no interpolation to be read.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

fn main() -> Result<()> {
    let options = options()?;
    let host = ToolHost::bind(HostConfig::default())?;
    let work = options.work;
    let session = host.open_session(StaticSurface::new().tool(
        Tool::new("work", "Works a while.").annotations(ToolAnnotations::new().read_only(true)),
        move |_, _| {
            thread::sleep(work);
            ToolOutcome::text("done")
        },
    )?);
    println!(
        "{} parallel calls of {} ms, max_concurrent_calls {}; threads before: {}",
        options.calls,
        work.as_millis(),
        DEFAULT_MAX_CONCURRENT_CALLS,
        threads()
    );
    let rounds = options.calls.div_ceil(DEFAULT_MAX_CONCURRENT_CALLS);
    let allowed = work * u32::try_from(rounds)?;
    for era in [Era::Stateful, Era::Stateless] {
        let mut watcher = session.client_builder().era(Era::Stateful).connect()?;
        let start = Arc::new(Barrier::new(options.calls + 1));
        let callers: Vec<_> = (0..options.calls)
            .map(|_| {
                let start = Arc::clone(&start);
                let builder = session.client_builder().era(era);
                thread::spawn(move || {
                    start.wait();
                    let began = Instant::now();
                    let answered = builder
                        .connect()
                        .and_then(|mut client| client.call_tool("work", json!({})))
                        .is_ok_and(|result| !result.is_error && result.text() == "done");
                    (answered, began.elapsed())
                })
            })
            .collect();
        let done = Arc::new(AtomicBool::new(false));
        start.wait();
        let began = Instant::now();
        let watching = {
            let done = Arc::clone(&done);
            thread::spawn(move || {
                let mut latencies = Vec::new();
                let mut failed = 0;
                let mut during = 0;
                for n in 0.. {
                    if done.load(Ordering::SeqCst) {
                        break;
                    }
                    let sent = Instant::now();
                    let ok = if n % 2 == 0 {
                        watcher.ping().is_ok()
                    } else {
                        watcher.list_tools().is_ok()
                    };
                    latencies.push(sent.elapsed());
                    failed += usize::from(!ok);
                    during = during.max(threads());
                    thread::sleep(Duration::from_millis(5));
                }
                (latencies, failed, during)
            })
        };
        let mut answered = 0;
        let mut slowest = Duration::ZERO;
        for caller in callers {
            let (ok, took) = caller.join().map_err(|_| "a caller panicked")?;
            answered += usize::from(ok);
            slowest = slowest.max(took);
        }
        let wall = began.elapsed();
        done.store(true, Ordering::SeqCst);
        let (mut latencies, failed, during) =
            watching.join().map_err(|_| "the watcher panicked")?;
        latencies.sort_unstable();
        // The host's extra workers leave after 2 s idle, tiny_http's
        // connection threads after 5 s.
        thread::sleep(Duration::from_secs(3));
        let soon = threads();
        thread::sleep(Duration::from_secs(3));
        println!(
            "{era:?}: {answered}/{} answered; wall {:.0} ms (the bound allows {:.0} ms: {rounds} rounds); slowest call {:.0} ms; \
             watcher {} requests ({failed} failed), p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms; threads during {during}, 3 s after {soon}, 6 s after {}",
            options.calls,
            millis(wall),
            millis(allowed),
            millis(slowest),
            latencies.len(),
            millis(quantile(&latencies, 0.5)),
            millis(quantile(&latencies, 0.99)),
            millis(quantile(&latencies, 1.0)),
            threads()
        );
    }
    drop(session);
    host.shutdown();
    Ok(())
}
