//! One planned tool call, from admission to its answer: the session's
//! gate, the handler's context and its link to the runtime, the watches
//! that run beside it (deadline, long-call report) and its session's
//! keep-alive round for a quiet call, the handler itself under
//! `catch_unwind`, and the outcome handed back to the core to spell.
//!
//! A handler runs outside every lock of the host: a panic costs its own
//! call and nothing else. Its watches and keep-alives start at admission,
//! so time spent waiting for a slot counts towards the deadline, and a
//! waiting call's client is kept alive (and noticed gone) like a running
//! one's.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{mpsc, Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use serde_json::{Map, Value};

use super::hub::Hub;
use super::signer::{fingerprint, Opened};
use super::table::{Beat, CallTicket, Round, SessionEntry};
use super::timer::{JobId, Timer};
use super::{Job, Outlet, Runtime};
use crate::call::ask::{self, Asking};
use crate::call::call_link::{Answer, CallLink, Cancellation, Gone};
use crate::call::context::{CallContext, Talk};
use crate::call::panic_message;
use crate::event::{emit, heard, Event};
use crate::mcp::{self, CallPlan, StepResult};
use crate::model::jsonrpc::RpcError;
use crate::model::CallLine;
use crate::model::{OutcomeKind, Tool, ToolOutcome};
use crate::sync::lock;

/// How a running call reaches the runtime: its outlet, its session's
/// streams and pending questions.
struct Link {
    outlet: Arc<dyn Outlet>,
    entry: Arc<SessionEntry>,
    hub: Arc<Hub>,
    mcp_session: Option<String>,
    questions: Questions,
}

/// The ids of the questions a call has sent on its stream and not yet
/// forgotten: shared with its deadline, which abandons them before it
/// answers the call. Held while a question or its cancellation is written,
/// so that a question never follows the call's answer unannounced, nor its
/// cancellation precedes it.
type Questions = Arc<Mutex<Vec<String>>>;

/// Forgets the open questions (`only` that one, when given), telling the
/// client of each it has not answered yet that it is abandoned, and why.
fn abandon_questions(
    open: &mut Vec<String>,
    only: Option<&str>,
    entry: &SessionEntry,
    outlet: &dyn Outlet,
    reason: &str,
) {
    open.retain(|id| {
        if only.is_some_and(|only| only != id) {
            return true;
        }
        // `false` when the client's answer came first: nothing to cancel.
        if entry.forget_answer(id) {
            let _ = outlet.notify(&ask::abandoned_notice(id, reason));
        }
        false
    });
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
        lock(&self.questions).retain(|open| open != id);
    }

    fn ask(&self, id: &str, message: &Value) -> Result<(), Gone> {
        let mut open = lock(&self.questions);
        self.outlet.notify(message)?;
        open.push(id.to_owned());
        Ok(())
    }

    fn abandon(&self, id: &str, reason: &str) {
        let mut open = lock(&self.questions);
        if open.iter().any(|open| open == id) {
            abandon_questions(&mut open, Some(id), &self.entry, &*self.outlet, reason);
        } else {
            self.entry.forget_answer(id);
        }
    }
}

/// An admitted call: registered with its session (so it can be
/// cancelled), watched, and ready to run once it has a slot.
pub(super) struct Admitted {
    tool: Tool,
    arguments: Value,
    ticket: CallTicket,
    ctx: CallContext,
    admitted_at: Instant,
    /// Whether it waited in line for its slot.
    pub(super) waited: bool,
    /// The line of its own it runs in, instead of the host's slots.
    pub(super) line: Option<CallLine>,
    _watch: Option<Watch>,
}

impl Admitted {
    pub(super) fn is_cancelled(&self) -> bool {
        self.ticket.cancel.is_cancelled()
    }

    pub(super) fn cancellation(&self) -> Arc<Cancellation> {
        Arc::clone(&self.ticket.cancel)
    }

    pub(super) fn tool_name(&self) -> &str {
        self.tool.name()
    }

    pub(super) fn request_id(&self) -> &Value {
        &self.ctx.request_id
    }

    /// The line was full: the call ends here, its watches with it.
    pub(super) fn refused(self, runtime: &Runtime) {
        let tool = self.tool.name().to_owned();
        runtime.server.emit(|| Event::CallRefused { tool });
    }

    /// The answer to a call cancelled while it waited: none when the client
    /// cancelled it, else a tool error that says why it never ran.
    pub(super) fn cancelled_while_waiting(self, runtime: &Runtime, job: &Job) -> StepResult {
        let reason = self.ticket.cancel.reason().unwrap_or_default();
        runtime.server.emit(|| Event::CallAbandoned {
            tool: self.tool.name().to_owned(),
            reason: reason.clone(),
        });
        if self.ticket.cancel.by_client() {
            return StepResult::Cancelled;
        }
        StepResult::Reply(
            mcp::not_run_reply(
                &runtime.server,
                job.work.caller.revision,
                &self.ctx.request_id,
                &reason,
            )
            .into(),
        )
    }
}

/// The answer to a call of a request whose earlier call was cancelled while
/// it waited: it is not run either.
pub(super) fn not_run(runtime: &Runtime, job: &Job, plan: &CallPlan) -> StepResult {
    StepResult::Reply(
        mcp::not_run_reply(
            &runtime.server,
            job.work.caller.revision,
            &plan.request_id,
            "an earlier call of the same request was cancelled before it started",
        )
        .into(),
    )
}

/// A call's deadline: the host's [`call_timeout`](crate::HostConfig::call_timeout)
/// or its line's, whichever is shorter, and the line when it is the line's
/// (whose tool error then names the line and its setting).
struct Deadline {
    limit: Duration,
    line: Option<CallLine>,
}

impl Deadline {
    fn of(host: Option<Duration>, line: Option<&CallLine>) -> Option<Deadline> {
        let own = line.and_then(|line| Some((line.call_timeout()?, line)));
        match (host, own) {
            (Some(host), Some((own, _))) if host <= own => Some(Deadline {
                limit: host,
                line: None,
            }),
            (_, Some((own, line))) => Some(Deadline {
                limit: own,
                line: Some(line.clone()),
            }),
            (host, None) => host.map(|limit| Deadline { limit, line: None }),
        }
    }
}

/// The timer jobs that run beside a call (its deadline, its long-call
/// report); cancelled when the call ends, so a finished call leaves none
/// behind. Keep-alives are not among them: a session's calls share one
/// round (see [`Runtime::keep_alive_round`]).
struct Watch {
    timer: Arc<Timer>,
    jobs: Vec<JobId>,
}

impl Drop for Watch {
    fn drop(&mut self) {
        for job in self.jobs.drain(..) {
            self.timer.cancel(job);
        }
    }
}

impl Runtime {
    /// Admits a planned call: opens its 2026-07-28 rounds, registers it with
    /// its session, builds its context and starts its watches.
    pub(super) fn admit(&self, job: &Job, plan: CallPlan) -> Result<Box<Admitted>, StepResult> {
        let CallPlan {
            request_id,
            tool,
            arguments,
            progress_token,
            key,
            rounds,
        } = plan;
        let entry = &job.entry;
        let asking = match rounds {
            None => Asking::Stream,
            Some(rounds) => {
                let refuse = |why: String| StepResult::Error {
                    id: request_id.clone(),
                    error: RpcError::invalid_params(why),
                };
                let opened = match &rounds.state {
                    None => Opened {
                        answers: Map::new(),
                        asked: Vec::new(),
                    },
                    Some(state) => {
                        let bound = fingerprint(&entry.binding, tool.name(), &arguments);
                        self.states
                            .open(state, &bound, &entry.spent)
                            .map_err(|why| refuse(format!("invalid requestState: {why}")))?
                    }
                };
                // An answer counts only for a question the signed round
                // asked: without this, a retry could answer a question
                // nobody asked, or one without any state at all. Any other
                // key is ignored, not refused: SEP-2322 has servers ignore
                // what they do not recognise, and an ignored answer is
                // simply asked for again if the tool needs it.
                let Opened { mut answers, asked } = opened;
                for (key, response) in rounds.responses {
                    if asked.contains(&key) {
                        answers.entry(key).or_insert(response);
                    }
                }
                Asking::Rounds {
                    answers,
                    round: Mutex::default(),
                }
            }
        };
        let admitted_at = Instant::now();
        let beat_at = admitted_at + self.config.call_keep_alive;
        let ticket = entry
            .admit(key, Arc::downgrade(&job.outlet), beat_at)
            .ok_or(StepResult::Revoked)?;
        if ticket.schedule {
            self.keep_alive_round(Arc::downgrade(entry), beat_at);
        }
        // The tool's own: whatever wraps the surface passes it on with the
        // tool, as it does the tool's visibility.
        let line = tool.call_line().cloned();
        let deadline = Deadline::of(self.config.call_timeout, line.as_ref());
        let caller = &job.work.caller;
        let questions = Questions::default();
        let link = Link {
            outlet: Arc::clone(&job.outlet),
            entry: Arc::clone(entry),
            hub: Arc::clone(&self.hub),
            mcp_session: caller.session_id.clone(),
            questions: Arc::clone(&questions),
        };
        let ctx = CallContext {
            request_id,
            revision: caller.revision,
            client: caller.client.clone(),
            cancel: Arc::clone(&ticket.cancel),
            talk: Some(Talk::new(Arc::new(link), progress_token, caller.log_level)),
            deadline: deadline
                .as_ref()
                .map(|deadline| admitted_at + deadline.limit),
            capabilities: caller.capabilities.clone(),
            asking: Some(asking),
        };
        let watch = self.watch(
            &tool,
            deadline,
            &ctx,
            (&job.outlet, entry, &questions),
            &ticket.cancel,
            admitted_at,
        );
        Ok(Box::new(Admitted {
            tool,
            arguments,
            ticket,
            ctx,
            admitted_at,
            waited: false,
            line,
            _watch: watch,
        }))
    }

    /// Runs an admitted call's handler, which holds a slot, to its end.
    pub(super) fn run(&self, job: &Job, call: Box<Admitted>) -> StepResult {
        let Admitted {
            tool,
            arguments,
            ticket,
            ctx,
            admitted_at,
            waited,
            line: _,
            _watch,
        } = *call;
        let entry = &job.entry;
        if waited {
            let waited = admitted_at.elapsed();
            let tool = tool.name().to_owned();
            self.server.emit(|| Event::CallWaited { tool, waited });
        }
        entry.served();
        self.server.emit(|| Event::CallStarted {
            tool: tool.name().to_owned(),
        });
        // Timed only for a listener: a clock read is a noticeable share of
        // a quick call.
        let started = heard(self.server.on_event.as_ref(), log::Level::Error).then(Instant::now);
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            entry.surface.call(tool.name(), &arguments, &ctx)
        }))
        .unwrap_or_else(|payload| {
            ToolOutcome::failed(format!(
                "the handler panicked: {}",
                panic_message(&*payload)
            ))
        });
        let outcome = mcp::checked_outcome(&tool, outcome).why_cancelled(|| ticket.cancel.reason());
        let duration = started.map(|at| at.elapsed()).unwrap_or_default();
        drop(_watch);
        if outcome.kind() == OutcomeKind::Cancelled {
            entry.served_cancelled();
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
            let asked = round.needed.iter().map(|(key, _)| key.as_str());
            let state = self.states.sign(&bound, &round.used, asked);
            return StepResult::Reply(
                mcp::input_required(&self.server, &request_id, round.needed, state).into(),
            );
        }
        let caller = &job.work.caller;
        StepResult::Reply(mcp::call_reply(&self.server, caller, &request_id, &outcome))
    }

    /// Starts what runs beside a call: at the deadline (when the host sets
    /// one) the questions the call still waits on are cancelled, the call
    /// is cancelled and the client answered with a tool error,
    /// although a running handler runs on until it returns, holding its
    /// slot; and a report to the event hook once the call has run for the
    /// reporting threshold. `None` when neither applies, which is the
    /// common case and costs nothing.
    fn watch(
        &self,
        tool: &Tool,
        deadline: Option<Deadline>,
        ctx: &CallContext,
        (outlet, entry, questions): (&Arc<dyn Outlet>, &Arc<SessionEntry>, &Questions),
        cancel: &Arc<Cancellation>,
        admitted_at: Instant,
    ) -> Option<Watch> {
        let mut jobs = Vec::new();
        if let Some(Deadline { limit, line }) = deadline {
            let message = match line {
                Some(line) => mcp::tool_error_reply(
                    &self.server,
                    ctx.revision,
                    &ctx.request_id,
                    &line.timeout_message(limit),
                ),
                None => mcp::timeout_reply(
                    &self.server,
                    ctx.revision,
                    &ctx.request_id,
                    limit.as_millis(),
                ),
            };
            let outlet = Arc::downgrade(outlet);
            let entry = Arc::clone(entry);
            let questions = Arc::clone(questions);
            let cancel = Arc::clone(cancel);
            let hook = self.server.on_event.clone();
            let name = tool.name().to_owned();
            jobs.push(self.timer.schedule(admitted_at + limit, move || {
                let Some(outlet) = outlet.upgrade() else {
                    return;
                };
                // Reported, answered, then cancelled: the hook hears of it
                // first, the client reads why its call ended (after the
                // cancellation of each question it was still asked, which
                // could not follow the answer), and a waiting call then
                // leaves the line with its answer already given.
                emit(hook.as_ref(), || Event::CallTimedOut {
                    tool: name,
                    after: limit,
                });
                let mut open = lock(&questions);
                abandon_questions(&mut open, None, &entry, &*outlet, ask::DEADLINE_PASSED);
                outlet.answer(&message);
                drop(open);
                cancel.cancel("the call's deadline passed", false);
            }));
        }
        let long_call_report = self
            .config
            .report_long_calls
            .filter(|_| heard(self.server.on_event.as_ref(), log::Level::Warn));
        if let Some(after) = long_call_report {
            let hook = self.server.on_event.clone();
            let name = tool.name().to_owned();
            jobs.push(self.timer.schedule(admitted_at + after, move || {
                emit(hook.as_ref(), || Event::CallRunningLong {
                    tool: name,
                    elapsed: admitted_at.elapsed(),
                });
            }));
        }
        (!jobs.is_empty()).then(|| Watch {
            timer: Arc::clone(&self.timer),
            jobs,
        })
    }

    /// Runs a session's keep-alive round at `at`, and the next one after it
    /// while the session has calls in flight. A round writes a keep-alive
    /// comment to each call that has been quiet for the interval (turning
    /// its response into an event stream), which is how a client that left
    /// is noticed even by a handler that sends nothing; a write that finds
    /// the client gone cancels the call as the revision says (at once in
    /// 2026-07-28; in the stateful revisions only once the resume window
    /// has passed).
    ///
    /// One round per session, not a timer job per call: nearly every call
    /// ends within microseconds, and scheduling and cancelling a job for
    /// each cost a busy host more than the rest of the call's bookkeeping.
    /// The round runs when the earliest call is due (rounds at least a
    /// sixteenth of the interval apart), so each call is still kept alive
    /// one interval after it was admitted and then every interval, at most
    /// a sixteenth of it late.
    fn keep_alive_round(&self, session: Weak<SessionEntry>, at: Instant) {
        let timer = Arc::clone(&self.timer);
        let every = self.config.call_keep_alive;
        self.timer
            .schedule(at, move || round(&timer, session, every));
    }
}

/// One keep-alive round of `session` (see [`Runtime::keep_alive_round`]).
fn round(timer: &Arc<Timer>, session: Weak<SessionEntry>, every: Duration) {
    let Some(entry) = session.upgrade() else {
        return;
    };
    let Round { due, next } = entry.round(Instant::now(), every);
    drop(entry);
    if let Some(at) = next {
        let again = Arc::clone(timer);
        timer.schedule(at, move || round(&again, session, every));
    }
    for Beat { outlet, cancel } in due {
        let Some(outlet) = outlet.upgrade() else {
            continue;
        };
        if let Err(Gone(reason)) = outlet.keep_alive() {
            cancel.cancel(reason, true);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shorter_deadline_wins_and_a_lines_names_the_line() {
        let secs = Duration::from_secs;
        let line = CallLine::new("the backend", 1, 1).timeout(secs(5));
        let plain = CallLine::new("the other", 1, 1);
        let of = |host, line| Deadline::of(host, line).map(|d| (d.limit, d.line.is_some()));
        assert_eq!(of(None, None), None);
        assert_eq!(of(None, Some(&plain)), None);
        assert_eq!(of(Some(secs(9)), Some(&plain)), Some((secs(9), false)));
        assert_eq!(of(Some(secs(9)), Some(&line)), Some((secs(5), true)));
        assert_eq!(of(Some(secs(3)), Some(&line)), Some((secs(3), false)));
        assert_eq!(of(None, Some(&line)), Some((secs(5), true)));
    }
}
