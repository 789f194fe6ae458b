//! Every example as a newcomer first tries it: `--help` and `-h` print
//! its usage on stdout and exit 0 before the program does anything else;
//! an option it does not know prints the usage on stderr and fails; and
//! the usage names each option the example takes, each of them one the
//! example knows.
//!
//! This test has its own `main` (`harness = false` in Cargo.toml) because
//! it is also each example: started with `TOOLHOST_TESTS_RUN_EXAMPLE` set
//! to an example's name, its `main` is that example's `main`, compiled
//! from the example's own source, with the arguments it was given. So the
//! program under test is always built from the sources under test, with
//! no cargo run from inside a test (as `serve.rs` and `acp/` do it).

#[path = "../../examples/acp_turn.rs"]
mod acp_turn;
#[path = "../../examples/gateway.rs"]
mod gateway;
#[path = "../../examples/serve.rs"]
mod serve;
#[path = "../../examples/stdio_relay.rs"]
mod stdio_relay;

use std::collections::BTreeSet;
use std::env;
use std::process::{Command, ExitCode, Stdio};
use std::time::Duration;

use toolhost::relay::{AUTHORIZATION_VAR, URL_VAR};
use toolhost_tests::runner::{run_tests, Test};

/// Names the example this binary is to be.
const RUN_EXAMPLE: &str = "TOOLHOST_TESTS_RUN_EXAMPLE";

fn main() -> ExitCode {
    match env::var(RUN_EXAMPLE).as_deref() {
        Ok("serve") => serve::main(),
        Ok("gateway") => gateway::main(),
        Ok("acp_turn") => acp_turn::main(),
        Ok("stdio_relay") => stdio_relay::main(),
        _ => {
            let args: Vec<String> = env::args().skip(1).collect();
            run_tests(TESTS, &args, Duration::from_secs(120))
        }
    }
}

const TESTS: &[Test] = &[
    (
        "every_example_prints_its_usage_on_stdout_for_help_and_h_and_does_nothing_else",
        every_example_prints_its_usage_on_stdout_for_help_and_h_and_does_nothing_else,
    ),
    (
        "an_unknown_option_prints_the_usage_on_stderr_and_fails",
        an_unknown_option_prints_the_usage_on_stderr_and_fails,
    ),
    (
        "each_usage_names_exactly_the_options_its_example_knows",
        each_usage_names_exactly_the_options_its_example_knows,
    ),
    (
        "the_relay_answers_help_whether_or_not_its_variables_are_set",
        the_relay_answers_help_whether_or_not_its_variables_are_set,
    ),
];

/// Each example, the options it takes besides `--help`, and the status it
/// exits with on a command line it cannot use: 2 as is usual, but 1 for
/// `acp_turn`, whose 2 already tells scripts the agent claimed calls the
/// host never served.
const EXAMPLES: [(&str, &[&str], i32); 4] = [
    ("serve", &[], 2),
    (
        "gateway",
        &["--stdio", "--http", "--auth-env", "--auth-file"],
        2,
    ),
    (
        "acp_turn",
        &[
            "--prompt",
            "--permission",
            "--transport",
            "--auth",
            "--cwd",
            "--startup-timeout",
            "--turn-timeout",
        ],
        1,
    ),
    ("stdio_relay", &[], 2),
];

/// How one run of an example ended and what it printed.
struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl Run {
    /// `example` with `args`, its stdin empty, and none of the relay's
    /// variables unless `env` sets them.
    fn of(example: &str, args: &[&str], env: &[(&str, &str)]) -> Run {
        let output = Command::new(env::current_exe().expect("the test's own path"))
            .args(args)
            .env(RUN_EXAMPLE, example)
            .env_remove(URL_VAR)
            .env_remove(AUTHORIZATION_VAR)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .output()
            .expect("run the example");
        Run {
            code: output.status.code(),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }

    fn show(&self) -> String {
        format!(
            "exit {:?}\n--- stdout\n{}--- stderr\n{}",
            self.code, self.stdout, self.stderr
        )
    }
}

/// The usage `--help` prints, checked on the way.
fn usage(example: &str) -> String {
    let help = Run::of(example, &["--help"], &[]);
    assert_eq!(help.code, Some(0), "{example} --help: {}", help.show());
    help.stdout
}

fn every_example_prints_its_usage_on_stdout_for_help_and_h_and_does_nothing_else() {
    for (example, _, _) in EXAMPLES {
        let usage = usage(example);
        assert!(
            usage.starts_with(&format!("usage: {example} ")),
            "{example}: {usage}"
        );
        for flag in ["--help", "-h"] {
            let run = Run::of(example, &[flag], &[]);
            let show = run.show();
            assert_eq!(run.code, Some(0), "{example} {flag}: {show}");
            assert_eq!(run.stdout, usage, "{example} {flag}: {show}");
            // Nothing else ran: no host bound, no error, no event.
            assert_eq!(run.stderr, "", "{example} {flag}: {show}");
            assert!(
                !run.stdout.contains("127.0.0.1"),
                "{example} {flag}: {show}"
            );
        }
        // Without the flag the example does something else (serves,
        // relays, or says what it lacks), so the usage came from the flag.
        let plain = Run::of(example, &[], &[]);
        assert!(
            !plain.stdout.starts_with("usage:"),
            "{example}: {}",
            plain.show()
        );
    }
}

fn an_unknown_option_prints_the_usage_on_stderr_and_fails() {
    for (example, _, status) in EXAMPLES {
        let usage = usage(example);
        let run = Run::of(example, &["--no-such-option"], &[]);
        let show = run.show();
        assert_eq!(run.code, Some(status), "{example}: {show}");
        assert_eq!(run.stdout, "", "{example}: {show}");
        assert!(
            run.stderr
                .starts_with(&format!("{example}: unknown option \"--no-such-option\"\n")),
            "{example}: {show}"
        );
        assert!(run.stderr.ends_with(&usage), "{example}: {show}");
    }
}

/// Every `--option` a usage text names.
fn options_named(usage: &str) -> BTreeSet<String> {
    usage
        .split(|c: char| c.is_whitespace() || "[]|,".contains(c))
        .filter(|word| word.starts_with("--") && word.len() > 2)
        .map(|word| word.trim_end_matches(|c: char| !c.is_ascii_alphanumeric()))
        .map(str::to_owned)
        .collect()
}

fn each_usage_names_exactly_the_options_its_example_knows() {
    for (example, options, status) in EXAMPLES {
        let usage = usage(example);
        let mut expected: BTreeSet<String> = options.iter().map(|o| o.to_string()).collect();
        expected.insert("--help".to_owned());
        assert_eq!(options_named(&usage), expected, "{example}: {usage}");
        assert!(usage.contains("-h, --help"), "{example}: {usage}");
        // Each option is one the example takes: alone it lacks its value,
        // which is not the refusal of an option the example does not know.
        for option in options {
            let run = Run::of(example, &[option], &[]);
            let show = run.show();
            assert_eq!(run.code, Some(status), "{example} {option}: {show}");
            assert!(
                run.stderr.contains("needs a value"),
                "{example} {option}: {show}"
            );
            assert!(
                !run.stderr.contains("unknown option"),
                "{example} {option}: {show}"
            );
        }
    }
    // The relay takes its settings from the environment, and says which.
    let relay = usage("stdio_relay");
    assert!(
        relay.contains(URL_VAR) && relay.contains(AUTHORIZATION_VAR),
        "{relay}"
    );
}

fn the_relay_answers_help_whether_or_not_its_variables_are_set() {
    let unset = usage("stdio_relay");
    // Set, even to a session that does not exist, the help still wins.
    let set = Run::of(
        "stdio_relay",
        &["--help"],
        &[
            (URL_VAR, "http://127.0.0.1:9/mcp"),
            (AUTHORIZATION_VAR, "Bearer x"),
        ],
    );
    assert_eq!(set.code, Some(0), "{}", set.show());
    assert_eq!(set.stdout, unset);
    // Without the flag, the variables make it a relay, which ends when its
    // empty stdin does: no usage, and not the status of a missing variable.
    let relaying = Run::of(
        "stdio_relay",
        &[],
        &[
            (URL_VAR, "http://127.0.0.1:9/mcp"),
            (AUTHORIZATION_VAR, "Bearer x"),
        ],
    );
    assert_eq!(relaying.code, Some(0), "{}", relaying.show());
    assert_eq!(relaying.stdout, "", "{}", relaying.show());
    // Unset and without the flag, it says what it lacks and exits 2.
    let lacking = Run::of("stdio_relay", &[], &[]);
    assert_eq!(lacking.code, Some(2), "{}", lacking.show());
    assert!(lacking.stderr.contains(&format!("{URL_VAR} is not set")));
}
