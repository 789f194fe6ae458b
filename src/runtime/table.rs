//! The session table: every live bearer, what it publishes, and the
//! admission gate that keeps revoked sessions from starting calls.
//!
//! A bearer is `th_` + 16 hex digits of a non-secret locator + 64 hex digits
//! of a 256-bit secret, both from the operating system's random source. The
//! locator finds the entry in O(1); the secret is then compared in constant
//! time, and a miss is compared against a dummy secret so that unknown and
//! revoked bearers cost the same as a wrong secret. Dropping the guard
//! removes the entry, so revocation is one `HashMap::remove` under the
//! table's lock.
//!
//! Invariant: once [`SessionTable::revoke`] has returned (the guard's
//! `Drop` calls it), no call of that session is admitted, and every call
//! admitted before sees `is_cancelled() == true`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::resume::CallStreams;
use super::signer::SpentStates;
use super::Outlet;
use crate::call::call_link::{Answer, Cancellation};
use crate::call::ToolSurface;
use crate::crypto::{constant_time_eq, hex, random_bytes, random_hex, unhex};
use crate::event::AuthRefusal;
use crate::hash::HostMap;
use crate::mcp::{self, CallKey, Caller, McpSessions};
use crate::model::LogLevel;
use crate::sync::lock;

const TOKEN_PREFIX: &str = "th_";
const LOCATOR_HEX: usize = 16;
const SECRET_BYTES: usize = 32;

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
    sessions: Mutex<HostMap<u64, Arc<SessionEntry>>>,
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

    /// Registers a surface under a fresh bearer; returns its entry and the
    /// full token.
    pub(crate) fn insert(&self, surface: Box<dyn ToolSurface>) -> (Arc<SessionEntry>, String) {
        let mut secret = [0u8; SECRET_BYTES];
        random_bytes(&mut secret);
        let mut binding = [0u8; 16];
        random_bytes(&mut binding);
        let mut sessions = lock(&self.sessions);
        let locator = loop {
            let mut bytes = [0u8; 8];
            random_bytes(&mut bytes);
            let candidate = u64::from_be_bytes(bytes);
            if !sessions.contains_key(&candidate) {
                break candidate;
            }
        };
        let entry = Arc::new(SessionEntry {
            locator,
            secret,
            binding,
            spent: SpentStates::default(),
            surface,
            calls_served: AtomicU64::new(0),
            calls_cancelled: AtomicU64::new(0),
            gate: Mutex::default(),
            mcp: Mutex::default(),
            asks: Mutex::default(),
            streams: CallStreams::default(),
        });
        sessions.insert(locator, Arc::clone(&entry));
        drop(sessions);
        let token = format!(
            "{TOKEN_PREFIX}{}{}",
            hex(&locator.to_be_bytes()),
            hex(&secret)
        );
        (entry, token)
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

    /// Revokes the session `locator`: its bearer fails from now on, no call
    /// of it is admitted, and every call running is flagged cancelled.
    pub(crate) fn revoke(&self, locator: u64) {
        let removed = lock(&self.sessions).remove(&locator);
        if let Some(entry) = removed {
            entry.revoke();
        }
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
    /// The non-secret half of the bearer: the session's id in the table,
    /// and its key wherever the runtime tracks it (the stream hub).
    pub(crate) locator: u64,
    secret: [u8; SECRET_BYTES],
    /// A random, non-secret identity that signed request states are bound
    /// to, so that a state minted for one session is refused by another.
    pub(crate) binding: [u8; 16],
    /// The request states this session spent: kept here, so that one
    /// session spending many cannot refuse another's.
    pub(crate) spent: SpentStates,
    pub(crate) surface: Box<dyn ToolSurface>,
    calls_served: AtomicU64,
    /// Of those, how many ended cancelled.
    calls_cancelled: AtomicU64,
    gate: Mutex<Gate>,
    /// The MCP sessions (`Mcp-Session-Id`) opened under this bearer.
    mcp: Mutex<McpSessions>,
    /// Requests sent to the client whose answers a handler awaits, by id.
    asks: Mutex<HostMap<String, PendingAsk>>,
    /// Response streams kept for clients that reconnect.
    pub(crate) streams: CallStreams,
}

/// The MCP core's view of the session: its surface and its MCP sessions,
/// each call taking the lock only for its own step.
impl mcp::BearerState for SessionEntry {
    fn surface(&self) -> &dyn ToolSurface {
        &*self.surface
    }

    fn open(&self, caller: Caller) -> String {
        let id = random_hex(16);
        lock(&self.mcp).open(id.clone(), caller);
        id
    }

    fn find(&self, id: &str) -> Option<Caller> {
        lock(&self.mcp).touch(id)
    }

    fn set_log_level(&self, id: &str, level: LogLevel) -> bool {
        lock(&self.mcp).set_log_level(id, level)
    }

    fn close(&self, id: &str) -> bool {
        lock(&self.mcp).close(id)
    }
}

/// A request to the client awaiting its answer.
struct PendingAsk {
    /// The MCP session it was sent in; the answer must come from it.
    mcp_session: Option<String>,
    reply: mpsc::Sender<Answer>,
}

/// Admission state: the revoked flag and the calls in flight, under one lock
/// so that revocation and admission are ordered.
#[derive(Default)]
struct Gate {
    revoked: bool,
    next_call: u64,
    in_flight: HostMap<u64, InFlight>,
    /// Whether a keep-alive round is scheduled. It is never later than any
    /// call's next keep-alive: a call admitted later is due later, so only
    /// the first call after a quiet spell schedules a round.
    round_scheduled: bool,
}

/// A running (or waiting) call, the request it answers (for
/// `notifications/cancelled`, which names an MCP session's request id), and
/// where and when it is next kept alive.
struct InFlight {
    cancel: Arc<Cancellation>,
    key: Option<CallKey>,
    outlet: Weak<dyn Outlet>,
    beat_at: Instant,
}

/// A call that is due a keep-alive: where to write it, and what to cancel
/// when the write finds the client gone.
pub(crate) struct Beat {
    pub(crate) outlet: Weak<dyn Outlet>,
    pub(crate) cancel: Arc<Cancellation>,
}

/// What a keep-alive round found: the calls due one now, and when the
/// round must run next (`None` once no call is in flight).
pub(crate) struct Round {
    pub(crate) due: Vec<Beat>,
    pub(crate) next: Option<Instant>,
}

impl SessionEntry {
    /// How many tool calls reached a handler of this session.
    pub(crate) fn calls_served(&self) -> u64 {
        self.calls_served.load(Ordering::SeqCst)
    }

    /// How many of them ended cancelled.
    pub(crate) fn calls_cancelled(&self) -> u64 {
        self.calls_cancelled.load(Ordering::SeqCst)
    }

    /// Admits a call unless the session was revoked, to be kept alive
    /// through `outlet` from `beat_at` on. The ticket deregisters the call
    /// when dropped. `schedule` is set when no keep-alive round is
    /// scheduled: the caller must then run [`SessionEntry::round`] at
    /// `beat_at`.
    pub(crate) fn admit(
        self: &Arc<Self>,
        key: Option<CallKey>,
        outlet: Weak<dyn Outlet>,
        beat_at: Instant,
    ) -> Option<CallTicket> {
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
                outlet,
                beat_at,
            },
        );
        let schedule = !gate.round_scheduled;
        gate.round_scheduled = true;
        drop(gate);
        Some(CallTicket {
            entry: Arc::clone(self),
            id,
            cancel,
            schedule,
        })
    }

    /// A keep-alive round at `now`: takes the calls due a keep-alive (each
    /// is due again `every` from now) and says when the next round must
    /// run: when the earliest call left is due, but not sooner than a
    /// sixteenth of the interval from now, so that a session with many
    /// calls admitted moments apart costs at most sixteen rounds per
    /// interval (each a walk over its calls), not one per call. The caller
    /// writes the keep-alives outside the lock: a write may block on a
    /// slow client.
    pub(crate) fn round(&self, now: Instant, every: Duration) -> Round {
        let mut gate = lock(&self.gate);
        let mut due = Vec::new();
        let mut next: Option<Instant> = None;
        for call in gate.in_flight.values_mut() {
            if call.beat_at <= now {
                call.beat_at = now + every;
                due.push(Beat {
                    outlet: Weak::clone(&call.outlet),
                    cancel: Arc::clone(&call.cancel),
                });
            }
            next = Some(next.map_or(call.beat_at, |at| at.min(call.beat_at)));
        }
        let next = next.map(|at| at.max(now + every / 16));
        gate.round_scheduled = next.is_some();
        Round { due, next }
    }

    /// Whether the session's guard was dropped (or the host shut down).
    pub(crate) fn is_revoked(&self) -> bool {
        lock(&self.gate).revoked
    }

    /// Counts a call whose handler is about to run.
    pub(crate) fn served(&self) {
        self.calls_served.fetch_add(1, Ordering::SeqCst);
    }

    /// Counts a served call whose handler ended cancelled.
    pub(crate) fn served_cancelled(&self) {
        self.calls_cancelled.fetch_add(1, Ordering::SeqCst);
    }

    // Cancellations run outside the gate's lock: a cancelled call that
    // waits for a slot is answered at once, which ends its ticket, which
    // takes the lock.

    fn revoke(&self) {
        let running: Vec<Arc<Cancellation>> = {
            let mut gate = lock(&self.gate);
            gate.revoked = true;
            gate.in_flight
                .values()
                .map(|c| Arc::clone(&c.cancel))
                .collect()
        };
        for cancel in running {
            cancel.cancel("the session was closed", false);
        }
    }

    fn cancel_in_flight(&self, reason: &str) {
        let running: Vec<Arc<Cancellation>> = lock(&self.gate)
            .in_flight
            .values()
            .map(|c| Arc::clone(&c.cancel))
            .collect();
        for cancel in running {
            cancel.cancel(reason, false);
        }
    }

    /// Waits for the answer to request `id`, sent in `mcp_session`.
    pub(crate) fn expect_answer(
        &self,
        id: &str,
        mcp_session: Option<String>,
    ) -> mpsc::Receiver<Answer> {
        let (reply, answer) = mpsc::channel();
        lock(&self.asks).insert(id.to_owned(), PendingAsk { mcp_session, reply });
        answer
    }

    /// Stops waiting for request `id`; `true` when it was still waiting
    /// (no answer had come).
    pub(crate) fn forget_answer(&self, id: &str) -> bool {
        lock(&self.asks).remove(id).is_some()
    }

    /// Hands a client's answer (a JSON-RPC response) to the handler awaiting
    /// it; `false` when none awaits this id from this MCP session (wrong,
    /// late or repeated), which leaves any other pending request untouched.
    pub(crate) fn deliver_answer(
        &self,
        id: &Value,
        mcp_session: Option<&str>,
        outcome: Answer,
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
        let found = lock(&self.gate)
            .in_flight
            .values()
            .find(|call| call.key.as_ref() == Some(key))
            .map(|call| Arc::clone(&call.cancel));
        if let Some(cancel) = &found {
            cancel.cancel(reason, true);
        }
        found.is_some()
    }
}

/// An admitted call; dropping it marks the call finished.
pub(crate) struct CallTicket {
    entry: Arc<SessionEntry>,
    id: u64,
    pub(crate) cancel: Arc<Cancellation>,
    /// The session had no keep-alive round scheduled: this call's admitter
    /// schedules one.
    pub(crate) schedule: bool,
}

impl Drop for CallTicket {
    fn drop(&mut self) {
        lock(&self.entry.gate).in_flight.remove(&self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::call::StaticSurface;

    #[test]
    fn minted_tokens_authenticate_and_altered_ones_do_not() {
        let table = SessionTable::new();
        let (_, token) = table.insert(Box::new(StaticSurface::new()));
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
        let (entry, _) = table.insert(Box::new(StaticSurface::new()));
        let running = admit(&entry, Instant::now()).unwrap();
        table.revoke(entry.locator);
        assert_eq!(table.len(), 0);
        assert!(running.cancel.is_cancelled());
        assert!(!running.cancel.by_client());
        assert!(admit(&entry, Instant::now()).is_none());
    }

    /// Admits a call kept alive through an outlet that is already gone.
    fn admit(entry: &Arc<SessionEntry>, beat_at: Instant) -> Option<CallTicket> {
        let outlet: Weak<dyn Outlet> = Weak::<Dead>::new();
        entry.admit(None, outlet, beat_at)
    }

    struct Dead;

    impl Outlet for Dead {
        fn notify(&self, _: &Value) -> Result<(), crate::call::call_link::Gone> {
            unreachable!("a dead outlet is never upgraded")
        }
        fn keep_alive(&self) -> Result<(), crate::call::call_link::Gone> {
            unreachable!("a dead outlet is never upgraded")
        }
        fn answer(&self, _: &Value) {}
        fn finish(&self, _: crate::model::http::HttpResponse) {}
        fn resumable(&self, _: &Arc<SessionEntry>, _: &str, _: bool) {}
        fn close_connection(&self, _: Duration) -> bool {
            false
        }
    }

    #[test]
    fn only_the_first_call_after_a_quiet_spell_schedules_a_keep_alive_round() {
        let table = SessionTable::new();
        let (entry, _) = table.insert(Box::new(StaticSurface::new()));
        let every = Duration::from_secs(1);
        let start = Instant::now();
        let first = admit(&entry, start + every).unwrap();
        let second = admit(&entry, start + every * 2).unwrap();
        assert!(first.schedule);
        assert!(!second.schedule, "a round is already due before it");

        // Before anyone is due, a round keeps nothing alive and runs again
        // when the first call is due.
        let early = entry.round(start, every);
        assert!(early.due.is_empty());
        assert_eq!(early.next, Some(start + every));

        // The first call is kept alive and due again an interval later; the
        // second is due at its own instant, which is the next round's.
        let round = entry.round(start + every, every);
        assert_eq!(round.due.len(), 1);
        assert!(Arc::ptr_eq(&round.due[0].cancel, &first.cancel));
        assert_eq!(round.next, Some(start + every * 2));
        let round = entry.round(start + every * 2, every);
        assert_eq!(round.due.len(), 2, "both are due at the same instant");
        assert_eq!(round.next, Some(start + every * 3));

        // Once every call has ended, the round schedules no other, and the
        // next call schedules one again.
        drop((first, second));
        let last = entry.round(start + every * 3, every);
        assert!(last.due.is_empty());
        assert_eq!(last.next, None);
        let again = admit(&entry, start + every * 4).unwrap();
        assert!(again.schedule);

        // A call due a moment after another is kept alive by the round a
        // sixteenth of the interval later, not by a round of its own.
        let close = admit(&entry, start + every * 4 + Duration::from_millis(1)).unwrap();
        assert!(!close.schedule);
        let round = entry.round(start + every * 4, every);
        assert_eq!(round.due.len(), 1);
        assert_eq!(round.next, Some(start + every * 4 + every / 16));
        let round = entry.round(start + every * 4 + every / 16, every);
        assert_eq!(round.due.len(), 1);
        assert!(Arc::ptr_eq(&round.due[0].cancel, &close.cancel));
    }
}
