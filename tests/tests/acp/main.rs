//! ACP end to end: `examples/acp_turn.rs` and `toolhost::acp::Agent` drive a
//! stand-in ACP agent (`standin.rs`, beside this file) through turns whose tool
//! calls must reach the host over the `mcpServers` entry the agent can use —
//! HTTP with its bearer, or stdio through the bridge — and the driver must
//! leave nothing of the agent behind.
//!
//! This test has its own `main` (`harness = false` in Cargo.toml) because it
//! is also every program it runs: started with `--standin-agent MODE` it is
//! the stand-in agent, with `--misbehaving-agent MODE` an agent that
//! misbehaves on purpose (`misbehaving.rs`), with `--acp-turn ARGS...` it is the example, compiled
//! from the example's own source, with `--sleeper` it is the stand-in's
//! grandchild, and started from a stdio entry (the bridge's variables in its
//! environment) it is the relay. Spawning itself means the programs under
//! test are always built from the sources under test, even under `cargo
//! test --test acp`: no stale binary from `target/`, and no cargo run from
//! inside a test.

#[allow(dead_code, reason = "the example's own main is not called here")]
#[path = "../../../examples/acp_turn.rs"]
mod acp_turn;
mod driver;
mod links;
mod misbehaving;
mod standin;

use std::env;
use std::process::{Command, ExitCode, Stdio};
use std::time::Duration;

use serde_json::{json, Value};
use toolhost::{HostConfig, StaticSurface, ToolHost};
use toolhost_tests::runner::{run_tests, Test};

const STANDIN: &str = "--standin-agent";
const ACP_TURN: &str = "--acp-turn";

fn main() -> ExitCode {
    // A stdio entry names this binary: that copy relays and exits here.
    toolhost::relay::run_if_requested();
    let args: Vec<String> = env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some(STANDIN) => standin::main(args.get(1).map_or("", String::as_str)),
        Some(ACP_TURN) => acp_turn::run_cli(args.into_iter().skip(1)),
        Some(standin::SLEEPER) => standin::sleeper(),
        Some(misbehaving::MISBEHAVING) => {
            misbehaving::agent(args.get(1).map_or("", String::as_str))
        }
        // Each test runs programs; one that hangs must not hang the suite.
        _ => run_tests(TESTS, &args, Duration::from_secs(300)),
    }
}

const TESTS: &[Test] = &[
    (
        "an_agent_given_the_acp_entry_runs_the_hosts_tool_with_its_bearer",
        an_agent_given_the_acp_entry_runs_the_hosts_tool_with_its_bearer,
    ),
    (
        "without_the_entrys_header_the_host_refuses_the_agent_and_runs_nothing",
        without_the_entrys_header_the_host_refuses_the_agent_and_runs_nothing,
    ),
    (
        "a_rejected_permission_keeps_the_call_from_the_host",
        a_rejected_permission_keeps_the_call_from_the_host,
    ),
    (
        "an_agent_claiming_a_result_the_host_never_served_fails_the_turn",
        an_agent_claiming_a_result_the_host_never_served_fails_the_turn,
    ),
    (
        "an_agent_that_never_answers_times_out_and_is_killed_and_reaped",
        an_agent_that_never_answers_times_out_and_is_killed_and_reaped,
    ),
    (
        "an_agent_that_cannot_start_fails_the_turn_cleanly",
        an_agent_that_cannot_start_fails_the_turn_cleanly,
    ),
    (
        "the_stand_in_takes_the_sessions_entry_and_only_mcp_server_http_shapes",
        the_stand_in_takes_the_sessions_entry_and_only_mcp_server_http_shapes,
    ),
    (
        "an_agent_without_http_gets_the_stdio_entry_and_reaches_the_tools_through_the_relay",
        an_agent_without_http_gets_the_stdio_entry_and_reaches_the_tools_through_the_relay,
    ),
    (
        "the_stand_in_takes_the_sessions_stdio_entry_in_either_acp_version",
        the_stand_in_takes_the_sessions_stdio_entry_in_either_acp_version,
    ),
    (
        "a_tool_that_asks_back_is_answered_by_the_agent_through_the_relay",
        driver::a_tool_that_asks_back_is_answered_by_the_agent_through_the_relay,
    ),
    (
        "a_dropped_session_ends_the_relay_with_an_error_that_says_so",
        driver::a_dropped_session_ends_the_relay_with_an_error_that_says_so,
    ),
    (
        "a_v2_agent_gets_a_typed_stdio_entry_and_refuses_an_untyped_one",
        driver::a_v2_agent_gets_a_typed_stdio_entry_and_refuses_an_untyped_one,
    ),
    (
        "nothing_the_agent_started_outlives_the_driver",
        driver::nothing_the_agent_started_outlives_the_driver,
    ),
    (
        "a_turn_past_its_timeout_is_cancelled_and_later_permissions_are_cancelled",
        driver::a_turn_past_its_timeout_is_cancelled_and_later_permissions_are_cancelled,
    ),
    (
        "a_turn_cancelled_from_its_own_callback_ends_cancelled_without_a_timeout",
        driver::a_turn_cancelled_from_its_own_callback_ends_cancelled_without_a_timeout,
    ),
    (
        "an_agent_that_wants_a_login_gets_the_method_the_caller_picked",
        driver::an_agent_that_wants_a_login_gets_the_method_the_caller_picked,
    ),
    (
        "an_agent_that_behaves_ends_its_turn_and_leaves_nothing_running",
        misbehaving::an_agent_that_behaves_ends_its_turn_and_leaves_nothing_running,
    ),
    (
        "a_flood_of_updates_and_garbage_around_every_answer_still_end_the_turn",
        misbehaving::a_flood_of_updates_and_garbage_around_every_answer_still_end_the_turn,
    ),
    (
        "an_agent_that_crashes_mid_turn_fails_it_at_once_naming_its_status_and_last_words",
        misbehaving::an_agent_that_crashes_mid_turn_fails_it_at_once_naming_its_status_and_last_words,
    ),
    (
        "an_agent_that_crashes_at_startup_fails_initialize_at_once_naming_its_status",
        misbehaving::an_agent_that_crashes_at_startup_fails_initialize_at_once_naming_its_status,
    ),
    (
        "an_agent_that_never_answers_the_prompt_fails_at_the_turn_timeout_and_is_ended",
        misbehaving::an_agent_that_never_answers_the_prompt_fails_at_the_turn_timeout_and_is_ended,
    ),
    (
        "a_64_mib_line_ends_the_turn_naming_size_and_setting_without_being_buffered",
        misbehaving::a_64_mib_line_ends_the_turn_naming_size_and_setting_without_being_buffered,
    ),
    (
        "an_agent_flooding_between_turns_is_held_back_and_the_next_turn_hears_every_line",
        misbehaving::an_agent_flooding_between_turns_is_held_back_and_the_next_turn_hears_every_line,
    ),
    (
        "an_agent_blocked_on_its_pipe_between_turns_is_ended_with_the_driver",
        misbehaving::an_agent_blocked_on_its_pipe_between_turns_is_ended_with_the_driver,
    ),
    (
        "the_agents_stderr_reaches_the_applications_hook_and_the_error_keeps_its_last_lines",
        misbehaving::the_agents_stderr_reaches_the_applications_hook_and_the_error_keeps_its_last_lines,
    ),
];

/// What one run of `acp_turn` printed and how it ended.
struct Turn {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    /// The last stdout line: the example's JSON summary.
    summary: Value,
}

impl Turn {
    fn run(options: &[&str], agent_mode: &str) -> Turn {
        let exe = env::current_exe().expect("the test's own path");
        let output = Command::new(&exe)
            .arg(ACP_TURN)
            .args(["--prompt", "Echo something with the toolhost-demo tools."])
            .args(options)
            .arg("--")
            .arg(&exe)
            .args([STANDIN, agent_mode])
            .stdin(Stdio::null())
            .output()
            .expect("run acp_turn");
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        let summary = stdout
            .lines()
            .last()
            .and_then(|line| serde_json::from_str(line).ok())
            .unwrap_or(Value::Null);
        Turn {
            code: output.status.code(),
            stdout,
            stderr,
            summary,
        }
    }

    fn show(&self) -> String {
        format!(
            "exit {:?}\n--- stdout\n{}--- stderr\n{}",
            self.code, self.stdout, self.stderr
        )
    }
}

fn an_agent_given_the_acp_entry_runs_the_hosts_tool_with_its_bearer() {
    let turn = Turn::run(&["--permission", "allow"], "honest");
    let show = turn.show();
    assert_eq!(turn.code, Some(0), "{show}");
    // The stand-in parsed the entry as McpServerHttp and kept its header.
    assert!(
        turn.stdout.contains(
            "stand-in: mcpServers[0] is an McpServerHttp named \"toolhost-demo\" at http://127.0.0.1:"
        ),
        "{show}"
    );
    assert!(
        turn.stdout.contains("with header(s) Authorization\n"),
        "{show}"
    );
    // The permission request was answered with the option asked for.
    assert!(
        turn.stdout
            .contains("[permission] toolhost-demo: echo: allow_once (Allow)"),
        "{show}"
    );
    assert!(
        turn.stdout
            .contains("stand-in: permission answered allow_once"),
        "{show}"
    );
    // The call reached the handler, with the agent's arguments, and its
    // result came back to the agent.
    assert_eq!(
        turn.summary,
        json!({
            "stopReason": "end_turn",
            "error": null,
            "transport": "http",
            "callsServed": 1,
            "toolCalls": 1,
            "toolCallsCompleted": 1,
            "calls": [{"tool": "echo", "arguments": {"text": standin::ECHO_TEXT}}],
        }),
        "{show}"
    );
    assert!(
        turn.stdout
            .contains("[tool] toolhost-demo: echo: completed"),
        "{show}"
    );
    assert!(
        turn.stdout
            .contains(&format!("stand-in: echo returned {:?}", standin::ECHO_TEXT)),
        "{show}"
    );
    assert!(turn.stderr.contains("[toolhost] echo → success"), "{show}");
    // Every request carried the bearer: the host refused none.
    assert!(!turn.stderr.contains("AuthRefused"), "{show}");
}

fn without_the_entrys_header_the_host_refuses_the_agent_and_runs_nothing() {
    let turn = Turn::run(&["--permission", "allow"], "no-headers");
    let show = turn.show();
    assert!(
        turn.stdout
            .contains("stand-in: the MCP server refused: HTTP 401"),
        "{show}"
    );
    assert!(turn.stderr.contains("AuthRefused"), "{show}");
    assert_eq!(turn.summary["callsServed"], 0, "{show}");
    assert_eq!(turn.summary["calls"], json!([]), "{show}");
    // The agent claimed nothing, so the turn itself is fine.
    assert_eq!(turn.summary["toolCallsCompleted"], 0, "{show}");
    assert_eq!(turn.code, Some(0), "{show}");
}

fn a_rejected_permission_keeps_the_call_from_the_host() {
    let turn = Turn::run(&["--permission", "reject"], "honest");
    let show = turn.show();
    assert_eq!(turn.code, Some(0), "{show}");
    assert!(
        turn.stdout
            .contains("[permission] toolhost-demo: echo: reject_once (Reject)"),
        "{show}"
    );
    assert!(
        turn.stdout
            .contains("stand-in: permission answered reject_once"),
        "{show}"
    );
    assert!(
        turn.stdout.contains("[tool] toolhost-demo: echo: failed"),
        "{show}"
    );
    assert_eq!(turn.summary["stopReason"], "end_turn", "{show}");
    assert_eq!(turn.summary["callsServed"], 0, "{show}");
    assert_eq!(turn.summary["calls"], json!([]), "{show}");
    assert_eq!(turn.summary["toolCalls"], 1, "{show}");
    assert_eq!(turn.summary["toolCallsCompleted"], 0, "{show}");
}

fn an_agent_claiming_a_result_the_host_never_served_fails_the_turn() {
    let turn = Turn::run(&["--permission", "allow"], "claim-only");
    let show = turn.show();
    assert_eq!(turn.code, Some(2), "{show}");
    assert!(turn.stderr.contains("none reached the host"), "{show}");
    assert_eq!(turn.summary["stopReason"], "end_turn", "{show}");
    assert_eq!(turn.summary["toolCallsCompleted"], 1, "{show}");
    assert_eq!(turn.summary["callsServed"], 0, "{show}");
    assert_eq!(turn.summary["calls"], json!([]), "{show}");
}

fn an_agent_that_never_answers_times_out_and_is_killed_and_reaped() {
    let turn = Turn::run(&["--startup-timeout", "0.5"], "hang");
    let show = turn.show();
    assert_eq!(turn.code, Some(1), "{show}");
    let error = turn.summary["error"].as_str().unwrap_or_default();
    assert!(
        error.starts_with("initialize: no answer within 500ms"),
        "{show}"
    );
    assert_eq!(turn.summary["callsServed"], 0, "{show}");
    // The stand-in ignores the end of its input, so only a kill ended it;
    // and `output()` above returned, so nothing holds the pipes any more.
    let pid: u32 = turn
        .stderr
        .split("(pid ")
        .nth(1)
        .and_then(|rest| rest.split(')').next())
        .and_then(|pid| pid.parse().ok())
        .unwrap_or_else(|| panic!("no pid in stderr\n{show}"));
    if cfg!(target_os = "linux") {
        // Reaped, not a zombie: acp_turn waited for it before exiting.
        assert!(
            !std::path::Path::new(&format!("/proc/{pid}")).exists(),
            "stand-in {pid} is still there\n{show}"
        );
    }
}

fn an_agent_that_cannot_start_fails_the_turn_cleanly() {
    let output = Command::new(env::current_exe().expect("own path"))
        .args([ACP_TURN, "--", "/nonexistent/toolhost-agent"])
        .output()
        .expect("run acp_turn");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("could not start \"/nonexistent/toolhost-agent\""),
        "{stderr}"
    );
    // Refused before any turn: no summary.
    assert!(output.stdout.is_empty());
}

fn the_stand_in_takes_the_sessions_entry_and_only_mcp_server_http_shapes() {
    let host = ToolHost::bind(HostConfig::default().server_name("myapp")).expect("bind");
    let session = host.open_session(StaticSurface::new());
    let entry = session.acp_mcp_servers()[0].clone();
    let parsed = standin::parse_http_entry(&entry).expect("the session's entry");
    assert_eq!(parsed.name, "myapp");
    assert_eq!(parsed.url, session.url());
    assert_eq!(
        parsed.headers,
        [("Authorization".to_owned(), session.authorization())]
    );
    // The stand-in is strict, so that the end-to-end tests prove the shape.
    let mut with_meta = entry.clone();
    with_meta["_meta"] = json!({"x": 1});
    assert!(standin::parse_http_entry(&with_meta).is_ok());
    for (broken, why) in [
        (json!({"type": "sse"}), "the SSE variant"),
        (
            json!({"headers": {"Authorization": "Bearer x"}}),
            "headers as an object",
        ),
        (
            json!({"headers": [{"name": "A"}]}),
            "a header without a value",
        ),
        (json!({"httpUrl": "http://x/mcp"}), "another client's key"),
        (json!({"url": 7}), "a URL that is not a string"),
    ] {
        let mut candidate = entry.clone();
        for (key, value) in broken.as_object().expect("object") {
            candidate[key] = value.clone();
        }
        assert!(standin::parse_http_entry(&candidate).is_err(), "{why}");
    }
    let mut without_type = entry;
    without_type.as_object_mut().expect("object").remove("type");
    assert!(standin::parse_http_entry(&without_type).is_err());
}

fn an_agent_without_http_gets_the_stdio_entry_and_reaches_the_tools_through_the_relay() {
    let turn = Turn::run(&["--permission", "allow"], "stdio-only");
    let show = turn.show();
    assert_eq!(turn.code, Some(0), "{show}");
    assert_eq!(turn.summary["transport"], "stdio", "{show}");
    // The entry started this very binary, with the session in its
    // environment and nothing on its command line.
    let exe = env::current_exe().expect("own path");
    assert!(
        turn.stdout.contains(&format!(
            "McpServerStdio named \"toolhost-demo\" running {} with 0 arg(s) and env \
             TOOLHOST_RELAY_URL, TOOLHOST_RELAY_AUTHORIZATION",
            exe.display()
        )),
        "{show}"
    );
    assert_eq!(turn.summary["callsServed"], 1, "{show}");
    assert_eq!(
        turn.summary["calls"],
        json!([{"tool": "echo", "arguments": {"text": standin::ECHO_TEXT}}]),
        "{show}"
    );
    assert!(turn.stderr.contains("[toolhost] echo → success"), "{show}");

    // Forced to HTTP, the same agent drops the entry without a word, and
    // the host serves nothing: the signal of an agent that ignored it.
    let forced = Turn::run(
        &["--permission", "allow", "--transport", "http"],
        "stdio-only",
    );
    let show = forced.show();
    assert_eq!(forced.summary["transport"], "http", "{show}");
    assert!(forced.stdout.contains("no MCP server it can use"), "{show}");
    assert_eq!(forced.summary["callsServed"], 0, "{show}");
}

fn the_stand_in_takes_the_sessions_stdio_entry_in_either_acp_version() {
    let host = ToolHost::bind(HostConfig::default().server_name("myapp")).expect("bind");
    let session = host.open_session(StaticSurface::new());
    let v1 = session.stdio_relay_entry().expect("entry");
    let parsed = standin::parse_stdio_entry(&v1, false).expect("the session's v1 entry");
    assert_eq!(parsed.name, "myapp");
    assert!(parsed.args.is_empty());
    assert_eq!(
        parsed.env,
        [
            ("TOOLHOST_RELAY_URL".to_owned(), session.url()),
            (
                "TOOLHOST_RELAY_AUTHORIZATION".to_owned(),
                session.authorization()
            ),
        ]
    );
    // v1 stdio entries are untagged, v2 ones tagged: each reader refuses
    // the other's.
    assert!(standin::parse_stdio_entry(&v1, true).is_err());
    let mut v2 = v1.clone();
    v2["type"] = json!("stdio");
    assert!(standin::parse_stdio_entry(&v2, true).is_ok());
    assert!(standin::parse_stdio_entry(&v2, false).is_err());
    let mut relative = v1;
    relative["command"] = json!("serve");
    assert!(standin::parse_stdio_entry(&relative, false).is_err());
}
