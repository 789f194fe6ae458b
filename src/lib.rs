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
//! The sections below go from a first tool to the protocol:
//!
//! - [A host and a tool](#a-host-and-a-tool)
//! - [Typed tools and `?`](#typed-tools-and-)
//! - [State shared between handlers](#state-shared-between-handlers)
//! - [Tools that come and go](#tools-that-come-and-go)
//! - [Progress and cancellation](#progress-and-cancellation)
//! - [Testing a tool](#testing-a-tool)
//! - [Connecting each agent](#connecting-each-agent)
//! - [Events and logs](#events-and-logs)
//! - [The protocol](#the-protocol)
//!
//! # A host and a tool
//!
//! A tool is a [`Tool`] (its name, the description the model reads, the
//! JSON Schema of its arguments) and a handler. The handler below takes
//! its arguments as a Rust type and returns one; serde does the JSON.
//!
// The examples that derive serde's traits are in src/doc/: shown here, and
// compiled and run as doctests of the test package (tests/src/library_examples.rs), since
// serde's derive is no dependency of this package. A dev-dependency would be
// built for every example too, and `cargo run --example serve` is to build
// only the library's own crates. The README's blocks run there as well.
#![cfg_attr(not(doctest), doc = include_str!("doc/host.md"))]
//!
//! Every call's arguments are checked against the input schema before the
//! handler runs, and a call that breaks it gets a tool error the model can
//! correct (`/text: expected string, got 42`); [`Schema`] says which
//! keywords are checked. Handlers run concurrently, off the threads that
//! answer the protocol (at most [`HostConfig::max_concurrent_calls`] at
//! once; later calls wait their turn), so they must be `Send + Sync`.
//!
//! # Typed tools and `?`
//!
//! [`StaticSurface::typed`] registers a handler that takes any
//! `T: Deserialize` and returns `Result<R, ToolError>`, where `R` is any
//! `Serialize` value (sent as `structuredContent` when it is an object, as
//! text otherwise; see [`Reply`]) or a [`ToolOutcome`] for full control.
//! Arguments that pass the schema but do not decode into `T` (a `u8` given
//! 300, an unknown field under `deny_unknown_fields`) are refused like a
//! schema violation, naming the place, and the handler never runs. A tool
//! that takes no arguments can take `serde_json::Value` and ignore it.
//!
//! A handler's error is either the model's business or the application's,
//! and only one of the two paths shows text to the model:
//!
//! | the handler meets | the model should | write | the model reads |
//! | --- | --- | --- | --- |
//! | a request it can explain: no such note, over quota, a date that does not parse | read why and try otherwise | `?` on any error that implements `Display`, or `Err(ToolError::declined(reason))` | **the error's message**, whatever it holds (a driver's error may quote the query) |
//! | trouble of its own: the database is down, a lock is poisoned | hear only that the tool failed | `.map_err(ToolError::failed)?`: the detail goes to the event hook or the log | a fixed text, never the detail |
//!
//! So a bare `?` is a choice to show the message; where the message may
//! hold what the model must not see, say `.map_err(ToolError::failed)?`.
//!
#![cfg_attr(not(doctest), doc = include_str!("doc/typed_tools.md"))]
//!
//! Untyped handlers, `Fn(&Value, &CallContext)` in a [`StaticSurface`] and
//! a [`ToolRegistry`] alike, may return anything that converts into a
//! [`ToolOutcome`]: an outcome, a `String`, a `serde_json::Value`, or a
//! `Result` of either whose error implements `Display` (declined) or is a
//! [`ToolError`]. With the `schemars` feature, `Tool::input_schema_for::<T>()`
//! and `Tool::output_schema_for::<R>()` derive the schemas from the types,
//! in a shape every agent accepts (inline, no `$schema`, an object at the
//! root). The derive is the application's: add `schemars = "1"` to its own
//! dependencies beside the feature. A [`Tool`] serializes as the newest
//! revision lists it, and has a getter for every field, so a derived schema
//! can be snapshot-tested with `serde_json::to_value(&tool)`.
//!
//! A chain of tools needs one `?`, at [`SurfaceBuilder::build`], which
//! reports the first registration refused (an invalid name or schema, a
//! name registered twice); [`StaticSurface::tool`] adds one tool at a time.
//!
//! # State shared between handlers
//!
//! Handlers are `Fn + Send + Sync + 'static`: state they share lives behind
//! an `Arc`, cloned into each closure, and what they change behind a
//! `Mutex` (or an atomic). A poisoned lock is the application's trouble, so
//! it fails the call rather than declining it.
//!
#![cfg_attr(not(doctest), doc = include_str!("doc/shared_state.md"))]
//!
//! # Tools that come and go
//!
//! A tool that only some moments allow — an admin's `delete_note`, a
//! tool that needs a login — carries a predicate: [`Tool::visible_when`].
//! The host asks it itself on every `tools/list` and `tools/call`, in any
//! surface: while it says no, the tool is not listed and a call to it is
//! refused as unknown before any handler runs. The host cannot see a
//! predicate change its mind, so the application says when it did:
//! [`StaticSurface::refresh`] (or [`ToolRegistry::refresh`]) sends
//! `notifications/tools/list_changed` to every session serving the
//! surface. [`ToolSurface::visible_when`] gates a whole surface, or every
//! tool a rule picks, the same way. Here is a whole notes application:
//! typed tools, one shown only to an admin, and a slow one that stops
//! when cancelled — and no `ToolSurface` of its own.
//!
#![cfg_attr(not(doctest), doc = include_str!("doc/notes_app.md"))]
//!
//! A [`ToolRegistry`] takes tools registered and removed from any thread
//! and announces each change to every session serving it by itself. A
//! [`LayeredSurface`] stacks surfaces in order of precedence — the
//! application's own tools above a plugin's — so that a lower layer can
//! never take a name, or a call, from a higher one. A tool list kept in
//! the application's own state is a [`surface_fn`] or a [`ToolSurface`]
//! of its own (see [wrapping a surface](ToolSurface#wrapping-a-surface));
//! [`ToolSession::notify_tools_changed`] tells one session's clients to
//! list again.
//!
//! # Progress and cancellation
//!
//! A handler holds its call slot until it returns; nothing can stop it
//! from outside. A long one reports progress through its [`CallContext`] and
//! looks at [`CallContext::is_cancelled`] between steps, which turns true
//! when the client cancels, the session is dropped, the host shuts down,
//! or the call passes its deadline ([`HostConfig::call_timeout`]). Then it
//! stops with `ctx.check_cancelled()?` (or returns
//! [`ToolOutcome::cancelled`]): the call ends *cancelled*, its own outcome
//! ([`OutcomeKind::Cancelled`]), which the event hook reports with the
//! host's reason and [`ToolSession::calls_cancelled`] counts — not a
//! decline, whose reason the model would read. A client that cancelled
//! gets no answer; any other reader a fixed text that says so.
//!
//! ```
//! # #[cfg(feature = "client")] {
//! use serde_json::{json, Value};
//! use toolhost::client::CallOptions;
//! use toolhost::{HostConfig, StaticSurface, Tool, ToolHost};
//!
//! let surface = StaticSurface::builder()
//!     .typed(Tool::new("reindex", "Rebuilds the search index."), |_: Value, ctx| {
//!         for step in 1..=4 {
//!             ctx.check_cancelled()?; // cancelled, not declined
//!             // … one step of the work …
//!             ctx.progress(f64::from(step), Some(4.0), Some("indexing"));
//!         }
//!         Ok("reindexed")
//!     })
//!     .build()?;
//!
//! let host = ToolHost::bind(HostConfig::default())?;
//! let session = host.open_session(surface);
//! let mut client = session.client()?;
//! let mut seen = Vec::new();
//! let options = CallOptions::new().on_progress(|p| seen.push(p.progress));
//! let result = client.call_tool_with("reindex", json!({}), options)?;
//! assert_eq!(result.text(), "reindexed");
//! assert_eq!(seen, [1.0, 2.0, 3.0, 4.0]);
//! # }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! What a quiet handler — one that sends no progress or log message — needs
//! to know: nothing stops it but itself, so it must look at
//! [`CallContext::is_cancelled`] between steps. The host notices a client
//! that left by writing to it: after [`HostConfig::call_keep_alive`] of
//! silence (a second by default) the response becomes an event stream with
//! a keep-alive comment at every interval. In 2026-07-28 a closed
//! connection then cancels the call within one interval; in the stateful
//! revisions a dropped connection is not a cancellation — the call runs on
//! and the client may resume its stream — until
//! [`HostConfig::resume_window`] has passed. A client that accepts only
//! JSON gets no keep-alives, so its leaving is not seen. Explicit
//! cancellation, a dropped session, the host's shutdown and the deadline
//! flag the call at once, and every call still running after
//! [`HostConfig::report_long_calls`] (60 s by default) is reported
//! ([`Event::CallRunningLong`]), so a handler that never returns shows. [`CallContext::close_stream`]
//! lets a handler free its connection on purpose and be polled.
//!
//! # Testing a tool
//!
//! The surest test of a tool is a call through the real endpoint, with the
//! crate's own blocking client (the default `client` feature). A tool that
//! declines or fails is still `Ok`, with `is_error` set; only a call that
//! never reached the tool is an `Err`.
//!
#![cfg_attr(not(doctest), doc = include_str!("doc/testing_a_tool.md"))]
//!
//! `session.client_builder().era(Era::Stateful)` tests the `initialize`
//! revisions; [`client::CallOptions`] takes a progress callback, a cancel
//! handle and answers for a tool that asks back (see
//! [`CallContext::elicit`]).
//!
//! # Connecting each agent
//!
//! The same session gives each client its own configuration; the server
//! name ([`HostConfig::server_name`]) is what agents prefix tool names with.
//!
//! ```
//! use toolhost::{HostConfig, StaticSurface, ToolHost};
//!
//! let host = ToolHost::bind(HostConfig::default().server_name("myapp"))?;
//! let session = host.open_session(StaticSurface::new());
//! let acp = session.acp_mcp_servers();       // ACP session/new "mcpServers" (Copilot, Gemini, Zed, adapters)
//! let claude = session.claude_code_config(); // a 0600 file for `claude --mcp-config FILE`
//! let copilot = session.copilot_cli_config(); // a 0600 file for `copilot --additional-mcp-config @FILE`
//! let gemini = session.gemini_cli_config();  // a 0600 file for GEMINI_CLI_SYSTEM_SETTINGS_PATH
//! let vscode = session.vscode_config();      // .vscode/mcp.json, kept 0600
//! let codex = session.codex_config_toml();   // a config.toml table, kept 0600
//! assert_eq!(acp[0]["headers"][0]["value"], session.authorization());
//! assert_eq!(claude["mcpServers"]["myapp"]["url"], session.url());
//! # let _ = (copilot, gemini, vscode, codex);
//! # Ok::<(), toolhost::Error>(())
//! ```
//!
//! Each carries the bearer as an `Authorization` header
//! ([`ToolSession::authorization`]); [`ToolSession::bearer_token`] is the
//! bare token, and a client that cannot send headers gets a URL with the
//! secret in it when [`HostConfig::capability_urls`] allows one. All of
//! them are secrets: `Debug` never shows them, and no event carries them.
//! Hand them to an agent in a file only you can read
//! ([`write_private_file`], mode `0600`) or in the environment it starts
//! with (`Command::env`), never as an argument: every user of the machine
//! can read any process's command line (`/proc/PID/cmdline`, `ps`), while a
//! process's environment and a `0600` file are its owner's alone.
//!
//! An ACP agent need not take the HTTP entry: ACP requires only stdio of
//! agents. Given the agent's `initialize` answer,
//! [`ToolSession::acp_mcp_servers_for`] offers HTTP where the agent
//! announced it and a stdio entry otherwise (the agents behind that rule
//! are listed in [`acp`]). The stdio entry starts this program again, with
//! the session in its environment; a program that offers it begins `main`
//! with [`relay::run_if_requested`], which turns that copy into a
//! relay between the agent's stdio and the session.
//!
//! # Events and logs
//!
//! [`HostConfig::on_event`] hands every [`Event`] to the application: calls
//! started and finished (with a failure's detail), invalid arguments,
//! unknown tools, refused bearers, bad requests, surface faults. Without a
//! hook, events go to the [`log`] facade under the
//! target `toolhost`, at [`Event::level`]: `error` for failures and broken
//! surfaces, `warn` for what deserves a look, `info` for a model's
//! mistakes, `debug` for calls that went well. A registration refused by
//! [`StaticSurface`] is logged at `warn` as well as returned.
//!
//! # The protocol
//!
//! The host speaks MCP over Streamable HTTP on one endpoint (`/mcp`):
//!
//! | revision | lifecycle |
//! | --- | --- |
//! | 2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25 | `initialize`, then an `Mcp-Session-Id`; the client gets the revision it asks for |
//! | 2026-07-28 | stateless: each request's `_meta` carries version, client and capabilities |
//!
//! The era is chosen per request, so one bearer serves a stateful and a
//! stateless client at once. Each message is spelled for its revision:
//! fields a revision does not know ([`Tool::title`], `structuredContent`,
//! icons, …) are left out for it. Security is not optional: loopback only
//! unless [`HostConfig::allow_non_loopback`], `Host` and `Origin` checked on
//! every request, a bearer on every request, bounded bodies and headers.

#![forbid(unsafe_code)]
#![deny(missing_docs)]
// docs.rs renders with `--cfg docsrs` and every feature (Cargo.toml's
// [package.metadata.docs.rs]); there, rustdoc's doc_cfg labels each item
// with the feature it needs. Nightly-only, so stable builds never see it.
#![cfg_attr(docsrs, feature(doc_cfg))]
// Without the `client` feature the docs still name what it adds (the
// client, the stdio relay, `McpServerLayer`), so that they read the same
// in every build; those links have no target then, and are left dead
// rather than worded twice.
#![cfg_attr(not(feature = "client"), allow(rustdoc::broken_intra_doc_links))]

// The crate, bottom-up, each module using only those named before it
// (README, "Working on toolhost"; `modgraph.py src --dot` draws the imports):
// leaves (`sync`, `crypto`, `base64`, `hash`, `sse`, `error`, `schema`,
// `child`: child processes spoken to in JSON lines), the vocabulary
// (`model`, and `event`, the events told in it), the handler side
// (`call`), the sans-IO protocol core (`mcp`), the runtime (`runtime`),
// what speaks to other programs on the vocabulary alone (`client`;
// `relay` on it; `acp`'s entries, which name the relay's variables), the
// shell (`http`, `config`, `session`, `host`), and on top `acp`'s driver
// (on `session` and `child`) and `upstream` (another MCP server as a
// surface, on `call`, `client` and `config`).
pub mod acp;
mod base64;
mod call;
#[cfg(any(feature = "client", feature = "acp-driver"))]
mod child;
#[cfg(feature = "client")]
pub mod client;
mod config;
mod crypto;
mod error;
mod event;
mod hash;
mod host;
mod http;
mod mcp;
mod model;
#[cfg(test)]
mod readme;
#[cfg(feature = "client")]
pub mod relay;
mod runtime;
mod schema;
mod session;
mod sse;
mod sync;
#[cfg(feature = "client")]
mod upstream;

pub use call::{
    surface_fn, AskError, CallContext, Elicitation, Filtered, FnSurface, InputRequest,
    LayeredBuilder, LayeredSurface, Reply, SessionLink, StaticSurface, SurfaceBuilder, ToolError,
    ToolRegistry, ToolSurface,
};
pub use config::{
    HostConfig, DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_CONCURRENT_CALLS, DEFAULT_MAX_QUEUED_CALLS,
    DEFAULT_WORKERS,
};
pub use error::Error;
pub use event::{AuthRefusal, Event, ServerStatus};
pub use host::ToolHost;
pub use mcp::CacheScope;
pub use model::{
    CallLine, CallResult, ClientInfo, Content, Icon, IconTheme, LogLevel, OutcomeKind, Revision,
    Role, Tool, ToolAnnotations, ToolOutcome, ToolResult, MAX_TOOL_NAME_LEN,
};
pub use schema::{Schema, Violation, Violations};
pub use session::{write_private_file, ToolSession};
#[cfg(feature = "client")]
pub use upstream::{McpServerBuilder, McpServerLayer, DEFAULT_MAX_SERVER_MESSAGE_BYTES};
