//! What a layer's threads wait on: its drop, or a refresh wanted now.

use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::sync::lock;

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

    /// Waits up to `limit` for a stop or a wanted refresh.
    pub(super) fn wait(&self, limit: Duration) -> Wake {
        let deadline = Instant::now().checked_add(limit);
        let mut flags = lock(&self.flags);
        loop {
            if flags.stopped {
                return Wake::Stopped;
            }
            if std::mem::take(&mut flags.refresh) {
                return Wake::Wanted;
            }
            flags = match deadline {
                None => self
                    .woken
                    .wait(flags)
                    .unwrap_or_else(std::sync::PoisonError::into_inner),
                Some(deadline) => {
                    let left = deadline.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return Wake::Elapsed;
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

/// Why [`Signal::wait`] returned.
pub(super) enum Wake {
    /// The layer was dropped.
    Stopped,
    /// A refresh is wanted now.
    Wanted,
    /// The time given passed.
    Elapsed,
}
