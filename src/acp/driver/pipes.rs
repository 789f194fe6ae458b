//! JSON-RPC over the agent's pipes: one message per line each way.
//!
//! The reading and writing threads are the shared ones of
//! [`crate::child`]; here the agent's messages go into a channel, so that
//! every wait of the driver has a deadline, and the news that the agent is
//! gone (its exit status, its last stderr lines) ends the wait at once.
//!
//! The channel holds at most [`QUEUED`] messages, between turns as during
//! them: when it is full the reader thread waits, stops reading the
//! agent's stdout, and the agent blocks on its full pipe until the driver
//! reads again (its next request or turn). Back-pressure rather than
//! dropping, because nothing the agent says may be lost unseen: an answer,
//! a permission request or the last updates of a turn can sit behind a
//! burst, and ACP has no way to tell the agent a message was dropped. The
//! cost is only the agent's, which waits — as a process writing to any
//! pipe nobody reads does. What a flooding agent can make the driver hold
//! is therefore at most [`QUEUED`] messages in the channel, one more in the
//! reader's hands and one line in its buffer, each within
//! [`Agent::set_max_message_bytes`](super::Agent::set_max_message_bytes)
//! (before, 200,000 lines of 1 KiB written between turns grew a driver
//! from 2 to 782 MiB, and it kept them).
//!
//! This bounds only the driver's sink: the same [`Watch`] serves the stdio
//! MCP client, whose sink routes each message on the reader thread itself
//! and never waits. The news that the agent is gone goes through the same
//! channel, after what the agent wrote before it: a full channel holds it
//! back (and with it the watch thread, before it ends what the agent left
//! running) only until the driver reads again, and dropping the [`Agent`](super::Agent)
//! first stops the reading ([`Pipes::close`]), which frees both.
//!
//! The agent's stderr is piped, not inherited: each line is copied to this
//! program's stderr as it comes (so the user sees what they saw before),
//! or handed to the application's hook, and the last few go into the
//! error when the agent dies — where the reason usually is (a missing key,
//! a login needed, a crash).

use std::process::{ChildStderr, ChildStdin, ChildStdout};
use std::sync::atomic::AtomicUsize;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::child::{Group, Incoming, Input, Watch};
use crate::model::jsonrpc::{self, RpcError};
use crate::sync::lock;

/// Who the child is, in the messages of a broken pipe.
const WHO: &str = "the agent";

/// How long a broken input waits for the news of the agent's end, which
/// says more (its exit status, its stderr) than the broken pipe.
const GONE_WAIT: Duration = Duration::from_millis(500);

/// How many of the agent's messages wait for the driver at most. The
/// driver handles one message at a time and the agent's pipe buffers
/// what it writes meanwhile (64 KiB on Linux), so a queue only smooths
/// the hand-over between the two threads: a few suffice, and each costs
/// up to a message's limit (16 MiB by default) when the agent writes
/// large ones.
const QUEUED: usize = 8;

/// Where the agent's stderr lines go, once the application says
/// ([`Agent::on_stderr`](super::Agent::on_stderr)); this program's stderr
/// until then.
pub(super) type StderrHook = Arc<Mutex<Option<Box<dyn FnMut(&str) + Send>>>>;

/// What waiting for the agent came to, when no message came.
#[derive(Debug)]
pub(super) enum Silence {
    /// The deadline passed.
    Timeout,
    /// The agent's output ended or failed, its process exited, or its
    /// input broke: it is gone.
    Closed(String),
    /// The agent wrote a line of `size` bytes, past the limit.
    TooLarge { size: u64, limit: usize },
}

/// The two directions of the conversation with the agent.
pub(super) struct Pipes {
    input: Input,
    incoming: Receiver<Incoming>,
    /// Why the agent is gone, once that news came: every later wait ends
    /// with it too.
    gone: OnceLock<String>,
    next_id: u64,
}

impl Pipes {
    /// Starts the threads on the agent's pipes and the watch on its
    /// process; a line past `max_line` bytes is skipped.
    pub(super) fn start(
        group: &Arc<Mutex<Group>>,
        (stdin, stdout, stderr): (ChildStdin, ChildStdout, ChildStderr),
        max_line: Arc<AtomicUsize>,
        stderr_hook: StderrHook,
    ) -> std::io::Result<Pipes> {
        let (sender, incoming) = mpsc::sync_channel(QUEUED);
        let watch = Watch {
            who: WHO,
            name: "acp-agent".into(),
            max_line,
            on_stderr: Box::new(move |line| match lock(&stderr_hook).as_mut() {
                Some(hook) => hook(line),
                // As if the agent shared this program's stderr.
                None => eprintln!("{line}"),
            }),
        };
        watch.start(group, stdout, stderr, move |item| sender.send(item).is_ok())?;
        let input = Input::start(stdin, "acp-agent-input".into(), WHO)?;
        Ok(Pipes {
            input,
            incoming,
            gone: OnceLock::new(),
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
        self.input
            .send_bytes(line)
            .map_err(|broken| Silence::Closed(self.why_gone(broken)))
    }

    /// Why the agent is gone, given that its input broke for `broken`:
    /// the news of its end, should it come soon (what else it said is of
    /// no use now), else `broken`.
    fn why_gone(&self, broken: String) -> String {
        let deadline = Instant::now() + GONE_WAIT;
        loop {
            if let Some(why) = self.gone.get() {
                return why.clone();
            }
            match self.recv(deadline) {
                Err(Silence::Closed(why)) => return why,
                Err(Silence::Timeout) => return broken,
                Ok(_) | Err(Silence::TooLarge { .. }) => {}
            }
        }
    }

    /// Sends request `id`.
    pub(super) fn request(&self, id: u64, method: &str, params: Value) -> Result<(), Silence> {
        self.send(&jsonrpc::request(id, method, params))
    }

    /// Sends a notification.
    pub(super) fn notify(&self, method: &str, params: Value) -> Result<(), Silence> {
        self.send(&jsonrpc::notification(method, Some(params)))
    }

    /// Answers the agent's request `id`.
    pub(super) fn answer(&self, id: &Value, answer: Result<Value, RpcError>) {
        let message = match answer {
            Ok(result) => jsonrpc::success(id, result),
            Err(error) => jsonrpc::failure(Some(id), &error),
        };
        // A broken input shows at the next wait, as the end of the output.
        let _ = self.send(&message);
    }

    /// The next message, waiting at most until `deadline`.
    pub(super) fn recv(&self, deadline: Instant) -> Result<Value, Silence> {
        if let Some(why) = self.gone.get() {
            return Err(Silence::Closed(why.clone()));
        }
        let left = deadline.saturating_duration_since(Instant::now());
        match self.incoming.recv_timeout(left) {
            Ok(Incoming::Message(message)) => Ok(message),
            Ok(Incoming::Oversize { size, limit, .. }) => Err(Silence::TooLarge { size, limit }),
            Ok(Incoming::Gone(why)) => Err(Silence::Closed(self.gone.get_or_init(|| why).clone())),
            Err(RecvTimeoutError::Timeout) => Err(Silence::Timeout),
            Err(RecvTimeoutError::Disconnected) => {
                Err(Silence::Closed("the agent's output ended".into()))
            }
        }
    }

    /// Closes the agent's input once what is queued is written (how an ACP
    /// client says goodbye), and stops taking its output: the reader
    /// thread waiting on a full channel ends, and closes the agent's
    /// stdout, so an agent blocked writing to it is not kept blocked
    /// through the grace it gets to leave.
    pub(super) fn close(&mut self) {
        self.input.close();
        // A receiver whose sender is already gone: dropping the old one
        // disconnects the reader's sender.
        let (_, nothing) = mpsc::sync_channel(0);
        drop(std::mem::replace(&mut self.incoming, nothing));
    }
}
