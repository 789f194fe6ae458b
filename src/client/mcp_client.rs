//! What every MCP client here does, over Streamable HTTP ([`Client`]) or
//! a child's stdio ([`StdioClient`]): one trait, so code that lists and
//! calls tools — a test helper, a gateway layer — is written once for both.
//!
//! The receiver is `&mut self`, as `std::io::Read`'s is. A [`Client`]
//! holds one connection and sends one request at a time: `&mut` lets the
//! compiler say so, where `&self` would need a lock around the connection,
//! taken on every request and held for the whole of a long tool call, so
//! that two threads sharing a client would wait on each other unseen. A
//! [`StdioClient`] runs calls side by side from any number of threads, so,
//! as `&File` and `&TcpStream` implement `Read`, `&StdioClient` implements
//! the trait too: a client shared in an `Arc` is used through `&mut &*arc`.

use serde_json::Value;

use super::call::CallOptions;
use super::error::ClientError;
use super::stdio::StdioClient;
use super::{Client, ServerInfo};
use crate::model::{Revision, Tool, ToolResult};

/// An MCP client: [`Client`] (Streamable HTTP), [`StdioClient`] (a child
/// process's stdio), and `&StdioClient` (one shared between threads).
/// Each method is the client's own method of that name.
///
/// ```
/// use serde_json::json;
/// use toolhost::client::{ClientError, McpClient};
/// use toolhost::{HostConfig, StaticSurface, Tool, ToolHost, ToolOutcome};
///
/// /// Calls every tool that takes no arguments: with any client.
/// fn call_all(client: &mut impl McpClient) -> Result<Vec<String>, ClientError> {
///     let tools = client.list_tools()?;
///     let mut texts = Vec::new();
///     for tool in tools.iter().filter(|t| t.input_schema_json().get("required").is_none()) {
///         texts.push(client.call_tool(tool.name(), json!({}))?.text());
///     }
///     Ok(texts)
/// }
///
/// let host = ToolHost::bind(HostConfig::default())?;
/// let session = host.open_session(StaticSurface::new().tool(
///     Tool::new("hello", "Says hello."),
///     |_, _| ToolOutcome::text("hello"),
/// )?);
/// assert_eq!(call_all(&mut session.client()?)?, ["hello"]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait McpClient {
    /// Every tool the server lists, following `nextCursor` page by page
    /// ([`Client::list_tools`], [`StdioClient::list_tools`]), within the
    /// client's bound on one listing.
    ///
    /// # Errors
    /// Whatever kept the server from answering,
    /// [`ClientError::Malformed`] for a page that is not a tool list, or
    /// [`ClientError::ListingTooLarge`] past the client's bound.
    fn list_tools(&mut self) -> Result<Vec<Tool>, ClientError>;

    /// Calls tool `name` with `arguments` (a JSON object; `null` sends
    /// none); `Ok` whenever the tool was reached — check
    /// [`is_error`](ToolResult::is_error) for its verdict.
    ///
    /// # Errors
    /// As [`McpClient::call_tool_with`].
    fn call_tool(&mut self, name: &str, arguments: Value) -> Result<ToolResult, ClientError> {
        self.call_tool_with(name, arguments, CallOptions::new())
    }

    /// [`call_tool`](McpClient::call_tool) with progress and log
    /// callbacks, a handler for the server's questions, a cancel handle or
    /// a timeout of its own ([`Client::call_tool_with`],
    /// [`StdioClient::call_tool_with`]).
    ///
    /// # Errors
    /// [`ClientError::Rpc`] when the server refuses the call itself,
    /// [`ClientError::Cancelled`], [`ClientError::Timeout`], a fault of the
    /// connection or the process, or [`ClientError::Malformed`] for an
    /// answer that is not a tool result.
    fn call_tool_with(
        &mut self,
        name: &str,
        arguments: Value,
        options: CallOptions<'_>,
    ) -> Result<ToolResult, ClientError>;

    /// Checks the server answers `ping` (a [`Client`] of 2026-07-28, which
    /// has none, says [`ClientError::NotInEra`] without a request).
    ///
    /// # Errors
    /// Whatever stopped the server from answering.
    fn ping(&mut self) -> Result<(), ClientError>;

    /// The protocol revision in use.
    fn revision(&self) -> Revision;

    /// Who the server says it is, when it said.
    fn server_info(&self) -> Option<&ServerInfo>;

    /// The server's instructions for the model, when it sent any.
    fn instructions(&self) -> Option<&str>;

    /// Ends the conversation: a [`Client`] ends its MCP session
    /// ([`Client::close`]); a [`StdioClient`] closes the server's stdin and
    /// ends its process, as dropping it does; a `&StdioClient` ends
    /// nothing, its owner's drop does.
    ///
    /// # Errors
    /// What [`Client::close`] returns; never for stdio.
    fn close(self) -> Result<(), ClientError>
    where
        Self: Sized;
}

/// The trait's methods as the client type's own methods of the same name
/// (a stdio client's take `&self`, so owned and shared clients alike).
macro_rules! own_methods {
    ($client:ident) => {
        fn list_tools(&mut self) -> Result<Vec<Tool>, ClientError> {
            $client::list_tools(self)
        }

        fn call_tool_with(
            &mut self,
            name: &str,
            arguments: Value,
            options: CallOptions<'_>,
        ) -> Result<ToolResult, ClientError> {
            $client::call_tool_with(self, name, arguments, options)
        }

        fn ping(&mut self) -> Result<(), ClientError> {
            $client::ping(self)
        }

        fn revision(&self) -> Revision {
            $client::revision(self)
        }

        fn server_info(&self) -> Option<&ServerInfo> {
            $client::server_info(self)
        }

        fn instructions(&self) -> Option<&str> {
            $client::instructions(self)
        }
    };
}

impl McpClient for Client {
    own_methods!(Client);

    fn close(self) -> Result<(), ClientError> {
        Client::close(self)
    }
}

impl McpClient for &StdioClient {
    own_methods!(StdioClient);

    /// The owner's drop ends the server; a shared reference has nothing to end.
    fn close(self) -> Result<(), ClientError> {
        Ok(())
    }
}

/// As `&StdioClient`, and [`McpClient::close`] ends the server.
impl McpClient for StdioClient {
    own_methods!(StdioClient);

    fn close(self) -> Result<(), ClientError> {
        // Dropping closes stdin, waits out the exit grace, then ends the
        // process group and reaps it.
        drop(self);
        Ok(())
    }
}
