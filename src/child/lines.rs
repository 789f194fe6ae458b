//! Lines over a child's pipes: its stdin written by a thread of its own,
//! and its stdout and stderr read one bounded line at a time.
//!
//! A thread writes queued lines to the child's stdin, so that a child that
//! stops reading can stall that thread but never its caller. Reading is
//! bounded: a line of stdout past the limit is skipped to its newline,
//! counted but never buffered whole, so a child that writes a huge line
//! (or an endless one) costs the reader at most the limit; a line of stderr
//! past [`MAX_STDERR_LINE`] is cut into pieces. What the lines mean is the
//! caller's business (`watch.rs` reads them).

use std::io::{self, BufRead, Write};
use std::process::ChildStdin;
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread;

use crate::sync::lock;

/// The longest stderr line handed on whole; longer ones are cut (a child
/// that writes megabytes without a newline must not grow the reader).
pub(crate) const MAX_STDERR_LINE: usize = 4096;

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

/// How many bytes of each end of a skipped line are kept: enough for the
/// members a JSON-RPC message puts first or last (`jsonrpc`, `id`,
/// `method`), which say what it was.
pub(crate) const EDGE: usize = 512;

/// What one bounded read of a line came to.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Line {
    /// A line within the limit is in the buffer, without its newline (the
    /// stream's last line may have none).
    Whole,
    /// A line ran past the limit: it was skipped, and the buffer holds
    /// nothing of it.
    Oversize {
        /// Its bytes, without its newline.
        size: u64,
        /// Its first [`EDGE`] bytes.
        head: Vec<u8>,
        /// Its last [`EDGE`] bytes.
        tail: Vec<u8>,
    },
    /// The stream ended.
    End,
}

/// Reads the next line of `reader` into `line` (cleared first), keeping at
/// most `limit` bytes: a longer line is read to its newline and counted,
/// not kept, but for its two ends. The buffer never grows past `limit`,
/// whatever the child writes.
pub(crate) fn read_line(
    reader: &mut impl BufRead,
    line: &mut Vec<u8>,
    limit: usize,
) -> io::Result<Line> {
    line.clear();
    let mut size: u64 = 0;
    // The ends of a line past the limit, once it is.
    let mut skipped: Option<(Vec<u8>, Vec<u8>)> = None;
    loop {
        let available = match reader.fill_buf() {
            Ok(available) => available,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(err),
        };
        let newline = available.iter().position(|&byte| byte == b'\n');
        let piece = &available[..newline.unwrap_or(available.len())];
        let ended = newline.is_some() || available.is_empty();
        size += piece.len() as u64;
        match &mut skipped {
            Some((_, tail)) => keep_tail(tail, piece),
            None if size > limit as u64 => {
                let mut head = line[..line.len().min(EDGE)].to_vec();
                head.extend_from_slice(&piece[..piece.len().min(EDGE - head.len())]);
                let mut tail = line[line.len().saturating_sub(EDGE)..].to_vec();
                keep_tail(&mut tail, piece);
                line.clear();
                skipped = Some((head, tail));
            }
            None => keep(line, piece, limit),
        }
        let used = piece.len() + usize::from(newline.is_some());
        reader.consume(used);
        if ended {
            return Ok(match skipped {
                Some((head, tail)) => Line::Oversize { size, head, tail },
                None if size == 0 && newline.is_none() => Line::End,
                None => Line::Whole,
            });
        }
    }
}

/// Appends `piece` to `tail`, keeping its last [`EDGE`] bytes.
fn keep_tail(tail: &mut Vec<u8>, piece: &[u8]) {
    let piece = &piece[piece.len().saturating_sub(EDGE)..];
    tail.extend_from_slice(piece);
    if tail.len() > EDGE {
        tail.drain(..tail.len() - EDGE);
    }
}

/// Appends `piece` to `line`, growing it as a `Vec` does but never past
/// `limit` (doubling a 40 MiB buffer for a line of 41 would cost 80).
fn keep(line: &mut Vec<u8>, piece: &[u8], limit: usize) {
    let needed = line.len() + piece.len();
    if needed > line.capacity() {
        let grown = (line.capacity() * 2).max(needed).min(limit.max(needed));
        line.reserve_exact(grown - line.len());
    }
    line.extend_from_slice(piece);
}

/// Reads the next line of stderr into `line` (cleared first), cut at
/// [`MAX_STDERR_LINE`] bytes (the rest comes as the next line); `false` at
/// the end of the stream or on an error.
pub(crate) fn read_stderr_line(reader: &mut impl BufRead, line: &mut Vec<u8>) -> bool {
    line.clear();
    matches!(
        io::Read::take(reader, MAX_STDERR_LINE as u64).read_until(b'\n', line),
        Ok(read) if read > 0
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(input: &[u8], limit: usize) -> Vec<Result<String, u64>> {
        let mut reader = io::BufReader::with_capacity(7, input);
        let mut line = Vec::new();
        let mut out = Vec::new();
        loop {
            match read_line(&mut reader, &mut line, limit).unwrap() {
                Line::Whole => {
                    assert!(line.capacity() <= limit.max(7), "{}", line.capacity());
                    out.push(Ok(String::from_utf8(line.clone()).unwrap()));
                }
                Line::Oversize { size, head, tail } => {
                    assert!(line.is_empty(), "nothing of a skipped line is kept");
                    assert!(head.len() <= EDGE && tail.len() <= EDGE);
                    out.push(Err(size));
                }
                Line::End => return out,
            }
        }
    }

    #[test]
    fn a_line_past_the_limit_is_skipped_and_counted_and_its_neighbours_arrive_whole() {
        let long = "x".repeat(100);
        let input = format!("{{\"a\":1}}\n{long}\n\nexactly-16-bytes\n17-bytes-is-over!\nlast");
        assert_eq!(
            lines(input.as_bytes(), 16),
            [
                Ok("{\"a\":1}".to_owned()),
                Err(100),
                Ok(String::new()),
                Ok("exactly-16-bytes".to_owned()),
                Err(17),
                Ok("last".to_owned()),
            ]
        );
        // Within the limit, nothing is skipped.
        assert!(lines(input.as_bytes(), 1000).iter().all(Result::is_ok));
    }

    #[test]
    fn a_last_line_past_the_limit_without_a_newline_is_still_reported() {
        assert_eq!(
            lines(b"short\nlonger-than-ten", 10),
            [Ok("short".to_owned()), Err(15)]
        );
        assert_eq!(lines(b"", 10), []);
    }

    #[test]
    fn a_skipped_line_keeps_its_two_ends_and_nothing_between() {
        let middle = "m".repeat(10 * EDGE);
        let line = format!("{{\"id\":7,{middle}\"last\":1}}\nnext\n");
        let mut reader = io::BufReader::with_capacity(100, line.as_bytes());
        let mut buffer = Vec::new();
        let Line::Oversize { size, head, tail } =
            read_line(&mut reader, &mut buffer, 2 * EDGE).unwrap()
        else {
            panic!("past the limit");
        };
        assert_eq!(size as usize, line.find('\n').unwrap());
        assert_eq!(head.len(), EDGE);
        assert!(head.starts_with(b"{\"id\":7,mmm"));
        assert_eq!(tail.len(), EDGE);
        assert!(tail.ends_with(b"mmm\"last\":1}"));
        // A short line past a tiny limit keeps what there is of it.
        let Line::Oversize { head, tail, .. } =
            read_line(&mut io::Cursor::new(b"abcdef\n"), &mut buffer, 3).unwrap()
        else {
            panic!("past the limit");
        };
        assert_eq!(
            (head.as_slice(), tail.as_slice()),
            (&b"abcdef"[..], &b"abcdef"[..])
        );
        assert_eq!(
            read_line(&mut reader, &mut buffer, 2 * EDGE).unwrap(),
            Line::Whole
        );
        assert_eq!(buffer, b"next");
    }

    #[test]
    fn stderr_lines_are_cut_at_the_bound() {
        let long = "x".repeat(MAX_STDERR_LINE + 10);
        let input = format!("first\n{long}\nlast");
        let mut reader = io::BufReader::new(input.as_bytes());
        let mut line = Vec::new();
        let mut got = Vec::new();
        while read_stderr_line(&mut reader, &mut line) {
            got.push(String::from_utf8(line.clone()).unwrap());
        }
        assert_eq!(got.len(), 4);
        assert_eq!(got[0], "first\n");
        assert_eq!(got[1].len(), MAX_STDERR_LINE, "cut at the bound");
        assert_eq!(got[2..], ["xxxxxxxxxx\n", "last"]);
    }
}
