//! Newline-delimited JSON over a child's pipes, one message per line each
//! way, each direction on a thread of its own.
//!
//! A thread reads the child's stdout and hands each message to a sink (a
//! channel, or a dispatcher that routes answers by id), so that no reader
//! of the conversation blocks on the pipe itself; another writes queued
//! lines to its stdin, so that a child that stops reading can stall that
//! thread but never its caller. Lines of stdout that are not JSON objects
//! are skipped: such programs should not print them, but some log to
//! stdout. A third thread, when stderr is piped, hands each stderr line to
//! a callback.

use std::io::{self, BufRead, BufReader, Write};
use std::process::{ChildStdin, ChildStdout};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread;

use serde_json::Value;

use crate::sync::lock;

#[cfg(feature = "client")]
/// The longest stderr line handed on whole; longer ones are cut (a child
/// that writes megabytes without a newline must not grow the reader).
const MAX_STDERR_LINE: usize = 4096;

/// The child's stdin: lines queued here are written in order by a thread.
pub(crate) struct Input {
    /// `None` once the input is closed.
    outgoing: Option<Sender<Vec<u8>>>,
    /// Why writing failed, once it has.
    broken: Arc<Mutex<Option<String>>>,
    /// Who the child is, for messages: "the agent", "the MCP server".
    who: &'static str,
}

impl Input {
    /// Starts the writer thread, named `thread`.
    pub(crate) fn start(stdin: ChildStdin, thread: String, who: &'static str) -> io::Result<Input> {
        let (outgoing, lines) = mpsc::channel::<Vec<u8>>();
        let broken = Arc::new(Mutex::new(None));
        let writer_broken = Arc::clone(&broken);
        thread::Builder::new()
            .name(thread)
            .spawn(move || write_lines(stdin, &lines, &writer_broken, who))?;
        Ok(Input {
            outgoing: Some(outgoing),
            broken,
            who,
        })
    }

    /// Queues one serialized message (without its newline).
    pub(crate) fn send_bytes(&self, mut line: Vec<u8>) -> Result<(), String> {
        if let Some(why) = lock(&self.broken).clone() {
            return Err(why);
        }
        line.push(b'\n');
        self.outgoing
            .as_ref()
            .and_then(|outgoing| outgoing.send(line).ok())
            .ok_or_else(|| format!("{}'s input is closed", self.who))
    }

    /// Closes the child's input once what is queued is written: how ACP
    /// and MCP's stdio transport say goodbye.
    pub(crate) fn close(&mut self) {
        self.outgoing.take();
    }
}

fn write_lines(
    mut stdin: ChildStdin,
    lines: &Receiver<Vec<u8>>,
    broken: &Mutex<Option<String>>,
    who: &str,
) {
    // Ends when the input is closed (the sender dropped), which drops
    // `stdin` and so closes the pipe.
    for line in lines {
        if let Err(err) = stdin.write_all(&line).and_then(|()| stdin.flush()) {
            *lock(broken) = Some(format!("{who}'s input broke: {err}"));
            return;
        }
    }
}

/// Starts a thread, named `thread`, that reads the child's stdout and hands
/// `sink` each message, then one `Err` saying why the output ended; it
/// stops early when `sink` answers `false`.
pub(crate) fn read_messages(
    stdout: ChildStdout,
    thread: String,
    who: &'static str,
    mut sink: impl FnMut(Result<Value, String>) -> bool + Send + 'static,
) -> io::Result<()> {
    thread::Builder::new().name(thread).spawn(move || {
        let mut reader = BufReader::new(stdout);
        let mut line = String::new();
        loop {
            line.clear();
            let item = match reader.read_line(&mut line) {
                Ok(0) => Err(format!("{who} closed its output (did it exit?)")),
                Ok(_) => match serde_json::from_str::<Value>(line.trim()) {
                    Ok(message) if message.is_object() => Ok(message),
                    // Not a message: a log line on the wrong stream.
                    _ => continue,
                },
                Err(err) => Err(format!("{who}'s output could not be read: {err}")),
            };
            let last = item.is_err();
            if !sink(item) || last {
                return;
            }
        }
    })?;
    Ok(())
}

#[cfg(feature = "client")]
/// Starts a thread, named `thread`, that hands `on_line` each line the
/// child writes to `stderr` (without its line break, invalid UTF-8
/// replaced, cut at 4 KiB), then calls `on_end` when the stream ends.
pub(crate) fn read_stderr(
    stderr: impl io::Read + Send + 'static,
    thread: String,
    mut on_line: impl FnMut(&str) + Send + 'static,
    on_end: impl FnOnce() + Send + 'static,
) -> io::Result<()> {
    thread::Builder::new().name(thread).spawn(move || {
        let mut reader = BufReader::new(stderr);
        let mut line = Vec::new();
        loop {
            line.clear();
            match io::Read::take(&mut reader, MAX_STDERR_LINE as u64).read_until(b'\n', &mut line) {
                Ok(0) | Err(_) => return on_end(),
                Ok(_) => {}
            }
            let text = String::from_utf8_lossy(&line);
            let text = text.trim_end_matches(['\n', '\r']);
            if !text.is_empty() {
                on_line(text);
            }
        }
    })?;
    Ok(())
}

#[cfg(all(test, feature = "client"))]
mod tests {
    use super::*;

    #[test]
    fn stderr_lines_arrive_one_by_one_without_breaks_and_long_ones_are_cut() {
        let long = "x".repeat(MAX_STDERR_LINE + 10);
        let input = format!("first\r\n\nsecond\n{long}\nlast");
        let (sender, lines) = mpsc::channel();
        read_stderr(
            io::Cursor::new(input.into_bytes()),
            "test-stderr".into(),
            move |line| sender.send(line.to_owned()).unwrap(),
            || {},
        )
        .unwrap();
        let lines: Vec<String> = lines.iter().collect();
        assert_eq!(lines[..2], ["first", "second"]);
        assert_eq!(lines[2].len(), MAX_STDERR_LINE, "cut at the bound");
        assert_eq!(lines[3..], ["xxxxxxxxxx", "last"]);
    }
}
