//! The handler side: what a tool's handler is given and what it is asked
//! through — the [`CallContext`] of one call, the [`ToolSurface`] that lists
//! and runs tools, and asking the client mid-call — and what it returns:
//! typed arguments and replies, and the [`ToolError`] that makes `?` work.
//!
//! A context reaches the runtime through one narrow port
//! ([`call_link::CallLink`]), never through the session table or the stream
//! hub, so the runtime can change without touching what handlers see.

pub(crate) mod ask;
pub(crate) mod call_link;
pub(crate) mod context;
pub(crate) mod session_link;
pub(crate) mod surface;
pub(crate) mod tool_error;
pub(crate) mod typed;

pub use ask::{AskError, Elicitation, InputRequest};
pub use context::CallContext;
pub use session_link::SessionLink;
pub use surface::{
    surface_fn, Filtered, FnSurface, LayeredBuilder, LayeredSurface, StaticSurface, SurfaceBuilder,
    ToolRegistry, ToolSurface,
};
pub use tool_error::ToolError;
pub use typed::Reply;

/// What a panicking handler or surface left as its message, for the event
/// hook (the model never sees it).
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a non-string panic payload".to_owned())
}
