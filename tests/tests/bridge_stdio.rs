//! A stdio MCP server bridged into a session: real child processes over
//! real pipes. The server is `stdio_server` (this package's program: the
//! crate's stdio relay in front of a second host's session, so the test
//! decides its tools and sees their calls); the local host serves its tools
//! beside its own through `McpServerLayer::stdio`.

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::json;
use toolhost::client::{CallOptions, ClientError, Era, McpClient, StdioServer, ToolResult};
use toolhost::relay::{AUTHORIZATION_VAR, URL_VAR};
use toolhost::{
    Elicitation, Event, HostConfig, Icon, LogLevel, McpServerLayer, ServerStatus, StaticSurface,
    Tool, ToolAnnotations, ToolHost, ToolOutcome, ToolRegistry, ToolSession,
};
use toolhost_tests::bridged::{
    app, asking_remote, check_cancellation_relayed, check_list_change_relayed,
    check_python_sdk_bridged, check_python_sdk_speaks_bridged, check_withdrawal_relayed,
    count_list_changes, gateway, tool_names,
};
use toolhost_tests::{wait_for, EventLog};

fn host() -> ToolHost {
    ToolHost::bind(HostConfig::default().keep_alive(Duration::from_secs(60))).unwrap()
}

/// The stdio server that serves `remote`'s tools.
fn server_for(remote: &ToolSession) -> StdioServer {
    StdioServer::new(env!("CARGO_BIN_EXE_stdio_server"))
        .env(URL_VAR, remote.url())
        .env(AUTHORIZATION_VAR, remote.authorization())
}

/// The layer for the stdio server of `remote`, named `remote`, with no
/// refresh on an interval (changes must come from the server).
fn layer_of(remote: &ToolSession) -> McpServerLayer {
    McpServerLayer::stdio("remote", server_for(remote))
        .refresh_every(None)
        .connect()
        .unwrap()
}

/// Whether process `pid` exists (a zombie still does: only reaping ends it).
fn process_exists(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

/// What the remote tools saw.
#[derive(Default)]
struct Seen {
    counted: AtomicU64,
    waiting: AtomicBool,
    cancelled: AtomicBool,
    release: AtomicBool,
}

/// `count` reports progress three times and logs once; `wait` runs until
/// cancelled or released.
fn remote_tools(seen: &Arc<Seen>) -> StaticSurface {
    let (counter, waiter) = (Arc::clone(seen), Arc::clone(seen));
    StaticSurface::new()
        .tool(
            Tool::new("count", "Counts to three.")
                .input_schema(json!({
                    "type": "object", "properties": {"from": {"type": "integer"}}, "required": ["from"],
                }))
                .annotations(ToolAnnotations::new().read_only(true).title("Count"))
                .icon(Icon::new("data:image/svg+xml;base64,PHN2Zy8+").sizes(["any"])),
            move |args, ctx| {
                counter.counted.fetch_add(1, Ordering::SeqCst);
                for step in 1..=3 {
                    ctx.progress(f64::from(step), Some(3.0), Some("counting"));
                }
                ctx.log_as(LogLevel::Warning, "disk", json!({"disk": "almost full"}));
                ToolOutcome::json(json!({"from": args["from"], "to": 3}))
            },
        )
        .unwrap()
        .tool(
            Tool::new("wait", "Waits until cancelled or released."),
            move |_, ctx| {
                waiter.waiting.store(true, Ordering::SeqCst);
                while !waiter.release.load(Ordering::SeqCst) {
                    if ctx.is_cancelled() {
                        waiter.cancelled.store(true, Ordering::SeqCst);
                        return ToolOutcome::text("stopped");
                    }
                    thread::sleep(Duration::from_millis(5));
                }
                ToolOutcome::text("released")
            },
        )
        .unwrap()
}

/// Kills process `pid` (one this test started) while a call of
/// `remote_wait` is in flight in `session`; returns what that call came to,
/// once the remote handler is let go.
fn kill_during_a_call(
    session: &ToolSession,
    seen: &Seen,
    pid: u32,
) -> toolhost::client::ToolResult {
    let mut waiting = session.client().unwrap();
    let in_flight = thread::spawn(move || waiting.call_tool("remote_wait", json!({})).unwrap());
    wait_for("the remote handler to start", || {
        seen.waiting.load(Ordering::SeqCst)
    });
    kill(pid);
    let result = in_flight.join().unwrap();
    seen.release.store(true, Ordering::SeqCst);
    result
}

/// The messages of the surface faults `log` heard.
fn faults(log: &EventLog) -> Vec<String> {
    log.pick(|event| match event {
        Event::SurfaceFault { message } => Some(message.clone()),
        _ => None,
    })
}

#[test]
fn the_stdio_servers_tools_are_listed_qualified_and_a_call_is_forwarded_with_its_progress_and_log()
{
    let seen = Arc::new(Seen::default());
    let remote_host = host();
    let remote = remote_host.open_session(remote_tools(&seen));
    let local_host = host();
    let session = local_host.open_session(gateway(layer_of(&remote)));
    let mut client = session
        .client_builder()
        .era(Era::Stateful)
        .log_level(LogLevel::Info)
        .connect()
        .unwrap();
    let listed = client.list_tools().unwrap();
    let names: Vec<&str> = listed.iter().map(|t| t.name()).collect();
    assert_eq!(names, ["echo", "remote_count", "remote_wait"]);
    // The server's annotations and icons come along (2025-11-25 has both);
    // a tool that has none gets none.
    assert_eq!(
        serde_json::to_value(listed[1].hints()).unwrap(),
        json!({"title": "Count", "readOnlyHint": true})
    );
    assert_eq!(
        serde_json::to_value(listed[1].icons()).unwrap(),
        json!([{"src": "data:image/svg+xml;base64,PHN2Zy8+", "sizes": ["any"]}])
    );
    assert!(listed[2].hints().is_none());

    let (mut reports, mut logs) = (Vec::new(), Vec::new());
    let result = client
        .call_tool_with(
            "remote_count",
            json!({"from": 1}),
            CallOptions::new()
                .on_progress(|p| reports.push((p.progress, p.total)))
                .on_log(|m| logs.push((m.level, m.logger.clone(), m.data.clone()))),
        )
        .unwrap();
    assert!(!result.is_error, "{result:?}");
    assert_eq!(result.structured_content, Some(json!({"from": 1, "to": 3})));
    assert_eq!(
        reports,
        [(1.0, Some(3.0)), (2.0, Some(3.0)), (3.0, Some(3.0))]
    );
    assert_eq!(
        logs,
        [(
            LogLevel::Warning,
            Some("disk".to_owned()),
            json!({"disk": "almost full"})
        )]
    );
    assert_eq!(seen.counted.load(Ordering::SeqCst), 1);

    // The server's own name is not this host's: never forwarded.
    let unknown = client.call_tool("count", json!({"from": 1})).unwrap();
    assert!(unknown.is_error, "{unknown:?}");
    assert_eq!(seen.counted.load(Ordering::SeqCst), 1, "not forwarded");
}

#[test]
fn the_agents_cancellation_reaches_the_stdio_servers_handler() {
    let seen = Arc::new(Seen::default());
    let remote_host = host();
    let remote = remote_host.open_session(remote_tools(&seen));
    let local_host = host();
    let session = local_host.open_session(gateway(layer_of(&remote)));
    check_cancellation_relayed(
        &mut session.client().unwrap(),
        &|| seen.waiting.load(Ordering::SeqCst),
        &|| seen.cancelled.load(Ordering::SeqCst),
    );
    assert!(
        !seen.release.load(Ordering::SeqCst),
        "it was never released"
    );
}

#[test]
fn a_list_change_on_the_stdio_server_reaches_the_local_get_stream() {
    let registry = ToolRegistry::new();
    let remote_host = host();
    let remote = remote_host.open_session(registry.clone());
    // No interval refresh runs: only the server's notification can bring
    // the new tool.
    let layer = layer_of(&remote);
    check_list_change_relayed(&registry, layer.clone(), Duration::ZERO);
    assert_eq!(layer.count(), 1);
    // A refresh that finds the same list changes nothing.
    assert!(!layer.refresh().unwrap());
}

#[test]
#[cfg_attr(windows, ignore = "Unix only: kill(1) and /proc")]
fn a_killed_server_is_a_clear_tool_error_the_local_tools_still_serve_and_the_next_call_restarts_it()
{
    let seen = Arc::new(Seen::default());
    let remote_host = host();
    let remote = remote_host.open_session(remote_tools(&seen));
    let log = EventLog::new();
    let local_host = ToolHost::bind(log.hook(HostConfig::default())).unwrap();
    let layer = layer_of(&remote);
    let first = layer.process_id().expect("a running server");
    let session = local_host.open_session(gateway(layer.clone()));

    // A call in flight when the server is killed.
    let result = kill_during_a_call(&session, &seen, first);
    assert!(result.is_error, "{result:?}");
    assert!(
        result.text().contains("\"remote\"") && result.text().contains("unavailable"),
        "{}",
        result.text()
    );

    // The hook has the detail; the local tool serves on.
    let faults = faults(&log);
    assert!(
        faults
            .iter()
            .any(|m| m.contains("tools/call of \"wait\" failed") && m.contains("gone")),
        "{faults:?}"
    );
    let mut client = session.client().unwrap();
    assert_eq!(
        client
            .call_tool("echo", json!({"text": "still here"}))
            .unwrap()
            .text(),
        "still here"
    );

    // The next call starts a new server, and works.
    let result = client
        .call_tool("remote_count", json!({"from": 2}))
        .unwrap();
    assert!(!result.is_error, "{result:?}");
    assert_eq!(result.structured_content, Some(json!({"from": 2, "to": 3})));
    let second = layer.process_id().expect("a running server");
    assert_ne!(first, second);
    wait_for("the killed server to be reaped", || !process_exists(first));
}

#[test]
#[cfg_attr(windows, ignore = "Unix only: reads /proc")]
fn dropping_the_layer_leaves_no_server_process_running() {
    let seen = Arc::new(Seen::default());
    let remote_host = host();
    let remote = remote_host.open_session(remote_tools(&seen));
    let layer = layer_of(&remote);
    let pid = layer.process_id().expect("a running server");
    assert!(process_exists(pid));
    let local_host = host();
    let session = local_host.open_session(gateway(layer.clone()));
    drop(session);
    assert!(process_exists(pid), "the layer's handle keeps it");
    drop(layer);
    assert!(!process_exists(pid), "ended and reaped when dropped");

    // The client on its own does the same.
    let client = server_for(&remote).connect().unwrap();
    let pid = client.id();
    assert!(process_exists(pid));
    drop(client);
    assert!(!process_exists(pid));
}

#[test]
fn the_servers_stderr_lines_reach_the_hook_under_its_name() {
    let seen = Arc::new(Seen::default());
    let remote_host = host();
    let remote = remote_host.open_session(remote_tools(&seen));
    let log = EventLog::new();
    let local_host = ToolHost::bind(log.hook(HostConfig::default())).unwrap();
    let layer = layer_of(&remote);
    let pid = layer.process_id().expect("a running server");
    // Written at startup, before any session opened: kept for the first.
    let session = local_host.open_session(gateway(layer));
    session
        .client()
        .unwrap()
        .call_tool("remote_count", json!({"from": 1}))
        .unwrap();
    let lines = log.pick(|event| match event {
        Event::ServerStderr { server, line } => Some((server.clone(), line.clone())),
        _ => None,
    });
    assert_eq!(
        lines,
        [(
            "remote".to_owned(),
            format!("stdio_server: relaying as process {pid}")
        )],
        "one line, and nothing of stdout"
    );
}

#[test]
#[cfg_attr(windows, ignore = "Unix only: its failing commands are sh scripts")]
fn a_command_that_cannot_start_or_exits_at_once_fails_at_connect_saying_why() {
    let missing = McpServerLayer::stdio(
        "ghost",
        StdioServer::new("/nonexistent/toolhost-no-such-server"),
    )
    .connect();
    let err = missing.expect_err("no such program");
    assert!(matches!(err, ClientError::Spawn { .. }), "{err:?}");
    let text = err.to_string();
    assert!(
        text.contains("/nonexistent/toolhost-no-such-server") && text.contains("no such program"),
        "{text}"
    );

    // A program that starts but dies before answering: its last stderr
    // line is in the error.
    let dying = McpServerLayer::stdio(
        "broken",
        StdioServer::new("sh").args(["-c", "echo 'config file missing' >&2; exit 3"]),
    )
    .connect();
    let err = dying.expect_err("it exits");
    assert!(matches!(err, ClientError::Closed { .. }), "{err:?}");
    assert!(err.to_string().contains("config file missing"), "{err}");

    // A working server connects, so neither error is the client's own.
    let remote_host = host();
    let remote = remote_host.open_session(app());
    assert_eq!(layer_of(&remote).count(), 1);
}

#[test]
#[cfg_attr(windows, ignore = "Unix only: its command is an sh script")]
fn a_server_name_that_breaks_the_hosts_name_rule_or_a_zero_deadline_is_refused_before_anything_starts(
) {
    let dir = std::env::temp_dir().join(format!("toolhost-name-rule-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let marker = dir.join("started");
    let touching = || StdioServer::new("sh").args(["-c", &format!("touch '{}'", marker.display())]);
    for (name, why) in [
        ("my__srv", "__"),
        ("srv_", "ends with '_'"),
        ("9lives", "start with a letter"),
        ("has.dot", "'.'"),
    ] {
        let err = McpServerLayer::stdio(name, touching())
            .connect()
            .expect_err(name);
        assert!(matches!(err, ClientError::InvalidConfig { .. }), "{err:?}");
        assert!(err.to_string().contains(why), "{name}: {err}");
    }
    // So is a zero deadline, by `start` as by `connect`.
    for err in [
        McpServerLayer::stdio("ok-name", touching())
            .call_timeout(Duration::ZERO)
            .connect()
            .expect_err("zero deadline"),
        McpServerLayer::stdio("ok-name", touching())
            .call_timeout(Duration::ZERO)
            .start()
            .expect_err("zero deadline"),
    ] {
        assert!(matches!(err, ClientError::InvalidConfig { .. }), "{err:?}");
        assert!(
            err.to_string().contains("McpServerBuilder::call_timeout"),
            "{err}"
        );
    }
    assert!(!marker.exists(), "no command was started");
    // The same command under a valid name is started (and fails, as it
    // speaks no MCP).
    let err = McpServerLayer::stdio("ok-name", touching())
        .connect()
        .expect_err("not an MCP server");
    assert!(matches!(err, ClientError::Closed { .. }), "{err:?}");
    assert!(marker.exists(), "started");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_servers_question_reaches_the_agent_that_declared_the_capability() {
    let remote_host = host();
    let remote = remote_host.open_session(
        StaticSurface::new()
            .tool(Tool::new("greet", "Asks a name."), |_, ctx| {
                let form = json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]});
                match ctx.elicit("Your name?", form) {
                    Ok(Elicitation::Accept(answer)) => {
                        ToolOutcome::text(format!("Hello, {}!", answer["name"]))
                    }
                    Ok(_) => ToolOutcome::declined("no name"),
                    Err(err) => ToolOutcome::declined(format!("could not ask: {err}")),
                }
            })
            .unwrap(),
    );
    let local_host = host();
    let session = local_host.open_session(gateway(layer_of(&remote)));
    let mut asking = session
        .client_builder()
        .era(Era::Stateful)
        .capabilities(json!({"elicitation": {}}))
        .connect()
        .unwrap();
    let mut asked = Vec::new();
    let result = asking
        .call_tool_with(
            "remote_greet",
            json!({}),
            CallOptions::new().on_request(|request| {
                asked.push(request.params["message"].clone());
                Ok(json!({"action": "accept", "content": {"name": "Ada"}}))
            }),
        )
        .unwrap();
    assert_eq!(result.text(), "Hello, \"Ada\"!");
    assert_eq!(asked, [json!("Your name?")]);

    // An agent that declared nothing is not asked; the server hears a
    // refusal and its tool declines.
    let mut silent = session
        .client_builder()
        .era(Era::Stateful)
        .connect()
        .unwrap();
    let result = silent.call_tool("remote_greet", json!({})).unwrap();
    assert!(result.is_error, "{result:?}");
    assert!(result.text().contains("could not ask"), "{}", result.text());
}

#[test]
#[ignore = "needs the Python SDK: bash tests/interop/python_server/run.sh"]
fn the_python_sdk_server_is_bridged_over_stdio_beside_the_local_tools() {
    let command = toolhost_tests::python_sdk_stdio_server();
    let log = EventLog::new();
    let layer = McpServerLayer::stdio("py", StdioServer::new(&command[0]).args(&command[1..]))
        .connect()
        .unwrap_or_else(|err| panic!("{command:?}: {err}"));
    let pid = layer.process_id().expect("a running server");
    let local_host = ToolHost::bind(log.hook(HostConfig::default())).unwrap();
    let session = local_host.open_session(gateway(layer));
    check_python_sdk_bridged(&mut session.client().unwrap(), "stdio");
    check_python_sdk_speaks_bridged(&session, "stdio", true);
    drop(session);
    wait_for(
        "the Python server to end with the session's surface",
        || !process_exists(pid),
    );
}

#[test]
#[cfg_attr(windows, ignore = "Unix only: sh as the launcher, kill(1), /proc")]
fn a_launcher_killed_alone_is_a_server_gone_and_what_it_started_is_ended_too() {
    let seen = Arc::new(Seen::default());
    let remote_host = host();
    let remote = remote_host.open_session(remote_tools(&seen));
    let log = EventLog::new();
    let local_host = ToolHost::bind(log.hook(HostConfig::default())).unwrap();
    // `sh` starts the server as its child and waits for it, as `npx`
    // does: killing `sh` alone leaves the server running on the pipes.
    let launcher = StdioServer::new("sh")
        .args(["-c", "\"$0\"; true", env!("CARGO_BIN_EXE_stdio_server")])
        .env(URL_VAR, remote.url())
        .env(AUTHORIZATION_VAR, remote.authorization());
    let layer = McpServerLayer::stdio("remote", launcher)
        .refresh_every(None)
        .connect()
        .unwrap();
    let sh = layer.process_id().expect("a running launcher");
    let session = local_host.open_session(gateway(layer));
    let servers = log.pick(|event| match event {
        Event::ServerStderr { line, .. } => line
            .strip_prefix("stdio_server: relaying as process ")
            .map(|pid| pid.parse::<u32>().unwrap()),
        _ => None,
    });
    let server = servers[0];
    assert_ne!(server, sh, "the server is the launcher's child");

    let result = kill_during_a_call(&session, &seen, sh);
    assert!(result.is_error, "{result:?}");
    assert!(result.text().contains("unavailable"), "{}", result.text());
    let faults = faults(&log);
    assert!(
        faults
            .iter()
            .any(|m| m.contains(&format!("process {sh} exited")) && m.contains("SIGKILL")),
        "{faults:?}"
    );
    wait_for("the orphaned server to be ended", || {
        !process_exists(server)
    });
}

#[test]
fn a_question_the_stdio_server_withdraws_is_withdrawn_from_the_agent_and_an_answered_one_is_not() {
    // The remote's deadline passes while its question waits: its host
    // cancels the question on the call's stream, the relay writes that to
    // its stdout, and the layer withdraws the question it relayed.
    let (_remote_host, remote, asked) = asking_remote(Duration::from_millis(1500));
    check_withdrawal_relayed(layer_of(&remote), &asked);
}

#[test]
fn a_log_message_that_belongs_to_no_call_reaches_the_hook_under_the_servers_name() {
    let trace = std::env::temp_dir().join(format!(
        "toolhost-bridge-stdio-{}-logs.log",
        std::process::id()
    ));
    // The scripted server logs once as soon as it is initialized, with no
    // call in flight, and once inside each `ask_back` call.
    let scripted = StdioServer::new(env!("CARGO_BIN_EXE_stdio_server"))
        .arg("--scripted")
        .arg(&trace);
    let layer = McpServerLayer::stdio("scripted", scripted)
        .refresh_every(None)
        .connect()
        .unwrap();
    let log = EventLog::new();
    let local_host = ToolHost::bind(log.hook(HostConfig::default())).unwrap();
    // Sent before any session opened: kept for the first one's hook.
    let session = local_host.open_session(gateway(layer));
    let server_logs = || {
        log.pick(|event| match event {
            Event::ServerLog {
                server,
                level,
                logger,
                data,
            } => Some((server.clone(), *level, logger.clone(), data.clone())),
            _ => None,
        })
    };
    wait_for("the server's log message in the hook", || {
        !server_logs().is_empty()
    });
    // A call's own message goes to its agent (none asked for logs here),
    // not to the hook.
    session
        .client()
        .unwrap()
        .call_tool("scripted_ask_back", json!({}))
        .unwrap();
    let _ = std::fs::remove_file(&trace);
    assert_eq!(
        server_logs(),
        [(
            "scripted".to_owned(),
            LogLevel::Notice,
            Some("scripted".to_owned()),
            json!("initialized; no call in flight"),
        )]
    );
    let shown = log
        .all()
        .into_iter()
        .find(|event| matches!(event, Event::ServerLog { .. }))
        .unwrap();
    assert_eq!(shown.level(), log::Level::Info);
    assert_eq!(
        shown.to_string(),
        "MCP server \"scripted\" logged at notice (scripted): initialized; no call in flight"
    );
}

/// What one generic helper sees through [`McpClient`]: the server answers
/// `ping`, the tools it lists, and what `count` and an unknown tool came to.
fn through_the_trait(client: &mut impl McpClient) -> (Vec<String>, ToolResult, ToolResult) {
    client.ping().unwrap();
    let names = client
        .list_tools()
        .unwrap()
        .iter()
        .map(|tool| tool.name().to_owned())
        .collect();
    let counted = client.call_tool("count", json!({"from": 1})).unwrap();
    let unknown = client.call_tool("no_such_tool", json!({})).unwrap();
    (names, counted, unknown)
}

#[test]
fn both_clients_list_and_call_through_one_trait_and_only_the_owned_stdio_client_ends_its_server_on_close(
) {
    let seen = Arc::new(Seen::default());
    let remote_host = host();
    let remote = remote_host.open_session(remote_tools(&seen));
    let mut http = remote
        .client_builder()
        .era(Era::Stateful)
        .connect()
        .unwrap();
    let stdio = server_for(&remote).connect().unwrap();
    let (http_names, http_counted, http_unknown) = through_the_trait(&mut http);
    // A client shared between threads is used through `&StdioClient`.
    let (stdio_names, stdio_counted, stdio_unknown) = through_the_trait(&mut &stdio);
    assert_eq!(http_names, ["count", "wait"]);
    assert_eq!(stdio_names, http_names);
    for counted in [&http_counted, &stdio_counted] {
        assert!(!counted.is_error, "{counted:?}");
        assert_eq!(
            counted.structured_content,
            Some(json!({"from": 1, "to": 3}))
        );
    }
    for unknown in [&http_unknown, &stdio_unknown] {
        assert!(
            unknown.is_error && unknown.text().contains("Unknown tool"),
            "{unknown:?}"
        );
    }
    assert_eq!(
        seen.counted.load(Ordering::SeqCst),
        2,
        "each client's call ran once"
    );

    // Closing a shared reference ends nothing; closing the client itself
    // ends its server, as dropping it does. (Whether the process is there
    // is read in /proc, so only where there is one.)
    let pid = stdio.id();
    McpClient::close(&stdio).unwrap();
    assert!(stdio.closed().is_none());
    if cfg!(unix) {
        assert!(process_exists(pid));
    }
    assert_eq!(McpClient::revision(&stdio), stdio.revision());
    McpClient::close(stdio).unwrap();
    if cfg!(unix) {
        wait_for("the closed server's process to be reaped", || {
            !process_exists(pid)
        });
    }
    McpClient::close(http).unwrap();
    assert!(
        remote.client_builder().era(Era::Stateful).connect().is_ok(),
        "the host serves on after a client's close"
    );
}

/// A gateway of a layer named `remote` over a [`remote_tools`] server,
/// watched: what its hook heard, the list changes an agent of it hears
/// (keep-alives every second, so that [`count_list_changes`] keeps
/// reading), and a client that has listed the server's tools.
struct Watched {
    layer: McpServerLayer,
    log: EventLog,
    changes: Arc<AtomicUsize>,
    client: toolhost::client::Client,
    session: ToolSession,
    // Kept for the test's length.
    _hosts: (ToolHost, ToolSession, ToolHost),
}

impl Watched {
    /// The layer `layer_for` makes for the remote session, watched.
    fn start(layer_for: impl FnOnce(&ToolSession) -> McpServerLayer) -> Watched {
        let remote_host = host();
        let remote = remote_host.open_session(remote_tools(&Arc::default()));
        let layer = layer_for(&remote);
        let log = EventLog::new();
        let local_host =
            ToolHost::bind(log.hook(HostConfig::default().keep_alive(Duration::from_secs(1))))
                .unwrap();
        let session = local_host.open_session(gateway(layer.clone()));
        let changes = count_list_changes(&local_host, &session);
        let mut client = session.client().unwrap();
        assert_eq!(tool_names(&mut client), LISTED);
        Watched {
            layer,
            log,
            changes,
            client,
            session,
            _hosts: (remote_host, remote, local_host),
        }
    }

    fn statuses(&self) -> Vec<ServerStatus> {
        self.log.server_statuses("remote")
    }

    fn changes(&self) -> usize {
        self.changes.load(Ordering::SeqCst)
    }
}

/// Kills process `pid` (one this test started).
fn kill(pid: u32) {
    let killed = std::process::Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
}

/// The stdio server of `remote`, started through `sh`, which runs
/// `again` (a shell command) instead of starting it whenever the file
/// `marker` exists — as it does from the second start on, until the test
/// removes it.
fn started_once_then(remote: &ToolSession, marker: &Path, again: &str) -> StdioServer {
    let script = format!("if [ -e \"$1\" ]; then {again}; fi; : > \"$1\"; exec \"$0\"",);
    StdioServer::new("sh")
        .args([
            "-c",
            &script,
            env!("CARGO_BIN_EXE_stdio_server"),
            &marker.display().to_string(),
        ])
        .env(URL_VAR, remote.url())
        .env(AUTHORIZATION_VAR, remote.authorization())
}

/// A file name of this test's own in the temporary directory, not there yet.
fn fresh_marker(name: &str) -> std::path::PathBuf {
    let marker = std::env::temp_dir().join(format!("toolhost-{name}-{}", std::process::id()));
    let _ = std::fs::remove_file(&marker);
    marker
}

const LISTED: [&str; 3] = ["echo", "remote_count", "remote_wait"];

#[test]
#[cfg_attr(windows, ignore = "Unix only: kill(1)")]
fn a_killed_server_is_reported_gone_then_ready_and_a_quick_restart_never_changes_the_agents_list() {
    let mut watched = Watched::start(layer_of);
    let layer = watched.layer.clone();

    // Before: ready, never failed.
    assert_eq!(layer.status(), ServerStatus::Ready { tools: 2 });
    assert_eq!(layer.last_error(), None);
    assert_eq!(watched.statuses(), [ServerStatus::Ready { tools: 2 }]);

    // Killed while an agent keeps listing: every list it gets has the
    // server's tools.
    let first = layer.process_id().expect("a running server");
    let lists = thread::scope(|scope| {
        let sampler = scope.spawn(|| {
            let mut lister = watched.session.client().unwrap();
            let mut lists = Vec::new();
            let deadline = Instant::now() + Duration::from_secs(20);
            while watched.statuses().len() < 3 {
                assert!(Instant::now() < deadline, "{:?}", watched.statuses());
                lists.push(tool_names(&mut lister));
            }
            lists
        });
        kill(first);
        sampler.join().unwrap()
    });
    let statuses = watched.statuses();
    assert!(
        matches!(&statuses[1], ServerStatus::Gone { reason } if reason.contains("SIGKILL")),
        "{statuses:?}"
    );
    assert_eq!(
        statuses[2],
        ServerStatus::Ready { tools: 2 },
        "{statuses:?}"
    );
    assert!(!lists.is_empty() && lists.iter().all(|list| list == &LISTED));

    // After: a new process, ready again, the death kept as the last error.
    assert_eq!(layer.status(), ServerStatus::Ready { tools: 2 });
    assert!(layer.process_id().is_some_and(|pid| pid != first));
    let error = layer.last_error().expect("the death is kept");
    assert!(error.contains("SIGKILL"), "{error}");
    assert_eq!(tool_names(&mut watched.client), LISTED);
    let counted = watched
        .client
        .call_tool("remote_count", json!({"from": 1}))
        .unwrap();
    assert_eq!(
        counted.structured_content,
        Some(json!({"from": 1, "to": 3}))
    );
    // A list change would have been sent before the layer said it was
    // ready; a moment more lets one on its way arrive.
    thread::sleep(Duration::from_millis(200));
    assert_eq!(watched.changes(), 0, "the agent's list changed");
    assert_eq!(watched.statuses().len(), 3);
    wait_for("the killed server to be reaped", || !process_exists(first));
}

#[test]
#[cfg_attr(windows, ignore = "Unix only: sh as the launcher, kill(1)")]
fn a_killed_server_that_cannot_start_again_takes_its_tools_off_the_list_until_it_is_back() {
    let marker = fresh_marker("refuses");
    let mut watched = Watched::start(|remote| {
        McpServerLayer::stdio(
            "remote",
            started_once_then(remote, &marker, "echo refusing to start again >&2; exit 3"),
        )
        .refresh_every(None)
        .reconnect_backoff(Duration::from_millis(200), Duration::from_millis(400))
        .connect()
        .unwrap()
    });
    let layer = watched.layer.clone();
    assert_eq!(layer.last_error(), None);

    kill(layer.process_id().expect("a running server"));
    wait_for("the restart failed", || {
        watched
            .statuses()
            .iter()
            .any(|status| matches!(status, ServerStatus::Failed { .. }))
    });
    // Off the list, and the agent was told; the layer says why.
    assert_eq!(tool_names(&mut watched.client), ["echo"]);
    wait_for("the agent told", || watched.changes() >= 1);
    assert!(matches!(
        layer.status(),
        ServerStatus::Failed { .. } | ServerStatus::Reconnecting { .. }
    ));
    let error = layer.last_error().unwrap();
    assert!(error.contains("refusing to start again"), "{error}");
    let refused = watched
        .client
        .call_tool("remote_count", json!({"from": 1}))
        .unwrap();
    assert!(refused.is_error, "an unlisted tool was called");

    // It can start again: back on the list, and the agent told again.
    std::fs::remove_file(&marker).unwrap();
    wait_for("back", || {
        watched.statuses().last() == Some(&ServerStatus::Ready { tools: 2 })
    });
    assert_eq!(tool_names(&mut watched.client), LISTED);
    wait_for("the agent told again", || watched.changes() >= 2);
    let statuses = watched.statuses();
    assert_eq!(
        statuses[0],
        ServerStatus::Ready { tools: 2 },
        "{statuses:?}"
    );
    assert!(
        matches!(&statuses[1], ServerStatus::Gone { reason } if reason.contains("SIGKILL")),
        "{statuses:?}"
    );
    assert!(
        matches!(&statuses[2], ServerStatus::Failed { reason, retry_in }
            if reason.contains("refusing") && *retry_in == Duration::from_millis(200)),
        "{statuses:?}"
    );
    // Then attempts from the second on (the restart made at once was the
    // first), each failure but the last followed by the next.
    let retries = &statuses[3..statuses.len() - 1];
    for (n, pair) in retries.chunks(2).enumerate() {
        let attempt = u32::try_from(n).unwrap() + 2;
        assert_eq!(
            pair[0],
            ServerStatus::Reconnecting { attempt },
            "{statuses:?}"
        );
        if let Some(failed) = pair.get(1) {
            assert!(
                matches!(failed, ServerStatus::Failed { .. }),
                "{statuses:?}"
            );
        }
    }
    assert_eq!(retries.len() % 2, 1, "{statuses:?}");
    assert!(layer.last_error().unwrap().contains("refusing"));
    let _ = std::fs::remove_file(&marker);
}

#[test]
#[cfg_attr(windows, ignore = "Unix only: sh as the launcher, kill(1)")]
fn a_killed_server_slower_to_start_again_than_the_grace_leaves_the_list_meanwhile() {
    let marker = fresh_marker("slow-restart");
    let mut watched = Watched::start(|remote| {
        McpServerLayer::stdio("remote", started_once_then(remote, &marker, "sleep 2"))
            .refresh_every(None)
            .connect()
            .unwrap()
    });
    let layer = watched.layer.clone();

    kill(layer.process_id().expect("a running server"));
    wait_for("reconnecting", || {
        matches!(layer.status(), ServerStatus::Reconnecting { .. })
    });
    assert_eq!(tool_names(&mut watched.client), ["echo"]);
    wait_for("the agent told", || watched.changes() >= 1);
    wait_for("back", || {
        layer.status() == ServerStatus::Ready { tools: 2 }
    });
    assert_eq!(tool_names(&mut watched.client), LISTED);
    wait_for("the agent told again", || watched.changes() >= 2);
    let statuses = watched.statuses();
    assert_eq!(statuses.len(), 4, "{statuses:?}");
    assert!(
        matches!(&statuses[1], ServerStatus::Gone { .. }),
        "{statuses:?}"
    );
    assert_eq!(
        statuses[2..],
        [
            ServerStatus::Reconnecting { attempt: 1 },
            ServerStatus::Ready { tools: 2 }
        ]
    );
    let _ = std::fs::remove_file(&marker);
}
