//! What a refused request costs, kept small: the connections the host has
//! refused a request on, and how often refusals of a bearer are reported.
//!
//! A refused request ends its connection. tiny_http gives no way to close
//! a connection it has accepted, and reads a connection's pipelined
//! requests ahead into its queue whether or not anyone answers them: one
//! connection of 50,000 `GET`s whose client never read an answer held every
//! worker, one in the write and the rest waiting behind it for the same
//! connection's ordered writer. So a refusal is answered with
//! `Connection: close`, and the connection is remembered here (by the
//! client's address, unique while the connection lives): every later
//! request on it is dropped without a byte written, which costs a worker
//! microseconds and never waits for the connection's writer. tiny_http
//! closes the connection when the client does, or when a read has waited
//! for the read timeout.
//!
//! An address is forgotten once no request came on it for longer than the
//! read timeout (tiny_http has closed the connection by then, unless the
//! client trickles bytes, whose next request is then refused again): a
//! later connection that reuses the port is served as any other. The set
//! is bounded; past its bound a refused connection is not remembered, and
//! its next request is refused (and written) again.

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
const MAX_REMEMBERED: usize = 65_536;

/// How many refused bearers are reported one by one each second; the rest
/// of the second's are counted in one [`Event::AuthRefusalsSuppressed`].
pub(crate) const REPORTED_PER_SECOND: u32 = 10;

/// The connections a request was refused on, by client address, with when
/// they stop being remembered.
pub(crate) struct Refused {
    closing: Mutex<HashMap<SocketAddr, Instant>>,
    /// How many are remembered: read without the lock, so that a host with
    /// none pays one load per request.
    count: AtomicUsize,
    /// How long a connection is remembered after its last request.
    remember: Duration,
    reports: Mutex<Reports>,
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
    /// Remembers connections for `idle` and a second after their last
    /// request (tiny_http's reads give up after the sockets' read timeout,
    /// `idle`).
    pub(crate) fn new(idle: Duration) -> Refused {
        Refused {
            closing: Mutex::default(),
            count: AtomicUsize::new(0),
            remember: idle + Duration::from_secs(1),
            reports: Mutex::new(Reports {
                until: Instant::now(),
                reported: 0,
                suppressed: 0,
            }),
        }
    }

    /// Marks the connection from `peer` as closing: its later requests are
    /// dropped unanswered.
    pub(crate) fn close(&self, peer: Option<&SocketAddr>) {
        let Some(peer) = peer else { return };
        let now = Instant::now();
        let mut closing = lock(&self.closing);
        if closing.len() >= MAX_REMEMBERED {
            closing.retain(|_, until| *until > now);
        }
        if closing.len() < MAX_REMEMBERED {
            closing.insert(*peer, now + self.remember);
        }
        self.count.store(closing.len(), Ordering::Relaxed);
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
        let closing_now = match closing.get_mut(peer) {
            Some(until) if *until > now => {
                *until = now + self.remember;
                true
            }
            Some(_) => {
                closing.remove(peer);
                false
            }
            None => false,
        };
        self.count.store(closing.len(), Ordering::Relaxed);
        closing_now
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
        let refused = Refused::new(Duration::from_secs(30));
        assert!(!refused.is_closing(Some(&peer(1000))));
        refused.close(Some(&peer(1000)));
        assert!(refused.is_closing(Some(&peer(1000))));
        assert!(!refused.is_closing(Some(&peer(1001))));
        assert!(!refused.is_closing(None));
    }

    #[test]
    fn a_refused_connection_is_forgotten_after_the_read_timeout() {
        let refused = Refused::new(Duration::ZERO);
        refused.close(Some(&peer(1000)));
        {
            let mut closing = lock(&refused.closing);
            let past = Instant::now() - Duration::from_millis(1);
            closing.values_mut().for_each(|until| *until = past);
        }
        assert!(!refused.is_closing(Some(&peer(1000))));
        assert_eq!(refused.count.load(Ordering::Relaxed), 0);
    }
}
