//! JSON-RPC over the agent's pipes: one message per line each way.
//!
//! A thread reads the agent's stdout into a channel, so that every wait
//! has a deadline; another writes to its stdin, so that an agent that
//! stops reading can stall that thread but never the driver. Lines that
//! are not JSON objects are skipped: agents should not print them, but
//! some log to stdout.

use std::io::{BufRead, BufReader, Write};
use std::process::{ChildStdin, ChildStdout};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Instant;

use serde_json::{json, Value};

use crate::sync::lock;

/// What waiting for the agent came to, when no message came.
#[derive(Debug)]
pub(super) enum Silence {
    /// The deadline passed.
    Timeout,
    /// The agent's output ended or failed, or its input broke: it is gone.
    Closed(String),
}

/// The two directions of the conversation with the agent.
pub(super) struct Pipes {
    /// `None` once the input is closed.
    outgoing: Option<Sender<Vec<u8>>>,
    /// Why writing failed, once it has.
    broken: Arc<Mutex<Option<String>>>,
    incoming: Receiver<Result<Value, String>>,
    next_id: u64,
}

impl Pipes {
    /// Starts the reader and writer threads.
    pub(super) fn start(stdin: ChildStdin, stdout: ChildStdout) -> std::io::Result<Pipes> {
        let (sender, incoming) = mpsc::channel();
        thread::Builder::new()
            .name("acp-agent-output".into())
            .spawn(move || read_lines(stdout, &sender))?;
        let (outgoing, lines) = mpsc::channel::<Vec<u8>>();
        let broken = Arc::new(Mutex::new(None));
        let writer_broken = Arc::clone(&broken);
        thread::Builder::new()
            .name("acp-agent-input".into())
            .spawn(move || write_lines(stdin, &lines, &writer_broken))?;
        Ok(Pipes {
            outgoing: Some(outgoing),
            broken,
            incoming,
            next_id: 0,
        })
    }

    /// A fresh request id.
    pub(super) fn next_id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    /// Queues `message` for the agent.
    pub(super) fn send(&self, message: &Value) -> Result<(), Silence> {
        if let Some(why) = lock(&self.broken).clone() {
            return Err(Silence::Closed(why));
        }
        let mut line = serde_json::to_vec(message).unwrap_or_default();
        line.push(b'\n');
        self.outgoing
            .as_ref()
            .and_then(|outgoing| outgoing.send(line).ok())
            .ok_or_else(|| Silence::Closed("the agent's input is closed".into()))
    }

    /// Sends request `id`.
    pub(super) fn request(&self, id: u64, method: &str, params: Value) -> Result<(), Silence> {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
    }

    /// Answers the agent's request `id`.
    pub(super) fn answer(&self, id: &Value, answer: Result<Value, (i64, String)>) {
        let message = match answer {
            Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
            Err((code, message)) => {
                json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
            }
        };
        // A broken input shows at the next wait, as the end of the output.
        let _ = self.send(&message);
    }

    /// The next message, waiting at most until `deadline`.
    pub(super) fn recv(&self, deadline: Instant) -> Result<Value, Silence> {
        let left = deadline.saturating_duration_since(Instant::now());
        match self.incoming.recv_timeout(left) {
            Ok(Ok(message)) => Ok(message),
            Ok(Err(why)) => Err(Silence::Closed(why)),
            Err(RecvTimeoutError::Timeout) => Err(Silence::Timeout),
            Err(RecvTimeoutError::Disconnected) => {
                Err(Silence::Closed("the agent's output ended".into()))
            }
        }
    }

    /// Closes the agent's input once what is queued is written: how an ACP
    /// client says goodbye.
    pub(super) fn close_input(&mut self) {
        self.outgoing.take();
    }
}

fn read_lines(stdout: ChildStdout, sender: &Sender<Result<Value, String>>) {
    let mut reader = BufReader::new(stdout);
    let mut line = String::new();
    loop {
        line.clear();
        let item = match reader.read_line(&mut line) {
            Ok(0) => Err("the agent closed its output (did it exit?)".to_owned()),
            Ok(_) => match serde_json::from_str::<Value>(line.trim()) {
                Ok(message) if message.is_object() => Ok(message),
                // Not a message: a log line on the wrong stream.
                _ => continue,
            },
            Err(err) => Err(format!("the agent's output could not be read: {err}")),
        };
        let last = item.is_err();
        if sender.send(item).is_err() || last {
            return;
        }
    }
}

fn write_lines(mut stdin: ChildStdin, lines: &Receiver<Vec<u8>>, broken: &Mutex<Option<String>>) {
    // Ends when the driver closes the input (dropping the sender), which
    // drops `stdin` and so closes the pipe.
    for line in lines {
        if let Err(err) = stdin.write_all(&line).and_then(|()| stdin.flush()) {
            *lock(broken) = Some(format!("the agent's input broke: {err}"));
            return;
        }
    }
}
