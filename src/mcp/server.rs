//! Who the server says it is, what it tells caches, and where its events
//! go: the host-wide settings every protocol answer reads.

use serde_json::Value;

use crate::event::{emit, AuthRefusal, Event, EventHook};
use crate::model::http::HttpResponse;
use crate::model::jsonrpc::{failure, RpcError, SERVER_ERROR};

/// Host-wide protocol settings: the group of
/// [`HostConfig`](crate::HostConfig) that the core reads, held by the
/// config and handed to the runtime whole. Each field is named after its
/// setter, where its default is documented.
#[derive(Clone)]
pub(crate) struct Server {
    /// [`HostConfig::server_name`](crate::HostConfig::server_name).
    pub(crate) server_name: String,
    /// [`HostConfig::server_version`](crate::HostConfig::server_version).
    pub(crate) server_version: String,
    /// [`HostConfig::server_title`](crate::HostConfig::server_title).
    pub(crate) server_title: Option<String>,
    /// [`HostConfig::instructions`](crate::HostConfig::instructions).
    pub(crate) instructions: Option<String>,
    /// [`HostConfig::on_event`](crate::HostConfig::on_event).
    pub(crate) on_event: Option<EventHook>,
    /// [`HostConfig::tools_cache`](crate::HostConfig::tools_cache).
    pub(crate) tools_cache: CacheHint,
}

/// Who may reuse a cached `tools/list` (2026-07-28 `cacheScope`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CacheScope {
    /// Only the same authorization context: the same bearer. Right for
    /// toolhost, whose tool lists belong to one session.
    Private,
    /// Anyone, across authorization contexts.
    Public,
}

impl CacheScope {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            CacheScope::Private => "private",
            CacheScope::Public => "public",
        }
    }
}

/// The caching hint sent with `tools/list` and `server/discover` in
/// 2026-07-28.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CacheHint {
    pub(crate) ttl_ms: u64,
    pub(crate) scope: CacheScope,
}

impl Server {
    /// Reports an event to the hook, or to the `log` facade without one;
    /// the event is only built when someone may listen.
    pub(crate) fn emit(&self, event: impl FnOnce() -> Event) {
        emit(self.on_event.as_ref(), event);
    }

    /// A refusal: reported to the hook, then answered with a JSON-RPC error.
    pub(crate) fn refuse(&self, status: u16, id: Option<&Value>, error: &RpcError) -> HttpResponse {
        self.emit(|| Event::BadRequest {
            status,
            message: error.message.clone(),
        });
        HttpResponse::json(status, &failure(id, error))
    }

    /// The answer to a missing, malformed, unknown or revoked bearer: one
    /// body for all of them, so none can be told from another.
    pub(crate) fn unauthorized(&self, reason: AuthRefusal) -> HttpResponse {
        self.emit(|| Event::AuthRefused { reason });
        Server::unauthorized_response()
    }

    /// The 401 itself, reported to no one: for a caller that reports
    /// refusals its own way (the transport limits their rate).
    pub(crate) fn unauthorized_response() -> HttpResponse {
        let error = RpcError::new(
            SERVER_ERROR,
            "Unauthorized: send the session's bearer token as \"Authorization: Bearer <token>\"",
        );
        let mut response = HttpResponse::json(401, &failure(None, &error));
        response
            .headers
            .push(("WWW-Authenticate", "Bearer realm=\"toolhost\"".into()));
        response
    }
}

#[cfg(test)]
impl Server {
    /// A server for the core's unit tests, reporting events to `hook`.
    pub(crate) fn for_tests(hook: Option<EventHook>) -> Server {
        Server {
            server_name: "test".into(),
            server_version: "0.0.1".into(),
            server_title: Some("Test".into()),
            instructions: None,
            on_event: hook,
            tools_cache: CacheHint {
                ttl_ms: 60_000,
                scope: CacheScope::Private,
            },
        }
    }
}
