//! The child's output and its life, watched together: what it writes to
//! stdout goes to a sink one message at a time, and the moment it is gone
//! — its process exited, or it closed its stdout — the sink hears why,
//! once, with the exit status (or signal) and the last lines it wrote to
//! stderr.
//!
//! Three threads: one reads stdout in bounded lines (`lines.rs`), one
//! reads stderr (handing each line on, and keeping the last few), and one
//! watches the process. The end of stdout alone does not say the child is
//! gone, nor does its absence say it lives: a launcher (`npx`, a shell
//! script) that dies leaves its own child holding the pipe, so the output
//! never ends while nobody answers. So the watch looks at the process
//! every [`EXIT_POLL`] and at once when stdout ends, and the first of the
//! two ends the conversation. An exit first lets the reader hand on what
//! the child wrote before it died ([`DRAIN`]): an answer and the exit that
//! follows it must not race.
//!
//! Invariant: the sink hears [`Incoming::Gone`] at most once, and nothing
//! after it.

use std::collections::VecDeque;
use std::io::{self, BufReader};
use std::process::{ChildStderr, ChildStdout};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::group::Group;
use super::lines::{read_line, read_stderr_line, Line};
use crate::sync::lock;

/// How often the watch looks whether the child's process exited. The end
/// of its stdout wakes it at once; this bounds how long an exit goes
/// unnoticed when something else holds the pipe open.
const EXIT_POLL: Duration = Duration::from_millis(100);

/// How long an exit waits for the reader to reach the end of stdout, so
/// that what the child wrote before it exited is handed on first.
const DRAIN: Duration = Duration::from_millis(100);

/// How long the end of stdout waits for the process to exit (it usually
/// follows at once), so that the news carries its exit status.
const EXIT_SETTLE: Duration = Duration::from_millis(200);

/// How long the news of the end waits for stderr to end, so that the last
/// thing the child said makes it in (a grandchild may hold it open).
const STDERR_SETTLE: Duration = Duration::from_millis(100);

/// How many of the last stderr lines the news carries.
const TAIL_LINES: usize = 5;

/// The longest stderr line the news carries, in bytes (cut at a character).
const TAIL_LINE_BYTES: usize = 300;

/// A buffer grown past this for one long line is given back after it.
const KEPT_BUFFER: usize = 64 << 10;

/// What the child's output brings the sink.
#[derive(Debug)]
pub(crate) enum Incoming {
    /// One JSON object (lines that are not are skipped: some programs log
    /// to stdout).
    Message(Value),
    /// A line of `size` bytes ran past the limit of `limit` and was
    /// skipped; only its two ends are known (where a JSON-RPC message
    /// usually says what it is and which request it answers).
    Oversize {
        /// The bytes of the line, without its newline.
        size: u64,
        /// The limit in force.
        limit: usize,
        /// The first bytes of the line (at most 512).
        // Only the stdio client (feature `client`) reports the two ends;
        // the ACP driver names size and limit alone.
        #[cfg_attr(not(feature = "client"), allow(dead_code))]
        head: Vec<u8>,
        /// The last bytes of the line (at most 512).
        #[cfg_attr(not(feature = "client"), allow(dead_code))]
        tail: Vec<u8>,
    },
    /// The child is gone, and why: the last thing the sink hears.
    Gone(String),
}

/// Called with each item; `false` stops the delivery.
type Sink = Box<dyn FnMut(Incoming) -> bool + Send>;

/// How to watch one child.
pub(crate) struct Watch {
    /// Who the child is, for messages: "the agent", "the MCP server".
    pub(crate) who: &'static str,
    /// The stem of the threads' names.
    pub(crate) name: String,
    /// The longest stdout line taken, in bytes, read at each line (so a
    /// setter may change it while the child runs).
    pub(crate) max_line: Arc<AtomicUsize>,
    /// Each line the child writes to stderr, without its line break.
    pub(crate) on_stderr: Box<dyn FnMut(&str) + Send>,
}

impl Watch {
    /// Starts the threads that read `stdout` and `stderr` and watch the
    /// process of `group`, handing `sink` what arrives. The watch stops
    /// looking once `group` is dropped elsewhere; once the process has
    /// exited, it ends the rest of the group.
    pub(crate) fn start(
        self,
        group: &Arc<Mutex<Group>>,
        stdout: ChildStdout,
        stderr: ChildStderr,
        sink: impl FnMut(Incoming) -> bool + Send + 'static,
    ) -> io::Result<()> {
        let Watch {
            who,
            name,
            max_line,
            on_stderr,
        } = self;
        let shared = Arc::new(Shared {
            who,
            pid: lock(group).id(),
            sink: Mutex::new(Some(Box::new(sink))),
            state: Mutex::new(State::default()),
            changed: Condvar::new(),
        });
        let reader = Arc::clone(&shared);
        thread::Builder::new()
            .name(format!("{name}-output"))
            .spawn(move || reader.read_output(stdout, &max_line))?;
        let errors = Arc::clone(&shared);
        thread::Builder::new()
            .name(format!("{name}-stderr"))
            .spawn(move || errors.read_stderr(stderr, on_stderr))?;
        let watched = Arc::downgrade(group);
        thread::Builder::new()
            .name(format!("{name}-exit"))
            .spawn(move || shared.watch(&watched))?;
        Ok(())
    }
}

/// What the three threads share.
struct Shared {
    who: &'static str,
    pid: u32,
    /// `None` once the sink has heard the end or asked to stop.
    sink: Mutex<Option<Sink>>,
    state: Mutex<State>,
    /// Signalled when stdout or stderr ends.
    changed: Condvar,
}

#[derive(Default)]
struct State {
    /// Why stdout ended, once it has.
    output_end: Option<String>,
    stderr_ended: bool,
    /// The last lines of stderr, oldest first.
    tail: VecDeque<String>,
}

impl Shared {
    /// Hands `item` to the sink; `false` once it takes no more.
    fn deliver(&self, item: Incoming) -> bool {
        let mut sink = lock(&self.sink);
        let Some(deliver) = sink.as_mut() else {
            return false;
        };
        let more = deliver(item);
        if !more {
            *sink = None;
        }
        more
    }

    /// Tells the sink the child is gone (the first time only).
    fn report(&self, why: &str) {
        let news = self.with_tail(why);
        if let Some(mut deliver) = lock(&self.sink).take() {
            deliver(Incoming::Gone(news));
        }
    }

    /// `why`, with the last lines of stderr once stderr has had a moment
    /// to end.
    fn with_tail(&self, why: &str) -> String {
        let state = lock(&self.state);
        let (state, _) = self
            .changed
            .wait_timeout_while(state, STDERR_SETTLE, |state| !state.stderr_ended)
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let lines: Vec<&str> = state.tail.iter().map(String::as_str).collect();
        match lines[..] {
            [] => why.to_owned(),
            [line] => format!("{why}; the last line it wrote to stderr: {line}"),
            _ => format!(
                "{why}; the last {} lines it wrote to stderr: {}",
                lines.len(),
                lines.join(" | ")
            ),
        }
    }

    fn read_output(&self, stdout: ChildStdout, max_line: &AtomicUsize) {
        let mut reader = BufReader::new(stdout);
        let mut line = Vec::new();
        let end = loop {
            let limit = max_line.load(Ordering::Relaxed);
            let item = match read_line(&mut reader, &mut line, limit) {
                Ok(Line::Whole) => match serde_json::from_slice::<Value>(&line) {
                    Ok(message) if message.is_object() => Incoming::Message(message),
                    // Not a message: a log line on the wrong stream.
                    _ => continue,
                },
                Ok(Line::Oversize { size, head, tail }) => Incoming::Oversize {
                    size,
                    limit,
                    head,
                    tail,
                },
                Ok(Line::End) => break format!("{} closed its output", self.who),
                Err(err) => break format!("{}'s output could not be read: {err}", self.who),
            };
            if line.capacity() > KEPT_BUFFER {
                line = Vec::new();
            }
            if !self.deliver(item) {
                return;
            }
        };
        lock(&self.state).output_end = Some(end);
        self.changed.notify_all();
    }

    fn read_stderr(&self, stderr: ChildStderr, mut on_line: Box<dyn FnMut(&str) + Send>) {
        let mut reader = BufReader::new(stderr);
        let mut line = Vec::new();
        while read_stderr_line(&mut reader, &mut line) {
            let text = String::from_utf8_lossy(&line);
            let text = text.trim_end_matches(['\n', '\r']);
            if text.is_empty() {
                continue;
            }
            on_line(text);
            let mut state = lock(&self.state);
            if state.tail.len() == TAIL_LINES {
                state.tail.pop_front();
            }
            state.tail.push_back(cut(text, TAIL_LINE_BYTES).to_owned());
        }
        lock(&self.state).stderr_ended = true;
        self.changed.notify_all();
    }

    /// Waits up to `wait` for stdout to end; why it ended, once it has.
    fn output_end(&self, wait: Duration) -> Option<String> {
        let state = lock(&self.state);
        let (state, _) = self
            .changed
            .wait_timeout_while(state, wait, |state| state.output_end.is_none())
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        state.output_end.clone()
    }

    /// The watch: the first of the process's exit and the end of stdout
    /// ends the conversation.
    fn watch(&self, group: &Weak<Mutex<Group>>) {
        let mut output_ended_at: Option<Instant> = None;
        loop {
            let output_end = match output_ended_at {
                // Polled briefly while the exit that usually follows the
                // end of the output is awaited.
                Some(_) => {
                    thread::sleep(EXIT_POLL / 10);
                    self.output_end(Duration::ZERO)
                }
                None => self.output_end(EXIT_POLL),
            };
            // The owner dropped the group (and ended it): no one listens.
            let Some(group) = group.upgrade() else { return };
            let status = lock(&group).exited();
            if let Some(status) = status {
                if output_end.is_none() {
                    self.output_end(DRAIN);
                }
                self.report(&format!(
                    "{}'s process {} exited ({status})",
                    self.who, self.pid
                ));
                // What it started may hold the pipes and run on: end it.
                lock(&group).end();
                return;
            }
            if let Some(why) = output_end {
                let since = *output_ended_at.get_or_insert_with(Instant::now);
                if since.elapsed() >= EXIT_SETTLE {
                    self.report(&format!("{why}, though its process {} runs on", self.pid));
                    return;
                }
            }
        }
    }
}

/// `text` cut to at most `max` bytes, at a character boundary.
fn cut(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_stderr_lines_are_cut_at_a_character_boundary() {
        assert_eq!(cut("short", 10), "short");
        assert_eq!(cut("abcdef", 3), "abc");
        // "é" is two bytes: a cut inside it backs off to before it.
        assert_eq!(cut("aé", 2), "a");
    }
}
