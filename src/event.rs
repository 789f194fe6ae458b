//! Events the host reports to the application's hook, for logs and metrics.
//!
//! The hook is the crate's only channel to the application's logging, so
//! that the crate needs no logging dependency. No event ever carries a bearer,
//! a capability URL or a session id: an event may be written anywhere.

use std::sync::Arc;
use std::time::Duration;

/// Something that happened on the host.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Event {
    /// A tool call was admitted and its handler is about to run.
    CallStarted {
        /// The tool's name.
        tool: String,
    },
    /// A handler returned (or panicked).
    CallFinished {
        /// The tool's name.
        tool: String,
        /// How long the handler ran.
        duration: Duration,
        /// What it came to.
        outcome: crate::model::CallResult,
    },
    /// A call passed its deadline
    /// ([`HostConfig::call_timeout`](crate::HostConfig::call_timeout)): the
    /// client got a tool error and the call was flagged cancelled, but the
    /// handler still runs and holds its worker until it returns.
    CallTimedOut {
        /// The tool's name.
        tool: String,
        /// The deadline it passed.
        after: Duration,
    },
    /// A call has been running for longer than
    /// [`HostConfig::report_long_calls`](crate::HostConfig::report_long_calls):
    /// a handler that never returns shows here instead of silently holding a
    /// worker.
    CallRunningLong {
        /// The tool's name.
        tool: String,
        /// How long it has run.
        elapsed: Duration,
    },
    /// A call's arguments broke the tool's input schema; no handler ran, and
    /// the model got the violations as a tool error.
    InvalidArguments {
        /// The tool's name.
        tool: String,
        /// The violations, as the model read them.
        violations: String,
    },
    /// A call named a tool the surface does not list; no handler ran.
    UnknownTool {
        /// The name the client asked for.
        tool: String,
    },
    /// A request was refused for lack of a valid bearer.
    AuthRefused {
        /// Why, without the presented credential.
        reason: AuthRefusal,
    },
    /// A request was refused before reaching the protocol, or the protocol
    /// refused it.
    BadRequest {
        /// The HTTP status sent.
        status: u16,
        /// What was wrong, as told to the client.
        message: String,
    },
    /// A tool's schemas use keywords the host does not check (reported once
    /// per session, when it opens): arguments are validated without them.
    SchemaWarnings {
        /// The tool's name.
        tool: String,
        /// One line per unchecked keyword.
        warnings: Vec<String>,
    },
    /// The application's surface misbehaved: `list_tools` panicked, or listed
    /// a tool that breaks the naming rules or repeats a name.
    SurfaceFault {
        /// What happened.
        message: String,
    },
}

/// Why a request's credential was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum AuthRefusal {
    /// No `Authorization` header (and no capability URL).
    Missing,
    /// A credential that is not `Bearer <token>` in the host's format.
    Malformed,
    /// A well-formed bearer that no live session holds: unknown, or revoked.
    Unknown,
}

/// The application's event hook, shared by every worker.
pub(crate) type EventHook = Arc<dyn Fn(&Event) + Send + Sync>;

/// Calls the hook, containing a panic in it: a broken logger must not
/// cost the request it reports on (nor a call's bookkeeping).
pub(crate) fn report(hook: &EventHook, event: &Event) {
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| hook(event)));
}
