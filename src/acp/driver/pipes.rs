//! JSON-RPC over the agent's pipes: one message per line each way.
//!
//! The reading and writing threads are the shared ones of
//! [`crate::child`]; here the agent's messages go into a channel, so that
//! every wait of the driver has a deadline.

use std::process::{ChildStdin, ChildStdout};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::Instant;

use serde_json::{json, Value};

use crate::child::{read_messages, Input};

/// Who the child is, in the messages of a broken pipe.
const WHO: &str = "the agent";

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
    input: Input,
    incoming: Receiver<Result<Value, String>>,
    next_id: u64,
}

impl Pipes {
    /// Starts the reader and writer threads.
    pub(super) fn start(stdin: ChildStdin, stdout: ChildStdout) -> std::io::Result<Pipes> {
        let (sender, incoming) = mpsc::channel();
        read_messages(stdout, "acp-agent-output".into(), WHO, move |item| {
            sender.send(item).is_ok()
        })?;
        let input = Input::start(stdin, "acp-agent-input".into(), WHO)?;
        Ok(Pipes {
            input,
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
        // Writing a Value into a Vec cannot fail.
        let line = serde_json::to_vec(message).unwrap_or_default();
        self.input.send_bytes(line).map_err(Silence::Closed)
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
        self.input.close();
    }
}
