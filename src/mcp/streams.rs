//! What the long-lived event streams say: the standalone `GET` stream of
//! the stateful revisions and 2026-07-28's `subscriptions/listen`.
//!
//! The runtime's stream hub only carries bytes; every message a stream
//! sends — its opening, the list-changed notification, its ending — is
//! decided here.

use serde_json::{json, Map, Value};

use crate::model::jsonrpc::{notification, success, RpcError, INVALID_PARAMS};
use crate::model::method::Method;

/// The `_meta` key that tags a listen stream's messages with its
/// subscription (the listen request's id).
pub(crate) const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// Which protocol a stream speaks.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum StreamKind {
    /// The stateful revisions' standalone stream (`GET /mcp`).
    Standalone,
    /// A 2026-07-28 `subscriptions/listen` stream.
    Listen {
        /// The listen request's id, which is the subscription id.
        id: Value,
        /// Whether the client asked for `toolsListChanged`.
        tools: bool,
    },
}

/// A long-lived stream to open: what it is, and the messages it sends first.
#[derive(Debug, PartialEq)]
pub(crate) struct StreamOpen {
    pub(crate) kind: StreamKind,
    pub(crate) first: Vec<Value>,
}

impl StreamKind {
    /// The list-changed notification for this stream, if it wants one.
    pub(crate) fn list_changed(&self) -> Option<Value> {
        match self {
            StreamKind::Standalone => Some(notification(Method::ToolsListChanged.name(), None)),
            StreamKind::Listen { id, tools: true } => Some(notification(
                Method::ToolsListChanged.name(),
                Some(json!({"_meta": {SUBSCRIPTION_ID: id}})),
            )),
            StreamKind::Listen { tools: false, .. } => None,
        }
    }

    /// The last message of the stream when the host ends it: a listen
    /// stream answers its request; a standalone stream just ends.
    pub(crate) fn ending(&self) -> Option<Value> {
        match self {
            StreamKind::Standalone => None,
            StreamKind::Listen { id, .. } => Some(success(
                id,
                json!({"resultType": "complete", "_meta": {SUBSCRIPTION_ID: id}}),
            )),
        }
    }
}

/// `subscriptions/listen`: a stream that first acknowledges what it will
/// deliver (of what was asked, only `toolsListChanged` exists here), then
/// carries `notifications/tools/list_changed` tagged with the subscription id.
pub(crate) fn listen(id: &Value, params: Option<&Value>) -> Result<StreamOpen, RpcError> {
    let Some(asked) = params
        .and_then(|p| p.get("notifications"))
        .and_then(Value::as_object)
    else {
        return Err(RpcError::new(
            INVALID_PARAMS,
            "subscriptions/listen needs params.notifications, an object such as {\"toolsListChanged\": true}",
        ));
    };
    let tools = asked.get("toolsListChanged") == Some(&Value::Bool(true));
    let mut honoured = Map::new();
    if tools {
        honoured.insert("toolsListChanged".into(), true.into());
    }
    let ack = notification(
        Method::ListenAcknowledged.name(),
        Some(json!({"_meta": {SUBSCRIPTION_ID: id}, "notifications": honoured})),
    );
    Ok(StreamOpen {
        kind: StreamKind::Listen {
            id: id.clone(),
            tools,
        },
        first: vec![ack],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listen_stream_acknowledges_only_what_exists_and_tags_every_message() {
        let open = listen(
            &json!(7),
            Some(&json!({"notifications": {"toolsListChanged": true, "promptsListChanged": true}})),
        )
        .unwrap();
        assert_eq!(
            open.first[0]["params"]["notifications"],
            json!({"toolsListChanged": true})
        );
        assert_eq!(open.first[0]["params"]["_meta"][SUBSCRIPTION_ID], 7);
        let changed = open.kind.list_changed().unwrap();
        assert_eq!(changed["params"]["_meta"][SUBSCRIPTION_ID], 7);
        assert_eq!(open.kind.ending().unwrap()["id"], 7);
        assert!(listen(&json!(1), Some(&json!({}))).is_err());
    }

    #[test]
    fn a_listen_stream_without_tools_gets_no_list_changed_and_standalone_ends_quietly() {
        let open = listen(&json!(1), Some(&json!({"notifications": {}}))).unwrap();
        assert_eq!(open.kind.list_changed(), None);
        assert!(StreamKind::Standalone.list_changed().is_some());
        assert_eq!(StreamKind::Standalone.ending(), None);
    }
}
