//! The stateful lifecycle: `initialize`, the `Mcp-Session-Id` it mints, and
//! the table of MCP sessions opened under one bearer.
//!
//! An MCP session is the protocol's conversation (negotiated revision, client
//! identity); a bearer is the application's grant. One bearer may carry
//! several MCP sessions (an agent that reconnects opens a new one), bounded
//! by [`MAX_MCP_SESSIONS`]: past it the least recently used is forgotten,
//! so a client looping on `initialize` cannot grow memory.

use std::sync::Arc;

use serde_json::{json, Map, Value};

use super::Server;
use crate::hash::HostMap;
use crate::model::jsonrpc::RpcError;
use crate::model::{ClientInfo, LogLevel, Revision};

/// How many MCP sessions one bearer keeps at once.
pub(crate) const MAX_MCP_SESSIONS: usize = 64;

/// Who is asking, in which revision, able to do what: from `initialize` in
/// the stateful revisions, from each request's `_meta` in the stateless one.
/// The client's identity and capabilities are shared, not copied, with
/// every request of its MCP session and every call's context.
#[derive(Clone, Debug)]
pub(crate) struct Caller {
    pub(crate) revision: Revision,
    pub(crate) client: Option<Arc<ClientInfo>>,
    /// The client's declared capabilities (`{}` when none).
    pub(crate) capabilities: Arc<Value>,
    /// The `Mcp-Session-Id` (stateful revisions only).
    pub(crate) session_id: Option<String>,
    /// The least severe log level the client wants to hear; `None`: none.
    pub(crate) log_level: Option<LogLevel>,
}

/// What the host remembers of one MCP session.
#[derive(Clone, Debug)]
struct McpSession {
    caller: Caller,
    last_used: u64,
}

/// The MCP sessions of one bearer, by `Mcp-Session-Id`.
#[derive(Debug, Default)]
pub(crate) struct McpSessions {
    sessions: HostMap<String, McpSession>,
    clock: u64,
}

impl McpSessions {
    /// Opens a session under `id`, a fresh unguessable id the runtime
    /// drew.
    pub(crate) fn open(&mut self, id: String, mut caller: Caller) {
        if self.sessions.len() >= MAX_MCP_SESSIONS {
            let oldest = self
                .sessions
                .iter()
                .min_by_key(|(_, s)| s.last_used)
                .map(|(id, _)| id.clone());
            if let Some(oldest) = oldest {
                self.sessions.remove(&oldest);
            }
        }
        caller.session_id = Some(id.clone());
        self.clock += 1;
        self.sessions.insert(
            id,
            McpSession {
                caller,
                last_used: self.clock,
            },
        );
    }

    /// The caller of the session with this id, marking it as used.
    pub(crate) fn touch(&mut self, id: &str) -> Option<Caller> {
        self.clock += 1;
        let clock = self.clock;
        self.sessions.get_mut(id).map(|session| {
            session.last_used = clock;
            session.caller.clone()
        })
    }

    /// Sets the log level of a session (`logging/setLevel`); `false` when
    /// there is no such session.
    pub(crate) fn set_log_level(&mut self, id: &str, level: LogLevel) -> bool {
        self.sessions
            .get_mut(id)
            .map(|session| session.caller.log_level = Some(level))
            .is_some()
    }

    /// Ends a session; `false` when there was none.
    pub(crate) fn close(&mut self, id: &str) -> bool {
        self.sessions.remove(id).is_some()
    }
}

/// Reads `initialize` params: `protocolVersion` is required; `clientInfo` and
/// `capabilities` are kept when well-formed.
pub(crate) fn read_initialize(params: Option<&Value>) -> Result<Caller, RpcError> {
    let requested = params
        .and_then(|p| p.get("protocolVersion"))
        .and_then(Value::as_str)
        .ok_or_else(|| {
            RpcError::invalid_params(
                "initialize needs params.protocolVersion, a revision date string",
            )
        })?;
    let capabilities = params
        .and_then(|p| p.get("capabilities"))
        .filter(|c| c.is_object())
        .cloned()
        .unwrap_or_else(|| json!({}));
    Ok(Caller {
        revision: Revision::negotiate(requested),
        client: params
            .and_then(|p| p.get("clientInfo"))
            .and_then(ClientInfo::read)
            .map(Arc::new),
        capabilities: Arc::new(capabilities),
        session_id: None,
        log_level: None,
    })
}

/// The `initialize` result for the negotiated revision.
pub(crate) fn initialize_result(server: &Server, revision: Revision) -> Value {
    let mut server_info = Map::new();
    server_info.insert("name".into(), server.server_name.clone().into());
    server_info.insert("version".into(), server.server_version.clone().into());
    if revision.has_structured_content() {
        if let Some(title) = &server.server_title {
            server_info.insert("title".into(), title.clone().into());
        }
    }
    let mut result = Map::new();
    result.insert("protocolVersion".into(), revision.as_str().into());
    result.insert("capabilities".into(), super::methods::capabilities(false));
    result.insert("serverInfo".into(), Value::Object(server_info));
    if let Some(instructions) = &server.instructions {
        result.insert("instructions".into(), instructions.clone().into());
    }
    Value::Object(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caller() -> Caller {
        Caller {
            revision: Revision::V2025_11_25,
            client: None,
            capabilities: Arc::new(json!({})),
            session_id: None,
            log_level: None,
        }
    }

    #[test]
    fn the_least_recently_used_session_is_forgotten_past_the_bound() {
        let mut sessions = McpSessions::default();
        let ids = (0..=MAX_MCP_SESSIONS).map(|n| format!("s{n}"));
        let ids: Vec<String> = ids.collect();
        for id in &ids[..MAX_MCP_SESSIONS] {
            sessions.open(id.clone(), caller());
        }
        let (first, second) = (&ids[0], &ids[1]);
        assert!(sessions.touch(first).is_some());
        sessions.open(ids[MAX_MCP_SESSIONS].clone(), caller());
        assert!(sessions.touch(first).is_some(), "recently used survives");
        assert!(
            sessions.touch(second).is_none(),
            "least recently used is gone"
        );
    }

    #[test]
    fn initialize_without_a_protocol_version_is_invalid_params() {
        let err = read_initialize(Some(&json!({"capabilities": {}})))
            .err()
            .unwrap();
        assert_eq!(err.code, crate::model::jsonrpc::INVALID_PARAMS);
        assert!(err.message.contains("protocolVersion"));
    }
}
