//! The pool of threads that carry the relay's requests, kept for the next
//! request rather than started for each one: starting a thread cost a
//! relayed call more than the HTTP exchange itself. Each keeps its own
//! keep-alive connection to the endpoint, so a client that calls one
//! request after another pays neither a thread nor a connect per call.
//!
//! There is no bound: every request in flight has a thread, so a long call
//! never holds up the next (a job waits only for a thread to pick it up).
//! A job goes to an idle thread when there is one, else to a new thread;
//! a thread idle for [`IDLE_FOR`] leaves.
//!
//! Invariant: a job queued while a thread counts as idle is taken by some
//! thread — a thread leaving on its idle timeout looks at the queue under
//! the same lock the job was queued under, and takes the job instead.

use std::collections::VecDeque;
use std::io;
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread;
use std::time::Duration;

use crate::client::passthrough::Link;
use crate::sync::lock;

/// How long a thread waits for a job before it leaves.
const IDLE_FOR: Duration = Duration::from_secs(30);

/// One request to carry, on a thread's own link.
pub(super) type Job = Box<dyn FnOnce(&mut Link) + Send>;

#[derive(Default)]
struct Queue {
    jobs: VecDeque<Job>,
    idle: usize,
}

/// The relay's request threads.
#[derive(Clone, Default)]
pub(super) struct Workers {
    shared: Arc<(Mutex<Queue>, Condvar)>,
}

impl Workers {
    /// Hands `job` to an idle thread, or to a new one.
    pub(super) fn run(&self, job: Job) -> io::Result<()> {
        let (queue, wake) = &*self.shared;
        let mut state = lock(queue);
        if state.idle > state.jobs.len() {
            state.jobs.push_back(job);
            wake.notify_one();
            return Ok(());
        }
        drop(state);
        let shared = Arc::clone(&self.shared);
        thread::Builder::new()
            .name("stdio-relay-request".into())
            .spawn(move || work(&shared, job))
            .map(drop)
    }
}

/// A thread's life: its first job, then whatever comes, until idle too long.
fn work(shared: &(Mutex<Queue>, Condvar), first: Job) {
    let mut link = Link::default();
    first(&mut link);
    let (queue, wake) = shared;
    loop {
        let mut state = lock(queue);
        state.idle += 1;
        let (mut state, _) = wake
            .wait_timeout_while(state, IDLE_FOR, |state| state.jobs.is_empty())
            .unwrap_or_else(PoisonError::into_inner);
        state.idle -= 1;
        // Empty here means the wait timed out with nothing for this thread.
        let Some(job) = state.jobs.pop_front() else {
            return;
        };
        drop(state);
        job(&mut link);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    #[test]
    fn a_thread_is_reused_for_the_next_job_and_a_busy_one_holds_up_nothing() {
        let patience = Duration::from_secs(10);
        let workers = Workers::default();
        let (done, finished) = mpsc::channel();
        let report = |done: &mpsc::Sender<thread::ThreadId>| {
            let done = done.clone();
            Box::new(move |_: &mut Link| {
                let _ = done.send(thread::current().id());
            }) as Job
        };
        workers.run(report(&done)).unwrap();
        let first = finished.recv_timeout(patience).unwrap();
        // The thread counts itself idle once its job is done.
        let (queue, _) = &*workers.shared;
        let deadline = std::time::Instant::now() + patience;
        while lock(queue).idle == 0 {
            assert!(
                std::time::Instant::now() < deadline,
                "the thread never idled"
            );
            thread::yield_now();
        }
        workers.run(report(&done)).unwrap();
        assert_eq!(finished.recv_timeout(patience).unwrap(), first, "reused");

        // A job that blocks holds up no other: the next one runs meanwhile
        // (on a new thread, or on the first if the blocking one got another).
        let (release, blocked) = mpsc::channel::<()>();
        workers
            .run(Box::new(move |_| {
                let _ = blocked.recv();
            }))
            .unwrap();
        workers.run(report(&done)).unwrap();
        finished
            .recv_timeout(patience)
            .expect("the next job ran while the first blocked");
        release.send(()).unwrap();
    }
}
