//! One thread that runs jobs at given instants: the deadlines of tool calls
//! and the reports of calls that run long.
//!
//! A job is cancelled by its id when the call ends first, so a finished call
//! leaves nothing behind; jobs run on the timer thread and must be quick.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::io;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::{self, JoinHandle};
use std::time::Instant;

use crate::sync::lock;

type Job = Box<dyn FnOnce() + Send>;

#[derive(Default)]
struct State {
    due: BinaryHeap<Reverse<(Instant, u64)>>,
    jobs: HashMap<u64, Job>,
    next_id: u64,
    stopping: bool,
}

/// Runs jobs at their instants.
pub(crate) struct Timer {
    state: Mutex<State>,
    wake: Condvar,
    thread: Mutex<Option<JoinHandle<()>>>,
}

/// A scheduled job; [`Timer::cancel`] it when it is no longer wanted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct JobId(u64);

impl Timer {
    pub(crate) fn start() -> io::Result<Arc<Timer>> {
        let timer = Arc::new(Timer {
            state: Mutex::default(),
            wake: Condvar::new(),
            thread: Mutex::new(None),
        });
        let runner = Arc::clone(&timer);
        let handle = thread::Builder::new()
            .name("toolhost-timer".into())
            .spawn(move || runner.run())?;
        *lock(&timer.thread) = Some(handle);
        Ok(timer)
    }

    /// Runs `job` at `at` (at once if that has passed).
    pub(crate) fn schedule(&self, at: Instant, job: impl FnOnce() + Send + 'static) -> JobId {
        let mut state = lock(&self.state);
        let id = state.next_id;
        state.next_id += 1;
        // The thread sleeps until the earliest job; only a job due before
        // it needs to wake the thread (most calls' jobs are due later than
        // one already waiting, so most calls cost no wake-up).
        let sooner = state
            .due
            .peek()
            .is_none_or(|Reverse((first, _))| at < *first);
        state.due.push(Reverse((at, id)));
        state.jobs.insert(id, Box::new(job));
        drop(state);
        if sooner {
            self.wake.notify_all();
        }
        JobId(id)
    }

    /// Forgets a job that has not run yet.
    pub(crate) fn cancel(&self, id: JobId) {
        lock(&self.state).jobs.remove(&id.0);
    }

    /// Stops the thread; jobs not yet due never run. Idempotent.
    pub(crate) fn stop(&self) {
        lock(&self.state).stopping = true;
        self.wake.notify_all();
        if let Some(handle) = lock(&self.thread).take() {
            // The timer thread has nothing to clean up if it panicked.
            let _ = handle.join();
        }
    }

    fn run(&self) {
        let mut state = lock(&self.state);
        loop {
            if state.stopping {
                state.jobs.clear();
                return;
            }
            let now = Instant::now();
            match state.due.peek().copied() {
                Some(Reverse((at, id))) if at <= now => {
                    state.due.pop();
                    if let Some(job) = state.jobs.remove(&id) {
                        drop(state);
                        // A panicking job must not stop every later deadline.
                        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
                        state = lock(&self.state);
                    }
                }
                Some(Reverse((at, _))) => {
                    state = self
                        .wake
                        .wait_timeout(state, at - now)
                        .map(|(guard, _)| guard)
                        .unwrap_or_else(|poisoned| poisoned.into_inner().0);
                }
                None => {
                    state = self
                        .wake
                        .wait(state)
                        .unwrap_or_else(std::sync::PoisonError::into_inner);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use std::time::Duration;

    #[test]
    fn jobs_run_in_the_order_of_their_instants_and_cancelled_ones_never() {
        let timer = Timer::start().unwrap();
        let (tx, rx) = mpsc::channel();
        let now = Instant::now();
        for (delay, name) in [(30, "late"), (10, "early"), (20, "cancelled")] {
            let tx = tx.clone();
            let id = timer.schedule(now + Duration::from_millis(delay), move || {
                tx.send(name).unwrap();
            });
            if name == "cancelled" {
                timer.cancel(id);
            }
        }
        let first = rx.recv_timeout(Duration::from_secs(5)).unwrap();
        let second = rx.recv_timeout(Duration::from_secs(5)).unwrap();
        assert_eq!((first, second), ("early", "late"));
        assert!(rx.recv_timeout(Duration::from_millis(50)).is_err());
        timer.stop();
        timer.stop();
    }
}
