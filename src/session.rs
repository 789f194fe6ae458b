//! Sessions: the table of live bearers, the guard that owns each one, and
//! the admission gate that keeps revoked sessions from starting calls.
//!
//! A bearer is `th_` + 16 hex digits of a non-secret locator + 64 hex digits
//! of a 256-bit secret, both from the operating system's random source. The
//! locator finds the entry in O(1); the secret is then compared in constant
//! time, and a miss is compared against a dummy secret so that unknown and
//! revoked bearers cost the same as a wrong secret. Dropping the guard
//! removes the entry, so revocation is one `HashMap::remove` under the
//! table's lock.
//!
//! Invariant: once [`ToolSession`]'s `Drop` has returned, no call of that
//! session is admitted, and every call admitted before sees
//! `is_cancelled() == true`.

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex, MutexGuard, PoisonError};

use serde_json::Value;

use crate::acp;
use crate::context::Cancellation;
use crate::event::AuthRefusal;
use crate::hub::Hub;
use crate::mcp::McpSessions;
use crate::resume::CallStreams;
use crate::surface::ToolSurface;

/// Locks a mutex, recovering the data if a thread panicked while holding it.
/// Every critical section in the crate leaves its data consistent at each
/// step, so a poisoned lock carries no broken invariant.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

const TOKEN_PREFIX: &str = "th_";
const LOCATOR_HEX: usize = 16;
const SECRET_BYTES: usize = 32;

/// Fills `buf` from the operating system's random source.
///
/// # Panics
/// When the operating system cannot provide randomness, which std's own
/// `HashMap` also treats as fatal: no bearer can be minted safely then.
pub(crate) fn random_bytes(buf: &mut [u8]) {
    if let Err(err) = getrandom::fill(buf) {
        panic!("toolhost: the operating system's random source failed ({err}); refusing to mint a guessable bearer");
    }
}

/// Compares two byte strings in time that depends only on their lengths.
pub(crate) fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let diff = a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y));
    std::hint::black_box(diff) == 0
}

fn hex(bytes: &[u8]) -> String {
    use fmt::Write;
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

fn unhex(text: &str, out: &mut [u8]) -> Option<()> {
    fn nibble(c: u8) -> Option<u8> {
        match c {
            b'0'..=b'9' => Some(c - b'0'),
            b'a'..=b'f' => Some(c - b'a' + 10),
            b'A'..=b'F' => Some(c - b'A' + 10),
            _ => None,
        }
    }
    if text.len() != out.len() * 2 {
        return None;
    }
    for (slot, pair) in out.iter_mut().zip(text.as_bytes().chunks_exact(2)) {
        *slot = (nibble(pair[0])? << 4) | nibble(pair[1])?;
    }
    Some(())
}

/// A bearer split into its locator and secret.
struct ParsedToken {
    locator: u64,
    secret: [u8; SECRET_BYTES],
}

fn parse_token(token: &str) -> Option<ParsedToken> {
    let rest = token.strip_prefix(TOKEN_PREFIX)?;
    if rest.len() != LOCATOR_HEX + SECRET_BYTES * 2 || !rest.is_ascii() {
        return None;
    }
    let (locator, secret_hex) = rest.split_at(LOCATOR_HEX);
    let mut locator_bytes = [0u8; 8];
    unhex(locator, &mut locator_bytes)?;
    let mut secret = [0u8; SECRET_BYTES];
    unhex(secret_hex, &mut secret)?;
    Some(ParsedToken {
        locator: u64::from_be_bytes(locator_bytes),
        secret,
    })
}

/// Every live session of one host.
#[derive(Default)]
pub(crate) struct SessionTable {
    sessions: Mutex<HashMap<u64, Arc<SessionEntry>>>,
    /// Compared against when a locator is unknown, so that a miss costs what a
    /// hit does.
    decoy: [u8; SECRET_BYTES],
}

impl SessionTable {
    pub(crate) fn new() -> SessionTable {
        let mut decoy = [0u8; SECRET_BYTES];
        random_bytes(&mut decoy);
        SessionTable {
            sessions: Mutex::default(),
            decoy,
        }
    }

    /// Registers a surface under a fresh bearer; returns the locator and the
    /// full token.
    fn insert(&self, surface: Box<dyn ToolSurface>) -> (u64, String, Arc<SessionEntry>) {
        let mut secret = [0u8; SECRET_BYTES];
        random_bytes(&mut secret);
        let mut binding = [0u8; 16];
        random_bytes(&mut binding);
        let entry = Arc::new(SessionEntry {
            secret,
            binding,
            surface,
            calls_served: AtomicU64::new(0),
            gate: Mutex::default(),
            mcp: Mutex::default(),
            asks: Mutex::default(),
            streams: CallStreams::default(),
        });
        let mut sessions = lock(&self.sessions);
        let locator = loop {
            let mut bytes = [0u8; 8];
            random_bytes(&mut bytes);
            let candidate = u64::from_be_bytes(bytes);
            if !sessions.contains_key(&candidate) {
                break candidate;
            }
        };
        sessions.insert(locator, Arc::clone(&entry));
        drop(sessions);
        let token = format!(
            "{TOKEN_PREFIX}{}{}",
            hex(&locator.to_be_bytes()),
            hex(&secret)
        );
        (locator, token, entry)
    }

    /// Finds the live session holding `token`.
    pub(crate) fn authenticate(&self, token: &str) -> Result<Arc<SessionEntry>, AuthRefusal> {
        let parsed = parse_token(token).ok_or(AuthRefusal::Malformed)?;
        let found = lock(&self.sessions).get(&parsed.locator).cloned();
        match found {
            Some(entry) if constant_time_eq(&entry.secret, &parsed.secret) => Ok(entry),
            Some(_) => Err(AuthRefusal::Unknown),
            None => {
                // Same work as a hit, so a miss does not show in the timing.
                let _ = constant_time_eq(&self.decoy, &parsed.secret);
                Err(AuthRefusal::Unknown)
            }
        }
    }

    fn remove(&self, locator: u64) -> Option<Arc<SessionEntry>> {
        lock(&self.sessions).remove(&locator)
    }

    pub(crate) fn len(&self) -> usize {
        lock(&self.sessions).len()
    }

    /// Flags every in-flight call of every session as cancelled.
    pub(crate) fn cancel_all(&self, reason: &str) {
        let entries: Vec<_> = lock(&self.sessions).values().cloned().collect();
        for entry in entries {
            entry.cancel_in_flight(reason);
        }
    }
}

/// One live session: its secret, its surface and its calls.
pub(crate) struct SessionEntry {
    secret: [u8; SECRET_BYTES],
    /// A random, non-secret identity that signed request states are bound
    /// to, so that a state minted for one session is refused by another.
    pub(crate) binding: [u8; 16],
    pub(crate) surface: Box<dyn ToolSurface>,
    calls_served: AtomicU64,
    gate: Mutex<Gate>,
    /// The MCP sessions (`Mcp-Session-Id`) opened under this bearer.
    pub(crate) mcp: Mutex<McpSessions>,
    /// Requests sent to the client whose answers a handler awaits, by id.
    asks: Mutex<HashMap<String, PendingAsk>>,
    /// Response streams kept for clients that reconnect.
    pub(crate) streams: CallStreams,
}

/// A request to the client awaiting its answer.
struct PendingAsk {
    /// The MCP session it was sent in; the answer must come from it.
    mcp_session: Option<String>,
    reply: mpsc::Sender<Result<Value, Value>>,
}

/// Admission state: the revoked flag and the calls in flight, under one lock
/// so that revocation and admission are ordered.
#[derive(Default)]
struct Gate {
    revoked: bool,
    next_call: u64,
    in_flight: HashMap<u64, InFlight>,
}

/// A running call, and the request it answers (for `notifications/cancelled`,
/// which names an MCP session's request id).
struct InFlight {
    cancel: Arc<Cancellation>,
    key: Option<CallKey>,
}

/// An MCP session id and a request id within it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct CallKey {
    pub(crate) mcp_session: String,
    pub(crate) request_id: Value,
}

impl SessionEntry {
    /// Admits a call unless the session was revoked. The ticket deregisters
    /// the call when dropped.
    pub(crate) fn admit(self: &Arc<Self>, key: Option<CallKey>) -> Option<CallTicket> {
        let mut gate = lock(&self.gate);
        if gate.revoked {
            return None;
        }
        let id = gate.next_call;
        gate.next_call += 1;
        let cancel = Arc::new(Cancellation::default());
        gate.in_flight.insert(
            id,
            InFlight {
                cancel: Arc::clone(&cancel),
                key,
            },
        );
        drop(gate);
        self.calls_served.fetch_add(1, Ordering::SeqCst);
        Some(CallTicket {
            entry: Arc::clone(self),
            id,
            cancel,
        })
    }

    fn revoke(&self) {
        let mut gate = lock(&self.gate);
        gate.revoked = true;
        for call in gate.in_flight.values() {
            call.cancel.cancel("the session was closed", false);
        }
    }

    fn cancel_in_flight(&self, reason: &str) {
        for call in lock(&self.gate).in_flight.values() {
            call.cancel.cancel(reason, false);
        }
    }

    /// Waits for the answer to request `id`, sent in `mcp_session`.
    pub(crate) fn expect_answer(
        &self,
        id: &str,
        mcp_session: Option<String>,
    ) -> mpsc::Receiver<Result<Value, Value>> {
        let (reply, answer) = mpsc::channel();
        lock(&self.asks).insert(id.to_owned(), PendingAsk { mcp_session, reply });
        answer
    }

    /// Stops waiting for request `id`.
    pub(crate) fn forget_answer(&self, id: &str) {
        lock(&self.asks).remove(id);
    }

    /// Hands a client's answer (a JSON-RPC response) to the handler awaiting
    /// it; `false` when none awaits this id from this MCP session (wrong,
    /// late or repeated), which leaves any other pending request untouched.
    pub(crate) fn deliver_answer(
        &self,
        id: &Value,
        mcp_session: Option<&str>,
        outcome: Result<Value, Value>,
    ) -> bool {
        let Some(id) = id.as_str() else { return false };
        let mut asks = lock(&self.asks);
        let matches = asks
            .get(id)
            .is_some_and(|ask| ask.mcp_session.as_deref() == mcp_session);
        if !matches {
            return false;
        }
        asks.remove(id)
            .is_some_and(|ask| ask.reply.send(outcome).is_ok())
    }

    /// Cancels the call answering `key`, at the client's request; `false`
    /// when no such call runs (it finished, or never was).
    pub(crate) fn cancel_request(&self, key: &CallKey, reason: &str) -> bool {
        let gate = lock(&self.gate);
        let found = gate
            .in_flight
            .values()
            .find(|call| call.key.as_ref() == Some(key));
        if let Some(call) = found {
            call.cancel.cancel(reason, true);
        }
        found.is_some()
    }
}

/// An admitted call; dropping it marks the call finished.
pub(crate) struct CallTicket {
    entry: Arc<SessionEntry>,
    id: u64,
    pub(crate) cancel: Arc<Cancellation>,
}

impl Drop for CallTicket {
    fn drop(&mut self) {
        lock(&self.entry.gate).in_flight.remove(&self.id);
    }
}

/// Where sessions of one host are reached, shared by its guards.
pub(crate) struct Endpoint {
    /// `http://HOST:PORT`, no trailing slash.
    pub(crate) origin: String,
    pub(crate) server_name: String,
    pub(crate) capability_urls: bool,
    pub(crate) hub: Arc<Hub>,
}

/// One published tool surface and its bearer. Dropping the guard revokes the
/// bearer at once: the next request with it gets 401, and calls still
/// running see [`CallContext::is_cancelled`](crate::CallContext::is_cancelled).
///
/// ```
/// use toolhost::{HostConfig, StaticSurface, ToolHost};
///
/// let host = ToolHost::bind(HostConfig::default())?;
/// let session = host.open_session(StaticSurface::new());
/// assert!(session.authorization().starts_with("Bearer "));
/// assert_eq!(host.open_sessions(), 1);
/// drop(session);
/// assert_eq!(host.open_sessions(), 0);
/// # Ok::<(), toolhost::Error>(())
/// ```
pub struct ToolSession {
    table: Arc<SessionTable>,
    entry: Arc<SessionEntry>,
    endpoint: Arc<Endpoint>,
    locator: u64,
    token: String,
}

impl ToolSession {
    pub(crate) fn open(
        table: Arc<SessionTable>,
        endpoint: Arc<Endpoint>,
        surface: Box<dyn ToolSurface>,
    ) -> ToolSession {
        let (locator, token, entry) = table.insert(surface);
        ToolSession {
            table,
            entry,
            endpoint,
            locator,
            token,
        }
    }

    /// The MCP endpoint, e.g. `http://127.0.0.1:40123/mcp`.
    pub fn url(&self) -> String {
        format!("{}/mcp", self.endpoint.origin)
    }

    /// The `Authorization` header value every request must carry:
    /// `Bearer th_…`. A secret: do not log it.
    pub fn authorization(&self) -> String {
        format!("Bearer {}", self.token)
    }

    /// The bare bearer token, `th_…`, for clients configured with the token
    /// rather than the header (`Client::builder(url).bearer(token)`, an
    /// environment variable). A secret: do not log it; `Debug` never shows
    /// it.
    ///
    /// ```
    /// use toolhost::{HostConfig, StaticSurface, ToolHost};
    ///
    /// let host = ToolHost::bind(HostConfig::default())?;
    /// let session = host.open_session(StaticSurface::new());
    /// assert!(session.bearer_token().starts_with("th_"));
    /// assert_eq!(session.authorization(), format!("Bearer {}", session.bearer_token()));
    /// assert!(!format!("{session:?}").contains(session.bearer_token()));
    /// # Ok::<(), toolhost::Error>(())
    /// ```
    pub fn bearer_token(&self) -> &str {
        &self.token
    }

    /// A URL that carries the secret in its path, for clients that cannot
    /// set headers; `None` unless
    /// [`HostConfig::capability_urls`](crate::HostConfig::capability_urls)
    /// enabled them. A secret: do not log it.
    pub fn capability_url(&self) -> Option<String> {
        self.endpoint
            .capability_urls
            .then(|| format!("{}/cap/{}/mcp", self.endpoint.origin, self.token))
    }

    /// A non-secret identifier of this session, for the application's own
    /// bookkeeping.
    pub fn session_id(&self) -> String {
        hex(&self.locator.to_be_bytes())
    }

    /// How many tool calls reached a handler of this session.
    pub fn calls_served(&self) -> u64 {
        self.entry.calls_served.load(Ordering::SeqCst)
    }

    /// Tells the session's clients that its tool list changed: a
    /// `notifications/tools/list_changed` on every open `GET` stream and
    /// `subscriptions/listen` stream of this session, delivered at once.
    /// Call it after changing what the surface lists.
    pub fn notify_tools_changed(&self) {
        self.endpoint.hub.tools_changed(&self.entry);
    }

    /// The `mcpServers` list for an ACP `session/new` request: one HTTP
    /// server entry with this session's URL and bearer header.
    ///
    /// ```
    /// use toolhost::{HostConfig, StaticSurface, ToolHost};
    ///
    /// let host = ToolHost::bind(HostConfig::default().server_name("myapp"))?;
    /// let session = host.open_session(StaticSurface::new());
    /// let servers = session.acp_mcp_servers();
    /// assert_eq!(servers[0]["type"], "http");
    /// assert_eq!(servers[0]["name"], "myapp");
    /// assert_eq!(servers[0]["headers"][0]["name"], "Authorization");
    /// # Ok::<(), toolhost::Error>(())
    /// ```
    pub fn acp_mcp_servers(&self) -> Value {
        acp::mcp_servers(
            &self.endpoint.server_name,
            &self.url(),
            &self.authorization(),
        )
    }

    /// The host's server name, which every client configuration names the
    /// server by (see `acp.rs`).
    pub(crate) fn server_name(&self) -> &str {
        &self.endpoint.server_name
    }
}

impl fmt::Debug for ToolSession {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolSession")
            .field("url", &self.url())
            .field("calls_served", &self.calls_served())
            .finish_non_exhaustive()
    }
}

impl Drop for ToolSession {
    fn drop(&mut self) {
        if let Some(entry) = self.table.remove(self.locator) {
            entry.revoke();
        }
        self.endpoint.hub.session_closed(&self.entry);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::surface::StaticSurface;

    #[test]
    fn constant_time_eq_agrees_with_eq() {
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"ab"));
        assert!(constant_time_eq(b"", b""));
    }

    #[test]
    fn minted_tokens_authenticate_and_altered_ones_do_not() {
        let table = SessionTable::new();
        let (_, token, _) = table.insert(Box::new(StaticSurface::new()));
        assert_eq!(token.len(), 3 + 16 + 64);
        assert!(table.authenticate(&token).is_ok());
        let mut altered = token.clone().into_bytes();
        let last = altered.len() - 1;
        altered[last] = if altered[last] == b'0' { b'1' } else { b'0' };
        let altered = String::from_utf8(altered).unwrap();
        assert_eq!(
            table.authenticate(&altered).err(),
            Some(AuthRefusal::Unknown)
        );
        assert_eq!(
            table.authenticate("th_zz").err(),
            Some(AuthRefusal::Malformed)
        );
        assert_eq!(table.authenticate("").err(), Some(AuthRefusal::Malformed));
    }

    #[test]
    fn a_revoked_entry_admits_nothing_and_cancels_what_runs() {
        let table = SessionTable::new();
        let (locator, _, entry) = table.insert(Box::new(StaticSurface::new()));
        let running = entry.admit(None).unwrap();
        table.remove(locator).unwrap().revoke();
        assert!(running.cancel.is_cancelled());
        assert!(!running.cancel.by_client());
        assert!(entry.admit(None).is_none());
    }
}
