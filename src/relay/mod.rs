//! Your program as a stdio MCP server: a relay between an agent's stdio MCP
//! client and a session's HTTP endpoint, started by re-executing the
//! program itself — no second binary to ship.
//!
//! Not every agent takes an HTTP `mcpServers` entry; ACP requires only
//! stdio of them. For those, the session's stdio entry
//! ([`ToolSession::stdio_relay_entry`](crate::ToolSession::stdio_relay_entry),
//! chosen for you by
//! [`ToolSession::acp_mcp_servers_for`](crate::ToolSession::acp_mcp_servers_for))
//! names the absolute path of the running program as the command, with no
//! arguments, and the session's URL and bearer in the environment
//! ([`URL_VAR`], [`AUTHORIZATION_VAR`]) — never in the arguments, which
//! every user of the machine can read in `ps`. The agent starts that
//! command; the copy of your program finds the two variables at the top of
//! `main`, in [`run_if_requested`], and becomes the relay instead of
//! running the program:
//!
//! ```no_run
//! // First thing in `main`: in the copy an agent started, this relays and
//! // exits; everywhere else it returns at once.
//! toolhost::relay::run_if_requested();
//! // … the application, which binds a host and opens sessions …
//! ```
//!
//! The relay speaks newline-delimited JSON-RPC on stdin and stdout and
//! writes nothing else to stdout (its few diagnostics go to stderr). Every
//! message of the agent goes to the endpoint as it is — requests,
//! notifications, 2025-03-26 batches, answers to the server's questions —
//! with the headers its revision needs (`Mcp-Session-Id` and
//! `MCP-Protocol-Version` in the MCP session the agent's `initialize`
//! opened; version, method and name headers for 2026-07-28 messages). Every
//! message that comes back goes to stdout as it arrives: responses,
//! progress and log notifications, the server's own requests
//! (elicitation, sampling, roots), and the session's list changes. Requests
//! run side by side, each on a thread of its own, so a long call never holds
//! up the next; `notifications/cancelled` stops the request it names (in
//! 2026-07-28 by closing its stream, which is that revision's cancel over
//! HTTP). A response stream that ends early is resumed as
//! [`toolhost::client`](crate::client) resumes it.
//!
//! When the application drops the session, or stops its host, or exits
//! (or is killed), the next request gets a JSON-RPC error (JSON-RPC's
//! generic server error: "this toolhost tool session has ended …; the
//! stdio server exits now")
//! and the relay exits with status 3 ([`Ending::SessionEnded`]) — whatever
//! the socket said: a refused bearer, a refused connection, or any fault
//! of a kept connection (a reset, an answer cut short) after which a fresh
//! connection to the host is refused. An agent's MCP server thus ends with
//! the application that served it, at the first request after. Nothing it
//! writes ever mentions credentials: agents that see an HTTP 401 start an
//! OAuth login, and a relay must not invite one.
//! It exits too when stdin ends, once the requests still in flight have
//! answered (it waits a second at most), ending the MCP session on its way
//! out. An `initialize` is carried before the next line is read, so that a
//! client which writes without waiting for answers still has what follows
//! travel in the MCP session it opens.
//!
//! An application that cannot re-execute itself can ship a relay of its
//! own: `examples/stdio_relay.rs` is the whole program, [`Relay`] over
//! stdin and stdout.

mod pool;
mod pumps;

use std::env;
use std::fmt;
use std::io::{self, BufRead, Write};
use std::process;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::client::passthrough::Passthrough;
use crate::client::ClientError;

/// The environment variable that carries the session's URL to the relay.
pub const URL_VAR: &str = "TOOLHOST_RELAY_URL";

/// The environment variable that carries the session's `Authorization`
/// header value (`Bearer th_…`) to the relay.
pub const AUTHORIZATION_VAR: &str = "TOOLHOST_RELAY_AUTHORIZATION";

/// How long the relay lets the endpoint stay silent on one request before
/// it answers the request with an error. Long, because a tool may work for
/// minutes without a progress report, and the agent's own timeout (and its
/// `notifications/cancelled`) is the one that should decide.
pub const RELAY_TIMEOUT: Duration = Duration::from_secs(3600);

/// Set once [`run_if_requested`] has run in this process.
static CHECKED: AtomicBool = AtomicBool::new(false);

/// Whether this process called [`run_if_requested`]: only then is a stdio
/// entry naming this program safe to hand out, as the copy an agent starts
/// will relay instead of running the whole program again.
pub(crate) fn was_checked() -> bool {
    CHECKED.load(Ordering::SeqCst)
}

/// Relays and exits when this process was started as a stdio relay;
/// returns at once otherwise. Call it first thing in `main`.
///
/// It looks for [`URL_VAR`]; when that is set, the process is the copy an
/// agent started from a stdio `mcpServers` entry, and this function never
/// returns: it relays between stdin/stdout and the session (see the
/// [module documentation](self)) and exits the process with
/// [`Ending::exit_code`] — 0 when stdin ended, 1 when stdout could not be
/// written, 3 when the session ended — or with 2 when the variables cannot
/// be used (a message on stderr says why).
///
/// Calling it is also what makes
/// [`ToolSession::stdio_relay_entry`](crate::ToolSession::stdio_relay_entry)
/// available: an entry that starts this program is refused until the
/// program has shown that its copy will relay.
///
/// ```
/// // Without the variables (as here), it returns at once.
/// toolhost::relay::run_if_requested();
/// ```
pub fn run_if_requested() {
    CHECKED.store(true, Ordering::SeqCst);
    let Some(url) = env::var_os(URL_VAR) else {
        return;
    };
    let relay = match (url.into_string(), env::var(AUTHORIZATION_VAR)) {
        (Ok(url), Ok(authorization)) => Relay::new(&url, &authorization)
            .map_err(|err| format!("{URL_VAR} cannot be used: {err}")),
        (Err(_), _) => Err(format!("{URL_VAR} is not valid UTF-8")),
        (_, Err(_)) => Err(format!(
            "{URL_VAR} is set but {AUTHORIZATION_VAR} is not (or is not valid UTF-8); \
             both come from the session's stdio entry"
        )),
    };
    let relay = relay.unwrap_or_else(|problem| {
        eprintln!("toolhost stdio relay: {problem}");
        process::exit(2)
    });
    // Stdin is read on a thread of its own, which a lock cannot go to.
    let ending = relay.run(io::BufReader::new(io::stdin()), io::stdout());
    process::exit(ending.exit_code())
}

/// A relay between a stdio MCP client and a session's endpoint (see the
/// [module documentation](self)). [`run_if_requested`] is the usual way to
/// run one; this type is for programs that relay without re-executing
/// themselves, or that relay over other streams.
///
/// ```
/// use std::io::Cursor;
/// use toolhost::relay::{Ending, Relay};
/// use toolhost::{HostConfig, StaticSurface, Tool, ToolHost, ToolOutcome};
///
/// let host = ToolHost::bind(HostConfig::default())?;
/// let session = host.open_session(StaticSurface::new().tool(
///     Tool::new("echo", "Echoes text."),
///     |args, _| ToolOutcome::text(args["text"].as_str().unwrap_or("")),
/// )?);
/// // What a stdio client would write: two requests, then end of input.
/// let input = Cursor::new(concat!(
///     r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"doc","version":"0"}}}"#, "\n",
///     r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#, "\n",
/// ));
/// let output = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
/// struct Shared(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);
/// impl std::io::Write for Shared {
///     fn write(&mut self, b: &[u8]) -> std::io::Result<usize> { self.0.lock().unwrap().write(b) }
///     fn flush(&mut self) -> std::io::Result<()> { Ok(()) }
/// }
/// let relay = Relay::new(&session.url(), &session.authorization())?;
/// assert_eq!(relay.run(input, Shared(output.clone())), Ending::InputClosed);
/// let written = String::from_utf8(output.lock().unwrap().clone())?;
/// let answer: serde_json::Value = serde_json::from_str(written.lines().next().unwrap())?;
/// assert_eq!(answer["result"]["serverInfo"]["name"], "toolhost");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Relay {
    upstream: Passthrough,
}

impl Relay {
    /// A relay to the endpoint `url` (e.g. a session's
    /// [`url`](crate::ToolSession::url)), sending `authorization` (its
    /// [`authorization`](crate::ToolSession::authorization)) with every
    /// request.
    ///
    /// # Errors
    /// [`ClientError::InvalidUrl`] for a URL that is not plain `http://` to
    /// this machine, [`ClientError::InvalidConfig`] for an authorization
    /// value that cannot be a header.
    pub fn new(url: &str, authorization: &str) -> Result<Relay, ClientError> {
        Ok(Relay {
            upstream: Passthrough::new(url, authorization, RELAY_TIMEOUT)?,
        })
    }

    /// Relays between `input` and `output` until the input ends, the
    /// output fails or the session ends; says which. Blocks the calling
    /// thread; the requests run on threads of their own. A request still
    /// in flight when the relay returns goes on until its answer arrives,
    /// which is then dropped (in a process that exits, as
    /// [`run_if_requested`]'s does, it simply ends).
    pub fn run<R, W>(self, input: R, output: W) -> Ending
    where
        R: BufRead + Send + 'static,
        W: Write + Send + 'static,
    {
        pumps::run(self.upstream, input, output)
    }
}

impl fmt::Debug for Relay {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The settings hold the bearer.
        f.debug_struct("Relay").finish_non_exhaustive()
    }
}

/// Why a [`Relay`] stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Ending {
    /// The input ended: the client is done (the usual end of a stdio
    /// server). The MCP session was ended with `DELETE`.
    InputClosed,
    /// The output could not be written: the client is gone.
    OutputClosed,
    /// The session behind the endpoint ended (the application dropped it,
    /// stopped its host, or exited); the request that found out was
    /// answered with a JSON-RPC error (the generic server error) saying so.
    SessionEnded,
}

impl Ending {
    /// The exit status [`run_if_requested`] ends the process with: 0 for
    /// [`InputClosed`](Ending::InputClosed), 1 for
    /// [`OutputClosed`](Ending::OutputClosed), 3 for
    /// [`SessionEnded`](Ending::SessionEnded).
    pub fn exit_code(self) -> i32 {
        match self {
            Ending::InputClosed => 0,
            Ending::OutputClosed => 1,
            Ending::SessionEnded => 3,
        }
    }
}
