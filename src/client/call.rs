//! Per-call options: a progress callback, a handler for what the server
//! asks, a cancel handle and a timeout.
//!
//! Cancelling must reach a thread that is blocked reading the response, so a
//! [`CancelHandle`] holds a second handle to the call's socket while the call
//! runs and shuts it down: the blocked read returns at once. That is also
//! the cancellation signal of 2026-07-28 over HTTP (closing the response
//! stream); in the stateful revisions the client then also sends
//! `notifications/cancelled`. Between connections — while a call waits to
//! resume its stream — there is no socket to shut, so the wait itself
//! listens for the cancel ([`pause`]).

use std::fmt;
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread;
use std::time::Duration;

use serde_json::Value;

use super::answer::{Refusal, RequestHandler, ServerRequest, SharedHandler};
use super::error::ClientError;
use crate::model::LogLevel;
use crate::sync::lock;

/// A `notifications/progress` the server sent while a call ran.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Progress {
    /// Progress so far; grows with every report.
    pub progress: f64,
    /// The total, when the server knows it.
    pub total: Option<f64>,
    /// A human-readable note, when given.
    pub message: Option<String>,
}

impl Progress {
    /// Reads the params of a progress notification sent for `token`.
    pub(crate) fn for_token(params: &Value, token: &Value) -> Option<Progress> {
        if params.get("progressToken") != Some(token) {
            return None;
        }
        Some(Progress {
            progress: params.get("progress")?.as_f64()?,
            total: params.get("total").and_then(Value::as_f64),
            message: params
                .get("message")
                .and_then(Value::as_str)
                .map(str::to_owned),
        })
    }
}

/// A `notifications/message` the server sent while a call ran.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct LogMessage {
    /// Its severity.
    pub level: LogLevel,
    /// The logger's name, when given.
    pub logger: Option<String>,
    /// What was logged: any JSON.
    pub data: Value,
}

impl LogMessage {
    /// Reads the params of a `notifications/message`; `None` when its level
    /// is not one of MCP's eight.
    pub(crate) fn from_params(params: &Value) -> Option<LogMessage> {
        Some(LogMessage {
            level: LogLevel::parse(params.get("level")?.as_str()?)?,
            logger: params
                .get("logger")
                .and_then(Value::as_str)
                .map(str::to_owned),
            data: params.get("data").cloned().unwrap_or(Value::Null),
        })
    }
}

/// A boxed log callback.
pub(crate) type LogCallback<'a> = Box<dyn FnMut(&LogMessage) + 'a>;

/// A boxed progress callback.
pub(crate) type ProgressCallback<'a> = Box<dyn FnMut(&Progress) + 'a>;

/// Options of one [`Client::call_tool_with`](super::Client::call_tool_with).
///
/// ```
/// use std::time::Duration;
/// use toolhost::client::{CallOptions, CancelHandle};
///
/// let cancel = CancelHandle::new();
/// let mut reports = 0;
/// let options = CallOptions::new()
///     .on_progress(|p| {
///         reports += 1;
///         println!("{} of {:?}", p.progress, p.total);
///     })
///     .cancel_with(&cancel)
///     .timeout(Duration::from_secs(300));
/// # drop(options);
/// ```
#[derive(Default)]
pub struct CallOptions<'a> {
    pub(crate) on_progress: Option<ProgressCallback<'a>>,
    pub(crate) on_log: Option<LogCallback<'a>>,
    pub(crate) on_request: Option<RequestHandler<'a>>,
    /// The same handler as `on_request`, when it may answer beside the
    /// stream ([`CallOptions::on_request_beside_stream`]).
    pub(crate) on_request_shared: Option<SharedHandler<'a>>,
    pub(crate) cancel: Option<CancelHandle>,
    pub(crate) timeout: Option<Duration>,
}

impl<'a> CallOptions<'a> {
    /// No callback, no cancel handle, the client's timeout.
    pub fn new() -> CallOptions<'a> {
        CallOptions::default()
    }

    /// Asks the server for progress reports (a `progressToken` in the
    /// request's `_meta`) and calls `callback` with each, on the calling
    /// thread, before the call returns. Servers may send none.
    #[must_use]
    pub fn on_progress(mut self, callback: impl FnMut(&Progress) + 'a) -> CallOptions<'a> {
        self.on_progress = Some(Box::new(callback));
        self
    }

    /// Calls `callback` with each log message the server sends while the
    /// call runs, on the calling thread. A server sends them only when asked
    /// ([`ClientBuilder::log_level`](super::ClientBuilder::log_level)).
    #[must_use]
    pub fn on_log(mut self, callback: impl FnMut(&LogMessage) + 'a) -> CallOptions<'a> {
        self.on_log = Some(Box::new(callback));
        self
    }

    /// Answers what the server asks while the call runs — an elicitation
    /// (`elicitation/create`), a sampling request
    /// (`sampling/createMessage`), `roots/list` — with `handler`, on the
    /// calling thread, before the call returns. `Ok` is the answer's result
    /// (for an elicitation `{"action": "accept", "content": {…}}`, or
    /// `"decline"` / `"cancel"`); a [`Refusal`] is a JSON-RPC error.
    ///
    /// A server asks only what the client declared it can answer, so
    /// declare the capabilities when connecting:
    /// [`ClientBuilder::capabilities`](super::ClientBuilder::capabilities)
    /// with `{"elicitation": {}}`, `{"sampling": {}}` or `{"roots": {}}`.
    ///
    /// In the stateful revisions a question comes on the call's event
    /// stream and the answer goes back on a second connection, while the
    /// call goes on; a question with no handler is answered with
    /// JSON-RPC's "method not found" error. In 2026-07-28 the call returns `input_required` and the
    /// client calls again with the answers, up to eight rounds; a question
    /// with no handler, or a refusal (that revision cannot carry one), ends
    /// the call with [`ClientError::Unanswered`].
    ///
    /// ```
    /// use serde_json::json;
    /// use toolhost::client::{CallOptions, Era, Refusal};
    /// use toolhost::{Elicitation, HostConfig, StaticSurface, Tool, ToolHost, ToolOutcome};
    ///
    /// let host = ToolHost::bind(HostConfig::default())?;
    /// let session = host.open_session(StaticSurface::new().tool(
    ///     Tool::new("greet", "Greets the user by name."),
    ///     |_, ctx| {
    ///         let form = json!({"type": "object",
    ///             "properties": {"name": {"type": "string"}}, "required": ["name"]});
    ///         match ctx.elicit("What is your name?", form) {
    ///             Ok(Elicitation::Accept(answer)) => ToolOutcome::text(format!("Hello, {}!", answer["name"])),
    ///             Ok(_) => ToolOutcome::declined("no name given"),
    ///             Err(err) => err.into(),
    ///         }
    ///     },
    /// )?);
    /// for era in [Era::Stateful, Era::Stateless] {
    ///     let mut client = session
    ///         .client_builder()
    ///         .era(era)
    ///         .capabilities(json!({"elicitation": {}}))
    ///         .connect()?;
    ///     let result = client.call_tool_with(
    ///         "greet",
    ///         json!({}),
    ///         CallOptions::new().on_request(|request| match request.method.as_str() {
    ///             "elicitation/create" => Ok(json!({"action": "accept", "content": {"name": "Ada"}})),
    ///             other => Err(Refusal::new(format!("{other} is not answered here"))),
    ///         }),
    ///     )?;
    ///     assert_eq!(result.text(), "Hello, \"Ada\"!");
    /// }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn on_request(
        mut self,
        handler: impl FnMut(&ServerRequest) -> Result<Value, Refusal> + 'a,
    ) -> CallOptions<'a> {
        self.on_request = Some(Box::new(handler));
        self
    }

    /// [`on_request`](CallOptions::on_request) for a handler that may run
    /// on a thread of its own, one per question, while the call's event
    /// stream keeps being read (stateful revisions over HTTP): so it can
    /// see the server withdraw the question ([`ServerRequest::withdrawn`])
    /// while it waits. The thread is started only when a question comes;
    /// when the call ends, every question still being answered is
    /// withdrawn, so that the handler stops waiting. Over stdio, and for
    /// 2026-07-28 rounds, it runs as `on_request` does.
    pub(crate) fn on_request_beside_stream(
        mut self,
        handler: impl Fn(&ServerRequest) -> Result<Value, Refusal> + Send + Sync + 'a,
    ) -> CallOptions<'a> {
        let shared: SharedHandler<'a> = Arc::new(handler);
        let inline = Arc::clone(&shared);
        self.on_request = Some(Box::new(move |request| inline(request)));
        self.on_request_shared = Some(shared);
        self
    }

    /// Lets `handle` (or any clone of it) cancel the call from another
    /// thread, or from the progress callback.
    #[must_use]
    pub fn cancel_with(mut self, handle: &CancelHandle) -> CallOptions<'a> {
        self.cancel = Some(handle.clone());
        self
    }

    /// How long the server may stay silent during this call, instead of the
    /// client's [`timeout`](super::ClientBuilder::timeout). Each progress
    /// report starts the wait again.
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> CallOptions<'a> {
        self.timeout = Some(timeout);
        self
    }
}

impl fmt::Debug for CallOptions<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallOptions")
            .field("on_progress", &self.on_progress.is_some())
            .field("on_log", &self.on_log.is_some())
            .field("on_request", &self.on_request.is_some())
            .field("on_request_shared", &self.on_request_shared.is_some())
            .field("cancel", &self.cancel)
            .field("timeout", &self.timeout)
            .finish()
    }
}

/// Cancels a running call from anywhere: another thread, a signal handler's
/// flag watcher, or the call's own progress callback. Cheap to clone; every
/// clone cancels the same calls. Once cancelled it stays cancelled, and a
/// call started with it afterwards fails at once without reaching the server.
///
/// ```
/// use std::time::Duration;
/// use serde_json::json;
/// use toolhost::client::{CallOptions, CancelHandle, ClientError};
/// use toolhost::{HostConfig, StaticSurface, Tool, ToolHost, ToolOutcome};
///
/// let host = ToolHost::bind(HostConfig::default())?;
/// let session = host.open_session(StaticSurface::new().tool(
///     Tool::new("wait", "Waits until cancelled."),
///     |_, ctx| {
///         while !ctx.is_cancelled() {
///             std::thread::sleep(Duration::from_millis(5));
///         }
///         ToolOutcome::text("stopped")
///     },
/// )?);
/// let mut client = session.client()?;
/// let cancel = CancelHandle::new();
/// let canceller = cancel.clone();
/// std::thread::spawn(move || {
///     std::thread::sleep(Duration::from_millis(50));
///     canceller.cancel();
/// });
/// let outcome = client.call_tool_with("wait", json!({}), CallOptions::new().cancel_with(&cancel));
/// assert!(matches!(outcome, Err(ClientError::Cancelled)));
/// drop(session); // lets the handler see is_cancelled() and return
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Default)]
pub struct CancelHandle {
    inner: Arc<CancelState>,
}

#[derive(Default)]
struct CancelState {
    cancelled: AtomicBool,
    /// A second handle to the socket of the call in flight.
    socket: Mutex<Option<TcpStream>>,
    /// Wakes a call pausing between connections; paired with `socket`.
    woken: Condvar,
    /// What wakes the calls that wait on something other than a socket (a
    /// stdio server's answer), by a key of the caller's.
    wakers: Mutex<Vec<(u64, Waker)>>,
}

/// Wakes one waiting call when its handle is cancelled.
pub(crate) type Waker = Box<dyn Fn() + Send>;

impl CancelHandle {
    /// A handle that has not been cancelled.
    pub fn new() -> CancelHandle {
        CancelHandle::default()
    }

    /// Cancels every call running with this handle, and every later one.
    pub fn cancel(&self) {
        self.inner.cancelled.store(true, Ordering::SeqCst);
        let socket = lock(&self.inner.socket);
        if let Some(socket) = socket.as_ref() {
            // The blocked reader wakes up with an error or end of stream.
            let _ = socket.shutdown(Shutdown::Both);
        }
        // Notified under the lock a pausing call checks the flag under: it
        // either sees the flag or is already waiting.
        self.inner.woken.notify_all();
        drop(socket);
        for (_, wake) in lock(&self.inner.wakers).iter() {
            wake();
        }
    }

    /// Whether [`cancel`](CancelHandle::cancel) was called.
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancelled.load(Ordering::SeqCst)
    }

    /// Registers the socket of a call about to be sent. `Err(Cancelled)`
    /// when the handle is already cancelled; the caller then sends nothing.
    pub(crate) fn attach(&self, socket: &TcpStream) -> Result<(), ClientError> {
        if self.is_cancelled() {
            return Err(ClientError::Cancelled);
        }
        let clone = socket.try_clone().map_err(ClientError::Io)?;
        *lock(&self.inner.socket) = Some(clone);
        // `cancel` sets the flag before it looks for a socket: if it ran
        // between the check above and the store, it found none, and the
        // flag is visible now.
        if self.is_cancelled() {
            self.detach();
            return Err(ClientError::Cancelled);
        }
        Ok(())
    }

    /// Runs `wake` when the handle is cancelled, until
    /// [`forget`](CancelHandle::forget) is called with the same `key`.
    /// `Err(Cancelled)` when the handle is already cancelled; `wake` is
    /// then dropped unrun and the caller sends nothing.
    pub(crate) fn on_cancel(&self, key: u64, wake: Waker) -> Result<(), ClientError> {
        let mut wakers = lock(&self.inner.wakers);
        // `cancel` sets the flag before it takes this lock: either it runs
        // the waker pushed here, or the flag is visible now.
        if self.is_cancelled() {
            return Err(ClientError::Cancelled);
        }
        wakers.push((key, wake));
        Ok(())
    }

    /// Drops the waker registered under `key`, once its call is over.
    pub(crate) fn forget(&self, key: u64) {
        lock(&self.inner.wakers).retain(|(k, _)| *k != key);
    }

    /// Forgets the call's socket once the call is over.
    pub(crate) fn detach(&self) {
        lock(&self.inner.socket).take();
    }

    /// Waits up to `delay`; `true` when it was cut short by a cancel.
    fn wait_for_cancel(&self, delay: Duration) -> bool {
        let guard = lock(&self.inner.socket);
        let _ = self
            .inner
            .woken
            .wait_timeout_while(guard, delay, |_| !self.is_cancelled())
            .unwrap_or_else(PoisonError::into_inner);
        self.is_cancelled()
    }
}

/// Waits `delay` between two connections of one call, such as before
/// resuming its stream; `Err(Cancelled)` as soon as `cancel` fires.
pub(crate) fn pause(delay: Duration, cancel: Option<&CancelHandle>) -> Result<(), ClientError> {
    match cancel {
        Some(cancel) if cancel.wait_for_cancel(delay) => Err(ClientError::Cancelled),
        Some(_) => Ok(()),
        None => {
            thread::sleep(delay);
            Ok(())
        }
    }
}

impl fmt::Debug for CancelHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CancelHandle")
            .field("cancelled", &self.is_cancelled())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn progress_is_read_only_for_its_own_token() {
        let params = json!({"progressToken": 7, "progress": 2, "total": 3, "message": "two"});
        let progress = Progress::for_token(&params, &json!(7)).unwrap();
        assert_eq!(progress.progress, 2.0);
        assert_eq!(progress.total, Some(3.0));
        assert_eq!(progress.message.as_deref(), Some("two"));
        assert_eq!(Progress::for_token(&params, &json!(8)), None);
        assert_eq!(Progress::for_token(&params, &json!("7")), None);
        assert_eq!(
            Progress::for_token(&json!({"progressToken": 7}), &json!(7)),
            None
        );
    }

    #[test]
    fn a_cancelled_handle_refuses_to_attach_and_stays_cancelled() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let socket = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let handle = CancelHandle::new();
        assert!(handle.attach(&socket).is_ok());
        handle.detach();
        handle.clone().cancel();
        assert!(handle.is_cancelled());
        assert!(matches!(
            handle.attach(&socket),
            Err(ClientError::Cancelled)
        ));
    }

    #[test]
    fn a_pause_ends_when_its_handle_is_cancelled_and_not_before() {
        let handle = CancelHandle::new();
        assert!(pause(Duration::from_millis(1), Some(&handle)).is_ok());
        assert!(pause(Duration::from_millis(1), None).is_ok());
        let remote = handle.clone();
        let canceller = thread::spawn(move || {
            thread::sleep(Duration::from_millis(20));
            remote.cancel();
        });
        // An hour, unless the cancel ends it.
        let paused = pause(Duration::from_secs(3600), Some(&handle));
        canceller.join().unwrap();
        assert!(matches!(paused, Err(ClientError::Cancelled)));
        // Cancelled stays cancelled: the next pause ends at once.
        assert!(matches!(
            pause(Duration::from_secs(3600), Some(&handle)),
            Err(ClientError::Cancelled)
        ));
    }
}
