//! # toolhost
//!
//! Host your application's own tools to an agent (Copilot, Gemini CLI, Claude
//! Code, Codex, …) over a loopback MCP endpoint, from plain blocking Rust.
//!
//! An agent that speaks the Agent Client Protocol takes its tools from the
//! `mcpServers` list of `session/new`. toolhost is the HTTP MCP server for
//! that list, inside your process: [`ToolHost::bind`] starts a small
//! tiny_http server on `127.0.0.1`, [`ToolHost::open_session`] publishes a
//! [`ToolSurface`] behind a fresh 256-bit bearer, and the returned
//! [`ToolSession`] hands out what the agent needs. Dropping the session
//! revokes the bearer at once.
//!
//! ```
//! use serde_json::json;
//! use toolhost::{HostConfig, StaticSurface, Tool, ToolHost, ToolOutcome};
//!
//! let host = ToolHost::bind(HostConfig::default().server_name("myapp"))?;
//! let surface = StaticSurface::new().tool(
//!     Tool::new("shout", "Uppercase the input text.").input_schema(json!({
//!         "type": "object",
//!         "properties": {"text": {"type": "string"}},
//!         "required": ["text"],
//!     })),
//!     |args, _ctx| ToolOutcome::json(json!({
//!         "text": args["text"].as_str().unwrap_or("").to_uppercase(),
//!     })),
//! )?;
//! let session = host.open_session(surface);
//! let servers = session.acp_mcp_servers(); // for ACP session/new
//! assert_eq!(servers[0]["url"], session.url());
//! // … run the agent turn …
//! println!("{} tool calls", session.calls_served());
//! drop(session); // 401 from now on
//! # Ok::<(), toolhost::Error>(())
//! ```
//!
//! The host speaks MCP over Streamable HTTP on one endpoint (`/mcp`) in
//! revisions 2024-11-05, 2025-03-26, 2025-06-18 and 2025-11-25 (chosen per
//! MCP session at `initialize`) and the stateless 2026-07-28 (chosen per
//! request from its `_meta`).

#![forbid(unsafe_code)]
#![deny(missing_docs)]

// The crate, bottom-up: leaves (`sync`, `crypto`, `base64`, `sse`,
// `error`, `event`, `schema`), the vocabulary (`model`), the handler side
// (`call`), the sans-IO protocol core (`mcp`), the runtime (`runtime`),
// and the shell (`http`, `host`, `session`, `config`, `acp`,
// `stdio_bridge`). Each uses only those before it; `client` builds on the
// vocabulary alone.
pub mod acp;
mod base64;
mod call;
#[cfg(feature = "client")]
pub mod client;
mod config;
mod crypto;
mod error;
mod event;
mod host;
mod http;
mod mcp;
mod model;
mod runtime;
mod schema;
mod session;
mod sse;
#[cfg(feature = "client")]
pub mod stdio_bridge;
mod sync;

pub use call::{
    surface_fn, AskError, CallContext, Elicitation, FnSurface, InputRequest, StaticSurface,
    ToolSurface,
};
pub use config::{
    HostConfig, DEFAULT_KEEP_ALIVE, DEFAULT_LONG_CALL_REPORT, DEFAULT_MAX_BODY_BYTES,
    DEFAULT_READ_TIMEOUT, DEFAULT_RESUME_WINDOW, DEFAULT_WORKERS, DEFAULT_WRITE_TIMEOUT,
};
pub use error::Error;
pub use event::{AuthRefusal, Event};
pub use host::ToolHost;
pub use mcp::CacheScope;
pub use model::{
    CallResult, ClientInfo, Content, Icon, IconTheme, LogLevel, OutcomeKind, Revision, Role, Tool,
    ToolAnnotations, ToolOutcome, MAX_TOOL_NAME_LEN,
};
pub use schema::{Schema, Violation, Violations};
pub use session::ToolSession;

/// The README's code blocks, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
