//! `TCP_NODELAY`, the write timeout and the read timeout for every
//! connection, set once on the listening socket.
//!
//! tiny_http accepts connections on its own thread and never hands the
//! socket out, so the host cannot touch an accepted connection. What it can
//! do is set the options on the listener and rely on the operating system
//! copying them to each socket `accept` returns. What each copies:
//!
//! | platform | `TCP_NODELAY` | timeouts (`SO_SNDTIMEO`, `SO_RCVTIMEO`) |
//! | --- | --- | --- |
//! | Linux | copied | copied |
//! | FreeBSD, NetBSD, OpenBSD | copied | copied |
//! | macOS (and iOS) | copied | **not copied**: the kernel's `sonewconn` leaves a new socket's timeouts at zero, which means none |
//! | Windows | copied, per Microsoft's `accept` documentation ("the same properties as" the listening socket) | copied, by the same statement |
//!
//! Linux is what the tests run on; the table's other rows come from the
//! kernels' sources (XNU's `tcp_input.c` copies `TF_NODELAY` and its
//! `sonewconn` no timeout; the BSDs' `sonewconn` copies both) and, for
//! Windows, from Microsoft's documentation. CI compiles for macOS but
//! cannot run there. It runs the Windows build under Wine, where this
//! module's test passes, but that is Wine's word for Windows, not
//! Windows': Wine keeps the write timeout itself and copies it to each
//! accepted socket as Windows is documented to, and hands `TCP_NODELAY`
//! to the Linux socket underneath, which Linux copies.
//!
//! Without `TCP_NODELAY`, a response written in more than one piece (every
//! event stream) meets the client's delayed ACK: about 40 ms on Linux, up
//! to 200 ms on Windows. Without the write timeout, a client that stops
//! reading holds whoever writes to it; see
//! [`HostConfig::write_timeout`](crate::HostConfig::write_timeout) for what
//! that means on macOS.
//!
//! The read timeout ([`idle_deadline`]: the host's read timeout, at least
//! [`IDLE_FLOOR`]) is what closes a connection that sends nothing:
//! tiny_http gives up on a connection whose read of the next request
//! waited that long (and every other read it makes is bounded the same
//! way), which frees its thread and descriptors. Without it, each idle
//! connection held a thread and two descriptors for good, so 600 idle
//! connections used up a 1024-descriptor limit. On a listener the read
//! timeout also bounds `accept`, after which tiny_http's accept thread
//! ends; the pool starts a new one on the same socket (see `pool`), and
//! its self-connections keep `accept` from waiting that long in the first
//! place.

use std::io;
use std::net::{TcpListener, TcpStream};
use std::time::Duration;

/// The shortest read timeout set on the sockets: longer than the longest
/// gap between the pool's self-connections (6.4 s), so that `accept`, which
/// obeys it too, never waits that long on a host that works. A shorter
/// [`HostConfig::read_timeout`](crate::HostConfig::read_timeout) still
/// bounds a body's arrival (by the host's own deadline); only idle
/// connections get this long.
pub(crate) const IDLE_FLOOR: Duration = Duration::from_secs(10);

/// The read timeout the accepted sockets get for a host whose read timeout
/// is `read_timeout`.
pub(crate) fn idle_deadline(read_timeout: Duration) -> Duration {
    read_timeout.max(IDLE_FLOOR)
}

#[cfg(unix)]
use std::os::fd::OwnedFd as OwnedSocket;
#[cfg(windows)]
use std::os::windows::io::OwnedSocket;

/// Sets `TCP_NODELAY`, `write_timeout` and `read_timeout` on `listener`,
/// for the accepted sockets to copy (see the module docs for which
/// platforms do). `accept` ignores the write timeout and obeys the read
/// timeout.
#[cfg(any(unix, windows))]
pub(crate) fn tune_listener(
    listener: TcpListener,
    write_timeout: Duration,
    read_timeout: Duration,
) -> io::Result<TcpListener> {
    // std sets these options only through a stream; on the socket underneath
    // it is the same setsockopt either way.
    let socket = TcpStream::from(OwnedSocket::from(listener));
    socket.set_nodelay(true)?;
    socket.set_write_timeout(Some(write_timeout))?;
    socket.set_read_timeout(Some(read_timeout))?;
    Ok(TcpListener::from(OwnedSocket::from(socket)))
}

/// Elsewhere (neither Unix nor Windows) the listener is served untuned.
#[cfg(not(any(unix, windows)))]
pub(crate) fn tune_listener(
    listener: TcpListener,
    _write_timeout: Duration,
    _read_timeout: Duration,
) -> io::Result<TcpListener> {
    Ok(listener)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The socket `accept` returns for one connection to `listener`.
    fn accept_one(listener: &TcpListener) -> TcpStream {
        let addr = listener.local_addr().unwrap();
        let _client = TcpStream::connect(addr).unwrap();
        listener.accept().unwrap().0
    }

    #[test]
    fn accepted_connections_carry_the_listeners_options_where_the_platform_copies_them() {
        let timeout = Duration::from_secs(3);
        let read = Duration::from_secs(5);
        let tuned =
            tune_listener(TcpListener::bind("127.0.0.1:0").unwrap(), timeout, read).unwrap();
        let accepted = accept_one(&tuned);
        assert!(accepted.nodelay().unwrap());
        let copied = |timeout| (!cfg!(target_vendor = "apple")).then_some(timeout);
        assert_eq!(accepted.write_timeout().unwrap(), copied(timeout));
        assert_eq!(accepted.read_timeout().unwrap(), copied(read));

        // And the options come from the tuning, not from the defaults.
        let plain = accept_one(&TcpListener::bind("127.0.0.1:0").unwrap());
        assert!(!plain.nodelay().unwrap());
        assert_eq!(plain.write_timeout().unwrap(), None);
        assert_eq!(plain.read_timeout().unwrap(), None);
    }
}
