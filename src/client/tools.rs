//! What the server says about tools, read into the crate's own vocabulary:
//! the definitions of `tools/list` as [`Tool`]s, the result of
//! `tools/call` as a [`ToolResult`] — the types a host serves its own
//! tools with, so a gateway passes them on without converting them.
//!
//! Reading is lenient where MCP revisions differ (`resultType` absent means
//! complete, `isError` absent means false, unknown content types and tool
//! fields are kept as JSON) and strict where a missing field would mislead
//! (a tool without a name, a result without `content`).

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::error::ClientError;
use crate::model::tool_result::Unreadable;
use crate::model::{Tool, ToolResult};

/// The most `tools/list` pages followed.
const MAX_PAGES: usize = 10_000;

/// Every tool a server lists, asking `request` for each page (given the
/// params, with the cursor from the second page on) and following
/// `nextCursor` until the last page.
pub(crate) fn list_pages(
    mut request: impl FnMut(Map<String, Value>) -> Result<Value, ClientError>,
) -> Result<Vec<Tool>, ClientError> {
    let mut tools = Vec::new();
    let mut cursor: Option<String> = None;
    let mut seen = HashSet::new();
    for _ in 0..MAX_PAGES {
        let mut params = Map::new();
        if let Some(cursor) = cursor.take() {
            params.insert("cursor".into(), cursor.into());
        }
        let (page, next) = read_tools_page(request(params)?)?;
        tools.extend(page);
        match next {
            None => return Ok(tools),
            Some(next) if !seen.insert(next.clone()) => {
                return Err(ClientError::malformed(format!(
                    "tools/list returned the cursor {next:?} twice, which would loop forever"
                )))
            }
            Some(next) => cursor = Some(next),
        }
    }
    Err(ClientError::malformed(format!(
        "tools/list did not end within {MAX_PAGES} pages"
    )))
}

/// One page of `tools/list`: the tools and the cursor of the next page.
pub(crate) fn read_tools_page(result: Value) -> Result<(Vec<Tool>, Option<String>), ClientError> {
    let Value::Object(mut result) = result else {
        return Err(ClientError::malformed(
            "the tools/list result is not an object",
        ));
    };
    let Some(Value::Array(tools)) = result.remove("tools") else {
        return Err(ClientError::malformed(
            "the tools/list result has no tools array",
        ));
    };
    let cursor = match result.remove("nextCursor") {
        None | Some(Value::Null) => None,
        Some(Value::String(cursor)) => Some(cursor),
        Some(other) => {
            return Err(ClientError::malformed(format!(
                "nextCursor must be a string, got {other}"
            )))
        }
    };
    let tools = tools
        .into_iter()
        .map(|tool| Tool::from_listed(tool).map_err(ClientError::malformed))
        .collect::<Result<_, _>>()?;
    Ok((tools, cursor))
}

/// The result of `tools/call`, complete (a `resultType` other than
/// `"complete"` is for the caller to have handled).
pub(crate) fn read_result(result: Value) -> Result<ToolResult, ClientError> {
    if let Some(kind) = result.get("resultType").and_then(Value::as_str) {
        if kind != "complete" {
            return Err(ClientError::malformed(format!(
                "the tools/call result has resultType {kind:?}, which this client does not handle (only \"complete\")"
            )));
        }
    }
    ToolResult::from_json(result).map_err(|unreadable| {
        ClientError::malformed(match unreadable {
            Unreadable::NotAnObject(_) => "the tools/call result is not an object".to_owned(),
            Unreadable::NoContent(_) => "the tools/call result has no content array".to_owned(),
            Unreadable::IsErrorNotBool(other) => format!("isError must be a boolean, got {other}"),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Content;
    use serde_json::json;

    #[test]
    fn every_content_type_of_the_schema_is_read_and_unknown_ones_are_kept() {
        let result = read_result(json!({
            "content": [
                {"type": "text", "text": "a"},
                {"type": "image", "data": "AAA=", "mimeType": "image/png"},
                {"type": "audio", "data": "BBB=", "mimeType": "audio/wav"},
                {"type": "resource_link", "uri": "file:///x", "name": "x", "mimeType": "text/plain"},
                {"type": "resource", "resource": {"uri": "file:///y", "mimeType": "text/plain", "text": "why"}},
                {"type": "resource", "resource": {"uri": "file:///z", "mimeType": "application/octet-stream", "blob": "AQI="}},
                {"type": "hologram", "frames": 3},
                {"type": "text"},
            ],
            "structuredContent": {"n": 1},
            "isError": true,
            "resultType": "complete",
            "_meta": {"k": "v"},
        }))
        .unwrap();
        assert_eq!(
            result.content[..6],
            [
                Content::text("a"),
                Content::image_base64("AAA=", "image/png"),
                Content::audio_base64("BBB=", "audio/wav"),
                Content::resource_link("file:///x", "x").with_mime_type("text/plain"),
                Content::resource_text("file:///y", "text/plain", "why"),
                Content::resource_blob("file:///z", "application/octet-stream", &[1, 2]),
            ]
        );
        assert!(result.content[..6].iter().all(|c| c.as_unknown().is_none()));
        assert_eq!(
            result.content[6].as_unknown(),
            Some(&json!({"type": "hologram", "frames": 3}))
        );
        assert_eq!(
            result.content[7].as_unknown(),
            Some(&json!({"type": "text"}))
        );
        assert_eq!(result.structured_content, Some(json!({"n": 1})));
        assert!(result.is_error);
        assert_eq!(result.meta.unwrap()["k"], "v");
        assert_eq!(
            read_result(
                json!({"content": [{"type": "text", "text": "x"}, {"type": "text", "text": "y"}]})
            )
            .unwrap()
            .text(),
            "x\ny"
        );
    }

    #[test]
    fn a_result_without_content_or_with_another_result_type_is_malformed() {
        for bad in [
            json!({"isError": false}),
            json!([]),
            json!({"content": [], "isError": "no"}),
            json!({"content": [], "resultType": "incomplete"}),
        ] {
            assert!(
                matches!(read_result(bad.clone()), Err(ClientError::Malformed { .. })),
                "{bad}"
            );
        }
        let minimal = read_result(json!({"content": []})).unwrap();
        assert!(!minimal.is_error && minimal.structured_content.is_none());
    }

    #[test]
    fn a_tools_page_yields_tools_and_its_cursor() {
        let (tools, cursor) = read_tools_page(json!({
            "tools": [
                {"name": "a", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true}},
                {"name": "b", "inputSchema": {"type": "object"}, "outputSchema": {"type": "object"}},
            ],
            "nextCursor": "p2",
        }))
        .unwrap();
        assert_eq!(tools[0].name(), "a");
        assert_eq!(
            serde_json::to_value(tools[0].hints()).unwrap(),
            json!({"readOnlyHint": true})
        );
        assert_eq!(tools[0].input_schema_json(), &json!({"type": "object"}));
        assert_eq!(tools[0].output_schema_json(), None);
        assert_eq!(
            tools[1].output_schema_json(),
            Some(&json!({"type": "object"}))
        );
        assert_eq!(cursor.as_deref(), Some("p2"));
        for bad in [
            json!({}),
            json!({"tools": [{"inputSchema": {}}]}),
            json!({"tools": [{"name": "a"}]}),
            json!({"tools": [], "nextCursor": 3}),
        ] {
            assert!(read_tools_page(bad.clone()).is_err(), "{bad}");
        }
    }
}
