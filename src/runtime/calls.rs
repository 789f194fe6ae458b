//! Running a planned tool call: a call slot, admission through the
//! session's gate, the handler's context and its link to the runtime, the
//! deadline and long-call report, the handler itself under
//! `catch_unwind`, and the outcome handed back to the core to spell.
//!
//! A handler runs outside every lock of the host: a panic costs its own
//! call and nothing else.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Map, Value};

use super::hub::Hub;
use super::signer::fingerprint;
use super::table::{CallTicket, SessionEntry};
use super::timer::JobId;
use super::{Outlet, Runtime};
use crate::call::ask::Asking;
use crate::call::context::{CallContext, Talk};
use crate::call::port::{Answer, CallLink, Gone};
use crate::event::{report, Event};
use crate::mcp::{self, CallPlan, Caller, StepResult};
use crate::model::jsonrpc::RpcError;
use crate::model::Tool;

/// The bound on handlers running at once, host-wide. Calls past it are
/// refused at once with a retryable error, so that the workers left over
/// keep answering `ping`, `tools/list` and cancellations however long the
/// handlers run.
#[derive(Debug)]
pub(crate) struct CallSlots {
    running: AtomicUsize,
    max: usize,
}

impl CallSlots {
    pub(crate) fn new(max: usize) -> CallSlots {
        CallSlots {
            running: AtomicUsize::new(0),
            max,
        }
    }

    fn take(&self) -> Result<SlotGuard<'_>, usize> {
        self.running
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                (n < self.max).then_some(n + 1)
            })
            .map(|_| SlotGuard(self))
    }
}

/// A taken call slot; dropping it frees the slot.
struct SlotGuard<'a>(&'a CallSlots);

impl Drop for SlotGuard<'_> {
    fn drop(&mut self) {
        self.0.running.fetch_sub(1, Ordering::SeqCst);
    }
}

/// How a running call reaches the runtime: its outlet, its session's
/// streams and pending questions.
struct Link {
    outlet: Arc<dyn Outlet>,
    entry: Arc<SessionEntry>,
    hub: Arc<Hub>,
    mcp_session: Option<String>,
}

impl CallLink for Link {
    fn send(&self, message: &Value) -> Result<(), Gone> {
        self.outlet.notify(message)
    }

    fn close_connection(&self, retry: Duration) -> bool {
        self.outlet.close_connection(retry)
    }

    fn tools_changed(&self) {
        self.hub.tools_changed(self.entry.locator);
    }

    fn expect_answer(&self, id: &str) -> mpsc::Receiver<Answer> {
        self.entry.expect_answer(id, self.mcp_session.clone())
    }

    fn forget_answer(&self, id: &str) {
        self.entry.forget_answer(id);
    }
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a non-string panic payload".to_owned())
}

impl Runtime {
    /// Runs one planned call to its end.
    pub(super) fn run_call(
        &self,
        entry: &Arc<SessionEntry>,
        caller: &Caller,
        plan: CallPlan,
        outlet: &Arc<dyn Outlet>,
    ) -> StepResult {
        let CallPlan {
            request_id,
            tool,
            arguments,
            progress_token,
            key,
            rounds,
        } = plan;
        let asking = match rounds {
            None => Asking::Stream,
            Some(rounds) => {
                let mut answers = match &rounds.state {
                    None => Map::new(),
                    Some(state) => {
                        let bound = fingerprint(&entry.binding, tool.name(), &arguments);
                        match self.states.open(state, &bound) {
                            Ok(answers) => answers,
                            Err(why) => {
                                return StepResult::Error {
                                    id: request_id,
                                    error: RpcError::invalid_params(format!(
                                        "invalid requestState: {why}"
                                    )),
                                }
                            }
                        }
                    }
                };
                answers.extend(rounds.responses);
                Asking::Rounds {
                    answers,
                    round: Mutex::default(),
                }
            }
        };
        let _slot = match self.slots.take() {
            Ok(slot) => slot,
            Err(running) => {
                return StepResult::Busy {
                    id: request_id,
                    running,
                }
            }
        };
        let Some(ticket) = entry.admit(key) else {
            return StepResult::Revoked;
        };
        let link = Link {
            outlet: Arc::clone(outlet),
            entry: Arc::clone(entry),
            hub: Arc::clone(&self.hub),
            mcp_session: caller.session_id.clone(),
        };
        let started = Instant::now();
        let ctx = CallContext {
            request_id,
            revision: caller.revision,
            client: caller.client.clone(),
            cancel: Arc::clone(&ticket.cancel),
            talk: Some(Talk::new(Arc::new(link), progress_token, caller.log_level)),
            deadline: self.call_timeout.map(|limit| started + limit),
            capabilities: caller.capabilities.clone(),
            asking: Some(asking),
        };
        self.server.emit(|| Event::CallStarted {
            tool: tool.name().to_owned(),
        });
        let watches = self.watch(&tool, &ctx, outlet, &ticket, started);
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            entry.surface.call(tool.name(), &arguments, &ctx)
        }))
        .unwrap_or_else(|payload| {
            crate::model::ToolOutcome::failed(format!(
                "the handler panicked: {}",
                panic_message(&*payload)
            ))
        });
        let outcome = mcp::checked_outcome(&tool, outcome);
        let duration = started.elapsed();
        for job in watches {
            self.timer.cancel(job);
        }
        let cancelled_by_client = ticket.cancel.by_client();
        drop(ticket);
        self.server.emit(|| Event::CallFinished {
            tool: tool.name().to_owned(),
            duration,
            outcome: outcome.result.clone(),
        });
        if cancelled_by_client {
            return StepResult::Cancelled;
        }
        let request_id = ctx.request_id.clone();
        if let Some(round) = ctx.into_round().filter(|round| !round.needed.is_empty()) {
            let bound = fingerprint(&entry.binding, tool.name(), &arguments);
            let state = self.states.sign(&bound, &round.used);
            return StepResult::Reply(mcp::input_required(
                &self.server,
                &request_id,
                round.needed,
                state,
            ));
        }
        StepResult::Reply(mcp::call_reply(&self.server, caller, &request_id, &outcome))
    }

    /// Schedules what happens while a call runs long: at the deadline (when
    /// the host sets one) the call is cancelled and the client answered with
    /// a tool error, although the handler runs on until it returns, holding
    /// its call slot; and, with or without a deadline, a report to the event
    /// hook once the call has run for the reporting threshold. Both run on
    /// the timer thread.
    fn watch(
        &self,
        tool: &Tool,
        ctx: &CallContext,
        outlet: &Arc<dyn Outlet>,
        ticket: &CallTicket,
        started: Instant,
    ) -> Vec<JobId> {
        let mut jobs = Vec::new();
        if let Some(limit) = self.call_timeout {
            let message = mcp::timeout_reply(
                &self.server,
                ctx.revision,
                &ctx.request_id,
                limit.as_millis(),
            );
            let outlet = Arc::downgrade(outlet);
            let cancel = Arc::clone(&ticket.cancel);
            let hook = self.server.hook.clone();
            let name = tool.name().to_owned();
            jobs.push(self.timer.schedule(started + limit, move || {
                let Some(outlet) = outlet.upgrade() else {
                    return;
                };
                cancel.cancel("the call's deadline passed", false);
                outlet.answer(&message);
                if let Some(hook) = hook {
                    report(
                        &hook,
                        &Event::CallTimedOut {
                            tool: name,
                            after: limit,
                        },
                    );
                }
            }));
        }
        if let (Some(after), Some(hook)) = (self.long_call_report, self.server.hook.clone()) {
            let name = tool.name().to_owned();
            jobs.push(self.timer.schedule(started + after, move || {
                report(
                    &hook,
                    &Event::CallRunningLong {
                        tool: name,
                        elapsed: started.elapsed(),
                    },
                );
            }));
        }
        jobs
    }
}
