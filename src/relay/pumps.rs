//! The relay's pumps, the threads that move its messages: one reads the
//! input, one coordinates, one per request in flight carries it upstream
//! and its answer back (kept for the next request: `pool.rs`), and one
//! listens on the MCP session's standalone stream.
//!
//! Every line to the output goes through [`Output`], one whole line under
//! one lock, so that answers arriving on several threads at once never
//! interleave. The coordinator alone decides when the relay ends; other
//! threads tell it through its channel.
//!
//! Invariant: nothing but complete JSON-RPC messages is written to the
//! output, and nothing at all once the relay has ended.

use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::pool::Workers;
use super::Ending;
use crate::client::passthrough::{request_ids, Link, Passthrough, Unanswered};
use crate::client::{CancelHandle, ClientError};
use crate::model::cancelled;
use crate::model::jsonrpc::{
    self, Message, RpcError, INTERNAL_ERROR, INVALID_REQUEST, PARSE_ERROR, REQUEST_TIMEOUT,
    SERVER_ERROR,
};
use crate::model::method::Method;
use crate::sync::lock;

/// The code of "the session has ended": the one the official SDKs name
/// "connection closed", which is what it amounts to for the client.
const SESSION_ENDED: i64 = SERVER_ERROR;

/// What the client is told once the session is gone. It names no
/// credential on purpose: several agents start an OAuth login when a server
/// seems to want one.
const SESSION_ENDED_MESSAGE: &str = "this toolhost tool session has ended (the application that \
    served it closed it or exited), so its tools are no longer available; the stdio server exits now";

/// How long requests still in flight when the input ends may take to
/// bring their answers: long enough for a script that writes its requests
/// and closes its end, short enough for a client that is shutting down.
const INPUT_END_GRACE: Duration = Duration::from_secs(1);

/// How often the relay looks whether the requests in flight are done.
const IN_FLIGHT_POLL: Duration = Duration::from_millis(10);

/// How long the standalone stream waits before it is opened again after
/// the server ended it.
const RELISTEN_DELAY: Duration = Duration::from_secs(1);

/// How long after a host that still accepted a connection it is asked
/// again, when an exchange failed: a host that exits closes its kept
/// connections and its listener in one sweep, in no order the relay can
/// rely on.
const PROBE_AGAIN: Duration = Duration::from_millis(50);

/// What the coordinator hears.
enum Event {
    /// One line of input.
    Line(Vec<u8>),
    /// The input ended, or could not be read.
    InputEnded,
    /// A request found the session ended and was answered so.
    SessionEnded,
    /// The output could not be written.
    OutputFailed,
}

/// The output: whole lines, one at a time; closed for good when the relay
/// ends or a write fails.
struct Output {
    writer: Mutex<Option<Box<dyn Write + Send>>>,
    events: Sender<Event>,
}

impl Output {
    fn send(&self, message: &Value) {
        let mut line = serde_json::to_vec(message).unwrap_or_default();
        line.push(b'\n');
        let mut writer = lock(&self.writer);
        let Some(out) = writer.as_mut() else { return };
        if out.write_all(&line).and_then(|()| out.flush()).is_err() {
            *writer = None;
            let _ = self.events.send(Event::OutputFailed);
        }
    }

    fn error(&self, id: &Value, code: i64, message: &str, data: Option<&Value>) {
        let mut error = RpcError::new(code, message);
        error.data = data.cloned();
        self.send(&jsonrpc::failure(Some(id), &error));
    }

    /// Closes the output: returns once no write is under way, and none
    /// follows.
    fn close(&self) {
        lock(&self.writer).take();
    }
}

/// A request in flight: how to stop it, and whether it travels as
/// 2026-07-28 (whose cancel, over HTTP, is closing its stream and nothing
/// else).
struct InFlight {
    cancel: CancelHandle,
    stateless: bool,
}

/// The requests in flight, by their id as JSON text.
type InFlightMap = Arc<Mutex<HashMap<String, InFlight>>>;

/// The state the coordinator keeps.
struct Relay {
    upstream: Arc<Passthrough>,
    output: Arc<Output>,
    events: Sender<Event>,
    in_flight: InFlightMap,
    /// Set once any exchange learnt that the session is gone.
    ended: Arc<AtomicBool>,
    /// The connection for notifications and answers, sent in order.
    link: Link,
    /// Stops the standalone stream's thread, once one runs.
    listener: Option<CancelHandle>,
    workers: Workers,
}

pub(super) fn run<R, W>(upstream: Passthrough, input: R, output: W) -> Ending
where
    R: BufRead + Send + 'static,
    W: Write + Send + 'static,
{
    let (events, inbox) = mpsc::channel();
    let output = Arc::new(Output {
        writer: Mutex::new(Some(Box::new(output))),
        events: events.clone(),
    });
    let reader = events.clone();
    if let Err(err) = thread::Builder::new()
        .name("stdio-relay-input".into())
        .spawn(move || read_lines(input, &reader))
    {
        eprintln!("toolhost stdio relay: cannot start the input thread ({err})");
        return Ending::InputClosed;
    }
    let mut relay = Relay {
        upstream: Arc::new(upstream),
        output,
        events,
        in_flight: Arc::default(),
        ended: Arc::default(),
        link: Link::default(),
        listener: None,
        workers: Workers::default(),
    };
    let ending = loop {
        // The relay holds a sender itself, so the channel never disconnects.
        let Ok(event) = inbox.recv() else {
            break Ending::InputClosed;
        };
        match event {
            Event::Line(line) => {
                if let Some(ending) = relay.line(&line) {
                    break ending;
                }
            }
            Event::InputEnded => {
                if let Some(ending) = relay.finish_in_flight(&inbox) {
                    break ending;
                }
                relay.upstream.close(&mut relay.link);
                break Ending::InputClosed;
            }
            Event::SessionEnded => break Ending::SessionEnded,
            Event::OutputFailed => break Ending::OutputClosed,
        }
    };
    relay.output.close();
    if let Some(listener) = &relay.listener {
        listener.cancel();
    }
    for request in lock(&relay.in_flight).values() {
        request.cancel.cancel();
    }
    ending
}

fn read_lines(mut input: impl BufRead, events: &Sender<Event>) {
    loop {
        let mut line = Vec::new();
        match input.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => {
                let _ = events.send(Event::InputEnded);
                return;
            }
            Ok(_) => {
                if events.send(Event::Line(line)).is_err() {
                    return;
                }
            }
        }
    }
}

impl Relay {
    /// Handles one line of input; `Some` when the relay must end.
    fn line(&mut self, line: &[u8]) -> Option<Ending> {
        let text = line.trim_ascii();
        if text.is_empty() {
            return None;
        }
        let message: Value = match serde_json::from_slice(text) {
            Ok(message) => message,
            Err(err) => {
                let problem =
                    format!("the line is not JSON ({err}); send one JSON-RPC message per line");
                self.output.error(&Value::Null, PARSE_ERROR, &problem, None);
                return None;
            }
        };
        if !(message.is_object() || message.is_array()) {
            let problem = "a JSON-RPC message is an object (or a batch: an array of them)";
            self.output
                .error(&Value::Null, INVALID_REQUEST, problem, None);
            return None;
        }
        self.start_listening();
        let ids = request_ids(&message);
        if !ids.is_empty() {
            return self.request(message, ids);
        }
        if Message::of(&message).method() == Some(Method::Cancelled.name()) {
            self.cancel(&message);
        } else {
            self.forward(&message);
        }
        None
    }

    /// Lets the requests in flight bring their answers, for at most
    /// [`INPUT_END_GRACE`]; `Some` when the relay must end otherwise.
    fn finish_in_flight(&self, inbox: &Receiver<Event>) -> Option<Ending> {
        let deadline = Instant::now() + INPUT_END_GRACE;
        while !lock(&self.in_flight).is_empty() && Instant::now() < deadline {
            match inbox.recv_timeout(IN_FLIGHT_POLL) {
                Ok(Event::SessionEnded) => return Some(Ending::SessionEnded),
                Ok(Event::OutputFailed) => return Some(Ending::OutputClosed),
                Ok(Event::Line(_) | Event::InputEnded) | Err(_) => {}
            }
        }
        None
    }

    /// Sends a request (or a batch holding requests) on a request thread
    /// of its own, which hands its answer to the output. `initialize` is
    /// carried before the next line is read.
    fn request(&mut self, message: Value, ids: Vec<Value>) -> Option<Ending> {
        if self.ended.load(Ordering::SeqCst) {
            for id in &ids {
                self.output
                    .error(id, SESSION_ENDED, SESSION_ENDED_MESSAGE, None);
            }
            return Some(Ending::SessionEnded);
        }
        let cancel = CancelHandle::new();
        let stateless = self.upstream.travels_stateless(&message);
        let keys: Vec<String> = ids.iter().map(Value::to_string).collect();
        {
            let mut in_flight = lock(&self.in_flight);
            for key in &keys {
                in_flight.insert(
                    key.clone(),
                    InFlight {
                        cancel: cancel.clone(),
                        stateless,
                    },
                );
            }
        }
        let carrier = Carrier {
            upstream: Arc::clone(&self.upstream),
            output: Arc::clone(&self.output),
            events: self.events.clone(),
            in_flight: Arc::clone(&self.in_flight),
            ended: Arc::clone(&self.ended),
        };
        if Message::of(&message).method() == Some(Method::Initialize.name()) {
            // What follows travels in the MCP session this opens: carry it
            // before reading on, whatever the client sends meanwhile.
            carrier.carry(&mut Link::default(), &message, &cancel, &keys);
            return None;
        }
        let started = self.workers.run(Box::new(move |link| {
            carrier.carry(link, &message, &cancel, &keys);
        }));
        if let Err(err) = started {
            let problem =
                format!("toolhost stdio relay: cannot start a thread for the request ({err})");
            for id in &ids {
                lock(&self.in_flight).remove(&id.to_string());
                self.output.error(id, INTERNAL_ERROR, &problem, None);
            }
        }
        None
    }

    /// `notifications/cancelled`: stops the request it names. In the
    /// stateful revisions the server is told first, so that it stops the
    /// call; then the request's connection is closed, which is also the
    /// whole cancel of 2026-07-28.
    fn cancel(&mut self, message: &Value) {
        let target = cancelled::read(message.get("params")).map(|(id, _)| id.to_string());
        let found = target.and_then(|key| {
            lock(&self.in_flight)
                .get(&key)
                .map(|request| (request.cancel.clone(), request.stateless))
        });
        match found {
            Some((cancel, stateless)) => {
                if !stateless {
                    self.forward(message);
                }
                cancel.cancel();
            }
            // Nothing of ours runs under that id: let the server judge.
            None if !self.upstream.travels_stateless(message) => self.forward(message),
            None => {}
        }
    }

    /// Sends a notification, an answer to a request of the server, or a
    /// batch of those: no answer comes back but an acknowledgement.
    fn forward(&mut self, message: &Value) {
        match self.upstream.notify(&mut self.link, message) {
            Ok(()) => {}
            Err(err) if session_gone(&self.upstream, &err) => {
                self.ended.store(true, Ordering::SeqCst);
            }
            Err(err) => {
                let what = Message::of(message)
                    .method()
                    .map_or_else(|| "an answer".to_owned(), |method| format!("{method:?}"));
                eprintln!("toolhost stdio relay: the server did not take {what}: {err}");
            }
        }
    }

    /// Opens the MCP session's standalone stream on a thread of its own,
    /// once the session exists, so that what the server says outside any
    /// request (its list changes) reaches the client too.
    fn start_listening(&mut self) {
        if self.listener.is_some() || !self.upstream.in_session() {
            return;
        }
        let cancel = CancelHandle::new();
        let listener = Listener {
            upstream: Arc::clone(&self.upstream),
            output: Arc::clone(&self.output),
            ended: Arc::clone(&self.ended),
            cancel: cancel.clone(),
        };
        match thread::Builder::new()
            .name("stdio-relay-listen".into())
            .spawn(move || listener.listen())
        {
            Ok(_) => self.listener = Some(cancel),
            Err(err) => {
                eprintln!("toolhost stdio relay: cannot start the stream thread ({err}); list changes will not be relayed");
                // Not tried again: a machine out of threads has other worries.
                self.listener = Some(cancel);
            }
        }
    }
}

/// What a request's thread needs.
struct Carrier {
    upstream: Arc<Passthrough>,
    output: Arc<Output>,
    events: Sender<Event>,
    in_flight: InFlightMap,
    ended: Arc<AtomicBool>,
}

impl Carrier {
    /// Carries one request upstream and its answer back; answers what did
    /// not get an answer with an error saying why.
    fn carry(self, link: &mut Link, message: &Value, cancel: &CancelHandle, keys: &[String]) {
        let output = &self.output;
        let outcome = self
            .upstream
            .request(link, message, cancel, &mut |answer| output.send(&answer));
        {
            let mut in_flight = lock(&self.in_flight);
            for key in keys {
                in_flight.remove(key);
            }
        }
        let Err(Unanswered { ids, error }) = outcome else {
            return;
        };
        if matches!(error, ClientError::Cancelled) {
            // The client cancelled it: by MCP's rules it expects no answer.
            return;
        }
        if session_gone(&self.upstream, &error) {
            self.ended.store(true, Ordering::SeqCst);
            for id in &ids {
                self.output
                    .error(id, SESSION_ENDED, SESSION_ENDED_MESSAGE, None);
            }
            let _ = self.events.send(Event::SessionEnded);
            return;
        }
        let (code, message, data) = describe(&error);
        for id in &ids {
            self.output.error(id, code, &message, data.as_ref());
        }
    }
}

/// The standalone stream's thread.
struct Listener {
    upstream: Arc<Passthrough>,
    output: Arc<Output>,
    ended: Arc<AtomicBool>,
    cancel: CancelHandle,
}

impl Listener {
    fn listen(self) {
        let mut link = Link::default();
        let output = &self.output;
        while !self.cancel.is_cancelled() {
            match self
                .upstream
                .listen(&mut link, &self.cancel, &mut |message| {
                    output.send(&message)
                }) {
                // The server ended the stream (its keep-alive lapsed, or the
                // session is going): open it again, which also finds out.
                Ok(()) => thread::sleep(RELISTEN_DELAY),
                Err(ClientError::Cancelled) => return,
                Err(err) if session_gone(&self.upstream, &err) => {
                    self.ended.store(true, Ordering::SeqCst);
                    return;
                }
                Err(err) => {
                    eprintln!("toolhost stdio relay: the session's event stream is unavailable ({err}); list changes will not be relayed");
                    return;
                }
            }
        }
    }
}

/// Whether `error` means the session is gone for good: its bearer is
/// refused (the application dropped the session), or nothing listens any
/// more (its host stopped).
fn session_ended(error: &ClientError) -> bool {
    match error {
        ClientError::Unauthorized { .. } | ClientError::Connect { .. } => true,
        ClientError::ResumeFailed { cause, .. } => session_ended(cause),
        _ => false,
    }
}

/// Whether the session is gone, judged from the error an exchange ended
/// with: a refused bearer or a refused connection says so at once; any
/// other fault of the way there (a kept connection the host closed as it
/// exited, a reset, a cut answer, an HTTP error) says so when the host no
/// longer accepts a connection. The server's own JSON-RPC errors, a
/// timeout and a cancellation leave the session be.
fn session_gone(upstream: &Passthrough, error: &ClientError) -> bool {
    if session_ended(error) {
        return true;
    }
    if matches!(
        error,
        ClientError::Rpc { .. } | ClientError::Cancelled | ClientError::Timeout { .. }
    ) {
        return false;
    }
    upstream.host_gone() || {
        thread::sleep(PROBE_AGAIN);
        upstream.host_gone()
    }
}

/// The JSON-RPC error a client is given for a request the relay could not
/// carry: the server's own error where it sent one, else what went wrong.
fn describe(error: &ClientError) -> (i64, String, Option<Value>) {
    match error {
        ClientError::Rpc {
            code,
            message,
            data,
            ..
        } => (*code, message.clone(), data.clone()),
        ClientError::Timeout { waited } => (
            REQUEST_TIMEOUT,
            format!("the tool host sent nothing for {waited:?}; the request was given up"),
            None,
        ),
        other => (
            INTERNAL_ERROR,
            format!("toolhost stdio relay: the request could not be carried: {other}"),
            None,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::jsonrpc::HEADER_MISMATCH;
    use serde_json::json;

    #[test]
    fn only_a_refused_bearer_or_a_vanished_host_ends_the_session() {
        let refused = ClientError::Unauthorized {
            www_authenticate: Some("Bearer".into()),
            message: None,
        };
        assert!(session_ended(&refused));
        let gone = ClientError::Connect {
            addr: "127.0.0.1:1".into(),
            source: std::io::ErrorKind::ConnectionRefused.into(),
        };
        assert!(session_ended(&gone));
        let resumed_into_refusal = ClientError::ResumeFailed {
            last_event_id: "1".into(),
            attempts: 1,
            cause: Box::new(refused),
        };
        assert!(session_ended(&resumed_into_refusal));
        for alive in [
            ClientError::Cancelled,
            ClientError::Timeout {
                waited: Duration::from_secs(1),
            },
            ClientError::Http {
                status: 404,
                body: String::new(),
            },
        ] {
            assert!(!session_ended(&alive), "{alive:?}");
        }
    }

    #[test]
    fn the_session_ended_message_invites_no_login() {
        let lower = SESSION_ENDED_MESSAGE.to_ascii_lowercase();
        assert!(lower.contains("session has ended"));
        for word in [
            "auth",
            "token",
            "bearer",
            "login",
            "401",
            "credential",
            "oauth",
        ] {
            assert!(!lower.contains(word), "{word}");
        }
    }

    #[test]
    fn the_servers_own_error_reaches_the_client_unchanged() {
        let error = ClientError::Rpc {
            status: 400,
            code: HEADER_MISMATCH,
            message: "header mismatch".into(),
            data: Some(json!({"x": 1})),
        };
        assert_eq!(
            describe(&error),
            (
                HEADER_MISMATCH,
                "header mismatch".to_owned(),
                Some(json!({"x": 1}))
            )
        );
        let (code, message, _) = describe(&ClientError::Timeout {
            waited: Duration::from_secs(2),
        });
        assert_eq!(code, REQUEST_TIMEOUT);
        assert!(message.contains("2s"), "{message}");
    }
}
