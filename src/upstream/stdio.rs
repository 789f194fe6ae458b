//! A layer's stdio server: one child process, started when the layer
//! connects and started again, on demand, after it dies.
//!
//! All calls share the one child ([`StdioClient`] routes answers by id).
//! When it is found gone — its output ended, so every call waiting on it
//! has failed with [`ClientError::Closed`] — the next call or refresh
//! starts a new one, at once if the dead child had served anything. A
//! child that dies (or fails to start) before serving a single request is
//! a failure in a row, and each one doubles the pause before the next
//! start: 1 s, 2 s, 4 s, … up to 30 s by default (the layer's
//! [`reconnect_backoff`](super::McpServerBuilder::reconnect_backoff)). Calls in between get the tool error
//! at once, naming the pause. So a server that crashes at startup costs
//! one spawn per pause, never a tight loop, and one that crashed after
//! working is back at the next call.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::supervise::Backoff;
use crate::client::{ClientError, StdioClient, StdioServer};
use crate::sync::lock;

/// The child of a stdio layer, started again after it dies.
pub(super) struct Respawning {
    server: StdioServer,
    backoff: Backoff,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    child: Option<Child>,
    /// Children in a row that died or failed to start before serving.
    failures: u32,
    /// No start before this, after a failure.
    not_before: Option<Instant>,
    /// How many children were started.
    started: u64,
}

struct Child {
    client: Arc<StdioClient>,
    /// Whether it answered a request since it started.
    served: Arc<AtomicBool>,
}

impl Respawning {
    pub(super) fn new(server: StdioServer, backoff: Backoff) -> Respawning {
        Respawning {
            server,
            backoff,
            state: Mutex::new(State::default()),
        }
    }

    /// Runs `work` with the running child, starting one when there is
    /// none (or it is gone); `true` beside the outcome when a child was
    /// started for it, other than the first.
    pub(super) fn run<T>(
        &self,
        work: impl FnOnce(&StdioClient) -> Result<T, ClientError>,
    ) -> (Result<T, ClientError>, bool) {
        let (client, served, restarted) = match self.child() {
            Ok(child) => child,
            Err(err) => return (Err(err), false),
        };
        let outcome = work(&client);
        if outcome.is_ok() {
            served.store(true, Ordering::SeqCst);
        }
        (outcome, restarted)
    }

    /// The child's process id, while one runs.
    pub(super) fn id(&self) -> Option<u32> {
        lock(&self.state)
            .child
            .as_ref()
            .filter(|child| child.client.closed().is_none())
            .map(|child| child.client.id())
    }

    /// Why the child is gone, when one was started and its output ended.
    pub(super) fn gone(&self) -> Option<String> {
        lock(&self.state)
            .child
            .as_ref()
            .and_then(|child| child.client.closed())
    }

    fn child(&self) -> Result<(Arc<StdioClient>, Arc<AtomicBool>, bool), ClientError> {
        let mut state = lock(&self.state);
        if let Some(child) = &state.child {
            if child.client.closed().is_none() {
                return Ok((Arc::clone(&child.client), Arc::clone(&child.served), false));
            }
        }
        if let Some(dead) = state.child.take() {
            if dead.served.load(Ordering::SeqCst) {
                state.failures = 0;
                state.not_before = None;
            } else {
                state.fail(self.backoff);
            }
            // Reaped on a thread of its own: a child that closed its output
            // but runs on gets the whole grace period, which no call should
            // wait for.
            let _ = std::thread::Builder::new()
                .name("toolhost-reap".into())
                .spawn(move || drop(dead));
        }
        if let Some(not_before) = state.not_before {
            let left = not_before.saturating_duration_since(Instant::now());
            if !left.is_zero() {
                return Err(ClientError::Closed {
                    reason: format!(
                        "it stopped {} time(s) in a row without serving, so it is started again only in {left:.1?}",
                        state.failures
                    ),
                });
            }
        }
        // Started under the lock: concurrent callers wait for this one
        // child rather than each starting their own.
        match self.server.connect() {
            Ok(client) => {
                state.started += 1;
                let child = Child {
                    client: Arc::new(client),
                    served: Arc::new(AtomicBool::new(false)),
                };
                let handles = (
                    Arc::clone(&child.client),
                    Arc::clone(&child.served),
                    state.started > 1,
                );
                state.child = Some(child);
                Ok(handles)
            }
            Err(err) => {
                state.fail(self.backoff);
                Err(err)
            }
        }
    }
}

impl State {
    /// Counts a failure in a row and sets the pause before the next start.
    fn fail(&mut self, backoff: Backoff) {
        self.failures += 1;
        self.not_before = Some(Instant::now() + backoff.pause(self.failures));
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn failures_in_a_row_double_the_pause_up_to_its_bound() {
        let mut state = State::default();
        let mut pauses = Vec::new();
        for _ in 0..8 {
            let before = Instant::now();
            state.fail(Backoff {
                first: Duration::from_secs(1),
                max: Duration::from_secs(30),
            });
            let pause = state.not_before.unwrap() - before;
            pauses.push(pause.as_secs());
        }
        assert_eq!(pauses, [1, 2, 4, 8, 16, 30, 30, 30]);
    }
}
