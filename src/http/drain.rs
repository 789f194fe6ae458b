//! Bodies nobody will read: read off the connection and thrown away on
//! threads that are never workers, then the answer, if any, written.
//!
//! tiny_http gives no way to close a connection it has accepted: it closes
//! one when the client does, or when a read of it waits out the sockets'
//! read timeout (see `socket`). And it reads a connection's next request
//! only once the body before it is gone. So a body the host will not read
//! must still be read — by tiny_http, when the request is dropped, or here
//! — and whoever reads it waits on the client.
//!
//! Here each such body gets a thread of its own for as long as its client
//! keeps sending it: an idle drain thread, or a new one (with a small
//! stack) when none is idle; a thread with nothing to do for [`IDLE`]
//! leaves. Nothing is queued behind a slow body, so a client that trickles
//! one holds its own drain thread and nothing else, and the moment it
//! closes its connection the read ends and everything the connection held
//! is let go. The cost: one drain thread per connection whose body is
//! still coming, beside the thread tiny_http already keeps for that
//! connection — tiny_http reads one body of a connection at a time, so
//! never more than one per connection, and each costs the client a
//! connection of its own.
//!
//! The body is read in [`BUFFER`]-byte pieces. tiny_http's own drain (when
//! a request whose body is not all read is dropped) reserves the whole
//! rest of the body in one allocation: zeroed memory the kernel need not
//! back, released when the drain ends. It runs here only where it ends at
//! once — the body read to its end, or the client gone (tiny_http lets go
//! of the rest then) — or when the client has sent nothing for the read
//! timeout, and then under one of [`SILENT_SLOTS`] slots, so that at most
//! that many such reservations wait at once; a silent client whose turn
//! has not come is read again meanwhile, as before.
//!
//! A body declared longer than [`MAX_DRAINED_BYTES`] (or the host's
//! `max_body_bytes`, when that is larger) is never read nor dropped: a
//! reservation that large may fail, and a failed allocation aborts the
//! process. Its connection is left as it is for good (see
//! `reply::abandon`).

use std::collections::VecDeque;
use std::io;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread;
use std::time::Duration;

use crate::model::http::HttpResponse;
use crate::sync::lock;

use super::raw_response;

/// The longest declared body that is drained: 1 GiB, 256 times the default
/// `max_body_bytes` (4 MiB), so every body a client could mean to send is
/// drained and its connection closed. Past it, tiny_http's reservation of
/// the rest could fail and abort the process. Reserving 1 GiB of zeroed
/// memory costs address space only: Linux's default overcommit refuses a
/// single reservation only past all of RAM and swap, macOS never; Windows
/// charges it to the commit limit without backing it, which is why
/// [`SILENT_SLOTS`] bounds how many wait at once.
pub(crate) const MAX_DRAINED_BYTES: usize = 1 << 30;

/// How many silent clients' bodies may be left to tiny_http's own drain
/// (and its reservation of the body's rest) at once.
pub(crate) const SILENT_SLOTS: usize = 4;

/// The piece a drain thread reads at a time.
const BUFFER: usize = 16 << 10;

/// How long a drain thread with nothing to do waits for a body before it
/// leaves.
pub(crate) const IDLE: Duration = Duration::from_secs(2);

/// A drain thread's stack: it reads into a heap buffer and writes one
/// small answer, and there may be many at once.
const STACK: usize = 128 << 10;

/// Something to do on a drain thread.
type Job = Box<dyn FnOnce() + Send>;

/// The drain threads of one host.
#[derive(Default)]
pub(crate) struct Drainer {
    state: Mutex<State>,
    wake: Condvar,
    /// How many of the [`SILENT_SLOTS`] are taken.
    silent: AtomicUsize,
}

#[derive(Default)]
struct State {
    queue: VecDeque<Job>,
    /// Threads waiting for a job.
    idle: usize,
    /// Threads alive.
    threads: usize,
}

/// Runs its closure when dropped.
struct Finally<F: FnOnce()>(Option<F>);

impl<F: FnOnce()> Drop for Finally<F> {
    fn drop(&mut self) {
        if let Some(then) = self.0.take() {
            then();
        }
    }
}

/// A taken silent slot, given back on drop.
struct Slot<'a>(&'a AtomicUsize);

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Drainer {
    /// Reads what is left of `request`'s body (`unread` bytes, at most
    /// the host's bound, see `reply`) and throws it away, then writes `answer`,
    /// if any, with every header it has; then runs `done`. All of it on a
    /// drain thread.
    pub(crate) fn answer_after_body(
        self: &Arc<Self>,
        request: tiny_http::Request,
        unread: usize,
        answer: Option<HttpResponse>,
        done: impl FnOnce() + Send + 'static,
    ) {
        let drainer = Arc::clone(self);
        self.run(Box::new(move || {
            // Run even if the rest panics: the connection's memory of its
            // refusal must not stay pinned.
            let _done = Finally(Some(done));
            let (request, slot) = drainer.empty(request, unread);
            match answer {
                Some(answer) => raw_response::write(request, &answer),
                // Dropping the writer writes nothing and lets the
                // connection's next writer go.
                None => drop(request.into_writer()),
            }
            drop(slot);
        }));
    }

    /// Reads `unread` bytes of body off `request` until they are read, the
    /// client is gone, or it is silent for the read timeout with a slot
    /// free; returns the request, whose drop then ends at once or under the
    /// returned slot.
    fn empty(
        &self,
        mut request: tiny_http::Request,
        unread: usize,
    ) -> (tiny_http::Request, Option<Slot<'_>>) {
        let mut left = unread;
        let mut buffer = vec![0; BUFFER.min(left)];
        while left > 0 {
            let piece = BUFFER.min(left);
            match request.as_reader().read(&mut buffer[..piece]) {
                // The client closed: tiny_http has let go of the rest.
                Ok(0) => break,
                Ok(read) => left = left.saturating_sub(read),
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                Err(err)
                    if matches!(
                        err.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) =>
                {
                    if let Some(slot) = self.take_silent_slot() {
                        return (request, Some(slot));
                    }
                }
                // Reset: tiny_http's next read ends at once too.
                Err(_) => break,
            }
        }
        (request, None)
    }

    fn take_silent_slot(&self) -> Option<Slot<'_>> {
        self.silent
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |taken| {
                (taken < SILENT_SLOTS).then_some(taken + 1)
            })
            .ok()
            .map(|_| Slot(&self.silent))
    }

    /// Runs `job` on an idle drain thread, or a new one; here only when no
    /// thread can be started.
    fn run(self: &Arc<Self>, job: Job) {
        let mut state = lock(&self.state);
        state.queue.push_back(job);
        if state.queue.len() <= state.idle {
            self.wake.notify_one();
            return;
        }
        state.threads += 1;
        drop(state);
        let drainer = Arc::clone(self);
        let spawned = thread::Builder::new()
            .name("toolhost-drain".into())
            .stack_size(STACK)
            .spawn(move || drainer.serve());
        if spawned.is_err() {
            lock(&self.state).threads -= 1;
            // No thread to be had: this one, rather than a connection
            // held until one is.
            self.serve_queue_here();
        }
    }

    /// Takes jobs until none has come for [`IDLE`].
    fn serve(&self) {
        let mut state = lock(&self.state);
        loop {
            if let Some(job) = state.queue.pop_front() {
                drop(state);
                // A bug here costs the one body, not the thread's count.
                let _ = catch_unwind(AssertUnwindSafe(job));
                state = lock(&self.state);
                continue;
            }
            state.idle += 1;
            let (woken, waited) = self
                .wake
                .wait_timeout(state, IDLE)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            state = woken;
            state.idle -= 1;
            if waited.timed_out() && state.queue.is_empty() {
                state.threads -= 1;
                return;
            }
        }
    }

    /// Runs what is queued on this thread, when no drain thread could be
    /// started.
    fn serve_queue_here(&self) {
        loop {
            let Some(job) = lock(&self.state).queue.pop_front() else {
                return;
            };
            let _ = catch_unwind(AssertUnwindSafe(job));
        }
    }

    /// How many drain threads there are now.
    #[cfg(test)]
    pub(crate) fn threads(&self) -> usize {
        lock(&self.state).threads
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use std::time::Instant;

    fn wait_until(what: &str, done: impl Fn() -> bool) {
        let start = Instant::now();
        while !done() {
            assert!(start.elapsed() < Duration::from_secs(10), "{what}");
            thread::sleep(Duration::from_millis(5));
        }
    }

    #[test]
    fn a_slow_job_holds_its_own_thread_and_no_other_job_waits_behind_it() {
        let drainer = Arc::new(Drainer::default());
        let (go, wait) = mpsc::channel::<()>();
        let wait = Mutex::new(wait);
        // Held until told, like a body still coming...
        drainer.run(Box::new(move || {
            let _ = lock(&wait).recv_timeout(Duration::from_secs(10));
        }));
        // ...while the others finish, each on a thread of its own.
        let (done_tx, done_rx) = mpsc::channel();
        for _ in 0..8 {
            let done = done_tx.clone();
            drainer.run(Box::new(move || {
                let _ = done.send(());
            }));
        }
        for _ in 0..8 {
            done_rx.recv_timeout(Duration::from_secs(10)).unwrap();
        }
        assert!(drainer.threads() >= 2);
        go.send(()).unwrap();
        // Idle threads leave.
        wait_until("the drain threads to leave", || drainer.threads() == 0);
    }

    #[test]
    fn an_idle_thread_takes_the_next_job_instead_of_a_new_one() {
        let drainer = Arc::new(Drainer::default());
        let (done_tx, done_rx) = mpsc::channel();
        for _ in 0..20 {
            let done = done_tx.clone();
            drainer.run(Box::new(move || {
                let _ = done.send(());
            }));
            done_rx.recv_timeout(Duration::from_secs(10)).unwrap();
            wait_until("the thread to wait again", || {
                lock(&drainer.state).idle == 1
            });
        }
        assert_eq!(drainer.threads(), 1);
    }

    #[test]
    fn silent_slots_are_bounded_and_given_back() {
        let drainer = Drainer::default();
        let slots: Vec<_> = (0..SILENT_SLOTS)
            .map(|_| drainer.take_silent_slot().unwrap())
            .collect();
        assert!(drainer.take_silent_slot().is_none());
        drop(slots);
        assert!(drainer.take_silent_slot().is_some());
    }
}
