//! What a layer's threads wait on, and the refresh thread that waits.

use std::sync::{Condvar, Mutex, Weak};
use std::time::{Duration, Instant};

use crate::sync::lock;

use super::Inner;

/// What the layer's threads wait on: set when the last handle is dropped
/// (stop), or when the tools should be listed again now (a stdio server's
/// list change, a restart).
#[derive(Default)]
pub(super) struct Signal {
    flags: Mutex<Flags>,
    woken: Condvar,
}

#[derive(Default)]
struct Flags {
    stopped: bool,
    refresh: bool,
}

impl Signal {
    pub(super) fn stop(&self) {
        lock(&self.flags).stopped = true;
        self.woken.notify_all();
    }

    pub(super) fn want_refresh(&self) {
        lock(&self.flags).refresh = true;
        self.woken.notify_all();
    }

    /// Waits up to `delay`, cut short by a stop; `true` when stopped.
    pub(super) fn pause(&self, delay: Duration) -> bool {
        let flags = lock(&self.flags);
        let (flags, _) = self
            .woken
            .wait_timeout_while(flags, delay, |flags| !flags.stopped)
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        flags.stopped
    }

    /// Waits until the next refresh is due — `interval` passed, or a
    /// refresh wanted — `false` when stopped instead.
    pub(super) fn next_refresh(&self, interval: Option<Duration>) -> bool {
        let deadline = interval.map(|interval| Instant::now() + interval);
        let mut flags = lock(&self.flags);
        loop {
            if flags.stopped {
                return false;
            }
            if std::mem::take(&mut flags.refresh) {
                return true;
            }
            flags = match deadline {
                None => self
                    .woken
                    .wait(flags)
                    .unwrap_or_else(std::sync::PoisonError::into_inner),
                Some(deadline) => {
                    let left = deadline.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return true;
                    }
                    self.woken
                        .wait_timeout(flags, left)
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .0
                }
            };
        }
    }
}

/// The refresh thread: lists the server's tools every `interval` (if any)
/// and whenever a refresh is wanted, until the layer is dropped.
pub(super) fn keep_fresh(layer: &Weak<Inner>, signal: &Signal, interval: Option<Duration>) {
    while signal.next_refresh(interval) {
        let Some(layer) = layer.upgrade() else { return };
        layer.refresh_reporting("");
    }
}
