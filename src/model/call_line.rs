//! A line of calls of its own: the bound for tools whose calls wait on
//! something outside the application — another MCP server above all —
//! kept apart from the host's own call slots.
//!
//! Why a line of its own, checked before the host's slot is taken, rather
//! than a bound inside the handler: a handler that waits on a server that
//! stopped answering holds whatever it took before it started. Were that
//! one of the host's slots ([`HostConfig::max_concurrent_calls`](crate::HostConfig::max_concurrent_calls)),
//! enough calls piled on one hung server would hold them all, and the
//! application's own tools — and every other server's — would wait behind
//! them. A call whose tool has a line takes a slot of that line instead,
//! and waits, when its slots are taken, in that line's queue (as data, not
//! a thread, like the host's queue); it never touches the host's slots or
//! queue. So a hung server costs its own calls their deadline, and
//! nothing else: its line holds at most `max_running` threads and
//! `max_waiting` parked requests. When the server recovers, each call that
//! returns hands its slot to the next one waiting, and the line drains.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// A line of its own for a tool's calls, which the host uses instead of
/// its own slots and queue: at most `max_running` of its calls run at
/// once, at most `max_waiting` wait for a slot (first in, first out), and
/// past that a call is answered at once with a tool error naming the line.
/// With a [`timeout`](CallLine::timeout), each call ends at that deadline,
/// counted from its arrival (waiting included), with a tool error naming
/// the line and the setting, and its handler is cancelled
/// ([`CallContext::is_cancelled`](crate::CallContext::is_cancelled)).
///
/// A tool is given its line with [`Tool::runs_in`](crate::Tool::runs_in),
/// so the line travels with the tool as its visibility does: whatever
/// surface lists the tool, and whatever wraps that surface, the host finds
/// the line on the tool it is about to call. Every tool of an
/// [`McpServerLayer`](crate::McpServerLayer) runs in the layer's line.
/// Clones are the same line (and equal); each host keeps its own count of
/// it.
///
/// ```
/// use std::time::Duration;
/// use toolhost::{CallLine, StaticSurface, Tool};
///
/// // At most 2 calls to the slow backend at once, 16 waiting, 30 s each.
/// let line = CallLine::new("the search backend", 2, 16).timeout(Duration::from_secs(30));
/// assert_eq!(line.max_running(), 2);
/// let surface = StaticSurface::new()
///     .tool(Tool::new("search", "Searches.").runs_in(line.clone()), |_, _| "found")?
///     .tool(Tool::new("suggest", "Suggests.").runs_in(line), |_, _| "try this")?; // one line for both
/// # Ok::<(), toolhost::Error>(())
/// ```
#[derive(Clone)]
pub struct CallLine {
    spec: Arc<Spec>,
}

struct Spec {
    id: u64,
    name: String,
    max_running: usize,
    max_waiting: usize,
    timeout: Option<Duration>,
    /// How the settings are called where the user set them, for messages.
    settings: Settings,
}

/// The names of a line's settings, as its user knows them.
#[derive(Clone, Copy)]
pub(crate) struct Settings {
    pub(crate) running: &'static str,
    pub(crate) waiting: &'static str,
    pub(crate) timeout: &'static str,
}

const OWN_SETTINGS: Settings = Settings {
    running: "the max_running of CallLine::new",
    waiting: "the max_waiting of CallLine::new",
    timeout: "CallLine::timeout",
};

/// Tells lines apart: a host counts each line by its id.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

impl CallLine {
    /// A line named `name` (how its errors and events name it) with at most
    /// `max_running` calls at once (at least 1) and `max_waiting` waiting.
    pub fn new(name: impl Into<String>, max_running: usize, max_waiting: usize) -> CallLine {
        CallLine::named_settings(name.into(), max_running, max_waiting, None, OWN_SETTINGS)
    }

    pub(crate) fn named_settings(
        name: String,
        max_running: usize,
        max_waiting: usize,
        timeout: Option<Duration>,
        settings: Settings,
    ) -> CallLine {
        CallLine {
            spec: Arc::new(Spec {
                id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
                name,
                max_running: max_running.max(1),
                max_waiting,
                timeout,
                settings,
            }),
        }
    }

    /// Gives each call of the line a deadline of `limit` from its arrival.
    #[must_use]
    pub fn timeout(self, limit: Duration) -> CallLine {
        CallLine::named_settings(
            self.spec.name.clone(),
            self.spec.max_running,
            self.spec.max_waiting,
            Some(limit),
            self.spec.settings,
        )
    }

    /// The line's name.
    pub fn name(&self) -> &str {
        &self.spec.name
    }

    /// How many of its calls may run at once.
    pub fn max_running(&self) -> usize {
        self.spec.max_running
    }

    /// How many of its calls may wait for a slot.
    pub fn max_waiting(&self) -> usize {
        self.spec.max_waiting
    }

    /// Each call's deadline, when it has one.
    pub fn call_timeout(&self) -> Option<Duration> {
        self.spec.timeout
    }

    pub(crate) fn id(&self) -> u64 {
        self.spec.id
    }

    /// The tool error for a call refused because the line is full.
    pub(crate) fn full_message(&self, running: usize) -> String {
        let Settings {
            running: running_setting,
            waiting,
            ..
        } = self.spec.settings;
        format!(
            "{} is busy: {running} calls to it are running ({running_setting}) and {} more wait ({waiting}), so this call was not started. Try again later.",
            self.spec.name, self.spec.max_waiting
        )
    }

    /// The tool error for a call past the line's deadline.
    pub(crate) fn timeout_message(&self, limit: Duration) -> String {
        format!(
            "{} did not answer within {limit:?} ({}), so the call was cancelled.",
            self.spec.name, self.spec.settings.timeout
        )
    }
}

/// The same line: a clone, not another line with the same settings.
impl PartialEq for CallLine {
    fn eq(&self, other: &CallLine) -> bool {
        Arc::ptr_eq(&self.spec, &other.spec)
    }
}

impl Eq for CallLine {}

impl fmt::Debug for CallLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallLine")
            .field("name", &self.spec.name)
            .field("max_running", &self.spec.max_running)
            .field("max_waiting", &self.spec.max_waiting)
            .field("timeout", &self.spec.timeout)
            .finish()
    }
}
