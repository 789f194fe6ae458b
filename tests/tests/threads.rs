//! What a burst of connections leaves behind: once the host is quiet again,
//! no thread. A binary of its own, with one test, because it counts the
//! threads of its whole process.

#![cfg(target_os = "linux")]

use std::thread;

use serde_json::json;
use toolhost::client::Era;
use toolhost::{HostConfig, StaticSurface, Tool, ToolHost, ToolOutcome};
use toolhost_tests::wait_for;

/// This process's thread count, from `/proc`.
fn threads() -> usize {
    std::fs::read_to_string("/proc/self/status")
        .expect("/proc/self/status")
        .lines()
        .find_map(|line| line.strip_prefix("Threads:"))
        .and_then(|rest| rest.trim().parse().ok())
        .expect("a thread count")
}

#[test]
fn the_threads_a_burst_of_connections_starts_leave_once_the_host_is_quiet() {
    let host = ToolHost::bind(HostConfig::default()).unwrap();
    let session = host.open_session(
        StaticSurface::new()
            .tool(Tool::new("echo", "Echoes."), |_, _| {
                ToolOutcome::text("done")
            })
            .unwrap(),
    );
    // A ping makes the host busy once, as it is before a burst.
    let mut first = session
        .client_builder()
        .era(Era::Stateful)
        .connect()
        .unwrap();
    first.ping().unwrap();
    drop(first);
    let idle = threads();

    // Each stateless client opens its connection with its call, so these
    // arrive together, and tiny_http starts a thread for most of them.
    let callers: Vec<_> = (0..24)
        .map(|_| {
            let mut client = session
                .client_builder()
                .era(Era::Stateless)
                .connect()
                .unwrap();
            thread::spawn(move || client.call_tool("echo", json!({})).map(|r| r.text()))
        })
        .collect();
    for caller in callers {
        assert_eq!(caller.join().unwrap().unwrap(), "done");
    }
    assert!(threads() > idle, "the burst started connection threads");

    // tiny_http's threads leave after 5 s with nothing to do; the host's
    // nudges must not keep waking them.
    wait_for("the burst's threads to leave", || threads() <= idle);

    // And the host still serves, with threads started again as needed.
    let mut client = session
        .client_builder()
        .era(Era::Stateless)
        .connect()
        .unwrap();
    assert_eq!(client.call_tool("echo", json!({})).unwrap().text(), "done");
}
