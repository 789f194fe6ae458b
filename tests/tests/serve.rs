//! `examples/serve.rs` as a user meets it: the lines it prints for each
//! agent reach the session it opened, and none of them puts the bearer on
//! a command line (which every user of the machine can read in
//! `/proc/PID/cmdline`); the bearer is in files only their owner can read,
//! gone when the demo ends.
//!
//! The example is compiled from its own source into this binary, which
//! spawns a copy of itself to run it: the program under test is always
//! built from the sources under test, with no cargo run from inside a test.

#[allow(
    dead_code,
    reason = "only the example's demo is called here, not its main"
)]
#[path = "../../examples/serve.rs"]
mod serve;

use std::env;
use std::fs;
use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use toolhost::client::Client;

/// Set in the copy that is to run the example.
const RUN_SERVE: &str = "TOOLHOST_TESTS_RUN_SERVE";

/// How long the example may take to print a line or to exit: generous,
/// it only keeps a broken build from hanging.
const PATIENCE: Duration = Duration::from_secs(60);

/// Not a test of its own: in the copy the test below spawns, the example.
#[test]
fn serve_runs_here_in_the_copy_the_test_spawns() {
    if env::var_os(RUN_SERVE).is_some() {
        // As the example's main does first: the session's stdio entry is
        // refused to a program that did not.
        toolhost::relay::run_if_requested();
        serve::serve().expect("the example ends well");
    }
}

/// The spawned example, killed and reaped if a test ends before it does
/// (and then its files removed, which a killed example cannot do).
struct Example {
    child: Child,
    lines: mpsc::Receiver<String>,
    /// Everything the example wrote to stderr, once it has closed it.
    stderr: Option<thread::JoinHandle<String>>,
    files: Option<PathBuf>,
}

impl Example {
    fn start() -> Example {
        let mut child = Command::new(env::current_exe().expect("the test's own path"))
            .args(["--exact", "serve_runs_here_in_the_copy_the_test_spawns"])
            .args(["--test-threads", "1"])
            // What the example writes to stderr reaches the pipe, not
            // libtest's capture.
            .arg("--nocapture")
            .env(RUN_SERVE, "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn the example");
        let stdout = child.stdout.take().expect("piped stdout");
        let mut stderr = child.stderr.take().expect("piped stderr");
        let stderr = thread::spawn(move || {
            let mut text = String::new();
            let _ = stderr.read_to_string(&mut text);
            text
        });
        let (sender, lines) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        Example {
            child,
            lines,
            stderr: Some(stderr),
            files: None,
        }
    }

    /// Every line up to and including the first that starts with `last`.
    fn lines_through(&self, last: &str) -> Vec<String> {
        let mut seen = Vec::new();
        loop {
            let line = self
                .lines
                .recv_timeout(PATIENCE)
                .unwrap_or_else(|_| panic!("no line starting {last:?}; got {seen:#?}"));
            let done = line.starts_with(last);
            seen.push(line);
            if done {
                return seen;
            }
        }
    }

    /// Closes the example's stdin, its signal to stop, and waits for it:
    /// how it ended, and what it wrote to stderr.
    fn stop(&mut self) -> (std::process::ExitStatus, String) {
        drop(self.child.stdin.take());
        let deadline = Instant::now() + PATIENCE;
        loop {
            if let Some(status) = self.child.try_wait().expect("wait for the example") {
                let stderr = self.stderr.take().expect("stderr not yet read");
                return (status, stderr.join().expect("the stderr reader"));
            }
            assert!(Instant::now() < deadline, "the example did not stop");
            thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Example {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
            if let Some(dir) = &self.files {
                let _ = fs::remove_dir_all(dir);
            }
        }
    }
}

/// The one line of `block` that starts with `label` (after its indent).
fn line<'a>(block: &'a [String], label: &str) -> &'a str {
    block
        .iter()
        .find(|line| line.trim_start().starts_with(label))
        .unwrap_or_else(|| panic!("no {label:?} line in {block:#?}"))
}

#[cfg(unix)]
fn mode(path: &std::path::Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    fs::metadata(path).expect("stat").permissions().mode() & 0o777
}

#[test]
fn each_agents_line_reaches_the_session_through_private_files_never_a_command_line() {
    let mut example = Example::start();
    let printed = example.lines_through("Serving until stdin closes");
    // The test runner's own "test NAME ... " may start the line.
    let first: Value = printed
        .iter()
        .filter_map(|line| line.find('{').map(|at| &line[at..]))
        .find_map(|json| serde_json::from_str(json).ok())
        .expect("the first JSON line");
    let url = first["url"].as_str().expect("url");
    let authorization = first["authorization"].as_str().expect("authorization");
    let token = authorization.strip_prefix("Bearer ").expect("a bearer");

    // The agents' lines, one each, name no bearer — though the output as
    // a whole does (the ACP entry), so the check below could see one.
    let start = printed
        .iter()
        .position(|line| line.starts_with("Connect an agent to this session"))
        .expect("the agents' lines");
    let block = &printed[start..];
    let labels = [
        "Claude Code:",
        "Codex:",
        "Copilot CLI:",
        "Gemini CLI:",
        "ACP client:",
        "curl:",
    ];
    for label in labels {
        let text = line(block, label);
        assert!(
            !text.contains(token),
            "{label} line holds the bearer: {text}"
        );
    }
    assert!(block.iter().all(|line| !line.contains(token)));
    assert!(printed.iter().any(|line| line.contains(token)));
    // The output that holds the bearer says so, before the entries print
    // it again (the JSON line a script reads must stay first).
    let said = printed
        .iter()
        .position(|line| line.starts_with("This output carries the session's bearer"))
        .expect("a line saying stdout holds the bearer");
    let entries = printed
        .iter()
        .position(|line| line.starts_with("ACP session/new"))
        .expect("the ACP entry");
    assert!(said < entries && entries < start);
    assert!(printed[..said].iter().filter(|l| l.contains(token)).count() == 1);

    // Where the lines point: a directory only its owner can enter, with a
    // file for each agent that only its owner can read.
    let claude = line(block, "Claude Code:");
    let claude_file = PathBuf::from(shell_unquoted(
        claude
            .split_once("claude --mcp-config ")
            .expect("claude --mcp-config FILE")
            .1,
    ));
    let dir = claude_file
        .parent()
        .expect("the files' directory")
        .to_owned();
    example.files = Some(dir.clone());
    let file = |name: &str| dir.join(name);
    #[cfg(unix)]
    {
        assert_eq!(mode(&dir), 0o700);
        for name in [
            "claude.mcp.json",
            "copilot.mcp.json",
            "gemini-settings.json",
            "bearer",
            "authorization.header",
        ] {
            assert_eq!(mode(&file(name)), 0o600, "{name}");
        }
    }
    let read_json = |name: &str| -> Value {
        serde_json::from_str(&fs::read_to_string(file(name)).expect("read")).expect("JSON")
    };
    assert_eq!(
        read_json("claude.mcp.json"),
        json!({"mcpServers": {"toolhost-demo": {
            "type": "http", "url": url, "headers": {"Authorization": authorization},
        }}})
    );
    assert_eq!(
        read_json("copilot.mcp.json"),
        json!({"mcpServers": {"toolhost-demo": {
            "type": "http", "url": url, "headers": {"Authorization": authorization},
            "tools": ["*"],
        }}})
    );
    assert_eq!(
        read_json("gemini-settings.json"),
        json!({"mcpServers": {"toolhost-demo": {
            "httpUrl": url, "headers": {"Authorization": authorization},
        }}})
    );
    assert_eq!(
        fs::read_to_string(file("authorization.header")).expect("read"),
        format!("Authorization: {authorization}\n")
    );
    let bearer = fs::read_to_string(file("bearer")).expect("read");
    assert_eq!(bearer, token);

    // Each line names those files (as POSIX shell words) and the session's
    // URL.
    let copilot = line(block, "Copilot CLI:");
    assert_eq!(
        path_after(copilot, "copilot --additional-mcp-config @"),
        file("copilot.mcp.json")
    );
    let gemini = line(block, "Gemini CLI:");
    assert_eq!(
        path_after(gemini, "GEMINI_CLI_SYSTEM_SETTINGS_PATH="),
        file("gemini-settings.json")
    );
    assert!(gemini.ends_with(" gemini"), "{gemini}");
    let codex = line(block, "Codex:");
    assert_eq!(
        path_after(codex, "TOOLHOST_DEMO_BEARER=\"$(cat "),
        file("bearer")
    );
    assert!(codex.contains(")\" codex -c "), "{codex}");
    assert!(codex.contains(&format!("'mcp_servers.toolhost-demo.url=\"{url}\"'")));
    assert!(
        codex.contains("'mcp_servers.toolhost-demo.bearer_token_env_var=\"TOOLHOST_DEMO_BEARER\"'")
    );
    let curl = line(block, "curl:");
    assert!(curl.contains(&format!("curl -si {url} -H @")), "{curl}");
    assert_eq!(path_after(curl, " -H @"), file("authorization.header"));

    // The token the Codex line hands over reaches the tools; another does not.
    let mut client = Client::builder(url)
        .bearer(&bearer)
        .connect()
        .expect("connect with the file's bearer");
    let echoed = client
        .call_tool("echo", json!({"text": "from the bearer file"}))
        .expect("call echo");
    assert_eq!(echoed.text(), "from the bearer file");
    let last = if bearer.ends_with('0') { '1' } else { '0' };
    let forged = format!("{}{last}", &bearer[..bearer.len() - 1]);
    let refused = Client::builder(url).bearer(&forged).connect();
    assert!(refused.is_err(), "a forged bearer connected");

    // Stopping the example removes the files with the bearer in them, and
    // its last line counts the calls that reached a handler: the
    // self-check's echo and count and this test's echo, not the transfer
    // refused for its arguments (`calls_served` counts handlers reached).
    let (status, stderr) = example.stop();
    assert!(status.success(), "{stderr}");
    assert!(
        stderr.contains("stdin closed after 3 tool calls reached a handler (not counting"),
        "{stderr}"
    );
    assert!(!dir.exists(), "{} outlived the example", dir.display());
}

/// The path written as one shell word right after `prefix` in `line`.
fn path_after(line: &str, prefix: &str) -> PathBuf {
    let rest = &line[line
        .find(prefix)
        .unwrap_or_else(|| panic!("{prefix:?} in {line}"))
        + prefix.len()..];
    let word = match rest.strip_prefix('\'') {
        // A quoted word ends at the quote that is not part of '\''.
        Some(quoted) => {
            let mut end = 0;
            loop {
                let at = end + quoted[end..].find('\'').expect("a closing quote");
                if quoted[at..].starts_with(r"'\''") {
                    end = at + 4;
                } else {
                    break &rest[..at + 2];
                }
            }
        }
        None => rest.split([' ', ')', '"']).next().unwrap_or_default(),
    };
    PathBuf::from(shell_unquoted(word))
}

/// One word of a POSIX shell line as the shell reads it: the example
/// quotes a path with characters a shell would act on (a Windows path's
/// backslashes) in single quotes.
fn shell_unquoted(word: &str) -> String {
    match word.strip_prefix('\'').and_then(|w| w.strip_suffix('\'')) {
        Some(inner) => inner.replace(r"'\''", "'"),
        None => word.to_owned(),
    }
}
