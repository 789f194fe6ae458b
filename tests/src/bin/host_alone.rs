//! A host with the default settings and one session of the round-trip
//! bench's tools, and nothing else in the process: the program whose
//! memory `cargo bench --bench roundtrip` measures beside its own
//! `--serve-alone` child. A host's resident set is mostly pages mapped
//! from its program file, and the bench's binary carries the load
//! generator, the client and the schema validator besides the host; this
//! one carries what an application that hosts tools carries.
//!
//! Prints `{"toolhost": URL, "auth": BEARER}` on one line and serves until
//! stdin closes.
#![forbid(unsafe_code)]

fn main() -> Result<(), Box<dyn std::error::Error>> {
    toolhost_tests::bench_host::serve_alone()
}
