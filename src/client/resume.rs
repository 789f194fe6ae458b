//! Picking up a response stream that ended before its response.
//!
//! From 2025-03-26 to 2025-11-25 a server may end the event stream of a
//! request before the response and go on with the call: on purpose, to free
//! the connection during long work (it sends `retry` first; 2025-11-25 calls
//! this polling), or because a proxy or the network dropped it. Every event
//! carries an id, and a `GET` with the `Last-Event-ID` of the last one
//! received brings what came after it, then the rest of the call. The
//! official SDK clients resume so; this client does the same, within an MCP
//! session (`Mcp-Session-Id`), which is what a stream belongs to. In
//! 2026-07-28 a closed stream *is* the cancellation, so nothing is resumed.
//!
//! This file decides, with no I/O, whether to resume, how long to wait
//! first and when to give up; `wire.rs` waits and sends the requests.

use std::borrow::Cow;
use std::time::Duration;

use super::error::ClientError;
use super::rpc::{self, Mode};

/// The wait before reconnecting when the server named none: the
/// `EventSource` default of browsers and the SDKs' order of magnitude.
const DEFAULT_RETRY: Duration = Duration::from_secs(1);

/// The longest wait before reconnecting, whatever `retry` the server sent:
/// a misconfigured server should not park a call for hours.
const MAX_RETRY: Duration = Duration::from_secs(10);

/// Resumes from the same event before giving up. A resume that brings a new
/// event starts the count again, so a long call may resume any number of
/// times; one that brings nothing is tried a few times, as the SDKs do.
pub(crate) const MAX_ATTEMPTS: u32 = 3;

/// The resumption of one request's response stream.
#[derive(Debug)]
pub(crate) struct Resumption {
    /// The request's session allows resuming.
    allowed: bool,
    /// The event id the latest resume started after.
    from: String,
    /// Resumes started after `from`.
    attempts: u32,
}

/// The next resume: wait `delay`, then ask for what came after `last_event_id`.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Resume {
    pub(crate) delay: Duration,
    pub(crate) last_event_id: String,
}

impl Resumption {
    /// The resumption of a request sent in `mode` (`None`: `initialize`).
    pub(crate) fn new(mode: Option<&Mode>) -> Resumption {
        let allowed = matches!(
            mode,
            Some(Mode::Stateful { revision, session_id: Some(_) }) if revision.resumes_streams()
        );
        Resumption {
            allowed,
            from: String::new(),
            attempts: 0,
        }
    }

    /// The stream ended before the response — `ended` says how: a clean end
    /// or a fault of the connection — having received events up to
    /// `last_event_id`, and asked for `retry`. Returns the resume to try, or
    /// the error to give the caller: `ended` itself where nothing can be
    /// resumed, [`ClientError::ResumeFailed`] once resuming has failed
    /// [`MAX_ATTEMPTS`] times from the same event. `wait` is how long the
    /// call lets the server stay silent; the wait never exceeds it.
    pub(crate) fn next(
        &mut self,
        last_event_id: Option<&str>,
        retry: Option<Duration>,
        wait: Duration,
        ended: ClientError,
    ) -> Result<Resume, ClientError> {
        let Some(last_event_id) = last_event_id.filter(|_| self.allowed) else {
            return Err(ended);
        };
        if last_event_id != self.from {
            last_event_id.clone_into(&mut self.from);
            self.attempts = 0;
        }
        if self.attempts == MAX_ATTEMPTS {
            return Err(self.failed(ended));
        }
        self.attempts += 1;
        Ok(Resume {
            delay: retry.unwrap_or(DEFAULT_RETRY).min(MAX_RETRY).min(wait),
            last_event_id: last_event_id.to_owned(),
        })
    }

    /// The error for a resume that failed for good with `cause` (a refusal:
    /// trying again would be refused again).
    pub(crate) fn failed(&self, cause: ClientError) -> ClientError {
        ClientError::ResumeFailed {
            last_event_id: self.from.clone(),
            attempts: self.attempts,
            cause: Box::new(cause),
        }
    }
}

/// The headers of a resume `GET` in `mode`: the session's, and the event to
/// resume after. (The `Authorization` goes with every request anyway.)
pub(crate) fn headers<'a>(
    mode: Option<&'a Mode>,
    last_event_id: &'a str,
) -> Vec<(&'static str, Cow<'a, str>)> {
    let mut headers = rpc::mcp_headers(mode, "", None);
    headers.push(("Accept", Cow::Borrowed("text/event-stream")));
    headers.push(("Last-Event-ID", Cow::Borrowed(last_event_id)));
    headers
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Revision;

    fn stateful(revision: Revision, session_id: Option<&str>) -> Mode {
        Mode::Stateful {
            revision,
            session_id: session_id.map(str::to_owned),
        }
    }

    fn cut() -> ClientError {
        ClientError::malformed("the event stream ended before the response to request 1")
    }

    const WAIT: Duration = Duration::from_secs(60);

    #[test]
    fn only_a_stateful_session_from_2025_03_26_resumes_and_only_with_an_id() {
        let session = stateful(Revision::V2025_06_18, Some("s"));
        let resume = Resumption::new(Some(&session)).next(Some("1-1"), None, WAIT, cut());
        assert_eq!(
            resume.unwrap(),
            Resume {
                delay: DEFAULT_RETRY,
                last_event_id: "1-1".into()
            }
        );
        let never = [
            Some(Mode::Stateless),
            Some(stateful(Revision::V2025_11_25, None)),
            Some(stateful(Revision::V2024_11_05, Some("s"))),
            None,
        ];
        for mode in &never {
            let ended = Resumption::new(mode.as_ref()).next(Some("1-1"), None, WAIT, cut());
            assert!(
                matches!(ended, Err(ClientError::Malformed { .. })),
                "{mode:?}: {ended:?}"
            );
        }
        // Nothing received carried an id: nothing to resume after.
        let ended = Resumption::new(Some(&session)).next(None, None, WAIT, cut());
        assert!(matches!(ended, Err(ClientError::Malformed { .. })));
    }

    #[test]
    fn the_wait_is_the_servers_retry_capped_by_ten_seconds_and_the_call_timeout() {
        let session = stateful(Revision::V2025_11_25, Some("s"));
        let delay = |retry: Option<u64>, wait: Duration| {
            Resumption::new(Some(&session))
                .next(Some("1-0"), retry.map(Duration::from_millis), wait, cut())
                .unwrap()
                .delay
        };
        assert_eq!(delay(Some(20), WAIT), Duration::from_millis(20));
        assert_eq!(delay(Some(0), WAIT), Duration::ZERO);
        assert_eq!(delay(None, WAIT), Duration::from_secs(1));
        assert_eq!(delay(Some(u64::MAX), WAIT), MAX_RETRY);
        assert_eq!(
            delay(Some(5_000), Duration::from_millis(300)),
            Duration::from_millis(300)
        );
    }

    #[test]
    fn resumes_that_bring_nothing_new_give_up_after_three_and_new_events_reset_the_count() {
        let session = stateful(Revision::V2025_11_25, Some("s"));
        let mut resumption = Resumption::new(Some(&session));
        // A long call that keeps moving resumes as often as it needs.
        for seq in 0..10 {
            let id = format!("1-{seq}");
            assert!(resumption.next(Some(&id), None, WAIT, cut()).is_ok());
        }
        for _ in 1..MAX_ATTEMPTS {
            assert!(resumption.next(Some("1-9"), None, WAIT, cut()).is_ok());
        }
        let io = ClientError::Io(std::io::ErrorKind::ConnectionReset.into());
        let gave_up = resumption.next(Some("1-9"), None, WAIT, io).unwrap_err();
        match &gave_up {
            ClientError::ResumeFailed {
                last_event_id,
                attempts,
                cause,
            } => {
                assert_eq!((last_event_id.as_str(), *attempts), ("1-9", MAX_ATTEMPTS));
                assert!(matches!(**cause, ClientError::Io(_)));
            }
            other => panic!("{other:?}"),
        }
        let text = gave_up.to_string();
        assert!(
            text.contains("ended before the response")
                && text.contains("\"1-9\"")
                && text.contains("3 attempts"),
            "{text}"
        );
        // Giving up is for good: the same event is not tried again.
        assert!(resumption.next(Some("1-9"), None, WAIT, cut()).is_err());
    }

    #[test]
    fn a_refusal_names_the_status_and_the_event() {
        let session = stateful(Revision::V2025_11_25, Some("s"));
        let mut resumption = Resumption::new(Some(&session));
        resumption.next(Some("4-2"), None, WAIT, cut()).unwrap();
        let refused = resumption.failed(ClientError::Http {
            status: 400,
            body: "unknown stream".into(),
        });
        let text = refused.to_string();
        assert!(
            text.contains("resuming it after event \"4-2\" failed (1 attempt)")
                && text.contains("HTTP 400")
                && text.contains("unknown stream"),
            "{text}"
        );
        assert!(std::error::Error::source(&refused).is_some());
    }

    #[test]
    fn the_resume_get_carries_the_session_the_version_and_the_last_event_id() {
        let session = stateful(Revision::V2025_06_18, Some("abc"));
        assert_eq!(
            headers(Some(&session), "7-3"),
            [
                ("MCP-Protocol-Version", Cow::Borrowed("2025-06-18")),
                ("Mcp-Session-Id", Cow::Borrowed("abc")),
                ("Accept", Cow::Borrowed("text/event-stream")),
                ("Last-Event-ID", Cow::Borrowed("7-3")),
            ]
        );
    }
}
