//! A layer's Streamable HTTP server: a small pool of connected clients,
//! and the thread that follows the server's standalone stream.
//!
//! Calls take a connected client from the pool (each [`Client`] does one
//! request at a time), or connect a new one, so calls run in parallel and a
//! server that went away is reconnected on the next call. A client that
//! failed is dropped, never pooled again.

use std::sync::{Mutex, Weak};

use super::{Inner, Signal, RETRY};
use crate::client::{CancelHandle, Client, ClientBuilder, ClientError};
use crate::sync::lock;

/// The most idle clients a layer keeps connected.
const MAX_IDLE: usize = 8;

/// Connected clients of one HTTP server.
pub(super) struct Pool {
    pub(super) builder: ClientBuilder,
    idle: Mutex<Vec<Client>>,
}

impl Pool {
    /// An empty pool of clients connected with `builder`.
    pub(super) fn new(builder: ClientBuilder) -> Pool {
        Pool {
            builder,
            idle: Mutex::new(Vec::new()),
        }
    }

    /// Connects a first client, unless one is idle already.
    pub(super) fn fill(&self) -> Result<(), ClientError> {
        if lock(&self.idle).is_empty() {
            let client = self.builder.clone().connect()?;
            lock(&self.idle).push(client);
        }
        Ok(())
    }

    /// Drops the idle clients: the server is gone, and a new one will have
    /// other sessions.
    pub(super) fn clear(&self) {
        lock(&self.idle).clear();
    }

    /// Whether the server issued an MCP session, which has a standalone
    /// stream to watch.
    pub(super) fn has_session(&self) -> bool {
        matches!(lock(&self.idle).first(), Some(client) if client.session_id().is_some())
    }

    /// Runs `work` with an idle client (or a new one) and pools it again
    /// unless the work failed.
    pub(super) fn with_client<T>(
        &self,
        work: impl FnOnce(&mut Client) -> Result<T, ClientError>,
    ) -> Result<T, ClientError> {
        let pooled = lock(&self.idle).pop();
        let mut client = match pooled {
            Some(client) => client,
            None => self.builder.clone().connect()?,
        };
        let outcome = work(&mut client);
        if outcome.is_ok() {
            let mut idle = lock(&self.idle);
            if idle.len() < MAX_IDLE {
                idle.push(client);
            }
        }
        outcome
    }
}

/// The watch thread: reads the server's standalone stream on a client of
/// its own and refreshes at each `notifications/tools/list_changed`, opening
/// the stream again (with a new client) when it ends, until the layer is
/// dropped or the server turns out to have no stream.
pub(super) fn watch(layer: &Weak<Inner>, signal: &Signal, cancel: &CancelHandle) {
    let refresh = || {
        if let Some(layer) = layer.upgrade() {
            layer.refresh_reporting("after a list change");
        }
    };
    loop {
        let builder = match layer.upgrade().as_deref().map(Inner::http) {
            // It reads the stream itself (a server may allow one per session).
            Some(Some(pool)) => pool.builder.clone().standalone_stream(false),
            _ => return,
        };
        if let Ok(client) = builder.connect() {
            // What changed while no stream was open.
            refresh();
            match client.watch_tools_changed(cancel, refresh) {
                Err(ClientError::Cancelled | ClientError::NotInEra { .. }) => return,
                Err(ClientError::Http { status: 405, .. }) => return,
                // A notification past the relay's limit was not read: the
                // stream is opened again, and the hook told.
                Err(err @ ClientError::TooLarge { .. }) => {
                    if let Some(layer) = layer.upgrade() {
                        layer.report(format!(
                            "MCP server {:?}: its standalone stream sent {err} (McpServerBuilder::max_message_bytes)",
                            layer.name
                        ));
                    }
                }
                _ => {}
            }
        }
        // A pause before trying again, cut short by the layer's drop.
        if signal.pause(RETRY) {
            return;
        }
    }
}
