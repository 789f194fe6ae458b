//! A host with the default settings (read timeout from the first argument,
//! in milliseconds, when given) and one session of the round-trip bench's
//! tools, for tests that attack a host from outside its process: lower its
//! descriptor limit (`ulimit -n` in a shell that then runs it), or measure
//! its threads and memory without a test harness's own in the way.
//!
//! Prints `{"url": URL, "auth": BEARER}` on one line, then serves until
//! stdin closes; every event goes to stderr as one line, `Debug` form.
#![forbid(unsafe_code)]

use std::io::{self, Write};
use std::time::Duration;

use serde_json::json;
use toolhost::{HostConfig, ToolHost};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut config = HostConfig::default()
        .server_name("probe")
        .on_event(|event| eprintln!("event: {event:?}"));
    if let Some(ms) = std::env::args().nth(1) {
        config = config.read_timeout(Duration::from_millis(ms.parse()?));
    }
    let host = ToolHost::bind(config)?;
    let session = host.open_session(toolhost_tests::bench_host::echo_tools()?);
    println!(
        "{}",
        json!({"url": session.url(), "auth": session.authorization()})
    );
    io::stdout().flush()?;
    io::copy(&mut io::stdin(), &mut io::sink())?;
    Ok(())
}
