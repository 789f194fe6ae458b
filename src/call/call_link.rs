//! The one narrow port through which a running call reaches the runtime:
//! its response stream, its session's tool-list announcements, and the
//! answers to questions it sends the client.
//!
//! The handler side knows nothing else of the runtime — no session table,
//! no stream hub, no socket — so a context can be built over any link,
//! including one a unit test writes.

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Mutex};
use std::time::Duration;

use serde_json::Value;

use crate::sync::lock;

/// The client has gone: why, as the call's cancellation reason.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Gone(pub(crate) &'static str);

impl Gone {
    /// A stream that cannot be resumed lost its connection.
    pub(crate) const CLOSED: Gone = Gone("the client closed the response stream");
    /// A resumable stream's client stayed away past the resume window.
    pub(crate) const AWAY: Gone =
        Gone("the client lost the response stream and did not reconnect within the resume window");
}

/// A client's answer to a question: its `result`, or its `error`.
pub(crate) type Answer = Result<Value, Value>;

/// What a call may ask of the runtime while its handler runs.
pub(crate) trait CallLink: Send + Sync {
    /// Sends one JSON-RPC message on the call's response stream (the first
    /// one turns the response into an event stream); `Err(Gone)` when the
    /// client has gone away.
    fn send(&self, message: &Value) -> Result<(), Gone>;

    /// Closes the connection carrying the response stream, asking the
    /// client to resume after `retry`; `false` when it cannot be resumed.
    fn close_connection(&self, retry: Duration) -> bool;

    /// Announces that the session's tool list changed.
    fn tools_changed(&self);

    /// Starts waiting for the answer to request `id`, sent to the client
    /// on this call's stream.
    fn expect_answer(&self, id: &str) -> mpsc::Receiver<Answer>;

    /// Stops waiting for the answer to request `id`.
    fn forget_answer(&self, id: &str);

    /// Sends question `id` (a JSON-RPC request, its answer already
    /// expected) on the call's stream; it stays open until it is answered
    /// and forgotten, or abandoned. `Err(Gone)` when the client has gone
    /// away.
    fn ask(&self, id: &str, message: &Value) -> Result<(), Gone>;

    /// Gives question `id` up before its answer: when it is still open on
    /// the call's stream, the client is told (`notifications/cancelled`
    /// with `reason`), since MCP lets the sender of a request cancel it;
    /// and its answer is no longer waited for, so a late one is refused
    /// like an unknown id.
    fn abandon(&self, id: &str, reason: &str);
}

/// Called once when a call is cancelled: how the runtime hears of it
/// while the call waits for a slot.
pub(crate) type Waker = Box<dyn FnOnce() + Send>;

/// The cancellation flag of one call, shared between the handler's context
/// and whoever may cancel it.
#[derive(Default)]
pub(crate) struct Cancellation {
    flag: AtomicBool,
    /// Whether the client itself cancelled: then its result is not sent.
    by_client: AtomicBool,
    reason: Mutex<Option<String>>,
    /// What runs at the cancellation: the runtime's (to take a waiting
    /// call out of line) and a bridge's (to cancel the forwarded call).
    wakers: Mutex<Vec<Waker>>,
}

impl fmt::Debug for Cancellation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Cancellation")
            .field("cancelled", &self.is_cancelled())
            .field("by_client", &self.by_client())
            .finish_non_exhaustive()
    }
}

impl Cancellation {
    /// Flags the call; the first reason given is kept. Runs the wakers, if
    /// any are set, on this thread — so no caller may hold a lock the
    /// runtime takes when it hears of the cancellation.
    pub(crate) fn cancel(&self, reason: &str, by_client: bool) {
        {
            let mut slot = lock(&self.reason);
            if slot.is_none() {
                *slot = Some(reason.to_owned());
                self.by_client.store(by_client, Ordering::SeqCst);
            }
            self.flag.store(true, Ordering::SeqCst);
        }
        let wakers = std::mem::take(&mut *lock(&self.wakers));
        for wake in wakers {
            wake();
        }
    }

    /// Adds what to run when the call is cancelled; runs it at once when
    /// the call already is.
    pub(crate) fn on_cancel(&self, wake: Waker) {
        lock(&self.wakers).push(wake);
        if self.is_cancelled() {
            let wakers = std::mem::take(&mut *lock(&self.wakers));
            for wake in wakers {
                wake();
            }
        }
    }

    pub(crate) fn is_cancelled(&self) -> bool {
        self.flag.load(Ordering::SeqCst)
    }

    pub(crate) fn by_client(&self) -> bool {
        self.by_client.load(Ordering::SeqCst)
    }

    pub(crate) fn reason(&self) -> Option<String> {
        lock(&self.reason).clone()
    }
}
