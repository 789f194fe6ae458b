//! The README's numbers, and the defaults the setters' docs state, pinned
//! to the constants they describe.
//!
//! The README is what a user reads first, and a default it states in words
//! drifts from the code without anyone noticing (an audit found "every
//! 60 s" for a report made once, and words where a user needed a number).
//! Each test here rebuilds a phrase of the README from the constant it
//! names and finds it there, so changing a default fails until the README
//! says the new one — and finds no phrase built from another value, so a
//! phrase the README states twice, with two numbers, fails too. The same
//! holds for each setter's doc, which states its default as a number
//! because most default constants are the crate's own.

use std::time::Duration;

use crate::config::{self, HostConfig};
use crate::http::{drain, pool, socket};
use crate::runtime::{resume, signer};

/// The README with every run of whitespace made one space, so that a
/// phrase may wrap anywhere.
fn readme() -> String {
    include_str!("../README.md")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// Whole seconds of a default that the README states in seconds.
fn secs(duration: Duration) -> u64 {
    assert_eq!(
        duration.subsec_nanos(),
        0,
        "{duration:?} is not whole seconds"
    );
    duration.as_secs()
}

/// `phrase(value)` is in the README, and `phrase` of a neighbouring value
/// is not: the README says this number, and only this one.
fn pinned(readme: &str, value: u64, phrase: impl Fn(u64) -> String) {
    pinned_in("README.md", readme, value, phrase);
}

/// `phrase(value)` is in `text` (what `name` says), and `phrase` of a
/// neighbouring value is not.
fn pinned_in(name: &str, text: &str, value: u64, phrase: impl Fn(u64) -> String) {
    let stated = phrase(value);
    assert!(
        text.contains(&stated),
        "{name} no longer says {stated:?}: bring it in line with the code's constant"
    );
    for other in [value.saturating_sub(1), value + 1] {
        if other != value {
            let wrong = phrase(other);
            assert!(
                !text.contains(&wrong),
                "{name} says {wrong:?}, but the code's constant is {value}"
            );
        }
    }
}

#[test]
fn the_readme_states_every_host_default_the_code_sets() {
    let readme = readme();
    let defaults = HostConfig::default();
    pinned(&readme, config::DEFAULT_WORKERS as u64, |n| {
        format!("(`HostConfig::workers`, {n} by default)")
    });
    pinned(&readme, config::DEFAULT_MAX_CONCURRENT_CALLS as u64, |n| {
        format!("At most `max_concurrent_calls` handlers run at once ({n} by default)")
    });
    pinned(&readme, config::DEFAULT_MAX_QUEUED_CALLS as u64, |n| {
        format!("(`max_queued_calls`, {n} by default;")
    });
    pinned(&readme, secs(config::DEFAULT_CALL_KEEP_ALIVE), |n| {
        format!("A call quiet for `call_keep_alive` ({n} s)")
    });
    pinned(&readme, secs(config::DEFAULT_KEEP_ALIVE), |n| {
        format!("a keep-alive comment on each every {n} s (`HostConfig::keep_alive`)")
    });
    pinned(&readme, secs(config::DEFAULT_REPORT_LONG_CALLS), |n| {
        format!("`HostConfig::report_long_calls` ({n} s by default; each call is reported once")
    });
    pinned(&readme, secs(config::DEFAULT_RESUME_WINDOW), |n| {
        format!("`HostConfig::resume_window` ({n} s by default;")
    });
    pinned(&readme, secs(config::DEFAULT_READ_TIMEOUT), |n| {
        format!("`HostConfig::read_timeout` ({n} s)")
    });
    pinned(&readme, secs(config::DEFAULT_WRITE_TIMEOUT), |n| {
        format!("`HostConfig::write_timeout` ({n} s)")
    });
    pinned(
        &readme,
        (config::DEFAULT_MAX_BODY_BYTES >> 20) as u64,
        |n| format!("413 past `max_body_bytes` ({n} MiB"),
    );
    assert_eq!(config::DEFAULT_MAX_BODY_BYTES % (1 << 20), 0);
    // No deadline unless one is set, as the README says; and setting one
    // is what gives a call a deadline.
    assert!(readme.contains("(`HostConfig::call_timeout`, no deadline by default;"));
    assert_eq!(defaults.runtime.call_timeout, None);
    assert!(defaults
        .call_timeout(Duration::from_secs(1))
        .runtime
        .call_timeout
        .is_some());
}

#[test]
fn the_readme_states_the_runtimes_own_bounds_as_the_code_sets_them() {
    let readme = readme();
    pinned(&readme, secs(pool::IDLE), |n| {
        format!("(each extra thread leaves after {n} s without work)")
    });
    pinned(&readme, secs(pool::FAREWELL_IDLE), |n| {
        format!("instead of waiting, until {n} s have passed without such a request")
    });
    pinned(&readme, (resume::MAX_KEPT_BYTES >> 20) as u64, |n| {
        format!("its events are kept ({n} MiB per stream")
    });
    pinned(&readme, resume::MAX_KEPT_STREAMS as u64, |n| {
        format!("at most {n} kept streams per bearer")
    });
    pinned(&readme, secs(socket::IDLE_FLOOR), |n| {
        format!("(`HostConfig::read_timeout`, at least {n} s)")
    });
    pinned(&readme, (drain::MAX_DRAINED_BYTES >> 30) as u64, |n| {
        format!("A body declared longer than {n} GiB")
    });
    pinned(&readme, drain::SILENT_SLOTS as u64, |n| {
        format!("at most {n} silent clients' bodies at once")
    });
    pinned(&readme, secs(drain::IDLE), |n| {
        format!("(a drain thread leaves after {n} s without work)")
    });
    pinned(&readme, secs(signer::STATE_LIFETIME), |n| {
        format!("single-use, valid for {n} s)")
    });
    pinned(&readme, signer::MAX_SPENT as u64, |n| {
        format!("(at most {n} a session within a state's lifetime)")
    });
}

#[cfg(feature = "client")]
#[test]
fn the_readme_states_the_client_and_relay_timeouts_as_the_code_sets_them() {
    let readme = readme();
    pinned(&readme, secs(crate::client::DEFAULT_SILENCE_TIMEOUT), |n| {
        format!("A request waits at most {n} s for the server to say anything (`ClientBuilder::timeout`")
    });
    pinned(&readme, secs(crate::client::DEFAULT_CONNECT_TIMEOUT), |n| {
        format!("a TCP connect {n} s (`ClientBuilder::connect_timeout`)")
    });
    pinned(&readme, secs(crate::relay::RELAY_TIMEOUT), |n| {
        format!("leaves silent for {n} s (`relay::RELAY_TIMEOUT`)")
    });
    pinned(
        &readme,
        secs(crate::upstream::DEFAULT_SERVER_REFRESH),
        |n| format!("and every {n} seconds (`refresh_every`)"),
    );
    pinned(&readme, crate::upstream::DEFAULT_SERVER_CALLS as u64, |n| {
        format!("(`max_concurrent_calls` {n},")
    });
    pinned(&readme, crate::upstream::DEFAULT_SERVER_QUEUE as u64, |n| {
        format!("`max_queued_calls` {n},")
    });
    pinned(
        &readme,
        secs(crate::upstream::DEFAULT_SERVER_CALL_TIMEOUT),
        |n| format!("`call_timeout` {n} s from arrival)"),
    );
    pinned(
        &readme,
        (crate::DEFAULT_MAX_SERVER_MESSAGE_BYTES >> 20) as u64,
        |n| format!("`max_message_bytes` ({n} MiB)"),
    );
    assert_eq!(crate::DEFAULT_MAX_SERVER_MESSAGE_BYTES % (1 << 20), 0);
    pinned(
        &readme,
        secs(crate::upstream::DEFAULT_RECONNECT_FIRST),
        |n| format!("(`reconnect_backoff`, {n} s to"),
    );
    pinned(&readme, secs(crate::upstream::DEFAULT_RECONNECT_MAX), |n| {
        format!("to {n} s); settings")
    });
    // How long a gone server's tools stay listed: the README and every doc
    // that tells the layer's story say the same.
    let grace = secs(crate::upstream::RESTART_GRACE);
    let listed = |n| format!("listed for at most {n} s meanwhile");
    pinned(&readme, grace, listed);
    for (name, source) in [
        ("src/event.rs", include_str!("event.rs")),
        ("src/upstream/mod.rs", include_str!("upstream/mod.rs")),
        (
            "src/upstream/builder.rs",
            include_str!("upstream/builder.rs"),
        ),
    ] {
        let words: Vec<&str> = source
            .split_whitespace()
            .filter(|word| !matches!(*word, "///" | "//!"))
            .collect();
        pinned_in(name, &words.join(" "), grace, |n| {
            format!("for at most {n} s")
        });
    }
}

#[cfg(all(feature = "acp-driver", feature = "client"))]
#[test]
fn the_readme_states_the_agent_drivers_deadlines_and_grace_as_the_code_sets_them() {
    let readme = readme();
    pinned(&readme, secs(crate::acp::DEFAULT_SETUP_TIMEOUT), |n| {
        format!("`initialize`, `authenticate` and `session/new` each get {n} s by default")
    });
    pinned(&readme, secs(crate::acp::DEFAULT_TURN_TIMEOUT), |n| {
        format!("a turn {n} s (`Prompt::timeout`)")
    });
    pinned(&readme, secs(crate::child::EXIT_GRACE), |n| {
        format!("its stdin is closed and it gets {n} s to leave")
    });
    pinned(
        &readme,
        (crate::acp::DEFAULT_MAX_MESSAGE_BYTES >> 20) as u64,
        |n| format!("(`Agent::set_max_message_bytes`, {n} MiB by default,"),
    );
    pinned(&readme, secs(crate::child::TERM_GRACE), |n| {
        format!("the group gets `SIGTERM` and {n} s more, then `SIGKILL`")
    });
}

/// Whether rustdoc reads a fenced block with this info string as Rust: no
/// language, or `rust` with or without attributes (`rust,no_run`).
fn is_rust(info: &str) -> bool {
    let language = info.split(',').next().unwrap_or_default().trim();
    language.is_empty() || language == "rust"
}

/// Each line of the README's Rust code blocks, with its line number.
fn readme_rust_lines() -> Vec<(usize, &'static str)> {
    let mut lines = Vec::new();
    let mut block: Option<bool> = None;
    for (at, line) in include_str!("../README.md").lines().enumerate() {
        match (line.strip_prefix("```"), block) {
            (Some(info), None) => block = Some(is_rust(info)),
            (Some(_), Some(_)) => block = None,
            (None, Some(true)) => lines.push((at + 1, line)),
            (None, _) => {}
        }
    }
    lines
}

#[test]
fn the_readmes_code_blocks_hide_no_lines_from_a_reader() {
    // Rustdoc compiles a line that starts with `# ` (or is `#` alone) but
    // leaves it out of the docs it renders; a forge rendering the README
    // shows it as it is. So each example is whole as written.
    let rust = readme_rust_lines();
    let hidden: Vec<_> = rust
        .iter()
        .filter(|(_, line)| {
            let line = line.trim_start();
            line == "#" || line.starts_with("# ")
        })
        .collect();
    assert!(
        hidden.is_empty(),
        "README lines a forge shows and rustdoc hides: {hidden:?}; make the example need \
         none (a visible `fn main() -> Result<…>` for `?`)"
    );
    // The check reads the blocks it means to: the README's examples use `?`
    // inside the `fn main` they show, and attributes stay visible.
    assert!(rust.iter().any(|(_, line)| line.contains(")?;")));
    assert!(rust.iter().any(|(_, line)| line.starts_with("#[derive(")));
    assert!(rust
        .iter()
        .any(|(_, line)| line.starts_with("fn main() -> Result<")));
}

#[test]
fn the_readmes_table_of_json_rpc_errors_names_every_code_the_crate_answers_with() {
    use crate::model::jsonrpc::{
        HEADER_MISMATCH, INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND,
        MISSING_CLIENT_CAPABILITY, PARSE_ERROR, SERVER_ERROR, SESSION_NOT_FOUND,
        UNSUPPORTED_PROTOCOL_VERSION,
    };
    let mut defined = vec![
        PARSE_ERROR,
        INVALID_REQUEST,
        METHOD_NOT_FOUND,
        INVALID_PARAMS,
        INTERNAL_ERROR,
        SERVER_ERROR,
        SESSION_NOT_FOUND,
        HEADER_MISMATCH,
        MISSING_CLIENT_CAPABILITY,
        UNSUPPORTED_PROTOCOL_VERSION,
    ];
    defined.sort_unstable();
    // The table's rows, line by line as the README holds them.
    let mut listed: Vec<i64> = include_str!("../README.md")
        .lines()
        .filter_map(|line| line.strip_prefix("| "))
        .filter(|row| row.starts_with("-32"))
        .map(|row| {
            let code = row.split(' ').next().unwrap_or_default();
            code.parse::<i64>().expect("a code")
        })
        .collect();
    listed.sort_unstable();
    // Each code once, and no row for a code the crate does not define.
    assert_eq!(listed, defined);
}

/// The doc comment of the item declared by `declaration` in `source` (a
/// file's text), its lines joined with single spaces, so that a phrase may
/// wrap anywhere.
fn doc_of(source: &str, declaration: &str) -> String {
    let lines: Vec<&str> = source.lines().map(str::trim).collect();
    let at = lines
        .iter()
        .position(|line| line.starts_with(declaration))
        .unwrap_or_else(|| panic!("no {declaration:?} in the source"));
    let mut doc: Vec<&str> = lines[..at]
        .iter()
        .rev()
        .skip_while(|line| line.starts_with("#["))
        .take_while(|line| line.starts_with("///"))
        .map(|line| line.trim_start_matches("///"))
        .collect();
    doc.reverse();
    doc.join(" ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// The setter's doc says "(`value``unit` by default", and of no
/// neighbouring value.
fn states_default(doc: &str, value: u64, unit: &str) {
    pinned_in(&format!("the doc {doc:?}"), doc, value, |n| {
        format!("({n}{unit} by default")
    });
}

/// Whole MiB of a default stated in MiB.
fn mib(bytes: usize) -> u64 {
    assert_eq!(bytes % (1 << 20), 0, "{bytes} is not whole MiB");
    (bytes >> 20) as u64
}

#[test]
fn every_host_setter_states_the_default_the_code_sets() {
    let source = include_str!("config.rs");
    let doc = |setter: &str| doc_of(source, &format!("pub fn {setter}("));
    for (setter, value) in [
        ("workers", config::DEFAULT_WORKERS),
        ("max_concurrent_calls", config::DEFAULT_MAX_CONCURRENT_CALLS),
        ("max_queued_calls", config::DEFAULT_MAX_QUEUED_CALLS),
    ] {
        states_default(&doc(setter), value as u64, "");
    }
    for (setter, value) in [
        ("call_keep_alive", config::DEFAULT_CALL_KEEP_ALIVE),
        ("keep_alive", config::DEFAULT_KEEP_ALIVE),
        ("read_timeout", config::DEFAULT_READ_TIMEOUT),
        ("write_timeout", config::DEFAULT_WRITE_TIMEOUT),
        ("resume_window", config::DEFAULT_RESUME_WINDOW),
        ("report_long_calls", config::DEFAULT_REPORT_LONG_CALLS),
    ] {
        states_default(&doc(setter), secs(value), " s");
    }
    let body = mib(config::DEFAULT_MAX_BODY_BYTES);
    states_default(&doc("max_body_bytes"), body, " MiB");
    // The defaults stated in words, checked against the default config.
    let defaults = HostConfig::default();
    assert!(doc("call_timeout").contains("No deadline by default"));
    assert_eq!(defaults.runtime.call_timeout, None);
    assert!(doc("capability_urls").contains("Off by default"));
    assert!(!defaults.http.capability_urls);
    assert!(doc("allow_non_loopback").contains("(off by default)"));
    assert!(!defaults.allow_non_loopback);
    assert!(doc("server_name").contains("(`toolhost` by default)"));
    assert_eq!(defaults.server.server_name, "toolhost");
    assert!(doc("server_title").contains("(none by default)"));
    assert!(defaults.server.server_title.is_none());
    assert!(doc("instructions").contains("none by default"));
    assert!(defaults.server.instructions.is_none());
    assert!(doc("allow_origin").contains("none is added by default"));
    assert!(defaults.http.allow_origin.is_empty());
    assert!(doc("tools_cache").contains("By default `0` ms"));
    assert_eq!(defaults.server.tools_cache.ttl_ms, 0);
}

#[cfg(feature = "client")]
#[test]
fn every_client_and_gateway_setter_states_the_default_the_code_sets() {
    use crate::upstream;

    let builder = include_str!("upstream/builder.rs");
    let doc = |setter: &str| doc_of(builder, &format!("pub fn {setter}("));
    states_default(
        &doc("max_concurrent_calls"),
        upstream::DEFAULT_SERVER_CALLS as u64,
        "",
    );
    states_default(
        &doc("max_queued_calls"),
        upstream::DEFAULT_SERVER_QUEUE as u64,
        "",
    );
    for (setter, value) in [
        ("refresh_every", upstream::DEFAULT_SERVER_REFRESH),
        ("call_timeout", upstream::DEFAULT_SERVER_CALL_TIMEOUT),
    ] {
        states_default(&doc(setter), secs(value), " s");
    }
    let server_message = mib(crate::DEFAULT_MAX_SERVER_MESSAGE_BYTES);
    states_default(&doc("max_message_bytes"), server_message, " MiB");
    let backoff = doc("reconnect_backoff");
    let backoff_doc = format!("the doc {backoff:?}");
    pinned_in(
        &backoff_doc,
        &backoff,
        secs(upstream::DEFAULT_RECONNECT_FIRST),
        |n| format!("({n} s and"),
    );
    pinned_in(
        &backoff_doc,
        &backoff,
        secs(upstream::DEFAULT_RECONNECT_MAX),
        |n| format!("and {n} s by default"),
    );

    let message = mib(crate::client::DEFAULT_MAX_MESSAGE_BYTES);
    let silence = secs(crate::client::DEFAULT_SILENCE_TIMEOUT);
    let client = include_str!("client/builder.rs");
    let doc = |setter: &str| doc_of(client, &format!("pub fn {setter}("));
    states_default(&doc("timeout"), silence, " s");
    let connect = secs(crate::client::DEFAULT_CONNECT_TIMEOUT);
    states_default(&doc("connect_timeout"), connect, " s");
    states_default(&doc("max_message_bytes"), message, " MiB");
    let listed = crate::client::DEFAULT_MAX_LISTED_TOOLS as u64;
    let listing = mib(crate::client::DEFAULT_MAX_LISTING_BYTES);
    states_default(&doc("max_listed_tools"), listed, "");
    states_default(&doc("max_listing_bytes"), listing, " MiB");

    let stdio = include_str!("client/stdio/server.rs");
    let doc = |setter: &str| doc_of(stdio, &format!("pub fn {setter}("));
    states_default(&doc("timeout"), silence, " s");
    states_default(&doc("exit_grace"), secs(crate::child::EXIT_GRACE), " s");
    states_default(&doc("max_message_bytes"), message, " MiB");
    states_default(&doc("max_listed_tools"), listed, "");
    states_default(&doc("max_listing_bytes"), listing, " MiB");
}

#[cfg(all(feature = "acp-driver", feature = "client"))]
#[test]
fn every_agent_driver_setter_states_the_default_the_code_sets() {
    let agent = include_str!("acp/driver/mod.rs");
    let doc = |setter: &str| doc_of(agent, &format!("pub fn {setter}("));
    states_default(
        &doc("set_timeout"),
        secs(crate::acp::DEFAULT_SETUP_TIMEOUT),
        " s",
    );
    let max_message = doc("set_max_message_bytes");
    pinned_in(
        &format!("the doc {max_message:?}"),
        &max_message,
        mib(crate::acp::DEFAULT_MAX_MESSAGE_BYTES),
        |n| format!("{n} MiB)"),
    );
    let turn = doc_of(include_str!("acp/driver/turn.rs"), "pub fn timeout(");
    states_default(&turn, secs(crate::acp::DEFAULT_TURN_TIMEOUT), " s");
}
