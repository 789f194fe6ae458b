//! A stdio MCP server for the tests of toolhost's stdio client and bridge:
//! the crate's own stdio relay (`toolhost::stdio_bridge`) in front of a
//! session the test opened and handed over in the relay's two variables, so
//! that the test decides the server's tools and sees their calls.
//!
//! Before relaying it writes one line to stderr, `stdio_server: relaying
//! as process PID`, so that a test can see stderr reach an event hook.
//! Without the variables it says so on stderr and exits with status 2.

use std::process::ExitCode;

use toolhost::stdio_bridge::{AUTHORIZATION_VAR, URL_VAR};

fn main() -> ExitCode {
    if std::env::var_os(URL_VAR).is_some() {
        eprintln!("stdio_server: relaying as process {}", std::process::id());
    }
    // With the variables set, this relays and exits.
    toolhost::stdio_bridge::run_if_requested();
    eprintln!(
        "stdio_server: set {URL_VAR} and {AUTHORIZATION_VAR} to a session's URL and authorization"
    );
    ExitCode::from(2)
}
