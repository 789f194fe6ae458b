//! `TCP_NODELAY` and the write timeout for every connection, set once on the
//! listening socket.
//!
//! tiny_http accepts connections on its own thread and never hands the
//! socket out, so the host cannot touch an accepted connection. What it can
//! do is set the options on the listener and rely on the operating system
//! copying them to each socket `accept` returns. What each copies:
//!
//! | platform | `TCP_NODELAY` | write timeout (`SO_SNDTIMEO`) |
//! | --- | --- | --- |
//! | Linux | copied | copied |
//! | FreeBSD, NetBSD, OpenBSD | copied | copied |
//! | macOS (and iOS) | copied | **not copied**: the kernel's `sonewconn` leaves a new socket's send timeout at zero, which means none |
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

use std::io;
use std::net::{TcpListener, TcpStream};
use std::time::Duration;

#[cfg(unix)]
use std::os::fd::OwnedFd as OwnedSocket;
#[cfg(windows)]
use std::os::windows::io::OwnedSocket;

/// Sets `TCP_NODELAY` and `write_timeout` on `listener`, for the accepted
/// sockets to copy (see the module docs for which platforms do).
///
/// A read timeout must never be set here: on a listener it also times out
/// `accept`, which ends tiny_http's accept thread for good. `accept`
/// ignores the write timeout.
#[cfg(any(unix, windows))]
pub(crate) fn tune_listener(
    listener: TcpListener,
    write_timeout: Duration,
) -> io::Result<TcpListener> {
    // std sets these options only through a stream; on the socket underneath
    // it is the same setsockopt either way.
    let socket = TcpStream::from(OwnedSocket::from(listener));
    socket.set_nodelay(true)?;
    socket.set_write_timeout(Some(write_timeout))?;
    Ok(TcpListener::from(OwnedSocket::from(socket)))
}

/// Elsewhere (neither Unix nor Windows) the listener is served untuned.
#[cfg(not(any(unix, windows)))]
pub(crate) fn tune_listener(
    listener: TcpListener,
    _write_timeout: Duration,
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
        let tuned = tune_listener(TcpListener::bind("127.0.0.1:0").unwrap(), timeout).unwrap();
        let accepted = accept_one(&tuned);
        assert!(accepted.nodelay().unwrap());
        let copied = if cfg!(target_vendor = "apple") {
            None
        } else {
            Some(timeout)
        };
        assert_eq!(accepted.write_timeout().unwrap(), copied);

        // And the options come from the tuning, not from the defaults.
        let plain = accept_one(&TcpListener::bind("127.0.0.1:0").unwrap());
        assert!(!plain.nodelay().unwrap());
        assert_eq!(plain.write_timeout().unwrap(), None);
    }
}
