//! The stateless revision, 2026-07-28: no `initialize`, no `Mcp-Session-Id`;
//! every request carries its version, client and capabilities in
//! `params._meta`, and its method (and tool name) again in headers so that
//! intermediaries can route without reading the body.
//!
//! Era detection is per request ([`is_stateless`]); a request of this era is
//! checked in the order the revision's errors are layered — version
//! (`UNSUPPORTED_PROTOCOL_VERSION`), then required `_meta`
//! (`INVALID_PARAMS`), then headers against body (`HEADER_MISMATCH`) — and
//! then dispatched to the same tool code as the stateful
//! revisions, with results carrying `resultType` and the server's identity.

use std::sync::Arc;

use serde_json::{json, Value};

use super::lifecycle::Caller;
use super::methods::{self, Op};
use super::plan::{status_of, Plan, Step, Work};
use super::result_meta::{add_cache_hints, complete, complete_fields};
use super::{streams, tools, BearerState, Server};
use crate::model::http::{Headers, HttpResponse};
use crate::model::jsonrpc::{
    success, Message, RpcError, HEADER_MISMATCH, INVALID_PARAMS, INVALID_REQUEST,
    UNSUPPORTED_PROTOCOL_VERSION,
};
use crate::model::meta::{RequestMeta, META_CAPABILITIES, META_LOG_LEVEL, META_VERSION};
use crate::model::method::Method;
use crate::model::params::decode_header;
use crate::model::{LogLevel, Revision};

/// Whether a POST body of one message, whose `params._meta` is given, is
/// stateless-era traffic (a batch never is). Without an
/// `Mcp-Session-Id`: its `_meta` carries `io.modelcontextprotocol/*` keys, or
/// its `MCP-Protocol-Version` header names anything but a handshake-era
/// revision. With one: only when `_meta` names 2026-07-28 (the stray session
/// id is then ignored); a legacy client that adds `_meta` inside its MCP
/// session stays on the stateful path.
pub(crate) fn is_stateless(meta: &RequestMeta, headers: &Headers) -> bool {
    let meta_version = meta
        .protocol_version
        .as_ref()
        .and_then(Value::as_str)
        .and_then(Revision::parse);
    if headers.get("mcp-session-id").is_some() {
        return meta_version.is_some_and(Revision::is_stateless);
    }
    let modern_meta = meta.modern_keys;
    let handshake_header = headers
        .get("mcp-protocol-version")
        .map(|h| Revision::parse(h).is_some_and(|r| !r.is_stateless()));
    modern_meta || handshake_header == Some(false)
}

fn unsupported_version(requested: &str) -> RpcError {
    let supported = Revision::supported();
    let mut error = RpcError::new(
        UNSUPPORTED_PROTOCOL_VERSION,
        format!(
            "protocol version {requested:?} is not served statelessly; send 2026-07-28 in _meta, or initialize for {}",
            supported[..supported.len() - 1].join(", ")
        ),
    );
    error.data = Some(json!({"supported": supported, "requested": requested}));
    error
}

fn mismatch(message: String) -> RpcError {
    RpcError::new(HEADER_MISMATCH, message)
}

/// Checks `_meta`, headers and version, in the order the revision layers
/// its errors; returns who is calling.
fn check(
    method: &str,
    params: Option<&Value>,
    meta: &RequestMeta,
    headers: &Headers,
) -> Result<Caller, RpcError> {
    let meta_version = meta.protocol_version.as_ref().and_then(Value::as_str);
    let capabilities = meta.client_capabilities.as_ref().filter(|c| c.is_object());
    let (Some(requested), Some(capabilities)) = (meta_version, capabilities) else {
        return Err(RpcError::new(
            INVALID_PARAMS,
            format!("a 2026-07-28 request needs params._meta with {META_VERSION:?} (a string) and {META_CAPABILITIES:?} (an object)"),
        ));
    };
    match headers.get("mcp-protocol-version").map(str::trim) {
        Some(header) if header == requested => {}
        Some(header) => {
            return Err(mismatch(format!(
                "the MCP-Protocol-Version header {header:?} does not match _meta {META_VERSION} {requested:?}"
            )))
        }
        None => {
            return Err(mismatch(
                "the MCP-Protocol-Version header is required in 2026-07-28".into(),
            ))
        }
    }
    if Revision::parse(requested) != Some(Revision::V2026_07_28) {
        return Err(unsupported_version(requested));
    }
    match headers.get("mcp-method").map(decode_header) {
        Some(Some(header)) if header == method => {}
        Some(_) => {
            return Err(mismatch(format!(
                "the Mcp-Method header does not match the body's method {method:?}"
            )))
        }
        None => {
            return Err(mismatch(
                "the Mcp-Method header is required in 2026-07-28".into(),
            ))
        }
    }
    if method == Method::CallTool.name() {
        let name = params.and_then(|p| p.get("name")).and_then(Value::as_str);
        match (headers.get("mcp-name").map(decode_header), name) {
            (Some(Some(header)), Some(name)) if header == name => {}
            (None, _) => {
                return Err(mismatch(
                    "the Mcp-Name header (the tool's name) is required for tools/call".into(),
                ))
            }
            _ => {
                return Err(mismatch(
                    "the Mcp-Name header does not match params.name".into(),
                ))
            }
        }
    }
    let log_level = match &meta.log_level {
        None => None,
        Some(level) => Some(level.as_str().and_then(LogLevel::parse).ok_or_else(|| {
            RpcError::new(
                INVALID_PARAMS,
                format!("{META_LOG_LEVEL} must be one of {}", LogLevel::names()),
            )
        })?),
    };
    Ok(Caller {
        revision: Revision::V2026_07_28,
        client: meta.client_info.clone(),
        capabilities: Arc::new(capabilities.clone()),
        session_id: None,
        log_level,
    })
}

/// The `server/discover` result.
fn discover(server: &Server) -> Value {
    let mut result = json!({
        "supportedVersions": Revision::supported(),
        "capabilities": methods::capabilities(true),
        "ttlMs": server.tools_cache.ttl_ms,
        "cacheScope": server.tools_cache.scope.as_str(),
    });
    if let Some(instructions) = &server.instructions {
        result["instructions"] = instructions.clone().into();
    }
    result
}

/// Plans one stateless-era POST body.
pub(super) fn post(
    server: &Server,
    session: &dyn BearerState,
    headers: &Headers,
    message: Message,
) -> Plan {
    let (id, method, params, meta) = match message {
        Message::Request {
            id,
            method,
            params,
            meta,
        } => (id, method, params, meta),
        Message::Notification { .. } => return Plan::Respond(HttpResponse::empty(202)),
        Message::Result { id, .. } | Message::Error { id: Some(id), .. } => {
            let error = RpcError::new(
                INVALID_REQUEST,
                format!("a 2026-07-28 server sends no requests, so no response (id {id}) is awaited; answer input requests in the retried call's inputResponses"),
            );
            return Plan::Respond(server.refuse(400, None, &error));
        }
        Message::Invalid(invalid) => {
            return Plan::Respond(server.refuse(400, invalid.id.as_ref(), &invalid.error))
        }
        // `classify_envelope` lets through only errors with an id.
        Message::Error { id: None, .. } => return Plan::Respond(HttpResponse::empty(202)),
    };
    let refuse =
        |error: RpcError| Plan::Respond(server.refuse(status_of(&error), Some(&id), &error));
    let caller = match check(&method, params.as_ref(), RequestMeta::of(&meta), headers) {
        Ok(caller) => caller,
        Err(error) => return refuse(error),
    };
    let op = match methods::find(&method, true) {
        Ok(op) => op,
        Err(error) => return refuse(error),
    };
    let result = match op {
        Op::Listen => {
            return match streams::listen(&id, params.as_ref()) {
                Ok(open) => Plan::Stream(open),
                Err(error) => refuse(error),
            }
        }
        Op::CallTool => {
            return match tools::plan(server, session, &caller, &id, params, meta, Some(headers)) {
                Ok(plan) => Plan::Work(Work {
                    caller,
                    steps: vec![Step::Call(plan)],
                    batch: false,
                    resumable: None,
                }),
                Err(Ok(result)) => Plan::Respond(HttpResponse::json(
                    200,
                    &success(&id, complete(server, result)),
                )),
                Err(Err(error)) => refuse(error),
            }
        }
        Op::Discover => Ok(discover(server)),
        Op::ListTools => {
            return match tools::list(server, session, caller.revision, params.as_ref()) {
                Ok(mut list) => {
                    add_cache_hints(server, &mut list.more);
                    complete_fields(server, &mut list.more);
                    Plan::Respond(HttpResponse::json_text(200, list.reply(&id).into_text()))
                }
                Err(error) => refuse(error),
            }
        }
        Op::ListPrompts | Op::ListResources | Op::ListResourceTemplates | Op::ReadResource => {
            methods::nothing_to_offer(op).unwrap_or_else(|| Err(methods::not_offered(&method)))
        }
        // The handshake-era methods never pass `methods::find` here.
        Op::Initialize | Op::Ping | Op::SetLogLevel => Err(methods::not_offered(&method)),
    };
    let cacheable = matches!(
        op,
        Op::ListPrompts | Op::ListResources | Op::ListResourceTemplates
    );
    match result {
        Ok(mut result) => {
            if let Value::Object(fields) = &mut result {
                if cacheable {
                    add_cache_hints(server, fields);
                }
            }
            Plan::Respond(HttpResponse::json(
                200,
                &success(&id, complete(server, result)),
            ))
        }
        Err(error) => refuse(error),
    }
}

/// The answer to `GET` or `DELETE` in the stateless era, which has neither
/// standalone streams nor sessions to end.
pub(super) fn method_not_allowed(server: &Server) -> HttpResponse {
    let error = RpcError::new(
        INVALID_REQUEST,
        "Method Not Allowed: 2026-07-28 has no sessions or standalone streams; POST each request",
    );
    let mut response = server.refuse(405, None, &error);
    response.headers.push(("Allow", "POST".into()));
    response
}

/// A JSON-RPC failure body, for tests of the checks.
#[cfg(test)]
fn check_error(method: &str, params: &Value, headers: &[(&str, &str)]) -> Option<(i64, Value)> {
    let headers = Headers::new(headers.iter().copied());
    let mut params = params.clone();
    let meta = RequestMeta::take_from(&mut params);
    check(method, Some(&params), &meta, &headers)
        .err()
        .map(|e| (e.code, crate::model::jsonrpc::failure(None, &e)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta() -> Value {
        json!({"_meta": {META_VERSION: "2026-07-28", META_CAPABILITIES: {}}})
    }

    const GOOD: [(&str, &str); 2] = [
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/list"),
    ];

    #[test]
    fn a_complete_request_passes_every_check() {
        assert_eq!(check_error("tools/list", &meta(), &GOOD), None);
    }

    #[test]
    fn each_rule_has_its_own_code() {
        let no_meta = check_error("tools/list", &json!({}), &GOOD).unwrap();
        assert_eq!(no_meta.0, INVALID_PARAMS);
        let old = json!({"_meta": {META_VERSION: "v999", META_CAPABILITIES: {}}});
        let same = [
            ("MCP-Protocol-Version", "v999"),
            ("Mcp-Method", "tools/list"),
        ];
        let (code, body) = check_error("tools/list", &old, &same).unwrap();
        assert_eq!(code, UNSUPPORTED_PROTOCOL_VERSION);
        assert_eq!(body["error"]["data"]["requested"], "v999");
        assert_eq!(
            check_error("tools/list", &old, &GOOD).unwrap().0,
            HEADER_MISMATCH
        );
        let header = [
            ("MCP-Protocol-Version", "2025-11-25"),
            ("Mcp-Method", "tools/list"),
        ];
        assert_eq!(
            check_error("tools/list", &meta(), &header).unwrap().0,
            HEADER_MISMATCH
        );
        let no_method = [("MCP-Protocol-Version", "2026-07-28")];
        assert_eq!(
            check_error("tools/list", &meta(), &no_method).unwrap().0,
            HEADER_MISMATCH
        );
        let wrong_method = [
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/call"),
        ];
        assert_eq!(
            check_error("tools/list", &meta(), &wrong_method).unwrap().0,
            HEADER_MISMATCH
        );
    }

    #[test]
    fn mcp_name_is_checked_for_tools_call_with_the_base64_sentinel_decoded() {
        let mut params = meta();
        params["name"] = "grüße".into();
        let encoded = format!(
            "=?base64?{}?=",
            crate::base64::base64_encode("grüße".as_bytes())
        );
        let headers = [
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", encoded.as_str()),
        ];
        assert_eq!(check_error("tools/call", &params, &headers), None);
        let wrong = [
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "other"),
        ];
        assert_eq!(
            check_error("tools/call", &params, &wrong).unwrap().0,
            HEADER_MISMATCH
        );
        let missing = [
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/call"),
        ];
        assert_eq!(
            check_error("tools/call", &params, &missing).unwrap().0,
            HEADER_MISMATCH
        );
    }

    #[test]
    fn era_detection_follows_meta_then_header() {
        let headers = |pairs: &[(&str, &str)]| Headers::new(pairs.iter().copied());
        let meta_of = |mut params: Value| RequestMeta::take_from(&mut params);
        let with_meta = &meta_of(meta());
        let plain = &meta_of(json!({}));
        assert!(is_stateless(with_meta, &headers(&[])));
        assert!(is_stateless(
            with_meta,
            &headers(&[("Mcp-Session-Id", "stray")])
        ));
        let other_namespaced = &meta_of(json!({"_meta": {"io.modelcontextprotocol/x": 1}}));
        assert!(is_stateless(other_namespaced, &headers(&[])));
        let progress_only = &meta_of(json!({"_meta": {"progressToken": 1}}));
        assert!(!is_stateless(progress_only, &headers(&[])));
        assert!(!is_stateless(plain, &headers(&[])));
        assert!(is_stateless(
            plain,
            &headers(&[("MCP-Protocol-Version", "2026-07-28")])
        ));
        assert!(!is_stateless(
            plain,
            &headers(&[("MCP-Protocol-Version", "2025-06-18")])
        ));
    }
}
