//! How the relay ends or goes on: a dropped session, lines that are not
//! messages, a client that writes everything and leaves, and a host process
//! that dies or exits.

use std::io::{self, BufRead, Write};
use std::sync::atomic::Ordering;
use std::sync::mpsc::{self, Receiver};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use toolhost::relay::Ending;
use toolhost_tests::schema::assert_valid;

use crate::pipes::Bridge;
use crate::{host, tools, Seen, PATIENCE};

#[test]
fn after_the_session_is_dropped_the_next_request_is_told_and_the_relay_ends() {
    let host = host();
    let session = host.open_session(tools(&Arc::default()));
    let mut bridge = Bridge::start(&session);
    bridge.initialize("2025-06-18", json!({}));
    let before = bridge.request(1, "tools/list", json!({}));
    assert!(before["result"].is_object(), "{before}");

    drop(session);
    bridge.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
    let told = bridge.response(&json!(2));
    assert_eq!(told["error"]["code"], -32000, "{told}");
    let message = told["error"]["message"]
        .as_str()
        .unwrap()
        .to_ascii_lowercase();
    assert!(message.contains("session has ended"), "{message}");
    for word in ["auth", "token", "bearer", "401", "login", "credential"] {
        assert!(!message.contains(word), "{word} in {message}");
    }
    assert_valid("2025-06-18", "JSONRPCError", &told);
    assert_eq!(bridge.ending(), Ending::SessionEnded);
    // It ended without waiting for its input to close.
    assert!(bridge.input.is_some());
}

#[test]
fn lines_that_are_not_messages_get_errors_and_the_relay_goes_on() {
    let host = host();
    let session = host.open_session(tools(&Arc::default()));
    let mut bridge = Bridge::start(&session);
    bridge.send_raw(b"this is not json\n");
    let error = bridge.next();
    assert_eq!(error["error"]["code"], -32700, "{error}");
    assert_eq!(error["id"], Value::Null);
    bridge.send_raw(b"\n  \n42\n");
    let error = bridge.next();
    assert_eq!(error["error"]["code"], -32600, "{error}");
    // And then it carries the next message as ever.
    let init = bridge.initialize("2025-06-18", json!({}));
    assert!(init["result"].is_object());
    bridge.close_input();
    assert_eq!(bridge.ending(), Ending::InputClosed);
}

#[test]
fn a_client_that_writes_everything_at_once_and_leaves_still_gets_its_answers() {
    let host = host();
    let seen = Arc::new(Seen::default());
    let session = host.open_session(tools(&seen));
    let mut bridge = Bridge::start(&session);
    let script = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "script", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": "scripted"}}}),
    ];
    let text: String = script.iter().map(|m| format!("{m}\n")).collect();
    bridge.send_raw(text.as_bytes());
    bridge.close_input();
    let init = bridge.response(&json!(1));
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18");
    // The call went in the session initialize opened, though it was
    // written before that answer came.
    let call = bridge.response(&json!(2));
    assert_eq!(call["result"]["content"][0]["text"], "scripted", "{call}");
    assert_eq!(seen.calls.load(Ordering::SeqCst), 1);
    assert_eq!(bridge.ending(), Ending::InputClosed);
}

/// A relay process (`stdio_server` with the relay's variables) in front of
/// a host process (`host_alone`): both real programs, so that the host can
/// die as an application does.
struct RelayProcess {
    relay: std::process::Child,
    to_relay: std::process::ChildStdin,
    lines: Receiver<String>,
}

impl RelayProcess {
    fn start(url: &str, authorization: &str) -> RelayProcess {
        use std::process::{Command, Stdio};
        use toolhost::relay::{AUTHORIZATION_VAR, URL_VAR};
        let mut relay = Command::new(env!("CARGO_BIN_EXE_stdio_server"))
            .env(URL_VAR, url)
            .env(AUTHORIZATION_VAR, authorization)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the relay");
        let to_relay = relay.stdin.take().expect("piped");
        let from_relay = relay.stdout.take().expect("piped");
        let (sender, lines) = mpsc::channel();
        thread::spawn(move || {
            for line in io::BufReader::new(from_relay).lines() {
                let Ok(line) = line else { return };
                if sender.send(line).is_err() {
                    return;
                }
            }
        });
        RelayProcess {
            relay,
            to_relay,
            lines,
        }
    }

    fn request(&mut self, message: &Value) -> Value {
        writeln!(self.to_relay, "{message}").expect("the relay reads");
        self.to_relay.flush().expect("flush");
        loop {
            let line = self.lines.recv_timeout(PATIENCE).expect("an answer");
            let answer: Value = serde_json::from_str(&line).expect("JSON");
            if answer.get("id") == message.get("id") {
                return answer;
            }
        }
    }

    /// The relay's exit status, once it has exited on its own.
    fn exit_code(&mut self) -> Option<i32> {
        let deadline = Instant::now() + PATIENCE;
        loop {
            if let Some(status) = self.relay.try_wait().expect("wait") {
                return status.code();
            }
            if Instant::now() > deadline {
                return None;
            }
            thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for RelayProcess {
    fn drop(&mut self) {
        let _ = self.relay.kill();
        let _ = self.relay.wait();
    }
}

#[test]
fn when_the_host_process_dies_or_exits_the_first_request_after_is_told_and_the_relay_exits_3() {
    use std::process::{Command, Stdio};
    for killed in [true, false] {
        let mut host = Command::new(env!("CARGO_BIN_EXE_host_alone"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the host");
        let mut said = String::new();
        io::BufReader::new(host.stdout.take().expect("piped"))
            .read_line(&mut said)
            .expect("the host's first line");
        let said: Value = serde_json::from_str(&said).expect("JSON");
        let mut relay = RelayProcess::start(
            said["url"].as_str().unwrap(),
            said["auth"].as_str().unwrap(),
        );
        let init = relay.request(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "bridge-test", "version": "1"}}}));
        assert!(init["result"].is_object(), "{init}");
        writeln!(
            relay.to_relay,
            "{}",
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
        )
        .unwrap();
        // While the host runs, a request is answered (over a kept
        // connection, which the host's death then breaks).
        let listed = relay.request(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
        assert!(listed["result"]["tools"].is_array(), "{listed}");
        assert_eq!(relay.relay.try_wait().unwrap(), None, "the relay runs");

        if killed {
            host.kill().expect("kill the host");
        } else {
            // host_alone serves until its stdin closes, then exits.
            drop(host.stdin.take());
        }
        host.wait().expect("the host ends");

        let told = relay.request(&json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}));
        assert_eq!(told["error"]["code"], -32000, "killed={killed}: {told}");
        let message = told["error"]["message"].as_str().unwrap();
        assert!(message.contains("session has ended"), "{message}");
        assert_eq!(relay.exit_code(), Some(3), "killed={killed}: exits at once");
    }
}
