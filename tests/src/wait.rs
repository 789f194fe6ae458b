//! Waiting for a property to hold, bounded: the bound only keeps a broken
//! build from hanging, it is not a timing assertion.

use std::thread;
use std::time::{Duration, Instant};

/// Polls `done` every 5 ms for up to 20 s; panics naming `what` past that.
pub fn wait_for(what: &str, done: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !done() {
        assert!(Instant::now() < deadline, "gave up waiting for {what}");
        thread::sleep(Duration::from_millis(5));
    }
}
