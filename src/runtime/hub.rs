//! Event streams that outlive their request: the standalone `GET` stream of
//! the stateful revisions and `subscriptions/listen` of 2026-07-28.
//!
//! A worker that opens such a stream writes its head and first events, then
//! hands the raw connection here and goes back to serving requests, so open
//! streams never pin workers. One hub thread owns every stream: it writes
//! `notifications/tools/list_changed` when a session's tool list changes,
//! a `:` comment every keep-alive interval (which is also how it notices a
//! client that has gone), and closes a session's streams when the session is
//! dropped or the host shuts down.
//!
//! The hub knows streams by their owner's opaque key and carries bytes the
//! protocol core rendered (what to send when the owner's tool list
//! changes, how to end); it speaks SSE framing and nothing of MCP.
//!
//! The hub writes under its own lock; writes are a few hundred bytes into a
//! socket buffer that holds hundreds of kilobytes, so a client that stops
//! reading stalls the hub only after thousands of unread events, and then
//! for at most the host's write timeout, after which its stream is dropped.

use std::collections::HashSet;
use std::io::{self, Write};
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use crate::sse;
use crate::sync::lock;

/// How many streams the hub keeps open at once, host-wide.
pub(crate) const MAX_STREAMS: usize = 256;

/// What a stream says besides keep-alives, rendered by its opener.
pub(crate) struct Script {
    /// The event to send when the owner's tool list changes, if any.
    pub(crate) on_change: Option<Vec<u8>>,
    /// What ends the stream cleanly (its last event, if any, and the last
    /// chunk).
    pub(crate) ending: Vec<u8>,
}

struct Stream {
    key: u64,
    /// Gone when the owner is: the stream then ends.
    owner: Weak<dyn Send + Sync>,
    script: Script,
    writer: Box<dyn Write + Send>,
}

#[derive(Default)]
struct State {
    streams: Vec<Stream>,
    changed: HashSet<u64>,
    closed: HashSet<u64>,
    stopping: bool,
}

/// The owner of every long-lived stream of one host.
pub(crate) struct Hub {
    state: Mutex<State>,
    wake: Condvar,
    keep_alive: Duration,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl Hub {
    /// Starts the hub thread.
    pub(crate) fn start(keep_alive: Duration) -> io::Result<Arc<Hub>> {
        let hub = Arc::new(Hub {
            state: Mutex::default(),
            wake: Condvar::new(),
            keep_alive,
            thread: Mutex::new(None),
        });
        let runner = Arc::clone(&hub);
        let handle = thread::Builder::new()
            .name("toolhost-streams".into())
            .spawn(move || runner.run())?;
        *lock(&hub.thread) = Some(handle);
        Ok(hub)
    }

    /// Takes over a stream: writes its head and first events (`opening`)
    /// under the hub's lock, so that no change announced after the client
    /// saw them can be missed, then keeps it. A stream that cannot be kept
    /// (the hub is full or stopping) is ended right after its opening.
    /// `key` names the owner (for [`Hub::tools_changed`] and
    /// [`Hub::session_closed`]); the stream also ends once `owner` is gone.
    pub(crate) fn adopt(
        &self,
        mut writer: Box<dyn Write + Send>,
        key: u64,
        owner: Weak<dyn Send + Sync>,
        script: Script,
        opening: &[u8],
    ) {
        let mut state = lock(&self.state);
        if state.stopping || state.streams.len() >= MAX_STREAMS {
            let mut bytes = opening.to_vec();
            bytes.extend_from_slice(&script.ending);
            let _ = sse::send(&mut *writer, &bytes);
            return;
        }
        if sse::send(&mut *writer, opening).is_ok() {
            state.streams.push(Stream {
                key,
                owner,
                script,
                writer,
            });
        }
    }

    /// Whether another stream can be adopted now.
    pub(crate) fn has_room(&self) -> bool {
        let state = lock(&self.state);
        !state.stopping && state.streams.len() < MAX_STREAMS
    }

    /// The tool list of owner `key` changed: tell its streams.
    pub(crate) fn tools_changed(&self, key: u64) {
        lock(&self.state).changed.insert(key);
        self.wake.notify_all();
    }

    /// Owner `key` was dropped: end its streams.
    pub(crate) fn session_closed(&self, key: u64) {
        lock(&self.state).closed.insert(key);
        self.wake.notify_all();
    }

    /// Ends every stream and joins the hub thread. Idempotent.
    pub(crate) fn stop(&self) {
        lock(&self.state).stopping = true;
        self.wake.notify_all();
        if let Some(handle) = lock(&self.thread).take() {
            // The hub thread has nothing to clean up if it panicked.
            let _ = handle.join();
        }
    }

    fn run(&self) {
        let mut state = lock(&self.state);
        let mut next_keep_alive = Instant::now() + self.keep_alive;
        loop {
            if state.stopping {
                for mut stream in state.streams.drain(..) {
                    let _ = sse::send(&mut *stream.writer, &stream.script.ending);
                }
                return;
            }
            let changed = std::mem::take(&mut state.changed);
            let closed = std::mem::take(&mut state.closed);
            let beat = Instant::now() >= next_keep_alive;
            if beat {
                next_keep_alive = Instant::now() + self.keep_alive;
            }
            state.streams.retain_mut(|stream| {
                if stream.owner.strong_count() == 0 || closed.contains(&stream.key) {
                    let _ = sse::send(&mut *stream.writer, &stream.script.ending);
                    return false;
                }
                let mut bytes = Vec::new();
                if changed.contains(&stream.key) {
                    if let Some(event) = &stream.script.on_change {
                        bytes.extend_from_slice(event);
                    }
                }
                if beat {
                    bytes.extend(sse::keep_alive_chunk());
                }
                bytes.is_empty() || sse::send(&mut *stream.writer, &bytes).is_ok()
            });
            let wait = next_keep_alive.saturating_duration_since(Instant::now());
            state = self
                .wake
                .wait_timeout(state, wait)
                .map(|(guard, _)| guard)
                .unwrap_or_else(|poisoned| poisoned.into_inner().0);
        }
    }
}
