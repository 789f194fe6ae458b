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
//! last request — and for as long as a body of it is being drained, since
//! tiny_http reads nothing more from a connection until its body is gone:
//! a pipeline read ahead arrives within microseconds of the refusal (or
//! of the drain's end), and keeps it remembered while it flows; a client
//! that pauses longer and sends again is refused again (one small write
//! per pause). The price of the short window: a new connection that
//! reuses the port of a refused one within it would have its first
//! request dropped. Holding the connection open to rule that out delayed
//! every refused client's end of the connection by the window.
//!
//! At most [`MAX_REMEMBERED`] connections are remembered. When that many
//! are, a refusal is not written at all ([`Claim::Full`]): the memory
//! cannot be overflowed into answering a connection's pipeline one
//! refusal at a time, which is what could fill a never-reading client's
//! buffers and hold the worker writing to it. A client without the bearer
//! gets no answer while thousands of refused connections are live; a
//! bearer holder is never refused, and never affected.

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
    /// When it stops being remembered, once no body of it is draining.
    until: Instant,
    /// How many of its bodies are being drained (tiny_http reads one at a
    /// time, so 0 or 1 in practice): remembered for as long as one is.
    draining: u32,
}

impl Closing {
    fn live(&self, now: Instant) -> bool {
        self.draining > 0 || self.until > now
    }
}

/// What a refusal may do with its connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Claim {
    /// Answer it: the connection is remembered as closing from now on.
    Answer,
    /// Write nothing: the connection was already refused (a request read
    /// ahead on it), or it cannot be told from others (no address).
    Closing,
    /// Write nothing: [`MAX_REMEMBERED`] refused connections are live,
    /// and one more answered could not be kept from answering its whole
    /// pipeline (see the module docs).
    Full,
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

    /// Claims the connection from `peer` for a refusal: whether to write
    /// it. `draining`: a body of the request is about to be drained, and the
    /// connection stays remembered until [`Refused::release`].
    pub(crate) fn claim(&self, peer: Option<&SocketAddr>, draining: bool) -> Claim {
        let Some(peer) = peer else {
            // tiny_http knows the address of every TCP connection.
            return Claim::Answer;
        };
        let now = Instant::now();
        let mut closing = lock(&self.closing);
        let claim = if let Some(entry) = closing.get_mut(peer).filter(|entry| entry.live(now)) {
            entry.until = now + REMEMBERED;
            entry.draining += u32::from(draining);
            Claim::Closing
        } else {
            if closing.len() >= MAX_REMEMBERED {
                closing.retain(|_, entry| entry.live(now));
            }
            if closing.len() < MAX_REMEMBERED {
                closing.insert(
                    *peer,
                    Closing {
                        until: now + REMEMBERED,
                        draining: u32::from(draining),
                    },
                );
                Claim::Answer
            } else {
                Claim::Full
            }
        };
        self.count.store(closing.len(), Ordering::Relaxed);
        claim
    }

    /// A body of the connection from `peer`, claimed with `draining`, is
    /// gone: it is remembered for [`REMEMBERED`] from now, for the requests
    /// tiny_http reads after it.
    pub(crate) fn release(&self, peer: Option<&SocketAddr>) {
        let Some(peer) = peer else { return };
        if let Some(entry) = lock(&self.closing).get_mut(peer) {
            entry.draining = entry.draining.saturating_sub(1);
            entry.until = Instant::now() + REMEMBERED;
        }
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
            Some(entry) if entry.live(now) => {
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
        closing.retain(|_, entry| entry.live(now));
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
        assert_eq!(refused.claim(Some(&peer(1000)), false), Claim::Answer);
        assert!(refused.is_closing(Some(&peer(1000))));
        // A second refusal on it is not written: the connection is closing.
        assert_eq!(refused.claim(Some(&peer(1000)), false), Claim::Closing);
        assert!(!refused.is_closing(Some(&peer(1001))));
        assert!(!refused.is_closing(None));
    }

    /// Makes every remembered connection's window lapse.
    fn lapse(refused: &Refused) {
        let past = Instant::now() - Duration::from_millis(1);
        let mut closing = lock(&refused.closing);
        closing.values_mut().for_each(|entry| entry.until = past);
    }

    #[test]
    fn a_refused_connection_is_forgotten_once_its_time_is_up() {
        let refused = Refused::new();
        assert_eq!(refused.claim(Some(&peer(1000)), false), Claim::Answer);
        lapse(&refused);
        assert!(!refused.is_closing(Some(&peer(1000))));
        refused.purge();
        assert_eq!(refused.count.load(Ordering::Relaxed), 0);
        assert_eq!(refused.claim(Some(&peer(1000)), false), Claim::Answer);
    }

    #[test]
    fn a_connection_whose_body_drains_is_remembered_until_the_drain_ends() {
        let refused = Refused::new();
        assert_eq!(refused.claim(Some(&peer(1000)), true), Claim::Answer);
        lapse(&refused);
        refused.purge();
        // However long the body takes, what tiny_http reads after it is
        // dropped...
        assert!(refused.is_closing(Some(&peer(1000))));
        refused.release(Some(&peer(1000)));
        // ...and for the window after it, no longer.
        assert!(refused.is_closing(Some(&peer(1000))));
        lapse(&refused);
        assert!(!refused.is_closing(Some(&peer(1000))));
    }

    #[test]
    fn a_full_memory_writes_no_refusal_instead_of_forgetting_one() {
        let refused = Refused::new();
        let port = |i: usize| u16::try_from(i + 1).unwrap();
        for i in 0..MAX_REMEMBERED {
            assert_eq!(refused.claim(Some(&peer(port(i))), true), Claim::Answer);
        }
        // Every one of them is live (draining): the next is not answered,
        // and neither are those already remembered.
        let next = peer(port(MAX_REMEMBERED));
        assert_eq!(refused.claim(Some(&next), false), Claim::Full);
        assert_eq!(refused.claim(Some(&next), false), Claim::Full);
        assert_eq!(refused.claim(Some(&peer(1)), false), Claim::Closing);
        // Once one is gone, there is room again.
        refused.release(Some(&peer(1)));
        lapse(&refused);
        assert_eq!(refused.claim(Some(&next), false), Claim::Answer);
    }
}
