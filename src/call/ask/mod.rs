//! Asking the client mid-call: elicitation (the user), sampling (the
//! model) and roots, from a blocking handler.
//!
//! The two eras ask differently, and the handler does not need to know:
//!
//! - **Stateful revisions**: the request goes out on the call's event
//!   stream with a fresh id; the handler blocks until the client POSTs the
//!   answer (any worker routes it here), the call is cancelled, its
//!   deadline passes, or (for a question relayed from another server) that
//!   server withdraws it. A question given up before its answer is
//!   cancelled on the stream (`notifications/cancelled`), so the client
//!   stops asking its user or model for an answer nobody will read.
//! - **2026-07-28** (multi round-trip requests): nothing can wait across
//!   requests, so the host *re-runs* the handler. An ask the request has no
//!   answer for ends the run with [`AskError::InputRequired`]; the host
//!   answers `resultType: "input_required"` with every unanswered request and
//!   a signed `requestState` holding the answers so far; the client's retry
//!   carries the new answers, and the handler runs again from the top,
//!   finding every answer this time. Nothing is parked between rounds, so a
//!   retry that never comes costs nothing. The price: a handler must not do
//!   irreversible work before its last ask (ask first, then act), as it may
//!   run once per round.

mod form;
mod waiting;

use std::fmt;

use serde_json::{json, Map, Value};

use crate::model::method::Method;
use crate::model::{Revision, ToolOutcome};
use crate::schema::Schema;

pub(crate) use form::check_requested_schema;
pub(crate) use waiting::{abandoned_notice, on_stream, Asking, Round, Withdrawn, DEADLINE_PASSED};

/// One question for the client: an elicitation, a sampling request, or a
/// request for the client's roots.
///
/// ```
/// use serde_json::json;
/// use toolhost::InputRequest;
///
/// let confirm = InputRequest::elicit(
///     "Transfer 500 credits?",
///     json!({"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}),
/// )
/// .key("confirm");
/// assert_eq!(confirm.method(), "elicitation/create");
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct InputRequest {
    key: Option<String>,
    method: Method,
    params: Value,
}

impl InputRequest {
    /// Asks the user to fill in a form: `requested_schema` is the restricted
    /// object schema MCP allows for elicitation (flat properties of string,
    /// number, integer, boolean, enums, and from 2025-11-25 multi-select
    /// arrays), checked before anything is sent.
    pub fn elicit(message: impl Into<String>, requested_schema: Value) -> InputRequest {
        InputRequest {
            key: None,
            method: Method::Elicit,
            params: json!({"message": message.into(), "requestedSchema": requested_schema}),
        }
    }

    /// Asks the user to visit a URL (URL-mode elicitation, 2025-11-25 on),
    /// for flows that must not pass through the client, such as a payment
    /// or a sign-in.
    pub fn elicit_url(
        message: impl Into<String>,
        url: impl Into<String>,
        elicitation_id: impl Into<String>,
    ) -> InputRequest {
        InputRequest {
            key: None,
            method: Method::Elicit,
            params: json!({"mode": "url", "message": message.into(), "url": url.into(),
                           "elicitationId": elicitation_id.into()}),
        }
    }

    /// Asks the client's model for a completion: `params` are those of
    /// `sampling/createMessage` (`messages`, `maxTokens`, and optionally
    /// `systemPrompt`, `modelPreferences`, …).
    pub fn sample(params: Value) -> InputRequest {
        InputRequest {
            key: None,
            method: Method::CreateMessage,
            params,
        }
    }

    /// Another server's question, as it sent it, to put to this session's
    /// client unchanged; `None` for a method that is not one of the three.
    /// (Only the bridge, built with the `client` feature, relays.)
    #[cfg(feature = "client")]
    pub(crate) fn relayed(method: &str, params: Value) -> Option<InputRequest> {
        let method = Method::parse(method).filter(|m| m.is_question())?;
        Some(InputRequest {
            key: None,
            method,
            params,
        })
    }

    /// Asks for the client's roots (`roots/list`).
    pub fn list_roots() -> InputRequest {
        InputRequest {
            key: None,
            method: Method::ListRoots,
            params: json!({}),
        }
    }

    /// Names the request: in 2026-07-28 the key under which the client
    /// answers it (`inputRequests` / `inputResponses`). Keys default to
    /// `input-1`, `input-2`, … in the order the handler asks.
    #[must_use]
    pub fn key(mut self, key: impl Into<String>) -> InputRequest {
        self.key = Some(key.into());
        self
    }

    /// The JSON-RPC method the client receives.
    pub fn method(&self) -> &str {
        self.method.name()
    }

    /// The capability the client must have declared to be asked this.
    pub(crate) fn capability(&self) -> &'static str {
        match self.method {
            Method::Elicit => "elicitation",
            Method::CreateMessage => "sampling",
            _ => "roots",
        }
    }

    pub(crate) fn explicit_key(&self) -> Option<&str> {
        self.key.as_deref()
    }

    pub(crate) fn params(&self) -> &Value {
        &self.params
    }

    /// Checks what can be checked before sending: the revision knows the
    /// method, and an elicitation's schema is one MCP allows.
    pub(crate) fn check(&self, revision: Revision) -> Result<(), AskError> {
        if self.method != Method::Elicit {
            return Ok(());
        }
        if !Method::Elicit.exists_in(revision) {
            return Err(AskError::NotSupported {
                capability: "elicitation",
            });
        }
        if self.params.get("mode").and_then(Value::as_str) == Some("url") {
            return if revision >= Revision::V2025_11_25 {
                Ok(())
            } else {
                Err(AskError::InvalidRequest(format!(
                    "URL-mode elicitation needs revision 2025-11-25; the client speaks {revision}"
                )))
            };
        }
        check_requested_schema(&self.params["requestedSchema"], revision)
            .map_err(AskError::InvalidRequest)
    }

    /// Checks an answer against what was asked: an elicitation's action and
    /// content (against its requested schema), a sampling result's shape.
    pub(crate) fn check_answer(&self, answer: &Value) -> Result<(), AskError> {
        let bad = |why: String| Err(AskError::InvalidResponse(why));
        match self.method {
            Method::Elicit => {
                let action = answer.get("action").and_then(Value::as_str);
                match action {
                    Some("decline" | "cancel") => Ok(()),
                    Some("accept") if self.params.get("mode").is_some() => Ok(()),
                    Some("accept") => {
                        let content = answer.get("content").cloned().unwrap_or(json!({}));
                        let schema = Schema::compile(&self.params["requestedSchema"])
                            .map_err(|e| AskError::InvalidRequest(e.to_string()))?;
                        schema.validate(&content).map_err(|violations| {
                            AskError::InvalidResponse(format!(
                                "the accepted content does not match the requested schema:\n{violations}"
                            ))
                        })
                    }
                    _ => bad(format!(
                        "an elicitation answer needs \"action\": accept, decline or cancel; got {}",
                        answer.get("action").unwrap_or(&Value::Null)
                    )),
                }
            }
            Method::CreateMessage => {
                if answer.get("role").is_some() && answer.get("content").is_some() {
                    Ok(())
                } else {
                    bad("a sampling answer needs \"role\" and \"content\"".into())
                }
            }
            _ => {
                if answer.get("roots").is_some_and(Value::is_array) {
                    Ok(())
                } else {
                    bad("a roots answer needs a \"roots\" array".into())
                }
            }
        }
    }
}

/// What the user did with an elicitation.
#[derive(Clone, Debug, PartialEq)]
pub enum Elicitation {
    /// The user submitted the form; the content matches the requested
    /// schema (checked before the handler sees it). Empty for URL mode.
    Accept(Map<String, Value>),
    /// The user said no.
    Decline,
    /// The user dismissed the question without choosing.
    Cancel,
}

impl Elicitation {
    pub(crate) fn from_answer(answer: &Value) -> Elicitation {
        match answer.get("action").and_then(Value::as_str) {
            Some("accept") => Elicitation::Accept(
                answer
                    .get("content")
                    .and_then(Value::as_object)
                    .cloned()
                    .unwrap_or_default(),
            ),
            Some("decline") => Elicitation::Decline,
            _ => Elicitation::Cancel,
        }
    }
}

/// Why a question to the client got no answer.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum AskError {
    /// The client did not declare the capability (or its revision lacks it);
    /// nothing was sent.
    NotSupported {
        /// `elicitation`, `sampling` or `roots`.
        capability: &'static str,
    },
    /// 2026-07-28: the answer arrives with the client's retry. Return from
    /// the handler (`return err.into()`); the host answers
    /// `input_required` and runs the handler again with the answer.
    InputRequired,
    /// The call was cancelled while waiting (client, session drop, shutdown).
    Cancelled(String),
    /// The call's deadline passed while waiting.
    TimedOut,
    /// The client answered with a JSON-RPC error.
    Refused {
        /// The error code.
        code: i64,
        /// The client's message.
        message: String,
    },
    /// The client's answer does not fit what was asked.
    InvalidResponse(String),
    /// The question itself is not one MCP allows (for example an
    /// elicitation schema with nested objects); nothing was sent.
    InvalidRequest(String),
    /// The response stream is gone, so the question could not be sent.
    Disconnected,
    /// Whoever the question was put on behalf of withdrew it before the
    /// client answered: a bridged MCP server (`McpServerLayer`, with the
    /// `client` feature) cancelled the question it had asked, and the
    /// bridge relayed. The client was told
    /// (`notifications/cancelled`); the reason is the server's, or empty.
    /// Only relayed questions end this way.
    Withdrawn(String),
}

impl fmt::Display for AskError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AskError::NotSupported { capability } => write!(
                f,
                "the client did not declare the {capability} capability, so it cannot be asked"
            ),
            AskError::InputRequired => f.write_str("the answer comes with the client's retry"),
            AskError::Cancelled(reason) => {
                write!(f, "cancelled while waiting for the client: {reason}")
            }
            AskError::TimedOut => {
                f.write_str("the call's deadline passed while waiting for the client")
            }
            AskError::Refused { code, message } => {
                write!(f, "the client refused the request ({code}): {message}")
            }
            AskError::InvalidResponse(why) => write!(f, "the client's answer is invalid: {why}"),
            AskError::InvalidRequest(why) => write!(f, "the question cannot be sent: {why}"),
            AskError::Disconnected => f.write_str("the client's response stream is gone"),
            AskError::Withdrawn(reason) if reason.is_empty() => {
                f.write_str("the question was withdrawn before the client answered")
            }
            AskError::Withdrawn(reason) => write!(
                f,
                "the question was withdrawn before the client answered: {reason}"
            ),
        }
    }
}

impl std::error::Error for AskError {}

impl From<AskError> for ToolOutcome {
    /// What a handler returns when it cannot go on without an answer: the
    /// model reads why (for [`AskError::InputRequired`] the host answers
    /// `input_required` instead, and this outcome is never sent).
    fn from(err: AskError) -> ToolOutcome {
        ToolOutcome::declined(err.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flat_primitive_forms_are_allowed_and_nesting_is_not() {
        let good = json!({"type": "object", "properties": {
            "name": {"type": "string", "minLength": 1},
            "email": {"type": "string", "format": "email"},
            "age": {"type": "integer", "minimum": 0},
            "ok": {"type": "boolean", "default": true},
            "plan": {"type": "string", "enum": ["a", "b"]},
            "titled": {"type": "string", "oneOf": [{"const": "x", "title": "X"}]},
            "tags": {"type": "array", "items": {"type": "string", "enum": ["p", "q"]}}},
            "required": ["name"]});
        assert_eq!(check_requested_schema(&good, Revision::V2025_11_25), Ok(()));
        let nested = json!({"type": "object", "properties": {"address": {"type": "object"}}});
        let err = check_requested_schema(&nested, Revision::V2025_11_25).unwrap_err();
        assert!(
            err.contains("address") && err.contains("not allowed"),
            "{err}"
        );
        let multi = json!({"type": "object", "properties": {"tags": {"type": "array", "items": {"enum": ["p"]}}}});
        assert!(check_requested_schema(&multi, Revision::V2025_06_18).is_err());
        let bad_required = json!({"type": "object", "properties": {}, "required": ["ghost"]});
        assert!(check_requested_schema(&bad_required, Revision::V2025_11_25).is_err());
    }

    #[test]
    fn accepted_content_must_match_the_requested_schema() {
        let ask = InputRequest::elicit(
            "name?",
            json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}),
        );
        assert_eq!(
            ask.check_answer(&json!({"action": "accept", "content": {"name": "Ada"}})),
            Ok(())
        );
        assert_eq!(ask.check_answer(&json!({"action": "decline"})), Ok(()));
        assert!(matches!(
            ask.check_answer(&json!({"action": "accept", "content": {"name": 7}})),
            Err(AskError::InvalidResponse(_))
        ));
        assert!(ask.check_answer(&json!({"action": "maybe"})).is_err());
        assert_eq!(
            Elicitation::from_answer(&json!({"action": "accept", "content": {"name": "Ada"}})),
            Elicitation::Accept(json!({"name": "Ada"}).as_object().unwrap().clone())
        );
    }

    #[test]
    fn elicitation_needs_2025_06_18_and_url_mode_2025_11_25() {
        let form = InputRequest::elicit("?", json!({"type": "object", "properties": {}}));
        assert!(matches!(
            form.check(Revision::V2025_03_26),
            Err(AskError::NotSupported { .. })
        ));
        assert_eq!(form.check(Revision::V2025_06_18), Ok(()));
        let url = InputRequest::elicit_url("pay", "https://pay.example/1", "e1");
        assert!(url.check(Revision::V2025_06_18).is_err());
        assert_eq!(url.check(Revision::V2025_11_25), Ok(()));
    }
}
