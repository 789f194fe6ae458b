//! The vocabulary: plain data every layer speaks — revisions, JSON-RPC
//! messages and codes, request headers and responses, header parameters,
//! log levels and client identity, content blocks, tools and the lines
//! their calls wait in, outcomes and the results read back from other
//! servers.
//!
//! Nothing here runs a handler, holds a lock or touches a socket; like
//! rmcp's `model/`, these are the nouns the protocol core, the runtime, the
//! shell and the client share.

pub(crate) mod arguments;
pub(crate) mod call_line;
pub(crate) mod cancelled;
pub(crate) mod content;
#[cfg(feature = "schemars")]
mod derived;
pub(crate) mod http;
pub(crate) mod jsonrpc;
mod member;
pub(crate) mod meta;
pub(crate) mod method;
pub(crate) mod outcome;
pub(crate) mod params;
pub(crate) mod peer;
pub(crate) mod revision;
pub(crate) mod tool;
pub(crate) mod tool_result;

pub use call_line::CallLine;
pub use content::{Content, Role};
pub use outcome::{CallResult, OutcomeKind, ToolOutcome};
pub use peer::{ClientInfo, LogLevel};
pub use revision::Revision;
pub use tool::{Icon, IconTheme, Tool, ToolAnnotations, MAX_TOOL_NAME_LEN};
pub use tool_result::ToolResult;
