//! Child processes that speak newline-delimited JSON-RPC on their stdin and
//! stdout — an ACP agent (`acp::Agent`, feature `acp-driver`), a stdio MCP
//! server (`client::StdioServer`, feature `client`) — shared so that both start,
//! read, write and end their child the same way.
//!
//! `group.rs` spawns the child as the leader of a process group of its own
//! and ends the whole group (closed stdin, a grace period, `SIGTERM`,
//! `SIGKILL`, reaped); `lines.rs` runs the threads that read its stdout
//! and stderr and write its stdin, one message per line. What the messages
//! mean is the caller's business.

mod group;
mod lines;

pub(crate) use group::Group;
pub(crate) use lines::{read_messages, Input};
// What only the stdio MCP client uses (the ACP driver leaves the agent's
// stderr as the command says, and ends it after the default grace).
#[cfg(feature = "client")]
pub(crate) use group::EXIT_GRACE;
// The README states it (src/readme.rs pins the number).
#[cfg(all(test, feature = "acp-driver", feature = "client"))]
pub(crate) use group::TERM_GRACE;
#[cfg(feature = "client")]
pub(crate) use lines::read_stderr;
