//! A standalone stdio relay, for an application that cannot have an agent
//! start the application itself again (a GUI bundle, a program whose
//! `main` it does not own, an FFI host): ship this small program beside
//! it, and hand the agent the session's stdio entry with its `command`
//! pointing here.
//!
//! ```no_run
//! # use toolhost::{HostConfig, StaticSurface, ToolHost};
//! # toolhost::relay::run_if_requested();
//! # let host = ToolHost::bind(HostConfig::default())?;
//! # let session = host.open_session(StaticSurface::new());
//! let mut entry = session.stdio_relay_entry()?;
//! entry["command"] = "/opt/myapp/stdio_relay".into();
//! # Ok::<(), toolhost::Error>(())
//! ```
//!
//! The relay is the same code the re-executed application runs
//! (`toolhost::relay`): it reads the session's URL and bearer from
//! `TOOLHOST_BRIDGE_URL` and `TOOLHOST_BRIDGE_AUTHORIZATION` — never from
//! its arguments, which every user of the machine can read — and relays
//! newline-delimited JSON-RPC between its stdin/stdout and the session
//! until stdin ends (exit status 0), stdout fails (1), or the session ends
//! (3): the application dropped it or exited, and the first request after
//! is answered with a JSON-RPC error (`-32000`) saying the session has
//! ended.
//!
//! ```text
//! cargo build --example stdio_relay
//! ```

use std::process::ExitCode;

use toolhost::relay::{AUTHORIZATION_VAR, URL_VAR};

fn main() -> ExitCode {
    // With the two variables set, this relays and exits.
    toolhost::relay::run_if_requested();
    eprintln!(
        "stdio_relay: {URL_VAR} is not set. This program is started by an agent (or any MCP \
         stdio client) from a toolhost session's stdio entry, whose env carries {URL_VAR} and \
         {AUTHORIZATION_VAR}; see ToolSession::stdio_relay_entry."
    );
    ExitCode::from(2)
}
