//! The relay in this process over in-memory pipes: a test writes lines in
//! and reads the lines the relay writes, as a stdio MCP client would.

use std::io::{self, BufRead, Read, Write};
use std::sync::mpsc::{self, Receiver, Sender};
use std::thread;
use std::time::Duration;

use serde_json::{json, Value};
use toolhost::relay::{Ending, Relay};
use toolhost::ToolSession;

use crate::PATIENCE;

/// An input the test writes lines into; ends when dropped.
struct PipeReader {
    chunks: Receiver<Vec<u8>>,
    buf: Vec<u8>,
    at: usize,
}

impl Read for PipeReader {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let available = self.fill_buf()?;
        let n = available.len().min(out.len());
        out[..n].copy_from_slice(&available[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for PipeReader {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.at == self.buf.len() {
            match self.chunks.recv() {
                Ok(chunk) => {
                    self.buf = chunk;
                    self.at = 0;
                }
                Err(_) => return Ok(&[]),
            }
        }
        Ok(&self.buf[self.at..])
    }

    fn consume(&mut self, n: usize) {
        self.at += n;
    }
}

/// An output that hands each line written to the test.
struct LineWriter {
    lines: Sender<String>,
    partial: Vec<u8>,
}

impl Write for LineWriter {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.partial.extend_from_slice(bytes);
        while let Some(end) = self.partial.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = self.partial.drain(..=end).collect();
            let _ = self
                .lines
                .send(String::from_utf8_lossy(&line[..end]).into_owned());
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A relay running on its own thread, and the test's ends of its pipes.
pub(crate) struct Bridge {
    pub(crate) input: Option<Sender<Vec<u8>>>,
    pub(crate) output: Receiver<String>,
    ending: Receiver<Ending>,
    /// Messages read while looking for something else.
    pub(crate) skipped: Vec<Value>,
}

impl Bridge {
    pub(crate) fn start(session: &ToolSession) -> Bridge {
        let relay = Relay::new(&session.url(), &session.authorization()).expect("relay");
        let (input, chunks) = mpsc::channel();
        let (lines, output) = mpsc::channel();
        let (ended, ending) = mpsc::channel();
        let reader = PipeReader {
            chunks,
            buf: Vec::new(),
            at: 0,
        };
        let writer = LineWriter {
            lines,
            partial: Vec::new(),
        };
        thread::spawn(move || {
            let _ = ended.send(relay.run(reader, writer));
        });
        Bridge {
            input: Some(input),
            output,
            ending,
            skipped: Vec::new(),
        }
    }

    pub(crate) fn send(&self, message: &Value) {
        self.send_raw(format!("{message}\n").as_bytes());
    }

    pub(crate) fn send_raw(&self, bytes: &[u8]) {
        self.input
            .as_ref()
            .expect("input open")
            .send(bytes.to_vec())
            .expect("relay reading");
    }

    /// The next line, which must be one JSON-RPC message.
    pub(crate) fn next(&self) -> Value {
        let line = self
            .output
            .recv_timeout(PATIENCE)
            .unwrap_or_else(|e| panic!("no line from the relay ({e:?})"));
        let message: Value =
            serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
        assert_eq!(message["jsonrpc"], "2.0", "{line}");
        message
    }

    /// The response to `id`; what came before it is kept in `skipped`.
    pub(crate) fn response(&mut self, id: &Value) -> Value {
        loop {
            let message = self.next();
            if message.get("method").is_none() && message["id"] == *id {
                return message;
            }
            self.skipped.push(message);
        }
    }

    pub(crate) fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.response(&json!(id))
    }

    /// `initialize` in `revision` declaring `capabilities`, then
    /// `notifications/initialized`.
    pub(crate) fn initialize(&mut self, revision: &str, capabilities: Value) -> Value {
        let answer = self.request(
            0,
            "initialize",
            json!({"protocolVersion": revision, "capabilities": capabilities,
                "clientInfo": {"name": "bridge-test", "version": "1"}}),
        );
        assert_eq!(answer["result"]["protocolVersion"], revision, "{answer}");
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        answer
    }

    pub(crate) fn close_input(&mut self) {
        self.input.take();
    }

    pub(crate) fn ending(&self) -> Ending {
        self.ending.recv_timeout(PATIENCE).expect("the relay ended")
    }

    /// The next line, if one arrives within `window`.
    pub(crate) fn quiet_for(&self, window: Duration) -> Option<String> {
        self.output.recv_timeout(window).ok()
    }
}
