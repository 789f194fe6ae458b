//! The thread that keeps a layer joined, and the one place its state
//! changes: it connects (in the background, for a started layer), lists
//! the server's tools on its interval and on demand, notices the server
//! gone — a stdio child whose output ended, a refresh or a call that could
//! not reach it — and starts it again. Every change of state is reported
//! ([`Event::ServerStatus`]) and kept for
//! [`McpServerLayer::status`](super::McpServerLayer::status).
//!
//! The story it tells, for every layer alike:
//!
//! - `Connecting`, then `Ready` when the server answered `tools/list`
//!   (its tools join), or `Failed` with the pause before the next
//!   attempt, then `Reconnecting`, … — the pause doubling with each
//!   failure in a row ([`Backoff`]).
//! - Found gone while ready: `Gone`, and one attempt at once, while its
//!   tools stay listed for at most [`RESTART_GRACE`]. Back within it:
//!   `Ready`, and the agent's list never changed. Not back by then:
//!   its tools leave and it is `Reconnecting`; failed: its tools leave and
//!   it is `Failed`, paced as above.
//! - Settings that can never work (a URL its client refuses): once
//!   `Misconfigured`, and no attempt after it.

use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Weak};
use std::thread;
use std::time::{Duration, Instant};

use super::signal::{Signal, Wake};
use super::Inner;
use crate::client::ClientError;
#[cfg(doc)]
use crate::event::Event;
use crate::event::ServerStatus;

/// How often the thread looks whether a stdio child is still there
/// between refreshes: how long a dead server goes unnoticed at most when
/// no call sees it first.
const CHILD_CHECK: Duration = Duration::from_millis(250);

/// How long a server found gone keeps its tools listed while it is
/// started again: long enough for a stdio server that crashed to come
/// back (a Node.js server answers in well under a second), so that the
/// agent's tool list — part of the model's prompt, cached with it — does
/// not change twice for a crash it never needed to hear of; short enough
/// that a server that is not coming back soon does not offer the agent
/// tools that only fail. Calls that come meanwhile wait for the restart.
pub(crate) const RESTART_GRACE: Duration = Duration::from_secs(1);

/// The pauses between attempts to connect.
#[derive(Clone, Copy, Debug)]
pub(super) struct Backoff {
    pub(super) first: Duration,
    pub(super) max: Duration,
}

impl Backoff {
    /// The pause after `failures` failures in a row (from 1).
    pub(super) fn pause(self, failures: u32) -> Duration {
        self.first
            .saturating_mul(1 << failures.saturating_sub(1).min(16))
            .min(self.max)
    }
}

/// Whether a failed `tools/list` means the server is out of reach (so it
/// is gone), rather than that it answered wrong.
fn lost(err: &ClientError) -> bool {
    !matches!(
        err,
        ClientError::Rpc { .. }
            | ClientError::Malformed { .. }
            | ClientError::TooLarge { .. }
            | ClientError::ListingTooLarge { .. }
            | ClientError::InvalidConfig { .. }
            | ClientError::InvalidUrl { .. }
    )
}

/// Whether no attempt can ever succeed: the layer's own settings are
/// refused before anything is reached. Anything else may pass (a server
/// started later, a program installed, a credential renewed).
fn misconfigured(err: &ClientError) -> bool {
    matches!(
        err,
        ClientError::InvalidConfig { .. } | ClientError::InvalidUrl { .. }
    )
}

/// What went wrong, naming the layer's own setting where the client's
/// message names the client's, never the server's URL, and never advice
/// the layer follows itself (a stdio client's "start it again").
pub(super) fn describe(err: &ClientError) -> String {
    match err {
        ClientError::TooLarge { .. } => {
            format!("{err} — for a layer: McpServerBuilder::max_message_bytes")
        }
        // The URL may be a capability URL: status and events never show it.
        ClientError::InvalidUrl { problem, .. } => format!("its URL cannot be used: {problem}"),
        ClientError::Closed { reason } => format!("the server is gone: {reason}"),
        _ => err.to_string(),
    }
}

/// Runs until the layer is dropped: connects unless `ready`, then
/// refreshes every `interval` (and when asked), starting the server again
/// whenever it is found gone.
pub(super) fn supervise(
    layer: &Weak<Inner>,
    signal: &Signal,
    interval: Option<Duration>,
    mut ready: bool,
) {
    // The attempt to come (0: the first connect, shown as `Connecting`)
    // and the failures in a row.
    let (mut attempt, mut failures) = (0u32, 0u32);
    let mut due = interval.map(|every| Instant::now() + every);
    loop {
        if !ready {
            let Some(inner) = layer.upgrade() else { return };
            if attempt > 0 {
                inner.set_status(ServerStatus::Reconnecting { attempt });
            }
            match inner.establish(layer) {
                Ok(()) => {
                    (ready, attempt, failures) = (true, 0, 0);
                    due = interval.map(|every| Instant::now() + every);
                }
                Err(err) => {
                    (attempt, failures) = (attempt + 1, failures + 1);
                    let Some(pause) = fail(&inner, &err, failures) else {
                        return;
                    };
                    drop(inner);
                    if signal.pause(pause) {
                        return;
                    }
                    continue;
                }
            }
        }
        let stdio = layer.upgrade().is_some_and(|inner| inner.http().is_none());
        let now = Instant::now();
        let mut wait = due.map_or(Duration::MAX, |due| due.saturating_duration_since(now));
        if stdio {
            wait = wait.min(CHILD_CHECK);
        }
        let wake = signal.wait(wait);
        let Some(inner) = layer.upgrade() else { return };
        let refresh = match wake {
            Wake::Stopped => return,
            Wake::Wanted => true,
            Wake::Elapsed => due.is_some_and(|due| Instant::now() >= due),
        };
        // A dead child is looked for first: a refresh would only wait for
        // the restart that only this thread makes.
        let gone = match inner.child_gone() {
            Some(reason) => Some(reason),
            None if refresh => {
                due = interval.map(|every| Instant::now() + every);
                match inner.refresh() {
                    Ok(_) => None,
                    Err(err) if lost(&err) => Some(describe(&err)),
                    Err(err) => {
                        inner.note(format!(
                            "MCP server {:?}: could not refresh its tools: {}",
                            inner.name,
                            describe(&err)
                        ));
                        None
                    }
                }
            }
            None => None,
        };
        let Some(reason) = gone else { continue };
        if let Err(err) = rejoin(&inner, layer, reason) {
            // The restart made at once was the first attempt since ready.
            (ready, attempt, failures) = (false, 2, 1);
            let Some(pause) = fail(&inner, &err, failures) else {
                return;
            };
            drop(inner);
            if signal.pause(pause) {
                return;
            }
        }
    }
}

/// Reports a failed attempt (the `failures`-th in a row) and gives the
/// pause before the next one; `None` when the layer is misconfigured and
/// no attempt will follow.
fn fail(inner: &Inner, err: &ClientError, failures: u32) -> Option<Duration> {
    let reason = describe(err);
    if misconfigured(err) {
        inner.set_status(ServerStatus::Misconfigured { reason });
        return None;
    }
    let retry_in = inner.reconnect_backoff.pause(failures);
    inner.set_status(ServerStatus::Failed { reason, retry_in });
    Some(retry_in)
}

/// The server was found gone (`reason`): one attempt to reach it again at
/// once, with its tools listed for up to [`RESTART_GRACE`] meanwhile —
/// then they leave, unless it is back — and taken off the list if it
/// fails. The attempt runs on a thread of its own so that the grace is
/// kept whatever the attempt waits for; the snapshot is changed only
/// here, on the supervisor's thread, so a late answer can never refill a
/// list the grace emptied, nor the other way round.
fn rejoin(inner: &Arc<Inner>, layer: &Weak<Inner>, reason: String) -> Result<(), ClientError> {
    inner.set_status(ServerStatus::Gone { reason });
    inner.forget_connections();
    let (tx, rx) = mpsc::channel();
    let worker = Arc::clone(inner);
    let spawned = thread::Builder::new()
        .name(format!("toolhost-restart-{}", inner.name))
        .spawn(move || {
            let _ = tx.send(worker.reach());
        });
    let reached = match spawned {
        // No thread to spare: the tools stay listed until the attempt ends.
        Err(_) => inner.reach(),
        Ok(_) => match rx.recv_timeout(RESTART_GRACE) {
            Ok(reached) => reached,
            Err(timeout) => {
                if timeout == RecvTimeoutError::Timeout {
                    inner.withdraw();
                    inner.set_status(ServerStatus::Reconnecting { attempt: 1 });
                }
                rx.recv().unwrap_or_else(|_| {
                    Err(ClientError::Closed {
                        reason: "the attempt to start it again ended without an outcome".into(),
                    })
                })
            }
        },
    };
    match reached {
        Ok(listed) => inner.join(listed, layer),
        Err(err) => {
            inner.withdraw();
            Err(err)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_in_a_row_double_the_pause_up_to_its_bound() {
        let backoff = Backoff {
            first: Duration::from_secs(1),
            max: Duration::from_secs(30),
        };
        let pauses: Vec<u64> = (1..=8).map(|n| backoff.pause(n).as_secs()).collect();
        assert_eq!(pauses, [1, 2, 4, 8, 16, 30, 30, 30]);
    }

    #[test]
    fn a_server_that_answered_wrong_is_not_lost_but_one_out_of_reach_is() {
        assert!(!lost(&ClientError::malformed("bad")));
        assert!(!lost(&ClientError::ListingTooLarge {
            server: "the MCP server at 127.0.0.1:1".into(),
            tools: 5,
            bytes: 100,
            pages: 2,
            limit: 4,
            unit: "tools",
            setting: "ClientBuilder::max_listed_tools",
        }));
        assert!(lost(&ClientError::Closed {
            reason: "exited".into()
        }));
        assert!(lost(&ClientError::Timeout {
            waited: Duration::from_secs(1)
        }));
    }

    #[test]
    fn only_settings_refused_before_anything_is_reached_end_the_attempts() {
        let url = ClientError::InvalidUrl {
            url: "http://10.0.0.1/mcp".into(),
            problem: "10.0.0.1 is not a loopback address".into(),
        };
        assert!(misconfigured(&url));
        assert!(
            !describe(&url).contains("10.0.0.1/mcp"),
            "{}",
            describe(&url)
        );
        for transient in [
            ClientError::Closed {
                reason: "exited".into(),
            },
            ClientError::Timeout {
                waited: Duration::from_secs(1),
            },
            ClientError::Spawn {
                program: "absent".into(),
                source: std::io::ErrorKind::NotFound.into(),
            },
        ] {
            assert!(!misconfigured(&transient), "{transient}");
        }
    }

    #[test]
    fn a_gone_server_is_described_without_the_clients_advice_to_start_it_again() {
        let gone = describe(&ClientError::Closed {
            reason: "process 7 exited (signal 9)".into(),
        });
        assert_eq!(gone, "the server is gone: process 7 exited (signal 9)");
        assert!(!gone.contains("start it again"));
    }
}
