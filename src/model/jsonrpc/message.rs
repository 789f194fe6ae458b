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
/// ([`classify_envelope`]), while the clients take a server's message as it
/// comes, so that a sloppy server still gets its answers.
#[derive(Debug, PartialEq)]
pub(crate) enum Message<J: Json = Value> {
    /// A request: needs a response, to `id` as sent.
    Request {
        id: J,
        method: J::Str,
        params: Option<J>,
        /// The members of `params._meta` the host reads, when the host's
        /// reader took `_meta` out of `params` ([`Envelope`]); `None` for a
        /// message classified by [`Message::of`], whose `params` keep it.
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
    /// an object is invalid.
    pub(crate) fn of(message: J) -> Message<J> {
        match message.into_members() {
            Some(members) => Message::shape(members, None),
            None => Message::Invalid(not_an_object()),
        }
    }

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

    /// The method of a request or a notification.
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

