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
//! `TOOLHOST_RELAY_URL` and `TOOLHOST_RELAY_AUTHORIZATION` — never from
//! its arguments, which every user of the machine can read — and relays
//! newline-delimited JSON-RPC between its stdin/stdout and the session
//! until stdin ends (exit status 0), stdout fails (1), or the session ends
//! (3): the application dropped it or exited, and the first request after
//! is answered with a JSON-RPC error (`-32000`) saying the session has
//! ended. It takes no arguments: `--help` (or `-h`) prints what it does
//! and exits, with the variables set or not; anything else is refused with
//! that text on stderr and exit status 2, as are unusable variables.
//!
//! ```text
//! cargo build --example stdio_relay
//! ```

use std::process::ExitCode;

use toolhost::relay::{AUTHORIZATION_VAR, URL_VAR};

/// What `--help` prints.
fn usage() -> String {
    format!(
        "\
usage: stdio_relay [-h | --help]

Relays newline-delimited JSON-RPC between its stdin/stdout and a toolhost
session. An agent (or any MCP stdio client) starts it from the session's
stdio entry, whose env names the session (never the arguments, which
every user of the machine can read):

  {URL_VAR:<30} the session's URL
  {AUTHORIZATION_VAR:<30} its Authorization value

  -h, --help  print this and exit

Exit status: 0 when stdin ended; 1 when stdout failed; 2 when the
variables are missing or cannot be used, or the command line holds
anything but --help; 3 when the session ended.
"
    )
}

pub(crate) fn main() -> ExitCode {
    // Before the relay: the help must answer where the variables are
    // unset, and an entry never gives the relay arguments.
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|arg| arg == "-h" || arg == "--help") {
        print!("{}", usage());
        return ExitCode::SUCCESS;
    }
    if let Some(other) = args.first() {
        eprint!("stdio_relay: unknown option {other:?}\n\n{}", usage());
        return ExitCode::from(2);
    }
    // With the two variables set, this relays and exits.
    toolhost::relay::run_if_requested();
    eprintln!(
        "stdio_relay: {URL_VAR} is not set. This program is started by an agent (or any MCP \
         stdio client) from a toolhost session's stdio entry, whose env carries {URL_VAR} and \
         {AUTHORIZATION_VAR}; see ToolSession::stdio_relay_entry."
    );
    ExitCode::from(2)
}
