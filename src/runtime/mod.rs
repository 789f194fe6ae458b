//! The runtime: everything with threads, locks and clocks that the MCP
//! core describes and cannot do itself — the session table, running
//! handlers (call slots, deadlines, cancellation, ask-back waits), the
//! stream hub, the timer and the store of resumable streams.
//!
//! The shell hands a request's [`Plan`](crate::mcp::Plan) of work to
//! [`Runtime::execute`], with the [`Outlet`] the response goes out through;
//! the runtime carries out each step and asks the core to spell the
//! response.

mod calls;
pub(crate) mod hub;
pub(crate) mod resume;
mod signer;
pub(crate) mod table;
mod timer;

use std::io;
use std::sync::Arc;
use std::time::Duration;

use crate::call::port::Gone;
use crate::mcp::{self, Server, Step, StepResult, Work};
use crate::model::http::HttpResponse;

pub(crate) use calls::CallSlots;
use hub::Hub;
use signer::StateSigner;
use table::SessionEntry;
use timer::Timer;

/// Where the response of one POST goes, and the notifications of a call
/// that runs in it. The shell turns the response into an event stream when
/// the first notification is sent.
pub(crate) trait Outlet: Send + Sync {
    /// Sends one JSON-RPC message on the request's response stream;
    /// `Err(Gone)` when the client has gone away.
    fn notify(&self, message: &serde_json::Value) -> Result<(), Gone>;

    /// Answers the request now with `message` (as the response, or as the
    /// stream's last event) and closes it: what a call's deadline does while
    /// its handler still runs. Whatever is answered later is dropped.
    fn answer(&self, message: &serde_json::Value);

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

/// The host's runtime: shared by every worker.
pub(crate) struct Runtime {
    pub(crate) server: Server,
    pub(crate) hub: Arc<Hub>,
    timer: Arc<Timer>,
    slots: CallSlots,
    states: StateSigner,
    call_timeout: Option<Duration>,
    long_call_report: Option<Duration>,
}

/// How a runtime is set up.
pub(crate) struct RuntimeConfig {
    pub(crate) max_concurrent_calls: usize,
    pub(crate) keep_alive: Duration,
    pub(crate) call_timeout: Option<Duration>,
    pub(crate) long_call_report: Option<Duration>,
}

impl Runtime {
    /// Starts the hub and timer threads.
    pub(crate) fn start(server: Server, config: &RuntimeConfig) -> io::Result<Runtime> {
        Ok(Runtime {
            server,
            hub: Hub::start(config.keep_alive)?,
            timer: Timer::start()?,
            slots: CallSlots::new(config.max_concurrent_calls),
            states: StateSigner::new(),
            call_timeout: config.call_timeout,
            long_call_report: config.long_call_report,
        })
    }

    /// Carries out a POST's work and returns its response.
    pub(crate) fn execute(
        &self,
        entry: &Arc<SessionEntry>,
        work: &mut Work,
        outlet: &Arc<dyn Outlet>,
    ) -> HttpResponse {
        if let Some((mcp_session, priming)) = &work.resumable {
            outlet.resumable(entry, mcp_session, *priming);
        }
        let mut results = Vec::with_capacity(work.steps.len());
        let mcp_session = work.caller.session_id.clone();
        for step in std::mem::take(&mut work.steps) {
            let result = match step {
                Step::Reply(reply) => StepResult::Reply(reply),
                Step::Call(plan) => self.run_call(entry, &work.caller, plan, outlet),
                Step::Cancel { key, reason } => {
                    entry.cancel_request(&key, &reason);
                    StepResult::Done
                }
                Step::Deliver { id, outcome } => {
                    if entry.deliver_answer(&id, mcp_session.as_deref(), outcome) {
                        StepResult::Done
                    } else {
                        StepResult::Undelivered(id)
                    }
                }
            };
            // A halted call ends the whole request, as the core answers it.
            let halted = matches!(
                result,
                StepResult::Revoked | StepResult::Busy { .. } | StepResult::Error { .. }
            ) || (matches!(result, StepResult::Cancelled) && !work.batch);
            results.push(result);
            if halted {
                break;
            }
        }
        mcp::finish(&self.server, work, results)
    }

    /// Ends every stream and stops the hub and timer threads.
    pub(crate) fn stop(&self) {
        self.hub.stop();
        self.timer.stop();
    }
}
