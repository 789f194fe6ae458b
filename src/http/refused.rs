//! What a refused request costs, kept small: the connections the host has
//! refused a request on, and how often refusals of a bearer are reported.
//!
//! A refused request ends its connection. tiny_http gives no way to close
//! a connection it has accepted, and reads a connection's pipelined
//! requests ahead into its queue whether or not anyone answers them: one
//! connection of 50,000 `GET`s whose client never read an answer held every
//! worker, one in the write and the rest waiting behind it for the same
//! connection's ordered writer. So a refusal is answered with
//! `Connection: close`, and the connection is remembered here by the
//! client's address: every later request on it is dropped without a byte
//! written, which costs a worker microseconds and never waits for the
//! connection's writer.
//!
//! An address names one connection only while that connection is open,
//! and on loopback a closed connection's port can come back within
//! seconds. So a connection is remembered only for [`REMEMBERED`] after its
//! last request: a pipeline read ahead arrives within microseconds of the
//! refusal, and keeps it remembered while it flows; a client that pauses
//! longer and sends again is refused again (one small write per pause).
//! The price of the short window: a new connection that reuses the port of
//! a refused one within it would have its first request dropped. Holding
//! the connection open to rule that out delayed every refused client's
//! end of the connection by the window. At most [`MAX_REMEMBERED`]
//! connections are remembered; past that a refusal is answered the same
//! way but not remembered.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::event::{AuthRefusal, Event};
use crate::mcp::Server;
use crate::sync::lock;

use super::Transport;

/// The most refused connections remembered at once.
const MAX_REMEMBERED: usize = 4096;

/// How long a refused connection is remembered after its last request: a
/// pipeline read ahead arrives within microseconds of the refusal.
const REMEMBERED: Duration = Duration::from_millis(50);

/// How many refused bearers are reported one by one each second; the rest
/// of the second's are counted in one [`Event::AuthRefusalsSuppressed`].
pub(crate) const REPORTED_PER_SECOND: u32 = 10;

/// The connections a request was refused on, by client address.
pub(crate) struct Refused {
    closing: Mutex<HashMap<SocketAddr, Closing>>,
    /// How many are remembered: read without the lock, so that a host with
    /// none pays one load per request.
    count: AtomicUsize,
    reports: Mutex<Reports>,
}

/// A refused connection.
struct Closing {
    /// When it stops being remembered.
    until: Instant,
}

/// The rate limit of [`Event::AuthRefused`].
struct Reports {
    /// When the current second ends.
    until: Instant,
    /// Reported in it.
    reported: u32,
    /// Not reported in it.
    suppressed: u64,
}

impl Refused {
    pub(crate) fn new() -> Refused {
        Refused {
            closing: Mutex::default(),
            count: AtomicUsize::new(0),
            reports: Mutex::new(Reports {
                until: Instant::now(),
                reported: 0,
                suppressed: 0,
            }),
        }
    }

    /// Claims the connection from `peer` for a refusal: `false` when it is
    /// already closing (a request read ahead on it, to be dropped), `true`
    /// when this refusal is to be written — remembered if there is room.
    pub(crate) fn claim(&self, peer: Option<&SocketAddr>) -> bool {
        let Some(peer) = peer else { return true };
        let now = Instant::now();
        let mut closing = lock(&self.closing);
        if let Some(entry) = closing.get_mut(peer) {
            if entry.until > now {
                entry.until = now + REMEMBERED;
                return false;
            }
        }
        if closing.len() >= MAX_REMEMBERED {
            closing.retain(|_, entry| entry.until > now);
        }
        if closing.len() < MAX_REMEMBERED {
            closing.insert(
                *peer,
                Closing {
                    until: now + REMEMBERED,
                },
            );
        }
        self.count.store(closing.len(), Ordering::Relaxed);
        true
    }

    /// Whether a request from `peer` comes on a connection a request was
    /// refused on; if so, it stays remembered for a while longer.
    pub(crate) fn is_closing(&self, peer: Option<&SocketAddr>) -> bool {
        if self.count.load(Ordering::Relaxed) == 0 {
            return false;
        }
        let Some(peer) = peer else { return false };
        let now = Instant::now();
        let mut closing = lock(&self.closing);
        match closing.get_mut(peer) {
            Some(entry) if entry.until > now => {
                entry.until = now + REMEMBERED;
                true
            }
            _ => false,
        }
    }

    /// Forgets the connections whose time is up; called every tick.
    pub(crate) fn purge(&self) {
        if self.count.load(Ordering::Relaxed) == 0 {
            return;
        }
        let now = Instant::now();
        let mut closing = lock(&self.closing);
        closing.retain(|_, entry| entry.until > now);
        self.count.store(closing.len(), Ordering::Relaxed);
    }

    /// Reports a refused bearer, at most [`REPORTED_PER_SECOND`] a second:
    /// a flood of them would otherwise flood the application's log. The
    /// rest are counted and reported in one event when their second ends.
    pub(crate) fn report(transport: &Arc<Transport>, reason: AuthRefusal) {
        let this = &transport.refused;
        let now = Instant::now();
        let mut reports = lock(&this.reports);
        if now >= reports.until {
            reports.until = now + Duration::from_secs(1);
            reports.reported = 0;
        }
        if reports.reported < REPORTED_PER_SECOND {
            reports.reported += 1;
            drop(reports);
            transport
                .runtime
                .server
                .emit(|| Event::AuthRefused { reason });
            return;
        }
        reports.suppressed += 1;
        if reports.suppressed == 1 {
            // The first one suppressed schedules the count's report.
            let at = reports.until;
            drop(reports);
            let weak = Arc::downgrade(transport);
            transport.runtime.schedule(at, move || {
                if let Some(transport) = weak.upgrade() {
                    transport.refused.flush(&transport.runtime.server);
                }
            });
        }
    }

    /// Reports the refusals counted but not reported yet, if any: when
    /// their second ends, and at shutdown (which stops the timer).
    pub(crate) fn flush(&self, server: &Server) {
        let count = std::mem::take(&mut lock(&self.reports).suppressed);
        if count > 0 {
            server.emit(|| Event::AuthRefusalsSuppressed { count });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn peer(port: u16) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], port))
    }

    #[test]
    fn a_refused_connection_is_remembered_and_others_are_not() {
        let refused = Refused::new();
        assert!(!refused.is_closing(Some(&peer(1000))));
        assert!(refused.claim(Some(&peer(1000))));
        assert!(refused.is_closing(Some(&peer(1000))));
        // A second refusal on it is not written: the connection is closing.
        assert!(!refused.claim(Some(&peer(1000))));
        assert!(!refused.is_closing(Some(&peer(1001))));
        assert!(!refused.is_closing(None));
    }

    #[test]
    fn a_refused_connection_is_forgotten_once_its_time_is_up() {
        let refused = Refused::new();
        assert!(refused.claim(Some(&peer(1000))));
        {
            let mut closing = lock(&refused.closing);
            let past = Instant::now() - Duration::from_millis(1);
            closing.values_mut().for_each(|entry| entry.until = past);
        }
        assert!(!refused.is_closing(Some(&peer(1000))));
        refused.purge();
        assert_eq!(refused.count.load(Ordering::Relaxed), 0);
        assert!(refused.claim(Some(&peer(1000))));
    }
}
