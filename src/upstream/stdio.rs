//! A layer's stdio server: one child process, started by the layer's
//! supervisor (`supervise.rs`) when it connects and again after it dies.
//!
//! All calls share the one child ([`StdioClient`] routes answers by id).
//! Only the supervisor starts a child, so that every start and every
//! death passes through the one place that reports them
//! ([`ServerStatus`](crate::ServerStatus)) and paces them (the layer's
//! [`reconnect_backoff`](super::McpServerBuilder::reconnect_backoff)). A
//! call that finds the child gone wakes the supervisor and waits for the
//! new one, as long as the layer keeps the server's tools listed for a
//! restart (`RESTART_GRACE`); a call that comes while the child is being
//! started waits for it under the lock the start holds.

use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use super::signal::Signal;
use crate::client::{ClientError, StdioClient, StdioServer};
use crate::sync::lock;

/// The child of a stdio layer, started again after it dies.
pub(super) struct Respawning {
    server: StdioServer,
    child: Mutex<Option<Arc<StdioClient>>>,
    /// Told each time a child is started, for the calls that wait for one.
    started: Condvar,
    /// Wakes the supervisor, which starts the next child.
    supervisor: Arc<Signal>,
}

impl Respawning {
    pub(super) fn new(server: StdioServer, supervisor: Arc<Signal>) -> Respawning {
        Respawning {
            server,
            child: Mutex::new(None),
            started: Condvar::new(),
            supervisor,
        }
    }

    /// Starts a child unless one runs; the supervisor's alone to call.
    pub(super) fn start(&self) -> Result<(), ClientError> {
        let mut child = lock(&self.child);
        if child
            .as_ref()
            .is_some_and(|client| client.closed().is_none())
        {
            return Ok(());
        }
        if let Some(dead) = child.take() {
            // Reaped on a thread of its own: a child that closed its output
            // but runs on gets the whole grace period, which no start
            // should wait for.
            let _ = std::thread::Builder::new()
                .name("toolhost-reap".into())
                .spawn(move || drop(dead));
        }
        // Started under the lock: the calls that come meanwhile wait for
        // this child rather than fail.
        *child = Some(Arc::new(self.server.connect()?));
        self.started.notify_all();
        Ok(())
    }

    /// Runs `work` with the running child. When none runs, the supervisor
    /// is woken to start one, and `work` waits for it up to `wait`.
    pub(super) fn run<T>(
        &self,
        wait: Duration,
        work: impl FnOnce(&StdioClient) -> Result<T, ClientError>,
    ) -> Result<T, ClientError> {
        let client = self.running(wait)?;
        work(&client)
    }

    fn running(&self, wait: Duration) -> Result<Arc<StdioClient>, ClientError> {
        let until = Instant::now() + wait;
        let mut child = lock(&self.child);
        loop {
            match child.as_ref() {
                Some(client) if client.closed().is_none() => return Ok(Arc::clone(client)),
                gone => {
                    let seen = gone.and_then(|client| client.closed());
                    self.supervisor.want_refresh();
                    let left = until.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return Err(ClientError::Closed {
                            reason: seen.unwrap_or_else(|| "it is not running yet".into()),
                        });
                    }
                    child = self
                        .started
                        .wait_timeout(child, left)
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .0;
                }
            }
        }
    }

    /// The child's process id, while one runs.
    pub(super) fn id(&self) -> Option<u32> {
        lock(&self.child)
            .as_ref()
            .filter(|client| client.closed().is_none())
            .map(|client| client.id())
    }

    /// Why the child is gone, when one was started and its output ended.
    pub(super) fn gone(&self) -> Option<String> {
        lock(&self.child)
            .as_ref()
            .and_then(|client| client.closed())
    }
}
