//! The JSON-RPC 2.0 envelope: classifying what arrived, and spelling replies.
//!
//! MCP ids are strings or integers, never null; a message whose id is
//! anything else is an invalid request, answered without an id.

use serde_json::{Map, Value};

/// Invalid JSON was received.
pub(crate) const PARSE_ERROR: i64 = -32700;
/// The JSON is not a valid request object.
pub(crate) const INVALID_REQUEST: i64 = -32600;
/// The method does not exist or is not available.
pub(crate) const METHOD_NOT_FOUND: i64 = -32601;
/// Invalid method parameters.
pub(crate) const INVALID_PARAMS: i64 = -32602;
/// Internal JSON-RPC error.
pub(crate) const INTERNAL_ERROR: i64 = -32603;
/// 2026-07-28: HTTP headers disagree with the body, or are missing.
pub(crate) const HEADER_MISMATCH: i64 = -32020;
/// 2026-07-28: the request needs a client capability it did not declare.
pub(crate) const MISSING_CLIENT_CAPABILITY: i64 = -32021;
/// 2026-07-28: the request's protocol version is not served.
pub(crate) const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;
/// Implementation-defined server error: transport-level refusals (missing
/// session id, bad bearer) that have no code of their own.
pub(crate) const SERVER_ERROR: i64 = -32000;

/// A JSON-RPC error object.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct RpcError {
    pub(crate) code: i64,
    pub(crate) message: String,
    pub(crate) data: Option<Value>,
}

impl RpcError {
    pub(crate) fn new(code: i64, message: impl Into<String>) -> RpcError {
        RpcError {
            code,
            message: message.into(),
            data: None,
        }
    }

    pub(crate) fn invalid_params(message: impl Into<String>) -> RpcError {
        RpcError::new(INVALID_PARAMS, message)
    }
}

/// A message from the client, classified.
#[derive(Debug, PartialEq)]
pub(crate) enum Message {
    /// A request: needs a response.
    Request {
        id: Value,
        method: String,
        params: Option<Value>,
    },
    /// A notification: no response.
    Notification {
        method: String,
        params: Option<Value>,
    },
    /// The client's response to a request of ours: its result, or its
    /// error object.
    Response {
        id: Value,
        outcome: Result<Value, Value>,
    },
}

/// Why a message could not be classified, with the id to answer when one was
/// readable.
#[derive(Debug, PartialEq)]
pub(crate) struct Invalid {
    pub(crate) id: Option<Value>,
    pub(crate) error: RpcError,
}

fn valid_id(id: &Value) -> bool {
    id.is_string() || id.is_i64() || id.is_u64()
}

/// The id of a single message, when it has a valid one: what a refusal
/// decided before classification should still answer to.
pub(crate) fn request_id(value: &Value) -> Option<&Value> {
    value.get("id").filter(|id| valid_id(id))
}

/// Classifies one JSON-RPC message.
pub(crate) fn classify(value: Value) -> Result<Message, Invalid> {
    let Value::Object(mut object) = value else {
        return Err(Invalid {
            id: None,
            error: RpcError::new(INVALID_REQUEST, "a JSON-RPC message must be a JSON object"),
        });
    };
    let id = object.remove("id");
    let readable_id = id.clone().filter(valid_id);
    let invalid = |message: &str| Invalid {
        id: readable_id.clone(),
        error: RpcError::new(INVALID_REQUEST, message),
    };
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(invalid("the message must carry \"jsonrpc\": \"2.0\""));
    }
    if let Some(id) = &id {
        if !valid_id(id) {
            return Err(invalid("an MCP request id must be a string or an integer"));
        }
    }
    match (object.remove("method"), id) {
        (Some(Value::String(method)), Some(id)) => {
            let params = object.remove("params");
            if params.as_ref().is_some_and(|p| !p.is_object()) {
                return Err(Invalid {
                    id: Some(id),
                    error: RpcError::invalid_params("params must be a JSON object"),
                });
            }
            Ok(Message::Request { id, method, params })
        }
        (Some(Value::String(method)), None) => Ok(Message::Notification {
            method,
            params: object.remove("params"),
        }),
        (Some(_), _) => Err(invalid("method must be a string")),
        (None, Some(id)) if object.contains_key("result") || object.contains_key("error") => {
            let outcome = match object.remove("result") {
                Some(result) => Ok(result),
                None => Err(object.remove("error").unwrap_or(Value::Null)),
            };
            Ok(Message::Response { id, outcome })
        }
        (None, _) => Err(invalid(
            "the message is neither a request, a notification nor a response",
        )),
    }
}

/// A successful response.
pub(crate) fn success(id: &Value, result: Value) -> Value {
    // Built by hand: `json!` would serialize `result` again, a deep copy
    // of every tool list and call result.
    let mut out = Map::new();
    out.insert("jsonrpc".into(), "2.0".into());
    out.insert("id".into(), id.clone());
    out.insert("result".into(), result);
    Value::Object(out)
}

/// An error response; `id` is left out when the request's id was unreadable.
pub(crate) fn failure(id: Option<&Value>, error: &RpcError) -> Value {
    let mut body = Map::new();
    body.insert("code".into(), error.code.into());
    body.insert("message".into(), error.message.clone().into());
    if let Some(data) = &error.data {
        body.insert("data".into(), data.clone());
    }
    let mut out = Map::new();
    out.insert("jsonrpc".into(), "2.0".into());
    if let Some(id) = id {
        out.insert("id".into(), id.clone());
    }
    out.insert("error".into(), Value::Object(body));
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn requests_notifications_and_responses_are_told_apart() {
        let request = classify(json!({"jsonrpc":"2.0","id":1,"method":"ping"})).unwrap();
        assert!(matches!(request, Message::Request { ref method, .. } if method == "ping"));
        let note = classify(json!({"jsonrpc":"2.0","method":"notifications/initialized"})).unwrap();
        assert_eq!(
            note,
            Message::Notification {
                method: "notifications/initialized".into(),
                params: None
            }
        );
        let response = classify(json!({"jsonrpc":"2.0","id":"a","result":{}})).unwrap();
        assert_eq!(
            response,
            Message::Response {
                id: json!("a"),
                outcome: Ok(json!({}))
            }
        );
    }

    #[test]
    fn null_float_and_object_ids_are_invalid_and_unanswerable() {
        for id in [json!(null), json!(1.5), json!({}), json!(true)] {
            let err = classify(json!({"jsonrpc":"2.0","id":id,"method":"ping"})).unwrap_err();
            assert_eq!(err.error.code, INVALID_REQUEST);
            assert_eq!(err.id, None);
        }
    }

    #[test]
    fn a_missing_version_or_non_object_params_are_refused_with_the_id() {
        let err = classify(json!({"id":7,"method":"ping"})).unwrap_err();
        assert_eq!((err.id, err.error.code), (Some(json!(7)), INVALID_REQUEST));
        let err =
            classify(json!({"jsonrpc":"2.0","id":7,"method":"ping","params":[1]})).unwrap_err();
        assert_eq!((err.id, err.error.code), (Some(json!(7)), INVALID_PARAMS));
    }

    #[test]
    fn failure_leaves_out_an_unknown_id() {
        let body = failure(None, &RpcError::new(PARSE_ERROR, "bad"));
        assert!(body.get("id").is_none());
        assert_eq!(body["error"]["code"], PARSE_ERROR);
    }
}
