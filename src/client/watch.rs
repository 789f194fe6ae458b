//! The standalone event stream of an MCP session (`GET`), read for the
//! server's `notifications/tools/list_changed`.

use std::borrow::Cow;

use serde_json::Value;

use super::call::CancelHandle;
use super::error::ClientError;
use super::rpc::{self, Mode};
use super::wire::{self, Inbox, Link};
use super::Client;
use crate::model::jsonrpc::Message;
use crate::model::method::Method;

/// Hands each list change on the stream to its callback; the stream has no
/// answer to complete.
struct Watch<F> {
    on_change: F,
}

impl<F: FnMut()> Inbox for Watch<F> {
    type Answer = ();

    fn take(&mut self, message: Value, _status: u16) -> Result<Option<()>, ClientError> {
        if Message::of(&message).method() == Some(Method::ToolsListChanged.name()) {
            (self.on_change)();
        }
        Ok(None)
    }

    fn name(&self) -> String {
        "the standalone stream".into()
    }
}

impl Client {
    /// Opens the MCP session's standalone event stream (`GET`, on a
    /// connection of its own) and calls `on_change` for each
    /// `notifications/tools/list_changed` the server sends on it, until the
    /// server ends the stream (`Ok`) or `cancel` fires. Blocks; run it on a
    /// thread of its own. The stream stays silent longer than the client's
    /// timeout only if the server sends no keep-alives; that ends it with
    /// [`ClientError::Timeout`], and it may simply be opened again.
    ///
    /// ```
    /// use std::thread;
    /// use serde_json::Value;
    /// use toolhost::client::{CancelHandle, Client, Era};
    /// use toolhost::{HostConfig, Tool, ToolHost, ToolRegistry};
    ///
    /// let host = ToolHost::bind(HostConfig::default())?;
    /// let registry = ToolRegistry::new();
    /// let session = host.open_session(registry.clone());
    /// let client = session.client_builder().era(Era::Stateful).connect()?;
    /// let cancel = CancelHandle::new();
    /// let (tx, rx) = std::sync::mpsc::channel();
    /// let stop = cancel.clone();
    /// let watcher = thread::spawn(move || client.watch_tools_changed(&stop, || { let _ = tx.send(()); }));
    /// // Registered until the watcher has heard of one (it may connect late).
    /// let mut n = 0;
    /// while rx.recv_timeout(std::time::Duration::from_millis(100)).is_err() {
    ///     n += 1;
    ///     registry.tool(Tool::new(format!("t{n}"), "A tool."), |_, _| Value::Null)?;
    /// }
    /// cancel.cancel();
    /// assert!(watcher.join().unwrap().is_err()); // Cancelled
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// [`ClientError::NotInEra`] when the client speaks 2026-07-28 or the
    /// server issued no MCP session; [`ClientError::Cancelled`] once `cancel`
    /// fired; the server's refusal of the `GET` (405 from a server without
    /// the stream), or a fault of the connection.
    pub fn watch_tools_changed(
        &self,
        cancel: &CancelHandle,
        on_change: impl FnMut(),
    ) -> Result<(), ClientError> {
        let mode @ Mode::Stateful {
            session_id: Some(_),
            ..
        } = &self.mode
        else {
            return Err(ClientError::NotInEra {
                operation: "watch_tools_changed",
                hint: "the standalone stream belongs to an MCP session: connect with Era::Stateful to a server that issues Mcp-Session-Id",
            });
        };
        let mut headers = rpc::mcp_headers(Some(mode), "", None);
        headers.push(("Accept", Cow::Borrowed("text/event-stream")));
        let mut link = Link::default();
        let mut watch = Watch { on_change };
        let ended = wire::listen(
            &mut link,
            &self.wire.settings,
            &headers,
            Some(cancel),
            &mut watch,
        );
        if cancel.is_cancelled() {
            return Err(ClientError::Cancelled);
        }
        ended.map(drop)
    }
}
