//! One JSON-RPC message as every peer reads it: the shape that tells a
//! request, a notification, a response and an error apart, with the JSON
//! held owned or borrowed as the reader needs.

use std::fmt;

use serde_json::Value;

use super::{RpcError, INVALID_REQUEST};
use crate::model::meta::Meta;

/// A JSON-RPC message that arrived, classified by its shape: how every
/// peer reads one — the host, both clients, the relay and the ACP driver.
///
/// `J` is how the message's JSON is held: [`Value`] when the message is
/// taken apart (its members move out, nothing is copied), `&Value` when a
/// peer only looks at it (the relay forwards messages unchanged).
///
/// The shape decides: a string `method` with an `id` is a request, without
/// one a notification; no `method` but an `id` and a `result` is a
/// response, an `error` an error response; anything else is invalid. What a
/// peer wants beyond the shape is its own rule, applied where it reads: the
/// host also wants `"jsonrpc": "2.0"`, an MCP id and object params
/// ([`classify_envelope`](super::classify_envelope)), while the clients
/// take a server's message as it comes, so that a sloppy server still gets
/// its answers.
#[derive(Debug, PartialEq)]
pub(crate) enum Message<J: Json = Value> {
    /// A request: needs a response, to `id` as sent.
    Request {
        id: J,
        method: J::Str,
        params: Option<J>,
        /// The members of `params._meta` the host reads, when the host's
        /// reader took `_meta` out of `params`
        /// ([`Envelope`](super::Envelope)); `None` for a message classified
        /// by [`Message::of`], whose `params` keep it.
        meta: Meta,
    },
    /// A notification: no response.
    Notification { method: J::Str, params: Option<J> },
    /// The successful response to request `id`.
    Result { id: J, result: J },
    /// An error response, with its error object as sent; `id` is `None`
    /// when the sender could not tell which request it answers (JSON-RPC's
    /// `"id": null`, or no id at all).
    Error { id: Option<J>, error: J },
    /// Not a JSON-RPC message: why, and the id to answer when one was
    /// readable.
    Invalid(Invalid),
}

/// How a [`Message`] holds its JSON: owned ([`Value`]) or borrowed
/// (`&Value`).
pub(crate) trait Json: Sized {
    /// How a method name is held: `String` or `&str`.
    type Str: AsRef<str> + fmt::Debug + PartialEq;
    /// The JSON value, to look at.
    fn value(&self) -> &Value;
    /// The string inside; `None` when this is not a JSON string.
    fn into_str(self) -> Option<Self::Str>;
    /// The members JSON-RPC gives a meaning to; `None` when this is not an
    /// object.
    fn into_members(self) -> Option<Members<Self>>;
}

impl Json for Value {
    type Str = String;

    fn value(&self) -> &Value {
        self
    }

    fn into_str(self) -> Option<String> {
        match self {
            Value::String(text) => Some(text),
            _ => None,
        }
    }

    fn into_members(self) -> Option<Members<Value>> {
        let Value::Object(mut object) = self else {
            return None;
        };
        Some(Members {
            jsonrpc: object.remove("jsonrpc"),
            id: object.remove("id"),
            method: object.remove("method"),
            params: object.remove("params"),
            result: object.remove("result"),
            error: object.remove("error"),
        })
    }
}

impl<'a> Json for &'a Value {
    type Str = &'a str;

    fn value(&self) -> &Value {
        self
    }

    fn into_str(self) -> Option<&'a str> {
        self.as_str()
    }

    fn into_members(self) -> Option<Members<&'a Value>> {
        let object = self.as_object()?;
        Some(Members {
            jsonrpc: object.get("jsonrpc"),
            id: object.get("id"),
            method: object.get("method"),
            params: object.get("params"),
            result: object.get("result"),
            error: object.get("error"),
        })
    }
}

/// The members of one message that JSON-RPC gives a meaning to, each as
/// sent; any other member is no concern of the envelope.
#[derive(Debug)]
pub(crate) struct Members<J> {
    pub(super) jsonrpc: Option<J>,
    pub(super) id: Option<J>,
    pub(super) method: Option<J>,
    pub(super) params: Option<J>,
    pub(super) result: Option<J>,
    pub(super) error: Option<J>,
}

impl<J> Default for Members<J> {
    fn default() -> Members<J> {
        Members {
            jsonrpc: None,
            id: None,
            method: None,
            params: None,
            result: None,
            error: None,
        }
    }
}

/// Why a message without a method or a response's members is refused.
pub(super) const NEITHER: &str = "the message is neither a request, a notification nor a response";

impl<J: Json> Message<J> {
    /// Classifies one message by its shape (see [`Message`]); anything but
    /// an object is invalid. (The host reads its bodies through
    /// [`Message::shape`] with its own checks, so only the other peers,
    /// features `client` and `acp-driver`, call this.)
    #[cfg_attr(not(any(feature = "client", feature = "acp-driver")), allow(dead_code))]
    pub(crate) fn of(message: J) -> Message<J> {
        match message.into_members() {
            Some(members) => Message::shape(members, None),
            None => Message::Invalid(not_an_object()),
        }
    }

    #[inline]
    pub(super) fn shape(members: Members<J>, meta: Meta) -> Message<J> {
        let Members {
            id,
            method,
            params,
            result,
            error,
            ..
        } = members;
        if let Some(method) = method {
            return match (method.into_str(), id) {
                (Some(method), Some(id)) => Message::Request {
                    id,
                    method,
                    params,
                    meta,
                },
                (Some(method), None) => Message::Notification { method, params },
                (None, id) => invalid(id.as_ref(), "method must be a string"),
            };
        }
        match (id, result, error) {
            (Some(id), Some(result), None) => Message::Result { id, result },
            (id, None, Some(error)) => Message::Error {
                id: id.filter(|id| !id.value().is_null()),
                error,
            },
            (id, Some(_), Some(_)) => invalid(
                id.as_ref(),
                "a response carries either a result or an error, not both",
            ),
            (id, _, None) => invalid(id.as_ref(), NEITHER),
        }
    }

    /// The method of a request or a notification (the relay's, feature
    /// `client`).
    #[cfg_attr(not(feature = "client"), allow(dead_code))]
    pub(crate) fn method(&self) -> Option<&str> {
        match self {
            Message::Request { method, .. } | Message::Notification { method, .. } => {
                Some(method.as_ref())
            }
            _ => None,
        }
    }
}

/// An invalid message, answered to `id` when it is a valid one.
pub(super) fn invalid<J: Json>(id: Option<&J>, message: &str) -> Message<J> {
    Message::Invalid(Invalid {
        id: id.map(Json::value).filter(|id| valid_id(id)).cloned(),
        error: RpcError::new(INVALID_REQUEST, message),
    })
}

/// Why a message could not be classified, with the id to answer when one was
/// readable.
#[derive(Debug, PartialEq)]
pub(crate) struct Invalid {
    pub(crate) id: Option<Value>,
    pub(crate) error: RpcError,
}

pub(super) fn valid_id(id: &Value) -> bool {
    id.is_string() || id.is_i64() || id.is_u64()
}

/// Why a body that is neither an object nor a batch is refused.
pub(crate) fn not_an_object() -> Invalid {
    Invalid {
        id: None,
        error: RpcError::new(INVALID_REQUEST, "a JSON-RPC message must be a JSON object"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::jsonrpc::METHOD_NOT_FOUND;
    use serde_json::json;

    /// A borrowed classification, owned: to compare it with the owned one.
    fn owned(message: Message<&Value>) -> Message {
        match message {
            Message::Request {
                id,
                method,
                params,
                meta,
            } => Message::Request {
                id: id.clone(),
                method: method.to_owned(),
                params: params.cloned(),
                meta,
            },
            Message::Notification { method, params } => Message::Notification {
                method: method.to_owned(),
                params: params.cloned(),
            },
            Message::Result { id, result } => Message::Result {
                id: id.clone(),
                result: result.clone(),
            },
            Message::Error { id, error } => Message::Error {
                id: id.cloned(),
                error: error.clone(),
            },
            Message::Invalid(invalid) => Message::Invalid(invalid),
        }
    }

    /// Classifies `message` both ways, and checks that they agree.
    fn read(message: &Value) -> Message {
        let taken = Message::of(message.clone());
        assert_eq!(taken, owned(Message::of(message)), "{message}");
        taken
    }

    fn refused(id: Option<Value>, message: &str) -> Message {
        Message::Invalid(Invalid {
            id,
            error: RpcError::new(INVALID_REQUEST, message),
        })
    }

    #[test]
    fn a_method_with_an_id_is_a_request_and_without_one_a_notification() {
        let params = json!({"x": 1, "_meta": {"progressToken": 1}});
        assert_eq!(
            read(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": params})),
            Message::Request {
                id: json!(1),
                method: "tools/list".into(),
                params: Some(params.clone()),
                meta: None,
            }
        );
        assert_eq!(
            read(&json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": params})),
            Message::Notification {
                method: "notifications/progress".into(),
                params: Some(params),
            }
        );
        let bare = read(&json!({"method": "ping"}));
        assert_eq!(
            bare,
            Message::Notification {
                method: "ping".into(),
                params: None
            }
        );
        assert_eq!(bare.method(), Some("ping"));
        // Any id makes a request here; MCP's stricter rule is the host's.
        assert!(matches!(
            read(&json!({"id": null, "method": "ping"})),
            Message::Request {
                id: Value::Null,
                ..
            }
        ));
    }

    #[test]
    fn a_result_or_an_error_without_a_method_is_a_response() {
        assert_eq!(
            read(&json!({"jsonrpc": "2.0", "id": "a", "result": {"ok": true}})),
            Message::Result {
                id: json!("a"),
                result: json!({"ok": true})
            }
        );
        let error = json!({"code": METHOD_NOT_FOUND, "message": "no"});
        assert_eq!(
            read(&json!({"jsonrpc": "2.0", "id": 4, "error": error})),
            Message::Error {
                id: Some(json!(4)),
                error: error.clone()
            }
        );
        for unknown in [json!({"id": null, "error": error}), json!({"error": error})] {
            assert_eq!(
                read(&unknown),
                Message::Error {
                    id: None,
                    error: error.clone()
                }
            );
        }
        let response = read(&json!({"id": 4, "result": {}}));
        assert_eq!(response.method(), None);
    }

    #[test]
    fn what_has_no_shape_of_json_rpc_is_invalid_and_answered_only_to_a_valid_id() {
        for not_an_object in [json!([]), json!(1), json!("ping"), json!(null)] {
            assert_eq!(
                read(&not_an_object),
                refused(None, "a JSON-RPC message must be a JSON object")
            );
        }
        assert_eq!(
            read(&json!({"id": 3, "method": 7})),
            refused(Some(json!(3)), "method must be a string")
        );
        assert_eq!(
            read(&json!({"id": 3, "result": {}, "error": {}})),
            refused(
                Some(json!(3)),
                "a response carries either a result or an error, not both"
            )
        );
        assert_eq!(read(&json!({"id": 3})), refused(Some(json!(3)), NEITHER));
        assert_eq!(read(&json!({"result": {}})), refused(None, NEITHER));
        for unanswerable in [json!(1.5), json!({}), json!(true), json!(null)] {
            assert_eq!(
                read(&json!({"id": unanswerable, "method": 7})),
                refused(None, "method must be a string")
            );
        }
        assert_eq!(read(&json!({"id": 3, "method": 7})).method(), None);
    }
}
