//! Response streams a client can resume: the stateful revisions' answer to
//! a dropped connection (`Last-Event-ID`, MCP 2025-03-26 onwards).
//!
//! When a stateful `tools/call` answers with an event stream, every event
//! carries an id `<stream>-<seq>` and is kept here until the stream is
//! delivered to its end. If the connection drops (or the handler closes it
//! on purpose with [`CallContext::close_stream`](crate::CallContext::close_stream)),
//! the call keeps running — a disconnection is not a cancellation in these
//! revisions — and what it sends piles up. A `GET` with `Last-Event-ID`
//! from the same MCP session replays the events after that id on a new
//! connection, which then carries the rest of the call, result included.
//!
//! Bounds: a stream keeps at most [`MAX_KEPT_BYTES`] of events (past it the
//! oldest notifications go; the newest event, which is the result once the
//! call ends, always stays), one bearer keeps at most [`MAX_KEPT_STREAMS`]
//! streams, and a detached stream is kept for the host's resume window: a
//! call whose client has been gone longer is cancelled at its next write,
//! and a result nobody came back for is dropped.

use std::collections::{HashMap, VecDeque};
use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::call::call_link::Gone;
use crate::sse;
use crate::sync::lock;

/// The most bytes of events one stream keeps for a resume.
pub(crate) const MAX_KEPT_BYTES: usize = 1 << 20;

/// The most streams one bearer keeps for resumes at once.
pub(crate) const MAX_KEPT_STREAMS: usize = 256;

/// The resumable streams of one bearer.
#[derive(Default)]
pub(crate) struct CallStreams {
    registry: Mutex<Registry>,
}

#[derive(Default)]
struct Registry {
    next: u64,
    streams: HashMap<u64, Arc<CallStream>>,
}

impl CallStreams {
    /// Registers a new stream of `mcp_session`.
    pub(crate) fn open(&self, mcp_session: &str, window: Duration) -> Arc<CallStream> {
        let mut registry = lock(&self.registry);
        // A stream busy writing is in use: kept, and never waited for here.
        registry
            .streams
            .retain(|_, stream| match stream.flow.try_lock() {
                Ok(mut flow) => flow.worth_keeping(stream.window),
                Err(_) => true,
            });
        if registry.streams.len() >= MAX_KEPT_STREAMS {
            // Give up the stream whose client has been gone the longest.
            let longest_gone = registry
                .streams
                .iter()
                .filter_map(|(id, stream)| stream.detached_since().map(|at| (at, *id)))
                .min()
                .map(|(_, id)| id);
            if let Some(id) = longest_gone {
                if let Some(stream) = registry.streams.remove(&id) {
                    stream.forget();
                }
            }
        }
        registry.next += 1;
        let stream = Arc::new(CallStream {
            id: registry.next,
            mcp_session: mcp_session.to_owned(),
            window,
            flow: Mutex::new(Flow::default()),
        });
        registry.streams.insert(stream.id, Arc::clone(&stream));
        stream
    }

    /// The stream `last_event_id` belongs to, if `mcp_session` may resume
    /// it, and the sequence number to resume after; `None` for an id this
    /// host did not issue, one issued in another MCP session, or one of a
    /// stream delivered to its end or expired.
    pub(crate) fn find(
        &self,
        mcp_session: &str,
        last_event_id: &str,
    ) -> Option<(Arc<CallStream>, u64)> {
        let (stream, seq) = last_event_id.trim().split_once('-')?;
        let parse = |digits: &str| {
            digits
                .bytes()
                .all(|b| b.is_ascii_digit())
                .then(|| digits.parse::<u64>().ok())
                .flatten()
        };
        let (stream, seq) = (parse(stream)?, parse(seq)?);
        let found = lock(&self.registry).streams.get(&stream).cloned()?;
        (found.mcp_session == mcp_session && found.worth_keeping()).then_some((found, seq))
    }
}

/// One POST's response stream, kept for resumes.
pub(crate) struct CallStream {
    id: u64,
    mcp_session: String,
    window: Duration,
    flow: Mutex<Flow>,
}

#[derive(Default)]
struct Flow {
    /// The last event's sequence number; the priming event is 0.
    seq: u64,
    /// Events not yet known to be delivered to the end, oldest first.
    kept: VecDeque<(u64, Vec<u8>)>,
    kept_bytes: usize,
    /// The connection carrying the stream now, if any.
    writer: Option<Box<dyn Write + Send>>,
    /// Since when no connection carries it.
    detached_at: Option<Instant>,
    /// The call's last event (its response) has been sent or kept.
    finished: bool,
    /// Nothing is left to resume: delivered to the end, expired or evicted.
    spent: bool,
}

impl Flow {
    fn detach(&mut self) {
        self.writer = None;
        self.detached_at.get_or_insert_with(Instant::now);
    }

    fn gone_longer_than(&self, window: Duration) -> bool {
        self.detached_at.is_some_and(|at| at.elapsed() > window)
    }

    /// Writes to the attached connection, if any; a failed write detaches.
    fn write(&mut self, bytes: &[u8]) {
        if let Some(writer) = self.writer.as_mut() {
            if sse::send(&mut **writer, bytes).is_err() {
                self.detach();
            }
        }
    }

    fn keep(&mut self, seq: u64, event: Vec<u8>) {
        self.kept_bytes += event.len();
        self.kept.push_back((seq, event));
        while self.kept_bytes > MAX_KEPT_BYTES && self.kept.len() > 1 {
            if let Some((_, dropped)) = self.kept.pop_front() {
                self.kept_bytes -= dropped.len();
            }
        }
    }

    /// Whether a resume could still find anything; a finished stream whose
    /// client stayed away past `window` is spent here.
    fn worth_keeping(&mut self, window: Duration) -> bool {
        if self.finished && self.writer.is_none() && self.gone_longer_than(window) {
            self.spend();
        }
        !self.spent
    }

    fn spend(&mut self) {
        self.spent = true;
        self.writer = None;
        self.kept = VecDeque::new();
        self.kept_bytes = 0;
    }
}

impl CallStream {
    fn event_id(&self, seq: u64) -> String {
        format!("{}-{seq}", self.id)
    }

    /// Takes the POST's connection: writes the stream's head and, when
    /// `priming`, an event with an id and no data, so the client can resume
    /// even before the first message.
    pub(crate) fn begin(&self, mut writer: Box<dyn Write + Send>, priming: bool) {
        let mut bytes = sse::head(&[]);
        if priming {
            bytes.extend(sse::priming_chunk(&self.event_id(0)));
        }
        let mut flow = lock(&self.flow);
        if sse::send(&mut *writer, &bytes).is_ok() {
            flow.writer = Some(writer);
        } else {
            flow.detach();
        }
    }

    /// Sends one message, keeping it for a resume. `Err(Gone)` once the
    /// client has been gone longer than the resume window: the caller's
    /// work is no longer awaited.
    pub(crate) fn send(&self, data: &str) -> Result<(), Gone> {
        let mut flow = lock(&self.flow);
        if flow.spent || flow.finished {
            return Err(Gone::AWAY);
        }
        flow.seq += 1;
        let seq = flow.seq;
        let event = sse::event_chunk_with_id(Some(&self.event_id(seq)), data);
        flow.write(&event);
        flow.keep(seq, event);
        if flow.gone_longer_than(self.window) {
            flow.spend();
            return Err(Gone::AWAY);
        }
        Ok(())
    }

    /// Writes a keep-alive comment (not kept: a resume needs none) to the
    /// connection carrying the stream, if one does; `Err(Gone::AWAY)` once
    /// the stream has been without one for longer than the resume window —
    /// which is how a call whose handler sends nothing learns its client
    /// left for good.
    pub(crate) fn keep_alive(&self) -> Result<(), Gone> {
        let Ok(mut flow) = self.flow.try_lock() else {
            return Ok(());
        };
        if flow.finished {
            return Ok(());
        }
        if flow.spent {
            return Err(Gone::AWAY);
        }
        flow.write(&sse::keep_alive_chunk());
        if flow.gone_longer_than(self.window) {
            flow.spend();
            return Err(Gone::AWAY);
        }
        Ok(())
    }

    /// Ends the stream with the call's response (`None`: with no response,
    /// for a cancelled request). Delivered at once if a connection carries
    /// the stream, else kept for a resume within the window.
    pub(crate) fn finish(&self, data: Option<&str>) {
        let mut flow = lock(&self.flow);
        if flow.spent || flow.finished {
            return;
        }
        flow.finished = true;
        let mut bytes = Vec::new();
        if let Some(data) = data {
            flow.seq += 1;
            let seq = flow.seq;
            let event = sse::event_chunk_with_id(Some(&self.event_id(seq)), data);
            bytes.extend_from_slice(&event);
            flow.keep(seq, event);
        }
        if flow.writer.is_some() {
            bytes.extend_from_slice(sse::LAST_CHUNK);
            flow.write(&bytes);
            if flow.writer.is_some() {
                flow.spend();
            }
        } else if flow.gone_longer_than(self.window) || data.is_none() {
            flow.spend();
        }
    }

    /// Closes the connection carrying the stream, telling the client to
    /// reconnect after `retry` and resume; `false` when no connection
    /// carries it or the stream has ended.
    pub(crate) fn close_connection(&self, retry: Duration) -> bool {
        let mut flow = lock(&self.flow);
        if flow.writer.is_none() || flow.finished || flow.spent {
            return false;
        }
        let mut bytes = sse::retry_chunk(retry.as_millis());
        bytes.extend_from_slice(sse::LAST_CHUNK);
        flow.write(&bytes);
        flow.detach();
        true
    }

    /// Carries the stream on a new connection: `open` turns `request` into
    /// its writer, and is called only when there is something to resume
    /// (else the request comes back). Writes the stream's head and every
    /// kept event after `after`; ends the stream there if the call has
    /// finished, else the connection carries the rest. A connection still
    /// carrying the stream is ended first: only the client holds the ids,
    /// so one asking to resume has lost it, whether or not the host has
    /// noticed yet, and a message goes out on one connection only.
    pub(crate) fn resume<R>(
        &self,
        after: u64,
        request: R,
        open: impl FnOnce(R) -> Box<dyn Write + Send>,
    ) -> Result<(), R> {
        let mut flow = lock(&self.flow);
        if flow.spent {
            return Err(request);
        }
        if let Some(mut stale) = flow.writer.take() {
            let _ = sse::send(&mut *stale, sse::LAST_CHUNK);
        }
        flow.detached_at.get_or_insert_with(Instant::now);
        let mut bytes = sse::head(&[]);
        for (_, event) in flow.kept.iter().filter(|(seq, _)| *seq > after) {
            bytes.extend_from_slice(event);
        }
        if flow.finished {
            bytes.extend_from_slice(sse::LAST_CHUNK);
        }
        let mut writer = open(request);
        if sse::send(&mut *writer, &bytes).is_err() {
            return Ok(());
        }
        if flow.finished {
            flow.spend();
        } else {
            flow.writer = Some(writer);
            flow.detached_at = None;
        }
        Ok(())
    }

    /// Since when no connection carries it; `None` while one does, or while
    /// a write is under way (not waited for).
    fn detached_since(&self) -> Option<Instant> {
        self.flow.try_lock().ok().and_then(|flow| flow.detached_at)
    }

    /// Whether a resume could still find anything.
    fn worth_keeping(&self) -> bool {
        lock(&self.flow).worth_keeping(self.window)
    }

    fn forget(&self) {
        lock(&self.flow).spend();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io;

    /// A connection whose bytes the test reads back; `broken` fails writes.
    #[derive(Clone, Debug, Default)]
    struct Wire {
        bytes: Arc<Mutex<Vec<u8>>>,
        broken: Arc<Mutex<bool>>,
    }

    impl Write for Wire {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if *lock(&self.broken) {
                return Err(io::ErrorKind::BrokenPipe.into());
            }
            lock(&self.bytes).extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    impl Wire {
        fn text(&self) -> String {
            String::from_utf8(lock(&self.bytes).clone()).unwrap()
        }
        fn boxed(&self) -> Box<dyn Write + Send> {
            Box::new(self.clone())
        }
    }

    const WINDOW: Duration = Duration::from_secs(60);

    #[test]
    fn a_dropped_connection_is_resumed_after_the_last_id_the_client_saw() {
        let streams = CallStreams::default();
        let stream = streams.open("m1", WINDOW);
        let first = Wire::default();
        stream.begin(first.boxed(), true);
        stream.send("{\"n\":1}").unwrap();
        *lock(&first.broken) = true;
        // The client is gone; the call goes on and its events are kept.
        stream.send("{\"n\":2}").unwrap();
        stream.send("{\"n\":3}").unwrap();
        assert!(first.text().contains("id: 1-0\ndata:\n\n"));
        assert!(first.text().contains("id: 1-1\n"));

        let (found, after) = streams.find("m1", "1-1").unwrap();
        let second = Wire::default();
        found.resume(after, &second, Wire::boxed).unwrap();
        stream.finish(Some("{\"result\":{}}"));
        let text = second.text();
        assert!(!text.contains("\"n\":1"), "{text}");
        let two = text.find("id: 1-2\n").unwrap();
        let three = text.find("id: 1-3\n").unwrap();
        let result = text.find("id: 1-4\n").unwrap();
        assert!(two < three && three < result);
        assert!(text.ends_with("0\r\n\r\n"));
        // Delivered to the end: nothing is left to resume.
        assert!(streams.find("m1", "1-3").is_none());
    }

    #[test]
    fn a_finished_stream_is_replayed_and_ended_on_resume() {
        let streams = CallStreams::default();
        let stream = streams.open("m1", WINDOW);
        let first = Wire::default();
        stream.begin(first.boxed(), true);
        assert!(stream.close_connection(Duration::from_millis(250)));
        assert!(first.text().ends_with("retry: 250\n\n\r\n0\r\n\r\n"));
        assert!(!stream.close_connection(Duration::from_millis(250)));
        stream.send("{\"progress\":1}").unwrap();
        stream.finish(Some("{\"result\":1}"));
        let (found, after) = streams.find("m1", "1-0").unwrap();
        let second = Wire::default();
        found.resume(after, &second, Wire::boxed).unwrap();
        let text = second.text();
        assert!(text.starts_with("HTTP/1.1 200 OK\r\n"));
        assert!(text.contains("id: 1-1\n") && text.contains("id: 1-2\n"));
        assert!(text.ends_with("0\r\n\r\n"));
    }

    #[test]
    fn foreign_malformed_and_unknown_ids_are_refused() {
        let streams = CallStreams::default();
        let stream = streams.open("m1", WINDOW);
        stream.begin(Wire::default().boxed(), true);
        for id in ["", "1", "x-1", "1-x", "-1", "1-", "+1-1", "9-0", "1-1-1"] {
            assert!(streams.find("m1", id).is_none(), "{id}");
        }
        assert!(streams.find("m2", "1-0").is_none());
        assert!(streams.find("m1", " 1-0 ").is_some());
    }

    #[test]
    fn a_resume_takes_the_stream_from_a_connection_not_yet_seen_to_drop() {
        let streams = CallStreams::default();
        let stream = streams.open("m1", WINDOW);
        let stale = Wire::default();
        stream.begin(stale.boxed(), true);
        stream.send("{\"n\":1}").unwrap();
        let (found, after) = streams.find("m1", "1-0").unwrap();
        let fresh = Wire::default();
        found.resume(after, &fresh, Wire::boxed).unwrap();
        stream.send("{\"n\":2}").unwrap();
        // The stale connection was ended; each message after the resume
        // goes to the new one only.
        assert!(stale.text().ends_with("0\r\n\r\n"));
        assert!(!stale.text().contains("\"n\":2"));
        let text = fresh.text();
        assert!(text.contains("id: 1-1\n") && text.contains("id: 1-2\n"));
    }

    #[test]
    fn a_client_gone_past_the_window_stops_the_call_and_its_result_is_dropped() {
        let streams = CallStreams::default();
        let stream = streams.open("m1", Duration::ZERO);
        let wire = Wire::default();
        stream.begin(wire.boxed(), true);
        assert!(stream.close_connection(Duration::from_secs(1)));
        std::thread::sleep(Duration::from_millis(2));
        assert!(stream.send("{}").is_err());
        stream.finish(Some("{}"));
        assert!(streams.find("m1", "1-0").is_none());
    }

    #[test]
    fn a_stream_keeps_a_bounded_tail_and_always_its_last_event() {
        let streams = CallStreams::default();
        let stream = streams.open("m1", WINDOW);
        stream.begin(Wire::default().boxed(), true);
        assert!(stream.close_connection(Duration::from_secs(1)));
        let line = format!("\"{}\"", "x".repeat(64 * 1024));
        for _ in 0..40 {
            stream.send(&line).unwrap();
        }
        let big = format!("\"{}\"", "y".repeat(2 * MAX_KEPT_BYTES));
        stream.finish(Some(&big));
        let flow = lock(&stream.flow);
        assert_eq!(flow.kept.len(), 1);
        assert_eq!(flow.kept[0].0, 41);
    }

    #[test]
    fn opening_a_stream_never_waits_for_another_streams_write() {
        let streams = Arc::new(CallStreams::default());
        let busy = streams.open("m1", WINDOW);
        busy.begin(Wire::default().boxed(), true);
        assert!(busy.close_connection(Duration::from_secs(1)));
        // As if a write to a client that stopped reading were under way.
        let writing = lock(&busy.flow);
        let (done, opened) = std::sync::mpsc::channel();
        let opener = Arc::clone(&streams);
        std::thread::spawn(move || {
            let _ = done.send(opener.open("m1", WINDOW).id);
        });
        let id = opened.recv_timeout(Duration::from_secs(10));
        drop(writing);
        assert_eq!(id, Ok(2));
    }

    #[test]
    fn the_registry_is_bounded_by_evicting_the_longest_detached_stream() {
        let streams = CallStreams::default();
        let mut all = Vec::new();
        for _ in 0..MAX_KEPT_STREAMS + 10 {
            let stream = streams.open("m1", WINDOW);
            stream.begin(Wire::default().boxed(), true);
            assert!(stream.close_connection(Duration::from_secs(1)));
            all.push(stream);
        }
        assert_eq!(lock(&streams.registry).streams.len(), MAX_KEPT_STREAMS);
        assert!(streams.find("m1", "1-0").is_none());
        let newest = format!("{}-0", MAX_KEPT_STREAMS + 10);
        assert!(streams.find("m1", &newest).is_some());
    }
}
