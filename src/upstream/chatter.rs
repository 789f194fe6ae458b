//! What a stdio server says beside its answers — the lines it writes to
//! stderr, the log messages that belong to no call — reported to the
//! application's hook at a bounded rate.
//!
//! Each is an event ([`Event::ServerStderr`], [`Event::ServerLog`]), and
//! without a hook an event is a line of the application's log: a server
//! that writes 200,000 lines wrote 200,000 lines there, as fast as it
//! could. So at most [`REPORTED_PER_SECOND`] of them are reported each
//! second, per layer; the rest are counted, and the count is reported in
//! one [`Event::ServerOutputSuppressed`] when their second ends — as
//! refused bearers are (`http/refused.rs`). What the server said last
//! still reaches the error that says it is gone: the client keeps the last
//! lines of its stderr apart from these events.
//!
//! The count's report comes when the second ends even if the server fell
//! silent: the first line counted in a second starts a thread that sleeps
//! to the second's end and reports it (one thread a second at most, and
//! only while a server floods). Should that thread not start, the count
//! is reported with the next second's first line.

use std::sync::{Mutex, Weak};
use std::thread;
use std::time::{Duration, Instant};

use super::Inner;
use crate::event::Event;
use crate::sync::lock;

/// How many of a layer's stderr lines and log messages are reported one by
/// one each second: a server's startup banner or a stack trace (tens of
/// lines) arrives whole, while a flood costs the application's log at most
/// this many lines a second, and one more for the count.
pub(super) const REPORTED_PER_SECOND: u32 = 50;

/// What the server said.
#[derive(Clone, Copy, Debug)]
pub(super) enum Said {
    /// A line of its stderr.
    Stderr,
    /// A log message that belongs to no call.
    Log,
}

/// One layer's rate of reports.
#[derive(Default)]
pub(super) struct Chatter {
    window: Mutex<Window>,
}

/// The current second.
#[derive(Default)]
struct Window {
    /// When it ends; `None` before the first report.
    until: Option<Instant>,
    /// Reported in it.
    reported: u32,
    /// Counted and not reported yet.
    counted: Counted,
}

/// What was counted instead of reported.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Counted {
    stderr_lines: u64,
    log_messages: u64,
}

impl Counted {
    fn is_empty(self) -> bool {
        self == Counted::default()
    }
}

/// Whether one more may be reported.
#[derive(Debug, PartialEq, Eq)]
enum Verdict {
    /// Report it.
    Report,
    /// It was counted; the first counted in its second also asks for the
    /// count's report when the second ends.
    Counted { first: Option<Instant> },
}

impl Chatter {
    /// Counts what the server said at `now`: whether to report it, and
    /// what an earlier second counted that was not reported yet.
    fn admit(&self, said: Said, now: Instant) -> (Verdict, Counted) {
        let mut window = lock(&self.window);
        let mut earlier = Counted::default();
        if window.until.is_none_or(|until| now >= until) {
            earlier = std::mem::take(&mut window.counted);
            window.until = Some(now + Duration::from_secs(1));
            window.reported = 0;
        }
        if window.reported < REPORTED_PER_SECOND {
            window.reported += 1;
            return (Verdict::Report, earlier);
        }
        let first = window.counted.is_empty();
        match said {
            Said::Stderr => window.counted.stderr_lines += 1,
            Said::Log => window.counted.log_messages += 1,
        }
        let first = first.then_some(window.until).flatten();
        (Verdict::Counted { first }, earlier)
    }

    /// What was counted and not reported yet, taken.
    fn take(&self) -> Counted {
        std::mem::take(&mut lock(&self.window).counted)
    }
}

impl Inner {
    /// Reports what the server said (`event`), within the layer's rate.
    pub(super) fn report_chatter(&self, me: &Weak<Inner>, said: Said, event: Event) {
        let (verdict, earlier) = self.chatter.admit(said, Instant::now());
        self.report_counted(earlier);
        match verdict {
            Verdict::Report => self.report_event(event),
            Verdict::Counted { first: Some(end) } => {
                let layer = me.clone();
                // Without the thread, the next second's first line reports
                // the count.
                let _ = thread::Builder::new()
                    .name(format!("toolhost-chatter-{}", self.name))
                    .spawn(move || {
                        thread::sleep(end.saturating_duration_since(Instant::now()));
                        if let Some(layer) = layer.upgrade() {
                            layer.report_counted(layer.chatter.take());
                        }
                    });
            }
            Verdict::Counted { first: None } => {}
        }
    }

    fn report_counted(&self, counted: Counted) {
        if !counted.is_empty() {
            self.report_event(Event::ServerOutputSuppressed {
                server: self.name.clone(),
                stderr_lines: counted.stderr_lines,
                log_messages: counted.log_messages,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn past_the_rate_what_is_said_is_counted_until_the_second_ends() {
        let chatter = Chatter::default();
        let start = Instant::now();
        for _ in 0..REPORTED_PER_SECOND {
            assert_eq!(
                chatter.admit(Said::Stderr, start),
                (Verdict::Report, Counted::default())
            );
        }
        let end = start + Duration::from_secs(1);
        assert_eq!(
            chatter.admit(Said::Log, start),
            (Verdict::Counted { first: Some(end) }, Counted::default())
        );
        assert_eq!(
            chatter.admit(Said::Stderr, start + Duration::from_millis(999)),
            (Verdict::Counted { first: None }, Counted::default())
        );
        // The next second reports again, and hands over what was counted.
        assert_eq!(
            chatter.admit(Said::Stderr, end),
            (
                Verdict::Report,
                Counted {
                    stderr_lines: 1,
                    log_messages: 1
                }
            )
        );
        assert!(chatter.take().is_empty(), "handed over once");
    }

    #[test]
    fn the_event_states_the_rate_the_code_sets() {
        let doc = include_str!("../event.rs");
        assert!(doc.contains(&format!("({REPORTED_PER_SECOND} a second per server")));
        let layer = include_str!("mod.rs");
        assert!(layer.contains(&format!("together at most {REPORTED_PER_SECOND} a second,")));
    }
}
