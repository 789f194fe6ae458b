//! A call's result, `CallToolResult`, spelled once.
//!
//! [`ResultJson`] is the one spelling: every result the host writes for a
//! call — what a handler came to, or a tool error of the host's own — is
//! written by it, straight to the response's text ([`written`]), or to a
//! tree with `serde_json::to_value` where the reply is built as one
//! ([`tool_error`]). Writing straight to text builds no tree only to drop
//! it, which on a call is a large share of the protocol work.
//! Members are written in the order a tree would write them (sorted by
//! name), so both ways give the same bytes; the golden tests below pin the
//! text per revision. A relayed result (another server's, passed on as it
//! came) is already a tree and goes as one.

use std::borrow::Cow;

use serde_core::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::Value;

use super::result_meta::ServerMeta;
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
        completion: revision.is_stateless().then_some(server),
        said: Said::Outcome(outcome, revision),
    };
    success_serialized(id, &result, size)
}

/// A result the model reads as the tool's error, saying `text`, as a
/// tree: what the host answers for a call it refused before the handler
/// (an unknown tool, invalid arguments) or ended itself (a deadline, a
/// bound). Without 2026-07-28's `_meta` and `resultType`, which the
/// response adds as it does to every result.
pub(super) fn tool_error(text: &str) -> Value {
    let result = ResultJson {
        completion: None,
        said: Said::Error(text),
    };
    // Cannot fail: every key is a string and every value plain JSON.
    serde_json::to_value(result).unwrap_or_default()
}

/// A `CallToolResult` as a revision spells it: `content`, `isError`,
/// `structuredContent` where the revision has it, and in 2026-07-28 the
/// `_meta` and `resultType` every result carries.
struct ResultJson<'a> {
    /// The server a 2026-07-28 result names in its `_meta`, written with
    /// the `resultType`; `None` for a revision without them, or for a
    /// result they are added to later.
    completion: Option<&'a Server>,
    said: Said<'a>,
}

/// What a result says.
enum Said<'a> {
    /// What a handler came to, for a revision.
    Outcome(&'a ToolOutcome, Revision),
    /// A tool error of the host's own, with this text.
    Error(&'a str),
}

/// A result's `content`.
enum Blocks<'a> {
    /// A success's blocks, as the revision spells them.
    Content(&'a [Content], Revision),
    /// One text block: the whole content of every result that is an error.
    Text(Cow<'a, str>),
}

/// A result's `structuredContent`.
enum Structured<'a> {
    /// A success's, as the handler gave it.
    Value(&'a Value),
    /// A decline's code, `{"code": …}`.
    Code(&'a Value),
}

impl Said<'_> {
    /// The result's content, whether it is an error, and its structured
    /// content where there is one to send.
    fn parts(&self) -> (Blocks<'_>, bool, Option<Structured<'_>>) {
        let (outcome, revision) = match *self {
            Said::Outcome(outcome, revision) => (outcome, revision),
            Said::Error(text) => return (Blocks::Text(text.into()), true, None),
        };
        let structured = outcome
            .structured
            .as_ref()
            .filter(|_| revision.has_structured_content());
        match &outcome.result {
            CallResult::Success => (
                Blocks::Content(&outcome.content, revision),
                false,
                structured.map(Structured::Value),
            ),
            CallResult::Declined { reason } => {
                // A revision without structured content still tells the
                // model the code, in the text.
                let text: Cow<'_, str> = match &outcome.structured {
                    Some(code) if structured.is_none() => format!("{reason} (code: {code})").into(),
                    _ => reason.as_str().into(),
                };
                (Blocks::Text(text), true, structured.map(Structured::Code))
            }
            CallResult::Failed { .. } => (Blocks::Text(FAILED_TEXT.into()), true, None),
            CallResult::Cancelled { .. } => (Blocks::Text(CANCELLED_TEXT.into()), true, None),
        }
    }
}

impl Serialize for ResultJson<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let (content, is_error, structured) = self.said.parts();
        let mut map = serializer.serialize_map(None)?;
        if let Some(server) = self.completion {
            map.serialize_entry("_meta", &ServerMeta(server))?;
        }
        map.serialize_entry("content", &content)?;
        map.serialize_entry("isError", &is_error)?;
        if self.completion.is_some() {
            map.serialize_entry("resultType", "complete")?;
        }
        match structured {
            Some(Structured::Value(value)) => map.serialize_entry("structuredContent", value)?,
            Some(Structured::Code(code)) => {
                map.serialize_entry("structuredContent", &Code(code))?;
            }
            None => {}
        }
        map.end()
    }
}

impl Serialize for Blocks<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Blocks::Content(blocks, revision) => {
                let mut seq = serializer.serialize_seq(Some(blocks.len()))?;
                for block in *blocks {
                    seq.serialize_element(&block.json(*revision))?;
                }
                seq.end()
            }
            Blocks::Text(text) => [TextBlock(text)].serialize(serializer),
        }
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
    use super::super::result_meta::complete;
    use super::super::tools::finish_result;
    use super::*;
    use crate::model::revision::{per_revision, Goldens};
    use crate::Role;
    use serde_json::json;

    const R2024: Revision = Revision::V2024_11_05;
    const R2025_03: Revision = Revision::V2025_03_26;
    const R2025_06: Revision = Revision::V2025_06_18;
    const R2025_11: Revision = Revision::V2025_11_25;
    const R2026: Revision = Revision::V2026_07_28;
    const STATEFUL: &[Revision] = &[R2024, R2025_03, R2025_06, R2025_11];

    /// Each outcome and the exact text of the response to request 7 that
    /// each revision gets of it; every revision is named once per outcome.
    fn goldens() -> Vec<(ToolOutcome, Goldens)> {
        vec![
            (
                ToolOutcome::text("hello \"there\"\n"),
                vec![
                    (
                        STATEFUL,
                        r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"text":"hello \"there\"\n","type":"text"}],"isError":false}}"#,
                    ),
                    (
                        &[R2026],
                        r#"{"jsonrpc":"2.0","id":7,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"test","version":"0.0.1"}},"content":[{"text":"hello \"there\"\n","type":"text"}],"isError":false,"resultType":"complete"}}"#,
                    ),
                ],
            ),
            (
                ToolOutcome::json(json!({"sum": 3, "items": [1, 2]})),
                vec![
                    (
                        &[R2024, R2025_03],
                        r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"text":"{\"items\":[1,2],\"sum\":3}","type":"text"}],"isError":false}}"#,
                    ),
                    (
                        &[R2025_06, R2025_11],
                        r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"text":"{\"items\":[1,2],\"sum\":3}","type":"text"}],"isError":false,"structuredContent":{"items":[1,2],"sum":3}}}"#,
                    ),
                    (
                        &[R2026],
                        r#"{"jsonrpc":"2.0","id":7,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"test","version":"0.0.1"}},"content":[{"text":"{\"items\":[1,2],\"sum\":3}","type":"text"}],"isError":false,"resultType":"complete","structuredContent":{"items":[1,2],"sum":3}}}"#,
                    ),
                ],
            ),
            (
                ToolOutcome::content([
                    Content::text("chart")
                        .with_audience([Role::User])
                        .with_last_modified("2025-01-12T15:00:58Z"),
                    Content::image(b"PNG", "image/png"),
                    Content::audio(b"RIFF", "audio/wav"),
                    Content::resource_link("file:///a.txt", "a.txt").with_mime_type("text/plain"),
                    Content::resource_text("file:///a.txt", "text/plain", "hi"),
                ])
                .with_structured(json!({"rows": 2})),
                vec![
                    (
                        &[R2024],
                        r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"annotations":{"audience":["user"]},"text":"chart","type":"text"},{"data":"UE5H","mimeType":"image/png","type":"image"},{"text":"[audio (audio/wav) omitted: revision 2024-11-05 has no audio content]","type":"text"},{"text":"resource a.txt (file:///a.txt)","type":"text"},{"resource":{"mimeType":"text/plain","text":"hi","uri":"file:///a.txt"},"type":"resource"}],"isError":false}}"#,
                    ),
                    (
                        &[R2025_03],
                        r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"annotations":{"audience":["user"]},"text":"chart","type":"text"},{"data":"UE5H","mimeType":"image/png","type":"image"},{"data":"UklGRg==","mimeType":"audio/wav","type":"audio"},{"text":"resource a.txt (file:///a.txt)","type":"text"},{"resource":{"mimeType":"text/plain","text":"hi","uri":"file:///a.txt"},"type":"resource"}],"isError":false}}"#,
                    ),
                    (
                        &[R2025_06, R2025_11],
                        r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"annotations":{"audience":["user"],"lastModified":"2025-01-12T15:00:58Z"},"text":"chart","type":"text"},{"data":"UE5H","mimeType":"image/png","type":"image"},{"data":"UklGRg==","mimeType":"audio/wav","type":"audio"},{"mimeType":"text/plain","name":"a.txt","type":"resource_link","uri":"file:///a.txt"},{"resource":{"mimeType":"text/plain","text":"hi","uri":"file:///a.txt"},"type":"resource"}],"isError":false,"structuredContent":{"rows":2}}}"#,
                    ),
                    (
                        &[R2026],
                        r#"{"jsonrpc":"2.0","id":7,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"test","version":"0.0.1"}},"content":[{"annotations":{"audience":["user"],"lastModified":"2025-01-12T15:00:58Z"},"text":"chart","type":"text"},{"data":"UE5H","mimeType":"image/png","type":"image"},{"data":"UklGRg==","mimeType":"audio/wav","type":"audio"},{"mimeType":"text/plain","name":"a.txt","type":"resource_link","uri":"file:///a.txt"},{"resource":{"mimeType":"text/plain","text":"hi","uri":"file:///a.txt"},"type":"resource"}],"isError":false,"resultType":"complete","structuredContent":{"rows":2}}}"#,
                    ),
                ],
            ),
            (
                ToolOutcome::content([]),
                vec![
                    (
                        STATEFUL,
                        r#"{"jsonrpc":"2.0","id":7,"result":{"content":[],"isError":false}}"#,
                    ),
                    (
                        &[R2026],
                        r#"{"jsonrpc":"2.0","id":7,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"test","version":"0.0.1"}},"content":[],"isError":false,"resultType":"complete"}}"#,
                    ),
                ],
            ),
            (
                ToolOutcome::declined("over quota"),
                vec![
                    (
                        STATEFUL,
                        r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"text":"over quota","type":"text"}],"isError":true}}"#,
                    ),
                    (
                        &[R2026],
                        r#"{"jsonrpc":"2.0","id":7,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"test","version":"0.0.1"}},"content":[{"text":"over quota","type":"text"}],"isError":true,"resultType":"complete"}}"#,
                    ),
                ],
            ),
            (
                ToolOutcome::declined("no").with_code(json!("quota")),
                vec![
                    (
                        &[R2024, R2025_03],
                        r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"text":"no (code: \"quota\")","type":"text"}],"isError":true}}"#,
                    ),
                    (
                        &[R2025_06, R2025_11],
                        r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"text":"no","type":"text"}],"isError":true,"structuredContent":{"code":"quota"}}}"#,
                    ),
                    (
                        &[R2026],
                        r#"{"jsonrpc":"2.0","id":7,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"test","version":"0.0.1"}},"content":[{"text":"no","type":"text"}],"isError":true,"resultType":"complete","structuredContent":{"code":"quota"}}}"#,
                    ),
                ],
            ),
            (
                ToolOutcome::declined("no").with_code(json!({"n": 1})),
                vec![
                    (
                        &[R2024, R2025_03],
                        r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"text":"no (code: {\"n\":1})","type":"text"}],"isError":true}}"#,
                    ),
                    (
                        &[R2025_06, R2025_11],
                        r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"text":"no","type":"text"}],"isError":true,"structuredContent":{"code":{"n":1}}}}"#,
                    ),
                    (
                        &[R2026],
                        r#"{"jsonrpc":"2.0","id":7,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"test","version":"0.0.1"}},"content":[{"text":"no","type":"text"}],"isError":true,"resultType":"complete","structuredContent":{"code":{"n":1}}}}"#,
                    ),
                ],
            ),
            (
                ToolOutcome::failed("db password wrong"),
                vec![
                    (
                        STATEFUL,
                        r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"text":"The tool failed with an internal error and produced no result. The application has the details.","type":"text"}],"isError":true}}"#,
                    ),
                    (
                        &[R2026],
                        r#"{"jsonrpc":"2.0","id":7,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"test","version":"0.0.1"}},"content":[{"text":"The tool failed with an internal error and produced no result. The application has the details.","type":"text"}],"isError":true,"resultType":"complete"}}"#,
                    ),
                ],
            ),
            (
                ToolOutcome::cancelled().why_cancelled(|| Some("user pressed stop".into())),
                vec![
                    (
                        STATEFUL,
                        r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"text":"The tool call was cancelled before it finished and has no result.","type":"text"}],"isError":true}}"#,
                    ),
                    (
                        &[R2026],
                        r#"{"jsonrpc":"2.0","id":7,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"test","version":"0.0.1"}},"content":[{"text":"The tool call was cancelled before it finished and has no result.","type":"text"}],"isError":true,"resultType":"complete"}}"#,
                    ),
                ],
            ),
        ]
    }

    /// The `result` member of a golden response, as text.
    fn result_text(golden: &str) -> &str {
        golden
            .strip_prefix(r#"{"jsonrpc":"2.0","id":7,"result":"#)
            .and_then(|rest| rest.strip_suffix('}'))
            .unwrap()
    }

    #[test]
    fn every_outcome_is_written_as_its_golden_text_in_every_revision() {
        let server = Server::for_tests(None);
        for (n, (outcome, goldens)) in goldens().iter().enumerate() {
            for (revision, golden) in per_revision(goldens) {
                let text = written(&server, revision, &json!(7), outcome).into_text();
                assert_eq!(
                    String::from_utf8(text).unwrap(),
                    golden,
                    "outcome {n} in {revision}"
                );
            }
        }
    }

    #[test]
    fn a_result_as_a_tree_writes_the_golden_text_of_the_result() {
        let server = Server::for_tests(None);
        for (n, (outcome, goldens)) in goldens().iter().enumerate() {
            for (revision, golden) in per_revision(goldens) {
                // Bare, then completed as every 2026-07-28 result is:
                // the same text as the writer's own completion.
                let bare = ResultJson {
                    completion: None,
                    said: Said::Outcome(outcome, revision),
                };
                let bare = serde_json::to_value(bare).unwrap();
                let tree = if revision.is_stateless() {
                    complete(&server, bare.clone())
                } else {
                    bare.clone()
                };
                let text = serde_json::to_string(&tree).unwrap();
                assert_eq!(text, result_text(golden), "outcome {n} in {revision}");
                if revision.is_stateless() {
                    assert_ne!(serde_json::to_string(&bare).unwrap(), text);
                }
            }
        }
    }

    #[test]
    fn a_tool_error_of_the_hosts_own_is_a_decline_on_the_wire() {
        let server = Server::for_tests(None);
        let declined = ToolOutcome::declined("over quota");
        for revision in Revision::ALL {
            let own = finish_result(&server, revision, &json!(7), tool_error("over quota"));
            let written = written(&server, revision, &json!(7), &declined).to_value();
            assert_eq!(own, written, "in {revision}");
            let other = finish_result(&server, revision, &json!(7), tool_error("over"));
            assert_ne!(other, written);
        }
        assert_eq!(
            serde_json::to_string(&tool_error("say \"why\"")).unwrap(),
            r#"{"content":[{"text":"say \"why\"","type":"text"}],"isError":true}"#
        );
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
