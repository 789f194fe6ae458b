//! A call's result written straight to its response's text.
//!
//! Every tool call is answered with a `CallToolResult`. Built as a tree
//! of `Value`s, then serialized and dropped, it would be a large share of
//! the protocol work of a call; written here in one pass from the outcome,
//! it builds no tree only to drop it.
//! The text is what the tree would have been — same fields, same order
//! (a tree's keys are sorted), same values — which the tests below check
//! against the tree for every revision. A relayed result (another server's,
//! passed on as it came) is already a tree and goes as one.

use std::borrow::Cow;

use serde_core::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::Value;

use super::stateless::ServerMeta;
use super::Server;
use crate::model::content::TextBlock;
use crate::model::jsonrpc::{success_serialized, Reply};
use crate::model::{CallResult, Content, Revision, ToolOutcome};

/// What the model reads when a handler failed; the details go to the hook.
pub(super) const FAILED_TEXT: &str =
    "The tool failed with an internal error and produced no result. The application has the details.";

/// What the model reads when a call was cancelled before it finished; the
/// reason goes to the hook. Sent only where someone still waits for the
/// answer: a client that cancelled the call itself gets none.
pub(super) const CANCELLED_TEXT: &str =
    "The tool call was cancelled before it finished and has no result.";

/// The response to request `id` whose call came to `outcome` (not a
/// relayed one), for `revision`.
pub(super) fn written(
    server: &Server,
    revision: Revision,
    id: &Value,
    outcome: &ToolOutcome,
) -> Reply {
    let size = outcome
        .content
        .iter()
        .map(|block| block.as_text().map_or(64, str::len) + 32)
        .sum::<usize>()
        + 128;
    let result = ResultJson {
        server,
        revision,
        outcome,
    };
    success_serialized(id, &result, size)
}

/// A `CallToolResult` as the revision spells it: `content`, `isError`,
/// `structuredContent` where the revision has it, and in 2026-07-28 the
/// `_meta` and `resultType` every result carries.
struct ResultJson<'a> {
    server: &'a Server,
    revision: Revision,
    outcome: &'a ToolOutcome,
}

impl Serialize for ResultJson<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let outcome = self.outcome;
        let revision = self.revision;
        let stateless = revision.is_stateless();
        let structured = outcome
            .structured
            .as_ref()
            .filter(|_| revision.has_structured_content());
        let mut map = serializer.serialize_map(None)?;
        if stateless {
            map.serialize_entry("_meta", &ServerMeta(self.server))?;
        }
        let is_error = match &outcome.result {
            CallResult::Success => {
                map.serialize_entry("content", &Blocks(&outcome.content, revision))?;
                false
            }
            CallResult::Declined { reason } => {
                let text: Cow<'_, str> = match &outcome.structured {
                    Some(code) if structured.is_none() => format!("{reason} (code: {code})").into(),
                    _ => reason.as_str().into(),
                };
                map.serialize_entry("content", &[TextBlock(&text)])?;
                true
            }
            CallResult::Failed { .. } => {
                map.serialize_entry("content", &[TextBlock(FAILED_TEXT)])?;
                true
            }
            CallResult::Cancelled { .. } => {
                map.serialize_entry("content", &[TextBlock(CANCELLED_TEXT)])?;
                true
            }
        };
        map.serialize_entry("isError", &is_error)?;
        if stateless {
            map.serialize_entry("resultType", "complete")?;
        }
        if let Some(structured) = structured {
            match &outcome.result {
                CallResult::Declined { .. } => {
                    map.serialize_entry("structuredContent", &Code(structured))?;
                }
                _ => map.serialize_entry("structuredContent", structured)?,
            }
        }
        map.end()
    }
}

/// A success's content blocks.
struct Blocks<'a>(&'a [Content], Revision);

impl Serialize for Blocks<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.0.len()))?;
        for block in self.0 {
            seq.serialize_element(&block.json(self.1))?;
        }
        seq.end()
    }
}

/// A declined call's structured code, `{"code": …}`.
struct Code<'a>(&'a Value);

impl Serialize for Code<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(1))?;
        map.serialize_entry("code", self.0)?;
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::super::tools::{finish_result, render};
    use super::*;
    use serde_json::json;

    fn outcomes() -> Vec<ToolOutcome> {
        vec![
            ToolOutcome::text("hello \"there\"\n"),
            ToolOutcome::json(json!({"sum": 3, "items": [1, 2]})),
            ToolOutcome::content([
                Content::text("chart").with_audience([crate::Role::User]),
                Content::image(b"PNG", "image/png"),
                Content::audio(b"RIFF", "audio/wav"),
                Content::resource_link("file:///a.txt", "a.txt"),
            ]),
            ToolOutcome::content([]),
            ToolOutcome::declined("over quota"),
            ToolOutcome::declined("no").with_code(json!("quota")),
            ToolOutcome::declined("no").with_code(json!({"n": 1})),
            ToolOutcome::failed("db password wrong"),
            ToolOutcome::cancelled().why_cancelled(|| Some("user pressed stop".into())),
        ]
    }

    #[test]
    fn a_written_result_is_the_tree_it_replaces_in_every_revision() {
        let server = Server::for_tests(None);
        for revision in Revision::ALL {
            for (n, outcome) in outcomes().iter().enumerate() {
                for id in [json!(7), json!("call-7")] {
                    let Reply::Text(text) = written(&server, revision, &id, outcome) else {
                        panic!("a result that cannot be written");
                    };
                    let tree = finish_result(&server, revision, &id, render(outcome, revision));
                    let read: Value = serde_json::from_slice(&text).unwrap();
                    assert_eq!(read, tree, "outcome {n} in {revision}");
                    // The same fields in the same order; only the
                    // envelope's own three keys are in another.
                    let result = serde_json::to_vec(&tree["result"]).unwrap();
                    assert!(
                        text.windows(result.len()).any(|w| w == result),
                        "outcome {n} in {revision}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_failed_call_tells_the_model_nothing_of_its_detail() {
        let server = Server::for_tests(None);
        let outcome = ToolOutcome::failed("db password wrong");
        let text = written(&server, Revision::V2025_11_25, &json!(1), &outcome).into_text();
        let text = String::from_utf8(text).unwrap();
        assert!(!text.contains("password"), "{text}");
        assert!(text.contains(FAILED_TEXT) && text.contains(r#""isError":true"#));
    }
}
