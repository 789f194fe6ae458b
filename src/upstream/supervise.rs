//! The thread that keeps a layer joined: it connects (in the background,
//! for a started layer), lists the server's tools on its interval and on
//! demand, notices the server gone — a refresh that cannot reach it, a
//! stdio child whose output ended — and then takes the tools off the list
//! and connects again, after a pause that doubles with each failure in a
//! row. Every change of state is reported ([`Event::ServerStatus`]) and
//! kept for [`McpServerLayer::status`](super::McpServerLayer::status).

use std::sync::Weak;
use std::time::{Duration, Instant};

use super::signal::{Signal, Wake};
use super::Inner;
use crate::client::ClientError;
#[cfg(doc)]
use crate::event::Event;
use crate::event::ServerStatus;

/// How often the thread looks whether a stdio child is still there
/// between refreshes: how long a dead server's tools stay listed at most.
const CHILD_CHECK: Duration = Duration::from_millis(250);

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

/// Whether a failed `tools/list` means the server is out of reach (so its
/// tools leave), rather than that it answered wrong.
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

/// What went wrong, naming the layer's own setting where the client's
/// message names the client's, and never the server's URL.
fn describe(err: &ClientError) -> String {
    match err {
        ClientError::TooLarge { .. } => {
            format!("{err} — for a layer: McpServerBuilder::max_message_bytes")
        }
        // The URL may be a capability URL: status and events never show it.
        ClientError::InvalidUrl { problem, .. } => format!("its URL cannot be used: {problem}"),
        _ => err.to_string(),
    }
}

/// Runs until the layer is dropped: connects unless `ready`, then
/// refreshes every `interval` (and when asked), reconnecting whenever the
/// server is found gone.
pub(super) fn supervise(
    layer: &Weak<Inner>,
    signal: &Signal,
    interval: Option<Duration>,
    mut ready: bool,
) {
    // Attempts since the layer was last ready, and failures among them.
    let (mut attempts, mut failures) = (0u32, 0u32);
    let mut tried = ready;
    let mut due = interval.map(|every| Instant::now() + every);
    loop {
        if !ready {
            let Some(inner) = layer.upgrade() else { return };
            if tried {
                attempts += 1;
                inner.set_status(ServerStatus::Reconnecting { attempt: attempts });
            }
            match inner.establish(layer) {
                Ok(()) => {
                    (ready, tried, attempts, failures) = (true, true, 0, 0);
                    due = interval.map(|every| Instant::now() + every);
                }
                Err(err) => {
                    failures += 1;
                    let retry_in = inner.reconnect_backoff.pause(failures);
                    inner.set_status(ServerStatus::Failed {
                        reason: describe(&err),
                        retry_in,
                    });
                    tried = true;
                    drop(inner);
                    if signal.pause(retry_in) {
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
        if !refresh {
            if let Some(reason) = inner.child_gone() {
                ready = rejoin(&inner, layer, reason);
            }
            continue;
        }
        due = interval.map(|every| Instant::now() + every);
        match inner.refresh() {
            Ok(_) => {}
            Err(err) if lost(&err) => ready = rejoin(&inner, layer, describe(&err)),
            Err(err) => inner.report(format!(
                "MCP server {:?}: could not refresh its tools: {}",
                inner.name,
                describe(&err)
            )),
        }
    }
}

/// The server was found gone (`reason`): one attempt to connect again at
/// once — a stdio server that crashed after serving is back before an
/// agent notices, its tools never off the list — and only when that fails
/// do its tools leave. `true` when it is back.
fn rejoin(inner: &Inner, layer: &Weak<Inner>, reason: String) -> bool {
    inner.report(format!(
        "MCP server {:?} is gone ({reason}); connecting again",
        inner.name
    ));
    match inner.establish(layer) {
        Ok(()) => true,
        Err(err) => {
            inner.leave(format!(
                "{reason}; connecting again failed: {}",
                describe(&err)
            ));
            false
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
}
