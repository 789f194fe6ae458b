//! The configuration errors of the crate.
//!
//! Protocol faults never surface here: they become HTTP statuses and JSON-RPC
//! errors on the wire. What is left is what an application can get wrong when
//! it sets a host up, and each `Display` says how to fix it.

use std::fmt;
use std::io;
use std::net::SocketAddr;

/// Something the application asked for that the host cannot do.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// The listener could not be bound.
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// What the operating system said.
        source: io::Error,
    },
    /// A non-loopback address was asked for without
    /// [`HostConfig::allow_non_loopback`](crate::HostConfig::allow_non_loopback).
    NonLoopback {
        /// The address asked for.
        addr: SocketAddr,
    },
    /// A worker thread could not be started.
    Spawn(io::Error),
    /// A tool name breaks the MCP naming rules.
    InvalidToolName {
        /// The name as given.
        name: String,
        /// What is wrong with it.
        problem: String,
    },
    /// A tool's input schema is not usable.
    InvalidInputSchema {
        /// The tool's name.
        tool: String,
        /// What is wrong with it.
        problem: String,
    },
    /// A tool's output schema is not usable.
    InvalidOutputSchema {
        /// The tool's name.
        tool: String,
        /// What is wrong with it.
        problem: String,
    },
    /// A JSON Schema is invalid (see [`Schema::compile`](crate::Schema::compile)).
    InvalidSchema {
        /// Where in the schema, as a `#/…` JSON pointer.
        at: String,
        /// What is wrong there.
        problem: String,
    },
    /// Two tools of one surface share a name.
    DuplicateTool {
        /// The shared name.
        name: String,
    },
    /// A tool name the application reserved for a tool of its own (see
    /// [`ToolRegistry::reserve`](crate::ToolRegistry::reserve)).
    ReservedToolName {
        /// The name as given.
        name: String,
    },
    /// The server name breaks the rules of
    /// [`HostConfig::server_name`](crate::HostConfig::server_name): agents
    /// build tool names from it, so it must be short and plain.
    InvalidServerName {
        /// The name as given.
        name: String,
        /// What is wrong with it.
        problem: String,
    },
    /// A configuration value is out of range.
    InvalidConfig {
        /// Which setting.
        setting: &'static str,
        /// What is wrong with it.
        problem: String,
    },
    /// The stdio `mcpServers` entry cannot be offered (see
    /// [`ToolSession::stdio_relay_entry`](crate::ToolSession::stdio_relay_entry)).
    StdioEntry {
        /// Why, and what to do instead.
        problem: String,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Bind { addr, source } => write!(
                f,
                "could not listen on {addr}: {source}; bind port 0 to let the system pick a free port"
            ),
            Error::NonLoopback { addr } => write!(
                f,
                "refusing to listen on {addr}, which is not a loopback address: any machine that \
                 can reach it could try bearers; call HostConfig::allow_non_loopback() if that is intended"
            ),
            Error::Spawn(source) => write!(f, "could not start a worker thread: {source}"),
            Error::InvalidToolName { name, problem } => write!(
                f,
                "tool name {name:?} is invalid because {problem}; use 1 to 128 characters of A-Z, a-z, 0-9, '_', '-' and '.'"
            ),
            Error::InvalidInputSchema { tool, problem } => {
                write!(f, "tool {tool:?} has an unusable inputSchema: {problem}")
            }
            Error::InvalidOutputSchema { tool, problem } => {
                write!(f, "tool {tool:?} has an unusable outputSchema: {problem}")
            }
            Error::InvalidSchema { at, problem } => {
                write!(f, "invalid JSON Schema at {at}: {problem}")
            }
            Error::DuplicateTool { name } => write!(
                f,
                "a tool named {name:?} is already registered on this surface; tool names must be unique"
            ),
            Error::ReservedToolName { name } => write!(
                f,
                "tool name {name:?} is reserved by the application for a tool of its own; pick another name"
            ),
            Error::InvalidServerName { name, problem } => write!(
                f,
                "server name {name:?} is invalid because {problem}; use 1 to 32 characters of A-Z, \
                 a-z, 0-9, '-' and '_', starting with a letter, with no \"__\" and no trailing '_' \
                 (agents name its tools mcp__NAME__TOOL, within 64 characters)"
            ),
            Error::InvalidConfig { setting, problem } => {
                write!(f, "invalid {setting}: {problem}")
            }
            Error::StdioEntry { problem } => {
                write!(f, "cannot offer the stdio mcpServers entry: {problem}")
            }
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Bind { source, .. } | Error::Spawn(source) => Some(source),
            _ => None,
        }
    }
}
