//! A bounded drainer for bodies nobody will read.
//!
//! tiny_http reads what is left of a request's body when the request (or
//! its reader) is dropped, on whichever thread drops it, blocking until the
//! client has sent it all (each read bounded by the read timeout the
//! accepted sockets carry). That must never be a worker, and a thread per
//! such body let a client without a bearer start one thread per refused
//! request. Here at most [`MAX_DRAINERS`] threads do it, one body after
//! another; the rest wait their turn in a queue, each holding nothing but
//! its own connection (whose tiny_http thread is parked meanwhile, reading
//! nothing more from it).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::thread;

use crate::sync::lock;

/// How many threads drain bodies at most.
pub(crate) const MAX_DRAINERS: usize = 4;

/// Something whose drop drains a body.
type Job = Box<dyn FnOnce() + Send>;

/// The queue of bodies to drain, and how many threads drain them.
#[derive(Default)]
pub(crate) struct Drainer {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    queue: VecDeque<Job>,
    threads: usize,
}

impl Drainer {
    /// Drops `owner` (a request, a stream) on a drain thread, starting one
    /// when fewer than [`MAX_DRAINERS`] run; runs it here only when no
    /// thread can be started and none runs.
    pub(crate) fn drop_later(self: &Arc<Self>, owner: impl Send + 'static) {
        let job: Job = Box::new(move || drop(owner));
        let mut state = lock(&self.state);
        state.queue.push_back(job);
        if state.threads >= MAX_DRAINERS {
            return;
        }
        state.threads += 1;
        drop(state);
        let drainer = Arc::clone(self);
        let spawned = thread::Builder::new()
            .name("toolhost-drain".into())
            .spawn(move || drainer.run());
        if spawned.is_err() {
            let mut state = lock(&self.state);
            state.threads -= 1;
            if state.threads == 0 {
                // No thread at all to do it: better this thread than never.
                let jobs = std::mem::take(&mut state.queue);
                drop(state);
                jobs.into_iter().for_each(|job| job());
            }
        }
    }

    /// How many threads drain now.
    #[cfg(test)]
    pub(crate) fn threads(&self) -> usize {
        lock(&self.state).threads
    }

    fn run(&self) {
        loop {
            let job = {
                let mut state = lock(&self.state);
                match state.queue.pop_front() {
                    Some(job) => job,
                    None => {
                        state.threads -= 1;
                        return;
                    }
                }
            };
            job();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use std::time::Duration;

    /// Blocks its drop until told to go on, like a body still on its way.
    struct Slow(mpsc::Receiver<()>, mpsc::Sender<()>);

    impl Drop for Slow {
        fn drop(&mut self) {
            let _ = self.0.recv_timeout(Duration::from_secs(10));
            let _ = self.1.send(());
        }
    }

    #[test]
    fn many_slow_drains_share_a_few_threads_and_all_finish() {
        let drainer = Arc::new(Drainer::default());
        let (done_tx, done_rx) = mpsc::channel();
        let mut gates = Vec::new();
        for _ in 0..3 * MAX_DRAINERS {
            let (go, wait) = mpsc::channel();
            gates.push(go);
            drainer.drop_later(Slow(wait, done_tx.clone()));
        }
        // Never more threads than the bound, however many wait...
        assert_eq!(drainer.threads(), MAX_DRAINERS);
        for gate in gates {
            gate.send(()).unwrap();
        }
        // ...and every one is drained in the end, the threads gone after.
        for _ in 0..3 * MAX_DRAINERS {
            done_rx.recv_timeout(Duration::from_secs(10)).unwrap();
        }
        let start = std::time::Instant::now();
        while drainer.threads() != 0 && start.elapsed() < Duration::from_secs(10) {
            thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(drainer.threads(), 0);
    }
}
