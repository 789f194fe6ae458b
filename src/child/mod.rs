//! Child processes that speak newline-delimited JSON-RPC on their stdin and
//! stdout — an ACP agent (`acp::Agent`, feature `acp-driver`), a stdio MCP
//! server (`client::StdioServer`, feature `client`) — shared so that both start,
//! read, write and end their child the same way.
//!
//! `group.rs` spawns the child as the leader of a process group of its own
//! and ends the whole group (closed stdin, a grace period, `SIGTERM`,
//! `SIGKILL`, reaped); `lines.rs` writes its stdin and reads its output in
//! bounded lines; `watch.rs` hands each message to the caller and says at
//! once when the child is gone, with its exit status and the last lines of
//! its stderr. What the messages mean is the caller's business.

mod group;
mod lines;
mod watch;

pub(crate) use group::Group;
pub(crate) use lines::Input;
pub(crate) use watch::{Incoming, Watch};
// What only the stdio MCP client uses (the ACP driver ends its agent
// after the default grace).
#[cfg(feature = "client")]
pub(crate) use group::EXIT_GRACE;
// The README states it (src/readme.rs pins the number).
#[cfg(all(test, feature = "acp-driver", feature = "client"))]
pub(crate) use group::TERM_GRACE;

/// The default limit on one message from a child (an agent's line of ACP,
/// a stdio MCP server's line of JSON-RPC): 16 MiB.
///
/// Large enough for what such programs really send — a tool result with a
/// screenshot (a few MiB of base64), a diff that carries a whole source
/// file twice — and small enough that a runaway child costs the
/// application a bounded few dozen MiB: a line past the limit is skipped
/// while it is read, never buffered whole, and a line within it costs
/// about twice its size while it is parsed. Public (as
/// `client::DEFAULT_MAX_MESSAGE_BYTES` and `acp::DEFAULT_MAX_MESSAGE_BYTES`)
/// because a message past it fails its request, so a server's or an
/// agent's author compares against it.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 16 << 20;
