//! The floor of the round-trip bench (a bare tiny_http responder with as
//! many workers as a host has by default) and nothing else in the process:
//! the baseline `cargo bench --bench roundtrip` reads a host's memory
//! against, measured as `host_alone` is.
//!
//! Prints `{"url": URL, "auth": …}` on one line and serves until stdin
//! closes.
#![forbid(unsafe_code)]

fn main() -> Result<(), Box<dyn std::error::Error>> {
    toolhost_tests::bench_host::floor_alone()
}
