//! A loopback TCP relay in front of an upstream MCP server that a test can
//! switch: passing bytes (up), stopping them where they are without closing
//! anything — the network face of a process stopped with `SIGSTOP` — or
//! refusing (down: every connection closed, new ones closed at once). The
//! upstream itself stays as it is, so its session and bearer outlive the
//! outage, as a real server's would across a restart behind a fixed URL.

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

const UP: u8 = 0;
const STALLED: u8 = 1;
const DOWN: u8 = 2;

/// How often a stalled pump looks whether it may go on.
const STALL_POLL: Duration = Duration::from_millis(10);

/// The relay; dropping it closes the listener and every connection.
pub struct Switch {
    addr: SocketAddr,
    state: Arc<AtomicU8>,
    stopped: Arc<AtomicBool>,
    open: Arc<Mutex<Vec<TcpStream>>>,
}

impl Switch {
    /// A relay on a fresh loopback port to `upstream`, passing bytes.
    pub fn to(upstream: SocketAddr) -> Switch {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let switch = Switch {
            addr,
            state: Arc::new(AtomicU8::new(UP)),
            stopped: Arc::new(AtomicBool::new(false)),
            open: Arc::default(),
        };
        let (state, stopped, open) = (
            Arc::clone(&switch.state),
            Arc::clone(&switch.stopped),
            Arc::clone(&switch.open),
        );
        thread::spawn(move || {
            for client in listener.incoming() {
                if stopped.load(Ordering::SeqCst) {
                    return;
                }
                let Ok(client) = client else { continue };
                if state.load(Ordering::SeqCst) == DOWN {
                    drop(client);
                    continue;
                }
                let Ok(server) = TcpStream::connect(upstream) else {
                    continue;
                };
                let _ = client.set_nodelay(true);
                let _ = server.set_nodelay(true);
                {
                    let mut open = open.lock().unwrap();
                    open.push(client.try_clone().unwrap());
                    open.push(server.try_clone().unwrap());
                }
                // The upstream checks that `Host` names it: the requests
                // name the relay, so their `Host` is rewritten on the way.
                let rewrite = (
                    format!("Host: {addr}\r\n").into_bytes(),
                    format!("Host: {upstream}\r\n").into_bytes(),
                );
                pump(
                    client.try_clone().unwrap(),
                    server.try_clone().unwrap(),
                    &state,
                    Some(rewrite),
                );
                pump(server, client, &state, None);
            }
        });
        switch
    }

    /// The relay's address, to give the layer instead of the upstream's.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `url` (the upstream's) with the relay's port instead.
    pub fn url_for(&self, url: &str) -> String {
        let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
        let path = rest.find('/').map_or("", |at| &rest[at..]);
        format!("http://{}{path}", self.addr)
    }

    /// Passes bytes again (what a stall held back goes on).
    pub fn up(&self) {
        self.state.store(UP, Ordering::SeqCst);
    }

    /// Holds every byte where it is, closing nothing.
    pub fn stall(&self) {
        self.state.store(STALLED, Ordering::SeqCst);
    }

    /// Closes every connection and refuses new ones until [`Switch::up`].
    pub fn down(&self) {
        self.state.store(DOWN, Ordering::SeqCst);
        for stream in self.open.lock().unwrap().drain(..) {
            let _ = stream.shutdown(Shutdown::Both);
        }
    }
}

impl Drop for Switch {
    fn drop(&mut self) {
        self.stopped.store(true, Ordering::SeqCst);
        self.down();
        // Wakes the accept loop so that it sees the stop.
        let _ = TcpStream::connect(self.addr);
    }
}

/// Copies `from` to `to` on a thread of its own, holding bytes while the
/// relay is stalled, replacing `rewrite.0` by `rewrite.1` in each read (a
/// request's head arrives in one write); ends when either side closes.
fn pump(
    mut from: TcpStream,
    mut to: TcpStream,
    state: &Arc<AtomicU8>,
    rewrite: Option<(Vec<u8>, Vec<u8>)>,
) {
    let state = Arc::clone(state);
    thread::spawn(move || {
        let mut buf = vec![0u8; 64 << 10];
        loop {
            while state.load(Ordering::SeqCst) == STALLED {
                thread::sleep(STALL_POLL);
            }
            let n = match from.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            while state.load(Ordering::SeqCst) == STALLED {
                thread::sleep(STALL_POLL);
            }
            let bytes = match &rewrite {
                Some((from, to)) => replace(&buf[..n], from, to),
                None => buf[..n].to_vec(),
            };
            if state.load(Ordering::SeqCst) == DOWN || to.write_all(&bytes).is_err() {
                break;
            }
        }
        let _ = to.shutdown(Shutdown::Write);
        let _ = from.shutdown(Shutdown::Read);
    });
}

/// `bytes` with every `from` replaced by `to`.
fn replace(bytes: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at..].starts_with(from) {
            out.extend_from_slice(to);
            at += from.len();
        } else {
            out.push(bytes[at]);
            at += 1;
        }
    }
    out
}
