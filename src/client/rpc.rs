//! The client's MCP messages, free of I/O: request bodies and headers for
//! each era, and what an arriving JSON-RPC message means for the request in
//! flight.
//!
//! Stateful (2024-11-05 … 2025-11-25): `initialize` offers
//! [`Revision::LATEST_STATEFUL`] unless told otherwise; later requests carry `Mcp-Session-Id` (when
//! the server issued one) and `MCP-Protocol-Version`. Stateless
//! (2026-07-28): every request carries the version, the client's
//! capabilities and identity in `params._meta`, and repeats the version, the
//! method and (for `tools/call`) the tool name in headers, so that proxies
//! can route without reading the body.

use std::borrow::Cow;

use serde_json::{json, Map, Value};

use super::error::ClientError;
use crate::base64::base64_encode;
use crate::model::jsonrpc::{self, Message, RpcError, UNSUPPORTED_PROTOCOL_VERSION};
use crate::model::{LogLevel, Revision};

/// The stateless revision this client speaks.
pub(crate) const STATELESS: Revision = Revision::V2026_07_28;

pub(crate) const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
pub(crate) const META_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
pub(crate) const META_CLIENT: &str = "io.modelcontextprotocol/clientInfo";
/// The `_meta` key of a 2026-07-28 request's log level.
const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
pub(crate) const META_SERVER: &str = "io.modelcontextprotocol/serverInfo";

/// Who the client says it is and what it can do.
#[derive(Clone, Debug)]
pub(crate) struct Identity {
    pub(crate) name: String,
    pub(crate) version: String,
    pub(crate) capabilities: Value,
    /// The revision `initialize` offers.
    pub(crate) offered: Revision,
    /// The least severe log messages the server is asked for, if any.
    pub(crate) log_level: Option<LogLevel>,
}

impl Identity {
    fn client_info(&self) -> Value {
        json!({"name": self.name, "version": self.version})
    }
}

/// The protocol state of a connected client.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// After `initialize`: the negotiated revision and the session id, if
    /// the server issued one.
    Stateful {
        revision: Revision,
        session_id: Option<String>,
    },
    /// 2026-07-28: everything per request.
    Stateless,
}

/// A JSON-RPC request body. In the stateless era `params._meta` gets the
/// version, capabilities and client; `progress_token` goes into `_meta` in
/// both eras.
pub(crate) fn request_body(
    mode: Option<&Mode>,
    identity: &Identity,
    id: u64,
    method: &str,
    mut params: Map<String, Value>,
    progress_token: Option<&Value>,
) -> Vec<u8> {
    let stateless = matches!(mode, Some(Mode::Stateless));
    if stateless || progress_token.is_some() {
        let meta = params
            .entry("_meta")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(meta) = meta {
            if stateless {
                meta.insert(META_VERSION.into(), STATELESS.as_str().into());
                meta.insert(META_CAPABILITIES.into(), identity.capabilities.clone());
                meta.insert(META_CLIENT.into(), identity.client_info());
                if let Some(level) = identity.log_level {
                    meta.insert(META_LOG_LEVEL.into(), level.as_str().into());
                }
            }
            if let Some(token) = progress_token {
                meta.insert("progressToken".into(), token.clone());
            }
        }
    }
    text(&jsonrpc::request(id, method, Value::Object(params)))
}

/// A JSON-RPC notification body.
pub(crate) fn notification_body(method: &str, params: Value) -> Vec<u8> {
    text(&jsonrpc::notification(method, Some(params)))
}

/// A message's JSON text, to send.
fn text(message: &Value) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    // Writing a Value into a Vec cannot fail.
    let _ = serde_json::to_writer(&mut out, message);
    out
}

/// The `initialize` params: the revision offered, the client's
/// capabilities and identity.
pub(crate) fn initialize_params(identity: &Identity) -> Map<String, Value> {
    let mut params = Map::new();
    params.insert("protocolVersion".into(), identity.offered.as_str().into());
    params.insert("capabilities".into(), identity.capabilities.clone());
    params.insert("clientInfo".into(), identity.client_info());
    params
}

/// The MCP headers of one request in `mode` (none before the mode is known,
/// that is for `initialize`).
pub(crate) fn mcp_headers<'a>(
    mode: Option<&'a Mode>,
    method: &'a str,
    tool: Option<&'a str>,
) -> Vec<(&'static str, Cow<'a, str>)> {
    match mode {
        None => Vec::new(),
        Some(Mode::Stateful {
            revision,
            session_id,
        }) => {
            let mut headers = vec![("MCP-Protocol-Version", Cow::Borrowed(revision.as_str()))];
            if let Some(id) = session_id {
                headers.push(("Mcp-Session-Id", Cow::Borrowed(id.as_str())));
            }
            headers
        }
        Some(Mode::Stateless) => {
            let mut headers = vec![
                ("MCP-Protocol-Version", Cow::Borrowed(STATELESS.as_str())),
                ("Mcp-Method", Cow::Borrowed(method)),
            ];
            if let Some(name) = tool {
                headers.push(("Mcp-Name", header_value(name)));
            }
            headers
        }
    }
}

fn is_token_char(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&byte)
}

/// A value for `Mcp-Name`: the name itself when it is an HTTP token, else
/// the `=?base64?…?=` sentinel around its UTF-8 bytes.
pub(crate) fn header_value(name: &str) -> Cow<'_, str> {
    if !name.is_empty() && name.bytes().all(is_token_char) {
        Cow::Borrowed(name)
    } else {
        Cow::Owned(format!("=?base64?{}?=", base64_encode(name.as_bytes())))
    }
}

/// What an arriving JSON-RPC message means for request `id`.
#[derive(Debug, PartialEq)]
pub(crate) enum Incoming {
    /// The answer to request `id`: a result, or the error object.
    Reply(Result<Value, RpcError>),
    /// A notification, such as `notifications/progress`.
    Notification { method: String, params: Value },
    /// A request from the server, such as `elicitation/create`, to answer
    /// with its `id` as sent.
    Request {
        id: Value,
        method: String,
        params: Value,
    },
    /// Something else: the answer to another id.
    Unrelated,
}

/// The client's error for a JSON-RPC error that came with HTTP `status`.
pub(crate) fn rpc_error(error: RpcError, status: u16) -> ClientError {
    ClientError::Rpc {
        status,
        code: error.code,
        message: error.message,
        data: error.data,
    }
}

/// Classifies one message that arrived while waiting for request `id`. An
/// error no request can be told from (`"id": null`, as for a body the
/// server could not parse) is the answer: nothing else is in flight on
/// this exchange.
pub(crate) fn classify(message: Value, id: u64) -> Result<Incoming, ClientError> {
    let ours = |answered: &Value| answered.as_u64() == Some(id);
    match Message::of(message) {
        Message::Request {
            id, method, params, ..
        } => Ok(Incoming::Request {
            id,
            method,
            params: match params {
                None | Some(Value::Null) => Value::Object(Map::new()),
                Some(params) => params,
            },
        }),
        Message::Notification { method, params } => Ok(Incoming::Notification {
            method,
            params: params.unwrap_or(Value::Null),
        }),
        Message::Result { id, result } if ours(&id) => Ok(Incoming::Reply(Ok(result))),
        Message::Error { id, error } if id.as_ref().is_none_or(ours) => {
            match RpcError::read(&error) {
                Some(fault) => Ok(Incoming::Reply(Err(fault))),
                None => Err(ClientError::malformed(format!(
                    "a JSON-RPC error needs an integer code and a message: {error}"
                ))),
            }
        }
        Message::Result { .. } | Message::Error { .. } => Ok(Incoming::Unrelated),
        Message::Invalid(invalid) => Err(ClientError::malformed(format!(
            "not a JSON-RPC message: {}",
            invalid.error.message
        ))),
    }
}

/// The verdict of the `server/discover` probe of `Era::Auto`.
#[derive(Debug, PartialEq)]
pub(crate) enum Probe {
    /// The server speaks 2026-07-28; the discover result.
    Stateless(Value),
    /// Anything else: fall back to `initialize`.
    Handshake,
}

/// Decides the era from the probe's outcome, as the official SDKs do: only
/// positive evidence of 2026-07-28 goes stateless; every protocol-level
/// refusal falls back to the handshake, except an
/// `UNSUPPORTED_PROTOCOL_VERSION` whose supported
/// list names no handshake revision (a modern-only server speaking some
/// other modern revision). Transport faults and a refused bearer are no
/// verdict on the era and are returned as they are.
pub(crate) fn probe_verdict(outcome: Result<Value, ClientError>) -> Result<Probe, ClientError> {
    match outcome {
        Ok(result) => {
            let modern = result
                .get("supportedVersions")
                .and_then(Value::as_array)
                .is_some_and(|v| v.iter().any(|v| v == STATELESS.as_str()));
            Ok(if modern {
                Probe::Stateless(result)
            } else {
                Probe::Handshake
            })
        }
        Err(ClientError::Rpc {
            code: UNSUPPORTED_PROTOCOL_VERSION,
            status,
            message,
            data,
        }) => {
            let supported: Option<Vec<&str>> = data
                .as_ref()
                .and_then(|d| d.get("supported"))
                .and_then(Value::as_array)
                .map(|list| list.iter().filter_map(Value::as_str).collect());
            let handshake_listed = supported.as_ref().is_none_or(|list| {
                list.iter()
                    .any(|v| Revision::parse(v).is_some_and(|r| !r.is_stateless()))
            });
            if handshake_listed {
                Ok(Probe::Handshake)
            } else {
                Err(ClientError::Rpc {
                    status,
                    code: UNSUPPORTED_PROTOCOL_VERSION,
                    message: format!(
                        "{message} (the server speaks none of the revisions this client does)"
                    ),
                    data,
                })
            }
        }
        Err(ClientError::Rpc { .. } | ClientError::Http { .. } | ClientError::Malformed { .. }) => {
            Ok(Probe::Handshake)
        }
        Err(other) => Err(other),
    }
}

/// Reads the revision an `initialize` that offered `offered` settled on.
pub(crate) fn negotiated_revision(
    result: &Value,
    offered: Revision,
) -> Result<Revision, ClientError> {
    let version = result
        .get("protocolVersion")
        .and_then(Value::as_str)
        .ok_or_else(|| ClientError::malformed("the initialize result has no protocolVersion"))?;
    Revision::parse(version)
        .filter(|r| !r.is_stateless())
        .ok_or_else(|| {
            ClientError::malformed(format!(
                "the server chose protocol version {version:?} at initialize, which this client does not speak (it offered {offered} and speaks 2024-11-05 and later)"
            ))
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::jsonrpc::{METHOD_NOT_FOUND, PARSE_ERROR};

    fn identity() -> Identity {
        Identity {
            name: "t".into(),
            version: "1".into(),
            capabilities: json!({}),
            offered: Revision::LATEST_STATEFUL,
            log_level: None,
        }
    }

    fn parse(bytes: &[u8]) -> Value {
        serde_json::from_slice(bytes).unwrap()
    }

    #[test]
    fn stateless_requests_carry_version_capabilities_and_client_in_meta() {
        let mut params = Map::new();
        params.insert("name".into(), "echo".into());
        let body = parse(&request_body(
            Some(&Mode::Stateless),
            &identity(),
            7,
            "tools/call",
            params,
            Some(&json!(7)),
        ));
        assert_eq!(body["id"], 7);
        assert_eq!(body["params"]["name"], "echo");
        let meta = &body["params"]["_meta"];
        assert_eq!(meta[META_VERSION], "2026-07-28");
        assert_eq!(meta[META_CAPABILITIES], json!({}));
        assert_eq!(meta[META_CLIENT], json!({"name": "t", "version": "1"}));
        assert_eq!(meta["progressToken"], 7);

        let stateful = Mode::Stateful {
            revision: Revision::V2025_11_25,
            session_id: None,
        };
        let body = parse(&request_body(
            Some(&stateful),
            &identity(),
            1,
            "tools/list",
            Map::new(),
            None,
        ));
        assert_eq!(body["params"], json!({}));
    }

    #[test]
    fn headers_follow_the_era() {
        let stateful = Mode::Stateful {
            revision: Revision::V2025_06_18,
            session_id: Some("abc".into()),
        };
        assert_eq!(
            mcp_headers(Some(&stateful), "tools/call", Some("echo")),
            [
                ("MCP-Protocol-Version", Cow::Borrowed("2025-06-18")),
                ("Mcp-Session-Id", Cow::Borrowed("abc"))
            ]
        );
        assert_eq!(
            mcp_headers(Some(&Mode::Stateless), "tools/call", Some("echo")),
            [
                ("MCP-Protocol-Version", Cow::Borrowed("2026-07-28")),
                ("Mcp-Method", Cow::Borrowed("tools/call")),
                ("Mcp-Name", Cow::Borrowed("echo"))
            ]
        );
        assert!(mcp_headers(None, "initialize", None).is_empty());
    }

    #[test]
    fn names_that_are_not_http_tokens_travel_base64_encoded() {
        assert_eq!(header_value("get_weather-v2.1"), "get_weather-v2.1");
        assert_eq!(header_value("grüße"), "=?base64?Z3LDvMOfZQ==?=");
        assert_eq!(header_value("a b"), "=?base64?YSBi?=");
        assert_eq!(header_value("ns/tool"), "=?base64?bnMvdG9vbA==?=");
        assert_eq!(header_value("=?base64?x?="), "=?base64?PT9iYXNlNjQ/eD89?=");
    }

    #[test]
    fn replies_notifications_and_strangers_are_told_apart() {
        assert_eq!(
            classify(
                json!({"jsonrpc": "2.0", "id": 3, "result": {"ok": true}}),
                3
            )
            .unwrap(),
            Incoming::Reply(Ok(json!({"ok": true})))
        );
        assert_eq!(
            classify(json!({"jsonrpc": "2.0", "id": 4, "result": {}}), 3).unwrap(),
            Incoming::Unrelated
        );
        assert_eq!(
            classify(json!({"jsonrpc": "2.0", "id": null, "error": {"code": PARSE_ERROR, "message": "parse"}}), 3).unwrap(),
            Incoming::Reply(Err(RpcError::new(PARSE_ERROR, "parse")))
        );
        assert_eq!(
            classify(
                json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"p": 1}}),
                3
            )
            .unwrap(),
            Incoming::Notification {
                method: "notifications/progress".into(),
                params: json!({"p": 1})
            }
        );
        assert_eq!(
            classify(
                json!({"jsonrpc": "2.0", "id": 9, "method": "sampling/createMessage"}),
                3
            )
            .unwrap(),
            Incoming::Request {
                id: json!(9),
                method: "sampling/createMessage".into(),
                params: json!({})
            }
        );
        assert_eq!(
            classify(
                json!({"jsonrpc": "2.0", "id": "ask-1", "method": "roots/list", "params": {"x": 1}}),
                3
            )
            .unwrap(),
            Incoming::Request {
                id: json!("ask-1"),
                method: "roots/list".into(),
                params: json!({"x": 1})
            }
        );
        assert!(classify(json!([]), 3).is_err());
        assert!(classify(json!({"jsonrpc": "2.0", "id": 3}), 3).is_err());
        assert!(classify(json!({"id": 3, "error": {"message": "no code"}}), 3).is_err());
    }

    fn rpc(code: i64, data: Option<Value>) -> Result<Value, ClientError> {
        Err(ClientError::Rpc {
            status: 400,
            code,
            message: "m".into(),
            data,
        })
    }

    #[test]
    fn the_probe_goes_stateless_only_on_positive_evidence() {
        let modern = json!({"supportedVersions": ["2025-11-25", "2026-07-28"]});
        assert_eq!(
            probe_verdict(Ok(modern.clone())).unwrap(),
            Probe::Stateless(modern)
        );
        assert_eq!(
            probe_verdict(Ok(json!({"supportedVersions": ["2025-11-25"]}))).unwrap(),
            Probe::Handshake
        );
        assert_eq!(
            probe_verdict(rpc(METHOD_NOT_FOUND, None)).unwrap(),
            Probe::Handshake
        );
        assert_eq!(
            probe_verdict(rpc(
                UNSUPPORTED_PROTOCOL_VERSION,
                Some(json!({"supported": ["2025-06-18"]}))
            ))
            .unwrap(),
            Probe::Handshake
        );
        assert_eq!(
            probe_verdict(rpc(UNSUPPORTED_PROTOCOL_VERSION, None)).unwrap(),
            Probe::Handshake
        );
        let http = Err(ClientError::Http {
            status: 405,
            body: String::new(),
        });
        assert_eq!(probe_verdict(http).unwrap(), Probe::Handshake);
    }

    #[test]
    fn the_probe_fails_on_a_disjoint_server_a_refused_bearer_and_a_dead_socket() {
        let disjoint = probe_verdict(rpc(
            UNSUPPORTED_PROTOCOL_VERSION,
            Some(json!({"supported": ["2027-01-01"]})),
        ));
        assert_eq!(
            disjoint.unwrap_err().rpc_code(),
            Some(UNSUPPORTED_PROTOCOL_VERSION)
        );
        let unauthorized = Err(ClientError::Unauthorized {
            www_authenticate: None,
            message: None,
        });
        assert!(matches!(
            probe_verdict(unauthorized),
            Err(ClientError::Unauthorized { .. })
        ));
        let io = Err(ClientError::Io(std::io::ErrorKind::ConnectionReset.into()));
        assert!(matches!(probe_verdict(io), Err(ClientError::Io(_))));
    }

    #[test]
    fn initialize_must_settle_on_a_handshake_revision_this_client_speaks() {
        assert_eq!(
            negotiated_revision(
                &json!({"protocolVersion": "2025-03-26"}),
                Revision::V2025_06_18
            )
            .unwrap(),
            Revision::V2025_03_26
        );
        for bad in [
            json!({}),
            json!({"protocolVersion": "2026-07-28"}),
            json!({"protocolVersion": "1999-01-01"}),
        ] {
            assert!(
                negotiated_revision(&bad, Revision::V2025_06_18).is_err(),
                "{bad}"
            );
        }
    }
}
