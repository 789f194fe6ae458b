//! The call executor: at most `max_running` handlers at once, and a FIFO
//! queue of calls waiting for a slot, bounded by `max_waiting`.
//!
//! Why this shape: a handler blocks its thread for as long as it runs, so a
//! host must bound how many run, and must keep the threads that answer
//! `ping`, `tools/list`, cancellations and ask-back answers out of that
//! bound. A call that finds every slot taken is parked here as data — its
//! work, its admission ticket, its outlet — not as a blocked thread, so
//! hundreds can wait for the cost of their buffers. The thread whose
//! handler returns takes the next waiting call before it gives its slot
//! up, which keeps the queue first-in, first-out and never leaves a call
//! waiting beside a free slot (taking a slot and queueing happen under one
//! lock). A waiting call that is cancelled — by the client, its deadline,
//! its session's drop or the host's shutdown — leaves the queue at once,
//! answered without its handler ever running.
//!
//! A call whose tool has a [`CallLine`] of its own (a bridged server's
//! tools) takes a slot of that line instead, and waits in that line's
//! queue: it never holds one of the host's slots, so calls piled on a
//! server that stopped answering cannot keep the application's own tools,
//! or another server's, from running (see `model/call_line.rs` for why). A line
//! no call uses is forgotten, so a host keeps no state for a layer gone.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, Weak};

use super::calls::Admitted;
use super::{Job, Lane, Runtime};
use crate::call::call_link::Cancellation;
use crate::event::Event;
use crate::mcp::{self, Step, StepResult};
use crate::model::CallLine;
use crate::sync::lock;

/// Slots and the waiting line.
pub(super) struct Executor {
    state: Mutex<Lines>,
    max_running: usize,
    max_waiting: usize,
}

/// The host's line, and the lines of their own that calls use now, by id.
#[derive(Default)]
struct Lines {
    host: Line,
    own: HashMap<u64, Line>,
}

#[derive(Default)]
struct Line {
    running: usize,
    waiting: VecDeque<Waiting>,
}

/// A call that waits for a slot, with the rest of its request.
struct Waiting {
    job: Box<Job>,
    call: Box<Admitted>,
}

/// What became of a call that asked for a slot.
enum Entered {
    /// It has a slot: run it now.
    Run(Box<Job>, Box<Admitted>),
    /// It waits in line, with this many (itself included).
    Queued(usize),
    /// The line is full: refuse it.
    Full(Box<Job>, Box<Admitted>, usize),
}

/// Something a thread carries on with. A request and a call travel boxed
/// from the worker's stack to the line and back: both are a few hundred
/// bytes, which each hand-on would otherwise copy.
enum Ready {
    /// A request's remaining steps.
    Job(Box<Job>),
    /// A call holding a slot, to run now.
    Run(Box<Job>, Box<Admitted>),
}

impl Executor {
    pub(super) fn new(max_running: usize, max_waiting: usize) -> Executor {
        Executor {
            state: Mutex::default(),
            max_running,
            max_waiting,
        }
    }

    fn enter(&self, job: Box<Job>, call: Box<Admitted>) -> Entered {
        let mut lines = lock(&self.state);
        let (line, max_running, max_waiting) = match &call.line {
            Some(own) => (
                lines.own.entry(own.id()).or_default(),
                own.max_running(),
                own.max_waiting(),
            ),
            None => (&mut lines.host, self.max_running, self.max_waiting),
        };
        if line.running < max_running {
            line.running += 1;
            return Entered::Run(job, call);
        }
        if line.waiting.len() >= max_waiting {
            let running = line.running;
            return Entered::Full(job, call, running);
        }
        line.waiting.push_back(Waiting { job, call });
        Entered::Queued(line.waiting.len())
    }

    /// A handler of `own`'s line (the host's, for `None`) returned: its
    /// slot goes to the first waiting call that is still wanted, or is
    /// freed. Returns that call, and the cancelled ones met on the way (to
    /// be answered outside the lock).
    fn leave(&self, own: Option<&CallLine>) -> (Option<Waiting>, Vec<Waiting>) {
        let mut lines = lock(&self.state);
        let line = match own {
            Some(own) => match lines.own.get_mut(&own.id()) {
                Some(line) => line,
                None => return (None, Vec::new()),
            },
            None => &mut lines.host,
        };
        let mut dropped = Vec::new();
        while let Some(next) = line.waiting.pop_front() {
            if next.call.is_cancelled() {
                dropped.push(next);
            } else {
                return (Some(next), dropped);
            }
        }
        line.running -= 1;
        if let Some(own) = own.filter(|_| line.running == 0) {
            lines.own.remove(&own.id());
        }
        (None, dropped)
    }

    /// Takes the cancelled calls out of every line.
    fn sweep(&self) -> Vec<Waiting> {
        let mut lines = lock(&self.state);
        let Lines { host, own } = &mut *lines;
        let mut cancelled = Vec::new();
        for line in std::iter::once(host).chain(own.values_mut()) {
            if line
                .waiting
                .iter()
                .any(|waiting| waiting.call.is_cancelled())
            {
                let mut kept = VecDeque::with_capacity(line.waiting.len());
                for waiting in line.waiting.drain(..) {
                    if waiting.call.is_cancelled() {
                        cancelled.push(waiting);
                    } else {
                        kept.push_back(waiting);
                    }
                }
                line.waiting = kept;
            }
        }
        cancelled
    }
}

impl Runtime {
    /// Carries jobs forward on this thread until each is answered or waits
    /// in line; runs the handlers of calls that get a slot here, and of the
    /// waiting calls this thread's freed slots pass to.
    pub(super) fn drive(self: &Arc<Self>, job: Box<Job>, lane: &dyn Lane) {
        let mut ready = vec![Ready::Job(job)];
        while let Some(next) = ready.pop() {
            match next {
                Ready::Job(job) => {
                    if let Some(run) = self.advance(job) {
                        ready.push(run);
                    }
                }
                Ready::Run(mut job, call) => {
                    let own = call.line.clone();
                    lane.lend();
                    let result = self.run(&job, call);
                    lane.reclaim();
                    let (next, dropped) = self.executor.leave(own.as_ref());
                    for waiting in dropped {
                        self.drop_waiting(waiting);
                    }
                    if let Some(Waiting { job, mut call }) = next {
                        call.waited = true;
                        ready.push(Ready::Run(job, call));
                    }
                    if job.push(result) {
                        job.finish(&self.server);
                    } else {
                        ready.push(Ready::Job(job));
                    }
                }
            }
        }
    }

    /// Runs a job's steps up to its next call; returns that call when it
    /// got a slot. A job answered, or parked in line, returns nothing.
    fn advance(self: &Arc<Self>, mut job: Box<Job>) -> Option<Ready> {
        loop {
            let Some(step) = job.steps.pop_front() else {
                job.finish(&self.server);
                return None;
            };
            let result = match step {
                Step::Call(plan) => match self.admit(&job, plan) {
                    Ok(call) => {
                        let (tool, cancel) = (call.tool_name().to_owned(), call.cancellation());
                        match self.executor.enter(job, call) {
                            Entered::Run(job, call) => return Some(Ready::Run(job, call)),
                            Entered::Queued(waiting) => {
                                self.server.emit(|| Event::CallQueued { tool, waiting });
                                // Only a waiting call needs the waker; one
                                // cancelled before this runs it at once.
                                self.wake_on_cancel(&cancel);
                                return None;
                            }
                            Entered::Full(back, call, running) => {
                                job = back;
                                let id = call.request_id().clone();
                                let own = call.line.clone();
                                call.refused(self);
                                match own {
                                    // A full line of its own is that
                                    // line's trouble, not the host's: the
                                    // call gets a tool error naming it.
                                    Some(own) => StepResult::Reply(
                                        mcp::tool_error_reply(
                                            &self.server,
                                            job.work.caller.revision,
                                            &id,
                                            &own.full_message(running),
                                        )
                                        .into(),
                                    ),
                                    None => StepResult::QueueFull {
                                        id,
                                        running,
                                        waiting: self.executor.max_waiting,
                                    },
                                }
                            }
                        }
                    }
                    Err(result) => result,
                },
                other => job.quick(other),
            };
            if job.push(result) {
                job.finish(&self.server);
                return None;
            }
        }
    }

    /// Makes a cancellation of a waiting call take it out of the line at
    /// once (and sweeps now if it was cancelled already).
    fn wake_on_cancel(self: &Arc<Self>, cancel: &Cancellation) {
        let weak: Weak<Runtime> = Arc::downgrade(self);
        cancel.on_cancel(Box::new(move || {
            if let Some(runtime) = weak.upgrade() {
                runtime.sweep();
            }
        }));
    }

    /// Answers every cancelled call that waits in line.
    fn sweep(&self) {
        for waiting in self.executor.sweep() {
            self.drop_waiting(waiting);
        }
    }

    /// Answers a call that was cancelled while it waited, and the rest of
    /// its request, running no handler.
    fn drop_waiting(&self, waiting: Waiting) {
        let Waiting { mut job, call } = waiting;
        let result = call.cancelled_while_waiting(self, &job);
        if !job.push(result) {
            // The rest of the request runs here, on whichever thread heard
            // of the cancellation, so none of its calls may run a handler.
            while let Some(step) = job.steps.pop_front() {
                let result = match step {
                    Step::Call(plan) => super::calls::not_run(self, &job, &plan),
                    other => job.quick(other),
                };
                if job.push(result) {
                    break;
                }
            }
        }
        job.finish(&self.server);
    }
}
