//! Calls that take a while: the client's timeout, cancelling a call, and
//! progress reported before the result.

use std::sync::atomic::Ordering;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::json;
use toolhost::client::{CallOptions, CancelHandle, ClientError, Era};

use crate::{client, host_with_tools, ERAS};

#[test]
fn a_silent_server_times_out_and_the_client_recovers_on_a_new_connection() {
    let (_host, session, _, _) = host_with_tools();
    for era in ERAS {
        let mut client = session
            .client_builder()
            .era(era)
            .timeout(Duration::from_millis(200))
            .connect()
            .unwrap();
        let err = client.call_tool("wait", json!({})).unwrap_err();
        assert!(
            matches!(err, ClientError::Timeout { waited } if waited == Duration::from_millis(200)),
            "{err:?}"
        );
        assert!(err.to_string().contains("ClientBuilder::timeout"), "{err}");
        let err = client
            .call_tool_with(
                "wait",
                json!({}),
                CallOptions::new().timeout(Duration::from_millis(50)),
            )
            .unwrap_err();
        assert!(
            matches!(err, ClientError::Timeout { waited } if waited == Duration::from_millis(50)),
            "{err:?}"
        );
        assert_eq!(
            client
                .call_tool("echo", json!({"text": "again"}))
                .unwrap()
                .text(),
            "again"
        );
    }
    // The waiting handlers stop when the session goes.
    drop(session);
}

#[test]
fn a_cancelled_call_returns_at_once_reaches_the_handler_and_leaves_the_client_usable() {
    let (_host, session, _, stopped) = host_with_tools();
    for (n, era) in ERAS.into_iter().enumerate() {
        let mut client = client(&session, era);
        let cancel = CancelHandle::new();
        let remote = cancel.clone();
        let canceller = thread::spawn(move || {
            thread::sleep(Duration::from_millis(100));
            remote.cancel();
        });
        let started = Instant::now();
        // Stateful cancels by notifications/cancelled; 2026-07-28 by closing
        // the stream, which the host notices when it next writes to it — so
        // that call asks for progress.
        let mut options = CallOptions::new().cancel_with(&cancel);
        if era == Era::Stateless {
            options = options.on_progress(|_| {});
        }
        let err = client
            .call_tool_with("wait", json!({}), options)
            .unwrap_err();
        canceller.join().unwrap();
        assert!(matches!(err, ClientError::Cancelled), "{era:?}: {err:?}");
        assert!(started.elapsed() < Duration::from_secs(20));
        let deadline = Instant::now() + Duration::from_secs(10);
        while stopped.load(Ordering::SeqCst) <= n && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(
            stopped.load(Ordering::SeqCst),
            n + 1,
            "{era:?}: the handler saw the cancel"
        );
        assert_eq!(
            client
                .call_tool("echo", json!({"text": "next"}))
                .unwrap()
                .text(),
            "next"
        );
    }
    drop(session);
}

#[test]
fn progress_streams_as_events_before_the_result_in_both_eras() {
    let (_host, session, hits, _) = host_with_tools();
    for era in ERAS {
        let mut client = client(&session, era);
        let mut reports = Vec::new();
        let result = client
            .call_tool_with(
                "count",
                json!({}),
                CallOptions::new().on_progress(|p| {
                    reports.push((p.progress, p.total, p.message.clone()));
                }),
            )
            .unwrap();
        assert_eq!(result.text(), "counted");
        assert_eq!(
            reports,
            [1.0, 2.0, 3.0].map(|n| (n, Some(3.0), Some(format!("step {n}")))),
            "{era:?}"
        );
        // Without a callback no progress is asked for, and none arrives.
        assert_eq!(
            client.call_tool("count", json!({})).unwrap().text(),
            "counted"
        );
        // The stream ended cleanly, so the same client goes on.
        assert_eq!(
            client
                .call_tool("echo", json!({"text": "after"}))
                .unwrap()
                .text(),
            "after"
        );
    }
    assert_eq!(hits.load(Ordering::SeqCst), 6);
}

#[test]
fn a_call_with_a_cancelled_handle_never_reaches_the_server() {
    let (_host, session, hits, _) = host_with_tools();
    let mut client = client(&session, Era::Stateless);
    let cancel = CancelHandle::new();
    cancel.cancel();
    let err = client
        .call_tool_with(
            "echo",
            json!({"text": "x"}),
            CallOptions::new().cancel_with(&cancel),
        )
        .unwrap_err();
    assert!(matches!(err, ClientError::Cancelled));
    assert_eq!(hits.load(Ordering::SeqCst), 0);
    assert_eq!(session.calls_served(), 0);
}

#[test]
fn a_progress_callback_does_not_disturb_a_call_the_server_answers_with_json() {
    let (_host, session, _, _) = host_with_tools();
    for era in ERAS {
        let mut reports = 0;
        let result = client(&session, era)
            .call_tool_with(
                "echo",
                json!({"text": "p"}),
                CallOptions::new().on_progress(|_| reports += 1),
            )
            .unwrap();
        assert_eq!(result.text(), "p");
        assert_eq!(reports, 0, "the host sends no progress for an instant tool");
    }
}
