//! What toolhost's black-box tests, benches and harness programs share: a
//! plain HTTP/1.1 client, an MCP client on top of it that checks every
//! message the host sends against the official MCP schemas, event-stream
//! readers, a log of the events a host reports to its hook, and for the
//! benches a light load generator, the tools they call, and a process's
//! CPU and memory; and a stand-in for libtest for the test binaries that
//! are also the programs they run.
//!
//! Test support, not a library for users: it panics on anything unexpected,
//! because a test that meets the unexpected should fail right there.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod bench_host;
pub mod bridged;
pub mod events;
pub mod interop;
#[cfg(doctest)]
mod library_examples;
pub mod load;
pub mod mcp;
pub mod process;
pub mod runner;
pub mod schema;
pub mod sse;
pub mod switch;
pub mod wait;
pub mod wire;

pub use events::EventLog;
pub use interop::{python_sdk_server, python_sdk_stdio_server};
pub use mcp::{
    ask, call_in, stateless_post, McpClient, JSON_HEADERS, REVISIONS, STATEFUL, STATELESS,
};
pub use sse::{
    call_stream, get_stream, listen, sse_events, sse_messages, EventStream, Item, SseEvent,
};
pub use switch::Switch;
pub use wait::wait_for;
pub use wire::{Conn, Reply};
