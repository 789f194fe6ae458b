//! What a tool call came to: success, declined, failed or cancelled.
//!
//! [`CallResult`] is the one enum of the four outcomes; a [`ToolOutcome`]
//! is a `CallResult` with what a success carries (content blocks and
//! `structuredContent`) or what a refusal carries (its machine-readable
//! code). [`OutcomeKind`] is the same four states without their data, for
//! matching.
//!
//! Only a decline's reason is written for the model. A failure's detail
//! and a cancellation's reason are for the application: the model reads a
//! fixed text that says which of the two happened, never the words behind
//! it.

use serde_json::{Map, Value};

use super::content::Content;
use super::tool_result::{ToolResult, Unreadable};

/// How a call ended: the four states of a [`ToolOutcome`], as the event
/// hook reports them (with the detail the model never sees).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum CallResult {
    /// The handler succeeded.
    Success,
    /// The handler declined, with the reason it gave the model.
    Declined {
        /// The reason sent to the model.
        reason: String,
    },
    /// The handler failed or panicked; the model got a generic error.
    Failed {
        /// The detail the model did not see.
        detail: String,
    },
    /// The call was cancelled before it finished — by the client, by the
    /// session's end, by its deadline, or by the handler itself
    /// ([`ToolOutcome::cancelled`]). A client that cancelled gets no
    /// answer at all; any other gets a fixed text saying the call was
    /// cancelled, never the reason.
    Cancelled {
        /// Why, as the host knows it ("the client cancelled the call",
        /// "the session was closed", …); for the application only.
        reason: String,
    },
}

impl CallResult {
    /// Which of the four states this is.
    pub fn kind(&self) -> OutcomeKind {
        match self {
            CallResult::Success => OutcomeKind::Success,
            CallResult::Declined { .. } => OutcomeKind::Declined,
            CallResult::Failed { .. } => OutcomeKind::Failed,
            CallResult::Cancelled { .. } => OutcomeKind::Cancelled,
        }
    }
}

/// The four states of a [`ToolOutcome`] (and of a [`CallResult`]), without
/// their data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum OutcomeKind {
    /// The tool ran and produced a result.
    Success,
    /// The tool ran and said no; the model reads the reason.
    Declined,
    /// The tool could not run (a fault or a panic); the model gets a generic error.
    Failed,
    /// The call was cancelled before it finished; it has no result.
    Cancelled,
}

/// What a tool call came to.
///
/// ```
/// use serde_json::json;
/// use toolhost::{OutcomeKind, ToolOutcome};
///
/// let ok = ToolOutcome::json(json!({"sum": 3}));
/// let no = ToolOutcome::declined("over the daily quota").with_code(json!("quota"));
/// let broken = ToolOutcome::failed("database connection lost");
/// let stopped = ToolOutcome::cancelled();
/// assert_eq!(ok.kind(), OutcomeKind::Success);
/// assert_eq!(no.kind(), OutcomeKind::Declined);
/// assert_eq!(broken.kind(), OutcomeKind::Failed);
/// assert_eq!(stopped.kind(), OutcomeKind::Cancelled);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct ToolOutcome {
    pub(crate) result: CallResult,
    /// A success's content blocks; empty otherwise.
    pub(crate) content: Vec<Content>,
    /// A success's `structuredContent`, or a refusal's code.
    pub(crate) structured: Option<Value>,
    /// Another server's `CallToolResult`, sent on as it came
    /// ([`ToolOutcome::relayed`]); `content` is then empty.
    pub(crate) relayed: Option<Map<String, Value>>,
}

impl ToolOutcome {
    /// Success with one text block.
    pub fn text(text: impl Into<String>) -> ToolOutcome {
        ToolOutcome::content([Content::text(text)])
    }

    /// Success with `structuredContent`, mirrored into a text block for
    /// clients that ignore structured content.
    pub fn json(value: Value) -> ToolOutcome {
        ToolOutcome {
            result: CallResult::Success,
            content: vec![Content::text(value.to_string())],
            structured: Some(value),
            relayed: None,
        }
    }

    /// Success with the given content blocks.
    pub fn content(content: impl IntoIterator<Item = Content>) -> ToolOutcome {
        ToolOutcome {
            result: CallResult::Success,
            content: content.into_iter().collect(),
            structured: None,
            relayed: None,
        }
    }

    /// Adds (or replaces) the `structuredContent` of a success; other states
    /// are unchanged.
    #[must_use]
    pub fn with_structured(mut self, value: Value) -> ToolOutcome {
        if self.result == CallResult::Success {
            if let Some(relayed) = &mut self.relayed {
                relayed.insert("structuredContent".into(), value.clone());
            }
            self.structured = Some(value);
        }
        self
    }

    /// The tool ran and said no. The reason is written for the model, which
    /// sees it as an error result (`isError: true`) and can adapt.
    pub fn declined(reason: impl Into<String>) -> ToolOutcome {
        ToolOutcome {
            result: CallResult::Declined {
                reason: reason.into(),
            },
            content: Vec::new(),
            structured: None,
            relayed: None,
        }
    }

    /// Attaches a machine-readable code to a declined outcome, sent as
    /// `structuredContent: {"code": …}`; other states are unchanged.
    #[must_use]
    pub fn with_code(mut self, value: Value) -> ToolOutcome {
        if matches!(self.result, CallResult::Declined { .. }) {
            self.structured = Some(value);
        }
        self
    }

    /// The tool could not run. The detail goes to the host's event hook only;
    /// the model is told that the tool failed and nothing more.
    pub fn failed(detail: impl Into<String>) -> ToolOutcome {
        ToolOutcome {
            result: CallResult::Failed {
                detail: detail.into(),
            },
            content: Vec::new(),
            structured: None,
            relayed: None,
        }
    }

    /// The call was cancelled and stops here with no result: what a
    /// handler returns once [`CallContext::is_cancelled`](crate::CallContext::is_cancelled)
    /// says so (or `ctx.check_cancelled()?`, which returns it). The host
    /// fills in why — the client cancelled, the session closed, the
    /// deadline passed — for the event hook; a client that cancelled gets
    /// no answer, any other a fixed text saying the call was cancelled.
    /// Unlike [`ToolOutcome::declined`], nothing here is written for the
    /// model.
    ///
    /// ```
    /// use toolhost::{CallResult, OutcomeKind, ToolOutcome};
    ///
    /// let outcome = ToolOutcome::cancelled();
    /// assert_eq!(outcome.kind(), OutcomeKind::Cancelled);
    /// assert!(matches!(outcome.result(), CallResult::Cancelled { .. }));
    /// assert_ne!(outcome.kind(), ToolOutcome::declined("cancelled").kind());
    /// ```
    pub fn cancelled() -> ToolOutcome {
        ToolOutcome {
            result: CallResult::Cancelled {
                reason: String::new(),
            },
            content: Vec::new(),
            structured: None,
            relayed: None,
        }
    }

    /// A cancelled outcome that does not say why yet gets `reason()`'s
    /// answer: the host's record of the call's cancellation, or, when
    /// nothing cancelled the call, that its handler stopped it.
    pub(crate) fn why_cancelled(mut self, reason: impl FnOnce() -> Option<String>) -> ToolOutcome {
        if let CallResult::Cancelled { reason: why } = &mut self.result {
            if why.is_empty() {
                *why = reason().unwrap_or_else(|| {
                    "the handler stopped the call, which nothing had cancelled".to_owned()
                });
            }
        }
        self
    }

    /// Another MCP server's `CallToolResult`, passed on to the client
    /// unchanged: every content block (of any type, including ones this
    /// crate does not know), `structuredContent`, `_meta` and `isError`.
    /// This is how a surface that bridges another server answers.
    ///
    /// What is adapted is what belongs to the hop, not the result: the
    /// protocol's own `_meta` keys (`io.modelcontextprotocol/…`, such as
    /// the serverInfo a 2026-07-28 server stamps there) are left out, the
    /// host adding its own, and `structuredContent` is left out before
    /// 2025-06-18, as for any outcome. `isError: true` is a declined outcome (the model reads the
    /// server's content), anything else a success. A `result` that is not a
    /// `CallToolResult` — not an object, no `content` array, an `isError`
    /// that is not a boolean — is a failed outcome naming what is wrong. A
    /// result [`crate::client`] has read already goes on by
    /// `ToolOutcome::from` (see [`ToolResult`]), without being read again.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolhost::{OutcomeKind, ToolOutcome};
    ///
    /// let ok = ToolOutcome::relayed(json!({
    ///     "content": [{"type": "hologram", "frames": 3}],
    ///     "structuredContent": {"frames": 3},
    /// }));
    /// assert_eq!(ok.kind(), OutcomeKind::Success);
    /// assert_eq!(ok.structured_content(), Some(&json!({"frames": 3})));
    /// let no = ToolOutcome::relayed(json!({"content": [{"type": "text", "text": "no such repo"}], "isError": true}));
    /// assert_eq!(no.kind(), OutcomeKind::Declined);
    /// assert_eq!(ToolOutcome::relayed(json!("done")).kind(), OutcomeKind::Failed);
    /// ```
    pub fn relayed(result: Value) -> ToolOutcome {
        match ToolResult::from_json(result) {
            Ok(result) => ToolOutcome::from(result),
            Err(Unreadable::NotAnObject(result)) => ToolOutcome::failed(format!(
                "the server's tools/call result is not an object: {result}"
            )),
            Err(Unreadable::NoContent(fields)) => ToolOutcome::failed(format!(
                "the server's tools/call result has no content array: {}",
                Value::Object(fields)
            )),
            Err(Unreadable::IsErrorNotBool(other)) => ToolOutcome::failed(format!(
                "the server's tools/call result has an isError that is not a boolean: {other}"
            )),
        }
    }

    /// Which of the four states this is.
    pub fn kind(&self) -> OutcomeKind {
        self.result.kind()
    }

    /// How the call ended, as the event hook hears it.
    pub fn result(&self) -> &CallResult {
        &self.result
    }

    /// The `structuredContent` of a success (or the code of a declined
    /// call), if it has one.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolhost::ToolOutcome;
    ///
    /// assert_eq!(ToolOutcome::json(json!({"n": 1})).structured_content(), Some(&json!({"n": 1})));
    /// assert_eq!(ToolOutcome::text("n is 1").structured_content(), None);
    /// ```
    pub fn structured_content(&self) -> Option<&Value> {
        self.structured.as_ref()
    }
}

/// Another server's result, passed on to the client as it came (its
/// `raw`): what [`ToolOutcome::relayed`] makes of a `CallToolResult` read
/// from JSON, for one [`crate::client`] has read already. The verdict is
/// `is_error` (`true`: declined, with the text blocks as the reason).
impl From<ToolResult> for ToolOutcome {
    fn from(result: ToolResult) -> ToolOutcome {
        let verdict = if result.is_error {
            CallResult::Declined {
                reason: result.text(),
            }
        } else {
            CallResult::Success
        };
        let Value::Object(mut fields) = result.raw else {
            // Every result read is an object; one whose `raw` was replaced
            // by hand has nothing to pass on, and is sent from its fields.
            let success = verdict == CallResult::Success;
            return ToolOutcome {
                result: verdict,
                content: if success { result.content } else { Vec::new() },
                structured: result.structured_content,
                relayed: None,
            };
        };
        // The verdict sent is the one the outcome reports (they differ
        // only when `is_error` was changed by hand).
        if result.is_error || fields.get("isError") == Some(&Value::Bool(true)) {
            fields.insert("isError".into(), result.is_error.into());
        }
        // The era's own field: the host sets it again where the client's
        // revision has it.
        fields.remove("resultType");
        // So are the protocol's `_meta` keys: they describe the hop the
        // result came over (a 2026-07-28 server stamps its own serverInfo
        // there), and the host stamps its own where the client's revision
        // has them. Relayed, they would name the wrong server to the client.
        if let Some(Value::Object(meta)) = fields.get_mut("_meta") {
            let before = meta.len();
            meta.retain(|key, _| !key.starts_with("io.modelcontextprotocol/"));
            if meta.is_empty() && before > 0 {
                fields.remove("_meta");
            }
        }
        ToolOutcome {
            result: verdict,
            content: Vec::new(),
            structured: result.structured_content,
            relayed: Some(fields),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn with_code_only_touches_declined_outcomes_and_with_structured_only_successes() {
        let ok = ToolOutcome::text("x").with_code(json!("c"));
        assert_eq!(ok, ToolOutcome::text("x"));
        let no = ToolOutcome::declined("no").with_structured(json!({"a": 1}));
        assert_eq!(no, ToolOutcome::declined("no"));
        let coded = ToolOutcome::declined("no").with_code(json!("quota"));
        assert_eq!(coded.structured, Some(json!("quota")));
        assert_eq!(coded.kind(), OutcomeKind::Declined);
    }

    #[test]
    fn a_relayed_result_keeps_every_field_and_reads_its_verdict_from_is_error() {
        let raw = json!({
            "content": [{"type": "hologram", "frames": 3}, {"type": "text", "text": "why", "annotations": {"priority": 1}}],
            "structuredContent": {"frames": 3},
            "_meta": {"trace": "t1"},
            "isError": true,
            "resultType": "complete",
        });
        let outcome = ToolOutcome::relayed(raw.clone());
        assert_eq!(
            outcome.result,
            CallResult::Declined {
                reason: "why".into()
            }
        );
        let mut kept = raw.as_object().cloned().unwrap();
        kept.remove("resultType");
        assert_eq!(outcome.relayed, Some(kept));
        assert!(outcome.content.is_empty());
        let success = ToolOutcome::relayed(json!({"content": [], "isError": false}));
        assert_eq!(success.kind(), OutcomeKind::Success);
    }

    #[test]
    fn a_relayed_result_loses_the_protocols_meta_keys_of_the_hop_and_keeps_the_tools_own() {
        let server = json!({"name": "remote", "version": "1"});
        let outcome = ToolOutcome::relayed(json!({
            "content": [],
            "_meta": {"io.modelcontextprotocol/serverInfo": server, "trace": "t1"},
        }));
        let relayed = outcome.relayed.unwrap();
        assert_eq!(relayed["_meta"], json!({"trace": "t1"}));
        // Only the hop's keys: a `_meta` left empty by them goes, one the
        // server sent empty stays.
        let only_hop = ToolOutcome::relayed(json!({
            "content": [],
            "_meta": {"io.modelcontextprotocol/serverInfo": server},
        }));
        assert!(!only_hop.relayed.unwrap().contains_key("_meta"));
        let empty = ToolOutcome::relayed(json!({"content": [], "_meta": {}}));
        assert_eq!(empty.relayed.unwrap()["_meta"], json!({}));
    }

    #[test]
    fn a_relayed_value_that_is_no_call_result_is_a_failure_naming_the_fault() {
        for (raw, says) in [
            (json!([1]), "not an object"),
            (json!({"isError": false}), "no content array"),
            (json!({"content": [], "isError": "yes"}), "not a boolean"),
        ] {
            let outcome = ToolOutcome::relayed(raw);
            match outcome.result() {
                CallResult::Failed { detail } => assert!(detail.contains(says), "{detail}"),
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn a_result_read_already_becomes_the_outcome_its_json_would_and_sends_its_own_verdict() {
        for raw in [
            json!({"content": [{"type": "text", "text": "why"}, {"type": "hologram"}], "isError": true,
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "r"}}, "resultType": "complete"}),
            json!({"content": [], "structuredContent": {"n": 1}, "_meta": {"trace": "t1"}}),
        ] {
            let read = ToolResult::from_json(raw.clone()).unwrap();
            assert_eq!(ToolOutcome::from(read), ToolOutcome::relayed(raw));
        }
        // A verdict changed by hand is the one sent, and the one reported.
        let mut result = ToolResult::from_json(json!({"content": [], "isError": true})).unwrap();
        result.is_error = false;
        let outcome = ToolOutcome::from(result);
        assert_eq!(outcome.kind(), OutcomeKind::Success);
        assert_eq!(outcome.relayed.unwrap()["isError"], false);
        let mut result = ToolResult::from_json(json!({"content": []})).unwrap();
        result.is_error = true;
        let outcome = ToolOutcome::from(result);
        assert_eq!(outcome.kind(), OutcomeKind::Declined);
        assert_eq!(outcome.relayed.unwrap()["isError"], true);
        // A `raw` that is no result any more: the fields are sent instead.
        let mut result =
            ToolResult::from_json(json!({"content": [{"type": "text", "text": "t"}]})).unwrap();
        result.raw = json!(null);
        let outcome = ToolOutcome::from(result);
        assert!(outcome.relayed.is_none());
        assert_eq!(outcome.content, [Content::text("t")]);
    }
}
