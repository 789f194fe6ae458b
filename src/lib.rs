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

pub mod acp;
mod ask;
mod base64;
#[cfg(feature = "client")]
pub mod client;
mod content;
mod context;
mod error;
mod event;
mod hmac;
mod host;
mod http;
mod hub;
mod mcp;
mod resume;
mod schema;
mod session;
mod sse;
#[cfg(feature = "client")]
pub mod stdio_bridge;
mod surface;
mod timer;
mod tool;

pub use ask::{AskError, Elicitation, InputRequest};
pub use content::{Content, Role};
pub use context::{CallContext, ClientInfo, LogLevel};
pub use error::Error;
pub use event::{AuthRefusal, CallResult, Event};
pub use host::{
    HostConfig, ToolHost, DEFAULT_KEEP_ALIVE, DEFAULT_LONG_CALL_REPORT, DEFAULT_MAX_BODY_BYTES,
    DEFAULT_READ_TIMEOUT, DEFAULT_RESUME_WINDOW, DEFAULT_WORKERS, DEFAULT_WRITE_TIMEOUT,
};
pub use mcp::{CacheScope, Revision};
pub use schema::{Schema, Violation, Violations};
pub use session::ToolSession;
pub use surface::{surface_fn, FnSurface, StaticSurface, ToolSurface};
pub use tool::{
    Icon, IconTheme, OutcomeKind, Tool, ToolAnnotations, ToolOutcome, MAX_TOOL_NAME_LEN,
};

/// The README's code blocks, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
