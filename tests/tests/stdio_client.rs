//! `toolhost::client::StdioClient` against a scripted stdio MCP server
//! (`stdio_server --scripted`, this package's program), which logs every
//! line it receives: the protocol details of the stdio transport — the
//! revision fallback, `ping`, questions and log messages with and without
//! a call in flight,
//! cancellation and timeouts on the wire, a server that dies.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use serde_json::{json, Value};
use toolhost::client::{CallOptions, CancelHandle, ClientError, Refusal, StdioClient, StdioServer};
use toolhost::{LogLevel, Revision};
use toolhost_tests::wait_for;

/// A scripted server and the file it logs what it receives to.
struct Scripted {
    client: StdioClient,
    log: PathBuf,
}

impl Scripted {
    fn start(test: &str) -> Scripted {
        let log = std::env::temp_dir().join(format!(
            "toolhost-stdio-client-{}-{test}.log",
            std::process::id()
        ));
        let client = StdioServer::new(env!("CARGO_BIN_EXE_stdio_server"))
            .arg("--scripted")
            .arg(&log)
            .capabilities(json!({"roots": {}}))
            .connect()
            .unwrap();
        Scripted { client, log }
    }

    /// Every message the server received so far.
    fn received(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .filter_map(|line| serde_json::from_str(line).ok())
            .collect()
    }

    /// The messages received with `method`.
    fn received_method(&self, method: &str) -> Vec<Value> {
        self.received()
            .into_iter()
            .filter(|m| m["method"] == method)
            .collect()
    }

    /// The answer the server received to its request `id`.
    fn answer_to(&self, id: &str) -> Option<Value> {
        self.received()
            .into_iter()
            .find(|m| m["id"] == id && m.get("method").is_none())
    }
}

impl Drop for Scripted {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.log);
    }
}

#[test]
fn initialize_settles_on_the_newest_revision_a_strict_server_accepts() {
    let server = Scripted::start("revision");
    assert_eq!(server.client.revision(), Revision::V2025_06_18);
    assert_eq!(
        server.client.server_info().map(|s| s.name.as_str()),
        Some("scripted")
    );
    let offers: Vec<Value> = server
        .received_method("initialize")
        .iter()
        .map(|m| m["params"]["protocolVersion"].clone())
        .collect();
    assert_eq!(offers, [json!("2025-11-25"), json!("2025-06-18")]);
    // Sent once the answer came, so it may still be on its way.
    wait_for("notifications/initialized", || {
        server.received_method("notifications/initialized").len() == 1
    });

    // A server that takes the first offer gets no second one.
    let newest = StdioServer::new(env!("CARGO_BIN_EXE_stdio_server"))
        .arg("--scripted")
        .arg(server.log.with_extension("older"))
        .revision(Revision::V2025_03_26)
        .connect()
        .unwrap();
    assert_eq!(newest.revision(), Revision::V2025_03_26);
    let _ = std::fs::remove_file(server.log.with_extension("older"));
}

#[test]
fn a_question_with_no_call_in_flight_is_refused_one_during_a_call_reaches_it_and_ping_is_answered()
{
    let server = Scripted::start("questions");
    wait_for("the answer to the early roots/list", || {
        server.answer_to("early-roots").is_some()
    });
    let early = server.answer_to("early-roots").unwrap();
    assert!(early.get("result").is_none(), "{early}");
    assert!(
        early["error"]["message"]
            .as_str()
            .unwrap()
            .contains("exactly one tool call"),
        "{early}"
    );

    let asked = AtomicUsize::new(0);
    let result = server
        .client
        .call_tool_with(
            "ask_back",
            json!({}),
            CallOptions::new().on_request(|request| {
                asked.fetch_add(1, Ordering::SeqCst);
                match request.method.as_str() {
                    "roots/list" => Ok(json!({"roots": [{"uri": "file:///work"}]})),
                    other => Err(Refusal::new(format!("{other} not expected"))),
                }
            }),
        )
        .unwrap();
    let heard: Value = serde_json::from_str(&result.text()).unwrap();
    assert_eq!(
        heard,
        json!([
            {"jsonrpc": "2.0", "id": "ping-1", "result": {}},
            {"jsonrpc": "2.0", "id": "roots-1", "result": {"roots": [{"uri": "file:///work"}]}},
        ])
    );
    assert_eq!(
        asked.load(Ordering::SeqCst),
        1,
        "ping is the client's, not the call's"
    );
}

#[test]
fn a_cancelled_or_timed_out_call_returns_and_tells_the_server_which_request() {
    let server = Scripted::start("cancel");
    let cancel = CancelHandle::new();
    let canceller = cancel.clone();
    thread::scope(|scope| {
        scope.spawn(|| {
            wait_for("the call to reach the server", || {
                !server.received_method("tools/call").is_empty()
            });
            assert!(server.received_method("notifications/cancelled").is_empty());
            canceller.cancel();
        });
        let outcome = server.client.call_tool_with(
            "hang",
            json!({}),
            CallOptions::new().cancel_with(&cancel),
        );
        assert!(
            matches!(outcome, Err(ClientError::Cancelled)),
            "{outcome:?}"
        );
    });
    wait_for("the cancellation to reach the server", || {
        !server.received_method("notifications/cancelled").is_empty()
    });
    let call_id = server.received_method("tools/call")[0]["id"].clone();
    let cancelled = &server.received_method("notifications/cancelled")[0];
    assert_eq!(cancelled["params"]["requestId"], call_id);

    let outcome = server.client.call_tool_with(
        "hang",
        json!({}),
        CallOptions::new().timeout(Duration::from_millis(200)),
    );
    assert!(
        matches!(outcome, Err(ClientError::Timeout { .. })),
        "{outcome:?}"
    );
    wait_for("the second cancellation", || {
        server.received_method("notifications/cancelled").len() == 2
    });
    let second = &server.received_method("notifications/cancelled")[1];
    assert_eq!(
        second["params"]["requestId"],
        server.received_method("tools/call")[1]["id"]
    );
    // The client still works.
    assert_eq!(server.client.list_tools().unwrap().len(), 3);
}

#[test]
#[cfg_attr(windows, ignore = "Unix only: kill(1)")]
fn a_server_that_dies_fails_the_call_in_flight_and_every_later_one() {
    let server = Scripted::start("dies");
    let pid = server.client.id();
    thread::scope(|scope| {
        scope.spawn(|| {
            wait_for("the call to reach the server", || {
                !server.received_method("tools/call").is_empty()
            });
            let killed = std::process::Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status()
                .unwrap();
            assert!(killed.success());
        });
        let outcome = server.client.call_tool("hang", json!({}));
        assert!(
            matches!(outcome, Err(ClientError::Closed { .. })),
            "{outcome:?}"
        );
    });
    assert!(server.client.closed().is_some());
    let later = server.client.list_tools();
    assert!(
        matches!(later, Err(ClientError::Closed { .. })),
        "{later:?}"
    );
    assert!(later.unwrap_err().to_string().contains("gone"));
}

#[test]
fn a_log_message_with_no_call_in_flight_goes_to_on_log_and_one_during_a_call_to_that_call() {
    let log = std::env::temp_dir().join(format!(
        "toolhost-stdio-client-{}-logs.log",
        std::process::id()
    ));
    let unclaimed = Arc::new(Mutex::new(Vec::new()));
    let client = StdioServer::new(env!("CARGO_BIN_EXE_stdio_server"))
        .arg("--scripted")
        .arg(&log)
        .on_log({
            let unclaimed = Arc::clone(&unclaimed);
            move |message| unclaimed.lock().unwrap().push(message.clone())
        })
        .connect()
        .unwrap();
    wait_for("the log message sent with no call in flight", || {
        !unclaimed.lock().unwrap().is_empty()
    });

    let mut during_call = Vec::new();
    client
        .call_tool_with(
            "ask_back",
            json!({}),
            CallOptions::new()
                .on_request(|_| Ok(json!({"roots": []})))
                .on_log(|message| during_call.push(message.clone())),
        )
        .unwrap();
    let _ = std::fs::remove_file(&log);

    let unclaimed = unclaimed.lock().unwrap();
    assert_eq!(unclaimed.len(), 1, "{unclaimed:?}");
    assert_eq!(unclaimed[0].level, LogLevel::Notice);
    assert_eq!(unclaimed[0].logger.as_deref(), Some("scripted"));
    assert_eq!(unclaimed[0].data, json!("initialized; no call in flight"));
    // The call's own message went to the call, and only there.
    assert_eq!(during_call.len(), 1, "{during_call:?}");
    assert_eq!(during_call[0].level, LogLevel::Info);
    assert_eq!(during_call[0].data, json!("asked back"));
}

/// A stdio MCP server in `sh`: answers `initialize` (id 1), takes the
/// `initialized` notification, then runs `then` with the client's next
/// requests to read (`read line`) — a server that misbehaves on purpose.
fn sh_server(then: &str) -> StdioServer {
    let script = format!(
        r#"read line
printf '%s\n' '{{"jsonrpc":"2.0","id":1,"result":{{"protocolVersion":"2025-06-18","capabilities":{{}},"serverInfo":{{"name":"sh","version":"0"}}}}}}'
read line
{then}"#
    );
    StdioServer::new("sh")
        .args(["-c", &script])
        .timeout(Duration::from_secs(30))
        .exit_grace(Duration::from_millis(200))
}

/// A line of `bytes` bytes answering request `id`, written without ever
/// holding it whole (so the shell's memory is not what a test measures).
fn huge_answer(id: u64, bytes: u64) -> String {
    format!(
        r#"printf '{{"jsonrpc":"2.0","id":{id},"result":{{"x":"'; head -c {bytes} /dev/zero | tr '\0' x; printf '"}}}}\n'"#
    )
}

#[test]
#[cfg_attr(windows, ignore = "Unix only: the server is a sh script")]
fn a_message_past_the_limit_fails_the_request_it_answers_at_once_and_the_server_serves_on() {
    // The answer to ping 2 is 1 MB; ping 3 gets a small one.
    let script = format!(
        "read line\n{}\nread line\nprintf '%s\\n' '{{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{{}}}}'\nread line",
        huge_answer(2, 1_000_000)
    );
    let limited = sh_server(&script)
        .max_message_bytes(100_000)
        .connect()
        .unwrap();
    let started = std::time::Instant::now();
    let err = limited.ping().expect_err("the answer is past the limit");
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "noticed well before the 30 s timeout"
    );
    match &err {
        ClientError::TooLarge {
            what,
            size,
            limit,
            setting,
        } => {
            assert_eq!(what, "a message from the stdio MCP server \"sh\"");
            assert_eq!(*size, Some(1_000_000 + 42), "the whole line was counted");
            assert_eq!(*limit, 100_000);
            assert_eq!(*setting, "StdioServer::max_message_bytes");
        }
        other => panic!("{other:?}"),
    }
    let text = err.to_string();
    assert!(
        text.contains("\"sh\"")
            && text.contains("1000042 bytes")
            && text.contains("100000")
            && text.contains("StdioServer::max_message_bytes"),
        "{text}"
    );
    // The server is not taken for dead: the next request is answered.
    limited.ping().expect("the server serves on");
    assert!(limited.closed().is_none());

    // Within the limit the same answer is an answer.
    let roomy = sh_server(&script).connect().unwrap();
    roomy.ping().expect("1 MB is within the default limit");
}

#[test]
#[cfg_attr(windows, ignore = "Unix only: the server is a sh script")]
fn a_server_that_exits_while_its_child_holds_the_pipes_fails_the_call_at_once_naming_status_and_stderr(
) {
    // On the first request after initialize: a grandchild that holds
    // stdout and stderr, a few lines of stderr, then exit 7.
    let script = "read line\nsleep 300 &\necho \"grandchild $!\" >&2\necho 'loading config' >&2\necho 'fatal: out of cheese' >&2\nexit 7";
    let grandchild = Arc::new(Mutex::new(None::<u32>));
    let server = sh_server(script)
        .on_stderr({
            let grandchild = Arc::clone(&grandchild);
            move |line| {
                if let Some(pid) = line.strip_prefix("grandchild ") {
                    *grandchild.lock().unwrap() = pid.parse().ok();
                }
            }
        })
        .connect()
        .unwrap();
    let started = std::time::Instant::now();
    let err = server.ping().expect_err("the server exited");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "noticed well before the 30 s timeout: {:?}",
        started.elapsed()
    );
    assert!(matches!(err, ClientError::Closed { .. }), "{err:?}");
    let text = err.to_string();
    assert!(text.contains("exited (exit status: 7)"), "{text}");
    assert!(
        text.contains("loading config | fatal: out of cheese"),
        "the last stderr lines, in order: {text}"
    );
    // The grandchild that held the pipes does not outlive the server.
    let grandchild = grandchild.lock().unwrap().expect("the grandchild's pid");
    wait_for("the grandchild to be ended", || {
        !std::path::Path::new(&format!("/proc/{grandchild}")).exists()
    });
}

#[test]
#[cfg_attr(windows, ignore = "Unix only: the server is a sh script")]
fn with_two_requests_in_flight_a_message_past_the_limit_fails_only_the_one_it_answers() {
    // Reads both pings before answering: the first with 1 MB under its
    // own id, the second with an empty result.
    let script = r#"read first
read second
id_of() { printf '%s' "$1" | sed 's/.*"id":\([0-9]*\).*/\1/'; }
printf '{"jsonrpc":"2.0","id":%s,"result":{"x":"' "$(id_of "$first")"; head -c 1000000 /dev/zero | tr '\0' x; printf '"}}\n'
printf '{"jsonrpc":"2.0","id":%s,"result":{}}\n' "$(id_of "$second")"
read line"#;
    let client = sh_server(script)
        .max_message_bytes(100_000)
        .connect()
        .unwrap();
    let outcomes: Vec<Result<(), ClientError>> = thread::scope(|scope| {
        let pings: Vec<_> = (0..2).map(|_| scope.spawn(|| client.ping())).collect();
        pings.into_iter().map(|ping| ping.join().unwrap()).collect()
    });
    let too_large = outcomes
        .iter()
        .filter(|outcome| matches!(outcome, Err(ClientError::TooLarge { .. })))
        .count();
    let answered = outcomes.iter().filter(|outcome| outcome.is_ok()).count();
    assert_eq!((too_large, answered), (1, 1), "{outcomes:?}");
}

#[test]
fn a_zero_timeout_is_refused_naming_the_setting_before_anything_is_started() {
    // A program that cannot be started would fail with `Spawn`: the
    // setting is checked first.
    let err = StdioServer::new("no-such-program-toolhost-test")
        .timeout(Duration::ZERO)
        .connect()
        .unwrap_err();
    assert!(
        matches!(err, ClientError::InvalidConfig { .. })
            && err
                .to_string()
                .contains("StdioServer::timeout must be longer than zero"),
        "{err}"
    );
}

#[test]
fn a_listing_past_the_bound_across_pages_is_refused_naming_server_count_and_setting_and_the_server_serves_on(
) {
    let heard = Arc::new(Mutex::new(Vec::<String>::new()));
    let pages_asked = {
        let heard = Arc::clone(&heard);
        move || {
            heard
                .lock()
                .unwrap()
                .iter()
                .filter(|line| line.contains("tools/list page"))
                .count()
        }
    };
    let hook = Arc::clone(&heard);
    // Six pages of 1,000 tools: past the default bound of 4,096 at the fifth.
    let server = StdioServer::new(env!("CARGO_BIN_EXE_stdio_server"))
        .args(["--misbehave", "pages", "6"])
        .on_stderr(move |line| hook.lock().unwrap().push(line.to_owned()));
    let client = server.connect().unwrap();
    let err = client.list_tools().unwrap_err();
    let text = err.to_string();
    assert!(
        matches!(
            err,
            ClientError::ListingTooLarge {
                tools: 5000,
                pages: 5,
                limit: 4096,
                unit: "tools",
                setting: "StdioServer::max_listed_tools",
                ..
            }
        ),
        "{err:?}"
    );
    assert!(
        text.starts_with("the stdio MCP server \"")
            && text.contains("stdio_server")
            && text.contains("listed 5000 tools"),
        "{text}"
    );
    // The server runs on, and was asked no page past the fifth.
    client.ping().unwrap();
    wait_for("five pages heard", || pages_asked() == 5);
    client.ping().unwrap();
    assert_eq!(pages_asked(), 5);

    // Bytes are bounded as well, named by their own setting.
    let err = server
        .clone()
        .max_listing_bytes(90_000)
        .connect()
        .unwrap()
        .list_tools()
        .unwrap_err();
    assert!(
        matches!(
            err,
            ClientError::ListingTooLarge {
                pages: 2,
                unit: "bytes",
                setting: "StdioServer::max_listing_bytes",
                ..
            }
        ),
        "{err:?}"
    );

    // Raised, the bound lets the whole listing through.
    let tools = server
        .max_listed_tools(6000)
        .connect()
        .unwrap()
        .list_tools()
        .unwrap();
    assert_eq!(tools.len(), 6000);
    assert_eq!(tools[5999].name(), "t5_999");
}
