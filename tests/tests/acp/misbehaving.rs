//! A misbehaving ACP agent, one way per run, and the driver's answer to
//! each: `examples/acp_turn` (run from this binary with `--acp-turn`)
//! drives the agent (this binary with `--misbehaving-agent MODE`), which
//! first starts a grandchild (this binary with `--sleeper`) that holds its
//! stdout and stderr, as a launcher's real agent would, and names it on
//! stderr. Each test checks the error the turn ends with, that it came
//! well before the timeout that would otherwise have ended it, that
//! nothing the agent started is left running, and for the huge line the
//! peak memory of the driving process.
//!
//! Modes: `behaves` (one chunk, `end_turn`), `flood` (200,000 chunks, then
//! `end_turn`), `garbage` (non-JSON lines and stray responses around every
//! answer), `hang` (never answers `session/prompt`, ignores the cancel),
//! `crash-mid-turn` (one chunk, then exit 7), `crash-at-start` (exit 9 on
//! `initialize`), `huge-line` (one `session/update` carrying 64 MiB of
//! text), `big-line` (the same with 1 MiB, within the limit),
//! `flood-after-turn` (answers its first prompt, then writes
//! [`AFTER_TURN_LINES`] updates of about 1 KiB while no turn runs, and
//! says `flood written` on stderr once they are all taken).

use std::env;
use std::io::{self, BufRead, Write};
use std::process::{Command, ExitCode, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::{standin, ACP_TURN};

/// The argument that makes this binary the misbehaving agent.
pub const MISBEHAVING: &str = "--misbehaving-agent";

/// The bytes of text in the `huge-line` update: the issue's 64 MiB.
const HUGE: usize = 64 << 20;

/// How many updates `flood-after-turn` writes between turns: about 100 MiB
/// of lines, which an unbounded queue in the driver would hold (parsed,
/// several hundred MiB).
const AFTER_TURN_LINES: usize = 100_000;

/// The misbehaving agent's main.
pub fn agent(mode: &str) -> ExitCode {
    let exe = env::current_exe().expect("own path");
    // Inherits stdout and stderr: it holds the agent's pipes open.
    #[allow(
        clippy::zombie_processes,
        reason = "left running on purpose: ending it is the driver's job under test"
    )]
    let sleeper = Command::new(exe)
        .arg(standin::SLEEPER)
        .stdin(Stdio::null())
        .spawn()
        .expect("start the grandchild");
    eprintln!("misbehaving agent: grandchild {}", sleeper.id());
    let stdin = io::stdin();
    let mut prompts = 0;
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let (Some(method), Some(id)) = (message["method"].as_str(), message.get("id")) else {
            continue;
        };
        if mode == "garbage" {
            write_raw(b"this is not JSON\n");
            write(&json!({"jsonrpc": "2.0", "id": 999_999, "result": {"stray": true}}));
        }
        let result = match method {
            "initialize" if mode == "crash-at-start" => crash(9, "no API key in the environment"),
            "initialize" => json!({"protocolVersion": 1, "agentCapabilities": {
                "mcpCapabilities": {"http": true}}}),
            "session/new" => json!({"sessionId": "misbehaving-1"}),
            "session/prompt" => match prompt(mode) {
                Some(result) => result,
                None => continue,
            },
            _ => json!({}),
        };
        write(&json!({"jsonrpc": "2.0", "id": id, "result": result}));
        if method == "session/prompt" {
            prompts += 1;
            if mode == "flood-after-turn" && prompts == 1 {
                flood_after_turn();
            }
        }
        if mode == "garbage" {
            write(
                &json!({"jsonrpc": "2.0", "id": "nobody-asked", "error": {"code": 1, "message": "stray"}}),
            );
            write_raw(b"{not even close\n");
        }
    }
    ExitCode::SUCCESS
}

/// The turn, as the mode has it; `None` for no answer.
fn prompt(mode: &str) -> Option<Value> {
    match mode {
        "hang" => return None,
        "flood" => {
            for n in 0..200_000 {
                chunk(&format!("{n} "));
            }
        }
        "crash-mid-turn" => {
            chunk("thinking");
            crash(7, "fatal: lost the model");
        }
        "huge-line" => long_chunk(HUGE),
        "big-line" => long_chunk(1 << 20),
        _ => chunk("hello"),
    }
    Some(json!({"stopReason": "end_turn"}))
}

/// The first turn is over: [`AFTER_TURN_LINES`] updates of about 1 KiB,
/// written as fast as the pipe takes them.
fn flood_after_turn() {
    let text = "f".repeat(900);
    let mut out = io::BufWriter::new(io::stdout().lock());
    for n in 0..AFTER_TURN_LINES {
        let line = json!({"jsonrpc": "2.0", "method": "session/update", "params": {
            "sessionId": "misbehaving-1",
            "update": {"sessionUpdate": "agent_message_chunk",
                "content": {"type": "text", "text": format!("{n} {text}")}},
        }});
        if writeln!(out, "{line}").is_err() {
            return;
        }
    }
    if out.flush().is_ok() {
        eprintln!("misbehaving agent: flood written");
    }
}

fn crash(status: i32, last_words: &str) -> ! {
    eprintln!("misbehaving agent: {last_words}");
    std::process::exit(status)
}

fn chunk(text: &str) {
    write(
        &json!({"jsonrpc": "2.0", "method": "session/update", "params": {
            "sessionId": "misbehaving-1",
            "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}},
        }}),
    );
}

/// One `session/update` whose text is `bytes` long, written in pieces so
/// that the agent itself never holds it.
fn long_chunk(bytes: usize) {
    let mut out = io::stdout().lock();
    let piece = vec![b'x'; 64 << 10];
    let _ = out.write_all(br#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"misbehaving-1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":""#);
    for _ in 0..bytes / piece.len() {
        let _ = out.write_all(&piece);
    }
    let _ = out.write_all(b"\"}}}}\n").and_then(|()| out.flush());
}

fn write(message: &Value) {
    write_raw(format!("{message}\n").as_bytes());
}

fn write_raw(bytes: &[u8]) {
    let mut out = io::stdout().lock();
    let _ = out.write_all(bytes).and_then(|()| out.flush());
}

/// One run of `acp_turn` against the agent in `mode`.
struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    summary: Value,
    took: Duration,
    /// The driving process's peak resident memory (`VmHWM`), as last read
    /// before it exited; `None` where `/proc` cannot say.
    peak: Option<u64>,
    grandchild: u32,
}

impl Run {
    fn new(mode: &str, turn_timeout: &str) -> Run {
        let exe = env::current_exe().expect("own path");
        let started = Instant::now();
        let mut child = Command::new(&exe)
            .arg(ACP_TURN)
            .args(["--turn-timeout", turn_timeout, "--startup-timeout", "60"])
            .arg("--")
            .arg(&exe)
            .args([MISBEHAVING, mode])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run acp_turn");
        let pid = child.id();
        let mut stdout = child.stdout.take().expect("piped");
        let mut stderr = child.stderr.take().expect("piped");
        let out = thread::spawn(move || io::read_to_string(&mut stdout).unwrap_or_default());
        let err = thread::spawn(move || io::read_to_string(&mut stderr).unwrap_or_default());
        let mut peak = None;
        let status = loop {
            if let Some(status) = child.try_wait().expect("wait") {
                break status;
            }
            peak = peak_rss(pid).or(peak);
            thread::sleep(Duration::from_millis(5));
        };
        let took = started.elapsed();
        let stdout = out.join().expect("stdout");
        let stderr = err.join().expect("stderr");
        let summary = stdout
            .lines()
            .last()
            .and_then(|line| serde_json::from_str(line).ok())
            .unwrap_or(Value::Null);
        let grandchild = stderr
            .lines()
            .find_map(|line| line.strip_prefix("misbehaving agent: grandchild "))
            .and_then(|pid| pid.trim().parse().ok())
            .unwrap_or_else(|| panic!("no grandchild named\n{stderr}"));
        Run {
            code: status.code(),
            stdout,
            stderr,
            summary,
            took,
            peak,
            grandchild,
        }
    }

    fn error(&self) -> &str {
        self.summary["error"].as_str().unwrap_or_default()
    }

    fn show(&self) -> String {
        let tail = |text: &str| {
            text.chars()
                .rev()
                .take(3000)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect::<String>()
        };
        format!(
            "exit {:?} after {:?}, peak {:?}\n--- stdout (end)\n{}--- stderr (end)\n{}",
            self.code,
            self.took,
            self.peak,
            tail(&self.stdout),
            tail(&self.stderr)
        )
    }

    /// Asserts that the grandchild is not left running.
    fn left_nothing(&self) {
        if !cfg!(target_os = "linux") {
            return;
        }
        let gone = || !running(self.grandchild);
        // Reparented to init once the agent died, it may take init a
        // moment to reap it after its group was ended.
        let deadline = Instant::now() + Duration::from_secs(10);
        while !gone() && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(20));
        }
        assert!(
            gone(),
            "grandchild {} still runs\n{}",
            self.grandchild,
            self.show()
        );
    }
}

/// Whether `pid` runs (a zombie does not).
fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        let state = stat
            .rfind(')')
            .and_then(|end| stat[end + 1..].split_whitespace().next());
        !matches!(state, Some("Z" | "X") | None)
    })
}

/// The peak resident memory of `pid` so far (`VmHWM`), in bytes.
fn peak_rss(pid: u32) -> Option<u64> {
    proc_status_kib(&pid.to_string(), "VmHWM:").map(|kib| kib * 1024)
}

/// The figure `field` of `/proc/<process>/status`, in KiB.
fn proc_status_kib(process: &str, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{process}/status")).ok()?;
    status
        .lines()
        .find_map(|line| line.strip_prefix(field))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()
}

const MIB: u64 = 1 << 20;

pub fn an_agent_that_behaves_ends_its_turn_and_leaves_nothing_running() {
    let run = Run::new("behaves", "60");
    let show = run.show();
    assert_eq!(run.code, Some(0), "{show}");
    assert_eq!(run.summary["stopReason"], "end_turn", "{show}");
    assert!(run.summary["error"].is_null(), "{show}");
    run.left_nothing();
}

pub fn a_flood_of_updates_and_garbage_around_every_answer_still_end_the_turn() {
    for mode in ["flood", "garbage"] {
        let run = Run::new(mode, "60");
        let show = run.show();
        assert_eq!(run.code, Some(0), "{mode}: {show}");
        assert_eq!(run.summary["stopReason"], "end_turn", "{mode}: {show}");
        run.left_nothing();
    }
}

pub fn an_agent_that_crashes_mid_turn_fails_it_at_once_naming_its_status_and_last_words() {
    // A turn timeout of 60 s: noticing the death is what ends the turn.
    let run = Run::new("crash-mid-turn", "60");
    let show = run.show();
    assert_eq!(run.code, Some(1), "{show}");
    let error = run.error();
    assert!(
        error.starts_with("session/prompt: the agent's process "),
        "{show}"
    );
    assert!(error.contains("exited (exit status: 7)"), "{show}");
    assert!(
        error.contains("fatal: lost the model"),
        "the last stderr line: {show}"
    );
    assert!(
        !error.contains("no answer within"),
        "not blamed on slowness: {show}"
    );
    assert!(
        run.took < Duration::from_secs(20),
        "noticed well before the 60 s turn timeout: {show}"
    );
    // The agent's stderr still reached the user as it came.
    assert!(
        run.stderr
            .contains("misbehaving agent: fatal: lost the model"),
        "{show}"
    );
    run.left_nothing();
}

pub fn an_agent_that_crashes_at_startup_fails_initialize_at_once_naming_its_status() {
    let run = Run::new("crash-at-start", "60");
    let show = run.show();
    assert_eq!(run.code, Some(1), "{show}");
    let error = run.error();
    assert!(
        error.starts_with("initialize: the agent's process "),
        "{show}"
    );
    assert!(error.contains("exited (exit status: 9)"), "{show}");
    assert!(error.contains("no API key in the environment"), "{show}");
    assert!(
        run.took < Duration::from_secs(20),
        "noticed well before the 60 s startup timeout: {show}"
    );
    run.left_nothing();
}

pub fn an_agent_that_never_answers_the_prompt_fails_at_the_turn_timeout_and_is_ended() {
    let run = Run::new("hang", "1");
    let show = run.show();
    assert_eq!(run.code, Some(1), "{show}");
    // Alive and silent: only the timeout (and the cancel's grace) ends it,
    // and the error says so rather than claiming a death.
    assert!(
        run.error().starts_with("session/prompt: no answer within"),
        "{show}"
    );
    assert!(!run.error().contains("exited"), "{show}");
    run.left_nothing();
}

pub fn a_64_mib_line_ends_the_turn_naming_size_and_setting_without_being_buffered() {
    let run = Run::new("huge-line", "60");
    let show = run.show();
    assert_eq!(run.code, Some(1), "{show}");
    let error = run.error();
    assert!(
        error.starts_with("session/prompt: the agent sent a message of "),
        "{show}"
    );
    let size: u64 = error
        .split("a message of ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no size in the error: {show}"));
    assert!(size > HUGE as u64, "the whole line was counted: {show}");
    assert!(
        error.contains("past the limit of 16777216 bytes")
            && error.contains("Agent::set_max_message_bytes"),
        "{show}"
    );
    assert!(run.took < Duration::from_secs(30), "{show}");
    // The line is four times what the driver's memory may grow by: had
    // it been buffered (and parsed), the peak would be hundreds of MiB.
    if let Some(peak) = run.peak {
        assert!(peak < 100 * MIB, "peak {} MiB\n{show}", peak / MIB);
    }
    run.left_nothing();

    // The same agent with a line within the limit ends its turn.
    let within = Run::new("big-line", "60");
    let show = within.show();
    assert_eq!(within.code, Some(0), "{show}");
    assert_eq!(within.summary["stopReason"], "end_turn", "{show}");
    within.left_nothing();
}

pub fn the_agents_stderr_reaches_the_applications_hook_and_the_error_keeps_its_last_lines() {
    use std::sync::{Arc, Mutex};
    let exe = env::current_exe().expect("own path");
    let mut agent =
        toolhost::acp::Agent::spawn(Command::new(&exe).args([MISBEHAVING, "crash-at-start"]))
            .expect("spawn");
    let heard = Arc::new(Mutex::new(Vec::<String>::new()));
    let hook = Arc::clone(&heard);
    agent.on_stderr(move |line| hook.lock().unwrap().push(line.to_owned()));
    let started = Instant::now();
    let err = agent
        .initialize()
        .expect_err("the agent exits on initialize");
    assert!(started.elapsed() < Duration::from_secs(20), "{err}");
    let text = err.to_string();
    assert!(
        matches!(err, toolhost::acp::AcpError::Closed { .. }),
        "{text}"
    );
    assert!(text.contains("exited (exit status: 9)"), "{text}");
    assert!(text.contains("no API key in the environment"), "{text}");
    // The line that named the cause reached the hook too (the grandchild's
    // line may have come before the hook was set, and gone to stderr).
    let heard = heard.lock().unwrap().clone();
    assert!(
        heard
            .iter()
            .any(|line| line == "misbehaving agent: no API key in the environment"),
        "{heard:?}"
    );
    // Later requests fail with the same news, not a broken pipe.
    let again = agent
        .call("session/new", json!({}))
        .expect_err("still gone");
    assert!(
        again.to_string().contains("exited (exit status: 9)"),
        "{again}"
    );
}

/// A `flood-after-turn` agent whose stderr goes to `on_stderr`, driven
/// through `initialize`, `session/new` and its first turn (after which it
/// floods); the session's id.
fn flooding_after_its_first_turn(
    on_stderr: impl FnMut(&str) + Send + 'static,
) -> (toolhost::acp::Agent, String) {
    let exe = env::current_exe().expect("own path");
    let mut agent =
        toolhost::acp::Agent::spawn(Command::new(&exe).args([MISBEHAVING, "flood-after-turn"]))
            .expect("spawn");
    agent.on_stderr(on_stderr);
    agent.initialize().expect("initialize");
    let session = agent
        .call("session/new", json!({"cwd": "/", "mcpServers": []}))
        .expect("session/new")["sessionId"]
        .as_str()
        .expect("a session id")
        .to_owned();
    let first = agent
        .prompt(&session, "first")
        .timeout(Duration::from_secs(60))
        .run()
        .expect("the first turn");
    assert_eq!(first.stop_reason, "end_turn");
    (agent, session)
}

/// Drops `agent` and asserts that nothing of its process group runs on
/// (on Linux, where `/proc` says).
fn ended_with_its_group(agent: toolhost::acp::Agent) {
    let group = agent.id();
    let started = Instant::now();
    drop(agent);
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "the drop came back"
    );
    if cfg!(target_os = "linux") {
        let deadline = Instant::now() + Duration::from_secs(10);
        while !members(group).is_empty() && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(20));
        }
        assert_eq!(
            members(group),
            Vec::<u32>::new(),
            "the agent's group is ended"
        );
    }
}

pub fn an_agent_flooding_between_turns_is_held_back_and_the_next_turn_hears_every_line() {
    use std::sync::{Arc, Mutex};
    let heard = Arc::new(Mutex::new(Vec::<String>::new()));
    let hook = Arc::clone(&heard);
    let flood_written = || {
        heard
            .lock()
            .unwrap()
            .iter()
            .any(|l| l.ends_with("flood written"))
    };
    let (mut agent, session) =
        flooding_after_its_first_turn(move |line| hook.lock().unwrap().push(line.to_owned()));

    // No turn runs while the agent writes ~100 MiB: the driver takes a
    // few lines and the agent blocks on its pipe.
    let before = resident();
    let mut most = before;
    let watched_until = Instant::now() + Duration::from_secs(3);
    while Instant::now() < watched_until && !flood_written() {
        most = most.max(resident());
        thread::sleep(Duration::from_millis(20));
    }
    assert!(
        !flood_written(),
        "the agent wrote its whole flood with no turn running: the driver took it all"
    );
    if let (Some(before), Some(most)) = (before, most) {
        let grown = most.saturating_sub(before);
        assert!(
            grown < 32 * MIB,
            "the driver grew by {} MiB between turns",
            grown / MIB
        );
    }

    // The next turn reads what waited, every line of it, then its own
    // update and answer.
    let mut updates = 0;
    let second = agent
        .prompt(&session, "second")
        .timeout(Duration::from_secs(120))
        .on_update(|_| updates += 1)
        .run()
        .expect("the second turn");
    assert_eq!(second.stop_reason, "end_turn");
    assert_eq!(updates, AFTER_TURN_LINES + 1, "nothing was dropped");
    let deadline = Instant::now() + Duration::from_secs(10);
    while !flood_written() && Instant::now() < deadline {
        thread::sleep(Duration::from_millis(20));
    }
    assert!(flood_written(), "the agent finished its flood once read");
    ended_with_its_group(agent);
}

pub fn an_agent_blocked_on_its_pipe_between_turns_is_ended_with_the_driver() {
    let (agent, _) = flooding_after_its_first_turn(|_| {});
    // The agent floods and soon blocks on its full pipe; nobody reads.
    thread::sleep(Duration::from_millis(300));
    if cfg!(target_os = "linux") {
        assert_ne!(
            members(agent.id()),
            Vec::<u32>::new(),
            "the agent runs, blocked"
        );
    }
    ended_with_its_group(agent);
}

/// This process's resident memory (`VmRSS`), in bytes; `None` where
/// `/proc` cannot say.
fn resident() -> Option<u64> {
    proc_status_kib("self", "VmRSS:").map(|kib| kib * 1024)
}

/// The processes of group `group` that run (zombies do not).
fn members(group: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
                // After the command's closing parenthesis: state, ppid, pgrp.
                let fields: Vec<&str> = stat
                    .rfind(')')
                    .map(|end| stat[end + 1..].split_whitespace().take(3).collect())
                    .unwrap_or_default();
                matches!(fields[..], [state, _, pgrp]
                    if !matches!(state, "Z" | "X") && pgrp == group.to_string())
            })
        })
        .collect()
}
