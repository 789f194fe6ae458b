//! The standalone event stream of an MCP session (`GET`): what a server
//! sends about no request. Its list changes go to a callback, and its
//! requests are answered — `ping` with `{}`, as every peer must, anything
//! else refused, there being no call to ask — so that a tool which pings
//! without naming its call is answered as over stdio.
//!
//! [`Client::watch_tools_changed`] reads it on the caller's thread;
//! [`Held`] on a thread of its own for as long as the client lives
//! ([`ClientBuilder::standalone_stream`](super::ClientBuilder::standalone_stream)).

use std::borrow::Cow;
use std::sync::mpsc;
use std::thread::{self, JoinHandle};

use serde_json::{Map, Value};

use super::answer::Refusal;
use super::call::CancelHandle;
use super::error::ClientError;
use super::rpc::{self, Mode};
use super::wire::{self, Inbox, Link};
use super::{Client, Settings};
use crate::model::jsonrpc::{Message, METHOD_NOT_FOUND};
use crate::model::method::Method;

/// What the standalone stream brings: list changes to `on_change`, and
/// requests answered on a connection of their own (`answers`), since the
/// stream's is busy carrying it.
struct Standalone<'a, F> {
    on_change: F,
    settings: &'a Settings,
    mode: &'a Mode,
    answers: Link,
    /// Told once the server accepted the stream.
    opened: Option<mpsc::Sender<Result<(), ClientError>>>,
}

impl<F: FnMut()> Inbox for Standalone<'_, F> {
    type Answer = ();

    fn take(&mut self, message: Value, _status: u16) -> Result<Option<()>, ClientError> {
        match Message::of(message) {
            Message::Request { id, method, .. } => {
                let answer = if method == Method::Ping.name() {
                    Ok(Value::Object(Map::new()))
                } else {
                    Err(Refusal {
                        code: METHOD_NOT_FOUND,
                        message: format!(
                            "{method} reached the client on its standalone stream, where no tool call is there to answer it; send it on the call's stream"
                        ),
                    })
                };
                wire::post_answer(&mut self.answers, self.settings, self.mode, &id, answer)
                    .map_err(|cause| ClientError::Unanswered {
                        method,
                        problem: "sending the answer failed".into(),
                        cause: Some(Box::new(cause)),
                    })?;
            }
            Message::Notification { method, .. } if method == Method::ToolsListChanged.name() => {
                (self.on_change)();
            }
            _ => {}
        }
        Ok(None)
    }

    fn name(&self) -> String {
        "the standalone stream".into()
    }

    fn opened(&mut self) {
        if let Some(opened) = self.opened.take() {
            let _ = opened.send(Ok(()));
        }
    }
}

/// The headers of the `GET` that opens the standalone stream of `mode`.
fn stream_headers(mode: &Mode) -> Vec<(&'static str, Cow<'_, str>)> {
    let mut headers = rpc::mcp_headers(Some(mode), "", None);
    headers.push(("Accept", Cow::Borrowed("text/event-stream")));
    headers
}

/// The standalone stream a client holds: the thread that reads it, and
/// the handle that ends it (dropping a `Held` ends the stream and joins
/// the thread).
#[derive(Debug)]
pub(crate) struct Held {
    cancel: CancelHandle,
    thread: Option<JoinHandle<()>>,
}

impl Held {
    /// Opens the standalone stream of `mode`'s MCP session on a thread of
    /// its own and returns once the server accepted it, so that whatever
    /// the server sends there from then on is heard; its refusal, or a
    /// fault of the connection, otherwise.
    pub(crate) fn open(settings: &Settings, mode: &Mode) -> Result<Held, ClientError> {
        let (opened, accepted) = mpsc::channel();
        let cancel = CancelHandle::new();
        let stop = cancel.clone();
        let (settings, mode) = (settings.clone(), mode.clone());
        let wait = settings.connect_timeout + settings.timeout;
        let thread = thread::Builder::new()
            .name("toolhost-client-standalone".into())
            .spawn(move || {
                let on_tools_changed = settings.on_tools_changed.clone();
                let mut inbox = Standalone {
                    on_change: || {
                        if let Some(callback) = &on_tools_changed {
                            callback();
                        }
                    },
                    settings: &settings,
                    mode: &mode,
                    answers: Link::default(),
                    opened: Some(opened),
                };
                let headers = stream_headers(&mode);
                let ended = wire::listen(
                    &mut Link::default(),
                    &settings,
                    &headers,
                    Some(&stop),
                    &mut inbox,
                );
                // Refused before it opened: the opener hears why.
                if let (Some(opened), Err(err)) = (inbox.opened.take(), ended) {
                    let _ = opened.send(Err(err));
                }
            })
            .map_err(ClientError::Io)?;
        let held = Held {
            cancel,
            thread: Some(thread),
        };
        match accepted.recv_timeout(wait) {
            Ok(Ok(())) => Ok(held),
            Ok(Err(err)) => Err(err),
            // The thread ended without a word, or the server kept it waiting.
            Err(_) => Err(ClientError::malformed(
                "the server neither accepted nor refused the standalone stream's GET",
            )),
        }
    }

    /// Whether the stream is still read (the server may end it).
    pub(crate) fn is_open(&self) -> bool {
        self.thread
            .as_ref()
            .is_some_and(|thread| !thread.is_finished())
    }
}

/// Ends the stream (its connection is shut down) and joins its thread.
impl Drop for Held {
    fn drop(&mut self) {
        self.cancel.cancel();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Client {
    /// Opens the MCP session's standalone event stream (`GET`, on a
    /// connection of its own) and calls `on_change` for each
    /// `notifications/tools/list_changed` the server sends on it (and
    /// answers its `ping`s, refusing its other requests), until the
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
        let headers = stream_headers(mode);
        let mut watch = Standalone {
            on_change,
            settings: &self.wire.settings,
            mode,
            answers: Link::default(),
            opened: None,
        };
        let ended = wire::listen(
            &mut Link::default(),
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
