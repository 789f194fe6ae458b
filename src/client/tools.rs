//! What the server says about tools, read into plain Rust values: the tool
//! definitions of `tools/list` and the result of `tools/call`.
//!
//! Reading is lenient where MCP revisions differ (`resultType` absent means
//! complete, `isError` absent means false, unknown content types are kept as
//! JSON) and strict where a missing field would mislead (a tool without a
//! name, a result without `content`).

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::error::ClientError;

/// One tool, as the server listed it.
///
/// ```
/// use toolhost::{HostConfig, StaticSurface, Tool, ToolHost, ToolOutcome};
///
/// let host = ToolHost::bind(HostConfig::default())?;
/// let session = host.open_session(StaticSurface::new().tool(
///     Tool::new("ping", "Answers pong.").title("Ping"),
///     |_, _| ToolOutcome::text("pong"),
/// )?);
/// let tools = session.client()?.list_tools()?;
/// assert_eq!(tools[0].name, "ping");
/// assert_eq!(tools[0].title.as_deref(), Some("Ping"));
/// assert_eq!(tools[0].input_schema()["type"], "object");
/// assert!(tools[0].output_schema().is_none());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ToolInfo {
    /// The name to call it by.
    pub name: String,
    /// A display name, when the server gave one.
    pub title: Option<String>,
    /// What the tool does, for the model.
    pub description: Option<String>,
    /// The whole definition as sent (the schemas, annotations, icons,
    /// `_meta`, …).
    pub definition: Value,
}

/// What [`ToolInfo::input_schema`] reads when `definition` was changed to
/// have none.
static NO_SCHEMA: Value = Value::Null;

impl ToolInfo {
    pub(crate) fn from_json(definition: Value) -> Result<ToolInfo, ClientError> {
        let text = |key: &str| {
            definition
                .get(key)
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        let name = text("name").ok_or_else(|| {
            ClientError::malformed(format!("a tool in tools/list has no name: {definition}"))
        })?;
        if !definition.get("inputSchema").is_some_and(Value::is_object) {
            return Err(ClientError::malformed(format!(
                "tool {name:?} has no inputSchema object"
            )));
        }
        Ok(ToolInfo {
            title: text("title"),
            description: text("description"),
            name,
            definition,
        })
    }

    /// The JSON Schema of its arguments: an object (a tool listed without
    /// one is refused), read from [`ToolInfo::definition`]. The schemas are
    /// kept there only, not copied beside it: copying them was a third of
    /// what the client spent on a long tool list.
    pub fn input_schema(&self) -> &Value {
        self.definition.get("inputSchema").unwrap_or(&NO_SCHEMA)
    }

    /// The JSON Schema of its structured result, when declared (an object),
    /// read from [`ToolInfo::definition`].
    pub fn output_schema(&self) -> Option<&Value> {
        self.definition
            .get("outputSchema")
            .filter(|schema| schema.is_object())
    }
}

/// The most `tools/list` pages followed.
const MAX_PAGES: usize = 10_000;

/// Every tool a server lists, asking `request` for each page (given the
/// params, with the cursor from the second page on) and following
/// `nextCursor` until the last page.
pub(crate) fn list_pages(
    mut request: impl FnMut(Map<String, Value>) -> Result<Value, ClientError>,
) -> Result<Vec<ToolInfo>, ClientError> {
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
pub(crate) fn read_tools_page(
    result: Value,
) -> Result<(Vec<ToolInfo>, Option<String>), ClientError> {
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
        .map(ToolInfo::from_json)
        .collect::<Result<_, _>>()?;
    Ok((tools, cursor))
}

/// One content block of a tool result.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ContentBlock {
    /// Text for the model.
    Text {
        /// The text.
        text: String,
    },
    /// An image, base64-encoded.
    Image {
        /// Base64 of the bytes.
        data: String,
        /// For example `image/png`.
        mime_type: String,
    },
    /// Audio, base64-encoded.
    Audio {
        /// Base64 of the bytes.
        data: String,
        /// For example `audio/wav`.
        mime_type: String,
    },
    /// A link to a resource the client may fetch.
    ResourceLink {
        /// The resource's URI.
        uri: String,
        /// Its name.
        name: String,
        /// Its MIME type, when given.
        mime_type: Option<String>,
    },
    /// A resource embedded in the result.
    Resource {
        /// The resource's URI.
        uri: String,
        /// Its MIME type, when given.
        mime_type: Option<String>,
        /// Its contents as text, for a text resource.
        text: Option<String>,
        /// Base64 of its bytes, for a binary resource.
        blob: Option<String>,
    },
    /// A block of a type this client does not know, as sent.
    Other(Value),
}

impl ContentBlock {
    fn from_json(block: Value) -> ContentBlock {
        let text = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).map(str::to_owned);
        let kind = block.get("type").and_then(Value::as_str).unwrap_or("");
        let read = match kind {
            "text" => text(&block, "text").map(|text| ContentBlock::Text { text }),
            "image" | "audio" => {
                text(&block, "data")
                    .zip(text(&block, "mimeType"))
                    .map(|(data, mime_type)| {
                        if kind == "image" {
                            ContentBlock::Image { data, mime_type }
                        } else {
                            ContentBlock::Audio { data, mime_type }
                        }
                    })
            }
            "resource_link" => text(&block, "uri")
                .zip(text(&block, "name"))
                .map(|(uri, name)| ContentBlock::ResourceLink {
                    uri,
                    name,
                    mime_type: text(&block, "mimeType"),
                }),
            "resource" => block.get("resource").and_then(|resource| {
                Some(ContentBlock::Resource {
                    uri: text(resource, "uri")?,
                    mime_type: text(resource, "mimeType"),
                    text: text(resource, "text"),
                    blob: text(resource, "blob"),
                })
            }),
            _ => None,
        };
        read.unwrap_or(ContentBlock::Other(block))
    }

    /// The text of a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            ContentBlock::Text { text } => Some(text),
            _ => None,
        }
    }
}

/// The result of `tools/call`.
///
/// `is_error` is the tool's own verdict — the call reached the tool, which
/// declined or failed, and `content` says why for the model. A call the
/// server could not even start is a [`ClientError`] instead.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ToolResult {
    /// The content blocks, in order.
    pub content: Vec<ContentBlock>,
    /// The structured result, when the tool returned one (2025-06-18 on).
    pub structured_content: Option<Value>,
    /// Whether the tool reported an error.
    pub is_error: bool,
    /// The result's `_meta`, when present.
    pub meta: Option<Map<String, Value>>,
    /// The whole result as the server sent it, every field and content
    /// block included (what [`ToolOutcome::relayed`](crate::ToolOutcome::relayed)
    /// passes on unchanged).
    pub raw: Value,
}

impl ToolResult {
    pub(crate) fn from_json(result: Value) -> Result<ToolResult, ClientError> {
        let raw = result.clone();
        let Value::Object(mut result) = result else {
            return Err(ClientError::malformed(
                "the tools/call result is not an object",
            ));
        };
        if let Some(kind) = result.get("resultType").and_then(Value::as_str) {
            if kind != "complete" {
                return Err(ClientError::malformed(format!(
                    "the tools/call result has resultType {kind:?}, which this client does not handle (only \"complete\")"
                )));
            }
        }
        let Some(Value::Array(content)) = result.remove("content") else {
            return Err(ClientError::malformed(
                "the tools/call result has no content array",
            ));
        };
        let is_error = match result.remove("isError") {
            None | Some(Value::Null) => false,
            Some(Value::Bool(flag)) => flag,
            Some(other) => {
                return Err(ClientError::malformed(format!(
                    "isError must be a boolean, got {other}"
                )))
            }
        };
        Ok(ToolResult {
            content: content.into_iter().map(ContentBlock::from_json).collect(),
            structured_content: result.remove("structuredContent"),
            is_error,
            meta: match result.remove("_meta") {
                Some(Value::Object(meta)) => Some(meta),
                _ => None,
            },
            raw,
        })
    }

    /// The text of every text block, joined with newlines.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolhost::{HostConfig, StaticSurface, Tool, ToolHost, ToolOutcome};
    ///
    /// let host = ToolHost::bind(HostConfig::default())?;
    /// let session = host.open_session(StaticSurface::new().tool(
    ///     Tool::new("greet", "Greets."),
    ///     |_, _| ToolOutcome::text("hello"),
    /// )?);
    /// let result = session.client()?.call_tool("greet", json!({}))?;
    /// assert_eq!(result.text(), "hello");
    /// assert!(!result.is_error);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn text(&self) -> String {
        let texts: Vec<&str> = self
            .content
            .iter()
            .filter_map(ContentBlock::as_text)
            .collect();
        texts.join("\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_content_type_of_the_schema_is_read_and_unknown_ones_are_kept() {
        let result = ToolResult::from_json(json!({
            "content": [
                {"type": "text", "text": "a"},
                {"type": "image", "data": "AAA=", "mimeType": "image/png"},
                {"type": "audio", "data": "BBB=", "mimeType": "audio/wav"},
                {"type": "resource_link", "uri": "file:///x", "name": "x", "mimeType": "text/plain"},
                {"type": "resource", "resource": {"uri": "file:///y", "text": "why"}},
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
                ContentBlock::Text { text: "a".into() },
                ContentBlock::Image {
                    data: "AAA=".into(),
                    mime_type: "image/png".into()
                },
                ContentBlock::Audio {
                    data: "BBB=".into(),
                    mime_type: "audio/wav".into()
                },
                ContentBlock::ResourceLink {
                    uri: "file:///x".into(),
                    name: "x".into(),
                    mime_type: Some("text/plain".into())
                },
                ContentBlock::Resource {
                    uri: "file:///y".into(),
                    mime_type: None,
                    text: Some("why".into()),
                    blob: None
                },
                ContentBlock::Resource {
                    uri: "file:///z".into(),
                    mime_type: Some("application/octet-stream".into()),
                    text: None,
                    blob: Some("AQI=".into())
                },
            ]
        );
        assert_eq!(
            result.content[6],
            ContentBlock::Other(json!({"type": "hologram", "frames": 3}))
        );
        assert_eq!(
            result.content[7],
            ContentBlock::Other(json!({"type": "text"}))
        );
        assert_eq!(result.structured_content, Some(json!({"n": 1})));
        assert!(result.is_error);
        assert_eq!(result.meta.unwrap()["k"], "v");
        assert_eq!(
            ToolResult::from_json(
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
                matches!(
                    ToolResult::from_json(bad.clone()),
                    Err(ClientError::Malformed { .. })
                ),
                "{bad}"
            );
        }
        let minimal = ToolResult::from_json(json!({"content": []})).unwrap();
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
        assert_eq!(tools[0].name, "a");
        assert_eq!(tools[0].definition["annotations"]["readOnlyHint"], true);
        assert_eq!(tools[0].input_schema(), &json!({"type": "object"}));
        assert_eq!(tools[0].output_schema(), None);
        assert_eq!(tools[1].output_schema(), Some(&json!({"type": "object"})));
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
