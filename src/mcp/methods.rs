//! The one table of the MCP methods this host answers: each row names the
//! method (spelled in [`Method`], the vocabulary's table of every method),
//! the eras the host serves it in, and the server capability it implies.
//!
//! Both eras dispatch through [`find`] and both capability answers
//! (`initialize`'s and `server/discover`'s) are read from [`METHODS`], so a
//! method is added by one row here and one arm for its [`Op`] in each era
//! that has it — the compiler's exhaustiveness check finds the arm that is
//! missing, where two hand-kept `match`es on strings and two hand-kept
//! capability objects could drift apart unnoticed.

use serde_json::{json, Map, Value};

use crate::model::jsonrpc::{RpcError, INVALID_PARAMS, METHOD_NOT_FOUND};
use crate::model::method::Method;

/// Which handler a method runs; each era matches on it exhaustively.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Op {
    /// `initialize` (answered before the MCP session is looked up).
    Initialize,
    /// `ping`.
    Ping,
    /// `logging/setLevel`.
    SetLogLevel,
    /// `tools/list`.
    ListTools,
    /// `tools/call`.
    CallTool,
    /// `server/discover`.
    Discover,
    /// `subscriptions/listen`.
    Listen,
    /// `prompts/list`: always empty, with the era's cache hints.
    ListPrompts,
    /// `resources/list`: always empty, with the era's cache hints.
    ListResources,
    /// `resources/templates/list`: always empty, with the era's cache hints.
    ListResourceTemplates,
    /// `resources/read`: refused, as no resource exists.
    ReadResource,
}

/// The eras the host serves a method in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Eras {
    /// 2024-11-05 to 2025-11-25 only (inside an MCP session).
    Stateful,
    /// 2026-07-28 only.
    Stateless,
    /// Every revision.
    Both,
}

impl Eras {
    /// Whether the method exists in the stateless era (`true`) or the
    /// stateful one (`false`).
    fn has(self, stateless: bool) -> bool {
        match self {
            Eras::Both => true,
            Eras::Stateful => !stateless,
            Eras::Stateless => stateless,
        }
    }
}

/// The capability a method implies: its key in `capabilities`, and the
/// object under it.
#[derive(Clone, Copy, Debug)]
pub(super) enum Capability {
    /// Implies none (lifecycle and utility methods).
    None,
    /// `"tools": {"listChanged": true}`: the host sends
    /// `notifications/tools/list_changed` when a bearer's surface changes.
    Tools,
    /// `"logging": {}`.
    Logging,
    /// `"prompts": {}`.
    Prompts,
    /// `"resources": {}`.
    Resources,
}

impl Capability {
    fn entry(self) -> Option<(&'static str, Value)> {
        match self {
            Capability::None => None,
            Capability::Tools => Some(("tools", json!({"listChanged": true}))),
            Capability::Logging => Some(("logging", Value::Object(Map::new()))),
            Capability::Prompts => Some(("prompts", Value::Object(Map::new()))),
            Capability::Resources => Some(("resources", Value::Object(Map::new()))),
        }
    }
}

/// One method the host answers.
#[derive(Debug)]
pub(super) struct Served {
    /// The method, as the vocabulary names it.
    pub(super) method: Method,
    /// Which handler runs it.
    pub(super) op: Op,
    /// The eras the host serves it in (within the revisions whose schema
    /// has it, which the vocabulary's row says).
    pub(super) eras: Eras,
    /// The capability it implies, advertised in the eras it is served in.
    pub(super) capability: Capability,
}

const fn row(method: Method, op: Op, eras: Eras, capability: Capability) -> Served {
    Served {
        method,
        op,
        eras,
        capability,
    }
}

/// Every method the host answers, hottest first: dispatch scans the table
/// in order.
pub(super) const METHODS: &[Served] = &[
    row(
        Method::CallTool,
        Op::CallTool,
        Eras::Both,
        Capability::Tools,
    ),
    row(
        Method::ListTools,
        Op::ListTools,
        Eras::Both,
        Capability::Tools,
    ),
    row(Method::Ping, Op::Ping, Eras::Stateful, Capability::None),
    row(
        Method::Initialize,
        Op::Initialize,
        Eras::Stateful,
        Capability::None,
    ),
    row(
        Method::SetLogLevel,
        Op::SetLogLevel,
        Eras::Stateful,
        Capability::Logging,
    ),
    row(
        Method::Discover,
        Op::Discover,
        Eras::Stateless,
        Capability::None,
    ),
    row(
        Method::Listen,
        Op::Listen,
        Eras::Stateless,
        Capability::None,
    ),
    // A tools-only host has no prompts or resources, and says so with
    // empty lists (see `nothing_to_offer`), in every revision, as it states
    // the capabilities: the official conformance suite's 2026-07-28
    // `caching` scenario (0.2.0-alpha.12) asks all three lists whatever the
    // capabilities say, and fails on METHOD_NOT_FOUND.
    row(
        Method::ListPrompts,
        Op::ListPrompts,
        Eras::Both,
        Capability::Prompts,
    ),
    row(
        Method::ListResources,
        Op::ListResources,
        Eras::Both,
        Capability::Resources,
    ),
    row(
        Method::ListResourceTemplates,
        Op::ListResourceTemplates,
        Eras::Both,
        Capability::Resources,
    ),
    row(
        Method::ReadResource,
        Op::ReadResource,
        Eras::Both,
        Capability::Resources,
    ),
];

/// The handler of `method` in the stateless era (`stateless`) or the
/// stateful one, or the error that answers it there: a method of the other
/// era only is named as such, any other is not offered.
pub(super) fn find(method: &str, stateless: bool) -> Result<Op, RpcError> {
    match METHODS.iter().find(|m| m.method.name() == method) {
        Some(m) if m.eras.has(stateless) => Ok(m.op),
        Some(_) if stateless => Err(RpcError::new(
            METHOD_NOT_FOUND,
            format!("{method:?} does not exist in 2026-07-28, which needs no handshake; send the request itself with _meta"),
        )),
        _ => Err(not_offered(method)),
    }
}

/// What a tools-only host answers a prompt or resource method with, in
/// every revision: an empty list, or no resource to read; `None` for
/// every other method.
pub(super) fn nothing_to_offer(op: Op) -> Option<Result<Value, RpcError>> {
    match op {
        Op::ListPrompts => Some(Ok(json!({"prompts": []}))),
        Op::ListResources => Some(Ok(json!({"resources": []}))),
        Op::ListResourceTemplates => Some(Ok(json!({"resourceTemplates": []}))),
        Op::ReadResource => Some(Err(RpcError::new(
            INVALID_PARAMS,
            "Resource not found: this server publishes no resources",
        ))),
        _ => None,
    }
}

/// The error for a method this tools-only server does not offer.
pub(super) fn not_offered(method: &str) -> RpcError {
    RpcError::new(
        METHOD_NOT_FOUND,
        format!("method {method:?} is not offered by this server, which serves tools only"),
    )
}

/// The `capabilities` object of the stateless era (`stateless`) or the
/// stateful one: the capabilities its methods imply.
pub(super) fn capabilities(stateless: bool) -> Value {
    let mut capabilities = Map::new();
    for method in METHODS.iter().filter(|m| m.eras.has(stateless)) {
        if let Some((key, value)) = method.capability.entry() {
            capabilities.insert(key.into(), value);
        }
    }
    Value::Object(capabilities)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::method::{Kind, Sender};
    use crate::model::Revision;

    #[test]
    fn each_era_advertises_exactly_the_capabilities_of_the_methods_it_serves() {
        // The same in every revision that has them: logging only where
        // `logging/setLevel` exists (up to 2025-11-25).
        assert_eq!(
            capabilities(false),
            json!({"tools": {"listChanged": true}, "logging": {}, "prompts": {}, "resources": {}})
        );
        assert_eq!(
            capabilities(true),
            json!({"tools": {"listChanged": true}, "prompts": {}, "resources": {}})
        );
        for era in [false, true] {
            for op in [
                Op::ListPrompts,
                Op::ListResources,
                Op::ListResourceTemplates,
            ] {
                assert!(matches!(nothing_to_offer(op), Some(Ok(_))), "{op:?}");
            }
            assert_eq!(find("prompts/list", era).ok(), Some(Op::ListPrompts));
        }
        assert!(nothing_to_offer(Op::CallTool).is_none());
    }

    #[test]
    fn a_method_of_one_era_only_is_not_found_in_the_other() {
        assert_eq!(find("logging/setLevel", false).ok(), Some(Op::SetLogLevel));
        let err = find("logging/setLevel", true).err().unwrap();
        assert_eq!(err.code, METHOD_NOT_FOUND);
        assert!(err.message.contains("does not exist in 2026-07-28"));
        assert!(find("nope", true)
            .err()
            .unwrap()
            .message
            .contains("serves tools only"));
    }

    #[test]
    fn every_method_is_served_once() {
        for (i, m) in METHODS.iter().enumerate() {
            assert!(
                METHODS[i + 1..]
                    .iter()
                    .all(|other| other.method != m.method),
                "{:?} twice",
                m.method
            );
        }
        assert!(METHODS.len() > 1);
    }

    #[test]
    fn the_host_serves_client_requests_only_in_revisions_that_have_them() {
        for served in METHODS {
            let row = served.method.row();
            assert_eq!(row.kind, Kind::Request, "{}", row.name);
            assert_ne!(row.sender, Sender::Server, "{}", row.name);
            for revision in Revision::ALL {
                if served.eras.has(revision.is_stateless()) {
                    assert!(
                        served.method.exists_in(revision),
                        "{} served in {revision}, whose schema lacks it",
                        row.name
                    );
                }
            }
        }
        // The server's own messages are never dispatched as requests.
        for method in [Method::Elicit, Method::LogMessage, Method::Cancelled] {
            assert!(find(method.name(), false).is_err(), "{method:?}");
            assert!(find(method.name(), true).is_err(), "{method:?}");
        }
    }
}
