//! What a handler knows about the call it is serving.
//!
//! A [`CallContext`] is handed to every handler. It is how a blocking handler
//! learns who called, in which revision, and whether the caller has gone away
//! (the session guard was dropped or the host shut down), so that long work
//! can stop early.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::Value;

use crate::mcp::Revision;
use crate::session::lock;

/// The context of one tool call.
///
/// ```
/// use toolhost::{CallContext, ToolOutcome};
///
/// fn slow(_args: &serde_json::Value, ctx: &CallContext) -> ToolOutcome {
///     for _step in 0..100 {
///         if ctx.is_cancelled() {
///             return ToolOutcome::declined("cancelled");
///         }
///         // … one step of work …
///     }
///     ToolOutcome::text("done")
/// }
/// # let _ = slow;
/// ```
#[derive(Debug)]
pub struct CallContext {
    request_id: Value,
    revision: Revision,
    client: Option<ClientInfo>,
    cancel: Arc<Cancellation>,
}

/// The client's self-description from `initialize` (`clientInfo`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientInfo {
    /// The client's name, for example `claude-code`.
    pub name: String,
    /// The client's version string.
    pub version: String,
}

impl CallContext {
    pub(crate) fn new(
        request_id: Value,
        revision: Revision,
        client: Option<ClientInfo>,
        cancel: Arc<Cancellation>,
    ) -> CallContext {
        CallContext {
            request_id,
            revision,
            client,
            cancel,
        }
    }

    /// The JSON-RPC id of the `tools/call` request.
    pub fn request_id(&self) -> &Value {
        &self.request_id
    }

    /// The protocol revision the client speaks.
    pub fn revision(&self) -> Revision {
        self.revision
    }

    /// The client's name and version, when it sent them.
    pub fn client(&self) -> Option<&ClientInfo> {
        self.client.as_ref()
    }

    /// Whether the call's result is no longer wanted: the session guard was
    /// dropped or the host is shutting down. A handler doing long work should
    /// check this between steps and return early.
    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    /// Why the call was cancelled, once it is.
    pub fn cancelled_reason(&self) -> Option<String> {
        self.cancel.reason()
    }
}

/// The cancellation flag of one call, shared between the handler's context
/// and whoever may cancel it.
#[derive(Debug, Default)]
pub(crate) struct Cancellation {
    flag: AtomicBool,
    reason: Mutex<Option<String>>,
}

impl Cancellation {
    /// Flags the call; the first reason given is kept.
    pub(crate) fn cancel(&self, reason: &str) {
        let mut slot = lock(&self.reason);
        if slot.is_none() {
            *slot = Some(reason.to_owned());
        }
        self.flag.store(true, Ordering::SeqCst);
    }

    pub(crate) fn is_cancelled(&self) -> bool {
        self.flag.load(Ordering::SeqCst)
    }

    pub(crate) fn reason(&self) -> Option<String> {
        lock(&self.reason).clone()
    }
}
