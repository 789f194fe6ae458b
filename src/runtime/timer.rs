//! One thread that runs jobs at given instants: the deadlines of tool calls
//! and the reports of calls that run long.
//!
//! A job is cancelled by its id when the call ends first, so a finished call
//! leaves nothing behind; jobs run on the timer thread and must be quick.
//!
//! A call with a deadline, or with a listener for its long-call report,
//! schedules jobs, and nearly every call cancels them within microseconds.
//! So jobs are kept in one ordered map, and a cancelled job leaves it at
//! once: kept as tombstones in a heap instead, a busy host held a minute of
//! them (tens of megabytes at 25,000 calls a second) and woke this thread
//! for each as it came due. Keep-alives are one recurring job per session
//! with calls in flight, not one per call.

use std::collections::BTreeMap;
use std::io;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::{self, JoinHandle};
use std::time::Instant;

use crate::sync::lock;

type Job = Box<dyn FnOnce() + Send>;

#[derive(Default)]
struct State {
    /// The jobs, by when they are due and then by when they were scheduled.
    jobs: BTreeMap<(Instant, u64), Job>,
    /// By when the thread looks at the jobs again of its own accord: `None`
    /// while it sleeps until woken.
    looks_at: Option<Instant>,
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
pub(crate) struct JobId {
    at: Instant,
    id: u64,
}

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
        // The thread looks at the jobs when it set out to: when the earliest
        // job it knew of is due, even if that job was cancelled since. Only
        // a job due before then needs to wake it. Calls schedule jobs due
        // later than the last call's and cancel them within microseconds,
        // so most calls cost no wake-up: not even the one that finds no job
        // waiting, because the thread keeps to the instant it was woken for.
        let sooner = state.looks_at.is_none_or(|looks| at < looks);
        if sooner {
            state.looks_at = Some(at);
        }
        state.jobs.insert((at, id), Box::new(job));
        drop(state);
        if sooner {
            self.wake.notify_all();
        }
        JobId { at, id }
    }

    /// Forgets a job that has not run yet.
    pub(crate) fn cancel(&self, job: JobId) {
        lock(&self.state).jobs.remove(&(job.at, job.id));
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
            match state.jobs.first_key_value().map(|(key, _)| *key) {
                Some((at, _)) if at <= now => {
                    if let Some((_, job)) = state.jobs.pop_first() {
                        drop(state);
                        // A panicking job must not stop every later deadline.
                        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
                        state = lock(&self.state);
                    }
                }
                Some((at, _)) => {
                    state.looks_at = Some(at);
                    state = self
                        .wake
                        .wait_timeout(state, at - now)
                        .map(|(guard, _)| guard)
                        .unwrap_or_else(|poisoned| poisoned.into_inner().0);
                }
                None => match state.looks_at.filter(|looks| *looks > now) {
                    // Woken for a job that was cancelled since: keep to its
                    // instant, so that the next call's later job needs no
                    // wake-up.
                    Some(looks) => {
                        state = self
                            .wake
                            .wait_timeout(state, looks - now)
                            .map(|(guard, _)| guard)
                            .unwrap_or_else(|poisoned| poisoned.into_inner().0);
                    }
                    None => {
                        state.looks_at = None;
                        state = self
                            .wake
                            .wait(state)
                            .unwrap_or_else(std::sync::PoisonError::into_inner);
                    }
                },
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

    #[test]
    fn a_job_due_before_the_threads_next_look_wakes_it_even_after_a_cancel() {
        let timer = Timer::start().unwrap();
        let far = timer.schedule(Instant::now() + Duration::from_secs(60), || {});
        // The thread now sleeps until `far`, which is cancelled meanwhile.
        std::thread::sleep(Duration::from_millis(20));
        timer.cancel(far);
        let (tx, rx) = mpsc::channel();
        timer.schedule(Instant::now() + Duration::from_millis(10), move || {
            tx.send(()).unwrap();
        });
        assert!(rx.recv_timeout(Duration::from_secs(5)).is_ok());
        // A job due after the thread's next look needs no wake-up: it runs
        // when that look finds it due.
        let (tx, rx) = mpsc::channel();
        timer.schedule(Instant::now() + Duration::from_millis(50), move || {
            tx.send(()).unwrap();
        });
        timer.schedule(Instant::now() + Duration::from_millis(80), || {});
        assert!(rx.recv_timeout(Duration::from_secs(5)).is_ok());
        timer.stop();
    }

    #[test]
    fn a_cancelled_job_leaves_nothing_behind_and_a_due_one_nothing_after_it_ran() {
        let timer = Timer::start().unwrap();
        let later = Instant::now() + Duration::from_secs(60);
        let ids: Vec<JobId> = (0..1000).map(|_| timer.schedule(later, || {})).collect();
        assert_eq!(lock(&timer.state).jobs.len(), 1000);
        for id in ids {
            timer.cancel(id);
        }
        assert!(lock(&timer.state).jobs.is_empty());
        let (tx, rx) = mpsc::channel();
        let kept = timer.schedule(later, || {});
        timer.schedule(Instant::now(), move || tx.send(()).unwrap());
        rx.recv_timeout(Duration::from_secs(5)).unwrap();
        let left: Vec<(Instant, u64)> = lock(&timer.state).jobs.keys().copied().collect();
        assert_eq!(left, [(kept.at, kept.id)]);
        timer.stop();
    }
}
