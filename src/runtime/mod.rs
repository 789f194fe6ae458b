//! The runtime: everything with threads, locks and clocks that the MCP
//! core describes and cannot do itself — the session table, the call
//! executor (slots, the queue of waiting calls, deadlines, keep-alives,
//! handler invocation, ask-back waits), the stream hub, the timer and the
//! store of resumable streams.
//!
//! The shell hands a request's [`Work`] to [`Runtime::execute`] with the
//! [`Outlet`] its response goes out through. The runtime carries out each
//! step and asks the core to spell the response, which it writes through
//! the outlet itself: a call that has to wait for a slot is parked as data
//! in the queue, and the thread that frees a slot carries it on, so the
//! thread that handed the work over is free at once.

mod calls;
mod executor;
pub(crate) mod hub;
pub(crate) mod resume;
pub(crate) mod signer;
pub(crate) mod table;
pub(crate) mod timer;

use std::collections::VecDeque;
use std::io;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::call::call_link::Gone;
use crate::mcp::{self, Server, Step, StepResult, Work};
use crate::model::http::HttpResponse;

use executor::Executor;
use hub::Hub;
use signer::StateSigner;
use table::SessionEntry;
use timer::{JobId, Timer};

/// Where the response of one POST goes, and the notifications of a call
/// that runs in it. The shell turns the response into an event stream when
/// the first notification (or keep-alive) is sent.
pub(crate) trait Outlet: Send + Sync {
    /// Sends one JSON-RPC message on the request's response stream;
    /// `Err(Gone)` when the client has gone away.
    fn notify(&self, message: &serde_json::Value) -> Result<(), Gone>;

    /// Writes a keep-alive comment, turning the response into an event
    /// stream if it is not one yet and the client accepts one; `Err(Gone)`
    /// when the client has gone away. Never waits behind another write.
    fn keep_alive(&self) -> Result<(), Gone>;

    /// Answers the request now with `message` (as the response, or as the
    /// stream's last event) and closes it: what a call's deadline does while
    /// its handler still runs. Whatever is answered later is dropped.
    fn answer(&self, message: &serde_json::Value);

    /// Writes the request's final response (plain, or as the stream's last
    /// event); dropped when the request was answered already.
    fn finish(&self, response: HttpResponse);

    /// Makes the response stream resumable (stateful revisions): its events
    /// carry ids, it is kept in `entry` for a `GET` with `Last-Event-ID`
    /// from `mcp_session`, and a dropped connection detaches it instead of
    /// cancelling the call. `priming`: open it with an id-only event.
    fn resumable(&self, entry: &Arc<SessionEntry>, mcp_session: &str, priming: bool);

    /// Closes the connection carrying the response stream, asking the
    /// client to reconnect after `retry` and resume; `false` when the stream
    /// is not resumable, has ended, or no connection carries it.
    fn close_connection(&self, retry: Duration) -> bool;
}

/// The thread carrying work, as the shell sees it: a thread that speaks the
/// protocol lends itself to a handler only once another takes its place.
pub(crate) trait Lane {
    /// A handler is about to run on this thread.
    fn lend(&self);
    /// The handler returned.
    fn reclaim(&self);
}

/// A thread that never speaks the protocol (a body reader, the timer, an
/// application thread cancelling a call): it lends nothing.
pub(crate) struct OwnThread;

impl Lane for OwnThread {
    fn lend(&self) {}
    fn reclaim(&self) {}
}

/// The host's runtime: shared by every worker.
pub(crate) struct Runtime {
    /// Shared with the session guards, which name the server and report
    /// to its hook.
    pub(crate) server: Arc<Server>,
    pub(crate) hub: Arc<Hub>,
    timer: Arc<Timer>,
    executor: Executor,
    states: StateSigner,
    config: RuntimeConfig,
}

/// How a runtime is set up: the group of
/// [`HostConfig`](crate::HostConfig) that the runtime reads, held by the
/// config and handed over whole. Each field is named after its setter,
/// where its default and unit are documented.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RuntimeConfig {
    /// [`HostConfig::max_concurrent_calls`](crate::HostConfig::max_concurrent_calls).
    pub(crate) max_concurrent_calls: usize,
    /// [`HostConfig::max_queued_calls`](crate::HostConfig::max_queued_calls).
    pub(crate) max_queued_calls: usize,
    /// [`HostConfig::keep_alive`](crate::HostConfig::keep_alive).
    pub(crate) keep_alive: Duration,
    /// [`HostConfig::call_keep_alive`](crate::HostConfig::call_keep_alive).
    pub(crate) call_keep_alive: Duration,
    /// [`HostConfig::call_timeout`](crate::HostConfig::call_timeout).
    pub(crate) call_timeout: Option<Duration>,
    /// [`HostConfig::report_long_calls`](crate::HostConfig::report_long_calls).
    pub(crate) report_long_calls: Option<Duration>,
}

/// A POST's work in progress: what is left to do, what came of what was
/// done, and where the response goes.
pub(crate) struct Job {
    entry: Arc<SessionEntry>,
    work: Work,
    steps: VecDeque<Step>,
    results: Vec<StepResult>,
    outlet: Arc<dyn Outlet>,
}

impl Job {
    /// Records a step's result; `true` when it ends the request (a halt).
    fn push(&mut self, result: StepResult) -> bool {
        let halted = matches!(
            result,
            StepResult::Revoked | StepResult::QueueFull { .. } | StepResult::Error { .. }
        ) || (matches!(result, StepResult::Cancelled) && !self.work.batch);
        self.results.push(result);
        halted
    }

    /// Carries out a step that needs no handler.
    fn quick(&self, step: Step) -> StepResult {
        match step {
            Step::Reply(reply) => StepResult::Reply(reply),
            Step::Cancel { key, reason } => {
                self.entry.cancel_request(&key, &reason);
                StepResult::Done
            }
            Step::Deliver { id, outcome } => {
                let mcp_session = self.work.caller.session_id.as_deref();
                if self.entry.deliver_answer(&id, mcp_session, outcome) {
                    StepResult::Done
                } else {
                    StepResult::Undelivered(id)
                }
            }
            // Calls are the executor's; a step list never hands one here.
            Step::Call(plan) => StepResult::Error {
                id: plan.request_id,
                error: crate::model::jsonrpc::RpcError::new(
                    crate::model::jsonrpc::INTERNAL_ERROR,
                    "internal error: a call was not run",
                ),
            },
        }
    }

    /// Spells the response and writes it.
    fn finish(mut self, server: &Server) {
        let results = std::mem::take(&mut self.results);
        self.outlet.finish(mcp::finish(server, &self.work, results));
    }
}

impl Runtime {
    /// Starts the hub and timer threads.
    pub(crate) fn start(server: Arc<Server>, config: RuntimeConfig) -> io::Result<Arc<Runtime>> {
        Ok(Arc::new(Runtime {
            server,
            hub: Hub::start(config.keep_alive)?,
            timer: Timer::start()?,
            executor: Executor::new(config.max_concurrent_calls, config.max_queued_calls),
            states: StateSigner::new(),
            config,
        }))
    }

    /// Carries out a POST's work and writes its response through `outlet`
    /// — at once, or, when a call has to wait for a slot, on the thread
    /// that frees one.
    pub(crate) fn execute(
        self: &Arc<Self>,
        entry: &Arc<SessionEntry>,
        mut work: Work,
        outlet: Arc<dyn Outlet>,
        lane: &dyn Lane,
    ) {
        if let Some((mcp_session, priming)) = &work.resumable {
            outlet.resumable(entry, mcp_session, *priming);
        }
        let steps = std::mem::take(&mut work.steps).into();
        let job = Box::new(Job {
            entry: Arc::clone(entry),
            work,
            steps,
            results: Vec::new(),
            outlet,
        });
        self.drive(job, lane);
    }

    /// Runs `job` on the timer thread at `at`; it must be quick.
    pub(crate) fn schedule(&self, at: Instant, job: impl FnOnce() + Send + 'static) -> JobId {
        self.timer.schedule(at, job)
    }

    /// Forgets a scheduled job that has not run yet.
    pub(crate) fn unschedule(&self, job: JobId) {
        self.timer.cancel(job);
    }

    /// Ends every stream and stops the hub and timer threads.
    pub(crate) fn stop(&self) {
        self.hub.stop();
        self.timer.stop();
    }
}
